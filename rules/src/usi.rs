//! USI text against a position: moves checked for legality, and the
//! arguments of the USI `position` command.

use crate::moves::{Move, UsiMove, UsiMoveError};
use crate::position::Position;
use crate::types::{Kind, Piece, Square};

/// Why a move cannot be played here.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error(transparent)]
    Syntax(#[from] UsiMoveError),
    #[error("illegal move {}: {why}", crate::excerpt(.mv))]
    Illegal { mv: String, why: &'static str },
    /// XBoard text that is malformed or illegal here.
    #[error(transparent)]
    Xboard(#[from] crate::xboard::XboardError),
}

impl Position {
    /// Parses a USI move and plays it if it is legal here.
    pub fn play_usi(&mut self, text: &str) -> Result<Move, MoveError> {
        let mv = self.parse_usi(text)?;
        self.play(mv);
        Ok(mv)
    }

    fn on_board(&self, sq: Square) -> bool {
        let size = self.t.spec.size as u8;
        sq.file() <= size && sq.rank() <= size
    }

    /// Turns USI text into a legal move of this position.
    pub fn parse_usi(&self, text: &str) -> Result<Move, MoveError> {
        let usi = UsiMove::parse(text)?;
        let mv = match usi {
            UsiMove::Normal { from, to, promote } => Move::Normal { from, to, promote },
            UsiMove::Drop { kind, to } => Move::Drop { kind, to },
            UsiMove::Lion { from, mid, to } => Move::Lion { from, mid, to },
        };
        let legal = self.legal_moves();
        if legal.contains(&mv) {
            return Ok(mv);
        }
        // A pass may be written with any lion-power piece and empty square.
        if let Move::Lion { from, mid, to } = mv {
            if from == to && self.piece_at(mid).is_none() {
                if let Some(&pass) = legal.iter().find(
                    |m| matches!(m, Move::Lion { from: f, mid: m2, to: t } if f == t && self.piece_at(*m2).is_none()),
                ) {
                    if self.piece_at(from).is_some_and(|p| p.color() == self.side) {
                        return Ok(pass);
                    }
                }
            }
        }
        Err(MoveError::Illegal { mv: text.to_string(), why: self.explain_illegal(mv) })
    }

    pub(crate) fn explain_illegal(&self, mv: Move) -> &'static str {
        let squares: Vec<Square> = match mv {
            Move::Normal { from, to, .. } => vec![from, to],
            Move::Drop { to, .. } => vec![to],
            Move::Lion { from, mid, to } => vec![from, mid, to],
        };
        if squares.iter().any(|&s| !self.on_board(s)) {
            return "square off the board";
        }
        match mv {
            Move::Drop { kind, to } => {
                if !self.t.spec.drops {
                    "this variant has no drops"
                } else if self.hand(self.side, kind) == 0 {
                    "piece not in hand"
                } else if self.piece_at(to).is_some() {
                    "drop on an occupied square"
                } else if kind == Kind::Pawn && self.pawn_files[self.side.index()] & (1 << to.col()) != 0 {
                    "two unpromoted pawns on a file (nifu)"
                } else if self.t.kind_spec[kind as usize]
                    .is_some_and(|k| (self.t.spec.rows_ahead(self.side, to.row()) as u8) < k.dead_ranks)
                {
                    "dropped piece could never move"
                } else if kind == Kind::Pawn && !self.in_check() {
                    "pawn drop mate (uchifuzume)"
                } else {
                    "leaves the king in check"
                }
            }
            Move::Normal { from, .. } | Move::Lion { from, .. } => match self.piece_at(from) {
                None => "no piece on the square moved from",
                Some(p) if p.color() != self.side => "that piece belongs to the opponent",
                Some(p) => self.explain_board_move(mv, p),
            },
        }
    }

    fn explain_board_move(&self, mv: Move, piece: Piece) -> &'static str {
        let mut pseudo = Vec::new();
        let mut scratch = self.scratch();
        // Pseudo-legal moves: as if the check rule did not exist.
        let saved = scratch.royals;
        scratch.royals[self.side.index()].n = 0;
        scratch.generate_legal(&mut pseudo);
        scratch.royals = saved;
        let same_squares = |m: &Move| match (m, &mv) {
            (Move::Normal { from: a, to: b, .. }, Move::Normal { from: c, to: d, .. }) => a == c && b == d,
            _ => false,
        };
        if pseudo.contains(&mv) {
            if self.repetition_illegal {
                "repeats an earlier position"
            } else {
                "leaves the king in check"
            }
        } else if pseudo.iter().any(same_squares) {
            if mv.is_promotion() {
                "this move may not promote"
            } else {
                "this piece must promote here"
            }
        } else {
            let _ = piece;
            "the piece cannot move like that"
        }
    }
}
