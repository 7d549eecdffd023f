//! Time management: how long to think about one move.
//!
//! Every budget is a pair (soft, hard) in milliseconds from the moment the clock starts
//! for the engine (`go`, or `ponderhit` after `go ponder`): the search normally stops at
//! the soft limit (earlier when the best move can no longer change) and never runs past
//! the hard limit. `margin` (USI option `ByoyomiMargin`) is kept back for the latency of
//! the last batch, the output and the GUI.
//!
//! - byoyomi B with main time T left: soft = T/25 + B - margin, hard = T + B - margin
//!   (capped at 2 x soft when T > 0). With T = 0: soft = hard = B - margin, so a
//!   1-second byoyomi is answered in 900 ms with the default margin of 100 ms.
//! - Fischer (increment I > 0): soft = T/30 + 0.8 I, hard = min(3 x soft, T - margin).
//! - sudden death (T only): soft = T/40, hard = min(3 x soft, T - margin).
//! - `movetime M`: soft = hard = M - min(margin, M/10) (`go movetime` means "search
//!   this long": the engine's time options other than the margin do not apply).
//!
//! When the margin would take half the budget or more, half of the time left is used instead
//! (and at least 1 ms), so the engine still answers.
//!
//! [`budget_with`] adds YaneuraOu's time options ([`TimeOptions`]): `NetworkDelay` (kept
//! back from the planned time and the minimum thinking time), `NetworkDelay2` (kept back
//! from the hard limit, the time left plus byoyomi), `MinimumThinkingTime` ([`minimum`])
//! and `SlowMover` (scales the planned time). Each delay subtracts the larger of itself and
//! `margin`.

/// What `go` said about the clock (milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the engine's own clock.
    pub time: Option<u64>,
    pub inc: u64,
    pub byoyomi: u64,
    pub movetime: Option<u64>,
    /// Moves until the next time control (XBoard `level MPS ...`); 0 = none.
    pub moves_to_go: u32,
}

/// A thinking budget in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub soft: u64,
    pub hard: u64,
}

fn guard(available: u64, margin: u64) -> u64 {
    if available > margin.saturating_mul(2) {
        available - margin
    } else {
        (available / 2).max(1)
    }
}

/// The engine's time options (USI `setoption`), milliseconds unless said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeOptions {
    /// `ByoyomiMargin` (koma's): kept back from every budget, soft and hard.
    pub margin: u64,
    /// `NetworkDelay` (YaneuraOu's): kept back from the planned (soft) time of every move
    /// and from the minimum thinking time, when larger than `margin`.
    pub network_delay: u64,
    /// `NetworkDelay2` (YaneuraOu's): kept back from the hard limit (time left + byoyomi),
    /// when larger than `margin`.
    pub network_delay2: u64,
    /// `MinimumThinkingTime`: the search does not stop on its soft limit, nor as decided,
    /// before this (less `NetworkDelay`), never beyond the hard limit.
    pub minimum_thinking: u64,
    /// `SlowMover`: percent of the planned (soft) time.
    pub slow_mover: u64,
}

impl TimeOptions {
    /// Only a margin (what [`budget`] does): no minimum, the planned time unscaled.
    pub fn with_margin(margin: u64) -> TimeOptions {
        TimeOptions { margin, network_delay: 0, network_delay2: 0, minimum_thinking: 0, slow_mover: 100 }
    }
}

/// The budget for one move under `opts`, or `None` when the clock says nothing.
/// `movetime` takes only the margin; otherwise the hard limit keeps back the larger of
/// `margin` and `network_delay2`, and the soft limit (the planned time) the larger of
/// `margin` and `network_delay`, scaled by `slow_mover` percent, at most the hard limit.
pub fn budget_with(clock: &Clock, opts: &TimeOptions) -> Option<Budget> {
    if clock.movetime.is_some() {
        return budget(clock, opts.margin);
    }
    let hard = budget(clock, opts.margin.max(opts.network_delay2))?.hard;
    let planned = budget(clock, opts.margin.max(opts.network_delay))?.soft;
    let soft = (planned.saturating_mul(opts.slow_mover) / 100).clamp(1, hard.max(1));
    Some(Budget { soft, hard: hard.max(soft) })
}

/// The minimum thinking time of a move under `b` (`MinimumThinkingTime` less
/// `NetworkDelay`, at most the hard limit); 0 under `movetime` (which stops early only
/// when the move is decided) or when the option is 0.
pub fn minimum(clock: &Clock, opts: &TimeOptions, b: &Budget) -> u64 {
    if clock.movetime.is_some() || opts.minimum_thinking == 0 {
        return 0;
    }
    opts.minimum_thinking.saturating_sub(opts.network_delay).min(b.hard)
}

