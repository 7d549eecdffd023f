//! The learner: a network, its optimiser, and one training step on a minibatch.
//!
//! Loss = `policy_weight` x policy cross-entropy against the search policy (only samples
//! with a full search carry a policy target) + `value_weight` x cross-entropy of the
//! win/draw/loss head against the game result (optionally mixed with the search's root
//! value; only samples whose game result is known carry a value target); weight decay is
//! applied by the optimiser. On CUDA with `precision = auto|f16`
//! the forward and backward passes run under f16 autocast with dynamic loss scaling
//! (steps whose gradients overflow are skipped and the scale halves). A loss that is not
//! finite, or a gradient norm that is not finite without f16 to blame, stops training
//! ([`NonFiniteLoss`]).

use model::tch::{self, Device, Kind, Tensor};
use model::Net;

use crate::config::{TrainConfig, TrainPrecision};
use crate::optim::Optimizer;
use crate::replay::Batch;

/// What one step measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Weighted total (policy + value).
    pub loss: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    /// Share of policy-target samples whose most likely move is the target's.
    pub policy_accuracy: f64,
    /// Mean squared error of the expected score (win - loss) against the target's
    /// (samples with a value target).
    pub value_mse: f64,
    /// Gradient norm before clipping.
    pub grad_norm: f64,
    pub lr: f64,
    /// The step was skipped (f16 gradient overflow).
    pub skipped: bool,
}

impl StepStats {
    /// Running mean helper: adds `o` with weight 1 to a sum.
    pub fn add(&mut self, o: &StepStats) {
        self.loss += o.loss;
        self.policy_loss += o.policy_loss;
        self.value_loss += o.value_loss;
        self.policy_accuracy += o.policy_accuracy;
        self.value_mse += o.value_mse;
        self.grad_norm += o.grad_norm;
        self.lr = o.lr;
    }

    pub fn scaled(&self, k: f64) -> StepStats {
        StepStats {
            loss: self.loss * k,
            policy_loss: self.policy_loss * k,
            value_loss: self.value_loss * k,
            policy_accuracy: self.policy_accuracy * k,
            value_mse: self.value_mse * k,
            grad_norm: self.grad_norm * k,
            lr: self.lr,
            skipped: false,
        }
    }
}

/// A training step whose loss or gradient is not finite: the run must stop (the weights
/// of the last checkpoint are the last good ones).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "training diverged at step {step}: the {what} is {value} (not finite); stopped without saving, \
     the last checkpoint holds the last good weights"
)]
pub struct NonFiniteLoss {
    /// The optimiser step that failed (0-based: the step count before it).
    pub step: u64,
    /// `loss`, `policy loss`, `value loss` or `gradient norm`.
    pub what: &'static str,
    pub value: f64,
}

/// A network being trained.
pub struct Learner {
    pub net: Net,
    pub opt: Optimizer,
    cfg: TrainConfig,
    device: Device,
    autocast: bool,
    loss_scale: f64,
    good_steps: u64,
    /// Optimiser steps taken (the run's global step).
    pub step: u64,
}

