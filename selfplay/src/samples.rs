//! Training samples and the chunk files that hold them.
//!
//! A chunk is one file of many samples of one variant and encoder version: a fixed
//! 48-byte header, then a zlib-compressed payload of sample records, protected by a
//! CRC-32 of the compressed bytes. The full layout is in `data/FORMAT.md` ("Training
//! samples"). Writers replace files atomically (temporary file in the same folder, fsync,
//! rename, fsync of the folder); readers refuse damaged files with a typed
//! [`SampleError`] that names the file and the problem.
//!
//! ```no_run
//! use selfplay::samples::{read_chunk, ChunkWriter, Sample};
//! # fn main() -> Result<(), selfplay::samples::SampleError> {
//! let chunk = read_chunk("runs/x/samples/sp-000000.chunk")?;
//! for s in &chunk.samples {
//!     let _pos = s.position(chunk.header.variant)?; // rules::Position from the SFEN
//! }
//! # Ok(()) }
//! ```

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use files::write_atomic;
use model::encoding::{Encoder, InputPlane};
use rayon::prelude::*;
use rules::{Color, Position, Variant};

/// First 8 bytes of every chunk file.
pub const CHUNK_MAGIC: [u8; 8] = *b"KOMASMPL";
/// Version of the chunk layout written by this code. Version 2 added the unknown result
/// (flags bit 1); readers also read version 1 and refuse others.
pub const CHUNK_FORMAT_VERSION: u32 = 2;
/// The oldest chunk layout readers still read.
pub const OLDEST_CHUNK_FORMAT_VERSION: u32 = 1;
/// Size of the uncompressed header in bytes.
pub const HEADER_LEN: usize = 48;
/// File name extension of chunk files.
pub const CHUNK_EXTENSION: &str = "chunk";
/// Sum of the quantised probabilities of a policy target.
pub const PROB_SCALE: u32 = 65535;
/// Largest payload a reader accepts (decompressed), a guard against absurd headers.
const MAX_PAYLOAD: u64 = 1 << 32;

/// The game result from the side to move's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    Win,
    Draw,
    Loss,
}

impl GameResult {
    /// +1 win, 0 draw, -1 loss (the stored byte, as i8).
    pub fn to_i8(self) -> i8 {
        match self {
            GameResult::Win => 1,
            GameResult::Draw => 0,
            GameResult::Loss => -1,
        }
    }

    pub fn from_i8(v: i8) -> Option<GameResult> {
        match v {
            1 => Some(GameResult::Win),
            0 => Some(GameResult::Draw),
            -1 => Some(GameResult::Loss),
            _ => None,
        }
    }

    /// The result of a game that `winner` won (`None`: a draw) for the side `side`.
    pub fn for_side(winner: Option<Color>, side: Color) -> GameResult {
        match winner {
            None => GameResult::Draw,
            Some(c) if c == side => GameResult::Win,
            Some(_) => GameResult::Loss,
        }
    }

    /// The same result seen by the other player.
    pub fn flip(self) -> GameResult {
        match self {
            GameResult::Win => GameResult::Loss,
            GameResult::Draw => GameResult::Draw,
            GameResult::Loss => GameResult::Win,
        }
    }

    /// One-hot (win, draw, loss) target.
    pub fn wdl(self) -> [f32; 3] {
        match self {
            GameResult::Win => [1.0, 0.0, 0.0],
            GameResult::Draw => [0.0, 1.0, 0.0],
            GameResult::Loss => [0.0, 0.0, 1.0],
        }
    }
}

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position as SFEN (board, side to move, hands, move number); the move number
    /// feeds the encoder's progress plane.
    pub sfen: String,
    /// How many times this position (board, hands, side to move) occurred before in the
    /// game, capped at 255 ([`rules::Position::repetitions`]); the SFEN cannot carry it and
    /// the encoder's repetition planes need it (see [`encode_sample`]).
    pub repetitions: u8,
    /// The policy target: (policy label of a legal move in the variant's encoder,
    /// probability). Labels are distinct; moves with probability 0 are left out.
    /// Probabilities are stored quantised to 1/65535 and sum to 1 (within that step).
    pub policy: Vec<(u32, f32)>,
    /// The game result from the side to move's view; `None` when it is unknown (a game
    /// record without a result): the sample then has no value target.
    pub result: Option<GameResult>,
    /// The search's value at the root: (win, draw, loss) from the side to move's view.
    pub root_wdl: [f32; 3],
    /// Plies from this position to the end of the game (0: the game ended here, which
    /// self-play never records).
    pub plies_left: u32,
    /// The move got a full search (playout cap randomization): its policy target is a
    /// training target. `false`: a cheap search; train the value only.
    pub full_search: bool,
}

