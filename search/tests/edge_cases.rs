//! Search edge cases: proofs at the end of the game, the policy softmax
//! temperature after tree reuse and in the Gumbel target, proofs in the Gumbel move
//! choice, the policy target of a root lost before its evaluation, and Dirichlet noise
//! scaled to the number of legal moves.

use nn::encoding::Encoder;
use rules::{EndRules, Position, Variant};
use search::tree::{Selected, Tree};
use search::{Proof, Rng, Search, SearchConfig};

fn uniform(encoder: &Encoder) -> impl FnMut(&[f32]) -> (Vec<f32>, [f32; 3]) {
    let n = encoder.policy_size();
    move |_| (vec![0.0; n], [1.0 / 3.0; 3])
}

/// Fixed policy logits that differ between labels (the same for every position).
fn peaked_logits(encoder: &Encoder) -> Vec<f32> {
    (0..encoder.policy_size()).map(|l| ((l * 37) % 11) as f32 * 0.4).collect()
}

fn shogi(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap()
}

/// `start` with `moves` played (so that the game history counts).
fn after(sfen: &str, moves: &[&str]) -> Position {
    let mut pos = shogi(sfen);
    for m in moves {
        pos.play_usi(m).unwrap();
    }
    pos
}

/// A perpetual-check cycle: gote checks with 5h5g and 5g5h, sente's king steps 3i4i and
/// back. Q (gote to move) occurred three times; at P sente is in check and every
/// evasion allows a mate in 1, but 4i3i repeats Q a fourth time, all of gote's moves
/// since its first occurrence were checks: gote loses.
const PERPETUAL_Q: &str = "3s4s/1+Lgp4l/1p5r1/pN1L1kp1p/nN1G4n/2B1pp3/1PpP1+s2P/4+b1PGS/2G3K1L w 3Pr3p 170";
const PERPETUAL_CYCLE: [&str; 4] = ["5h5g", "3i4i", "5g5h", "4i3i"];
/// The same with a quiet move in the cycle (5h6h is no check): a draw by repetition.
const REPETITION_Q: &str = "3s4s/1+Lgp4l/1p5r1/pN1L1kp1p/nN1G4n/2B1pp3/1PpP4P/4+s1PGS/2Gb2K1L w 3Pr3p 170";
const REPETITION_CYCLE: [&str; 4] = ["5h6h", "3i4i", "6h5h", "4i3i"];

/// P: Q, the cycle twice, then the cycle without its last move (the evasion).
fn before_fourth_repetition(q: &str, cycle: &[&str; 4]) -> Position {
    let moves: Vec<&str> = cycle.iter().cycle().take(11).copied().collect();
    let pos = after(q, &moves);
    assert!(pos.in_check());
    pos
}

fn search_position(pos: &Position, end_rules: EndRules, cfg: SearchConfig, sims: u32) -> Search {
    let enc = Encoder::new(Variant::Shogi);
    let mut search = Search::new(cfg, end_rules, Variant::Shogi);
    search.start(pos, sims, false);
    search.run(&enc, &mut Rng::new(3), uniform(&enc));
    search
}

#[test]
fn evasion_into_perpetual_check_wins() {
    let pos = before_fourth_repetition(PERPETUAL_Q, &PERPETUAL_CYCLE);
    let search = search_position(&pos, EndRules::default(), SearchConfig::default(), 400);
    assert_eq!(search.root_proof(), Proof::Win(1), "4i3i wins by the opponent's perpetual check");
    assert_eq!(search.choose_move(0.0, &mut Rng::new(1)).unwrap().to_usi(), "4i3i");
}

#[test]
fn evasion_into_repetition_is_a_draw() {
    let pos = before_fourth_repetition(REPETITION_Q, &REPETITION_CYCLE);
    let search = search_position(&pos, EndRules::default(), SearchConfig::default(), 400);
    assert!(!search.root_proof().is_loss(), "{:?}: 4i3i draws by repetition", search.root_proof());
    assert_eq!(search.choose_move(0.0, &mut Rng::new(1)).unwrap().to_usi(), "4i3i");
    let draw = search.root_children().into_iter().find(|c| c.mv.to_usi() == "4i3i").unwrap();
    assert_eq!((draw.q, draw.proof), (Some(0.0), Proof::Unknown), "{draw:?}");
}

