//! Opening files, read by `koma arena`, the trainer's evaluation and self-play
//! (`selfplay.opening_file`): one opening per line, as the arguments of a USI `position`
//! command (`startpos moves 7g7f 3c3d`, `sfen <SFEN> [moves ...]`, optionally with the word
//! `position` in front) or a bare SFEN. `#` starts a comment (a whole line or the rest of
//! one); blank lines are skipped. An opening whose game has already ended is refused.
//! The format is described in `data/openings/README.md`.

use std::path::{Path, PathBuf};

use rules::{EndRules, Move, Position, PositionCommandError, Variant};

/// One opening: a base position and the moves played from it.
#[derive(Clone, Debug)]
pub struct Opening {
    /// The line as written in the file (without a comment).
    pub text: String,
    pub base: Position,
    pub moves: Vec<Move>,
}

/// Why one line is not an opening.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadOpening {
    #[error(transparent)]
    Position(#[from] PositionCommandError),
    /// The rules end the game at the opening's position (the text of `rules::Outcome`).
    #[error("the game has already ended there ({0})")]
    Ended(String),
}

/// Why an opening file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OpeningsError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: {source}", path.display())]
    Line { path: PathBuf, line: usize, source: Box<BadOpening> },
    #[error("{}: no openings", path.display())]
    Empty { path: PathBuf },
}

impl Opening {
    /// The variant's start position, no moves.
    pub fn startpos(variant: Variant) -> Opening {
        Opening { text: "startpos".into(), base: Position::startpos(variant), moves: Vec::new() }
    }

    /// Parses one opening (see the module docs; a comment is not part of it).
    pub fn parse(variant: Variant, line: &str) -> Result<Opening, BadOpening> {
        let text = line.trim();
        let command = text.strip_prefix("position ").unwrap_or(text);
        let pos = rules::parse_position_command(variant, command.trim())?;
        if let Some(o) = pos.outcome(&EndRules::default()) {
            return Err(BadOpening::Ended(o.to_text()));
        }
        let moves: Vec<Move> = pos.moves_played().collect();
        let mut base = pos;
        for _ in &moves {
            base.undo();
        }
        Ok(Opening { text: text.to_string(), base, moves })
    }

    /// Whether the opening starts from the variant's start position.
    pub fn from_startpos(&self) -> bool {
        self.base.to_sfen() == self.base.variant().spec().start_sfen
    }

    /// The position after the opening, with the opening's moves as history.
    pub fn position(&self) -> Position {
        let mut p = self.base.clone();
        for &m in &self.moves {
            p.play(m);
        }
        p
    }
}

/// The openings of a file's text, with the 1-based number of a bad line.
pub fn parse_openings(variant: Variant, text: &str) -> Result<Vec<Opening>, (usize, BadOpening)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if !line.is_empty() {
            out.push(Opening::parse(variant, line).map_err(|e| (i + 1, e))?);
        }
    }
    Ok(out)
}

/// Reads an opening file; a file without openings is an error.
pub fn load_openings(variant: Variant, path: &Path) -> Result<Vec<Opening>, OpeningsError> {
    let text = std::fs::read_to_string(path).map_err(|source| OpeningsError::Read { path: path.into(), source })?;
    let out = parse_openings(variant, &text).map_err(|(line, e)| OpeningsError::Line {
        path: path.into(),
        line,
        source: Box::new(e),
    })?;
    if out.is_empty() {
        return Err(OpeningsError::Empty { path: path.into() });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse() {
        let o = Opening::parse(Variant::Shogi, "startpos moves 7g7f 3c3d").unwrap();
        assert!(o.from_startpos());
        assert_eq!(o.moves.len(), 2);
        let sfen = o.position().to_sfen();
        let o2 = Opening::parse(Variant::Shogi, &sfen).unwrap();
        assert!(!o2.from_startpos());
        assert!(o2.moves.is_empty());
        assert_eq!(o2.position().to_sfen(), sfen);
        assert!(Opening::parse(Variant::Shogi, "startpos moves 7g7e").is_err());
        let o3 = Opening::parse(Variant::Shogi, "position startpos moves 7g7f").unwrap();
        assert_eq!((o3.moves.len(), o3.text.as_str()), (1, "position startpos moves 7g7f"));
    }

    #[test]
    fn comments_blank_lines_and_bad_lines() {
        let text = "# a set\n\nstartpos moves 7g7f # the usual\n  sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1\n";
        let set = parse_openings(Variant::Shogi, text).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(set[0].text, "startpos moves 7g7f");
        assert!(set[1].from_startpos());
        let (line, e) = parse_openings(Variant::Shogi, "startpos\nstartpos moves 9z9z\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(matches!(e, BadOpening::Position(_)), "{e}");
    }

    #[test]
    fn an_ended_game_is_refused() {
        // Gote to move is mated: a gold on 5b, protected by another.
        let e = Opening::parse(Variant::Shogi, "sfen 4k4/4G4/4G4/9/9/9/9/9/4K4 w - 1").unwrap_err();
        assert!(matches!(e, BadOpening::Ended(_)), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.txt");
        std::fs::write(&path, "# nothing\n\n").unwrap();
        let e = load_openings(Variant::Shogi, &path).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: no openings", path.display()));
        let e = load_openings(Variant::Shogi, &dir.path().join("missing.txt")).unwrap_err();
        assert!(matches!(e, OpeningsError::Read { .. }), "{e}");
    }

    #[test]
    fn shipped_sets_load() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/openings");
        for (v, f) in [(Variant::Shogi, "shogi.txt"), (Variant::Sho, "sho.txt"), (Variant::Dai, "dai.txt")] {
            let path = root.join(f);
            let set = load_openings(v, &path).unwrap();
            assert!(set.len() >= 20, "{f}: {}", set.len());
            assert!(set.iter().all(|o| o.from_startpos()));
        }
    }
}
