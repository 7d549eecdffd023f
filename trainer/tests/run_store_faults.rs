//! Fault injection into a learner's run store: two learners on one run; a
//! published step that would go back; damaged `latest.json`, `state.json`, chunks and
//! checkpoints; an unwritable run; a full disk (a small tmpfs); a store that goes away in
//! the middle of an upload; `koma learn` on nothing to train. Tiny network, CPU, seconds.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use common::learner::{chunk, options};
use dataio::run_layout::{self as layout, ModelPointer};
use rules::Variant;
use trainer::roles::files::RunFiles;
use trainer::{LearnerOptions, LearnerRole, TrainError, TrainFileConfig};

const CONFIG: &str = r#"variant = "shogi"
[model]
blocks = 1
channels = 8
value_channels = 2
value_hidden = 8
[train]
optimizer = "sgd"
lr = 0.01
warmup_steps = 0
batch_size = 8
min_replay = 8
train_ratio = 1.0
checkpoint_interval = 2
log_interval = 1
keep_checkpoints = 0
seed = 3
[eval]
interval = 0
"#;

fn config() -> TrainFileConfig {
    TrainFileConfig::from_toml(CONFIG, "tiny").unwrap()
}

fn open(url: &str, cache: &Path) -> RunFiles {
    RunFiles::open(url, Some(cache)).unwrap()
}

/// A learner of the run at `url` (its config given), not yet running.
fn learner(url: &str, cache: &Path, max_steps: u64) -> Result<LearnerRole, TrainError> {
    LearnerRole::open(open(url, cache), Some(config()), options(max_steps))
}

/// Trains to `max_steps` and finishes; the summary's step.
fn train(url: &str, cache: &Path, max_steps: u64) -> Result<u64, TrainError> {
    let mut role = learner(url, cache, max_steps)?;
    let stop = AtomicBool::new(false);
    let outcome = role.run(&stop);
    Ok(role.finish(outcome)?.step)
}

/// Chunks of 8 samples each, enough for `steps` steps of the tiny config (ratio 1).
fn feed(url: &str, cache: &Path, first: u64, steps: u64) {
    let files = open(url, cache);
    for seq in first..first + steps {
        chunk(&files, "w1", seq, 8);
    }
}

fn pointer(files: &RunFiles) -> Option<u64> {
    files.store.get(layout::LATEST_MODEL).unwrap().map(|b| ModelPointer::parse(&b, "latest").unwrap().step)
}

#[test]
fn a_second_learner_on_a_run_is_refused_with_the_holder_named() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for url in ["memory://faults-two-learners", dir.path().to_str().unwrap()] {
        feed(url, cache.path(), 0, 6);
        let first = learner(url, cache.path(), 4).unwrap();
        let e = learner(url, cache.path(), 4).err().expect("a second learner on the same run must be refused");
        let text = e.to_string();
        assert!(text.contains("another learner holds this run"), "{text}");
        assert!(text.contains(&format!("pid {}", std::process::id())) && text.contains("expires in"), "{text}");
        // The first one goes on; once it stops cleanly, the run is free at once.
        let stop = AtomicBool::new(false);
        let mut first = first;
        let outcome = first.run(&stop);
        assert_eq!(first.finish(outcome).unwrap().step, 4);
        assert_eq!(train(url, cache.path(), 6).unwrap(), 6);
    }
}

#[test]
fn a_published_step_never_goes_back() {
    let cache = tempfile::tempdir().unwrap();
    let files = open("memory://faults-publish", cache.path());
    for step in [300, 250] {
        for ext in ["safetensors", "json"] {
            files.store.put(&format!("{}.{ext}", layout::checkpoint_stem(step)), vec![1]).unwrap();
        }
    }
    trainer::roles::network::publish_model(&files, 300).unwrap();
    // A learner that is behind (another one's leftover, a rolled-back run) publishes 250.
    let _ = trainer::roles::network::publish_model(&files, 250);
    assert_eq!(pointer(&files), Some(300), "models/latest.json went back");
}

/// A folder that nothing can be written in, for the time the guard lives: `chmod` for
/// an ordinary user, `chattr +i` for root; `None` (test skipped) where neither works.
struct Unwritable(PathBuf, bool);

impl Unwritable {
    fn new(dir: &Path) -> Option<Unwritable> {
        let root = unsafe_is_root();
        let ok = if root {
            std::process::Command::new("chattr").arg("+i").arg(dir).status().is_ok_and(|s| s.success())
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).is_ok()
        };
        let guard = Unwritable(dir.to_path_buf(), root);
        (ok && std::fs::write(dir.join("probe"), b"x").is_err()).then_some(guard)
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::process::Command::new("chattr").arg("-i").arg(&self.0).status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
}

