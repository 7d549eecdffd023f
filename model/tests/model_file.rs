//! Model files (`koma export`): one self-describing safetensors file that loads on its own,
//! under any name, through the same loader as checkpoints, with the same refusals.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use koma_model::encoding::ENCODER_VERSION;
use koma_model::tch::Device;
use koma_model::{
    export_model, load_net, locate_model, read_model_meta, CheckpointError, Expected, ModelSource, Net, Network,
    Precision, MODEL_FILE_FORMAT_VERSION,
};
use rules::Variant;

fn exported(dir: &Path) -> (Net, PathBuf) {
    let (net, paths) = save_shogi_checkpoint(&dir.join("run/ckpt-00000042"), 3, 42);
    let out = dir.join("shared").join("model-shogi.safetensors");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let summary = export_model(&paths.meta, &out).unwrap();
    assert_eq!(summary.meta.step, 42);
    assert_eq!(summary.bytes, std::fs::metadata(&out).unwrap().len());
    (net, out)
}

fn expected() -> Expected {
    Expected::variant(Variant::Shogi)
}

#[test]
fn an_exported_file_loads_alone_under_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let (net, out) = exported(dir.path());
    // The checkpoint is gone: the file carries everything.
    std::fs::remove_dir_all(dir.path().join("run")).unwrap();
    let renamed = dir.path().join("any name.model");
    std::fs::copy(&out, &renamed).unwrap();
    let x = random_inputs(3 * shogi_shape().input_len(), 11);
    let reference = net.forward_host(&x, 3).unwrap();
    for (p, file) in [(out.clone(), out.clone()), (out.with_extension(""), out.clone()), (renamed.clone(), renamed)] {
        assert_eq!(locate_model(&p).unwrap(), ModelSource::ModelFile(file));
        let (loaded, meta) = load_net(&p, &expected().with_shape(shogi_shape()), Device::Cpu).unwrap();
        assert_eq!(meta.variant, Variant::Shogi);
        assert_eq!(meta.encoder_version, ENCODER_VERSION);
        assert_eq!(meta.step, 42);
        assert_eq!(&meta.net, net.config());
        assert_eq!(meta.parameters as usize, net.parameter_count());
        assert_eq!(read_model_meta(&p).unwrap(), meta);
        assert_eq!(loaded.forward_host(&x, 3).unwrap(), reference, "{}", p.display());
    }
    let network = Network::load(&out, &expected(), Device::Cpu, Precision::F32).unwrap();
    assert_eq!(network.encoder.net_shape(), shogi_shape());
    assert_eq!(network.meta.as_ref().unwrap().step, 42);
    let evaluated = network.evaluator.evaluate(&x, 3).unwrap();
    assert_eq!(evaluated.policy_all().len(), reference.0.len());
}

#[test]
fn the_header_describes_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let (net, out) = exported(dir.path());
    let (tensors, header) = read_tensors(&out);
    let header = header.unwrap();
    assert_eq!(header["format"], "koma-model");
    assert_eq!(header["format_version"], MODEL_FILE_FORMAT_VERSION.to_string());
    assert_eq!(header["variant"], "shogi");
    assert_eq!(header["encoder_version"], ENCODER_VERSION.to_string());
    assert_eq!(header["step"], "42");
    let cfg: koma_model::NetConfig = serde_json::from_str(&header["net"]).unwrap();
    assert_eq!(&cfg, net.config());
    let shape: koma_model::NetShape = serde_json::from_str(&header["shape"]).unwrap();
    assert_eq!(shape, shogi_shape());
    assert_eq!(tensors.len(), net.var_store().variables().len());
    let bytes = std::fs::read(&out).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(header["tensors_sha256"], koma_model::tensors_sha256(&st));
}

#[test]
fn the_tensor_digest_covers_names_shapes_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (tensors, header) = read_tensors(&out);
    let digest = |t: &Tensors| {
        let p = dir.path().join("probe.safetensors");
        let bytes = write_tensors(&p, t, &None);
        koma_model::tensors_sha256(&safetensors::SafeTensors::deserialize(&bytes).unwrap())
    };
    let original = digest(&tensors);
    assert_eq!(original, header.unwrap()["tensors_sha256"]);
    // Two same-shaped tensors swapped by name.
    let mut swapped = tensors.clone();
    let (i, j) = (
        swapped.iter().position(|t| t.0 == "stem.bn.weight").unwrap(),
        swapped.iter().position(|t| t.0 == "stem.bn.bias").unwrap(),
    );
    let (a, b) = (swapped[i].2.clone(), swapped[j].2.clone());
    swapped[i].2 = b;
    swapped[j].2 = a;
    assert_ne!(digest(&swapped), original);
    // One bit of data.
    let mut flipped = tensors.clone();
    flipped[0].2[0] ^= 1;
    assert_ne!(digest(&flipped), original);
}

