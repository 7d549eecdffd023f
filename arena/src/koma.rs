//! koma networks as players: MCTS (`search::Search`, PUCT, no noise) over a network whose
//! leaves are evaluated in batches with virtual loss, as the engine does
//! ([`Search::run_batched`]). The network is evaluated in the player's thread, or through
//! a batching service ([`model::Batcher`]) shared by every game of a match, which merges
//! the leaves of many games into one forward pass. Under a clock the thinking time comes
//! from the engine's time management (`search::time`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use model::encoding::Encoder;
use model::tch::Device;
use model::{BatchError, Batcher, BatcherConfig, BatcherHandle, EvalSlot, Evaluation, Evaluator, Precision};
use rules::{EndRules, Position, Variant};
use search::time::{self, Clock};
use search::{BatchedRun, LeafEvaluator, Rng, Search, SearchConfig};

use crate::player::{Action, Fault, GoRequest, Player, TimeControl};

/// Simulations per move of a koma player when neither its spec nor the match fixes them
/// and there is no clock.
pub const DEFAULT_KOMA_NODES: u64 = 800;

/// Milliseconds kept back from a clock budget (the engine's `ByoyomiMargin` default).
const TIME_MARGIN_MS: u64 = 100;

/// How a koma player searches (player spec keys in brackets).
#[derive(Clone, Debug, PartialEq)]
pub struct KomaConfig {
    /// Search constants (`c_puct=1.5`, `gumbel=true`, ... any `[search]` field). Default:
    /// `SearchConfig::default()`, the engine's (PUCT).
    pub search: SearchConfig,
    /// Leaves per evaluation of one search thread (`batch=N`, 1..=4096). Default 16, the
    /// engine's `BatchSize`.
    pub batch_size: usize,
    /// Search threads on one tree, each with its own batch in flight (`threads=N`,
    /// 1..=256). Default 1 (a match runs several games at once instead).
    pub threads: usize,
}

impl Default for KomaConfig {
    fn default() -> Self {
        KomaConfig { search: SearchConfig::default(), batch_size: 16, threads: 1 }
    }
}

impl KomaConfig {
    /// Sets one `key=value` of a player spec: `batch`, `threads` or a `[search]` field.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let count = |max: usize| match value.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(format!("{key}={value}: expected a number from 1 to {max}")),
        };
        match key {
            "batch" => self.batch_size = count(4096)?,
            "threads" => self.threads = count(256)?,
            _ => {
                let mut table = serde_json::to_value(&self.search).map_err(|e| e.to_string())?;
                let fields = table.as_object_mut().expect("SearchConfig is a struct");
                if !fields.contains_key(key) {
                    return Err(format!("'{key}' is neither batch, threads, nodes, device nor a [search] field"));
                }
                let parsed = value.parse::<serde_json::Value>().unwrap_or_else(|_| value.into());
                fields.insert(key.to_string(), parsed);
                self.search = serde_json::from_value(table).map_err(|e| format!("{key}={value}: {e}"))?;
            }
        }
        Ok(())
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

/// Where a network's forward passes run.
#[derive(Clone)]
pub enum NetworkSource {
    /// In the searching thread.
    Direct(Arc<dyn Evaluator>),
    /// Through a batching service shared with other searches.
    Batched(BatcherHandle),
}

/// A network ready to play: its forward pass, the encoder of its input planes, its
/// training step. Cheap to clone (players of one match share it).
#[derive(Clone)]
pub struct KomaNetwork {
    pub source: NetworkSource,
    /// Shared: an encoder holds its lookup tables.
    pub encoder: Arc<Encoder>,
    pub step: u64,
}

impl KomaNetwork {
    /// Loads a checkpoint for `variant` onto `device` (`cpu`, `cuda`, `cuda:N`, `auto`).
    pub fn load(path: &Path, device: &str, variant: Variant) -> Result<KomaNetwork, KomaLoadError> {
        KomaNetwork::load_on(path, model::parse_device(device)?, variant)
    }

