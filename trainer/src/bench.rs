//! Learner throughput, for `koma bench learn`: optimiser steps per second for each batch
//! size on synthetic samples (random games, a few policy moves each), with statistics
//! read once per `log_interval` as training does, and the loader's encoding rate beside
//! it (the loader runs on other threads, so the learner waits only when it is slower).

use std::time::Instant;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use model::tch::Device;
use model::Net;
use rules::Position;
use search::Rng;
use serde::Serialize;

use crate::config::TrainFileConfig;
use crate::data::{encode_batch, ValueTargets};
use crate::error::TrainError;
use crate::learning::net_trainer::NetTrainer;

/// One measured batch size.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LearnBenchRow {
    pub batch: usize,
    /// Timed optimiser steps and their wall time.
    pub steps: u64,
    pub seconds: f64,
    pub steps_per_sec: f64,
    pub positions_per_sec: f64,
    /// Batches the loader's encoding makes per second (all cores).
    pub encoded_batches_per_sec: f64,
}

/// Positions of random games from the variant's start (each with a policy target over up
/// to four legal moves and a game result), `n` of them.
pub fn synthetic_samples(cfg: &TrainFileConfig, encoder: &Encoder, n: usize, seed: u64) -> Vec<Sample> {
    let variant = cfg.base.variant;
    let mut rng = Rng::new(seed.max(1));
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pos = Position::startpos(variant);
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() || out.len() >= n {
                break;
            }
            let k = moves.len().min(4);
            let policy: Vec<(u32, f32)> =
                moves[..k].iter().map(|&m| (encoder.move_index(&pos, m) as u32, 1.0 / k as f32)).collect();
            let result = [GameResult::Win, GameResult::Draw, GameResult::Loss][rng.below(3)];
            out.push(Sample {
                sfen: pos.to_sfen(),
                repetitions: 0,
                policy,
                result: Some(result),
                root_wdl: [0.4, 0.2, 0.4],
                plies_left: 10,
                full_search: true,
                aux: dataio::AuxTargets::default(),
            });
            pos.play(moves[rng.below(moves.len())]);
        }
    }
    out
}

/// Measures the learner of `cfg` on `device` for each batch size for `seconds` (after
/// `warmup` steps).
pub fn bench_learn(
    cfg: &TrainFileConfig,
    device: Device,
    batch_sizes: &[usize],
    seconds: f64,
    warmup: u64,
) -> Result<Vec<LearnBenchRow>, TrainError> {
    let encoder = Encoder::for_net(cfg.base.variant, &cfg.base.model);
    let largest = batch_sizes.iter().copied().max().unwrap_or(1).max(1);
    let samples = synthetic_samples(cfg, &encoder, largest * 4, 7);
    let mut rows = Vec::new();
    for &batch in batch_sizes {
        let batch = batch.max(1);
        let mut tcfg = cfg.train.clone();
        tcfg.batch_size = batch;
        let net = Net::new(&cfg.base.model, encoder.net_shape(), 1, device)?;
        let mut learner = NetTrainer::new(net, &tcfg, 0);
        let batches: Vec<_> =
            samples.chunks(batch).take(4).map(|c| encode_batch(&encoder, c, ValueTargets::RESULT)).collect();
        let started = Instant::now();
        let mut encoded = 0u32;
        while encoded < 4 || started.elapsed().as_secs_f64() < 0.5 {
            encode_batch(&encoder, &samples[..batch], ValueTargets::RESULT);
            encoded += 1;
        }
        let encoded_batches_per_sec = encoded as f64 / started.elapsed().as_secs_f64();
        for i in 0..warmup {
            learner.train_step_deferred(&batches[i as usize % batches.len()]);
        }
        learner.take_stats()?;
        let log = tcfg.log_interval.max(1);
        let started = Instant::now();
        let mut steps = 0u64;
        loop {
            learner.train_step_deferred(&batches[steps as usize % batches.len()]);
            steps += 1;
            if steps % log == 0 {
                // The read waits for the device: the time is honest at these points.
                learner.take_stats()?;
                if started.elapsed().as_secs_f64() >= seconds {
                    break;
                }
            }
        }
        let secs = started.elapsed().as_secs_f64();
        rows.push(LearnBenchRow {
            batch,
            steps,
            seconds: secs,
            steps_per_sec: steps as f64 / secs,
            positions_per_sec: (steps as usize * batch) as f64 / secs,
            encoded_batches_per_sec,
        });
    }
    Ok(rows)
}
