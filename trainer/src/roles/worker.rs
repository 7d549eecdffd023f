//! `koma worker`: a stateless self-play worker of a run. It reads the run's config, plays
//! with the newest published network (switching mid-game when `models/latest.json`
//! changes), uploads each finished chunk in one write (spooling it locally while the store
//! refuses writes), and reports its throughput in `workers/<id>.json`. Any number of
//! workers may start and die at any time.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use model::tch::Device;
use model::{parse_device, Expected, Network, Precision};
use selfplay::Progress;
use serde::Serialize;

use super::files::RunFiles;
use super::network::{pull_network, read_pointer};
use super::selfplay::{ChunkSink, SelfplayThread};
use super::signal::sleep_unless;
use super::uploader::Uploader;
use crate::config::TrainFileConfig;
use crate::error::TrainError;
use dataio::run_layout::{self as layout, valid_worker_id, ModelPointer};

/// What `koma worker` runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Unique among the run's workers; default `<host>-<pid>`.
    pub worker_id: Option<String>,
    /// Overrides `selfplay.device`.
    pub device: Option<String>,
    /// Overrides `selfplay.workers` (game threads).
    pub threads: Option<usize>,
    /// Stop after this many games (default: until stopped).
    pub games: Option<u64>,
    /// Folder for chunks the store refuses; default in the system's temporary folder.
    pub spool: Option<PathBuf>,
    /// Download folder of a remote run.
    pub cache: Option<PathBuf>,
    /// How often `models/latest.json` is read.
    pub poll: Duration,
    /// How often `workers/<id>.json` is written.
    pub report_every: Duration,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            worker_id: None,
            device: None,
            threads: None,
            games: None,
            spool: None,
            cache: None,
            poll: Duration::from_secs(5),
            report_every: Duration::from_secs(30),
        }
    }
}

/// `workers/<id>.json`.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct WorkerReport {
    pub worker_id: String,
    pub model_step: u64,
    pub games: u64,
    pub samples: u64,
    pub chunks: u64,
    pub chunks_uploaded: u64,
    pub chunks_spooled: u64,
    pub games_per_hour: f64,
    pub evaluations_per_second: f64,
    pub elapsed_seconds: f64,
    pub updated_unix_ms: u64,
    pub finished: bool,
}

impl std::fmt::Display for WorkerReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "koma worker {}: {} games, {} samples in {} chunks ({} uploaded, {} spooled), last model step {}, {:.1} min",
            self.worker_id,
            self.games,
            self.samples,
            self.chunks,
            self.chunks_uploaded,
            self.chunks_spooled,
            self.model_step,
            self.elapsed_seconds / 60.0
        )
    }
}

fn default_worker_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect::<String>())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into());
    format!("{host}-{}", std::process::id())
}

fn default_spool(url: &str) -> PathBuf {
    let safe: String = url.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    std::env::temp_dir().join("koma-spool").join(safe)
}

/// Waits (polling once a second) for the object that `read` finds; `None` if stopped.
fn wait_for<T>(
    stop: &AtomicBool,
    what: &str,
    mut read: impl FnMut() -> Result<Option<T>, TrainError>,
) -> Result<Option<T>, TrainError> {
    let mut told = false;
    loop {
        if let Some(v) = read()? {
            return Ok(Some(v));
        }
        if !told {
            log::info!("koma worker: waiting for {what} (start `koma learner` on this run)");
            told = true;
        }
        if sleep_unless(stop, Duration::from_secs(1)) {
            return Ok(None);
        }
    }
}

/// A worker while it runs.
struct Worker {
    files: RunFiles,
    id: String,
    opts: WorkerOptions,
    device: Device,
    /// Inference precision (`[train] precision` of the run's config).
    precision: Precision,
    expected: Expected,
    model: ModelPointer,
    started: Instant,
}

impl Worker {
    /// The run's config with this worker's overrides.
    fn config(
        files: &RunFiles,
        opts: &WorkerOptions,
        stop: &AtomicBool,
    ) -> Result<Option<TrainFileConfig>, TrainError> {
        let Some(text) = wait_for(stop, "the run's config", || Ok(files.store.get(layout::CONFIG)?))? else {
            return Ok(None);
        };
        let place = format!("{}/{}", files.describe(), layout::CONFIG);
        let Ok(text) = String::from_utf8(text) else { return Err(TrainError::RunConfigNotUtf8 { place }) };
        let mut cfg = TrainFileConfig::from_toml(&text, &place)?;
        if let Some(d) = &opts.device {
            cfg.base.selfplay.device = d.clone();
        }
        if let Some(t) = opts.threads {
            cfg.base.selfplay.workers = t;
        }
        Ok(Some(cfg))
    }

    /// The network `pointer` names, on this worker's device.
    fn load(&self, pointer: &ModelPointer) -> Result<Network, TrainError> {
        let stem = pull_network(&self.files, &pointer.model)?;
        Ok(model::load_torch_network(&stem, &self.expected, self.device, self.precision)?)
    }

