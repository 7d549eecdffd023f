//! The policy labels of a sample: which numbers stand for which moves.
//!
//! The labels belong to the network's encoder (koma-model's `encoding`), which this
//! torch-free crate cannot depend on; readers and writers of chunks take the encoder's
//! labelling as a [`PolicyLabels`] (koma-selfplay's `EncoderLabels` is this build's).

use rules::{Position, Variant};

/// The policy labelling of one encoder version, for every variant.
pub trait PolicyLabels: Sync {
    /// The encoder version whose labels these are (a chunk header's `encoder_version`).
    fn encoder_version(&self) -> u32;
    /// The number of policy labels of `variant` (every label is below it).
    fn policy_size(&self, variant: Variant) -> u32;
    /// The labels of the legal moves of `pos`.
    fn legal_labels(&self, pos: &Position) -> Vec<usize>;
}
