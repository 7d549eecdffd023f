//! The replay window and the loader thread that turns it into minibatches.
//!
//! [`Replay`] holds the newest `capacity` samples (positions), a capacity that is fixed
//! or grows with the samples generated ([`ReplayWindow`]). The [`Loader`] thread
//! draws uniformly random samples from it, encodes them (input planes, dense policy
//! target, WDL target) and keeps a bounded queue of ready minibatches, so the optimiser
//! only waits when the loader cannot keep up; [`Loader::next`] measures that wait.
//!
//! Data parallelism (rayon's global pool): the samples of a batch are encoded in
//! parallel (each is independent work: parse the SFEN, write its planes), and
//! [`Replay::load_dir`] reads and verifies (CRC, decompression, records) its chunk files
//! in parallel.

use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dataio::{decode_header, list_chunks, read_chunk_expect, PolicyLabels, Sample, SampleError, HEADER_LEN};
use model::encoding::Encoder;
use rayon::prelude::*;
use rules::{material_balance, material_win_probability, quiescent_balance, Position, QuiescenceLimits, Variant};
use search::Rng;
use selfplay::sample_encoding::encode_sample_at;

use crate::config::MaterialSearch;

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

/// One encoded minibatch.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub n: usize,
    /// `n * input_len` input planes.
    pub inputs: Vec<f32>,
    /// `n * policy_len` dense policy targets (zeros where the sample has none); empty
    /// when the batch carries them sparse ([`PolicyTargets::Sparse`]).
    pub policy: Vec<f32>,
    /// Sparse policy targets: flat indices (`row * policy_len + label`) into the dense
    /// `n x policy_len` target and their probabilities (only with
    /// [`PolicyTargets::Sparse`]; the learner scatters them on its device).
    pub policy_index: Vec<i64>,
    pub policy_value: Vec<f32>,
    /// `n` weights: 1 where the sample has a policy target (full search), else 0.
    pub policy_mask: Vec<f32>,
    /// `n * 3` win/draw/loss targets (zeros where the sample has none).
    pub wdl: Vec<f32>,
    /// `n` weights: 1 where the sample has a value target (its game's result is known),
    /// else 0.
    pub value_mask: Vec<f32>,
    /// The opponent's reply policy targets (`dataio::AuxTargets::reply_policy`), always
    /// sparse: flat indices (`row * policy_len + label`) and probabilities, for a network
    /// with a reply head (a few dozen pairs a sample; ignored otherwise).
    pub reply_index: Vec<i64>,
    pub reply_value: Vec<f32>,
    /// `n` weights: 1 where the sample has a reply policy target, else 0.
    pub reply_mask: Vec<f32>,
    /// `n` final-material targets, `tanh(final_material / FINAL_MATERIAL_SCALE)` (0 where
    /// the sample has none), for a network with a material head.
    pub material: Vec<f32>,
    /// `n` weights: 1 where the sample has a final-material target, else 0.
    pub material_mask: Vec<f32>,
}

/// Material units per unit of the material head's target before its tanh: a rook (10)
/// up at the end is `tanh(1)` = 0.76, a pawn up 0.1.
pub const FINAL_MATERIAL_SCALE: f32 = 10.0;

/// How a [`Batch`] carries its policy targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicyTargets {
    /// `n x policy_len` values made by the loader's threads: right for CPU training,
    /// where the learner's thread is the one to spare.
    #[default]
    Dense,
    /// (index, probability) pairs, a few dozen per sample, scattered into the dense target
    /// on the learner's device: right for GPU training, where the dense target (2,187
    /// floats per shogi sample) would be built on the host and copied to the device.
    Sparse,
}

