//! koma's search, shared by self-play, the engine (`koma-usi`), the arena and the trainer's
//! evaluation games. It depends on the rules and on the network boundary of `model` (the
//! [`nn::encoding::Encoder`] that turns a leaf into input planes, the evaluators) and
//! nothing else.
//!
//! - [`config`]: [`SearchConfig`], the `[search]` table of a config file.
//! - [`tree`]: the search tree of one game ([`tree::Tree`]: nodes, proofs with mate
//!   distances, mate search at expansion, backup with virtual loss, PUCT, re-rooting).
//! - Play (the engine, the arena's koma player, the trainer's evaluation), one search for
//!   every player:
//!   - [`player_tree`]: [`PlayerTree`], the tree plus the root mate-in-3 scan, PV, depth
//!     statistics and `hashfull`;
//!   - [`driver`]: [`driver::run`], several threads on one tree, each with its batch of
//!     leaves in flight (virtual loss), tree reuse between moves;
//!   - [`leaf_eval`]: how a thread evaluates its leaves ([`LeafEvaluator`]: in the thread
//!     with [`DirectEvaluator`], or through a batching service's [`nn::EvalSlot`]);
//!   - [`stop`]: [`Limits`], [`Control`] (stop, ponderhit) and the stopping rules (nodes,
//!     time, a single move, a decided search);
//!   - [`report`]: progress and result ([`Info`], [`PvLine`], [`Score`],
//!     [`SearchOutcome`]).
//! - [`tactics`]: the root's material check (a small alpha-beta over the rules' material
//!   on the moves the search liked best).
//! - [`root_mate`]: the root's timed mate search, a thread beside a timed search that
//!   ends it with a mate the solver proves.
//! - [`mate`]: the tsume solver ([`mate::MateSolver`]: df-pn over checks and evasions,
//!   a table in bounded memory, the mating line), `go mate`'s search.
//! - [`root_policy`]: self-play's search, driven step by step ([`Search`]: budget, root
//!   noise, Gumbel root, policy target, move choice).
//! - [`phases`]: where a tree's time goes, phase by phase (`koma bench tree`).
//! - [`rng`]: the small deterministic random number generator every search uses.
//! - [`time`]: time management (how long to think about one move under a clock).

mod checks;
pub mod config;
pub mod driver;
pub mod leaf_eval;
pub mod mate;
pub mod phases;
pub mod player_tree;
pub mod report;
pub mod rng;
pub mod root_mate;
pub mod root_policy;
pub mod stop;
pub mod tactics;
#[cfg(test)]
mod test_games;
pub mod time;
pub mod tree;

pub use config::{SearchConfig, PLAY_C_PUCT};
pub use driver::{Settings, Workers};
pub use leaf_eval::{DirectEvaluator, LeafEvaluator};
pub use phases::{Phase, PhaseTimes};
pub use player_tree::PlayerTree;
pub use report::{q_to_cp, BatchStats, Info, PvLine, Score, SearchError, SearchOutcome};
pub use rng::Rng;
pub use root_policy::{Search, Step};
pub use stop::{Control, Limits, StopReason};
pub use tree::{ChildInfo, Proof};
