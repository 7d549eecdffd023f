//! Bad input at the door of `koma`: config files and arena arguments are
//! refused with exit status 2, an error that names what is wrong, and nothing left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("koma-harden-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn assert_refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing in: {err}");
    }
}

/// `koma train` with `config_text`: refused with exit 2, and no run folder.
fn train_refuses(dir: &Path, config_text: &str, extra: &[&str], needles: &[&str]) {
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, config_text).unwrap();
    let runs = dir.join("runs");
    let mut args = vec!["train", "--config", cfg.to_str().unwrap(), "--run", "r", "--runs-dir"];
    args.push(runs.to_str().unwrap());
    args.push("--quiet");
    args.extend_from_slice(extra);
    let o = koma(&args, "");
    assert_refused(&o, needles);
    assert!(!runs.join("r").exists(), "{config_text}: a run folder was left behind");
}

#[test]
fn train_refuses_bad_configs_with_status_2_and_no_run_folder() {
    let dir = scratch("train");
    for (text, needles) in [
        ("variant = \"shogi\"\n[trian]\nlr = 0.1\n", &["unknown top-level key `trian`"][..]),
        ("[train]\nlearning_rate = 0.1\n", &["learning_rate"]),
        ("[search]\nc_puct_base = inf\n", &["search.c_puct_base = inf", "[1, 1000000000]"]),
        ("[search]\ndirichlet_alpha_total = nan\n", &["search.dirichlet_alpha_total = NaN", "(0, 1000]"]),
        ("[search]\nvirtual_loss = inf\n", &["search.virtual_loss = inf"]),
        ("[search]\npolicy_softmax_temperature = nan\n", &["search.policy_softmax_temperature = NaN"]),
        ("[selfplay]\ntemperature_start = inf\n", &["selfplay.temperature_start = inf"]),
        ("[selfplay]\nresign_threshold = nan\n", &["selfplay.resign_threshold = NaN", "[-1, 1]"]),
        ("[selfplay]\ntorch_threads = 100000\n", &["selfplay.torch_threads = 100000", "0..=1024"]),
        ("[selfplay]\ndevice = \"cdua\"\n", &["selfplay.device = \"cdua\""]),
        ("[train]\ntrain_ratio = inf\n", &["train.train_ratio = inf", "(0, 1000]"]),
        ("[train]\npolicy_weight = nan\n", &["train.policy_weight = NaN"]),
        ("[eval]\ngames = 0\n", &["eval.games = 0", "eval.interval = 0"]),
        ("[train]\neval_games = 40\n", &["train.eval_games", "`games` in the [eval] table"]),
        ("[train]\ndevice = \"tpu\"\n", &["train.device = \"tpu\""]),
    ] {
        train_refuses(&dir, text, &[], needles);
    }
    // The command line's limits too.
    train_refuses(&dir, "[eval]\ninterval = 0\n", &["--max-minutes", "NaN"], &["train.max_minutes = NaN"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_command_that_reads_a_config_refuses_a_typo() {
    let dir = scratch("typo");
    let cfg = dir.join("typo.toml");
    std::fs::write(&cfg, "variant = \"shogi\"\n[model]\nblocks = 1\nchannels = 8\n[trian]\nlr = 0.1\n").unwrap();
    let c = cfg.to_str().unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    for args in [
        &["selfplay", "--config", c, "--uniform", "--games", "1", "--out", o][..],
        &["init", "--config", c, "--out", o],
        &["bench", "selfplay", "--config", c],
    ] {
        let r = koma(args, "");
        assert_refused(&r, &["unknown top-level key `trian`"]);
    }
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn arena_refuses_zero_plies_and_zero_concurrency() {
    let dir = scratch("arena");
    let out = dir.join("m");
    let o = out.to_str().unwrap();
    let base = ["arena", "--player", "a=random", "--player", "b=greedy", "--games", "2", "--out", o];
    for (extra, needle) in [
        (&["--max-plies", "0"][..], "--max-plies"),
        (&["--concurrency", "0"], "--concurrency"),
        (&["--hang-timeout", "0"], "--hang-timeout"),
        (&["--max-plies=-3"], "--max-plies"),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        assert_refused(&koma(&args, ""), &[needle]);
    }
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn evaluate_refuses_zero_games() {
    let o = koma(&["evaluate", "--checkpoint", "/nonexistent/ckpt", "--games", "0"], "");
    assert_refused(&o, &["--games"]);
}

const TINY: &str = concat!(
    tiny_network!(),
    tiny_search!(),
    r#"games_per_worker = 8
simulations_full = 4
simulations_cheap = 2
max_plies = 40
samples_per_chunk = 50
seed = 5
[train]
batch_size = 16
replay_window = 2000
min_replay = 32
checkpoint_interval = 4
seed = 9
[eval]
interval = 0
"#
);

#[test]
fn a_garbage_chunk_is_skipped_with_a_warning_that_quiet_does_not_hide() {
    let dir = scratch("chunks");
    let cfg = dir.join("tiny.toml");
    std::fs::write(&cfg, TINY).unwrap();
    let samples_dir = dir.join("runs/r/samples");
    std::fs::create_dir_all(&samples_dir).unwrap();
    // Intact (the checksum matches) but the SFEN is garbage.
    let enc = model::encoding::Encoder::new(rules::Variant::Shogi);
    let header = dataio::ChunkHeader {
        variant: rules::Variant::Shogi,
        encoder_version: model::encoding::ENCODER_VERSION,
        policy_size: enc.policy_size() as u32,
        count: 1,
    };
    let sample = dataio::Sample {
        sfen: "not a position".into(),
        repetitions: 0,
        policy: vec![],
        result: Some(dataio::GameResult::Draw),
        root_wdl: [0.0, 1.0, 0.0],
        plies_left: 1,
        full_search: false,
        aux: dataio::AuxTargets::default(),
    };
    dataio::write_chunk(samples_dir.join("garbage.chunk"), &header, &[sample]).unwrap();
    let runs = dir.join("runs");
    let o = koma(
        &["train", "--config", cfg.to_str().unwrap(), "--run", "r", "--runs-dir", runs.to_str().unwrap()]
            .into_iter()
            .chain(["--quiet", "--max-steps", "2"])
            .collect::<Vec<_>>(),
        "",
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: skipping sample chunk") && err.contains("garbage.chunk") && err.contains("SFEN"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