/// What the value target mixes into the game's result (`train.q_mix`,
/// `train.material_mix`, `train.future_mix`): `(1 - q_mix - material_mix - future_mix) *
/// result + q_mix * root WDL + material_mix * material WDL + future_mix * future WDL`,
/// the material read statically or after the captures (`train.material_search`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueTargets {
    /// Weight of the search's root WDL.
    pub q_mix: f32,
    /// Weight of the material prior: the side to move's material balance
    /// ([`rules::material_balance`]) as a win probability, `sigmoid(balance /
    /// material_scale)`, no draw.
    pub material_mix: f32,
    /// Material units per logistic unit of that probability (`train.material_scale`).
    pub material_scale: f32,
    /// Whether the material prior reads the static balance or the quiescent one
    /// ([`rules::quiescent_balance`], `train.material_search`).
    pub material_search: MaterialSearch,
    /// Weight of the short-horizon value: the search's root WDL a few plies later
    /// ([`dataio::AuxTargets::future_wdl`]); the result for samples without one.
    pub future_mix: f32,
}

impl Default for ValueTargets {
    /// The game's result alone; the material scale stays a valid divisor.
    fn default() -> ValueTargets {
        ValueTargets::RESULT
    }
}

impl ValueTargets {
    /// The game's result alone (AlphaZero).
    pub const RESULT: ValueTargets = ValueTargets {
        q_mix: 0.0,
        material_mix: 0.0,
        material_scale: rules::MATERIAL_SCALE as f32,
        material_search: MaterialSearch::Static,
        future_mix: 0.0,
    };

    pub fn from_config(cfg: &crate::config::TrainConfig) -> ValueTargets {
        ValueTargets {
            q_mix: cfg.q_mix as f32,
            material_mix: cfg.material_mix as f32,
            material_scale: cfg.material_scale as f32,
            material_search: cfg.material_search,
            future_mix: cfg.future_mix as f32,
        }
    }

    /// The side to move's material win probability in `pos`, when the mix uses it.
    fn material_win(&self, pos: &Position) -> f32 {
        if self.material_mix > 0.0 {
            let balance = match self.material_search {
                MaterialSearch::Static => material_balance(pos, pos.side_to_move()),
                MaterialSearch::Quiescence => quiescent_balance(pos, pos.side_to_move(), QuiescenceLimits::default()),
            };
            material_win_probability(balance, self.material_scale as f64) as f32
        } else {
            0.0
        }
    }

    /// The value target of `s` (`material_win` from [`ValueTargets::material_win`]), or
    /// `None` when its game's result is unknown.
    fn of(&self, s: &Sample, material_win: f32) -> Option<[f32; 3]> {
        let result = s.result?.wdl();
        let material = [material_win, 0.0, 1.0 - material_win];
        let own = 1.0 - self.q_mix - self.material_mix - self.future_mix;
        let future = s.aux.future_wdl.unwrap_or(result);
        Some(std::array::from_fn(|k| {
            own * result[k] + self.q_mix * s.root_wdl[k] + self.material_mix * material[k] + self.future_mix * future[k]
        }))
    }
}

/// The value targets at the learner's current step: [`ValueTargets`] whose material mix
/// fades over the run ([`crate::config::MaterialFade`]). The learner sets the step
/// ([`ValueSchedule::set_step`]; clones share it), the loader reads it for each batch
/// (the `prefetch` batches encoded ahead are a few steps behind).
#[derive(Clone, Debug)]
pub struct ValueSchedule {
    /// Every share but the material mix, which `material` gives at each step.
    targets: ValueTargets,
    material: crate::config::MaterialFade,
    step: Arc<AtomicU64>,
}

impl ValueSchedule {
    /// The value targets of `cfg`, at learner step `step` until it is set again.
    pub fn from_config(cfg: &crate::config::TrainConfig, step: u64) -> ValueSchedule {
        ValueSchedule {
            targets: ValueTargets::from_config(cfg),
            material: cfg.material_fade(),
            step: Arc::new(AtomicU64::new(step)),
        }
    }

    pub fn set_step(&self, step: u64) {
        self.step.store(step, Ordering::Relaxed);
    }

    /// The value targets at the step last set.
    pub fn current(&self) -> ValueTargets {
        let material_mix = self.material.at(self.step.load(Ordering::Relaxed)) as f32;
        ValueTargets { material_mix, ..self.targets }
    }
}

/// The same targets at every step.
impl From<ValueTargets> for ValueSchedule {
    fn from(targets: ValueTargets) -> ValueSchedule {
        let material = crate::config::MaterialFade { mix: targets.material_mix as f64, start: 0, end: 0 };
        ValueSchedule { targets, material, step: Arc::new(AtomicU64::new(0)) }
    }
}

