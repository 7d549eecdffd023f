//! Training data and losses at the door: chunks that pass the checksum but
//! hold garbage never reach the learner (skipped, reported, counted), and a loss that is
//! not finite stops training instead of being trained on or skipped as f16 overflow.

mod common;

use dataio::{encode_records, wrap_payload, write_chunk, ChunkHeader, GameResult, Sample};
use model::encoding::{Encoder, ENCODER_VERSION};
use model::tch::Device;
use model::{Net, NetConfig};
use nn::EncoderLabels;
use rules::{Position, Variant};
use trainer::config::TrainConfig;
use trainer::data::{encode_batch, ValueTargets};
use trainer::{NetTrainer, Replay};

fn samples(n: usize) -> Vec<Sample> {
    common::game_samples(n, 5, |_| GameResult::Draw, [0.25, 0.5, 0.25])
}

fn header(count: usize) -> ChunkHeader {
    ChunkHeader {
        variant: Variant::Shogi,
        encoder_version: ENCODER_VERSION,
        policy_size: Encoder::new(Variant::Shogi).policy_size() as u32,
        count: count as u32,
    }
}

#[test]
fn garbage_chunks_are_skipped_reported_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let good = samples(8);
    write_chunk(dir.path().join("a-good.chunk"), &header(8), &good).unwrap();
    let bad = |name: &str, f: &dyn Fn(&mut Sample)| {
        let mut s = good.clone();
        f(&mut s[3]);
        write_chunk(dir.path().join(name), &header(8), &s).unwrap();
    };
    bad("b-sfen.chunk", &|s| s.sfen = "garbage".into());
    bad("c-variant.chunk", &|s| s.sfen = Position::startpos(Variant::Dai).to_sfen());
    bad("d-nan.chunk", &|s| s.root_wdl = [f32::NAN, 0.0, 1.0]);
    bad("e-full-empty.chunk", &|s| s.policy.clear());
    // The header claims a policy size of 0xffffffff.
    write_chunk(dir.path().join("f-size.chunk"), &ChunkHeader { policy_size: u32::MAX, ..header(8) }, &good).unwrap();
    // Stored probabilities that do not sum to 1 (built by hand).
    let mut raw = encode_records(header(1).policy_size, &good[..1]).unwrap();
    let last = raw.len() - 2;
    raw[last..].copy_from_slice(&7u16.to_le_bytes());
    std::fs::write(dir.path().join("g-sum.chunk"), wrap_payload(&header(1), &raw)).unwrap();

    let mut replay = Replay::new(1000);
    let (loaded, total, problems) = replay.load_dir(dir.path(), Variant::Shogi, &EncoderLabels);
    assert_eq!((loaded, total), (8, 8), "{problems:#?}");
    assert_eq!(replay.skipped_chunks(), 6);
    assert_eq!(problems.len(), 6);
    for name in ["b-sfen", "c-variant", "d-nan", "e-full-empty", "f-size", "g-sum"] {
        assert!(problems.iter().any(|p| p.contains(name)), "{name} not reported: {problems:#?}");
    }
}

#[test]
fn a_non_finite_loss_stops_training_and_names_the_step() {
    let cfg = NetConfig { blocks: 1, channels: 16, value_channels: 4, value_hidden: 16, ..Default::default() };
    let enc = Encoder::new(Variant::Shogi);
    let net = Net::new(&cfg, enc.net_shape(), 3, Device::Cpu).unwrap();
    let tcfg = TrainConfig {
        lr: 0.01,
        warmup_steps: 0,
        precision: trainer::config::TrainPrecision::F32,
        ..Default::default()
    };
    let mut learner = NetTrainer::new(net, &tcfg, 41);
    let mut batch = encode_batch(&enc, &samples(4), ValueTargets::RESULT);
    learner.train_step(&batch).expect("a good batch trains");
    assert_eq!(learner.step, 42);
    batch.inputs[5] = f32::NAN;
    let e = learner.train_step(&batch).unwrap_err();
    assert_eq!((e.step, e.what), (42, "loss"));
    assert!(e.value.is_nan());
    assert!(e.to_string().contains("step 42") && e.to_string().contains("last checkpoint"), "{e}");
    // No optimiser step was taken.
    assert_eq!(learner.step, 42);
}
