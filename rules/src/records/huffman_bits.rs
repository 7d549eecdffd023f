//! What the two 32-byte Huffman codings of a standard shogi position share:
//! Apery's `HuffmanCodedPos` ([`super::hcpe`]) and YaneuraOu's `PackedSfen`
//! ([`super::psv`]). Both write, from bit 0 of byte 0 upwards (least
//! significant bit first), the side to move (1 bit, 1 = gote), the sente then
//! the gote king's square (7 bits each, a [`square_index`]), every other
//! square in index order as a board code, then one code for each piece in
//! hand (sente's, then gote's) and one for each piece in neither (the piece
//! box). The codes themselves, and the order of the kinds off the board, are
//! each format's own.

use crate::types::{Color, Kind, Piece, Square, KIND_SLOTS};
use crate::Position;

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

/// Bytes of a coded position.
pub(crate) const BYTES: usize = 32;
/// Bits of a coded position.
pub(crate) const BITS: usize = BYTES * 8;

/// A prefix code: bit `i` of `bits` is the `i`-th bit written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Code {
    pub bits: u8,
    pub len: u8,
}

/// The code whose bits, in the order written, are the `0`s and `1`s of `text`.
pub(crate) const fn code(text: &str) -> Code {
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

/// The low `len` bits (`len` at most 8).
pub(crate) fn mask(len: u8) -> u8 {
    ((1u16 << len) - 1) as u8
}

/// Where a code off the board puts its piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OffBoard {
    Hand(Color),
    Box,
}

/// The places off the board: sente's hand, gote's hand, the piece box.
pub(crate) const OFF_BOARD: [OffBoard; 3] = [OffBoard::Hand(Color::Sente), OffBoard::Hand(Color::Gote), OffBoard::Box];

/// A decoding table over the next 8 bits: what the code there means and its
/// length; `None` where no code matches.
pub(crate) type DecodeTable<T> = [Option<(T, u8)>; 256];

/// The table of `codes` (codes of length 0 stand for none and are left out).
pub(crate) fn decode_table<T: Copy>(codes: &[(T, Code)]) -> DecodeTable<T> {
    let mut table = [None; 256];
    for (next, slot) in table.iter_mut().enumerate() {
        *slot = codes.iter().find(|(_, c)| c.len > 0 && next as u8 & mask(c.len) == c.bits).map(|&(t, c)| (t, c.len));
    }
    table
}

/// Writes bits into a zeroed coded position.
pub(crate) struct BitWriter {
    bytes: [u8; BYTES],
    bit: usize,
}

impl BitWriter {
    pub(crate) fn new() -> BitWriter {
        BitWriter { bytes: [0; BYTES], bit: 0 }
    }

    /// The low `len` bits of `bits`, bit 0 first.
    pub(crate) fn put(&mut self, bits: u8, len: u8) {
        for i in 0..len as usize {
            let b = self.bit + i;
            self.bytes[b / 8] |= ((bits >> i) & 1) << (b % 8);
        }
        self.bit += len as usize;
    }

    pub(crate) fn put_code(&mut self, c: Code) {
        self.put(c.bits, c.len);
    }
}

/// Reads the bits of a coded position.
pub(crate) struct BitReader<'a> {
    bytes: &'a [u8; BYTES],
    bit: usize,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(bytes: &'a [u8; BYTES]) -> BitReader<'a> {
        BitReader { bytes, bit: 0 }
    }

    /// The bits read so far.
    pub(crate) fn bit(&self) -> usize {
        self.bit
    }

    /// The next 8 bits (zeros past the end).
    fn peek(&self) -> u8 {
        let byte = |i: usize| self.bytes.get(i).copied().unwrap_or(0) as u16;
        let i = self.bit / 8;
        ((byte(i) | byte(i + 1) << 8) >> (self.bit % 8)) as u8
    }

    /// The next `len` bits (at most 8), bit 0 first.
    pub(crate) fn take(&mut self, len: u8) -> u8 {
        let value = self.peek() & mask(len);
        self.bit += len as usize;
        value
    }

    /// What the next code means, by `table`, and past it; `None`, reading
    /// nothing, where no code starts here or the one that does runs past the
    /// end.
    pub(crate) fn next_code<T: Copy>(&mut self, table: &DecodeTable<T>) -> Option<T> {
        match table[self.peek() as usize] {
            Some((t, len)) if self.bit + len as usize <= BITS => {
                self.bit += len as usize;
                Some(t)
            }
            _ => None,
        }
    }

    /// Whether the bits left begin one of `codes` that needs more of them.
    pub(crate) fn cut_short<T>(&self, codes: &[(T, Code)]) -> bool {
        let left = BITS.saturating_sub(self.bit);
        let m = mask(left.min(8) as u8);
        codes.iter().any(|(_, c)| c.len as usize > left && c.bits & m == self.peek() & m)
    }
}

