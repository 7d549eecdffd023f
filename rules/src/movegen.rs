//! Legal move generation for every variant, over sets of squares.
//!
//! One generator reads each variant's tables (how every piece code moves,
//! [`crate::variant::CodeMoves`], and the board's [`Geometry`]) at the bit
//! width of its board. Where the check rule applies, legality is decided
//! without making moves: checkers and pins are found once from the royal,
//! royal moves look at the target square with the royal lifted off the
//! board, other moves must land on the check mask (capture the single
//! checker or block its line) and stay on their pin line. Only the
//! pawn-drop-mate test (uchifuzume) and dai's repetition ban play moves on a
//! scratch copy.
//!
//! The same walk either lists the moves or only counts them
//! ([`Position::count_legal`], perft's last ply): a piece's moves are a set
//! of target squares, so counting them is a population count.

use crate::bitboard::{Bits, Geometry, PerSquare, U256};
use crate::moves::Move;
use crate::position::Position;
use crate::types::DIRS;
use crate::types::{Color, Kind, Piece, Square, EMPTY, GOTE_BIT, STRIDE};
use crate::variant::{has, mailbox_offset, CodeMoves, LionPower};
use crate::zobrist::KEYS;

/// Where generated moves go: a list, a running count, or a list of the captures alone.
trait Sink {
    /// Whether the sink takes drops: when not, they are not generated (nor the
    /// pawn-drop-mate test run for them).
    const DROPS: bool = true;
    /// Whether the sink has what it wants: the generator then stops (checked
    /// between pieces). Sinks that take every move never are.
    const STOPS: bool = false;
    fn full(&self) -> bool {
        false
    }
    /// The squares among a piece's `reach` whose moves the sink keeps: the others are
    /// not looked at (the royal's not tested for safety).
    #[inline(always)]
    fn targets<B: Bits>(&self, reach: B) -> B {
        reach
    }
    fn push(&mut self, mv: Move);
    /// Moves of the piece on dense square `from`: promoting to the squares
    /// of `promote`, not promoting to those of `plain`.
    fn board_moves<B: Bits>(&mut self, squares: &PerSquare<Square>, from: usize, promote: B, plain: B);
    fn drops<B: Bits>(&mut self, squares: &PerSquare<Square>, kind: Kind, to: B);
}

impl Sink for Vec<Move> {
    #[inline(always)]
    fn push(&mut self, mv: Move) {
        Vec::push(self, mv);
    }

    #[inline(always)]
    fn board_moves<B: Bits>(&mut self, squares: &PerSquare<Square>, from: usize, promote: B, plain: B) {
        let from = squares[from];
        if promote.is_empty() {
            plain.for_each(|i| Vec::push(self, Move::Normal { from, to: squares[i], promote: false }));
            return;
        }
        (promote | plain).for_each(|i| {
            let to = squares[i];
            if promote.has(i) {
                Vec::push(self, Move::Normal { from, to, promote: true });
            }
            if plain.has(i) {
                Vec::push(self, Move::Normal { from, to, promote: false });
            }
        });
    }

    #[inline(always)]
    fn drops<B: Bits>(&mut self, squares: &PerSquare<Square>, kind: Kind, to: B) {
        to.for_each(|i| Vec::push(self, Move::Drop { kind, to: squares[i] }));
    }
}

/// Counts moves without listing them. `FAST_POPCOUNT`: the CPU counts bits
/// in one instruction, cheaper than testing a set for emptiness first.
struct Count<const FAST_POPCOUNT: bool>(u64);

impl<const FAST_POPCOUNT: bool> Count<FAST_POPCOUNT> {
    #[inline(always)]
    fn add<B: Bits>(&mut self, set: B) {
        // In software a count costs dozens of instructions and most sets are
        // empty.
        if FAST_POPCOUNT || !set.is_empty() {
            self.0 += set.count() as u64;
        }
    }
}

impl<const FAST_POPCOUNT: bool> Sink for Count<FAST_POPCOUNT> {
    #[inline(always)]
    fn push(&mut self, _: Move) {
        self.0 += 1;
    }

    #[inline(always)]
    fn board_moves<B: Bits>(&mut self, _: &PerSquare<Square>, _: usize, promote: B, plain: B) {
        self.add(plain);
        self.add(promote);
    }

    #[inline(always)]
    fn drops<B: Bits>(&mut self, _: &PerSquare<Square>, _: Kind, to: B) {
        self.add(to);
    }
}

/// Whether there is a move at all: the generator stops at the first piece with one,
/// and leaves the royal, whose moves cost an attack test each, for last.
struct AnyMove(bool);

