//! The `koma` front binary: it links no libtorch, and hands the network commands to
//! `koma-net` next to it with their arguments, standard streams and exit status intact.
//! A stand-in companion (a shell script) answers here; the real one's help and errors are
//! tested in koma-net's tests/network_commands.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;

use common::{koma, scratch, stdout, KOMA};

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
fn help_lists_the_network_commands_next_to_the_rules_commands() {
    let o = koma(&["--help"], "");
    for name in ["perft", "convert", "train", "learn", "evaluate", "analyse", "arena", "selfplay", "init"] {
        assert!(stdout(&o).contains(&format!("  {name} ")), "{name}: {}", stdout(&o));
    }
}

#[test]
fn a_missing_companion_is_named() {
    let dir = scratch("koma-alone");
    let alone = dir.join("koma");
    std::fs::copy(KOMA, &alone).unwrap();
    let o = run(&alone, &["train", "--config", "x.toml"], "");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("koma-net") && err.contains("missing"), "{err}");
    // The rules commands need no companion.
    let o = run(&alone, &["perft", "--depth", "1"], "");
    assert!(String::from_utf8_lossy(&o.stdout).contains("nodes 30"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of `koma` in `dir` with a stand-in `koma-net` next to it that prints its
/// arguments and its input, writes to stderr and exits with status 3.
#[cfg(unix)]
fn koma_with_stand_in(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let koma = dir.join("koma");
    std::fs::copy(KOMA, &koma).unwrap();
    let companion = dir.join("koma-net");
    std::fs::write(&companion, "#!/bin/sh\nprintf 'arg %s\\n' \"$@\"\ncat\necho 'from koma-net' >&2\nexit 3\n")
        .unwrap();
    std::fs::set_permissions(&companion, std::fs::Permissions::from_mode(0o755)).unwrap();
    koma
}

/// Runs the program at `koma` (a file this test binary just wrote) with `args` and
/// `stdin`.
fn run(koma: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    // Another test's child may briefly hold a just-written file open (the fork before its
    // exec): "text file busy" (ETXTBSY, 26) passes.
    let mut tries = 0;
    let mut child = loop {
        let spawned =
            Command::new(koma).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        match spawned {
            Err(e) if e.raw_os_error() == Some(26) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn network_commands_pass_through_with_streams_and_exit_status() {
    let dir = scratch("koma-handoff");
    let koma = koma_with_stand_in(&dir);
    let o = run(&koma, &["train", "--config", "a b.toml", "--resume"], "some input\n");
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "arg train\narg --config\narg a b.toml\narg --resume\nsome input\n");
    assert_eq!(String::from_utf8_lossy(&o.stderr), "from koma-net\n");
    // Aliases and `koma help <command>` go to the companion as typed.
    let o = run(&koma, &["eval", "--top", "3"], "");
    assert_eq!(stdout(&o), "arg eval\narg --top\narg 3\n");
    let o = run(&koma, &["help", "evaluate"], "");
    assert_eq!(stdout(&o), "arg help\narg evaluate\n");
    // The rules commands stay here.
    let o = run(&koma, &["perft", "--depth", "1"], "");
    assert!(o.status.success() && stdout(&o).contains("nodes 30"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_link_to_koma_elsewhere_still_finds_the_companion() {
    let dir = scratch("koma-link");
    let koma = koma_with_stand_in(&dir);
    let elsewhere = dir.join("bin");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let link = elsewhere.join("koma");
    std::os::unix::fs::symlink(&koma, &link).unwrap();
    let o = run(&link, &["evaluate", "--help"], "");
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o), "arg evaluate\narg --help\n");
    let _ = std::fs::remove_dir_all(&dir);
}
