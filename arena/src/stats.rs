//! Match statistics: score, Elo difference with a 95% interval (trinomial variance),
//! likelihood of superiority, SPRT, and ratings of several players.
//!
//! All Elo here is logistic: expected score `s = 1 / (1 + 10^(-elo/400))`.

use rules::Color;

/// Wins, draws and losses of one player against another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wdl {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Logistic Elo of an expected score (infinite at 0 and 1).
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// Expected score of a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The error function (W. J. Cody's rational approximations are overkill here:
/// Numerical Recipes' erfc, fractional error below 1.2e-7).
pub fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        1.0 - r
    } else {
        r - 1.0
    }
}

impl Wdl {
    pub fn new(wins: u32, draws: u32, losses: u32) -> Wdl {
        Wdl { wins, draws, losses }
    }

    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// The same results from the other player's side.
    pub fn flipped(&self) -> Wdl {
        Wdl { wins: self.losses, draws: self.draws, losses: self.wins }
    }

    /// Counts one game of the player who had `side`, won by `winner` (`None`: a draw).
    pub fn count(&mut self, winner: Option<Color>, side: Color) {
        match winner {
            None => self.draws += 1,
            Some(c) if c == side => self.wins += 1,
            Some(_) => self.losses += 1,
        }
    }

    pub fn add(&mut self, other: Wdl) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
    }

    /// Points per game (win 1, draw 1/2); 0.5 with no games.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
    }

    /// Per-game variance of the score (trinomial).
    pub fn variance(&self) -> f64 {
        let n = self.games() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let s = self.score();
        (self.wins as f64 * (1.0 - s).powi(2) + self.draws as f64 * (0.5 - s).powi(2) + self.losses as f64 * s * s) / n
    }

    /// Elo difference of the score.
    pub fn elo(&self) -> f64 {
        elo_from_score(self.score())
    }

    /// The Elo of the score clamped to `[1/(2n), 1 - 1/(2n)]` (n games): finite at 0% and
    /// 100%, for logs and plots that cannot hold infinities (a sweep of n games reads as
    /// the Elo of having dropped half a game). 0 with no games.
    pub fn finite_elo(&self) -> f64 {
        let n = self.games().max(1) as f64;
        let eps = 0.5 / n;
        elo_from_score(self.score().clamp(eps, 1.0 - eps))
    }

    /// 95% interval of the Elo difference: the score's normal interval (trinomial
    /// standard error) mapped to Elo. Bounds may be infinite (a 100% score).
    pub fn elo_interval(&self) -> (f64, f64) {
        let n = self.games() as f64;
        if n == 0.0 {
            return (f64::NEG_INFINITY, f64::INFINITY);
        }
        let var = self.variance();
        let s = self.score();
        if var == 0.0 {
            // All wins, all losses or all draws: the normal interval collapses to a
            // point; use the Wilson score interval instead.
            let z2 = Z95 * Z95;
            let centre = (s + z2 / (2.0 * n)) / (1.0 + z2 / n);
            let half = Z95 / (1.0 + z2 / n) * (s * (1.0 - s) / n + z2 / (4.0 * n * n)).sqrt();
            let lo = if s == 0.0 { f64::NEG_INFINITY } else { elo_from_score(centre - half) };
            let hi = if s == 1.0 { f64::INFINITY } else { elo_from_score(centre + half) };
            return (lo, hi);
        }
        let se = (var / n).sqrt();
        (elo_from_score(s - Z95 * se), elo_from_score(s + Z95 * se))
    }

    /// Half the width of the 95% interval (the usual `+-` figure), infinite when a bound is.
    pub fn elo_error(&self) -> f64 {
        let (lo, hi) = self.elo_interval();
        (hi - lo) / 2.0
    }

    /// Likelihood of superiority: the probability that the player is the stronger,
    /// from wins and losses (draws carry no information).
    pub fn los(&self) -> f64 {
        let (w, l) = (self.wins as f64, self.losses as f64);
        if w + l == 0.0 {
            return 0.5;
        }
        0.5 * (1.0 + erf((w - l) / (2.0 * (w + l)).sqrt()))
    }
}

/// A sequential probability ratio test between two Elo hypotheses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtStatus {
    Continue,
    /// H0 accepted: the Elo difference is below elo0 (more likely than above elo1).
    AcceptH0,
    /// H1 accepted.
    AcceptH1,
}

impl Sprt {
    pub fn new(elo0: f64, elo1: f64) -> Sprt {
        Sprt { elo0, elo1, alpha: 0.05, beta: 0.05 }
    }

