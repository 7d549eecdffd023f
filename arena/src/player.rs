//! Players: what the arena asks of each side of a game, how players are given on the
//! command line ([`PlayerSpec`]) and the time controls ([`TimeControl`]).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use rules::{Move, Position, Variant};

use crate::koma::{KomaConfig, KomaNetwork, KomaPlayer};
use crate::process::ProcessError;

/// A time control for a match (`--tc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// `byoyomi=MS`: every move gets MS milliseconds (no main time).
    Byoyomi { ms: u64 },
    /// `fischer=BASE_MS+INC_MS`: a main time and an increment after each move.
    Fischer { base_ms: u64, inc_ms: u64 },
    /// `nodes=N`: a fixed number of nodes (simulations for koma) per move, no clock.
    Nodes(u64),
    /// `depth=N`: a fixed search depth per move, no clock.
    Depth(u32),
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl::Byoyomi { ms: 1000 }
    }
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            TimeControl::Byoyomi { ms } => write!(f, "byoyomi={ms}"),
            TimeControl::Fischer { base_ms, inc_ms } => write!(f, "fischer={base_ms}+{inc_ms}"),
            TimeControl::Nodes(n) => write!(f, "nodes={n}"),
            TimeControl::Depth(d) => write!(f, "depth={d}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad time control '{0}' (expected byoyomi=MS, fischer=BASE_MS+INC_MS, nodes=N or depth=N)")]
pub struct BadTimeControl(pub String);

impl FromStr for TimeControl {
    type Err = BadTimeControl;
    fn from_str(s: &str) -> Result<TimeControl, BadTimeControl> {
        let bad = || BadTimeControl(s.to_string());
        let (key, value) = s.split_once('=').ok_or_else(bad)?;
        let num = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        let tc = match key.trim() {
            "byoyomi" => TimeControl::Byoyomi { ms: num(value)? },
            "fischer" => {
                let (b, i) = value.split_once('+').ok_or_else(bad)?;
                TimeControl::Fischer { base_ms: num(b)?, inc_ms: num(i)? }
            }
            "nodes" => TimeControl::Nodes(num(value)?),
            "depth" => TimeControl::Depth(u32::try_from(num(value)?).map_err(|_| bad())?),
            _ => return Err(bad()),
        };
        match tc {
            TimeControl::Nodes(0) | TimeControl::Depth(0) | TimeControl::Byoyomi { ms: 0 } => Err(bad()),
            TimeControl::Fischer { base_ms: 0, inc_ms: 0 } => Err(bad()),
            _ => Ok(tc),
        }
    }
}

impl TimeControl {
    /// Whether a clock runs (byoyomi, Fischer).
    pub fn has_clock(self) -> bool {
        matches!(self, TimeControl::Byoyomi { .. } | TimeControl::Fischer { .. })
    }
}

/// The clocks of a game with a clock-based time control, at the moment of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    /// Main time left, milliseconds, indexed by [`rules::Color::index`] (sente, gote).
    pub remaining_ms: [u64; 2],
    pub byoyomi_ms: u64,
    pub inc_ms: u64,
}

/// What a player is asked: the position (with the game's history), how the game got
/// there, and the limits of this move.
pub struct GoRequest<'a> {
    /// The position to move in; its history goes back to `start`.
    pub pos: &'a Position,
    /// Where the game started (the opening's base position, usually the start position).
    pub start: &'a Position,
    /// The moves from `start` to `pos`.
    pub moves: &'a [Move],
    /// The limit this player moves under (its own fixed nodes/depth or the match's).
    pub limit: TimeControl,
    /// The clocks, with a clock-based limit.
    pub clocks: Option<Clocks>,
    /// When the arena stops waiting: a later answer is a loss on time (or a hang).
    pub deadline: Instant,
}

/// A player's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Move(Move),
    Resign,
    /// A win claimed by the 27-point declaration rule (USI `bestmove win`).
    Declare,
}

/// The fault of an engine whose move `text` the rules refused with `e`.
pub fn refused(text: &str, e: &rules::MoveError) -> Fault {
    let why = match e {
        rules::MoveError::Illegal { why, .. } | rules::MoveError::Xboard(rules::XboardError::Illegal { why, .. }) => {
            why.to_string()
        }
        other => other.to_string(),
    };
    Fault::Illegal { text: text.to_string(), why }
}

/// A player failed to answer properly; it loses the game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// `text` is the move as the engine sent it, `why` the rules' reason for refusing it.
    #[error("illegal move '{text}': {why}")]
    Illegal { text: String, why: String },
    #[error("no answer before the deadline")]
    Timeout,
    #[error("crash: {0}")]
    Crash(String),
    /// The engine broke the protocol (refused our move, sent garbage).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A result claim (XBoard) that the rules do not support.
    #[error("false claim '{0}'")]
    FalseClaim(String),
}

