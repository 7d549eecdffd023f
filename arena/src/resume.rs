//! Continuing a match that stopped (`koma arena --resume`): the games already in the
//! output folder's `games.jsonl` count, and only the rest of the schedule is played.
//! Long matches at a clock (hours at 10 s a move on two cores) then survive a killed
//! session, and can be played a part at a time.
//!
//! Before its first game a match writes `match.json`: its identity (variant, players as
//! specified, pairs, games per pair, openings, time control, end rules, seed). A resumed
//! match must have the same identity, so that every game read back is the game of its
//! schedule with that number; the files behind the players' paths (networks, engines)
//! are trusted to be the same. A last line cut by the stop is dropped, and that game is
//! played again. Without `--resume` a folder that already holds games is an error, not
//! overwritten.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rules::{Color, EndCause};
use serde_json::{json, Value};

use crate::report::winner_of_word;
use crate::schedule::Job;
use crate::{ArenaError, MatchConfig};

/// The identity file of a match folder.
pub const MATCH_FILE: &str = "match.json";
/// Version of `match.json`'s form.
pub const MATCH_FORMAT_VERSION: u64 = 1;

/// Why the games of a match folder cannot be continued (or would be overwritten).
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "{}: holds {games} games of an earlier match; --resume continues it (the same players, \
         games, openings and time control), or choose another --out",
        out.display()
    )]
    WouldOverwrite { out: PathBuf, games: usize },
    #[error("{}: games without a {MATCH_FILE}: not a folder this koma can resume (made by an older one?)", out.display())]
    NoIdentity { out: PathBuf },
    #[error("{}: format version {found}; this koma reads version {MATCH_FORMAT_VERSION}", path.display())]
    Version { path: PathBuf, found: u64 },
    #[error("{}: the match there has other {field}: it had {was}, this one has {now}", path.display())]
    Differs { path: PathBuf, field: String, was: String, now: String },
    #[error("{}:{line}: {why}", path.display())]
    BadGame { path: PathBuf, line: usize, why: BadPlayedGame },
    #[error("{}: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
}

/// Why a line of `games.jsonl` is not a game of the match being resumed.
#[derive(Debug, thiserror::Error)]
pub enum BadPlayedGame {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("no '{0}'")]
    Missing(&'static str),
    #[error("no game number")]
    NoNumber,
    #[error("game {number}, but this match has {games} games")]
    OutOfSchedule { number: usize, games: usize },
    #[error(
        "game {number} is {sente} vs {gote} from '{opening}', where the schedule has {want_sente} vs {want_gote} \
         from '{want_opening}'"
    )]
    OtherGame {
        number: usize,
        sente: String,
        gote: String,
        opening: String,
        want_sente: String,
        want_gote: String,
        want_opening: String,
    },
    #[error("game {0} a second time")]
    Repeated(usize),
    #[error("winner '{0}'")]
    Winner(String),
    #[error("end reason '{0}'")]
    Reason(String),
}

/// A game read back from `games.jsonl`, as the report counts it.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    pub number: usize,
    pub pair: usize,
    pub sente_index: usize,
    pub winner: Option<Color>,
    pub reason: EndCause,
    /// The line as it was written.
    pub line: String,
}

/// What `cfg` identifies as its match, as written to `match.json`.
pub fn identity(cfg: &MatchConfig, pairs: &[(usize, usize)]) -> Value {
    let players: Vec<Value> = cfg
        .players
        .iter()
        .map(|p| json!({"name": p.name, "spec": format!("{:?}", p.kind), "limit": p.limit.map(|l| l.to_string())}))
        .collect();
    json!({
        "format_version": MATCH_FORMAT_VERSION,
        "variant": cfg.variant.name(),
        "players": players,
        "pairs": pairs,
        "games_per_pair": cfg.games,
        "openings": cfg.openings.iter().map(|o| o.text.clone()).collect::<Vec<_>>(),
        "tc": cfg.tc.to_string(),
        "end_rules": format!("{:?}", cfg.end_rules),
        "seed": cfg.seed,
    })
}

/// Readies `cfg.out` for the match: the games already played there when resuming
/// (checked against the schedule `jobs`), none otherwise; writes `match.json`.
pub fn prepare(cfg: &MatchConfig, pairs: &[(usize, usize)], jobs: &[Job]) -> Result<Vec<PlayedGame>, ArenaError> {
    let games_path = cfg.out.join("games.jsonl");
    let match_path = cfg.out.join(MATCH_FILE);
    let text = match std::fs::read_to_string(&games_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ArenaError::Io { path: games_path, source }),
    };
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let id = identity(cfg, pairs);
    if !cfg.resume || (lines == 0 && !match_path.exists()) {
        if lines > 0 {
            return Err(ResumeError::WouldOverwrite { out: cfg.out.clone(), games: lines }.into());
        }
        write_identity(&match_path, &id)?;
        return Ok(Vec::new());
    }
    if !match_path.exists() {
        return Err(ResumeError::NoIdentity { out: cfg.out.clone() }.into());
    }
    check_identity(&match_path, &id)?;
    let played = read_played(&games_path, &text, cfg, pairs, jobs)?;
    let kept: String = played.iter().map(|g| format!("{}\n", g.line)).collect();
    if kept != text {
        // Drop a line cut by the stop (its game is played again), atomically.
        files::write_atomic(&games_path, kept.as_bytes())
            .map_err(|source| ArenaError::Io { path: games_path, source })?;
    }
    Ok(played)
}

