//! When self-play resigns: a fixed threshold on the root value, or one calibrated from
//! the games played out (AlphaGo Zero: the threshold is chosen so that under 5% of the
//! resignations would have been wrong).
//!
//! Calibration reads the no-resign games (`selfplay.no_resign_fraction`). For each side
//! that did not lose such a game it computes the side's *resign level*: the highest
//! threshold at which it would not have resigned, the lowest value over the game of the
//! best root value in any `resign_consecutive` of its moves in a row. A threshold at or
//! below a side's level never resigns it; so the threshold that resigns at most a share
//! `resign_false_rate` of the games that were not lost is that quantile of the levels.
//! It is capped by `resign_threshold` (the most eager threshold allowed) and resigns
//! nothing until enough levels are in.
//!
//! The levels live in the self-play process and outlast network updates; a resumed run
//! or a new worker starts calibrating again (it resigns nothing for its first games).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use rules::Color;

use crate::config::SelfplayConfig;

/// Levels the calibration keeps (the most recent), and needs before it resigns.
pub const CALIBRATION_WINDOW: usize = 500;
pub const CALIBRATION_MIN_LEVELS: usize = 40;

/// The threshold self-play resigns at, shared by the workers of one run.
pub struct Resign {
    /// The current threshold (f32 bits); -1 resigns nothing.
    threshold: AtomicU32,
    calibration: Option<Mutex<Calibration>>,
}

struct Calibration {
    false_rate: f64,
    ceiling: f32,
    levels: VecDeque<f32>,
}

impl Resign {
    pub fn new(sp: &SelfplayConfig) -> Resign {
        let calibrated = sp.resign_false_rate > 0.0 && sp.resign_threshold > -1.0;
        let calibration = calibrated.then(|| {
            Mutex::new(Calibration {
                false_rate: sp.resign_false_rate,
                ceiling: sp.resign_threshold,
                levels: VecDeque::with_capacity(CALIBRATION_WINDOW),
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
            if winner == Some(side.opponent()) {
                continue;
            }
            let qs: Vec<f32> = values.iter().filter(|(s, _)| *s == side).map(|&(_, q)| q).collect();
            if cal.levels.len() == CALIBRATION_WINDOW {
                cal.levels.pop_front();
            }
            cal.levels.push_back(resign_level(&qs, consecutive as usize));
        }
        let t = cal.threshold();
        self.threshold.store(t.to_bits(), Ordering::Relaxed);
    }
}

impl Calibration {
    fn threshold(&self) -> f32 {
        if self.levels.len() < CALIBRATION_MIN_LEVELS {
            return -1.0;
        }
        let mut sorted: Vec<f32> = self.levels.iter().copied().collect();
        sorted.sort_by(f32::total_cmp);
        // At most floor(rate * n) levels lie below sorted[k].
        let k = (self.false_rate * sorted.len() as f64).floor() as usize;
        sorted[k.min(sorted.len() - 1)].clamp(-1.0, self.ceiling)
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

    #[test]
    fn calibration_resigns_nothing_until_enough_games_then_keeps_the_false_share() {
        let r = Resign::new(&config(-0.5, 0.05));
        assert!(!r.active());
        // Played-out games won by sente: gote lost (not counted); sente dipped to a level
        // spread from -0.99 to -0.01 over the games.
        let mut levels = Vec::new();
        for i in 0..200 {
            let dip = -0.99 + 0.98 * (i * 37 % 200) as f32 / 199.0;
            levels.push(dip);
            let values = [(Color::Sente, 0.0), (Color::Gote, 0.0), (Color::Sente, dip), (Color::Gote, 0.5)];
            r.observe_played_out(&values, Some(Color::Sente), 1);
            if i + 1 < CALIBRATION_MIN_LEVELS {
                assert!(!r.active(), "game {i}");
            }
        }
        let t = r.threshold();
        let wrong = levels.iter().filter(|&&l| t > l).count();
        assert!(wrong <= 10, "{wrong} of 200 would have resigned wrongly at {t}");
        assert!(wrong >= 8, "the threshold is as eager as the share allows: {wrong} at {t}");
        // The ceiling caps it: with every level high, it stops at resign_threshold.
        let capped = Resign::new(&config(-0.5, 0.05));
        for _ in 0..CALIBRATION_MIN_LEVELS {
            capped.observe_played_out(&[(Color::Sente, 0.9), (Color::Gote, 0.9)], None, 1);
        }
        assert_eq!(capped.threshold(), -0.5);
    }
}