impl From<ProcessError> for Fault {
    fn from(e: ProcessError) -> Fault {
        match e {
            ProcessError::Timeout => Fault::Timeout,
            other => Fault::Crash(other.to_string()),
        }
    }
}

/// What an engine said its last search found, from the mover's view (USI `info ... score
/// cp N` / `score mate N`; XBoard thinking output). Teacher data (`koma gen`) turns it into
/// a value target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineScore {
    /// Centipawns (the engine's own scale).
    Cp(i32),
    /// Mate in N plies: positive when the mover mates, negative when it is mated.
    Mate(i32),
}

impl EngineScore {
    /// Parses the words after `score` in a USI `info` line (`cp 35`, `mate -3`, `mate +`,
    /// `cp 120 lowerbound`).
    pub fn from_usi_words<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<EngineScore> {
        match words.next()? {
            "cp" => words.next()?.parse().ok().map(EngineScore::Cp),
            "mate" => match words.next()? {
                "+" => Some(EngineScore::Mate(i32::MAX)),
                "-" => Some(EngineScore::Mate(-i32::MAX)),
                n => n.parse::<i32>().ok().map(EngineScore::Mate),
            },
            _ => None,
        }
    }

    /// The mover's win probability: a logistic of the centipawns with `scale` centipawns
    /// per unit (dlshogi's `eval_coef`: 756 for its engines' scale; Ponanza-style engines
    /// 600); a mate is 1 or 0.
    pub fn win_probability(self, scale: f64) -> f64 {
        match self {
            EngineScore::Cp(cp) => 1.0 / (1.0 + (-(cp as f64) / scale).exp()),
            EngineScore::Mate(n) if n > 0 => 1.0,
            EngineScore::Mate(_) => 0.0,
        }
    }
}

/// How the game ended for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerResult {
    Win,
    Loss,
    Draw,
}

/// One side of a game. A player object lives across games (an engine process is
/// started once per worker and reused); after a [`Fault`] the arena drops it and makes
/// a fresh one.
pub trait Player: Send {
    /// Prepares a new game that starts from `start` (the opening is replayed as moves
    /// in later requests).
    fn new_game(&mut self, start: &Position) -> Result<(), Fault>;
    /// The player's move in `req.pos`.
    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault>;
    /// The game ended (not called after this player's own fault).
    fn game_over(&mut self, _result: PlayerResult) {}
    /// The score the player reported for its last move, if it reports one.
    fn last_score(&self) -> Option<EngineScore> {
        None
    }
}

/// Engines run in the match's own folder, so an option naming a file or folder relative
/// to where `koma arena` was started (`ModelFile=runs/x/checkpoints/ckpt-00000100`) is
/// handed over as an absolute path; every other value goes as written.
fn absolute_paths(options: &[(String, String)]) -> Vec<(String, String)> {
    let Ok(here) = std::env::current_dir() else { return options.to_vec() };
    options
        .iter()
        .map(|(k, v)| {
            let path = Path::new(v);
            // A checkpoint is named by its stem, so a folder that exists is enough.
            let names_a_place = if v.contains('/') {
                path.parent().is_some_and(|dir| dir.as_os_str().is_empty() || dir.is_dir())
            } else {
                v.contains('.') && v.parse::<f64>().is_err() && path.exists()
            };
            let value = if path.is_relative() && names_a_place {
                here.join(path).to_string_lossy().into_owned()
            } else {
                v.clone()
            };
            (k.clone(), value)
        })
        .collect()
}

