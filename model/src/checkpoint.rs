//! Checkpoints: `<stem>.safetensors` (weights) + `<stem>.json` (metadata), side by side.
//!
//! The JSON file is the commit record: it is written last and names the weights file with
//! its size and SHA-256. Both files are written atomically (temp file in the same folder,
//! fsync, rename, fsync of the folder), so a crash leaves either the previous checkpoint or
//! an orphan weights file without metadata, which loaders never pick up; a weights file
//! that does not match its metadata (replaced, truncated, bit rot) is refused.
//! The full description is in `data/FORMAT.md` ("Checkpoints").

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::config::{ConfigError, NetConfig};
use crate::net::{Net, NetError};
use crate::shape::{NetShape, ShapeError};
use crate::util::{sha256_hex, write_atomic};

/// Version of the checkpoint layout written by this code. Bump it when the metadata fields
/// or the parameter names change meaning; loaders refuse versions they do not know.
pub const CHECKPOINT_FORMAT_VERSION: u32 = 1;

/// The metadata file (`<stem>.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    /// [`CHECKPOINT_FORMAT_VERSION`] at writing time.
    pub format_version: u32,
    /// The game variant the network plays (e.g. `standard`, `sho`, `dai`).
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
    /// File name (same folder) of the safetensors weights.
    pub weights_file: String,
    /// Exact size of the weights file in bytes.
    pub weights_bytes: u64,
    /// SHA-256 of the weights file, lowercase hex.
    pub weights_sha256: String,
    /// Number of scalars stored (parameters and batch norm statistics).
    pub parameters: u64,
    /// Writer, e.g. `koma-model 0.1.0`.
    pub producer: String,
}

/// What the caller records along with the weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub variant: String,
    pub encoder_version: u32,
    pub step: u64,
}

/// What a loader requires; `None` accepts anything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    pub variant: Option<String>,
    pub encoder_version: Option<u32>,
    pub shape: Option<NetShape>,
}

impl Expected {
    /// Requires this variant and encoder version (the usual case).
    pub fn new(variant: impl Into<String>, encoder_version: u32) -> Self {
        Expected { variant: Some(variant.into()), encoder_version: Some(encoder_version), shape: None }
    }

    /// Also requires this shape.
    pub fn with_shape(mut self, shape: NetShape) -> Self {
        self.shape = Some(shape);
        self
    }

