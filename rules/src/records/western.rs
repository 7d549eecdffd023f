//! Western (Hodges) move text: `P-7f`, `Bx8h+`, `Nx7c=`, `G6i-5h`, `P*5e`.
//!
//! Piece letter (`+` before it for a promoted piece), `-` for a move, `x`
//! for a capture, `*` for a drop, the destination, then `+` when the move
//! promotes or `=` when it could have and does not. The origin square is
//! written only when another piece of the same kind could also go there.

use super::{origins, NotationError, Record, RecordError, Start};
use crate::{Color, Kind, Move, Piece, Position, Square};

/// The piece letter: the king's and those of the kinds held in hand
/// ([`Kind::letter`]); `?` for the sho and dai kinds, which Hodges text
/// does not name.
fn letter(kind: Kind) -> char {
    match kind.letter() {
        Some(c) if kind == Kind::King || kind.is_hand() => c,
        _ => '?',
    }
}

fn kind_of_letter(c: char) -> Option<Kind> {
    Kind::from_letter(c).filter(|&k| k == Kind::King || k.is_hand())
}

fn square(sq: Square) -> String {
    format!("{}{}", sq.file(), crate::rank_letter(sq.rank()))
}

/// Hodges text of a legal move of `pos`.
pub fn western(pos: &Position, mv: Move) -> String {
    match mv {
        Move::Drop { kind, to } => format!("{}*{}", letter(kind), square(to)),
        Move::Normal { from, to, promote } => {
            let Some(piece) = pos.piece_at(from) else {
                return mv.to_usi();
            };
            let mut text = String::new();
            if piece.is_promoted() {
                text.push('+');
            }
            text.push(letter(piece.kind()));
            if origins(pos, piece, to).len() > 1 {
                text.push_str(&square(from));
            }
            text.push(if pos.piece_at(to).is_some() { 'x' } else { '-' });
            text.push_str(&square(to));
            if promote {
                text.push('+');
            } else if pos.is_legal(Move::Normal { from, to, promote: true }) {
                text.push('=');
            }
            text
        }
        Move::Lion { .. } => mv.to_usi(),
    }
}

/// Reads a square: file digit, rank letter `a`..`i` (or digit).
fn parse_square(s: &[char]) -> Option<Square> {
    let file = s.first()?.to_digit(10)? as u8;
    let rank = match s.get(1)? {
        c @ 'a'..='i' => *c as u8 - b'a' + 1,
        c => c.to_digit(10)? as u8,
    };
    ((1..=9).contains(&file) && (1..=9).contains(&rank)).then(|| Square::new(file, rank))
}

/// Reads Hodges text as a legal move of `pos`. The origin may be left out
/// when only one piece of the kind can go to the square; `-` must not
/// capture and `x` must. A promotable move without `+` or `=` does not
/// promote.
pub fn parse_western(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let err = |why: &str| NotationError::new(text, why);
    let chars: Vec<char> = text.trim().chars().collect();
    let mut i = 0;
    let promoted = chars.first() == Some(&'+');
    if promoted {
        i += 1;
    }
    // Some books write the dragon and horse as D and H.
    let (kind, promoted) = match chars.get(i) {
        Some('D') => (Kind::Rook, true),
        Some('H') => (Kind::Bishop, true),
        Some(&c) => (kind_of_letter(c).ok_or_else(|| err("expected a piece letter: K R B G S N L P"))?, promoted),
        None => return Err(err("empty move")),
    };
    i += 1;
    let side = pos.side_to_move();
    let origin = if chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
        let sq = parse_square(&chars[i..]).ok_or_else(|| err("bad origin square"))?;
        i += 2;
        Some(sq)
    } else {
        None
    };
    let separator = *chars.get(i).ok_or_else(|| err("expected -, x or * after the piece"))?;
    i += 1;
    let to = parse_square(chars.get(i..).unwrap_or(&[])).ok_or_else(|| err("bad destination square"))?;
    i += 2;
    let promote = match &chars[i.min(chars.len())..] {
        [] | ['='] => false,
        ['+'] => true,
        _ => return Err(err("unexpected text after the destination")),
    };
    if separator == '*' {
        let mv = Move::Drop { kind, to };
        if promoted || origin.is_some() || promote || !pos.is_legal(mv) {
            return Err(err("illegal drop"));
        }
        return Ok(mv);
    }
    let captures = pos.piece_at(to).is_some();
    match (separator, captures) {
        ('-', false) | ('x', true) => {}
        ('-', true) => return Err(err("the square is occupied: a capture is written with x")),
        ('x', false) => return Err(err("x marks a capture, but the square is empty")),
        _ => return Err(err("expected -, x or * after the piece")),
    }
    let piece = Piece::new(side, kind, promoted);
    let froms = origins(pos, piece, to);
    let from = match (origin, froms.as_slice()) {
        (Some(o), _) if froms.contains(&o) => o,
        (Some(_), _) | (None, []) => return Err(err("no such piece can move there")),
        (None, [only]) => *only,
        (None, _) => {
            return Err(NotationError::ambiguous(text, "two pieces can move there; give the origin, as in G6i-5h"))
        }
    };
    let mv = Move::Normal { from, to, promote };
    if pos.is_legal(mv) {
        Ok(mv)
    } else if promote {
        Err(err("this move cannot promote"))
    } else {
        Err(err("the piece must promote here (+)"))
    }
}

