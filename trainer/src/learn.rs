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

use crate::config::TrainFileConfig;
use crate::datasets::read_training_inputs;
use crate::learner::{Learner, StepStats};
use crate::replay::{encode_batch, encode_batch_with, Batch, PolicyTargets};
use crate::run::{optim_path, set_torch_threads, TrainError};
use crate::tb::Tb;

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

fn record_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else { continue };
                let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                entries.sort();
                for e in entries {
                    if e.is_dir() {
                        stack.push(e);
                    } else if e
                        .extension()
                        .and_then(|x| x.to_str())
                        .and_then(Format::from_extension)
                        .is_some_and(|f| f.readable())
                    {
                        out.push(e);
                    }
                }
            }
        } else {
            out.push(p.clone());
        }
    }
    out
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
    if opts.progress {
        eprintln!("learn: reading {} input path(s)", opts.records.len());
    }
    let inputs = read_training_inputs(&opts.records, variant, &encoder);
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
    let seed = if tcfg.seed != 0 { tcfg.seed } else { 1 };
    let mut rng = Rng::new(seed);
    // Hold out whole games for validation.
    let n_val = if games.len() >= 20 { ((games.len() as f64) * opts.validation).round() as usize } else { 0 };
    let mut order: Vec<usize> = (0..games.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut train: Vec<Sample> = Vec::new();
    let mut val: Vec<Sample> = Vec::new();
    for (k, &gi) in order.iter().enumerate() {
        if k < n_val {
            val.extend(games[gi].iter().cloned());
        } else {
            train.extend(games[gi].iter().cloned());
        }
    }
    let positions = train.len() + val.len();
    let device = parse_device(if tcfg.device.is_empty() { &cfg.base.selfplay.device } else { &tcfg.device })?;
    set_torch_threads(cfg.base.selfplay.torch_threads);
    let shape = encoder.net_shape();
    let net = match &opts.init {
        Some(p) => load_net(p, &Expected::variant(variant).with_shape(shape), device)?.0,
        None => Net::new(&cfg.base.model, shape, seed, device)?,
    };
    let mut learner = Learner::new(net, tcfg, 0);
    let run_dir = opts.runs_dir.join(&opts.run);
    let ckpt_dir = run_dir.join("checkpoints");
    std::fs::create_dir_all(&ckpt_dir).map_err(|source| TrainError::Io { path: ckpt_dir.clone(), source })?;
    let mut tb = Tb::new(run_dir.join("tb")).map_err(|source| TrainError::Io { path: run_dir.join("tb"), source })?;
    let bs = tcfg.batch_size;
    let steps = ((train.len() as f64 * opts.epochs) / bs as f64).ceil().max(1.0) as u64;
    let mut perm: Vec<usize> = (0..train.len()).collect();
    let mut pos = perm.len();
    let validate = |learner: &Learner| -> Option<StepStats> {
        if val.is_empty() {
            return None;
        }
        let mut sum = StepStats::default();
        let mut n = 0;
        for chunk in val.chunks(bs) {
            let b = encode_batch(&encoder, chunk, 0.0);
            sum.add(&learner.validate(&b));
            n += 1;
        }
        Some(sum.scaled(1.0 / n as f64))
    };
    let save = |learner: &Learner| -> Result<PathBuf, TrainError> {
        let stem = ckpt_dir.join(format!("ckpt-{:08}", learner.step));
        let info = CheckpointInfo {
            variant: variant.name().to_string(),
            encoder_version: ENCODER_VERSION,
            step: learner.step,
        };
        save_checkpoint(&learner.net, &stem, &info)?;
        learner.opt.save(&optim_path(&stem))?;
        Ok(stem)
    };
    let mut last = None;
    let training = Reporter::shown_if(opts.progress, "learn: training", Some(steps), "steps");
    // A thread draws and encodes the next batches while the learner trains (prefetch).
    let (batches_tx, batches_rx) = std::sync::mpsc::sync_channel::<Batch>(tcfg.prefetch.max(1));
    let q_mix = tcfg.q_mix as f32;
    // On a GPU the dense policy targets are made on the device from sparse pairs.
    let targets = if device.is_cuda() { PolicyTargets::Sparse } else { PolicyTargets::Dense };
    let encoder_ref = &encoder;
    let train_ref = &train;
    std::thread::scope(|scope| -> Result<(), TrainError> {
        scope.spawn(move || loop {
            let mut batch = Vec::with_capacity(bs);
            for _ in 0..bs.min(train_ref.len()) {
                if pos >= perm.len() {
                    for i in (1..perm.len()).rev() {
                        perm.swap(i, rng.below(i + 1));
                    }
                    pos = 0;
                }
                batch.push(train_ref[perm[pos]].clone());
                pos += 1;
            }
            if batches_tx.send(encode_batch_with(encoder_ref, &batch, q_mix, targets)).is_err() {
                return;
            }
        });
        let batches = batches_rx;
        while learner.step < steps && !stop.load(Ordering::SeqCst) {
            let Ok(b) = batches.recv() else { break };
            // No wait for the device here: statistics are read once per log interval and
            // before each checkpoint (where a non-finite step stops the run unsaved).
            learner.train_step_deferred(&b);
            let step = learner.step;
            let checkpoint = step % tcfg.checkpoint_interval == 0;
            if step % tcfg.log_interval == 0 || step == steps || checkpoint {
                if let Some(m) = learner.take_stats()?.filter(|m| !m.skipped) {
                    tb.step_stats(&m, step);
                    training.set_message(format!(
                        "loss {:.3} (policy {:.3}, value {:.3}) accuracy {:.3}",
                        m.loss, m.policy_loss, m.value_loss, m.policy_accuracy
                    ));
                }
            }
            if checkpoint {
                if let Some(v) = validate(&learner) {
                    tb.scalar("val/loss_policy", v.policy_loss, step);
                    tb.scalar("val/loss_value", v.value_loss, step);
                    tb.scalar("val/policy_accuracy", v.policy_accuracy, step);
                }
                last = Some(save(&learner)?);
                tb.flush();
            }
            training.set_position(step);
        }
        // Dropping the receiver ends the prefetch thread.
        drop(batches);
        learner.take_stats()?;
        Ok(())
    })?;
    training.finish();
    let v = validate(&learner);
    if let Some(v) = &v {
        tb.scalar("val/loss_policy", v.policy_loss, learner.step);
        tb.scalar("val/loss_value", v.value_loss, learner.step);
        tb.scalar("val/policy_accuracy", v.policy_accuracy, learner.step);
    }
    let final_ckpt = match last {
        Some(p) if p.ends_with(format!("ckpt-{:08}", learner.step)) => p,
        _ => save(&learner)?,
    };
    tb.flush();
    Ok(LearnSummary {
        games: games.len(),
        positions,
        skipped_files: problems,
        steps: learner.step,
        validation: v,
        checkpoint: final_ckpt,
    })
}
