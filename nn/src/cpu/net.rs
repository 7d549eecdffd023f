//! The network's forward pass in pure Rust: the stem, the residual blocks (some with global
//! pooling), the policy head and the value head, computed as libtorch's inference form
//! computes them (batch norms folded, `model::network::net::FusedNet::forward`). The
//! training-only heads (reply policy, material) are not built: search reads neither.

use super::gemm::GemmLib;
use super::layers::{add_relu, global_pool, relu, softmax_rows, Board, Conv, Linear};
use crate::file::tensors::Weights;
use crate::network::config::NetConfig;
use crate::network::shape::{NetShape, WDL_LEN};

struct Block {
    conv1: Conv,
    conv2: Conv,
    /// The pooled channels' convolution and the linear layer from their summary to a
    /// bias of every channel of `conv1`'s output.
    gpool: Option<(Conv, Linear)>,
}

/// A network ready to run on the CPU.
pub(super) struct CpuNet {
    shape: NetShape,
    board: Board,
    channels: usize,
    stem: Conv,
    blocks: Vec<Block>,
    policy_conv: Conv,
    /// `policy.out` as `[policy_planes, policy_channels]` and its bias: written planes
    /// first, the order of the policy labels.
    policy_out: (Vec<f32>, Vec<f32>),
    value_conv: Conv,
    /// `value.fc1` with its inputs in NHWC order (libtorch flattens NCHW).
    value_fc1: Linear,
    value_fc2: Linear,
}

/// The buffers of one forward pass, kept between passes.
#[derive(Default)]
pub(super) struct Scratch {
    x: Vec<f32>,
    t: Vec<f32>,
    u: Vec<f32>,
    cols: Vec<f32>,
    pooled: Vec<f32>,
    pool_bias: Vec<f32>,
    hidden: Vec<f32>,
}

fn sized(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}

