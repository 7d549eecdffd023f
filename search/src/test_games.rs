//! Positions of random games, for the crate's tests.

use rules::{EndRules, Position, Variant};

/// Every position of `games` random games of `variant` from its start, game `g` up to
/// `plies(g)` plies or its end by the rules, each position before its move; the moves
/// drawn by a linear congruential generator from `seed`.
pub(crate) fn random_game_positions(
    variant: Variant,
    seed: u64,
    games: usize,
    plies: impl Fn(usize) -> usize,
) -> Vec<Position> {
    let mut seed = seed;
    let mut positions = Vec::new();
    for game in 0..games {
        let mut pos = Position::startpos(variant);
        for _ in 0..plies(game) {
            let legal = pos.legal_moves();
            if legal.is_empty() || pos.outcome(&EndRules::default()).is_some() {
                break;
            }
            positions.push(pos.clone());
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos.play(legal[(seed >> 33) as usize % legal.len()]);
        }
    }
    positions
}
