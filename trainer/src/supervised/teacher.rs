//! Teacher data (`koma gen`): games an engine plays against itself, turned straight into
//! training samples, to bootstrap a network before self-play (as dlshogi bootstraps from
//! engine games and Floodgate records).
//!
//! Every position an engine moved in becomes a sample: the engine's move is the policy
//! target, and the value target mixes the game's result with the engine's own score as a
//! win probability (`root_wdl` of the sample = `[p, 0, 1 - p]`; the learner mixes it with
//! the result by `train.q_mix`, dlshogi's `val_lambda`). Any player the arena can drive
//! serves: a USI or XBoard engine at a fixed depth, a koma network, even the baselines.
//!
//! Variety: each game starts from an opening of the opening file (round robin), then plays
//! `random_plies` uniformly random moves that are not recorded, so that a deterministic
//! engine at a fixed depth does not repeat its games.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use arena::player::{EngineScore, Player};
use arena::{play_game, GameRecord, GameSettings, Opening, PlayerSpec, TimeControl};
use dataio::{ChunkWriter, GameResult, Sample, SampleError};
use model::encoding::Encoder;
use nn::EncoderLabels;
use rules::score::wdl_of_win_probability;
use rules::{Color, EndRules, Position, Variant};
use search::Rng;

/// How long an engine may take to start, or to answer one move, before it counts as hung.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// What `koma gen` does.
#[derive(Clone, Debug)]
pub struct TeacherOptions {
    pub variant: Variant,
    /// The engine; its own limit (`depth=N`, `nodes=N`) or else `tc` bounds each move.
    pub engine: PlayerSpec,
    pub tc: TimeControl,
    pub games: u64,
    pub openings: Vec<Opening>,
    /// Uniformly random plies after the opening, not recorded. Default 2.
    pub random_plies: u32,
    /// A game longer than this is a draw. Default 320.
    pub max_plies: u32,
    /// Centipawns per unit of the logistic that turns a score into a win probability.
    /// Default 600 (Ponanza-style engines; dlshogi uses 756 for its own scale).
    pub score_scale: f64,
    /// Output folder for sample chunks.
    pub out: PathBuf,
    pub samples_per_chunk: usize,
    /// Games played at once (each runs two engine processes).
    pub concurrency: usize,
    pub seed: u64,
    /// A line per finished game to stderr.
    pub progress: bool,
}

/// The end of `koma gen`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TeacherSummary {
    pub games: u64,
    pub positions: u64,
    pub chunks: usize,
    /// Games won by sente, won by gote, drawn.
    pub sente_wins: u64,
    pub gote_wins: u64,
    pub draws: u64,
    /// Games dropped because a player failed (crash, hang, illegal move).
    pub faulty_games: u64,
    /// Samples whose engine gave no score (their value target is the result alone).
    pub unscored: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum TeacherError {
    #[error("{0}")]
    Config(String),
    #[error("engine {name}: {source}")]
    Engine { name: String, source: Box<arena::PlayerStartError> },
    #[error(transparent)]
    Samples(#[from] SampleError),
}

/// The game-level state all worker threads share.
struct Shared<'a> {
    opts: &'a TeacherOptions,
    encoder: Encoder,
    next_game: AtomicU64,
    writer: Mutex<ChunkWriter>,
    summary: Mutex<TeacherSummary>,
    stop: &'a AtomicBool,
}

/// Plays `opts.games` teacher games and writes their samples as chunks into `opts.out`.
pub fn generate(opts: &TeacherOptions, stop: &AtomicBool) -> Result<TeacherSummary, TeacherError> {
    if opts.games == 0 || opts.concurrency == 0 || opts.max_plies == 0 {
        return Err(TeacherError::Config("--games, --concurrency and --max-plies must be at least 1".into()));
    }
    if !(opts.score_scale.is_finite() && opts.score_scale > 0.0) {
        return Err(TeacherError::Config(format!("--score-scale {} must be a positive number", opts.score_scale)));
    }
    let workdir = opts.out.join("engines");
    std::fs::create_dir_all(&workdir).map_err(|e| TeacherError::Config(format!("{}: {e}", workdir.display())))?;
    // Start the engine once, so that a bad command line fails before any game.
    opts.engine
        .create(opts.variant, opts.seed, &workdir, HANDSHAKE_TIMEOUT)
        .map_err(|source| TeacherError::Engine { name: opts.engine.name.clone(), source: Box::new(source) })?;
    let encoder = Encoder::new(opts.variant);
    let prefix = format!("gen-{}-{}", std::process::id(), opts.seed);
    let writer = ChunkWriter::new(&opts.out, &prefix, opts.variant, &EncoderLabels, opts.samples_per_chunk)?;
    let shared = Shared {
        opts,
        encoder,
        next_game: AtomicU64::new(0),
        writer: Mutex::new(writer),
        summary: Mutex::new(TeacherSummary::default()),
        stop,
    };
    let failure: Mutex<Option<TeacherError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for worker in 0..opts.concurrency {
            let (shared, failure, workdir) = (&shared, &failure, &workdir);
            s.spawn(move || {
                if let Err(e) = play_games(shared, worker as u64, workdir) {
                    failure.lock().unwrap().get_or_insert(e);
                    shared.stop.store(true, Ordering::SeqCst);
                }
            });
        }
    });
    let mut writer = shared.writer.into_inner().unwrap();
    writer.flush()?;
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    let mut summary = shared.summary.into_inner().unwrap();
    summary.chunks = writer.files_written().len();
    Ok(summary)
}

