//! Policy labels: every legal move of a position gets a distinct index
//! `plane * squares + destination`, both from the side to move's view.
//!
//! A board move is labelled by its destination and its shape (direction and
//! distance class, or jump offset) plus the promotion flag. The shape and
//! the destination determine the origin square:
//!
//! - an exact offset (steps, two-square moves, knight-like jumps in dai)
//!   names the origin directly;
//! - an open ray ("direction `d`, any distance from `min`") names the first
//!   occupied square found walking back from the destination: a non-jumping
//!   move passes only empty squares, and the layouts below only use open
//!   rays over distances at which no piece of the variant jumps (standard
//!   and sho shogi: no jump along a queen line at all; dai: jumps go at most
//!   two squares, and the open rays start at three).
//!
//! Drops are labelled by kind, lion double moves by their two king steps
//! (at the final square, which is the origin for igui), and the pass by one
//! plane at a canonical lion-power piece.

use rules::{Color, Kind, LionPower, Move, Piece, Position, Square, Variant};

/// The eight directions as `(dx, dy)` in the mover's view: `dy < 0` is
/// forward (towards the opponent), `dx > 0` towards higher file numbers
/// (the mover's left). Same order as the rules crate's direction table.
pub const DIRS: [(i8, i8); 8] = [(0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (1, 1), (-1, 1)];

/// Names of [`DIRS`] for documentation.
pub const DIR_NAMES: [&str; 8] =
    ["forward", "forward-left", "forward-right", "left", "right", "back", "back-left", "back-right"];

/// Longest distance of an open ray (beyond any board side).
pub const RAY_MAX: u8 = u8::MAX;

/// What one policy plane means. Squares are destinations in the mover's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyPlane {
    /// A board move in direction `DIRS[dir]` over `min..=max` squares.
    Ray { dir: u8, min: u8, max: u8, promote: bool },
    /// A board move by exactly `(dx, dy)` (a jump that is not along a
    /// queen line: the knight offsets).
    Offset { dx: i8, dy: i8, promote: bool },
    /// A drop of `kind` (standard shogi).
    Drop { kind: Kind },
    /// A lion double move: first step `DIRS[first]`, second step
    /// `DIRS[second]` (opposite directions: igui, back on the origin).
    Lion { first: u8, second: u8 },
    /// The pass (lion-power double move out and back over an empty square),
    /// labelled at the mover's first lion-power piece in view order.
    Pass,
}

impl std::fmt::Display for PolicyPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plus = |p: bool| if p { " +promote" } else { "" };
        match *self {
            PolicyPlane::Ray { dir, min, max, promote } => {
                let d = DIR_NAMES[dir as usize];
                match (min, max) {
                    (a, b) if a == b => write!(f, "{d} {a}{}", plus(promote)),
                    (a, RAY_MAX) => write!(f, "{d} {a}+{}", plus(promote)),
                    (a, b) => write!(f, "{d} {a}..{b}{}", plus(promote)),
                }
            }
            PolicyPlane::Offset { dx, dy, promote } => {
                write!(f, "jump ({dx},{dy}){}", plus(promote))
            }
            PolicyPlane::Drop { kind } => write!(f, "drop {kind:?}"),
            PolicyPlane::Lion { first, second } => {
                write!(f, "lion {} then {}", DIR_NAMES[first as usize], DIR_NAMES[second as usize])
            }
            PolicyPlane::Pass => f.write_str("pass"),
        }
    }
}

const NONE: u16 = u16::MAX;

/// The policy planes of a variant and the tables that label moves fast.
#[derive(Clone, Debug)]
pub(crate) struct PolicyLayout {
    pub planes: Vec<PolicyPlane>,
    size: usize,
    /// Board move planes by `(dx, dy)` (mover's view) and promotion flag.
    normal: Vec<[u16; 2]>,
    drop: [u16; 32],
    lion_base: u16,
    pass: u16,
    /// Piece codes with lion power (double moves), by code.
    lion_power: [bool; 128],
    view: ViewTable,
}