impl Sample {
    /// The position (without game history: [`rules::Position::repetitions`] of the result
    /// is 0; use [`Sample::repetitions`]).
    pub fn position(&self, variant: Variant) -> Result<Position, SampleError> {
        Position::from_sfen(variant, &self.sfen)
            .map_err(|e| SampleError::BadSample { index: None, reason: format!("SFEN `{}`: {e}", self.sfen) })
    }

    /// Dense policy target of `len` labels (zeros elsewhere).
    pub fn dense_policy(&self, len: usize) -> Vec<f32> {
        let mut v = vec![0.0; len];
        for &(l, p) in &self.policy {
            if (l as usize) < len {
                v[l as usize] = p;
            }
        }
        v
    }
}

/// Tolerance of a policy target's and a root WDL's sum (the stored probabilities are
/// multiples of 1/65535; the root WDL comes from f32 averages).
const SUM_TOLERANCE: f32 = 0.01;

/// The rules every sample of a chunk must satisfy, checked by the readers so that no
/// damaged sample reaches a learner: the SFEN is a position of the chunk's variant; the
/// policy target's labels are distinct, below the policy size, and (for the current
/// encoder version) labels of legal moves of that position; its probabilities are
/// finite, in [0, 1] and sum to 1; a full-search sample has a policy target; the root
/// WDL is three finite values in [0, 1] that sum to 1.
pub struct SampleCheck {
    variant: Variant,
    policy_size: u32,
    /// The encoder of the labels, when it is this build's (then labels are checked to be
    /// legal moves).
    encoder: Option<Encoder>,
}

impl SampleCheck {
    pub fn new(variant: Variant, policy_size: u32, encoder_version: u32) -> SampleCheck {
        let encoder = (encoder_version == model::encoding::ENCODER_VERSION).then(|| Encoder::new(variant));
        SampleCheck { variant, policy_size, encoder }
    }

    /// Why `s` is not a valid sample, if it is not.
    pub fn check(&self, s: &Sample) -> Result<(), String> {
        let pos = Position::from_sfen(self.variant, &s.sfen)
            .map_err(|e| format!("SFEN `{}` is not a {} position: {e}", s.sfen, self.variant))?;
        if s.full_search && s.policy.is_empty() {
            return Err("a full-search sample without a policy target".into());
        }
        self.check_policy(&pos, &s.policy)?;
        let wdl = s.root_wdl;
        if wdl.iter().any(|v| !(0.0..=1.0).contains(v)) || (wdl.iter().sum::<f32>() - 1.0).abs() > SUM_TOLERANCE {
            return Err(format!("root WDL {wdl:?} is not three probabilities summing to 1"));
        }
        Ok(())
    }

    fn check_policy(&self, pos: &Position, policy: &[(u32, f32)]) -> Result<(), String> {
        if policy.is_empty() {
            return Ok(());
        }
        let mut labels: Vec<u32> = policy.iter().map(|&(l, _)| l).collect();
        labels.sort_unstable();
        if let Some(w) = labels.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("policy label {} appears twice", w[0]));
        }
        if let Some(&l) = labels.last().filter(|&&l| l >= self.policy_size) {
            return Err(format!("policy label {l} is not below the policy size {}", self.policy_size));
        }
        if let Some(&(l, p)) = policy.iter().find(|&&(_, p)| !(0.0..=1.0).contains(&p)) {
            return Err(format!("policy label {l} has probability {p}"));
        }
        let sum: f32 = policy.iter().map(|&(_, p)| p).sum();
        if (sum - 1.0).abs() > SUM_TOLERANCE {
            return Err(format!("policy probabilities sum to {sum}, not 1"));
        }
        if let Some(enc) = &self.encoder {
            let legal = enc.legal_move_indices(pos);
            if let Some(&l) = labels.iter().find(|&&l| !legal.contains(&(l as usize))) {
                return Err(format!("policy label {l} is not a legal move of the position"));
            }
        }
        Ok(())
    }
}

