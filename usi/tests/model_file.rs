//! `koma-usi` plays from a model file written by `koma export`: named by `ModelFile`, or
//! found by `ModelFile=auto` as `model-<variant>.safetensors` next to the binary.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use rules::{Position, Variant};

/// A tiny network exported to `dir/name`.
fn export_tiny(dir: &Path, name: &str) -> std::path::PathBuf {
    let file = dir.join(name);
    model::export_model(tiny_checkpoint("shogi"), &file).unwrap();
    file
}

/// The engine, set up with `options`, names `network` as the network it loaded and
/// plays a legal move with it.
fn loads_and_plays(e: &mut Engine, options: &[(&str, &str)], network: &Path) {
    let lines = e.handshake(options);
    let shown = format!("info string network: {}", network.display());
    assert!(lines.iter().any(|l| l.starts_with(&shown)), "{lines:?}");
    plays_a_legal_move(e);
}

fn plays_a_legal_move(e: &mut Engine) {
    e.send("position startpos moves 7g7f");
    let bm = e.ask("go nodes 16", 30.0, |l| l.starts_with("bestmove"));
    let mv = bm.split_whitespace().nth(1).unwrap().to_string();
    let mut pos = Position::startpos(Variant::Shogi);
    pos.play_usi("7g7f").unwrap();
    assert!(pos.play_usi(&mv).is_ok(), "{bm} is not legal");
}

#[test]
fn model_file_option_loads_an_exported_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = export_tiny(dir.path(), "shared net.safetensors");
    let mut e = Engine::start(&[]);
    loads_and_plays(&mut e, &[("ModelFile", file.to_str().unwrap())], &file);
}

#[test]
fn auto_finds_model_variant_safetensors_next_to_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let file = export_tiny(dir.path(), "model-shogi.safetensors");
    // A copy of the binary in the model's folder.
    let mut e = binary_copy_in(dir.path(), dir.path());
    loads_and_plays(&mut e, &[], &file);
}

/// A copy of the binary in `bin`, started in `cwd` without `$KOMA_MODEL`, libtorch from
/// the repository's .venv.
fn binary_copy_in(bin: &Path, cwd: &Path) -> Engine {
    std::fs::create_dir_all(bin).unwrap();
    let copy = bin.join("koma-usi");
    std::fs::copy(exe(), &copy).unwrap();
    let mut command = Command::new(&copy);
    command.current_dir(cwd).env_remove("KOMA_MODEL").env("LD_LIBRARY_PATH", repo_root().join(".venv/torch-lib"));
    Engine::from_command(&mut command)
}

/// A copy of the binary at `checkout/target/release/koma-usi`, started in `cwd`.
fn binary_in_checkout(checkout: &Path, cwd: &Path) -> Engine {
    binary_copy_in(&checkout.join("target").join("release"), cwd)
}

/// A fresh clone plays its shipped network, `models/<variant>.safetensors`
/// of the checkout the binary is in, without any training.
#[test]
fn auto_finds_the_shipped_network_in_the_checkouts_models_folder() {
    let checkout = tempfile::tempdir().unwrap();
    let models = checkout.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let shipped = export_tiny(&models, "shogi.safetensors");
    let elsewhere = tempfile::tempdir().unwrap();
    let mut e = binary_in_checkout(checkout.path(), elsewhere.path());
    loads_and_plays(&mut e, &[], &shipped);
}

/// The user's own networks come first: a run checkpoint under the working directory
/// hides the shipped network.
#[test]
fn auto_prefers_a_run_checkpoint_to_the_shipped_network() {
    let checkout = tempfile::tempdir().unwrap();
    let models = checkout.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    export_tiny(&models, "shogi.safetensors");
    let own = into_run(checkout.path(), "my-run", &tiny_checkpoint("shogi"));
    let mut e = binary_in_checkout(checkout.path(), checkout.path());
    loads_and_plays(&mut e, &[], &own.with_extension(""));
}

