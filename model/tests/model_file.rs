//! Model files (`koma export`): one self-describing safetensors file that loads on its own,
//! under any name, through the same loader as checkpoints, with the same refusals.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use koma_model::encoding::ENCODER_VERSION;
use koma_model::tch::Device;
use koma_model::{
    export_model, load_net, locate_model, read_model_meta, CheckpointError, Expected, ModelSource, Net, Precision,
    MODEL_FILE_FORMAT_VERSION,
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
    let network = koma_model::load_torch_network(&out, &expected(), Device::Cpu, Precision::F32).unwrap();
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

/// Writes `tensors` to `dir/name` as a model file with `header`, its digest recomputed so
/// that only the checks after the checksum can refuse it.
fn with_fresh_digest(
    dir: &Path,
    name: &str,
    tensors: &Tensors,
    header: &std::collections::HashMap<String, String>,
) -> PathBuf {
    let path = dir.join(name);
    let probe = write_tensors(&path, tensors, &None);
    let mut h = header.clone();
    h.insert(
        "tensors_sha256".into(),
        koma_model::tensors_sha256(&safetensors::SafeTensors::deserialize(&probe).unwrap()),
    );
    write_tensors(&path, tensors, &Some(h));
    path
}

/// An ~82 KB file whose header declares the largest valid network
/// (256 blocks x 4096 channels, 5.1 GB) is refused from its header and the file's size,
/// before anything is allocated (it used to build the whole network first, then panic in
/// tch when the memory ran out).
#[test]
fn a_header_declaring_a_network_larger_than_the_file_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (tensors, header) = read_tensors(&out);
    let mut header = header.unwrap();
    let mut net: koma_model::NetConfig = serde_json::from_str(&header["net"]).unwrap();
    net.blocks = 256;
    net.channels = 4096;
    net.validate().unwrap();
    header.insert("net".into(), serde_json::to_string(&net).unwrap());
    // The digest covers the tensors only: it still matches.
    let huge = dir.path().join("huge.safetensors");
    write_tensors(&huge, &tensors, &Some(header));
    let file_bytes = std::fs::metadata(&huge).unwrap().len();
    assert!(file_bytes < 200_000, "{file_bytes}");
    let started = std::time::Instant::now();
    let err = load_net(&huge, &expected(), Device::Cpu).unwrap_err();
    assert!(started.elapsed().as_secs_f64() < 2.0, "took {:?}", started.elapsed());
    match &err {
        CheckpointError::LargerThanFile { declared_bytes, file_bytes: found, .. } => {
            assert!(*declared_bytes > 5_000_000_000, "{err}");
            assert_eq!(*found, file_bytes);
        }
        other => panic!("expected LargerThanFile, got {other}"),
    }
    let started = std::time::Instant::now();
    let err = koma_model::load_torch_network(&huge, &expected(), Device::Cpu, Precision::F32).err().unwrap();
    assert!(matches!(err, CheckpointError::LargerThanFile { .. }), "{err}");
    assert!(started.elapsed().as_secs_f64() < 2.0, "took {:?}", started.elapsed());
}

/// A header that declares a network as small as the file but of another layout (more
/// blocks, fewer channels) is refused from the header's tensor table, also before the
/// network is built.
#[test]
fn a_header_declaring_another_layout_is_refused_by_its_tensor_table() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (tensors, header) = read_tensors(&out);
    let mut header = header.unwrap();
    let mut net: koma_model::NetConfig = serde_json::from_str(&header["net"]).unwrap();
    net.channels = 4;
    header.insert("net".into(), serde_json::to_string(&net).unwrap());
    let p = dir.path().join("narrow.safetensors");
    write_tensors(&p, &tensors, &Some(header));
    let err = load_net(&p, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::TensorShape { .. }), "{err}");
}

/// A batch norm variance of -1 (checksum recomputed) computes NaN; it is
/// refused by name.
#[test]
fn a_negative_batch_norm_variance_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (mut tensors, header) = read_tensors(&out);
    let var = tensors.iter_mut().find(|t| t.0 == "blocks.1.bn2.running_var").unwrap();
    var.2[4..8].copy_from_slice(&(-1f32).to_le_bytes());
    let p = with_fresh_digest(dir.path(), "negvar.safetensors", &tensors, &header.unwrap());
    let err = load_net(&p, &expected(), Device::Cpu).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::NegativeVariance { name, index: 1, .. } if name == "blocks.1.bn2.running_var"),
        "{err}"
    );
    let err = koma_model::load_torch_network(&p, &expected(), Device::Cpu, Precision::F32).err().unwrap();
    assert!(matches!(&err, CheckpointError::NegativeVariance { .. }), "{err}");
}

