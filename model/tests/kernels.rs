//! The inference kernels ([`Kernels`]) compute the same network: channels-last tensors and
//! (on CUDA) cuDNN's fused convolutions give the plain kernels' policy logits and WDL on
//! real positions, within rounding, for each variant and for networks with global pooling
//! and attack planes. On the CPU `CudnnFused` runs as channels last; on a GPU the same
//! comparison is `koma bench nn --kernels cudnn-fused` (its diff columns,
//! `scripts/gpu-bench.sh`).

mod common;

use common::*;
use koma_model::encoding::Encoder;
use koma_model::tch::Device;
use koma_model::{Evaluator, Kernels, Net, NetConfig, Precision, TorchEvaluator};
use rules::{Position, Variant};

/// Encoded positions of a random game from the start (every `stride`-th ply).
fn game_positions(encoder: &Encoder, seed: u64, plies: usize, stride: usize) -> (Vec<f32>, usize) {
    let mut rng = Rng(seed);
    let mut pos = Position::startpos(encoder.variant());
    let len = encoder.input_len();
    let mut inputs = Vec::new();
    for ply in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() || pos.royals(rules::Color::Sente).is_empty() || pos.royals(rules::Color::Gote).is_empty() {
            break;
        }
        if ply % stride == 0 {
            let start = inputs.len();
            inputs.resize(start + len, 0.0);
            encoder.encode(&pos, &mut inputs[start..]);
        }
        pos.play(legal[rng.below(legal.len())]);
    }
    let n = inputs.len() / len;
    (inputs, n)
}

fn compare(variant: Variant, config: NetConfig, seed: u64) {
    let encoder = Encoder::for_net(variant, &config);
    let net = Net::new(&config, encoder.net_shape(), seed, Device::Cpu).unwrap();
    train_bn_stats(&net, seed);
    let (inputs, n) = game_positions(&encoder, seed, 120, 3);
    assert!(n >= 20, "{variant}: {n} positions");
    let plain = TorchEvaluator::with_kernels(&net, Device::Cpu, Precision::F32, Kernels::Plain).unwrap();
    let reference = plain.evaluate(&inputs, n).unwrap();
    for kernels in [Kernels::ChannelsLast, Kernels::CudnnFused] {
        let ev = TorchEvaluator::with_kernels(&net, Device::Cpu, Precision::F32, kernels).unwrap();
        assert_eq!(ev.kernels(), kernels);
        let out = ev.evaluate(&inputs, n).unwrap();
        let d = max_abs_diff(out.policy_all(), reference.policy_all());
        assert!(d < 1e-4, "{variant} {kernels}: policy logits differ by {d}");
        for i in 0..n {
            let dw = max_abs_diff(&out.wdl(i), &reference.wdl(i));
            assert!(dw < 1e-5, "{variant} {kernels}: position {i}'s WDL differs by {dw}");
        }
        // Not a network that ignores its input: the positions' policies differ.
        assert!(max_abs_diff(out.policy(0), out.policy(n - 1)) > 1e-3, "{variant} {kernels}");
    }
}

fn pooled(attack_planes: bool) -> NetConfig {
    NetConfig {
        blocks: 4,
        channels: 16,
        global_pooling_every: 2,
        global_pooling_channels: 8,
        policy_channels: Some(8),
        value_channels: 4,
        value_hidden: 32,
        zero_init_residual: false,
        attack_planes,
        reply_policy_head: false,
        material_head: false,
    }
}

#[test]
fn channels_last_and_fused_kernels_match_plain_on_shogi_positions() {
    compare(Variant::Shogi, pooled(true), 1);
    compare(Variant::Shogi, NetConfig { global_pooling_every: 0, ..pooled(false) }, 2);
}

#[test]
fn channels_last_and_fused_kernels_match_plain_on_sho_and_dai_positions() {
    compare(Variant::Sho, pooled(true), 3);
    compare(Variant::Dai, pooled(false), 4);
}

#[test]
fn kernels_parse_from_their_names() {
    for (name, k) in Kernels::NAMES.iter().zip([Kernels::Plain, Kernels::ChannelsLast, Kernels::CudnnFused]) {
        assert_eq!(name.parse::<Kernels>().unwrap(), k);
        assert_eq!(k.to_string(), *name);
    }
    let err = "tensorrt".parse::<Kernels>().unwrap_err();
    assert!(err.to_string().contains("plain, channels-last or cudnn-fused"), "{err}");
}
