//! A small, fast, seedable random number generator (xoshiro256++) with the few
//! distributions self-play needs (Dirichlet via Gamma, Gumbel). No dependency, so runs
//! repeat exactly for a given seed.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng { s: [splitmix(&mut x), splitmix(&mut x), splitmix(&mut x), splitmix(&mut x)] }
    }

    /// A generator for stream `i` of a seed (workers, games).
    pub fn stream(seed: u64, i: u64) -> Rng {
        Rng::new(seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03).rotate_left(17))
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let r = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1).
    fn open01(&mut self) -> f64 {
        loop {
            let u = self.f64();
            if u > 0.0 {
                return u;
            }
        }
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.open01(), self.f64());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Gamma(shape, 1) (Marsaglia and Tsang; shape < 1 by the boost u^(1/shape)).
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = self.open01();
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.open01();
            if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// A symmetric Dirichlet(alpha) sample of length n into `out`.
    pub fn dirichlet(&mut self, alpha: f64, n: usize, out: &mut Vec<f32>) {
        out.clear();
        let mut sum = 0.0;
        for _ in 0..n {
            let g = self.gamma(alpha);
            sum += g;
            out.push(g as f32);
        }
        if sum > 0.0 {
            for v in out.iter_mut() {
                *v = (*v as f64 / sum) as f32;
            }
        } else if n > 0 {
            out.iter_mut().for_each(|v| *v = 1.0 / n as f32);
        }
    }

    /// Standard Gumbel sample: -ln(-ln u).
    pub fn gumbel(&mut self) -> f32 {
        -(-(self.open01()).ln()).ln() as f32
    }

    /// An index drawn with probability proportional to `weights` (non-negative; all zero:
    /// uniform).
    pub fn weighted(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        if total.is_nan() || total <= 0.0 {
            return self.below(weights.len());
        }
        let mut x = self.f64() * total;
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirichlet_sums_to_one_and_gamma_mean() {
        let mut r = Rng::new(1);
        let mut v = Vec::new();
        r.dirichlet(0.15, 50, &mut v);
        assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        let m: f64 = (0..20000).map(|_| r.gamma(0.3)).sum::<f64>() / 20000.0;
        assert!((m - 0.3).abs() < 0.03, "{m}");
        let m: f64 = (0..20000).map(|_| r.gamma(2.5)).sum::<f64>() / 20000.0;
        assert!((m - 2.5).abs() < 0.1, "{m}");
    }
}
