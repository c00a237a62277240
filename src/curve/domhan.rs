//! Learning-curve extrapolation by a Bayesian combination of parametric curves (Domhan,
//! Springenberg & Hutter 2015, "Speeding up Automatic Hyperparameter Optimization of Deep Neural
//! Networks by Extrapolation of Learning Curves", IJCAI; as the authors' code,
//! automl/pylearningcurvepredictor at 4434802, `curvefunctions.py`, `curvemodels.py`
//! (`MLCurveModel`, `MCMCCurveModelCombination`) and `terminationcriterion.py`, runs it; read, not
//! copied).
//!
//! The model of a curve y(1), …, y(n) (accuracy-like: higher is better, in [0, 1]) is
//! f(x) = Σ_k w_k f_k(x | θ_k) / Σ_k w_k with Gaussian noise σ, over the 11 families of
//! `FAMILIES` (the code's `curve_ensemble_models`, the list its termination criterion combines).
//!
//! 1. Each family is fitted alone by least squares from the code's default parameters, each
//!    residual weighted by the recency weight (10^(1/n))^t (the criterion's
//!    `recency_weighting=True`). The code calls MINPACK's `leastsq`; this is a Levenberg–Marquardt
//!    of our own with MINPACK's forward-difference Jacobian and its tolerances (ftol = xtol =
//!    1.49012e-8, at most 200 (p + 1) evaluations), so where a family's fit has several minima it
//!    can land elsewhere; the code's L-BFGS-B fallback is not taken (a family whose fit fails is
//!    left out, as when the fallback fails too). A fit is kept when its parameters are finite, its
//!    value at `xlim` is finite and in [0, 100], and it rises from x = 2 to `xlim` (the code's
//!    soft monotonicity); no family kept: no model.
//! 2. The combination starts from the kept fits, every weight 10, σ the (population) standard
//!    deviation of the residuals of their equal-weight mean, and is sampled by the affine-invariant
//!    ensemble sampler with stretch moves (Goodman & Weare 2010, as emcee 2 runs it: a = 2, the
//!    walkers updated in two halves, each against the other): `walkers` walkers (at least twice
//!    the dimension) started in a ball of 10⁻⁶ around the start, `samples` steps, the first
//!    `burn_in` dropped. The log posterior is the recency-weighted Gaussian log likelihood plus
//!    the prior: every weight ≥ 0, every family's value at `xlim` finite in [0, 100] and rising
//!    from x = 2 to `xlim`, σ > 0 (a non-positive σ makes scipy's density NaN, which the code
//!    rejects).
//! 3. P(y(xlim) > y_best) is the mean over every `thin`-th kept sample (walker by walker) of
//!    1 − Φ((y_best − f(xlim)) / σ), NaN samples left out (the code's
//!    `posterior_prob_x_greater_than`).
//!
//! The random draws (the ball, the moves) are banditbench's streams from a seed, not numpy's.

use crate::normal::norm_cdf;
use crate::rng::Rng;

/// The 11 families, in the order of the termination criterion's list.
pub const FAMILIES: [Family; 11] = [
    Family::Vap,
    Family::Ilog2,
    Family::Weibull,
    Family::Pow3,
    Family::Pow4,
    Family::LoglogLinear,
    Family::Mmf,
    Family::Janoschek,
    Family::DrHillZeroBackground,
    Family::LogPower,
    Family::Exp4,
];

/// A parametric curve family (`curvefunctions.py`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// exp(a + b/x + c ln x), the vapour-pressure model.
    Vap,
    /// c − a / ln(x + 1).
    Ilog2,
    /// α − (α − β) exp(−(κx)^δ).
    Weibull,
    /// c − a x^(−α).
    Pow3,
    /// c − (a x + b)^(−α).
    Pow4,
    /// ln(a ln x + b).
    LoglogLinear,
    /// Morgan–Mercer–Flodin: α − (α − β) / (1 + (κx)^δ).
    Mmf,
    /// α − (α − β) exp(−κ x^δ).
    Janoschek,
    /// Hill with zero background: θ x^η / (κ^η + x^η).
    DrHillZeroBackground,
    /// a / (1 + (x / e^b)^c).
    LogPower,
    /// c − exp(−a x^α + b).
    Exp4,
}

