//! Helpers of the rules crate's integration tests, also included by path from the
//! `koma` front's cshogi tests (koma/tests/records_cshogi.rs).
#![allow(dead_code)]

pub mod fuzz_budget;

use std::path::{Path, PathBuf};
use std::process::Command;

use rules::{Position, Variant};

/// A path of the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(relative)
}

/// The bytes of a file.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of a file (UTF-8).
pub fn read_text(path: &Path) -> String {
    String::from_utf8(read(path)).unwrap()
}

/// A standard shogi position from its SFEN.
pub fn shogi(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

/// SFEN without the move number (which hcpe and psv do not keep).
pub fn position_key(pos: &Position) -> String {
    pos.to_sfen().rsplit_once(' ').unwrap().0.to_string()
}

/// Writes `bits` (first bit first) into `bytes` from bit `at`; returns the bit after.
pub fn set_bits(bytes: &mut [u8; 32], at: usize, bits: &str) -> usize {
    for (i, b) in bits.bytes().enumerate() {
        let (byte, bit) = ((at + i) / 8, (at + i) % 8);
        bytes[byte] = bytes[byte] & !(1 << bit) | ((b == b'1') as u8) << bit;
    }
    at + bits.len()
}

/// A fresh folder `koma-{name}-{process id}` under the temporary folder.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("koma-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The Python that has cshogi (`KOMA_CSHOGI_PYTHON`, else the repository's .venv), or
/// `None` after saying that the test is skipped.
pub fn cshogi_python() -> Option<PathBuf> {
    let python = std::env::var_os("KOMA_CSHOGI_PYTHON").map(PathBuf::from).unwrap_or(repo_path(".venv/bin/python"));
    let ok = Command::new(&python).args(["-c", "import cshogi"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no Python with cshogi (run scripts/install-engines.sh or set KOMA_CSHOGI_PYTHON)");
    }
    ok.then_some(python)
}

/// A small deterministic generator (xorshift), so that a game or a failing case replays
/// from its seed.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// A dai position from `(usi square, code)` pairs; codes as in SFEN
/// (`LN`, `p`, `+P`, `k`), two letters without brackets.
pub fn dai(pieces: &[(&str, &str)], side: &str) -> Position {
    let mut grid = vec![vec![String::new(); 15]; 15];
    for (sq, code) in pieces {
        let file: usize = sq[..sq.len() - 1].parse().unwrap();
        let rank = (sq.as_bytes()[sq.len() - 1] - b'a') as usize;
        let (prom, body) = code.strip_prefix('+').map_or(("", *code), |b| ("+", b));
        let text = if body.len() > 1 { format!("{prom}[{body}]") } else { format!("{prom}{body}") };
        grid[rank][15 - file] = text;
    }
    let rows: Vec<String> = grid
        .iter()
        .map(|row| {
            let mut s = String::new();
            let mut empty = 0;
            for cell in row {
                if cell.is_empty() {
                    empty += 1;
                } else {
                    if empty > 0 {
                        s += &empty.to_string();
                        empty = 0;
                    }
                    s += cell;
                }
            }
            if empty > 0 {
                s += &empty.to_string();
            }
            s
        })
        .collect();
    let sfen = format!("{} {side} - 1", rows.join("/"));
    Position::from_sfen(Variant::Dai, &sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}
