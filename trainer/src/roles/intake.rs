//! The learner's intake of sample chunks from the run store.
//!
//! A chunk is taken in once: its name goes into the learner state's consumed set with the
//! samples it added to `samples_generated`, so that a restarted learner never counts it
//! again (the training ratio holds across restarts). Each chunk is checked (format,
//! checksum, variant, encoder version); a damaged one is skipped with a warning and never
//! read again. One that cannot be read now (the store fails, or it vanished after the
//! listing) is not rejected: the next pass tries again, so that a store that is down for
//! a moment loses no data. Listing order is never relied on: new chunks are taken oldest
//! first by their modification time.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use dataio::{decode_chunk_expect, Chunk};
use nn::EncoderLabels;
use rules::Variant;
use store::Entry;

use super::files::RunFiles;
use super::state::RunState;
use crate::data::Replay;
use crate::error::TrainError;
use dataio::run_layout::{chunk_worker, SAMPLES};

/// What one pass took in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Intake {
    pub chunks: u64,
    pub samples: u64,
    /// Warnings about chunks that were skipped for good (damaged).
    pub rejected: Vec<String>,
    /// Warnings about chunks left for the next pass (the store failed to read them).
    pub deferred: Vec<String>,
}

/// Reads and checks one chunk (dataio's reader: format, checksum, every sample, variant,
/// encoder version).
fn read_checked(files: &RunFiles, key: &str, variant: Variant) -> Result<Chunk, UnreadChunk> {
    let bytes = files.store.get(key)?.ok_or_else(|| UnreadChunk::Vanished(key.to_string()))?;
    Ok(decode_chunk_expect(&bytes, Path::new(key), variant, &EncoderLabels)?)
}

/// Why a listed chunk was not taken in.
#[derive(Debug, thiserror::Error)]
enum UnreadChunk {
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// Listed, then gone before it was read.
    #[error("{0}: vanished")]
    Vanished(String),
    #[error(transparent)]
    Samples(#[from] dataio::SampleError),
}

fn name(e: &Entry) -> &str {
    e.name()
}

fn is_chunk(e: &Entry) -> bool {
    e.key.ends_with(".chunk")
}

/// Takes in every chunk of `samples/` that `state` has neither consumed nor rejected,
/// except those whose name starts with one of `skip` (written by self-play in this process,
/// whose samples arrive directly).
pub fn take_in(
    files: &RunFiles,
    state: &mut RunState,
    replay: &Mutex<Replay>,
    skip: &[String],
    variant: Variant,
) -> Result<Intake, TrainError> {
    let mut new: Vec<Entry> = files
        .store
        .list(SAMPLES)?
        .into_iter()
        .filter(|e| is_chunk(e) && !state.chunks.contains(name(e)) && !state.rejected_chunks.contains(name(e)))
        .filter(|e| !skip.iter().any(|p| name(e).starts_with(p.as_str())))
        .collect();
    new.sort_by(|a, b| a.modified_ms.cmp(&b.modified_ms).then_with(|| a.key.cmp(&b.key)));
    let mut intake = Intake::default();
    for e in &new {
        let n = name(e).to_string();
        match read_checked(files, &e.key, variant) {
            Ok(chunk) => {
                let k = chunk.samples.len() as u64;
                state.samples_generated += k;
                let mut r = replay.lock().unwrap_or_else(|e| e.into_inner());
                r.grow_to(state.samples_generated);
                r.extend(chunk.samples);
                drop(r);
                *state.samples_by_worker.entry(chunk_worker(&n).to_string()).or_default() += k;
                state.chunks.insert(n);
                intake.chunks += 1;
                intake.samples += k;
            }
            Err(why @ UnreadChunk::Samples(_)) => {
                intake.rejected.push(format!("skipping sample chunk {}: {why}", e.key));
                state.rejected_chunks.insert(n);
            }
            Err(UnreadChunk::Vanished(_)) => {}
            Err(why @ UnreadChunk::Store(_)) => {
                // The store fails: the rest of this pass would too, and order matters.
                intake.deferred.push(format!("sample chunk {} not read now, trying again later: {why}", e.key));
                break;
            }
        }
    }
    Ok(intake)
}

/// Refills the replay window of a restarted learner from the newest chunks it had
/// already taken in (they count nothing again). Returns the samples loaded.
pub fn refill_window(
    files: &RunFiles,
    state: &RunState,
    replay: &Mutex<Replay>,
    variant: Variant,
    stop: &AtomicBool,
) -> Result<usize, TrainError> {
    let mut seen: Vec<Entry> =
        files.store.list(SAMPLES)?.into_iter().filter(|e| is_chunk(e) && state.chunks.contains(name(e))).collect();
    seen.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then_with(|| b.key.cmp(&a.key)));
    let capacity = replay.lock().unwrap_or_else(|e| e.into_inner()).capacity();
    let (mut chunks, mut held) = (Vec::new(), 0usize);
    for e in &seen {
        if held >= capacity || stop.load(Ordering::Relaxed) {
            break;
        }
        if let Ok(c) = read_checked(files, &e.key, variant) {
            held += c.samples.len();
            chunks.push(c.samples);
        }
    }
    let mut r = replay.lock().unwrap_or_else(|e| e.into_inner());
    for c in chunks.into_iter().rev() {
        r.extend(c);
    }
    Ok(held.min(capacity))
}
