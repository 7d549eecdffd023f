//! The fuzz harness: a proptest runner that counts the inputs it tried and
//! the ones the reader accepted, byte and line mutations of valid inputs,
//! and random games to take valid inputs from.

use crate::support::fuzz_budget::{self, Watchdog};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use rules::{Position, Variant};
use std::cell::Cell;
use std::fmt::Debug;

/// Inputs per surface: `release_cases`, or as `KOMA_FUZZ_CASES`/`KOMA_FUZZ_SCALE` say
/// ([`crate::support::fuzz_budget::cases`]).
pub fn cases(release_cases: u32) -> u32 {
    fuzz_budget::cases(release_cases.into()).min(u32::MAX.into()) as u32
}

/// Runs `check` on `cases` inputs drawn from `strategy`; `check` returns
/// whether the reader accepted the input. A panic inside a reader is a
/// failure too (proptest catches it and shrinks the input), and so is an input
/// slower than [`fuzz_budget::slow`] (one that hangs aborts the run: [`Watchdog`]).
/// Prints the counts for the surface, then fails with the smallest failing input.
pub fn fuzz<S>(surface: &str, cases: u32, strategy: S, check: impl Fn(S::Value) -> Result<bool, TestCaseError>)
where
    S: Strategy,
    S::Value: Debug,
{
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let (tried, accepted) = (Cell::new(0u64), Cell::new(0u64));
    let watchdog = Watchdog::new(surface);
    let result = TestRunner::new(config).run(&strategy, |input| {
        tried.set(tried.get() + 1);
        let shown = format!("{input:?}");
        let (verdict, took) = watchdog.case(|| shown, || check(input));
        prop_assert!(took < fuzz_budget::slow(), "{surface}: one input took {took:?}");
        if verdict? {
            accepted.set(accepted.get() + 1);
        }
        Ok(())
    });
    eprintln!("fuzz {surface}: {} inputs tried, {} accepted", tried.get(), accepted.get());
    if let Err(e) = result {
        panic!("fuzz {surface}: {e}");
    }
}

/// Text that readers meet at their edges: numbers past every integer type
/// (the first one wraps to 9 in unchecked `usize` arithmetic), signs,
/// float words, separators, and the marks of each format.
pub const INTERESTING: [&str; 46] = [
    "18446744073709551625",
    "18446744073709551615",
    "4294967296",
    "99999999999999999999999",
    "1000000001",
    "0",
    "00",
    "09",
    "10",
    "15",
    "16",
    "19",
    "-1",
    "-5",
    "+5",
    "NaN",
    "inf",
    "1e400",
    "0.0001",
    ".",
    ":",
    "/",
    " ",
    "\t",
    "\r",
    "\n",
    ",",
    "　",
    "\u{FFFD}",
    "[",
    "]",
    "+",
    "*",
    "(",
    ")",
    "moves",
    "同　",
    "成",
    "打",
    "不成",
    "%TORYO",
    "T",
    "P",
    "b",
    "w",
    "-",
];

/// One edit of an input.
#[derive(Clone, Debug)]
pub struct Mutation {
    op: u8,
    at: u32,
    other: u32,
    byte: u8,
}

pub fn mutations(max: usize) -> impl Strategy<Value = Vec<Mutation>> {
    let one = (0u8..9, any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(op, at, other, byte)| Mutation {
        op,
        at,
        other,
        byte,
    });
    prop::collection::vec(one, 1..=max)
}

/// The start of the line holding byte `at`, and the end of that line
/// (after its newline).
fn line_around(text: &[u8], at: usize) -> (usize, usize) {
    let start = text[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let end = text[at..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| at + i + 1);
    (start, end)
}

impl Mutation {
    fn apply(&self, text: &mut Vec<u8>) {
        let len = text.len();
        let at = self.at as usize % (len + 1);
        let other = self.other as usize % (len + 1);
        let interesting = INTERESTING[self.other as usize % INTERESTING.len()].as_bytes();
        match self.op {
            // A byte replaced, inserted or deleted.
            0 if at < len => text[at] = self.byte,
            1 => text.insert(at, self.byte),
            2 if at < len => {
                text.drain(at..(at + 1 + self.byte as usize % 8).min(len));
            }
            // Edge text inserted, or put in place of the number at `at`.
            3 => {
                text.splice(at..at, interesting.iter().copied());
            }
            4 => {
                let start = (at..len).find(|&i| text[i].is_ascii_digit()).unwrap_or(len);
                let end = (start..len).find(|&i| !text[i].is_ascii_digit()).unwrap_or(len);
                let number = INTERESTING[self.other as usize % 19].as_bytes();
                text.splice(start..end, number.iter().copied());
            }
            // A piece of the text copied elsewhere.
            5 => {
                let (from, to) = (at.min(other), at.max(other).min(at.min(other) + 40));
                let piece: Vec<u8> = text[from..to].to_vec();
                let dest = (self.byte as usize * 7919 + from) % (len + 1);
                text.splice(dest..dest, piece);
            }
            // A whole line deleted, doubled, or swapped with another.
            6 if at < len => {
                let (start, end) = line_around(text, at);
                text.drain(start..end);
            }
            7 if at < len => {
                let (start, end) = line_around(text, at);
                let line: Vec<u8> = text[start..end].to_vec();
                text.splice(end..end, line);
            }
            8 if at < len && other < len => {
                let (a, b) = (line_around(text, at.min(other)), line_around(text, at.max(other)));
                if a.1 <= b.0 {
                    let (first, second) = (text[a.0..a.1].to_vec(), text[b.0..b.1].to_vec());
                    text.splice(b.0..b.1, first);
                    text.splice(a.0..a.1, second);
                }
            }
            _ => {}
        }
    }
}

/// `seed` with the mutations applied in turn.
pub fn mutate(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut text = seed.to_vec();
    for m in mutations {
        m.apply(&mut text);
    }
    text
}

/// The tests' small deterministic generator, so that an input replays from its seed.
pub use crate::support::Rng;

/// The position after up to `plies` random legal moves from `start`
/// (fewer if the game ends).
pub fn random_game(start: Position, seed: u64, plies: usize) -> Position {
    let mut rng = Rng(seed | 1);
    let mut pos = start;
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.outcome(&Default::default()).is_some() {
            break;
        }
        pos.play(moves[rng.below(moves.len())]);
    }
    pos
}

pub fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::Shogi), Just(Variant::Sho), Just(Variant::Dai)]
}

/// How many plies a random game of `variant` runs, at most: dai's move
/// generation costs more.
pub fn plies_for(variant: Variant) -> usize {
    match variant {
        Variant::Dai => 60,
        _ => 120,
    }
}

/// Positions to take valid inputs from, made once: the start of each
/// variant and the handicaps, and positions of random games of each
/// variant at random lengths.
pub fn positions() -> &'static [Position] {
    static POSITIONS: std::sync::OnceLock<Vec<Position>> = std::sync::OnceLock::new();
    POSITIONS.get_or_init(|| {
        let mut out: Vec<Position> = Variant::ALL.iter().map(|&v| Position::startpos(v)).collect();
        out.extend(rules::Handicap::ALL.iter().map(|h| h.position()));
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for &v in &Variant::ALL {
            for _ in 0..40 {
                let plies = rng.below(plies_for(v));
                out.push(random_game(Position::startpos(v), rng.0, plies));
            }
        }
        out
    })
}

/// An index into [`positions`].
pub fn position_index() -> impl Strategy<Value = usize> {
    0..positions().len()
}
