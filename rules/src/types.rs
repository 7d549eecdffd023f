//! Basic values: sides, squares, piece kinds and pieces.
//!
//! Squares index a padded mailbox shared by every variant: a 19x19 array
//! whose inner 15x15 corner holds the largest board (dai shogi). Two rings of
//! walls around every board let knight and lion jumps run off the edge
//! without bounds checks.

use std::fmt;

/// The side to move. Sente (black, `b` in SFEN) moves first in even games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    Sente = 0,
    Gote = 1,
}

impl Color {
    pub const BOTH: [Color; 2] = [Color::Sente, Color::Gote];

    #[inline]
    pub fn opponent(self) -> Color {
        match self {
            Color::Sente => Color::Gote,
            Color::Gote => Color::Sente,
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The word `koma outcome` prints for a winner of this colour.
    pub fn name(self) -> &'static str {
        match self {
            Color::Sente => "sente",
            Color::Gote => "gote",
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    fn not(self) -> Color {
        self.opponent()
    }
}

/// Width of the padded mailbox.
pub const STRIDE: usize = 19;
/// Wall rings around the board.
pub const PAD: usize = 2;
/// Cells in the padded mailbox.
pub const CELLS: usize = STRIDE * STRIDE;
/// Length of the board array: the mailbox rounded up to a power of two so
/// that a masked index needs no bounds check.
pub const BOARD_LEN: usize = 512;
/// The largest board side (dai shogi).
pub const MAX_SIZE: usize = 15;

/// A square of the padded mailbox. Column 0 is file 1 (sente's right), row 0
/// is rank `a` (gote's side), so a square's index does not depend on the
/// board size.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Square(pub(crate) u16);

impl Square {
    /// `file` and `rank` are 1-based (file 1 = sente's right, rank 1 = `a`).
    #[inline]
    pub fn new(file: u8, rank: u8) -> Square {
        debug_assert!((1..=MAX_SIZE as u8).contains(&file) && (1..=MAX_SIZE as u8).contains(&rank));
        Square::from_col_row(file as usize - 1, rank as usize - 1)
    }

    #[inline]
    pub(crate) fn from_col_row(col: usize, row: usize) -> Square {
        Square(((row + PAD) * STRIDE + col + PAD) as u16)
    }

    /// 1-based file number (1 = sente's right).
    #[inline]
    pub fn file(self) -> u8 {
        self.col() as u8 + 1
    }

    /// 1-based rank number (1 = rank `a`, gote's back rank).
    #[inline]
    pub fn rank(self) -> u8 {
        self.row() as u8 + 1
    }

    #[inline]
    pub(crate) fn col(self) -> usize {
        self.0 as usize % STRIDE - PAD
    }

    #[inline]
    pub(crate) fn row(self) -> usize {
        self.0 as usize / STRIDE - PAD
    }

    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Dense index `row * size + col` for a board of `size` files, used by
    /// feature planes and policy labels.
    #[inline]
    pub fn dense(self, size: usize) -> usize {
        self.row() * size + self.col()
    }

    /// Inverse of [`Square::dense`].
    #[inline]
    pub fn from_dense(index: usize, size: usize) -> Square {
        Square::from_col_row(index % size, index / size)
    }

    #[inline]
    pub(crate) fn offset(self, delta: isize) -> Square {
        Square((self.0 as isize + delta) as u16)
    }

    /// The same square seen from the other side of the board.
    #[inline]
    pub fn flip(self, size: usize) -> Square {
        Square::from_col_row(size - 1 - self.col(), size - 1 - self.row())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file(), rank_letter(self.rank()))
    }
}

/// USI writes ranks as letters `a`..; 15x15 boards go to `o`.
pub fn rank_letter(rank: u8) -> char {
    (b'a' + rank - 1) as char
}

/// The base kinds of all three games. A piece is a kind plus a promoted flag;
/// what a promoted piece moves like is the variant's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    King = 1,
    Rook,
    Bishop,
    Gold,
    Silver,
    Knight,
    Lance,
    Pawn,
    /// Drunk elephant (sho and dai); promotes to the royal crown prince.
    Elephant,
    Copper,
    Iron,
    Stone,
    GoBetween,
    BlindTiger,
    FerociousLeopard,
    CatSword,
    EvilWolf,
    AngryBoar,
    FierceOx,
    FlyingDragon,
    ReverseChariot,
    VerticalMover,
    SideMover,
    DragonHorse,
    DragonKing,
    Phoenix,
    Kirin,
    FreeKing,
    Lion,
}

/// Number of `Kind` values plus one (kind values start at 1).
pub const KIND_SLOTS: usize = 30;

impl Kind {
    pub const ALL: [Kind; 29] = [
        Kind::King,
        Kind::Rook,
        Kind::Bishop,
        Kind::Gold,
        Kind::Silver,
        Kind::Knight,
        Kind::Lance,
        Kind::Pawn,
        Kind::Elephant,
        Kind::Copper,
        Kind::Iron,
        Kind::Stone,
        Kind::GoBetween,
        Kind::BlindTiger,
        Kind::FerociousLeopard,
        Kind::CatSword,
        Kind::EvilWolf,
        Kind::AngryBoar,
        Kind::FierceOx,
        Kind::FlyingDragon,
        Kind::ReverseChariot,
        Kind::VerticalMover,
        Kind::SideMover,
        Kind::DragonHorse,
        Kind::DragonKing,
        Kind::Phoenix,
        Kind::Kirin,
        Kind::FreeKing,
        Kind::Lion,
    ];

