//! The portable backend: the network's forward pass in pure Rust (placeholder while the
//! kernels land).

use crate::file::error::CheckpointError;
use crate::file::loader::NetworkFile;
use crate::inference::evaluation::Evaluation;
use crate::inference::evaluator::{EvalError, Evaluator};
use crate::network::shape::NetShape;

pub struct CpuEvaluator {
    shape: NetShape,
}

impl CpuEvaluator {
    pub fn new(file: &NetworkFile) -> Result<CpuEvaluator, CheckpointError> {
        Err(CheckpointError::Backend(format!("{}: no CPU backend yet", file.weights_path.display())))
    }
}

impl Evaluator for CpuEvaluator {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, _inputs: &[f32], _batch: usize, _out: &mut Evaluation) -> Result<(), EvalError> {
        Err(EvalError::Backend("no CPU backend yet".into()))
    }
}
