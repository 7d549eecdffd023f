//! `koma ladder fit`: matches played apart rated together, one player held at its Elo.

mod common;

use common::*;

/// `n` games of `a` (sente in even games) against `b`, `a` winning the first `wins`.
fn games(a: &str, b: &str, n: usize, wins: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let (sente, gote) = if i % 2 == 0 { (a, b) } else { (b, a) };
            let a_side = if i % 2 == 0 { "sente" } else { "gote" };
            let b_side = if i % 2 == 0 { "gote" } else { "sente" };
            let winner = if i < wins { a_side } else { b_side };
            format!(r#"{{"sente":"{sente}","gote":"{gote}","winner":"{winner}"}}"#)
        })
        .collect()
}

#[test]
fn a_chain_of_matches_is_rated_from_the_anchor_up() {
    let dir = scratch("ladder-fit");
    // low - mid 10-30 and mid - high 10-30 in two files: each step about +191.
    let (one, two) = (dir.join("one.jsonl"), dir.join("two.jsonl"));
    std::fs::write(&one, games("low", "mid", 40, 10).join("\n")).unwrap();
    std::fs::write(&two, games("mid", "high", 40, 10).join("\n")).unwrap();
    let (one, two) = (one.to_str().unwrap(), two.to_str().unwrap());
    let o = koma(&["ladder", "fit", "--anchor", "low=1000", one, two], "");
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("fit: low vs mid: 40 games +10 =0 -30"), "{out}");
    let rating = |name: &str| -> f64 {
        let line = out.lines().find(|l| l.starts_with(&format!("fit: {name} ")) && l.contains("(step")).unwrap();
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert_eq!(rating("low"), 1000.0);
    // The prior (a draw a pair) pulls each step a little below the raw 10-30's +191.
    let (step1, step2) = (rating("mid") - rating("low"), rating("high") - rating("mid"));
    assert!((150.0..=191.0).contains(&step1) && (step1 - step2).abs() <= 1.0, "{out}");
    let order: Vec<&str> = out.lines().filter(|l| l.contains("(step")).map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(order, ["low", "mid", "high"]);

    // A bad anchor, an unknown one, and a player with no games linking it to the anchor.
    let refused = |args: &[&str], needle: &str| {
        let o = koma(args, "");
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{needle}: {}", stderr(&o));
    };
    refused(&["ladder", "fit", "--anchor", "low", one], "expected NAME=ELO");
    refused(&["ladder", "fit", "--anchor", "nobody=0", one], "no such player");
    let apart = dir.join("apart.jsonl");
    std::fs::write(&apart, games("x", "y", 2, 1).join("\n")).unwrap();
    refused(&["ladder", "fit", "--anchor", "low=0", one, apart.to_str().unwrap()], "no chain of games to low");
}

#[test]
fn a_published_record_counts_as_its_games() {
    let dir = scratch("ladder-fit-record");
    let (one, two) = (dir.join("one.jsonl"), dir.join("two.jsonl"));
    std::fs::write(&one, games("low", "mid", 40, 10).join("\n")).unwrap();
    std::fs::write(&two, games("mid", "high", 40, 10).join("\n")).unwrap();
    let (one, two) = (one.to_str().unwrap(), two.to_str().unwrap());
    let ratings = |o: &std::process::Output| -> Vec<String> {
        assert!(o.status.success(), "{}", stderr(o));
        stdout(o).lines().filter(|l| l.contains("(step")).map(String::from).collect()
    };
    let from_games = ratings(&koma(&["ladder", "fit", "--anchor", "low=1000", one, two], ""));
    // mid's 10-0-30 against high, written from either side, and both pairs as records alone.
    let from_record =
        ratings(&koma(&["ladder", "fit", "--anchor", "low=1000", "--record", "mid,high=10-0-30", one], ""));
    let mirrored = ratings(&koma(&["ladder", "fit", "--anchor", "low=1000", "--record", "high,mid=30-0-10", one], ""));
    let records_only = ratings(&koma(
        &["ladder", "fit", "--anchor", "low=1000", "--record", "low,mid=10-0-30", "--record", "mid,high=10-0-30"],
        "",
    ));
    assert_eq!(from_record, from_games);
    assert_eq!(mirrored, from_games);
    assert_eq!(records_only, from_games);
    let file = dir.join("pairs.toml");
    let pairs =
        "format = 1\n[[match]]\nname = \"m\"\ndate = \"today\"\npairs = [\"low,mid=10-0-30\", \"mid,high=10-0-30\"]\n";
    std::fs::write(&file, pairs).unwrap();
    let from_file = ratings(&koma(&["ladder", "fit", "--anchor", "low=1000", "--records", file.to_str().unwrap()], ""));
    assert_eq!(from_file, from_games);
    // A different record moves the rating: the record is read, not ignored.
    let other = ratings(&koma(&["ladder", "fit", "--anchor", "low=1000", "--record", "mid,high=20-0-20", one], ""));
    assert_ne!(other, from_games);

    for bad in ["mid,high=10-30", "mid=10-0-30", "mid,high=a-0-30", "mid,mid=1-0-1", "mid,high=0-0-0"] {
        let o = koma(&["ladder", "fit", "--anchor", "low=1000", "--record", bad, one], "");
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("expected A,B=W-D-L"), "{bad}: {}", stderr(&o));
    }
}