    /// The kinds a standard shogi player may hold in hand, in SFEN order.
    pub const HAND: [Kind; 7] =
        [Kind::Rook, Kind::Bishop, Kind::Gold, Kind::Silver, Kind::Knight, Kind::Lance, Kind::Pawn];

    #[inline]
    pub fn from_u8(v: u8) -> Option<Kind> {
        Kind::ALL.get((v as usize).wrapping_sub(1)).copied()
    }

    /// The kind's code, the same in every variant: sente's in SFEN boards
    /// (gote's in lower case), one letter bare (`P`) and longer codes in
    /// brackets (`[GB]`). The one-letter codes are also the piece letters of
    /// USI drops and Western move text. The dai codes are listed in the README.
    pub const fn code(self) -> &'static str {
        match self {
            Kind::King => "K",
            Kind::Rook => "R",
            Kind::Bishop => "B",
            Kind::Gold => "G",
            Kind::Silver => "S",
            Kind::Knight => "N",
            Kind::Lance => "L",
            Kind::Pawn => "P",
            Kind::Elephant => "E",
            Kind::Copper => "C",
            Kind::Iron => "I",
            Kind::Stone => "ST",
            Kind::GoBetween => "GB",
            Kind::BlindTiger => "T",
            Kind::FerociousLeopard => "FL",
            Kind::CatSword => "CS",
            Kind::EvilWolf => "EW",
            Kind::AngryBoar => "AB",
            Kind::FierceOx => "O",
            Kind::FlyingDragon => "FD",
            Kind::ReverseChariot => "RC",
            Kind::VerticalMover => "VM",
            Kind::SideMover => "SM",
            Kind::DragonHorse => "H",
            Kind::DragonKing => "D",
            Kind::Phoenix => "F",
            Kind::Kirin => "KR",
            Kind::FreeKing => "FK",
            Kind::Lion => "LN",
        }
    }

    /// The kind whose [`Kind::code`] is `code` (upper case).
    pub fn from_code(code: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The piece letter of a kind with a one-letter code (`K`, `P`, `E`, ...).
    pub fn letter(self) -> Option<char> {
        match self.code().as_bytes() {
            &[c] => Some(c as char),
            _ => None,
        }
    }

    /// The kind of an upper-case piece letter.
    pub fn from_letter(letter: char) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.letter() == Some(letter))
    }

    /// Can a piece of this kind be held in hand (one of [`Kind::HAND`])?
    pub fn is_hand(self) -> bool {
        Kind::HAND.contains(&self)
    }

    /// The letter of a kind that can be held in hand: SFEN hands and USI and
    /// XBoard drops (`R B G S N L P`).
    pub fn hand_letter(self) -> Option<char> {
        self.letter().filter(|_| self.is_hand())
    }

    /// The kind of an upper-case hand letter (`R B G S N L P`).
    pub fn from_hand_letter(letter: char) -> Option<Kind> {
        Kind::from_letter(letter).filter(|k| k.is_hand())
    }
}

