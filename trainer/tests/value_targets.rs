//! The value target's sign and perspective in `koma learn`: game records (CSA and USI
//! files read as `koma learn` reads them, and a declaration) turned into samples, then
//! into the batch the learner trains on. A record without a result has no value target.

use std::path::PathBuf;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use rules::records::{EndReason, GameEnd, Record, RecordedMove, Start};
use rules::{Color, Position, Variant};
use trainer::config::MaterialSearch;
use trainer::data::{encode_batch, ValueTargets};
use trainer::supervised::records::{read_record_samples, record_samples};

/// The CSA moves of a fourfold repetition from the start position (kings step out and
/// back three times).
const REPETITION: &str = "+5958OU\n-5152OU\n+5859OU\n-5251OU\n";

/// Reads one record file of `name` holding `text` as `koma learn` does.
fn learn_samples(name: &str, text: &str) -> Vec<Sample> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let (games, problems) = read_record_samples(&[PathBuf::from(&path)], &Encoder::new(Variant::Shogi));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(games.len(), 1);
    games.into_iter().next().unwrap()
}

/// Every sample's value target is the result for its side to move (`None`: unknown), in
/// the sample and in the encoded batch; returns the sides that have samples.
fn check_perspective(samples: &[Sample], winner: Option<Option<Color>>) -> Vec<Color> {
    let batch = encode_batch(&Encoder::new(Variant::Shogi), samples, ValueTargets::RESULT);
    assert_eq!(batch.n, samples.len());
    let mut sides = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let side = Position::from_sfen(Variant::Shogi, &s.sfen).unwrap().side_to_move();
        let expected = winner.map(|w| match w {
            None => GameResult::Draw,
            Some(c) if c == side => GameResult::Win,
            Some(_) => GameResult::Loss,
        });
        assert_eq!(s.result, expected, "{side:?} at {} in a game won by {winner:?}", s.sfen);
        let wdl = &batch.wdl[i * 3..i * 3 + 3];
        match expected {
            Some(r) => assert_eq!((wdl, batch.value_mask[i]), (&r.wdl()[..], 1.0), "sample {i}"),
            None => assert_eq!((wdl, batch.value_mask[i]), (&[0.0; 3][..], 0.0), "sample {i}"),
        }
        if !sides.contains(&side) {
            sides.push(side);
        }
    }
    sides
}

#[test]
fn resignation_wins_for_the_other_side() {
    let sente_wins = learn_samples("a.csa", "V2.2\nPI\n+\n+7776FU\n-3334FU\n+2726FU\n%TORYO\n");
    assert_eq!(check_perspective(&sente_wins, Some(Some(Color::Sente))).len(), 2);
    let gote_wins = learn_samples("b.csa", "V2.2\nPI\n+\n+7776FU\n-3334FU\n%TORYO\n");
    assert_eq!(check_perspective(&gote_wins, Some(Some(Color::Gote))).len(), 2);
}

#[test]
fn checkmate_from_the_rules_wins_for_the_mating_side() {
    // No end in the record: the rules' verdict on the final position.
    let sente_mates = learn_samples("a.usi", "sfen 4k4/9/4P4/9/9/9/p8/9/4K4 w G 1 moves 9g9h G*5b\n");
    assert_eq!(check_perspective(&sente_mates, Some(Some(Color::Sente))).len(), 2);
    let gote_mates = learn_samples("b.usi", "sfen 4k4/9/9/P8/9/9/4p4/9/4K4 b g 1 moves 9d9c G*5h\n");
    assert_eq!(check_perspective(&gote_mates, Some(Some(Color::Gote))).len(), 2);
}

#[test]
fn repetition_is_a_draw_for_both_sides() {
    let moves = REPETITION.repeat(3);
    let draw = learn_samples("a.csa", &format!("V2.2\nPI\n+\n{moves}%SENNICHITE\n"));
    assert_eq!(draw.len(), 12);
    assert_eq!(check_perspective(&draw, Some(None)).len(), 2);
    // The same moves without an end: the rules see the fourfold repetition.
    let line = "startpos moves ".to_string() + &["5i5h", "5a5b", "5h5i", "5b5a"].repeat(3).join(" ");
    let draw = learn_samples("b.usi", &(line + "\n"));
    assert_eq!(check_perspective(&draw, Some(None)).len(), 2);
}

