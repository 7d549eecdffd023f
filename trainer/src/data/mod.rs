//! The training data, from samples to minibatches.
//!
//! - [`window`]: the replay window over the newest samples ([`Replay`]), its size fixed or
//!   growing with the run ([`ReplayWindow`]), filled from chunk files in parallel.
//! - [`targets`]: what the value target mixes into the game's result ([`ValueTargets`]),
//!   and its material share over the run ([`ValueSchedule`]).
//! - [`batch`]: samples encoded into a minibatch ([`Batch`], [`encode_batch`]): input
//!   planes, policy targets dense or sparse ([`PolicyTargets`]), the auxiliary targets and
//!   the masks, the samples in parallel.
//! - [`mix`]: records mixed into every minibatch beside the window ([`RecordMix`]).
//! - [`loader`]: the thread that draws shuffled minibatches from the window ahead of the
//!   optimiser ([`Loader`]).

pub mod batch;
pub mod loader;
pub mod mix;
pub mod targets;
pub mod window;

pub use batch::{encode_batch, encode_batch_with, Batch, PolicyTargets, FINAL_MATERIAL_SCALE};
pub use loader::{Loader, Sources};
pub use mix::RecordMix;
pub use targets::{ValueSchedule, ValueTargets};
pub use window::{Replay, ReplayWindow};

/// A start-position sample for the tests: policy target label `i % 100`, a full search
/// when `i` is even, won.
#[cfg(test)]
fn test_sample(i: u32) -> dataio::Sample {
    use rules::{Position, Variant};
    dataio::Sample {
        sfen: Position::startpos(Variant::Shogi).to_sfen(),
        repetitions: 0,
        policy: vec![(i % 100, 1.0)],
        result: Some(dataio::GameResult::Win),
        root_wdl: [0.5, 0.5, 0.0],
        plies_left: 10,
        full_search: i % 2 == 0,
        aux: dataio::AuxTargets::default(),
    }
}