    /// [`KomaNetwork::load`] onto a torch device.
    pub fn load_on(path: &Path, device: Device, variant: Variant) -> Result<KomaNetwork, KomaLoadError> {
        let expected = model::Expected::variant(variant);
        Ok(KomaNetwork::from_network(model::Network::load(path, &expected, device, Precision::Auto)?))
    }

    /// A loaded network, evaluated in the searching thread.
    pub fn from_network(network: model::Network) -> KomaNetwork {
        let step = network.meta.as_ref().map_or(0, |m| m.step);
        KomaNetwork { source: NetworkSource::Direct(network.evaluator), encoder: Arc::new(network.encoder), step }
    }

    /// Starts a batching service for this network (forward passes of up to `max_batch`
    /// positions, gathered for at most `max_wait` after the first request; zero: whatever
    /// is queued runs at once) and returns it with the network that uses it. Keep the
    /// [`Batcher`] alive while players use the network. A network already behind a
    /// service is returned as it is, without a new one.
    pub fn batched(&self, max_batch: usize, max_wait: Duration, name: &str) -> (Option<Batcher>, KomaNetwork) {
        let NetworkSource::Direct(evaluator) = &self.source else { return (None, self.clone()) };
        let config = BatcherConfig { max_batch: max_batch.max(1), max_wait, thread_name: name.to_string() };
        let batcher = Batcher::spawn(evaluator.clone(), config);
        let net = KomaNetwork { source: NetworkSource::Batched(batcher.handle()), ..self.clone() };
        (Some(batcher), net)
    }
}

/// One search thread's way to the network.
enum NetSlot {
    Direct(Arc<dyn Evaluator>, Evaluation),
    Batched(EvalSlot),
}

impl LeafEvaluator for NetSlot {
    type Error = BatchError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, BatchError> {
        match self {
            NetSlot::Direct(ev, out) => {
                ev.evaluate_into(inputs, n, out)?;
                Ok(out)
            }
            NetSlot::Batched(slot) => LeafEvaluator::evaluate(slot, inputs, n),
        }
    }
}

/// A koma network searching with [`KomaConfig`].
pub struct KomaPlayer {
    network: KomaNetwork,
    config: KomaConfig,
    search: Search,
    slots: Vec<NetSlot>,
    rng: Rng,
    /// Totals over the player's searches.
    run: BatchedRun,
}

impl KomaPlayer {
    pub fn new(network: KomaNetwork, config: KomaConfig, variant: Variant, seed: u64) -> KomaPlayer {
        let slots = (0..config.threads.max(1))
            .map(|_| match &network.source {
                NetworkSource::Direct(ev) => NetSlot::Direct(ev.clone(), Evaluation::new()),
                NetworkSource::Batched(handle) => NetSlot::Batched(handle.slot()),
            })
            .collect();
        let search = Search::new(config.search.clone(), EndRules::default(), variant);
        KomaPlayer { network, config, search, slots, rng: Rng::new(seed), run: BatchedRun::default() }
    }

    /// The training step of the network.
    pub fn step(&self) -> u64 {
        self.network.step
    }

    /// Evaluator calls, leaves and the largest batch over all searches so far.
    pub fn batch_stats(&self) -> BatchedRun {
        self.run
    }
}

