//! Self-play for koma: Monte Carlo tree search (PUCT with a Gumbel AlphaZero root as an
//! option), game workers that batch the leaves of many games into one request to
//! `model`'s batching service, and the training sample chunks they write.
//!
//! - [`samples`]: [`samples::Sample`], chunk files ([`samples::ChunkWriter`],
//!   [`samples::read_chunk`]); layout in `data/FORMAT.md` ("Training samples").
//! - [`config`]: the `[search]` and `[selfplay]` tables of a config file.
//! - [`tree`]: the search tree of one game ([`tree::Tree`]: nodes, proofs with mate
//!   distances, mate search at expansion, backup with virtual loss, PUCT, re-rooting),
//!   shared with the USI engine.
//! - [`mcts`]: self-play's search on that tree, driven step by step ([`mcts::Search`]:
//!   budget, root noise, Gumbel root, policy target, move choice).
//! - [`worker`]: rayon workers playing many games each, [`worker::run_selfplay`].

pub mod baselines;
pub mod config;
pub mod mcts;
pub mod rng;
pub mod samples;
pub mod tree;
pub mod worker;

pub use config::{SearchConfig, SelfplayConfig, SelfplayFileConfig};
pub use mcts::{Search, Step};
pub use rng::Rng;
pub use tree::{ChildInfo, Proof};
pub use worker::{run_selfplay, GameRecord, Openings, Progress, RunOptions};
