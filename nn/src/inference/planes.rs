//! Input planes in the number type they travel in. A network that runs in f16 or bf16
//! rounds its f32 input to that type before the first convolution; writing the planes
//! in that type on the host is therefore exact (the same bits reach the network) and
//! halves the bytes that cross to the device. Every other network takes f32.

use half::{bf16, f16};

/// The number type of a batch's input planes (and of the policy logits an evaluator hands
/// back, [`crate::Evaluation::policy_kind`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlaneKind {
    #[default]
    F32,
    F16,
    Bf16,
}

impl PlaneKind {
    pub fn bytes(self) -> usize {
        match self {
            PlaneKind::F32 => 4,
            PlaneKind::F16 | PlaneKind::Bf16 => 2,
        }
    }
}

/// A number an encoder can write into a plane.
pub trait PlaneValue: Copy + PartialEq + 'static {
    const ZERO: Self;
    const ONE: Self;
    /// Rounds to nearest, ties to even (as torch converts).
    fn from_f32(v: f32) -> Self;
}

impl PlaneValue for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn from_f32(v: f32) -> f32 {
        v
    }
}

impl PlaneValue for f16 {
    const ZERO: f16 = f16::ZERO;
    const ONE: f16 = f16::ONE;
    fn from_f32(v: f32) -> f16 {
        f16::from_f32(v)
    }
}

impl PlaneValue for bf16 {
    const ZERO: bf16 = bf16::ZERO;
    const ONE: bf16 = bf16::ONE;
    fn from_f32(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
}

/// Planes to write: positions' inputs in one of the [`PlaneKind`]s.
#[derive(Debug)]
pub enum Planes<'a> {
    F32(&'a mut [f32]),
    F16(&'a mut [f16]),
    Bf16(&'a mut [bf16]),
}

impl<'a> From<&'a mut [f32]> for Planes<'a> {
    fn from(s: &'a mut [f32]) -> Planes<'a> {
        Planes::F32(s)
    }
}

impl<'a> From<&'a mut Vec<f32>> for Planes<'a> {
    fn from(s: &'a mut Vec<f32>) -> Planes<'a> {
        Planes::F32(s.as_mut_slice())
    }
}

impl Planes<'_> {
    /// The same values, to read.
    pub fn as_ref(&self) -> PlanesRef<'_> {
        match self {
            Planes::F32(s) => PlanesRef::F32(s),
            Planes::F16(s) => PlanesRef::F16(s),
            Planes::Bf16(s) => PlanesRef::Bf16(s),
        }
    }

    pub fn kind(&self) -> PlaneKind {
        self.as_ref().kind()
    }

    /// Values (not bytes).
    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A shorter-lived handle on the same values (to pass on and keep using `self`).
    pub fn reborrow(&mut self) -> Planes<'_> {
        match self {
            Planes::F32(s) => Planes::F32(s),
            Planes::F16(s) => Planes::F16(s),
            Planes::Bf16(s) => Planes::Bf16(s),
        }
    }

    /// Values `start..start + len`. Panics when out of range.
    pub fn range(&mut self, start: usize, len: usize) -> Planes<'_> {
        match self {
            Planes::F32(s) => Planes::F32(&mut s[start..start + len]),
            Planes::F16(s) => Planes::F16(&mut s[start..start + len]),
            Planes::Bf16(s) => Planes::Bf16(&mut s[start..start + len]),
        }
    }

    /// Writes `src` (same length) converted to this kind.
    pub fn copy_from_f32(&mut self, src: &[f32]) {
        use half::slice::HalfFloatSliceExt;
        match self {
            Planes::F32(s) => s.copy_from_slice(src),
            Planes::F16(s) => s.convert_from_f32_slice(src),
            Planes::Bf16(s) => s.convert_from_f32_slice(src),
        }
    }
}

/// Planes to read: a request's inputs as its producer wrote them.
#[derive(Clone, Copy, Debug)]
pub enum PlanesRef<'a> {
    F32(&'a [f32]),
    F16(&'a [f16]),
    Bf16(&'a [bf16]),
}

impl<'a> From<&'a [f32]> for PlanesRef<'a> {
    fn from(s: &'a [f32]) -> PlanesRef<'a> {
        PlanesRef::F32(s)
    }
}

impl<'a> PlanesRef<'a> {
    pub fn kind(&self) -> PlaneKind {
        match self {
            PlanesRef::F32(_) => PlaneKind::F32,
            PlanesRef::F16(_) => PlaneKind::F16,
            PlanesRef::Bf16(_) => PlaneKind::Bf16,
        }
    }

    /// Values (not bytes).
    pub fn len(&self) -> usize {
        match self {
            PlanesRef::F32(s) => s.len(),
            PlanesRef::F16(s) => s.len(),
            PlanesRef::Bf16(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> usize {
        self.len() * self.kind().bytes()
    }

    pub fn as_ptr(&self) -> *const u8 {
        match self {
            PlanesRef::F32(s) => s.as_ptr() as *const u8,
            PlanesRef::F16(s) => s.as_ptr() as *const u8,
            PlanesRef::Bf16(s) => s.as_ptr() as *const u8,
        }
    }

    /// The values as f32 (exact: both 16-bit types widen without loss).
    pub fn extend_f32(&self, out: &mut Vec<f32>) {
        match self {
            PlanesRef::F32(s) => out.extend_from_slice(s),
            PlanesRef::F16(s) => out.extend(s.iter().map(|v| v.to_f32())),
            PlanesRef::Bf16(s) => out.extend(s.iter().map(|v| v.to_f32())),
        }
    }
}
