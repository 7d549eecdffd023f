//! The value target's sign and perspective in self-play samples: real games (uniform
//! network behind a real batcher) from positions whose end is forced, and every sample
//! checked against the winner from its own side to move's view.

use std::sync::Arc;

use dataio::GameResult;
use model::encoding::Encoder;
use model::{Batcher, BatcherConfig, Evaluator, UniformEvaluator};
use rules::{Color, Position, Variant};
use selfplay::{run_selfplay, GameRecord, Openings, Progress, RunOptions, SelfplayFileConfig};

/// Mates in 3 (from `data/fixtures/mates-shogi.tsv`) whose first move leaves every
/// evasion to a mate in 1: sente mates (6d4f), gote mates (R*3i).
const SENTE_MATES_IN_3: &str = "1ng4n1/l1P3p1l/1p+N1ppgrp/3B4s/pP1p2kp1/4P3P/PGS1KPN2/L4RG1L/2SB4+p b S3p 113";
const GOTE_MATES_IN_3: &str = "1n7/2g1rs3/1p4b2/2ppk3S/4s4/1PPS4L/+lG1PGpP1P/p2N2b2/L3K2NL w G6Prn2p 84";
/// Sente (king only) moves; then gote, to move, declares (27 points, 11 pieces in camp).
const GOTE_DECLARES: &str = "4K4/9/9/9/9/9/ppppp4/r1b1k1b1r/g7g b - 1";
/// The same turned around: gote moves, then sente declares (28 points with the pawn in hand).
const SENTE_DECLARES: &str = "G7G/R1B1K1B1R/4PPPPP/9/9/9/9/9/4k4 w P 1";

fn config(resign: bool, max_plies: u32) -> SelfplayFileConfig {
    let mut c = SelfplayFileConfig::default();
    let sp = &mut c.selfplay;
    sp.workers = 1;
    sp.games_per_worker = 2;
    // Enough simulations for a uniform network to visit every root move once.
    sp.simulations_full = 400;
    sp.simulations_cheap = 400;
    sp.full_search_fraction = 1.0;
    sp.max_plies = max_plies;
    sp.seed = 9;
    if resign {
        sp.resign_threshold = -0.9;
        sp.resign_consecutive = 1;
        sp.no_resign_fraction = 0.0;
    } else {
        sp.resign_threshold = -1.0;
    }
    c
}

/// Dai: sente's rook takes gote's only royal (`royal_capture`).
const DAI_ROOK_TAKES_KING: &str = "7k7/15/15/15/15/15/15/15/15/15/15/15/15/p14/7R6K b - 1";
/// Dai: sente's rook takes gote's last piece but the king (`bare_king`).
const DAI_ROOK_TAKES_LAST_PAWN: &str = "7k7/15/15/15/15/15/15/15/15/15/15/15/15/p14/R13K b - 1";

/// Plays `games` games of shogi from `sfen` and returns them.
fn play(sfen: &str, cfg: &SelfplayFileConfig, games: u64) -> Vec<GameRecord> {
    play_variant(Variant::Shogi, sfen, cfg, games)
}

fn play_variant(variant: Variant, sfen: &str, cfg: &SelfplayFileConfig, games: u64) -> Vec<GameRecord> {
    play_with_progress(variant, sfen, cfg, games).0
}

/// The games, in the order they finished, and self-play's final counters.
fn play_with_progress(
    variant: Variant,
    sfen: &str,
    cfg: &SelfplayFileConfig,
    games: u64,
) -> (Vec<GameRecord>, Progress) {
    let mut cfg = cfg.clone();
    cfg.variant = variant;
    let cfg = &cfg;
    let enc = Encoder::new(variant);
    let dir = tempfile::tempdir().unwrap();
    let opening = dir.path().join("opening.txt");
    std::fs::write(&opening, format!("sfen {sfen}\n")).unwrap();
    let openings = Openings::load(variant, &opening).unwrap();
    let eval: Arc<dyn Evaluator> = Arc::new(UniformEvaluator::new(enc.net_shape()));
    let batcher = Batcher::spawn(eval, BatcherConfig { max_batch: 8, ..BatcherConfig::default() });
    let mut records = Vec::new();
    let progress =
        run_selfplay(cfg, batcher.handle(), &openings, &RunOptions::games(games), |g| records.push(g), |_| {}).unwrap();
    assert_eq!(records.len() as u64, games);
    (records, progress)
}

/// Every sample targets the game's result from its side to move's view; returns the
/// sides that have samples.
fn check_perspective(game: &GameRecord, winner: Option<Color>, reason: &str) -> Vec<Color> {
    check_variant(Variant::Shogi, game, winner, reason)
}

fn check_variant(variant: Variant, game: &GameRecord, winner: Option<Color>, reason: &str) -> Vec<Color> {
    assert_eq!((game.end.winner, game.end.reason.name()), (winner, reason), "{:?}", game.moves);
    let mut sides = Vec::new();
    for s in &game.samples {
        let side = Position::from_sfen(variant, &s.sfen).unwrap().side_to_move();
        let expected = match winner {
            None => GameResult::Draw,
            Some(w) if w == side => GameResult::Win,
            Some(_) => GameResult::Loss,
        };
        assert_eq!(s.result, Some(expected), "{side:?} at {} in a game won by {winner:?} ({reason})", s.sfen);
        if !sides.contains(&side) {
            sides.push(side);
        }
    }
    sides
}

