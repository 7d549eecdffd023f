//! `PackedSfen`: YaneuraOu's 32-byte standard shogi position, as cshogi's
//! `Board.to_psfen` writes it.
//!
//! Bits go from bit 0 of byte 0 upwards (least significant bit first), as in
//! `HuffmanCodedPos`, but the codes are others. In order: the side to move
//! (1 bit, 1 = gote), the sente then the gote king's square (7 bits each, a
//! [`square_index`]), then every other square in index order, then one code
//! for each piece in hand (sente's, then gote's; cshogi writes pawn, lance,
//! knight, silver, gold, bishop, rook, YaneuraOu puts gold after rook: the
//! order does not change what the codes say, and readers take any order),
//! then one code for each piece in neither (the piece box).
//!
//! A piece kind has a prefix: pawn `10`, lance `1100`, knight `1101`, silver
//! `1110`, gold `11110`, bishop `111110`, rook `111111` (bits in the order
//! written); an empty square is `0`. A piece on the board is its prefix, a
//! promoted bit (not for gold) and a colour bit (1 = gote). A piece in hand
//! drops the prefix's leading `1`, then a promoted bit of 0 (not for gold) and
//! its colour bit. A piece in the box is written like a sente piece in hand
//! with the promoted bit set; the gold, which has no promoted bit, borrows
//! the code of a promoted gote silver in hand (`11011`). A piece off the
//! board is one bit shorter than on it, and the square it leaves costs one
//! bit, so the 40 pieces always fill 256 bits.

use super::super::huffman_bits::{
    self as bits, check_counts, code, decode_table, other_squares, read_opening, standard_count, BitReader, Code,
    DecodeTable, OffBoard, PieceCount, BITS, OFF_BOARD,
};
use crate::sfen::{Setup, SfenError};
use crate::types::{Color, Kind, Piece, KIND_SLOTS};
use crate::{Position, Variant};
use std::sync::LazyLock;

/// Bytes of a `PackedSfen`.
pub const PSFEN_BYTES: usize = bits::BYTES;

/// Why bytes are not the `PackedSfen` of a legal position, or a position has
/// no `PackedSfen`. Bits count from bit 0 of byte 0.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PsfenError {
    #[error("PackedSfen holds standard shogi positions, not {0}")]
    NotStandardShogi(Variant),
    #[error("bad Huffman code at bit {bit}: the bits there are no piece's code")]
    InvalidCode { bit: usize },
    #[error("bad Huffman code at bit {bit}: the piece there runs past the 256 bits")]
    PastTheEnd { bit: usize },
    #[error("{} king on square index {index}, which is off the 9x9 board or the other king's", .color.name())]
    KingSquare { color: Color, index: u8 },
    #[error("{found} {kind:?} pieces on the board, in hand and in the piece box; standard shogi has {expected}")]
    PieceCount { kind: Kind, found: usize, expected: usize },
    #[error("not a legal position: {0}")]
    IllegalPosition(SfenError),
}

/// The kinds off the board in the order cshogi writes them.
const HAND_ORDER: [Kind; 7] =
    [Kind::Pawn, Kind::Lance, Kind::Knight, Kind::Silver, Kind::Gold, Kind::Bishop, Kind::Rook];

/// The kind prefixes, bits in the order written.
const PREFIXES: [(Kind, &str); 7] = [
    (Kind::Pawn, "10"),
    (Kind::Lance, "1100"),
    (Kind::Knight, "1101"),
    (Kind::Silver, "1110"),
    (Kind::Gold, "11110"),
    (Kind::Bishop, "111110"),
    (Kind::Rook, "111111"),
];
/// A gold in the piece box: a promoted gote silver's code in hand.
const BOX_GOLD: &str = "11011";

fn prefix(kind: Kind) -> &'static str {
    PREFIXES.iter().find(|(k, _)| *k == kind).map(|(_, p)| *p).expect("standard shogi kinds have prefixes")
}

