mod common;

use std::path::Path;

use common::*;
use koma_model::tch::Device;
use koma_model::{
    load_checkpoint, read_checkpoint_meta, save_checkpoint, CheckpointError, CheckpointInfo, CheckpointPaths, Expected,
    Net, NetShape, CHECKPOINT_FORMAT_VERSION,
};

fn info() -> CheckpointInfo {
    CheckpointInfo { variant: "standard".into(), encoder_version: 3, step: 1234 }
}

fn expected() -> Expected {
    Expected::new("standard", 3)
}

fn saved_net(dir: &Path) -> (Net, CheckpointPaths) {
    let net = Net::new(&tiny_config(), tiny_shape(), 5, Device::Cpu).unwrap();
    train_bn_stats(&net, 77);
    let (paths, meta) = save_checkpoint(&net, dir.join("ckpt").join("step-00001234"), &info()).unwrap();
    assert_eq!(meta.step, 1234);
    (net, paths)
}

/// Rewrites the weights file with `edit` applied to its tensors, and fixes the metadata's
/// size and checksum so that only the tensor-level check can catch the change.
fn rewrite_weights(paths: &CheckpointPaths, edit: impl FnOnce(&mut Vec<(String, Vec<usize>, Vec<u8>)>)) {
    use safetensors::tensor::{Dtype, SafeTensors, TensorView};
    let bytes = std::fs::read(&paths.weights).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> =
        st.tensors().into_iter().map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec())).collect();
    edit(&mut tensors);
    let views: Vec<_> =
        tensors.iter().map(|(n, s, d)| (n.clone(), TensorView::new(Dtype::F32, s.clone(), d).unwrap())).collect();
    let out = safetensors::serialize(views, &None).unwrap();
    std::fs::write(&paths.weights, &out).unwrap();
    let mut meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&paths.meta).unwrap()).unwrap();
    meta["weights_bytes"] = out.len().into();
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(&out).iter().map(|b| format!("{b:02x}")).collect();
    meta["weights_sha256"] = sha.into();
    std::fs::write(&paths.meta, serde_json::to_vec(&meta).unwrap()).unwrap();
}

fn edit_meta(paths: &CheckpointPaths, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&paths.meta).unwrap()).unwrap();
    edit(&mut meta);
    std::fs::write(&paths.meta, serde_json::to_vec(&meta).unwrap()).unwrap();
}

#[test]
fn the_input_options_travel_with_the_checkpoint() {
    use koma_model::encoding::Encoder;
    let dir = tempfile::tempdir().unwrap();
    let cfg = koma_model::NetConfig { attack_planes: true, ..tiny_config() };
    let shape = Encoder::for_net(rules::Variant::Shogi, &cfg).net_shape();
    let net = Net::new(&cfg, shape, 5, Device::Cpu).unwrap();
    let (paths, _) = save_checkpoint(&net, dir.path().join("attacks"), &info()).unwrap();
    let meta = read_checkpoint_meta(&paths.meta).unwrap();
    assert!(meta.net.attack_planes);
    assert_eq!(Encoder::for_net(rules::Variant::Shogi, &meta.net).net_shape(), meta.shape);
    // A checkpoint written before the option existed reads as "no attack planes".
    edit_meta(&paths, |m| {
        m["net"].as_object_mut().unwrap().remove("attack_planes");
    });
    assert!(!read_checkpoint_meta(&paths.meta).unwrap().net.attack_planes);
}

#[test]
fn round_trip_gives_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let (net, paths) = saved_net(dir.path());
    assert!(paths.meta.ends_with("ckpt/step-00001234.json"));
    assert!(paths.weights.ends_with("ckpt/step-00001234.safetensors"));
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("ckpt"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    for p in [&paths.meta, &paths.weights, &paths.meta.with_extension("")] {
        let (loaded, meta) = load_checkpoint(p, &expected().with_shape(tiny_shape()), Device::Cpu).unwrap();
        assert_eq!(meta.format_version, CHECKPOINT_FORMAT_VERSION);
        assert_eq!(meta.variant, "standard");
        assert_eq!(meta.encoder_version, 3);
        assert_eq!(meta.step, 1234);
        assert_eq!(&meta.net, net.config());
        assert_eq!(meta.shape, net.shape());
        assert_eq!(meta.parameters as usize, net.parameter_count());
        let x = random_inputs(5 * tiny_shape().input_len(), 8);
        let a = net.forward_host(&x, 5).unwrap();
        let b = loaded.forward_host(&x, 5).unwrap();
        assert_eq!(a, b, "outputs must be bit-identical after a round trip");
    }
    // A fresh net with another seed gives other outputs (the check above is not vacuous).
    let other = Net::new(&tiny_config(), tiny_shape(), 6, Device::Cpu).unwrap();
    let x = random_inputs(tiny_shape().input_len(), 8);
    assert_ne!(net.forward_host(&x, 1).unwrap(), other.forward_host(&x, 1).unwrap());
}

