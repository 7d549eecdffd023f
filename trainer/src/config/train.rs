//! The `[train]` table ([`TrainConfig`]): the optimiser, the replay window, checkpoints
//! and the limits of a run.

use serde::{Deserialize, Serialize};

/// Which optimiser updates the weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// SGD with momentum (Nesterov optional), L2 weight decay added to the gradient.
    /// AlphaZero, KataGo, Leela Chess Zero.
    Sgd,
    /// Adam with decoupled weight decay (Loshchilov & Hutter). Forgiving about the
    /// learning rate; good for small runs.
    Adamw,
}

/// Numeric precision of the training forward/backward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainPrecision {
    /// f16 autocast with dynamic loss scaling on CUDA, f32 on the CPU.
    Auto,
    /// Always f32.
    F32,
    /// f16 autocast with dynamic loss scaling (CUDA only; f32 on the CPU).
    F16,
    /// Forward and backward passes in bf16 on a bf16 copy of the network, the update in
    /// f32 on the f32 weights (copied back after each step), on any device: the CPU's
    /// mixed precision (libtorch's CPU autocast is not reachable from tch). bf16 keeps
    /// f32's range, so no loss scaling.
    Bf16,
}

impl TrainPrecision {
    /// The precision of inference (self-play, evaluation games) that goes with it: `auto`
    /// is f16 on CUDA and f32 on the CPU, `f32` and `f16` are themselves.
    pub fn inference(self) -> model::Precision {
        match self {
            TrainPrecision::Auto => model::Precision::Auto,
            TrainPrecision::F32 => model::Precision::F32,
            TrainPrecision::F16 => model::Precision::F16,
            TrainPrecision::Bf16 => model::Precision::Bf16,
        }
    }
}

