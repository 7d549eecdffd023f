//! How many inputs a fuzz test tries and how long one input may take, shared by the fuzz
//! tests of every crate (`tests/fuzz_*.rs`; other crates include this file by its path).
//!
//! By default each fuzz loop runs a bounded number of inputs (a few seconds in a release
//! build). The long mode (`scripts/fuzz.sh`) sets `KOMA_FUZZ_CASES=<n>`: each loop then
//! runs `n` inputs, with no time cap. `KOMA_FUZZ_SCALE=<x>` multiplies the default
//! counts instead. One input slower than [`slow`] fails its test like any other failing
//! input; one that runs past [`CASE_LIMIT`] (a hang) makes the [`Watchdog`] print it and
//! abort the test binary, so a hang is a failure, not a stuck run.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest one input may run before the test binary is aborted: a hang.
pub const CASE_LIMIT: Duration = Duration::from_secs(60);

/// The time after which one input counts as a failure (a reader gone quadratic): 2
/// seconds in a release build, 20 in a debug one.
pub fn slow() -> Duration {
    Duration::from_secs(if cfg!(debug_assertions) { 20 } else { 2 })
}

/// Inputs a fuzz loop tries: `KOMA_FUZZ_CASES` if set, else `default` (times
/// `KOMA_FUZZ_SCALE`, and an eighth in a debug build, which runs ten times slower).
pub fn cases(default: u64) -> u64 {
    if let Some(n) = std::env::var("KOMA_FUZZ_CASES").ok().and_then(|s| s.parse().ok()) {
        return n;
    }
    let scale: f64 = std::env::var("KOMA_FUZZ_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let debug = if cfg!(debug_assertions) { 8.0 } else { 1.0 };
    ((default as f64 * scale / debug) as u64).max(1)
}

/// The seed of a fuzz loop whose fixed seed is `base`: `KOMA_FUZZ_SEED` (0 by default;
/// `scripts/fuzz.sh` sets a new one each round) mixed into it, so that every round of
/// the long mode tries other inputs and a failure names the seed that repeats it.
pub fn seed(base: u64) -> u64 {
    let extra: u64 = std::env::var("KOMA_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    base ^ extra.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The time a fuzz loop may run before it stops early: `default`, none in the long mode.
pub fn time_cap(default: Duration) -> Duration {
    if std::env::var_os("KOMA_FUZZ_CASES").is_some() {
        Duration::MAX
    } else {
        default
    }
}

/// Whether a loop that began at `start` and has tried `tried` of its `cases` inputs
/// goes on.
pub fn more(tried: u64, cases: u64, start: Instant, cap: Duration) -> bool {
    tried < cases && start.elapsed() < cap
}

/// Fails the test binary when one input runs past [`CASE_LIMIT`]: a thread looks at the
/// input in progress and, past the limit, prints it and aborts (a hung reader cannot be
/// stopped from outside, and a test that never ends would hide it).
pub struct Watchdog {
    current: Arc<Mutex<Option<(Instant, String)>>>,
}

impl Watchdog {
    pub fn new(surface: &str) -> Watchdog {
        let current: Arc<Mutex<Option<(Instant, String)>>> = Arc::default();
        let (watched, surface) = (Arc::downgrade(&current), surface.to_string());
        std::thread::spawn(move || {
            while let Some(current) = watched.upgrade() {
                if let Some((since, input)) = current.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                    if since.elapsed() > CASE_LIMIT {
                        eprintln!("fuzz {surface}: an input ran past {CASE_LIMIT:?}:\n{input}");
                        std::process::abort();
                    }
                }
                drop(current);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Watchdog { current }
    }

    /// Runs one input (`describe` says what it is, for the report) and returns what
    /// `run` returns, with the time it took.
    pub fn case<T>(&self, describe: impl FnOnce() -> String, run: impl FnOnce() -> T) -> (T, Duration) {
        let start = Instant::now();
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some((start, describe()));
        let out = run();
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = None;
        (out, start.elapsed())
    }
}
