//! Fuzzing `koma convert` end to end: record files (the fixtures of every format) and
//! hcpe/hcpe3 files (cshogi's), with up to two bytes flipped, set, inserted or deleted
//! or the file cut short (a third of them as they are), converted by the real binary to
//! every format and to hcpe, over an output that exists. The binary never panics or hangs (a time
//! bound per run), exits 0 or 2, leaves the output as it was unless a game converted,
//! and what it writes reads back as the games it counted. The readers themselves are
//! fuzzed in depth in koma-rules (tests fuzz_text, fuzz_hcpe). Bounded by default;
//! `KOMA_FUZZ_CASES=<n>` runs n conversions.

mod common;
#[path = "../../rules/tests/support/fuzz_budget.rs"]
mod fuzz_budget;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{repo_path, scratch, KOMA};
use fuzz_budget::{cases, more, time_cap};
use rules::records::hcpe;
use rules::records::{read_games, Format};

const EARLIER: &[u8] = b"earlier output";

/// Inputs to mutate: (file name, bytes).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = repo_path("data/fixtures/records");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| Format::from_extension(p.extension().and_then(|x| x.to_str()).unwrap_or("")).is_some())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    for name in ["cshogi.hcpe", "cshogi.hcpe3"] {
        files.push((name.into(), std::fs::read(repo_path(&format!("data/hcpe/{name}"))).unwrap()));
    }
    files.sort();
    files
}

fn mutate(rng: &mut u64, bytes: &[u8]) -> Vec<u8> {
    let mut next = |n: usize| {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        (*rng % n.max(1) as u64) as usize
    };
    let mut out = bytes.to_vec();
    for _ in 0..next(3) {
        let len = out.len();
        let at = next(len + 1);
        match next(10) {
            0..=2 if at < len => out[at] ^= 1 << next(8),
            3 | 4 if at < len => out[at] = next(256) as u8,
            5 | 6 => out.insert(at, next(256) as u8),
            7 | 8 if at < len => {
                out.drain(at..(at + 1 + next(3)).min(len));
            }
            9 => out.truncate(at),
            _ => {}
        }
    }
    out
}

/// Runs `koma` with `args`, killing it past the slow limit; `None` if it had to be killed.
fn run(args: &[&str]) -> Option<(i32, String)> {
    let mut child = Command::new(KOMA).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > fuzz_budget::slow() {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = child.wait_with_output().unwrap();
    Some((out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// The count `what N` of the summary (`games`, `entries`).
fn counted(stderr: &str, what: &str) -> Option<usize> {
    let summary = stderr.lines().last()?;
    summary.split(", ").find_map(|f| f.strip_prefix(what)?.strip_prefix(' ')?.parse().ok())
}

/// One conversion of `input` to `to`: `Ok(games converted)`, or what went wrong.
fn check(dir: &Path, input: &Path, to: &str) -> Result<usize, String> {
    let extension = if to == "kif" { "kifu" } else { to };
    let output: PathBuf = dir.join(format!("out.{extension}"));
    std::fs::write(&output, EARLIER).unwrap();
    let args = ["convert", input.to_str().unwrap(), "--to", to, "-o", output.to_str().unwrap()];
    let (code, stderr) = run(&args).ok_or("took longer than the slow limit")?;
    if code != 0 && code != 2 {
        return Err(format!("exit status {code}:\n{stderr}"));
    }
    let games = counted(&stderr, "games").ok_or(format!("no summary:\n{stderr}"))?;
    let written = std::fs::read(&output).unwrap_or_default();
    // hcpe is written when some game had a move.
    if games == 0 || (to == "hcpe" && counted(&stderr, "entries") == Some(0)) {
        return if written == EARLIER { Ok(0) } else { Err(format!("nothing converted, output replaced:\n{stderr}")) };
    }
    // KIF and KI2 write a file a game: out-1, out-2... when there are several.
    let several = matches!(to, "kif" | "ki2") && games > 1;
    let files: Vec<PathBuf> = match several {
        true => (1..=games).map(|i| dir.join(format!("out-{i}.{extension}"))).collect(),
        false => vec![output],
    };
    let mut read_back = 0;
    for file in &files {
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}\n{stderr}", file.display()))?;
        let n = match to {
            "hcpe" => hcpe::from_bytes(&bytes).map(|e| hcpe::records_of_entries(&e).len()).map_err(|e| e.to_string()),
            _ => read_games(Format::from_name(to).unwrap(), &bytes, None).map(|g| g.len()).map_err(|e| e.to_string()),
        };
        read_back += n.map_err(|e| format!("{} does not read back ({e}):\n{stderr}", file.display()))?;
        if several {
            std::fs::remove_file(file).unwrap();
        }
    }
    // hcpe joins games that continue each other and keeps none without moves.
    let agrees = if to == "hcpe" { read_back <= games } else { read_back == games };
    if !agrees {
        return Err(format!("{games} games converted, {read_back} read back:\n{stderr}"));
    }
    Ok(games)
}

#[test]
fn fuzz_convert_runs() {
    let dir = scratch("koma-fuzz-convert");
    let seeds = seeds();
    let mut rng = fuzz_budget::seed(0x00C0_4E27_0000_0001);
    let (n, cap, start) = (cases(300), time_cap(Duration::from_secs(10)), Instant::now());
    let (mut tried, mut converted) = (0u64, 0u64);
    while more(tried, n, start, cap) {
        let (name, bytes) = &seeds[tried as usize % seeds.len()];
        let mutated = mutate(&mut rng, bytes);
        let input = dir.join(name);
        std::fs::write(&input, &mutated).unwrap();
        let to = ["kif", "ki2", "csa", "usi", "hcpe"][(rng % 5) as usize];
        match check(&dir, &input, to) {
            Ok(games) => converted += (games > 0) as u64,
            Err(why) => {
                let kept = dir.join(format!("failed-{name}"));
                std::fs::write(&kept, &mutated).unwrap();
                panic!("koma convert {name} (mutated, kept as {}) --to {to}: {why}", kept.display());
            }
        }
        tried += 1;
    }
    println!("fuzz koma convert: {tried} runs, {converted} converted something");
    let _ = std::fs::remove_dir_all(&dir);
}
