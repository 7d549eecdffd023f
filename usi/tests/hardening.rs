//! Bad input at the engine's door: a line that is not UTF-8 costs only that
//! line (USI and XBoard, also while searching), and every `go` that is not `infinite` or
//! `ponder` ends with a `bestmove` by itself, malformed words included.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn is_error(l: &str) -> bool {
    l.starts_with("info string error")
}

fn legal_after_startpos(mv: &str) -> bool {
    rules::Position::startpos(rules::Variant::Shogi).parse_usi(mv).is_ok()
}

/// `go ...` from the start position: the error lines it printed and its bestmove, which
/// must come by itself within `secs`.
fn go_ends_by_itself(e: &mut Engine, go: &str, secs: f64) -> (Vec<String>, String) {
    e.send("position startpos");
    let t = Instant::now();
    let lines = e.ask_all(go, secs, "bestmove");
    let bestmove = lines.last().unwrap().clone();
    let mv = bestmove.split_whitespace().nth(1).unwrap_or("");
    assert!(legal_after_startpos(mv), "{go}: {bestmove}; took {:?}", t.elapsed());
    (lines.into_iter().filter(|l| is_error(l)).collect(), bestmove)
}

trait AskAll {
    fn ask_all(&mut self, cmd: &str, secs: f64, prefix: &str) -> Vec<String>;
}

impl AskAll for Engine {
    fn ask_all(&mut self, cmd: &str, secs: f64, prefix: &str) -> Vec<String> {
        self.send(cmd);
        self.until(secs, prefix)
    }
}

