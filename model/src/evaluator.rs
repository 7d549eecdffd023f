//! The forward pass as a service: raw encoded positions in, policy logits and WDL
//! probabilities out.

use std::sync::Mutex;

use tch::{Device, Kind, Tensor};

use crate::device::Precision;
use crate::net::{FusedNet, Net};
use crate::shape::{NetShape, WDL_LEN};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("evaluator input has {got} values, expected {expected} ({batch} positions x {per_position})")]
    InputLength { got: usize, expected: usize, batch: usize, per_position: usize },
    #[error("evaluator shape {found} does not match {expected}")]
    ShapeMismatch { expected: NetShape, found: NetShape },
    #[error("torch: {0}")]
    Torch(String),
    #[error("evaluator panicked: {0}")]
    Panic(String),
}

impl From<tch::TchError> for EvalError {
    fn from(e: tch::TchError) -> Self {
        EvalError::Torch(e.to_string())
    }
}

/// Results for a batch of positions: policy logits (`batch x policy_len`, unnormalised;
/// the caller masks illegal moves and applies the softmax) and WDL probabilities
/// (`batch x 3`: win, draw, loss for the side to move; each row sums to 1).
///
/// Buffers are reused: [`Evaluation::resize`] keeps the allocation when it is big enough.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    batch: usize,
    policy_len: usize,
    policy: Vec<f32>,
    wdl: Vec<f32>,
}

impl Evaluation {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(batch: usize, policy_len: usize) -> Self {
        Evaluation {
            batch: 0,
            policy_len,
            policy: Vec::with_capacity(batch * policy_len),
            wdl: Vec::with_capacity(batch * WDL_LEN),
        }
    }

    /// Sets the size; reallocates only when the capacity is too small. Contents are
    /// unspecified afterwards (to be overwritten).
    pub fn resize(&mut self, batch: usize, policy_len: usize) {
        self.batch = batch;
        self.policy_len = policy_len;
        self.policy.resize(batch * policy_len, 0.0);
        self.wdl.resize(batch * WDL_LEN, 0.0);
    }

    pub fn batch(&self) -> usize {
        self.batch
    }

    pub fn policy_len(&self) -> usize {
        self.policy_len
    }

    /// Policy logits of position `i`.
    pub fn policy(&self, i: usize) -> &[f32] {
        &self.policy[i * self.policy_len..(i + 1) * self.policy_len]
    }

    /// (win, draw, loss) probabilities of position `i`.
    pub fn wdl(&self, i: usize) -> [f32; 3] {
        let w = &self.wdl[i * WDL_LEN..(i + 1) * WDL_LEN];
        [w[0], w[1], w[2]]
    }

    /// Expected score of position `i` for the side to move in [-1, 1]: win - loss.
    pub fn value(&self, i: usize) -> f32 {
        let [w, _, l] = self.wdl(i);
        w - l
    }

    pub fn policy_all(&self) -> &[f32] {
        &self.policy
    }

    pub fn wdl_all(&self) -> &[f32] {
        &self.wdl
    }

    /// Mutable (policy, wdl) buffers, for [`Evaluator`] implementations. Call
    /// [`Evaluation::resize`] first.
    pub fn buffers_mut(&mut self) -> (&mut [f32], &mut [f32]) {
        (&mut self.policy, &mut self.wdl)
    }

    /// Copies positions `src_start..src_start + n` of `src` to `dst_start..` of `self`.
    pub(crate) fn copy_range_from(&mut self, dst_start: usize, src: &Evaluation, src_start: usize, n: usize) {
        let pl = self.policy_len;
        debug_assert_eq!(pl, src.policy_len);
        self.policy[dst_start * pl..(dst_start + n) * pl]
            .copy_from_slice(&src.policy[src_start * pl..(src_start + n) * pl]);
        self.wdl[dst_start * WDL_LEN..(dst_start + n) * WDL_LEN]
            .copy_from_slice(&src.wdl[src_start * WDL_LEN..(src_start + n) * WDL_LEN]);
    }
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

    /// A short human-readable description (device, precision, size).
    fn describe(&self) -> String {
        format!("evaluator ({})", self.shape())
    }
}

fn check_input(shape: &NetShape, inputs: &[f32], batch: usize) -> Result<(), EvalError> {
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
        check_input(&self.shape, inputs, batch)?;
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

/// A network on a torch device, in inference form: batch norms folded into the
/// convolutions, evaluation semantics, no autograd, weights in the chosen precision
/// (by default f16 on CUDA, f32 on the CPU). Inputs are converted on the device;
/// outputs come back as f32 (softmax of the WDL computed in f32).
///
/// libtorch modules are not `Sync` in tch's types; a mutex serialises forward passes
/// (uncontended in the usual set-up: one [`crate::Batcher`] thread per evaluator).
pub struct TorchEvaluator {
    net: Mutex<FusedNet>,
    shape: NetShape,
    device: Device,
    kind: Kind,
}

impl TorchEvaluator {
    /// Snapshot of `net`'s current weights on `device`. Later changes to `net` (training)
    /// do not affect this evaluator; build a new one and hand it to the batcher.
    pub fn new(net: &Net, device: Device, precision: Precision) -> Result<Self, EvalError> {
        crate::torch_link::anchor();
        let kind = precision.kind_for(device);
        if device.is_cuda() {
            tch::Cuda::cudnn_set_benchmark(true);
        }
        let fused = net.fuse(device, kind)?;
        Ok(TorchEvaluator { net: Mutex::new(fused), shape: net.shape(), device, kind })
    }

    pub fn device(&self) -> Device {
        self.device
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }
}

impl Evaluator for TorchEvaluator {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        check_input(&self.shape, inputs, batch)?;
        let s = self.shape;
        out.resize(batch, s.policy_len());
        if batch == 0 {
            return Ok(());
        }
        let net = self.net.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| -> Result<(), EvalError> {
            let mut xs = Tensor::f_from_slice(inputs)?.f_view([
                batch as i64,
                s.input_planes as i64,
                s.board_height as i64,
                s.board_width as i64,
            ])?;
            if self.device != Device::Cpu {
                xs = xs.f_to_device(self.device)?;
            }
            if self.kind != Kind::Float {
                xs = xs.f_to_kind(self.kind)?;
            }
            let (policy, wdl) = net.forward(&xs)?;
            let policy = if policy.kind() == Kind::Float { policy } else { policy.f_to_kind(Kind::Float)? };
            let wdl = wdl.f_softmax(-1, Kind::Float)?;
            let (p, w) = out.buffers_mut();
            // copy_data moves device tensors to the host and makes them contiguous.
            policy.f_copy_data(p, batch * s.policy_len())?;
            wdl.f_copy_data(w, batch * WDL_LEN)?;
            Ok(())
        })
    }

    fn describe(&self) -> String {
        format!("torch {:?} {:?} ({})", self.device, self.kind, self.shape)
    }
}
