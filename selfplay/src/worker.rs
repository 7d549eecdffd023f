//! Self-play workers: a rayon pool in which each worker plays many games at once, steps
//! each game's search one simulation at a time, and submits the leaves of its games to
//! the batching service (no thread per game). The games are split into
//! `batches_in_flight` groups (default 2), one request each, so that the worker selects
//! one group's leaves while the network evaluates another's (double buffering).
//!
//! Why N long-lived loops rather than a parallel iterator over games: every simulation of
//! a game waits for a network evaluation, and the network is the costly part. A
//! `par_iter` over games would block a pool thread per game on each evaluation (a thread
//! per game again, or games waiting for threads) and hand the batcher one leaf per game.
//! A worker instead interleaves the searches of its `games_per_worker` games, so one
//! request carries many leaves, and the batcher is the parallel part: it merges the
//! requests of all workers into one forward pass. About one worker per core keeps the
//! tree work (selection, move generation, encoding) parallel and the forward passes full.
//!
//! [`run_selfplay`] runs the pool, hands every finished game to the caller on the calling
//! thread, and reports progress.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use model::encoding::{EncodeTarget, Encoder, Footprint};
use model::{BatcherHandle, EvalSlot};
use rules::{material_balance, Color, EndCause, EndRules, Position, Reason, Variant};

use crate::config::SelfplayFileConfig;
use crate::resign::Resign;
use dataio::{AuxTargets, GameResult, Sample};
use search::Rng;
use search::{PhaseTimes, Search, Step};

