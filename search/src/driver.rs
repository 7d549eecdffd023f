//! The search of a player (the engine `koma-usi`, the arena's koma player, the trainer's
//! evaluation games): worker threads share one [`PlayerTree`] behind a mutex, each
//! collecting a batch of leaves (kept apart by virtual loss) and evaluating it outside
//! the lock through its own [`LeafEvaluator`]; the calling thread watches the stopping
//! rules ([`crate::stop`]), the user's `stop`/`ponderhit` ([`Control`]) and reports
//! progress ([`Info`]).
//!
//! The tree is kept between searches: move its root with [`PlayerTree::set_root`] before
//! [`run`] (tree reuse), or reset it for a new game. With one thread the search is
//! deterministic: under a node limit it ends once the last batch is applied.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nn::encoding::Encoder;

use rules::Move;

use crate::leaf_eval::LeafEvaluator;
use crate::player_tree::{PlayerTree, Selected};
use crate::report::{snapshot, tree_outcome, BatchStats, Info, Score, SearchError, SearchOutcome};
use crate::root_mate::{self, RootMate};
use crate::stop::{self, Control, Limits, Progress, StopReason};

/// How a search runs (the number of threads is the number of leaf evaluators).
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Leaves per evaluation of one thread.
    pub batch_size: usize,
    pub multipv: usize,
    /// Milliseconds between progress reports; 0 = only the final one.
    pub info_interval_ms: u64,
    /// Always evaluate full batches (on a GPU a fixed shape avoids re-tuning kernels).
    pub pad_batches: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { batch_size: 16, multipv: 1, info_interval_ms: 1000, pad_batches: false }
    }
}

/// Worker threads that may still be finishing their last batch after [`run`] returned
/// (the result is reported without waiting for them). Join them before the tree is used
/// again; joining gives their leaf evaluators back (those of threads that panicked are
/// lost).
pub struct Workers<L>(Vec<JoinHandle<L>>);

impl<L> Workers<L> {
    pub fn join(self) -> Vec<L> {
        self.0.into_iter().filter_map(|h| h.join().ok()).collect()
    }
}

/// What the workers and the controller of one search share.
#[derive(Default)]
struct Shared {
    halt: AtomicBool,
    /// Leaves selected and not yet applied (changed under the tree's lock).
    in_flight: AtomicU64,
    error: Mutex<Option<SearchError>>,
    batches: Mutex<BatchStats>,
}

impl Shared {
    fn fail(&self, e: SearchError) {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
        self.halt.store(true, Ordering::SeqCst);
    }

    fn failed(&self) -> bool {
        self.error.lock().is_ok_and(|e| e.is_some())
    }
}

fn lock(tree: &Mutex<PlayerTree>) -> MutexGuard<'_, PlayerTree> {
    tree.lock().unwrap_or_else(|e| e.into_inner())
}

