//! When a player's search stops: its [`Limits`] (nodes, a time [`Budget`], `infinite`,
//! `ponder`), the user's signals ([`Control`]: stop, ponderhit) and the rules that end a
//! search early ([`check`]): a single legal move, or a best move that can no longer
//! change before the soft time limit ("decided").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::time::Budget;

/// Signals from the protocol thread to a running search.
#[derive(Debug, Default)]
pub struct Control {
    stop: AtomicBool,
    ponderhit: Mutex<Option<Instant>>,
}

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    /// Stop as soon as possible (`stop`, `quit`, XBoard `?`).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The predicted move was played: the clock starts now.
    pub fn ponderhit(&self) {
        let mut p = self.ponderhit.lock().unwrap_or_else(|e| e.into_inner());
        if p.is_none() {
            *p = Some(Instant::now());
        }
    }

    pub fn ponderhit_at(&self) -> Option<Instant> {
        *self.ponderhit.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// When a search ends.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Simulations of this search (`go nodes`, `NodesLimit`), visits kept from earlier
    /// searches not counted.
    pub nodes: Option<u64>,
    /// Thinking time from the start of the clock.
    pub budget: Option<Budget>,
    /// `go infinite`: never stop on its own (a proven or finished search waits for `stop`).
    pub infinite: bool,
    /// `go ponder`: like `infinite` until `ponderhit`, then `budget` from the ponderhit.
    pub ponder: bool,
    /// When the clock started (the `go` command); default: when the search starts.
    pub origin: Option<Instant>,
    /// `MinimumThinkingTime`: under a budget, no stop on the soft limit nor as decided
    /// before this many milliseconds of the clock (the hard limit still holds).
    pub minimum_ms: u64,
    /// `go movetime`: the search takes its whole budget (stopping early only when decided,
    /// with a single move or when done), keeping back little for the root's checks.
    pub exact: bool,
    /// `go depth N`: stop once the reported depth (the mean depth of the simulations)
    /// reaches N.
    pub depth: Option<u32>,
}

impl Limits {
    /// Whether `started` simulations use up the node limit.
    pub fn nodes_reached(&self, started: u64) -> bool {
        self.nodes.is_some_and(|n| started >= n)
    }

    /// Whether the reported depth `depth` (of `started` simulations) reaches `go depth`.
    pub fn depth_reached(&self, depth: u32, started: u64) -> bool {
        self.depth.is_some_and(|d| started > 0 && depth >= d)
    }
}

/// Why a search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// [`Control::stop`].
    Stopped,
    /// A leaf evaluation failed.
    Error,
    /// The node limit is reached (or the tree can take no more simulations: proven root,
    /// no moves, memory cap) and no leaf is in flight.
    Done,
    /// The soft or hard time limit.
    Time,
    /// Only one legal move, and it has been searched.
    SingleMove,
    /// The best move's lead in visits cannot be caught up before the soft limit.
    Decided,
}

/// The state of a running search that the stopping rules look at.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulations started in this search.
    pub started: u64,
    /// No further simulation will be started (node limit, proven root, full tree).
    pub exhausted: bool,
    /// Leaves selected and not yet applied.
    pub in_flight: u64,
    /// Visits of the most visited root move minus those of the second.
    pub lead: u64,
    /// The root has exactly one move.
    pub single: bool,
    /// The reported depth (mean depth of this search's simulations), 0 when unknown.
    pub depth: u32,
}

