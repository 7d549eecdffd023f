//! `koma convert --to hcpe`: records become dlshogi's hcpe, read back by koma's reader and
//! (where the reference Python with cshogi is installed) by cshogi.

use std::path::Path;
use std::process::{Command, Output};

mod common;

use common::{repo_path as data, run_ok, scratch, KOMA};
use rules::records::hcpe;
use rules::{Position, Variant};

fn run(args: &[&str], extra: &[&Path]) -> Output {
    run_ok(KOMA, args, extra)
}

#[test]
fn convert_records_to_hcpe_reads_back_the_same_positions() {
    let dir = scratch("koma-convert-hcpe");
    let records = dir.join("games.usi");
    std::fs::write(&records, "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\nstartpos moves 2g2f 8c8d 2f2e 8d8e\n").unwrap();
    let out = dir.join("games.hcpe");
    run(&["convert", "--to", "hcpe", "-o"], &[&out, &records]);
    let entries = hcpe::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(entries.len(), 9);
    assert_eq!(entries[0].position, Position::startpos(Variant::Shogi));
    assert_eq!(entries[0].best_move.to_usi(), "7g7f");
    assert_eq!(entries[4].best_move.to_usi(), "B*4e");
    assert!(entries.iter().all(|e| e.eval == 0));
    // cshogi reads the same positions and moves.
    let python = data(".venv/bin/python");
    let check = data("scripts/ref/check_hcpe.py");
    match Command::new(&python).arg(&check).arg("read").arg(&out).output() {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), entries.len(), "{text}");
            for (line, e) in lines.iter().zip(&entries) {
                let f: Vec<&str> = line.split('\t').collect();
                // cshogi numbers every position 1: compare board, side and hands.
                let ours = e.position.to_sfen();
                let fields = |s: &str| s.split(' ').take(3).map(String::from).collect::<Vec<_>>();
                assert_eq!(fields(f[0]), fields(&ours));
                assert_eq!(f[1], e.best_move.to_usi());
            }
        }
        other => eprintln!("skipped the cshogi check: {python:?} with cshogi not available ({other:?})"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