fn planes_for(variant: Variant) -> Vec<PolicyPlane> {
    let mut planes = Vec::new();
    match variant {
        Variant::Shogi | Variant::Sho => {
            // dlshogi's scheme: 8 directions (any distance) + 2 knight jumps,
            // each without and with promotion, then one plane per drop kind.
            for promote in [false, true] {
                for dir in 0..8 {
                    planes.push(PolicyPlane::Ray { dir, min: 1, max: RAY_MAX, promote });
                }
                for (dx, dy) in [(1, -2), (-1, -2)] {
                    planes.push(PolicyPlane::Offset { dx, dy, promote });
                }
            }
            if variant.spec().drops {
                for kind in Kind::HAND {
                    planes.push(PolicyPlane::Drop { kind });
                }
            }
        }
        Variant::Dai => {
            // Distances 1 and 2 exactly (two-square jumps of phoenix, kirin,
            // lion, falcon and eagle pass over a piece), 3+ as a ray; the
            // eight knight offsets (two forward knights first: the only
            // ones a promotable piece makes). Promotion versions of the 24
            // rays and the forward knights. Then lion double moves and pass.
            let knights = [(1, -2), (-1, -2), (2, -1), (-2, -1), (2, 1), (-2, 1), (1, 2), (-1, 2)];
            for promote in [false, true] {
                for (min, max) in [(1, 1), (2, 2), (3, RAY_MAX)] {
                    for dir in 0..8 {
                        planes.push(PolicyPlane::Ray { dir, min, max, promote });
                    }
                }
                let n = if promote { 2 } else { knights.len() };
                for &(dx, dy) in &knights[..n] {
                    planes.push(PolicyPlane::Offset { dx, dy, promote });
                }
            }
            for first in 0..8 {
                for second in 0..8 {
                    planes.push(PolicyPlane::Lion { first, second });
                }
            }
            planes.push(PolicyPlane::Pass);
        }
    }
    planes
}

#[inline]
fn dir_index(dx: i32, dy: i32) -> Option<u8> {
    DIRS.iter().position(|&(x, y)| x as i32 == dx && y as i32 == dy).map(|i| i as u8)
}

/// `(col, row)` of a square in the mover's view (gote sees the board turned).
#[inline]
pub(crate) fn view_col_row(sq: Square, size: usize, gote: bool) -> (i32, i32) {
    let (c, r) = (sq.file() as i32 - 1, sq.rank() as i32 - 1);
    if gote {
        (size as i32 - 1 - c, size as i32 - 1 - r)
    } else {
        (c, r)
    }
}

/// [`view_col_row`] as a table by mailbox index, for the hot paths.
#[derive(Clone, Debug)]
pub(crate) struct ViewTable {
    /// `cells[sq.index()][gote as usize]` = `(col, row)` in that side's view
    /// (`OFF` for cells off this board).
    cells: Vec<[(u8, u8); 2]>,
}

impl ViewTable {
    pub fn new(size: usize) -> ViewTable {
        let len = Square::new(size as u8, size as u8).index() + 1;
        let mut cells = vec![[OFF; 2]; len];
        for d in 0..size * size {
            let sq = Square::from_dense(d, size);
            for gote in [false, true] {
                let (c, r) = view_col_row(sq, size, gote);
                cells[sq.index()][gote as usize] = (c as u8, r as u8);
            }
        }
        ViewTable { cells }
    }

    /// View coordinates of a square of this board.
    #[inline]
    pub fn col_row(&self, sq: Square, gote: bool) -> (i32, i32) {
        let (c, r) = self.cells[sq.index()][gote as usize];
        debug_assert_ne!((c, r), OFF, "{sq:?} is off the board");
        (c as i32, r as i32)
    }

    /// View coordinates, or `None` for a square off this board.
    #[inline]
    pub fn get(&self, sq: Square, gote: bool) -> Option<(i32, i32)> {
        match self.cells.get(sq.index())?[gote as usize] {
            OFF => None,
            (c, r) => Some((c as i32, r as i32)),
        }
    }
}

