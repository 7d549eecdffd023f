//! SFEN: text positions. [`Setup`] is what the text says, unchecked;
//! [`Position::from_setup`] checks it against the rules.
//!
//! Piece codes come from the variant's tables: one letter bare (`P`, `+R`),
//! longer codes in brackets (`[GB]`, `+[LN]`), upper case for sente.

use crate::decimal::{decimal_at_most, digit_run};
use crate::excerpt::excerpt;
use crate::position::Position;
use crate::types::{Color, Kind, Piece, Square, KIND_SLOTS};
use crate::variant::{PromotionRule, RoyalRule, Variant};
use crate::zobrist::MAX_HAND;
use std::fmt::Write;

/// The largest move number a SFEN may give: beyond any real game, and low
/// enough that counting the moves played after it cannot overflow.
pub const MAX_MOVE_NUMBER: u32 = 1_000_000_000;

/// Why a SFEN string is not a position. Each variant names the rule broken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SfenError {
    #[error("SFEN has {0} fields; expected board, side, hand and move number")]
    FieldCount(usize),
    #[error("unknown piece '{}'", excerpt(.0))]
    UnknownPiece(String),
    #[error("piece '{}' cannot be promoted", excerpt(.0))]
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
    #[error("side to move must be 'b' or 'w', not '{}'", excerpt(.0))]
    BadSide(String),
    #[error("bad hand field '{}'", excerpt(.0))]
    BadHand(String),
    #[error("{} cannot be held in hand", excerpt(.0))]
    NotDroppable(String),
    #[error("this variant has no drops, but the hand field is '{}'", excerpt(.0))]
    HandWithoutDrops(String),
    #[error("bad move number '{}' (expected digits)", excerpt(.0))]
    BadMoveNumber(String),
    #[error("move number {} is out of range (1 to {max})", excerpt(.text))]
    MoveNumberOutOfRange { text: String, max: u32 },
    #[error("rank {rank}: '{}' is not a number of empty squares (1 to {files}, no leading zero)", excerpt(.run))]
    EmptyRun { rank: usize, run: String, files: usize },
    #[error("{}{piece} in hand: a count in hand is 1 to {max}", excerpt(.count))]
    HandCount { count: String, piece: char, max: usize },
    #[error("the board has {found} squares; a {size}x{size} board has {expected}", expected = .size * .size)]
    BoardSize { found: usize, size: usize },
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
    let mut s = String::new();
    push_piece_code(&mut s, variant, piece);
    s
}

/// Appends [`piece_code`] to `s` (without a `String` of its own: a position's SFEN is
/// written for every sample of self-play).
fn push_piece_code(s: &mut String, variant: Variant, piece: Piece) {
    let code = variant.spec().kind(piece.kind()).map_or("?", |k| k.code);
    if piece.is_promoted() {
        s.push('+');
    }
    let wide = code.len() > 1;
    if wide {
        s.push('[');
    }
    for c in code.chars() {
        s.push(if piece.color() == Color::Sente { c } else { c.to_ascii_lowercase() });
    }
    if wide {
        s.push(']');
    }
}

fn hand_kind(letter: char) -> Option<(Color, Kind)> {
    let color = if letter.is_ascii_uppercase() { Color::Sente } else { Color::Gote };
    Some((color, Kind::from_hand_letter(letter.to_ascii_uppercase())?))
}

/// The squares of one rank, from the highest file down: `row` is 0 for
/// the first rank.
fn parse_rank(variant: Variant, row: usize, rank: &str) -> Result<Vec<Option<Piece>>, SfenError> {
    let size = variant.size();
    let mut squares = Vec::with_capacity(size);
    let mut rest = rank;
    while !rest.is_empty() {
        let digits = digit_run(rest);
        if digits > 0 {
            let run = &rest[..digits];
            // Checked: a run longer than the rank is refused before it can
            // wrap around and make pieces vanish.
            let empty = Some(run)
                .filter(|r| !r.starts_with('0'))
                .and_then(|r| decimal_at_most(r, size as u64))
                .ok_or_else(|| SfenError::EmptyRun { rank: row + 1, run: run.to_string(), files: size })?;
            squares.extend(std::iter::repeat_n(None, empty as usize));
            rest = &rest[digits..];
            continue;
        }
        let (piece, used) = piece_at_start(variant, rest)?;
        squares.push(Some(piece));
        rest = &rest[used..];
    }
    if squares.len() != size {
        return Err(SfenError::RankLength { rank: row + 1, found: squares.len(), expected: size });
    }
    Ok(squares)
}

