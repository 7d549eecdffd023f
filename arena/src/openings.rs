//! Opening sets: one opening per line, as the arguments of a USI `position` command
//! (`startpos moves 7g7f 3c3d`, `sfen <SFEN> [moves ...]`) or a bare SFEN. Blank lines
//! and lines starting with `#` are skipped. Each opening is played twice, once with
//! each player as sente.
//!
//! Openings given as moves from the start position suit every engine; a SFEN start
//! needs engines that can be given a position (USI engines; not GNU Shogi or the
//! XBoard engines here, which get the moves played from the start).

use std::path::Path;

use rules::{Move, Position, Variant};

/// One opening: a base position and the moves played from it.
#[derive(Clone, Debug)]
pub struct Opening {
    /// The line as written in the file.
    pub text: String,
    pub base: Position,
    pub moves: Vec<Move>,
}

impl Opening {
    /// The variant's start position, no moves.
    pub fn startpos(variant: Variant) -> Opening {
        Opening { text: "startpos".into(), base: Position::startpos(variant), moves: Vec::new() }
    }

    /// Parses one line (see the module docs).
    pub fn parse(variant: Variant, line: &str) -> Result<Opening, String> {
        let pos = rules::parse_position_command(variant, line.trim()).map_err(|e| e.to_string())?;
        let moves: Vec<Move> = pos.moves_played().collect();
        let mut base = pos.clone();
        for _ in &moves {
            base.undo();
        }
        if let Some(o) = pos.outcome(&rules::EndRules::default()) {
            return Err(format!("the game has already ended there ({})", o.to_text()));
        }
        Ok(Opening { text: line.trim().to_string(), base, moves })
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

/// Reads an opening file.
pub fn load_openings(variant: Variant, path: &Path) -> Result<Vec<Opening>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        out.push(Opening::parse(variant, l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?);
    }
    if out.is_empty() {
        return Err(format!("{}: no openings", path.display()));
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
