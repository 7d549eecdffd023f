//! `koma learn`: supervised training from game records, to bootstrap a network from
//! existing games. Every position before a recorded move becomes a sample whose policy
//! target is the move played and whose value target is the game's result from that
//! position's side to move (from the record's end, else the rules' verdict on the final
//! position); a game without a known result gives samples without a value target
//! (masked out of the value loss).
//!
//! Reads USI move lists (`.usi`/`.sfen`, one game a line), KIF/KI2 and CSA files
//! (standard shogi), dlshogi's hcpe/hcpe3 files, YaneuraOu's psv files and koma's sample chunks (`koma gen`
//! teacher data, self-play), a file or every such file under a folder
//! ([`super::datasets`]). The value target mixes the result with a recorded score by
//! `train.q_mix` where the input has one, and with the material prior by
//! `train.material_mix` (faded by `train.material_fade_*` as in `koma train`). With
//! `train.ema_decay` the checkpoints hold the average of the weights, as `koma train`'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dataio::run_layout::checkpoint_name;
use dataio::Sample;
use model::encoding::{Encoder, ENCODER_VERSION};
use model::{load_net, parse_device, save_checkpoint, CheckpointInfo, Expected, LeafMaterial, Net};
use progress::Reporter;
use rules::Variant;
use search::Rng;

use super::datasets::read_training_inputs;
use crate::config::{TrainConfig, TrainFileConfig};
use crate::data::{encode_batch, encode_batch_with, Batch, PolicyTargets, ValueSchedule, ValueTargets};
use crate::error::TrainError;
use crate::learning::net_trainer::{NetTrainer, StepStats};
use crate::tensorboard::{tags, TensorBoardLog};

/// What `koma learn` does.
#[derive(Clone, Debug)]
pub struct LearnOptions {
    pub config: PathBuf,
    /// Record files or folders.
    pub records: Vec<PathBuf>,
    pub run: String,
    pub runs_dir: PathBuf,
    /// Passes over the training positions (default 1).
    pub epochs: f64,
    /// Start from this checkpoint instead of fresh weights.
    pub init: Option<PathBuf>,
    /// Share of games held out for validation (default 0.05).
    pub validation: f64,
    pub progress: bool,
}

/// The end of `koma learn`.
#[derive(Clone, Debug)]
pub struct LearnSummary {
    /// Groups of samples read: a game of a record or an hcpe3 file, one sample chunk, or a
    /// run of consecutive hcpe positions (the unit the validation split holds out).
    pub groups: usize,
    pub positions: usize,
    pub skipped_files: Vec<String>,
    pub steps: u64,
    pub validation: Option<StepStats>,
    pub checkpoint: PathBuf,
}

/// Runs `koma learn`.
pub fn learn(opts: &LearnOptions, stop: Arc<AtomicBool>) -> Result<LearnSummary, TrainError> {
    let cfg = TrainFileConfig::load(&opts.config)?;
    let variant = cfg.base.variant;
    let tcfg = &cfg.train;
    let encoder = Encoder::for_net(variant, &cfg.base.model);
    let (games, problems) = read_games_of(opts, variant, &encoder)?;
    let seed = if tcfg.seed != 0 { tcfg.seed } else { 1 };
    let mut rng = Rng::new(seed);
    let (train, val) = hold_out(&games, opts.validation, &mut rng);
    if train.is_empty() {
        // A game without moves (an hcpe3 game of its start position only) has no sample.
        let positions = val.len();
        return Err(TrainError::NoPositions { inputs: opts.records.clone(), games: games.len(), positions });
    }
    let net = network_of(&cfg, &encoder, opts.init.as_deref(), seed)?;
    let run_dir = opts.runs_dir.join(&opts.run);
    let session = Session {
        ckpt_dir: run_dir.join("checkpoints"),
        tb: TensorBoardLog::new(run_dir.join("tb"))
            .map_err(|source| TrainError::Io { path: run_dir.join("tb"), source })?,
        trainer: NetTrainer::new(net, tcfg, 0),
        variant,
        leaf_material: cfg.leaf_material(),
        encoder: &encoder,
        val: &val,
        batch_size: tcfg.batch_size,
    };
    std::fs::create_dir_all(&session.ckpt_dir)
        .map_err(|source| TrainError::Io { path: session.ckpt_dir.clone(), source })?;
    let steps = ((train.len() as f64 * opts.epochs) / tcfg.batch_size as f64).ceil().max(1.0) as u64;
    let (trainer, validation, checkpoint) = session.run(&train, tcfg, steps, rng, opts.progress, &stop)?;
    Ok(LearnSummary {
        groups: games.len(),
        positions: train.len() + val.len(),
        skipped_files: problems,
        steps: trainer.step,
        validation,
        checkpoint,
    })
}

