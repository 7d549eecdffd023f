//! `hcpe3`: dlshogi's self-play games with the search's candidate moves and
//! visit counts (the layout of DeepLearningShogi's `cppshogi.h`).
//!
//! Games follow each other with no file header, all integers little-endian.
//! Each game is a 36-byte header, then one 6-byte move record per move,
//! each followed by its candidates at 4 bytes each:
//!
//! | size | field |
//! | --- | --- |
//! | 32 | `hcp`: the start position ([`super::encode_position`]) |
//! | 2 | `moveNum`: u16, moves in the game |
//! | 1 | `result`: bits 0-1 a [`GameResult`], then one [`Ending`] flag |
//! | 1 | `opponent`: [`Opponent`] |
//! | per move: 2 | `selectedMove16`: the move played ([`super::encode_move`]) |
//! | 2 | `eval`: i16, the side to move's view |
//! | 2 | `candidateNum`: u16 |
//! | per candidate: 2 | `move16`: a legal move |
//! | 2 | `visitNum`: u16, its visits |

use super::move16::{decode_among, encode_legal};
use super::{decode_position, encode_position, le_u16, write_atomic, GameResult, HcpeError, Sink, Source, HCP_BYTES};
use crate::{Move, Position};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

const HEADER_BYTES: usize = 36;
const MOVE_BYTES: usize = 6;
const CANDIDATE_BYTES: usize = 4;

/// What the result byte says about how the game ended, besides who won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// No flag: mate, resignation, or an end dlshogi does not mark.
    Unmarked,
    /// Fourfold repetition (千日手), flag 4.
    Repetition,
    /// An impasse declaration (入玉宣言), flag 8.
    Declaration,
    /// The move limit, flag 16.
    MaxMoves,
}

impl Ending {
    const ALL: [Ending; 4] = [Ending::Unmarked, Ending::Repetition, Ending::Declaration, Ending::MaxMoves];

    pub fn flag(self) -> u8 {
        match self {
            Ending::Unmarked => 0,
            Ending::Repetition => 4,
            Ending::Declaration => 8,
            Ending::MaxMoves => 16,
        }
    }

    pub fn from_flag(flag: u8) -> Option<Ending> {
        Ending::ALL.into_iter().find(|e| e.flag() == flag)
    }
}

/// Who played the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opponent {
    /// dlshogi against itself (0).
    SelfPlay = 0,
    /// A USI engine played sente (1).
    UsiSente = 1,
    /// A USI engine played gote (2).
    UsiGote = 2,
}

impl Opponent {
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<Opponent> {
        [Opponent::SelfPlay, Opponent::UsiSente, Opponent::UsiGote].get(code as usize).copied()
    }
}

/// One move of a game with what the search said about its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveEntry {
    /// The move played.
    pub mv: Move,
    /// The evaluation, from the side to move's view.
    pub eval: i16,
    /// Legal moves of the position and their visit counts; empty for a move
    /// that is not a training target (a USI opponent's, an opening move).
    pub candidates: Vec<(Move, u16)>,
}

/// One game of an `hcpe3` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    /// The move number is 1: the format does not keep it.
    pub start: Position,
    pub moves: Vec<MoveEntry>,
    pub result: GameResult,
    pub ending: Ending,
    pub opponent: Opponent,
}

impl Game {
    /// The result byte: the result's code with the ending's flag.
    pub fn result_code(&self) -> u8 {
        self.result.code() | self.ending.flag()
    }

    /// Calls `visit` with the position before each move, then returns the
    /// final position. Moves were checked when read; moves of a game built
    /// in memory are not checked here.
    pub fn replay(&self, mut visit: impl FnMut(&Position, &MoveEntry)) -> Position {
        let mut pos = self.start.clone();
        for entry in &self.moves {
            visit(&pos, entry);
            pos.play(entry.mv);
        }
        pos
    }
}

/// A game's fields before they are checked, with the offset of each part.
struct RawGame {
    offset: u64,
    header: [u8; HEADER_BYTES],
    moves: Vec<RawMove>,
}

struct RawMove {
    offset: u64,
    info: [u8; MOVE_BYTES],
    candidates: Vec<([u8; CANDIDATE_BYTES], u64)>,
}

fn read_raw(source: &mut Source<impl Read>) -> Result<Option<RawGame>, HcpeError> {
    let Some((header, offset)) = source.next_record::<HEADER_BYTES>("an hcpe3 game header")? else {
        return Ok(None);
    };
    let move_count = le_u16(&header[32..]) as usize;
    let mut moves = Vec::with_capacity(move_count);
    for _ in 0..move_count {
        let (info, offset) = source.record::<MOVE_BYTES>("an hcpe3 move record")?;
        let candidates = (0..le_u16(&info[4..]))
            .map(|_| source.record::<CANDIDATE_BYTES>("an hcpe3 candidate"))
            .collect::<Result<_, _>>()?;
        moves.push(RawMove { offset, info, candidates });
    }
    Ok(Some(RawGame { offset, header, moves }))
}

fn decode_result(code: u8, offset: u64) -> Result<(GameResult, Ending), HcpeError> {
    let result = GameResult::from_code(code & 3).ok_or(HcpeError::GameResult { offset, value: code })?;
    let ending = Ending::from_flag(code & !3).ok_or(HcpeError::Field { offset, what: "game result", value: code })?;
    Ok((result, ending))
}

