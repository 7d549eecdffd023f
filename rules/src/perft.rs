//! Perft: the number of leaf nodes of the legal move tree, the standard
//! check of a move generator.

use crate::moves::Move;
use crate::position::Position;

/// Counts the leaves `depth` plies below `pos`.
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    let mut buffers: Vec<Vec<Move>> = (0..depth.max(1)).map(|_| Vec::with_capacity(256)).collect();
    perft_with(pos, depth, &mut buffers)
}

fn perft_with(pos: &mut Position, depth: u32, buffers: &mut [Vec<Move>]) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        // Bulk counting: the last ply's moves are counted, not made.
        return pos.count_legal();
    }
    let (moves, rest) = buffers.split_first_mut().expect("one buffer per ply");
    pos.generate_legal(moves);
    let mut nodes = 0;
    for &mv in moves.iter() {
        let undo = pos.make(mv);
        nodes += perft_with(pos, depth - 1, rest);
        pos.unmake(mv, undo);
    }
    nodes
}

/// Perft split by root move, in generation order.
pub fn divide(pos: &mut Position, depth: u32) -> Vec<(Move, u64)> {
    let moves = pos.legal_moves();
    moves
        .into_iter()
        .map(|mv| {
            let undo = pos.make(mv);
            let n = if depth <= 1 { 1 } else { perft(pos, depth - 1) };
            pos.unmake(mv, undo);
            (mv, n)
        })
        .collect()
}
