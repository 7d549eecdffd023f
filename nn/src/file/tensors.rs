//! The workspace's one safetensors codec: named f32 tensors as safetensors bytes and back,
//! behind checkpoints, exported model files and the trainer's optimiser state; the tensor
//! digest their checksums are built from; and the load-time checks every network tensor
//! passes (name, shape, dtype, finite values).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensorError};
pub use safetensors::tensor::{SafeTensors, TensorView};
use sha2::{Digest, Sha256};

use super::error::CheckpointError;

/// Largest safetensors header we read (the format's own limit is 100 MB).
const MAX_HEADER_BYTES: u64 = 100 << 20;

/// Bytes that are not a safetensors file, or tensors that do not make one.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TensorFileError(#[from] SafeTensorError);

/// One tensor on the host: name, shape, little-endian f32 bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub bytes: Vec<u8>,
}

impl HostTensor {
    /// Number of scalars.
    pub fn numel(&self) -> usize {
        self.bytes.len() / 4
    }
}

/// A safetensors file of `tensors` (all F32) with `metadata` in its header.
pub fn encode(tensors: &[HostTensor], metadata: HashMap<String, String>) -> Result<Vec<u8>, TensorFileError> {
    let views = tensors
        .iter()
        .map(|t| TensorView::new(Dtype::F32, t.shape.clone(), &t.bytes).map(|v| (t.name.as_str(), v)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(safetensors::serialize(views, &Some(metadata))?)
}

/// The tensors of a safetensors buffer (checked layout; values not read).
pub fn decode(bytes: &[u8]) -> Result<SafeTensors<'_>, TensorFileError> {
    Ok(SafeTensors::deserialize(bytes)?)
}

/// The `__metadata__` of a safetensors buffer's header (empty when it has none).
pub fn metadata(bytes: &[u8]) -> Result<HashMap<String, String>, TensorFileError> {
    let (_, header) = SafeTensors::read_metadata(bytes)?;
    Ok(header.metadata().clone().unwrap_or_default())
}

/// The values of an F32 tensor; `None` for any other dtype.
pub fn f32_values(view: &TensorView<'_>) -> Option<Vec<f32>> {
    (view.dtype() == Dtype::F32)
        .then(|| view.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// [`encode`] for a file at `path` (errors name it).
pub fn serialize(
    tensors: &[HostTensor],
    metadata: HashMap<String, String>,
    path: &Path,
) -> Result<Vec<u8>, CheckpointError> {
    encode(tensors, metadata).map_err(|e| CheckpointError::Corrupt { path: path.into(), reason: e.to_string() })
}

/// SHA-256 (lowercase hex) of the tensors of a safetensors file, independent of the
/// header's layout and metadata (see [`tensor_digest`]).
pub fn tensors_sha256(st: &SafeTensors<'_>) -> String {
    let tensors = st.tensors();
    tensor_digest(tensors.iter().map(|(name, v)| (name.as_str(), v.shape(), v.data())))
}

/// SHA-256 (lowercase hex) of named tensors `(name, shape, raw data)`: for each tensor in
/// byte order of its name, the UTF-8 name, a zero byte, the rank, every dimension and the
/// data length as u64 little-endian, then the data. The checksum of model files and of the
/// optimiser state; `data/FORMAT.md` ("Tensor digest") gives the same in Python.
pub fn tensor_digest<'a>(tensors: impl IntoIterator<Item = (&'a str, &'a [usize], &'a [u8])>) -> String {
    let mut sorted: Vec<_> = tensors.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut hash = Sha256::new();
    for (name, shape, data) in sorted {
        hash.update(name.as_bytes());
        hash.update([0u8]);
        hash.update((shape.len() as u64).to_le_bytes());
        for &d in shape {
            hash.update((d as u64).to_le_bytes());
        }
        hash.update((data.len() as u64).to_le_bytes());
        hash.update(data);
    }
    hex(&hash.finalize())
}

/// [`tensor_digest`] of host tensors.
pub fn host_tensors_sha256(tensors: &[HostTensor]) -> String {
    tensor_digest(tensors.iter().map(|t| (t.name.as_str(), t.shape.as_slice(), t.bytes.as_slice())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 (lowercase hex) of a whole file's bytes (a checkpoint's weights).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Parses a safetensors buffer read from `path`.
pub fn parse<'a>(bytes: &'a [u8], path: &Path) -> Result<SafeTensors<'a>, CheckpointError> {
    decode(bytes).map_err(|e| CheckpointError::Corrupt { path: path.into(), reason: e.to_string() })
}

/// The `__metadata__` of a safetensors file's header, read without loading the tensors
/// (to tell a model file from a checkpoint's weights). Empty when the header has none.
pub fn read_header_metadata(path: &Path) -> Result<HashMap<String, String>, CheckpointError> {
    let io = |cause| CheckpointError::Io { path: path.into(), cause };
    let corrupt = |reason: String| CheckpointError::Corrupt { path: path.into(), reason };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(|_| corrupt("shorter than a safetensors header".into()))?;
    let len = u64::from_le_bytes(len);
    let file_bytes = file.metadata().map_err(io)?.len();
    if len > MAX_HEADER_BYTES || len > file_bytes.saturating_sub(8) {
        return Err(corrupt(format!("header length {len} is out of range (the file has {file_bytes} bytes)")));
    }
    let mut header = vec![0u8; len as usize];
    file.read_exact(&mut header).map_err(|_| corrupt("truncated header".into()))?;
    let mut json: HashMap<String, serde_json::Value> =
        serde_json::from_slice(&header).map_err(|e| corrupt(format!("header is not JSON: {e}")))?;
    match json.remove("__metadata__") {
        None => Ok(HashMap::new()),
        Some(m) => serde_json::from_value(m).map_err(|e| corrupt(format!("header metadata: {e}"))),
    }
}

/// A network file's tensors as f32 values, by name, each passed by [`check_values`]: what
/// every backend builds its network from.
#[derive(Clone, Debug, Default)]
pub struct Weights {
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
}

impl Weights {
    /// Reads and checks every tensor of `st` (F32 only: the layout check ran before).
    pub(crate) fn read(st: &SafeTensors<'_>, path: &Path) -> Result<Weights, CheckpointError> {
        let mut tensors = BTreeMap::new();
        for (name, view) in st.tensors() {
            let Some(data) = f32_values(&view) else {
                let found = format!("{:?}", view.dtype());
                return Err(CheckpointError::TensorDtype { path: path.into(), name, found });
            };
            check_values(&name, &data, path)?;
            tensors.insert(name, (view.shape().to_vec(), data));
        }
        Ok(Weights { tensors })
    }

    /// The shape and values of tensor `name`.
    pub fn get(&self, name: &str) -> Option<(&[usize], &[f32])> {
        self.tensors.get(name).map(|(s, v)| (s.as_slice(), v.as_slice()))
    }

    /// Every tensor, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[usize], &[f32])> {
        self.tensors.iter().map(|(n, (s, v))| (n.as_str(), s.as_slice(), v.as_slice()))
    }
}

