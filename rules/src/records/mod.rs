//! Game records of standard shogi: KIF and KI2 (Japanese), CSA (computer
//! shogi), USI move lists, and Western (Hodges) text.
//!
//! A [`Record`] is the format-neutral game: where it started (even,
//! handicap, or a given position), the moves with their comments and times,
//! how it ended, and who played where and when. Readers check every move
//! against the rules as they go, so a `Record` that came out of a reader
//! replays without error; a reader's [`RecordError`] names the line and the
//! move text at fault.
//!
//! ```
//! use rules::records::{read_csa, write_kif};
//! let record = read_csa("V2.2\nPI\n+\n+7776FU\n-3334FU\n%TORYO\n").unwrap();
//! assert_eq!(record.moves.len(), 2);
//! let kif = write_kif(&record).unwrap();
//! assert!(kif.contains("   2 ３四歩(33)"));
//! ```
//!
//! Training data: dlshogi's [`hcpe`]/[`hcpe3`] and YaneuraOu's [`psv`]
//! (`PackedSfenValue`).
//!
//! Single moves as text: [`western`]/[`parse_western`] (`P-7f`, `G6i-5h`)
//! and [`japanese`]/[`parse_japanese`] (`７六歩`, `同　銀`, `５二金左`).

mod csa;
mod encoding;
pub mod hcpe;
mod huffman_bits;
mod japanese;
mod ki2;
mod kif;
mod kif_header;
pub mod psv;
mod usi;
mod western;

pub use csa::{read_csa, read_csa_games, write_csa, write_csa_with, CsaVersion};
pub use encoding::{decode, encode, written_encoding, Encoding};
pub use hcpe::hcpe3;
pub use japanese::{japanese, kif_move, parse_japanese};
pub use ki2::{read_ki2, write_ki2};
pub use kif::{read_kif, write_kif};
pub use usi::{read_usi, read_usi_games, write_usi};
pub use western::{parse_western, western, write_western};

use crate::decimal::decimal_at_most;
use crate::{excerpt, Color, Excerpt, Handicap, Move, Piece, Position, SfenError, Square, Variant};
use std::fmt;
use std::time::Duration;

/// Where a recorded game started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The standard start position, sente to move.
    Even,
    /// A handicap start: the giver (gote) moves first.
    Handicap(Handicap),
    /// Any other position, as SFEN.
    Position(String),
}

impl Start {
    /// Names the position if it is the even start or a handicap one (board,
    /// hands and side to move compared; the move number is not).
    pub fn from_position(pos: &Position) -> Start {
        let key = position_key(&pos.to_sfen());
        if key == position_key(Variant::Shogi.spec().start_sfen) {
            return Start::Even;
        }
        match Handicap::ALL.iter().find(|h| position_key(&h.sfen()) == key) {
            Some(&h) => Start::Handicap(h),
            None => Start::Position(pos.to_sfen()),
        }
    }

    pub fn sfen(&self) -> String {
        match self {
            Start::Even => Variant::Shogi.spec().start_sfen.to_string(),
            Start::Handicap(h) => h.sfen(),
            Start::Position(sfen) => sfen.clone(),
        }
    }

    pub fn position(&self) -> Result<Position, SfenError> {
        Position::from_sfen(Variant::Shogi, &self.sfen())
    }
}

/// The first three SFEN fields: what two positions must share to be the same.
fn position_key(sfen: &str) -> String {
    sfen.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// One move of a record with what the record says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub mv: Move,
    /// Time the mover used on this move.
    pub time: Option<Duration>,
    /// Comment lines written after the move.
    pub comments: Vec<String>,
}

impl RecordedMove {
    pub fn new(mv: Move) -> RecordedMove {
        RecordedMove { mv, time: None, comments: Vec::new() }
    }
}

