//! Sample chunks at the door: chunks that pass the checksum but hold garbage
//! are refused, and random or mutated chunks never panic the reader, hang, nor come back
//! silently changed. The fuzz loops are bounded (a count and a time cap; the long mode
//! `KOMA_FUZZ_CASES=<n>` runs n inputs a loop, see the shared `fuzz_budget`) and print
//! how many inputs they tried (`cargo test --release -p koma-selfplay --test fuzz_chunks
//! -- --nocapture`).

#[path = "../../rules/tests/support/fuzz_budget.rs"]
mod fuzz_budget;

use std::path::Path;
use std::time::{Duration, Instant};

use fuzz_budget::{cases, more, time_cap, Watchdog};

use dataio::{decode_chunk, encode_chunk, encode_records, wrap_payload, ChunkHeader, GameResult, Sample, SampleError};
use model::encoding::{Encoder, ENCODER_VERSION};
use nn::EncoderLabels;
use rules::{Position, Variant};
use search::Rng;

const PATH: &str = "fuzz.chunk";

fn header(variant: Variant, count: u32) -> ChunkHeader {
    ChunkHeader {
        variant,
        encoder_version: ENCODER_VERSION,
        policy_size: Encoder::new(variant).policy_size() as u32,
        count,
    }
}

/// A few plies of a game of `variant` as samples with legal policy targets.
fn game_samples(variant: Variant, n: usize) -> Vec<Sample> {
    let enc = Encoder::new(variant);
    let mut pos = Position::startpos(variant);
    let mut out = Vec::new();
    for i in 0..n {
        let moves = pos.legal_moves();
        let labels = enc.legal_move_indices(&pos);
        let (a, b) = (i * 7 % labels.len(), (i * 7 + 1) % labels.len());
        out.push(Sample {
            sfen: pos.to_sfen(),
            repetitions: 0,
            policy: if i % 3 == 2 { vec![] } else { vec![(labels[a] as u32, 0.75), (labels[b] as u32, 0.25)] },
            result: Some([GameResult::Win, GameResult::Draw, GameResult::Loss][i % 3]),
            root_wdl: [0.5, 0.25, 0.25],
            plies_left: (n - i) as u32,
            full_search: i % 3 != 2,
            // Auxiliary targets present and absent, so that the fuzzing reaches them too.
            aux: dataio::AuxTargets {
                reply_policy: if i % 2 == 0 { vec![(labels[b] as u32, 0.5), (labels[a] as u32, 0.5)] } else { vec![] },
                future_wdl: (i % 2 == 1).then_some([0.25, 0.5, 0.25]),
                final_material: (i % 3 != 1).then_some(i as f32 - 1.5),
            },
        });
        pos.play(moves[a]);
    }
    out
}

fn decode(bytes: &[u8]) -> Result<dataio::Chunk, SampleError> {
    decode_chunk(bytes, Path::new(PATH), &EncoderLabels)
}

fn invalid_reason(samples: &[Sample]) -> String {
    let bytes = encode_chunk(&header(Variant::Shogi, samples.len() as u32), samples).unwrap();
    match decode(&bytes) {
        Err(SampleError::InvalidSample { reason, .. }) => reason.to_string(),
        other => panic!("expected an invalid sample, got {:?}", other.map(|c| c.samples.len())),
    }
}

#[test]
fn issue_reproducers_intact_chunks_with_garbage_are_refused() {
    let good = game_samples(Variant::Shogi, 6);
    decode(&encode_chunk(&header(Variant::Shogi, 6), &good).unwrap()).expect("good samples pass");
    let with = |f: &dyn Fn(&mut Sample)| {
        let mut v = good.clone();
        f(&mut v[1]);
        v
    };
    let cases: [(&str, Vec<Sample>); 8] = [
        ("not a shogi position", with(&|s| s.sfen = "this is not a sfen".into())),
        ("not a shogi position", with(&|s| s.sfen = Position::startpos(Variant::Dai).to_sfen())),
        ("without a policy target", with(&|s| s.policy.clear())),
        ("root WDL", with(&|s| s.root_wdl = [f32::NAN, 0.5, 0.5])),
        ("root WDL", with(&|s| s.root_wdl = [f32::INFINITY, 0.0, 0.0])),
        ("root WDL", with(&|s| s.root_wdl = [0.9, 0.9, 0.9])),
        ("not a legal move", with(&|s| s.policy = vec![(0, 1.0)])),
        ("appears twice", with(&|s| s.policy = vec![(s.policy[0].0, 0.5), (s.policy[0].0, 0.5)])),
    ];
    for (needle, samples) in cases {
        let reason = invalid_reason(&samples);
        assert!(reason.contains(needle), "{needle}: {reason}");
    }
    // A policy whose stored probabilities do not sum to 1 (built by hand: the writer
    // always quantises to a sum of 1).
    let mut raw = encode_records(header(Variant::Shogi, 1).policy_size, &good[..1]).unwrap();
    let last = raw.len() - 2;
    raw[last..].copy_from_slice(&1000u16.to_le_bytes());
    let e = decode(&wrap_payload(&header(Variant::Shogi, 1), &raw)).unwrap_err().to_string();
    assert!(e.contains("sum to") && e.contains(PATH), "{e}");
    // The header's policy size must be the encoder's.
    let bytes = encode_chunk(&ChunkHeader { policy_size: u32::MAX, ..header(Variant::Shogi, 6) }, &good).unwrap();
    let e = decode(&bytes).unwrap_err().to_string();
    assert!(e.contains("policy size 4294967295"), "{e}");
}

