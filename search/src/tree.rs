//! The search tree shared by self-play (`root_policy::Search`) and the players
//! (`player_tree::PlayerTree`): arena-allocated nodes and edges, exact terminal
//! positions, proofs with their distance to the end of the game (MCTS-solver), the short
//! mate search at expansion, backup with virtual loss, PUCT selection, statistics, a
//! memory cap and re-rooting.
//!
//! Layout: nodes and edges live in two `Vec`s; the edges (moves) of a node are a
//! contiguous range, and an edge gets its child node when first visited. Values are
//! win/draw/loss from the side to move's view at each node.
//!
//! Terminal states come from the rules (`Position::outcome`: mate, no moves, royal
//! capture, bare king, repetition and perpetual check with the game history, maximum
//! length, the try rule) plus a winning declaration by the end rules' entering king rule
//! (`ImpasseRule`). A draw is worth the tree's draw value for the side to move there
//! ([`Tree::set_draw_values`]: 0 unless a player sets it, as the USI engine's
//! `Draw_Value_Black` and `Draw_Value_White` do). Proven wins and
//! losses propagate up with their distance in plies; with `mate_search_plies` every
//! expansion looks for an immediate win first (and, in check, for evasions that lose at
//! once), so that mates are found even with a uniform evaluator.
//!
//! The tree is driven leaf by leaf: [`Tree::select_leaf`] descends (PUCT below the root;
//! at the root a [`TreeHooks`] may choose instead) and either backs up an exact result or
//! returns a [`Leaf`] whose input planes it wrote; [`Tree::apply`] takes the leaf's
//! evaluation. Several leaves may be in flight at once (virtual loss); a descent that
//! reaches a leaf still waiting for its evaluation is a [`Selected::Collision`].
//! What a user adds on top (root noise, a Gumbel root, the move choice, PV, time
//! management) builds on the accessors below.

use std::collections::VecDeque;
use std::ops::Range;

use nn::encoding::Encoder;
use nn::{EncodeTarget, Logits};
use rules::{EndRules, ImpasseRule, Move, Position, RoyalRule};

use crate::checks::CheckFilter;
use crate::config::SearchConfig;
use crate::phases::{Phase, PhaseClock, PhaseTimes};

const NONE: u32 = u32::MAX;

/// Proof status of a node for its side to move, with the distance in plies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    Unknown,
    /// The side to move wins in this many plies (0: the game is already won).
    Win(u16),
    /// The side to move loses in this many plies (0: it is mated now).
    Loss(u16),
}

impl Proof {
    /// The exact value (win - loss) of a proven node.
    pub fn value(self) -> Option<f32> {
        match self {
            Proof::Unknown => None,
            Proof::Win(_) => Some(1.0),
            Proof::Loss(_) => Some(-1.0),
        }
    }

    pub fn is_win(self) -> bool {
        matches!(self, Proof::Win(_))
    }

    pub fn is_loss(self) -> bool {
        matches!(self, Proof::Loss(_))
    }

    /// The same proof seen from the parent, one ply earlier: a child's `Loss(k)` is a
    /// `Win(k + 1)` for the side that moves into it.
    pub fn for_parent(self) -> Proof {
        match self {
            Proof::Win(k) => Proof::Loss(k.saturating_add(1)),
            Proof::Loss(k) => Proof::Win(k.saturating_add(1)),
            Proof::Unknown => Proof::Unknown,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Created, never reached.
    Unexpanded,
    /// Edges created, evaluation requested, priors not yet known.
    Pending,
    Expanded,
    /// The game ends here (value exact).
    Terminal,
}

/// A move of a node.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub mv: Move,
    /// Prior probability (after noise, if any).
    pub prior: f32,
    child: u32,
}

impl Edge {
    /// The child node, once the edge was visited (or proven).
    pub fn child(&self) -> Option<u32> {
        (self.child != NONE).then_some(self.child)
    }
}

/// A position of the tree.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    edge_start: u32,
    edge_len: u32,
    visits: u32,
    in_flight: u32,
    /// Sum of (win - loss) values, this node's side to move's view.
    value_sum: f64,
    draw_sum: f64,
    state: State,
    proof: Proof,
    /// Exact (value, draw) of a terminal node.
    terminal: (f32, f32),
    /// Expanded without its mate search, which the next simulation through it runs
    /// (`SearchConfig::mate_search_visit` 2).
    mate_search_due: bool,
}

impl Node {
    fn new() -> Node {
        Node {
            edge_start: 0,
            edge_len: 0,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            draw_sum: 0.0,
            state: State::Unexpanded,
            proof: Proof::Unknown,
            terminal: (0.0, 0.0),
            mate_search_due: false,
        }
    }

    /// Completed simulations through this node.
    pub fn visits(&self) -> u32 {
        self.visits
    }

    pub fn proof(&self) -> Proof {
        self.proof
    }

    fn edges(&self) -> Range<usize> {
        self.edge_start as usize..(self.edge_start + self.edge_len) as usize
    }
}

/// A leaf waiting for its network evaluation (give it back with [`Tree::apply`]).
#[derive(Debug, Default)]
pub struct Leaf {
    path: Vec<u32>,
    labels: Vec<usize>,
    /// The rules' material value (win - loss) for the leaf's side to move, when the
    /// search mixes it in (`SearchConfig::leaf_material_mix`).
    material_value: Option<f32>,
}

impl Leaf {
    /// Plies from the root.
    pub fn depth(&self) -> u32 {
        self.path.len() as u32 - 1
    }

    pub fn is_root(&self) -> bool {
        self.path.len() == 1
    }

    /// The leaf's node.
    fn node(&self) -> u32 {
        *self.path.last().expect("a path starts at the root")
    }
}

/// What [`Tree::select_leaf`] did.
#[derive(Debug)]
pub enum Selected {
    /// The leaf's input planes were written; evaluate them and call [`Tree::apply`].
    NeedsEval(Leaf),
    /// The simulation ended in a terminal or proven node (`depth` plies from the root)
    /// and was backed up at once.
    Exact { depth: u32 },
    /// The path ended in a leaf already waiting for its evaluation; nothing changed.
    Collision,
    /// Nothing to search: the root is proven, has no moves, or the tree is full.
    Done,
}

/// What a user of the tree decides during [`Tree::select_leaf`]. The defaults: PUCT at
/// the root, nothing more at the expansion of the root or a leaf.
pub trait TreeHooks {
    /// The root edge (relative index) to descend, or `None` for PUCT.
    fn root_edge(&mut self, _tree: &Tree) -> Option<u32> {
        None
    }

    /// Called when the root was just expanded (its edges exist, priors not yet known)
    /// and the mate search at expansion proved nothing; the position being searched is
    /// [`Tree::root_position`]. Returns true if it proved the root (see
    /// [`Tree::prove_root_child`]): the simulation is then backed up with the proof's
    /// value instead of being evaluated.
    fn root_expanded(&mut self, _tree: &mut Tree) -> bool {
        false
    }

    /// Called when a new leaf other than the root was just expanded and the mate search
    /// at expansion proved nothing: a forced win for the side to move at `pos`, as the
    /// winning line (the side to move's first), or `None`.
    fn leaf_win(&mut self, _pos: &Position, _params: &SearchConfig) -> Option<Vec<Move>> {
        None
    }
}

/// PUCT at the root, no extra search.
impl TreeHooks for () {}

/// One root move's statistics, from the root's side to move's view.
#[derive(Clone, Copy, Debug)]
pub struct ChildInfo {
    pub mv: Move,
    pub prior: f32,
    /// Visits, in-flight ones included.
    pub visits: u32,
    /// Mean value (win - loss); `None` while unvisited and unproven.
    pub q: Option<f32>,
    /// Proof from the root's view: `Win(n)`: this move wins in n plies (counting itself).
    pub proof: Proof,
}

/// Asks the cache for the logits of `labels`: they lie scattered over a policy that the
/// evaluator wrote long ago (a batch back), and a worker applies its leaves one after
/// another, so that asking for the next leaf's while applying this one hides the misses.
fn prefetch_logits<T>(values: &[T], labels: &[usize]) {
    for &l in labels {
        if let Some(x) = values.get(l) {
            prefetch(x);
        }
    }
}

