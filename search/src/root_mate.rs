//! The root's timed mate search (dlshogi's root df-pn, run beside the MCTS): under a
//! clock, a thread solves the root as a tsume problem ([`crate::mate::MateSolver`]) for a
//! share of the move's time while the search runs; a proven mate ends the search with the
//! mating move and its line ([`crate::driver::run`]).
//!
//! The tree's own root solve (`SearchConfig::root_mate_nodes` nodes, before the first
//! simulation) stays: it is what a search without a clock (`go nodes`, the strength
//! matches) gets, deterministic and cheap. A fixed node count misses the long mates that
//! the solver proves in a few hundred thousand nodes, a fraction of a second.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rules::{Move, Position, Variant};

use crate::config::SearchConfig;
use crate::mate::{MateLimits, MateSolver, MateVerdict, DEFAULT_MAX_PLIES};
use crate::stop::{Control, Limits};

/// Share of a timed search's soft limit that the mate search may take (it ends sooner
/// when it proves or disproves a mate): all of it, as dlshogi's root df-pn runs for the
/// whole search. The limit is the search's own ([`crate::driver::run`] keeps a share
/// of the clock's budget back for the root's checks). It runs beside the search
/// threads: free with a GPU, a share of the cores on a CPU, and only in positions whose
/// checks it cannot disprove at once.
pub const ROOT_MATE_TIME_SHARE: f64 = 1.0;

/// Table of the timed root solve, MiB: some million positions, ample for a second or two
/// of solving.
pub const ROOT_MATE_SEARCH_MIB: usize = 64;

/// Solvers of finished searches, kept for the next ones (a table is allocated once, not
/// at every move).
static SOLVERS: Mutex<Vec<MateSolver>> = Mutex::new(Vec::new());

fn take_solver() -> MateSolver {
    let spare = SOLVERS.lock().unwrap_or_else(|e| e.into_inner()).pop();
    spare.unwrap_or_else(|| MateSolver::new(ROOT_MATE_SEARCH_MIB))
}

fn give_back(solver: MateSolver) {
    let mut spare = SOLVERS.lock().unwrap_or_else(|e| e.into_inner());
    // One per search running at the same time (two players of one arena game, say).
    if spare.len() < 4 {
        spare.push(solver);
    }
}

/// How long the timed root solve of a search under `limits` may run, from `start` (when
/// the clock started): `Some(None)` until the search ends (`go infinite`, `go ponder`:
/// no clock yet), `Some(Some(deadline))` under a clock, `None` when it does not run (no
/// clock: `go nodes`, whose searches stay deterministic and cheap).
pub fn deadline(limits: &Limits, start: Instant) -> Option<Option<Instant>> {
    if limits.infinite || limits.ponder {
        return Some(None);
    }
    let budget = limits.budget?;
    let ms = (budget.soft as f64 * ROOT_MATE_TIME_SHARE).max(1.0);
    Some(Some(start + Duration::from_secs_f64(ms / 1000.0)))
}

/// A running root solve.
pub struct RootMate {
    control: Arc<Control>,
    found: Arc<Mutex<Option<Vec<Move>>>>,
    done: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl RootMate {
    /// Starts solving `pos` for its side to move in a thread, until `deadline` (`None`:
    /// until [`RootMate::finish`]); `None` when the root's mate search is off
    /// (`root_mate_nodes` 0), the game is not standard shogi or no thread can start.
    pub fn start(pos: &Position, params: &SearchConfig, deadline: Option<Instant>) -> Option<RootMate> {
        if params.root_mate_nodes == 0 || pos.variant() != Variant::Shogi {
            return None;
        }
        let control = Arc::new(Control::new());
        let found = Arc::new(Mutex::new(None));
        let done = Arc::new(AtomicBool::new(false));
        let (pos, ctl, out, fin) = (pos.clone(), control.clone(), found.clone(), done.clone());
        let handle = std::thread::Builder::new()
            .name("root-mate".into())
            .spawn(move || {
                let mut solver = take_solver();
                let limits = MateLimits { nodes: None, deadline, max_plies: DEFAULT_MAX_PLIES, shorten: false };
                if let Ok(report) = solver.solve(&pos, &limits, &ctl) {
                    if let MateVerdict::Mate(line) = report.verdict {
                        if !line.is_empty() {
                            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(line);
                        }
                    }
                }
                give_back(solver);
                fin.store(true, Ordering::SeqCst);
            })
            .ok()?;
        Some(RootMate { control, found, done, handle: Some(handle) })
    }

    /// The mating line once proven (the side to move's first), taken once.
    pub fn take_mate(&self) -> Option<Vec<Move>> {
        self.found.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Whether the solve has ended (a verdict, its deadline or a stop).
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// Stops the solve and waits for it (the solver reads the stop every few hundred
    /// nodes); a mate it proved meanwhile is returned.
    pub fn finish(mut self) -> Option<Vec<Move>> {
        self.control.stop();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.take_mate()
    }
}

impl Drop for RootMate {
    fn drop(&mut self) {
        // A search that ends by a panic must not leave the solver running.
        self.control.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Budget;

    #[test]
    fn only_searches_with_a_clock_or_without_end_solve() {
        let t = Instant::now();
        let nodes = Limits { nodes: Some(800), ..Limits::default() };
        assert_eq!(deadline(&nodes, t), None);
        let timed = Limits { budget: Some(Budget { soft: 1000, hard: 2000 }), ..Limits::default() };
        let share = Duration::from_secs_f64(ROOT_MATE_TIME_SHARE);
        assert_eq!(deadline(&timed, t), Some(Some(t + share)));
        let infinite = Limits { infinite: true, ..Limits::default() };
        assert_eq!(deadline(&infinite, t), Some(None));
    }

    /// Sente mates in 7 (the reference set's mate-7-9); sho has no solver.
    #[test]
    fn proves_a_mate_and_stays_off_when_off() {
        let pos = Position::from_sfen(Variant::Shogi, "3k5/1n3S3/9/5+P3/6P2/9/9/9/K8 b RB 1").unwrap();
        let m = RootMate::start(&pos, &SearchConfig::default(), None).unwrap();
        let until = Instant::now() + Duration::from_secs(30);
        while !m.is_done() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        let line = m.finish().expect("a mate");
        assert!(line.len() >= 7 && line.len() % 2 == 1, "{line:?}");
        let off = SearchConfig { root_mate_nodes: 0, ..SearchConfig::default() };
        assert!(RootMate::start(&pos, &off, None).is_none());
    }
}
