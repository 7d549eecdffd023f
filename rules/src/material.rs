//! Material from the rules alone: a piece is worth what its movement reaches, so the
//! same values serve standard, sho and dai shogi without a table per variant. The greedy
//! baseline plays by them, and the trainer's optional material prior
//! (`train.material_mix`) turns them into a value target, as they stand or with the
//! captures played out ([`crate::quiescent_balance`]).

use crate::{Color, Kind, LionPower, Position};

/// Material value of a piece from its movement: a slider line 2.5, a two-square line
/// 1.5, a step or jump 1, full lion power 10, limited lion power 4. Royal pieces count 0
/// (losing them ends the game, which callers check separately). Standard shogi comes out
/// as pawn 1, lance 2.5, knight 2, silver 5, gold 6, bishop 10, rook 10, dragon 14.
pub fn piece_value(pos: &Position, kind: Kind, promoted: bool) -> f64 {
    let spec = pos.spec();
    let Some(ks) = spec.kinds.iter().find(|k| k.kind == kind) else {
        return 0.0;
    };
    if ks.royal || (promoted && ks.promoted_royal) {
        return 0.0;
    }
    let movement = match (promoted, ks.promotion) {
        (true, Some((m, _))) => m,
        _ => ks.movement,
    };
    let legs: f64 = movement
        .legs
        .iter()
        .map(|leg| match leg.range {
            1 => 1.0,
            2 => 1.5,
            _ => 2.5,
        })
        .sum();
    legs + match movement.lion {
        LionPower::None => 0.0,
        LionPower::Full => 10.0,
        LionPower::Lines(_) => 4.0,
    }
}

/// Material (board and hand) of `color` minus the opponent's, in [`piece_value`] units.
pub fn material_balance(pos: &Position, color: Color) -> f64 {
    let mut total = 0.0;
    for (_, p) in pos.pieces() {
        let v = piece_value(pos, p.kind(), p.is_promoted());
        total += if p.color() == color { v } else { -v };
    }
    if pos.spec().drops {
        for kind in Kind::HAND {
            let v = piece_value(pos, kind, false);
            total += v * (pos.hand(color, kind) as f64 - pos.hand(color.opponent(), kind) as f64);
        }
    }
    total
}

/// Material units ([`piece_value`]: pawn 1, gold 6, rook 10) per logistic unit of
/// [`material_win_probability`]: a rook up is a 0.84 win probability, a pawn up 0.54.
pub const MATERIAL_SCALE: f64 = 6.0;

/// A material balance read as the win probability of the side it favours:
/// `sigmoid(balance / scale)`, as the trainer's material prior reads it (`scale`:
/// [`MATERIAL_SCALE`] unless a config says otherwise).
pub fn material_win_probability(balance: f64, scale: f64) -> f64 {
    1.0 / (1.0 + (-balance / scale).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn values_follow_movement() {
        let pos = Position::startpos(Variant::Shogi);
        assert_eq!(piece_value(&pos, Kind::Pawn, false), 1.0);
        assert_eq!(piece_value(&pos, Kind::Gold, false), 6.0);
        assert_eq!(piece_value(&pos, Kind::Rook, false), 10.0);
        assert_eq!(piece_value(&pos, Kind::Rook, true), 14.0);
        assert_eq!(piece_value(&pos, Kind::King, false), 0.0);
    }

    #[test]
    fn balance_is_zero_at_the_start_and_counts_hands() {
        for v in [Variant::Shogi, Variant::Sho, Variant::Dai] {
            let p = Position::startpos(v);
            assert_eq!(material_balance(&p, Color::Sente), 0.0);
            assert_eq!(material_balance(&p, Color::Gote), 0.0);
        }
        // Gote has no rook on the board; sente holds one in hand.
        let pos = Position::from_sfen(Variant::Shogi, "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1")
            .unwrap();
        assert_eq!(material_balance(&pos, Color::Sente), 20.0);
        assert_eq!(material_balance(&pos, Color::Gote), -20.0);
    }
}
