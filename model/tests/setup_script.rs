//! `scripts/setup.sh` checks its torch build choice (`KOMA_TORCH_CUDA`) before touching
//! anything: `--dry-run` says what it would install, a bad choice exits with status 2.

use std::path::PathBuf;
use std::process::{Command, Output};

fn setup(build: Option<&str>, args: &[&str]) -> Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/setup.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script).args(args).env_remove("KOMA_TORCH_CUDA");
    if let Some(b) = build {
        cmd.env("KOMA_TORCH_CUDA", b);
    }
    cmd.output().expect("run bash")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn the_default_is_pypis_wheel() {
    let o = setup(None, &["--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(text(&o).trim(), "would install: torch==2.13.0");
}

#[test]
fn a_cuda_build_comes_from_pytorchs_index() {
    for build in ["cu126", "cu128", "cu130", "cpu"] {
        let o = setup(Some(build), &["--dry-run"]);
        assert!(o.status.success(), "{build}: {}", text(&o));
        assert_eq!(
            text(&o).trim(),
            format!("would install: torch==2.13.0+{build} --index-url https://download.pytorch.org/whl/{build}")
        );
    }
    // Empty is the default too.
    assert_eq!(text(&setup(Some(""), &["--dry-run"])).trim(), "would install: torch==2.13.0");
}

#[test]
fn unknown_builds_and_arguments_are_refused_before_anything_happens() {
    for build in ["cu118", "CU126", "cuda", "rocm6.2", "cu126 "] {
        let o = setup(Some(build), &[]);
        assert_eq!(o.status.code(), Some(2), "{build:?}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains("is not a torch build") && t.contains("cu126, cu128, cu130 or cpu"), "{t}");
    }
    let o = setup(None, &["--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown argument '--bogus'"));
}
