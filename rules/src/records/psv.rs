//! YaneuraOu's training data: `PackedSfenValue` ("psv") files, as YaneuraOu's
//! `gensfen` writes them and cshogi reads and writes them (usually named
//! `.bin`; koma also names them `.psv`). Standard shogi only.
//!
//! A psv file is a sequence of 40-byte records, little-endian, no header:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 32 | `sfen`: the position ([`encode_position`], `PackedSfen`) |
//! | 32 | 2 | `score`: i16, the side to move's view |
//! | 34 | 2 | `move`: the move chosen ([`encode_move`], YaneuraOu's `Move16`) |
//! | 36 | 2 | `gamePly`: u16, the position's ply in its game (1 at the start) |
//! | 38 | 1 | `game_result`: i8, the side to move's view: 1 won, 0 draw, -1 lost |
//! | 39 | 1 | padding, written 0, ignored when read |
//!
//! Neither the position nor the move is coded as in hcpe
//! ([`super::hcpe`]): see the submodules. Readers check every position
//! against the rules and every move against its position; an error names
//! the byte offset of the record (or field) at fault. `data/FORMAT.md`
//! describes the format.
//!
//! ```
//! use rules::records::psv::{self, Entry, GameResult};
//! use rules::{Position, Variant};
//! let position = Position::startpos(Variant::Shogi);
//! let best_move = position.parse_usi("2g2f").unwrap();
//! let entry = Entry { position, best_move, score: 35, game_ply: 1, result: GameResult::Win };
//! let bytes = psv::to_bytes(std::slice::from_ref(&entry)).unwrap();
//! assert_eq!(bytes.len(), 40);
//! assert_eq!(psv::from_bytes(&bytes).unwrap(), vec![entry]);
//! ```

mod move16;
mod psfen;

pub use move16::{decode_legal_move, decode_move, encode_legal_move, encode_move};
pub use psfen::{decode_position, encode_position, PsfenError, PSFEN_BYTES};

use super::hcpe::{self, Move16Error};
use super::{Record, RecordError};
use crate::{Color, Move, Position};
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes of a psv record.
pub const ENTRY_BYTES: usize = 40;

/// How the game ended for the side to move, as psv stores it (an i8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    Loss = -1,
    Draw = 0,
    Win = 1,
}

impl GameResult {
    pub fn code(self) -> i8 {
        self as i8
    }

    pub fn from_code(code: i8) -> Option<GameResult> {
        match code {
            -1 => Some(GameResult::Loss),
            0 => Some(GameResult::Draw),
            1 => Some(GameResult::Win),
            _ => None,
        }
    }

    /// Who won, when `to_move` was to move.
    pub fn winner(self, to_move: Color) -> Option<Color> {
        match self {
            GameResult::Draw => None,
            GameResult::Win => Some(to_move),
            GameResult::Loss => Some(to_move.opponent()),
        }
    }

    /// The result for `to_move` of a game `winner` won (`None`: a draw).
    pub fn for_side(winner: Option<Color>, to_move: Color) -> GameResult {
        match winner {
            None => GameResult::Draw,
            Some(w) if w == to_move => GameResult::Win,
            Some(_) => GameResult::Loss,
        }
    }
}

/// Why a psv stream cannot be read or written. `offset` is the byte offset
/// in the stream of the record or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum PsvError {
    #[error("{}: {reason}", .path.display())]
    File { path: PathBuf, reason: io::Error },
    #[error("byte {offset}: {reason}")]
    Io { offset: u64, reason: io::Error },
    #[error("byte {offset}: the data ends inside a psv record ({found} of {ENTRY_BYTES} bytes)")]
    Truncated { offset: u64, found: usize },
    #[error("byte {offset}: {reason}")]
    Position { offset: u64, reason: PsfenError },
    #[error("byte {offset}: {reason}")]
    Move { offset: u64, reason: Move16Error },
    #[error("byte {offset}: game result {value} is not 1 (the side to move won), 0 (draw) or -1 (lost)")]
    GameResult { offset: u64, value: i8 },
}