/// The tree if nobody holds it.
fn try_lock(tree: &Mutex<PlayerTree>) -> Option<MutexGuard<'_, PlayerTree>> {
    match tree.try_lock() {
        Ok(t) => Some(t),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// Runs one search of the tree's current root (set it first with
/// [`PlayerTree::set_root`]) with one thread per evaluator. `report` receives progress
/// every `info_interval_ms`; the final state is returned as soon as the search stops,
/// while the workers finish their batches (join them).
pub fn run<L>(
    tree: &Arc<Mutex<PlayerTree>>,
    evaluators: Vec<L>,
    encoder: &Arc<Encoder>,
    limits: &Limits,
    settings: &Settings,
    control: &Control,
    report: &(dyn Fn(&Info) + Sync),
) -> (SearchOutcome, Workers<L>)
where
    L: LeafEvaluator + Send + 'static,
    L::Error: Display,
{
    let start = limits.origin.unwrap_or_else(Instant::now);
    lock(tree).begin_search();
    let shared = Arc::new(Shared::default());
    // Whatever happens below (even a panic), the workers get the signal to stop.
    struct HaltOnDrop(Arc<Shared>);
    impl Drop for HaltOnDrop {
        fn drop(&mut self) {
            self.0.halt.store(true, Ordering::SeqCst);
        }
    }
    let _halt_guard = HaltOnDrop(shared.clone());
    // Under a clock the search leaves a share of its time to the root's checks.
    let search_limits = &leave_time_for_checks(limits, lock(tree).params());
    // Under a clock (or until `stop`) the tsume solver looks for a mate at the root beside
    // the search, for a share of the time; a proven mate ends the search.
    let mut root_mate = root_mate::deadline(search_limits, start).and_then(|deadline| {
        let t = lock(tree);
        let undecided = t.root_proof() == crate::Proof::Unknown;
        undecided.then(|| RootMate::start(t.root_position(), t.params(), deadline)).flatten()
    });
    // A mate it proved before the root had its moves; the mate proven in the tree.
    let (mut pending, mut mate_line): (Option<Vec<Move>>, Option<Vec<Move>>) = (None, None);
    let mut last_progress = progress(&lock(tree), search_limits, &shared);
    let handles = spawn_workers(tree, evaluators, encoder, search_limits, settings, &shared);
    let mut last_info = Instant::now();
    let stopped_by = loop {
        std::thread::sleep(Duration::from_millis(1));
        if control.is_stopped() {
            break StopReason::Stopped;
        }
        if shared.failed() {
            break StopReason::Error;
        }
        if handles.iter().all(|h| h.is_finished()) {
            // Workers end only when halted: every one of them panicked (or none started).
            shared.fail(SearchError::Panic("every search thread ended".into()));
            break StopReason::Error;
        }
        if let Some(m) = &root_mate {
            if pending.is_none() && mate_line.is_none() {
                pending = m.take_mate();
            }
        }
        if pending.is_some() {
            if let Some(mut t) = try_lock(tree) {
                settle_mate(&mut t, &mut pending, &mut mate_line);
            }
        }
        let now = Instant::now();
        // With a fast device the workers hold the tree's lock nearly all the time, and a
        // std mutex does not queue its waiters: the clock must not wait for the lock
        // (three threads on a GPU once searched 15 s of a 3 s budget). When the tree is
        // busy the last progress stands; the time limits read the clock.
        if let Some(t) = try_lock(tree) {
            last_progress = progress(&t, search_limits, &shared);
        }
        last_progress.in_flight = shared.in_flight.load(Ordering::SeqCst);
        if let Some(reason) = stop::check(search_limits, &last_progress, control, start, now) {
            // A search decided by its visits still waits for the mate search's share.
            let solving = root_mate.as_ref().is_some_and(|m| !m.is_done()) || pending.is_some();
            if !(reason == StopReason::Decided && solving) {
                break reason;
            }
        }
        if settings.info_interval_ms > 0
            && now.duration_since(last_info).as_millis() as u64 >= settings.info_interval_ms
        {
            if let Some(t) = try_lock(tree) {
                last_info = now;
                let mut info = snapshot(&t, now.saturating_duration_since(start), settings.multipv);
                show_mate_line(&mut info, mate_line.as_deref());
                report(&info);
            }
        }
    };
    shared.halt.store(true, Ordering::SeqCst);
    // A mate proven at the last moment still counts.
    if let Some(line) = root_mate.take().and_then(RootMate::finish) {
        pending = pending.or(Some(line));
    }
    let outcome = {
        let mut t = lock(tree);
        if mate_line.is_none() && pending.is_some() {
            settle_mate(&mut t, &mut pending, &mut mate_line);
        }
        if stopped_by != StopReason::Error {
            let deadline = checks_deadline(limits, control, start);
            t.refute_mated_moves(deadline);
            t.check_root_material(deadline);
        }
        outcome(&t, start, settings, &shared, stopped_by, mate_line.as_deref())
    };
    (outcome, Workers(handles))
}

/// Proves the root won by the root solve's mate `pending` once the root has its moves
/// (then the line moves to `proven`, for the PV); a root decided otherwise drops it.
fn settle_mate(t: &mut PlayerTree, pending: &mut Option<Vec<Move>>, proven: &mut Option<Vec<Move>>) {
    let Some(line) = pending.take() else { return };
    if t.prove_root_mate(&line) {
        *proven = Some(line);
    } else if t.root_proof() == crate::Proof::Unknown && t.root_children().is_empty() {
        // Not expanded yet: the first simulation expands it.
        *pending = Some(line);
    }
}

/// The PV of the line that plays the proven mate `line` is the solver's mating line
/// (the tree knows its first move, and past it the visits of the search, no mate).
fn show_mate_line(info: &mut Info, line: Option<&[Move]>) {
    let Some(line) = line else { return };
    for l in &mut info.lines {
        if l.pv.first() == line.first() && l.score == Score::Mate(line.len() as i32) {
            l.pv = line.to_vec();
        }
    }
}

/// Share of a clock's budget kept back from the search for the root's checks (the tsume
/// guard and the material check, which end at the budget's hard limit).
const CHECKS_SHARE: f64 = 0.15;
/// The most of a `go movetime` budget ([`Limits::exact`]) kept back for the root's checks.
const EXACT_CHECKS_MS: f64 = 20.0;

/// `limits` with soft and hard limits shortened by [`CHECKS_SHARE`] when the root's
/// checks are on.
fn leave_time_for_checks(limits: &Limits, params: &crate::SearchConfig) -> Limits {
    let checks = params.root_mate_nodes > 0 || params.root_tactics_plies > 0;
    let mut shortened = *limits;
    if let (true, Some(b)) = (checks, limits.budget) {
        // `go movetime` searches its time: the checks get at most EXACT_CHECKS_MS of it.
        let reserve = |ms: u64| {
            let share = (ms as f64) * CHECKS_SHARE;
            if limits.exact {
                share.min(EXACT_CHECKS_MS)
            } else {
                share
            }
        };
        let keep = |ms: u64| ((ms as f64) - reserve(ms)).max(1.0) as u64;
        shortened.budget = Some(crate::time::Budget { soft: keep(b.soft), hard: keep(b.hard) });
    }
    shortened
}

/// When the root's checks must be done: the clock's hard limit (from the ponderhit when
/// pondering), `None` without a clock.
fn checks_deadline(limits: &Limits, control: &Control, start: Instant) -> Option<Instant> {
    let budget = limits.budget?;
    let clock_start = if limits.ponder { control.ponderhit_at().unwrap_or_else(Instant::now) } else { start };
    Some(clock_start + Duration::from_millis(budget.hard))
}

fn spawn_workers<L>(
    tree: &Arc<Mutex<PlayerTree>>,
    evaluators: Vec<L>,
    encoder: &Arc<Encoder>,
    limits: &Limits,
    settings: &Settings,
    shared: &Arc<Shared>,
) -> Vec<JoinHandle<L>>
where
    L: LeafEvaluator + Send + 'static,
    L::Error: Display,
{
    let batch = settings.batch_size.max(1);
    let pad = settings.pad_batches;
    let mut handles = Vec::with_capacity(evaluators.len());
    for (i, mut ev) in evaluators.into_iter().enumerate() {
        let (tree, encoder, limits, sh) = (tree.clone(), encoder.clone(), *limits, shared.clone());
        let h = std::thread::Builder::new().name(format!("search-worker-{i}")).spawn(move || {
            worker(&tree, &mut ev, &encoder, &limits, batch, pad, &sh);
            ev
        });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                if handles.is_empty() {
                    shared.fail(SearchError::Thread(e.to_string()));
                }
                break;
            }
        }
    }
    handles
}

