//! SFEN text, random and mutated: whatever the reader accepts must say
//! what a plain reading of the text says, square by square, and print back
//! to an equivalent SFEN that reads to the same position.

use crate::harness::{cases, fuzz, mutate, mutations, position_index, positions, variant};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rules::{Position, Setup, Variant};
use std::collections::BTreeMap;

/// A SFEN as the grammar reads it, with no rules checked: each rank as
/// square texts from the highest file (`""` empty, `"+P"`, `"[gb]"`),
/// hand counts by letter, side and move number.
#[derive(Debug, PartialEq, Eq)]
pub struct Plain {
    ranks: Vec<Vec<String>>,
    side: String,
    hands: BTreeMap<char, u64>,
    move_number: u64,
}

/// A run of empty squares: no leading zero, 1 to `size`; compared as text
/// first so that no run is ever too long to read.
fn empty_run(digits: &str, size: usize) -> Option<usize> {
    if digits.starts_with('0') || digits.len() > 2 {
        return None;
    }
    digits.parse().ok().filter(|&n| (1..=size).contains(&n))
}

fn plain_rank(rank: &str, size: usize) -> Option<Vec<String>> {
    let chars: Vec<char> = rank.chars().collect();
    let mut squares = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let digits: String = chars[i..].iter().take_while(|c| c.is_ascii_digit()).collect();
            i += digits.len();
            squares.extend(std::iter::repeat_n(String::new(), empty_run(&digits, size)?));
            continue;
        }
        let mut square = String::new();
        if chars[i] == '+' {
            square.push('+');
            i += 1;
        }
        match chars.get(i) {
            Some('[') => {
                let close = chars[i..].iter().position(|&c| c == ']')? + i;
                let code: String = chars[i + 1..close].iter().collect();
                let one_case =
                    code.chars().all(|c| c.is_ascii_uppercase()) || code.chars().all(|c| c.is_ascii_lowercase());
                if code.len() < 2 || !one_case {
                    return None;
                }
                square.push_str(&format!("[{code}]"));
                i = close + 1;
            }
            Some(c) if c.is_ascii_alphabetic() => {
                square.push(*c);
                i += 1;
            }
            _ => return None,
        }
        squares.push(square);
    }
    (squares.len() == size).then_some(squares)
}

/// The plain reading of `text` on a board of `size` files, or `None`
/// where the text breaks the grammar.
pub fn plain(text: &str, size: usize) -> Option<Plain> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if !(3..=4).contains(&fields.len()) {
        return None;
    }
    let ranks: Vec<Vec<String>> = fields[0].split('/').map(|r| plain_rank(r, size)).collect::<Option<_>>()?;
    if ranks.len() != size || !["b", "w"].contains(&fields[1]) {
        return None;
    }
    let mut hands = BTreeMap::new();
    if fields[2] != "-" {
        let mut count = String::new();
        for c in fields[2].chars() {
            if c.is_ascii_digit() {
                count.push(c);
            } else if c.is_ascii_alphabetic() {
                let n: u64 = if count.is_empty() { 1 } else { count.parse().ok()? };
                *hands.entry(c).or_insert(0) += n;
                count.clear();
            } else {
                return None;
            }
        }
        if !count.is_empty() {
            return None;
        }
    }
    let move_number = match fields.get(3) {
        None => 1,
        Some(n) if n.chars().all(|c| c.is_ascii_digit()) => n.parse().ok()?,
        Some(_) => return None,
    };
    Some(Plain { ranks, side: fields[1].to_string(), hands, move_number })
}

/// The oracle for one SFEN: `Ok(true)` if accepted (and consistent).
pub fn check_sfen(variant: Variant, text: &str) -> Result<bool, TestCaseError> {
    let parsed = Position::from_sfen(variant, text);
    let setup = Setup::parse(variant, text);
    let pos = match parsed {
        Err(_) => return Ok(false),
        Ok(pos) => pos,
    };
    prop_assert!(setup.is_ok(), "position read but its setup did not: {text:?}");
    let written = pos.to_sfen();
    let size = variant.size();
    let said = plain(text, size);
    prop_assert!(said.is_some(), "accepted a SFEN that breaks the grammar: {text:?} (read as {written})");
    prop_assert_eq!(said, plain(&written, size), "read {:?} as a different position: {}", text, written);
    let again = Position::from_sfen(variant, &written).map_err(|e| TestCaseError::fail(format!("{written}: {e}")))?;
    prop_assert_eq!(&again, &pos, "{} does not read back", written);
    prop_assert_eq!(again.to_sfen(), written);
    Ok(true)
}

