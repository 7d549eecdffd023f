//! `koma learn` records its config's search leaf material setting in the checkpoints it
//! writes (`model::LeafMaterial`), so that players default to it; a config without the
//! mix records none.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const CONFIG: &str = r#"variant = "shogi"
[model]
blocks = 1
channels = 8
value_channels = 2
value_hidden = 8
[train]
optimizer = "sgd"
lr = 0.01
warmup_steps = 0
batch_size = 4
seed = 3
"#;

/// The leaf material record of the checkpoint `koma learn` writes with `search` as the
/// config's `[search]` table.
fn learned_record(search: &str) -> Option<model::LeafMaterial> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tiny.toml");
    std::fs::write(&config, format!("{CONFIG}{search}")).unwrap();
    let records = dir.path().join("games.usi");
    std::fs::write(
        &records,
        "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\nstartpos moves 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b\n",
    )
    .unwrap();
    let opts = trainer::LearnOptions {
        config,
        records: vec![records],
        run: "r".into(),
        runs_dir: dir.path().join("runs"),
        epochs: 1.0,
        init: None,
        validation: 0.0,
        progress: false,
    };
    let summary = trainer::learn(&opts, Arc::new(AtomicBool::new(false))).unwrap();
    model::read_model_meta(&summary.checkpoint).unwrap().leaf_material
}

#[test]
fn learn_records_the_configs_leaf_material_mix() {
    let record = learned_record("[search]\nleaf_material_mix = 0.5\nleaf_material_scale = 36\n");
    assert_eq!(record, Some(model::LeafMaterial { mix: 0.5, scale: 36.0 }));
    assert_eq!(learned_record(""), None);
}