#[test]
fn saving_again_overwrites_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let net2 = Net::new(&tiny_config(), tiny_shape(), 99, Device::Cpu).unwrap();
    save_checkpoint(&net2, &paths.meta, &CheckpointInfo { step: 2000, ..info() }).unwrap();
    let (loaded, meta) = load_checkpoint(&paths.weights, &expected(), Device::Cpu).unwrap();
    assert_eq!(meta.step, 2000);
    let x = random_inputs(tiny_shape().input_len(), 1);
    assert_eq!(loaded.forward_host(&x, 1).unwrap(), net2.forward_host(&x, 1).unwrap());
}

#[test]
fn wrong_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let err = load_checkpoint(&paths.meta, &Expected::new("sho", 3), Device::Cpu).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::WrongVariant { expected, found } if expected == "sho" && found == "standard"),
        "{err}"
    );
}

#[test]
fn wrong_encoder_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let err = load_checkpoint(&paths.meta, &Expected::new("standard", 4), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::WrongEncoderVersion { expected: 4, found: 3 }), "{err}");
}

#[test]
fn shape_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let other = NetShape { policy_planes: 139, ..tiny_shape() };
    let err = load_checkpoint(&paths.meta, &expected().with_shape(other), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::ShapeMismatch { .. }), "{err}");
}

#[test]
fn truncated_weights_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let bytes = std::fs::read(&paths.weights).unwrap();
    std::fs::write(&paths.weights, &bytes[..bytes.len() - 100]).unwrap();
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Truncated { .. }), "{err}");
}

#[test]
fn corrupted_weights_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let mut bytes = std::fs::read(&paths.weights).unwrap();
    let n = bytes.len();
    bytes[n - 5] ^= 0x40;
    std::fs::write(&paths.weights, &bytes).unwrap();
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::ChecksumMismatch { .. }), "{err}");
}

#[test]
fn garbage_with_matching_checksum_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    // Both files consistent with each other, but the weights are not safetensors.
    let garbage = vec![0xffu8; 64];
    std::fs::write(&paths.weights, &garbage).unwrap();
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(&garbage).iter().map(|b| format!("{b:02x}")).collect();
    edit_meta(&paths, |m| {
        m["weights_bytes"] = 64.into();
        m["weights_sha256"] = sha.into();
    });
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
}

#[test]
fn missing_tensor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    rewrite_weights(&paths, |t| t.retain(|(n, _, _)| n != "value.fc1.bias"));
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::MissingTensor { name } if name == "value.fc1.bias"), "{err}");
}

#[test]
fn unexpected_tensor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    rewrite_weights(&paths, |t| t.push(("blocks.9.conv1.weight".into(), vec![2], vec![0; 8])));
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::UnexpectedTensor { name } if name == "blocks.9.conv1.weight"), "{err}");
}

#[test]
fn tensor_shape_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    // Metadata claims a wider value head than the stored weights have.
    edit_meta(&paths, |m| m["net"]["value_hidden"] = 32.into());
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::TensorShape { name, .. } if name.starts_with("value.fc")), "{err}");
}

#[test]
fn unknown_format_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    edit_meta(&paths, |m| {
        m["format_version"] = 2.into();
        m["some_future_field"] = true.into();
    });
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::UnknownFormatVersion { found: 2, supported: 1, .. }), "{err}");
}

#[test]
fn broken_or_missing_metadata_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let text = std::fs::read(&paths.meta).unwrap();
    std::fs::write(&paths.meta, &text[..text.len() / 2]).unwrap();
    let err = read_checkpoint_meta(&paths.meta).unwrap_err();
    assert!(matches!(err, CheckpointError::BadMetadata { .. }), "{err}");
    // Weights without metadata (a crash between the two writes) are never loaded.
    std::fs::remove_file(&paths.meta).unwrap();
    let err = load_checkpoint(&paths.weights, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Io { .. }), "{err}");
}

#[test]
fn weights_file_name_cannot_escape_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    edit_meta(&paths, |m| m["weights_file"] = "../elsewhere.safetensors".into());
    let err = load_checkpoint(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::BadWeightsFileName(_)), "{err}");
}
