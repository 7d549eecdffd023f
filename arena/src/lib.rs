//! koma's arena: matches between players — koma checkpoints searched in process, the
//! built-in random and greedy baselines, and external engines over USI or XBoard — with
//! results as W/D/L, Elo differences with 95% intervals, LOS, ratings tables and SPRT.
//!
//! - [`player`]: the [`Player`](player::Player) trait and what it is asked and answers
//!   ([`TimeControl`], [`GoRequest`](player::GoRequest), [`Action`](player::Action),
//!   [`Fault`](player::Fault), ...).
//! - [`spec`]: [`PlayerSpec`] (`NAME=SPEC`) and the factory that makes every player.
//! - [`usi`], [`xboard`]: engine clients over a child process ([`process`]).
//! - [`baseline`]: random and greedy; [`koma_player`]: koma networks on `model::Network`,
//!   searching with the engine's search (`search::driver`; a batching service shared by
//!   the games of a match).
//! - [`game`]: one game, adjudicated by the rules; faults lose ([`GameRecord`]).
//! - [`schedule`]: the harness below [`run_match`] and [`network_match`]: games of pairs
//!   on worker threads ([`play_jobs`], [`play_pair`]).
//! - [`network_match`]: a network against one opponent at fixed simulations a move
//!   ([`network_match::play_match`]): the evaluation games of `koma train` and
//!   `koma evaluate`.
//! - opening files: `dataio::openings` ([`Opening`], [`load_openings`], re-exported here).
//! - [`stats`]: Elo, intervals, LOS, SPRT, ratings ([`Wdl`]).
//! - [`ladder`]: the ladder of reference players (`arena/ladder.toml`) and a player's
//!   placement on it; [`pair_records`]: the measured pairs its ratings rest on
//!   (`arena/rung-pairs.toml`).
//! - [`report`]: `games.jsonl`, KIF/CSA records, `report.md`, the tables, and for a
//!   series of checkpoints the chart of Elo against training step (`elo.png`, `elo.svg`,
//!   drawn by the `charts` crate).
//! - [`run_match`]: a whole match: K games at once ([`schedule`]), engines kept running
//!   between games, SPRT stopping, the report; [`resume`]: continuing a stopped match.

