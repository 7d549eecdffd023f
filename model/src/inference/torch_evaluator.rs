//! libtorch's evaluator: a [`Net`] fused for inference on a torch device (the CPU or
//! CUDA), behind the [`Evaluator`] interface of the `nn` crate.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use nn::{
    CopyCounters, CopyStats, EvalError, EvalPart, Evaluation, Evaluator, HostBlock, PinnedMemory, PlaneKind,
    SharedOutput,
};
use tch::{Device, Kind, Tensor};

use super::device::Precision;
use crate::network::net::{FusedNet, Kernels, Net};
use nn::{check_input, NetShape, WDL_LEN};

/// libtorch's errors as the evaluator interface's.
pub(crate) fn backend_error(e: tch::TchError) -> EvalError {
    EvalError::Backend(format!("torch: {e}"))
}

/// The torch type of plane kind `kind`.
pub fn torch_kind(kind: PlaneKind) -> Kind {
    match kind {
        PlaneKind::F32 => Kind::Float,
        PlaneKind::F16 => Kind::Half,
        PlaneKind::Bf16 => Kind::BFloat16,
    }
}

/// The planes a network of torch type `kind` takes without losing a bit.
pub fn plane_kind_for(kind: Kind) -> PlaneKind {
    match kind {
        Kind::Half => PlaneKind::F16,
        Kind::BFloat16 => PlaneKind::Bf16,
        _ => PlaneKind::F32,
    }
}

/// A contiguous CPU tensor handed to an [`nn::Evaluation`] without a copy.
struct TensorOutput(Tensor);

// SAFETY: a CPU tensor that nobody writes once handed over; libtorch's tensor handles
// may be read from several threads.
unsafe impl Send for TensorOutput {}
unsafe impl Sync for TensorOutput {}

impl SharedOutput for TensorOutput {
    fn kind(&self) -> PlaneKind {
        plane_kind_for(self.0.kind())
    }
    fn as_ptr(&self) -> *const u8 {
        self.0.data_ptr() as *const u8
    }
    fn len(&self) -> usize {
        self.0.numel()
    }
}

/// libtorch's pinned allocator for a CUDA device.
struct PinnedFor(Device);

/// A block of libtorch-allocated host memory (pinned when it could be).
struct PinnedBlock(Tensor);

// SAFETY: owned by one host buffer alone, read and written through it as plain memory.
unsafe impl Send for PinnedBlock {}
unsafe impl Sync for PinnedBlock {}

impl HostBlock for PinnedBlock {
    fn as_mut_ptr(&self) -> *mut u8 {
        self.0.data_ptr() as *mut u8
    }
}

impl PinnedMemory for PinnedFor {
    fn allocate(&self, bytes: usize) -> Box<dyn HostBlock> {
        let fresh = Tensor::zeros([bytes as i64], (Kind::Uint8, Device::Cpu));
        // Pinning can fail (no driver memory left): plain memory still works.
        Box::new(PinnedBlock(fresh.f_pin_memory(self.0).unwrap_or(fresh)))
    }
}

/// A network on a torch device, in inference form: batch norms folded into the
/// convolutions, evaluation semantics, no autograd, weights in the chosen precision
/// (by default f16 on CUDA, f32 on the CPU).
///
/// The data path is one copy each way. In: each request's planes are copied once,
/// straight from the producer's buffer (page-locked when the batcher allocated it for
/// CUDA; in the network's precision when that is f16 or bf16, [`plane_kind_for`],
/// else f32) into the batch's input (on the CPU a reused tensor in the network's precision;
/// on CUDA a non-blocking transfer per request, joined and converted on the device, the
/// batch padded to a fixed size so that cuDNN's benchmark mode tunes a few shapes only).
/// Out: each request gets its rows of the logits in the network's precision when it
/// accepts that ([`Evaluation::accept_reduced_precision`]), else f32, and of the WDL
/// (softmax in f32): on the CPU views of the forward pass's own output (no copy), on
/// CUDA one non-blocking transfer into page-locked memory, then one wait for the stream.
/// [`Evaluator::copy_stats`] counts the bytes of every copy.
///
/// libtorch modules are not `Sync` in tch's types; a mutex serialises forward passes
/// (uncontended in self-play: one [`crate::Batcher`] thread per evaluator). An engine's
/// search threads share one evaluator per device copy (`Device cuda,cuda` holds two).
pub struct TorchEvaluator {
    state: Mutex<Inference>,
    shape: NetShape,
    device: Device,
    kind: Kind,
    kernels: Kernels,
    copies: CopyCounters,
}

struct Inference {
    net: FusedNet,
    /// CPU only: the reused batch input, in the network's precision.
    input: Tensor,
}

/// The batch size a CUDA forward pass is padded to: powers of two up to 128, then
/// multiples of 128, so that cuDNN's benchmark mode meets few distinct shapes.
pub fn padded_batch(n: usize) -> usize {
    if n <= 128 {
        n.max(1).next_power_of_two()
    } else {
        n.div_ceil(128) * 128
    }
}

