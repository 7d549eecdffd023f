//! What KIF and KI2 share: the header (`key：value` lines, 手合割, the
//! board diagram of a game from a position), the lines both skip or stop at,
//! `*` comments, and the closing summary line (`まで55手で先手の勝ち`).

use super::japanese::{count_text, parse_count, parse_piece_name, piece_char};
use super::{EndReason, ErrorKind, GameEnd, GameInfo, Record, RecordError, Start};
use crate::{Color, Handicap, Kind, Piece, Position, Setup, Square, Variant};

/// Handicaps KIF names that [`Handicap`] does not have, as SFEN.
const OTHER_HANDICAPS: [(&str, &str); 4] = [
    ("三枚落ち", "lnsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"),
    ("五枚落ち", "2sgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"),
    ("左五枚落ち", "1nsgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"),
    ("飛落ち", "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"),
];

/// Reads header lines one at a time, then builds the start position.
#[derive(Default)]
pub(super) struct HeaderReader {
    pub info: GameInfo,
    handicap: Option<(usize, String)>,
    /// Board diagram rows seen so far, with the line of the first.
    rows: Vec<[Option<Piece>; 9]>,
    board_line: usize,
    hands: [[u8; crate::types::KIND_SLOTS]; 2],
    side: Option<Color>,
}

fn is_side_word(key: &str, sente: bool) -> bool {
    if sente {
        key == "先手" || key == "下手"
    } else {
        key == "後手" || key == "上手"
    }
}

impl HeaderReader {
    /// Takes `line` if it is a header line; `Ok(false)` if it is not.
    pub fn take(&mut self, n: usize, line: &str) -> Result<bool, RecordError> {
        let trimmed = line.trim();
        if trimmed.starts_with('|') {
            self.board_row(n, trimmed)?;
            return Ok(true);
        }
        if trimmed.starts_with("+--") || trimmed.starts_with("９ ８") || trimmed.starts_with("手数＝") {
            return Ok(true);
        }
        match trimmed {
            "後手番" | "上手番" => {
                self.side = Some(Color::Gote);
                return Ok(true);
            }
            "先手番" | "下手番" => {
                self.side = Some(Color::Sente);
                return Ok(true);
            }
            _ => {}
        }
        let Some((key, value)) = line.split_once('：') else {
            return Ok(false);
        };
        let key = key.trim();
        let value = value.trim_matches([' ', '　']).to_string();
        if key.is_empty() {
            return Ok(false);
        }
        let info = &mut self.info;
        match key {
            _ if is_side_word(key, true) => info.sente = Some(value),
            _ if is_side_word(key, false) => info.gote = Some(value),
            "先手の持駒" | "下手の持駒" => self.hands[0] = parse_hand(n, line, &value)?,
            "後手の持駒" | "上手の持駒" => self.hands[1] = parse_hand(n, line, &value)?,
            "手合割" => self.handicap = Some((n, value)),
            "開始日時" => info.start_time = Some(value),
            "終了日時" => info.end_time = Some(value),
            "棋戦" => info.event = Some(value),
            "場所" => info.site = Some(value),
            "持ち時間" => info.time_control = Some(value),
            "戦型" => info.opening = Some(value),
            _ => info.other.push((key.to_string(), value)),
        }
        Ok(true)
    }

    fn board_row(&mut self, n: usize, line: &str) -> Result<(), RecordError> {
        let bad = |why: &str| RecordError::at_line(ErrorKind::Syntax, n, line, why);
        if self.rows.is_empty() {
            self.board_line = n;
        }
        if self.rows.len() == 9 {
            return Err(bad("board diagram has more than nine rows"));
        }
        let inner: Vec<char> = line.chars().skip(1).take_while(|&c| c != '|').collect();
        if inner.len() != 18 || !line[1..].contains('|') {
            return Err(bad("board row must hold nine squares between | and |"));
        }
        let mut row = [None; 9];
        for (i, cell) in inner.chunks(2).enumerate() {
            let color = match cell[0] {
                'v' | 'V' => Color::Gote,
                ' ' | '^' | '　' => Color::Sente,
                _ => return Err(bad("each square is ' ' or 'v' and a piece")),
            };
            row[i] = match cell[1] {
                '・' | '　' | ' ' => None,
                c => {
                    let (kind, promoted, _) = parse_piece_name(&c.to_string()).ok_or_else(|| bad("unknown piece"))?;
                    Some(Piece::new(color, kind, promoted))
                }
            };
        }
        self.rows.push(row);
        Ok(())
    }