/// A game in Western notation: a few header lines, then numbered moves
/// (`1. P-7f P-3d 2. P-2f`), a move number and `...` when gote moves first,
/// and the result.
pub fn write_western(record: &Record) -> Result<String, RecordError> {
    let mut out = String::new();
    let info = &record.info;
    for (key, value) in [
        ("Event", &info.event),
        ("Site", &info.site),
        ("Date", &info.start_time),
        ("Sente", &info.sente),
        ("Gote", &info.gote),
    ] {
        if let Some(v) = value {
            out.push_str(&format!("[{key} \"{v}\"]\n"));
        }
    }
    match &record.start {
        Start::Even => {}
        Start::Handicap(h) => out.push_str(&format!("[Handicap \"{}\"]\n", h.name())),
        Start::Position(sfen) => out.push_str(&format!("[SFEN \"{sfen}\"]\n")),
    }
    let mut words = Vec::new();
    let mut number = 1;
    let end = record.replay(|pos, i, m| {
        if pos.side_to_move() == Color::Sente {
            words.push(format!("{number}."));
        } else if i == 0 {
            words.push(format!("{number}. ..."));
        }
        words.push(western(pos, m.mv));
        if pos.side_to_move() == Color::Gote {
            number += 1;
        }
    })?;
    let _ = end;
    if !out.is_empty() {
        out.push('\n');
    }
    // Lines of at most eight moves read well.
    let mut line = String::new();
    for w in words {
        if w.ends_with('.') && line.len() > 60 {
            out.push_str(line.trim_end());
            out.push('\n');
            line.clear();
        }
        line.push_str(&w);
        line.push(' ');
    }
    if !line.is_empty() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if let Some(end) = &record.end {
        let result = match end.winner {
            Some(c) => format!("{} wins", c.name()),
            None => "no winner".to_string(),
        };
        out.push_str(&format!("{result} ({})\n", end.reason.name().replace('_', " ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    fn pos(sfen: &str) -> Position {
        Position::from_sfen(Variant::Shogi, sfen).unwrap()
    }

    fn check(p: &Position, usi: &str, expected: &str) {
        let mv = p.parse_usi(usi).unwrap();
        assert_eq!(western(p, mv), expected, "{usi}");
        assert_eq!(parse_western(p, expected).unwrap(), mv, "{expected}");
    }

    #[test]
    fn the_rules_example_game() {
        let mut p = Position::startpos(Variant::Shogi);
        let game = [
            ("7g7f", "P-7f"),
            ("3c3d", "P-3d"),
            ("2g2f", "P-2f"),
            ("4a3b", "G-3b"),
            ("2f2e", "P-2e"),
            ("2b8h+", "Bx8h+"),
            ("7i8h", "Sx8h"),
            ("3a2b", "S-2b"),
        ];
        for (usi, text) in game {
            check(&p, usi, text);
            p.play_usi(usi).unwrap();
        }
        let mut q = Position::startpos(Variant::Shogi);
        for m in ["7g7f", "3c3d"] {
            q.play_usi(m).unwrap();
        }
        check(&q, "8h2b", "Bx2b=");
    }

    #[test]
    fn origins_only_when_needed() {
        let p = pos("4k4/9/9/9/9/9/9/9/3GKG3 b - 1");
        check(&p, "6i5h", "G6i-5h");
        check(&p, "4i4h", "G-4h");
        assert!(parse_western(&p, "G-5h").unwrap_err().ambiguous);
        let p = pos("4k4/9/2p6/9/3N5/9/9/9/4K4 b - 1");
        check(&p, "6e7c", "Nx7c=");
        check(&p, "6e7c+", "Nx7c+");
        let p = pos("4k4/9/9/9/9/9/9/9/4K1+S2 b S 1");
        check(&p, "3i3h", "+S-3h");
        check(&p, "S*5e", "S*5e");
        assert!(parse_western(&p, "S-5e").is_err());
        assert!(parse_western(&p, "+Sx3h").is_err(), "x on an empty square");
    }
}
