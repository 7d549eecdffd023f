//! Shared by the trainer's tests: a short game from the start position as training
//! samples; a learner's options and chunks ([`learner`]).

pub mod learner;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use rules::{Position, Variant};

/// `n` samples of one game: at ply `i` the `(i * stride)`-th legal move is played and is
/// the policy target; `result(i)` is the sample's value target, `root_wdl` its search
/// value.
pub fn game_samples(n: usize, stride: usize, result: impl Fn(usize) -> GameResult, root_wdl: [f32; 3]) -> Vec<Sample> {
    let enc = Encoder::new(Variant::Shogi);
    let mut pos = Position::startpos(Variant::Shogi);
    let mut out = Vec::new();
    for i in 0..n {
        let moves = pos.legal_moves();
        let mv = moves[(i * stride) % moves.len()];
        out.push(Sample {
            sfen: pos.to_sfen(),
            repetitions: 0,
            policy: vec![(enc.move_index(&pos, mv) as u32, 1.0)],
            result: Some(result(i)),
            root_wdl,
            plies_left: (n - i) as u32,
            full_search: true,
            aux: dataio::AuxTargets::default(),
        });
        pos.play(mv);
    }
    out
}
