//! Checkpoints: `<stem>.safetensors` (weights) + `<stem>.json` (metadata), side by side.
//!
//! The JSON file is the commit record: it is written last and records the weights file's
//! size and SHA-256. The pair is found by its stem: the weights are the `.safetensors` file
//! next to the `.json` with the same stem, whatever the metadata's `weights_file` says, so a
//! renamed or moved pair loads its own weights. Both files are written atomically (temp file in the same folder,
//! fsync, rename, fsync of the folder), so a crash leaves either the previous checkpoint or
//! an orphan weights file without metadata, which loaders never pick up; a weights file
//! that does not match its metadata (replaced, truncated, bit rot) is refused.
//! The full description is in `data/FORMAT.md` ("Checkpoints").

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::leaf_material::LeafMaterial;
use super::tensors::sha256_hex;
use crate::network::config::NetConfig;
use crate::network::shape::NetShape;

pub use super::error::CheckpointError;

/// Version of the checkpoint layout written by this code. Bump it when the metadata fields
/// or the parameter names change meaning; loaders refuse versions they do not know.
pub const CHECKPOINT_FORMAT_VERSION: u32 = 1;

/// The metadata file (`<stem>.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    /// [`CHECKPOINT_FORMAT_VERSION`] at writing time.
    pub format_version: u32,
    /// The game variant the network plays (`shogi`, `sho`, `dai`).
    pub variant: String,
    /// Version of the variant's input/move encoding the network was trained with.
    pub encoder_version: u32,
    /// Architecture.
    pub net: NetConfig,
    /// Input/output sizes.
    pub shape: NetShape,
    /// Training step (optimiser updates) at which the weights were taken.
    pub step: u64,
    /// Creation time, milliseconds since the Unix epoch (UTC).
    pub created_unix_ms: u64,
    /// File name of the weights when they were written. Informative: loaders read the
    /// `.safetensors` file with the metadata file's own stem.
    pub weights_file: String,
    /// Exact size of the weights file in bytes.
    pub weights_bytes: u64,
    /// SHA-256 of the weights file, lowercase hex.
    pub weights_sha256: String,
    /// Number of scalars stored (parameters and batch norm statistics).
    pub parameters: u64,
    /// Writer, e.g. `koma-model 0.1.0`.
    pub producer: String,
    /// The search's leaf material setting the network was trained with, which players
    /// default to ([`LeafMaterial`]). Absent: none recorded (trained without the mix, or
    /// written before the field existed); written only when there is one, so checkpoints
    /// without it are what they were before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_material: Option<LeafMaterial>,
}

/// What the caller records along with the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointInfo {
    pub variant: String,
    pub encoder_version: u32,
    pub step: u64,
    /// The search's leaf material setting the network was trained with (the run's
    /// `[search]` when its mix is above 0), which players default to; `None`: none.
    pub leaf_material: Option<LeafMaterial>,
}

/// The two files of a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointPaths {
    pub meta: PathBuf,
    pub weights: PathBuf,
}

impl CheckpointPaths {
    /// From `<stem>`, `<stem>.json` or `<stem>.safetensors`.
    pub fn new(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let stem = match path.extension().and_then(|e| e.to_str()) {
            Some("json") | Some("safetensors") => path.with_extension(""),
            _ => path.to_path_buf(),
        };
        let name = stem.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        CheckpointPaths {
            meta: stem.with_file_name(format!("{name}.json")),
            weights: stem.with_file_name(format!("{name}.safetensors")),
        }
    }
}

pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |cause| CheckpointError::Io { path: path.to_path_buf(), cause }
}

/// Reads and checks the metadata file only (no weights).
pub fn read_checkpoint_meta(path: impl AsRef<Path>) -> Result<CheckpointMeta, CheckpointError> {
    let paths = CheckpointPaths::new(path);
    let text = std::fs::read(&paths.meta).map_err(io_err(&paths.meta))?;
    // The version first, leniently, so that a newer format gets a clear error rather than
    // a complaint about unknown fields.
    #[derive(Deserialize)]
    struct VersionOnly {
        format_version: u64,
    }
    let bad = |cause| CheckpointError::BadMetadata { path: paths.meta.clone(), cause };
    let v: VersionOnly = serde_json::from_slice(&text).map_err(bad)?;
    if v.format_version != CHECKPOINT_FORMAT_VERSION as u64 {
        return Err(CheckpointError::UnknownFormatVersion {
            path: paths.meta.clone(),
            found: v.format_version,
            supported: CHECKPOINT_FORMAT_VERSION,
        });
    }
    serde_json::from_slice(&text).map_err(bad)
}

/// The metadata of a checkpoint pair and the bytes of its weights file (the one with the
/// metadata's stem), checked against the size and SHA-256 the metadata records.
pub fn read_pair(paths: &CheckpointPaths) -> Result<(CheckpointMeta, Vec<u8>), CheckpointError> {
    let meta = read_checkpoint_meta(&paths.meta)?;
    let bytes = std::fs::read(&paths.weights).map_err(io_err(&paths.weights))?;
    if bytes.len() as u64 != meta.weights_bytes {
        return Err(CheckpointError::Truncated {
            path: paths.weights.clone(),
            expected: meta.weights_bytes,
            found: bytes.len() as u64,
        });
    }
    if sha256_hex(&bytes) != meta.weights_sha256 {
        return Err(CheckpointError::ChecksumMismatch { path: paths.weights.clone() });
    }
    Ok((meta, bytes))
}
