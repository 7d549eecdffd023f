//! A producer's reusable input buffer, in the [`PlaneKind`] its evaluator takes: plain
//! memory, or page-locked (pinned) memory when its batches go to a CUDA device, so that
//! the transfer is one DMA that need not block the host.

use std::sync::Arc;

use half::{bf16, f16};

use super::planes::{PlaneKind, Planes, PlanesRef};

/// A backend's source of page-locked host memory (libtorch's pinned allocator, for a CUDA
/// device): [`crate::Evaluator::pinned_memory`] hands it to the batcher that feeds it.
pub trait PinnedMemory: Send + Sync {
    /// At least `bytes` bytes, aligned for any plane kind; plain memory when pinning fails
    /// (no driver memory left), which still works, only slower.
    fn allocate(&self, bytes: usize) -> Box<dyn HostBlock>;
}

/// A block of host memory owned by whoever holds it.
pub trait HostBlock: Send + Sync {
    fn as_mut_ptr(&self) -> *mut u8;
}

/// Growable buffer of `len` plane values of one kind; its contents are unspecified after
/// growing.
pub struct HostBuffer {
    storage: Storage,
    kind: PlaneKind,
    len: usize,
    /// Names the memory the values are in: a new one whenever it moves or is replaced.
    storage_id: u64,
}

/// A storage id not given out before in this process.
fn new_storage_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

enum Storage {
    /// Words, so that every plane kind is aligned.
    Plain(Vec<u32>),
    /// `bytes` bytes from a backend's pinned allocator (none before the first resize).
    Pinned { block: Option<Box<dyn HostBlock>>, bytes: usize, memory: Arc<dyn PinnedMemory> },
}

impl Default for HostBuffer {
    fn default() -> Self {
        HostBuffer { storage: Storage::Plain(Vec::new()), kind: PlaneKind::F32, len: 0, storage_id: new_storage_id() }
    }
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer")
            .field("len", &self.len)
            .field("kind", &self.kind)
            .field("pinned", &self.is_pinned())
            .finish()
    }
}

impl HostBuffer {
    /// A buffer of `kind` values, in pinned memory from `pinned` when given.
    pub fn new(pinned: Option<Arc<dyn PinnedMemory>>, kind: PlaneKind) -> HostBuffer {
        let storage = match pinned {
            Some(memory) => Storage::Pinned { block: None, bytes: 0, memory },
            None => Storage::Plain(Vec::new()),
        };
        HostBuffer { storage, kind, len: 0, storage_id: new_storage_id() }
    }

    pub fn is_pinned(&self) -> bool {
        matches!(self.storage, Storage::Pinned { .. })
    }

    pub fn kind(&self) -> PlaneKind {
        self.kind
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Names the memory the values are in: the same id as before means that the values
    /// written then are still there (the buffer neither moved nor was replaced).
    pub fn storage_id(&self) -> u64 {
        self.storage_id
    }

    /// Sets the length in values, keeping the allocation when it is big enough.
    pub fn resize(&mut self, len: usize) {
        let need = len * self.kind.bytes();
        let moved = match &mut self.storage {
            Storage::Plain(v) => {
                let before = v.as_ptr();
                v.resize(need.div_ceil(4), 0);
                v.as_ptr() != before
            }
            Storage::Pinned { block, bytes, memory } => {
                let replace = *bytes < need || block.is_none();
                if replace {
                    *block = Some(memory.allocate(need.max(1)));
                    *bytes = need;
                }
                replace
            }
        };
        if moved {
            self.storage_id = new_storage_id();
        }
        self.len = len;
    }

    /// Shrinks the length (the positions actually written).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    fn base(&self) -> *const u8 {
        match &self.storage {
            Storage::Plain(v) => v.as_ptr() as *const u8,
            Storage::Pinned { block, .. } => block.as_ref().map_or(std::ptr::null(), |b| b.as_mut_ptr() as *const u8),
        }
    }

    /// The values written, in the buffer's kind.
    pub fn planes(&self) -> PlanesRef<'_> {
        if self.len == 0 {
            return empty(self.kind);
        }
        let (p, n) = (self.base(), self.len);
        // SAFETY: `resize` made the storage hold at least `len` values of `kind`, aligned
        // (words, or a backend's block), owned here and borrowed with `self`.
        unsafe {
            match self.kind {
                PlaneKind::F32 => PlanesRef::F32(std::slice::from_raw_parts(p as *const f32, n)),
                PlaneKind::F16 => PlanesRef::F16(std::slice::from_raw_parts(p as *const f16, n)),
                PlaneKind::Bf16 => PlanesRef::Bf16(std::slice::from_raw_parts(p as *const bf16, n)),
            }
        }
    }

    /// The values to write, in the buffer's kind.
    pub fn planes_mut(&mut self) -> Planes<'_> {
        if self.len == 0 {
            return match self.kind {
                PlaneKind::F32 => Planes::F32(&mut []),
                PlaneKind::F16 => Planes::F16(&mut []),
                PlaneKind::Bf16 => Planes::Bf16(&mut []),
            };
        }
        let (p, n) = (self.base() as *mut u8, self.len);
        // SAFETY: as in `planes`, and `&mut self` makes the access exclusive.
        unsafe {
            match self.kind {
                PlaneKind::F32 => Planes::F32(std::slice::from_raw_parts_mut(p as *mut f32, n)),
                PlaneKind::F16 => Planes::F16(std::slice::from_raw_parts_mut(p as *mut f16, n)),
                PlaneKind::Bf16 => Planes::Bf16(std::slice::from_raw_parts_mut(p as *mut bf16, n)),
            }
        }
    }
}

fn empty(kind: PlaneKind) -> PlanesRef<'static> {
    match kind {
        PlaneKind::F32 => PlanesRef::F32(&[]),
        PlaneKind::F16 => PlanesRef::F16(&[]),
        PlaneKind::Bf16 => PlanesRef::Bf16(&[]),
    }
}