#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    #[error("opening file {0}")]
    Openings(#[from] dataio::OpeningsError),
    #[error("batcher: {0}")]
    Batch(#[from] model::BatchError),
    #[error("encoder shape {encoder} does not match the evaluator's {evaluator}")]
    Shape { encoder: model::NetShape, evaluator: model::NetShape },
    #[error("worker pool: {0}")]
    Pool(String),
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameEnd {
    pub winner: Option<Color>,
    /// The rules' reason (a declaration among them) or [`EndCause::Resign`].
    pub reason: EndCause,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// Samples in game order (random opening plies are not recorded).
    pub samples: Vec<Sample>,
    /// Plies played, random opening plies included.
    pub plies: u32,
    pub end: GameEnd,
    /// This game was one of the no-resign games.
    pub no_resign: bool,
    /// In a no-resign game, the side that would have resigned (first time), if any.
    pub would_have_resigned: Option<Color>,
    /// The USI moves of the game after its start position, and that position (SFEN).
    pub start_sfen: String,
    pub moves: Vec<String>,
}

impl GameRecord {
    /// In a no-resign game with a would-be resignation: whether that resignation would
    /// have been wrong (the side did not lose).
    pub fn false_resign(&self) -> Option<bool> {
        self.would_have_resigned.map(|c| self.end.winner != Some(c.opponent()))
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Games to finish (games are started until this many have been started).
    pub games: u64,
    /// Stops the run early (games in progress are abandoned).
    pub stop: Arc<AtomicBool>,
    /// Progress callback interval.
    pub progress_every: Duration,
}

impl RunOptions {
    pub fn games(n: u64) -> RunOptions {
        RunOptions { games: n, stop: Arc::new(AtomicBool::new(false)), progress_every: Duration::from_secs(5) }
    }
}

/// Counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    pub elapsed: Duration,
    pub games_done: u64,
    /// Moves played (searched positions).
    pub positions: u64,
    /// Samples recorded in finished games.
    pub samples: u64,
    /// Network evaluations requested by the searches.
    pub evaluations: u64,
    /// Batcher: forward passes and positions evaluated.
    pub forward_passes: u64,
    pub batched_positions: u64,
    /// Sum of the lengths (plies) of finished games.
    pub game_plies: u64,
    pub resigned: u64,
    /// Finished games with no winner (any reason, the cap's draws included).
    pub drawn: u64,
    /// Finished games that reached the length cap (`selfplay.max_plies`): the cap's draws
    /// and the games adjudicated there. A share near 1 means the value learns little
    /// from results (dai's early runs).
    pub cut: u64,
    /// Of those, the games scored by material (`selfplay.cap_adjudication_margin`).
    pub adjudicated: u64,
    /// No-resign games with a would-be resignation, and how many of those were wrong.
    pub resign_checks: u64,
    pub false_resigns: u64,
    /// The resignation threshold now (-1: none; `crate::resign`).
    pub resign_threshold: f32,
    /// Searches stopped by the tree memory cap.
    pub capped_searches: u64,
}

impl Progress {
    pub fn positions_per_sec(&self) -> f64 {
        self.positions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    pub fn evals_per_sec(&self) -> f64 {
        self.batched_positions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    pub fn mean_batch(&self) -> f64 {
        if self.forward_passes == 0 {
            0.0
        } else {
            self.batched_positions as f64 / self.forward_passes as f64
        }
    }
    pub fn mean_game_length(&self) -> f64 {
        if self.games_done == 0 {
            0.0
        } else {
            self.game_plies as f64 / self.games_done as f64
        }
    }
    pub fn false_resign_rate(&self) -> Option<f64> {
        (self.resign_checks > 0).then(|| self.false_resigns as f64 / self.resign_checks as f64)
    }

    /// The share of finished games counted by `n`; `None` before the first game.
    pub fn share_of_games(&self, n: u64) -> Option<f64> {
        (self.games_done > 0).then(|| n as f64 / self.games_done as f64)
    }

    /// Counts a finished game: its length, samples and how it ended.
    pub fn count_game(&mut self, rec: &GameRecord) {
        self.games_done += 1;
        self.game_plies += rec.plies as u64;
        self.samples += rec.samples.len() as u64;
        self.drawn += rec.end.winner.is_none() as u64;
        match rec.end.reason {
            EndCause::Resign => self.resigned += 1,
            EndCause::Rules(Reason::MaxMoves) => self.cut += 1,
            EndCause::Adjudicated => {
                self.cut += 1;
                self.adjudicated += 1;
            }
            _ => {}
        }
        if let Some(f) = rec.false_resign() {
            self.resign_checks += 1;
            self.false_resigns += f as u64;
        }
    }
}

#[derive(Default)]
struct Counters {
    positions: AtomicU64,
    evaluations: AtomicU64,
    capped: AtomicU64,
    games_started: AtomicU64,
}

/// Where the workers' time goes (`koma bench tree`), summed over the workers: the trees'
/// phases ([`PhaseTimes`]), the waits for the batcher, and the moves and games finished
/// and started (the policy target, the records, new games). Read with
/// [`WorkerTimes::snapshot`] while the workers run.
#[derive(Default)]
pub struct WorkerTimes {
    tree: [AtomicU64; 5],
    leaves: AtomicU64,
    exact: AtomicU64,
    collisions: AtomicU64,
    wait: AtomicU64,
    games: AtomicU64,
}

/// A reading of [`WorkerTimes`] (nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerTimesSnapshot {
    pub tree: PhaseTimes,
    pub wait: u64,
    pub games: u64,
}

impl WorkerTimes {
    pub fn snapshot(&self) -> WorkerTimesSnapshot {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        WorkerTimesSnapshot {
            tree: PhaseTimes {
                nanos: self.tree.each_ref().map(load),
                leaves: load(&self.leaves),
                exact: load(&self.exact),
                collisions: load(&self.collisions),
            },
            wait: load(&self.wait),
            games: load(&self.games),
        }
    }

    fn add_tree(&self, t: &PhaseTimes) {
        for (a, &b) in self.tree.iter().zip(&t.nanos) {
            a.fetch_add(b, Ordering::Relaxed);
        }
        self.leaves.fetch_add(t.leaves, Ordering::Relaxed);
        self.exact.fetch_add(t.exact, Ordering::Relaxed);
        self.collisions.fetch_add(t.collisions, Ordering::Relaxed);
    }
}

impl WorkerTimesSnapshot {
    /// What happened between `earlier` and this reading.
    pub fn since(&self, earlier: &WorkerTimesSnapshot) -> WorkerTimesSnapshot {
        let mut tree = self.tree;
        for (a, b) in tree.nanos.iter_mut().zip(earlier.tree.nanos) {
            *a -= b;
        }
        tree.leaves -= earlier.tree.leaves;
        tree.exact -= earlier.tree.exact;
        tree.collisions -= earlier.tree.collisions;
        WorkerTimesSnapshot { tree, wait: self.wait - earlier.wait, games: self.games - earlier.games }
    }
}

/// Start positions to pick from.
#[derive(Clone, Debug)]
pub struct Openings {
    /// Positions given as `position` commands (with moves played, so the history counts).
    positions: Vec<Position>,
}

impl Openings {
    pub fn startpos(variant: Variant) -> Openings {
        Openings { positions: vec![Position::startpos(variant)] }
    }

    /// Reads an opening file (`dataio::openings`, the format of `data/openings/README.md`).
    pub fn load(variant: Variant, path: &Path) -> Result<Openings, SelfplayError> {
        let set = dataio::load_openings(variant, path)?;
        Ok(Openings { positions: set.iter().map(|o| o.position()).collect() })
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

struct Pending {
    sfen: String,
    repetitions: u8,
    policy: Vec<(u32, f32)>,
    root_wdl: [f32; 3],
    full: bool,
    side: Color,
    ply: u32,
}

struct Game {
    pos: Position,
    start_sfen: String,
    moves: Vec<String>,
    search: Search,
    rng: Rng,
    full: bool,
    records: Vec<Pending>,
    no_resign: bool,
    below: [u32; 2],
    would_resign: Option<Color>,
    plies: u32,
}

/// The auxiliary targets ([`AuxTargets`]) of a finished game's records (in game order,
/// one a ply), from what came later: the next record's policy target (a full search
/// only), the root WDL `future_plies` plies later (the result when the game ended
/// sooner) and the material of the final position `last`, each seen from the record's
/// side to move; `winner` is the game's.
fn aux_targets(records: &[Pending], future_plies: usize, winner: Option<Color>, last: &Position) -> Vec<AuxTargets> {
    let sente_material = material_balance(last, Color::Sente) as f32;
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let reply_policy = match records.get(i + 1) {
                Some(next) if next.full => next.policy.clone(),
                _ => Vec::new(),
            };
            let future_wdl = match records.get(i + future_plies) {
                Some(later) if later.side == r.side => later.root_wdl,
                Some(later) => [later.root_wdl[2], later.root_wdl[1], later.root_wdl[0]],
                None => GameResult::for_side(winner, r.side).wdl(),
            };
            let final_material = if r.side == Color::Sente { sente_material } else { -sente_material };
            AuxTargets { reply_policy, future_wdl: Some(future_wdl), final_material: Some(final_material) }
        })
        .collect()
}

/// Everything a worker needs, shared.
struct Ctx<'a> {
    cfg: &'a SelfplayFileConfig,
    encoder: Encoder,
    end_rules: EndRules,
    openings: &'a Openings,
    opts: &'a RunOptions,
    counters: &'a Counters,
    resign: &'a Resign,
    seed: u64,
    /// Where the time goes, when measured.
    times: Option<&'a WorkerTimes>,
}

impl Ctx<'_> {
    /// Claims a game number, or `None` when enough games were started (or stopping).
    fn claim_game(&self) -> Option<u64> {
        if self.opts.stop.load(Ordering::Relaxed) {
            return None;
        }
        let n = self.counters.games_started.fetch_add(1, Ordering::Relaxed);
        (n < self.opts.games).then_some(n)
    }

    fn new_game(&self, number: u64, search: Search) -> Game {
        let sp = &self.cfg.selfplay;
        let mut rng = Rng::stream(self.seed, number.wrapping_add(1));
        // Opening: a start position, then random plies (retry if the game ends).
        let mut pos;
        let mut tries = 0;
        loop {
            pos = self.openings.positions[rng.below(self.openings.positions.len())].clone();
            let mut ok = true;
            for _ in 0..sp.random_opening_plies {
                if pos.outcome(&self.end_rules).is_some() || pos.can_declare() {
                    ok = false;
                    break;
                }
                let moves = pos.legal_moves();
                pos.play(moves[rng.below(moves.len())]);
            }
            ok = ok && pos.outcome(&self.end_rules).is_none() && !pos.can_declare();
            tries += 1;
            if ok || tries >= 20 {
                break;
            }
        }
        let no_resign = rng.bernoulli(sp.no_resign_fraction);
        let start_sfen = pos.to_sfen();
        let mut g = Game {
            pos,
            start_sfen,
            moves: Vec::new(),
            search,
            rng,
            full: false,
            records: Vec::new(),
            no_resign,
            below: [0; 2],
            would_resign: None,
            plies: 0,
        };
        self.start_search(&mut g);
        g
    }

    fn start_search(&self, g: &mut Game) {
        let sp = &self.cfg.selfplay;
        g.full = g.rng.bernoulli(sp.full_search_fraction);
        let sims = if g.full { sp.simulations_full } else { sp.simulations_cheap };
        // KataGo: cheap searches get no noise (and no policy target).
        g.search.start(&g.pos, sims, g.full || self.cfg.search.gumbel);
    }

    /// The game's end at its current position, if it has ended.
    fn game_end(&self, pos: &Position) -> Option<GameEnd> {
        if let Some(o) = pos.outcome(&self.end_rules) {
            if o.reason == Reason::MaxMoves {
                let margin = self.cfg.selfplay.cap_adjudication_margin;
                if let Some(winner) = crate::adjudicate::cap_winner(pos, margin) {
                    return Some(GameEnd { winner: Some(winner), reason: EndCause::Adjudicated });
                }
            }
            return Some(GameEnd { winner: o.winner, reason: EndCause::Rules(o.reason) });
        }
        if pos.can_declare() {
            return Some(GameEnd { winner: Some(pos.side_to_move()), reason: EndCause::Rules(Reason::Declaration) });
        }
        None
    }

    /// The search of `g` is done: record the sample, play the move. Returns the end of
    /// the game if it ended.
    fn finish_move(&self, g: &mut Game) -> Option<GameEnd> {
        let sp = &self.cfg.selfplay;
        if g.search.hit_memory_cap() {
            self.counters.capped.fetch_add(1, Ordering::Relaxed);
        }
        let wdl = g.search.root_wdl();
        let side = g.pos.side_to_move();
        // A Gumbel root ignores the temperature (config validation refuses one).
        let temperature = sp.temperature_at(g.pos.plies_played());
        let Some(mv) = g.search.choose_move(temperature, &mut g.rng) else {
            // No legal move although the rules did not end the game: cannot happen with
            // consistent rules; end it as a loss for the side to move.
            return Some(GameEnd { winner: Some(side.opponent()), reason: EndCause::Rules(Reason::NoMoves) });
        };
        let policy: Vec<(u32, f32)> =
            g.search.policy_target().into_iter().map(|(m, p)| (self.encoder.move_index(&g.pos, m) as u32, p)).collect();
        g.records.push(Pending {
            sfen: g.pos.to_sfen(),
            repetitions: g.pos.repetitions().min(255) as u8,
            // No policy target (a root lost before its evaluation): train the value only.
            full: g.full && !policy.is_empty(),
            policy,
            root_wdl: wdl,
            side,
            ply: g.plies,
        });
        self.counters.positions.fetch_add(1, Ordering::Relaxed);
        // Resignation.
        let q = wdl[0] - wdl[2];
        let s = side.index();
        let threshold = self.resign.threshold();
        if q < threshold {
            g.below[s] += 1;
        } else {
            g.below[s] = 0;
        }
        if g.below[s] >= sp.resign_consecutive && threshold > -1.0 {
            if g.no_resign {
                g.would_resign.get_or_insert(side);
            } else {
                return Some(GameEnd { winner: Some(side.opponent()), reason: EndCause::Resign });
            }
        }
        g.moves.push(mv.to_usi());
        g.pos.play(mv);
        g.plies += 1;
        self.game_end(&g.pos)
    }

    fn finish_game(&self, g: &mut Game, end: GameEnd) -> GameRecord {
        let total = g.plies;
        if g.no_resign {
            let values: Vec<(Color, f32)> = g.records.iter().map(|r| (r.side, r.root_wdl[0] - r.root_wdl[2])).collect();
            self.resign.observe_played_out(&values, end.winner, self.cfg.selfplay.resign_consecutive);
        }
        let aux = aux_targets(&g.records, self.cfg.selfplay.future_plies as usize, end.winner, &g.pos);
        let samples = g
            .records
            .drain(..)
            .zip(aux)
            .map(|(r, aux)| {
                // The value target from the view of the side to move at the sample.
                let result = GameResult::for_side(end.winner, r.side);
                Sample {
                    sfen: r.sfen,
                    repetitions: r.repetitions,
                    policy: r.policy,
                    result: Some(result),
                    root_wdl: r.root_wdl,
                    plies_left: total - r.ply,
                    full_search: r.full,
                    aux,
                }
            })
            .collect();
        GameRecord {
            samples,
            plies: g.plies,
            end,
            no_resign: g.no_resign,
            would_have_resigned: g.would_resign,
            start_sfen: std::mem::take(&mut g.start_sfen),
            moves: std::mem::take(&mut g.moves),
        }
    }

    /// One worker: plays its games until no more are to be started. Its games are split
    /// into `batches_in_flight` groups, each with its own request to the batcher: while
    /// one group's leaves are evaluated, the worker applies and selects the others'.
    fn worker(&self, handle: BatcherHandle, tx: std::sync::mpsc::Sender<GameRecord>) -> Result<(), SelfplayError> {
        let sp = &self.cfg.selfplay;
        let k = sp.games_per_worker.max(1);
        let group_count = sp.batches_in_flight.clamp(1, k);
        let mut spare: Vec<Search> = Vec::new();
        let mut groups: Vec<Group> = (0..group_count)
            .map(|g| {
                let size = k / group_count + usize::from(g < k % group_count);
                let mut slot = handle.slot();
                // The search reads only the legal moves' logits: f16/bf16 logits from the
                // device need no conversion pass.
                slot.accept_reduced_precision(true);
                let mut games = Vec::with_capacity(size);
                while games.len() < size {
                    match self.claim_game() {
                        Some(n) => games.push(self.new_game(n, self.new_search())),
                        None => break,
                    }
                }
                Group { games, slot, waiting: Vec::with_capacity(size), footprints: Vec::new(), storage: 0 }
            })
            .collect();
        loop {
            if self.opts.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let mut in_flight = false;
            for g in &mut groups {
                if g.slot.is_pending() {
                    let waited = self.times.map(|_| Instant::now());
                    g.slot.wait()?;
                    if let (Some(t), Some(w)) = (self.times, waited) {
                        t.wait.fetch_add(w.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                    let out = g.slot.output().expect("answered");
                    // A batch's policy out of the cache (bigger than a core's share of it)
                    // is read faster when the next leaf's logits are asked for ahead.
                    let prefetch = g.waiting.len() > 1
                        && g.waiting.len() * out.logits(0).len() * std::mem::size_of::<f32>() > PREFETCH_POLICY_ABOVE;
                    for (j, &gi) in g.waiting.iter().enumerate() {
                        if let (true, Some(&next)) = (prefetch, g.waiting.get(j + 1)) {
                            g.games[next].search.prefetch_priors(out.logits(j + 1));
                        }
                        let game = &mut g.games[gi];
                        game.search.apply(out.logits(j), out.wdl(j), &mut game.rng);
                    }
                }
                self.select_and_submit(g, &tx, &mut spare)?;
                in_flight |= g.slot.is_pending();
            }
            if !in_flight {
                return Ok(());
            }
        }
    }

    fn new_search(&self) -> Search {
        let mut s = Search::new(self.cfg.search.clone(), self.end_rules, self.cfg.variant);
        s.set_phase_timing(self.times.is_some());
        s
    }

    /// Steps every game of `g` to its next leaf, encoding the leaves straight into the
    /// group's request buffer, finishing moves and games on the way (a finished game is
    /// replaced by a new one while games remain to be started), and submits the leaves.
    fn select_and_submit(
        &self,
        g: &mut Group,
        tx: &std::sync::mpsc::Sender<GameRecord>,
        spare: &mut Vec<Search>,
    ) -> Result<(), SelfplayError> {
        let len = self.encoder.input_len();
        let Group { games, slot, waiting, footprints, storage } = g;
        waiting.clear();
        if games.is_empty() {
            return Ok(());
        }
        // Every game sends at most one leaf; a replaced game keeps the count.
        let (mut buf, now) = slot.planes_in_storage(games.len());
        if now != *storage {
            footprints.iter_mut().for_each(Footprint::forget);
            *storage = now;
        }
        if footprints.len() < games.len() {
            footprints.resize_with(games.len(), Footprint::default);
        }
        let mut gi = 0;
        while gi < games.len() {
            let off = waiting.len() * len;
            let game = &mut games[gi];
            let target = EncodeTarget { planes: buf.range(off, len), footprint: Some(&mut footprints[waiting.len()]) };
            match game.search.select(&self.encoder, target) {
                Step::NeedsEval => {
                    waiting.push(gi);
                    gi += 1;
                }
                Step::Done | Step::Collision => {
                    let started = self.times.map(|_| Instant::now());
                    if let Some(end) = self.finish_move(game) {
                        let record = self.finish_game(game, end);
                        let _ = tx.send(record);
                        // Replace the game with a new one, or drop it.
                        let mut done = games.swap_remove(gi);
                        if let Some(t) = self.times {
                            t.add_tree(&done.search.take_phase_times());
                        }
                        spare.push(done.search);
                        if let Some(n) = self.claim_game() {
                            let s = spare.pop().unwrap_or_else(|| self.new_search());
                            games.push(self.new_game(n, s));
                        }
                        // `gi` now holds another game (or is past the end).
                    } else {
                        self.start_search(game);
                    }
                    if let (Some(t), Some(s)) = (self.times, started) {
                        t.games.fetch_add(s.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                }
            }
        }
        if let Some(t) = self.times {
            let mut sum = PhaseTimes::default();
            for game in games.iter_mut() {
                sum.add(&game.search.take_phase_times());
            }
            t.add_tree(&sum);
        }
        let n = waiting.len();
        if n == 0 {
            return Ok(());
        }
        slot.set_len(n);
        self.counters.evaluations.fetch_add(n as u64, Ordering::Relaxed);
        slot.submit()?;
        Ok(())
    }
}

/// Bytes of a batch's policy (f32) above which its leaves' logits are prefetched: about a
/// core's share of the cache; below, the policy is still there and prefetching only costs.
const PREFETCH_POLICY_ABOVE: usize = 1 << 20;

/// A worker's share of its games whose leaves travel to the network as one request.
struct Group {
    games: Vec<Game>,
    slot: EvalSlot,
    /// Indices into `games` of the leaves of the request out, in the order sent.
    waiting: Vec<usize>,
    /// What the last encoding of each leaf of the slot left there, so that the next one
    /// clears only that (valid while the slot's storage stays `storage`).
    footprints: Vec<Footprint>,
    storage: u64,
}

/// Plays self-play games with `cfg` against the evaluator behind `handle` until
/// `opts.games` games are finished (or `opts.stop` is set). Calls `on_game` for every
/// finished game and `on_progress` every `opts.progress_every`, both on the calling
/// thread. Returns the final counters.
pub fn run_selfplay(
    cfg: &SelfplayFileConfig,
    handle: BatcherHandle,
    openings: &Openings,
    opts: &RunOptions,
    on_game: impl FnMut(GameRecord),
    on_progress: impl FnMut(&Progress),
) -> Result<Progress, SelfplayError> {
    run_selfplay_timed(cfg, handle, openings, opts, None, on_game, on_progress)
}

/// [`run_selfplay`] that also adds where the workers' time goes to `times`, when given.
pub fn run_selfplay_timed(
    cfg: &SelfplayFileConfig,
    handle: BatcherHandle,
    openings: &Openings,
    opts: &RunOptions,
    times: Option<&WorkerTimes>,
    mut on_game: impl FnMut(GameRecord),
    mut on_progress: impl FnMut(&Progress),
) -> Result<Progress, SelfplayError> {
    let encoder = Encoder::for_net(cfg.variant, &cfg.model);
    if encoder.net_shape() != handle.shape() {
        return Err(SelfplayError::Shape { encoder: encoder.net_shape(), evaluator: handle.shape() });
    }
    let workers = cfg.selfplay.worker_count();
    let seed = if cfg.selfplay.seed != 0 {
        cfg.selfplay.seed
    } else {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("koma-selfplay-{i}"))
        .build()
        .map_err(|e| SelfplayError::Pool(e.to_string()))?;
    let counters = Counters::default();
    let resign = Resign::new(&cfg.selfplay);
    let ctx = Ctx {
        cfg,
        encoder,
        end_rules: EndRules { max_plies: Some(cfg.selfplay.max_plies), ..EndRules::default() },
        openings,
        opts,
        counters: &counters,
        resign: &resign,
        seed,
        times,
    };
    let start = Instant::now();
    let base = handle.stats();
    let (tx, rx) = std::sync::mpsc::channel::<GameRecord>();
    let mut progress = Progress::default();
    let snapshot = |p: &mut Progress| {
        let s = handle.stats();
        p.elapsed = start.elapsed();
        p.positions = counters.positions.load(Ordering::Relaxed);
        p.evaluations = counters.evaluations.load(Ordering::Relaxed);
        p.capped_searches = counters.capped.load(Ordering::Relaxed);
        p.resign_threshold = resign.threshold();
        p.forward_passes = s.forward_passes - base.forward_passes;
        p.batched_positions = s.positions - base.positions;
    };
    let result: Result<(), SelfplayError> = std::thread::scope(|scope| {
        let ctx = &ctx;
        let pool = &pool;
        let handle2 = handle.clone();
        let runner = scope.spawn(move || -> Result<(), SelfplayError> {
            let errors = std::sync::Mutex::new(Vec::new());
            pool.scope(|s| {
                for _ in 0..workers {
                    let tx = tx.clone();
                    let h = handle2.clone();
                    let errors = &errors;
                    s.spawn(move |_| {
                        if let Err(e) = ctx.worker(h, tx) {
                            // Stop the others: a batcher error is fatal.
                            ctx.opts.stop.store(true, Ordering::Relaxed);
                            errors.lock().unwrap().push(e);
                        }
                    });
                }
                drop(tx);
            });
            match errors.into_inner().unwrap().into_iter().next() {
                Some(e) => Err(e),
                None => Ok(()),
            }
        });
        let mut last = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(rec) => {
                    progress.count_game(&rec);
                    on_game(rec);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if last.elapsed() >= opts.progress_every {
                last = Instant::now();
                snapshot(&mut progress);
                on_progress(&progress);
            }
        }
        runner.join().unwrap_or_else(|_| Err(SelfplayError::Pool("a worker panicked".into())))
    });
    snapshot(&mut progress);
    result?;
    Ok(progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(plies: u32, winner: Option<Color>, reason: EndCause) -> GameRecord {
        GameRecord {
            samples: Vec::new(),
            plies,
            end: GameEnd { winner, reason },
            no_resign: false,
            would_have_resigned: None,
            start_sfen: String::new(),
            moves: Vec::new(),
        }
    }

    #[test]
    fn progress_counts_how_games_ended() {
        let mut p = Progress::default();
        assert_eq!(p.share_of_games(p.cut), None, "no game yet");
        p.count_game(&record(120, Some(Color::Sente), EndCause::Rules(Reason::Checkmate)));
        p.count_game(&record(400, None, EndCause::Rules(Reason::MaxMoves)));
        p.count_game(&record(400, Some(Color::Gote), EndCause::Adjudicated));
        p.count_game(&record(80, Some(Color::Gote), EndCause::Resign));
        assert_eq!((p.games_done, p.game_plies), (4, 1000));
        assert_eq!((p.drawn, p.cut, p.adjudicated, p.resigned), (1, 2, 1, 1));
        assert_eq!(p.share_of_games(p.cut), Some(0.5));
        assert_eq!(p.share_of_games(p.drawn), Some(0.25));
    }
}