/// Thinking time for one move under a clock (the engine's time management).
fn time_budget(req: &GoRequest<'_>) -> Option<Duration> {
    let c = req.clocks?;
    let me = req.pos.side_to_move().index();
    let clock = Clock { time: Some(c.remaining_ms[me]), inc: c.inc_ms, byoyomi: c.byoyomi_ms, ..Clock::default() };
    time::budget(&clock, TIME_MARGIN_MS).map(|b| Duration::from_millis(b.soft))
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
        let stop = move |_: &Search| budget.is_some_and(|b| started.elapsed() >= b);
        let encoder = &self.network.encoder;
        let run = self
            .search
            .run_batched(encoder, &mut self.rng, self.config.batch_size, &stop, &mut self.slots)
            .map_err(|e| Fault::Crash(e.to_string()))?;
        self.run.batches += run.batches;
        self.run.leaves += run.leaves;
        self.run.largest_batch = self.run.largest_batch.max(run.largest_batch);
        match self.search.choose_move(0.0, &mut self.rng) {
            Some(mv) => Ok(Action::Move(mv)),
            None => Ok(Action::Resign),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::Clocks;

    fn uniform_network(variant: Variant) -> KomaNetwork {
        KomaNetwork::from_network(model::Network::uniform(variant))
    }

    /// Plays `plies` moves of a game with `player` on both sides; every move must be legal.
    fn play(player: &mut KomaPlayer, limit: TimeControl, clocks: Option<Clocks>, plies: usize) {
        let start = Position::startpos(Variant::Shogi);
        let mut pos = start.clone();
        let mut moves = Vec::new();
        player.new_game(&start).unwrap();
        for _ in 0..plies {
            let req = GoRequest {
                pos: &pos,
                start: &start,
                moves: &moves,
                limit,
                clocks,
                deadline: Instant::now() + Duration::from_secs(60),
            };
            let Action::Move(mv) = player.go(&req).unwrap() else { panic!("no move at {}", pos.to_sfen()) };
            assert!(pos.is_legal(mv), "{mv:?} in {}", pos.to_sfen());
            pos.play(mv);
            moves.push(mv);
        }
    }

    #[test]
    fn config_keys_set_the_search() {
        let mut c = KomaConfig::default();
        c.set("batch", "8").unwrap();
        c.set("virtual_loss", "2").unwrap();
        c.set("mate_search_plies", "1").unwrap();
        assert_eq!((c.batch_size, c.search.virtual_loss, c.search.mate_search_plies), (8, 2.0, 1));
        assert!(c.set("mate_search_plies", "-1").is_err());
        assert!(c.set("batch", "5000").is_err());
        assert!(c.set("no_such_field", "1").unwrap_err().contains("no_such_field"));
    }

    #[test]
    fn batched_search_plays_legal_moves_in_batches() {
        let net = uniform_network(Variant::Shogi);
        let config = KomaConfig { batch_size: 8, ..KomaConfig::default() };
        let mut p = KomaPlayer::new(net.clone(), config, Variant::Shogi, 1);
        play(&mut p, TimeControl::Nodes(64), None, 6);
        let s = p.batch_stats();
        assert!(s.largest_batch > 1 && s.largest_batch <= 8, "{s:?}");
        assert!(s.batches * 2 < s.leaves, "{s:?}");
        // Batch 1: one leaf per evaluation.
        let mut single = KomaPlayer::new(net, KomaConfig { batch_size: 1, ..KomaConfig::default() }, Variant::Shogi, 1);
        play(&mut single, TimeControl::Nodes(64), None, 4);
        assert_eq!(single.batch_stats().largest_batch, 1);
    }

    #[test]
    fn players_share_a_batching_service_and_keep_the_clock() {
        let (batcher, net) = uniform_network(Variant::Shogi).batched(64, Duration::ZERO, "test-batcher");
        let batcher = batcher.expect("a new service");
        let config = KomaConfig { batch_size: 4, threads: 2, ..KomaConfig::default() };
        std::thread::scope(|s| {
            for seed in 0..3 {
                let (net, config) = (net.clone(), config.clone());
                s.spawn(move || {
                    let mut p = KomaPlayer::new(net, config, Variant::Shogi, seed);
                    play(&mut p, TimeControl::Nodes(48), None, 4);
                    assert!(p.batch_stats().largest_batch > 1);
                });
            }
        });
        let stats = batcher.stats();
        assert!(stats.positions >= 3 * 4 * 40, "{stats:?}");
        // A byoyomi of 300 ms: every move within it.
        let mut p = KomaPlayer::new(net, config, Variant::Shogi, 9);
        let clocks = Clocks { remaining_ms: [0, 0], byoyomi_ms: 300, inc_ms: 0 };
        let t = Instant::now();
        play(&mut p, TimeControl::Byoyomi { ms: 300 }, Some(clocks), 3);
        assert!(t.elapsed() < Duration::from_millis(3 * 300), "{:?}", t.elapsed());
        drop(batcher);
    }
}