/// Why a recorded game ended. Unlike [`crate::Reason`], this includes the
/// ends that the board alone does not show: resignation, time, illegal
/// moves, an interrupted game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// The side to move resigned (CSA `%TORYO`, KIF 投了).
    Resign,
    /// The side to move is mated (`%TSUMI`, 詰み).
    Checkmate,
    /// Fourfold repetition, a draw (`%SENNICHITE`, 千日手).
    Repetition,
    /// Fourfold repetition with one side checking throughout: it loses.
    /// Records write it as repetition; readers tell it from the moves.
    PerpetualCheck,
    /// The side to move declared a win by the 27-point rule (`%KACHI`);
    /// a wrong declaration loses.
    Declaration,
    /// Impasse ruled a draw (`%JISHOGI`, 持将棋).
    Impasse,
    /// The side to move ran out of time (`%TIME_UP`, 切れ負け).
    TimeUp,
    /// An illegal move or action lost the game (`%ILLEGAL_MOVE`,
    /// `%+ILLEGAL_ACTION`, 反則負け); the illegal move is not recorded.
    IllegalMove,
    /// The game was stopped without a result (`%CHUDAN`, 中断).
    Abort,
    /// The game reached the length limit: a draw (`%MAX_MOVES`).
    MaxMoves,
    /// A draw by agreement (`%HIKIWAKE`).
    Draw,
    /// A mate problem's claimed mate does not exist (`%FUZUMI`, 不詰).
    NoMate,
    /// The game stopped on an error (`%ERROR`).
    Error,
}

impl EndReason {
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Resign => "resign",
            EndReason::Checkmate => "checkmate",
            EndReason::Repetition => "repetition",
            EndReason::PerpetualCheck => "perpetual_check",
            EndReason::Declaration => "declaration",
            EndReason::Impasse => "impasse",
            EndReason::TimeUp => "time_up",
            EndReason::IllegalMove => "illegal_move",
            EndReason::Abort => "abort",
            EndReason::MaxMoves => "max_moves",
            EndReason::Draw => "draw",
            EndReason::NoMate => "no_mate",
            EndReason::Error => "error",
        }
    }
}

/// How a recorded game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameEnd {
    pub reason: EndReason,
    /// `None` for a draw or a game without result.
    pub winner: Option<Color>,
    /// Time used before the end (CSA `T` after the end marker).
    pub time: Option<Duration>,
    /// Comment lines written after the end.
    pub comments: Vec<String>,
}

impl GameEnd {
    /// The end `reason` in the final position `pos`, with the winner the
    /// rules give: the side to move loses by resigning, being mated, time
    /// or an illegal move; it wins by a valid declaration; repetition is a
    /// draw unless it was perpetual check.
    pub fn at(reason: EndReason, pos: &Position) -> GameEnd {
        let to_move = pos.side_to_move();
        let (reason, winner) = match reason {
            EndReason::Resign | EndReason::Checkmate | EndReason::TimeUp | EndReason::IllegalMove => {
                (reason, Some(!to_move))
            }
            EndReason::Declaration => (reason, Some(if pos.can_declare() { to_move } else { !to_move })),
            EndReason::Repetition | EndReason::PerpetualCheck => match pos.repetition() {
                Some(o) if o.reason == crate::Reason::PerpetualCheck => (EndReason::PerpetualCheck, o.winner),
                _ => (EndReason::Repetition, None),
            },
            EndReason::Impasse
            | EndReason::Abort
            | EndReason::MaxMoves
            | EndReason::Draw
            | EndReason::NoMate
            | EndReason::Error => (reason, None),
        };
        GameEnd { reason, winner, time: None, comments: Vec::new() }
    }

    /// `sente resign`, `draw repetition`, `none abort`.
    pub fn to_text(&self) -> String {
        let who = match (self.winner, self.reason) {
            (Some(c), _) => c.name(),
            (None, EndReason::Abort | EndReason::Error | EndReason::NoMate) => "none",
            (None, _) => "draw",
        };
        format!("{who} {}", self.reason.name())
    }

    /// The end that [`Position::outcome`] found, for records of games the
    /// program played itself. Only standard shogi ends map.
    pub fn from_outcome(outcome: crate::Outcome) -> Option<GameEnd> {
        use crate::Reason;
        let reason = match outcome.reason {
            Reason::Checkmate | Reason::NoMoves => EndReason::Checkmate,
            Reason::Repetition => EndReason::Repetition,
            Reason::PerpetualCheck => EndReason::PerpetualCheck,
            Reason::Declaration => EndReason::Declaration,
            Reason::Impasse if outcome.winner.is_none() => EndReason::Impasse,
            Reason::MaxMoves => EndReason::MaxMoves,
            Reason::Impasse | Reason::RoyalCapture | Reason::BareKing => return None,
        };
        Some(GameEnd { reason, winner: outcome.winner, time: None, comments: Vec::new() })
    }
}

/// Who played, where and when. Fields that a format has no place for are
/// dropped when writing it; `other` keeps what a reader found but has no
/// field for (KIF header keys, CSA V3.0 keys), as (key, value).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameInfo {
    pub sente: Option<String>,
    pub gote: Option<String>,
    pub event: Option<String>,
    pub site: Option<String>,
    /// As the record writes it, usually `YYYY/MM/DD HH:MM:SS`.
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    /// As the record writes it (KIF 持ち時間, CSA `$TIME_LIMIT` or `$TIME`).
    pub time_control: Option<String>,
    pub opening: Option<String>,
    pub other: Vec<(String, String)>,
}

