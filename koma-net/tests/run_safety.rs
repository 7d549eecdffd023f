//! `koma train` never loses work: a signal during the evaluation games stops the run
//! within a second or two, and a run folder whose `state.json` is missing or names a file
//! outside the run is refused instead of overwritten. A run resumed without its
//! `state.json` says so through the log facade.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::KOMA;

/// A tiny network whose first evaluation (at step 0) plays many games.
const CONFIG: &str = concat!(
    tiny_network!(),
    tiny_search!(),
    r#"games_per_worker = 4
simulations_full = 4
simulations_cheap = 2
max_plies = 40
samples_per_chunk = 50
[train]
optimizer = "sgd"
lr = 0.01
batch_size = 16
min_replay = 32
checkpoint_interval = 4
seed = 9
[eval]
interval = 1000
games = 2000
simulations = 8
opponents = ["random"]
"#
);

fn scratch(name: &str) -> (PathBuf, PathBuf) {
    scratch_with(name, CONFIG)
}

fn scratch_with(name: &str, config: &str) -> (PathBuf, PathBuf) {
    common::scratch_with_config(&format!("koma-safety-{name}"), config)
}

fn train(cfg: &Path, runs: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(KOMA);
    c.args(["train", "--quiet", "--config"]).arg(cfg).args(["--run", "r", "--runs-dir"]).arg(runs).args(extra);
    c
}

