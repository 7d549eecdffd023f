//! `koma bench selfplay`: network evaluations per second inside self-play next to the raw
//! forward pass (`model::bench_forward`) at the batch size self-play reached, so that the
//! ratio says how much of the network's speed the workers' tree work leaves; and `koma
//! bench tree`: the workers' tree work alone, self-play's worker loop against the uniform
//! evaluator (no network), in leaves per second per worker thread with the time by phase.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use model::encoding::Encoder;
use model::{Batcher, BatcherConfig, EvalError, Evaluation, Evaluator, NetShape, Precision};

use crate::config::SelfplayFileConfig;
use crate::run::{batcher_config, evaluator, openings, EvaluatorSource, JobError};
use crate::worker::{run_selfplay, run_selfplay_timed, Progress, RunOptions, WorkerTimes, WorkerTimesSnapshot};

/// How long to measure.
#[derive(Clone, Copy, Debug)]
pub struct BenchSettings {
    /// Seconds of self-play measured in all (after the warm-ups); the raw forward pass
    /// gets as long.
    pub seconds: f64,
    /// Seconds of self-play before measuring, each round.
    pub warmup: f64,
    /// Self-play and the raw forward pass take turns this many times.
    pub rounds: usize,
}

/// One round: self-play, then the raw forward pass at self-play's mean batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchRound {
    /// 0-based.
    pub round: usize,
    pub selfplay_evals_per_sec: f64,
    pub mean_batch: f64,
    /// Share of the self-play time the network spent in forward passes (0 to 1).
    pub network_busy: f64,
    pub raw_evals_per_sec: f64,
    /// The batch of the raw forward pass (see [`BenchReport::batch`]).
    pub batch: usize,
}

/// All rounds together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchReport {
    pub selfplay_evals_per_sec: f64,
    pub mean_batch: f64,
    pub positions_per_sec: f64,
    pub forward_passes_per_sec: f64,
    /// Share of the self-play time the network spent in forward passes (0 to 1).
    pub network_busy: f64,
    pub raw_evals_per_sec: f64,
    /// The batch of the raw forward pass: self-play's mean batch in the first round.
    pub batch: usize,
}

impl BenchReport {
    /// Self-play's evaluations per second over the raw forward pass's.
    pub fn ratio(&self) -> f64 {
        self.selfplay_evals_per_sec / self.raw_evals_per_sec
    }
}

/// Sums over the rounds.
#[derive(Default)]
struct Totals {
    evals: f64,
    secs: f64,
    passes: f64,
    positions: f64,
    busy: f64,
    raw_evals: f64,
    raw_secs: f64,
}

