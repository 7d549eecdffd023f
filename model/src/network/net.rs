//! The residual network: tch modules built from an `nn::Path`, so that parameter names are
//! stable. Those names are the checkpoint format; `data/FORMAT.md` lists them, a test
//! pins them, and [`super::params::parameter_specs`] computes them without building.
//!
//! Parameter names (`{i}` = block index from 0; every `bn` has `weight`, `bias`,
//! `running_mean`, `running_var`):
//! ```text
//! stem.conv.weight                [C, input_planes, 3, 3]
//! stem.bn.*                       [C]
//! blocks.{i}.conv1.weight         [C, C, 3, 3]
//! blocks.{i}.bn1.*                [C]
//! blocks.{i}.conv2.weight         [C, C, 3, 3]
//! blocks.{i}.bn2.*                [C]
//! blocks.{i}.gpool.conv.weight    [G, C, 3, 3]     (global pooling blocks only)
//! blocks.{i}.gpool.bn.*           [G]
//! blocks.{i}.gpool.linear.weight  [C, 2G]          (mean and max of each pooled channel)
//! policy.conv.weight              [P, C, 3, 3]
//! policy.bn.*                     [P]
//! policy.out.weight               [policy_planes, P, 1, 1]
//! policy.out.bias                 [policy_planes]
//! value.conv.weight               [V, C, 1, 1]
//! value.bn.*                      [V]
//! value.fc1.weight                [H, V * squares]
//! value.fc1.bias                  [H]
//! value.fc2.weight                [3, H]
//! value.fc2.bias                  [3]
//! reply_policy.conv.weight        [P, C, 3, 3]     (model.reply_policy_head only; as policy.*)
//! reply_policy.bn.*               [P]
//! reply_policy.out.weight         [policy_planes, P, 1, 1]
//! reply_policy.out.bias           [policy_planes]
//! material.fc.weight              [1, H]           (model.material_head only)
//! material.fc.bias                [1]
//! ```

use std::sync::Mutex;

use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};

use ::nn::{CheckpointError, ConfigError, NetConfig, NetShape, ShapeError, WDL_LEN};

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("invalid network config: {0}")]
    Config(ConfigError),
    #[error("invalid network shape: {0}")]
    Shape(ShapeError),
    #[error("input has {got} values, expected {expected} ({batch} positions x {per_position})")]
    InputLength { got: usize, expected: usize, batch: usize, per_position: usize },
    #[error("torch: {0}")]
    Torch(tch::TchError),
}

// Causes are part of the messages above, so they are not also `Error::source` (a report
// that prints the chain would repeat them).
impl From<ConfigError> for NetError {
    fn from(e: ConfigError) -> Self {
        NetError::Config(e)
    }
}

impl From<ShapeError> for NetError {
    fn from(e: ShapeError) -> Self {
        NetError::Shape(e)
    }
}

impl From<tch::TchError> for NetError {
    fn from(e: tch::TchError) -> Self {
        NetError::Torch(e)
    }
}

impl From<NetError> for CheckpointError {
    fn from(e: NetError) -> Self {
        CheckpointError::Backend(e.to_string())
    }
}

/// A convolution without bias followed by batch norm.
#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
    pad: i64,
}

/// Batch norm epsilon (tch's and PyTorch's default).
const BN_EPS: f64 = 1e-5;

impl ConvBn {
    fn new(p: &nn::Path, cin: usize, cout: usize, k: usize, bn_scale: f64) -> ConvBn {
        let conv = nn::conv2d(
            p / "conv",
            cin as i64,
            cout as i64,
            k as i64,
            nn::ConvConfig { padding: (k / 2) as i64, bias: false, ..Default::default() },
        );
        let bn = nn::batch_norm2d(
            p / "bn",
            cout as i64,
            nn::BatchNormConfig { ws_init: nn::Init::Const(bn_scale), eps: BN_EPS, ..Default::default() },
        );
        ConvBn { conv, bn, pad: (k / 2) as i64 }
    }

