//! koma's arena: matches between players — koma checkpoints searched in process, the
//! built-in random and greedy baselines, and external engines over USI or XBoard — with
//! results as W/D/L, Elo differences with 95% intervals, LOS, ratings tables and SPRT.
//!
//! - [`player`]: the [`Player`](player::Player) trait, [`PlayerSpec`] (`NAME=SPEC`),
//!   [`TimeControl`].
//! - [`usi`], [`xboard`]: engine clients over a child process ([`process`]).
//! - [`builtin`]: random, greedy and koma checkpoint players.
//! - [`game`]: one game, adjudicated by the rules; faults lose.
//! - [`openings`]: opening files.
//! - [`stats`]: Elo, intervals, LOS, SPRT, ratings.
//! - [`report`]: `games.jsonl`, KIF/CSA records, `report.md`, the tables; [`plot`]: PNG
//!   and SVG charts of Elo against training step (plotters).
//! - [`ladder`]: the measured baseline ladder and a player's place on it.
//! - [`run_match`]: the scheduler: K games at once on worker threads, engines kept
//!   running between games, SPRT stopping.

pub mod baselines;
pub mod builtin;
pub mod game;
pub mod ladder;
pub mod openings;
pub mod player;
pub mod plot;
pub mod process;
pub mod report;
pub mod stats;
pub mod usi;
pub mod xboard;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use game::{play_game, GameResult, GameSettings};
pub use openings::{load_openings, Opening};
pub use player::{PlayerSpec, SpecKind, TimeControl};
pub use report::{GameRow, MatchReport, PairResult};
pub use stats::{Sprt, SprtStatus, Wdl};

use rules::{Color, EndRules, Variant};

/// Everything a match needs.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub players: Vec<PlayerSpec>,
    /// Play only the pairs that include this player.
    pub gauntlet: Option<String>,
    /// Play each player against the next one in the list only (a ladder of rungs).
    pub ladder: bool,
    /// Games per pair (each opening is played twice, colours swapped).
    pub games: u32,
    pub tc: TimeControl,
    pub openings: Vec<Opening>,
    /// Games played at once.
    pub concurrency: usize,
    /// Stop when the test decides (matches of one pair).
    pub sprt: Option<Sprt>,
    pub out: PathBuf,
    pub variant: Variant,
    pub end_rules: EndRules,
    pub time_margin: Duration,
    pub hang_timeout: Duration,
    pub seed: u64,
    /// The command line, for the report.
    pub command_line: Option<String>,
    /// Show progress on stderr: a bar (a line every few seconds when stderr is not a
    /// terminal) and a line per finished game.
    pub progress: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    #[error("{0}")]
    Config(String),
    #[error("player {name}: {why}")]
    Player { name: String, why: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
}

/// The default number of games at once: half the cores (each game has two players).
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map(|n| n.get() / 2).unwrap_or(1).max(1)
}

/// The pairs a match plays, as player indices (the first is listed first in tables).
pub fn pairs(players: &[PlayerSpec], gauntlet: Option<&str>, ladder: bool) -> Result<Vec<(usize, usize)>, ArenaError> {
    let mut out = Vec::new();
    if ladder {
        if gauntlet.is_some() {
            return Err(ArenaError::Config("--ladder and --gauntlet exclude each other".into()));
        }
        return Ok((1..players.len()).map(|i| (i - 1, i)).collect());
    }
    match gauntlet {
        Some(g) => {
            let gi = players
                .iter()
                .position(|p| p.name == g)
                .ok_or_else(|| ArenaError::Config(format!("--gauntlet {g}: no player of that name")))?;
            for j in 0..players.len() {
                if j != gi {
                    out.push((gi, j));
                }
            }
        }
        None => {
            for i in 0..players.len() {
                for j in i + 1..players.len() {
                    out.push((i, j));
                }
            }
        }
    }
    Ok(out)
}

