//! `koma bench selfplay`: network evaluations per second inside self-play next to the raw
//! forward pass (`model::bench_forward`) at the batch size self-play reached, so that the
//! ratio says how much of the network's speed the workers' tree work leaves.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use model::encoding::Encoder;
use model::{Batcher, Evaluator, Precision};

use crate::config::SelfplayFileConfig;
use crate::run::{batcher_config, evaluator, openings, EvaluatorSource, JobError};
use crate::worker::{run_selfplay, Progress, RunOptions};

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
