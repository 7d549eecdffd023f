//! CSA, the record format of computer shogi (versions 2.2 and 3.0):
//!
//! ```text
//! V2.2
//! N+sente name
//! N-gote name
//! $EVENT:...
//! PI                      even game; PI82HI22KA removes pieces (handicaps)
//! +                       side to move
//! +7776FU                 a move: origin, destination, piece after moving
//! T12                     seconds used
//! 'comment
//! %TORYO                  the end: %TORYO %TSUMI %SENNICHITE %KACHI ...
//! ```
//!
//! A position may also be given row by row (`P1-KY-KE...`) with pieces in
//! hand (`P+00FU00KI`, `P-00AL` for all the rest). Several statements may
//! share a line, separated by commas; a file may hold several games
//! separated by `/`.

use super::{
    check_times, decimal_seconds, EndReason, ErrorKind, GameEnd, GameInfo, Record, RecordError, RecordedMove, Start,
    MAX_MOVE_TIME,
};
use crate::types::KIND_SLOTS;
use crate::{Color, Kind, Move, Piece, Position, Setup, Square, Variant};
use std::time::Duration;

/// The version line a writer puts first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CsaVersion {
    /// `V2.2`: whole seconds, `$TIME_LIMIT`.
    #[default]
    V22,
    /// `V3.0`: milliseconds in times, `$TIME`.
    V30,
}

const CODES: [(&str, Kind, bool); 14] = [
    ("FU", Kind::Pawn, false),
    ("KY", Kind::Lance, false),
    ("KE", Kind::Knight, false),
    ("GI", Kind::Silver, false),
    ("KI", Kind::Gold, false),
    ("KA", Kind::Bishop, false),
    ("HI", Kind::Rook, false),
    ("OU", Kind::King, false),
    ("TO", Kind::Pawn, true),
    ("NY", Kind::Lance, true),
    ("NK", Kind::Knight, true),
    ("NG", Kind::Silver, true),
    ("UM", Kind::Bishop, true),
    ("RY", Kind::Rook, true),
];

fn piece_code(kind: Kind, promoted: bool) -> &'static str {
    CODES.iter().find(|&&(_, k, p)| k == kind && p == promoted).map_or("??", |c| c.0)
}

fn parse_code(code: &str) -> Option<(Kind, bool)> {
    CODES.iter().find(|c| c.0 == code).map(|&(_, k, p)| (k, p))
}

fn sign(color: Color) -> char {
    match color {
        Color::Sente => '+',
        Color::Gote => '-',
    }
}

fn parse_sign(c: u8) -> Option<Color> {
    match c {
        b'+' => Some(Color::Sente),
        b'-' => Some(Color::Gote),
        _ => None,
    }
}

/// `$` keys CSA 2.2 and 3.0 define, and where they go.
const INFO_KEYS: [&str; 12] = [
    "EVENT",
    "SITE",
    "START_TIME",
    "END_TIME",
    "TIME_LIMIT",
    "OPENING",
    "TIME",
    "TIME+",
    "TIME-",
    "MAX_MOVES",
    "JISHOGI",
    "NOTE",
];

/// End markers and their reasons; `%+ILLEGAL_ACTION` and
/// `%-ILLEGAL_ACTION` name the side at fault and are handled apart.
const END_MARKERS: [(&str, EndReason); 13] = [
    ("%TORYO", EndReason::Resign),
    ("%TSUMI", EndReason::Checkmate),
    ("%SENNICHITE", EndReason::Repetition),
    ("%OUTE_SENNICHITE", EndReason::PerpetualCheck),
    ("%KACHI", EndReason::Declaration),
    ("%JISHOGI", EndReason::Impasse),
    ("%TIME_UP", EndReason::TimeUp),
    ("%ILLEGAL_MOVE", EndReason::IllegalMove),
    ("%CHUDAN", EndReason::Abort),
    ("%MAX_MOVES", EndReason::MaxMoves),
    ("%HIKIWAKE", EndReason::Draw),
    ("%FUZUMI", EndReason::NoMate),
    ("%ERROR", EndReason::Error),
];

