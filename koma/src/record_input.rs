//! What `koma convert` and `koma book` read: game records (KIF, KI2, CSA, USI), dlshogi's hcpe and
//! hcpe3 files and YaneuraOu's psv (PackedSfenValue) files, named by `--from` or told by
//! a file's extension, read into [`Record`]s. hcpe, hcpe3 and psv read back as the games
//! they hold ([`rules::records::hcpe::records_of_entries`],
//! [`rules::records::hcpe::record_of_game`], [`rules::records::psv::records_of_entries`]:
//! positions, moves and results, no names, times or evals).
//!
//! psv files are usually named `.bin`, which says nothing of what they hold: `.psv` is
//! taken for psv, `.bin` only with `--from psv` (then also in folders).

use crate::BadInput;
use anyhow::Result;
use rules::records::hcpe::{self, hcpe3, HcpeError};
use rules::records::psv::{self, PsvError};
use rules::records::{read_games, Format, Record, RecordError};

/// An input file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A record text format (every [`Format`] but Western).
    Text(Format),
    Hcpe,
    Hcpe3,
    /// YaneuraOu's PackedSfenValue.
    Psv,
}

/// Why an input gave no games: the 1-based line at fault, if one is, and the message.
pub struct ReadError {
    pub line: Option<usize>,
    pub message: String,
}

impl From<RecordError> for ReadError {
    fn from(e: RecordError) -> ReadError {
        ReadError { line: e.line, message: e.message() }
    }
}

impl From<HcpeError> for ReadError {
    fn from(e: HcpeError) -> ReadError {
        ReadError { line: None, message: e.to_string() }
    }
}

impl From<PsvError> for ReadError {
    fn from(e: PsvError) -> ReadError {
        ReadError { line: None, message: e.to_string() }
    }
}

impl Source {
    /// The format `--from NAME` names.
    pub fn from_name(name: &str) -> Result<Source> {
        match name.to_ascii_lowercase().as_str() {
            "hcpe" => Ok(Source::Hcpe),
            "hcpe3" => Ok(Source::Hcpe3),
            "psv" => Ok(Source::Psv),
            _ => match Format::from_name(name) {
                Some(f) if f.readable() => Ok(Source::Text(f)),
                Some(_) => Err(BadInput("western text can be written, not read".into()).into()),
                None => Err(BadInput(format!(
                    "unknown format '{}' (expected kif, ki2, csa, usi, hcpe, hcpe3 or psv)",
                    rules::excerpt(name)
                ))
                .into()),
            },
        }
    }

    /// The format a file extension tells (.kif .kifu .ki2 .ki2u .csa .usi .sfen .hcpe
    /// .hcpe3 .psv), if it is one that can be read.
    pub fn from_extension(ext: &str) -> Option<Source> {
        match ext.to_ascii_lowercase().as_str() {
            "hcpe" => Some(Source::Hcpe),
            "hcpe3" => Some(Source::Hcpe3),
            "psv" => Some(Source::Psv),
            _ => Format::from_extension(ext).filter(|f| f.readable()).map(Source::Text),
        }
    }

    /// Whether `--from` this format takes files with extension `ext` from folders: those
    /// the extension tells, and for psv also `.bin` (YaneuraOu's name for them).
    pub fn takes_extension(self, ext: &str) -> bool {
        Source::from_extension(ext) == Some(self) || (self == Source::Psv && ext.eq_ignore_ascii_case("bin"))
    }

    /// Every game of a file's bytes; `ext` is the file's extension (`.kifu`/`.ki2u`
    /// promise UTF-8).
    pub fn read(self, bytes: &[u8], ext: &str) -> Result<Vec<Record>, ReadError> {
        let games = match self {
            Source::Text(format) => return Ok(read_games(format, bytes, Format::encoding_of_extension(ext))?),
            Source::Hcpe => hcpe::records_of_entries(&hcpe::from_bytes(bytes)?),
            Source::Hcpe3 => hcpe3::from_bytes(bytes)?.iter().map(hcpe::record_of_game).collect(),
            Source::Psv => psv::records_of_entries(&psv::from_bytes(bytes)?),
        };
        if games.is_empty() {
            return Err(ReadError { line: None, message: "no game in the file (it is empty)".into() });
        }
        Ok(games)
    }
}
