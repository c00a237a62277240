//! Learning-curve models fitted by least squares. HAMLET's model (eq. 1 of
//! Schmidt, Gastinger, Nicolas & Schülke 2020, "HAMLET: A Learning Curve-Enabled Multi-Armed Bandit for Algorithm Selection", IJCNN):
//!     y = a · arctan(b · (x + c)) + d
//!
//! The fit is a native projected Levenberg–Marquardt (Marquardt's diagonal scaling, analytic
//! Jacobian, a 4×4 solve per step), deterministic:
//! - x is divided by its largest value before fitting (times range from milliseconds to hours);
//! - bounds a ≥ 0 and b ≥ 1e-12 (in scaled x) make the parameters identifiable — the model is
//!   sign-symmetric, (a, b) and (−a, −b) give the same curve — and make the curve non-decreasing;
//!   c and d are free;
//! - starting points come from the data: with y_lo, y_hi the smallest and largest y and x_half the
//!   first scaled x where y reaches (y_lo + y_hi)/2, b0 = s / x_half for s in {1, 10, 0.1}, c0 = 0,
//!   a0 = 1.1 (y_hi − y_lo) · 2/π, d0 = y_lo − a0 · arctan(b0 · x_first); the best of the three
//!   starts is kept;
//! - at most 200 iterations per start; a start stops when the residual sum of squares improves by
//!   less than 1e-12 relative, when the damped step is below 1e-12 relative to the parameters, or
//!   when the damping exceeds 1e12;
//! - fewer than `MIN_POINTS` (4) points, a flat curve (fitted exactly by a = 0, d = y), or a
//!   non-finite result: no fit (`None`), and callers fall back to the current best.
//!
//! `fit_arctan_warm` starts from a previous fit of the same arm instead (one start): inside a
//! bandit an arm gains a point or two between fits, so its last parameters are a near-optimal
//! start; it falls back to the cold fit when there is no previous fit or the warm one fails.

pub mod domhan;

/// The fewest points a curve is fitted to.
pub const MIN_POINTS: usize = 4;

/// A fitted arctan curve, in the original x units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArctanFit {
    /// Amplitude a of a · atan(b (x + c)) + d.
    pub a: f64,
    /// Rate b of a · atan(b (x + c)) + d.
    pub b: f64,
    /// Shift c of a · atan(b (x + c)) + d.
    pub c: f64,
    /// Offset d of a · atan(b (x + c)) + d.
    pub d: f64,
    /// Residual sum of squares on the fitted points.
    pub rss: f64,
    /// Levenberg–Marquardt iterations taken.
    pub iterations: u32,
}

impl ArctanFit {
    /// The fitted curve at `x`: a · atan(b (x + c)) + d.
    pub fn predict(&self, x: f64) -> f64 {
        self.a * (self.b * (x + self.c)).atan() + self.d
    }
}

fn project(p: &mut [f64; 4]) {
    p[0] = p[0].max(0.0);
    p[1] = p[1].max(1e-12);
}