/// Encodes `samples` into a [`Batch`] with dense policy targets, the samples in
/// parallel. Samples whose SFEN does not parse are left out (self-play never writes such
/// samples; this keeps a damaged record from stopping training). `value` says what the
/// value target mixes into the result.
pub fn encode_batch(encoder: &Encoder, samples: &[Sample], value: ValueTargets) -> Batch {
    encode_batch_with(encoder, samples, value, PolicyTargets::Dense)
}

/// [`encode_batch`] with the policy targets dense or sparse.
pub fn encode_batch_with(encoder: &Encoder, samples: &[Sample], value: ValueTargets, targets: PolicyTargets) -> Batch {
    let il = encoder.input_len();
    let pl = encoder.policy_size();
    let n = samples.len();
    let dense = targets == PolicyTargets::Dense;
    let mut b = Batch {
        n,
        inputs: vec![0.0; n * il],
        policy: vec![0.0; if dense { n * pl } else { 0 }],
        policy_mask: vec![0.0; n],
        wdl: vec![0.0; n * 3],
        value_mask: vec![0.0; n],
        reply_mask: vec![0.0; n],
        material: vec![0.0; n],
        material_mask: vec![0.0; n],
        ..Batch::default()
    };
    // The costly part (planes, dense policy) in parallel, one sample per task.
    // Per sample: its material win probability once encoded, `None` if it could not be.
    let encoded: Vec<Option<f32>> = if dense {
        (b.inputs.par_chunks_mut(il), b.policy.par_chunks_mut(pl), samples)
            .into_par_iter()
            .map(|(input, policy, s)| encode_one(encoder, s, value, input, policy))
            .collect()
    } else {
        (b.inputs.par_chunks_mut(il), samples)
            .into_par_iter()
            .map(|(input, s)| encode_one(encoder, s, value, input, &mut []))
            .collect()
    };
    let rows = || samples.iter().zip(&encoded).filter(|(_, e)| e.is_some()).map(|(s, _)| s).enumerate();
    if !dense {
        for (row, s) in rows().filter(|(_, s)| s.full_search) {
            push_sparse(&mut b.policy_index, &mut b.policy_value, row, pl, &s.policy);
        }
    }
    for (row, s) in rows() {
        push_sparse(&mut b.reply_index, &mut b.reply_value, row, pl, &s.aux.reply_policy);
    }
    for (i, s) in samples.iter().enumerate() {
        if s.full_search && !s.policy.is_empty() {
            b.policy_mask[i] = 1.0;
        }
        if !s.aux.reply_policy.is_empty() {
            b.reply_mask[i] = 1.0;
        }
        if let Some(m) = s.aux.final_material {
            b.material[i] = (m / FINAL_MATERIAL_SCALE).tanh();
            b.material_mask[i] = 1.0;
        }
        if let Some(wdl) = encoded[i].and_then(|material| value.of(s, material)) {
            b.wdl[i * 3..i * 3 + 3].copy_from_slice(&wdl);
            b.value_mask[i] = 1.0;
        }
    }
    if encoded.iter().all(Option::is_some) {
        return b;
    }
    // Close the gaps of the samples that failed, keeping the order.
    let mut kept = 0;
    for (i, _) in encoded.iter().enumerate().filter(|(_, e)| e.is_some()) {
        b.inputs.copy_within(i * il..(i + 1) * il, kept * il);
        if dense {
            b.policy.copy_within(i * pl..(i + 1) * pl, kept * pl);
        }
        b.wdl.copy_within(i * 3..(i + 1) * 3, kept * 3);
        b.policy_mask[kept] = b.policy_mask[i];
        b.value_mask[kept] = b.value_mask[i];
        b.reply_mask[kept] = b.reply_mask[i];
        b.material[kept] = b.material[i];
        b.material_mask[kept] = b.material_mask[i];
        kept += 1;
    }
    b.n = kept;
    b.inputs.truncate(kept * il);
    b.policy.truncate(kept * pl);
    b.policy_mask.truncate(kept);
    b.wdl.truncate(kept * 3);
    b.value_mask.truncate(kept);
    b.reply_mask.truncate(kept);
    b.material.truncate(kept);
    b.material_mask.truncate(kept);
    b
}