/// Encodes a sample's position into `out` (`encoder.input_len()` values) exactly as
/// self-play encoded it: [`Encoder::encode`] of the SFEN position, with the repetition
/// planes set from [`Sample::repetitions`] (the SFEN has no game history).
pub fn encode_sample(encoder: &Encoder, sample: &Sample, out: &mut [f32]) -> Result<(), SampleError> {
    encode_sample_at(encoder, sample, &sample.position(encoder.variant())?, out);
    Ok(())
}

/// [`encode_sample`] of a sample whose position (`sample.position(..)`) the caller has
/// already read.
pub fn encode_sample_at(encoder: &Encoder, sample: &Sample, pos: &Position, out: &mut [f32]) {
    encoder.encode(pos, out);
    let squares = encoder.squares();
    for (i, plane) in encoder.input_plane_info().iter().enumerate() {
        if let InputPlane::Repetition { at_least } = *plane {
            let v = if sample.repetitions >= at_least { 1.0 } else { 0.0 };
            out[i * squares..(i + 1) * squares].fill(v);
        }
    }
}

/// What the header of a chunk says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub variant: Variant,
    /// [`model::encoding::ENCODER_VERSION`] of the policy labels.
    pub encoder_version: u32,
    /// Number of policy labels of the encoder (every label is below it).
    pub policy_size: u32,
    /// Samples in the chunk.
    pub count: u32,
}

/// A chunk read from disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub header: ChunkHeader,
    pub samples: Vec<Sample>,
}

#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a koma sample chunk (bad magic bytes)")]
    BadMagic { path: PathBuf },
    #[error(
        "{path}: sample chunk format version {found} is not supported (this build reads versions 1 to {supported})"
    )]
    UnsupportedVersion { path: PathBuf, found: u32, supported: u32 },
    #[error("{path}: truncated sample chunk: {found} bytes, expected {expected}")]
    Truncated { path: PathBuf, expected: u64, found: u64 },
    #[error("{path}: sample chunk is damaged: checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    ChecksumMismatch { path: PathBuf, stored: u32, computed: u32 },
    #[error("{path}: sample chunk is damaged: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: sample chunk is for variant `{found}`, expected `{expected}`")]
    WrongVariant { path: PathBuf, expected: Variant, found: Variant },
    #[error("{path}: sample chunk uses encoder version {found}, expected {expected}")]
    WrongEncoderVersion { path: PathBuf, expected: u32, found: u32 },
    #[error("invalid sample{}: {reason}", index.map(|i| format!(" #{i}")).unwrap_or_default())]
    BadSample { index: Option<usize>, reason: String },
    /// The chunk is intact (its checksum matches) but a sample breaks the format's rules
    /// (see [`SampleCheck`]): the whole chunk is refused.
    #[error("{path}: sample #{index} is invalid: {reason}")]
    InvalidSample { path: PathBuf, index: usize, reason: String },
}

fn variant_code(v: Variant) -> u8 {
    match v {
        Variant::Shogi => 0,
        Variant::Sho => 1,
        Variant::Dai => 2,
    }
}

fn variant_from_code(c: u8) -> Option<Variant> {
    match c {
        0 => Some(Variant::Shogi),
        1 => Some(Variant::Sho),
        2 => Some(Variant::Dai),
        _ => None,
    }
}

