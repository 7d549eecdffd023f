//! The policy labels of a sample: which numbers stand for which moves.
//!
//! The labels belong to the network's encoder (koma-model's `encoding`), which this
//! torch-free crate cannot depend on; readers and writers of chunks take the encoder's
//! labelling as a [`PolicyLabels`] (koma-nn's `EncoderLabels` is this build's).

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

/// Labels 0, 1, ... for the legal moves in generation order, with the standard shogi
/// policy size: not an encoder's labels, but enough for the codec's tests.
#[cfg(test)]
pub(crate) struct GenerationOrderLabels;

#[cfg(test)]
impl PolicyLabels for GenerationOrderLabels {
    fn encoder_version(&self) -> u32 {
        1
    }
    fn policy_size(&self, _: Variant) -> u32 {
        2187
    }
    fn legal_labels(&self, pos: &Position) -> Vec<usize> {
        (0..pos.legal_moves().len()).collect()
    }
}
