//! `koma selfplay` (games -> sample chunks) and `koma bench selfplay` (network
//! evaluations per second inside self-play next to the raw forward pass): arguments and
//! printing; the work is the selfplay crate's (`selfplay::run`, `selfplay::bench`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use model::{CpuShare, Precision};
use selfplay::bench::{BenchReport, BenchRound, BenchSettings, TreeBenchRound};
use selfplay::run::{ChunkJob, ChunkSummary, EvaluatorSource, JobError};
use selfplay::{Progress, SelfplayFileConfig};

use koma_net::bad;

#[derive(Args)]
pub struct SelfplayArgs {
    /// Config file (TOML: variant, [model], [search], [selfplay]).
    #[arg(long)]
    config: PathBuf,
    /// Network checkpoint (`<stem>`, `<stem>.json` or `<stem>.safetensors`). Without
    /// it: a freshly initialised network of the config's [model] (generation 0).
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Use the uniform evaluator instead of a network (pure MCTS).
    #[arg(long, conflicts_with = "checkpoint")]
    uniform: bool,
    /// Games to play.
    #[arg(long)]
    games: u64,
    /// Folder for the sample chunks (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Override selfplay.device (cpu, cuda, cuda:N).
    #[arg(long)]
    device: Option<String>,
    /// Override selfplay.workers.
    #[arg(long)]
    workers: Option<usize>,
    /// Override selfplay.seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Seconds between updates of the speeds in the progress display.
    #[arg(long, default_value_t = 5.0)]
    progress_secs: f64,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
pub struct BenchSelfplayArgs {
    /// Config file (TOML: variant, [model], [search], [selfplay]).
    #[arg(long)]
    config: PathBuf,
    /// Network checkpoint; default: a freshly initialised network of the config's [model]
    /// (same speed).
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Override selfplay.device.
    #[arg(long)]
    device: Option<String>,
    /// Seconds of self-play measured in all (after the warm-ups); the raw forward pass
    /// gets as long.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// Seconds of self-play before measuring (each round).
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Self-play and the raw forward pass take turns this many times (`seconds` is
    /// split between the rounds).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Override selfplay.workers (a GPU-shaped layout: few workers, many games each).
    #[arg(long)]
    workers: Option<usize>,
    /// Override selfplay.games_per_worker.
    #[arg(long)]
    games_per_worker: Option<usize>,
    /// Override selfplay.max_batch (0: the positions of one group of every worker).
    #[arg(long)]
    max_batch: Option<usize>,
    /// Override selfplay.batches_in_flight (1: no double buffering).
    #[arg(long)]
    batches_in_flight: Option<usize>,
    /// Override selfplay.torch_threads (libtorch CPU threads of the forward passes).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Args)]
pub struct BenchTreeArgs {
    /// Config file (TOML: variant, [model], [search], [selfplay]); its simulations, games
    /// per worker and search settings are what is measured.
    #[arg(long)]
    config: PathBuf,
    /// Seconds measured in all (after the warm-ups).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Seconds before measuring (each round).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Rounds, each from the opening positions again (`seconds` is split between them).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Worker threads (default 1: the figure is per thread; the config's count is for
    /// its machine).
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Override selfplay.games_per_worker.
    #[arg(long)]
    games_per_worker: Option<usize>,
    /// Override selfplay.seed (default: the config's, else 1, so that runs repeat).
    #[arg(long)]
    seed: Option<u64>,
    /// Leaves a second alone, as self-play runs: no split by phase (its clock reads cost
    /// a few per cent of a leaf).
    #[arg(long)]
    no_phases: bool,
}

/// The config's self-play part and its inference precision (`[train] precision`).
fn load_config(path: &Path, device: Option<&String>) -> Result<(SelfplayFileConfig, Precision)> {
    // The whole file is checked ([train] too), so that a typo fails every command alike.
    let file = trainer::TrainFileConfig::load(path).map_err(|e| bad(e.to_string()))?;
    let precision = file.train.precision.inference();
    let mut cfg = file.base;
    if let Some(d) = device {
        cfg.selfplay.device = d.clone();
    }
    Ok((cfg, precision))
}

/// As training sets them (one thread per two cores on small machines), so that `koma
/// bench selfplay` measures what `koma train` runs.
fn set_threads(cfg: &SelfplayFileConfig) {
    model::set_torch_threads(cfg.selfplay.torch_threads, CpuShare::HalfOfSmall);
}

/// A job's error, as bad input (exit status 2) where the input was wrong.
fn job_error(e: JobError) -> anyhow::Error {
    if e.is_bad_input() {
        bad(e.to_string())
    } else {
        e.into()
    }
}

/// The note after the game count: the speeds so far.
fn progress_note(p: &Progress) -> String {
    format!(
        "positions/s {:.1}, evals/s {:.1}, mean batch {:.1}, mean game length {:.1}",
        p.positions_per_sec(),
        p.evals_per_sec(),
        p.mean_batch(),
        p.mean_game_length(),
    )
}

pub fn selfplay(args: SelfplayArgs) -> Result<ExitCode> {
    let (mut cfg, precision) = load_config(&args.config, args.device.as_ref())?;
    set_threads(&cfg);
    if let Some(w) = args.workers {
        cfg.selfplay.workers = w;
    }
    if let Some(s) = args.seed {
        cfg.selfplay.seed = s;
    }
    let openings = selfplay::run::openings(&cfg).map_err(job_error)?;
    let source = match (&args.checkpoint, args.uniform) {
        (_, true) => EvaluatorSource::Uniform,
        (Some(path), false) => EvaluatorSource::Network(path),
        (None, false) => EvaluatorSource::Fresh,
    };
    let eval = selfplay::run::evaluator(&cfg, precision, source).map_err(job_error)?;
    eprintln!(
        "koma selfplay: {} games of {}, {}, config {}",
        args.games,
        cfg.variant,
        eval.describe(),
        args.config.display()
    );
    let job = ChunkJob {
        games: args.games,
        out: args.out.clone(),
        progress_every: Duration::from_secs_f64(args.progress_secs.max(0.1)),
    };
    let shown = progress::Reporter::shown_if(!args.quiet, "selfplay", Some(args.games), "games");
    let summary = selfplay::run::play_to_chunks(
        &cfg,
        eval,
        &openings,
        &job,
        || shown.inc(1),
        |p| shown.set_message(progress_note(p)),
    );
    shown.finish();
    println!("{}", summary_line(&summary.map_err(job_error)?, &args.out));
    Ok(ExitCode::SUCCESS)
}

fn summary_line(s: &ChunkSummary, out: &Path) -> String {
    let p = &s.progress;
    format!(
        "selfplay: {} games, {} positions ({:.0}% full search), {:.1} positions/s, {:.1} evals/s, mean batch {:.1}, \
         mean game length {:.1}, sente {} / draw {} / gote {}, resigned {}, false resigns {}, \
         {} samples in {} chunks in {} (read back), {:.1} s",
        p.games_done,
        p.positions,
        100.0 * s.full_search_samples as f64 / p.samples.max(1) as f64,
        p.positions as f64 / s.seconds,
        s.batches.positions as f64 / s.seconds,
        s.batches.mean_batch(),
        p.mean_game_length(),
        s.sente_wins,
        s.draws,
        s.gote_wins,
        p.resigned,
        match p.false_resign_rate() {
            Some(r) => format!("{}/{} ({:.1}%)", p.false_resigns, p.resign_checks, 100.0 * r),
            None => "n/a".to_string(),
        },
        s.samples_written,
        s.chunks.len(),
        out.display(),
        s.seconds
    )
}

pub fn bench_selfplay(args: BenchSelfplayArgs) -> Result<ExitCode> {
    let (mut cfg, precision) = load_config(&args.config, args.device.as_ref())?;
    let sp = &mut cfg.selfplay;
    sp.workers = args.workers.unwrap_or(sp.workers);
    sp.games_per_worker = args.games_per_worker.unwrap_or(sp.games_per_worker);
    sp.max_batch = args.max_batch.unwrap_or(sp.max_batch);
    sp.batches_in_flight = args.batches_in_flight.unwrap_or(sp.batches_in_flight);
    sp.torch_threads = args.threads.unwrap_or(sp.torch_threads);
    sp.validate().map_err(|e| bad(e.to_string()))?;
    set_threads(&cfg);
    let rounds = args.rounds.max(1);
    let settings = BenchSettings { seconds: args.seconds, warmup: args.warmup, rounds };
    let max_batch = selfplay::run::batcher_config(&cfg).max_batch;
    let header = |eval: &dyn model::Evaluator| {
        println!(
            "bench selfplay: {} {}, workers {} x {} games, {} batches in flight each, max batch {}, \
             simulations {}/{}, {}, {} rounds",
            cfg.variant,
            eval.describe(),
            if cfg.selfplay.workers == 0 { "auto".to_string() } else { cfg.selfplay.workers.to_string() },
            cfg.selfplay.games_per_worker,
            cfg.selfplay.batches_in_flight,
            max_batch,
            cfg.selfplay.simulations_full,
            cfg.selfplay.simulations_cheap,
            if cfg.search.gumbel { "gumbel root" } else { "puct root" },
            rounds
        )
    };
    let report =
        selfplay::bench::bench_selfplay(&cfg, precision, args.checkpoint.as_deref(), settings, header, print_round)
            .map_err(job_error)?;
    print_report(&report);
    Ok(ExitCode::SUCCESS)
}

fn print_round(r: &BenchRound) {
    println!(
        "round {}: selfplay {:.1} evals/s (mean batch {:.1}, network busy {:.1}%), raw {:.1} evals/s at batch {}",
        r.round + 1,
        r.selfplay_evals_per_sec,
        r.mean_batch,
        100.0 * r.network_busy,
        r.raw_evals_per_sec,
        r.batch
    );
}

fn print_report(r: &BenchReport) {
    let batch = r.batch;
    println!(
        "selfplay: {:.1} evals/s, mean batch {:.1}, {:.1} positions/s, {:.1} forward passes/s",
        r.selfplay_evals_per_sec, r.mean_batch, r.positions_per_sec, r.forward_passes_per_sec
    );
    println!(
        "network busy {:.1}% of the self-play time (the rest it waited for the workers' tree work)",
        100.0 * r.network_busy
    );
    println!("raw nn (as bench nn): {:.1} evals/s at batch {batch}", r.raw_evals_per_sec);
    println!(
        "selfplay {:.1} evals/s vs raw {:.1} evals/s at batch {batch}: ratio {:.3}",
        r.selfplay_evals_per_sec,
        r.raw_evals_per_sec,
        r.ratio()
    );
}

pub fn bench_tree(args: BenchTreeArgs) -> Result<ExitCode> {
    let (mut cfg, _) = load_config(&args.config, None)?;
    let sp = &mut cfg.selfplay;
    sp.workers = args.workers;
    sp.games_per_worker = args.games_per_worker.unwrap_or(sp.games_per_worker);
    sp.seed = args.seed.unwrap_or(if sp.seed == 0 { 1 } else { sp.seed });
    // One group per batch, answered at once: the uniform evaluator never waits for more.
    sp.max_batch = 0;
    sp.validate().map_err(|e| bad(e.to_string()))?;
    let settings = BenchSettings { seconds: args.seconds, warmup: args.warmup, rounds: args.rounds.max(1) };
    println!(
        "bench tree: {} uniform evaluator, workers {} x {} games, {} batches in flight each, simulations {}/{} \
         (full {:.0}%), {}, leaf material mix {}, {} rounds",
        cfg.variant,
        cfg.selfplay.workers,
        cfg.selfplay.games_per_worker,
        cfg.selfplay.batches_in_flight,
        cfg.selfplay.simulations_full,
        cfg.selfplay.simulations_cheap,
        100.0 * cfg.selfplay.full_search_fraction,
        if cfg.search.gumbel { "gumbel root" } else { "puct root" },
        cfg.search.leaf_material_mix,
        settings.rounds
    );
    let phases = !args.no_phases;
    let total = selfplay::bench::bench_tree(&cfg, settings, phases, |i, r| {
        print_tree_round(&format!("round {}", i + 1), r, phases)
    })
    .map_err(job_error)?;
    print_tree_round("all", &total, phases);
    if phases {
        print_tree_phases(&total);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_tree_round(name: &str, r: &TreeBenchRound, phases: bool) {
    let t = &r.times.tree;
    let cpu = match (r.leaves_per_cpu_sec(), r.cpu_seconds) {
        (Some(l), Some(c)) => {
            format!(", {l:.0} per CPU second (on a core {:.1}% of the time)", 100.0 * c / r.thread_seconds().max(1e-9))
        }
        _ => String::new(),
    };
    let counts = if phases {
        format!(
            "{:.0} simulations/s, {:.1} positions/s; {} leaves, {} exact, {} collisions",
            r.simulations_per_thread_sec(),
            r.positions_per_thread_sec(),
            t.leaves,
            t.exact,
            t.collisions
        )
    } else {
        format!("{:.1} positions/s; {} leaves, phases not timed", r.positions_per_thread_sec(), t.leaves)
    };
    println!(
        "{name}: {:.0} leaves/s per thread{cpu} ({counts} in {:.2} s x {} threads)",
        r.leaves_per_thread_sec(),
        r.seconds,
        r.workers
    );
}

/// The split of the worker threads' time: per leaf evaluated and in per cent.
fn print_tree_phases(r: &TreeBenchRound) {
    let total = r.thread_seconds() * 1e9;
    let mut rows: Vec<(&str, u64)> = search::Phase::ALL.iter().map(|&p| (p.name(), r.times.tree.get(p))).collect();
    rows.push(("wait", r.times.wait));
    rows.push(("games", r.times.games));
    rows.push(("other", r.other_nanos()));
    let cells: Vec<String> = rows
        .iter()
        .map(|&(name, ns)| {
            format!("{name} {:.0} ns ({:.1}%)", r.nanos_per_leaf(ns), 100.0 * ns as f64 / total.max(1.0))
        })
        .collect();
    println!("per leaf: {:.0} ns = {}", total / r.times.tree.leaves.max(1) as f64, cells.join(", "));
}
