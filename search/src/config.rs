//! Search settings: the `[search]` table of a koma config file ([`SearchConfig`]), read by
//! self-play, the engine, the arena and the trainer's evaluation games alike.

use serde::{Deserialize, Serialize};

/// Monte Carlo tree search settings (`[search]`). Used by self-play, the USI engine, the
/// arena's koma players and the trainer's evaluation games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// PUCT exploration constant c_init in
    /// `c(N) = c_init + ln((N + c_base + 1) / c_base)`. Default 1.25 (self-play); the
    /// players' default is [`PLAY_C_PUCT`] ([`SearchConfig::for_play`]).
    /// AlphaZero: 1.25 (pseudocode); Leela Chess Zero: 1.745 (training); KataGo: 1.1
    /// (no log growth, `cpuctExploration`). Valid: (0, 100].
    pub c_puct: f32,
    /// c_base of the log growth above. Default 19652. AlphaZero: 19652; lc0: 38739.
    /// Valid: [1, 1e9].
    pub c_puct_base: f32,
    /// First-play urgency reduction at inner nodes: an unvisited child's Q is the parent's
    /// Q minus `fpu_reduction * sqrt(sum of the priors of the visited children)`.
    /// Default 0.25. lc0: 0.33 (`fpu-value`, reduction strategy); KataGo: 0.2;
    /// AlphaZero: unvisited Q = 0 (loss in the paper's later correction). Valid: [0, 10].
    pub fpu_reduction: f32,
    /// The same at the root. Default 0.0 (with root noise the root explores anyway).
    /// KataGo: 0.1 (`rootFpuReductionMax`, 0 with noise); lc0: fpu absolute 1.0 at the
    /// root in training. Valid: [0, 10].
    pub root_fpu_reduction: f32,
    /// Total Dirichlet concentration of the root noise of full self-play searches (PUCT
    /// root; a Gumbel root uses Gumbel noise instead): each of the n legal moves gets
    /// alpha = `dirichlet_alpha_total / n` (KataGo; Wu 2019, "Accelerating Self-Play
    /// Learning in Go"). A fixed alpha makes the noise nearly one-hot where moves are few
    /// and nearly uniform where they are many (dai shogi: hundreds). Default 10.83. KataGo: 0.03 * 361 = 10.83. AlphaZero fixes alpha per game
    /// "in inverse proportion to the approximate number of legal moves in a typical
    /// position" (Silver et al. 2018): 0.3 chess (x ~35 moves = 10.5), 0.15 shogi
    /// (x ~80 = 12), 0.03 Go (x ~250 = 7.5). Valid: (0, 1000].
    pub dirichlet_alpha_total: f32,
    /// Weight of the noise: prior' = (1 - eps) * prior + eps * noise. Default 0.25.
    /// AlphaZero and KataGo: 0.25. 0 disables the noise. Valid: [0, 1].
    pub dirichlet_epsilon: f32,
    /// Softmax temperature of the root priors (lc0 `policy-softmax-temp`), also when a
    /// reused tree's node becomes the root. It shapes the search only: the Gumbel policy
    /// target uses the network's logits at temperature 1. Default 1.0.
    /// lc0: 1.607 in training; AlphaZero, KataGo: 1.0 (KataGo 1.03 at the root).
    /// Valid: [0.01, 100].
    pub policy_softmax_temperature: f32,
    /// Use a Gumbel AlphaZero root (Danihelka et al. 2022: Gumbel top-k, sequential
    /// halving, completed-Q policy target) instead of PUCT with Dirichlet noise. Learns
    /// with far fewer simulations (n = 16..64), which suits CPUs. Inner nodes use PUCT
    /// either way. The move played is the sequential halving winner (its Gumbel noise is
    /// the exploration): self-play's move temperature does not apply and may not be set.
    /// Default false.
    pub gumbel: bool,
    /// Gumbel: actions sampled at the root (m). Default 16. Paper: 16 (Go, chess with
    /// n = 200/800), 4..8 for n <= 16. Valid: 1..=1024.
    pub gumbel_m: usize,
    /// Gumbel: sigma(q) = (c_visit + max_b N(b)) * c_scale * q, q in [0, 1].
    /// Default 50. Paper: 50. Valid: [0, 1e6].
    pub gumbel_c_visit: f32,
    /// Gumbel: see `gumbel_c_visit`. Default 1.0. Paper: 1.0 (0.1 in some MuZero runs).
    /// Valid: [0, 1000].
    pub gumbel_c_scale: f32,
    /// Short mate search at every expansion; proven wins and losses propagate up the tree
    /// (MCTS-solver), and a proven node needs no network evaluation.
    /// 0: none (terminal positions are still exact).
    /// 1: look for an immediate win of the side to move (a move that mates, or captures
    /// the last royal in sho/dai).
    /// 3: also, when the side to move is in check, look for an immediate win of the
    /// opponent after every evasion (finds mates in 3 by a checking move at the first
    /// visit of the check). Costs up to a few tens of microseconds per node in check.
    /// Default 3. dlshogi: mate in 1 at every node plus a short mate search at leaves.
    /// Valid: 0, 1 or 3.
    pub mate_search_plies: u32,
    /// The visit of a node (other than the root) at which the mate search above runs.
    /// 1: at its expansion, before its network evaluation. 2: when the first simulation
    /// after its evaluation passes through it, so that a node visited once, most of a
    /// small search's leaves, costs no mate search (about a fifth of the tree's work per
    /// leaf in self-play, `docs/performance.md`); a mate on the board then gets the
    /// network's value at its first visit and its proof at the second. The root is
    /// searched at its expansion either way. Default 1. Valid: 1 or 2.
    pub mate_search_visit: u32,
    /// Virtual loss per in-flight simulation (several leaves of one tree at once; the USI
    /// engine's threads). Default 1.0. lc0: 1 (a visit counted as a loss). Valid: [0, 100].
    pub virtual_loss: f32,
    /// Memory cap of one search tree in MiB: a search stops adding simulations once its
    /// tree is this large (the move is then chosen from what was searched). Default 256.
    /// Valid: 1..=1048576 (1 TiB).
    pub max_tree_mib: usize,
    /// Share of a new leaf's value taken from the rules instead of the network: the
    /// material after the captures on offer are played out (`rules::quiescent_balance`),
    /// read as `2 * sigmoid(balance / leaf_material_scale) - 1`; the leaf's draw share
    /// shrinks by the same factor. Knowledge from the rules, not AlphaZero's zero
    /// knowledge: it lets a young network's search see hanging pieces that its value head
    /// cannot yet, which matters where the board is large and the tree shallow (dai
    /// shogi at 800 nodes). AlphaGo (Silver et al. 2016) mixed its value network with
    /// rollouts the same way, lambda = 0.5. Default 0 (the network alone). Valid: [0, 1].
    pub leaf_material_mix: f32,
    /// Material units per logistic unit of the mix above. Default 6
    /// (`rules::MATERIAL_SCALE`: standard shogi's 60 units a side); dai's 355 units a
    /// side read alike at about 36. Valid: [1, 1000].
    pub leaf_material_scale: f32,
    /// Plies at the start of the leaf's capture search (above) at which the side to move
    /// also tries its quiet checks, drops included; a side in check must then answer it
    /// (`rules::QuiescenceLimits::check_plies`). So the leaf's material sees a checking
    /// fork or a check that wins the piece behind it, as Stockfish's quiescence does
    /// with its checks at the first ply. Variants with the check rule only (standard
    /// shogi, sho). Default 0 (captures only). Valid: 0..=4.
    pub leaf_material_check_plies: u32,
    /// Node budget of the tsume solver (`search::mate`, df-pn over checks and evasions)
    /// at a player's root, standard shogi only: before the search, a mate by continuous
    /// checks for the side to move (dlshogi's root df-pn); after it, whether the move
    /// chosen lets the opponent mate so, in which case the next best is taken (up to 8
    /// moves). Each solve stops at this many nodes (about a millisecond per thousand).
    /// Players only (the engine, the arena, the in-run evaluation), not self-play's root.
    /// Default 20,000 (with the material check below it was the best arm against fsf1,
    /// `docs/strength.md`); 0: off. Valid: 0..=10,000,000.
    pub root_mate_nodes: u64,
    /// Node budget of the tsume solver at every new leaf of a player's tree other than the
    /// root, standard shogi only: a mate by continuous checks for the leaf's side to move
    /// proves the leaf won without a network evaluation, so the whole tree, not only the
    /// root's choice, sees the mates a young network's value misses, its own and the
    /// opponent's (dlshogi searches for mates at every leaf). Players only (the engine,
    /// the arena, the in-run evaluation), not self-play. Costs up to a few tenths of a
    /// millisecond a leaf at a few hundred nodes; 0: off. Valid: 0..=1,000,000.
    pub leaf_mate_nodes: u64,
    /// Plies of the root's material check (`search::tactics`), players of standard shogi
    /// only (sho and dai are untested, and dai's width would cost a second a move): once the
    /// search has chosen, the most visited root moves (up to 8) are searched this many
    /// plies deep over every legal move (the root move included), then the captures of
    /// the leaf material; the most visited move whose material outlook is within
    /// `root_tactics_margin` of the best of them is played. A young network's search at a
    /// few hundred simulations leaves pieces to plain sequences of captures and forks
    /// that three plies see. Knowledge from the rules. Default 3 (it lifted the CPU
    /// demo's networks against fsf1, `docs/strength.md`); 0: off. Valid: 0..=4.
    pub root_tactics_plies: u32,
    /// Material units (pawn 1, gold 6, rook 10; board and hand both count) by which a
    /// move's outlook may fall short of the best candidate's and still be played.
    /// Default 3. Valid: [0, 1000].
    pub root_tactics_margin: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            c_puct: 1.25,
            c_puct_base: 19652.0,
            fpu_reduction: 0.25,
            root_fpu_reduction: 0.0,
            dirichlet_alpha_total: 10.83,
            dirichlet_epsilon: 0.25,
            policy_softmax_temperature: 1.0,
            gumbel: false,
            gumbel_m: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            mate_search_plies: 3,
            mate_search_visit: 1,
            virtual_loss: 1.0,
            max_tree_mib: 256,
            leaf_material_mix: 0.0,
            leaf_material_scale: rules::MATERIAL_SCALE as f32,
            leaf_material_check_plies: 0,
            root_mate_nodes: 20_000,
            leaf_mate_nodes: 0,
            root_tactics_plies: 3,
            root_tactics_margin: 3.0,
        }
    }
}

