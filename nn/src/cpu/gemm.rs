//! The one matrix product the portable backend is built on, `C = A·B` in f32 with any
//! strides, over a choice of pure-Rust GEMM libraries. Both were measured side by side on
//! the shipped networks (docs/performance.md, "Backends"); the faster is the default and
//! `KOMA_CPU_GEMM` picks the other, to measure again on another machine.

use std::fmt;

/// A pure-Rust single-precision GEMM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GemmLib {
    /// The `gemm` crate (faer's kernels: AVX2/FMA and AVX-512 chosen at run time).
    #[default]
    Gemm,
    /// `matrixmultiply`, the kernels behind `ndarray`'s `dot` (AVX2/FMA chosen at run time).
    MatrixMultiply,
}

impl GemmLib {
    pub const NAMES: [&'static str; 2] = ["gemm", "matrixmultiply"];

    pub fn name(self) -> &'static str {
        match self {
            GemmLib::Gemm => Self::NAMES[0],
            GemmLib::MatrixMultiply => Self::NAMES[1],
        }
    }

    /// `KOMA_CPU_GEMM` when set, else the default.
    pub fn from_env() -> Result<GemmLib, UnknownGemm> {
        match std::env::var("KOMA_CPU_GEMM") {
            Ok(name) if !name.trim().is_empty() => name.parse(),
            _ => Ok(GemmLib::default()),
        }
    }
}

impl fmt::Display for GemmLib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown GEMM library '{0}' (KOMA_CPU_GEMM: gemm or matrixmultiply)")]
pub struct UnknownGemm(String);

impl std::str::FromStr for GemmLib {
    type Err = UnknownGemm;
    fn from_str(s: &str) -> Result<GemmLib, UnknownGemm> {
        match s.trim().to_ascii_lowercase().as_str() {
            "gemm" => Ok(GemmLib::Gemm),
            "matrixmultiply" | "ndarray" => Ok(GemmLib::MatrixMultiply),
            _ => Err(UnknownGemm(s.chars().take(40).collect())),
        }
    }
}

/// A matrix operand: its values and its row and column strides (in elements).
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub rs: usize,
    pub cs: usize,
}

impl<'a> View<'a> {
    /// A row-major matrix with `cols` columns.
    pub fn rows(data: &'a [f32], cols: usize) -> View<'a> {
        View { data, rs: cols, cs: 1 }
    }

    /// The transpose of a row-major matrix with `cols` columns.
    pub fn transposed(data: &'a [f32], cols: usize) -> View<'a> {
        View { data, rs: 1, cs: cols }
    }

    /// Whether every element of an `r`x`c` matrix lies inside `data`.
    fn holds(&self, r: usize, c: usize) -> bool {
        r == 0 || c == 0 || (r - 1) * self.rs + (c - 1) * self.cs < self.data.len()
    }
}

/// `c = a·b`, `a` being `m`x`k`, `b` `k`x`n` and `c` (row-major, `n` columns) `m`x`n`;
/// `c`'s old values are overwritten. One thread: the engine's parallelism is its search
/// threads, each evaluating its own batches.
pub fn matmul(lib: GemmLib, m: usize, k: usize, n: usize, a: View<'_>, b: View<'_>, c: &mut [f32]) {
    assert!(a.holds(m, k) && b.holds(k, n) && c.len() >= m * n, "matmul operands out of bounds");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c[..m * n].fill(0.0);
        return;
    }
    let n_ = n as isize;
    // SAFETY: the assertion above keeps every element the kernels read or write inside
    // the slices; `c` does not alias `a` or `b` (a `&mut` and two `&`).
    unsafe {
        match lib {
            GemmLib::Gemm => gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                n_,
                false,
                a.data.as_ptr(),
                a.cs as isize,
                a.rs as isize,
                b.data.as_ptr(),
                b.cs as isize,
                b.rs as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            ),
            GemmLib::MatrixMultiply => matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.data.as_ptr(),
                a.rs as isize,
                a.cs as isize,
                b.data.as_ptr(),
                b.rs as isize,
                b.cs as isize,
                0.0,
                c.as_mut_ptr(),
                n_,
                1,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(m: usize, k: usize, n: usize, a: View<'_>, b: View<'_>) -> Vec<f32> {
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a.data[i * a.rs + p * a.cs] * b.data[p * b.rs + j * b.cs]).sum();
            }
        }
        c
    }

    #[test]
    fn both_libraries_multiply_plain_and_transposed_operands() {
        let (m, k, n) = (7, 13, 5);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 37 % 11) as f32 - 5.0) / 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 17 % 7) as f32 - 3.0) / 2.0).collect();
        for lib in [GemmLib::Gemm, GemmLib::MatrixMultiply] {
            for (av, bv) in [(View::rows(&a, k), View::rows(&b, n)), (View::transposed(&a, m), View::transposed(&b, k))]
            {
                let mut c = vec![f32::NAN; m * n];
                matmul(lib, m, k, n, av, bv, &mut c);
                for (got, want) in c.iter().zip(naive(m, k, n, av, bv)) {
                    assert!((got - want).abs() < 1e-4, "{lib}: {got} against {want}");
                }
            }
        }
    }

    #[test]
    fn names_parse_and_bad_ones_say_what_is_known() {
        for name in GemmLib::NAMES {
            assert_eq!(name.parse::<GemmLib>().unwrap().name(), name);
        }
        assert!("blas".parse::<GemmLib>().unwrap_err().to_string().contains("gemm or matrixmultiply"));
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn operands_too_short_for_their_shape_are_refused() {
        let mut c = vec![0f32; 4];
        matmul(GemmLib::Gemm, 2, 3, 2, View::rows(&[0.0; 5], 3), View::rows(&[0.0; 6], 2), &mut c);
    }
}