fn write_identity(path: &Path, id: &Value) -> Result<(), ArenaError> {
    let text = serde_json::to_string_pretty(id).expect("a JSON value prints") + "\n";
    files::write_atomic(path, text.as_bytes()).map_err(|source| ArenaError::Io { path: path.to_path_buf(), source })
}

fn check_identity(path: &Path, now: &Value) -> Result<(), ArenaError> {
    let text = std::fs::read_to_string(path).map_err(|source| ArenaError::Io { path: path.into(), source })?;
    let was: Value = serde_json::from_str(&text).map_err(|source| ResumeError::Json { path: path.into(), source })?;
    let found = was["format_version"].as_u64().unwrap_or(0);
    if found != MATCH_FORMAT_VERSION {
        return Err(ResumeError::Version { path: path.into(), found }.into());
    }
    let (Some(was_fields), Some(now_fields)) = (was.as_object(), now.as_object()) else {
        return Err(
            ResumeError::Differs { path: path.into(), field: "form".into(), was: text, now: now.to_string() }.into()
        );
    };
    for (field, value) in now_fields {
        let old = was_fields.get(field).unwrap_or(&Value::Null);
        if old != value {
            let (was, now) = (old.to_string(), value.to_string());
            return Err(ResumeError::Differs { path: path.into(), field: field.replace('_', " "), was, now }.into());
        }
    }
    Ok(())
}

/// The complete lines of `games.jsonl`, each checked against its game of the schedule.
/// A last line without its newline that does not parse was cut by the stop: left out.
fn read_played(
    path: &Path,
    text: &str,
    cfg: &MatchConfig,
    pairs: &[(usize, usize)],
    jobs: &[Job],
) -> Result<Vec<PlayedGame>, ArenaError> {
    let mut played = Vec::new();
    let mut seen = HashSet::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cut = i + 1 == lines.len() && !text.ends_with('\n');
        let row: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if cut => {
                log::warn!(
                    "{}:{}: an unfinished last line (the match stopped while writing it): playing that game again",
                    path.display(),
                    i + 1
                );
                continue;
            }
            Err(e) => return Err(bad_game(path, i, e.into())),
        };
        let game = played_game(&row, line, cfg, pairs, jobs).map_err(|why| bad_game(path, i, why))?;
        if !seen.insert(game.number) {
            return Err(bad_game(path, i, BadPlayedGame::Repeated(game.number)));
        }
        played.push(game);
    }
    Ok(played)
}

fn bad_game(path: &Path, index: usize, why: BadPlayedGame) -> ArenaError {
    ResumeError::BadGame { path: path.into(), line: index + 1, why }.into()
}

/// A row (`line`, parsed) as the game of the schedule it claims to be (players, colours,
/// opening).
fn played_game(
    row: &Value,
    line: &str,
    cfg: &MatchConfig,
    pairs: &[(usize, usize)],
    jobs: &[Job],
) -> Result<PlayedGame, BadPlayedGame> {
    let text = |k: &'static str| row[k].as_str().ok_or(BadPlayedGame::Missing(k));
    let number = row["game"].as_u64().ok_or(BadPlayedGame::NoNumber)? as usize;
    let job = number
        .checked_sub(1)
        .and_then(|k| jobs.get(k))
        .ok_or(BadPlayedGame::OutOfSchedule { number, games: jobs.len() })?;
    let (a, b) = pairs[job.pair];
    let (sente_index, gote_index) = if job.first_sente { (a, b) } else { (b, a) };
    let (sente, gote) = (&cfg.players[sente_index].name, &cfg.players[gote_index].name);
    let opening = &cfg.openings[job.opening].text;
    if text("sente")? != sente || text("gote")? != gote || text("opening")? != opening {
        return Err(BadPlayedGame::OtherGame {
            number,
            sente: text("sente")?.to_string(),
            gote: text("gote")?.to_string(),
            opening: text("opening")?.to_string(),
            want_sente: sente.clone(),
            want_gote: gote.clone(),
            want_opening: opening.clone(),
        });
    }
    let winner = text("winner")?;
    let winner = winner_of_word(winner).ok_or_else(|| BadPlayedGame::Winner(winner.to_string()))?;
    let reason = text("reason")?;
    let reason = EndCause::from_name(reason).ok_or_else(|| BadPlayedGame::Reason(reason.to_string()))?;
    Ok(PlayedGame { number, pair: job.pair, sente_index, winner, reason, line: line.to_string() })
}
