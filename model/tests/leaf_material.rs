//! The leaf material setting a network was trained with (`LeafMaterial`): recorded in the
//! checkpoint's metadata when training gives one, carried by exports (model files),
//! read back by every loader; absent means none, and checkpoints without it are written
//! exactly as before; a malformed or out-of-range record is refused.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::*;
use koma_model::tch::Device;
use koma_model::{
    export_model, load_net, read_checkpoint_meta, read_model_meta, save_checkpoint, CheckpointError, CheckpointInfo,
    CheckpointPaths, Expected, LeafMaterial, Net, Precision, LEAF_MATERIAL_KEY,
};
use rules::Variant;

const RECORD: LeafMaterial = LeafMaterial { mix: 0.5, scale: 36.0 };

fn expected() -> Expected {
    Expected::variant(Variant::Shogi)
}

/// A tiny shogi network saved at `dir/name` with `record`.
fn saved(dir: &Path, name: &str, record: Option<LeafMaterial>) -> (Net, CheckpointPaths) {
    let net = Net::new(&tiny_config(), shogi_shape(), 4, Device::Cpu).unwrap();
    let info = CheckpointInfo { leaf_material: record, ..shogi_info(77) };
    let (paths, meta) = save_checkpoint(&net, dir.join(name), &info).unwrap();
    assert_eq!(meta.leaf_material, record);
    (net, paths)
}

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_checkpoint_records_the_setting_and_every_loader_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved(dir.path(), "with", Some(RECORD));
    let json = json_of(&paths.meta);
    assert_eq!(json["leaf_material"], serde_json::json!({"mix": 0.5, "scale": 36.0}));
    assert_eq!(read_checkpoint_meta(&paths.meta).unwrap().leaf_material, Some(RECORD));
    assert_eq!(read_model_meta(&paths.meta).unwrap().leaf_material, Some(RECORD));
    let (_, meta) = load_net(&paths.meta, &expected(), Device::Cpu).unwrap();
    assert_eq!(meta.leaf_material, Some(RECORD));
    let network = koma_model::load_torch_network(&paths.meta, &expected(), Device::Cpu, Precision::F32).unwrap();
    assert_eq!(network.meta.unwrap().leaf_material, Some(RECORD));
}

/// Without a record the metadata has exactly the fields it had before the record
/// existed, and such a file (any checkpoint written before) reads as "none".
#[test]
fn without_a_record_checkpoints_are_written_and_read_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved(dir.path(), "without", None);
    let json = json_of(&paths.meta);
    let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "created_unix_ms",
            "encoder_version",
            "format_version",
            "net",
            "parameters",
            "producer",
            "shape",
            "step",
            "variant",
            "weights_bytes",
            "weights_file",
            "weights_sha256"
        ]
    );
    assert_eq!(read_checkpoint_meta(&paths.meta).unwrap().leaf_material, None);
    assert_eq!(load_net(&paths.meta, &expected(), Device::Cpu).unwrap().1.leaf_material, None);

    // A record removed by hand (an old file): none.
    let (_, with) = saved(dir.path(), "old", Some(RECORD));
    edit_meta(&with, |m| {
        m.as_object_mut().unwrap().remove("leaf_material");
    });
    assert_eq!(read_model_meta(&with.meta).unwrap().leaf_material, None);
}

#[test]
fn a_bad_record_in_a_checkpoint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved(dir.path(), "bad", Some(RECORD));
    edit_meta(&paths, |m| m["leaf_material"] = serde_json::json!({"mix": 1.5, "scale": 6.0}));
    let err = load_net(&paths.meta, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::BadLeafMaterial { .. }), "{err}");
    assert!(err.to_string().contains("leaf_material.mix = 1.5"), "{err}");
    edit_meta(&paths, |m| m["leaf_material"] = serde_json::json!({"mix": 0.5, "scale": 0.5}));
    let err = read_model_meta(&paths.meta).unwrap_err();
    assert!(matches!(err, CheckpointError::BadLeafMaterial { .. }), "{err}");
    for malformed in [
        serde_json::json!("half"),
        serde_json::json!({"mix": 0.5}),
        serde_json::json!({"mix": 0.5, "scale": 6.0, "x": 1}),
    ] {
        edit_meta(&paths, |m| m["leaf_material"] = malformed.clone());
        let err = read_checkpoint_meta(&paths.meta).unwrap_err();
        assert!(matches!(err, CheckpointError::BadMetadata { .. }), "{malformed}: {err}");
    }
}

