//! XBoard (WinBoard) protocol 2, enough to play sho and dai shogi (and standard shogi)
//! in XBoard and against HaChu or Sjaak II.
//!
//! Moves are HaChu's text ([`rules::Position::to_xboard`]): `<from><to>[+]`, lion double
//! moves `<from><mid>,<mid><to>`, the pass `@@@@`, drops `P@e5`. XBoard's "white" is the
//! first player (sente), so `1-0` means sente won.
//!
//! Commands: `xboard`, `protover`, `new`, `variant`, `force`, `go`, `usermove` (and bare
//! moves), `?`, `level`, `st`, `sd N` (MCTS has no depth: a limit of 100 N² simulations, as USI `go depth`), `time`, `otim`,
//! `result`, `setboard` (SFEN of the current variant), `undo`, `remove`, `ping`, `post`,
//! `nopost`, `hard`, `easy`, `memory` (tree size, MB), `cores` (threads), `option
//! NAME=VALUE` (the USI options), `quit`; others are answered with `Error (...)`.

use std::io::BufRead;
use std::sync::{Arc, Mutex};

use rules::{Color, Position, Variant, XboardMove};

use crate::engine::{immediate, Core, Immediate};
use crate::go::{nodes_for_depth, MAX_DEPTH, MAX_TIME_MS};
use crate::input::{read_line, Line};
use crate::options::Options;
use crate::usi::ENGINE_NAME;
use crate::ProtocolOutput;
use search::time::{self, Clock};
use search::{Info, Limits, Score, SearchOutcome};

/// The game as both threads see it.
struct Game {
    pos: Position,
    /// Bumped whenever a running search's move must be thrown away.
    epoch: u64,
    over: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct TimeControl {
    moves_per_session: u32,
    base_ms: u64,
    inc_ms: u64,
    st_ms: Option<u64>,
    own_ms: Option<u64>,
    /// `sd N`: a simulation limit ([`crate::go::nodes_for_depth`]).
    depth: Option<u64>,
    set: bool,
}

pub struct Xboard {
    core: Core,
    out: ProtocolOutput,
    game: Arc<Mutex<Game>>,
    force: bool,
    engine_side: Color,
    post: Arc<std::sync::atomic::AtomicBool>,
    tc: TimeControl,
}

/// XBoard's name of a variant.
pub fn variant_name(v: Variant) -> &'static str {
    match v {
        Variant::Shogi => "shogi",
        Variant::Sho => "sho",
        Variant::Dai => "dai",
    }
}

fn parse_variant(name: &str) -> Option<Variant> {
    match name {
        "9x9+0_shogi" | "shoshogi" => Some(Variant::Sho),
        "daishogi" => Some(Variant::Dai),
        other => other.parse().ok(),
    }
}

/// A command (or its argument) as an answer quotes it: whole unless it is longer than
/// [`crate::ECHO_CHARS`] characters.
fn echo(text: &str) -> rules::Excerpt<'_> {
    rules::Excerpt::with_max(text, crate::ECHO_CHARS)
}

fn result_text(o: &rules::Outcome) -> String {
    let r = match o.winner {
        Some(Color::Sente) => "1-0",
        Some(Color::Gote) => "0-1",
        None => "1/2-1/2",
    };
    let who = match o.winner {
        Some(Color::Sente) => "sente wins",
        Some(Color::Gote) => "gote wins",
        None => "draw",
    };
    format!("{r} {{{who} by {}}}", o.reason.name().replace('_', " "))
}

impl Xboard {
    pub fn new(out: ProtocolOutput) -> Xboard {
        let core = Core::new();
        let pos = Position::startpos(core.variant());
        Xboard {
            core,
            out,
            game: Arc::new(Mutex::new(Game { pos, epoch: 0, over: false })),
            force: false,
            engine_side: Color::Gote,
            post: Arc::new(std::sync::atomic::AtomicBool::new(true)),
            tc: TimeControl::default(),
        }
    }

