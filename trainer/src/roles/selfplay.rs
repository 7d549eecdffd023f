//! Self-play inside a role: a batcher over one device, the self-play pool in a thread of
//! its own, and the sink that turns finished games into chunks.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dataio::{ChunkBatcher, ChunkHeader, Sample};
use model::{Batcher, BatcherConfig, Evaluator};
use nn::EncoderLabels;
use rules::Variant;
use selfplay::{run_selfplay, Openings, Progress, RunOptions, SelfplayError, SelfplayFileConfig};

use super::uploader::Uploader;
use crate::error::TrainError;
use dataio::run_layout::chunk_key;

/// Samples handed straight to a learner in the same process (no trip through the store).
#[derive(Debug, Default)]
pub struct LocalFeed {
    inner: Mutex<FeedBatch>,
}

/// What a [`LocalFeed`] collected since the learner last took it.
#[derive(Debug, Default)]
pub struct FeedBatch {
    pub samples: Vec<Sample>,
    pub games: u64,
    /// Chunks written of these samples (file name, samples): already taken in.
    pub chunks: Vec<(String, u64)>,
}

impl LocalFeed {
    pub fn take(&self) -> FeedBatch {
        std::mem::take(&mut *self.inner.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn add(&self, samples: &[Sample], chunks: &[(String, u64)], games: u64) {
        let mut f = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f.samples.extend_from_slice(samples);
        f.chunks.extend_from_slice(chunks);
        f.games += games;
    }
}

/// Collects samples into chunks (dataio's [`ChunkBatcher`]) with unique store keys.
struct ChunkBuilder {
    worker_id: String,
    start_ms: u64,
    nonce: u32,
    batcher: ChunkBatcher,
}

impl ChunkBuilder {
    /// The pending samples as a chunk (store key, bytes, samples).
    fn take(&mut self) -> Option<(String, Vec<u8>, u64)> {
        match self.batcher.take() {
            Ok(chunk) => {
                chunk.map(|c| (chunk_key(&self.worker_id, self.start_ms, self.nonce, c.seq), c.bytes, c.samples))
            }
            Err(e) => {
                log::error!("koma: dropping samples that cannot be written: {e}");
                None
            }
        }
    }
}

/// Where a worker's finished games go: chunks to the store through the uploader and,
/// in one process with the learner, the samples to its [`LocalFeed`] as well.
pub struct ChunkSink {
    builder: Mutex<ChunkBuilder>,
    uploader: Mutex<Option<Uploader>>,
    upload_counters: Arc<super::uploader::UploadCounters>,
    feed: Option<Arc<LocalFeed>>,
    /// `<worker-id>-<start>-<nonce>-`: every chunk name of this sink starts with it.
    pub prefix: String,
    pub games: AtomicU64,
    pub samples: AtomicU64,
    pub chunks: AtomicU64,
}

impl ChunkSink {
    pub fn new(
        worker_id: &str,
        variant: Variant,
        per_chunk: usize,
        uploader: Uploader,
        feed: Option<Arc<LocalFeed>>,
    ) -> ChunkSink {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let nonce = (now.subsec_nanos() ^ std::process::id().rotate_left(16)) ^ (now.as_secs() as u32).rotate_left(7);
        let header = ChunkHeader::of(variant, &EncoderLabels);
        let builder = ChunkBuilder {
            worker_id: worker_id.to_string(),
            start_ms: now.as_millis() as u64,
            nonce,
            batcher: ChunkBatcher::new(header, per_chunk),
        };
        let prefix = chunk_key(worker_id, builder.start_ms, nonce, 0);
        let prefix = prefix.trim_start_matches("samples/").trim_end_matches("000000.chunk").to_string();
        ChunkSink {
            builder: Mutex::new(builder),
            upload_counters: uploader.counters.clone(),
            uploader: Mutex::new(Some(uploader)),
            feed,
            prefix,
            games: AtomicU64::new(0),
            samples: AtomicU64::new(0),
            chunks: AtomicU64::new(0),
        }
    }

    fn send(&self, chunks: Vec<(String, Vec<u8>, u64)>) -> Vec<(String, u64)> {
        let uploader = self.uploader.lock().unwrap_or_else(|e| e.into_inner());
        let mut names = Vec::new();
        for (key, bytes, n) in chunks {
            names.push((key.rsplit('/').next().unwrap_or(&key).to_string(), n));
            if let Some(u) = uploader.as_ref() {
                u.send(key, bytes);
            }
            self.chunks.fetch_add(1, Ordering::Relaxed);
        }
        names
    }

    /// Takes in one finished game's samples.
    pub fn add_game(&self, samples: Vec<Sample>) {
        let n = samples.len() as u64;
        let mut full = Vec::new();
        {
            let mut b = self.builder.lock().unwrap_or_else(|e| e.into_inner());
            for s in &samples {
                if b.batcher.push(s.clone()) {
                    full.extend(b.take());
                }
            }
        }
        let names = self.send(full);
        if let Some(feed) = &self.feed {
            feed.add(&samples, &names, 1);
        }
        self.samples.fetch_add(n, Ordering::Relaxed);
        self.games.fetch_add(1, Ordering::Relaxed);
    }

    /// Writes the samples held so far as a (smaller) chunk.
    pub fn flush(&self) {
        let chunk = self.builder.lock().unwrap_or_else(|e| e.into_inner()).take();
        let names = self.send(chunk.into_iter().collect());
        if let Some(feed) = &self.feed {
            feed.add(&[], &names, 0);
        }
    }

    /// Flushes, then waits for the uploads (what cannot be written stays in the spool).
    pub fn finish(&self) {
        self.flush();
        if let Some(u) = self.uploader.lock().unwrap_or_else(|e| e.into_inner()).take() {
            u.finish();
        }
    }

    /// Chunks (uploaded, spooled, uploaded later from the spool).
    pub fn upload_counters(&self) -> (u64, u64, u64) {
        let c = &self.upload_counters;
        (c.uploaded.load(Ordering::Relaxed), c.spooled.load(Ordering::Relaxed), c.recovered.load(Ordering::Relaxed))
    }
}

#[derive(Default)]
struct Shared {
    progress: Mutex<Progress>,
    error: Mutex<Option<SelfplayError>>,
    done: AtomicBool,
}

/// Self-play running in the background through a batcher on one device.
pub struct SelfplayThread {
    batcher: Batcher,
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

/// The batcher's largest forward pass: the configured size, else every game at once.
impl SelfplayThread {
    /// Starts self-play of `games` games (`u64::MAX`: until stopped) with `evaluator`.
    pub fn start(
        cfg: &SelfplayFileConfig,
        evaluator: Arc<dyn Evaluator>,
        sink: Arc<ChunkSink>,
        games: u64,
        name: &str,
    ) -> Result<SelfplayThread, TrainError> {
        let batcher = Batcher::spawn(
            evaluator,
            BatcherConfig {
                max_batch: cfg.selfplay.effective_max_batch(),
                max_wait: Duration::from_micros(cfg.selfplay.max_wait_us),
                thread_name: format!("koma-batcher-{name}"),
            },
        );
        let openings = match &cfg.selfplay.opening_file {
            Some(f) => Openings::load(cfg.variant, std::path::Path::new(f))?,
            None => Openings::startpos(cfg.variant),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared::default());
        let ropts = RunOptions { games, stop: stop.clone(), progress_every: Duration::from_secs(2) };
        let (cfg, handle, shared2) = (cfg.clone(), batcher.handle(), shared.clone());
        let thread = std::thread::Builder::new()
            .name(format!("koma-selfplay-{name}"))
            .spawn(move || {
                let on_progress = |p: &Progress| *shared2.progress.lock().unwrap() = *p;
                let r = run_selfplay(&cfg, handle, &openings, &ropts, |rec| sink.add_game(rec.samples), on_progress);
                match r {
                    Ok(p) => *shared2.progress.lock().unwrap() = p,
                    Err(e) => *shared2.error.lock().unwrap() = Some(e),
                }
                shared2.done.store(true, Ordering::SeqCst);
            })
            .expect("spawn self-play thread");
        Ok(SelfplayThread { batcher, thread: Some(thread), stop, shared })
    }

    /// New weights for the games in progress and those to come.
    pub fn replace_network(&self, evaluator: Arc<dyn Evaluator>) -> Result<(), TrainError> {
        self.batcher.replace_evaluator(evaluator).map_err(|e| SelfplayError::Batch(e).into())
    }

    pub fn progress(&self) -> Progress {
        *self.shared.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Why self-play failed, if it did (its text).
    pub fn error(&self) -> Option<String> {
        self.shared.error.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|e| e.to_string())
    }

    /// Why self-play failed, if it did, taken (a later call returns `None`).
    pub fn take_error(&self) -> Option<SelfplayError> {
        self.shared.error.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// All games played (or self-play failed).
    pub fn finished(&self) -> bool {
        self.shared.done.load(Ordering::SeqCst)
    }

    /// Stops: the games in progress are abandoned; finished ones are already in the sink.
    pub fn stop(mut self) -> Progress {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let p = self.progress();
        let _ = self.batcher.shutdown();
        p
    }
}