/// Random bytes, some of them behind a valid magic and header: never a panic, never
/// accepted (a random payload cannot carry a matching CRC and zlib stream).
#[test]
fn fuzz_random_bytes_are_refused() {
    let mut rng = Rng::new(fuzz_budget::seed(0x5eed_0001));
    let good = encode_chunk(&header(Variant::Shogi, 4), &game_samples(Variant::Shogi, 4)).unwrap();
    let (start, mut tried, watchdog) = (Instant::now(), 0u64, Watchdog::new("chunk random bytes"));
    let (n, cap) = (cases(20_000), time_cap(Duration::from_secs(5)));
    while more(tried, n, start, cap) {
        let len = rng.below(200);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if rng.bernoulli(0.5) {
            let keep = rng.below(good.len().min(60) + 1);
            bytes.splice(0..0, good[..keep].iter().copied());
        }
        let (read, took) = watchdog.case(|| format!("{bytes:?}"), || decode(&bytes));
        assert!(read.is_err(), "random bytes accepted: {bytes:?}");
        assert!(took < fuzz_budget::slow(), "{took:?} for {bytes:?}");
        tried += 1;
    }
    println!("chunk fuzz: {tried} random inputs, all refused");
}

/// Mutated headers (the checksum covers the payload only): never a panic; a chunk that
/// is still accepted holds exactly the original samples.
#[test]
fn fuzz_mutated_headers_never_change_samples() {
    let mut rng = Rng::new(fuzz_budget::seed(0x5eed_0002));
    let mut tried = 0u64;
    let mut accepted = 0u64;
    let watchdog = Watchdog::new("chunk headers");
    for variant in [Variant::Shogi, Variant::Sho, Variant::Dai] {
        let samples = game_samples(variant, 5);
        let good = encode_chunk(&header(variant, 5), &samples).unwrap();
        let original = decode(&good).unwrap();
        for _ in 0..cases(3000) {
            let mut bytes = good.clone();
            for _ in 0..1 + rng.below(3) {
                let at = 8 + rng.below(40);
                bytes[at] = if rng.bernoulli(0.5) { rng.next_u64() as u8 } else { bytes[at] ^ (1 << rng.below(8)) };
            }
            tried += 1;
            let (read, took) = watchdog.case(|| format!("{bytes:?}"), || decode(&bytes));
            assert!(took < fuzz_budget::slow(), "{took:?} for {bytes:?}");
            if let Ok(c) = read {
                accepted += 1;
                assert_eq!(c.samples, original.samples);
                assert_eq!((c.header.variant, c.header.count), (variant, 5));
            }
        }
    }
    println!("chunk fuzz: {tried} mutated headers, {accepted} accepted with the original samples");
}

/// Mutated payloads behind a valid checksum: never a panic; a chunk that is still
/// accepted re-encodes to exactly the mutated payload (nothing was silently changed),
/// and every sample passes the checks.
#[test]
fn fuzz_mutated_payloads_are_refused_or_read_exactly() {
    let mut rng = Rng::new(fuzz_budget::seed(0x5eed_0003));
    let (start, mut tried, mut accepted) = (Instant::now(), 0u64, 0u64);
    let (n, cap, watchdog) = (cases(20_000), time_cap(Duration::from_secs(10)), Watchdog::new("chunk payloads"));
    let variants = [Variant::Shogi, Variant::Sho, Variant::Dai];
    let bases: Vec<(Variant, Vec<Sample>, Vec<u8>)> = variants
        .iter()
        .map(|&v| {
            let s = game_samples(v, 4);
            let raw = encode_records(header(v, 4).policy_size, &s).unwrap();
            (v, s, raw)
        })
        .collect();
    while more(tried, n, start, cap) {
        let (variant, _, base) = &bases[rng.below(bases.len())];
        let mut raw = base.clone();
        mutate(&mut raw, &mut rng);
        let h = header(*variant, 4);
        tried += 1;
        let (read, took) = watchdog.case(|| format!("{raw:?}"), || decode(&wrap_payload(&h, &raw)));
        assert!(took < fuzz_budget::slow(), "{took:?} for {raw:?}");
        if let Ok(c) = read {
            accepted += 1;
            let again = encode_records(h.policy_size, &c.samples).unwrap();
            assert_eq!(again, raw, "a mutated payload was read as something else");
        }
    }
    println!("chunk fuzz: {tried} mutated payloads, {accepted} accepted (each read back byte for byte)");
}

fn mutate(raw: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..1 + rng.below(3) {
        if raw.is_empty() {
            raw.push(rng.next_u64() as u8);
            continue;
        }
        let at = rng.below(raw.len());
        match rng.below(6) {
            0 => raw[at] ^= 1 << rng.below(8),
            1 => raw[at] = rng.next_u64() as u8,
            2 => {
                raw.remove(at);
            }
            3 => raw.insert(at, rng.next_u64() as u8),
            4 => raw.truncate(at),
            _ => {
                // A special value: a NaN or infinite float, or the largest integers.
                let special: [u8; 4] =
                    [[0x00, 0x00, 0xc0, 0x7f], [0x00, 0x00, 0x80, 0x7f], [0xff; 4], [0; 4]][rng.below(4)];
                for (k, b) in special.iter().enumerate() {
                    if let Some(x) = raw.get_mut(at + k) {
                        *x = *b;
                    }
                }
            }
        }
    }
}
