//! The learner and workers as separate processes on one run: a local folder and an
//! S3-compatible server on 127.0.0.1 (`moto_server`); kill -9 of either at any moment;
//! a store that refuses writes for a while. Tiny network and settings (seconds on a CPU).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::KOMA;

const CONFIG: &str = concat!(
    tiny_network!(),
    tiny_search!(),
    r#"games_per_worker = 4
simulations_full = 4
simulations_cheap = 2
max_plies = 30
random_opening_plies = 2
samples_per_chunk = 24
seed = 5
[train]
optimizer = "sgd"
lr = 0.01
warmup_steps = 2
batch_size = 16
replay_window = 2000
min_replay = 24
train_ratio = 4.0
checkpoint_interval = 4
log_interval = 2
seed = 9
[eval]
interval = 0
"#
);

/// A child process that is killed when the test ends, however it ends; its stderr goes to
/// a file (a pipe nobody reads would block it once full).
struct Proc(Child, PathBuf);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_file(&self.1);
    }
}

impl Proc {
    /// Waits until the process has written `text` to stderr.
    fn wait_for_log(&self, text: &str) {
        wait_until(text, 300, || std::fs::read_to_string(&self.1).unwrap_or_default().contains(text));
    }

    fn signal(&self, sig: &str) {
        let st = Command::new("kill").args([sig, &self.0.id().to_string()]).status().unwrap();
        assert!(st.success());
    }

