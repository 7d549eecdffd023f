//! Samples into a minibatch ([`Batch`]): the input planes, the policy targets (dense,
//! or sparse for the learner's device to scatter, [`PolicyTargets`]), the reply policy,
//! final material and value targets, and their masks. The samples of a batch are encoded
//! in parallel on rayon's global pool (each is independent work: parse the SFEN, write its
//! planes).

use dataio::Sample;
use model::encoding::Encoder;
use nn::encoding::encode_sample_at;
use rayon::prelude::*;

use super::targets::ValueTargets;

/// One encoded minibatch.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub n: usize,
    /// `n * input_len` input planes.
    pub inputs: Vec<f32>,
    /// `n * policy_len` dense policy targets (zeros where the sample has none); empty
    /// when the batch carries them sparse ([`PolicyTargets::Sparse`]).
    pub policy: Vec<f32>,
    /// Sparse policy targets: flat indices (`row * policy_len + label`) into the dense
    /// `n x policy_len` target and their probabilities (only with
    /// [`PolicyTargets::Sparse`]; the learner scatters them on its device).
    pub policy_index: Vec<i64>,
    pub policy_value: Vec<f32>,
    /// `n` weights: 1 where the sample has a policy target (full search), else 0.
    pub policy_mask: Vec<f32>,
    /// `n * 3` win/draw/loss targets (zeros where the sample has none).
    pub wdl: Vec<f32>,
    /// `n` weights: 1 where the sample has a value target (its game's result is known),
    /// else 0.
    pub value_mask: Vec<f32>,
    /// The opponent's reply policy targets (`dataio::AuxTargets::reply_policy`), always
    /// sparse: flat indices (`row * policy_len + label`) and probabilities, for a network
    /// with a reply head (a few dozen pairs a sample; ignored otherwise).
    pub reply_index: Vec<i64>,
    pub reply_value: Vec<f32>,
    /// `n` weights: 1 where the sample has a reply policy target, else 0.
    pub reply_mask: Vec<f32>,
    /// `n` final-material targets, `tanh(final_material / FINAL_MATERIAL_SCALE)` (0 where
    /// the sample has none), for a network with a material head.
    pub material: Vec<f32>,
    /// `n` weights: 1 where the sample has a final-material target, else 0.
    pub material_mask: Vec<f32>,
}

/// Material units per unit of the material head's target before its tanh: a rook (10)
/// up at the end is `tanh(1)` = 0.76, a pawn up 0.1.
pub const FINAL_MATERIAL_SCALE: f32 = 10.0;

/// How a [`Batch`] carries its policy targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicyTargets {
    /// `n x policy_len` values made by the loader's threads: right for CPU training,
    /// where the learner's thread is the one to spare.
    #[default]
    Dense,
    /// (index, probability) pairs, a few dozen per sample, scattered into the dense target
    /// on the learner's device: right for GPU training, where the dense target (2,187
    /// floats per shogi sample) would be built on the host and copied to the device.
    Sparse,
}

/// Encodes `samples` into a [`Batch`] with dense policy targets, the samples in
/// parallel. Samples whose SFEN does not parse are left out (self-play never writes such
/// samples; this keeps a damaged record from stopping training). `value` says what the
/// value target mixes into the result.
pub fn encode_batch(encoder: &Encoder, samples: &[Sample], value: ValueTargets) -> Batch {
    encode_batch_with(encoder, samples, value, PolicyTargets::Dense)
}

/// [`encode_batch`] with the policy targets dense or sparse.
pub fn encode_batch_with(encoder: &Encoder, samples: &[Sample], value: ValueTargets, targets: PolicyTargets) -> Batch {
    let (il, pl) = (encoder.input_len(), encoder.policy_size());
    let dense = targets == PolicyTargets::Dense;
    let mut b = Batch::zeros(samples.len(), il, pl, dense);
    let encoded = encode_rows(&mut b, encoder, samples, value, dense);
    push_sparse_targets(&mut b, samples, &encoded, pl, dense);
    set_sample_targets(&mut b, samples, &encoded, value);
    if !encoded.iter().all(Option::is_some) {
        drop_unencoded(&mut b, &encoded, il, pl, dense);
    }
    b
}

