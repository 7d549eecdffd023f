//! The root policy of self-play: a search of one position with a simulation budget,
//! root noise, a Gumbel or PUCT root, the policy target and the move choice, driven step
//! by step and independent of how leaves get evaluated. (Play, the engine and the
//! arena, goes through the `driver` module instead.)
//!
//! Stepping lets a self-play worker interleave the searches of many games and evaluate
//! all their leaves in one batch:
//!
//! ```text
//! search.start(&position, simulations, noise);
//! loop {
//!     match search.select(&encoder, &mut input) {
//!         Step::NeedsEval => { /* evaluate input */ search.apply(policy_logits, wdl, &mut rng) }
//!         Step::Done => break,
//!         Step::Collision => { /* evaluate the pending leaves first */ }
//!     }
//! }
//! let mv = search.choose_move(temperature, &mut rng);
//! ```
//!
//! The tree itself (nodes and edges, terminal rules, proofs with mate distances, the
//! mate search at expansion, backup, PUCT) is [`crate::tree::Tree`], shared with the
//! players' search (`player_tree`). What self-play adds lives here: a simulation
//! budget, root noise, the Gumbel root, the policy target and the move choice.
//!
//! Root selection: PUCT (AlphaZero, with log-growing c_puct, first-play urgency
//! reduction and Dirichlet noise), or Gumbel AlphaZero (Gumbel top-k sampling of m
//! actions, sequential halving, completed-Q policy target). Inner nodes always use PUCT.
//! A proven win is always played (the shortest one), and a move proven to lose is not
//! played while another is not.

use std::collections::VecDeque;

use nn::encoding::Encoder;
use nn::{EncodeTarget, Logits};
use rules::{EndRules, Move, Position};

use crate::config::SearchConfig;
use crate::rng::Rng;
use crate::tree::{Leaf, Selected, Tree, TreeHooks};

pub use crate::tree::{ChildInfo, Proof};

/// What [`Search::select`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A leaf's input planes were written; evaluate them and call [`Search::apply`].
    NeedsEval,
    /// The search has used its budget (or is proven, or hit the memory cap); nothing was
    /// written. Pending leaves, if any, still need [`Search::apply`].
    Done,
    /// The selected path ends in a leaf already waiting for its evaluation (several
    /// leaves in flight); apply the pending evaluations first.
    Collision,
}

/// Sequential halving state of a Gumbel root; chooses the root edges of the descents
/// while active.
#[derive(Default)]
struct GumbelRoot {
    /// Per root edge: Gumbel noise (0 without noise) and log prior (at the policy
    /// softmax temperature: what the halving compares).
    g: Vec<f32>,
    logits: Vec<f32>,
    /// Per root edge: the network's own log prior (temperature 1), for the policy
    /// target, so that a softmax temperature never reaches the training data.
    net_logits: Vec<f32>,
    /// Root edge indices still in the running.
    candidates: Vec<u32>,
    /// Root edges to visit next, in order.
    queue: VecDeque<u32>,
    phases: u32,
    /// Simulations of the search (the root's own evaluation included).
    budget: u32,
    /// Simulations for the children (budget minus the root's own evaluation).
    child_budget: u32,
    /// The network's value of the root.
    root_nn_value: f32,
    active: bool,
}

impl TreeHooks for GumbelRoot {
    fn root_edge(&mut self, tree: &Tree) -> Option<u32> {
        if !self.active {
            return None;
        }
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            self.next_phase(tree);
        }
    }
}

