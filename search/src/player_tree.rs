//! A player's search tree (the engine's and the arena's): the shared [`crate::tree::Tree`]
//! (PUCT, several leaves in flight with virtual loss, exact terminal positions, proofs
//! with their distance to mate, the short mate search at expansion, reuse of the subtree
//! of the moves played) plus what a player needs on top: a mate-in-3 scan at the root,
//! tsume solves at the root and the leaves, the root's material check,
//! principal variations, depth statistics and `hashfull`.
//!
//! The tree is driven leaf by leaf ([`PlayerTree::select_leaf`] then
//! [`PlayerTree::apply`]); the threads of the `driver` module share it behind a mutex and
//! evaluate their leaves in batches outside the lock.

use nn::encoding::Encoder;
use nn::Logits;
use std::time::Instant;

use rules::{EndRules, Move, Position, RoyalRule, Variant};

use crate::config::SearchConfig;
use crate::mate::{MateLimits, MateSolver, MateVerdict, DEFAULT_MAX_PLIES};
use crate::stop::Control;
use crate::tactics;
use crate::tree::{self as shared, find_immediate_win, TreeHooks};

pub use crate::tree::{ChildInfo, Leaf, Proof, Selected};

/// Table of the root's tsume solver (`SearchConfig::root_mate_nodes`), MiB: ample for
/// solves of some ten thousand nodes, small beside the search tree.
const ROOT_MATE_TABLE_MIB: usize = 16;

/// Root moves at most that [`PlayerTree::refute_mated_moves`] checks in one search (the
/// search's choice and the next ones when it is refuted), and that
/// [`PlayerTree::check_root_material`] compares.
const ROOT_MATE_CANDIDATES: usize = 8;

/// Positions searched full width by the material check of one root move at most
/// (beyond it the leaves' captures decide): a few milliseconds.
const ROOT_TACTICS_NODES: u64 = 4_000;

/// A player's mate searches: the root mate-in-3 scan (`mate_search_plies` >= 3, variants
/// with the check rule) and the root's tsume solve (`root_mate_nodes`, standard shogi),
/// run when the root is first expanded and at the start of every search, and the leaves'
/// tsume solves (`leaf_mate_nodes`, standard shogi).
#[derive(Default)]
struct PlayerHooks {
    pos: Option<Position>,
    evasions: Vec<Move>,
    replies: Vec<Move>,
    /// Allocated at the first solve.
    solver: Option<MateSolver>,
}

impl TreeHooks for PlayerHooks {
    fn root_expanded(&mut self, tree: &mut shared::Tree) -> bool {
        self.root_mate3(tree) || self.root_tsume(tree)
    }

    /// The leaf's tsume solve (`SearchConfig::leaf_mate_nodes`).
    fn leaf_win(&mut self, pos: &Position, params: &SearchConfig) -> Option<Vec<Move>> {
        self.solve(pos, params.leaf_mate_nodes, None)
    }
}

impl PlayerHooks {
    /// Solves `pos` for its side to move within `nodes` of the tsume solver: the mating
    /// line when it proves one. Standard shogi only; anything else is `None`.
    fn solve(&mut self, pos: &Position, nodes: u64, deadline: Option<Instant>) -> Option<Vec<Move>> {
        if nodes == 0 || pos.variant() != Variant::Shogi {
            return None;
        }
        let solver = self.solver.get_or_insert_with(|| MateSolver::new(ROOT_MATE_TABLE_MIB));
        let limits = MateLimits { nodes: Some(nodes), deadline, max_plies: DEFAULT_MAX_PLIES, shorten: false };
        match solver.solve(pos, &limits, &Control::new()).ok()?.verdict {
            MateVerdict::Mate(line) if !line.is_empty() => Some(line),
            _ => None,
        }
    }

    /// A mate by continuous checks for the side to move at the root, found by the tsume
    /// solver (dlshogi's root df-pn): the first move's child is proven lost and the root
    /// won. The root's edges must exist.
    fn root_tsume(&mut self, tree: &mut shared::Tree) -> bool {
        if tree.root_proof() != Proof::Unknown {
            return false;
        }
        let Some(line) = self.solve(tree.root_position(), tree.params().root_mate_nodes, None) else {
            return false;
        };
        match tree.root_edges().find(|&ei| tree.edge(ei).mv == line[0]) {
            Some(ei) => tree.prove_root_child(ei, Proof::Loss(line.len() as u16 - 1)) != Proof::Unknown,
            None => false,
        }
    }

