//! KI2, the Japanese record format of books and newspapers: the KIF header,
//! then moves as they are read aloud (`▲７六歩 △３四歩 ▲２二角成 △同　銀`),
//! several to a line or one, and a summary line (`まで4手で先手の勝ち`)
//! that is the only word on how the game ended. A summary that names a
//! winner without a cause is read as checkmate when the loser stands
//! mated, else as resignation.

use super::japanese::{japanese, parse_japanese, side_mark};
use super::kif_header::{end_from_summary, parse_summary, summary_line, write_header, GameReader};
use super::{ErrorKind, Record, RecordError, RecordedMove};
use crate::Square;

const MARKS: [char; 5] = ['▲', '△', '☗', '☖', '▽'];

/// Reads one KI2 game (text already decoded).
pub fn read_ki2(text: &str) -> Result<Record, RecordError> {
    let mut reader = GameReader::default();
    let mut text = text.lines();
    while let Some((n, line)) = reader.next_line(&mut text) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("まで") {
            let summary = parse_summary(trimmed)
                .ok_or_else(|| RecordError::at_line(ErrorKind::Syntax, n, line, "unknown result"))?;
            let (record, pos) = reader.game()?;
            record.end = Some(end_from_summary(&summary, pos));
            break;
        }
        if !trimmed.starts_with(MARKS) {
            if reader.game.is_none() && (reader.header.take(n, line)? || line.starts_with("手数----")) {
                continue;
            }
            let kind = if reader.game.is_none() { ErrorKind::UnknownHeader } else { ErrorKind::Syntax };
            return Err(RecordError::at_line(kind, n, line, "not a KI2 header or move line"));
        }
        let (record, pos) = reader.game()?;
        for token in split_moves(trimmed) {
            let previous = record.moves.last().map(|m| m.mv.to());
            let ply = record.moves.len() + 1;
            let mv = parse_japanese(pos, token, previous).map_err(|e| e.in_record(n, ply))?;
            pos.play(mv);
            record.moves.push(RecordedMove::new(mv));
        }
    }
    if reader.game.is_none() && reader.lines == 0 {
        return Err(RecordError::new(ErrorKind::Truncated, Some(1), "", "no KI2 game in the text"));
    }
    Ok(reader.into_game()?.0)
}

/// `▲７六歩    △３四歩` → [`▲７六歩`, `△３四歩`]: each move starts at a
/// side mark (moves may hold a full-width space: `△同　銀`).
fn split_moves(line: &str) -> Vec<&str> {
    let starts: Vec<usize> = line.char_indices().filter(|(_, c)| MARKS.contains(c)).map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| line[s..starts.get(k + 1).copied().unwrap_or(line.len())].trim_end_matches([' ', '　', '\t']))
        .collect()
}

/// Writes a record as KI2 text, one move a line (encode it with
/// [`super::encode_record`]). Times are not part of KI2.
pub fn write_ki2(record: &Record) -> Result<String, RecordError> {
    let mut out = String::new();
    write_header(record, &mut out)?;
    out.push('\n');
    let mut previous: Option<Square> = None;
    let end_pos = record.replay(|pos, _, m| {
        out.push(side_mark(pos.side_to_move()));
        out.push_str(&japanese(pos, m.mv, previous));
        out.push('\n');
        for c in &m.comments {
            out.push_str(&format!("*{c}\n"));
        }
        previous = Some(m.mv.to());
    })?;
    if let Some(end) = &record.end {
        out.push_str(&summary_line(record, end, record.moves.len(), end_pos.side_to_move(), true));
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::EndReason;
    use crate::Color;

    #[test]
    fn several_moves_a_line_and_the_summary() {
        let text =
            "手合割：平手\n先手：A\n後手：B\n\n▲７六歩    △３四歩    ▲２二角成  △同　銀\n*nice\nまで4手で後手の勝ち\n";
        let r = read_ki2(text).unwrap();
        assert_eq!(r.usi_moves(), ["7g7f", "3c3d", "8h2b+", "3a2b"]);
        assert_eq!(r.moves[3].comments, ["nice"]);
        let end = r.end.as_ref().unwrap();
        assert_eq!((end.reason, end.winner), (EndReason::Resign, Some(Color::Gote)));
        let again = read_ki2(&write_ki2(&r).unwrap()).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn a_bad_move_names_its_line() {
        let text = "手合割：平手\n\n▲７六歩 △３四歩\n▲２二角 △同　金\n";
        let e = read_ki2(text).unwrap_err();
        assert_eq!((e.line, e.ply), (Some(4), Some(4)), "{e}");
    }
}
