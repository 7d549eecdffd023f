//! The USI protocol loop.
//!
//! Commands are read on the calling thread and the search runs on its own thread, so
//! `stop`, `ponderhit`, `isready` and `quit` are answered while it thinks. Malformed or
//! out-of-order commands, and lines that are not UTF-8, get `info string error: ...` and
//! are otherwise ignored; a `go` is always answered with a `bestmove` (`resign` when there
//! is no usable position or network), by itself unless it is `go infinite` or `go ponder`
//! (see [`crate::go`]). A `go mate` is answered with one `checkmate` line: the mating
//! moves, `nomate`, `timeout` (time ran out, or `stop`), or `notimplemented` (a variant
//! other than standard shogi).

use std::io::BufRead;

use rules::{Color, Move, Position};

use crate::engine::{immediate, Core, Immediate, MateOutcome};
use crate::go::{parse_go, GoCommand, MateTime, DEFAULT_MOVETIME_MS};
use crate::input::{read_line, Line};
use crate::options::{Effect, Options};
use crate::ProtocolOutput;
use search::mate::{MateReport, MateVerdict};
use search::time::{self, Clock};
use search::{Info, Limits, Score, SearchOutcome};

pub const ENGINE_NAME: &str = concat!("koma-usi ", env!("CARGO_PKG_VERSION"));

/// Formats `info` as USI `info` lines (one per principal variation).
pub fn info_lines(info: &Info, multipv: usize) -> Vec<String> {
    let head = format!(
        "info depth {} seldepth {} time {} nodes {} nps {} hashfull {}",
        info.depth, info.seldepth, info.time_ms, info.nodes, info.nps, info.hashfull
    );
    if info.lines.is_empty() {
        return vec![head];
    }
    info.lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut s = head.clone();
            if multipv > 1 {
                s.push_str(&format!(" multipv {}", i + 1));
            }
            match l.score {
                Score::Cp(c) => s.push_str(&format!(" score cp {c}")),
                Score::Mate(m) => s.push_str(&format!(" score mate {m}")),
            }
            if !l.pv.is_empty() {
                s.push_str(" pv");
                for m in &l.pv {
                    s.push(' ');
                    s.push_str(&m.to_usi());
                }
            }
            s
        })
        .collect()
}

/// The USI engine state.
pub struct Usi {
    core: Core,
    out: ProtocolOutput,
    pos: Result<Position, BadPosition>,
    /// A `position` whose side to move has no king: a tsume problem as GUIs send them,
    /// which only `go mate` takes.
    tsume: Option<Position>,
}

/// A `position` command that names no position (kept until the next one).
#[derive(Clone, Debug, thiserror::Error)]
#[error("position {}: {source}", rules::Excerpt::with_max(.text, crate::ECHO_CHARS))]
pub struct BadPosition {
    text: String,
    source: rules::PositionCommandError,
}

impl Usi {
    pub fn new(out: ProtocolOutput) -> Usi {
        let core = Core::new();
        let pos = Ok(Position::startpos(core.variant()));
        Usi { core, out, pos, tsume: None }
    }

    fn error(&self, msg: impl AsRef<str>) {
        self.out.line(&format!("info string error: {}", msg.as_ref()));
    }

    /// Reads commands until `quit` or the end of the input. A line that is not UTF-8
    /// (or too long) is answered with an error and skipped.
    pub fn run(&mut self, mut input: impl BufRead) {
        while let Some(line) = read_line(&mut input) {
            if !self.handle_line(&line) {
                break;
            }
        }
        self.core.stop();
    }

    /// Handles one line as read; `false` after `quit`.
    pub fn handle_line(&mut self, line: &Line) -> bool {
        match line {
            Line::Text(text) => self.handle(text),
            other => {
                self.error(other.problem().unwrap_or_default());
                true
            }
        }
    }