    /// Same layers under explicit names (`<conv_name>.weight`, `<bn_name>.*`).
    fn named(p: &nn::Path, conv_name: &str, bn_name: &str, c: usize, bn_scale: f64) -> ConvBn {
        let conv = nn::conv2d(
            p / conv_name,
            c as i64,
            c as i64,
            3,
            nn::ConvConfig { padding: 1, bias: false, ..Default::default() },
        );
        let bn = nn::batch_norm2d(
            p / bn_name,
            c as i64,
            nn::BatchNormConfig { ws_init: nn::Init::Const(bn_scale), eps: BN_EPS, ..Default::default() },
        );
        ConvBn { conv, bn, pad: 1 }
    }

    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.bn.forward_t(&xs.apply(&self.conv), train)
    }

    /// Folds the batch norm into the convolution (inference only).
    fn fuse(&self, at: Placement) -> Result<FusedConv, tch::TchError> {
        let bn = &self.bn;
        let w = self.conv.ws.f_to_kind(Kind::Float)?;
        let gamma = bn.ws.as_ref().expect("affine batch norm").f_to_kind(Kind::Float)?;
        let beta = bn.bs.as_ref().expect("affine batch norm").f_to_kind(Kind::Float)?;
        let mean = bn.running_mean.f_to_kind(Kind::Float)?;
        let var = bn.running_var.f_to_kind(Kind::Float)?;
        let scale = gamma.f_mul(&var.f_add_scalar(BN_EPS)?.f_rsqrt()?)?;
        let w = w.f_mul(&scale.f_view([-1, 1, 1, 1])?)?;
        let b = beta.f_sub(&mean.f_mul(&scale)?)?;
        let pad = self.pad;
        FusedConv::new(w, b, pad, at)
    }
}

#[derive(Debug)]
struct GlobalPool {
    conv: ConvBn,
    linear: nn::Linear,
}

#[derive(Debug)]
struct Block {
    c1: ConvBn,
    c2: ConvBn,
    gpool: Option<GlobalPool>,
}

/// Mean and max of every channel over the board: `[B, G, H, W] -> [B, 2G]`.
fn global_pool(g: &Tensor) -> Result<Tensor, tch::TchError> {
    let mean = g.f_mean_dim([2i64, 3].as_slice(), false, None::<Kind>)?;
    let max = g.f_amax([2i64, 3].as_slice(), false)?;
    Tensor::f_cat(&[mean, max], 1)
}

impl Block {
    fn new(p: &nn::Path, config: &NetConfig, index: usize) -> Block {
        let c = config.channels;
        let last_scale = if config.zero_init_residual { 0.0 } else { 1.0 };
        let c1 = ConvBn::named(p, "conv1", "bn1", c, 1.0);
        let c2 = ConvBn::named(p, "conv2", "bn2", c, last_scale);
        let gpool = config.is_global_pooling_block(index).then(|| {
            let g = config.global_pooling_channels;
            let gp = p / "gpool";
            GlobalPool {
                conv: ConvBn::new(&gp, c, g, 3, 1.0),
                linear: nn::linear(
                    &gp / "linear",
                    (2 * g) as i64,
                    c as i64,
                    nn::LinearConfig { bias: false, ..Default::default() },
                ),
            }
        });
        Block { c1, c2, gpool }
    }

    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let mut a = self.c1.forward_t(xs, train);
        if let Some(gp) = &self.gpool {
            let g = gp.conv.forward_t(xs, train).relu();
            let pooled = global_pool(&g).expect("global pooling");
            let bias = pooled.apply(&gp.linear);
            a += bias.unsqueeze(-1).unsqueeze(-1);
        }
        let b = self.c2.forward_t(&a.relu(), train);
        (b + xs).relu()
    }
}

