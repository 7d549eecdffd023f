//! cshogi's 16-bit moves (`move16`, Apery's move without its piece fields).
//!
//! Bits 0-6: the destination as a [`square_index`]. Bits 7-13: the origin's
//! square index, or for a drop 80 plus the dropped kind (1 pawn, 2 lance,
//! 3 knight, 4 silver, 5 bishop, 6 rook, 7 gold). Bit 14: promotion.
//! Bit 15 is zero.

use super::{square_index, square_of_index};
use crate::types::Kind;
use crate::{Move, Position};

/// Why a 16-bit move is not a move here, or a move has no 16-bit form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Move16Error {
    #[error("{0:#06x} is not a 16-bit move")]
    NotAMove(u16),
    #[error("{move16:#06x} ({usi}) is illegal in {sfen}: {why}")]
    Illegal { move16: u16, usi: String, sfen: String, why: &'static str },
    #[error("{0} has no 16-bit form (standard shogi moves only)")]
    Unencodable(Move),
}

const PROMOTE: u16 = 1 << 14;
/// A drop's origin field is this plus the kind's number.
const DROP_BASE: u16 = 80;
/// The dropped kinds by number less 1, which both 16-bit encodings (this and
/// YaneuraOu's) use.
pub(crate) const DROP_KINDS: [Kind; 7] =
    [Kind::Pawn, Kind::Lance, Kind::Knight, Kind::Silver, Kind::Bishop, Kind::Rook, Kind::Gold];

/// The 16-bit form of a standard shogi move, as cshogi's `move16` gives it.
pub fn encode_move(mv: Move) -> Result<u16, Move16Error> {
    let unencodable = || Move16Error::Unencodable(mv);
    let to = square_index(mv.to()).ok_or_else(unencodable)? as u16;
    let from = match mv {
        Move::Normal { from, .. } => square_index(from).ok_or_else(unencodable)? as u16,
        Move::Drop { kind, .. } => {
            let number = DROP_KINDS.iter().position(|&k| k == kind).ok_or_else(unencodable)?;
            DROP_BASE + 1 + number as u16
        }
        Move::Lion { .. } => return Err(unencodable()),
    };
    Ok(to | from << 7 | if mv.is_promotion() { PROMOTE } else { 0 })
}

/// The move a 16-bit move names, without checking it against a position.
pub fn decode_move(move16: u16) -> Result<Move, Move16Error> {
    let not_a_move = Move16Error::NotAMove(move16);
    let to = square_of_index((move16 & 0x7f) as u8).ok_or(not_a_move.clone())?;
    let from = (move16 >> 7) & 0x7f;
    let promote = move16 & PROMOTE != 0;
    if move16 & 1 << 15 != 0 {
        return Err(not_a_move);
    }
    match square_of_index(from as u8) {
        Some(from) if from != to => Ok(Move::Normal { from, to, promote }),
        Some(_) => Err(not_a_move),
        None => match (from.checked_sub(DROP_BASE + 1), promote) {
            (Some(number), false) if (number as usize) < DROP_KINDS.len() => {
                Ok(Move::Drop { kind: DROP_KINDS[number as usize], to })
            }
            _ => Err(not_a_move),
        },
    }
}

/// A move's reading from 16 bits (this module's or YaneuraOu's).
pub(crate) type Decode = fn(u16) -> Result<Move, Move16Error>;
/// A move's writing in 16 bits (this module's or YaneuraOu's).
pub(crate) type Encode = fn(Move) -> Result<u16, Move16Error>;

/// The move a 16-bit move names, which must be one of `legal` (the legal
/// moves of `pos`).
pub(crate) fn decode_among(pos: &Position, legal: &[Move], move16: u16) -> Result<Move, Move16Error> {
    decode_among_by(decode_move, pos, legal, move16)
}

/// [`decode_among`], the move read by `decode`.
pub(crate) fn decode_among_by(
    decode: Decode,
    pos: &Position,
    legal: &[Move],
    move16: u16,
) -> Result<Move, Move16Error> {
    let mv = decode(move16)?;
    if legal.contains(&mv) {
        return Ok(mv);
    }
    Err(Move16Error::Illegal { move16, usi: mv.to_usi(), sfen: pos.to_sfen(), why: pos.explain_illegal(mv) })
}

/// The 16-bit form of `mv`, which must be one of `legal` (the legal moves
/// of `pos`).
pub(crate) fn encode_legal(pos: &Position, legal: &[Move], mv: Move) -> Result<u16, Move16Error> {
    encode_legal_by(encode_move, decode_move, pos, legal, mv)
}

/// [`encode_legal`], the move written by `encode` and read back by `decode`.
pub(crate) fn encode_legal_by(
    encode: Encode,
    decode: Decode,
    pos: &Position,
    legal: &[Move],
    mv: Move,
) -> Result<u16, Move16Error> {
    let move16 = encode(mv)?;
    decode_among_by(decode, pos, legal, move16)?;
    Ok(move16)
}

/// The legal move of `pos` that a 16-bit move names.
pub fn decode_legal_move(pos: &Position, move16: u16) -> Result<Move, Move16Error> {
    decode_among(pos, &pos.legal_moves(), move16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Square;

    #[test]
    fn fields_sit_where_cshogi_puts_them() {
        // 7g7f: to 7f = 6 * 9 + 5 = 59, from 7g = 60.
        let mv = Move::Normal { from: Square::new(7, 7), to: Square::new(7, 6), promote: false };
        assert_eq!(encode_move(mv), Ok(59 | 60 << 7));
        // 8h2b+: to 2b = 10, from 8h = 70, promoted.
        let mv = Move::Normal { from: Square::new(8, 8), to: Square::new(2, 2), promote: true };
        assert_eq!(encode_move(mv), Ok(10 | 70 << 7 | 1 << 14));
        // G*5e: to 5e = 40, origin 80 + 7.
        assert_eq!(encode_move(Move::Drop { kind: Kind::Gold, to: Square::new(5, 5) }), Ok(40 | 87 << 7));
    }

    #[test]
    fn non_moves_are_refused() {
        for bad in [0, 81, 5 | 5 << 7, 40 | 88 << 7, 40 | 81 << 7 | 1 << 14, 59 | 60 << 7 | 1 << 15] {
            assert_eq!(decode_move(bad), Err(Move16Error::NotAMove(bad)), "{bad:#x}");
        }
        let lion = Move::Lion { from: Square::new(1, 1), mid: Square::new(1, 2), to: Square::new(1, 3) };
        assert_eq!(encode_move(lion), Err(Move16Error::Unencodable(lion)));
        let dai = Move::Normal { from: Square::new(12, 1), to: Square::new(12, 2), promote: false };
        assert_eq!(encode_move(dai), Err(Move16Error::Unencodable(dai)));
    }
}
