//! The players' search (`driver::run`): several leaves per evaluation with virtual loss,
//! from one thread or several; the same search as self-play's `Search::run` at batch 1.

use std::sync::{Arc, Mutex};

use nn::encoding::Encoder;
use nn::{EvalError, Evaluation, Evaluator, UniformEvaluator};
use rules::{EndRules, Position, Variant};
use search::driver::{self, Settings};
use search::{
    Control, DirectEvaluator, LeafEvaluator, Limits, PlayerTree, Proof, Rng, Search, SearchConfig, SearchOutcome,
    StopReason,
};

/// An opening position a few plies in (no mate around).
fn position() -> Position {
    let mut pos = Position::startpos(Variant::Shogi);
    for m in ["7g7f", "3c3d", "2g2f", "8c8d"] {
        pos.play_usi(m).unwrap();
    }
    pos
}

fn uniform() -> Arc<dyn Evaluator> {
    Arc::new(UniformEvaluator::new(Encoder::new(Variant::Shogi).net_shape()))
}

fn tree_of(pos: &Position) -> Arc<Mutex<PlayerTree>> {
    Arc::new(Mutex::new(PlayerTree::new(SearchConfig::default(), EndRules::default(), pos)))
}

/// Searches `tree` with `evaluators` (one thread each) to `nodes` simulations.
fn search<L>(tree: &Arc<Mutex<PlayerTree>>, evaluators: Vec<L>, nodes: u64, batch: usize) -> (SearchOutcome, Vec<L>)
where
    L: LeafEvaluator + Send + 'static,
    L::Error: std::fmt::Display,
{
    let encoder = Arc::new(Encoder::new(Variant::Shogi));
    let limits = Limits { nodes: Some(nodes), ..Limits::default() };
    let settings = Settings { batch_size: batch, info_interval_ms: 0, ..Settings::default() };
    let (outcome, workers) = driver::run(tree, evaluators, &encoder, &limits, &settings, &Control::new(), &|_| {});
    (outcome, workers.join())
}

fn direct(threads: usize) -> Vec<DirectEvaluator> {
    (0..threads).map(|_| DirectEvaluator::new(uniform())).collect()
}

fn visits(outcome: &SearchOutcome) -> Vec<(String, u32)> {
    outcome.root.iter().map(|c| (c.mv.to_usi(), c.visits)).collect()
}

#[test]
fn batch_one_is_the_plain_search() {
    let pos = position();
    let (b, _) = search(&tree_of(&pos), direct(1), 150, 1);
    assert_eq!(b.batches.largest_batch, 1);
    assert_eq!(b.batches.leaves, b.batches.batches);
    let enc = Encoder::new(Variant::Shogi);
    let mut plain = Search::new(SearchConfig::default(), EndRules::default(), Variant::Shogi);
    plain.start(&pos, 150, false);
    let n = enc.policy_size();
    plain.run(&enc, &mut Rng::new(1), |_| (vec![0.0; n], [1.0 / 3.0; 3]));
    let plain_visits: Vec<(String, u32)> = plain.root_children().iter().map(|c| (c.mv.to_usi(), c.visits)).collect();
    assert_eq!(visits(&b), plain_visits);
    assert_eq!(b.info.nodes, plain.simulations() as u64);
    assert_eq!(b.stopped_by, StopReason::Done);
}

#[test]
fn batches_fill_up_and_spend_the_budget() {
    let pos = position();
    for threads in [1, 2] {
        let (s, evaluators) = search(&tree_of(&pos), direct(threads), 300, 8);
        assert_eq!(evaluators.len(), threads, "the evaluators come back");
        assert_eq!(s.info.nodes, 300, "threads {threads}");
        let run = s.batches;
        assert!(run.largest_batch > 1 && run.largest_batch <= 8, "{run:?}");
        assert!(run.batches < run.leaves, "{run:?}");
        assert!(pos.is_legal(s.best.unwrap()));
        // Every simulation but the root's went to a child, and every batch was applied.
        let total: u32 = s.root.iter().map(|c| c.visits).sum();
        assert_eq!(total, 299, "threads {threads}");
    }
}

#[test]
fn one_thread_is_deterministic_and_the_tree_is_reused() {
    let pos = position();
    let (a, b) = (tree_of(&pos), tree_of(&pos));
    let (first, _) = search(&a, direct(1), 200, 8);
    assert_eq!(visits(&first), visits(&search(&b, direct(1), 200, 8).0));
    // The move played keeps its subtree: the next search starts from its visits.
    let mut next = pos.clone();
    next.play(first.best.unwrap());
    let kept = a.lock().unwrap().set_root(&next);
    assert!(kept > 0);
    let (second, _) = search(&a, direct(1), 100, 8);
    assert_eq!(second.info.nodes, 100);
    let total: u32 = second.root.iter().map(|c| c.visits).sum();
    assert_eq!(total, kept + 100 - 1);
}

#[test]
fn a_search_finds_a_mate_in_one() {
    // From data/fixtures/mates-shogi.tsv (checked by cshogi): 5d4d mates.
    let sfen = "l5s1l/rsp4G1/pr4S2/1p1p+P1k1p/6p2/5P3/gBGS1N1PN/NB6L/LN1K3G1 b 5P4p 159";
    let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    let (s, _) = search(&tree_of(&pos), direct(2), 200, 16);
    assert_eq!(s.best.unwrap().to_usi(), "5d4d");
    assert!(matches!(s.proof, Proof::Win(1)), "{:?}", s.proof);
    assert_eq!(s.value, 1.0);
}

/// Fails every evaluation after the first `ok` calls.
struct Failing {
    inner: DirectEvaluator,
    ok: usize,
}

impl LeafEvaluator for Failing {
    type Error = EvalError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, EvalError> {
        if self.ok == 0 {
            return Err(EvalError::Panic("test failure".into()));
        }
        self.ok -= 1;
        self.inner.evaluate(inputs, n)
    }
}

#[test]
fn a_failed_evaluation_stops_the_search_cleanly() {
    let pos = position();
    let tree = tree_of(&pos);
    let failing = (0..2).map(|_| Failing { inner: DirectEvaluator::new(uniform()), ok: 3 }).collect();
    let (s, _) = search(&tree, failing, 500, 4);
    let err = s.error.expect("an error");
    assert!(err.to_string().contains("test failure"), "{err}");
    assert_eq!(s.stopped_by, StopReason::Error);
    assert!(s.info.nodes < 500);
    // The tree is consistent and searches again.
    tree.lock().unwrap().reset(&pos);
    let (s, _) = search(&tree, direct(1), 50, 4);
    assert!(s.error.is_none());
    assert_eq!(s.info.nodes, 50);
}

#[test]
fn stop_ends_a_search_at_once() {
    let pos = position();
    let tree = tree_of(&pos);
    let control = Control::new();
    control.stop();
    let encoder = Arc::new(Encoder::new(Variant::Shogi));
    let settings = Settings { batch_size: 8, info_interval_ms: 0, ..Settings::default() };
    let (s, workers) = driver::run(&tree, direct(1), &encoder, &Limits::default(), &settings, &control, &|_| {});
    workers.join();
    assert_eq!(s.stopped_by, StopReason::Stopped);
    assert!(pos.is_legal(s.best.unwrap_or_else(|| pos.legal_moves()[0])));
}
