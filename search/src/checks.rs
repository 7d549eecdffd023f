//! Which moves may give check, told without making them: the filter in front of the mate
//! search at expansion ([`crate::tree::find_immediate_win`]), which otherwise makes every
//! legal move to see whether it checks.
//!
//! A move gives check directly (the piece it leaves on its destination attacks the king)
//! or by discovery (it uncovers a slider of its own side aimed at the king). The filter
//! answers from the pieces' movement tables with the pieces in between ignored, and from
//! the squares whose piece alone stands between the king and such a slider: never false
//! for a move that checks, true for few that do not. For variants whose pieces move
//! along the eight lines or by fixed jumps (standard and sho shogi); lion moves are
//! always let through.
//!
//! Of the checks, most cannot mate: the king steps away. [`Escapes`] notes a few squares
//! it could step to now, and [`CheckFilter::may_mate`] lets through only the moves that
//! could take all of them away, so that the mate search makes few moves at all.

use std::sync::OnceLock;

use rules::{Color, Kind, Move, Piece, Position, Square, Variant};

/// For every piece code and offset (from the piece to a square): whether one move of
/// the piece's reaches the square, pieces in between ignored.
struct Reach {
    size: i32,
    span: usize,
    /// `[code][(dy + size - 1) * span + dx + size - 1]`.
    cells: Vec<bool>,
    /// (file, rank) by [`Square::index`].
    coords: Vec<(i8, i8)>,
}

impl Reach {
    fn of(variant: Variant) -> &'static Reach {
        static TABLES: [OnceLock<Reach>; 3] = [const { OnceLock::new() }; 3];
        let slot = match variant {
            Variant::Shogi => 0,
            Variant::Sho => 1,
            Variant::Dai => 2,
        };
        TABLES[slot].get_or_init(|| Reach::new(variant))
    }

    fn new(variant: Variant) -> Reach {
        let spec = variant.spec();
        let size = spec.size as i32;
        let span = 2 * spec.size - 1;
        let mut cells = vec![false; 128 * span * span];
        for ks in spec.kinds {
            for (promoted, movement) in [(false, Some(ks.movement)), (true, ks.promotion.map(|p| p.0))] {
                let Some(m) = movement else { continue };
                for color in Color::BOTH {
                    // Legs are written from sente's view (dy < 0 forward).
                    let sign = if color == Color::Sente { 1 } else { -1 };
                    let code = Piece::new(color, ks.kind, promoted).code() as usize;
                    for leg in m.legs {
                        let (dx, dy) = (leg.dx as i32 * sign, leg.dy as i32 * sign);
                        for k in 1..=(leg.range as i32).min(size - 1) {
                            let (x, y) = (dx * k, dy * k);
                            if x.abs() >= size || y.abs() >= size {
                                break;
                            }
                            cells[code * span * span + (y + size - 1) as usize * span + (x + size - 1) as usize] = true;
                        }
                    }
                }
            }
        }
        let mut coords = vec![(0, 0); 512];
        for file in 1..=rules::MAX_SIZE as u8 {
            for rank in 1..=rules::MAX_SIZE as u8 {
                coords[Square::new(file, rank).index()] = (file as i8, rank as i8);
            }
        }
        Reach { size, span, cells, coords }
    }

    /// Whether the piece `code` on `from` reaches `to` in one move, pieces in between
    /// ignored.
    #[inline]
    fn reaches(&self, code: u8, from: Square, to: Square) -> bool {
        let ((ff, fr), (tf, tr)) = (self.coords[from.index()], self.coords[to.index()]);
        let (dx, dy) = (tf as i32 - ff as i32, tr as i32 - fr as i32);
        let i = (dy + self.size - 1) as usize * self.span + (dx + self.size - 1) as usize;
        self.cells[code as usize * self.span * self.span + i]
    }
}

/// The eight lines from a square, as (file, rank) steps: a slider's rays, a king's steps.
const LINES: [(i32, i32); 8] = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The moves of the side to move at one position that may give check to the opponent's
/// royal on `king`.
pub(crate) struct CheckFilter {
    reach: &'static Reach,
    king: Square,
    /// Squares whose piece of the side to move alone stands between the king and a
    /// slider of the side to move that reaches the king once it is gone.
    discoverers: [Option<Square>; 8],
}

impl CheckFilter {
    pub(crate) fn new(pos: &Position, king: Square) -> CheckFilter {
        let reach = Reach::of(pos.variant());
        let us = pos.side_to_move();
        let size = pos.spec().size as i32;
        let mut discoverers = [None; 8];
        let at = |f: i32, r: i32| (1..=size).contains(&f) && (1..=size).contains(&r);
        for (slot, (df, dr)) in discoverers.iter_mut().zip(LINES) {
            let (mut f, mut r) = (king.file() as i32, king.rank() as i32);
            let mut blocker = None;
            loop {
                (f, r) = (f + df, r + dr);
                if !at(f, r) {
                    break;
                }
                let sq = Square::new(f as u8, r as u8);
                let Some(p) = pos.piece_at(sq) else { continue };
                match blocker {
                    None if p.color() == us => blocker = Some(sq),
                    Some(b) if p.color() == us && reach.reaches(p.code(), sq, king) => {
                        *slot = Some(b);
                        break;
                    }
                    _ => break,
                }
            }
        }
        CheckFilter { reach, king, discoverers }
    }