    /// Lower and upper LLR bounds: ln(beta / (1 - alpha)), ln((1 - beta) / alpha).
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// Log-likelihood ratio of H1 against H0 for trinomial results, in the
    /// generalised SPRT's normal approximation (the one fishtest and fastchess use for
    /// logistic Elo): `N (s1 - s0) (2 s - s0 - s1) / (2 var)`, with `s` the mean score
    /// and `var` its per-game sample variance. 0 until both a win/loss and a non-win
    /// exist (no variance).
    pub fn llr(&self, r: &Wdl) -> f64 {
        let n = r.games() as f64;
        let var = r.variance();
        if n == 0.0 || var <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        n * (s1 - s0) * (2.0 * r.score() - s0 - s1) / (2.0 * var)
    }

    pub fn status(&self, r: &Wdl) -> SprtStatus {
        let llr = self.llr(r);
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtStatus::AcceptH1
        } else if llr <= lo {
            SprtStatus::AcceptH0
        } else {
            SprtStatus::Continue
        }
    }
}

/// Ratings of several players from pairwise results, by maximum likelihood of the
/// logistic (Bradley-Terry) model with a draw counted as half a win each way, found by
/// the minorisation-maximisation iteration. A prior of one draw per pair that played
/// keeps the ratings of players that won or lost every game finite. `results[i][j]` is
/// player i's record against player j. The ratings are shifted so that `anchor` is 0.
pub fn ratings(results: &[Vec<Wdl>], anchor: usize) -> Vec<f64> {
    let n = results.len();
    let games = |i: usize, j: usize| results[i][j].games() as f64 + 1.0;
    let played = |i: usize, j: usize| i != j && results[i][j].games() > 0;
    let score: Vec<f64> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| played(i, j))
                .map(|j| results[i][j].wins as f64 + 0.5 * results[i][j].draws as f64 + 0.5)
                .sum()
        })
        .collect();
    let mut gamma = vec![1.0f64; n];
    for _ in 0..10_000 {
        let mut next = gamma.clone();
        let mut change = 0.0f64;
        for i in 0..n {
            let denom: f64 = (0..n).filter(|&j| played(i, j)).map(|j| games(i, j) / (gamma[i] + gamma[j])).sum();
            if denom > 0.0 {
                next[i] = score[i] / denom;
            }
        }
        // Normalise (geometric mean 1) to keep the numbers in range.
        let mean_log = next.iter().map(|g| g.ln()).sum::<f64>() / n as f64;
        for (g, old) in next.iter_mut().zip(&gamma) {
            *g /= mean_log.exp();
            change = change.max((g.ln() - old.ln()).abs());
        }
        gamma = next;
        if change < 1e-10 {
            break;
        }
    }
    let elo: Vec<f64> = gamma.iter().map(|g| 400.0 * g.log10()).collect();
    let base = elo.get(anchor).copied().unwrap_or(0.0);
    elo.iter().map(|e| e - base).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn elo_of_known_scores() {
        assert!(close(elo_from_score(0.75), 190.848_501_887_864_9, 1e-9));
        assert!(close(elo_from_score(0.5), 0.0, 1e-12));
        assert!(close(elo_from_score(0.25), -190.848_501_887_864_9, 1e-9));
        assert!(close(score_from_elo(400.0), 10.0 / 11.0, 1e-12));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
    }

    #[test]
    fn finite_elo_clamps_sweeps_only() {
        // 10-0: score clamped to 1 - 1/20 = 0.95 -> +511.5.
        assert!(close(Wdl::new(10, 0, 0).finite_elo(), elo_from_score(0.95), 1e-9));
        assert!(close(Wdl::new(10, 0, 0).finite_elo(), 511.5, 0.1));
        assert!(close(Wdl::new(0, 0, 10).finite_elo(), -511.5, 0.1));
        // Inside the clamp: the plain Elo.
        assert!(close(Wdl::new(60, 20, 20).finite_elo(), Wdl::new(60, 20, 20).elo(), 1e-12));
        assert_eq!(Wdl::default().finite_elo(), 0.0);
        let mut w = Wdl::default();
        w.count(Some(Color::Sente), Color::Sente);
        w.count(Some(Color::Sente), Color::Gote);
        w.count(None, Color::Gote);
        assert_eq!(w, Wdl::new(1, 1, 1));
    }

    #[test]
    fn erf_matches_tables() {
        // Abramowitz & Stegun table 7.1.
        for (x, v) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-1.0, -0.842_700_792_9),
        ] {
            assert!(close(erf(x), v, 2e-7), "erf({x}) = {}", erf(x));
        }
    }

    #[test]
    fn interval_and_los_of_a_known_match() {
        // 60 wins, 20 draws, 20 losses: score 0.7, Elo 147.19; per-game variance
        // (60*0.09 + 20*0.04 + 20*0.49) / 100 = 0.16, se 0.04, score interval
        // 0.7 -+ 0.0784 -> Elo 86.2 .. 218.3 (computed by hand from the formulas).
        let r = Wdl::new(60, 20, 20);
        assert!(close(r.score(), 0.7, 1e-12));
        assert!(close(r.elo(), 147.190_714_1, 1e-6));
        assert!(close(r.variance(), 0.16, 1e-12));
        let (lo, hi) = r.elo_interval();
        assert!(close(lo, elo_from_score(0.7 - Z95 * 0.04), 1e-9));
        assert!(close(hi, elo_from_score(0.7 + Z95 * 0.04), 1e-9));
        assert!(close(lo, 86.23, 0.01), "{lo}");
        assert!(close(hi, 218.25, 0.01), "{hi}");
        // LOS: 0.5 (1 + erf(40 / sqrt(160))) = Phi(40 / sqrt(80)) = Phi(4.472) ~ 0.999996.
        assert!(close(r.los(), 0.999_996_1, 1e-6), "{}", r.los());
        // Equal wins and losses: 50%.
        assert!(close(Wdl::new(7, 3, 7).los(), 0.5, 1e-6));
        // 3 wins 1 loss: Phi(2 / 2) = 0.841345.
        assert!(close(Wdl::new(3, 0, 1).los(), 0.841_344_7, 1e-6));
        assert_eq!(r.flipped(), Wdl::new(20, 20, 60));
        // 10 wins out of 10: Wilson lower bound 10 / (10 + z^2) = 0.72247 -> Elo +166.2.
        let (lo, hi) = Wdl::new(10, 0, 0).elo_interval();
        assert!(close(lo, elo_from_score(10.0 / (10.0 + Z95 * Z95)), 1e-6), "{lo}");
        assert!(close(lo, 166.2, 0.1), "{lo}");
        assert_eq!(hi, f64::INFINITY);
        let (lo, hi) = Wdl::new(0, 0, 10).elo_interval();
        assert_eq!(lo, f64::NEG_INFINITY);
        assert!(close(hi, -166.2, 0.1), "{hi}");
    }

    #[test]
    fn sprt_values() {
        let t = Sprt::new(0.0, 10.0);
        let (lo, hi) = t.bounds();
        assert!(close(lo, -2.944_438_979, 1e-8) && close(hi, 2.944_438_979, 1e-8));
        // 600 wins, 200 draws, 200 losses (score 0.7, var 0.16): s0 = 0.5,
        // s1 = 0.514387..., LLR = 1000 * 0.014387 * (1.4 - 1.014387) / 0.32 = 17.34.
        let r = Wdl::new(600, 200, 200);
        let s1 = score_from_elo(10.0);
        let expect = 1000.0 * (s1 - 0.5) * (1.4 - 0.5 - s1) / 0.32;
        assert!(close(t.llr(&r), expect, 1e-9));
        assert!(close(t.llr(&r), 17.34, 0.01), "{}", t.llr(&r));
        assert_eq!(t.status(&r), SprtStatus::AcceptH1);
        assert_eq!(t.status(&r.flipped()), SprtStatus::AcceptH0);
        assert_eq!(t.status(&Wdl::new(5, 5, 5)), SprtStatus::Continue);
        assert_eq!(t.llr(&Wdl::new(0, 4, 0)), 0.0);
    }

    #[test]
    fn ratings_recover_pairwise_elo() {
        // Two players: the MLE with the one-draw prior is the Elo of the smoothed score.
        let a = Wdl::new(30, 10, 10);
        let res = vec![vec![Wdl::default(), a], vec![a.flipped(), Wdl::default()]];
        let r = ratings(&res, 1);
        let smoothed = (30.0 + 5.0 + 0.5) / 51.0;
        assert!(close(r[0], elo_from_score(smoothed), 1e-6), "{r:?}");
        assert_eq!(r[1], 0.0);
        // A chain: A beats B always, B beats C always -> finite and ordered.
        let w = Wdl::new(10, 0, 0);
        let z = Wdl::default();
        let res = vec![vec![z, w, z], vec![w.flipped(), z, w], vec![z, w.flipped(), z]];
        let r = ratings(&res, 2);
        assert!(r[0] > r[1] && r[1] > r[2] && r[0].is_finite());
    }
}
