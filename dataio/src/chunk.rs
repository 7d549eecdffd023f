//! The chunk file: one file of many samples of one variant and encoder version.
//!
//! A fixed 48-byte header, then a zlib-compressed payload of sample records, protected by
//! a CRC-32 of the compressed bytes. The full layout is in `data/FORMAT.md` ("Training
//! samples"). This module is the one encoder and the one decoder of that layout; files are
//! replaced atomically ([`files::write_atomic`]); readers refuse damaged files with a
//! typed [`SampleError`] that names the file and the problem, and check every sample
//! ([`SampleCheck`]) before handing any out.

use std::io::{Read, Write};
use std::path::Path;

use files::write_atomic;
use rayon::prelude::*;
use rules::Variant;

use crate::check::SampleCheck;
use crate::error::SampleError;
#[cfg(test)]
use crate::error::SampleFault;
use crate::labels::PolicyLabels;
use crate::sample::{AuxTargets, GameResult, Sample};

/// First 8 bytes of every chunk file.
pub const CHUNK_MAGIC: [u8; 8] = *b"KOMASMPL";
/// Version of the chunk layout written by this code. Version 2 added the unknown result
/// (flags bit 1), version 3 the auxiliary targets ([`crate::AuxTargets`]: flags bits 2
/// and 3, the future WDL, the final material and the reply policy before the policy),
/// version 4 extends the CRC-32 over the header (before, a changed variant byte read as a
/// chunk of another variant with the same samples); readers also read versions 1 to 3
/// (1 and 2: no auxiliary targets; 1 to 3: the CRC covers the payload only) and refuse others.
pub const CHUNK_FORMAT_VERSION: u32 = 4;
/// Bytes of the header before its CRC field, covered by the CRC from version 4 on.
const CRC_COVERED_HEADER: usize = 44;
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

/// What the header of a chunk says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub variant: Variant,
    /// The encoder version of the policy labels ([`crate::PolicyLabels::encoder_version`]).
    pub encoder_version: u32,
    /// Number of policy labels of the encoder (every label is below it).
    pub policy_size: u32,
    /// Samples in the chunk.
    pub count: u32,
}

impl ChunkHeader {
    /// The header of chunks of `variant` labelled by `labels` (`count` 0).
    pub fn of(variant: Variant, labels: &dyn PolicyLabels) -> ChunkHeader {
        ChunkHeader {
            variant,
            encoder_version: labels.encoder_version(),
            policy_size: labels.policy_size(variant),
            count: 0,
        }
    }
}

/// A chunk read from disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub header: ChunkHeader,
    pub samples: Vec<Sample>,
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

/// Appends one sample record of layout `version` (FORMAT.md; writers use
/// [`CHUNK_FORMAT_VERSION`], tests also older ones) to `buf`.
fn encode_record(
    buf: &mut Vec<u8>,
    s: &Sample,
    policy_size: u32,
    index: usize,
    version: u32,
) -> Result<(), SampleError> {
    let bad = |reason: String| SampleError::BadSample { index: Some(index), reason };
    let sfen = s.sfen.as_bytes();
    if sfen.len() > u16::MAX as usize {
        return Err(bad(format!("SFEN of {} bytes is too long", sfen.len())));
    }
    for (what, policy) in [("policy", &s.policy), ("reply policy", &s.aux.reply_policy)] {
        if policy.len() > u16::MAX as usize {
            return Err(bad(format!("{what} of {} moves is too long", policy.len())));
        }
        if let Some(&(l, _)) = policy.iter().find(|&&(l, _)| l >= policy_size) {
            return Err(bad(format!("{what} label {l} is not below the policy size {policy_size}")));
        }
    }
    buf.extend_from_slice(&(sfen.len() as u16).to_le_bytes());
    buf.extend_from_slice(sfen);
    buf.push(s.repetitions);
    buf.push(s.result.map_or(0, GameResult::to_i8) as u8);
    buf.push(record_flags(s, version));
    for v in s.root_wdl {
        put_f32(buf, v);
    }
    buf.extend_from_slice(&s.plies_left.to_le_bytes());
    if version >= 3 {
        for v in s.aux.future_wdl.unwrap_or([0.0; 3]) {
            put_f32(buf, v);
        }
        put_f32(buf, s.aux.final_material.unwrap_or(0.0));
        put_policy(buf, &s.aux.reply_policy);
    }
    put_policy(buf, &s.policy);
    Ok(())
}