/// Training settings (`[train]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// `sgd` or `adamw`. Default `sgd`. AlphaZero, KataGo, lc0: SGD with momentum.
    pub optimizer: OptimizerKind,
    /// Peak learning rate (after warm-up). Default 0.02 (SGD). AlphaZero: 0.2 at batch
    /// 4096 (0.02 per 512 positions), stepped down to 0.02 and 0.002; KataGo: 6e-5 per
    /// sample (about 0.015 at batch 256); AdamW typical: 1e-3. Valid: (0, 10].
    pub lr: f64,
    /// Linear warm-up from 0 to `lr` over this many steps. Default 500. KataGo: a slow
    /// start over the first ~5M samples; lc0: 250 steps. Valid: 0..=1e12.
    pub warmup_steps: u64,
    /// After warm-up: `constant`, or `cosine` decay to `lr * lr_final_fraction` at
    /// `max_steps` or at `max_minutes`, whichever budget is spent first (needs one of
    /// them; a clock-limited run such as the CPU demos decays over its wall time).
    /// Default `constant` (self-play runs have no end).
    pub lr_schedule: LrSchedule,
    /// See `lr_schedule`. Default 0.1. Valid: [0, 1].
    pub lr_final_fraction: f64,
    /// SGD momentum (also Adam's beta1). Default 0.9. AlphaZero, KataGo: 0.9. Valid: [0, 1).
    pub momentum: f64,
    /// Nesterov momentum for SGD. Default true. lc0: Nesterov.
    pub nesterov: bool,
    /// Adam's beta2. Default 0.999. Valid: [0, 1).
    pub beta2: f64,
    /// Adam's epsilon. Default 1e-8. Valid: (0, 1].
    pub adam_eps: f64,
    /// Weight decay of convolution and linear weights (not biases or batch norm):
    /// L2 added to the gradient for SGD, decoupled for AdamW. Default 1e-4.
    /// AlphaZero: 1e-4 (L2 c); KataGo: 3e-5 (per sample); AdamW typical: 0.01.
    /// Valid: [0, 1].
    pub weight_decay: f64,
    /// Clip the global gradient norm to this; 0 disables. Default 10. lc0: 10000 (off
    /// in effect); KataGo: clips per layer group. Valid: [0, 1e9].
    pub grad_clip: f64,
    /// Positions per minibatch. Default 256. AlphaZero: 4096; KataGo: 256; dlshogi: 1024.
    /// Valid: 1..=65536.
    pub batch_size: usize,
    /// Replay window: the newest this many positions are sampled from (with
    /// `replay_window_alpha`, the size it starts at and grows from, KataGo's `c`).
    /// Default 500000. AlphaZero: the last 500000 games (about 50M positions); KataGo:
    /// grows with the run (~250k to 22M samples). Valid: batch_size..=1e9.
    pub replay_window: usize,
    /// Positions generated before the first optimiser step. Default 10000.
    /// Valid: 0..=replay_window.
    pub min_replay: usize,
    /// Positions trained per position generated (each step trains `batch_size`). The
    /// learner waits for self-play above this ratio. Default 4.0. KataGo: ~4 (each
    /// sample seen ~4 times on average); AlphaZero: about 1. Valid: (0, 1000].
    pub train_ratio: f64,
    /// Weight of the policy loss. Default 1.0. Valid: [0, 1000]; not both weights 0.
    pub policy_weight: f64,
    /// Weight of the value loss (cross-entropy against win/draw/loss). Default 1.0.
    /// KataGo: 1.5 (later 0.6 x several value heads). Valid: [0, 1000].
    pub value_weight: f64,
    /// Weight of the opponent-reply policy loss: cross-entropy of the network's reply
    /// head (`model.reply_policy_head`) against the next position's policy target
    /// (`dataio::AuxTargets::reply_policy`; samples without one are masked). Read only
    /// when the network has the head. Default 0.15. KataGo: 0.15 (Wu 2019, 4.1).
    /// Valid: [0, 1000].
    pub reply_policy_weight: f64,
    /// Weight of the final-material loss: squared error of the network's material head
    /// (`model.material_head`) against `tanh(final material / 10)` of the sample's game
    /// (`dataio::AuxTargets::final_material`; samples without one are masked). Read only
    /// when the network has the head. Default 0.1 (of the order of KataGo's auxiliary
    /// score weights). Valid: [0, 1000].
    pub material_head_weight: f64,
    /// Value target: `(1 - q_mix) * game result + q_mix * root WDL of the search`.
    /// Default 0.0 (pure result, AlphaZero). KataGo mixes in search values; some shogi
    /// runs use 0.5 (dlshogi's "value = (result + Q) / 2"). Valid: [0, 1].
    pub q_mix: f64,
    /// Weight of a material prior in the value target: the side to move's material
    /// balance from the rules' movement tables (`rules::material_balance`, pawn 1, rook
    /// 10) as a win probability, `sigmoid(balance / material_scale)`. Not AlphaZero's zero knowledge:
    /// it hands a network that has seen a few thousand near-random games what a piece is
    /// worth, which those games' results cannot teach in minutes (a 25-minute CPU run
    /// without it valued a rook up at less than the start position). Default 0.0; the
    /// CPU demo preset uses it (docs/strength.md). Valid: [0, 1], with q_mix + material_mix
    /// at most 1.
    pub material_mix: f64,
    /// Material units per logistic unit of the material prior, `sigmoid(balance /
    /// material_scale)`. Default 6 (`rules::MATERIAL_SCALE`: in standard shogi a rook up
    /// reads 0.84, a pawn up 0.54). A dai side starts with about six times a shogi side's
    /// material (355 units against 60), so at 6 a dai position a few pieces up or
    /// down reads as won or lost and the prior can no longer tell a small loss from a
    /// large one; a larger scale keeps it graded. Valid: [1, 1000].
    pub material_scale: f64,
    /// Weight of a short-horizon value in the value target: the search's root WDL
    /// `selfplay.future_plies` plies later in the game (the sample's
    /// `dataio::AuxTargets::future_wdl`), the game's result for samples without one (chunks
    /// before format version 3, converted records). KataGo trains short-term value heads
    /// on such targets (about 6 and 16 turns ahead; Wu 2019, 4.2); here they blend into
    /// the one value target as `q_mix` does. Default 0.0. Valid: [0, 1], with q_mix +
    /// material_mix + future_mix at most 1.
    pub future_mix: f64,
    /// Checkpoint (weights, optimiser state, counters) every this many steps; new
    /// weights go to self-play at the same time. Default 1000. KataGo: every ~10M
    /// samples; AlphaZero: new weights every 1000 steps. Valid: 1..=1e12.
    pub checkpoint_interval: u64,
    /// Keep this many newest checkpoints (older ones are deleted); 0 keeps all.
    /// Default 0. Valid: 0..=1000000.
    pub keep_checkpoints: usize,
    /// Stop after this many optimiser steps; 0 = no limit. Default 0. Valid: 0..=1e12.
    pub max_steps: u64,
    /// Stop after this many minutes of wall time; 0 = no limit. Default 0.
    /// Valid: [0, 1e8].
    pub max_minutes: f64,
    /// Training precision: `auto`, `f32`, `f16` or `bf16`. Default `auto` (f16 autocast
    /// with loss scaling on CUDA, f32 on the CPU).
    pub precision: TrainPrecision,
    /// Torch device of the learner: `cpu`, `cuda`, `cuda:N`, `auto`; empty = the
    /// self-play device. Default empty. Also `gpu`.
    pub device: String,
    /// Minibatches prepared ahead by the loader thread. Default 4. Valid: 1..=1024.
    pub prefetch: usize,
    /// Scalars to TensorBoard every this many steps. Default 50. Valid: 1..=1e12.
    pub log_interval: u64,
    /// Seed of the learner (initial weights, minibatch sampling); 0 = from the clock.
    /// Default 0. Any u64.
    pub seed: u64,

    // Schedules for learning from zero: each off by default.
    /// Learner step at which the material prior (`material_mix`) starts to fade: the mix
    /// is `material_mix` until this step, then falls linearly to 0 at
    /// `material_fade_end` and stays 0; the share taken away goes back to the game's
    /// result. A crutch for the first minutes that a longer run can drop. Default 0.
    /// Valid: 0..=1e12; above 0 only below a `material_fade_end`.
    pub material_fade_start: u64,
    /// Learner step at which the material prior has faded to 0; 0 = no fade (the mix
    /// stays `material_mix`). Default 0. Valid: 0 (with `material_fade_start` 0), or
    /// `material_fade_start + 1..=1e12`.
    pub material_fade_end: u64,
    /// Exponent of a replay window that grows with the run (KataGo, "Accelerating
    /// Self-Play Learning in Go", appendix: `alpha` 0.75): with `N` samples generated so
    /// far and `c = replay_window`, the window is `c * (1 + beta * ((N / c)^alpha - 1) /
    /// alpha)` for `N > c` (the curve `N^alpha` scaled so that it is `c` at `N = c` with
    /// slope `beta`), and `c` before. 0 = a fixed window of `replay_window`. Default 0.
    /// Valid: [0, 1].
    pub replay_window_alpha: f64,
    /// Slope of the growing window at `N = c` (see `replay_window_alpha`). Default 0.4
    /// (KataGo's). Valid: [0, 1].
    pub replay_window_beta: f64,
    /// Cap of the growing window; 0 = none. Default 0. Valid: 0, or
    /// `replay_window..=1e9`.
    pub replay_window_max: usize,
    /// Decay of an exponential moving average of the weights, which every checkpoint and
    /// published network holds (what self-play, evaluation and koma-usi play with) while
    /// training goes on with the raw weights (kept in the optimiser state file). After
    /// step `t` (0-based) the average moves to `d * average + (1 - d) * weights` with
    /// `d = min(ema_decay, (1 + t) / (10 + t))`, TensorFlow's `ExponentialMovingAverage`
    /// warm-up, so that early checkpoints follow the weights rather than the random
    /// init; batch-norm statistics are copied, not averaged. 0 = off (checkpoints hold
    /// the raw weights). Default 0; typical 0.999. Many AlphaZero reimplementations
    /// average the weights this way; dlshogi uses SWA (a plain average of snapshots).
    /// Valid: [0, 1).
    pub ema_decay: f64,
    /// Stochastic weight averaging (Izmailov et al. 2018; dlshogi): the share of the run's
    /// budget at its end (of `max_minutes` or `max_steps`, whichever is further spent, as
    /// the cosine learning rate) whose checkpoints' weights are averaged. When the run
    /// stops cleanly, its last checkpoint holds the plain mean of the weights at those
    /// checkpoints and at the last step (batch-norm statistics averaged too), and the raw
    /// weights go to the optimiser state file, so that a resumed run trains on from them.
    /// Self-play and the evaluations during the run play the raw weights (or
    /// `ema_decay`'s average, which is then what is averaged); only the last checkpoint,
    /// what the end-of-run evaluation, koma-usi and the ladder play, is the mean. A resumed
    /// run averages its own checkpoints only. 0 = off. Default 0; typical 0.15 (the last
    /// ~10 of 66 checkpoints of the 25-minute demo). Valid: [0, 1]; above 0 only with
    /// `max_steps` or `max_minutes`. `koma train` and `koma learner` only.
    pub swa_share: f64,
    /// How the material prior (`material_mix`) reads a position's balance: `static`, the
    /// pieces as they stand (`rules::material_balance`), or `quiescence`, after the
    /// captures on offer are played out (`rules::quiescent_balance`: a capture-only
    /// search, 8 plies and 2,000 positions at most), so that a piece left hanging counts
    /// as lost and a capture about to be answered as the exchange it starts. Default
    /// `static`. The quiescence search of chess programs (Shannon 1950; Beal 1990); no
    /// AlphaZero counterpart (it has no material prior). No effect with material_mix = 0.
    pub material_search: MaterialSearch,
    /// Records mixed into every minibatch beside the replay window: files or folders of
    /// what `koma learn` reads (sample chunks such as a teacher's `koma gen` games, hcpe,
    /// hcpe3, psv, game records), paths from the working directory, read once when the
    /// learner starts. Read only with `mix_share` above 0. Default empty. Not AlphaZero's (it learns from its own
    /// games alone); dlshogi mixes strong engines' records into its self-play training.
    /// `koma train` and `koma learner` only.
    pub mix_records: Vec<std::path::PathBuf>,
    /// The share of each minibatch drawn from `mix_records` (rounded, at least one
    /// sample left to the window); the value targets of those samples mix as the
    /// window's do (`q_mix`: a teacher's scores are its samples' root WDL). Default 0.
    /// Valid: [0, 1); above 0 only with `mix_records`.
    pub mix_share: f64,
}

