//! `koma train`: the learner and self-play in one process on a local run, composed from
//! the roles in [`crate::roles`] (which `koma learner` and `koma worker` run apart).
//!
//! Everything goes under `runs/<name>/` (layout in [`dataio::run_layout`] and
//! `data/FORMAT.md`). Every file is written atomically and `state.json` is the commit
//! record: a `kill -9` at any moment leaves a run that `--resume` continues from its
//! newest complete checkpoint. Samples written after that checkpoint are kept and reused.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::config::TrainFileConfig;
use crate::error::TrainError;
use crate::roles::files::RunFiles;
use crate::roles::learner::{with_limits, LearnerOptions, LearnerRole, TrainSummary};
use crate::roles::state::RunState;

/// What to run.
#[derive(Clone, Debug)]
pub struct TrainOptions {
    /// The config file, read (and checked) once by the caller.
    pub config: TrainFileConfig,
    /// Run name (folder under `runs_dir`).
    pub run: String,
    pub runs_dir: PathBuf,
    pub resume: bool,
    /// A new run starts from this network (checkpoint or model file) instead of fresh weights.
    pub init: Option<PathBuf>,
    /// Override `train.max_minutes` / `train.max_steps`.
    pub max_minutes: Option<f64>,
    pub max_steps: Option<u64>,
    /// Live progress line on stderr (one line every 30 s when stderr is not a terminal).
    pub progress: bool,
    /// One self-play worker per device (`cuda:0`, `cuda:1`, ...); empty: one on
    /// `selfplay.device`.
    pub devices: Vec<String>,
}

/// Reads `state.json` of a local run folder.
pub fn read_state(run_dir: &Path) -> Result<Option<RunState>, TrainError> {
    let files = RunFiles::open(&run_dir.to_string_lossy(), None)?;
    crate::roles::state::read_state(&files)
}

/// Runs `koma train`. `stop` ends the run (checkpoint first) when set.
pub fn train(opts: &TrainOptions, stop: Arc<AtomicBool>) -> Result<TrainSummary, TrainError> {
    let cfg = opts.config.clone();
    // The command line's limits are checked like the file's, before the run folder exists.
    with_limits(&cfg.train, opts.max_minutes, opts.max_steps)?;
    let run_dir = opts.runs_dir.join(&opts.run);
    if opts.resume && !run_dir.exists() {
        return Err(TrainError::NoRunToResume { run: opts.run.clone(), runs_dir: opts.runs_dir.clone() });
    }
    let devices = if opts.devices.is_empty() { vec![cfg.base.selfplay.device.clone()] } else { opts.devices.clone() };
    for d in &devices {
        model::parse_device(d)?;
    }
    let files = RunFiles::open(&run_dir.to_string_lossy(), None)?;
    let learner_opts = LearnerOptions {
        name: opts.run.clone(),
        resume: opts.resume,
        init: opts.init.clone(),
        max_minutes: opts.max_minutes,
        max_steps: opts.max_steps,
        progress: opts.progress,
        poll: std::time::Duration::from_secs(2),
        stop: stop.clone(),
        lease_wait: std::time::Duration::ZERO,
    };
    let mut role = LearnerRole::open(files, Some(cfg), learner_opts)?;
    for (i, d) in devices.iter().enumerate() {
        role.add_local_worker(i, d)?;
    }
    let outcome = role.run(&stop);
    let mut summary = role.finish(outcome)?;
    summary.run_dir = run_dir;
    Ok(summary)
}
