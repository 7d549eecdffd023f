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

use super::super::hcpe::{square_index, square_of_index};
use crate::sfen::{Setup, SfenError};
use crate::types::{Color, Kind, Piece, KIND_SLOTS};
use crate::{Position, Variant};
use std::sync::LazyLock;

/// Bytes of a `PackedSfen`.
pub const PSFEN_BYTES: usize = 32;
const BITS: usize = PSFEN_BYTES * 8;

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

/// The kinds off the board in the order cshogi writes them, with how many of
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

/// A prefix code: bit `i` of `bits` is the `i`-th bit written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Code {
    bits: u8,
    len: u8,
}

fn code(text: &str) -> Code {
    let bits = text.bytes().enumerate().fold(0u8, |acc, (i, b)| acc | ((b == b'1') as u8) << i);
    Code { bits, len: text.len() as u8 }
}

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

/// Where a code off the board puts its piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OffBoard {
    Hand(Color),
    Box,
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

/// A decoding table over the next 8 bits: what the code there means and its
/// length; `None` where no code matches.
type DecodeTable<T> = [Option<(T, u8)>; 256];

fn decode_table<T: Copy>(codes: &[(T, Code)]) -> DecodeTable<T> {
    let mut table = [None; 256];
    for (next, slot) in table.iter_mut().enumerate() {
        *slot = codes.iter().find(|(_, c)| next as u8 & mask(c.len) == c.bits).map(|&(t, c)| (t, c.len));
    }
    table
}

fn mask(len: u8) -> u8 {
    ((1u16 << len) - 1) as u8
}

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
    let places = [OffBoard::Hand(Color::Sente), OffBoard::Hand(Color::Gote), OffBoard::Box];
    PREFIXES
        .iter()
        .flat_map(|&(kind, _)| places.into_iter().map(move |place| ((kind, place), off_board_code(kind, place))))
        .collect()
}

static BOARD_CODES: LazyLock<Vec<(Option<Piece>, Code)>> = LazyLock::new(board_codes);
static OFF_BOARD_CODES: LazyLock<Vec<((Kind, OffBoard), Code)>> = LazyLock::new(off_board_codes);
static BOARD_DECODE: LazyLock<DecodeTable<Option<Piece>>> = LazyLock::new(|| decode_table(&BOARD_CODES));
static OFF_BOARD_DECODE: LazyLock<DecodeTable<(Kind, OffBoard)>> = LazyLock::new(|| decode_table(&OFF_BOARD_CODES));

struct BitWriter {
    bytes: [u8; PSFEN_BYTES],
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
    bytes: &'a [u8; PSFEN_BYTES],
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

    /// The next code of `codes` (`table` decodes them).
    fn decode<T: Copy>(&mut self, table: &DecodeTable<T>, codes: &[(T, Code)]) -> Result<T, PsfenError> {
        let left = BITS.saturating_sub(self.bit);
        match table[self.peek() as usize] {
            Some((t, len)) if len as usize <= left => {
                self.bit += len as usize;
                Ok(t)
            }
            // The bits left begin some code that needs more of them.
            _ if codes.iter().any(|(_, c)| c.len as usize > left && starts(c, self.peek(), left)) => {
                Err(PsfenError::PastTheEnd { bit: self.bit })
            }
            _ => Err(PsfenError::InvalidCode { bit: self.bit }),
        }
    }
}

/// Whether the first `n` bits of `c` are the first `n` of `next`.
fn starts(c: &Code, next: u8, n: usize) -> bool {
    let m = mask(n.min(8) as u8);
    c.bits & m == next & m
}

