//! The learner role: takes in sample chunks, keeps the replay window, trains at the
//! configured ratio of samples trained per sample generated, writes checkpoints,
//! publishes networks for the workers, logs TensorBoard scalars and runs the periodic
//! evaluation in the background. `koma learner` runs it alone; `koma train` adds
//! self-play threads in the same process ([`LearnerRole::add_local_worker`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arena::Wdl;
use model::encoding::Encoder;
use model::tch::Device;
use model::{load_net, parse_device, Expected, Net};
use selfplay::SelfplayFileConfig;

use super::display::Display;
use super::evaluation::{EvalJob, EvalOutcome, EvalRunner};
use super::files::RunFiles;
use super::intake::{refill_window, take_in};
use super::layout::{self, checkpoint_stem};
use super::network::{evaluator_of, load_network, publish_model, pull_network, save_learner_checkpoint};
use super::selfplay::{ChunkSink, LocalFeed, SelfplayThread};
use super::state::{resume_point, write_state, RunState};
use super::uploader::Uploader;
use super::worker::WorkerReport;
use crate::config::{ConfigError, TrainConfig, TrainFileConfig};
use crate::eval::TrainingEval;
use crate::learner::{Learner, StepStats};
use crate::replay::{Loader, PolicyTargets, Replay, ValueTargets};
use crate::run::{optim_path, TrainError, TrainSummary};
use crate::tb::{tags, Tb};

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
}

fn clock_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1
}

/// Self-play in the learner's process (`koma train`).
struct LocalWorker {
    selfplay: SelfplayThread,
    sink: Arc<ChunkSink>,
    device: Device,
}

/// Running means and rates between two TensorBoard writes.
struct LogStats {
    acc: StepStats,
    acc_n: u64,
    /// Log intervals whose every step was skipped (f16 overflow).
    skipped: u64,
    last_loss: f64,
    train_seconds: f64,
    last_log: (Instant, u64),
    last_poll: Instant,
    last_workers: Instant,
}

pub struct LearnerRole {
    files: RunFiles,
    cfg: TrainFileConfig,
    tcfg: TrainConfig,
    state: RunState,
    learner: Learner,
    replay: Arc<Mutex<Replay>>,
    loader: Option<Loader>,
    tb: Tb,
    display: Display,
    eval: EvalRunner,
    eval_plan: Arc<TrainingEval>,
    feed: Arc<LocalFeed>,
    local: Vec<LocalWorker>,
    opts: LearnerOptions,
    session: Instant,
    base_elapsed: f64,
    stats: LogStats,
    last_eval: Vec<(String, u64, Wdl)>,
    last_ckpt_step: Option<u64>,
    session_seed: u64,
    fresh: bool,
}