    /// Handles one command line; `false` after `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = words.split_first() else { return true };
        match cmd {
            "usi" => {
                self.out.line(&format!("id name {ENGINE_NAME}"));
                self.out.line("id author the koma developers");
                for l in Options::usi_lines() {
                    self.out.line(&l);
                }
                self.out.line("usiok");
            }
            "isready" => {
                if !self.core.is_searching() {
                    match self.core.load_network() {
                        Ok(d) => {
                            self.out.line(&format!("info string network: {d}"));
                            if let Some((threads, batch)) = self.core.search_shape() {
                                self.out.line(&format!(
                                    "info string search: {threads} thread{}, up to {batch} leaves a forward pass",
                                    if threads == 1 { "" } else { "s" }
                                ));
                            }
                            if let Some(note) = self.core.leaf_material_note() {
                                self.out.line(&format!("info string {note}"));
                            }
                        }
                        Err(e) => self.error(e.to_string()),
                    }
                    self.report_book();
                }
                self.out.line("readyok");
            }
            "setoption" => self.setoption(line),
            "usinewgame" => self.core.new_game(),
            "position" => self.position(args),
            "go" => self.go(args),
            "stop" => self.core.stop(),
            "ponderhit" => {
                if !self.core.is_searching() || !self.core.ponderhit() {
                    self.error("ponderhit without a running go ponder");
                }
            }
            "gameover" => self.core.stop(),
            "quit" => {
                self.core.stop();
                return false;
            }
            "debug" | "register" => {}
            other => self.error(format!("unknown command '{}'", rules::excerpt(other))),
        }
        true
    }

    fn position(&mut self, args: &[&str]) {
        let text = args.join(" ");
        let variant = self.core.variant();
        self.pos = rules::parse_position_command(variant, &text).map_err(|source| BadPosition { text, source });
        self.tsume = None;
        let Err(e) = &self.pos else { return };
        // A tsume problem usually leaves out the attacker's king (the tsume parser allows
        // only the SFEN's side to move to lack it).
        let missing_king = matches!(&e.source, rules::PositionCommandError::Sfen(rules::SfenError::MissingKing(_)));
        match rules::parse_tsume_position_command(variant, &e.text) {
            Ok(p) if missing_king => {
                self.out.line("info string the side to move has no king: a tsume problem, for go mate only");
                self.tsume = Some(p);
            }
            _ => self.error(e.to_string()),
        }
    }

    fn setoption(&mut self, line: &str) {
        let (name, value) = match parse_setoption(line) {
            Ok(nv) => nv,
            Err(e) => return self.error(e),
        };
        match self.core.set_option(&name, value) {
            Ok(Effect::Variant) => self.pos = Ok(Position::startpos(self.core.variant())),
            Ok(_) => {}
            Err(e) => self.error(e.to_string()),
        }
    }

    fn go(&mut self, args: &[&str]) {
        // The clock runs from the `go` line.
        let origin = std::time::Instant::now();
        if self.core.is_searching() {
            return self.error("go while a search is running (send stop first); ignored");
        }
        let go = parse_go(args);
        for e in &go.errors {
            self.error(e);
        }
        if let Some(time) = go.mate {
            return self.go_mate(time, origin);
        }
        let pos = match &self.pos {
            Ok(p) => p.clone(),
            Err(e) => {
                self.error(format!("no valid position ({e})"));
                return self.out.line("bestmove resign");
            }
        };
        if !go.ponder && !go.infinite {
            self.report_book();
            if let Some(lines) = self.core.book_move(&pos) {
                return lines.iter().for_each(|l| self.out.line(l));
            }
        }
        let side = if pos.side_to_move() == Color::Sente { 0 } else { 1 };
        let limits = search_limits(&go, &go.clock[side], &self.core.opts.time_options(), origin);
        let multipv = self.core.opts.multipv;
        let search_stats = self.core.opts.search_stats;
        let resign_value = self.core.opts.resign_value;
        let end_rules = self.core.opts.end_rules();
        let out = self.out.clone();
        let on_info = Box::new(move |info: &Info| {
            for l in info_lines(info, multipv) {
                out.line(&l);
            }
        });
        let out = self.out.clone();
        let root = pos.clone();
        let on_done = Box::new(move |o: SearchOutcome| {
            if search_stats {
                out.line(&search_stats_line(&o));
            }
            let text = bestmove_text(&root, &o, resign_value, &end_rules, &out, multipv);
            out.line(&text);
        });
        if let Err(e) = self.core.start(pos, limits, on_info, on_done) {
            self.error(e.to_string());
            self.out.line("bestmove resign");
        }
    }
}