/// The `PackedSfen` of a standard shogi position, as cshogi's
/// `Board.to_psfen` writes it.
pub fn encode_position(pos: &Position) -> Result<[u8; PSFEN_BYTES], PsfenError> {
    if pos.variant() != Variant::Shogi {
        return Err(PsfenError::NotStandardShogi(pos.variant()));
    }
    let mut w = BitWriter { bytes: [0; PSFEN_BYTES], bit: 0 };
    w.put(pos.side_to_move() as u8, 1);
    for color in Color::BOTH {
        let king = pos.royals(color)[0];
        w.put(square_index(king).expect("standard shogi squares have indices"), 7);
    }
    let mut used = [0usize; KIND_SLOTS];
    for index in 0..81 {
        match pos.piece_at(square_of_index(index).expect("indices below 81 are squares")) {
            None => w.put_code(code(EMPTY_SQUARE)),
            Some(p) if p.kind() == Kind::King => {}
            Some(p) => {
                w.put_code(board_code(p));
                used[p.kind() as usize] += 1;
            }
        }
    }
    for color in Color::BOTH {
        for (kind, _) in HAND_ORDER {
            let n = pos.hand(color, kind) as usize;
            (0..n).for_each(|_| w.put_code(off_board_code(kind, OffBoard::Hand(color))));
            used[kind as usize] += n;
        }
    }
    let mut in_box = [0usize; KIND_SLOTS];
    for (kind, expected) in HAND_ORDER {
        let found = used[kind as usize];
        in_box[kind as usize] = expected.checked_sub(found).ok_or(PsfenError::PieceCount { kind, found, expected })?;
    }
    for (kind, _) in HAND_ORDER {
        (0..in_box[kind as usize]).for_each(|_| w.put_code(off_board_code(kind, OffBoard::Box)));
    }
    debug_assert_eq!(w.bit, BITS, "the standard pieces fill 256 bits");
    Ok(w.bytes)
}

/// The position that `bytes` encode, checked against the rules, with move
/// number 1 (cshogi's `Board.set_psfen` sets 1 too).
pub fn decode_position(bytes: &[u8; PSFEN_BYTES]) -> Result<Position, PsfenError> {
    decode_position_at(bytes, 1)
}

/// [`decode_position`] with the given move number (at least 1).
pub(crate) fn decode_position_at(bytes: &[u8; PSFEN_BYTES], move_number: u32) -> Result<Position, PsfenError> {
    let mut r = BitReader { bytes, bit: 0 };
    let side = if r.take(1) == 1 { Color::Gote } else { Color::Sente };
    let mut board = vec![None; 81];
    let mut kings = [0u8; 2];
    for color in Color::BOTH {
        let index = r.take(7);
        let square = square_of_index(index).filter(|_| color == Color::Sente || index != kings[0]);
        let square = square.ok_or(PsfenError::KingSquare { color, index })?;
        kings[color.index()] = index;
        board[square.dense(9)] = Some(Piece::new(color, Kind::King, false));
    }
    let mut counts = [0usize; KIND_SLOTS];
    let too_many = |kind: Kind, found: usize| {
        let expected = HAND_ORDER.iter().find(|(k, _)| *k == kind).map_or(0, |(_, n)| *n);
        (found > expected).then_some(PsfenError::PieceCount { kind, found, expected })
    };
    for index in (0..81).filter(|i| !kings.contains(i)) {
        if let Some(piece) = r.decode(&BOARD_DECODE, &BOARD_CODES)? {
            counts[piece.kind() as usize] += 1;
            if let Some(e) = too_many(piece.kind(), counts[piece.kind() as usize]) {
                return Err(e);
            }
            board[square_of_index(index).expect("indices below 81 are squares").dense(9)] = Some(piece);
        }
    }
    let mut hands = [[0u8; KIND_SLOTS]; 2];
    while r.bit < BITS {
        let (kind, place) = r.decode(&OFF_BOARD_DECODE, &OFF_BOARD_CODES)?;
        counts[kind as usize] += 1;
        if let Some(e) = too_many(kind, counts[kind as usize]) {
            return Err(e);
        }
        if let OffBoard::Hand(color) = place {
            hands[color.index()][kind as usize] += 1;
        }
    }
    for (kind, expected) in HAND_ORDER {
        let found = counts[kind as usize];
        if found != expected {
            return Err(PsfenError::PieceCount { kind, found, expected });
        }
    }
    let setup = Setup { variant: Variant::Shogi, board, hands, side, move_number };
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
        for set in [board, off] {
            for (i, a) in set.iter().enumerate() {
                for b in &set[i + 1..] {
                    let n = a.len.min(b.len);
                    assert_ne!(a.bits & mask(n), b.bits & mask(n), "{a:?} is a prefix of {b:?} or the reverse");
                }
            }
        }
        for (kind, _) in PREFIXES {
            let on = board_code(Piece::new(Color::Sente, kind, false)).len;
            let places = [OffBoard::Hand(Color::Sente), OffBoard::Hand(Color::Gote), OffBoard::Box];
            assert!(places.into_iter().all(|p| off_board_code(kind, p).len + 1 == on), "{kind:?}");
        }
    }
}
