//! The batched driver (`Search::run_batched`): several leaves per evaluation with virtual
//! loss, from one worker or several; the same search as `Search::run` at batch 1.

use model::encoding::Encoder;
use model::{EvalError, Evaluation, Evaluator, UniformEvaluator};
use rules::{EndRules, Position, Variant};
use search::{DirectEvaluator, LeafEvaluator, Proof, Rng, Search, SearchConfig};

/// An opening position a few plies in (no mate around).
fn position() -> Position {
    let mut pos = Position::startpos(Variant::Shogi);
    for m in ["7g7f", "3c3d", "2g2f", "8c8d"] {
        pos.play_usi(m).unwrap();
    }
    pos
}

fn never(_: &Search) -> bool {
    false
}

/// Runs a batched search of `pos` with `workers` uniform evaluators.
fn batched(pos: &Position, budget: u32, batch: usize, workers: usize) -> (Search, search::BatchedRun) {
    let enc = Encoder::new(Variant::Shogi);
    let ev = UniformEvaluator::new(enc.net_shape());
    let mut evs: Vec<DirectEvaluator> = (0..workers).map(|_| DirectEvaluator::new(&ev)).collect();
    let mut search = Search::new(SearchConfig::default(), EndRules::default(), Variant::Shogi);
    search.start(pos, budget, false);
    let run = search.run_batched(&enc, &mut Rng::new(1), batch, &never, &mut evs).unwrap();
    (search, run)
}

fn visits(search: &Search) -> Vec<(String, u32)> {
    search.root_children().iter().map(|c| (c.mv.to_usi(), c.visits)).collect()
}

#[test]
fn batch_one_is_the_plain_search() {
    let pos = position();
    let (b, run) = batched(&pos, 150, 1, 1);
    assert_eq!(run.largest_batch, 1);
    assert_eq!(run.leaves, run.batches);
    let enc = Encoder::new(Variant::Shogi);
    let mut plain = Search::new(SearchConfig::default(), EndRules::default(), Variant::Shogi);
    plain.start(&pos, 150, false);
    let n = enc.policy_size();
    plain.run(&enc, &mut Rng::new(1), |_| (vec![0.0; n], [1.0 / 3.0; 3]));
    assert_eq!(visits(&b), visits(&plain));
    assert_eq!(b.simulations(), plain.simulations());
}

#[test]
fn batches_fill_up_and_spend_the_budget() {
    let pos = position();
    for workers in [1, 2] {
        let (s, run) = batched(&pos, 300, 8, workers);
        assert_eq!(s.simulations(), 300, "workers {workers}");
        assert_eq!(s.pending(), 0);
        assert!(run.largest_batch > 1 && run.largest_batch <= 8, "{run:?}");
        assert!(run.batches < run.leaves, "{run:?}");
        let mv = s.choose_move(0.0, &mut Rng::new(2)).unwrap();
        assert!(pos.is_legal(mv), "{mv:?}");
        // Every simulation but the root's went to a child.
        let total: u32 = s.root_children().iter().map(|c| c.visits).sum();
        assert_eq!(total, 299, "workers {workers}");
    }
}

#[test]
fn a_batched_search_finds_a_mate_in_one() {
    // From data/fixtures/mates-shogi.tsv (checked by cshogi): 5d4d mates.
    let sfen = "l5s1l/rsp4G1/pr4S2/1p1p+P1k1p/6p2/5P3/gBGS1N1PN/NB6L/LN1K3G1 b 5P4p 159";
    let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    let (s, _) = batched(&pos, 200, 16, 2);
    assert_eq!(s.choose_move(0.0, &mut Rng::new(3)).unwrap().to_usi(), "5d4d");
    assert!(matches!(s.root_proof(), Proof::Win(1)), "{:?}", s.root_proof());
}

/// Fails every evaluation after the first `ok` calls.
struct Failing<'a> {
    inner: DirectEvaluator<'a>,
    ok: usize,
}

impl LeafEvaluator for Failing<'_> {
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
    let enc = Encoder::new(Variant::Shogi);
    let ev = UniformEvaluator::new(enc.net_shape());
    let mut search = Search::new(SearchConfig::default(), EndRules::default(), Variant::Shogi);
    let pos = position();
    search.start(&pos, 500, false);
    let mut evs =
        [Failing { inner: DirectEvaluator::new(&ev), ok: 3 }, Failing { inner: DirectEvaluator::new(&ev), ok: 3 }];
    let err = search.run_batched(&enc, &mut Rng::new(4), 4, &never, &mut evs).unwrap_err();
    assert!(err.to_string().contains("test failure"), "{err}");
    assert_eq!(search.pending(), 0);
    assert!(search.simulations() < 500);
    // The search object is reusable.
    search.start(&pos, 50, false);
    let mut ok = [DirectEvaluator::new(&ev)];
    search.run_batched(&enc, &mut Rng::new(4), 4, &never, &mut ok).unwrap();
    assert_eq!(search.simulations(), 50);
}

#[test]
fn stop_ends_a_batched_search_early() {
    let enc = Encoder::new(Variant::Shogi);
    let ev = UniformEvaluator::new(enc.net_shape());
    let mut search = Search::new(SearchConfig::default(), EndRules::default(), Variant::Shogi);
    search.start(&position(), 10_000, false);
    let stop = |s: &Search| s.simulations() >= 64;
    let mut evs = [DirectEvaluator::new(&ev)];
    search.run_batched(&enc, &mut Rng::new(5), 8, &stop, &mut evs).unwrap();
    assert!((64..64 + 8).contains(&search.simulations()), "{}", search.simulations());
    assert_eq!(search.pending(), 0);
    assert!(ev.shape().policy_len() > 0);
}
