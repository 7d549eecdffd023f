//! A timed search plays the mates that the tsume solver proves within its time: the
//! root's mate search runs beside the search under a clock (`search::root_mate`), not
//! only the fixed `RootMateNodes` budget (20,000 nodes) that a search without a clock
//! keeps. The uniform evaluator (every move equally likely, value 0) stands for a
//! network that sees no mate: the search alone never finds this one.

mod common;

use common::*;
use rules::{Position, Variant};

/// A mate in 17 of `data/tsume/reference.tsv` (mate-15-19): the solver's first proof
/// takes some 45,000 nodes (under half a second on a loaded 2-core machine), beyond the
/// 20,000 of the root's fixed check.
const MATE_IN_17: &str = "9/2k6/G8/s8/9/9/9/9/K8 b 2RG2b2g3s4n4l18p 1";

/// Whether `moves` is a legal line from `sfen` in which the side to move checks at each
/// of its moves and the other side ends mated.
fn is_mating_line(sfen: &str, moves: &[&str]) -> bool {
    let mut pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    let attacker = pos.side_to_move();
    for m in moves {
        let mover = pos.side_to_move();
        if pos.play_usi(m).is_err() || (mover == attacker && !pos.in_check()) {
            return false;
        }
    }
    pos.side_to_move() != attacker && pos.in_check() && !pos.has_legal_move()
}

#[test]
fn a_timed_search_plays_a_long_mate_that_the_solver_proves() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>"), ("InfoInterval", "0")]);
    e.send(&format!("position sfen {MATE_IN_17}"));
    // Ten seconds at most: the proof ends the search as soon as it is found.
    let lines = e.ask_until("go byoyomi 10000", 60.0, "bestmove");
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap().to_string();
    let info = lines.iter().rev().find(|l| l.starts_with("info ") && l.contains(" score ")).expect("an info line");
    let words: Vec<&str> = info.split_whitespace().collect();
    let at = |w: &str| words.iter().position(|x| *x == w).unwrap_or_else(|| panic!("no {w} in {info}"));
    assert_eq!(words[at("score") + 1], "mate", "{lines:#?}");
    let plies: usize = words[at("score") + 2].parse().unwrap();
    let pv = &words[at("pv") + 1..];
    assert!(plies >= 17 && plies % 2 == 1, "{info}");
    assert_eq!(pv.len(), plies, "the PV is the mating line: {info}");
    assert_eq!(pv[0], best, "{info}");
    assert!(is_mating_line(MATE_IN_17, pv), "{info}");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}