#[test]
fn sigterm_during_the_evaluation_stops_the_run_promptly() {
    let (dir, cfg) = scratch("sigterm");
    let runs = dir.join("runs");
    let mut child = train(&cfg, &runs, &[]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    // The step-0 evaluation (2000 games) starts once the step-0 checkpoint is written.
    let started = Instant::now();
    while !runs.join("r/state.json").exists() {
        assert!(started.elapsed() < Duration::from_secs(120), "no step-0 checkpoint");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let signalled = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(signalled.elapsed() < Duration::from_secs(10), "still running 10 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = signalled.elapsed();
    eprintln!("koma train stopped {} ms after SIGTERM during its evaluation", took.as_millis());
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(status.success(), "{status:?}");
    // A stopped evaluation is not recorded as a result.
    let evals = std::fs::read_to_string(runs.join("r/eval.jsonl")).unwrap_or_default();
    assert!(evals.is_empty(), "{evals}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_without_state_json_is_refused_not_overwritten() {
    let (dir, cfg) = scratch("nostate");
    let runs = dir.join("runs");
    let ckpts = runs.join("r/checkpoints");
    std::fs::create_dir_all(&ckpts).unwrap();
    std::fs::write(ckpts.join("ckpt-00000040.json"), "{}").unwrap();
    for extra in [&[][..], &["--resume"][..]] {
        let out = train(&cfg, &runs, extra).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?}: {err}");
        assert!(err.contains("no state.json") && err.contains("checkpoints/ckpt-00000040"), "{extra:?}: {err}");
        assert_eq!(std::fs::read_to_string(ckpts.join("ckpt-00000040.json")).unwrap(), "{}", "untouched");
        assert_eq!(std::fs::read_dir(&ckpts).unwrap().count(), 1, "nothing written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run `r` of four steps without evaluations under a fresh folder `name`:
/// (folder, config, runs folder).
fn run_of_four_steps(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let no_eval = CONFIG.replace("interval = 1000", "interval = 0").replace("games = 2000\n", "");
    let (dir, cfg) = scratch_with(name, &no_eval);
    let runs = dir.join("runs");
    let out = train(&cfg, &runs, &["--max-steps", "4"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (dir, cfg, runs)
}

/// `eval.at_end`: no evaluation during the run, one of the last checkpoint when the run
/// reaches its limit, recorded and in the summary.
#[test]
fn an_evaluation_at_the_end_plays_the_last_checkpoint_once() {
    let at_end = CONFIG.replace("interval = 1000", "interval = 0\nat_end = true").replace("games = 2000", "games = 4");
    let (dir, cfg) = scratch_with("at-end", &at_end);
    let runs = dir.join("runs");
    let out = train(&cfg, &runs, &["--max-steps", "8"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let evals = std::fs::read_to_string(runs.join("r/eval.jsonl")).unwrap();
    let steps: Vec<u64> = evals
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [8], "{evals}");
    assert!(format!("{stdout}{stderr}").contains("vs random @8"), "{stdout}{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Built-in rungs only, so that the test needs no engine.
const BUILT_IN_LADDER: &str = r#"variant = "shogi"
tc = "byoyomi=500"
[[rung]]
name = "random"
spec = "random"
elo = 0
[[rung]]
name = "greedy20"
spec = "material:1,random=0.8"
elo = 641
[[rung]]
name = "greedy"
spec = "greedy"
elo = 2168
[[rung]]
name = "material2"
spec = "material:2"
elo = 3029
"#;

/// The steps of `eval.jsonl`'s records and their opponents.
fn evaluated(runs: &Path) -> Vec<(u64, String)> {
    let evals = std::fs::read_to_string(runs.join("r/eval.jsonl")).unwrap();
    evals
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (v["step"].as_u64().unwrap(), v["opponent"].as_str().unwrap().to_string()))
        .collect()
}

/// `eval.at_end_points` with the `ladder` opponent: three checkpoints spread over the run,
/// each against rungs of the staircase (from `ladder_start`), rated in the summary and
/// drawn in elo.png; `koma evaluate --run` evaluates a run's points again on its own.
#[test]
fn the_evaluation_at_the_end_rates_several_checkpoints_on_the_ladder() {
    let (dir, _) = scratch_with("at-end-points", "");
    let ladder = dir.join("ladder.toml");
    std::fs::write(&ladder, BUILT_IN_LADDER).unwrap();
    let eval = format!(
        "interval = 0\nat_end = true\nat_end_points = 3\nladder = \"{}\"\nladder_start = \"greedy20\"\n\
         ladder_rungs = 2\nearly_games = 2",
        ladder.display()
    );
    let config = CONFIG.replace("interval = 1000", &eval).replace("games = 2000", "games = 4");
    let config = config.replace(r#"opponents = ["random"]"#, r#"opponents = ["ladder"]"#);
    let cfg = dir.join("points.toml");
    std::fs::write(&cfg, config).unwrap();
    let runs = dir.join("runs");
    let out = train(&cfg, &runs, &["--max-steps", "12"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let records = evaluated(&runs);
    let mut steps: Vec<u64> = records.iter().map(|(s, _)| *s).collect();
    steps.dedup();
    assert_eq!(steps, [4, 8, 12], "{records:?}");
    let rungs = ["random", "greedy20", "greedy", "material2"];
    assert!(records.iter().all(|(_, o)| rungs.contains(&o.as_str())), "{records:?}");
    assert_eq!(records[0].1, "greedy", "the first point starts above ladder_start: {records:?}");
    assert!(records.iter().filter(|(s, _)| *s == 4).count() <= 2, "ladder_rungs = 2: {records:?}");
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(summary.contains("; ladder Elo by step: 4 ") && summary.contains(", 12 "), "{summary}");
    assert!(runs.join("r/elo.png").exists());

    let again = Command::new(KOMA)
        .args(["evaluate", "--quiet", "--points", "1", "--run"])
        .arg(runs.join("r"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(said.contains("evaluated 1 of its checkpoints; ladder Elo by step: 4 "), "{said}");
    assert!(evaluated(&runs).len() > records.len() && evaluated(&runs).last().unwrap().0 == 12);
    // A folder that is no run is refused, not created.
    let missing = dir.join("no-run");
    let out =
        Command::new(KOMA).args(["evaluate", "--quiet", "--config"]).arg(&cfg).arg("--run").arg(&missing).output();
    assert!(!out.unwrap().status.success() && !missing.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn state_json_may_only_name_a_checkpoint_of_the_run() {
    // A real run of a few steps, then its state.json pointed outside the run.
    let (dir, cfg, runs) = run_of_four_steps("outside");
    let state = runs.join("r/state.json");
    let text = std::fs::read_to_string(&state).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["checkpoint"] = serde_json::Value::String("../../elsewhere/ckpt-00000004".into());
    std::fs::write(&state, json.to_string()).unwrap();
    let out = train(&cfg, &runs, &["--resume", "--max-steps", "8"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("only checkpoints/ckpt-<step> of this run"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The trainer's warning about a missing `state.json` reaches stderr through the `log`
/// facade at `koma`'s default level, and `KOMA_LOG=error` hides it.
#[test]
fn a_library_warning_shows_by_default_and_koma_log_hides_it() {
    let (dir, cfg, runs) = run_of_four_steps("logwarn");
    let warning = "has no state.json; continuing from its newest complete checkpoint (step 4)";
    for (filter, shown) in [(None, true), (Some("error"), false)] {
        std::fs::remove_file(runs.join("r/state.json")).unwrap();
        let mut resume = train(&cfg, &runs, &["--resume", "--max-steps", "4"]);
        resume.env_remove("KOMA_LOG").env_remove("RUST_LOG");
        if let Some(f) = filter {
            resume.env("KOMA_LOG", f);
        }
        let out = resume.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{filter:?}: {err}");
        assert_eq!(err.contains(warning), shown, "KOMA_LOG={filter:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
