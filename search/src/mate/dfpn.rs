//! The df-pn search (Nagai's depth-first proof-number search): MID with thresholds,
//! the 1 + epsilon trick against thrashing, df-pn+'s evasion-count initialisation, and the
//! extraction of a mating line from the proof the table holds.

use std::time::Instant;

use rules::{Color, Move, Position};

use super::children::{expand, Child, Hands};
use super::hand;
use super::table::{Numbers, Table, INF, NEAR_INF};
use super::Interrupted;
use crate::stop::Control;

/// When a search must give up.
pub(crate) struct Budget<'a> {
    pub max_nodes: Option<u64>,
    pub deadline: Option<Instant>,
    pub control: &'a Control,
}

/// How often (in nodes) the clock and the stop flag are read.
const POLL_NODES: u64 = 256;

/// One solve's search state over a table.
pub(crate) struct Dfpn<'a> {
    pub table: &'a mut Table,
    pub attacker: Color,
    /// Plies below the root after which a line counts as failed.
    pub max_plies: usize,
    pub budget: Budget<'a>,
    pub nodes: u64,
    pub interrupted: Option<Interrupted>,
    /// Each ply's children (buffers reused from node to node).
    stack: Vec<Vec<Child>>,
    moves: Vec<Move>,
    /// The positions from the root to the node being searched: board hash and attacker's
    /// hand.
    path: Vec<(u64, u32)>,
}

/// A node's numbers from its children's, and the child to search next.
struct Summary {
    numbers: Numbers,
    best: usize,
    best_numbers: Numbers,
    /// The second smallest proof number (OR node) or disproof number (AND node).
    second: u32,
}

/// A child's threshold from its sibling's number: `x * 5/4 + 1` (the 1 + epsilon trick:
/// the search stays with a child a little longer before switching).
fn widen(x: u32) -> u32 {
    x.saturating_add(x / 4 + 1).min(INF)
}

