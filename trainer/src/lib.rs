//! koma's trainer: the learner and the main job, `koma train`.
//!
//! - [`config`]: the config file as the trainer reads it ([`TrainFileConfig`]): the
//!   `[train]` table ([`TrainConfig`]) and the `[eval]` table ([`config::EvalConfig`]).
//! - [`error`]: [`TrainError`], what failed.
//! - [`replay`]: the replay window over the newest samples and the loader thread that
//!   encodes shuffled minibatches ahead of the optimiser.
//! - [`optim`]: SGD with momentum and AdamW in tch tensor operations; their state is
//!   plain named tensors saved next to each checkpoint ([`optim::optim_path`]).
//! - [`ema`]: the average of the weights that checkpoints hold (`train.ema_decay`);
//!   [`swa`]: the mean of the weights at a run's last checkpoints, which its last
//!   checkpoint holds (`train.swa_share`).
//! - [`net_trainer`]: a network being trained ([`NetTrainer`]): loss (policy
//!   cross-entropy + WDL cross-entropy), warm-up schedule, gradient clipping, f16
//!   autocast with loss scaling on CUDA.
//! - [`eval`]: evaluation games through the arena's harness against built-in players,
//!   ladder rungs (engines), or an earlier checkpoint: W/D/L, Elo, ladder Elo;
//!   [`opponents`]: the opponents given as text.
//! - [`tb`]: TensorBoard scalars (event files written by [`tb::Tb`]).
//! - [`elo_plot`]: the run's rating on the baseline ladder over its steps (`elo.png`,
//!   `elo.svg`, from `eval.jsonl`).
//! - [`roles`]: the learner and self-play worker roles over a run store (`koma learner`,
//!   `koma worker`); [`run`]: `koma train`, both roles in one process, with checkpoints,
//!   resume and signal handling.
//! - [`supervised`]: `koma learn` from game records, hcpe and chunks, and `koma gen`'s
//!   teacher data.
//! - [`bench`]: `koma bench learn`.

pub mod bench;
pub mod config;
pub mod elo_plot;
pub mod ema;
pub mod error;
pub mod eval;
pub mod net_trainer;
pub mod opponents;
pub mod optim;
pub mod replay;
pub mod roles;
pub mod run;
pub mod supervised;
pub mod swa;
pub mod tb;

pub use config::{EvalConfig, OptimizerKind, TrainConfig, TrainFileConfig};
pub use error::TrainError;
pub use eval::{play_match, play_match_observed, MatchOutcome, MatchSettings, Opponent, TrainingEval};
pub use net_trainer::{NetTrainer, NonFiniteLoss, StepStats};
pub use replay::{Batch, Loader, PolicyTargets, Replay};
pub use roles::learner::{LearnerOptions, LearnerRole, TrainSummary};
pub use roles::signal::install_signal_handler;
pub use roles::state::RunState;
pub use roles::worker::{run_worker, WorkerOptions, WorkerReport};
pub use run::{read_state, train, TrainOptions};
pub use supervised::learn::{learn, LearnOptions, LearnSummary};
pub use tb::Tb;