/// What `koma learn --epochs 0` reports: a network's losses on every position of the inputs.
#[derive(Clone, Debug)]
pub struct ScoreSummary {
    pub groups: usize,
    pub positions: usize,
    pub skipped_files: Vec<String>,
    /// Means over the positions, value targets the games' results.
    pub stats: StepStats,
}

/// Scores `network` on every position of the inputs, as the validation of [`learn`] does
/// (policy loss and top-1 agreement with the recorded moves, value loss against the
/// results); trains and writes nothing. How well a network predicts a stronger player's
/// moves on games none of the compared networks learnt from says where a training step
/// moved its policy, at a few seconds of compute instead of a match's hours.
pub fn score(opts: &LearnOptions, network: &Path) -> Result<ScoreSummary, TrainError> {
    let cfg = TrainFileConfig::load(&opts.config)?;
    let variant = cfg.base.variant;
    let encoder = Encoder::for_net(variant, &cfg.base.model);
    let (games, problems) = read_games_of(opts, variant, &encoder)?;
    let samples: Vec<Sample> = games.iter().flatten().cloned().collect();
    if samples.is_empty() {
        return Err(TrainError::NoPositions { inputs: opts.records.clone(), games: games.len(), positions: 0 });
    }
    let net = network_of(&cfg, &encoder, Some(network), 0)?;
    let trainer = NetTrainer::new(net, &cfg.train, 0);
    let stats = mean_stats(&trainer, &encoder, &samples, cfg.train.batch_size);
    Ok(ScoreSummary { groups: games.len(), positions: samples.len(), skipped_files: problems, stats })
}

/// The network to train or score: `init`'s weights (a checkpoint or model file of the
/// config's variant and shape), else fresh ones from `seed`; on the config's device, with
/// its torch threads.
fn network_of(cfg: &TrainFileConfig, encoder: &Encoder, init: Option<&Path>, seed: u64) -> Result<Net, TrainError> {
    let tcfg = &cfg.train;
    let device = parse_device(if tcfg.device.is_empty() { &cfg.base.selfplay.device } else { &tcfg.device })?;
    model::set_torch_threads(cfg.base.selfplay.torch_threads, model::CpuShare::HalfOfSmall);
    let shape = encoder.net_shape();
    Ok(match init {
        Some(p) => load_net(p, &Expected::variant(cfg.base.variant).with_shape(shape), device)?.0,
        None => Net::new(&cfg.base.model, shape, seed, device)?,
    })
}

/// The losses over `samples` in batches of `bs`, each batch weighted by its size; value
/// targets the games' results.
fn mean_stats(trainer: &NetTrainer, encoder: &Encoder, samples: &[Sample], bs: usize) -> StepStats {
    let mut sum = StepStats::default();
    for chunk in samples.chunks(bs.max(1)) {
        let stats = trainer.validate(&encode_batch(encoder, chunk, ValueTargets::RESULT));
        sum.add(&stats.scaled(chunk.len() as f64));
    }
    sum.scaled(1.0 / samples.len() as f64)
}

