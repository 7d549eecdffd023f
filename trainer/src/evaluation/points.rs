//! The checkpoints an evaluation of a run's course plays (`eval.at_end_points`): spread
//! evenly over its steps, the last the run's last checkpoint.

/// Up to `points` of the checkpoint steps `saved` (any order): for k = 1..=points the one
/// nearest step `last * k / points`, the last being the newest; each step once, in order.
/// Step 0 (the untrained network) is left out unless it is the only one.
pub fn spread(saved: &[u64], points: usize) -> Vec<u64> {
    let Some(&last) = saved.iter().max() else { return Vec::new() };
    let trained: Vec<u64> = saved.iter().copied().filter(|&s| s > 0).collect();
    if trained.is_empty() {
        return vec![last];
    }
    let points = points.max(1) as u64;
    let mut out: Vec<u64> = (1..=points)
        .filter_map(|k| {
            let target = (last as u128 * k as u128 / points as u128) as u64;
            trained.iter().copied().min_by_key(|&s| (s.abs_diff(target), s))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_spread_evenly_and_end_at_the_last_checkpoint() {
        let saved: Vec<u64> = (0..=48).map(|k| k * 100).chain([4837]).collect();
        assert_eq!(spread(&saved, 4), [1200, 2400, 3600, 4837]);
        assert_eq!(spread(&saved, 1), [4837]);
        assert_eq!(spread(&saved, 3), [1600, 3200, 4837]);
    }

    #[test]
    fn few_checkpoints_give_fewer_points_and_step_zero_only_alone() {
        assert_eq!(spread(&[0, 100, 200], 4), [100, 200]);
        assert_eq!(spread(&[300, 0, 100], 8), [100, 300], "any order");
        assert_eq!(spread(&[0], 4), [0]);
        assert_eq!(spread(&[], 4), Vec::<u64>::new());
        // Kept checkpoints only (`train.keep_checkpoints`): the nearest of those.
        assert_eq!(spread(&[0, 4000, 4500, 4800], 4), [4000, 4800]);
    }
}