/// The start position being built from `PI`, `P1`..`P9`, `P+`, `P-`.
struct BoardBuilder {
    board: Vec<Option<Piece>>,
    hands: [[u8; KIND_SLOTS]; 2],
    given: bool,
    /// `P-00AL`: this side takes every piece not placed elsewhere.
    rest_to: Option<Color>,
}

impl BoardBuilder {
    fn new() -> BoardBuilder {
        BoardBuilder { board: vec![None; 81], hands: [[0; KIND_SLOTS]; 2], given: false, rest_to: None }
    }

    fn set(&mut self, sq: Square, p: Option<Piece>) {
        self.board[sq.dense(9)] = p;
    }

    fn get(&self, sq: Square) -> Option<Piece> {
        self.board[sq.dense(9)]
    }

    /// `PI` with optional `XYKK` removals.
    fn initial(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        let even = Position::startpos(Variant::Shogi);
        for sq in all_squares() {
            self.set(sq, even.piece_at(sq));
        }
        self.given = true;
        let rest = &stmt[2..];
        if !rest.len().is_multiple_of(4) || !rest.is_ascii() {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "PI removals are XYKK, as in PI82HI22KA"));
        }
        for item in rest.as_bytes().chunks(4) {
            let item = std::str::from_utf8(item).unwrap_or("");
            let bad = |why: &str| RecordError::at_line(ErrorKind::Syntax, n, stmt, format!("'{item}': {why}"));
            let sq = parse_square(&item[..2]).ok_or_else(|| bad("bad square"))?;
            let (kind, promoted) = parse_code(&item[2..]).ok_or_else(|| bad("unknown piece"))?;
            match self.get(sq) {
                Some(p) if p.kind() == kind && !promoted => self.set(sq, None),
                _ => return Err(bad("no such piece there to remove")),
            }
        }
        Ok(())
    }

    /// `P1-KY-KE-GI-KI-OU-KI-GI-KE-KY`
    fn row(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        let rank = stmt.as_bytes()[1] - b'0';
        // Writers pad the last cell with a space that editors often strip.
        let mut cells = stmt[2..].trim_end().to_string();
        while cells.len() < 27 {
            cells.push(' ');
        }
        if cells.len() != 27 || !cells.is_ascii() {
            return Err(RecordError::at_line(
                ErrorKind::Syntax,
                n,
                stmt,
                "a board row is nine cells of three characters",
            ));
        }
        self.given = true;
        for i in 0..9 {
            let cell = &cells[i * 3..i * 3 + 3];
            let sq = Square::new(9 - i as u8, rank);
            if cell.trim() == "*" {
                self.set(sq, None);
                continue;
            }
            let color = parse_sign(cell.as_bytes()[0]);
            let kind = parse_code(&cell[1..]);
            match (color, kind) {
                (Some(c), Some((k, p))) => self.set(sq, Some(Piece::new(c, k, p))),
                _ => return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, format!("bad cell '{cell}'"))),
            }
        }
        Ok(())
    }

    /// `P+00FU00KI` (hand) or `P-5142OU` (board), `P-00AL`.
    fn pieces(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        let color = parse_sign(stmt.as_bytes()[1]).expect("caller checked");
        let rest = &stmt[2..];
        if !rest.len().is_multiple_of(4) || !rest.is_ascii() {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "pieces are XYKK, as in P+00FU"));
        }
        self.given = true;
        for item in rest.as_bytes().chunks(4) {
            let item = std::str::from_utf8(item).unwrap_or("");
            let bad = |why: &str| RecordError::at_line(ErrorKind::Syntax, n, stmt, format!("'{item}': {why}"));
            if item == "00AL" {
                self.rest_to = Some(color);
                continue;
            }
            let (kind, promoted) = parse_code(&item[2..]).ok_or_else(|| bad("unknown piece"))?;
            if &item[..2] == "00" {
                if promoted || kind == Kind::King {
                    return Err(bad("only unpromoted pieces other than the king go in hand"));
                }
                let held = &mut self.hands[color.index()][kind as usize];
                *held = held.checked_add(1).ok_or_else(|| bad("more pieces in hand than the game has"))?;
            } else {
                let sq = parse_square(&item[..2]).ok_or_else(|| bad("bad square"))?;
                self.set(sq, Some(Piece::new(color, kind, promoted)));
            }
        }
        Ok(())
    }

    fn finish(mut self, n: usize, side: Color) -> Result<Position, RecordError> {
        if !self.given {
            return Err(RecordError::at_line(
                ErrorKind::Truncated,
                n,
                "",
                "no start position (PI or P1..P9) before the moves",
            ));
        }
        if let Some(color) = self.rest_to {
            // The standard set: what the even position holds.
            let even = Position::startpos(Variant::Shogi);
            for kind in Kind::HAND {
                let total = even.pieces().filter(|(_, p)| p.kind() == kind).count();
                let placed = self.board.iter().flatten().filter(|p| p.kind() == kind).count()
                    + usize::from(self.hands[0][kind as usize])
                    + usize::from(self.hands[1][kind as usize]);
                // The rest is at most the whole set (18 pawns): it fits.
                let rest = total.saturating_sub(placed) as u8;
                let held = &mut self.hands[color.index()][kind as usize];
                *held = held.saturating_add(rest);
            }
        }
        let setup = Setup { variant: Variant::Shogi, board: self.board, hands: self.hands, side, move_number: 1 };
        Position::from_setup(setup).map_err(|e| RecordError::at_line(ErrorKind::Position, n, "", e.to_string()))
    }
}

