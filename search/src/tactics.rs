//! The root's material check (`SearchConfig::root_tactics_plies`): a small alpha-beta
//! over the rules' material, run on the moves the search liked best once it has chosen,
//! so that a move that loses material within a few plies (a piece left to a sweep of
//! captures, a fork the young policy never looked at) gives way to a move the search
//! also liked that does not. Knowledge from the rules, like the leaf material mix: a
//! network trained for minutes misses such lines at a few hundred simulations.

use std::time::Instant;

use rules::{quiescent_balance, EndRules, Move, Position, QuiescenceLimits, WIN_SCORE};

/// What one material search may spend and how it reads its leaves.
#[derive(Clone, Copy, Debug)]
pub struct TacticsLimits {
    /// Positions searched full width at most; past it every position is a leaf.
    pub max_nodes: u64,
    /// The captures (and checks) searched at the leaves; `max_depth` 0 reads the static
    /// balance.
    pub quiescence: QuiescenceLimits,
    /// When to give up (a clock's hard limit): past it every position is a leaf and
    /// [`material_outlook`]'s answer is not to be trusted (see [`timed_out`]).
    pub deadline: Option<Instant>,
}

/// Whether `limits`' deadline has passed.
pub fn timed_out(limits: &TacticsLimits) -> bool {
    limits.deadline.is_some_and(|d| Instant::now() >= d)
}

/// The material outlook of the side to move at `pos`: `plies` plies of every legal move,
/// then the captures of [`quiescent_balance`], in [`rules::piece_value`] units (a game
/// won or lost is [`WIN_SCORE`], sooner wins scoring more), within (`alpha`, `beta`).
/// `nodes` counts the positions searched full width.
pub fn material_outlook(
    pos: &mut Position,
    plies: u32,
    mut alpha: f64,
    beta: f64,
    end_rules: &EndRules,
    limits: &TacticsLimits,
    nodes: &mut u64,
) -> f64 {
    let me = pos.side_to_move();
    if let Some(o) = pos.outcome(end_rules) {
        return match o.winner {
            Some(w) if w == me => WIN_SCORE + plies as f64,
            Some(_) => -(WIN_SCORE + plies as f64),
            None => 0.0,
        };
    }
    if plies == 0 || *nodes >= limits.max_nodes || (*nodes % 64 == 63 && timed_out(limits)) {
        return quiescent_balance(pos, me, limits.quiescence);
    }
    *nodes += 1;
    let mut best = f64::NEG_INFINITY;
    for mv in captures_first(pos) {
        pos.play(mv);
        let score = -material_outlook(pos, plies - 1, -beta, -alpha, end_rules, limits, nodes);
        pos.undo();
        best = best.max(score);
        alpha = alpha.max(score);
        if alpha >= beta {
            break;
        }
    }
    best
}

/// The legal moves, captures first (most valuable victim first): alpha-beta cuts more
/// when the moves that change the material come first.
fn captures_first(pos: &Position) -> Vec<Move> {
    let mut moves = pos.legal_moves();
    let victim = |mv: &Move| match pos.piece_at(mv.to()) {
        Some(p) => rules::piece_value(pos, p.kind(), p.is_promoted()),
        None => 0.0,
    };
    moves.sort_by(|a, b| victim(b).total_cmp(&victim(a)));
    moves
}

/// The candidate to play among `candidates` (root moves, most visited first, each with
/// its material outlook after it, the mover's view): the most visited whose outlook is
/// within `margin` of the best outlook among them.
pub fn choose(candidates: &[(Move, f64)], margin: f64) -> Option<Move> {
    let best = candidates.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
    candidates.iter().find(|c| c.1 >= best - margin).map(|c| c.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn outlook(sfen: &str, plies: u32) -> f64 {
        let mut pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        let limits = TacticsLimits { max_nodes: 100_000, quiescence: QuiescenceLimits::default(), deadline: None };
        material_outlook(&mut pos, plies, f64::NEG_INFINITY, f64::INFINITY, &EndRules::default(), &limits, &mut 0)
    }

    /// Gote's horse on 5g takes the pawn on 5f and from there attacks the knight on 8i and
    /// the silver on 2i: sente saves one, the horse takes the other. The captures alone
    /// see the pawn only (sente stands pat after it); two plies of every move see the rest.
    #[test]
    fn a_capture_that_forks_is_seen_with_two_plies() {
        let sfen = "4k4/9/9/9/9/4P4/4+b4/9/1N2K2S1 w - 1";
        let one = outlook(sfen, 0);
        let three = outlook(sfen, 2);
        assert!(three > one, "two plies {three}, captures only {one}");
    }

    #[test]
    fn the_choice_keeps_the_most_visited_move_within_the_margin() {
        let pos = Position::startpos(Variant::Shogi);
        let moves = pos.legal_moves();
        let (a, b, c) = (moves[0], moves[1], moves[2]);
        assert_eq!(choose(&[(a, -1.0), (b, 0.0), (c, 0.5)], 2.0), Some(a));
        assert_eq!(choose(&[(a, -8.0), (b, 0.0), (c, 0.5)], 2.0), Some(b));
        assert_eq!(choose(&[], 2.0), None);
    }
}
