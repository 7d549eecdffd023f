//! The shape of a network's inputs and outputs, fixed by a variant's encoder.

use serde::{Deserialize, Serialize};

/// Number of value outputs: win, draw, loss, from the side to move's view.
pub const WDL_LEN: usize = 3;

/// Input and output sizes of a network. Set by the variant's encoder (standard shogi:
/// 9x9 board; sho shogi 9x9; dai shogi 15x15), stored in every checkpoint.
///
/// Memory layouts (row-major, one position after another in a batch):
/// - input: `[input_planes][board_height][board_width]` f32, index
///   `plane * squares + rank * board_width + file` (`squares = board_height * board_width`);
/// - policy logits: `[policy_planes][board_height][board_width]`, same indexing, so a move
///   is (plane, square); what a plane means is the encoder's business;
/// - value: `WDL_LEN` = 3 numbers (win, draw, loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetShape {
    /// Feature planes of one position (AlphaZero shogi: 362; dlshogi: 62 + 57).
    pub input_planes: usize,
    /// Board ranks (9 for shogi and sho shogi, 15 for dai shogi).
    pub board_height: usize,
    /// Board files.
    pub board_width: usize,
    /// Move planes per square of the policy head (AlphaZero shogi: 139; dlshogi: 27).
    pub policy_planes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("network shape field `{0}` must be at least 1")]
    Zero(&'static str),
    #[error("network shape is too large ({0} values per position)")]
    TooLarge(usize),
}

impl NetShape {
    /// Squares on the board (`board_height * board_width`).
    pub fn squares(&self) -> usize {
        self.board_height * self.board_width
    }

    /// f32 values per encoded position.
    pub fn input_len(&self) -> usize {
        self.input_planes * self.squares()
    }

    /// Policy logits per position.
    pub fn policy_len(&self) -> usize {
        self.policy_planes * self.squares()
    }

    /// Rejects empty dimensions and absurd sizes (which would overflow `i64` tensor dims).
    pub fn validate(&self) -> Result<(), ShapeError> {
        for (name, v) in [
            ("input_planes", self.input_planes),
            ("board_height", self.board_height),
            ("board_width", self.board_width),
            ("policy_planes", self.policy_planes),
        ] {
            if v == 0 {
                return Err(ShapeError::Zero(name));
            }
        }
        let big = self.input_len().max(self.policy_len());
        if self.board_height > 64 || self.board_width > 64 || big > (1 << 24) {
            return Err(ShapeError::TooLarge(big));
        }
        Ok(())
    }
}

impl std::fmt::Display for NetShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} planes x {}x{} -> {} policy planes",
            self.input_planes, self.board_height, self.board_width, self.policy_planes
        )
    }
}