fn check_config(cfg: &MatchConfig) -> Result<Vec<(usize, usize)>, ArenaError> {
    let bad = |s: String| Err(ArenaError::Config(s));
    if cfg.players.len() < 2 {
        return bad("a match needs at least two players (--player NAME=SPEC)".into());
    }
    for (i, p) in cfg.players.iter().enumerate() {
        if cfg.players[..i].iter().any(|q| q.name == p.name) {
            return bad(format!("two players are named '{}'", p.name));
        }
        if let SpecKind::Xboard { .. } = p.kind {
            if matches!(p.effective_limit(cfg.tc), TimeControl::Nodes(_)) {
                return bad(format!("player {}: XBoard engines cannot play at fixed nodes; give it depth=N", p.name));
            }
            if cfg.openings.iter().any(|o| !o.from_startpos()) {
                return bad(format!(
                    "player {}: XBoard engines get the opening as moves from the start position; \
                     the opening file has SFEN starts (write them as 'startpos moves ...')",
                    p.name
                ));
            }
        }
    }
    if cfg.games == 0 {
        return bad("--games must be at least 1".into());
    }
    if cfg.concurrency == 0 {
        return bad("--concurrency must be at least 1".into());
    }
    if cfg.end_rules.max_plies == Some(0) {
        return bad("--max-plies must be at least 1".into());
    }
    if cfg.hang_timeout.is_zero() {
        return bad("--hang-timeout must be at least 1 second".into());
    }
    if cfg.openings.is_empty() {
        return bad("no openings".into());
    }
    let pairs = pairs(&cfg.players, cfg.gauntlet.as_deref(), cfg.ladder)?;
    if cfg.sprt.is_some() && pairs.len() != 1 {
        return bad(format!("--sprt needs a match of one pair (this one has {})", pairs.len()));
    }
    Ok(pairs)
}

/// One scheduled game.
#[derive(Clone, Copy, Debug)]
struct Job {
    number: usize,
    pair: usize,
    opening: usize,
    /// The pair's first player plays sente.
    first_sente: bool,
}

