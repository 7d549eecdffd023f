//! `HuffmanCodedPos`: a standard shogi position in 32 bytes (Apery's format,
//! which cshogi and dlshogi use).
//!
//! Bits are written from bit 0 of byte 0 upwards (least significant bit
//! first). In order: the side to move (1 bit, 1 = gote), the squares of the
//! sente and gote kings (7 bits each, as a [`square_index`]), then every
//! other square in index order as a board code, then one code for each
//! piece in hand (sente's, then gote's, by kind pawn, lance, knight, silver,
//! gold, bishop, rook), then one code for each piece in neither (the piece
//! box: handicap and problem positions). Every piece kind's hand and box
//! code is one bit shorter than its board code, so the 40 pieces always
//! fill exactly 256 bits.

use crate::sfen::{Setup, SfenError};
use crate::types::{Color, Kind, Piece, Square, KIND_SLOTS};
use crate::{Position, Variant};
use std::sync::LazyLock;

/// Bytes of a `HuffmanCodedPos`.
pub const HCP_BYTES: usize = 32;
const BITS: usize = HCP_BYTES * 8;

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

/// Apery's square numbering, which `HuffmanCodedPos` and 16-bit moves use:
/// file-major from 1a, `(file - 1) * 9 + (rank - 1)`, so 1a = 0, 1i = 8,
/// 2a = 9, 9i = 80.
pub fn square_index(sq: Square) -> Option<u8> {
    (sq.file() <= 9 && sq.rank() <= 9).then(|| (sq.file() - 1) * 9 + (sq.rank() - 1))
}

/// The square of an Apery square index below 81.
pub fn square_of_index(index: u8) -> Option<Square> {
    (index < 81).then(|| Square::new(index / 9 + 1, index % 9 + 1))
}

/// A prefix code: bit `i` of `bits` is the `i`-th bit written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Code {
    bits: u8,
    len: u8,
}

const fn code(text: &str) -> Code {
    let b = text.as_bytes();
    let mut bits = 0u8;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'1' {
            bits |= 1 << i;
        }
        i += 1;
    }
    Code { bits, len: b.len() as u8 }
}

/// The hand kinds in the order the format writes them, with how many of
/// each standard shogi has.
const HAND_ORDER: [(Kind, usize); 7] = [
    (Kind::Pawn, 18),
    (Kind::Lance, 4),
    (Kind::Knight, 4),
    (Kind::Silver, 4),
    (Kind::Gold, 4),
    (Kind::Bishop, 2),
    (Kind::Rook, 2),
];

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

/// Where an off-board code puts its piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OffBoard {
    Hand(Color),
    Box,
}

/// A decoding table over the next 8 bits: what the code there means and
/// its length; `None` where no code matches.
type DecodeTable<T> = [Option<(T, u8)>; 256];

fn decode_table<T: Copy>(codes: &[(T, Code)]) -> DecodeTable<T> {
    let mut table = [None; 256];
    for (next, slot) in table.iter_mut().enumerate() {
        *slot = codes.iter().find(|(_, c)| c.len > 0 && next as u8 & mask(c.len) == c.bits).map(|&(t, c)| (t, c.len));
    }
    table
}

fn mask(len: u8) -> u8 {
    ((1u16 << len) - 1) as u8
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
    let places = [OffBoard::Hand(Color::Sente), OffBoard::Hand(Color::Gote), OffBoard::Box];
    let codes: Vec<_> = OFF_BOARD_CODES
        .iter()
        .flat_map(|(kind, columns)| places.into_iter().zip(*columns).map(move |(place, c)| ((*kind, place), c)))
        .collect();
    decode_table(&codes)
});

struct BitWriter {
    bytes: [u8; HCP_BYTES],
    bit: usize,
}

impl BitWriter {
    fn put(&mut self, bits: u8, len: u8) {
        for i in 0..len as usize {
            let b = self.bit + i;
            self.bytes[b / 8] |= ((bits >> i) & 1) << (b % 8);
        }
        self.bit += len as usize;
    }

    fn put_code(&mut self, c: Code) {
        self.put(c.bits, c.len);
    }
}

struct BitReader<'a> {
    bytes: &'a [u8; HCP_BYTES],
    bit: usize,
}

impl BitReader<'_> {
    /// The next 8 bits (zeros past the end).
    fn peek(&self) -> u8 {
        let byte = |i: usize| self.bytes.get(i).copied().unwrap_or(0) as u16;
        let i = self.bit / 8;
        ((byte(i) | byte(i + 1) << 8) >> (self.bit % 8)) as u8
    }

    fn take(&mut self, len: u8) -> u8 {
        let value = self.peek() & mask(len);
        self.bit += len as usize;
        value
    }

    fn decode<T: Copy>(&mut self, table: &DecodeTable<T>) -> Result<T, HcpError> {
        match table[self.peek() as usize] {
            Some((t, len)) if self.bit + len as usize <= BITS => {
                self.bit += len as usize;
                Ok(t)
            }
            _ => Err(HcpError::InvalidCode { bit: self.bit }),
        }
    }
}

