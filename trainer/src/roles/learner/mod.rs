//! The learner role: takes in sample chunks, keeps the replay window, trains at the
//! configured ratio of samples trained per sample generated, writes checkpoints,
//! publishes networks for the workers, logs TensorBoard scalars and runs the periodic
//! evaluation in the background. `koma learner` runs it alone; `koma train` adds
//! self-play threads in the same process ([`LearnerRole::add_local_worker`]).
//!
//! A learner holds the run's lease (`store::lease`) from its start to its end, renews it
//! before every write of its state and stops, writing nothing more, if it finds the lease
//! taken over. TensorBoard files and the evaluation log are by-products: their write
//! errors are warnings (shown with `--quiet`). A write error of the lease, a checkpoint,
//! the state or the published model stops the run with that error (exit status 1).
//!
//! This module is the loop; [`startup`] takes the lease and opens or resumes the run,
//! [`logging`] writes TensorBoard and the summary, [`eval_schedule`] starts and records the
//! evaluations, which run in [`eval_thread`].

mod eval_schedule;
mod eval_thread;
mod logging;
mod startup;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arena::Wdl;
use model::parse_device;
use model::tch::Device;
use selfplay::SelfplayFileConfig;

use self::eval_schedule::{EvalSchedule, EvalTarget};
pub use self::logging::TrainSummary;
use self::logging::{Counters, TrainLog};
pub(crate) use self::startup::with_limits;
use crate::config::{TrainConfig, TrainFileConfig};
use crate::data::{Loader, Replay, Sources};
use crate::error::TrainError;
use crate::evaluation::chart::ladder_by_step;
use crate::evaluation::points::spread;
use crate::evaluation::TrainingEval;
use crate::learning::net_trainer::NetTrainer;
use crate::roles::display::Display;
use crate::roles::files::RunFiles;
use crate::roles::intake::take_in;
use crate::roles::network::{evaluator_of, prune, publish_model, save_learner_checkpoint, saved_steps, Published};
use crate::roles::selfplay::{ChunkSink, LocalFeed, SelfplayThread};
use crate::roles::state::{resume_point, write_state, RunState};
use crate::roles::uploader::Uploader;
use crate::tensorboard::{tags, TensorBoardLog};
use dataio::run_layout::{self as layout, checkpoint_stem};
use store::lease::KeptLease;

/// How the learner runs.
#[derive(Clone, Debug)]
pub struct LearnerOptions {
    /// How messages name the run.
    pub name: String,
    /// Continue an existing run (`koma learner` always does; `koma train` with `--resume`).
    pub resume: bool,
    /// A new run starts from this network (checkpoint or model file) instead of fresh weights.
    pub init: Option<PathBuf>,
    pub max_minutes: Option<f64>,
    pub max_steps: Option<u64>,
    pub progress: bool,
    /// How often the store is listed for new chunks.
    pub poll: Duration,
    /// Set by SIGINT/SIGTERM: also ends the start-up (refilling a large replay window).
    pub stop: Arc<AtomicBool>,
    /// How long to wait for the run's lease while another learner holds it (zero:
    /// refuse at once). One learner per run: see `store::lease` for the timing.
    pub lease_wait: Duration,
}

/// Self-play in the learner's process (`koma train`).
struct LocalWorker {
    selfplay: SelfplayThread,
    sink: Arc<ChunkSink>,
    device: Device,
}

pub struct LearnerRole {
    files: RunFiles,
    /// This learner's hold on the run: renewed before every write of its state.
    lease: KeptLease,
    cfg: TrainFileConfig,
    tcfg: TrainConfig,
    state: RunState,
    trainer: NetTrainer,
    replay: Arc<Mutex<Replay>>,
    loader: Option<Loader>,
    log: TrainLog,
    display: Display,
    evals: EvalSchedule,
    feed: Arc<LocalFeed>,
    local: Vec<LocalWorker>,
    opts: LearnerOptions,
    session: Instant,
    base_elapsed: f64,
    last_poll: Instant,
    last_ckpt_step: Option<u64>,
    /// The step this session started at.
    first_step: u64,
    session_seed: u64,
    fresh: bool,
}

