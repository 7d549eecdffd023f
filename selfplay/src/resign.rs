//! When self-play resigns: a fixed threshold on the root value, or one calibrated from
//! the games played out (AlphaGo Zero: the threshold is chosen so that under 5% of the
//! resignations would have been wrong).
//!
//! Calibration reads the no-resign games (`selfplay.no_resign_fraction`). For each side
//! of such a game it computes the side's *resign level*: the highest threshold at which
//! it would not have resigned, the lowest value over the game of the best root value in
//! any `resign_consecutive` of its moves in a row, and whether it lost. A threshold
//! resigns the sides whose level is below it; a resignation is false when that side did
//! not lose (AlphaGo Zero's false positives, the `selfplay/false_resign_rate` that
//! TensorBoard shows). The threshold is the most eager one, up to `resign_threshold`, at
//! which at most a share `resign_false_rate` of the resignations it makes would have been
//! false; nothing resigns until enough sides are in. (A first version took the quantile
//! of the non-losers' levels, which bounds the share of non-losers that resign instead:
//! with a young network, whose losers rarely look lost, that let 54% of resignations be
//! false in a 40-minute run.)
//!
//! The levels live in the self-play process and outlast network updates; a resumed run
//! or a new worker starts calibrating again (it resigns nothing for its first games).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use rules::Color;

use crate::config::SelfplayConfig;

/// Sides the calibration keeps (the most recent), and needs before it resigns.
/// Two per game: 500 games, and 40.
pub const CALIBRATION_WINDOW: usize = 1000;
pub const CALIBRATION_MIN_SIDES: usize = 80;

/// The threshold self-play resigns at, shared by the workers of one run.
pub struct Resign {
    /// The current threshold (f32 bits); -1 resigns nothing.
    threshold: AtomicU32,
    calibration: Option<Mutex<Calibration>>,
}

struct Calibration {
    false_rate: f64,
    ceiling: f32,
    sides: VecDeque<SideLevel>,
}

/// One side of a played-out game: its resign level and whether it lost.
#[derive(Clone, Copy, Debug)]
struct SideLevel {
    level: f32,
    lost: bool,
}

impl Resign {
    pub fn new(sp: &SelfplayConfig) -> Resign {
        let calibrated = sp.resign_false_rate > 0.0 && sp.resign_threshold > -1.0;
        let calibration = calibrated.then(|| {
            Mutex::new(Calibration {
                false_rate: sp.resign_false_rate,
                ceiling: sp.resign_threshold,
                sides: VecDeque::with_capacity(CALIBRATION_WINDOW),
            })
        });
        let start = if calibrated { -1.0 } else { sp.resign_threshold };
        Resign { threshold: AtomicU32::new(start.to_bits()), calibration }
    }

    /// The threshold now: a side resigns below it (after `resign_consecutive` moves).
    pub fn threshold(&self) -> f32 {
        f32::from_bits(self.threshold.load(Ordering::Relaxed))
    }

    /// Whether resignation is on at all now.
    pub fn active(&self) -> bool {
        self.threshold() > -1.0
    }

    /// A no-resign game has ended: its moves' root values `(side, win - loss)` in game
    /// order and its winner. Updates the calibrated threshold (a fixed one stays).
    pub fn observe_played_out(&self, values: &[(Color, f32)], winner: Option<Color>, consecutive: u32) {
        let Some(cal) = &self.calibration else { return };
        let mut cal = cal.lock().unwrap_or_else(|e| e.into_inner());
        for side in [Color::Sente, Color::Gote] {
            let qs: Vec<f32> = values.iter().filter(|(s, _)| *s == side).map(|&(_, q)| q).collect();
            if cal.sides.len() == CALIBRATION_WINDOW {
                cal.sides.pop_front();
            }
            let lost = winner == Some(side.opponent());
            cal.sides.push_back(SideLevel { level: resign_level(&qs, consecutive as usize), lost });
        }
        let t = cal.threshold();
        self.threshold.store(t.to_bits(), Ordering::Relaxed);
    }
}

impl Calibration {
    fn threshold(&self) -> f32 {
        if self.sides.len() < CALIBRATION_MIN_SIDES {
            return -1.0;
        }
        let mut sorted: Vec<SideLevel> = self.sides.iter().copied().collect();
        sorted.sort_by(|a, b| a.level.total_cmp(&b.level));
        // The threshold at sorted[k]'s level (the ceiling past the last) resigns exactly
        // sorted[..k] when the level differs from the one before; `wrong` counts their
        // non-losers.
        let mut best = -1.0f32;
        let mut wrong = 0usize;
        for k in 0..=sorted.len() {
            let t = sorted.get(k).map_or(self.ceiling, |s| s.level).min(self.ceiling);
            let boundary = k == 0 || k == sorted.len() || sorted[k - 1].level < sorted[k].level;
            if boundary && wrong as f64 <= self.false_rate * k as f64 {
                best = best.max(t);
            }
            if t >= self.ceiling {
                break;
            }
            wrong += usize::from(!sorted[k].lost);
        }
        best.clamp(-1.0, self.ceiling)
    }
}