impl Sink for AnyMove {
    const STOPS: bool = true;

    #[inline(always)]
    fn full(&self) -> bool {
        self.0
    }

    #[inline(always)]
    fn push(&mut self, _: Move) {
        self.0 = true;
    }

    #[inline(always)]
    fn board_moves<B: Bits>(&mut self, _: &PerSquare<Square>, _: usize, promote: B, plain: B) {
        self.0 |= !(promote | plain).is_empty();
    }

    #[inline(always)]
    fn drops<B: Bits>(&mut self, _: &PerSquare<Square>, _: Kind, to: B) {
        self.0 |= !to.is_empty();
    }
}

/// Keeps the captures of the moves it is sent (quiescence search): board moves onto
/// enemy pieces and lion moves whose first step captures; no drops, no pass.
struct Captures<'a> {
    pos: &'a Position,
    out: &'a mut Vec<Move>,
}

impl Sink for Captures<'_> {
    const DROPS: bool = false;

    #[inline(always)]
    fn targets<B: Bits>(&self, reach: B) -> B {
        reach & B::load(self.pos.occupied[self.pos.side.opponent().index()])
    }

    #[inline(always)]
    fn push(&mut self, mv: Move) {
        // Only lion moves come this way; the pass is the one whose first square is empty.
        if let Move::Lion { mid, .. } = mv {
            if self.pos.board[mid.index()] != EMPTY {
                self.out.push(mv);
            }
        }
    }

    #[inline(always)]
    fn board_moves<B: Bits>(&mut self, squares: &PerSquare<Square>, from: usize, promote: B, plain: B) {
        let enemy = B::load(self.pos.occupied[self.pos.side.opponent().index()]);
        Sink::board_moves(self.out, squares, from, promote & enemy, plain & enemy);
    }

    #[inline(always)]
    fn drops<B: Bits>(&mut self, _: &PerSquare<Square>, _: Kind, _: B) {}
}

/// What the check rule asks of the side to move's moves.
struct Safety<B> {
    /// Dense square of the royal the rule protects (`usize::MAX`: no rule).
    royal: usize,
    checkers: u32,
    /// Squares a non-royal move must end on: the whole board without check,
    /// the checker and the squares between for one checker, none for two.
    check_mask: B,
    pinned: B,
    /// Pinned pieces, as (pinned piece, pinner, direction from the royal).
    pins: [(u16, u16, u8); 8],
    npins: usize,
}

impl<B: Bits> Safety<B> {
    #[inline(always)]
    fn unconstrained(board: B) -> Safety<B> {
        Safety { royal: usize::MAX, checkers: 0, check_mask: board, pinned: B::ZERO, pins: [(0, 0, 0); 8], npins: 0 }
    }

    /// The squares a pinned piece on `sq` may move to: its line up to and
    /// including the pinner.
    #[inline]
    fn pin_line(&self, g: &Geometry<B>, sq: usize) -> B {
        match self.pins[..self.npins].iter().find(|p| p.0 as usize == sq) {
            Some(&(_, pinner, d)) => g.rays[self.royal][d as usize] ^ g.rays[pinner as usize][d as usize],
            None => B::ZERO,
        }
    }
}

impl Position {
    /// Checkers and pins around `royal_sq` (the royal of the side to move).
    #[inline(always)]
    fn safety<B: Bits>(&self, g: &Geometry<B>, royal_sq: Square, occupied: B, enemy: B) -> Safety<B> {
        let t = self.t;
        let them = self.side.opponent().index();
        let royal = t.dense(royal_sq);
        let mut s = Safety { royal, ..Safety::unconstrained(B::ZERO) };
        // Only line pieces check or pin from afar: look along the lines
        // that hold one.
        let line_pieces = B::load(self.line_pieces[them]);
        if !(g.lines[royal] & line_pieces).is_empty() {
            for d in 0..8 {
                if !(g.rays[royal][d] & line_pieces).is_empty() {
                    self.line_safety(g, &mut s, d, occupied);
                }
            }
        }
        if !(g.near[royal] & enemy).is_empty() {
            self.near_checks(&mut s, royal_sq);
        }
        s.check_mask = match s.checkers {
            0 => g.board,
            1 => s.check_mask,
            _ => B::ZERO,
        };
        s
    }

