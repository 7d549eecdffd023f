//! The one way to load a network: a checkpoint pair (`<stem>.json` + `<stem>.safetensors`)
//! or a model file written by `koma export`, found from any of their names, checked
//! (format, checksum, variant, encoder version, shape; the declared network against the
//! file's size and tensor table before it is built; every tensor finite, every batch norm
//! variance non-negative; a probe pass computing finite outputs), and handed out
//! with the encoder its input planes were trained with: like lc0's weights files, the input
//! format travels with the weights, so no caller rebuilds an encoder from metadata.
//!
//! Every check runs here, before a backend sees the weights: [`read_network_file`] hands a
//! backend a [`NetworkFile`] whose tensors are exactly the declared network's, finite and
//! plausible; [`Network::from_file`] probes the evaluator the backend built from it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rules::Variant;

use super::checkpoint::{read_checkpoint_meta, read_pair, CheckpointPaths};
use super::checks::{check_declared_layout, probe_evaluator};
use super::error::CheckpointError;
use super::meta::{read_model_file_meta, ModelMeta, MODEL_FILE_FORMAT};
use super::tensors::{parse, read_header_metadata, tensors_sha256, Weights};
use crate::encoding::{Encoder, ENCODER_VERSION};
use crate::inference::evaluator::{Evaluator, UniformEvaluator};
use crate::network::shape::NetShape;

/// What a loader requires besides a known format and this build's encoder version;
/// `None` accepts anything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    pub variant: Option<Variant>,
    pub shape: Option<NetShape>,
}

impl Expected {
    /// A network for this variant (the usual case).
    pub fn variant(variant: Variant) -> Self {
        Expected { variant: Some(variant), shape: None }
    }

    /// Also requires this shape (a learner that continues from the file).
    pub fn with_shape(mut self, shape: NetShape) -> Self {
        self.shape = Some(shape);
        self
    }

    /// Any network this build can run (inspection and export).
    pub fn any() -> Self {
        Self::default()
    }
}

/// Where a network's files are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// A checkpoint pair with one stem.
    Checkpoint(CheckpointPaths),
    /// One self-describing safetensors file written by `koma export`.
    ModelFile(PathBuf),
}

impl ModelSource {
    /// The file to name in messages: the metadata file of a pair, or the model file.
    pub fn path(&self) -> &Path {
        match self {
            ModelSource::Checkpoint(p) => &p.meta,
            ModelSource::ModelFile(p) => p,
        }
    }
}

/// Finds the network that `path` names: `<stem>.json` (a pair), a `.safetensors` file (a
/// model file, or the weights of a pair when its header says so), a bare stem (the pair,
/// else `<stem>.safetensors`), or any other existing file (a model file).
pub fn locate_model(path: impl AsRef<Path>) -> Result<ModelSource, CheckpointError> {
    let path = path.as_ref();
    let paths = CheckpointPaths::new(path);
    let not_found = |looked: String| CheckpointError::NotFound { path: path.into(), looked };
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") if paths.meta.is_file() => Ok(ModelSource::Checkpoint(paths)),
        Some("json") => Err(not_found(paths.meta.display().to_string())),
        Some("safetensors") if path.is_file() => {
            let format = read_header_metadata(path)?.remove("format");
            match format.as_deref() {
                Some(MODEL_FILE_FORMAT) => Ok(ModelSource::ModelFile(path.into())),
                _ if paths.meta.is_file() => Ok(ModelSource::Checkpoint(paths)),
                Some("koma-checkpoint") => {
                    Err(CheckpointError::WeightsWithoutMetadata { path: path.into(), meta: paths.meta })
                }
                _ => Err(CheckpointError::NotAModelFile {
                    path: path.into(),
                    found: format,
                    expected: MODEL_FILE_FORMAT,
                }),
            }
        }
        Some("safetensors") => Err(not_found(path.display().to_string())),
        _ if paths.meta.is_file() => Ok(ModelSource::Checkpoint(paths)),
        _ if paths.weights.is_file() => locate_model(&paths.weights),
        _ if path.is_file() => match read_header_metadata(path)?.remove("format") {
            Some(f) if f == MODEL_FILE_FORMAT => Ok(ModelSource::ModelFile(path.into())),
            found => Err(CheckpointError::NotAModelFile { path: path.into(), found, expected: MODEL_FILE_FORMAT }),
        },
        _ => Err(not_found(format!("{} and {}", paths.meta.display(), paths.weights.display()))),
    }
}