fn unsafe_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false)
}

/// TensorBoard files in a folder that refuses them: an error, not an abort.
#[test]
fn tensorboard_in_an_unwritable_folder_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let tb = dir.path().join("tb");
    std::fs::create_dir_all(&tb).unwrap();
    let Some(_guard) = Unwritable::new(&tb) else {
        eprintln!("skipping: cannot make a folder unwritable here (neither chmod nor chattr +i works)");
        return;
    };
    let e = trainer::TensorBoardLog::new(&tb).err().expect("an event file in an unwritable folder must be an error");
    assert!(e.to_string().contains("ermi") || e.to_string().contains("not permitted"), "{e}");
}

/// An unwritable run: a clear error from the learner, not an abort (SIGABRT).
#[test]
fn a_learner_on_an_unwritable_run_stops_with_an_error() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().to_str().unwrap();
    feed(url, cache.path(), 0, 4);
    assert_eq!(train(url, cache.path(), 2).unwrap(), 2);
    let guards: Vec<Unwritable> =
        ["", "tb", "checkpoints", "models"].iter().filter_map(|d| Unwritable::new(&dir.path().join(d))).collect();
    if guards.len() < 4 {
        eprintln!("skipping: cannot make a folder unwritable here (neither chmod nor chattr +i works)");
        return;
    }
    let mut role = match LearnerRole::open(open(url, cache.path()), None, options(4)) {
        Err(e) => {
            let text = e.to_string();
            eprintln!("refused: {text}");
            assert!(text.contains(url), "the error names the run: {text}");
            assert!(text.contains("not permitted") || text.contains("Permission denied"), "{text}");
            return;
        }
        Ok(r) => r,
    };
    let stop = AtomicBool::new(false);
    let outcome = role.run(&stop);
    assert!(role.finish(outcome).is_err(), "nothing could be written: the learner must fail");
}

/// A hcpe3 file of one game without moves: nothing to train on.
#[test]
fn koma_learn_of_zero_positions_fails() {
    use rules::records::hcpe::hcpe3;
    let dir = tempfile::tempdir().unwrap();
    let game = hcpe3::Game {
        start: rules::Position::startpos(Variant::Shogi),
        moves: Vec::new(),
        result: rules::records::hcpe::GameResult::Draw,
        ending: hcpe3::Ending::Unmarked,
        opponent: hcpe3::Opponent::SelfPlay,
    };
    let input = dir.path().join("empty.hcpe3");
    hcpe3::save(&input, &[game]).unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let opts = trainer::LearnOptions {
        config: cfg,
        records: vec![input],
        run: "r".into(),
        runs_dir: dir.path().join("runs"),
        epochs: 1.0,
        init: None,
        validation: 0.05,
        progress: false,
    };
    let e = trainer::learn(&opts, Arc::new(AtomicBool::new(false))).expect_err("zero positions must fail");
    assert!(e.to_string().contains("no positions"), "{e}");
    assert!(!dir.path().join("runs/r/checkpoints").join(format!("{}.json", layout::checkpoint_name(1))).exists());
}

