//! `koma train`: the learner and self-play in one process on a local run, composed from
//! the roles in [`crate::roles`] (which `koma learner` and `koma worker` run apart).
//!
//! Everything goes under `runs/<name>/` (layout in [`crate::roles::layout`] and
//! `data/FORMAT.md`). Every file is written atomically and `state.json` is the commit
//! record: a `kill -9` at any moment leaves a run that `--resume` continues from its
//! newest complete checkpoint. Samples written after that checkpoint are kept and reused.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arena::Wdl;

use crate::config::TrainFileConfig;
use crate::roles::files::RunFiles;
use crate::roles::learner::{LearnerOptions, LearnerRole};
pub use crate::roles::signal::install_signal_handler;
pub use crate::roles::state::{RunState, STATE_FORMAT_VERSION};

#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{0}")]
    Run(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Checkpoint(#[from] model::CheckpointError),
    #[error(transparent)]
    Optim(#[from] crate::optim::OptimError),
    #[error(transparent)]
    Device(#[from] model::DeviceError),
    #[error(transparent)]
    Net(#[from] model::NetError),
    #[error(transparent)]
    Eval(#[from] model::EvalError),
    #[error(transparent)]
    Samples(#[from] selfplay::samples::SampleError),
    #[error("self-play: {0}")]
    Selfplay(String),
    #[error(transparent)]
    Diverged(#[from] crate::learner::NonFiniteLoss),
}

/// What to run.
#[derive(Clone, Debug)]
pub struct TrainOptions {
    pub config: PathBuf,
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

/// The end of a run.
#[derive(Clone, Debug, Default)]
pub struct TrainSummary {
    pub run_dir: PathBuf,
    pub stop_reason: String,
    pub step: u64,
    pub games: u64,
    pub samples_generated: u64,
    pub samples_trained: u64,
    pub elapsed_seconds: f64,
    pub checkpoint: String,
    /// Last evaluation per opponent: (opponent, step, result).
    pub last_eval: Vec<(String, u64, Wdl)>,
    pub loader_wait_fraction: f64,
}

impl std::fmt::Display for TrainSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "koma train: {} after {:.1} min: step {}, {} games, {} samples generated, {} trained, loader wait {:.1}%",
            self.stop_reason,
            self.elapsed_seconds / 60.0,
            self.step,
            self.games,
            self.samples_generated,
            self.samples_trained,
            100.0 * self.loader_wait_fraction
        )?;
        for (o, s, r) in &self.last_eval {
            write!(f, "; vs {o} @{s}: {:.2} (+{} ={} -{})", r.score(), r.wins, r.draws, r.losses)?;
        }
        write!(f, "; checkpoint {}", self.run_dir.join(&self.checkpoint).display())
    }
}

/// Reads `state.json` of a local run folder.
pub fn read_state(run_dir: &Path) -> Result<Option<RunState>, TrainError> {
    let files = RunFiles::open(&run_dir.to_string_lossy(), None)?;
    crate::roles::state::read_state(&files)
}

/// Optimiser state file of a checkpoint stem.
pub fn optim_path(stem: &Path) -> PathBuf {
    let name = stem.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    stem.with_file_name(format!("{name}.optim.safetensors"))
}

/// Forwards to the one thread policy, [`model::set_torch_threads`] (learner and batcher
/// on one machine); kept only until the callers of this path are gone.
pub fn set_torch_threads(torch_threads: usize) {
    model::set_torch_threads(torch_threads, model::CpuShare::HalfOfSmall);
}

/// Runs `koma train`. `stop` ends the run (checkpoint first) when set.
pub fn train(opts: &TrainOptions, stop: Arc<AtomicBool>) -> Result<TrainSummary, TrainError> {
    let cfg = TrainFileConfig::load(&opts.config)?;
    // The command line's limits are checked like the file's, before the run folder exists.
    crate::roles::learner::with_limits(&cfg.train, opts.max_minutes, opts.max_steps)?;
    let run_dir = opts.runs_dir.join(&opts.run);
    if opts.resume && !run_dir.exists() {
        return Err(TrainError::Run(format!("--resume: no run `{}` in {}", opts.run, opts.runs_dir.display())));
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
