//! The periodic evaluation of a training run: the network's strength measured in games.
//!
//! - [`periodic`]: [`TrainingEval`], the evaluation of `koma train`: its opponents (the
//!   config's `eval.opponents`), each played in a match of the arena
//!   (`arena::network_match`), and the ladder Elo over the rungs played; the search of
//!   evaluation games ([`periodic::eval_search`]).
//! - [`report`]: [`EvalReport`], one evaluation's results, and its log: a console line,
//!   `eval.jsonl` and TensorBoard.
//! - [`chart`]: the run's rating on the baseline ladder over its steps (`elo.png`,
//!   `elo.svg`, from `eval.jsonl`; `koma plot`).
//!
//! The learner runs it in a thread of its own (`roles::learner`); the `[eval]` table that
//! sets it up is `config::EvalConfig`.

pub mod chart;
pub mod periodic;
pub mod report;

pub use periodic::{eval_search, EvalSetupError, TrainingEval};
pub use report::{EvalReport, OpponentResult};
