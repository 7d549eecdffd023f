//! Uploads a worker's sample chunks, each in one write, from a thread of its own so that
//! self-play never waits on the store. A chunk that cannot be written after a few tries
//! goes to a local spool folder; the spool is retried with growing pauses (and at the next
//! start of a worker with the same spool folder), so a store that refuses writes for a
//! while loses nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use store::RunStore;

/// Counters shared with the worker.
#[derive(Debug, Default)]
pub struct UploadCounters {
    pub uploaded: AtomicU64,
    /// Chunks written to the spool (ever).
    pub spooled: AtomicU64,
    /// Spooled chunks uploaded later.
    pub recovered: AtomicU64,
    pub failures: AtomicU64,
}

pub struct Uploader {
    tx: Option<Sender<(String, Vec<u8>)>>,
    thread: Option<JoinHandle<()>>,
    pub counters: Arc<UploadCounters>,
}

const MAX_PAUSE: Duration = Duration::from_secs(30);

struct Worker {
    store: RunStore,
    spool: PathBuf,
    counters: Arc<UploadCounters>,
    /// While the store is failing: no new tries before this instant.
    retry_at: Option<Instant>,
    pause: Duration,
}

impl Worker {
    fn failed(&mut self, what: &str, e: &store::StoreError) {
        self.counters.failures.fetch_add(1, Ordering::Relaxed);
        self.pause = (self.pause * 2).clamp(Duration::from_secs(1), MAX_PAUSE);
        self.retry_at = Some(Instant::now() + self.pause);
        progress::line(&format!(
            "koma worker: cannot write {what} ({e}); spooling, next try in {} s",
            self.pause.as_secs()
        ));
    }

    fn store_up(&self) -> bool {
        self.retry_at.is_none_or_past()
    }

    /// One chunk: up to three writes, else the spool.
    fn upload(&mut self, key: &str, bytes: Vec<u8>) {
        if self.store_up() {
            for attempt in 0..3 {
                match self.store.put(key, bytes.clone()) {
                    Ok(()) => {
                        self.counters.uploaded.fetch_add(1, Ordering::Relaxed);
                        self.retry_at = None;
                        self.pause = Duration::ZERO;
                        return;
                    }
                    Err(e) if attempt == 2 => self.failed(key, &e),
                    Err(_) => std::thread::sleep(Duration::from_millis(200 << attempt)),
                }
            }
        }
        let path = self.spool.join(key);
        match store::write_local(&path, &bytes) {
            Ok(()) => {
                self.counters.spooled.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                progress::line(&format!("koma worker: lost chunk {key}: the store and the spool refuse it ({e})"))
            }
        }
    }

    /// Uploads spooled chunks, oldest name first, until one fails.
    fn drain_spool(&mut self) {
        if !self.store_up() {
            return;
        }
        for (key, path) in spooled(&self.spool) {
            let Ok(bytes) = std::fs::read(&path) else { continue };
            match self.store.put(&key, bytes) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&path);
                    self.counters.recovered.fetch_add(1, Ordering::Relaxed);
                    self.retry_at = None;
                    self.pause = Duration::ZERO;
                }
                Err(e) => {
                    self.failed(&format!("spooled {key}"), &e);
                    return;
                }
            }
        }
    }

    fn run(mut self, rx: Receiver<(String, Vec<u8>)>) {
        self.drain_spool();
        loop {
            match rx.recv_timeout(Duration::from_millis(500)) {
                Ok((key, bytes)) => self.upload(&key, bytes),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.drain_spool();
        }
        // Finishing: one more try of the spool, even right after a failure.
        self.retry_at = None;
        self.drain_spool();
    }
}

trait PastOrNone {
    fn is_none_or_past(&self) -> bool;
}

impl PastOrNone for Option<Instant> {
    fn is_none_or_past(&self) -> bool {
        !matches!(self, Some(t) if Instant::now() < *t)
    }
}

/// The spooled chunks under `spool` as (store key, file), sorted by key.
pub fn spooled(spool: &Path) -> Vec<(String, PathBuf)> {
    let dir = spool.join(dataio::run_layout::SAMPLES);
    let Ok(rd) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut v: Vec<(String, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            (name.ends_with(".chunk") && !name.starts_with('.'))
                .then(|| (format!("{}/{name}", dataio::run_layout::SAMPLES), e.path()))
        })
        .collect();
    v.sort();
    v
}

impl Uploader {
    /// Starts the upload thread; it first uploads what an earlier worker left in `spool`.
    pub fn spawn(store: RunStore, spool: PathBuf) -> Uploader {
        let counters = Arc::new(UploadCounters::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = Worker { store, spool, counters: counters.clone(), retry_at: None, pause: Duration::ZERO };
        let thread = std::thread::Builder::new()
            .name("koma-upload".into())
            .spawn(move || worker.run(rx))
            .expect("spawn the upload thread");
        Uploader { tx: Some(tx), thread: Some(thread), counters }
    }

    /// Queues a chunk for upload.
    pub fn send(&self, key: String, bytes: Vec<u8>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send((key, bytes));
        }
    }

    /// Uploads what is queued (or spools it) and waits for the thread.
    pub fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Uploader {
    fn drop(&mut self) {
        self.close();
    }
}