/// The networks this repository ships (`models/`): each loads through
/// `ModelFile=auto` as the engine of its game, and plays a legal move from the start.
#[test]
fn the_shipped_networks_load_and_play() {
    let shipped = repo_root().join("models");
    let checkout = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&shipped, checkout.path().join("models")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    for variant in [Variant::Shogi, Variant::Sho, Variant::Dai] {
        let file = checkout.path().join("models").join(format!("{}.safetensors", variant.name()));
        assert!(file.exists(), "{} is missing: scripts/make-models.sh makes it", file.display());
        let mut e = binary_in_checkout(checkout.path(), elsewhere.path());
        let lines = e.handshake(&[("UCI_Variant", variant.name())]);
        let shown = format!("info string network: {}", file.display());
        assert!(lines.iter().any(|l| l.starts_with(&shown)), "{lines:?}");
        e.send("position startpos");
        let bm = e.ask("go nodes 32", 60.0, |l| l.starts_with("bestmove"));
        let mv = bm.split_whitespace().nth(1).unwrap().to_string();
        assert!(Position::startpos(variant).play_usi(&mv).is_ok(), "{variant}: {bm} is not legal");
    }
}

/// Copies a checkpoint pair to `runs/<run>/checkpoints/ckpt-00000001`.
fn into_run(root: &Path, run: &str, checkpoint: &Path) -> std::path::PathBuf {
    let dir = root.join("runs").join(run).join("checkpoints");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = dir.join("ckpt-00000001");
    std::fs::copy(checkpoint.with_extension("safetensors"), stem.with_extension("safetensors")).unwrap();
    std::fs::copy(checkpoint, stem.with_extension("json")).unwrap();
    stem.with_extension("json")
}

#[test]
fn auto_takes_the_newest_run_checkpoint_of_the_engines_variant() {
    let dir = tempfile::tempdir().unwrap();
    let shogi = into_run(dir.path(), "shogi-run", &tiny_checkpoint("shogi"));
    std::thread::sleep(std::time::Duration::from_millis(50));
    // Trained after the shogi run: newer, but of another game.
    into_run(dir.path(), "dai-run", &tiny_checkpoint("dai"));
    let mut command = Command::new(exe());
    command.current_dir(dir.path()).env_remove("KOMA_MODEL");
    let mut e = Engine::from_command(&mut command);
    loads_and_plays(&mut e, &[], &shogi.with_extension(""));
}

/// A run that publishes its networks: `ModelFile=auto` takes the one its
/// `models/latest.json` names, not a newer checkpoint that was never published.
#[test]
fn auto_takes_the_network_a_run_published() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("runs").join("shogi-run");
    let tiny = tiny_checkpoint("shogi");
    let models = run.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let published = models.join("ckpt-00000001");
    std::fs::copy(tiny.with_extension("safetensors"), published.with_extension("safetensors")).unwrap();
    std::fs::copy(&tiny, published.with_extension("json")).unwrap();
    std::fs::write(models.join("latest.json"), dataio::run_layout::ModelPointer::to_step(1).to_json()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    into_run(dir.path(), "shogi-run", &tiny);
    let mut command = Command::new(exe());
    command.current_dir(dir.path()).env_remove("KOMA_MODEL");
    let mut e = Engine::from_command(&mut command);
    loads_and_plays(&mut e, &[], &published);
}

