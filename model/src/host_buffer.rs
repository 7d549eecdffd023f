//! A producer's reusable f32 input buffer: plain memory, or page-locked (pinned) memory
//! when its batches go to a CUDA device, so that the transfer is one DMA that need not
//! block the host.

use tch::{Device, Kind, Tensor};

/// Growable f32 buffer; its contents are unspecified after growing.
pub struct HostBuffer {
    storage: Storage,
    len: usize,
}

enum Storage {
    Plain(Vec<f32>),
    /// A pinned CPU tensor of `capacity` f32 (allocated by libtorch's pinned allocator).
    Pinned {
        tensor: Tensor,
        capacity: usize,
        device: Device,
    },
}

// SAFETY: the pinned tensor is owned by this buffer alone and only read or written through
// `&self` / `&mut self` as plain memory.
unsafe impl Sync for HostBuffer {}

impl Default for HostBuffer {
    fn default() -> Self {
        HostBuffer { storage: Storage::Plain(Vec::new()), len: 0 }
    }
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer").field("len", &self.len).field("pinned", &self.is_pinned()).finish()
    }
}

impl HostBuffer {
    /// A buffer whose memory is pinned for `device` when that is a CUDA device.
    pub fn for_device(device: Option<Device>) -> HostBuffer {
        match device {
            Some(d) if d.is_cuda() => {
                HostBuffer { storage: Storage::Pinned { tensor: Tensor::new(), capacity: 0, device: d }, len: 0 }
            }
            _ => HostBuffer::default(),
        }
    }

    pub fn is_pinned(&self) -> bool {
        matches!(self.storage, Storage::Pinned { .. })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets the length, keeping the allocation when it is big enough.
    pub fn resize(&mut self, len: usize) {
        match &mut self.storage {
            Storage::Plain(v) => v.resize(len, 0.0),
            Storage::Pinned { tensor, capacity, device } => {
                if *capacity < len {
                    let fresh = Tensor::zeros([len as i64], (Kind::Float, Device::Cpu));
                    // Pinning can fail (no driver memory left): plain memory still works.
                    *tensor = fresh.f_pin_memory(*device).unwrap_or(fresh);
                    *capacity = len;
                }
            }
        }
        self.len = len;
    }

    /// Shrinks the length (the positions actually written).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub fn as_slice(&self) -> &[f32] {
        match &self.storage {
            Storage::Plain(v) => &v[..self.len],
            Storage::Pinned { tensor, .. } if self.len > 0 => {
                // SAFETY: a contiguous f32 CPU tensor of `capacity >= len` values owned here.
                unsafe { std::slice::from_raw_parts(tensor.data_ptr() as *const f32, self.len) }
            }
            Storage::Pinned { .. } => &[],
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        match &mut self.storage {
            Storage::Plain(v) => &mut v[..self.len],
            Storage::Pinned { tensor, .. } if self.len > 0 => {
                // SAFETY: as in `as_slice`, and `&mut self` makes the access exclusive.
                unsafe { std::slice::from_raw_parts_mut(tensor.data_ptr() as *mut f32, self.len) }
            }
            Storage::Pinned { .. } => &mut [],
        }
    }
}