impl Family {
    /// The code's name of the family.
    pub fn name(self) -> &'static str {
        match self {
            Family::Vap => "vap",
            Family::Ilog2 => "ilog2",
            Family::Weibull => "weibull",
            Family::Pow3 => "pow3",
            Family::Pow4 => "pow4",
            Family::LoglogLinear => "loglog_linear",
            Family::Mmf => "mmf",
            Family::Janoschek => "janoschek",
            Family::DrHillZeroBackground => "dr_hill_zero_background",
            Family::LogPower => "log_power",
            Family::Exp4 => "exp4",
        }
    }

    /// The code's starting values (`model_defaults`; 1.0 where it has none), in argument order.
    pub fn defaults(self) -> &'static [f64] {
        match self {
            // vap(x, a, b, c)
            Family::Vap => &[-0.622028, -0.470050, 0.042322],
            // ilog2(x, c, a)
            Family::Ilog2 => &[0.78, 0.43],
            // weibull(x, alpha, beta, kappa, delta)
            Family::Weibull => &[0.7, 0.1, 0.01, 1.0],
            // pow3(x, c, a, alpha)
            Family::Pow3 => &[0.84, 0.52, 0.01],
            // pow4(x, c, a, b, alpha)
            Family::Pow4 => &[0.8, 200.0, 0.0, 0.1],
            // loglog_linear(x, a, b): no defaults in the code
            Family::LoglogLinear => &[1.0, 1.0],
            // mmf(x, alpha, beta, kappa, delta)
            Family::Mmf => &[0.7, 0.1, 0.01, 5.0],
            // janoschek(x, a, beta, k, delta)
            Family::Janoschek => &[0.73, 0.07, 0.355, 0.46],
            // dr_hill_zero_background(x, theta, eta, kappa)
            Family::DrHillZeroBackground => &[0.772320, 0.586449, 2.460843],
            // log_power(x, a, b, c)
            Family::LogPower => &[0.77, 2.98, -0.51],
            // exp4(x, c, a, b, alpha)
            Family::Exp4 => &[0.7, 0.8, -0.8, 0.3],
        }
    }

    /// The curve at `x` (NaN where numpy's would be: a negative base to a fractional power, the
    /// logarithm of a negative number).
    pub fn eval(self, x: f64, p: &[f64]) -> f64 {
        match self {
            Family::Vap => (p[0] + p[1] / x + p[2] * x.ln()).exp(),
            Family::Ilog2 => p[0] - p[1] / (x + 1.0).ln(),
            Family::Weibull => p[0] - (p[0] - p[1]) * (-(p[2] * x).powf(p[3])).exp(),
            Family::Pow3 => p[0] - p[1] * x.powf(-p[2]),
            Family::Pow4 => p[0] - (p[1] * x + p[2]).powf(-p[3]),
            Family::LoglogLinear => (p[0] * x.ln() + p[1]).ln(),
            Family::Mmf => p[0] - (p[0] - p[1]) / (1.0 + (p[2] * x).powf(p[3])),
            Family::Janoschek => p[0] - (p[0] - p[1]) * (-p[2] * x.powf(p[3])).exp(),
            Family::DrHillZeroBackground => p[0] * x.powf(p[1]) / (p[2].powf(p[1]) + x.powf(p[1])),
            Family::LogPower => p[0] / (1.0 + (x / p[1].exp()).powf(p[2])),
            Family::Exp4 => p[0] - (-p[1] * x.powf(p[3]) + p[2]).exp(),
        }
    }
}

/// The recency weights (10^(1/n))^t, t = 0 … n − 1 (`recency_weights`).
pub fn recency_weights(n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![1.0];
    }
    let base = 10f64.powf(1.0 / n as f64);
    (0..n).map(|t| base.powi(t as i32)).collect()
}