impl GumbelRoot {
    /// Samples the m candidates (Gumbel top-k over the root priors) and queues the first
    /// phase. The root must be expanded with its priors.
    fn init(&mut self, tree: &Tree, noise: bool, rng: &mut Rng) {
        let root = tree.root_edges();
        let len = root.len();
        self.g.clear();
        self.logits.clear();
        self.net_logits.clear();
        // ln softmax(l / T) = l / T - const: T times it is the network's logit (+ const).
        let t = tree.params().policy_softmax_temperature;
        for ei in root {
            let logit = tree.edge(ei).prior.max(1e-30).ln();
            self.logits.push(logit);
            self.net_logits.push(t * logit);
            self.g.push(if noise { rng.gumbel() } else { 0.0 });
        }
        let m = tree.params().gumbel_m.min(len).max(1);
        let mut order: Vec<u32> = (0..len as u32).collect();
        order.sort_by(|&a, &b| {
            let (sa, sb) = (self.g[a as usize] + self.logits[a as usize], self.g[b as usize] + self.logits[b as usize]);
            sb.partial_cmp(&sa).unwrap_or(std::cmp::Ordering::Equal)
        });
        order.truncate(m);
        self.candidates = order;
        self.phases = (m as f32).log2().ceil().max(1.0) as u32;
        self.child_budget = self.budget.saturating_sub(1).max(1);
        self.queue.clear();
        self.active = true;
        self.fill_queue(tree);
    }

    /// Queues this phase's visits of the candidates (round robin).
    fn fill_queue(&mut self, tree: &Tree) {
        let k = self.candidates.len().max(1) as u32;
        let per = if k <= 2 {
            // Last phase: the rest of the budget.
            let left = (self.budget as u64).saturating_sub(tree.started()) as u32;
            left.div_ceil(k).max(1)
        } else {
            (self.child_budget / (self.phases * k)).max(1)
        };
        for _ in 0..per {
            self.queue.extend(self.candidates.iter().copied());
        }
    }

    /// Halves the candidates by g + logit + sigma(q) and queues the next phase.
    fn next_phase(&mut self, tree: &Tree) {
        if self.candidates.len() > 2 {
            let mut scored: Vec<(f32, u32)> = self.candidates.iter().map(|&c| (self.score(tree, c, true), c)).collect();
            scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
            let keep = scored.len().div_ceil(2);
            self.candidates = scored[..keep].iter().map(|&(_, c)| c).collect();
        }
        self.fill_queue(tree);
    }

    fn max_child_visits(tree: &Tree) -> u32 {
        tree.root_edges().filter_map(|ei| tree.edge_stats(ei).map(|(_, n)| n)).max().unwrap_or(0)
    }

    fn sigma(tree: &Tree, q: f32, max_visits: u32) -> f32 {
        // q in [-1, 1] -> [0, 1].
        let p = tree.params();
        (p.gumbel_c_visit + max_visits as f32) * p.gumbel_c_scale * ((q + 1.0) * 0.5)
    }

    /// (g +) logit + sigma(q) of root edge `e` (relative index; without a value: q = v_mix).
    fn score(&self, tree: &Tree, e: u32, with_g: bool) -> f32 {
        let ei = tree.root_edges().start + e as usize;
        let maxn = Self::max_child_visits(tree);
        let q = match tree.edge_stats(ei) {
            Some((q, _)) => q,
            None => self.v_mix(tree),
        };
        let g = if with_g { self.g[e as usize] } else { 0.0 };
        g + self.logits[e as usize] + Self::sigma(tree, q, maxn)
    }

    /// The sequential halving winner: the candidate with the best g + logit + sigma(q)
    /// among those not proven to lose. `None` when every candidate is proven to lose.
    fn winner(&self, tree: &Tree) -> Option<usize> {
        let start = tree.root_edges().start;
        self.candidates
            .iter()
            .copied()
            .filter(|&c| !tree.edge_proof(start + c as usize).is_loss())
            .map(|c| (self.score(tree, c, true), c))
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
            .map(|(_, c)| start + c as usize)
    }

    /// The improved policy softmax(net logit + sigma(completed Q)) over the root's moves
    /// (the Gumbel paper's policy target), probabilities under 1e-5 left out.
    fn improved_policy(&self, tree: &Tree) -> Vec<(Move, f32)> {
        let root = tree.root_edges();
        let maxn = Self::max_child_visits(tree);
        let vmix = self.v_mix(tree);
        let scores: Vec<f32> = root
            .clone()
            .enumerate()
            .map(|(i, ei)| {
                let q = tree.edge_stats(ei).map_or(vmix, |s| s.0);
                self.net_logits[i] + Self::sigma(tree, q, maxn)
            })
            .collect();
        let max = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
        let sum: f32 = exps.iter().sum();
        root.zip(&exps).filter(|&(_, &x)| x / sum >= 1e-5).map(|(ei, &x)| (tree.edge(ei).mv, x / sum)).collect()
    }