/// A policy head: conv 3x3 - BN - ReLU - conv 1x1 with bias to the policy planes.
#[derive(Debug)]
struct PolicyHead {
    conv: ConvBn,
    out: nn::Conv2D,
}

impl PolicyHead {
    /// The head under `p` (`<p>.conv`, `<p>.bn`, `<p>.out`).
    fn new(p: &nn::Path, config: &NetConfig, shape: NetShape) -> PolicyHead {
        let pc = config.policy_channels();
        let conv = ConvBn::new(p, config.channels, pc, 3, 1.0);
        let out = nn::conv2d(
            p / "out",
            pc as i64,
            shape.policy_planes as i64,
            1,
            nn::ConvConfig { bias: true, ..Default::default() },
        );
        PolicyHead { conv, out }
    }

    /// Logits `[B, policy_len]` of the tower output `x`.
    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        self.conv.forward_t(x, train).relu().apply(&self.out).flatten(1, -1)
    }
}

/// Everything a training forward pass gives ([`ResNet::forward_heads`]).
#[derive(Debug)]
pub struct HeadOutputs {
    /// Policy logits `[B, policy_len]`.
    pub policy: Tensor,
    /// Win/draw/loss logits `[B, 3]`.
    pub wdl: Tensor,
    /// The opponent's reply policy logits `[B, policy_len]` (`model.reply_policy_head`).
    pub reply_policy: Option<Tensor>,
    /// The final material, squashed to (-1, 1) by tanh, `[B]` (`model.material_head`).
    pub material: Option<Tensor>,
}

/// The network's modules, built under a `nn::Path` (tch style). Use [`Net`] for a network
/// that owns its `VarStore`.
#[derive(Debug)]
pub struct ResNet {
    config: NetConfig,
    shape: NetShape,
    stem: ConvBn,
    blocks: Vec<Block>,
    policy: PolicyHead,
    value_conv: ConvBn,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    /// Training-only heads (the config's `reply_policy_head`, `material_head`).
    reply_policy: Option<PolicyHead>,
    material_fc: Option<nn::Linear>,
}

impl ResNet {
    /// Creates the parameters under `p` (names in the module docs) with tch's default
    /// initialisation (Kaiming uniform for convolutions and linear layers), batch norm
    /// scales 1 (0 for the last of each block with `zero_init_residual`).
    pub fn new(p: &nn::Path, config: &NetConfig, shape: NetShape) -> Result<ResNet, NetError> {
        config.validate()?;
        shape.validate()?;
        crate::torch_link::anchor();
        let c = config.channels;
        let stem = ConvBn::new(&(p / "stem"), shape.input_planes, c, 3, 1.0);
        let bp = p / "blocks";
        let blocks = (0..config.blocks).map(|i| Block::new(&(&bp / i), config, i)).collect();
        let policy = PolicyHead::new(&(p / "policy"), config, shape);
        let vp = p / "value";
        let vc = config.value_channels;
        let value_conv = ConvBn::new(&vp, c, vc, 1, 1.0);
        let value_fc1 =
            nn::linear(&vp / "fc1", (vc * shape.squares()) as i64, config.value_hidden as i64, Default::default());
        let value_fc2 = nn::linear(&vp / "fc2", config.value_hidden as i64, WDL_LEN as i64, Default::default());
        let reply_policy = config.reply_policy_head.then(|| PolicyHead::new(&(p / "reply_policy"), config, shape));
        let material_fc = config
            .material_head
            .then(|| nn::linear(p / "material" / "fc", config.value_hidden as i64, 1, Default::default()));
        Ok(ResNet {
            config: config.clone(),
            shape,
            stem,
            blocks,
            policy,
            value_conv,
            value_fc1,
            value_fc2,
            reply_policy,
            material_fc,
        })
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Forward pass. `xs`: `[B, input_planes, H, W]` (or `[B, input_len]`), float.
    /// Returns `(policy logits [B, policy_len], wdl logits [B, 3])`. `train` selects
    /// batch statistics (and updates the running ones) versus the running statistics.
    /// The auxiliary heads are not computed ([`ResNet::forward_heads`] computes them).
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        let x = self.tower(xs, train);
        let hidden = self.value_hidden(&x, train);
        (self.policy.forward_t(&x, train), hidden.apply(&self.value_fc2))
    }

