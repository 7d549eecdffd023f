//! The periodic evaluation of a training run: the network's strength measured in games.
//!
//! - [`periodic`]: [`TrainingEval`], the evaluation of `koma train`: its opponents (the
//!   config's `eval.opponents`), each played in a match of the arena
//!   (`arena::network_match`), and the ladder Elo over the rungs played; the search of
//!   evaluation games ([`periodic::eval_search`]).
//! - [`staircase`]: the rungs the `ladder` opponent plays at each evaluation, around the
//!   network; `rungs`: those it may play (their engines start), and the note when the
//!   network beats the top one outright.
//! - [`points`]: the checkpoints of `eval.at_end_points`, spread over a run.
//! - `setup_error`: [`EvalSetupError`], why an evaluation cannot be set up.
//! - [`report`]: [`EvalReport`], one evaluation's results, and its log: a console line,
//!   `eval.jsonl` and TensorBoard.
//! - [`chart`]: the run's rating on the baseline ladder over its steps (`elo.png`,
//!   `elo.svg`, from `eval.jsonl`; `koma plot`).
//!
//! The learner runs it in a thread of its own (`roles::learner`), and `koma evaluate --run`
//! on a run's checkpoints (`roles::course`); the `[eval]` table that sets it up is
//! `config::EvalConfig`.

pub mod chart;
pub mod periodic;
pub mod points;
pub mod report;
mod rungs;
mod setup_error;
pub mod staircase;

pub use periodic::{eval_search, EvalPoint, EvalSetupError, TrainingEval};
pub use report::{EvalReport, OpponentResult};