    /// Accepts any checkpoint of a known format (inspection tools).
    pub fn any() -> Self {
        Self::default()
    }
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

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not valid checkpoint metadata: {source}")]
    BadMetadata { path: PathBuf, source: serde_json::Error },
    #[error("{path}: checkpoint format version {found} is not supported (this build reads version {supported})")]
    UnknownFormatVersion { path: PathBuf, found: u64, supported: u32 },
    #[error("checkpoint is for variant `{found}`, expected `{expected}`")]
    WrongVariant { expected: String, found: String },
    #[error("checkpoint uses encoder version {found}, expected {expected}")]
    WrongEncoderVersion { expected: u32, found: u32 },
    #[error("checkpoint network shape ({found}) differs from the expected one ({expected})")]
    ShapeMismatch { expected: NetShape, found: NetShape },
    #[error("checkpoint network config is invalid: {0}")]
    BadConfig(#[from] ConfigError),
    #[error("checkpoint network shape is invalid: {0}")]
    BadShape(#[from] ShapeError),
    #[error("{path}: weights file is truncated or was replaced: {found} bytes, metadata says {expected}")]
    Truncated { path: PathBuf, expected: u64, found: u64 },
    #[error("{path}: weights file does not match its SHA-256 in the metadata (corrupt or replaced)")]
    ChecksumMismatch { path: PathBuf },
    #[error("{path}: corrupt safetensors file: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("weights file lacks tensor `{name}`")]
    MissingTensor { name: String },
    #[error("weights file has tensor `{name}` that the network does not have")]
    UnexpectedTensor { name: String },
    #[error("tensor `{name}` has shape {found:?}, the network expects {expected:?}")]
    TensorShape { name: String, expected: Vec<usize>, found: Vec<usize> },
    #[error("tensor `{name}` has dtype {found}, expected F32")]
    TensorDtype { name: String, found: String },
    #[error("metadata names weights file `{0}`, which is not a plain file name")]
    BadWeightsFileName(String),
    #[error("network: {0}")]
    Net(#[from] NetError),
    #[error("torch: {0}")]
    Torch(#[from] tch::TchError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io { path: path.to_path_buf(), source }
}

/// Writes `net`'s weights and metadata to `<stem>.safetensors` and `<stem>.json`
/// (`path` may also end in `.json` or `.safetensors`), atomically. Weights are stored as
/// little-endian f32 whatever the net's device and kind. Creates the folder if needed.
pub fn save_checkpoint(
    net: &Net,
    path: impl AsRef<Path>,
    info: &CheckpointInfo,
) -> Result<(CheckpointPaths, CheckpointMeta), CheckpointError> {
    let paths = CheckpointPaths::new(path);
    if let Some(dir) = paths.meta.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
    }

    // Host f32 copies, sorted by name.
    let vars: BTreeMap<String, Tensor> = net.var_store().variables().into_iter().collect();
    let mut host: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::with_capacity(vars.len());
    let mut parameters = 0u64;
    for (name, t) in &vars {
        let t = t.f_detach()?.f_to_device(Device::Cpu)?.f_to_kind(Kind::Float)?.f_contiguous()?;
        let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
        let numel = t.numel();
        let mut data = vec![0f32; numel];
        t.f_copy_data(&mut data, numel)?;
        parameters += numel as u64;
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        host.push((name.clone(), shape, bytes));
    }
    let views = host
        .iter()
        .map(|(name, shape, bytes)| TensorView::new(Dtype::F32, shape.clone(), bytes).map(|v| (name.as_str(), v)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CheckpointError::Corrupt { path: paths.weights.clone(), reason: e.to_string() })?;
    let header_meta: HashMap<String, String> = [
        ("format".to_string(), "koma-checkpoint".to_string()),
        ("format_version".to_string(), CHECKPOINT_FORMAT_VERSION.to_string()),
        ("variant".to_string(), info.variant.clone()),
    ]
    .into_iter()
    .collect();
    let bytes = safetensors::serialize(views, &Some(header_meta))
        .map_err(|e| CheckpointError::Corrupt { path: paths.weights.clone(), reason: e.to_string() })?;

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
    };
    // Weights first, metadata (the commit record) last.
    write_atomic(&paths.weights, &bytes).map_err(io_err(&paths.weights))?;
    let mut json = serde_json::to_vec_pretty(&meta).expect("metadata serialises");
    json.push(b'\n');
    write_atomic(&paths.meta, &json).map_err(io_err(&paths.meta))?;
    Ok((paths, meta))
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
    let bad = |source| CheckpointError::BadMetadata { path: paths.meta.clone(), source };
    let v: VersionOnly = serde_json::from_slice(&text).map_err(bad)?;
    if v.format_version != CHECKPOINT_FORMAT_VERSION as u64 {
        return Err(CheckpointError::UnknownFormatVersion {
            path: paths.meta.clone(),
            found: v.format_version,
            supported: CHECKPOINT_FORMAT_VERSION,
        });
    }
    let meta: CheckpointMeta = serde_json::from_slice(&text).map_err(bad)?;
    meta.net.validate()?;
    meta.shape.validate()?;
    Ok(meta)
}

/// Checks `meta` against what the caller expects.
pub fn check_compatible(meta: &CheckpointMeta, expected: &Expected) -> Result<(), CheckpointError> {
    if let Some(v) = &expected.variant {
        if *v != meta.variant {
            return Err(CheckpointError::WrongVariant { expected: v.clone(), found: meta.variant.clone() });
        }
    }
    if let Some(e) = expected.encoder_version {
        if e != meta.encoder_version {
            return Err(CheckpointError::WrongEncoderVersion { expected: e, found: meta.encoder_version });
        }
    }
    if let Some(s) = expected.shape {
        if s != meta.shape {
            return Err(CheckpointError::ShapeMismatch { expected: s, found: meta.shape });
        }
    }
    Ok(())
}

/// Loads a checkpoint written by [`save_checkpoint`]: metadata, compatibility checks
/// against `expected`, weights file size and checksum, then every tensor by name with its
/// exact shape (no missing, no extra tensor). The network is created on `device`.
pub fn load_checkpoint(
    path: impl AsRef<Path>,
    expected: &Expected,
    device: Device,
) -> Result<(Net, CheckpointMeta), CheckpointError> {
    let paths = CheckpointPaths::new(path.as_ref());
    let meta = read_checkpoint_meta(&paths.meta)?;
    check_compatible(&meta, expected)?;
    let wf = &meta.weights_file;
    if wf.is_empty() || wf.contains('/') || wf.contains('\\') || wf == "." || wf == ".." {
        return Err(CheckpointError::BadWeightsFileName(wf.clone()));
    }
    let weights_path = paths.meta.with_file_name(wf);
    let bytes = std::fs::read(&weights_path).map_err(io_err(&weights_path))?;
    if bytes.len() as u64 != meta.weights_bytes {
        return Err(CheckpointError::Truncated {
            path: weights_path,
            expected: meta.weights_bytes,
            found: bytes.len() as u64,
        });
    }
    if sha256_hex(&bytes) != meta.weights_sha256 {
        return Err(CheckpointError::ChecksumMismatch { path: weights_path });
    }
    let net = Net::new(&meta.net, meta.shape, 0, Device::Cpu)?;
    load_weights_bytes(&net, &bytes, &weights_path)?;
    let mut net = net;
    if device != Device::Cpu {
        net.var_store_mut().set_device(device);
    }
    Ok((net, meta))
}

/// Copies the tensors of a safetensors buffer into `net` (same names, same shapes, F32).
fn load_weights_bytes(net: &Net, bytes: &[u8], path: &Path) -> Result<(), CheckpointError> {
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| CheckpointError::Corrupt { path: path.to_path_buf(), reason: format!("{e:?}") })?;
    let vars = net.var_store().variables();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    for name in st.names() {
        if !vars.contains_key(name.as_str()) {
            return Err(CheckpointError::UnexpectedTensor { name: name.clone() });
        }
    }
    for name in names {
        let view = st.tensor(name).map_err(|_| CheckpointError::MissingTensor { name: name.clone() })?;
        let var = &vars[name];
        let expected: Vec<usize> = var.size().iter().map(|&d| d as usize).collect();
        if view.shape() != expected.as_slice() {
            return Err(CheckpointError::TensorShape { name: name.clone(), expected, found: view.shape().to_vec() });
        }
        if view.dtype() != Dtype::F32 {
            return Err(CheckpointError::TensorDtype { name: name.clone(), found: format!("{:?}", view.dtype()) });
        }
        let data: Vec<f32> =
            view.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let shape: Vec<i64> = expected.iter().map(|&d| d as i64).collect();
        let src = Tensor::f_from_slice(&data)?.f_view(shape.as_slice())?;
        let mut dst = var.shallow_clone();
        tch::no_grad(|| dst.f_copy_(&src))?;
    }
    Ok(())
}