impl LearnerRole {
    /// Opens the run: a new one (writes `cfg` into it, saves and publishes step 0) or the
    /// newest complete checkpoint of an existing one. `cfg` `None` reads the run's config.
    pub fn open(
        files: RunFiles,
        cfg: Option<TrainFileConfig>,
        opts: LearnerOptions,
    ) -> Result<LearnerRole, TrainError> {
        let prior = resume_point(&files, opts.resume)?;
        let given = cfg.is_some();
        let cfg = match cfg {
            Some(c) => c,
            None => run_config(&files)?,
        };
        let tcfg = with_limits(&cfg.train, opts.max_minutes, opts.max_steps)?;
        let fresh = prior.is_none();
        let state = start_state(prior, &cfg, &opts.name)?;
        if given {
            // The run's config, for the workers: written once it is known to fit the run.
            files.store.put(layout::CONFIG, cfg.text.clone().into_bytes())?;
        }
        let device = learner_device(&cfg)?;
        let mut display = Display::new(opts.progress);
        let learner = build_learner(&files, &cfg, &tcfg, &state, opts.init.as_deref(), device, &mut display)?;
        let (eval_plan, eval_warnings) =
            TrainingEval::new(&tcfg, &cfg.base.search, cfg.base.variant, &files.path("engines"))
                .map_err(TrainError::Run)?;
        for w in &eval_warnings {
            display.println(&format!("koma train: {w}"));
        }
        let tb = Tb::new(files.path(layout::TB))
            .map_err(|source| TrainError::Io { path: files.path(layout::TB), source })?;
        if !files.is_local() {
            let _ = files.pull(layout::EVAL_LOG);
        }
        let session_seed = state.learner_seed ^ (state.resumes as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let now = Instant::now();
        let mut role = LearnerRole {
            replay: Arc::new(Mutex::new(Replay::new(tcfg.replay_window))),
            loader: None,
            eval: EvalRunner::default(),
            eval_plan: Arc::new(eval_plan),
            feed: Arc::new(LocalFeed::default()),
            local: Vec::new(),
            session: now,
            base_elapsed: state.elapsed_seconds,
            stats: LogStats {
                acc: StepStats::default(),
                acc_n: 0,
                skipped: 0,
                last_loss: f64::NAN,
                train_seconds: 0.0,
                last_log: (now, learner.step),
                last_poll: now - Duration::from_secs(3600),
                last_workers: now - Duration::from_secs(3600),
            },
            last_eval: Vec::new(),
            last_ckpt_step: None,
            session_seed,
            fresh,
            files,
            cfg,
            tcfg,
            state,
            learner,
            tb,
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

    /// Refills the window (resume) or saves step 0 (new run), then starts the loader.
    fn start(&mut self) -> Result<(), TrainError> {
        let variant = self.cfg.base.variant;
        let stop = self.opts.stop.clone();
        if self.fresh {
            self.checkpoint()?;
        } else {
            // The checkpoint of this step exists: never write it again.
            self.last_ckpt_step = Some(self.state.step);
            let loaded = refill_window(&self.files, &self.state, &self.replay, variant, &stop)?;
            eprintln!(
                "koma: resuming run `{}` at step {} ({} chunks taken in, {} samples in the replay window)",
                self.opts.name,
                self.state.step,
                self.state.chunks.len(),
                loaded
            );
        }
        self.take_from_store(false)?;
        let encoder = Encoder::for_net(variant, self.learner.net.config());
        let t = &self.tcfg;
        // On a GPU the dense policy targets are made on the device from sparse pairs.
        let targets = if self.learner.device().is_cuda() { PolicyTargets::Sparse } else { PolicyTargets::Dense };
        self.loader = Some(Loader::spawn_with_targets(
            self.replay.clone(),
            encoder,
            t.batch_size,
            t.prefetch,
            ValueTargets::from_config(t),
            self.session_seed,
            targets,
        ));
        Ok(())
    }

    /// Adds self-play in this process on `device`, playing with the learner's network.
    pub fn add_local_worker(&mut self, index: usize, device: &str) -> Result<(), TrainError> {
        let device_t = parse_device(device)?;
        let mut sp_cfg: SelfplayFileConfig = self.cfg.base.clone();
        sp_cfg.selfplay.device = device.to_string();
        let resumes = (self.state.resumes as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        sp_cfg.selfplay.seed = (self.state.selfplay_seed ^ resumes ^ (index as u64).wrapping_mul(0x2545_F491)) | 1;
        let encoder = Encoder::for_net(sp_cfg.variant, self.learner.net.config());
        let id = if index == 0 { "sp".to_string() } else { format!("sp{index}") };
        let uploader = Uploader::spawn(self.files.store.clone(), self.files.path(&format!("spool/{id}")));
        let per_chunk = sp_cfg.selfplay.samples_per_chunk;
        let feed = Some(self.feed.clone());
        let sink = Arc::new(ChunkSink::new(&id, sp_cfg.variant, &encoder, per_chunk, uploader, feed));
        let ev = evaluator_of(&self.learner.net, device_t, self.tcfg.precision.inference())?;
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
        if t.max_steps > 0 && self.learner.step >= t.max_steps {
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
        if n > 0 {
            self.replay.lock().unwrap_or_else(|e| e.into_inner()).extend(batch.samples);
        }
        self.state.samples_generated += n;
        self.state.games += batch.games;
        for (name, k) in batch.chunks {
            *self.state.samples_by_worker.entry(layout::chunk_worker(&name).to_string()).or_default() += k;
            self.state.chunks.insert(name);
        }
    }

    /// New chunks in the store (at most every `poll`).
    /// Takes in the chunks new in the store, at most once per poll interval unless `now`.
    fn take_from_store(&mut self, now: bool) -> Result<(), TrainError> {
        if !now && self.stats.last_poll.elapsed() < self.opts.poll {
            return Ok(());
        }
        self.stats.last_poll = Instant::now();
        let skip: Vec<String> = self.local.iter().map(|w| w.sink.prefix.clone()).collect();
        let intake = match take_in(&self.files, &mut self.state, &self.replay, &skip, self.cfg.base.variant) {
            Ok(i) => i,
            Err(e) => {
                // A store that is down for a while: keep training on the window.
                self.display.warn(&format!("koma: warning: cannot list new samples: {e}"));
                return Ok(());
            }
        };
        for w in &intake.rejected {
            self.display.warn(&format!("koma: warning: {w}"));
        }
        if !intake.rejected.is_empty() {
            self.tb.scalar(tags::SKIPPED_CHUNKS, self.state.rejected_chunks.len() as f64, self.learner.step);
        }
        Ok(())
    }

    fn status(&self, what: &str) -> String {
        let in_window = self.replay.lock().unwrap_or_else(|e| e.into_inner()).len();
        let what = if self.eval.busy() { format!("{what}, evaluating") } else { what.to_string() };
        format!(
            "step {} | {} games, {} samples ({in_window} in window) | {} trained | loss {:.3} | {:.1} min | {what}",
            self.learner.step,
            self.state.games,
            self.state.samples_generated,
            self.state.samples_trained,
            self.stats.last_loss,
            self.elapsed() / 60.0
        )
    }

    /// Training may go on: the window is full enough and the ratio leaves room.
    fn train_allowed(&self) -> bool {
        let t = &self.tcfg;
        let in_window = self.replay.lock().unwrap_or_else(|e| e.into_inner()).len();
        in_window >= t.min_replay.max(1)
            && (self.state.samples_trained + t.batch_size as u64) as f64
                <= t.train_ratio * self.state.samples_generated as f64
    }

    /// Trains until stopped or a limit is reached; returns why it stopped.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<String, TrainError> {
        if self.fresh && self.tcfg.eval_interval > 0 {
            self.start_evaluation();
        }
        loop {
            if let Some(reason) = self.stop_reason(stop) {
                return Ok(reason);
            }
            self.take_feed();
            self.take_from_store(false)?;
            self.collect_evaluation()?;
            if !self.train_allowed() {
                let line = self.status("waiting for self-play");
                self.display.show(&line, false);
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
        let loader = self.loader.as_mut().expect("loader started");
        let Some(batch) = loader.next(Duration::from_secs(1)) else { return Ok(()) };
        let t = Instant::now();
        self.learner.train_step_deferred(&batch);
        self.stats.train_seconds += t.elapsed().as_secs_f64();
        self.state.samples_trained += batch.n as u64;
        let line = self.status("training");
        self.display.show(&line, false);
        let step = self.learner.step;
        let eval_due = self.tcfg.eval_interval > 0 && step % self.tcfg.eval_interval == 0;
        let checkpoint_due = step % self.tcfg.checkpoint_interval == 0 || eval_due;
        if step % self.tcfg.log_interval == 0 || checkpoint_due {
            self.read_stats()?;
        }
        if step % self.tcfg.log_interval == 0 {
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

    /// The means of the steps since the last read (one transfer from the device).
    fn read_stats(&mut self) -> Result<(), TrainError> {
        match self.learner.take_stats()? {
            Some(st) if st.skipped => self.stats.skipped += 1,
            Some(st) => {
                self.stats.acc.add(&st);
                self.stats.acc_n += 1;
                self.stats.last_loss = st.loss;
            }
            None => {}
        }
        Ok(())
    }

    fn loader_wait_fraction(&self) -> f64 {
        let wait = self.loader.as_ref().map_or(0.0, |l| l.wait_seconds);
        wait / (wait + self.stats.train_seconds).max(1e-9)
    }

    /// The learner's, self-play's and the workers' scalars.
    fn log_scalars(&mut self) {
        let step = self.learner.step;
        if self.stats.acc_n > 0 {
            let m = self.stats.acc.scaled(1.0 / self.stats.acc_n as f64);
            self.tb.step_stats(&m, step);
        }
        self.tb.scalar(tags::LOADER_WAIT, self.loader_wait_fraction(), step);
        let dt = self.stats.last_log.0.elapsed().as_secs_f64();
        self.tb.scalar(tags::STEPS_PER_SEC, (step - self.stats.last_log.1) as f64 / dt.max(1e-9), step);
        self.stats.last_log = (Instant::now(), step);
        if let Some(w) = self.local.first() {
            let p = w.selfplay.progress();
            let hours = p.elapsed.as_secs_f64() / 3600.0;
            if hours > 0.0 {
                self.tb.scalar(tags::GAMES_PER_HOUR, p.games_done as f64 / hours, step);
                self.tb.scalar(tags::EVALS_PER_SEC, p.evals_per_sec(), step);
            }
            if p.games_done > 0 {
                self.tb.scalar(tags::MEAN_GAME_LENGTH, p.mean_game_length(), step);
            }
            if let Some(r) = p.false_resign_rate() {
                self.tb.scalar(tags::FALSE_RESIGN_RATE, r, step);
            }
        }
        let generated = self.state.samples_generated;
        self.tb.scalar(tags::SAMPLES_GENERATED, generated as f64, step);
        self.tb.scalar(tags::TRAIN_RATIO, self.state.samples_trained as f64 / generated.max(1) as f64, step);
        self.tb.scalar(tags::SKIPPED_CHUNKS, self.state.rejected_chunks.len() as f64, step);
        self.log_workers(step);
        self.tb.flush();
        self.stats.acc = StepStats::default();
        self.stats.acc_n = 0;
    }

    /// Samples per worker, and the throughput that each worker reports in `workers/`.
    fn log_workers(&mut self, step: u64) {
        for (id, n) in &self.state.samples_by_worker {
            self.tb.scalar(&format!("{}{id}", tags::SAMPLES_FROM), *n as f64, step);
        }
        if self.stats.last_workers.elapsed() < Duration::from_secs(30) {
            return;
        }
        self.stats.last_workers = Instant::now();
        for e in self.files.store.list(layout::WORKERS).unwrap_or_default() {
            let Ok(Some(bytes)) = self.files.store.get(&e.key) else { continue };
            let Ok(r) = serde_json::from_slice::<WorkerReport>(&bytes) else { continue };
            self.tb.scalar(&format!("workers/{}/games_per_hour", r.worker_id), r.games_per_hour, step);
            self.tb.scalar(&format!("workers/{}/evaluations_per_second", r.worker_id), r.evaluations_per_second, step);
        }
        self.push_tb();
    }

    /// Uploads the TensorBoard files of a remote run.
    fn push_tb(&self) {
        if self.files.is_local() {
            return;
        }
        let Ok(rd) = std::fs::read_dir(self.tb.dir()) else { return };
        for e in rd.filter_map(|e| e.ok()) {
            let key = format!("{}/{}", layout::TB, e.file_name().to_string_lossy());
            if let Err(err) = self.files.push(&key) {
                eprintln!("koma learner: TensorBoard upload: {err}");
            }
        }
    }

    /// Saves a checkpoint of the current step, publishes its network and hands it to the
    /// self-play in this process.
    fn checkpoint(&mut self) -> Result<(), TrainError> {
        for w in &self.local {
            w.sink.flush();
        }
        self.take_feed();
        let step = self.learner.step;
        self.state.step = step;
        self.state.checkpoint = checkpoint_stem(step);
        self.state.elapsed_seconds = self.elapsed();
        save_learner_checkpoint(&self.files, &self.learner, &self.state)?;
        publish_model(&self.files, step)?;
        write_state(&self.files, &self.state)?;
        super::network::prune(&self.files, self.tcfg.keep_checkpoints, self.state.eval_checkpoint.as_deref())?;
        self.last_ckpt_step = Some(step);
        for w in &self.local {
            w.selfplay.replace_network(evaluator_of(&self.learner.net, w.device, self.tcfg.precision.inference())?)?;
        }
        Ok(())
    }

    /// Starts the evaluation of the checkpoint just saved (unless one is still running).
    fn start_evaluation(&mut self) {
        if self.eval.busy() {
            self.display
                .println(&format!("koma train: evaluation @{} skipped: the last one still runs", self.learner.step));
            return;
        }
        let previous = match self.state.eval_checkpoint.as_deref() {
            Some(p) if self.eval_plan.wants_previous() => pull_network(&self.files, p).ok(),
            _ => None,
        };
        let job = EvalJob {
            plan: self.eval_plan.clone(),
            variant: self.cfg.base.variant,
            step: self.learner.step,
            ours: self.files.path(&self.state.checkpoint),
            checkpoint: self.state.checkpoint.clone(),
            previous,
            seed: self.session_seed ^ self.learner.step.wrapping_mul(0x2545_F491_4F6C_DD1D),
            device: self.learner.device(),
            // Bars would fight the status line on a terminal; in a log they are plain lines.
            show: self.display.enabled() && !self.display.is_terminal(),
        };
        self.eval.start(job);
    }

    /// Records a finished evaluation: TensorBoard, `eval.jsonl`, the plots, the `previous`
    /// baseline.
    fn collect_evaluation(&mut self) -> Result<(), TrainError> {
        let outcome = match self.eval.poll() {
            None => return Ok(()),
            Some(Err(e)) => {
                self.display.warn(&format!("koma train: evaluation failed: {e}"));
                return Ok(());
            }
            Some(Ok(o)) => o,
        };
        for n in &outcome.notes {
            self.display.println(&format!("koma train: {n}"));
        }
        if outcome.report.stopped {
            // A partial match is no measurement.
            self.display.println(&format!("eval @{}: stopped", outcome.report.step));
            return Ok(());
        }
        self.record_evaluation(&outcome);
        self.state.eval_checkpoint = Some(outcome.checkpoint.clone());
        self.state.last_eval_step = Some(outcome.report.step);
        write_state(&self.files, &self.state)
    }

    fn record_evaluation(&mut self, o: &EvalOutcome) {
        let report = &o.report;
        let log = self.files.path(layout::EVAL_LOG);
        let elapsed = self.elapsed();
        if let Err(e) = report.write(&mut self.tb, &log, elapsed) {
            self.display.println(&format!("koma train: writing {}: {e}", log.display()));
        }
        self.display.println(&report.line());
        match crate::elo_plot::plot_run(self.files.dir()) {
            Ok(_) | Err(crate::elo_plot::RunPlotError::NoLadderGames { .. }) => {}
            Err(e) => self.display.println(&format!("koma train: plot: {e}")),
        }
        for r in &report.results {
            self.last_eval.retain(|(n, ..)| *n != r.name);
            self.last_eval.push((r.name.clone(), report.step, r.outcome.wdl));
        }
        for key in [layout::EVAL_LOG, "elo.png", "elo.svg"] {
            if self.files.path(key).exists() {
                let _ = self.files.push(key);
            }
        }
        self.push_tb();
    }

    /// Stops self-play in this process and the evaluation, then saves the last step and
    /// summarises the run; or, when training failed (`outcome` an error), keeps the
    /// samples, saves no weights (the last checkpoint holds the last good ones) and returns
    /// the error.
    pub fn finish(mut self, outcome: Result<String, TrainError>) -> Result<TrainSummary, TrainError> {
        self.eval.abandon();
        let loader_wait_fraction = self.loader_wait_fraction();
        let local = std::mem::take(&mut self.local);
        for w in local {
            w.selfplay.stop();
            w.sink.finish();
        }
        self.take_feed();
        self.loader = None;
        let stop_reason = match outcome {
            Ok(reason) => reason,
            Err(e) => {
                self.tb.flush();
                self.push_tb();
                return Err(e);
            }
        };
        // What the workers uploaded last is taken in too, so that after a clean stop the
        // consumed chunks are the chunks present (they wait in the window for a resume).
        self.take_from_store(true)?;
        if self.last_ckpt_step != Some(self.learner.step) {
            self.checkpoint()?;
        } else {
            self.state.elapsed_seconds = self.elapsed();
            write_state(&self.files, &self.state)?;
        }
        self.tb.flush();
        self.push_tb();
        if self.stats.skipped > 0 {
            self.display.println(&format!(
                "koma train: every step of {} log intervals skipped (f16 gradient overflow)",
                self.stats.skipped
            ));
        }
        self.display.println("");
        Ok(TrainSummary {
            run_dir: self.files.dir().to_path_buf(),
            stop_reason,
            step: self.learner.step,
            games: self.state.games,
            samples_generated: self.state.samples_generated,
            samples_trained: self.state.samples_trained,
            elapsed_seconds: self.state.elapsed_seconds,
            checkpoint: self.state.checkpoint.clone(),
            last_eval: self.last_eval,
            loader_wait_fraction,
        })
    }
}

/// The `[train]` table with the command line's limits, checked like the file's.
pub(crate) fn with_limits(
    train: &TrainConfig,
    max_minutes: Option<f64>,
    max_steps: Option<u64>,
) -> Result<TrainConfig, TrainError> {
    let mut tcfg = train.clone();
    tcfg.max_minutes = max_minutes.unwrap_or(tcfg.max_minutes);
    tcfg.max_steps = max_steps.unwrap_or(tcfg.max_steps);
    tcfg.validate().map_err(|e| ConfigError::Invalid { path: "command line".into(), message: e.to_string() })?;
    Ok(tcfg)
}

/// The config stored in the run.
fn run_config(files: &RunFiles) -> Result<TrainFileConfig, TrainError> {
    let where_ = format!("{}/{}", files.describe(), layout::CONFIG);
    let bytes = files.store.get(layout::CONFIG)?.ok_or_else(|| {
        TrainError::Run(format!("{where_} does not exist: give --config for the first start of a run"))
    })?;
    let text = String::from_utf8(bytes).map_err(|_| TrainError::Run(format!("{where_} is not UTF-8")))?;
    Ok(TrainFileConfig::from_toml(&text, &where_)?)
}

/// The learner state to start from: the prior one, counted as a resume, or a new one.
fn start_state(prior: Option<RunState>, cfg: &TrainFileConfig, name: &str) -> Result<RunState, TrainError> {
    let variant = cfg.base.variant.name();
    let state = match prior {
        Some(mut s) => {
            s.resumes += 1;
            s
        }
        None => {
            let ls = if cfg.train.seed != 0 { cfg.train.seed } else { clock_seed() };
            let ss = if cfg.base.selfplay.seed != 0 { cfg.base.selfplay.seed } else { clock_seed() ^ 0x5eed };
            RunState::fresh(variant, ls, ss)
        }
    };
    if state.variant != variant {
        return Err(TrainError::Run(format!("run `{name}` trains {}, the config says {variant}", state.variant)));
    }
    Ok(state)
}

/// The learner's device: `train.device`, else the self-play device.
fn learner_device(cfg: &TrainFileConfig) -> Result<Device, TrainError> {
    let sp = parse_device(&cfg.base.selfplay.device)?;
    let device = if cfg.train.device.trim().is_empty() { sp } else { parse_device(&cfg.train.device)? };
    if device == Device::Cpu || sp == Device::Cpu {
        model::set_torch_threads(cfg.base.selfplay.torch_threads, model::CpuShare::HalfOfSmall);
    }
    Ok(device)
}

/// A fresh network (or the `init` network), or the one of the checkpoint `state` names
/// with its optimiser state.
fn build_learner(
    files: &RunFiles,
    cfg: &TrainFileConfig,
    tcfg: &TrainConfig,
    state: &RunState,
    init: Option<&std::path::Path>,
    device: Device,
    display: &mut Display,
) -> Result<Learner, TrainError> {
    let variant = cfg.base.variant;
    let shape = Encoder::for_net(variant, &cfg.base.model).net_shape();
    let expected = Expected::variant(variant).with_shape(shape);
    if state.checkpoint.is_empty() {
        let net = match init {
            Some(p) => load_net(p, &expected, device)?.0,
            None => Net::new(&cfg.base.model, shape, state.learner_seed, device)?,
        };
        return Ok(Learner::new(net, tcfg, 0));
    }
    let stem = pull_network(files, &state.checkpoint)?;
    let _ = files.pull(&format!("{}.optim.safetensors", state.checkpoint))?;
    let (net, meta) = load_network(&stem, &expected, device)?;
    if meta.net != cfg.base.model {
        display.println(&format!(
            "koma train: note: the config's [model] differs from the checkpoint's; keeping the checkpoint's ({} blocks x {} channels)",
            meta.net.blocks, meta.net.channels
        ));
    }
    if meta.step != state.step {
        return Err(TrainError::Run(format!(
            "{}: checkpoint step {} does not match the learner state's step {}",
            stem.display(),
            meta.step,
            state.step
        )));
    }
    let mut learner = Learner::new(net, tcfg, state.step);
    if !learner.opt.load(&optim_path(&stem))? {
        display.println("koma train: note: optimiser changed since the checkpoint; its state starts fresh");
    }
    Ok(learner)
}
