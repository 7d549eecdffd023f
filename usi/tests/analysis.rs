//! Analysis past the memory cap: `go infinite` with the smallest `USI_Hash` fills the tree
//! within a second, then frees its least-visited subtrees and searches on until `stop`
//! (many times the nodes that fit) with its best move kept through every pruning; a
//! timed search with the same memory still stops at the cap, as before.

mod common;

use std::time::{Duration, Instant};

use common::*;

/// Gote's rook stands in front of sente's pawn on 7g: taking it (7g7f) is the move, and
/// the rules' material at the leaves (`MaterialMix 100` over the uniform evaluator) sees it.
const ROOK_EN_PRISE: &str = "lnsgkgsnl/7b1/ppppppppp/9/9/2r6/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

/// (nodes, hashfull, first pv move) of an `info ... nodes N ... hashfull H ... pv M ...` line.
fn info_fields(line: &str) -> Option<(u64, u64, String)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let after = |key: &str| words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1));
    Some((after("nodes")?.parse().ok()?, after("hashfull")?.parse().ok()?, after("pv")?.to_string()))
}

#[test]
fn go_infinite_searches_on_past_the_memory_cap() {
    let mut e = Engine::start(&[]);
    let options = [("ModelFile", "<uniform>"), ("MaterialMix", "100"), ("USI_Hash", "16"), ("InfoInterval", "200")];
    e.handshake(&options);
    e.send(&format!("position sfen {ROOK_EN_PRISE}"));
    e.send("go infinite");
    let start = Instant::now();
    let mut infos = Vec::new();
    while start.elapsed() < Duration::from_secs(6) {
        let line = e.expect(10.0, |l| l.starts_with("info") || l.starts_with("bestmove"));
        assert!(!line.starts_with("bestmove"), "go infinite answered by itself: {line} ({})", e.tail());
        if let Some(f) = info_fields(&line) {
            infos.push(f);
        }
    }
    e.send("stop");
    let best = e.until(10.0, "bestmove").pop().unwrap();
    // Each pruning shows as a fall of `hashfull` between two info lines.
    let prunings = infos.windows(2).filter(|w| w[1].1 + 150 < w[0].1).count();
    assert!(prunings >= 2, "the tree was pruned {prunings} times: {infos:?}");
    assert!(infos.windows(2).all(|w| w[1].0 > w[0].0), "the search stalled: {infos:?}");
    let moves: Vec<&str> = infos.iter().map(|f| f.2.as_str()).collect();
    assert!(moves.iter().all(|m| *m == "7g7f"), "the best move changed: {moves:?}");
    assert!(best.starts_with("bestmove 7g7f"), "{best}");
}

#[test]
fn a_timed_search_still_stops_at_the_memory_cap() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>"), ("USI_Hash", "16"), ("Threads", "2")]);
    e.send("position startpos moves 7g7f 3c3d");
    let start = Instant::now();
    e.send("go btime 0 wtime 0 byoyomi 60000");
    let lines = e.until(60.0, "bestmove");
    assert!(start.elapsed() < Duration::from_secs(30), "the search ran {:?}: {lines:?}", start.elapsed());
    let last = lines.iter().rev().find_map(|l| info_fields(l)).expect("an info line");
    assert!(last.1 >= 900, "stopped before the tree was full: {last:?}");
}
