//! `HuffmanCodedPos`: a standard shogi position in 32 bytes (Apery's format,
//! which cshogi and dlshogi use).
//!
//! Bits are written from bit 0 of byte 0 upwards (least significant bit
//! first). In order: the side to move (1 bit, 1 = gote), the squares of the
//! sente and gote kings (7 bits each, as a [`super::square_index`]), then every
//! other square in index order as a board code, then one code for each
//! piece in hand (sente's, then gote's, by kind pawn, lance, knight, silver,
//! gold, bishop, rook), then one code for each piece in neither (the piece
//! box: handicap and problem positions). Every piece kind's hand and box
//! code is one bit shorter than its board code, so the 40 pieces always
//! fill exactly 256 bits.

use super::super::huffman_bits::{
    self as bits, check_counts, code, decode_table, other_squares, read_opening, BitReader, Code, DecodeTable,
    OffBoard, PieceCount, BITS, OFF_BOARD,
};
use crate::sfen::{Setup, SfenError};
use crate::types::{Color, Kind, Piece, KIND_SLOTS};
use crate::{Position, Variant};
use std::sync::LazyLock;

/// Bytes of a `HuffmanCodedPos`.
pub const HCP_BYTES: usize = bits::BYTES;

/// Why bytes are not a `HuffmanCodedPos` of a legal position, or a position
/// has no `HuffmanCodedPos`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HcpError {
    #[error("HuffmanCodedPos holds standard shogi positions, not {0}")]
    NotStandardShogi(Variant),
    #[error("invalid Huffman code at bit {bit}")]
    InvalidCode { bit: usize },
    #[error("{} king on square index {index}, which is off the 9x9 board or the other king's", .color.name())]
    KingSquare { color: Color, index: u8 },
    #[error("{found} {kind:?} pieces on the board, in hand and in the piece box; standard shogi has {expected}")]
    PieceCount { kind: Kind, found: usize, expected: usize },
    #[error("not a legal position: {0}")]
    IllegalPosition(SfenError),
}

/// The hand kinds in the order the format writes them.
const HAND_ORDER: [Kind; 7] =
    [Kind::Pawn, Kind::Lance, Kind::Knight, Kind::Silver, Kind::Gold, Kind::Bishop, Kind::Rook];

/// Board codes, written first bit first: `1`, a kind prefix, the colour
/// (1 = gote), the promoted flag (not for gold). Columns: sente, sente
/// promoted, gote, gote promoted.
const BOARD_CODES: [(Kind, [Code; 4]); 7] = [
    (Kind::Pawn, [code("1000"), code("1001"), code("1010"), code("1011")]),
    (Kind::Lance, [code("110000"), code("110001"), code("110010"), code("110011")]),
    (Kind::Knight, [code("111000"), code("111001"), code("111010"), code("111011")]),
    (Kind::Silver, [code("110100"), code("110101"), code("110110"), code("110111")]),
    (Kind::Gold, [code("111100"), code(""), code("111101"), code("")]),
    (Kind::Bishop, [code("11111000"), code("11111001"), code("11111010"), code("11111011")]),
    (Kind::Rook, [code("11111100"), code("11111101"), code("11111110"), code("11111111")]),
];
const EMPTY_SQUARE: Code = code("0");

/// Codes of pieces off the board, written first bit first. Columns: in
/// sente's hand, in gote's hand, in the piece box.
const OFF_BOARD_CODES: [(Kind, [Code; 3]); 7] = [
    (Kind::Pawn, [code("000"), code("001"), code("010")]),
    (Kind::Lance, [code("10000"), code("10001"), code("10010")]),
    (Kind::Knight, [code("11000"), code("11001"), code("11010")]),
    (Kind::Silver, [code("10100"), code("10101"), code("10110")]),
    (Kind::Gold, [code("11100"), code("11101"), code("10111")]),
    (Kind::Bishop, [code("1111100"), code("1111101"), code("1111000")]),
    (Kind::Rook, [code("1111110"), code("1111111"), code("1111010")]),
];

fn board_code(piece: Piece) -> Code {
    let column = 2 * piece.color().index() + piece.is_promoted() as usize;
    let (_, codes) = BOARD_CODES.iter().find(|(k, _)| *k == piece.kind()).expect("standard shogi kinds have codes");
    codes[column]
}

fn off_board_code(kind: Kind, place: OffBoard) -> Code {
    let (_, codes) = OFF_BOARD_CODES.iter().find(|(k, _)| *k == kind).expect("standard shogi kinds have codes");
    codes[OFF_BOARD.iter().position(|p| *p == place).expect("every place has a column")]
}

