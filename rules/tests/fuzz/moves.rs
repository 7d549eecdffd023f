//! Move text, random and mutated, against positions of every variant: USI,
//! XBoard (HaChu), and for standard shogi Japanese (KI2 style) and Western.
//! An accepted text must name a legal move and be that move's own text (USI
//! and XBoard spell a move one way, but for the pass and XBoard's `=`);
//! the lenient readers (Japanese, Western) must read their own text of the
//! move back to it.

use crate::harness::{cases, fuzz, mutate, mutations, position_index, positions, Rng};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rules::records::{japanese, parse_japanese, parse_western, western};
use rules::{Move, Position, UsiMove, Variant, XboardMove};

fn is_pass(pos: &Position, mv: Move) -> bool {
    matches!(mv, Move::Lion { from, mid, to } if from == to && pos.piece_at(mid).is_none())
}

fn check_usi(pos: &Position, text: &str) -> Result<bool, TestCaseError> {
    if let Ok(usi) = UsiMove::parse(text) {
        let mv = match usi {
            UsiMove::Normal { from, to, promote } => Move::Normal { from, to, promote },
            UsiMove::Drop { kind, to } => Move::Drop { kind, to },
            UsiMove::Lion { from, mid, to } => Move::Lion { from, mid, to },
        };
        prop_assert_eq!(mv.to_usi(), text, "USI text read as another move");
    }
    let Ok(mv) = pos.parse_usi(text) else { return Ok(false) };
    prop_assert!(pos.is_legal(mv), "{text:?} read as an illegal move {mv}");
    prop_assert!(spells(pos, mv, text, rules::Notation::Usi), "{:?} read as {}", text, mv.to_usi());
    Ok(true)
}

/// Is `text` the way `notation` writes `mv` in `pos`? Each move has one
/// text, but for the pass (in USI any lion and empty square, in XBoard
/// also `<sq><sq>`) and XBoard's optional `=`.
pub fn spells(pos: &Position, mv: Move, text: &str, notation: rules::Notation) -> bool {
    match notation {
        rules::Notation::Usi => {
            mv.to_usi() == text || (is_pass(pos, mv) && matches!(UsiMove::parse(text), Ok(UsiMove::Lion { .. })))
        }
        rules::Notation::Xboard => {
            let written = pos.to_xboard(mv);
            let shape = XboardMove::parse(text, pos.variant().size());
            written == text
                || text.strip_suffix('=') == Some(written.as_str())
                || (is_pass(pos, mv) && matches!(shape, Ok(XboardMove::Pass | XboardMove::Normal { .. })))
        }
    }
}

fn check_xboard(pos: &Position, text: &str) -> Result<bool, TestCaseError> {
    let size = pos.variant().size();
    let shape = XboardMove::parse(text, size);
    let Ok(mv) = pos.parse_xboard(text) else { return Ok(false) };
    prop_assert!(shape.is_ok(), "{text:?} read as a move but not as a shape");
    prop_assert!(pos.is_legal(mv), "{text:?} read as an illegal move {mv}");
    prop_assert!(spells(pos, mv, text, rules::Notation::Xboard), "{:?} read as {}", text, pos.to_xboard(mv));
    Ok(true)
}

/// The destination of the last move, for 同.
fn previous(pos: &Position) -> Option<rules::Square> {
    pos.moves_played().last().map(Move::to)
}

fn check_japanese(pos: &Position, text: &str) -> Result<bool, TestCaseError> {
    let Ok(mv) = parse_japanese(pos, text, previous(pos)) else { return Ok(false) };
    prop_assert!(pos.is_legal(mv), "{text:?} read as an illegal move {mv}");
    let own = japanese(pos, mv, previous(pos));
    prop_assert_eq!(parse_japanese(pos, &own, previous(pos)).ok(), Some(mv), "{:?} read as {}", text, own);
    Ok(true)
}

fn check_western(pos: &Position, text: &str) -> Result<bool, TestCaseError> {
    let Ok(mv) = parse_western(pos, text) else { return Ok(false) };
    prop_assert!(pos.is_legal(mv), "{text:?} read as an illegal move {mv}");
    let own = western(pos, mv);
    prop_assert_eq!(parse_western(pos, &own).ok(), Some(mv), "{:?} read as {}", text, own);
    Ok(true)
}

#[derive(Clone, Copy, Debug)]
enum Notation {
    Usi,
    Xboard,
    Japanese,
    Western,
}

