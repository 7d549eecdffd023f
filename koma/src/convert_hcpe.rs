//! `koma convert --to hcpe` and `--to psv`: game records (KIF, KI2, CSA, USI, or hcpe,
//! hcpe3 and psv read back) to dlshogi's or YaneuraOu's training positions, one entry per
//! position before each recorded move: that move, the game's result, eval 0 (records
//! carry no engine score; [`rules::records::hcpe::entries_of_record`]; psv also keeps the
//! position's ply and says the result for the side to move,
//! [`rules::records::psv::Entry::from_hcpe`]). All inputs go into the one output file
//! (`-o FILE`), written atomically and only when some game gave a position, never over
//! an input. Sample chunks go to hcpe3 with `koma convert-samples` (a network command:
//! reading chunks needs the encoder).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use koma::record_input::Source;
use koma::{files_under, BadInput, InputFiles};
use rules::records::hcpe::{self, entries_of_record};
use rules::records::psv;

/// The training format `--to` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Hcpe,
    Psv,
}

/// Counts of a conversion to hcpe or psv.
#[derive(Default, Debug)]
pub struct HcpeTally {
    pub files: usize,
    pub games: usize,
    pub entries: usize,
    pub errors: usize,
}

/// Records under `inputs` (in the format `from`, else the one each extension tells) to
/// one hcpe or psv file, written when they give at least one entry.
pub fn records_to_entries(
    inputs: &[PathBuf],
    from: Option<Source>,
    output: &Path,
    target: Target,
) -> Result<HcpeTally> {
    let mut tally = HcpeTally::default();
    let mut entries = Vec::new();
    let wanted = |ext: &str| match from {
        Some(f) => f.takes_extension(ext),
        None => Source::from_extension(ext).is_some(),
    };
    for path in files_under(inputs, wanted) {
        tally.files += 1;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let games = std::fs::read(&path).map_err(|e| e.to_string()).and_then(|bytes| {
            let format = from.or(Source::from_extension(ext)).ok_or("cannot tell the format from the extension")?;
            format.read(&bytes, ext).map_err(|e| e.message)
        });
        match games {
            Ok(games) => {
                for g in &games {
                    match entries_of_record(g) {
                        Ok(e) => {
                            tally.games += 1;
                            entries.extend(e);
                        }
                        Err(why) => report(&path, &why.message(), &mut tally),
                    }
                }
            }
            Err(why) => report(&path, &why, &mut tally),
        }
    }
    tally.entries = entries.len();
    if entries.is_empty() {
        tally.errors += 1;
        eprintln!("no position to write: {} not written", output.display());
    } else {
        let saved = match target {
            Target::Hcpe => hcpe::save(output, &entries).map_err(anyhow::Error::from),
            Target::Psv => {
                let entries: Vec<psv::Entry> = entries.iter().map(psv::Entry::from_hcpe).collect();
                psv::save(output, &entries).map_err(anyhow::Error::from)
            }
        };
        saved.with_context(|| format!("writing {}", output.display()))?;
    }
    Ok(tally)
}

fn report(path: &Path, why: &str, tally: &mut HcpeTally) {
    tally.errors += 1;
    eprintln!("{}: {why}", path.display());
}

/// Runs `koma convert --to hcpe|hcpe3|psv`.
pub fn convert(
    to: &str,
    from: Option<Source>,
    inputs: &[PathBuf],
    output: Option<&Path>,
) -> Result<std::process::ExitCode> {
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
    let read = files_under(inputs, |ext| {
        Source::from_extension(ext).is_some() || from.is_some_and(|f| f.takes_extension(ext))
    });
    if InputFiles::new(read.iter().map(PathBuf::as_path)).contains(output) {
        return Err(BadInput(format!("-o {}: that is an input; write to another file", output.display())).into());
    }
    let target = if to == "psv" { Target::Psv } else { Target::Hcpe };
    let tally = records_to_entries(inputs, from, output, target)?;
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