    /// [`ResNet::forward_t`] with the auxiliary heads the network has (training).
    pub fn forward_heads(&self, xs: &Tensor, train: bool) -> HeadOutputs {
        let x = self.tower(xs, train);
        let hidden = self.value_hidden(&x, train);
        HeadOutputs {
            policy: self.policy.forward_t(&x, train),
            wdl: hidden.apply(&self.value_fc2),
            reply_policy: self.reply_policy.as_ref().map(|h| h.forward_t(&x, train)),
            material: self.material_fc.as_ref().map(|fc| hidden.apply(fc).squeeze_dim(1).tanh()),
        }
    }

    /// The stem and the residual blocks.
    fn tower(&self, xs: &Tensor, train: bool) -> Tensor {
        let s = self.shape;
        let xs = xs.view([-1, s.input_planes as i64, s.board_height as i64, s.board_width as i64]);
        let mut x = self.stem.forward_t(&xs, train).relu();
        for block in &self.blocks {
            x = block.forward_t(&x, train);
        }
        x
    }

    /// The value head's hidden layer (after its ReLU).
    fn value_hidden(&self, x: &Tensor, train: bool) -> Tensor {
        let v = self.value_conv.forward_t(x, train).relu().flatten(1, -1);
        v.apply(&self.value_fc1).relu()
    }

    /// An inference-only copy with every batch norm folded into its convolution, with
    /// weights on `device` in `kind` (f32, f16 or bf16), run with `kernels`. Computed in
    /// f32. The auxiliary heads are left out (search reads the policy and the WDL only).
    pub fn fuse(&self, device: Device, kind: Kind, kernels: Kernels) -> Result<FusedNet, tch::TchError> {
        let at = Placement { device, kind, kernels };
        tch::no_grad(|| {
            let blocks = self
                .blocks
                .iter()
                .map(|b| {
                    Ok(FusedBlock {
                        c1: b.c1.fuse(at)?,
                        c2: b.c2.fuse(at)?,
                        gpool: match &b.gpool {
                            None => None,
                            Some(gp) => Some((gp.conv.fuse(at)?, to_dev(&gp.linear.ws, device, kind)?)),
                        },
                    })
                })
                .collect::<Result<Vec<_>, tch::TchError>>()?;
            let out_b = self.policy.out.bs.as_ref().expect("policy.out has a bias");
            Ok(FusedNet {
                shape: self.shape,
                device,
                kind,
                kernels,
                stem: self.stem.fuse(at)?,
                blocks,
                policy_conv: self.policy.conv.fuse(at)?,
                policy_out: FusedConv::new(
                    self.policy.out.ws.f_to_kind(Kind::Float)?,
                    out_b.f_to_kind(Kind::Float)?,
                    0,
                    at,
                )?,
                value_conv: self.value_conv.fuse(at)?,
                fc1: linear_params(&self.value_fc1, device, kind)?,
                fc2: linear_params(&self.value_fc2, device, kind)?,
            })
        })
    }
}

fn to_dev(t: &Tensor, device: Device, kind: Kind) -> Result<Tensor, tch::TchError> {
    t.f_detach()?.f_to_device(device)?.f_to_kind(kind)?.f_contiguous()
}

fn linear_params(l: &nn::Linear, device: Device, kind: Kind) -> Result<(Tensor, Tensor), tch::TchError> {
    let b = l.bs.as_ref().expect("linear layer with bias");
    Ok((to_dev(&l.ws, device, kind)?, to_dev(b, device, kind)?))
}

