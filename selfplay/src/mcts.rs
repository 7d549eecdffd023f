//! Monte Carlo tree search over one game position, independent of how leaves get
//! evaluated.
//!
//! The caller drives it step by step, which lets a self-play worker interleave the
//! searches of many games and evaluate all their leaves in one batch (and lets the USI
//! engine run several leaves of one tree at once with virtual loss):
//!
//! ```text
//! search.start(&position, simulations, noise, &mut rng);
//! loop {
//!     match search.select(&encoder, &mut input, &mut rng) {
//!         Step::NeedsEval => { /* evaluate input */ search.apply(policy_logits, wdl, &mut rng) }
//!         Step::Done => break,
//!         Step::Collision => { /* evaluate the pending leaves first */ }
//!     }
//! }
//! let mv = search.choose_move(temperature, &mut rng);
//! ```
//!
//! Tree: arena-allocated nodes and edges (`Vec`s, children of a node are a contiguous
//! range of edges; an edge gets a node when first visited). Values are win/draw/loss
//! from the side to move's view at each node. Terminal states come from the rules
//! (`Position::outcome`: mate, no moves, royal capture, bare king, repetition and
//! perpetual check with the game history, maximum length) plus the 27-point declaration.
//! Proven wins and losses propagate up (MCTS-solver), and with `mate_search_plies`
//! every expansion looks for an immediate win first (and, in check, for evasions that
//! lose at once), so that mates are found even with a uniform evaluator.
//!
//! Root selection: PUCT (AlphaZero, with log-growing c_puct, first-play urgency
//! reduction and Dirichlet noise), or Gumbel AlphaZero (Gumbel top-k sampling of m
//! actions, sequential halving, completed-Q policy target). Inner nodes always use PUCT.

use std::collections::VecDeque;

use model::encoding::Encoder;
use rules::{EndRules, Move, Position, RoyalRule};

use crate::config::SearchConfig;
use crate::rng::Rng;

const NONE: u32 = u32::MAX;

/// Proof status of a node, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    Unknown,
    /// The side to move wins with best play (it has a winning move).
    Win,
    /// The side to move loses whatever it plays.
    Loss,
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

#[derive(Clone, Copy, Debug)]
struct Edge {
    mv: Move,
    prior: f32,
    child: u32,
}

#[derive(Clone, Copy, Debug)]
struct Node {
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
        }
    }
}

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

struct PendingLeaf {
    path: Vec<u32>,
    labels: Vec<u32>,
}

/// Sequential halving state of a Gumbel root.
#[derive(Default)]
struct GumbelRoot {
    /// Per root edge: Gumbel noise (0 without noise) and log prior.
    g: Vec<f32>,
    logits: Vec<f32>,
    /// Root edge indices still in the running.
    candidates: Vec<u32>,
    /// Root edges to visit next, in order.
    queue: VecDeque<u32>,
    phases: u32,
    /// Simulations for the children (budget minus the root's own evaluation).
    child_budget: u32,
    active: bool,
}

/// Statistics of one root child.
#[derive(Clone, Copy, Debug)]
pub struct ChildInfo {
    pub mv: Move,
    pub prior: f32,
    pub visits: u32,
    /// Mean value (win - loss) from the root's side to move's view; `None` if unvisited.
    pub q: Option<f32>,
    /// Proof status of the child from the root's side to move's view.
    pub proof: Proof,
}

/// One game tree and the state of its current search.
pub struct Search {
    params: SearchConfig,
    end_rules: EndRules,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// The position being searched (with its game history) and a working copy for
    /// descents (moves are played and taken back, so history-based rules see the path).
    root_pos: Position,
    work: Position,
    budget: u32,
    started: u32,
    noise: bool,
    capped: bool,
    max_tree_bytes: usize,
    pending: VecDeque<PendingLeaf>,
    free_paths: Vec<Vec<u32>>,
    moves_buf: Vec<Move>,
    labels_buf: Vec<usize>,
    noise_buf: Vec<f32>,
    logit_buf: Vec<f32>,
    root_nn_value: f32,
    gumbel: GumbelRoot,
    /// Network evaluations requested by this search object since it was created.
    evaluations: u64,
}