/// Appends the (label, probability) pairs of batch row `row` as flat indices into an
/// `n x policy_len` target (labels out of range are left out).
fn push_sparse(index: &mut Vec<i64>, value: &mut Vec<f32>, row: usize, policy_len: usize, pairs: &[(u32, f32)]) {
    for &(label, p) in pairs.iter().filter(|(l, _)| (*l as usize) < policy_len) {
        index.push((row * policy_len + label as usize) as i64);
        value.push(p);
    }
}

/// One sample's input planes and dense policy target (when it has one), and its
/// material win probability for `value` (read from the same position); `None` if its
/// position cannot be read.
fn encode_one(
    encoder: &Encoder,
    s: &Sample,
    value: ValueTargets,
    input: &mut [f32],
    policy: &mut [f32],
) -> Option<f32> {
    let pos = s.position(encoder.variant()).ok()?;
    encode_sample_at(encoder, s, &pos, input);
    if s.full_search {
        for &(l, p) in &s.policy {
            if let Some(x) = policy.get_mut(l as usize) {
                *x = p;
            }
        }
    }
    Some(value.material_win(&pos))
}

/// Background minibatch producer over a shared [`Replay`].
pub struct Loader {
    rx: Receiver<Batch>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The value targets, shared with the thread (the learner sets their step).
    value: ValueSchedule,
    /// Seconds the consumer spent waiting in [`Loader::next`], and calls.
    pub wait_seconds: f64,
    pub batches: u64,
}

