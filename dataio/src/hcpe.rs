//! dlshogi's hcpe and hcpe3 records (`rules::records::hcpe`) and koma's samples, both ways;
//! YaneuraOu's psv records (`rules::records::psv`) to samples.
//!
//! A record's eval (a psv record's score) becomes the sample's root value on dlshogi's scale
//! ([`DLSHOGI_EVAL_SCALE`]) and back. Moves and policy labels are mapped by the caller's
//! encoder (koma-model's `Encoder`: `move_index`, `index_move_among`), which this crate
//! does not know.

use rules::records::hcpe::{self, hcpe3};
use rules::records::psv;
use rules::{Color, Move, Position, Variant};

use crate::sample::{GameResult, Sample};
use rules::score::{centipawns, wdl_of_win_probability, win_probability, win_probability_of_wdl, DLSHOGI_EVAL_SCALE};

/// Visits a sample's policy is scaled to as hcpe3 candidates.
pub const HCPE3_VISITS: f32 = 10000.0;

/// Why a sample cannot be an hcpe3 game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HcpeFault {
    #[error("SFEN `{sfen}` is not a shogi position: {why}")]
    BadSfen { sfen: String, why: String },
    #[error("policy label {label} is not a legal move of {sfen}")]
    IllegalLabel { label: u32, sfen: String },
    #[error("an empty policy target")]
    EmptyPolicy,
    #[error("the game's result is unknown (hcpe3 has no such result)")]
    UnknownResult,
}

/// The sample of an hcpe record: the best move as the policy target; `label` is the
/// encoder's label of a legal move.
pub fn hcpe_sample(entry: &hcpe::Entry, label: impl Fn(&Position, Move) -> u32) -> Sample {
    let policy = vec![(label(&entry.position, entry.best_move), 1.0)];
    scored_sample(&entry.position, policy, entry.eval, entry.result.winner(), 0)
}

/// The sample of a psv record, as [`hcpe_sample`]'s: the best move as the policy target,
/// the score in the value target as an hcpe eval is (on dlshogi's scale), with the result.
pub fn psv_sample(entry: &psv::Entry, label: impl Fn(&Position, Move) -> u32) -> Sample {
    let policy = vec![(label(&entry.position, entry.best_move), 1.0)];
    scored_sample(&entry.position, policy, entry.score, entry.winner(), 0)
}

/// The samples of an hcpe3 game: the policy target is the visit distribution of the
/// candidates. A move without candidates is no policy target (dlshogi's meaning: an
/// opponent's move, an opening move, a cheap search's): its sample keeps the move played
/// as its policy but trains the value only (`full_search` false).
pub fn hcpe3_samples(game: &hcpe3::Game, label: impl Fn(&Position, Move) -> u32) -> Vec<Sample> {
    let total = game.moves.len() as u32;
    let winner = game.result.winner();
    let mut out = Vec::with_capacity(game.moves.len());
    let mut ply = 0u32;
    game.replay(|pos, m| {
        let visits: u32 = m.candidates.iter().map(|&(_, v)| v as u32).sum();
        let full_search = visits > 0;
        let policy = if !full_search {
            vec![(label(pos, m.mv), 1.0)]
        } else {
            m.candidates
                .iter()
                .filter(|&&(_, v)| v > 0)
                .map(|&(mv, v)| (label(pos, mv), v as f32 / visits as f32))
                .collect()
        };
        let mut sample = scored_sample(pos, policy, m.eval, winner, total - ply);
        sample.full_search = full_search;
        out.push(sample);
        ply += 1;
    });
    out
}

/// A sample whose value target mixes the result with the eval (side to move's view).
fn scored_sample(pos: &Position, policy: Vec<(u32, f32)>, eval: i16, winner: Option<Color>, plies_left: u32) -> Sample {
    let result = GameResult::for_side(winner, pos.side_to_move());
    Sample {
        sfen: pos.to_sfen(),
        repetitions: pos.repetitions().min(255) as u8,
        policy,
        result: Some(result),
        root_wdl: wdl_of_win_probability(win_probability(eval as f64, DLSHOGI_EVAL_SCALE)),
        plies_left,
        full_search: true,
        aux: crate::AuxTargets::default(),
    }
}

/// One (standard shogi) sample as a one-move hcpe3 game: the policy target as candidate
/// visit counts (out of [`HCPE3_VISITS`]), the root value as the eval and the game's
/// result. A cheap search's sample (no policy target, `full_search` false) has no
/// candidates, its policy's first move as the move: dlshogi then trains no policy on it.
/// `move_of` is the encoder's legal move of a label among the legal moves.
pub fn sample_game(
    s: &Sample,
    move_of: impl Fn(&Position, u32, &[Move]) -> Option<Move>,
) -> Result<hcpe3::Game, HcpeFault> {
    let pos = Position::from_sfen(Variant::Shogi, &s.sfen)
        .map_err(|e| HcpeFault::BadSfen { sfen: s.sfen.clone(), why: e.to_string() })?;
    let legal = pos.legal_moves();
    let mut candidates = Vec::with_capacity(s.policy.len());
    for &(label, p) in &s.policy {
        let mv = move_of(&pos, label, &legal).ok_or_else(|| HcpeFault::IllegalLabel { label, sfen: s.sfen.clone() })?;
        let visits = (p * HCPE3_VISITS).round() as u16;
        if visits > 0 {
            candidates.push((mv, visits));
        }
    }
    let mv = candidates.iter().max_by_key(|c| c.1).map(|c| c.0).ok_or(HcpeFault::EmptyPolicy)?;
    if !s.full_search {
        candidates.clear();
    }
    let winner = s.result.ok_or(HcpeFault::UnknownResult)?.winner(pos.side_to_move());
    Ok(hcpe3::Game {
        start: pos,
        moves: vec![hcpe3::MoveEntry { mv, eval: eval_of(s.root_wdl), candidates }],
        result: hcpe::GameResult::from_winner(winner),
        ending: hcpe3::Ending::Unmarked,
        opponent: hcpe3::Opponent::SelfPlay,
    })
}

/// The root value (draws counting half) as a dlshogi eval: the probability kept within
/// [1e-4, 1 - 1e-4], the eval within +-32000.
pub fn eval_of(wdl: [f32; 3]) -> i16 {
    let p = win_probability_of_wdl(wdl).clamp(1e-4, 1.0 - 1e-4);
    centipawns(p, DLSHOGI_EVAL_SCALE).round().clamp(-32000.0, 32000.0) as i16
}
