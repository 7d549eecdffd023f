//! XBoard move notation as HaChu writes and reads it, and the choice
//! between it and USI ([`Notation`]).
//!
//! Squares are a file letter and a rank number with no padding: files
//! `a`.. from the first mover's (sente's) left, ranks `1`.. from sente's
//! side, so on an NxN board XBoard `a1` is shogi `N` + the last rank letter
//! (dai `a1` = `15o`, `o15` = `1a`; sho `e1` = `5i`). The board is never
//! flipped for gote.
//!
//! Moves:
//! - `<from><to>`, with a trailing `+` to promote; `=` (no promotion) is
//!   accepted on input and never written;
//! - lion double moves, whose first step captures on `<mid>`, as
//!   `<from><mid>,<mid><to>` (igui when `<to>` = `<from>`); a two-square
//!   lion move over an empty square is one leg (`h3j2`);
//! - the pass as `@@@@` (on input also `<sq><sq>` naming a lion-power piece
//!   that can pass);
//! - drops (standard shogi only, not a HaChu game) as `P@e5`.
//!
//! A [`Move`] is printed against its position ([`Position::to_xboard`]),
//! because a pass and an igui differ only in whether `mid` is empty.

use crate::moves::Move;
use crate::position::Position;
use crate::types::{Kind, Square};
use std::fmt::Write;

/// Why XBoard text is not a legal move of a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum XboardError {
    #[error("'{}' is not an XBoard move", crate::excerpt(.0))]
    Syntax(String),
    #[error("'{}': square off the board", crate::excerpt(.0))]
    OffBoard(String),
    #[error("illegal move {}: {why}", crate::excerpt(.mv))]
    Illegal { mv: String, why: &'static str },
}

/// XBoard name of a square on a board of `size` files (`h8`, `a15`).
pub fn square_name(sq: Square, size: usize) -> String {
    let mut s = String::new();
    write_square(&mut s, sq, size);
    s
}

fn write_square(s: &mut String, sq: Square, size: usize) {
    let file = (b'a' + (size as u8 - sq.file())) as char;
    let rank = size as u8 + 1 - sq.rank();
    write!(s, "{file}{rank}").unwrap();
}

/// Parses one square at the start of `s`; returns it and the rest.
fn parse_square_prefix(s: &str, size: usize) -> Option<(Square, &str)> {
    let b = s.as_bytes();
    let letter = *b.first()?;
    if !letter.is_ascii_lowercase() {
        return None;
    }
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 2 || b[1] == b'0' {
        return None;
    }
    let rank: usize = s[1..1 + digits].parse().ok()?;
    let file_index = (letter - b'a') as usize;
    if file_index >= size || rank == 0 || rank > size {
        return None;
    }
    Some((Square::new((size - file_index) as u8, (size + 1 - rank) as u8), &s[1 + digits..]))
}

/// Parses an XBoard square name (`h8`) on a board of `size` files.
pub fn parse_square(text: &str, size: usize) -> Option<Square> {
    match parse_square_prefix(text, size) {
        Some((sq, "")) => Some(sq),
        _ => None,
    }
}

/// XBoard move text parsed without a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XboardMove {
    Normal {
        from: Square,
        to: Square,
        promote: bool,
    },
    Drop {
        kind: Kind,
        to: Square,
    },
    /// `<from><mid>,<mid><to>`.
    Lion {
        from: Square,
        mid: Square,
        to: Square,
    },
    /// `@@@@`.
    Pass,
}