/// `c_puct` of the players (koma-usi's `CPuct`, the arena's koma players, the in-run
/// evaluation): a narrower search than self-play's 1.25, whose root noise and move
/// temperature want the wider one. Measured on ten fresh 25-minute shogi networks at
/// 800 nodes against fsf1: 165-0-235 against 125-1-274 at 1.25, ahead on eight networks
/// and tied on two (`docs/strength.md`).
pub const PLAY_C_PUCT: f32 = 0.8;

impl SearchConfig {
    /// The search a player uses unless told otherwise: the defaults with
    /// [`PLAY_C_PUCT`].
    pub fn for_play() -> SearchConfig {
        SearchConfig { c_puct: PLAY_C_PUCT, ..SearchConfig::default() }
    }

    /// This search with the leaf material fields that `take_mix` and `take_scale` mark
    /// replaced by the network's record `network` (the setting it was trained with,
    /// `nn::ModelMeta::leaf_material`) when it has one: how a player (koma-usi at
    /// `MaterialMix`/`MaterialScale` auto, the arena's koma players without those keys)
    /// plays a network as it was trained.
    pub fn with_leaf_material_of(
        mut self,
        network: Option<nn::LeafMaterial>,
        take_mix: bool,
        take_scale: bool,
    ) -> SearchConfig {
        if let Some(record) = network {
            if take_mix {
                self.leaf_material_mix = record.mix;
            }
            if take_scale {
                self.leaf_material_scale = record.scale;
            }
        }
        self
    }