/// How a player is given on the command line: `NAME=SPEC` with SPEC one of `random`,
/// `greedy`, `koma:CHECKPOINT[,nodes=N][,device=D][,batch=B][,threads=T][,FIELD=VALUE...]`
/// (FIELD: a `[search]` field, see [`KomaConfig`]), `usi:COMMAND[,Option=Value...]`,
/// `xboard:COMMAND[,Option=Value...]`.
///
/// For engines the keys `depth` and `nodes` (lower case) are the arena's, not options:
/// they fix this player's limit per move whatever the match's `--tc` is (USI
/// `go depth N` / `go nodes N`, XBoard `sd N`). Every other `Key=Value` becomes a USI
/// `setoption name Key value Value` or an XBoard `option Key=Value`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    pub name: String,
    pub kind: SpecKind,
    /// Per-player fixed limit (`nodes=N` or `depth=N`), overriding the match's.
    pub limit: Option<TimeControl>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SpecKind {
    Random,
    Greedy,
    Koma { checkpoint: PathBuf, device: String, config: KomaConfig },
    Usi { argv: Vec<String>, options: Vec<(String, String)> },
    Xboard { argv: Vec<String>, options: Vec<(String, String)> },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad player '{text}': {why}")]
pub struct BadPlayerSpec {
    pub text: String,
    pub why: String,
}

impl FromStr for PlayerSpec {
    type Err = BadPlayerSpec;
    fn from_str(text: &str) -> Result<PlayerSpec, BadPlayerSpec> {
        let bad = |why: &str| BadPlayerSpec { text: text.to_string(), why: why.to_string() };
        let (name, spec) = text.split_once('=').ok_or_else(|| bad("expected NAME=SPEC"))?;
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(bad("the name must be one word"));
        }
        let spec = spec.trim();
        let (kind_word, rest) = match spec.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (spec, None),
        };
        let mut parts = rest.map(|r| r.split(',').map(str::trim).collect::<Vec<_>>()).unwrap_or_default();
        let head = if parts.is_empty() { None } else { Some(parts.remove(0)) };
        let mut options = Vec::new();
        let mut limit = None;
        let mut device = "cpu".to_string();
        for p in parts {
            if p.is_empty() {
                continue;
            }
            let (k, v) = p.split_once('=').ok_or_else(|| bad(&format!("'{p}' is not Key=Value")))?;
            let (k, v) = (k.trim(), v.trim());
            match k {
                "nodes" | "depth" => {
                    let tc = format!("{k}={v}").parse::<TimeControl>().map_err(|e| bad(&e.to_string()))?;
                    limit = Some(tc);
                }
                "device" if kind_word == "koma" => device = v.to_string(),
                _ => options.push((k.to_string(), v.to_string())),
            }
        }
        let argv = |head: Option<&str>| -> Result<Vec<String>, BadPlayerSpec> {
            let h = head.ok_or_else(|| bad("missing the engine command"))?;
            let argv = shlex::split(h).ok_or_else(|| bad("unbalanced quotes in the command"))?;
            if argv.is_empty() {
                return Err(bad("missing the engine command"));
            }
            Ok(argv)
        };
        let kind = match kind_word {
            "random" | "greedy" if head.is_some() => return Err(bad("random and greedy take no arguments")),
            "random" => SpecKind::Random,
            "greedy" => SpecKind::Greedy,
            "koma" => {
                let path = head.filter(|h| !h.is_empty()).ok_or_else(|| bad("missing the checkpoint path"))?;
                let mut config = KomaConfig::default();
                for (k, v) in &options {
                    config.set(k, v).map_err(|why| bad(&why))?;
                }
                if matches!(limit, Some(TimeControl::Depth(_))) {
                    return Err(bad("koma players take nodes=N, not depth"));
                }
                SpecKind::Koma { checkpoint: PathBuf::from(path), device, config }
            }
            "usi" => SpecKind::Usi { argv: argv(head)?, options },
            "xboard" => {
                if matches!(limit, Some(TimeControl::Nodes(_))) {
                    return Err(bad("XBoard engines take depth=N, not nodes"));
                }
                SpecKind::Xboard { argv: argv(head)?, options }
            }
            _ => return Err(bad("SPEC must be random, greedy, koma:..., usi:... or xboard:...")),
        };
        Ok(PlayerSpec { name: name.to_string(), kind, limit })
    }
}

impl PlayerSpec {
    /// The limit this player moves under in a match with time control `tc`.
    pub fn effective_limit(&self, tc: TimeControl) -> TimeControl {
        match (&self.kind, self.limit) {
            (_, Some(l)) => l,
            // Built-in players ignore limits; koma under depth falls back to its default nodes.
            (SpecKind::Koma { .. }, None) if matches!(tc, TimeControl::Depth(_)) => {
                TimeControl::Nodes(crate::builtin::DEFAULT_KOMA_NODES)
            }
            _ => tc,
        }
    }

    /// Whether the player is one of ours (no process).
    pub fn is_builtin(&self) -> bool {
        matches!(self.kind, SpecKind::Random | SpecKind::Greedy | SpecKind::Koma { .. })
    }

