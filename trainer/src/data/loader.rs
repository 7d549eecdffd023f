//! The loader thread: draws uniformly random samples from a shared [`Replay`] (and a
//! [`RecordMix`]'s share of each batch from its records), encodes
//! them ([`encode_batch_with`]) and keeps a bounded queue of ready minibatches, so the
//! optimiser only waits when the loader cannot keep up; [`Loader::next`] measures that
//! wait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use model::encoding::Encoder;
use search::Rng;

use super::batch::{encode_batch_with, Batch, PolicyTargets};
use super::mix::RecordMix;
use super::targets::ValueSchedule;
use super::window::Replay;

/// Where the loader draws its samples: the replay window, and records mixed in beside it.
pub struct Sources {
    pub window: Arc<Mutex<Replay>>,
    pub mix: Option<Arc<RecordMix>>,
}

/// The window alone.
impl From<Arc<Mutex<Replay>>> for Sources {
    fn from(window: Arc<Mutex<Replay>>) -> Sources {
        Sources { window, mix: None }
    }
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
    /// Starts the thread: batches of `batch_size` from `sources` (the window, and a
    /// [`RecordMix::count`] of each from the records mixed in), `prefetch` ahead, with
    /// the policy targets dense (CPU learner) or sparse (GPU learner: scattered on the
    /// device), the value targets `value` (fixed [`ValueTargets`] or a [`ValueSchedule`]).
    pub fn spawn(
        sources: impl Into<Sources>,
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
        let Sources { window, mix } = sources.into();
        let from_mix = mix.as_ref().map_or(0, |m| m.count(batch_size));
        let thread = std::thread::Builder::new()
            .name("koma-loader".into())
            .spawn(move || {
                let mut rng = Rng::new(seed);
                while !stop2.load(Ordering::Relaxed) {
                    let mut samples = {
                        let r = window.lock().unwrap_or_else(|e| e.into_inner());
                        r.draw(batch_size - from_mix, &mut rng)
                    };
                    if samples.is_empty() {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    if let Some(mix) = &mix {
                        samples.extend(mix.draw(from_mix, &mut rng));
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
    use crate::data::test_sample as sample;
    use crate::data::ValueTargets;
    use rules::Variant;

    #[test]
    fn loader_produces_batches() {
        let replay = Arc::new(Mutex::new(Replay::new(100)));
        replay.lock().unwrap().extend((0..10).map(sample));
        let mut l =
            Loader::spawn(replay, Encoder::new(Variant::Shogi), 4, 2, ValueTargets::RESULT, 1, PolicyTargets::Dense);
        let b = l.next(Duration::from_secs(10)).unwrap();
        assert_eq!(b.n, 4);
    }

    /// A record mix's share of every batch comes from its records, the rest from the window.
    #[test]
    fn the_records_mixed_in_take_their_share_of_every_batch() {
        let replay = Arc::new(Mutex::new(Replay::new(100)));
        replay.lock().unwrap().extend((0..10).map(sample));
        let lost = |i| dataio::Sample { result: Some(dataio::GameResult::Loss), ..sample(i) };
        let mix = Arc::new(RecordMix::new((0..10).map(lost).collect(), 0.25));
        let sources = Sources { window: replay, mix: Some(mix) };
        let mut l =
            Loader::spawn(sources, Encoder::new(Variant::Shogi), 8, 2, ValueTargets::RESULT, 1, PolicyTargets::Dense);
        for _ in 0..5 {
            let b = l.next(Duration::from_secs(10)).unwrap();
            let results: Vec<&[f32]> = b.wdl.chunks(3).collect();
            assert_eq!(results.len(), 8);
            assert_eq!(results.iter().filter(|r| r[2] == 1.0).count(), 2, "{results:?}");
            assert_eq!(results.iter().filter(|r| r[0] == 1.0).count(), 6, "{results:?}");
        }
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
