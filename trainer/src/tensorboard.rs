//! TensorBoard scalars: event files (`events.out.tfevents.*`) in `runs/<name>/tb/`. A
//! resumed run writes a new event file into the same folder; TensorBoard merges them.
//!
//! Written with tensorboard-rs's parts that return their errors: its TFRecord writer
//! (`RecordWriter`), its scalar `Summary` and the `Event` of its protos. Its own
//! `SummaryWriter` is not used: that writes from a thread that panics on any I/O error,
//! which aborted the learner on an unwritable or full disk. Here a write error ends the
//! event file, never the run: [`TensorBoardLog::take_error`] reports it once and later
//! scalars are dropped.
//!
//! View them with `scripts/tensorboard.sh` (or `.venv/bin/tensorboard --logdir runs`).

use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use protobuf::Message;
use tensorboard_proto::event::Event;
use tensorboard_rs::record_writer::RecordWriter;

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
    /// Shares of the finished games: drawn, cut at the length cap, scored by material there.
    pub const DRAW_FRACTION: &str = "selfplay/draw_fraction";
    pub const CUT_FRACTION: &str = "selfplay/cut_fraction";
    pub const ADJUDICATED_FRACTION: &str = "selfplay/adjudicated_fraction";
    pub const RESIGN_THRESHOLD: &str = "selfplay/resign_threshold";
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

/// A write to the event file failed; scalars are no longer written this session.
#[derive(Debug, thiserror::Error)]
#[error("TensorBoard event file {}: {source}; its scalars are no longer written in this session", path.display())]
pub struct TensorBoardError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// A TensorBoard scalar writer.
pub struct TensorBoardLog {
    dir: PathBuf,
    path: PathBuf,
    /// `None` once a write failed.
    out: Option<RecordWriter<BufWriter<File>>>,
    /// The first write error, until [`TensorBoardLog::take_error`] reports it.
    error: Option<std::io::Error>,
}

impl TensorBoardLog {
    /// Opens a new event file in `dir` (created if needed) and writes its header, so that
    /// a folder that cannot take it fails here.
    pub fn new(dir: impl AsRef<Path>) -> std::io::Result<TensorBoardLog> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(event_file_name());
        let file = OpenOptions::new().write(true).create_new(true).open(&path)?;
        let mut out = RecordWriter::new(BufWriter::new(file));
        let mut header = event(0);
        header.set_file_version("brain.Event:2".to_string());
        out.write(&encode(&header)?)?;
        out.flush()?;
        Ok(TensorBoardLog { dir, path, out: Some(out), error: None })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The event file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        if value.is_finite() {
            let mut record = event(step);
            record.set_summary(tensorboard_rs::summary::scalar(tag, value as f32));
            self.write(|out| out.write(&encode(&record)?));
        }
    }

    /// The learner's scalars (losses, those of the auxiliary heads the network has,
    /// accuracy, value error, gradient norm, learning rate) of `m`, usually a mean over the
    /// steps since the last call.
    pub fn step_stats(&mut self, m: &crate::learning::net_trainer::StepStats, step: u64) {
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

    /// Writes out what is buffered.
    pub fn flush(&mut self) {
        self.write(|out| out.flush());
    }

    fn write(&mut self, f: impl FnOnce(&mut RecordWriter<BufWriter<File>>) -> std::io::Result<()>) {
        let Some(out) = self.out.as_mut() else { return };
        if let Err(e) = f(out) {
            self.out = None;
            self.error = Some(e);
        }
    }

    /// The write error that ended the event file, reported once.
    pub fn take_error(&mut self) -> Option<TensorBoardError> {
        self.error.take().map(|source| TensorBoardError { path: self.path.clone(), source })
    }

    /// Whether scalars are still written.
    pub fn is_writing(&self) -> bool {
        self.out.is_some()
    }
}

/// `events.out.tfevents.<seconds:010>.<host>.<pid>.<n>`, as TensorFlow names them (`n`
/// keeps two files of one process and second apart).
fn event_file_name() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("events.out.tfevents.{secs:010}.{}.{}.{n}", store::lease::host_name(), std::process::id())
}

/// A `tensorflow.Event` of `step`, stamped now.
fn event(step: u64) -> Event {
    let mut e = Event::new();
    e.set_wall_time(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()));
    e.set_step(step as i64);
    e
}

fn encode(e: &Event) -> std::io::Result<Vec<u8>> {
    e.write_to_bytes().map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use tensorboard_rs::masked_crc32c::masked_crc32c;

    /// A writer that takes `room` bytes, then fails as a full disk does.
    struct Full(usize);

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_event_file_reports_once_and_drops_later_scalars() {
        let dir = tempfile::tempdir().unwrap();
        let mut tb = TensorBoardLog::new(dir.path()).unwrap();
        tb.scalar("a", 1.0, 1);
        tb.flush();
        assert!(tb.take_error().is_none() && tb.is_writing());
        // The record framing fails on a writer that fills up part way.
        assert!(RecordWriter::new(Full(10)).write(&[0; 40]).is_err());
        tb.write(|_| Err(std::io::Error::from_raw_os_error(28)));
        tb.scalar("a", 2.0, 2);
        tb.flush();
        let e = tb.take_error().expect("reported");
        assert!(e.to_string().contains("No space left") && e.to_string().contains("no longer written"), "{e}");
        assert!(tb.take_error().is_none() && !tb.is_writing());
        drop(tb);
        // What was written before the error is intact: the header and the first scalar.
        let file = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        let bytes = std::fs::read(file).unwrap();
        let first_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), masked_crc32c(&bytes[..8]));
        let second = 16 + first_len;
        assert!(bytes.len() > second && bytes[second..].len() > 16);
    }
}