    /// Creates the player for a game of `variant`. Engine processes run in `workdir` and
    /// must finish their handshake within `handshake_timeout`.
    pub fn create(
        &self,
        variant: Variant,
        seed: u64,
        workdir: &Path,
        handshake_timeout: Duration,
    ) -> Result<Box<dyn Player>, String> {
        Ok(match &self.kind {
            SpecKind::Random => Box::new(crate::builtin::Baseline::random(seed)),
            SpecKind::Greedy => Box::new(crate::builtin::Baseline::greedy(seed)),
            SpecKind::Koma { checkpoint, device, config } => {
                let network = KomaNetwork::load(checkpoint, device, variant).map_err(|e| e.to_string())?;
                Box::new(KomaPlayer::new(network, config.clone(), variant, seed))
            }
            SpecKind::Usi { argv, options } => Box::new(
                crate::usi::UsiEngine::start(argv, &absolute_paths(options), variant, workdir, handshake_timeout)
                    .map_err(|e| e.to_string())?,
            ),
            SpecKind::Xboard { argv, options } => Box::new(
                crate::xboard::XboardEngine::start(argv, &absolute_paths(options), variant, workdir, handshake_timeout)
                    .map_err(|e| e.to_string())?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let p: PlayerSpec = "fsf=usi:/usr/games/fairy-stockfish,Threads=1,depth=3".parse().unwrap();
        assert_eq!(p.name, "fsf");
        assert_eq!(p.limit, Some(TimeControl::Depth(3)));
        assert_eq!(
            p.kind,
            SpecKind::Usi {
                argv: vec!["/usr/games/fairy-stockfish".into()],
                options: vec![("Threads".into(), "1".into())]
            }
        );
        let p: PlayerSpec = "gps=usi:gpsusi --foo 'a b',LimitDepth=4".parse().unwrap();
        assert!(matches!(&p.kind, SpecKind::Usi { argv, .. } if argv == &["gpsusi", "--foo", "a b"]));
        let p: PlayerSpec = "net=koma:runs/x/ckpt-100,nodes=64".parse().unwrap();
        assert_eq!(p.limit, Some(TimeControl::Nodes(64)));
        assert!("r=random".parse::<PlayerSpec>().is_ok());
        assert!("g=greedy".parse::<PlayerSpec>().is_ok());
        let p: PlayerSpec = "net=koma:ckpt,batch=4,threads=2,c_puct=1.5,gumbel=true".parse().unwrap();
        let SpecKind::Koma { config, .. } = &p.kind else { panic!("{p:?}") };
        assert_eq!((config.batch_size, config.threads), (4, 2));
        assert_eq!((config.search.c_puct, config.search.gumbel), (1.5, true));
        assert_eq!(config.search.fpu_reduction, search::SearchConfig::default().fpu_reduction);
        for bad in [
            "random",
            "x=usi:",
            "x=koma:",
            "x=foo",
            "x=usi:e,Hash",
            "x=random:3",
            "a b=random",
            "x=koma:c,depth=3",
            "x=koma:c,batch=0",
            "x=koma:c,threads=x",
            "x=koma:c,Hash=16",
            "x=koma:c,c_puct=high",
        ] {
            assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn time_controls_parse() {
        assert_eq!("byoyomi=1000".parse(), Ok(TimeControl::Byoyomi { ms: 1000 }));
        assert_eq!("fischer=10000+100".parse(), Ok(TimeControl::Fischer { base_ms: 10000, inc_ms: 100 }));
        assert_eq!("nodes=800".parse(), Ok(TimeControl::Nodes(800)));
        assert_eq!("depth=3".parse(), Ok(TimeControl::Depth(3)));
        for bad in ["", "byoyomi", "depth=0", "fischer=100", "moves=3", "nodes=x"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad}");
        }
        assert_eq!(TimeControl::Fischer { base_ms: 1, inc_ms: 2 }.to_string(), "fischer=1+2");
    }
    #[test]
    fn option_paths_relative_to_the_arena_become_absolute() {
        let here = std::env::current_dir().unwrap();
        let options: Vec<(String, String)> = [
            ("ModelFile", "src/ckpt-00000100"),
            ("EvalDir", "src"),
            ("Book", "Cargo.toml"),
            ("Threads", "1"),
            ("Ratio", "0.5"),
            ("Missing", "no/such/dir/file"),
            ("Absolute", "/usr/bin"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let got = absolute_paths(&options);
        let value = |k: &str| got.iter().find(|(key, _)| key == k).unwrap().1.clone();
        assert_eq!(value("ModelFile"), here.join("src/ckpt-00000100").to_string_lossy());
        assert_eq!(value("Book"), here.join("Cargo.toml").to_string_lossy());
        for (k, v) in [
            ("EvalDir", "src"),
            ("Threads", "1"),
            ("Ratio", "0.5"),
            ("Missing", "no/such/dir/file"),
            ("Absolute", "/usr/bin"),
        ] {
            assert_eq!(value(k), v, "{k}");
        }
    }
}