/// The material prior's weight over a run: `train.material_mix`, faded between
/// `material_fade_start` and `material_fade_end`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaterialFade {
    pub mix: f64,
    pub start: u64,
    /// 0 = no fade.
    pub end: u64,
}

impl MaterialFade {
    /// The material mix at learner step `step`.
    pub fn at(&self, step: u64) -> f64 {
        if self.end == 0 || step <= self.start {
            return self.mix;
        }
        if step >= self.end {
            return 0.0;
        }
        self.mix * (self.end - step) as f64 / (self.end - self.start) as f64
    }
}

/// Learning-rate shape after warm-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedule {
    Constant,
    Cosine,
}

/// How the material prior reads the balance (`train.material_search`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MaterialSearch {
    /// The balance as the pieces stand.
    #[default]
    Static,
    /// The balance after a capture-only search.
    Quiescence,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            optimizer: OptimizerKind::Sgd,
            lr: 0.02,
            warmup_steps: 500,
            lr_schedule: LrSchedule::Constant,
            lr_final_fraction: 0.1,
            momentum: 0.9,
            nesterov: true,
            beta2: 0.999,
            adam_eps: 1e-8,
            weight_decay: 1e-4,
            grad_clip: 10.0,
            batch_size: 256,
            replay_window: 500_000,
            min_replay: 10_000,
            train_ratio: 4.0,
            policy_weight: 1.0,
            value_weight: 1.0,
            reply_policy_weight: 0.15,
            material_head_weight: 0.1,
            q_mix: 0.0,
            material_mix: 0.0,
            material_scale: rules::MATERIAL_SCALE,
            future_mix: 0.0,
            checkpoint_interval: 1000,
            keep_checkpoints: 0,
            max_steps: 0,
            max_minutes: 0.0,
            precision: TrainPrecision::Auto,
            device: String::new(),
            prefetch: 4,
            log_interval: 50,
            seed: 0,
            material_fade_start: 0,
            material_fade_end: 0,
            replay_window_alpha: 0.0,
            replay_window_beta: 0.4,
            replay_window_max: 0,
            ema_decay: 0.0,
            swa_share: 0.0,
            material_search: MaterialSearch::Static,
            mix_records: Vec::new(),
            mix_share: 0.0,
        }
    }
}

