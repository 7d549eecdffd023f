//! Perft speed against the `haitaka` crate (a bitboard shogi move
//! generator) on the start position, both timed in the same run so that the
//! ratio holds on a noisy machine. haitaka is used on the start position
//! only: it misses some pawn-drop mates (see data/README.md).
//!
//! `cargo bench -p koma-rules --bench perft [-- DEPTH...]` (default 5 6).

use std::time::Instant;

fn haitaka_perft(board: &haitaka::Board, depth: u8) -> u64 {
    if depth == 1 {
        let mut n = 0;
        board.generate_moves(|moves| {
            n += moves.into_iter().len() as u64;
            false
        });
        return n;
    }
    let mut n = 0;
    board.generate_moves(|moves| {
        for mv in moves {
            let mut child = board.clone();
            child.play_unchecked(mv);
            n += haitaka_perft(&child, depth - 1);
        }
        false
    });
    n
}

fn time<F: FnMut() -> u64>(mut f: F) -> (u64, f64) {
    let start = Instant::now();
    let n = f();
    (n, start.elapsed().as_secs_f64())
}

fn main() {
    let depths: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let depths = if depths.is_empty() { vec![5, 6] } else { depths };
    println!("{:<6} {:>12} {:>10} {:>10} {:>8}", "depth", "nodes", "koma s", "haitaka s", "ratio");
    for depth in depths {
        let mut pos = rules::Position::startpos(rules::Variant::Shogi);
        let board = haitaka::Board::startpos();
        // Alternate the two so that machine noise hits both alike.
        let (ours, t_ours) = time(|| rules::perft(&mut pos, depth));
        let (theirs, t_theirs) = time(|| haitaka_perft(&board, depth as u8));
        assert_eq!(ours, theirs, "perft {depth} disagrees");
        println!("{depth:<6} {ours:>12} {t_ours:>10.3} {t_theirs:>10.3} {:>8.2}", t_ours / t_theirs);
    }
}
