//! `koma gen`: teacher data. An engine plays itself from the opening set; every position
//! it moved in becomes a training sample (its move as policy target, its score mixed into
//! the value target). `koma learn --records DIR` trains on the chunks.
//!
//! ```text
//! koma gen --engine SPEC --games N --out DIR [--variant V] [--tc TC] [--openings FILE]
//!     [--random-plies K] [--max-plies N] [--score-scale CP] [--concurrency K] [--seed S]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use arena::{PlayerSpec, TimeControl};
use clap::Args;
use rules::Variant;
use trainer::supervised::teacher::{generate, TeacherOptions};

use koma_net::bad;

#[derive(Args)]
pub struct GenArgs {
    /// The teacher, as an arena player SPEC (without NAME=): e.g.
    /// `usi:fairy-stockfish,depth=5`, `xboard:sjaakii,depth=4`, `koma:CHECKPOINT,nodes=800`.
    #[arg(long)]
    engine: String,
    /// Games to play.
    #[arg(long)]
    games: u64,
    /// Output folder for the sample chunks.
    #[arg(long)]
    out: PathBuf,
    /// Variant: shogi, sho or dai.
    #[arg(long, default_value = "shogi")]
    variant: String,
    /// Limit per move when the engine spec sets none: nodes=N, depth=N or byoyomi=MS.
    #[arg(long, default_value = "depth=5")]
    tc: String,
    /// Opening file (default: data/openings/<variant>.txt if found, else the start position).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Uniformly random plies after the opening (not recorded), for variety.
    #[arg(long, default_value_t = 2)]
    random_plies: u32,
    /// Maximum game length in plies; then a draw.
    #[arg(long, default_value_t = 320)]
    max_plies: u32,
    /// Centipawns per logistic unit turning the engine's score into a win probability.
    #[arg(long, default_value_t = 600.0)]
    score_scale: f64,
    /// Samples per chunk file.
    #[arg(long, default_value_t = 16384)]
    samples_per_chunk: usize,
    /// Games at once (each runs two engine processes; default: the number of cores).
    #[arg(long)]
    concurrency: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// No per-game lines on stderr.
    #[arg(long, short)]
    quiet: bool,
}

pub fn gen(args: GenArgs) -> Result<ExitCode> {
    let variant: Variant = args.variant.parse().map_err(|e: rules::UnknownVariant| bad(e.to_string()))?;
    let engine: PlayerSpec =
        format!("teacher={}", args.engine).parse().map_err(|e: arena::BadPlayerSpec| bad(e.to_string()))?;
    let tc: TimeControl = args.tc.parse().map_err(|e: arena::player::BadTimeControl| bad(e.to_string()))?;
    let openings = crate::arena_cmd::openings_for(variant, args.openings.as_deref())?;
    let opts = TeacherOptions {
        variant,
        engine,
        tc,
        games: args.games,
        openings,
        random_plies: args.random_plies,
        max_plies: args.max_plies,
        score_scale: args.score_scale,
        out: args.out.clone(),
        samples_per_chunk: args.samples_per_chunk,
        concurrency: args.concurrency.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        seed: args.seed,
        progress: !args.quiet,
    };
    let stop = trainer::install_signal_handler();
    let s = generate(&opts, &stop).map_err(|e| match e {
        trainer::supervised::teacher::TeacherError::Samples(_) => anyhow::Error::new(e),
        other => bad(other.to_string()),
    })?;
    println!(
        "gen: {} games ({} sente wins, {} gote wins, {} draws; {} dropped for a fault), {} positions ({} without a score) in {} chunk(s) under {}",
        s.games,
        s.sente_wins,
        s.gote_wins,
        s.draws,
        s.faulty_games,
        s.positions,
        s.unscored,
        s.chunks,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