#[test]
fn evasion_at_the_length_limit_is_a_draw() {
    // P without its history; the game ends (a draw) at the ply after it.
    let pos = shogi(&before_fourth_repetition(REPETITION_Q, &REPETITION_CYCLE).to_sfen());
    let limit = EndRules { max_plies: Some(pos.move_number()), ..EndRules::default() };
    assert!(pos.outcome(&limit).is_none());
    let search = search_position(&pos, limit, SearchConfig::default(), 100);
    assert_eq!(search.root_proof(), Proof::Unknown);
    let wdl = search.root_wdl();
    assert!(wdl[1] > 0.99, "every evasion draws at the length limit: {wdl:?}");
    // Without the limit the same position is lost (every evasion allows a mate in 1).
    let search = search_position(&pos, EndRules::default(), SearchConfig::default(), 100);
    assert_eq!(search.root_proof(), Proof::Loss(2));
}

/// Drives `tree` with `logits` (for every position) for `sims` simulations.
fn run_tree(tree: &mut Tree, enc: &Encoder, logits: &[f32], sims: u64) {
    let mut input = vec![0.0; enc.input_len()];
    tree.begin_search();
    while tree.started() < sims {
        match tree.select_leaf(enc, &mut input, &mut ()) {
            Selected::NeedsEval(leaf) => {
                tree.apply(leaf, logits, [0.4, 0.2, 0.4]);
            }
            Selected::Exact { .. } => {}
            Selected::Collision | Selected::Done => break,
        }
    }
}

#[test]
fn reused_root_gets_the_policy_temperature() {
    let enc = Encoder::new(Variant::Shogi);
    let logits = peaked_logits(&enc);
    let cfg = SearchConfig { policy_softmax_temperature: 2.0, ..SearchConfig::default() };
    let start = Position::startpos(Variant::Shogi);
    let mut tree = Tree::new(cfg.clone(), EndRules::default(), &start);
    run_tree(&mut tree, &enc, &logits, 300);
    let best = tree.root_children().into_iter().max_by_key(|c| c.visits).unwrap();
    let mut next = start.clone();
    next.play(best.mv);
    assert!(tree.set_root(&next) > 1);
    // A fresh tree of the same position, evaluated as the root.
    let mut fresh = Tree::new(cfg, EndRules::default(), &next);
    run_tree(&mut fresh, &enc, &logits, 1);
    for (kept, new) in tree.root_children().iter().zip(fresh.root_children()) {
        assert_eq!(kept.mv, new.mv);
        assert!(
            (kept.prior - new.prior).abs() < 1e-5,
            "{}: prior {} after reuse, {} as a root",
            kept.mv,
            kept.prior,
            new.prior
        );
    }
}

/// softmax of `logits` over the legal moves of `pos`, as (move, probability).
fn network_policy(enc: &Encoder, pos: &Position, logits: &[f32]) -> Vec<(rules::Move, f32)> {
    let moves = pos.legal_moves();
    let x: Vec<f32> = moves.iter().map(|&m| logits[enc.move_index(pos, m)]).collect();
    let max = x.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = x.iter().map(|v| (v - max).exp()).sum();
    moves.into_iter().zip(x).map(|(m, v)| (m, (v - max).exp() / sum)).collect()
}

#[test]
fn gumbel_policy_target_ignores_the_softmax_temperature() {
    let enc = Encoder::new(Variant::Shogi);
    let logits = peaked_logits(&enc);
    let pos = after("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1", &["7g7f", "3c3d"]);
    let cfg = SearchConfig { gumbel: true, gumbel_m: 4, policy_softmax_temperature: 2.0, ..SearchConfig::default() };
    let mut search = Search::new(cfg, EndRules::default(), Variant::Shogi);
    // One simulation: the root's own evaluation; every move's completed Q is the root
    // value, so the improved policy is the network's policy.
    search.start(&pos, 1, false);
    let l2 = logits.clone();
    search.run(&enc, &mut Rng::new(5), move |_| (l2.clone(), [0.4, 0.2, 0.4]));
    let target = search.policy_target();
    let expected = network_policy(&enc, &pos, &logits);
    assert_eq!(target.len(), expected.len());
    for ((m, p), (em, ep)) in target.iter().zip(&expected) {
        assert_eq!(m, em);
        assert!((p - ep).abs() < 1e-4, "{m}: target {p}, network {ep}");
    }
}

/// Sente to move; gote threatens G*5h, which the gold on 6i guards. 6i7h (and 6i7i)
/// give the guard up: gote mates at once.
const BLUNDER: &str = "4k4/9/9/9/9/9/4p3P/9/3GK4 b g 1";