/// One position of a psv file.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Read back with the game ply as its move number (1 when the ply is 0);
    /// written without it (the ply is [`Entry::game_ply`]).
    pub position: Position,
    /// A legal move of `position`.
    pub best_move: Move,
    /// The evaluation, from the side to move's view.
    pub score: i16,
    /// The position's ply in its game, 1 for the first position.
    pub game_ply: u16,
    /// The result for the side to move.
    pub result: GameResult,
}

impl Entry {
    /// The psv entry of an hcpe entry: its eval as the score, its position's move
    /// number as the ply (at most 65535), its result for the side to move.
    pub fn from_hcpe(e: &hcpe::Entry) -> Entry {
        Entry {
            position: e.position.clone(),
            best_move: e.best_move,
            score: e.eval,
            game_ply: e.position.move_number().min(u16::MAX as u32) as u16,
            result: GameResult::for_side(e.result.winner(), e.position.side_to_move()),
        }
    }

    /// The hcpe entry of a psv entry (the ply is lost).
    pub fn to_hcpe(&self) -> hcpe::Entry {
        hcpe::Entry {
            position: self.position.clone(),
            best_move: self.best_move,
            eval: self.score,
            result: hcpe::GameResult::from_winner(self.result.winner(self.position.side_to_move())),
        }
    }

    /// Who won the game.
    pub fn winner(&self) -> Option<Color> {
        self.result.winner(self.position.side_to_move())
    }
}

/// The record of an entry that starts at `offset` of its stream.
fn decode_entry(record: &[u8; ENTRY_BYTES], offset: u64) -> Result<Entry, PsvError> {
    let field = |at: usize| u16::from_le_bytes([record[at], record[at + 1]]);
    let game_ply = field(36);
    let sfen: &[u8; PSFEN_BYTES] = record[..PSFEN_BYTES].try_into().expect("records start with a position");
    let position = psfen::decode_position_at(sfen, u32::from(game_ply.max(1)))
        .map_err(|reason| PsvError::Position { offset, reason })?;
    let score = field(32) as i16;
    let best_move =
        decode_legal_move(&position, field(34)).map_err(|reason| PsvError::Move { offset: offset + 34, reason })?;
    let value = record[38] as i8;
    let result = GameResult::from_code(value).ok_or(PsvError::GameResult { offset: offset + 38, value })?;
    Ok(Entry { position, best_move, score, game_ply, result })
}

/// The bytes of an entry that starts at `offset` of its stream.
fn encode_entry(entry: &Entry, offset: u64) -> Result<[u8; ENTRY_BYTES], PsvError> {
    let sfen = encode_position(&entry.position).map_err(|reason| PsvError::Position { offset, reason })?;
    let best_move = encode_legal_move(&entry.position, entry.best_move)
        .map_err(|reason| PsvError::Move { offset: offset + 34, reason })?;
    let mut record = [0u8; ENTRY_BYTES];
    record[..PSFEN_BYTES].copy_from_slice(&sfen);
    record[32..34].copy_from_slice(&entry.score.to_le_bytes());
    record[34..36].copy_from_slice(&best_move.to_le_bytes());
    record[36..38].copy_from_slice(&entry.game_ply.to_le_bytes());
    record[38] = entry.result.code() as u8;
    Ok(record)
}

