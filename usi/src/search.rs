//! One search of the engine: worker threads that collect leaves of the shared [`Tree`]
//! with virtual loss and evaluate them in batches, and a controller (the calling thread)
//! that watches the clock, the node limit and the user's `stop`/`ponderhit`, and reports
//! progress.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use model::encoding::Encoder;
use model::{Evaluation, Evaluator};
use rules::Move;

use crate::tree::{Proof, Selected, Tree};
use ::search::time::Budget;

/// Signals from the protocol thread to a running search.
#[derive(Debug, Default)]
pub struct Control {
    stop: AtomicBool,
    ponderhit: Mutex<Option<Instant>>,
}

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    /// Stop as soon as possible (`stop`, `quit`, XBoard `?`).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The predicted move was played: the clock starts now.
    pub fn ponderhit(&self) {
        let mut p = self.ponderhit.lock().unwrap_or_else(|e| e.into_inner());
        if p.is_none() {
            *p = Some(Instant::now());
        }
    }

    fn ponderhit_at(&self) -> Option<Instant> {
        *self.ponderhit.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// When a search ends.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Simulations of this search (`go nodes`, `NodesLimit`).
    pub nodes: Option<u64>,
    /// Thinking time from the start of the clock.
    pub budget: Option<Budget>,
    /// `go infinite`: never stop on its own (a proven or finished search waits for `stop`).
    pub infinite: bool,
    /// `go ponder`: like `infinite` until `ponderhit`, then `budget` from the ponderhit.
    pub ponder: bool,
    /// When the clock started (the `go` command); default: when the search starts.
    pub origin: Option<Instant>,
}

/// How a search runs.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub threads: usize,
    pub batch_size: usize,
    pub multipv: usize,
    /// Milliseconds between progress reports; 0 = only the final one.
    pub info_interval_ms: u64,
    /// Always evaluate full batches (on a GPU a fixed shape avoids re-tuning kernels).
    pub pad_batches: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { threads: 1, batch_size: 16, multipv: 1, info_interval_ms: 1000, pad_batches: false }
    }
}

/// A score for the protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns (see [`q_to_cp`]).
    Cp(i32),
    /// Mate in this many plies; negative when the engine is mated.
    Mate(i32),
}

/// Maps an expected score q = win - loss in [-1, 1] to centipawns with the logistic
/// curve of computer shogi (Ponanza's constant 600): with p = (1 + q) / 2 the winning
/// probability counting draws as half, cp = 600 ln(p / (1 - p)), within +-30000.
/// So q = 0 is 0 cp, q = 0.5 (p = 0.75) about 659 cp, q = -0.9 about -1766 cp.
pub fn q_to_cp(q: f32) -> i32 {
    let p = ((1.0 + q as f64) / 2.0).clamp(1e-12, 1.0 - 1e-12);
    (600.0 * (p / (1.0 - p)).ln()).round().clamp(-30000.0, 30000.0) as i32
}

/// One principal variation.
#[derive(Clone, Debug)]
pub struct PvLine {
    pub score: Score,
    pub pv: Vec<Move>,
    pub visits: u32,
}