/// Huge finite weights (3e38) overflow in the forward pass. A value
/// beyond `MAX_WEIGHT_MAGNITUDE` is refused before the network is built, wherever it is.
#[test]
fn implausibly_large_weights_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (tensors, header) = read_tensors(&out);
    let header = header.unwrap();
    for name in ["stem.conv.weight", "value.fc1.weight", "policy.out.weight", "blocks.1.bn1.bias"] {
        let mut huge = tensors.clone();
        let t = huge.iter_mut().find(|t| t.0 == name).unwrap();
        t.2[..4].copy_from_slice(&3e38f32.to_le_bytes());
        let p = with_fresh_digest(dir.path(), "huge-weights.safetensors", &huge, &header);
        let err = load_net(&p, &expected(), Device::Cpu).unwrap_err();
        assert!(matches!(&err, CheckpointError::ImplausibleWeight { .. }), "{name}: {err}");
        assert!(err.to_string().contains("huge-weights.safetensors") && err.to_string().contains(name), "{err}");
    }
}

/// Weights each within the bound that still overflow together (every convolution's
/// weights 1e7: the activations grow by about 1e9 a layer): the probe pass at load time
/// refuses the network.
#[test]
fn weights_that_compute_non_finite_values_are_refused_by_the_probe() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (mut tensors, header) = read_tensors(&out);
    let header = header.unwrap();
    for t in tensors.iter_mut().filter(|t| t.0.contains("conv") && t.0.ends_with(".weight")) {
        for c in t.2.chunks_exact_mut(4) {
            c.copy_from_slice(&1e7f32.to_le_bytes());
        }
    }
    let p = with_fresh_digest(dir.path(), "overflowing.safetensors", &tensors, &header);
    let err = load_net(&p, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(&err, CheckpointError::NonFiniteOutput { .. }), "{err}");
    assert!(err.to_string().contains("overflowing.safetensors"), "{err}");
    let err = koma_model::load_torch_network(&p, &expected(), Device::Cpu, Precision::F32).err().unwrap();
    assert!(matches!(&err, CheckpointError::NonFiniteOutput { .. }), "{err}");
}

/// A safetensors file without `format` says so plainly.
#[test]
fn a_file_without_format_is_named_not_a_model_file_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (tensors, _) = read_tensors(&out);
    let plain = dir.path().join("plain.safetensors");
    write_tensors(&plain, &tensors, &None);
    let err = load_net(&plain, &expected(), Device::Cpu).unwrap_err();
    assert!(
        err.to_string().ends_with("not a koma model file: its metadata has no `format` (expected koma-model)"),
        "{err}"
    );
    let other = dir.path().join("other.model");
    let h = [("format".to_string(), "pt".to_string())].into_iter().collect();
    write_tensors(&other, &tensors, &Some(h));
    let err = load_net(&other, &expected(), Device::Cpu).unwrap_err();
    assert!(
        err.to_string().ends_with("not a koma model file: its metadata `format` is `pt` (expected koma-model)"),
        "{err}"
    );
}

/// The probe also runs the network as search will (fused, on its device, in its
/// precision): a bias that f32 holds but f16 cannot (1e6 > 65504) loads for f32 and is
/// refused for f16, naming the precision.
#[test]
fn weights_that_overflow_only_in_half_precision_are_refused_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = exported(dir.path());
    let (mut tensors, header) = read_tensors(&out);
    let bias = tensors.iter_mut().find(|t| t.0 == "value.fc2.bias").unwrap();
    bias.2[0..4].copy_from_slice(&1e6f32.to_le_bytes());
    let p = with_fresh_digest(dir.path(), "f16-overflow.safetensors", &tensors, &header.unwrap());
    load_net(&p, &expected(), Device::Cpu).unwrap();
    koma_model::load_torch_network(&p, &expected(), Device::Cpu, Precision::F32).unwrap();
    let err = koma_model::load_torch_network(&p, &expected(), Device::Cpu, Precision::F16).err().unwrap();
    assert!(matches!(&err, CheckpointError::NonFiniteOutput { output: "win/draw/loss values", .. }), "{err}");
    assert!(err.to_string().contains("Half"), "{err}");
}
