//! `koma book`: an opening book in YaneuraOu's text format ([`dataio::book`]) from game
//! records (KIF, KI2, CSA, USI, hcpe, hcpe3, psv, read as `koma convert` reads them; koma's
//! arena writes `games.csa` and `kif/`, `koma convert-samples` turns self-play's chunks
//! into hcpe3). Each move of the first `--max-ply` plies of every game is counted; its score is the mover's
//! result in the games that played it (as centipawns on Ponanza's scale) or, with
//! `--score-with`, a player's search of the position after it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use arena::player::{Action, EngineScore, GoRequest, TimeControl};
use arena::spec::PlayerSpec;
use clap::Args;
use dataio::book::{Book, BookBuilder, BookMove};
use koma::record_input::Source;
use koma_net::bad;
use rules::records::Record;
use rules::{EndRules, Position, Variant};

#[derive(Args)]
pub struct BookArgs {
    /// Game records: KIF, KI2, CSA, USI, hcpe, hcpe3 or .psv files, or folders of them (standard
    /// shogi; self-play's chunks become hcpe3 with `koma convert-samples`).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The book to write (YaneuraOu's text format, `.db` by custom).
    #[arg(short, long)]
    out: PathBuf,
    /// Plies of each game that go into the book.
    #[arg(long, default_value_t = 24)]
    max_ply: usize,
    /// A move played fewer times than this is left out.
    #[arg(long, default_value_t = 1)]
    min_count: u64,
    /// Score each move by this player's search of the position after it (an arena player:
    /// `koma:models/shogi.safetensors`, `usi:/usr/games/fairy-stockfish,depth=10`).
    #[arg(long)]
    score_with: Option<String>,
    /// The scoring player's limit for each move.
    #[arg(long, default_value = "nodes=800")]
    tc: TimeControl,
    /// Add to the book already at --out (the counts of a move in both add up).
    #[arg(long)]
    merge: bool,
}

/// The records of `path`, read as `koma convert` reads them (by its extension).
fn read_records(path: &Path) -> Result<Vec<Record>> {
    let ext = files::extension(path);
    let source = Source::from_extension(&ext)
        .ok_or_else(|| bad(format!("{}: not a record (.kif .ki2 .csa .usi .hcpe .hcpe3 .psv)", path.display())))?;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    source.read(&bytes, &ext).map_err(|e| match e.line {
        Some(line) => bad(format!("{}:{line}: {}", path.display(), e.message)),
        None => bad(format!("{}: {}", path.display(), e.message)),
    })
}

/// The score of `mv` in `sfen` for its mover: minus the player's score of the position
/// after it.
fn search_score(player: &mut dyn arena::player::Player, sfen: &str, mv: &str, tc: TimeControl) -> Result<i32> {
    let mut pos = Position::from_sfen(Variant::Shogi, sfen).map_err(|e| bad(format!("{sfen}: {e}")))?;
    pos.play_usi(mv).map_err(|e| bad(format!("{sfen} {mv}: {e}")))?;
    if let Some(o) = pos.outcome(&EndRules::default()) {
        return Ok(match o.winner {
            Some(w) if w == pos.side_to_move() => -30_000,
            Some(_) => 30_000,
            None => 0,
        });
    }
    player.new_game(&pos).map_err(|f| anyhow::anyhow!("scoring player: {f}"))?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let req = GoRequest {
        pos: &pos,
        start: &pos,
        moves: &[],
        limit: tc,
        clocks: None,
        deadline,
        end_rules: EndRules::default(),
    };
    let action = player.go(&req).map_err(|f| anyhow::anyhow!("scoring player: {f}"))?;
    Ok(match (action, player.last_score()) {
        (Action::Resign, _) => 30_000,
        (_, Some(EngineScore::Cp(cp))) => -cp.clamp(-29_000, 29_000),
        (_, Some(EngineScore::Mate(n))) if n > 0 => -(30_000 - n),
        (_, Some(EngineScore::Mate(n))) => 30_000 + n,
        (_, None) => 0,
    })
}

pub fn book(args: BookArgs) -> Result<ExitCode> {
    let inputs = files::files_under(&args.inputs, |p| Source::from_extension(&files::extension(p)).is_some());
    let mut builder = BookBuilder::new(args.max_ply);
    let (mut games, mut skipped) = (0usize, 0usize);
    for path in &inputs {
        match read_records(path) {
            Ok(records) => {
                for record in &records {
                    match builder.add_game(record) {
                        Ok(()) => games += 1,
                        Err(e) => {
                            skipped += 1;
                            progress::line(&format!("book: {}: a game skipped: {e}", path.display()));
                        }
                    }
                }
            }
            Err(e) => {
                skipped += 1;
                progress::line(&format!("book: skipped: {e:#}"));
            }
        }
    }
    if games == 0 {
        return Err(bad(format!("no game read from {} input files", inputs.len())));
    }
    let mut book = match args.merge && args.out.exists() {
        true => Book::read(&args.out)?,
        false => Book::new(),
    };
    let mut kept = builder.moves(args.min_count);
    if let Some(spec) = &args.score_with {
        score_moves(spec, args.tc, &mut kept)?;
    }
    let moves = kept.len();
    for (sfen, mv) in kept {
        book.add(&sfen, mv);
    }
    book.write(&args.out)?;
    println!(
        "book: {games} games ({skipped} skipped) -> {} positions, {moves} moves -> {}",
        book.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Scores every move by the search of the player of `spec` (depth 1: searched).
fn score_moves(spec: &str, tc: TimeControl, kept: &mut [(String, BookMove)]) -> Result<()> {
    // An arena player with or without its `NAME=`.
    let named = match spec.split(':').next().is_some_and(|head| head.contains('=')) {
        true => spec.to_string(),
        false => format!("scorer={spec}"),
    };
    let spec: PlayerSpec = named.parse().map_err(|e| bad(format!("--score-with: {e}")))?;
    let workdir = std::env::temp_dir();
    let mut player = spec.create(Variant::Shogi, 1, &workdir, Duration::from_secs(60))?;
    let bar = progress::Reporter::bar("book: scoring", kept.len() as u64, "moves");
    for (sfen, mv) in kept.iter_mut() {
        mv.score = search_score(player.as_mut(), sfen, &mv.mv, spec.effective_limit(tc))?;
        mv.depth = match spec.effective_limit(tc) {
            TimeControl::Depth(d) => d as i32,
            _ => 1,
        };
        bar.inc(1);
    }
    bar.finish();
    Ok(())
}
