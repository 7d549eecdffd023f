//! The results of one periodic evaluation ([`EvalReport`]) and its log: a line for the
//! console, one line per opponent in `eval.jsonl` (`step`, `elapsed_seconds`, `opponent`,
//! `wins`, `draws`, `losses`, `score`, `elo` (finite: a sweep counts as having dropped
//! half a game), `mean_length`, and `elo_low`, `elo_high`, `los`, `simulations`,
//! `seconds`, `faults` (games lost by a fault of ours, of theirs), `mean_batch` (positions
//! per forward pass of our network's batching service; 0 without one, where each game
//! evaluates in its own thread), and for a rung `opponent_ladder_elo`, `ladder_elo`,
//! `ladder_elo_low`, `ladder_elo_high`; infinite bounds are null), and the TensorBoard
//! scalars `eval/score_vs_NAME`, `eval/elo_vs_NAME`, and `eval/ladder_elo`: the placement
//! over every rung played (finite; [`super::chart`] draws the same from `eval.jsonl`).

use std::io::Write as _;
use std::path::Path;

use arena::ladder::Placement;
use arena::schedule::PairOutcome;

use crate::tensorboard::TensorBoardLog;

/// One opponent's result in an evaluation.
#[derive(Clone, Debug)]
pub struct OpponentResult {
    pub name: String,
    pub outcome: PairOutcome,
    /// Mean positions per forward pass of our network.
    pub mean_batch: f64,
    pub seconds: f64,
    /// The opponent's ladder Elo, and ours from this match, when it is a rung.
    pub opponent_ladder_elo: Option<f64>,
    pub ladder: Option<Placement>,
}

/// The results of one evaluation.
#[derive(Clone, Debug)]
pub struct EvalReport {
    pub step: u64,
    pub simulations: u32,
    pub results: Vec<OpponentResult>,
    /// Placement over every rung played, with a finite rating for plots.
    pub ladder: Option<(Placement, f64)>,
    /// What the numbers do not say (the top rung beaten outright), for the console.
    pub notes: Vec<String>,
    /// A signal stopped the evaluation: a partial match is no measurement.
    pub stopped: bool,
}

impl EvalReport {
    /// One line for the console.
    pub fn line(&self) -> String {
        let mut line = format!("eval @{} ({} simulations):", self.step, self.simulations);
        for r in &self.results {
            let w = &r.outcome.wdl;
            line += &format!(
                " {} {:.2} (+{} ={} -{}, Elo {:+.0}, {:.0} s)",
                r.name,
                w.score(),
                w.wins,
                w.draws,
                w.losses,
                w.finite_elo(),
                r.seconds
            );
        }
        if let Some((p, _)) = &self.ladder {
            line += &format!("; ladder Elo {}", super::chart::placement_text(p));
        }
        line
    }

    /// Appends the records to `eval.jsonl` and the scalars to TensorBoard.
    pub fn write(&self, tb: &mut TensorBoardLog, jsonl: &Path, elapsed_seconds: f64) -> std::io::Result<()> {
        let mut lines = Vec::new();
        for r in &self.results {
            let w = &r.outcome.wdl;
            let (low, high) = w.elo_interval();
            tb.scalar(&format!("eval/score_vs_{}", r.name), w.score(), self.step);
            tb.scalar(&format!("eval/elo_vs_{}", r.name), w.finite_elo(), self.step);
            let rung = r.opponent_ladder_elo.zip(r.ladder);
            let rec = dataio::EvalRecord {
                step: self.step,
                elapsed_seconds,
                opponent: r.name.clone(),
                wins: w.wins,
                draws: w.draws,
                losses: w.losses,
                score: w.score(),
                elo: w.finite_elo(),
                mean_length: r.outcome.mean_plies(),
                elo_low: Some(low),
                elo_high: Some(high),
                los: w.los(),
                simulations: self.simulations,
                seconds: r.seconds,
                faults: r.outcome.faults,
                mean_batch: r.mean_batch,
                opponent_ladder_elo: rung.map(|(e, _)| e),
                ladder_elo: rung.map(|(_, p)| p.elo),
                ladder_elo_low: rung.map(|(_, p)| p.low),
                ladder_elo_high: rung.map(|(_, p)| p.high),
            };
            lines.push(rec);
        }
        if let Some((_, finite)) = &self.ladder {
            tb.scalar("eval/ladder_elo", *finite, self.step);
        }
        tb.flush();
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(jsonl)?;
        for rec in lines {
            writeln!(f, "{}", rec.to_line())?;
        }
        Ok(())
    }
}
