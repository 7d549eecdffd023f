//! Evaluation opponents given as text (`eval.opponents`, `koma evaluate --opponent`):
//! `random`, `greedy`, a rung of a ladder (`fsf1`), or an arena player `NAME=SPEC`.
//! The config checks them with this, and the evaluation builds its players with it.

use arena::ladder::Ladder;
use arena::{BadPlayerSpec, PlayerSpec};

/// Why an opponent's text names no player.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OpponentError {
    /// A rung of the ladder whose player does not parse.
    #[error("rung {rung}: {source}")]
    Rung { rung: String, source: BadPlayerSpec },
    #[error("{text}: {source}")]
    BadSpec { text: String, source: BadPlayerSpec },
    #[error("{text}: a network opponent is `previous` (or a checkpoint for `koma evaluate`)")]
    Network { text: String },
    #[error("unknown opponent '{text}' (expected previous, a rung of the ladder: {}, or NAME=SPEC)", rungs.join(", "))]
    Unknown { text: String, rungs: Vec<String> },
}

/// A player opponent given as text: `random`, `greedy`, a rung of `ladder` (`fsf1`) or an
/// arena player `NAME=SPEC`. Returns the player (named) and its ladder Elo when it is a
/// rung.
pub fn parse_player(text: &str, ladder: &Ladder) -> Result<(PlayerSpec, Option<f64>), OpponentError> {
    if let Some(rung) = ladder.rung(text) {
        let spec = ladder.player_spec(rung).map_err(|source| OpponentError::Rung { rung: text.into(), source })?;
        return Ok((spec, Some(rung.elo)));
    }
    if text.contains('=') {
        let spec = text.parse::<PlayerSpec>().map_err(|source| OpponentError::BadSpec { text: text.into(), source })?;
        if matches!(spec.kind, arena::SpecKind::Koma { .. }) {
            return Err(OpponentError::Network { text: text.into() });
        }
        return Ok((spec, None));
    }
    let rungs = ladder.rungs.iter().map(|r| r.name.clone()).collect();
    Err(OpponentError::Unknown { text: text.into(), rungs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opponents_parse() {
        let ladder = Ladder::shipped();
        let (spec, elo) = parse_player("greedy", &ladder).unwrap();
        assert_eq!((spec.name.as_str(), elo), ("greedy", Some(2168.0)));
        assert_eq!(spec.kind, arena::SpecKind::Greedy);
        let (spec, elo) = parse_player("fsf1", &ladder).unwrap();
        assert_eq!((spec.name.as_str(), elo), ("fsf1", Some(4269.0)));
        let (spec, elo) = parse_player("weak=usi:/bin/engine,depth=2", &ladder).unwrap();
        assert_eq!((spec.name.as_str(), elo), ("weak", None));
        assert!(parse_player("fsf9", &ladder).unwrap_err().to_string().contains("fsf1"));
        assert!(matches!(parse_player("n=koma:x", &ladder), Err(OpponentError::Network { .. })));
    }
}