/// Whether the search should stop now (besides `stop` and errors). `start` is when the
/// clock started for this search ([`Limits::origin`], else when it started), `now` the
/// time of the check.
pub fn check(
    limits: &Limits,
    progress: &Progress,
    control: &Control,
    start: Instant,
    now: Instant,
) -> Option<StopReason> {
    let ponderhit = control.ponderhit_at();
    let waiting = limits.infinite || (limits.ponder && ponderhit.is_none());
    if waiting {
        return None;
    }
    if progress.exhausted && progress.in_flight == 0 {
        return Some(StopReason::Done);
    }
    if limits.depth_reached(progress.depth, progress.started) {
        return Some(StopReason::Done);
    }
    let clock_start = if limits.ponder { ponderhit } else { Some(start) };
    let (Some(b), Some(clock_start)) = (limits.budget, clock_start) else {
        return None;
    };
    let el = now.saturating_duration_since(clock_start).as_millis() as u64;
    // The minimum thinking time holds the soft limit back (never past the hard one).
    let soft = b.soft.max(limits.minimum_ms.min(b.hard));
    if el + 2 >= b.hard || el >= soft {
        return Some(StopReason::Time);
    }
    if progress.single && progress.started > 0 {
        return Some(StopReason::SingleMove);
    }
    if el < limits.minimum_ms {
        return None;
    }
    // The best move cannot change before the soft limit.
    let run_ms = now.saturating_duration_since(start).as_millis() as u64;
    if el * 10 > soft && run_ms > 0 && progress.started > 100 {
        let rate = progress.started as f64 / run_ms as f64;
        let more = rate * (soft - el) as f64;
        if progress.lead as f64 > more * 1.2 {
            return Some(StopReason::Decided);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn progress(started: u64, lead: u64) -> Progress {
        Progress { started, exhausted: false, in_flight: 0, lead, single: false, depth: 0 }
    }

    #[test]
    fn nodes_wait_for_the_leaves_in_flight() {
        let limits = Limits { nodes: Some(10), ..Limits::default() };
        let (c, t) = (Control::new(), Instant::now());
        let mut p = Progress { exhausted: true, in_flight: 3, ..progress(10, 0) };
        assert_eq!(check(&limits, &p, &c, t, t), None);
        p.in_flight = 0;
        assert_eq!(check(&limits, &p, &c, t, t), Some(StopReason::Done));
        // Infinite waits for `stop` even when done.
        let infinite = Limits { infinite: true, ..limits };
        assert_eq!(check(&infinite, &p, &c, t, t), None);
    }

    #[test]
    fn time_single_move_and_decided() {
        let t = Instant::now();
        let limits = Limits { budget: Some(Budget { soft: 1000, hard: 2000 }), origin: Some(t), ..Limits::default() };
        let c = Control::new();
        let at = |ms| t + Duration::from_millis(ms);
        assert_eq!(check(&limits, &progress(500, 0), &c, t, at(10)), None);
        assert_eq!(check(&limits, &progress(500, 0), &c, t, at(1000)), Some(StopReason::Time));
        let single = Progress { single: true, ..progress(1, 1) };
        assert_eq!(check(&limits, &single, &c, t, at(1)), Some(StopReason::SingleMove));
        // 1000 simulations in 500 ms, 500 ms to go: about 1000 more, a lead of 1300 holds.
        assert_eq!(check(&limits, &progress(1000, 1300), &c, t, at(500)), Some(StopReason::Decided));
        assert_eq!(check(&limits, &progress(1000, 900), &c, t, at(500)), None);
        // Pondering: no clock until the ponderhit.
        let ponder = Limits { ponder: true, ..limits };
        assert_eq!(check(&ponder, &progress(500, 0), &c, t, at(5000)), None);
    }

    #[test]
    fn minimum_thinking_time_and_depth() {
        let t = Instant::now();
        let at = |ms| t + Duration::from_millis(ms);
        let c = Control::new();
        let limits = Limits {
            budget: Some(Budget { soft: 1000, hard: 2000 }),
            origin: Some(t),
            minimum_ms: 1500,
            ..Limits::default()
        };
        // Neither the soft limit nor a decided search stops before the minimum...
        assert_eq!(check(&limits, &progress(1000, 100_000), &c, t, at(1200)), None);
        assert_eq!(check(&limits, &progress(1000, 0), &c, t, at(1500)), Some(StopReason::Time));
        assert_eq!(check(&limits, &progress(1000, 100_000), &c, t, at(1400)), None);
        // ...a single move does, and the hard limit always holds.
        let single = Progress { single: true, ..progress(1, 1) };
        assert_eq!(check(&limits, &single, &c, t, at(1)), Some(StopReason::SingleMove));
        let beyond = Limits { minimum_ms: 5000, ..limits };
        assert_eq!(check(&beyond, &progress(1000, 0), &c, t, at(1999)), Some(StopReason::Time));
        // go depth: the reported depth.
        let depth = Limits { depth: Some(3), nodes: Some(900), ..Limits::default() };
        assert_eq!(check(&depth, &Progress { depth: 2, ..progress(50, 0) }, &c, t, t), None);
        assert_eq!(check(&depth, &Progress { depth: 3, ..progress(50, 0) }, &c, t, t), Some(StopReason::Done));
    }
}
