//! `koma convert` against bad input: a failed conversion emptied an existing output,
//! an output named like its input replaced it, a directory conversion lost a game whose
//! output name another input's games had taken, `--from hcpe` did not exist, and a bad
//! token of an 8 MB line came back whole on stderr. Each drives the real binary.

mod common;

use common::{koma, repo_path, run_ok, scratch, stderr, stdout, KOMA};
use rules::records::hcpe::{self, hcpe3};
use rules::records::{read_games, Format};
use std::path::Path;
use std::process::Output;

const CSA: &str = "V2.2\nPI\n+\n+7776FU\n-3334FU\n%TORYO\n";

fn convert(args: &[&str]) -> Output {
    koma(&[&["convert"], args].concat(), "")
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_failed_conversion_leaves_an_existing_output_as_it_was() {
    let dir = scratch("koma-convert-failed");
    let train = dir.join("train.hcpe");
    std::fs::write(&train, b"earlier data").unwrap();
    let o = convert(&[path(&dir.join("typo.kif")), "--to", "hcpe", "-o", path(&train)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&train).unwrap(), b"earlier data", "{}", stderr(&o));
    assert!(stderr(&o).contains("not written"), "{}", stderr(&o));
    // A record that reads but holds no move gives no position either.
    let empty = dir.join("empty.usi");
    std::fs::write(&empty, "startpos\n").unwrap();
    let o = convert(&[path(&empty), "--to", "hcpe", "-o", path(&train)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&train).unwrap(), b"earlier data");
    // Text outputs: a file that does not convert writes nothing.
    let kif = dir.join("out.kifu");
    std::fs::write(&kif, "earlier").unwrap();
    std::fs::write(dir.join("bad.csa"), "V2.2\nPI\n+\n+7775FU\n").unwrap();
    let o = convert(&[path(&dir.join("bad.csa")), "--to", "kif", "-o", path(&kif)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&kif).unwrap(), "earlier");
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("koma-convert-same-file");
    let game = dir.join("g.csa");
    std::fs::write(&game, CSA).unwrap();
    let spelled = dir.join(".").join("g.csa");
    for to in ["hcpe", "csa", "kif"] {
        let o = convert(&[path(&game), "--to", to, "-o", path(&spelled)]);
        assert_eq!(o.status.code(), Some(2), "--to {to}: {}", stderr(&o));
        assert!(stderr(&o).contains("is an input"), "--to {to}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&game).unwrap(), CSA, "--to {to}");
    }
    // A directory converted into itself writes next to its files, never over them.
    let o = convert(&[path(&dir), "--to", "csa", "-o", path(&dir)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&game).unwrap(), CSA);
}

#[test]
fn a_directory_conversion_writes_every_game_when_output_names_collide() {
    let dir = scratch("koma-convert-collide");
    let (src, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("g.usi"), "startpos moves 7g7f\nstartpos moves 2g2f 8c8d\n").unwrap();
    std::fs::write(src.join("g-1.csa"), CSA).unwrap();
    let o = convert(&[path(&src), "--to", "kif", "-o", path(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("games 3") && stderr(&o).contains("-> 3 files written"), "{}", stderr(&o));
    let mut games: Vec<Vec<String>> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            read_games(Format::Kif, &bytes, None).unwrap().remove(0).usi_moves()
        })
        .collect();
    games.sort();
    assert_eq!(games, [vec!["2g2f", "8c8d"], vec!["7g7f"], vec!["7g7f", "3c3d"]]);
}

/// `cshogi.hcpe` holds every position of three games with evals and results.
#[test]
fn hcpe_reads_back_as_its_games() {
    let dir = scratch("koma-convert-from-hcpe");
    let fixture = repo_path("data/hcpe/cshogi.hcpe");
    let o = run_ok(KOMA, &["convert", "--to", "usi"], &[&fixture]);
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(stderr(&o).contains("files 1, games 3, moves 118"), "{}", stderr(&o));
    // Back to hcpe: the same positions and moves (USI text keeps no result, records no
    // eval).
    let usi = dir.join("games.usi");
    std::fs::write(&usi, &text).unwrap();
    let again = dir.join("again.hcpe");
    run_ok(KOMA, &["convert", "--to", "hcpe", "-o"], &[&again, &usi]);
    let entries = |p: &Path| hcpe::from_bytes(&std::fs::read(p).unwrap()).unwrap();
    let moves = |p: &Path| -> Vec<_> { entries(p).into_iter().map(|e| (e.position, e.best_move)).collect() };
    assert!(moves(&again) == moves(&fixture), "positions or moves differ");
    // Through a record format that keeps the result, the results too.
    let csa = dir.join("games.csa");
    run_ok(KOMA, &["convert", "--from", "hcpe", "--to", "csa", "-o"], &[&csa, &fixture]);
    let twice = dir.join("twice.hcpe");
    run_ok(KOMA, &["convert", "--to", "hcpe", "-o"], &[&twice, &csa]);
    let results = |p: &Path| -> Vec<_> { entries(p).into_iter().map(|e| e.result).collect() };
    assert!(moves(&twice) == moves(&fixture), "positions or moves differ");
    assert_eq!(results(&twice), results(&fixture));
}

#[test]
fn hcpe3_reads_back_as_its_games() {
    let fixture = repo_path("data/hcpe/cshogi.hcpe3");
    let games = hcpe3::from_bytes(&std::fs::read(&fixture).unwrap()).unwrap();
    let o = run_ok(KOMA, &["convert", "--from", "hcpe3", "--to", "usi"], &[&fixture]);
    let records = read_games(Format::Usi, &o.stdout, None).unwrap();
    assert_eq!(records.len(), games.len());
    for (r, g) in records.iter().zip(&games) {
        let moves: Vec<String> = g.moves.iter().map(|m| m.mv.to_usi()).collect();
        assert_eq!(r.usi_moves(), moves);
        assert_eq!(r.start.position().unwrap(), g.start);
    }
}

#[test]
fn an_hcpe_file_is_told_by_its_extension_and_a_bad_one_named() {
    let dir = scratch("koma-convert-hcpe-bad");
    let bad = dir.join("x.hcpe");
    std::fs::write(&bad, [0u8; 37]).unwrap();
    let o = convert(&[path(&bad), "--to", "kif"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("x.hcpe: byte 0: the data ends inside an hcpe record"), "{err}");
    assert!(!err.contains("--from"), "no advice to name a format it has: {err}");
}

#[test]
fn a_record_error_quotes_a_long_token_cut_short() {
    let dir = scratch("koma-convert-long-token");
    let long = dir.join("long.usi");
    let token = "x".repeat(8 << 20);
    std::fs::write(&long, format!("startpos moves 7g7f {token}\n")).unwrap();
    let o = convert(&[path(&long), "--to", "csa"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.len() < 1000, "{} bytes on stderr", err.len());
    assert!(err.contains(&format!("{}... (8388608 bytes)", "x".repeat(40))), "{err}");
    let sfen = dir.join("sfen.usi");
    std::fs::write(&sfen, format!("sfen {token} b - 1\n")).unwrap();
    let o = convert(&[path(&sfen), "--to", "csa"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).len() < 1000, "{} bytes on stderr", stderr(&o).len());
}