impl Batch {
    /// `n` rows of zeros: `input_len` input values a row, `policy_len` policy values a row
    /// when `dense` (none otherwise), and every target and mask.
    fn zeros(n: usize, input_len: usize, policy_len: usize, dense: bool) -> Batch {
        Batch {
            n,
            inputs: vec![0.0; n * input_len],
            policy: vec![0.0; if dense { n * policy_len } else { 0 }],
            policy_mask: vec![0.0; n],
            wdl: vec![0.0; n * 3],
            value_mask: vec![0.0; n],
            reply_mask: vec![0.0; n],
            material: vec![0.0; n],
            material_mask: vec![0.0; n],
            ..Batch::default()
        }
    }
}

/// The costly part (planes, dense policy) in parallel, one sample per task, into the rows
/// of `b`. Per sample: its material win probability once encoded, `None` if it could not
/// be.
fn encode_rows(
    b: &mut Batch,
    encoder: &Encoder,
    samples: &[Sample],
    value: ValueTargets,
    dense: bool,
) -> Vec<Option<f32>> {
    let (il, pl) = (encoder.input_len(), encoder.policy_size());
    if dense {
        (b.inputs.par_chunks_mut(il), b.policy.par_chunks_mut(pl), samples)
            .into_par_iter()
            .map(|(input, policy, s)| encode_one(encoder, s, value, input, policy))
            .collect()
    } else {
        (b.inputs.par_chunks_mut(il), samples)
            .into_par_iter()
            .map(|(input, s)| encode_one(encoder, s, value, input, &mut []))
            .collect()
    }
}

/// The sparse targets, numbered by the rows of the samples that were encoded (`encoded`):
/// the policy of full searches (unless it is `dense`) and the reply policy.
fn push_sparse_targets(b: &mut Batch, samples: &[Sample], encoded: &[Option<f32>], pl: usize, dense: bool) {
    let rows = || samples.iter().zip(encoded).filter(|(_, e)| e.is_some()).map(|(s, _)| s).enumerate();
    if !dense {
        for (row, s) in rows().filter(|(_, s)| s.full_search) {
            push_sparse(&mut b.policy_index, &mut b.policy_value, row, pl, &s.policy);
        }
    }
    for (row, s) in rows() {
        push_sparse(&mut b.reply_index, &mut b.reply_value, row, pl, &s.aux.reply_policy);
    }
}

/// Each sample's masks, final-material target and value target (the value from its
/// material win probability in `encoded`), in the sample's own row.
fn set_sample_targets(b: &mut Batch, samples: &[Sample], encoded: &[Option<f32>], value: ValueTargets) {
    for (i, s) in samples.iter().enumerate() {
        if s.full_search && !s.policy.is_empty() {
            b.policy_mask[i] = 1.0;
        }
        if !s.aux.reply_policy.is_empty() {
            b.reply_mask[i] = 1.0;
        }
        if let Some(m) = s.aux.final_material {
            b.material[i] = (m / FINAL_MATERIAL_SCALE).tanh();
            b.material_mask[i] = 1.0;
        }
        if let Some(wdl) = encoded[i].and_then(|material| value.of(s, material)) {
            b.wdl[i * 3..i * 3 + 3].copy_from_slice(&wdl);
            b.value_mask[i] = 1.0;
        }
    }
}

