//! A network being trained ([`NetTrainer`]): the network, its optimiser, and one training step on a minibatch.
//!
//! Loss = `policy_weight` x policy cross-entropy against the search policy (only samples
//! with a full search carry a policy target) + `value_weight` x cross-entropy of the
//! win/draw/loss head against the game result (optionally mixed with the search's root
//! value; only samples whose game result is known carry a value target), and for a network
//! with the training-only heads, `reply_policy_weight` x the reply head's cross-entropy
//! against the next position's policy and `material_head_weight` x the material head's
//! squared error against the squashed final material (each over the samples that have
//! that target); weight decay is applied by the optimiser. On CUDA with `precision = auto|f16`
//! the forward and backward passes run under f16 autocast with dynamic loss scaling
//! (steps whose gradients overflow are skipped and the scale halves). With `precision =
//! bf16` (any device, the CPU included) they run on a bf16 copy of the network whose
//! gradients the optimiser applies to the f32 weights ([`LowPrecisionCopy`]). A loss that is not
//! finite, or a gradient norm that is not finite without f16 to blame, stops training
//! ([`NonFiniteLoss`]).
//!
//! Nothing in a step waits for the device: the gradient norm, clipping, the decision to
//! skip a step, the loss scale and the running sums of the statistics all stay on the
//! device ([`NetTrainer::train_step_deferred`]), and [`NetTrainer::take_stats`] reads them in
//! one transfer, once per log interval (a non-finite step is reported then, naming its
//! step; its update was not applied). [`NetTrainer::train_step`] is the same step followed
//! by that read (one wait per step instead of six).
//!
//! With `train.ema_decay` the trainer also keeps an average of the weights
//! ([`WeightAverage`]), updated after each step: [`NetTrainer::playing_net`] is the
//! network checkpoints hold and self-play plays with, and the raw weights go to the
//! optimiser state file ([`NetTrainer::save_training_state`]). With `train.swa_share` it
//! takes snapshots of the weights at the checkpoints of the run's last stretch
//! ([`SnapshotAverage`]), and at the run's end the network it plays and checkpoints
//! becomes their mean ([`NetTrainer::settle_on_snapshot_mean`]).

use model::tch::{self, Device, Kind, Tensor};
use model::Net;

use crate::config::{TrainConfig, TrainPrecision};
use crate::data::Batch;
use crate::learning::ema::WeightAverage;
use crate::learning::optim::{optim_path, OptimError, Optimizer};
use crate::learning::swa::SnapshotAverage;

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
    /// The reply head's loss (cross-entropy), for a network with that head.
    pub reply_policy_loss: Option<f64>,
    /// The material head's loss (squared error), for a network with that head.
    pub material_loss: Option<f64>,
}

/// The sum of two optional statistics (either alone when the other is absent).
fn add_optional(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
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
        self.reply_policy_loss = add_optional(self.reply_policy_loss, o.reply_policy_loss);
        self.material_loss = add_optional(self.material_loss, o.material_loss);
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
            reply_policy_loss: self.reply_policy_loss.map(|v| v * k),
            material_loss: self.material_loss.map(|v| v * k),
        }
    }
}

/// The losses and metrics of one batch (scalar tensors); the auxiliary losses for a
/// network with those heads.
struct Losses {
    total: Tensor,
    policy: Tensor,
    value: Tensor,
    accuracy: Tensor,
    value_mse: Tensor,
    reply_policy: Option<Tensor>,
    material: Option<Tensor>,
}

