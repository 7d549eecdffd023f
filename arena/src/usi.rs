//! A USI engine as a [`Player`]: `usi`/`usiok`, `setoption`, `isready`/`readyok`,
//! `usinewgame`, `position ... moves ...`, `go ...` and `bestmove` (`resign`, `win`),
//! `gameover`, `quit`.

use std::path::Path;
use std::time::{Duration, Instant};

use rules::{Position, Variant};

use crate::player::{refused, Action, EngineScore, Fault, GoRequest, Player, PlayerResult, TimeControl};
use crate::process::{EngineProcess, ProcessError};

pub struct UsiEngine {
    proc: EngineProcess,
    variant: Variant,
    /// How long the engine may take to start (`usiok`) and to get ready (`readyok`; some
    /// engines load books or large tables here): the match's hang timeout.
    handshake_timeout: Duration,
    /// The engine's name (`id name`).
    pub id_name: Option<String>,
    /// The last `info ... score` of the last search.
    score: Option<EngineScore>,
}

impl UsiEngine {
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
    ) -> Result<UsiEngine, Fault> {
        let proc = EngineProcess::spawn(argv, Some(workdir)).map_err(|e| Fault::Crash(e.to_string()))?;
        let mut e = UsiEngine { proc, variant, handshake_timeout, id_name: None, score: None };
        let deadline = Instant::now() + handshake_timeout;
        e.proc.send("usi")?;
        let mut id_name = None;
        e.proc
            .recv_until(deadline, |l| {
                if let Some(n) = l.strip_prefix("id name ") {
                    id_name = Some(n.trim().to_string());
                }
                (l.trim() == "usiok").then_some(())
            })
            .map_err(|err| e.handshake_fault(err, "usiok"))?;
        e.id_name = id_name;
        for (k, v) in options {
            e.proc.send(&format!("setoption name {k} value {v}"))?;
        }
        e.ready(deadline)?;
        Ok(e)
    }

    fn ready(&mut self, deadline: Instant) -> Result<(), Fault> {
        self.proc.send("isready")?;
        self.proc
            .recv_until(deadline, |l| (l.trim() == "readyok").then_some(()))
            .map_err(|err| self.handshake_fault(err, "readyok"))?;
        Ok(())
    }

    /// A handshake that timed out says what was missing and for how long.
    fn handshake_fault(&self, err: ProcessError, awaited: &str) -> Fault {
        match err {
            ProcessError::Timeout => Fault::Protocol(format!(
                "no {awaited} within {} s (--hang-timeout)",
                self.handshake_timeout.as_secs_f64()
            )),
            other => other.into(),
        }
    }
}

/// The `position` command for a request.
pub fn position_command(req: &GoRequest<'_>) -> String {
    let mut s = String::from("position ");
    let start_sfen = req.start.to_sfen();
    if start_sfen == req.start.variant().spec().start_sfen {
        s.push_str("startpos");
    } else {
        s.push_str("sfen ");
        s.push_str(&start_sfen);
    }
    if !req.moves.is_empty() {
        s.push_str(" moves");
        for m in req.moves {
            s.push(' ');
            s.push_str(&m.to_usi());
        }
    }
    s
}

/// The `go` command for a request (USI times are sente `btime`, gote `wtime`).
pub fn go_command(req: &GoRequest<'_>) -> String {
    match (req.limit, req.clocks) {
        (TimeControl::Nodes(n), _) => format!("go nodes {n}"),
        (TimeControl::Depth(d), _) => format!("go depth {d}"),
        (TimeControl::Byoyomi { .. }, Some(c)) => {
            format!("go btime {} wtime {} byoyomi {}", c.remaining_ms[0], c.remaining_ms[1], c.byoyomi_ms)
        }
        (TimeControl::Fischer { .. }, Some(c)) => {
            format!("go btime {} wtime {} binc {} winc {}", c.remaining_ms[0], c.remaining_ms[1], c.inc_ms, c.inc_ms)
        }
        (TimeControl::Byoyomi { ms }, None) => format!("go btime 0 wtime 0 byoyomi {ms}"),
        (TimeControl::Fischer { base_ms, inc_ms }, None) => {
            format!("go btime {base_ms} wtime {base_ms} binc {inc_ms} winc {inc_ms}")
        }
    }
}

impl Player for UsiEngine {
    fn new_game(&mut self, _start: &Position) -> Result<(), Fault> {
        self.proc.drain();
        self.ready(Instant::now() + self.handshake_timeout)?;
        self.proc.send("usinewgame")?;
        Ok(())
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        debug_assert_eq!(req.pos.variant(), self.variant);
        self.proc.drain();
        self.proc.send(&position_command(req))?;
        self.proc.send(&go_command(req))?;
        self.score = None;
        let score = &mut self.score;
        let best = self
            .proc
            .recv_until(req.deadline, |l| {
                let mut words = l.split_whitespace();
                match words.next() {
                    Some("info") => {
                        let mut rest = words.skip_while(|w| *w != "score");
                        if rest.next().is_some() {
                            *score = EngineScore::from_usi_words(rest).or(*score);
                        }
                        None
                    }
                    Some("bestmove") => Some(words.next().unwrap_or("").to_string()),
                    _ => None,
                }
            })
            .map_err(|e| match e {
                ProcessError::Timeout => {
                    // Stop the search so that the process could be reused; the arena
                    // drops the player anyway.
                    let _ = self.proc.send("stop");
                    Fault::Timeout
                }
                other => other.into(),
            })?;
        match best.as_str() {
            "resign" => Ok(Action::Resign),
            "win" => Ok(Action::Declare),
            text => req.pos.parse_usi(text).map(Action::Move).map_err(|e| refused(text, &e)),
        }
    }

    fn game_over(&mut self, result: PlayerResult) {
        let word = match result {
            PlayerResult::Win => "win",
            PlayerResult::Loss => "lose",
            PlayerResult::Draw => "draw",
        };
        let _ = self.proc.send(&format!("gameover {word}"));
    }

    fn last_score(&self) -> Option<EngineScore> {
        self.score
    }
}

impl Drop for UsiEngine {
    fn drop(&mut self) {
        self.proc.shutdown(Some("quit"), Duration::from_millis(500));
    }
}