impl TrainConfig {
    /// Learning rate at optimiser step `step` (0-based), with `time_spent` (0..=1) of the
    /// run's `max_minutes` gone (0 when it has none). The cosine follows whichever of the
    /// two budgets is further spent.
    pub fn lr_at(&self, step: u64, time_spent: f64) -> f64 {
        if self.warmup_steps > 0 && step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        match self.lr_schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::Cosine => {
                let t = self.budget_spent(step, time_spent, self.warmup_steps);
                let f = self.lr_final_fraction
                    + (1.0 - self.lr_final_fraction) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos());
                self.lr * f
            }
        }
    }

    /// The share (0..=1) of the run's budget spent at step `step` with `time_spent` of
    /// `max_minutes` gone, counting steps from `from_step`: whichever of `max_steps` and
    /// `max_minutes` is further spent; 0 without either.
    fn budget_spent(&self, step: u64, time_spent: f64, from_step: u64) -> f64 {
        let by_steps = if self.max_steps > from_step {
            step.saturating_sub(from_step) as f64 / (self.max_steps - from_step) as f64
        } else {
            0.0
        };
        let by_time = if self.max_minutes > 0.0 { time_spent } else { 0.0 };
        by_steps.max(by_time).clamp(0.0, 1.0)
    }

    /// Whether the checkpoint of step `step` (with `time_spent` of `max_minutes` gone)
    /// falls in the stretch whose weights `swa_share` averages.
    pub fn in_swa_stretch(&self, step: u64, time_spent: f64) -> bool {
        self.swa_share > 0.0
            && (self.max_steps > 0 || self.max_minutes > 0.0)
            && self.budget_spent(step, time_spent, 0) >= 1.0 - self.swa_share
    }

    /// The material prior's weight over the run.
    pub fn material_fade(&self) -> MaterialFade {
        MaterialFade { mix: self.material_mix, start: self.material_fade_start, end: self.material_fade_end }
    }

    /// Checks every field against its valid range (in the field's documentation); the
    /// error names the field, the value and the range.
    pub fn validate(&self) -> Result<(), model::ConfigError> {
        use model::{check_real, check_whole, Range};
        let real = |name: &str, v: f64, r: Range| check_real(&format!("train.{name}"), v, r);
        let whole = |name: &str, v: u64, min: u64, max: u64| check_whole(&format!("train.{name}"), v, min, max);
        real("lr", self.lr, Range::AboveMin(0.0, 10.0))?;
        whole("warmup_steps", self.warmup_steps, 0, MAX_STEPS)?;
        real("lr_final_fraction", self.lr_final_fraction, Range::Closed(0.0, 1.0))?;
        real("momentum", self.momentum, Range::BelowMax(0.0, 1.0))?;
        real("beta2", self.beta2, Range::BelowMax(0.0, 1.0))?;
        real("adam_eps", self.adam_eps, Range::AboveMin(0.0, 1.0))?;
        real("weight_decay", self.weight_decay, Range::Closed(0.0, 1.0))?;
        real("grad_clip", self.grad_clip, Range::Closed(0.0, 1e9))?;
        whole("batch_size", self.batch_size as u64, 1, 65536)?;
        whole("replay_window", self.replay_window as u64, self.batch_size as u64, 1_000_000_000)?;
        whole("min_replay", self.min_replay as u64, 0, self.replay_window as u64)?;
        real("train_ratio", self.train_ratio, Range::AboveMin(0.0, 1000.0))?;
        real("policy_weight", self.policy_weight, Range::Closed(0.0, 1000.0))?;
        real("value_weight", self.value_weight, Range::Closed(0.0, 1000.0))?;
        real("reply_policy_weight", self.reply_policy_weight, Range::Closed(0.0, 1000.0))?;
        real("material_head_weight", self.material_head_weight, Range::Closed(0.0, 1000.0))?;
        if self.policy_weight + self.value_weight == 0.0 {
            return Err(model::ConfigError::BadValue {
                field: "train.policy_weight".into(),
                value: "0".into(),
                expected: "policy_weight or value_weight above 0 (there is nothing to learn)".into(),
            });
        }
        real("q_mix", self.q_mix, Range::Closed(0.0, 1.0))?;
        real("material_mix", self.material_mix, Range::Closed(0.0, 1.0))?;
        real("material_scale", self.material_scale, Range::Closed(1.0, 1000.0))?;
        real("future_mix", self.future_mix, Range::Closed(0.0, 1.0))?;
        if self.q_mix + self.material_mix > 1.0 {
            return Err(model::ConfigError::BadValue {
                field: "train.material_mix".into(),
                value: self.material_mix.to_string(),
                expected: format!(
                    "at most 1 - q_mix = {} (the game result's weight would be negative)",
                    1.0 - self.q_mix
                ),
            });
        }
        if self.q_mix + self.material_mix + self.future_mix > 1.0 {
            return Err(model::ConfigError::BadValue {
                field: "train.future_mix".into(),
                value: self.future_mix.to_string(),
                expected: format!(
                    "at most 1 - q_mix - material_mix = {} (the game result's weight would be negative)",
                    1.0 - self.q_mix - self.material_mix
                ),
            });
        }
        whole("checkpoint_interval", self.checkpoint_interval, 1, MAX_STEPS)?;
        whole("keep_checkpoints", self.keep_checkpoints as u64, 0, 1_000_000)?;
        whole("max_steps", self.max_steps, 0, MAX_STEPS)?;
        real("max_minutes", self.max_minutes, Range::Closed(0.0, 1e8))?;
        if !self.device.trim().is_empty() {
            model::check_device_name("train.device", &self.device)?;
        }
        whole("prefetch", self.prefetch as u64, 1, 1024)?;
        whole("log_interval", self.log_interval, 1, MAX_STEPS)?;
        self.validate_schedules()
    }

    /// The fields of the schedules for learning from zero (material fade, growing
    /// window, weight average).
    fn validate_schedules(&self) -> Result<(), model::ConfigError> {
        use model::{check_real, check_whole, Range};
        let real = |name: &str, v: f64, r: Range| check_real(&format!("train.{name}"), v, r);
        let whole = |name: &str, v: u64, min: u64, max: u64| check_whole(&format!("train.{name}"), v, min, max);
        whole("material_fade_start", self.material_fade_start, 0, MAX_STEPS)?;
        whole("material_fade_end", self.material_fade_end, 0, MAX_STEPS)?;
        if (self.material_fade_end > 0 || self.material_fade_start > 0)
            && self.material_fade_end <= self.material_fade_start
        {
            return Err(model::ConfigError::BadValue {
                field: "train.material_fade_end".into(),
                value: self.material_fade_end.to_string(),
                expected: format!(
                    "above material_fade_start = {} (the step where the fade ends; 0 with material_fade_start 0 = no fade)",
                    self.material_fade_start
                ),
            });
        }
        real("replay_window_alpha", self.replay_window_alpha, Range::Closed(0.0, 1.0))?;
        real("replay_window_beta", self.replay_window_beta, Range::Closed(0.0, 1.0))?;
        if self.replay_window_max != 0 {
            whole("replay_window_max", self.replay_window_max as u64, self.replay_window as u64, 1_000_000_000)?;
        }
        real("ema_decay", self.ema_decay, Range::BelowMax(0.0, 1.0))?;
        real("swa_share", self.swa_share, Range::Closed(0.0, 1.0))?;
        real("mix_share", self.mix_share, Range::BelowMax(0.0, 1.0))?;
        if self.mix_share > 0.0 && self.mix_records.is_empty() {
            return Err(model::ConfigError::BadValue {
                field: "train.mix_records".into(),
                value: "[]".into(),
                expected: format!(
                    "the records that mix_share = {} takes that share of each batch from (or mix_share = 0)",
                    self.mix_share
                ),
            });
        }
        Ok(())
    }
}

