//! koma's trainer: the learner and the main job, `koma train`.
//!
//! - [`config`]: the `[train]` table ([`TrainConfig`]) and the whole config file.
//! - [`replay`]: the replay window over the newest samples and the loader thread that
//!   encodes shuffled minibatches ahead of the optimiser.
//! - [`optim`]: SGD with momentum and AdamW in tch tensor operations; their state is
//!   plain named tensors saved next to each checkpoint.
//! - [`learner`]: loss (policy cross-entropy + WDL cross-entropy), warm-up schedule,
//!   gradient clipping, f16 autocast with loss scaling on CUDA.
//! - [`eval`]: evaluation games against baselines (random, material-greedy, an earlier
//!   checkpoint), score and Elo.
//! - [`tb`]: TensorBoard scalars (`tensorboard-rs`).
//! - [`roles`]: the learner and self-play worker roles over a run store (`koma learner`,
//!   `koma worker`); [`run`]: `koma train`, both roles in one process, with checkpoints,
//!   resume and signal handling; [`learn`]: `koma learn` from game records.

pub mod config;
pub mod eval;
pub mod learn;
pub mod learner;
pub mod optim;
pub mod replay;
pub mod roles;
pub mod run;
pub mod tb;

pub use config::{OptimizerKind, TrainConfig, TrainFileConfig};
pub use eval::{elo_from_score, play_match, MatchResult, MatchSettings, Opponent};
pub use learn::{learn, LearnOptions, LearnSummary};
pub use learner::{Learner, StepStats};
pub use replay::{Batch, Loader, Replay};
pub use roles::learner::{LearnerOptions, LearnerRole};
pub use roles::worker::{run_worker, WorkerOptions, WorkerReport};
pub use run::{install_signal_handler, read_state, train, RunState, TrainError, TrainOptions, TrainSummary};
pub use tb::Tb;
