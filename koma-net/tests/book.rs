//! `koma book` writes YaneuraOu's text book from game records: every position and move of
//! the games' first plies, counted, with the reply played most and the mover's result as
//! the score; rsshogi (an independent reader of the format, `scripts/ref/check_book.py`)
//! reads the same moves back; broken inputs are reported, not fatal; a broken `--merge`
//! book is an error naming its line and is left as it was.

use std::path::{Path, PathBuf};
use std::process::Command;

use dataio::book::Book;

mod common;

use common::{koma, scratch};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The even games among the reference records (each CSA file holds one).
fn records() -> Vec<PathBuf> {
    ["even-mate.csa", "even-resign.csa", "even-sennichite.csa", "even-timeup.csa"]
        .iter()
        .map(|f| repo("data/records/cshogi-check").join(f))
        .collect()
}

#[test]
fn a_book_of_records_reads_back_the_same_in_rsshogi() {
    let dir = scratch("koma-book-rsshogi");
    let out = dir.join("book.db");
    let mut args: Vec<String> = records().iter().map(|p| p.display().to_string()).collect();
    args.extend(["-o".into(), out.display().to_string(), "--max-ply".into(), "16".into()]);
    let run = koma(&["book"].iter().copied().chain(args.iter().map(String::as_str)).collect::<Vec<_>>(), "");
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("book: 4 games (0 skipped)"), "{}", text(&run.stdout));
    let book = Book::read(&out).unwrap();
    // Four games from the start position: the start holds every first move, counted.
    let start = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
    let first = book.moves(start).expect("the start position");
    assert_eq!(first.iter().map(|m| m.count).sum::<u64>(), 4);
    assert!(book.len() > 16, "{} positions", book.len());

    let sfens: Vec<String> = book.iter().map(|(sfen, _)| sfen).collect();
    let script = repo("scripts/ref/check_book.py");
    let mut child = Command::new(repo(".venv/bin/python"))
        .arg(&script)
        .arg(&out)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the .venv's python (scripts/setup.sh installs rsshogi there)");
    use std::io::Write;
    child.stdin.take().unwrap().write_all((sfens.join("\n") + "\n").as_bytes()).unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", text(&done.stderr));
    let lines: Vec<String> = text(&done.stdout).lines().map(String::from).collect();
    assert_eq!(lines[0], "kind sorted complete True", "rsshogi reads the file as sorted and whole");
    assert_eq!(lines.len(), sfens.len() + 1);
    for (line, (sfen, moves)) in lines[1..].iter().zip(book.iter()) {
        let ours: Vec<String> = moves
            .iter()
            .map(|m| format!("{} {} {} {} {}", m.mv, m.ponder.as_deref().unwrap_or("none"), m.score, m.depth, m.count))
            .collect();
        // rsshogi lists the moves in the file's order, which is by count, then score.
        let theirs: Vec<&str> = line.split_once('\t').unwrap().1.split(';').collect();
        let mut ours_sorted = ours.clone();
        let mut theirs_sorted: Vec<String> = theirs.iter().map(|s| s.to_string()).collect();
        ours_sorted.sort();
        theirs_sorted.sort();
        assert_eq!(ours_sorted, theirs_sorted, "{sfen}");
    }
}

#[test]
fn bad_inputs_are_skipped_and_a_broken_book_is_refused_and_kept() {
    let dir = scratch("koma-book-bad");
    let broken = dir.join("broken.csa");
    std::fs::write(&broken, "V2.2\nPI\n+\n+7776FU\n-9999XX\n").unwrap();
    let out = dir.join("book.db");
    let good = records()[0].display().to_string();
    let run = koma(&["book", &good, broken.to_str().unwrap(), "-o", out.to_str().unwrap()], "");
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("(1 skipped)"), "{}", text(&run.stdout));
    assert!(text(&run.stderr).contains("broken.csa"), "the bad file is named: {}", text(&run.stderr));

    let damaged = "#YANEURAOU-DB2016 1.00\nsfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1\n7g7f none x 0 1\n";
    std::fs::write(&out, damaged).unwrap();
    let run = koma(&["book", &good, "-o", out.to_str().unwrap(), "--merge"], "");
    assert!(!run.status.success());
    assert!(text(&run.stderr).contains("line 3"), "{}", text(&run.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), damaged, "the broken book is left as it was");

    let run = koma(&["book", broken.to_str().unwrap(), "-o", out.to_str().unwrap()], "");
    assert!(!run.status.success(), "no game at all is an error");
}

#[test]
fn score_with_a_network_searches_every_move() {
    let dir = scratch("koma-book-scored");
    let out = dir.join("scored.db");
    let good = records()[0].display().to_string();
    let player = format!("koma:{}", repo("models/shogi.safetensors").display());
    let args =
        ["book", &good, "-o", out.to_str().unwrap(), "--max-ply", "4", "--score-with", &player, "--tc", "nodes=16"];
    let run = koma(&args, "");
    assert!(run.status.success(), "{}", text(&run.stderr));
    let book = Book::read(&out).unwrap();
    let moves: Vec<_> = book.iter().flat_map(|(_, m)| m.to_vec()).collect();
    assert_eq!(moves.len(), 4);
    assert!(moves.iter().all(|m| m.depth == 1), "{moves:?}");
    assert!(moves.iter().any(|m| m.score != 0), "the network's scores: {moves:?}");
}