/// How an inference pass lays out its tensors and which kernels it calls. All three
/// compute the same function; they differ in rounding only (`model/tests/kernels.rs`
/// compares them on real positions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernels {
    /// NCHW tensors; one kernel for each convolution, bias, residual add and ReLU.
    Plain,
    /// NHWC memory ("channels last"), which cuDNN's tensor-core kernels for f16 and bf16
    /// read directly (in NCHW they transpose around every convolution).
    ChannelsLast,
    /// Channels last, and cuDNN's fused convolution + bias + ReLU and convolution + bias +
    /// residual + ReLU (two kernels a residual block where `Plain` launches seven).
    /// CUDA only: elsewhere the same as `ChannelsLast`.
    CudnnFused,
}

impl Kernels {
    /// The names `KOMA_KERNELS` and `koma bench nn --kernels` take.
    pub const NAMES: [&'static str; 3] = ["plain", "channels-last", "cudnn-fused"];

    /// `KOMA_KERNELS` when set (an escape hatch, and for benchmarks), else the fastest
    /// measured for the device (docs/performance.md): cuDNN's fused kernels on CUDA (2.4
    /// times plain's evaluations a second for b10c128 in f16 at batch 1,024 on an H200),
    /// channels last on the CPU (oneDNN: about 1.2 times plain's for the tiny presets at
    /// batches of 16 and 32).
    pub fn for_device(device: Device) -> Result<Kernels, UnknownKernels> {
        match std::env::var("KOMA_KERNELS") {
            Ok(name) if !name.is_empty() => name.parse(),
            _ => Ok(if device.is_cuda() { Kernels::CudnnFused } else { Kernels::ChannelsLast }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernels::Plain => Self::NAMES[0],
            Kernels::ChannelsLast => Self::NAMES[1],
            Kernels::CudnnFused => Self::NAMES[2],
        }
    }

    fn channels_last(self) -> bool {
        self != Kernels::Plain
    }
}

impl std::fmt::Display for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown kernels '{0}' (KOMA_KERNELS or --kernels: plain, channels-last or cudnn-fused)")]
pub struct UnknownKernels(String);

impl std::str::FromStr for Kernels {
    type Err = UnknownKernels;
    fn from_str(s: &str) -> Result<Kernels, UnknownKernels> {
        match s.trim().to_ascii_lowercase().as_str() {
            "plain" => Ok(Kernels::Plain),
            "channels-last" | "channels_last" | "nhwc" => Ok(Kernels::ChannelsLast),
            "cudnn-fused" | "cudnn_fused" | "fused" => Ok(Kernels::CudnnFused),
            _ => Err(UnknownKernels(s.chars().take(40).collect())),
        }
    }
}

/// Where an inference network's tensors live and how it runs them.
#[derive(Clone, Copy, Debug)]
struct Placement {
    device: Device,
    kind: Kind,
    kernels: Kernels,
}

/// `t` (`[N, C, H, W]`) with channels-last strides: the same values and shape, NHWC in
/// memory (tch has no memory-format argument; these strides are what libtorch reads as
/// channels last).
fn channels_last(t: &Tensor) -> Result<Tensor, tch::TchError> {
    t.f_permute([0i64, 2, 3, 1])?.f_contiguous()?.f_permute([0i64, 3, 1, 2])
}

/// A convolution with bias, batch norm already folded in.
#[derive(Debug)]
struct FusedConv {
    w: Tensor,
    b: Tensor,
    pad: i64,
    /// cuDNN's fused convolution + bias (+ residual) + ReLU.
    cudnn_fused: bool,
}

impl FusedConv {
    fn new(w: Tensor, b: Tensor, pad: i64, at: Placement) -> Result<Self, tch::TchError> {
        let mut w = to_dev(&w, at.device, at.kind)?;
        if at.kernels.channels_last() {
            w = channels_last(&w)?;
        }
        let cudnn_fused = at.kernels == Kernels::CudnnFused && at.device.is_cuda();
        Ok(FusedConv { w, b: to_dev(&b, at.device, at.kind)?, pad, cudnn_fused })
    }

    fn forward(&self, xs: &Tensor) -> Result<Tensor, tch::TchError> {
        xs.f_conv2d(&self.w, Some(&self.b), [1i64, 1], [self.pad, self.pad], [1i64, 1], 1)
    }

    /// `relu(conv(xs) + b)`.
    fn forward_relu(&self, xs: &Tensor) -> Result<Tensor, tch::TchError> {
        if self.cudnn_fused {
            return xs.f_cudnn_convolution_relu(&self.w, Some(&self.b), [1i64, 1], [self.pad, self.pad], [1i64, 1], 1);
        }
        self.forward(xs)?.f_relu()
    }

    /// `relu(conv(xs) + b + residual)`.
    fn forward_add_relu(&self, xs: &Tensor, residual: &Tensor) -> Result<Tensor, tch::TchError> {
        if self.cudnn_fused {
            let (stride, pad, dilation) = ([1i64, 1], [self.pad, self.pad], [1i64, 1]);
            return xs.f_cudnn_convolution_add_relu(&self.w, residual, 1.0, Some(&self.b), stride, pad, dilation, 1);
        }
        self.forward(xs)?.f_add(residual)?.f_relu()
    }
}

#[derive(Debug)]
struct FusedBlock {
    c1: FusedConv,
    c2: FusedConv,
    gpool: Option<(FusedConv, Tensor)>,
}

/// Inference form of a [`ResNet`] (batch norms folded, eval semantics, fixed device and
/// precision). Produced by [`ResNet::fuse`] / [`Net::fuse`]; used by
/// [`crate::TorchEvaluator`]. Holds plain tensors, independent of the `VarStore`.
#[derive(Debug)]
pub struct FusedNet {
    shape: NetShape,
    device: Device,
    kind: Kind,
    kernels: Kernels,
    stem: FusedConv,
    blocks: Vec<FusedBlock>,
    policy_conv: FusedConv,
    policy_out: FusedConv,
    value_conv: FusedConv,
    fc1: (Tensor, Tensor),
    fc2: (Tensor, Tensor),
}

impl FusedNet {
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    pub fn device(&self) -> Device {
        self.device
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// `xs` on this net's device and kind, `[B, planes, H, W]`. Returns (policy logits,
    /// wdl logits) in this net's kind, contiguous. Call under `tch::no_grad`.
    pub fn forward(&self, xs: &Tensor) -> Result<(Tensor, Tensor), tch::TchError> {
        let xs = if self.kernels.channels_last() { channels_last(xs)? } else { xs.shallow_clone() };
        let mut x = self.stem.forward_relu(&xs)?;
        for b in &self.blocks {
            let a = match &b.gpool {
                None => b.c1.forward_relu(&x)?,
                Some((conv, lw)) => {
                    let g = conv.forward_relu(&x)?;
                    let bias = global_pool(&g)?.f_linear(lw, None::<&Tensor>)?;
                    b.c1.forward(&x)?.f_add(&bias.f_unsqueeze(-1)?.f_unsqueeze(-1)?)?.f_relu()?
                }
            };
            x = b.c2.forward_add_relu(&a, &x)?;
        }
        // Flattening a channels-last map copies it into NCHW order: the policy's labels
        // and the value layer's weights read that order.
        let p = self.policy_out.forward(&self.policy_conv.forward_relu(&x)?)?;
        let policy = p.f_flatten(1, -1)?;
        let v = self.value_conv.forward_relu(&x)?.f_flatten(1, -1)?;
        let v = v.f_linear(&self.fc1.0, Some(&self.fc1.1))?.f_relu()?;
        let wdl = v.f_linear(&self.fc2.0, Some(&self.fc2.1))?;
        Ok((policy, wdl))
    }
}

/// Serialises seeded initialisation: `tch::manual_seed` sets a process-wide generator.
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// A network that owns its parameters (`VarStore`).
#[derive(Debug)]
pub struct Net {
    vs: nn::VarStore,
    model: ResNet,
}

impl Net {
    /// A freshly initialised network. Deterministic: the parameters are created on the CPU
    /// right after `tch::manual_seed(seed)` under a process-wide lock, then moved to
    /// `device`, so the same seed gives bit-identical weights on any device (for one
    /// libtorch version). This reseeds torch's global generator as a side effect.
    pub fn new(config: &NetConfig, shape: NetShape, seed: u64, device: Device) -> Result<Net, NetError> {
        config.validate()?;
        shape.validate()?;
        let mut vs = nn::VarStore::new(Device::Cpu);
        let model = {
            let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            tch::manual_seed(seed as i64);
            ResNet::new(&vs.root(), config, shape)?
        };
        if device != Device::Cpu {
            vs.set_device(device);
        }
        Ok(Net { vs, model })
    }

    pub fn config(&self) -> &NetConfig {
        &self.model.config
    }

    pub fn shape(&self) -> NetShape {
        self.model.shape
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    pub fn model(&self) -> &ResNet {
        &self.model
    }

    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// For optimisers (`nn::Adam::default().build(net.var_store(), lr)`) and device moves.
    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    /// Number of scalar parameters, trainable ones plus batch norm running statistics.
    pub fn parameter_count(&self) -> usize {
        self.vs.variables().values().map(|t| t.numel()).sum()
    }

    /// Sorted parameter names with their shapes: the checkpoint's table of contents.
    pub fn parameter_shapes(&self) -> Vec<(String, Vec<i64>)> {
        let mut v: Vec<_> = self.vs.variables().into_iter().map(|(k, t)| (k, t.size())).collect();
        v.sort();
        v
    }

    /// See [`ResNet::forward_t`].
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        self.model.forward_t(xs, train)
    }

    /// See [`ResNet::forward_heads`].
    pub fn forward_heads(&self, xs: &Tensor, train: bool) -> HeadOutputs {
        self.model.forward_heads(xs, train)
    }

    /// Evaluation-mode forward pass on host data: `inputs` holds `batch` encoded positions.
    /// Returns (policy logits, wdl logits) as f32 vectors. Convenience for tests and tools;
    /// evaluators use [`FusedNet`].
    pub fn forward_host(&self, inputs: &[f32], batch: usize) -> Result<(Vec<f32>, Vec<f32>), NetError> {
        let s = self.shape();
        if inputs.len() != batch * s.input_len() {
            return Err(NetError::InputLength {
                got: inputs.len(),
                expected: batch * s.input_len(),
                batch,
                per_position: s.input_len(),
            });
        }
        tch::no_grad(|| {
            let xs = Tensor::f_from_slice(inputs)?
                .f_view([batch as i64, s.input_planes as i64, s.board_height as i64, s.board_width as i64])?
                .f_to_device(self.device())?;
            let (p, v) = self.forward_t(&xs, false);
            let p = p.f_to_device(Device::Cpu)?.f_to_kind(Kind::Float)?.f_contiguous()?;
            let v = v.f_to_device(Device::Cpu)?.f_to_kind(Kind::Float)?.f_contiguous()?;
            let mut pv = vec![0f32; batch * s.policy_len()];
            let mut vv = vec![0f32; batch * WDL_LEN];
            let n = pv.len();
            p.f_copy_data(&mut pv, n)?;
            let n = vv.len();
            v.f_copy_data(&mut vv, n)?;
            Ok((pv, vv))
        })
    }

    /// See [`ResNet::fuse`].
    pub fn fuse(&self, device: Device, kind: Kind, kernels: Kernels) -> Result<FusedNet, tch::TchError> {
        self.model.fuse(device, kind, kernels)
    }
}
