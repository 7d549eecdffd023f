//! Why a checkpoint or model file cannot be written or loaded.
//!
//! Every message names the file and prints its cause once: causes are part of the message
//! and not also returned by `Error::source`, so that error reports that print the whole
//! chain (`anyhow`'s `{:#}`) do not repeat them.

use std::path::PathBuf;

use rules::Variant;

use crate::inference::evaluator::EvalError;
use crate::network::config::ConfigError;
use crate::network::shape::{NetShape, ShapeError};

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {cause}")]
    Io { path: PathBuf, cause: std::io::Error },
    #[error("no network at {path} (looked for {looked})")]
    NotFound { path: PathBuf, looked: String },
    #[error(
        "{path}: checkpoint weights without their metadata file {meta} (copy the .json with them, \
         or load a single file written by `koma export`)"
    )]
    WeightsWithoutMetadata { path: PathBuf, meta: PathBuf },
    #[error("{path}: not valid checkpoint metadata: {cause}")]
    BadMetadata { path: PathBuf, cause: serde_json::Error },
    #[error("{path}: not a koma model file: {} (expected {expected})", format_found(.found))]
    /// `expected`: `MODEL_FILE_FORMAT` (passed in: this module does not import the format's).
    NotAModelFile { path: PathBuf, found: Option<String>, expected: &'static str },
    #[error("{path}: model file metadata `{key}` is missing or invalid")]
    BadModelFileMetadata { path: PathBuf, key: &'static str },
    #[error("{path}: format version {found} is not supported (this build reads version {supported})")]
    UnknownFormatVersion { path: PathBuf, found: u64, supported: u32 },
    #[error("{path}: unknown variant `{found}`")]
    UnknownVariant { path: PathBuf, found: String },
    #[error("{path}: the network plays {found}, expected {expected}")]
    WrongVariant { path: PathBuf, expected: Variant, found: Variant },
    #[error("{path}: the network uses encoder version {found}, this build has version {expected}")]
    WrongEncoderVersion { path: PathBuf, expected: u32, found: u32 },
    #[error("{path}: network shape ({found}) differs from the expected one ({expected})")]
    ShapeMismatch { path: PathBuf, expected: NetShape, found: NetShape },
    #[error("{path}: recorded network shape ({recorded}) is not what the {variant} encoder feeds ({encoder})")]
    EncoderShape { path: PathBuf, variant: Variant, recorded: NetShape, encoder: NetShape },
    #[error("{path}: network config is invalid: {cause}")]
    BadConfig { path: PathBuf, cause: ConfigError },
    #[error("{path}: network shape is invalid: {cause}")]
    BadShape { path: PathBuf, cause: ShapeError },
    /// The recorded leaf material setting (`LeafMaterial`) is outside the search's ranges.
    #[error("{path}: the recorded leaf material setting is invalid: {cause}")]
    BadLeafMaterial { path: PathBuf, cause: ConfigError },
    #[error("{path}: weights file is truncated or was replaced: {found} bytes, metadata says {expected}")]
    Truncated { path: PathBuf, expected: u64, found: u64 },
    #[error("{path}: weights do not match the SHA-256 in their metadata (corrupt or replaced)")]
    ChecksumMismatch { path: PathBuf },
    #[error("{path}: corrupt safetensors file: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: weights lack tensor `{name}`")]
    MissingTensor { path: PathBuf, name: String },
    #[error("{path}: weights have tensor `{name}`, which the network does not have")]
    UnexpectedTensor { path: PathBuf, name: String },
    #[error("{path}: tensor `{name}` has shape {found:?}, the network expects {expected:?}")]
    TensorShape { path: PathBuf, name: String, expected: Vec<usize>, found: Vec<usize> },
    #[error("{path}: tensor `{name}` has dtype {found}, expected F32")]
    TensorDtype { path: PathBuf, name: String, found: String },
    #[error(
        "{path}: the metadata declares a network of {declared_bytes} bytes of weights ({parameters} \
         scalars), more than the whole file holds ({file_bytes} bytes): it does not describe these weights"
    )]
    LargerThanFile { path: PathBuf, parameters: u64, declared_bytes: u64, file_bytes: u64 },
    #[error("{path}: tensor `{name}` holds {value} at index {index}: the weights are not finite (a diverged run?)")]
    NonFinite { path: PathBuf, name: String, index: usize, value: f32 },
    #[error(
        "{path}: tensor `{name}` holds {value} at index {index}: beyond {limit:e}, no trained network's weight; \
         such weights overflow to infinity on some positions"
    )]
    ImplausibleWeight { path: PathBuf, name: String, index: usize, value: f32, limit: f32 },
    #[error("{path}: batch norm variance `{name}` holds {value} at index {index}: variances are never negative")]
    NegativeVariance { path: PathBuf, name: String, index: usize, value: f32 },
    #[error(
        "{path}: the network computes non-finite {output} for {input} ({on}): its weights overflow \
         or are otherwise broken"
    )]
    NonFiniteOutput { path: PathBuf, output: &'static str, input: &'static str, on: String },
    #[error("{path}: refusing to overwrite the weights of checkpoint {meta}")]
    WouldOverwriteCheckpoint { path: PathBuf, meta: PathBuf },
    #[error(
        "{path}: the network takes {bytes} bytes, more than an ONNX file holds ({limit} bytes: protobuf's \
         limit; ONNX external data files are not written)"
    )]
    OnnxTooLarge { path: PathBuf, bytes: u64, limit: u64 },
    /// A backend could not build the network (libtorch's error); the message names it.
    #[error("network: {0}")]
    Backend(String),
    #[error("evaluator: {0}")]
    Eval(EvalError),
}

impl From<EvalError> for CheckpointError {
    fn from(e: EvalError) -> Self {
        CheckpointError::Eval(e)
    }
}

/// What a file's `format` says, for [`CheckpointError::NotAModelFile`].
fn format_found(found: &Option<String>) -> String {
    match found {
        None => "its metadata has no `format`".into(),
        Some(f) => format!("its metadata `format` is `{f}`"),
    }
}
