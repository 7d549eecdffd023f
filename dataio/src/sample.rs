//! The training sample and its game result.

use rules::{Color, Position, Variant};

use crate::error::SampleError;

/// The game result from the side to move's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    Win,
    Draw,
    Loss,
}

impl GameResult {
    /// +1 win, 0 draw, -1 loss (the stored byte, as i8).
    pub fn to_i8(self) -> i8 {
        match self {
            GameResult::Win => 1,
            GameResult::Draw => 0,
            GameResult::Loss => -1,
        }
    }

    pub fn from_i8(v: i8) -> Option<GameResult> {
        match v {
            1 => Some(GameResult::Win),
            0 => Some(GameResult::Draw),
            -1 => Some(GameResult::Loss),
            _ => None,
        }
    }

    /// The result of a game that `winner` won (`None`: a draw) for the side `side`.
    pub fn for_side(winner: Option<Color>, side: Color) -> GameResult {
        match winner {
            None => GameResult::Draw,
            Some(c) if c == side => GameResult::Win,
            Some(_) => GameResult::Loss,
        }
    }

    /// The winner of a game with this result for the side `side` (`None`: a draw).
    pub fn winner(self, side: Color) -> Option<Color> {
        match self {
            GameResult::Win => Some(side),
            GameResult::Loss => Some(side.opponent()),
            GameResult::Draw => None,
        }
    }

    /// The same result seen by the other player.
    pub fn flip(self) -> GameResult {
        match self {
            GameResult::Win => GameResult::Loss,
            GameResult::Draw => GameResult::Draw,
            GameResult::Loss => GameResult::Win,
        }
    }

    /// One-hot (win, draw, loss) target.
    pub fn wdl(self) -> [f32; 3] {
        match self {
            GameResult::Win => [1.0, 0.0, 0.0],
            GameResult::Draw => [0.0, 1.0, 0.0],
            GameResult::Loss => [0.0, 0.0, 1.0],
        }
    }
}

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position as SFEN (board, side to move, hands, move number); the move number
    /// feeds the encoder's progress plane.
    pub sfen: String,
    /// How many times this position (board, hands, side to move) occurred before in the
    /// game, capped at 255 ([`rules::Position::repetitions`]); the SFEN cannot carry it and
    /// the encoder's repetition planes need it (koma-nn's `encode_sample`).
    pub repetitions: u8,
    /// The policy target: (policy label of a legal move in the variant's encoder,
    /// probability). Labels are distinct; moves with probability 0 are left out.
    /// Probabilities are stored quantised to 1/65535 and sum to 1 (within that step).
    pub policy: Vec<(u32, f32)>,
    /// The game result from the side to move's view; `None` when it is unknown (a game
    /// record without a result): the sample then has no value target.
    pub result: Option<GameResult>,
    /// The search's value at the root: (win, draw, loss) from the side to move's view.
    pub root_wdl: [f32; 3],
    /// Plies from this position to the end of the game (0: the game ended here, which
    /// self-play never records).
    pub plies_left: u32,
    /// The move got a full search (playout cap randomization): its policy target is a
    /// training target. `false`: a cheap search; train the value only.
    pub full_search: bool,
    /// Targets from later in the same game (KataGo's auxiliary targets); absent in chunks
    /// of format version 2 and older, in converted records and where the game gives none.
    pub aux: AuxTargets,
}

/// A sample's auxiliary targets: what happened later in its game (Wu 2019, "Accelerating
/// Self-Play Learning in Go", sections 4.1 and 4.2). Each is absent (empty, `None`) when
/// the sample's source does not know it; learners then mask that target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuxTargets {
    /// The opponent's reply policy: the policy target of the next position of the game
    /// (same labels and rules as [`Sample::policy`]), when that position got a full
    /// search; empty otherwise (the last move, a cheap search, no policy target).
    pub reply_policy: Vec<(u32, f32)>,
    /// The search's root (win, draw, loss) `k` plies later in the game (self-play's
    /// `selfplay.future_plies`), from this sample's side to move's view (win and loss
    /// swapped for odd `k`); the game's result from that view when the game ended within
    /// `k` plies.
    pub future_wdl: Option<[f32; 3]>,
    /// The static material balance ([`rules::material_balance`]) of the game's final
    /// position from this sample's side to move's view, in piece-value units (pawn 1).
    pub final_material: Option<f32>,
}

impl Sample {
    /// The position (without game history: [`rules::Position::repetitions`] of the result
    /// is 0; use [`Sample::repetitions`]).
    pub fn position(&self, variant: Variant) -> Result<Position, SampleError> {
        Position::from_sfen(variant, &self.sfen)
            .map_err(|e| SampleError::BadSample { index: None, reason: format!("SFEN `{}`: {e}", self.sfen) })
    }

    /// Dense policy target of `len` labels (zeros elsewhere).
    pub fn dense_policy(&self, len: usize) -> Vec<f32> {
        let mut v = vec![0.0; len];
        for &(l, p) in &self.policy {
            if (l as usize) < len {
                v[l as usize] = p;
            }
        }
        v
    }
}