fn flag(on: bool) -> &'static str {
    if on {
        "1"
    } else {
        "0"
    }
}

fn board_code(piece: Piece) -> Code {
    let promoted = if piece.kind() == Kind::Gold { "" } else { flag(piece.is_promoted()) };
    code(&format!("{}{promoted}{}", prefix(piece.kind()), flag(piece.color() == Color::Gote)))
}

fn off_board_code(kind: Kind, place: OffBoard) -> Code {
    let short = &prefix(kind)[1..];
    match (kind, place) {
        (Kind::Gold, OffBoard::Box) => code(BOX_GOLD),
        (Kind::Gold, OffBoard::Hand(c)) => code(&format!("{short}{}", flag(c == Color::Gote))),
        (_, OffBoard::Hand(c)) => code(&format!("{short}0{}", flag(c == Color::Gote))),
        (_, OffBoard::Box) => code(&format!("{short}10")),
    }
}

const EMPTY_SQUARE: &str = "0";

fn board_codes() -> Vec<(Option<Piece>, Code)> {
    let mut codes = vec![(None, code(EMPTY_SQUARE))];
    for (kind, _) in PREFIXES {
        for color in Color::BOTH {
            for promoted in [false, true].into_iter().filter(|&p| !p || kind != Kind::Gold) {
                let piece = Piece::new(color, kind, promoted);
                codes.push((Some(piece), board_code(piece)));
            }
        }
    }
    codes
}

fn off_board_codes() -> Vec<((Kind, OffBoard), Code)> {
    PREFIXES
        .iter()
        .flat_map(|&(kind, _)| OFF_BOARD.into_iter().map(move |place| ((kind, place), off_board_code(kind, place))))
        .collect()
}

static BOARD_CODES: LazyLock<Vec<(Option<Piece>, Code)>> = LazyLock::new(board_codes);
static OFF_BOARD_CODES: LazyLock<Vec<((Kind, OffBoard), Code)>> = LazyLock::new(off_board_codes);
static BOARD_DECODE: LazyLock<DecodeTable<Option<Piece>>> = LazyLock::new(|| decode_table(&BOARD_CODES));
static OFF_BOARD_DECODE: LazyLock<DecodeTable<(Kind, OffBoard)>> = LazyLock::new(|| decode_table(&OFF_BOARD_CODES));

impl From<PieceCount> for PsfenError {
    fn from(PieceCount { kind, found, expected }: PieceCount) -> PsfenError {
        PsfenError::PieceCount { kind, found, expected }
    }
}

/// The next code of `codes` (`table` decodes them).
fn next_code<T: Copy>(r: &mut BitReader, table: &DecodeTable<T>, codes: &[(T, Code)]) -> Result<T, PsfenError> {
    let bit = r.bit();
    r.next_code(table).ok_or_else(|| {
        if r.cut_short(codes) {
            PsfenError::PastTheEnd { bit }
        } else {
            PsfenError::InvalidCode { bit }
        }
    })
}

/// The `PackedSfen` of a standard shogi position, as cshogi's
/// `Board.to_psfen` writes it.
pub fn encode_position(pos: &Position) -> Result<[u8; PSFEN_BYTES], PsfenError> {
    if pos.variant() != Variant::Shogi {
        return Err(PsfenError::NotStandardShogi(pos.variant()));
    }
    Ok(bits::encode(pos, &HAND_ORDER, code(EMPTY_SQUARE), board_code, off_board_code)?)
}

/// The position that `bytes` encode, checked against the rules, with move
/// number 1 (cshogi's `Board.set_psfen` sets 1 too).
pub fn decode_position(bytes: &[u8; PSFEN_BYTES]) -> Result<Position, PsfenError> {
    decode_position_at(bytes, 1)
}

