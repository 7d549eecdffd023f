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
//! - `movetime M`: soft = hard = M - min(margin, M/5).
//!
//! When the margin would take half the budget or more, half of the time left is used instead
//! (and at least 1 ms), so the engine still answers.

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

/// The budget for one move, or `None` when the clock says nothing (think until told).
pub fn budget(clock: &Clock, margin: u64) -> Option<Budget> {
    if let Some(m) = clock.movetime {
        let t = m.saturating_sub(margin.min(m / 5)).max(1);
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
    }
}
