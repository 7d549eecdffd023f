//! A validated position: board, hands, side to move, Zobrist hash and the
//! game history that repetition needs. Moves are made and unmade in place.

use crate::bitboard::{Bits, U256};
use crate::moves::Move;
use crate::types::DIRS;
use crate::types::{Color, Kind, Piece, Square, BOARD_LEN, EMPTY, GOTE_BIT, KIND_SLOTS, WALL};
use crate::variant::{has, RoyalRule, Tables, Variant};
use crate::zobrist::{KEYS, MAX_HAND};

/// Squares of a side's royal pieces (king and crown princes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Royals {
    pub sq: [Square; 4],
    pub n: u8,
}

impl Royals {
    const NONE: Royals = Royals { sq: [Square(0); 4], n: 0 };

    pub(crate) fn add(&mut self, s: Square) {
        if (self.n as usize) < self.sq.len() {
            self.sq[self.n as usize] = s;
            self.n += 1;
        }
    }

    fn remove(&mut self, s: Square) {
        if let Some(i) = self.sq[..self.n as usize].iter().position(|&x| x == s) {
            self.n -= 1;
            self.sq[i] = self.sq[self.n as usize];
        }
    }

    fn moved(&mut self, from: Square, to: Square) {
        if let Some(x) = self.sq[..self.n as usize].iter_mut().find(|x| **x == from) {
            *x = to;
        }
    }

    pub fn squares(&self) -> &[Square] {
        &self.sq[..self.n as usize]
    }
}

/// What [`Position::make`] needs to take a move back.
#[derive(Clone, Copy, Debug)]
pub struct Undo {
    captured: u8,
    captured_mid: u8,
    hash: u64,
    royals: [Royals; 2],
    pawn_files: [u16; 2],
}

/// One ply of the game history.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HistoryEntry {
    pub mv: Move,
    pub undo: Undo,
}

impl Undo {
    /// The move captured a piece (on its destination or a lion's first square).
    pub(crate) fn captured_anything(&self) -> bool {
        self.captured != EMPTY || self.captured_mid != EMPTY
    }
}

impl HistoryEntry {
    /// Hash of the position before this move.
    pub fn hash_before(&self) -> u64 {
        self.undo.hash
    }
}

/// A legal position of one of the variants.
#[derive(Clone)]
pub struct Position {
    pub(crate) t: &'static Tables,
    pub(crate) board: [u8; BOARD_LEN],
    /// The board again by dense square (`row * size + col`), so that the
    /// generator reads a piece's code straight from its occupancy bit.
    pub(crate) dense_board: [u8; 256],
    pub(crate) hands: [[u8; KIND_SLOTS]; 2],
    pub(crate) side: Color,
    /// SFEN move number of the position the game started from.
    pub(crate) start_move_number: u32,
    pub(crate) royals: [Royals; 2],
    /// Bit f set: an unpromoted pawn of that colour stands on file f+1.
    pub(crate) pawn_files: [u16; 2],
    pub(crate) hash: u64,
    /// Occupied squares per colour as bits of dense indices
    /// (`row * size + col`): the move generator works on these sets.
    pub(crate) occupied: [U256; 2],
    /// The pieces of `occupied` that move along lines (slides, range-2
    /// legs): the only ones that can attack from beyond the next squares.
    pub(crate) line_pieces: [U256; 2],
    /// A move that recreates an earlier position is illegal (dai shogi's
    /// default, as HaChu plays); otherwise the fourth occurrence ends the
    /// game. Starts as the variant's default; see
    /// [`Position::set_repetition_illegal`].
    pub(crate) repetition_illegal: bool,
    pub(crate) history: Vec<HistoryEntry>,
    /// The hash before each move of `history`, apart: repetition scans read 8 bytes a ply
    /// instead of a whole entry.
    pub(crate) history_hashes: Vec<u64>,
}

impl PartialEq for Position {
    /// Positions are equal when board, hands and side to move are; history
    /// and move number are not compared.
    fn eq(&self, other: &Position) -> bool {
        self.t.spec.variant == other.t.spec.variant
            && self.board == other.board
            && self.hands == other.hands
            && self.side == other.side
    }
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({})", self.to_sfen())
    }
}

