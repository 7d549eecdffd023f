//! `koma bench backends`: the same network files on libtorch's CPU evaluator and on the
//! portable backend (with each GEMM library it can use), side by side in one run, at the
//! batch sizes an engine hands over.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use model::cpu::GemmLib;
use model::{CpuEvaluator, Evaluation, Evaluator, Expected};

#[derive(Args)]
pub struct BenchBackendsArgs {
    /// Network files or checkpoints (default: the shipped models/{shogi,sho,dai}.safetensors).
    models: Vec<PathBuf>,
    /// Batch sizes, comma separated (the engine's default is 16 on the CPU).
    #[arg(long, default_value = "1,8,16,32", value_delimiter = ',')]
    batch: Vec<usize>,
    /// Seconds to measure each backend at each batch size.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// libtorch CPU threads (the engine's default on 2 cores is 1; the portable backend
    /// runs on the calling thread).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// Positions per second of `evaluator` on `inputs` (`batch` positions), measured for at
/// least `seconds` after three untimed passes.
fn evals_per_sec(evaluator: &dyn Evaluator, inputs: &[f32], batch: usize, seconds: f64) -> Result<f64> {
    let mut out = Evaluation::new();
    for _ in 0..3 {
        evaluator.evaluate_into(inputs, batch, &mut out)?;
    }
    let (start, mut passes) = (Instant::now(), 0usize);
    while passes < 5 || start.elapsed() < Duration::from_secs_f64(seconds) {
        evaluator.evaluate_into(inputs, batch, &mut out)?;
        passes += 1;
    }
    Ok((passes * batch) as f64 / start.elapsed().as_secs_f64())
}

/// Sparse 0/1 planes, as real encodings are (the forward pass's cost does not depend on
/// the values).
fn sparse_inputs(len: usize) -> Vec<f32> {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
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
        .collect()
}

pub fn bench_backends(args: BenchBackendsArgs) -> Result<ExitCode> {
    let models = match args.models.is_empty() {
        true => ["shogi", "sho", "dai"].iter().map(|v| PathBuf::from(format!("models/{v}.safetensors"))).collect(),
        false => args.models,
    };
    model::set_torch_threads(args.threads, model::CpuShare::Whole);
    eprintln!("bench backends: libtorch f32 on the CPU with {} threads; the portable backend on one", args.threads);
    println!(
        "{:<8} {:>5} {:>12} {:>12} {:>15} {:>8}",
        "network", "batch", "torch ev/s", "cpu ev/s", "cpu (mm) ev/s", "cpu/torch"
    );
    for path in &models {
        let file = model::read_network_file(path, &Expected::any()).with_context(|| path.display().to_string())?;
        let torch: Arc<dyn Evaluator> = (model::TORCH_BACKEND.load)(&file, "cpu")?;
        let gemm = CpuEvaluator::with_gemm(&file, GemmLib::Gemm)?;
        let mm = CpuEvaluator::with_gemm(&file, GemmLib::MatrixMultiply)?;
        let name = file.meta.variant.name();
        for &batch in &args.batch {
            let batch = batch.max(1);
            let inputs = sparse_inputs(batch * file.encoder.input_len());
            let t = evals_per_sec(torch.as_ref(), &inputs, batch, args.seconds)?;
            let g = evals_per_sec(&gemm, &inputs, batch, args.seconds)?;
            let m = evals_per_sec(&mm, &inputs, batch, args.seconds)?;
            println!("{name:<8} {batch:>5} {t:>12.0} {g:>12.0} {m:>15.0} {:>8.2}", g.max(m) / t);
        }
    }
    Ok(ExitCode::SUCCESS)
}