/// A rolling restart: the new learner waits for the lease and takes the run over as soon
/// as the old one stops cleanly; the published step only goes up.
#[test]
fn a_waiting_learner_takes_the_run_over_when_the_first_one_stops() {
    let cache = tempfile::tempdir().unwrap();
    let url = "memory://faults-rolling";
    feed(url, cache.path(), 0, 8);
    let mut first = learner(url, cache.path(), 4).unwrap();
    let cache2 = cache.path().join("second");
    let url2 = url.to_string();
    let second = std::thread::spawn(move || {
        let opts = LearnerOptions { lease_wait: Duration::from_secs(60), ..options(8) };
        let mut role = LearnerRole::open(open(&url2, &cache2), None, opts).unwrap();
        let outcome = role.run(&AtomicBool::new(false));
        role.finish(outcome).unwrap().step
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!second.is_finished(), "the second learner must wait while the first holds the run");
    let outcome = first.run(&AtomicBool::new(false));
    assert_eq!(first.finish(outcome).unwrap().step, 4);
    assert_eq!(second.join().unwrap(), 8);
    assert_eq!(pointer(&open(url, cache.path())), Some(8));
}

/// A learner whose lease was taken over behind its back (it was cut off for longer than
/// the TTL) stops at once and writes nothing more.
#[test]
fn a_learner_whose_run_was_taken_over_stops_without_writing() {
    let cache = tempfile::tempdir().unwrap();
    let url = "memory://faults-taken-over";
    feed(url, cache.path(), 0, 8);
    let mut role = learner(url, cache.path(), 8).unwrap();
    let files = open(url, cache.path());
    let mut intruder: serde_json::Value =
        serde_json::from_slice(&files.store.get(layout::LEARNER_LEASE).unwrap().unwrap()).unwrap();
    intruder["owner"] = "elsewhere-1-beef".into();
    intruder["host"] = "elsewhere".into();
    files.store.put(layout::LEARNER_LEASE, serde_json::to_vec(&intruder).unwrap()).unwrap();
    let before = files.store.get(layout::STATE).unwrap();
    let outcome = role.run(&AtomicBool::new(false));
    let e = role.finish(outcome).expect_err("a learner without its lease must stop");
    assert!(e.to_string().contains("taken over by elsewhere-1-beef"), "{e}");
    assert_eq!(files.store.get(layout::STATE).unwrap(), before, "state.json was written without the lease");
    assert_eq!(pointer(&files), Some(0));
    assert!(files.store.get(&format!("{}.json", layout::checkpoint_stem(2))).unwrap().is_none());
}

/// Damaged files of a run: a damaged `latest.json` is replaced at the next publication,
/// a damaged `state.json` resumes from the newest complete checkpoint, a damaged chunk is
/// skipped, and a damaged newest checkpoint is refused with its name.
#[test]
fn damaged_files_of_a_run_are_repaired_skipped_or_refused_clearly() {
    let cache = tempfile::tempdir().unwrap();
    let url = "memory://faults-damaged";
    let files = open(url, cache.path());
    feed(url, cache.path(), 0, 4);
    assert_eq!(train(url, cache.path(), 2).unwrap(), 2);
    files.store.put(layout::LATEST_MODEL, b"{\"step\": 2, \"mod".to_vec()).unwrap();
    files.store.put(layout::STATE, b"\0\0garbage".to_vec()).unwrap();
    let bad_chunk = layout::chunk_key("w2", 1_700_000_000_000, 9, 0);
    files.store.put(&bad_chunk, b"KOMACHNK but not really".to_vec()).unwrap();
    feed(url, cache.path(), 4, 2);
    assert_eq!(train(url, cache.path(), 4).unwrap(), 4);
    assert_eq!(pointer(&files), Some(4), "the damaged pointer was replaced");
    let state: serde_json::Value = serde_json::from_slice(&files.store.get(layout::STATE).unwrap().unwrap()).unwrap();
    assert_eq!(state["step"], 4);
    assert!(state["rejected_chunks"].as_array().unwrap().iter().any(|c| bad_chunk.ends_with(c.as_str().unwrap())));
    // The newest checkpoint's weights damaged: refused with the file's name, not a panic.
    let weights = format!("{}.safetensors", layout::checkpoint_stem(4));
    let mut bytes = files.store.get(&weights).unwrap().unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0xff;
    files.store.put(&weights, bytes).unwrap();
    let _ = std::fs::remove_dir_all(cache.path().join("checkpoints"));
    let e = learner(url, cache.path(), 6).err().expect("a damaged checkpoint must be refused");
    assert!(e.to_string().contains("ckpt-00000004"), "{e}");
}

/// The store goes away in the middle of a checkpoint's upload: the learner stops with the
/// store's error, the half-written checkpoint is never used, and a restarted learner
/// continues from the last complete one. A worker's uploader keeps its chunks meanwhile.
#[test]
fn a_store_that_goes_away_mid_upload_loses_nothing() {
    use store::faults::Fault;
    let cache = tempfile::tempdir().unwrap();
    let url = "memory://faults-away";
    let files = open(url, cache.path());
    feed(url, cache.path(), 0, 6);
    let mut role = learner(url, cache.path(), 6).unwrap();
    // The renewal before the step-2 checkpoint and two of its four files get through.
    files.store.faults().unwrap().set(Fault::DownAfterWrites(3));
    let outcome = role.run(&AtomicBool::new(false));
    files.store.faults().unwrap().set(Fault::None);
    let e = role.finish(outcome).expect_err("the learner must stop with the store's error");
    assert!(e.to_string().contains("injected fault: the store is down"), "{e}");
    assert!(files.store.get(&format!("{}.json", layout::checkpoint_stem(2))).unwrap().is_none());
    assert_eq!(pointer(&files), Some(0));
    assert_eq!(train(url, cache.path(), 6).unwrap(), 6);
    // A worker's uploader spools what the store refuses and uploads it when it is back.
    let spool = cache.path().join("spool");
    files.store.faults().unwrap().set(Fault::Down);
    let uploader = trainer::roles::uploader::Uploader::spawn(files.store.clone(), spool.clone());
    let key = layout::chunk_key("w9", 1_700_000_000_000, 1, 0);
    uploader.send(key.clone(), b"chunk".to_vec());
    let spooled = || trainer::roles::uploader::spooled(&spool).len();
    let t = std::time::Instant::now();
    while spooled() == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "the chunk was not spooled");
        std::thread::sleep(Duration::from_millis(50));
    }
    files.store.faults().unwrap().set(Fault::None);
    uploader.finish();
    assert_eq!(files.store.get(&key).unwrap().unwrap(), b"chunk");
    assert_eq!(spooled(), 0);
}