impl XboardMove {
    /// Parses XBoard text for a board of `size` files. Squares off that
    /// board are an [`XboardError::OffBoard`] error.
    pub fn parse(text: &str, size: usize) -> Result<XboardMove, XboardError> {
        let syntax = || XboardError::Syntax(text.to_string());
        if text == "@@@@" {
            return Ok(XboardMove::Pass);
        }
        if !text.is_ascii() || text.is_empty() {
            return Err(syntax());
        }
        // Shape first, so that off-board squares get their own error.
        let shape_ok = |s: &str| {
            let b = s.as_bytes();
            b.len() >= 2 && b[0].is_ascii_lowercase() && b[1..].iter().all(|c| c.is_ascii_digit()) && b.len() <= 3
        };
        let square = |s: &str| -> Result<Square, XboardError> {
            if !shape_ok(s) {
                return Err(syntax());
            }
            parse_square(s, size).ok_or_else(|| XboardError::OffBoard(text.to_string()))
        };
        // Split "<sq><sq>" at the second letter.
        let split2 = |s: &str| -> Result<(Square, Square), XboardError> {
            let second = s.get(1..).and_then(|r| r.find(|c: char| c.is_ascii_lowercase())).ok_or_else(syntax)? + 1;
            Ok((square(&s[..second])?, square(&s[second..])?))
        };
        let b = text.as_bytes();
        if b.len() >= 4 && b[1] == b'@' {
            let kind = Kind::from_hand_letter(b[0] as char).ok_or_else(syntax)?;
            return Ok(XboardMove::Drop { kind, to: square(&text[2..])? });
        }
        if let Some((first, second)) = text.split_once(',') {
            let (from, mid) = split2(first)?;
            let (mid2, to) = split2(second)?;
            if mid != mid2 {
                return Err(syntax());
            }
            return Ok(XboardMove::Lion { from, mid, to });
        }
        let (body, promote) = match text.strip_suffix('+') {
            Some(body) => (body, true),
            None => (text.strip_suffix('=').unwrap_or(text), false),
        };
        let (from, to) = split2(body)?;
        Ok(XboardMove::Normal { from, to, promote })
    }
}

impl Position {
    /// Is `mv` this position's pass (a lion move out to an empty square and back)?
    fn is_pass(&self, mv: Move) -> bool {
        matches!(mv, Move::Lion { from, mid, to } if from == to && self.piece_at(mid).is_none())
    }

    /// The XBoard (HaChu) text of `mv`, a move of this position.
    pub fn to_xboard(&self, mv: Move) -> String {
        let size = self.t.spec.size;
        let mut s = String::new();
        match mv {
            _ if self.is_pass(mv) => s.push_str("@@@@"),
            Move::Normal { from, to, promote } => {
                write_square(&mut s, from, size);
                write_square(&mut s, to, size);
                if promote {
                    s.push('+');
                }
            }
            Move::Drop { kind, to } => {
                s.push(kind.hand_letter().unwrap_or('?'));
                s.push('@');
                write_square(&mut s, to, size);
            }
            Move::Lion { from, mid, to } => {
                write_square(&mut s, from, size);
                write_square(&mut s, mid, size);
                s.push(',');
                write_square(&mut s, mid, size);
                write_square(&mut s, to, size);
            }
        }
        s
    }

    /// Turns XBoard text into a legal move of this position.
    pub fn parse_xboard(&self, text: &str) -> Result<Move, XboardError> {
        let legal = self.legal_moves();
        let pass = legal.iter().copied().find(|&m| self.is_pass(m));
        let illegal = |why: &'static str| XboardError::Illegal { mv: text.to_string(), why };
        let mv = match XboardMove::parse(text, self.t.spec.size)? {
            XboardMove::Pass => return pass.ok_or_else(|| illegal(self.why_no_pass())),
            XboardMove::Normal { from, to, promote: false } if from == to => {
                // HaChu also reads a pass as "<sq><sq>" for a piece that can pass.
                let lion = self.piece_at(from).is_some_and(|p| {
                    p.color() == self.side && !matches!(self.t.lion[p.code() as usize], crate::LionPower::None)
                });
                return match pass {
                    Some(p) if lion => Ok(p),
                    _ => Err(illegal(if lion { self.why_no_pass() } else { "a piece must move" })),
                };
            }
            XboardMove::Normal { from, to, promote } => Move::Normal { from, to, promote },
            XboardMove::Drop { kind, to } => Move::Drop { kind, to },
            XboardMove::Lion { from, mid, to } => {
                if !matches!(self.piece_at(mid), Some(p) if p.color() != self.side) {
                    return Err(illegal("a two-leg move must capture on its first leg"));
                }
                Move::Lion { from, mid, to }
            }
        };
        if legal.contains(&mv) {
            Ok(mv)
        } else {
            Err(illegal(self.explain_illegal(mv)))
        }
    }

