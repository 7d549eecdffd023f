//! `koma convert --to hcpe`: game records (KIF, KI2, CSA, USI) to dlshogi's training
//! positions, one entry per position before each recorded move: that move, the game's
//! result, eval 0 (records carry no engine score). All inputs go into the one output file
//! (`-o FILE`), written atomically. Sample chunks go to hcpe3 with `koma convert-samples`
//! (a network command: reading chunks needs the encoder).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use front::{files_under, BadInput};
use rules::records::hcpe::{self, Entry, GameResult as HcpeResult};
use rules::records::{read_games, Format, Record};
use rules::EndRules;

/// Counts of a conversion to hcpe.
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
    for path in files_under(inputs, |ext| Format::from_extension(ext).is_some_and(|f| f.readable())) {
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

fn report(path: &Path, why: &str, tally: &mut HcpeTally) {
    tally.errors += 1;
    eprintln!("{}: {why}", path.display());
}

/// Runs `koma convert --to hcpe|hcpe3`.
pub fn convert(to: &str, inputs: &[PathBuf], output: Option<&Path>) -> Result<std::process::ExitCode> {
    if to == "hcpe3" {
        return Err(BadInput(
            "hcpe3 is written from sample chunks: `koma convert-samples CHUNKS... -o FILE.hcpe3`".into(),
        )
        .into());
    }
    let output = output.ok_or_else(|| BadInput(format!("--to {to} writes one file: say -o FILE.{to}")))?;
    if inputs.is_empty() {
        return Err(BadInput(format!("--to {to} reads files or folders, not standard input")).into());
    }
    let tally = records_to_hcpe(inputs, output)?;
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