/// Cross-entropy of `logits` against the distributions `target`, averaged over the rows
/// whose `mask` is 1.
fn masked_cross_entropy(logits: &Tensor, target: &Tensor, mask: &Tensor) -> Tensor {
    let logp = logits.log_softmax(-1, Kind::Float);
    let per = -(target * logp).sum_dim_intlist([1i64].as_slice(), false, Kind::Float);
    (per * mask).sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0)
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
pub struct NetTrainer {
    pub net: Net,
    pub opt: Optimizer,
    cfg: TrainConfig,
    device: Device,
    autocast: bool,
    /// Device scalars: the f16 loss scale and the good steps since it last changed.
    loss_scale: Tensor,
    good_steps: Tensor,
    /// Device sums since the last read, [`STAT_COUNT`] values: loss, policy loss, value
    /// loss, accuracy, value MSE, gradient norm, reply policy loss, material loss (0
    /// without the heads) over the steps applied, then the steps applied and the steps
    /// run.
    sums: Tensor,
    /// The first step that must stop training: (step, 0 = loss / 1 = gradient norm,
    /// value), step -1 while none.
    first_bad: Tensor,
    /// The bf16 copy the passes run on (`precision = bf16`), else none.
    low: Option<LowPrecisionCopy>,
    /// Optimiser steps taken (the run's global step).
    pub step: u64,
    /// The share (0..=1) of the run's `max_minutes` spent, which a cosine learning rate
    /// follows (`TrainConfig::lr_at`); the learner keeps it current. 0 without a clock.
    pub time_spent: f64,
    /// The average of the weights (`train.ema_decay` above 0), else none.
    average: Option<WeightAverage>,
    /// Snapshots of the playing network at the checkpoints of `train.swa_share`'s stretch.
    snapshots: SnapshotAverage,
    /// Their mean, which the network plays and checkpoints once the run settles on it.
    settled: Option<Net>,
}

/// A copy of the network in a lower precision for the forward and backward passes
/// (mixed precision by hand, as libtorch's CPU autocast is not reachable from tch): the
/// optimiser keeps the f32 weights ("master weights") and applies the copy's gradients
/// to them; after each step the weights go to the copy and the copy's batch-norm
/// statistics, which its training-mode passes update, come back.
struct LowPrecisionCopy {
    net: Net,
    kind: Kind,
    /// (copy's variable, network's variable, trainable) by name.
    pairs: Vec<(Tensor, Tensor, bool)>,
}

impl LowPrecisionCopy {
    fn new(net: &Net, kind: Kind) -> LowPrecisionCopy {
        let mut copy =
            Net::new(net.config(), net.shape(), 0, net.device()).expect("a network's own configuration builds");
        copy.var_store_mut().copy(net.var_store()).expect("same variables");
        copy.var_store_mut().set_kind(kind);
        let master = net.var_store().variables();
        let pairs = copy
            .var_store()
            .variables()
            .into_iter()
            .map(|(name, t)| {
                let trainable = t.requires_grad();
                (t, master[&name].shallow_clone(), trainable)
            })
            .collect();
        LowPrecisionCopy { net: copy, kind, pairs }
    }

    fn zero_grad(&self) {
        for (t, _, trainable) in &self.pairs {
            if *trainable {
                let mut t = t.shallow_clone();
                t.zero_grad();
            }
        }
    }

    /// Weights to the copy, batch-norm statistics from it.
    fn sync(&self) {
        tch::no_grad(|| {
            for (low, master, trainable) in &self.pairs {
                let (mut to, from) =
                    if *trainable { (low.shallow_clone(), master) } else { (master.shallow_clone(), low) };
                to.copy_(from);
            }
        });
    }
}

/// Statistics summed per step on the device (see [`NetTrainer`]'s `sums`).
const STAT_COUNT: i64 = 10;
/// The loss scale grows after this many good steps in a row (f16 autocast).
const SCALE_GROWTH_INTERVAL: f64 = 2000.0;

impl NetTrainer {
    pub fn new(net: Net, cfg: &TrainConfig, step: u64) -> NetTrainer {
        let device = net.device();
        let opt = Optimizer::new(net.var_store(), cfg);
        let autocast = device.is_cuda() && matches!(cfg.precision, TrainPrecision::Auto | TrainPrecision::F16);
        if device.is_cuda() {
            // Training batches have one fixed shape (batch_size): cuDNN tunes it once.
            tch::Cuda::cudnn_set_benchmark(true);
        }
        let scalar = |v: f64| Tensor::from_slice(&[v as f32]).reshape([] as [i64; 0]).to_device(device);
        let loss_scale = scalar(if autocast { 65536.0 } else { 1.0 });
        let low = (cfg.precision == TrainPrecision::Bf16).then(|| LowPrecisionCopy::new(&net, Kind::BFloat16));
        let average = (cfg.ema_decay > 0.0).then(|| WeightAverage::new(&net, opt.flat_params(), cfg.ema_decay));
        NetTrainer {
            net,
            opt,
            cfg: cfg.clone(),
            device,
            autocast,
            loss_scale,
            good_steps: scalar(0.0),
            sums: Tensor::zeros([STAT_COUNT], (Kind::Double, device)),
            first_bad: Tensor::from_slice(&[-1.0f64, 0.0, 0.0]).to_device(device),
            low,
            step,
            average,
            time_spent: 0.0,
            snapshots: SnapshotAverage::default(),
            settled: None,
        }
    }

