//! `eval.jsonl`: one JSON line per evaluation match of a training run (written by
//! koma-trainer's evaluation, read by its plot). Fields in `data/FORMAT.md` ("Runs").

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

/// One line of `eval.jsonl`: the network of `step` against `opponent`.
///
/// Infinite values (an Elo bound after a sweep) are written as null and read back as
/// `None` (or NaN for the plain numbers). Only `step`, `opponent`, `wins`, `draws` and
/// `losses` are required: lines of older runs lack the rest, which read as 0 or `None`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalRecord {
    /// The training step of the network evaluated.
    pub step: u64,
    /// Seconds into the run when the evaluation's result was recorded (it had ended).
    #[serde(default, deserialize_with = "null_as_nan")]
    pub elapsed_seconds: f64,
    pub opponent: String,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// The score, draws counting half.
    #[serde(default, deserialize_with = "null_as_nan")]
    pub score: f64,
    /// The Elo difference, finite (a sweep counts as having dropped half a game).
    #[serde(default, deserialize_with = "null_as_nan")]
    pub elo: f64,
    /// Mean game length in plies.
    #[serde(default, deserialize_with = "null_as_nan")]
    pub mean_length: f64,
    /// The 95% interval of the Elo difference (null: unbounded).
    #[serde(default)]
    pub elo_low: Option<f64>,
    #[serde(default)]
    pub elo_high: Option<f64>,
    /// Likelihood of superiority.
    #[serde(default, deserialize_with = "null_as_nan")]
    pub los: f64,
    /// Simulations per move of the network.
    #[serde(default)]
    pub simulations: u32,
    /// Wall-clock seconds of the match.
    #[serde(default, deserialize_with = "null_as_nan")]
    pub seconds: f64,
    /// Games lost by a fault of ours, of theirs.
    #[serde(default)]
    pub faults: [u32; 2],
    /// Positions per forward pass of our network.
    #[serde(default, deserialize_with = "null_as_nan")]
    pub mean_batch: f64,
    /// The opponent's rating on the run's ladder, when it is a rung (absent otherwise; older
    /// logs have none: then the shipped standard shogi ladder's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent_ladder_elo: Option<f64>,
    /// The network's ladder Elo from this match and over every rung of this step, with its
    /// interval (present for a rung; null when infinite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_elo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_elo_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_elo_high: Option<f64>,
}

fn null_as_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// An `eval.jsonl` that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum EvalLogError {
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}: not an evaluation record: {message}")]
    BadRecord { path: PathBuf, line: usize, message: String },
}

impl EvalRecord {
    /// The record as one line of JSON (no newline). Infinite numbers become null.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("an evaluation record serialises")
    }
}

/// The records of an `eval.jsonl` text, in order; `path` names it in errors.
pub fn parse_eval_log(text: &str, path: &Path) -> Result<Vec<EvalRecord>, EvalLogError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| EvalLogError::BadRecord {
                path: path.into(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// The records of an `eval.jsonl` file, in file order.
pub fn read_eval_log(path: &Path) -> Result<Vec<EvalRecord>, EvalLogError> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalLogError::Read { path: path.into(), source })?;
    parse_eval_log(&text, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_old_lines_read() {
        let rec = EvalRecord {
            step: 500,
            opponent: "greedy".into(),
            wins: 3,
            elo: 120.0,
            elo_low: Some(f64::NEG_INFINITY),
            elo_high: Some(300.0),
            faults: [1, 0],
            opponent_ladder_elo: Some(645.0),
            ladder_elo: Some(765.0),
            ladder_elo_low: Some(f64::NEG_INFINITY),
            ladder_elo_high: Some(900.0),
            ..EvalRecord::default()
        };
        let line = rec.to_line();
        assert!(line.contains("\"elo_low\":null") && line.contains("\"ladder_elo_low\":null"), "{line}");
        let back = &parse_eval_log(&line, Path::new("e")).unwrap()[0];
        assert_eq!(
            EvalRecord { elo_low: Some(f64::NEG_INFINITY), ladder_elo_low: Some(f64::NEG_INFINITY), ..back.clone() },
            rec
        );
        assert_eq!((back.elo_low, back.ladder_elo_low), (None, None));
        let not_a_rung = EvalRecord { opponent: "previous".into(), ..EvalRecord::default() }.to_line();
        assert!(!not_a_rung.contains("ladder"), "{not_a_rung}");
        let old = r#"{"draws":2,"elapsed_seconds":60.0,"elo":600.0,"losses":0,"mean_length":120.0,"opponent":"random","score":0.97,"step":500,"wins":38}"#;
        let r = &parse_eval_log(old, Path::new("e")).unwrap()[0];
        assert_eq!((r.step, r.wins, r.draws, r.losses, r.opponent_ladder_elo), (500, 38, 2, 0, None));
        let e = parse_eval_log("\n{\"step\": 1}\n", Path::new("eval.jsonl")).unwrap_err();
        assert!(e.to_string().starts_with("eval.jsonl:2: not an evaluation record"), "{e}");
    }
}
