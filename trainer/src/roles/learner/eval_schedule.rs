//! When the learner evaluates and what it keeps of it: an evaluation of the checkpoint
//! just saved every `eval.interval` steps (skipped while the last one still runs), and
//! each finished one recorded in TensorBoard, `eval.jsonl` and the Elo plots, its
//! checkpoint then the `previous` baseline.

use std::sync::Arc;

use arena::Wdl;
use model::tch::Device;
use rules::Variant;

use super::eval_thread::{EvalJob, EvalOutcome, EvalRunner};
use crate::config::EvalConfig;
use crate::evaluation::TrainingEval;
use crate::roles::display::Display;
use crate::roles::files::RunFiles;
use crate::roles::network::pull_network;
use crate::roles::state::RunState;
use crate::tensorboard::TensorBoardLog;
use dataio::run_layout as layout;

pub(super) struct EvalSchedule {
    config: EvalConfig,
    plan: Arc<TrainingEval>,
    runner: EvalRunner,
    /// The last evaluation's results: (opponent, step, result).
    last: Vec<(String, u64, Wdl)>,
}

/// The checkpoint to evaluate and where.
pub(super) struct EvalTarget<'a> {
    pub files: &'a RunFiles,
    pub state: &'a RunState,
    pub variant: Variant,
    /// The checkpoint's stem and step.
    pub checkpoint: &'a str,
    pub step: u64,
    pub seed: u64,
    /// Games against each opponent.
    pub games: usize,
    pub device: Device,
}

/// The checkpoint `stem`'s local files: as this learner wrote them, or pulled from the store
/// (a remote run resumed elsewhere).
fn local_or_pulled(files: &RunFiles, stem: &str) -> Result<std::path::PathBuf, crate::error::TrainError> {
    let local = files.path(stem);
    if files.path(&format!("{stem}.json")).exists() && files.path(&format!("{stem}.safetensors")).exists() {
        return Ok(local);
    }
    pull_network(files, stem)
}

impl EvalSchedule {
    pub fn new(config: EvalConfig, plan: TrainingEval) -> EvalSchedule {
        EvalSchedule { config, plan: Arc::new(plan), runner: EvalRunner::default(), last: Vec::new() }
    }

    /// The `[eval]` table.
    pub fn config(&self) -> &EvalConfig {
        &self.config
    }

    /// Whether an evaluation falls due at `step` (its checkpoint is then saved first).
    pub fn due(&self, step: u64) -> bool {
        self.config.due(step)
    }

    pub fn busy(&self) -> bool {
        self.runner.busy()
    }

    /// Starts the evaluation of the checkpoint `t.checkpoint` (unless one still runs).
    pub fn start(&mut self, t: EvalTarget, display: &Display) {
        if self.runner.busy() {
            display.println(&format!("koma train: evaluation @{} skipped: the last one still runs", t.step));
            return;
        }
        let previous = match t.state.eval_checkpoint.as_deref() {
            Some(p) if self.plan.wants_previous() => pull_network(t.files, p).ok(),
            _ => None,
        };
        let ours = match local_or_pulled(t.files, t.checkpoint) {
            Ok(path) => path,
            Err(e) => return display.warn(&format!("koma train: evaluation @{} skipped: {e}", t.step)),
        };
        self.runner.start(EvalJob {
            plan: self.plan.clone(),
            variant: t.variant,
            step: t.step,
            ours,
            checkpoint: t.checkpoint.to_string(),
            previous,
            seed: t.seed,
            games: t.games,
            device: t.device,
            // Bars would fight the status line on a terminal; in a log they are plain lines.
            show: display.enabled() && !display.is_terminal(),
        });
    }

    /// A finished evaluation, recorded: TensorBoard, `eval.jsonl`, the plots. Returns it
    /// (its checkpoint is the next `previous`) unless it failed or was stopped.
    pub fn collect(
        &mut self,
        files: &RunFiles,
        tb: &mut TensorBoardLog,
        display: &Display,
        elapsed: f64,
    ) -> Option<EvalOutcome> {
        let outcome = match self.runner.poll()? {
            Err(e) => {
                display.warn(&format!("koma train: evaluation failed: {e}"));
                return None;
            }
            Ok(o) => o,
        };
        for n in &outcome.notes {
            display.println(&format!("koma train: {n}"));
        }
        if outcome.report.stopped {
            // A partial match is no measurement.
            display.println(&format!("eval @{}: stopped", outcome.report.step));
            return None;
        }
        self.record(&outcome, files, tb, display, elapsed);
        Some(outcome)
    }

    fn record(&mut self, o: &EvalOutcome, files: &RunFiles, tb: &mut TensorBoardLog, display: &Display, elapsed: f64) {
        let report = &o.report;
        let log = files.path(layout::EVAL_LOG);
        if let Err(e) = report.write(tb, &log, elapsed) {
            display.warn(&format!("koma: warning: writing {}: {e}", log.display()));
        }
        display.println(&report.line());
        for note in &report.notes {
            display.println(&format!("koma train: {note}"));
        }
        match crate::evaluation::chart::plot_run(files.dir()) {
            Ok(_) | Err(crate::evaluation::chart::RunPlotError::NoLadderGames { .. }) => {}
            Err(e) => display.println(&format!("koma train: plot: {e}")),
        }
        self.last = report.results.iter().map(|r| (r.name.clone(), report.step, r.outcome.wdl)).collect();
        for key in [layout::EVAL_LOG, "elo.png", "elo.svg"] {
            if files.path(key).exists() {
                let _ = files.push(key);
            }
        }
    }

    /// Abandons a running evaluation (nothing of it is recorded); returns the last
    /// evaluation's results.
    pub fn finish(&mut self) -> Vec<(String, u64, Wdl)> {
        self.runner.abandon();
        std::mem::take(&mut self.last)
    }
}