    /// Checks and pins along direction `d` from the royal.
    #[inline(always)]
    fn line_safety<B: Bits>(&self, g: &Geometry<B>, s: &mut Safety<B>, d: usize, occupied: B) {
        let t = self.t;
        let them = self.side.opponent().index();
        let royal = s.royal;
        let ray = g.rays[royal][d];
        let blockers = ray & occupied;
        if blockers.is_empty() {
            return;
        }
        let first = Geometry::nearest(blockers, d);
        let code = self.dense_board[first & 255];
        let at = |n: isize, sq: usize| sq as isize == royal as isize + n * g.delta[d];
        if self.is_enemy(code) {
            // Line pieces attack from next door too (steps of other
            // pieces are [`Position::near_checks`]'s business).
            let attacks = t.moves[code as usize].ray
                && (has(t.attack_slide[them][d], code)
                    || (at(1, first) && has(t.attack_step[them][d], code))
                    || (at(2, first) && has(t.attack_range2[them][d], code)));
            if attacks {
                s.checkers += 1;
                s.check_mask |= ray ^ g.rays[first][d];
            }
            return;
        }
        let beyond = g.rays[first][d] & occupied;
        if beyond.is_empty() {
            return;
        }
        let pinner = Geometry::nearest(beyond, d);
        let code = self.dense_board[pinner & 255];
        let pins = self.is_enemy(code)
            && (has(t.attack_slide[them][d], code) || (at(2, pinner) && has(t.attack_range2[them][d], code)));
        if pins {
            s.pinned |= B::bit(first);
            s.pins[s.npins] = (first as u16, pinner as u16, d as u8);
            s.npins += 1;
        }
    }

    /// Checks by pieces next to the royal that do not move along lines, and
    /// by jumps.
    fn near_checks<B: Bits>(&self, s: &mut Safety<B>, royal_sq: Square) {
        let t = self.t;
        let them = self.side.opponent().index();
        for (d, &(dx, dy)) in DIRS.iter().enumerate() {
            let sq = royal_sq.offset(mailbox_offset(dx, dy) as isize);
            let code = self.code(sq);
            if self.is_enemy(code) && !t.moves[code as usize].ray && has(t.attack_step[them][d], code) {
                s.checkers += 1;
                s.check_mask |= B::bit(t.dense(sq));
            }
        }
        for &(off, mask) in &t.attack_jump[them] {
            let sq = royal_sq.offset(off as isize);
            if has(mask, self.code(sq)) {
                s.checkers += 1;
                s.check_mask |= B::bit(t.dense(sq));
            }
        }
    }

    /// Does colour `by` attack the dense square `sq` over `occupied`? For a
    /// royal's step, with the royal taken off `occupied`.
    #[inline(always)]
    fn attacked_over<B: Bits>(&self, g: &Geometry<B>, sq: usize, by: Color, occupied: B) -> bool {
        let t = self.t;
        let c = by.index();
        let theirs = B::load(self.occupied[c]);
        let line_pieces = B::load(self.line_pieces[c]) & g.lines[sq];
        if !line_pieces.is_empty() {
            for d in 0..8 {
                if (g.rays[sq][d] & line_pieces).is_empty() {
                    continue;
                }
                let first = Geometry::nearest(g.rays[sq][d] & occupied, d);
                let code = self.dense_board[first & 255];
                if !theirs.has(first) || !t.moves[code as usize].ray {
                    continue;
                }
                let at = |n: isize| first as isize == sq as isize + n * g.delta[d];
                if has(t.attack_slide[c][d], code)
                    || (at(1) && has(t.attack_step[c][d], code))
                    || (at(2) && has(t.attack_range2[c][d], code))
                {
                    return true;
                }
            }
        }
        if (g.near[sq] & theirs).is_empty() {
            return false;
        }
        let square = t.square_of_dense[sq];
        for (d, &(dx, dy)) in DIRS.iter().enumerate() {
            let code = self.code(square.offset(mailbox_offset(dx, dy) as isize));
            if has(t.attack_step[c][d], code) && !t.moves[code as usize].ray {
                return true;
            }
        }
        t.attack_jump[c].iter().any(|&(off, mask)| has(mask, self.code(square.offset(off as isize))))
    }

    /// Squares the piece of `moves` on `from` attacks (own pieces included).
    #[inline(always)]
    fn reach<B: Bits>(g: &Geometry<B>, moves: &CodeMoves, from: usize, occupied: B) -> B {
        let mut set = g.steps(moves.steps as usize, from);
        let mut dirs = moves.slides;
        while dirs != 0 {
            let d = dirs.trailing_zeros() as usize;
            dirs &= dirs - 1;
            set |= g.slide(from, d, occupied);
        }
        let mut dirs = moves.near;
        while dirs != 0 {
            let d = dirs.trailing_zeros() as usize;
            dirs &= dirs - 1;
            set |= g.slide_near(from, d, occupied);
        }
        set
    }