/// Result of a move played from a node: exact value for the side to move at the node
/// reached.
fn outcome_value(pos: &Position, end_rules: &EndRules) -> Option<(f32, f32, Proof)> {
    if pos.can_declare() {
        return Some((1.0, 0.0, Proof::Win));
    }
    let o = pos.outcome(end_rules)?;
    Some(match o.winner {
        None => (0.0, 1.0, Proof::Unknown),
        Some(c) if c == pos.side_to_move() => (1.0, 0.0, Proof::Win),
        Some(_) => (-1.0, 0.0, Proof::Loss),
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

impl Search {
    pub fn new(params: SearchConfig, end_rules: EndRules, variant: rules::Variant) -> Search {
        let max_tree_bytes = params.max_tree_mib.saturating_mul(1 << 20);
        let pos = Position::startpos(variant);
        Search {
            params,
            end_rules,
            nodes: Vec::new(),
            edges: Vec::new(),
            root_pos: pos.clone(),
            work: pos,
            budget: 0,
            started: 0,
            noise: false,
            capped: false,
            max_tree_bytes,
            pending: VecDeque::new(),
            free_paths: Vec::new(),
            moves_buf: Vec::new(),
            labels_buf: Vec::new(),
            noise_buf: Vec::new(),
            logit_buf: Vec::new(),
            root_nn_value: 0.0,
            gumbel: GumbelRoot::default(),
            evaluations: 0,
        }
    }

    pub fn params(&self) -> &SearchConfig {
        &self.params
    }

    pub fn end_rules(&self) -> &EndRules {
        &self.end_rules
    }

    /// Starts a new search of `pos` (its game history counts for repetitions) with
    /// `simulations` simulations (the root's own evaluation included). `noise`: Dirichlet
    /// noise at a PUCT root, Gumbel noise at a Gumbel root (self-play); off for play.
    pub fn start(&mut self, pos: &Position, simulations: u32, noise: bool) {
        assert!(self.pending.is_empty(), "Search::start with leaves still pending");
        self.nodes.clear();
        self.edges.clear();
        self.nodes.push(Node::new());
        self.root_pos.clone_from(pos);
        self.work.clone_from(pos);
        self.budget = simulations.max(1);
        self.started = 0;
        self.noise = noise;
        self.capped = false;
        self.root_nn_value = 0.0;
        self.gumbel.active = false;
    }

    pub fn root_position(&self) -> &Position {
        &self.root_pos
    }

    /// Simulations started in this search.
    pub fn simulations(&self) -> u32 {
        self.started
    }

    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Bytes held by the tree.
    pub fn tree_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.edges.len() * std::mem::size_of::<Edge>()
    }

    /// Whether the search stopped at the memory cap.
    pub fn hit_memory_cap(&self) -> bool {
        self.capped
    }

    pub fn root_proof(&self) -> Proof {
        self.nodes.first().map_or(Proof::Unknown, |n| n.proof)
    }

    /// Leaves waiting for [`Search::apply`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whether no further simulation will be started.
    pub fn is_done(&self) -> bool {
        let root = &self.nodes[0];
        if root.state == State::Terminal || root.proof != Proof::Unknown {
            return true;
        }
        if root.state == State::Expanded && root.edge_len == 0 {
            return true;
        }
        self.started >= self.budget || self.capped
    }

    /// Runs simulations until one needs a network evaluation (its input planes are
    /// written to `input`, `encoder.input_len()` values) or the search is done.
    /// Simulations that end in terminal or proven nodes are backed up on the spot.
    pub fn select(&mut self, encoder: &Encoder, input: &mut [f32], rng: &mut Rng) -> Step {
        loop {
            if self.is_done() {
                return Step::Done;
            }
            if self.tree_bytes() > self.max_tree_bytes {
                self.capped = true;
                return Step::Done;
            }
            let mut path = self.free_paths.pop().unwrap_or_default();
            path.clear();
            path.push(0);
            let mut node = 0u32;
            let mut played: u32 = 0;
            // Descend.
            loop {
                let n = self.nodes[node as usize];
                match n.state {
                    State::Unexpanded | State::Terminal => break,
                    State::Pending => {
                        // Undo the descent and the virtual losses.
                        for _ in 0..played {
                            self.work.undo();
                        }
                        for &i in &path[..path.len() - 1] {
                            self.nodes[i as usize].in_flight -= 1;
                        }
                        self.free_paths.push(path);
                        return Step::Collision;
                    }
                    State::Expanded => {
                        if n.proof != Proof::Unknown {
                            break;
                        }
                        let e = if node == 0 { self.select_root_edge(rng) } else { self.select_puct(node, false) };
                        let ei = (n.edge_start + e) as usize;
                        let mut child = self.edges[ei].child;
                        if child == NONE {
                            child = self.nodes.len() as u32;
                            self.nodes.push(Node::new());
                            self.edges[ei].child = child;
                        }
                        self.nodes[node as usize].in_flight += 1;
                        self.work.play(self.edges[ei].mv);
                        played += 1;
                        node = child;
                        path.push(node);
                    }
                }
            }
            self.started += 1;
            self.nodes[node as usize].in_flight += 1;
            let leaf = self.nodes[node as usize];
            let exact = match (leaf.state, leaf.proof) {
                (State::Terminal, _) => Some(leaf.terminal),
                (_, Proof::Win) => Some((1.0, 0.0)),
                (_, Proof::Loss) => Some((-1.0, 0.0)),
                _ => None,
            };
            if let Some((v, d)) = exact {
                for _ in 0..played {
                    self.work.undo();
                }
                self.backup(&path, v, d);
                self.free_paths.push(path);
                continue;
            }
            // A new leaf: terminal?
            if let Some((v, d, proof)) = outcome_value(&self.work, &self.end_rules) {
                let nd = &mut self.nodes[node as usize];
                nd.state = State::Terminal;
                nd.terminal = (v, d);
                nd.proof = proof;
                for _ in 0..played {
                    self.work.undo();
                }
                self.backup(&path, v, d);
                self.propagate_proof(&path);
                self.free_paths.push(path);
                continue;
            }
            // Expand: edges with their labels.
            encoder.legal_moves_indexed(&self.work, &mut self.moves_buf, &mut self.labels_buf);
            let start = self.edges.len() as u32;
            for &mv in &self.moves_buf {
                self.edges.push(Edge { mv, prior: 0.0, child: NONE });
            }
            {
                let nd = &mut self.nodes[node as usize];
                nd.edge_start = start;
                nd.edge_len = self.moves_buf.len() as u32;
            }
            if self.params.mate_search_plies >= 3 && self.work.in_check() {
                if self.prove_evasions(start) {
                    let nd = &mut self.nodes[node as usize];
                    nd.state = State::Expanded;
                    nd.proof = Proof::Loss;
                    let n = self.moves_buf.len() as f32;
                    for e in &mut self.edges[start as usize..] {
                        e.prior = 1.0 / n;
                    }
                    for _ in 0..played {
                        self.work.undo();
                    }
                    self.backup(&path, -1.0, 0.0);
                    self.propagate_proof(&path);
                    self.free_paths.push(path);
                    continue;
                }
            }
            if self.params.mate_search_plies >= 1 {
                if let Some(i) = self.find_immediate_win() {
                    let child = self.nodes.len() as u32;
                    let mut c = Node::new();
                    c.state = State::Terminal;
                    c.terminal = (-1.0, 0.0);
                    c.proof = Proof::Loss;
                    self.nodes.push(c);
                    self.edges[(start + i as u32) as usize].child = child;
                    // Uniform priors, so that the node is well-formed if it is the root.
                    let n = self.moves_buf.len() as f32;
                    for e in &mut self.edges[start as usize..] {
                        e.prior = 1.0 / n;
                    }
                    let nd = &mut self.nodes[node as usize];
                    nd.state = State::Expanded;
                    nd.proof = Proof::Win;
                    for _ in 0..played {
                        self.work.undo();
                    }
                    self.backup(&path, 1.0, 0.0);
                    self.propagate_proof(&path);
                    self.free_paths.push(path);
                    continue;
                }
            }
            self.nodes[node as usize].state = State::Pending;
            encoder.encode(&self.work, input);
            for _ in 0..played {
                self.work.undo();
            }
            self.evaluations += 1;
            let labels = self.labels_buf.iter().map(|&l| l as u32).collect();
            self.pending.push_back(PendingLeaf { path, labels });
            return Step::NeedsEval;
        }
    }

    /// The side to move at `work` is in check and its evasions are in `moves_buf` (edges
    /// from `start`): gives every evasion after which the opponent wins at once a child
    /// node proven lost for the side to move. Returns whether all evasions are such (the
    /// node is lost: a mate in 3 for the opponent's last move). `moves_buf` is kept.
    fn prove_evasions(&mut self, start: u32) -> bool {
        let moves = std::mem::take(&mut self.moves_buf);
        let mut all = true;
        let mut inner = Vec::new();
        for (i, &mv) in moves.iter().enumerate() {
            self.work.play(mv);
            self.work.generate_legal(&mut inner);
            std::mem::swap(&mut self.moves_buf, &mut inner);
            let win = self.find_immediate_win().is_some();
            std::mem::swap(&mut self.moves_buf, &mut inner);
            self.work.undo();
            if win {
                let child = self.nodes.len() as u32;
                let mut c = Node::new();
                c.state = State::Expanded;
                c.proof = Proof::Win;
                self.nodes.push(c);
                self.edges[start as usize + i].child = child;
            } else {
                all = false;
            }
        }
        self.moves_buf = moves;
        all
    }

    /// Index (into `moves_buf`) of a move of the side to move at `work` that wins at
    /// once: mates, or captures the last royal (sho, dai). Bare-king wins are not looked
    /// for (they are found when reached).
    fn find_immediate_win(&mut self) -> Option<usize> {
        let us = self.work.side_to_move();
        let spec = self.work.spec();
        let captures_count = spec.royal_rule != RoyalRule::Check;
        for i in 0..self.moves_buf.len() {
            let mv = self.moves_buf[i];
            let royal_capture = captures_count
                && match mv {
                    Move::Normal { to, .. } => enemy_royal_at(&self.work, to),
                    Move::Lion { mid, to, .. } => enemy_royal_at(&self.work, mid) || enemy_royal_at(&self.work, to),
                    Move::Drop { .. } => false,
                };
            let undo = self.work.make(mv);
            let win = if royal_capture || self.work.in_check() {
                // `make` does not record history: only trust decisive non-repetition ends.
                match self.work.outcome(&self.end_rules) {
                    Some(o) => {
                        o.winner == Some(us)
                            && matches!(
                                o.reason,
                                rules::Reason::Checkmate | rules::Reason::NoMoves | rules::Reason::RoyalCapture
                            )
                    }
                    None => false,
                }
            } else {
                false
            };
            self.work.unmake(mv, undo);
            if win {
                return Some(i);
            }
        }
        None
    }

    /// Applies the evaluation of the oldest pending leaf: `policy` is the network's
    /// policy logits for that position (`policy_len` values), `wdl` its (win, draw, loss)
    /// for the side to move.
    pub fn apply(&mut self, policy: &[f32], wdl: [f32; 3], rng: &mut Rng) {
        let leaf = self.pending.pop_front().expect("Search::apply without a pending leaf");
        let node = *leaf.path.last().expect("non-empty path");
        let n = self.nodes[node as usize];
        debug_assert_eq!(n.state, State::Pending);
        let (start, len) = (n.edge_start as usize, n.edge_len as usize);
        // Softmax of the legal moves' logits.
        let t = if node == 0 { self.params.policy_softmax_temperature } else { 1.0 };
        let inv_t = 1.0 / t.max(1e-3);
        self.logit_buf.clear();
        let mut max = f32::NEG_INFINITY;
        for &l in &leaf.labels {
            let x = policy.get(l as usize).copied().unwrap_or(0.0) * inv_t;
            let x = if x.is_finite() { x } else { 0.0 };
            max = max.max(x);
            self.logit_buf.push(x);
        }
        let mut sum = 0.0f32;
        for x in &mut self.logit_buf {
            *x = (*x - max).exp();
            sum += *x;
        }
        for (i, e) in self.edges[start..start + len].iter_mut().enumerate() {
            e.prior = if sum > 0.0 { self.logit_buf[i] / sum } else { 1.0 / len as f32 };
        }
        let mut v = wdl[0] - wdl[2];
        let mut d = wdl[1];
        if !v.is_finite() || !d.is_finite() {
            v = 0.0;
            d = 0.0;
        }
        self.nodes[node as usize].state = State::Expanded;
        if node == 0 {
            self.root_nn_value = v;
            if self.params.gumbel {
                self.init_gumbel(rng);
            } else if self.noise && self.params.dirichlet_epsilon > 0.0 && len > 1 {
                rng.dirichlet(self.params.dirichlet_alpha as f64, len, &mut self.noise_buf);
                let eps = self.params.dirichlet_epsilon;
                for (e, &nz) in self.edges[start..start + len].iter_mut().zip(&self.noise_buf) {
                    e.prior = (1.0 - eps) * e.prior + eps * nz;
                }
            }
        }
        self.backup(&leaf.path, v, d);
        self.free_paths.push(leaf.path);
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

    /// After the leaf of `path` got a proof, updates its ancestors.
    fn propagate_proof(&mut self, path: &[u32]) {
        for k in (0..path.len().saturating_sub(1)).rev() {
            let i = path[k] as usize;
            let n = self.nodes[i];
            if n.proof != Proof::Unknown || n.state != State::Expanded {
                return;
            }
            let mut all_win = n.edge_len > 0;
            let mut proof = Proof::Unknown;
            for e in &self.edges[n.edge_start as usize..(n.edge_start + n.edge_len) as usize] {
                if e.child == NONE {
                    all_win = false;
                    continue;
                }
                match self.nodes[e.child as usize].proof {
                    Proof::Loss => {
                        proof = Proof::Win;
                        break;
                    }
                    Proof::Win => {}
                    Proof::Unknown => all_win = false,
                }
            }
            if proof == Proof::Unknown && all_win {
                proof = Proof::Loss;
            }
            if proof == Proof::Unknown {
                return;
            }
            self.nodes[i].proof = proof;
        }
    }

    /// (Q from the parent's view, visits including in-flight) of edge `ei`.
    #[inline]
    fn edge_stats(&self, ei: usize) -> Option<(f32, u32)> {
        let c = self.edges[ei].child;
        if c == NONE {
            return None;
        }
        let n = &self.nodes[c as usize];
        let visits = n.visits + n.in_flight;
        if visits == 0 {
            return None;
        }
        let q = match n.proof {
            Proof::Win => -1.0,
            Proof::Loss => 1.0,
            Proof::Unknown => {
                let vl = self.params.virtual_loss as f64 * n.in_flight as f64;
                (-(n.value_sum + vl) / visits as f64) as f32
            }
        };
        Some((q, visits))
    }

    /// PUCT: the edge (relative index) maximising Q + U.
    fn select_puct(&self, node: u32, _root: bool) -> u32 {
        let n = &self.nodes[node as usize];
        let parent_visits = (n.visits + n.in_flight).max(1) as f32;
        let c = self.params.c_puct + ((parent_visits + self.params.c_puct_base + 1.0) / self.params.c_puct_base).ln();
        let cs = c * parent_visits.sqrt();
        let parent_q = if n.visits > 0 { (n.value_sum / n.visits as f64) as f32 } else { 0.0 };
        let start = n.edge_start as usize;
        let len = n.edge_len as usize;
        let mut visited_policy = 0.0f32;
        for ei in start..start + len {
            let ch = self.edges[ei].child;
            if ch != NONE && self.nodes[ch as usize].visits + self.nodes[ch as usize].in_flight > 0 {
                visited_policy += self.edges[ei].prior;
            }
        }
        let red = if node == 0 { self.params.root_fpu_reduction } else { self.params.fpu_reduction };
        let fpu = parent_q - red * visited_policy.sqrt();
        let mut best = 0u32;
        let mut best_score = f32::NEG_INFINITY;
        for ei in start..start + len {
            let prior = self.edges[ei].prior;
            let (q, visits) = self.edge_stats(ei).unwrap_or((fpu, 0));
            let score = q + cs * prior / (1.0 + visits as f32);
            if score > best_score {
                best_score = score;
                best = (ei - start) as u32;
            }
        }
        best
    }

    fn select_root_edge(&mut self, _rng: &mut Rng) -> u32 {
        if self.gumbel.active {
            loop {
                if let Some(e) = self.gumbel.queue.pop_front() {
                    return e;
                }
                self.next_gumbel_phase();
            }
        }
        self.select_puct(0, true)
    }

    fn init_gumbel(&mut self, rng: &mut Rng) {
        let root = self.nodes[0];
        let len = root.edge_len as usize;
        let g = &mut self.gumbel;
        g.g.clear();
        g.logits.clear();
        for e in &self.edges[root.edge_start as usize..root.edge_start as usize + len] {
            g.logits.push(e.prior.max(1e-30).ln());
            g.g.push(if self.noise { rng.gumbel() } else { 0.0 });
        }
        let m = self.params.gumbel_m.min(len).max(1);
        let mut order: Vec<u32> = (0..len as u32).collect();
        order.sort_by(|&a, &b| {
            let (sa, sb) = (g.g[a as usize] + g.logits[a as usize], g.g[b as usize] + g.logits[b as usize]);
            sb.partial_cmp(&sa).unwrap_or(std::cmp::Ordering::Equal)
        });
        order.truncate(m);
        g.candidates = order;
        g.phases = (m as f32).log2().ceil().max(1.0) as u32;
        g.child_budget = self.budget.saturating_sub(1).max(1);
        g.queue.clear();
        g.active = true;
        self.fill_gumbel_queue();
    }

    /// Queues this phase's visits of the candidates (round robin).
    fn fill_gumbel_queue(&mut self) {
        let g = &mut self.gumbel;
        let k = g.candidates.len().max(1) as u32;
        let per = if k <= 2 {
            // Last phase: the rest of the budget.
            let left = self.budget.saturating_sub(self.started);
            left.div_ceil(k).max(1)
        } else {
            (g.child_budget / (g.phases * k)).max(1)
        };
        for _ in 0..per {
            for &c in &g.candidates {
                g.queue.push_back(c);
            }
        }
    }

    /// Halves the candidates by g + logit + sigma(q) and queues the next phase.
    fn next_gumbel_phase(&mut self) {
        if self.gumbel.candidates.len() > 2 {
            let mut scored: Vec<(f32, u32)> =
                self.gumbel.candidates.iter().map(|&c| (self.gumbel_score(c, true), c)).collect();
            scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
            let keep = scored.len().div_ceil(2);
            self.gumbel.candidates = scored[..keep].iter().map(|&(_, c)| c).collect();
        }
        self.fill_gumbel_queue();
    }

    fn max_child_visits(&self) -> u32 {
        let root = &self.nodes[0];
        (0..root.edge_len as usize)
            .filter_map(|i| self.edge_stats(root.edge_start as usize + i).map(|(_, n)| n))
            .max()
            .unwrap_or(0)
    }

    fn sigma(&self, q: f32, max_visits: u32) -> f32 {
        // q in [-1, 1] -> [0, 1].
        (self.params.gumbel_c_visit + max_visits as f32) * self.params.gumbel_c_scale * ((q + 1.0) * 0.5)
    }

    /// g + logit + sigma(q) of root edge `e` (unvisited: q = v_mix, or -inf if `visited_only`).
    fn gumbel_score(&self, e: u32, with_g: bool) -> f32 {
        let root = &self.nodes[0];
        let ei = root.edge_start as usize + e as usize;
        let maxn = self.max_child_visits();
        let q = match self.edge_stats(ei) {
            Some((q, _)) => q,
            None => self.v_mix(),
        };
        let g = if with_g { self.gumbel.g[e as usize] } else { 0.0 };
        g + self.gumbel.logits[e as usize] + self.sigma(q, maxn)
    }

    /// Gumbel paper's v_mix: the root's network value mixed with the prior-weighted Q of
    /// the visited children.
    fn v_mix(&self) -> f32 {
        let root = &self.nodes[0];
        let (mut sum_n, mut sum_p, mut sum_pq) = (0f64, 0f64, 0f64);
        for i in 0..root.edge_len as usize {
            let ei = root.edge_start as usize + i;
            if let Some((q, n)) = self.edge_stats(ei) {
                sum_n += n as f64;
                let p = self.edges[ei].prior as f64;
                sum_p += p;
                sum_pq += p * q as f64;
            }
        }
        if sum_n == 0.0 || sum_p <= 0.0 {
            return self.root_nn_value;
        }
        ((self.root_nn_value as f64 + sum_n / sum_p * sum_pq) / (1.0 + sum_n)) as f32
    }

    /// Root children: move, prior (after noise), visits, Q and proof.
    pub fn root_children(&self) -> Vec<ChildInfo> {
        let root = &self.nodes[0];
        (0..root.edge_len as usize)
            .map(|i| {
                let ei = root.edge_start as usize + i;
                let e = self.edges[ei];
                let stats = self.edge_stats(ei);
                let proof = if e.child == NONE {
                    Proof::Unknown
                } else {
                    match self.nodes[e.child as usize].proof {
                        Proof::Win => Proof::Loss,
                        Proof::Loss => Proof::Win,
                        Proof::Unknown => Proof::Unknown,
                    }
                };
                ChildInfo { mv: e.mv, prior: e.prior, visits: stats.map_or(0, |s| s.1), q: stats.map(|s| s.0), proof }
            })
            .collect()
    }

    /// The root's (win, draw, loss) for its side to move: the mean of the simulations
    /// (exact when proven).
    pub fn root_wdl(&self) -> [f32; 3] {
        let r = &self.nodes[0];
        match (r.state, r.proof) {
            (State::Terminal, _) => {
                let (v, d) = r.terminal;
                let w = ((1.0 + v - d) * 0.5).max(0.0);
                return [w, d, (1.0 - w - d).max(0.0)];
            }
            (_, Proof::Win) => return [1.0, 0.0, 0.0],
            (_, Proof::Loss) => return [0.0, 0.0, 1.0],
            _ => {}
        }
        if r.visits == 0 {
            return [0.0, 1.0, 0.0];
        }
        let q = (r.value_sum / r.visits as f64) as f32;
        let d = ((r.draw_sum / r.visits as f64) as f32).clamp(0.0, 1.0);
        let w = ((1.0 + q - d) * 0.5).clamp(0.0, 1.0);
        let l = (1.0 - w - d).max(0.0);
        [w, d, l]
    }

    /// Index of a proven winning root edge, if any.
    fn winning_edge(&self) -> Option<usize> {
        let root = &self.nodes[0];
        (0..root.edge_len as usize).find(|&i| {
            let c = self.edges[root.edge_start as usize + i].child;
            c != NONE && self.nodes[c as usize].proof == Proof::Loss
        })
    }

    /// The policy target over the root's legal moves as (move, probability): the visit
    /// distribution (PUCT), or softmax(logit + sigma(completed Q)) (Gumbel). A proven win
    /// gives all weight to the winning move.
    pub fn policy_target(&self) -> Vec<(Move, f32)> {
        let root = &self.nodes[0];
        let (start, len) = (root.edge_start as usize, root.edge_len as usize);
        if len == 0 {
            return Vec::new();
        }
        if let Some(i) = self.winning_edge() {
            return vec![(self.edges[start + i].mv, 1.0)];
        }
        if self.params.gumbel && self.gumbel.active {
            let maxn = self.max_child_visits();
            let vmix = self.v_mix();
            let scores: Vec<f32> = (0..len)
                .map(|i| {
                    let q = self.edge_stats(start + i).map_or(vmix, |s| s.0);
                    self.gumbel.logits[i] + self.sigma(q, maxn)
                })
                .collect();
            let max = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let exps: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f32 = exps.iter().sum();
            return (0..len)
                .filter(|&i| exps[i] / sum >= 1e-5)
                .map(|i| (self.edges[start + i].mv, exps[i] / sum))
                .collect();
        }
        let visits: Vec<u32> = (0..len).map(|i| self.edge_stats(start + i).map_or(0, |s| s.1)).collect();
        let total: u32 = visits.iter().sum();
        if total == 0 {
            return (0..len).map(|i| (self.edges[start + i].mv, self.edges[start + i].prior)).collect();
        }
        (0..len)
            .filter(|&i| visits[i] > 0)
            .map(|i| (self.edges[start + i].mv, visits[i] as f32 / total as f32))
            .collect()
    }

    /// The move to play. A proven win plays the winning move. Gumbel root: the sequential
    /// halving winner (argmax of g + logit + sigma(q) among the last candidates; it already
    /// samples, so `temperature` is not used). PUCT root: visits^(1/T) sampled, or the most
    /// visited move (ties: higher Q, then prior) for T = 0. `None` when the root has no
    /// legal move.
    pub fn choose_move(&self, temperature: f32, rng: &mut Rng) -> Option<Move> {
        let root = &self.nodes[0];
        let (start, len) = (root.edge_start as usize, root.edge_len as usize);
        if len == 0 {
            return None;
        }
        if let Some(i) = self.winning_edge() {
            return Some(self.edges[start + i].mv);
        }
        if self.params.gumbel && self.gumbel.active {
            let best = self
                .gumbel
                .candidates
                .iter()
                .copied()
                .max_by(|&a, &b| {
                    self.gumbel_score(a, true)
                        .partial_cmp(&self.gumbel_score(b, true))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .unwrap_or(0);
            return Some(self.edges[start + best as usize].mv);
        }
        let stats: Vec<(u32, f32, f32)> = (0..len)
            .map(|i| {
                let s = self.edge_stats(start + i);
                let q = match s {
                    Some((q, _)) => q,
                    None => -2.0,
                };
                (s.map_or(0, |s| s.1), q, self.edges[start + i].prior)
            })
            .collect();
        // Never play a move proven to lose while another is not.
        let losing = |i: usize| {
            let c = self.edges[start + i].child;
            c != NONE && self.nodes[c as usize].proof == Proof::Win
        };
        let all_losing = (0..len).all(losing);
        let ok = |i: usize| all_losing || !losing(i);
        if temperature > 0.0 {
            let inv = 1.0 / temperature as f64;
            let max_n = (0..len).filter(|&i| ok(i)).map(|i| stats[i].0).max().unwrap_or(0).max(1) as f64;
            let w: Vec<f64> = (0..len)
                .map(|i| if ok(i) && stats[i].0 > 0 { (stats[i].0 as f64 / max_n).powf(inv) } else { 0.0 })
                .collect();
            if w.iter().any(|&x| x > 0.0) {
                return Some(self.edges[start + rng.weighted(&w)].mv);
            }
        }
        let best = (0..len)
            .filter(|&i| ok(i))
            .max_by(|&a, &b| {
                let (x, y) = (stats[a], stats[b]);
                x.0.cmp(&y.0)
                    .then(x.1.partial_cmp(&y.1).unwrap_or(std::cmp::Ordering::Equal))
                    .then(x.2.partial_cmp(&y.2).unwrap_or(std::cmp::Ordering::Equal))
            })
            .unwrap_or(0);
        Some(self.edges[start + best].mv)
    }

    /// Runs a whole search with an evaluator in the calling thread (tests, tools, the
    /// single-threaded engine): `evaluate(input) -> (policy logits, wdl)`.
    pub fn run<F>(&mut self, encoder: &Encoder, rng: &mut Rng, mut evaluate: F)
    where
        F: FnMut(&[f32]) -> (Vec<f32>, [f32; 3]),
    {
        let mut input = vec![0.0; encoder.input_len()];
        loop {
            match self.select(encoder, &mut input, rng) {
                Step::NeedsEval => {
                    let (p, wdl) = evaluate(&input);
                    self.apply(&p, wdl, rng);
                }
                Step::Done | Step::Collision => break,
            }
        }
    }
}