/// Mounts a tmpfs of `size` on `dir` (unmounted when dropped); `None` where mounting is
/// not permitted.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "none"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system of `dir` to the last byte (a file that grows until ENOSPC).
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    while f.write_all(&block[..1]).is_ok() {}
    path
}

/// A full disk (a small tmpfs): the checkpoint that does not fit is an error, not an
/// abort, TensorBoard's failure a warning; with room again the run resumes from its last
/// complete checkpoint.
#[test]
fn a_full_disk_is_an_error_and_the_run_resumes_when_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_tmpfs) = Tmpfs::mount(dir.path(), "8m") else {
        eprintln!("skipping: mounting a tmpfs is not permitted here");
        return;
    };
    let cache = dir.path().join("cache");
    let run = dir.path().join("run");
    let url = run.to_str().unwrap();
    feed(url, &cache, 0, 8);
    assert_eq!(train(url, &cache, 2).unwrap(), 2);
    let mut role = learner(url, &cache, 8).unwrap();
    let filler = fill(dir.path());
    let outcome = role.run(&AtomicBool::new(false));
    let text = outcome.as_ref().err().map(ToString::to_string).unwrap_or_default();
    assert!(text.contains("No space left on device"), "the full disk must stop the learner: {outcome:?}");
    // The operator makes room; the lease is given back as the learner ends.
    std::fs::remove_file(filler).unwrap();
    assert!(role.finish(outcome).is_err());
    assert_eq!(train(url, &cache, 8).unwrap(), 8);
}

/// Chunks listed while their reads fail (the store drops transfers, or the folder moved away
/// between the listing and the read) are left for a later pass, not rejected: once the store
/// answers again every one is taken in, and nothing is lost. A damaged chunk is still
/// rejected for good.
#[test]
fn chunks_unreadable_for_a_moment_are_taken_in_later() {
    use std::sync::Mutex;
    use store::faults::Fault;
    use trainer::roles::intake::take_in;
    use trainer::{Replay, RunState};
    let cache = tempfile::tempdir().unwrap();
    let url = "memory://faults-reads-fail";
    let files = open(url, cache.path());
    feed(url, cache.path(), 0, 3);
    let bad_chunk = layout::chunk_key("w2", 1_700_000_000_000, 9, 0);
    files.store.put(&bad_chunk, b"KOMACHNK but not really".to_vec()).unwrap();
    let (mut state, replay) = (RunState::default(), Mutex::new(Replay::new(1_000)));
    let faults = files.store.faults().expect("a memory store has a fault switch");
    faults.set(Fault::ReadsFail);
    let first = take_in(&files, &mut state, &replay, &[], Variant::Shogi).unwrap();
    assert_eq!((first.chunks, first.rejected.len()), (0, 0), "{first:?}");
    assert_eq!(first.deferred.len(), 1, "one warning, then the pass stops: {first:?}");
    assert!(state.chunks.is_empty() && state.rejected_chunks.is_empty());
    faults.set(Fault::None);
    let second = take_in(&files, &mut state, &replay, &[], Variant::Shogi).unwrap();
    assert_eq!((second.chunks, second.samples), (3, 24), "{second:?}");
    assert_eq!(second.rejected.len(), 1, "the damaged chunk: {second:?}");
    assert_eq!(state.chunks.len(), 3);
    assert_eq!(state.samples_generated, 24);
}