impl CpuNet {
    pub fn new(config: &NetConfig, shape: NetShape, weights: &Weights) -> Result<CpuNet, String> {
        let board = Board { height: shape.board_height, width: shape.board_width };
        let blocks = (0..config.blocks)
            .map(|i| {
                let p = format!("blocks.{i}");
                let gpool = match config.is_global_pooling_block(i) {
                    false => None,
                    true => Some((
                        Conv::folded(weights, &format!("{p}.gpool.conv"), &format!("{p}.gpool.bn"))?,
                        Linear::new(weights, &format!("{p}.gpool.linear"), false)?,
                    )),
                };
                Ok(Block {
                    conv1: Conv::folded(weights, &format!("{p}.conv1"), &format!("{p}.bn1"))?,
                    conv2: Conv::folded(weights, &format!("{p}.conv2"), &format!("{p}.bn2"))?,
                    gpool,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let out = Conv::biased(weights, "policy.out")?;
        let (v, squares) = (config.value_channels, shape.squares());
        // NHWC input s * v + c is libtorch's c * squares + s.
        let order: Vec<usize> = (0..squares * v).map(|i| (i % v) * squares + i / v).collect();
        Ok(CpuNet {
            shape,
            board,
            channels: config.channels,
            stem: Conv::folded(weights, "stem.conv", "stem.bn")?,
            blocks,
            policy_conv: Conv::folded(weights, "policy.conv", "policy.bn")?,
            policy_out: (out.pointwise_rows(), out.bias().to_vec()),
            value_conv: Conv::folded(weights, "value.conv", "value.bn")?,
            value_fc1: Linear::new(weights, "value.fc1", true)?.permute_inputs(&order),
            value_fc2: Linear::new(weights, "value.fc2", true)?,
        })
    }

    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Policy logits (`[n, policy_len]`) and WDL probabilities (`[n, 3]`) of `n` encoded
    /// positions (`[n, input_len]`, the encoder's planes-first layout).
    pub fn forward(
        &self,
        lib: GemmLib,
        n: usize,
        inputs: &[f32],
        s: &mut Scratch,
        policy: &mut [f32],
        wdl: &mut [f32],
    ) {
        let (squares, c) = (self.board.squares(), self.channels);
        let planes = self.shape.input_planes;
        // The planes to NHWC.
        let u = sized(&mut s.u, n * squares * planes);
        for (pos, input) in inputs.chunks_exact(planes * squares).take(n).enumerate() {
            let out = &mut u[pos * squares * planes..(pos + 1) * squares * planes];
            for (p, plane) in input.chunks_exact(squares).enumerate() {
                for (sq, &v) in plane.iter().enumerate() {
                    out[sq * planes + p] = v;
                }
            }
        }
        let len = n * squares * c;
        sized(&mut s.x, len);
        sized(&mut s.t, len);
        self.stem.forward(lib, self.board, n, &s.u, &mut s.cols, &mut s.x);
        relu(&mut s.x[..len]);
        for block in &self.blocks {
            self.block(lib, block, n, s);
        }
        self.policy_head(lib, n, s, policy);
        self.value_head(lib, n, s, wdl);
    }

    /// `x = relu(conv2(relu(conv1(x) + pooled bias)) + x)`.
    fn block(&self, lib: GemmLib, block: &Block, n: usize, s: &mut Scratch) {
        let (squares, c, len) = (self.board.squares(), self.channels, n * self.board.squares() * self.channels);
        block.conv1.forward(lib, self.board, n, &s.x, &mut s.cols, &mut s.t);
        if let Some((conv, linear)) = &block.gpool {
            let g = conv.cout;
            let pooled_in = sized(&mut s.u, n * squares * g);
            conv.forward(lib, self.board, n, &s.x, &mut s.cols, pooled_in);
            relu(pooled_in);
            global_pool(self.board, n, g, &s.u, sized(&mut s.pooled, n * 2 * g));
            linear.forward(lib, n, &s.pooled, sized(&mut s.pool_bias, n * c));
            for (pos, t) in s.t[..len].chunks_exact_mut(squares * c).enumerate() {
                let bias = &s.pool_bias[pos * c..(pos + 1) * c];
                for row in t.chunks_exact_mut(c) {
                    for (v, b) in row.iter_mut().zip(bias) {
                        *v += b;
                    }
                }
            }
        }
        relu(&mut s.t[..len]);
        let out = sized(&mut s.u, len);
        block.conv2.forward(lib, self.board, n, &s.t, &mut s.cols, out);
        add_relu(out, &s.x[..len]);
        std::mem::swap(&mut s.x, &mut s.u);
    }

    fn policy_head(&self, lib: GemmLib, n: usize, s: &mut Scratch, policy: &mut [f32]) {
        let squares = self.board.squares();
        let pc = self.policy_conv.cout;
        let act = sized(&mut s.t, n * squares * pc);
        self.policy_conv.forward(lib, self.board, n, &s.x, &mut s.cols, act);
        relu(act);
        let (weight, bias) = &self.policy_out;
        let planes = bias.len();
        for (pos, logits) in policy.chunks_exact_mut(planes * squares).take(n).enumerate() {
            let act = &s.t[pos * squares * pc..(pos + 1) * squares * pc];
            // [planes, pc] x [pc, squares]: logits in (plane, square) order.
            super::gemm::matmul(
                lib,
                planes,
                pc,
                squares,
                super::gemm::View::rows(weight, pc),
                super::gemm::View::transposed(act, pc),
                logits,
            );
            for (row, b) in logits.chunks_exact_mut(squares).zip(bias) {
                for v in row {
                    *v += b;
                }
            }
        }
    }

    fn value_head(&self, lib: GemmLib, n: usize, s: &mut Scratch, wdl: &mut [f32]) {
        let vc = self.value_conv.cout;
        let act = sized(&mut s.t, n * self.board.squares() * vc);
        self.value_conv.forward(lib, self.board, n, &s.x, &mut s.cols, act);
        relu(act);
        let hidden = sized(&mut s.hidden, n * self.value_fc1.outputs);
        self.value_fc1.forward(lib, n, &s.t, hidden);
        relu(hidden);
        self.value_fc2.forward(lib, n, &s.hidden, &mut wdl[..n * WDL_LEN]);
        softmax_rows(&mut wdl[..n * WDL_LEN], WDL_LEN);
    }
}