/// A declaration record: `start`, one move, then the side to move declares.
fn declaration(start: &str, mv: &str) -> Vec<Sample> {
    let mut pos = Position::from_sfen(Variant::Shogi, start).unwrap();
    let mut record = Record::new(Start::from_position(&pos));
    record.moves.push(RecordedMove::new(pos.play_usi(mv).unwrap()));
    record.end = Some(GameEnd::at(EndReason::Declaration, &pos));
    record_samples(&record, &Encoder::new(Variant::Shogi)).unwrap()
}

#[test]
fn declaration_wins_for_the_declaring_side() {
    let gote_declares = declaration("4K4/9/9/9/9/9/ppppp4/r1b1k1b1r/g7g b - 1", "5a4a");
    assert_eq!(check_perspective(&gote_declares, Some(Some(Color::Gote))), [Color::Sente]);
    let sente_declares = declaration("G7G/R1B1K1B1R/4PPPPP/9/9/9/9/9/4k4 w P 1", "5i4i");
    assert_eq!(check_perspective(&sente_declares, Some(Some(Color::Sente))), [Color::Gote]);
}

#[test]
fn unknown_results_have_no_value_target() {
    // An aborted game, and a USI line (no result) whose final position is not an end.
    let aborted = learn_samples("a.csa", "V2.2\nPI\n+\n+7776FU\n-3334FU\n%CHUDAN\n");
    assert_eq!(check_perspective(&aborted, None).len(), 2);
    let unfinished = learn_samples("b.usi", "startpos moves 7g7f 3c3d 2g2f\n");
    assert_eq!(check_perspective(&unfinished, None).len(), 2);
}

/// A sample of `sfen` from a game `result` (for its side to move), root WDL `root`.
fn sample(sfen: &str, result: Option<GameResult>, root: [f32; 3]) -> Sample {
    Sample {
        sfen: sfen.into(),
        repetitions: 0,
        policy: Vec::new(),
        result,
        root_wdl: root,
        plies_left: 10,
        full_search: false,
        aux: dataio::AuxTargets::default(),
    }
}

