//! The portable CPU backend computes what libtorch computes: the shipped networks of every
//! variant, on 1,000 positions of games each network plays against itself (moves sampled
//! from its own policy), give policy logits within 1e-4 and win/draw/loss probabilities
//! within 1e-5 of libtorch's f32 evaluator.

use std::path::PathBuf;

use koma_model::tch::Device;
use koma_model::{load_torch_network, CpuEvaluator, Encoder, Evaluator, Expected, Network, Precision};
use rules::{EndRules, Position, Variant};

const POSITIONS: usize = 1000;
const POLICY_TOLERANCE: f32 = 1e-4;
const WDL_TOLERANCE: f32 = 1e-5;

fn shipped(variant: Variant) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models").join(format!("{}.safetensors", variant.name()))
}

/// xorshift64*: a seeded, dependency-free random stream for sampling moves.
fn next(state: &mut u64) -> f64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
}

/// A legal move of `pos` drawn from the softmax of `network`'s logits over the legal moves.
fn sample_move(network: &Network, pos: &Position, rng: &mut u64) -> Option<rules::Move> {
    let encoder: &Encoder = &network.encoder;
    let mut input = vec![0f32; encoder.input_len()];
    encoder.encode(pos, &mut input);
    let out = network.evaluator.evaluate(&input, 1).unwrap();
    let logits = out.policy(0);
    let (mut moves, mut indices) = (Vec::new(), Vec::new());
    encoder.legal_moves_indexed(pos, &mut moves, &mut indices);
    let top = indices.iter().map(|&i| logits[i]).fold(f32::NEG_INFINITY, f32::max);
    let weights: Vec<f64> = indices.iter().map(|&i| ((logits[i] - top) as f64).exp()).collect();
    let mut pick = next(rng) * weights.iter().sum::<f64>();
    for (mv, w) in moves.iter().zip(&weights) {
        pick -= w;
        if pick <= 0.0 {
            return Some(*mv);
        }
    }
    moves.last().copied()
}

/// `POSITIONS` positions of self-play games (a new game when one ends or passes 300 plies).
fn game_positions(network: &Network, variant: Variant) -> Vec<Position> {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ variant.name().len() as u64;
    let (mut positions, mut pos) = (Vec::with_capacity(POSITIONS), Position::startpos(variant));
    let rules = EndRules::default();
    let mut plies = 0;
    while positions.len() < POSITIONS {
        positions.push(pos.clone());
        match sample_move(network, &pos, &mut rng) {
            Some(mv) if pos.outcome(&rules).is_none() && plies < 300 => {
                pos.play(mv);
                plies += 1;
            }
            _ => {
                pos = Position::startpos(variant);
                plies = 0;
            }
        }
    }
    positions
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn check_variant(variant: Variant) {
    let path = shipped(variant);
    let expected = Expected::variant(variant);
    let torch = load_torch_network(&path, &expected, Device::Cpu, Precision::F32).unwrap();
    let cpu = Network::load_cpu(&path, &expected).unwrap();
    assert!(cpu.evaluator.describe().starts_with("cpu"), "{}", cpu.evaluator.describe());
    let positions = game_positions(&torch, variant);
    let len = torch.encoder.input_len();
    let (mut policy_diff, mut wdl_diff) = (0f32, 0f32);
    // Batches of several sizes, as search hands them over.
    for (chunk, batch) in positions.chunks(37).zip([1usize, 8, 16, 32, 37].into_iter().cycle()) {
        let chunk = &chunk[..batch.min(chunk.len())];
        let mut inputs = vec![0f32; chunk.len() * len];
        for (pos, row) in chunk.iter().zip(inputs.chunks_mut(len)) {
            torch.encoder.encode(pos, row);
        }
        let want = torch.evaluator.evaluate(&inputs, chunk.len()).unwrap();
        let got = cpu.evaluator.evaluate(&inputs, chunk.len()).unwrap();
        policy_diff = policy_diff.max(max_abs_diff(want.policy_all(), got.policy_all()));
        wdl_diff = wdl_diff.max(max_abs_diff(want.wdl_all(), got.wdl_all()));
    }
    eprintln!("{variant}: max |policy logit diff| {policy_diff:e}, max |WDL diff| {wdl_diff:e}");
    assert!(policy_diff < POLICY_TOLERANCE, "{variant}: policy logits differ by {policy_diff}");
    assert!(wdl_diff < WDL_TOLERANCE, "{variant}: WDL differs by {wdl_diff}");
}

#[test]
fn shogi_network_equals_libtorch() {
    check_variant(Variant::Shogi);
}

#[test]
fn sho_network_equals_libtorch() {
    check_variant(Variant::Sho);
}

#[test]
fn dai_network_equals_libtorch() {
    check_variant(Variant::Dai);
}

/// The evaluator interface's other paths: parts of several requests in one pass, and an
/// empty batch.
#[test]
fn parts_and_empty_batches_match_single_requests() {
    let path = shipped(Variant::Sho);
    let cpu = Network::load_cpu(&path, &Expected::variant(Variant::Sho)).unwrap();
    let evaluator: &CpuEvaluator =
        &CpuEvaluator::new(&koma_model::read_network_file(&path, &Expected::any()).unwrap()).unwrap();
    let len = cpu.encoder.input_len();
    let positions = game_positions(&cpu, Variant::Sho);
    let mut inputs = vec![0f32; 5 * len];
    for (pos, row) in positions[100..105].iter().zip(inputs.chunks_mut(len)) {
        cpu.encoder.encode(pos, row);
    }
    let whole = evaluator.evaluate(&inputs, 5).unwrap();
    let (mut a, mut b) = (koma_model::Evaluation::new(), koma_model::Evaluation::new());
    let mut parts = [
        koma_model::EvalPart { inputs: inputs[..2 * len].into(), n: 2, out: &mut a },
        koma_model::EvalPart { inputs: inputs[2 * len..].into(), n: 3, out: &mut b },
    ];
    evaluator.evaluate_parts(&mut parts).unwrap();
    assert_eq!(a.policy_all(), &whole.policy_all()[..2 * whole.policy_len()]);
    assert_eq!(b.wdl_all(), &whole.wdl_all()[2 * 3..]);
    assert_eq!(evaluator.evaluate(&[], 0).unwrap().batch(), 0);
    assert!(evaluator.evaluate(&inputs[..len - 1], 1).is_err(), "a short input is refused");
}
