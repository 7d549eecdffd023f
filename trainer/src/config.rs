//! The `[train]` table of a koma config file, and the whole file as the trainer reads it.
//!
//! A config file is TOML with a top-level `variant` and the tables `[model]`
//! (`model::NetConfig`), `[search]` and `[selfplay]` (`selfplay::config`) and `[train]`
//! ([`TrainConfig`]). Inside each table unknown fields are errors; every field has a
//! default.

use std::path::Path;

use selfplay::SelfplayFileConfig;
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
}

/// Training settings (`[train]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// `sgd` or `adamw`. Default `sgd`. AlphaZero, KataGo, lc0: SGD with momentum.
    pub optimizer: OptimizerKind,
    /// Peak learning rate (after warm-up). Default 0.02 (SGD). AlphaZero: 0.2 at batch
    /// 4096 (0.02 per 512 positions), stepped down to 0.02 and 0.002; KataGo: 6e-5 per
    /// sample (about 0.015 at batch 256); AdamW typical: 1e-3.
    pub lr: f64,
    /// Linear warm-up from 0 to `lr` over this many steps. Default 500. KataGo: a slow
    /// start over the first ~5M samples; lc0: 250 steps.
    pub warmup_steps: u64,
    /// After warm-up: `constant`, or `cosine` decay to `lr * lr_final_fraction` at
    /// `max_steps` (needs `max_steps`). Default `constant` (self-play runs have no end).
    pub lr_schedule: LrSchedule,
    /// See `lr_schedule`. Default 0.1.
    pub lr_final_fraction: f64,
    /// SGD momentum (also Adam's beta1). Default 0.9. AlphaZero, KataGo: 0.9.
    pub momentum: f64,
    /// Nesterov momentum for SGD. Default true. lc0: Nesterov.
    pub nesterov: bool,
    /// Adam's beta2. Default 0.999.
    pub beta2: f64,
    /// Adam's epsilon. Default 1e-8.
    pub adam_eps: f64,
    /// Weight decay of convolution and linear weights (not biases or batch norm):
    /// L2 added to the gradient for SGD, decoupled for AdamW. Default 1e-4.
    /// AlphaZero: 1e-4 (L2 c); KataGo: 3e-5 (per sample); AdamW typical: 0.01.
    pub weight_decay: f64,
    /// Clip the global gradient norm to this; 0 disables. Default 10. lc0: 10000 (off
    /// in effect); KataGo: clips per layer group.
    pub grad_clip: f64,
    /// Positions per minibatch. Default 256. AlphaZero: 4096; KataGo: 256; dlshogi: 1024.
    pub batch_size: usize,
    /// Replay window: the newest this many positions are sampled from. Default 500000.
    /// AlphaZero: the last 500000 games (about 50M positions); KataGo: grows with the
    /// run (~250k to 22M samples).
    pub replay_window: usize,
    /// Positions generated before the first optimiser step. Default 10000.
    pub min_replay: usize,
    /// Positions trained per position generated (each step trains `batch_size`). The
    /// learner waits for self-play above this ratio. Default 4.0. KataGo: ~4 (each
    /// sample seen ~4 times on average); AlphaZero: about 1.
    pub train_ratio: f64,
    /// Weight of the policy loss. Default 1.0.
    pub policy_weight: f64,
    /// Weight of the value loss (cross-entropy against win/draw/loss). Default 1.0.
    /// KataGo: 1.5 (later 0.6 x several value heads).
    pub value_weight: f64,
    /// Value target: `(1 - q_mix) * game result + q_mix * root WDL of the search`.
    /// Default 0.0 (pure result, AlphaZero). KataGo mixes in search values; some shogi
    /// runs use 0.5 (dlshogi's "value = (result + Q) / 2").
    pub q_mix: f64,
    /// Checkpoint (weights, optimiser state, counters) every this many steps; new
    /// weights go to self-play at the same time. Default 1000. KataGo: every ~10M
    /// samples; AlphaZero: new weights every 1000 steps.
    pub checkpoint_interval: u64,
    /// Keep this many newest checkpoints (older ones are deleted); 0 keeps all.
    /// Default 0.
    pub keep_checkpoints: usize,
    /// Evaluation games every this many steps (a multiple of `checkpoint_interval` is
    /// sensible); 0 disables. Default 5000. See `trainer::eval` for what is written.
    pub eval_interval: u64,
    /// Evaluation games against each opponent (each opening twice, colours swapped), >= 1.
    /// Default 40.
    pub eval_games: usize,
    /// Opponents of the evaluation: `random`, `greedy`, `previous` (the checkpoint of the
    /// previous evaluation), a rung of the ladder by name (`fsf1`, `gnushogi1`, ...: see
    /// `arena/ladder.toml`; the result is then also a ladder Elo), or an arena player
    /// `NAME=SPEC` (`arena/README.md`). An engine that does not start is left out with a
    /// warning. Default `["random", "greedy", "previous"]`.
    pub eval_opponents: Vec<String>,
    /// Simulations per move of the network in evaluation games, 1..=100000 (1 plays the
    /// raw policy's favourite); engines without their own depth get `go nodes` of the
    /// same. Default 128 (the engine plays at 800; 16-32 simulations underrate it).
    pub eval_simulations: u32,
    /// Leaves per network evaluation of one game's search (virtual loss between them, as
    /// the engine's `BatchSize`), 1..=256. Default 8.
    pub eval_batch_size: usize,
    /// Evaluation games played at once (their leaves share forward passes); 0 = all
    /// `eval_games` of a match. Default 0.
    pub eval_concurrency: usize,
    /// The network's search in evaluation games: `engine` (the engine's defaults: PUCT,
    /// what `koma-usi` plays) or `selfplay` (this file's `[search]` table). Default
    /// `engine`.
    pub eval_search: String,
    /// Evaluation games longer than this many plies are draws, >= 1. Default 256.
    pub eval_max_plies: u32,
    /// Uniformly random plies at the start of evaluation games (variety; both players
    /// share them), when `eval_openings` is empty. Default 2.
    pub eval_random_plies: u32,
    /// An opening file (`data/openings/shogi.txt`; the format of `koma arena
    /// --openings`) for evaluation games instead of random plies; empty = random plies.
    /// Default empty.
    pub eval_openings: String,
    /// A ladder table (the format of `arena/ladder.toml`); empty = the shipped one.
    /// Default empty.
    pub eval_ladder: String,
    /// Stop after this many optimiser steps; 0 = no limit. Default 0.
    pub max_steps: u64,
    /// Stop after this many minutes of wall time; 0 = no limit. Default 0.
    pub max_minutes: f64,
    /// Training precision. Default `auto` (f16 autocast with loss scaling on CUDA).
    pub precision: TrainPrecision,
    /// Torch device of the learner: `cpu`, `cuda`, `cuda:N`, `auto`; empty = the
    /// self-play device. Default empty.
    pub device: String,
    /// Minibatches prepared ahead by the loader thread. Default 4.
    pub prefetch: usize,
    /// Scalars to TensorBoard every this many steps. Default 50.
    pub log_interval: u64,
    /// Seed of the learner (initial weights, minibatch sampling); 0 = from the clock.
    /// Default 0.
    pub seed: u64,
}