impl Position {
    /// An empty board of `variant` with sente to move; for building
    /// positions from a checked [`crate::Setup`].
    pub(crate) fn empty(variant: Variant) -> Position {
        let t = variant.tables();
        let size = t.spec.size;
        let mut board = [WALL; BOARD_LEN];
        for row in 0..size {
            for col in 0..size {
                board[Square::from_col_row(col, row).index()] = EMPTY;
            }
        }
        Position {
            t,
            board,
            dense_board: [EMPTY; 256],
            hands: [[0; KIND_SLOTS]; 2],
            side: Color::Sente,
            start_move_number: 1,
            royals: [Royals::NONE; 2],
            pawn_files: [0; 2],
            hash: 0,
            occupied: [U256::ZERO; 2],
            line_pieces: [U256::ZERO; 2],
            repetition_illegal: t.spec.repetition_illegal,
            history: Vec::new(),
            history_hashes: Vec::new(),
        }
    }

    /// Rebuilds the occupancy bits from the board (after a setup).
    pub(crate) fn recompute_occupancy(&mut self) {
        self.occupied = [U256::ZERO; 2];
        self.line_pieces = [U256::ZERO; 2];
        self.dense_board = [EMPTY; 256];
        for i in 0..self.t.spec.size * self.t.spec.size {
            let code = self.board[self.t.square_of_dense[i].index()];
            self.dense_board[i] = code;
            if code != EMPTY {
                self.toggle_occupied(self.t.square_of_dense[i], code);
            }
        }
    }

    /// Sets the code of a square on both boards.
    #[inline]
    fn set_code(&mut self, sq: Square, code: u8) {
        self.board[sq.index()] = code;
        self.dense_board[self.t.dense(sq) & 255] = code;
    }

    #[inline]
    fn toggle_occupied(&mut self, sq: Square, code: u8) {
        let bit = U256::bit(self.t.dense(sq));
        let c = ((code & GOTE_BIT) >> 6) as usize;
        self.occupied[c] ^= bit;
        if self.t.moves[code as usize].ray {
            self.line_pieces[c] ^= bit;
        }
    }

    /// Chooses the repetition rule: `true` bans any move that recreates an
    /// earlier position of the game, `false` lets the fourth occurrence end
    /// it (draw, or a loss for perpetual check).
    pub fn set_repetition_illegal(&mut self, illegal: bool) {
        self.repetition_illegal = illegal;
    }

    pub fn repetition_illegal(&self) -> bool {
        self.repetition_illegal
    }

    /// The start position of a variant.
    pub fn startpos(variant: Variant) -> Position {
        Position::from_sfen(variant, variant.spec().start_sfen).expect("built-in start positions are valid")
    }

    pub fn variant(&self) -> Variant {
        self.t.spec.variant
    }

