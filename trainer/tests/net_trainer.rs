//! The network trainer ([`trainer::NetTrainer`]) on a fixed small batch: both optimisers lower the loss (in f32 and in
//! bf16 on the CPU), and the optimiser state survives a save/load round trip exactly.

mod common;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use model::tch::Device;
use model::{Net, NetConfig};
use rules::Variant;
use trainer::config::{OptimizerKind, TrainConfig, TrainPrecision};
use trainer::data::{encode_batch, ValueTargets};
use trainer::learning::optim::Optimizer;
use trainer::NetTrainer;

fn samples() -> Vec<Sample> {
    common::game_samples(16, 7, |i| if i % 2 == 0 { GameResult::Win } else { GameResult::Loss }, [0.4, 0.2, 0.4])
}

fn tiny_net(seed: u64) -> Net {
    let cfg = NetConfig { blocks: 1, channels: 16, value_channels: 4, value_hidden: 16, ..Default::default() };
    Net::new(&cfg, Encoder::new(Variant::Shogi).net_shape(), seed, Device::Cpu).unwrap()
}

#[test]
fn both_optimisers_fit_a_batch() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    for (kind, lr) in [(OptimizerKind::Sgd, 0.05), (OptimizerKind::Adamw, 0.003)] {
        let cfg = TrainConfig { optimizer: kind, lr, warmup_steps: 5, batch_size: 16, ..Default::default() };
        let mut l = NetTrainer::new(tiny_net(1), &cfg, 0);
        let first = l.train_step(&batch).unwrap();
        let mut last = first;
        for _ in 0..60 {
            last = l.train_step(&batch).unwrap();
        }
        assert_eq!(l.step, 61);
        assert!(last.loss < 0.5 * first.loss, "{kind:?}: loss {} -> {}", first.loss, last.loss);
        assert!(last.policy_accuracy > 0.9, "{kind:?}: accuracy {}", last.policy_accuracy);
        assert!(first.lr < last.lr, "warm-up");
    }
}

/// `precision = bf16` on the CPU: the passes run on a bf16 copy, the f32 weights take
/// the updates, and the copy follows them (the f32 network's own loss falls as well).
#[test]
fn bf16_training_steps_on_the_cpu() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    let cfg = TrainConfig {
        optimizer: OptimizerKind::Adamw,
        lr: 0.003,
        warmup_steps: 5,
        batch_size: 16,
        precision: TrainPrecision::Bf16,
        ..Default::default()
    };
    let mut l = NetTrainer::new(tiny_net(1), &cfg, 0);
    let before = l.validate(&batch);
    let weights = |l: &NetTrainer| -> Vec<f32> {
        let w = l.net.var_store().variables()["stem.conv.weight"].shallow_clone();
        assert_eq!(w.kind(), model::tch::Kind::Float, "the weights stay f32");
        Vec::<f32>::try_from(w.flatten(0, -1)).unwrap()
    };
    let w0 = weights(&l);
    let first = l.train_step(&batch).unwrap();
    assert!(!first.skipped && first.loss.is_finite(), "{first:?}");
    let w1 = weights(&l);
    let moved = w0.iter().zip(&w1).filter(|(a, b)| a != b).count();
    assert!(moved > w0.len() / 2, "one bf16 step moved {moved} of {} f32 weights", w0.len());
    let mut last = first;
    for _ in 0..60 {
        last = l.train_step(&batch).unwrap();
    }
    assert!(last.loss < 0.5 * first.loss, "bf16: loss {} -> {}", first.loss, last.loss);
    // Evaluated in f32 on the f32 weights, after the copy's batch-norm statistics came back.
    let after = l.validate(&batch);
    assert!(after.loss < 0.7 * before.loss, "f32 loss {} -> {}", before.loss, after.loss);
}

