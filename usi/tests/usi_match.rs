//! Real GUI-style matches through cshogi (scripts/usi-match.sh): koma-usi against gpsusi
//! with a short byoyomi; every game completes, every move legal, no time loss. koma plays
//! from a model file written by `koma export` (the form a user shares).

mod common;

use std::process::Command;

use common::*;

#[test]
fn match_against_gpsusi_through_cshogi() {
    let root = repo_root();
    let opponent = "/usr/games/gpsusi";
    if !require(
        ".venv python with cshogi (scripts/setup.sh, scripts/install-engines.sh)",
        python_with_cshogi().is_some(),
    ) || !require("gpsusi (Debian package gpsshogi)", std::path::Path::new(opponent).exists())
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let model_file = dir.path().join("model-shogi.safetensors");
    model::export_model(tiny_checkpoint("shogi"), &model_file).unwrap();
    // 500 ms, as the acceptance match: a shorter byoyomi measures the machine's
    // load (a 2-core CI box shared with other tests) more than the engine's clock.
    let st = Command::new("bash")
        .arg(root.join("scripts/usi-match.sh"))
        .args(["--no-build", "--games", "2", "--byoyomi", "500", "--opponent", opponent, "--model"])
        .arg(&model_file)
        .env("KOMA_USI", exe())
        .current_dir(&root)
        .status()
        .expect("run scripts/usi-match.sh");
    assert!(st.success(), "scripts/usi-match.sh failed (output above)");
}