/// What the stopping rules look at (the caller holds the lock).
fn progress(t: &PlayerTree, limits: &Limits, shared: &Shared) -> Progress {
    let mut visits: Vec<u32> = t.root_children().iter().map(|c| c.visits).collect();
    let single = visits.len() == 1;
    visits.sort_unstable_by(|a, b| b.cmp(a));
    let lead = match visits.as_slice() {
        [a, b, ..] => (a - b) as u64,
        [a] => *a as u64,
        [] => 0,
    };
    Progress {
        started: t.started(),
        exhausted: t.is_done() || limits.nodes_reached(t.started()),
        in_flight: shared.in_flight.load(Ordering::SeqCst),
        lead,
        single,
        depth: t.mean_depth(),
    }
}

/// The result (the caller holds the lock).
fn outcome(
    t: &PlayerTree,
    start: Instant,
    settings: &Settings,
    shared: &Shared,
    stopped_by: StopReason,
    mate_line: Option<&[Move]>,
) -> SearchOutcome {
    let mut info = snapshot(t, start.elapsed(), settings.multipv);
    show_mate_line(&mut info, mate_line);
    SearchOutcome {
        batches: *shared.batches.lock().unwrap_or_else(|e| e.into_inner()),
        error: shared.error.lock().unwrap_or_else(|e| e.into_inner()).take(),
        ..tree_outcome(t, info, stopped_by)
    }
}