/// Measures self-play with the network of `network` (a fresh one of the config's
/// `[model]` when `None`: same speed). `on_start` sees the first round's evaluator,
/// `on_round` each round's result.
pub fn bench_selfplay(
    cfg: &SelfplayFileConfig,
    precision: Precision,
    network: Option<&Path>,
    settings: BenchSettings,
    on_start: impl FnOnce(&dyn Evaluator),
    mut on_round: impl FnMut(&BenchRound),
) -> Result<BenchReport, JobError> {
    let rounds = settings.rounds.max(1);
    let openings = openings(cfg)?;
    let device = model::parse_device(&cfg.selfplay.device)?;
    let shape = Encoder::for_net(cfg.variant, &cfg.model).net_shape();
    let per_round = Duration::from_secs_f64((settings.seconds / rounds as f64).max(0.5));
    let warmup = Duration::from_secs_f64(settings.warmup.max(0.0));
    let source = network.map_or(EvaluatorSource::Fresh, EvaluatorSource::Network);
    let mut on_start = Some(on_start);
    // Self-play and the raw forward pass take turns, so that a load that changes over
    // time (other processes) biases both alike.
    let mut totals = Totals::default();
    let mut batch = 0usize;
    for round in 0..rounds {
        let eval = evaluator(cfg, precision, source)?;
        if let Some(f) = on_start.take() {
            f(eval.as_ref());
        }
        let batcher = Batcher::spawn(eval, batcher_config(cfg));
        let opts = RunOptions {
            games: u64::MAX,
            stop: Arc::new(Default::default()),
            progress_every: Duration::from_millis(50),
        };
        let stop = opts.stop.clone();
        let end = warmup + per_round;
        let mut first: Option<(Progress, f64)> = None;
        let mut last = (Progress::default(), 0.0);
        // Seconds the batcher spent in forward passes: the share of time the network had work.
        let busy = |b: &Batcher| b.stats().eval_seconds;
        run_selfplay(
            cfg,
            batcher.handle(),
            &openings,
            &opts,
            |_| {},
            |p| {
                if first.is_none() && p.elapsed >= warmup {
                    first = Some((*p, busy(&batcher)));
                }
                if p.elapsed >= end && !stop.load(Ordering::Relaxed) {
                    last = (*p, busy(&batcher));
                    stop.store(true, Ordering::Relaxed);
                }
            },
        )
        .map_err(JobError::Selfplay)?;
        drop(batcher);
        let (first, first_busy) = first.ok_or(JobError::EndedInWarmup)?;
        let (last, last_busy) = last;
        let secs = (last.elapsed - first.elapsed).as_secs_f64();
        let evals = (last.batched_positions - first.batched_positions) as f64;
        let passes = (last.forward_passes - first.forward_passes).max(1) as f64;
        let round_busy = last_busy - first_busy;
        totals.evals += evals;
        totals.secs += secs;
        totals.passes += passes;
        totals.positions += (last.positions - first.positions) as f64;
        totals.busy += round_busy;
        if round == 0 {
            batch = (evals / passes).round().max(1.0) as usize;
        }
        // The raw forward pass on a thread of its own, like the batcher's.
        let options = model::BenchOptions { min_time: per_round, ..Default::default() };
        let net_cfg = cfg.model.clone();
        let rows =
            std::thread::spawn(move || model::bench_forward(&net_cfg, shape, device, precision, &[batch], &options))
                .join()
                .map_err(|_| JobError::BenchPanicked)??;
        totals.raw_evals += (rows[0].batch * rows[0].iterations) as f64;
        totals.raw_secs += rows[0].seconds;
        on_round(&BenchRound {
            round,
            selfplay_evals_per_sec: evals / secs,
            mean_batch: evals / passes,
            network_busy: round_busy / secs,
            raw_evals_per_sec: rows[0].evals_per_sec,
            batch,
        });
    }
    Ok(BenchReport {
        selfplay_evals_per_sec: totals.evals / totals.secs,
        mean_batch: totals.evals / totals.passes,
        positions_per_sec: totals.positions / totals.secs,
        forward_passes_per_sec: totals.passes / totals.secs,
        network_busy: totals.busy / totals.secs,
        raw_evals_per_sec: totals.raw_evals / totals.raw_secs,
        batch,
    })
}

/// One round (or all rounds together) of [`bench_tree`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeBenchRound {
    /// Seconds measured (wall clock) and the worker threads.
    pub seconds: f64,
    pub workers: usize,
    /// Moves searched (positions), and where the workers' time went.
    pub positions: u64,
    pub times: WorkerTimesSnapshot,
    /// Seconds the worker threads ran on a core (Linux: their `schedstat`), if known: on
    /// a machine that other processes share, leaves per CPU second still compare.
    pub cpu_seconds: Option<f64>,
}

impl TreeBenchRound {
    /// Worker-thread seconds: the wall clock times the workers.
    pub fn thread_seconds(&self) -> f64 {
        self.seconds * self.workers as f64
    }

    /// Leaves evaluated a second per worker thread: what the workers hand the network.
    pub fn leaves_per_thread_sec(&self) -> f64 {
        self.times.tree.leaves as f64 / self.thread_seconds().max(1e-9)
    }

    /// Simulations (leaves, exact results and collisions) a second per worker thread.
    pub fn simulations_per_thread_sec(&self) -> f64 {
        let t = &self.times.tree;
        (t.leaves + t.exact + t.collisions) as f64 / self.thread_seconds().max(1e-9)
    }

    /// Leaves per second of the worker threads' time on a core.
    pub fn leaves_per_cpu_sec(&self) -> Option<f64> {
        self.cpu_seconds.map(|c| self.times.tree.leaves as f64 / c.max(1e-9))
    }

    pub fn positions_per_thread_sec(&self) -> f64 {
        self.positions as f64 / self.thread_seconds().max(1e-9)
    }

    /// Nanoseconds of worker-thread time per leaf: each phase's, then the rest (the
    /// batcher's waits, moves and games, the loop).
    pub fn nanos_per_leaf(&self, nanos: u64) -> f64 {
        nanos as f64 / self.times.tree.leaves.max(1) as f64
    }

    /// Worker-thread nanoseconds not in a tree phase, a wait or the games' bookkeeping.
    pub fn other_nanos(&self) -> u64 {
        let total = (self.thread_seconds() * 1e9) as u64;
        let t = &self.times;
        total.saturating_sub(t.tree.nanos.iter().sum::<u64>() + t.wait + t.games)
    }

