//! The USI protocol, driven over stdin/stdout like a GUI.

mod common;

use std::time::{Duration, Instant};

use common::*;
use rules::{Position, Variant};

fn bestmove_of(line: &str) -> String {
    line.split_whitespace().nth(1).unwrap_or("").to_string()
}

fn assert_legal(pos_cmd: &str, mv: &str) {
    let pos = rules::parse_position_command(Variant::Shogi, pos_cmd).unwrap();
    assert!(pos.parse_usi(mv).is_ok(), "{mv} is not legal after {pos_cmd}");
}

#[test]
fn handshake_options_and_a_legal_move() {
    let mut e = Engine::start(&[]);
    e.send("usi");
    let lines = e.until(10.0, "usiok");
    assert!(lines.iter().any(|l| l.starts_with("id name koma-usi")));
    for opt in [
        "ModelFile",
        "Threads",
        "BatchSize",
        "Device",
        "USI_Ponder",
        "MultiPV",
        "ByoyomiMargin",
        "NodesLimit",
        "ResignValue",
        "UCI_Variant",
        "CPuct",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(&format!("option name {opt} type"))), "option {opt} missing");
    }
    e.send("setoption name ModelFile value <uniform>");
    e.send("isready");
    e.until(30.0, "readyok");
    e.send("usinewgame");
    let cmd = "startpos moves 7g7f 3c3d";
    e.send(&format!("position {cmd}"));
    e.send("go nodes 300");
    let out = e.until(20.0, "bestmove");
    let info = out.iter().rev().find(|l| l.starts_with("info depth")).expect("an info line before bestmove");
    for word in ["depth", "seldepth", "nodes", "nps", "time", "score cp", "pv"] {
        assert!(info.contains(word), "{word} missing in {info}");
    }
    assert_legal(cmd, &bestmove_of(out.last().unwrap()));
    // MultiPV gives numbered lines.
    e.send("setoption name MultiPV value 3");
    e.send("position startpos");
    e.send("go nodes 200");
    let out = e.until(20.0, "bestmove");
    assert!(out.iter().any(|l| l.contains(" multipv 3 ")), "{out:?}");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn malformed_and_out_of_order_commands_are_answered() {
    let mut e = Engine::start(&[]);
    e.send("go nodes 10"); // before usi/isready: no network yet, still answered
    e.expect(60.0, |l| l.starts_with("bestmove"));
    e.handshake(&[("ModelFile", "<uniform>")]);
    e.ask("frobnicate", 5.0, |l| l.starts_with("info string error") && l.contains("frobnicate"));
    e.ask("setoption name Threads value many", 5.0, |l| l.starts_with("info string error") && l.contains("Threads"));
    e.ask("setoption name NoSuchOption value 1", 5.0, |l| l.starts_with("info string error"));
    e.ask("setoption", 5.0, |l| l.starts_with("info string error"));
    e.ask("ponderhit", 5.0, |l| l.starts_with("info string error"));
    e.ask("position sfen this/is/not/a/sfen b - 1", 5.0, |l| l.starts_with("info string error"));
    assert_eq!(e.ask("go nodes 10", 5.0, |l| l.starts_with("bestmove")), "bestmove resign");
    e.ask("position startpos moves 7g7f 7g7f", 5.0, |l| l.starts_with("info string error") && l.contains("7g7f"));
    e.send("position startpos moves");
    e.ask("go btime abc wtime 1000 nodes 50", 5.0, |l| l.starts_with("info string error"));
    let bm = e.expect(10.0, |l| l.starts_with("bestmove"));
    assert_legal("startpos", &bestmove_of(&bm));
    e.send("stop"); // after the search: harmless
    e.ask("isready", 5.0, |l| l == "readyok");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn stop_ends_go_infinite_and_quit_ends_the_process() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(400));
    // isready and go during a search
    e.ask("isready", 5.0, |l| l == "readyok");
    e.ask("go nodes 5", 5.0, |l| l.starts_with("info string error"));
    let t = Instant::now();
    let bm = e.ask("stop", 5.0, |l| l.starts_with("bestmove"));
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_legal("startpos", &bestmove_of(&bm));
    // A proven position under go infinite still waits for stop.
    e.send("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    e.ask("go infinite", 10.0, |l| l.contains("score mate 1"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(bestmove_of(&e.ask("stop", 5.0, |l| l.starts_with("bestmove"))), "G*5b");
    // quit in the middle of a search.
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    e.send("quit");
    assert!(e.wait_exit(5.0).success());
    // End of input also ends the process.
    let mut e = Engine::start(&[]);
    e.send("usi");
    e.until(10.0, "usiok");
    e.close_stdin();
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn missing_model_is_reported_at_isready() {
    let mut e = Engine::start(&[]);
    e.send("usi");
    e.until(10.0, "usiok");
    e.send("setoption name ModelFile value /nonexistent/koma/model.json");
    e.send("isready");
    let lines = e.until(30.0, "readyok");
    assert!(
        lines.iter().any(|l| l.starts_with("info string error")
            && l.contains("/nonexistent/koma/model")
            && l.contains("not found")),
        "{lines:?}"
    );
    e.send("position startpos");
    assert_eq!(e.ask("go byoyomi 1000", 10.0, |l| l.starts_with("bestmove")), "bestmove resign");
}

/// A `setoption` value is taken as written: a path with two spaces in a row was read with
/// one (the words were split and joined again).
#[test]
fn setoption_values_keep_their_spaces() {
    let mut e = Engine::start(&[]);
    e.send("usi");
    e.until(10.0, "usiok");
    e.send("setoption name ModelFile value /nonexistent/two  spaces/model.json");
    e.send("isready");
    let lines = e.until(30.0, "readyok");
    assert!(
        lines.iter().any(|l| l.starts_with("info string error") && l.contains("/nonexistent/two  spaces/model.json")),
        "{lines:?}"
    );
    // Shogidokoro's `<empty>` string: the default device, not a device named `<empty>`.
    e.send("setoption name ModelFile value <uniform>");
    e.send("setoption name Device value <empty>");
    let lines = e.ask_until("isready", 30.0, "readyok");
    assert!(!lines.iter().any(|l| l.contains("error")), "{lines:?}");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

/// `usinewgame` drops the tree (a search reuses what the last one left), and `gameover`
/// ends a `go ponder` with its one `bestmove`, after which the engine takes the next game.
#[test]
fn usinewgame_starts_afresh_and_gameover_ends_pondering() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>"), ("Threads", "1"), ("InfoInterval", "0")]);
    let depth_after_one_node = |e: &mut Engine| {
        e.send("position startpos");
        let out = e.ask_until("go nodes 1", 20.0, "bestmove");
        let info = out.iter().rev().find(|l| l.starts_with("info depth")).expect("an info line").clone();
        let depth: u32 = info.split_whitespace().nth(2).unwrap().parse().unwrap();
        (depth, info)
    };
    e.send("position startpos");
    e.ask_until("go nodes 2000", 20.0, "bestmove");
    let (reused, info) = depth_after_one_node(&mut e);
    assert!(reused > 1, "the tree was not kept between moves: {info}");
    e.send("usinewgame");
    let (fresh, info) = depth_after_one_node(&mut e);
    assert_eq!(fresh, 1, "usinewgame kept the tree: {info}");
    for result in ["win", "lose", "draw"] {
        e.send("position startpos moves 7g7f");
        e.send("go ponder btime 0 wtime 0 byoyomi 1000");
        std::thread::sleep(Duration::from_millis(200));
        let out = e.ask_until(&format!("gameover {result}"), 5.0, "bestmove");
        assert_legal("startpos moves 7g7f", &bestmove_of(out.last().unwrap()));
        let out = e.ask_until("isready", 5.0, "readyok");
        assert!(out.iter().all(|l| !l.starts_with("bestmove") && !l.contains("error")), "{result}: {out:?}");
        e.send("usinewgame");
    }
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn declaration_and_lost_positions() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    // Sente: king in the camp with 10 pieces and 28 points -> bestmove win.
    e.send("position sfen 1K5G1/+R+B+P+P+P+P+P+P+P/9/9/9/9/9/9/4k4 b RB2G2S2N2L 1");
    assert_eq!(e.ask("go byoyomi 1000", 10.0, |l| l.starts_with("bestmove")), "bestmove win");
    // Mated: resign.
    e.send("position sfen 4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1");
    assert_eq!(e.ask("go byoyomi 1000", 10.0, |l| l.starts_with("bestmove")), "bestmove resign");
}

#[test]
fn a_tiny_network_answers_within_one_second_byoyomi_and_ponders() {
    let ckpt = tiny_checkpoint("shogi");
    let mut e = Engine::start(&[]);
    let lines = e.handshake(&[("ModelFile", ckpt.to_str().unwrap()), ("USI_Ponder", "true"), ("Threads", "2")]);
    assert!(lines.iter().any(|l| l.starts_with("info string network:")), "{lines:?}");
    let mut moves: Vec<String> = Vec::new();
    for _ in 0..4 {
        let cmd = if moves.is_empty() { "startpos".to_string() } else { format!("startpos moves {}", moves.join(" ")) };
        e.send(&format!("position {cmd}"));
        let t = Instant::now();
        let bm = e.ask("go btime 0 wtime 0 byoyomi 1000", 5.0, |l| l.starts_with("bestmove"));
        let el = t.elapsed();
        assert!(el < Duration::from_millis(1000), "took {el:?}");
        assert!(el > Duration::from_millis(500), "used only {el:?} of a 1 s byoyomi");
        let mv = bestmove_of(&bm);
        assert_legal(&cmd, &mv);
        moves.push(mv);
    }
    // Ponder: go ponder, then ponderhit; the clock starts at ponderhit.
    let mut pos = Position::startpos(Variant::Shogi);
    for m in &moves {
        pos.play_usi(m).unwrap();
    }
    let guess = pos.legal_moves()[0].to_usi();
    e.send(&format!("position startpos moves {} {guess}", moves.join(" ")));
    e.send("go ponder btime 0 wtime 0 byoyomi 1000");
    std::thread::sleep(Duration::from_millis(700));
    let t = Instant::now();
    let bm = e.ask("ponderhit", 5.0, |l| l.starts_with("bestmove"));
    assert!(t.elapsed() < Duration::from_millis(1000));
    assert_legal(&format!("startpos moves {} {guess}", moves.join(" ")), &bestmove_of(&bm));
    // Ponder miss: stop, then a new search.
    e.send(&format!("position startpos moves {} {guess}", moves.join(" ")));
    e.send("go ponder btime 0 wtime 0 byoyomi 1000");
    std::thread::sleep(Duration::from_millis(200));
    e.ask("stop", 5.0, |l| l.starts_with("bestmove"));
    e.send("gameover lose");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn fischer_and_sudden_death_do_not_flag() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    e.send("position startpos");
    for (go, limit) in [
        ("go btime 300 wtime 300 binc 0 winc 0", 300u64),
        ("go btime 150 wtime 150 binc 100 winc 100", 150),
        ("go btime 2000 wtime 2000 binc 500 winc 500", 2000),
    ] {
        let t = Instant::now();
        e.send(go);
        let lines = e.until(5.0, "bestmove");
        // The engine's own clock (its last `info ... time`) is what its time manager
        // controls; the wall clock around it also holds the scheduling delays of a
        // loaded machine, so it only guards against a hang.
        let searched_ms = lines
            .iter()
            .rev()
            .find_map(|l| l.split_whitespace().skip_while(|w| *w != "time").nth(1)?.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{go}: no `info ... time` before bestmove:\n{}", e.tail()));
        assert!(searched_ms < limit, "{go}: searched {searched_ms} ms");
        assert!(t.elapsed() < Duration::from_millis(limit + 2000), "{go}: {:?}", t.elapsed());
    }
}

#[test]
fn sho_and_dai_through_usi() {
    for (v, cmd) in [("sho", "startpos moves 7g7f"), ("dai", "startpos")] {
        let mut e = Engine::start(&[]);
        e.handshake(&[("UCI_Variant", v), ("ModelFile", "<uniform>")]);
        e.send(&format!("position {cmd}"));
        let mv = bestmove_of(&e.ask("go nodes 200", 20.0, |l| l.starts_with("bestmove")));
        let pos = rules::parse_position_command(v.parse().unwrap(), cmd).unwrap();
        assert!(pos.parse_usi(&mv).is_ok(), "{v}: {mv}");
    }
}

/// Regression: once the tree had filled its hash, a position outside it (a move taken
/// back) got a 0-node search at `hashfull 1000`. The tree now drops what it held and
/// `hashfull` counts what is used.
#[test]
fn a_full_tree_searches_a_position_outside_it() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>"), ("USI_Hash", "16"), ("InfoInterval", "0")]);
    e.send("usinewgame");
    e.send("position startpos moves 7g7f 3c3d");
    e.send("go movetime 3000");
    let out = e.until(20.0, "bestmove");
    let info = out.iter().rev().find(|l| l.starts_with("info depth")).expect("an info line");
    assert!(info.contains("hashfull 1000"), "the tree did not fill: {info}");
    e.send("position startpos moves 7g7f");
    e.send("go nodes 1000");
    let out = e.until(20.0, "bestmove");
    let info = out.iter().rev().find(|l| l.starts_with("info depth")).expect("an info line");
    assert!(info.contains(" nodes 1000 "), "{info}");
    assert!(!info.contains("hashfull 1000"), "{info}");
    assert_legal("startpos moves 7g7f", &bestmove_of(out.last().unwrap()));
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

/// The engine's diagnostics go through the `log` facade: none by default (a GUI's stderr
/// stays clean), why each search stopped with `KOMA_LOG=debug` or `KOMA_LOG=usi=debug`.
#[test]
fn search_diagnostics_only_with_koma_log_debug() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    for (filter, shown) in [(None, false), (Some("debug"), true), (Some("usi=debug"), true)] {
        let mut command = Command::new(exe());
        command.env_remove("KOMA_LOG").env_remove("RUST_LOG");
        if let Some(f) = filter {
            command.env("KOMA_LOG", f);
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "usi\nsetoption name ModelFile value <uniform>\nisready\nposition startpos\ngo nodes 20")
            .unwrap();
        stdin.flush().unwrap();
        // The diagnostic is written before the bestmove.
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let bestmove = stdout.lines().map_while(Result::ok).find(|l| l.starts_with("bestmove"));
        assert!(bestmove.is_some(), "{filter:?}: no bestmove");
        writeln!(stdin, "quit").unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{filter:?}: {err}");
        if shown {
            assert!(err.contains("[debug usi::engine] koma-usi: search stopped ("), "KOMA_LOG={filter:?}: {err}");
        } else {
            assert_eq!(err, "", "nothing on stderr by default");
        }
    }
}
