//! Sets of squares as bits of dense indices (`row * size + col`) and the
//! per-variant geometry the move generator reads from them: rays, step
//! targets, zones. The generator is written once over [`Bits`]; 9x9 boards
//! use `u128`, dai shogi's 15x15 board uses [`U256`].

use crate::types::{Color, DIRS};
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A board's bit-set geometry, in the width its size needs: `u128` for boards of up to
/// 128 squares, [`U256`] for larger ones (dai).
pub(crate) struct Geometries {
    pub narrow: Option<Geometry<u128>>,
    pub wide: Option<Geometry<U256>>,
}

/// A set of dense squares.
pub(crate) trait Bits:
    Copy
    + PartialEq
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
{
    const ZERO: Self;
    fn bit(i: usize) -> Self;
    fn has(self, i: usize) -> bool;
    fn is_empty(self) -> bool;
    fn count(self) -> u32;
    /// Lowest member; the set must not be empty.
    fn lsb(self) -> usize;
    /// Highest member; the set must not be empty.
    fn msb(self) -> usize;
    /// Removes and returns the lowest member; the set must not be empty.
    fn pop_lsb(&mut self) -> usize;
    /// Calls `f` with each member, lowest first.
    fn for_each(self, f: impl FnMut(usize));
    /// 64-bit words, for loops that visit members word by word.
    const WORDS: usize;
    fn word(self, i: usize) -> u64;
    /// Reads the occupancy the position stores for every width.
    fn load(wide: U256) -> Self;
    /// The variant's geometry at this width.
    fn geometry(g: &Geometries) -> &Geometry<Self>;
}

#[inline(always)]
fn for_each_in_word(mut word: u64, base: usize, f: &mut impl FnMut(usize)) {
    while word != 0 {
        f(base + word.trailing_zeros() as usize);
        word &= word - 1;
    }
}

/// 256 bits, enough for 15x15; also the position's storage for every board.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct U256 {
    pub lo: u128,
    pub hi: u128,
}

impl Bits for u128 {
    const ZERO: u128 = 0;
    const WORDS: usize = 2;
    #[inline(always)]
    fn word(self, i: usize) -> u64 {
        (self >> (64 * (i & 1))) as u64
    }
    #[inline(always)]
    fn bit(i: usize) -> u128 {
        1u128 << i
    }
    #[inline(always)]
    fn has(self, i: usize) -> bool {
        // One 64-bit word and shift: a u128 shift by a variable costs more.
        let word = if i & 64 != 0 { (self >> 64) as u64 } else { self as u64 };
        (word >> (i & 63)) & 1 != 0
    }
    #[inline(always)]
    fn is_empty(self) -> bool {
        self == 0
    }
    #[inline(always)]
    fn count(self) -> u32 {
        self.count_ones()
    }
    #[inline(always)]
    fn lsb(self) -> usize {
        self.trailing_zeros() as usize
    }
    #[inline(always)]
    fn msb(self) -> usize {
        127 - self.leading_zeros() as usize
    }
    #[inline(always)]
    fn pop_lsb(&mut self) -> usize {
        let i = self.trailing_zeros() as usize;
        *self &= *self - 1;
        i
    }
    #[inline(always)]
    fn for_each(self, mut f: impl FnMut(usize)) {
        // Word by word: 64-bit bit scans are cheaper than 128-bit ones.
        for_each_in_word(self as u64, 0, &mut f);
        for_each_in_word((self >> 64) as u64, 64, &mut f);
    }
    #[inline(always)]
    fn load(wide: U256) -> u128 {
        wide.lo
    }
    #[inline(always)]
    fn geometry(g: &Geometries) -> &Geometry<u128> {
        g.narrow.as_ref().expect("boards up to 11x11 have u128 tables")
    }
}

