//! SGD with momentum and AdamW, written out in tch tensor operations so that the
//! optimiser state is a set of plain named tensors: they go to a safetensors file next to
//! the checkpoint's weights (`<stem>.optim.safetensors`) and come back on resume.
//!
//! Semantics follow PyTorch's `torch.optim.SGD` (L2 weight decay added to the gradient,
//! momentum buffer, optional Nesterov) and `torch.optim.AdamW` (decoupled weight decay,
//! bias-corrected moments). Weight decay applies to convolution and linear weights only
//! (tensors of rank 2 or more), not to biases and batch norm parameters.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use model::file::tensors::host_tensor;
use model::tch::{self, nn::VarStore, Kind, Tensor};
use nn::file::tensors as codec;

use crate::config::{OptimizerKind, TrainConfig};

/// Version of the optimiser state file. Version 2 records a digest of the tensors
/// (`tensors_sha256`, [`model::tensor_digest`]), written and read with model's safetensors
/// codec ([`model::file::tensors`]); version 1 files (no digest) still load.
pub const OPTIM_FORMAT_VERSION: u32 = 2;
/// Version of an optimiser state file that also holds the raw trainable weights
/// (`<param>.raw`, [`Optimizer::save_with_weights`]): written when the checkpoint's
/// weights are an average (`train.ema_decay`), so that training resumes on the raw ones.
/// Files without them stay version 2.
pub const OPTIM_FORMAT_VERSION_WITH_WEIGHTS: u32 = 3;

/// The optimiser state file of a checkpoint stem: `<stem>.optim.safetensors`.
pub fn optim_path(stem: &Path) -> PathBuf {
    let name = stem.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    stem.with_file_name(format!("{name}.optim.safetensors"))
}

// Causes are part of the messages, not also `Error::source`, so that they print once.
#[derive(Debug, thiserror::Error)]
pub enum OptimError {
    #[error("{path}: {cause}")]
    Io { path: PathBuf, cause: std::io::Error },
    #[error("{path}: optimiser state is damaged or of another network: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: optimiser state does not match its checksum (corrupt or replaced)")]
    ChecksumMismatch { path: PathBuf },
    #[error("{path}: optimiser state tensor `{name}` holds {value}: not finite (a diverged run?)")]
    NonFinite { path: PathBuf, name: String, value: f32 },
    #[error("torch: {0}")]
    Torch(tch::TchError),
}

impl From<tch::TchError> for OptimError {
    fn from(e: tch::TchError) -> Self {
        OptimError::Torch(e)
    }
}

/// The optimiser of a network's trainable parameters, flattened: at construction the
/// parameters become views of one f32 buffer, and once the first gradients exist they
/// become views of one gradient buffer, so that an update is about ten whole-buffer
/// operations whatever the number of parameter tensors (instead of 13 to 20 small ones per
/// tensor), and nothing in a step waits for the device: clipping, skipping a step whose
/// gradients are not finite, and Adam's step count all stay on the device.
pub struct Optimizer {
    kind: OptimizerKind,
    names: Vec<String>,
    params: Vec<Tensor>,
    /// Each parameter's (offset, length) in the flat buffers.
    spans: Vec<(i64, i64)>,
    /// All parameters (the `params` are views of it), gradients, decay mask (1 where
    /// weight decay applies: tensors of rank 2 or more), SGD momentum or Adam's first
    /// moments, Adam's second moments (empty for SGD).
    flat: Tensor,
    grad: Tensor,
    decay: Tensor,
    m: Tensor,
    v: Tensor,
    /// Updates applied so far (a device scalar; Adam's bias correction).
    updates: Tensor,
    momentum: f64,
    nesterov: bool,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
}

