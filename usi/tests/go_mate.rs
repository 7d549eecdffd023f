//! `go mate`, USI's tsume command, driven over stdin/stdout like a GUI: it needs no
//! network, answers `checkmate <moves>` (a legal mating line, every attacker's move a
//! check), `checkmate nomate`, `checkmate timeout` (time out or `stop`) and, for other
//! variants, `checkmate notimplemented`.

mod common;

use std::time::{Duration, Instant};

use common::*;
use rules::{Position, Variant};

/// A mate in 3 of `data/fixtures/mates-shogi.tsv` (cshogi and a brute force agree).
const MATE_IN_3: &str = "1n1p1B1nb/s1s3sk1/lg2+Nppg1/L2g4L/1P1P2PR1/1+s2P4/2P1K4/PpG2P2P/1N5R1 b L6P 147";
/// Gote's king boxed in on 1a: the only mate would be a pawn drop (uchifuzume).
const PAWN_DROP_ONLY: &str = "7nk/7p1/7G1/9/9/9/9/9/4K4 b P 1";
/// A mate in 25 by cshogi's df-pn that takes our solver a few hundred thousand nodes
/// (about two seconds on a loaded 2-core machine).
const HARD: &str = "l+N4g2/1p6l/p1ppk2pp/4p4/6ps1/1P2P3P/P2PGPPP1/2S2GS1R/LN4KNL b RBGS2Pbn 47";

/// An engine without a network: `go mate` must not need one.
fn engine_without_network() -> Engine {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "/nonexistent/model.safetensors")]);
    e
}

/// The `checkmate` answer to `go mate <args>` on `sfen`.
fn solve(e: &mut Engine, sfen: &str, args: &str, secs: f64) -> (String, Vec<String>) {
    e.send(&format!("position sfen {sfen}"));
    e.send(&format!("go mate {args}"));
    let lines = e.until(secs, "checkmate");
    (lines.last().unwrap().clone(), lines)
}

/// The moves of a `checkmate` line form a legal mating sequence from `sfen`.
fn assert_mates(sfen: &str, answer: &str) -> usize {
    let moves: Vec<&str> = answer.split_whitespace().skip(1).collect();
    assert!(!moves.is_empty() && !["nomate", "timeout", "notimplemented"].contains(&moves[0]), "{answer}");
    let mut pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    let attacker = pos.side_to_move();
    for m in &moves {
        let mover = pos.side_to_move();
        pos.play_usi(m).unwrap_or_else(|e| panic!("{m} in {answer}: {e}"));
        assert!(mover != attacker || pos.in_check(), "{m} gives no check in {answer}");
    }
    assert!(pos.side_to_move() != attacker && pos.in_check() && !pos.has_legal_move(), "{answer} does not mate");
    moves.len()
}

#[test]
fn go_mate_answers_mates_and_no_mates_without_a_network() {
    let mut e = engine_without_network();
    let (answer, lines) = solve(&mut e, MATE_IN_3, "5000", 30.0);
    assert_eq!(assert_mates(MATE_IN_3, &answer), 3, "{answer}");
    assert!(!lines.iter().any(|l| l.contains("unknown word")), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("info time ") && l.contains(" nodes ")), "{lines:?}");
    // `infinite` and a bare `go mate` answer by themselves once decided.
    let (answer, _) = solve(&mut e, MATE_IN_3, "infinite", 30.0);
    assert_mates(MATE_IN_3, &answer);
    let (answer, _) = solve(&mut e, PAWN_DROP_ONLY, "", 30.0);
    assert_eq!(answer, "checkmate nomate");
    let (answer, _) = solve(&mut e, "4k4/9/9/9/9/9/9/9/4K4 b - 1", "1000", 30.0);
    assert_eq!(answer, "checkmate nomate");
    // Tsume problems as GUIs send them leave out the attacker's king: only go mate takes
    // them (a plain go has no position).
    let kingless = "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1";
    e.send(&format!("position sfen {kingless}"));
    e.send("go mate 1000");
    let lines = e.until(30.0, "checkmate");
    assert_eq!(lines.last().unwrap(), "checkmate G*5b", "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("error")), "{lines:?}");
    let (answer, _) = solve(&mut e, "8k/9/9/9/9/9/9/9/9 b P2r2b4g4s4n4l17p 1", "1000", 30.0);
    assert_eq!(answer, "checkmate nomate");
    e.send(&format!("position sfen {kingless}"));
    e.send("go nodes 10");
    let lines = e.until(30.0, "bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove resign", "{lines:?}");
    // Gote to move attacks just as well.
    let (answer, _) = solve(&mut e, "4k4/9/9/9/9/9/4p4/9/4K4 w g 1", "1000", 30.0);
    assert_eq!(answer, "checkmate G*5h");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn go_mate_times_out_and_stops() {
    let mut e = engine_without_network();
    let start = Instant::now();
    let (answer, _) = solve(&mut e, HARD, "50", 30.0);
    assert_eq!(answer, "checkmate timeout");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    // `stop` ends `go mate infinite` with a timeout answer.
    e.send(&format!("position sfen {HARD}"));
    e.send("go mate infinite");
    std::thread::sleep(Duration::from_millis(100));
    let stopped = Instant::now();
    e.send("stop");
    let lines = e.until(10.0, "checkmate");
    assert_eq!(lines.last().unwrap(), "checkmate timeout", "{lines:?}");
    assert!(stopped.elapsed() < Duration::from_secs(5), "{:?}", stopped.elapsed());
    // The engine takes the next command as usual.
    e.send("isready");
    e.until(30.0, "readyok");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn go_mate_refuses_other_variants() {
    let mut e = engine_without_network();
    e.send("setoption name UCI_Variant value sho");
    e.send("position startpos");
    e.send("go mate 1000");
    let lines = e.until(30.0, "checkmate");
    assert_eq!(lines.last().unwrap(), "checkmate notimplemented");
    assert!(lines.iter().any(|l| l.contains("standard shogi only")), "{lines:?}");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}