impl Bits for U256 {
    const ZERO: U256 = U256 { lo: 0, hi: 0 };
    const WORDS: usize = 4;
    #[inline(always)]
    fn word(self, i: usize) -> u64 {
        let half = if i & 2 == 0 { self.lo } else { self.hi };
        (half >> (64 * (i & 1))) as u64
    }
    #[inline(always)]
    fn bit(i: usize) -> U256 {
        if i < 128 {
            U256 { lo: 1 << i, hi: 0 }
        } else {
            U256 { lo: 0, hi: 1 << (i - 128) }
        }
    }
    #[inline(always)]
    fn has(self, i: usize) -> bool {
        if i < 128 {
            self.lo.has(i)
        } else {
            self.hi.has(i - 128)
        }
    }
    #[inline(always)]
    fn is_empty(self) -> bool {
        (self.lo | self.hi) == 0
    }
    #[inline(always)]
    fn count(self) -> u32 {
        self.lo.count_ones() + self.hi.count_ones()
    }
    #[inline(always)]
    fn lsb(self) -> usize {
        if self.lo != 0 {
            self.lo.lsb()
        } else {
            128 + self.hi.lsb()
        }
    }
    #[inline(always)]
    fn msb(self) -> usize {
        if self.hi != 0 {
            128 + self.hi.msb()
        } else {
            self.lo.msb()
        }
    }
    #[inline(always)]
    fn pop_lsb(&mut self) -> usize {
        if self.lo != 0 {
            self.lo.pop_lsb()
        } else {
            128 + self.hi.pop_lsb()
        }
    }
    #[inline(always)]
    fn for_each(self, mut f: impl FnMut(usize)) {
        for (i, word) in
            [self.lo as u64, (self.lo >> 64) as u64, self.hi as u64, (self.hi >> 64) as u64].into_iter().enumerate()
        {
            for_each_in_word(word, 64 * i, &mut f);
        }
    }
    #[inline(always)]
    fn load(wide: U256) -> U256 {
        wide
    }
    #[inline(always)]
    fn geometry(g: &Geometries) -> &Geometry<U256> {
        g.wide.as_ref().expect("boards over 11x11 have 256-bit tables")
    }
}

macro_rules! u256_op {
    ($trait:ident, $f:ident, $assign:ident, $fa:ident, $op:tt) => {
        impl $trait for U256 {
            type Output = U256;
            #[inline(always)]
            fn $f(self, o: U256) -> U256 {
                U256 { lo: self.lo $op o.lo, hi: self.hi $op o.hi }
            }
        }
        impl $assign for U256 {
            #[inline(always)]
            fn $fa(&mut self, o: U256) {
                *self = *self $op o;
            }
        }
    };
}
u256_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
u256_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
u256_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for U256 {
    type Output = U256;
    #[inline(always)]
    fn not(self) -> U256 {
        U256 { lo: !self.lo, hi: !self.hi }
    }
}

/// Does direction `d` go to higher dense indices? Then the nearest piece on
/// a ray is its lowest member.
pub(crate) const ASCENDING: [bool; 8] = {
    let mut up = [false; 8];
    let mut d = 0;
    while d < 8 {
        // dy * size + dx > 0 for any size >= 2.
        up[d] = DIRS[d].1 > 0 || (DIRS[d].1 == 0 && DIRS[d].0 > 0);
        d += 1;
    }
    up
};

/// What one side's piece of one code moves to without sliding: the union of
/// its step and jump legs, as (dx, dy) already turned for its colour.
pub(crate) type StepPattern = Vec<(i8, i8)>;

/// A table with one entry per dense square. Indices are masked to the
/// table's 256 entries, so reading needs no bounds check.
pub(crate) struct PerSquare<T>(Box<[T; 256]>);

impl<T: Copy> PerSquare<T> {
    /// `f(sq)` for the `cells` squares of the board, `fill` beyond.
    pub fn new(cells: usize, fill: T, f: impl Fn(usize) -> T) -> PerSquare<T> {
        let entries: Vec<T> = (0..256).map(|sq| if sq < cells { f(sq) } else { fill }).collect();
        PerSquare(entries.into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!("256 entries")))
    }
}

impl<T> std::ops::Index<usize> for PerSquare<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, sq: usize) -> &T {
        &self.0[sq & 255]
    }
}

/// What the geometry needs to know of the variant's rules.
pub(crate) struct Zones<'a> {
    /// Is this row in this colour's promotion zone?
    pub in_zone: &'a dyn Fn(Color, usize) -> bool,
    /// How many rows lie ahead of this row for this colour?
    pub rows_ahead: &'a dyn Fn(Color, usize) -> usize,
    /// Inside the zone only captures promote (dai's EnterOrCapture rule);
    /// otherwise any move starting or ending in the zone may.
    pub captures_promote_inside: bool,
}

