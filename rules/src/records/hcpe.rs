//! dlshogi's training data, as cshogi defines it: `hcpe` files of scored
//! positions and [`hcpe3`] files of games with the search's visit counts.
//! Standard shogi only.
//!
//! An `hcpe` file is a sequence of 38-byte `HuffmanCodedPosAndEval`
//! records, little-endian, no header:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 32 | `hcp`: the position ([`encode_position`]) |
//! | 32 | 2 | `eval`: i16, the side to move's view |
//! | 34 | 2 | `bestMove16`: the move played or chosen ([`encode_move`]) |
//! | 36 | 1 | `gameResult`: [`GameResult`] |
//! | 37 | 1 | padding, written 0, ignored when read |
//!
//! Readers check every position against the rules and every move against
//! its position; an error names the byte offset of the record (or field)
//! at fault. `data/FORMAT.md` describes both formats.
//!
//! ```
//! use rules::records::hcpe::{self, Entry, GameResult};
//! use rules::{Position, Variant};
//! let position = Position::startpos(Variant::Shogi);
//! let best_move = position.parse_usi("2g2f").unwrap();
//! let entry = Entry { position, best_move, eval: 35, result: GameResult::SenteWin };
//! let bytes = hcpe::to_bytes(std::slice::from_ref(&entry)).unwrap();
//! assert_eq!(bytes.len(), 38);
//! assert_eq!(hcpe::from_bytes(&bytes).unwrap(), vec![entry]);
//! ```

mod games;
mod hcp;
pub mod hcpe3;
pub(super) mod move16;

pub use super::huffman_bits::{square_index, square_of_index};
pub use games::{end_of, entries_of_record, record_of_game, records_of_entries};
pub use hcp::{decode_position, encode_position, HcpError, HCP_BYTES};
pub use move16::{decode_legal_move, decode_move, encode_move, Move16Error};

use crate::{Color, Move, Position};
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes of an `hcpe` record.
pub const ENTRY_BYTES: usize = 38;

/// How a game ended, as dlshogi stores it: 0 draw, 1 sente (black) won,
/// 2 gote (white) won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    Draw = 0,
    SenteWin = 1,
    GoteWin = 2,
}

impl GameResult {
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<GameResult> {
        [GameResult::Draw, GameResult::SenteWin, GameResult::GoteWin].get(code as usize).copied()
    }

    pub fn winner(self) -> Option<Color> {
        match self {
            GameResult::Draw => None,
            GameResult::SenteWin => Some(Color::Sente),
            GameResult::GoteWin => Some(Color::Gote),
        }
    }

    pub fn from_winner(winner: Option<Color>) -> GameResult {
        match winner {
            None => GameResult::Draw,
            Some(Color::Sente) => GameResult::SenteWin,
            Some(Color::Gote) => GameResult::GoteWin,
        }
    }
}

/// Why an `hcpe` or `hcpe3` stream cannot be read or written. `offset` is
/// the byte offset in the stream of the record or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum HcpeError {
    #[error("{}: {reason}", .path.display())]
    File { path: PathBuf, reason: io::Error },
    #[error("byte {offset}: {reason}")]
    Io { offset: u64, reason: io::Error },
    #[error("byte {offset}: the data ends inside {what} ({found} of {needed} bytes)")]
    Truncated { offset: u64, what: &'static str, needed: usize, found: usize },
    #[error("byte {offset}: {reason}")]
    Position { offset: u64, reason: HcpError },
    #[error("byte {offset}: {reason}")]
    Move { offset: u64, reason: Move16Error },
    #[error("byte {offset}: game result {value} is not 0 (draw), 1 (sente won) or 2 (gote won)")]
    GameResult { offset: u64, value: u8 },
    #[error("byte {offset}: {what} {value} is not one the format defines")]
    Field { offset: u64, what: &'static str, value: u8 },
    #[error("byte {offset}: {count} {what} do not fit the format's 16-bit count")]
    TooMany { offset: u64, what: &'static str, count: usize },
}

/// One position of an `hcpe` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The move number is 1: the format does not keep it.
    pub position: Position,
    /// A legal move of `position`.
    pub best_move: Move,
    /// The evaluation, from the side to move's view.
    pub eval: i16,
    pub result: GameResult,
}

/// Reads whole records from a byte stream, counting the offset.
pub(crate) struct Source<R> {
    inner: R,
    offset: u64,
    /// Set once the stream ended or broke: an iterator over it yields nothing more.
    done: bool,
}

impl Source<BufReader<File>> {
    pub(crate) fn open(path: &Path) -> Result<Self, HcpeError> {
        let file = File::open(path).map_err(|reason| HcpeError::File { path: path.to_path_buf(), reason })?;
        Ok(Source::new(BufReader::new(file)))
    }
}

impl<R: Read> Source<R> {
    pub(crate) fn new(inner: R) -> Source<R> {
        Source { inner, offset: 0, done: false }
    }

    /// One iterator step over the items `read` decodes: after the end, a read error or a
    /// truncated record nothing more can follow (a bad item in a whole record can).
    pub(crate) fn next_item<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<Option<T>, HcpeError>,
    ) -> Option<Result<T, HcpeError>> {
        if self.done {
            return None;
        }
        let item = read(self);
        if matches!(item, Ok(None) | Err(HcpeError::Io { .. } | HcpeError::Truncated { .. })) {
            self.done = true;
        }
        item.transpose()
    }

    /// Fills `buf` as far as the stream goes; returns the bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, HcpeError> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(reason) => return Err(HcpeError::Io { offset: self.offset + got as u64, reason }),
            }
        }
        Ok(got)
    }

    /// The next `N` bytes and their offset; `None` at the end of the stream.
    pub(crate) fn next_record<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<Option<([u8; N], u64)>, HcpeError> {
        let mut buf = [0u8; N];
        let offset = self.offset;
        match self.fill(&mut buf)? {
            0 => Ok(None),
            n if n == N => {
                self.offset += N as u64;
                Ok(Some((buf, offset)))
            }
            found => Err(HcpeError::Truncated { offset, what, needed: N, found }),
        }
    }

    /// The next `N` bytes and their offset, which must be there.
    pub(crate) fn record<const N: usize>(&mut self, what: &'static str) -> Result<([u8; N], u64), HcpeError> {
        let offset = self.offset;
        self.next_record(what)?.ok_or(HcpeError::Truncated { offset, what, needed: N, found: 0 })
    }
}