/// A piece on the board: kind, promoted flag and colour, packed so that the
/// mailbox holds one byte per square. Code 0 is an empty square and
/// [`WALL`] is off the board.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Piece(pub(crate) u8);

pub(crate) const EMPTY: u8 = 0;
pub(crate) const WALL: u8 = 0xFF;
pub(crate) const GOTE_BIT: u8 = 0x40;
/// Piece codes are below this value.
pub(crate) const CODES: usize = 128;

impl Piece {
    #[inline]
    pub fn new(color: Color, kind: Kind, promoted: bool) -> Piece {
        Piece(((color as u8) << 6) | ((kind as u8) << 1) | promoted as u8)
    }

    #[inline]
    pub fn color(self) -> Color {
        if self.0 & GOTE_BIT != 0 {
            Color::Gote
        } else {
            Color::Sente
        }
    }

    #[inline]
    pub fn kind(self) -> Kind {
        Kind::from_u8((self.0 & 0x3F) >> 1).expect("piece codes hold valid kinds")
    }

    #[inline]
    pub fn is_promoted(self) -> bool {
        self.0 & 1 != 0
    }

    #[inline]
    pub fn code(self) -> u8 {
        self.0
    }

    #[inline]
    pub(crate) fn from_code(code: u8) -> Option<Piece> {
        if code == EMPTY || code == WALL {
            None
        } else {
            Some(Piece(code))
        }
    }

    #[inline]
    pub fn promoted(self) -> Piece {
        Piece(self.0 | 1)
    }

    #[inline]
    pub fn unpromoted(self) -> Piece {
        Piece(self.0 & !1)
    }

    #[inline]
    pub fn with_color(self, color: Color) -> Piece {
        Piece((self.0 & !GOTE_BIT) | ((color as u8) << 6))
    }
}

impl fmt::Debug for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}{}{:?}", self.color(), if self.is_promoted() { "+" } else { "" }, self.kind())
    }
}

/// The eight unit directions on the mailbox, as (dx, dy) from sente's view.
pub(crate) const DIRS: [(i8, i8); 8] = [(0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (1, 1), (-1, 1)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_coordinates_round_trip() {
        for file in 1..=15 {
            for rank in 1..=15 {
                let sq = Square::new(file, rank);
                assert_eq!((sq.file(), sq.rank()), (file, rank));
                assert_eq!(Square::from_dense(sq.dense(15), 15), sq);
            }
        }
        assert_eq!(format!("{:?}", Square::new(7, 7)), "7g");
        assert_eq!(Square::new(1, 1).flip(9), Square::new(9, 9));
    }

    #[test]
    fn kind_codes_and_letters_round_trip() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_code(kind.code()), Some(kind));
            if let Some(c) = kind.letter() {
                assert_eq!(Kind::from_letter(c), Some(kind));
            }
        }
        let hand: String = Kind::HAND.iter().map(|k| k.hand_letter().unwrap()).collect();
        assert_eq!(hand, "RBGSNLP");
        assert_eq!(Kind::King.hand_letter(), None);
        assert_eq!(Kind::from_hand_letter('K'), None);
        assert_eq!(Kind::from_hand_letter('E'), None);
        assert_eq!(Kind::from_hand_letter('p'), None);
        assert_eq!(Kind::from_letter('E'), Some(Kind::Elephant));
        assert_eq!(Kind::Stone.letter(), None);
    }

    #[test]
    fn piece_codes_round_trip() {
        for color in Color::BOTH {
            for kind in Kind::ALL {
                for promoted in [false, true] {
                    let p = Piece::new(color, kind, promoted);
                    assert!(p.code() != EMPTY && p.code() != WALL && (p.code() as usize) < CODES);
                    assert_eq!((p.color(), p.kind(), p.is_promoted()), (color, kind, promoted));
                }
            }
        }
    }
}
