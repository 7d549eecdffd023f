//! cshogi, an independent reader, opens the `.kif` (Shift_JIS) and `.csa` files that
//! `koma convert` and `koma arena` write and finds the same games in them. Skipped with
//! a message where no Python with cshogi is at hand (`scripts/install-engines.sh`
//! installs it into `.venv`; `KOMA_CSHOGI_PYTHON` names another Python).

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../rules/tests/support/mod.rs"]
mod support;

use support::{cshogi_python, repo_path};

mod common;

use common::{koma, stdout};

/// One game as cshogi read it: the start (SFEN without the move number) and the moves.
#[derive(Debug, PartialEq)]
struct Game {
    start: String,
    moves: Vec<String>,
}

/// cshogi's reading of each file, in order.
fn read_with_cshogi(python: &Path, files: &[PathBuf]) -> Vec<Vec<Game>> {
    let out = Command::new(python).arg(repo_path("scripts/ref/cshogi_read_records.py")).args(files).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "cshogi could not read every file:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            v["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| Game {
                    start: without_move_number(g["sfen"].as_str().unwrap()),
                    moves: g["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect(),
                })
                .collect()
        })
        .collect()
}

fn without_move_number(sfen: &str) -> String {
    let fields: Vec<&str> = sfen.split_whitespace().collect();
    fields[..fields.len().min(3)].join(" ")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("koma-cshogi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn cshogi_reads_the_kif_and_csa_that_koma_convert_writes() {
    let Some(python) = cshogi_python() else { return };
    let dir = temp_dir("convert");
    let names = ["even-mate", "even-resign", "even-sennichite", "handicap-2piece", "position-mate"];
    let sources: Vec<PathBuf> = names.iter().map(|n| repo_path(&format!("data/fixtures/records/{n}.csa"))).collect();
    let mut args = vec!["convert".to_string(), "--to".into(), "kif".into(), "-o".into()];
    args.push(dir.join("kif").to_str().unwrap().into());
    args.extend(sources.iter().map(|s| s.to_str().unwrap().to_string()));
    let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = koma(&args_ref, "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    args[2] = "csa".into();
    args[4] = dir.join("csa").to_str().unwrap().into();
    let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(koma(&args_ref, "").status.success());

    let kif: Vec<PathBuf> = names.iter().map(|n| dir.join(format!("kif/{n}.kif"))).collect();
    let csa: Vec<PathBuf> = names.iter().map(|n| dir.join(format!("csa/{n}.csa"))).collect();
    for file in &kif {
        let bytes = std::fs::read(file).unwrap();
        assert!(String::from_utf8(bytes).is_err(), "{}: a .kif file is Shift_JIS", file.display());
    }
    let originals = read_with_cshogi(&python, &sources);
    assert_eq!(read_with_cshogi(&python, &csa), originals, "our .csa files, read by cshogi");
    // cshogi's KIF parser opens every file but skips board diagrams (it plays a
    // position's moves from the even start), so its moves are compared for the games
    // from the even start and from handicaps (`手合割`) only.
    let kif_read = read_with_cshogi(&python, &kif);
    for ((name, ours), theirs) in names.iter().zip(&kif_read).zip(&originals) {
        if !name.starts_with("position-") {
            assert_eq!(ours, theirs, "{name}.kif read by cshogi");
        }
    }

    // To standard output, UTF-8.
    let o = koma(&["convert", "--to", "kif", sources[0].to_str().unwrap()], "");
    assert!(stdout(&o).starts_with("#KIF version=2.0 encoding=UTF-8"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cshogi_reads_the_records_of_koma_arena() {
    let Some(python) = cshogi_python() else { return };
    let dir = temp_dir("arena");
    let out = dir.join("match");
    let o = koma(
        &[
            "arena",
            "--player",
            "random=random",
            "--player",
            "greedy=greedy",
            "--games",
            "4",
            "--max-plies",
            "120",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let mut expected: Vec<(usize, Game)> = jsonl
        .lines()
        .map(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            let moves = g["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
            (
                g["game"].as_u64().unwrap() as usize,
                Game { start: without_move_number(g["start"].as_str().unwrap()), moves },
            )
        })
        .collect();
    let csa_order: Vec<Game> =
        expected.iter().map(|(_, g)| Game { start: g.start.clone(), moves: g.moves.clone() }).collect();
    expected.sort_by_key(|(n, _)| *n);
    let kif: Vec<PathBuf> = expected.iter().map(|(n, _)| out.join(format!("kif/{n:05}.kif"))).collect();
    let read = read_with_cshogi(&python, &kif);
    let read: Vec<Game> = read.into_iter().flatten().collect();
    assert_eq!(read, expected.into_iter().map(|(_, g)| g).collect::<Vec<_>>(), "kif/*.kif read by cshogi");
    // games.csa holds the games in the order they finished, as games.jsonl does.
    let csa = read_with_cshogi(&python, &[out.join("games.csa")]).pop().unwrap();
    assert_eq!(csa, csa_order, "games.csa read by cshogi");
    let _ = std::fs::remove_dir_all(&dir);
}