/// A game record, independent of its file format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub start: Start,
    pub moves: Vec<RecordedMove>,
    pub end: Option<GameEnd>,
    pub info: GameInfo,
    /// Comment lines before the first move.
    pub comments: Vec<String>,
}

impl Record {
    pub fn new(start: Start) -> Record {
        Record { start, moves: Vec::new(), end: None, info: GameInfo::default(), comments: Vec::new() }
    }

    /// A record of the game played on `pos` (its history from the position
    /// the game started from), with the end the rules give there, if any.
    pub fn from_game(pos: &Position) -> Record {
        let moves: Vec<Move> = pos.moves_played().collect();
        let mut start = pos.clone();
        for _ in &moves {
            start.undo();
        }
        let mut record = Record::new(Start::from_position(&start));
        record.moves = moves.into_iter().map(RecordedMove::new).collect();
        record.end = pos.outcome(&crate::EndRules::default()).and_then(GameEnd::from_outcome);
        record
    }

    /// The moves as USI text.
    pub fn usi_moves(&self) -> Vec<String> {
        self.moves.iter().map(|m| m.mv.to_usi()).collect()
    }

    /// Replays the record: the start position, then each move checked and
    /// played. `visit` sees the position before each move. Returns the final
    /// position.
    pub fn replay(&self, mut visit: impl FnMut(&Position, usize, &RecordedMove)) -> Result<Position, RecordError> {
        let mut pos = self
            .start
            .position()
            .map_err(|e| RecordError::new(ErrorKind::Position, None, self.start.sfen(), e.to_string()))?;
        for (i, m) in self.moves.iter().enumerate() {
            if !pos.is_legal(m.mv) {
                let why = match pos.parse_usi(&m.mv.to_usi()) {
                    Err(e) => e.to_string(),
                    Ok(_) => "illegal move".to_string(),
                };
                return Err(RecordError::new(ErrorKind::IllegalMove, None, m.mv.to_usi(), why).at_ply(i + 1));
            }
            visit(&pos, i, m);
            pos.play(m.mv);
        }
        Ok(pos)
    }

    /// The final position (the record checked as in [`Record::replay`]).
    pub fn final_position(&self) -> Result<Position, RecordError> {
        self.replay(|_, _, _| {})
    }
}

/// Characters of a [`RecordError`]'s detail shown in its message.
const DETAIL_CHARS: usize = 200;

/// What kind of problem a [`RecordError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes are not text in the encoding the file has or claims.
    Encoding,
    /// A header line no format rule covers.
    UnknownHeader,
    /// A line that cannot be read (a cut-off move, a bad board row).
    Syntax,
    /// The start position is not a legal position.
    Position,
    /// A move that cannot be played in its position.
    IllegalMove,
    /// A move that fits more than one piece.
    Ambiguous,
    /// The text ends before the record does (or holds no game at all).
    Truncated,
    /// Text that cannot be written in the requested encoding.
    Unencodable,
    /// A time that is not a number of seconds from 0 to [`MAX_MOVE_TIME`]
    /// in the format's notation (`T-5`, `TNaN`, `( 0:-5/...)`).
    Time,
    /// A move number out of sequence or out of range.
    MoveNumber,
}

impl ErrorKind {
    fn describe(self) -> &'static str {
        match self {
            ErrorKind::Encoding => "bad encoding",
            ErrorKind::UnknownHeader => "unknown header",
            ErrorKind::Syntax => "syntax error",
            ErrorKind::Position => "bad start position",
            ErrorKind::IllegalMove => "illegal move",
            ErrorKind::Ambiguous => "ambiguous move",
            ErrorKind::Truncated => "truncated record",
            ErrorKind::Unencodable => "cannot encode",
            ErrorKind::Time => "bad time",
            ErrorKind::MoveNumber => "bad move number",
        }
    }
}

/// A record that cannot be read (or written): where, what text, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub kind: ErrorKind,
    /// 1-based line of the input; `None` for problems not tied to a line
    /// (writing a record built in memory).
    pub line: Option<usize>,
    /// 1-based ply of the move at fault, if a move is.
    pub ply: Option<usize>,
    /// The text at fault: the move as written, or the line.
    pub text: String,
    pub detail: String,
}

