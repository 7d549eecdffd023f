//! The evaluation of a run's course on its own (`koma evaluate --run`): the checkpoints
//! that `eval.at_end` plays (`eval.at_end_points`, spread over the run by
//! [`crate::evaluation::points::spread`]), each evaluated as the learner evaluates them
//! and recorded alike (`eval.jsonl`, TensorBoard, `elo.png`): for a run that ended, an old
//! run, or other `[eval]` settings. It writes nothing else, so it may follow a run that
//! still trains, at the price of the cores it takes.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arena::koma_player::KomaNetwork;
use model::tch::Device;

use super::files::RunFiles;
use super::network::saved_steps;
use super::state::read_state;
use crate::config::TrainFileConfig;
use crate::error::TrainError;
use crate::evaluation::chart::{plot_run, RunPlotError};
use crate::evaluation::points::spread;
use crate::evaluation::{EvalPoint, EvalReport, TrainingEval};
use crate::tensorboard::TensorBoardLog;
use dataio::run_layout::{self as layout, checkpoint_stem};

/// Which run to evaluate, and how.
pub struct CourseOptions {
    /// A local run folder.
    pub run_dir: PathBuf,
    /// Its `[eval]` and `[search]` tables are used (the run's own `config.toml`, or another).
    pub config: TrainFileConfig,
    pub device: Device,
    pub seed: u64,
    /// Progress bars of the matches.
    pub progress: bool,
    /// Set by a signal: ends the evaluation within a move (the stopped one is not recorded).
    pub stop: Arc<AtomicBool>,
}

/// Evaluates the run's checkpoints of `eval.at_end_points`, oldest first, each recorded as
/// it ends; `say` gets the warnings, each evaluation's line and notes. Returns the
/// finished evaluations.
pub fn evaluate_course(opts: &CourseOptions, say: &mut dyn FnMut(&str)) -> Result<Vec<EvalReport>, TrainError> {
    if !opts.run_dir.join(layout::CHECKPOINTS).is_dir() {
        let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no checkpoints folder: not a run");
        return Err(TrainError::Io { path: opts.run_dir.clone(), source });
    }
    let files = RunFiles::open(&opts.run_dir.to_string_lossy(), None)?;
    let (cfg, variant) = (&opts.config, opts.config.base.variant);
    let (plan, warnings) = TrainingEval::new(&cfg.eval, &cfg.base.search, variant, &files.path("engines"))?;
    warnings.iter().for_each(|w| say(w));
    let steps = spread(&saved_steps(&files, layout::CHECKPOINTS)?, cfg.eval.at_end_points);
    let listed: Vec<String> = steps.iter().map(u64::to_string).collect();
    say(&format!("evaluating the checkpoints of steps {}", listed.join(", ")));
    let mut tb = TensorBoardLog::new(files.path(layout::TB))
        .map_err(|source| TrainError::Io { path: files.path(layout::TB), source })?;
    let elapsed = read_state(&files)?.map_or(0.0, |s| s.elapsed_seconds);
    let (mut reports, mut previous) = (Vec::new(), None);
    for &step in &steps {
        let stem = files.path(&checkpoint_stem(step));
        let ours = KomaNetwork::load_on(&stem, opts.device, variant)
            .map_err(|e| TrainError::EvalNetwork { path: stem.clone(), source: Box::new(e) })?;
        let games = cfg.eval.games_for(Some(&step) == steps.last());
        let point = EvalPoint { step, seed: opts.seed ^ step.wrapping_mul(0x2545_F491_4F6C_DD1D), games };
        let report = plan.run(&ours, previous.as_ref(), point, Some(opts.stop.clone()), opts.progress);
        if report.stopped {
            break;
        }
        let log = files.path(layout::EVAL_LOG);
        report.write(&mut tb, &log, elapsed).map_err(|source| TrainError::Io { path: log, source })?;
        say(&report.line());
        report.notes.iter().for_each(|n| say(n));
        reports.push(report);
        previous = Some(ours);
    }
    tb.flush();
    match plot_run(files.dir()) {
        Ok(_) | Err(RunPlotError::NoLadderGames { .. }) => {}
        Err(e) => say(&format!("plot: {e}")),
    }
    Ok(reports)
}
