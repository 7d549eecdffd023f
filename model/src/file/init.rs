//! An untrained network written as a checkpoint: `koma init` and `koma-usi --init-model`
//! both come here, so the two write the same files for the same settings.

use std::path::Path;

use rules::Variant;

use super::checkpoint::save_checkpoint;
use super::loader::network_of_net;
use crate::inference::device::Precision;
use crate::network::net::{Net, NetError};
use nn::encoding::{Encoder, ENCODER_VERSION};
use nn::network::config::NetConfig;
use nn::{CheckpointError, CheckpointInfo, CheckpointMeta, CheckpointPaths};
use nn::{EvalError, Network};

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The settings describe no network (bad input).
    #[error(transparent)]
    Net(#[from] NetError),
    /// The files could not be written.
    #[error(transparent)]
    Save(#[from] CheckpointError),
    /// The network could not be set up for inference.
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// A freshly initialised network of `config` playing `variant`, as inference sees it on
/// the CPU in f32: the untrained network of tests and benchmarks. The same seed gives the
/// same weights.
pub fn fresh_network(variant: Variant, config: &NetConfig, seed: u64) -> Result<Network, InitError> {
    let encoder = Encoder::for_net(variant, config);
    let net = Net::new(config, encoder.net_shape(), seed, tch::Device::Cpu)?;
    Ok(network_of_net(&net, variant, tch::Device::Cpu, Precision::F32)?)
}

/// Writes a freshly initialised network of `config` playing `variant` as the checkpoint
/// `stem` (`<stem>.json` + `<stem>.safetensors`, step 0). The same seed gives the same
/// weights.
pub fn init_checkpoint(
    variant: Variant,
    config: &NetConfig,
    seed: u64,
    stem: &Path,
) -> Result<(CheckpointPaths, CheckpointMeta), InitError> {
    let encoder = Encoder::for_net(variant, config);
    let net = Net::new(config, encoder.net_shape(), seed, tch::Device::Cpu)?;
    // Untrained: no search setting to record.
    let info = CheckpointInfo {
        variant: variant.name().to_string(),
        encoder_version: ENCODER_VERSION,
        step: 0,
        leaf_material: None,
    };
    Ok(save_checkpoint(&net, stem, &info)?)
}