/// Progress of a search.
#[derive(Clone, Debug, Default)]
pub struct Info {
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
    pub hashfull: u32,
    /// Best first; at most `multipv` lines.
    pub lines: Vec<PvLine>,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct SearchOutcome {
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    /// Expected score (win - loss) of the best move for the side to move; +-1 when proven.
    pub value: f32,
    pub proof: Proof,
    pub info: Info,
    /// An evaluation failure (the search stopped early).
    pub error: Option<String>,
    /// The tree reached its memory cap.
    pub tree_full: bool,
}

fn score_of(proof: Proof, q: f32) -> Score {
    match proof {
        Proof::Win(n) => Score::Mate(n as i32),
        Proof::Loss(n) => Score::Mate(-(n as i32)),
        Proof::Unknown => Score::Cp(q_to_cp(q)),
    }
}

/// Progress as seen now (the caller holds the lock).
pub fn snapshot(tree: &Tree, elapsed: Duration, multipv: usize) -> Info {
    let ms = elapsed.as_millis() as u64;
    let nodes = tree.started();
    let nps = (nodes * 1000).checked_div(ms).unwrap_or(0);
    let mut children = tree.root_children();
    let best = tree.best_move();
    let root_q = {
        let [w, _, l] = tree.root_wdl();
        w - l
    };
    // Best move first, then by visits.
    children.sort_by(|a, b| {
        let ka = (Some(a.mv) == best, a.visits);
        let kb = (Some(b.mv) == best, b.visits);
        kb.cmp(&ka)
    });
    let mut lines = Vec::new();
    for c in children.iter().take(multipv.max(1)) {
        if !lines.is_empty() && c.visits == 0 && c.proof == Proof::Unknown {
            break;
        }
        let score = score_of(c.proof, c.q.unwrap_or(root_q));
        lines.push(PvLine { score, pv: tree.pv_from(c.mv), visits: c.visits });
    }
    Info {
        depth: tree.mean_depth(),
        seldepth: tree.max_depth().max(1),
        nodes,
        nps,
        time_ms: ms,
        hashfull: tree.hashfull(),
        lines,
    }
}

/// Worker threads that may still be finishing their last batch after [`run`] returned
/// (the result is reported without waiting for them). Join them before the tree is used
/// again.
pub struct Workers(Vec<std::thread::JoinHandle<()>>);

impl Workers {
    pub fn join(self) {
        for h in self.0 {
            let _ = h.join();
        }
    }
}

struct Shared {
    halt: AtomicBool,
    /// Moving average of a batch's evaluation time, microseconds.
    batch_us: AtomicU64,
    error: Mutex<Option<String>>,
}

/// Runs one search of the tree's current root (set it first with [`Tree::set_root`]).
/// `report` receives progress every `info_interval_ms`; the final state is returned as
/// soon as the search stops, while the workers finish their batches (join them).
pub fn run(
    tree: &Arc<Mutex<Tree>>,
    evaluator: &Arc<dyn Evaluator>,
    encoder: &Encoder,
    limits: &Limits,
    settings: &Settings,
    control: &Control,
    report: &(dyn Fn(&Info) + Sync),
) -> (SearchOutcome, Workers) {
    let start = limits.origin.unwrap_or_else(Instant::now);
    let lock = || tree.lock().unwrap_or_else(|e| e.into_inner());
    lock().begin_search();
    let shared =
        Arc::new(Shared { halt: AtomicBool::new(false), batch_us: AtomicU64::new(0), error: Mutex::new(None) });
    // Whatever happens below (even a panic), the workers get the signal to stop.
    struct HaltOnDrop(Arc<Shared>);
    impl Drop for HaltOnDrop {
        fn drop(&mut self) {
            self.0.halt.store(true, Ordering::SeqCst);
        }
    }
    let _halt_guard = HaltOnDrop(shared.clone());
    let threads = settings.threads.max(1);
    let batch = settings.batch_size.max(1);
    let mut handles = Vec::with_capacity(threads);
    for i in 0..threads {
        let (tree, evaluator, encoder, limits, sh) =
            (tree.clone(), evaluator.clone(), encoder.clone(), *limits, shared.clone());
        let pad = settings.pad_batches;
        let h = std::thread::Builder::new()
            .name(format!("search-worker-{i}"))
            .spawn(move || worker(&tree, &*evaluator, &encoder, &limits, batch, pad, &sh));
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                if handles.is_empty() {
                    *shared.error.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(format!("cannot start a search thread: {e}"));
                }
                break;
            }
        }
    }
    let mut last_info = Instant::now();
    let stop_reason: &str;
    loop {
        std::thread::sleep(Duration::from_millis(1));
        if control.is_stopped() {
            stop_reason = "stop";
            break;
        }
        if shared.error.lock().is_ok_and(|e| e.is_some()) {
            stop_reason = "error";
            break;
        }
        let now = Instant::now();
        let ponderhit = control.ponderhit_at();
        let waiting = limits.infinite || (limits.ponder && ponderhit.is_none());
        let clock_start = if limits.ponder { ponderhit } else { Some(start) };
        let (done, started, lead, single) = {
            let t = lock();
            let done = t.is_done() || limits.nodes.is_some_and(|n| t.started() >= n);
            let mut visits: Vec<u32> = t.root_children().iter().map(|c| c.visits).collect();
            let single = visits.len() == 1;
            visits.sort_unstable_by(|a, b| b.cmp(a));
            let lead = match visits.as_slice() {
                [a, b, ..] => (a - b) as u64,
                [a] => *a as u64,
                [] => 0,
            };
            (done, t.started(), lead, single)
        };
        if !waiting {
            if done {
                stop_reason = "done";
                break;
            }
            if let (Some(b), Some(cs)) = (limits.budget, clock_start) {
                let el = now.saturating_duration_since(cs).as_millis() as u64;
                if el + 2 >= b.hard || el >= b.soft {
                    stop_reason = "time";
                    break;
                }
                if single && started > 0 {
                    stop_reason = "single move";
                    break;
                }
                // The best move cannot change before the soft limit.
                let run_ms = now.saturating_duration_since(start).as_millis() as u64;
                if el * 10 > b.soft && run_ms > 0 && started > 100 {
                    let rate = started as f64 / run_ms as f64;
                    let more = rate * (b.soft - el) as f64;
                    if lead as f64 > more * 1.2 {
                        stop_reason = "decided";
                        break;
                    }
                }
            }
        }
        if settings.info_interval_ms > 0
            && now.duration_since(last_info).as_millis() as u64 >= settings.info_interval_ms
        {
            last_info = now;
            let info = snapshot(&lock(), now.saturating_duration_since(start), settings.multipv);
            report(&info);
        }
    }
    shared.halt.store(true, Ordering::SeqCst);

    let t = lock();
    // Diagnostics on stderr (GUIs may not read stderr: keep it off by default).
    if std::env::var_os("KOMA_USI_DEBUG").is_some() {
        eprintln!(
            "koma-usi: search stopped ({stop_reason}) after {} ms, {} simulations",
            start.elapsed().as_millis(),
            t.started()
        );
    }
    let info = snapshot(&t, start.elapsed(), settings.multipv);
    let best = t.best_move();
    let proof = t.root_proof();
    let value = match proof {
        Proof::Win(_) => 1.0,
        Proof::Loss(_) => -1.0,
        Proof::Unknown => {
            let c = t.root_children();
            let q = best.and_then(|b| c.iter().find(|c| c.mv == b)).and_then(|c| c.q);
            q.unwrap_or_else(|| {
                let [w, _, l] = t.root_wdl();
                w - l
            })
        }
    };
    let tree_full = t.hit_memory_cap();
    drop(t);
    let ponder = info.lines.first().and_then(|l| l.pv.get(1).copied());
    let err = shared.error.lock().unwrap_or_else(|e| e.into_inner()).take();
    (SearchOutcome { best, ponder, value, proof, info, error: err, tree_full }, Workers(handles))
}

