//! `koma train` as a process: kill -9 in the middle of a run, then `--resume`; SIGINT
//! saves and exits; `koma learn` trains from records; `koma evaluate` plays a match.
//! Tiny network and settings so that each run takes seconds on a CPU.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{scratch_with_config, KOMA};

const CONFIG: &str = concat!(
    tiny_network!(),
    tiny_search!(),
    r#"games_per_worker = 8
simulations_full = 4
simulations_cheap = 2
max_plies = 40
random_opening_plies = 2
samples_per_chunk = 50
seed = 5
[train]
optimizer = "sgd"
lr = 0.01
warmup_steps = 2
batch_size = 16
replay_window = 2000
min_replay = 32
train_ratio = 8.0
checkpoint_interval = 4
log_interval = 2
seed = 9
[eval]
interval = 0
"#
);

fn setup(name: &str) -> (PathBuf, PathBuf) {
    scratch_with_config(&format!("koma-train-{name}"), CONFIG)
}

fn spawn(cfg: &Path, runs: &Path, extra: &[&str]) -> Child {
    Command::new(KOMA)
        .args(["train", "--config"])
        .arg(cfg)
        .args(["--run", "r", "--runs-dir"])
        .arg(runs)
        .arg("--quiet")
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn koma")
}

fn state(runs: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read(runs.join("r/state.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

fn step_of(runs: &Path) -> u64 {
    state(runs).and_then(|s| s["step"].as_u64()).unwrap_or(0)
}

fn wait_for_step(child: &mut Child, runs: &Path, step: u64) {
    let t = Instant::now();
    while step_of(runs) < step {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("koma train exited early with {status}");
        }
        assert!(t.elapsed() < Duration::from_secs(300), "no checkpoint at step {step} within 300 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every checkpoint, optimiser state and sample chunk of the run loads.
fn check_files(runs: &Path) -> (usize, usize) {
    let ck = runs.join("r/checkpoints");
    let mut n_ck = 0;
    for e in std::fs::read_dir(&ck).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".json") {
            model::load_net(&p, &model::Expected::any(), model::tch::Device::Cpu)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let stem = p.with_extension("");
            let optim = trainer::learning::optim::optim_path(&stem);
            assert!(optim.exists(), "{} missing", optim.display());
            let bytes = std::fs::read(&optim).unwrap();
            safetensors::SafeTensors::deserialize(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", optim.display()));
            n_ck += 1;
        }
    }
    let chunks = dataio::list_chunks(runs.join("r/samples")).unwrap();
    for c in &chunks {
        dataio::read_chunk(c, &nn::EncoderLabels).unwrap_or_else(|e| panic!("{e}"));
    }
    (n_ck, chunks.len())
}

#[test]
fn kill_9_then_resume_continues_from_the_last_checkpoint() {
    let (dir, cfg) = setup("kill");
    let runs = dir.join("runs");
    let mut child = spawn(&cfg, &runs, &[]);
    wait_for_step(&mut child, &runs, 8);
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let before = state(&runs).unwrap();
    let step = before["step"].as_u64().unwrap();
    assert!(step >= 8);
    let (n_ck, n_chunks) = check_files(&runs);
    assert!(n_ck >= 3 && n_chunks >= 1, "{n_ck} checkpoints, {n_chunks} chunks");
    // A leftover temporary file (as a kill during a write would leave) is ignored.
    std::fs::write(runs.join("r/samples/.sp-x-000001.chunk.tmp-1"), b"half").unwrap();

    let target = step + 8;
    let out = Command::new(KOMA)
        .args(["train", "--config"])
        .arg(&cfg)
        .args(["--run", "r", "--runs-dir"])
        .arg(&runs)
        .args(["--resume", "--quiet", "--max-steps", &target.to_string()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed: {stderr}");
    // The run resumes from its newest complete checkpoint: the one state.json names, or
    // a later one whose files were all written when the kill came before state.json's
    // update (its own `.learner` file carries the counters).
    let resumed: u64 = stderr
        .split("resuming run `r` at step ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no resume line: {stderr}"));
    assert!(resumed >= step && resumed < target, "resumed at {resumed}, state.json said {step}");
    assert!(runs.join(format!("r/checkpoints/ckpt-{resumed:08}.json")).exists());
    let after = state(&runs).unwrap();
    assert_eq!(after["step"].as_u64().unwrap(), target);
    assert_eq!(after["resumes"].as_u64().unwrap(), 1);
    let trained_since = (target - resumed) * 16;
    assert!(after["samples_trained"].as_u64().unwrap() >= before["samples_trained"].as_u64().unwrap() + trained_since);
    assert!(after["games"].as_u64().unwrap() >= before["games"].as_u64().unwrap());
    assert_eq!(after["learner_seed"], before["learner_seed"]);
    check_files(&runs);
    // Without --resume an existing run is refused (bad input, status 2).
    let out = Command::new(KOMA)
        .args(["train", "--config"])
        .arg(&cfg)
        .args(["--run", "r", "--runs-dir"])
        .arg(&runs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_saves_and_exits() {
    let (dir, cfg) = setup("sigint");
    let runs = dir.join("runs");
    let mut child = spawn(&cfg, &runs, &[]);
    wait_for_step(&mut child, &runs, 4);
    let st = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("interrupted"), "{stdout}");
    let s = state(&runs).unwrap();
    // The final checkpoint is the final step.
    let ck = s["checkpoint"].as_str().unwrap();
    assert!(ck.ends_with(&format!("{:08}", s["step"].as_u64().unwrap())), "{s}");
    check_files(&runs);
    // `koma evaluate` plays the saved network, with the engine's search and, as
    // scripts/train.sh suggests, with the run's config (whose self-play root is Gumbel:
    // the network plays as the config's evaluation does, the engine's PUCT root).
    for config in [None, Some(&cfg)] {
        let mut cmd = Command::new(KOMA);
        cmd.args(["evaluate", "--checkpoint"]).arg(runs.join("r").join(ck));
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        let out = cmd
            .args(["--opponent", "greedy", "--games", "4", "--simulations", "2", "--max-plies", "40"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("4 games"), "{stdout}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn learn_from_usi_records() {
    let (dir, cfg) = setup("learn");
    let records = dir.join("games.usi");
    std::fs::write(
        &records,
        "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\nstartpos moves 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b\n",
    )
    .unwrap();
    let out = Command::new(KOMA)
        .args(["learn", "--config"])
        .arg(&cfg)
        .args(["--records"])
        .arg(&records)
        .args(["--run", "l", "--runs-dir"])
        .arg(dir.join("runs"))
        .args(["--epochs", "4", "--quiet"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("11 positions in 2 groups"), "{stdout}");
    let ck: Vec<_> = std::fs::read_dir(dir.join("runs/l/checkpoints")).unwrap().collect();
    assert!(!ck.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
