mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::*;
use koma_model::tch::Device;
use koma_model::{
    BatchError, Batcher, BatcherConfig, EvalError, Evaluation, Evaluator, Net, NetShape, Precision, TorchEvaluator,
    UniformEvaluator,
};

fn shape() -> NetShape {
    NetShape { input_planes: 2, board_height: 3, board_width: 3, policy_planes: 2 }
}

/// Output derived from each position's own input, so misrouted results are caught:
/// policy[k] = input[k % input_len] * 10 + k + tag, wdl = (input[0], input[1], batch size).
struct Echo {
    shape: NetShape,
    tag: f32,
    delay: Duration,
    max_batch_seen: AtomicUsize,
    fail_on: Option<f32>,
}

impl Echo {
    fn new(delay: Duration) -> Self {
        Echo { shape: shape(), tag: 0.0, delay, max_batch_seen: AtomicUsize::new(0), fail_on: None }
    }
}

impl Evaluator for Echo {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        let (il, pl) = (self.shape.input_len(), self.shape.policy_len());
        assert_eq!(inputs.len(), batch * il);
        if let Some(bad) = self.fail_on {
            if inputs.chunks(il).any(|x| x[0] == bad) {
                return Err(EvalError::Backend("poisoned input".into()));
            }
            if inputs.chunks(il).any(|x| x[0] == -bad) {
                panic!("evaluator exploded");
            }
        }
        self.max_batch_seen.fetch_max(batch, Ordering::Relaxed);
        std::thread::sleep(self.delay);
        out.resize(batch, pl);
        let (p, w) = out.buffers_mut();
        for i in 0..batch {
            let x = &inputs[i * il..(i + 1) * il];
            for k in 0..pl {
                p[i * pl + k] = x[k % il] * 10.0 + k as f32 + self.tag;
            }
            w[i * 3..i * 3 + 3].copy_from_slice(&[x[0], x[1], batch as f32]);
        }
        Ok(())
    }
}

fn fill(buf: &mut [f32], id: f32) {
    for (j, v) in buf.iter_mut().enumerate() {
        *v = id + j as f32 * 1e-3;
    }
}

fn check(out: &Evaluation, inputs: &[f32], tag: f32) {
    let (il, pl) = (shape().input_len(), shape().policy_len());
    assert_eq!(out.batch() * il, inputs.len());
    for i in 0..out.batch() {
        let x = &inputs[i * il..(i + 1) * il];
        for k in 0..pl {
            assert_eq!(out.policy(i)[k], x[k % il] * 10.0 + k as f32 + tag, "position {i} logit {k}");
        }
        assert_eq!(out.wdl(i)[..2], x[..2]);
    }
}

