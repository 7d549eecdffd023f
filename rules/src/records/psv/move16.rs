//! YaneuraOu's 16-bit moves (`Move16`), which `PackedSfenValue` uses; not
//! cshogi's `move16` of hcpe, whose drops and promotions are coded otherwise
//! (cshogi converts with `move16_to_psv` and `move16_from_psv`).
//!
//! Bits 0-6: the destination as a [`square_index`]. Bits 7-13: the origin's
//! square index, or for a drop the dropped kind (1 pawn, 2 lance, 3 knight,
//! 4 silver, 5 bishop, 6 rook, 7 gold). Bit 14: drop. Bit 15: promotion.

use super::super::hcpe::move16::{decode_among_by, encode_legal_by, DROP_KINDS};
use super::super::hcpe::{square_index, square_of_index, Move16Error};
use crate::{Move, Position};

const DROP: u16 = 1 << 14;
const PROMOTE: u16 = 1 << 15;

/// The 16-bit form of a standard shogi move, as YaneuraOu writes it.
pub fn encode_move(mv: Move) -> Result<u16, Move16Error> {
    let unencodable = || Move16Error::Unencodable(mv);
    let to = square_index(mv.to()).ok_or_else(unencodable)? as u16;
    let (from, drop) = match mv {
        Move::Normal { from, .. } => (square_index(from).ok_or_else(unencodable)? as u16, 0),
        Move::Drop { kind, .. } => {
            let number = DROP_KINDS.iter().position(|&k| k == kind).ok_or_else(unencodable)?;
            (1 + number as u16, DROP)
        }
        Move::Lion { .. } => return Err(unencodable()),
    };
    Ok(to | from << 7 | drop | if mv.is_promotion() { PROMOTE } else { 0 })
}

/// The move a 16-bit move names, without checking it against a position.
/// YaneuraOu's special moves (none 0, null, resign, win) are not moves here.
pub fn decode_move(move16: u16) -> Result<Move, Move16Error> {
    let not_a_move = Move16Error::NotAMove(move16);
    let to = square_of_index((move16 & 0x7f) as u8).ok_or(not_a_move.clone())?;
    let from = (move16 >> 7) & 0x7f;
    let promote = move16 & PROMOTE != 0;
    if move16 & DROP != 0 {
        return match from.checked_sub(1).map(usize::from) {
            Some(number) if number < DROP_KINDS.len() && !promote => Ok(Move::Drop { kind: DROP_KINDS[number], to }),
            _ => Err(not_a_move),
        };
    }
    match square_of_index(from as u8) {
        Some(from) if from != to => Ok(Move::Normal { from, to, promote }),
        _ => Err(not_a_move),
    }
}

/// The legal move of `pos` that a 16-bit move names.
pub fn decode_legal_move(pos: &Position, move16: u16) -> Result<Move, Move16Error> {
    decode_among_by(decode_move, pos, &pos.legal_moves(), move16)
}

/// The 16-bit form of `mv`, which must be a legal move of `pos`.
pub fn encode_legal_move(pos: &Position, mv: Move) -> Result<u16, Move16Error> {
    encode_legal_by(encode_move, decode_move, pos, &pos.legal_moves(), mv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Kind;
    use crate::Square;

    #[test]
    fn fields_sit_where_yaneuraou_puts_them() {
        // 7g7f: to 7f = 6 * 9 + 5 = 59, from 7g = 60; as in cshogi's move16.
        let mv = Move::Normal { from: Square::new(7, 7), to: Square::new(7, 6), promote: false };
        assert_eq!(encode_move(mv), Ok(59 | 60 << 7));
        // 8h2b+: to 2b = 10, from 8h = 70, promotion in bit 15.
        let mv = Move::Normal { from: Square::new(8, 8), to: Square::new(2, 2), promote: true };
        assert_eq!(encode_move(mv), Ok(10 | 70 << 7 | 1 << 15));
        // G*5e: to 5e = 40, kind 7, drop in bit 14.
        assert_eq!(encode_move(Move::Drop { kind: Kind::Gold, to: Square::new(5, 5) }), Ok(40 | 7 << 7 | 1 << 14));
    }

    #[test]
    fn non_moves_are_refused() {
        // None, null (1 << 7 | 1), resign, win; a drop of kind 0 or 8, a promoted drop,
        // an origin off the board, a move to its own square.
        for bad in [
            0,
            129,
            2 << 7 | 2,
            3 << 7 | 3,
            40 | 1 << 14,
            40 | 8 << 7 | 1 << 14,
            40 | 1 << 7 | 3 << 14,
            5 | 81 << 7,
            81,
        ] {
            assert_eq!(decode_move(bad), Err(Move16Error::NotAMove(bad)), "{bad:#x}");
        }
        let lion = Move::Lion { from: Square::new(1, 1), mid: Square::new(1, 2), to: Square::new(1, 3) };
        assert_eq!(encode_move(lion), Err(Move16Error::Unencodable(lion)));
    }
}
