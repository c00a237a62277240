//! Seeded randomness and stable hashing.
//!
//! Results must not change when a dependency is upgraded, so the generator is written here
//! (xoshiro256++, Blackman & Vigna 2019, seeded through SplitMix64) instead of taken from `rand`,
//! whose `StdRng` stream is not stable across versions. Hashes that name cells and seeds are
//! FNV-1a 64, also stable forever.

/// One step of SplitMix64: a good 64-bit mixer, used to expand seeds and combine hashes.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a 64-bit hash of bytes.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// Combine a seed with a label into a new, well-mixed seed.
pub fn derive_seed(seed: u64, label: &str) -> u64 {
    let mut s = seed ^ fnv1a64(label.as_bytes());
    splitmix64(&mut s)
}

/// xoshiro256++ pseudo-random generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = (self.s[0].wrapping_add(self.s[3]))
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject). `n` must be > 0.
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        let n = n as u64;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            let low = m as u64;
            if low >= n || low >= n.wrapping_neg() % n {
                return (m >> 64) as usize;
            }
        }
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// Standard normal draw (Marsaglia's polar method; the second value is discarded so that
    /// the stream does not depend on hidden state).
    pub fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.f64() - 1.0;
            let v = 2.0 * self.f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * s.ln() / s).sqrt();
            }
        }
    }

    /// Gamma(shape, 1) draw (Marsaglia & Tsang 2000; shapes below 1 by the boost
    /// Gamma(a) = Gamma(a + 1) · U^(1/a)).
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = self.f64().max(f64::MIN_POSITIVE);
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.f64();
            if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// Beta(a, b) draw, as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b).
    pub fn beta(&mut self, a: f64, b: f64) -> f64 {
        let x = self.gamma(a);
        let y = self.gamma(b);
        if x + y > 0.0 { x / (x + y) } else { 0.5 }
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// Index of the largest value; ties go to the lowest index (numpy's `argmax`). NaN never wins
/// unless every value is NaN, in which case index 0 is returned.
pub fn argmax_first(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, v) in values.iter().enumerate() {
        if *v > values[best] || (values[best].is_nan() && !v.is_nan()) {
            best = i;
        }
    }
    best
}

/// Index of the largest value; ties broken uniformly at random (one pass, reservoir sampling).
pub fn argmax_random(values: &[f64], rng: &mut Rng) -> usize {
    let mut best = 0;
    let mut ties = 0usize;
    for (i, v) in values.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        if ties == 0 || *v > values[best] {
            best = i;
            ties = 1;
        } else if *v == values[best] {
            ties += 1;
            if rng.below(ties) == 0 {
                best = i;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_stream() {
        // Reference values of xoshiro256++ for the state {1, 2, 3, 4} (from the authors' C code).
        let mut r = Rng { s: [1, 2, 3, 4] };
        let expect = [41943041u64, 58720359, 3588806011781223, 3591011842654386];
        for e in expect {
            assert_eq!(r.next_u64(), e);
        }
    }

    #[test]
    fn below_is_in_range_and_covers_all_values() {
        let mut r = Rng::new(3);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[r.below(7)] += 1;
        }
        for c in seen {
            assert!((800..1200).contains(&c), "{seen:?}");
        }
    }

    #[test]
    fn argmax_rules() {
        assert_eq!(argmax_first(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax_first(&[f64::NAN, 0.5]), 1);
        let mut r = Rng::new(1);
        let mut hits = [0usize; 4];
        for _ in 0..4000 {
            hits[argmax_random(&[1.0, 3.0, 3.0, 2.0], &mut r)] += 1;
        }
        assert_eq!(hits[0] + hits[3], 0);
        assert!(hits[1] > 1800 && hits[2] > 1800, "{hits:?}");
    }

    #[test]
    fn fnv_known_value() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn beta_draws_have_the_right_mean_and_variance() {
        let mut rng = Rng::new(42);
        for (a, b) in [(1.0, 1.0), (2.0, 5.0), (0.5, 0.5), (30.0, 1.0)] {
            let n = 40_000;
            let xs: Vec<f64> = (0..n).map(|_| rng.beta(a, b)).collect();
            let m = xs.iter().sum::<f64>() / n as f64;
            let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
            let (em, ev) = (a / (a + b), a * b / ((a + b).powi(2) * (a + b + 1.0)));
            assert!(
                (m - em).abs() < 4.0 * (ev / n as f64).sqrt() + 1e-3,
                "{a},{b}: mean {m} vs {em}"
            );
            assert!(
                (v - ev).abs() < 0.05 * ev + 1e-3,
                "{a},{b}: var {v} vs {ev}"
            );
            assert!(xs.iter().all(|x| (0.0..=1.0).contains(x)));
        }
    }
}