#[test]
fn checkmate_wins_for_the_mating_side() {
    for (sfen, winner) in [(SENTE_MATES_IN_3, Color::Sente), (GOTE_MATES_IN_3, Color::Gote)] {
        for game in play(sfen, &config(false, 512), 2) {
            let sides = check_perspective(&game, Some(winner), "checkmate");
            assert_eq!(sides.len(), 2, "samples of both sides: {:?}", game.moves);
            // The loser's position after the first check was lost before its evaluation:
            // a value target, no policy target.
            let lost = &game.samples[1];
            assert!(lost.policy.is_empty() && !lost.full_search, "{lost:?}");
        }
    }
}

#[test]
fn resignation_wins_for_the_other_side() {
    for (sfen, winner) in [(SENTE_MATES_IN_3, Color::Sente), (GOTE_MATES_IN_3, Color::Gote)] {
        for game in play(sfen, &config(true, 512), 2) {
            let sides = check_perspective(&game, Some(winner), "resign");
            assert_eq!(sides.len(), 2, "{:?}", game.moves);
        }
    }
}

/// A calibrated threshold (`selfplay.resign_false_rate`) resigns nothing until the
/// played-out games have given it 40 games' levels, then resigns at its ceiling here (the
/// winners of these forced mates never doubt), and its checks find no false resignation.
/// (With too few simulations to find the mate every time, the losers' missed wins pull
/// the levels to -1 and it rightly resigns nothing.)
#[test]
fn a_calibrated_threshold_resigns_only_after_the_played_out_games_calibrate_it() {
    let mut cfg = config(true, 512);
    cfg.selfplay.resign_threshold = -0.5;
    cfg.selfplay.resign_false_rate = 0.05;
    cfg.selfplay.no_resign_fraction = 0.5;
    cfg.selfplay.games_per_worker = 8;
    let (records, progress) = play_with_progress(Variant::Shogi, SENTE_MATES_IN_3, &cfg, 160);
    let first_resign = records.iter().position(|g| g.end.reason.name() == "resign").expect("some games resign");
    let played_out_before = records[..first_resign].iter().filter(|g| g.no_resign).count();
    assert!(2 * played_out_before >= selfplay::resign::CALIBRATION_MIN_SIDES, "{played_out_before}");
    for g in &records {
        let expected = if g.end.reason.name() == "resign" { "resign" } else { "checkmate" };
        check_perspective(g, Some(Color::Sente), expected);
        assert!(!(g.no_resign && expected == "resign"), "a no-resign game resigned");
    }
    assert_eq!(progress.resign_threshold, -0.5);
    assert!(progress.resign_checks > 0);
    assert_eq!(progress.false_resign_rate(), Some(0.0));
}

#[test]
fn declaration_wins_for_the_declaring_side() {
    for (sfen, winner) in [(GOTE_DECLARES, Color::Gote), (SENTE_DECLARES, Color::Sente)] {
        for game in play(sfen, &config(false, 512), 2) {
            let sides = check_perspective(&game, Some(winner), "declaration");
            assert_eq!(sides, [winner.opponent()], "only the loser moved");
        }
    }
}

#[test]
fn games_at_the_length_limit_are_draws_for_both_sides() {
    let start = Position::startpos(Variant::Shogi).to_sfen();
    for game in play(&start, &config(false, 6), 2) {
        let sides = check_perspective(&game, None, "max_moves");
        assert_eq!(sides.len(), 2);
        assert_eq!(game.samples.len(), 6);
    }
}

#[test]
fn dai_royal_capture_and_bare_king_win_for_the_capturing_side() {
    for (sfen, reason) in [(DAI_ROOK_TAKES_KING, "royal_capture"), (DAI_ROOK_TAKES_LAST_PAWN, "bare_king")] {
        for game in play_variant(Variant::Dai, sfen, &config(false, 512), 2) {
            let sides = check_variant(Variant::Dai, &game, Some(Color::Sente), reason);
            assert_eq!(sides, [Color::Sente], "only the winner moved: {:?}", game.moves);
        }
    }
}

/// Dai games cut at `max_plies` are draws for both sides (value target 0), as in the
/// other games: see README.md, "Game ends in self-play".
#[test]
fn dai_games_at_the_length_limit_are_draws_for_both_sides() {
    let start = Position::startpos(Variant::Dai).to_sfen();
    for game in play_variant(Variant::Dai, &start, &config(false, 6), 2) {
        let sides = check_variant(Variant::Dai, &game, None, "max_moves");
        assert_eq!(sides.len(), 2);
        assert_eq!(game.samples.len(), 6);
    }
}

/// Dai: sente has two rooks, gote a pawn far away; nothing can be taken in two plies.
const DAI_TWO_ROOKS_UP: &str = "7k7/p14/15/15/15/15/15/15/15/15/15/15/15/15/2R1R9K b - 1";

/// With `cap_adjudication_margin`, a game cut at the cap is won by the side that much
/// material ahead (reason `adjudicated`), for every sample; under the margin, a draw.
#[test]
fn cut_games_are_adjudicated_by_material_when_asked() {
    let mut cfg = config(false, 2);
    cfg.selfplay.cap_adjudication_margin = 6.0;
    for game in play_variant(Variant::Dai, DAI_TWO_ROOKS_UP, &cfg, 2) {
        let sides = check_variant(Variant::Dai, &game, Some(Color::Sente), "adjudicated");
        assert_eq!(sides.len(), 2, "both sides moved: {:?}", game.moves);
    }
    cfg.selfplay.cap_adjudication_margin = 1000.0;
    for game in play_variant(Variant::Dai, DAI_TWO_ROOKS_UP, &cfg, 2) {
        check_variant(Variant::Dai, &game, None, "max_moves");
    }
}
