//! The forward pass as a service: raw encoded positions in, policy logits and WDL
//! probabilities out.

use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

pub use super::evaluation::{Evaluation, Logits};
use super::host_buffer::PinnedMemory;
use super::planes::{PlaneKind, PlanesRef};
use crate::network::shape::NetShape;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("evaluator input has {got} values, expected {expected} ({batch} positions x {per_position})")]
    InputLength { got: usize, expected: usize, batch: usize, per_position: usize },
    #[error("evaluator shape {found} does not match {expected}")]
    ShapeMismatch { expected: NetShape, found: NetShape },
    /// The backend failed (libtorch's error, a CUDA launch, ...); the message names it.
    #[error("{0}")]
    Backend(String),
    #[error("evaluator panicked: {0}")]
    Panic(String),
}

/// Evaluates batches of encoded positions (layout: [`NetShape`]).
pub trait Evaluator: Send + Sync {
    /// Input and output sizes.
    fn shape(&self) -> NetShape;

    /// Evaluates `batch` positions (`inputs.len() == batch * shape().input_len()`) into
    /// `out` (resized to `batch`), reusing its buffers.
    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError>;

    /// Allocating convenience form of [`Evaluator::evaluate_into`].
    fn evaluate(&self, inputs: &[f32], batch: usize) -> Result<Evaluation, EvalError> {
        let mut out = Evaluation::with_capacity(batch, self.shape().policy_len());
        self.evaluate_into(inputs, batch, &mut out)?;
        Ok(out)
    }

    /// Evaluates several requests in one forward pass: part `i`'s `n` positions are read
    /// from its `inputs` and its results written to its `out`. The default concatenates
    /// the inputs and splits the outputs (two extra copies); libtorch's evaluator copies
    /// each part once to the device and hands each its slice of the results.
    fn evaluate_parts(&self, parts: &mut [EvalPart<'_>]) -> Result<(), EvalError> {
        if let [EvalPart { inputs: PlanesRef::F32(inputs), n, out }] = parts {
            return self.evaluate_into(inputs, *n, out);
        }
        let total: usize = parts.iter().map(|p| p.n).sum();
        let mut inputs = Vec::with_capacity(total * self.shape().input_len());
        for p in parts.iter() {
            p.inputs.extend_f32(&mut inputs);
        }
        let all = self.evaluate(&inputs, total)?;
        let mut offset = 0;
        for p in parts.iter_mut() {
            p.out.resize(p.n, all.policy_len());
            p.out.copy_range_from(0, &all, offset, p.n);
            offset += p.n;
        }
        Ok(())
    }

    /// Where page-locked (pinned) host buffers for its transfers come from, if it wants
    /// them (a CUDA device): a batcher then allocates its producers' input buffers there.
    fn pinned_memory(&self) -> Option<Arc<dyn PinnedMemory>> {
        None
    }

    /// The number type its parts' input planes should come in (a batcher's producers
    /// write that type); others are accepted too, at the cost of a conversion.
    fn input_kind(&self) -> PlaneKind {
        PlaneKind::F32
    }

    /// Whether forward passes called from several threads run side by side (the portable
    /// backend's do, each with its own scratch; libtorch's evaluator takes one at a time).
    /// Where one is, several searches may evaluate each in its own thread rather than
    /// through one batching service.
    fn runs_in_parallel(&self) -> bool {
        false
    }

    /// Bytes this evaluator moved between host buffers and its device, if it counts them.
    fn copy_stats(&self) -> Option<CopyStats> {
        None
    }

    /// A short human-readable description (device, precision, size).
    fn describe(&self) -> String {
        format!("evaluator ({})", self.shape())
    }
}

/// One request of a batch: `n` positions' encoded inputs, and where their results go.
pub struct EvalPart<'a> {
    pub inputs: PlanesRef<'a>,
    pub n: usize,
    pub out: &'a mut Evaluation,
}

/// What an evaluator's host-device data path did since it was built: every copy of
/// input or output data it makes adds its bytes here, so `input_bytes_copied /
/// input_bytes` is the number of copies in per batch (1: one copy in) and likewise out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyStats {
    pub batches: u64,
    /// Requests handed in as parts of those batches, each read from its producer's own
    /// buffer (a batcher that concatenated them first would show one part per batch).
    pub parts: u64,
    /// Bytes of the inputs handed in (planes in the kind they came in) and of the outputs handed back (logits
    /// in the precision handed back, WDL f32).
    pub input_bytes: u64,
    pub output_bytes: u64,
    /// Bytes copied on the way in and on the way out.
    pub input_bytes_copied: u64,
    pub output_bytes_copied: u64,
}

/// The counters behind [`CopyStats`], for evaluators that count.
#[derive(Default)]
pub struct CopyCounters {
    pub batches: AtomicU64,
    pub parts: AtomicU64,
    pub input_bytes: AtomicU64,
    pub output_bytes: AtomicU64,
    pub input_bytes_copied: AtomicU64,
    pub output_bytes_copied: AtomicU64,
}

impl CopyCounters {
    pub fn add(counter: &AtomicU64, bytes: usize) {
        counter.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> CopyStats {
        CopyStats {
            batches: self.batches.load(Ordering::Relaxed),
            parts: self.parts.load(Ordering::Relaxed),
            input_bytes: self.input_bytes.load(Ordering::Relaxed),
            output_bytes: self.output_bytes.load(Ordering::Relaxed),
            input_bytes_copied: self.input_bytes_copied.load(Ordering::Relaxed),
            output_bytes_copied: self.output_bytes_copied.load(Ordering::Relaxed),
        }
    }
}

pub fn check_input(shape: &NetShape, inputs: PlanesRef<'_>, batch: usize) -> Result<(), EvalError> {
    let expected = batch * shape.input_len();
    if inputs.len() != expected {
        return Err(EvalError::InputLength { got: inputs.len(), expected, batch, per_position: shape.input_len() });
    }
    Ok(())
}

/// Every move equally likely (all logits 0) and a neutral value: WDL = (1/3, 1/3, 1/3),
/// i.e. expected score 0 (win - loss) with maximal uncertainty. For tests, baselines
/// ("pure MCTS") and the first self-play generation.
#[derive(Clone, Debug)]
pub struct UniformEvaluator {
    shape: NetShape,
}

impl UniformEvaluator {
    pub fn new(shape: NetShape) -> Self {
        UniformEvaluator { shape }
    }
}

impl Evaluator for UniformEvaluator {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        check_input(&self.shape, inputs.into(), batch)?;
        out.resize(batch, self.shape.policy_len());
        let (p, w) = out.buffers_mut();
        p.fill(0.0);
        w.fill(1.0 / 3.0);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("uniform ({})", self.shape)
    }
}