/// The highest threshold at which a side with these root values (its moves, in order)
/// would not have resigned: the minimum over every `consecutive` moves in a row of their
/// maximum; +inf when it made fewer moves than that.
pub fn resign_level(values: &[f32], consecutive: usize) -> f32 {
    let k = consecutive.max(1);
    values.windows(k).map(|w| w.iter().copied().fold(f32::NEG_INFINITY, f32::max)).fold(f32::INFINITY, f32::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(threshold: f32, false_rate: f64) -> SelfplayConfig {
        SelfplayConfig { resign_threshold: threshold, resign_false_rate: false_rate, ..Default::default() }
    }

    /// Would a side with these values resign at `t` (the worker's rule)?
    fn would_resign(values: &[f32], consecutive: usize, t: f32) -> bool {
        let mut below = 0;
        values.iter().any(|&q| {
            below = if q < t { below + 1 } else { 0 };
            below >= consecutive
        })
    }

    #[test]
    fn the_level_is_where_the_consecutive_rule_starts_to_resign() {
        let values = [0.2, -0.5, -0.9, -0.7, 0.1, -0.95, -0.6, 0.3];
        assert_eq!(resign_level(&values, 3), -0.5);
        assert_eq!(resign_level(&values, 1), -0.95);
        assert_eq!(resign_level(&values[..2], 3), f32::INFINITY);
        for k in 1..=4 {
            let level = resign_level(&values, k);
            for t in [-1.0f32, -0.96, -0.9, -0.8, -0.7, -0.69, -0.5, 0.0, 0.5] {
                assert_eq!(would_resign(&values, k, t), t > level, "k {k} threshold {t} level {level}");
            }
        }
    }

    #[test]
    fn a_fixed_threshold_stays() {
        let r = Resign::new(&config(-0.9, 0.0));
        assert_eq!(r.threshold(), -0.9);
        r.observe_played_out(&[(Color::Sente, -0.99); 10], None, 3);
        assert_eq!(r.threshold(), -0.9);
        assert!(!Resign::new(&config(-1.0, 0.05)).active(), "-1 never resigns, calibrated or not");
    }

    /// The share of the resignations at `t` that are false, over (level, lost) sides.
    fn false_share(sides: &[(f32, bool)], t: f32) -> f64 {
        let resigned: Vec<bool> = sides.iter().filter(|(l, _)| t > *l).map(|&(_, lost)| lost).collect();
        resigned.iter().filter(|&&lost| !lost).count() as f64 / resigned.len().max(1) as f64
    }

    #[test]
    fn calibration_resigns_nothing_until_enough_games_then_keeps_the_false_share() {
        let r = Resign::new(&config(-0.3, 0.05));
        assert!(!r.active());
        // Played-out games won by sente. In half of them the loser (gote) dips to a level
        // spread over [-0.99, -0.9], in the others it never looked lost; the winner's
        // lowest point is spread over [-0.93, 0]. The quantile of the winners' levels
        // (-0.88) would resign 10 winners with only 100 losers: 9% false.
        let mut sides = Vec::new();
        for i in 0..200 {
            let spread = |m: usize| (i * m % 200) as f32 / 199.0;
            let loser_dip = if i % 2 == 0 { -0.99 + 0.09 * spread(53) } else { 0.5 };
            let winner_dip = -0.93 + 0.93 * spread(37);
            sides.push((winner_dip, false));
            sides.push((loser_dip, true));
            let values =
                [(Color::Sente, 0.2), (Color::Gote, loser_dip), (Color::Sente, winner_dip), (Color::Gote, 0.1)];
            r.observe_played_out(&values, Some(Color::Sente), 1);
            if 2 * (i + 1) < CALIBRATION_MIN_SIDES {
                assert!(!r.active(), "game {i}");
            }
        }
        let t = r.threshold();
        assert!(r.active() && t < -0.3, "resigns, below the ceiling: {t}");
        assert!(false_share(&sides, t) <= 0.05, "{} false at {t}", false_share(&sides, t));
        // As eager as the share allows: every higher threshold resigns too many winners.
        for step in 1..=100 {
            let higher = t + step as f32 * 0.005;
            if higher <= -0.3 {
                assert!(false_share(&sides, higher) > 0.05, "{higher} is more eager and within the share");
            }
        }
        // The ceiling caps it: with every level high, it stops at resign_threshold.
        let capped = Resign::new(&config(-0.5, 0.05));
        for _ in 0..CALIBRATION_MIN_SIDES / 2 {
            capped.observe_played_out(&[(Color::Sente, 0.9), (Color::Gote, 0.9)], None, 1);
        }
        assert_eq!(capped.threshold(), -0.5);
        // Losers that never look lost, winners that do: no threshold resigns rightly.
        let never = Resign::new(&config(-0.5, 0.05));
        for _ in 0..CALIBRATION_MIN_SIDES / 2 {
            never.observe_played_out(&[(Color::Sente, -0.99), (Color::Gote, 0.9)], Some(Color::Sente), 1);
        }
        assert!(never.threshold() <= -0.99, "resigns no winner: {}", never.threshold());
    }
}