impl Optimizer {
    /// An optimiser over the trainable variables of `vs` (sorted by name), zero state.
    /// The variables' storage moves into the optimiser's flat buffer (they stay the same
    /// tensors: the network and the `VarStore` see every update).
    pub fn new(vs: &VarStore, cfg: &TrainConfig) -> Optimizer {
        let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<String> = vars.iter().map(|(n, _)| n.clone()).collect();
        let params: Vec<Tensor> = vars.into_iter().map(|(_, t)| t).collect();
        let device = vs.device();
        let mut spans = Vec::with_capacity(params.len());
        let mut offset = 0i64;
        for p in &params {
            spans.push((offset, p.numel() as i64));
            offset += p.numel() as i64;
        }
        let total = offset;
        let zeros = || Tensor::zeros([total], (Kind::Float, device));
        let (flat, decay) = tch::no_grad(|| {
            let flat = zeros();
            let decay = zeros();
            for (p, &(off, n)) in params.iter().zip(&spans) {
                let mut view = flat.narrow(0, off, n);
                view.copy_(&p.detach().to_kind(Kind::Float).flatten(0, -1));
                let _ = decay.narrow(0, off, n).fill_(if p.dim() >= 2 { 1.0 } else { 0.0 });
                let mut p = p.shallow_clone();
                p.set_data(&view.view(p.size().as_slice()));
            }
            (flat, decay)
        });
        let v = match cfg.optimizer {
            OptimizerKind::Adamw => zeros(),
            OptimizerKind::Sgd => Tensor::zeros([0], (Kind::Float, device)),
        };
        Optimizer {
            kind: cfg.optimizer,
            names,
            params,
            spans,
            flat,
            grad: zeros(),
            decay,
            m: zeros(),
            v,
            updates: Tensor::zeros([], (Kind::Float, device)),
            momentum: cfg.momentum,
            nesterov: cfg.nesterov,
            beta2: cfg.beta2,
            eps: cfg.adam_eps,
            weight_decay: cfg.weight_decay,
        }
    }

    pub fn kind(&self) -> OptimizerKind {
        self.kind
    }

    /// The trainable parameters, flat, in name order (the network's variables are views
    /// of it).
    pub fn flat_params(&self) -> &Tensor {
        &self.flat
    }

    /// Updates applied so far (reads the device).
    pub fn updates(&self) -> u64 {
        self.updates.double_value(&[]).round() as u64
    }

    /// Clears the gradients (one fill once they live in the flat buffer).
    pub fn zero_grad(&mut self) {
        tch::no_grad(|| {
            for i in 0..self.params.len() {
                let g = self.params[i].grad();
                if g.defined() && g.data_ptr() as usize != self.flat_grad_ptr(i) {
                    self.params[i].zero_grad();
                }
            }
            let _ = self.grad.zero_();
        });
    }

    fn flat_grad_ptr(&self, i: usize) -> usize {
        self.grad.data_ptr() as usize + self.spans[i].0 as usize * 4
    }

    /// After a backward pass: makes sure the flat gradient buffer holds every gradient.
    /// The first time, each gradient is copied in and becomes a view of the buffer, so
    /// later backward passes accumulate straight into it (checked by address each step,
    /// so a gradient libtorch ever replaced is copied in again).
    pub fn gather_grads(&mut self) {
        tch::no_grad(|| {
            for i in 0..self.params.len() {
                let g = self.params[i].grad();
                if !g.defined() || g.data_ptr() as usize == self.flat_grad_ptr(i) {
                    continue;
                }
                let (off, n) = self.spans[i];
                let mut view = self.grad.narrow(0, off, n);
                view.copy_(&g.to_kind(Kind::Float).flatten(0, -1));
                if g.kind() == Kind::Float {
                    let mut g = g;
                    g.set_data(&view.view(self.params[i].size().as_slice()));
                }
            }
        });
    }

    /// Gradients computed on another copy of the network (a low-precision one, see
    /// `TrainPrecision::Bf16`) into the flat buffer as f32: `vs` must hold the same
    /// trainable variables; a variable without a gradient counts as zero.
    pub fn load_grads_from(&mut self, vs: &VarStore) {
        let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(vars.iter().map(|(n, _)| n).eq(self.names.iter()), "gradients of another network");
        tch::no_grad(|| {
            for ((_, t), &(off, n)) in vars.iter().zip(&self.spans) {
                let g = t.grad();
                let mut view = self.grad.narrow(0, off, n);
                if g.defined() {
                    view.copy_(&g.to_kind(Kind::Float).flatten(0, -1));
                } else {
                    let _ = view.zero_();
                }
            }
        });
    }

    /// Global L2 norm of the gradients, a device scalar (inf/NaN after an overflow).
    pub fn grad_norm(&self) -> Tensor {
        tch::no_grad(|| self.grad.norm())
    }

