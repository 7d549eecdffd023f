//! The results of a batch of evaluations, held in host memory of their own or of the
//! backend's, so that an evaluator can hand over what the device wrote (one copy out, in the inference precision) instead of
//! converting and copying it again.

use std::sync::Arc;

use half::{bf16, f16};

use super::planes::PlaneKind;
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

/// Results that stay in a backend's own host memory, handed over without a copy (a CPU
/// tensor of libtorch's forward pass). Never written again once handed over.
pub trait SharedOutput: Send + Sync {
    /// The number type of the values.
    fn kind(&self) -> PlaneKind;
    /// The first value; valid for [`SharedOutput::len`] values as long as `self` lives.
    fn as_ptr(&self) -> *const u8;
    /// Number of values.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An [`Evaluation`]'s buffer: its own f32 values (written and reused), or a backend's.
#[derive(Clone)]
enum HostValues {
    Owned(Vec<f32>),
    Shared(Arc<dyn SharedOutput>),
}

impl HostValues {
    fn kind(&self) -> PlaneKind {
        match self {
            HostValues::Owned(_) => PlaneKind::F32,
            HostValues::Shared(s) => s.kind(),
        }
    }

    /// An owned f32 buffer of at least `len` values, reusing the current one if it can.
    fn ensure_f32(&mut self, len: usize) {
        match self {
            HostValues::Owned(v) if v.len() >= len => {}
            HostValues::Owned(v) => v.resize(len, 0.0),
            HostValues::Shared(_) => *self = HostValues::Owned(vec![0.0; len]),
        }
    }

    /// The first `len` values as `T` (the buffer's kind must be `T`'s).
    fn slice<T>(&self, len: usize) -> &[T] {
        if len == 0 {
            return &[];
        }
        match self {
            HostValues::Owned(v) => {
                assert!(std::mem::size_of::<T>() == 4 && v.len() >= len);
                // SAFETY: f32 values (T is f32: the callers match on the kind), >= len.
                unsafe { std::slice::from_raw_parts(v.as_ptr() as *const T, len) }
            }
            HostValues::Shared(s) => {
                assert!(s.len() >= len, "a shared output of {} values read as {len}", s.len());
                // SAFETY: the backend's contiguous host memory of at least `len` values of
                // the kind it reports (the callers match on it), never written again, alive
                // while the Arc is.
                unsafe { std::slice::from_raw_parts(s.as_ptr() as *const T, len) }
            }
        }
    }

    fn slice_mut(&mut self, len: usize) -> &mut [f32] {
        match self {
            HostValues::Owned(v) => &mut v[..len],
            HostValues::Shared(_) => panic!("writing a backend's shared output"),
        }
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
#[derive(Clone)]
pub struct Evaluation {
    batch: usize,
    policy_len: usize,
    policy: HostValues,
    wdl: HostValues,
    reduced_precision: bool,
}

impl Default for Evaluation {
    fn default() -> Self {
        Evaluation {
            batch: 0,
            policy_len: 0,
            policy: HostValues::Owned(Vec::new()),
            wdl: HostValues::Owned(Vec::new()),
            reduced_precision: false,
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
    /// or bf16) and `wdl` (`batch x 3`, f32), kept where they are (no copy).
    pub fn set_shared(
        &mut self,
        batch: usize,
        policy_len: usize,
        policy: Arc<dyn SharedOutput>,
        wdl: Arc<dyn SharedOutput>,
    ) {
        assert_eq!(wdl.kind(), PlaneKind::F32, "WDL values are f32");
        assert!(policy.len() >= batch * policy_len && wdl.len() >= batch * WDL_LEN);
        self.batch = batch;
        self.policy_len = policy_len;
        self.policy = HostValues::Shared(policy);
        self.wdl = HostValues::Shared(wdl);
    }

    pub fn batch(&self) -> usize {
        self.batch
    }

    pub fn policy_len(&self) -> usize {
        self.policy_len
    }

    /// The precision the logits are held in.
    pub fn policy_kind(&self) -> PlaneKind {
        self.policy.kind()
    }

    /// Policy logits of position `i`, in whatever precision they are held.
    #[inline]
    pub fn logits(&self, i: usize) -> Logits<'_> {
        let pl = self.policy_len;
        let range = i * pl..(i + 1) * pl;
        let len = self.batch * pl;
        assert!(i < self.batch, "position {i} of an evaluation of {}", self.batch);
        match self.policy.kind() {
            PlaneKind::F16 => Logits::F16(&self.policy.slice::<f16>(len)[range]),
            PlaneKind::Bf16 => Logits::Bf16(&self.policy.slice::<bf16>(len)[range]),
            PlaneKind::F32 => Logits::F32(&self.policy.slice::<f32>(len)[range]),
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
            self.policy.kind(),
            PlaneKind::F32,
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
    pub fn copy_range_from(&mut self, dst_start: usize, src: &Evaluation, src_start: usize, n: usize) {
        let pl = self.policy_len;
        debug_assert_eq!(pl, src.policy_len);
        let (policy, wdl) = self.buffers_mut();
        policy[dst_start * pl..(dst_start + n) * pl]
            .copy_from_slice(&src.policy_all()[src_start * pl..(src_start + n) * pl]);
        wdl[dst_start * WDL_LEN..(dst_start + n) * WDL_LEN]
            .copy_from_slice(&src.wdl_all()[src_start * WDL_LEN..(src_start + n) * WDL_LEN]);
    }
}