impl LearnerRole {
    /// Takes the run's lease (refused while another learner holds it), then opens the run:
    /// a new one (writes `cfg` into it, saves and publishes step 0) or the newest complete
    /// checkpoint of an existing one. `cfg` `None` reads the run's config.
    pub fn open(
        files: RunFiles,
        cfg: Option<TrainFileConfig>,
        opts: LearnerOptions,
    ) -> Result<LearnerRole, TrainError> {
        let display = Display::new(opts.progress);
        let lease = startup::take_lease(&files, opts.lease_wait, &opts.stop, &display)?;
        let prior = resume_point(&files, opts.resume)?;
        let given = cfg.is_some();
        let cfg = match cfg {
            Some(c) => c,
            None => startup::run_config(&files)?,
        };
        let tcfg = with_limits(&cfg.train, opts.max_minutes, opts.max_steps)?;
        let fresh = prior.is_none();
        let state = startup::start_state(prior, &cfg, &opts.name)?;
        if given {
            // The run's config, for the workers: written once it is known to fit the run.
            files.store.put(layout::CONFIG, cfg.text.clone().into_bytes())?;
        }
        let device = startup::learner_device(&cfg)?;
        let trainer = startup::build_trainer(&files, &cfg, &tcfg, &state, opts.init.as_deref(), device, &display)?;
        let (plan, warnings) =
            TrainingEval::new(&cfg.eval, &cfg.base.search, cfg.base.variant, &files.path("engines"))?;
        for w in &warnings {
            display.println(&format!("koma train: {w}"));
        }
        let tb = TensorBoardLog::new(files.path(layout::TB))
            .map_err(|source| TrainError::Io { path: files.path(layout::TB), source })?;
        if !files.is_local() {
            let _ = files.pull(layout::EVAL_LOG);
        }
        let now = Instant::now();
        let mut role = LearnerRole {
            replay: Arc::new(Mutex::new(startup::replay_window(&tcfg, &state))),
            loader: None,
            log: TrainLog::new(tb, trainer.step),
            evals: EvalSchedule::new(cfg.eval.clone(), plan),
            feed: Arc::new(LocalFeed::default()),
            local: Vec::new(),
            session: now,
            base_elapsed: state.elapsed_seconds,
            last_poll: now - Duration::from_secs(3600),
            last_ckpt_step: None,
            first_step: trainer.step,
            session_seed: startup::session_seed(&state),
            fresh,
            files,
            lease,
            cfg,
            tcfg,
            state,
            trainer,
            display,
            opts,
        };
        role.start()?;
        Ok(role)
    }

    /// The run's files.
    pub fn files(&self) -> &RunFiles {
        &self.files
    }

    pub fn config(&self) -> &TrainFileConfig {
        &self.cfg
    }

    /// Reads the records to mix in, refills the window (resume) or saves step 0 (new
    /// run), then starts the loader.
    fn start(&mut self) -> Result<(), TrainError> {
        // Records that cannot be read stop the learner before the run's first checkpoint.
        let encoder = startup::batch_encoder(&self.trainer, &self.cfg);
        let mix = startup::record_mix(&self.tcfg, &encoder, &self.display)?;
        if self.fresh {
            self.checkpoint()?;
        } else {
            // The checkpoint of this step exists: never write it again.
            self.last_ckpt_step = Some(self.state.step);
            let stop = self.opts.stop.clone();
            startup::refill(&self.files, &self.state, &self.replay, &self.cfg, &stop, &self.opts.name, &self.display)?;
        }
        self.take_from_store(false)?;
        let sources = Sources { window: self.replay.clone(), mix };
        self.loader = Some(startup::spawn_loader(sources, encoder, &self.trainer, &self.tcfg, self.session_seed));
        Ok(())
    }