impl RecordError {
    pub fn new(
        kind: ErrorKind,
        line: Option<usize>,
        text: impl Into<String>,
        detail: impl Into<String>,
    ) -> RecordError {
        RecordError { kind, line, ply: None, text: text.into(), detail: detail.into() }
    }

    pub(crate) fn at_line(kind: ErrorKind, line: usize, text: &str, detail: impl Into<String>) -> RecordError {
        RecordError::new(kind, Some(line), text.trim(), detail)
    }

    pub fn at_ply(mut self, ply: usize) -> RecordError {
        self.ply = Some(ply);
        self
    }
}

impl RecordError {
    /// The message without the line number, for tools that print
    /// `file:line: message`.
    pub fn message(&self) -> String {
        let mut s = self.kind.describe().to_string();
        if let Some(ply) = self.ply {
            s.push_str(&format!(" at move {ply}"));
        }
        if !self.text.is_empty() {
            s.push_str(&format!(" '{}'", excerpt(&self.text)));
        }
        // The detail quotes the text itself at times (a token of the line); the
        // excerpts in it are short, and this bounds the whole.
        if !self.detail.is_empty() {
            s.push_str(&format!(": {}", Excerpt::with_max(&self.detail, DETAIL_CHARS)));
        }
        s
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        f.write_str(&self.message())
    }
}

impl std::error::Error for RecordError {}

/// The record formats, for tools that pick one by name or file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Kif,
    Ki2,
    Csa,
    Usi,
    /// Western (Hodges) move text; written, not read.
    Western,
}

impl Format {
    pub const ALL: [Format; 5] = [Format::Kif, Format::Ki2, Format::Csa, Format::Usi, Format::Western];

    pub fn name(self) -> &'static str {
        match self {
            Format::Kif => "kif",
            Format::Ki2 => "ki2",
            Format::Csa => "csa",
            Format::Usi => "usi",
            Format::Western => "western",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// The format a file extension stands for: `kif`/`kifu`, `ki2`/`ki2u`,
    /// `csa`, `usi`/`sfen`, `txt` (Western).
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            "kif" | "kifu" => Some(Format::Kif),
            "ki2" | "ki2u" => Some(Format::Ki2),
            "csa" => Some(Format::Csa),
            "usi" | "sfen" => Some(Format::Usi),
            "txt" => Some(Format::Western),
            _ => None,
        }
    }

    /// The encoding a file extension promises: `.kifu` and `.ki2u` are
    /// UTF-8; for the others the reader looks at the bytes.
    pub fn encoding_of_extension(ext: &str) -> Option<Encoding> {
        match ext.to_ascii_lowercase().as_str() {
            "kifu" | "ki2u" => Some(Encoding::Utf8),
            _ => None,
        }
    }

    /// The extension to write: KIF and KI2 name their encoding the way
    /// other programs expect (`.kifu` UTF-8, `.kif` Shift_JIS).
    pub fn extension(self, encoding: Encoding) -> &'static str {
        match (self, encoding) {
            (Format::Kif, Encoding::Utf8) => "kifu",
            (Format::Kif, Encoding::ShiftJis) => "kif",
            (Format::Ki2, Encoding::Utf8) => "ki2u",
            (Format::Ki2, Encoding::ShiftJis) => "ki2",
            (Format::Csa, _) => "csa",
            (Format::Usi, _) => "usi",
            (Format::Western, _) => "txt",
        }
    }

    /// Can this format be read (every one but Western)?
    pub fn readable(self) -> bool {
        self != Format::Western
    }
}

/// Reads every game of a file's bytes in `format`: CSA files may hold
/// several games separated by `/`, USI files one game a line, KIF and KI2
/// one game. `encoding` is what the file promises (its extension), `None`
/// to tell from the bytes.
pub fn read_games(format: Format, bytes: &[u8], encoding: Option<Encoding>) -> Result<Vec<Record>, RecordError> {
    let (text, _) = decode(bytes, encoding)?;
    match format {
        Format::Kif => read_kif(&text).map(|r| vec![r]),
        Format::Ki2 => read_ki2(&text).map(|r| vec![r]),
        Format::Csa => read_csa_games(&text),
        Format::Usi => read_usi_games(&text),
        Format::Western => Err(RecordError::new(ErrorKind::Syntax, None, "", "Western text is written, not read")),
    }
}

