//! Who wins a self-play game cut at the length cap (`selfplay.max_plies`), when
//! `selfplay.cap_adjudication_margin` is set: the side ahead in material after the
//! captures on offer are played out (`rules::quiescent_balance`, the balance the
//! trainer's material prior reads), by at least the margin. Otherwise the game stays the
//! rules' draw. Early dai games mostly reach the cap; as draws they teach the value
//! nothing about who was winning.

use rules::{quiescent_balance, Color, Position, QuiescenceLimits};

/// The winner of a game cut at `pos` under `margin` (material units, pawn 1); `None`
/// for a draw, and always for a margin of 0 (adjudication off).
pub fn cap_winner(pos: &Position, margin: f32) -> Option<Color> {
    if margin <= 0.0 {
        return None;
    }
    let side = pos.side_to_move();
    let balance = quiescent_balance(pos, side, QuiescenceLimits::default());
    if balance >= margin as f64 {
        Some(side)
    } else if balance <= -(margin as f64) {
        Some(side.opponent())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn pos(variant: Variant, sfen: &str) -> Position {
        Position::from_sfen(variant, sfen).unwrap()
    }

    #[test]
    fn the_side_a_rook_up_wins_whoever_is_to_move() {
        // Gote's rook is gone.
        let board = "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL";
        for to_move in ["b", "w"] {
            let p = pos(Variant::Shogi, &format!("{board} {to_move} - 1"));
            assert_eq!(cap_winner(&p, 6.0), Some(Color::Sente), "{to_move} to move");
            assert_eq!(cap_winner(&p, 12.0), None, "a rook (10) is under a margin of 12");
            assert_eq!(cap_winner(&p, 0.0), None, "margin 0: off");
        }
    }

    #[test]
    fn equal_material_is_a_draw_and_hanging_pieces_count_as_lost() {
        let start = Position::startpos(Variant::Shogi);
        assert_eq!(cap_winner(&start, 1.0), None);
        // Material is level, but gote's rook on 5e hangs to sente's pawn on 5f with sente to
        // move: after the capture sente is a rook up.
        let p = pos(Variant::Shogi, "lnsgkgsnl/7b1/ppppppppp/9/4r4/4P4/PPPP1PPPP/1B5R1/LNSGKGSNL b - 1");
        assert_eq!(cap_winner(&p, 6.0), Some(Color::Sente));
        // The same with gote to move: the rook takes the pawn (safely), a pawn's worth
        // for gote, under the margin.
        let q = pos(Variant::Shogi, "lnsgkgsnl/7b1/ppppppppp/9/4r4/4P4/PPPP1PPPP/1B5R1/LNSGKGSNL w - 1");
        assert_eq!(cap_winner(&q, 6.0), None);
        assert_eq!(cap_winner(&q, 1.0), Some(Color::Gote));
    }

    #[test]
    fn dai_and_sho_positions_are_scored_too() {
        for v in [Variant::Sho, Variant::Dai] {
            assert_eq!(cap_winner(&Position::startpos(v), 1.0), None, "{v:?} start");
        }
    }
}
