use std::path::Path;

use rules::Color;

use super::*;

fn shogi(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap()
}

fn solve_with(sfen: &str, limits: MateLimits) -> MateReport {
    MateSolver::new(16).solve(&shogi(sfen), &limits, &Control::new()).unwrap()
}

fn solve(sfen: &str) -> MateVerdict {
    solve_with(sfen, MateLimits::default()).verdict
}

/// `line` is a legal mating sequence from `sfen` in which the attacker checks with
/// every move.
pub(crate) fn assert_mating_line(sfen: &str, line: &[Move]) {
    let mut pos = shogi(sfen);
    let attacker = pos.side_to_move();
    assert!(line.len() % 2 == 1, "a mate has an odd number of plies: {line:?}");
    for &mv in line {
        assert!(pos.legal_moves().contains(&mv), "{mv} is not legal in {}", pos.to_sfen());
        let mover = pos.side_to_move();
        pos.play(mv);
        if mover == attacker {
            assert!(pos.in_check(), "{mv} does not give check in {sfen}");
        }
    }
    assert_eq!(pos.side_to_move(), attacker.opponent());
    assert!(pos.in_check() && !pos.has_legal_move(), "the line {line:?} does not end in mate: {}", pos.to_sfen());
}

fn mate_line(sfen: &str) -> Vec<Move> {
    match solve(sfen) {
        MateVerdict::Mate(line) => {
            assert_mating_line(sfen, &line);
            line
        }
        other => panic!("{sfen}: expected a mate, got {other:?}"),
    }
}

#[test]
fn mate_in_one_by_a_drop() {
    let sfen = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1";
    assert_eq!(mate_line(sfen).iter().map(|m| m.to_usi()).collect::<Vec<_>>(), ["G*5b"]);
}

#[test]
fn the_fixture_mates_have_their_length_and_a_listed_first_move() {
    // data/fixtures/mates-shogi.tsv: mates in 1 and 3 by cshogi and a brute force, with
    // every mating first move.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/mates-shogi.tsv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut n = 0;
    for row in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let f: Vec<&str> = row.split('\t').collect();
        let (sfen, plies, firsts) = (f[0], f[1].parse::<usize>().unwrap(), f[3]);
        let line = mate_line(sfen);
        assert_eq!(line.len(), plies, "{sfen}: {line:?}");
        assert!(firsts.split(' ').any(|m| m == line[0].to_usi()), "{sfen}: {} not in {firsts}", line[0]);
        n += 1;
    }
    assert!(n >= 100, "{n} fixture mates");
}

/// Gote's king on 1a is boxed in by its own knight and pawn; a pawn dropped on 1b,
/// guarded by the gold, so it is illegal (uchifuzume). A gold dropped
/// there mates.
#[test]
fn a_pawn_drop_mate_is_no_mate() {
    let with_pawn = "7nk/7p1/7G1/9/9/9/9/9/4K4 b P 1";
    let pawn_drop = Move::Drop { kind: rules::Kind::Pawn, to: rules::Square::new(1, 2) };
    assert!(!shogi(with_pawn).legal_moves().contains(&pawn_drop), "the rules refuse the pawn-drop mate");
    // The drop would mate: made by hand, it leaves gote in check without a move.
    let mut pos = shogi(with_pawn);
    pos.make(pawn_drop);
    assert!(pos.in_check() && !pos.has_legal_move());
    assert_eq!(solve(with_pawn), MateVerdict::NoMate);
    assert_eq!(mate_line("7nk/7p1/7G1/9/9/9/9/9/4K4 b G 1").len(), 1);
}

#[test]
fn no_check_is_no_mate() {
    assert_eq!(solve("4k4/9/9/9/9/9/9/9/4K4 b - 1"), MateVerdict::NoMate);
    // The attacker itself mated: no move at all.
    assert_eq!(solve("4k4/9/9/9/9/9/9/3+r+r4/4K4 b - 1"), MateVerdict::NoMate);
}

/// A lone rook can check the king on 1a forever, never mate it: every line ends in a
/// repetition (perpetual check loses) or a king out of reach, and the search ends.
#[test]
fn checks_that_only_repeat_are_no_mate() {
    assert_eq!(solve("8k/8p/9/9/9/9/9/9/R3K4 b - 1"), MateVerdict::NoMate);
}

#[test]
fn gote_attacks_too() {
    // The drop mate of the first test, for gote.
    let sfen = "4k4/9/9/9/9/9/4p4/9/4K4 w g 1";
    let line = mate_line(sfen);
    assert_eq!(line.len(), 1);
    assert_eq!(shogi(sfen).side_to_move(), Color::Gote);
}

#[test]
fn limits_interrupt_an_undecided_search() {
    // A lone king in the middle and a hand full of pieces: a long search, stopped after
    // 50 nodes, by the stop flag (read every few hundred nodes) and by the clock.
    let sfen = "9/9/9/9/4k4/9/9/9/4K4 b RBGSNLP 1";
    let limits = MateLimits { nodes: Some(50), ..MateLimits::default() };
    assert_eq!(solve_with(sfen, limits).verdict, MateVerdict::Unknown(Interrupted::Nodes));
    let control = Control::new();
    control.stop();
    let report = MateSolver::new(4).solve(&shogi(sfen), &MateLimits::default(), &control).unwrap();
    assert!(matches!(report.verdict, MateVerdict::Unknown(Interrupted::Stopped) | MateVerdict::Mate(_)));
    let past = MateLimits { deadline: Some(Instant::now()), ..MateLimits::default() };
    assert!(matches!(solve_with(sfen, past).verdict, MateVerdict::Unknown(Interrupted::Time) | MateVerdict::Mate(_)));
}

#[test]
fn other_variants_are_refused() {
    let pos = Position::startpos(Variant::Sho);
    let err = MateSolver::new(1).solve(&pos, &MateLimits::default(), &Control::new()).unwrap_err();
    assert!(err.to_string().contains("standard shogi only"), "{err}");
}
