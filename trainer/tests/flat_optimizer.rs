//! The flattened optimiser against the per-tensor formulas it replaces (PyTorch's SGD
//! with Nesterov momentum and L2 decay, AdamW with decoupled decay, decay on tensors of
//! rank 2 or more only), steps without a wait for the device against steps that read
//! their statistics each time, and sparse policy targets (scattered by the learner)
//! against dense ones.

mod common;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use model::tch::{Device, Kind, Tensor};
use model::{Net, NetConfig};
use rules::Variant;
use trainer::config::{OptimizerKind, TrainConfig};
use trainer::data::{encode_batch, encode_batch_with, PolicyTargets, ValueTargets};
use trainer::learning::optim::Optimizer;
use trainer::NetTrainer;

fn tiny_net(seed: u64) -> Net {
    let cfg = NetConfig::tiny();
    Net::new(&cfg, Encoder::new(Variant::Shogi).net_shape(), seed, Device::Cpu).unwrap()
}

fn trainable(net: &Net) -> Vec<(String, Tensor)> {
    let mut v: Vec<_> = net.var_store().variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// A made-up loss whose gradients differ per tensor: sum of p^2 * (i + 1) / 7 + p.
fn backward(net: &Net) {
    let loss = trainable(net)
        .iter()
        .enumerate()
        .map(|(i, (_, t))| ((t * t) * ((i + 1) as f64 / 7.0) + t).sum(Kind::Float))
        .fold(Tensor::from(0.0f32), |a, b| a + b);
    loss.backward();
}

fn snapshot(net: &Net) -> Vec<Tensor> {
    trainable(net).iter().map(|(_, t)| t.detach().copy()).collect()
}

fn grads(net: &Net) -> Vec<Tensor> {
    trainable(net).iter().map(|(_, t)| t.grad().copy()).collect()
}

#[test]
fn two_steps_match_the_per_tensor_formulas() {
    for kind in [OptimizerKind::Sgd, OptimizerKind::Adamw] {
        let cfg = TrainConfig {
            optimizer: kind,
            momentum: 0.9,
            nesterov: true,
            weight_decay: 0.01,
            beta2: 0.999,
            adam_eps: 1e-8,
            ..Default::default()
        };
        let net = tiny_net(3);
        let mut opt = Optimizer::new(net.var_store(), &cfg);
        let mut expect = snapshot(&net);
        let mut m: Vec<Tensor> = expect.iter().map(|t| t.zeros_like()).collect();
        let mut v: Vec<Tensor> = expect.iter().map(|t| t.zeros_like()).collect();
        let lr = 0.05;
        for t in 1..=2 {
            opt.zero_grad();
            backward(&net);
            let g = grads(&net);
            opt.step(lr);
            for i in 0..expect.len() {
                let wd = if expect[i].dim() >= 2 { cfg.weight_decay } else { 0.0 };
                let p = &expect[i];
                expect[i] = match kind {
                    OptimizerKind::Sgd => {
                        let gi = &g[i] + p * wd;
                        m[i] = &m[i] * cfg.momentum + &gi;
                        p - (&gi + &m[i] * cfg.momentum) * lr
                    }
                    OptimizerKind::Adamw => {
                        let b1 = cfg.momentum;
                        m[i] = &m[i] * b1 + &g[i] * (1.0 - b1);
                        v[i] = &v[i] * cfg.beta2 + g[i].square() * (1.0 - cfg.beta2);
                        let mhat = &m[i] / (1.0 - b1.powi(t));
                        let vhat = &v[i] / (1.0 - cfg.beta2.powi(t));
                        p * (1.0 - lr * wd) - mhat / (vhat.sqrt() + cfg.adam_eps) * lr
                    }
                };
            }
            for ((name, got), want) in trainable(&net).iter().zip(&expect) {
                let d = (got - want).abs().max().double_value(&[]);
                assert!(d < 1e-5, "{kind:?} step {t}: {name} differs by {d}");
            }
        }
        assert_eq!(opt.updates(), 2);
    }
}

fn samples() -> Vec<Sample> {
    common::game_samples(16, 5, |i| if i % 3 == 0 { GameResult::Win } else { GameResult::Draw }, [0.4, 0.2, 0.4])
}

#[test]
fn deferred_statistics_equal_the_per_step_ones() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    let cfg = TrainConfig { optimizer: OptimizerKind::Sgd, lr: 0.02, grad_clip: 0.5, ..Default::default() };
    let mut each = NetTrainer::new(tiny_net(5), &cfg, 0);
    let mut deferred = NetTrainer::new(tiny_net(5), &cfg, 0);
    let mut sum = trainer::StepStats::default();
    for _ in 0..5 {
        sum.add(&each.train_step(&batch).unwrap());
        deferred.train_step_deferred(&batch);
    }
    let mean = sum.scaled(1.0 / 5.0);
    let got = deferred.take_stats().unwrap().expect("five steps ran");
    assert_eq!(deferred.step, 5);
    assert!(!got.skipped);
    for (what, a, b) in [
        ("loss", mean.loss, got.loss),
        ("policy", mean.policy_loss, got.policy_loss),
        ("value", mean.value_loss, got.value_loss),
        ("accuracy", mean.policy_accuracy, got.policy_accuracy),
        ("grad norm", mean.grad_norm, got.grad_norm),
    ] {
        assert!((a - b).abs() < 1e-5 * a.abs().max(1.0), "{what}: per step {a}, deferred {b}");
    }
    // Clipping happened (the norm is above 0.5) and both took the same steps.
    assert!(got.grad_norm > 0.5);
    for ((n, a), (_, b)) in trainable(&each.net).iter().zip(trainable(&deferred.net).iter()) {
        let d = (a - b).abs().max().double_value(&[]);
        assert!(d < 1e-6, "{n} differs by {d}");
    }
    // Nothing ran since: no statistics.
    assert!(deferred.take_stats().unwrap().is_none());
}

#[test]
fn sparse_policy_targets_train_like_dense_ones() {
    let enc = Encoder::new(Variant::Shogi);
    let mut s = samples();
    // A sample without a policy target and one with two moves.
    s[3].full_search = false;
    s[4].policy = vec![(s[4].policy[0].0, 0.75), (0, 0.25)];
    let dense = encode_batch(&enc, &s, ValueTargets::RESULT);
    let sparse = encode_batch_with(&enc, &s, ValueTargets::RESULT, PolicyTargets::Sparse);
    assert!(sparse.policy.is_empty());
    assert_eq!(sparse.policy_index.len(), 16, "15 one-move targets and one two-move one, one without");
    assert_eq!(sparse.inputs, dense.inputs);
    let cfg = TrainConfig { optimizer: OptimizerKind::Adamw, lr: 0.01, ..Default::default() };
    let mut a = NetTrainer::new(tiny_net(8), &cfg, 0);
    let mut b = NetTrainer::new(tiny_net(8), &cfg, 0);
    for _ in 0..3 {
        let (x, y) = (a.train_step(&dense).unwrap(), b.train_step(&sparse).unwrap());
        assert!((x.loss - y.loss).abs() < 1e-6 && (x.policy_accuracy - y.policy_accuracy).abs() < 1e-9, "{x:?} {y:?}");
    }
}
