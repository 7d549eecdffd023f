//! `koma convert --to psv` and `--from psv`: records become YaneuraOu's PackedSfenValue
//! files and psv files read back as their games, driven through the real binary; where
//! the reference Python with cshogi is installed, cshogi reads what koma wrote.

use std::path::Path;
use std::process::Command;

mod common;

use common::{koma, repo_path, run_ok, scratch, stderr, stdout, KOMA};
use rules::records::psv::{self, GameResult};
use rules::records::{read_games, Format};
use rules::{Color, Position, Variant};

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn records_become_psv_and_read_back_as_their_games() {
    let dir = scratch("koma-convert-psv");
    let records = dir.join("games.csa");
    // Gote, to move after move 5, resigns: sente won.
    let csa = "V2.2\nPI\n+\n+7776FU\n-3334FU\n+8822UM\n-3122GI\n+0045KA\n%TORYO\n";
    std::fs::write(&records, csa).unwrap();
    let out = dir.join("games.psv");
    // The format from -o's extension.
    let o = run_ok(KOMA, &["convert", "-o"], &[&out, &records]);
    assert!(stderr(&o).contains("files 1, games 1, entries 5, errors 0"), "{}", stderr(&o));
    let entries = psv::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[0].position, Position::startpos(Variant::Shogi));
    let moves: Vec<String> = entries.iter().map(|e| e.best_move.to_usi()).collect();
    assert_eq!(moves, ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]);
    assert_eq!(entries.iter().map(|e| e.game_ply).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    // Sente won: sente's positions are wins, gote's losses.
    let results: Vec<GameResult> = entries.iter().map(|e| e.result).collect();
    use GameResult::{Loss, Win};
    assert_eq!(results, [Win, Loss, Win, Loss, Win]);
    assert!(entries.iter().all(|e| e.score == 0 && e.winner() == Some(Color::Sente)));

    // psv back to CSA: the same moves and the winner.
    let o = run_ok(KOMA, &["convert", "--to", "csa"], &[&out]);
    let games = read_games(Format::Csa, &o.stdout, None).unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].usi_moves(), moves);
    assert_eq!(games[0].end.as_ref().and_then(|e| e.winner), Some(Color::Sente));

    // A `.bin` file is psv when --from says so (also in a folder); not guessed.
    let folder = dir.join("bins");
    std::fs::create_dir_all(&folder).unwrap();
    let bin = folder.join("teacher.bin");
    std::fs::copy(&out, &bin).unwrap();
    let o = run_ok(KOMA, &["convert", "--from", "psv", "--to", "usi"], &[&folder]);
    assert_eq!(stdout(&o), "position startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\n");
    let o = koma(&["convert", "--to", "usi", path(&bin)], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("say --from"), "{}", stderr(&o));
    // --to psv with a .bin output.
    let again = dir.join("again.bin");
    run_ok(KOMA, &["convert", "--from", "psv", "--to", "psv", "-o"], &[&again, &bin]);
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&out).unwrap());

    // cshogi reads the same positions and moves.
    let python = repo_path(".venv/bin/python");
    match Command::new(&python).arg(repo_path("scripts/ref/check_psv.py")).arg("read").arg(&out).output() {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), entries.len(), "{text}");
            for (line, e) in lines.iter().zip(&entries) {
                let f: Vec<&str> = line.split('\t').collect();
                let ours = e.position.to_sfen();
                assert_eq!(f[0], ours.rsplit_once(' ').unwrap().0);
                assert_eq!(
                    f[1..],
                    [e.best_move.to_usi(), "0".into(), e.game_ply.to_string(), e.result.code().to_string()]
                );
            }
        }
        other => eprintln!("skipped the cshogi check: {python:?} with cshogi not available ({other:?})"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cshogi_psv_reads_back_as_its_games() {
    let fixture = repo_path("data/psv/cshogi.psv");
    let entries = psv::from_bytes(&std::fs::read(&fixture).unwrap()).unwrap();
    let o = run_ok(KOMA, &["convert", "--to", "usi"], &[&fixture]);
    let games = read_games(Format::Usi, &o.stdout, None).unwrap();
    assert_eq!(games.len(), 4, "{}", stdout(&o));
    assert!(stderr(&o).contains(&format!("files 1, games 4, moves {}", entries.len())), "{}", stderr(&o));
    let moves: Vec<String> = games.iter().flat_map(|g| g.usi_moves()).collect();
    assert_eq!(moves, entries.iter().map(|e| e.best_move.to_usi()).collect::<Vec<_>>());
}

#[test]
fn a_damaged_psv_file_is_named_with_the_byte_at_fault() {
    let dir = scratch("koma-convert-psv-bad");
    let good = std::fs::read(repo_path("data/psv/cshogi.psv")).unwrap();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("cut.psv", good[..79].to_vec(), "byte 40: the data ends inside a psv record (39 of 40 bytes)"),
        ("move.psv", [&good[..34], &[0, 0], &good[36..80]].concat(), "byte 34: 0x0000 is not a 16-bit move"),
        ("code.psv", [&[0xffu8; 32], &good[32..40]].concat(), "byte 0: "),
    ];
    for (name, bytes, message) in cases {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let o = koma(&["convert", "--to", "usi", path(&file)], "");
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = stderr(&o);
        assert!(err.contains(&format!("{name}: {message}")), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