    /// The squares of `targets` where a move from `from` may promote.
    #[inline(always)]
    fn promotions<B: Bits>(&self, g: &Geometry<B>, from: usize, targets: B, enemy: B) -> B {
        let c = self.side.index();
        targets & (g.promote_any[c][from] | (enemy & g.promote_capture[c][from]))
    }

    /// Sends the moves to `legal` (with promotions to `promote`) of the
    /// piece of `moves` on `from`.
    #[inline(always)]
    fn piece_moves<B: Bits, S: Sink>(
        &self,
        g: &Geometry<B>,
        sink: &mut S,
        moves: &CodeMoves,
        from: usize,
        legal: B,
        promote: B,
    ) {
        // A piece must promote where it could never move again only when
        // promotion is on offer: under EnterOrCapture a non-capture inside
        // the zone may still go to the last rank unpromoted (HaChu agrees).
        if promote.is_empty() {
            sink.board_moves(&self.t.square_of_dense, from, B::ZERO, legal);
            return;
        }
        let plain = legal & !(g.dead[self.side.index()][moves.dead as usize] & promote);
        sink.board_moves(&self.t.square_of_dense, from, promote, plain);
    }

    /// The generator: every legal move but dai's repetition ban.
    #[inline(always)]
    fn generate<B: Bits, S: Sink>(&self, sink: &mut S) {
        let t = self.t;
        let g = B::geometry(&t.geometry);
        let us = self.side;
        let own = B::load(self.occupied[us.index()]);
        let enemy = B::load(self.occupied[us.opponent().index()]);
        let occupied = own | enemy;
        let checked = self.checked_royal(us);
        let safety = match checked {
            Some(royal) => self.safety(g, royal, occupied, enemy),
            None => Safety::unconstrained(g.board),
        };
        // Neither check nor pins: every piece but the royal moves freely.
        let constrained = safety.checkers != 0 || safety.npins != 0;
        let mut pass_done = false;
        // A sink that stops leaves the royal for last (its moves cost an attack test each)
        // unless it stands in check, when it is the likeliest to have one.
        let mut royal_left = None;
        // Word by word: 64-bit bit scans are cheaper than wider ones.
        for w in 0..B::WORDS {
            let mut word = own.word(w);
            while word != 0 {
                if S::STOPS && sink.full() {
                    return;
                }
                let from = 64 * w + word.trailing_zeros() as usize;
                word &= word - 1;
                let code = self.dense_board[from & 255];
                let moves = &t.moves[code as usize];
                let reach = sink.targets(Self::reach(g, moves, from, occupied) & !own);
                if from == safety.royal {
                    if S::STOPS && safety.checkers == 0 {
                        royal_left = Some((moves, reach));
                    } else {
                        self.royal_moves(g, sink, moves, from, reach, enemy);
                    }
                    continue;
                }
                if moves.lion && checked.is_none() {
                    self.lion_moves(sink, t.square_of_dense[from], code, &mut pass_done);
                }
                let mut legal = reach;
                let mut pinned = false;
                if constrained {
                    legal &= safety.check_mask;
                    pinned = safety.pinned.has(from);
                    if pinned {
                        legal &= safety.pin_line(g, from);
                    }
                }
                if !moves.promotes {
                    sink.board_moves(&t.square_of_dense, from, B::ZERO, legal);
                    continue;
                }
                // Promoting leaves two royals, so the check rule no longer
                // binds that move: every promotion is legal (sho shogi).
                let royal_promotion = moves.promotes_to_royal && (pinned || safety.checkers > 0);
                let promote = self.promotions(g, from, if royal_promotion { reach } else { legal }, enemy);
                self.piece_moves(g, sink, moves, from, legal, promote);
            }
        }
        if S::DROPS && t.spec.drops && safety.checkers < 2 && !(S::STOPS && sink.full()) {
            self.drop_moves(g, sink, occupied, safety.check_mask);
        }
        if let Some((moves, reach)) = royal_left {
            if !sink.full() {
                self.royal_moves(g, sink, moves, safety.royal, reach, enemy);
            }
        }
    }

    /// Moves of the protected royal: to squares the enemy does not attack
    /// once the royal has left its square.
    fn royal_moves<B: Bits, S: Sink>(
        &self,
        g: &Geometry<B>,
        sink: &mut S,
        moves: &CodeMoves,
        from: usize,
        reach: B,
        enemy: B,
    ) {
        let them = self.side.opponent();
        let occupied = (B::load(self.occupied[0]) | B::load(self.occupied[1])) & !B::bit(from);
        let mut safe = B::ZERO;
        let mut targets = reach;
        while !targets.is_empty() {
            let to = targets.pop_lsb();
            if !self.attacked_over(g, to, them, occupied) {
                safe |= B::bit(to);
                // A sink that stops at the first move needs one safe square, not all
                // (a royal that may promote is left to `piece_moves` whole).
                if S::STOPS && !moves.promotes {
                    break;
                }
            }
        }
        let promote = if moves.promotes { self.promotions(g, from, safe, enemy) } else { B::ZERO };
        self.piece_moves(g, sink, moves, from, safe, promote);
    }

