//! Centipawns and win probabilities: the logistic curve of computer shogi,
//! p = 1 / (1 + exp(-cp / scale)), and its inverse cp = scale ln(p / (1 - p)).
//!
//! The scale is the caller's: engines speak Ponanza's [`PONANZA_SCALE`] (600, the engine's
//! `score cp` and `koma gen --score-scale`'s default); dlshogi's hcpe evals use
//! [`DLSHOGI_EVAL_SCALE`] (756, its `eval_coef`).

/// Centipawns per logistic unit of Ponanza-style engines (and of koma-usi's `score cp`).
pub const PONANZA_SCALE: f64 = 600.0;

/// Centipawns per logistic unit of dlshogi's evals (hcpe and hcpe3 files; `eval_coef`).
pub const DLSHOGI_EVAL_SCALE: f64 = 756.0;

/// The win probability of a score of `cp` centipawns on `scale` centipawns per unit.
pub fn win_probability(cp: f64, scale: f64) -> f64 {
    1.0 / (1.0 + (-cp / scale).exp())
}

/// The score in centipawns (on `scale` per unit) of win probability `p`; `p` is kept
/// within [1e-12, 1 - 1e-12] so that the score stays finite (callers round and clamp it to
/// their format's range).
pub fn centipawns(p: f64, scale: f64) -> f64 {
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    scale * (p / (1.0 - p)).ln()
}

/// A win probability as a (win, draw, loss) value target with no draws.
pub fn wdl_of_win_probability(p: f64) -> [f32; 3] {
    let p = p as f32;
    [p, 0.0, 1.0 - p]
}

/// A (win, draw, loss) value as a win probability, draws counting half.
pub fn win_probability_of_wdl(wdl: [f32; 3]) -> f64 {
    wdl[0] as f64 + 0.5 * wdl[1] as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_directions_agree() {
        for cp in [-3000.0, -600.0, 0.0, 1.0, 659.0, 2500.0] {
            for scale in [PONANZA_SCALE, DLSHOGI_EVAL_SCALE] {
                let back = centipawns(win_probability(cp, scale), scale);
                assert!((back - cp).abs() < 1e-6, "{cp} {scale}: {back}");
            }
        }
        assert_eq!(win_probability(0.0, PONANZA_SCALE), 0.5);
        assert!((centipawns(0.75, PONANZA_SCALE) - 659.167).abs() < 1e-3);
        assert!(centipawns(1.0, PONANZA_SCALE).is_finite() && centipawns(0.0, PONANZA_SCALE) < -16000.0);
        assert_eq!(wdl_of_win_probability(0.25), [0.25, 0.0, 0.75]);
        assert_eq!(win_probability_of_wdl([0.5, 0.25, 0.25]), 0.625);
    }
}