    /// Whether the opponent has a mate by continuous checks after root move `mv`: the
    /// length of its line.
    fn mate_after(&mut self, root: &Position, mv: Move, nodes: u64, deadline: Option<Instant>) -> Option<usize> {
        let mut after = root.clone();
        after.play(mv);
        self.solve(&after, nodes, deadline).map(|line| line.len())
    }

    /// Looks for a checking root move after which every reply allows a mate in 1, so that
    /// mates in 3 are found at the first visit of the root whatever the network's priors.
    /// A found move's child is proven lost (in 2) and the root proven won. The root's
    /// edges must exist.
    fn root_mate3(&mut self, tree: &mut shared::Tree) -> bool {
        if tree.params().mate_search_plies < 3
            || tree.root_position().spec().royal_rule != RoyalRule::Check
            || tree.root_proof() != Proof::Unknown
        {
            return false;
        }
        let pos = match &mut self.pos {
            Some(p) => {
                p.clone_from(tree.root_position());
                p
            }
            None => self.pos.insert(tree.root_position().clone()),
        };
        for ei in tree.root_edges() {
            let mv = tree.edge(ei).mv;
            if Self::forces_mate_in_3(pos, mv, tree.end_rules(), &mut self.evasions, &mut self.replies) {
                return tree.prove_root_child(ei, Proof::Loss(2)) != Proof::Unknown;
            }
        }
        false
    }

    /// Whether `mv` (at `pos`) gives check, leaves a reply, and every reply allows an
    /// immediate win.
    fn forces_mate_in_3(
        pos: &mut Position,
        mv: Move,
        end_rules: &EndRules,
        evasions: &mut Vec<Move>,
        replies: &mut Vec<Move>,
    ) -> bool {
        pos.play(mv);
        let mut ok = false;
        if pos.in_check() {
            pos.generate_legal(evasions);
            ok = !evasions.is_empty();
            for &ev in evasions.iter() {
                pos.play(ev);
                pos.generate_legal(replies);
                let win = find_immediate_win(pos, replies, end_rules).is_some();
                pos.undo();
                if !win {
                    ok = false;
                    break;
                }
            }
        }
        pos.undo();
        ok
    }
}

/// The search tree of one game of a player.
pub struct PlayerTree {
    tree: shared::Tree,
    scan: PlayerHooks,
    /// The root edge the material check chose over the search's own choice, until the
    /// next search.
    chosen: Option<usize>,
    /// Network evaluations requested since [`PlayerTree::begin_search`].
    evaluations: u64,
    max_depth: u32,
    depth_sum: u64,
}

impl PlayerTree {
    pub fn new(params: SearchConfig, end_rules: EndRules, pos: &Position) -> PlayerTree {
        PlayerTree {
            tree: shared::Tree::new(params, end_rules, pos),
            scan: PlayerHooks::default(),
            chosen: None,
            evaluations: 0,
            max_depth: 0,
            depth_sum: 0,
        }
    }

    pub fn params(&self) -> &SearchConfig {
        self.tree.params()
    }

    pub fn end_rules(&self) -> &EndRules {
        self.tree.end_rules()
    }

    /// What a draw is worth in the tree, by the colour to move there
    /// ([`shared::Tree::set_draw_values`]).
    pub fn set_draw_values(&mut self, values: [f32; 2]) {
        self.tree.set_draw_values(values);
    }

    pub fn draw_values(&self) -> [f32; 2] {
        self.tree.draw_values()
    }

    /// Whether a search that fills the tree's memory frees its least-visited subtrees and
    /// goes on ([`shared::Tree::prune`]): for analysis and pondering, which have no end of
    /// their own.
    pub fn set_prune_when_full(&mut self, yes: bool) {
        self.tree.set_prune_when_full(yes);
    }

