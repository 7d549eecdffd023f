//! Model files: one self-describing safetensors file per network, for sharing what was
//! trained (`koma export`). Everything a loader needs is in the header's `__metadata__`
//! (variant, encoder version, net config, shape, step, a digest of the tensors, a format
//! version), so the file loads on its own, under any name. `data/FORMAT.md` ("Model files")
//! describes it.

use std::path::{Path, PathBuf};

use tch::Device;

use nn::file::checkpoint::CheckpointPaths;
use nn::file::error::CheckpointError;
use nn::file::meta::{model_file_header, ModelMeta};
use nn::file::tensors::{host_tensors_sha256, serialize, HostTensor};
use nn::Expected;

use super::loader::load_net;
use super::tensors::host_tensors;
use crate::network::net::Net;
use files::write_atomic;

/// What an export wrote ([`export_model`], [`crate::export_onnx`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Exported {
    pub path: PathBuf,
    pub bytes: u64,
    /// The tensor digest recorded in the header (see [`crate::tensors_sha256`]).
    pub tensors_sha256: String,
    pub meta: ModelMeta,
}

/// Loads the network at `source` (a checkpoint or a model file; every load-time check
/// applies) and writes it to `out` as a model file, atomically. Refuses to overwrite the
/// weights of a checkpoint pair.
pub fn export_model(source: impl AsRef<Path>, out: impl AsRef<Path>) -> Result<Exported, CheckpointError> {
    export_with(source.as_ref(), out.as_ref(), write_model_file)
}

/// Loads the network at `source` and hands it to `write` for `out`, after refusing an
/// `out` that is a checkpoint's weights file: the one path of every export format.
pub(crate) fn export_with(
    source: &Path,
    out: &Path,
    write: impl FnOnce(&Net, &ModelMeta, &Path) -> Result<Exported, CheckpointError>,
) -> Result<Exported, CheckpointError> {
    refuse_checkpoint_weights(out)?;
    let (net, meta) = load_net(source, &Expected::any(), Device::Cpu)?;
    write(&net, &meta, out)
}

/// Refuses an output path that is the weights file of a checkpoint pair (both files exist).
pub(crate) fn refuse_checkpoint_weights(out: &Path) -> Result<(), CheckpointError> {
    let pair = CheckpointPaths::new(out);
    if pair.weights == out && pair.meta.is_file() && out.is_file() {
        return Err(CheckpointError::WouldOverwriteCheckpoint { path: out.into(), meta: pair.meta });
    }
    Ok(())
}

/// What every export writes: `net`'s weights copied to the host, their digest, and `meta`
/// brought up to date with `net` (its config, shape, parameter count, this producer).
pub(crate) fn export_parts(
    net: &Net,
    meta: &ModelMeta,
) -> Result<(Vec<HostTensor>, String, ModelMeta), CheckpointError> {
    let (tensors, parameters) = host_tensors(net)?;
    let digest = host_tensors_sha256(&tensors);
    let meta = ModelMeta {
        net: net.config().clone(),
        shape: net.shape(),
        parameters,
        producer: format!("koma-model {}", env!("CARGO_PKG_VERSION")),
        ..meta.clone()
    };
    Ok((tensors, digest, meta))
}

/// Writes `net` with `meta` as a model file at `out`, atomically.
pub fn write_model_file(net: &Net, meta: &ModelMeta, out: &Path) -> Result<Exported, CheckpointError> {
    let (tensors, digest, meta) = export_parts(net, meta)?;
    let bytes = serialize(&tensors, model_file_header(&meta, &digest), out)?;
    write_atomic(out, &bytes).map_err(|cause| CheckpointError::Io { path: out.into(), cause })?;
    Ok(Exported { path: out.into(), bytes: bytes.len() as u64, tensors_sha256: digest, meta })
}
