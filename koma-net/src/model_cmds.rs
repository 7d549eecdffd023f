//! `koma init`, `koma analyse` (old name `koma eval`), `koma export`, `koma bench nn`: the network on the
//! command line.

use anyhow::{Context, Result};
use clap::Args;
use koma_net::bad;
use model::encoding::Encoder;
use model::{tch, Expected, NetConfig, Network, Precision};
use rules::{Position, Variant};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The part of a config file the network needs: `variant` and `[model]` (the whole file
/// is checked, so that a typo fails every command alike).
fn load_network_section(path: &Path) -> Result<(Variant, NetConfig)> {
    let cfg = trainer::TrainFileConfig::load(path).map_err(|e| bad(e.to_string()))?;
    Ok((cfg.base.variant, cfg.base.model))
}

fn device(name: &str) -> Result<tch::Device> {
    model::parse_device(name).map_err(|e| bad(e.to_string()))
}

#[derive(Args)]
pub struct InitArgs {
    /// Config file (`variant` and the `[model]` table are used).
    #[arg(long)]
    config: PathBuf,
    /// Checkpoint to write (`<stem>.safetensors` + `<stem>.json`).
    #[arg(long)]
    out: PathBuf,
    /// Seed of the initial weights (same seed, same weights).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn init(args: InitArgs) -> Result<ExitCode> {
    let (variant, config) = load_network_section(&args.config)?;
    let (paths, meta) = model::init_checkpoint(variant, &config, args.seed, &args.out).map_err(|e| match e {
        model::InitError::Net(e) => bad(format!("{}: {e}", args.config.display())),
        save => anyhow::Error::new(save),
    })?;
    println!(
        "wrote {} ({} parameters, {} blocks x {} channels, variant {variant})",
        paths.meta.display(),
        meta.parameters,
        config.blocks,
        config.channels
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct AnalyseArgs {
    /// Checkpoint (`.json` or `.safetensors` path, or their common stem) or model file
    /// (`koma export`).
    #[arg(long)]
    checkpoint: PathBuf,
    /// Position to evaluate (default: the variant's start position).
    #[arg(long)]
    sfen: Option<String>,
    /// Moves (USI) played from the position first.
    #[arg(long, num_args = 1..)]
    moves: Vec<String>,
    /// How many moves to list.
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: String,
}

pub fn analyse(args: AnalyseArgs) -> Result<ExitCode> {
    let device = device(&args.device)?;
    let Network { evaluator, encoder, meta } =
        model::load_torch_network(&args.checkpoint, &Expected::any(), device, Precision::Auto)?;
    let meta = meta.expect("a loaded network has metadata");
    let variant = meta.variant;

    let mut pos = match &args.sfen {
        Some(s) => Position::from_sfen(variant, s).map_err(|e| bad(format!("bad SFEN '{s}': {e}")))?,
        None => Position::startpos(variant),
    };
    for (i, m) in args.moves.iter().enumerate() {
        pos.play_usi(m).map_err(|e| bad(format!("move {} ({m}): {e}", i + 1)))?;
    }
    let mut input = vec![0f32; encoder.input_len()];
    encoder.encode(&pos, &mut input);
    let out = evaluator.evaluate(&input, 1)?;
    let [w, d, l] = out.wdl(0);
    println!("checkpoint {} (step {}, variant {variant})", args.checkpoint.display(), meta.step);
    println!("position {}", pos.to_sfen());
    println!("wdl {w:.4} {d:.4} {l:.4} (side to move: {})", pos.side_to_move().name());

    // Softmax of the logits over the legal moves only.
    let logits = out.policy(0);
    let mut moves: Vec<(rules::Move, f32)> =
        pos.legal_moves().into_iter().map(|m| (m, logits[encoder.move_index(&pos, m)])).collect();
    let max = moves.iter().map(|m| m.1).fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = moves.iter().map(|m| (m.1 - max).exp()).sum();
    for m in &mut moves {
        m.1 = (m.1 - max).exp() / sum;
    }
    moves.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.to_usi().cmp(&b.0.to_usi())));
    for (m, p) in moves.iter().take(args.top) {
        println!("{:<10} {p:.4}", m.to_usi());
    }
    Ok(ExitCode::SUCCESS)
}

/// What `koma export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// koma's model file: one self-describing safetensors file that every koma loader takes.
    Model,
    /// An ONNX model (opset 17) for onnxruntime, TensorRT or DirectML: input `planes`,
    /// outputs `policy_logits` and `wdl` (data/FORMAT.md, "ONNX files"). koma does not load it.
    Onnx,
}

#[derive(Args)]
pub struct ExportArgs {
    /// Checkpoint (`<stem>`, `<stem>.json` or `<stem>.safetensors`) or model file.
    checkpoint: PathBuf,
    /// The file to write: with `--format model`, a model file (safetensors; name it
    /// `model-<variant>.safetensors` to put it next to `koma-usi` for `ModelFile=auto`);
    /// with `--format onnx`, an ONNX model (`.onnx` by convention).
    #[arg(short, long)]
    out: PathBuf,
    /// What to write.
    #[arg(long, value_enum, default_value_t = ExportFormat::Model)]
    format: ExportFormat,
}