fn all_squares() -> impl Iterator<Item = Square> {
    (1..=9).flat_map(|f| (1..=9).map(move |r| Square::new(f, r)))
}

fn parse_square(s: &str) -> Option<Square> {
    let b = s.as_bytes();
    let (f, r) = (b.first()?.wrapping_sub(b'0'), b.get(1)?.wrapping_sub(b'0'));
    ((1..=9).contains(&f) && (1..=9).contains(&r)).then(|| Square::new(f, r))
}

/// One game being read.
struct GameReader {
    record: Record,
    board: BoardBuilder,
    pos: Option<Position>,
    saw_anything: bool,
}

impl GameReader {
    fn new() -> GameReader {
        GameReader { record: Record::new(Start::Even), board: BoardBuilder::new(), pos: None, saw_anything: false }
    }

    fn statement(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        self.saw_anything = true;
        let bytes = stmt.as_bytes();
        match bytes[0] {
            b'V' => match stmt {
                "V2" | "V2.1" | "V2.2" | "V3.0" => Ok(()),
                _ => Err(RecordError::at_line(ErrorKind::UnknownHeader, n, stmt, "unknown CSA version")),
            },
            b'N' => {
                // The sign first: slicing after a multi-byte character would panic.
                let name = || stmt[2..].to_string();
                match bytes.get(1) {
                    Some(b'+') => self.record.info.sente = Some(name()),
                    Some(b'-') => self.record.info.gote = Some(name()),
                    _ => return Err(RecordError::at_line(ErrorKind::UnknownHeader, n, stmt, "N+ or N- expected")),
                }
                Ok(())
            }
            b'$' => self.info(n, stmt),
            b'P' if self.pos.is_none() => match bytes.get(1) {
                Some(b'I') => self.board.initial(n, stmt),
                Some(b'1'..=b'9') => self.board.row(n, stmt),
                Some(b'+' | b'-') => self.board.pieces(n, stmt),
                _ => Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "unknown position line")),
            },
            b'+' | b'-' if stmt.len() == 1 => {
                if self.pos.is_some() {
                    return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "second side-to-move line"));
                }
                let side = parse_sign(bytes[0]).expect("matched");
                let pos = std::mem::replace(&mut self.board, BoardBuilder::new()).finish(n, side)?;
                self.record.start = Start::from_position(&pos);
                self.pos = Some(pos);
                Ok(())
            }
            b'+' | b'-' => self.play(n, stmt),
            b'T' => {
                let time = Some(decimal_seconds(&stmt[1..]).ok_or_else(|| {
                    let max = MAX_MOVE_TIME.as_secs();
                    let why = format!("a time is T and 0 to {max} seconds (V3.0: up to three decimals), as in T12");
                    RecordError::at_line(ErrorKind::Time, n, stmt, why)
                })?);
                let slot = match (&mut self.record.end, self.record.moves.last_mut()) {
                    (Some(end), _) => &mut end.time,
                    (None, Some(m)) => &mut m.time,
                    (None, None) => {
                        return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "time before any move"))
                    }
                };
                if slot.is_some() {
                    return Err(RecordError::at_line(ErrorKind::Time, n, stmt, "a second time for one move"));
                }
                *slot = time;
                Ok(())
            }
            b'%' => self.end(n, stmt),
            _ => {
                let kind = if self.pos.is_none() { ErrorKind::UnknownHeader } else { ErrorKind::Syntax };
                Err(RecordError::at_line(kind, n, stmt, "not a CSA statement"))
            }
        }
    }

    fn info(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        let (key, value) = stmt[1..]
            .split_once(':')
            .ok_or_else(|| RecordError::at_line(ErrorKind::Syntax, n, stmt, "expected $KEY:value"))?;
        if !INFO_KEYS.contains(&key) {
            return Err(RecordError::at_line(ErrorKind::UnknownHeader, n, stmt, format!("unknown key ${key}")));
        }
        let info = &mut self.record.info;
        let value = value.to_string();
        match key {
            "EVENT" => info.event = Some(value),
            "SITE" => info.site = Some(value),
            "START_TIME" => info.start_time = Some(value),
            "END_TIME" => info.end_time = Some(value),
            "TIME_LIMIT" | "TIME" => info.time_control = Some(value),
            "OPENING" => info.opening = Some(value),
            _ => info.other.push((key.to_string(), value)),
        }
        Ok(())
    }

    fn play(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        let ply = self.record.moves.len() + 1;
        let Some(pos) = self.pos.as_mut() else {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "move before the side-to-move line (+ or -)"));
        };
        if self.record.end.is_some() {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "move after the end of the game").at_ply(ply));
        }
        let illegal = |why: String| RecordError::at_line(ErrorKind::IllegalMove, n, stmt, why).at_ply(ply);
        if stmt.len() != 7 || !stmt.is_ascii() {
            return Err(
                RecordError::at_line(ErrorKind::Syntax, n, stmt, "a move is +XYXYKK, as in +7776FU").at_ply(ply)
            );
        }
        let side = parse_sign(stmt.as_bytes()[0]).expect("matched");
        if side != pos.side_to_move() {
            return Err(illegal(format!("it is {}'s move", pos.side_to_move().name())));
        }
        let to = parse_square(&stmt[3..5]).ok_or_else(|| illegal("bad destination square".into()))?;
        let (kind, promoted) = parse_code(&stmt[5..7]).ok_or_else(|| illegal("unknown piece".into()))?;
        let mv = if &stmt[1..3] == "00" {
            if promoted {
                return Err(illegal("a promoted piece cannot be dropped".into()));
            }
            Move::Drop { kind, to }
        } else {
            let from = parse_square(&stmt[1..3]).ok_or_else(|| illegal("bad origin square".into()))?;
            let piece = pos
                .piece_at(from)
                .filter(|p| p.color() == side)
                .ok_or_else(|| illegal("no piece of the side to move there".into()))?;
            if piece.kind() != kind || (piece.is_promoted() && !promoted) {
                return Err(illegal(format!("the piece there is {}", piece_code(piece.kind(), piece.is_promoted()))));
            }
            Move::Normal { from, to, promote: promoted && !piece.is_promoted() }
        };
        if !pos.is_legal(mv) {
            let why = pos.parse_usi(&mv.to_usi()).err().map_or("illegal move".to_string(), |e| e.to_string());
            return Err(illegal(why));
        }
        pos.play(mv);
        self.record.moves.push(RecordedMove::new(mv));
        Ok(())
    }

    fn end(&mut self, n: usize, stmt: &str) -> Result<(), RecordError> {
        let Some(pos) = self.pos.as_ref() else {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "end marker before the start position"));
        };
        if self.record.end.is_some() {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "second end marker"));
        }
        let end = match stmt {
            "%+ILLEGAL_ACTION" | "%-ILLEGAL_ACTION" => {
                let at_fault = if stmt.as_bytes()[1] == b'+' { Color::Sente } else { Color::Gote };
                let mut end = GameEnd::at(EndReason::IllegalMove, pos);
                end.winner = Some(!at_fault);
                end
            }
            _ => match END_MARKERS.iter().find(|(m, _)| *m == stmt) {
                Some(&(_, reason)) => GameEnd::at(reason, pos),
                None => return Err(RecordError::at_line(ErrorKind::Syntax, n, stmt, "unknown end marker")),
            },
        };
        self.record.end = Some(end);
        Ok(())
    }

    fn comment(&mut self, text: &str) {
        let text = text.to_string();
        match (&mut self.record.end, self.record.moves.last_mut()) {
            (Some(end), _) => end.comments.push(text),
            (None, Some(m)) => m.comments.push(text),
            (None, None) => self.record.comments.push(text),
        }
    }

    fn finish(self, last_line: usize) -> Result<Record, RecordError> {
        if self.pos.is_none() {
            let why =
                if self.board.given { "no side-to-move line (+ or -) after the position" } else { "no start position" };
            return Err(RecordError::new(ErrorKind::Truncated, Some(last_line), "", why));
        }
        Ok(self.record)
    }
}

