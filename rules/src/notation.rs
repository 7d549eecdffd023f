//! Move notations (USI, and XBoard as HaChu writes it) over one position, and the
//! arguments of the USI `position` command with the moves in either notation.

use std::str::FromStr;

use crate::moves::Move;
use crate::position::Position;
use crate::sfen::SfenError;
use crate::usi::MoveError;
use crate::variant::Variant;

/// A move notation: USI (`7g7f`, dai `8m7l8m`) or XBoard as HaChu uses it
/// (`g3g4`, `h3g4,g4h3`, `@@@@`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Notation {
    #[default]
    Usi,
    Xboard,
}

impl Notation {
    pub fn name(self) -> &'static str {
        match self {
            Notation::Usi => "usi",
            Notation::Xboard => "xboard",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown notation '{}' (expected usi or xboard)", crate::excerpt(.0))]
pub struct UnknownNotation(pub String);

impl FromStr for Notation {
    type Err = UnknownNotation;
    fn from_str(s: &str) -> Result<Notation, UnknownNotation> {
        match s.to_ascii_lowercase().as_str() {
            "usi" => Ok(Notation::Usi),
            "xboard" | "hachu" | "winboard" => Ok(Notation::Xboard),
            _ => Err(UnknownNotation(s.to_string())),
        }
    }
}

/// Like [`parse_position_command`], with the moves in `notation`:
/// `startpos`, `startpos moves g5g6 f12e13`, `sfen <sfen> moves ...` or a
/// bare SFEN followed by `moves ...`.
pub fn parse_position_with(variant: Variant, text: &str, notation: Notation) -> Result<Position, PositionCommandError> {
    parse_position_command_in(variant, text, notation)
}

impl Position {
    /// The text of `mv` in `notation`.
    pub fn move_text(&self, mv: Move, notation: Notation) -> String {
        match notation {
            Notation::Usi => mv.to_usi(),
            Notation::Xboard => self.to_xboard(mv),
        }
    }

    /// Parses move text in `notation` against this position.
    pub fn parse_move(&self, text: &str, notation: Notation) -> Result<Move, MoveError> {
        match notation {
            Notation::Usi => self.parse_usi(text),
            Notation::Xboard => Ok(self.parse_xboard(text)?),
        }
    }

    /// Parses move text in `notation` and plays it if it is legal here.
    pub fn play_text(&mut self, text: &str, notation: Notation) -> Result<Move, MoveError> {
        let mv = self.parse_move(text, notation)?;
        self.play(mv);
        Ok(mv)
    }
}

/// A bad `position` command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionCommandError {
    #[error("empty position")]
    Empty,
    #[error(transparent)]
    Sfen(#[from] SfenError),
    #[error("expected 'moves' after the position, found '{}'", crate::excerpt(.0))]
    ExpectedMoves(String),
    #[error("move {ply} ({}): {source}", crate::excerpt(.mv))]
    Move { ply: usize, mv: String, source: MoveError },
}

/// Parses the arguments of a USI `position` command (`startpos`,
/// `startpos moves 7g7f`, `sfen <sfen> [moves ...]`) or a bare SFEN, and
/// plays the moves. Returns the position after the moves.
pub fn parse_position_command(variant: Variant, text: &str) -> Result<Position, PositionCommandError> {
    parse_position_command_in(variant, text, Notation::Usi)
}

/// [`parse_position_command`] with the moves in `notation`.
fn parse_position_command_in(
    variant: Variant,
    text: &str,
    notation: Notation,
) -> Result<Position, PositionCommandError> {
    parse_position_command_with(variant, text, notation, Position::from_sfen)
}

/// [`parse_position_command`] for a tsume problem: the SFEN's side to move may have no
/// king ([`Position::from_sfen_tsume`]).
pub fn parse_tsume_position_command(variant: Variant, text: &str) -> Result<Position, PositionCommandError> {
    parse_position_command_with(variant, text, Notation::Usi, Position::from_sfen_tsume)
}

fn parse_position_command_with(
    variant: Variant,
    text: &str,
    notation: Notation,
    from_sfen: fn(Variant, &str) -> Result<Position, SfenError>,
) -> Result<Position, PositionCommandError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let (mut pos, rest) = match words.first() {
        None => return Err(PositionCommandError::Empty),
        Some(&"startpos") => (Position::startpos(variant), &words[1..]),
        Some(&"sfen") => {
            let end = words.iter().position(|&w| w == "moves").unwrap_or(words.len());
            (from_sfen(variant, &words[1..end].join(" "))?, &words[end..])
        }
        Some(_) => {
            let end = words.iter().position(|&w| w == "moves").unwrap_or(words.len());
            (from_sfen(variant, &words[..end].join(" "))?, &words[end..])
        }
    };
    if let Some((&first, moves)) = rest.split_first() {
        if first != "moves" {
            return Err(PositionCommandError::ExpectedMoves(first.to_string()));
        }
        for (i, &m) in moves.iter().enumerate() {
            pos.play_text(m, notation).map_err(|source| PositionCommandError::Move {
                ply: i + 1,
                mv: m.to_string(),
                source,
            })?;
        }
    }
    Ok(pos)
}
