//! What a player's search reports: progress ([`Info`] with its [`PvLine`]s and
//! [`Score`]s, taken by [`snapshot`]) and the result ([`SearchOutcome`]).

use std::time::Duration;

use rules::Move;

use crate::player_tree::{ChildInfo, PlayerTree, Proof};
use crate::stop::StopReason;

/// A score for the protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns (see [`q_to_cp`]).
    Cp(i32),
    /// Mate in this many plies; negative when the engine is mated.
    Mate(i32),
}

/// Maps an expected score q = win - loss in [-1, 1] to centipawns with the logistic
/// curve of computer shogi (Ponanza's constant 600): with p = (1 + q) / 2 the winning
/// probability counting draws as half, cp = 600 ln(p / (1 - p)), within +-30000.
/// So q = 0 is 0 cp, q = 0.5 (p = 0.75) about 659 cp, q = -0.9 about -1766 cp.
pub fn q_to_cp(q: f32) -> i32 {
    let p = (1.0 + q as f64) / 2.0;
    rules::score::centipawns(p, rules::score::PONANZA_SCALE).round().clamp(-30000.0, 30000.0) as i32
}

/// One principal variation.
#[derive(Clone, Debug)]
pub struct PvLine {
    pub score: Score,
    pub pv: Vec<Move>,
    pub visits: u32,
}

/// Progress of a search.
#[derive(Clone, Debug, Default)]
pub struct Info {
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
    pub hashfull: u32,
    /// Best first; at most `multipv` lines.
    pub lines: Vec<PvLine>,
}

/// Network calls of a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Calls of the leaf evaluators.
    pub batches: u64,
    /// Leaves evaluated.
    pub leaves: u64,
    /// The largest batch (leaves, without padding).
    pub largest_batch: usize,
    /// Descents that ended at a leaf already waiting for its evaluation (discarded; each
    /// one ends the batch being gathered).
    pub collisions: u64,
}

impl BatchStats {
    /// Adds the calls of another search.
    pub fn add(&mut self, other: BatchStats) {
        self.batches += other.batches;
        self.leaves += other.leaves;
        self.largest_batch = self.largest_batch.max(other.largest_batch);
        self.collisions += other.collisions;
    }

    /// Leaves per call, 0 without calls.
    pub fn mean_batch(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.leaves as f64 / self.batches as f64
        }
    }
}

/// Why a search could not run to its end.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// A leaf evaluation failed (the search stopped early).
    #[error("evaluation failed: {0}")]
    Evaluation(String),
    #[error("cannot start a search thread: {0}")]
    Thread(String),
    /// The search (or every one of its threads) panicked.
    #[error("search panicked: {0}")]
    Panic(String),
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct SearchOutcome {
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    /// Expected score (win - loss) of the best move for the side to move; +-1 when proven.
    pub value: f32,
    pub proof: Proof,
    pub info: Info,
    /// The root's moves with their statistics at the end, in move generation order.
    pub root: Vec<ChildInfo>,
    pub batches: BatchStats,
    /// Set when the search stopped early because of it.
    pub error: Option<SearchError>,
    /// The tree reached its memory cap.
    pub tree_full: bool,
    pub stopped_by: StopReason,
}

impl SearchOutcome {
    /// The outcome of a search that did not run (an internal error): `fallback` (the
    /// first legal move, say) as the best move.
    pub fn failed(fallback: Option<Move>, error: SearchError) -> SearchOutcome {
        SearchOutcome {
            best: fallback,
            ponder: None,
            value: 0.0,
            proof: Proof::Unknown,
            info: Info::default(),
            root: Vec::new(),
            batches: BatchStats::default(),
            error: Some(error),
            tree_full: false,
            stopped_by: StopReason::Error,
        }
    }
}

fn score_of(proof: Proof, q: f32) -> Score {
    match proof {
        Proof::Win(n) => Score::Mate(n as i32),
        Proof::Loss(n) => Score::Mate(-(n as i32)),
        Proof::Unknown => Score::Cp(q_to_cp(q)),
    }
}

/// Progress as seen now (the caller holds the lock).
pub fn snapshot(tree: &PlayerTree, elapsed: Duration, multipv: usize) -> Info {
    let ms = elapsed.as_millis() as u64;
    let nodes = tree.started();
    let nps = (nodes * 1000).checked_div(ms).unwrap_or(0);
    let mut children = tree.root_children();
    let best = tree.best_move();
    let root_q = {
        let [w, _, l] = tree.root_wdl();
        w - l
    };
    // Best move first, then by visits.
    children.sort_by(|a, b| {
        let ka = (Some(a.mv) == best, a.visits);
        let kb = (Some(b.mv) == best, b.visits);
        kb.cmp(&ka)
    });
    let mut lines = Vec::new();
    for c in children.iter().take(multipv.max(1)) {
        if !lines.is_empty() && c.visits == 0 && c.proof == Proof::Unknown {
            break;
        }
        let score = score_of(c.proof, c.q.unwrap_or(root_q));
        lines.push(PvLine { score, pv: tree.pv_from(c.mv), visits: c.visits });
    }
    Info {
        depth: tree.mean_depth(),
        seldepth: tree.max_depth().max(1),
        nodes,
        nps,
        time_ms: ms,
        hashfull: tree.hashfull(),
        lines,
    }
}

/// The outcome the tree gives as it stands, with `info` its report (the caller holds the
/// tree's lock): the best move, its reply, its value, the root's moves. No batch
/// statistics or error: those are the search threads' to add. Also what an engine answers
/// with when it stops a search from outside its threads.
pub fn tree_outcome(t: &PlayerTree, info: Info, stopped_by: StopReason) -> SearchOutcome {
    let best = t.best_move();
    let root = t.root_children();
    let value = best_value(t, best, &root);
    // The ponder move answers the move played (the root checks may choose another than
    // the first line's).
    let ponder = info.lines.first().filter(|l| l.pv.first() == best.as_ref()).and_then(|l| l.pv.get(1).copied());
    SearchOutcome {
        best,
        ponder,
        value,
        proof: t.root_proof(),
        info,
        root,
        batches: BatchStats::default(),
        error: None,
        tree_full: t.hit_memory_cap(),
        stopped_by,
    }
}

/// The expected score of the best move (exact when the root is proven).
pub(crate) fn best_value(tree: &PlayerTree, best: Option<Move>, root: &[ChildInfo]) -> f32 {
    match tree.root_proof() {
        Proof::Win(_) => 1.0,
        Proof::Loss(_) => -1.0,
        Proof::Unknown => {
            let q = best.and_then(|b| root.iter().find(|c| c.mv == b)).and_then(|c| c.q);
            q.unwrap_or_else(|| {
                let [w, _, l] = tree.root_wdl();
                w - l
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cp_mapping() {
        assert_eq!(q_to_cp(0.0), 0);
        assert_eq!(q_to_cp(0.5), 659);
        assert_eq!(q_to_cp(-0.5), -659);
        assert!(q_to_cp(1.0) > 10000);
        assert!(q_to_cp(-1.0) < -10000);
    }
}
