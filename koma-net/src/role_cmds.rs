//! `koma learner` and `koma worker`: the two roles of a run in a store, as separate
//! processes (thin wrappers over `trainer::roles`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::train_cmd::config_error;
use crate::BadInput;

#[derive(Args)]
pub struct LearnerArgs {
    /// The run: a folder, file://..., s3://bucket/prefix, gs://bucket/prefix.
    #[arg(long)]
    run: String,
    /// Config file. Required at the first start (it is written into the run, where the
    /// workers read it); later starts read the run's copy unless given again.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Start a new run from this network (checkpoint or model file from `koma export`)
    /// instead of fresh weights (its input planes must be the config's).
    #[arg(long)]
    init: Option<PathBuf>,
    #[command(flatten)]
    limits: crate::train_cmd::StopLimits,
    /// Local folder for checkpoints and TensorBoard files of a remote run (default: in the
    /// system's temporary folder).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Seconds between listings of new sample chunks.
    #[arg(long, default_value_t = 2.0)]
    poll_seconds: f64,
    /// Seconds to wait for the run while another learner holds it (its lease is given back
    /// when it stops, or expires 60 s after its last renewal); 0 refuses at once.
    #[arg(long, default_value_t = 0.0)]
    lease_wait: f64,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
}

pub fn learner(args: LearnerArgs) -> anyhow::Result<ExitCode> {
    if !(args.poll_seconds > 0.0 && args.poll_seconds.is_finite()) {
        return Err(BadInput("--poll-seconds must be positive".into()).into());
    }
    if !(args.lease_wait >= 0.0 && args.lease_wait <= 86_400.0) {
        return Err(BadInput("--lease-wait must be between 0 and 86400 seconds".into()).into());
    }
    let cfg = match &args.config {
        Some(p) => Some(trainer::TrainFileConfig::load(p).map_err(|e| BadInput(e.to_string()))?),
        None => None,
    };
    let files = trainer::roles::files::RunFiles::open(&args.run, args.cache.as_deref()).map_err(config_error)?;
    let stop = trainer::install_signal_handler();
    let opts = trainer::LearnerOptions {
        name: args.run.clone(),
        resume: true,
        init: args.init,
        max_minutes: args.limits.max_minutes,
        max_steps: args.limits.max_steps,
        progress: !args.quiet,
        poll: Duration::from_secs_f64(args.poll_seconds),
        stop: stop.clone(),
        lease_wait: Duration::from_secs_f64(args.lease_wait),
    };
    eprintln!("koma learner: run {} (Ctrl-C or SIGTERM saves and stops)", files.describe());
    let mut role = trainer::LearnerRole::open(files, cfg, opts).map_err(config_error)?;
    let outcome = role.run(&stop);
    let summary = role.finish(outcome)?;
    println!("{}", summary.to_string().replacen("koma train", "koma learner", 1));
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct WorkerArgs {
    /// The run: a folder, file://..., s3://bucket/prefix, gs://bucket/prefix.
    #[arg(long)]
    run: String,
    /// Torch device of self-play (overrides selfplay.device): cpu, cuda, cuda:N.
    #[arg(long)]
    device: Option<String>,
    /// Self-play threads (overrides selfplay.workers).
    #[arg(long)]
    threads: Option<usize>,
    /// Stop after this many games (default: until stopped).
    #[arg(long)]
    games: Option<u64>,
    /// This worker's id in chunk names and reports (default: <host>-<pid>).
    #[arg(long)]
    worker_id: Option<String>,
    /// Folder for chunks the store refuses, uploaded when it accepts writes again.
    #[arg(long)]
    spool: Option<PathBuf>,
    /// Download folder for the networks of a remote run.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Seconds between reads of models/latest.json.
    #[arg(long, default_value_t = 5.0)]
    poll_seconds: f64,
    /// Seconds between throughput reports (workers/<id>.json).
    #[arg(long, default_value_t = 30.0)]
    report_seconds: f64,
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let positive = |v: f64| v > 0.0 && v.is_finite();
    if !positive(args.poll_seconds) || !positive(args.report_seconds) || args.threads == Some(0) {
        return Err(
            BadInput("--poll-seconds and --report-seconds must be positive, --threads at least 1".into()).into()
        );
    }
    let opts = trainer::WorkerOptions {
        worker_id: args.worker_id,
        device: args.device,
        threads: args.threads,
        games: args.games,
        spool: args.spool,
        cache: args.cache,
        poll: Duration::from_secs_f64(args.poll_seconds),
        report_every: Duration::from_secs_f64(args.report_seconds),
    };
    let stop = trainer::install_signal_handler();
    let report = trainer::run_worker(&args.run, &opts, stop).map_err(config_error)?;
    println!("{report}");
    Ok(ExitCode::SUCCESS)
}