impl<'a> Dfpn<'a> {
    pub fn new(table: &'a mut Table, attacker: Color, max_plies: usize, budget: Budget<'a>) -> Dfpn<'a> {
        Dfpn {
            table,
            attacker,
            max_plies,
            budget,
            nodes: 0,
            interrupted: None,
            stack: Vec::new(),
            moves: Vec::with_capacity(256),
            path: Vec::new(),
        }
    }

    /// Counts a node and checks the budget.
    fn tick(&mut self) {
        self.nodes += 1;
        if self.budget.max_nodes.is_some_and(|n| self.nodes >= n) {
            self.interrupted.get_or_insert(Interrupted::Nodes);
        }
        if self.nodes % POLL_NODES == 0 {
            if self.budget.control.is_stopped() {
                self.interrupted.get_or_insert(Interrupted::Stopped);
            } else if self.budget.deadline.is_some_and(|d| Instant::now() >= d) {
                self.interrupted.get_or_insert(Interrupted::Time);
            }
        }
    }

    /// Searches `pos` until it is decided or the budget is spent.
    pub fn solve(&mut self, pos: &mut Position) -> Numbers {
        self.path.clear();
        self.mid(pos, INF, INF)
    }

    /// Searches `pos` until its proof number reaches `thpn` or its disproof number
    /// `thdn` (or the budget is spent); stores and returns its numbers.
    fn mid(&mut self, pos: &mut Position, thpn: u32, thdn: u32) -> Numbers {
        self.tick();
        let ply = self.path.len();
        let or_node = pos.side_to_move() == self.attacker;
        let (key, hands) = (pos.board_hash(), Hands::of(pos, self.attacker));
        let start = self.nodes;
        if self.stack.len() <= ply {
            self.stack.resize_with(ply + 1, Vec::new);
        }
        let mut children = std::mem::take(&mut self.stack[ply]);
        expand(pos, self.attacker, self.table, ply as u16, &mut self.moves, &mut children);
        let result = if children.is_empty() {
            if or_node {
                Numbers::disproven(hands.no_check(), false)
            } else {
                Numbers::proven(hands.defence(pos.check_is_blockable()), 0)
            }
        } else if ply >= self.max_plies {
            Numbers::disproven(hands.attacker, true)
        } else {
            self.path.push((key, hands.attacker));
            for c in children.iter_mut().filter(|c| self.repeats(c)) {
                c.known = Numbers::disproven(c.hand, true);
            }
            let blockable = !or_node && pos.check_is_blockable();
            let numbers = loop {
                let s = summarize(&children, or_node, hands, blockable);
                let n = s.numbers;
                if n.pn >= thpn || n.dn >= thdn || self.interrupted.is_some() {
                    break n;
                }
                let (cthpn, cthdn) = if or_node {
                    (thpn.min(widen(s.second)), sub_add(thdn, n.dn, s.best_numbers.dn))
                } else {
                    (sub_add(thpn, n.pn, s.best_numbers.pn), thdn.min(widen(s.second)))
                };
                let mv = children[s.best].mv;
                let before = self.nodes;
                let undo = pos.make(mv);
                let found = self.mid(pos, cthpn, cthdn);
                pos.unmake(mv, undo);
                let c = &mut children[s.best];
                let searched = c.known.searched.saturating_add((self.nodes - before).min(u32::MAX as u64) as u32);
                c.known = Numbers { searched, ..found };
            };
            self.path.pop();
            numbers
        };
        self.stack[ply] = children;
        self.table.store(key, hands.attacker, ply as u16, result, self.nodes - start);
        result
    }

    /// Does the child come back to the board of a position of the path (with the same
    /// side to move: every second one) with no more in the attacker's hand? Then the line
    /// gained the attacker nothing: a repetition (perpetual check loses, and a defender
    /// may repeat), or a loop that cost it pieces; a mate through it would also mate
    /// from the earlier position without the loop, so the search need not follow it.
    fn repeats(&self, c: &Child) -> bool {
        self.path.iter().rev().skip(1).step_by(2).any(|&(key, hand)| key == c.key && hand::covers(hand, c.hand))
    }

    /// The numbers of a child at `ply`: a repetition of the path fails for the attacker
    /// (see [`Dfpn::repeats`]), else the table's or the first ones.
    fn child_numbers(&self, c: &Child, ply: usize) -> Numbers {
        if self.repeats(c) {
            return Numbers::disproven(c.hand, true);
        }
        self.table.lookup(c.key, c.hand, ply as u16).unwrap_or(c.init)
    }

    /// A mating line from `pos`, whose proof the table holds: at each attacker's move
    /// the child with the shortest proof, at each defender's move the one with the
    /// longest; children whose proof the table lost are searched again. `None` when the
    /// budget runs out first (or the proof does not hold up).
    pub fn mating_line(&mut self, pos: &mut Position) -> Option<Vec<Move>> {
        let mut line: Vec<(Move, rules::Undo)> = Vec::new();
        self.path.clear();
        let mut children = Vec::new();
        let found = loop {
            let or_node = pos.side_to_move() == self.attacker;
            expand(pos, self.attacker, self.table, line.len() as u16, &mut self.moves, &mut children);
            if children.is_empty() {
                // The defender is always in check here: no move is mate.
                break !or_node;
            }
            if line.len() >= 2 * self.max_plies {
                break false;
            }
            let Some(i) = self.pick(pos, &children, or_node) else { break false };
            let mv = children[i].mv;
            self.path.push((pos.board_hash(), hand::pack(pos, self.attacker)));
            line.push((mv, pos.make(mv)));
        };
        let moves = line.iter().map(|&(mv, _)| mv).collect();
        for (mv, undo) in line.into_iter().rev() {
            pos.unmake(mv, undo);
        }
        self.path.clear();
        found.then_some(moves)
    }

    /// The child the mating line continues with (see [`Dfpn::mating_line`]).
    fn pick(&mut self, pos: &mut Position, children: &[Child], or_node: bool) -> Option<usize> {
        let ply = self.path.len() + 1;
        let here = (pos.board_hash(), hand::pack(pos, self.attacker));
        self.path.push(here);
        // The defender may come back to a position of the line (once is no repetition
        // of the rules): its replies are read from the table alone, while the attacker's
        // moves keep off the line's positions, so the line cannot go round a loop.
        let numbers_of = |d: &Dfpn, c: &Child| {
            if or_node {
                d.child_numbers(c, ply)
            } else {
                d.table.lookup(c.key, c.hand, ply as u16).unwrap_or(c.init)
            }
        };
        let mut numbers: Vec<Numbers> = children.iter().map(|c| numbers_of(self, c)).collect();
        if or_node && !numbers.iter().any(Numbers::is_proven) {
            // The proof was overwritten: prove this node again.
            self.path.pop();
            self.mid(pos, INF, INF);
            self.path.push(here);
            numbers = children.iter().map(|c| numbers_of(self, c)).collect();
        }
        if !or_node {
            for (c, n) in children.iter().zip(numbers.iter_mut()) {
                if !n.is_proven() {
                    let undo = pos.make(c.mv);
                    *n = self.mid(pos, INF, INF);
                    pos.unmake(c.mv, undo);
                }
            }
        }
        self.path.pop();
        let proven = numbers.iter().enumerate().filter(|(_, n)| n.is_proven());
        if or_node {
            proven.min_by_key(|(_, n)| n.len).map(|(i, _)| i)
        } else if numbers.iter().all(Numbers::is_proven) {
            // The first of the longest: max_by_key would take the last.
            proven
                .fold(None, |acc: Option<(usize, u16)>, (i, n)| match acc {
                    Some((_, l)) if l >= n.len => acc,
                    _ => Some((i, n.len)),
                })
                .map(|(i, _)| i)
        } else {
            None
        }
    }
}

