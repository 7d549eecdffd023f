//! An exponential moving average of a network's weights (`train.ema_decay`): the network
//! that checkpoints hold and self-play, evaluation and koma-usi play with, while the
//! optimiser goes on with the raw weights.
//!
//! The trainable parameters are averaged in one operation per step over the optimiser's
//! flat parameter buffer ([`crate::learning::optim::Optimizer::flat_params`]); the averaged
//! network's variables receive those values, and the live network's batch-norm
//! statistics (copied, not averaged), only when it is read ([`WeightAverage::net`]).

use model::tch::{self, Kind, Tensor};
use model::Net;

/// The averaged copy of a network being trained.
pub struct WeightAverage {
    decay: f64,
    /// The averaged network, brought up to date by [`WeightAverage::net`].
    net: Net,
    /// The averaged trainable parameters, flat in the optimiser's order (by name).
    flat: Tensor,
    /// The averaged network's trainable variables with their (offset, length) in `flat`.
    params: Vec<(Tensor, i64, i64)>,
    /// (averaged network's buffer, live network's buffer): batch-norm statistics.
    buffers: Vec<(Tensor, Tensor)>,
}

/// The decay of the update after step `step` (0-based): `min(decay, (1 + step) / (10 +
/// step))`, TensorFlow's `ExponentialMovingAverage` with `num_updates`, so that the
/// first checkpoints follow the weights instead of holding on to the random init.
pub fn decay_at(decay: f64, step: u64) -> f64 {
    decay.min((1.0 + step as f64) / (10.0 + step as f64))
}

impl WeightAverage {
    /// An average that starts at `live`'s weights; `live_flat` is the optimiser's flat
    /// buffer of `live`'s trainable parameters.
    pub fn new(live: &Net, live_flat: &Tensor, decay: f64) -> WeightAverage {
        let mut net =
            Net::new(live.config(), live.shape(), 0, live.device()).expect("a network's own configuration builds");
        net.var_store_mut().copy(live.var_store()).expect("same variables");
        let flat = tch::no_grad(|| live_flat.detach().to_kind(Kind::Float).copy());
        let live_vars = live.var_store().variables();
        let mut vars: Vec<(String, Tensor)> = net.var_store().variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let (mut params, mut buffers, mut offset) = (Vec::new(), Vec::new(), 0i64);
        for (name, t) in vars {
            if t.requires_grad() {
                let n = t.numel() as i64;
                params.push((t, offset, n));
                offset += n;
            } else {
                buffers.push((t, live_vars[&name].shallow_clone()));
            }
        }
        assert_eq!(offset, flat.numel() as i64, "the flat buffer holds every trainable parameter");
        WeightAverage { decay, net, flat, params, buffers }
    }

    /// Moves the average towards `live_flat` after step `step` ([`decay_at`]), unless
    /// `skip` (a device bool scalar: the step was not applied). Nothing waits for the
    /// device.
    pub fn update(&mut self, live_flat: &Tensor, step: u64, skip: &Tensor) {
        let d = decay_at(self.decay, step);
        tch::no_grad(|| {
            let weight = skip.logical_not().to_kind(Kind::Float) * (1.0 - d);
            let _ = self.flat.lerp_tensor_(live_flat, &weight);
        });
    }

    /// The averaged network: the average's weights and the live network's batch-norm
    /// statistics.
    pub fn net(&self) -> &Net {
        tch::no_grad(|| {
            for (var, offset, n) in &self.params {
                let mut var = var.shallow_clone();
                var.copy_(&self.flat.narrow(0, *offset, *n).view(var.size().as_slice()));
            }
            for (mine, live) in &self.buffers {
                let mut mine = mine.shallow_clone();
                mine.copy_(live);
            }
        });
        &self.net
    }
}