    /// Waits for the exit (at most `secs`), returning stdout and stderr.
    fn wait(mut self, secs: u64) -> (std::process::ExitStatus, String, String) {
        let t = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                let read = |r: Option<&mut dyn std::io::Read>| {
                    let mut s = String::new();
                    if let Some(r) = r {
                        let _ = r.read_to_string(&mut s);
                    }
                    s
                };
                let out = read(self.0.stdout.as_mut().map(|r| r as &mut dyn std::io::Read));
                let err = std::fs::read_to_string(&self.1).unwrap_or_default();
                return (status, out, err);
            }
            assert!(t.elapsed() < Duration::from_secs(secs), "process still running after {secs} s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn setup(name: &str) -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("koma-scale-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("tiny.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    (dir, cfg)
}

fn spawn(args: &[&str], env: &[(String, String)]) -> Proc {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("koma-scale-{}-{n}.stderr", std::process::id()));
    let child = Command::new(KOMA)
        .args(args)
        .envs(env.iter().cloned())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn koma");
    Proc(child, log)
}

/// SIGTERM to the learner (it checkpoints, publishes and says `interrupted`), then to
/// each worker once it plays; every one must exit successfully. The workers' outputs.
fn stop_learner_then_workers<const N: usize>(l: Proc, workers: [Proc; N]) -> [String; N] {
    l.signal("-TERM");
    let (status, stdout, stderr) = l.wait(120);
    assert!(status.success(), "learner: {stderr}");
    assert!(stdout.contains("interrupted"), "{stdout}");
    workers.map(|w| {
        w.wait_for_log(": playing on");
        w.signal("-TERM");
        let (status, stdout, stderr) = w.wait(60);
        assert!(status.success(), "worker: {stderr}");
        stdout
    })
}

fn learner(run: &str, cfg: &Path, extra: &[&str], env: &[(String, String)]) -> Proc {
    let mut args = vec!["learner", "--run", run, "--config", cfg.to_str().unwrap(), "--quiet", "--poll-seconds", "0.3"];
    args.extend_from_slice(extra);
    spawn(&args, env)
}

fn worker(run: &str, id: &str, spool: &Path, env: &[(String, String)]) -> Proc {
    let args = [
        "worker",
        "--run",
        run,
        "--worker-id",
        id,
        "--spool",
        spool.to_str().unwrap(),
        "--poll-seconds",
        "0.3",
        "--report-seconds",
        "1",
    ];
    spawn(&args, env)
}

fn json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn wait_until(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < Duration::from_secs(secs), "{what}: not within {secs} s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Names of the readable chunks of a local run (every chunk must be readable) and their
/// sample counts.
fn chunks(run: &Path) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for p in dataio::list_chunks(run.join("samples")).unwrap() {
        let c = dataio::read_chunk(&p, &nn::EncoderLabels).unwrap_or_else(|e| panic!("{e}"));
        v.push((p.file_name().unwrap().to_string_lossy().into_owned(), c.samples.len() as u64));
    }
    v
}

/// The learner's counters agree with the chunks present: every chunk taken in exactly
/// once, and never more trained than the ratio allows.
fn check_accounting(run: &Path) -> serde_json::Value {
    let state = json(&run.join("state.json")).expect("state.json");
    let taken: BTreeSet<String> =
        state["chunks"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    let present = chunks(run);
    let names: BTreeSet<String> = present.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(taken, names, "chunks taken in vs present");
    let sum: u64 = present.iter().map(|(_, n)| n).sum();
    assert_eq!(state["samples_generated"].as_u64().unwrap(), sum);
    assert!(state["samples_trained"].as_u64().unwrap() as f64 <= 4.0 * sum as f64);
    for e in std::fs::read_dir(run.join("checkpoints")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            model::load_net(&p, &model::Expected::any(), model::tch::Device::Cpu)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        }
    }
    state
}

#[test]
fn a_learner_and_two_workers_train_on_one_local_run() {
    let (dir, cfg) = setup("two");
    let run = dir.join("run");
    let r = run.to_str().unwrap();
    let l = learner(r, &cfg, &[], &[]);
    let w1 = worker(r, "w1", &dir.join("spool1"), &[]);
    let w2 = worker(r, "w2", &dir.join("spool2"), &[]);
    // Trains until a checkpoint's state counts samples of both workers (which worker's
    // chunks come first is a race), then stops on SIGTERM: a last checkpoint, published.
    wait_until("samples of both workers in state.json", 600, || {
        json(&run.join("state.json"))
            .is_some_and(|s| ["w1", "w2"].iter().all(|w| s["samples_by_worker"][w].as_u64().unwrap_or(0) > 0))
    });
    for stdout in stop_learner_then_workers(l, [w1, w2]) {
        assert!(stdout.contains("games"), "{stdout}");
    }
    let state = json(&run.join("state.json")).unwrap();
    let step = state["step"].as_u64().unwrap();
    assert!(step > 0, "{state}");
    let latest = json(&run.join("models/latest.json")).unwrap();
    assert_eq!(latest["step"], step);
    assert!(run.join(format!("models/ckpt-{step:08}.safetensors")).exists());
    let names: Vec<String> = chunks(&run).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().any(|n| n.starts_with("w1-")) && names.iter().any(|n| n.starts_with("w2-")));
    // TensorBoard: per-worker sample counts and the workers' own reports.
    let mut events = Vec::new();
    for e in std::fs::read_dir(run.join("tb")).unwrap() {
        events.extend(std::fs::read(e.unwrap().path()).unwrap());
    }
    let text = String::from_utf8_lossy(&events);
    assert!(text.contains("selfplay/samples_from/w1") && text.contains("selfplay/samples_from/w2"));
    assert!(json(&run.join("workers/w1.json")).unwrap()["finished"].as_bool().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kill_9_of_worker_and_learner_then_restart_loses_and_double_counts_nothing() {
    let (dir, cfg) = setup("kill");
    let run = dir.join("run");
    let r = run.to_str().unwrap();
    let spool = dir.join("spool");
    let l = learner(r, &cfg, &[], &[]);
    let w = worker(r, "w1", &spool, &[]);
    wait_until("step 8", 600, || json(&run.join("state.json")).and_then(|s| s["step"].as_u64()).unwrap_or(0) >= 8);
    drop(w); // SIGKILL, in the middle of whatever it was writing
    std::thread::sleep(Duration::from_millis(150));
    drop(l);
    let step = check_accounting_after_kill(&run);
    // Both restart; the learner continues from its newest complete checkpoint.
    let target = (step + 8).to_string();
    let l = learner(r, &cfg, &["--max-steps", &target], &[]);
    let w = worker(r, "w1", &spool, &[]);
    // (A signal before the worker's handler is installed would simply kill it.)
    w.wait_for_log("koma worker w1: playing");
    let (status, stdout, stderr) = l.wait(600);
    assert!(status.success(), "{stderr}");
    assert!(stdout.contains(&format!("reached max_steps {target}")), "{stdout}");
    assert!(stderr.contains(&format!("at step {step}")), "{stderr}");
    w.signal("-TERM");
    let (status, _, stderr) = w.wait(60);
    assert!(status.success(), "{stderr}");
    // One more learner start takes in the last chunks and stops at once.
    let (status, _, stderr) = learner(r, &cfg, &["--max-steps", &target], &[]).wait(120);
    assert!(status.success(), "{stderr}");
    let state = check_accounting(&run);
    assert_eq!(state["step"].as_u64().unwrap(), step + 8);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two `koma learner`s on one run: the second is refused at once, naming the
/// first, and exits with an error; one started with `--lease-wait` waits and takes the run
/// over when the first stops (a Kubernetes rolling restart), and `latest.json` never goes
/// back.
#[test]
fn a_second_learner_is_refused_and_one_that_waits_takes_over() {
    let (dir, cfg) = setup("lease");
    let run = dir.join("run");
    let r = run.to_str().unwrap();
    let first = learner(r, &cfg, &[], &[]);
    wait_until("the first learner's step 0", 300, || run.join("models/latest.json").exists());
    let (status, _, stderr) = learner(r, &cfg, &[], &[]).wait(120);
    assert!(!status.success(), "the second learner must fail: {stderr}");
    assert!(status.code().is_some(), "an exit, not a signal: {status:?}");
    assert!(stderr.contains("another learner holds this run") && stderr.contains("expires in"), "{stderr}");
    let waiting = learner(r, &cfg, &["--lease-wait", "300"], &[]);
    waiting.wait_for_log("waiting for the run's lease");
    first.signal("-TERM");
    let (status, _, stderr) = first.wait(120);
    assert!(status.success(), "{stderr}");
    waiting.wait_for_log("resuming run");
    waiting.signal("-TERM");
    let (status, stdout, stderr) = waiting.wait(120);
    assert!(status.success(), "{stderr}");
    assert!(stdout.contains("interrupted") && stdout.contains("games n/a"), "{stdout}");
    assert_eq!(json(&run.join("models/latest.json")).unwrap()["step"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// After a kill: every file the learner or a worker would read is whole, and the state
/// names a complete checkpoint. Returns the step a restarted learner continues from: the
/// newest complete checkpoint (metadata and learner state written), which is the state's
/// or one saved just before the kill.
fn check_accounting_after_kill(run: &Path) -> u64 {
    let state = json(&run.join("state.json")).expect("state.json after kill");
    let ck = state["checkpoint"].as_str().unwrap();
    model::load_net(run.join(ck), &model::Expected::any(), model::tch::Device::Cpu).unwrap();
    let taken: BTreeSet<String> =
        state["chunks"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    let present: BTreeSet<String> = chunks(run).into_iter().map(|(n, _)| n).collect();
    assert!(taken.is_subset(&present), "the state names chunks that are not there");
    let newest = std::fs::read_dir(run.join("checkpoints"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".json")?.strip_prefix("ckpt-")?.parse().ok())
        .filter(|step: &u64| run.join(format!("checkpoints/ckpt-{step:08}.learner")).exists())
        .max()
        .unwrap();
    let step = state["step"].as_u64().unwrap();
    assert!(newest >= step);
    newest
}

#[test]
fn a_store_that_refuses_writes_makes_workers_spool_and_catch_up() {
    let (dir, cfg) = setup("spool");
    let run = dir.join("run");
    let r = run.to_str().unwrap();
    let spool = dir.join("spool");
    let l = learner(r, &cfg, &["--max-steps", "100000"], &[]);
    let w = worker(r, "w1", &spool, &[]);
    let count = |d: &Path| std::fs::read_dir(d).map(|rd| rd.count()).unwrap_or(0);
    wait_until("a first chunk", 600, || count(&run.join("samples")) >= 1);
    // The store refuses every chunk: `samples` becomes a file.
    let away = dir.join("samples-away");
    std::fs::rename(run.join("samples"), &away).unwrap();
    std::fs::write(run.join("samples"), b"not a folder").unwrap();
    wait_until("spooled chunks", 600, || count(&spool.join("samples")) >= 3);
    // (Not the temporary file of a chunk being spooled right now.)
    let spooled: Vec<String> = std::fs::read_dir(spool.join("samples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".chunk") && !n.starts_with('.'))
        .collect();
    assert!(!spooled.is_empty());
    std::fs::remove_file(run.join("samples")).unwrap();
    std::fs::rename(&away, run.join("samples")).unwrap();
    // The worker uploads the spool by itself, and the learner takes the chunks in.
    wait_until("the spool uploaded", 120, || spooled.iter().all(|n| run.join("samples").join(n).exists()));
    wait_until("the spooled chunks taken in", 120, || {
        let s = json(&run.join("state.json")).unwrap_or_default();
        let taken = s["chunks"].as_array().cloned().unwrap_or_default();
        spooled.iter().all(|n| taken.iter().any(|t| t == n.as_str()))
    });
    w.signal("-TERM");
    let (status, stdout, stderr) = w.wait(60);
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("spooling"), "{stderr}");
    assert!(stdout.contains(" 0 spooled"), "{stdout}");
    // The worker's last chunks may land after the learner's last look and train no step
    // (a short last chunk), so no checkpoint records them while it runs; its clean stop
    // takes them in and writes the state (check_accounting: taken in = present).
    l.signal("-TERM");
    let (status, stdout, _) = l.wait(60);
    assert!(status.success());
    assert!(stdout.contains("interrupted"), "{stdout}");
    check_accounting(&run);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `moto_server` (PyPI `moto[server]`, installed into .venv by scripts/setup.sh) on a free
/// port of 127.0.0.1, with the bucket `koma`; the environment the roles read.
fn s3_server() -> (Proc, Vec<(String, String)>) {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/moto_server");
    let exe = if venv.exists() { venv } else { PathBuf::from("moto_server") };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(exe)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server (scripts/setup.sh installs moto[server] into .venv)");
    let server = Proc(child, PathBuf::new());
    wait_until("moto_server listening", 60, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let req = format!("PUT /koma HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let env = [
        ("AWS_ACCESS_KEY_ID", "test".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_string()),
        ("AWS_REGION", "us-east-1".to_string()),
        ("AWS_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("AWS_ALLOW_HTTP", "true".to_string()),
    ];
    (server, env.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[test]
fn a_learner_and_two_workers_train_on_an_s3_run() {
    let (dir, cfg) = setup("s3");
    let (_server, env) = s3_server();
    let url = "s3://koma/runs/tiny";
    let cache = dir.join("cache");
    let l = learner(url, &cfg, &["--cache", cache.to_str().unwrap()], &env);
    let w1 = worker(url, "w1", &dir.join("spool1"), &env);
    let w2 = worker(url, "w2", &dir.join("spool2"), &env);
    for (k, v) in &env {
        std::env::set_var(k, v);
    }
    let store = store::RunStore::open(url).unwrap();
    let state = || -> Option<serde_json::Value> { serde_json::from_slice(&store.get("state.json").ok()??).ok() };
    // Trains until a checkpoint's state counts samples of both workers (which worker's
    // chunks come first is a race), then stops on SIGTERM: a last checkpoint, published.
    wait_until("samples of both workers in state.json", 600, || {
        state().is_some_and(|s| ["w1", "w2"].iter().all(|w| s["samples_by_worker"][w].as_u64().unwrap_or(0) > 0))
    });
    stop_learner_then_workers(l, [w1, w2]);
    // What is in the bucket: both workers' chunks, taken in; the published network.
    let state = state().unwrap();
    let step = state["step"].as_u64().unwrap();
    assert!(step > 0, "{state}");
    let names: Vec<String> = store.list("samples").unwrap().into_iter().map(|e| e.name().to_string()).collect();
    assert!(names.iter().any(|n| n.starts_with("w1-")) && names.iter().any(|n| n.starts_with("w2-")), "{names:?}");
    let latest: serde_json::Value = serde_json::from_slice(&store.get("models/latest.json").unwrap().unwrap()).unwrap();
    assert_eq!(latest["step"], step);
    assert!(store.get(&format!("models/ckpt-{step:08}.safetensors")).unwrap().is_some());
    let out = Command::new(KOMA)
        .args(["learner", "--run", url, "--max-steps", &step.to_string(), "--quiet", "--cache"])
        .arg(dir.join("cache2"))
        .envs(env.iter().cloned())
        .output()
        .unwrap();
    // A second learner elsewhere (a fresh cache) continues from the store alone.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("at step {step}")), "{stderr}");
    let ckpt = dir.join(format!("cache2/checkpoints/ckpt-{step:08}.json"));
    model::load_net(&ckpt, &model::Expected::any(), model::tch::Device::Cpu).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_during_an_evaluation_stops_koma_train_within_seconds() {
    let (dir, _) = setup("sigterm");
    // Evaluation games that would take minutes, starting at step 0.
    let cfg = dir.join("eval.toml");
    let text = CONFIG.replace(
        "[eval]\ninterval = 0",
        "[eval]\ninterval = 1000\ngames = 400\nsimulations = 16\nopponents = [\"random\"]\nmax_plies = 300",
    );
    std::fs::write(&cfg, text).unwrap();
    let runs = dir.join("runs");
    let args =
        ["train", "--config", cfg.to_str().unwrap(), "--run", "r", "--runs-dir", runs.to_str().unwrap(), "--quiet"];
    let p = spawn(&args, &[]);
    wait_until("the first checkpoint", 300, || runs.join("r/state.json").exists());
    std::thread::sleep(Duration::from_secs(2));
    assert!(!runs.join("r/eval.jsonl").exists(), "the evaluation should still run");
    let t = Instant::now();
    p.signal("-TERM");
    let (status, stdout, stderr) = p.wait(120);
    let took = t.elapsed();
    assert!(status.success(), "{stderr}");
    assert!(stdout.contains("interrupted"), "{stdout}");
    // Saving the last checkpoint and stopping self-play take a moment on a busy machine;
    // the evaluation itself must not hold the exit (it used to take about a minute).
    assert!(took < Duration::from_secs(5), "took {took:?} to stop");
    eprintln!("stopped {took:?} after SIGTERM");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The config in the Kubernetes ConfigMap and the configs the compose file names load.
#[test]
fn deploy_recipes_name_valid_configs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let map = std::fs::read_to_string(root.join("deploy/k8s/configmap.yaml")).unwrap();
    let block: String = map
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("config.toml: |"))
        .skip(1)
        .take_while(|l| l.starts_with("    ") || l.trim().is_empty())
        .map(|l| format!("{}\n", l.get(4..).unwrap_or("")))
        .collect();
    assert!(block.contains("[train]"), "{block}");
    trainer::TrainFileConfig::from_toml(&block, "configmap.yaml").unwrap();
    let compose = std::fs::read_to_string(root.join("deploy/docker-compose.yml")).unwrap();
    for name in ["shogi-b10c128.toml", "shogi-tiny.toml"] {
        assert!(root.join("configs").join(name).exists(), "{name}");
    }
    assert!(compose.contains("KOMA_CONFIG:-shogi-b10c128.toml"));
}