/// Solve the small system `a x = b` (k × k, row-major) by Gaussian elimination with partial
/// pivoting; None when singular.
fn solve(mut a: Vec<f64>, mut b: Vec<f64>, k: usize) -> Option<Vec<f64>> {
    for col in 0..k {
        let piv =
            (col..k).max_by(|&i, &j| a[i * k + col].abs().total_cmp(&a[j * k + col].abs()))?;
        if a[piv * k + col].abs() < 1e-300 || !a[piv * k + col].is_finite() {
            return None;
        }
        if piv != col {
            for j in 0..k {
                a.swap(piv * k + j, col * k + j);
            }
            b.swap(piv, col);
        }
        for r in col + 1..k {
            let f = a[r * k + col] / a[col * k + col];
            for j in col..k {
                a[r * k + j] -= f * a[col * k + j];
            }
            b[r] -= f * b[col];
        }
    }
    let mut x = vec![0.0; k];
    for r in (0..k).rev() {
        let s: f64 = (r + 1..k).map(|j| a[r * k + j] * x[j]).sum();
        x[r] = (b[r] - s) / a[r * k + r];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The weighted residuals √w_t (f(x_t) − y_t).
fn residuals(f: Family, p: &[f64], x: &[f64], y: &[f64], sw: &[f64], out: &mut [f64]) {
    for t in 0..x.len() {
        out[t] = sw[t] * (f.eval(x[t], p) - y[t]);
    }
}

/// Least squares of `f` on (x, y) with recency weights from `start`: the parameters, or None
/// when the fit fails (NaN in the Jacobian or the parameters, or no convergence within
/// 200 (p + 1) evaluations).
pub fn fit_family(f: Family, x: &[f64], y: &[f64], start: &[f64]) -> Option<Vec<f64>> {
    const FTOL: f64 = 1.49012e-8;
    const XTOL: f64 = 1.49012e-8;
    let (n, k) = (x.len(), start.len());
    let sw: Vec<f64> = recency_weights(n).iter().map(|w| w.sqrt()).collect();
    let max_eval = 200 * (k + 1);
    let mut p = start.to_vec();
    let mut r = vec![0.0; n];
    residuals(f, &p, x, y, &sw, &mut r);
    let mut cost: f64 = r.iter().map(|v| v * v).sum();
    if !cost.is_finite() {
        return None;
    }
    let mut evals = 1;
    let mut lambda = 1e-3;
    let eps = f64::EPSILON.sqrt();
    let mut jac = vec![0.0; n * k];
    let mut rh = vec![0.0; n];
    while evals < max_eval {
        // MINPACK's forward differences: h = √ε |p_j|, or √ε when p_j = 0.
        for j in 0..k {
            let h = if p[j] == 0.0 { eps } else { eps * p[j].abs() };
            let mut q = p.clone();
            q[j] += h;
            residuals(f, &q, x, y, &sw, &mut rh);
            for t in 0..n {
                jac[t * k + j] = (rh[t] - r[t]) / h;
            }
        }
        evals += k;
        if jac.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut jtj = vec![0.0; k * k];
        let mut jtr = vec![0.0; k];
        for t in 0..n {
            for a in 0..k {
                jtr[a] += jac[t * k + a] * r[t];
                for b in 0..k {
                    jtj[a * k + b] += jac[t * k + a] * jac[t * k + b];
                }
            }
        }
        // Damped steps until one lowers the cost (Marquardt's scaling by diag(JᵀJ)).
        loop {
            if evals >= max_eval {
                return None;
            }
            let mut m = jtj.clone();
            for a in 0..k {
                m[a * k + a] += lambda * jtj[a * k + a].max(1e-12);
            }
            let Some(step) = solve(m, jtr.iter().map(|v| -v).collect(), k) else {
                lambda *= 10.0;
                if lambda > 1e16 {
                    return None;
                }
                continue;
            };
            let q: Vec<f64> = p.iter().zip(&step).map(|(a, s)| a + s).collect();
            residuals(f, &q, x, y, &sw, &mut rh);
            evals += 1;
            let new: f64 = rh.iter().map(|v| v * v).sum();
            if new.is_finite() && new <= cost {
                let drop = (cost - new) / cost.max(f64::MIN_POSITIVE);
                let pnorm = p.iter().map(|v| v * v).sum::<f64>().sqrt();
                let snorm = step.iter().map(|v| v * v).sum::<f64>().sqrt();
                p = q;
                std::mem::swap(&mut r, &mut rh);
                cost = new;
                lambda = (lambda / 10.0).max(1e-12);
                if drop <= FTOL || snorm <= XTOL * (pnorm + XTOL) || cost == 0.0 {
                    return p.iter().all(|v| v.is_finite()).then_some(p);
                }
                break;
            }
            lambda *= 10.0;
            if lambda > 1e16 {
                // No step lowers the cost: a minimum to the precision reached.
                return p.iter().all(|v| v.is_finite()).then_some(p);
            }
        }
    }
    None
}

/// The code's sanity check of a prediction: finite and in [0, 100].
fn sane(v: f64) -> bool {
    v.is_finite() && (0.0..=100.0).contains(&v)
}

/// A family's prior: its value at `xlim` sane and not below its value at x = 2.
fn family_prior_ok(f: Family, p: &[f64], xlim: f64) -> bool {
    let (lo, hi) = (f.eval(2.0, p), f.eval(xlim, p));
    // The code rejects y(2) > y(xlim); a NaN comparison passes, the sanity check then decides.
    lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Greater) && sane(hi)
}

/// The sampler's settings (the code's `MCMCCurveModelCombination` defaults: 100 walkers, 2 500
/// steps, 500 of burn-in; thinning 10 as the criterion's `PREDICTION_THINNING`).
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// Walkers (raised to twice the dimension when fewer).
    pub walkers: usize,
    /// Steps of every walker.
    pub samples: usize,
    /// Steps dropped first.
    pub burn_in: usize,
    /// Every thin-th kept sample predicts.
    pub thin: usize,
}