    /// The network to play with and to checkpoint: the mean of the snapshots once the run
    /// settled on it (`train.swa_share`), else the average of the weights with
    /// `train.ema_decay`, else the network being trained.
    pub fn playing_net(&self) -> &Net {
        if let Some(settled) = &self.settled {
            return settled;
        }
        self.average.as_ref().map_or(&self.net, WeightAverage::net)
    }

    /// Adds the playing network of the current step to the snapshots
    /// (`train.swa_share`); nothing if this step's is in already.
    pub fn take_snapshot(&mut self) {
        let net = self.average.as_ref().map_or(&self.net, WeightAverage::net);
        self.snapshots.add(net, self.step);
    }

    /// From now on the network played and checkpointed is the mean of the snapshots:
    /// `Some((snapshots, first snapshot's step))`, or none (nothing changes) without any.
    pub fn settle_on_snapshot_mean(&mut self) -> Option<(usize, u64)> {
        self.settled = Some(self.snapshots.mean(&self.net)?);
        Some((self.snapshots.count(), self.snapshots.first_step()?))
    }

    /// Writes the optimiser state of checkpoint `stem` ([`optim_path`]), with the raw
    /// weights when the checkpoint holds an average of them.
    pub fn save_training_state(&self, stem: &std::path::Path) -> Result<(), OptimError> {
        if self.average.is_some() || self.settled.is_some() {
            self.opt.save_with_weights(&optim_path(stem))
        } else {
            self.opt.save(&optim_path(stem))
        }
    }

    /// Reads the optimiser state of checkpoint `stem`, into a trainer built on that
    /// checkpoint's network: raw weights in it replace the network's (the checkpoint's
    /// average stays the average). `Ok(false)`: the optimiser kind changed, its state
    /// starts fresh (the raw weights are still restored).
    pub fn load_training_state(&mut self, stem: &std::path::Path) -> Result<bool, OptimError> {
        let same_kind = self.opt.load(&optim_path(stem))?;
        if let Some(low) = &self.low {
            low.sync();
        }
        Ok(same_kind)
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
        let pl = s.policy_len() as i64;
        let pt = if b.policy.is_empty() && n > 0 {
            // Sparse targets: a few pairs per sample cross to the device, the dense target
            // is made there.
            let index = Tensor::from_slice(&b.policy_index).to_device(d);
            let value = Tensor::from_slice(&b.policy_value).to_device(d);
            Tensor::zeros([n * pl], (Kind::Float, d)).index_put(&[Some(index)], &value, false).view([n, pl])
        } else {
            Tensor::from_slice(&b.policy).view([n, pl]).to_device(d)
        };
        let mask = Tensor::from_slice(&b.policy_mask).to_device(d);
        let wdl = Tensor::from_slice(&b.wdl).view([n, 3]).to_device(d);
        let value_mask = Tensor::from_slice(&b.value_mask).to_device(d);
        (xs, pt, mask, wdl, value_mask)
    }

