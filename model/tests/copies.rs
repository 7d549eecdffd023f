//! The evaluator's host data path: one copy in, at most one out, counted by the
//! evaluator itself as it copies (`Evaluator::copy_stats`), through the batcher with
//! several producers whose requests are merged into one forward pass.

mod common;

use std::sync::{Arc, Barrier};

use common::*;
use koma_model::tch::{Device, Kind};
use koma_model::{Batcher, BatcherConfig, Evaluator, Net, Precision, TorchEvaluator};

/// Three producers, two slots each (double buffering), several rounds; returns the
/// evaluator's copy counters and checks every result against a direct evaluation.
fn run_producers(precision: Precision, reduced: bool) -> (koma_model::CopyStats, u64, usize) {
    let shape = tiny_shape();
    let net = Net::new(&tiny_config(), shape, 9, Device::Cpu).unwrap();
    let evaluator = Arc::new(TorchEvaluator::new(&net, Device::Cpu, precision).unwrap());
    let reference = Arc::new(TorchEvaluator::new(&net, Device::Cpu, precision).unwrap());
    let config = BatcherConfig { max_batch: 64, max_wait: std::time::Duration::from_millis(20), ..Default::default() };
    let batcher = Batcher::spawn(evaluator.clone(), config);
    let producers = 3;
    let barrier = Arc::new(Barrier::new(producers));
    let threads: Vec<_> = (0..producers)
        .map(|id| {
            let handle = batcher.handle();
            let barrier = barrier.clone();
            let reference = reference.clone();
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
                        slot.inputs_mut(n + 3)[..x.len()].copy_from_slice(&x);
                        slot.set_len(n);
                        slot.submit().unwrap();
                        sent.push((x, n));
                    }
                    for (slot, (x, n)) in slots.iter_mut().zip(sent) {
                        let got = slot.wait().unwrap();
                        let want = reference.evaluate(&x, n).unwrap();
                        assert_eq!(got.batch(), n);
                        let expect_kind = if reduced { reference.kind() } else { Kind::Float };
                        assert_eq!(got.policy_kind(), expect_kind);
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
    (evaluator.copy_stats().unwrap(), stats.forward_passes, stats.requests as usize)
}

#[test]
fn each_input_is_copied_once_and_outputs_are_handed_over() {
    let (c, passes, requests) = run_producers(Precision::F32, true);
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
    let (c, _, _) = run_producers(Precision::Bf16, true);
    assert_eq!(c.input_bytes_copied, c.input_bytes, "one copy in (converted to bf16 on the way): {c:?}");
    assert_eq!(c.output_bytes_copied, 0, "bf16 logits handed over as they are: {c:?}");
}

#[test]
fn bf16_inference_converts_once_for_f32_consumers() {
    let (c, _, _) = run_producers(Precision::Bf16, false);
    assert_eq!(c.input_bytes_copied, c.input_bytes, "{c:?}");
    // The f32 logits are one conversion pass over the bf16 ones: at most one copy out.
    assert!(c.output_bytes_copied > 0 && c.output_bytes_copied <= c.output_bytes, "{c:?}");
}
