//! A node's moves as the solver sees them: the attacker's checks at an OR node, every
//! evasion at an AND node, each with the child position's keys and first numbers.

use rules::{Color, Move, Position};

use super::hand::{pack, unit, where_absent, where_present};
use super::table::{Numbers, Table};

/// One move of a node and what the solver needs of the position after it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Child {
    pub mv: Move,
    /// Board hash of the child (the table's key).
    pub key: u64,
    /// The attacker's hand in the child.
    pub hand: u32,
    /// Numbers before the child is searched.
    pub init: Numbers,
    /// The numbers its node last saw: from the table (or the first ones) when the node
    /// is entered, then from the child's own searches (siblings' entries a transposition changes meanwhile are
    /// seen at the node's next visit; a stale number only delays a decision).
    pub known: Numbers,
    /// The piece the attacker drops with this move, as a hand word (0: none).
    pub spent: u32,
    /// The piece the attacker captures with this move, as a hand word (0: none).
    pub gained: u32,
}

/// The hands at a node, as words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hands {
    pub attacker: u32,
    pub defender: u32,
}

impl Hands {
    pub fn of(pos: &Position, attacker: Color) -> Hands {
        Hands { attacker: pack(pos, attacker), defender: pack(pos, attacker.opponent()) }
    }

    /// Every piece in either hand: the most the attacker could ever hold here.
    pub fn total(&self) -> u32 {
        self.attacker + self.defender
    }

    /// What a proof at an AND node needs beyond its children's proof hands: where the
    /// check can be blocked (`blockable`), the attacker's pieces of the kinds the
    /// defender holds none of (given one, the defender might block with it; kinds it
    /// holds already gave it every drop they can); else nothing.
    pub fn defence(&self, blockable: bool) -> u32 {
        if blockable {
            where_absent(self.attacker, self.defender)
        } else {
            0
        }
    }

    /// Disproof hand of an attacker without a check: more of the kinds it holds gives it
    /// no new drop, a first piece of another kind might.
    pub fn no_check(&self) -> u32 {
        where_present(self.total(), self.attacker)
    }
}

/// What the attacker's move `mv` drops and captures, as hand words.
fn spent_and_gained(pos: &Position, mv: Move) -> (u32, u32) {
    match mv {
        Move::Drop { kind, .. } => (unit(kind), 0),
        _ => (0, pos.piece_at(mv.to()).map_or(0, |p| unit(p.kind()))),
    }
}

fn child(pos: &Position, mv: Move, attacker: Color, init: Numbers, spent: u32, gained: u32) -> Child {
    Child { mv, key: pos.board_hash(), hand: pack(pos, attacker), init, known: init, spent, gained }
}

/// The attacker's checking moves from `pos` (the attacker to move). A child the table
/// does not know starts with its number of evasions as proof number (df-pn+'s
/// initialisation: a king with fewer escapes is nearer to mate), and is proven at once
/// when there is none.
pub(crate) fn checks(pos: &mut Position, table: &Table, ply: u16, moves: &mut Vec<Move>, out: &mut Vec<Child>) {
    out.clear();
    let attacker = pos.side_to_move();
    let Some(&king) = pos.royals(attacker.opponent()).first() else { return };
    pos.generate_legal(moves);
    for &mv in moves.iter() {
        if !mv.may_give_check(king) {
            continue;
        }
        let (spent, gained) = spent_and_gained(pos, mv);
        let undo = pos.make(mv);
        if pos.in_check() {
            let mut c = child(pos, mv, attacker, Numbers::new(1, 1), spent, gained);
            match table.lookup(c.key, c.hand, ply + 1) {
                Some(n) => c.known = n,
                None => {
                    c.init = match pos.count_legal() as u32 {
                        0 => Numbers::proven(Hands::of(pos, attacker).defence(pos.check_is_blockable()), 0),
                        n => Numbers::new(n, 1),
                    };
                    c.known = c.init;
                }
            }
            out.push(c);
        }
        pos.unmake(mv, undo);
    }
}

/// The defender's legal moves from `pos` (the defender to move, in check).
pub(crate) fn evasions(
    pos: &mut Position,
    attacker: Color,
    table: &Table,
    ply: u16,
    moves: &mut Vec<Move>,
    out: &mut Vec<Child>,
) {
    out.clear();
    pos.generate_legal(moves);
    for &mv in moves.iter() {
        let undo = pos.make(mv);
        let mut c = child(pos, mv, attacker, Numbers::new(1, 1), 0, 0);
        if let Some(n) = table.lookup(c.key, c.hand, ply + 1) {
            c.known = n;
        }
        out.push(c);
        pos.unmake(mv, undo);
    }
}

/// The children of `pos` at `ply` for the solver, with what the table knows of them:
/// checks when `attacker` is to move, else evasions.
pub(crate) fn expand(
    pos: &mut Position,
    attacker: Color,
    table: &Table,
    ply: u16,
    moves: &mut Vec<Move>,
    out: &mut Vec<Child>,
) {
    if pos.side_to_move() == attacker {
        checks(pos, table, ply, moves, out);
    } else {
        evasions(pos, attacker, table, ply, moves, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::test_games::random_game_positions;
    use rules::Variant;

    /// The filter lets every checking move through: compare with making every move.
    #[test]
    fn the_check_filter_misses_no_check() {
        let mut checks_seen = 0;
        for mut pos in random_game_positions(Variant::Shogi, 0x2545_F491_4F6C_DD1D, 30, |_| 160) {
            let king = pos.royals(pos.side_to_move().opponent())[0];
            for mv in pos.legal_moves() {
                let undo = pos.make(mv);
                let check = pos.in_check();
                pos.unmake(mv, undo);
                if check {
                    checks_seen += 1;
                    assert!(mv.may_give_check(king), "{mv} checks in {}", pos.to_sfen());
                }
            }
        }
        assert!(checks_seen > 500, "the games should have checks: {checks_seen}");
    }
}
