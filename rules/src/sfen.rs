//! SFEN: text positions. [`Setup`] is what the text says, unchecked;
//! [`Position::from_setup`] checks it against the rules.
//!
//! Piece codes come from the variant's tables: one letter bare (`P`, `+R`),
//! longer codes in brackets (`[GB]`, `+[LN]`), upper case for sente.

use crate::position::Position;
use crate::types::{Color, Kind, Piece, Square, KIND_SLOTS};
use crate::variant::{PromotionRule, RoyalRule, Variant};
use crate::zobrist::MAX_HAND;
use std::fmt::Write;

/// Why a SFEN string is not a position. Each variant names the rule broken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SfenError {
    #[error("SFEN has {0} fields; expected board, side, hand and move number")]
    FieldCount(usize),
    #[error("unknown piece '{0}'")]
    UnknownPiece(String),
    #[error("piece '{0}' cannot be promoted")]
    CannotPromote(String),
    #[error("rank {rank} has {found} squares; the board has {expected} files")]
    RankLength { rank: usize, found: usize, expected: usize },
    #[error("board has {found} ranks; expected {expected}")]
    RankCount { found: usize, expected: usize },
    #[error("{} has no king", .0.name())]
    MissingKing(Color),
    #[error("{} has more than one king", .0.name())]
    ExtraKing(Color),
    #[error("too many {kind:?} pieces: {found} (at most {max})")]
    TooManyPieces { kind: Kind, found: usize, max: usize },
    #[error("{piece:?} on {square:?} could never move again")]
    DeadPiece { piece: Piece, square: Square },
    #[error("two unpromoted {} pawns on file {file} (nifu)", .color.name())]
    DoublePawn { color: Color, file: u8 },
    #[error("side to move must be 'b' or 'w', not '{0}'")]
    BadSide(String),
    #[error("bad hand field '{0}'")]
    BadHand(String),
    #[error("{0} cannot be held in hand")]
    NotDroppable(String),
    #[error("this variant has no drops, but the hand field is '{0}'")]
    HandWithoutDrops(String),
    #[error("bad move number '{0}'")]
    BadMoveNumber(String),
    #[error("the side not to move is in check (its king could be captured)")]
    OpponentInCheck,
}

/// A position as written, before the rules are checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub variant: Variant,
    /// Dense squares, `row * size + col` (row 0 = rank a, col 0 = file 1).
    pub board: Vec<Option<Piece>>,
    pub hands: [[u8; KIND_SLOTS]; 2],
    pub side: Color,
    pub move_number: u32,
}

fn piece_token(variant: Variant, token: &str, promoted: bool) -> Result<Piece, SfenError> {
    let spec = variant.spec();
    let color = if token.chars().all(|c| c.is_ascii_uppercase()) {
        Color::Sente
    } else if token.chars().all(|c| c.is_ascii_lowercase()) {
        Color::Gote
    } else {
        return Err(SfenError::UnknownPiece(token.to_string()));
    };
    let upper = token.to_ascii_uppercase();
    let ks = spec.kinds.iter().find(|k| k.code == upper).ok_or_else(|| SfenError::UnknownPiece(token.to_string()))?;
    if promoted && ks.promotion.is_none() {
        return Err(SfenError::CannotPromote(token.to_string()));
    }
    Ok(Piece::new(color, ks.kind, promoted))
}

/// The SFEN text of a piece, e.g. `+P`, `[gb]`.
pub fn piece_code(variant: Variant, piece: Piece) -> String {
    let code = variant.spec().kind(piece.kind()).map_or("?", |k| k.code);
    let mut s = String::new();
    if piece.is_promoted() {
        s.push('+');
    }
    let code = if piece.color() == Color::Sente { code.to_string() } else { code.to_ascii_lowercase() };
    if code.len() > 1 {
        write!(s, "[{code}]").unwrap();
    } else {
        s.push_str(&code);
    }
    s
}

fn hand_kind(letter: char) -> Option<(Color, Kind)> {
    let color = if letter.is_ascii_uppercase() { Color::Sente } else { Color::Gote };
    Some((color, Kind::from_hand_letter(letter.to_ascii_uppercase())?))
}

