//! How a search thread gets its leaves evaluated: [`LeafEvaluator`], with a forward pass
//! in the thread ([`DirectEvaluator`]) or a request to a batching service
//! ([`nn::EvalSlot`], which may merge it with other searches' leaves).

use std::sync::Arc;

use nn::{BatchError, EvalError, EvalSlot, Evaluation, Evaluator};

/// Something that evaluates a batch of encoded leaves.
pub trait LeafEvaluator {
    type Error;
    /// Evaluates the `n` positions whose input planes are concatenated in `inputs`.
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, Self::Error>;
}

/// A forward pass in the calling thread.
pub struct DirectEvaluator {
    evaluator: Arc<dyn Evaluator>,
    out: Evaluation,
}

impl DirectEvaluator {
    pub fn new(evaluator: Arc<dyn Evaluator>) -> DirectEvaluator {
        DirectEvaluator { evaluator, out: Evaluation::new() }
    }
}

impl LeafEvaluator for DirectEvaluator {
    type Error = EvalError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, EvalError> {
        self.evaluator.evaluate_into(inputs, n, &mut self.out)?;
        Ok(&self.out)
    }
}

/// A request to the batching service, which may merge it with other searches' leaves.
impl LeafEvaluator for EvalSlot {
    type Error = BatchError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, BatchError> {
        // The copy into the request converts to the evaluator's plane kind on the way.
        self.write_f32(inputs, n)?;
        EvalSlot::evaluate(self)
    }
}
