//! The quiescent material balance (`rules::quiescent_balance`) on hand-built positions of
//! the three variants: hanging and defended pieces, exchanges, promotions, lion double
//! captures, games won by a capture; and (ignored, run by hand) its cost against the
//! static balance on positions of random games from the opening sets.

mod support;

use std::time::Instant;

use rules::{
    material_balance, parse_position_command, quiescent_balance, Color, Move, Position, QuiescenceLimits, Variant,
    WIN_SCORE,
};
use support::{dai, repo_path, Rng};

fn pos(variant: Variant, sfen: &str) -> Position {
    Position::from_sfen(variant, sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

/// Sente's quiescent balance with the default limits, after checking that gote's is its
/// negation.
fn quiescent(pos: &Position) -> f64 {
    let sente = quiescent_balance(pos, Color::Sente, QuiescenceLimits::default());
    assert_eq!(sente, -quiescent_balance(pos, Color::Gote, QuiescenceLimits::default()), "{pos:?}");
    sente
}

#[test]
fn a_hanging_rook_is_lost_when_the_opponent_moves() {
    // Gote's pawn on 5d takes the rook on 5e, which nothing defends.
    let p = pos(Variant::Shogi, "4k4/9/9/4p4/4R4/9/9/9/4K4 w - 1");
    assert_eq!(material_balance(&p, Color::Sente), 9.0);
    // The rook leaves the board and goes to gote's hand: 9 - 20.
    assert_eq!(quiescent(&p), -11.0);
    // With sente to move the rook takes the pawn instead (and keeps it in hand).
    let p = pos(Variant::Shogi, "4k4/9/9/4p4/4R4/9/9/9/4K4 b - 1");
    assert_eq!(quiescent(&p), 11.0);
}

#[test]
fn a_defended_piece_attacked_by_a_more_valuable_one_is_not_lost() {
    // Gote's rook could take the silver on 5e, but the pawn on 5f would take the rook.
    let defended = pos(Variant::Shogi, "4k4/4r4/9/9/4S4/4P4/9/9/4K4 w - 1");
    assert_eq!(material_balance(&defended, Color::Sente), -4.0);
    assert_eq!(quiescent(&defended), -4.0);
    // Without the pawn the silver is lost (5 off the board, 5 to gote's hand).
    let undefended = pos(Variant::Shogi, "4k4/4r4/9/9/4S4/9/9/9/4K4 w - 1");
    assert_eq!(quiescent(&undefended), material_balance(&undefended, Color::Sente) - 10.0);
}

#[test]
fn an_exchange_counts_both_captures() {
    // Sente's pawn takes the silver on 5e (+10: board and hand), gote's gold on 5d takes
    // the pawn back (-2).
    let p = pos(Variant::Shogi, "4k4/9/9/4g4/4s4/4P4/9/9/4K4 b - 1");
    assert_eq!(material_balance(&p, Color::Sente), -10.0);
    assert_eq!(quiescent(&p), -2.0);
    // Sho has no hands: +5, then -1; but a king left bare loses, so with the pawn sente's
    // last piece but the king, it does not take.
    let p = pos(Variant::Sho, "4k4/9/9/4g4/4s4/4P4/P8/9/4K4 b - 1");
    assert_eq!(quiescent(&p), material_balance(&p, Color::Sente) + 4.0);
    let p = pos(Variant::Sho, "4k4/9/9/4g4/4s4/4P4/9/9/4K4 b - 1");
    assert_eq!(quiescent(&p), material_balance(&p, Color::Sente));
}

#[test]
fn a_capture_that_promotes_counts_the_promoted_piece() {
    // The rook takes the gold on 2b and promotes: gold 6 on the board, 6 in hand, and a
    // dragon (14) for the rook (10).
    let p = pos(Variant::Shogi, "4k4/7g1/9/7R1/9/9/9/9/4K4 b - 1");
    assert_eq!(material_balance(&p, Color::Sente), 4.0);
    assert_eq!(quiescent(&p), 20.0);
}

#[test]
fn positions_without_captures_keep_the_static_balance() {
    let rook_in_hand = pos(Variant::Shogi, "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1");
    assert_eq!(quiescent(&rook_in_hand), 20.0);
    let mut checked = 0;
    for variant in Variant::ALL {
        assert_eq!(quiescent(&Position::startpos(variant)), 0.0, "{variant}");
        for p in random_positions(variant, 10, 60) {
            let capture = |mv: &Move| match *mv {
                Move::Normal { to, .. } => p.piece_at(to).is_some(),
                Move::Lion { mid, .. } => p.piece_at(mid).is_some(),
                Move::Drop { .. } => false,
            };
            if p.outcome(&Default::default()).is_some() || p.in_check() || p.legal_moves().iter().any(capture) {
                continue;
            }
            assert_eq!(quiescent(&p), material_balance(&p, Color::Sente), "{p:?}");
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} positions without captures");
}

#[test]
fn the_node_budget_bounds_the_search() {
    let p = pos(Variant::Shogi, "4k4/9/9/4p4/4R4/9/9/9/4K4 w - 1");
    let root_only = QuiescenceLimits { max_nodes: 1, ..Default::default() };
    assert_eq!(quiescent_balance(&p, Color::Sente, root_only), 9.0);
    let no_depth = QuiescenceLimits { max_depth: 0, ..Default::default() };
    assert_eq!(quiescent_balance(&p, Color::Sente, no_depth), 9.0);
}

/// Sente's quiescent balance with quiet checks at the first `plies` plies, after checking
/// that gote's is its negation.
fn with_checks(pos: &Position, plies: u32) -> f64 {
    let limits = QuiescenceLimits { check_plies: plies, ..Default::default() };
    let sente = quiescent_balance(pos, Color::Sente, limits);
    assert_eq!(sente, -quiescent_balance(pos, Color::Gote, limits), "{pos:?}");
    sente
}

#[test]
fn a_drop_that_mates_is_seen_with_checks_only() {
    // Gold to 5b, defended by the pawn on 5c: every square of gote's king is covered.
    let p = pos(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    assert_eq!(quiescent(&p), material_balance(&p, Color::Sente));
    assert_eq!(with_checks(&p, 1), WIN_SCORE);
    // Gote to move: its checks are none, and sente's come a ply too late for one ply.
    let p = pos(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/4K4 w G 1");
    assert_eq!(with_checks(&p, 1), material_balance(&p, Color::Sente));
}

#[test]
fn a_checking_fork_wins_the_piece_behind_the_king() {
    // A knight dropped on 4c checks the king on 5a and attacks the rook on 3a; the king
    // steps to 4b to defend the rook, and the knight takes it (promoting: it cannot stay
    // on the last rank) and is taken: the rook (board and hand) for the knight.
    let p = pos(Variant::Shogi, "4k1r2/9/9/9/9/9/9/9/4K4 b N 1");
    let before = material_balance(&p, Color::Sente);
    assert_eq!(quiescent(&p), before);
    let gained = with_checks(&p, 1) - before;
    assert!(gained > 10.0, "the fork gains {gained}");
    // Sho has no drops: without the knight in hand (and with a pawn, so that sente's king
    // is not bare) there is no check to give.
    let sho = pos(Variant::Sho, "4k1r2/9/9/9/9/9/P8/9/4K4 b - 1");
    assert_eq!(with_checks(&sho, 1), material_balance(&sho, Color::Sente));
}

#[test]
fn a_side_in_check_must_answer_when_checks_are_searched() {
    // Gote's king on 5b is in check from the lance on 5e, its gold on 5a behind it. Read
    // by captures alone gote stands pat; made to answer, the king steps aside, the lance
    // takes the gold (promoting) and the king takes the lance back: a gold for a lance.
    let p = pos(Variant::Shogi, "4g4/4k4/9/9/4L4/9/9/9/4K4 w - 1");
    assert!(p.in_check());
    let before = material_balance(&p, Color::Sente);
    assert_eq!(quiescent(&p), before);
    let gained = with_checks(&p, 1) - before;
    assert!(gained > 0.0 && gained < 12.0, "the skewer gains {gained}");
    // Check plies change nothing where the royal rule is not check (dai).
    for q in random_positions(Variant::Dai, 3, 40) {
        assert_eq!(with_checks(&q, 2), quiescent(&q), "{q:?}");
    }
}

#[test]
fn capturing_the_last_royal_wins_in_dai() {
    // Dai has no check rule: the rook on 8h takes gote's king on 8a.
    let p = dai(&[("8a", "k"), ("1c", "p"), ("8h", "R"), ("8o", "K")], "b");
    assert_eq!(material_balance(&p, Color::Sente), 9.0);
    assert_eq!(quiescent(&p), WIN_SCORE);
    // Gote to move: its king steps away or is lost, which the search does not see;
    // its captures (none) leave the balance.
    let p = dai(&[("8a", "k"), ("1c", "p"), ("8h", "R"), ("8o", "K")], "w");
    assert_eq!(quiescent(&p), 9.0);
}

#[test]
fn leaving_a_bare_king_wins_in_dai_and_sho() {
    // Taking gote's last piece but the king: a bare king loses.
    let p = dai(&[("1a", "k"), ("8c", "g"), ("8h", "R"), ("8o", "K")], "b");
    assert_eq!(quiescent(&p), WIN_SCORE);
    let p = pos(Variant::Sho, "k8/9/4g4/9/4R4/9/9/9/4K4 b - 1");
    assert_eq!(quiescent(&p), WIN_SCORE);
    // Standard shogi has no bare-king rule: the gold is won (board and hand) and the
    // rook promotes, no more.
    let p = pos(Variant::Shogi, "k8/9/4g4/9/4R4/9/9/9/4K4 b - 1");
    assert_eq!(quiescent(&p), 4.0 + 12.0 + 4.0);
}

#[test]
fn a_capture_that_mates_wins() {
    // The gold on 5c takes the gold on 5b, defended by the silver on 4c: mate. Sho with
    // a single royal has the check rule, as standard shogi.
    let sfen = "4k4/4g4/4GS3/p8/9/9/9/9/4K4 b - 1";
    for variant in [Variant::Shogi, Variant::Sho] {
        assert_eq!(quiescent(&pos(variant, sfen)), WIN_SCORE, "{variant}");
    }
    // Without the silver the king takes the gold back: no mate, the golds are traded.
    let p = pos(Variant::Sho, "4k4/4g4/4G4/p8/9/9/9/9/4K4 b - 1");
    assert_eq!(quiescent(&p), material_balance(&p, Color::Sente));
}

#[test]
fn a_lion_takes_two_pieces_in_one_move() {
    // The lion on 8h takes the pawns on 8g and 8f with one double move.
    let p = dai(&[("1a", "k"), ("1b", "g"), ("8g", "p"), ("8f", "p"), ("8h", "LN"), ("15o", "K")], "b");
    assert_eq!(quiescent(&p), material_balance(&p, Color::Sente) + 2.0);
}

/// The quiescent balance by plain minimax over the captures to `depth` plies, without
/// alpha-beta, move ordering or a node budget, from the side to move's static balance:
/// the value the search must find. Standard shogi and sho (no lion moves), where a side
/// has lost when it is in check without a legal move or, in sho, has no royal left or
/// only a bare king against more.
fn minimax(pos: &mut Position, depth: u32) -> f64 {
    let (us, them) = (pos.side_to_move(), pos.side_to_move().opponent());
    let only_royals =
        |pos: &Position, c: Color| pos.pieces().filter(|(_, p)| p.color() == c).count() == pos.royals(c).len();
    let sho = pos.variant() == Variant::Sho;
    let lost = (sho && (pos.royals(us).is_empty() || (only_royals(pos, us) && !only_royals(pos, them))))
        || (pos.in_check() && pos.legal_moves().is_empty());
    if lost {
        return -WIN_SCORE;
    }
    let mut best = material_balance(pos, us);
    if depth == 0 {
        return best;
    }
    for mv in pos.legal_moves() {
        let capture = matches!(mv, Move::Normal { to, .. } if pos.piece_at(to).is_some());
        if capture {
            pos.play(mv);
            best = best.max(-minimax(pos, depth - 1));
            pos.undo();
        }
    }
    best
}

#[test]
fn the_search_finds_the_minimax_value_of_the_captures() {
    for variant in [Variant::Shogi, Variant::Sho] {
        let mut compared = 0;
        for p in random_positions(variant, 30, 120).iter().step_by(3) {
            // Without its history, as the search sees it (no repetition bans).
            let mut p = Position::from_sfen(variant, &p.to_sfen()).unwrap();
            let limits = QuiescenceLimits { max_depth: 4, max_nodes: u32::MAX, check_plies: 0 };
            let searched = quiescent_balance(&p, p.side_to_move(), limits);
            let expected = minimax(&mut p, 4);
            assert!((searched - expected).abs() < 1e-9, "{variant} {}: {searched} != {expected}", p.to_sfen());
            compared += 1;
        }
        assert!(compared > 300, "{variant}: {compared} positions");
    }
}

/// Positions of random games: `games` from the start position of `variant`, `plies`
/// random legal moves each, until a game ends.
fn random_positions(variant: Variant, games: usize, plies: usize) -> Vec<Position> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::new();
    for _ in 0..games {
        play_randomly(Position::startpos(variant), plies, &mut rng, &mut out);
    }
    out
}

fn play_randomly(mut pos: Position, plies: usize, rng: &mut Rng, out: &mut Vec<Position>) {
    for _ in 0..plies {
        if pos.outcome(&Default::default()).is_some() {
            return;
        }
        let moves = pos.legal_moves();
        pos.play(moves[rng.below(moves.len())]);
        out.push(pos.clone());
    }
}

/// Mean microseconds per call of the static and the quiescent balance, over positions of
/// games from each opening set (`data/openings/<variant>.txt`) played on with random
/// legal moves (40 plies after each opening). Run by hand:
/// `cargo test --release -p koma-rules --test quiescence -- --ignored --nocapture`.
#[test]
#[ignore]
fn cost_per_call() {
    for variant in Variant::ALL {
        let text = std::fs::read_to_string(repo_path(&format!("data/openings/{variant}.txt"))).unwrap();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut positions = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let start = parse_position_command(variant, line).unwrap_or_else(|e| panic!("{line}: {e}"));
            play_randomly(start, 40, &mut rng, &mut positions);
        }
        // Each call's fastest of five, so that the machine's other work does not count.
        let time = |f: &dyn Fn(&Position) -> f64| {
            let mut fastest = vec![f64::INFINITY; positions.len()];
            let mut sum = 0.0;
            for _ in 0..5 {
                for (p, best) in positions.iter().zip(&mut fastest) {
                    let t = Instant::now();
                    sum += f(p);
                    *best = best.min(t.elapsed().as_secs_f64() * 1e6);
                }
            }
            let n = positions.len() as f64;
            (fastest.iter().sum::<f64>() / n, fastest.iter().fold(0.0f64, |a, &b| a.max(b)), sum / 5.0 / n)
        };
        let (static_us, static_worst, static_mean) = time(&|p| material_balance(p, p.side_to_move()));
        let limits = QuiescenceLimits::default();
        let (q_us, q_worst, q_mean) = time(&|p| quiescent_balance(p, p.side_to_move(), limits));
        println!(
            "{variant}: {} positions; material_balance {static_us:.2} us/call (worst {static_worst:.0} us, mean \
             {static_mean:+.2}); quiescent_balance {q_us:.2} us/call (worst {q_worst:.0} us, mean {q_mean:+.2})",
            positions.len()
        );
        for check_plies in [1, 2] {
            let limits = QuiescenceLimits { check_plies, ..Default::default() };
            let (us, worst, mean) = time(&|p| quiescent_balance(p, p.side_to_move(), limits));
            println!(
                "  with quiet checks at {check_plies} plies: {us:.2} us/call (worst {worst:.0} us, mean {mean:+.2})"
            );
        }
    }
}
