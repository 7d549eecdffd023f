//! ONNX export against onnxruntime: for every variant, a small network with global pooling
//! and attack planes and one without either (but with the training-only heads, which the
//! export leaves out), random weights and batch norm statistics, saved as a checkpoint and
//! exported with `export_onnx` (what `koma export --format onnx` runs). onnxruntime (PyPI,
//! installed into `.venv` by scripts/setup.sh) runs the file on 100 positions of random
//! playouts (scripts/ref/onnx_check.py) and must give koma's evaluator's policy logits and
//! WDL probabilities within [`ABS_TOLERANCE`] + [`REL_TOLERANCE`] x |value|. Without an
//! onnxruntime to import, the test fails and says to run scripts/setup.sh.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{max_abs_diff, random_inputs};
use koma_model::encoding::{Encoder, ENCODER_VERSION};
use koma_model::tch::{Device, Tensor};
use koma_model::{CheckpointInfo, Evaluator, NetConfig, Precision, TorchEvaluator};
use rules::{Color, Position, Variant};

const POSITIONS: usize = 100;
const ABS_TOLERANCE: f32 = 1e-4;
const REL_TOLERANCE: f32 = 1e-4;

/// Global pooling every second block, attack planes on.
fn pooling_config() -> NetConfig {
    NetConfig {
        blocks: 3,
        channels: 16,
        global_pooling_every: 2,
        global_pooling_channels: 8,
        policy_channels: Some(12),
        value_channels: 4,
        value_hidden: 32,
        zero_init_residual: false,
        attack_planes: true,
        reply_policy_head: false,
        material_head: false,
    }
}

/// No global pooling, no attack planes; the training-only heads on (not exported).
fn plain_config() -> NetConfig {
    NetConfig {
        blocks: 2,
        global_pooling_every: 0,
        attack_planes: false,
        reply_policy_head: true,
        material_head: true,
        ..pooling_config()
    }
}

/// The repository's `.venv` Python, or `KOMA_PYTHON`; panics unless it imports onnxruntime.
fn python_with_onnxruntime() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = std::env::var_os("KOMA_PYTHON").map(PathBuf::from).unwrap_or(root.join(".venv/bin/python"));
    let out = Command::new(&python).args(["-c", "import onnxruntime, numpy"]).output();
    match out {
        Ok(o) if o.status.success() => python,
        other => panic!(
            "{} cannot import onnxruntime: run scripts/setup.sh (it installs onnxruntime into .venv), or \
             set KOMA_PYTHON to a Python that has it ({})",
            python.display(),
            match other {
                Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                Err(e) => e.to_string(),
            }
        ),
    }
}

/// splitmix64, to pick moves.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// `n` positions of random playouts from the start position: every other position of
/// playouts of up to 120 plies (a new one when a game ends), so from the opening to the
/// middle game.
fn playout_positions(variant: Variant, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    let mut pos = Position::startpos(variant);
    let mut ply = 0;
    while out.len() < n {
        if ply % 2 == 0 {
            out.push(pos.clone());
        }
        let legal = pos.legal_moves();
        if legal.is_empty() || ply == 120 {
            (pos, ply) = (Position::startpos(variant), 0);
            continue;
        }
        pos.play(legal[rng.below(legal.len())]);
        ply += 1;
        if pos.royals(Color::Sente).is_empty() || pos.royals(Color::Gote).is_empty() {
            (pos, ply) = (Position::startpos(variant), 0);
        }
    }
    out
}

