//! Property tests over random games of every variant: SFEN round trips,
//! incremental Zobrist hashes, make/unmake, and undo back to the start.

use proptest::prelude::*;
use rules::{Position, Variant};

mod support;

use support::Rng;

fn variant_strategy() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::Shogi), Just(Variant::Sho), Just(Variant::Dai)]
}

fn plies(v: Variant) -> usize {
    match v {
        Variant::Dai => 120,
        _ => 200,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_games_keep_sfen_hash_and_undo_consistent(variant in variant_strategy(), seed in 1u64..u64::MAX) {
        let mut rng = Rng(seed);
        let start = Position::startpos(variant);
        let mut pos = start.clone();
        let mut sfens = vec![pos.to_sfen()];
        for _ in 0..plies(variant) {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome(&Default::default()).is_some() {
                break;
            }
            // make/unmake of every legal move restores the position exactly.
            for &mv in moves.iter().take(40) {
                let before_hash = pos.zobrist();
                let undo = pos.make(mv);
                prop_assert_eq!(pos.zobrist(), pos.zobrist_from_scratch(), "hash after {}", mv);
                pos.unmake(mv, undo);
                prop_assert_eq!(pos.zobrist(), before_hash);
            }
            let mv = moves[rng.below(moves.len())];
            pos.play(mv);
            prop_assert_eq!(pos.zobrist(), pos.zobrist_from_scratch());
            let sfen = pos.to_sfen();
            let reparsed = Position::from_sfen(variant, &sfen).map_err(|e| TestCaseError::fail(format!("{sfen}: {e}")))?;
            prop_assert_eq!(&reparsed, &pos);
            prop_assert_eq!(reparsed.to_sfen(), sfen.clone());
            prop_assert_eq!(reparsed.zobrist(), pos.zobrist());
            sfens.push(sfen);
        }
        while pos.undo().is_some() {
            sfens.pop();
            prop_assert_eq!(pos.to_sfen(), sfens.last().unwrap().clone());
        }
        prop_assert_eq!(&pos, &start);
        prop_assert_eq!(pos.zobrist(), start.zobrist());
    }

    #[test]
    fn usi_text_of_legal_moves_parses_back(variant in variant_strategy(), seed in 1u64..u64::MAX) {
        let mut rng = Rng(seed);
        let mut pos = Position::startpos(variant);
        for _ in 0..60 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            for &mv in &moves {
                prop_assert_eq!(pos.parse_usi(&mv.to_usi()).ok(), Some(mv));
            }
            pos.play(moves[rng.below(moves.len())]);
        }
    }
}