/// Writes one game in `format` as text.
pub fn write_record(format: Format, record: &Record) -> Result<String, RecordError> {
    match format {
        Format::Kif => write_kif(record),
        Format::Ki2 => write_ki2(record),
        Format::Csa => write_csa(record),
        Format::Usi => write_usi(record),
        Format::Western => write_western(record),
    }
}

/// The bytes of a written record in `encoding`. KIF and KI2 text gets a
/// first line naming its encoding (`#KIF version=2.0 encoding=UTF-8`), which
/// readers that know it honour and others skip as a comment.
pub fn encode_record(format: Format, text: &str, encoding: Encoding) -> Result<Vec<u8>, RecordError> {
    match format {
        Format::Kif | Format::Ki2 => {
            encode(&format!("#KIF version=2.0 encoding={}\n{text}", encoding.name()), encoding)
        }
        _ => encode(text, encoding),
    }
}

/// A single move's text that does not fit its position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{}': {why}", excerpt(.text))]
pub struct NotationError {
    pub text: String,
    pub why: String,
    /// The text fits more than one legal move.
    pub ambiguous: bool,
}

impl NotationError {
    pub(crate) fn new(text: &str, why: impl Into<String>) -> NotationError {
        NotationError { text: text.to_string(), why: why.into(), ambiguous: false }
    }

    pub(crate) fn ambiguous(text: &str, why: impl Into<String>) -> NotationError {
        NotationError { text: text.to_string(), why: why.into(), ambiguous: true }
    }

    /// The same problem as a record error on `line`, at `ply`.
    pub(crate) fn in_record(self, line: usize, ply: usize) -> RecordError {
        let kind = if self.ambiguous { ErrorKind::Ambiguous } else { ErrorKind::IllegalMove };
        RecordError::at_line(kind, line, &self.text, self.why).at_ply(ply)
    }
}

/// Origins of the legal board moves of `piece` to `to`.
pub(crate) fn origins(pos: &Position, piece: Piece, to: Square) -> Vec<Square> {
    let mut froms: Vec<Square> = pos
        .legal_moves()
        .into_iter()
        .filter_map(|m| match m {
            Move::Normal { from, to: t, .. } if t == to && pos.piece_at(from) == Some(piece) => Some(from),
            _ => None,
        })
        .collect();
    froms.sort();
    froms.dedup();
    froms
}

/// The longest time a record may give one move: a year. A time that is
/// negative, not a number, or longer than this is an error of its line
/// ([`ErrorKind::Time`]), never clamped.
pub const MAX_MOVE_TIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// Writers refuse the times readers refuse, so that what they write reads
/// back.
pub(crate) fn check_times(record: &Record) -> Result<(), RecordError> {
    let moves = record.moves.iter().enumerate().map(|(i, m)| (Some(i + 1), m.time));
    let end = record.end.iter().map(|e| (None, e.time));
    for (ply, time) in moves.chain(end) {
        if let Some(t) = time.filter(|&t| t > MAX_MOVE_TIME) {
            let why = format!("longer than {} seconds", MAX_MOVE_TIME.as_secs());
            let error = RecordError::new(ErrorKind::Time, None, format!("{} s", t.as_secs()), why);
            return Err(match ply {
                Some(ply) => error.at_ply(ply),
                None => error,
            });
        }
    }
    Ok(())
}

/// `seconds[.fraction]` as CSA writes a time (V2.2 whole seconds, V3.0 up
/// to milliseconds): ASCII digits, at most [`MAX_MOVE_TIME`].
pub(crate) fn decimal_seconds(text: &str) -> Option<Duration> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let secs = decimal_at_most(whole, MAX_MOVE_TIME.as_secs())?;
    let millis = match fraction.len() {
        0 if !text.ends_with('.') => 0,
        1..=3 => decimal_at_most(fraction, 999)? * 10u64.pow(3 - fraction.len() as u32),
        _ => return None,
    };
    Some(Duration::from_secs(secs) + Duration::from_millis(millis)).filter(|&t| t <= MAX_MOVE_TIME)
}

/// `[[h:]m:]s` as KIF writes a clock (`0:12`, `00:00:12`): ASCII digits,
/// minutes and seconds below 60 after the first part; at most `max`.
pub(crate) fn clock_seconds(text: &str, max: Duration) -> Option<Duration> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let mut secs = 0u64;
    for (i, part) in parts.iter().enumerate() {
        let limit = if i == 0 { max.as_secs() } else { 59 };
        let value = decimal_at_most(part, limit)?;
        secs = secs.checked_mul(60)?.checked_add(value)?;
    }
    Some(Duration::from_secs(secs)).filter(|&t| t <= max)
}