    /// Drops of every kind in hand, on empty squares of `mask`.
    fn drop_moves<B: Bits, S: Sink>(&self, g: &Geometry<B>, sink: &mut S, occupied: B, mask: B) {
        let us = self.side;
        let empty = g.board & !occupied & mask;
        if empty.is_empty() {
            return;
        }
        let hand = &self.hands[us.index()];
        for kind in Kind::HAND {
            if hand[kind as usize] == 0 {
                continue;
            }
            let dead = self.t.moves[Piece::new(us, kind, false).code() as usize].dead;
            let mut to = empty & !g.dead[us.index()][dead as usize];
            if kind == Kind::Pawn {
                to = self.pawn_drop_squares(g, to);
            }
            sink.drops(&self.t.square_of_dense, kind, to);
        }
    }

    /// The squares of `to` where a pawn may be dropped: not on a file with
    /// an unpromoted pawn of the same side, not giving pawn-drop mate.
    fn pawn_drop_squares<B: Bits>(&self, g: &Geometry<B>, mut to: B) -> B {
        to &= !g.files(self.pawn_files[self.side.index()]);
        // Only a pawn right in front of a royal can give mate.
        let them = self.side.opponent();
        if self.checked_royal(them).is_none() {
            return to;
        }
        let behind = if self.side == Color::Sente { STRIDE as isize } else { -(STRIDE as isize) };
        for &royal in self.royal_squares(them) {
            let sq = royal.offset(behind);
            if self.code(sq) != EMPTY {
                continue;
            }
            let i = self.t.dense(sq);
            if to.has(i) && self.is_pawn_drop_mate(sq) {
                to &= !B::bit(i);
            }
        }
        to
    }

    /// Uchifuzume: would a pawn dropped on `to` checkmate?
    fn is_pawn_drop_mate(&self, to: Square) -> bool {
        let them = self.side.opponent();
        let forward = if self.side == Color::Sente { -1 } else { 1 };
        let front = to.offset(forward * STRIDE as isize);
        if !self.royal_squares(them).contains(&front) || self.checked_royal(them).is_none() {
            return false;
        }
        let mut scratch = self.scratch();
        scratch.make(Move::Drop { kind: Kind::Pawn, to });
        !scratch.has_legal_move()
    }

    /// Lion double moves (first step captures) and one pass per position.
    fn lion_moves<S: Sink>(&self, out: &mut S, from: Square, code: u8, pass_done: &mut bool) {
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

    /// A copy without history, for trying moves.
    pub(crate) fn scratch(&self) -> Position {
        // Every field but the history is Copy.
        Position { history: Vec::new(), history_hashes: Vec::new(), ..*self }
    }

    /// Calls `f` for every piece on the board with its dense square (`row * size + col`),
    /// its piece code and the dense squares it attacks as four 64-bit words: the squares
    /// one move of it reaches, own pieces included (defended), pins, the check rule and
    /// lion double moves ignored. For the encoder's attack planes.
    pub fn for_each_attack_set(&self, mut f: impl FnMut(usize, u8, [u64; 4])) {
        if self.t.geometry.narrow.is_some() {
            self.attack_sets::<u128>(&mut f);
        } else {
            self.attack_sets::<U256>(&mut f);
        }
    }

    fn attack_sets<B: Bits>(&self, f: &mut impl FnMut(usize, u8, [u64; 4])) {
        let g = B::geometry(&self.t.geometry);
        let occupied = B::load(self.occupied[0]) | B::load(self.occupied[1]);
        for w in 0..B::WORDS {
            let mut word = occupied.word(w);
            while word != 0 {
                let from = 64 * w + word.trailing_zeros() as usize;
                word &= word - 1;
                let code = self.dense_board[from & 255];
                let set = Self::reach(g, &self.t.moves[code as usize], from, occupied);
                let mut words = [0; 4];
                for (i, x) in words.iter_mut().enumerate().take(B::WORDS) {
                    *x = set.word(i);
                }
                f(from, code, words);
            }
        }
    }

    /// Runs the generator at the bit width of the board.
    #[inline(always)]
    fn generate_into<S: Sink>(&self, sink: &mut S) {
        if self.t.geometry.narrow.is_some() {
            self.generate::<u128, S>(sink);
        } else {
            self.generate::<U256, S>(sink);
        }
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
        self.generate_into(out);
        if self.bans_repetitions() {
            self.remove_repetitions(out);
        }
    }

    /// Clears `out` and fills it with the legal captures: moves onto an enemy piece and
    /// lion moves whose first step captures (no drops, no pass), in generation order.
    pub(crate) fn generate_captures(&self, out: &mut Vec<Move>) {
        out.clear();
        self.generate_into(&mut Captures { pos: self, out: &mut *out });
        if self.bans_repetitions() {
            self.remove_repetitions(out);
        }
    }

    /// The number of legal moves, counted without listing them (perft's
    /// last ply) unless dai's repetition ban must look at each.
    pub fn count_legal(&self) -> u64 {
        if self.bans_repetitions() {
            let mut out = Vec::new();
            self.generate_legal(&mut out);
            return out.len() as u64;
        }
        self.count_pseudo_legal()
    }

    /// The number of moves before dai's repetition ban.
    fn count_pseudo_legal(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the instructions the function is built for.
            return unsafe { self.count_with_popcnt() };
        }
        self.count_moves()
    }

