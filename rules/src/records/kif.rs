//! KIF, the Japanese record format of Kifu for Windows and most shogi
//! programs: a header, then numbered moves with their origin and time,
//!
//! ```text
//! 手数----指手---------消費時間--
//!    1 ７六歩(77)        ( 0:12/00:00:12)
//!    2 ３四歩(33)        ( 0:05/00:00:05)
//!    3 投了              ( 0:00/00:00:12)
//! まで2手で後手の勝ち
//! ```
//!
//! The end is a last numbered line (投了, 詰み, 千日手, ...) and a summary
//! line; where both are there the numbered line decides, and a summary
//! alone ends the game where it stands (a move after it is an error). The
//! writer leaves the numbered line out where it would name another winner
//! than the record's. Only the main line is read: a 変化 (variation)
//! section ends the record.

use super::japanese::{kif_move, parse_kif_move};
use super::kif_header::{end_from_summary, parse_summary, summary_line, write_header, GameReader};
use super::{
    check_times, clock_seconds, EndReason, ErrorKind, GameEnd, Record, RecordError, RecordedMove, MAX_MOVE_TIME,
};
use crate::decimal::{decimal_at_most, digit_run};
use crate::{Color, Position, Square, MAX_MOVE_NUMBER};
use std::time::Duration;

/// The word of a numbered end line, and what it means for the side to
/// move: `Some(true)` it wins, `Some(false)` it loses.
const END_WORDS: [(&str, EndReason); 17] = [
    ("投了", EndReason::Resign),
    ("詰み", EndReason::Checkmate),
    ("千日手", EndReason::Repetition),
    ("入玉勝ち", EndReason::Declaration),
    ("入玉宣言", EndReason::Declaration),
    ("宣言勝ち", EndReason::Declaration),
    ("持将棋", EndReason::Impasse),
    ("切れ負け", EndReason::TimeUp),
    ("時間切れ", EndReason::TimeUp),
    ("反則負け", EndReason::IllegalMove),
    ("反則勝ち", EndReason::IllegalMove),
    ("中断", EndReason::Abort),
    ("最大手数", EndReason::MaxMoves),
    ("引き分け", EndReason::Draw),
    ("不詰", EndReason::NoMate),
    ("封じ手", EndReason::Abort),
    ("エラー", EndReason::Error),
];

/// The numbered end line's word for `end`.
fn end_word(end: &GameEnd, to_move: Color) -> &'static str {
    match end.reason {
        EndReason::Resign => "投了",
        EndReason::Checkmate => "詰み",
        EndReason::Repetition | EndReason::PerpetualCheck => "千日手",
        EndReason::Declaration => "入玉勝ち",
        EndReason::Impasse => "持将棋",
        EndReason::TimeUp => "切れ負け",
        EndReason::IllegalMove if end.winner == Some(to_move) => "反則勝ち",
        EndReason::IllegalMove => "反則負け",
        EndReason::Abort | EndReason::Error => "中断",
        EndReason::MaxMoves => "最大手数",
        EndReason::Draw => "引き分け",
        EndReason::NoMate => "不詰",
    }
}

/// The end a numbered end line (`投了`) gives at `pos`, if `word` is one.
fn end_of_word(word: &str, pos: &Position) -> Option<GameEnd> {
    let &(_, reason) = END_WORDS.iter().find(|(w, _)| *w == word)?;
    let mut end = GameEnd::at(reason, pos);
    if word == "反則勝ち" {
        end.winner = Some(pos.side_to_move());
    }
    Some(end)
}

/// A numbered line split into number, move text and time, each as
/// written; [`read_kif`] checks the number and the time.
struct MoveLine<'a> {
    number: &'a str,
    text: &'a str,
    /// Inside the brackets: ` 0:12/00:00:12`.
    time: Option<&'a str>,
}

/// `   1 ７六歩(77)   ( 0:12/00:00:12)+`: the time and the trailing `+`
/// (variations follow) are optional.
fn split_move_line(line: &str) -> Option<MoveLine<'_>> {
    let s = line.trim_start();
    let digits = digit_run(s);
    if digits == 0 {
        return None;
    }
    let rest = &s[digits..];
    if !rest.starts_with([' ', '　', '\t']) {
        return None;
    }
    let mut body = rest.trim().trim_end_matches('+').trim_end();
    let mut time = None;
    if body.ends_with(')') {
        if let Some(open) = body.rfind('(') {
            let inside = &body[open + 1..body.len() - 1];
            if inside.contains('/') || inside.contains(':') {
                time = Some(inside);
                body = body[..open].trim_end();
            }
        }
    }
    Some(MoveLine { number: &s[..digits], text: body.trim_end_matches([' ', '　']), time })
}