/// `koma export`: one self-describing file (see data/FORMAT.md, "Model files" and "ONNX
/// files").
pub fn export(args: ExportArgs) -> Result<ExitCode> {
    let (path, bytes, meta, digest, what) = match args.format {
        ExportFormat::Model => {
            let e = model::export_model(&args.checkpoint, &args.out)?;
            (e.path, e.bytes, e.meta, e.tensors_sha256, "model file".to_string())
        }
        ExportFormat::Onnx => {
            let e = model::export_onnx(&args.checkpoint, &args.out)?;
            (e.path, e.bytes, e.meta, e.tensors_sha256, format!("ONNX model, opset {}", model::ONNX_OPSET))
        }
    };
    println!(
        "wrote {} ({} bytes, {what}): {} network, step {}, {} blocks x {} channels, {} parameters, tensors sha256 {}",
        path.display(),
        bytes,
        meta.variant,
        meta.step,
        meta.net.blocks,
        meta.net.channels,
        meta.parameters,
        digest
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct BenchNnArgs {
    /// Config file (`variant` and `[model]` give the network).
    #[arg(long)]
    config: PathBuf,
    /// Batch sizes, comma separated.
    #[arg(long, default_value = "1,16,64,256", value_delimiter = ',')]
    batch: Vec<usize>,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Inference precision: auto (f16 on CUDA, f32 on the CPU), f32, f16, bf16.
    #[arg(long, default_value = "auto")]
    precision: Precision,
    /// libtorch CPU threads (0: libtorch's default).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds to measure each batch size (end to end, then the device alone).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// plain, channels-last or cudnn-fused (default: KOMA_KERNELS, else cudnn-fused on
    /// CUDA and channels-last on the CPU). Other than plain, the last two columns give the largest
    /// difference of the policy logits and the WDL from the plain kernels' on the same inputs.
    #[arg(long)]
    kernels: Option<model::Kernels>,
}

pub fn bench_nn(args: BenchNnArgs) -> Result<ExitCode> {
    let (variant, config) = load_network_section(&args.config)?;
    let encoder = Encoder::for_net(variant, &config);
    let device = device(&args.device)?;
    model::set_torch_threads(args.threads, model::CpuShare::Whole);
    let kernels = match args.kernels {
        Some(k) => k,
        None => model::Kernels::for_device(device)?,
    };
    let options = model::BenchOptions {
        min_time: std::time::Duration::from_secs_f64(args.seconds),
        kernels: Some(kernels),
        ..Default::default()
    };
    let shape = encoder.net_shape();
    let kind = model::inference::bench::kind_name(args.precision.kind_for(device));
    eprintln!(
        "bench nn: {variant}, {} blocks x {} channels, input {}x{}x{}, policy {}, device {}, {kind}, {kernels} kernels, {} CPU threads",
        config.blocks,
        config.channels,
        shape.input_planes,
        shape.board_height,
        shape.board_width,
        encoder.policy_size(),
        args.device,
        tch::get_num_threads()
    );
    let rows = model::bench_forward(&config, shape, device, args.precision, &args.batch, &options)
        .context("benchmark failed")?;
    // End to end: host inputs in, results on the host (as self-play); device: the forward
    // pass alone on inputs already there.
    println!(
        "{:>6} {:>12} {:>10} {:>14} {:>12} {:>12} {:>10}",
        "batch", "evals/s", "ms/batch", "device evals/s", "device ms", "policy diff", "wdl diff"
    );
    for r in rows {
        println!(
            "{:>6} {:>12.1} {:>10.3} {:>14.1} {:>12.3} {:>12.2e} {:>10.2e}",
            r.batch,
            r.evals_per_sec,
            r.ms_per_batch,
            r.device_evals_per_sec,
            r.device_ms_per_batch,
            r.max_policy_diff,
            r.max_wdl_diff
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct BenchLearnArgs {
    /// Config file (`variant`, `[model]` and `[train]`: optimiser, precision, clipping).
    #[arg(long)]
    config: PathBuf,
    /// Batch sizes, comma separated (default: the config's train.batch_size).
    #[arg(long, value_delimiter = ',')]
    batch: Vec<usize>,
    /// cpu, cuda or cuda:N (default: train.device, else selfplay.device).
    #[arg(long)]
    device: Option<String>,
    /// libtorch CPU threads (0: libtorch's default).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Seconds to measure each batch size.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Untimed steps first (allocator, cuDNN tuning).
    #[arg(long, default_value_t = 5)]
    warmup: u64,
}

pub fn bench_learn(args: BenchLearnArgs) -> Result<ExitCode> {
    let cfg = trainer::TrainFileConfig::load(&args.config).map_err(|e| bad(e.to_string()))?;
    let name = args.device.clone().unwrap_or_else(|| {
        if cfg.train.device.is_empty() {
            cfg.base.selfplay.device.clone()
        } else {
            cfg.train.device.clone()
        }
    });
    let device = device(&name)?;
    model::set_torch_threads(args.threads, model::CpuShare::Whole);
    let batches = if args.batch.is_empty() { vec![cfg.train.batch_size] } else { args.batch.clone() };
    eprintln!(
        "bench learn: {}, {} blocks x {} channels, {:?}, precision {:?}, device {name}, {} CPU threads",
        cfg.base.variant,
        cfg.base.model.blocks,
        cfg.base.model.channels,
        cfg.train.optimizer,
        cfg.train.precision,
        tch::get_num_threads()
    );
    let rows = trainer::bench::bench_learn(&cfg, device, &batches, args.seconds, args.warmup)?;
    println!("{:>6} {:>10} {:>14} {:>16}", "batch", "steps/s", "positions/s", "encoded batch/s");
    for r in rows {
        println!(
            "{:>6} {:>10.2} {:>14.1} {:>16.1}",
            r.batch, r.steps_per_sec, r.positions_per_sec, r.encoded_batches_per_sec
        );
    }
    Ok(ExitCode::SUCCESS)
}