impl Setup {
    /// Parses the four SFEN fields. A missing move number is taken as 1.
    pub fn parse(variant: Variant, text: &str) -> Result<Setup, SfenError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if !(3..=4).contains(&fields.len()) {
            return Err(SfenError::FieldCount(fields.len()));
        }
        let size = variant.size();
        let mut board = vec![None; size * size];
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != size {
            return Err(SfenError::RankCount { found: ranks.len(), expected: size });
        }
        for (row, rank) in ranks.iter().enumerate() {
            let mut col = size as isize - 1; // SFEN starts at the highest file
            let mut placed = 0usize;
            let chars: Vec<char> = rank.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                if c.is_ascii_digit() {
                    let mut n = 0usize;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        n = n * 10 + chars[i].to_digit(10).unwrap() as usize;
                        i += 1;
                    }
                    if n == 0 {
                        return Err(SfenError::UnknownPiece("0".into()));
                    }
                    placed += n;
                    col -= n as isize;
                    continue;
                }
                let promoted = c == '+';
                if promoted {
                    i += 1;
                }
                let token: String = match chars.get(i) {
                    Some('[') => {
                        let close = chars[i..].iter().position(|&c| c == ']').map(|p| p + i);
                        let close = close.ok_or_else(|| SfenError::UnknownPiece(chars[i..].iter().collect()))?;
                        let t: String = chars[i + 1..close].iter().collect();
                        i = close + 1;
                        t
                    }
                    Some(&c) if c.is_ascii_alphabetic() => {
                        i += 1;
                        c.to_string()
                    }
                    Some(&c) => return Err(SfenError::UnknownPiece(c.to_string())),
                    None => return Err(SfenError::UnknownPiece("+".into())),
                };
                let piece = piece_token(variant, &token, promoted)?;
                placed += 1;
                if col >= 0 && (col as usize) < size {
                    board[row * size + col as usize] = Some(piece);
                }
                col -= 1;
            }
            if placed != size {
                return Err(SfenError::RankLength { rank: row + 1, found: placed, expected: size });
            }
        }
        let side = match fields[1] {
            "b" => Color::Sente,
            "w" => Color::Gote,
            other => return Err(SfenError::BadSide(other.to_string())),
        };
        let mut hands = [[0u8; KIND_SLOTS]; 2];
        if fields[2] != "-" {
            if !variant.spec().drops {
                return Err(SfenError::HandWithoutDrops(fields[2].to_string()));
            }
            let mut count: Option<usize> = None;
            for c in fields[2].chars() {
                if let Some(d) = c.to_digit(10) {
                    let n = count.unwrap_or(0) * 10 + d as usize;
                    if n >= MAX_HAND {
                        return Err(SfenError::BadHand(fields[2].to_string()));
                    }
                    count = Some(n);
                    continue;
                }
                let (color, kind) = hand_kind(c).ok_or_else(|| {
                    if c.is_ascii_alphabetic() {
                        SfenError::NotDroppable(c.to_string())
                    } else {
                        SfenError::BadHand(fields[2].to_string())
                    }
                })?;
                let n = count.take().unwrap_or(1);
                if n == 0 {
                    return Err(SfenError::BadHand(fields[2].to_string()));
                }
                let slot = &mut hands[color.index()][kind as usize];
                let total = *slot as usize + n;
                if total >= MAX_HAND {
                    return Err(SfenError::BadHand(fields[2].to_string()));
                }
                *slot = total as u8;
            }
            if count.is_some() {
                return Err(SfenError::BadHand(fields[2].to_string()));
            }
        }
        let move_number = match fields.get(3) {
            None => 1,
            Some(s) => match s.parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(SfenError::BadMoveNumber(s.to_string())),
            },
        };
        Ok(Setup { variant, board, hands, side, move_number })
    }

    fn piece_counts(&self) -> [usize; KIND_SLOTS] {
        let mut counts = [0usize; KIND_SLOTS];
        for p in self.board.iter().flatten() {
            counts[p.kind() as usize] += 1;
        }
        for hand in &self.hands {
            for (k, &n) in hand.iter().enumerate() {
                counts[k] += n as usize;
            }
        }
        counts
    }
}

impl Position {
    /// Parses and checks a SFEN string.
    pub fn from_sfen(variant: Variant, text: &str) -> Result<Position, SfenError> {
        Position::from_setup(Setup::parse(variant, text)?)
    }

    /// Checks a setup against the rules of its variant.
    pub fn from_setup(setup: Setup) -> Result<Position, SfenError> {
        let variant = setup.variant;
        let spec = variant.spec();
        let size = spec.size;
        // Most pieces of a kind: what both sides start with. Promoted pieces
        // count as their base kind (shogi's fixed set of pieces).
        let start = Setup::parse(variant, spec.start_sfen).expect("start position parses");
        let max = start.piece_counts();
        let counts = setup.piece_counts();
        for ks in spec.kinds {
            let k = ks.kind as usize;
            if counts[k] > max[k] && ks.kind != Kind::King {
                return Err(SfenError::TooManyPieces { kind: ks.kind, found: counts[k], max: max[k] });
            }
        }
        let mut pos = Position::empty(variant);
        let mut kings = [0usize; 2];
        for (i, p) in setup.board.iter().enumerate() {
            let Some(p) = *p else { continue };
            let sq = Square::from_dense(i, size);
            let ks = spec.kind(p.kind()).expect("parsed kinds belong to the variant");
            // Dai's promotion rule lets a piece reach such a square unpromoted
            // (a non-capture inside the zone cannot promote), so only the
            // other variants refuse it.
            let dead_allowed = spec.promotion_rule == PromotionRule::EnterOrCapture;
            if !dead_allowed && !p.is_promoted() && (spec.rows_ahead(p.color(), sq.row()) as u8) < ks.dead_ranks {
                return Err(SfenError::DeadPiece { piece: p, square: sq });
            }
            if p.kind() == Kind::King {
                kings[p.color().index()] += 1;
            }
            if spec.drops && p.kind() == Kind::Pawn && !p.is_promoted() {
                let bit = 1 << sq.col();
                if pos.pawn_files[p.color().index()] & bit != 0 {
                    return Err(SfenError::DoublePawn { color: p.color(), file: sq.file() });
                }
                pos.pawn_files[p.color().index()] |= bit;
            }
            pos.board[sq.index()] = p.code();
            if pos.t.royal_code[p.code() as usize] {
                pos.royals[p.color().index()].add(sq);
            }
        }
        for c in Color::BOTH {
            if kings[c.index()] > 1 {
                return Err(SfenError::ExtraKing(c));
            }
            // Where royals can be captured (sho, dai) a side without one is a
            // finished game (royal capture), which a record may end on.
            let needs_king = spec.royal_rule == RoyalRule::Check;
            if needs_king && kings[c.index()] == 0 {
                return Err(SfenError::MissingKing(c));
            }
        }
        pos.hands = setup.hands;
        pos.side = setup.side;
        pos.start_move_number = setup.move_number;
        pos.hash = pos.zobrist_from_scratch();
        pos.recompute_occupancy();
        if let Some(k) = pos.checked_royal(pos.side.opponent()) {
            if pos.attacked(k, pos.side) {
                return Err(SfenError::OpponentInCheck);
            }
        }
        Ok(pos)
    }