/// The `HuffmanCodedPos` of a standard shogi position, as cshogi's
/// `Board.to_hcp` writes it.
pub fn encode_position(pos: &Position) -> Result<[u8; HCP_BYTES], HcpError> {
    if pos.variant() != Variant::Shogi {
        return Err(HcpError::NotStandardShogi(pos.variant()));
    }
    let mut w = BitWriter { bytes: [0; HCP_BYTES], bit: 0 };
    w.put(pos.side_to_move() as u8, 1);
    for color in Color::BOTH {
        let king = pos.royals(color)[0];
        w.put(square_index(king).expect("standard shogi squares have indices"), 7);
    }
    let mut used = [0usize; KIND_SLOTS];
    for index in 0..81 {
        match pos.piece_at(square_of_index(index).expect("indices below 81 are squares")) {
            None => w.put_code(EMPTY_SQUARE),
            Some(p) if p.kind() == Kind::King => {}
            Some(p) => {
                w.put_code(board_code(p));
                used[p.kind() as usize] += 1;
            }
        }
    }
    for (column, color) in Color::BOTH.into_iter().enumerate() {
        for (kind, codes) in OFF_BOARD_CODES {
            let n = pos.hand(color, kind) as usize;
            (0..n).for_each(|_| w.put_code(codes[column]));
            used[kind as usize] += n;
        }
    }
    let mut in_box = [0usize; KIND_SLOTS];
    for (kind, expected) in HAND_ORDER {
        let found = used[kind as usize];
        in_box[kind as usize] = expected.checked_sub(found).ok_or(HcpError::PieceCount { kind, found, expected })?;
    }
    for (kind, codes) in OFF_BOARD_CODES {
        (0..in_box[kind as usize]).for_each(|_| w.put_code(codes[2]));
    }
    debug_assert_eq!(w.bit, BITS, "the standard pieces fill 256 bits");
    Ok(w.bytes)
}

/// The position that `bytes` encode, checked against the rules (the move
/// number is 1, as cshogi's `Board.set_hcp` sets it).
pub fn decode_position(bytes: &[u8; HCP_BYTES]) -> Result<Position, HcpError> {
    let mut r = BitReader { bytes, bit: 0 };
    let side = if r.take(1) == 1 { Color::Gote } else { Color::Sente };
    let mut board = vec![None; 81];
    let mut kings = [0u8; 2];
    for color in Color::BOTH {
        let index = r.take(7);
        let square = square_of_index(index).filter(|_| color == Color::Sente || index != kings[0]);
        let square = square.ok_or(HcpError::KingSquare { color, index })?;
        kings[color.index()] = index;
        board[square.dense(9)] = Some(Piece::new(color, Kind::King, false));
    }
    let mut counts = [0usize; KIND_SLOTS];
    for index in (0..81).filter(|i| !kings.contains(i)) {
        if let Some(piece) = r.decode(&BOARD_DECODE)? {
            counts[piece.kind() as usize] += 1;
            board[square_of_index(index).expect("indices below 81 are squares").dense(9)] = Some(piece);
        }
    }
    let mut hands = [[0u8; KIND_SLOTS]; 2];
    while r.bit < BITS {
        let (kind, place) = r.decode(&OFF_BOARD_DECODE)?;
        counts[kind as usize] += 1;
        if let OffBoard::Hand(color) = place {
            let held = &mut hands[color.index()][kind as usize];
            *held = held.saturating_add(1);
        }
    }
    for (kind, expected) in HAND_ORDER {
        let found = counts[kind as usize];
        if found != expected {
            return Err(HcpError::PieceCount { kind, found, expected });
        }
    }
    let setup = Setup { variant: Variant::Shogi, board, hands, side, move_number: 1 };
    Position::from_setup(setup).map_err(HcpError::IllegalPosition)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_prefix_free_and_lengths_fill_256_bits() {
        let board: Vec<Code> = BOARD_CODES.iter().flat_map(|(_, c)| *c).filter(|c| c.len > 0).collect();
        let off: Vec<Code> = OFF_BOARD_CODES.iter().flat_map(|(_, c)| *c).collect();
        for set in [[&board[..], &[EMPTY_SQUARE]].concat(), off] {
            for (i, a) in set.iter().enumerate() {
                for b in &set[i + 1..] {
                    let n = a.len.min(b.len);
                    assert_ne!(a.bits & mask(n), b.bits & mask(n), "{a:?} is a prefix of {b:?} or the reverse");
                }
            }
        }
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