/// Random batch norm scales, shifts and statistics, so that a batch norm folded wrongly,
/// or an operator out of order, changes the outputs.
fn randomise_batch_norms(net: &koma_model::Net, seed: u64) {
    // `variables()` is a hash map: sorted by name, the same seed gives the same values.
    let mut variables: Vec<_> = net.var_store().variables().into_iter().collect();
    variables.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, (name, var)) in variables.into_iter().enumerate() {
        let Some((layer, part)) = name.rsplit_once('.') else { continue };
        if !layer.rsplit('.').next().unwrap().starts_with("bn") {
            continue;
        }
        let (lo, hi) = match part {
            "weight" => (0.3, 1.5),
            "bias" | "running_mean" => (-0.5, 0.5),
            "running_var" => (0.2, 2.0),
            _ => unreachable!("batch norm tensor {name}"),
        };
        let values: Vec<f32> =
            random_inputs(var.numel(), seed * 1000 + k as u64).iter().map(|u| lo + (hi - lo) * u).collect();
        let mut dst = var.shallow_clone();
        koma_model::tch::no_grad(|| dst.copy_(&Tensor::from_slice(&values)));
    }
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path).unwrap().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn write_f32(path: &Path, values: &[f32]) {
    std::fs::write(path, values.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
}

/// Whether `onnx` is `koma` within the tolerance (false for a NaN).
fn close(onnx: f32, koma: f32) -> bool {
    (onnx - koma).abs() <= ABS_TOLERANCE + REL_TOLERANCE * koma.abs()
}

/// The values differ by more than the tolerance somewhere: the first such index.
fn first_mismatch(onnx: &[f32], koma: &[f32]) -> Option<usize> {
    assert_eq!(onnx.len(), koma.len(), "output lengths");
    onnx.iter().zip(koma).position(|(&a, &b)| !close(a, b))
}

/// Exports one network and compares onnxruntime's outputs with koma's; returns the max
/// absolute differences (policy logits, WDL).
fn check(variant: Variant, config: &NetConfig, seed: u64) -> (f32, f32) {
    let python = python_with_onnxruntime();
    let encoder = Encoder::for_net(variant, config);
    let net = koma_model::Net::new(config, encoder.net_shape(), seed, Device::Cpu).unwrap();
    randomise_batch_norms(&net, seed);
    let dir = tempfile::tempdir().unwrap();
    let info = CheckpointInfo {
        variant: variant.name().into(),
        encoder_version: ENCODER_VERSION,
        step: 1234,
        leaf_material: Some(LEAF_MATERIAL),
    };
    koma_model::save_checkpoint(&net, dir.path().join("ckpt"), &info).unwrap();
    let model = dir.path().join("net.onnx");
    let exported = koma_model::export_onnx(dir.path().join("ckpt"), &model).unwrap();
    assert_eq!(exported.bytes, std::fs::metadata(&model).unwrap().len());

    let positions = playout_positions(variant, POSITIONS, seed);
    let mut planes = vec![0f32; POSITIONS * encoder.input_len()];
    for (pos, out) in positions.iter().zip(planes.chunks_exact_mut(encoder.input_len())) {
        encoder.encode(pos, out);
    }
    let koma = TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap().evaluate(&planes, POSITIONS).unwrap();
    write_f32(&dir.path().join("planes.f32"), &planes);
    // The outputs depend on the position: else matching them would prove little.
    let (len, p) = (encoder.policy_size(), koma.policy_all());
    assert!(max_abs_diff(&p[..len], &p[len * 50..len * 51]) > 1e-2, "{variant}: the same logits for two positions");
    // A random value head's WDL varies little (dai's plain network: 0.002 at most over the
    // batch, 0.0002 between positions 0 and 50), so the widest difference counts.
    let wdl = koma.wdl_all();
    let spread = wdl.chunks_exact(3).map(|w| max_abs_diff(&wdl[..3], w)).fold(0f32, f32::max);
    assert!(spread > 1e-3, "{variant}: the same WDL for every position (widest difference {spread})");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ref/onnx_check.py");
    let out = Command::new(&python).arg(script).arg(&model).arg(dir.path().join("planes.f32")).arg(dir.path()).output();
    let out = out.unwrap();
    assert!(out.status.success(), "onnx_check.py: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    check_interface(&report, variant, config, &encoder);

    let policy = read_f32(&dir.path().join("policy_logits.f32"));
    let wdl = read_f32(&dir.path().join("wdl.f32"));
    for (what, onnx, ours) in [("policy logits", &policy, koma.policy_all()), ("wdl", &wdl, koma.wdl_all())] {
        if let Some(i) = first_mismatch(onnx, ours) {
            panic!("{variant}: {what} differ at {i}: onnxruntime {} vs koma {}", onnx[i], ours[i]);
        }
    }
    (max_abs_diff(&policy, koma.policy_all()), max_abs_diff(&wdl, koma.wdl_all()))
}

/// The leaf material setting the checkpoints of [`check`] record.
const LEAF_MATERIAL: koma_model::LeafMaterial = koma_model::LeafMaterial { mix: 0.5, scale: 36.0 };

/// The names, shapes and metadata onnxruntime reports.
fn check_interface(report: &serde_json::Value, variant: Variant, config: &NetConfig, encoder: &Encoder) {
    let s = encoder.net_shape();
    let inputs = &report["inputs"];
    assert_eq!(inputs.as_array().unwrap().len(), 1, "{report}");
    assert_eq!(inputs[0]["name"], "planes");
    assert_eq!(inputs[0]["type"], "tensor(float)");
    assert_eq!(inputs[0]["shape"], serde_json::json!(["batch", s.input_planes, s.board_height, s.board_width]));
    let outputs = &report["outputs"];
    assert_eq!(outputs.as_array().unwrap().len(), 2, "only policy and wdl: {report}");
    assert_eq!(outputs[0]["name"], "policy_logits");
    assert_eq!(outputs[0]["shape"], serde_json::json!(["batch", s.policy_len()]));
    assert_eq!(outputs[1]["name"], "wdl");
    assert_eq!(outputs[1]["shape"], serde_json::json!(["batch", 3]));
    assert_eq!(report["batch"], POSITIONS);
    assert_eq!(report["producer"], "koma");
    let meta = &report["metadata"];
    assert_eq!(meta["format"], "koma-onnx");
    assert_eq!(meta["format_version"], "1");
    assert_eq!(meta["variant"], variant.name());
    assert_eq!(meta["encoder_version"], ENCODER_VERSION.to_string());
    assert_eq!(meta["step"], "1234");
    let net: NetConfig = serde_json::from_str(meta["net"].as_str().unwrap()).unwrap();
    assert_eq!(&net, config);
    // The checkpoint's leaf material record travels with the export.
    let leaf: koma_model::LeafMaterial = serde_json::from_str(meta["leaf_material"].as_str().unwrap()).unwrap();
    assert_eq!(leaf, LEAF_MATERIAL);
    let names = |key: &str| -> Vec<String> { serde_json::from_str(meta[key].as_str().unwrap()).unwrap() };
    assert_eq!(names("input_planes").len(), s.input_planes);
    assert_eq!(names("input_planes")[0], encoder.input_plane_info()[0].to_string());
    assert_eq!(names("policy_planes").len(), s.policy_planes);
}

fn check_variant(variant: Variant) {
    for (name, config, seed) in [("pooling + attack planes", pooling_config(), 11), ("plain", plain_config(), 12)] {
        let (policy, wdl) = check(variant, &config, seed);
        eprintln!("{variant}, {name}: max abs difference policy logits {policy:.2e}, wdl {wdl:.2e}");
    }
}

#[test]
fn onnxruntime_matches_koma_on_shogi() {
    check_variant(Variant::Shogi);
}

#[test]
fn onnxruntime_matches_koma_on_sho() {
    check_variant(Variant::Sho);
}

#[test]
fn onnxruntime_matches_koma_on_dai() {
    check_variant(Variant::Dai);
}

#[test]
fn unsupported_exports_are_refused() {
    // A network whose shape is not its variant's encoder's.
    let net = koma_model::Net::new(&common::tiny_config(), common::tiny_shape(), 1, Device::Cpu).unwrap();
    let meta = koma_model::ModelMeta {
        variant: Variant::Shogi,
        encoder_version: ENCODER_VERSION,
        net: net.config().clone(),
        shape: net.shape(),
        step: 0,
        parameters: 0,
        created_unix_ms: 0,
        producer: String::new(),
        leaf_material: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tiny.onnx");
    let err = koma_model::write_onnx_file(&net, &meta, &out).unwrap_err();
    assert!(matches!(err, koma_model::CheckpointError::EncoderShape { .. }), "{err}");
    assert!(!out.exists());
    // The weights of a checkpoint pair are never overwritten.
    let stem = dir.path().join("ckpt");
    let (_, paths) = common::save_shogi_checkpoint(&stem, 3, 0);
    let before = std::fs::read(&paths.weights).unwrap();
    let err = koma_model::export_onnx(&stem, &paths.weights).unwrap_err();
    assert!(matches!(err, koma_model::CheckpointError::WouldOverwriteCheckpoint { .. }), "{err}");
    assert_eq!(std::fs::read(&paths.weights).unwrap(), before);
}
