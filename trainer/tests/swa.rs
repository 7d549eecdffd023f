//! `train.swa_share`: a run that stops at its budget leaves a last
//! checkpoint, and a published model, holding the mean of the weights at the checkpoints
//! of its last stretch; the raw weights stay in the optimiser state for a resumed run.
//! Tiny network, CPU, seconds.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use common::learner::{chunk, options, tiny_config};
use dataio::run_layout::{self as layout, checkpoint_stem};
use model::tch::{Device, Kind, Tensor};
use model::Expected;
use trainer::learning::optim::optim_path;
use trainer::roles::files::RunFiles;
use trainer::{LearnerRole, TrainFileConfig};

/// Trains the run in `dir` to `max_steps` (fed enough chunks first) and finishes.
fn train(dir: &Path, cache: &Path, first_chunk: u64, max_steps: u64) -> u64 {
    let files = RunFiles::open(dir.to_str().unwrap(), Some(cache)).unwrap();
    for seq in first_chunk..first_chunk + max_steps {
        chunk(&files, "w1", seq, 8);
    }
    let config = TrainFileConfig::from_toml(&tiny_config("swa_share = 0.5\n"), "swa").unwrap();
    let mut role = LearnerRole::open(files, Some(config), options(max_steps)).unwrap();
    let stop = AtomicBool::new(false);
    let outcome = role.run(&stop);
    role.finish(outcome).unwrap().step
}

type Weights = BTreeMap<String, Vec<f64>>;

fn values(t: &Tensor) -> Vec<f64> {
    Vec::<f64>::try_from(t.to_kind(Kind::Double).flatten(0, -1)).unwrap()
}

/// The trainable weights of the network in `<stem>.safetensors`.
fn trainable(dir: &Path, stem: &str) -> Weights {
    let (net, _) = model::load_net(dir.join(stem), &Expected::any(), Device::Cpu).unwrap();
    net.var_store().variables().into_iter().filter(|(_, t)| t.requires_grad()).map(|(n, t)| (n, values(&t))).collect()
}

/// The raw weights kept in checkpoint `stem`'s optimiser state (`<param>.raw`).
fn raw(dir: &Path, stem: &str) -> Weights {
    Tensor::read_safetensors(optim_path(&dir.join(stem)))
        .unwrap()
        .into_iter()
        .filter_map(|(n, t)| n.strip_suffix(".raw").map(|n| (n.to_string(), values(&t))))
        .collect()
}

fn assert_mean(got: &Weights, parts: &[&Weights], what: &str) {
    assert_eq!(got.len(), parts[0].len(), "{what}: variables");
    for (name, v) in got {
        for (j, x) in v.iter().enumerate() {
            let want = parts.iter().map(|p| p[name][j]).sum::<f64>() / parts.len() as f64;
            assert!((x - want).abs() < 1e-5, "{what}: {name}[{j}] = {x}, the mean is {want}");
        }
    }
}

#[test]
fn the_last_checkpoint_is_the_mean_of_the_stretch_and_the_raw_weights_are_kept() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let d = dir.path();
    // max_steps 9, share 0.5: the stretch is steps 4.5 to 9, checkpoints 6 and 8 and the
    // last step, 9.
    assert_eq!(train(d, cache.path(), 0, 9), 9);
    let stem = |s| checkpoint_stem(s);
    let (w6, w8, raw9) = (trainable(d, &stem(6)), trainable(d, &stem(8)), raw(d, &stem(9)));
    assert!(raw(d, &stem(8)).is_empty(), "checkpoints before the end hold the raw weights");
    let last = trainable(d, &stem(9));
    assert_ne!(last, raw9);
    assert_mean(&last, &[&w6, &w8, &raw9], "checkpoint 9");
    assert_eq!(trainable(d, &layout::model_stem(9)), last, "the published model is the mean");
    // Resumed at its budget, the run trains no step and leaves its mean alone (the raw
    // weights it would resume from are restored as for `train.ema_decay`, tested in the
    // learner's startup).
    assert_eq!(train(d, cache.path(), 100, 9), 9);
    assert_eq!(trainable(d, &stem(9)), last, "a session that trained nothing rewrote the mean");
}

#[test]
fn a_stop_on_a_checkpoint_step_rewrites_that_checkpoint_and_its_model() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let d = dir.path();
    // max_steps 8, share 0.5: checkpoints 4, 6 and 8, the last one written twice.
    assert_eq!(train(d, cache.path(), 0, 8), 8);
    let stem = |s| checkpoint_stem(s);
    let last = trainable(d, &stem(8));
    assert_mean(&last, &[&trainable(d, &stem(4)), &trainable(d, &stem(6)), &raw(d, &stem(8))], "checkpoint 8");
    assert_eq!(trainable(d, &layout::model_stem(8)), last, "the published model is the mean");
}