fn kind_bytes(kind: Kind) -> usize {
    match kind {
        Kind::Half | Kind::BFloat16 => 2,
        Kind::Uint8 | Kind::Int8 | Kind::Bool => 1,
        Kind::Double | Kind::Int64 => 8,
        _ => 4,
    }
}

impl TorchEvaluator {
    /// Snapshot of `net`'s current weights on `device` in `precision` (`[train]
    /// precision` for self-play). Later changes to `net` (training) do not affect this
    /// evaluator; build a new one and hand it to the batcher.
    ///
    /// The kernels are [`Kernels::for_device`]'s; cuDNN's fused kernels that fail a first
    /// forward pass (an old cuDNN, an unsupported GPU) give way to channels last, with a
    /// warning (`log`).
    pub fn new(net: &Net, device: Device, precision: Precision) -> Result<Self, EvalError> {
        let kernels = Kernels::for_device(device).map_err(|e| EvalError::Backend(e.to_string()))?;
        match Self::with_kernels(net, device, precision, kernels) {
            Err(EvalError::Backend(e)) if kernels == Kernels::CudnnFused && device.is_cuda() => {
                log::warn!("warning: cuDNN's fused kernels failed ({e}); using channels-last kernels");
                Self::with_kernels(net, device, precision, Kernels::ChannelsLast)
            }
            result => result,
        }
    }

    /// [`TorchEvaluator::new`] with the given kernels (`koma bench nn --kernels`), tried
    /// once on a batch of one.
    pub fn with_kernels(net: &Net, device: Device, precision: Precision, kernels: Kernels) -> Result<Self, EvalError> {
        crate::torch_link::anchor();
        let kind = precision.kind_for(device);
        if device.is_cuda() {
            tch::Cuda::cudnn_set_benchmark(true);
        }
        let fused = net.fuse(device, kind, kernels).map_err(backend_error)?;
        if device.is_cuda() {
            let s = net.shape();
            let dims = [1i64, s.input_planes as i64, s.board_height as i64, s.board_width as i64];
            let _ = tch::no_grad(|| fused.forward(&Tensor::f_zeros(dims, (kind, device))?)).map_err(backend_error)?;
        }
        let input = Tensor::zeros([0], (kind, Device::Cpu));
        Ok(TorchEvaluator {
            state: Mutex::new(Inference { net: fused, input }),
            shape: net.shape(),
            device,
            kind,
            kernels,
            copies: CopyCounters::default(),
        })
    }