static BOARD_DECODE: LazyLock<DecodeTable<Option<Piece>>> = LazyLock::new(|| {
    let mut codes = vec![(None, EMPTY_SQUARE)];
    for (kind, columns) in BOARD_CODES {
        for (column, c) in columns.into_iter().enumerate() {
            let color = if column >= 2 { Color::Gote } else { Color::Sente };
            codes.push((Some(Piece::new(color, kind, column % 2 == 1)), c));
        }
    }
    decode_table(&codes)
});

static OFF_BOARD_DECODE: LazyLock<DecodeTable<(Kind, OffBoard)>> = LazyLock::new(|| {
    let codes: Vec<_> = OFF_BOARD_CODES
        .iter()
        .flat_map(|(kind, columns)| OFF_BOARD.into_iter().zip(*columns).map(move |(place, c)| ((*kind, place), c)))
        .collect();
    decode_table(&codes)
});

impl From<PieceCount> for HcpError {
    fn from(PieceCount { kind, found, expected }: PieceCount) -> HcpError {
        HcpError::PieceCount { kind, found, expected }
    }
}

/// The `HuffmanCodedPos` of a standard shogi position, as cshogi's
/// `Board.to_hcp` writes it.
pub fn encode_position(pos: &Position) -> Result<[u8; HCP_BYTES], HcpError> {
    if pos.variant() != Variant::Shogi {
        return Err(HcpError::NotStandardShogi(pos.variant()));
    }
    Ok(bits::encode(pos, &HAND_ORDER, EMPTY_SQUARE, board_code, off_board_code)?)
}

/// The position that `bytes` encode, checked against the rules (the move
/// number is 1, as cshogi's `Board.set_hcp` sets it).
pub fn decode_position(bytes: &[u8; HCP_BYTES]) -> Result<Position, HcpError> {
    let mut r = BitReader::new(bytes);
    let opening = read_opening(&mut r).map_err(|(color, index)| HcpError::KingSquare { color, index })?;
    let mut board = opening.board;
    let mut counts = [0usize; KIND_SLOTS];
    let invalid = |r: &BitReader| HcpError::InvalidCode { bit: r.bit() };
    for (_, slot) in other_squares(opening.kings) {
        if let Some(piece) = r.next_code(&BOARD_DECODE).ok_or_else(|| invalid(&r))? {
            counts[piece.kind() as usize] += 1;
            board[slot] = Some(piece);
        }
    }
    let mut hands = [[0u8; KIND_SLOTS]; 2];
    while r.bit() < BITS {
        let (kind, place) = r.next_code(&OFF_BOARD_DECODE).ok_or_else(|| invalid(&r))?;
        counts[kind as usize] += 1;
        if let OffBoard::Hand(color) = place {
            let held = &mut hands[color.index()][kind as usize];
            *held = held.saturating_add(1);
        }
    }
    check_counts(&counts, &HAND_ORDER)?;
    let setup = Setup { variant: Variant::Shogi, board, hands, side: opening.side, move_number: 1 };
    Position::from_setup(setup).map_err(HcpError::IllegalPosition)
}

#[cfg(test)]
mod tests {
    use super::super::{square_index, square_of_index};
    use super::*;
    use crate::types::Square;

    #[test]
    fn codes_are_prefix_free_and_lengths_fill_256_bits() {
        let board: Vec<Code> = BOARD_CODES.iter().flat_map(|(_, c)| *c).filter(|c| c.len > 0).collect();
        let off: Vec<Code> = OFF_BOARD_CODES.iter().flat_map(|(_, c)| *c).collect();
        bits::assert_prefix_free(&[&board[..], &[EMPTY_SQUARE]].concat());
        bits::assert_prefix_free(&off);
        // A piece off the board costs one bit less than on it: the empty
        // square it leaves costs that bit.
        for ((kind, on), (_, off)) in BOARD_CODES.iter().zip(OFF_BOARD_CODES) {
            assert!(off.iter().all(|c| c.len + 1 == on[0].len), "{kind:?}");
        }
    }

    #[test]
    fn square_indices_are_file_major() {
        assert_eq!(square_index(Square::new(1, 1)), Some(0));
        assert_eq!(square_index(Square::new(1, 9)), Some(8));
        assert_eq!(square_index(Square::new(2, 1)), Some(9));
        assert_eq!(square_index(Square::new(9, 9)), Some(80));
        assert_eq!(square_index(Square::new(10, 1)), None);
        assert_eq!(square_of_index(81), None);
        assert!((0..81).all(|i| square_of_index(i).and_then(square_index) == Some(i)));
    }
}
