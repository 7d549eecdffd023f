//! The training sample ([`dataio::Sample`]) as this build's network encoder sees it: its
//! input planes ([`encode_sample`]) and its policy labels ([`EncoderLabels`], which the
//! chunk codec of `dataio` takes to check labels and size chunk headers). Self-play writes
//! samples with these labels; the trainer's batches and `koma learn` read them back.

use std::sync::OnceLock;

use dataio::{PolicyLabels, Sample, SampleError};
use rules::{Position, Variant};

use super::{Encoder, InputPlane, ENCODER_VERSION};

/// The policy labels of [`Encoder`] (version [`ENCODER_VERSION`]) for
/// every variant: what chunks are written and read with.
#[derive(Clone, Copy, Debug, Default)]
pub struct EncoderLabels;

/// One encoder per variant, built on first use (the tables take a moment).
fn encoder(variant: Variant) -> &'static Encoder {
    static ENCODERS: [OnceLock<Encoder>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match variant {
        Variant::Shogi => 0,
        Variant::Sho => 1,
        Variant::Dai => 2,
    };
    ENCODERS[slot].get_or_init(|| Encoder::new(variant))
}

impl PolicyLabels for EncoderLabels {
    fn encoder_version(&self) -> u32 {
        ENCODER_VERSION
    }

    fn policy_size(&self, variant: Variant) -> u32 {
        encoder(variant).policy_size() as u32
    }

    fn legal_labels(&self, pos: &Position) -> Vec<usize> {
        encoder(pos.variant()).legal_move_indices(pos)
    }
}

/// Encodes a sample's position into `out` (`encoder.input_len()` values) exactly as
/// self-play encoded it: [`Encoder::encode`] of the SFEN position, with the repetition
/// planes set from [`Sample::repetitions`] (the SFEN has no game history).
pub fn encode_sample(encoder: &Encoder, sample: &Sample, out: &mut [f32]) -> Result<(), SampleError> {
    encode_sample_at(encoder, sample, &sample.position(encoder.variant())?, out);
    Ok(())
}

/// [`encode_sample`] of a sample whose position (`sample.position(..)`) the caller has
/// already read.
pub fn encode_sample_at(encoder: &Encoder, sample: &Sample, pos: &Position, out: &mut [f32]) {
    encoder.encode(pos, out);
    let squares = encoder.squares();
    for (i, plane) in encoder.input_plane_info().iter().enumerate() {
        if let InputPlane::Repetition { at_least } = *plane {
            let v = if sample.repetitions >= at_least { 1.0 } else { 0.0 };
            out[i * squares..(i + 1) * squares].fill(v);
        }
    }
}