    pub fn device(&self) -> Device {
        self.device
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn kernels(&self) -> Kernels {
        self.kernels
    }

    /// Forward pass only, on inputs already on the device in the network's precision
    /// (`[B, planes, H, W]`), waiting for the device to finish: the device time of a
    /// batch, for `koma bench nn`.
    pub fn forward_on_device(&self, xs: &Tensor) -> Result<(), EvalError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| -> Result<(), tch::TchError> {
            let (policy, wdl) = st.net.forward(xs)?;
            let wdl = wdl.f_softmax(-1, Kind::Float)?;
            if let Device::Cuda(i) = self.device {
                tch::Cuda::synchronize(i as i64);
            }
            drop((policy, wdl));
            Ok(())
        })
        .map_err(backend_error)
    }

    /// The parts' inputs as one `[B, planes, H, W]` tensor on the device in the network's
    /// precision (B padded on CUDA), each input value copied once.
    fn stage_inputs(&self, input: &mut Tensor, parts: &[EvalPart<'_>], total: usize) -> Result<Tensor, tch::TchError> {
        let s = self.shape;
        let len = s.input_len();
        let rows = if self.device.is_cuda() { padded_batch(total) } else { total };
        let dims = [rows as i64, s.input_planes as i64, s.board_height as i64, s.board_width as i64];
        // SAFETY (both branches): `from_blob` views a producer's buffer that outlives this
        // call; on CUDA the transfers finish before `evaluate_parts` returns (it waits for
        // the stream).
        let view = |p: &EvalPart<'_>| unsafe {
            let kind = p.inputs.kind();
            Tensor::f_from_blob(p.inputs.as_ptr(), &[p.inputs.len() as i64], &[1], torch_kind(kind), Device::Cpu)
        };
        let mut offset = 0i64;
        if self.device.is_cuda() {
            let mut pieces = Vec::with_capacity(parts.len() + 1);
            for p in parts.iter().filter(|p| p.n > 0) {
                // In the producer's kind: the conversion, if any, runs on the device.
                let kind = torch_kind(p.inputs.kind());
                pieces.push(view(p)?.f_to_device_(self.device, kind, true, false)?);
                CopyCounters::add(&self.copies.input_bytes_copied, p.inputs.bytes());
            }
            if rows > total {
                pieces.push(Tensor::f_zeros([((rows - total) * len) as i64], (self.kind, self.device))?);
            }
            let pieces: Vec<Tensor> = pieces.iter().map(|t| t.f_to_kind(self.kind)).collect::<Result<_, _>>()?;
            let flat =
                if pieces.len() == 1 { pieces.into_iter().next().expect("one") } else { Tensor::f_cat(&pieces, 0)? };
            return Ok(flat.f_view(dims)?);
        }
        if input.numel() < total * len {
            *input = Tensor::f_zeros([(total * len) as i64], (self.kind, Device::Cpu))?;
        }
        for p in parts.iter().filter(|p| p.n > 0) {
            let n = p.inputs.len() as i64;
            input.f_narrow(0, offset, n)?.f_copy_(&view(p)?)?;
            CopyCounters::add(&self.copies.input_bytes_copied, p.inputs.bytes());
            offset += n;
        }
        Ok(input.f_narrow(0, 0, (total * len) as i64)?.f_view(dims)?)
    }

    /// Hands each part its rows of the results (see the type's documentation).
    fn hand_out(&self, policy: &Tensor, wdl: &Tensor, parts: &mut [EvalPart<'_>]) -> Result<(), tch::TchError> {
        let pl = self.shape.policy_len();
        let wdl = wdl.f_softmax(-1, Kind::Float)?;
        let cuda = self.device.is_cuda();
        let last = parts.iter().rposition(|p| p.n > 0);
        let mut offset = 0i64;
        for (i, p) in parts.iter_mut().enumerate() {
            if p.n == 0 {
                p.out.resize(0, pl);
                continue;
            }
            let n = p.n as i64;
            let want = if p.out.reduced_precision_accepted() { self.kind } else { Kind::Float };
            let mut rows = policy.f_narrow(0, offset, n)?;
            let mut values = wdl.f_narrow(0, offset, n)?;
            let bytes = (p.n * pl * kind_bytes(want), p.n * WDL_LEN * 4);
            if cuda {
                rows = rows.f_to_device_(Device::Cpu, want, true, false)?;
                // The last transfer blocks: it waits for the stream, so every transfer
                // before it (and the inputs' transfers) has finished.
                values = values.f_to_device_(Device::Cpu, Kind::Float, Some(i) != last, false)?;
                CopyCounters::add(&self.copies.output_bytes_copied, bytes.0 + bytes.1);
            } else {
                if rows.kind() != want || !rows.is_contiguous() {
                    rows = rows.f_to_kind(want)?.f_contiguous()?;
                    CopyCounters::add(&self.copies.output_bytes_copied, bytes.0);
                }
                if !values.is_contiguous() {
                    values = values.f_contiguous()?;
                    CopyCounters::add(&self.copies.output_bytes_copied, bytes.1);
                }
            }
            CopyCounters::add(&self.copies.output_bytes, bytes.0 + bytes.1);
            p.out.set_shared(p.n, pl, Arc::new(TensorOutput(rows)), Arc::new(TensorOutput(values)));
            offset += n;
        }
        Ok(())
    }
}

impl Evaluator for TorchEvaluator {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        self.evaluate_parts(&mut [EvalPart { inputs: inputs.into(), n: batch, out }])
    }

    fn evaluate_parts(&self, parts: &mut [EvalPart<'_>]) -> Result<(), EvalError> {
        for p in parts.iter() {
            check_input(&self.shape, p.inputs, p.n)?;
        }
        let total: usize = parts.iter().map(|p| p.n).sum();
        if total == 0 {
            for p in parts.iter_mut() {
                p.out.resize(0, self.shape.policy_len());
            }
            return Ok(());
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Inference { net, input } = &mut *st;
        let result = tch::no_grad(|| -> Result<(), tch::TchError> {
            let xs = self.stage_inputs(input, parts, total)?;
            let (policy, wdl) = net.forward(&xs)?;
            self.hand_out(&policy, &wdl, parts)
        })
        .map_err(backend_error);
        if result.is_err() {
            if let Device::Cuda(i) = self.device {
                // No transfer from a producer's buffer may outlive this call.
                tch::Cuda::synchronize(i as i64);
            }
        }
        let c = &self.copies;
        c.batches.fetch_add(1, Ordering::Relaxed);
        c.parts.fetch_add(parts.len() as u64, Ordering::Relaxed);
        CopyCounters::add(&c.input_bytes, parts.iter().map(|p| p.inputs.bytes()).sum());
        result
    }

    fn pinned_memory(&self) -> Option<Arc<dyn PinnedMemory>> {
        self.device.is_cuda().then(|| Arc::new(PinnedFor(self.device)) as Arc<dyn PinnedMemory>)
    }

    fn input_kind(&self) -> PlaneKind {
        plane_kind_for(self.kind)
    }

    fn copy_stats(&self) -> Option<CopyStats> {
        Some(self.copies.snapshot())
    }

    fn describe(&self) -> String {
        format!("torch {:?} {:?} ({})", self.device, self.kind, self.shape)
    }
}
