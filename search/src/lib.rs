//! koma's search, shared by self-play, the engine (`koma-usi`), the arena and the trainer's
//! evaluation games. It depends on the rules and on the network boundary of `model` (the
//! [`model::encoding::Encoder`] that turns a leaf into input planes) and nothing else.
//!
//! - [`config`]: [`SearchConfig`], the `[search]` table of a config file.
//! - [`tree`]: the search tree of one game ([`tree::Tree`]: nodes, proofs with mate
//!   distances, mate search at expansion, backup with virtual loss, PUCT, re-rooting).
//! - [`mcts`]: a search on that tree driven step by step ([`mcts::Search`]: budget, root
//!   noise, Gumbel root, policy target, move choice).
//! - [`batched`]: batched drivers ([`Search::run_batched`]: several leaves per network
//!   call with virtual loss, from one thread or several).
//! - [`rng`]: the small deterministic random number generator every search uses.
//! - [`time`]: time management (how long to think about one move under a clock).

pub mod batched;
pub mod config;
pub mod mcts;
pub mod rng;
pub mod time;
pub mod tree;

pub use batched::{BatchedRun, DirectEvaluator, LeafEvaluator};
pub use config::SearchConfig;
pub use mcts::{Search, Step};
pub use rng::Rng;
pub use tree::{ChildInfo, Proof};
