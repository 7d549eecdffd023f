//! The portable backend's layers over activations laid out NHWC (`[positions x squares,
//! channels]`, row-major), so that a convolution is one matrix product over its patches
//! (im2col) and a channel's values sit next to each other for the bias, residual and ReLU
//! that follow it.

use super::gemm::{matmul, GemmLib, View};
use crate::file::tensors::Weights;

/// Batch norm epsilon: the trainer's (PyTorch's default), folded in with it.
const BN_EPS: f32 = 1e-5;

/// A tensor of the file, which the loader has already checked against the network's
/// table: a missing one is a bug of the caller's names, reported rather than panicked on.
pub(super) fn tensor<'a>(weights: &'a Weights, name: &str) -> Result<&'a [f32], String> {
    weights.get(name).map(|(_, v)| v).ok_or_else(|| format!("tensor {name} is missing"))
}

/// The board the activations cover.
#[derive(Clone, Copy, Debug)]
pub(super) struct Board {
    pub height: usize,
    pub width: usize,
}

impl Board {
    pub fn squares(self) -> usize {
        self.height * self.width
    }
}

/// A square convolution (stride 1, "same" padding) with a bias: a bias-free convolution
/// and its batch norm folded together as libtorch's evaluator folds them, or a convolution
/// with a bias of its own.
pub(super) struct Conv {
    kernel: usize,
    cin: usize,
    pub cout: usize,
    /// `[kernel * kernel * cin, cout]`: row `(ky * kernel + kx) * cin + ci` holds the
    /// weights of input channel `ci` at kernel offset `(ky, kx)`, the layout of a patch
    /// row of [`Conv::im2col`].
    matrix: Vec<f32>,
    bias: Vec<f32>,
}

impl Conv {
    /// `<conv>.weight` (`[cout, cin, k, k]`, no bias) with batch norm `<bn>.*` folded in.
    pub fn folded(weights: &Weights, conv: &str, bn: &str) -> Result<Conv, String> {
        let (shape, w) =
            weights.get(&format!("{conv}.weight")).ok_or_else(|| format!("tensor {conv}.weight is missing"))?;
        let get = |part: &str| tensor(weights, &format!("{bn}.{part}"));
        let (gamma, beta, mean, var) = (get("weight")?, get("bias")?, get("running_mean")?, get("running_var")?);
        // As libtorch's evaluator folds: scale = gamma / sqrt(var + eps), in f32.
        let scale: Vec<f32> = gamma.iter().zip(var).map(|(g, v)| g * (1.0 / (v + BN_EPS).sqrt())).collect();
        let bias = beta.iter().zip(mean).zip(&scale).map(|((b, m), s)| b - m * s).collect();
        Ok(Conv::from_torch(shape, w, &scale, bias))
    }

    /// `<name>.weight` and `<name>.bias`: a convolution with a bias and no batch norm.
    pub fn biased(weights: &Weights, name: &str) -> Result<Conv, String> {
        let (shape, w) =
            weights.get(&format!("{name}.weight")).ok_or_else(|| format!("tensor {name}.weight is missing"))?;
        let bias = tensor(weights, &format!("{name}.bias"))?.to_vec();
        Ok(Conv::from_torch(shape, w, &vec![1.0; shape[0]], bias))
    }

    /// From libtorch's layout `[cout, cin, k, k]`, each output channel's weights scaled.
    fn from_torch(shape: &[usize], w: &[f32], scale: &[f32], bias: Vec<f32>) -> Conv {
        let (cout, cin, kernel) = (shape[0], shape[1], shape[2]);
        let mut matrix = vec![0f32; kernel * kernel * cin * cout];
        for co in 0..cout {
            for ci in 0..cin {
                for k in 0..kernel * kernel {
                    matrix[(k * cin + ci) * cout + co] = w[(co * cin + ci) * kernel * kernel + k] * scale[co];
                }
            }
        }
        Conv { kernel, cin, cout, matrix, bias }
    }

    /// The 1x1 convolution's weights as `[cout, cin]` (row-major), for products that
    /// write channels first.
    pub fn pointwise_rows(&self) -> Vec<f32> {
        assert_eq!(self.kernel, 1, "pointwise_rows of a {0}x{0} convolution", self.kernel);
        let mut rows = vec![0f32; self.cout * self.cin];
        for ci in 0..self.cin {
            for co in 0..self.cout {
                rows[co * self.cin + ci] = self.matrix[ci * self.cout + co];
            }
        }
        rows
    }

    pub fn bias(&self) -> &[f32] {
        &self.bias
    }

    /// `out = conv(x) + bias` for `n` positions on `board`; `x` is `[n * squares, cin]`,
    /// `out` `[n * squares, cout]`; `cols` is scratch for the patches.
    pub fn forward(&self, lib: GemmLib, board: Board, n: usize, x: &[f32], cols: &mut Vec<f32>, out: &mut [f32]) {
        let rows = n * board.squares();
        let depth = self.kernel * self.kernel * self.cin;
        let patches: &[f32] = if self.kernel == 1 {
            &x[..rows * self.cin]
        } else {
            self.im2col(board, n, x, cols);
            &cols[..rows * depth]
        };
        matmul(lib, rows, depth, self.cout, View::rows(patches, depth), View::rows(&self.matrix, self.cout), out);
        for row in out[..rows * self.cout].chunks_exact_mut(self.cout) {
            for (v, b) in row.iter_mut().zip(&self.bias) {
                *v += b;
            }
        }
    }