#[test]
fn damaged_model_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (tensors, header) = read_tensors(&out);
    let load = |p: &Path| load_net(p, &expected(), Device::Cpu).unwrap_err();

    // A flipped bit in the data: the digest no longer matches.
    let mut bytes = std::fs::read(&out).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x10;
    let flipped = dir.path().join("flipped.safetensors");
    std::fs::write(&flipped, &bytes).unwrap();
    assert!(matches!(load(&flipped), CheckpointError::ChecksumMismatch { .. }));

    // Truncated.
    let truncated = dir.path().join("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..n / 2]).unwrap();
    assert!(matches!(load(&truncated), CheckpointError::Corrupt { .. }));

    // NaN weights with a digest that matches them.
    let mut nan = tensors.clone();
    let fc2 = nan.iter_mut().find(|t| t.0 == "value.fc2.bias").unwrap();
    fc2.2[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
    let path = dir.path().join("nan.safetensors");
    let probe = write_tensors(&path, &nan, &None);
    let mut h = header.clone().unwrap();
    h.insert(
        "tensors_sha256".into(),
        koma_model::tensors_sha256(&safetensors::SafeTensors::deserialize(&probe).unwrap()),
    );
    write_tensors(&path, &nan, &Some(h));
    let err = load(&path);
    assert!(matches!(&err, CheckpointError::NonFinite { name, .. } if name == "value.fc2.bias"), "{err}");
    assert!(err.to_string().contains("nan.safetensors"), "{err}");

    // Header problems.
    let with_header = |name: &str, edit: &dyn Fn(&mut std::collections::HashMap<String, String>)| {
        let mut h = header.clone().unwrap();
        edit(&mut h);
        let p = dir.path().join(name);
        write_tensors(&p, &tensors, &Some(h));
        p
    };
    let p = with_header("v2.safetensors", &|h| {
        h.insert("format_version".into(), "2".into());
    });
    assert!(matches!(load(&p), CheckpointError::UnknownFormatVersion { found: 2, .. }));
    let p = with_header("nostep.safetensors", &|h| {
        h.remove("step");
    });
    assert!(matches!(load(&p), CheckpointError::BadModelFileMetadata { key: "step", .. }));
    let p = with_header("badnet.safetensors", &|h| {
        h.insert("net".into(), "{\"blocks\": \"many\"}".into());
    });
    assert!(matches!(load(&p), CheckpointError::BadModelFileMetadata { key: "net", .. }));
    let p = with_header("sho.safetensors", &|h| {
        h.insert("variant".into(), "sho".into());
    });
    assert!(matches!(load(&p), CheckpointError::WrongVariant { found: Variant::Sho, .. }));
    let plain = dir.path().join("plain.safetensors");
    write_tensors(&plain, &tensors, &None);
    assert!(matches!(load(&plain), CheckpointError::NotAModelFile { found: None, .. }));
}

#[test]
fn an_exported_file_wins_over_a_stale_metadata_file_with_its_stem() {
    let dir = tempfile::tempdir().unwrap();
    let (net, out) = exported(dir.path());
    // A checkpoint's JSON of another network, left next to the exported file.
    let (_, other) = save_shogi_checkpoint(&dir.path().join("other/ckpt-7"), 9, 7);
    std::fs::copy(&other.meta, out.with_extension("json")).unwrap();
    let (loaded, meta) = load_net(&out, &expected(), Device::Cpu).unwrap();
    assert_eq!(meta.step, 42);
    assert_same_outputs(&loaded, &net, 2);
}

#[test]
fn export_reads_model_files_and_never_overwrites_checkpoint_weights() {
    let dir = tempfile::tempdir().unwrap();
    let (net, out) = exported(dir.path());
    // Re-exporting a model file gives the same tensors.
    let again = dir.path().join("again.safetensors");
    let summary = export_model(&out, &again).unwrap();
    assert_eq!(read_tensors(&again).1.unwrap()["tensors_sha256"], summary.tensors_sha256);
    assert_eq!(read_tensors(&out).1.unwrap()["tensors_sha256"], summary.tensors_sha256);
    // Exporting over a pair's weights file would break the pair.
    let (_, pair) = save_shogi_checkpoint(&dir.path().join("pair/ckpt-1"), 1, 1);
    let before = std::fs::read(&pair.weights).unwrap();
    let err = export_model(&out, &pair.weights).unwrap_err();
    assert!(matches!(err, CheckpointError::WouldOverwriteCheckpoint { .. }), "{err}");
    assert_eq!(std::fs::read(&pair.weights).unwrap(), before);
    drop(net);
}
