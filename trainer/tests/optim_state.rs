//! The optimiser state file carries a checksum of its tensors: a changed byte, or NaN state
//! written by a diverged run, is refused on load; files of the previous version (no
//! checksum) still load.

use std::collections::HashMap;
use std::path::Path;

use model::encoding::Encoder;
use model::tch::{Device, Kind, Tensor};
use model::{Net, NetConfig};
use rules::Variant;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use trainer::config::{OptimizerKind, TrainConfig};
use trainer::learning::optim::{OptimError, Optimizer};

fn tiny_net() -> Net {
    let cfg = NetConfig::tiny();
    Net::new(&cfg, Encoder::new(Variant::Shogi).net_shape(), 1, Device::Cpu).unwrap()
}

fn config() -> TrainConfig {
    TrainConfig { optimizer: OptimizerKind::Adamw, ..Default::default() }
}

/// An optimiser with non-zero state: one AdamW step over made-up gradients.
fn stepped(net: &Net) -> Optimizer {
    let mut opt = Optimizer::new(net.var_store(), &config());
    let loss = net
        .var_store()
        .trainable_variables()
        .iter()
        .map(|t| (t * t).sum(Kind::Float))
        .fold(Tensor::from(0.0f32), |a, b| a + b);
    loss.backward();
    opt.step(0.01);
    opt
}

type Tensors = Vec<(String, Vec<usize>, Vec<u8>)>;

fn read(path: &Path) -> (Tensors, HashMap<String, String>) {
    let bytes = std::fs::read(path).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let tensors = st.tensors().into_iter().map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec())).collect();
    (tensors, header.metadata().clone().unwrap())
}

fn digest(tensors: &Tensors) -> String {
    model::tensor_digest(tensors.iter().map(|(n, s, d)| (n.as_str(), s.as_slice(), d.as_slice())))
}

fn write(path: &Path, tensors: &Tensors, meta: HashMap<String, String>) {
    let views: Vec<_> =
        tensors.iter().map(|(n, s, d)| (n.clone(), TensorView::new(Dtype::F32, s.clone(), d).unwrap())).collect();
    std::fs::write(path, safetensors::serialize(views, &Some(meta)).unwrap()).unwrap();
}

#[test]
fn the_checksum_is_written_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let net = tiny_net();
    let opt = stepped(&net);
    let path = dir.path().join("a.optim.safetensors");
    opt.save(&path).unwrap();
    let (tensors, meta) = read(&path);
    assert_eq!(meta["format_version"], trainer::learning::optim::OPTIM_FORMAT_VERSION.to_string());
    assert_eq!(meta["tensors_sha256"], digest(&tensors));
    assert!(Optimizer::new(net.var_store(), &config()).load(&path).unwrap());

    // One changed byte of state, the header intact: refused.
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 2] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let err = Optimizer::new(net.var_store(), &config()).load(&path).unwrap_err();
    assert!(matches!(err, OptimError::ChecksumMismatch { .. }), "{err}");
    assert!(err.to_string().contains("a.optim.safetensors"), "{err}");

    // A missing checksum in a version 2 file: refused.
    let mut no_digest = meta.clone();
    no_digest.remove("tensors_sha256");
    write(&path, &tensors, no_digest);
    let err = Optimizer::new(net.var_store(), &config()).load(&path).unwrap_err();
    assert!(matches!(err, OptimError::ChecksumMismatch { .. }), "{err}");
}

#[test]
fn non_finite_state_with_a_matching_checksum_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let net = tiny_net();
    let path = dir.path().join("nan.optim.safetensors");
    stepped(&net).save(&path).unwrap();
    let (mut tensors, mut meta) = read(&path);
    let (name, _, data) = &mut tensors[3];
    let name = name.clone();
    data[..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    meta.insert("tensors_sha256".into(), digest(&tensors));
    write(&path, &tensors, meta);
    let err = Optimizer::new(net.var_store(), &config()).load(&path).unwrap_err();
    assert!(matches!(&err, OptimError::NonFinite { name: n, .. } if *n == name), "{err}");
    assert!(err.to_string().contains("nan.optim.safetensors"), "{err}");
}

#[test]
fn version_1_files_without_a_checksum_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let net = tiny_net();
    let opt = stepped(&net);
    let path = dir.path().join("v1.optim.safetensors");
    opt.save(&path).unwrap();
    let (tensors, mut meta) = read(&path);
    meta.remove("tensors_sha256");
    meta.insert("format_version".into(), "1".into());
    write(&path, &tensors, meta);
    let mut loaded = Optimizer::new(net.var_store(), &config());
    assert!(loaded.load(&path).unwrap());
    assert_eq!(loaded.updates(), opt.updates());
}
