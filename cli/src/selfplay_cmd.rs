//! `koma selfplay` (games -> sample chunks) and `koma bench selfplay` (network
//! evaluations per second inside self-play next to the raw forward pass).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use dataio::ChunkWriter;
use model::encoding::Encoder;
use model::{Batcher, BatcherConfig, Evaluator, Precision, TorchEvaluator, UniformEvaluator};
use selfplay::EncoderLabels;
use selfplay::{run_selfplay, Openings, Progress, RunOptions, SelfplayFileConfig};

use koma_cli::bad;

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

/// The config's self-play part and its inference precision (`[train] precision`).
fn load_config(path: &Path, device: Option<&String>) -> Result<(SelfplayFileConfig, Precision)> {
    // The whole file is checked ([train] too), so that a typo fails every command alike.
    let file = trainer::TrainFileConfig::load(path).map_err(|e| bad(e.to_string()))?;
    let precision = file.train.precision.inference();
    let mut cfg = file.base;
    if let Some(d) = device {
        cfg.selfplay.device = d.clone();
    }
    // As training sets them (one thread per two cores on small machines), so that `koma
    // bench selfplay` measures what `koma train` runs.
    trainer::set_torch_threads(cfg.selfplay.torch_threads);
    Ok((cfg, precision))
}

/// The evaluator: a checkpoint, the uniform evaluator, or a fresh network.
fn evaluator(
    cfg: &SelfplayFileConfig,
    precision: Precision,
    checkpoint: Option<&Path>,
    uniform: bool,
) -> Result<Arc<dyn Evaluator>> {
    let enc = Encoder::for_net(cfg.variant, &cfg.model);
    let shape = enc.net_shape();
    if uniform {
        return Ok(Arc::new(UniformEvaluator::new(shape)));
    }
    let device = model::parse_device(&cfg.selfplay.device).map_err(|e| bad(e.to_string()))?;
    if let Some(path) = checkpoint {
        // The workers encode positions for the config's [model]: the checkpoint must read
        // the same planes.
        let expected = model::Expected::variant(cfg.variant).with_shape(shape);
        let network = model::Network::load(path, &expected, device, precision).map_err(|e| bad(e.to_string()))?;
        return Ok(network.evaluator);
    }
    let net = model::Net::new(&cfg.model, shape, cfg.selfplay.seed, device).context("building the network")?;
    Ok(Arc::new(TorchEvaluator::new(&net, device, precision).context("preparing the network")?))
}