/// One search thread: select a batch under the lock, evaluate it outside, apply it.
fn worker<L>(
    tree: &Mutex<PlayerTree>,
    evaluator: &mut L,
    encoder: &Encoder,
    limits: &Limits,
    batch: usize,
    pad: bool,
    shared: &Shared,
) where
    L: LeafEvaluator,
    L::Error: Display,
{
    let len = encoder.input_len();
    let mut inputs = vec![0.0f32; len * batch];
    let mut leaves = Vec::with_capacity(batch);
    while !shared.halt.load(Ordering::SeqCst) {
        let (mut exact, mut collided) = (0usize, false);
        {
            let mut t = lock(tree);
            while leaves.len() < batch
                && !limits.nodes_reached(t.started())
                && !limits.depth_reached(t.mean_depth(), t.started())
            {
                let i = leaves.len();
                match t.select_leaf(encoder, &mut inputs[i * len..(i + 1) * len]) {
                    Selected::NeedsEval(leaf) => leaves.push(leaf),
                    Selected::Exact { .. } => {
                        exact += 1;
                        if exact >= 4 * batch {
                            break;
                        }
                    }
                    Selected::Collision => {
                        collided = true;
                        break;
                    }
                    Selected::Done => break,
                }
            }
            shared.in_flight.fetch_add(leaves.len() as u64, Ordering::SeqCst);
        }
        if collided {
            let mut stats = shared.batches.lock().unwrap_or_else(|e| e.into_inner());
            stats.add(BatchStats { collisions: 1, ..BatchStats::default() });
        }
        if leaves.is_empty() {
            if exact > 0 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(300));
            }
            continue;
        }
        let n = leaves.len();
        let rows = if pad { batch } else { n };
        let result = evaluator.evaluate(&inputs[..rows * len], rows);
        let mut t = lock(tree);
        match result {
            Ok(out) => {
                for (i, leaf) in leaves.drain(..).enumerate() {
                    t.apply(leaf, out.logits(i), out.wdl(i));
                }
            }
            Err(e) => {
                // Keep the tree consistent, then stop the search.
                for leaf in leaves.drain(..) {
                    t.apply(leaf, &[] as &[f32], [0.0, 1.0, 0.0]);
                }
                shared.fail(SearchError::Evaluation(e.to_string()));
            }
        }
        shared.in_flight.fetch_sub(n as u64, Ordering::SeqCst);
        let mut stats = shared.batches.lock().unwrap_or_else(|e| e.into_inner());
        stats.add(BatchStats { batches: 1, leaves: n as u64, largest_batch: n, collisions: 0 });
    }
}
