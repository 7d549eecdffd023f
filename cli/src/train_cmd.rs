//! `koma train`, `koma learn`, `koma evaluate`: thin wrappers over the `trainer` crate.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use crate::BadInput;

#[derive(Args)]
pub struct TrainArgs {
    /// Config file (TOML: variant, [model], [search], [selfplay], [train]).
    #[arg(long)]
    config: PathBuf,
    /// Run name: everything goes to <runs-dir>/<name>/. Default: the date and time.
    #[arg(long)]
    run: Option<String>,
    /// Folder of the runs.
    #[arg(long, default_value = "runs")]
    runs_dir: PathBuf,
    /// Continue the run from its last checkpoint.
    #[arg(long)]
    resume: bool,
    /// Stop after this many minutes (overrides train.max_minutes; 0 = no limit).
    #[arg(long)]
    max_minutes: Option<f64>,
    /// Stop after this many optimiser steps (overrides train.max_steps; 0 = no limit).
    #[arg(long)]
    max_steps: Option<u64>,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
    /// One self-play worker per device, e.g. `cuda:0,cuda:1` (default: selfplay.device);
    /// the learner uses train.device (default: the first self-play device).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<String>,
}

pub(crate) fn default_run_name() -> String {
    // UTC date and time without a date library: days since the epoch to a civil date.
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

pub(crate) fn config_error(e: trainer::TrainError) -> anyhow::Error {
    match e {
        trainer::TrainError::Config(c) => BadInput(c.to_string()).into(),
        trainer::TrainError::Run(m) => BadInput(m).into(),
        trainer::TrainError::Device(d) => BadInput(d.to_string()).into(),
        trainer::TrainError::Store(e @ (store::StoreError::BadUrl { .. } | store::StoreError::BadKey { .. })) => {
            BadInput(e.to_string()).into()
        }
        other => anyhow::Error::new(other),
    }
}

pub fn train(args: TrainArgs) -> anyhow::Result<ExitCode> {
    let run = args.run.clone().unwrap_or_else(default_run_name);
    let opts = trainer::TrainOptions {
        config: args.config,
        run: run.clone(),
        runs_dir: args.runs_dir.clone(),
        resume: args.resume,
        max_minutes: args.max_minutes,
        max_steps: args.max_steps,
        progress: !args.quiet,
        devices: args.devices,
    };
    let stop = trainer::install_signal_handler();
    eprintln!(
        "koma train: run `{run}` in {} (TensorBoard: scripts/tensorboard.sh {}; Ctrl-C saves and stops)",
        args.runs_dir.join(&run).display(),
        args.runs_dir.join(&run).join("tb").display()
    );
    let summary = trainer::train(&opts, stop).map_err(config_error)?;
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct LearnArgs {
    /// Config file ([model] and [train] are used).
    #[arg(long)]
    config: PathBuf,
    /// Record files or folders (.usi/.sfen one game a line, .kif/.kifu, .ki2, .csa).
    #[arg(long, required = true, num_args = 1..)]
    records: Vec<PathBuf>,
    /// Run name (output in <runs-dir>/<name>/). Default: learn-<date>.
    #[arg(long)]
    run: Option<String>,
    #[arg(long, default_value = "runs")]
    runs_dir: PathBuf,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 1.0)]
    epochs: f64,
    /// Start from this checkpoint.
    #[arg(long)]
    init: Option<PathBuf>,
    /// Share of games held out for validation.
    #[arg(long, default_value_t = 0.05)]
    validation: f64,
    #[arg(long)]
    quiet: bool,
}

pub fn learn(args: LearnArgs) -> anyhow::Result<ExitCode> {
    if !(args.epochs > 0.0) || !(0.0..1.0).contains(&args.validation) {
        return Err(BadInput("--epochs must be positive and --validation in [0, 1)".into()).into());
    }
    let run = args.run.clone().unwrap_or_else(|| format!("learn-{}", default_run_name()));
    let opts = trainer::LearnOptions {
        config: args.config,
        records: args.records,
        run,
        runs_dir: args.runs_dir,
        epochs: args.epochs,
        init: args.init,
        validation: args.validation,
        progress: !args.quiet,
    };
    let stop = trainer::install_signal_handler();
    let s = trainer::learn(&opts, stop).map_err(config_error)?;
    for p in &s.skipped_files {
        eprintln!("koma learn: skipped: {p}");
    }
    let val = s
        .validation
        .map(|v| {
            format!(
                ", validation policy loss {:.3} accuracy {:.3} value loss {:.3}",
                v.policy_loss, v.policy_accuracy, v.value_loss
            )
        })
        .unwrap_or_default();
    println!(
        "koma learn: {} games, {} positions, {} steps{val}; checkpoint {}",
        s.games,
        s.positions,
        s.steps,
        s.checkpoint.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct EvaluateArgs {
    /// Checkpoint (<stem>, <stem>.json or <stem>.safetensors).
    #[arg(long)]
    checkpoint: PathBuf,
    /// random, greedy, or a path to another checkpoint.
    #[arg(long, default_value = "random")]
    opponent: String,
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Simulations per move of the network (1 = raw policy).
    #[arg(long, default_value_t = 32)]
    simulations: u32,
    /// Games longer than this are draws.
    #[arg(long, default_value_t = 256)]
    max_plies: u32,
    /// Random plies at the start of each pair of games.
    #[arg(long, default_value_t = 2)]
    random_plies: u32,
    /// Config whose [search] settings the network's search uses (default: built-in
    /// defaults with a Gumbel root).
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long, default_value = "cpu")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn evaluate(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    let device = model::parse_device(&args.device).map_err(|e| BadInput(e.to_string()))?;
    trainer::run::set_torch_threads(0);
    let (ours, meta) = trainer::run::checkpoint_evaluator(&args.checkpoint, device)
        .with_context(|| format!("loading {}", args.checkpoint.display()))?;
    let variant: rules::Variant =
        meta.variant.parse().map_err(|_| BadInput(format!("checkpoint variant `{}` is unknown", meta.variant)))?;
    let search = match &args.config {
        Some(p) => trainer::TrainFileConfig::load(p).map_err(|e| BadInput(e.to_string()))?.base.search,
        None => search::SearchConfig { gumbel: true, gumbel_m: 8, ..Default::default() },
    };
    let opponent = match args.opponent.as_str() {
        "random" | "greedy" => trainer::Opponent::baseline(&args.opponent).expect("known baseline"),
        path => {
            let (ev, _) = trainer::run::checkpoint_evaluator(std::path::Path::new(path), device)
                .with_context(|| format!("loading opponent {path}"))?;
            trainer::Opponent::Net(ev)
        }
    };
    let settings = trainer::MatchSettings {
        games: args.games,
        simulations: args.simulations,
        max_plies: args.max_plies,
        random_plies: args.random_plies,
        search,
        seed: args.seed,
    };
    let t = std::time::Instant::now();
    let r = trainer::play_match(variant, ours.as_ref(), opponent, &settings);
    let _ = Arc::strong_count(&ours);
    println!(
        "koma evaluate: {} vs {}: {} games, +{} ={} -{}, score {:.3}, Elo {:+.0}, mean length {:.0} plies, {:.0} s",
        args.checkpoint.display(),
        args.opponent,
        r.games(),
        r.wins,
        r.draws,
        r.losses,
        r.score(),
        r.elo(),
        r.plies as f64 / r.games().max(1) as f64,
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
