//! Model files fuzzed: a valid tiny model file mutated in its header metadata,
//! its declared network, its tensor table and values (checksum recomputed, so that the
//! checks behind it are reached), its raw safetensors header (huge shapes, offsets and
//! lengths), its bytes and its length, then loaded. Every case must load or return a
//! typed error: never panic, abort or allocate far beyond the file (the process's peak
//! memory is checked at the end; this file holds one test so that nothing else adds to
//! it). Seeded; 300 cases by default (a few seconds in release), `KOMA_FUZZ_CASES=<n>`
//! for n, `KOMA_FUZZ_SEED=<s>` for another sequence (scripts/fuzz.sh, the long mode).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use koma_model::tch::Device;
use koma_model::{export_model, load_net, CheckpointError, Expected, Precision};
use rules::{Position, Variant};
use serde_json::{json, Value};

const DEFAULT_CASES: u64 = 300;

fn cases() -> u64 {
    std::env::var("KOMA_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_CASES)
}

/// The seed of the case sequence: `KOMA_FUZZ_SEED` mixed into the fixed one (0 by default).
fn seed() -> u64 {
    let extra: u64 = std::env::var("KOMA_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    0x6b6f_6d61_2026 ^ extra.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

type Header = HashMap<String, String>;

/// The valid file every case starts from.
struct Base {
    tensors: Tensors,
    header: Header,
    bytes: Vec<u8>,
}

fn base(dir: &Path) -> Base {
    let (_, paths) = save_shogi_checkpoint(&dir.join("ckpt"), 3, 5);
    let out = dir.join("base.safetensors");
    export_model(&paths.meta, &out).unwrap();
    let (tensors, header) = read_tensors(&out);
    Base { tensors, header: header.unwrap(), bytes: std::fs::read(&out).unwrap() }
}

fn serialize(tensors: &Tensors, header: Option<&Header>) -> Vec<u8> {
    use safetensors::tensor::{Dtype, TensorView};
    let views: Vec<_> =
        tensors.iter().map(|(n, s, d)| (n.clone(), TensorView::new(Dtype::F32, s.clone(), d).unwrap())).collect();
    safetensors::serialize(views, &header.cloned()).unwrap()
}

/// The file of `tensors` with `header`, its digest made to match the tensors.
fn with_fresh_digest(tensors: &Tensors, header: &Header) -> Vec<u8> {
    let plain = serialize(tensors, None);
    let digest = koma_model::tensors_sha256(&safetensors::SafeTensors::deserialize(&plain).unwrap());
    let mut h = header.clone();
    h.insert("tensors_sha256".into(), digest);
    serialize(tensors, Some(&h))
}

/// Strings at the edges of what the header's fields parse.
const STRINGS: [&str; 14] = [
    "",
    "0",
    "1",
    "2",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "1e400",
    "koma-model",
    "koma-checkpoint",
    "shogi",
    "dai",
    "{}",
    "{\"blocks\": 256, \"channels\": 4096}",
];

fn json_values() -> Vec<Value> {
    vec![
        json!(0),
        json!(1),
        json!(2),
        json!(3),
        json!(8),
        json!(255),
        json!(256),
        json!(257),
        json!(4096),
        json!(4097),
        json!(65536),
        json!(u32::MAX),
        json!(u64::MAX),
        json!(-1),
        json!(1e30),
        json!(0.5),
        json!("x"),
        json!(null),
        json!(true),
        json!([1, 2]),
        json!({}),
    ]
}

/// One header key removed or replaced, or one field of its `net` / `shape` JSON.
fn mutate_header_field(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let mut header = b.header.clone();
    let keys: Vec<String> = {
        let mut k: Vec<String> = header.keys().cloned().collect();
        k.sort();
        k
    };
    let key = rng.pick(&keys);
    let what = match rng.below(3) {
        0 => {
            header.remove(&key);
            format!("header without {key}")
        }
        1 => {
            let v = rng.pick(&STRINGS).to_string();
            header.insert(key.clone(), v.clone());
            format!("header {key} = {v:?}")
        }
        _ => {
            let key = if rng.below(2) == 0 { "net" } else { "shape" };
            let mut obj: BTreeMap<String, Value> = serde_json::from_str(&header[key]).unwrap();
            let mut fields: Vec<String> = obj.keys().cloned().collect();
            fields.push("unknown_field".into());
            let field = rng.pick(&fields);
            let value = rng.pick(&json_values());
            let what = format!("header {key}.{field} = {value}");
            obj.insert(field, value);
            header.insert(key.into(), serde_json::to_string(&obj).unwrap());
            what
        }
    };
    (what, serialize(&b.tensors, Some(&header)))
}

/// A declared network of another size, up to the largest valid one (5 GB of weights).
fn mutate_declared_network(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let mut header = b.header.clone();
    let mut net: BTreeMap<String, Value> = serde_json::from_str(&header["net"]).unwrap();
    let choices: [(&str, Vec<Value>); 9] = [
        ("blocks", vec![json!(0), json!(1), json!(3), json!(4), json!(255), json!(256)]),
        ("channels", vec![json!(1), json!(7), json!(8), json!(9), json!(4096)]),
        ("global_pooling_every", vec![json!(0), json!(1), json!(2), json!(256)]),
        ("global_pooling_channels", vec![json!(1), json!(4), json!(4096)]),
        ("policy_channels", vec![json!(null), json!(1), json!(6), json!(4096)]),
        ("value_channels", vec![json!(1), json!(2), json!(4096)]),
        ("value_hidden", vec![json!(1), json!(16), json!(65536)]),
        ("reply_policy_head", vec![json!(true), json!(false)]),
        ("material_head", vec![json!(true), json!(false)]),
    ];
    let mut what = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let (field, values) = &choices[rng.below(choices.len())];
        let v = rng.pick(values);
        what.push(format!("{field} = {v}"));
        net.insert(field.to_string(), v);
    }
    header.insert("net".into(), serde_json::to_string(&net).unwrap());
    (format!("declared net {}", what.join(", ")), serialize(&b.tensors, Some(&header)))
}

/// Values that no network should hold, or that overflow.
const FLOATS: [f32; 10] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e38, -3e38, -1.0, 1e6, 0.0, 1e-45, f32::MAX];

/// One or more values of tensors replaced, the digest recomputed.
fn mutate_values(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let mut tensors = b.tensors.clone();
    let mut what = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let t = rng.below(tensors.len());
        let v = rng.pick(&FLOATS);
        let (name, _, data) = &mut tensors[t];
        let scalars = data.len() / 4;
        let all = rng.below(4) == 0;
        let range = if all {
            0..scalars
        } else {
            let i = rng.below(scalars);
            i..i + 1
        };
        for i in range.clone() {
            data[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        what.push(format!("{name}[{range:?}] = {v}"));
    }
    (format!("values {}", what.join(", ")), with_fresh_digest(&tensors, &b.header))
}

/// A tensor dropped, added or reshaped, the digest recomputed.
fn mutate_table(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let mut tensors = b.tensors.clone();
    let t = rng.below(tensors.len());
    let name = tensors[t].0.clone();
    let what = match rng.below(4) {
        0 => {
            tensors.remove(t);
            format!("without {name}")
        }
        1 => {
            let extra = rng.pick(&["blocks.3.conv1.weight", "extra", "", "stem.bn.num_batches_tracked"]);
            tensors.push((extra.to_string(), vec![2], vec![0; 8]));
            format!("extra tensor {extra:?}")
        }
        2 => {
            // Same scalars, other dimensions.
            let n = tensors[t].2.len() / 4;
            tensors[t].1 = vec![n];
            format!("{name} flattened to [{n}]")
        }
        _ => {
            let dims = rng.pick(&[vec![1usize], vec![0], vec![3, 3], vec![1, 1, 1, 1, 1]]);
            let n: usize = dims.iter().product();
            tensors[t] = (name.clone(), dims.clone(), vec![0; 4 * n]);
            format!("{name} replaced by shape {dims:?}")
        }
    };
    (what, with_fresh_digest(&tensors, &b.header))
}

/// The raw safetensors header edited: huge or inconsistent shapes and offsets, other
/// dtypes, a length prefix that lies.
fn mutate_raw_header(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let len = u64::from_le_bytes(b.bytes[..8].try_into().unwrap()) as usize;
    let mut header: BTreeMap<String, Value> = serde_json::from_slice(&b.bytes[8..8 + len]).unwrap();
    let data = &b.bytes[8 + len..];
    let names: Vec<String> = header.keys().filter(|k| *k != "__metadata__").cloned().collect();
    let name = rng.pick(&names);
    let huge = [
        json!([u64::MAX]),
        json!([1u64 << 32, 1u64 << 32]),
        json!([1u64 << 40]),
        json!([4096, 4096, 3, 3]),
        json!([]),
        json!([0]),
    ];
    let mut prefix = None;
    let what = match rng.below(5) {
        0 => {
            let s = rng.pick(&huge);
            header.get_mut(&name).unwrap()["shape"] = s.clone();
            format!("{name}.shape = {s}")
        }
        1 => {
            let o = rng.pick(&[json!([0, u64::MAX]), json!([u64::MAX, 0]), json!([0, 1u64 << 40]), json!([5, 3])]);
            header.get_mut(&name).unwrap()["data_offsets"] = o.clone();
            format!("{name}.data_offsets = {o}")
        }
        2 => {
            let d = rng.pick(&["F16", "F64", "I64", "BOOL", "U8", "BOGUS"]);
            header.get_mut(&name).unwrap()["dtype"] = json!(d);
            format!("{name}.dtype = {d}")
        }
        3 => {
            header.remove("__metadata__");
            "no __metadata__".to_string()
        }
        _ => {
            let p = rng.pick(&[0, 1, 7, len as u64 - 1, len as u64 + 1, b.bytes.len() as u64, 100 << 20, u64::MAX]);
            prefix = Some(p);
            format!("header length prefix {p}")
        }
    };
    let json = serde_json::to_vec(&header).unwrap();
    let mut bytes = prefix.unwrap_or(json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&json);
    bytes.extend_from_slice(data);
    (what, bytes)
}

fn mutate_bits(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let mut bytes = b.bytes.clone();
    let flips = 1 + rng.below(8);
    // Half the cases in the 8-byte prefix and the header, where structure lives.
    let header_end = 8 + u64::from_le_bytes(b.bytes[..8].try_into().unwrap()) as usize;
    for _ in 0..flips {
        let at = if rng.below(2) == 0 { rng.below(header_end) } else { rng.below(bytes.len()) };
        bytes[at] ^= 1 << rng.below(8);
    }
    (format!("{flips} bits flipped"), bytes)
}

fn mutate_length(rng: &mut Rng, b: &Base) -> (String, Vec<u8>) {
    let n = b.bytes.len();
    let cut = match rng.below(3) {
        0 => rng.below(16),
        1 => rng.below(n),
        _ => n - 1 - rng.below(8),
    };
    (format!("truncated to {cut} of {n} bytes"), b.bytes[..cut].to_vec())
}

type Mutator = fn(&mut Rng, &Base) -> (String, Vec<u8>);

const MUTATORS: [Mutator; 7] = [
    mutate_header_field,
    mutate_declared_network,
    mutate_values,
    mutate_table,
    mutate_raw_header,
    mutate_bits,
    mutate_length,
];

/// The error's variant name (`NonFinite`, `Corrupt`, ...), for the summary.
fn kind(e: &CheckpointError) -> String {
    let debug = format!("{e:?}");
    debug.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default().to_string()
}

/// Loads `path` as the engine (every fourth case) or a learner does. `Ok` networks must
/// compute finite outputs for the start position (what the probe promises).
fn load(path: &Path, case: u64) -> Result<(), CheckpointError> {
    let expected = Expected::variant(Variant::Shogi);
    let encoder = koma_model::encoding::Encoder::new(Variant::Shogi);
    let mut x = vec![0f32; encoder.input_len()];
    encoder.encode(&Position::startpos(Variant::Shogi), &mut x);
    if case % 4 == 0 {
        let network = koma_model::load_torch_network(path, &expected, Device::Cpu, Precision::F32)?;
        let out = network.evaluator.evaluate(&x, 1).unwrap();
        assert!(out.policy(0).iter().chain(&out.wdl(0)).all(|v| v.is_finite()), "loaded, but not finite");
    } else {
        let (net, _) = load_net(path, &expected, Device::Cpu)?;
        let (p, v) = net.forward_host(&x, 1).unwrap();
        assert!(p.iter().chain(&v).all(|v| v.is_finite()), "loaded, but not finite");
    }
    Ok(())
}

/// Peak resident memory of this process (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

#[test]
fn mutated_model_files_load_or_give_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let b = base(dir.path());
    load(&dir.path().join("base.safetensors"), 0).expect("the unmutated file loads");
    let cases = cases();
    let mut rng = Rng(seed());
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    for case in 0..cases {
        let m = rng.below(MUTATORS.len());
        let (what, bytes) = MUTATORS[m](&mut rng, &b);
        // Both names a loader accepts for a model file.
        let path = dir.path().join(if case % 2 == 0 { "case.safetensors" } else { "case.model" });
        std::fs::write(&path, &bytes).unwrap();
        let started = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| load(&path, case)));
        let took = started.elapsed();
        if took > slowest.0 {
            slowest = (took, what.clone());
        }
        match result {
            Ok(Ok(())) => *outcomes.entry("loaded".into()).or_default() += 1,
            Ok(Err(e)) => *outcomes.entry(kind(&e)).or_default() += 1,
            Err(_) => failures.push(format!("case {case}: {what}: panicked")),
        }
        if took > Duration::from_secs(5) {
            failures.push(format!("case {case}: {what}: took {took:?}"));
        }
    }
    eprintln!("fuzz model files: {cases} cases, outcomes {outcomes:?}; slowest {:?} ({})", slowest.0, slowest.1);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    if let Some(peak) = peak_rss() {
        // libtorch and the test harness take a few hundred MB; a declared network that
        // got built would take GBs.
        assert!(peak < 1 << 30, "peak resident memory {} MB", peak >> 20);
    }
}