#[test]
fn many_producers_get_their_own_results_and_batches_form() {
    let echo = Arc::new(Echo::new(Duration::from_micros(300)));
    let batcher = Batcher::spawn(
        echo.clone(),
        BatcherConfig { max_batch: 64, max_wait: Duration::from_millis(2), ..Default::default() },
    );
    let threads = 12;
    let per_thread = 60;
    let total_positions = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let h = batcher.handle();
            let total = total_positions.clone();
            std::thread::spawn(move || {
                let mut slot = h.slot();
                for r in 0..per_thread {
                    let n = 1 + (t * 7 + r * 13) % 23;
                    let id = (t * 1000 + r) as f32;
                    fill(slot.inputs_mut(n), id);
                    let inputs = slot_inputs_copy(n, id);
                    let out = slot.evaluate().expect("evaluation");
                    check(out, &inputs, 0.0);
                    total.fetch_add(n, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let stats = batcher.shutdown();
    assert_eq!(stats.requests, (threads * per_thread) as u64);
    assert_eq!(stats.positions, total_positions.load(Ordering::Relaxed) as u64);
    assert!(stats.forward_passes < stats.requests, "no batching happened: {stats:?}");
    assert!(stats.mean_batch() > 1.0);
    assert!(echo.max_batch_seen.load(Ordering::Relaxed) <= 64);
}

fn slot_inputs_copy(n: usize, id: f32) -> Vec<f32> {
    let mut v = vec![0.0; n * shape().input_len()];
    fill(&mut v, id);
    v
}

#[test]
fn shutdown_answers_every_accepted_request() {
    let batcher = Batcher::spawn(
        Arc::new(Echo::new(Duration::from_millis(2))),
        BatcherConfig { max_batch: 16, max_wait: Duration::from_millis(1), ..Default::default() },
    );
    let threads = 16;
    let start = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let h = batcher.handle();
            let start = start.clone();
            std::thread::spawn(move || {
                let mut slot = h.slot();
                let (mut ok, mut closed) = (0u64, 0u64);
                start.wait();
                for r in 0.. {
                    let n = 1 + (t + r) % 5;
                    let id = (t * 100_000 + r) as f32;
                    fill(slot.inputs_mut(n), id);
                    match slot.submit() {
                        Ok(()) => {}
                        Err(BatchError::Closed) => {
                            closed += 1;
                            break;
                        }
                        Err(e) => panic!("submit: {e}"),
                    }
                    // Accepted: it must be answered, even though shutdown is under way.
                    let out = slot.wait().expect("an accepted request must be answered");
                    check(out, &slot_inputs_copy(n, id), 0.0);
                    ok += 1;
                }
                (ok, closed)
            })
        })
        .collect();
    start.wait();
    std::thread::sleep(Duration::from_millis(30));
    let stats = batcher.shutdown();
    let (mut ok, mut closed) = (0, 0);
    for h in handles {
        let (o, c) = h.join().expect("producer must not hang or panic");
        ok += o;
        closed += c;
    }
    assert_eq!(closed, threads as u64, "every producer sees Closed after shutdown");
    assert_eq!(stats.requests, ok, "answered requests == accepted requests");
    assert!(ok > 0);
}

#[test]
fn dropping_the_batcher_drains_queued_requests() {
    let batcher = Batcher::spawn(
        Arc::new(Echo::new(Duration::from_millis(5))),
        BatcherConfig { max_batch: 4, max_wait: Duration::from_millis(50), ..Default::default() },
    );
    let h = batcher.handle();
    // Queue many requests without waiting, then drop the batcher.
    let mut slots: Vec<_> = (0..20).map(|_| h.slot()).collect();
    for (i, s) in slots.iter_mut().enumerate() {
        fill(s.inputs_mut(3), i as f32);
        s.submit().unwrap();
    }
    drop(batcher);
    for (i, s) in slots.iter_mut().enumerate() {
        let out = s.wait().expect("queued before shutdown, so answered");
        check(out, &slot_inputs_copy(3, i as f32), 0.0);
    }
    // Afterwards the handle refuses new work instead of hanging.
    fill(slots[0].inputs_mut(1), 0.0);
    assert_eq!(slots[0].submit(), Err(BatchError::Closed));
    assert!(matches!(h.evaluate(&slot_inputs_copy(1, 0.0), 1), Err(BatchError::Closed)));
}

#[test]
fn oversized_request_runs_alone_and_zero_wait_works() {
    let echo = Arc::new(Echo::new(Duration::ZERO));
    let batcher =
        Batcher::spawn(echo.clone(), BatcherConfig { max_batch: 8, max_wait: Duration::ZERO, ..Default::default() });
    let h = batcher.handle();
    let inputs = slot_inputs_copy(50, 7.0);
    let out = h.evaluate(&inputs, 50).unwrap();
    check(&out, &inputs, 0.0);
    assert_eq!(echo.max_batch_seen.load(Ordering::Relaxed), 50);
    let out = h.evaluate(&slot_inputs_copy(0, 0.0), 0).unwrap();
    assert_eq!(out.batch(), 0);
    // Wrong input length is rejected locally.
    assert!(matches!(h.evaluate(&[1.0; 5], 1), Err(BatchError::Eval(EvalError::InputLength { .. }))));
}

#[test]
fn errors_and_panics_reach_every_request_of_the_batch_and_the_service_survives() {
    let mut echo = Echo::new(Duration::from_millis(1));
    echo.fail_on = Some(666.0);
    let batcher = Batcher::spawn(
        Arc::new(echo),
        BatcherConfig { max_batch: 64, max_wait: Duration::from_millis(20), ..Default::default() },
    );
    let h = batcher.handle();
    let mut good = h.slot();
    let mut bad = h.slot();
    fill(good.inputs_mut(2), 1.0);
    fill(bad.inputs_mut(2), 666.0);
    good.submit().unwrap();
    bad.submit().unwrap();
    // Both landed in one batch (20 ms window), so both get the error.
    assert!(matches!(bad.wait(), Err(BatchError::Eval(EvalError::Backend(_)))));
    assert!(matches!(good.wait(), Err(BatchError::Eval(EvalError::Backend(_)))));
    // A panic inside the evaluator becomes an error too.
    fill(bad.inputs_mut(1), -666.0);
    assert!(matches!(bad.evaluate(), Err(BatchError::Eval(EvalError::Panic(_)))));
    // The slot and the service still work afterwards.
    fill(good.inputs_mut(2), 5.0);
    check(good.evaluate().unwrap(), &slot_inputs_copy(2, 5.0), 0.0);
    assert_eq!(batcher.stats().requests, 4);
}

#[test]
fn replacing_the_evaluator_applies_to_later_requests() {
    let batcher = Batcher::spawn(Arc::new(Echo::new(Duration::ZERO)), BatcherConfig::default());
    let h = batcher.handle();
    let x = slot_inputs_copy(2, 3.0);
    check(&h.evaluate(&x, 2).unwrap(), &x, 0.0);
    let mut e2 = Echo::new(Duration::ZERO);
    e2.tag = 0.5;
    batcher.replace_evaluator(Arc::new(e2)).unwrap();
    check(&h.evaluate(&x, 2).unwrap(), &x, 0.5);
    let other = NetShape { input_planes: 3, ..shape() };
    assert!(batcher.replace_evaluator(Arc::new(UniformEvaluator::new(other))).is_err());
}

#[test]
fn slots_reuse_their_buffers() {
    let batcher = Batcher::spawn(Arc::new(Echo::new(Duration::ZERO)), BatcherConfig::default());
    let mut slot = batcher.handle().slot();
    fill(slot.inputs_mut(32), 1.0);
    slot.evaluate().unwrap();
    let (pi, pp) = (slot.inputs_mut(32).as_ptr(), slot.output().unwrap().policy_all().as_ptr());
    for n in [32, 5, 17, 32] {
        fill(slot.inputs_mut(n), 2.0);
        check(slot.evaluate().unwrap(), &slot_inputs_copy(n, 2.0), 0.0);
    }
    assert_eq!(slot.inputs_mut(32).as_ptr(), pi, "input buffer reallocated");
    assert_eq!(slot.output().unwrap().policy_all().as_ptr(), pp, "output buffer reallocated");
    assert_eq!(slot.wait().unwrap_err(), BatchError::NotSubmitted);
}

#[test]
fn torch_net_through_the_batcher_matches_direct_evaluation() {
    let shape = tiny_shape();
    let net = Net::new(&tiny_config(), shape, 21, Device::Cpu).unwrap();
    train_bn_stats(&net, 400);
    let ev = Arc::new(TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap());
    let batcher = Batcher::spawn(
        ev.clone(),
        BatcherConfig { max_batch: 32, max_wait: Duration::from_millis(3), ..Default::default() },
    );
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let h = batcher.handle();
            let ev = ev.clone();
            let _stop = stop.clone();
            std::thread::spawn(move || {
                let mut slot = h.slot();
                for r in 0..10 {
                    let n = 1 + (t + r) % 6;
                    let x = random_inputs(n * shape.input_len(), (t * 100 + r) as u64);
                    slot.inputs_mut(n).copy_from_slice(&x);
                    let got = slot.evaluate().unwrap().clone();
                    let want = ev.evaluate(&x, n).unwrap();
                    assert!(max_abs_diff(got.policy_all(), want.policy_all()) < 1e-4);
                    assert!(max_abs_diff(got.wdl_all(), want.wdl_all()) < 1e-5);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let stats = batcher.shutdown();
    assert_eq!(stats.requests, 40);
}