fn worker(
    tree: &Mutex<Tree>,
    evaluator: &dyn Evaluator,
    encoder: &Encoder,
    limits: &Limits,
    batch: usize,
    pad: bool,
    shared: &Shared,
) {
    let len = encoder.input_len();
    let mut inputs = vec![0.0f32; len * batch];
    let mut leaves = Vec::with_capacity(batch);
    let mut out = Evaluation::new();
    let lock = || tree.lock().unwrap_or_else(|e| e.into_inner());
    while !shared.halt.load(Ordering::SeqCst) {
        let mut exact = 0usize;
        {
            let mut t = lock();
            while leaves.len() < batch {
                if limits.nodes.is_some_and(|n| t.started() >= n) {
                    break;
                }
                let i = leaves.len();
                match t.select_leaf(encoder, &mut inputs[i * len..(i + 1) * len]) {
                    Selected::NeedsEval(leaf) => leaves.push(leaf),
                    Selected::Exact { .. } => {
                        exact += 1;
                        if exact >= 4 * batch {
                            break;
                        }
                    }
                    Selected::Collision | Selected::Done => break,
                }
            }
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
        let t0 = Instant::now();
        let result = evaluator.evaluate_into(&inputs[..rows * len], rows, &mut out);
        let us = t0.elapsed().as_micros() as u64;
        let prev = shared.batch_us.load(Ordering::Relaxed);
        shared.batch_us.store(if prev == 0 { us } else { (prev * 7 + us) / 8 }, Ordering::Relaxed);
        let mut t = lock();
        match result {
            Ok(()) => {
                for (i, leaf) in leaves.drain(..).enumerate() {
                    t.apply(leaf, out.policy(i), out.wdl(i));
                }
            }
            Err(e) => {
                // Keep the tree consistent, then stop the search.
                for leaf in leaves.drain(..) {
                    t.apply(leaf, &[], [0.0, 1.0, 0.0]);
                }
                *shared.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("evaluation failed: {e}"));
                shared.halt.store(true, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cp_mapping() {
        assert_eq!(q_to_cp(0.0), 0);
        assert_eq!(q_to_cp(0.5), 659);
        assert_eq!(q_to_cp(-0.5), -659);
        assert!(q_to_cp(1.0) > 10000);
        assert!(q_to_cp(-1.0) < -10000);
    }
}