const OFF: (u8, u8) = (u8::MAX, u8::MAX);

/// The board square at view coordinates, if on the board.
#[inline]
fn square_at_view(col: i32, row: i32, size: usize, gote: bool) -> Option<Square> {
    let s = size as i32;
    if !(0..s).contains(&col) || !(0..s).contains(&row) {
        return None;
    }
    let (c, r) = if gote { (s - 1 - col, s - 1 - row) } else { (col, row) };
    Some(Square::new(c as u8 + 1, r as u8 + 1))
}

impl PolicyLayout {
    pub fn new(variant: Variant) -> PolicyLayout {
        let spec = variant.spec();
        let size = spec.size;
        let planes = planes_for(variant);
        let span = 2 * size - 1;
        let mut normal = vec![[NONE; 2]; span * span];
        let mut drop = [NONE; 32];
        let mut lion_base = NONE;
        let mut pass = NONE;
        let r = size as i32 - 1;
        let mut set = |dx: i32, dy: i32, promote: bool, plane: usize| {
            if dx.abs() > r || dy.abs() > r {
                return;
            }
            let cell = &mut normal[((dy + r) as usize) * span + (dx + r) as usize][promote as usize];
            assert_eq!(*cell, NONE, "policy planes overlap at ({dx},{dy})");
            *cell = plane as u16;
        };
        for (i, p) in planes.iter().enumerate() {
            match *p {
                PolicyPlane::Ray { dir, min, max, promote } => {
                    let (dx, dy) = DIRS[dir as usize];
                    for k in min as i32..=(max as i32).min(r) {
                        set(dx as i32 * k, dy as i32 * k, promote, i);
                    }
                }
                PolicyPlane::Offset { dx, dy, promote } => set(dx as i32, dy as i32, promote, i),
                PolicyPlane::Drop { kind } => drop[kind as usize] = i as u16,
                PolicyPlane::Lion { first, second } => {
                    if first == 0 && second == 0 {
                        lion_base = i as u16;
                    }
                    debug_assert_eq!(i as u16, lion_base + first as u16 * 8 + second as u16);
                }
                PolicyPlane::Pass => pass = i as u16,
            }
        }
        let mut lion_power = [false; 128];
        for ks in spec.kinds {
            for (promoted, movement) in [(false, Some(ks.movement)), (true, ks.promotion.map(|p| p.0))] {
                let Some(m) = movement else { continue };
                if !matches!(m.lion, LionPower::None) {
                    for color in Color::BOTH {
                        lion_power[Piece::new(color, ks.kind, promoted).code() as usize] = true;
                    }
                }
            }
        }
        PolicyLayout { planes, size, normal, drop, lion_base, pass, lion_power, view: ViewTable::new(size) }
    }

    #[inline]
    pub fn squares(&self) -> usize {
        self.size * self.size
    }

    #[inline]
    fn index_at(&self, plane: u16, to: Square, gote: bool) -> Option<usize> {
        if plane == NONE {
            return None;
        }
        let (c, r) = self.view.get(to, gote)?;
        Some(plane as usize * self.squares() + r as usize * self.size + c as usize)
    }

    /// The label of `mv` in `pos`, or `None` when no plane describes it
    /// (never for a legal move).
    #[inline]
    pub fn move_index(&self, pos: &Position, mv: Move) -> Option<usize> {
        let gote = pos.side_to_move() == Color::Gote;
        let size = self.size;
        match mv {
            Move::Normal { from, to, promote } => {
                let (fc, fr) = self.view.get(from, gote)?;
                let (tc, tr) = self.view.get(to, gote)?;
                let (dx, dy) = (tc - fc, tr - fr);
                let r = size as i32 - 1;
                let span = 2 * size - 1;
                let plane = self.normal[((dy + r) as usize) * span + (dx + r) as usize][promote as usize];
                self.index_at(plane, to, gote)
            }
            Move::Drop { kind, to } => self.index_at(self.drop[kind as usize], to, gote),
            Move::Lion { from, mid, to } => {
                if to == from && pos.piece_at(mid).is_none() {
                    let at = self.pass_square(pos)?;
                    return self.index_at(self.pass, at, gote);
                }
                if self.lion_base == NONE {
                    return None;
                }
                let (fc, fr) = self.view.get(from, gote)?;
                let (mc, mr) = self.view.get(mid, gote)?;
                let (tc, tr) = self.view.get(to, gote)?;
                let first = dir_index(mc - fc, mr - fr)?;
                let second = dir_index(tc - mc, tr - mr)?;
                self.index_at(self.lion_base + first as u16 * 8 + second as u16, to, gote)
            }
        }
    }

