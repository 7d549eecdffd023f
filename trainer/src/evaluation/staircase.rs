//! Which rungs of the ladder an evaluation plays when `eval.opponents` names `ladder`: a
//! staircase over the rungs in order of rating that brackets the network.
//!
//! It starts at the lowest rung rated above an estimate of the network (the previous
//! evaluation's rating, or `eval.ladder_start`'s) and plays `eval.games` games against
//! it and against the rung below it (the evaluation plays the two at once). While the
//! network beats the highest rung played outright (at least [`OUTRIGHT`] of the points) it
//! climbs to the next rung; while it loses outright to the lowest rung played it steps
//! down; otherwise, having played one rung only, it plays the rung below too, so that each
//! evaluation meets the rung just above and the rung just below. It
//! stops at the ends of the ladder and after `eval.ladder_rungs` rungs. The network is
//! then placed by maximum likelihood over all its games against the rungs played
//! (`arena::ladder::place`): the interval is finite once it has both won and lost points.

use arena::Wdl;

/// The share of the points at which a rung counts as beaten outright (and one minus it as
/// lost to outright): about 300 Elo apart, more than most gaps between the rungs, so the
/// rung beyond says more than this one.
pub const OUTRIGHT: f64 = 0.85;

/// The first rung to play: the lowest rated above `estimate` (`elos` lowest first), or the
/// top rung when none is.
pub fn first_rung(elos: &[f64], estimate: f64) -> usize {
    elos.iter().position(|&e| e > estimate).unwrap_or(elos.len().saturating_sub(1))
}

/// The next rung to play after `played` (rung index, results; at least one visit), with
/// `rungs` rungs on the ladder and at most `max_visits` visits; `None` when done.
pub fn next_rung(played: &[(usize, Wdl)], rungs: usize, max_visits: usize) -> Option<usize> {
    if played.is_empty() || played.len() >= max_visits {
        return None;
    }
    let top = played.iter().map(|&(i, _)| i).max()?;
    let bottom = played.iter().map(|&(i, _)| i).min()?;
    let score = |rung: usize| {
        let mut all = Wdl::default();
        played.iter().filter(|&&(i, _)| i == rung).for_each(|&(_, w)| all.add(w));
        all.score()
    };
    if score(top) >= OUTRIGHT {
        return (top + 1 < rungs).then_some(top + 1);
    }
    let below = bottom.checked_sub(1);
    if top == bottom || score(bottom) <= 1.0 - OUTRIGHT {
        return below;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const ELOS: [f64; 5] = [0.0, 600.0, 1400.0, 2200.0, 3000.0];

    fn wdl(wins: u32, draws: u32, losses: u32) -> Wdl {
        Wdl { wins, draws, losses }
    }

    /// Plays the staircase from `estimate` against a network whose result against rung i
    /// is `results[i]`: the rungs visited, in order.
    fn climb(estimate: f64, results: &[Wdl], max_visits: usize) -> Vec<usize> {
        let mut played = vec![(first_rung(&ELOS, estimate), Wdl::default())];
        played[0].1 = results[played[0].0];
        while let Some(next) = next_rung(&played, ELOS.len(), max_visits) {
            played.push((next, results[next]));
        }
        played.iter().map(|&(i, _)| i).collect()
    }

    #[test]
    fn the_first_rung_is_the_lowest_above_the_estimate() {
        assert_eq!(first_rung(&ELOS, -50.0), 0);
        assert_eq!(first_rung(&ELOS, 0.0), 1);
        assert_eq!(first_rung(&ELOS, 1500.0), 3);
        assert_eq!(first_rung(&ELOS, 9000.0), 4, "above every rung: the top one");
    }

    #[test]
    fn a_network_between_two_rungs_plays_the_one_above_then_the_one_below() {
        let results = [wdl(4, 0, 0), wdl(4, 0, 0), wdl(3, 0, 1), wdl(1, 0, 3), wdl(0, 0, 4)];
        assert_eq!(climb(1500.0, &results, 4), [3, 2]);
        assert_eq!(climb(700.0, &results, 4), [2, 1], "from below the bracket: the upper rung is not beaten");
    }

    #[test]
    fn it_climbs_past_rungs_it_beats_outright_and_steps_down_past_rungs_it_loses_to() {
        let strong = [wdl(4, 0, 0), wdl(4, 0, 0), wdl(4, 0, 0), wdl(4, 0, 0), wdl(2, 1, 1)];
        assert_eq!(climb(0.0, &strong, 8), [1, 2, 3, 4]);
        let weak = [wdl(2, 0, 2), wdl(0, 0, 4), wdl(0, 0, 4), wdl(0, 0, 4), wdl(0, 0, 4)];
        assert_eq!(climb(2500.0, &weak, 8), [4, 3, 2, 1, 0]);
        // A draw-and-win 3.5 of 4 (0.875) is beaten outright; 3 of 4 is not.
        let nearly = [wdl(4, 0, 0), wdl(3, 1, 0), wdl(3, 0, 1), wdl(0, 0, 4), wdl(0, 0, 4)];
        assert_eq!(climb(100.0, &nearly, 8), [1, 2]);
    }

    #[test]
    fn it_stops_at_the_ends_of_the_ladder_and_after_the_visits_allowed() {
        let sweeps = [wdl(4, 0, 0); 5];
        assert_eq!(climb(2500.0, &sweeps, 8), [4], "the top rung beaten: nothing above");
        assert_eq!(climb(0.0, &sweeps, 2), [1, 2], "two visits allowed");
        let losses = [wdl(0, 0, 4); 5];
        assert_eq!(climb(-10.0, &losses, 8), [0], "the bottom rung lost to: nothing below");
        assert_eq!(next_rung(&[], 5, 4), None);
    }

    /// With one rung beaten outright and the one above not, the placement over both has a
    /// finite interval that lies between them.
    #[test]
    fn the_bracket_places_the_network_with_a_finite_interval() {
        let played = [(3, wdl(4, 0, 0)), (4, wdl(1, 0, 3))];
        assert_eq!(next_rung(&played, 5, 8), None);
        let results: Vec<(f64, Wdl)> = played.iter().map(|&(i, w)| (ELOS[i], w)).collect();
        let p = arena::ladder::place(&results).unwrap();
        assert!(p.low.is_finite() && p.high.is_finite(), "{p:?}");
        assert!(p.elo > ELOS[3] && p.elo < ELOS[4], "{p:?}");
    }
}