#[test]
fn optimiser_state_round_trips() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    let dir = tempfile::tempdir().unwrap();
    for kind in [OptimizerKind::Sgd, OptimizerKind::Adamw] {
        let cfg = TrainConfig { optimizer: kind, lr: 0.01, warmup_steps: 0, ..Default::default() };
        let mut a = NetTrainer::new(tiny_net(2), &cfg, 0);
        for _ in 0..3 {
            a.train_step(&batch).unwrap();
        }
        let p = dir.path().join(format!("{kind:?}.optim.safetensors"));
        a.opt.save(&p).unwrap();
        // Same weights, loaded state: the next step gives identical weights.
        let wpath = dir.path().join(format!("{kind:?}-w"));
        let info = model::CheckpointInfo {
            variant: "shogi".into(),
            encoder_version: model::encoding::ENCODER_VERSION,
            step: 3,
            leaf_material: None,
        };
        model::save_checkpoint(&a.net, &wpath, &info).unwrap();
        let (net_b, _) = model::load_net(&wpath, &model::Expected::any(), Device::Cpu).unwrap();
        let mut b = NetTrainer::new(net_b, &cfg, 3);
        assert!(b.opt.load(&p).unwrap());
        assert_eq!(b.opt.updates(), 3);
        a.train_step(&batch).unwrap();
        b.train_step(&batch).unwrap();
        let (pa, _) = a.net.forward_host(&batch.inputs[..enc.input_len()], 1).unwrap();
        let (pb, _) = b.net.forward_host(&batch.inputs[..enc.input_len()], 1).unwrap();
        let diff = pa.iter().zip(&pb).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(diff < 1e-4, "{kind:?}: resumed weights differ by {diff}");
        // A damaged file is refused.
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.truncate(bytes.len() / 2);
        std::fs::write(&p, &bytes).unwrap();
        let mut c = Optimizer::new(a.net.var_store(), &cfg);
        assert!(c.load(&p).is_err());
    }
}

/// Samples of a game without a known result add nothing to the value loss (evaluation-mode
/// batch norm: each sample's output is its own).
#[test]
fn unknown_results_stay_out_of_the_value_loss() {
    let enc = Encoder::new(Variant::Shogi);
    let known = samples();
    let unknown: Vec<Sample> = known.iter().map(|s| Sample { result: None, ..s.clone() }).collect();
    let mixed: Vec<Sample> = known.iter().chain(&unknown).cloned().collect();
    let l = NetTrainer::new(tiny_net(3), &TrainConfig::default(), 0);
    let a = l.validate(&encode_batch(&enc, &known, ValueTargets::RESULT));
    let b = l.validate(&encode_batch(&enc, &mixed, ValueTargets::RESULT));
    assert!(a.value_loss > 0.1);
    assert!((a.value_loss - b.value_loss).abs() < 1e-5, "{} vs {}", a.value_loss, b.value_loss);
    assert!((a.value_mse - b.value_mse).abs() < 1e-5, "{} vs {}", a.value_mse, b.value_mse);
    let c = l.validate(&encode_batch(&enc, &unknown, ValueTargets::RESULT));
    assert_eq!((c.value_loss, c.value_mse), (0.0, 0.0));
}

