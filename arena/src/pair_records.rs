//! The measured pairs behind a ladder's ratings (`arena/rung-pairs.toml`): each match's
//! W-D-L per pair, so that `koma ladder fit --records FILE` rates the rungs again from the
//! repository alone, whatever became of the matches' `games.jsonl`.
//!
//! A record reads `A,B=W-D-L`: A's wins, draws and losses against B.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;

use crate::stats::Wdl;

const SHIPPED: &str = include_str!("../rung-pairs.toml");

/// The file format this build reads.
pub const FORMAT: u32 = 1;

/// One pair's result: `a`'s record against `b`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRecord {
    pub a: String,
    pub b: String,
    pub wdl: Wdl,
}

/// Why a record or a records file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PairRecordError {
    #[error("{text}: expected A,B=W-D-L, e.g. fsfn1024000,gps4=24-1-15")]
    BadRecord { text: String },
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: Box<PairRecordError> },
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    #[error("format {found}: this build reads format {FORMAT}")]
    Format { found: u32 },
    #[error("match {name}: {source}")]
    Match { name: String, source: Box<PairRecordError> },
}

impl FromStr for PairRecord {
    type Err = PairRecordError;

    fn from_str(text: &str) -> Result<PairRecord, PairRecordError> {
        let bad = || PairRecordError::BadRecord { text: text.to_string() };
        let (pair, counts) = text.split_once('=').ok_or_else(bad)?;
        let (a, b) = pair.split_once(',').ok_or_else(bad)?;
        let (a, b) = (a.trim(), b.trim());
        let counts: Vec<u32> =
            counts.split('-').map(|c| c.trim().parse()).collect::<Result<_, _>>().map_err(|_| bad())?;
        let [wins, draws, losses] = counts[..] else { return Err(bad()) };
        if a.is_empty() || b.is_empty() || a == b || wins + draws + losses == 0 {
            return Err(bad());
        }
        Ok(PairRecord { a: a.to_string(), b: b.to_string(), wdl: Wdl { wins, draws, losses } })
    }
}

/// The file's form: a format version, then the matches, each with its pairs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordsFile {
    format: u32,
    #[serde(rename = "match")]
    matches: Vec<MatchRecords>,
}

/// One match of a records file: where it was measured, and its pairs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchRecords {
    name: String,
    #[allow(dead_code)] // documentation for the reader of the file
    date: String,
    pairs: Vec<String>,
}

/// Every pair record of a records file's text, in order.
pub fn from_toml(text: &str) -> Result<Vec<PairRecord>, PairRecordError> {
    let file: RecordsFile = toml::from_str(text)?;
    if file.format != FORMAT {
        return Err(PairRecordError::Format { found: file.format });
    }
    let mut out = Vec::new();
    for m in file.matches {
        for p in &m.pairs {
            let record = p.parse().map_err(|e| PairRecordError::Match { name: m.name.clone(), source: Box::new(e) })?;
            out.push(record);
        }
    }
    Ok(out)
}

/// A records file's pairs.
pub fn load(path: &Path) -> Result<Vec<PairRecord>, PairRecordError> {
    let text = std::fs::read_to_string(path).map_err(|source| PairRecordError::Read { path: path.into(), source })?;
    from_toml(&text).map_err(|e| PairRecordError::File { path: path.into(), source: Box::new(e) })
}

/// The pairs behind the shipped shogi ladder (`arena/rung-pairs.toml`, built in).
pub fn shipped() -> Vec<PairRecord> {
    from_toml(SHIPPED).expect("arena/rung-pairs.toml is valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ladder::{add_pair_record, Ladder};

    #[test]
    fn a_record_reads_as_the_first_players_result() {
        let r: PairRecord = "fsfn1024000, gps4=24-1-15".parse().unwrap();
        assert_eq!((r.a.as_str(), r.b.as_str()), ("fsfn1024000", "gps4"));
        assert_eq!(r.wdl, Wdl { wins: 24, draws: 1, losses: 15 });
        for bad in ["a,b=1-2", "a=1-0-1", "a,b=x-0-1", "a,a=1-0-1", "a,b=0-0-0", ",b=1-0-0", "a,b=1-0-1-2"] {
            assert!(matches!(bad.parse::<PairRecord>(), Err(PairRecordError::BadRecord { .. })), "{bad}");
        }
        assert!(matches!(from_toml("format = 2\nmatch = []\n"), Err(PairRecordError::Format { found: 2 })));
        let bad_pair = "format = 1\n[[match]]\nname = \"m\"\ndate = \"d\"\npairs = [\"a,b=1-0\"]\n";
        assert!(matches!(from_toml(bad_pair), Err(PairRecordError::Match { .. })));
    }

    /// The shipped ladder's ratings from fsf5 up are the fit of the shipped pairs (fsf5 held
    /// at its rating), to the Elo: the table is the records' consequence, not copied numbers.
    #[test]
    fn the_shipped_ladder_from_fsf5_up_is_the_fit_of_the_shipped_pairs() {
        let (mut names, mut results) = (Vec::new(), Vec::new());
        for r in shipped() {
            add_pair_record(&mut names, &mut results, &r.a, &r.b, r.wdl);
        }
        let anchor = names.iter().position(|n| n == "fsf5").unwrap();
        let ratings = crate::stats::ratings(&results, anchor);
        let ladder = Ladder::shipped();
        let fsf5 = ladder.rung("fsf5").unwrap().elo;
        let mut checked = 0;
        for rung in &ladder.rungs {
            if let Some(i) = names.iter().position(|n| *n == rung.name) {
                assert_eq!((fsf5 + ratings[i]).round(), rung.elo, "{}", rung.name);
                checked += 1;
            }
        }
        let above_fsf5 = ladder.rungs.iter().filter(|r| r.elo > fsf5).count();
        assert_eq!(checked, above_fsf5 + 1, "every rung above fsf5 has its pairs in the records");
    }
}
