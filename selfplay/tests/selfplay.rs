//! Self-play end to end with the uniform evaluator behind a real batcher: games are
//! played for every variant, samples are written as chunks and read back.

use std::sync::Arc;

use dataio::{list_chunks, read_chunk, read_chunk_expect, ChunkWriter, SampleError};
use model::encoding::Encoder;
use model::{Batcher, BatcherConfig, Evaluator, UniformEvaluator};
use nn::encoding::encode_sample;
use nn::EncoderLabels;
use rules::Variant;
use selfplay::{run_selfplay, Openings, RunOptions, SelfplayFileConfig};

fn config(variant: Variant, gumbel: bool) -> SelfplayFileConfig {
    let mut c = SelfplayFileConfig { variant, ..SelfplayFileConfig::default() };
    c.search.gumbel = gumbel;
    c.search.gumbel_m = 4;
    let sp = &mut c.selfplay;
    sp.workers = 2;
    sp.games_per_worker = 3;
    sp.simulations_full = 12;
    sp.simulations_cheap = 4;
    sp.max_plies = if variant == Variant::Dai { 40 } else { 80 };
    sp.random_opening_plies = 2;
    sp.samples_per_chunk = 50;
    sp.seed = 5;
    c
}

#[test]
fn selfplay_writes_samples_the_reader_loads() {
    for (variant, gumbel) in [(Variant::Shogi, false), (Variant::Sho, true), (Variant::Dai, true)] {
        let cfg = config(variant, gumbel);
        let enc = Encoder::new(variant);
        let eval: Arc<dyn Evaluator> = Arc::new(UniformEvaluator::new(enc.net_shape()));
        let batcher = Batcher::spawn(eval, BatcherConfig { max_batch: 6, ..BatcherConfig::default() });
        let dir = tempfile::tempdir().unwrap();
        let mut writer = ChunkWriter::new(dir.path(), "t", variant, &EncoderLabels, 50).unwrap();
        let mut games = 0;
        let progress = run_selfplay(
            &cfg,
            batcher.handle(),
            &Openings::startpos(variant),
            &RunOptions::games(5),
            |g| {
                games += 1;
                assert!(!g.samples.is_empty());
                writer.extend(g.samples).unwrap();
            },
            |_| {},
        )
        .unwrap();
        writer.flush().unwrap();
        assert_eq!(games, 5);
        assert_eq!(progress.games_done, 5);
        assert!(progress.evaluations > 0 && progress.batched_positions >= progress.evaluations);
        let files = list_chunks(dir.path()).unwrap();
        assert!(!files.is_empty());
        let mut n = 0;
        let mut input = vec![0.0; enc.input_len()];
        for f in &files {
            let chunk = read_chunk_expect(f, variant, &EncoderLabels).unwrap();
            for s in &chunk.samples {
                let pos = s.position(variant).unwrap();
                let legal = pos.legal_moves();
                let sum: f32 = s.policy.iter().map(|p| p.1).sum();
                // No policy target only for a root lost before its evaluation.
                assert!((sum - 1.0).abs() < 1e-3 || (s.policy.is_empty() && !s.full_search));
                for &(l, _) in &s.policy {
                    let mv = enc.index_move_among(&pos, l as usize, &legal);
                    assert!(mv.is_some(), "{variant}: label {l} is no legal move of {}", s.sfen);
                }
                encode_sample(&enc, s, &mut input).unwrap();
            }
            n += chunk.samples.len() as u64;
        }
        assert_eq!(n, progress.samples, "{variant}");
        // Another variant's reader refuses the chunk.
        let other = if variant == Variant::Shogi { Variant::Sho } else { Variant::Shogi };
        assert!(matches!(read_chunk_expect(&files[0], other, &EncoderLabels), Err(SampleError::WrongVariant { .. })));
        // A damaged file is refused with a message naming it.
        let bytes = std::fs::read(&files[0]).unwrap();
        let bad = dir.path().join("bad.chunk");
        std::fs::write(&bad, &bytes[..bytes.len() - 3]).unwrap();
        let e = read_chunk(&bad, &EncoderLabels).unwrap_err();
        assert!(e.to_string().contains("bad.chunk") && e.to_string().contains("truncated"), "{e}");
        drop(batcher);
    }
}

#[test]
fn encode_sample_matches_encoding_with_history() {
    let enc = Encoder::new(Variant::Shogi);
    let mut pos = rules::Position::startpos(Variant::Shogi);
    for m in ["5i5h", "5a5b", "5h5i", "5b5a", "5i5h", "5a5b", "5h5i", "5b5a"] {
        pos.play_usi(m).unwrap();
    }
    assert_eq!(pos.repetitions(), 2);
    let mut a = vec![0.0; enc.input_len()];
    enc.encode(&pos, &mut a);
    let s = dataio::Sample {
        sfen: pos.to_sfen(),
        repetitions: pos.repetitions() as u8,
        policy: vec![],
        result: Some(dataio::GameResult::Draw),
        root_wdl: [0.0, 1.0, 0.0],
        plies_left: 1,
        full_search: true,
        aux: dataio::AuxTargets::default(),
    };
    let mut b = vec![1.0; enc.input_len()];
    encode_sample(&enc, &s, &mut b).unwrap();
    assert_eq!(a, b);
}