    fn why_no_pass(&self) -> &'static str {
        if self.repetition_illegal && !self.history.is_empty() {
            "no piece can pass here (or the pass repeats an earlier position)"
        } else {
            "no piece can pass here"
        }
    }

    /// Parses XBoard text and plays the move if it is legal here.
    pub fn play_xboard(&mut self, text: &str) -> Result<Move, XboardError> {
        let mv = self.parse_xboard(text)?;
        self.play(mv);
        Ok(mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_position_with, Notation, Variant};

    #[test]
    fn fixed_squares() {
        let sq = |f, r| Square::new(f, r);
        assert_eq!(square_name(sq(15, 15), 15), "a1");
        assert_eq!(square_name(sq(1, 15), 15), "o1");
        assert_eq!(square_name(sq(15, 1), 15), "a15");
        assert_eq!(square_name(sq(1, 1), 15), "o15");
        assert_eq!(square_name(sq(8, 8), 15), "h8");
        assert_eq!(square_name(sq(8, 13), 15), "h3");
        assert_eq!(square_name(sq(9, 9), 9), "a1");
        assert_eq!(square_name(sq(1, 1), 9), "i9");
        assert_eq!(square_name(sq(5, 9), 9), "e1");
        for size in [9, 15] {
            for f in 1..=size as u8 {
                for r in 1..=size as u8 {
                    assert_eq!(parse_square(&square_name(sq(f, r), size), size), Some(sq(f, r)));
                }
            }
        }
        assert_eq!(parse_square("j1", 9), None);
        assert_eq!(parse_square("a10", 9), None);
        assert_eq!(parse_square("a0", 15), None);
        assert_eq!(parse_square("a01", 15), None);
    }

    #[test]
    fn text_shapes() {
        assert!(matches!(XboardMove::parse("g3e3", 15), Ok(XboardMove::Normal { promote: false, .. })));
        assert!(matches!(XboardMove::parse("g11a5+", 15), Ok(XboardMove::Normal { promote: true, .. })));
        assert!(matches!(XboardMove::parse("g11a5=", 15), Ok(XboardMove::Normal { promote: false, .. })));
        assert!(matches!(XboardMove::parse("m8l9,l9k10", 15), Ok(XboardMove::Lion { .. })));
        assert_eq!(XboardMove::parse("@@@@", 15), Ok(XboardMove::Pass));
        assert!(matches!(XboardMove::parse("P@e5", 9), Ok(XboardMove::Drop { kind: Kind::Pawn, .. })));
        for bad in ["", "g3", "g3e", "m8l9,l8k10", "g3e3++", "G3e3", "g3e3x", "@@@", "m8l9,"] {
            assert!(matches!(XboardMove::parse(bad, 15), Err(XboardError::Syntax(_))), "{bad}");
        }
        assert!(matches!(XboardMove::parse("p16p16", 15), Err(XboardError::OffBoard(_))));
        assert!(matches!(XboardMove::parse("a1j1", 9), Err(XboardError::OffBoard(_))));
    }

    #[test]
    fn start_position_moves() {
        let pos = Position::startpos(Variant::Dai);
        let mv = pos.parse_xboard("h3j2").unwrap();
        assert_eq!(mv.to_usi(), "8m6n");
        assert_eq!(pos.to_xboard(mv), "h3j2");
        // Every neighbour of the lion is occupied: no pass yet.
        assert!(matches!(pos.parse_xboard("@@@@"), Err(XboardError::Illegal { .. })));
        let pos =
            parse_position_with(Variant::Dai, "startpos moves h5h6 h11h10 h4h5 h12h11", Notation::Xboard).unwrap();
        let pass = pos.parse_xboard("@@@@").unwrap();
        assert_eq!(pos.to_xboard(pass), "@@@@");
        assert_eq!(pos.parse_xboard("h3h3").unwrap(), pass);
        assert!(matches!(pos.parse_xboard("h3g3,g3f2"), Err(XboardError::Illegal { .. })));
        assert!(matches!(pos.parse_xboard("a1a2"), Err(XboardError::Illegal { .. })));
        let sho = Position::startpos(Variant::Sho);
        assert_eq!(sho.parse_xboard("c3c4").unwrap().to_usi(), "7g7f");
        assert_eq!(sho.parse_xboard("e1d2").unwrap().to_usi(), "5i6h");
        assert!(matches!(sho.parse_xboard("@@@@"), Err(XboardError::Illegal { .. })));
    }
}