/// Valid SFENs to mutate: those of the seed positions.
fn seed_sfen() -> impl Strategy<Value = (Variant, String)> {
    position_index().prop_map(|i| (positions()[i].variant(), positions()[i].to_sfen()))
}

/// A piece of `variant` as SFEN writes it, either side, sometimes promoted
/// (also where the kind cannot promote).
fn piece_text(variant: Variant) -> impl Strategy<Value = String> {
    let codes: Vec<&'static str> = variant.spec().kinds.iter().map(|k| k.code).collect();
    (prop::sample::select(codes), any::<bool>(), 0u8..6).prop_map(|(code, gote, promoted)| {
        let code = if gote { code.to_ascii_lowercase() } else { code.to_string() };
        let body = if code.len() > 1 { format!("[{code}]") } else { code };
        format!("{}{body}", if promoted == 0 { "+" } else { "" })
    })
}

/// Text the grammar is strict about, to put in place of one square: runs
/// past the rank or past every integer type, leading zeros, brackets.
const EDGE_SQUARES: [&str; 16] = [
    "0",
    "00",
    "01",
    "09",
    "10",
    "16",
    "18446744073709551615",
    "18446744073709551625",
    "4294967305",
    "[K]",
    "[]",
    "[Gb]",
    "[GB",
    "+",
    "é",
    "X",
];

/// A sparse random board of `variant` with a king for each side, as SFEN
/// ranks, and now and then one square replaced by an edge text.
fn random_board(variant: Variant) -> impl Strategy<Value = String> {
    let size = variant.size();
    let square = prop_oneof![10 => Just(None), 1 => piece_text(variant).prop_map(Some)];
    let edge = prop::option::weighted(0.5, (0..size * size, prop::sample::select(EDGE_SQUARES.to_vec())));
    (prop::collection::vec(square, size * size), 0..size * size, 0..size * size, edge).prop_map(
        move |(mut squares, sente_king, gote_king, edge)| {
            squares[sente_king] = Some("K".to_string());
            squares[gote_king] = Some("k".to_string());
            let mut ranks = Vec::new();
            for (row, rank) in squares.chunks(size).enumerate() {
                let mut text = String::new();
                let mut empty = 0;
                for (col, square) in rank.iter().enumerate() {
                    let at = row * size + col;
                    match (square, edge.filter(|e| e.0 == at)) {
                        (_, Some((_, edge))) => text.push_str(&format!("{}{edge}", run(&mut empty))),
                        (None, None) => empty += 1,
                        (Some(piece), None) => text.push_str(&format!("{}{piece}", run(&mut empty))),
                    }
                }
                text.push_str(&run(&mut empty));
                ranks.push(text);
            }
            ranks.join("/")
        },
    )
}

/// The pending run of empty squares as text, and none pending after.
fn run(empty: &mut usize) -> String {
    let text = if *empty > 0 { empty.to_string() } else { String::new() };
    *empty = 0;
    text
}

/// A random SFEN near the grammar: a random board, a side, a hand and a
/// move number, each sometimes broken.
fn random_sfen() -> impl Strategy<Value = (Variant, String)> {
    let hand = prop_oneof![
        2 => Just("-".to_string()),
        2 => "([0-9]{0,2}[RBGSNLPrbgsnlp]){1,4}",
        1 => "([0-9]{0,21}[RBGSNLPrbgsnlpKkX+]){1,3}",
    ];
    let number = prop_oneof![
        4 => (1u32..500).prop_map(|n| n.to_string()),
        1 => Just(String::new()),
        1 => "[-+0-9]{1,12}",
        1 => prop::sample::select(vec!["0", "1000000000", "1000000001", "4294967297", "18446744073709551617"])
            .prop_map(str::to_string),
    ];
    let side = prop::sample::select(vec!["b", "b", "w", "w", "x", "B"]);
    variant().prop_flat_map(move |v| (Just(v), random_board(v), side.clone(), hand.clone(), number.clone())).prop_map(
        |(v, board, side, hand, number)| (v, format!("{board} {side} {hand} {number}").trim_end().to_string()),
    )
}

#[test]
fn sfen_random() {
    fuzz("sfen random", cases(20_000), random_sfen(), |(v, text)| check_sfen(v, &text));
}

#[test]
fn sfen_mutated() {
    fuzz("sfen mutated", cases(20_000), (seed_sfen(), mutations(3)), |((v, seed), edits)| {
        let text = String::from_utf8_lossy(&mutate(seed.as_bytes(), &edits)).into_owned();
        check_sfen(v, &text)
    });
}
