//! Perft speed against the `haitaka` crate (a bitboard shogi move
//! generator), both timed in the same run so that the ratio holds on a noisy
//! machine: the start position to depths 5 and 6 and the "matsuri" position
//! (data/perft/perft-shogi.txt) to depth 4. Both perfts count the legal
//! moves at the last ply without making them (bulk counting). haitaka misses
//! some pawn-drop mates (see data/README.md), so each count is also checked
//! against the reference file.
//!
//! Then koma alone on sho and dai shogi start positions, as nodes per second.
//!
//! Times are the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so a busy
//! machine slows the runs less than it stretches wall-clock time.
//!
//! `cargo bench -p koma-rules --bench perft [-- quick]` (`quick`: perft 5
//! only for the start position, smaller sho/dai depths).

use rules::{Position, Variant};
use std::time::Instant;

const MATSURI: &str = "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1";

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

/// Seconds this thread has run on a CPU, so that time spent waiting while
/// other processes run is not counted; `None` where the clock is missing.
fn thread_cpu_seconds() -> Option<f64> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (rc == 0).then_some(now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9)
}

/// Runs `f`, returning its result and its thread CPU time (wall-clock
/// time where that is unavailable).
fn time<F: FnMut() -> u64>(mut f: F) -> (u64, f64) {
    let (wall, cpu) = (Instant::now(), thread_cpu_seconds());
    let n = f();
    match (cpu, thread_cpu_seconds()) {
        (Some(a), Some(b)) => (n, b - a),
        _ => (n, wall.elapsed().as_secs_f64()),
    }
}

/// One shogi case timed for both generators; the expected count is the
/// reference data's.
fn compare(name: &str, sfen: &str, depth: u32, expected: u64) {
    let mut pos = Position::from_sfen(Variant::Shogi, sfen).expect("valid sfen");
    let board = haitaka::Board::from_sfen(sfen).expect("valid sfen");
    let (ours, t_ours) = time(|| rules::perft(&mut pos, depth));
    let (theirs, t_theirs) = time(|| haitaka_perft(&board, depth as u8));
    assert_eq!(ours, expected, "{name} perft {depth}: koma disagrees with the reference");
    assert_eq!(theirs, expected, "{name} perft {depth}: haitaka disagrees with the reference");
    println!("{name:<16} {depth:>5} {ours:>12} {t_ours:>10.3} {t_theirs:>10.3} {:>8.2}", t_ours / t_theirs);
}

fn koma_alone(variant: Variant, depth: u32) {
    let mut pos = Position::startpos(variant);
    let (nodes, secs) = time(|| rules::perft(&mut pos, depth));
    println!("{:<16} {depth:>5} {nodes:>12} {secs:>10.3} {:>12.0}", variant.name(), nodes as f64 / secs);
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let start = Variant::Shogi.spec().start_sfen;
    println!("{:<16} {:>5} {:>12} {:>10} {:>10} {:>8}", "position", "depth", "nodes", "koma s", "haitaka s", "ratio");
    compare("startpos", start, 5, 19_861_490);
    if !quick {
        compare("startpos", start, 6, 547_581_517);
    }
    compare("matsuri", MATSURI, 4, 516_925_165);
    println!();
    println!("{:<16} {:>5} {:>12} {:>10} {:>12}", "koma alone", "depth", "nodes", "s", "nodes/s");
    koma_alone(Variant::Sho, if quick { 4 } else { 5 });
    koma_alone(Variant::Dai, if quick { 3 } else { 4 });
}
