//! Self-play for koma: game workers that play many games each with `search`'s MCTS and
//! batch the leaves of all of them into one request to `model`'s batching service, and
//! the training samples they make (the sample and its chunk files are `dataio`'s, a sample
//! as the encoder sees it `nn::encoding::sample`'s).
//!
//! - [`config`]: the `[selfplay]` table of a config file, and the parts of a file
//!   self-play reads ([`SelfplayFileConfig`]).
//! - [`worker`]: the workers, [`worker::run_selfplay`].
//! - [`resign`]: the resignation threshold, fixed or calibrated from the played-out games.
//! - [`adjudicate`]: who wins a game cut at the length cap, by the material there.
//! - [`run`]: a whole job from a config to checked chunk files ([`run::play_to_chunks`],
//!   `koma selfplay`).
//! - [`bench`](mod@bench): self-play's evaluations per second against the raw forward pass
//!   ([`bench::bench_selfplay`], `koma bench selfplay`).

pub mod adjudicate;
pub mod bench;
pub mod config;
pub mod resign;
pub mod run;
pub mod worker;

pub use config::{SelfplayConfig, SelfplayFileConfig};
pub use worker::{run_selfplay, GameEnd, GameRecord, Openings, Progress, RunOptions, SelfplayError};
