//! The parameter table of a network (every tensor's name and shape) computed from its
//! [`NetConfig`] and [`NetShape`] alone, without building it: what a loader compares a
//! file's tensors with before it allocates anything. [`crate::Net::new`] creates exactly
//! these tensors (a test holds the two together); the names are the checkpoint format
//! (`data/FORMAT.md`).

use super::config::NetConfig;
use super::shape::{NetShape, WDL_LEN};

/// One tensor of a network: its name and dimensions.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ParamSpec {
    pub name: String,
    pub shape: Vec<usize>,
}

impl ParamSpec {
    fn new(name: impl Into<String>, shape: &[usize]) -> ParamSpec {
        ParamSpec { name: name.into(), shape: shape.to_vec() }
    }

    /// Scalars in the tensor (saturating: a declared shape may be absurd).
    pub fn numel(&self) -> u64 {
        self.shape.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64))
    }
}

/// Every tensor of the network `config` x `shape` (parameters and batch norm statistics),
/// sorted by name. Cheap: a few entries per block, no tensor.
pub fn parameter_specs(config: &NetConfig, shape: NetShape) -> Vec<ParamSpec> {
    let mut specs = Vec::new();
    let c = config.channels;
    conv_bn(&mut specs, "stem.conv", "stem.bn", c, shape.input_planes, 3);
    for i in 0..config.blocks {
        let b = format!("blocks.{i}");
        conv_bn(&mut specs, &format!("{b}.conv1"), &format!("{b}.bn1"), c, c, 3);
        conv_bn(&mut specs, &format!("{b}.conv2"), &format!("{b}.bn2"), c, c, 3);
        if config.is_global_pooling_block(i) {
            let g = config.global_pooling_channels;
            conv_bn(&mut specs, &format!("{b}.gpool.conv"), &format!("{b}.gpool.bn"), g, c, 3);
            specs.push(ParamSpec::new(format!("{b}.gpool.linear.weight"), &[c, 2 * g]));
        }
    }
    policy_head(&mut specs, "policy", config, shape);
    let (v, h) = (config.value_channels, config.value_hidden);
    conv_bn(&mut specs, "value.conv", "value.bn", v, c, 1);
    linear(&mut specs, "value.fc1", h, v * shape.squares());
    linear(&mut specs, "value.fc2", WDL_LEN, h);
    if config.reply_policy_head {
        policy_head(&mut specs, "reply_policy", config, shape);
    }
    if config.material_head {
        linear(&mut specs, "material.fc", 1, h);
    }
    specs.sort();
    specs
}

/// Scalars of the whole network (saturating).
pub fn parameter_count(specs: &[ParamSpec]) -> u64 {
    specs.iter().fold(0u64, |n, s| n.saturating_add(s.numel()))
}

/// A bias-free `k`x`k` convolution `cin -> cout` and its batch norm.
fn conv_bn(specs: &mut Vec<ParamSpec>, conv: &str, bn: &str, cout: usize, cin: usize, k: usize) {
    specs.push(ParamSpec::new(format!("{conv}.weight"), &[cout, cin, k, k]));
    for part in ["weight", "bias", "running_mean", "running_var"] {
        specs.push(ParamSpec::new(format!("{bn}.{part}"), &[cout]));
    }
}

fn linear(specs: &mut Vec<ParamSpec>, name: &str, out: usize, input: usize) {
    specs.push(ParamSpec::new(format!("{name}.weight"), &[out, input]));
    specs.push(ParamSpec::new(format!("{name}.bias"), &[out]));
}

fn policy_head(specs: &mut Vec<ParamSpec>, name: &str, config: &NetConfig, shape: NetShape) {
    let p = config.policy_channels();
    conv_bn(specs, &format!("{name}.conv"), &format!("{name}.bn"), p, config.channels, 3);
    specs.push(ParamSpec::new(format!("{name}.out.weight"), &[shape.policy_planes, p, 1, 1]));
    specs.push(ParamSpec::new(format!("{name}.out.bias"), &[shape.policy_planes]));
}