    /// The start position the header describes: the diagram if there is
    /// one, else the 手合割, else the even game.
    pub fn start(&self) -> Result<Start, RecordError> {
        if !self.rows.is_empty() {
            return self.diagram_start();
        }
        let Some((n, name)) = &self.handicap else {
            return Ok(Start::Even);
        };
        let line = format!("手合割：{name}");
        if name == "平手" {
            return Ok(Start::Even);
        }
        if let Ok(h) = name.parse::<Handicap>() {
            return Ok(Start::Handicap(h));
        }
        if let Some((_, sfen)) = OTHER_HANDICAPS.iter().find(|(n, _)| n == name) {
            let pos = Position::from_sfen(Variant::Shogi, sfen).expect("built-in handicap positions are valid");
            return Ok(Start::from_position(&pos));
        }
        if name == "その他" {
            return Err(RecordError::at_line(ErrorKind::Truncated, *n, &line, "手合割 その他 needs a board diagram"));
        }
        Err(RecordError::at_line(ErrorKind::UnknownHeader, *n, &line, "unknown handicap"))
    }

    fn diagram_start(&self) -> Result<Start, RecordError> {
        let n = self.board_line;
        if self.rows.len() != 9 {
            return Err(RecordError::at_line(
                ErrorKind::Truncated,
                n,
                "",
                format!("board diagram has {} rows; expected 9", self.rows.len()),
            ));
        }
        let mut board = vec![None; 81];
        for (r, row) in self.rows.iter().enumerate() {
            for (i, &p) in row.iter().enumerate() {
                // Rows are written from file 9 to file 1.
                board[Square::new(9 - i as u8, r as u8 + 1).dense(9)] = p;
            }
        }
        let setup = Setup {
            variant: Variant::Shogi,
            board,
            hands: self.hands,
            side: self.side.unwrap_or(Color::Sente),
            move_number: 1,
        };
        let pos =
            Position::from_setup(setup).map_err(|e| RecordError::at_line(ErrorKind::Position, n, "", e.to_string()))?;
        Ok(Start::from_position(&pos))
    }
}

/// What a KIF or KI2 reader holds while it reads: the header, the `*`
/// comments before the first move, the game once its moves begin, and how
/// many lines it has read.
#[derive(Default)]
pub(super) struct GameReader {
    pub header: HeaderReader,
    comments: Vec<String>,
    pub game: Option<(Record, Position)>,
    pub lines: usize,
}

