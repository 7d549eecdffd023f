//! The USI `go` command: its words checked one by one into the limits of a search.
//!
//! Every `go` ends with a `bestmove` by itself unless it says `infinite` or `ponder`
//! (those wait for `stop`, or `ponderhit` and then the clock). A word that is malformed,
//! negative or out of range is reported and left out, so the search falls back to the
//! other limits, or to [`DEFAULT_MOVETIME_MS`] when none is left.
//!
//! `go mate <ms>`, `go mate infinite` (and a bare `go mate`, read as `infinite`) ask
//! for a tsume solve instead, answered with a `checkmate ...` line ([`MateTime`]).

use search::time::Clock;

/// Thinking time of a `go` that sets no limit (no clock, `movetime`, `nodes` or `depth`,
/// or only malformed ones), in milliseconds.
pub const DEFAULT_MOVETIME_MS: u64 = 1000;
/// Largest time a `go` may give (`btime`, `wtime`, `binc`, `winc`, `byoyomi`, `movetime`),
/// in milliseconds: about 115 days.
pub const MAX_TIME_MS: u64 = 10_000_000_000;
/// Largest `go depth`.
pub const MAX_DEPTH: u64 = 100;
/// Largest `go movestogo`.
pub const MAX_MOVES_TO_GO: u64 = 10_000;

/// MCTS has no search depth: `go depth N` searches this many simulations.
pub fn nodes_for_depth(depth: u64) -> u64 {
    100 * depth * depth
}

/// The time of a `go mate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MateTime {
    /// `go mate <ms>`: answer `checkmate timeout` when undecided after this long.
    Millis(u64),
    /// `go mate infinite` (or `go mate` alone): until a verdict or `stop`.
    Infinite,
}

/// What one `go` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoCommand {
    /// The clocks of sente (0) and gote (1).
    pub clock: [Clock; 2],
    pub nodes: Option<u64>,
    pub depth: Option<u64>,
    pub infinite: bool,
    pub ponder: bool,
    /// `go mate`: solve the position as a tsume problem within this time.
    pub mate: Option<MateTime>,
    /// Problems with the words, one message each (`go: ...`).
    pub errors: Vec<String>,
}