/// Asks the cache for the line that holds `x`.
#[inline(always)]
fn prefetch<T>(x: &T) {
    // SAFETY: a prefetch reads nothing and faults on no address; `x` is valid anyway.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch((x as *const T).cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// The logits of `labels` (a label past the end reads 0) times `inv_t` into `out`, a
/// value that is not finite read as 0; returns their maximum.
#[inline]
fn gather_logits<T>(values: &[T], labels: &[usize], inv_t: f32, out: &mut Vec<f32>, f: impl Fn(&T) -> f32) -> f32 {
    out.clear();
    let mut max = f32::NEG_INFINITY;
    for &l in labels {
        let x = values.get(l).map_or(0.0, &f) * inv_t;
        let x = if x.is_finite() { x } else { 0.0 };
        max = max.max(x);
        out.push(x);
    }
    max
}

/// Result of the rules at a new node: exact (value, draw, proof) for its side to move.
/// `has_legal_move`: whether the side to move has one (the moves are listed already).
fn outcome_value(pos: &Position, end_rules: &EndRules, has_legal_move: bool) -> Option<(f32, f32, Proof)> {
    if pos.can_declare_win(end_rules.impasse) {
        return Some((1.0, 0.0, Proof::Win(1)));
    }
    let o = pos.outcome_with(end_rules, || has_legal_move)?;
    Some(match o.winner {
        None => (0.0, 1.0, Proof::Unknown),
        Some(c) if c == pos.side_to_move() => (1.0, 0.0, Proof::Win(0)),
        Some(_) => (-1.0, 0.0, Proof::Loss(0)),
    })
}

/// Is there a piece of the opponent of the side to move on `sq` that is royal?
fn enemy_royal_at(pos: &Position, sq: rules::Square) -> bool {
    match pos.piece_at(sq) {
        Some(p) if p.color() != pos.side_to_move() => {
            let spec = pos.spec().kind(p.kind());
            spec.is_some_and(|k| if p.is_promoted() { k.promoted_royal } else { k.royal })
        }
        _ => false,
    }
}

/// Index into `moves` (legal moves of the side to move at `pos`) of a move that wins at
/// once: mates, captures the last royal (sho, dai), or under the try rule steps the king
/// onto its try square. Bare-king wins are not looked for
/// (they are found when reached). `pos` is restored.
pub fn find_immediate_win(pos: &mut Position, moves: &[Move], end_rules: &EndRules) -> Option<usize> {
    first_immediate_win(pos, moves.iter().copied(), end_rules)
}

/// [`find_immediate_win`] over the moves as they come (a node's edges).
fn first_immediate_win(pos: &mut Position, moves: impl Iterator<Item = Move>, end_rules: &EndRules) -> Option<usize> {
    let us = pos.side_to_move();
    let captures_count = pos.spec().royal_rule != RoyalRule::Check;
    let try_rule = end_rules.impasse == ImpasseRule::Try;
    // The opponent's royal that a check attacks (none in dai, or in sho with two royals:
    // no move gives check there), where a move that captures no royal leaves it.
    let checks = pos.checked_royal(us.opponent()).map(|king| CheckFilter::new(pos, king));
    // Its escapes, found at the first move that may give check.
    let mut escapes = None;
    for (i, mv) in moves.enumerate() {
        let royal_capture = captures_count
            && match mv {
                Move::Normal { to, .. } => enemy_royal_at(pos, to),
                Move::Lion { mid, to, .. } => enemy_royal_at(pos, mid) || enemy_royal_at(pos, to),
                Move::Drop { .. } => false,
            };
        // Without a royal capture or the try rule only a mate can win: a move that
        // cannot give check, or after which the king surely steps away, is not made.
        if !royal_capture && !try_rule {
            let Some(c) = checks.as_ref().filter(|c| c.may_give_check(pos, mv)) else { continue };
            if escapes.get_or_insert_with(|| c.escapes(pos)).as_ref().is_some_and(|e| !c.may_mate(e, pos, mv)) {
                continue;
            }
        }
        let undo = pos.make(mv);
        let win = if royal_capture || pos.in_check() || (try_rule && pos.tried(us)) {
            // `make` does not record history: only trust decisive non-repetition ends.
            match pos.outcome(end_rules) {
                Some(o) => {
                    o.winner == Some(us)
                        && matches!(
                            o.reason,
                            rules::Reason::Checkmate
                                | rules::Reason::NoMoves
                                | rules::Reason::RoyalCapture
                                | rules::Reason::Declaration
                        )
                }
                None => false,
            }
        } else {
            false
        };
        pos.unmake(mv, undo);
        if win {
            return Some(i);
        }
    }
    None
}

thread_local! {
    static MATERIAL_CACHE: std::cell::RefCell<MaterialCache> = std::cell::RefCell::new(MaterialCache::new());
}

/// Leaf material values ([`Tree::material_value`]) by position, for the trees searched on
/// one thread: a search reaches again what the last one reached (self-play searches
/// every move afresh), and the quiescence search behind a value is the costliest part
/// of a leaf. The value depends on the board, the hands and the side to move alone (the
/// search ignores the history), which the Zobrist key covers, and on the variant and
/// the two settings mixed into the key. Direct-mapped, [`MaterialCache::SLOTS`] entries (1 MiB); a
/// newer entry replaces an older one in its slot.
struct MaterialCache {
    entries: Vec<(u64, f32)>,
}

impl MaterialCache {
    const SLOTS: usize = 1 << 16;

    /// Empty; the table is allocated at the first value stored.
    fn new() -> MaterialCache {
        MaterialCache { entries: Vec::new() }
    }

    /// Mixed into the position's key: the variant and the settings that change the value.
    fn settings_key(variant: rules::Variant, check_plies: u32, scale: f32) -> u64 {
        let tag = (variant as u64) << 56 | (check_plies as u64 & 0xFF_FFFF) << 32 | scale.to_bits() as u64;
        tag.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn slot(key: u64) -> usize {
        (key ^ (key >> 29)) as usize & (Self::SLOTS - 1)
    }

    fn get(&self, key: u64) -> Option<f32> {
        match self.entries.get(Self::slot(key)) {
            Some(&(k, v)) if k == key && !v.is_nan() => Some(v),
            _ => None,
        }
    }

    fn put(&mut self, key: u64, v: f32) {
        if self.entries.is_empty() {
            // A NaN value marks an empty slot (a lookup never returns one).
            self.entries = vec![(0, f32::NAN); Self::SLOTS];
        }
        self.entries[Self::slot(key)] = (key, v);
    }
}

/// The search tree of one game.
pub struct Tree {
    params: SearchConfig,
    end_rules: EndRules,
    /// The value (win - loss) of a draw for the side to move there, by its colour
    /// ([`rules::Color::index`]).
    draw_values: [f32; 2],
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// The position being searched (with its game history) and a working copy for
    /// descents (moves are played and taken back, so history-based rules see the path).
    root_pos: Position,
    work: Position,
    max_tree_bytes: usize,
    capped: bool,
    /// At the memory cap, free the least-visited subtrees and go on ([`Tree::prune`])
    /// instead of stopping (analysis: `go infinite`, pondering).
    prune_when_full: bool,
    /// Times the tree was pruned since [`Tree::begin_search`].
    prunes: u64,
    /// Simulations started since [`Tree::begin_search`].
    started: u64,
    free_leaves: Vec<Leaf>,
    moves_buf: Vec<Move>,
    evasion_buf: Vec<Move>,
    labels_buf: Vec<usize>,
    logit_buf: Vec<f32>,
    /// Time by phase, when asked ([`Tree::set_phase_timing`]).
    clock: PhaseClock,
}

impl Tree {
    /// A tree whose root is `pos` (its game history counts for repetitions).
    pub fn new(params: SearchConfig, end_rules: EndRules, pos: &Position) -> Tree {
        let max_tree_bytes = params.max_tree_mib.saturating_mul(1 << 20);
        let mut t = Tree {
            params,
            end_rules,
            draw_values: [0.0; 2],
            nodes: Vec::new(),
            edges: Vec::new(),
            root_pos: pos.clone(),
            work: pos.clone(),
            max_tree_bytes,
            capped: false,
            prune_when_full: false,
            prunes: 0,
            started: 0,
            free_leaves: Vec::new(),
            moves_buf: Vec::new(),
            evasion_buf: Vec::new(),
            labels_buf: Vec::new(),
            logit_buf: Vec::new(),
            clock: PhaseClock::default(),
        };
        t.reset(pos);
        t
    }

    pub fn params(&self) -> &SearchConfig {
        &self.params
    }

    /// Times the phases of every simulation from now on (or stops): a benchmark's view
    /// (`koma bench tree`), read with [`Tree::take_phase_times`].
    pub fn set_phase_timing(&mut self, on: bool) {
        self.clock.set(on);
    }

    /// The time by phase since the last call (zero unless timing).
    pub fn take_phase_times(&mut self) -> PhaseTimes {
        self.clock.take()
    }

    pub fn end_rules(&self) -> &EndRules {
        &self.end_rules
    }

    /// Sets what a draw (repetition, the length limit, an impasse drawn) is worth in the
    /// tree: `values[c.index()]` (win - loss, in -1..=1) for a draw where colour `c` is to
    /// move. A player gives its own side's draw value `v` and the opponent's `-v`. Takes
    /// effect from the next simulation; terminal nodes keep their result, not their value.
    pub fn set_draw_values(&mut self, values: [f32; 2]) {
        self.draw_values = values.map(|v| v.clamp(-1.0, 1.0));
    }

    pub fn draw_values(&self) -> [f32; 2] {
        self.draw_values
    }

    /// A terminal's exact (value, draw) at the working position, with a draw worth the
    /// draw value for the side to move there.
    fn scored(&self, (v, d): (f32, f32)) -> (f32, f32) {
        if d >= 1.0 {
            (self.draw_values[self.work.side_to_move().index()], d)
        } else {
            (v, d)
        }
    }

    /// Drops the whole tree and starts from `pos`. Must not be called with leaves in
    /// flight.
    pub fn reset(&mut self, pos: &Position) {
        self.nodes.clear();
        self.edges.clear();
        self.nodes.push(Node::new());
        self.root_pos.clone_from(pos);
        self.work.clone_from(pos);
        self.capped = false;
    }

    pub fn root_position(&self) -> &Position {
        &self.root_pos
    }

    /// Gives back the memory of nodes and edges no longer in use (after [`Tree::reset`],
    /// which keeps it for the next search of the same size, as self-play wants).
    pub fn release_memory(&mut self) {
        self.nodes.shrink_to_fit();
        self.edges.shrink_to_fit();
    }

    /// Moves the root to `pos`, keeping the subtree of the moves played since the current
    /// root when `pos` continues the same game and that subtree exists; otherwise starts
    /// afresh. Returns the visits kept. Must not be called with leaves in flight.
    pub fn set_root(&mut self, pos: &Position) -> u32 {
        match self.try_reroot(pos) {
            Some(n) => n,
            None => {
                self.reset(pos);
                0
            }
        }
    }

    fn try_reroot(&mut self, pos: &Position) -> Option<u32> {
        let old_plies = self.root_pos.plies_played();
        let new_plies = pos.plies_played();
        if new_plies < old_plies || self.nodes[0].state != State::Expanded {
            return None;
        }
        let all: Vec<Move> = pos.moves_played().collect();
        if !self.root_pos.moves_played().eq(all[..old_plies].iter().copied()) {
            return None;
        }
        let mut back = pos.clone();
        for _ in old_plies..new_plies {
            back.undo()?;
        }
        if back.zobrist() != self.root_pos.zobrist() || back.to_sfen() != self.root_pos.to_sfen() {
            return None;
        }
        let mut node = 0u32;
        for &mv in &all[old_plies..] {
            let n = self.nodes[node as usize];
            if n.state != State::Expanded {
                return None;
            }
            let e = self.edges[n.edges()].iter().find(|e| e.mv == mv)?;
            if e.child == NONE {
                return None;
            }
            node = e.child;
        }
        let n = self.nodes[node as usize];
        // Only a normal expanded node can be a root (proof-only nodes have no edges).
        if n.state != State::Expanded || n.edge_len == 0 {
            return None;
        }
        if node != 0 {
            self.compact(node);
            self.temper_root_priors();
        }
        self.root_pos.clone_from(pos);
        self.work.clone_from(pos);
        self.capped = false;
        for nd in &mut self.nodes {
            nd.in_flight = 0;
        }
        Some(self.nodes[0].visits)
    }

    /// Gives a new root (an inner node until now, whose priors are the network's softmax
    /// at temperature 1) the root's policy softmax temperature: softmax(l / T) is
    /// proportional to softmax(l)^(1 / T).
    fn temper_root_priors(&mut self) {
        let t = self.params.policy_softmax_temperature;
        if t == 1.0 {
            return;
        }
        let inv_t = 1.0 / t.max(1e-3) as f64;
        let root = self.root_edges();
        let max = self.edges[root.clone()].iter().map(|e| e.prior).fold(0.0f32, f32::max) as f64;
        if max <= 0.0 {
            return;
        }
        let mut sum = 0.0;
        for e in &mut self.edges[root.clone()] {
            // Relative to the largest prior, so that small priors and large 1 / T stay finite.
            let p = (e.prior as f64 / max).powf(inv_t);
            e.prior = p as f32;
            sum += p;
        }
        for e in &mut self.edges[root] {
            e.prior = (e.prior as f64 / sum) as f32;
        }
    }

    /// Keeps only the subtree of `root` (breadth first, children contiguous again).
    fn compact(&mut self, root: u32) {
        let mut nodes = Vec::with_capacity(self.nodes.len() / 4 + 1);
        let mut edges = Vec::with_capacity(self.edges.len() / 4 + 1);
        let mut queue = VecDeque::new();
        nodes.push(self.nodes[root as usize]);
        queue.push_back((root, 0usize));
        while let Some((old, new)) = queue.pop_front() {
            let n = self.nodes[old as usize];
            let start = edges.len() as u32;
            for e in &self.edges[n.edges()] {
                let mut e2 = *e;
                if e.child != NONE {
                    let id = nodes.len();
                    nodes.push(self.nodes[e.child as usize]);
                    queue.push_back((e.child, id));
                    e2.child = id as u32;
                }
                edges.push(e2);
            }
            nodes[new].edge_start = start;
        }
        self.nodes = nodes;
        self.edges = edges;
    }

    /// Starts counting a new search: simulations from 0, memory cap cleared (the tree
    /// is kept).
    pub fn begin_search(&mut self) {
        self.started = 0;
        self.capped = false;
        self.prunes = 0;
    }

    /// Whether a search that fills the tree's memory frees its least-visited subtrees and
    /// goes on ([`Tree::prune`]) rather than stopping.
    pub fn set_prune_when_full(&mut self, yes: bool) {
        self.prune_when_full = yes;
    }

    /// Times the tree was pruned since [`Tree::begin_search`].
    pub fn prunes(&self) -> u64 {
        self.prunes
    }

    /// Frees the least-visited subtrees so that the tree takes at most `target` bytes (or
    /// as close as it can): every node below the root with fewer visits than a threshold,
    /// off the principal variation, keeps its statistics and its proof but loses its
    /// edges and everything under them (unexpanded again: a later visit evaluates and
    /// expands it anew). The threshold is the smallest that meets `target`. Only with no
    /// simulation in flight (else nothing happens). Returns the bytes freed.
    pub fn prune(&mut self, target: usize) -> usize {
        if self.nodes[0].in_flight > 0 {
            return 0;
        }
        let before = self.tree_bytes();
        let pv = self.principal_path();
        let (mut lo, mut hi) = (1u32, self.nodes[0].visits.saturating_add(2));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.pruned_bytes(mid, &pv) <= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        self.rebuild_pruned(lo, &pv);
        self.prunes += 1;
        before.saturating_sub(self.tree_bytes())
    }

    /// The nodes of the most visited line from the root.
    fn principal_path(&self) -> Vec<u32> {
        let mut path = vec![0u32];
        let mut node = 0u32;
        while let Some(child) = self.edges[self.nodes[node as usize].edges()]
            .iter()
            .filter_map(|e| e.child())
            .max_by_key(|&c| self.nodes[c as usize].visits)
        {
            path.push(child);
            node = child;
        }
        path
    }

    /// Whether `node` keeps its subtree in a pruning at `threshold` visits.
    fn keeps_subtree(&self, node: u32, threshold: u32, pv: &[u32]) -> bool {
        node == 0 || self.nodes[node as usize].visits >= threshold || pv.contains(&node)
    }

    /// The bytes the tree would take after [`Tree::prune`] at `threshold` visits.
    fn pruned_bytes(&self, threshold: u32, pv: &[u32]) -> usize {
        let (mut nodes, mut edges) = (1usize, 0usize);
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let range = self.nodes[node as usize].edges();
            edges += range.len();
            for child in self.edges[range].iter().filter_map(|e| e.child()) {
                nodes += 1;
                if self.keeps_subtree(child, threshold, pv) {
                    stack.push(child);
                }
            }
        }
        nodes * std::mem::size_of::<Node>() + edges * std::mem::size_of::<Edge>()
    }

    /// Copies the tree breadth first, cutting the subtrees [`Tree::keeps_subtree`] drops.
    fn rebuild_pruned(&mut self, threshold: u32, pv: &[u32]) {
        let mut nodes = Vec::with_capacity(self.nodes.len() / 2 + 1);
        let mut edges = Vec::with_capacity(self.edges.len() / 2 + 1);
        let mut queue = VecDeque::new();
        nodes.push(self.nodes[0]);
        queue.push_back((0u32, 0usize));
        while let Some((old, new)) = queue.pop_front() {
            let n = self.nodes[old as usize];
            let start = edges.len() as u32;
            for e in &self.edges[n.edges()] {
                let mut e2 = *e;
                if let Some(child) = e.child() {
                    let id = nodes.len();
                    let mut c = self.nodes[child as usize];
                    if self.keeps_subtree(child, threshold, pv) {
                        queue.push_back((child, id));
                    } else if c.state == State::Expanded {
                        (c.state, c.edge_start, c.edge_len) = (State::Unexpanded, 0, 0);
                    }
                    nodes.push(c);
                    e2.child = id as u32;
                }
                edges.push(e2);
            }
            nodes[new].edge_start = start;
        }
        self.nodes = nodes;
        self.edges = edges;
    }

    /// Simulations started since [`Tree::begin_search`].
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Bytes used by the nodes and edges (what the memory cap counts).
    pub fn tree_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.edges.len() * std::mem::size_of::<Edge>()
    }

    /// Bytes allocated for the nodes and edges (at least [`Tree::tree_bytes`]).
    pub fn allocated_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.edges.capacity() * std::mem::size_of::<Edge>()
    }

    /// The memory cap (`max_tree_mib`) in bytes.
    pub fn max_tree_bytes(&self) -> usize {
        self.max_tree_bytes
    }

    /// Whether the search stopped at the memory cap.
    pub fn hit_memory_cap(&self) -> bool {
        self.capped
    }

    pub fn root_proof(&self) -> Proof {
        self.nodes[0].proof
    }

    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    pub fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    /// Absolute indices of the edges of node `id` (empty while unexpanded).
    pub fn edge_range(&self, id: u32) -> Range<usize> {
        self.nodes[id as usize].edges()
    }

    /// Absolute indices of the root's edges.
    pub fn root_edges(&self) -> Range<usize> {
        self.edge_range(0)
    }

    pub fn edge(&self, ei: usize) -> &Edge {
        &self.edges[ei]
    }

    /// The priors of the root's moves, to add noise.
    pub fn root_priors_mut(&mut self) -> impl Iterator<Item = &mut f32> + '_ {
        let r = self.root_edges();
        self.edges[r].iter_mut().map(|e| &mut e.prior)
    }

    /// Whether the root was expanded as a normal node (evaluated, with moves).
    pub fn root_is_expanded(&self) -> bool {
        let r = &self.nodes[0];
        r.state == State::Expanded && r.edge_len > 0
    }

    /// Whether no simulation can be started (terminal or proven root, no moves, full
    /// tree).
    pub fn is_done(&self) -> bool {
        let root = &self.nodes[0];
        root.state == State::Terminal
            || root.proof != Proof::Unknown
            || (root.state == State::Expanded && root.edge_len == 0)
            || self.capped
    }

    /// Descends to a leaf and either backs up an exact result, or writes the leaf's input
    /// planes to `input` (`encoder.input_len()` values) and returns it for evaluation
    /// (virtual loss on its path until [`Tree::apply`]).
    pub fn select_leaf<'p, H: TreeHooks + ?Sized>(
        &mut self,
        encoder: &Encoder,
        input: impl Into<EncodeTarget<'p>>,
        hooks: &mut H,
    ) -> Selected {
        self.clock.start();
        let selected = match self.make_room() {
            Some(refused) => refused,
            None => self.simulate(encoder, input.into(), hooks),
        };
        if self.clock.is_on() {
            let t = &mut self.clock.times;
            match selected {
                Selected::NeedsEval(_) => t.leaves += 1,
                Selected::Exact { .. } => t.exact += 1,
                Selected::Collision => t.collisions += 1,
                Selected::Done => {}
            }
        }
        selected
    }

    /// `None` when a simulation may start; else why not: the search is done (or the tree
    /// full), or a full tree that prunes waits for the simulations in flight. Prunes a
    /// full tree that prunes.
    fn make_room(&mut self) -> Option<Selected> {
        if self.is_done() {
            return Some(Selected::Done);
        }
        if self.tree_bytes() > self.max_tree_bytes {
            match (self.prune_when_full, self.nodes[0].in_flight) {
                // Pruning waits for the simulations in flight to come back.
                (true, n) if n > 0 => return Some(Selected::Collision),
                (true, _) if self.prune(self.max_tree_bytes / 2) > 0 => {}
                _ => {
                    self.capped = true;
                    return Some(Selected::Done);
                }
            }
        }
        None
    }

    /// One simulation: down the tree to a leaf; there an exact result (known, the game's
    /// end, or proven at expansion) is backed up at once, or the new leaf's planes are
    /// written to `input` and it goes out for evaluation.
    fn simulate<H: TreeHooks + ?Sized>(
        &mut self,
        encoder: &Encoder,
        input: EncodeTarget<'_>,
        hooks: &mut H,
    ) -> Selected {
        let mut leaf = self.free_leaves.pop().unwrap_or_default();
        let descent = self.descend(&mut leaf, hooks);
        self.clock.lap(Phase::Descend);
        let Some(newly_proven) = descent else {
            self.free_leaves.push(leaf);
            return Selected::Collision;
        };
        self.started += 1;
        let node = leaf.node();
        self.nodes[node as usize].in_flight += 1;
        if let Some((v, d)) = self.known_result(node) {
            self.undo_path(&leaf);
            self.clock.lap(Phase::Descend);
            return self.finish_exact(leaf, v, d, newly_proven);
        }
        // The legal moves first: the rules' end of the game asks whether there are any.
        encoder.legal_moves_indexed(&self.work, &mut self.moves_buf, &mut self.labels_buf);
        if let Some((v, d)) = self.game_over(node) {
            self.undo_path(&leaf);
            self.clock.lap(Phase::Expand);
            return self.finish_exact(leaf, v, d, true);
        }
        let start = self.expand(node);
        if let Some(proof) = self.prove_at_expansion(node, start, hooks) {
            self.undo_path(&leaf);
            self.clock.lap(Phase::Expand);
            return self.finish_exact(leaf, proof.value().unwrap_or(0.0), 0.0, node != 0);
        }
        self.nodes[node as usize].state = State::Pending;
        std::mem::swap(&mut leaf.labels, &mut self.labels_buf);
        self.clock.lap(Phase::Expand);
        encoder.encode_planes(&self.work, input);
        self.clock.lap(Phase::Encode);
        leaf.material_value = (self.params.leaf_material_mix > 0.0).then(|| self.material_value());
        self.clock.lap(Phase::Material);
        self.undo_path(&leaf);
        self.clock.lap(Phase::Descend);
        Selected::NeedsEval(leaf)
    }

    /// Walks down from the root (its edge from `hooks` when they choose one, else PUCT)
    /// through expanded nodes, creating the children it enters, playing their moves on
    /// the working position and adding a virtual loss to each node it leaves; stops at the
    /// first node that is unexpanded, terminal, proven (perhaps by its mate search, due at
    /// this visit) or without moves. The path goes to `leaf`. Returns whether the mate
    /// search proved the last node; `None`, with everything undone, when the path runs
    /// into a leaf still waiting for its evaluation (a collision).
    fn descend<H: TreeHooks + ?Sized>(&mut self, leaf: &mut Leaf, hooks: &mut H) -> Option<bool> {
        leaf.path.clear();
        leaf.path.push(0);
        let mut node = 0u32;
        loop {
            let n = self.nodes[node as usize];
            match n.state {
                State::Unexpanded | State::Terminal => return Some(false),
                State::Expanded if n.proof != Proof::Unknown || n.edge_len == 0 => return Some(false),
                State::Expanded if n.mate_search_due && self.mate_search_on_revisit(node).is_some() => {
                    return Some(true)
                }
                State::Pending => {
                    self.undo_path(leaf);
                    for &i in &leaf.path[..leaf.path.len() - 1] {
                        self.nodes[i as usize].in_flight -= 1;
                    }
                    return None;
                }
                State::Expanded => {
                    let e = match node {
                        0 => hooks.root_edge(self).unwrap_or_else(|| self.select_puct(0)),
                        _ => self.select_puct(node),
                    };
                    let ei = (n.edge_start + e) as usize;
                    let mut child = self.edges[ei].child;
                    if child == NONE {
                        child = self.nodes.len() as u32;
                        self.nodes.push(Node::new());
                        self.edges[ei].child = child;
                    }
                    self.nodes[node as usize].in_flight += 1;
                    self.work.play(self.edges[ei].mv);
                    node = child;
                    leaf.path.push(node);
                }
            }
        }
    }

    /// The exact (value, draw) of a simulation that ends at `node` (the working position)
    /// when it is already known: terminal, or proven.
    fn known_result(&self, node: u32) -> Option<(f32, f32)> {
        let n = self.nodes[node as usize];
        let exact = match n.state {
            State::Terminal => Some(n.terminal),
            _ => n.proof.value().map(|v| (v, 0.0)),
        };
        // An expanded node without edges that is not proven cannot happen (no moves is
        // terminal); treat it as a draw to be safe.
        let exact = exact.or(if n.state == State::Expanded && n.edge_len == 0 { Some((0.0, 1.0)) } else { None });
        exact.map(|e| self.scored(e))
    }

    /// Whether the game is over at the new leaf `node` (the working position) by the
    /// rules: then the node becomes terminal, with its proof, and its exact (value, draw)
    /// is returned.
    fn game_over(&mut self, node: u32) -> Option<(f32, f32)> {
        let (v, d, proof) = outcome_value(&self.work, &self.end_rules, !self.moves_buf.is_empty())?;
        let nd = &mut self.nodes[node as usize];
        nd.state = State::Terminal;
        nd.terminal = (v, d);
        nd.proof = proof;
        Some(self.scored((v, d)))
    }

    /// Gives the new leaf `node` (the working position) its edges, one for each legal
    /// move (the moves in `moves_buf`, their labels in `labels_buf`), priors not yet
    /// known. Returns the index of its first edge.
    fn expand(&mut self, node: u32) -> u32 {
        let start = self.edges.len() as u32;
        self.edges.extend(self.moves_buf.iter().map(|&mv| Edge { mv, prior: 0.0, child: NONE }));
        let nd = &mut self.nodes[node as usize];
        nd.edge_start = start;
        nd.edge_len = self.moves_buf.len() as u32;
        start
    }

    /// The proofs looked for at the expansion of `node` (its edges from `start`): the mate
    /// search at expansion (`mate_search_plies`), then the hooks' (a win from a leaf, a
    /// proof of the root). A proven node gets uniform priors, so that it is well-formed
    /// if it is (or becomes) a root, and its proof, which is returned.
    fn prove_at_expansion<H: TreeHooks + ?Sized>(&mut self, node: u32, start: u32, hooks: &mut H) -> Option<Proof> {
        let defer = self.params.mate_search_visit >= 2 && self.params.mate_search_plies > 0 && node != 0;
        let mut proven = if defer { None } else { self.mate_search(start, self.moves_buf.len()) };
        self.nodes[node as usize].mate_search_due = defer;
        if proven.is_none() && node != 0 {
            if let Some(line) = hooks.leaf_win(&self.work, &self.params) {
                proven = self.prove_win_by(start, &line);
            }
        }
        if proven.is_none() && node == 0 && hooks.root_expanded(self) {
            proven = Some(self.nodes[0].proof);
        }
        let proof = proven?;
        let uniform = 1.0 / self.moves_buf.len().max(1) as f32;
        for e in &mut self.edges[start as usize..] {
            e.prior = uniform;
        }
        let nd = &mut self.nodes[node as usize];
        nd.state = State::Expanded;
        nd.proof = proof;
        Some(proof)
    }

    /// The mate search (`mate_search_plies`) at the working position, whose legal moves are
    /// the `len` edges from `start`: proves the node lost when every evasion of a check
    /// allows an immediate win (a mate in 3 for the opponent), or won when one of its moves
    /// wins at once (that edge gets a terminal child).
    fn mate_search(&mut self, start: u32, len: usize) -> Option<Proof> {
        let edges = start as usize..start as usize + len;
        if self.params.mate_search_plies >= 3 && self.work.in_check() && self.prove_evasions(edges.clone()) {
            return Some(Proof::Loss(2));
        }
        if self.params.mate_search_plies == 0 {
            return None;
        }
        let moves = self.edges[edges].iter().map(|e| e.mv);
        let i = first_immediate_win(&mut self.work, moves, &self.end_rules)?;
        let child = self.nodes.len() as u32;
        let mut c = Node::new();
        c.state = State::Terminal;
        c.terminal = (-1.0, 0.0);
        c.proof = Proof::Loss(0);
        self.nodes.push(c);
        self.edges[start as usize + i].child = child;
        Some(Proof::Win(1))
    }

    /// The mate search that `node` (the working position, expanded and evaluated) put off
    /// to this visit: its proof, now the node's, if it found one. Runs once, at the first
    /// simulation through the node, before which no edge has a child (children are made
    /// by simulations through it), so that the proofs' children are new nodes; a root
    /// that was an inner node (a reused tree) keeps its children and is not searched.
    fn mate_search_on_revisit(&mut self, node: u32) -> Option<Proof> {
        let n = self.nodes[node as usize];
        self.nodes[node as usize].mate_search_due = false;
        if node == 0 {
            return None;
        }
        debug_assert!(self.edges[n.edges()].iter().all(|e| e.child == NONE));
        let proof = self.mate_search(n.edge_start, n.edge_len as usize)?;
        self.nodes[node as usize].proof = proof;
        Some(proof)
    }

    /// The node just expanded (its edges from `start`, its moves in `moves_buf`) wins by
    /// `line` (a [`TreeHooks::leaf_win`]): its first move's child is proven lost in the
    /// line's remaining plies. Returns the node's proof; `None` if the line's first move
    /// is not among the edges (then nothing is changed).
    fn prove_win_by(&mut self, start: u32, line: &[Move]) -> Option<Proof> {
        let i = self.moves_buf.iter().position(|&mv| Some(&mv) == line.first())?;
        let plies = line.len().min(u16::MAX as usize) as u16;
        let child = self.nodes.len() as u32;
        let mut c = Node::new();
        c.proof = Proof::Loss(plies - 1);
        self.nodes.push(c);
        self.edges[start as usize + i].child = child;
        Some(Proof::Win(plies))
    }

    /// The material value (win - loss) of the side to move at `work`: the quiescence
    /// search's, looked up first in the thread's [`MaterialCache`].
    fn material_value(&self) -> f32 {
        let check_plies = self.params.leaf_material_check_plies;
        let scale = self.params.leaf_material_scale;
        let key = self.work.zobrist() ^ MaterialCache::settings_key(self.work.variant(), check_plies, scale);
        MATERIAL_CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some(v) = cache.get(key) {
                return v;
            }
            let limits = rules::QuiescenceLimits { check_plies, ..Default::default() };
            let balance = rules::quiescent_balance(&self.work, self.work.side_to_move(), limits);
            let p = rules::material_win_probability(balance, scale as f64);
            let v = (2.0 * p - 1.0) as f32;
            cache.put(key, v);
            v
        })
    }

    /// Takes back the moves of `leaf`'s path on the working position.
    fn undo_path(&mut self, leaf: &Leaf) {
        for _ in 1..leaf.path.len() {
            self.work.undo();
        }
    }

    /// Backs up an exact result along the leaf's path (and its proof if `proven`).
    fn finish_exact(&mut self, leaf: Leaf, v: f32, d: f32, proven: bool) -> Selected {
        self.backup(&leaf.path, v, d);
        if proven {
            self.propagate_proof(&leaf.path);
        }
        let depth = leaf.depth();
        self.free_leaves.push(leaf);
        self.clock.lap(Phase::Backup);
        Selected::Exact { depth }
    }

    /// The side to move at `work` is in check and its evasions are the `edges`: gives
    /// every evasion after which the opponent wins at once a child node proven lost in one
    /// ply for the side to move. Returns whether all evasions are such. An evasion that
    /// ends the game itself (a fourfold repetition, which the opponent's perpetual check
    /// loses, or the length limit) is left to be found terminal when visited.
    fn prove_evasions(&mut self, edges: Range<usize>) -> bool {
        let mut all = true;
        for ei in edges {
            self.work.play(self.edges[ei].mv);
            // The costlier test (the rules' end of the game counts every legal move) last.
            self.work.generate_legal(&mut self.evasion_buf);
            let win = find_immediate_win(&mut self.work, &self.evasion_buf, &self.end_rules).is_some()
                && outcome_value(&self.work, &self.end_rules, !self.evasion_buf.is_empty()).is_none();
            self.work.undo();
            if win {
                let child = self.nodes.len() as u32;
                let mut c = Node::new();
                c.state = State::Expanded;
                c.proof = Proof::Win(1);
                self.nodes.push(c);
                self.edges[ei].child = child;
            } else {
                all = false;
            }
        }
        all
    }

    /// Marks root edge `ei`'s child (created if needed) as proven `child_proof` for its
    /// side to move, unless it already has a proof, and recomputes the root's proof from
    /// its children. For searches at the root ([`TreeHooks::root_expanded`]); returns the
    /// root's proof.
    pub fn prove_root_child(&mut self, ei: usize, child_proof: Proof) -> Proof {
        let mut child = self.edges[ei].child;
        if child == NONE {
            child = self.nodes.len() as u32;
            self.nodes.push(Node::new());
            self.edges[ei].child = child;
        }
        if self.nodes[child as usize].proof == Proof::Unknown {
            self.nodes[child as usize].proof = child_proof;
        }
        let p = self.proof_from_children(0);
        self.nodes[0].proof = p;
        p
    }

    /// Prefetches the logits that [`Tree::apply`] will read for `leaf` from `policy`.
    pub fn prefetch_priors(&self, leaf: &Leaf, policy: Logits<'_>) {
        match policy {
            Logits::F32(s) => prefetch_logits(s, &leaf.labels),
            Logits::F16(s) => prefetch_logits(s, &leaf.labels),
            Logits::Bf16(s) => prefetch_logits(s, &leaf.labels),
        }
    }

    /// Applies the evaluation of `leaf`: policy logits (`policy_len` values, f32 or the
    /// network's f16/bf16) and (win, draw, loss) for the leaf's side to move. Returns the
    /// value (win - loss) backed up.
    pub fn apply<'a>(&mut self, leaf: Leaf, policy: impl Into<Logits<'a>>, wdl: [f32; 3]) -> f32 {
        self.clock.start();
        let policy = policy.into();
        let node = *leaf.path.last().expect("non-empty path");
        let n = self.nodes[node as usize];
        debug_assert_eq!(n.state, State::Pending);
        let (start, len) = (n.edge_start as usize, n.edge_len as usize);
        // Softmax of the legal moves' logits.
        let t = if node == 0 { self.params.policy_softmax_temperature } else { 1.0 };
        let inv_t = 1.0 / t.max(1e-3);
        let buf = &mut self.logit_buf;
        let max = match policy {
            Logits::F32(s) => gather_logits(s, &leaf.labels, inv_t, buf, |&x| x),
            Logits::F16(s) => gather_logits(s, &leaf.labels, inv_t, buf, |x| x.to_f32()),
            Logits::Bf16(s) => gather_logits(s, &leaf.labels, inv_t, buf, |x| x.to_f32()),
        };
        let mut sum = 0.0f32;
        for x in buf.iter_mut() {
            *x = (*x - max).exp();
            sum += *x;
        }
        let edges = &mut self.edges[start..start + len];
        if sum > 0.0 && sum.is_finite() {
            for (e, &x) in edges.iter_mut().zip(buf.iter()) {
                e.prior = x / sum;
            }
        } else {
            edges.iter_mut().for_each(|e| e.prior = 1.0 / len as f32);
        }
        let mut v = wdl[0] - wdl[2];
        let mut d = wdl[1];
        if !v.is_finite() || !d.is_finite() {
            v = 0.0;
            d = 0.0;
        }
        let (mut v, mut d) = (v.clamp(-1.0, 1.0), d.clamp(0.0, 1.0));
        if let Some(m) = leaf.material_value {
            let mix = self.params.leaf_material_mix;
            v = (1.0 - mix) * v + mix * m;
            d *= 1.0 - mix;
        }
        self.nodes[node as usize].state = State::Expanded;
        self.backup(&leaf.path, v, d);
        self.free_leaves.push(leaf);
        self.clock.lap(Phase::Backup);
        v
    }

    /// Adds a simulation's result along `path` (value `v`, draw `d` for the leaf's side to
    /// move), removing the virtual losses.
    fn backup(&mut self, path: &[u32], v: f32, d: f32) {
        let mut v = v as f64;
        for &i in path.iter().rev() {
            let n = &mut self.nodes[i as usize];
            n.visits += 1;
            n.in_flight = n.in_flight.saturating_sub(1);
            n.value_sum += v;
            n.draw_sum += d as f64;
            v = -v;
        }
    }

    /// The proof of an expanded node from its children: the shortest win, or (every
    /// move loses) the longest loss.
    fn proof_from_children(&self, i: usize) -> Proof {
        let n = self.nodes[i];
        let mut win: Option<u16> = None;
        let mut all_lose = n.edge_len > 0;
        let mut longest = 0u16;
        for e in &self.edges[n.edges()] {
            if e.child == NONE {
                all_lose = false;
                continue;
            }
            match self.nodes[e.child as usize].proof {
                Proof::Loss(k) => win = Some(win.map_or(k.saturating_add(1), |w| w.min(k.saturating_add(1)))),
                Proof::Win(k) => longest = longest.max(k.saturating_add(1)),
                Proof::Unknown => all_lose = false,
            }
        }
        match win {
            Some(w) => Proof::Win(w),
            None if all_lose => Proof::Loss(longest),
            None => Proof::Unknown,
        }
    }

    /// After the leaf of `path` got a proof, updates its ancestors.
    fn propagate_proof(&mut self, path: &[u32]) {
        for k in (0..path.len().saturating_sub(1)).rev() {
            let i = path[k] as usize;
            if self.nodes[i].state != State::Expanded {
                return;
            }
            let p = self.proof_from_children(i);
            if p == self.nodes[i].proof || p == Proof::Unknown {
                return;
            }
            self.nodes[i].proof = p;
        }
    }

    /// (Q from the parent's view, visits including in flight) of edge `ei`; `None` while
    /// the child is unvisited and unproven. A proven child counts with its exact value
    /// even before its first visit.
    #[inline]
    pub fn edge_stats(&self, ei: usize) -> Option<(f32, u32)> {
        let c = self.edges[ei].child;
        if c == NONE {
            return None;
        }
        let n = &self.nodes[c as usize];
        let visits = n.visits + n.in_flight;
        let q = match n.proof {
            Proof::Win(_) => -1.0,
            Proof::Loss(_) => 1.0,
            Proof::Unknown => {
                if visits == 0 {
                    return None;
                }
                let vl = self.params.virtual_loss as f64 * n.in_flight as f64;
                (-(n.value_sum + vl) / visits as f64) as f32
            }
        };
        Some((q, visits))
    }

    /// The proof of edge `ei`'s child from the parent's view (`Win(n)`: the move wins in
    /// n plies, counting itself).
    pub fn edge_proof(&self, ei: usize) -> Proof {
        match self.edges[ei].child {
            NONE => Proof::Unknown,
            c => self.nodes[c as usize].proof.for_parent(),
        }
    }

    /// PUCT (log-growing c_puct, first-play urgency reduction): the edge (relative index)
    /// of `node` maximising Q + U.
    pub fn select_puct(&self, node: u32) -> u32 {
        let n = &self.nodes[node as usize];
        let parent_visits = (n.visits + n.in_flight).max(1) as f32;
        let c = self.params.c_puct + ((parent_visits + self.params.c_puct_base + 1.0) / self.params.c_puct_base).ln();
        let cs = c * parent_visits.sqrt();
        let parent_q = if n.visits > 0 { (n.value_sum / n.visits as f64) as f32 } else { 0.0 };
        let range = n.edges();
        let mut visited_policy = 0.0f32;
        for ei in range.clone() {
            let ch = self.edges[ei].child;
            if ch != NONE && self.nodes[ch as usize].visits + self.nodes[ch as usize].in_flight > 0 {
                visited_policy += self.edges[ei].prior;
            }
        }
        let red = if node == 0 { self.params.root_fpu_reduction } else { self.params.fpu_reduction };
        let fpu = parent_q - red * visited_policy.sqrt();
        let mut best = 0u32;
        let mut best_score = f32::NEG_INFINITY;
        for ei in range.clone() {
            let prior = self.edges[ei].prior;
            let (q, visits) = self.edge_stats(ei).unwrap_or((fpu, 0));
            let score = q + cs * prior / (1.0 + visits as f32);
            if score > best_score {
                best_score = score;
                best = (ei - range.start) as u32;
            }
        }
        best
    }

    /// The edge (absolute index) of `node` with the shortest proven win, if any.
    pub fn shortest_win_edge(&self, node: u32) -> Option<usize> {
        self.edge_range(node)
            .filter_map(|ei| match self.edge_proof(ei) {
                Proof::Win(k) => Some((ei, k)),
                _ => None,
            })
            .min_by_key(|&(_, k)| k)
            .map(|(ei, _)| ei)
    }

    /// The best edge (absolute index) of an expanded node: the shortest proven win, else
    /// the most visited move not proven to lose (ties: Q, then prior), else (all moves
    /// lose) the longest loss. `None` without edges.
    pub fn best_edge(&self, node: u32) -> Option<usize> {
        let n = &self.nodes[node as usize];
        if n.state != State::Expanded || n.edge_len == 0 {
            return None;
        }
        if let Some(ei) = self.shortest_win_edge(node) {
            return Some(ei);
        }
        let range = n.edges();
        let losing = |ei: usize| self.edge_proof(ei).is_loss();
        if range.clone().all(losing) {
            return range
                .filter_map(|ei| match self.edge_proof(ei) {
                    Proof::Loss(k) => Some((ei, k)),
                    _ => None,
                })
                .max_by_key(|&(_, k)| k)
                .map(|(ei, _)| ei);
        }
        let key = |ei: usize| {
            let (q, v) = self.edge_stats(ei).unwrap_or((-2.0, 0));
            (v, q, self.edges[ei].prior)
        };
        range.filter(|&ei| !losing(ei)).max_by(|&a, &b| {
            let (x, y) = (key(a), key(b));
            x.0.cmp(&y.0)
                .then(x.1.partial_cmp(&y.1).unwrap_or(std::cmp::Ordering::Equal))
                .then(x.2.partial_cmp(&y.2).unwrap_or(std::cmp::Ordering::Equal))
        })
    }

    /// The root's moves with their statistics, in move generation order.
    pub fn root_children(&self) -> Vec<ChildInfo> {
        self.root_edges()
            .map(|ei| {
                let e = self.edges[ei];
                let stats = self.edge_stats(ei);
                ChildInfo {
                    mv: e.mv,
                    prior: e.prior,
                    visits: stats.map_or(0, |s| s.1),
                    q: stats.map(|s| s.0),
                    proof: self.edge_proof(ei),
                }
            })
            .collect()
    }

    /// The root's (win, draw, loss) for its side to move: the mean of the simulations
    /// (exact when terminal or proven).
    pub fn root_wdl(&self) -> [f32; 3] {
        let r = &self.nodes[0];
        match (r.state, r.proof) {
            (State::Terminal, _) => {
                let (v, d) = r.terminal;
                let w = ((1.0 + v - d) * 0.5).max(0.0);
                return [w, d, (1.0 - w - d).max(0.0)];
            }
            (_, Proof::Win(_)) => return [1.0, 0.0, 0.0],
            (_, Proof::Loss(_)) => return [0.0, 0.0, 1.0],
            _ => {}
        }
        if r.visits == 0 {
            return [0.0, 1.0, 0.0];
        }
        let q = (r.value_sum / r.visits as f64) as f32;
        let d = ((r.draw_sum / r.visits as f64) as f32).clamp(0.0, 1.0);
        let w = ((1.0 + q - d) * 0.5).clamp(0.0, 1.0);
        [w, d, (1.0 - w - d).max(0.0)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn run_uniform(tree: &mut Tree, enc: &Encoder, sims: u64) {
        let mut input = vec![0.0; enc.input_len()];
        let policy = vec![0.0; enc.policy_size()];
        tree.begin_search();
        while tree.started() < sims {
            match tree.select_leaf(enc, &mut input, &mut ()) {
                Selected::NeedsEval(leaf) => {
                    tree.apply(leaf, &policy, [1.0 / 3.0; 3]);
                }
                Selected::Exact { .. } => {}
                Selected::Collision | Selected::Done => break,
            }
        }
    }

    /// A start-position tree of `mib` MiB that prunes when full.
    fn pruning_tree(mib: usize) -> (Encoder, Tree) {
        let params = SearchConfig { max_tree_mib: mib, ..SearchConfig::default() };
        let mut tree = Tree::new(params, EndRules::default(), &Position::startpos(Variant::Shogi));
        tree.set_prune_when_full(true);
        (Encoder::new(Variant::Shogi), tree)
    }

    #[test]
    fn pruning_frees_the_least_visited_subtrees_and_keeps_every_statistic_above_them() {
        let (enc, mut tree) = pruning_tree(64);
        run_uniform(&mut tree, &enc, 3000);
        let before = tree.tree_bytes();
        let root_children: Vec<(Move, u32)> = tree.edges[tree.root_edges()]
            .iter()
            .filter_map(|e| e.child().map(|c| (e.mv, tree.nodes[c as usize].visits)))
            .collect();
        let (root_visits, root_value) = (tree.nodes[0].visits, tree.nodes[0].value_sum);
        let pv_moves = |t: &Tree| -> Vec<Move> {
            let path = t.principal_path();
            path.windows(2)
                .map(|w| t.edges[t.nodes[w[0] as usize].edges()].iter().find(|e| e.child == w[1]).unwrap().mv)
                .collect()
        };
        let pv = pv_moves(&tree);
        let freed = tree.prune(before / 4);
        assert!(freed > 0 && tree.tree_bytes() <= before / 4, "{} of {before} bytes left", tree.tree_bytes());
        assert_eq!((tree.nodes[0].visits, tree.nodes[0].value_sum), (root_visits, root_value));
        let after: Vec<(Move, u32)> = tree.edges[tree.root_edges()]
            .iter()
            .filter_map(|e| e.child().map(|c| (e.mv, tree.nodes[c as usize].visits)))
            .collect();
        assert_eq!(after, root_children, "the root's children keep their visits");
        assert_eq!(pv_moves(&tree), pv, "the principal variation keeps its nodes");
        // The search goes on from the pruned tree: collapsed nodes are expanded anew.
        let visits = tree.nodes[0].visits;
        tree.set_prune_when_full(false);
        run_uniform(&mut tree, &enc, 500);
        assert_eq!(tree.nodes[0].visits, visits + 500);
    }

    #[test]
    fn a_full_tree_that_prunes_keeps_searching_within_its_memory() {
        let (enc, mut tree) = pruning_tree(1);
        run_uniform(&mut tree, &enc, 20_000);
        assert!(!tree.hit_memory_cap() && tree.started() == 20_000, "stopped after {}", tree.started());
        assert!(tree.prunes() >= 3, "pruned {} times", tree.prunes());
        assert!(tree.tree_bytes() <= tree.max_tree_bytes() + 64 * 1024, "{} bytes", tree.tree_bytes());
        // Without pruning the same tree stops at its cap.
        let (enc, mut tree) = pruning_tree(1);
        tree.set_prune_when_full(false);
        run_uniform(&mut tree, &enc, 20_000);
        assert!(tree.hit_memory_cap() && tree.started() < 20_000);
    }

    /// What one pruning costs on a full tree of `KOMA_PRUNE_MIB` MiB (default 256): a
    /// measurement for docs/performance.md, not a check.
    #[test]
    #[ignore]
    fn prune_cost() {
        let mib = std::env::var("KOMA_PRUNE_MIB").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
        let (enc, mut tree) = pruning_tree(mib);
        tree.set_prune_when_full(false);
        let start = std::time::Instant::now();
        run_uniform(&mut tree, &enc, u64::MAX);
        let fill = start.elapsed();
        let (bytes, sims) = (tree.tree_bytes(), tree.started());
        let start = std::time::Instant::now();
        let freed = tree.prune(tree.max_tree_bytes() / 2);
        let took = start.elapsed();
        eprintln!(
            "{mib} MiB: filled by {sims} simulations in {fill:?} ({} nodes, {bytes} bytes); one pruning to half freed {freed} bytes in {took:?} ({:.2}% of the fill time)",
            tree.nodes.len(),
            100.0 * took.as_secs_f64() / fill.as_secs_f64()
        );
    }

    /// A shogi tree at `sfen` (`None`: the start position) with default settings.
    fn shogi_tree(sfen: Option<&str>) -> (Encoder, Position, Tree) {
        let pos = match sfen {
            Some(s) => Position::from_sfen(Variant::Shogi, s).unwrap(),
            None => Position::startpos(Variant::Shogi),
        };
        let tree = Tree::new(SearchConfig::default(), EndRules::default(), &pos);
        (Encoder::new(Variant::Shogi), pos, tree)
    }

    #[test]
    fn reroot_keeps_the_subtree() {
        let (enc, pos, mut tree) = shogi_tree(None);
        run_uniform(&mut tree, &enc, 400);
        let best = tree.root_children().into_iter().max_by_key(|c| c.visits).unwrap();
        let mut next = pos.clone();
        next.play(best.mv);
        let kept = tree.set_root(&next);
        assert_eq!(kept, best.visits);
        assert_eq!(tree.root_position().to_sfen(), next.to_sfen());
        run_uniform(&mut tree, &enc, 100);
        assert!(tree.root_visits() >= kept + 100);
        // Another game: a fresh tree.
        let other = rules::parse_position_command(Variant::Shogi, "startpos moves 2g2f").unwrap();
        assert_eq!(tree.set_root(&other), 0);
    }

    #[test]
    fn mate_in_one_is_proven_with_its_distance() {
        let (enc, _, mut tree) = shogi_tree(Some("4k4/9/4P4/9/9/9/9/9/4K4 b G 1"));
        run_uniform(&mut tree, &enc, 50);
        assert_eq!(tree.root_proof(), Proof::Win(1));
        assert_eq!(tree.started(), 1);
        let ei = tree.best_edge(0).unwrap();
        assert_eq!(tree.edge(ei).mv.to_usi(), "G*5b");
        assert_eq!(tree.edge_proof(ei), Proof::Win(1));
        assert_eq!(tree.root_wdl(), [1.0, 0.0, 0.0]);
    }

    /// Whether some legal move of the side to move wins at once, found by making each
    /// (no filter): the mate search's reference.
    fn wins_at_once(pos: &mut Position, mv: Move) -> bool {
        let us = pos.side_to_move();
        pos.play(mv);
        let win = pos.outcome(&EndRules::default()).is_some_and(|o| {
            o.winner == Some(us)
                && matches!(o.reason, rules::Reason::Checkmate | rules::Reason::NoMoves | rules::Reason::RoyalCapture)
        });
        pos.undo();
        win
    }

    /// The mate search at expansion (its check filter and the king's escapes in front of
    /// making a move) finds a winning move exactly where making every legal move finds
    /// one: on the 120 mate problems of the cshogi fixture (mates in 1 and their first
    /// plies), a mate by discovery, and every position of random games in standard and
    /// sho shogi.
    #[test]
    fn the_mate_search_finds_a_win_where_making_every_move_does() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/mates-shogi.tsv");
        let mut positions: Vec<Position> = Vec::new();
        for line in std::fs::read_to_string(fixture).unwrap().lines().filter(|l| !l.trim().is_empty()) {
            let mut pos = Position::from_sfen(Variant::Shogi, line.split('\t').next().unwrap()).unwrap();
            positions.push(pos.clone());
            for mv in pos.legal_moves().into_iter().take(12) {
                let mut next = pos.clone();
                next.play(mv);
                positions.push(next);
            }
            pos.play(pos.legal_moves()[0]);
        }
        // Mates by discovery alone: the silver's step off the file opens the rook's line onto
        // the king and its one escape, on the silver's own file.
        positions.push(Position::from_sfen(Variant::Shogi, "3lkl3/3p1p3/9/9/4S4/9/9/9/4R3K b - 1").unwrap());
        for variant in [Variant::Shogi, Variant::Sho] {
            positions.extend(crate::test_games::random_game_positions(variant, 0x2545_F491_4F6C_DD1D, 40, |game| {
                60 + game * 4
            }));
        }
        let mut wins = 0;
        for pos in &mut positions {
            let moves = pos.legal_moves();
            let found = find_immediate_win(pos, &moves, &EndRules::default());
            let any = moves.iter().any(|&mv| wins_at_once(pos, mv));
            assert_eq!(found.is_some(), any, "{}", pos.to_sfen());
            if let Some(i) = found {
                assert!(wins_at_once(pos, moves[i]), "{} does not win in {}", moves[i], pos.to_sfen());
                wins += 1;
            }
        }
        assert!(wins >= 100, "{wins} wins in {} positions", positions.len());
    }

    /// Descends the root edge it names.
    struct RootEdge(u32);

    impl TreeHooks for RootEdge {
        fn root_edge(&mut self, _tree: &Tree) -> Option<u32> {
            Some(self.0)
        }
    }

    /// `mate_search_visit` 2: a position with a mate on the board gets the network's
    /// evaluation at its first visit and its proof at its second. After gote's 1c1d
    /// sente mates by G*5b; with the search at expansion (1) that child is proven at its
    /// first visit, without an evaluation.
    #[test]
    fn the_mate_search_at_the_second_visit_proves_at_the_second_visit() {
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/4P3p/9/9/9/9/9/4K4 w G 1").unwrap();
        let enc = Encoder::new(Variant::Shogi);
        let mut input = vec![0.0; enc.input_len()];
        let policy = vec![0.0; enc.policy_size()];
        for visit in [1, 2] {
            let params = SearchConfig { mate_search_visit: visit, ..SearchConfig::default() };
            let mut tree = Tree::new(params, EndRules::default(), &pos);
            tree.begin_search();
            let Selected::NeedsEval(root) = tree.select_leaf(&enc, &mut input, &mut ()) else { panic!("the root") };
            tree.apply(root, &policy, [1.0 / 3.0; 3]);
            let edges = tree.root_edges();
            let i = tree.edges[edges.clone()].iter().position(|e| e.mv.to_usi() == "1c1d").unwrap();
            let mut pick = RootEdge(i as u32);
            let first = tree.select_leaf(&enc, &mut input, &mut pick);
            let child = tree.edges[edges.start + i].child as usize;
            match (visit, first) {
                (1, Selected::Exact { depth: 1 }) => assert_eq!(tree.nodes[child].proof, Proof::Win(1)),
                (2, Selected::NeedsEval(leaf)) => {
                    tree.apply(leaf, &policy, [1.0 / 3.0; 3]);
                    assert_eq!(tree.nodes[child].proof, Proof::Unknown, "evaluated, not yet proven");
                    let second = tree.select_leaf(&enc, &mut input, &mut pick);
                    assert!(matches!(second, Selected::Exact { depth: 1 }), "{second:?}");
                    assert_eq!(tree.nodes[child].proof, Proof::Win(1));
                    assert_eq!(tree.nodes[child].visits, 2);
                }
                (_, other) => panic!("visit {visit}: {other:?}"),
            }
            assert_eq!(tree.edge_proof(edges.start + i), Proof::Loss(2), "gote loses in 2 by that move");
        }
    }

    /// The leaf material mix: with a network that knows nothing (uniform policy, value
    /// 0), the rules' material alone makes the search take a hanging rook and back it
    /// up as a gain; without the mix every move reads 0.
    #[test]
    fn leaf_material_mix_sees_a_hanging_rook() {
        let sfen = "4k4/9/9/9/4r4/9/9/4R4/4K4 b - 1";
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        let enc = Encoder::new(Variant::Shogi);
        let search = |mix: f32| {
            let params = SearchConfig { leaf_material_mix: mix, ..SearchConfig::default() };
            let mut tree = Tree::new(params, EndRules::default(), &pos);
            run_uniform(&mut tree, &enc, 300);
            let best = tree.best_edge(0).unwrap();
            (tree.edge(best).mv.to_usi(), tree.edge_stats(best).unwrap().0)
        };
        let (mv, q) = search(1.0);
        assert_eq!(mv, "5h5e");
        assert!(q > 0.5, "a rook up reads as winning at scale 6: q {q}");
        let (_, q) = search(0.0);
        assert_eq!(q, 0.0, "a uniform evaluator's value, unmixed");
    }

    /// The thread's cache of leaf material values answers as the quiescence search does,
    /// for each variant and setting apart: the same position read at two scales and in
    /// two variants, twice each, gets each reading's own value.
    #[test]
    fn the_material_cache_answers_as_the_search() {
        let sfens =
            [(Variant::Shogi, "4k4/9/9/9/4r4/9/9/4R4/4K4 b - 1"), (Variant::Sho, "4k4/9/9/9/4r4/9/9/4R4/4K4 b - 1")];
        let mut seen = Vec::new();
        for _ in 0..2 {
            for (variant, sfen) in sfens {
                let pos = Position::from_sfen(variant, sfen).unwrap();
                for scale in [6.0f32, 36.0] {
                    for check_plies in [0, 1] {
                        let params = SearchConfig {
                            leaf_material_scale: scale,
                            leaf_material_check_plies: check_plies,
                            ..SearchConfig::default()
                        };
                        let limits = rules::QuiescenceLimits { check_plies, ..Default::default() };
                        let balance = rules::quiescent_balance(&pos, pos.side_to_move(), limits);
                        let p = rules::material_win_probability(balance, scale as f64);
                        let tree = Tree::new(params, EndRules::default(), &pos);
                        assert_eq!(tree.material_value(), (2.0 * p - 1.0) as f32, "{variant} {scale} {check_plies}");
                        seen.push(tree.material_value());
                    }
                }
            }
        }
        assert!(seen[0] != seen[2], "the scale changes the value: {seen:?}");
    }

    /// A move that completes a fourfold repetition (a draw) is worth the draw value of
    /// the side that plays it: with the uniform evaluator (every other move 0) gote seeks
    /// the repetition when a draw is worth +0.8 to it and avoids it at -0.8.
    #[test]
    fn the_draw_value_decides_for_or_against_a_repetition() {
        let cycle = "9c9d 1a2a 9d9c 2a1a ";
        let cmd = format!("sfen 8k/9/R8/9/9/9/9/9/4K4 b - 1 moves {}9c9d 1a2a 9d9c", cycle.repeat(2));
        let pos = rules::parse_position_command(Variant::Shogi, &cmd).unwrap();
        let enc = Encoder::new(Variant::Shogi);
        let search = |gote_draw: f32| {
            let mut tree = Tree::new(SearchConfig::default(), EndRules::default(), &pos);
            tree.set_draw_values([-gote_draw, gote_draw]);
            run_uniform(&mut tree, &enc, 400);
            let best = tree.best_edge(0).unwrap();
            let repeat = tree.root_children().into_iter().find(|c| c.mv.to_usi() == "2a1a").unwrap();
            (tree.edge(best).mv.to_usi(), repeat.q.unwrap_or(f32::NAN))
        };
        let (best, q) = search(0.8);
        assert_eq!(best, "2a1a");
        assert!((q - 0.8).abs() < 1e-5, "{q}");
        let (best, q) = search(-0.8);
        assert_ne!(best, "2a1a");
        assert!((q + 0.8).abs() < 1e-5, "{q}");
        // The draw value is gote's own at gote's nodes: giving it to sente flips the choice.
        let mut tree = Tree::new(SearchConfig::default(), EndRules::default(), &pos);
        tree.set_draw_values([0.8, -0.8]);
        run_uniform(&mut tree, &enc, 400);
        assert_ne!(tree.edge(tree.best_edge(0).unwrap()).mv.to_usi(), "2a1a");
    }

    /// Under the try rule the king's step onto 5a is found as a win at expansion.
    #[test]
    fn the_try_rule_is_a_win_in_one() {
        let pos = Position::from_sfen(Variant::Shogi, "9/4K4/9/9/9/9/9/9/k8 b - 1").unwrap();
        let enc = Encoder::new(Variant::Shogi);
        let rules = EndRules { impasse: ImpasseRule::Try, ..EndRules::default() };
        let mut tree = Tree::new(SearchConfig::default(), rules, &pos);
        run_uniform(&mut tree, &enc, 50);
        assert_eq!(tree.root_proof(), Proof::Win(1));
        assert_eq!(tree.edge(tree.best_edge(0).unwrap()).mv.to_usi(), "5b5a");
        let mut tree = Tree::new(SearchConfig::default(), EndRules::default(), &pos);
        run_uniform(&mut tree, &enc, 50);
        assert_eq!(tree.root_proof(), Proof::Unknown, "no try under the 27-point rule");
    }

    /// Several leaves in flight: a second descent avoids the first leaf (virtual loss)
    /// or collides with it; applying both leaves restores the in-flight counts.
    #[test]
    fn leaves_in_flight() {
        let (enc, _, mut tree) = shogi_tree(None);
        run_uniform(&mut tree, &enc, 30);
        let mut inputs = vec![0.0; 2 * enc.input_len()];
        let (a, b) = inputs.split_at_mut(enc.input_len());
        let Selected::NeedsEval(l1) = tree.select_leaf(&enc, a, &mut ()) else { panic!() };
        let Selected::NeedsEval(l2) = tree.select_leaf(&enc, b, &mut ()) else { panic!() };
        assert_ne!(l1.path, l2.path);
        let policy = vec![0.0; enc.policy_size()];
        tree.apply(l2, &policy, [0.5, 0.0, 0.5]);
        tree.apply(l1, &policy, [0.5, 0.0, 0.5]);
        assert!(tree.nodes.iter().all(|n| n.in_flight == 0));
        assert_eq!(tree.root_visits(), 32);
    }
}