    pub fn spec(&self) -> &'static crate::VariantSpec {
        self.t.spec
    }

    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// The piece on a square of the board.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Piece::from_code(self.board[sq.index()])
    }

    /// How many pieces of `kind` `color` holds in hand.
    pub fn hand(&self, color: Color, kind: Kind) -> u8 {
        self.hands[color.index()][kind as usize]
    }

    /// Every occupied square with its piece, rank by rank from rank `a`,
    /// files from the highest.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        let size = self.t.spec.size;
        (0..size).flat_map(move |row| {
            (0..size).rev().filter_map(move |col| {
                let sq = Square::from_col_row(col, row);
                self.piece_at(sq).map(|p| (sq, p))
            })
        })
    }

    /// Plies played since the position this game started from.
    pub fn plies_played(&self) -> usize {
        self.history.len()
    }

    /// Every occupied square with its piece, in dense order (`row * size + col`, see
    /// [`Square::dense`]), read from the occupancy bits: for callers that need no other
    /// order, faster than [`Position::pieces`], which looks at every square.
    pub fn pieces_by_dense(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        let mut occupied = self.occupied[0] | self.occupied[1];
        std::iter::from_fn(move || {
            if occupied.is_empty() {
                return None;
            }
            let sq = self.t.square_of_dense[occupied.pop_lsb()];
            Some((sq, Piece::from_code(self.board[sq.index()]).expect("an occupied square holds a piece")))
        })
    }

    /// The SFEN move number of this position.
    pub fn move_number(&self) -> u32 {
        self.start_move_number + self.history.len() as u32
    }

    /// The moves played so far from the starting position.
    pub fn moves_played(&self) -> impl Iterator<Item = Move> + '_ {
        self.history.iter().map(|h| h.mv)
    }

    /// Zobrist hash of board, hands and side to move.
    pub fn zobrist(&self) -> u64 {
        self.hash
    }

    /// The Zobrist hash of board and side to move, hands left out: positions that differ
    /// only in what the sides hold share it (a mate solver compares hands itself, so that
    /// a proof with fewer pieces in hand also proves the position with more).
    pub fn board_hash(&self) -> u64 {
        let mut h = self.hash;
        for c in 0..2 {
            for k in Kind::HAND {
                // An empty hand's key is 0.
                h ^= KEYS.hand[c][k as usize][self.hands[c][k as usize] as usize];
            }
        }
        h
    }

    /// How many times the current position (board, hands and side to move,
    /// by Zobrist hash) occurred earlier in this game's recorded history:
    /// 0 the first time. Feature planes for networks read it.
    pub fn repetitions(&self) -> usize {
        self.earlier_occurrences().count()
    }

    /// The history indices of the earlier occurrences of the current position (the
    /// position before that move), newest first. The position before the last move had
    /// the other side to move: only every second earlier position can be equal.
    pub(crate) fn earlier_occurrences(&self) -> impl Iterator<Item = usize> + '_ {
        let n = self.history_hashes.len();
        (0..n.saturating_sub(1)).rev().step_by(2).filter(move |&i| self.history_hashes[i] == self.hash)
    }

    /// The hash computed from scratch (tests compare it with the
    /// incremental one).
    pub fn zobrist_from_scratch(&self) -> u64 {
        let mut h = 0;
        for (sq, p) in self.pieces() {
            h ^= KEYS.board[sq.index()][p.code() as usize];
        }
        for c in Color::BOTH {
            for k in 0..KIND_SLOTS {
                h ^= KEYS.hand[c.index()][k][self.hands[c.index()][k] as usize];
            }
        }
        if self.side == Color::Gote {
            h ^= KEYS.gote_to_move;
        }
        h
    }

    pub(crate) fn royal_squares(&self, color: Color) -> &[Square] {
        self.royals[color.index()].squares()
    }

    /// Squares of `color`'s royal pieces (king, crown princes).
    pub fn royals(&self, color: Color) -> Vec<Square> {
        self.royal_squares(color).to_vec()
    }

    /// The royal the check rule protects for `color`, if the rule applies
    /// to that side now.
    #[inline]
    pub fn checked_royal(&self, color: Color) -> Option<Square> {
        let r = &self.royals[color.index()];
        match self.t.spec.royal_rule {
            RoyalRule::Check if r.n >= 1 => Some(r.sq[0]),
            RoyalRule::CheckWhenSingleRoyal if r.n == 1 => Some(r.sq[0]),
            _ => None,
        }
    }

    /// Whether the side to move stands in check (only where the check rule
    /// applies to it).
    pub fn in_check(&self) -> bool {
        match self.checked_royal(self.side) {
            Some(k) => self.attacked(k, self.side.opponent()),
            None => false,
        }
    }

    /// Is `sq` attacked by a piece of colour `by`?
    #[inline]
    pub fn attacked(&self, sq: Square, by: Color) -> bool {
        self.attacked_ignoring(sq, by, Square(0))
    }

    /// Like [`Position::attacked`], with the piece on `ignore` taken off the
    /// board (a king looking at the square it steps to).
    pub fn attacked_ignoring(&self, sq: Square, by: Color, ignore: Square) -> bool {
        let t = self.t;
        let c = by.index();
        for (d, &(dx, dy)) in DIRS.iter().enumerate() {
            let off = crate::variant::mailbox_offset(dx, dy) as isize;
            let mut s = sq.offset(off);
            let code = self.code(s);
            if code != EMPTY && s != ignore {
                if has(t.attack_step[c][d], code) {
                    return true;
                }
                continue;
            }
            let far = t.attack_slide[c][d] | t.attack_range2[c][d];
            if far == 0 {
                continue;
            }
            let mut dist = 2;
            loop {
                s = s.offset(off);
                let code = self.code(s);
                if code == EMPTY || s == ignore {
                    if t.attack_slide[c][d] == 0 {
                        break;
                    }
                    dist += 1;
                    continue;
                }
                if has(t.attack_slide[c][d], code) || (dist == 2 && has(t.attack_range2[c][d], code)) {
                    return true;
                }
                break;
            }
        }
        for &(off, mask) in &t.attack_jump[c] {
            if has(mask, self.code(sq.offset(off as isize))) {
                return true;
            }
        }
        false
    }

    #[inline]
    fn set_hand(&mut self, c: Color, kind: Kind, n: u8) {
        let k = kind as usize;
        let old = self.hands[c.index()][k] as usize;
        debug_assert!((n as usize) < MAX_HAND);
        self.hash ^= KEYS.hand[c.index()][k][old] ^ KEYS.hand[c.index()][k][n as usize];
        self.hands[c.index()][k] = n;
    }

    #[inline]
    fn put(&mut self, sq: Square, code: u8) {
        self.set_code(sq, code);
        self.toggle_occupied(sq, code);
        self.hash ^= KEYS.board[sq.index()][code as usize];
    }

    #[inline]
    fn take(&mut self, sq: Square) -> u8 {
        let code = self.board[sq.index()];
        self.set_code(sq, EMPTY);
        self.hash ^= KEYS.board[sq.index()][code as usize];
        self.toggle_occupied(sq, code);
        code
    }

    /// Removes a captured piece: to the captor's hand where drops exist, out
    /// of the game otherwise.
    #[inline]
    fn capture(&mut self, sq: Square) -> u8 {
        let code = self.take(sq);
        let piece = Piece(code);
        let victim = piece.color();
        if self.t.royal_code[code as usize] {
            self.royals[victim.index()].remove(sq);
        }
        if self.t.spec.drops {
            let kind = piece.kind();
            let n = self.hands[self.side.index()][kind as usize] + 1;
            self.set_hand(self.side, kind, n);
            if kind == Kind::Pawn && !piece.is_promoted() {
                self.pawn_files[victim.index()] &= !(1 << sq.col());
            }
        }
        code
    }

    /// Plays `mv` (assumed legal) without recording it in the history.
    /// Returns what [`Position::unmake`] needs.
    pub fn make(&mut self, mv: Move) -> Undo {
        let undo = Undo {
            captured: EMPTY,
            captured_mid: EMPTY,
            hash: self.hash,
            royals: self.royals,
            pawn_files: self.pawn_files,
        };
        let mut undo = undo;
        let us = self.side;
        match mv {
            Move::Normal { from, to, promote } => {
                if self.board[to.index()] != EMPTY {
                    undo.captured = self.capture(to);
                }
                let code = self.take(from);
                let new = if promote { code | 1 } else { code };
                self.put(to, new);
                if self.t.royal_code[code as usize] {
                    self.royals[us.index()].moved(from, to);
                } else if self.t.royal_code[new as usize] {
                    self.royals[us.index()].add(to);
                }
                if promote && Piece(code).kind() == Kind::Pawn {
                    self.pawn_files[us.index()] &= !(1 << from.col());
                }
            }
            Move::Drop { kind, to } => {
                let n = self.hands[us.index()][kind as usize] - 1;
                self.set_hand(us, kind, n);
                self.put(to, Piece::new(us, kind, false).code());
                if kind == Kind::Pawn {
                    self.pawn_files[us.index()] |= 1 << to.col();
                }
            }
            Move::Lion { from, mid, to } => {
                if self.board[mid.index()] != EMPTY {
                    undo.captured_mid = self.capture(mid);
                }
                if to != from {
                    if self.board[to.index()] != EMPTY {
                        undo.captured = self.capture(to);
                    }
                    let code = self.take(from);
                    self.put(to, code);
                    if self.t.royal_code[code as usize] {
                        self.royals[us.index()].moved(from, to);
                    }
                }
            }
        }
        self.side = us.opponent();
        self.hash ^= KEYS.gote_to_move;
        undo
    }

    /// Takes back `mv`, made by [`Position::make`] with result `undo`. The occupancy bits
    /// are toggled back square by square (an undo without them is a quarter the size:
    /// the tree plays and takes back a move at every ply of every descent).
    pub fn unmake(&mut self, mv: Move, undo: Undo) {
        let us = self.side.opponent();
        self.side = us;
        // Puts back what stood on `sq` before the move (a capture returns from the hand).
        let restore = |pos: &mut Position, sq: Square, code: u8| {
            pos.set_code(sq, code);
            if code != EMPTY {
                pos.toggle_occupied(sq, code);
                if pos.t.spec.drops {
                    let kind = Piece(code).kind() as usize;
                    pos.hands[us.index()][kind] -= 1;
                }
            }
        };
        // Moves the piece on `to` back to `from`, as `code`.
        let step_back = |pos: &mut Position, from: Square, to: Square, code: u8| {
            pos.toggle_occupied(to, pos.board[to.index()]);
            pos.set_code(from, code);
            pos.toggle_occupied(from, code);
        };
        match mv {
            Move::Normal { from, to, promote } => {
                let code = self.board[to.index()];
                step_back(self, from, to, if promote { code & !1 } else { code });
                restore(self, to, undo.captured);
            }
            Move::Drop { kind, to } => {
                self.toggle_occupied(to, self.board[to.index()]);
                self.set_code(to, EMPTY);
                self.hands[us.index()][kind as usize] += 1;
            }
            Move::Lion { from, mid, to } => {
                if to != from {
                    step_back(self, from, to, self.board[to.index()]);
                    restore(self, to, undo.captured);
                }
                restore(self, mid, undo.captured_mid);
            }
        }
        self.hash = undo.hash;
        self.royals = undo.royals;
        self.pawn_files = undo.pawn_files;
    }

    /// Plays a legal move and records it in the game history (for
    /// repetition and [`Position::undo`]).
    pub fn play(&mut self, mv: Move) {
        let undo = self.make(mv);
        self.history_hashes.push(undo.hash);
        self.history.push(HistoryEntry { mv, undo });
    }

    /// Takes back the last move played with [`Position::play`].
    pub fn undo(&mut self) -> Option<Move> {
        let entry = self.history.pop()?;
        self.history_hashes.pop();
        self.unmake(entry.mv, entry.undo);
        Some(entry.mv)
    }

    /// The piece code at a mailbox cell (walls included).
    #[inline]
    pub(crate) fn code(&self, sq: Square) -> u8 {
        // The mask proves the index in range, so no bounds check is emitted.
        self.board[sq.index() & (BOARD_LEN - 1)]
    }

    #[inline]
    pub(crate) fn side_bit(&self) -> u8 {
        (self.side as u8) << 6
    }

    /// Is `code` a piece of the side to move's opponent?
    #[inline]
    pub(crate) fn is_enemy(&self, code: u8) -> bool {
        code != EMPTY && code != WALL && (code & GOTE_BIT) != self.side_bit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `unmake` toggles the occupancy bits back instead of restoring a copy: after every
    /// legal move of random games in the three variants (captures, promotions, drops, lion
    /// moves), the bits after `make` are those rebuilt from the board, and after `unmake`
    /// the position's every field is as before.
    #[test]
    fn make_and_unmake_keep_the_occupancy_bits() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for variant in [Variant::Shogi, Variant::Sho, Variant::Dai] {
            for game in 0..6 {
                let mut pos = Position::startpos(variant);
                for _ in 0..(80 + game * 30) {
                    let legal = pos.legal_moves();
                    if legal.is_empty() {
                        break;
                    }
                    for &mv in &legal {
                        let before = (pos.board, pos.dense_board, pos.occupied, pos.line_pieces, pos.hands, pos.hash);
                        let undo = pos.make(mv);
                        let mut rebuilt = pos.clone();
                        rebuilt.recompute_occupancy();
                        assert_eq!((pos.occupied, pos.line_pieces), (rebuilt.occupied, rebuilt.line_pieces), "{mv}");
                        pos.unmake(mv, undo);
                        let after = (pos.board, pos.dense_board, pos.occupied, pos.line_pieces, pos.hands, pos.hash);
                        assert!(before == after, "{variant}: {mv} in {}", pos.to_sfen());
                    }
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    pos.play(legal[(seed >> 33) as usize % legal.len()]);
                }
            }
        }
    }

    #[test]
    fn board_hash_leaves_the_hands_out() {
        let with =
            |hands: &str| Position::from_sfen(Variant::Shogi, &format!("4k4/9/9/9/9/9/9/9/4K4 b {hands} 1")).unwrap();
        let (bare, some, more) = (with("-"), with("G2Pr"), with("2G2Pr"));
        assert_eq!(bare.board_hash(), bare.zobrist());
        assert_eq!(some.board_hash(), bare.board_hash());
        assert_eq!(more.board_hash(), bare.board_hash());
        assert_ne!(some.zobrist(), more.zobrist());
        // Board and side to move still count.
        let moved = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/9/9/9/9/3K5 b G2Pr 1").unwrap();
        let gote = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/9/9/9/9/4K4 w G2Pr 1").unwrap();
        assert_ne!(moved.board_hash(), some.board_hash());
        assert_ne!(gote.board_hash(), some.board_hash());
        // After moves the incremental hash agrees.
        let mut pos = Position::startpos(Variant::Shogi);
        for m in ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"] {
            pos.play_usi(m).unwrap();
        }
        let mut hands_emptied = pos.clone();
        hands_emptied.hands = [[0; KIND_SLOTS]; 2];
        assert_eq!(pos.board_hash(), hands_emptied.zobrist_from_scratch());
    }
}