/// Every variable of `net` by name: (name, trainable, values).
fn variables(net: &Net) -> Vec<(String, bool, Vec<f32>)> {
    let mut v: Vec<_> = net
        .var_store()
        .variables()
        .into_iter()
        .map(|(n, t)| {
            (n, t.requires_grad(), Vec::<f32>::try_from(t.to_kind(model::tch::Kind::Float).flatten(0, -1)).unwrap())
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn max_difference(a: &[(String, bool, Vec<f32>)], b: &[(String, bool, Vec<f32>)]) -> f32 {
    assert!(a.iter().map(|x| &x.0).eq(b.iter().map(|x| &x.0)));
    a.iter().zip(b).flat_map(|(x, y)| x.2.iter().zip(&y.2).map(|(p, q)| (p - q).abs())).fold(0.0, f32::max)
}

/// `train.ema_decay`: after each step the playing network's weights are `d * average +
/// (1 - d) * weights` with `d = min(decay, (1 + t) / (10 + t))`, computed here by hand
/// from the raw weights after each step; its batch-norm statistics are the live ones.
#[test]
fn the_weight_average_is_the_hand_computed_one() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    let decay = 0.5;
    let cfg = TrainConfig { lr: 0.05, warmup_steps: 0, ema_decay: decay, ..Default::default() };
    let mut l = NetTrainer::new(tiny_net(4), &cfg, 0);
    let mut expected = variables(&l.net);
    assert_eq!(max_difference(&variables(l.playing_net()), &expected), 0.0, "the average starts at the weights");
    for t in 0..12u64 {
        l.train_step(&batch).unwrap();
        let d = decay.min((1.0 + t as f64) / (10.0 + t as f64)) as f32;
        for ((_, trainable, e), (_, _, w)) in expected.iter_mut().zip(variables(&l.net)) {
            for (e, w) in e.iter_mut().zip(w) {
                *e = if *trainable { d * *e + (1.0 - d) * w } else { w };
            }
        }
    }
    let average = variables(l.playing_net());
    let diff = max_difference(&average, &expected);
    assert!(diff < 1e-5, "the average differs from the hand-computed one by {diff}");
    assert!(max_difference(&average, &variables(&l.net)) > 1e-3, "the average is not the raw weights");
}

/// With `train.ema_decay` a checkpoint holds the average; its optimiser state file holds
/// the raw weights (version 3), and a trainer built from both continues exactly: same
/// raw weights, same average. Without it the file stays version 2 without weights.
#[test]
fn a_checkpoint_holds_the_average_and_resume_restores_both() {
    use trainer::learning::optim::{optim_path, OPTIM_FORMAT_VERSION, OPTIM_FORMAT_VERSION_WITH_WEIGHTS};
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    let dir = tempfile::tempdir().unwrap();
    let version = |stem: &std::path::Path| {
        let bytes = std::fs::read(optim_path(stem)).unwrap();
        let meta = nn::file::tensors::metadata(&bytes).unwrap();
        let count = nn::file::tensors::decode(&bytes).unwrap().len();
        (meta["format_version"].parse::<u32>().unwrap(), count)
    };
    for ema_decay in [0.0, 0.9] {
        let cfg =
            TrainConfig { optimizer: OptimizerKind::Adamw, lr: 0.01, warmup_steps: 0, ema_decay, ..Default::default() };
        let mut a = NetTrainer::new(tiny_net(5), &cfg, 0);
        for _ in 0..4 {
            a.train_step(&batch).unwrap();
        }
        let stem = dir.path().join(format!("ckpt-{ema_decay}"));
        a.save_training_state(&stem).unwrap();
        let info = model::CheckpointInfo {
            variant: "shogi".into(),
            encoder_version: model::encoding::ENCODER_VERSION,
            step: 4,
            leaf_material: None,
        };
        model::save_checkpoint(a.playing_net(), &stem, &info).unwrap();
        let (net_b, _) = model::load_net(&stem, &model::Expected::any(), Device::Cpu).unwrap();
        assert_eq!(
            max_difference(&variables(&net_b), &variables(a.playing_net())),
            0.0,
            "the checkpoint holds the playing net"
        );
        let params = variables(&a.net).iter().filter(|v| v.1).count();
        if ema_decay == 0.0 {
            assert_eq!(version(&stem), (OPTIM_FORMAT_VERSION, 2 * params));
        } else {
            assert_eq!(version(&stem), (OPTIM_FORMAT_VERSION_WITH_WEIGHTS, 3 * params));
            assert!(max_difference(&variables(&net_b), &variables(&a.net)) > 1e-4, "the checkpoint holds the average");
        }
        let mut b = NetTrainer::new(net_b, &cfg, 4);
        assert!(b.load_training_state(&stem).unwrap());
        assert_eq!(max_difference(&variables(&b.net), &variables(&a.net)), 0.0, "raw weights restored");
        assert_eq!(max_difference(&variables(b.playing_net()), &variables(a.playing_net())), 0.0, "average restored");
        a.train_step(&batch).unwrap();
        b.train_step(&batch).unwrap();
        assert!(max_difference(&variables(&b.net), &variables(&a.net)) < 1e-6, "{ema_decay}: raw weights after a step");
        let diff = max_difference(&variables(b.playing_net()), &variables(a.playing_net()));
        assert!(diff < 1e-6, "{ema_decay}: average after a step differs by {diff}");
    }
}
