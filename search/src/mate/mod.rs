//! Tsume solving: is there a forced mate for the side to move (the attacker), who must
//! give check with every move, whatever the defender replies? A df-pn search
//! (`dfpn`) over the rules' legal moves: OR nodes are the attacker's checks, AND nodes
//! every legal evasion (drops included). A pawn drop that mates is no legal move
//! (uchifuzume), so it neither mates nor needs answering.
//!
//! - Repetition: a line that comes back to the board of a position on the search path
//!   with no more in the attacker's hand fails for the attacker (a repetition: perpetual
//!   check loses and a defender may repeat; or a loop that only cost it pieces). Such
//!   disproofs depend on the path and are reused only at the same ply and hand.
//! - Hands: the table compares hands (a proof with fewer attacker's pieces proves the
//!   position with more), and decided positions are stored with their proof hand (what
//!   the attacker needs) or disproof hand (what it may hold), so one entry answers for
//!   many (`hand`, `table`).
//! - Memory: the table has a fixed size ([`MateSolver::new`]); entries that cost the
//!   least search give way.
//!
//! What a [`MateVerdict::Mate`] guarantees: its line is legal, every attacker's move
//! gives check, and it ends with the defender mated; at each defender's move the line
//! takes the longest resistance that the proof found knows, at each attacker's move the
//! quickest mate it knows. It is not guaranteed shortest: [`MateLimits::shorten`] looks
//! for shorter mates with depth-limited searches within a budget (every line they find
//! is a real mate). [`MateVerdict::NoMate`] means the search disproved every line
//! (within [`MateLimits::max_plies`]); a disproof through a path-dependent repetition
//! can in principle be wrong where transpositions meet (the graph-history interaction
//! every df-pn solver lives with); on the reference set it never is.
//!
//! Standard shogi only (the check filter and the hand words read shogi's pieces; sho and
//! dai have no tsume tradition and other royal rules).
//!
//! - `table`: the transposition table.
//! - `children`: a node's checks or evasions with their keys and first numbers.
//! - `dfpn`: the search and the mating line.

mod children;
mod dfpn;
mod hand;
mod table;

use std::time::{Duration, Instant};

use rules::{Move, Position, Variant};

use crate::stop::Control;
use dfpn::{Budget, Dfpn};
use table::Table;

/// Why a solve ended undecided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupted {
    /// The deadline passed.
    Time,
    /// The node limit was reached.
    Nodes,
    /// [`Control::stop`].
    Stopped,
}

/// The answer to a tsume problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MateVerdict {
    /// A forced mate: the moves of both sides, the attacker's first.
    Mate(Vec<Move>),
    /// No forced mate by continuous checks.
    NoMate,
    /// Undecided when the budget ran out.
    Unknown(Interrupted),
}

/// What a solve may spend.
#[derive(Clone, Copy, Debug)]
pub struct MateLimits {
    /// Nodes (positions searched) of the proof search; `None`: no limit.
    pub nodes: Option<u64>,
    /// When to give up; `None`: never (until [`Control::stop`]).
    pub deadline: Option<Instant>,
    /// Plies below the root after which a line counts as failed (bounds the recursion).
    pub max_plies: usize,
    /// After a mate is found, search for shorter ones (depth-limited searches) within the
    /// deadline and [`shortening_nodes`] of the first proof's nodes.
    pub shorten: bool,
}

/// Default of [`MateLimits::max_plies`]: far beyond the longest problems of the usual
/// collections (the famous longest tsume has 1525 plies, and is out of reach anyway).
pub const DEFAULT_MAX_PLIES: usize = 511;

impl Default for MateLimits {
    fn default() -> Self {
        MateLimits { nodes: None, deadline: None, max_plies: DEFAULT_MAX_PLIES, shorten: true }
    }
}

/// The nodes the search for shorter mates may spend after a first proof that took
/// `proof_nodes`: three times as many and 50 000 more, so that the answer costs at most
/// about four times the first proof (and little more on easy problems).
pub fn shortening_nodes(proof_nodes: u64) -> u64 {
    proof_nodes.saturating_mul(3).saturating_add(50_000)
}