impl GoCommand {
    /// The simulation limit: `nodes`, and `depth` mapped by [`nodes_for_depth`].
    pub fn node_limit(&self) -> Option<u64> {
        match (self.nodes, self.depth.map(nodes_for_depth)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

const WORDS: &[&str] = &[
    "ponder",
    "infinite",
    "btime",
    "wtime",
    "binc",
    "winc",
    "byoyomi",
    "movetime",
    "nodes",
    "depth",
    "movestogo",
    "mate",
    "searchmoves",
];

/// Parses the words after `go`.
pub fn parse_go(args: &[&str]) -> GoCommand {
    let mut go = GoCommand::default();
    let mut i = 0;
    while i < args.len() {
        let word = args[i];
        i += 1;
        let value = args.get(i).copied().filter(|v| !WORDS.contains(v));
        if takes_value(word) && value.is_some() {
            i += 1;
        }
        match word {
            "ponder" => go.ponder = true,
            "infinite" => go.infinite = true,
            "mate" => go.mate = Some(mate_time(&mut go.errors, args.get(i).copied(), &mut i)),
            "searchmoves" => {
                let n = args[i..].iter().take_while(|w| !WORDS.contains(w)).count();
                i += n;
                go.errors.push(format!(
                    "go: searchmoves is not supported: every legal move is searched ({n} moves ignored)"
                ));
            }
            "btime" | "wtime" | "binc" | "winc" | "byoyomi" | "movetime" => {
                if let Some(ms) = number(&mut go.errors, word, value, 0, MAX_TIME_MS) {
                    set_time(&mut go.clock, word, ms);
                }
            }
            "nodes" => go.nodes = number(&mut go.errors, word, value, 1, u64::MAX).or(go.nodes),
            "depth" => go.depth = number(&mut go.errors, word, value, 1, MAX_DEPTH).or(go.depth),
            "movestogo" => {
                if let Some(n) = number(&mut go.errors, word, value, 1, MAX_MOVES_TO_GO) {
                    for c in &mut go.clock {
                        c.moves_to_go = n as u32;
                    }
                }
            }
            other => go.errors.push(format!("go: unknown word '{other}' ignored")),
        }
    }
    go
}

/// The time after `go mate`: a whole number of milliseconds or `infinite` (consumed,
/// `i` moved past it); nothing there, or a malformed number (reported), is `infinite`.
fn mate_time(errors: &mut Vec<String>, next: Option<&str>, i: &mut usize) -> MateTime {
    match next {
        Some("infinite") => {
            *i += 1;
            MateTime::Infinite
        }
        Some(text) if !WORDS.contains(&text) => {
            *i += 1;
            number(errors, "mate", Some(text), 1, MAX_TIME_MS).map_or(MateTime::Infinite, MateTime::Millis)
        }
        _ => MateTime::Infinite,
    }
}

fn takes_value(word: &str) -> bool {
    matches!(word, "btime" | "wtime" | "binc" | "winc" | "byoyomi" | "movetime" | "nodes" | "depth" | "movestogo")
}

fn set_time(clock: &mut [Clock; 2], word: &str, ms: u64) {
    match word {
        "btime" => clock[0].time = Some(ms),
        "wtime" => clock[1].time = Some(ms),
        "binc" => clock[0].inc = ms,
        "winc" => clock[1].inc = ms,
        "byoyomi" => {
            clock[0].byoyomi = ms;
            clock[1].byoyomi = ms;
        }
        _ => {
            clock[0].movetime = Some(ms);
            clock[1].movetime = Some(ms);
        }
    }
}

/// The value of `word` if it is a whole number in `min..=max`; otherwise an error message.
fn number(errors: &mut Vec<String>, word: &str, value: Option<&str>, min: u64, max: u64) -> Option<u64> {
    let range = if max == u64::MAX { format!("at least {min}") } else { format!("in {min}..={max}") };
    let Some(text) = value else {
        errors.push(format!("go: {word} needs a whole number {range}; ignored"));
        return None;
    };
    let problem = match text.parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => return Some(v),
        Ok(_) => "out of range",
        Err(_) if text.starts_with('-') && text[1..].bytes().all(|b| b.is_ascii_digit()) && text.len() > 1 => {
            "negative"
        }
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => "out of range",
        Err(_) => "not a whole number",
    };
    errors.push(format!("go: {word} {text} is {problem} (expected a whole number {range}); ignored"));
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(s: &str) -> GoCommand {
        parse_go(&s.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn well_formed_words() {
        let g = go("btime 1000 wtime 2000 binc 10 winc 20 byoyomi 500 movestogo 7");
        assert!(g.errors.is_empty(), "{:?}", g.errors);
        assert_eq!(g.clock[0], Clock { time: Some(1000), inc: 10, byoyomi: 500, movetime: None, moves_to_go: 7 });
        assert_eq!(g.clock[1].time, Some(2000));
        assert_eq!(go("depth 3").node_limit(), Some(900));
        assert_eq!(go("depth 3 nodes 50").node_limit(), Some(50));
        let g = go("ponder infinite");
        assert!(g.ponder && g.infinite && g.errors.is_empty());
    }

    #[test]
    fn go_mate_takes_a_time_or_infinite() {
        for (cmd, time) in [
            ("mate 5000", MateTime::Millis(5000)),
            ("mate infinite", MateTime::Infinite),
            ("mate", MateTime::Infinite),
            ("mate btime 100", MateTime::Infinite),
        ] {
            let g = go(cmd);
            assert_eq!(g.mate, Some(time), "{cmd}");
            assert!(g.errors.is_empty(), "{cmd}: {:?}", g.errors);
            assert!(!g.infinite, "{cmd}: the mate's infinite is not the search's");
        }
        for cmd in ["mate abc", "mate -3", "mate 0"] {
            let g = go(cmd);
            assert_eq!(g.mate, Some(MateTime::Infinite), "{cmd}");
            assert_eq!(g.errors.len(), 1, "{cmd}: {:?}", g.errors);
            assert!(g.errors[0].starts_with("go: mate "), "{cmd}: {:?}", g.errors);
        }
        assert_eq!(go("infinite").mate, None);
    }

    #[test]
    fn malformed_words_are_reported_and_dropped() {
        for (cmd, needle) in [
            ("nodes abc", "not a whole number"),
            ("movetime abc", "not a whole number"),
            ("btime -5", "negative"),
            ("nodes -1", "negative"),
            ("nodes 0", "at least 1"),
            ("depth 1000", "out of range"),
            ("movetime 99999999999999999999999", "out of range"),
            ("byoyomi", "needs a whole number"),
            ("frob", "unknown word"),
            ("searchmoves 7g7f 2g2f", "searchmoves is not supported"),
        ] {
            let g = go(cmd);
            assert_eq!(g.errors.len(), 1, "{cmd}: {:?}", g.errors);
            assert!(g.errors[0].contains(needle), "{cmd}: {:?}", g.errors);
            assert_eq!(g.node_limit(), None, "{cmd}");
            assert_eq!(g.clock, [Clock::default(); 2], "{cmd}");
        }
        // A missing value does not swallow the next word.
        let g = go("nodes movetime 300");
        assert_eq!(g.errors.len(), 1);
        assert_eq!(g.clock[0].movetime, Some(300));
        let g = go("searchmoves 7g7f nodes 40");
        assert_eq!(g.nodes, Some(40));
    }

    /// Random word salads: never a panic, and whatever is kept is in range.
    #[test]
    fn random_words_keep_only_values_in_range() {
        // Every word the parser knows, and values of every kind around the limits.
        let values = [
            "0",
            "1",
            "-1",
            "100",
            "1e3",
            "abc",
            "7g7f",
            "99999999999999999999",
            "18446744073709551615",
            "10000000001",
            "",
            "+5",
            "-0",
        ];
        let vocab: Vec<&str> = WORDS.iter().copied().chain(values).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let tries = 20_000;
        for _ in 0..tries {
            let words: Vec<&str> = (0..next(8)).map(|_| vocab[next(vocab.len())]).collect();
            let g = parse_go(&words);
            for c in &g.clock {
                for v in [c.time.unwrap_or(0), c.inc, c.byoyomi, c.movetime.unwrap_or(0)] {
                    assert!(v <= MAX_TIME_MS, "{words:?}");
                }
                assert!(c.moves_to_go as u64 <= MAX_MOVES_TO_GO);
            }
            assert!(g.nodes.map_or(true, |n| n >= 1), "{words:?}");
            assert!(g.depth.map_or(true, |d| (1..=MAX_DEPTH).contains(&d)), "{words:?}");
            // A malformed value right after a word that takes one is always reported.
            if words.windows(2).any(|p| takes_value(p[0]) && ["-1", "1e3", "abc"].contains(&p[1])) {
                assert!(!g.errors.is_empty(), "{words:?}");
            }
        }
        println!("go fuzz: {tries} random word lists");
    }
}