    /// Checks every field against its valid range (in the field's documentation); the
    /// error names the field, the value and the range.
    pub fn validate(&self) -> Result<(), nn::ConfigError> {
        use nn::{check_real, check_whole, Range};
        let real = |name: &str, v: f32, r: Range| check_real(&format!("search.{name}"), v, r);
        real("c_puct", self.c_puct, Range::AboveMin(0.0, 100.0))?;
        real("c_puct_base", self.c_puct_base, Range::Closed(1.0, 1e9))?;
        real("fpu_reduction", self.fpu_reduction, Range::Closed(0.0, 10.0))?;
        real("root_fpu_reduction", self.root_fpu_reduction, Range::Closed(0.0, 10.0))?;
        real("dirichlet_alpha_total", self.dirichlet_alpha_total, Range::AboveMin(0.0, 1000.0))?;
        real("dirichlet_epsilon", self.dirichlet_epsilon, Range::Closed(0.0, 1.0))?;
        real("policy_softmax_temperature", self.policy_softmax_temperature, Range::Closed(0.01, 100.0))?;
        check_whole("search.gumbel_m", self.gumbel_m as u64, 1, 1024)?;
        real("gumbel_c_visit", self.gumbel_c_visit, Range::Closed(0.0, 1e6))?;
        real("gumbel_c_scale", self.gumbel_c_scale, Range::Closed(0.0, 1000.0))?;
        if !matches!(self.mate_search_plies, 0 | 1 | 3) {
            return Err(nn::ConfigError::BadValue {
                field: "search.mate_search_plies".into(),
                value: self.mate_search_plies.to_string(),
                expected: "0, 1 or 3".into(),
            });
        }
        check_whole("search.mate_search_visit", self.mate_search_visit as u64, 1, 2)?;
        real("virtual_loss", self.virtual_loss, Range::Closed(0.0, 100.0))?;
        check_whole("search.max_tree_mib", self.max_tree_mib as u64, 1, 1 << 20)?;
        real("leaf_material_mix", self.leaf_material_mix, Range::Closed(0.0, 1.0))?;
        real("leaf_material_scale", self.leaf_material_scale, Range::Closed(1.0, 1000.0))?;
        check_whole("search.leaf_material_check_plies", self.leaf_material_check_plies as u64, 0, 4)?;
        check_whole("search.root_mate_nodes", self.root_mate_nodes, 0, 10_000_000)?;
        check_whole("search.leaf_mate_nodes", self.leaf_mate_nodes, 0, 1_000_000)?;
        check_whole("search.root_tactics_plies", self.root_tactics_plies as u64, 0, 4)?;
        real("root_tactics_margin", self.root_tactics_margin, Range::Closed(0.0, 1000.0))?;
        Ok(())
    }
}