    /// Where the pass is labelled: the side to move's lion-power piece that
    /// comes first in view order (row by row from the far rank).
    fn pass_square(&self, pos: &Position) -> Option<Square> {
        let us = pos.side_to_move();
        let gote = us == Color::Gote;
        let size = self.size as i32;
        for row in 0..size {
            for col in 0..size {
                let sq = square_at_view(col, row, self.size, gote)?;
                if let Some(p) = pos.piece_at(sq) {
                    if p.color() == us && self.lion_power[p.code() as usize] {
                        return Some(sq);
                    }
                }
            }
        }
        None
    }

    /// The move a label stands for in `pos`, without checking legality
    /// (the pass needs the legal moves: `None` here).
    pub fn decode(&self, pos: &Position, index: usize) -> Option<Move> {
        let n = self.squares();
        let plane = *self.planes.get(index / n)?;
        let gote = pos.side_to_move() == Color::Gote;
        let (tc, tr) = ((index % n % self.size) as i32, (index % n / self.size) as i32);
        let to = square_at_view(tc, tr, self.size, gote)?;
        let from_offset = |dx: i32, dy: i32| square_at_view(tc - dx, tr - dy, self.size, gote);
        match plane {
            PolicyPlane::Ray { dir, min, max, promote } => {
                let (dx, dy) = (DIRS[dir as usize].0 as i32, DIRS[dir as usize].1 as i32);
                let from = if min == max {
                    from_offset(dx * min as i32, dy * min as i32)?
                } else {
                    // Walk back from the destination to the first piece.
                    let mut k = 1;
                    loop {
                        let s = from_offset(dx * k, dy * k)?;
                        if pos.piece_at(s).is_some() {
                            if k < min as i32 || k > max as i32 {
                                return None;
                            }
                            break s;
                        }
                        k += 1;
                    }
                };
                Some(Move::Normal { from, to, promote })
            }
            PolicyPlane::Offset { dx, dy, promote } => {
                Some(Move::Normal { from: from_offset(dx as i32, dy as i32)?, to, promote })
            }
            PolicyPlane::Drop { kind } => Some(Move::Drop { kind, to }),
            PolicyPlane::Lion { first, second } => {
                let (ex, ey) = DIRS[second as usize];
                let (dx, dy) = DIRS[first as usize];
                let (mc, mr) = (tc - ex as i32, tr - ey as i32);
                let mid = square_at_view(mc, mr, self.size, gote)?;
                let from = square_at_view(mc - dx as i32, mr - dy as i32, self.size, gote)?;
                Some(Move::Lion { from, mid, to })
            }
            PolicyPlane::Pass => None,
        }
    }

    /// The legal move (among `legal`) with this label.
    pub fn index_move_among(&self, pos: &Position, index: usize, legal: &[Move]) -> Option<Move> {
        let n = self.squares();
        let candidate = match self.planes.get(index / n)? {
            PolicyPlane::Pass => legal
                .iter()
                .copied()
                .find(|m| matches!(*m, Move::Lion { from, mid, to } if from == to && pos.piece_at(mid).is_none()))?,
            _ => self.decode(pos, index)?,
        };
        (legal.contains(&candidate) && self.move_index(pos, candidate) == Some(index)).then_some(candidate)
    }
}
