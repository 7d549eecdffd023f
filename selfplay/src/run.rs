//! A self-play job from a config to checked sample chunks (`koma selfplay`): the evaluator
//! (a checkpoint, the uniform evaluator or a fresh network), its batching thread, the
//! openings, the games, the chunk files, and a read-back of every chunk so that a file the
//! learner could not load fails the job here. The caller shows progress and the summary.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use model::encoding::Encoder;
use model::{Batcher, BatcherConfig, BatcherStats, Evaluator, Precision, TorchEvaluator, UniformEvaluator};
use rules::Color;

use crate::config::SelfplayFileConfig;
use crate::worker::{run_selfplay, Openings, Progress, RunOptions, SelfplayError};
use dataio::{read_chunk_expect, ChunkWriter, SampleError};
use nn::EncoderLabels;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Device(#[from] model::DeviceError),
    #[error(transparent)]
    Checkpoint(#[from] model::CheckpointError),
    #[error("building the network: {0}")]
    Net(#[from] model::NetError),
    #[error("preparing the network: {0}")]
    Eval(#[from] model::EvalError),
    #[error(transparent)]
    Openings(SelfplayError),
    #[error(transparent)]
    Selfplay(SelfplayError),
    #[error(transparent)]
    Samples(#[from] SampleError),
    #[error("read back {read} samples, wrote {wrote}")]
    ReadBack { read: u64, wrote: u64 },
    #[error("self-play ended before the warm-up")]
    EndedInWarmup,
    #[error("raw forward benchmark: {0}")]
    Bench(#[from] model::BenchError),
    #[error("raw forward benchmark panicked")]
    BenchPanicked,
}

impl JobError {
    /// Whether the job's input was wrong (device name, network file, opening file) rather
    /// than the run failing.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, JobError::Device(_) | JobError::Checkpoint(_) | JobError::Openings(_))
    }
}

/// Where the positions are evaluated.
#[derive(Clone, Copy, Debug)]
pub enum EvaluatorSource<'a> {
    /// A network file; it must read the planes of the config's `[model]`.
    Network(&'a Path),
    /// Every move equally likely (pure MCTS).
    Uniform,
    /// A freshly initialised network of the config's `[model]` (generation 0), seeded by
    /// `selfplay.seed`.
    Fresh,
}

/// The evaluator of `source` on the config's self-play device.
pub fn evaluator(
    cfg: &SelfplayFileConfig,
    precision: Precision,
    source: EvaluatorSource<'_>,
) -> Result<Arc<dyn Evaluator>, JobError> {
    let shape = Encoder::for_net(cfg.variant, &cfg.model).net_shape();
    if let EvaluatorSource::Uniform = source {
        return Ok(Arc::new(UniformEvaluator::new(shape)));
    }
    let device = model::parse_device(&cfg.selfplay.device)?;
    if let EvaluatorSource::Network(path) = source {
        // The workers encode positions for the config's [model]: the file must read the
        // same planes.
        let expected = model::Expected::variant(cfg.variant).with_shape(shape);
        return Ok(model::load_torch_network(path, &expected, device, precision)?.evaluator);
    }
    let net = model::Net::new(&cfg.model, shape, cfg.selfplay.seed, device)?;
    Ok(Arc::new(TorchEvaluator::new(&net, device, precision)?))
}

/// The batching thread's settings for the config's self-play.
pub fn batcher_config(cfg: &SelfplayFileConfig) -> BatcherConfig {
    BatcherConfig {
        max_batch: cfg.selfplay.effective_max_batch(),
        max_wait: Duration::from_micros(cfg.selfplay.max_wait_us),
        thread_name: "koma-batcher".to_string(),
    }
}

/// The config's opening file, or the start position.
pub fn openings(cfg: &SelfplayFileConfig) -> Result<Openings, JobError> {
    match &cfg.selfplay.opening_file {
        Some(f) => Openings::load(cfg.variant, Path::new(f)).map_err(JobError::Openings),
        None => Ok(Openings::startpos(cfg.variant)),
    }
}

/// What to play and where the chunks go.
#[derive(Clone, Debug)]
pub struct ChunkJob {
    pub games: u64,
    /// Folder of the chunk files (created if needed).
    pub out: PathBuf,
    /// Interval of the progress callback.
    pub progress_every: Duration,
}

/// What a [`play_to_chunks`] job did.
#[derive(Clone, Debug)]
pub struct ChunkSummary {
    pub progress: Progress,
    /// Games won by sente, drawn, won by gote.
    pub sente_wins: u64,
    pub draws: u64,
    pub gote_wins: u64,
    /// Samples taken with a full search.
    pub full_search_samples: u64,
    /// Samples written (and read back) and their chunk files.
    pub samples_written: u64,
    pub chunks: Vec<PathBuf>,
    /// The batching thread's counters.
    pub batches: BatcherStats,
    pub seconds: f64,
}

/// Plays `job.games` games from `openings` with `evaluator` and writes their samples as chunks into
/// `job.out` (named `sp-<unix time>-<pid>-<seq>.chunk`), then reads every chunk back.
/// `on_game` runs after each finished game, `on_progress` every `job.progress_every`.
pub fn play_to_chunks(
    cfg: &SelfplayFileConfig,
    evaluator: Arc<dyn Evaluator>,
    openings: &Openings,
    job: &ChunkJob,
    mut on_game: impl FnMut(),
    on_progress: impl FnMut(&Progress),
) -> Result<ChunkSummary, JobError> {
    let batcher = Batcher::spawn(evaluator, batcher_config(cfg));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let prefix = format!("sp-{now}-{}", std::process::id());
    let mut writer = ChunkWriter::new(&job.out, &prefix, cfg.variant, &EncoderLabels, cfg.selfplay.samples_per_chunk)?;
    let mut write_error = None;
    let (mut sente_wins, mut draws, mut gote_wins, mut full) = (0u64, 0u64, 0u64, 0u64);
    let opts = RunOptions { games: job.games, stop: Arc::new(Default::default()), progress_every: job.progress_every };
    let stop = opts.stop.clone();
    let started = Instant::now();
    let progress = run_selfplay(
        cfg,
        batcher.handle(),
        openings,
        &opts,
        |g| {
            match g.end.winner {
                Some(Color::Sente) => sente_wins += 1,
                Some(Color::Gote) => gote_wins += 1,
                None => draws += 1,
            }
            full += g.samples.iter().filter(|s| s.full_search).count() as u64;
            on_game();
            if write_error.is_none() {
                if let Err(e) = writer.extend(g.samples) {
                    write_error = Some(e);
                    stop.store(true, Ordering::Relaxed);
                }
            }
        },
        on_progress,
    )
    .map_err(JobError::Selfplay)?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    writer.flush()?;
    let batches = batcher.shutdown();
    let mut read = 0u64;
    for f in writer.files_written() {
        read += read_chunk_expect(f, cfg.variant, &EncoderLabels)?.samples.len() as u64;
    }
    if read != writer.samples_written() {
        return Err(JobError::ReadBack { read, wrote: writer.samples_written() });
    }
    Ok(ChunkSummary {
        progress,
        sente_wins,
        draws,
        gote_wins,
        full_search_samples: full,
        samples_written: writer.samples_written(),
        chunks: writer.files_written().to_vec(),
        batches,
        seconds: started.elapsed().as_secs_f64(),
    })
}
