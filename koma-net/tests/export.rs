//! Sharing a network: a checkpoint pair copied under another name loads by its own stem,
//! a damaged one is refused cleanly, and `koma export` writes one file that every loader
//! takes (`koma eval`, `koma evaluate`, `koma learn --init`, `koma train --init`,
//! `koma arena koma:FILE`) and
//! that Python's `safetensors` package opens; `--format onnx` writes the same network as
//! an ONNX model (model/tests/onnx_export.rs runs those in onnxruntime).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{scratch_with_config, KOMA};

const CONFIG: &str = concat!(
    tiny_network!(),
    r#"[selfplay]
workers = 1
games_per_worker = 4
simulations_full = 2
simulations_cheap = 1
max_plies = 20
samples_per_chunk = 20
[train]
batch_size = 4
min_replay = 8
checkpoint_interval = 1
[eval]
interval = 0
"#
);

fn setup(name: &str) -> (PathBuf, PathBuf) {
    scratch_with_config(&format!("koma-export-{name}"), CONFIG)
}

fn koma(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(KOMA).args(args.iter().map(|a| a.as_ref())).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `koma init` with `seed`: returns the stem.
fn init(cfg: &Path, stem: &Path, seed: u64) -> PathBuf {
    let out = koma(&[&"init", &"--config", &cfg, &"--out", &stem, &"--seed", &seed.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    stem.to_path_buf()
}

/// The `wdl ...` line `koma eval` prints for the start position.
fn eval_wdl(network: &Path) -> String {
    let out = koma(&[&"eval", &"--checkpoint", &network]);
    assert!(out.status.success(), "{}: {}", network.display(), text(&out.stderr));
    text(&out.stdout).lines().find(|l| l.starts_with("wdl ")).expect("a wdl line").to_string()
}

fn copy_pair(stem: &Path, to_stem: &Path) {
    for ext in ["json", "safetensors"] {
        std::fs::copy(stem.with_extension(ext), to_stem.with_extension(ext)).unwrap();
    }
}

#[test]
fn a_copied_and_renamed_checkpoint_loads_its_own_weights() {
    let (dir, cfg) = setup("renamed");
    let ckpt = init(&cfg, &dir.join("run/ckpt-00000007"), 1);
    let other = init(&cfg, &dir.join("run/ckpt-00000008"), 2);
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    copy_pair(&ckpt, &elsewhere.join("model-shogi"));
    // The metadata still names `ckpt-00000007.safetensors`; put other weights there.
    std::fs::copy(other.with_extension("safetensors"), elsewhere.join("ckpt-00000007.safetensors")).unwrap();
    let original = eval_wdl(&ckpt);
    assert_ne!(original, eval_wdl(&other), "two seeds, two networks");
    assert_eq!(eval_wdl(&elsewhere.join("model-shogi")), original);
    assert_eq!(eval_wdl(&elsewhere.join("model-shogi.json")), original);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_or_missing_weights_are_refused_without_a_panic() {
    let (dir, cfg) = setup("damaged");
    let ckpt = init(&cfg, &dir.join("model-shogi"), 1);
    let weights = ckpt.with_extension("safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 3]).unwrap();
    let out = koma(&[&"eval", &"--checkpoint", &ckpt]);
    let err = text(&out.stderr);
    assert!(matches!(out.status.code(), Some(1) | Some(2)), "{:?}: {err}", out.status);
    assert!(err.contains("truncated") && err.contains("model-shogi.safetensors"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // The cause of an error is printed once.
    std::fs::remove_file(&weights).unwrap();
    let out = koma(&[&"eval", &"--checkpoint", &ckpt]);
    let err = text(&out.stderr);
    assert!(matches!(out.status.code(), Some(1) | Some(2)), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");

    // NaN weights whose checksum matches are refused, naming the file.
    let nan = dir.join("nan");
    init(&cfg, &nan, 3);
    poison_weights(&nan);
    let out = koma(&[&"eval", &"--checkpoint", &nan]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("NaN") && err.contains("nan.safetensors") && err.contains("not finite"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Puts a NaN into the weights of the pair at `stem` and fixes the metadata's size and
/// checksum, as a diverged run would have written them.
fn poison_weights(stem: &Path) {
    use safetensors::tensor::{SafeTensors, TensorView};
    let path = stem.with_extension("safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> =
        st.tensors().into_iter().map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec())).collect();
    let fc = tensors.iter_mut().find(|t| t.0 == "value.fc2.bias").unwrap();
    fc.2[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    let views: Vec<_> = tensors
        .iter()
        .map(|(n, s, d)| (n.clone(), TensorView::new(safetensors::Dtype::F32, s.clone(), d).unwrap()))
        .collect();
    let out = safetensors::serialize(views, header.metadata()).unwrap();
    std::fs::write(&path, &out).unwrap();
    let meta_path = stem.with_extension("json");
    let mut meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
    use sha2::Digest;
    meta["weights_bytes"] = out.len().into();
    meta["weights_sha256"] = sha2::Sha256::digest(&out).iter().map(|b| format!("{b:02x}")).collect::<String>().into();
    std::fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
}

#[test]
fn an_exported_file_loads_everywhere() {
    let (dir, cfg) = setup("everywhere");
    let ckpt = init(&cfg, &dir.join("run/ckpt-00000000"), 4);
    let file = dir.join("shared/model-shogi.safetensors");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let out = koma(&[&"export", &ckpt, &"-o", &file]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("tensors sha256"), "{}", text(&out.stdout));
    let original = eval_wdl(&ckpt);
    std::fs::remove_dir_all(dir.join("run")).unwrap();
    assert_eq!(eval_wdl(&file), original);

    let out = koma(&[
        &"evaluate",
        &"--checkpoint",
        &file,
        &"--opponent",
        &file,
        &"--games",
        &"2",
        &"--simulations",
        &"1",
        &"--max-plies",
        &"20",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("2 games"), "{}", text(&out.stdout));

    let records = dir.join("games.usi");
    std::fs::write(&records, "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\n").unwrap();
    let out = koma(&[
        &"learn",
        &"--config",
        &cfg,
        &"--records",
        &records,
        &"--init",
        &file,
        &"--run",
        &"l",
        &"--runs-dir",
        &dir.join("runs"),
        &"--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let runs = dir.join("runs");
    let train = |init: &Path, run: &str| {
        koma(&[
            &"train",
            &"--config",
            &cfg,
            &"--run",
            &run,
            &"--runs-dir",
            &runs,
            &"--init",
            &init,
            &"--max-steps",
            &"1",
            &"--quiet",
        ])
    };
    let out = train(&file, "t");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(runs.join("t/checkpoints/ckpt-00000001.json").is_file());
    let out = train(&dir.join("no-such-model"), "u");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no-such-model"), "{}", text(&out.stderr));

    let player = format!("net=koma:{}", file.display());
    let out = koma(&[
        &"arena",
        &"--player",
        &player,
        &"--player",
        &"rnd=random",
        &"--games",
        &"2",
        &"--tc",
        &"nodes=4",
        &"--max-plies",
        &"30",
        &"--concurrency",
        &"1",
        &"--out",
        &dir.join("arena"),
        &"--quiet",
    ]);
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_refuses_what_it_cannot_load() {
    let (dir, cfg) = setup("refuses");
    let ckpt = init(&cfg, &dir.join("c"), 1);
    let out = koma(&[&"export", &dir.join("missing"), &"-o", &dir.join("m.safetensors")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(!dir.join("m.safetensors").exists());
    // Over the weights of a checkpoint pair: refused, the pair intact.
    let out = koma(&[&"export", &ckpt, &"-o", &ckpt.with_extension("safetensors")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("refusing to overwrite"), "{}", text(&out.stderr));
    eval_wdl(&ckpt);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `tensors sha256 ...` at the end of `koma export`'s line.
fn printed_digest(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).trim().rsplit(' ').next().unwrap().to_string()
}

#[test]
fn export_writes_onnx_on_request() {
    let (dir, cfg) = setup("onnx");
    let ckpt = init(&cfg, &dir.join("c"), 1);
    let onnx = dir.join("net.onnx");
    let out = koma(&[&"export", &"--format", &"onnx", &ckpt, &"-o", &onnx]);
    assert!(text(&out.stdout).contains("ONNX model, opset 17"), "{}", text(&out.stdout));
    let onnx_digest = printed_digest(&out);
    let bytes = std::fs::read(&onnx).unwrap();
    assert!(bytes.windows(9).any(|w| w == b"koma-onnx"), "the metadata names the format");
    // The same network as a model file (the default format) of the same checkpoint.
    let model = dir.join("net.safetensors");
    assert_eq!(printed_digest(&koma(&[&"export", &ckpt, &"-o", &model])), onnx_digest);
    eval_wdl(&model);
    // Unknown formats: bad input, the formats listed, nothing written.
    let out = koma(&[&"export", &"--format", &"tflite", &ckpt, &"-o", &dir.join("x")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("[possible values: model, onnx]"), "{}", text(&out.stderr));
    assert!(!dir.join("x").exists());
    let help = text(&koma(&[&"export", &"--help"]).stdout);
    assert!(help.contains("--format") && help.contains("onnx"), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads a model file with Python's `safetensors` and recomputes the tensor digest as
/// `data/FORMAT.md` describes it.
const PYTHON_CHECK: &str = r#"
import hashlib, json, struct, sys
from safetensors import safe_open
with safe_open(sys.argv[1], framework="numpy") as f:
    meta = f.metadata()
    names = sorted(f.keys(), key=lambda n: n.encode())
    h = hashlib.sha256()
    for name in names:
        t = f.get_tensor(name)
        data = t.astype("<f4").tobytes()
        h.update(name.encode() + b"\0" + struct.pack("<Q", t.ndim))
        for d in t.shape:
            h.update(struct.pack("<Q", d))
        h.update(struct.pack("<Q", len(data)) + data)
assert meta["format"] == "koma-model", meta
assert h.hexdigest() == meta["tensors_sha256"], (h.hexdigest(), meta["tensors_sha256"])
print(json.dumps({"variant": meta["variant"], "step": int(meta["step"]), "tensors": len(names),
                  "blocks": json.loads(meta["net"])["blocks"], "shape": json.loads(meta["shape"])}))
"#;

/// The repository's `.venv` Python (scripts/setup.sh), or `KOMA_PYTHON`, when it has
/// the `safetensors` package.
fn python_with_safetensors() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = std::env::var_os("KOMA_PYTHON").map(PathBuf::from).unwrap_or(root.join(".venv/bin/python"));
    let ok = Command::new(&python).args(["-c", "import safetensors, numpy"]).output();
    ok.is_ok_and(|o| o.status.success()).then_some(python)
}

#[test]
fn python_safetensors_opens_an_exported_file() {
    let Some(python) = python_with_safetensors() else {
        eprintln!("skipped: no Python with the safetensors package (scripts/setup.sh installs it)");
        return;
    };
    let (dir, cfg) = setup("python");
    let ckpt = init(&cfg, &dir.join("c"), 1);
    let file = dir.join("model.safetensors");
    let out = koma(&[&"export", &ckpt, &"-o", &file]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = Command::new(python).args(["-c", PYTHON_CHECK]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tensors = safetensors::SafeTensors::deserialize(&std::fs::read(&file).unwrap()).unwrap().len();
    assert_eq!(seen["variant"], "shogi");
    assert_eq!(seen["step"], 0);
    assert_eq!(seen["blocks"], 1);
    assert_eq!(seen["tensors"], tensors);
    assert_eq!(seen["shape"]["board_height"], 9);
    let _ = std::fs::remove_dir_all(&dir);
}
