//! The engine's search tree: PUCT over one game, several leaves in flight at once (virtual
//! loss), exact terminal positions with proofs that carry their distance to mate, and
//! reuse of the subtree of the moves actually played.
//!
//! The tree is driven leaf by leaf ([`Tree::select_leaf`] then [`Tree::apply`]); the
//! threads of [`crate::search`] share it behind a mutex and evaluate their leaves in
//! batches outside the lock.
//!
//! The selection rule, its constants ([`selfplay::SearchConfig`]), the terminal rules
//! (`Position::outcome` with the game history, the 27-point declaration) and the short
//! mate search at expansion are those of `selfplay::mcts::Search`; this tree adds what a
//! player needs: proofs with mate distances (`score mate N`), principal variations,
//! depth statistics and re-rooting.

use std::collections::VecDeque;

use model::encoding::Encoder;
use rules::{EndRules, ImpasseRule, Move, Position, RoyalRule};
use selfplay::SearchConfig;

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
    fn value(self) -> Option<f32> {
        match self {
            Proof::Unknown => None,
            Proof::Win(_) => Some(1.0),
            Proof::Loss(_) => Some(-1.0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unexpanded,
    /// Edges created, evaluation requested.
    Pending,
    Expanded,
    /// The game is over here (value exact).
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
    /// Sum of (win - loss), this node's side to move's view.
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

/// A leaf waiting for its network evaluation.
#[derive(Debug)]
pub struct Leaf {
    path: Vec<u32>,
    labels: Vec<u32>,
}

/// What [`Tree::select_leaf`] did.
#[derive(Debug)]
pub enum Selected {
    /// The leaf's input planes were written; evaluate them and call [`Tree::apply`].
    NeedsEval(Leaf),
    /// The simulation ended in a terminal or proven node and was backed up at once.
    Exact,
    /// The path ended in a leaf already waiting for its evaluation; nothing changed.
    Collision,
    /// Nothing to search: the root is proven, has no moves, or the tree is full.
    Done,
}

/// One root move's statistics, from the root's side to move's view.
#[derive(Clone, Debug)]
pub struct ChildInfo {
    pub mv: Move,
    pub prior: f32,
    pub visits: u32,
    /// Mean value (win - loss); `None` while unvisited.
    pub q: Option<f32>,
    /// Proof from the root's view: `Win(n)`: this move mates in n plies (counting itself).
    pub proof: Proof,
}

/// Result of the rules at a new node: exact (value, draw, proof) for its side to move.
fn outcome_value(pos: &Position, end_rules: &EndRules) -> Option<(f32, f32, Proof)> {
    if end_rules.impasse == ImpasseRule::Declaration27 && pos.can_declare() {
        return Some((1.0, 0.0, Proof::Win(1)));
    }
    let o = pos.outcome(end_rules)?;
    Some(match o.winner {
        None => (0.0, 1.0, Proof::Unknown),
        Some(c) if c == pos.side_to_move() => (1.0, 0.0, Proof::Win(0)),
        Some(_) => (-1.0, 0.0, Proof::Loss(0)),
    })
}

fn enemy_royal_at(pos: &Position, sq: rules::Square) -> bool {
    match pos.piece_at(sq) {
        Some(p) if p.color() != pos.side_to_move() => {
            let spec = pos.spec().kind(p.kind());
            spec.is_some_and(|k| if p.is_promoted() { k.promoted_royal } else { k.royal })
        }
        _ => false,
    }
}

/// The search tree of one game.
pub struct Tree {
    params: SearchConfig,
    end_rules: EndRules,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    root_pos: Position,
    work: Position,
    max_tree_bytes: usize,
    capped: bool,
    moves_buf: Vec<Move>,
    labels_buf: Vec<usize>,
    logit_buf: Vec<f32>,
    /// Simulations started since [`Tree::begin_search`].
    started: u64,
    /// Network evaluations requested since [`Tree::begin_search`].
    evaluations: u64,
    max_depth: u32,
    depth_sum: u64,
}

impl Tree {
    pub fn new(params: SearchConfig, end_rules: EndRules, pos: &Position) -> Tree {
        let max_tree_bytes = params.max_tree_mib.saturating_mul(1 << 20);
        let mut t = Tree {
            params,
            end_rules,
            nodes: Vec::new(),
            edges: Vec::new(),
            root_pos: pos.clone(),
            work: pos.clone(),
            max_tree_bytes,
            capped: false,
            moves_buf: Vec::new(),
            labels_buf: Vec::new(),
            logit_buf: Vec::new(),
            started: 0,
            evaluations: 0,
            max_depth: 0,
            depth_sum: 0,
        };
        t.reset(pos);
        t
    }

    pub fn params(&self) -> &SearchConfig {
        &self.params
    }

    pub fn end_rules(&self) -> &EndRules {
        &self.end_rules
    }

    /// Drops the whole tree and starts from `pos`.
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

    /// Moves the root to `pos`, keeping the subtree of the moves played since the current
    /// root when `pos` continues the same game and that subtree exists; otherwise starts
    /// afresh. Returns the visits kept. Must not be called with leaves in flight.
    pub fn set_root(&mut self, pos: &Position) -> u32 {
        let kept = self.try_reroot(pos);
        match kept {
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
            let e =
                self.edges[n.edge_start as usize..(n.edge_start + n.edge_len) as usize].iter().find(|e| e.mv == mv)?;
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
        }
        self.root_pos.clone_from(pos);
        self.work.clone_from(pos);
        self.capped = false;
        for nd in &mut self.nodes {
            nd.in_flight = 0;
        }
        Some(self.nodes[0].visits)
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
            for e in &self.edges[n.edge_start as usize..(n.edge_start + n.edge_len) as usize] {
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

    /// Starts counting a new search (statistics only; the tree is kept).
    pub fn begin_search(&mut self) {
        self.started = 0;
        self.evaluations = 0;
        self.max_depth = 0;
        self.depth_sum = 0;
        self.capped = false;
        // A reused root was expanded as an inner node: give it the root mate search.
        if self.nodes[0].state == State::Expanded && self.nodes[0].edge_len > 0 {
            self.root_mate3();
        }
    }

    /// Simulations started since [`Tree::begin_search`].
    pub fn started(&self) -> u64 {
        self.started
    }

    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Longest path (plies from the root) of this search.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Mean path length of this search's simulations, at least 1.
    pub fn mean_depth(&self) -> u32 {
        if self.started == 0 {
            1
        } else {
            ((self.depth_sum as f64 / self.started as f64).round() as u32).max(1)
        }
    }

    pub fn tree_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.edges.capacity() * std::mem::size_of::<Edge>()
    }

    /// Tree size in permille of its cap (USI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        if self.max_tree_bytes == 0 {
            return 1000;
        }
        ((self.tree_bytes() as f64 / self.max_tree_bytes as f64) * 1000.0).min(1000.0) as u32
    }

    pub fn hit_memory_cap(&self) -> bool {
        self.capped
    }

    pub fn root_proof(&self) -> Proof {
        self.nodes[0].proof
    }

    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    /// Whether no simulation can be started (proven root, no moves, full tree).
    pub fn is_done(&self) -> bool {
        let root = &self.nodes[0];
        root.state == State::Terminal
            || root.proof != Proof::Unknown
            || (root.state == State::Expanded && root.edge_len == 0)
            || self.capped
    }

    /// Descends to a leaf and either backs up an exact result, or writes the leaf's input
    /// planes to `input` and returns it for evaluation (virtual loss on its path).
    pub fn select_leaf(&mut self, encoder: &Encoder, input: &mut [f32]) -> Selected {
        if self.is_done() {
            return Selected::Done;
        }
        if self.tree_bytes() > self.max_tree_bytes {
            self.capped = true;
            return Selected::Done;
        }
        let mut path: Vec<u32> = Vec::with_capacity(32);
        path.push(0);
        let mut node = 0u32;
        let mut played = 0u32;
        loop {
            let n = self.nodes[node as usize];
            match n.state {
                State::Unexpanded | State::Terminal => break,
                State::Pending => {
                    for _ in 0..played {
                        self.work.undo();
                    }
                    for &i in &path[..path.len() - 1] {
                        self.nodes[i as usize].in_flight -= 1;
                    }
                    return Selected::Collision;
                }
                State::Expanded => {
                    if n.proof != Proof::Unknown || n.edge_len == 0 {
                        break;
                    }
                    let e = self.select_puct(node);
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
        self.depth_sum += played as u64;
        self.max_depth = self.max_depth.max(played);
        self.nodes[node as usize].in_flight += 1;
        let leaf = self.nodes[node as usize];
        let exact = match leaf.state {
            State::Terminal => Some(leaf.terminal),
            _ => leaf.proof.value().map(|v| (v, 0.0)),
        };
        // An expanded node without edges that is not proven cannot happen (no moves is
        // terminal); treat it as a draw to be safe.
        let exact = exact.or(if leaf.state == State::Expanded && leaf.edge_len == 0 { Some((0.0, 1.0)) } else { None });
        if let Some((v, d)) = exact {
            self.undo_played(played);
            self.backup(&path, v, d);
            return Selected::Exact;
        }
        // A new leaf: is the game over here?
        if let Some((v, d, proof)) = outcome_value(&self.work, &self.end_rules) {
            let nd = &mut self.nodes[node as usize];
            nd.state = State::Terminal;
            nd.terminal = (v, d);
            nd.proof = proof;
            self.undo_played(played);
            self.backup(&path, v, d);
            self.propagate_proof(&path);
            return Selected::Exact;
        }
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
        let uniform = 1.0 / self.moves_buf.len().max(1) as f32;
        if self.params.mate_search_plies >= 3 && self.work.in_check() && self.prove_evasions(start) {
            for e in &mut self.edges[start as usize..] {
                e.prior = uniform;
            }
            let nd = &mut self.nodes[node as usize];
            nd.state = State::Expanded;
            nd.proof = Proof::Loss(2);
            self.undo_played(played);
            self.backup(&path, -1.0, 0.0);
            self.propagate_proof(&path);
            return Selected::Exact;
        }
        if self.params.mate_search_plies >= 1 {
            if let Some(i) = self.find_immediate_win() {
                let child = self.nodes.len() as u32;
                let mut c = Node::new();
                c.state = State::Terminal;
                c.terminal = (-1.0, 0.0);
                c.proof = Proof::Loss(0);
                self.nodes.push(c);
                self.edges[(start + i as u32) as usize].child = child;
                for e in &mut self.edges[start as usize..] {
                    e.prior = uniform;
                }
                let nd = &mut self.nodes[node as usize];
                nd.state = State::Expanded;
                nd.proof = Proof::Win(1);
                self.undo_played(played);
                self.backup(&path, 1.0, 0.0);
                self.propagate_proof(&path);
                return Selected::Exact;
            }
        }
        if node == 0 && self.root_mate3() {
            for e in &mut self.edges[start as usize..(start + self.nodes[0].edge_len) as usize] {
                e.prior = uniform;
            }
            self.nodes[0].state = State::Expanded;
            self.backup(&path, 1.0, 0.0);
            return Selected::Exact;
        }
        self.nodes[node as usize].state = State::Pending;
        encoder.encode(&self.work, input);
        self.undo_played(played);
        self.evaluations += 1;
        let labels = self.labels_buf.iter().map(|&l| l as u32).collect();
        Selected::NeedsEval(Leaf { path, labels })
    }

    fn undo_played(&mut self, played: u32) {
        for _ in 0..played {
            self.work.undo();
        }
    }

    /// Root mate search (`mate_search_plies` >= 3, variants with the check rule): looks
    /// for a checking root move after which every reply allows a mate in 1, so that mates
    /// in 3 are found at the first visit of the root whatever the network's priors. A
    /// found move's child is proven lost (in 2) and the root proven won. `work` must be
    /// at the root and the root's edges must exist.
    fn root_mate3(&mut self) -> bool {
        if self.params.mate_search_plies < 3
            || self.work.spec().royal_rule != RoyalRule::Check
            || self.nodes[0].proof != Proof::Unknown
        {
            return false;
        }
        let root = self.nodes[0];
        for ei in root.edge_start as usize..(root.edge_start + root.edge_len) as usize {
            let mv = self.edges[ei].mv;
            if !self.forces_mate_in_3(mv) {
                continue;
            }
            let mut child = self.edges[ei].child;
            if child == NONE {
                child = self.nodes.len() as u32;
                self.nodes.push(Node::new());
                self.edges[ei].child = child;
            }
            if self.nodes[child as usize].proof == Proof::Unknown {
                self.nodes[child as usize].proof = Proof::Loss(2);
            }
            let p = self.proof_from_children(0);
            self.nodes[0].proof = p;
            return p != Proof::Unknown;
        }
        false
    }

    /// Whether `mv` (at `work`) gives check, leaves a reply, and every reply allows an
    /// immediate win.
    fn forces_mate_in_3(&mut self, mv: Move) -> bool {
        self.work.play(mv);
        let mut ok = false;
        if self.work.in_check() {
            let mut evasions = Vec::new();
            self.work.generate_legal(&mut evasions);
            if !evasions.is_empty() {
                ok = true;
                let saved = std::mem::take(&mut self.moves_buf);
                for &ev in &evasions {
                    self.work.play(ev);
                    self.work.generate_legal(&mut self.moves_buf);
                    let win = self.find_immediate_win().is_some();
                    self.work.undo();
                    if !win {
                        ok = false;
                        break;
                    }
                }
                self.moves_buf = saved;
            }
        }
        self.work.undo();
        ok
    }

    /// In check at `work` with the evasions in `moves_buf` (edges from `start`): every
    /// evasion after which the opponent wins at once gets a child proven won for the
    /// opponent (in 1). Returns whether all evasions are such.
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
                c.proof = Proof::Win(1);
                self.nodes.push(c);
                self.edges[start as usize + i].child = child;
            } else {
                all = false;
            }
        }
        self.moves_buf = moves;
        all
    }

    /// Index into `moves_buf` of a move of the side to move at `work` that wins at once
    /// (mate, or capture of the last royal).
    fn find_immediate_win(&mut self) -> Option<usize> {
        let us = self.work.side_to_move();
        let captures_count = self.work.spec().royal_rule != RoyalRule::Check;
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
                // `make` keeps no history: only trust decisive ends that need none.
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

    /// Applies the evaluation of `leaf`: policy logits (`policy_len` values) and
    /// (win, draw, loss) for the leaf's side to move.
    pub fn apply(&mut self, leaf: Leaf, policy: &[f32], wdl: [f32; 3]) {
        let node = *leaf.path.last().expect("non-empty path");
        let n = self.nodes[node as usize];
        debug_assert_eq!(n.state, State::Pending);
        let (start, len) = (n.edge_start as usize, n.edge_len as usize);
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
            e.prior = if sum > 0.0 && sum.is_finite() { self.logit_buf[i] / sum } else { 1.0 / len as f32 };
        }
        let mut v = wdl[0] - wdl[2];
        let mut d = wdl[1];
        if !v.is_finite() || !d.is_finite() {
            v = 0.0;
            d = 0.0;
        }
        self.nodes[node as usize].state = State::Expanded;
        self.backup(&leaf.path, v.clamp(-1.0, 1.0), d.clamp(0.0, 1.0));
    }

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

    /// The proof of an expanded node from its children.
    fn proof_from_children(&self, i: usize) -> Proof {
        let n = self.nodes[i];
        let mut win: Option<u16> = None;
        let mut all_lose = n.edge_len > 0;
        let mut longest = 0u16;
        for e in &self.edges[n.edge_start as usize..(n.edge_start + n.edge_len) as usize] {
            if e.child == NONE {
                all_lose = false;
                continue;
            }
            match self.nodes[e.child as usize].proof {
                Proof::Loss(k) => win = Some(win.map_or(k + 1, |w| w.min(k + 1))),
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

    /// (Q from the parent's view, visits including in flight) of edge `ei`.
    fn edge_stats(&self, ei: usize) -> Option<(f32, u32)> {
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

    fn select_puct(&self, node: u32) -> u32 {
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

    fn child_proof_for_parent(&self, child: u32) -> Proof {
        if child == NONE {
            return Proof::Unknown;
        }
        match self.nodes[child as usize].proof {
            Proof::Win(k) => Proof::Loss(k.saturating_add(1)),
            Proof::Loss(k) => Proof::Win(k.saturating_add(1)),
            Proof::Unknown => Proof::Unknown,
        }
    }

    /// The best edge (absolute index) of an expanded node: the shortest proven win, else
    /// the most visited move not proven to lose (ties: Q, then prior), else (all moves
    /// lose) the longest loss.
    fn best_edge(&self, node: u32) -> Option<usize> {
        let n = &self.nodes[node as usize];
        if n.state != State::Expanded || n.edge_len == 0 {
            return None;
        }
        let range = n.edge_start as usize..(n.edge_start + n.edge_len) as usize;
        let proofs: Vec<Proof> = range.clone().map(|ei| self.child_proof_for_parent(self.edges[ei].child)).collect();
        if let Some((i, _)) = proofs
            .iter()
            .enumerate()
            .filter_map(|(i, p)| if let Proof::Win(k) = p { Some((i, *k)) } else { None })
            .min_by_key(|&(_, k)| k)
        {
            return Some(range.start + i);
        }
        let losing = |i: usize| matches!(proofs[i], Proof::Loss(_));
        if (0..proofs.len()).all(losing) {
            let (i, _) = proofs
                .iter()
                .enumerate()
                .filter_map(|(i, p)| if let Proof::Loss(k) = p { Some((i, *k)) } else { None })
                .max_by_key(|&(_, k)| k)?;
            return Some(range.start + i);
        }
        let key = |ei: usize| {
            let (q, v) = self.edge_stats(ei).unwrap_or((-2.0, 0));
            (v, q, self.edges[ei].prior)
        };
        range.clone().filter(|&ei| !losing(ei - range.start)).max_by(|&a, &b| {
            let (x, y) = (key(a), key(b));
            x.0.cmp(&y.0)
                .then(x.1.partial_cmp(&y.1).unwrap_or(std::cmp::Ordering::Equal))
                .then(x.2.partial_cmp(&y.2).unwrap_or(std::cmp::Ordering::Equal))
        })
    }

    /// The move to play, `None` when the root has no legal move or was never expanded.
    pub fn best_move(&self) -> Option<Move> {
        self.best_edge(0).map(|ei| self.edges[ei].mv)
    }

    /// Principal variation starting with root move `first`: then the best child at each
    /// node, while the nodes have been visited.
    pub fn pv_from(&self, first: Move) -> Vec<Move> {
        let root = &self.nodes[0];
        let mut pv = Vec::new();
        let Some(ei) = (root.edge_start as usize..(root.edge_start + root.edge_len) as usize)
            .find(|&ei| self.edges[ei].mv == first)
        else {
            return pv;
        };
        pv.push(first);
        let mut node = self.edges[ei].child;
        while node != NONE && pv.len() < 64 {
            let n = &self.nodes[node as usize];
            if n.visits == 0 && n.proof == Proof::Unknown {
                break;
            }
            match self.best_edge(node) {
                Some(ei) => {
                    pv.push(self.edges[ei].mv);
                    node = self.edges[ei].child;
                }
                None => break,
            }
        }
        pv
    }

    /// The root's moves with their statistics, in move generation order.
    pub fn root_children(&self) -> Vec<ChildInfo> {
        let root = &self.nodes[0];
        (root.edge_start as usize..(root.edge_start + root.edge_len) as usize)
            .map(|ei| {
                let e = self.edges[ei];
                let stats = self.edge_stats(ei);
                ChildInfo {
                    mv: e.mv,
                    prior: e.prior,
                    visits: stats.map_or(0, |s| s.1),
                    q: stats.map(|s| s.0),
                    proof: self.child_proof_for_parent(e.child),
                }
            })
            .collect()
    }

    /// The root's (win, draw, loss): mean of the simulations, exact when proven.
    pub fn root_wdl(&self) -> [f32; 3] {
        let r = &self.nodes[0];
        match r.proof {
            Proof::Win(_) => return [1.0, 0.0, 0.0],
            Proof::Loss(_) => return [0.0, 0.0, 1.0],
            Proof::Unknown => {}
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
            match tree.select_leaf(enc, &mut input) {
                Selected::NeedsEval(leaf) => tree.apply(leaf, &policy, [1.0 / 3.0; 3]),
                Selected::Exact => {}
                Selected::Collision | Selected::Done => break,
            }
        }
    }

    #[test]
    fn reroot_keeps_the_subtree() {
        let enc = Encoder::new(Variant::Shogi);
        let pos = Position::startpos(Variant::Shogi);
        let mut tree = Tree::new(SearchConfig::default(), EndRules::default(), &pos);
        run_uniform(&mut tree, &enc, 400);
        let children = tree.root_children();
        let best = children.iter().max_by_key(|c| c.visits).unwrap().clone();
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
    fn mate_in_one_is_proven() {
        let enc = Encoder::new(Variant::Shogi);
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/4K4 b G 1").unwrap();
        let mut tree = Tree::new(SearchConfig::default(), EndRules::default(), &pos);
        run_uniform(&mut tree, &enc, 50);
        assert_eq!(tree.root_proof(), Proof::Win(1));
        assert_eq!(tree.best_move().unwrap().to_usi(), "G*5b");
    }
}
