//! Checkpoint pairs: written atomically, found by their own stem, refused when anything
//! about them is off (metadata, checksum, tensors, non-finite weights), through the one
//! loader (`Network::load`, `load_net`).

mod common;

use std::path::Path;

use common::*;
use koma_model::encoding::ENCODER_VERSION;
use koma_model::tch::Device;
use koma_model::{
    load_net, read_checkpoint_meta, read_model_meta, save_checkpoint, CheckpointError, CheckpointPaths, Expected, Net,
    NetShape, Precision, CHECKPOINT_FORMAT_VERSION,
};
use rules::Variant;

fn expected() -> Expected {
    Expected::variant(Variant::Shogi)
}

fn saved_net(dir: &Path) -> (Net, CheckpointPaths) {
    let (net, paths) = save_shogi_checkpoint(&dir.join("ckpt").join("step-00001234"), 5, 1234);
    (net, paths)
}

#[test]
fn the_input_options_travel_with_the_checkpoint() {
    use koma_model::encoding::Encoder;
    let dir = tempfile::tempdir().unwrap();
    let cfg = koma_model::NetConfig { attack_planes: true, ..tiny_config() };
    let shape = Encoder::for_net(Variant::Shogi, &cfg).net_shape();
    let net = Net::new(&cfg, shape, 5, Device::Cpu).unwrap();
    let (paths, _) = save_checkpoint(&net, dir.path().join("attacks"), &shogi_info(0)).unwrap();
    let loaded = koma_model::load_torch_network(&paths.meta, &expected(), Device::Cpu, Precision::F32).unwrap();
    assert!(loaded.encoder.options().attack_planes);
    assert_eq!(loaded.encoder.net_shape(), shape);
    assert_eq!(loaded.evaluator.shape(), shape);
    // A checkpoint written before the option existed reads as "no attack planes".
    edit_meta(&paths, |m| {
        m["net"].as_object_mut().unwrap().remove("attack_planes");
    });
    assert!(!read_checkpoint_meta(&paths.meta).unwrap().net.attack_planes);
}

#[test]
fn round_trip_gives_identical_outputs_by_every_name() {
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
    assert_eq!(read_checkpoint_meta(&paths.meta).unwrap().format_version, CHECKPOINT_FORMAT_VERSION);

    let x = random_inputs(5 * shogi_shape().input_len(), 8);
    let reference = net.forward_host(&x, 5).unwrap();
    for p in [&paths.meta, &paths.weights, &paths.meta.with_extension("")] {
        let (loaded, meta) = load_net(p, &expected().with_shape(shogi_shape()), Device::Cpu).unwrap();
        assert_eq!(meta.variant, Variant::Shogi);
        assert_eq!(meta.encoder_version, ENCODER_VERSION);
        assert_eq!(meta.step, 1234);
        assert_eq!(&meta.net, net.config());
        assert_eq!(meta.shape, net.shape());
        assert_eq!(meta.parameters as usize, net.parameter_count());
        assert_eq!(read_model_meta(p).unwrap(), meta);
        assert_eq!(loaded.forward_host(&x, 5).unwrap(), reference, "outputs must be bit-identical");
    }
    // A fresh net with another seed gives other outputs (the check above is not vacuous).
    let other = Net::new(&tiny_config(), shogi_shape(), 6, Device::Cpu).unwrap();
    assert_ne!(other.forward_host(&x, 5).unwrap(), reference);
}

#[test]
fn saving_again_overwrites_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let net2 = Net::new(&tiny_config(), shogi_shape(), 99, Device::Cpu).unwrap();
    save_checkpoint(&net2, &paths.meta, &shogi_info(2000)).unwrap();
    let (loaded, meta) = load_net(&paths.weights, &expected(), Device::Cpu).unwrap();
    assert_eq!(meta.step, 2000);
    assert_same_outputs(&loaded, &net2, 1);
}

#[test]
fn a_renamed_pair_loads_its_own_weights() {
    let dir = tempfile::tempdir().unwrap();
    let (first, a) = save_shogi_checkpoint(&dir.path().join("runs/ckpt-1"), 1, 1);
    let (_, b) = save_shogi_checkpoint(&dir.path().join("runs/ckpt-2"), 2, 2);
    // Copy ckpt-1 elsewhere under another stem, next to a file with its old weights name
    // that holds OTHER weights (ckpt-2's): the metadata still says `ckpt-1.safetensors`.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(&a.meta, elsewhere.join("model-shogi.json")).unwrap();
    std::fs::copy(&a.weights, elsewhere.join("model-shogi.safetensors")).unwrap();
    std::fs::copy(&b.weights, elsewhere.join("ckpt-1.safetensors")).unwrap();
    let (loaded, meta) = load_net(elsewhere.join("model-shogi"), &expected(), Device::Cpu).unwrap();
    assert_eq!(meta.step, 1);
    assert_same_outputs(&loaded, &first, 3);
    // A pair whose weights are another checkpoint's is refused.
    std::fs::copy(&b.weights, elsewhere.join("model-shogi.safetensors")).unwrap();
    let err = load_net(elsewhere.join("model-shogi.json"), &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::ChecksumMismatch { .. } | CheckpointError::Truncated { .. }), "{err}");
}

#[test]
fn wrong_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let err = load_net(&paths.meta, &Expected::variant(Variant::Sho), Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::WrongVariant { expected: Variant::Sho, found: Variant::Shogi, .. }),
        "{err}"
    );
    edit_meta(&paths, |m| m["variant"] = "chess".into());
    let err = load_net(&paths.meta, &Expected::any(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::UnknownVariant { found, .. } if found == "chess"), "{err}");
}