/// The ~82 KB tiny model file with a header that declares 256 blocks x
/// 4096 channels (valid ranges, 5.1 GB of weights). The engine used to build that network,
/// panic in tch when the memory ran out and print the backtrace on stderr; now the loader
/// refuses it from the file's size, the engine says so in an `info string error` and
/// goes on, and stderr has no panic.
#[test]
fn a_model_file_declaring_a_huge_network_is_an_error_line_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = export_tiny(dir.path(), "tiny.safetensors");
    let huge = dir.path().join("huge.safetensors");
    rewrite_header(&file, &huge, |header| {
        let net =
            header["net"].replace("\"blocks\":1,", "\"blocks\":256,").replace("\"channels\":16,", "\"channels\":4096,");
        assert!(net.contains("\"blocks\":256,") && net.contains("\"channels\":4096,"), "{net}");
        header.insert("net".into(), net);
    });
    assert!(std::fs::metadata(&huge).unwrap().len() < 100_000);

    let stderr_path = dir.path().join("stderr.txt");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let mut e = Engine::with_stderr(&mut Command::new(exe()), stderr.into());
    let lines = e.handshake(&[("ModelFile", huge.to_str().unwrap())]);
    let error = lines.iter().find(|l| l.starts_with("info string error")).unwrap_or_else(|| panic!("{lines:?}"));
    assert!(error.contains("huge.safetensors") && error.contains("more than the whole file holds"), "{error}");
    // The engine goes on: another network loads and plays.
    e.send(&format!("setoption name ModelFile value {}", file.display()));
    e.send("isready");
    let lines = e.until(120.0, "readyok");
    assert!(lines.iter().any(|l| l.starts_with("info string network:")), "{lines:?}");
    plays_a_legal_move(&mut e);
    e.send("quit");
    assert!(e.wait_exit(30.0).success());
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
}

/// Writes `to`: the model file `from` with its header changed by `edit`, the same tensors.
fn rewrite_header(from: &Path, to: &Path, edit: impl FnOnce(&mut std::collections::HashMap<String, String>)) {
    use nn::file::tensors::{decode, encode, metadata, HostTensor};
    let bytes = std::fs::read(from).unwrap();
    let mut header = metadata(&bytes).unwrap();
    let tensors: Vec<HostTensor> = decode(&bytes)
        .unwrap()
        .tensors()
        .into_iter()
        .map(|(name, v)| HostTensor { name, shape: v.shape().to_vec(), bytes: v.data().to_vec() })
        .collect();
    edit(&mut header);
    std::fs::write(to, encode(&tensors, header).unwrap()).unwrap();
}

/// `dir/name`: the tiny model file with a leaf material record `{"mix":0.5,"scale":36.0}`
/// in its header (as `koma export` writes a network trained with that mix).
fn export_tiny_recording(dir: &Path, name: &str) -> std::path::PathBuf {
    let plain = export_tiny(dir, &format!("plain-{name}"));
    let file = dir.join(name);
    rewrite_header(&plain, &file, |header| {
        header.insert(model::LEAF_MATERIAL_KEY.into(), r#"{"mix":0.5,"scale":36.0}"#.into());
    });
    assert_eq!(
        model::read_model_meta(&file).unwrap().leaf_material,
        Some(model::LeafMaterial { mix: 0.5, scale: 36.0 })
    );
    file
}

/// A network file that records the leaf material mix it was trained with: with
/// `MaterialMix` and `MaterialScale` at their default (auto) the engine says at isready
/// that it searches with it; set explicitly, the options win and nothing is said.
#[test]
fn isready_says_which_leaf_material_setting_the_network_brings() {
    let dir = tempfile::tempdir().unwrap();
    let file = export_tiny_recording(dir.path(), "mixed.safetensors");
    let mut e = Engine::start(&[]);
    let lines = e.handshake(&[("ModelFile", file.to_str().unwrap())]);
    let note = "info string material mix 50% (the network's) at scale 36 (the network's); \
                the network was trained with 50% at scale 36";
    assert!(lines.iter().any(|l| l == note), "{lines:?}");
    plays_a_legal_move(&mut e);
    e.send("setoption name MaterialMix value 0");
    e.send("setoption name MaterialScale value 6");
    e.send("isready");
    let lines = e.until(120.0, "readyok");
    assert!(lines.iter().any(|l| l.starts_with("info string network:")), "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("material mix")), "{lines:?}");
    e.send("setoption name MaterialMix value -1");
    e.send("isready");
    let lines = e.until(120.0, "readyok");
    assert!(
        lines.iter().any(|l| l.starts_with("info string material mix 50% (the network's) at scale 6 (MaterialScale)")),
        "{lines:?}"
    );
    // A network without a record: nothing to say.
    let mut e = Engine::start(&[]);
    let lines = e.handshake(&[("ModelFile", export_tiny(dir.path(), "plain.safetensors").to_str().unwrap())]);
    assert!(!lines.iter().any(|l| l.contains("material mix")), "{lines:?}");
}
