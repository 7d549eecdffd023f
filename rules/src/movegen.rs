//! Legal move generation for every variant.
//!
//! Where the check rule applies, legality is decided without making moves:
//! pins and checkers are found once from the royal, royal moves look at
//! the target square with the royal lifted off the board, and evasions must
//! capture the single checker or block its line. Only the pawn-drop-mate
//! test (uchifuzume) and dai's repetition ban play moves on a scratch copy.

use crate::moves::Move;
use crate::position::Position;
use crate::types::{Color, Kind, Square, EMPTY, GOTE_BIT, WALL};
use crate::variant::{has, mailbox_offset, LionPower, PromotionRule, DIRS};

/// Opposite of each direction index in [`DIRS`].
const OPPOSITE: [u8; 8] = [5, 7, 6, 4, 3, 0, 2, 1];

/// Does `to` lie on the line through `from` in direction `d` (either way)?
fn on_line(from: Square, to: Square, d: u8) -> bool {
    let (dx, dy) = DIRS[d as usize];
    let (cx, cy) = (to.col() as i32 - from.col() as i32, to.row() as i32 - from.row() as i32);
    // Cross product zero: collinear with the pin direction.
    cx * dy as i32 - cy * dx as i32 == 0
}

/// Squares that answer a single check: the checker and the squares between.
#[derive(Default)]
struct Targets {
    sq: [Square; 16],
    n: usize,
}

impl Targets {
    fn push(&mut self, s: Square) {
        if self.n < self.sq.len() {
            self.sq[self.n] = s;
            self.n += 1;
        }
    }
    #[inline]
    fn contains(&self, s: Square) -> bool {
        self.sq[..self.n].contains(&s)
    }
}

impl Default for Square {
    fn default() -> Square {
        Square(0)
    }
}

/// Pins and checks around the royal the check rule protects.
struct KingSafety {
    royal: Square,
    checkers: usize,
    /// For a single check: the checker and the squares between.
    targets: Targets,
    /// Pinned pieces with the direction (king to pinner) they may move along.
    pins: [(Square, u8); 8],
    npins: usize,
}

impl KingSafety {
    #[inline]
    fn pin_dir(&self, sq: Square) -> Option<u8> {
        self.pins[..self.npins].iter().find(|p| p.0 == sq).map(|p| p.1)
    }
}

impl Position {
    fn king_safety(&self, royal: Square) -> KingSafety {
        let t = self.t;
        let them = self.side.opponent().index();
        let mut ks =
            KingSafety { royal, checkers: 0, targets: Targets::default(), pins: [(Square(0), 0); 8], npins: 0 };
        for d in 0..8 {
            let off = mailbox_offset(DIRS[d].0, DIRS[d].1) as isize;
            let mut s = royal.offset(off);
            let mut dist = 1;
            let mut pinned: Option<Square> = None;
            loop {
                let code = self.code(s);
                if code == WALL {
                    break;
                }
                if code == EMPTY {
                    s = s.offset(off);
                    dist += 1;
                    continue;
                }
                if !self.is_enemy(code) {
                    if pinned.is_some() {
                        break;
                    }
                    pinned = Some(s);
                    s = s.offset(off);
                    dist += 1;
                    continue;
                }
                let slides = has(t.attack_slide[them][d], code);
                let attacks = slides
                    || (dist == 1 && has(t.attack_step[them][d], code))
                    || (dist == 2 && has(t.attack_range2[them][d], code));
                if attacks {
                    match pinned {
                        Some(p) => {
                            ks.pins[ks.npins] = (p, d as u8);
                            ks.npins += 1;
                        }
                        None => {
                            ks.checkers += 1;
                            let mut b = royal.offset(off);
                            while b != s {
                                ks.targets.push(b);
                                b = b.offset(off);
                            }
                            ks.targets.push(s);
                        }
                    }
                }
                break;
            }
        }
        for &(off, mask) in &t.attack_jump[them] {
            let s = royal.offset(off as isize);
            if has(mask, self.code(s)) {
                ks.checkers += 1;
                ks.targets.push(s);
            }
        }
        ks
    }

    /// Pushes a board move with the promotion choices the rules give.
    #[inline(always)]
    fn push_board_move(&self, out: &mut Vec<Move>, code: u8, from: Square, to: Square, capture: bool) {
        if self.t.can_promote[code as usize] {
            self.push_promotion_choices(out, code, from, to, capture);
        } else {
            out.push(Move::Normal { from, to, promote: false });
        }
    }

