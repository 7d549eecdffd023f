//! The rules against data computed by independent programs (cshogi,
//! pyffish, Fairy-Stockfish, Sjaak II): perft counts, legal move lists and
//! game endings. The files live in `data/`; see `data/README.md`.

use rules::{perft, EndRules, Position, Variant};
use std::path::PathBuf;

fn data(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data").join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

struct PerftCase {
    id: String,
    sfen: String,
    counts: Vec<(u32, u64)>,
}

fn perft_cases(file: &str) -> Vec<PerftCase> {
    let mut cases: Vec<PerftCase> = Vec::new();
    for line in data(file).lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("id") => cases.push(PerftCase { id: words.collect(), sfen: String::new(), counts: vec![] }),
            Some("sfen") => cases.last_mut().unwrap().sfen = words.collect::<Vec<_>>().join(" "),
            Some("perft") => {
                let d = words.next().unwrap().parse().unwrap();
                let n = words.next().unwrap().parse().unwrap();
                cases.last_mut().unwrap().counts.push((d, n));
            }
            _ => {}
        }
    }
    cases
}

/// Runs every count in `file` whose node count is within `(min, max]`.
fn check_perft(variant: Variant, file: &str, min: u64, max: u64) -> usize {
    let mut checked = 0;
    for case in perft_cases(file) {
        let mut pos = Position::from_sfen(variant, &case.sfen).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        for &(depth, nodes) in &case.counts {
            if nodes > min && nodes <= max {
                assert_eq!(perft(&mut pos, depth), nodes, "{} depth {depth}", case.id);
                checked += 1;
            }
        }
    }
    checked
}

const SMALL: u64 = 30_000_000;

#[test]
fn shogi_perft_small() {
    assert!(check_perft(Variant::Shogi, "perft/perft-shogi.txt", 0, SMALL) == 59);
}

/// The big counts (start position to depth 6, matsuri depth 4, ...):
/// minutes in all, so CI runs them with `--include-ignored`.
#[test]
#[ignore]
fn shogi_perft_large() {
    assert!(check_perft(Variant::Shogi, "perft/perft-shogi.txt", SMALL, u64::MAX) == 9);
}

#[test]
fn sho_perft() {
    assert!(check_perft(Variant::Sho, "perft/perft-sho.txt", 0, u64::MAX) == 49);
}

fn check_move_lists(variant: Variant, file: &str) -> usize {
    let mut n = 0;
    for (i, line) in data(file).lines().enumerate() {
        let Some((position, expected)) = line.split_once('\t') else { continue };
        let pos = rules::parse_position_command(variant, position).unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1));
        let mut ours: Vec<String> = pos.legal_moves().iter().map(|m| m.to_usi()).collect();
        ours.sort();
        let mut theirs: Vec<String> = expected.split_whitespace().map(str::to_string).collect();
        theirs.sort();
        let missing: Vec<_> = theirs.iter().filter(|m| !ours.contains(m)).collect();
        let extra: Vec<_> = ours.iter().filter(|m| !theirs.contains(m)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{file}:{} {position}\nmissing {missing:?}\nextra {extra:?}",
            i + 1
        );
        n += 1;
    }
    n
}

#[test]
fn shogi_legal_moves_match_cshogi() {
    assert_eq!(check_move_lists(Variant::Shogi, "moves/moves-shogi.tsv"), 300);
}

#[test]
fn sho_legal_moves_match_pyffish() {
    assert_eq!(check_move_lists(Variant::Sho, "moves/moves-sho.tsv"), 200);
}

#[test]
fn shogi_endings() {
    let rules = EndRules::default();
    for (i, line) in data("moves/endings-shogi.tsv").lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let mut pos = Position::from_sfen(Variant::Shogi, f[0]).unwrap();
        for m in f[1].split_whitespace() {
            pos.play_usi(m).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        }
        let got = pos.outcome(&rules).map_or("none ongoing".to_string(), |o| o.to_text());
        assert_eq!(got, f[2], "line {}", i + 1);
    }
}

/// More endings built with cshogi and pyffish (`data/fixtures/README.md`):
/// perpetual check by either side, declarations valid and not, no moves.
/// Lines whose answer is `error illegal_move ...` are checked by the CLI
/// tests; here a declaration token `win` is judged with `can_declare`.
#[test]
fn shogi_endings_extra() {
    let rules = EndRules::default();
    let mut checked = 0;
    for (i, line) in data("fixtures/endings-shogi.tsv").lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let mut pos = Position::from_sfen(Variant::Shogi, f[0]).unwrap();
        let moves: Vec<&str> = f[1].split_whitespace().collect();
        let mut got = None;
        for (ply, m) in moves.iter().enumerate() {
            if *m == "win" {
                got = Some(if pos.can_declare() && ply + 1 == moves.len() {
                    format!("{} declaration", pos.side_to_move().name())
                } else {
                    format!("error illegal_move win ply {}", ply + 1)
                });
                break;
            }
            pos.play_usi(m).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        }
        let got = got.unwrap_or_else(|| pos.outcome(&rules).map_or("none ongoing".to_string(), |o| o.to_text()));
        assert_eq!(got, f[2], "line {}: {line}", i + 1);
        checked += 1;
    }
    assert_eq!(checked, 31);
}

#[test]
fn sho_perft_extra_matches_pyffish_and_sjaak() {
    assert!(check_perft(Variant::Sho, "fixtures/perft-sho-extra.txt", 0, u64::MAX) >= 36);
}
