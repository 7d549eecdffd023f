//! koma's data formats, without libtorch (so that the torch-free tools read and write
//! them too): the training sample and the chunk files that hold it, the hcpe and hcpe3
//! conversions, the layout of a training run and the `eval.jsonl` records (centipawns
//! and win probabilities are `rules::score`'s).
//!
//! - [`sample`]: [`Sample`], its [`AuxTargets`], [`GameResult`].
//! - [`chunk`]: the chunk codec, the one encoder and the one decoder of the layout in
//!   `data/FORMAT.md` ("Training samples"), with the checks of [`check`] ([`SampleCheck`]).
//! - [`writer`]: [`ChunkBatcher`] (samples into encoded chunks), [`ChunkWriter`] (to numbered
//!   files of a folder), [`list_chunks`].
//! - [`labels`]: [`PolicyLabels`], the network encoder's policy labels as the codec needs
//!   them (koma-nn's `EncoderLabels` is this build's).
//! - [`hcpe`]: dlshogi's hcpe and hcpe3 records <-> samples.
//! - [`run_layout`]: a run's object names (checkpoints `ckpt-<step>`, `models/latest.json`,
//!   chunk names) and [`run_layout::ModelPointer`].
//! - [`eval_log`]: [`EvalRecord`], one line of `eval.jsonl`.
//! - [`book`]: opening books in YaneuraOu's text format ([`book::Book`], [`book::choose`]).
//! - [`openings`]: opening files ([`Opening`], [`load_openings`]), the one parser of
//!   `data/openings/README.md`.
//!
//! ```no_run
//! use dataio::{read_chunk, PolicyLabels, SampleError};
//! # fn f(labels: &dyn PolicyLabels) -> Result<(), SampleError> {
//! let chunk = read_chunk("runs/x/samples/sp-000000.chunk", labels)?;
//! for s in &chunk.samples {
//!     let _pos = s.position(chunk.header.variant)?; // rules::Position from the SFEN
//! }
//! # Ok(()) }
//! ```

pub mod book;
pub mod check;
pub mod chunk;
pub mod error;
pub mod eval_log;
pub mod hcpe;
pub mod labels;
pub mod openings;
pub mod run_layout;
pub mod sample;
pub mod writer;

pub use check::SampleCheck;
pub use chunk::{
    decode_chunk, decode_chunk_expect, decode_header, encode_chunk, encode_records, quantise_probs, read_chunk,
    read_chunk_expect, wrap_payload, write_chunk, Chunk, ChunkHeader, RawHeader, CHUNK_EXTENSION, CHUNK_FORMAT_VERSION,
    CHUNK_MAGIC, HEADER_LEN, OLDEST_CHUNK_FORMAT_VERSION, PROB_SCALE,
};
pub use error::{SampleError, SampleFault};
pub use eval_log::EvalRecord;
pub use labels::PolicyLabels;
pub use openings::{load_openings, parse_openings, BadOpening, Opening, OpeningsError};
pub use sample::{AuxTargets, GameResult, Sample};
pub use writer::{list_chunks, ChunkBatcher, ChunkWriter, EncodedChunk};