    /// Adds self-play in this process on `device`, playing with the learner's network.
    pub fn add_local_worker(&mut self, index: usize, device: &str) -> Result<(), TrainError> {
        let device_t = parse_device(device)?;
        let mut sp_cfg: SelfplayFileConfig = self.cfg.base.clone();
        sp_cfg.selfplay.device = device.to_string();
        let resumes = (self.state.resumes as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        sp_cfg.selfplay.seed = (self.state.selfplay_seed ^ resumes ^ (index as u64).wrapping_mul(0x2545_F491)) | 1;
        let id = if index == 0 { "sp".to_string() } else { format!("sp{index}") };
        let uploader = Uploader::spawn(self.files.store.clone(), self.files.path(&format!("spool/{id}")));
        let per_chunk = sp_cfg.selfplay.samples_per_chunk;
        let feed = Some(self.feed.clone());
        let sink = Arc::new(ChunkSink::new(&id, sp_cfg.variant, per_chunk, uploader, feed));
        let ev = evaluator_of(self.trainer.playing_net(), device_t, self.tcfg.precision.inference())?;
        let selfplay = SelfplayThread::start(&sp_cfg, ev, sink.clone(), u64::MAX, &id)?;
        self.local.push(LocalWorker { selfplay, sink, device: device_t });
        Ok(())
    }

    fn elapsed(&self) -> f64 {
        self.base_elapsed + self.session.elapsed().as_secs_f64()
    }

    /// Why to stop now, if so.
    fn stop_reason(&self, stop: &AtomicBool) -> Option<String> {
        if stop.load(Ordering::SeqCst) {
            return Some("interrupted".into());
        }
        if let Some(e) = self.local.iter().find_map(|w| w.selfplay.error()) {
            return Some(format!("self-play failed: {e}"));
        }
        let t = &self.tcfg;
        if t.max_steps > 0 && self.trainer.step >= t.max_steps {
            return Some(format!("reached max_steps {}", t.max_steps));
        }
        if t.max_minutes > 0.0 && self.elapsed() >= t.max_minutes * 60.0 {
            return Some(format!("reached max_minutes {}", t.max_minutes));
        }
        None
    }

    /// Samples from self-play in this process: straight into the window.
    fn take_feed(&mut self) {
        let batch = self.feed.take();
        let n = batch.samples.len() as u64;
        self.state.samples_generated += n;
        if n > 0 {
            let mut replay = self.replay.lock().unwrap_or_else(|e| e.into_inner());
            replay.grow_to(self.state.samples_generated);
            replay.extend(batch.samples);
        }
        self.state.games += batch.games;
        for (name, k) in batch.chunks {
            *self.state.samples_by_worker.entry(layout::chunk_worker(&name).to_string()).or_default() += k;
            self.state.chunks.insert(name);
        }
    }

    /// Takes in the chunks new in the store, at most once per poll interval unless `now`.
    fn take_from_store(&mut self, now: bool) -> Result<(), TrainError> {
        if !now && self.last_poll.elapsed() < self.opts.poll {
            return Ok(());
        }
        self.last_poll = Instant::now();
        let skip: Vec<String> = self.local.iter().map(|w| w.sink.prefix.clone()).collect();
        let intake = match take_in(&self.files, &mut self.state, &self.replay, &skip, self.cfg.base.variant) {
            Ok(i) => i,
            Err(e) => {
                // A store that is down for a while: keep training on the window.
                self.display.warn(&format!("koma: warning: cannot list new samples: {e}"));
                return Ok(());
            }
        };
        for w in intake.rejected.iter().chain(&intake.deferred) {
            self.display.warn(&format!("koma: warning: {w}"));
        }
        if !intake.rejected.is_empty() {
            self.log.tb.scalar(tags::SKIPPED_CHUNKS, self.state.rejected_chunks.len() as f64, self.trainer.step);
        }
        Ok(())
    }

    fn in_window(&self) -> usize {
        self.replay.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The replay window's size now (it may grow with the run).
    fn window_size(&self) -> usize {
        self.replay.lock().unwrap_or_else(|e| e.into_inner()).capacity()
    }

    fn show_status(&self, what: &str) {
        let what = if self.evals.busy() { format!("{what}, evaluating") } else { what.to_string() };
        let line = self.log.status(&self.state, self.local_games(), self.in_window(), self.elapsed(), &what);
        self.display.show(self.trainer.step, &line);
    }

    /// Games of self-play in this process, all sessions; `None` for a learner that never
    /// had any (its samples come from workers, whose chunks carry no game count).
    fn local_games(&self) -> Option<u64> {
        (!self.local.is_empty() || self.state.games > 0).then_some(self.state.games)
    }

    /// Training may go on: the window is full enough and the ratio leaves room.
    fn train_allowed(&self) -> bool {
        let t = &self.tcfg;
        self.in_window() >= t.min_replay.max(1)
            && (self.state.samples_trained + t.batch_size as u64) as f64
                <= t.train_ratio * self.state.samples_generated as f64
    }

    /// Trains until stopped or a limit is reached; returns why it stopped.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<String, TrainError> {
        if self.fresh && self.evals.due(0) {
            self.start_evaluation();
        }
        loop {
            if let Some(reason) = self.stop_reason(stop) {
                return Ok(reason);
            }
            // A learner whose run was taken over stops before it writes anything more.
            self.lease.check()?;
            self.log.report_tb_error(&self.display);
            self.take_feed();
            self.take_from_store(false)?;
            self.collect_evaluation()?;
            if !self.train_allowed() {
                self.show_status("waiting for self-play");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            self.train_one()?;
        }
    }

    /// One optimiser step, then the scalars, checkpoint and evaluation that fall due.
    /// The step does not wait for the device: its statistics are read once per log
    /// interval and before every checkpoint (so a non-finite loss stops the run before
    /// any weights that saw it are saved).
    fn train_one(&mut self) -> Result<(), TrainError> {
        self.update_time_spent();
        let loader = self.loader.as_mut().expect("loader started");
        let Some(batch) = loader.next(Duration::from_secs(1)) else { return Ok(()) };
        let t = Instant::now();
        self.trainer.train_step_deferred(&batch);
        loader.set_step(self.trainer.step);
        self.log.add_train_seconds(t.elapsed().as_secs_f64());
        self.state.samples_trained += batch.n as u64;
        self.show_status("training");
        let step = self.trainer.step;
        let eval_due = self.evals.due(step);
        let checkpoint_due = step % self.tcfg.checkpoint_interval == 0 || eval_due;
        let log_due = step % self.tcfg.log_interval == 0;
        if log_due || checkpoint_due {
            self.log.add_stats(self.trainer.take_stats()?);
        }
        if log_due {
            self.log_scalars();
        }
        if checkpoint_due {
            self.checkpoint()?;
            if eval_due {
                self.start_evaluation();
            }
        }
        Ok(())
    }

    /// The share of `max_minutes` spent, which the cosine learning rate and
    /// `swa_share`'s stretch read (stays 0 without a clock).
    fn update_time_spent(&mut self) {
        if self.tcfg.max_minutes > 0.0 {
            self.trainer.time_spent = self.elapsed() / (self.tcfg.max_minutes * 60.0);
        }
    }

    fn loader_wait_seconds(&self) -> f64 {
        self.loader.as_ref().map_or(0.0, |l| l.wait_seconds)
    }

    fn log_scalars(&mut self) {
        let counters = Counters {
            step: self.trainer.step,
            state: &self.state,
            loader_wait_seconds: self.loader_wait_seconds(),
            selfplay: self.local.first().map(|w| w.selfplay.progress()),
            replay_window: self.window_size(),
            material_mix: self.tcfg.material_fade().at(self.trainer.step),
        };
        self.log.scalars(&counters, &self.files, &self.display);
    }

    /// Saves a checkpoint of the current step, publishes its network and hands it to the
    /// self-play in this process.
    fn checkpoint(&mut self) -> Result<(), TrainError> {
        for w in &self.local {
            w.sink.flush();
        }
        self.take_feed();
        let step = self.trainer.step;
        self.state.step = step;
        self.state.checkpoint = checkpoint_stem(step);
        self.state.elapsed_seconds = self.elapsed();
        if self.tcfg.in_swa_stretch(step, self.trainer.time_spent) {
            self.trainer.take_snapshot();
        }
        self.lease.renew_now()?;
        save_learner_checkpoint(&self.files, &self.trainer, &self.state, self.cfg.leaf_material())?;
        if let Published::Newer(newer) = publish_model(&self.files, step)? {
            self.display.warn(&format!(
                "koma: warning: {}/{} names step {newer}, newer than this learner's {step}: left as it is \
                 (a published step never goes back)",
                self.files.describe(),
                layout::LATEST_MODEL
            ));
        }
        write_state(&self.files, &self.state)?;
        prune(&self.files, self.tcfg.keep_checkpoints, self.state.eval_checkpoint.as_deref())?;
        self.last_ckpt_step = Some(step);
        for w in &self.local {
            w.selfplay.replace_network(evaluator_of(
                self.trainer.playing_net(),
                w.device,
                self.tcfg.precision.inference(),
            )?)?;
        }
        Ok(())
    }

    /// Starts the evaluation of the checkpoint just saved.
    fn start_evaluation(&mut self) {
        let checkpoint = self.state.checkpoint.clone();
        self.start_evaluation_of(self.trainer.step, &checkpoint);
    }

    /// Starts the evaluation of the checkpoint `checkpoint` of step `step`.
    fn start_evaluation_of(&mut self, step: u64, checkpoint: &str) {
        let target = EvalTarget {
            files: &self.files,
            state: &self.state,
            variant: self.cfg.base.variant,
            checkpoint,
            step,
            seed: self.session_seed ^ step.wrapping_mul(0x2545_F491_4F6C_DD1D),
            games: self.cfg.eval.games_for(step == self.trainer.step),
            device: self.trainer.device(),
        };
        self.evals.start(target, &self.display);
    }

    /// Records a finished evaluation; its checkpoint becomes the `previous` baseline.
    fn collect_evaluation(&mut self) -> Result<(), TrainError> {
        let elapsed = self.elapsed();
        let Some(outcome) = self.evals.collect(&self.files, &mut self.log.tb, &self.display, elapsed) else {
            return Ok(());
        };
        self.log.push(&self.files, &self.display);
        self.state.eval_checkpoint = Some(outcome.checkpoint.clone());
        self.state.last_eval_step = Some(outcome.report.step);
        self.lease.renew_now()?;
        write_state(&self.files, &self.state)
    }

    /// Stops self-play in this process and the evaluation, then saves the last step and
    /// summarises the run; or, when training failed (`outcome` an error), keeps the
    /// samples, saves no weights (the last checkpoint holds the last good ones) and returns
    /// the error.
    pub fn finish(mut self, outcome: Result<String, TrainError>) -> Result<TrainSummary, TrainError> {
        let had_local = !self.local.is_empty();
        let last_eval = self.evals.finish();
        let loader_wait_fraction = self.log.loader_wait_fraction(self.loader_wait_seconds());
        for w in std::mem::take(&mut self.local) {
            w.selfplay.stop();
            w.sink.finish();
        }
        self.take_feed();
        self.loader = None;
        let stop_reason = match outcome {
            Ok(reason) => reason,
            Err(e) => {
                self.log.tb.flush();
                // A learner whose run was taken over writes nothing more to it.
                if !matches!(e, TrainError::Lease(_)) {
                    self.log.push(&self.files, &self.display);
                }
                self.display.finish();
                return Err(e);
            }
        };
        self.save_last()?;
        let reached_limit = stop_reason.starts_with("reached");
        let last_eval =
            if reached_limit && self.evals.config().at_end { self.final_evaluation(last_eval)? } else { last_eval };
        let ladder = ladder_by_step(&self.files.path(layout::EVAL_LOG));
        self.log.read_worker_games(&self.files);
        self.log.report_tb_error(&self.display);
        self.log.close(&self.files, &self.display);
        self.display.finish();
        Ok(TrainSummary {
            run_dir: self.files.dir().to_path_buf(),
            stop_reason,
            step: self.trainer.step,
            games: (had_local || self.state.games > 0).then_some(self.state.games),
            worker_games: self.log.worker_games(),
            samples_generated: self.state.samples_generated,
            samples_trained: self.state.samples_trained,
            elapsed_seconds: self.state.elapsed_seconds,
            checkpoint: self.state.checkpoint.clone(),
            last_eval,
            ladder,
            loader_wait_fraction,
        })
    }

    /// `eval.at_end`: evaluates the checkpoints of `eval.at_end_points` one after the
    /// other, self-play and training stopped, and waits for them (Ctrl-C abandons them).
    /// Returns the last evaluation's results, or `earlier` if none finished.
    fn final_evaluation(&mut self, earlier: Vec<(String, u64, Wdl)>) -> Result<Vec<(String, u64, Wdl)>, TrainError> {
        let steps = self.at_end_steps()?;
        // Self-play and training have stopped: the evaluation's forward passes take every core.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        model::set_torch_threads(cores, model::CpuShare::Whole);
        let listed: Vec<String> = steps.iter().map(u64::to_string).collect();
        self.display.println(&format!("koma train: evaluating the checkpoints of steps {}", listed.join(", ")));
        for step in steps {
            if self.opts.stop.load(Ordering::SeqCst) {
                break;
            }
            self.start_evaluation_of(step, &checkpoint_stem(step));
            while self.evals.busy() && !self.opts.stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
                self.collect_evaluation()?;
            }
        }
        let last = self.evals.finish();
        Ok(if last.is_empty() { earlier } else { last })
    }

    /// The steps `eval.at_end` evaluates: `eval.at_end_points` checkpoints spread over the
    /// run, less those `eval.jsonl` already holds.
    fn at_end_steps(&self) -> Result<Vec<u64>, TrainError> {
        let saved = saved_steps(&self.files, layout::CHECKPOINTS)?;
        let log = crate::evaluation::chart::read_eval_log(&self.files.path(layout::EVAL_LOG)).unwrap_or_default();
        let points = spread(&saved, self.cfg.eval.at_end_points);
        Ok(points.into_iter().filter(|s| !log.iter().any(|r| r.step == *s)).collect())
    }

    /// `train.swa_share`: the last step's weights join the snapshots (when its stretch
    /// has begun) and the network becomes their mean; true if it did. A session that
    /// trained no step leaves the run's last checkpoint as it is.
    fn settle_on_snapshot_mean(&mut self) -> bool {
        if self.trainer.step == self.first_step {
            return false;
        }
        self.update_time_spent();
        if self.tcfg.in_swa_stretch(self.trainer.step, self.trainer.time_spent) {
            self.trainer.take_snapshot();
        }
        let Some((count, first)) = self.trainer.settle_on_snapshot_mean() else { return false };
        self.display.println(&format!(
            "koma train: the last checkpoint holds the mean of the weights at {count} checkpoints, steps {first} \
             to {} (train.swa_share = {})",
            self.trainer.step, self.tcfg.swa_share
        ));
        true
    }

    /// After a clean stop: the last step's checkpoint (unless it is saved, and the
    /// network did not become an average since) and state.
    fn save_last(&mut self) -> Result<(), TrainError> {
        // What the workers uploaded last is taken in too, so that after a clean stop the
        // consumed chunks are the chunks present (they wait in the window for a resume).
        self.take_from_store(true)?;
        let settled = self.settle_on_snapshot_mean();
        if settled || self.last_ckpt_step != Some(self.trainer.step) {
            self.checkpoint()
        } else {
            self.state.elapsed_seconds = self.elapsed();
            self.lease.renew_now()?;
            write_state(&self.files, &self.state)
        }
    }
}