/// Quantises probabilities to integers summing to [`PROB_SCALE`] (largest remainder).
/// Non-finite or negative values count as 0; an all-zero input is spread evenly.
pub fn quantise_probs(probs: &[f32]) -> Vec<u16> {
    let n = probs.len();
    if n == 0 {
        return Vec::new();
    }
    let clean: Vec<f64> = probs.iter().map(|&p| if p.is_finite() && p > 0.0 { p as f64 } else { 0.0 }).collect();
    let sum: f64 = clean.iter().sum();
    let scaled: Vec<f64> = if sum > 0.0 {
        clean.iter().map(|p| p / sum * PROB_SCALE as f64).collect()
    } else {
        vec![PROB_SCALE as f64 / n as f64; n]
    };
    let mut q: Vec<u32> = scaled.iter().map(|s| s.floor() as u32).collect();
    let mut left = PROB_SCALE.saturating_sub(q.iter().sum::<u32>());
    if left > 0 {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (scaled[a] - scaled[a].floor(), scaled[b] - scaled[b].floor());
            rb.partial_cmp(&ra).unwrap_or(std::cmp::Ordering::Equal).then(a.cmp(&b))
        });
        for &i in order.iter().cycle() {
            if left == 0 {
                break;
            }
            q[i] += 1;
            left -= 1;
        }
    }
    q.into_iter().map(|v| v.min(u16::MAX as u32) as u16).collect()
}

fn put_f32(buf: &mut Vec<u8>, v: f32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Appends one sample record (layout in FORMAT.md) to `buf`.
fn encode_record(buf: &mut Vec<u8>, s: &Sample, policy_size: u32, index: usize) -> Result<(), SampleError> {
    let bad = |reason: String| SampleError::BadSample { index: Some(index), reason };
    let sfen = s.sfen.as_bytes();
    if sfen.len() > u16::MAX as usize {
        return Err(bad(format!("SFEN of {} bytes is too long", sfen.len())));
    }
    if s.policy.len() > u16::MAX as usize {
        return Err(bad(format!("policy of {} moves is too long", s.policy.len())));
    }
    if let Some(&(l, _)) = s.policy.iter().find(|&&(l, _)| l >= policy_size) {
        return Err(bad(format!("policy label {l} is not below the policy size {policy_size}")));
    }
    buf.extend_from_slice(&(sfen.len() as u16).to_le_bytes());
    buf.extend_from_slice(sfen);
    buf.push(s.repetitions);
    buf.push(s.result.map_or(0, GameResult::to_i8) as u8);
    let unknown = if s.result.is_none() { FLAG_UNKNOWN_RESULT } else { 0 };
    buf.push(if s.full_search { FLAG_FULL_SEARCH } else { 0 } | unknown);
    for v in s.root_wdl {
        put_f32(buf, v);
    }
    buf.extend_from_slice(&s.plies_left.to_le_bytes());
    buf.extend_from_slice(&(s.policy.len() as u16).to_le_bytes());
    let probs: Vec<f32> = s.policy.iter().map(|&(_, p)| p).collect();
    let q = quantise_probs(&probs);
    for (&(l, _), &q) in s.policy.iter().zip(&q) {
        buf.extend_from_slice(&l.to_le_bytes());
        buf.extend_from_slice(&q.to_le_bytes());
    }
    Ok(())
}

/// Serialises a whole chunk (header and compressed payload) to bytes.
pub fn encode_chunk(header_in: &ChunkHeader, samples: &[Sample]) -> Result<Vec<u8>, SampleError> {
    let raw = encode_records(header_in.policy_size, samples)?;
    Ok(wrap_payload(&ChunkHeader { count: samples.len() as u32, ..*header_in }, &raw))
}

/// The uncompressed payload of `samples` (their records back to back), as
/// [`encode_chunk`] compresses it.
pub fn encode_records(policy_size: u32, samples: &[Sample]) -> Result<Vec<u8>, SampleError> {
    let mut raw = Vec::with_capacity(samples.len() * 128);
    for (i, s) in samples.iter().enumerate() {
        encode_record(&mut raw, s, policy_size, i)?;
    }
    Ok(raw)
}

/// A chunk file's bytes around an uncompressed payload `raw` of `header.count` records:
/// the header, the compressed payload and its checksum. Nothing about the records is
/// checked (tools and tests that build payloads themselves).
pub fn wrap_payload(header_in: &ChunkHeader, raw: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::with_capacity(raw.len() / 3), flate2::Compression::new(6));
    enc.write_all(raw).expect("writing to a Vec");
    let payload = enc.finish().expect("writing to a Vec");
    let crc = crc32fast::hash(&payload);
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&CHUNK_MAGIC);
    out.extend_from_slice(&CHUNK_FORMAT_VERSION.to_le_bytes());
    out.push(variant_code(header_in.variant));
    out.extend_from_slice(&[0u8; 3]);
    out.extend_from_slice(&header_in.encoder_version.to_le_bytes());
    out.extend_from_slice(&header_in.policy_size.to_le_bytes());
    out.extend_from_slice(&header_in.count.to_le_bytes());
    out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(&payload);
    out
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }
    fn f32(&mut self) -> Option<f32> {
        self.u32().map(f32::from_bits)
    }
}