/// The flags byte of `s` in layout `version` (the auxiliary targets' bits from version 3).
fn record_flags(s: &Sample, version: u32) -> u8 {
    let mut flags = if s.full_search { FLAG_FULL_SEARCH } else { 0 };
    if s.result.is_none() {
        flags |= FLAG_UNKNOWN_RESULT;
    }
    if version >= 3 {
        if s.aux.future_wdl.is_some() {
            flags |= FLAG_FUTURE_WDL;
        }
        if s.aux.final_material.is_some() {
            flags |= FLAG_FINAL_MATERIAL;
        }
    }
    flags
}

/// A policy target: its length (u16), then (label u32, quantised probability u16) each.
fn put_policy(buf: &mut Vec<u8>, policy: &[(u32, f32)]) {
    buf.extend_from_slice(&(policy.len() as u16).to_le_bytes());
    let probs: Vec<f32> = policy.iter().map(|&(_, p)| p).collect();
    let q = quantise_probs(&probs);
    for (&(l, _), &q) in policy.iter().zip(&q) {
        buf.extend_from_slice(&l.to_le_bytes());
        buf.extend_from_slice(&q.to_le_bytes());
    }
}

/// Serialises a whole chunk (header and compressed payload) to bytes.
pub fn encode_chunk(header_in: &ChunkHeader, samples: &[Sample]) -> Result<Vec<u8>, SampleError> {
    let raw = encode_records(header_in.policy_size, samples)?;
    Ok(wrap_payload(&ChunkHeader { count: samples.len() as u32, ..*header_in }, &raw))
}

/// The uncompressed payload of `samples` (their records back to back), as
/// [`encode_chunk`] compresses it.
pub fn encode_records(policy_size: u32, samples: &[Sample]) -> Result<Vec<u8>, SampleError> {
    encode_records_version(policy_size, samples, CHUNK_FORMAT_VERSION)
}

