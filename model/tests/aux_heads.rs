//! The training-only heads (`model.reply_policy_head`, `model.material_head`): their
//! tensors, their outputs, and files that record them; inference reads the main heads
//! only, and files without them stay as they were.

mod common;

use common::*;
use koma_model::tch::{Device, Tensor};
use koma_model::{
    export_model, load_net, save_checkpoint, Evaluator, Expected, Net, NetConfig, Precision, TorchEvaluator,
};
use rules::Variant;

fn with_heads() -> NetConfig {
    NetConfig { reply_policy_head: true, material_head: true, ..tiny_config() }
}

#[test]
fn the_heads_add_their_tensors() {
    let plain = Net::new(&tiny_config(), tiny_shape(), 1, Device::Cpu).unwrap();
    let net = Net::new(&with_heads(), tiny_shape(), 1, Device::Cpu).unwrap();
    let plain_names: Vec<_> = plain.parameter_shapes();
    let shapes: std::collections::BTreeMap<_, _> = net.parameter_shapes().into_iter().collect();
    let extra: Vec<_> = shapes.keys().filter(|n| !plain_names.iter().any(|(p, _)| p == *n)).cloned().collect();
    let bn = ["bias", "running_mean", "running_var", "weight"].map(|s| format!("reply_policy.bn.{s}"));
    let mut expected: Vec<String> = bn.to_vec();
    expected.extend(["material.fc.bias", "material.fc.weight"].map(String::from));
    expected.extend(["reply_policy.conv.weight", "reply_policy.out.bias", "reply_policy.out.weight"].map(String::from));
    expected.sort();
    assert_eq!(extra, expected);
    // The reply head has the main policy head's shape.
    for part in ["conv.weight", "out.weight", "out.bias", "bn.weight"] {
        assert_eq!(shapes[&format!("reply_policy.{part}")], shapes[&format!("policy.{part}")], "{part}");
    }
    assert_eq!(shapes["material.fc.weight"], vec![1, tiny_config().value_hidden as i64]);
}

#[test]
fn forward_heads_adds_the_auxiliary_outputs_and_inference_ignores_them() {
    let net = Net::new(&with_heads(), tiny_shape(), 2, Device::Cpu).unwrap();
    train_bn_stats(&net, 5);
    let n = 4;
    let x = random_inputs(n * tiny_shape().input_len(), 9);
    let s = tiny_shape();
    let xs =
        Tensor::from_slice(&x).view([n as i64, s.input_planes as i64, s.board_height as i64, s.board_width as i64]);
    let out = koma_model::tch::no_grad(|| net.forward_heads(&xs, false));
    let reply = out.reply_policy.expect("reply head");
    let material = out.material.expect("material head");
    assert_eq!(reply.size(), vec![n as i64, s.policy_len() as i64]);
    assert_eq!(material.size(), vec![n as i64]);
    let m: Vec<f32> = Vec::try_from(&material).unwrap();
    assert!(m.iter().all(|v| v.abs() < 1.0), "{m:?}");
    // The main outputs are forward_t's, and the reply head is a head of its own.
    let (policy, wdl) = net.forward_host(&x, n).unwrap();
    assert_eq!(Vec::<f32>::try_from(&out.policy.flatten(0, -1)).unwrap(), policy);
    assert_eq!(Vec::<f32>::try_from(&out.wdl.flatten(0, -1)).unwrap(), wdl);
    assert_ne!(Vec::<f32>::try_from(&reply.flatten(0, -1)).unwrap(), policy);
    // A network without them computes none.
    let plain = Net::new(&tiny_config(), tiny_shape(), 2, Device::Cpu).unwrap();
    let out = koma_model::tch::no_grad(|| plain.forward_heads(&xs, false));
    assert!(out.reply_policy.is_none() && out.material.is_none());
    // The evaluator gives the main heads, as for a network without the extra ones.
    let ev = TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap();
    let e = ev.evaluate(&x, n).unwrap();
    assert!(max_abs_diff(e.policy_all(), &policy) < 1e-4);
}

#[test]
fn files_record_the_heads_and_files_without_them_are_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let net = Net::new(&with_heads(), shogi_shape(), 4, Device::Cpu).unwrap();
    train_bn_stats(&net, 8);
    let (paths, meta) = save_checkpoint(&net, dir.path().join("ckpt-00000007"), &shogi_info(7)).unwrap();
    assert!(meta.net.reply_policy_head && meta.net.material_head);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&paths.meta).unwrap()).unwrap();
    assert_eq!(
        (json["net"]["reply_policy_head"].as_bool(), json["net"]["material_head"].as_bool()),
        (Some(true), Some(true))
    );
    let expected = Expected::variant(Variant::Shogi);
    let (loaded, _) = load_net(&paths.meta, &expected, Device::Cpu).unwrap();
    assert_eq!(loaded.config(), net.config());
    assert_same_outputs(&loaded, &net, 3);
    // As a model file, which the engine, the arena and self-play load as any other.
    let out = dir.path().join("model-shogi.safetensors");
    export_model(&paths.meta, &out).unwrap();
    let network = koma_model::load_torch_network(&out, &expected, Device::Cpu, Precision::F32).unwrap();
    assert!(network.meta.as_ref().unwrap().net.reply_policy_head);
    let x = random_inputs(2 * shogi_shape().input_len(), 6);
    let (policy, _) = net.forward_host(&x, 2).unwrap();
    let e = network.evaluator.evaluate(&x, 2).unwrap();
    assert!(max_abs_diff(e.policy_all(), &policy) < 1e-4);
    // Without the heads the metadata's `net` names neither (as before them), and a `net`
    // without them reads as without the heads.
    let (plain, plain_paths) = save_shogi_checkpoint(&dir.path().join("plain-00000001"), 1, 1);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&plain_paths.meta).unwrap()).unwrap();
    let keys: Vec<&String> = json["net"].as_object().unwrap().keys().collect();
    assert!(!keys.iter().any(|k| k.contains("head")), "{keys:?}");
    let (loaded, meta) = load_net(&plain_paths.meta, &expected, Device::Cpu).unwrap();
    assert!(!meta.net.reply_policy_head && !meta.net.material_head);
    assert_same_outputs(&loaded, &plain, 4);
}
