//! Baseline players: pure rules code, no network. Training evaluation measures the
//! network against them (and the arena will later): a uniformly random mover and a
//! 1-ply material-greedy player.
//!
//! - [`RandomMover`]: a uniformly random legal move.
//! - [`GreedyMover`]: plays a move that wins at once if there is one (mate, royal
//!   capture, bare king); otherwise the move that leaves the best material balance
//!   (board and hand, the mover's view) one ply deep, ties broken at random. It does
//!   not look at the reply, so it grabs defended pieces.
//!
//! Material values come from the variant's movement data ([`rules::piece_value`]), so
//! the same code serves standard, sho and dai shogi.

use rules::{material_balance, EndRules, Move, Position};

use search::Rng;

/// A player that picks a move in a position by rules alone.
pub trait BaselinePlayer: Send {
    /// A short name for reports (`random`, `greedy`).
    fn name(&self) -> &'static str;
    /// A legal move of `pos`, or `None` when there is none.
    fn choose(&mut self, pos: &Position, rng: &mut Rng) -> Option<Move>;
}

/// Uniformly random legal moves.
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomMover;

impl BaselinePlayer for RandomMover {
    fn name(&self) -> &'static str {
        "random"
    }

    fn choose(&mut self, pos: &Position, rng: &mut Rng) -> Option<Move> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            None
        } else {
            Some(moves[rng.below(moves.len())])
        }
    }
}

/// 1-ply material greedy with a random tie-break (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct GreedyMover {
    /// End rules used to recognise an immediate win (max length is irrelevant here).
    pub end_rules: EndRules,
}

impl BaselinePlayer for GreedyMover {
    fn name(&self) -> &'static str {
        "greedy"
    }

    fn choose(&mut self, pos: &Position, rng: &mut Rng) -> Option<Move> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return None;
        }
        let me = pos.side_to_move();
        let mut work = pos.clone();
        let mut best = f64::NEG_INFINITY;
        let mut ties: Vec<Move> = Vec::new();
        for &mv in &moves {
            work.play(mv);
            let score = match work.outcome(&self.end_rules) {
                Some(o) if o.winner == Some(me) => f64::INFINITY,
                Some(o) if o.winner == Some(me.opponent()) => f64::NEG_INFINITY / 2.0,
                _ => material_balance(&work, me),
            };
            work.undo();
            if score > best + 1e-9 {
                best = score;
                ties.clear();
                ties.push(mv);
            } else if (score - best).abs() <= 1e-9 || (score.is_infinite() && score == best) {
                ties.push(mv);
            }
        }
        if ties.is_empty() {
            ties = moves;
        }
        Some(ties[rng.below(ties.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    #[test]
    fn greedy_takes_free_material_and_mates() {
        // Sente rook can take an undefended gote rook.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4r4/9/9/9/4R3K b - 1").unwrap();
        let mut g = GreedyMover::default();
        let mut rng = Rng::new(1);
        let mv = g.choose(&pos, &mut rng).unwrap();
        assert_eq!(mv.to_usi(), "5i5e");
        // Mate in one with a gold drop.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/8K b G 1").unwrap();
        let mv = g.choose(&pos, &mut rng).unwrap();
        assert_eq!(mv.to_usi(), "G*5b");
    }

    #[test]
    fn random_and_greedy_move_in_every_variant() {
        let pos = Position::startpos(Variant::Shogi);
        let mut rng = Rng::new(7);
        let mv = RandomMover.choose(&pos, &mut rng).unwrap();
        assert!(pos.legal_moves().contains(&mv));
        for v in [Variant::Sho, Variant::Dai] {
            let p = Position::startpos(v);
            assert!(GreedyMover::default().choose(&p, &mut rng).is_some());
        }
    }
}
