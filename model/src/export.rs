//! Model files: one self-describing safetensors file per network, for sharing what was
//! trained (`koma export`). Everything a loader needs is in the header's `__metadata__`
//! (variant, encoder version, net config, shape, step, a digest of the tensors, a format
//! version), so the file loads on its own, under any name. `data/FORMAT.md` ("Model files")
//! describes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use tch::Device;

use crate::checkpoint::CheckpointPaths;
use crate::load_error::CheckpointError;
use crate::loader::{load_net, parse_variant, Expected, ModelMeta};
use crate::net::Net;
use crate::weights::{host_tensors, host_tensors_sha256, serialize};
use files::write_atomic;

/// `format` in the header of a model file.
pub const MODEL_FILE_FORMAT: &str = "koma-model";

/// Version of the model file layout written by this code; loaders refuse others.
pub const MODEL_FILE_FORMAT_VERSION: u32 = 1;

/// What [`export_model`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportedModel {
    pub path: PathBuf,
    pub bytes: u64,
    /// The tensor digest recorded in the header (see [`tensors_sha256`]).
    pub tensors_sha256: String,
    pub meta: ModelMeta,
}

/// Loads the network at `source` (a checkpoint or a model file; every load-time check
/// applies) and writes it to `out` as a model file, atomically. Refuses to overwrite the
/// weights of a checkpoint pair.
pub fn export_model(source: impl AsRef<Path>, out: impl AsRef<Path>) -> Result<ExportedModel, CheckpointError> {
    let out = out.as_ref();
    let pair = CheckpointPaths::new(out);
    if pair.weights == out && pair.meta.is_file() && out.is_file() {
        return Err(CheckpointError::WouldOverwriteCheckpoint { path: out.into(), meta: pair.meta });
    }
    let (net, meta) = load_net(source, &Expected::any(), Device::Cpu)?;
    write_model_file(&net, &meta, out)
}

/// Writes `net` with `meta` as a model file at `out`, atomically.
pub fn write_model_file(net: &Net, meta: &ModelMeta, out: &Path) -> Result<ExportedModel, CheckpointError> {
    let (tensors, parameters) = host_tensors(net)?;
    let digest = host_tensors_sha256(&tensors);
    let meta = ModelMeta {
        net: net.config().clone(),
        shape: net.shape(),
        parameters,
        producer: format!("koma-model {}", env!("CARGO_PKG_VERSION")),
        ..meta.clone()
    };
    let bytes = serialize(&tensors, header(&meta, &digest), out)?;
    write_atomic(out, &bytes).map_err(|cause| CheckpointError::Io { path: out.into(), cause })?;
    Ok(ExportedModel { path: out.into(), bytes: bytes.len() as u64, tensors_sha256: digest, meta })
}

fn header(meta: &ModelMeta, digest: &str) -> HashMap<String, String> {
    [
        ("format", MODEL_FILE_FORMAT.to_string()),
        ("format_version", MODEL_FILE_FORMAT_VERSION.to_string()),
        ("variant", meta.variant.name().to_string()),
        ("encoder_version", meta.encoder_version.to_string()),
        ("net", serde_json::to_string(&meta.net).expect("net config serialises")),
        ("shape", serde_json::to_string(&meta.shape).expect("shape serialises")),
        ("step", meta.step.to_string()),
        ("parameters", meta.parameters.to_string()),
        ("created_unix_ms", meta.created_unix_ms.to_string()),
        ("producer", meta.producer.clone()),
        ("tensors_sha256", digest.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The metadata and tensor digest recorded in a model file's header (`header` is its
/// `__metadata__`). Unknown keys are ignored; missing or malformed ones are refused.
pub(crate) fn read_model_file_meta(
    header: &HashMap<String, String>,
    path: &Path,
) -> Result<(ModelMeta, String), CheckpointError> {
    let format = header.get("format");
    if format.map(String::as_str) != Some(MODEL_FILE_FORMAT) {
        return Err(CheckpointError::NotAModelFile { path: path.into(), found: format.cloned() });
    }
    let get = |key: &'static str| {
        header.get(key).ok_or_else(|| CheckpointError::BadModelFileMetadata { path: path.into(), key })
    };
    let bad = |key: &'static str| CheckpointError::BadModelFileMetadata { path: path.into(), key };
    let number = |key: &'static str| get(key)?.parse::<u64>().map_err(|_| bad(key));
    let version = number("format_version")?;
    if version != MODEL_FILE_FORMAT_VERSION as u64 {
        return Err(CheckpointError::UnknownFormatVersion {
            path: path.into(),
            found: version,
            supported: MODEL_FILE_FORMAT_VERSION,
        });
    }
    let digest = get("tensors_sha256")?;
    if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(bad("tensors_sha256"));
    }
    let meta = ModelMeta {
        variant: parse_variant(get("variant")?, path)?,
        encoder_version: u32::from_str(get("encoder_version")?).map_err(|_| bad("encoder_version"))?,
        net: serde_json::from_str(get("net")?).map_err(|_| bad("net"))?,
        shape: serde_json::from_str(get("shape")?).map_err(|_| bad("shape"))?,
        step: number("step")?,
        parameters: number("parameters")?,
        created_unix_ms: number("created_unix_ms")?,
        producer: get("producer")?.clone(),
    };
    meta.validate(path)?;
    Ok((meta, digest.clone()))
}