/// The geometry of one board size and the variant's zones, as bit sets.
pub(crate) struct Geometry<B> {
    /// Every square of the board.
    pub board: B,
    /// `rays[sq][d]`: the squares from `sq` (excluded) to the edge in
    /// direction `d`.
    pub rays: PerSquare<[B; 8]>,
    /// The union of the eight rays of a square.
    pub lines: PerSquare<B>,
    /// The squares at most two files and two ranks away (every step and
    /// jump of the three games lands there).
    pub near: PerSquare<B>,
    /// Dense index step of each direction.
    pub delta: [isize; 8],
    /// `steps[slot * 256 + sq]`: targets of step pattern `slot` from `sq`;
    /// slot 0 is the empty pattern. One flat table: no pointer per slot.
    steps: Vec<B>,
    /// `promote_any[c][from]`: targets where any move from `from` by colour
    /// `c` may promote; `promote_capture[c][from]`: where a capture may.
    pub promote_any: [PerSquare<B>; 2],
    pub promote_capture: [PerSquare<B>; 2],
    /// `dead[c][n]`: the last `n` ranks ahead of colour `c`, where a piece
    /// with `n` dead ranks could never move again.
    pub dead: [[B; 4]; 2],
    /// Squares of each column.
    files: Vec<B>,
    /// `file_sets[cols]`: the squares of the columns whose bits are set in
    /// `cols`, for boards of up to 9 files (a 512-entry table).
    file_sets: Vec<B>,
}

impl<B: Bits> Geometry<B> {
    pub fn build(size: usize, patterns: &[StepPattern], zones: &Zones) -> Geometry<B> {
        let cells = size * size;
        let on_board = |col: isize, row: isize| (0..size as isize).contains(&col) && (0..size as isize).contains(&row);
        let walk = |sq: usize, (dx, dy): (i8, i8), limit: usize| {
            let (mut col, mut row) = ((sq % size) as isize, (sq / size) as isize);
            let mut set = B::ZERO;
            for _ in 0..limit {
                col += dx as isize;
                row += dy as isize;
                if !on_board(col, row) {
                    break;
                }
                set |= B::bit(row as usize * size + col as usize);
            }
            set
        };
        let set_of = |keep: &dyn Fn(usize) -> bool| {
            let mut set = B::ZERO;
            for sq in (0..cells).filter(|&sq| keep(sq)) {
                set |= B::bit(sq);
            }
            set
        };
        let rays = PerSquare::new(cells, [B::ZERO; 8], |sq| std::array::from_fn(|d| walk(sq, DIRS[d], size)));
        let lines = PerSquare::new(cells, B::ZERO, |sq| rays[sq].iter().fold(B::ZERO, |a, &r| a | r));
        let near = PerSquare::new(cells, B::ZERO, |sq| {
            let (col, row) = (sq % size, sq / size);
            set_of(&|t| t != sq && (t % size).abs_diff(col) <= 2 && (t / size).abs_diff(row) <= 2)
        });
        let mut steps = vec![B::ZERO; patterns.len() * 256];
        for (slot, pattern) in patterns.iter().enumerate() {
            assert!(pattern.iter().all(|&(dx, dy)| dx.abs() <= 2 && dy.abs() <= 2), "steps reach two squares at most");
            for sq in 0..cells {
                steps[slot * 256 + sq] = pattern.iter().fold(B::ZERO, |a, &step| a | walk(sq, step, 1));
            }
        }
        let board = set_of(&|_| true);
        let zone = Color::BOTH.map(|c| set_of(&|sq| (zones.in_zone)(c, sq / size)));
        let inside = zones.captures_promote_inside;
        let promote_any = std::array::from_fn(|c| {
            PerSquare::new(cells, B::ZERO, |from| match (zone[c].has(from), inside) {
                (true, true) => B::ZERO,
                (true, false) => board,
                (false, _) => zone[c],
            })
        });
        let promote_capture = std::array::from_fn(|c| {
            PerSquare::new(cells, B::ZERO, |from| if inside && zone[c].has(from) { board } else { B::ZERO })
        });
        let dead = Color::BOTH.map(|c| std::array::from_fn(|n| set_of(&|sq| (zones.rows_ahead)(c, sq / size) < n)));
        let files: Vec<B> = (0..size).map(|col| set_of(&|sq| sq % size == col)).collect();
        let file_sets = if size <= 9 {
            (0..1usize << size).map(|cols| set_of(&|sq| cols & (1 << (sq % size)) != 0)).collect()
        } else {
            Vec::new()
        };
        Geometry {
            board,
            rays,
            lines,
            near,
            delta: DIRS.map(|(dx, dy)| dy as isize * size as isize + dx as isize),
            steps,
            promote_any,
            promote_capture,
            dead,
            files,
            file_sets,
        }
    }