/// The games (groups of samples) of the inputs, and the problems met reading them.
fn read_games_of(
    opts: &LearnOptions,
    variant: Variant,
    encoder: &Encoder,
) -> Result<(Vec<Vec<Sample>>, Vec<String>), TrainError> {
    if opts.progress {
        progress::line(&format!("learn: reading {} input path(s)", opts.records.len()));
    }
    let inputs = read_training_inputs(&opts.records, variant, encoder);
    if variant != Variant::Shogi && inputs.files[1..].iter().any(|&n| n > 0) {
        let kinds = ["hcpe", "hcpe3", "psv", "game record"].iter().zip(&inputs.files[1..]);
        let found: Vec<String> = kinds.filter(|(_, &n)| n > 0).map(|(kind, n)| format!("{n} {kind} file(s)")).collect();
        return Err(TrainError::RecordsNeedShogi { variant: variant.name().to_string(), found: found.join(", ") });
    }
    let (games, problems) = (inputs.groups, inputs.problems);
    if opts.progress {
        let [chunks, hcpe, hcpe3, psv, records] = inputs.files;
        progress::line(&format!(
            "learn: read {} groups ({} positions) from {chunks} chunk, {hcpe} hcpe, {hcpe3} hcpe3, {psv} psv and \
             {records} record file(s); {} problem(s)",
            games.len(),
            games.iter().map(Vec::len).sum::<usize>(),
            problems.len()
        ));
    }
    if games.is_empty() {
        return Err(TrainError::NoGames { inputs: opts.records.clone(), first_problem: problems.first().cloned() });
    }
    Ok((games, problems))
}

/// Training and validation samples: whole games are held out (`share` of them, none
/// below 20 games), so that no position of a validation game is trained on.
fn hold_out(games: &[Vec<Sample>], share: f64, rng: &mut Rng) -> (Vec<Sample>, Vec<Sample>) {
    let n_val = if games.len() >= 20 { ((games.len() as f64) * share).round() as usize } else { 0 };
    let mut order: Vec<usize> = (0..games.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let (mut train, mut val) = (Vec::new(), Vec::new());
    for (k, &gi) in order.iter().enumerate() {
        let to = if k < n_val { &mut val } else { &mut train };
        to.extend(games[gi].iter().cloned());
    }
    (train, val)
}

/// What one `koma learn` trains and where it writes.
struct Session<'a> {
    ckpt_dir: PathBuf,
    tb: TensorBoardLog,
    trainer: NetTrainer,
    variant: Variant,
    /// The config's search setting the checkpoints record (`[search]` leaf material mix).
    leaf_material: Option<LeafMaterial>,
    encoder: &'a Encoder,
    val: &'a [Sample],
    batch_size: usize,
}