/// One worker: two engine processes playing game after game.
fn play_games(shared: &Shared<'_>, worker: u64, workdir: &Path) -> Result<(), TeacherError> {
    let opts = shared.opts;
    let spec = &opts.engine;
    let make = |k: u64| {
        spec.create(opts.variant, opts.seed ^ (worker << 32) ^ k, workdir, HANDSHAKE_TIMEOUT)
            .map_err(|source| TeacherError::Engine { name: spec.name.clone(), source: Box::new(source) })
    };
    let mut players: [Box<dyn Player>; 2] = [make(0)?, make(1)?];
    let mut rng = Rng::stream(opts.seed, worker);
    let settings = GameSettings {
        tc: opts.tc,
        limits: [spec.effective_limit(opts.tc); 2],
        end_rules: EndRules { max_plies: Some(opts.max_plies), ..EndRules::default() },
        time_margin: Duration::from_millis(500),
        hang_timeout: HANDSHAKE_TIMEOUT,
    };
    while !shared.stop.load(Ordering::SeqCst) {
        let number = shared.next_game.fetch_add(1, Ordering::SeqCst);
        if number >= opts.games {
            break;
        }
        let opening = varied_opening(opts, number, &mut rng);
        let [a, b] = &mut players;
        let game = play_game([a.as_mut(), b.as_mut()], &opening, &settings);
        if let Some(side) = game.faulty {
            if opts.progress {
                log::warn!(
                    "gen: game {} dropped: {} ({})",
                    number + 1,
                    game.reason,
                    game.detail.as_deref().unwrap_or("")
                );
            }
            // Replace the failed process; the game's data is not trusted.
            players[side.index()] = make(number + 2)?;
            shared.summary.lock().unwrap().faulty_games += 1;
            continue;
        }
        let samples = game_samples(&game, &opening, &shared.encoder, opts.score_scale);
        record_game(shared, &game, samples, number)?;
    }
    Ok(())
}

/// The opening of game `number`: an opening of the set (round robin) plus random plies
/// that do not end the game.
fn varied_opening(opts: &TeacherOptions, number: u64, rng: &mut Rng) -> Opening {
    let mut opening = if opts.openings.is_empty() {
        Opening::startpos(opts.variant)
    } else {
        opts.openings[(number % opts.openings.len() as u64) as usize].clone()
    };
    let mut pos = opening.position();
    let end_rules = EndRules::default();
    for _ in 0..opts.random_plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.below(moves.len())];
        pos.play(mv);
        if pos.outcome(&end_rules).is_some() || pos.legal_moves().is_empty() {
            pos.undo();
            break;
        }
        opening.moves.push(mv);
    }
    opening
}

/// The samples of one finished game: every position after the opening.
pub fn game_samples(game: &GameRecord, opening: &Opening, encoder: &Encoder, score_scale: f64) -> Vec<Sample> {
    let mut pos: Position = opening.base.clone();
    for &mv in &game.moves[..game.opening_plies] {
        pos.play(mv);
    }
    let total = game.moves.len() as u32;
    let mut out = Vec::with_capacity(game.moves.len() - game.opening_plies);
    for (i, &mv) in game.moves.iter().enumerate().skip(game.opening_plies) {
        let side = pos.side_to_move();
        let result = GameResult::for_side(game.winner, side);
        let score = game.scores.get(i - game.opening_plies).copied().flatten();
        out.push(Sample {
            sfen: pos.to_sfen(),
            repetitions: pos.repetitions().min(255) as u8,
            policy: vec![(encoder.move_index(&pos, mv) as u32, 1.0)],
            result: Some(result),
            root_wdl: score.map_or(result.wdl(), |s| score_wdl(s, score_scale)),
            plies_left: total - i as u32,
            full_search: true,
            aux: dataio::AuxTargets::default(),
        });
        pos.play(mv);
    }
    out
}

/// An engine score as (win, draw, loss) for the mover.
pub fn score_wdl(score: EngineScore, scale: f64) -> [f32; 3] {
    wdl_of_win_probability(score.win_probability(scale))
}

fn record_game(shared: &Shared<'_>, game: &GameRecord, samples: Vec<Sample>, number: u64) -> Result<(), TeacherError> {
    let positions = samples.len() as u64;
    let unscored = game.scores.iter().filter(|s| s.is_none()).count() as u64;
    shared.writer.lock().unwrap().extend(samples)?;
    let mut s = shared.summary.lock().unwrap();
    s.games += 1;
    s.positions += positions;
    s.unscored += unscored;
    match game.winner {
        Some(Color::Sente) => s.sente_wins += 1,
        Some(Color::Gote) => s.gote_wins += 1,
        None => s.draws += 1,
    }
    if shared.opts.progress {
        log::info!(
            "gen: game {} of {}: {} plies, {} ({}); {} positions so far",
            number + 1,
            shared.opts.games,
            game.moves.len(),
            game.winner.map_or("draw", |c| if c == Color::Sente { "sente wins" } else { "gote wins" }),
            game.reason,
            s.positions
        );
    }
    Ok(())
}
