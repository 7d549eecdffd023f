//! The search with a uniform evaluator: finds mates (fixtures made with cshogi), never
//! returns an illegal move.

use std::path::Path;

use nn::encoding::Encoder;
use rules::{EndRules, Position, Variant};
use search::{Proof, Rng, Search, SearchConfig};

fn uniform(encoder: &Encoder) -> impl FnMut(&[f32]) -> (Vec<f32>, [f32; 3]) {
    let n = encoder.policy_size();
    move |_| (vec![0.0; n], [1.0 / 3.0; 3])
}

fn mates() -> Vec<(String, u32, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/mates-shogi.tsv");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[3].split_whitespace().map(String::from).collect())
        })
        .collect()
}

fn solve(sfen: &str, budget: u32, cfg: SearchConfig) -> (String, u32, Proof) {
    let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    let enc = Encoder::new(Variant::Shogi);
    let mut search = Search::new(cfg, EndRules::default(), Variant::Shogi);
    let mut rng = Rng::new(7);
    search.start(&pos, budget, false);
    search.run(&enc, &mut rng, uniform(&enc));
    let mv = search.choose_move(0.0, &mut rng).unwrap();
    (mv.to_usi(), search.simulations(), search.root_proof())
}

/// The attacker (to move) mates within `plies` (odd) plies with checks only.
fn mates_by_checks(pos: &mut Position, plies: u32) -> bool {
    let us = pos.side_to_move();
    for mv in pos.legal_moves() {
        pos.play(mv);
        let ok = pos.in_check()
            && match pos.outcome(&EndRules::default()) {
                Some(o) => o.winner == Some(us),
                None => {
                    plies > 1
                        && pos.legal_moves().into_iter().all(|r| {
                            pos.play(r);
                            let w = mates_by_checks(pos, plies - 2);
                            pos.undo();
                            w
                        })
                }
            };
        pos.undo();
        if ok {
            return true;
        }
    }
    false
}

/// After `first`, every reply of the defender allows a mate in 3 by checks.
fn wins_after(sfen: &str, first: &str) -> bool {
    let mut pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    pos.play_usi(first).unwrap();
    pos.legal_moves().into_iter().all(|r| {
        pos.play(r);
        let w = mates_by_checks(&mut pos, 3);
        pos.undo();
        w
    })
}

fn check_mates(plies: u32, budget: u32, cfg: SearchConfig) {
    let mut worst = 0;
    let mut total = 0u64;
    let mut count = 0;
    for (sfen, p, good) in mates().into_iter().filter(|m| m.1 == plies) {
        let (mv, sims, proof) = solve(&sfen, budget, cfg.clone());
        if !good.contains(&mv) {
            // A longer forced mate found by the solver is fine: check it independently
            // (every reply allows a mate in 3 by checks).
            assert!(
                wins_after(&sfen, &mv),
                "mate in {p}: {sfen}: played {mv} after {sims} simulations, mates: {good:?}"
            );
            eprintln!("{sfen}: {mv} is a longer forced mate (checked)");
        }
        // Proof distances are never shorter than the shortest mate.
        assert!(matches!(proof, Proof::Win(n) if n as u32 >= plies && n % 2 == 1), "{sfen}: {proof:?}");
        worst = worst.max(sims);
        total += sims as u64;
        count += 1;
    }
    assert!(count >= 50);
    eprintln!(
        "mate in {plies} ({}): {count} positions solved, simulations mean {:.0}, max {worst} (budget {budget})",
        if cfg.gumbel { "gumbel" } else { "puct" },
        total as f64 / count as f64
    );
}

#[test]
fn finds_mate_in_1_within_800() {
    check_mates(1, 800, SearchConfig::default());
}

#[test]
fn finds_mate_in_3_within_4000() {
    check_mates(3, 4000, SearchConfig::default());
}

/// Gumbel root without noise and m = every legal move (with m = 16 and uniform priors
/// the root considers only 16 moves, which may not include the mate).
#[test]
fn finds_mate_in_3_with_gumbel_root() {
    check_mates(3, 4000, SearchConfig { gumbel: true, gumbel_m: 1000, ..SearchConfig::default() });
}

/// Random positions of every variant: the search's move and policy target are legal,
/// with PUCT and Gumbel roots, noise on and off, random network outputs.
#[test]
fn never_returns_an_illegal_move() {
    let mut rng = Rng::new(11);
    for variant in Variant::ALL {
        let enc = Encoder::new(variant);
        let positions = if variant == Variant::Dai { 12 } else { 60 };
        for i in 0..positions {
            let mut pos = Position::startpos(variant);
            let plies = rng.below(if variant == Variant::Dai { 150 } else { 120 });
            for _ in 0..plies {
                if pos.outcome(&EndRules::default()).is_some() {
                    break;
                }
                let moves = pos.legal_moves();
                pos.play(moves[rng.below(moves.len())]);
            }
            if pos.outcome(&EndRules::default()).is_some() || pos.can_declare() {
                continue;
            }
            let legal = pos.legal_moves();
            let cfg = SearchConfig { gumbel: i % 2 == 0, gumbel_m: 4 + i % 5, ..SearchConfig::default() };
            let mut search = Search::new(cfg, EndRules { max_plies: Some(400), ..EndRules::default() }, variant);
            search.start(&pos, 20 + (i as u32 * 7) % 60, i % 3 != 0);
            let mut r2 = Rng::new(i as u64);
            let n = enc.policy_size();
            search.run(&enc, &mut rng.clone(), |_| {
                let p: Vec<f32> = (0..n).map(|_| (r2.f64() * 6.0 - 3.0) as f32).collect();
                let w = r2.f64() as f32;
                (p, [w, (1.0 - w) * 0.5, (1.0 - w) * 0.5])
            });
            for t in [0.0, 1.0] {
                let mv = search.choose_move(t, &mut rng).unwrap();
                assert!(legal.contains(&mv), "{variant} {}: illegal {mv}", pos.to_sfen());
            }
            let target = search.policy_target();
            if target.is_empty() {
                // No policy target: the root was proven lost before its evaluation.
                assert!(search.root_proof().is_loss() && search.simulations() == 1);
                continue;
            }
            let sum: f32 = target.iter().map(|t| t.1).sum();
            assert!((sum - 1.0).abs() < 1e-3, "{sum}");
            for (m, _) in target {
                assert!(legal.contains(&m));
            }
        }
    }
}
