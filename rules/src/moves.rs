//! Moves and their USI text.
//!
//! A [`Move`] is only meaningful against the position it was made for;
//! [`UsiMove`] is the protocol text, turned into a `Move` by
//! [`crate::Position::parse_usi`], which checks legality.

use crate::types::{rank_letter, Kind, Square, MAX_SIZE};
use std::fmt;

/// A move in any of the three games.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// A piece moves (and captures what stands on `to`), promoting or not.
    Normal { from: Square, to: Square, promote: bool },
    /// A piece from hand is put on an empty square (standard shogi).
    Drop { kind: Kind, to: Square },
    /// A lion-power double move: a first step to `mid` (capturing what is
    /// there) and a second step to `to`. `to == from` is igui (capture
    /// without moving) or, with `mid` empty, a pass.
    Lion { from: Square, mid: Square, to: Square },
}

impl Move {
    pub fn to(self) -> Square {
        match self {
            Move::Normal { to, .. } | Move::Drop { to, .. } | Move::Lion { to, .. } => to,
        }
    }

    pub fn from(self) -> Option<Square> {
        match self {
            Move::Normal { from, .. } | Move::Lion { from, .. } => Some(from),
            Move::Drop { .. } => None,
        }
    }

    /// Could this move give check to a king on `king`? Only a piece that lands on one of
    /// the king's eight lines or a knight's jump away, or leaves such a line (uncovering
    /// a slider), can: a cheap filter before the move is made (never false for a move
    /// that checks).
    pub fn may_give_check(self, king: Square) -> bool {
        let on_line = |s: Square| {
            let (dx, dy) = (s.file() as i32 - king.file() as i32, s.rank() as i32 - king.rank() as i32);
            dx == 0 || dy == 0 || dx.abs() == dy.abs()
        };
        let to = self.to();
        let (dx, dy) = ((to.file() as i32 - king.file() as i32).abs(), (to.rank() as i32 - king.rank() as i32).abs());
        on_line(to) || (dx == 1 && dy == 2) || self.from().is_some_and(on_line)
    }

    pub fn is_drop(self) -> bool {
        matches!(self, Move::Drop { .. })
    }

    pub fn is_promotion(self) -> bool {
        matches!(self, Move::Normal { promote: true, .. })
    }

    /// USI text (`7g7f`, `8h2b+`, `P*5e`; lion moves as three squares,
    /// `8m7l7k`). Ranks past `i` and files past 9 appear only on 15x15 boards.
    pub fn to_usi(self) -> String {
        self.to_string()
    }
}

pub(crate) fn write_square(f: &mut impl fmt::Write, sq: Square) -> fmt::Result {
    write!(f, "{}{}", sq.file(), rank_letter(sq.rank()))
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Move::Normal { from, to, promote } => {
                write_square(f, from)?;
                write_square(f, to)?;
                if promote {
                    f.write_str("+")?;
                }
                Ok(())
            }
            Move::Drop { kind, to } => {
                write!(f, "{}*", kind.hand_letter().unwrap_or('?'))?;
                write_square(f, to)
            }
            Move::Lion { from, mid, to } => {
                write_square(f, from)?;
                write_square(f, mid)?;
                write_square(f, to)
            }
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// USI move text parsed without a position: squares and flags only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsiMove {
    Normal { from: Square, to: Square, promote: bool },
    Drop { kind: Kind, to: Square },
    Lion { from: Square, mid: Square, to: Square },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UsiMoveError {
    #[error("'{}' is not a USI move", crate::excerpt(.0))]
    Syntax(String),
    #[error("'{}': square off the board", crate::excerpt(.0))]
    OffBoard(String),
}

fn parse_square(s: &[u8], i: &mut usize) -> Option<Square> {
    let start = *i;
    while *i < s.len() && s[*i].is_ascii_digit() {
        *i += 1;
    }
    // One or two digits, no leading zero: `07g7f` is not `7g7f`.
    if *i == start || *i - start > 2 || s[start] == b'0' {
        return None;
    }
    let file: usize = std::str::from_utf8(&s[start..*i]).ok()?.parse().ok()?;
    let letter = *s.get(*i)?;
    if !letter.is_ascii_lowercase() {
        return None;
    }
    *i += 1;
    let rank = (letter - b'a') as usize + 1;
    if file == 0 || file > MAX_SIZE || rank > MAX_SIZE {
        return None;
    }
    Some(Square::new(file as u8, rank as u8))
}

impl UsiMove {
    /// Parses USI text. Squares beyond the variant's board are caught when
    /// the move is checked against a position.
    pub fn parse(text: &str) -> Result<UsiMove, UsiMoveError> {
        let syntax = || UsiMoveError::Syntax(text.to_string());
        let s = text.as_bytes();
        if s.len() >= 4 && s[1] == b'*' {
            let kind = Kind::from_hand_letter(s[0] as char).ok_or_else(syntax)?;
            let mut i = 2;
            let to = parse_square(s, &mut i).ok_or_else(syntax)?;
            if i != s.len() {
                return Err(syntax());
            }
            return Ok(UsiMove::Drop { kind, to });
        }
        let mut i = 0;
        let from = parse_square(s, &mut i).ok_or_else(syntax)?;
        let to = parse_square(s, &mut i).ok_or_else(syntax)?;
        if i < s.len() && s[i].is_ascii_digit() {
            let last = parse_square(s, &mut i).ok_or_else(syntax)?;
            if i != s.len() {
                return Err(syntax());
            }
            return Ok(UsiMove::Lion { from, mid: to, to: last });
        }
        let promote = match &s[i..] {
            b"" => false,
            b"+" => true,
            _ => return Err(syntax()),
        };
        Ok(UsiMove::Normal { from, to, promote })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usi_text_round_trips() {
        for text in ["7g7f", "8h2b+", "P*5e", "15o1a", "8m7l8m", "10j11k+"] {
            let m = UsiMove::parse(text).unwrap();
            let mv = match m {
                UsiMove::Normal { from, to, promote } => Move::Normal { from, to, promote },
                UsiMove::Drop { kind, to } => Move::Drop { kind, to },
                UsiMove::Lion { from, mid, to } => Move::Lion { from, mid, to },
            };
            assert_eq!(mv.to_usi(), text);
        }
    }

    #[test]
    fn bad_usi_text_is_rejected() {
        for text in
            ["", "7g", "7g7", "0a1a", "07g7f", "P*05e", "7g07f", "7g7f=", "K*5e", "P*", "7g7f++", "16a1a", "7G7F"]
        {
            assert!(UsiMove::parse(text).is_err(), "{text}");
        }
    }
}