/// [`decode_position`] with the given move number (at least 1).
pub(crate) fn decode_position_at(bytes: &[u8; PSFEN_BYTES], move_number: u32) -> Result<Position, PsfenError> {
    let mut r = BitReader::new(bytes);
    let opening = read_opening(&mut r).map_err(|(color, index)| PsfenError::KingSquare { color, index })?;
    let mut board = opening.board;
    let mut counts = [0usize; KIND_SLOTS];
    let too_many = |kind: Kind, found: usize| {
        let expected = standard_count(kind);
        (found > expected).then_some(PsfenError::PieceCount { kind, found, expected })
    };
    for (_, slot) in other_squares(opening.kings) {
        if let Some(piece) = next_code(&mut r, &BOARD_DECODE, &BOARD_CODES)? {
            counts[piece.kind() as usize] += 1;
            if let Some(e) = too_many(piece.kind(), counts[piece.kind() as usize]) {
                return Err(e);
            }
            board[slot] = Some(piece);
        }
    }
    let mut hands = [[0u8; KIND_SLOTS]; 2];
    while r.bit() < BITS {
        let (kind, place) = next_code(&mut r, &OFF_BOARD_DECODE, &OFF_BOARD_CODES)?;
        counts[kind as usize] += 1;
        if let Some(e) = too_many(kind, counts[kind as usize]) {
            return Err(e);
        }
        if let OffBoard::Hand(color) = place {
            hands[color.index()][kind as usize] += 1;
        }
    }
    check_counts(&counts, &HAND_ORDER)?;
    let setup = Setup { variant: Variant::Shogi, board, hands, side: opening.side, move_number };
    Position::from_setup(setup).map_err(PsfenError::IllegalPosition)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cshogi's tables (position.cpp, `PackedSfen::boardCodeTable` and friends):
    /// the codes as numbers, least significant bit written first, and lengths.
    #[test]
    fn codes_are_cshogis() {
        let board = |kind, promoted, color| board_code(Piece::new(color, kind, promoted));
        let (s, g) = (Color::Sente, Color::Gote);
        assert_eq!(board(Kind::Pawn, false, s), Code { bits: 0b1, len: 4 });
        assert_eq!(board(Kind::Pawn, true, g), Code { bits: 0b1101, len: 4 });
        assert_eq!(board(Kind::Knight, false, g), Code { bits: 0b101011, len: 6 });
        assert_eq!(board(Kind::Gold, false, g), Code { bits: 0b101111, len: 6 });
        assert_eq!(board(Kind::Bishop, true, s), Code { bits: 0b1011111, len: 8 });
        assert_eq!(board(Kind::Rook, true, g), Code { bits: 0b11111111, len: 8 });
        let off = off_board_code;
        assert_eq!(off(Kind::Pawn, OffBoard::Hand(g)), Code { bits: 0b100, len: 3 });
        assert_eq!(off(Kind::Gold, OffBoard::Hand(g)), Code { bits: 0b10111, len: 5 });
        assert_eq!(off(Kind::Bishop, OffBoard::Hand(g)), Code { bits: 0b1001111, len: 7 });
        assert_eq!(off(Kind::Pawn, OffBoard::Box), Code { bits: 0b10, len: 3 });
        assert_eq!(off(Kind::Gold, OffBoard::Box), Code { bits: 0b11011, len: 5 });
        assert_eq!(off(Kind::Rook, OffBoard::Box), Code { bits: 0b111111, len: 7 });
    }

    #[test]
    fn codes_are_prefix_free_and_lengths_fill_256_bits() {
        let board: Vec<Code> = board_codes().into_iter().map(|(_, c)| c).collect();
        let off: Vec<Code> = off_board_codes().into_iter().map(|(_, c)| c).collect();
        assert_eq!((board.len(), off.len()), (27, 21));
        bits::assert_prefix_free(&board);
        bits::assert_prefix_free(&off);
        for (kind, _) in PREFIXES {
            let on = board_code(Piece::new(Color::Sente, kind, false)).len;
            assert!(OFF_BOARD.into_iter().all(|p| off_board_code(kind, p).len + 1 == on), "{kind:?}");
        }
    }
}