fn batcher_config(cfg: &SelfplayFileConfig) -> BatcherConfig {
    BatcherConfig {
        max_batch: cfg.selfplay.effective_max_batch(),
        max_wait: Duration::from_micros(cfg.selfplay.max_wait_us),
        thread_name: "koma-batcher".to_string(),
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
    if let Some(w) = args.workers {
        cfg.selfplay.workers = w;
    }
    if let Some(s) = args.seed {
        cfg.selfplay.seed = s;
    }
    let openings = match &cfg.selfplay.opening_file {
        Some(f) => Openings::load(cfg.variant, Path::new(f)).map_err(|e| bad(e.to_string()))?,
        None => Openings::startpos(cfg.variant),
    };
    let eval = evaluator(&cfg, precision, args.checkpoint.as_deref(), args.uniform)?;
    eprintln!(
        "koma selfplay: {} games of {}, {}, config {}",
        args.games,
        cfg.variant,
        eval.describe(),
        args.config.display()
    );
    let batcher = Batcher::spawn(eval, batcher_config(&cfg));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let prefix = format!("sp-{now}-{}", std::process::id());
    let mut writer = ChunkWriter::new(&args.out, &prefix, cfg.variant, &EncoderLabels, cfg.selfplay.samples_per_chunk)?;
    let mut write_error = None;
    let (mut wins, mut draws, mut losses) = (0u64, 0u64, 0u64);
    let mut full = 0u64;
    let opts = RunOptions {
        games: args.games,
        stop: Arc::new(Default::default()),
        progress_every: Duration::from_secs_f64(args.progress_secs.max(0.1)),
    };
    let stop = opts.stop.clone();
    let shown = progress::Reporter::shown_if(!args.quiet, "selfplay", Some(args.games), "games");
    let started = Instant::now();
    let progress = run_selfplay(
        &cfg,
        batcher.handle(),
        &openings,
        &opts,
        |g| {
            match g.end.winner {
                Some(rules::Color::Sente) => wins += 1,
                Some(rules::Color::Gote) => losses += 1,
                None => draws += 1,
            }
            full += g.samples.iter().filter(|s| s.full_search).count() as u64;
            shown.inc(1);
            if write_error.is_none() {
                if let Err(e) = writer.extend(g.samples) {
                    write_error = Some(e);
                    stop.store(true, Ordering::Relaxed);
                }
            }
        },
        |p| shown.set_message(progress_note(p)),
    )?;
    shown.finish();
    if let Some(e) = write_error {
        return Err(e.into());
    }
    writer.flush()?;
    let stats = batcher.shutdown();
    // Read back what was written: a chunk the learner could not load fails the run here.
    let mut read_back = 0u64;
    for f in writer.files_written() {
        read_back += dataio::read_chunk_expect(f, cfg.variant, &EncoderLabels)?.samples.len() as u64;
    }
    anyhow::ensure!(
        read_back == writer.samples_written(),
        "read back {read_back} samples, wrote {}",
        writer.samples_written()
    );
    let secs = started.elapsed().as_secs_f64();
    println!(
        "selfplay: {} games, {} positions ({:.0}% full search), {:.1} positions/s, {:.1} evals/s, mean batch {:.1}, \
         mean game length {:.1}, sente {wins} / draw {draws} / gote {losses}, resigned {}, false resigns {}, \
         {} samples in {} chunks in {} (read back), {:.1} s",
        progress.games_done,
        progress.positions,
        100.0 * full as f64 / progress.samples.max(1) as f64,
        progress.positions as f64 / secs,
        stats.positions as f64 / secs,
        stats.mean_batch(),
        progress.mean_game_length(),
        progress.resigned,
        match progress.false_resign_rate() {
            Some(r) => format!("{}/{} ({:.1}%)", progress.false_resigns, progress.resign_checks, 100.0 * r),
            None => "n/a".to_string(),
        },
        writer.samples_written(),
        writer.files_written().len(),
        args.out.display(),
        secs
    );
    Ok(ExitCode::SUCCESS)
}

pub fn bench_selfplay(args: BenchSelfplayArgs) -> Result<ExitCode> {
    let (mut cfg, precision) = load_config(&args.config, args.device.as_ref())?;
    let sp = &mut cfg.selfplay;
    sp.workers = args.workers.unwrap_or(sp.workers);
    sp.games_per_worker = args.games_per_worker.unwrap_or(sp.games_per_worker);
    sp.max_batch = args.max_batch.unwrap_or(sp.max_batch);
    sp.batches_in_flight = args.batches_in_flight.unwrap_or(sp.batches_in_flight);
    if let Some(t) = args.threads {
        sp.torch_threads = t;
        if t > 0 {
            model::tch::set_num_threads(t as i32);
        }
    }
    sp.validate().map_err(|e| bad(e.to_string()))?;
    let bcfg = batcher_config(&cfg);
    let rounds = args.rounds.max(1);
    let openings = match &cfg.selfplay.opening_file {
        Some(f) => Openings::load(cfg.variant, Path::new(f)).map_err(|e| bad(e.to_string()))?,
        None => Openings::startpos(cfg.variant),
    };
    let device = model::parse_device(&cfg.selfplay.device).map_err(|e| bad(e.to_string()))?;
    let shape = Encoder::for_net(cfg.variant, &cfg.model).net_shape();
    let per_round = Duration::from_secs_f64((args.seconds / rounds as f64).max(0.5));
    let warmup = Duration::from_secs_f64(args.warmup.max(0.0));
    // Self-play and the raw forward pass take turns, so that a load that changes over
    // time (other processes) biases both alike.
    let (mut sp_evals, mut sp_secs, mut sp_passes, mut sp_positions) = (0f64, 0f64, 0f64, 0f64);
    let (mut raw_evals, mut raw_secs) = (0f64, 0f64);
    // Seconds the batcher spent in forward passes: the share of time the network had work.
    let mut sp_busy = 0f64;
    let mut batch = 0usize;
    for round in 0..rounds {
        let eval = evaluator(&cfg, precision, args.checkpoint.as_deref(), false)?;
        if round == 0 {
            println!(
                "bench selfplay: {} {}, workers {} x {} games, {} batches in flight each, max batch {}, \
                 simulations {}/{}, {}, {} rounds",
                cfg.variant,
                eval.describe(),
                if cfg.selfplay.workers == 0 { "auto".to_string() } else { cfg.selfplay.workers.to_string() },
                cfg.selfplay.games_per_worker,
                cfg.selfplay.batches_in_flight,
                bcfg.max_batch,
                cfg.selfplay.simulations_full,
                cfg.selfplay.simulations_cheap,
                if cfg.search.gumbel { "gumbel root" } else { "puct root" },
                rounds
            );
        }
        let batcher = Batcher::spawn(eval, bcfg.clone());
        let opts = RunOptions {
            games: u64::MAX,
            stop: Arc::new(Default::default()),
            progress_every: Duration::from_millis(50),
        };
        let stop = opts.stop.clone();
        let end = warmup + per_round;
        let mut first: Option<(Progress, f64)> = None;
        let mut last = (Progress::default(), 0.0);
        let busy = |b: &Batcher| b.stats().eval_seconds;
        run_selfplay(
            &cfg,
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
        )?;
        drop(batcher);
        let (first, first_busy) = first.context("self-play ended before the warm-up")?;
        let (last, last_busy) = last;
        let secs = (last.elapsed - first.elapsed).as_secs_f64();
        let evals = (last.batched_positions - first.batched_positions) as f64;
        let passes = (last.forward_passes - first.forward_passes).max(1) as f64;
        sp_evals += evals;
        sp_secs += secs;
        sp_passes += passes;
        sp_positions += (last.positions - first.positions) as f64;
        let round_busy = last_busy - first_busy;
        sp_busy += round_busy;
        if round == 0 {
            batch = (evals / passes).round().max(1.0) as usize;
        }
        // The raw forward pass on a thread of its own, like the batcher's.
        let options = model::BenchOptions { min_time: per_round, ..Default::default() };
        let net_cfg = cfg.model.clone();
        let rows =
            std::thread::spawn(move || model::bench_forward(&net_cfg, shape, device, precision, &[batch], &options))
                .join()
                .map_err(|_| anyhow::anyhow!("raw forward benchmark panicked"))?
                .context("raw forward benchmark")?;
        raw_evals += (rows[0].batch * rows[0].iterations) as f64;
        raw_secs += rows[0].seconds;
        println!(
            "round {}: selfplay {:.1} evals/s (mean batch {:.1}, network busy {:.1}%), raw {:.1} evals/s at batch {batch}",
            round + 1,
            evals / secs,
            evals / passes,
            100.0 * round_busy / secs,
            rows[0].evals_per_sec
        );
    }
    let sp_rate = sp_evals / sp_secs;
    let raw = raw_evals / raw_secs;
    println!(
        "selfplay: {:.1} evals/s, mean batch {:.1}, {:.1} positions/s, {:.1} forward passes/s",
        sp_rate,
        sp_evals / sp_passes,
        sp_positions / sp_secs,
        sp_passes / sp_secs
    );
    println!(
        "network busy {:.1}% of the self-play time (the rest it waited for the workers' tree work)",
        100.0 * sp_busy / sp_secs
    );
    println!("raw nn (as bench nn): {:.1} evals/s at batch {batch}", raw);
    println!("selfplay {:.1} evals/s vs raw {:.1} evals/s at batch {batch}: ratio {:.3}", sp_rate, raw, sp_rate / raw);
    Ok(ExitCode::SUCCESS)
}
