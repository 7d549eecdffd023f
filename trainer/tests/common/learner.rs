//! A learner role in a test: its options, and sample chunks uploaded as a worker would.
#![allow(dead_code)] // each test crate uses its part

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use dataio::run_layout as layout;
use dataio::{encode_chunk, ChunkHeader, GameResult};
use model::encoding::{Encoder, ENCODER_VERSION};
use rules::Variant;
use trainer::roles::files::RunFiles;
use trainer::LearnerOptions;

/// A run's config: a one-block network of 8 channels trained by AdamW in steps of 8
/// samples (one chunk each), a checkpoint every 2 steps, no evaluation; `train_extra`
/// adds lines to `[train]`.
pub fn tiny_config(train_extra: &str) -> String {
    format!(
        "variant = \"shogi\"\n[model]\nblocks = 1\nchannels = 8\nvalue_channels = 2\nvalue_hidden = 8\n\
         [train]\noptimizer = \"adamw\"\nlr = 0.01\nwarmup_steps = 0\nbatch_size = 8\nmin_replay = 8\n\
         train_ratio = 1.0\ncheckpoint_interval = 2\nlog_interval = 1\nseed = 5\n{train_extra}\
         [eval]\ninterval = 0\n"
    )
}

/// A learner `r` that resumes, stops at `max_steps`, shows no progress and polls often.
pub fn options(max_steps: u64) -> LearnerOptions {
    LearnerOptions {
        name: "r".into(),
        resume: true,
        init: None,
        max_minutes: None,
        max_steps: Some(max_steps),
        progress: false,
        poll: Duration::from_millis(10),
        stop: Arc::new(AtomicBool::new(false)),
        lease_wait: Duration::ZERO,
    }
}

/// Uploads chunk `seq` of worker `w`: `n` samples of one won game.
pub fn chunk(files: &RunFiles, w: &str, seq: u64, n: usize) {
    let samples = super::game_samples(n, 3, |_| GameResult::Win, [0.5, 0.3, 0.2]);
    let header = ChunkHeader {
        variant: Variant::Shogi,
        encoder_version: ENCODER_VERSION,
        policy_size: Encoder::new(Variant::Shogi).policy_size() as u32,
        count: n as u32,
    };
    files
        .store
        .put(&layout::chunk_key(w, 1_700_000_000_000, 7, seq), encode_chunk(&header, &samples).unwrap())
        .unwrap();
}