/// A sampled combination: the kept families and the chain's kept samples (each θ = the
/// families' parameters in order, σ, the weights).
pub struct Combination {
    /// The families whose fits were kept, in `FAMILIES`' order.
    pub families: Vec<Family>,
    sizes: Vec<usize>,
    /// The thinned samples of θ.
    pub samples: Vec<Vec<f64>>,
}

/// The log posterior of θ (the families' parameters in order, σ, the weights) on (x, y) with
/// recency weights `rw`; the families' parameter counts are `sizes`.
pub fn ln_prob(
    families: &[Family],
    sizes: &[usize],
    theta: &[f64],
    x: &[f64],
    y: &[f64],
    rw: &[f64],
    xlim: f64,
) -> f64 {
    let k = families.len();
    let np: usize = sizes.iter().sum();
    let sigma = theta[np];
    let w = &theta[np + 1..np + 1 + k];
    if w.iter().any(|&v| v < 0.0) {
        return f64::NEG_INFINITY;
    }
    let mut at = 0;
    for (f, &s) in families.iter().zip(sizes) {
        if !family_prior_ok(*f, &theta[at..at + s], xlim) {
            return f64::NEG_INFINITY;
        }
        at += s;
    }
    if sigma.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return f64::NEG_INFINITY;
    }
    let wsum: f64 = w.iter().sum();
    let ln_norm = -sigma.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
    let mut ll = 0.0;
    for t in 0..x.len() {
        let mut pred = 0.0;
        let mut at = 0;
        for (i, (f, &s)) in families.iter().zip(sizes).enumerate() {
            pred += w[i] / wsum * f.eval(x[t], &theta[at..at + s]);
            at += s;
        }
        let z = (y[t] - pred) / sigma;
        ll += rw[t] * (ln_norm - 0.5 * z * z);
    }
    if ll.is_nan() { f64::NEG_INFINITY } else { ll }
}

