//! `koma train`, `koma learn`, `koma evaluate`: thin wrappers over the `trainer` crate.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::BadInput;

/// When a learning run stops by itself (`koma train`, `koma learner`).
#[derive(Args)]
pub struct StopLimits {
    /// Stop after this many minutes (overrides train.max_minutes; 0 = no limit).
    #[arg(long)]
    pub max_minutes: Option<f64>,
    /// Stop after this many optimiser steps (overrides train.max_steps; 0 = no limit).
    #[arg(long)]
    pub max_steps: Option<u64>,
}

#[derive(Args)]
pub struct TrainArgs {
    /// Config file (TOML: variant, [model], [search], [selfplay], [train], [eval]).
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
    /// Start the new run from this network (checkpoint or model file from `koma export`)
    /// instead of fresh weights (its architecture; its input planes must be the config's).
    #[arg(long, conflicts_with = "resume")]
    init: Option<PathBuf>,
    #[command(flatten)]
    limits: StopLimits,
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
    if e.is_bad_input() {
        BadInput(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

pub fn train(args: TrainArgs) -> anyhow::Result<ExitCode> {
    let run = args.run.clone().unwrap_or_else(default_run_name);
    // A broken config is refused before the run is announced.
    let config =
        trainer::TrainFileConfig::load(&args.config).map_err(|e| config_error(trainer::TrainError::Config(e)))?;
    let opts = trainer::TrainOptions {
        config,
        run: run.clone(),
        runs_dir: args.runs_dir.clone(),
        resume: args.resume,
        init: args.init,
        max_minutes: args.limits.max_minutes,
        max_steps: args.limits.max_steps,
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
    /// Inputs: files or folders of sample chunks (.chunk: self-play, koma gen), hcpe/hcpe3,
    /// YaneuraOu's psv (.psv; a .bin file named here, not in a folder), game records
    /// (.usi/.sfen one game a line, .kif/.kifu, .ki2, .csa).
    #[arg(long, required = true, num_args = 1..)]
    records: Vec<PathBuf>,
    /// Run name (output in <runs-dir>/<name>/). Default: learn-<date>.
    #[arg(long)]
    run: Option<String>,
    #[arg(long, default_value = "runs")]
    runs_dir: PathBuf,
    /// Passes over the training positions. 0: train nothing; score the --init network on
    /// every position of the inputs (policy loss, agreement with the recorded moves, value
    /// loss against the results).
    #[arg(long, default_value_t = 1.0)]
    epochs: f64,
    /// Start from this checkpoint or model file (koma export).
    #[arg(long)]
    init: Option<PathBuf>,
    /// Share of games held out for validation.
    #[arg(long, default_value_t = 0.05)]
    validation: f64,
    #[arg(long)]
    quiet: bool,
}

pub fn learn(args: LearnArgs) -> anyhow::Result<ExitCode> {
    let valid = args.epochs >= 0.0 && (0.0..1.0).contains(&args.validation);
    if !valid {
        return Err(BadInput("--epochs must be 0 or more and --validation in [0, 1)".into()).into());
    }
    if args.epochs == 0.0 {
        return score(args);
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
        "koma learn: {} positions in {} groups (games, or runs of hcpe and psv records), {} steps{val}; checkpoint {}",
        s.positions,
        s.groups,
        s.steps,
        s.checkpoint.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `koma learn --epochs 0`: the --init network scored on all the inputs' positions.
fn score(args: LearnArgs) -> anyhow::Result<ExitCode> {
    let Some(network) = args.init.clone() else {
        return Err(BadInput("--epochs 0 scores a network: name it with --init".into()).into());
    };
    let opts = trainer::LearnOptions {
        config: args.config,
        records: args.records,
        run: String::new(),
        runs_dir: args.runs_dir,
        epochs: 0.0,
        init: args.init,
        validation: 0.0,
        progress: !args.quiet,
    };
    let s = trainer::score(&opts, &network).map_err(config_error)?;
    for p in &s.skipped_files {
        eprintln!("koma learn: skipped: {p}");
    }
    let v = &s.stats;
    println!(
        "koma learn: {} scored on {} positions in {} groups: policy loss {:.4} accuracy {:.4}, value loss {:.4} \
         mse {:.4}",
        network.display(),
        s.positions,
        s.groups,
        v.policy_loss,
        v.policy_accuracy,
        v.value_loss,
        v.value_mse
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct EvaluateArgs {
    /// Checkpoint (<stem>, <stem>.json or <stem>.safetensors) or model file (koma export).
    #[arg(long, required_unless_present = "run")]
    checkpoint: Option<PathBuf>,
    /// A run folder instead: its checkpoints of eval.at_end_points, evaluated as `koma
    /// train` does at its end (its config's [eval], or --config's), recorded in its
    /// eval.jsonl, TensorBoard and elo.png. The match flags below are then the config's.
    #[arg(long, conflicts_with = "checkpoint")]
    run: Option<PathBuf>,
    /// With --run: checkpoints to evaluate, spread over the run (default: eval.at_end_points).
    #[arg(long, requires = "run", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    points: Option<usize>,
    /// random, greedy, a rung of the ladder (fsf1, gnushogi1, ...: arena/ladder.toml; the
    /// result is then also a ladder Elo), an arena player NAME=SPEC, or a path to another
    /// checkpoint or model file.
    #[arg(long, default_value = "random")]
    opponent: String,
    /// Games to play, at least 1.
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    games: usize,
    /// Simulations per move of the network (1 = raw policy).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..))]
    simulations: u32,
    /// Leaves per network evaluation of one game's search (virtual loss between them).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    batch_size: usize,
    /// Games at once (their leaves share forward passes); 0 = all.
    #[arg(long, default_value_t = 0)]
    concurrency: usize,
    /// Games longer than this are draws (at least 1).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    max_plies: u32,
    /// Random plies at the start of each pair of games (without --openings).
    #[arg(long, default_value_t = 2)]
    random_plies: u32,
    /// Opening file (the format of `koma arena --openings`) instead of random plies.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Config whose network this is: it plays as the config's in-training evaluation
    /// plays (`eval.search`: by default the engine's search with the config's leaf
    /// material; `selfplay`, its `[search]` table, where a Gumbel root is refused). With
    /// --run, the config whose [eval] and [search] evaluate the run (default: the run's).
    #[arg(long, conflicts_with = "engine_search")]
    config: Option<PathBuf>,
    /// Search as the engine does (PUCT with the built-in defaults, as `koma-usi` and the
    /// in-training evaluation's `[eval]` `search = "engine"`); the default without --config.
    #[arg(long)]
    engine_search: bool,
    #[arg(long, default_value = "cpu")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
}

pub fn evaluate(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    let device = model::parse_device(&args.device).map_err(|e| BadInput(e.to_string()))?;
    model::set_torch_threads(0, model::CpuShare::HalfOfSmall);
    let Some(checkpoint) = args.checkpoint.clone() else { return evaluate_run(&args, device) };
    let ours = model::load_torch_network(&checkpoint, &model::Expected::any(), device, model::Precision::Auto)?;
    let variant = ours.variant();
    let ours = arena::koma_player::KomaNetwork::from_network(ours);
    // A config's network plays as its in-training evaluation plays it (`eval.search`).
    let search = match &args.config {
        Some(p) => {
            let cfg = trainer::TrainFileConfig::load(p).map_err(|e| BadInput(e.to_string()))?;
            trainer::evaluation::eval_search(&cfg.eval, &cfg.base.search)
        }
        None => search::SearchConfig::for_play(),
    };
    // The network plays with the engine's search (PUCT root): a Gumbel root is refused.
    let koma = arena::koma_player::KomaConfig { search: search.clone(), ..Default::default() };
    koma.check().map_err(|e| BadInput(e.to_string()))?;
    let ladder = arena::Ladder::shipped();
    let (opponent, ladder_elo) = match arena::network_match::parse_player(&args.opponent, &ladder) {
        // The ladder's ratings hold in its own variant only.
        Ok((spec, elo)) => (arena::network_match::Opponent::Player(spec), elo.filter(|_| ladder.variant == variant)),
        // Not a player: a checkpoint or model file.
        Err(_) if model::locate_model(&args.opponent).is_ok() => {
            let path = std::path::Path::new(&args.opponent);
            let net = arena::koma_player::KomaNetwork::load_on(path, device, variant)
                .map_err(anyhow::Error::msg)
                .context("loading the opponent")?;
            (arena::network_match::Opponent::Network(net), None)
        }
        Err(e) => return Err(BadInput(e.to_string()).into()),
    };
    let openings = match &args.openings {
        Some(p) => arena::load_openings(variant, p).map_err(|e| BadInput(e.to_string()))?,
        None => arena::network_match::random_openings(variant, args.games.div_ceil(2), args.random_plies, args.seed),
    };
    let workdir = std::env::temp_dir().join(format!("koma-evaluate-{}", std::process::id()));
    std::fs::create_dir_all(&workdir).with_context(|| workdir.display().to_string())?;
    let settings = arena::network_match::MatchSettings {
        games: args.games,
        simulations: args.simulations,
        batch_size: args.batch_size,
        concurrency: args.concurrency,
        max_plies: args.max_plies,
        search,
        openings,
        seed: args.seed,
        workdir: workdir.clone(),
        stop: Some(trainer::install_signal_handler()),
    };
    let t = std::time::Instant::now();
    let label = format!("evaluate vs {}", args.opponent);
    let games = progress::Reporter::shown_if(!args.quiet, &label, Some(args.games as u64), "games");
    let arena::network_match::MatchOutcome { pair: r, batches } =
        arena::network_match::play_match_observed(variant, &ours, &opponent, &settings, &mut |r| {
            let w = &r.wdl;
            games.set_message(format!("+{} ={} -{}, score {:.3}", w.wins, w.draws, w.losses, w.score()));
            games.set_position(w.games() as u64);
        });
    games.finish();
    let _ = std::fs::remove_dir_all(&workdir);
    let w = r.wdl;
    let (lo, hi) = w.elo_interval();
    let ladder_text = match ladder_elo {
        Some(e) => {
            let p = arena::Placement::against(e, &w);
            format!(", ladder Elo {:+.0} [{:+.0}, {:+.0}]", p.elo, p.low, p.high)
        }
        None => String::new(),
    };
    println!(
        "koma evaluate: {} vs {}: {} games, +{} ={} -{}, score {:.3}, Elo {:+.0} [{:+.0}, {:+.0}], LOS {:.1}%{ladder_text}, \
         mean length {:.0} plies, {:.0} s, {:.1} positions per forward pass",
        checkpoint.display(),
        args.opponent,
        w.games(),
        w.wins,
        w.draws,
        w.losses,
        w.score(),
        w.elo(),
        lo,
        hi,
        100.0 * w.los(),
        r.mean_plies(),
        t.elapsed().as_secs_f64(),
        batches.mean_batch()
    );
    Ok(ExitCode::SUCCESS)
}

/// `koma evaluate --run DIR`: the run's course, as `koma train`'s `eval.at_end` plays it.
fn evaluate_run(args: &EvaluateArgs, device: model::tch::Device) -> anyhow::Result<ExitCode> {
    let run_dir = args.run.clone().expect("--run or --checkpoint");
    let config_path = args.config.clone().unwrap_or_else(|| run_dir.join(dataio::run_layout::CONFIG));
    let mut config =
        trainer::TrainFileConfig::load(&config_path).map_err(|e| config_error(trainer::TrainError::Config(e)))?;
    if let Some(points) = args.points {
        config.eval.at_end_points = points;
    }
    let opts = trainer::CourseOptions {
        run_dir: run_dir.clone(),
        config,
        device,
        seed: args.seed,
        progress: !args.quiet,
        stop: trainer::install_signal_handler(),
    };
    let reports =
        trainer::evaluate_course(&opts, &mut |line| eprintln!("koma evaluate: {line}")).map_err(config_error)?;
    let ladder = trainer::evaluation::chart::ladder_by_step(&run_dir.join(dataio::run_layout::EVAL_LOG));
    let rated: Vec<String> =
        ladder.iter().map(|(step, p)| format!("{step} {}", trainer::evaluation::chart::placement_text(p))).collect();
    println!(
        "koma evaluate: {}: evaluated {} of its checkpoints; ladder Elo by step: {}; plot {}",
        run_dir.display(),
        reports.len(),
        if rated.is_empty() { "none".to_string() } else { rated.join(", ") },
        run_dir.join("elo.png").display()
    );
    Ok(ExitCode::SUCCESS)
}