/// How many pieces of a kind standard shogi has, kings aside (0 for kings
/// and kinds not in standard shogi).
pub(crate) fn standard_count(kind: Kind) -> usize {
    match kind {
        Kind::Pawn => 18,
        Kind::Lance | Kind::Knight | Kind::Silver | Kind::Gold => 4,
        Kind::Bishop | Kind::Rook => 2,
        _ => 0,
    }
}

/// Too many or too few pieces of a kind: `found` on the board, in hand and
/// in the box, where standard shogi has `expected`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PieceCount {
    pub kind: Kind,
    pub found: usize,
    pub expected: usize,
}

/// The coded form of a standard shogi position: `empty` for an empty square,
/// `board_code` for a piece on the board (kings aside), `off_board_code` for
/// each piece in hand and in the box, kinds in the order of `order`.
pub(crate) fn encode(
    pos: &Position,
    order: &[Kind],
    empty: Code,
    board_code: impl Fn(Piece) -> Code,
    off_board_code: impl Fn(Kind, OffBoard) -> Code,
) -> Result<[u8; BYTES], PieceCount> {
    let mut w = BitWriter::new();
    w.put(pos.side_to_move() as u8, 1);
    for color in Color::BOTH {
        let king = pos.royals(color)[0];
        w.put(square_index(king).expect("standard shogi squares have indices"), 7);
    }
    let mut used = [0usize; KIND_SLOTS];
    for index in 0..81 {
        match pos.piece_at(square_of_index(index).expect("indices below 81 are squares")) {
            None => w.put_code(empty),
            Some(p) if p.kind() == Kind::King => {}
            Some(p) => {
                w.put_code(board_code(p));
                used[p.kind() as usize] += 1;
            }
        }
    }
    for color in Color::BOTH {
        for &kind in order {
            let n = pos.hand(color, kind) as usize;
            (0..n).for_each(|_| w.put_code(off_board_code(kind, OffBoard::Hand(color))));
            used[kind as usize] += n;
        }
    }
    let mut in_box = [0usize; KIND_SLOTS];
    for &kind in order {
        let (found, expected) = (used[kind as usize], standard_count(kind));
        in_box[kind as usize] = expected.checked_sub(found).ok_or(PieceCount { kind, found, expected })?;
    }
    for &kind in order {
        (0..in_box[kind as usize]).for_each(|_| w.put_code(off_board_code(kind, OffBoard::Box)));
    }
    debug_assert_eq!(w.bit, BITS, "the standard pieces fill 256 bits");
    Ok(w.bytes)
}

/// The start of a coded position read: the side to move, and the board
/// (dense, 81 squares) with the two kings on it, whose square indices come
/// with it.
pub(crate) struct Opening {
    pub side: Color,
    pub board: Vec<Option<Piece>>,
    pub kings: [u8; 2],
}

/// Reads the side to move and the kings. A king off the board, or on the
/// other's square, is `Err` with its colour and index.
pub(crate) fn read_opening(r: &mut BitReader) -> Result<Opening, (Color, u8)> {
    let side = if r.take(1) == 1 { Color::Gote } else { Color::Sente };
    let mut board = vec![None; 81];
    let mut kings = [0u8; 2];
    for color in Color::BOTH {
        let index = r.take(7);
        let square = square_of_index(index).filter(|_| color == Color::Sente || index != kings[0]);
        let square = square.ok_or((color, index))?;
        kings[color.index()] = index;
        board[square.dense(9)] = Some(Piece::new(color, Kind::King, false));
    }
    Ok(Opening { side, board, kings })
}

/// The square indices after the kings' (at `kings`), in the order coded,
/// with where each sits in a dense board.
pub(crate) fn other_squares(kings: [u8; 2]) -> impl Iterator<Item = (u8, usize)> {
    (0..81u8)
        .filter(move |i| !kings.contains(i))
        .map(|i| (i, square_of_index(i).expect("indices below 81 are squares").dense(9)))
}

/// The first kind of `order` whose count in `counts` is not standard shogi's.
pub(crate) fn check_counts(counts: &[usize; KIND_SLOTS], order: &[Kind]) -> Result<(), PieceCount> {
    for &kind in order {
        let (found, expected) = (counts[kind as usize], standard_count(kind));
        if found != expected {
            return Err(PieceCount { kind, found, expected });
        }
    }
    Ok(())
}

/// Panics unless no code of `set` is a prefix of another.
#[cfg(test)]
pub(crate) fn assert_prefix_free(set: &[Code]) {
    for (i, a) in set.iter().enumerate() {
        for b in &set[i + 1..] {
            let n = a.len.min(b.len);
            assert_ne!(a.bits & mask(n), b.bits & mask(n), "{a:?} is a prefix of {b:?} or the reverse");
        }
    }
}
