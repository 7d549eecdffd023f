//! koma-usi driven by a real USI client: `scripts/ref/usi_client_check.py` plays a session
//! through cshogi's `cshogi.usi.Engine` (options, a short game, ponder, MultiPV, mate
//! scores, go mate, usinewgame, gameover, quit) and checks every line the engine sends
//! against the USI grammar and cshogi's own parsers (see the script's docstring).

mod common;

use std::process::Command;

use common::*;

#[test]
fn every_line_passes_cshogis_usi_client() {
    let Some(py) = python_with_cshogi() else {
        require(".venv python with cshogi (scripts/setup.sh)", false);
        return;
    };
    let out = Command::new(py)
        .arg(repo_root().join("scripts/ref/usi_client_check.py"))
        .arg(exe())
        .output()
        .expect("run scripts/ref/usi_client_check.py");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "scripts/ref/usi_client_check.py failed:\n{text}");
    assert!(text.contains("usi_client_check: ok"), "{text}");
}
