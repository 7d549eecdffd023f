//! What a network file says about the network ([`ModelMeta`]), whichever form it came in,
//! and the model file's header: written and read here, side by side, so that the two stay
//! one format (`data/FORMAT.md`, "Model files").

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use rules::Variant;

use super::checkpoint::CheckpointMeta;
use super::error::CheckpointError;
use super::leaf_material::validate_leaf_material;
pub use super::leaf_material::LeafMaterial;
use crate::network::config::NetConfig;
use crate::network::shape::NetShape;

/// `format` in the header of a model file.
pub const MODEL_FILE_FORMAT: &str = "koma-model";

/// Version of the model file layout written by this code; loaders refuse others.
pub const MODEL_FILE_FORMAT_VERSION: u32 = 1;

/// What a network file says about the network, whichever form it came in.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelMeta {
    pub variant: Variant,
    /// Version of the input planes and move labels the network was trained with.
    pub encoder_version: u32,
    pub net: NetConfig,
    pub shape: NetShape,
    /// Training step (optimiser updates) at which the weights were taken.
    pub step: u64,
    /// Scalars stored (parameters and batch norm statistics).
    pub parameters: u64,
    /// When the weights were written by training, ms since the Unix epoch (UTC).
    pub created_unix_ms: u64,
    /// The program that wrote the file, e.g. `koma-model 0.1.0`.
    pub producer: String,
    /// The search's leaf material setting the network was trained with, which players
    /// default to; `None` when the file records none (a network trained without the mix,
    /// or written before the record existed).
    pub leaf_material: Option<LeafMaterial>,
}

impl ModelMeta {
    pub fn from_checkpoint(meta: CheckpointMeta, path: &Path) -> Result<ModelMeta, CheckpointError> {
        let variant = parse_variant(&meta.variant, path)?;
        let meta = ModelMeta {
            variant,
            encoder_version: meta.encoder_version,
            net: meta.net,
            shape: meta.shape,
            step: meta.step,
            parameters: meta.parameters,
            created_unix_ms: meta.created_unix_ms,
            producer: meta.producer,
            leaf_material: meta.leaf_material,
        };
        meta.validate(path)?;
        Ok(meta)
    }

    pub fn validate(&self, path: &Path) -> Result<(), CheckpointError> {
        self.net.validate().map_err(|cause| CheckpointError::BadConfig { path: path.into(), cause })?;
        self.shape.validate().map_err(|cause| CheckpointError::BadShape { path: path.into(), cause })?;
        validate_leaf_material(self.leaf_material.as_ref(), path)
    }
}

pub fn parse_variant(name: &str, path: &Path) -> Result<Variant, CheckpointError> {
    name.parse().map_err(|_| CheckpointError::UnknownVariant { path: path.into(), found: name.to_string() })
}

/// The `__metadata__` of a model file holding `meta` and tensors of digest `digest`.
pub fn model_file_header(meta: &ModelMeta, digest: &str) -> HashMap<String, String> {
    let format = [("format", MODEL_FILE_FORMAT.to_string()), ("format_version", MODEL_FILE_FORMAT_VERSION.to_string())];
    format.into_iter().chain(meta_entries(meta, digest)).map(|(k, v)| (k.to_string(), v)).collect()
}

/// `meta` and the tensor digest as the key-value pairs every exported file carries (the
/// model file's header, an ONNX model's `metadata_props`), after its own format keys.
/// `leaf_material` is there only when the network records one.
pub fn meta_entries(meta: &ModelMeta, digest: &str) -> Vec<(&'static str, String)> {
    let mut entries = vec![
        ("variant", meta.variant.name().to_string()),
        ("encoder_version", meta.encoder_version.to_string()),
        ("net", serde_json::to_string(&meta.net).expect("net config serialises")),
        ("shape", serde_json::to_string(&meta.shape).expect("shape serialises")),
        ("step", meta.step.to_string()),
        ("parameters", meta.parameters.to_string()),
        ("created_unix_ms", meta.created_unix_ms.to_string()),
        ("producer", meta.producer.clone()),
        ("tensors_sha256", digest.to_string()),
    ];
    if let Some(m) = &meta.leaf_material {
        entries.push((LEAF_MATERIAL_KEY, serde_json::to_string(m).expect("leaf material serialises")));
    }
    entries
}

/// The optional key of a model file's header (and an ONNX model's `metadata_props`) that
/// holds [`ModelMeta::leaf_material`] as a JSON object, `{"mix":0.5,"scale":6.0}`.
pub const LEAF_MATERIAL_KEY: &str = "leaf_material";

/// The metadata and tensor digest recorded in a model file's header (`header` is its
/// `__metadata__`). Unknown keys are ignored; missing or malformed ones are refused
/// (`leaf_material` may be missing: no record).
pub fn read_model_file_meta(
    header: &HashMap<String, String>,
    path: &Path,
) -> Result<(ModelMeta, String), CheckpointError> {
    let format = header.get("format");
    if format.map(String::as_str) != Some(MODEL_FILE_FORMAT) {
        return Err(CheckpointError::NotAModelFile {
            path: path.into(),
            found: format.cloned(),
            expected: MODEL_FILE_FORMAT,
        });
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
        leaf_material: match header.get(LEAF_MATERIAL_KEY) {
            None => None,
            Some(text) => Some(serde_json::from_str(text).map_err(|_| bad(LEAF_MATERIAL_KEY))?),
        },
    };
    meta.validate(path)?;
    Ok((meta, digest.clone()))
}
