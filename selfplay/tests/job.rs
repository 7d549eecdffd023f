//! A whole self-play job (`koma selfplay`'s work, `selfplay::run`): games from a config to
//! chunk files that are read back, with the counts the summary reports.

use std::path::Path;
use std::time::Duration;

use dataio::{list_chunks, read_chunk};
use model::Precision;
use nn::EncoderLabels;
use rules::Variant;
use selfplay::run::{evaluator, openings, play_to_chunks, ChunkJob, EvaluatorSource, JobError};
use selfplay::SelfplayFileConfig;

fn config() -> SelfplayFileConfig {
    let mut c = SelfplayFileConfig { variant: Variant::Shogi, ..SelfplayFileConfig::default() };
    let sp = &mut c.selfplay;
    sp.workers = 1;
    sp.games_per_worker = 2;
    sp.simulations_full = 8;
    sp.simulations_cheap = 4;
    sp.max_plies = 40;
    sp.samples_per_chunk = 16;
    sp.seed = 3;
    c
}

#[test]
fn a_job_writes_every_sample_to_chunks_and_counts_the_games() {
    let cfg = config();
    let dir = tempfile::tempdir().unwrap();
    let eval = evaluator(&cfg, Precision::Auto, EvaluatorSource::Uniform).unwrap();
    let job = ChunkJob { games: 3, out: dir.path().join("chunks"), progress_every: Duration::from_millis(50) };
    let mut games = 0;
    let s = play_to_chunks(&cfg, eval, &openings(&cfg).unwrap(), &job, || games += 1, |_| {}).unwrap();
    assert_eq!((games, s.progress.games_done), (3, 3));
    assert_eq!(s.sente_wins + s.draws + s.gote_wins, 3);
    assert_eq!(s.samples_written, s.progress.samples);
    assert!(s.full_search_samples > 0 && s.full_search_samples <= s.samples_written);
    assert!(s.batches.positions > 0);
    let files = list_chunks(&job.out).unwrap();
    assert_eq!(files, s.chunks);
    let read: usize = files.iter().map(|f| read_chunk(f, &EncoderLabels).unwrap().samples.len()).sum();
    assert_eq!(read as u64, s.samples_written);
    // Chunks of at most samples_per_chunk samples.
    assert!(files.len() as u64 >= s.samples_written.div_ceil(16));
}

/// The error of a job that must fail.
fn failure<T>(r: Result<T, JobError>) -> JobError {
    r.err().expect("the job fails")
}

#[test]
fn bad_input_is_told_apart_from_a_failed_run() {
    let mut cfg = config();
    cfg.selfplay.opening_file = Some("/nonexistent/openings.txt".into());
    let e = openings(&cfg).unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("/nonexistent/openings.txt"), "{e}");
    let e = failure(evaluator(&config(), Precision::Auto, EvaluatorSource::Network(Path::new("/nonexistent/ckpt"))));
    assert!(matches!(e, JobError::Checkpoint(_)) && e.is_bad_input(), "{e}");
    let mut cfg = config();
    cfg.selfplay.device = "tpu".into();
    let e = failure(evaluator(&cfg, Precision::Auto, EvaluatorSource::Fresh));
    assert!(matches!(e, JobError::Device(_)) && e.is_bad_input(), "{e}");
    assert!(!JobError::ReadBack { read: 1, wrote: 2 }.is_bad_input());
}
