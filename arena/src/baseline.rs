//! The baseline players: pure rules code, no network. Training evaluation and the
//! arena measure networks against them ([`Baseline`]; spec words `random`, `greedy` and
//! `material:DEPTH[,random=P]`).
//!
//! - random: a uniformly random legal move.
//! - greedy (= `material:1`): plays a move that wins at once if there is one (mate, royal
//!   capture, bare king); otherwise the move that leaves the best material balance
//!   (board and hand, the mover's view) one ply deep, ties broken at random. It does not
//!   look at the reply, so it grabs defended pieces.
//! - `material:D`: the same balance searched D plies deep (negamax with alpha-beta,
//!   captures first), ties at the root broken at random: at depth 2 it sees the reply, so
//!   it no longer grabs defended pieces or leaves its own hanging. These fill the ladder
//!   between the greedy player and the first engine rungs.
//! - `,random=P` (any material player): with probability P a uniformly random legal move
//!   instead, which fills the ladder between random and greedy.
//!
//! Material values come from the variant's movement data ([`rules::piece_value`]), so
//! the same code serves standard, sho and dai shogi. All claim a win by declaration
//! when the rules allow it.

use rules::{material_balance, EndRules, Move, Position, QuiescenceLimits};
use search::tactics::{material_outlook, TacticsLimits};
use search::Rng;

use crate::player::{Action, Fault, GoRequest, Player};

/// Which baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaselineKind {
    Random,
    /// A material search `depth` plies deep (1 = the greedy player); with probability
    /// `random_share` a random move instead.
    Material {
        depth: u32,
        random_share: f64,
    },
}

/// The deepest material search a spec may ask for: depth 4 already takes seconds a move
/// in dai shogi.
pub const MAX_MATERIAL_DEPTH: u32 = 4;

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
        Baseline::new(BaselineKind::Material { depth: 1, random_share: 0.0 }, seed)
    }

    /// A short name for reports (`random`, `greedy`, `material:2,random=0.5`).
    pub fn name(&self) -> String {
        match self.kind {
            BaselineKind::Random => "random".to_string(),
            BaselineKind::Material { depth: 1, random_share } if random_share == 0.0 => "greedy".to_string(),
            BaselineKind::Material { depth, random_share } if random_share == 0.0 => format!("material:{depth}"),
            BaselineKind::Material { depth, random_share } => format!("material:{depth},random={random_share}"),
        }
    }

    /// A legal move of `pos`, or `None` when there is none.
    pub fn choose(&mut self, pos: &Position) -> Option<Move> {
        match self.kind {
            BaselineKind::Random => random_move(pos, &mut self.rng),
            BaselineKind::Material { random_share, .. } if random_share > 0.0 && self.rng.bernoulli(random_share) => {
                random_move(pos, &mut self.rng)
            }
            BaselineKind::Material { depth, .. } => material_move(pos, depth, &self.end_rules, &mut self.rng),
        }
    }
}