/// The budget for one move, or `None` when the clock says nothing (think until told).
pub fn budget(clock: &Clock, margin: u64) -> Option<Budget> {
    if let Some(m) = clock.movetime {
        let t = m.saturating_sub(margin.min(m / 10)).max(1);
        return Some(Budget { soft: t, hard: t });
    }
    let time = clock.time.unwrap_or(0);
    if clock.byoyomi > 0 {
        let b = guard(clock.byoyomi, margin);
        if time == 0 {
            return Some(Budget { soft: b, hard: b });
        }
        let hard_all = guard(time + clock.byoyomi, margin);
        let divisor = if clock.moves_to_go > 0 { clock.moves_to_go as u64 + 1 } else { 25 };
        let soft = (time / divisor + b).min(hard_all);
        let hard = (soft * 2).min(hard_all).max(soft);
        return Some(Budget { soft, hard });
    }
    // No time on the clock at all: think until told.
    clock.time?;
    let hard_all = guard(time, margin);
    let soft = if clock.moves_to_go > 0 {
        time / (clock.moves_to_go as u64 + 1) + clock.inc * 4 / 5
    } else if clock.inc > 0 {
        time / 30 + clock.inc * 4 / 5
    } else {
        time / 40
    };
    let soft = soft.clamp(1, hard_all);
    let hard = (soft * 3).min(hard_all).max(soft);
    Some(Budget { soft, hard })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byoyomi_only() {
        let c = Clock { byoyomi: 1000, time: Some(0), ..Clock::default() };
        assert_eq!(budget(&c, 100), Some(Budget { soft: 900, hard: 900 }));
        let c = Clock { byoyomi: 200, ..Clock::default() };
        assert_eq!(budget(&c, 100), Some(Budget { soft: 100, hard: 100 }));
    }

    #[test]
    fn main_time_and_byoyomi() {
        let c = Clock { byoyomi: 1000, time: Some(60_000), ..Clock::default() };
        let b = budget(&c, 100).unwrap();
        assert_eq!(b.soft, 60_000 / 25 + 900);
        assert!(b.hard <= 60_900 && b.hard >= b.soft);
    }

    #[test]
    fn fischer_and_sudden_death_never_overrun() {
        for time in [0u64, 10, 150, 1000, 10_000, 600_000] {
            for inc in [0u64, 100, 2000] {
                let c = Clock { time: Some(time), inc, ..Clock::default() };
                let b = budget(&c, 100).unwrap();
                assert!(b.hard <= time.max(1), "{time} {inc} {b:?}");
                assert!(b.soft <= b.hard);
            }
        }
        assert_eq!(budget(&Clock::default(), 100), None);
    }

    #[test]
    fn movetime() {
        let c = Clock { movetime: Some(1000), ..Clock::default() };
        assert_eq!(budget(&c, 100), Some(Budget { soft: 900, hard: 900 }));
        let c = Clock { movetime: Some(500), ..Clock::default() };
        assert_eq!(budget(&c, 100), Some(Budget { soft: 450, hard: 450 }));
        // The YaneuraOu options leave movetime alone.
        let yane = TimeOptions {
            network_delay: 120,
            network_delay2: 1120,
            minimum_thinking: 2000,
            slow_mover: 50,
            ..TimeOptions::with_margin(100)
        };
        assert_eq!(budget_with(&c, &yane), Some(Budget { soft: 450, hard: 450 }));
        assert_eq!(minimum(&c, &yane, &budget_with(&c, &yane).unwrap()), 0);
    }

    #[test]
    fn yaneuraou_options() {
        let koma = TimeOptions { minimum_thinking: 2000, ..TimeOptions::with_margin(100) };
        // Byoyomi only: the whole byoyomi less the margin, and the minimum is all of it.
        let c = Clock { byoyomi: 1000, time: Some(0), ..Clock::default() };
        let b = budget_with(&c, &koma).unwrap();
        assert_eq!(b, Budget { soft: 900, hard: 900 });
        assert_eq!(minimum(&c, &koma, &b), 900);
        // NetworkDelay2 above the margin: the hard limit is byoyomi + time - NetworkDelay2.
        let nd2 = TimeOptions { network_delay2: 300, ..koma };
        assert_eq!(budget_with(&c, &nd2).unwrap(), Budget { soft: 700, hard: 700 });
        let c = Clock { byoyomi: 1000, time: Some(60_000), ..Clock::default() };
        let b = budget_with(&c, &nd2).unwrap();
        assert_eq!(b.hard, (60_000 / 25 + 700) * 2);
        assert_eq!(b.soft, 60_000 / 25 + 900);
        // NetworkDelay: the planned time and the minimum lose it (not the hard limit).
        let nd = TimeOptions { network_delay: 120, ..koma };
        let b = budget_with(&c, &nd).unwrap();
        assert_eq!(b.soft, 60_000 / 25 + 880);
        assert_eq!(minimum(&c, &nd, &b), 1880);
        // SlowMover scales the planned time only, never past the hard limit.
        let slow = TimeOptions { slow_mover: 50, ..koma };
        let b = budget_with(&c, &slow).unwrap();
        assert_eq!(b.soft, (60_000 / 25 + 900) / 2);
        assert_eq!(b.hard, (60_000 / 25 + 900) * 2);
        let fast = TimeOptions { slow_mover: 1000, ..koma };
        let b = budget_with(&c, &fast).unwrap();
        assert_eq!(b.soft, b.hard);
        // Sudden death: the minimum never passes the hard limit.
        let c = Clock { time: Some(300), ..Clock::default() };
        let b = budget_with(&c, &koma).unwrap();
        assert!(minimum(&c, &koma, &b) <= b.hard && b.hard <= 300, "{b:?}");
        // The defaults of `with_margin` are `budget`'s.
        for c in
            [Clock { byoyomi: 300, ..Clock::default() }, Clock { time: Some(10_000), inc: 100, ..Clock::default() }]
        {
            assert_eq!(budget_with(&c, &TimeOptions::with_margin(100)), budget(&c, 100));
        }
    }
}
