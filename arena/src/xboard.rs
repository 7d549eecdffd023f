//! An XBoard engine as a [`Player`], in one of two dialects:
//!
//! - **protocol 2** (HaChu, Sjaak II): `xboard`, `protover 2` (features up to
//!   `feature done=1`), `new`, `variant`, `force`, `level`/`st`/`sd`, `time`/`otim`,
//!   `usermove`, `go`; answers `move X`, `resign` or a result claim. Moves are XBoard
//!   text as `rules` reads and writes it (`Position::to_xboard`, HaChu's notation).
//! - **xshogi** (GNU Shogi 1.4, found by its `GNU Shogi` banner: it predates protocol 2
//!   and answers `xboard` with `Illegal move`): moves are USI text (`7g7f`, `P*5e`,
//!   `2d2c+`); the arena sends `new`, `depth` + N, `force` (a toggle, off after `new`),
//!   the game's moves, `go`, and reads the engine's move from its `N. ... MOVE TIME`
//!   line (each forced move is echoed first as `N. MOVE TIME`). `Resigns` is a
//!   resignation. Its thinking time is only limited by `depth`; other time controls
//!   are left to its command line (`gnushogi 1` = one second per move).

use std::path::Path;
use std::time::{Duration, Instant};

use rules::{Color, Position, Variant};

use crate::player::{refused, Action, EngineScore, Fault, GoRequest, Player, TimeControl};
use crate::process::{EngineProcess, ProcessError};

/// How long the arena waits for `feature done=1` (the protocol asks GUIs to wait at
/// least 2 seconds for engines that send no features).
const FEATURE_TIMEOUT: Duration = Duration::from_secs(5);

/// Hash memory (MB) given to XBoard engines that ask for it (`feature memory=1`).
pub const XBOARD_MEMORY_MB: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Protocol2,
    Xshogi,
}

pub struct XboardEngine {
    proc: EngineProcess,
    variant: Variant,
    pub dialect: Dialect,
    usermove: bool,
    variants: Vec<String>,
    /// Protocol 2: moves of the current game the engine knows.
    sent: usize,
    /// Protocol 2: the engine plays the side to move after each move we send.
    playing: bool,
    limits_sent: bool,
    /// The score of the last thinking-output line (`post` mode) of the last search.
    score: Option<EngineScore>,
    /// The engine answers `ping N` with `pong N` (feature ping=1).
    ping: bool,
    pings: u32,
}

/// Splits a `feature` line into (name, value) pairs; values may be quoted.
pub fn parse_features(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = line.trim().strip_prefix("feature").unwrap_or("").trim_start();
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].trim().to_string();
        let after = &rest[eq + 1..];
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            match q.find('"') {
                Some(end) => (q[..end].to_string(), &q[end + 1..]),
                None => (q.to_string(), ""),
            }
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        out.push((name, value));
        rest = next.trim_start();
    }
    out
}