impl Notation {
    fn text(self, pos: &Position, mv: Move) -> String {
        match self {
            Notation::Usi => mv.to_usi(),
            Notation::Xboard => pos.to_xboard(mv),
            Notation::Japanese => japanese(pos, mv, previous(pos)),
            Notation::Western => western(pos, mv),
        }
    }

    fn check(self, pos: &Position, text: &str) -> Result<bool, TestCaseError> {
        match self {
            Notation::Usi => check_usi(pos, text),
            Notation::Xboard => check_xboard(pos, text),
            Notation::Japanese => check_japanese(pos, text),
            Notation::Western => check_western(pos, text),
        }
    }

    /// Japanese and Western text is standard shogi's only.
    fn fits(self, pos: &Position) -> bool {
        matches!(self, Notation::Usi | Notation::Xboard) || pos.variant() == Variant::Shogi
    }
}

/// A seed position for `notation`, a legal move's text there, mutated.
fn mutated_move(notation: Notation) -> impl Strategy<Value = (usize, String)> {
    (position_index(), any::<u64>(), mutations(2)).prop_map(move |(i, pick, edits)| {
        let candidates: Vec<usize> = (0..positions().len()).filter(|&j| notation.fits(&positions()[j])).collect();
        let i = candidates[i % candidates.len()];
        let pos = &positions()[i];
        let moves = pos.legal_moves();
        let seed = moves.get(Rng(pick | 1).below(moves.len())).map_or(String::new(), |&mv| notation.text(pos, mv));
        (i, String::from_utf8_lossy(&mutate(seed.as_bytes(), &edits)).into_owned())
    })
}

/// Random text in each notation's shape (squares anywhere on the largest
/// board, any piece, any suffix), or over its characters.
fn random_move(notation: Notation) -> impl Strategy<Value = (usize, String)> {
    let (shaped, loose) = match notation {
        Notation::Usi => (
            "([1-9]|1[0-6]|0[1-9])[a-p]([1-9]|1[0-6])[a-p](([1-9]|1[0-5])[a-o])?[+]?|[PLNSGBRK][*][1-9][a-j]",
            "[0-9a-q*+PLNSGBRK]{0,8}",
        ),
        Notation::Xboard => (
            "[a-p]([1-9]|1[0-6]|0)[a-p]([1-9]|1[0-6])[+=]?|[a-o]([1-9]|1[0-5])[a-o]([1-9]|1[0-5]),[a-o]([1-9]|1[0-5])[a-o]([1-9]|1[0-5])|[PLNSGBRK]@[a-j][1-9]|@@@@",
            "[0-9a-q@,+=PLNSGBRK]{0,10}",
        ),
        Notation::Japanese => (
            "[▲△]?([１-９][一二三四五六七八九]|同　|[1-9][1-9])(歩|香|桂|銀|金|角|飛|玉|と|馬|龍|成銀)(左|右|直)?(上|引|寄)?(成|不成|打)?",
            "[▲△同　１２３４５６７８９一二三四五六七八九歩香桂銀金角飛玉と馬龍成不打左右直上引寄行生]{0,6}",
        ),
        Notation::Western => (
            "[+]?[PLNSGBRK]([1-9][a-i])?[-x][1-9][a-i1-9][+=]?|[PLNSGBR][*][1-9][a-i]",
            "[+PLNSGBRK1-9a-i*x=-]{0,8}",
        ),
    };
    (position_index(), prop_oneof![3 => shaped, 1 => loose]).prop_map(move |(i, text)| {
        let candidates: Vec<usize> = (0..positions().len()).filter(|&j| notation.fits(&positions()[j])).collect();
        (candidates[i % candidates.len()], text)
    })
}

fn fuzz_notation(name: &str, notation: Notation, each: u32) {
    let check = |(i, text): (usize, String)| notation.check(&positions()[i], &text);
    fuzz(&format!("{name} move text random"), cases(each), random_move(notation), check);
    fuzz(&format!("{name} move text mutated"), cases(each), mutated_move(notation), check);
}

#[test]
fn usi_move_text() {
    fuzz_notation("usi", Notation::Usi, 10_000);
}

#[test]
fn xboard_move_text() {
    fuzz_notation("xboard", Notation::Xboard, 10_000);
}

#[test]
fn japanese_move_text() {
    fuzz_notation("japanese", Notation::Japanese, 5_000);
}

#[test]
fn western_move_text() {
    fuzz_notation("western", Notation::Western, 5_000);
}