/// Everything the first [`HEADER_LEN`] bytes of a chunk say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawHeader {
    pub header: ChunkHeader,
    /// The layout of the records ([`OLDEST_CHUNK_FORMAT_VERSION`] to [`CHUNK_FORMAT_VERSION`]).
    pub format_version: u32,
    /// Payload bytes after decompression.
    pub raw_len: u64,
    /// Compressed payload bytes (the file is `HEADER_LEN + payload_len` bytes).
    pub payload_len: u64,
    /// CRC-32 of the compressed payload.
    pub crc: u32,
}

/// Parses the header only (the first [`HEADER_LEN`] bytes of a chunk).
pub fn decode_header(bytes: &[u8], path: &Path) -> Result<RawHeader, SampleError> {
    let p = || path.to_path_buf();
    if bytes.len() < 8 || bytes[..8] != CHUNK_MAGIC {
        if bytes.len() < 8 && CHUNK_MAGIC.starts_with(bytes) {
            return Err(SampleError::Truncated { path: p(), expected: HEADER_LEN as u64, found: bytes.len() as u64 });
        }
        return Err(SampleError::BadMagic { path: p() });
    }
    if bytes.len() < 12 {
        return Err(SampleError::Truncated { path: p(), expected: HEADER_LEN as u64, found: bytes.len() as u64 });
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if !(OLDEST_CHUNK_FORMAT_VERSION..=CHUNK_FORMAT_VERSION).contains(&version) {
        return Err(SampleError::UnsupportedVersion { path: p(), found: version, supported: CHUNK_FORMAT_VERSION });
    }
    if bytes.len() < HEADER_LEN {
        return Err(SampleError::Truncated { path: p(), expected: HEADER_LEN as u64, found: bytes.len() as u64 });
    }
    let mut c = Cursor { buf: bytes, pos: 12 };
    let vcode = c.u8().unwrap();
    let reserved = c.take(3).unwrap();
    let variant = variant_from_code(vcode)
        .ok_or_else(|| SampleError::Corrupt { path: p(), reason: format!("unknown variant code {vcode}") })?;
    if reserved != [0, 0, 0] {
        return Err(SampleError::Corrupt { path: p(), reason: "reserved header bytes are not zero".into() });
    }
    let encoder_version = c.u32().unwrap();
    let policy_size = c.u32().unwrap();
    let count = c.u32().unwrap();
    let raw_len = c.u64().unwrap();
    let payload_len = c.u64().unwrap();
    let crc = c.u32().unwrap();
    Ok(RawHeader {
        header: ChunkHeader { variant, encoder_version, policy_size, count },
        format_version: version,
        raw_len,
        payload_len,
        crc,
    })
}

/// Parses a whole chunk from bytes; `path` only names the source in errors.
pub fn decode_chunk(bytes: &[u8], path: &Path) -> Result<Chunk, SampleError> {
    let p = || path.to_path_buf();
    let RawHeader { header, format_version, raw_len, payload_len, crc } = decode_header(bytes, path)?;
    let expected = HEADER_LEN as u64 + payload_len;
    if (bytes.len() as u64) < expected {
        return Err(SampleError::Truncated { path: p(), expected, found: bytes.len() as u64 });
    }
    if (bytes.len() as u64) > expected {
        return Err(SampleError::Corrupt {
            path: p(),
            reason: format!("{} bytes after the payload", bytes.len() as u64 - expected),
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let computed = crc32fast::hash(payload);
    if computed != crc {
        return Err(SampleError::ChecksumMismatch { path: p(), stored: crc, computed });
    }
    if raw_len > MAX_PAYLOAD {
        return Err(SampleError::Corrupt { path: p(), reason: format!("payload size {raw_len} is too large") });
    }
    let mut raw = Vec::with_capacity(raw_len as usize);
    flate2::read::ZlibDecoder::new(payload)
        .take(raw_len + 1)
        .read_to_end(&mut raw)
        .map_err(|e| SampleError::Corrupt { path: p(), reason: format!("decompression failed: {e}") })?;
    if raw.len() as u64 != raw_len {
        return Err(SampleError::Corrupt {
            path: p(),
            reason: format!("payload decompresses to {} bytes, header says {raw_len}", raw.len()),
        });
    }
    if header.encoder_version == model::encoding::ENCODER_VERSION {
        let expected = Encoder::new(header.variant).policy_size();
        if header.policy_size as usize != expected {
            return Err(SampleError::Corrupt {
                path: p(),
                reason: format!(
                    "policy size {} is not the {} encoder's {expected}",
                    header.policy_size, header.variant
                ),
            });
        }
    }
    let check = SampleCheck::new(header.variant, header.policy_size, header.encoder_version);
    let mut c = Cursor { buf: &raw, pos: 0 };
    let mut samples = Vec::with_capacity(header.count.min(1 << 20) as usize);
    for i in 0..header.count as usize {
        let s = decode_record(&mut c, header.policy_size, format_version)
            .map_err(|reason| SampleError::Corrupt { path: p(), reason: format!("sample #{i}: {reason}") })?;
        samples.push(s);
    }
    if c.pos != raw.len() {
        return Err(SampleError::Corrupt {
            path: p(),
            reason: format!("{} bytes left after {} samples", raw.len() - c.pos, header.count),
        });
    }
    // Parsing each SFEN and generating its legal moves costs about as much as the rest of
    // the reading: spread it over the cores.
    let invalid = samples.par_iter().enumerate().find_map_first(|(i, s)| check.check(s).err().map(|r| (i, r)));
    if let Some((index, reason)) = invalid {
        return Err(SampleError::InvalidSample { path: p(), index, reason });
    }
    Ok(Chunk { header, samples })
}

/// Flags bit 0: full search (policy target). Bit 1 (version 2): unknown result.
const FLAG_FULL_SEARCH: u8 = 1;
const FLAG_UNKNOWN_RESULT: u8 = 2;

fn decode_record(c: &mut Cursor<'_>, policy_size: u32, version: u32) -> Result<Sample, String> {
    const SHORT: &str = "record runs past the end of the payload";
    let n = c.u16().ok_or(SHORT)? as usize;
    let sfen = std::str::from_utf8(c.take(n).ok_or(SHORT)?).map_err(|_| "SFEN is not UTF-8".to_string())?.to_string();
    let repetitions = c.u8().ok_or(SHORT)?;
    let r = c.u8().ok_or(SHORT)? as i8;
    let flags = c.u8().ok_or(SHORT)?;
    let known_flags = if version >= 2 { FLAG_FULL_SEARCH | FLAG_UNKNOWN_RESULT } else { FLAG_FULL_SEARCH };
    if flags & !known_flags != 0 {
        return Err(format!("bad flags byte {flags}"));
    }
    let result = match (flags & FLAG_UNKNOWN_RESULT != 0, r) {
        (true, 0) => None,
        (true, _) => return Err(format!("result byte {r} with an unknown result")),
        (false, _) => Some(GameResult::from_i8(r).ok_or_else(|| format!("bad result byte {r}"))?),
    };
    let mut root_wdl = [0.0; 3];
    for v in &mut root_wdl {
        *v = c.f32().ok_or(SHORT)?;
    }
    let plies_left = c.u32().ok_or(SHORT)?;
    let m = c.u16().ok_or(SHORT)? as usize;
    let mut policy = Vec::with_capacity(m);
    let mut quantised_sum = 0u32;
    for _ in 0..m {
        let l = c.u32().ok_or(SHORT)?;
        let q = c.u16().ok_or(SHORT)?;
        if l >= policy_size {
            return Err(format!("policy label {l} is not below the policy size {policy_size}"));
        }
        quantised_sum += q as u32;
        policy.push((l, q as f32 / PROB_SCALE as f32));
    }
    if m > 0 && quantised_sum != PROB_SCALE {
        return Err(format!("policy probabilities sum to {quantised_sum}/{PROB_SCALE}, not 1"));
    }
    Ok(Sample { sfen, repetitions, policy, result, root_wdl, plies_left, full_search: flags & FLAG_FULL_SEARCH != 0 })
}

/// Reads and checks a chunk file.
pub fn read_chunk(path: impl AsRef<Path>) -> Result<Chunk, SampleError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| SampleError::Io { path: path.to_path_buf(), source })?;
    decode_chunk(&bytes, path)
}

/// Reads a chunk and checks that it holds samples of `variant` with `encoder_version`.
pub fn read_chunk_expect(path: impl AsRef<Path>, variant: Variant, encoder_version: u32) -> Result<Chunk, SampleError> {
    let path = path.as_ref();
    let chunk = read_chunk(path)?;
    if chunk.header.variant != variant {
        return Err(SampleError::WrongVariant {
            path: path.to_path_buf(),
            expected: variant,
            found: chunk.header.variant,
        });
    }
    if chunk.header.encoder_version != encoder_version {
        return Err(SampleError::WrongEncoderVersion {
            path: path.to_path_buf(),
            expected: encoder_version,
            found: chunk.header.encoder_version,
        });
    }
    Ok(chunk)
}

/// Writes one chunk file atomically.
pub fn write_chunk(path: impl AsRef<Path>, header: &ChunkHeader, samples: &[Sample]) -> Result<(), SampleError> {
    let path = path.as_ref();
    let bytes = encode_chunk(header, samples)?;
    write_atomic(path, &bytes).map_err(|source| SampleError::Io { path: path.to_path_buf(), source })
}

/// Collects samples and writes them as numbered chunk files
/// `<dir>/<prefix>-<seq:06>.chunk` of up to `samples_per_chunk` samples each.
pub struct ChunkWriter {
    dir: PathBuf,
    prefix: String,
    header: ChunkHeader,
    samples_per_chunk: usize,
    pending: Vec<Sample>,
    seq: u64,
    written_samples: u64,
    written_files: Vec<PathBuf>,
}

impl ChunkWriter {
    /// A writer into `dir` (created if needed). `prefix` tells writers sharing a folder
    /// apart (e.g. `sp-<time>-<pid>`). The header's `count` is filled in per chunk.
    pub fn new(
        dir: impl AsRef<Path>,
        prefix: &str,
        variant: Variant,
        encoder: &Encoder,
        samples_per_chunk: usize,
    ) -> Result<ChunkWriter, SampleError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| SampleError::Io { path: dir.clone(), source })?;
        Ok(ChunkWriter {
            dir,
            prefix: prefix.to_string(),
            header: ChunkHeader {
                variant,
                encoder_version: model::encoding::ENCODER_VERSION,
                policy_size: encoder.policy_size() as u32,
                count: 0,
            },
            samples_per_chunk: samples_per_chunk.max(1),
            pending: Vec::new(),
            seq: 0,
            written_samples: 0,
            written_files: Vec::new(),
        })
    }

    /// Adds samples; writes full chunks as they fill. Returns the files written.
    pub fn extend(&mut self, samples: impl IntoIterator<Item = Sample>) -> Result<Vec<PathBuf>, SampleError> {
        let mut written = Vec::new();
        for s in samples {
            self.pending.push(s);
            if self.pending.len() >= self.samples_per_chunk {
                written.push(self.write_pending()?);
            }
        }
        Ok(written)
    }

    /// Writes the samples held so far (if any) as a chunk.
    pub fn flush(&mut self) -> Result<Option<PathBuf>, SampleError> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        self.write_pending().map(Some)
    }

    fn write_pending(&mut self) -> Result<PathBuf, SampleError> {
        let path = self.dir.join(format!("{}-{:06}.{CHUNK_EXTENSION}", self.prefix, self.seq));
        let header = ChunkHeader { count: self.pending.len() as u32, ..self.header };
        write_chunk(&path, &header, &self.pending)?;
        self.seq += 1;
        self.written_samples += self.pending.len() as u64;
        self.pending.clear();
        self.written_files.push(path.clone());
        Ok(path)
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

    fn sample(i: u32) -> Sample {
        let pos = Position::startpos(Variant::Shogi);
        let legal = Encoder::new(Variant::Shogi).legal_move_indices(&pos);
        let label = |k: u32| legal[(i + k) as usize % legal.len()] as u32;
        Sample {
            sfen: pos.to_sfen(),
            repetitions: (i % 3) as u8,
            policy: vec![(label(0), 0.5), (label(1), 0.25), (label(2), 0.25)],
            result: [Some(GameResult::Win), Some(GameResult::Draw), Some(GameResult::Loss), None][i as usize % 4],
            root_wdl: [0.5, 0.25, 0.25],
            plies_left: i * 3,
            full_search: i % 2 == 0,
        }
    }

    #[test]
    fn quantise_sums_to_scale() {
        for probs in [vec![0.3f32, 0.3, 0.4], vec![1.0], vec![0.0, 0.0], vec![1e-9, 1.0, f32::NAN], vec![0.1; 7]] {
            let q = quantise_probs(&probs);
            assert_eq!(q.iter().map(|&v| v as u32).sum::<u32>(), PROB_SCALE, "{probs:?}");
        }
    }

    #[test]
    fn bytes_round_trip_and_damage_is_caught() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 10 };
        let samples: Vec<Sample> = (0..10).map(sample).collect();
        let bytes = encode_chunk(&header, &samples).unwrap();
        let p = Path::new("x.chunk");
        let chunk = decode_chunk(&bytes, p).unwrap();
        assert_eq!(chunk.header, header);
        for (a, b) in chunk.samples.iter().zip(&samples) {
            assert_eq!(a.sfen, b.sfen);
            for ((la, pa), (lb, pb)) in a.policy.iter().zip(&b.policy) {
                assert_eq!(la, lb);
                assert!((pa - pb).abs() < 1e-4);
            }
            assert_eq!(
                (a.result, a.repetitions, a.plies_left, a.full_search),
                (b.result, b.repetitions, b.plies_left, b.full_search)
            );
        }
        assert!(matches!(decode_chunk(&bytes[..bytes.len() - 1], p), Err(SampleError::Truncated { .. })));
        assert!(matches!(decode_chunk(&bytes[..20], p), Err(SampleError::Truncated { .. })));
        let mut bad = bytes.clone();
        bad[HEADER_LEN + 5] ^= 0x40;
        assert!(matches!(decode_chunk(&bad, p), Err(SampleError::ChecksumMismatch { .. })));
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(matches!(decode_chunk(&bad, p), Err(SampleError::BadMagic { .. })));
        let mut bad = bytes.clone();
        bad[8] = 9;
        assert!(matches!(decode_chunk(&bad, p), Err(SampleError::UnsupportedVersion { found: 9, .. })));
        let bad_label = Sample { policy: vec![(5000, 1.0)], ..sample(0) };
        assert!(matches!(encode_chunk(&header, &[bad_label]), Err(SampleError::BadSample { .. })));
    }

    /// Version 1 (no unknown result) is still read; its flags byte knows bit 0 only.
    #[test]
    fn version_1_chunks_are_read() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 3 };
        let samples: Vec<Sample> = (0..3).map(sample).collect();
        assert!(samples.iter().all(|s| s.result.is_some()));
        let mut bytes = encode_chunk(&header, &samples).unwrap();
        // Without an unknown result a version 2 payload is a version 1 payload.
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        let p = Path::new("v1.chunk");
        let chunk = decode_chunk(&bytes, p).unwrap();
        assert_eq!(
            chunk.samples.iter().map(|s| s.result).collect::<Vec<_>>(),
            samples.iter().map(|s| s.result).collect::<Vec<_>>()
        );
        assert_eq!(decode_header(&bytes, p).unwrap().format_version, 1);
        // A version 1 chunk cannot hold an unknown result.
        let with_unknown: Vec<Sample> = (0..4).map(sample).collect();
        let mut bytes = encode_chunk(&ChunkHeader { count: 4, ..header }, &with_unknown).unwrap();
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        let e = decode_chunk(&bytes, p).unwrap_err();
        assert!(e.to_string().contains("sample #3: bad flags byte 2"), "{e}");
    }
}
