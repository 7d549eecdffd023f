//! The `koma` front binary: it links no libtorch, and hands the network commands to
//! `koma-net` next to it with their help, errors and exit status intact.

use std::process::Command;

mod common;

use common::{koma, stdout, KOMA};

#[test]
fn the_front_binary_links_no_libtorch() {
    let bytes = std::fs::read(KOMA).unwrap();
    let needle = b"libtorch";
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "{KOMA} names libtorch: a network crate reached the front binary"
    );
}

#[test]
fn network_commands_show_their_own_help() {
    let o = koma(&["train", "--help"], "");
    assert!(o.status.success());
    assert!(stdout(&o).contains("Usage: koma train"), "{}", stdout(&o));
    let o = koma(&["help", "evaluate"], "");
    assert!(stdout(&o).contains("--opponent"), "{}", stdout(&o));
    let o = koma(&["--help"], "");
    for name in ["perft", "convert", "train", "learn", "evaluate", "analyse", "arena", "selfplay", "init"] {
        assert!(stdout(&o).contains(&format!("  {name} ")), "{name}: {}", stdout(&o));
    }
}

#[test]
fn network_errors_and_exit_status_pass_through_once() {
    let dir = tempdir("errors");
    let missing = dir.join("nothing-here");
    let o = koma(&["analyse", "--checkpoint", missing.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("no network at").count(), 1, "{err}");
    // Bad input is status 2, through the old name `eval` too.
    let o = koma(&["eval", "--checkpoint", "x", "--top", "many"], "");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_companion_is_named() {
    let dir = tempdir("alone");
    let alone = dir.join("koma");
    std::fs::copy(KOMA, &alone).unwrap();
    let o = Command::new(&alone).args(["train", "--config", "x.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("koma-net") && err.contains("missing"), "{err}");
    // The rules commands need no companion.
    let o = Command::new(&alone).args(["perft", "--depth", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("nodes 30"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_link_to_koma_elsewhere_still_finds_the_companion() {
    let dir = tempdir("link");
    let link = dir.join("koma");
    std::os::unix::fs::symlink(KOMA, &link).unwrap();
    let o = Command::new(&link).args(["evaluate", "--help"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--opponent"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("koma-front-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