#[test]
fn gumbel_never_plays_a_proven_loss() {
    let enc = Encoder::new(Variant::Shogi);
    let pos = shogi(BLUNDER);
    let blunder = pos.parse_usi("6i7h").unwrap();
    // The network loves the blunder; with m = 1 it is the only Gumbel candidate.
    let mut logits = vec![0.0; enc.policy_size()];
    logits[enc.move_index(&pos, blunder)] = 10.0;
    let cfg = SearchConfig { gumbel: true, gumbel_m: 1, ..SearchConfig::default() };
    let mut search = Search::new(cfg, EndRules::default(), Variant::Shogi);
    search.start(&pos, 8, false);
    search.run(&enc, &mut Rng::new(5), move |_| (logits.clone(), [1.0 / 3.0; 3]));
    let info = search.root_children().into_iter().find(|c| c.mv == blunder).unwrap();
    assert_eq!(info.proof, Proof::Loss(2), "the search proved the blunder lost");
    let mv = search.choose_move(0.0, &mut Rng::new(1)).unwrap();
    assert_ne!(mv, blunder, "played a move proven to lose while others are not");
    let chosen = search.root_children().into_iter().find(|c| c.mv == mv).unwrap();
    assert!(!chosen.proof.is_loss(), "{chosen:?}");
}

#[test]
fn gumbel_takes_a_proven_win() {
    let enc = Encoder::new(Variant::Shogi);
    let pos = shogi("4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    let cfg = SearchConfig { gumbel: true, gumbel_m: 1, ..SearchConfig::default() };
    let mut search = Search::new(cfg, EndRules::default(), Variant::Shogi);
    search.start(&pos, 8, true);
    search.run(&enc, &mut Rng::new(5), uniform(&enc));
    assert_eq!(search.choose_move(0.0, &mut Rng::new(1)).unwrap().to_usi(), "G*5b");
    assert_eq!(
        search.policy_target().iter().map(|(m, p)| (m.to_usi(), *p)).collect::<Vec<_>>(),
        [("G*5b".into(), 1.0)]
    );
}

/// After 6d4f of a mate in 3 (from `data/fixtures/mates-shogi.tsv`): four evasions.
const LOST_IN_TWO: &str = "1ng4n1/l1P3p1l/1p+N1ppgrp/8s/pP1p2kp1/4PB2P/PGS1KPN2/L4RG1L/2SB4+p w S3p 114";

#[test]
fn root_lost_before_its_evaluation_has_no_policy_target() {
    // Gote is in check and every evasion allows a mate in 1: the root is proven lost at
    // its expansion, and no simulation compares the moves.
    let pos = shogi(LOST_IN_TWO);
    assert!(pos.legal_moves().len() > 1);
    for gumbel in [false, true] {
        let cfg = SearchConfig { gumbel, ..SearchConfig::default() };
        let search = search_position(&pos, EndRules::default(), cfg, 50);
        assert_eq!(search.root_proof(), Proof::Loss(2));
        assert_eq!(search.simulations(), 1);
        assert!(search.policy_target().is_empty(), "gumbel {gumbel}: {:?}", search.policy_target());
        // The move is still the longest loss (any evasion here).
        assert!(search.choose_move(1.0, &mut Rng::new(2)).is_some());
    }
}

/// The noise part of the root priors of `pos` after a search with a uniform network:
/// prior = (1 - eps) / n + eps * noise.
fn root_noise_variance(pos: &Position, cfg: &SearchConfig, trials: u64) -> (usize, f64) {
    let enc = Encoder::new(Variant::Shogi);
    let eps = cfg.dirichlet_epsilon as f64;
    let mut values = Vec::new();
    let mut n = 0;
    for seed in 0..trials {
        let mut search = Search::new(cfg.clone(), EndRules::default(), Variant::Shogi);
        search.start(pos, 1, true);
        search.run(&enc, &mut Rng::new(seed), uniform(&enc));
        let children = search.root_children();
        n = children.len();
        values.extend(children.iter().map(|c| (c.prior as f64 - (1.0 - eps) / n as f64) / eps));
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    assert!((mean - 1.0 / n as f64).abs() < 1e-3, "noise mean {mean}, n {n}");
    (n, values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64)
}

/// KataGo: alpha = total / legal moves. A component of Dirichlet(alpha, ..., alpha)
/// over n moves has variance (1/n)(1 - 1/n) / (n alpha + 1) = (1/n)(1 - 1/n) / (total + 1).
#[test]
fn dirichlet_noise_scales_with_the_number_of_legal_moves() {
    let cfg = SearchConfig::default();
    let total = cfg.dirichlet_alpha_total as f64;
    for sfen in ["4k4/9/9/9/9/9/9/9/4K4 b - 1", "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"] {
        let (n, var) = root_noise_variance(&shogi(sfen), &cfg, 600);
        let k = 1.0 / n as f64;
        let expected = k * (1.0 - k) / (total + 1.0);
        assert!((var / expected - 1.0).abs() < 0.25, "{n} moves: noise variance {var:.5}, expected {expected:.5}");
    }
}
