//! `koma convert --to hcpe|hcpe3`: training data for dlshogi-style trainers.
//!
//! - game records (KIF, KI2, CSA, USI) to `hcpe`: one entry per position before each
//!   recorded move: that move, the game's result, eval 0 (records carry no engine score);
//! - koma sample chunks (self-play, `koma gen`) to `hcpe3`: each sample is a one-move game
//!   from its position, the policy target as candidate visit counts (out of 10000), the
//!   search value as the eval (dlshogi's logistic scale, 756 per unit) and the result.
//!
//! All inputs go into the one output file (`-o FILE`), written atomically.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use model::encoding::Encoder;
use rules::records::hcpe::{self, hcpe3, Entry, GameResult as HcpeResult};
use rules::records::{read_games, Format, Record};
use rules::{EndRules, Variant};
use selfplay::samples::{read_chunk, GameResult, Sample, CHUNK_EXTENSION};

use crate::BadInput;

/// Visits the policy of a sample is scaled to.
const VISITS: f32 = 10000.0;
/// dlshogi's `eval_coef`: centipawns per logistic unit.
const EVAL_SCALE: f64 = 756.0;

/// Counts of a conversion to hcpe or hcpe3.
#[derive(Default, Debug)]
pub struct HcpeTally {
    pub files: usize,
    pub games: usize,
    pub entries: usize,
    pub errors: usize,
}

/// Records under `inputs` to one hcpe file.
pub fn records_to_hcpe(inputs: &[PathBuf], output: &Path) -> Result<HcpeTally> {
    let mut tally = HcpeTally::default();
    let mut entries = Vec::new();
    for path in input_files(inputs, |ext| Format::from_extension(ext).is_some_and(|f| f.readable())) {
        tally.files += 1;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let format = Format::from_extension(ext).filter(|f| f.readable());
        let games = std::fs::read(&path).map_err(|e| e.to_string()).and_then(|bytes| {
            let format = format.ok_or("cannot tell the format from the extension")?;
            read_games(format, &bytes, Format::encoding_of_extension(ext)).map_err(|e| e.message())
        });
        match games {
            Ok(games) => {
                for g in &games {
                    match record_entries(g) {
                        Ok(e) => {
                            tally.games += 1;
                            entries.extend(e);
                        }
                        Err(why) => report(&path, &why, &mut tally),
                    }
                }
            }
            Err(why) => report(&path, &why, &mut tally),
        }
    }
    tally.entries = entries.len();
    hcpe::save(output, &entries).with_context(|| format!("writing {}", output.display()))?;
    Ok(tally)
}

/// The hcpe entries of one record.
pub fn record_entries(record: &Record) -> Result<Vec<Entry>, String> {
    let final_pos = record.final_position().map_err(|e| e.message())?;
    let winner = match &record.end {
        Some(end) => end.winner,
        None => final_pos.outcome(&EndRules::default()).and_then(|o| o.winner),
    };
    let result = HcpeResult::from_winner(winner);
    let mut out = Vec::with_capacity(record.moves.len());
    record
        .replay(|pos, _, m| out.push(Entry { position: pos.clone(), best_move: m.mv, eval: 0, result }))
        .map_err(|e| e.message())?;
    Ok(out)
}

/// Sample chunks under `inputs` to one hcpe3 file.
pub fn chunks_to_hcpe3(inputs: &[PathBuf], output: &Path) -> Result<HcpeTally> {
    let mut tally = HcpeTally::default();
    let encoder = Encoder::new(Variant::Shogi);
    let mut games = Vec::new();
    for path in input_files(inputs, |ext| ext == CHUNK_EXTENSION) {
        tally.files += 1;
        let chunk = match read_chunk(&path) {
            Ok(c) if c.header.variant == Variant::Shogi => c,
            Ok(c) => {
                report(&path, &format!("a {} chunk; hcpe3 holds standard shogi", c.header.variant), &mut tally);
                continue;
            }
            Err(e) => {
                report(&path, &e.to_string(), &mut tally);
                continue;
            }
        };
        for (i, s) in chunk.samples.iter().enumerate() {
            match sample_game(s, &encoder) {
                Ok(g) => games.push(g),
                Err(why) => report(&path, &format!("sample {i}: {why}"), &mut tally),
            }
        }
    }
    tally.games = games.len();
    tally.entries = games.len();
    hcpe3::save(output, &games).with_context(|| format!("writing {}", output.display()))?;
    Ok(tally)
}

