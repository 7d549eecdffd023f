//! The baseline players: pure rules code, no network. Training evaluation and the
//! arena measure networks against them: a uniformly random mover and a 1-ply
//! material-greedy player ([`Baseline`], spec words `random` and `greedy`).
//!
//! - random: a uniformly random legal move.
//! - greedy: plays a move that wins at once if there is one (mate, royal capture, bare
//!   king); otherwise the move that leaves the best material balance (board and hand,
//!   the mover's view) one ply deep, ties broken at random. It does not look at the
//!   reply, so it grabs defended pieces.
//!
//! Material values come from the variant's movement data ([`rules::piece_value`]), so
//! the same code serves standard, sho and dai shogi. Both claim a win by declaration
//! when the rules allow it.

use rules::{material_balance, EndRules, Move, Position};
use search::Rng;

use crate::player::{Action, Fault, GoRequest, Player};

/// Which baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaselineKind {
    Random,
    Greedy,
}

/// A player that picks its moves by rules alone.
pub struct Baseline {
    kind: BaselineKind,
    /// End rules used to recognise an immediate win (max length is irrelevant here).
    end_rules: EndRules,
    rng: Rng,
}

impl Baseline {
    pub fn new(kind: BaselineKind, seed: u64) -> Baseline {
        Baseline { kind, end_rules: EndRules::default(), rng: Rng::new(seed) }
    }

    pub fn random(seed: u64) -> Baseline {
        Baseline::new(BaselineKind::Random, seed)
    }

    pub fn greedy(seed: u64) -> Baseline {
        Baseline::new(BaselineKind::Greedy, seed)
    }

    /// A short name for reports (`random`, `greedy`).
    pub fn name(&self) -> &'static str {
        match self.kind {
            BaselineKind::Random => "random",
            BaselineKind::Greedy => "greedy",
        }
    }

    /// A legal move of `pos`, or `None` when there is none.
    pub fn choose(&mut self, pos: &Position) -> Option<Move> {
        match self.kind {
            BaselineKind::Random => random_move(pos, &mut self.rng),
            BaselineKind::Greedy => greedy_move(pos, &self.end_rules, &mut self.rng),
        }
    }
}

impl Player for Baseline {
    fn new_game(&mut self, _start: &Position) -> Result<(), Fault> {
        Ok(())
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        if req.pos.can_declare() {
            return Ok(Action::Declare);
        }
        match self.choose(req.pos) {
            Some(mv) => Ok(Action::Move(mv)),
            None => Ok(Action::Resign),
        }
    }
}

/// A uniformly random legal move.
fn random_move(pos: &Position, rng: &mut Rng) -> Option<Move> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        None
    } else {
        Some(moves[rng.below(moves.len())])
    }
}

/// 1-ply material greedy with a random tie-break (see the module docs).
fn greedy_move(pos: &Position, end_rules: &EndRules, rng: &mut Rng) -> Option<Move> {
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
        let score = match work.outcome(end_rules) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    #[test]
    fn greedy_takes_free_material_and_mates() {
        // Sente rook can take an undefended gote rook.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4r4/9/9/9/4R3K b - 1").unwrap();
        let mut g = Baseline::greedy(1);
        assert_eq!(g.name(), "greedy");
        let mv = g.choose(&pos).unwrap();
        assert_eq!(mv.to_usi(), "5i5e");
        // Mate in one with a gold drop.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/8K b G 1").unwrap();
        let mv = g.choose(&pos).unwrap();
        assert_eq!(mv.to_usi(), "G*5b");
    }

    #[test]
    fn random_and_greedy_move_in_every_variant() {
        let pos = Position::startpos(Variant::Shogi);
        let mv = Baseline::random(7).choose(&pos).unwrap();
        assert!(pos.legal_moves().contains(&mv));
        for v in [Variant::Sho, Variant::Dai] {
            let p = Position::startpos(v);
            assert!(Baseline::greedy(7).choose(&p).is_some());
            assert!(Baseline::random(7).choose(&p).is_some());
        }
    }
}