    /// One plain update with learning rate `lr` from the gradients of the last backward
    /// pass (gathered first).
    pub fn step(&mut self, lr: f64) {
        self.gather_grads();
        let device = self.flat.device();
        let one = Tensor::ones([], (Kind::Float, device));
        let no = Tensor::zeros([], (Kind::Bool, device));
        self.step_on_device(lr, &one, &no);
    }

    /// One update with learning rate `lr` of the gathered gradients times `grad_factor`
    /// (a device scalar: loss-scale removal and clipping in one), skipped on the device
    /// where `skip` (a device bool scalar) is true: parameters and state stay as they were.
    pub fn step_on_device(&mut self, lr: f64, grad_factor: &Tensor, skip: &Tensor) {
        tch::no_grad(|| {
            let keep = skip.logical_not();
            let g = &self.grad * grad_factor;
            let (new_p, new_m, new_v) = match self.kind {
                OptimizerKind::Sgd => {
                    let g = if self.weight_decay > 0.0 { g + &self.flat * &self.decay * self.weight_decay } else { g };
                    let m = &self.m * self.momentum + &g;
                    let d = if self.nesterov { &g + &m * self.momentum } else { m.shallow_clone() };
                    (&self.flat - d * lr, m, None)
                }
                OptimizerKind::Adamw => {
                    let (b1, b2) = (self.momentum, self.beta2);
                    let t = &self.updates + 1.0;
                    let decayed = &self.flat * (&self.decay * (-lr * self.weight_decay) + 1.0);
                    let m = &self.m * b1 + &g * (1.0 - b1);
                    let v = &self.v * b2 + g.square() * (1.0 - b2);
                    // 1 - beta^t with t on the device.
                    let bc1 = (&t * b1.ln()).exp().neg() + 1.0;
                    let bc2 = (&t * b2.ln()).exp().neg() + 1.0;
                    let denom = (&v / bc2).sqrt() + self.eps;
                    (decayed - (&m / bc1) / denom * lr, m, Some(v))
                }
            };
            self.flat.copy_(&new_p.where_self(&keep, &self.flat));
            self.m.copy_(&new_m.where_self(&keep, &self.m));
            if let Some(v) = new_v {
                self.v.copy_(&v.where_self(&keep, &self.v));
            }
            let _ = self.updates.g_add_(&keep.to_kind(Kind::Float));
        });
    }