impl Session<'_> {
    /// Trains `steps` steps (or until `stop`) on batches that a second thread draws and
    /// encodes ahead (prefetch); returns the trainer, the final validation and checkpoint.
    fn run(
        mut self,
        train: &[Sample],
        tcfg: &TrainConfig,
        steps: u64,
        rng: Rng,
        progress: bool,
        stop: &AtomicBool,
    ) -> Result<(NetTrainer, Option<StepStats>, PathBuf), TrainError> {
        let training = Reporter::shown_if(progress, "learn: training", Some(steps), "steps");
        let (batches_tx, batches) = std::sync::mpsc::sync_channel::<Batch>(tcfg.prefetch.max(1));
        // On a GPU the dense policy targets are made on the device from sparse pairs.
        let targets = if self.trainer.device().is_cuda() { PolicyTargets::Sparse } else { PolicyTargets::Dense };
        let (encoder, bs) = (self.encoder, self.batch_size);
        // The material prior fades with the steps (`train.material_fade_*`).
        let value = ValueSchedule::from_config(tcfg, self.trainer.step);
        let schedule = value.clone();
        let mut last = None;
        std::thread::scope(|scope| -> Result<(), TrainError> {
            scope.spawn(move || {
                draw_batches(train, bs, rng, |batch| {
                    batches_tx.send(encode_batch_with(encoder, batch, schedule.current(), targets)).is_ok()
                })
            });
            while self.trainer.step < steps && !stop.load(Ordering::SeqCst) {
                let Ok(b) = batches.recv() else { break };
                // No wait for the device here: statistics are read once per log interval
                // and before each checkpoint (where a non-finite step stops the run unsaved).
                self.trainer.train_step_deferred(&b);
                let step = self.trainer.step;
                value.set_step(step);
                let checkpoint = step % tcfg.checkpoint_interval == 0;
                if step % tcfg.log_interval == 0 || step == steps || checkpoint {
                    if let Some(m) = self.trainer.take_stats()?.filter(|m| !m.skipped) {
                        self.tb.step_stats(&m, step);
                        self.tb.scalar(tags::MATERIAL_MIX, tcfg.material_fade().at(step), step);
                        training.set_message(format!(
                            "loss {:.3} (policy {:.3}, value {:.3}) accuracy {:.3}",
                            m.loss, m.policy_loss, m.value_loss, m.policy_accuracy
                        ));
                    }
                }
                if checkpoint {
                    self.log_validation();
                    last = Some(self.save()?);
                    self.tb.flush();
                }
                training.set_position(step);
            }
            // Dropping the receiver ends the prefetch thread.
            drop(batches);
            self.trainer.take_stats()?;
            Ok(())
        })?;
        training.finish();
        let v = self.log_validation();
        let final_ckpt = match last {
            Some(p) if p.ends_with(checkpoint_name(self.trainer.step)) => p,
            _ => self.save()?,
        };
        self.tb.flush();
        // TensorBoard is a by-product: its write error is reported, the training kept.
        if let Some(e) = self.tb.take_error() {
            log::warn!("koma learn: warning: {e}");
        }
        Ok((self.trainer, v, final_ckpt))
    }

    /// Mean losses over the validation games (none without them), logged to TensorBoard.
    fn log_validation(&mut self) -> Option<StepStats> {
        if self.val.is_empty() {
            return None;
        }
        let v = mean_stats(&self.trainer, self.encoder, self.val, self.batch_size);
        let step = self.trainer.step;
        self.tb.scalar("val/loss_policy", v.policy_loss, step);
        self.tb.scalar("val/loss_value", v.value_loss, step);
        self.tb.scalar("val/policy_accuracy", v.policy_accuracy, step);
        Some(v)
    }

    /// A checkpoint of the current step: optimiser state first, then the weights and
    /// their metadata (what makes it a checkpoint), as `koma train` writes them.
    fn save(&self) -> Result<PathBuf, TrainError> {
        let stem = self.ckpt_dir.join(checkpoint_name(self.trainer.step));
        self.trainer.save_training_state(&stem)?;
        let info = CheckpointInfo {
            variant: self.variant.name().to_string(),
            encoder_version: ENCODER_VERSION,
            step: self.trainer.step,
            leaf_material: self.leaf_material,
        };
        save_checkpoint(self.trainer.playing_net(), &stem, &info)?;
        Ok(stem)
    }
}

/// Hands `send` batches of `bs` samples drawn without replacement (reshuffled after
/// each pass) until it returns false.
fn draw_batches(train: &[Sample], bs: usize, mut rng: Rng, mut send: impl FnMut(&[Sample]) -> bool) {
    let mut perm: Vec<usize> = (0..train.len()).collect();
    let mut pos = perm.len();
    let mut batch = Vec::with_capacity(bs);
    loop {
        batch.clear();
        for _ in 0..bs.min(train.len()) {
            if pos >= perm.len() {
                for i in (1..perm.len()).rev() {
                    perm.swap(i, rng.below(i + 1));
                }
                pos = 0;
            }
            batch.push(train[perm[pos]].clone());
            pos += 1;
        }
        if !send(&batch) {
            return;
        }
    }
}
