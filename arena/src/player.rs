//! The [`Player`] trait: what the arena asks of each side of a game ([`GoRequest`] under
//! a [`TimeControl`] with its [`Clocks`]), what a player answers ([`Action`], a
//! [`Fault`], an [`EngineScore`]) and how its game ended ([`PlayerResult`]). The players
//! themselves live in their own modules; the `spec` module builds them from the command line.

use std::str::FromStr;
use std::time::Instant;

use rules::{EndRules, Move, Position};

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
    /// The match's end rules: the entering king rule a declaration is judged by, the
    /// length limit.
    pub end_rules: EndRules,
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
            EngineScore::Cp(cp) => rules::score::win_probability(cp as f64, scale),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