impl Combination {
    /// Fit every family, then sample the combination on the curve `y` at x = 1 … n; None when no
    /// family's fit is kept.
    pub fn fit(y: &[f64], xlim: f64, s: Sampling, rng: &mut Rng) -> Option<Combination> {
        let x: Vec<f64> = (1..=y.len()).map(|v| v as f64).collect();
        let mut families = Vec::new();
        let mut params: Vec<Vec<f64>> = Vec::new();
        for f in FAMILIES {
            let Some(p) = fit_family(f, &x, y, f.defaults()) else {
                continue;
            };
            if family_prior_ok(f, &p, xlim) {
                families.push(f);
                params.push(p);
            }
        }
        if families.is_empty() {
            return None;
        }
        Some(Combination::sample(families, &params, y, xlim, s, rng))
    }

    /// Sample the combination of `families` (non-empty) started from their fitted `params`.
    pub fn sample(
        families: Vec<Family>,
        params: &[Vec<f64>],
        y: &[f64],
        xlim: f64,
        s: Sampling,
        rng: &mut Rng,
    ) -> Combination {
        let x: Vec<f64> = (1..=y.len()).map(|v| v as f64).collect();
        let k = families.len();
        let sizes: Vec<usize> = params.iter().map(Vec::len).collect();
        // σ: the population deviation of the residuals of the equal-weight mean.
        let resid: Vec<f64> = x
            .iter()
            .zip(y)
            .map(|(&xt, &yt)| {
                yt - families
                    .iter()
                    .zip(params)
                    .map(|(f, p)| f.eval(xt, p) / k as f64)
                    .sum::<f64>()
            })
            .collect();
        let mean = resid.iter().sum::<f64>() / resid.len() as f64;
        let sigma =
            (resid.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / resid.len() as f64).sqrt();
        let mut start: Vec<f64> = params.concat();
        start.push(sigma);
        start.extend(std::iter::repeat_n(10.0, k));
        let dim = start.len();
        let walkers = s.walkers.max(2 * dim);
        let rw = recency_weights(y.len());
        let lp = |th: &[f64]| ln_prob(&families, &sizes, th, &x, y, &rw, xlim);
        let mut pos: Vec<Vec<f64>> = (0..walkers)
            .map(|_| start.iter().map(|v| v + 1e-6 * rng.normal()).collect())
            .collect();
        let mut lnp: Vec<f64> = pos.iter().map(|p| lp(p)).collect();
        let half = walkers / 2;
        let mut kept = Vec::new();
        for step in 0..s.samples {
            for (lo, hi, clo, chi) in [(0, half, half, walkers), (half, walkers, 0, half)] {
                for w in lo..hi {
                    let z = (rng.f64() + 1.0).powi(2) / 2.0;
                    let c = clo + rng.below(chi - clo);
                    let q: Vec<f64> = pos[c]
                        .iter()
                        .zip(&pos[w])
                        .map(|(a, b)| a - z * (a - b))
                        .collect();
                    let new = lp(&q);
                    let diff = (dim as f64 - 1.0) * z.ln() + new - lnp[w];
                    if diff > rng.f64().ln() {
                        pos[w] = q;
                        lnp[w] = new;
                    }
                }
            }
            if step >= s.burn_in {
                kept.push(pos.clone());
            }
        }
        // Walker by walker (the code's chain[:, burn_in:, :].reshape), every `thin`-th.
        let per = kept.len();
        let samples = (0..walkers * per)
            .step_by(s.thin.max(1))
            .map(|i| kept[i % per][i / per].clone())
            .collect();
        Combination {
            families,
            sizes,
            samples,
        }
    }

    /// The combination's mean f(x) and σ under sample θ.
    fn at(&self, theta: &[f64], x: f64) -> (f64, f64) {
        let k = self.families.len();
        let np: usize = self.sizes.iter().sum();
        let w = &theta[np + 1..np + 1 + k];
        let wsum: f64 = w.iter().sum();
        let mut at = 0;
        let mut pred = 0.0;
        for (i, (f, &s)) in self.families.iter().zip(&self.sizes).enumerate() {
            pred += w[i] / wsum * f.eval(x, &theta[at..at + s]);
            at += s;
        }
        (pred, theta[np])
    }