/// Plays the match, writing `games.jsonl`, the records and `report.md` (and `elo.png`,
/// `elo.svg` for a series of checkpoints) into `cfg.out` as games finish.
pub fn run_match(cfg: &MatchConfig) -> Result<MatchReport, ArenaError> {
    let pairs = check_config(cfg)?;
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| ArenaError::Io { path, source }
    };
    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    let work = cfg.out.join("engines");
    std::fs::create_dir_all(&work).map_err(io(&work))?;

    // Start every player once, so that a bad command line or checkpoint stops the match
    // before it begins; remember the checkpoints' training steps.
    let mut steps = vec![None; cfg.players.len()];
    for (i, p) in cfg.players.iter().enumerate() {
        if let SpecKind::Koma { checkpoint, .. } = &p.kind {
            let (_, step) = builtin::checkpoint_variant_and_step(checkpoint)
                .map_err(|why| ArenaError::Player { name: p.name.clone(), why })?;
            steps[i] = Some(step);
        }
        let player = p
            .create(cfg.variant, cfg.seed, &work, cfg.hang_timeout)
            .map_err(|why| ArenaError::Player { name: p.name.clone(), why })?;
        drop(player);
    }
    if cfg.players.iter().any(|p| matches!(p.kind, SpecKind::Koma { .. })) {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        model::tch::set_num_threads((cores / cfg.concurrency.max(1)).max(1) as i32);
    }

    // Jobs: pair by pair; game g of a pair plays opening (g / 2 + offset) with the
    // colours swapped on odd g.
    let mut jobs = Vec::new();
    for (pi, _) in pairs.iter().enumerate() {
        for g in 0..cfg.games as usize {
            let opening = (g / 2 + (cfg.seed as usize)) % cfg.openings.len();
            jobs.push(Job { number: jobs.len() + 1, pair: pi, opening, first_sente: g % 2 == 0 });
        }
    }
    let total = jobs.len();
    let next = AtomicUsize::new(0);
    let stop: Vec<AtomicBool> = pairs.iter().map(|_| AtomicBool::new(false)).collect();
    let mut writer = report::Writer::create(cfg, &pairs, steps)?;
    let started = Instant::now();
    let concurrency = cfg.concurrency.max(1).min(total.max(1));
    let shown = progress::Reporter::shown_if(cfg.progress, "arena", Some(total as u64), "games");

    std::thread::scope(|scope| -> Result<(), ArenaError> {
        let (tx, rx) = mpsc::channel::<(Job, GameResult, [usize; 2])>();
        for w in 0..concurrency {
            let tx = tx.clone();
            let (jobs, next, stop, pairs, work) = (&jobs, &next, &stop, &pairs, &work);
            scope.spawn(move || {
                let mut cache: HashMap<usize, Box<dyn player::Player>> = HashMap::new();
                let mut made = 0u64;
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&job) = jobs.get(k) else { break };
                    if stop[job.pair].load(Ordering::SeqCst) {
                        continue;
                    }
                    let (a, b) = pairs[job.pair];
                    let seats = if job.first_sente { [a, b] } else { [b, a] };
                    cache.retain(|&i, _| i == a || i == b);
                    let result = play_one(cfg, &job, seats, &mut cache, &mut made, w as u64, work);
                    if tx.send((job, result, seats)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (job, result, seats) in rx {
            writer.record(&job_row(cfg, &job, &result, seats, job.pair))?;
            shown.inc(1);
            let (a, b) = pairs[job.pair];
            let pair = writer.pair_wdl(job.pair);
            let (first, second) = (&cfg.players[a].name, &cfg.players[b].name);
            shown.set_message(format!("{first} vs {second} +{} ={} -{}", pair.wins, pair.draws, pair.losses));
            if cfg.progress {
                let done = writer.games();
                let who = |c: Color| cfg.players[seats[c.index()]].name.as_str();
                let res = match result.winner {
                    Some(c) => format!("{} wins", who(c)),
                    None => "draw".into(),
                };
                shown.println(&format!(
                    "[{done}/{total}] {} (sente) vs {} (gote): {res} by {} after {} plies{}",
                    who(Color::Sente),
                    who(Color::Gote),
                    result.reason,
                    result.moves.len(),
                    result.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
                ));
            }
            if let Some(t) = cfg.sprt {
                let r = writer.pair_wdl(job.pair);
                if t.status(&r) != SprtStatus::Continue && !stop[job.pair].swap(true, Ordering::SeqCst) && cfg.progress
                {
                    shown.println(&format!("sprt: decided after {} games (LLR {:.2}); stopping", r.games(), t.llr(&r)));
                }
            }
        }
        Ok(())
    })?;
    shown.finish();
    writer.finish(started.elapsed())
}

fn play_one(
    cfg: &MatchConfig,
    job: &Job,
    seats: [usize; 2],
    cache: &mut HashMap<usize, Box<dyn player::Player>>,
    made: &mut u64,
    worker: u64,
    work: &std::path::Path,
) -> GameResult {
    let opening = &cfg.openings[job.opening];
    // Create missing players; one that cannot start loses the game as a crash.
    for (c, &pi) in seats.iter().enumerate() {
        if cache.contains_key(&pi) {
            continue;
        }
        *made += 1;
        let seed = cfg.seed ^ (worker << 48) ^ (*made << 24) ^ job.number as u64;
        match cfg.players[pi].create(cfg.variant, seed, work, cfg.hang_timeout) {
            Ok(p) => {
                cache.insert(pi, p);
            }
            Err(why) => {
                let side = if c == 0 { Color::Sente } else { Color::Gote };
                return GameResult {
                    winner: Some(side.opponent()),
                    reason: "crash".into(),
                    detail: Some(why),
                    moves: opening.moves.clone(),
                    opening_plies: opening.moves.len(),
                    times_ms: Vec::new(),
                    scores: Vec::new(),
                    faulty: Some(side),
                    final_pos: opening.position(),
                };
            }
        }
    }
    let settings = GameSettings {
        tc: cfg.tc,
        limits: [cfg.players[seats[0]].effective_limit(cfg.tc), cfg.players[seats[1]].effective_limit(cfg.tc)],
        end_rules: cfg.end_rules,
        time_margin: cfg.time_margin,
        hang_timeout: cfg.hang_timeout,
    };
    let mut s = cache.remove(&seats[0]).expect("created above");
    let mut g = cache.remove(&seats[1]).expect("created above");
    let result = play_game([s.as_mut(), g.as_mut()], opening, &settings);
    // A player that failed is replaced by a fresh one (its process killed on drop).
    if result.faulty != Some(Color::Sente) {
        cache.insert(seats[0], s);
    }
    if result.faulty != Some(Color::Gote) {
        cache.insert(seats[1], g);
    }
    result
}

fn job_row(cfg: &MatchConfig, job: &Job, r: &GameResult, seats: [usize; 2], pair: usize) -> GameRow {
    GameRow {
        number: job.number,
        pair,
        sente: cfg.players[seats[0]].name.clone(),
        gote: cfg.players[seats[1]].name.clone(),
        sente_index: seats[0],
        gote_index: seats[1],
        winner: r.winner,
        reason: r.reason.clone(),
        detail: r.detail.clone(),
        opening: cfg.openings[job.opening].text.clone(),
        start_sfen: cfg.openings[job.opening].base.to_sfen(),
        moves: r.moves.clone(),
        opening_plies: r.opening_plies,
        times_ms: r.times_ms.clone(),
        final_pos: r.final_pos.clone(),
    }
}