    #[inline(always)]
    fn push_promotion_choices(&self, out: &mut Vec<Move>, code: u8, from: Square, to: Square, capture: bool) {
        let t = self.t;
        let c = self.side.index();
        let mask = crate::types::BOARD_LEN - 1;
        let (zf, zt) = (t.zone_cell[c][from.index() & mask], t.zone_cell[c][to.index() & mask]);
        let can = match t.spec.promotion_rule {
            PromotionRule::StartOrEnd => zf || zt,
            PromotionRule::EnterOrCapture => (capture && (zf || zt)) || (!zf && zt),
        };
        let must = t.ahead_cell[c][to.index() & mask] < t.dead_ranks[code as usize];
        if can {
            out.push(Move::Normal { from, to, promote: true });
        }
        // A piece must promote where it could never move again only when
        // promotion is on offer: under EnterOrCapture a non-capture inside
        // the zone may still go to the last rank unpromoted (HaChu agrees).
        if !must || !can {
            out.push(Move::Normal { from, to, promote: false });
        }
    }

    /// Board moves of the piece on `from` (not lion double moves).
    #[inline]
    fn piece_moves(&self, out: &mut Vec<Move>, from: Square, code: u8) {
        for leg in &self.t.legs[code as usize] {
            let off = leg.offset as isize;
            let mut to = from;
            for _ in 0..leg.range {
                to = to.offset(off);
                let target = self.code(to);
                if target == EMPTY {
                    self.push_board_move(out, code, from, to, false);
                    continue;
                }
                if self.is_enemy(target) {
                    self.push_board_move(out, code, from, to, true);
                }
                break;
            }
        }
    }

    /// Lion double moves (first step captures) and one pass per position.
    fn lion_moves(&self, out: &mut Vec<Move>, from: Square, code: u8, pass_done: &mut bool) {
        let sign: i8 = if code & GOTE_BIT == 0 { 1 } else { -1 };
        let lines: &[(i8, i8)] = match self.t.lion[code as usize] {
            LionPower::None => return,
            LionPower::Full => &DIRS,
            LionPower::Lines(l) => l,
        };
        let full = matches!(self.t.lion[code as usize], LionPower::Full);
        for &(dx, dy) in lines {
            let (dx, dy) = (dx * sign, dy * sign);
            let mid = from.offset(mailbox_offset(dx, dy) as isize);
            let m = self.code(mid);
            if m == EMPTY {
                if !*pass_done {
                    *pass_done = true;
                    out.push(Move::Lion { from, mid, to: from });
                }
                continue;
            }
            if !self.is_enemy(m) {
                continue;
            }
            let seconds: &[(i8, i8)] = if full { &DIRS } else { &[(1, 1), (-1, -1)] };
            for &(ex, ey) in seconds {
                // For line lions the second step goes on (dx,dy) or back.
                let (ex, ey) = if full { (ex, ey) } else { (dx * ex, dy * ey) };
                let to = mid.offset(mailbox_offset(ex, ey) as isize);
                if to == from {
                    out.push(Move::Lion { from, mid, to });
                    continue;
                }
                let target = self.code(to);
                if target == EMPTY || self.is_enemy(target) {
                    out.push(Move::Lion { from, mid, to });
                }
            }
        }
    }

    /// Calls `f` for each of the side to move's pieces, from the
    /// occupancy bits.
    #[inline(always)]
    fn for_each_own(&self, mut f: impl FnMut(Square, u8)) {
        let t = self.t;
        let words = (t.spec.size * t.spec.size).div_ceil(64);
        for w in 0..words {
            let mut bits = self.occupied[self.side.index()][w];
            while bits != 0 {
                let sq = t.square_of_dense[w * 64 + bits.trailing_zeros() as usize];
                bits &= bits - 1;
                f(sq, self.code(sq));
            }
        }
    }

    /// All moves ignoring the check rule (and dai's repetition ban).
    fn pseudo_legal(&self, out: &mut Vec<Move>) {
        let mut pass_done = false;
        self.for_each_own(|from, code| {
            self.piece_moves(out, from, code);
            self.lion_moves(out, from, code, &mut pass_done);
        });
        self.drops(out, None);
    }

    /// Drops of every kind in hand, on `only` squares if given.
    fn drops(&self, out: &mut Vec<Move>, only: Option<&[Square]>) {
        if !self.t.spec.drops {
            return;
        }
        let us = self.side;
        let hand = &self.hands[us.index()];
        let kinds: Vec<Kind> = Kind::HAND.iter().copied().filter(|&k| hand[k as usize] > 0).collect();
        if kinds.is_empty() {
            return;
        }
        let size = self.t.spec.size;
        let mut drop_on = |to: Square| {
            if self.code(to) != EMPTY {
                return;
            }
            let ahead = self.t.spec.rows_ahead(us, to.row()) as u8;
            for &kind in &kinds {
                let dead = self.t.kind_spec[kind as usize].map_or(0, |k| k.dead_ranks);
                if ahead < dead {
                    continue;
                }
                if kind == Kind::Pawn
                    && (self.pawn_files[us.index()] & (1 << to.col()) != 0 || self.is_pawn_drop_mate(to))
                {
                    continue;
                }
                out.push(Move::Drop { kind, to });
            }
        };
        match only {
            Some(squares) => squares.iter().for_each(|&s| drop_on(s)),
            None => {
                for row in 0..size {
                    for col in 0..size {
                        drop_on(Square::from_col_row(col, row));
                    }
                }
            }
        }
    }

