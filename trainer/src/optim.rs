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

use model::tch::{self, nn::VarStore, Device, Kind, Tensor};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::config::{OptimizerKind, TrainConfig};

/// Version of the optimiser state file. Version 2 records a digest of the tensors
/// (`tensors_sha256`, [`model::tensor_digest`]); version 1 files (no digest) still load.
pub const OPTIM_FORMAT_VERSION: u32 = 2;

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

/// The optimiser of a network's trainable parameters.
pub struct Optimizer {
    kind: OptimizerKind,
    names: Vec<String>,
    params: Vec<Tensor>,
    decay: Vec<bool>,
    /// SGD: momentum buffers; AdamW: first moments.
    m: Vec<Tensor>,
    /// AdamW: second moments (empty for SGD).
    v: Vec<Tensor>,
    /// Updates applied so far (Adam's bias correction).
    updates: u64,
    momentum: f64,
    nesterov: bool,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
}

fn float_zeros_like(t: &Tensor) -> Tensor {
    Tensor::zeros(t.size(), (Kind::Float, t.device()))
}

impl Optimizer {
    /// An optimiser over the trainable variables of `vs` (sorted by name), zero state.
    pub fn new(vs: &VarStore, cfg: &TrainConfig) -> Optimizer {
        let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<String> = vars.iter().map(|(n, _)| n.clone()).collect();
        let params: Vec<Tensor> = vars.into_iter().map(|(_, t)| t).collect();
        let decay = params.iter().map(|t| t.dim() >= 2).collect();
        let m = params.iter().map(float_zeros_like).collect();
        let v = match cfg.optimizer {
            OptimizerKind::Adamw => params.iter().map(float_zeros_like).collect(),
            OptimizerKind::Sgd => Vec::new(),
        };
        Optimizer {
            kind: cfg.optimizer,
            names,
            params,
            decay,
            m,
            v,
            updates: 0,
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

    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Clears the gradients.
    pub fn zero_grad(&mut self) {
        for p in &mut self.params {
            p.zero_grad();
        }
    }

    /// Multiplies every gradient by `factor` (loss-scale removal).
    pub fn scale_grads(&self, factor: f64) {
        tch::no_grad(|| {
            for p in &self.params {
                let mut g = p.grad();
                if g.defined() {
                    let _ = g.f_mul_scalar_(factor);
                }
            }
        });
    }

    /// Global L2 norm of the gradients (may be inf/NaN after an f16 overflow).
    pub fn grad_norm(&self) -> f64 {
        tch::no_grad(|| {
            let sq: Vec<Tensor> = self
                .params
                .iter()
                .map(|p| p.grad())
                .filter(|g| g.defined())
                .map(|g| g.to_kind(Kind::Float).square().sum(Kind::Float))
                .collect();
            if sq.is_empty() {
                return 0.0;
            }
            Tensor::stack(&sq, 0).sum(Kind::Float).sqrt().double_value(&[])
        })
    }

    /// Scales the gradients down so that their global norm is at most `max_norm`
    /// (given the current norm `norm`).
    pub fn clip(&self, norm: f64, max_norm: f64) {
        if max_norm > 0.0 && norm > max_norm {
            self.scale_grads(max_norm / (norm + 1e-6));
        }
    }

    /// One update with learning rate `lr`.
    pub fn step(&mut self, lr: f64) {
        self.updates += 1;
        let t = self.updates as i32;
        tch::no_grad(|| {
            for i in 0..self.params.len() {
                let p = &mut self.params[i];
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let mut g = g.to_kind(Kind::Float);
                let wd = if self.decay[i] { self.weight_decay } else { 0.0 };
                match self.kind {
                    OptimizerKind::Sgd => {
                        if wd > 0.0 {
                            g = g + &*p * wd;
                        }
                        let buf = &mut self.m[i];
                        let _ = buf.f_mul_scalar_(self.momentum).and_then(|mut b| b.f_add_(&g));
                        let d = if self.nesterov { &g + &*buf * self.momentum } else { buf.shallow_clone() };
                        let _ = p.f_sub_(&(d * lr));
                    }
                    OptimizerKind::Adamw => {
                        if wd > 0.0 {
                            let _ = p.f_mul_scalar_(1.0 - lr * wd);
                        }
                        let b1 = self.momentum;
                        let b2 = self.beta2;
                        let m = &mut self.m[i];
                        let _ = m.f_mul_scalar_(b1).and_then(|mut m| m.f_add_(&(&g * (1.0 - b1))));
                        let v = &mut self.v[i];
                        let _ = v.f_mul_scalar_(b2).and_then(|mut v| v.f_add_(&(g.square() * (1.0 - b2))));
                        let bc1 = 1.0 - b1.powi(t);
                        let bc2 = 1.0 - b2.powi(t);
                        let denom = (&*v / bc2).sqrt() + self.eps;
                        let upd = (&*m / bc1) / denom;
                        let _ = p.f_sub_(&(upd * lr));
                    }
                }
            }
        });
    }

    /// The state as named tensors (`<param>.m`, `<param>.v`) plus metadata.
    fn state(&self) -> Vec<(String, &Tensor)> {
        let mut v: Vec<(String, &Tensor)> = Vec::new();
        for (i, n) in self.names.iter().enumerate() {
            v.push((format!("{n}.m"), &self.m[i]));
            if let Some(t) = self.v.get(i) {
                v.push((format!("{n}.v"), t));
            }
        }
        v
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            OptimizerKind::Sgd => "sgd",
            OptimizerKind::Adamw => "adamw",
        }
    }

    /// Writes the state to `path` (safetensors, atomically).
    pub fn save(&self, path: &Path) -> Result<(), OptimError> {
        let mut host: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
        for (name, t) in self.state() {
            let t = t.to_device(Device::Cpu).to_kind(Kind::Float).contiguous();
            let numel = t.numel();
            let mut data = vec![0f32; numel];
            t.f_copy_data(&mut data, numel)?;
            let shape = t.size().iter().map(|&d| d as usize).collect();
            host.push((name, shape, data.iter().flat_map(|x| x.to_le_bytes()).collect()));
        }
        let corrupt =
            |e: safetensors::SafeTensorError| OptimError::Corrupt { path: path.to_path_buf(), reason: e.to_string() };
        let views = host
            .iter()
            .map(|(n, s, b)| TensorView::new(Dtype::F32, s.clone(), b).map(|v| (n.as_str(), v)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(corrupt)?;
        let digest = model::tensor_digest(host.iter().map(|(n, s, b)| (n.as_str(), s.as_slice(), b.as_slice())));
        let meta: HashMap<String, String> = [
            ("format".to_string(), "koma-optimizer".to_string()),
            ("format_version".to_string(), OPTIM_FORMAT_VERSION.to_string()),
            ("optimizer".to_string(), self.kind_name().to_string()),
            ("updates".to_string(), self.updates.to_string()),
            ("tensors_sha256".to_string(), digest),
        ]
        .into_iter()
        .collect();
        let bytes = safetensors::serialize(views, &Some(meta)).map_err(corrupt)?;
        model::util::write_atomic(path, &bytes).map_err(|cause| OptimError::Io { path: path.to_path_buf(), cause })
    }

    /// Reads the state written by [`Optimizer::save`]. Every tensor must be present with
    /// its shape, match the file's checksum and hold finite values; the optimiser kind must
    /// match (else the state is left at zero and `Ok(false)` is returned: switching
    /// optimisers on resume starts their state fresh).
    pub fn load(&mut self, path: &Path) -> Result<bool, OptimError> {
        let bytes = std::fs::read(path).map_err(|cause| OptimError::Io { path: path.to_path_buf(), cause })?;
        let bad = |reason: String| OptimError::Corrupt { path: path.to_path_buf(), reason };
        let (_, header) = SafeTensors::read_metadata(&bytes).map_err(|e| bad(e.to_string()))?;
        let meta = header.metadata().clone().unwrap_or_default();
        if meta.get("format").map(String::as_str) != Some("koma-optimizer") {
            return Err(bad("not a koma optimiser state file".into()));
        }
        let version = meta.get("format_version").and_then(|v| v.parse::<u32>().ok());
        if !matches!(version, Some(1..=OPTIM_FORMAT_VERSION)) {
            return Err(bad(format!("unsupported format version {:?}", meta.get("format_version"))));
        }
        let st = SafeTensors::deserialize(&bytes).map_err(|e| bad(e.to_string()))?;
        if version != Some(1) && meta.get("tensors_sha256") != Some(&model::tensors_sha256(&st)) {
            return Err(OptimError::ChecksumMismatch { path: path.to_path_buf() });
        }
        if meta.get("optimizer").map(String::as_str) != Some(self.kind_name()) {
            return Ok(false);
        }
        let updates: u64 =
            meta.get("updates").and_then(|s| s.parse().ok()).ok_or_else(|| bad("no update count".into()))?;
        let expected: usize = self.state().len();
        if st.len() != expected {
            return Err(bad(format!("{} tensors, expected {expected}", st.len())));
        }
        let targets: Vec<(String, Tensor)> = self.state().into_iter().map(|(n, t)| (n, t.shallow_clone())).collect();
        for (name, dst) in targets {
            let view = st.tensor(&name).map_err(|_| bad(format!("missing tensor {name}")))?;
            let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
            if shape != dst.size() || view.dtype() != Dtype::F32 {
                return Err(bad(format!("tensor {name} has shape {shape:?}, expected {:?}", dst.size())));
            }
            let data: Vec<f32> =
                view.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            if let Some(&value) = data.iter().find(|x| !x.is_finite()) {
                return Err(OptimError::NonFinite { path: path.to_path_buf(), name, value });
            }
            let src = Tensor::from_slice(&data).view(shape.as_slice());
            let mut dst = dst;
            tch::no_grad(|| dst.f_copy_(&src))?;
        }
        self.updates = updates;
        Ok(true)
    }
}
