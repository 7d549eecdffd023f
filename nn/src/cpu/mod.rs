//! The portable backend: the network's forward pass in pure Rust, in f32, on the CPU. It
//! needs no shared library beyond the C runtime, so the engine built with it alone runs
//! wherever it is copied (Linux, Windows). Its results equal libtorch's within 1e-4 on
//! every policy logit and 1e-5 on every WDL probability on real games of the shipped
//! networks (`model/tests/cpu_backend.rs`).
//!
//! - [`gemm`]: the one matrix product, over the GEMM library measured fastest.
//! - [`layers`]: convolutions with their batch norms folded in, over NHWC activations.
//! - [`net`]: the network's layers in order.

pub mod gemm;
mod layers;
mod net;

use std::sync::Mutex;

use crate::file::error::CheckpointError;
use crate::file::loader::{read_network_file, Expected, Network, NetworkFile};
use crate::inference::evaluation::Evaluation;
use crate::inference::evaluator::{check_input, EvalError, Evaluator};
use crate::network::shape::NetShape;
pub use gemm::GemmLib;
use net::{CpuNet, Scratch};

/// The portable evaluator. Each call runs on the calling thread; calls from several
/// threads (an engine's search threads) run side by side, each with buffers of its own
/// taken from a pool, so no thread waits for another's forward pass.
pub struct CpuEvaluator {
    net: CpuNet,
    gemm: GemmLib,
    scratch: Mutex<Vec<Scratch>>,
}

impl CpuEvaluator {
    /// The network of `file` (already checked by the loader) with the GEMM library of
    /// `KOMA_CPU_GEMM`, or the default.
    pub fn new(file: &NetworkFile) -> Result<CpuEvaluator, CheckpointError> {
        let gemm = GemmLib::from_env().map_err(|e| CheckpointError::Backend(e.to_string()))?;
        CpuEvaluator::with_gemm(file, gemm)
    }

    pub fn with_gemm(file: &NetworkFile, gemm: GemmLib) -> Result<CpuEvaluator, CheckpointError> {
        let net = CpuNet::new(&file.meta.net, file.meta.shape, &file.weights)
            .map_err(|e| CheckpointError::Backend(format!("{}: {e}", file.weights_path.display())))?;
        Ok(CpuEvaluator { net, gemm, scratch: Mutex::new(Vec::new()) })
    }

    pub fn gemm(&self) -> GemmLib {
        self.gemm
    }
}

impl Network {
    /// Loads the network at `path` (a checkpoint pair by any of its names, or a model
    /// file) on the portable CPU backend ([`CpuEvaluator`]).
    pub fn load_cpu(path: impl AsRef<std::path::Path>, expected: &Expected) -> Result<Network, CheckpointError> {
        let file = read_network_file(path, expected)?;
        let evaluator = CpuEvaluator::new(&file)?;
        Network::from_file(file, std::sync::Arc::new(evaluator))
    }
}

impl Evaluator for CpuEvaluator {
    fn shape(&self) -> NetShape {
        self.net.shape()
    }

    fn runs_in_parallel(&self) -> bool {
        true
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        let shape = self.net.shape();
        check_input(&shape, inputs.into(), batch)?;
        out.resize(batch, shape.policy_len());
        if batch == 0 {
            return Ok(());
        }
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_default();
        let (policy, wdl) = out.buffers_mut();
        self.net.forward(self.gemm, batch, inputs, &mut scratch, policy, wdl);
        self.scratch.lock().unwrap_or_else(|e| e.into_inner()).push(scratch);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("cpu f32 (portable backend, {} kernels)", self.gemm)
    }
}