/// A solve's result and cost.
#[derive(Clone, Debug)]
pub struct MateReport {
    pub verdict: MateVerdict,
    /// Nodes searched, the mating line's extraction and shortening included.
    pub nodes: u64,
    pub elapsed: Duration,
    /// Nodes and time until the verdict with its first line (before any shortening),
    /// and that line's plies (0 without a mate).
    pub first_nodes: u64,
    pub first_elapsed: Duration,
    pub first_plies: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum MateError {
    #[error("tsume solving supports standard shogi only, not {0}")]
    Variant(Variant),
}

/// A tsume solver with its table (kept between solves; each solve starts afresh).
pub struct MateSolver {
    table: Table,
}

impl MateSolver {
    /// A solver whose table takes at most `table_mib` MiB.
    pub fn new(table_mib: usize) -> MateSolver {
        MateSolver { table: Table::new(table_mib) }
    }

    /// The table's size in bytes.
    pub fn table_bytes(&self) -> usize {
        self.table.bytes()
    }

    /// Solves `pos` for its side to move within `limits`; `control` can stop it.
    pub fn solve(&mut self, pos: &Position, limits: &MateLimits, control: &Control) -> Result<MateReport, MateError> {
        if pos.variant() != Variant::Shogi {
            return Err(MateError::Variant(pos.variant()));
        }
        let start = Instant::now();
        let mut pos = pos.clone();
        let attacker = pos.side_to_move();
        self.table.new_generation();
        let budget = Budget { max_nodes: limits.nodes, deadline: limits.deadline, control };
        let mut search = Dfpn::new(&mut self.table, attacker, limits.max_plies, budget);
        let root = search.solve(&mut pos);
        let verdict = if let Some(why) = search.interrupted {
            MateVerdict::Unknown(why)
        } else if root.is_disproven() {
            MateVerdict::NoMate
        } else {
            // The line comes from the table; lost proofs are searched again, past the
            // deadline if need be (they were proven once), but not past a stop.
            search.budget.deadline = None;
            search.budget.max_nodes = Some(search.nodes.saturating_mul(2).max(1_000_000));
            match search.mating_line(&mut pos) {
                Some(line) => MateVerdict::Mate(line),
                None => MateVerdict::Unknown(search.interrupted.unwrap_or(Interrupted::Nodes)),
            }
        };
        let (first_nodes, first_elapsed) = (search.nodes, start.elapsed());
        let first_plies = match &verdict {
            MateVerdict::Mate(line) => line.len(),
            _ => 0,
        };
        let mut nodes = first_nodes;
        let verdict = match verdict {
            MateVerdict::Mate(line) if limits.shorten => {
                let (line, spent) = self.shorten(&mut pos, line, limits, shortening_nodes(first_nodes), control);
                nodes += spent;
                MateVerdict::Mate(line)
            }
            v => v,
        };
        Ok(MateReport { verdict, nodes, elapsed: start.elapsed(), first_nodes, first_elapsed, first_plies })
    }

    /// Looks for mates shorter than `line` by solving again with the depth limit below
    /// its length, until none is found or `nodes` or the deadline run out; the shortest
    /// line found and the nodes spent. A depth-limited search proves only real mates, so
    /// every line it returns is one.
    fn shorten(
        &mut self,
        pos: &mut Position,
        mut line: Vec<Move>,
        limits: &MateLimits,
        nodes: u64,
        control: &Control,
    ) -> (Vec<Move>, u64) {
        let mut spent = 0;
        while line.len() >= 3 && spent < nodes {
            if control.is_stopped() || limits.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            self.table.new_generation();
            let budget = Budget { max_nodes: Some(nodes - spent), deadline: limits.deadline, control };
            // Lines of at most len - 2 plies: the mated position at ply len - 2.
            let mut search = Dfpn::new(&mut self.table, pos.side_to_move(), line.len() - 2, budget);
            let root = search.solve(pos);
            let shorter = if search.interrupted.is_none() && root.is_proven() {
                search.budget.deadline = None;
                search.budget.max_nodes = Some(search.nodes.saturating_mul(2).max(1_000_000));
                search.mating_line(pos).filter(|l| l.len() < line.len())
            } else {
                None
            };
            spent += search.nodes;
            match shorter {
                Some(l) => line = l,
                None => break,
            }
        }
        (line, spent)
    }
}

#[cfg(test)]
mod tests;
