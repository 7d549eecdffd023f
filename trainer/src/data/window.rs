//! The replay window: [`Replay`] holds the newest `capacity` samples (positions), a
//! capacity that is fixed or grows with the samples generated ([`ReplayWindow`]), and
//! fills itself from the newest chunk files of a folder ([`Replay::load_dir`], which reads
//! and verifies them (CRC, decompression, records) in parallel on rayon's global pool).

use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};

use dataio::{decode_header, list_chunks, read_chunk_expect, PolicyLabels, Sample, SampleError, HEADER_LEN};
use rayon::prelude::*;
use rules::Variant;
use search::Rng;

/// The newest samples, oldest first.
#[derive(Debug, Default)]
pub struct Replay {
    samples: VecDeque<Sample>,
    capacity: usize,
    /// Samples ever added (including those already dropped from the window).
    added: u64,
    /// Chunk files refused by [`Replay::load_dir`] (damaged or holding invalid samples).
    skipped_chunks: u64,
    /// How `capacity` follows the samples generated ([`Replay::grow_to`]).
    window: ReplayWindow,
}

impl Replay {
    pub fn new(capacity: usize) -> Replay {
        Replay::with_window(ReplayWindow::fixed(capacity))
    }

    /// An empty window whose capacity follows `window` ([`Replay::grow_to`]); its
    /// capacity starts at `window.size_at(0)`.
    pub fn with_window(window: ReplayWindow) -> Replay {
        Replay { samples: VecDeque::new(), capacity: window.size_at(0).max(1), added: 0, skipped_chunks: 0, window }
    }

    /// Sets the capacity to the window's size for `generated` samples generated in the
    /// run so far (a fixed window stays as it is); a smaller one drops the oldest.
    /// Called before the samples that bring the count there are added, so that none of
    /// the older samples that the grown window keeps is dropped on the way.
    pub fn grow_to(&mut self, generated: u64) {
        self.capacity = self.window.size_at(generated).max(1);
        while self.samples.len() > self.capacity {
            self.samples.pop_front();
        }
    }

    pub fn push(&mut self, s: Sample) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(s);
        self.added += 1;
    }

    pub fn extend(&mut self, it: impl IntoIterator<Item = Sample>) {
        for s in it {
            self.push(s);
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn added(&self) -> u64 {
        self.added
    }

    /// Chunk files [`Replay::load_dir`] refused so far (TensorBoard `data/skipped_chunks`).
    pub fn skipped_chunks(&self) -> u64 {
        self.skipped_chunks
    }

    /// `n` samples drawn uniformly with replacement (clones).
    pub fn draw(&self, n: usize, rng: &mut Rng) -> Vec<Sample> {
        if self.samples.is_empty() {
            return Vec::new();
        }
        (0..n).map(|_| self.samples[rng.below(self.samples.len())].clone()).collect()
    }

    /// Fills the window from the newest chunk files of `dir` (names sort by age).
    /// Every sample is checked as its chunk is read (`dataio::SampleCheck`, with `labels`): a
    /// damaged chunk, or one holding an invalid sample, is skipped whole, counted in
    /// [`Replay::skipped_chunks`] and reported in the returned list. Returns the samples
    /// loaded and the total number of samples in all readable chunks of the folder.
    ///
    /// The headers say how many samples each file holds, so the files that fill the
    /// window are known before they are read: they are read and verified in parallel
    /// (again with older files while damaged ones leave the window short).
    pub fn load_dir(&mut self, dir: &Path, variant: Variant, labels: &dyn PolicyLabels) -> (usize, u64, Vec<String>) {
        let mut problems = Vec::new();
        let Ok(files) = list_chunks(dir) else {
            return (0, 0, problems);
        };
        let counts: Vec<Result<u32, SampleError>> = files.par_iter().map(|f| header_count(f)).collect();
        let mut total = 0u64;
        let mut chunks: Vec<Vec<Sample>> = Vec::new();
        let mut held = 0usize;
        // Newest first, until the window is full; older files only counted.
        let mut next = files.len();
        while held < self.capacity && next > 0 {
            let mut wave: Vec<&PathBuf> = Vec::new();
            let mut expected = 0usize;
            while held + expected < self.capacity && next > 0 {
                next -= 1;
                match &counts[next] {
                    Ok(n) => {
                        expected += *n as usize;
                        wave.push(&files[next]);
                    }
                    Err(e) => {
                        self.skipped_chunks += 1;
                        problems.push(e.to_string());
                    }
                }
            }
            let read: Vec<_> = wave.par_iter().map(|f| read_chunk_expect(f, variant, labels)).collect();
            for r in read {
                match r {
                    Ok(c) => {
                        total += c.samples.len() as u64;
                        held += c.samples.len();
                        chunks.push(c.samples);
                    }
                    Err(e) => {
                        self.skipped_chunks += 1;
                        problems.push(e.to_string());
                    }
                }
            }
        }
        total += counts[..next].iter().filter_map(|c| c.as_ref().ok()).map(|&n| n as u64).sum::<u64>();
        let mut loaded = 0;
        for c in chunks.into_iter().rev() {
            loaded += c.len();
            self.extend(c);
        }
        (loaded.min(self.capacity), total, problems)
    }
}

// Replay window that grows with the run (`train.replay_window_*`).
/// How many samples the replay window keeps: `size` (`train.replay_window`, KataGo's `c`),
/// or with `alpha > 0` a window that grows with the samples generated so far, `N`:
/// `c * (1 + beta * ((N / c)^alpha - 1) / alpha)` for `N > c` (KataGo, "Accelerating
/// Self-Play Learning in Go", appendix: c = 250,000, alpha = 0.75, beta = 0.4), `c`
/// before, and at most `max` (0 = no cap).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplayWindow {
    pub size: usize,
    /// 0 = fixed at `size`.
    pub alpha: f64,
    pub beta: f64,
    pub max: usize,
}