    /// False only for a move that does not give check.
    #[inline]
    pub(crate) fn may_give_check(&self, pos: &Position, mv: Move) -> bool {
        match mv {
            Move::Normal { from, to, promote } => {
                let Some(p) = pos.piece_at(from) else { return true };
                let p = if promote { p.promoted() } else { p };
                self.reach.reaches(p.code(), to, self.king) || self.discoverers.contains(&Some(from))
            }
            Move::Drop { kind, to } => {
                self.reach.reaches(Piece::new(pos.side_to_move(), kind, false).code(), to, self.king)
            }
            Move::Lion { .. } => true,
        }
    }
}

/// Up to [`Escapes::MAX`] squares next to the opponent's king that it could step to now:
/// not its own pieces', and not attacked by the side to move with the king itself taken
/// off the board (so that a slider's line through the king counts beyond it). A few are
/// enough to tell most checks from mates, and each costs an attack test.
pub(crate) struct Escapes {
    squares: [Square; Escapes::MAX],
    len: usize,
}

impl Escapes {
    const MAX: usize = 2;
}

impl CheckFilter {
    /// Some of the king's escapes ([`Escapes`]); `None` where the royal is not a king that steps
    /// one square in the eight directions.
    pub(crate) fn escapes(&self, pos: &Position) -> Option<Escapes> {
        let us = pos.side_to_move();
        let royal = pos.piece_at(self.king)?;
        if royal.kind() != Kind::King || royal.is_promoted() {
            return None;
        }
        let size = pos.spec().size as i32;
        let mut escapes = Escapes { squares: [self.king; Escapes::MAX], len: 0 };
        for (df, dr) in LINES {
            let (f, r) = (self.king.file() as i32 + df, self.king.rank() as i32 + dr);
            if !(1..=size).contains(&f) || !(1..=size).contains(&r) {
                continue;
            }
            let sq = Square::new(f as u8, r as u8);
            if pos.piece_at(sq).is_some_and(|p| p.color() != us) || pos.attacked_ignoring(sq, us, self.king) {
                continue;
            }
            escapes.squares[escapes.len] = sq;
            escapes.len += 1;
            if escapes.len == Escapes::MAX {
                break;
            }
        }
        Some(escapes)
    }

    /// False only for a move after which the king can still step to one of `escapes`, so
    /// that it does not mate: every escape must be the move's destination, reached from
    /// there by the piece moved (pieces in between ignored), or on a line with the square
    /// it left (a slider it uncovers). Nothing else of the move adds an attack.
    #[inline]
    pub(crate) fn may_mate(&self, escapes: &Escapes, pos: &Position, mv: Move) -> bool {
        let (code, to, from) = match mv {
            Move::Normal { from, to, promote } => {
                let Some(p) = pos.piece_at(from) else { return true };
                ((if promote { p.promoted() } else { p }).code(), to, Some(from))
            }
            Move::Drop { kind, to } => (Piece::new(pos.side_to_move(), kind, false).code(), to, None),
            Move::Lion { .. } => return true,
        };
        let in_line = |a: Square, b: Square| {
            let (df, dr) = (a.file() as i32 - b.file() as i32, a.rank() as i32 - b.rank() as i32);
            df == 0 || dr == 0 || df.abs() == dr.abs()
        };
        escapes.squares[..escapes.len]
            .iter()
            .all(|&sq| sq == to || self.reach.reaches(code, to, sq) || from.is_some_and(|from| in_line(from, sq)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_games::random_game_positions;

    /// Over positions of random games in standard and sho shogi: every legal move that
    /// gives check passes the filter, and the filter lets few others through.
    #[test]
    fn every_checking_move_passes_the_filter() {
        for variant in [Variant::Shogi, Variant::Sho] {
            let (mut checks, mut passed, mut moves) = (0, 0, 0);
            for mut pos in random_game_positions(variant, 0x9E37_79B9_7F4A_7C15, 60, |game| 40 + game * 3) {
                let them = pos.side_to_move().opponent();
                if let [king] = pos.royals(them)[..] {
                    let filter = CheckFilter::new(&pos, king);
                    for mv in pos.legal_moves() {
                        let undo = pos.make(mv);
                        let check = pos.in_check();
                        pos.unmake(mv, undo);
                        let pass = filter.may_give_check(&pos, mv);
                        assert!(pass || !check, "{variant}: {mv} checks in {}", pos.to_sfen());
                        checks += check as u32;
                        passed += pass as u32;
                        moves += 1;
                    }
                }
            }
            assert!(checks > 100, "{variant}: {checks} checks");
            assert!(passed * 10 < moves, "{variant}: {passed} of {moves} moves passed ({checks} checks)");
        }
    }
}