    /// P(y(x) > `best`): the mean over the samples of 1 − Φ((best − f(x)) / σ), NaN left out
    /// (NaN when every sample is).
    pub fn prob_greater(&self, x: f64, best: f64) -> f64 {
        let (mut sum, mut n) = (0.0, 0usize);
        for th in &self.samples {
            let (m, s) = self.at(th, x);
            let p = 1.0 - norm_cdf((best - m) / s);
            if p.is_finite() {
                sum += p;
                n += 1;
            }
        }
        sum / n as f64
    }

    /// E[f(x)] over the samples, NaN left out.
    pub fn mean(&self, x: f64) -> f64 {
        let v: Vec<f64> = self
            .samples
            .iter()
            .map(|th| self.at(th, x).0)
            .filter(|v| v.is_finite())
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The code's `cut_beginning`: drop the points before the first index from which `look_ahead`
/// (5) points all exceed the first value by more than `threshold` (0.05); the curve unchanged
/// when shorter than `look_ahead` or when no such index exists.
pub fn cut_beginning(y: &[f64]) -> &[f64] {
    const THRESHOLD: f64 = 0.05;
    const LOOK_AHEAD: usize = 5;
    if y.len() < LOOK_AHEAD {
        return y;
    }
    for idx in 0..y.len() - LOOK_AHEAD {
        if (idx..idx + LOOK_AHEAD).all(|j| y[j] - y[0] > THRESHOLD) {
            return &y[idx..];
        }
    }
    y
}

#[cfg(test)]
mod tests {
    //! Against numpy and scipy (`tests/golden/domhan.json`, made by
    //! `scripts/reference/domhan_golden.py`): the families, the recency weights, the cut, the
    //! per-family fits (MINPACK's `leastsq`), the log posterior, and the sampled P(y > best)
    //! beside emcee 3's on the same posterior.
    use super::*;
    use serde_json::Value;

    fn golden() -> Value {
        serde_json::from_str(include_str!("../../tests/golden/domhan.json")).unwrap()
    }

    fn floats(v: &Value) -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    }

    fn family(name: &str) -> Family {
        FAMILIES.into_iter().find(|f| f.name() == name).unwrap()
    }

    #[test]
    fn families_weights_and_cut_equal_numpy() {
        let g = golden();
        let xs = floats(&g["x"]);
        for f in FAMILIES {
            let want = &g["values"][f.name()];
            for (i, &x) in xs.iter().enumerate() {
                let (ours, theirs) = (f.eval(x, f.defaults()), want[i].as_f64());
                match theirs {
                    Some(t) => assert!(
                        (ours - t).abs() <= 1e-12 * (1.0 + t.abs()),
                        "{} at {x}",
                        f.name()
                    ),
                    None => assert!(!ours.is_finite(), "{} at {x}: {ours}", f.name()),
                }
            }
        }
        let w = recency_weights(5);
        for (a, b) in w.iter().zip(floats(&g["recency_5"])) {
            assert!((a - b).abs() < 1e-12);
        }
        assert_eq!(recency_weights(1), vec![1.0]);
        let y = floats(&g["cut"]["y"]);
        assert_eq!(cut_beginning(&y), floats(&g["cut"]["cut"]).as_slice());
        let flat = [0.5; 8];
        assert_eq!(cut_beginning(&flat), &flat[..]);
    }

    /// Where MINPACK converges, our fit reaches the same curve (its value at x = 100 to 1e-3);
    /// it converges on at least as many families.
    #[test]
    fn family_fits_reach_minpacks_curves() {
        let g = golden();
        for (label, c) in g["fits"].as_object().unwrap() {
            let y = floats(&c["y"]);
            let x: Vec<f64> = (1..=y.len()).map(|v| v as f64).collect();
            let (mut theirs, mut both) = (0, 0);
            for f in FAMILIES {
                let ours = fit_family(f, &x, &y, f.defaults());
                let Some(t) = c["families"][f.name()].as_object() else {
                    continue;
                };
                theirs += 1;
                let Some(p) = ours else { continue };
                both += 1;
                let (a, b) = (f.eval(100.0, &p), t["at_xlim"].as_f64().unwrap());
                assert!(
                    (a - b).abs() < 1e-3,
                    "{label} {}: {a} against MINPACK's {b}",
                    f.name()
                );
            }
            assert_eq!(
                both, theirs,
                "{label}: MINPACK fitted {theirs}, we {both} of those"
            );
        }
    }

    /// A power law is recovered from its exact points.
    #[test]
    fn a_family_recovers_its_own_parameters() {
        let truth = [0.9, 0.6, 0.7];
        let x: Vec<f64> = (1..=25).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|&v| Family::Pow3.eval(v, &truth)).collect();
        let p = fit_family(Family::Pow3, &x, &y, Family::Pow3.defaults()).unwrap();
        for (a, b) in p.iter().zip(truth) {
            assert!((a - b).abs() < 1e-6, "{p:?}");
        }
    }