/// Reads every game of a CSA file (games separated by `/` lines).
pub fn read_csa_games(text: &str) -> Result<Vec<Record>, RecordError> {
    let mut games = Vec::new();
    let mut game = GameReader::new();
    let mut last = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last = n;
        let line = raw.trim_end_matches(['\r', '\n']);
        if let Some(comment) = line.strip_prefix('\'') {
            game.comment(comment);
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if line.trim() == "/" {
            games.push(std::mem::replace(&mut game, GameReader::new()).finish(n)?);
            continue;
        }
        // Names, keys and positions take the whole line (a name may hold a
        // comma); other statements may share a line, separated by commas.
        if line.starts_with(['P', 'N', '$']) {
            game.statement(n, line.trim_end())?;
            continue;
        }
        for stmt in line.split(',') {
            let stmt = stmt.trim();
            if !stmt.is_empty() {
                game.statement(n, stmt)?;
            }
        }
    }
    if game.saw_anything || games.is_empty() {
        games.push(game.finish(last.max(1))?);
    }
    Ok(games)
}

/// Reads a CSA file that holds one game.
pub fn read_csa(text: &str) -> Result<Record, RecordError> {
    let mut games = read_csa_games(text)?;
    if games.len() != 1 {
        return Err(RecordError::new(
            ErrorKind::Syntax,
            None,
            "",
            format!("{} games in the file; read them with read_csa_games", games.len()),
        ));
    }
    Ok(games.remove(0))
}