/// The piece written at the start of `text` (`P`, `+r`, `[GB]`, `+[ln]`)
/// and the bytes it takes.
fn piece_at_start(variant: Variant, text: &str) -> Result<(Piece, usize), SfenError> {
    let promoted = text.starts_with('+');
    let body = &text[usize::from(promoted)..];
    let (token, used) = match body.chars().next() {
        Some('[') => {
            let close = body.find(']').ok_or_else(|| SfenError::UnknownPiece(body.to_string()))?;
            let token = &body[1..close];
            // Brackets are for codes of more than one letter only.
            if token.len() < 2 {
                return Err(SfenError::UnknownPiece(body[..=close].to_string()));
            }
            (token, close + 1)
        }
        Some(c) if c.is_ascii_alphabetic() => (&body[..1], 1),
        Some(c) => return Err(SfenError::UnknownPiece(c.to_string())),
        None => return Err(SfenError::UnknownPiece("+".into())),
    };
    Ok((piece_token(variant, token, promoted)?, usize::from(promoted) + used))
}

/// The hand field: `-`, or counts and letters (`2RGPb10p`), upper case for
/// sente; a count is 1 to the most a hand can hold.
fn parse_hands(variant: Variant, field: &str) -> Result<[[u8; KIND_SLOTS]; 2], SfenError> {
    let mut hands = [[0u8; KIND_SLOTS]; 2];
    if field == "-" {
        return Ok(hands);
    }
    if !variant.spec().drops {
        return Err(SfenError::HandWithoutDrops(field.to_string()));
    }
    let max = MAX_HAND - 1;
    let mut rest = field;
    while !rest.is_empty() {
        let digits = digit_run(rest);
        let letter = rest[digits..].chars().next().ok_or_else(|| SfenError::BadHand(field.to_string()))?;
        let count_text = &rest[..digits];
        rest = &rest[digits + letter.len_utf8()..];
        let (color, kind) = hand_kind(letter).ok_or_else(|| {
            if letter.is_ascii_alphabetic() {
                SfenError::NotDroppable(letter.to_string())
            } else {
                SfenError::BadHand(field.to_string())
            }
        })?;
        let too_many = |count: String| SfenError::HandCount { count, piece: letter, max };
        let count = match digits {
            0 => 1,
            _ => decimal_at_most(count_text, max as u64)
                .filter(|&n| n >= 1)
                .ok_or_else(|| too_many(count_text.to_string()))? as usize,
        };
        let slot = &mut hands[color.index()][kind as usize];
        let total = usize::from(*slot) + count;
        if total > max {
            return Err(too_many(total.to_string()));
        }
        *slot = total as u8;
    }
    Ok(hands)
}

