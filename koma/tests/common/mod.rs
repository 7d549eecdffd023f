//! Runs the `koma` binary as a process, for the integration tests.
#![allow(dead_code)]

mod process;

pub use process::*;
use std::process::Output;

/// The `koma` binary built for these tests.
pub const KOMA: &str = env!("CARGO_BIN_EXE_koma");

/// Runs `koma` with `args`, `stdin` written to its input, and waits for it.
pub fn koma(args: &[&str], stdin: &str) -> Output {
    run_with_input(KOMA, args, stdin.as_bytes())
}