/// The engine's move in a GNU Shogi (xshogi mode) line `N. MOVE T` or `N. ... MOVE T`,
/// with any `depth = ` prompt in front.
pub fn xshogi_move_line(line: &str) -> Option<String> {
    let mut l = line.trim();
    while let Some(r) = l.strip_prefix("depth =") {
        l = r.trim_start();
    }
    let mut words = l.split_whitespace();
    let num = words.next()?;
    let digits = num.strip_suffix('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut w = words.next()?;
    if w == "..." {
        w = words.next()?;
    }
    Some(w.to_string())
}

impl XboardEngine {
    /// Delays every line of the engine by `lag` on its way here (the arena's `lag=MS`).
    pub fn set_lag(&mut self, lag: Duration) {
        self.proc.set_lag(lag);
    }

    pub fn start(
        argv: &[String],
        options: &[(String, String)],
        variant: Variant,
        workdir: &Path,
        handshake_timeout: Duration,
    ) -> Result<XboardEngine, Fault> {
        let proc = EngineProcess::spawn(argv, Some(workdir)).map_err(|e| Fault::Crash(e.to_string()))?;
        let mut e = XboardEngine {
            proc,
            variant,
            dialect: Dialect::Protocol2,
            usermove: false,
            variants: Vec::new(),
            sent: 0,
            playing: false,
            limits_sent: false,
            score: None,
            ping: false,
            pings: 0,
        };
        e.proc.send("xboard")?;
        e.proc.send("protover 2")?;
        let deadline = Instant::now() + FEATURE_TIMEOUT.min(handshake_timeout);
        let mut got_features = false;
        let mut memory = false;
        loop {
            let line = match e.proc.recv(deadline) {
                Ok(l) => l,
                Err(ProcessError::Timeout) => break,
                Err(err) => return Err(err.into()),
            };
            if line.starts_with("GNU Shogi") {
                e.dialect = Dialect::Xshogi;
            }
            if e.dialect == Dialect::Xshogi && line.contains("protover") {
                break;
            }
            if line.starts_with("feature") {
                got_features = true;
                let mut done = false;
                for (k, v) in parse_features(&line) {
                    match k.as_str() {
                        "usermove" => e.usermove = v == "1",
                        "memory" => memory = v == "1",
                        "ping" => e.ping = v == "1",
                        "variants" => e.variants = v.split(',').map(|s| s.trim().to_string()).collect(),
                        "done" => done = v == "1",
                        _ => {}
                    }
                    if k != "done" {
                        e.proc.send(&format!("accepted {k}"))?;
                    }
                }
                if done {
                    break;
                }
            }
        }
        if e.dialect == Dialect::Protocol2 && !got_features {
            // A protocol 1 engine: go on with the defaults (moves without usermove).
        }
        if e.dialect == Dialect::Xshogi {
            if variant != Variant::Shogi {
                return Err(Fault::Protocol(format!("GNU Shogi plays standard shogi only, not {variant}")));
            }
            if !options.is_empty() {
                return Err(Fault::Protocol("GNU Shogi (xshogi mode) takes no options".into()));
            }
        } else {
            // HaChu needs its hash size set before it accepts dai moves.
            if memory {
                e.proc.send(&format!("memory {XBOARD_MEMORY_MB}"))?;
            }
            for (k, v) in options {
                e.proc.send(&format!("option {k}={v}"))?;
            }
        }
        Ok(e)
    }

    fn variant_command(&self) -> Option<String> {
        match self.variant {
            Variant::Shogi => self.variants.iter().any(|v| v == "shogi").then(|| "variant shogi".to_string()),
            Variant::Sho => Some("variant sho".to_string()),
            Variant::Dai => Some("variant dai".to_string()),
        }
    }

    fn send_limits(&mut self, limit: TimeControl) -> Result<(), Fault> {
        match limit {
            TimeControl::Depth(d) => self.proc.send(&format!("sd {d}"))?,
            TimeControl::Byoyomi { ms } => self.proc.send(&format!("st {}", (ms / 1000).max(1)))?,
            TimeControl::Fischer { base_ms, inc_ms } => {
                let secs = base_ms / 1000;
                let inc = inc_ms as f64 / 1000.0;
                self.proc.send(&format!("level 0 {}:{:02} {}", secs / 60, secs % 60, inc))?
            }
            TimeControl::Nodes(_) => return Err(Fault::Protocol("XBoard engines cannot play at fixed nodes".into())),
        }
        Ok(())
    }

    fn send_clocks(&mut self, req: &GoRequest<'_>) -> Result<(), Fault> {
        if let Some(c) = req.clocks {
            let me = req.pos.side_to_move();
            let cs = |ms: u64| ms / 10;
            let mine = c.remaining_ms[me.index()] + c.byoyomi_ms;
            let theirs = c.remaining_ms[me.opponent().index()] + c.byoyomi_ms;
            self.proc.send(&format!("time {}", cs(mine)))?;
            self.proc.send(&format!("otim {}", cs(theirs)))?;
        }
        Ok(())
    }

    fn send_move(&mut self, text: &str) -> Result<(), Fault> {
        if self.usermove {
            self.proc.send(&format!("usermove {text}"))?;
        } else {
            self.proc.send(text)?;
        }
        Ok(())
    }

    fn go_protocol2(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        let n = req.moves.len();
        if !self.limits_sent {
            self.send_limits(req.limit)?;
            self.limits_sent = true;
        }
        if self.playing && self.sent + 1 == n {
            // The engine waits for the opponent's move and then thinks by itself.
            self.send_clocks(req)?;
            let text = req.pos.clone_before_last().to_xboard(req.moves[n - 1]);
            self.send_move(&text)?;
        } else {
            self.proc.send("force")?;
            let mut pos = req.start.clone();
            for (i, &m) in req.moves.iter().enumerate() {
                if i >= self.sent {
                    let text = pos.to_xboard(m);
                    self.send_move(&text)?;
                }
                pos.play(m);
            }
            self.send_clocks(req)?;
            self.proc.send("go")?;
            self.playing = true;
        }
        self.sent = n;
        let side = req.pos.side_to_move();
        // HaChu sends a lion double move as two lines, the first ending in ','.
        let mut legs = String::new();
        self.score = None;
        let score = &mut self.score;
        let reply = self.proc.recv_until(req.deadline, |l| match classify_protocol2(l, side) {
            None => {
                *score = thinking_score(l).or(*score);
                None
            }
            Some(Reply::Move(m)) if m.ends_with(',') => {
                legs.push_str(&m);
                None
            }
            Some(Reply::Move(m)) => Some(Reply::Move(std::mem::take(&mut legs) + &m)),
            other => other,
        });
        let reply = match reply {
            Ok(r) => r,
            Err(ProcessError::Timeout) => return Err(Fault::Timeout),
            Err(e) => return Err(e.into()),
        };
        match reply {
            Reply::Move(text) => {
                let mv = req.pos.parse_xboard(&text).map_err(|e| refused(&text, &e.into()))?;
                self.sent = n + 1;
                Ok(Action::Move(mv))
            }
            Reply::Resign => Ok(Action::Resign),
            Reply::Claim(c) => Err(Fault::FalseClaim(c)),
            Reply::Error(e) => Err(Fault::Protocol(e)),
        }
    }

    fn go_xshogi(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        if req.start.to_sfen() != Variant::Shogi.spec().start_sfen {
            return Err(Fault::Protocol("GNU Shogi cannot start from a SFEN position".into()));
        }
        self.proc.drain();
        self.proc.send("new")?;
        match req.limit {
            TimeControl::Depth(d) => {
                self.proc.send("depth")?;
                self.proc.send(&d.to_string())?;
            }
            TimeControl::Nodes(_) => return Err(Fault::Protocol("GNU Shogi cannot play at fixed nodes".into())),
            _ => {}
        }
        self.proc.send("force")?;
        for m in req.moves {
            self.proc.send(&m.to_usi())?;
        }
        self.proc.send("go")?;
        let mut echoes = req.moves.len();
        let reply = self.proc.recv_until(req.deadline, |l| {
            if l.contains("Illegal move") || l.contains("Illegal position") {
                return Some(Reply::Error(l.trim().to_string()));
            }
            if l.trim_start().starts_with("Resigns") {
                return Some(Reply::Resign);
            }
            let mv = xshogi_move_line(l)?;
            if echoes > 0 {
                echoes -= 1;
                return None;
            }
            Some(Reply::Move(mv))
        });
        let reply = match reply {
            Ok(r) => r,
            Err(ProcessError::Timeout) => return Err(Fault::Timeout),
            Err(e) => return Err(e.into()),
        };
        match reply {
            Reply::Move(text) => req.pos.parse_usi(&text).map(Action::Move).map_err(|e| refused(&text, &e)),
            Reply::Resign => Ok(Action::Resign),
            Reply::Claim(c) => Err(Fault::FalseClaim(c)),
            Reply::Error(e) => Err(Fault::Protocol(e)),
        }
    }
}

enum Reply {
    Move(String),
    Resign,
    Claim(String),
    Error(String),
}

/// Scores at or beyond this many centipawns are mates (XBoard engines report a mate as a
/// large score, 100000 - N or similar).
const XBOARD_MATE_CP: i32 = 20000;

/// The score of a `post` thinking line `PLY SCORE TIME NODES PV...`.
fn thinking_score(line: &str) -> Option<EngineScore> {
    let mut words = line.split_whitespace();
    words.next()?.trim_end_matches(['.', '&']).parse::<u32>().ok()?;
    let cp: i32 = words.next()?.parse().ok()?;
    words.next()?.parse::<u64>().ok()?;
    Some(if cp.abs() >= XBOARD_MATE_CP {
        EngineScore::Mate(cp.signum() * (100000 - cp.abs()).max(1))
    } else {
        EngineScore::Cp(cp)
    })
}

/// What a protocol 2 line means while the engine (playing `side`) is to move.
fn classify_protocol2(line: &str, side: Color) -> Option<Reply> {
    let l = line.trim();
    if let Some(m) = l.strip_prefix("move ") {
        return Some(Reply::Move(m.trim().to_string()));
    }
    if l == "resign" || l == "tellics resign" {
        return Some(Reply::Resign);
    }
    if l.starts_with("Illegal move") || l.starts_with("Error") {
        return Some(Reply::Error(l.to_string()));
    }
    // Result claims. In XBoard terms the first mover (sente) is "white": 1-0 = sente wins.
    let own_loss = match side {
        Color::Sente => "0-1",
        Color::Gote => "1-0",
    };
    if l.starts_with(own_loss) {
        return Some(Reply::Resign);
    }
    // HaChu resigns dai games as gote with `0-1 {resign}`: whatever the result's colours,
    // a claim whose reason is a resignation is the claimant's.
    if (l.starts_with("1-0") || l.starts_with("0-1")) && l.contains("{resign") {
        return Some(Reply::Resign);
    }
    if l.starts_with("1-0") || l.starts_with("0-1") || l.starts_with("1/2-1/2") {
        return Some(Reply::Claim(l.to_string()));
    }
    None
}

trait BeforeLast {
    fn clone_before_last(&self) -> Position;
}

impl BeforeLast for Position {
    fn clone_before_last(&self) -> Position {
        let mut p = self.clone();
        p.undo();
        p
    }
}

/// How long an engine may take to answer `ping` at the start of a game (it may first
/// have to stop a search of the previous game).
const PING_TIMEOUT: Duration = Duration::from_secs(30);

impl XboardEngine {
    /// Waits for `pong` to a fresh `ping`, dropping every line before it: output of the
    /// previous game that came after it ended (Sjaak II's own result claim after its
    /// mating move, a move it was still computing) would otherwise be read as this game's
    /// first reply (a resignation, then an illegal move).
    fn sync(&mut self) -> Result<(), Fault> {
        if !self.ping {
            return Ok(());
        }
        self.pings += 1;
        let pong = format!("pong {}", self.pings);
        self.proc.send(&format!("ping {}", self.pings))?;
        match self.proc.recv_until(Instant::now() + PING_TIMEOUT, |l| (l.trim() == pong).then_some(())) {
            Ok(()) => Ok(()),
            Err(ProcessError::Timeout) => Err(Fault::Timeout),
            Err(e) => Err(e.into()),
        }
    }
}

impl Player for XboardEngine {
    fn new_game(&mut self, start: &Position) -> Result<(), Fault> {
        self.proc.drain();
        self.sent = 0;
        self.playing = false;
        self.limits_sent = false;
        if self.dialect == Dialect::Xshogi {
            return Ok(());
        }
        if start.to_sfen() != self.variant.spec().start_sfen {
            return Err(Fault::Protocol("the arena can only start XBoard engines from the start position".into()));
        }
        self.proc.send("new")?;
        if let Some(v) = self.variant_command() {
            self.proc.send(&v)?;
        }
        self.proc.send("easy")?;
        // Thinking output: the scores of teacher data (`koma gen`).
        self.proc.send("post")?;
        self.proc.send("force")?;
        self.sync()
    }

    fn last_score(&self) -> Option<EngineScore> {
        self.score
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        match self.dialect {
            Dialect::Protocol2 => self.go_protocol2(req),
            Dialect::Xshogi => self.go_xshogi(req),
        }
    }
}

impl Drop for XboardEngine {
    fn drop(&mut self) {
        self.proc.shutdown(Some("quit"), Duration::from_millis(500));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_claims_with_a_resignation_are_the_claimants() {
        let resigns = |l: &str, side| matches!(classify_protocol2(l, side), Some(Reply::Resign));
        assert!(resigns("0-1 {resign}", Color::Gote) && resigns("0-1 {resign}", Color::Sente));
        assert!(resigns("1-0 {White resigns}", Color::Gote));
        assert!(resigns("1-0 {resign}", Color::Sente));
        assert!(matches!(classify_protocol2("1-0 {Sente mates}", Color::Sente), Some(Reply::Claim(_))));
        assert!(matches!(classify_protocol2("1/2-1/2 {50-move rule}", Color::Gote), Some(Reply::Claim(_))));
    }

    #[test]
    fn features_and_gnushogi_lines() {
        let f = parse_features(r#"feature ping=1 setboard=1 myname="HaChu 0.21" variants="chu,sho,dai" done=1"#);
        assert_eq!(f[2], ("myname".to_string(), "HaChu 0.21".to_string()));
        assert_eq!(f[3].1, "chu,sho,dai");
        assert_eq!(f[4], ("done".to_string(), "1".to_string()));
        assert_eq!(xshogi_move_line("1. ... 8b4b -3020").as_deref(), Some("8b4b"));
        assert_eq!(xshogi_move_line("depth = 1. 7g7f 300000").as_deref(), Some("7g7f"));
        assert_eq!(xshogi_move_line("12. P*5e 299000").as_deref(), Some("P*5e"));
        assert_eq!(xshogi_move_line("Illegal move (no match) xboard"), None);
        assert_eq!(xshogi_move_line("GNU Shogi 1.4.2"), None);
    }
}