    /// The squares of the columns whose bits are set in `cols`.
    #[inline(always)]
    pub fn files(&self, cols: u16) -> B {
        match self.file_sets.get(cols as usize) {
            Some(&set) => set,
            None => (0..self.files.len()).filter(|c| cols & (1 << c) != 0).fold(B::ZERO, |a, c| a | self.files[c]),
        }
    }

    #[inline(always)]
    pub fn steps(&self, slot: usize, sq: usize) -> B {
        self.steps[(slot << 8) | (sq & 255)]
    }

    /// The nearest member of `set` (a subset of a ray in direction `d`).
    #[inline(always)]
    pub fn nearest(set: B, d: usize) -> usize {
        if ASCENDING[d] {
            set.lsb()
        } else {
            set.msb()
        }
    }

    /// Squares a slider on `sq` reaches in direction `d` over `occupied`,
    /// the first piece in its way included.
    #[inline(always)]
    pub fn slide(&self, sq: usize, d: usize, occupied: B) -> B {
        let ray = self.rays[sq][d];
        let blockers = ray & occupied;
        if blockers.is_empty() {
            ray
        } else {
            ray ^ self.rays[Self::nearest(blockers, d)][d]
        }
    }

    /// Like [`Geometry::slide`] for a range-2 leg.
    #[inline(always)]
    pub fn slide_near(&self, sq: usize, d: usize, occupied: B) -> B {
        // The first two squares of a ray are the ones in the 5x5 box.
        let ray = self.rays[sq][d] & self.near[sq];
        let blockers = ray & occupied;
        if blockers.is_empty() {
            ray
        } else {
            ray & !self.rays[Self::nearest(blockers, d)][d]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry<B: Bits>(size: usize) -> Geometry<B> {
        let king = vec![(0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (1, 1), (-1, 1)];
        let zones = Zones {
            in_zone: &|c, row| if c == Color::Sente { row < 3 } else { row >= size - 3 },
            rows_ahead: &|c, row| if c == Color::Sente { row } else { size - 1 - row },
            captures_promote_inside: false,
        };
        Geometry::build(size, &[vec![], king], &zones)
    }

    fn members<B: Bits>(mut set: B) -> Vec<usize> {
        let mut out = vec![];
        while !set.is_empty() {
            out.push(set.pop_lsb());
        }
        out
    }

    #[test]
    fn u256_bits_cross_the_word_boundary() {
        let set = U256::bit(3) | U256::bit(127) | U256::bit(128) | U256::bit(224);
        assert_eq!(set.count(), 4);
        assert_eq!((set.lsb(), set.msb()), (3, 224));
        assert!(set.has(128) && !set.has(129));
        assert_eq!(members(set), vec![3, 127, 128, 224]);
        assert_eq!(members(!U256::ZERO & U256::bit(200)), vec![200]);
    }

    #[test]
    fn slides_stop_at_the_first_piece_and_the_edge() {
        // 9x9, square 40 is the centre (col 4, row 4); direction 0 is up.
        let g = geometry::<u128>(9);
        assert_eq!(members(g.rays[40][0]), vec![4, 13, 22, 31]);
        assert_eq!(members(g.slide(40, 0, u128::bit(22))), vec![22, 31]);
        // Direction 5 is down (ascending indices).
        assert_eq!(members(g.slide(40, 5, u128::bit(58) | u128::bit(67))), vec![49, 58]);
        assert_eq!(members(g.slide_near(40, 5, u128::ZERO)), vec![49, 58]);
        assert_eq!(members(g.slide_near(40, 5, u128::bit(49))), vec![49]);
        // Columns 0 and 8 from the 512-entry table.
        assert_eq!(members(g.files(0b1_0000_0001) & g.rays[0][5]), vec![9, 18, 27, 36, 45, 54, 63, 72]);
        assert!((g.files(0b1_0000_0001) & g.rays[4][5]).is_empty());
        assert_eq!(g.files(0b1_0000_0001).count(), 18);
        // Corner king steps on a 15x15 board.
        let g = geometry::<U256>(15);
        assert_eq!(members(g.steps(1, 224)), vec![208, 209, 223]);
        assert_eq!(members(g.dead[0][1]), (0..15).collect::<Vec<_>>());
        assert_eq!(g.board.count(), 225);
        assert_eq!(g.near[0].count(), 8);
        assert_eq!(
            members(g.files(0b101) & g.rays[0][5]),
            vec![15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 165, 180, 195, 210]
        );
        assert_eq!(g.files(0b101).count(), 30);
        assert_eq!(g.near[112].count(), 24);
        assert_eq!(g.lines[0].count(), 14 * 3);
    }
}