impl GameReader {
    /// The next line to read, with its number (from 1) and trailing blanks
    /// removed. Blank, `#` (a note for programs) and `&` (a bookmark) lines
    /// are skipped; a `*` comment is filed on the end once the game has
    /// ended, else on the last move, else on the game. `None` at the end of
    /// the text or at a variation (`変化`): only the main line is read.
    pub fn next_line<'a>(&mut self, text: &mut std::str::Lines<'a>) -> Option<(usize, &'a str)> {
        for raw in text {
            self.lines += 1;
            let line = raw.trim_end_matches(['\r', ' ', '　', '\t']);
            if line.trim().is_empty() || line.starts_with('#') || line.starts_with('&') {
                continue;
            }
            if let Some(comment) = line.strip_prefix('*') {
                let comment = comment.to_string();
                match &mut self.game {
                    Some((record, _)) => match (&mut record.end, record.moves.last_mut()) {
                        (Some(end), _) => end.comments.push(comment),
                        (None, Some(m)) => m.comments.push(comment),
                        (None, None) => self.comments.push(comment),
                    },
                    None => self.comments.push(comment),
                }
                continue;
            }
            if line.starts_with("変化") {
                return None;
            }
            return Some((self.lines, line));
        }
        None
    }

    /// The game and its position, begun from the header when the moves
    /// have not begun yet.
    pub fn game(&mut self) -> Result<&mut (Record, Position), RecordError> {
        if self.game.is_none() {
            let start = self.header.start()?;
            let pos = start
                .position()
                .map_err(|e| RecordError::new(ErrorKind::Position, None, start.sfen(), e.to_string()))?;
            let mut record = Record::new(start);
            record.info = self.header.info.clone();
            record.comments = std::mem::take(&mut self.comments);
            self.game = Some((record, pos));
        }
        Ok(self.game.as_mut().expect("begun above"))
    }

    /// The game read, begun from the header if no move was read.
    pub fn into_game(mut self) -> Result<(Record, Position), RecordError> {
        self.game()?;
        Ok(self.game.expect("begun above"))
    }
}

/// Pieces in hand: `なし`, or `飛　角二　歩十八` (full- or half-width
/// spaces between).
fn parse_hand(n: usize, line: &str, value: &str) -> Result<[u8; crate::types::KIND_SLOTS], RecordError> {
    let mut hand = [0u8; crate::types::KIND_SLOTS];
    if value == "なし" || value.is_empty() {
        return Ok(hand);
    }
    for item in value.split(['　', ' ']).filter(|s| !s.is_empty()) {
        let bad = || {
            RecordError::at_line(ErrorKind::Syntax, n, line, format!("bad pieces in hand '{}'", crate::excerpt(item)))
        };
        let (kind, promoted, used) = parse_piece_name(item).ok_or_else(bad)?;
        if promoted || kind == Kind::King {
            return Err(bad());
        }
        let count = parse_count(&item[used..]).ok_or_else(bad)?;
        let held = &mut hand[kind as usize];
        *held = held.checked_add(count).ok_or_else(bad)?;
    }
    Ok(hand)
}

/// The side's name in a header or summary: 先手/後手, or 下手/上手 in a
/// handicap game.
pub(super) fn side_word(record: &Record, color: Color) -> &'static str {
    let handicap = matches!(record.start, Start::Handicap(_));
    match (color, handicap) {
        (Color::Sente, false) => "先手",
        (Color::Gote, false) => "後手",
        (Color::Sente, true) => "下手",
        (Color::Gote, true) => "上手",
    }
}

fn hand_text(pos: &Position, color: Color) -> String {
    let items: Vec<String> = Kind::HAND
        .iter()
        .filter(|&&k| pos.hand(color, k) > 0)
        .map(|&k| format!("{}{}", piece_char(k, false), count_text(pos.hand(color, k))))
        .collect();
    if items.is_empty() {
        "なし".to_string()
    } else {
        items.join("　")
    }
}

/// The board diagram (BOD) of a start position.
pub(super) fn board_diagram(pos: &Position) -> String {
    let mut out = format!("後手の持駒：{}\n", hand_text(pos, Color::Gote));
    out.push_str("  ９ ８ ７ ６ ５ ４ ３ ２ １\n+---------------------------+\n");
    const RANKS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];
    for (r, rank) in RANKS.iter().enumerate() {
        out.push('|');
        for file in (1..=9).rev() {
            match pos.piece_at(Square::new(file, r as u8 + 1)) {
                None => out.push_str(" ・"),
                Some(p) => {
                    out.push(if p.color() == Color::Gote { 'v' } else { ' ' });
                    out.push(piece_char(p.kind(), p.is_promoted()));
                }
            }
        }
        out.push('|');
        out.push(*rank);
        out.push('\n');
    }
    out.push_str("+---------------------------+\n");
    out.push_str(&format!("先手の持駒：{}\n", hand_text(pos, Color::Sente)));
    if pos.side_to_move() == Color::Gote {
        out.push_str("後手番\n");
    }
    out
}

