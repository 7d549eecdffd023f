//! `koma learn`: supervised training from game records, to bootstrap a network from
//! existing games. Every position before a recorded move becomes a sample whose policy
//! target is the move played and whose value target is the game's result from that
//! position's side to move (from the record's end, else the rules' verdict on the final
//! position); a game without a known result gives samples without a value target
//! (masked out of the value loss).
//!
//! Reads USI move lists (`.usi`/`.sfen`, one game a line), KIF/KI2 and CSA files
//! (standard shogi), dlshogi's hcpe/hcpe3 files and koma's sample chunks (`koma gen`
//! teacher data, self-play), a file or every such file under a folder
//! ([`crate::datasets`]). The value target mixes the result with a recorded score by
//! `train.q_mix` where the input has one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use model::encoding::{Encoder, ENCODER_VERSION};
use model::{load_net, parse_device, save_checkpoint, CheckpointInfo, Expected, Net};
use progress::Reporter;
use rules::records::{read_games, EndReason, Format, Record};
use rules::{Color, EndRules, Variant};
use search::Rng;
use selfplay::samples::{GameResult, Sample};

use crate::config::{TrainConfig, TrainFileConfig};
use crate::datasets::read_training_inputs;
use crate::learner::{Learner, StepStats};
use crate::replay::{encode_batch, encode_batch_with, Batch, PolicyTargets, ValueTargets};
use crate::run::{optim_path, TrainError};
use crate::tb::Tb;
use files::files_under;

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
    pub games: usize,
    pub positions: usize,
    pub skipped_files: Vec<String>,
    pub steps: u64,
    pub validation: Option<StepStats>,
    pub checkpoint: PathBuf,
}

/// The game records under `paths` (in folders, the formats that can be read).
fn record_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    files_under(paths, |file| {
        file.extension().and_then(|x| x.to_str()).and_then(Format::from_extension).is_some_and(|f| f.readable())
    })
}

/// How the game of `record` ended: `Some(winner)` (`Some(None)`: a draw), or `None` when
/// the result is unknown: the record gives none (an aborted game, a record without an
/// end) and the rules' verdict on its final position is none either.
pub fn record_result(record: &Record, final_pos: &rules::Position) -> Option<Option<Color>> {
    if let Some(end) = &record.end {
        let draw =
            matches!(end.reason, EndReason::Repetition | EndReason::Impasse | EndReason::MaxMoves | EndReason::Draw);
        if end.winner.is_some() || draw {
            return Some(end.winner);
        }
    }
    final_pos.outcome(&EndRules::default()).map(|o| o.winner)
}

