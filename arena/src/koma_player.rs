//! koma networks as players, searching with the engine's search (`search::driver`, the
//! same as `koma-usi`: PUCT without noise, several leaves per evaluation with virtual
//! loss, the root mate-in-3 scan, the tree kept from move to move within a game). The
//! network is evaluated in the player's threads, or through a batching service
//! ([`nn::Batcher`]) shared by every game of a match, which merges the leaves of many
//! games into one forward pass. Under a clock the thinking time and the early stops
//! (a single legal move, a decided search) are the engine's (`search::time`,
//! `search::stop`).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nn::encoding::Encoder;
use nn::{Backend, BatchError, Batcher, BatcherConfig, BatcherHandle, EvalSlot, Evaluation};
use rules::{EndRules, Position, Variant};
use search::driver::{self, Settings};
use search::time::{self, Clock};
use search::{BatchStats, ChildInfo, Control, DirectEvaluator, LeafEvaluator, Limits, PlayerTree, SearchConfig};

use crate::player::{Action, EngineScore, Fault, GoRequest, Player, TimeControl};

/// Simulations per move of a koma player when neither its spec nor the match fixes them
/// and there is no clock.
pub const DEFAULT_KOMA_NODES: u64 = 800;

/// Milliseconds kept back from a clock budget (the engine's `ByoyomiMargin` default).
const TIME_MARGIN_MS: u64 = 100;

/// How a koma player searches (player spec keys in brackets).
#[derive(Clone, Debug, PartialEq)]
pub struct KomaConfig {
    /// Search constants (`c_puct=1.5`, `max_tree_mib=64`, ... any `[search]` field but a
    /// Gumbel root, see [`KomaConfig::check`]). Default: `SearchConfig::for_play()`, the
    /// engine's (PUCT, `c_puct` 0.8).
    pub search: SearchConfig,
    /// Leaves per evaluation of one search thread (`batch=N`, 1..=4096). Default 16, the
    /// engine's `BatchSize`.
    pub batch_size: usize,
    /// Search threads on one tree, each with its own batch in flight (`threads=N`,
    /// 1..=256). Default 1 (a match runs several games at once instead).
    pub threads: usize,
    /// Which of the search's leaf material fields the player takes from its network's
    /// record of the setting it was trained with ([`model::LeafMaterial`]) rather than
    /// from `search`: by default both, and a spec key (`leaf_material_mix=`,
    /// `leaf_material_scale=`) takes its own field back. A network that records nothing
    /// leaves `search` as it is.
    pub from_network: FromNetwork,
}

impl Default for KomaConfig {
    fn default() -> Self {
        KomaConfig { search: SearchConfig::for_play(), batch_size: 16, threads: 1, from_network: FromNetwork::BOTH }
    }
}

/// Which leaf material fields of a koma player's search come from its network's record
/// ([`KomaConfig::from_network`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FromNetwork {
    /// `leaf_material_mix`.
    pub mix: bool,
    /// `leaf_material_scale`.
    pub scale: bool,
}

impl FromNetwork {
    /// Both: the default of a player spec.
    pub const BOTH: FromNetwork = FromNetwork { mix: true, scale: true };
    /// Neither: the search exactly as given.
    pub const NONE: FromNetwork = FromNetwork { mix: false, scale: false };
}

/// A koma player's setting that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KomaConfigError {
    #[error("{key}={value}: expected a number from 1 to {max}")]
    Count { key: String, value: String, max: usize },
    #[error("'{0}' is neither batch, threads, nodes, device nor a [search] field")]
    UnknownKey(String),
    #[error("{key}={value}: {why}")]
    BadValue { key: String, value: String, why: String },
    /// Play searches with the engine's PUCT root; the Gumbel root is self-play's.
    #[error(
        "gumbel=true: koma players search as the engine does, with a PUCT root (the Gumbel root is self-play's); \
         leave gumbel out"
    )]
    GumbelRoot,
}