    /// Gumbel paper's v_mix: the root's network value mixed with the prior-weighted Q of
    /// the visited children.
    fn v_mix(&self, tree: &Tree) -> f32 {
        let (mut sum_n, mut sum_p, mut sum_pq) = (0f64, 0f64, 0f64);
        for ei in tree.root_edges() {
            if let Some((q, n)) = tree.edge_stats(ei).filter(|s| s.1 > 0) {
                sum_n += n as f64;
                let p = tree.edge(ei).prior as f64;
                sum_p += p;
                sum_pq += p * q as f64;
            }
        }
        if sum_n == 0.0 || sum_p <= 0.0 {
            return self.root_nn_value;
        }
        ((self.root_nn_value as f64 + sum_n / sum_p * sum_pq) / (1.0 + sum_n)) as f32
    }
}

/// One game tree and the state of its current search.
pub struct Search {
    tree: Tree,
    budget: u32,
    noise: bool,
    pending: VecDeque<Leaf>,
    noise_buf: Vec<f32>,
    gumbel: GumbelRoot,
    /// The root got its network evaluation in this search (it was not proven first).
    root_evaluated: bool,
    /// Network evaluations requested by this search object since it was created.
    evaluations: u64,
}

impl Search {
    pub fn new(params: SearchConfig, end_rules: EndRules, variant: rules::Variant) -> Search {
        Search {
            tree: Tree::new(params, end_rules, &Position::startpos(variant)),
            budget: 0,
            noise: false,
            pending: VecDeque::new(),
            noise_buf: Vec::new(),
            gumbel: GumbelRoot::default(),
            root_evaluated: false,
            evaluations: 0,
        }
    }

    pub fn params(&self) -> &SearchConfig {
        self.tree.params()
    }

    pub fn end_rules(&self) -> &EndRules {
        self.tree.end_rules()
    }

    /// The tree of the current search.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Starts a new search of `pos` (its game history counts for repetitions) with
    /// `simulations` simulations (the root's own evaluation included). `noise`: Dirichlet
    /// noise at a PUCT root, Gumbel noise at a Gumbel root (self-play); off for play.
    pub fn start(&mut self, pos: &Position, simulations: u32, noise: bool) {
        assert!(self.pending.is_empty(), "Search::start with leaves still pending");
        self.tree.reset(pos);
        self.tree.begin_search();
        self.budget = simulations.max(1);
        self.noise = noise;
        self.gumbel.active = false;
        self.gumbel.budget = self.budget;
        self.gumbel.root_nn_value = 0.0;
        self.root_evaluated = false;
    }

    pub fn root_position(&self) -> &Position {
        self.tree.root_position()
    }

    /// Simulations started in this search.
    pub fn simulations(&self) -> u32 {
        self.tree.started() as u32
    }

    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Times the tree's phases from now on, or stops ([`Tree::set_phase_timing`]).
    pub fn set_phase_timing(&mut self, on: bool) {
        self.tree.set_phase_timing(on);
    }

    /// The tree's time by phase since the last call (zero unless timing).
    pub fn take_phase_times(&mut self) -> crate::phases::PhaseTimes {
        self.tree.take_phase_times()
    }

    /// Bytes held by the tree.
    pub fn tree_bytes(&self) -> usize {
        self.tree.tree_bytes()
    }

    /// Whether the search stopped at the memory cap.
    pub fn hit_memory_cap(&self) -> bool {
        self.tree.hit_memory_cap()
    }

    pub fn root_proof(&self) -> Proof {
        self.tree.root_proof()
    }

    /// Leaves waiting for [`Search::apply`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whether no further simulation will be started.
    pub fn is_done(&self) -> bool {
        self.tree.is_done() || self.tree.started() >= self.budget as u64
    }