/// Closes the gaps of the samples that failed (`None` in `encoded`), keeping the order.
fn drop_unencoded(b: &mut Batch, encoded: &[Option<f32>], il: usize, pl: usize, dense: bool) {
    let mut kept = 0;
    for (i, _) in encoded.iter().enumerate().filter(|(_, e)| e.is_some()) {
        b.inputs.copy_within(i * il..(i + 1) * il, kept * il);
        if dense {
            b.policy.copy_within(i * pl..(i + 1) * pl, kept * pl);
        }
        b.wdl.copy_within(i * 3..(i + 1) * 3, kept * 3);
        b.policy_mask[kept] = b.policy_mask[i];
        b.value_mask[kept] = b.value_mask[i];
        b.reply_mask[kept] = b.reply_mask[i];
        b.material[kept] = b.material[i];
        b.material_mask[kept] = b.material_mask[i];
        kept += 1;
    }
    b.n = kept;
    b.inputs.truncate(kept * il);
    b.policy.truncate(kept * pl);
    b.policy_mask.truncate(kept);
    b.wdl.truncate(kept * 3);
    b.value_mask.truncate(kept);
    b.reply_mask.truncate(kept);
    b.material.truncate(kept);
    b.material_mask.truncate(kept);
}

/// Appends the (label, probability) pairs of batch row `row` as flat indices into an
/// `n x policy_len` target (labels out of range are left out).
fn push_sparse(index: &mut Vec<i64>, value: &mut Vec<f32>, row: usize, policy_len: usize, pairs: &[(u32, f32)]) {
    for &(label, p) in pairs.iter().filter(|(l, _)| (*l as usize) < policy_len) {
        index.push((row * policy_len + label as usize) as i64);
        value.push(p);
    }
}

/// One sample's input planes and dense policy target (when it has one), and its
/// material win probability for `value` (read from the same position); `None` if its
/// position cannot be read.
fn encode_one(
    encoder: &Encoder,
    s: &Sample,
    value: ValueTargets,
    input: &mut [f32],
    policy: &mut [f32],
) -> Option<f32> {
    let pos = s.position(encoder.variant()).ok()?;
    encode_sample_at(encoder, s, &pos, input);
    if s.full_search {
        for &(l, p) in &s.policy {
            if let Some(x) = policy.get_mut(l as usize) {
                *x = p;
            }
        }
    }
    Some(value.material_win(&pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_sample as sample;
    use dataio::GameResult;
    use nn::encoding::encode_sample;
    use rules::Variant;

    #[test]
    fn batch_targets() {
        let enc = Encoder::new(Variant::Shogi);
        let b = encode_batch(&enc, &[sample(4), sample(5)], ValueTargets { q_mix: 0.5, ..ValueTargets::RESULT });
        assert_eq!(b.n, 2);
        assert_eq!(b.policy_mask, vec![1.0, 0.0]);
        assert_eq!(b.policy[4], 1.0);
        assert_eq!(&b.wdl[..3], &[0.75, 0.25, 0.0]);
        assert_eq!(b.value_mask, vec![1.0, 1.0]);
        assert_eq!(b.inputs.len(), 2 * enc.input_len());
    }

    /// A sample without a known result has no value target; a sample whose position
    /// cannot be read is left out and the others keep their order and targets.
    #[test]
    fn unknown_results_are_masked_and_bad_samples_dropped() {
        let enc = Encoder::new(Variant::Shogi);
        let unknown = Sample { result: None, ..sample(6) };
        let bad = Sample { sfen: "not a position".into(), ..sample(8) };
        let lost = Sample { result: Some(GameResult::Loss), ..sample(10) };
        let b = encode_batch(&enc, &[unknown, bad, lost], ValueTargets::RESULT);
        assert_eq!(b.n, 2);
        assert_eq!(b.value_mask, vec![0.0, 1.0]);
        assert_eq!(b.wdl, vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(b.policy_mask, vec![1.0, 1.0]);
        let pl = enc.policy_size();
        assert_eq!((b.policy[6], b.policy[pl + 10]), (1.0, 1.0));
        let mut planes = vec![0.0; enc.input_len()];
        encode_sample(&enc, &sample(10), &mut planes).unwrap();
        assert_eq!(&b.inputs[enc.input_len()..], &planes[..]);
    }
}
