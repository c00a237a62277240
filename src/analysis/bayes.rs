//! The Bayesian signed-rank test with a region of practical equivalence (rope).
//!
//! Benavoli, Mangili, Corani, Zaffalon & Ruggeri 2014, "A Bayesian Wilcoxon signed-rank test based
//! on the Dirichlet process", ICML (§3, eq. 7–9), as used for comparing classifiers over data sets
//! by Benavoli, Corani, Demšar & Zaffalon 2017, "Time for a change: a tutorial for comparing
//! multiple classifiers through Bayesian analysis", JMLR 18(77), §4.3. The semantics are those of
//! `baycomp.SignedRankTest` (baycomp 1.0.3), against which `tests/golden.rs` checks it:
//!
//! - the differences are z_i = y_i − x_i over the n units, plus a prior pseudo-observation
//!   z_0 = 0 of weight `prior` (default 0.5);
//! - a posterior sample draws weights w ~ Dirichlet(prior, 1, ..., 1) over (z_0, ..., z_n) and
//!   computes θ_right = Σ_i Σ_j w_i w_j H(z_i + z_j − 2 rope) and θ_left = Σ_i Σ_j w_i w_j
//!   H(−z_i − z_j − 2 rope), where H is the step function with H(0) = ½, and θ_rope the rest;
//!   without a rope (rope = 0) θ_left = 1 − θ_right;
//! - p_left, p_rope, p_right are the shares of samples in which each θ is the largest (ties to
//!   the first of left, rope, right, as numpy's argmax).
//!
//! "Left" means x is better by more than the rope (y − x < −rope, in the orientation where
//! higher is better); "right" that y is.

use crate::rng::Rng;

/// The posterior probabilities of one comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignedRank {
    /// Share of posterior samples in which θ_left (x better by more than the rope) is the largest.
    pub p_left: f64,
    /// Share of posterior samples in which θ_rope (practically equivalent) is the largest.
    pub p_rope: f64,
    /// Share of posterior samples in which θ_right (y better by more than the rope) is the largest.
    pub p_right: f64,
    /// Posterior means of θ_left, θ_rope, θ_right.
    pub mean: [f64; 3],
}

/// Σ_i Σ_j w_i w_j H(z_i + z_j − t) for `z` sorted ascending (`w` in the same order), with
/// H(0) = ½: for each i, the j with z_j > t − z_i form a suffix, `suffix[k]` = Σ_{j ≥ k} w_j.
/// As z_i grows the cut t − z_i falls, so both ends of the tie range only move down: one sweep.
fn above(z: &[f64], w: &[f64], suffix: &[f64], t: f64) -> f64 {
    let n = z.len();
    let (mut gt, mut ge) = (n, n);
    let mut s = 0.0;
    for (zi, wi) in z.iter().zip(w) {
        let cut = t - zi;
        // gt: first j with z_j > cut; ge: first j with z_j >= cut.
        while gt > 0 && z[gt - 1] > cut {
            gt -= 1;
        }
        while ge > 0 && z[ge - 1] >= cut {
            ge -= 1;
        }
        s += wi * (suffix[gt] + 0.5 * (suffix[ge] - suffix[gt]));
    }
    s
}

