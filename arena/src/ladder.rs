//! The baseline ladder: fixed players with measured ratings, and where a player's
//! results against some of them place it on that scale.
//!
//! The ratings are those of the ladder measured in `arena/README.md` ("The ladder":
//! each rung against the next, 20 games a pair, maximum likelihood with `random` = 0).
//! The random -> greedy -> fsf1 steps were 20-0 sweeps, so those gaps are lower bounds
//! filled by the prior; read a placement near them as approximate.

use crate::stats::{Wdl, Z95};

/// (name, rating) of each rung, weakest first: the built-in players and the Debian
/// engines at the settings given in `arena/README.md`.
pub const MEASURED_LADDER: &[(&str, f64)] = &[
    ("random", 0.0),
    ("greedy", 645.0),
    ("fsf1", 1290.0),
    ("gnushogi1", 1396.0),
    ("fsf3", 1430.0),
    ("fsf5", 1576.0),
    ("gnushogi3", 1576.0),
    ("gps4", 2222.0),
    ("gps6", 2324.0),
];

/// The measured rating of the rung named `name`.
pub fn rung_rating(name: &str) -> Option<f64> {
    MEASURED_LADDER.iter().find(|(n, _)| *n == name).map(|r| r.1)
}

/// A rating on the ladder with its 95% half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    pub rating: f64,
    pub error95: f64,
}

/// The probability of scoring against a player `diff` Elo weaker (logistic Elo).
fn expected_score(diff: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-diff / 400.0))
}

/// The rating that best explains `results` (rung rating, record against that rung) by
/// maximum likelihood of the logistic model, a draw half a win. As in the arena's
/// ratings, one virtual draw against each rung keeps a clean sweep finite. The error
/// comes from the curvature of the likelihood. `None` without games.
pub fn place(results: &[(f64, Wdl)]) -> Option<Placement> {
    let played: Vec<(f64, f64, f64)> = results
        .iter()
        .filter(|(_, w)| w.games() > 0)
        .map(|(r, w)| (*r, w.wins as f64 + 0.5 * w.draws as f64 + 0.5, w.games() as f64 + 1.0))
        .collect();
    if played.is_empty() {
        return None;
    }
    // The score's slope in the rating falls as the rating rises: bisect its root.
    let surplus = |rating: f64| played.iter().map(|(r, s, n)| s - n * expected_score(rating - r)).sum::<f64>();
    let (lowest, highest) =
        played.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (mut lo, mut hi) = (lowest - 4000.0, highest + 4000.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if surplus(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let rating = 0.5 * (lo + hi);
    let k = std::f64::consts::LN_10 / 400.0;
    let information: f64 = played
        .iter()
        .map(|(r, _, n)| {
            let p = expected_score(rating - r);
            n * p * (1.0 - p) * k * k
        })
        .sum();
    Some(Placement { rating, error95: Z95 / information.sqrt() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wdl(wins: u32, draws: u32, losses: u32) -> Wdl {
        Wdl { wins, draws, losses }
    }

    #[test]
    fn an_even_score_places_a_player_on_the_rung() {
        let p = place(&[(645.0, wdl(10, 0, 10))]).unwrap();
        assert!((p.rating - 645.0).abs() < 1e-6, "{p:?}");
        assert!(p.error95 > 100.0 && p.error95 < 400.0, "{p:?}");
    }

    #[test]
    fn a_player_between_two_rungs_lands_between_them() {
        let p = place(&[(0.0, wdl(40, 0, 0)), (645.0, wdl(2, 2, 36))]).unwrap();
        assert!(p.rating > 0.0 && p.rating < 645.0, "{p:?}");
        // Scoring 75% against one rung is about +191 Elo above it (with the virtual draw, a little less).
        let q = place(&[(645.0, wdl(30, 0, 10))]).unwrap();
        assert!((q.rating - 645.0 - 186.0).abs() < 5.0, "{q:?}");
        assert!(place(&[(0.0, wdl(0, 0, 0))]).is_none());
    }

    #[test]
    fn the_ladder_names_its_rungs_weakest_first() {
        assert_eq!(rung_rating("random"), Some(0.0));
        assert_eq!(rung_rating("greedy"), Some(645.0));
        assert!(rung_rating("previous").is_none());
        assert!(MEASURED_LADDER.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