    /// Switches to a newer published network, if there is one.
    fn follow_pointer(&mut self, selfplay: &SelfplayThread) -> Result<(), TrainError> {
        let Some(p) = read_pointer(&self.files)? else { return Ok(()) };
        if p.step == self.model.step {
            return Ok(());
        }
        let network = self.load(&p)?;
        selfplay.replace_network(network.evaluator)?;
        log::info!("koma worker {}: now playing with the network of step {}", self.id, p.step);
        self.model = p;
        Ok(())
    }

    fn report(&self, sink: &ChunkSink, p: &Progress, finished: bool) -> WorkerReport {
        let (uploaded, spooled, recovered) = sink.upload_counters();
        let hours = p.elapsed.as_secs_f64() / 3600.0;
        WorkerReport {
            worker_id: self.id.clone(),
            model_step: self.model.step,
            games: sink.games.load(Ordering::Relaxed),
            samples: sink.samples.load(Ordering::Relaxed),
            chunks: sink.chunks.load(Ordering::Relaxed),
            chunks_uploaded: uploaded + recovered,
            chunks_spooled: spooled.saturating_sub(recovered),
            games_per_hour: if hours > 0.0 { p.games_done as f64 / hours } else { 0.0 },
            evaluations_per_second: p.evals_per_sec(),
            elapsed_seconds: self.started.elapsed().as_secs_f64(),
            updated_unix_ms: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            finished,
        }
    }

    fn publish_report(&self, report: &WorkerReport) {
        let key = format!("{}/{}.json", layout::WORKERS, self.id);
        let json = serde_json::to_vec_pretty(report).expect("report serialises");
        // A report is advisory: a store that is down only delays the next one.
        let _ = self.files.store.put(&key, json);
    }

    /// Plays until stopped, out of games, or failed; follows the model pointer.
    fn play(&mut self, selfplay: &SelfplayThread, sink: &ChunkSink, stop: &AtomicBool) -> Result<(), TrainError> {
        let (mut last_poll, mut last_report) = (Instant::now(), Instant::now());
        while !stop.load(Ordering::Relaxed) && !selfplay.finished() {
            std::thread::sleep(Duration::from_millis(100));
            if let Some(e) = selfplay.take_error() {
                return Err(TrainError::Selfplay(e));
            }
            if last_poll.elapsed() >= self.opts.poll {
                last_poll = Instant::now();
                if let Err(e) = self.follow_pointer(selfplay) {
                    log::warn!("koma worker {}: keeping the network of step {}: {e}", self.id, self.model.step);
                }
            }
            if last_report.elapsed() >= self.opts.report_every {
                last_report = Instant::now();
                self.publish_report(&self.report(sink, &selfplay.progress(), false));
            }
        }
        Ok(())
    }
}

/// Runs `koma worker` on the run at `url` until `stop` is set (SIGTERM, Ctrl-C) or
/// `opts.games` games are played. Finished games are uploaded before it returns.
pub fn run_worker(url: &str, opts: &WorkerOptions, stop: Arc<AtomicBool>) -> Result<WorkerReport, TrainError> {
    let id = opts.worker_id.clone().unwrap_or_else(default_worker_id);
    if !valid_worker_id(&id) {
        return Err(TrainError::BadWorkerId { id });
    }
    let files = RunFiles::open(url, opts.cache.as_deref())?;
    let Some(cfg) = Worker::config(&files, opts, &stop)? else { return Ok(WorkerReport::default()) };
    let variant = cfg.base.variant;
    let device = parse_device(&cfg.base.selfplay.device)?;
    if device == Device::Cpu {
        model::set_torch_threads(cfg.base.selfplay.torch_threads, model::CpuShare::HalfOfSmall);
    }
    let Some(model) = wait_for(&stop, "the first published network", || read_pointer(&files))? else {
        return Ok(WorkerReport::default());
    };
    let expected = Expected::variant(variant);
    let precision = cfg.train.precision.inference();
    let mut worker =
        Worker { files, id, opts: opts.clone(), device, precision, expected, model, started: Instant::now() };
    let first = worker.model.clone();
    let network = worker.load(&first)?;
    let mut sp_cfg = cfg.base.clone();
    if sp_cfg.selfplay.seed != 0 {
        // Workers of one config must not replay each other's games.
        sp_cfg.selfplay.seed ^=
            worker.id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    }
    let spool = opts.spool.clone().unwrap_or_else(|| default_spool(url));
    let uploader = Uploader::spawn(worker.files.store.clone(), spool);
    let sink = Arc::new(ChunkSink::new(&worker.id, variant, sp_cfg.selfplay.samples_per_chunk, uploader, None));
    let selfplay =
        SelfplayThread::start(&sp_cfg, network.evaluator, sink.clone(), opts.games.unwrap_or(u64::MAX), &worker.id)?;
    log::info!(
        "koma worker {}: playing on {} with the network of step {}",
        worker.id,
        worker.files.describe(),
        first.step
    );
    let played = worker.play(&selfplay, &sink, &stop);
    let progress = selfplay.stop();
    sink.finish();
    let report = worker.report(&sink, &progress, true);
    worker.publish_report(&report);
    played.map(|()| report)
}