pub mod baseline;
pub mod game;
pub mod koma_player;
pub mod ladder;
pub mod network_match;
pub mod pair_records;
pub mod player;
pub mod process;
pub mod report;
pub mod resume;
pub mod schedule;
pub mod spec;
pub mod stats;
pub mod usi;
pub mod xboard;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use dataio::openings::{load_openings, Opening, OpeningsError};
pub use game::{play_game, play_game_until, GameRecord, GameSettings};
pub use ladder::{place, Ladder, Placement, Rung};
pub use player::TimeControl;
pub use report::{GameRow, MatchReport, PairResult};
pub use schedule::{play_jobs, play_pair, PairOutcome, PairPlan, Roster};
pub use spec::{BadPlayerSpec, PlayerSpec, PlayerStartError, SpecKind};
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
    /// Continue the match already in `out` (its `games.jsonl` games count; [`resume`]).
    /// Without it, an `out` that holds games is an error.
    pub resume: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    #[error("{0}")]
    Config(String),
    #[error("player {name}: {source}")]
    Player { name: String, source: Box<PlayerStartError> },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Plot(#[from] charts::ChartError),
    #[error(transparent)]
    Resume(#[from] resume::ResumeError),
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

/// The players of a match: koma networks loaded once (each behind a batching service
/// shared by all games), the others made from their specs.
struct MatchRoster<'a> {
    cfg: &'a MatchConfig,
    work: &'a std::path::Path,
    /// Per player: the network of a koma player.
    networks: Vec<Option<koma_player::KomaNetwork>>,
}

impl schedule::Roster for MatchRoster<'_> {
    fn create(&self, index: usize, seed: u64) -> Result<Box<dyn player::Player>, PlayerStartError> {
        let spec = &self.cfg.players[index];
        match (&spec.kind, &self.networks[index]) {
            (SpecKind::Koma { config, .. }, Some(net)) => {
                Ok(Box::new(koma_player::KomaPlayer::new(net.clone(), config.clone(), self.cfg.variant)?))
            }
            _ => spec.create(self.cfg.variant, seed, self.work, self.cfg.hang_timeout),
        }
    }

    fn limit(&self, index: usize) -> TimeControl {
        self.cfg.players[index].effective_limit(self.cfg.tc)
    }
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
    // The games already played there (a resumed match), before anything starts.
    let mut jobs = schedule::jobs(pairs.len(), cfg.games as usize, cfg.openings.len(), cfg.seed as usize);
    let total = jobs.len();
    let played = resume::prepare(cfg, &pairs, &jobs)?;

    // Load every network once and start every other player once, so that a bad command
    // line or checkpoint stops the match before it begins; remember the steps.
    let concurrency = cfg.concurrency.max(1);
    let mut networks = Vec::with_capacity(cfg.players.len());
    let mut batchers = Vec::new();
    for (i, p) in cfg.players.iter().enumerate() {
        let fail = |e: PlayerStartError| ArenaError::Player { name: p.name.clone(), source: Box::new(e) };
        if let SpecKind::Koma { checkpoint, device, backend, config } = &p.kind {
            let net = koma_player::KomaNetwork::load_with(checkpoint, *backend, device, cfg.variant)
                .map_err(|e| fail(e.into()))?;
            let max_batch = concurrency * config.batch_size * config.threads;
            // No waiting for more requests: a lone game must not pay for it, and under
            // load requests queue up while a pass runs anyway.
            let (batcher, net) = net.batched(max_batch, Duration::ZERO, &format!("koma-arena-{i}"));
            batchers.extend(batcher);
            networks.push(Some(net));
        } else {
            networks.push(None);
            drop(p.create(cfg.variant, cfg.seed, &work, cfg.hang_timeout).map_err(fail)?);
        }
    }
    if !batchers.is_empty() {
        // Up to one forward pass per network at a time, next to the other games' players.
        #[cfg(feature = "torch")]
        model::set_torch_threads(0, model::CpuShare::Split(concurrency.max(batchers.len())));
    }
    let steps = networks.iter().map(|n| n.as_ref().map(|n| n.step())).collect();
    let roster = MatchRoster { cfg, work: &work, networks };

    let mut writer = report::Writer::create(cfg, &pairs, steps, !played.is_empty())?;
    for g in &played {
        writer.count(g.pair, g.sente_index, g.winner, g.reason);
    }
    let done: std::collections::HashSet<usize> = played.iter().map(|g| g.number).collect();
    let decided = cfg.sprt.is_some_and(|t| t.status(&writer.pair_wdl(0)) != SprtStatus::Continue);
    jobs.retain(|j| !decided && !done.contains(&j.number));
    if !played.is_empty() && cfg.progress {
        log::info!(
            "arena: resuming {}: {} of {total} games played, {} to play",
            cfg.out.display(),
            played.len(),
            jobs.len()
        );
    }
    let started = Instant::now();
    let rules = schedule::Rules {
        tc: cfg.tc,
        end_rules: cfg.end_rules,
        time_margin: cfg.time_margin,
        hang_timeout: cfg.hang_timeout,
    };
    let plan = schedule::Schedule {
        pairs: &pairs,
        jobs: &jobs,
        openings: &cfg.openings,
        rules,
        concurrency,
        seed: cfg.seed,
        stop: None,
    };
    let shown = progress::Reporter::shown_if(cfg.progress, "arena", Some(jobs.len() as u64), "games");
    schedule::play_jobs(&plan, &roster, |job, record, seats| {
        writer.record(&job_row(cfg, job, record, seats))?;
        shown.inc(1);
        let (a, b) = pairs[job.pair];
        let pair = writer.pair_wdl(job.pair);
        let (first, second) = (&cfg.players[a].name, &cfg.players[b].name);
        shown.set_message(format!("{first} vs {second} +{} ={} -{}", pair.wins, pair.draws, pair.losses));
        if cfg.progress {
            shown.println(&progress_line(cfg, writer.games(), total, record, seats));
        }
        let Some(t) = cfg.sprt else { return Ok::<bool, ArenaError>(false) };
        let decided = t.status(&pair) != SprtStatus::Continue;
        if decided && cfg.progress {
            shown.println(&format!("sprt: decided after {} games (LLR {:.2}); stopping", pair.games(), t.llr(&pair)));
        }
        Ok(decided)
    })?;
    shown.finish();
    drop(batchers);
    writer.finish(started.elapsed())
}

/// The line of a finished game.
fn progress_line(cfg: &MatchConfig, done: usize, total: usize, r: &GameRecord, seats: [usize; 2]) -> String {
    let who = |c: Color| cfg.players[seats[c.index()]].name.as_str();
    let res = match r.winner {
        Some(c) => format!("{} wins", who(c)),
        None => "draw".into(),
    };
    format!(
        "[{done}/{total}] {} (sente) vs {} (gote): {res} by {} after {} plies{}",
        who(Color::Sente),
        who(Color::Gote),
        r.reason,
        r.moves.len(),
        r.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
    )
}

fn job_row(cfg: &MatchConfig, job: &schedule::Job, r: &GameRecord, seats: [usize; 2]) -> GameRow {
    GameRow {
        number: job.number,
        pair: job.pair,
        sente: cfg.players[seats[0]].name.clone(),
        gote: cfg.players[seats[1]].name.clone(),
        sente_index: seats[0],
        gote_index: seats[1],
        winner: r.winner,
        reason: r.reason,
        detail: r.detail.clone(),
        opening: cfg.openings[job.opening].text.clone(),
        start_sfen: cfg.openings[job.opening].base.to_sfen(),
        moves: r.moves.clone(),
        opening_plies: r.opening_plies,
        times_ms: r.times_ms.clone(),
        final_pos: r.final_pos.clone(),
    }
}