fn decode_game(raw: RawGame) -> Result<Game, HcpeError> {
    let header = &raw.header;
    let hcp: &[u8; HCP_BYTES] = header[..HCP_BYTES].try_into().expect("headers start with a position");
    let start = decode_position(hcp).map_err(|reason| HcpeError::Position { offset: raw.offset, reason })?;
    let (result, ending) = decode_result(header[34], raw.offset + 34)?;
    let opponent = Opponent::from_code(header[35]);
    let opponent = opponent.ok_or(HcpeError::Field { offset: raw.offset + 35, what: "opponent", value: header[35] })?;
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(raw.moves.len());
    let mut legal = Vec::new();
    for m in &raw.moves {
        pos.generate_legal(&mut legal);
        let decode =
            |move16, offset| decode_among(&pos, &legal, move16).map_err(|reason| HcpeError::Move { offset, reason });
        let mv = decode(le_u16(&m.info), m.offset)?;
        let eval = le_u16(&m.info[2..]) as i16;
        let candidates = m
            .candidates
            .iter()
            .map(|(c, offset)| Ok((decode(le_u16(c), *offset)?, le_u16(&c[2..]))))
            .collect::<Result<_, HcpeError>>()?;
        moves.push(MoveEntry { mv, eval, candidates });
        pos.play(mv);
    }
    Ok(Game { start, moves, result, ending, opponent })
}

/// Reads `hcpe3` games one at a time. A game that does not decode (a bad
/// position, an illegal move) gives an error and the reader goes on with
/// the next game; a truncated game or a read error ends the stream.
pub struct Reader<R> {
    source: Source<R>,
}

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader { source: Source::new(inner) }
    }

    /// The next game, `Ok(None)` at the end.
    pub fn read_game(&mut self) -> Result<Option<Game>, HcpeError> {
        read_game(&mut self.source)
    }
}

fn read_game<R: Read>(source: &mut Source<R>) -> Result<Option<Game>, HcpeError> {
    read_raw(source)?.map(decode_game).transpose()
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Game, HcpeError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.source.next_item(read_game)
    }
}

impl Reader<BufReader<File>> {
    /// Reads an `hcpe3` file.
    pub fn open(path: &Path) -> Result<Self, HcpeError> {
        Ok(Reader { source: Source::open(path)? })
    }
}

/// Writes `hcpe3` games, each as dlshogi would.
pub struct Writer<W: Write> {
    sink: Sink<W>,
}

impl<W: Write> Writer<W> {
    pub fn new(inner: W) -> Writer<W> {
        Writer { sink: Sink::new(inner) }
    }

    /// Writes one game; every move and candidate must be legal where it is
    /// played. Nothing is written if the game has a fault.
    pub fn write_game(&mut self, game: &Game) -> Result<(), HcpeError> {
        let bytes = encode_game(game, self.sink.offset())?;
        self.sink.put(&bytes)
    }

    /// Flushes and returns the stream.
    pub fn finish(self) -> Result<W, HcpeError> {
        self.sink.finish()
    }
}

fn count_u16(count: usize, what: &'static str, offset: u64) -> Result<[u8; 2], HcpeError> {
    let count = u16::try_from(count).map_err(|_| HcpeError::TooMany { offset, what, count })?;
    Ok(count.to_le_bytes())
}

/// The bytes of a game that starts at `offset` of its stream.
fn encode_game(game: &Game, offset: u64) -> Result<Vec<u8>, HcpeError> {
    let hcp = encode_position(&game.start).map_err(|reason| HcpeError::Position { offset, reason })?;
    let mut out = Vec::with_capacity(HEADER_BYTES + game.moves.len() * (MOVE_BYTES + 8 * CANDIDATE_BYTES));
    out.extend_from_slice(&hcp);
    out.extend_from_slice(&count_u16(game.moves.len(), "moves", offset + 32)?);
    out.extend_from_slice(&[game.result_code(), game.opponent.code()]);
    let mut pos = game.start.clone();
    let mut legal = Vec::new();
    for entry in &game.moves {
        pos.generate_legal(&mut legal);
        let at = |out: &Vec<u8>| offset + out.len() as u64;
        let move16 = |out: &Vec<u8>, mv| {
            encode_legal(&pos, &legal, mv).map_err(|reason| HcpeError::Move { offset: at(out), reason })
        };
        out.extend_from_slice(&move16(&out, entry.mv)?.to_le_bytes());
        out.extend_from_slice(&entry.eval.to_le_bytes());
        out.extend_from_slice(&count_u16(entry.candidates.len(), "candidates", at(&out))?);
        for &(mv, visits) in &entry.candidates {
            out.extend_from_slice(&move16(&out, mv)?.to_le_bytes());
            out.extend_from_slice(&visits.to_le_bytes());
        }
        pos.play(entry.mv);
    }
    Ok(out)
}

/// Every game of an `hcpe3` file's bytes; the first error stops.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<Game>, HcpeError> {
    Reader::new(bytes).collect()
}

/// The bytes of an `hcpe3` file holding `games`.
pub fn to_bytes(games: &[Game]) -> Result<Vec<u8>, HcpeError> {
    let mut writer = Writer::new(Vec::new());
    games.iter().try_for_each(|g| writer.write_game(g))?;
    writer.finish()
}

/// Writes an `hcpe3` file atomically.
pub fn save(path: &Path, games: &[Game]) -> Result<(), HcpeError> {
    write_atomic(path, &to_bytes(games)?)
}