    /// The SFEN text of this position.
    pub fn to_sfen(&self) -> String {
        let variant = self.variant();
        let size = self.t.spec.size;
        let mut s = String::new();
        for row in 0..size {
            if row > 0 {
                s.push('/');
            }
            let mut empty = 0;
            for col in (0..size).rev() {
                match self.piece_at(Square::from_col_row(col, row)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            write!(s, "{empty}").unwrap();
                            empty = 0;
                        }
                        s.push_str(&piece_code(variant, p));
                    }
                }
            }
            if empty > 0 {
                write!(s, "{empty}").unwrap();
            }
        }
        s.push_str(if self.side == Color::Sente { " b " } else { " w " });
        let mut hand = String::new();
        for c in Color::BOTH {
            for kind in Kind::HAND {
                let n = self.hands[c.index()][kind as usize];
                if n == 0 {
                    continue;
                }
                if n > 1 {
                    write!(hand, "{n}").unwrap();
                }
                let letter = kind.hand_letter().expect("hand kinds have letters");
                hand.push(if c == Color::Sente { letter } else { letter.to_ascii_lowercase() });
            }
        }
        s.push_str(if hand.is_empty() { "-" } else { &hand });
        write!(s, " {}", self.move_number()).unwrap();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(sfen: &str) -> SfenError {
        Position::from_sfen(Variant::Shogi, sfen).unwrap_err()
    }

    #[test]
    fn start_positions_round_trip() {
        for v in Variant::ALL {
            let pos = Position::startpos(v);
            assert_eq!(pos.to_sfen(), v.spec().start_sfen, "{v}");
        }
    }

    #[test]
    fn each_broken_rule_has_its_error() {
        use SfenError::*;
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL"), FieldCount(1)));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNX b - 1"), UnknownPiece(_)));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSG+KGSNL b - 1"), CannotPromote(_)));
        assert!(matches!(
            err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R/LNSGKGSNL b - 1"),
            RankLength { rank: 8, .. }
        ));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"), RankCount { .. }));
        assert!(matches!(
            err("lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"),
            MissingKing(Color::Gote)
        ));
        assert!(matches!(
            err("lnsgkgsnl/1r5b1/ppppppppp/9/4K4/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"),
            ExtraKing(Color::Sente)
        ));
        assert!(matches!(
            err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1"),
            TooManyPieces { kind: Kind::Rook, .. }
        ));
        assert!(matches!(err("lnsgkgsPl/1r5b1/pppppppp1/9/9/9/PPPPPPP1P/1B5R1/LNSGKGSNL b - 1"), DeadPiece { .. }));
        assert!(matches!(
            err("lnsgkgsnl/1r5b1/ppppppppp/9/9/P8/PPPPPPPP1/1B5R1/LNSGKGSNL b - 1"),
            DoublePawn { color: Color::Sente, file: 9 }
        ));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1"), BadSide(_)));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 2 1"), BadHand(_)));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b K 1"), NotDroppable(_)));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 0"), BadMoveNumber(_)));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - x"), BadMoveNumber(_)));
        assert!(matches!(err("4k4/9/4R4/9/9/9/9/9/4K4 b - 1"), OpponentInCheck));
    }

    #[test]
    fn hands_and_move_numbers_print_canonically() {
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/9/9/9/9/4K4 w P2RbG10p 7").unwrap();
        assert_eq!(pos.to_sfen(), "4k4/9/9/9/9/9/9/9/4K4 w 2RGPb10p 7");
        assert!(matches!(
            Position::from_sfen(Variant::Sho, "4k4/9/9/9/9/9/9/9/4K4 b P 1"),
            Err(SfenError::HandWithoutDrops(_))
        ));
    }
}
