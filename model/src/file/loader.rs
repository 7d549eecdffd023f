//! Loading a network onto libtorch: the file is found, read and checked by
//! [`nn::read_network_file`] (every check but the probes), then built as a [`Net`] here.

use std::path::Path;
use std::sync::Arc;

use nn::file::checks::{non_finite, probe_inputs, PROBES};
use nn::{read_network_file, CheckpointError, Encoder, EvalError, Expected, ModelMeta, Network, NetworkFile};
use rules::Variant;
use tch::Device;

use super::tensors::copy_into;
use crate::inference::device::Precision;
use crate::inference::torch_evaluator::TorchEvaluator;
use crate::network::net::Net;

/// The file's network as a [`Net`] on the CPU, its f32 forward pass probed.
fn build_net(file: &NetworkFile) -> Result<Net, CheckpointError> {
    let net = Net::new(&file.meta.net, file.meta.shape, 0, Device::Cpu)?;
    copy_into(&net, &file.weights, &file.weights_path)?;
    probe_net(&net, &file.encoder, &file.weights_path)?;
    Ok(net)
}

/// The weights of a network file as a trainable [`Net`] on `device`, for a learner that
/// continues from them (its encoder comes from its own config: give its shape in
/// `expected`). Everything else loads a [`Network`].
pub fn load_net(
    path: impl AsRef<Path>,
    expected: &Expected,
    device: Device,
) -> Result<(Net, ModelMeta), CheckpointError> {
    let file = read_network_file(path, expected)?;
    let mut net = build_net(&file)?;
    if device != Device::Cpu {
        net.var_store_mut().set_device(device);
    }
    Ok((net, file.meta))
}

/// Loads the network at `path` (a checkpoint pair by any of its names, or a model file)
/// for inference with libtorch on `device`. The evaluator has run one batch when it is
/// handed out: the probes in its own precision, which must be finite.
pub fn load_torch_network(
    path: impl AsRef<Path>,
    expected: &Expected,
    device: Device,
    precision: Precision,
) -> Result<Network, CheckpointError> {
    let file = read_network_file(path, expected)?;
    let net = build_net(&file)?;
    let evaluator = TorchEvaluator::new(&net, device, precision)?;
    Network::from_file(file, Arc::new(evaluator))
}

/// A snapshot of a network in memory (a learner's), read through the encoder its config
/// builds.
pub fn network_of_net(net: &Net, variant: Variant, device: Device, precision: Precision) -> Result<Network, EvalError> {
    let encoder = Encoder::for_net(variant, net.config());
    if encoder.net_shape() != net.shape() {
        return Err(EvalError::ShapeMismatch { expected: encoder.net_shape(), found: net.shape() });
    }
    let evaluator = TorchEvaluator::new(net, device, precision)?;
    Ok(Network { evaluator: Arc::new(evaluator), encoder, meta: None })
}

/// Refuses a network whose f32 forward pass computes a non-finite policy logit or value
/// logit on the probe inputs.
fn probe_net(net: &Net, encoder: &Encoder, path: &Path) -> Result<(), CheckpointError> {
    let (policy, wdl) = net.forward_host(&probe_inputs(encoder), PROBES.len())?;
    let (pl, wl) = (policy.len() / PROBES.len(), wdl.len() / PROBES.len());
    for (i, input) in PROBES.into_iter().enumerate() {
        let on = format!("f32 on {:?}", net.device());
        if !policy[i * pl..(i + 1) * pl].iter().all(|x| x.is_finite()) {
            return Err(non_finite(path, "policy logits", input, on));
        }
        if !wdl[i * wl..(i + 1) * wl].iter().all(|x| x.is_finite()) {
            return Err(non_finite(path, "win/draw/loss values", input, on));
        }
    }
    Ok(())
}

/// libtorch as the `nn` crate's backend choice sees it ([`nn::load_network`]).
pub const TORCH_BACKEND: nn::TorchBackend = nn::TorchBackend { load: torch_evaluator, is_gpu };

fn torch_evaluator(file: &NetworkFile, device: &str) -> Result<Arc<dyn nn::Evaluator>, CheckpointError> {
    let device = crate::parse_device(device).map_err(|e| CheckpointError::Backend(e.to_string()))?;
    let net = build_net(file)?;
    Ok(Arc::new(TorchEvaluator::new(&net, device, Precision::Auto)?))
}

fn is_gpu(device: &str) -> Result<bool, String> {
    crate::parse_device(device).map(|d| d.is_cuda()).map_err(|e| e.to_string())
}
