//! Input the `koma` commands once took wrongly: numbers that wrapped
//! around, stdin lines that were not UTF-8 (which ended the run), and times
//! that were clamped. Each is now refused with a message naming the rule,
//! and stdin modes go on after a bad line.

mod common;

use common::{koma, run_with_input, stderr, stdout, KOMA};
use std::process::Output;

/// Runs `koma` with raw bytes on its standard input.
fn koma_bytes(args: &[&str], stdin: &[u8]) -> Output {
    run_with_input(KOMA, args, stdin)
}

#[test]
fn sfen_digit_runs_that_wrap_around_are_refused() {
    // Wrapped, the run is -1: the silver overwrote the gold and the rank
    // still added up to nine squares.
    let o = koma(&["moves", "--sfen", "k8/9/9/9/4G18446744073709551615S4/9/9/9/8K b - 1"], "");
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("rank 5: '18446744073709551615' is not a number of empty squares"), "{}", stderr(&o));
    // Wrapped, this rank is 9 empty squares.
    let o = koma(&["moves", "--sfen", "k8/9/9/9/18446744073709551625/9/9/9/8K b - 1"], "");
    assert_eq!(o.status.code(), Some(2));
    let o = koma(&["moves"], "sfen k8/9/9/9/18446744073709551625/9/9/9/8K b - 1\nstartpos\n");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("error line 1: rank 5:"), "{out}");
    assert!(lines[1].starts_with("startpos\t1g1f "), "{out}");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn moves_answers_every_line_after_one_that_is_not_utf8() {
    let o = koma_bytes(&["moves"], b"startpos\n\xff\nstartpos moves 7g7f\n");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("startpos\t1g1f "), "{out}");
    assert!(lines[1].starts_with("error line 2: not UTF-8 text"), "{out}");
    assert!(lines[2].starts_with("startpos moves 7g7f\t"), "{out}");
    assert_eq!(o.status.code(), Some(2), "a bad line fails the run at the end");
    assert!(stderr(&o).contains("line 2: not UTF-8"), "{}", stderr(&o));
}

#[test]
fn outcome_answers_every_line_after_one_that_is_not_utf8() {
    let o = koma_bytes(&["outcome"], b"startpos\t7g7f\r\n\xfe\xff moves 7g7f\n\nstartpos moves 7g7f 3c3d\n");
    let out = stdout(&o);
    assert_eq!(out, format!("none ongoing\n{}\nnone ongoing\n", out.lines().nth(1).unwrap()));
    assert!(out.lines().nth(1).unwrap().starts_with("error line 2: not UTF-8 text"), "{out}");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn record_times_out_of_range_are_errors_of_their_line() {
    for time in ["T-5", "TNaN", "Tinf", "T1e400", "T99999999999999999999"] {
        let o = koma(&["convert", "--from", "csa", "--to", "kif"], &format!("V2.2\nPI\n+\n+7776FU\n{time}\n%TORYO\n"));
        assert_eq!(o.status.code(), Some(2), "{time}");
        assert!(stdout(&o).is_empty(), "{time}: nothing converted");
        assert!(stderr(&o).contains(&format!("-:5: bad time '{time}'")), "{time}: {}", stderr(&o));
    }
    let kif = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)   ( 0:-5/00:00:05)\n";
    let o = koma(&["convert", "--from", "kif", "--to", "csa"], kif);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-:3: bad time"), "{}", stderr(&o));
}