    /// Times the tree was pruned in this search.
    pub fn prunes(&self) -> u64 {
        self.tree.prunes()
    }

    /// Drops the whole tree and starts from `pos`, giving its memory back.
    pub fn reset(&mut self, pos: &Position) {
        self.chosen = None;
        self.tree.reset(pos);
        self.tree.release_memory();
    }

    pub fn root_position(&self) -> &Position {
        self.tree.root_position()
    }

    /// Moves the root to `pos`, keeping the subtree of the moves played since the current
    /// root when `pos` continues the same game and that subtree exists; otherwise starts
    /// afresh (and gives the memory of the dropped tree back). Returns the visits kept. Must
    /// not be called with leaves in flight.
    pub fn set_root(&mut self, pos: &Position) -> u32 {
        self.chosen = None;
        let kept = self.tree.set_root(pos);
        if kept == 0 {
            // Started afresh: a full tree must not keep the memory of what it dropped.
            self.tree.release_memory();
        }
        kept
    }

    /// Starts counting a new search (statistics only; the tree is kept).
    pub fn begin_search(&mut self) {
        self.chosen = None;
        self.tree.begin_search();
        self.evaluations = 0;
        self.max_depth = 0;
        self.depth_sum = 0;
        // A reused root was expanded as an inner node: give it the root mate search.
        if self.tree.root_is_expanded() && !self.scan.root_mate3(&mut self.tree) {
            self.scan.root_tsume(&mut self.tree);
        }
    }

    /// Checks the move the search chose against a mate by continuous checks of the
    /// opponent (the tsume solver, `SearchConfig::root_mate_nodes` nodes a move; standard
    /// shogi): a refuted move's child is proven won for the opponent, so that the next
    /// best move is chosen and checked in turn, up to [`ROOT_MATE_CANDIDATES`] moves.
    /// A search of a few hundred simulations with a young network's policy often never
    /// looks at the opponent's quiet-looking sequence of checks. Nothing is solved past
    /// `deadline` (a clock's hard limit). Returns the moves refuted.
    pub fn refute_mated_moves(&mut self, deadline: Option<Instant>) -> usize {
        let nodes = self.tree.params().root_mate_nodes;
        if nodes == 0 || self.tree.root_position().variant() != Variant::Shogi {
            return 0;
        }
        let root = self.tree.root_position().clone();
        let mut refuted = 0;
        for _ in 0..ROOT_MATE_CANDIDATES {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let Some(ei) = self.tree.best_edge(0) else { break };
            if self.tree.edge_proof(ei) != Proof::Unknown {
                break;
            }
            match self.scan.mate_after(&root, self.tree.edge(ei).mv, nodes, deadline) {
                Some(plies) => {
                    self.tree.prove_root_child(ei, Proof::Win(plies as u16));
                    refuted += 1;
                }
                None => break,
            }
        }
        refuted
    }

    /// Proves the root won by `line`, a mate by continuous checks for the side to move
    /// (the timed root solve, [`crate::root_mate`]): its first move's child is proven lost.
    /// False when the root is decided already or has no such move (not yet expanded).
    pub fn prove_root_mate(&mut self, line: &[Move]) -> bool {
        if line.is_empty() || self.tree.root_proof() != Proof::Unknown {
            return false;
        }
        match self.tree.root_edges().find(|&ei| self.tree.edge(ei).mv == line[0]) {
            Some(ei) => self.tree.prove_root_child(ei, Proof::Loss(line.len() as u16 - 1)) != Proof::Unknown,
            None => false,
        }
    }

    /// Simulations started since [`PlayerTree::begin_search`].
    pub fn started(&self) -> u64 {
        self.tree.started()
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
        match self.tree.started() {
            0 => 1,
            n => ((self.depth_sum as f64 / n as f64).round() as u32).max(1),
        }
    }

    /// Bytes used by the tree's nodes and edges (what the memory cap and `hashfull` count).
    pub fn tree_bytes(&self) -> usize {
        self.tree.tree_bytes()
    }

    /// Bytes allocated for the tree (up to about twice [`PlayerTree::tree_bytes`] while it
    /// grows).
    pub fn allocated_bytes(&self) -> usize {
        self.tree.allocated_bytes()
    }