/// ` 0:12/00:00:12`: the move's own time (`m:ss`, at most
/// [`MAX_MOVE_TIME`]), then the mover's total, which must be a clock too
/// but is not kept (the writer adds the times up again).
fn parse_time(inside: &str) -> Option<Duration> {
    let (own, total) = inside.split_once('/').unwrap_or((inside, "0"));
    clock_seconds(total.trim(), Duration::from_secs(u64::MAX))?;
    clock_seconds(own.trim(), MAX_MOVE_TIME)
}

/// The move number of a numbered line: 1 to [`MAX_MOVE_NUMBER`], one more
/// than the line before's.
fn check_number(n: usize, line: &str, number: &str, last: Option<u64>) -> Result<u64, RecordError> {
    let bad = |why: String| RecordError::at_line(ErrorKind::MoveNumber, n, line, why);
    let value = decimal_at_most(number, u64::from(MAX_MOVE_NUMBER))
        .filter(|&v| v >= 1)
        .ok_or_else(|| bad(format!("move numbers are 1 to {MAX_MOVE_NUMBER}, not {number}")))?;
    match last {
        Some(last) if value != last + 1 => Err(bad(format!("move number {value} follows {last}"))),
        _ => Ok(value),
    }
}

fn bad_time(n: usize, line: &str) -> RecordError {
    let why = format!("a time is ( m:ss/h:mm:ss), the move's own 0 to {} seconds", MAX_MOVE_TIME.as_secs());
    RecordError::at_line(ErrorKind::Time, n, line, why)
}

/// Does the line look like a numbered move (so the header has ended)?
fn is_move_line(line: &str) -> bool {
    split_move_line(line).is_some()
}

/// Reads one KIF game (text already decoded).
pub fn read_kif(text: &str) -> Result<Record, RecordError> {
    let mut reader = GameReader::default();
    let mut last_number: Option<u64> = None;
    let mut text = text.lines();
    while let Some((n, line)) = reader.next_line(&mut text) {
        if line.trim_start().starts_with("まで") {
            // The summary ends the game unless a numbered end line did (that
            // line is what counts in KIF); unknown summaries are left alone.
            if let Some(summary) = parse_summary(line) {
                let (record, pos) = reader.game()?;
                if record.end.is_none() {
                    record.end = Some(end_from_summary(&summary, pos));
                }
            }
            continue;
        }
        if reader.game.is_none() {
            if line.starts_with("手数----") || line.starts_with("手数－") {
                reader.game()?;
                continue;
            }
            if reader.header.take(n, line)? {
                continue;
            }
            if !is_move_line(line) {
                return Err(RecordError::at_line(ErrorKind::UnknownHeader, n, line, "not a KIF header line"));
            }
        }
        let (record, pos) = reader.game()?;
        let Some(ml) = split_move_line(line) else {
            return Err(RecordError::at_line(ErrorKind::Syntax, n, line, "expected a numbered move"));
        };
        last_number = Some(check_number(n, line, ml.number, last_number)?);
        let time = ml.time.map(|t| parse_time(t).ok_or_else(|| bad_time(n, line))).transpose()?;
        let ply = record.moves.len() + 1;
        if record.end.is_some() {
            return Err(
                RecordError::at_line(ErrorKind::Syntax, n, ml.text, "move after the end of the game").at_ply(ply)
            );
        }
        if let Some(mut end) = end_of_word(ml.text, pos) {
            end.time = time;
            record.end = Some(end);
            continue;
        }
        let previous = record.moves.last().map(|m| m.mv.to());
        let mv = parse_kif_move(pos, ml.text, previous).map_err(|e| e.in_record(n, ply))?;
        pos.play(mv);
        record.moves.push(RecordedMove { mv, time, comments: Vec::new() });
    }
    if reader.game.is_none() && (reader.lines == 0 || reader.header.start().is_err()) {
        return Err(RecordError::new(ErrorKind::Truncated, Some(reader.lines.max(1)), "", "no KIF game in the text"));
    }
    Ok(reader.into_game()?.0)
}

/// Display width: full-width characters take two columns.
fn width(s: &str) -> usize {
    s.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum()
}

/// `( 0:12/00:00:12)`: this move's time and the mover's total.
fn time_text(own: Duration, total: Duration) -> String {
    let (m, s) = (own.as_secs() / 60, own.as_secs() % 60);
    let t = total.as_secs();
    format!("({:>2}:{:02}/{:02}:{:02}:{:02})", m, s, t / 3600, t / 60 % 60, t % 60)
}