    /// Losses and metrics of `b`; `train` selects batch-norm mode and, with
    /// `precision = bf16`, the bf16 copy of the network.
    fn losses(&self, b: &Batch, train: bool) -> Losses {
        let (xs, pt, mask, wdl_t, vmask) = self.tensors(b);
        let out = match &self.low {
            Some(low) if train => low.net.forward_heads(&xs.to_kind(low.kind), true),
            _ => self.net.forward_heads(&xs, train),
        };
        let logits = out.policy.to_kind(Kind::Float);
        let wdl_logits = out.wdl.to_kind(Kind::Float);
        let policy_loss = masked_cross_entropy(&logits, &pt, &mask);
        let msum = mask.sum(Kind::Float).clamp_min(1.0);
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
        let mut total = &policy_loss * self.cfg.policy_weight + &value_loss * self.cfg.value_weight;
        let reply_policy = out.reply_policy.map(|logits| {
            let (target, mask) = self.reply_targets(b);
            masked_cross_entropy(&logits.to_kind(Kind::Float), &target, &mask)
        });
        if let Some(l) = &reply_policy {
            total += l * self.cfg.reply_policy_weight;
        }
        let material = out.material.map(|pred| {
            let target = Tensor::from_slice(&b.material).to_device(self.device);
            let mask = Tensor::from_slice(&b.material_mask).to_device(self.device);
            let err = (pred.to_kind(Kind::Float) - target).square();
            (err * &mask).sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0)
        });
        if let Some(l) = &material {
            total += l * self.cfg.material_head_weight;
        }
        Losses { total, policy: policy_loss, value: value_loss, accuracy: acc, value_mse: mse, reply_policy, material }
    }

    /// The dense reply policy targets of `b` (made on the device from its sparse pairs)
    /// and their mask.
    fn reply_targets(&self, b: &Batch) -> (Tensor, Tensor) {
        let (n, pl, d) = (b.n as i64, self.net.shape().policy_len() as i64, self.device);
        let index = Tensor::from_slice(&b.reply_index).to_device(d);
        let value = Tensor::from_slice(&b.reply_value).to_device(d);
        let target = Tensor::zeros([n * pl], (Kind::Float, d)).index_put(&[Some(index)], &value, false).view([n, pl]);
        (target, Tensor::from_slice(&b.reply_mask).to_device(d))
    }

    /// The learning rate of the next step.
    pub fn lr(&self) -> f64 {
        self.cfg.lr_at(self.step, self.time_spent)
    }

    /// One optimiser step on `b`, then a read of its statistics (one wait for the device).
    /// A loss that is not finite is an error (no step is taken); so is a gradient norm
    /// that is not finite, unless f16 autocast may explain it (then the step is skipped,
    /// `skipped` is set, and the loss scale halves, down to 1).
    pub fn train_step(&mut self, b: &Batch) -> Result<StepStats, NonFiniteLoss> {
        let before = self.step;
        self.train_step_deferred(b);
        self.step = before;
        let stats = self.take_stats()?;
        match stats {
            Some(st) if !st.skipped => {
                self.step += 1;
                Ok(st)
            }
            _ => Ok(StepStats { lr: self.lr(), skipped: true, ..StepStats::default() }),
        }
    }

    /// One optimiser step on `b` without waiting for the device: its statistics are
    /// added to the sums [`NetTrainer::take_stats`] reads; a step that must stop training
    /// is remembered there (and not applied). Counts the step.
    pub fn train_step_deferred(&mut self, b: &Batch) {
        let lr = self.lr();
        self.opt.zero_grad();
        if let Some(low) = &self.low {
            low.zero_grad();
        }
        let autocast = self.autocast;
        let losses = tch::autocast(autocast, || self.losses(b, true));
        let total = &losses.total;
        (total * &self.loss_scale).backward();
        match &self.low {
            Some(low) => self.opt.load_grads_from(low.net.var_store()),
            None => self.opt.gather_grads(),
        }
        tch::no_grad(|| {
            let norm = self.opt.grad_norm() / &self.loss_scale;
            let loss_bad = total.isfinite().logical_not();
            let bad = norm.isfinite().logical_not().logical_or(&loss_bad);
            // Loss-scale removal and clipping as one factor on the gradients.
            let mut factor = self.loss_scale.reciprocal();
            if self.cfg.grad_clip > 0.0 {
                factor *= ((&norm + 1e-6).reciprocal() * self.cfg.grad_clip).clamp_max(1.0);
            }
            self.opt.step_on_device(lr, &factor, &bad);
            // In f32, or at loss scale 1, a non-finite step is no overflow: it stops training.
            let fatal = if autocast { bad.logical_and(&self.loss_scale.le(1.0)) } else { bad.shallow_clone() };
            let what = loss_bad.logical_not().to_kind(Kind::Double);
            let value = total.to_kind(Kind::Double).where_self(&loss_bad, &norm.to_kind(Kind::Double));
            let this =
                Tensor::stack(&[Tensor::full([], self.step as f64, (Kind::Double, self.device)), what, value], 0);
            let first = fatal.logical_and(&self.first_bad.get(0).lt(0.0));
            self.first_bad = this.where_self(&first, &self.first_bad);
            if autocast {
                self.update_loss_scale(&bad);
            }
            if let Some(average) = &mut self.average {
                average.update(self.opt.flat_params(), self.step, &bad);
            }
            let kept = bad.logical_not();
            let zero = total.zeros_like();
            let reply = losses.reply_policy.as_ref().unwrap_or(&zero);
            let material = losses.material.as_ref().unwrap_or(&zero);
            let stats = Tensor::stack(
                &[total, &losses.policy, &losses.value, &losses.accuracy, &losses.value_mse, &norm, reply, material],
                0,
            )
            .to_kind(Kind::Double);
            let applied = stats.where_self(&kept, &stats.zeros_like());
            let counts = Tensor::stack(&[kept.to_kind(Kind::Double), kept.ones_like().to_kind(Kind::Double)], 0);
            let _ = self.sums.g_add_(&Tensor::cat(&[applied, counts], 0));
        });
        if let Some(low) = &self.low {
            low.sync();
        }
        self.step += 1;
    }

    /// Halves the loss scale after an overflow (not below 1) and doubles it after
    /// [`SCALE_GROWTH_INTERVAL`] good steps (at most 2^24), on the device.
    fn update_loss_scale(&mut self, bad: &Tensor) {
        let halved = (&self.loss_scale * 0.5).clamp_min(1.0);
        self.loss_scale = halved.where_self(bad, &self.loss_scale);
        let good = (&self.good_steps + 1.0).where_self(&bad.logical_not(), &self.good_steps.zeros_like());
        let grow = good.ge(SCALE_GROWTH_INTERVAL);
        self.loss_scale = (&self.loss_scale * 2.0).clamp_max(16_777_216.0).where_self(&grow, &self.loss_scale);
        self.good_steps = good.zeros_like().where_self(&grow, &good);
    }

    /// Reads the statistics summed since the last read (one transfer) and clears them:
    /// their means over the steps applied (`skipped` when every step was skipped), or
    /// `None` when no step ran. A step that had to stop training is the error.
    pub fn take_stats(&mut self) -> Result<Option<StepStats>, NonFiniteLoss> {
        let all = Tensor::cat(&[&self.sums, &self.first_bad], 0).to_device(Device::Cpu);
        let v: Vec<f64> = Vec::<f64>::try_from(&all).expect("f64 statistics");
        let _ = self.sums.zero_();
        if v[10] >= 0.0 {
            let _ = self.first_bad.get(0).fill_(-1.0);
            let what = if v[11] == 0.0 { "loss" } else { "gradient norm" };
            return Err(NonFiniteLoss { step: v[10] as u64, what, value: v[12] });
        }
        let (applied, run) = (v[8], v[9]);
        if run == 0.0 {
            return Ok(None);
        }
        let k = 1.0 / applied.max(1.0);
        Ok(Some(StepStats {
            loss: v[0] * k,
            policy_loss: v[1] * k,
            value_loss: v[2] * k,
            policy_accuracy: v[3] * k,
            value_mse: v[4] * k,
            grad_norm: v[5] * k,
            lr: self.lr(),
            skipped: applied == 0.0,
            reply_policy_loss: self.net.config().reply_policy_head.then_some(v[6] * k),
            material_loss: self.net.config().material_head.then_some(v[7] * k),
        }))
    }

    /// Losses of `b` without training (evaluation-mode batch norm).
    pub fn validate(&self, b: &Batch) -> StepStats {
        tch::no_grad(|| {
            let l = self.losses(b, false);
            StepStats {
                loss: l.total.double_value(&[]),
                policy_loss: l.policy.double_value(&[]),
                value_loss: l.value.double_value(&[]),
                policy_accuracy: l.accuracy.double_value(&[]),
                value_mse: l.value_mse.double_value(&[]),
                grad_norm: 0.0,
                lr: self.lr(),
                skipped: false,
                reply_policy_loss: l.reply_policy.map(|t| t.double_value(&[])),
                material_loss: l.material.map(|t| t.double_value(&[])),
            }
        })
    }
}