/// Learning-rate shape after warm-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedule {
    Constant,
    Cosine,
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
            q_mix: 0.0,
            checkpoint_interval: 1000,
            keep_checkpoints: 0,
            eval_interval: 5000,
            eval_games: 40,
            eval_opponents: vec!["random".into(), "greedy".into(), "previous".into()],
            eval_simulations: 128,
            eval_batch_size: 8,
            eval_concurrency: 0,
            eval_search: "engine".into(),
            eval_max_plies: 256,
            eval_random_plies: 2,
            eval_openings: String::new(),
            eval_ladder: String::new(),
            max_steps: 0,
            max_minutes: 0.0,
            precision: TrainPrecision::Auto,
            device: String::new(),
            prefetch: 4,
            log_interval: 50,
            seed: 0,
        }
    }
}

impl TrainConfig {
    /// Learning rate at optimiser step `step` (0-based).
    pub fn lr_at(&self, step: u64) -> f64 {
        if self.warmup_steps > 0 && step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        match self.lr_schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::Cosine => {
                if self.max_steps <= self.warmup_steps {
                    return self.lr;
                }
                let t = ((step - self.warmup_steps) as f64 / (self.max_steps - self.warmup_steps) as f64).min(1.0);
                let f = self.lr_final_fraction
                    + (1.0 - self.lr_final_fraction) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos());
                self.lr * f
            }
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, msg: &str| if ok { Ok(()) } else { Err(format!("train.{msg}")) };
        check(self.lr > 0.0 && self.lr.is_finite(), "lr must be positive")?;
        check((0.0..1.0).contains(&self.momentum), "momentum must be in [0, 1)")?;
        check((0.0..1.0).contains(&self.beta2), "beta2 must be in [0, 1)")?;
        check(self.adam_eps > 0.0, "adam_eps must be positive")?;
        check(self.weight_decay >= 0.0, "weight_decay must be >= 0")?;
        check(self.grad_clip >= 0.0, "grad_clip must be >= 0")?;
        check(self.batch_size >= 1, "batch_size must be at least 1")?;
        check(self.replay_window >= self.batch_size, "replay_window must be at least batch_size")?;
        check(self.min_replay <= self.replay_window, "min_replay must not exceed replay_window")?;
        check(self.train_ratio > 0.0, "train_ratio must be positive")?;
        check(self.policy_weight >= 0.0 && self.value_weight >= 0.0, "loss weights must be >= 0")?;
        check((0.0..=1.0).contains(&self.q_mix), "q_mix must be in [0, 1]")?;
        check((0.0..=1.0).contains(&self.lr_final_fraction), "lr_final_fraction must be in [0, 1]")?;
        check(self.checkpoint_interval >= 1, "checkpoint_interval must be at least 1")?;
        check((1..=100_000).contains(&self.eval_simulations), "eval_simulations must be in 1..=100000")?;
        check((1..=256).contains(&self.eval_batch_size), "eval_batch_size must be in 1..=256")?;
        check(self.eval_games >= 1, "eval_games must be at least 1")?;
        check(matches!(self.eval_search.as_str(), "engine" | "selfplay"), "eval_search: expected engine or selfplay")?;
        check(self.eval_max_plies >= 1, "eval_max_plies must be at least 1")?;
        check(self.max_minutes >= 0.0, "max_minutes must be >= 0")?;
        check(self.prefetch >= 1, "prefetch must be at least 1")?;
        check(self.log_interval >= 1, "log_interval must be at least 1")?;
        let ladder = crate::eval::eval_ladder(self).map_err(|e| format!("train.eval_ladder: {e}"))?;
        for o in self.eval_opponents.iter().filter(|o| *o != "previous") {
            crate::eval::parse_player(o, &ladder).map_err(|e| format!("train.eval_opponents: {e}"))?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error(transparent)]
    Selfplay(#[from] selfplay::config::ConfigError),
}

/// The `[train]` table alone; other tables are read by the other crates.
#[derive(Deserialize)]
struct TrainOnly {
    #[serde(default)]
    train: TrainConfig,
}

/// A whole config file as the trainer needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainFileConfig {
    /// `variant`, `[model]`, `[search]`, `[selfplay]`.
    pub base: SelfplayFileConfig,
    pub train: TrainConfig,
    /// The file's text, copied to `runs/<name>/config.toml`.
    pub text: String,
}