    fn game(&self) -> std::sync::MutexGuard<'_, Game> {
        self.game.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Error (kind): command`, the command cut short ([`crate::ECHO_CHARS`]).
    fn error(&self, kind: &str, cmd: &str) {
        self.out.line(&format!("Error ({kind}): {}", echo(cmd)));
    }

    /// Reads commands until `quit` or the end of the input. A line that is not UTF-8
    /// (or too long) is answered with `Error (...)` and skipped.
    pub fn run(&mut self, mut input: impl BufRead) {
        while let Some(line) = read_line(&mut input) {
            let go_on = match &line {
                Line::Text(text) => self.handle(text),
                bad => {
                    self.out.line(&bad_line_error(bad));
                    true
                }
            };
            if !go_on {
                break;
            }
        }
        self.abort_search();
    }

    /// Stops a running search and throws its move away.
    fn abort_search(&mut self) {
        self.game().epoch += 1;
        self.core.stop();
    }

    fn reset(&mut self, pos: Position) {
        self.abort_search();
        let mut g = self.game();
        g.pos = pos;
        g.over = false;
        drop(g);
        self.core.new_game();
    }

    pub fn handle(&mut self, line: &str) -> bool {
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
        match cmd {
            "" => {}
            "xboard" | "accepted" | "rejected" | "random" | "computer" | "name" | "rating" | "ics" | "." | "hard"
            | "easy" | "draw" | "hint" | "bk" | "nps" | "white" | "black" | "otim" | "exit" => {}
            "protover" => {
                let options = Options::xboard_features();
                self.out.line(&format!(
                    "feature myname=\"{ENGINE_NAME}\" variants=\"shogi,sho,dai\" ping=1 setboard=1 usermove=1 time=1 \
                     colors=0 sigint=0 sigterm=0 reuse=1 analyze=0 memory=1 smp=1 debug=1 playother=1"
                ));
                for o in options {
                    self.out.line(&format!("feature {o}"));
                }
                self.out.line("feature done=1");
            }
            "new" => {
                self.reset(Position::startpos(self.core.variant()));
                self.force = false;
                self.engine_side = Color::Gote;
                self.tc.own_ms = None;
                self.tc.depth = None;
                self.load_network();
            }
            "variant" => match parse_variant(rest) {
                Some(v) => {
                    self.abort_search();
                    if let Err(e) = self.core.set_option("UCI_Variant", v.name()) {
                        self.out.line(&format!("Error ({e}): variant {}", echo(rest)));
                    }
                    self.reset(Position::startpos(v));
                    self.load_network();
                }
                None => self.error("unsupported variant", line),
            },
            "force" => {
                self.abort_search();
                self.force = true;
            }
            "playother" => {
                self.force = false;
                let side = self.game().pos.side_to_move();
                self.engine_side = side.opponent();
            }
            "go" => {
                self.force = false;
                let side = self.game().pos.side_to_move();
                self.engine_side = side;
                self.think();
            }
            "?" => self.core.stop(),
            "usermove" => self.usermove(rest),
            "level" => self.level(rest, line),
            "st" => match seconds_to_ms(rest) {
                Some(ms) if ms > 0 => {
                    self.tc.st_ms = Some(ms);
                    self.tc.set = true;
                }
                _ => self.error("bad st: expected seconds > 0", line),
            },
            "sd" => match rest.parse::<u64>() {
                Ok(d) if (1..=MAX_DEPTH).contains(&d) => self.tc.depth = Some(d),
                _ => self.error("bad sd: expected a depth in 1..=100", line),
            },
            // XBoard reports an overrun clock as a negative time: nothing left.
            "time" => match rest.parse::<i64>() {
                Ok(cs) if cs.unsigned_abs() <= MAX_TIME_MS / 10 => self.tc.own_ms = Some(cs.max(0) as u64 * 10),
                _ => self.error("bad time: expected centiseconds", line),
            },
            "result" => {
                self.abort_search();
                self.game().over = true;
                self.force = true;
            }
            "setboard" => match Position::from_sfen(self.core.variant(), rest) {
                Ok(p) => self.reset(p),
                Err(e) => {
                    self.out.line(&format!("tellusererror Illegal position: {e}"));
                    self.error("illegal position", line);
                }
            },
            "undo" | "remove" => {
                self.abort_search();
                let n = if cmd == "undo" { 1 } else { 2 };
                let mut g = self.game();
                for _ in 0..n {
                    if g.pos.undo().is_none() {
                        drop(g);
                        self.error("no move to undo", line);
                        return true;
                    }
                }
                g.over = false;
            }
            "ping" => self.out.line(&format!("pong {}", echo(rest))),
            "post" => self.post.store(true, std::sync::atomic::Ordering::SeqCst),
            "nopost" => self.post.store(false, std::sync::atomic::Ordering::SeqCst),
            "memory" => self.option("USI_Hash", rest, line),
            "cores" => self.option("Threads", rest, line),
            "option" => match rest.split_once('=') {
                Some((n, v)) => self.option(n.trim(), v.trim(), line),
                None => self.error("option needs NAME=VALUE", line),
            },
            "quit" => return false,
            _ => {
                let size = self.game().pos.variant().size();
                if XboardMove::parse(cmd, size).is_ok() && rest.is_empty() {
                    self.usermove(cmd);
                } else {
                    self.error("unknown command", line);
                }
            }
        }
        true
    }

    fn option(&mut self, name: &str, value: &str, line: &str) {
        if self.core.is_searching() {
            self.abort_search();
        }
        if let Err(e) = self.core.set_option(name, value) {
            self.out.line(&format!("Error ({e}): {}", echo(line)));
        }
    }

    fn load_network(&mut self) {
        if let Err(e) = self.core.load_network() {
            self.out.line(&format!("tellusererror {e}"));
        }
    }

    fn level(&mut self, rest: &str, line: &str) {
        let w: Vec<&str> = rest.split_whitespace().collect();
        let parse_base = |s: &str| -> Option<u64> {
            match s.split_once(':') {
                Some((m, sec)) => {
                    let ms = m
                        .parse::<u64>()
                        .ok()?
                        .checked_mul(60_000)?
                        .checked_add(sec.parse::<u64>().ok()?.checked_mul(1000)?)?;
                    (ms <= MAX_TIME_MS).then_some(ms)
                }
                None => seconds_to_ms(s).map(|ms| ms * 60).filter(|&ms| ms <= MAX_TIME_MS),
            }
        };
        match (
            w.first().and_then(|m| m.parse::<u32>().ok()),
            w.get(1).and_then(|b| parse_base(b)),
            w.get(2).and_then(|i| seconds_to_ms(i)),
        ) {
            (Some(mps), Some(base), Some(inc)) if w.len() == 3 => {
                self.tc = TimeControl {
                    moves_per_session: mps,
                    base_ms: base,
                    inc_ms: inc,
                    st_ms: None,
                    own_ms: None,
                    depth: self.tc.depth,
                    set: true,
                };
            }
            _ => self.error("bad level", line),
        }
    }

    fn usermove(&mut self, text: &str) {
        if self.core.is_searching() {
            // A move while we think (XBoard sends none): play it and start over.
            self.abort_search();
        }
        let mut g = self.game();
        match g.pos.parse_xboard(text) {
            Ok(mv) => {
                g.pos.play(mv);
                let end = g.pos.outcome(&self.core.opts.end_rules());
                if let Some(o) = end {
                    g.over = true;
                    self.out.line(&result_text(&o));
                }
                let ours = g.pos.side_to_move() == self.engine_side;
                drop(g);
                if end.is_none() && !self.force && ours {
                    self.think();
                }
            }
            Err(e) => {
                drop(g);
                self.out.line(&format!("Illegal move ({e}): {}", echo(text)));
            }
        }
    }

    fn clock(&self, pos: &Position) -> Clock {
        let tc = &self.tc;
        if let Some(st) = tc.st_ms {
            return Clock { movetime: Some(st), ..Clock::default() };
        }
        if !tc.set {
            // No time control given: 5 seconds a move.
            return Clock { movetime: Some(5000), ..Clock::default() };
        }
        let own_moves = (pos.plies_played() / 2) as u32;
        let moves_to_go =
            if tc.moves_per_session > 0 { tc.moves_per_session - own_moves % tc.moves_per_session } else { 0 };
        Clock { time: Some(tc.own_ms.unwrap_or(tc.base_ms)), inc: tc.inc_ms, moves_to_go, ..Clock::default() }
    }

    fn think(&mut self) {
        if self.core.is_searching() {
            return;
        }
        let (pos, epoch) = {
            let g = self.game();
            (g.pos.clone(), g.epoch)
        };
        let end_rules = self.core.opts.end_rules();
        match immediate(&pos, &end_rules) {
            Some(Immediate::GameOver(Some(o))) => {
                self.game().over = true;
                return self.out.line(&result_text(&o));
            }
            Some(Immediate::GameOver(None)) => return self.out.line("resign"),
            Some(Immediate::Declare) => {
                let winner = pos.side_to_move();
                self.game().over = true;
                let o = rules::Outcome { winner: Some(winner), reason: rules::Reason::Declaration };
                return self.out.line(&result_text(&o));
            }
            None => {}
        }
        let (clock, opts) = (self.clock(&pos), self.core.opts.time_options());
        let budget = time::budget_with(&clock, &opts);
        let limits = Limits {
            budget,
            nodes: self.tc.depth.map(nodes_for_depth),
            minimum_ms: budget.map_or(0, |b| time::minimum(&clock, &opts, &b)),
            exact: clock.movetime.is_some(),
            depth: self.tc.depth.map(|d| d as u32),
            ..Limits::default()
        };
        let out = self.out.clone();
        let post = self.post.clone();
        let root = pos.clone();
        let on_info = Box::new(move |info: &Info| {
            if post.load(std::sync::atomic::Ordering::SeqCst) {
                out.line(&thinking_line(&root, info));
            }
        });
        let out = self.out.clone();
        let post = self.post.clone();
        let game = self.game.clone();
        let resign_value = self.core.opts.resign_value;
        let root = pos.clone();
        let on_done = Box::new(move |o: SearchOutcome| {
            let mut g = game.lock().unwrap_or_else(|e| e.into_inner());
            if g.epoch != epoch || g.pos.zobrist() != root.zobrist() {
                return;
            }
            if let Some(e) = &o.error {
                out.line(&format!("telluser error: {e}"));
            }
            if post.load(std::sync::atomic::Ordering::SeqCst) {
                out.line(&thinking_line(&root, &o.info));
            }
            let resign = resign_value > 0
                && (matches!(o.proof, search::Proof::Loss(_)) || o.value * 1000.0 < -(resign_value as f32));
            let mv = o.best.or_else(|| root.legal_moves().first().copied());
            match mv {
                Some(mv) if !resign => {
                    let text = g.pos.to_xboard(mv);
                    g.pos.play(mv);
                    out.line(&format!("move {text}"));
                    if let Some(end) = g.pos.outcome(&end_rules) {
                        g.over = true;
                        out.line(&result_text(&end));
                    }
                }
                _ => {
                    g.over = true;
                    out.line("resign");
                }
            }
        });
        if let Err(e) = self.core.start(pos, limits, on_info, on_done) {
            self.out.line(&format!("tellusererror {e}"));
            self.out.line("resign");
        }
    }
}

/// A number of seconds (`st`, `level`'s increment) in milliseconds: finite, not negative,
/// at most [`MAX_TIME_MS`].
fn seconds_to_ms(text: &str) -> Option<u64> {
    let s: f64 = text.parse().ok()?;
    let ms = (s * 1000.0).round();
    (s.is_finite() && (0.0..=MAX_TIME_MS as f64).contains(&ms)).then_some(ms as u64)
}

/// XBoard's error line for a line that is not text.
fn bad_line_error(line: &Line) -> String {
    match line {
        Line::Text(t) => format!("Error (unknown command): {}", echo(t)),
        Line::NotUtf8 { text } => format!("Error (not valid UTF-8): {}", text.chars().take(80).collect::<String>()),
        Line::TooLong { bytes } => format!("Error (line of {bytes} bytes is too long): (not shown)"),
    }
}

/// XBoard thinking output: `ply score time(cs) nodes pv`.
fn thinking_line(root: &Position, info: &Info) -> String {
    let Some(line) = info.lines.first() else {
        return format!("{} 0 {} {}", info.depth, info.time_ms / 10, info.nodes);
    };
    let score = match line.score {
        Score::Cp(c) => c,
        Score::Mate(m) if m >= 0 => 100_000 - m,
        Score::Mate(m) => -100_000 - m,
    };
    let mut pos = root.clone();
    let mut pv = Vec::new();
    for &m in &line.pv {
        if !pos.is_legal(m) {
            break;
        }
        pv.push(pos.to_xboard(m));
        pos.play(m);
    }
    format!("{} {} {} {} {}", info.depth, score, info.time_ms / 10, info.nodes, pv.join(" "))
}
