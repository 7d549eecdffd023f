//! Runs the network commands' binary as a process, for the integration tests.
#![allow(dead_code)]

#[path = "../../../koma/tests/common/process.rs"]
mod process;

pub use process::*;
use std::process::Output;

/// The binary of the network commands built for these tests: `koma-net`, which the `koma`
/// front (package koma, tested there) runs in its place with the same arguments; it
/// names itself `koma` in its help and errors.
pub const KOMA: &str = env!("CARGO_BIN_EXE_koma-net");

/// Runs the network commands (`koma` without the front) with `args`, `stdin` written to its input, and waits for it.
pub fn koma(args: &[&str], stdin: &str) -> Output {
    run_with_input(KOMA, args, stdin.as_bytes())
}

/// A fresh folder for one test under Cargo's test scratch space, with `config` written to
/// `tiny.toml` in it: (folder, config path).
pub fn scratch_with_config(name: &str, config: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let cfg = dir.join("tiny.toml");
    std::fs::write(&cfg, config).unwrap();
    (dir, cfg)
}

/// The smallest network the tests train: the head of their configs, which go on with
/// their own `[search]`, `[selfplay]` and `[train]` tables (`concat!(tiny_network!(), ...)`).
#[macro_export]
macro_rules! tiny_network {
    () => {
        r#"variant = "shogi"
[model]
blocks = 1
channels = 8
value_channels = 2
value_hidden = 8
"#
    };
}

/// The search and the head of the self-play table of the tests' configs: after
/// `tiny_network!()`, before the test's own `[selfplay]` keys.
#[macro_export]
macro_rules! tiny_search {
    () => {
        r#"[search]
gumbel = true
gumbel_m = 4
[selfplay]
workers = 1
"#
    };
}
