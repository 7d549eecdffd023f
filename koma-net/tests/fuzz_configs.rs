//! Fuzzing the config files the network commands read, byte by byte: the shipped
//! `configs/*.toml` through the trainer's loader (`trainer::TrainFileConfig`, what
//! `koma train`, `koma selfplay`, `koma learn` read with `--config`) and the shipped
//! ladders (`arena/ladder*.toml`, `koma ladder --ladder`) and the ladder's pair records
//! (`arena/rung-pairs.toml`, `koma ladder fit --records`) through the arena's, mutated
//! (bytes flipped, set, inserted, deleted; numbers put past their ranges and types;
//! separators, quotes and brackets inserted; lines dropped or doubled). No text may
//! panic a loader or hang it; a refused config names the file; an accepted one is
//! exactly what it reads back as once its tables are written out again. (The trainer's
//! own tests/config_fuzz.rs mutates whole keys and values.) Bounded by default;
//! `KOMA_FUZZ_CASES=<n>` runs n texts a surface (`cargo test --release -p koma-net
//! --test fuzz_configs -- --nocapture` prints the counts).

#[path = "../../rules/tests/support/fuzz_budget.rs"]
mod fuzz_budget;

use std::path::Path;
use std::time::{Duration, Instant};

use fuzz_budget::{cases, more, time_cap, Watchdog};
use search::Rng;
use trainer::TrainFileConfig;

/// Text that config readers meet at their edges.
const EDGES: [&str; 24] = [
    "0",
    "-1",
    "1e400",
    "nan",
    "inf",
    "-inf",
    "18446744073709551616",
    "9223372036854775808",
    "0.0",
    "1.5",
    "\"",
    "'",
    "[",
    "]",
    "[[",
    "]]",
    "=",
    "#",
    "\n",
    "{",
    "}",
    ",",
    "\"\"\"",
    "\\u0000",
];

fn shipped(dir: &str, prefix: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {prefix}*.toml in {}", dir.display());
    files
}

/// `text` with one to three edits.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let len = bytes.len();
        let at = rng.below(len + 1);
        let edge = EDGES[rng.below(EDGES.len())].as_bytes();
        match rng.below(7) {
            0 if at < len => bytes[at] ^= 1 << rng.below(8),
            1 if at < len => bytes[at] = rng.next_u64() as u8,
            2 => bytes.insert(at, rng.next_u64() as u8),
            3 if at < len => {
                bytes.drain(at..(at + 1 + rng.below(6)).min(len));
            }
            4 => {
                bytes.splice(at..at, edge.iter().copied());
            }
            // A number replaced by an edge.
            5 => {
                let start = (at..len).find(|&i| bytes[i].is_ascii_digit()).unwrap_or(len);
                let end = (start..len).find(|&i| !bytes[i].is_ascii_digit() && bytes[i] != b'.').unwrap_or(len);
                bytes.splice(start..end, EDGES[rng.below(10)].bytes());
            }
            // A line dropped or doubled.
            _ if at < len => {
                let start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let end = bytes[at..].iter().position(|&b| b == b'\n').map_or(len, |i| at + i + 1);
                let line: Vec<u8> = bytes[start..end].to_vec();
                if rng.bernoulli(0.5) {
                    bytes.drain(start..end);
                } else {
                    bytes.splice(end..end, line);
                }
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The config's tables written out again, as a file would give them.
fn written(cfg: &TrainFileConfig) -> String {
    let mut doc = toml::Table::new();
    doc.insert("variant".into(), toml::Value::String(cfg.base.variant.name().into()));
    let tables = [
        ("model", toml::Value::try_from(&cfg.base.model)),
        ("search", toml::Value::try_from(&cfg.base.search)),
        ("selfplay", toml::Value::try_from(&cfg.base.selfplay)),
        ("train", toml::Value::try_from(&cfg.train)),
        ("eval", toml::Value::try_from(&cfg.eval)),
    ];
    for (name, value) in tables {
        doc.insert(name.into(), value.unwrap_or_else(|e| panic!("[{name}] does not serialise: {e}")));
    }
    toml::to_string(&doc).unwrap()
}

/// An accepted config reads back the same from its tables written out.
fn check_train_config(text: &str) -> Result<bool, String> {
    let cfg = match TrainFileConfig::from_toml(text, "fuzz.toml") {
        Ok(cfg) => cfg,
        Err(e) if e.to_string().starts_with("fuzz.toml: ") => return Ok(false),
        Err(e) => return Err(format!("an error that names no file: {e}")),
    };
    let again = written(&cfg);
    let back = TrainFileConfig::from_toml(&again, "again.toml").map_err(|e| format!("written back, refused: {e}"))?;
    if (&back.base, &back.train, &back.eval) != (&cfg.base, &cfg.train, &cfg.eval) {
        return Err(format!("written back, read as another config:\n{again}"));
    }
    Ok(true)
}

fn check_ladder(text: &str) -> Result<bool, String> {
    Ok(arena::Ladder::from_toml(text).is_ok())
}

fn check_rung_pairs(text: &str) -> Result<bool, String> {
    Ok(arena::pair_records::from_toml(text).is_ok())
}

fn run(surface: &str, seed: u64, seeds: &[(String, String)], check: impl Fn(&str) -> Result<bool, String>) {
    let mut rng = Rng::new(fuzz_budget::seed(seed));
    let watchdog = Watchdog::new(surface);
    let (n, cap, start) = (cases(3000), time_cap(Duration::from_secs(10)), Instant::now());
    let (mut tried, mut accepted) = (0u64, 0u64);
    while more(tried, n, start, cap) {
        let (name, seed_text) = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, seed_text);
        let (verdict, took) = watchdog.case(|| format!("{name} mutated:\n{text}"), || check(&text));
        match verdict {
            Ok(ok) => accepted += ok as u64,
            Err(why) => panic!("{surface}: {why}\n--- {name} mutated ---\n{text}"),
        }
        assert!(took < fuzz_budget::slow(), "{surface}: {took:?} for {name} mutated:\n{text}");
        tried += 1;
    }
    println!("fuzz {surface}: {tried} texts, {accepted} accepted");
}

#[test]
fn fuzz_train_configs() {
    let configs = shipped("configs", "");
    for (name, text) in &configs {
        assert_eq!(check_train_config(text), Ok(true), "{name} as shipped");
    }
    run("configs/*.toml", 0xc0f1_9001, &configs, check_train_config);
}

/// The shipped `arena/PREFIX*.toml` files, each accepted as it is, then mutated.
fn fuzz_arena_files(prefix: &str, seed: u64, check: impl Fn(&str) -> Result<bool, String>) {
    let files = shipped("arena", prefix);
    for (name, text) in &files {
        assert_eq!(check(text), Ok(true), "{name} as shipped");
    }
    run(&format!("arena/{prefix}*.toml"), seed, &files, check);
}

#[test]
fn fuzz_ladders() {
    fuzz_arena_files("ladder", 0xc0f1_9002, check_ladder);
}

#[test]
fn fuzz_rung_pairs() {
    fuzz_arena_files("rung-pairs", 0xc0f1_9003, check_rung_pairs);
}