    #[test]
    fn the_log_posterior_equals_the_codes_and_the_sampler_agrees_with_emcee() {
        let g = golden();
        for (label, c) in g["fits"].as_object().unwrap() {
            let y = floats(&c["y"]);
            let x: Vec<f64> = (1..=y.len()).map(|v| v as f64).collect();
            let families: Vec<Family> = c["kept"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| family(n.as_str().unwrap()))
                .collect();
            let params: Vec<Vec<f64>> = families
                .iter()
                .map(|f| floats(&c["families"][f.name()]["params"]))
                .collect();
            let sizes: Vec<usize> = params.iter().map(Vec::len).collect();
            let theta = floats(&c["theta"]);
            let lp = ln_prob(
                &families,
                &sizes,
                &theta,
                &x,
                &y,
                &recency_weights(y.len()),
                100.0,
            );
            let want = c["ln_prob"].as_f64().unwrap();
            assert!(
                (lp - want).abs() < 1e-9 * (1.0 + want.abs()),
                "{label}: {lp} vs {want}"
            );
            let s = Sampling {
                walkers: 100,
                samples: 1500,
                burn_in: 500,
                thin: 10,
            };
            let comb = Combination::sample(families, &params, &y, 100.0, s, &mut Rng::new(3));
            let p = comb.prob_greater(100.0, c["best"].as_f64().unwrap());
            let theirs = c["prob_greater"].as_f64().unwrap();
            // Two samplers on the same posterior with different streams.
            assert!(
                (p - theirs).abs() < 0.1,
                "{label}: P = {p} against emcee's {theirs}"
            );
        }
    }

    /// A curve that has flattened well below the best is given almost no chance; one still
    /// rising towards a best it will pass is given a high one.
    #[test]
    fn the_extrapolation_separates_a_hopeless_curve_from_a_promising_one() {
        let s = Sampling {
            walkers: 60,
            samples: 600,
            burn_in: 200,
            thin: 5,
        };
        let flat: Vec<f64> = (1..=20)
            .map(|t| 0.6 - 0.3 * f64::from(t).powf(-1.5))
            .collect();
        let c = Combination::fit(&flat, 50.0, s, &mut Rng::new(1)).unwrap();
        assert!(c.prob_greater(50.0, 0.8) < 0.05);
        let rising: Vec<f64> = (1..=20)
            .map(|t| 0.2 + 0.6 * (1.0 - (-0.04 * f64::from(t)).exp()))
            .collect();
        let c = Combination::fit(&rising, 50.0, s, &mut Rng::new(1)).unwrap();
        let m = c.mean(50.0);
        assert!(c.prob_greater(50.0, 0.5) > 0.5, "mean at 50: {m}");
    }
}
