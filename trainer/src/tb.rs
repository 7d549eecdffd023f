//! TensorBoard scalars through the `tensorboard-rs` crate: event files
//! (`events.out.tfevents.*`, TFRecord framing with masked CRC-32C) in `runs/<name>/tb/`.
//! A resumed run writes a new event file into the same folder; TensorBoard merges them.
//!
//! View them with `scripts/tensorboard.sh` (or `.venv/bin/tensorboard --logdir runs`).

use std::path::{Path, PathBuf};

use tensorboard_rs::summary_writer::SummaryWriter;

/// Scalar tags written by the trainer (scores are in 0..1, Elo relative to the opponent).
pub mod tags {
    pub const LOSS_TOTAL: &str = "loss/total";
    pub const LOSS_POLICY: &str = "loss/policy";
    pub const LOSS_VALUE: &str = "loss/value";
    /// The reply head's loss (`model.reply_policy_head` only).
    pub const LOSS_REPLY_POLICY: &str = "loss/reply_policy";
    /// The material head's loss (`model.material_head` only).
    pub const LOSS_MATERIAL: &str = "loss/material";
    pub const POLICY_ACCURACY: &str = "train/policy_accuracy";
    pub const VALUE_ERROR: &str = "train/value_mse";
    pub const LEARNING_RATE: &str = "train/learning_rate";
    pub const GRAD_NORM: &str = "train/grad_norm";
    pub const LOADER_WAIT: &str = "perf/loader_wait_fraction";
    pub const STEPS_PER_SEC: &str = "perf/steps_per_second";
    pub const GAMES_PER_HOUR: &str = "selfplay/games_per_hour";
    pub const EVALS_PER_SEC: &str = "selfplay/evaluations_per_second";
    pub const MEAN_GAME_LENGTH: &str = "selfplay/mean_game_length";
    pub const FALSE_RESIGN_RATE: &str = "selfplay/false_resign_rate";
    pub const SAMPLES_GENERATED: &str = "selfplay/samples_generated";
    pub const TRAIN_RATIO: &str = "train/samples_trained_per_generated";
    /// Sample chunks skipped because they failed their checks (damaged or holding an
    /// invalid sample), the run's total.
    pub const SKIPPED_CHUNKS: &str = "data/skipped_chunks";
    /// The replay window's size (`train.replay_window`, growing with
    /// `train.replay_window_alpha`).
    pub const REPLAY_WINDOW: &str = "data/replay_window";
    /// The material prior's share of the value target (`train.material_mix`, faded by
    /// `train.material_fade_*`).
    pub const MATERIAL_MIX: &str = "train/material_mix";
    /// Prefix of the samples taken in from each worker (`selfplay/samples_from/<id>`).
    pub const SAMPLES_FROM: &str = "selfplay/samples_from/";
}

/// A TensorBoard scalar writer.
pub struct Tb {
    writer: SummaryWriter,
    dir: PathBuf,
}

impl Tb {
    /// Opens a new event file in `dir` (created if needed).
    pub fn new(dir: impl AsRef<Path>) -> std::io::Result<Tb> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)?;
        Ok(Tb { writer: SummaryWriter::new(&dir), dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        if value.is_finite() {
            self.writer.add_scalar(tag, value as f32, step as usize);
        }
    }

    /// The learner's scalars (losses, those of the auxiliary heads the network has,
    /// accuracy, value error, gradient norm, learning rate) of `m`, usually a mean over the
    /// steps since the last call.
    pub fn step_stats(&mut self, m: &crate::net_trainer::StepStats, step: u64) {
        self.scalar(tags::LOSS_TOTAL, m.loss, step);
        self.scalar(tags::LOSS_POLICY, m.policy_loss, step);
        self.scalar(tags::LOSS_VALUE, m.value_loss, step);
        if let Some(l) = m.reply_policy_loss {
            self.scalar(tags::LOSS_REPLY_POLICY, l, step);
        }
        if let Some(l) = m.material_loss {
            self.scalar(tags::LOSS_MATERIAL, l, step);
        }
        self.scalar(tags::POLICY_ACCURACY, m.policy_accuracy, step);
        self.scalar(tags::VALUE_ERROR, m.value_mse, step);
        self.scalar(tags::GRAD_NORM, m.grad_norm, step);
        self.scalar(tags::LEARNING_RATE, m.lr, step);
    }

    pub fn flush(&mut self) {
        self.writer.flush();
    }
}