/// Reads psv records one at a time. A record that does not decode gives an
/// error and the reader goes on with the next one; a truncated record or a
/// read error ends the stream.
pub struct Reader<R> {
    inner: R,
    offset: u64,
    /// Set once the stream ended or broke.
    done: bool,
}

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader { inner, offset: 0, done: false }
    }

    /// The byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record, `Ok(None)` at the end.
    pub fn read_entry(&mut self) -> Result<Option<Entry>, PsvError> {
        let mut record = [0u8; ENTRY_BYTES];
        let offset = self.offset;
        let mut got = 0;
        while got < ENTRY_BYTES {
            match self.inner.read(&mut record[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(reason) => return Err(PsvError::Io { offset: offset + got as u64, reason }),
            }
        }
        match got {
            0 => Ok(None),
            ENTRY_BYTES => {
                self.offset += ENTRY_BYTES as u64;
                decode_entry(&record, offset).map(Some)
            }
            found => Err(PsvError::Truncated { offset, found }),
        }
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Entry, PsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.read_entry();
        if matches!(item, Ok(None) | Err(PsvError::Io { .. } | PsvError::Truncated { .. })) {
            self.done = true;
        }
        item.transpose()
    }
}

impl Reader<BufReader<File>> {
    /// Reads a psv file.
    pub fn open(path: &Path) -> Result<Self, PsvError> {
        let file = File::open(path).map_err(|reason| PsvError::File { path: path.to_path_buf(), reason })?;
        Ok(Reader::new(BufReader::with_capacity(1 << 16, file)))
    }
}

/// Writes psv records, each as cshogi would.
pub struct Writer<W: Write> {
    inner: W,
    offset: u64,
}

impl<W: Write> Writer<W> {
    pub fn new(inner: W) -> Writer<W> {
        Writer { inner, offset: 0 }
    }

    /// Writes one record; the best move must be legal in the position. Nothing
    /// is written if the entry has a fault.
    pub fn write_entry(&mut self, entry: &Entry) -> Result<(), PsvError> {
        let record = encode_entry(entry, self.offset)?;
        self.inner.write_all(&record).map_err(|reason| PsvError::Io { offset: self.offset, reason })?;
        self.offset += ENTRY_BYTES as u64;
        Ok(())
    }

    /// Flushes and returns the stream.
    pub fn finish(mut self) -> Result<W, PsvError> {
        self.inner.flush().map_err(|reason| PsvError::Io { offset: self.offset, reason })?;
        Ok(self.inner)
    }
}

/// Every record of a psv file's bytes; the first error stops.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<Entry>, PsvError> {
    Reader::new(bytes).collect()
}

/// The bytes of a psv file holding `entries`.
pub fn to_bytes(entries: &[Entry]) -> Result<Vec<u8>, PsvError> {
    let mut writer = Writer::new(Vec::with_capacity(entries.len() * ENTRY_BYTES));
    entries.iter().try_for_each(|e| writer.write_entry(e))?;
    writer.finish()
}

/// Every record of a psv file; the first error stops.
pub fn load(path: &Path) -> Result<Vec<Entry>, PsvError> {
    Reader::open(path)?.collect()
}

/// Writes a psv file atomically ([`files::write_atomic`]).
pub fn save(path: &Path, entries: &[Entry]) -> Result<(), PsvError> {
    let bytes = to_bytes(entries)?;
    files::write_atomic(path, &bytes).map_err(|reason| PsvError::File { path: path.to_path_buf(), reason })
}

/// The psv entries of a record: the position before each move, the move, score 0,
/// the position's move number as the ply, and the result for the side to move (as
/// [`hcpe::entries_of_record`] finds the winner).
pub fn entries_of_record(record: &Record) -> Result<Vec<Entry>, RecordError> {
    Ok(hcpe::entries_of_record(record)?.iter().map(Entry::from_hcpe).collect())
}

/// The games of a run of psv entries: a new game starts at each entry that does not
/// continue the one before (another position, or another winner). A game starts at its
/// first entry's position with the ply as its move number; its end is
/// [`hcpe::end_of`]'s. Scores are lost.
pub fn records_of_entries(entries: &[Entry]) -> Vec<Record> {
    hcpe::records_of_entries(&entries.iter().map(Entry::to_hcpe).collect::<Vec<_>>())
}