    /// Uchifuzume: would a pawn dropped on `to` checkmate?
    fn is_pawn_drop_mate(&self, to: Square) -> bool {
        let them = self.side.opponent();
        let forward = if self.side == Color::Sente { -1 } else { 1 };
        let front = to.offset(forward * crate::types::STRIDE as isize);
        if !self.royal_squares(them).contains(&front) || self.checked_royal(them).is_none() {
            return false;
        }
        let mut scratch = self.scratch();
        scratch.make(Move::Drop { kind: Kind::Pawn, to });
        !scratch.has_legal_move()
    }

    /// A copy without history, for trying moves.
    pub(crate) fn scratch(&self) -> Position {
        // Every field but the history is Copy.
        Position { history: Vec::new(), ..*self }
    }

    /// Legal moves under the check rule for `royal`.
    fn checked_moves(&self, out: &mut Vec<Move>, royal: Square) {
        let ks = self.king_safety(royal);
        let them = self.side.opponent();
        self.for_each_own(|from, code| {
            if from == ks.royal {
                for leg in &self.t.legs[code as usize] {
                    let to = from.offset(leg.offset as isize);
                    let target = self.code(to);
                    if (target == EMPTY || self.is_enemy(target)) && !self.attacked_ignoring(to, them, from) {
                        out.push(Move::Normal { from, to, promote: false });
                    }
                }
                return;
            }
            let pin = ks.pin_dir(from);
            if self.may_promote_to_royal(code) && (pin.is_some() || ks.checkers > 0) {
                // Promoting leaves two royals, so the check rule no longer
                // binds that move: every promotion is legal (sho shogi).
                let mut all = Vec::new();
                self.piece_moves(&mut all, from, code);
                for m in all {
                    let to = m.to();
                    let pin_ok = pin.map_or(true, |d| on_line(from, to, d));
                    let check_ok = ks.checkers == 0 || (ks.checkers == 1 && ks.targets.contains(to));
                    if m.is_promotion() || (pin_ok && check_ok) {
                        out.push(m);
                    }
                }
                return;
            }
            if ks.checkers >= 2 {
                return;
            }
            for leg in &self.t.legs[code as usize] {
                if let Some(d) = pin {
                    if leg.dir != d && leg.dir != OPPOSITE[d as usize] {
                        continue;
                    }
                }
                let off = leg.offset as isize;
                let mut to = from;
                for _ in 0..leg.range {
                    to = to.offset(off);
                    let target = self.code(to);
                    if target != EMPTY && !self.is_enemy(target) {
                        break;
                    }
                    if ks.checkers == 0 || ks.targets.contains(to) {
                        self.push_board_move(out, code, from, to, target != EMPTY);
                    }
                    if target != EMPTY {
                        break;
                    }
                }
            }
        });
        match ks.checkers {
            0 => self.drops(out, None),
            1 => {
                // The last target is the checker itself; drops can only block.
                let between = &ks.targets.sq[..ks.targets.n - 1];
                self.drops(out, Some(between));
            }
            _ => {}
        }
    }

    #[inline]
    fn may_promote_to_royal(&self, code: u8) -> bool {
        code & 1 == 0 && self.t.royal_code[(code | 1) as usize] && !self.t.royal_code[code as usize]
    }

    /// Every legal move, in generation order.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(128);
        self.generate_legal(&mut out);
        out
    }

    /// Clears `out` and fills it with the legal moves.
    pub fn generate_legal(&self, out: &mut Vec<Move>) {
        out.clear();
        match self.checked_royal(self.side) {
            Some(royal) => self.checked_moves(out, royal),
            None => self.pseudo_legal(out),
        }
        if self.repetition_illegal && !self.history.is_empty() {
            self.remove_repetitions(out);
        }
    }

    /// Dai shogi's ban on moves that recreate an earlier position.
    fn remove_repetitions(&self, out: &mut Vec<Move>) {
        let mut scratch = self.scratch();
        out.retain(|&mv| {
            let undo = scratch.make(mv);
            let h = scratch.hash;
            scratch.unmake(mv, undo);
            !self.history.iter().any(|e| e.hash_before() == h)
        });
    }

    /// Is there at least one legal move?
    pub fn has_legal_move(&self) -> bool {
        let mut out = Vec::with_capacity(64);
        self.generate_legal(&mut out);
        !out.is_empty()
    }

    /// Is `mv` legal here?
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(&mv)
    }
}