/// Solve the 4×4 system `a x = b` by Gaussian elimination with partial pivoting.
fn solve4(mut a: [[f64; 4]; 4], mut b: [f64; 4]) -> Option<[f64; 4]> {
    for col in 0..4 {
        let piv = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..4 {
            let f = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (x, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 4];
    for row in (0..4).rev() {
        let s: f64 = (row + 1..4).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Residual sum of squares at `p`, keeping each point's arctan(b(x + c)) in `at` for the
/// Jacobian of the next iteration (so an accepted step costs one arctan per point, not two).
fn rss_keep(p: &[f64; 4], xs: &[f64], ys: &[f64], at: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for ((x, y), t) in xs.iter().zip(ys).zip(at.iter_mut()) {
        *t = (p[1] * (x + p[2])).atan();
        let r = y - (p[0] * *t + p[3]);
        s += r * r;
    }
    s
}

/// One projected Levenberg–Marquardt descent from `start`. Stops when an accepted step improves
/// the residual sum of squares by less than `FTOL` relative, when no damping up to 1e12 yields an
/// improvement, or when the damped step is below `XTOL` relative to the parameters (a smaller
/// step cannot change the fit beyond rounding), after at most `MAX_ITER` iterations.
fn lm(xs: &[f64], ys: &[f64], start: [f64; 4]) -> ([f64; 4], f64, u32) {
    const MAX_ITER: u32 = 200;
    const FTOL: f64 = 1e-12;
    const XTOL: f64 = 1e-12;
    let n = xs.len();
    let mut at = vec![0.0; n];
    let mut trial = vec![0.0; n];
    let mut p = start;
    project(&mut p);
    let mut cur = rss_keep(&p, xs, ys, &mut at);
    let mut lambda = 1e-3;
    let mut it = 0;
    while it < MAX_ITER {
        it += 1;
        // J^T J (upper triangle) and J^T r.
        let (mut h00, mut h01, mut h02, mut h03) = (0.0, 0.0, 0.0, 0.0);
        let (mut h11, mut h12, mut h13, mut h22, mut h23, mut h33) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let mut g = [0.0; 4];
        for ((x, y), t) in xs.iter().zip(ys).zip(&at) {
            let xc = x + p[2];
            let u = p[1] * xc;
            let inv = 1.0 / (1.0 + u * u);
            let j0 = *t;
            let j1 = p[0] * xc * inv;
            let j2 = p[0] * p[1] * inv;
            let r = y - (p[0] * t + p[3]);
            g[0] += j0 * r;
            g[1] += j1 * r;
            g[2] += j2 * r;
            g[3] += r;
            h00 += j0 * j0;
            h01 += j0 * j1;
            h02 += j0 * j2;
            h03 += j0;
            h11 += j1 * j1;
            h12 += j1 * j2;
            h13 += j1;
            h22 += j2 * j2;
            h23 += j2;
            h33 += 1.0;
        }
        let h = [
            [h00, h01, h02, h03],
            [h01, h11, h12, h13],
            [h02, h12, h22, h23],
            [h03, h13, h23, h33],
        ];
        let mut improved = false;
        while lambda < 1e12 {
            let mut a = h;
            for (i, row) in a.iter_mut().enumerate() {
                row[i] += lambda * (h[i][i] + 1e-12);
            }
            if let Some(delta) = solve4(a, g) {
                let mut q = [
                    p[0] + delta[0],
                    p[1] + delta[1],
                    p[2] + delta[2],
                    p[3] + delta[3],
                ];
                project(&mut q);
                let step = (0..4).map(|i| (q[i] - p[i]).abs()).fold(0.0, f64::max);
                let size = p.iter().map(|v| v.abs()).fold(0.0, f64::max);
                if step <= XTOL * (size + XTOL) {
                    break;
                }
                let next = rss_keep(&q, xs, ys, &mut trial);
                if next.is_finite() && next < cur {
                    let gain = cur - next;
                    p = q;
                    cur = next;
                    std::mem::swap(&mut at, &mut trial);
                    lambda = (lambda / 3.0).max(1e-12);
                    improved = gain > FTOL * cur.max(1e-30);
                    break;
                }
            }
            lambda *= 4.0;
        }
        if !improved {
            break;
        }
    }
    (p, cur, it)
}

/// Least-squares fit of the arctan model to points (x, y). `None` when there are too few points,
/// the curve is flat, or the fit is not finite.
pub fn fit_arctan(xs: &[f64], ys: &[f64]) -> Option<ArctanFit> {
    let n = xs.len();
    if n < MIN_POINTS || ys.len() != n {
        return None;
    }
    let scale = xs.iter().copied().fold(0.0f64, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let xn: Vec<f64> = xs.iter().map(|x| x / scale).collect();
    let (lo, hi) = ys
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), y| {
            (l.min(*y), h.max(*y))
        });
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    if hi - lo < 1e-12 {
        return Some(ArctanFit {
            a: 0.0,
            b: 1e-12 / scale,
            c: 0.0,
            d: hi,
            rss: 0.0,
            iterations: 0,
        });
    }
    let mid = 0.5 * (lo + hi);
    let x_half = xn
        .iter()
        .zip(ys)
        .find(|(_, y)| **y >= mid)
        .map_or(0.5, |(x, _)| *x)
        .max(1e-3);
    let x_first = xn.iter().copied().fold(f64::INFINITY, f64::min);
    let a0 = 1.1 * (hi - lo) * 2.0 / std::f64::consts::PI;
    let mut best: Option<([f64; 4], f64, u32)> = None;
    let mut total_it = 0;
    for s in [1.0, 10.0, 0.1] {
        let b0 = s / x_half;
        let d0 = lo - a0 * (b0 * x_first).atan();
        let (p, r, it) = lm(&xn, ys, [a0, b0, 0.0, d0]);
        total_it += it;
        if r.is_finite() && best.is_none_or(|(_, br, _)| r < br) {
            best = Some((p, r, it));
        }
    }
    let (p, r, _) = best?;
    unscale(p, r, total_it, scale)
}

/// A fit in original x units from parameters fitted on x / scale; `None` unless all finite.
fn unscale(p: [f64; 4], rss: f64, iterations: u32, scale: f64) -> Option<ArctanFit> {
    let fit = ArctanFit {
        a: p[0],
        b: p[1] / scale,
        c: p[2] * scale,
        d: p[3],
        rss,
        iterations,
    };
    (rss.is_finite() && [fit.a, fit.b, fit.c, fit.d].iter().all(|v| v.is_finite())).then_some(fit)
}

/// Fit starting from `prev` (a fit of an earlier version of the same curve), else cold.
pub fn fit_arctan_warm(xs: &[f64], ys: &[f64], prev: Option<&ArctanFit>) -> Option<ArctanFit> {
    let Some(prev) = prev.filter(|p| p.a > 0.0) else {
        return fit_arctan(xs, ys);
    };
    if xs.len() < MIN_POINTS || ys.len() != xs.len() {
        return None;
    }
    let scale = xs.iter().copied().fold(0.0f64, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let xn: Vec<f64> = xs.iter().map(|x| x / scale).collect();
    let (p, r, it) = lm(&xn, ys, [prev.a, prev.b * scale, prev.c / scale, prev.d]);
    unscale(p, r, it, scale).or_else(|| fit_arctan(xs, ys))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_known_parameters_from_exact_points() {
        let truth = ArctanFit {
            a: 0.2,
            b: 0.05,
            c: 3.0,
            d: 0.6,
            rss: 0.0,
            iterations: 0,
        };
        let xs: Vec<f64> = (1..=30).map(|i| i as f64 * 4.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| truth.predict(*x)).collect();
        let f = fit_arctan(&xs, &ys).unwrap();
        assert!(f.rss < 1e-20, "{f:?}");
        for x in [0.0, 50.0, 500.0, 5000.0] {
            assert!(
                (f.predict(x) - truth.predict(x)).abs() < 1e-8,
                "x={x}: {f:?}"
            );
        }
    }

    #[test]
    fn warm_start_from_a_shorter_curve_reaches_the_cold_optimum() {
        let f = |x: f64| 0.3 * (0.02 * (x + 5.0)).atan() + 0.5;
        let xs: Vec<f64> = (1..=40).map(|i| i as f64 * 7.0).collect();
        let ys: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| f(*x) + 0.002 * ((i * 7919 % 13) as f64 - 6.0) / 6.0)
            .collect();
        let prev = fit_arctan(&xs[..39], &ys[..39]).unwrap();
        let warm = fit_arctan_warm(&xs, &ys, Some(&prev)).unwrap();
        let cold = fit_arctan(&xs, &ys).unwrap();
        assert!(
            warm.rss <= cold.rss * 1.001 + 1e-15,
            "{} vs {}",
            warm.rss,
            cold.rss
        );
        // Refitting the same points from their own optimum changes nothing.
        let again = fit_arctan_warm(&xs, &ys, Some(&cold)).unwrap();
        assert_eq!(
            (again.a, again.b, again.c, again.d),
            (cold.a, cold.b, cold.c, cold.d)
        );
    }

    #[test]
    fn fallbacks() {
        assert!(
            fit_arctan(&[1.0, 2.0, 3.0], &[0.1, 0.2, 0.3]).is_none(),
            "3 < 4 points"
        );
        let flat = fit_arctan(&[1.0, 2.0, 3.0, 4.0], &[0.7; 4]).unwrap();
        assert_eq!(flat.predict(100.0), 0.7);
        assert!(
            fit_arctan(&[0.0; 4], &[0.1, 0.2, 0.3, 0.4]).is_none(),
            "no time span"
        );
    }

    #[test]
    fn the_fitted_curve_never_decreases() {
        // A noisy, non-monotone set of points: a >= 0 and b > 0 keep the fit non-decreasing.
        let xs = [1.0, 2.0, 3.0, 5.0, 8.0, 13.0];
        let ys = [0.5, 0.7, 0.65, 0.72, 0.71, 0.74];
        let f = fit_arctan(&xs, &ys).unwrap();
        assert!(f.a >= 0.0 && f.b > 0.0);
        let mut last = f64::NEG_INFINITY;
        for i in 0..100 {
            let y = f.predict(i as f64 * 0.5);
            assert!(y >= last - 1e-15);
            last = y;
        }
    }

    #[test]
    fn solve4_solves() {
        let a = [
            [4.0, 1.0, 0.0, 0.0],
            [1.0, 3.0, 1.0, 0.0],
            [0.0, 1.0, 2.0, 1.0],
            [0.0, 0.0, 1.0, 5.0],
        ];
        let x = solve4(a, [5.0, 5.0, 4.0, 6.0]).unwrap();
        for (v, e) in x.iter().zip([1.0, 1.0, 1.0, 1.0]) {
            assert!((v - e).abs() < 1e-12);
        }
    }
}