/// The move number field: digits, 1 to [`MAX_MOVE_NUMBER`].
fn parse_move_number(text: &str) -> Result<u32, SfenError> {
    if digit_run(text) != text.len() || text.is_empty() {
        return Err(SfenError::BadMoveNumber(text.to_string()));
    }
    decimal_at_most(text, u64::from(MAX_MOVE_NUMBER))
        .filter(|&n| n >= 1)
        .map(|n| n as u32)
        .ok_or_else(|| SfenError::MoveNumberOutOfRange { text: text.to_string(), max: MAX_MOVE_NUMBER })
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
            // SFEN starts each rank at the highest file.
            let squares = parse_rank(variant, row, rank)?;
            for (i, square) in squares.into_iter().enumerate() {
                board[row * size + size - 1 - i] = square;
            }
        }
        let side = match fields[1] {
            "b" => Color::Sente,
            "w" => Color::Gote,
            other => return Err(SfenError::BadSide(other.to_string())),
        };
        let hands = parse_hands(variant, fields[2])?;
        let move_number = fields.get(3).map_or(Ok(1), |text| parse_move_number(text))?;
        Ok(Setup { variant, board, hands, side, move_number })
    }

    /// What [`Setup::parse`] guarantees, for setups built in memory (record
    /// readers): the board's size, the move number's range, and hands that
    /// hold only pieces that can be dropped.
    fn check_fields(&self) -> Result<(), SfenError> {
        let size = self.variant.size();
        if self.board.len() != size * size {
            return Err(SfenError::BoardSize { found: self.board.len(), size });
        }
        if !(1..=MAX_MOVE_NUMBER).contains(&self.move_number) {
            let text = self.move_number.to_string();
            return Err(SfenError::MoveNumberOutOfRange { text, max: MAX_MOVE_NUMBER });
        }
        for hand in &self.hands {
            for (slot, &n) in hand.iter().enumerate() {
                let kind = Kind::from_u8(slot as u8);
                let name = kind.map_or_else(|| format!("kind slot {slot}"), |k| k.code().to_string());
                match kind.and_then(Kind::hand_letter) {
                    _ if n == 0 => {}
                    None => return Err(SfenError::NotDroppable(name)),
                    Some(_) if !self.variant.spec().drops => {
                        return Err(SfenError::HandWithoutDrops(format!("{n}{name}")))
                    }
                    Some(letter) if usize::from(n) >= MAX_HAND => {
                        return Err(SfenError::HandCount { count: n.to_string(), piece: letter, max: MAX_HAND - 1 })
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
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

    /// Parses a tsume problem: like [`Position::from_sfen`], except that the side to
    /// move (the attacker) may have no king, as tsume problems are usually set and GUIs
    /// send them. Such a position is for a mate solver only: the attacker's moves are
    /// bound by no check rule.
    pub fn from_sfen_tsume(variant: Variant, text: &str) -> Result<Position, SfenError> {
        Position::from_setup_with(Setup::parse(variant, text)?, true)
    }

    /// Checks a setup against the rules of its variant.
    pub fn from_setup(setup: Setup) -> Result<Position, SfenError> {
        Position::from_setup_with(setup, false)
    }

    /// [`Position::from_setup`]; `mover_king_optional`: the side to move may lack its
    /// king (a tsume problem).
    fn from_setup_with(setup: Setup, mover_king_optional: bool) -> Result<Position, SfenError> {
        let variant = setup.variant;
        let spec = variant.spec();
        let size = spec.size;
        setup.check_fields()?;
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
            let needs_king = spec.royal_rule == RoyalRule::Check && !(mover_king_optional && c == setup.side);
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
                        push_piece_code(&mut s, variant, p);
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
        // A tsume problem may leave out the attacker's king (not the defender's).
        let tsume = "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1";
        assert!(matches!(err(tsume), MissingKing(Color::Sente)));
        let pos = Position::from_sfen_tsume(Variant::Shogi, tsume).unwrap();
        assert!(pos.legal_moves().iter().any(|m| m.to_usi() == "G*5b"));
        assert!(matches!(
            Position::from_sfen_tsume(Variant::Shogi, "9/9/4P4/9/9/9/9/9/4K4 b G 1"),
            Err(MissingKing(Color::Gote))
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
        assert!(matches!(
            err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 0"),
            MoveNumberOutOfRange { .. }
        ));
        assert!(matches!(err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - x"), BadMoveNumber(_)));
        assert!(matches!(err("4k4/9/4R4/9/9/9/9/9/4K4 b - 1"), OpponentInCheck));
    }

    #[test]
    fn digit_runs_and_counts_are_checked_not_wrapped() {
        use SfenError::*;
        // u64::MAX + 10 wraps to 9: unchecked, this rank read as empty.
        assert!(matches!(err("k8/9/9/9/18446744073709551625/9/9/9/8K b - 1"), EmptyRun { rank: 5, .. }));
        // A run of -1 (wrapped) made the gold vanish under the silver.
        assert!(matches!(err("k8/9/9/9/4G18446744073709551615S4/9/9/9/8K b - 1"), EmptyRun { rank: 5, .. }));
        for rank in ["08K", "0K8", "10K", "K08"] {
            assert!(matches!(err(&format!("k8/9/9/9/9/9/9/9/{rank} b - 1")), EmptyRun { rank: 9, .. }), "{rank}");
        }
        assert!(matches!(err("k8/9/9/9/9/9/9/9/[K]8 b - 1"), UnknownPiece(_)), "one letter needs no brackets");
        let hand = |h: &str| Position::from_sfen(Variant::Shogi, &format!("k8/9/9/9/9/9/9/9/8K b {h} 1"));
        assert_eq!(hand("18P").unwrap().hand(Color::Sente, Kind::Pawn), 18);
        for h in ["19P", "0P", "9P10P", "18446744073709551617P", "184467440737095516160P"] {
            assert!(matches!(hand(h), Err(HandCount { piece: 'P', max: 18, .. })), "{h}: {:?}", hand(h));
        }
        let number = |n: &str| Position::from_sfen(Variant::Shogi, &format!("k8/9/9/9/9/9/9/9/8K b - {n}"));
        assert_eq!(number("1000000000").unwrap().move_number(), MAX_MOVE_NUMBER);
        for n in ["0", "1000000001", "4294967297", "18446744073709551617"] {
            assert!(matches!(number(n), Err(MoveNumberOutOfRange { .. })), "{n}");
        }
        for n in ["+5", "-1", "1e3", "５"] {
            assert!(matches!(number(n), Err(BadMoveNumber(_))), "{n}");
        }
    }

    #[test]
    fn setups_built_in_memory_are_checked_like_parsed_ones() {
        let good = Setup::parse(Variant::Shogi, "k8/9/9/9/9/9/9/9/8K b P 1").unwrap();
        let mut s = good.clone();
        s.board.pop();
        assert!(matches!(Position::from_setup(s), Err(SfenError::BoardSize { found: 80, size: 9 })));
        let mut s = good.clone();
        s.move_number = u32::MAX;
        assert!(matches!(Position::from_setup(s), Err(SfenError::MoveNumberOutOfRange { .. })));
        let mut s = good.clone();
        s.hands[0][Kind::King as usize] = 1;
        assert!(matches!(Position::from_setup(s), Err(SfenError::NotDroppable(_))));
        let mut s = good;
        s.hands[1][Kind::Pawn as usize] = 200;
        assert!(matches!(Position::from_setup(s), Err(SfenError::HandCount { .. })));
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