impl Usi {
    /// Reads the book if `BookFile` changed, and says what it holds or why it failed.
    fn report_book(&mut self) {
        match self.core.load_book() {
            Some(Ok(note)) => self.out.line(&format!("info string {note}")),
            Some(Err(e)) => self.error(e),
            None => {}
        }
    }

    /// `go mate`: the tsume solver on the search thread, answered with a `checkmate` line.
    fn go_mate(&mut self, time: MateTime, origin: std::time::Instant) {
        let pos = match (&self.pos, &self.tsume) {
            (Ok(p), _) | (Err(_), Some(p)) => p.clone(),
            (Err(e), None) => {
                self.error(format!("no valid position ({e})"));
                return self.out.line("checkmate nomate");
            }
        };
        let deadline = match time {
            MateTime::Millis(ms) => Some(origin + std::time::Duration::from_millis(ms)),
            MateTime::Infinite => None,
        };
        let out = self.out.clone();
        let on_done = Box::new(move |outcome: MateOutcome| {
            for line in mate_lines(&outcome) {
                out.line(&line);
            }
        });
        if let Err(e) = self.core.start_mate(pos, deadline, on_done) {
            self.error(e.to_string());
            self.out.line("checkmate timeout");
        }
    }
}

/// `setoption name <id> [value <x>]`: the name (its words joined by single spaces) and the
/// value as written, inner spaces kept (a path such as `C:\My  Models\a.json`); no
/// `value` is the empty value.
pub fn parse_setoption(line: &str) -> Result<(String, &str), &'static str> {
    fn word(s: &str) -> (&str, &str) {
        let s = s.trim_start();
        s.split_at(s.find(char::is_whitespace).unwrap_or(s.len()))
    }
    let (_setoption, rest) = word(line);
    let (name_word, mut rest) = word(rest);
    if name_word != "name" {
        return Err("setoption: expected 'setoption name <id> [value <x>]'");
    }
    let mut name: Vec<&str> = Vec::new();
    let value = loop {
        match word(rest) {
            ("", _) => break "",
            ("value", after) => break after.trim(),
            (w, after) => {
                name.push(w);
                rest = after;
            }
        }
    };
    if name.is_empty() {
        return Err("setoption: no option name");
    }
    Ok((name.join(" "), value))
}

/// The lines that answer a `go mate`: an `info` line with time and nodes, for a mate an
/// `info string` with the first mate found (plies, time, nodes, and the plies it was
/// shortened to), then the `checkmate` line.
pub fn mate_lines(outcome: &MateOutcome) -> Vec<String> {
    match outcome {
        MateOutcome::Report(r) => {
            let mut lines = vec![mate_info(r)];
            if let MateVerdict::Mate(line) = &r.verdict {
                let shortened = if line.len() < r.first_plies {
                    format!("; shortened to {} plies", line.len())
                } else {
                    String::new()
                };
                lines.push(format!(
                    "info string first mate: {} plies after {} ms, {} nodes{shortened}",
                    r.first_plies,
                    r.first_elapsed.as_millis(),
                    r.first_nodes
                ));
            }
            lines.push(checkmate_text(&r.verdict));
            lines
        }
        MateOutcome::Refused(why) => {
            vec![format!("info string error: go mate: {why}"), "checkmate notimplemented".into()]
        }
        MateOutcome::Panicked(why) => {
            vec![format!("info string error: go mate failed: {why}"), "checkmate timeout".into()]
        }
    }
}

fn mate_info(r: &MateReport) -> String {
    let ms = r.elapsed.as_millis() as u64;
    let nps = (r.nodes as f64 / r.elapsed.as_secs_f64().max(1e-6)) as u64;
    format!("info time {ms} nodes {} nps {nps}", r.nodes)
}

