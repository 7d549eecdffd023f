//! Forward-pass throughput, for `koma bench nn`.

use std::time::{Duration, Instant};

use serde::Serialize;
use tch::{Device, Kind, Tensor};

use super::device::Precision;
use super::torch_evaluator::{backend_error, TorchEvaluator};
use crate::network::net::{Kernels, Net, NetError};
use nn::inference::evaluation::Evaluation;
use nn::inference::evaluator::{EvalError, EvalPart, Evaluator};
use nn::inference::host_buffer::HostBuffer;
use nn::network::config::NetConfig;
use nn::network::shape::NetShape;

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
    /// The kernels to measure; `None`: [`Kernels::for_device`]'s. Default `None`.
    pub kernels: Option<Kernels>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            warmup_iters: 3,
            min_time: Duration::from_secs(1),
            min_iters: 5,
            max_iters: 100_000,
            seed: 0,
            kernels: None,
        }
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
    /// The forward pass alone on inputs already on the device (no host copies, no
    /// results handed back): positions per second and milliseconds per pass. The gap to
    /// the end-to-end figures is the data path's cost.
    pub device_evals_per_sec: f64,
    pub device_ms_per_batch: f64,
    /// The largest difference of the measured kernels' policy logits and WDL from the
    /// plain kernels' (same weights, inputs and precision); 0 when they are the plain ones.
    pub max_policy_diff: f64,
    pub max_wdl_diff: f64,
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
/// same path self-play uses) for each batch size, and beside it the forward pass alone
/// on inputs already on the device. Inputs are sparse 0/1 planes like real encodings.
/// Uses libtorch's current CPU thread setting.
pub fn bench_forward(
    config: &NetConfig,
    shape: NetShape,
    device: Device,
    precision: Precision,
    batch_sizes: &[usize],
    options: &BenchOptions,
) -> Result<Vec<BenchRow>, BenchError> {
    let net = Net::new(config, shape, options.seed, device)?;
    let kernels = match options.kernels {
        Some(k) => k,
        None => Kernels::for_device(device).map_err(|e| EvalError::Backend(e.to_string()))?,
    };
    let evaluator = TorchEvaluator::with_kernels(&net, device, precision, kernels)?;
    let plain = (kernels != Kernels::Plain)
        .then(|| TorchEvaluator::with_kernels(&net, device, precision, Kernels::Plain))
        .transpose()?;
    drop(net);
    let mut rows = Vec::with_capacity(batch_sizes.len());
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for &batch in batch_sizes {
        let batch = batch.max(1);
        let mut values = vec![0f32; batch * shape.input_len()];
        for x in values.iter_mut() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            *x = if rng % 8 == 0 { 1.0 } else { 0.0 };
        }
        // Pinned on CUDA and in the evaluator's plane kind, as the batcher's request
        // buffers are.
        let mut buffer = HostBuffer::new(evaluator.pinned_memory(), evaluator.input_kind());
        buffer.resize(values.len());
        buffer.planes_mut().copy_from_f32(&values);
        let mut out = Evaluation::new();
        out.accept_reduced_precision(true);
        let (iterations, seconds) = timed(options, || {
            evaluator.evaluate_parts(&mut [EvalPart { inputs: buffer.planes(), n: batch, out: &mut out }])
        })?;
        let s = shape;
        let xs = Tensor::f_from_slice(&values)
            .and_then(|t| t.f_view([batch as i64, s.input_planes as i64, s.board_height as i64, s.board_width as i64]))
            .and_then(|t| t.f_to_device(device))
            .and_then(|t| t.f_to_kind(evaluator.kind()))
            .map_err(backend_error)?;
        let (device_iterations, device_seconds) = timed(options, || evaluator.forward_on_device(&xs))?;
        let (max_policy_diff, max_wdl_diff) = match &plain {
            Some(plain) => max_diffs(&evaluator, plain, &values, batch)?,
            None => (0.0, 0.0),
        };
        rows.push(BenchRow {
            batch,
            iterations,
            seconds,
            evals_per_sec: (batch * iterations) as f64 / seconds,
            ms_per_batch: seconds * 1e3 / iterations as f64,
            device_evals_per_sec: (batch * device_iterations) as f64 / device_seconds,
            device_ms_per_batch: device_seconds * 1e3 / device_iterations as f64,
            max_policy_diff,
            max_wdl_diff,
        });
    }
    Ok(rows)
}

/// The largest differences of `a`'s policy logits and WDL from `b`'s on `values`.
fn max_diffs(a: &TorchEvaluator, b: &TorchEvaluator, values: &[f32], batch: usize) -> Result<(f64, f64), EvalError> {
    let (x, y) = (a.evaluate(values, batch)?, b.evaluate(values, batch)?);
    let diff = |p: &[f32], q: &[f32]| p.iter().zip(q).map(|(u, v)| (u - v).abs() as f64).fold(0.0, f64::max);
    let wdl = (0..batch).map(|i| diff(&x.wdl(i), &y.wdl(i))).fold(0.0, f64::max);
    Ok((diff(x.policy_all(), y.policy_all()), wdl))
}

/// Runs `pass` for the warm-up, then times it for `min_time` and `min_iters` (each pass
/// ends with the device finished: the results are on the host, or the device was waited
/// for). Returns (timed passes, seconds).
fn timed(options: &BenchOptions, mut pass: impl FnMut() -> Result<(), EvalError>) -> Result<(usize, f64), EvalError> {
    for _ in 0..options.warmup_iters {
        pass()?;
    }
    let start = Instant::now();
    let mut iterations = 0;
    loop {
        pass()?;
        iterations += 1;
        let enough = iterations >= options.min_iters && start.elapsed() >= options.min_time;
        if enough || iterations >= options.max_iters.max(1) {
            break;
        }
    }
    Ok((iterations, start.elapsed().as_secs_f64()))
}

/// The tensor kind's name as `koma bench nn` prints it.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Half => "f16",
        Kind::BFloat16 => "bf16",
        Kind::Float => "f32",
        _ => "other",
    }
}