    /// Runs simulations until one needs a network evaluation (its input planes are
    /// written to `input`, `encoder.input_len()` values) or the search is done.
    /// Simulations that end in terminal or proven nodes are backed up on the spot.
    pub fn select<'p>(&mut self, encoder: &Encoder, input: impl Into<EncodeTarget<'p>>) -> Step {
        let mut input = input.into();
        loop {
            if self.tree.started() >= self.budget as u64 {
                return Step::Done;
            }
            match self.tree.select_leaf(encoder, input.reborrow(), &mut self.gumbel) {
                Selected::NeedsEval(leaf) => {
                    self.evaluations += 1;
                    self.pending.push_back(leaf);
                    return Step::NeedsEval;
                }
                Selected::Exact { .. } => {}
                Selected::Collision => return Step::Collision,
                Selected::Done => return Step::Done,
            }
        }
    }

    /// Asks the cache for what [`Search::apply`] will read of `policy` (the next pending
    /// leaf's logits), to be called a leaf or two ahead.
    pub fn prefetch_priors<'a>(&self, policy: impl Into<Logits<'a>>) {
        if let Some(leaf) = self.pending.front() {
            self.tree.prefetch_priors(leaf, policy.into());
        }
    }

    /// Applies the evaluation of the oldest pending leaf: `policy` is the network's
    /// policy logits for that position (`policy_len` values), `wdl` its (win, draw, loss)
    /// for the side to move. The root's evaluation also sets up the root (noise, Gumbel
    /// candidates).
    pub fn apply<'a>(&mut self, policy: impl Into<Logits<'a>>, wdl: [f32; 3], rng: &mut Rng) {
        let leaf = self.pending.pop_front().expect("Search::apply without a pending leaf");
        let root = leaf.is_root();
        let v = self.tree.apply(leaf, policy, wdl);
        if !root {
            return;
        }
        self.root_evaluated = true;
        self.gumbel.root_nn_value = v;
        let params = self.tree.params();
        let len = self.tree.root_edges().len();
        if params.gumbel {
            self.gumbel.init(&self.tree, self.noise, rng);
        } else if self.noise && params.dirichlet_epsilon > 0.0 && len > 1 {
            // KataGo: the same total concentration whatever the number of moves.
            let alpha = params.dirichlet_alpha_total as f64 / len as f64;
            let eps = params.dirichlet_epsilon;
            rng.dirichlet(alpha, len, &mut self.noise_buf);
            for (p, &nz) in self.tree.root_priors_mut().zip(&self.noise_buf) {
                *p = (1.0 - eps) * *p + eps * nz;
            }
        }
    }

    /// Root children: move, prior (after noise), visits, Q and proof.
    pub fn root_children(&self) -> Vec<ChildInfo> {
        self.tree.root_children()
    }

    /// The root's (win, draw, loss) for its side to move: the mean of the simulations
    /// (exact when proven).
    pub fn root_wdl(&self) -> [f32; 3] {
        self.tree.root_wdl()
    }

    /// The policy target over the root's legal moves as (move, probability): the visit
    /// distribution (PUCT), or softmax(network logit + sigma(completed Q)) (Gumbel; the
    /// network's logits at temperature 1, whatever `policy_softmax_temperature`). A proven
    /// win gives all weight to the (shortest) winning move. Empty (no policy target) when
    /// the root has no moves, or was proven lost before its evaluation: every move then
    /// loses at once, the search compared none of them, and a uniform target would only
    /// pull the network's policy towards uniform.
    pub fn policy_target(&self) -> Vec<(Move, f32)> {
        let t = &self.tree;
        let root = t.root_edges();
        if root.is_empty() {
            return Vec::new();
        }
        if let Some(ei) = t.shortest_win_edge(0) {
            return vec![(t.edge(ei).mv, 1.0)];
        }
        if !self.root_evaluated {
            return Vec::new();
        }
        if t.params().gumbel && self.gumbel.active {
            return self.gumbel.improved_policy(t);
        }
        let visits: Vec<u32> = root.clone().map(|ei| t.edge_stats(ei).map_or(0, |s| s.1)).collect();
        let total: u32 = visits.iter().sum();
        if total == 0 {
            return root.map(|ei| (t.edge(ei).mv, t.edge(ei).prior)).collect();
        }
        root.zip(&visits).filter(|&(_, &n)| n > 0).map(|(ei, &n)| (t.edge(ei).mv, n as f32 / total as f32)).collect()
    }

    /// The move to play. A proven win plays the shortest winning move; a move proven to
    /// lose is never played while another is not (all lose: the longest loss). Gumbel
    /// root: the sequential halving winner (argmax of g + logit + sigma(q) among the last
    /// candidates not proven to lose; it already samples, so `temperature` is not used;
    /// every candidate lost: the best other move). PUCT root: visits^(1/T) sampled, or
    /// for T = 0 the most visited move (ties: higher Q, then prior). `None` when the root
    /// has no legal move.
    pub fn choose_move(&self, temperature: f32, rng: &mut Rng) -> Option<Move> {
        let t = &self.tree;
        let root = t.root_edges();
        if root.is_empty() {
            return None;
        }
        if let Some(ei) = t.shortest_win_edge(0) {
            return Some(t.edge(ei).mv);
        }
        if t.params().gumbel && self.gumbel.active {
            let ei = self.gumbel.winner(t).or_else(|| t.best_edge(0)).unwrap_or(root.start);
            return Some(t.edge(ei).mv);
        }
        if temperature > 0.0 {
            // Never play a move proven to lose while another is not.
            let all_losing = root.clone().all(|ei| t.edge_proof(ei).is_loss());
            let ok = |ei: usize| all_losing || !t.edge_proof(ei).is_loss();
            let visits = |ei: usize| t.edge_stats(ei).map_or(0, |s| s.1);
            let inv = 1.0 / temperature as f64;
            let max_n = root.clone().filter(|&ei| ok(ei)).map(visits).max().unwrap_or(0).max(1) as f64;
            let w: Vec<f64> = root
                .clone()
                .map(|ei| if ok(ei) && visits(ei) > 0 { (visits(ei) as f64 / max_n).powf(inv) } else { 0.0 })
                .collect();
            if w.iter().any(|&x| x > 0.0) {
                return Some(t.edge(root.start + rng.weighted(&w)).mv);
            }
        }
        Some(t.edge(t.best_edge(0).unwrap_or(root.start)).mv)
    }

    /// Runs a whole search with an evaluator in the calling thread (tests, tools):
    /// `evaluate(input) -> (policy logits, wdl)`.
    pub fn run<F>(&mut self, encoder: &Encoder, rng: &mut Rng, mut evaluate: F)
    where
        F: FnMut(&[f32]) -> (Vec<f32>, [f32; 3]),
    {
        let never = |_: &Search| false;
        match self.run_until(encoder, rng, never, |input| Ok::<_, std::convert::Infallible>(evaluate(input))) {
            Ok(()) => {}
            Err(e) => match e {},
        }
    }

    /// [`Search::run`] that also stops when `stop(self)` says so (checked before every
    /// simulation after the first: a time budget) or when an evaluation fails (its error
    /// is returned; the search keeps what it has).
    pub fn run_until<E>(
        &mut self,
        encoder: &Encoder,
        rng: &mut Rng,
        mut stop: impl FnMut(&Search) -> bool,
        mut evaluate: impl FnMut(&[f32]) -> Result<(Vec<f32>, [f32; 3]), E>,
    ) -> Result<(), E> {
        let mut input = vec![0.0; encoder.input_len()];
        loop {
            if self.simulations() > 1 && stop(self) {
                return Ok(());
            }
            match self.select(encoder, &mut input) {
                Step::NeedsEval => {
                    let (p, wdl) = evaluate(&input)?;
                    self.apply(&p, wdl, rng);
                }
                Step::Done | Step::Collision => return Ok(()),
            }
        }
    }
}
