//! Writing samples as numbered chunks, and finding chunk files.
//!
//! [`ChunkBatcher`] is the one place samples become chunks: it collects them into chunks
//! of a fixed size and encodes each full one. [`ChunkWriter`] writes what it makes to
//! files of a folder; a store-backed writer (koma-trainer's self-play sink) takes the bytes
//! itself.

use std::path::{Path, PathBuf};

use rules::Variant;

use crate::chunk::{encode_chunk, ChunkHeader, CHUNK_EXTENSION};
use crate::error::SampleError;
use crate::labels::PolicyLabels;
use crate::sample::Sample;

/// One encoded chunk of a [`ChunkBatcher`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedChunk {
    /// Its number among the batcher's chunks (0, 1, ...).
    pub seq: u64,
    /// The chunk file's bytes.
    pub bytes: Vec<u8>,
    /// The samples in it.
    pub samples: u64,
}

/// Collects samples of one variant and encoder into chunks of up to `samples_per_chunk`.
pub struct ChunkBatcher {
    header: ChunkHeader,
    samples_per_chunk: usize,
    pending: Vec<Sample>,
    seq: u64,
}

impl ChunkBatcher {
    /// Chunks with `header` (its `count` is each chunk's), of at least one sample each.
    pub fn new(header: ChunkHeader, samples_per_chunk: usize) -> ChunkBatcher {
        ChunkBatcher { header, samples_per_chunk: samples_per_chunk.max(1), pending: Vec::new(), seq: 0 }
    }

    /// Adds one sample; returns true when a chunk is full (take it with [`ChunkBatcher::take`]).
    pub fn push(&mut self, sample: Sample) -> bool {
        self.pending.push(sample);
        self.pending.len() >= self.samples_per_chunk
    }

    /// The samples held so far as an encoded chunk (`None` when there are none); they are
    /// held until [`ChunkBatcher::commit`] (so that a chunk that could not be stored is
    /// tried again).
    pub fn encode_pending(&self) -> Result<Option<EncodedChunk>, SampleError> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let bytes = encode_chunk(&self.header, &self.pending)?;
        Ok(Some(EncodedChunk { seq: self.seq, bytes, samples: self.pending.len() as u64 }))
    }

    /// Forgets the samples held (stored, or given up) and moves on to the next number.
    pub fn commit(&mut self) {
        self.pending.clear();
        self.seq += 1;
    }

    /// [`ChunkBatcher::encode_pending`], then [`ChunkBatcher::commit`] whatever the result:
    /// samples that cannot be encoded are dropped with the error.
    pub fn take(&mut self) -> Result<Option<EncodedChunk>, SampleError> {
        let chunk = self.encode_pending();
        if !self.pending.is_empty() {
            self.commit();
        }
        chunk
    }
}

/// Collects samples and writes them as numbered chunk files
/// `<dir>/<prefix>-<seq:06>.chunk` of up to `samples_per_chunk` samples each.
pub struct ChunkWriter {
    dir: PathBuf,
    prefix: String,
    batcher: ChunkBatcher,
    written_samples: u64,
    written_files: Vec<PathBuf>,
}