fn encode_records_version(policy_size: u32, samples: &[Sample], version: u32) -> Result<Vec<u8>, SampleError> {
    let mut raw = Vec::with_capacity(samples.len() * 128);
    for (i, s) in samples.iter().enumerate() {
        encode_record(&mut raw, s, policy_size, i, version)?;
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
    let crc = chunk_crc(CHUNK_FORMAT_VERSION, &out, &payload);
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

/// The CRC-32 of a chunk of layout `version`: over the header's first 44 bytes and the
/// compressed payload from version 4 on, over the payload alone before.
fn chunk_crc(version: u32, header: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    if version >= 4 {
        h.update(&header[..CRC_COVERED_HEADER]);
    }
    h.update(payload);
    h.finalize()
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

/// Parses and checks a whole chunk from bytes; `path` only names the source in errors. Its
/// samples are checked with `labels` where the chunk is of their encoder version (else
/// for everything but the legality of the labels).
pub fn decode_chunk(bytes: &[u8], path: &Path, labels: &dyn PolicyLabels) -> Result<Chunk, SampleError> {
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
    let computed = chunk_crc(format_version, &bytes[..CRC_COVERED_HEADER], payload);
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
    if header.encoder_version == labels.encoder_version() {
        let expected = labels.policy_size(header.variant);
        if header.policy_size != expected {
            return Err(SampleError::Corrupt {
                path: p(),
                reason: format!(
                    "policy size {} is not the {} encoder's {expected}",
                    header.policy_size, header.variant
                ),
            });
        }
    }
    let check = SampleCheck::new(header.variant, header.policy_size, header.encoder_version, labels);
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

/// Flags bit 0: full search (policy target). Bit 1 (version 2): unknown result. Bits 2
/// and 3 (version 3): the future WDL, the final material is present.
const FLAG_FULL_SEARCH: u8 = 1;
const FLAG_UNKNOWN_RESULT: u8 = 2;
const FLAG_FUTURE_WDL: u8 = 4;
const FLAG_FINAL_MATERIAL: u8 = 8;

/// The flags bits layout `version` knows.
fn known_flags(version: u32) -> u8 {
    match version {
        1 => FLAG_FULL_SEARCH,
        2 => FLAG_FULL_SEARCH | FLAG_UNKNOWN_RESULT,
        _ => FLAG_FULL_SEARCH | FLAG_UNKNOWN_RESULT | FLAG_FUTURE_WDL | FLAG_FINAL_MATERIAL,
    }
}

/// Why one sample record of a chunk payload cannot be decoded.
#[derive(Debug, thiserror::Error)]
enum BadRecord {
    #[error("record runs past the end of the payload")]
    Short,
    #[error("SFEN is not UTF-8")]
    SfenNotUtf8,
    #[error("bad flags byte {0}")]
    Flags(u8),
    #[error("result byte {0} with an unknown result")]
    ResultOfUnknown(i8),
    #[error("bad result byte {0}")]
    Result(i8),
    #[error("policy label {label} is not below the policy size {policy_size}")]
    Label { label: u32, policy_size: u32 },
    #[error("{0} is absent (flags) but not stored as zero")]
    AbsentNotZero(&'static str),
    #[error("{what} probabilities sum to {sum}/{PROB_SCALE}, not 1")]
    ProbabilitySum { what: &'static str, sum: u32 },
}

fn decode_record(c: &mut Cursor<'_>, policy_size: u32, version: u32) -> Result<Sample, BadRecord> {
    let n = c.u16().ok_or(BadRecord::Short)? as usize;
    let sfen = std::str::from_utf8(c.take(n).ok_or(BadRecord::Short)?).map_err(|_| BadRecord::SfenNotUtf8)?.to_string();
    let repetitions = c.u8().ok_or(BadRecord::Short)?;
    let r = c.u8().ok_or(BadRecord::Short)? as i8;
    let flags = c.u8().ok_or(BadRecord::Short)?;
    if flags & !known_flags(version) != 0 {
        return Err(BadRecord::Flags(flags));
    }
    let result = match (flags & FLAG_UNKNOWN_RESULT != 0, r) {
        (true, 0) => None,
        (true, _) => return Err(BadRecord::ResultOfUnknown(r)),
        (false, _) => Some(GameResult::from_i8(r).ok_or(BadRecord::Result(r))?),
    };
    let root_wdl = read_wdl(c)?;
    let plies_left = c.u32().ok_or(BadRecord::Short)?;
    let aux = if version >= 3 { decode_aux(c, flags, policy_size)? } else { AuxTargets::default() };
    let policy = read_policy(c, policy_size, "policy")?;
    Ok(Sample {
        sfen,
        repetitions,
        policy,
        result,
        root_wdl,
        plies_left,
        full_search: flags & FLAG_FULL_SEARCH != 0,
        aux,
    })
}

/// The auxiliary targets of a version 3 record (after `plies_left`).
fn decode_aux(c: &mut Cursor<'_>, flags: u8, policy_size: u32) -> Result<AuxTargets, BadRecord> {
    // An absent value is stored as zero bytes, and only so: one record, one reading.
    let present = |flag: u8, values: &[f32], what: &'static str| {
        let zero = values.iter().all(|v| v.to_bits() == 0);
        if flags & flag == 0 && !zero {
            return Err(BadRecord::AbsentNotZero(what));
        }
        Ok(flags & flag != 0)
    };
    let future_wdl = read_wdl(c)?;
    let final_material = c.f32().ok_or(BadRecord::Short)?;
    let has_future = present(FLAG_FUTURE_WDL, &future_wdl, "future WDL")?;
    let has_material = present(FLAG_FINAL_MATERIAL, &[final_material], "final material")?;
    let reply_policy = read_policy(c, policy_size, "reply policy")?;
    Ok(AuxTargets {
        reply_policy,
        future_wdl: has_future.then_some(future_wdl),
        final_material: has_material.then_some(final_material),
    })
}

fn read_wdl(c: &mut Cursor<'_>) -> Result<[f32; 3], BadRecord> {
    let mut wdl = [0.0; 3];
    for v in &mut wdl {
        *v = c.f32().ok_or(BadRecord::Short)?;
    }
    Ok(wdl)
}

/// A policy target as [`put_policy`] writes it; `what` names it in errors.
fn read_policy(c: &mut Cursor<'_>, policy_size: u32, what: &'static str) -> Result<Vec<(u32, f32)>, BadRecord> {
    let m = c.u16().ok_or(BadRecord::Short)? as usize;
    let mut policy = Vec::with_capacity(m);
    let mut quantised_sum = 0u32;
    for _ in 0..m {
        let l = c.u32().ok_or(BadRecord::Short)?;
        let q = c.u16().ok_or(BadRecord::Short)?;
        if l >= policy_size {
            return Err(BadRecord::Label { label: l, policy_size });
        }
        quantised_sum += q as u32;
        policy.push((l, q as f32 / PROB_SCALE as f32));
    }
    if m > 0 && quantised_sum != PROB_SCALE {
        return Err(BadRecord::ProbabilitySum { what, sum: quantised_sum });
    }
    Ok(policy)
}

/// [`decode_chunk`] that also checks that the chunk holds samples of `variant` with the
/// encoder version of `labels`.
pub fn decode_chunk_expect(
    bytes: &[u8],
    path: &Path,
    variant: Variant,
    labels: &dyn PolicyLabels,
) -> Result<Chunk, SampleError> {
    let chunk = decode_chunk(bytes, path, labels)?;
    if chunk.header.variant != variant {
        return Err(SampleError::WrongVariant { path: path.into(), expected: variant, found: chunk.header.variant });
    }
    let expected = labels.encoder_version();
    if chunk.header.encoder_version != expected {
        let found = chunk.header.encoder_version;
        return Err(SampleError::WrongEncoderVersion { path: path.into(), expected, found });
    }
    Ok(chunk)
}

/// Reads and checks a chunk file ([`decode_chunk`]).
pub fn read_chunk(path: impl AsRef<Path>, labels: &dyn PolicyLabels) -> Result<Chunk, SampleError> {
    let path = path.as_ref();
    decode_chunk(&read_bytes(path)?, path, labels)
}

/// Reads a chunk and checks that it holds samples of `variant` with the encoder version of
/// `labels` ([`decode_chunk_expect`]).
pub fn read_chunk_expect(
    path: impl AsRef<Path>,
    variant: Variant,
    labels: &dyn PolicyLabels,
) -> Result<Chunk, SampleError> {
    let path = path.as_ref();
    decode_chunk_expect(&read_bytes(path)?, path, variant, labels)
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, SampleError> {
    std::fs::read(path).map_err(|source| SampleError::Io { path: path.to_path_buf(), source })
}

/// Writes one chunk file atomically.
pub fn write_chunk(path: impl AsRef<Path>, header: &ChunkHeader, samples: &[Sample]) -> Result<(), SampleError> {
    let path = path.as_ref();
    let bytes = encode_chunk(header, samples)?;
    write_atomic(path, &bytes).map_err(|source| SampleError::Io { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::GenerationOrderLabels;
    use rules::Position;

    fn decode_chunk(bytes: &[u8], path: &Path) -> Result<Chunk, SampleError> {
        super::decode_chunk(bytes, path, &GenerationOrderLabels)
    }

    /// A chunk of the older layout `version`, as that version's writer made it.
    fn encode_chunk_version(header: &ChunkHeader, samples: &[Sample], version: u32) -> Vec<u8> {
        let raw = encode_records_version(header.policy_size, samples, version).unwrap();
        let mut bytes = wrap_payload(&ChunkHeader { count: samples.len() as u32, ..*header }, &raw);
        set_version(&mut bytes, version);
        bytes
    }

    /// Relabels chunk `bytes` as layout `version`, with that version's CRC.
    fn set_version(bytes: &mut [u8], version: u32) {
        bytes[8..12].copy_from_slice(&version.to_le_bytes());
        let crc = chunk_crc(version, &bytes[..CRC_COVERED_HEADER], &bytes[HEADER_LEN..]);
        bytes[CRC_COVERED_HEADER..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
    }

    /// A version 4 chunk's CRC covers its header: a changed variant or count is refused.
    #[test]
    fn a_changed_header_fails_the_checksum() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 2 };
        let bytes = encode_chunk(&header, &[sample(0), sample(1)]).unwrap();
        for (at, value) in [(12, 1u8), (24, 1)] {
            let mut bad = bytes.clone();
            bad[at] = value;
            let e = decode_chunk(&bad, Path::new("h.chunk"));
            assert!(matches!(e, Err(SampleError::ChecksumMismatch { .. })), "byte {at}: {e:?}");
        }
        // Version 3 did not cover it: the same change read as a sho chunk.
        let mut v3 = bytes.clone();
        set_version(&mut v3, 3);
        v3[12] = 1;
        assert_eq!(decode_header(&v3, Path::new("h.chunk")).unwrap().header.variant, Variant::Sho);
    }

    fn sample(i: u32) -> Sample {
        let pos = Position::startpos(Variant::Shogi);
        let legal = GenerationOrderLabels.legal_labels(&pos);
        let label = |k: u32| legal[(i + k) as usize % legal.len()] as u32;
        Sample {
            sfen: pos.to_sfen(),
            repetitions: (i % 3) as u8,
            policy: vec![(label(0), 0.5), (label(1), 0.25), (label(2), 0.25)],
            result: [Some(GameResult::Win), Some(GameResult::Draw), Some(GameResult::Loss), None][i as usize % 4],
            root_wdl: [0.5, 0.25, 0.25],
            plies_left: i * 3,
            full_search: i % 2 == 0,
            // Every combination of present and absent auxiliary targets.
            aux: AuxTargets {
                reply_policy: if i % 2 == 0 { vec![(label(3), 0.75), (label(4), 0.25)] } else { vec![] },
                future_wdl: (i % 3 != 1).then_some([0.25, 0.5, 0.25]),
                final_material: (i % 5 != 2).then_some(i as f32 - 4.5),
            },
        }
    }

    /// `a` is `b` up to the quantisation of the policy targets.
    fn assert_same_sample(a: &Sample, b: &Sample) {
        let close = |x: &[(u32, f32)], y: &[(u32, f32)]| {
            x.len() == y.len() && x.iter().zip(y).all(|((lx, px), (ly, py))| lx == ly && (px - py).abs() < 1e-4)
        };
        assert!(close(&a.policy, &b.policy), "{a:?} != {b:?}");
        assert!(close(&a.aux.reply_policy, &b.aux.reply_policy), "{a:?} != {b:?}");
        let strip = |s: &Sample| Sample {
            policy: vec![],
            aux: AuxTargets { reply_policy: vec![], ..s.aux.clone() },
            ..s.clone()
        };
        assert_eq!(strip(a), strip(b));
    }

    /// `s` as a chunk of a layout without auxiliary targets reads it.
    fn without_aux(s: &Sample) -> Sample {
        Sample { aux: AuxTargets::default(), ..s.clone() }
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
        assert_eq!(chunk.samples.len(), samples.len());
        for (a, b) in chunk.samples.iter().zip(&samples) {
            assert_same_sample(a, b);
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

    /// Version 2 (no auxiliary targets) is still read: its samples have none, and its
    /// flags byte knows bits 0 and 1 only.
    #[test]
    fn version_2_chunks_are_read_without_auxiliary_targets() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 8 };
        let samples: Vec<Sample> = (0..8).map(sample).collect();
        let bytes = encode_chunk_version(&header, &samples, 2);
        let p = Path::new("v2.chunk");
        assert_eq!(decode_header(&bytes, p).unwrap().format_version, 2);
        let chunk = decode_chunk(&bytes, p).unwrap();
        assert_eq!(chunk.samples.len(), samples.len());
        for (a, b) in chunk.samples.iter().zip(&samples) {
            assert_same_sample(a, &without_aux(b));
        }
        // A version 2 record cannot say that it has a future WDL (flags bit 2).
        let mut raw = encode_records_version(header.policy_size, &samples[..1], 2).unwrap();
        let flags_at = 2 + samples[0].sfen.len() + 2;
        raw[flags_at] |= FLAG_FUTURE_WDL;
        let mut bytes = wrap_payload(&ChunkHeader { count: 1, ..header }, &raw);
        set_version(&mut bytes, 2);
        let e = decode_chunk(&bytes, p).unwrap_err();
        assert!(e.to_string().contains("sample #0: bad flags byte 5"), "{e}");
    }

    /// Auxiliary targets that break the rules are refused like the policy target.
    #[test]
    fn bad_auxiliary_targets_are_refused() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 1 };
        let with = |aux: AuxTargets| Sample { aux, ..sample(0) };
        let label = sample(0).policy[0].0;
        for (aux, needle) in [
            (
                AuxTargets { reply_policy: vec![(label, 0.5), (label, 0.5)], ..Default::default() },
                "reply policy: policy label",
            ),
            (AuxTargets { future_wdl: Some([0.9, 0.9, 0.9]), ..Default::default() }, "future WDL"),
            (AuxTargets { future_wdl: Some([f32::NAN, 0.5, 0.5]), ..Default::default() }, "future WDL"),
            (AuxTargets { final_material: Some(f32::INFINITY), ..Default::default() }, "final material inf"),
        ] {
            let bytes = encode_chunk(&header, &[with(aux)]).unwrap();
            let e = decode_chunk(&bytes, Path::new("x")).unwrap_err().to_string();
            assert!(e.contains(needle), "{needle}: {e}");
        }
        let out_of_range = with(AuxTargets { reply_policy: vec![(5000, 1.0)], ..Default::default() });
        let e = encode_chunk(&header, &[out_of_range]).unwrap_err().to_string();
        assert!(e.contains("reply policy label 5000"), "{e}");
    }

    /// Version 1 (no unknown result) is still read; its flags byte knows bit 0 only.
    #[test]
    fn version_1_chunks_are_read() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 3 };
        let samples: Vec<Sample> = (0..3).map(sample).collect();
        assert!(samples.iter().all(|s| s.result.is_some()));
        let bytes = encode_chunk_version(&header, &samples, 1);
        let p = Path::new("v1.chunk");
        let chunk = decode_chunk(&bytes, p).unwrap();
        assert_eq!(
            chunk.samples.iter().map(|s| s.result).collect::<Vec<_>>(),
            samples.iter().map(|s| s.result).collect::<Vec<_>>()
        );
        assert_eq!(decode_header(&bytes, p).unwrap().format_version, 1);
        // A version 1 chunk cannot hold an unknown result.
        let with_unknown: Vec<Sample> = (0..4).map(sample).collect();
        let bytes = encode_chunk_version(&ChunkHeader { count: 4, ..header }, &with_unknown, 1);
        let e = decode_chunk(&bytes, p).unwrap_err();
        assert!(e.to_string().contains("sample #3: bad flags byte 2"), "{e}");
    }

    /// Labels are checked against the legal moves for the labels' own encoder version only.
    #[test]
    fn illegal_labels_are_refused_for_the_known_encoder() {
        let header = ChunkHeader { variant: Variant::Shogi, encoder_version: 1, policy_size: 2187, count: 1 };
        let bad = Sample { policy: vec![(100, 1.0)], ..sample(0) };
        let bytes = encode_chunk(&header, std::slice::from_ref(&bad)).unwrap();
        let e = decode_chunk(&bytes, Path::new("x")).unwrap_err();
        assert!(matches!(e, SampleError::InvalidSample { reason: SampleFault::IllegalLabel(100), .. }), "{e}");
        let other = encode_chunk(&ChunkHeader { encoder_version: 2, ..header }, &[bad]).unwrap();
        assert_eq!(decode_chunk(&other, Path::new("x")).unwrap().samples.len(), 1);
        let wrong_size = encode_chunk(&ChunkHeader { policy_size: 3000, ..header }, &[sample(0)]).unwrap();
        assert!(matches!(decode_chunk(&wrong_size, Path::new("x")), Err(SampleError::Corrupt { .. })));
    }
}
