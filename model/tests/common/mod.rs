#![allow(dead_code)]

use koma_model::{NetConfig, NetShape};

/// A tiny shape: 9x9 board, few planes, so tests run in milliseconds on a CPU.
pub fn tiny_shape() -> NetShape {
    NetShape { input_planes: 6, board_height: 9, board_width: 9, policy_planes: 5 }
}

/// A tiny network that exercises every layer kind (global pooling, non-zero residuals).
pub fn tiny_config() -> NetConfig {
    NetConfig {
        blocks: 3,
        channels: 8,
        global_pooling_every: 2,
        global_pooling_channels: 4,
        policy_channels: Some(6),
        value_channels: 2,
        value_hidden: 16,
        zero_init_residual: false,
        attack_planes: false,
    }
}

/// Deterministic pseudo-random inputs in [0, 1).
pub fn random_inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Moves the batch norm running statistics away from their initial (0, 1) so that tests
/// of inference paths (batch norm folding, checkpoints) are meaningful.
pub fn train_bn_stats(net: &koma_model::Net, seed: u64) {
    let s = net.shape();
    for k in 0..3 {
        let x = random_inputs(16 * s.input_len(), seed + k);
        let xs =
            tch::Tensor::from_slice(&x).view([16, s.input_planes as i64, s.board_height as i64, s.board_width as i64]);
        let xs = (xs * 3.0) - 0.5;
        tch::no_grad(|| {
            let _ = net.forward_t(&xs, true);
        });
    }
}