impl KomaConfig {
    /// Sets one `key=value` of a player spec: `batch`, `threads` or a `[search]` field.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), KomaConfigError> {
        let count = |max: usize| match value.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(KomaConfigError::Count { key: key.into(), value: value.into(), max }),
        };
        let bad = |why: String| KomaConfigError::BadValue { key: key.into(), value: value.into(), why };
        match key {
            "batch" => self.batch_size = count(4096)?,
            "threads" => self.threads = count(256)?,
            _ => {
                let mut table = serde_json::to_value(&self.search).map_err(|e| bad(e.to_string()))?;
                let fields = table.as_object_mut().expect("SearchConfig is a struct");
                if !fields.contains_key(key) {
                    return Err(KomaConfigError::UnknownKey(key.into()));
                }
                let parsed = value.parse::<serde_json::Value>().unwrap_or_else(|_| value.into());
                fields.insert(key.to_string(), parsed);
                let search = serde_json::from_value(table).map_err(|e| bad(e.to_string()))?;
                let mut candidate = KomaConfig { search, ..self.clone() };
                candidate.check()?;
                // Given here, so not the network's.
                match key {
                    "leaf_material_mix" => candidate.from_network.mix = false,
                    "leaf_material_scale" => candidate.from_network.scale = false,
                    _ => {}
                }
                *self = candidate;
            }
        }
        Ok(())
    }

    /// The search a player of a network with metadata `meta` runs: `search`, with the leaf
    /// material fields that [`KomaConfig::from_network`] names taken from the network's
    /// record when it has one.
    pub fn search_for(&self, meta: Option<&nn::ModelMeta>) -> SearchConfig {
        let record = meta.and_then(|m| m.leaf_material);
        self.search.clone().with_leaf_material_of(record, self.from_network.mix, self.from_network.scale)
    }

    /// For reports: the leaf material setting a player of the network at `checkpoint` takes
    /// from the network's record (the spec shows only its own fields); `None` when it
    /// takes nothing (no record, the spec's keys override it, or the file is unreadable).
    pub fn leaf_material_note(&self, checkpoint: &std::path::Path) -> Option<String> {
        if !self.from_network.mix && !self.from_network.scale {
            return None;
        }
        let meta = nn::read_model_meta(checkpoint).ok()?;
        meta.leaf_material?;
        let search = self.search_for(Some(&meta));
        let mix = self.from_network.mix.then(|| format!("mix {}", search.leaf_material_mix));
        let scale = self.from_network.scale.then(|| format!("scale {}", search.leaf_material_scale));
        let taken: Vec<String> = mix.into_iter().chain(scale).collect();
        Some(format!("leaf material from the network: {}", taken.join(", ")))
    }

    /// Whether the player can search with these settings: its search is the engine's,
    /// whose root is PUCT, so a Gumbel root (`gumbel = true`) is refused rather than
    /// silently played as PUCT.
    pub fn check(&self) -> Result<(), KomaConfigError> {
        if self.search.gumbel {
            return Err(KomaConfigError::GumbelRoot);
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KomaLoadError {
    #[error(transparent)]
    Checkpoint(#[from] nn::CheckpointError),
    #[error(transparent)]
    Backend(#[from] nn::BackendError),
    #[cfg(feature = "torch")]
    #[error(transparent)]
    Device(#[from] model::DeviceError),
}

/// libtorch, when this build has it.
pub fn torch_backend() -> Option<&'static nn::TorchBackend> {
    #[cfg(feature = "torch")]
    return Some(&model::TORCH_BACKEND);
    #[cfg(not(feature = "torch"))]
    None
}

/// Reads the variant and training step a checkpoint or model file records (metadata only).
pub fn checkpoint_variant_and_step(path: &Path) -> Result<(Variant, u64), nn::CheckpointError> {
    let meta = nn::read_model_meta(path)?;
    Ok((meta.variant, meta.step))
}

/// A network ready to play: a [`nn::Network`], and the batching service its leaves
/// go through when it has one. Cheap to clone (players of one match share it).
#[derive(Clone)]
pub struct KomaNetwork {
    pub network: Arc<nn::Network>,
    /// The network's encoder, shared by every search thread of every player (an encoder
    /// holds its lookup tables: built once, not per game).
    pub encoder: Arc<Encoder>,
    /// `None`: evaluated in the searching threads.
    pub service: Option<BatcherHandle>,
}

impl KomaNetwork {
    /// Loads a checkpoint for `variant` onto `device` (`cpu`, `cuda`, `cuda:N`, `auto`)
    /// with the backend `auto` picks there ([`nn::resolve`]).
    pub fn load(path: &Path, device: &str, variant: Variant) -> Result<KomaNetwork, KomaLoadError> {
        KomaNetwork::load_with(path, Backend::Auto, device, variant)
    }

    /// [`KomaNetwork::load`] on a chosen backend.
    pub fn load_with(
        path: &Path,
        backend: Backend,
        device: &str,
        variant: Variant,
    ) -> Result<KomaNetwork, KomaLoadError> {
        let expected = nn::Expected::variant(variant);
        let (network, _, _) = nn::load_network(path, &expected, backend, &[device], torch_backend())?;
        Ok(KomaNetwork::from_network(network))
    }

    /// [`KomaNetwork::load`] onto a torch device (the trainer's evaluation): libtorch on a
    /// GPU; on the CPU the backend koma-usi's `auto` takes there (the portable one), whose
    /// forward passes also run side by side in several threads (libtorch's evaluator
    /// takes one at a time).
    #[cfg(feature = "torch")]
    pub fn load_on(path: &Path, device: model::tch::Device, variant: Variant) -> Result<KomaNetwork, KomaLoadError> {
        if device == model::tch::Device::Cpu {
            return KomaNetwork::load_with(path, Backend::Auto, "cpu", variant);
        }
        let expected = nn::Expected::variant(variant);
        let network = model::load_torch_network(path, &expected, device, model::Precision::Auto)?;
        Ok(KomaNetwork::from_network(network))
    }

    /// A loaded network, evaluated in the searching threads.
    pub fn from_network(network: nn::Network) -> KomaNetwork {
        let encoder = Arc::new(network.encoder.clone());
        KomaNetwork { network: Arc::new(network), encoder, service: None }
    }

    /// The training step of the network (0 without metadata).
    pub fn step(&self) -> u64 {
        self.network.meta.as_ref().map_or(0, |m| m.step)
    }

    /// Starts a batching service for this network (forward passes of up to `max_batch`
    /// positions, gathered for at most `max_wait` after the first request; zero: whatever
    /// is queued runs at once) and returns it with the network that uses it. Keep the
    /// [`Batcher`] alive while players use the network. A network already behind a
    /// service is returned as it is, without a new one.
    pub fn batched(&self, max_batch: usize, max_wait: Duration, name: &str) -> (Option<Batcher>, KomaNetwork) {
        if self.service.is_some() {
            return (None, self.clone());
        }
        let config = BatcherConfig { max_batch: max_batch.max(1), max_wait, thread_name: name.to_string() };
        let batcher = Batcher::spawn(self.network.evaluator.clone(), config);
        let net = KomaNetwork { service: Some(batcher.handle()), ..self.clone() };
        (Some(batcher), net)
    }

    /// One search thread's way to the network.
    fn slot(&self) -> NetSlot {
        match &self.service {
            None => NetSlot::Direct(DirectEvaluator::new(self.network.evaluator.clone())),
            Some(handle) => NetSlot::Batched(handle.slot()),
        }
    }
}

/// One search thread's way to the network: a forward pass in the thread, or a request to
/// the batching service.
enum NetSlot {
    Direct(DirectEvaluator),
    Batched(EvalSlot),
}

impl LeafEvaluator for NetSlot {
    type Error = BatchError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, BatchError> {
        match self {
            NetSlot::Direct(ev) => Ok(ev.evaluate(inputs, n)?),
            NetSlot::Batched(slot) => LeafEvaluator::evaluate(slot, inputs, n),
        }
    }
}

/// A koma network searching with [`KomaConfig`].
pub struct KomaPlayer {
    network: KomaNetwork,
    config: KomaConfig,
    /// The game's tree, kept from move to move (reset by [`Player::new_game`]).
    tree: Arc<Mutex<PlayerTree>>,
    /// One per search thread.
    slots: Vec<NetSlot>,
    /// Totals over the player's searches.
    batches: BatchStats,
    /// The root's moves at the end of the last search.
    last_root: Vec<ChildInfo>,
    /// The last search's score of its move (as koma-usi reports it).
    last_score: Option<EngineScore>,
}

impl KomaPlayer {
    /// A player of `variant`. The search has no randomness (no root noise): with one
    /// thread, a position and its game history give the same move every time. Its leaf
    /// material setting is the network's record where the config leaves it to the network
    /// ([`KomaConfig::search_for`]).
    pub fn new(network: KomaNetwork, config: KomaConfig, variant: Variant) -> Result<KomaPlayer, KomaConfigError> {
        config.check()?;
        let config = KomaConfig { search: config.search_for(network.network.meta.as_ref()), ..config };
        let tree = PlayerTree::new(config.search.clone(), EndRules::default(), &Position::startpos(variant));
        let mut player = KomaPlayer {
            network,
            config,
            tree: Arc::new(Mutex::new(tree)),
            slots: Vec::new(),
            batches: BatchStats::default(),
            last_root: Vec::new(),
            last_score: None,
        };
        player.refill_slots();
        Ok(player)
    }

    /// The training step of the network.
    pub fn step(&self) -> u64 {
        self.network.step()
    }

    /// The search the player runs (its config's, with the network's leaf material
    /// setting where the config leaves it to the network).
    pub fn search(&self) -> &SearchConfig {
        &self.config.search
    }

    /// Evaluator calls, leaves and the largest batch over all searches so far.
    pub fn batch_stats(&self) -> BatchStats {
        self.batches
    }

    /// The root's moves with their statistics at the end of the last search, in move
    /// generation order (empty before the first).
    pub fn last_root(&self) -> &[ChildInfo] {
        &self.last_root
    }

    /// One slot per thread (a thread that panicked took its slot with it).
    fn refill_slots(&mut self) {
        while self.slots.len() < self.config.threads.max(1) {
            self.slots.push(self.network.slot());
        }
    }

    fn lock_tree(&self) -> std::sync::MutexGuard<'_, PlayerTree> {
        self.tree.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The limits of one move: a node budget, or the engine's time management under a clock.
fn limits(req: &GoRequest<'_>, started: Instant) -> Limits {
    let nodes = |n: u64| Limits { nodes: Some(n), ..Limits::default() };
    match req.limit {
        TimeControl::Nodes(n) => nodes(n),
        TimeControl::Depth(_) => nodes(DEFAULT_KOMA_NODES),
        TimeControl::Byoyomi { .. } | TimeControl::Fischer { .. } => {
            let budget = req.clocks.and_then(|c| {
                let me = req.pos.side_to_move().index();
                let clock =
                    Clock { time: Some(c.remaining_ms[me]), inc: c.inc_ms, byoyomi: c.byoyomi_ms, ..Clock::default() };
                time::budget(&clock, TIME_MARGIN_MS)
            });
            match budget {
                Some(b) => Limits { budget: Some(b), origin: Some(started), ..Limits::default() },
                None => nodes(DEFAULT_KOMA_NODES),
            }
        }
    }
}

impl Player for KomaPlayer {
    fn new_game(&mut self, start: &Position) -> Result<(), Fault> {
        self.lock_tree().reset(start);
        Ok(())
    }

    fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
        if req.pos.can_declare_win(req.end_rules.impasse) {
            return Ok(Action::Declare);
        }
        let limits = limits(req, Instant::now());
        {
            let mut tree = self.lock_tree();
            if *tree.end_rules() != req.end_rules {
                // The match's rules: a tree that knows its declarations, tries and length.
                *tree = PlayerTree::new(tree.params().clone(), req.end_rules, req.pos);
            }
            tree.set_root(req.pos);
        }
        let settings =
            Settings { batch_size: self.config.batch_size, multipv: 1, info_interval_ms: 0, pad_batches: false };
        let slots = std::mem::take(&mut self.slots);
        let (outcome, workers) =
            driver::run(&self.tree, slots, &self.network.encoder, &limits, &settings, &Control::new(), &|_| {});
        self.slots = workers.join();
        self.refill_slots();
        self.batches.add(outcome.batches);
        self.last_root = outcome.root;
        self.last_score = Some(match outcome.proof {
            search::Proof::Win(n) => EngineScore::Mate(n as i32),
            search::Proof::Loss(n) => EngineScore::Mate(-(n as i32)),
            search::Proof::Unknown => EngineScore::Cp(search::q_to_cp(outcome.value)),
        });
        if let Some(e) = outcome.error {
            return Err(Fault::Crash(e.to_string()));
        }
        match outcome.best {
            Some(mv) => Ok(Action::Move(mv)),
            None => Ok(Action::Resign),
        }
    }

    fn last_score(&self) -> Option<EngineScore> {
        self.last_score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::Clocks;

    fn uniform_network(variant: Variant) -> KomaNetwork {
        KomaNetwork::from_network(nn::Network::uniform(variant))
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
                end_rules: EndRules::default(),
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
        assert!(c.set("no_such_field", "1").unwrap_err().to_string().contains("no_such_field"));
        // Play searches with the engine's PUCT root: a Gumbel root is refused, not ignored.
        assert_eq!(c.set("gumbel", "true"), Err(KomaConfigError::GumbelRoot));
        let gumbel = KomaConfig { search: SearchConfig { gumbel: true, ..SearchConfig::default() }, ..c };
        assert!(KomaPlayer::new(uniform_network(Variant::Shogi), gumbel, Variant::Shogi).is_err());
    }

    /// A uniform network whose metadata records `record` as its leaf material setting.
    fn network_recording(record: Option<nn::LeafMaterial>) -> KomaNetwork {
        let mut network = nn::Network::uniform(Variant::Shogi);
        let config = nn::NetConfig::default();
        network.meta = Some(nn::ModelMeta {
            variant: Variant::Shogi,
            encoder_version: nn::encoding::ENCODER_VERSION,
            shape: network.encoder.net_shape(),
            net: config,
            step: 9,
            parameters: 0,
            created_unix_ms: 0,
            producer: String::new(),
            leaf_material: record,
        });
        KomaNetwork::from_network(network)
    }

    /// A player takes the leaf material setting its network records unless its spec gives
    /// the key; a network without a record leaves the search as it is.
    #[test]
    fn the_networks_leaf_material_is_the_default_and_spec_keys_override_it() {
        let record = nn::LeafMaterial { mix: 0.5, scale: 36.0 };
        let search_of = |record, keys: &[(&str, &str)]| {
            let mut config = KomaConfig::default();
            for (k, v) in keys {
                config.set(k, v).unwrap();
            }
            let player = KomaPlayer::new(network_recording(record), config, Variant::Shogi).unwrap();
            let s = player.search();
            assert_eq!(s, player.lock_tree().params(), "the tree searches with it");
            (s.leaf_material_mix, s.leaf_material_scale)
        };
        assert_eq!(search_of(Some(record), &[]), (0.5, 36.0));
        assert_eq!(search_of(Some(record), &[("leaf_material_mix", "0")]), (0.0, 36.0));
        assert_eq!(search_of(Some(record), &[("leaf_material_scale", "6")]), (0.5, 6.0));
        assert_eq!(
            search_of(Some(record), &[("leaf_material_mix", "0.25"), ("leaf_material_scale", "10")]),
            (0.25, 10.0)
        );
        assert_eq!(search_of(None, &[]), (0.0, 6.0));
        assert_eq!(search_of(None, &[("leaf_material_mix", "0.25")]), (0.25, 6.0));
        // Other keys leave the network's setting alone.
        assert_eq!(search_of(Some(record), &[("c_puct", "2")]), (0.5, 36.0));
        // A config that takes nothing from the network.
        let config = KomaConfig { from_network: FromNetwork::NONE, ..KomaConfig::default() };
        let player = KomaPlayer::new(network_recording(Some(record)), config, Variant::Shogi).unwrap();
        assert_eq!(player.search().leaf_material_mix, 0.0);
    }

    #[test]
    fn batched_search_plays_legal_moves_in_batches() {
        let net = uniform_network(Variant::Shogi);
        let config = KomaConfig { batch_size: 8, ..KomaConfig::default() };
        let mut p = KomaPlayer::new(net.clone(), config, Variant::Shogi).unwrap();
        play(&mut p, TimeControl::Nodes(64), None, 6);
        let s = p.batch_stats();
        assert!(s.largest_batch > 1 && s.largest_batch <= 8, "{s:?}");
        assert!(s.batches * 2 < s.leaves, "{s:?}");
        // Batch 1: one leaf per evaluation.
        let single = KomaConfig { batch_size: 1, ..KomaConfig::default() };
        let mut single = KomaPlayer::new(net, single, Variant::Shogi).unwrap();
        play(&mut single, TimeControl::Nodes(64), None, 4);
        assert_eq!(single.batch_stats().largest_batch, 1);
    }

    /// The tree is kept from move to move within a game and dropped by `new_game`.
    #[test]
    fn the_tree_is_reused_within_a_game() {
        let config = KomaConfig { batch_size: 4, ..KomaConfig::default() };
        let mut p = KomaPlayer::new(uniform_network(Variant::Shogi), config, Variant::Shogi).unwrap();
        let root_visits = |p: &KomaPlayer| p.last_root().iter().map(|c| c.visits).sum::<u32>();
        play(&mut p, TimeControl::Nodes(64), None, 1);
        // A fresh tree: every simulation but the root's went to a child.
        assert_eq!(root_visits(&p), 63);
        play(&mut p, TimeControl::Nodes(64), None, 2);
        // `play` starts a new game: the first move again searched a fresh tree, the second
        // one started from the subtree of the first.
        assert!(root_visits(&p) > 64, "{}", root_visits(&p));
        play(&mut p, TimeControl::Nodes(64), None, 1);
        assert_eq!(root_visits(&p), 63);
    }

    #[test]
    fn players_share_a_batching_service_and_keep_the_clock() {
        let (batcher, net) = uniform_network(Variant::Shogi).batched(64, Duration::ZERO, "test-batcher");
        let batcher = batcher.expect("a new service");
        let config = KomaConfig { batch_size: 4, threads: 2, ..KomaConfig::default() };
        std::thread::scope(|s| {
            for _ in 0..3 {
                let (net, config) = (net.clone(), config.clone());
                s.spawn(move || {
                    let mut p = KomaPlayer::new(net, config, Variant::Shogi).unwrap();
                    play(&mut p, TimeControl::Nodes(48), None, 4);
                    assert!(p.batch_stats().largest_batch > 1);
                });
            }
        });
        let stats = batcher.stats();
        assert!(stats.positions >= 3 * 4 * 40, "{stats:?}");
        // A byoyomi of 300 ms: every move within it.
        let mut p = KomaPlayer::new(net, config, Variant::Shogi).unwrap();
        let clocks = Clocks { remaining_ms: [0, 0], byoyomi_ms: 300, inc_ms: 0 };
        let t = Instant::now();
        play(&mut p, TimeControl::Byoyomi { ms: 300 }, Some(clocks), 3);
        assert!(t.elapsed() < Duration::from_millis(3 * 300), "{:?}", t.elapsed());
        drop(batcher);
    }
}