/// The header lines both formats write: metadata, the start, the players.
pub(super) fn write_header(record: &Record, out: &mut String) -> Result<(), RecordError> {
    let info = &record.info;
    let mut line = |key: &str, value: &Option<String>| {
        if let Some(v) = value {
            out.push_str(&format!("{key}：{v}\n"));
        }
    };
    line("開始日時", &info.start_time);
    line("終了日時", &info.end_time);
    line("棋戦", &info.event);
    line("場所", &info.site);
    line("持ち時間", &info.time_control);
    match &record.start {
        Start::Even => out.push_str("手合割：平手\n"),
        Start::Handicap(h) => out.push_str(&format!("手合割：{}\n", h.japanese())),
        Start::Position(_) => {
            let pos = record
                .start
                .position()
                .map_err(|e| RecordError::new(ErrorKind::Position, None, record.start.sfen(), e.to_string()))?;
            out.push_str(&board_diagram(&pos));
        }
    }
    let mut line = |key: &str, value: &Option<String>| {
        if let Some(v) = value {
            out.push_str(&format!("{key}：{v}\n"));
        }
    };
    line(side_word(record, Color::Sente), &info.sente);
    line(side_word(record, Color::Gote), &info.gote);
    line("戦型", &info.opening);
    for (key, value) in &info.other {
        out.push_str(&format!("{key}：{value}\n"));
    }
    for c in &record.comments {
        out.push_str(&format!("*{c}\n"));
    }
    Ok(())
}

/// What a summary line says: the reason where it names one, and the
/// winner where it names one.
pub(super) struct Summary {
    pub reason: Option<EndReason>,
    pub winner: Option<Color>,
}

/// Reads `まで55手で先手の勝ち` and its kin; `None` if the text after まで
/// is not one this reader knows.
pub(super) fn parse_summary(line: &str) -> Option<Summary> {
    let rest = line.trim().strip_prefix("まで")?;
    let rest = rest.trim_start_matches(['、', ',']);
    let rest = &rest[rest.find('手')? + '手'.len_utf8()..];
    let rest = rest.strip_prefix('で').unwrap_or(rest);
    let side = |text: &str| -> Option<Color> {
        let at = text.find("手の")?;
        let before = text[..at].chars().last()?;
        match before {
            '先' | '下' => Some(Color::Sente),
            '後' | '上' => Some(Color::Gote),
            _ => None,
        }
    };
    let s = |reason, winner| Some(Summary { reason, winner });
    if rest.contains("連続王手") {
        let loser = side(rest);
        return s(Some(EndReason::PerpetualCheck), loser.map(|c| !c));
    }
    if rest.contains("の反則負け") {
        return s(Some(EndReason::IllegalMove), Some(!side(rest)?));
    }
    if rest.contains("の反則勝ち") {
        return s(Some(EndReason::IllegalMove), Some(side(rest)?));
    }
    if rest.contains("の入玉勝ち") || rest.contains("の宣言勝ち") {
        return s(Some(EndReason::Declaration), Some(side(rest)?));
    }
    if rest.contains("の勝ち") {
        let reason =
            if rest.contains("時間切れ") || rest.contains("切れ負け") { Some(EndReason::TimeUp) } else { None };
        return s(reason, Some(side(rest)?));
    }
    let reason = if rest.starts_with("千日手") {
        EndReason::Repetition
    } else if rest.starts_with("持将棋") {
        EndReason::Impasse
    } else if rest.starts_with("中断") {
        EndReason::Abort
    } else if rest.starts_with("入玉宣言") {
        EndReason::Declaration
    } else if rest.starts_with("最大手数") {
        EndReason::MaxMoves
    } else if rest.starts_with("引き分け") {
        EndReason::Draw
    } else if rest.starts_with("不詰") {
        EndReason::NoMate
    } else if rest.starts_with("詰み") {
        EndReason::Checkmate
    } else {
        return None;
    };
    s(Some(reason), None)
}

