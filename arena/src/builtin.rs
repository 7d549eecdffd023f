//! Players that run in the arena's own process: the rules-only baselines of
//! [`baselines`](crate::baselines) (random, 1-ply material greedy) and koma checkpoints searched
//! with `search::Search` at fixed nodes or within the clock.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::baselines::{BaselinePlayer, GreedyMover, RandomMover};
use model::encoding::Encoder;
use model::{Evaluator, Precision};
use rules::{EndRules, Position, Variant};
use search::{Rng, Search, SearchConfig};

use crate::player::{Action, Fault, GoRequest, Player, TimeControl};

/// Simulations per move of a koma player when neither its spec nor the match fixes them
/// and there is no clock.
pub const DEFAULT_KOMA_NODES: u64 = 800;

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

#[derive(Debug, thiserror::Error)]
pub enum KomaLoadError {
    #[error(transparent)]
    Checkpoint(#[from] model::CheckpointError),
    #[error(transparent)]
    Device(#[from] model::DeviceError),
}

/// Reads the variant and training step a checkpoint or model file records (metadata only).
pub fn checkpoint_variant_and_step(path: &Path) -> Result<(Variant, u64), String> {
    let meta = model::read_model_meta(path).map_err(|e| e.to_string())?;
    Ok((meta.variant, meta.step))
}

/// A koma checkpoint: MCTS (`search::Search`, PUCT, no noise) over a torch network.
pub struct KomaPlayer {
    evaluator: Arc<dyn Evaluator>,
    encoder: Encoder,
    search: Search,
    rng: Rng,
    /// The training step of the checkpoint.
    pub step: u64,
}

impl KomaPlayer {
    pub fn load(path: &Path, device: &str, variant: Variant, seed: u64) -> Result<KomaPlayer, KomaLoadError> {
        let device = model::parse_device(device)?;
        let network = model::Network::load(path, &model::Expected::variant(variant), device, Precision::Auto)?;
        let step = network.meta.as_ref().map_or(0, |m| m.step);
        let search = Search::new(SearchConfig::default(), EndRules::default(), variant);
        Ok(KomaPlayer { evaluator: network.evaluator, encoder: network.encoder, search, rng: Rng::new(seed), step })
    }
}

/// Thinking time for one move under a clock: a fraction of what is left, never past
/// the deadline.
fn time_budget(req: &GoRequest<'_>) -> Option<Duration> {
    let c = req.clocks?;
    let me = req.pos.side_to_move().index();
    let main = c.remaining_ms[me];
    let ms = match req.limit {
        TimeControl::Byoyomi { .. } => main / 20 + c.byoyomi_ms * 8 / 10,
        TimeControl::Fischer { .. } => main / 30 + c.inc_ms * 8 / 10,
        _ => return None,
    };
    Some(Duration::from_millis(ms.max(1)))
}

impl Player for KomaPlayer {
    fn new_game(&mut self, _start: &Position) -> Result<(), Fault> {
        Ok(())
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        if req.pos.can_declare() {
            return Ok(Action::Declare);
        }
        let started = Instant::now();
        let (sims, budget) = match req.limit {
            TimeControl::Nodes(n) => (n.min(u32::MAX as u64) as u32, None),
            TimeControl::Depth(_) => (DEFAULT_KOMA_NODES as u32, None),
            _ => (u32::MAX, time_budget(req)),
        };
        self.search.start(req.pos, sims, false);
        let evaluator = &self.evaluator;
        self.search
            .run_until(
                &self.encoder,
                &mut self.rng,
                |_| budget.is_some_and(|b| started.elapsed() >= b),
                |input| {
                    let out = evaluator.evaluate(input, 1)?;
                    Ok((out.policy(0).to_vec(), out.wdl(0)))
                },
            )
            .map_err(|e: model::EvalError| Fault::Crash(e.to_string()))?;
        match self.search.choose_move(0.0, &mut self.rng) {
            Some(mv) => Ok(Action::Move(mv)),
            None => Ok(Action::Resign),
        }
    }
}
