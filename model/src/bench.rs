//! Forward-pass throughput, for `koma bench nn`.

use std::time::{Duration, Instant};

use serde::Serialize;
use tch::Device;

use crate::config::NetConfig;
use crate::device::Precision;
use crate::evaluator::{EvalError, Evaluation, Evaluator, TorchEvaluator};
use crate::net::{Net, NetError};
use crate::shape::NetShape;

/// How long to measure each batch size.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Untimed passes before measuring (allocator, cuDNN autotuning). Default 3.
    pub warmup_iters: usize,
    /// Measure at least this long... Default 1 s.
    pub min_time: Duration,
    /// ...and at least this many passes. Default 5.
    pub min_iters: usize,
    /// Stop after this many passes even if `min_time` has not passed. Default 100 000.
    pub max_iters: usize,
    /// Seed of the random weights. Default 0.
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions { warmup_iters: 3, min_time: Duration::from_secs(1), min_iters: 5, max_iters: 100_000, seed: 0 }
    }
}

/// One measured batch size.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BenchRow {
    pub batch: usize,
    /// Timed forward passes.
    pub iterations: usize,
    /// Wall time of the timed passes.
    pub seconds: f64,
    /// Positions evaluated per second (`batch * iterations / seconds`).
    pub evals_per_sec: f64,
    /// Mean wall time of one pass, milliseconds.
    pub ms_per_batch: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Net(#[from] NetError),
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// Builds a randomly initialised network of `config` x `shape` on `device` and measures
/// [`TorchEvaluator`] throughput (host input -> device -> host policy and WDL, the
/// same path self-play uses) for each batch size. Inputs are sparse 0/1 planes like real
/// encodings. Uses libtorch's current CPU thread setting.
pub fn bench_forward(
    config: &NetConfig,
    shape: NetShape,
    device: Device,
    precision: Precision,
    batch_sizes: &[usize],
    options: &BenchOptions,
) -> Result<Vec<BenchRow>, BenchError> {
    let net = Net::new(config, shape, options.seed, device)?;
    let evaluator = TorchEvaluator::new(&net, device, precision)?;
    drop(net);
    let mut rows = Vec::with_capacity(batch_sizes.len());
    let mut out = Evaluation::new();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for &batch in batch_sizes {
        let batch = batch.max(1);
        let inputs: Vec<f32> = (0..batch * shape.input_len())
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                if rng % 8 == 0 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        for _ in 0..options.warmup_iters {
            evaluator.evaluate_into(&inputs, batch, &mut out)?;
        }
        let start = Instant::now();
        let mut iterations = 0;
        loop {
            evaluator.evaluate_into(&inputs, batch, &mut out)?;
            iterations += 1;
            let enough = iterations >= options.min_iters && start.elapsed() >= options.min_time;
            if enough || iterations >= options.max_iters.max(1) {
                break;
            }
        }
        // The last copy to the host synchronises the device, so wall time is honest.
        let seconds = start.elapsed().as_secs_f64();
        rows.push(BenchRow {
            batch,
            iterations,
            seconds,
            evals_per_sec: (batch * iterations) as f64 / seconds,
            ms_per_batch: seconds * 1e3 / iterations as f64,
        });
    }
    Ok(rows)
}