/// The metadata of the network at `path` (no weights read).
pub fn read_model_meta(path: impl AsRef<Path>) -> Result<ModelMeta, CheckpointError> {
    Ok(source_meta(&locate_model(path)?)?.0)
}

/// Metadata and, for a model file, the tensor digest its header records.
fn source_meta(source: &ModelSource) -> Result<(ModelMeta, Option<String>), CheckpointError> {
    match source {
        ModelSource::Checkpoint(paths) => {
            Ok((ModelMeta::from_checkpoint(read_checkpoint_meta(&paths.meta)?, &paths.meta)?, None))
        }
        ModelSource::ModelFile(path) => {
            let (meta, digest) = read_model_file_meta(&read_header_metadata(path)?, path)?;
            Ok((meta, Some(digest)))
        }
    }
}

/// Refuses a network this build cannot feed or the caller did not ask for.
pub fn check_meta(meta: &ModelMeta, expected: &Expected, path: &Path) -> Result<Encoder, CheckpointError> {
    if let Some(v) = expected.variant {
        if v != meta.variant {
            return Err(CheckpointError::WrongVariant { path: path.into(), expected: v, found: meta.variant });
        }
    }
    if meta.encoder_version != ENCODER_VERSION {
        let (expected, found) = (ENCODER_VERSION, meta.encoder_version);
        return Err(CheckpointError::WrongEncoderVersion { path: path.into(), expected, found });
    }
    let encoder = Encoder::for_net(meta.variant, &meta.net);
    if encoder.net_shape() != meta.shape {
        return Err(CheckpointError::EncoderShape {
            path: path.into(),
            variant: meta.variant,
            recorded: meta.shape,
            encoder: encoder.net_shape(),
        });
    }
    if let Some(s) = expected.shape {
        if s != meta.shape {
            return Err(CheckpointError::ShapeMismatch { path: path.into(), expected: s, found: meta.shape });
        }
    }
    Ok(encoder)
}

/// A network file that passed every check before building: its metadata, the encoder its
/// planes need, and its weights. Backends build their evaluators from it.
#[derive(Clone, Debug)]
pub struct NetworkFile {
    pub meta: ModelMeta,
    pub encoder: Encoder,
    pub weights: Weights,
    /// The file the weights came from (named in errors).
    pub weights_path: PathBuf,
}

/// Finds, reads and checks the network at `path` (see the module documentation).
pub fn read_network_file(path: impl AsRef<Path>, expected: &Expected) -> Result<NetworkFile, CheckpointError> {
    let source = locate_model(path)?;
    let (meta, digest) = source_meta(&source)?;
    let encoder = check_meta(&meta, expected, source.path())?;
    let (bytes, weights_path) = match &source {
        ModelSource::Checkpoint(paths) => (read_pair(paths)?.1, paths.weights.clone()),
        ModelSource::ModelFile(p) => {
            (std::fs::read(p).map_err(|cause| CheckpointError::Io { path: p.clone(), cause })?, p.clone())
        }
    };
    let st = parse(&bytes, &weights_path)?;
    // Before anything is allocated: the header must describe these weights.
    check_declared_layout(&meta, &st, bytes.len() as u64, &weights_path)?;
    if digest.is_some_and(|d| d != tensors_sha256(&st)) {
        return Err(CheckpointError::ChecksumMismatch { path: weights_path });
    }
    let weights = Weights::read(&st, &weights_path)?;
    Ok(NetworkFile { meta, encoder, weights, weights_path })
}

/// A network ready to evaluate positions: its evaluator, the encoder whose input planes it
/// reads, and the metadata of the file it came from (`None` for networks built in memory).
#[derive(Clone)]
pub struct Network {
    pub evaluator: Arc<dyn Evaluator>,
    pub encoder: Encoder,
    pub meta: Option<ModelMeta>,
}

impl Network {
    /// The network of `file` evaluated by `evaluator` (a backend's, built from `file`),
    /// which must compute finite outputs on the probe inputs in its own precision.
    pub fn from_file(file: NetworkFile, evaluator: Arc<dyn Evaluator>) -> Result<Network, CheckpointError> {
        probe_evaluator(evaluator.as_ref(), &file.encoder, &file.weights_path)?;
        Ok(Network { evaluator, encoder: file.encoder, meta: Some(file.meta) })
    }

    /// Every move equally likely, a neutral value (pure MCTS, tests).
    pub fn uniform(variant: Variant) -> Network {
        let encoder = Encoder::new(variant);
        Network { evaluator: Arc::new(UniformEvaluator::new(encoder.net_shape())), encoder, meta: None }
    }

    pub fn variant(&self) -> Variant {
        self.encoder.variant()
    }
}
