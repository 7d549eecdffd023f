//! `koma bench tree` (`selfplay::bench::bench_tree`): the leaves it counts, with the phases
//! timed and as self-play runs (untimed).

use rules::Variant;
use selfplay::bench::{bench_tree, BenchSettings};
use selfplay::SelfplayFileConfig;

fn config() -> SelfplayFileConfig {
    let mut c = SelfplayFileConfig { variant: Variant::Shogi, ..SelfplayFileConfig::default() };
    let sp = &mut c.selfplay;
    sp.workers = 1;
    sp.games_per_worker = 4;
    sp.simulations_full = 16;
    sp.simulations_cheap = 8;
    sp.max_plies = 60;
    sp.max_batch = 0;
    sp.seed = 1;
    c
}

const SETTINGS: BenchSettings = BenchSettings { seconds: 0.6, warmup: 0.2, rounds: 1 };

#[test]
fn the_timed_bench_counts_every_leaf_in_its_phases() {
    let r = bench_tree(&config(), SETTINGS, true, |_, _| {}).unwrap();
    let t = &r.times.tree;
    assert!(r.positions > 0 && t.leaves > 0, "{r:?}");
    // Every move searched asks the network at least once (its root or a new leaf).
    assert!(t.leaves >= r.positions, "{r:?}");
    assert!(t.nanos.iter().sum::<u64>() > 0, "{r:?}");
}

#[test]
fn the_untimed_bench_counts_the_searches_requests_and_no_phase() {
    let r = bench_tree(&config(), SETTINGS, false, |_, _| {}).unwrap();
    let t = &r.times.tree;
    assert!(r.positions > 0 && t.leaves >= r.positions, "{r:?}");
    assert_eq!(t.nanos.iter().sum::<u64>(), 0, "{r:?}");
    // The same work a leaf as the timed count, within the load's swing: leaves per move
    // are set by the simulations, not by the clock reads.
    let timed = bench_tree(&config(), SETTINGS, true, |_, _| {}).unwrap();
    let per_move = |r: &selfplay::bench::TreeBenchRound| r.times.tree.leaves as f64 / r.positions as f64;
    let (a, b) = (per_move(&r), per_move(&timed));
    assert!(a > 0.5 * b && a < 2.0 * b, "untimed {a:.2} leaves a move, timed {b:.2}");
}