/// The CSA lines of a start position: `PI` with removals when the board is
/// the even one less some pieces and no one holds any; rows otherwise.
fn position_lines(pos: &Position) -> String {
    let even = Position::startpos(Variant::Shogi);
    let hands_empty = Color::BOTH.iter().all(|&c| Kind::HAND.iter().all(|&k| pos.hand(c, k) == 0));
    let subset = all_squares().all(|sq| pos.piece_at(sq).is_none() || pos.piece_at(sq) == even.piece_at(sq));
    let mut out = String::new();
    if hands_empty && subset {
        out.push_str("PI");
        // Removals from gote's side first, as handicap records list them.
        for rank in 1..=9 {
            for file in 1..=9 {
                let sq = Square::new(file, rank);
                if let (None, Some(p)) = (pos.piece_at(sq), even.piece_at(sq)) {
                    out.push_str(&format!("{file}{rank}{}", piece_code(p.kind(), false)));
                }
            }
        }
        out.push('\n');
    } else {
        for rank in 1..=9 {
            out.push_str(&format!("P{rank}"));
            for file in (1..=9).rev() {
                match pos.piece_at(Square::new(file, rank)) {
                    None => out.push_str(" * "),
                    Some(p) => {
                        out.push(sign(p.color()));
                        out.push_str(piece_code(p.kind(), p.is_promoted()));
                    }
                }
            }
            out.push('\n');
        }
        for color in Color::BOTH {
            let mut hand = String::new();
            for kind in Kind::HAND {
                for _ in 0..pos.hand(color, kind) {
                    hand.push_str(&format!("00{}", piece_code(kind, false)));
                }
            }
            if !hand.is_empty() {
                out.push_str(&format!("P{}{hand}\n", sign(color)));
            }
        }
    }
    out.push(sign(pos.side_to_move()));
    out.push('\n');
    out
}

