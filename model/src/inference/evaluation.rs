//! The results of a batch of evaluations, held in host tensors so that an evaluator can
//! hand over what the device wrote (one copy out, in the inference precision) instead of
//! converting and copying it again.

use half::{bf16, f16};
use tch::{Device, Kind, Tensor};

use crate::network::shape::WDL_LEN;

/// One position's policy logits, in the precision they were computed in. Reading a logit
/// converts it to f32; a search reads only the logits of the legal moves.
#[derive(Clone, Copy, Debug)]
pub enum Logits<'a> {
    F32(&'a [f32]),
    F16(&'a [f16]),
    Bf16(&'a [bf16]),
}

impl<'a> Logits<'a> {
    pub fn len(&self) -> usize {
        match self {
            Logits::F32(s) => s.len(),
            Logits::F16(s) => s.len(),
            Logits::Bf16(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Logit `i` as f32, `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<f32> {
        match self {
            Logits::F32(s) => s.get(i).copied(),
            Logits::F16(s) => s.get(i).map(|x| x.to_f32()),
            Logits::Bf16(s) => s.get(i).map(|x| x.to_f32()),
        }
    }

    pub fn to_vec(&self) -> Vec<f32> {
        (0..self.len()).map(|i| self.get(i).expect("in range")).collect()
    }
}

impl<'a> From<&'a [f32]> for Logits<'a> {
    fn from(s: &'a [f32]) -> Self {
        Logits::F32(s)
    }
}

impl<'a> From<&'a Vec<f32>> for Logits<'a> {
    fn from(s: &'a Vec<f32>) -> Self {
        Logits::F32(s)
    }
}

impl<'a, const N: usize> From<&'a [f32; N]> for Logits<'a> {
    fn from(s: &'a [f32; N]) -> Self {
        Logits::F32(s)
    }
}

/// A contiguous CPU tensor and whether this [`Evaluation`] owns it alone (then it may be
/// written and reused) or shares it (a view of an evaluator's output).
struct HostTensor {
    tensor: Tensor,
    owned: bool,
}

impl HostTensor {
    fn empty() -> HostTensor {
        HostTensor { tensor: Tensor::zeros([0], (Kind::Float, Device::Cpu)), owned: true }
    }

    /// An owned f32 buffer of at least `len` values, reusing the current one if it can.
    fn ensure_f32(&mut self, len: usize) {
        if !(self.owned && self.tensor.kind() == Kind::Float && self.tensor.numel() >= len) {
            self.tensor = Tensor::zeros([len as i64], (Kind::Float, Device::Cpu));
            self.owned = true;
        }
    }

    /// The first `len` values as `T` (the tensor's kind must be `T`'s).
    fn slice<T>(&self, len: usize) -> &[T] {
        if len == 0 {
            return &[];
        }
        debug_assert!(self.tensor.numel() >= len && self.tensor.is_contiguous());
        // SAFETY: a contiguous CPU tensor of at least `len` elements of type T; it lives
        // as long as `self`, and is written only through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.tensor.data_ptr() as *const T, len) }
    }

    fn slice_mut(&mut self, len: usize) -> &mut [f32] {
        assert!(self.owned && self.tensor.kind() == Kind::Float, "writing a shared or non-f32 buffer");
        if len == 0 {
            return &mut [];
        }
        // SAFETY: owned (no other tensor shares the storage), contiguous f32, >= len.
        unsafe { std::slice::from_raw_parts_mut(self.tensor.data_ptr() as *mut f32, len) }
    }
}

/// Results for a batch of positions: policy logits (`batch x policy_len`, unnormalised;
/// the caller masks illegal moves and applies the softmax) and WDL probabilities
/// (`batch x 3`: win, draw, loss for the side to move; each row sums to 1, f32).
///
/// The logits are f32 unless the holder asked for the evaluator's own precision
/// ([`Evaluation::accept_reduced_precision`]): then a network run in f16 or bf16 hands
/// them over as such (half the bytes from the device) and they are read with
/// [`Evaluation::logits`]. Buffers are reused: [`Evaluation::resize`] keeps the
/// allocation when it is big enough.
pub struct Evaluation {
    batch: usize,
    policy_len: usize,
    policy: HostTensor,
    wdl: HostTensor,
    reduced_precision: bool,
}

// SAFETY: the tensors are CPU tensors read through `&self` (plain memory reads) and
// written only through `&mut self`; libtorch's tensor handles are safe to read from
// several threads.
unsafe impl Sync for Evaluation {}

impl Default for Evaluation {
    fn default() -> Self {
        Evaluation {
            batch: 0,
            policy_len: 0,
            policy: HostTensor::empty(),
            wdl: HostTensor::empty(),
            reduced_precision: false,
        }
    }
}

impl Clone for Evaluation {
    fn clone(&self) -> Self {
        let copy = |h: &HostTensor| HostTensor { tensor: h.tensor.copy(), owned: true };
        Evaluation {
            batch: self.batch,
            policy_len: self.policy_len,
            policy: copy(&self.policy),
            wdl: copy(&self.wdl),
            reduced_precision: self.reduced_precision,
        }
    }
}

impl PartialEq for Evaluation {
    fn eq(&self, other: &Self) -> bool {
        self.batch == other.batch
            && self.policy_len == other.policy_len
            && (0..self.batch).all(|i| self.logits(i).to_vec() == other.logits(i).to_vec())
            && self.wdl_all() == other.wdl_all()
    }
}

impl std::fmt::Debug for Evaluation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluation")
            .field("batch", &self.batch)
            .field("policy_len", &self.policy_len)
            .field("policy_kind", &self.policy_kind())
            .finish()
    }
}

impl Evaluation {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(batch: usize, policy_len: usize) -> Self {
        let mut e = Evaluation::default();
        e.resize(batch, policy_len);
        e.batch = 0;
        e
    }

    /// Lets an evaluator hand over the logits in its own precision (f16, bf16) rather
    /// than converting them to f32; read them with [`Evaluation::logits`] then.
    pub fn accept_reduced_precision(&mut self, yes: bool) {
        self.reduced_precision = yes;
    }

    /// Whether logits may come in the evaluator's precision.
    pub fn reduced_precision_accepted(&self) -> bool {
        self.reduced_precision
    }

    /// Sets the size with f32 buffers of its own; reallocates only when the capacity is
    /// too small (or the buffers were an evaluator's). Contents are unspecified afterwards
    /// (to be overwritten through [`Evaluation::buffers_mut`]).
    pub fn resize(&mut self, batch: usize, policy_len: usize) {
        self.batch = batch;
        self.policy_len = policy_len;
        self.policy.ensure_f32(batch * policy_len);
        self.wdl.ensure_f32(batch * WDL_LEN);
    }

    /// Takes over an evaluator's results: `policy` (`batch x policy_len` logits, f32, f16
    /// or bf16) and `wdl` (`batch x 3`, f32), both contiguous CPU tensors, kept as they
    /// are (no copy).
    pub fn set_tensors(&mut self, batch: usize, policy_len: usize, policy: Tensor, wdl: Tensor) {
        debug_assert_eq!(policy.device(), Device::Cpu);
        debug_assert!(policy.is_contiguous() && wdl.is_contiguous());
        debug_assert_eq!(wdl.kind(), Kind::Float);
        debug_assert!(policy.numel() >= batch * policy_len && wdl.numel() >= batch * WDL_LEN);
        self.batch = batch;
        self.policy_len = policy_len;
        self.policy = HostTensor { tensor: policy, owned: false };
        self.wdl = HostTensor { tensor: wdl, owned: false };
    }

    pub fn batch(&self) -> usize {
        self.batch
    }

    pub fn policy_len(&self) -> usize {
        self.policy_len
    }

    /// The precision the logits are held in (`Float`, `Half` or `BFloat16`).
    pub fn policy_kind(&self) -> Kind {
        self.policy.tensor.kind()
    }

    /// Policy logits of position `i`, in whatever precision they are held.
    #[inline]
    pub fn logits(&self, i: usize) -> Logits<'_> {
        let pl = self.policy_len;
        let range = i * pl..(i + 1) * pl;
        let len = self.batch * pl;
        assert!(i < self.batch, "position {i} of an evaluation of {}", self.batch);
        match self.policy.tensor.kind() {
            Kind::Half => Logits::F16(&self.policy.slice::<f16>(len)[range]),
            Kind::BFloat16 => Logits::Bf16(&self.policy.slice::<bf16>(len)[range]),
            _ => Logits::F32(&self.policy.slice::<f32>(len)[range]),
        }
    }

    /// Policy logits of position `i` as f32. Panics if they are held in reduced
    /// precision (only when [`Evaluation::accept_reduced_precision`] was set): use
    /// [`Evaluation::logits`] there.
    pub fn policy(&self, i: usize) -> &[f32] {
        &self.policy_all()[i * self.policy_len..(i + 1) * self.policy_len]
    }

    /// (win, draw, loss) probabilities of position `i`.
    pub fn wdl(&self, i: usize) -> [f32; 3] {
        let w = &self.wdl_all()[i * WDL_LEN..(i + 1) * WDL_LEN];
        [w[0], w[1], w[2]]
    }

    /// Expected score of position `i` for the side to move in [-1, 1]: win - loss.
    pub fn value(&self, i: usize) -> f32 {
        let [w, _, l] = self.wdl(i);
        w - l
    }

    /// Every logit, f32 (panics if held in reduced precision, see [`Evaluation::policy`]).
    pub fn policy_all(&self) -> &[f32] {
        assert_eq!(
            self.policy.tensor.kind(),
            Kind::Float,
            "the logits are held in reduced precision: read them with Evaluation::logits"
        );
        self.policy.slice(self.batch * self.policy_len)
    }

    pub fn wdl_all(&self) -> &[f32] {
        self.wdl.slice(self.batch * WDL_LEN)
    }

    /// Mutable (policy, wdl) f32 buffers, for [`crate::Evaluator`] implementations. Call
    /// [`Evaluation::resize`] first.
    pub fn buffers_mut(&mut self) -> (&mut [f32], &mut [f32]) {
        let (pl, wl) = (self.batch * self.policy_len, self.batch * WDL_LEN);
        (self.policy.slice_mut(pl), self.wdl.slice_mut(wl))
    }

    /// Copies positions `src_start..src_start + n` of `src` (f32) to `dst_start..` of
    /// `self` (resized before).
    pub(crate) fn copy_range_from(&mut self, dst_start: usize, src: &Evaluation, src_start: usize, n: usize) {
        let pl = self.policy_len;
        debug_assert_eq!(pl, src.policy_len);
        let (policy, wdl) = self.buffers_mut();
        policy[dst_start * pl..(dst_start + n) * pl]
            .copy_from_slice(&src.policy_all()[src_start * pl..(src_start + n) * pl]);
        wdl[dst_start * WDL_LEN..(dst_start + n) * WDL_LEN]
            .copy_from_slice(&src.wdl_all()[src_start * WDL_LEN..(src_start + n) * WDL_LEN]);
    }
}