/// A node's numbers from its children's (and its proof or disproof hand, from theirs
/// and the moves that lead to them), with the child to search next.
/// `blockable`: the defender (at an AND node) stands in a check it could block.
fn summarize(children: &[Child], or_node: bool, hands: Hands, blockable: bool) -> Summary {
    // At an OR node the attacker needs one proven child ("min" is the proof number)
    // and fails when all fail ("sum" is the disproof number); at an AND node the
    // other way round.
    let mut min = INF;
    let mut second = INF;
    let mut sum: u64 = 0;
    let mut best = 0;
    let mut best_numbers = Numbers::disproven(0, false);
    // OR: the shortest proof and its hand; the disproof hand common to all children.
    // AND: the longest proof and the proof hand all children need.
    let mut proof: Option<(u16, u32)> = None;
    let mut disproof_hand = hands.total();
    let mut any_path_dependent = false;
    for (i, c) in children.iter().enumerate() {
        let n = c.known;
        let (m, s) = if or_node { (n.pn, n.dn) } else { (n.dn, n.pn) };
        // Among equal numbers the child searched least (so that the search spreads
        // over equals instead of diving into the first); at an AND node, a disproof
        // that holds whatever the path is.
        let better = if m == 0 && min == 0 {
            !or_node && best_numbers.path_dependent && !n.path_dependent
        } else {
            m < min || (m == min && n.searched < best_numbers.searched)
        };
        if better {
            second = second.min(min);
            min = m;
            best = i;
            best_numbers = n;
        } else {
            second = second.min(m);
        }
        sum += s as u64;
        if or_node {
            if n.is_proven() && proof.map_or(true, |(len, _)| n.len < len) {
                // A drop needs its piece; a capture brings one.
                proof = Some((n.len, hand::sub_floor(n.hand + c.spent, c.gained)));
            } else if n.is_disproven() {
                any_path_dependent |= n.path_dependent;
                disproof_hand = hand::min(disproof_hand, hand::sub_floor(n.hand + c.spent, c.gained));
            }
        } else if n.is_proven() {
            let (len, p) = proof.unwrap_or((0, 0));
            proof = Some((len.max(n.len), hand::max(p, n.hand)));
        }
    }
    let sum = sum.min(NEAR_INF as u64) as u32;
    let numbers = if or_node {
        if min == 0 {
            let (len, p) = proof.expect("a proven child");
            Numbers::proven(hand::min(p, hands.attacker), len.saturating_add(1))
        } else if sum == 0 {
            if any_path_dependent {
                Numbers::disproven(hands.attacker, true)
            } else {
                // A kind the attacker holds none of might bring new drops.
                Numbers::disproven(hand::where_present(disproof_hand, hands.attacker), false)
            }
        } else {
            Numbers::new(min, sum)
        }
    } else if min == 0 {
        if best_numbers.path_dependent {
            Numbers::disproven(hands.attacker, true)
        } else {
            Numbers::disproven(hand::min(best_numbers.hand, hands.total()), false)
        }
    } else if sum == 0 {
        let (len, p) = proof.expect("proven children");
        // With less in the attacker's hand the defender might hold a kind it has none
        // of now, and block with it.
        let p = hand::min(hand::max(p, hands.defence(blockable)), hands.attacker);
        Numbers::proven(p, len.saturating_add(1))
    } else {
        Numbers::new(sum, min)
    };
    Summary { numbers, best, best_numbers, second }
}

/// `th - total + child` without overflow (`th > total`), at most [`INF`].
fn sub_add(th: u32, total: u32, child: u32) -> u32 {
    (th as u64 - total as u64 + child as u64).min(INF as u64) as u32
}
