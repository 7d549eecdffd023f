//! Players that run in the arena's own process: the rules-only baselines of
//! [`baselines`](crate::baselines) (random, 1-ply material greedy) and koma networks
//! ([`crate::koma`], re-exported here).

use crate::baselines::{BaselinePlayer, GreedyMover, RandomMover};
use rules::Position;
use search::Rng;

use crate::player::{Action, Fault, GoRequest, Player};

pub use crate::koma::{
    checkpoint_variant_and_step, KomaConfig, KomaLoadError, KomaNetwork, KomaPlayer, DEFAULT_KOMA_NODES,
};

/// `random` or `greedy`.
pub struct Baseline {
    inner: Box<dyn BaselinePlayer>,
    rng: Rng,
}

impl Baseline {
    pub fn random(seed: u64) -> Baseline {
        Baseline { inner: Box::new(RandomMover), rng: Rng::new(seed) }
    }
    pub fn greedy(seed: u64) -> Baseline {
        Baseline { inner: Box::new(GreedyMover::default()), rng: Rng::new(seed) }
    }
}

impl Player for Baseline {
    fn new_game(&mut self, _start: &Position) -> Result<(), Fault> {
        Ok(())
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        if req.pos.can_declare() {
            return Ok(Action::Declare);
        }
        match self.inner.choose(req.pos, &mut self.rng) {
            Some(mv) => Ok(Action::Move(mv)),
            None => Ok(Action::Resign),
        }
    }
}