/// Writes bytes, counting the offset.
pub(crate) struct Sink<W> {
    inner: W,
    offset: u64,
}

impl<W: Write> Sink<W> {
    pub(crate) fn new(inner: W) -> Sink<W> {
        Sink { inner, offset: 0 }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), HcpeError> {
        self.inner.write_all(bytes).map_err(|reason| HcpeError::Io { offset: self.offset, reason })?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    pub(crate) fn finish(mut self) -> Result<W, HcpeError> {
        self.inner.flush().map_err(|reason| HcpeError::Io { offset: self.offset, reason })?;
        Ok(self.inner)
    }
}

pub(crate) fn le_u16(bytes: &[u8]) -> u16 {
    u16::from_le_bytes([bytes[0], bytes[1]])
}

/// Reads `hcpe` records one at a time. A record that does not decode gives
/// an error and the reader goes on with the next one; a truncated record
/// or a read error ends the stream.
pub struct Reader<R> {
    source: Source<R>,
}

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader { source: Source::new(inner) }
    }

    /// The next record, `Ok(None)` at the end.
    pub fn read_entry(&mut self) -> Result<Option<Entry>, HcpeError> {
        read_entry(&mut self.source)
    }
}

fn read_entry<R: Read>(source: &mut Source<R>) -> Result<Option<Entry>, HcpeError> {
    let Some((record, offset)) = source.next_record::<ENTRY_BYTES>("an hcpe record")? else {
        return Ok(None);
    };
    let hcp: &[u8; HCP_BYTES] = record[..HCP_BYTES].try_into().expect("records start with a position");
    let position = decode_position(hcp).map_err(|reason| HcpeError::Position { offset, reason })?;
    let eval = le_u16(&record[32..]) as i16;
    let best_move = decode_legal_move(&position, le_u16(&record[34..]))
        .map_err(|reason| HcpeError::Move { offset: offset + 34, reason })?;
    let result =
        GameResult::from_code(record[36]).ok_or(HcpeError::GameResult { offset: offset + 36, value: record[36] })?;
    Ok(Some(Entry { position, best_move, eval, result }))
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Entry, HcpeError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.source.next_item(read_entry)
    }
}

impl Reader<BufReader<File>> {
    /// Reads an `hcpe` file.
    pub fn open(path: &Path) -> Result<Self, HcpeError> {
        Ok(Reader { source: Source::open(path)? })
    }
}

/// Writes `hcpe` records, each as cshogi would.
pub struct Writer<W: Write> {
    sink: Sink<W>,
}

impl<W: Write> Writer<W> {
    pub fn new(inner: W) -> Writer<W> {
        Writer { sink: Sink::new(inner) }
    }

    /// Writes one record; the best move must be legal in the position.
    pub fn write_entry(&mut self, entry: &Entry) -> Result<(), HcpeError> {
        let offset = self.sink.offset();
        let position = encode_position(&entry.position).map_err(|reason| HcpeError::Position { offset, reason })?;
        let legal = entry.position.legal_moves();
        let best_move = move16::encode_legal(&entry.position, &legal, entry.best_move)
            .map_err(|reason| HcpeError::Move { offset: offset + 34, reason })?;
        let mut record = [0u8; ENTRY_BYTES];
        record[..HCP_BYTES].copy_from_slice(&position);
        record[32..34].copy_from_slice(&entry.eval.to_le_bytes());
        record[34..36].copy_from_slice(&best_move.to_le_bytes());
        record[36] = entry.result.code();
        self.sink.put(&record)
    }

    /// Flushes and returns the stream.
    pub fn finish(self) -> Result<W, HcpeError> {
        self.sink.finish()
    }
}

/// Every record of an `hcpe` file's bytes; the first error stops.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<Entry>, HcpeError> {
    Reader::new(bytes).collect()
}

/// The bytes of an `hcpe` file holding `entries`.
pub fn to_bytes(entries: &[Entry]) -> Result<Vec<u8>, HcpeError> {
    let mut writer = Writer::new(Vec::with_capacity(entries.len() * ENTRY_BYTES));
    entries.iter().try_for_each(|e| writer.write_entry(e))?;
    writer.finish()
}

/// Writes an `hcpe` file atomically.
pub fn save(path: &Path, entries: &[Entry]) -> Result<(), HcpeError> {
    write_atomic(path, &to_bytes(entries)?)
}

/// Replaces `path` with `bytes` atomically (the workspace's one writer, [`files::write_atomic`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), HcpeError> {
    files::write_atomic(path, bytes).map_err(|reason| HcpeError::File { path: path.to_path_buf(), reason })
}
