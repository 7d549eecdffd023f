//! koma's trainer: the learner and the main job, `koma train`.
//!
//! - [`config`]: the `[train]` table ([`TrainConfig`]) and the whole config file.
//! - [`replay`]: the replay window over the newest samples and the loader thread that
//!   encodes shuffled minibatches ahead of the optimiser.
//! - [`optim`]: SGD with momentum and AdamW in tch tensor operations; their state is
//!   plain named tensors saved next to each checkpoint.
//! - [`learner`]: loss (policy cross-entropy + WDL cross-entropy), warm-up schedule,
//!   gradient clipping, f16 autocast with loss scaling on CUDA.
//! - [`eval`]: evaluation games through the arena's harness against built-in players,
//!   ladder rungs (engines), or an earlier checkpoint: W/D/L, Elo, ladder Elo.
//! - [`tb`]: TensorBoard scalars (`tensorboard-rs`).
//! - [`elo_plot`]: the run's rating on the baseline ladder over its steps (`elo.png`,
//!   `elo.svg`, from `eval.jsonl`).
//! - [`roles`]: the learner and self-play worker roles over a run store (`koma learner`,
//!   `koma worker`); [`run`]: `koma train`, both roles in one process, with checkpoints,
//!   resume and signal handling; [`learn`]: `koma learn` from game records.

pub mod bench;
pub mod config;
pub mod datasets;
pub mod elo_plot;
pub mod eval;
pub mod learn;
pub mod learner;
pub mod optim;
pub mod replay;
pub mod roles;
pub mod run;
pub mod tb;
pub mod teacher;

pub use config::{OptimizerKind, TrainConfig, TrainFileConfig};
pub use eval::{play_match, play_match_observed, MatchOutcome, MatchSettings, Opponent, TrainingEval};
pub use learn::{learn, LearnOptions, LearnSummary};
pub use learner::{Learner, NonFiniteLoss, StepStats};
pub use replay::{Batch, Loader, PolicyTargets, Replay};
pub use roles::learner::{LearnerOptions, LearnerRole};
pub use roles::worker::{run_worker, WorkerOptions, WorkerReport};
pub use run::{install_signal_handler, read_state, train, RunState, TrainError, TrainOptions, TrainSummary};
pub use tb::Tb;
