//! Hands packed into one word, and the arithmetic of proof and disproof hands.
//!
//! Within one solve the pieces are conserved, so board and attacker's hand determine the
//! defender's hand: a position whose attacker holds at least as much of every kind is at
//! least as good for the attacker (more drops for it, fewer for the defender). The table
//! keys positions by board alone and compares these words, so that one proof (or
//! disproof) serves every position it covers. Whether a pawn drop is a (forbidden) mate
//! does not depend on the hands: a pawn's check cannot be blocked.

use rules::{Color, Kind, Position};

/// (kind, bit offset, width) of each field; one guard bit above each field.
const FIELDS: [(Kind, u32, u32); 7] = [
    (Kind::Pawn, 0, 5),
    (Kind::Lance, 6, 3),
    (Kind::Knight, 10, 3),
    (Kind::Silver, 14, 3),
    (Kind::Gold, 18, 3),
    (Kind::Bishop, 22, 2),
    (Kind::Rook, 25, 2),
];

/// The guard bits: bit `offset + width` of every field.
const GUARDS: u32 = {
    let mut g = 0;
    let mut i = 0;
    while i < FIELDS.len() {
        g |= 1 << (FIELDS[i].1 + FIELDS[i].2);
        i += 1;
    }
    g
};

/// `color`'s hand as a word (standard shogi's seven kinds; counts fit their fields: 18
/// pawns, 4 lances, knights, silvers and golds, 2 bishops and rooks).
pub(crate) fn pack(pos: &Position, color: Color) -> u32 {
    FIELDS.iter().fold(0, |w, &(kind, offset, _)| w | (pos.hand(color, kind) as u32) << offset)
}

/// One piece of `kind` (unpromoted) as a hand word; 0 for a kind no hand holds.
pub(crate) fn unit(kind: Kind) -> u32 {
    FIELDS.iter().find(|f| f.0 == kind).map_or(0, |f| 1 << f.1)
}

/// Whether hand `a` holds at least as many pieces of every kind as hand `b`: each field
/// of `(a | guards) - b` keeps its guard bit exactly when it did not borrow.
#[inline]
pub(crate) fn covers(a: u32, b: u32) -> bool {
    ((a | GUARDS) - b) & GUARDS == GUARDS
}

/// Field by field: `f(a, b)` of each kind's counts.
#[inline]
fn zip(a: u32, b: u32, f: impl Fn(u32, u32) -> u32) -> u32 {
    FIELDS.iter().fold(0, |w, &(_, offset, width)| {
        let mask = (1 << width) - 1;
        w | f((a >> offset) & mask, (b >> offset) & mask) << offset
    })
}

/// The smaller count of each kind.
pub(crate) fn min(a: u32, b: u32) -> u32 {
    zip(a, b, u32::min)
}

/// The larger count of each kind.
pub(crate) fn max(a: u32, b: u32) -> u32 {
    zip(a, b, u32::max)
}

/// `a - b` per kind, 0 where `b` holds more.
pub(crate) fn sub_floor(a: u32, b: u32) -> u32 {
    zip(a, b, u32::saturating_sub)
}

/// `a`'s counts of the kinds that `b` holds none of (`b` nonzero: 0).
pub(crate) fn where_absent(a: u32, b: u32) -> u32 {
    zip(a, b, |x, y| if y == 0 { x } else { 0 })
}

/// `a`'s counts of the kinds that `b` holds some of.
pub(crate) fn where_present(a: u32, b: u32) -> u32 {
    zip(a, b, |x, y| if y == 0 { 0 } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn hand(text: &str) -> u32 {
        let pos = Position::from_sfen(Variant::Shogi, &format!("4k4/9/9/9/9/9/9/9/4K4 b {text} 1")).unwrap();
        pack(&pos, Color::Sente)
    }

    #[test]
    fn covering_is_fieldwise() {
        let full = hand("2R2B4G4S4N4L18P");
        assert_eq!(full & GUARDS, 0, "no count reaches a guard bit");
        assert!(covers(full, hand("-")));
        assert!(covers(hand("G2P"), hand("GP")));
        assert!(covers(hand("GP"), hand("GP")));
        assert!(!covers(hand("GP"), hand("G2P")));
        assert!(!covers(hand("G18P"), hand("S")), "many pawns do not make up for a silver");
        assert!(!covers(hand("R"), hand("B")));
        assert!(covers(hand("2R2B4G4S4N4L"), hand("RBGSNL")));
        assert!(!covers(hand("-"), hand("P")));
    }

    #[test]
    fn fieldwise_arithmetic() {
        assert_eq!(min(hand("2G3P"), hand("GS5P")), hand("G3P"));
        assert_eq!(max(hand("2G3P"), hand("GS5P")), hand("2GS5P"));
        assert_eq!(sub_floor(hand("2G3P"), hand("GS5P")), hand("G"));
        assert_eq!(hand("2G3P") + unit(Kind::Silver), hand("2GS3P"));
        assert_eq!(where_absent(hand("R2G3P"), hand("GN")), hand("R3P"));
        assert_eq!(where_present(hand("R2G3P"), hand("GN")), hand("2G"));
        assert_eq!(unit(Kind::King), 0);
        assert_eq!(hand("18P") + unit(Kind::Lance), hand("L18P"), "no carry between fields");
    }
}
