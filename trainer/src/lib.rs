//! koma's trainer: the learner and the main job, `koma train`.
//!
//! - [`config`]: the config file as the trainer reads it ([`TrainFileConfig`]): the
//!   `[train]` table ([`TrainConfig`]) and the `[eval]` table ([`config::EvalConfig`]).
//! - [`error`]: [`TrainError`], what failed.
//! - [`data`]: samples to minibatches: the replay window over the newest samples
//!   ([`Replay`]), the value and policy targets, the encoding of a batch and the loader
//!   thread that encodes shuffled minibatches ahead of the optimiser ([`Loader`]).
//! - [`learning`]: the network being trained ([`NetTrainer`]: loss, warm-up, clipping,
//!   autocast), its optimisers (SGD, AdamW) and the averages of its weights (`ema`, `swa`).
//! - [`evaluation`]: the periodic evaluation ([`evaluation::TrainingEval`]: games of the
//!   arena's `network_match` against built-in players, ladder rungs or the previous
//!   checkpoint; W/D/L, Elo, ladder Elo), its log (`eval.jsonl`) and the run's rating
//!   chart (`elo.png`, [`evaluation::chart`]).
//! - [`tensorboard`]: TensorBoard scalars (event files written by [`TensorBoardLog`]).
//! - [`roles`]: the learner and self-play worker roles over a run store (`koma learner`,
//!   `koma worker`); [`run`]: `koma train`, both roles in one process, with checkpoints,
//!   resume and signal handling.
//! - [`supervised`]: `koma learn` from game records, hcpe and chunks, and `koma gen`'s
//!   teacher data.
//! - [`bench`]: `koma bench learn`.

pub mod bench;
pub mod config;
pub mod data;
pub mod error;
pub mod evaluation;
pub mod learning;
pub mod roles;
pub mod run;
pub mod supervised;
pub mod tensorboard;

pub use config::{EvalConfig, OptimizerKind, TrainConfig, TrainFileConfig};
pub use data::{Batch, Loader, PolicyTargets, Replay};
pub use error::TrainError;
pub use learning::net_trainer::{NetTrainer, NonFiniteLoss, StepStats};
pub use roles::course::{evaluate_course, CourseOptions};
pub use roles::learner::{LearnerOptions, LearnerRole, TrainSummary};
pub use roles::signal::install_signal_handler;
pub use roles::state::RunState;
pub use roles::worker::{run_worker, WorkerOptions, WorkerReport};
pub use run::{read_state, train, TrainOptions};
pub use supervised::learn::{learn, score, LearnOptions, LearnSummary, ScoreSummary};
pub use tensorboard::TensorBoardLog;