/// The largest step count a config may name (`max_steps`, intervals).
pub const MAX_STEPS: u64 = 1_000_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lr_schedule() {
        let c = TrainConfig {
            lr: 1.0,
            warmup_steps: 10,
            max_steps: 110,
            lr_schedule: LrSchedule::Cosine,
            ..Default::default()
        };
        assert!((c.lr_at(0, 0.0) - 0.1).abs() < 1e-12);
        assert!((c.lr_at(9, 0.0) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(10, 0.0) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(110, 0.0) - 0.1).abs() < 1e-9);
        assert!(c.lr_at(60, 0.0) < 1.0 && c.lr_at(60, 0.0) > 0.1);
        // Without max_minutes the clock is not a budget.
        assert_eq!(c.lr_at(60, 0.9), c.lr_at(60, 0.0));
    }

    #[test]
    fn cosine_follows_the_clock_of_a_run_limited_by_minutes() {
        let c = TrainConfig {
            lr: 1.0,
            warmup_steps: 10,
            max_minutes: 25.0,
            lr_schedule: LrSchedule::Cosine,
            lr_final_fraction: 0.1,
            ..Default::default()
        };
        assert!((c.lr_at(5, 0.0) - 0.6).abs() < 1e-12, "warm-up is by steps");
        assert!((c.lr_at(1_000, 0.0) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(1_000, 0.5) - 0.55).abs() < 1e-9, "half-way down the cosine");
        assert!((c.lr_at(1_000, 1.0) - 0.1).abs() < 1e-9);
        assert!((c.lr_at(1_000, 3.0) - 0.1).abs() < 1e-9, "past the budget it stays at the floor");
        // With both budgets, the one further spent decides.
        let both = TrainConfig { max_steps: 2_010, ..c };
        assert!((both.lr_at(1_010, 0.0) - 0.55).abs() < 1e-9);
        assert!((both.lr_at(1_010, 1.0) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn the_swa_stretch_is_the_end_of_the_budget_further_spent() {
        let by_steps = TrainConfig { max_steps: 1000, swa_share: 0.15, ..Default::default() };
        assert!(!by_steps.in_swa_stretch(849, 0.0) && by_steps.in_swa_stretch(850, 0.0));
        assert!(by_steps.in_swa_stretch(1000, 0.0));
        let by_time = TrainConfig { max_minutes: 25.0, swa_share: 0.15, ..Default::default() };
        assert!(!by_time.in_swa_stretch(10_000, 0.8) && by_time.in_swa_stretch(10, 0.9));
        let both = TrainConfig { max_steps: 1000, ..by_time.clone() };
        assert!(both.in_swa_stretch(900, 0.1) && both.in_swa_stretch(100, 0.9));
        let off = TrainConfig { swa_share: 0.0, ..both.clone() };
        assert!(!off.in_swa_stretch(1000, 1.0));
        let unbounded = TrainConfig { max_steps: 0, max_minutes: 0.0, ..both };
        assert!(!unbounded.in_swa_stretch(1_000_000, 1.0), "no budget, no stretch");
    }

    #[test]
    fn material_fade_schedule() {
        let c =
            TrainConfig { material_mix: 0.5, material_fade_start: 100, material_fade_end: 300, ..Default::default() };
        let f = c.material_fade();
        for (step, mix) in [(0, 0.5), (100, 0.5), (150, 0.375), (200, 0.25), (299, 0.0025), (300, 0.0), (10_000, 0.0)] {
            assert!((f.at(step) - mix).abs() < 1e-12, "step {step}: {} != {mix}", f.at(step));
        }
        // No fade by default: the mix stays.
        let plain = TrainConfig { material_mix: 0.5, ..Default::default() }.material_fade();
        assert_eq!((plain.at(0), plain.at(u64::MAX)), (0.5, 0.5));
        c.validate().unwrap();
        for (start, end) in [(300, 300), (300, 100), (5, 0)] {
            let bad = TrainConfig { material_fade_start: start, material_fade_end: end, ..c.clone() };
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains("train.material_fade_end"), "{start}..{end}: {e}");
        }
    }

    #[test]
    fn schedule_fields_are_checked() {
        let ok = TrainConfig {
            replay_window_alpha: 0.75,
            replay_window_max: 600_000,
            ema_decay: 0.999,
            ..Default::default()
        };
        ok.validate().unwrap();
        TrainConfig { mix_share: 0.25, mix_records: vec!["t".into()], ..ok.clone() }.validate().unwrap();
        for (bad, field) in [
            (TrainConfig { replay_window_alpha: 1.5, ..ok.clone() }, "train.replay_window_alpha"),
            (TrainConfig { replay_window_beta: -0.1, ..ok.clone() }, "train.replay_window_beta"),
            (TrainConfig { replay_window_max: 1000, ..ok.clone() }, "train.replay_window_max"),
            (TrainConfig { ema_decay: 1.0, ..ok.clone() }, "train.ema_decay"),
            (TrainConfig { ema_decay: f64::NAN, ..ok.clone() }, "train.ema_decay"),
            (TrainConfig { swa_share: 1.5, ..ok.clone() }, "train.swa_share"),
            (TrainConfig { swa_share: -0.1, ..ok.clone() }, "train.swa_share"),
            (TrainConfig { mix_share: 1.0, mix_records: vec!["t".into()], ..ok.clone() }, "train.mix_share"),
            (TrainConfig { mix_share: -0.1, ..ok.clone() }, "train.mix_share"),
            (TrainConfig { mix_share: 0.25, ..ok.clone() }, "train.mix_records"),
        ] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{field}: {e}");
        }
    }
}