/// Samples of one record (positions before each move).
pub fn record_samples(record: &Record, encoder: &Encoder) -> Result<Vec<Sample>, String> {
    let final_pos = record.final_position().map_err(|e| e.to_string())?;
    let outcome = record_result(record, &final_pos);
    let total = record.moves.len() as u32;
    let mut out = Vec::with_capacity(record.moves.len());
    record
        .replay(|pos, i, m| {
            // The value target from the view of the side to move at the sample.
            let result = outcome.map(|winner| GameResult::for_side(winner, pos.side_to_move()));
            out.push(Sample {
                sfen: pos.to_sfen(),
                repetitions: pos.repetitions().min(255) as u8,
                policy: vec![(encoder.move_index(pos, m.mv) as u32, 1.0)],
                result,
                // No search: the result stands in for its value (unknown: masked anyway).
                root_wdl: result.map_or([0.0, 1.0, 0.0], GameResult::wdl),
                plies_left: total - i as u32,
                full_search: true,
            });
        })
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Reads the records of `paths`: (samples per game, problems).
pub fn read_record_samples(paths: &[PathBuf], encoder: &Encoder) -> (Vec<Vec<Sample>>, Vec<String>) {
    read_record_samples_shown(paths, encoder, false)
}

/// [`read_record_samples`] with a progress bar over the files when `show`.
pub fn read_record_samples_shown(paths: &[PathBuf], encoder: &Encoder, show: bool) -> (Vec<Vec<Sample>>, Vec<String>) {
    let mut games = Vec::new();
    let mut problems = Vec::new();
    let files = record_files(paths);
    let reading = Reporter::shown_if(show, "learn: reading records", Some(files.len() as u64), "files");
    for f in files {
        reading.inc(1);
        reading.set_message(format!("{} games", games.len()));
        let ext = f.extension().and_then(|x| x.to_str()).unwrap_or("");
        let Some(format) = Format::from_extension(ext).filter(|f| f.readable()) else {
            problems.push(format!("{}: unknown record format (use .usi, .sfen, .kif, .kifu, .ki2, .csa)", f.display()));
            continue;
        };
        let bytes = match std::fs::read(&f) {
            Ok(b) => b,
            Err(e) => {
                problems.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        match read_games(format, &bytes, Format::encoding_of_extension(ext)) {
            Ok(records) => {
                for (i, r) in records.iter().enumerate() {
                    match record_samples(r, encoder) {
                        Ok(s) if !s.is_empty() => games.push(s),
                        Ok(_) => {}
                        Err(e) => problems.push(format!("{} game {}: {e}", f.display(), i + 1)),
                    }
                }
            }
            Err(e) => problems.push(format!("{}: {e}", f.display())),
        }
    }
    reading.set_message(format!("{} games", games.len()));
    reading.finish();
    (games, problems)
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
    let device = parse_device(if tcfg.device.is_empty() { &cfg.base.selfplay.device } else { &tcfg.device })?;
    model::set_torch_threads(cfg.base.selfplay.torch_threads, model::CpuShare::HalfOfSmall);
    let shape = encoder.net_shape();
    let net = match &opts.init {
        Some(p) => load_net(p, &Expected::variant(variant).with_shape(shape), device)?.0,
        None => Net::new(&cfg.base.model, shape, seed, device)?,
    };
    let run_dir = opts.runs_dir.join(&opts.run);
    let session = Session {
        ckpt_dir: run_dir.join("checkpoints"),
        tb: Tb::new(run_dir.join("tb")).map_err(|source| TrainError::Io { path: run_dir.join("tb"), source })?,
        learner: Learner::new(net, tcfg, 0),
        variant,
        encoder: &encoder,
        val: &val,
        batch_size: tcfg.batch_size,
    };
    std::fs::create_dir_all(&session.ckpt_dir)
        .map_err(|source| TrainError::Io { path: session.ckpt_dir.clone(), source })?;
    let steps = ((train.len() as f64 * opts.epochs) / tcfg.batch_size as f64).ceil().max(1.0) as u64;
    let (learner, validation, checkpoint) = session.run(&train, tcfg, steps, rng, opts.progress, &stop)?;
    Ok(LearnSummary {
        games: games.len(),
        positions: train.len() + val.len(),
        skipped_files: problems,
        steps: learner.step,
        validation,
        checkpoint,
    })
}

/// The games (groups of samples) of the inputs, and the problems met reading them.
fn read_games_of(
    opts: &LearnOptions,
    variant: Variant,
    encoder: &Encoder,
) -> Result<(Vec<Vec<Sample>>, Vec<String>), TrainError> {
    if opts.progress {
        eprintln!("learn: reading {} input path(s)", opts.records.len());
    }
    let inputs = read_training_inputs(&opts.records, variant, encoder);
    if variant != Variant::Shogi && inputs.files[1..].iter().any(|&n| n > 0) {
        return Err(TrainError::Run(format!(
            "hcpe, hcpe3 and game records are standard shogi; the config's variant is {} (sample chunks only)",
            variant.name()
        )));
    }
    let (games, problems) = (inputs.groups, inputs.problems);
    if opts.progress {
        let [chunks, hcpe, hcpe3, records] = inputs.files;
        eprintln!(
            "learn: read {} groups ({} positions) from {chunks} chunk, {hcpe} hcpe, {hcpe3} hcpe3 and {records} record \
             file(s); {} problem(s)",
            games.len(),
            games.iter().map(Vec::len).sum::<usize>(),
            problems.len()
        );
    }
    if games.is_empty() {
        return Err(TrainError::Run(format!(
            "no games read from {:?}{}",
            opts.records,
            problems.first().map(|p| format!(" ({p})")).unwrap_or_default()
        )));
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
    tb: Tb,
    learner: Learner,
    variant: Variant,
    encoder: &'a Encoder,
    val: &'a [Sample],
    batch_size: usize,
}

impl Session<'_> {
    /// Trains `steps` steps (or until `stop`) on batches that a second thread draws and
    /// encodes ahead (prefetch); returns the learner, the final validation and checkpoint.
    fn run(
        mut self,
        train: &[Sample],
        tcfg: &TrainConfig,
        steps: u64,
        rng: Rng,
        progress: bool,
        stop: &AtomicBool,
    ) -> Result<(Learner, Option<StepStats>, PathBuf), TrainError> {
        let training = Reporter::shown_if(progress, "learn: training", Some(steps), "steps");
        let (batches_tx, batches) = std::sync::mpsc::sync_channel::<Batch>(tcfg.prefetch.max(1));
        // On a GPU the dense policy targets are made on the device from sparse pairs.
        let targets = if self.learner.device().is_cuda() { PolicyTargets::Sparse } else { PolicyTargets::Dense };
        let (encoder, bs, value) = (self.encoder, self.batch_size, ValueTargets::from_config(tcfg));
        let mut last = None;
        std::thread::scope(|scope| -> Result<(), TrainError> {
            scope.spawn(move || {
                draw_batches(train, bs, rng, |batch| {
                    batches_tx.send(encode_batch_with(encoder, batch, value, targets)).is_ok()
                })
            });
            while self.learner.step < steps && !stop.load(Ordering::SeqCst) {
                let Ok(b) = batches.recv() else { break };
                // No wait for the device here: statistics are read once per log interval
                // and before each checkpoint (where a non-finite step stops the run unsaved).
                self.learner.train_step_deferred(&b);
                let step = self.learner.step;
                let checkpoint = step % tcfg.checkpoint_interval == 0;
                if step % tcfg.log_interval == 0 || step == steps || checkpoint {
                    if let Some(m) = self.learner.take_stats()?.filter(|m| !m.skipped) {
                        self.tb.step_stats(&m, step);
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
            self.learner.take_stats()?;
            Ok(())
        })?;
        training.finish();
        let v = self.log_validation();
        let final_ckpt = match last {
            Some(p) if p.ends_with(format!("ckpt-{:08}", self.learner.step)) => p,
            _ => self.save()?,
        };
        self.tb.flush();
        Ok((self.learner, v, final_ckpt))
    }

    /// Mean losses over the validation games (none without them), logged to TensorBoard.
    fn log_validation(&mut self) -> Option<StepStats> {
        if self.val.is_empty() {
            return None;
        }
        let mut sum = StepStats::default();
        let mut n = 0;
        for chunk in self.val.chunks(self.batch_size) {
            sum.add(&self.learner.validate(&encode_batch(self.encoder, chunk, ValueTargets::RESULT)));
            n += 1;
        }
        let v = sum.scaled(1.0 / n as f64);
        let step = self.learner.step;
        self.tb.scalar("val/loss_policy", v.policy_loss, step);
        self.tb.scalar("val/loss_value", v.value_loss, step);
        self.tb.scalar("val/policy_accuracy", v.policy_accuracy, step);
        Some(v)
    }

    /// A checkpoint of the current step: optimiser state first, then the weights and
    /// their metadata (what makes it a checkpoint), as `koma train` writes them.
    fn save(&self) -> Result<PathBuf, TrainError> {
        let stem = self.ckpt_dir.join(format!("ckpt-{:08}", self.learner.step));
        self.learner.opt.save(&optim_path(&stem))?;
        let info = CheckpointInfo {
            variant: self.variant.name().to_string(),
            encoder_version: ENCODER_VERSION,
            step: self.learner.step,
        };
        save_checkpoint(&self.learner.net, &stem, &info)?;
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
