//! Writing checkpoints (the reading side, and the layout, are `nn::file::checkpoint`'s).

use std::collections::HashMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use files::write_atomic;
use nn::file::checkpoint::{io_err, CheckpointInfo, CheckpointMeta, CheckpointPaths, CHECKPOINT_FORMAT_VERSION};
use nn::file::leaf_material::validate_leaf_material;
use nn::file::tensors::{serialize, sha256_hex};
use nn::CheckpointError;

use super::tensors::host_tensors;
use crate::network::net::Net;

/// Writes `net`'s weights and metadata to `<stem>.safetensors` and `<stem>.json`
/// (`path` may also end in `.json` or `.safetensors`), atomically. Weights are stored as
/// little-endian f32 whatever the net's device and kind. Creates the folder if needed.
pub fn save_checkpoint(
    net: &Net,
    path: impl AsRef<Path>,
    info: &CheckpointInfo,
) -> Result<(CheckpointPaths, CheckpointMeta), CheckpointError> {
    let paths = CheckpointPaths::new(path);
    validate_leaf_material(info.leaf_material.as_ref(), &paths.meta)?;
    if let Some(dir) = paths.meta.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
    }
    let (tensors, parameters) = host_tensors(net)?;
    let header_meta: HashMap<String, String> = [
        ("format".to_string(), "koma-checkpoint".to_string()),
        ("format_version".to_string(), CHECKPOINT_FORMAT_VERSION.to_string()),
        ("variant".to_string(), info.variant.clone()),
    ]
    .into_iter()
    .collect();
    let bytes = serialize(&tensors, header_meta, &paths.weights)?;
    let meta = CheckpointMeta {
        format_version: CHECKPOINT_FORMAT_VERSION,
        variant: info.variant.clone(),
        encoder_version: info.encoder_version,
        net: net.config().clone(),
        shape: net.shape(),
        step: info.step,
        created_unix_ms: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0),
        weights_file: paths.weights.file_name().expect("weights path has a file name").to_string_lossy().into_owned(),
        weights_bytes: bytes.len() as u64,
        weights_sha256: sha256_hex(&bytes),
        parameters,
        producer: format!("koma-model {}", env!("CARGO_PKG_VERSION")),
        leaf_material: info.leaf_material,
    };
    // Weights first, metadata (the commit record) last.
    write_atomic(&paths.weights, &bytes).map_err(io_err(&paths.weights))?;
    let mut json = serde_json::to_vec_pretty(&meta).expect("metadata serialises");
    json.push(b'\n');
    write_atomic(&paths.meta, &json).map_err(io_err(&paths.meta))?;
    Ok((paths, meta))
}
