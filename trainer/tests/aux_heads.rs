//! The training-only heads (`model.reply_policy_head`, `model.material_head`) in the
//! trainer: their losses are finite, fall on a repeated batch, are masked for samples
//! without their targets, and a network without the heads trains as before.

mod common;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use model::tch::Device;
use model::{Net, NetConfig};
use rules::Variant;
use trainer::config::{OptimizerKind, TrainConfig};
use trainer::data::{encode_batch, ValueTargets, FINAL_MATERIAL_SCALE};
use trainer::NetTrainer;

/// A game's samples with their auxiliary targets: the reply policy is the next sample's
/// policy (none for the last), the final material a value per sample (none for every
/// fifth).
fn samples() -> Vec<Sample> {
    let mut s =
        common::game_samples(16, 7, |i| if i % 2 == 0 { GameResult::Win } else { GameResult::Loss }, [0.4, 0.2, 0.4]);
    for i in 0..s.len() {
        s[i].aux.reply_policy = s.get(i + 1).map(|n| n.policy.clone()).unwrap_or_default();
        s[i].aux.final_material = (i % 5 != 4).then_some(if i % 2 == 0 { 12.0 } else { -12.0 });
    }
    s
}

fn net(reply_policy_head: bool, material_head: bool) -> Net {
    let cfg = NetConfig {
        blocks: 1,
        channels: 16,
        value_channels: 4,
        value_hidden: 16,
        reply_policy_head,
        material_head,
        ..Default::default()
    };
    Net::new(&cfg, Encoder::new(Variant::Shogi).net_shape(), 1, Device::Cpu).unwrap()
}

fn config() -> TrainConfig {
    TrainConfig { optimizer: OptimizerKind::Adamw, lr: 0.003, warmup_steps: 0, batch_size: 16, ..Default::default() }
}

#[test]
fn the_auxiliary_losses_are_finite_and_fall_on_a_repeated_batch() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    assert_eq!(batch.reply_mask.iter().sum::<f32>(), 15.0);
    assert_eq!(batch.material_mask.iter().sum::<f32>(), 13.0);
    assert!((batch.material[0] - (12.0 / FINAL_MATERIAL_SCALE).tanh()).abs() < 1e-6);
    let mut l = NetTrainer::new(net(true, true), &config(), 0);
    let first = l.train_step(&batch).unwrap();
    let (reply0, material0) = (first.reply_policy_loss.unwrap(), first.material_loss.unwrap());
    assert!(reply0.is_finite() && reply0 > 0.0 && material0.is_finite() && material0 > 0.0, "{first:?}");
    // The total counts them with their weights.
    let main = first.policy_loss * config().policy_weight + first.value_loss * config().value_weight;
    let expected = main + 0.15 * reply0 + 0.1 * material0;
    assert!((first.loss - expected).abs() < 1e-4, "{} vs {expected}", first.loss);
    let mut last = first;
    for _ in 0..60 {
        last = l.train_step(&batch).unwrap();
    }
    let (reply, material) = (last.reply_policy_loss.unwrap(), last.material_loss.unwrap());
    assert!(reply < 0.5 * reply0, "reply loss {reply0} -> {reply}");
    assert!(material < 0.5 * material0, "material loss {material0} -> {material}");
}

#[test]
fn samples_without_the_targets_are_masked() {
    let enc = Encoder::new(Variant::Shogi);
    // Samples of an older chunk: no auxiliary targets.
    let bare = common::game_samples(8, 3, |_| GameResult::Draw, [0.3, 0.4, 0.3]);
    let batch = encode_batch(&enc, &bare, ValueTargets::RESULT);
    assert!(batch.reply_index.is_empty() && batch.reply_mask.iter().all(|&m| m == 0.0));
    let l = NetTrainer::new(net(true, true), &config(), 0);
    let v = l.validate(&batch);
    assert_eq!((v.reply_policy_loss, v.material_loss), (Some(0.0), Some(0.0)));
    assert!((v.loss - (v.policy_loss + v.value_loss)).abs() < 1e-5, "{v:?}");
}

#[test]
fn a_network_without_the_heads_reports_no_auxiliary_loss() {
    let enc = Encoder::new(Variant::Shogi);
    let batch = encode_batch(&enc, &samples(), ValueTargets::RESULT);
    let mut l = NetTrainer::new(net(false, false), &config(), 0);
    let st = l.train_step(&batch).unwrap();
    assert_eq!((st.reply_policy_loss, st.material_loss), (None, None));
    assert!((st.loss - (st.policy_loss + st.value_loss)).abs() < 1e-5, "{st:?}");
    // One head alone.
    let mut l = NetTrainer::new(net(false, true), &config(), 0);
    let st = l.train_step(&batch).unwrap();
    assert!(st.reply_policy_loss.is_none() && st.material_loss.is_some_and(f64::is_finite));
}