    /// Every square's `kernel x kernel` neighbourhood of `x` as one row of `cols`, zero
    /// beyond the board's edge.
    fn im2col(&self, board: Board, n: usize, x: &[f32], cols: &mut Vec<f32>) {
        let (k, cin, pad) = (self.kernel, self.cin, self.kernel / 2);
        let (h, w, squares) = (board.height, board.width, board.squares());
        let depth = k * k * cin;
        cols.resize(n * squares * depth, 0.0);
        for (sq, row) in cols.chunks_exact_mut(depth).take(n * squares).enumerate() {
            let (pos, y, xx) = (sq / squares, (sq % squares) / w, sq % w);
            for (tap, dst) in row.chunks_exact_mut(cin).enumerate() {
                let (sy, sx) = ((y + tap / k).wrapping_sub(pad), (xx + tap % k).wrapping_sub(pad));
                if sy < h && sx < w {
                    let src = (pos * squares + sy * w + sx) * cin;
                    dst.copy_from_slice(&x[src..src + cin]);
                } else {
                    dst.fill(0.0);
                }
            }
        }
    }
}

/// A fully connected layer `y = W·x + b`, `W` being `[out, in]` as libtorch stores it.
pub(super) struct Linear {
    pub inputs: usize,
    pub outputs: usize,
    weight: Vec<f32>,
    bias: Option<Vec<f32>>,
}

impl Linear {
    /// `<name>.weight`, with `<name>.bias` when `biased`.
    pub fn new(weights: &Weights, name: &str, biased: bool) -> Result<Linear, String> {
        let (shape, w) =
            weights.get(&format!("{name}.weight")).ok_or_else(|| format!("tensor {name}.weight is missing"))?;
        let bias = if biased { Some(tensor(weights, &format!("{name}.bias"))?.to_vec()) } else { None };
        Ok(Linear { outputs: shape[0], inputs: shape[1], weight: w.to_vec(), bias })
    }

    /// The inputs reordered by `order` (input `i` of the new layer is input `order[i]`
    /// of this one): the value layer reads NHWC activations where libtorch flattened NCHW.
    pub fn permute_inputs(mut self, order: &[usize]) -> Linear {
        assert_eq!(order.len(), self.inputs);
        let old = std::mem::take(&mut self.weight);
        self.weight = old.chunks_exact(self.inputs).flat_map(|row| order.iter().map(|&i| row[i])).collect();
        self
    }

    /// `y = x·Wᵀ + b` for `n` rows of `x` (`[n, inputs]`) into `y` (`[n, outputs]`).
    pub fn forward(&self, lib: GemmLib, n: usize, x: &[f32], y: &mut [f32]) {
        let wt = View::transposed(&self.weight, self.inputs);
        matmul(lib, n, self.inputs, self.outputs, View::rows(x, self.inputs), wt, y);
        if let Some(bias) = &self.bias {
            for row in y[..n * self.outputs].chunks_exact_mut(self.outputs) {
                for (v, b) in row.iter_mut().zip(bias) {
                    *v += b;
                }
            }
        }
    }
}

pub(super) fn relu(x: &mut [f32]) {
    for v in x {
        *v = v.max(0.0);
    }
}

/// `x = relu(x + residual)`.
pub(super) fn add_relu(x: &mut [f32], residual: &[f32]) {
    for (v, r) in x.iter_mut().zip(residual) {
        *v = (*v + r).max(0.0);
    }
}

/// The mean and the max of every channel over the board: `[n * squares, c]` to `[n, 2c]`
/// (the means first), as the global pooling blocks summarise their board.
pub(super) fn global_pool(board: Board, n: usize, c: usize, x: &[f32], out: &mut [f32]) {
    let squares = board.squares();
    for (pos, pooled) in out[..n * 2 * c].chunks_exact_mut(2 * c).enumerate() {
        let (mean, max) = pooled.split_at_mut(c);
        mean.fill(0.0);
        max.fill(f32::NEG_INFINITY);
        for row in x[pos * squares * c..(pos + 1) * squares * c].chunks_exact(c) {
            for ((s, m), &v) in mean.iter_mut().zip(max.iter_mut()).zip(row) {
                *s += v;
                *m = m.max(v);
            }
        }
        for s in mean {
            *s /= squares as f32;
        }
    }
}

/// Softmax of each row of three: the value head's win, draw and loss.
pub(super) fn softmax_rows(x: &mut [f32], width: usize) {
    for row in x.chunks_exact_mut(width) {
        let top = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for v in row.iter_mut() {
            *v = (*v - top).exp();
            sum += *v;
        }
        for v in row.iter_mut() {
            *v /= sum;
        }
    }
}