fn time_line(time: Duration, version: CsaVersion) -> String {
    match version {
        CsaVersion::V30 if time.subsec_millis() != 0 => format!("T{}.{:03}", time.as_secs(), time.subsec_millis()),
        _ => format!("T{}", time.as_secs()),
    }
}

/// The end marker for `end`, with the side to move at the end.
fn end_marker(end: &GameEnd, to_move: Color) -> String {
    if end.reason == EndReason::IllegalMove && end.winner == Some(to_move) {
        // The side that just moved did something illegal.
        return format!("%{}ILLEGAL_ACTION", sign(!to_move));
    }
    let reason = match end.reason {
        EndReason::PerpetualCheck => EndReason::Repetition,
        r => r,
    };
    END_MARKERS.iter().find(|(_, r)| *r == reason).map_or("%CHUDAN", |(m, _)| m).to_string()
}

fn info_lines(info: &GameInfo, version: CsaVersion, out: &mut String) {
    let mut line = |key: &str, value: &Option<String>| {
        if let Some(v) = value {
            out.push_str(&format!("${key}:{v}\n"));
        }
    };
    line("EVENT", &info.event);
    line("SITE", &info.site);
    line("START_TIME", &info.start_time);
    line("END_TIME", &info.end_time);
    line(if version == CsaVersion::V30 { "TIME" } else { "TIME_LIMIT" }, &info.time_control);
    line("OPENING", &info.opening);
    for (key, value) in &info.other {
        if INFO_KEYS.contains(&key.as_str()) {
            out.push_str(&format!("${key}:{value}\n"));
        } else {
            // CSA has no place for other keys; keep them as comments.
            out.push_str(&format!("'{key}:{value}\n"));
        }
    }
}

/// Writes a record as CSA V2.2.
pub fn write_csa(record: &Record) -> Result<String, RecordError> {
    write_csa_with(record, CsaVersion::V22)
}