impl ReplayWindow {
    /// A window of `size` samples whatever the run generated.
    pub fn fixed(size: usize) -> ReplayWindow {
        ReplayWindow { size, ..ReplayWindow::default() }
    }

    pub fn from_config(cfg: &crate::config::TrainConfig) -> ReplayWindow {
        ReplayWindow {
            size: cfg.replay_window,
            alpha: cfg.replay_window_alpha,
            beta: cfg.replay_window_beta,
            max: cfg.replay_window_max,
        }
    }

    /// The window's size after `generated` samples.
    pub fn size_at(&self, generated: u64) -> usize {
        let c = self.size as f64;
        if self.alpha <= 0.0 || generated as f64 <= c {
            return self.size;
        }
        let grown = c * (1.0 + self.beta * ((generated as f64 / c).powf(self.alpha) - 1.0) / self.alpha);
        let cap = if self.max > 0 { self.max as f64 } else { f64::INFINITY };
        // Without a cap: kept well inside usize (no memory holds that many anyway).
        grown.min(cap).min(1e12) as usize
    }
}

/// The sample count a chunk's header gives (reads the header only).
fn header_count(path: &Path) -> Result<u32, SampleError> {
    let io = |source| SampleError::Io { path: path.to_path_buf(), source };
    let mut head = Vec::with_capacity(HEADER_LEN);
    std::fs::File::open(path).map_err(io)?.take(HEADER_LEN as u64).read_to_end(&mut head).map_err(io)?;
    Ok(decode_header(&head, path)?.header.count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_sample as sample;
    use model::encoding::Encoder;
    use nn::EncoderLabels;
    use rules::Position;

    #[test]
    fn window_keeps_the_newest() {
        let mut r = Replay::new(3);
        r.extend((0..5).map(sample));
        assert_eq!(r.len(), 3);
        assert_eq!(r.added(), 5);
        assert_eq!(r.samples[0].policy[0].0, 2);
    }

    #[test]
    fn load_dir_fills_the_window_from_the_newest_chunks() {
        use dataio::ChunkWriter;
        let enc = Encoder::new(Variant::Shogi);
        let dir = tempfile::tempdir().unwrap();
        {
            let mut w = ChunkWriter::new(dir.path(), "t", Variant::Shogi, &EncoderLabels, 4).unwrap();
            // Chunks are checked when read: the labels must be legal moves of the position.
            let legal = enc.legal_move_indices(&Position::startpos(Variant::Shogi));
            w.extend((0..20).map(|i| Sample { policy: vec![(legal[i as usize] as u32, 1.0)], ..sample(i) })).unwrap();
        }
        // Damage the newest chunk: the window takes one more older file instead.
        let files = list_chunks(dir.path()).unwrap();
        let newest = files.last().unwrap();
        let mut bytes = std::fs::read(newest).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x55;
        std::fs::write(newest, bytes).unwrap();
        let mut r = Replay::new(6);
        let (loaded, total, problems) = r.load_dir(dir.path(), Variant::Shogi, &EncoderLabels);
        assert_eq!((loaded, total, problems.len()), (6, 16, 1), "{problems:?}");
        // Files 3 and 2 (samples 8..16) were read; the window keeps the newest 6.
        let labels: Vec<u32> = r.samples.iter().map(|s| s.policy[0].0).collect();
        let legal = enc.legal_move_indices(&Position::startpos(Variant::Shogi));
        assert_eq!(labels, legal[10..16].iter().map(|&l| l as u32).collect::<Vec<_>>());
    }

    #[test]
    fn growing_window_follows_katagos_formula() {
        let w = ReplayWindow { size: 250_000, alpha: 0.75, beta: 0.4, max: 0 };
        assert_eq!((w.size_at(0), w.size_at(250_000)), (250_000, 250_000));
        // 250000 * (1 + 0.4 * (4^0.75 - 1) / 0.75) = 493790.28
        assert_eq!(w.size_at(1_000_000), 493_790);
        // 250000 * (1 + 0.4 * (400^0.75 - 1) / 0.75) = 12042362.5
        assert_eq!(w.size_at(100_000_000), 12_042_362);
        // Slope beta where it leaves c.
        let slope = (w.size_at(260_000) - w.size_at(250_000)) as f64 / 10_000.0;
        assert!((slope - 0.4).abs() < 0.01, "{slope}");
        assert_eq!(ReplayWindow { max: 400_000, ..w }.size_at(1_000_000), 400_000);
        assert_eq!(ReplayWindow::fixed(500).size_at(u64::MAX), 500);
        assert_eq!(ReplayWindow { alpha: 1.0, ..w }.size_at(u64::MAX), 1_000_000_000_000);
    }

    /// The capacity follows the samples generated and keeps the newest.
    #[test]
    fn the_replay_capacity_follows_the_window() {
        // alpha 1: 4 + 0.5 * (N - 4) above 4 samples, at most 6.
        let mut r = Replay::with_window(ReplayWindow { size: 4, alpha: 1.0, beta: 0.5, max: 6 });
        let mut capacities = Vec::new();
        for i in 0..20 {
            r.grow_to(r.added() + 1);
            r.push(sample(i));
            capacities.push(r.capacity());
        }
        assert_eq!(&capacities[..9], &[4, 4, 4, 4, 4, 5, 5, 6, 6]);
        assert_eq!((r.capacity(), r.len()), (6, 6));
        let kept: Vec<u32> = r.samples.iter().map(|s| s.policy[0].0).collect();
        assert_eq!(kept, (14..20).collect::<Vec<_>>());
        // A resumed run's window is the one of the samples generated so far.
        let mut resumed = Replay::with_window(ReplayWindow { size: 4, alpha: 1.0, beta: 0.5, max: 0 });
        resumed.grow_to(1000);
        assert_eq!(resumed.capacity(), 502);
        // Shrinking (a lower cap on resume) drops the oldest.
        let mut fixed = Replay::new(5);
        fixed.extend((0..5).map(sample));
        fixed.window.size = 2;
        fixed.grow_to(5);
        assert_eq!(fixed.samples.iter().map(|s| s.policy[0].0).collect::<Vec<_>>(), vec![3, 4]);
    }
}
