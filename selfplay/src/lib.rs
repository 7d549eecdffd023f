//! Self-play for koma: game workers that play many games each with `search`'s MCTS and
//! batch the leaves of all of them into one request to `model`'s batching service, and
//! the training sample chunks they write.
//!
//! - [`samples`]: [`samples::Sample`], chunk files ([`samples::ChunkWriter`],
//!   [`samples::read_chunk`]); layout in `data/FORMAT.md` ("Training samples").
//! - [`config`]: the `[selfplay]` table of a config file, and the parts of a file
//!   self-play reads ([`SelfplayFileConfig`]).
//! - [`worker`]: the workers, [`worker::run_selfplay`].
//! - [`run`]: a whole job from a config to checked chunk files ([`run::play_to_chunks`],
//!   `koma selfplay`).
//! - [`bench`](mod@bench): self-play's evaluations per second against the raw forward pass
//!   ([`bench::bench_selfplay`], `koma bench selfplay`).

pub mod bench;
pub mod config;
pub mod run;
pub mod samples;
pub mod worker;

pub use config::{SelfplayConfig, SelfplayFileConfig};
pub use worker::{run_selfplay, GameRecord, Openings, Progress, RunOptions};
