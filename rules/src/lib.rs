//! The rules of standard shogi, sho shogi and dai shogi as data over one
//! move generator: positions, moves, SFEN and USI text, game end, perft; and [`score`],
//! the centipawn <-> win-probability curve that engines and data files speak.
//!
//! ```
//! use rules::{Position, Variant};
//! let mut pos = Position::startpos(Variant::Shogi);
//! assert_eq!(pos.legal_moves().len(), 30);
//! pos.play_usi("7g7f").unwrap();
//! assert_eq!(pos.to_sfen(), "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2");
//! ```

mod bitboard;
mod decimal;
mod excerpt;
mod handicap;
mod material;
mod movegen;
mod moves;
mod notation;
mod outcome;
mod perft;
mod position;
mod quiescence;
pub mod records;
pub mod score;
mod sfen;
mod types;
mod usi;
mod variant;
mod xboard;
mod zobrist;

pub use excerpt::{excerpt, Excerpt, EXCERPT_CHARS};
pub use handicap::{Handicap, UnknownHandicap};
pub use material::{material_balance, material_win_probability, piece_value, MATERIAL_SCALE};
pub use moves::{Move, UsiMove, UsiMoveError};
pub use notation::{
    parse_position_command, parse_position_with, parse_tsume_position_command, Notation, PositionCommandError,
    UnknownNotation,
};
pub use outcome::{EndCause, EndRules, ImpasseRule, Outcome, Reason, UnknownImpasseRule};
pub use perft::{divide, perft};
pub use position::{Position, Undo};
pub use quiescence::{quiescent_balance, QuiescenceLimits, WIN_SCORE};
pub use sfen::{piece_code, Setup, SfenError, MAX_MOVE_NUMBER};
pub use types::{rank_letter, Color, Kind, Piece, Square, MAX_SIZE};
pub use usi::MoveError;
pub use variant::{KindSpec, Leg, LionPower, Movement, PromotionRule, RoyalRule, UnknownVariant, Variant, VariantSpec};
pub use xboard::{parse_square as xboard_parse_square, square_name as xboard_square_name, XboardError, XboardMove};
