//! The trainer's error: what failed in `koma train`, `koma learner`, `koma worker` and
//! `koma learn`, each variant named after it and carrying its data.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Checkpoint(#[from] model::CheckpointError),
    #[error(transparent)]
    Optim(#[from] crate::learning::optim::OptimError),
    #[error(transparent)]
    Device(#[from] model::DeviceError),
    #[error(transparent)]
    Net(#[from] model::NetError),
    #[error(transparent)]
    Eval(#[from] model::EvalError),
    #[error(transparent)]
    Samples(#[from] dataio::SampleError),
    #[error("self-play: {0}")]
    Selfplay(#[from] selfplay::SelfplayError),
    #[error(transparent)]
    Diverged(#[from] crate::learning::net_trainer::NonFiniteLoss),
    /// `koma train --resume` of a run that does not exist.
    #[error("--resume: no run `{run}` in {}", runs_dir.display())]
    NoRunToResume { run: String, runs_dir: PathBuf },
    /// A learner started without `--config` on a run that has none yet.
    #[error("{place} does not exist: give --config for the first start of a run")]
    NoRunConfig { place: String },
    #[error("{place} is not UTF-8")]
    RunConfigNotUtf8 { place: String },
    /// The config names another game than the run it continues.
    #[error("run `{run}` trains {run_variant}, the config says {config_variant}")]
    VariantMismatch { run: String, run_variant: String, config_variant: String },
    /// The checkpoint that the learner state names holds another step.
    #[error("{}: checkpoint step {checkpoint_step} does not match the learner state's step {state_step}", stem.display())]
    CheckpointStep { stem: PathBuf, checkpoint_step: u64, state_step: u64 },
    /// The evaluation's opponents, ladder or openings cannot be used.
    #[error(transparent)]
    EvalSetup(#[from] crate::evaluation::EvalSetupError),
    /// A checkpoint to evaluate does not load as a player.
    #[error("evaluating {}: {source}", path.display())]
    EvalNetwork { path: PathBuf, source: Box<arena::koma_player::KomaLoadError> },
    #[error("the evaluation thread panicked")]
    EvalPanicked,
    /// `koma learn` of inputs that only standard shogi has.
    #[error(
        "hcpe, hcpe3, psv and game records are standard shogi; the config's variant is {variant} (sample chunks only), and the inputs hold {found}"
    )]
    RecordsNeedShogi { variant: String, found: String },
    /// `koma learn` found nothing to train on.
    #[error("no games read from {inputs:?}{}", first_problem.as_ref().map(|p| format!(" ({p})")).unwrap_or_default())]
    NoGames { inputs: Vec<PathBuf>, first_problem: Option<String> },
    /// A learner state file (`state.json`, `ckpt-<step>.learner`) that is not JSON of one.
    #[error("{what}: {source}")]
    StateJson { what: String, source: serde_json::Error },
    #[error("{what}: format version {version} is not supported")]
    StateVersion { what: String, version: u32 },
    #[error("{what}: names a file outside the run; only checkpoints/ckpt-<step> of this run can be resumed")]
    StateOutsideRun { what: String },
    #[error("{what}: checkpoint {checkpoint} is not of step {step}")]
    StateCheckpointStep { what: String, checkpoint: String, step: u64 },
    /// A checkpoint's learner state that was listed and then could not be read.
    #[error("{key} disappeared")]
    StateGone { key: String },
    /// Checkpoints without `state.json`: the run is left as it is.
    #[error("{run} holds checkpoints (newest {newest}) but no state.json; nothing was overwritten. {fix}")]
    NoStateJson { run: String, newest: String, fix: String },
    #[error("a run already exists in {run} (use --resume to continue it, or another run name)")]
    RunExists { run: String },
    /// `models/latest.json` that is not a model pointer of this run.
    #[error(transparent)]
    ModelPointer(#[from] dataio::run_layout::PointerError),
    #[error("{run}: {key} is missing")]
    NetworkFileMissing { run: String, key: String },
    /// `models/latest.json` changed under every attempt to replace it.
    #[error("{run}: models/latest.json kept changing while step {step} was published (is another learner running?)")]
    PublishContended { run: String, step: u64 },
    /// Another learner holds the run, or took it over from this one.
    #[error(transparent)]
    Lease(#[from] store::lease::LeaseError),
    /// `koma learn` read games but no position to train on.
    #[error(
        "no positions to train on in {inputs:?}: {games} game(s) read with {positions} position(s){}",
        if *positions > 0 { " (all held out for validation)" } else { ", none with a move to learn from" }
    )]
    NoPositions { inputs: Vec<PathBuf>, games: usize, positions: usize },
    #[error("worker id `{id}`: use letters, digits, `_`, `.` and `-` (at most 64, not first)")]
    BadWorkerId { id: String },
}

impl TrainError {
    /// Whether the user can fix it by changing the command line, the config or the run
    /// they name (the cli's exit status 2), rather than a failure while running.
    pub fn is_bad_input(&self) -> bool {
        use store::StoreError::{BadKey, BadUrl};
        matches!(
            self,
            TrainError::Config(_)
                | TrainError::Device(_)
                | TrainError::Store(BadUrl { .. } | BadKey { .. })
                | TrainError::NoRunToResume { .. }
                | TrainError::NoRunConfig { .. }
                | TrainError::RunConfigNotUtf8 { .. }
                | TrainError::VariantMismatch { .. }
                | TrainError::CheckpointStep { .. }
                | TrainError::EvalSetup(_)
                | TrainError::RecordsNeedShogi { .. }
                | TrainError::NoGames { .. }
                | TrainError::NoPositions { .. }
                | TrainError::StateJson { .. }
                | TrainError::StateVersion { .. }
                | TrainError::StateOutsideRun { .. }
                | TrainError::StateCheckpointStep { .. }
                | TrainError::StateGone { .. }
                | TrainError::NoStateJson { .. }
                | TrainError::RunExists { .. }
                | TrainError::ModelPointer(_)
                | TrainError::NetworkFileMissing { .. }
                | TrainError::BadWorkerId { .. }
        )
    }
}