/// The end a summary line gives at the final position: a named winner
/// without a reason resigned, unless the loser stands mated.
pub(super) fn end_from_summary(summary: &Summary, pos: &Position) -> GameEnd {
    let reason = summary.reason.unwrap_or_else(|| {
        let mated = pos.outcome(&crate::EndRules::default()).is_some_and(|o| o.reason == crate::Reason::Checkmate);
        if mated {
            EndReason::Checkmate
        } else {
            EndReason::Resign
        }
    });
    let mut end = GameEnd::at(reason, pos);
    if summary.winner.is_some() && reason != EndReason::Repetition {
        end.winner = summary.winner;
    }
    end
}

/// The summary line for a game's end: `まで55手で先手の勝ち`. `plies` is the
/// number of moves, `to_move` the side to move at the end. `cause` adds
/// the cause of a time loss (KI2 has no other place for it).
pub(super) fn summary_line(record: &Record, end: &GameEnd, plies: usize, to_move: Color, cause: bool) -> String {
    let who = |c: Color| side_word(record, c);
    let tail = match (end.reason, end.winner) {
        (EndReason::IllegalMove, Some(w)) if w != to_move => format!("{}の反則負け", who(to_move)),
        (EndReason::IllegalMove, Some(w)) => format!("{}の反則勝ち", who(w)),
        (EndReason::PerpetualCheck, Some(w)) => format!("連続王手の千日手により{}の反則負け", who(!w)),
        (EndReason::Declaration, Some(w)) => format!("{}の入玉勝ち", who(w)),
        (EndReason::TimeUp, Some(w)) if cause => format!("時間切れにより{}の勝ち", who(w)),
        (_, Some(w)) => format!("{}の勝ち", who(w)),
        (EndReason::Impasse, None) => "持将棋".to_string(),
        (EndReason::Abort | EndReason::Error, None) => "中断".to_string(),
        (EndReason::MaxMoves, None) => "最大手数".to_string(),
        (EndReason::Draw, None) => "引き分け".to_string(),
        (EndReason::NoMate, None) => "不詰".to_string(),
        (_, None) => "千日手".to_string(),
    };
    format!("まで{plies}手で{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        let s = parse_summary("まで55手で先手の勝ち").unwrap();
        assert_eq!((s.reason, s.winner), (None, Some(Color::Sente)));
        let s = parse_summary("まで44手で後手の反則負け").unwrap();
        assert_eq!((s.reason, s.winner), (Some(EndReason::IllegalMove), Some(Color::Sente)));
        let s = parse_summary("まで70手で時間切れにより上手の勝ち").unwrap();
        assert_eq!((s.reason, s.winner), (Some(EndReason::TimeUp), Some(Color::Gote)));
        let s = parse_summary("まで42手で千日手").unwrap();
        assert_eq!((s.reason, s.winner), (Some(EndReason::Repetition), None));
        let s = parse_summary("まで2手で入玉宣言").unwrap();
        assert_eq!(s.reason, Some(EndReason::Declaration));
        assert!(parse_summary("まで3手で何か").is_none());
    }

    #[test]
    fn board_diagram_round_trips() {
        let sfen = "ln1gk1snl/1r5b1/p1pp+Ppppp/9/9/9/PP1PP1PPP/1B5R1/LNSGKGSNL w S2Pg 1";
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        let diagram = board_diagram(&pos);
        let mut reader = HeaderReader::default();
        for (i, line) in diagram.lines().enumerate() {
            assert!(reader.take(i + 1, line).unwrap(), "{line}");
        }
        assert_eq!(reader.start().unwrap(), Start::Position(pos.to_sfen()));
    }
}