impl Player for Baseline {
    fn new_game(&mut self, _start: &Position) -> Result<(), Fault> {
        Ok(())
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        self.end_rules = req.end_rules;
        if req.pos.can_declare_win(req.end_rules.impasse) {
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

/// Root scores this close are ties.
const TIE: f64 = 1e-9;

/// The material search's move, ties at the root broken at random (see the module docs).
fn material_move(pos: &Position, depth: u32, end_rules: &EndRules, rng: &mut Rng) -> Option<Move> {
    let mut work = pos.clone();
    let moves = ordered_moves(&mut work);
    if moves.is_empty() {
        return None;
    }
    let mut best = f64::NEG_INFINITY;
    let mut ties: Vec<Move> = Vec::new();
    for &mv in &moves {
        work.play(mv);
        // A window just below the best so far: worse moves fail low, ties and better
        // moves come back exact (the upper bound is open).
        let score = -negamax(&mut work, depth - 1, f64::NEG_INFINITY, -(best - TIE), end_rules);
        work.undo();
        if score > best + TIE {
            best = score;
            ties.clear();
            ties.push(mv);
        } else if score >= best - TIE {
            ties.push(mv);
        }
    }
    Some(ties[rng.below(ties.len())])
}

/// The leaves of the material players: the static balance (no capture search), no
/// node limit, no clock.
const STATIC_LEAVES: TacticsLimits = TacticsLimits {
    max_nodes: u64::MAX,
    quiescence: QuiescenceLimits { max_depth: 0, max_nodes: 1, check_plies: 0 },
    deadline: None,
};

/// The side to move's material outlook `depth` plies deep, in (alpha, beta): the search's
/// material alpha-beta ([`material_outlook`]) with static leaves.
fn negamax(pos: &mut Position, depth: u32, alpha: f64, beta: f64, end_rules: &EndRules) -> f64 {
    material_outlook(pos, depth, alpha, beta, end_rules, &STATIC_LEAVES, &mut 0)
}

/// Legal moves, the ones that gain the most material at once first (alpha-beta prunes
/// more when good moves come first).
fn ordered_moves(pos: &mut Position) -> Vec<Move> {
    let me = pos.side_to_move();
    let before = material_balance(pos, me);
    let mut scored: Vec<(f64, Move)> = pos
        .legal_moves()
        .into_iter()
        .map(|mv| {
            let gain = if pos.piece_at(mv.to()).is_some() {
                pos.play(mv);
                let g = material_balance(pos, me) - before;
                pos.undo();
                g
            } else {
                0.0
            };
            (gain, mv)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, mv)| mv).collect()
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
        assert_eq!(Baseline::new(BaselineKind::Material { depth: 2, random_share: 0.0 }, 1).name(), "material:2");
        let mv = g.choose(&pos).unwrap();
        assert_eq!(mv.to_usi(), "5i5e");
        // Mate in one with a gold drop.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/8K b G 1").unwrap();
        let mv = g.choose(&pos).unwrap();
        assert_eq!(mv.to_usi(), "G*5b");
    }

    fn material(depth: u32) -> Baseline {
        Baseline::new(BaselineKind::Material { depth, random_share: 0.0 }, 3)
    }

    #[test]
    fn two_plies_see_the_recapture_that_greedy_misses() {
        // The gote silver on 5e is defended by the gold on 5d: rook takes silver, gold
        // takes rook loses material; greedy takes anyway, material:2 never does.
        let defended = Position::from_sfen(Variant::Shogi, "4k4/9/9/4g4/4s4/9/9/9/4R3K b - 1").unwrap();
        for seed in 0..5 {
            assert_eq!(Baseline::greedy(seed).choose(&defended).unwrap().to_usi(), "5i5e");
            assert_ne!(material(2).choose(&defended).unwrap().to_usi(), "5i5e");
        }
        // Undefended, it still takes.
        let free = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4s4/9/9/9/4R3K b - 1").unwrap();
        assert_eq!(material(2).choose(&free).unwrap().to_usi(), "5i5e");
        // And it still mates in one.
        let mate = Position::from_sfen(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/8K b G 1").unwrap();
        assert_eq!(material(2).choose(&mate).unwrap().to_usi(), "G*5b");
        assert_eq!(material(3).choose(&mate).unwrap().to_usi(), "G*5b");
    }

    #[test]
    fn two_plies_move_a_hanging_piece() {
        // The sente rook on 5e is attacked by the gote pawn on 5d, which the gold on 4c
        // guards: material:2 neither leaves the rook there nor takes the pawn.
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/3g5/4p4/4R4/9/9/9/8K b - 1").unwrap();
        for seed in 0..5 {
            let mv = Baseline::new(BaselineKind::Material { depth: 2, random_share: 0.0 }, seed).choose(&pos).unwrap();
            let mut after = pos.clone();
            after.play(mv);
            // After any gote reply, sente keeps its rook (board or hand).
            let keeps = after.legal_moves().into_iter().all(|reply| {
                after.play(reply);
                let lost = after.hand(rules::Color::Gote, rules::Kind::Rook) > 0;
                after.undo();
                !lost
            });
            assert!(keeps, "material:2 played {} and loses its rook", mv.to_usi());
        }
    }

    #[test]
    fn a_random_share_mixes_in_random_moves() {
        // Greedy always takes the free silver; half random takes it about half the time.
        let free = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4s4/9/9/9/4R3K b - 1").unwrap();
        let mut half = Baseline::new(BaselineKind::Material { depth: 1, random_share: 0.5 }, 9);
        assert_eq!(half.name(), "material:1,random=0.5");
        let takes = (0..200).filter(|_| half.choose(&free).unwrap().to_usi() == "5i5e").count();
        assert!((60..=140).contains(&takes), "took the silver {takes} times of 200");
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
            let mv = material(2).choose(&p).unwrap();
            assert!(p.legal_moves().contains(&mv));
        }
    }
}