impl ChunkWriter {
    /// A writer into `dir` (created if needed) of samples of `variant` labelled by
    /// `labels`. `prefix` tells writers sharing a folder apart (e.g. `sp-<time>-<pid>`).
    pub fn new(
        dir: impl AsRef<Path>,
        prefix: &str,
        variant: Variant,
        labels: &dyn PolicyLabels,
        samples_per_chunk: usize,
    ) -> Result<ChunkWriter, SampleError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| SampleError::Io { path: dir.clone(), source })?;
        Ok(ChunkWriter {
            dir,
            prefix: prefix.to_string(),
            batcher: ChunkBatcher::new(ChunkHeader::of(variant, labels), samples_per_chunk),
            written_samples: 0,
            written_files: Vec::new(),
        })
    }

    /// Adds samples; writes full chunks as they fill. Returns the files written.
    pub fn extend(&mut self, samples: impl IntoIterator<Item = Sample>) -> Result<Vec<PathBuf>, SampleError> {
        let mut written = Vec::new();
        for s in samples {
            if self.batcher.push(s) {
                written.extend(self.flush()?);
            }
        }
        Ok(written)
    }

    /// Writes the samples held so far (if any) as a chunk.
    pub fn flush(&mut self) -> Result<Option<PathBuf>, SampleError> {
        let Some(chunk) = self.batcher.encode_pending()? else { return Ok(None) };
        let path = self.dir.join(format!("{}-{:06}.{CHUNK_EXTENSION}", self.prefix, chunk.seq));
        files::write_atomic(&path, &chunk.bytes).map_err(|source| SampleError::Io { path: path.clone(), source })?;
        self.batcher.commit();
        self.written_samples += chunk.samples;
        self.written_files.push(path.clone());
        Ok(Some(path))
    }

    pub fn samples_written(&self) -> u64 {
        self.written_samples
    }

    pub fn files_written(&self) -> &[PathBuf] {
        &self.written_files
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for ChunkWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Chunk files (`*.chunk`) of a folder, sorted by name.
pub fn list_chunks(dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, SampleError> {
    let dir = dir.as_ref();
    let rd = std::fs::read_dir(dir).map_err(|source| SampleError::Io { path: dir.to_path_buf(), source })?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == CHUNK_EXTENSION)
                && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    v.sort();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::decode_chunk;
    use crate::labels::GenerationOrderLabels;
    use crate::sample::GameResult;
    use rules::Position;

    fn sample(i: u32) -> Sample {
        Sample {
            sfen: Position::startpos(Variant::Shogi).to_sfen(),
            repetitions: 0,
            policy: vec![(i % 30, 1.0)],
            result: Some(GameResult::Draw),
            root_wdl: [0.25, 0.5, 0.25],
            plies_left: i,
            full_search: true,
            aux: crate::AuxTargets::default(),
        }
    }

    #[test]
    fn the_batcher_numbers_full_chunks_and_keeps_what_was_not_stored() {
        let mut b = ChunkBatcher::new(ChunkHeader::of(Variant::Shogi, &GenerationOrderLabels), 2);
        assert!(!b.push(sample(0)) && b.push(sample(1)));
        let first = b.encode_pending().unwrap().unwrap();
        assert_eq!((first.seq, first.samples), (0, 2));
        // Not committed: the same chunk again.
        assert_eq!(b.encode_pending().unwrap().unwrap(), first);
        b.commit();
        assert_eq!(b.take().unwrap(), None);
        b.push(sample(2));
        let second = b.take().unwrap().unwrap();
        assert_eq!((second.seq, second.samples), (1, 1));
        let chunk = decode_chunk(&second.bytes, Path::new("x"), &GenerationOrderLabels).unwrap();
        assert_eq!(chunk.header, ChunkHeader { count: 1, ..ChunkHeader::of(Variant::Shogi, &GenerationOrderLabels) });
        assert_eq!(chunk.samples[0].plies_left, 2);
    }

    #[test]
    fn the_writer_names_its_files_and_retries_a_failed_write() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("samples");
        let mut w = ChunkWriter::new(&out, "t", Variant::Shogi, &GenerationOrderLabels, 3).unwrap();
        let written = w.extend((0..7).map(sample)).unwrap();
        assert_eq!(written, [out.join("t-000000.chunk"), out.join("t-000001.chunk")]);
        std::fs::remove_dir_all(&out).unwrap();
        assert!(w.flush().is_err(), "the folder is gone");
        std::fs::create_dir_all(&out).unwrap();
        assert_eq!(w.flush().unwrap(), Some(out.join("t-000002.chunk")));
        assert_eq!((w.samples_written(), w.files_written().len()), (7, 3));
        assert_eq!(list_chunks(&out).unwrap(), [out.join("t-000002.chunk")]);
    }
}