/// The USI answer to a tsume problem.
pub fn checkmate_text(verdict: &MateVerdict) -> String {
    match verdict {
        MateVerdict::Mate(line) => {
            let moves: Vec<String> = line.iter().map(|m| m.to_usi()).collect();
            format!("checkmate {}", moves.join(" "))
        }
        MateVerdict::NoMate => "checkmate nomate".into(),
        MateVerdict::Unknown(_) => "checkmate timeout".into(),
    }
}

/// The limits of the search a `go` asks for: its clock (under the time options `opts`)
/// and node limits; a `go` with neither (or only malformed ones) thinks
/// [`DEFAULT_MOVETIME_MS`], so that only `infinite` and `ponder` wait for the GUI.
/// `go movetime` searches its whole time ([`Limits::exact`]); `go depth N` stops when the
/// reported depth reaches N (or after [`crate::go::nodes_for_depth`] simulations).
pub fn search_limits(go: &GoCommand, clock: &Clock, opts: &time::TimeOptions, origin: std::time::Instant) -> Limits {
    let nodes = go.node_limit();
    let default_clock = Clock { movetime: Some(DEFAULT_MOVETIME_MS), ..Clock::default() };
    let (clock, budget) = match time::budget_with(clock, opts) {
        None if nodes.is_none() => (&default_clock, time::budget_with(&default_clock, opts)),
        b => (clock, b),
    };
    Limits {
        nodes,
        budget,
        infinite: go.infinite,
        ponder: go.ponder,
        origin: Some(origin),
        minimum_ms: budget.map_or(0, |b| time::minimum(clock, opts, &b)),
        exact: clock.movetime.is_some(),
        depth: go.depth.map(|d| d as u32),
    }
}

/// `SearchStats`: the search's forward passes.
fn search_stats_line(o: &SearchOutcome) -> String {
    let b = &o.batches;
    format!(
        "info string search stats: {} nodes in {} ms, {} forward passes, {:.1} leaves a pass (largest {}), {} collisions",
        o.info.nodes,
        o.info.time_ms,
        b.batches,
        b.mean_batch(),
        b.largest_batch,
        b.collisions
    )
}

/// Reports the final info and returns the `bestmove ...` line.
fn bestmove_text(
    root: &Position,
    o: &SearchOutcome,
    resign_value: u32,
    end_rules: &rules::EndRules,
    out: &ProtocolOutput,
    multipv: usize,
) -> String {
    if let Some(e) = &o.error {
        out.line(&format!("info string error: {e}"));
    }
    match immediate(root, end_rules) {
        Some(Immediate::Declare) => return "bestmove win".into(),
        Some(Immediate::GameOver(_)) => return "bestmove resign".into(),
        None => {}
    }
    for l in info_lines(&o.info, multipv) {
        out.line(&l);
    }
    if o.tree_full {
        out.line("info string the search tree is full (raise USI_Hash)");
    }
    let resign =
        resign_value > 0 && (matches!(o.proof, search::Proof::Loss(_)) || o.value * 1000.0 < -(resign_value as f32));
    if resign {
        return "bestmove resign".into();
    }
    let best: Option<Move> = o.best.or_else(|| root.legal_moves().first().copied());
    match best {
        Some(m) => match o.ponder {
            Some(p) if o.best.is_some() => format!("bestmove {} ponder {}", m.to_usi(), p.to_usi()),
            _ => format!("bestmove {}", m.to_usi()),
        },
        None => "bestmove resign".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setoption_keeps_the_value_as_written() {
        for (line, name, value) in [
            ("setoption name ModelFile value C:\\My  Models\\a b.json ", "ModelFile", "C:\\My  Models\\a b.json"),
            ("setoption  name  USI_Hash  value  256", "USI_Hash", "256"),
            ("setoption name USI_Ponder", "USI_Ponder", ""),
            ("setoption name Two Words value x", "Two Words", "x"),
            ("setoption name ModelFile value", "ModelFile", ""),
            ("setoption name Device value\t<empty>", "Device", "<empty>"),
        ] {
            assert_eq!(parse_setoption(line), Ok((name.to_string(), value)), "{line}");
        }
        for line in ["setoption", "setoption value 3", "setoption name", "setoption name value 3", "setoption nom x"] {
            assert!(parse_setoption(line).is_err(), "{line}");
        }
    }
}
