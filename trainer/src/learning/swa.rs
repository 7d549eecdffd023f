//! Stochastic weight averaging (`train.swa_share`): the plain mean of the weights at the
//! checkpoints of a run's last stretch, which the run's last checkpoint holds.
//!
//! Izmailov et al., "Averaging Weights Leads to Wider Optima and Better Generalization"
//! (2018); dlshogi plays an averaged network this way. Batch-norm statistics are averaged
//! with the weights (SWA proper recomputes them with a pass over the data; the mean of
//! nearby snapshots' statistics served as well in koma's measurement, docs/strength.md).
//! The sums live on the CPU in f64, whatever the network's device and precision, so that
//! a long stretch costs no device memory and loses no digits.

use model::tch::{self, Device, Kind, Tensor};
use model::Net;

/// The running sum of a network's snapshots.
#[derive(Default)]
pub struct SnapshotAverage {
    /// Every variable (trainable weights and batch-norm statistics) by name, summed.
    sums: Vec<(String, Tensor)>,
    count: usize,
    first_step: Option<u64>,
    last_step: Option<u64>,
}

impl SnapshotAverage {
    /// Adds `net`'s weights at optimiser step `step`; false (nothing added) if a snapshot
    /// of that step is already in.
    pub fn add(&mut self, net: &Net, step: u64) -> bool {
        if self.last_step == Some(step) {
            return false;
        }
        let mut vars: Vec<(String, Tensor)> = net.var_store().variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        tch::no_grad(|| {
            let values = vars.into_iter().map(|(name, t)| (name, t.to_device(Device::Cpu).to_kind(Kind::Double)));
            if self.sums.is_empty() {
                self.sums = values.collect();
            } else {
                for ((name, sum), (other, t)) in self.sums.iter_mut().zip(values) {
                    debug_assert_eq!(*name, other, "snapshots of one network");
                    *sum += t;
                }
            }
        });
        self.count += 1;
        self.first_step.get_or_insert(step);
        self.last_step = Some(step);
        true
    }

    /// Snapshots taken.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The step of the first snapshot, if any.
    pub fn first_step(&self) -> Option<u64> {
        self.first_step
    }

    /// A network shaped like `like` (its device and precision) holding the mean of the
    /// snapshots; none before the first.
    pub fn mean(&self, like: &Net) -> Option<Net> {
        if self.count == 0 {
            return None;
        }
        // The sums hold every variable, so the new network's initial values are all
        // replaced.
        let net =
            Net::new(like.config(), like.shape(), 0, like.device()).expect("a network's own configuration builds");
        let vars = net.var_store().variables();
        tch::no_grad(|| {
            for (name, sum) in &self.sums {
                let mut var = vars[name].shallow_clone();
                let mean = sum / self.count as f64;
                var.copy_(&mean.to_kind(var.kind()).to_device(var.device()));
            }
        });
        Some(net)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::encoding::Encoder;
    use model::NetConfig;
    use rules::Variant;

    fn values(net: &Net) -> Vec<(String, Vec<f64>)> {
        let mut v: Vec<_> = net
            .var_store()
            .variables()
            .into_iter()
            .map(|(n, t)| (n, Vec::<f64>::try_from(t.to_kind(Kind::Double).flatten(0, -1)).unwrap()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    fn net(seed: u64) -> Net {
        let cfg = NetConfig::tiny();
        let net = Net::new(&cfg, Encoder::for_net(Variant::Shogi, &cfg).net_shape(), seed, Device::Cpu).unwrap();
        // Batch-norm statistics that differ between the snapshots, so that their mean is
        // tested too.
        tch::no_grad(|| {
            for (name, t) in net.var_store().variables() {
                if name.ends_with("running_mean") {
                    let mut t = t.shallow_clone();
                    let _ = t.fill_(seed as f64);
                }
            }
        });
        net
    }

    #[test]
    fn the_mean_is_the_average_of_every_variable() {
        let (a, b, c) = (net(1), net(2), net(3));
        let mut avg = SnapshotAverage::default();
        assert!(avg.mean(&a).is_none(), "no snapshot, no mean");
        assert!(avg.add(&a, 10));
        assert!(!avg.add(&b, 10), "a step is taken once");
        assert!(avg.add(&b, 20) && avg.add(&c, 30));
        assert_eq!((avg.count(), avg.first_step()), (3, Some(10)));
        let mean = values(&avg.mean(&a).unwrap());
        let (va, vb, vc) = (values(&a), values(&b), values(&c));
        assert!(mean.iter().any(|(n, _)| n.ends_with("running_mean")), "batch-norm statistics are variables");
        for (i, (name, m)) in mean.iter().enumerate() {
            for (j, x) in m.iter().enumerate() {
                let want = (va[i].1[j] + vb[i].1[j] + vc[i].1[j]) / 3.0;
                assert!((x - want).abs() < 1e-6, "{name}[{j}]: {x} != {want}");
            }
        }
        assert_ne!(values(&avg.mean(&a).unwrap()), va, "the mean is not the first snapshot");
    }
}