/// One sample as a one-move hcpe3 game.
pub fn sample_game(s: &Sample, encoder: &Encoder) -> Result<hcpe3::Game, String> {
    let pos = s.position(Variant::Shogi).map_err(|e| e.to_string())?;
    let legal = pos.legal_moves();
    let mut candidates = Vec::with_capacity(s.policy.len());
    for &(label, p) in &s.policy {
        let mv = encoder
            .index_move_among(&pos, label as usize, &legal)
            .ok_or_else(|| format!("policy label {label} is not a legal move of {}", s.sfen))?;
        let visits = (p * VISITS).round() as u16;
        if visits > 0 {
            candidates.push((mv, visits));
        }
    }
    let mv = candidates.iter().max_by_key(|c| c.1).map(|c| c.0).ok_or("an empty policy target")?;
    let side = pos.side_to_move();
    let winner = match s.result.ok_or("the game's result is unknown (hcpe3 has no such result)")? {
        GameResult::Win => Some(side),
        GameResult::Loss => Some(side.opponent()),
        GameResult::Draw => None,
    };
    Ok(hcpe3::Game {
        start: pos,
        moves: vec![hcpe3::MoveEntry { mv, eval: eval_of(s.root_wdl), candidates }],
        result: HcpeResult::from_winner(winner),
        ending: hcpe3::Ending::Unmarked,
        opponent: hcpe3::Opponent::SelfPlay,
    })
}

/// The search value (win - loss as a score in [0, 1]) on dlshogi's eval scale.
fn eval_of(wdl: [f32; 3]) -> i16 {
    let p = (wdl[0] as f64 + 0.5 * wdl[1] as f64).clamp(1e-4, 1.0 - 1e-4);
    (EVAL_SCALE * (p / (1.0 - p)).ln()).round().clamp(-32000.0, 32000.0) as i16
}

fn report(path: &Path, why: &str, tally: &mut HcpeTally) {
    tally.errors += 1;
    eprintln!("{}: {why}", path.display());
}

/// Files under `inputs` (folders searched recursively, sorted) whose extension `wanted`.
fn input_files(inputs: &[PathBuf], wanted: impl Fn(&str) -> bool + Copy) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in inputs {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let Ok(rd) = std::fs::read_dir(p) else { continue };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                out.extend(input_files(&[e], wanted));
            } else if wanted(e.extension().and_then(|x| x.to_str()).unwrap_or("")) {
                out.push(e);
            }
        }
    }
    out
}

/// Runs `koma convert --to hcpe|hcpe3`.
pub fn convert(to: &str, inputs: &[PathBuf], output: Option<&Path>) -> Result<std::process::ExitCode> {
    let output = output.ok_or_else(|| BadInput(format!("--to {to} writes one file: say -o FILE.{to}")))?;
    if inputs.is_empty() {
        return Err(BadInput(format!("--to {to} reads files or folders, not standard input")).into());
    }
    let tally = match to {
        "hcpe" => records_to_hcpe(inputs, output)?,
        _ => chunks_to_hcpe3(inputs, output)?,
    };
    eprintln!(
        "files {}, games {}, entries {}, errors {} -> {}",
        tally.files,
        tally.games,
        tally.entries,
        tally.errors,
        output.display()
    );
    Ok(if tally.errors > 0 { std::process::ExitCode::from(2) } else { std::process::ExitCode::SUCCESS })
}