/// The largest magnitude a stored value may have. Trained networks' weights, biases and
/// batch norm statistics stay many orders below it; a finite value near f32's limit (3e38)
/// passes the load-time probe on its two inputs and still overflows on other positions
/// (the model-file fuzz test's long mode found one such bias).
pub const MAX_WEIGHT_MAGNITUDE: f32 = 1e8;

/// Refuses what no network file may hold: a NaN or an infinity (a diverged run), a value
/// beyond [`MAX_WEIGHT_MAGNITUDE`], or a negative batch norm variance (which computes
/// NaN), here, once, rather than played with.
pub fn check_values(name: &str, data: &[f32], path: &Path) -> Result<(), CheckpointError> {
    if let Some(index) = data.iter().position(|x| !x.is_finite()) {
        let value = data[index];
        return Err(CheckpointError::NonFinite { path: path.into(), name: name.into(), index, value });
    }
    if let Some(index) = data.iter().position(|x| x.abs() > MAX_WEIGHT_MAGNITUDE) {
        let (value, limit) = (data[index], MAX_WEIGHT_MAGNITUDE);
        return Err(CheckpointError::ImplausibleWeight { path: path.into(), name: name.into(), index, value, limit });
    }
    if name.ends_with(".running_var") {
        if let Some(index) = data.iter().position(|&x| x < 0.0) {
            let value = data[index];
            return Err(CheckpointError::NegativeVariance { path: path.into(), name: name.into(), index, value });
        }
    }
    Ok(())
}
