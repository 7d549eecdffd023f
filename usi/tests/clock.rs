//! The clock holds when evaluations are slow: the engine's forward passes are slowed down
//! (the test-only `KOMA_TEST_EVAL_DELAY_MS`), and every move of a 300 ms byoyomi still
//! answers in time, by the engine's own clock and by the wall clock from the `go` line.
//! Also `go movetime` (uses its time) and `go depth` (stops at the reported depth).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use rules::Variant;

const BYOYOMI_MS: u64 = 300;
/// What the wall clock may add to the byoyomi: the pipes and the scheduling of this test
/// process and the engine on a loaded 2-core machine. The engine itself aims at
/// byoyomi - ByoyomiMargin (100 ms) and its watchdog answers by byoyomi - 50 ms.
const WALL_SLACK_MS: u64 = 150;

fn engine_with_eval_delay(delay_ms: u64) -> Engine {
    let mut cmd = Command::new(exe());
    cmd.env("KOMA_TEST_EVAL_DELAY_MS", delay_ms.to_string());
    let mut e = Engine::from_command(&mut cmd);
    e.handshake(&[("ModelFile", "<uniform>"), ("Threads", "2"), ("BatchSize", "8")]);
    e
}

/// The `time` of the last `info` line before the `bestmove`.
fn engine_time(lines: &[String]) -> Option<u64> {
    lines.iter().rev().find_map(|l| l.split_whitespace().skip_while(|w| *w != "time").nth(1)?.parse().ok())
}

fn field(lines: &[String], name: &str) -> Option<u64> {
    lines.iter().rev().find_map(|l| l.split_whitespace().skip_while(|w| *w != name).nth(1)?.parse().ok())
}

/// Plays `moves` moves of one game (a new one when a game ends) at `go byoyomi 300`;
/// returns (wall ms, engine ms) of each.
fn play_byoyomi(e: &mut Engine, moves: usize) -> Vec<(u64, u64)> {
    let mut played: Vec<String> = Vec::new();
    let mut times = Vec::new();
    for _ in 0..moves {
        let cmd =
            if played.is_empty() { "startpos".to_string() } else { format!("startpos moves {}", played.join(" ")) };
        e.send(&format!("position {cmd}"));
        let t = Instant::now();
        e.send(&format!("go btime 0 wtime 0 byoyomi {BYOYOMI_MS}"));
        let lines = e.until(10.0, "bestmove");
        let wall = t.elapsed().as_millis() as u64;
        let own = engine_time(&lines).unwrap_or(0);
        times.push((wall, own));
        let mv = lines.last().unwrap().split_whitespace().nth(1).unwrap().to_string();
        if mv == "resign" || mv == "win" {
            played.clear();
            continue;
        }
        let pos = rules::parse_position_command(Variant::Shogi, &cmd).unwrap();
        assert!(pos.parse_usi(&mv).is_ok(), "{mv} is not legal after {cmd}");
        played.push(mv);
    }
    times
}

#[test]
fn forty_byoyomi_moves_answer_in_time_with_slow_evaluations() {
    // 120 ms a pass: a few passes come back within the budget; 450 ms: none does, so
    // the watchdog answers every move.
    let mut all = Vec::new();
    for delay in [120, 450] {
        let mut e = engine_with_eval_delay(delay);
        for (i, (wall, own)) in play_byoyomi(&mut e, 20).into_iter().enumerate() {
            all.push((delay, i, wall, own));
        }
        e.send("quit");
    }
    let late: Vec<_> =
        all.iter().filter(|&&(_, _, wall, own)| own > BYOYOMI_MS || wall > BYOYOMI_MS + WALL_SLACK_MS).collect();
    let worst_wall = all.iter().map(|a| a.2).max().unwrap();
    let worst_own = all.iter().map(|a| a.3).max().unwrap();
    println!(
        "{} moves at byoyomi {BYOYOMI_MS}: worst wall {worst_wall} ms, worst engine time {worst_own} ms",
        all.len()
    );
    assert!(
        late.is_empty(),
        "moves over byoyomi {BYOYOMI_MS} ms (engine time) or + {WALL_SLACK_MS} ms (wall), as (delay, move, wall, engine): {late:?}"
    );
}

#[test]
fn movetime_uses_its_time_and_depth_stops_at_the_reported_depth() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    e.send("position startpos");
    let t = Instant::now();
    let lines = e.ask_until("go movetime 500", 10.0, "bestmove");
    let wall = t.elapsed();
    let own = engine_time(&lines).unwrap();
    // movetime 500: 450 ms (the margin keeps back at most a tenth); the uniform
    // evaluator never decides the opening early.
    assert!((400..=500).contains(&own), "movetime 500 searched {own} ms: {lines:?}");
    assert!(wall < Duration::from_millis(500 + WALL_SLACK_MS), "{wall:?}");
    for depth in [1u64, 3, 4, 5] {
        // A fresh tree (a reused one may put the first simulations deeper than N).
        e.send("usinewgame");
        e.send("position startpos");
        let lines = e.ask_until(&format!("go depth {depth}"), 30.0, "bestmove");
        let reported = field(&lines, "depth").unwrap();
        let nodes = field(&lines, "nodes").unwrap();
        // The reported depth reaches N, unless the simulation cap (100 N^2) comes first.
        assert!(reported == depth || (reported < depth && nodes >= 100 * depth * depth), "go depth {depth}: {lines:?}");
    }
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}