/// Writes a record as KIF text (encode it with [`super::encode_record`]).
pub fn write_kif(record: &Record) -> Result<String, RecordError> {
    check_times(record)?;
    let mut out = String::new();
    write_header(record, &mut out)?;
    out.push_str("手数----指手---------消費時間--\n");
    // A move line has a time only where the record has one (0:00 for none
    // would read back as a time of zero); the end line of a timed game
    // always has one, as other programs write it.
    let timed = record.moves.iter().any(|m| m.time.is_some()) || record.end.as_ref().is_some_and(|e| e.time.is_some());
    let mut totals = [Duration::ZERO; 2];
    let mut lines = Vec::new();
    let mut previous: Option<Square> = None;
    let end_pos = record.replay(|pos, i, m| {
        let text = kif_move(pos, m.mv, previous);
        let mut line = format!("{:>4} {}", i + 1, text);
        if let Some(own) = m.time {
            totals[pos.side_to_move().index()] += own;
            line.push_str(&" ".repeat(14usize.saturating_sub(width(&text)) + 1));
            line.push_str(&time_text(own, totals[pos.side_to_move().index()]));
        }
        lines.push(line);
        for c in &m.comments {
            lines.push(format!("*{c}"));
        }
        previous = Some(m.mv.to());
    })?;
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(end) = &record.end {
        let to_move = end_pos.side_to_move();
        let word = end_word(end, to_move);
        let comments: String = end.comments.iter().map(|c| format!("*{c}\n")).collect();
        // The numbered line names the winner by itself (投了: the side to
        // move loses). Where the record's winner is another (a summary said
        // so), the summary alone, with the cause, says how the game ended.
        if end_of_word(word, &end_pos).is_some_and(|said| said.winner == end.winner) {
            out.push_str(&format!("{:>4} {}", record.moves.len() + 1, word));
            if let Some(own) = end.time.or(timed.then_some(Duration::ZERO)) {
                let total = totals[to_move.index()] + own;
                out.push_str(&" ".repeat(14usize.saturating_sub(width(word)) + 1));
                out.push_str(&time_text(own, total));
            }
            out.push('\n');
            out.push_str(&comments);
            out.push_str(&summary_line(record, end, record.moves.len(), to_move, false));
            out.push('\n');
        } else {
            out.push_str(&summary_line(record, end, record.moves.len(), to_move, true));
            out.push('\n');
            out.push_str(&comments);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Start;
    use crate::Handicap;

    const GAME: &str = "\
開始日時：2024/05/01 10:00:00
手合割：平手
先手：A
後手：B
手数----指手---------消費時間--
   1 ７六歩(77)        ( 0:12/00:00:12)
*good
   2 ３四歩(33)        ( 0:05/00:00:05)
   3 ２二角成(88)      ( 0:01/00:00:13)
   4 同　銀(31)        ( 0:02/00:00:07)
   5 投了              ( 0:00/00:00:13)
まで4手で後手の勝ち
";

    #[test]
    fn reads_moves_times_comments_and_the_end() {
        let r = read_kif(GAME).unwrap();
        assert_eq!(r.usi_moves(), ["7g7f", "3c3d", "8h2b+", "3a2b"]);
        assert_eq!(r.moves[0].time, Some(Duration::from_secs(12)));
        assert_eq!(r.moves[0].comments, ["good"]);
        let end = r.end.as_ref().unwrap();
        assert_eq!((end.reason, end.winner), (EndReason::Resign, Some(Color::Gote)));
        assert_eq!(r.info.sente.as_deref(), Some("A"));
        assert_eq!(read_kif(&write_kif(&r).unwrap()).unwrap(), r);
    }

    #[test]
    fn errors_name_line_and_move() {
        let bad = GAME.replace("３四歩(33)", "３五歩(33)");
        let e = read_kif(&bad).unwrap_err();
        assert_eq!((e.kind, e.line, e.ply), (ErrorKind::IllegalMove, Some(8), Some(2)));
        assert!(e.to_string().contains("３五歩(33)"), "{e}");
        let cut = &GAME[..GAME.find("(33)").unwrap()];
        let e = read_kif(cut).unwrap_err();
        assert_eq!(e.line, Some(8), "{e}");
        let e = read_kif(&GAME.replace("手合割：平手", "おかしな行")).unwrap_err();
        assert_eq!((e.kind, e.line), (ErrorKind::UnknownHeader, Some(2)));
    }

    #[test]
    fn handicap_games_name_the_players_by_their_role() {
        let mut r = Record::new(Start::Handicap(Handicap::TwoPiece));
        let mut pos = Handicap::TwoPiece.position();
        for m in ["6a6b", "7g7f"] {
            r.moves.push(RecordedMove::new(pos.play_usi(m).unwrap()));
        }
        r.info.sente = Some("shitate".into());
        r.end = Some(GameEnd::at(EndReason::Resign, &pos));
        let text = write_kif(&r).unwrap();
        assert!(text.contains("手合割：二枚落ち\n下手：shitate\n"), "{text}");
        assert!(text.contains("まで2手で下手の勝ち"), "{text}");
        assert_eq!(read_kif(&text).unwrap(), r);
    }
}