#[test]
fn saving_an_out_of_range_record_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let net = Net::new(&tiny_config(), shogi_shape(), 4, Device::Cpu).unwrap();
    for bad in [LeafMaterial { mix: -0.1, scale: 6.0 }, LeafMaterial { mix: 0.5, scale: 2000.0 }] {
        let info = CheckpointInfo { leaf_material: Some(bad), ..shogi_info(1) };
        let err = save_checkpoint(&net, dir.path().join("refused"), &info).unwrap_err();
        assert!(matches!(err, CheckpointError::BadLeafMaterial { .. }), "{err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `dir/name`: the checkpoint at `paths` exported as a model file.
fn export(paths: &CheckpointPaths, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let exported = export_model(&paths.meta, &out).unwrap();
    assert_eq!(exported.meta, read_model_meta(&out).unwrap());
    out
}

#[test]
fn a_model_file_carries_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved(dir.path(), "ckpt", Some(RECORD));
    let out = export(&paths, dir.path(), "model.safetensors");
    let header = read_tensors(&out).1.unwrap();
    let recorded: LeafMaterial = serde_json::from_str(&header[LEAF_MATERIAL_KEY]).unwrap();
    assert_eq!(recorded, RECORD);
    assert_eq!(read_model_meta(&out).unwrap().leaf_material, Some(RECORD));
    let network = koma_model::load_torch_network(&out, &expected(), Device::Cpu, Precision::F32).unwrap();
    assert_eq!(network.meta.unwrap().leaf_material, Some(RECORD));
    // A model file exported again keeps it.
    let again = dir.path().join("again.safetensors");
    assert_eq!(export_model(&out, &again).unwrap().meta.leaf_material, Some(RECORD));
    assert_eq!(read_model_meta(&again).unwrap().leaf_material, Some(RECORD));

    // Without a record the header has no such key.
    let (_, plain) = saved(dir.path(), "plain", None);
    let out = export(&plain, dir.path(), "plain-model.safetensors");
    assert!(!read_tensors(&out).1.unwrap().contains_key(LEAF_MATERIAL_KEY));
    assert_eq!(read_model_meta(&out).unwrap().leaf_material, None);
}

#[test]
fn a_model_file_with_a_bad_record_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths) = saved(dir.path(), "ckpt", Some(RECORD));
    let out = export(&paths, dir.path(), "model.safetensors");
    let (tensors, header) = read_tensors(&out);
    let header = header.unwrap();
    // The digest covers the tensors only: a header edit keeps it valid.
    let with_value = |name: &str, value: Option<&str>| {
        let mut h: HashMap<String, String> = header.clone();
        match value {
            Some(v) => h.insert(LEAF_MATERIAL_KEY.into(), v.into()),
            None => h.remove(LEAF_MATERIAL_KEY),
        };
        let p = dir.path().join(name);
        write_tensors(&p, &tensors, &Some(h));
        p
    };
    for (i, malformed) in
        ["", "0.5", "{\"mix\": \"half\", \"scale\": 6}", "{\"mix\": 0.5}", "{\"mix\":0.5,\"scale\":6,\"x\":1}"]
            .into_iter()
            .enumerate()
    {
        let p = with_value(&format!("malformed-{i}.safetensors"), Some(malformed));
        let err = load_net(&p, &expected(), Device::Cpu).unwrap_err();
        assert!(
            matches!(err, CheckpointError::BadModelFileMetadata { key: LEAF_MATERIAL_KEY, .. }),
            "{malformed}: {err}"
        );
        assert!(read_model_meta(&p).is_err());
    }
    let p = with_value("out-of-range.safetensors", Some("{\"mix\": 0.5, \"scale\": 0}"));
    let err = load_net(&p, &expected(), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::BadLeafMaterial { .. }), "{err}");
    // Absent: none (a file exported before the record existed).
    let p = with_value("absent.safetensors", None);
    assert_eq!(load_net(&p, &expected(), Device::Cpu).unwrap().1.leaf_material, None);
    let p = with_value("other.safetensors", Some("{\"mix\": 1, \"scale\": 6}"));
    assert_eq!(read_model_meta(&p).unwrap().leaf_material, Some(LeafMaterial { mix: 1.0, scale: 6.0 }));
}