/// The Bayesian signed-rank test of `x` against `y` (paired, one value per unit; higher is
/// better) with half-width `rope`, prior strength `prior`, `samples` posterior samples drawn
/// from `seed`.
pub fn signed_rank(
    x: &[f64],
    y: &[f64],
    rope: f64,
    prior: f64,
    samples: usize,
    seed: u64,
) -> SignedRank {
    assert_eq!(x.len(), y.len(), "paired scores");
    let mut zw: Vec<(f64, f64)> = std::iter::once((0.0, prior))
        .chain(x.iter().zip(y).map(|(a, b)| (b - a, 1.0)))
        .collect();
    zw.sort_by(|a, b| a.0.total_cmp(&b.0));
    let z: Vec<f64> = zw.iter().map(|p| p.0).collect();
    let neg: Vec<f64> = z.iter().rev().map(|v| -v).collect();
    let alpha: Vec<f64> = zw.iter().map(|p| p.1).collect();
    let n = z.len();
    let mut rng = Rng::new(seed);
    let mut w = vec![0.0; n];
    let mut wneg = vec![0.0; n];
    let mut suffix = vec![0.0; n + 1];
    let mut suffix_neg = vec![0.0; n + 1];
    let mut wins = [0usize; 3];
    let mut sums = [0.0; 3];
    for _ in 0..samples {
        let mut total = 0.0;
        for (wi, &a) in w.iter_mut().zip(&alpha) {
            // Gamma(1) is Exp(1): a logarithm instead of a rejection loop for all but the prior.
            *wi = if a == 1.0 {
                -(1.0 - rng.f64()).ln()
            } else {
                rng.gamma(a)
            };
            total += *wi;
        }
        for wi in w.iter_mut() {
            *wi /= total;
        }
        for i in (0..n).rev() {
            suffix[i] = suffix[i + 1] + w[i];
        }
        let right = above(&z, &w, &suffix, 2.0 * rope);
        let left = if rope > 0.0 {
            for (k, wk) in wneg.iter_mut().enumerate() {
                *wk = w[n - 1 - k];
            }
            for i in (0..n).rev() {
                suffix_neg[i] = suffix_neg[i + 1] + wneg[i];
            }
            above(&neg, &wneg, &suffix_neg, 2.0 * rope)
        } else {
            1.0 - right
        };
        let theta = [left, 1.0 - left - right, right];
        let mut best = 0;
        for k in 1..3 {
            if theta[k] > theta[best] {
                best = k;
            }
        }
        wins[best] += 1;
        for k in 0..3 {
            sums[k] += theta[k];
        }
    }
    let s = samples.max(1) as f64;
    SignedRank {
        p_left: wins[0] as f64 / s,
        p_rope: wins[1] as f64 / s,
        p_right: wins[2] as f64 / s,
        mean: [sums[0] / s, sums[1] / s, sums[2] / s],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// θ by the definition's double sum, for checking the sorted computation.
    fn theta_naive(z: &[f64], w: &[f64], rope: f64) -> (f64, f64) {
        let h = |v: f64| {
            if v > 0.0 {
                1.0
            } else if v == 0.0 {
                0.5
            } else {
                0.0
            }
        };
        let (mut l, mut r) = (0.0, 0.0);
        for i in 0..z.len() {
            for j in 0..z.len() {
                r += w[i] * w[j] * h(z[i] + z[j] - 2.0 * rope);
                l += w[i] * w[j] * h(-z[i] - z[j] - 2.0 * rope);
            }
        }
        (l, r)
    }

    #[test]
    fn the_sorted_sum_equals_the_double_sum_with_ties() {
        let z = [-0.3, -0.1, 0.0, 0.0, 0.1, 0.1, 0.2, 0.45];
        let w = [0.05, 0.2, 0.1, 0.15, 0.1, 0.2, 0.1, 0.1];
        let mut suffix = vec![0.0; z.len() + 1];
        for i in (0..z.len()).rev() {
            suffix[i] = suffix[i + 1] + w[i];
        }
        let neg: Vec<f64> = z.iter().rev().map(|v| -v).collect();
        let wneg: Vec<f64> = w.iter().rev().copied().collect();
        let mut sneg = vec![0.0; z.len() + 1];
        for i in (0..z.len()).rev() {
            sneg[i] = sneg[i + 1] + wneg[i];
        }
        for rope in [0.0, 0.05, 0.1] {
            let (l, r) = theta_naive(&z, &w, rope);
            assert!((above(&z, &w, &suffix, 2.0 * rope) - r).abs() < 1e-12);
            assert!((above(&neg, &wneg, &sneg, 2.0 * rope) - l).abs() < 1e-12);
        }
    }

    #[test]
    fn clear_differences_and_equivalence_are_found() {
        let x: Vec<f64> = (0..20).map(|i| 0.7 + 0.005 * i as f64).collect();
        let better: Vec<f64> = x.iter().map(|v| v + 0.05).collect();
        let r = signed_rank(&x, &better, 0.01, 0.5, 5000, 1);
        assert!(r.p_right > 0.99, "{r:?}");
        let same: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| v + if i % 2 == 0 { 0.002 } else { -0.002 })
            .collect();
        let r = signed_rank(&x, &same, 0.01, 0.5, 5000, 1);
        assert!(r.p_rope > 0.99, "{r:?}");
        let r2 = signed_rank(&better, &x, 0.01, 0.5, 5000, 1);
        assert!(r2.p_left > 0.99, "{r2:?}");
        // Seeded: the same seed gives the same answer.
        assert_eq!(
            signed_rank(&x, &same, 0.0, 0.5, 500, 7),
            signed_rank(&x, &same, 0.0, 0.5, 500, 7)
        );
    }
}