    /// Used tree size in permille of its cap (USI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let max = self.tree.max_tree_bytes();
        if max == 0 {
            return 1000;
        }
        ((self.tree_bytes() as f64 / max as f64) * 1000.0).min(1000.0) as u32
    }

    pub fn hit_memory_cap(&self) -> bool {
        self.tree.hit_memory_cap()
    }

    pub fn root_proof(&self) -> Proof {
        self.tree.root_proof()
    }

    pub fn root_visits(&self) -> u32 {
        self.tree.root_visits()
    }

    /// Whether no simulation can be started (proven root, no moves, full tree).
    pub fn is_done(&self) -> bool {
        self.tree.is_done()
    }

    /// Descends to a leaf and either backs up an exact result, or writes the leaf's input
    /// planes to `input` and returns it for evaluation (virtual loss on its path).
    pub fn select_leaf(&mut self, encoder: &Encoder, input: &mut [f32]) -> Selected {
        // The tree stops at its cap by itself (Selected::Done).
        let selected = self.tree.select_leaf(encoder, input, &mut self.scan);
        let depth = match &selected {
            Selected::NeedsEval(leaf) => {
                self.evaluations += 1;
                leaf.depth()
            }
            Selected::Exact { depth } => *depth,
            Selected::Collision | Selected::Done => return selected,
        };
        self.depth_sum += depth as u64;
        self.max_depth = self.max_depth.max(depth);
        selected
    }

    /// Applies the evaluation of `leaf`: policy logits (`policy_len` values) and
    /// (win, draw, loss) for the leaf's side to move.
    pub fn apply<'a>(&mut self, leaf: Leaf, policy: impl Into<Logits<'a>>, wdl: [f32; 3]) {
        self.tree.apply(leaf, policy, wdl);
    }

    /// The move to play (the shortest proven win, else the most visited move not proven
    /// to lose), `None` when the root has no legal move or was never expanded.
    pub fn best_move(&self) -> Option<Move> {
        self.chosen.or_else(|| self.tree.best_edge(0)).map(|ei| self.tree.edge(ei).mv)
    }

    /// The root's material check (`SearchConfig::root_tactics_plies`, [`crate::tactics`]):
    /// searches the most visited root moves (up to [`ROOT_MATE_CANDIDATES`]) over the
    /// rules' material and, when the search's choice falls more than
    /// `root_tactics_margin` short of the best of them, plays the most visited one that
    /// does not ([`PlayerTree::best_move`] until the next search). A proven result is
    /// left alone; standard shogi only. A check that `deadline` (a clock's hard limit)
    /// cuts short changes nothing. Returns the move chosen instead, if any.
    pub fn check_root_material(&mut self, deadline: Option<Instant>) -> Option<Move> {
        let params = self.tree.params();
        let plies = params.root_tactics_plies;
        // Standard shogi only: measured there; in dai three plies of its hundreds of moves
        // would cost about a second a move.
        if plies == 0
            || self.tree.root_position().variant() != Variant::Shogi
            || self.tree.root_proof() != Proof::Unknown
        {
            return None;
        }
        let margin = params.root_tactics_margin as f64;
        let limits = tactics::TacticsLimits {
            max_nodes: ROOT_TACTICS_NODES,
            quiescence: rules::QuiescenceLimits { check_plies: params.leaf_material_check_plies, ..Default::default() },
            deadline,
        };
        let mut edges: Vec<(usize, u32)> = self
            .tree
            .root_edges()
            .filter(|&ei| !self.tree.edge_proof(ei).is_loss())
            .filter_map(|ei| self.tree.edge_stats(ei).map(|(_, visits)| (ei, visits)))
            .filter(|&(_, visits)| visits > 0)
            .collect();
        edges.sort_by_key(|&(_, visits)| std::cmp::Reverse(visits));
        edges.truncate(ROOT_MATE_CANDIDATES);
        let first = self.tree.best_edge(0)?;
        if edges.len() < 2 || edges[0].0 != first {
            return None;
        }
        let mut pos = self.tree.root_position().clone();
        let end_rules = *self.tree.end_rules();
        let candidates: Vec<(Move, f64)> = edges
            .iter()
            .map(|&(ei, _)| {
                let mv = self.tree.edge(ei).mv;
                pos.play(mv);
                let (lo, hi) = (f64::NEG_INFINITY, f64::INFINITY);
                let score = -tactics::material_outlook(&mut pos, plies - 1, lo, hi, &end_rules, &limits, &mut 0);
                pos.undo();
                (mv, score)
            })
            .collect();
        if tactics::timed_out(&limits) {
            return None;
        }
        let pick = tactics::choose(&candidates, margin)?;
        let index = candidates.iter().position(|c| c.0 == pick)?;
        (index > 0).then(|| {
            self.chosen = Some(edges[index].0);
            pick
        })
    }

    /// Principal variation starting with root move `first`: then the best child at each
    /// node, while the nodes have been visited.
    pub fn pv_from(&self, first: Move) -> Vec<Move> {
        let t = &self.tree;
        let mut pv = Vec::new();
        let Some(ei) = t.root_edges().find(|&ei| t.edge(ei).mv == first) else {
            return pv;
        };
        pv.push(first);
        let mut node = t.edge(ei).child();
        while let Some(id) = node {
            if pv.len() >= 64 {
                break;
            }
            let n = t.node(id);
            if n.visits() == 0 && n.proof() == Proof::Unknown {
                break;
            }
            match t.best_edge(id) {
                Some(ei) => {
                    pv.push(t.edge(ei).mv);
                    node = t.edge(ei).child();
                }
                None => break,
            }
        }
        pv
    }

    /// The root's moves with their statistics, in move generation order.
    pub fn root_children(&self) -> Vec<ChildInfo> {
        self.tree.root_children()
    }

    /// The root's (win, draw, loss): mean of the simulations, exact when proven.
    pub fn root_wdl(&self) -> [f32; 3] {
        self.tree.root_wdl()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    /// The root scan proves a mate in 3 at the root's first visit; the engine's
    /// statistics and PV follow the tree.
    #[test]
    fn root_scan_finds_mate_in_three() {
        let enc = Encoder::new(Variant::Shogi);
        let sfen = "1n1p1B1nb/s1s3sk1/lg2+Nppg1/L2g4L/1P1P2PR1/1+s2P4/2P1K4/PpG2P2P/1N5R1 b L6P 147";
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        let mut tree = PlayerTree::new(SearchConfig::default(), EndRules::default(), &pos);
        tree.begin_search();
        let mut input = vec![0.0; enc.input_len()];
        assert!(matches!(tree.select_leaf(&enc, &mut input), Selected::Exact { depth: 0 }));
        assert!(matches!(tree.select_leaf(&enc, &mut input), Selected::Done));
        assert_eq!((tree.started(), tree.evaluations(), tree.mean_depth(), tree.max_depth()), (1, 0, 1, 0));
        assert_eq!(tree.root_proof(), Proof::Win(3));
        let best = tree.best_move().unwrap();
        assert!(["2e2c", "2e2c+"].contains(&best.to_usi().as_str()));
        assert_eq!(tree.pv_from(best), vec![best]);
        assert_eq!(tree.root_wdl(), [1.0, 0.0, 0.0]);
    }

    /// Runs `n` simulations with a uniform policy and an even value.
    fn simulate(tree: &mut PlayerTree, n: usize) {
        let policy = vec![0.0; Encoder::new(Variant::Shogi).policy_size()];
        simulate_with(tree, n, &policy);
    }

    /// Runs `n` simulations with the policy logits `policy` at every node and an even value.
    fn simulate_with(tree: &mut PlayerTree, n: usize, policy: &[f32]) {
        let enc = Encoder::new(Variant::Shogi);
        let mut input = vec![0.0; enc.input_len()];
        tree.begin_search();
        for _ in 0..n {
            if tree.is_done() {
                break;
            }
            if let Selected::NeedsEval(leaf) = tree.select_leaf(&enc, &mut input) {
                tree.apply(leaf, policy, [0.3, 0.4, 0.3]);
            }
        }
    }

    /// The search without the root's tsume solve.
    fn without_root_mate() -> SearchConfig {
        SearchConfig { root_mate_nodes: 0, ..SearchConfig::default() }
    }

    /// Sente mates in 7 by continuous checks (data/tsume/reference.tsv, mate-7-9).
    const MATE_IN_7: &str = "3k5/1n3S3/9/5+P3/6P2/9/9/9/K8 b RB 1";

    /// The root's tsume solve proves a mate beyond the mate-in-3 scan at the first visit.
    #[test]
    fn the_root_tsume_solve_proves_a_longer_mate() {
        let pos = Position::from_sfen(Variant::Shogi, MATE_IN_7).unwrap();
        let mut off = PlayerTree::new(without_root_mate(), EndRules::default(), &pos);
        simulate(&mut off, 1);
        assert_eq!(off.root_proof(), Proof::Unknown);
        let params = SearchConfig { root_mate_nodes: 100_000, ..SearchConfig::default() };
        let mut on = PlayerTree::new(params, EndRules::default(), &pos);
        simulate(&mut on, 1);
        match on.root_proof() {
            Proof::Win(k) => assert!(k >= 5 && k % 2 == 1, "a mate in {k}"),
            p => panic!("not proven: {p:?}"),
        }
        let mut after = pos.clone();
        after.play(on.best_move().unwrap());
        assert!(after.in_check(), "the mate starts with a check");
    }

    /// With gote to move in the same position, many moves let sente mate in 7. A policy
    /// that points at one of them makes it the search's choice; it is refuted, and so
    /// are the next choices, until one holds (or every move is proven to lose).
    #[test]
    fn moves_that_allow_a_mate_by_checks_are_refuted() {
        let sfen = MATE_IN_7.replace(" b ", " w ");
        let pos = Position::from_sfen(Variant::Shogi, &sfen).unwrap();
        let mates_after = |mv: Move| {
            let mut p = pos.clone();
            p.play(mv);
            let limits = MateLimits { nodes: Some(100_000), ..MateLimits::default() };
            matches!(MateSolver::new(16).solve(&p, &limits, &Control::new()).unwrap().verdict, MateVerdict::Mate(_))
        };
        let enc = Encoder::new(Variant::Shogi);
        let (mut moves, mut labels) = (Vec::new(), Vec::new());
        enc.legal_moves_indexed(&pos, &mut moves, &mut labels);
        let bad = moves.iter().position(|&mv| mates_after(mv)).expect("a move that allows the mate");
        let mut policy = vec![0.0; enc.policy_size()];
        policy[labels[bad] as usize] = 20.0;
        let params = SearchConfig { root_mate_nodes: 100_000, ..SearchConfig::default() };
        let mut tree = PlayerTree::new(params, EndRules::default(), &pos);
        simulate_with(&mut tree, 100, &policy);
        assert_eq!(tree.best_move(), Some(moves[bad]));
        assert!(tree.refute_mated_moves(None) >= 1);
        let best = tree.best_move().unwrap();
        assert_ne!(best, moves[bad]);
        assert!(tree.root_proof().is_loss() || !mates_after(best), "{best} still allows a mate");
        // Off, nothing is checked.
        let mut off = PlayerTree::new(without_root_mate(), EndRules::default(), &pos);
        simulate_with(&mut off, 100, &policy);
        assert_eq!(off.refute_mated_moves(None), 0);
        assert_eq!(off.best_move(), Some(moves[bad]));
    }

    /// The leaves' tsume solve proves inside the tree what the root's guard checks only
    /// after the search: the move the policy points at lets sente mate in 7, its child is
    /// proven won at its first visit, and the search turns to another move by itself.
    #[test]
    fn the_leaves_tsume_solve_proves_the_opponents_mate_in_the_tree() {
        let sfen = MATE_IN_7.replace(" b ", " w ");
        let pos = Position::from_sfen(Variant::Shogi, &sfen).unwrap();
        let enc = Encoder::new(Variant::Shogi);
        let (mut moves, mut labels) = (Vec::new(), Vec::new());
        enc.legal_moves_indexed(&pos, &mut moves, &mut labels);
        // The first move that allows the mate (the guard's test checks such moves exist).
        let allows_mate = |mv: Move| {
            let mut p = pos.clone();
            p.play(mv);
            let limits = MateLimits { nodes: Some(100_000), ..MateLimits::default() };
            matches!(MateSolver::new(16).solve(&p, &limits, &Control::new()).unwrap().verdict, MateVerdict::Mate(_))
        };
        let bad = moves.iter().position(|&mv| allows_mate(mv)).unwrap();
        let mut policy = vec![0.0; enc.policy_size()];
        policy[labels[bad] as usize] = 20.0;
        let proof_of = |tree: &PlayerTree| tree.root_children().into_iter().find(|c| c.mv == moves[bad]).unwrap().proof;
        let mut off = PlayerTree::new(without_root_mate(), EndRules::default(), &pos);
        simulate_with(&mut off, 100, &policy);
        assert_eq!(proof_of(&off), Proof::Unknown);
        assert_eq!(off.best_move(), Some(moves[bad]));
        let params = SearchConfig { leaf_mate_nodes: 100_000, ..without_root_mate() };
        let mut on = PlayerTree::new(params, EndRules::default(), &pos);
        simulate_with(&mut on, 100, &policy);
        match proof_of(&on) {
            // The move and a mate of at least 7 plies (not shortened).
            Proof::Loss(k) => assert!(k >= 8 && k % 2 == 0, "lost in {k}"),
            p => panic!("not proven: {p:?}"),
        }
        assert_ne!(on.best_move(), Some(moves[bad]));
    }

    /// A tree that filled up to its cap and then gets a root it does not hold (an earlier
    /// position: the GUI took a move back) drops its nodes and searches again, with a
    /// `hashfull` of what it uses.
    #[test]
    fn a_full_tree_searches_again_from_a_root_outside_it() {
        let enc = Encoder::new(Variant::Shogi);
        let params = SearchConfig { max_tree_mib: 1, ..SearchConfig::default() };
        let mut pos = Position::startpos(Variant::Shogi);
        pos.play_usi("7g7f").unwrap();
        let earlier = pos.clone();
        pos.play_usi("3c3d").unwrap();
        let mut tree = PlayerTree::new(params, EndRules::default(), &pos);
        tree.begin_search();
        let mut input = vec![0.0; enc.input_len()];
        let policy = vec![0.0; enc.policy_size()];
        while !tree.is_done() {
            if let Selected::NeedsEval(leaf) = tree.select_leaf(&enc, &mut input) {
                tree.apply(leaf, &policy, [0.3, 0.4, 0.3]);
            }
        }
        assert!(tree.hit_memory_cap());
        assert_eq!(tree.hashfull(), 1000);
        assert_eq!(tree.set_root(&earlier), 0);
        tree.begin_search();
        assert!(tree.hashfull() < 10, "{}", tree.hashfull());
        assert!(tree.allocated_bytes() < 1000, "the memory was given back: {}", tree.allocated_bytes());
        assert!(matches!(tree.select_leaf(&enc, &mut input), Selected::NeedsEval(_)));
    }

    /// Leaves in flight count their depth; a re-rooted tree is scanned again.
    #[test]
    fn depth_statistics_and_reuse() {
        let enc = Encoder::new(Variant::Shogi);
        let pos = Position::startpos(Variant::Shogi);
        let mut tree = PlayerTree::new(SearchConfig::default(), EndRules::default(), &pos);
        tree.begin_search();
        let mut input = vec![0.0; enc.input_len()];
        let policy = vec![0.0; enc.policy_size()];
        for _ in 0..200 {
            if let Selected::NeedsEval(leaf) = tree.select_leaf(&enc, &mut input) {
                tree.apply(leaf, &policy, [0.3, 0.4, 0.3]);
            }
        }
        assert_eq!(tree.evaluations(), 200);
        assert!(tree.max_depth() >= 2 && tree.mean_depth() >= 1);
        assert!(tree.hashfull() <= 1000);
        let best = tree.best_move().unwrap();
        assert!(tree.pv_from(best).len() >= 2);
        let mut next = pos.clone();
        next.play(best);
        assert!(tree.set_root(&next) > 0);
        tree.begin_search();
        assert_eq!((tree.started(), tree.max_depth()), (0, 0));
    }
}
