//! `koma learn --epochs 0` ([`trainer::score`]): a network scored on every position of
//! its inputs, as the validation scores held-out games, and nothing trained or written.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn config(dir: &Path, batch_size: usize) -> PathBuf {
    let path = dir.join(format!("tiny-{batch_size}.toml"));
    let text = format!(
        "variant = \"shogi\"\n[model]\nblocks = 1\nchannels = 8\nvalue_channels = 2\nvalue_hidden = 8\n\
         [train]\noptimizer = \"sgd\"\nlr = 0.05\nwarmup_steps = 0\nbatch_size = {batch_size}\nseed = 3\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Two games of 5 and 6 moves, no results.
fn records(dir: &Path) -> PathBuf {
    let path = dir.join("games.usi");
    std::fs::write(&path, "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\nstartpos moves 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b\n")
        .unwrap();
    path
}

fn options(config: PathBuf, records: PathBuf, runs_dir: &Path, epochs: f64) -> trainer::LearnOptions {
    trainer::LearnOptions {
        config,
        records: vec![records],
        run: "r".into(),
        runs_dir: runs_dir.to_path_buf(),
        epochs,
        init: None,
        validation: 0.0,
        progress: false,
    }
}

fn learnt(dir: &Path, epochs: f64, run: &str) -> PathBuf {
    let mut opts = options(config(dir, 4), records(dir), &dir.join("runs"), epochs);
    opts.run = run.into();
    trainer::learn(&opts, Arc::new(AtomicBool::new(false))).unwrap().checkpoint
}

#[test]
fn scoring_counts_every_position_and_sees_the_learning() {
    let dir = tempfile::tempdir().unwrap();
    let barely = learnt(dir.path(), 0.1, "barely");
    let fitted = learnt(dir.path(), 60.0, "fitted");
    let score_of = |net: &Path| {
        let opts = options(config(dir.path(), 4), records(dir.path()), &dir.path().join("score"), 0.0);
        trainer::score(&opts, net).unwrap()
    };
    let (before, after) = (score_of(&barely), score_of(&fitted));
    assert_eq!((before.positions, before.groups), (11, 2), "every move of both games is a position");
    assert!(
        after.stats.policy_loss < before.stats.policy_loss - 0.5,
        "the fitted network predicts its own games' moves: {} against {}",
        after.stats.policy_loss,
        before.stats.policy_loss
    );
    assert!(after.stats.policy_accuracy > before.stats.policy_accuracy);
    assert!(!dir.path().join("score").exists(), "scoring writes no run");
}

#[test]
fn the_score_does_not_depend_on_the_batch_size() {
    // 11 positions: batches of 4 are 4, 4 and 3; each batch counts by its size.
    let dir = tempfile::tempdir().unwrap();
    let net = learnt(dir.path(), 5.0, "net");
    let score_with = |bs: usize| {
        let opts = options(config(dir.path(), bs), records(dir.path()), &dir.path().join("score"), 0.0);
        trainer::score(&opts, &net).unwrap().stats
    };
    let (small, whole) = (score_with(4), score_with(16));
    for (a, b) in [(small.policy_loss, whole.policy_loss), (small.value_loss, whole.value_loss)] {
        assert!((a - b).abs() < 1e-4, "{a} against {b}");
    }
    assert!((small.policy_accuracy - whole.policy_accuracy).abs() < 1e-6, "{small:?} {whole:?}");
}

#[test]
fn scoring_a_network_of_another_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let net = learnt(dir.path(), 1.0, "net");
    let sho = dir.path().join("sho.toml");
    std::fs::write(&sho, std::fs::read_to_string(config(dir.path(), 4)).unwrap().replace("shogi", "sho")).unwrap();
    let mut opts = options(sho, records(dir.path()), &dir.path().join("score"), 0.0);
    let err = trainer::score(&opts, &net).unwrap_err().to_string();
    assert!(err.contains("variant is sho") && err.contains("game record file(s)"), "{err}");
    // Each kind is named as what it is: an hcpe file is not counted as a game record.
    let hcpe = dir.path().join("one.hcpe");
    std::fs::write(&hcpe, [0u8; 38]).unwrap();
    opts.records = vec![hcpe];
    let err = trainer::score(&opts, &net).unwrap_err().to_string();
    assert!(err.contains("1 hcpe file(s)") && !err.contains("game record file"), "{err}");
}