    fn add(&mut self, o: &TreeBenchRound) {
        self.seconds += o.seconds;
        self.cpu_seconds = self.cpu_seconds.zip(o.cpu_seconds).map(|(a, b)| a + b);
        self.workers = o.workers;
        self.positions += o.positions;
        self.times.tree.add(&o.times.tree);
        self.times.wait += o.times.wait;
        self.times.games += o.times.games;
    }
}

/// The uniform evaluator's answer (every logit 0, WDL a third each) at next to no cost, so
/// that [`bench_tree`] measures the workers: the logits are left as the buffers hold
/// them, which is zero, as they were made and as only this evaluator ever writes them
/// (the slots' buffers of one batcher); the WDL rows are written.
struct InstantEvaluator {
    shape: NetShape,
}

impl Evaluator for InstantEvaluator {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, _inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        out.resize(batch, self.shape.policy_len());
        out.buffers_mut().1.fill(1.0 / 3.0);
        Ok(())
    }

    fn evaluate_parts(&self, parts: &mut [model::EvalPart<'_>]) -> Result<(), EvalError> {
        for p in parts.iter_mut() {
            self.evaluate_into(&[], p.n, p.out)?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!("instant uniform ({})", self.shape)
    }
}

/// `koma bench tree`: self-play's workers (the config's simulations, games per worker and
/// search settings) against the uniform evaluator behind the batching service, which
/// answers at once (no waiting for a fuller batch, next to no work: [`InstantEvaluator`]):
/// what the tree work costs without a network. Each round starts afresh from the opening positions; the report sums the
/// rounds after their warm-ups. With `phases` false the workers run as self-play runs them,
/// without the phases' clock reads (a few per cent of a leaf): the leaves are then the searches'
/// evaluation requests and the phases' times stay zero.
pub fn bench_tree(
    cfg: &SelfplayFileConfig,
    settings: BenchSettings,
    phases: bool,
    mut on_round: impl FnMut(usize, &TreeBenchRound),
) -> Result<TreeBenchRound, JobError> {
    let rounds = settings.rounds.max(1);
    let openings = openings(cfg)?;
    let shape = Encoder::for_net(cfg.variant, &cfg.model).net_shape();
    let per_round = Duration::from_secs_f64((settings.seconds / rounds as f64).max(0.5));
    let warmup = Duration::from_secs_f64(settings.warmup.max(0.0));
    let workers = cfg.selfplay.worker_count();
    let mut total = TreeBenchRound { workers, cpu_seconds: Some(0.0), ..Default::default() };
    for round in 0..rounds {
        let eval: Arc<dyn Evaluator> = Arc::new(InstantEvaluator { shape });
        let batcher = Batcher::spawn(eval, BatcherConfig { max_wait: Duration::ZERO, ..batcher_config(cfg) });
        let opts = RunOptions {
            games: u64::MAX,
            stop: Arc::new(Default::default()),
            progress_every: Duration::from_millis(20),
        };
        let stop = opts.stop.clone();
        let times = WorkerTimes::default();
        let end = warmup + per_round;
        let mut first: Option<(Progress, WorkerTimesSnapshot, Option<u64>)> = None;
        let mut last = (Progress::default(), WorkerTimesSnapshot::default(), None);
        run_selfplay_timed(
            cfg,
            batcher.handle(),
            &openings,
            &opts,
            phases.then_some(&times),
            |_| {},
            |p| {
                if first.is_none() && p.elapsed >= warmup {
                    first = Some((*p, times.snapshot(), worker_cpu_nanos()));
                }
                if p.elapsed >= end && !stop.load(Ordering::Relaxed) {
                    last = (*p, times.snapshot(), worker_cpu_nanos());
                    stop.store(true, Ordering::Relaxed);
                }
            },
        )
        .map_err(JobError::Selfplay)?;
        drop(batcher);
        let (first, first_times, first_cpu) = first.ok_or(JobError::EndedInWarmup)?;
        let (last, last_times, last_cpu) = last;
        let mut r = TreeBenchRound {
            seconds: (last.elapsed - first.elapsed).as_secs_f64(),
            workers,
            positions: last.positions - first.positions,
            times: last_times.since(&first_times),
            cpu_seconds: first_cpu.zip(last_cpu).map(|(a, b)| b.saturating_sub(a) as f64 * 1e-9),
        };
        if !phases {
            r.times.tree.leaves = last.evaluations - first.evaluations;
        }
        on_round(round, &r);
        total.add(&r);
    }
    Ok(total)
}

/// Nanoseconds the self-play worker threads of this process (named `koma-selfplay-N`)
/// have run on a core, from `/proc/self/task/*/schedstat` (Linux); `None` elsewhere.
fn worker_cpu_nanos() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("koma-selfplay") {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}
