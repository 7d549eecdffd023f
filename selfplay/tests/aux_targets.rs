//! The auxiliary targets of self-play samples (`dataio::AuxTargets`): real games behind a
//! real batcher, every sample's reply policy, future WDL and final material checked
//! against the game's other samples and its replayed final position.

use std::sync::Arc;

use dataio::{GameResult, Sample};
use model::encoding::Encoder;
use model::{Batcher, BatcherConfig, EvalError, Evaluation, Evaluator, NetShape};
use rules::{material_balance, Color, Position, Variant};
use selfplay::{run_selfplay, GameRecord, Openings, RunOptions, SelfplayFileConfig};

/// Uniform policy, and a WDL that differs from position to position (from the input
/// planes), so that the search's root WDL is lopsided and a missed flip of win and loss
/// shows.
struct VaryingValue {
    shape: NetShape,
}

impl Evaluator for VaryingValue {
    fn shape(&self) -> NetShape {
        self.shape
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        out.resize(batch, self.shape.policy_len());
        let (p, w) = out.buffers_mut();
        p.fill(0.0);
        for (i, planes) in inputs.chunks(self.shape.input_len()).enumerate() {
            let weighted: f32 = planes.iter().enumerate().map(|(j, &v)| v * ((j % 97) as f32)).sum();
            let win = 0.1 + 0.7 * (weighted * 0.013).fract();
            w[i * 3..i * 3 + 3].copy_from_slice(&[win, 0.1, 0.9 - win]);
        }
        Ok(())
    }
}

fn play(future_plies: u32) -> Vec<GameRecord> {
    let mut cfg = SelfplayFileConfig::default();
    let sp = &mut cfg.selfplay;
    sp.workers = 1;
    sp.games_per_worker = 2;
    sp.simulations_full = 16;
    sp.simulations_cheap = 4;
    sp.full_search_fraction = 0.5;
    sp.max_plies = 40;
    sp.random_opening_plies = 6;
    sp.resign_threshold = -1.0;
    sp.future_plies = future_plies;
    sp.seed = 11;
    let enc = Encoder::new(Variant::Shogi);
    let eval: Arc<dyn Evaluator> = Arc::new(VaryingValue { shape: enc.net_shape() });
    let batcher = Batcher::spawn(eval, BatcherConfig { max_batch: 4, ..BatcherConfig::default() });
    let mut games = Vec::new();
    let openings = Openings::startpos(Variant::Shogi);
    run_selfplay(&cfg, batcher.handle(), &openings, &RunOptions::games(3), |g| games.push(g), |_| {}).unwrap();
    games
}

fn side(s: &Sample) -> Color {
    Position::from_sfen(Variant::Shogi, &s.sfen).unwrap().side_to_move()
}

/// The game's last position: its start with every move played.
fn final_position(game: &GameRecord) -> Position {
    let mut pos = Position::from_sfen(Variant::Shogi, &game.start_sfen).unwrap();
    for m in &game.moves {
        pos.play_usi(m).unwrap();
    }
    pos
}

#[test]
fn samples_carry_the_reply_policy_the_future_wdl_and_the_final_material() {
    let k = 3;
    let mut flipped = 0;
    for game in play(k) {
        let samples = &game.samples;
        assert_eq!(samples.len(), game.moves.len(), "one sample a ply");
        let last = final_position(&game);
        for (i, s) in samples.iter().enumerate() {
            let aux = &s.aux;
            match samples.get(i + 1) {
                Some(next) if next.full_search => assert_eq!(aux.reply_policy, next.policy, "sample {i}"),
                _ => assert!(aux.reply_policy.is_empty(), "sample {i}: {:?}", aux.reply_policy),
            }
            let expected = match samples.get(i + k as usize) {
                // An odd horizon: the other side is to move there.
                Some(later) => {
                    assert_ne!(side(later), side(s));
                    flipped += usize::from(later.root_wdl[0] != later.root_wdl[2]);
                    [later.root_wdl[2], later.root_wdl[1], later.root_wdl[0]]
                }
                None => GameResult::for_side(game.end.winner, side(s)).wdl(),
            };
            assert_eq!(aux.future_wdl, Some(expected), "sample {i} of {}", samples.len());
            assert_eq!(aux.final_material, Some(material_balance(&last, side(s)) as f32), "sample {i}");
        }
    }
    assert!(flipped > 0, "no lopsided root WDL: the flip is untested");
}

#[test]
fn an_even_horizon_keeps_the_view() {
    for game in play(2) {
        let samples = &game.samples;
        for (i, s) in samples.iter().enumerate() {
            let expected = match samples.get(i + 2) {
                Some(later) => later.root_wdl,
                None => GameResult::for_side(game.end.winner, side(s)).wdl(),
            };
            assert_eq!(s.aux.future_wdl, Some(expected), "sample {i}");
        }
    }
}