#[test]
fn material_prior_favours_the_side_with_more_material() {
    // Gote's rook is in sente's hand: sente is 20 up (rule-derived values, rook 10).
    let sente_up = "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1";
    let gote_to_move = "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w R 1";
    let samples = [
        sample(sente_up, Some(GameResult::Draw), [0.2, 0.6, 0.2]),
        sample(gote_to_move, Some(GameResult::Draw), [0.2, 0.6, 0.2]),
        sample(sente_up, None, [0.2, 0.6, 0.2]),
    ];
    let enc = Encoder::new(Variant::Shogi);
    let mix = ValueTargets { q_mix: 0.25, material_mix: 0.5, ..ValueTargets::RESULT };
    let batch = encode_batch(&enc, &samples, mix);
    let win = (1.0 / (1.0 + (-20.0f64 / rules::MATERIAL_SCALE).exp())) as f32;
    // (1 - 0.25 - 0.5) x draw + 0.25 x root + 0.5 x (win, 0, loss) of the side to move.
    let expect = |w: f32| [0.25 * 0.0 + 0.05 + 0.5 * w, 0.25 + 0.15, 0.05 + 0.5 * (1.0 - w)];
    for (i, w) in [(0, win), (1, 1.0 - win)] {
        let got = &batch.wdl[i * 3..i * 3 + 3];
        for (g, e) in got.iter().zip(expect(w)) {
            assert!((g - e).abs() < 1e-6, "sample {i}: {got:?} vs {:?}", expect(w));
        }
        assert!((got.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    assert!(batch.wdl[0] > 0.45 && batch.wdl[3] < 0.1, "{:?}", &batch.wdl[..6]);
    // No result: no value target, whatever the mix.
    assert_eq!((&batch.wdl[6..9], batch.value_mask[2]), (&[0.0; 3][..], 0.0));
    // Without the mix the result alone.
    let plain = encode_batch(&enc, &samples, ValueTargets::RESULT);
    assert_eq!(&plain.wdl[..3], &GameResult::Draw.wdl()[..]);
}

#[test]
fn quiescence_counts_a_hanging_piece_as_lost() {
    // Sente's rook on 5e hangs to gote's pawn, gote to move: statically sente is 9 up, with
    // the capture played out 11 down (the rook in gote's hand).
    let hanging = sample("4k4/9/9/4p4/4R4/9/9/9/4K4 w - 1", Some(GameResult::Draw), [0.0, 1.0, 0.0]);
    // No capture on offer: both readings agree.
    let quiet = sample("4k4/9/9/9/5R3/9/9/9/4K4 w - 1", Some(GameResult::Draw), [0.0, 1.0, 0.0]);
    let enc = Encoder::new(Variant::Shogi);
    let target = |search: MaterialSearch| {
        let value = ValueTargets { material_mix: 1.0, material_search: search, ..ValueTargets::RESULT };
        encode_batch(&enc, &[hanging.clone(), quiet.clone()], value).wdl
    };
    let win = |balance: f64| (1.0 / (1.0 + (-balance / rules::MATERIAL_SCALE).exp())) as f32;
    let (stat, quiescent) = (target(MaterialSearch::Static), target(MaterialSearch::Quiescence));
    // Gote's view: -9 as the pieces stand (today's target), +11 after the capture.
    assert_eq!(stat[..3], [win(-9.0), 0.0, 1.0 - win(-9.0)]);
    assert_eq!(quiescent[..3], [win(11.0), 0.0, 1.0 - win(11.0)]);
    assert!(quiescent[0] > 0.8 && stat[0] < 0.2, "{stat:?} {quiescent:?}");
    assert_eq!(stat[3..], [win(-10.0), 0.0, 1.0 - win(-10.0)]);
    assert_eq!(stat[3..], quiescent[3..]);
    // The default reads the static balance.
    let default = ValueTargets::from_config(&trainer::config::TrainConfig { material_mix: 1.0, ..Default::default() });
    assert_eq!(default.material_search, MaterialSearch::Static);
    assert_eq!(encode_batch(&enc, &[hanging], default).wdl[..3], stat[..3]);
}

/// `train.material_scale`: the same balance reads closer to even at a larger scale, and
/// the config's scale reaches the target.
#[test]
fn material_scale_grades_the_prior() {
    // Gote to move, a rook down as the pieces stand and after any capture (none on offer).
    let down = sample("4k4/9/9/9/5R3/9/9/9/4K4 w - 1", Some(GameResult::Draw), [0.0, 1.0, 0.0]);
    let enc = Encoder::new(Variant::Shogi);
    let target = |scale: f64| {
        let cfg = trainer::config::TrainConfig { material_mix: 1.0, material_scale: scale, ..Default::default() };
        encode_batch(&enc, std::slice::from_ref(&down), ValueTargets::from_config(&cfg)).wdl[0]
    };
    let win = |balance: f64, scale: f64| (1.0 / (1.0 + (-balance / scale).exp())) as f32;
    assert_eq!(target(rules::MATERIAL_SCALE), win(-10.0, 6.0), "the default is rules::MATERIAL_SCALE");
    assert_eq!(target(36.0), win(-10.0, 36.0));
    assert!(target(36.0) > target(6.0) && target(36.0) < 0.5, "{} {}", target(36.0), target(6.0));
}

/// `train.future_mix`: the root WDL a few plies later blends in; samples without one
/// (older chunks) keep the result for that share.
#[test]
fn future_mix_blends_in_the_later_root_wdl() {
    let start = Position::startpos(Variant::Shogi).to_sfen();
    let without = sample(&start, Some(GameResult::Loss), [0.2, 0.6, 0.2]);
    let future = dataio::AuxTargets { future_wdl: Some([0.7, 0.2, 0.1]), ..Default::default() };
    let with_future = Sample { aux: future, ..without.clone() };
    let enc = Encoder::new(Variant::Shogi);
    let mix = ValueTargets { q_mix: 0.25, future_mix: 0.5, ..ValueTargets::RESULT };
    let batch = encode_batch(&enc, &[with_future.clone(), without], mix);
    // 0.25 x loss + 0.25 x root + 0.5 x future.
    let expected = [0.05 + 0.35, 0.15 + 0.1, 0.25 + 0.05 + 0.05];
    // Without a future WDL: 0.75 x loss + 0.25 x root.
    let fallback = [0.05, 0.15, 0.75 + 0.05];
    for (i, e) in [expected, fallback].iter().enumerate() {
        let got = &batch.wdl[i * 3..i * 3 + 3];
        assert!(got.iter().zip(e).all(|(g, e)| (g - e).abs() < 1e-6), "sample {i}: {got:?} vs {e:?}");
        assert_eq!(batch.value_mask[i], 1.0);
    }
    // Off by default: the result alone.
    let default = ValueTargets::from_config(&trainer::config::TrainConfig::default());
    let plain = encode_batch(&enc, &[with_future], default);
    assert_eq!(&plain.wdl[..3], &GameResult::Loss.wdl()[..]);
}