#[test]
fn another_encoder_version_is_refused_even_by_lenient_loaders() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    edit_meta(&paths, |m| m["encoder_version"] = (ENCODER_VERSION + 1).into());
    let err = koma_model::load_torch_network(&paths.meta, &Expected::any(), Device::Cpu, Precision::F32).err().unwrap();
    assert!(matches!(err, CheckpointError::WrongEncoderVersion { found, .. } if found == ENCODER_VERSION + 1), "{err}");
}

#[test]
fn shape_mismatches_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let other = NetShape { policy_planes: 139, ..shogi_shape() };
    let err = load_net(&paths.meta, &expected().with_shape(other), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::ShapeMismatch { .. }), "{err}");
    // A recorded shape that the variant's encoder does not feed.
    edit_meta(&paths, |m| m["shape"]["input_planes"] = 7.into());
    let err = load_net(&paths.meta, &Expected::any(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::EncoderShape { .. }), "{err}");
}

#[test]
fn truncated_weights_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    let bytes = std::fs::read(&paths.weights).unwrap();
    std::fs::write(&paths.weights, &bytes[..bytes.len() - 100]).unwrap();
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
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
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::ChecksumMismatch { .. }), "{err}");
}

#[test]
fn garbage_with_matching_checksum_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    // Both files consistent with each other, but the weights are not safetensors.
    let garbage = vec![0xffu8; 64];
    std::fs::write(&paths.weights, &garbage).unwrap();
    edit_meta(&paths, |m| {
        m["weights_bytes"] = 64.into();
        m["weights_sha256"] = sha256_hex(&garbage).into();
    });
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
}

#[test]
fn non_finite_weights_with_a_matching_checksum_are_refused() {
    for (bad, shown) in [(f32::NAN, "NaN"), (f32::INFINITY, "inf"), (f32::NEG_INFINITY, "-inf")] {
        let dir = tempfile::tempdir().unwrap();
        let (_, paths) = saved_net(dir.path());
        rewrite_weights(&paths, |t| {
            let (_, _, data) = t.iter_mut().find(|(n, _, _)| n == "value.fc2.weight").unwrap();
            data[8..12].copy_from_slice(&bad.to_le_bytes());
        });
        for err in [
            load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err(),
            koma_model::load_torch_network(&paths.meta, &expected(), Device::Cpu, Precision::F32).err().unwrap(),
        ] {
            assert!(
                matches!(&err, CheckpointError::NonFinite { name, index: 2, .. } if name == "value.fc2.weight"),
                "{err}"
            );
            let text = err.to_string();
            assert!(text.contains(&paths.weights.display().to_string()) && text.contains(shown), "{text}");
        }
    }
}

#[test]
fn missing_tensor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    rewrite_weights(&paths, |t| t.retain(|(n, _, _)| n != "value.fc1.bias"));
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::MissingTensor { name, .. } if name == "value.fc1.bias"), "{err}");
}

#[test]
fn unexpected_tensor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    rewrite_weights(&paths, |t| t.push(("blocks.9.conv1.weight".into(), vec![2], vec![0; 8])));
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::UnexpectedTensor { name, .. } if name == "blocks.9.conv1.weight"), "{err}");
}

#[test]
fn tensor_shape_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    // Metadata claims a narrower value head than the stored weights have.
    edit_meta(&paths, |m| m["net"]["value_hidden"] = 8.into());
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::TensorShape { name, .. } if name.starts_with("value.fc")), "{err}");
    // A wider one needs more bytes than the weights file holds: refused by that bound,
    // before the tensor table is compared.
    edit_meta(&paths, |m| m["net"]["value_hidden"] = 32.into());
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::LargerThanFile { .. }), "{err}");
}

#[test]
fn unknown_format_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    edit_meta(&paths, |m| {
        m["format_version"] = 2.into();
        m["some_future_field"] = true.into();
    });
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
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
    let err = load_net(&paths.weights, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::WeightsWithoutMetadata { .. }), "{err}");
    let err = load_net(paths.meta.with_extension(""), &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::WeightsWithoutMetadata { .. }), "{err}");
}

#[test]
fn the_weights_file_name_in_the_metadata_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (net, paths) = saved_net(dir.path());
    edit_meta(&paths, |m| m["weights_file"] = "../elsewhere.safetensors".into());
    let (loaded, _) = load_net(&paths.meta, &expected(), Device::Cpu).unwrap();
    assert_same_outputs(&loaded, &net, 4);
}

#[test]
fn a_missing_network_names_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("nothing-here");
    let err = load_net(&stem, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::NotFound { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("nothing-here.json") && text.contains("nothing-here.safetensors"), "{text}");
}

#[test]
fn errors_print_their_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved_net(dir.path());
    std::fs::remove_file(&paths.weights).unwrap();
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Io { .. }), "{err}");
    let chain = error_chain(&err);
    assert_eq!(chain.matches("No such file or directory").count(), 1, "{chain}");
    assert!(chain.contains(&paths.weights.display().to_string()), "{chain}");

    // Causes nested two levels deep (a config error inside a network error) print once too.
    let bad = koma_model::NetConfig { channels: 0, ..tiny_config() };
    let err = CheckpointError::from(Net::new(&bad, shogi_shape(), 0, Device::Cpu).err().unwrap());
    let chain = error_chain(&err);
    assert_eq!(chain.matches("model.channels = 0 is out of range").count(), 1, "{chain}");
    let batch = koma_model::BatchError::from(koma_model::EvalError::Backend("out of memory".into()));
    assert_eq!(error_chain(&batch).matches("out of memory").count(), 1);
}
