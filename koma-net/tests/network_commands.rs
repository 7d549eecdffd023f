//! The network commands' binary `koma-net`, as `koma` runs it: it names itself `koma` in
//! help and errors, prints each cause once and exits 2 for bad input. (The hand-off from
//! `koma` itself is tested in koma's tests/front.rs.)

mod common;

use common::{koma, stdout};

#[test]
fn network_commands_show_their_own_help() {
    let o = koma(&["train", "--help"], "");
    assert!(o.status.success());
    assert!(stdout(&o).contains("Usage: koma train"), "{}", stdout(&o));
    let o = koma(&["help", "evaluate"], "");
    assert!(stdout(&o).contains("--opponent"), "{}", stdout(&o));
}

#[test]
fn network_errors_and_exit_status_are_printed_once() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("koma-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("nothing-here");
    let o = koma(&["analyse", "--checkpoint", missing.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("no network at").count(), 1, "{err}");
    assert!(err.starts_with("koma: error: "), "{err}");
    // Bad input is status 2, through the old name `eval` too.
    let o = koma(&["eval", "--checkpoint", "x", "--top", "many"], "");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
