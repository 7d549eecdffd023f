//! The opening book over USI, as ShogiGUI drives it: `BookFile` names a YaneuraOu text
//! book (built by the builder `koma book` uses, from game records and from the games of
//! an arena match), `isready`
//! says what it holds, and a `go` in a book position answers the book's move at once
//! (an `info string` naming the book, a `pv` line, `bestmove` with the expected reply)
//! until `BookMoves`; `USI_OwnBook false` searches instead; a broken book is reported
//! and the engine plays on without it.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use dataio::book::{Book, BookBuilder, BookMove};
use rules::records::{read_games, Format};

const START: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

/// A book of the even games among the reference records.
fn records_book(dir: &Path) -> (PathBuf, Book) {
    let mut builder = BookBuilder::new(24);
    for name in ["even-mate.csa", "even-resign.csa", "even-sennichite.csa", "even-timeup.csa"] {
        let path = repo_root().join("data/records/cshogi-check").join(name);
        for record in read_games(Format::Csa, &std::fs::read(path).unwrap(), None).unwrap() {
            builder.add_game(&record).unwrap();
        }
    }
    let book = builder.build(1);
    let path = dir.join("book.db");
    book.write(&path).unwrap();
    (path, book)
}

/// The lines of one `go` answered in `position`.
fn go(e: &mut Engine, position: &str) -> Vec<String> {
    e.send(&format!("position {position}"));
    e.send("go btime 0 wtime 0 byoyomi 1000");
    e.until(30.0, "bestmove")
}

#[test]
fn the_engine_plays_its_book_then_searches() {
    let dir = tempfile::tempdir().unwrap();
    let (path, book) = records_book(dir.path());
    let mut e = Engine::start(&[]);
    let ready =
        e.handshake(&[("ModelFile", "<uniform>"), ("BookFile", path.to_str().unwrap()), ("BookEvalDiff", "99999")]);
    let note = format!("info string book: {} ({} positions", path.display(), book.len());
    assert!(ready.iter().any(|l| l.starts_with(&note)), "{ready:?}");

    // The start position: one of the book's first moves, with its reply as the ponder.
    let lines = go(&mut e, "startpos");
    let best = lines.last().unwrap();
    let first: Vec<&BookMove> = book.moves(START).unwrap().iter().collect();
    let chosen = first.iter().find(|m| best.starts_with(&format!("bestmove {}", m.mv))).expect(best);
    assert!(lines.iter().any(|l| l.starts_with(&format!("info string book move {}", chosen.mv))), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" pv ") && l.contains(&chosen.mv)), "{lines:?}");
    if let Some(reply) = &chosen.ponder {
        assert_eq!(best, &format!("bestmove {} ponder {reply}", chosen.mv));
    }

    // Past BookMoves, and with the book off, the engine searches.
    e.send("setoption name BookMoves value 0");
    let lines = go(&mut e, "startpos");
    assert!(!lines.iter().any(|l| l.contains("book move")), "{lines:?}");
    e.send("setoption name BookMoves value 16");
    e.send("setoption name USI_OwnBook value false");
    let lines = go(&mut e, "startpos");
    assert!(!lines.iter().any(|l| l.contains("book move")), "{lines:?}");
    e.send("setoption name USI_OwnBook value true");
    let lines = go(&mut e, "startpos");
    assert!(lines.iter().any(|l| l.contains("book move")), "{lines:?}");

    // A position the book lacks: a search.
    let lines = go(&mut e, "startpos moves 1g1f 9c9d 1f1e");
    assert!(!lines.iter().any(|l| l.contains("book move")), "{lines:?}");
}

#[test]
fn a_broken_book_is_reported_and_the_engine_plays_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.db");
    std::fs::write(&path, format!("#YANEURAOU-DB2016 1.00\nsfen {START}\n7g7f none ten 0 1\n")).unwrap();
    let mut e = Engine::start(&[]);
    let ready = e.handshake(&[("ModelFile", "<uniform>"), ("BookFile", path.to_str().unwrap())]);
    assert!(
        ready
            .iter()
            .any(|l| l.starts_with("info string error") && l.contains("line 3") && l.contains("without a book")),
        "{ready:?}"
    );
    let lines = go(&mut e, "startpos");
    assert!(lines.last().unwrap().starts_with("bestmove ") && !lines.iter().any(|l| l.contains("book move")));
    e.send("setoption name BookFile value nowhere/missing.db");
    let lines = e.ask_until("isready", 30.0, "readyok");
    assert!(lines.iter().any(|l| l.starts_with("info string error") && l.contains("missing.db")), "{lines:?}");
    e.send("setoption name BookEvalDiff value -5");
    let lines = e.ask_until("isready", 30.0, "readyok");
    assert!(lines.iter().any(|l| l.starts_with("info string error") && l.contains("BookEvalDiff")), "{lines:?}");
}

/// A book made from an arena match's `games.csa` (what `koma book runs/<match>/games.csa`
/// reads) is played by the engine.
#[test]
fn a_book_of_an_arena_match_is_played() {
    use arena::{run_match, MatchConfig, Opening, PlayerSpec, TimeControl};
    use rules::{EndRules, ImpasseRule, Variant};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("match");
    let cfg = MatchConfig {
        players: ["a=greedy", "b=material:1"].iter().map(|p| p.parse::<PlayerSpec>().unwrap()).collect(),
        gauntlet: None,
        ladder: false,
        games: 4,
        tc: TimeControl::Nodes(10),
        openings: vec![Opening::startpos(Variant::Shogi)],
        concurrency: 1,
        sprt: None,
        out: out.clone(),
        variant: Variant::Shogi,
        end_rules: EndRules { impasse: ImpasseRule::Declaration27, max_plies: Some(60) },
        time_margin: Duration::from_millis(500),
        hang_timeout: Duration::from_secs(5),
        seed: 3,
        command_line: None,
        progress: false,
        resume: false,
    };
    run_match(&cfg).unwrap();
    let games = read_games(Format::Csa, &std::fs::read(out.join("games.csa")).unwrap(), None).unwrap();
    assert_eq!(games.len(), 4);
    let mut builder = BookBuilder::new(8);
    for g in &games {
        builder.add_game(g).unwrap();
    }
    let book = builder.build(1);
    let path = dir.path().join("arena.db");
    book.write(&path).unwrap();
    let mut e = Engine::start(&[]);
    e.handshake(&[
        ("ModelFile", "<uniform>"),
        ("BookFile", path.to_str().unwrap()),
        ("BookEvalDiff", "99999"),
        ("BookEvalWhiteLimit", "-99999"),
        ("BookEvalBlackLimit", "-99999"),
    ]);
    let best = go(&mut e, "startpos").pop().unwrap();
    let first = book.moves(START).unwrap();
    assert!(first.iter().any(|m| best.starts_with(&format!("bestmove {}", m.mv))), "{best} not in {first:?}");
}
