//! What a network file must pass besides its metadata: before the network is built, the
//! declared network must fit in the file and match the file's tensor table (so that a
//! header cannot make the loader allocate more than the file holds); after it is built, a
//! probe forward pass must compute finite outputs (so that weights that are finite but
//! overflow, or otherwise compute NaN, are refused at load rather than played with).
//!
//! Cost of the probe: one f32 CPU forward pass of two positions, plus one pass of one
//! position through the evaluator a [`crate::Network`] is loaded into: about 1 ms in all
//! for the tiny test networks and 15 ms for b10c128 (standard shogi, one CPU core: 9 ms
//! and 6 ms), about what building the network costs. The checks before building are a
//! few microseconds per tensor.

use std::path::Path;

use rules::Position;
use safetensors::tensor::Dtype;

use super::error::CheckpointError;
use super::meta::ModelMeta;
use super::tensors::SafeTensors;
use crate::encoding::Encoder;
use crate::inference::evaluator::Evaluator;
use crate::network::params::{parameter_count, parameter_specs};

/// Bytes per stored scalar (every tensor is F32).
const SCALAR_BYTES: u64 = 4;

/// Refuses a file whose declared network (`meta`) needs more bytes than the whole file
/// holds (`file_bytes`), or whose tensor table (`st`: names, shapes, dtypes) is not that
/// network's. Nothing is allocated: the table is computed from the metadata.
pub fn check_declared_layout(
    meta: &ModelMeta,
    st: &SafeTensors<'_>,
    file_bytes: u64,
    path: &Path,
) -> Result<(), CheckpointError> {
    let specs = parameter_specs(&meta.net, meta.shape);
    let parameters = parameter_count(&specs);
    let declared_bytes = parameters.saturating_mul(SCALAR_BYTES);
    if declared_bytes > file_bytes {
        return Err(CheckpointError::LargerThanFile { path: path.into(), parameters, declared_bytes, file_bytes });
    }
    for name in st.names() {
        if specs.binary_search_by(|s| s.name.as_str().cmp(name)).is_err() {
            return Err(CheckpointError::UnexpectedTensor { path: path.into(), name: name.clone() });
        }
    }
    for spec in &specs {
        let name = || spec.name.clone();
        let view =
            st.tensor(&spec.name).map_err(|_| CheckpointError::MissingTensor { path: path.into(), name: name() })?;
        if view.shape() != spec.shape.as_slice() {
            let (expected, found) = (spec.shape.clone(), view.shape().to_vec());
            return Err(CheckpointError::TensorShape { path: path.into(), name: name(), expected, found });
        }
        if view.dtype() != Dtype::F32 {
            let found = format!("{:?}", view.dtype());
            return Err(CheckpointError::TensorDtype { path: path.into(), name: name(), found });
        }
    }
    Ok(())
}

/// The probe inputs: the start position, then every plane at 1 (which reaches every
/// input weight, also those of planes the start position leaves at 0, such as hands).
pub fn probe_inputs(encoder: &Encoder) -> Vec<f32> {
    let len = encoder.input_len();
    let mut inputs = vec![1f32; 2 * len];
    encoder.encode(&Position::startpos(encoder.variant()), &mut inputs[..len]);
    inputs
}

pub const PROBES: [&str; 2] = ["the start position", "all-ones input planes"];

/// Refuses an evaluator (the network as search will run it: fused, on its device, in its
/// precision) whose outputs for the probe inputs are not finite.
pub fn probe_evaluator(evaluator: &dyn Evaluator, encoder: &Encoder, path: &Path) -> Result<(), CheckpointError> {
    let out = evaluator.evaluate(&probe_inputs(encoder), PROBES.len())?;
    let on = evaluator.describe();
    for (i, input) in PROBES.into_iter().enumerate() {
        if !out.logits(i).to_vec().iter().all(|x| x.is_finite()) {
            return Err(non_finite(path, "policy logits", input, on));
        }
        if !out.wdl(i).iter().all(|x| x.is_finite()) {
            return Err(non_finite(path, "win/draw/loss values", input, on));
        }
    }
    Ok(())
}

pub fn non_finite(path: &Path, output: &'static str, input: &'static str, on: String) -> CheckpointError {
    CheckpointError::NonFiniteOutput { path: path.into(), output, input, on }
}
