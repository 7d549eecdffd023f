//! Records mixed into every minibatch beside the replay window ([`RecordMix`]:
//! `train.mix_records` and `train.mix_share`).

use dataio::Sample;
use search::Rng;

use super::window::Replay;

/// A fixed set of samples (a teacher's games, an engine's records) of which every
/// minibatch takes the same share, the rest coming from the replay window. What a
/// network learnt from them then stays in its training while self-play's window moves
/// on; dlshogi trains its self-play networks with strong engines' records mixed in.
#[derive(Debug)]
pub struct RecordMix {
    /// All of them: a window as large as the records never drops one.
    records: Replay,
    share: f64,
}

impl RecordMix {
    /// `samples` mixed in at `share` (in [0, 1)) of each minibatch.
    pub fn new(samples: Vec<Sample>, share: f64) -> RecordMix {
        let mut records = Replay::new(samples.len());
        records.extend(samples);
        RecordMix { records, share }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// How many samples of a minibatch of `n` come from the records: `n * share`
    /// rounded, and at least one sample left to the window (the records alone never make
    /// a batch: the learner waits for self-play).
    pub fn count(&self, n: usize) -> usize {
        if self.records.is_empty() {
            return 0;
        }
        ((n as f64 * self.share).round() as usize).min(n.saturating_sub(1))
    }

    /// `n` samples drawn uniformly with replacement (clones).
    pub fn draw(&self, n: usize, rng: &mut Rng) -> Vec<Sample> {
        self.records.draw(n, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_sample as sample;

    #[test]
    fn the_share_of_a_batch_is_rounded_and_leaves_the_window_one() {
        let mix = RecordMix::new((0..10).map(sample).collect(), 0.25);
        assert_eq!((mix.count(128), mix.count(10), mix.count(2), mix.count(1)), (32, 3, 1, 0));
        assert_eq!(RecordMix::new((0..10).map(sample).collect(), 0.99).count(128), 127);
        assert_eq!(RecordMix::new(Vec::new(), 0.5).count(128), 0);
        assert_eq!(RecordMix::new((0..10).map(sample).collect(), 0.0).count(128), 0);
    }
}