impl Loader {
    /// Starts the thread: batches of `batch_size` from `replay`, `prefetch` ahead, with
    /// the policy targets dense (CPU learner) or sparse (GPU learner: scattered on the
    /// device), the value targets `value` (fixed [`ValueTargets`] or a [`ValueSchedule`]).
    pub fn spawn(
        replay: Arc<Mutex<Replay>>,
        encoder: Encoder,
        batch_size: usize,
        prefetch: usize,
        value: impl Into<ValueSchedule>,
        seed: u64,
        targets: PolicyTargets,
    ) -> Loader {
        let (tx, rx): (SyncSender<Batch>, Receiver<Batch>) = std::sync::mpsc::sync_channel(prefetch.max(1));
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let value: ValueSchedule = value.into();
        let schedule = value.clone();
        let thread = std::thread::Builder::new()
            .name("koma-loader".into())
            .spawn(move || {
                let mut rng = Rng::new(seed);
                while !stop2.load(Ordering::Relaxed) {
                    let samples = {
                        let r = replay.lock().unwrap_or_else(|e| e.into_inner());
                        r.draw(batch_size, &mut rng)
                    };
                    if samples.is_empty() {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    let b = encode_batch_with(&encoder, &samples, schedule.current(), targets);
                    if b.n == 0 {
                        continue;
                    }
                    if tx.send(b).is_err() {
                        return;
                    }
                }
            })
            .expect("spawn loader thread");
        Loader { rx, stop, thread: Some(thread), value, wait_seconds: 0.0, batches: 0 }
    }

    /// The learner's step, for the value targets of the batches encoded from now on.
    pub fn set_step(&self, step: u64) {
        self.value.set_step(step);
    }

    /// The next minibatch, or `None` if none came within `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Option<Batch> {
        let t = Instant::now();
        let r = match self.rx.recv_timeout(timeout) {
            Ok(b) => Some(b),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        };
        self.wait_seconds += t.elapsed().as_secs_f64();
        if r.is_some() {
            self.batches += 1;
        }
        r
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock a pending send.
        while self.rx.try_recv().is_ok() {}
        if let Some(t) = self.thread.take() {
            // Drain until the thread sees the flag.
            loop {
                if t.is_finished() {
                    break;
                }
                while self.rx.try_recv().is_ok() {}
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dataio::GameResult;
    use selfplay::sample_encoding::encode_sample;
    use selfplay::EncoderLabels;

    fn sample(i: u32) -> Sample {
        Sample {
            sfen: Position::startpos(Variant::Shogi).to_sfen(),
            repetitions: 0,
            policy: vec![(i % 100, 1.0)],
            result: Some(GameResult::Win),
            root_wdl: [0.5, 0.5, 0.0],
            plies_left: 10,
            full_search: i % 2 == 0,
            aux: dataio::AuxTargets::default(),
        }
    }

    #[test]
    fn window_keeps_the_newest() {
        let mut r = Replay::new(3);
        r.extend((0..5).map(sample));
        assert_eq!(r.len(), 3);
        assert_eq!(r.added(), 5);
        assert_eq!(r.samples[0].policy[0].0, 2);
    }

    #[test]
    fn batch_targets() {
        let enc = Encoder::new(Variant::Shogi);
        let b = encode_batch(&enc, &[sample(4), sample(5)], ValueTargets { q_mix: 0.5, ..ValueTargets::RESULT });
        assert_eq!(b.n, 2);
        assert_eq!(b.policy_mask, vec![1.0, 0.0]);
        assert_eq!(b.policy[4], 1.0);
        assert_eq!(&b.wdl[..3], &[0.75, 0.25, 0.0]);
        assert_eq!(b.value_mask, vec![1.0, 1.0]);
        assert_eq!(b.inputs.len(), 2 * enc.input_len());
    }

    /// A sample without a known result has no value target; a sample whose position
    /// cannot be read is left out and the others keep their order and targets.
    #[test]
    fn unknown_results_are_masked_and_bad_samples_dropped() {
        let enc = Encoder::new(Variant::Shogi);
        let unknown = Sample { result: None, ..sample(6) };
        let bad = Sample { sfen: "not a position".into(), ..sample(8) };
        let lost = Sample { result: Some(GameResult::Loss), ..sample(10) };
        let b = encode_batch(&enc, &[unknown, bad, lost], ValueTargets::RESULT);
        assert_eq!(b.n, 2);
        assert_eq!(b.value_mask, vec![0.0, 1.0]);
        assert_eq!(b.wdl, vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(b.policy_mask, vec![1.0, 1.0]);
        let pl = enc.policy_size();
        assert_eq!((b.policy[6], b.policy[pl + 10]), (1.0, 1.0));
        let mut planes = vec![0.0; enc.input_len()];
        encode_sample(&enc, &sample(10), &mut planes).unwrap();
        assert_eq!(&b.inputs[enc.input_len()..], &planes[..]);
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
    fn loader_produces_batches() {
        let replay = Arc::new(Mutex::new(Replay::new(100)));
        replay.lock().unwrap().extend((0..10).map(sample));
        let mut l =
            Loader::spawn(replay, Encoder::new(Variant::Shogi), 4, 2, ValueTargets::RESULT, 1, PolicyTargets::Dense);
        let b = l.next(Duration::from_secs(10)).unwrap();
        assert_eq!(b.n, 4);
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

    /// The loader's value targets follow the step the learner sets: the material share
    /// fades back to the result.
    #[test]
    fn the_loader_fades_the_material_prior_with_the_step() {
        let cfg = crate::config::TrainConfig {
            material_mix: 1.0,
            material_fade_start: 0,
            material_fade_end: 10,
            ..Default::default()
        };
        let replay = Arc::new(Mutex::new(Replay::new(100)));
        // The start position: material balance 0, a material win probability of 0.5.
        replay.lock().unwrap().extend((0..10).map(sample));
        let value = ValueSchedule::from_config(&cfg, 0);
        let mut l = Loader::spawn(replay, Encoder::new(Variant::Shogi), 4, 1, value, 1, PolicyTargets::Dense);
        let b = l.next(Duration::from_secs(10)).unwrap();
        assert_eq!(&b.wdl[..3], &[0.5, 0.0, 0.5]);
        l.set_step(5);
        // The batches encoded before the step was set come first.
        let faded = (0..4).map(|_| l.next(Duration::from_secs(10)).unwrap().wdl[0]).last().unwrap();
        assert_eq!(faded, 0.75);
        l.set_step(10);
        let last = (0..4).map(|_| l.next(Duration::from_secs(10)).unwrap().wdl[..3].to_vec()).last().unwrap();
        assert_eq!(last, vec![1.0, 0.0, 0.0]);
    }
}