/// Writes a record as CSA of the given version.
pub fn write_csa_with(record: &Record, version: CsaVersion) -> Result<String, RecordError> {
    check_times(record)?;
    let mut out = String::from(match version {
        CsaVersion::V22 => "V2.2\n",
        CsaVersion::V30 => "V3.0\n",
    });
    if let Some(name) = &record.info.sente {
        out.push_str(&format!("N+{name}\n"));
    }
    if let Some(name) = &record.info.gote {
        out.push_str(&format!("N-{name}\n"));
    }
    info_lines(&record.info, version, &mut out);
    for c in &record.comments {
        out.push_str(&format!("'{c}\n"));
    }
    let start = record
        .start
        .position()
        .map_err(|e| RecordError::new(ErrorKind::Position, None, record.start.sfen(), e.to_string()))?;
    out.push_str(&position_lines(&start));
    let end_pos = record.replay(|pos, _, m| {
        let (from, to, kind, promoted) = match m.mv {
            Move::Normal { from, to, promote } => {
                let p = pos.piece_at(from).expect("legal moves start on a piece");
                (format!("{}{}", from.file(), from.rank()), to, p.kind(), p.is_promoted() || promote)
            }
            Move::Drop { kind, to } => ("00".to_string(), to, kind, false),
            Move::Lion { to, .. } => ("??".to_string(), to, Kind::King, false),
        };
        out.push_str(&format!(
            "{}{from}{}{}{}\n",
            sign(pos.side_to_move()),
            to.file(),
            to.rank(),
            piece_code(kind, promoted)
        ));
        if let Some(t) = m.time {
            out.push_str(&time_line(t, version));
            out.push('\n');
        }
        for c in &m.comments {
            out.push_str(&format!("'{c}\n"));
        }
    })?;
    if let Some(end) = &record.end {
        out.push_str(&end_marker(end, end_pos.side_to_move()));
        out.push('\n');
        if let Some(t) = end.time {
            out.push_str(&time_line(t, version));
            out.push('\n');
        }
        for c in &end.comments {
            out.push_str(&format!("'{c}\n"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handicap;

    #[test]
    fn reads_a_v22_game_with_times_and_comments() {
        let text = "V2.2\nN+A\nN-B\n$EVENT:test\n'before\nPI\n+\n+7776FU,T3\n'after one\n-3334FU\nT5\n%TORYO\nT1\n";
        let r = read_csa(text).unwrap();
        assert_eq!(r.usi_moves(), ["7g7f", "3c3d"]);
        assert_eq!(r.comments, ["before"]);
        assert_eq!(r.moves[0].time, Some(Duration::from_secs(3)));
        assert_eq!(r.moves[0].comments, ["after one"]);
        let end = r.end.clone().unwrap();
        assert_eq!(
            (end.reason, end.winner, end.time),
            (EndReason::Resign, Some(Color::Gote), Some(Duration::from_secs(1)))
        );
        assert_eq!(read_csa(&write_csa(&r).unwrap()).unwrap(), r);
    }

    #[test]
    fn handicaps_as_pi_removals_and_rows() {
        let text = "V2.2\nPI82HI22KA\n-\n-5142OU\n+7776FU\n%TORYO\n";
        let r = read_csa(text).unwrap();
        assert_eq!(r.start, Start::Handicap(Handicap::TwoPiece));
        let written = write_csa(&r).unwrap();
        assert!(written.contains("PI22KA82HI\n-\n"), "{written}");
        let mut three = Record::new(Start::Handicap(Handicap::ThreePawns));
        three.moves.push(RecordedMove::new(Handicap::ThreePawns.position().parse_usi("P*5e").unwrap()));
        let written = write_csa_with(&three, CsaVersion::V30).unwrap();
        assert!(written.contains("P-00FU00FU00FU\n-\n-0055FU\n"), "{written}");
        assert_eq!(read_csa(&written).unwrap(), three);
    }

    #[test]
    fn end_markers_and_illegal_actions() {
        // Gote, to move, at fault: the same as an illegal move by gote.
        let r = read_csa("PI\n+\n+7776FU\n%-ILLEGAL_ACTION\n").unwrap();
        assert_eq!(r.end.as_ref().unwrap().winner, Some(Color::Sente));
        assert!(write_csa(&r).unwrap().ends_with("%ILLEGAL_MOVE\n"));
        // Sente, who just moved, at fault.
        let r = read_csa("PI\n+\n+7776FU\n%+ILLEGAL_ACTION\n").unwrap();
        assert_eq!(r.end.as_ref().unwrap().winner, Some(Color::Gote));
        assert!(write_csa(&r).unwrap().ends_with("%+ILLEGAL_ACTION\n"));
        let r = read_csa("PI\n+\n+7776FU\n%ILLEGAL_MOVE\n").unwrap();
        assert_eq!(r.end.as_ref().unwrap().winner, Some(Color::Sente));
        let r = read_csa("PI\n+\n%TIME_UP\n").unwrap();
        assert_eq!(r.end.as_ref().unwrap().winner, Some(Color::Gote));
    }

    #[test]
    fn errors_name_the_line() {
        let e = read_csa("V2.2\nPI\n+\n+7776FU\n-3335FU\n").unwrap_err();
        assert_eq!((e.kind, e.line, e.ply), (ErrorKind::IllegalMove, Some(5), Some(2)), "{e}");
        let e = read_csa("V2.2\n$COLOUR:blue\nPI\n+\n").unwrap_err();
        assert_eq!((e.kind, e.line), (ErrorKind::UnknownHeader, Some(2)));
        let e = read_csa("V2.2\nPI\n+\n+7776FU\n-33").unwrap_err();
        assert_eq!((e.kind, e.line), (ErrorKind::Syntax, Some(5)));
        let e = read_csa("V2.2\nPI\n").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated);
        let games = read_csa_games("PI\n+\n+7776FU\n/\nPI\n+\n+2726FU\n").unwrap();
        assert_eq!(games.len(), 2);
    }
}