impl Learner {
    pub fn new(net: Net, cfg: &TrainConfig, step: u64) -> Learner {
        let device = net.device();
        let opt = Optimizer::new(net.var_store(), cfg);
        let autocast = device.is_cuda() && matches!(cfg.precision, TrainPrecision::Auto | TrainPrecision::F16);
        Learner { net, opt, cfg: cfg.clone(), device, autocast, loss_scale: 65536.0, good_steps: 0, step }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    pub fn config(&self) -> &TrainConfig {
        &self.cfg
    }

    /// Replaces the training settings (a resumed run may change the learning rate).
    pub fn set_config(&mut self, cfg: &TrainConfig) {
        self.cfg = cfg.clone();
    }

    /// Inputs, policy target, policy mask, WDL target, value mask.
    fn tensors(&self, b: &Batch) -> (Tensor, Tensor, Tensor, Tensor, Tensor) {
        let s = self.net.shape();
        let n = b.n as i64;
        let d = self.device;
        let xs = Tensor::from_slice(&b.inputs)
            .view([n, s.input_planes as i64, s.board_height as i64, s.board_width as i64])
            .to_device(d);
        let pt = Tensor::from_slice(&b.policy).view([n, s.policy_len() as i64]).to_device(d);
        let mask = Tensor::from_slice(&b.policy_mask).to_device(d);
        let wdl = Tensor::from_slice(&b.wdl).view([n, 3]).to_device(d);
        let value_mask = Tensor::from_slice(&b.value_mask).to_device(d);
        (xs, pt, mask, wdl, value_mask)
    }

    /// Losses and metrics of `b` (tensors); `train` selects batch-norm mode.
    fn losses(&self, b: &Batch, train: bool) -> (Tensor, Tensor, Tensor, Tensor, Tensor) {
        let (xs, pt, mask, wdl_t, vmask) = self.tensors(b);
        let (logits, wdl_logits) = self.net.forward_t(&xs, train);
        let logits = logits.to_kind(Kind::Float);
        let wdl_logits = wdl_logits.to_kind(Kind::Float);
        let logp = logits.log_softmax(-1, Kind::Float);
        let per = -(&pt * &logp).sum_dim_intlist([1i64].as_slice(), false, Kind::Float);
        let msum = mask.sum(Kind::Float).clamp_min(1.0);
        let policy_loss = (&per * &mask).sum(Kind::Float) / &msum;
        let vlogp = wdl_logits.log_softmax(-1, Kind::Float);
        let vper = -(&wdl_t * &vlogp).sum_dim_intlist([1i64].as_slice(), false, Kind::Float);
        let vsum = vmask.sum(Kind::Float).clamp_min(1.0);
        let value_loss = (&vper * &vmask).sum(Kind::Float) / &vsum;
        let (acc, mse) = tch::no_grad(|| {
            let hit = logits.argmax(-1, false).eq_tensor(&pt.argmax(-1, false)).to_kind(Kind::Float);
            let acc = (hit * &mask).sum(Kind::Float) / &msum;
            let pv = vlogp.exp();
            let pred = pv.select(1, 0) - pv.select(1, 2);
            let tgt = wdl_t.select(1, 0) - wdl_t.select(1, 2);
            let mse = ((pred - tgt).square() * &vmask).sum(Kind::Float) / &vsum;
            (acc, mse)
        });
        let total = &policy_loss * self.cfg.policy_weight + &value_loss * self.cfg.value_weight;
        (total, policy_loss, value_loss, acc, mse)
    }

    /// One optimiser step on `b`. A loss that is not finite is an error (no step is
    /// taken); so is a gradient norm that is not finite, unless f16 autocast may explain it
    /// (then the step is skipped and the loss scale halves, down to 1).
    pub fn train_step(&mut self, b: &Batch) -> Result<StepStats, NonFiniteLoss> {
        let lr = self.cfg.lr_at(self.step);
        self.opt.zero_grad();
        let autocast = self.autocast;
        let (total, pl, vl, acc, mse) = tch::autocast(autocast, || self.losses(b, true));
        let scale = if autocast { self.loss_scale } else { 1.0 };
        (&total * scale).backward();
        if autocast {
            self.opt.scale_grads(1.0 / scale);
        }
        let norm = self.opt.grad_norm();
        let mut stats = StepStats {
            loss: total.double_value(&[]),
            policy_loss: pl.double_value(&[]),
            value_loss: vl.double_value(&[]),
            policy_accuracy: acc.double_value(&[]),
            value_mse: mse.double_value(&[]),
            grad_norm: norm,
            lr,
            skipped: false,
        };
        let fail = |what, value| NonFiniteLoss { step: self.step, what, value };
        for (what, value) in
            [("loss", stats.loss), ("policy loss", stats.policy_loss), ("value loss", stats.value_loss)]
        {
            if !value.is_finite() {
                self.opt.zero_grad();
                return Err(fail(what, value));
            }
        }
        if !norm.is_finite() {
            self.opt.zero_grad();
            // f16 overflow: skip, lower the scale. In f32, or at scale 1, it is no overflow.
            if !autocast || self.loss_scale <= 1.0 {
                return Err(fail("gradient norm", norm));
            }
            self.loss_scale = (self.loss_scale / 2.0).max(1.0);
            self.good_steps = 0;
            stats.skipped = true;
            return Ok(stats);
        }
        self.opt.clip(norm, self.cfg.grad_clip);
        self.opt.step(lr);
        self.opt.zero_grad();
        self.step += 1;
        if autocast {
            self.good_steps += 1;
            if self.good_steps >= 2000 {
                self.loss_scale = (self.loss_scale * 2.0).min(16_777_216.0);
                self.good_steps = 0;
            }
        }
        Ok(stats)
    }

    /// Losses of `b` without training (evaluation-mode batch norm).
    pub fn validate(&self, b: &Batch) -> StepStats {
        tch::no_grad(|| {
            let (total, pl, vl, acc, mse) = self.losses(b, false);
            StepStats {
                loss: total.double_value(&[]),
                policy_loss: pl.double_value(&[]),
                value_loss: vl.double_value(&[]),
                policy_accuracy: acc.double_value(&[]),
                value_mse: mse.double_value(&[]),
                grad_norm: 0.0,
                lr: self.cfg.lr_at(self.step),
                skipped: false,
            }
        })
    }
}
