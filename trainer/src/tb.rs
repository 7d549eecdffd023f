//! TensorBoard scalars: event files (`events.out.tfevents.*`) in `runs/<name>/tb/`. A
//! resumed run writes a new event file into the same folder; TensorBoard merges them.
//!
//! The file is written here rather than through a TensorBoard crate (tensorboard-rs
//! wrote from a thread that panicked on any I/O error, which aborted the learner): TFRecord
//! framing (length, masked CRC-32C of the length, data, masked CRC-32C of the data) around
//! `tensorflow.Event` protocol buffers that hold a `file_version` or one scalar `Summary`.
//! A write error ends the event file, never the run: [`Tb::take_error`] reports it once and
//! later scalars are dropped.
//!
//! View them with `scripts/tensorboard.sh` (or `.venv/bin/tensorboard --logdir runs`).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

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
pub struct TbError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// A TensorBoard scalar writer.
pub struct Tb {
    dir: PathBuf,
    path: PathBuf,
    /// `None` once a write failed.
    out: Option<BufWriter<File>>,
    /// The first write error, until [`Tb::take_error`] reports it.
    error: Option<std::io::Error>,
}

impl Tb {
    /// Opens a new event file in `dir` (created if needed) and writes its header, so that
    /// a folder that cannot take it fails here.
    pub fn new(dir: impl AsRef<Path>) -> std::io::Result<Tb> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(event_file_name());
        let file = OpenOptions::new().write(true).create_new(true).open(&path)?;
        let mut out = BufWriter::new(file);
        write_record(&mut out, &event(0, |e| field_bytes(e, 3, b"brain.Event:2")))?;
        out.flush()?;
        Ok(Tb { dir, path, out: Some(out), error: None })
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
            let record = event(step, |e| {
                let mut v = Vec::with_capacity(tag.len() + 8);
                field_bytes(&mut v, 1, tag.as_bytes());
                v.push(0x15); // field 2 (simple_value), 32-bit
                v.extend_from_slice(&(value as f32).to_le_bytes());
                let mut summary = Vec::with_capacity(v.len() + 4);
                field_bytes(&mut summary, 1, &v);
                field_bytes(e, 5, &summary);
            });
            self.write(|out| write_record(out, &record));
        }
    }

    /// The learner's scalars (losses, those of the auxiliary heads the network has,
    /// accuracy, value error, gradient norm, learning rate) of `m`, usually a mean over the
    /// steps since the last call.
    pub fn step_stats(&mut self, m: &crate::net_trainer::StepStats, step: u64) {
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

    fn write(&mut self, f: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) {
        let Some(out) = self.out.as_mut() else { return };
        if let Err(e) = f(out) {
            // Dropping the writer would try to flush again: keep its buffer from the file.
            if let Some(out) = self.out.take() {
                let _ = out.into_parts();
            }
            self.error = Some(e);
        }
    }

    /// The write error that ended the event file, reported once.
    pub fn take_error(&mut self) -> Option<TbError> {
        self.error.take().map(|source| TbError { path: self.path.clone(), source })
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

/// A `tensorflow.Event` (wall_time = 1, step = 2, then what `what` adds).
fn event(step: u64, what: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let wall = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    let mut e = Vec::with_capacity(64);
    e.push(0x09); // field 1, 64-bit
    e.extend_from_slice(&wall.to_le_bytes());
    e.push(0x10); // field 2, varint
    varint(&mut e, step);
    what(&mut e);
    e
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field.
fn field_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// One TFRecord.
fn write_record(out: &mut impl Write, data: &[u8]) -> std::io::Result<()> {
    let len = (data.len() as u64).to_le_bytes();
    out.write_all(&len)?;
    out.write_all(&masked_crc32c(&len).to_le_bytes())?;
    out.write_all(data)?;
    out.write_all(&masked_crc32c(data).to_le_bytes())
}

/// CRC-32C (Castagnoli), reflected, by table.
const CRC32C_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0x82F6_3B78 } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

fn crc32c(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| CRC32C_TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

/// TFRecord's masked CRC.
fn masked_crc32c(data: &[u8]) -> u32 {
    crc32c(data).rotate_right(15).wrapping_add(0xa282_ead8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_of_the_standard_check_string() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }

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
        let mut tb = Tb::new(dir.path()).unwrap();
        tb.scalar("a", 1.0, 1);
        tb.flush();
        assert!(tb.take_error().is_none() && tb.is_writing());
        // The record framing fails on a writer that fills up part way.
        assert!(write_record(&mut Full(10), &[0; 40]).is_err());
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