    /// Counting is mostly population counts: where the CPU has an
    /// instruction for them, use a copy of the generator built with it
    /// (the default x86-64 target has none and counts bits in software).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    unsafe fn count_with_popcnt(&self) -> u64 {
        let mut count = Count::<true>(0);
        self.generate_into(&mut count);
        count.0
    }

    fn count_moves(&self) -> u64 {
        let mut count = Count::<false>(0);
        self.generate_into(&mut count);
        count.0
    }

    fn bans_repetitions(&self) -> bool {
        self.repetition_illegal && !self.history.is_empty()
    }

    /// Dai shogi's ban on moves that recreate an earlier position.
    fn remove_repetitions(&self, out: &mut Vec<Move>) {
        let earlier = self.repeatable_hashes();
        if earlier.is_empty() {
            return;
        }
        let mut scratch = None;
        out.retain(|&mv| !self.recreates(mv, &earlier, &mut scratch));
    }

    /// Is there a move that the repetition ban allows? Without drops two different moves
    /// never lead to the same position that is not a capture or promotion (the only lion
    /// move with an empty first square is the pass, which moves nothing), so each earlier
    /// position bans at most one move: more moves than such positions leave one allowed,
    /// found by counting alone.
    fn has_unbanned_move(&self) -> bool {
        let count = self.count_pseudo_legal();
        let earlier = self.repeatable_hashes();
        if count == 0 || earlier.is_empty() || (!self.t.spec.drops && count > earlier.len() as u64) {
            return count > 0;
        }
        let mut moves = Vec::with_capacity(128);
        self.generate_into(&mut moves);
        let mut scratch = None;
        moves.iter().any(|&mv| !self.recreates(mv, &earlier, &mut scratch))
    }

    /// The hashes (sorted, distinct) of the earlier positions that a move from here could
    /// recreate: those with the opponent to move. Without drops, captures and promotions
    /// cannot be undone (pieces on the board only get fewer, unpromoted ones too), so no
    /// position before the last of them can come back: the scan stops there.
    fn repeatable_hashes(&self) -> Vec<u64> {
        let reversible_only = !self.t.spec.drops;
        let mut out = Vec::new();
        // history[n - 1] was the opponent's move: the position before it had them to move.
        for (back, e) in self.history.iter().rev().enumerate() {
            if reversible_only && (e.mv.is_promotion() || e.undo.captured_anything()) {
                break;
            }
            if back % 2 == 0 {
                out.push(e.hash_before());
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Does `mv` lead to a position whose hash is in `earlier` (sorted)? `scratch` holds
    /// a copy of the position for moves whose hash is not computed directly.
    fn recreates(&self, mv: Move, earlier: &[u64], scratch: &mut Option<Position>) -> bool {
        let h = match self.quiet_hash_after(mv) {
            Some(Some(h)) => h,
            Some(None) => return false,
            None => {
                let pos = scratch.get_or_insert_with(|| self.scratch());
                let undo = pos.make(mv);
                let h = pos.hash;
                pos.unmake(mv, undo);
                h
            }
        };
        earlier.binary_search(&h).is_ok()
    }

    /// Without drops: `Some(None)` for a capture or promotion (it cannot recreate an
    /// earlier position), else `Some(hash after mv)` from the Zobrist keys alone. `None`
    /// where drops exist (the hash needs the hands; see `recreates`).
    fn quiet_hash_after(&self, mv: Move) -> Option<Option<u64>> {
        if self.t.spec.drops {
            return None;
        }
        let (from, to) = match mv {
            Move::Normal { promote: true, .. } => return Some(None),
            Move::Normal { from, to, .. } => (from, to),
            Move::Lion { from, mid, to } => {
                if self.board[mid.index()] != EMPTY {
                    return Some(None);
                }
                (from, to)
            }
            Move::Drop { .. } => return None,
        };
        if to == from {
            return Some(Some(self.hash ^ KEYS.gote_to_move));
        }
        if self.board[to.index()] != EMPTY {
            return Some(None);
        }
        let code = self.board[from.index()] as usize;
        Some(Some(self.hash ^ KEYS.board[from.index()][code] ^ KEYS.board[to.index()][code] ^ KEYS.gote_to_move))
    }

    /// Whether the side to move stands in a check that a piece could block: one checker,
    /// with squares between it and the royal (a drop there is an evasion, so what the
    /// side holds in hand matters).
    pub fn check_is_blockable(&self) -> bool {
        if self.t.geometry.narrow.is_some() {
            self.blockable::<u128>()
        } else {
            self.blockable::<U256>()
        }
    }

    fn blockable<B: Bits>(&self) -> bool {
        let Some(royal) = self.checked_royal(self.side) else { return false };
        let g = B::geometry(&self.t.geometry);
        let own = B::load(self.occupied[self.side.index()]);
        let enemy = B::load(self.occupied[self.side.opponent().index()]);
        let safety = self.safety(g, royal, own | enemy, enemy);
        // One checker: the mask is the checker and the squares between.
        safety.checkers == 1 && safety.check_mask.count() > 1
    }

    /// Is there at least one legal move?
    pub fn has_legal_move(&self) -> bool {
        if self.bans_repetitions() {
            return self.has_unbanned_move();
        }
        let mut any = AnyMove(false);
        self.generate_into(&mut any);
        any.0
    }

    /// Is `mv` legal here?
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(&mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    /// Positions from pseudo-random games (a fixed LCG, so the same every run).
    fn playout_positions(variant: Variant, games: usize, plies: usize) -> Vec<Position> {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut out = Vec::new();
        for _ in 0..games {
            let mut pos = Position::startpos(variant);
            for _ in 0..plies {
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.royal_squares(pos.side_to_move()).is_empty() {
                    break;
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                pos.play(moves[(seed >> 33) as usize % moves.len()]);
                out.push(pos.scratch());
            }
        }
        out
    }

    #[test]
    fn the_occupancy_bits_list_every_piece() {
        for variant in Variant::ALL {
            for pos in playout_positions(variant, 4, 120) {
                let mut by_bits: Vec<_> = pos.pieces_by_dense().collect();
                let dense: Vec<_> = by_bits.iter().map(|(sq, _)| sq.dense(variant.spec().size)).collect();
                assert!(dense.windows(2).all(|w| w[0] < w[1]), "{variant}: not in dense order");
                let mut by_squares: Vec<_> = pos.pieces().collect();
                by_bits.sort_by_key(|(sq, _)| sq.index());
                by_squares.sort_by_key(|(sq, _)| sq.index());
                assert_eq!(by_bits, by_squares, "{variant}");
            }
        }
    }

    #[test]
    fn counting_agrees_with_listing() {
        for variant in Variant::ALL {
            for pos in playout_positions(variant, 6, 120) {
                let listed = pos.legal_moves().len() as u64;
                assert_eq!(pos.count_legal(), listed, "{variant} {}", pos.to_sfen());
                assert_eq!(pos.count_moves(), listed, "portable count, {variant} {}", pos.to_sfen());
            }
        }
    }

    #[test]
    fn captures_are_the_legal_moves_that_capture() {
        let mut captures = Vec::new();
        let mut seen = 0;
        for variant in Variant::ALL {
            for pos in playout_positions(variant, 4, 120) {
                let expected: Vec<Move> = pos
                    .legal_moves()
                    .into_iter()
                    .filter(|&mv| match mv {
                        Move::Normal { to, .. } => pos.piece_at(to).is_some(),
                        Move::Lion { mid, .. } => pos.piece_at(mid).is_some(),
                        Move::Drop { .. } => false,
                    })
                    .collect();
                pos.generate_captures(&mut captures);
                assert_eq!(captures, expected, "{variant} {}", pos.to_sfen());
                seen += captures.len();
            }
        }
        assert!(seen > 100, "the games should have captures: {seen}");
    }

    #[test]
    fn listed_moves_are_distinct() {
        for variant in Variant::ALL {
            for pos in playout_positions(variant, 3, 80) {
                let moves = pos.legal_moves();
                let distinct: std::collections::HashSet<_> = moves.iter().collect();
                assert_eq!(distinct.len(), moves.len(), "{variant} {}", pos.to_sfen());
            }
        }
    }

    #[test]
    fn blockable_checks_are_single_checks_from_afar() {
        let blockable = |sfen: &str| Position::from_sfen(Variant::Shogi, sfen).unwrap().check_is_blockable();
        assert!(blockable("4k4/9/9/9/4R4/9/9/9/4K4 w - 1"), "a rook four squares away");
        assert!(!blockable("4k4/4R4/9/9/9/9/9/9/4K4 w - 1"), "an adjacent rook");
        assert!(!blockable("4k4/9/3N5/9/9/9/9/9/4K4 w - 1"), "a knight");
        assert!(!blockable("4k4/9/9/9/9/9/9/9/4K4 w - 1"), "no check");
        assert!(blockable("4k4/9/9/9/8B/9/9/9/4K4 w - 1"), "a bishop on the diagonal");
        // Double check (rook on the file, bishop on the diagonal): only the king moves.
        assert!(!blockable("4k4/9/9/9/4R3B/9/9/9/4K4 w - 1"));
    }

    #[test]
    fn pins_and_checks_restrict_moves() {
        // The gote bishop on 2f checks the king on 5i along 3g-4h; the
        // silver on 5g could block on 4h but is pinned by the rook on 5e.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4r4/7b1/4S4/9/4K4 b - 1").unwrap();
        let moves = pos.legal_moves();
        assert!(!moves.is_empty());
        for mv in moves {
            assert_eq!(mv.from(), Some(Square::new(5, 9)), "{mv}");
        }
        // Without the check, the pinned silver may only go straight ahead.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4r4/9/4S4/9/4K4 b - 1").unwrap();
        let silver: Vec<_> = pos.legal_moves().into_iter().filter(|m| m.from() == Some(Square::new(5, 7))).collect();
        assert_eq!(silver, vec![Move::Normal { from: Square::new(5, 7), to: Square::new(5, 6), promote: false }]);
    }

    /// The repetition ban as first written: every pseudo-legal move made and its hash
    /// looked up in the whole history.
    fn banned_by_full_scan(pos: &Position) -> Vec<Move> {
        let mut moves = Vec::new();
        pos.generate_into(&mut moves);
        let mut scratch = pos.scratch();
        moves.retain(|&mv| {
            let undo = scratch.make(mv);
            let h = scratch.hash;
            scratch.unmake(mv, undo);
            !pos.history.iter().any(|e| e.hash_before() == h)
        });
        moves
    }

    #[test]
    fn repetition_ban_agrees_with_a_full_history_scan() {
        // Dai games in which a side often takes back its previous move, so that many moves
        // would recreate earlier positions; kings and a few pieces, so shuffles are common.
        let shuffle = "7k7/15/15/4r10/15/15/15/15/15/15/15/10R4/15/15/7K7 b - 1";
        let starts = [Position::startpos(Variant::Dai), Position::from_sfen(Variant::Dai, shuffle).unwrap()];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut banned_moves = 0;
        for mut pos in starts {
            let mut last: [Option<Move>; 2] = [None, None];
            for _ in 0..300 {
                let legal = pos.legal_moves();
                let reference = banned_by_full_scan(&pos);
                assert_eq!(legal, reference, "{}", pos.to_sfen());
                assert_eq!(pos.has_legal_move(), !legal.is_empty());
                let mut pseudo = Vec::new();
                pos.generate_into(&mut pseudo);
                banned_moves += pseudo.len() - legal.len();
                for &mv in &pseudo {
                    if let Some(Some(h)) = pos.quiet_hash_after(mv) {
                        let mut after = pos.scratch();
                        after.make(mv);
                        assert_eq!(h, after.hash, "{mv:?} in {}", pos.to_sfen());
                    }
                }
                if legal.is_empty() || pos.outcome(&Default::default()).is_some() {
                    break;
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let side = pos.side_to_move().index();
                let back = last[side].and_then(|m| match m {
                    Move::Normal { from, to, .. } => Some(Move::Normal { from: to, to: from, promote: false }),
                    _ => None,
                });
                let mv = match back {
                    Some(b) if seed >> 63 == 1 && legal.contains(&b) => b,
                    _ => legal[(seed >> 33) as usize % legal.len()],
                };
                last[side] = Some(mv);
                pos.play(mv);
            }
        }
        assert!(banned_moves > 10, "the games should meet the ban: {banned_moves} moves banned");
    }
}
