//! The rules every sample of a chunk must satisfy.

use rules::{Position, Variant};

use crate::error::SampleFault;
use crate::labels::PolicyLabels;
use crate::sample::Sample;

/// Tolerance of a policy target's and a root WDL's sum (the stored probabilities are
/// multiples of 1/65535; the root WDL comes from f32 averages).
const SUM_TOLERANCE: f32 = 0.01;

/// The rules every sample of a chunk must satisfy, checked by the readers so that no
/// damaged sample reaches a learner: the SFEN is a position of the chunk's variant; the
/// policy target's labels are distinct, below the policy size, and (for the encoder
/// version of the given labels) labels of legal moves of that position; its
/// probabilities are finite, in [0, 1] and sum to 1; a full-search sample has a policy
/// target; the root WDL is three finite values in [0, 1] that sum to 1. Of the auxiliary
/// targets: the reply policy follows the policy target's rules but legality (the next
/// position is not stored), the future WDL the root WDL's, the final material is finite.
pub struct SampleCheck<'a> {
    variant: Variant,
    policy_size: u32,
    /// The labels of the chunk's encoder, when they are the ones given (then labels are
    /// checked to be legal moves).
    labels: Option<&'a dyn PolicyLabels>,
}

impl<'a> SampleCheck<'a> {
    /// The check of samples of `variant` whose labels (below `policy_size`) are those of
    /// `encoder_version`; `labels` checks legality when it is of that version.
    pub fn new(variant: Variant, policy_size: u32, encoder_version: u32, labels: &'a dyn PolicyLabels) -> Self {
        let labels = (labels.encoder_version() == encoder_version).then_some(labels);
        SampleCheck { variant, policy_size, labels }
    }

    /// Why `s` is not a valid sample, if it is not.
    pub fn check(&self, s: &Sample) -> Result<(), SampleFault> {
        let pos = Position::from_sfen(self.variant, &s.sfen).map_err(|e| SampleFault::BadSfen {
            sfen: s.sfen.clone(),
            variant: self.variant,
            why: e.to_string(),
        })?;
        if s.full_search && s.policy.is_empty() {
            return Err(SampleFault::FullSearchWithoutPolicy);
        }
        self.check_policy(Some(&pos), &s.policy)?;
        if !is_wdl(s.root_wdl) {
            return Err(SampleFault::BadRootWdl(s.root_wdl));
        }
        self.check_policy(None, &s.aux.reply_policy).map_err(|f| SampleFault::BadReplyPolicy(Box::new(f)))?;
        if let Some(wdl) = s.aux.future_wdl.filter(|&w| !is_wdl(w)) {
            return Err(SampleFault::BadFutureWdl(wdl));
        }
        if let Some(m) = s.aux.final_material.filter(|m| !m.is_finite()) {
            return Err(SampleFault::BadFinalMaterial(m));
        }
        Ok(())
    }

    /// Checks a policy target; its labels are checked to be legal moves of `pos` when it
    /// is given and the labels are the chunk's encoder's.
    fn check_policy(&self, pos: Option<&Position>, policy: &[(u32, f32)]) -> Result<(), SampleFault> {
        if policy.is_empty() {
            return Ok(());
        }
        let mut labels: Vec<u32> = policy.iter().map(|&(l, _)| l).collect();
        labels.sort_unstable();
        if let Some(w) = labels.windows(2).find(|w| w[0] == w[1]) {
            return Err(SampleFault::RepeatedLabel(w[0]));
        }
        if let Some(&label) = labels.last().filter(|&&l| l >= self.policy_size) {
            return Err(SampleFault::LabelOutOfRange { label, policy_size: self.policy_size });
        }
        if let Some(&(label, probability)) = policy.iter().find(|&&(_, p)| !(0.0..=1.0).contains(&p)) {
            return Err(SampleFault::BadProbability { label, probability });
        }
        let sum: f32 = policy.iter().map(|&(_, p)| p).sum();
        if (sum - 1.0).abs() > SUM_TOLERANCE {
            return Err(SampleFault::BadPolicySum(sum));
        }
        if let (Some(encoder), Some(pos)) = (self.labels, pos) {
            let legal = encoder.legal_labels(pos);
            if let Some(&l) = labels.iter().find(|&&l| !legal.contains(&(l as usize))) {
                return Err(SampleFault::IllegalLabel(l));
            }
        }
        Ok(())
    }
}

/// Three finite values in [0, 1] summing to 1 (within [`SUM_TOLERANCE`]).
fn is_wdl(wdl: [f32; 3]) -> bool {
    wdl.iter().all(|v| (0.0..=1.0).contains(v)) && (wdl.iter().sum::<f32>() - 1.0).abs() <= SUM_TOLERANCE
}