impl TrainFileConfig {
    pub fn from_toml(text: &str, path: &str) -> Result<Self, ConfigError> {
        let base = SelfplayFileConfig::from_toml(text, path)?;
        let t: TrainOnly =
            toml::from_str(text).map_err(|e| ConfigError::Invalid { path: path.into(), message: e.to_string() })?;
        t.train.validate().map_err(|message| ConfigError::Invalid { path: path.into(), message })?;
        Ok(TrainFileConfig { base, train: t.train, text: text.to_string() })
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: p.clone(), source })?;
        Self::from_toml(&text, &p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_unknown_fields() {
        let c = TrainFileConfig::from_toml("[train]\nlr = 0.1\noptimizer = \"adamw\"\n", "t").unwrap();
        assert_eq!(c.train.lr, 0.1);
        assert_eq!(c.train.optimizer, OptimizerKind::Adamw);
        assert_eq!(c.train.batch_size, 256);
        let e = TrainFileConfig::from_toml("[train]\nlearning_rate = 0.1\n", "t").unwrap_err();
        assert!(e.to_string().contains("learning_rate"), "{e}");
        let e = TrainFileConfig::from_toml("[train]\nbatch_size = 0\n", "t").unwrap_err();
        assert!(e.to_string().contains("batch_size"), "{e}");
        let c = TrainFileConfig::from_toml("[train]\neval_opponents = [\"greedy\", \"fsf1\", \"previous\"]\n", "t");
        assert_eq!(c.unwrap().train.eval_simulations, 128);
        for bad in [
            "eval_opponents = [\"fsf9\"]",
            "eval_batch_size = 0",
            "eval_search = \"fast\"",
            "eval_simulations = 0",
            "eval_ladder = \"/no/such/ladder.toml\"",
        ] {
            let e = TrainFileConfig::from_toml(&format!("[train]\n{bad}\n"), "t").unwrap_err();
            assert!(e.to_string().contains(bad.split(' ').next().unwrap()), "{bad}: {e}");
        }
    }

    #[test]
    fn lr_schedule() {
        let c = TrainConfig {
            lr: 1.0,
            warmup_steps: 10,
            max_steps: 110,
            lr_schedule: LrSchedule::Cosine,
            ..Default::default()
        };
        assert!((c.lr_at(0) - 0.1).abs() < 1e-12);
        assert!((c.lr_at(9) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(10) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(110) - 0.1).abs() < 1e-9);
        assert!(c.lr_at(60) < 1.0 && c.lr_at(60) > 0.1);
    }

    #[test]
    fn shipped_configs_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                TrainFileConfig::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            }
        }
    }
}
