//! USI move lists, one game a line, as the USI `position` command writes
//! them: `position startpos moves 7g7f 3c3d`, `startpos moves ...`, or
//! `sfen <sfen> moves ...`. They carry no result, names or times.

use super::{ErrorKind, Record, RecordError, RecordedMove, Start};
use crate::{Position, Variant};

/// Reads one line of USI text.
fn read_line(n: usize, line: &str) -> Result<Record, RecordError> {
    let mut words: Vec<&str> = line.split_whitespace().collect();
    if words.first() == Some(&"position") {
        words.remove(0);
    }
    let moves_at = words.iter().position(|&w| w == "moves").unwrap_or(words.len());
    let start_pos = match words.first() {
        Some(&"startpos") if moves_at == 1 => Position::startpos(Variant::Shogi),
        Some(&"sfen") => Position::from_sfen(Variant::Shogi, &words[1..moves_at].join(" "))
            .map_err(|e| RecordError::at_line(ErrorKind::Position, n, line, e.to_string()))?,
        _ => {
            return Err(RecordError::at_line(
                ErrorKind::Syntax,
                n,
                line,
                "expected 'startpos' or 'sfen ...', then 'moves ...'",
            ))
        }
    };
    let mut record = Record::new(Start::from_position(&start_pos));
    let mut pos = start_pos;
    for (i, &text) in words.iter().skip(moves_at + 1).enumerate() {
        let mv = pos
            .play_usi(text)
            .map_err(|e| RecordError::at_line(ErrorKind::IllegalMove, n, text, e.to_string()).at_ply(i + 1))?;
        record.moves.push(RecordedMove::new(mv));
    }
    Ok(record)
}

/// Reads one game of USI text (blank lines and `#` comments aside).
pub fn read_usi(text: &str) -> Result<Record, RecordError> {
    let mut games = read_usi_games(text)?;
    if games.len() != 1 {
        return Err(RecordError::new(
            ErrorKind::Syntax,
            None,
            "",
            format!("{} games in the text; expected one", games.len()),
        ));
    }
    Ok(games.remove(0))
}

/// Reads a USI file: one game a line.
pub fn read_usi_games(text: &str) -> Result<Vec<Record>, RecordError> {
    let games: Vec<Record> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| read_line(i + 1, l))
        .collect::<Result<_, _>>()?;
    if games.is_empty() {
        return Err(RecordError::new(ErrorKind::Truncated, Some(1), "", "no USI game in the text"));
    }
    Ok(games)
}

/// Writes a record as a USI `position` command line.
pub fn write_usi(record: &Record) -> Result<String, RecordError> {
    record.final_position()?;
    let mut out = match record.start {
        Start::Even => "position startpos".to_string(),
        _ => format!("position sfen {}", record.start.sfen()),
    };
    if !record.moves.is_empty() {
        out.push_str(" moves");
        for m in &record.moves {
            out.push(' ');
            out.push_str(&m.mv.to_usi());
        }
    }
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handicap;

    #[test]
    fn position_commands_round_trip() {
        let r = read_usi("position startpos moves 7g7f 3c3d\n").unwrap();
        assert_eq!(r.usi_moves(), ["7g7f", "3c3d"]);
        assert_eq!(write_usi(&r).unwrap(), "position startpos moves 7g7f 3c3d\n");
        let text = format!("sfen {} moves 6a6b\n", Handicap::Bishop.sfen());
        let r = read_usi(&text).unwrap();
        assert_eq!(r.start, Start::Handicap(Handicap::Bishop));
        assert_eq!(read_usi(&write_usi(&r).unwrap()).unwrap(), r);
        let e = read_usi("\nstartpos moves 7g7f 7g7f\n").unwrap_err();
        assert_eq!((e.line, e.ply), (Some(2), Some(2)));
        assert_eq!(read_usi_games("startpos\nstartpos moves 2g2f\n").unwrap().len(), 2);
    }
}