#[test]
fn usi_invalid_utf8_lines_are_errors_and_the_engine_goes_on() {
    let mut e = Engine::start(&[]);
    // Before the first command (protocol detection) ...
    e.send_bytes(b"\xff");
    e.expect(10.0, |l| is_error(l) && l.contains("UTF-8"));
    e.handshake(&[("ModelFile", "<uniform>")]);
    // ... between commands ...
    e.send_bytes(b"position startpos moves 7g7f \xc3\x28");
    e.expect(5.0, |l| is_error(l) && l.contains("UTF-8"));
    e.ask("isready", 5.0, |l| l == "readyok");
    // ... and during go infinite: the search goes on until stop.
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    e.send_bytes(b"stop\xff");
    e.expect(5.0, |l| is_error(l) && l.contains("UTF-8"));
    e.ask("isready", 5.0, |l| l == "readyok");
    let bm = e.ask("stop", 5.0, |l| l.starts_with("bestmove"));
    assert!(legal_after_startpos(bm.split_whitespace().nth(1).unwrap()), "{bm}");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn issue_reproducer_a_stray_byte_is_answered_not_silently_fatal() {
    // printf '\xff\n' | koma-usi: an error line, exit 0; the next command still runs.
    let mut child =
        Command::new(exe()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"\xff\nusi\nquit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(is_error(lines[0]) && lines[0].contains("UTF-8"), "{text}");
    assert!(lines.contains(&"usiok"), "{text}");
}

#[test]
fn xboard_invalid_utf8_lines_are_errors_and_the_engine_goes_on() {
    for args in [&["--xboard"][..], &[][..]] {
        let mut e = Engine::start(args);
        e.send("xboard");
        e.send("protover 2");
        e.expect(10.0, |l| l == "feature done=1");
        e.send_bytes(b"ping \xff");
        e.expect(5.0, |l| l.starts_with("Error (not valid UTF-8)"));
        e.ask("ping 7", 5.0, |l| l == "pong 7");
        e.send("option ModelFile=<uniform>");
        e.send("variant sho");
        e.send("st 30");
        e.send("go");
        std::thread::sleep(Duration::from_millis(200));
        e.send_bytes(b"\xfe\xfe");
        e.expect(5.0, |l| l.starts_with("Error (not valid UTF-8)"));
        // The search was not disturbed: `?` makes it move now.
        e.send("?");
        e.expect(10.0, |l| l.starts_with("move "));
        e.send("quit");
        assert!(e.wait_exit(10.0).success());
    }
}

/// Regression: an error about a long line once quoted all of it back (`unknown command 'x...'`,
/// a bad `position`, XBoard's `Error (...): line`): now each quotes it cut short.
#[test]
fn errors_quote_long_commands_cut_short() {
    let long = "x".repeat(200_000);
    let short = |l: &str| l.len() < 400 && !l.contains(&"x".repeat(201));
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    for command in [long.clone(), format!("position startpos moves 7g7f {long}"), format!("position {long}")] {
        e.send(&command);
        let error = e.expect(5.0, is_error);
        assert!(short(&error) && error.contains("... (200000 bytes)"), "{} bytes: {}", error.len(), &error[..80]);
    }
    e.ask(&format!("setoption name {long} value 1"), 5.0, |l| is_error(l) && short(l));
    e.send("quit");
    let mut x = Engine::start(&["--xboard"]);
    for command in [long.clone(), format!("variant {long}"), format!("usermove {long}"), format!("option {long}=1")] {
        x.send(&command);
        let error = x.expect(5.0, |l| l.starts_with("Error") || l.starts_with("Illegal move"));
        assert!(short(&error), "{} bytes: {}", error.len(), &error[..80]);
    }
    x.ask("ping 7", 5.0, |l| l == "pong 7");
    x.send("quit");
}

#[test]
fn go_depth_ends_by_itself() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>"), ("InfoInterval", "0")]);
    let t = Instant::now();
    let (errors, _) = go_ends_by_itself(&mut e, "go depth 2", 20.0);
    assert!(errors.is_empty(), "{errors:?}");
    // It stops at the reported depth 2, or at the cap of 400 simulations.
    let info = e.log.iter().rev().find(|l| l.starts_with("info depth")).unwrap().clone();
    let nodes: u64 = info.split_whitespace().skip_while(|w| *w != "nodes").nth(1).unwrap().parse().unwrap();
    let depth: u64 = info.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(depth == 2 && nodes <= 440 || (400..=440).contains(&nodes), "{info}");
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn malformed_go_words_give_an_error_line_and_a_search_that_ends() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>"), ("InfoInterval", "0")]);
    for (go, needle) in [
        ("go nodes abc", "not a whole number"),
        ("go movetime abc", "not a whole number"),
        ("go searchmoves 7g7f", "searchmoves"),
        ("go btime -5 wtime -5", "negative"),
        ("go nodes -1", "negative"),
        ("go movetime -100", "negative"),
        ("go depth 0", "depth"),
        ("go byoyomi 1e3", "not a whole number"),
    ] {
        let t = Instant::now();
        let (errors, _) = go_ends_by_itself(&mut e, go, 10.0);
        assert!(errors.iter().any(|l| l.contains(needle)), "{go}: {errors:?}");
        // The default search: about one second.
        assert!(t.elapsed() < Duration::from_millis(3000), "{go}: {:?}", t.elapsed());
    }
    // A bare go ends by itself too.
    let (errors, _) = go_ends_by_itself(&mut e, "go", 10.0);
    assert!(errors.is_empty(), "{errors:?}");
    // A good limit next to a bad one still counts.
    let t = Instant::now();
    let (errors, _) = go_ends_by_itself(&mut e, "go movetime abc nodes 50", 10.0);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(t.elapsed() < Duration::from_millis(900), "{:?}", t.elapsed());
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

#[test]
fn xboard_bad_time_words_are_refused_and_sd_limits_the_search() {
    let mut e = Engine::start(&["--xboard"]);
    e.send("xboard");
    e.send("protover 2");
    e.expect(10.0, |l| l == "feature done=1");
    e.send("option ModelFile=<uniform>");
    e.send("variant sho");
    for bad in ["st inf", "st nan", "st -1", "level 40 inf 0", "level 40 5 nan", "time 99999999999999999999", "sd 0"] {
        e.ask(bad, 5.0, |l| l.starts_with("Error (bad"));
    }
    // sd 2: 400 simulations, far below the default 5 s a move.
    e.send("sd 2");
    let t = Instant::now();
    e.send("go");
    e.expect(20.0, |l| l.starts_with("move "));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}
