//! The evaluator's host data path: one copy in, at most one out, counted by the
//! evaluator itself as it copies (`Evaluator::copy_stats`), through the batcher with
//! several producers whose requests are merged into one forward pass.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use common::*;
use koma_model::encoding::Encoder;
use koma_model::tch::{Device, Kind};
use koma_model::{Batcher, BatcherConfig, Evaluator, Net, PlaneKind, Precision, TorchEvaluator};
use rules::{Position, Variant};

/// What `run_producers` saw.
struct Run {
    copies: koma_model::CopyStats,
    passes: u64,
    requests: usize,
    /// Input values the producers sent.
    values: u64,
}

/// Three producers, two slots each (double buffering), several rounds; returns the
/// evaluator's copy counters and checks every result against a direct evaluation.
fn run_producers(precision: Precision, reduced: bool) -> Run {
    let shape = tiny_shape();
    let net = Net::new(&tiny_config(), shape, 9, Device::Cpu).unwrap();
    let evaluator = Arc::new(TorchEvaluator::new(&net, Device::Cpu, precision).unwrap());
    let reference = Arc::new(TorchEvaluator::new(&net, Device::Cpu, precision).unwrap());
    let config = BatcherConfig { max_batch: 64, max_wait: std::time::Duration::from_millis(20), ..Default::default() };
    let batcher = Batcher::spawn(evaluator.clone(), config);
    let producers = 3;
    let barrier = Arc::new(Barrier::new(producers));
    let values = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..producers)
        .map(|id| {
            let handle = batcher.handle();
            let barrier = barrier.clone();
            let reference = reference.clone();
            let values = values.clone();
            std::thread::spawn(move || {
                let mut slots = [handle.slot(), handle.slot()];
                for s in &mut slots {
                    s.accept_reduced_precision(reduced);
                }
                for round in 0..4 {
                    barrier.wait();
                    let mut sent = Vec::new();
                    for (k, slot) in slots.iter_mut().enumerate() {
                        let n = 1 + (id + k + round) % 5;
                        // Sized for more, then cut to what was written, as self-play does.
                        let x = random_inputs(n * shape.input_len(), (id * 100 + round * 10 + k) as u64);
                        // In the evaluator's plane kind (bf16 for a bf16 network).
                        slot.planes_mut(n + 3).range(0, x.len()).copy_from_f32(&x);
                        slot.set_len(n);
                        values.fetch_add(x.len() as u64, Ordering::Relaxed);
                        slot.submit().unwrap();
                        sent.push((x, n));
                    }
                    for (slot, (x, n)) in slots.iter_mut().zip(sent) {
                        let got = slot.wait().unwrap();
                        let want = reference.evaluate(&x, n).unwrap();
                        assert_eq!(got.batch(), n);
                        let expect_kind = if reduced { reference.kind() } else { Kind::Float };
                        assert_eq!(got.policy_kind(), koma_model::plane_kind_for(expect_kind));
                        for i in 0..n {
                            // The reference rounds to bf16 too; only f32 consumers see the same.
                            let scale = want.policy(i).iter().fold(1f32, |m, v| m.max(v.abs()));
                            let d = max_abs_diff(&got.logits(i).to_vec(), want.policy(i));
                            assert!(
                                d <= 0.01 * scale,
                                "producer {id} round {round} position {i}: logits differ by {d}"
                            );
                            let d = max_abs_diff(&got.wdl(i), &want.wdl(i));
                            assert!(d < 0.02, "wdl differs by {d}");
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let stats = batcher.shutdown();
    Run {
        copies: evaluator.copy_stats().unwrap(),
        passes: stats.forward_passes,
        requests: stats.requests as usize,
        values: values.load(Ordering::Relaxed),
    }
}

#[test]
fn each_input_is_copied_once_and_outputs_are_handed_over() {
    let Run { copies: c, passes, requests, values } = run_producers(Precision::F32, true);
    assert_eq!(c.input_bytes, 4 * values, "f32 planes for an f32 network");
    assert!(passes < requests as u64, "requests were merged ({requests} requests in {passes} passes)");
    assert_eq!(c.batches, passes);
    assert_eq!(c.parts, requests as u64, "each request reached the evaluator in its own buffer");
    assert!(c.input_bytes > 0);
    assert_eq!(c.input_bytes_copied, c.input_bytes, "one copy in: {c:?}");
    // On the CPU the results are the forward pass's own memory: no copy out at all.
    assert_eq!(c.output_bytes_copied, 0, "{c:?}");
    assert!(c.output_bytes > 0);
}

#[test]
fn bf16_inference_hands_back_bf16_logits_with_one_copy_in() {
    let Run { copies: c, values, .. } = run_producers(Precision::Bf16, true);
    assert_eq!(c.input_bytes, 2 * values, "the producers wrote bf16 planes: half the bytes of f32");
    assert_eq!(c.input_bytes_copied, c.input_bytes, "one copy in: {c:?}");
    assert_eq!(c.output_bytes_copied, 0, "bf16 logits handed over as they are: {c:?}");
}

#[test]
fn bf16_inference_converts_once_for_f32_consumers() {
    let Run { copies: c, .. } = run_producers(Precision::Bf16, false);
    assert_eq!(c.input_bytes_copied, c.input_bytes, "{c:?}");
    // The f32 logits are one conversion pass over the bf16 ones: at most one copy out.
    assert!(c.output_bytes_copied > 0 && c.output_bytes_copied <= c.output_bytes, "{c:?}");
}

/// Positions of a short game, each encoded as f32 planes.
fn game_positions(plies: usize) -> (Encoder, Vec<Position>) {
    let encoder = Encoder::new(Variant::Shogi);
    let mut pos = Position::startpos(Variant::Shogi);
    let mut out = vec![pos.clone()];
    for ply in 0..plies {
        let moves = pos.legal_moves();
        pos.play(moves[(ply * 7 + 3) % moves.len()]);
        out.push(pos.clone());
    }
    (encoder, out)
}

#[test]
fn planes_travel_in_the_networks_16_bit_type_and_change_no_bit() {
    let (encoder, positions) = game_positions(40);
    let net = Net::new(&tiny_config(), encoder.net_shape(), 5, Device::Cpu).unwrap();
    train_bn_stats(&net, 5);
    let evaluator = Arc::new(TorchEvaluator::new(&net, Device::Cpu, Precision::Bf16).unwrap());
    assert_eq!(evaluator.input_kind(), PlaneKind::Bf16);
    assert_eq!(TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap().input_kind(), PlaneKind::F32);
    // The reference: f32 planes, rounded to bf16 inside the evaluator.
    let len = encoder.input_len();
    let mut f32_planes = vec![0f32; positions.len() * len];
    for (p, chunk) in positions.iter().zip(f32_planes.chunks_mut(len)) {
        encoder.encode(p, chunk);
    }
    let reference = TorchEvaluator::new(&net, Device::Cpu, Precision::Bf16).unwrap();
    let want = reference.evaluate(&f32_planes, positions.len()).unwrap();
    // Encoded straight into a batcher slot's bf16 planes, as self-play does.
    let batcher = Batcher::spawn(evaluator.clone(), BatcherConfig::default());
    let mut slot = batcher.handle().slot();
    let mut planes = slot.planes_mut(positions.len());
    assert_eq!(planes.kind(), PlaneKind::Bf16);
    for (i, p) in positions.iter().enumerate() {
        encoder.encode_planes(p, planes.range(i * len, len));
    }
    let got = slot.evaluate().unwrap();
    for i in 0..positions.len() {
        assert_eq!(got.policy(i), want.policy(i), "position {i}: logits differ");
        assert_eq!(got.wdl(i), want.wdl(i), "position {i}: wdl differs");
    }
    let c = evaluator.copy_stats().unwrap();
    assert_eq!(c.input_bytes, (positions.len() * len * 2) as u64, "{c:?}");
}

#[test]
fn encoded_16_bit_planes_are_the_f32_planes_rounded() {
    use half::{bf16, f16};
    let (encoder, positions) = game_positions(60);
    let len = encoder.input_len();
    let (mut a, mut h, mut b) = (vec![0f32; len], vec![f16::ZERO; len], vec![bf16::ZERO; len]);
    for p in &positions {
        encoder.encode(p, &mut a);
        encoder.encode_planes(p, koma_model::Planes::F16(&mut h));
        encoder.encode_planes(p, koma_model::Planes::Bf16(&mut b));
        for i in 0..len {
            assert_eq!(h[i], f16::from_f32(a[i]), "value {i} of {}", p.to_sfen());
            assert_eq!(b[i], bf16::from_f32(a[i]), "value {i} of {}", p.to_sfen());
        }
        assert!(a.iter().any(|v| *v != 0.0 && *v != 1.0) || p.move_number() == 1, "fractional planes exercised");
    }
}
