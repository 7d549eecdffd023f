//! Runs the `koma` binary as a process, for the integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The `koma` binary built for these tests.
pub const KOMA: &str = env!("CARGO_BIN_EXE_koma");

/// Runs `koma` with `args`, `stdin` written to its input, and waits for it.
pub fn koma(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(KOMA)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("koma runs");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The standard output of a run, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A fresh folder for one test under Cargo's test scratch space.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