    /// The state as named tensors (`<param>.m`, `<param>.v`): views of the flat buffers
    /// in the parameters' shapes, the file format of one tensor per parameter.
    fn state(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        for (i, n) in self.names.iter().enumerate() {
            let (off, len) = self.spans[i];
            let shape = self.params[i].size();
            out.push((format!("{n}.m"), self.m.narrow(0, off, len).view(shape.as_slice())));
            if self.v.numel() > 0 {
                out.push((format!("{n}.v"), self.v.narrow(0, off, len).view(shape.as_slice())));
            }
        }
        out
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            OptimizerKind::Sgd => "sgd",
            OptimizerKind::Adamw => "adamw",
        }
    }

    /// Writes the state to `path` (safetensors, atomically).
    pub fn save(&self, path: &Path) -> Result<(), OptimError> {
        self.write(path, false)
    }

    /// Writes the state and the raw trainable weights (`<param>.raw`, version
    /// [`OPTIM_FORMAT_VERSION_WITH_WEIGHTS`]) to `path`: for a checkpoint whose weights
    /// are not the ones being trained (an average).
    pub fn save_with_weights(&self, path: &Path) -> Result<(), OptimError> {
        self.write(path, true)
    }

    fn write(&self, path: &Path, with_weights: bool) -> Result<(), OptimError> {
        let updates = self.updates();
        let mut tensors = self.state();
        if with_weights {
            tensors.extend(self.weights());
        }
        let host = tensors.iter().map(|(name, t)| host_tensor(name.as_str(), t)).collect::<Result<Vec<_>, _>>()?;
        let corrupt =
            |e: codec::TensorFileError| OptimError::Corrupt { path: path.to_path_buf(), reason: e.to_string() };
        let digest = codec::host_tensors_sha256(&host);
        let version = if with_weights { OPTIM_FORMAT_VERSION_WITH_WEIGHTS } else { OPTIM_FORMAT_VERSION };
        let meta: HashMap<String, String> = [
            ("format".to_string(), "koma-optimizer".to_string()),
            ("format_version".to_string(), version.to_string()),
            ("optimizer".to_string(), self.kind_name().to_string()),
            ("updates".to_string(), updates.to_string()),
            ("tensors_sha256".to_string(), digest),
        ]
        .into_iter()
        .collect();
        let bytes = codec::encode(&host, meta).map_err(corrupt)?;
        files::write_atomic(path, &bytes).map_err(|cause| OptimError::Io { path: path.to_path_buf(), cause })
    }

    /// The trainable weights as named tensors (`<param>.raw`), views of the flat buffer.
    fn weights(&self) -> Vec<(String, Tensor)> {
        let shaped =
            |i: usize, (off, len): (i64, i64)| self.flat.narrow(0, off, len).view(self.params[i].size().as_slice());
        self.names.iter().enumerate().map(|(i, n)| (format!("{n}.raw"), shaped(i, self.spans[i]))).collect()
    }

    /// Reads the state written by [`Optimizer::save`] or [`Optimizer::save_with_weights`].
    /// Every tensor must be present with its shape, match the file's checksum and hold
    /// finite values. Raw weights in the file replace the parameters (whatever the
    /// optimiser kind). The optimiser kind must match (else the state is left at zero and
    /// `Ok(false)` is returned: switching optimisers on resume starts their state fresh).
    pub fn load(&mut self, path: &Path) -> Result<bool, OptimError> {
        let bytes = std::fs::read(path).map_err(|cause| OptimError::Io { path: path.to_path_buf(), cause })?;
        let bad = |reason: String| OptimError::Corrupt { path: path.to_path_buf(), reason };
        let meta = codec::metadata(&bytes).map_err(|e| bad(e.to_string()))?;
        if meta.get("format").map(String::as_str) != Some("koma-optimizer") {
            return Err(bad("not a koma optimiser state file".into()));
        }
        let version = meta.get("format_version").and_then(|v| v.parse::<u32>().ok());
        if !matches!(version, Some(1..=OPTIM_FORMAT_VERSION_WITH_WEIGHTS)) {
            return Err(bad(format!("unsupported format version {:?}", meta.get("format_version"))));
        }
        let st = codec::decode(&bytes).map_err(|e| bad(e.to_string()))?;
        if version != Some(1) && meta.get("tensors_sha256") != Some(&codec::tensors_sha256(&st)) {
            return Err(OptimError::ChecksumMismatch { path: path.to_path_buf() });
        }
        let weights = if version == Some(OPTIM_FORMAT_VERSION_WITH_WEIGHTS) { self.weights() } else { Vec::new() };
        let weight_count = weights.len();
        for (name, dst) in weights {
            load_tensor(&st, &name, dst, path)?;
        }
        if meta.get("optimizer").map(String::as_str) != Some(self.kind_name()) {
            return Ok(false);
        }
        let updates: u64 =
            meta.get("updates").and_then(|s| s.parse().ok()).ok_or_else(|| bad("no update count".into()))?;
        let expected: usize = self.state().len() + weight_count;
        if st.len() != expected {
            return Err(bad(format!("{} tensors, expected {expected}", st.len())));
        }
        for (name, dst) in self.state() {
            load_tensor(&st, &name, dst, path)?;
        }
        let _ = self.updates.fill_(updates as f64);
        Ok(true)
    }
}

/// Copies tensor `name` of `st` into `dst`, checking its shape and that it is finite.
fn load_tensor(st: &codec::SafeTensors<'_>, name: &str, dst: Tensor, path: &Path) -> Result<(), OptimError> {
    let bad = |reason: String| OptimError::Corrupt { path: path.to_path_buf(), reason };
    let view = st.tensor(name).map_err(|_| bad(format!("missing tensor {name}")))?;
    let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
    let data = match codec::f32_values(&view) {
        Some(data) if shape == dst.size() => data,
        _ => return Err(bad(format!("tensor {name} has shape {shape:?}, expected {:?}", dst.size()))),
    };
    if let Some(&value) = data.iter().find(|x| !x.is_finite()) {
        return Err(OptimError::NonFinite { path: path.to_path_buf(), name: name.to_string(), value });
    }
    let src = Tensor::from_slice(&data).view(shape.as_slice());
    let mut dst = dst;
    tch::no_grad(|| dst.f_copy_(&src))?;
    Ok(())
}
