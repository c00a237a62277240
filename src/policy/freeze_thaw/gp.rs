//! The freeze-thaw GP's surrogate: a Gaussian process on (configuration, budget), as NePS's
//! `ComprehensiveGP` fits it for ifBO's `mf_ei_bo` baseline (Rakotoarison et al. 2024, ICML;
//! automl/ifBO branch `icml-2024`, `neps_lcpfn_hpo/.../models/gp.py`, `kernels/*.py`; read, not
//! copied):
//!
//! ```text
//! K(x, x') = (w₁ M(x_c, x'_c) + w₂ H(x_k, x'_k)) / D          (D: the same sum at x = x')
//! M = Matérn-5/2 with r = √(Σ_d ((x_d − x'_d)/ℓ_d)² + 10⁻⁸)    (ARD on the numeric dims + budget)
//! H = exp(−(number of categorical mismatches) / 2)
//! y ~ GP(0, K + σ² I) on y standardised (mean, unbiased deviation)
//! ```
//!
//! NePS's choices, each kept: the sum kernel is divided by the square roots of its diagonal (its
//! `normalize=True`), so the weights only matter as a ratio, and with no categorical dimension
//! the kernel is the Matérn part alone; the Hamming part's lengthscales never train (NePS takes
//! them through numpy, out of autograd's reach); a single numeric lengthscale does not train
//! either (NePS trains only a vector of several). The noise σ² starts at 10⁻³ and is the
//! Cholesky factor's jitter, retried ×10 and ×100 when the factor fails. Training minimises the
//! negative log marginal likelihood over n by `iters` steps of Adam (lr 0.1), clamping after each
//! step the lengthscales to [e^−6.754, e^0.0859], the weights to [0, 1] and σ² to [10⁻⁵,
//! `noise_max`]. The posterior is NePS's too: it conditions on the inverse of the kernel matrix
//! of the last step's parameters (taken before that step moved them) with the final σ², and
//! predicts with the final parameters; the predictive variance includes σ², is clamped below at
//! σ², and both moments are scaled back to y's units.
//!
//! The gradient is by hand: dL/dK = (K⁻¹ − ααᵀ)/2n, through the normalisation (D does not depend
//! on the lengthscales), to the lengthscales (dM/dℓ_d = 5/3 (1 + √5 r) e^(−√5 r) Δ_d² / ℓ_d³),
//! the weights and σ². Float64 throughout, faer's Cholesky on one thread. Equal to PyTorch 2.15
//! autograd on the same formulas to 1e-9 (`tests/golden/ftgp.json`,
//! `scripts/reference/ftgp_golden.py`).

use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, Par, Side};

use super::dkgp::NotPsd;
use super::net::Adam;

/// What r² gets before its square root (NePS's `_unscaled_distance`).
const R2_EPS: f64 = 1e-8;
/// The lowest σ² (NePS clamps the likelihood to [1e-5, max_lik]).
pub const NOISE_MIN: f64 = 1e-5;

/// NePS's lengthscale bounds (`Stationary.lengthscale_bounds`).
fn ls_bounds() -> (f64, f64) {
    ((-6.754111155189306f64).exp(), 0.0858637988771976f64.exp())
}

/// Points as the kernel reads them: `n` rows of `dc` numeric columns (the budget among them) and
/// `dk` categorical columns (level indices), row-major.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub n: usize,
    pub cont: &'a [f64],
    pub dc: usize,
    pub cat: &'a [f64],
    pub dk: usize,
}

impl Inputs<'_> {
    fn c(&self, i: usize) -> &[f64] {
        &self.cont[i * self.dc..(i + 1) * self.dc]
    }

    fn k(&self, i: usize) -> &[f64] {
        &self.cat[i * self.dk..(i + 1) * self.dk]
    }
}

/// The GP's hyper-parameters: one lengthscale per numeric column, a weight per kernel (Matérn,
/// then Hamming when there are categorical columns), and the noise σ².
#[derive(Clone, Debug, PartialEq)]
pub struct Hyper {
    pub ls: Vec<f64>,
    pub w: Vec<f64>,
    pub noise: f64,
}

impl Hyper {
    /// NePS's starting values: lengthscales 1, equal weights summing to 1, σ² = `noise`.
    pub fn init(dc: usize, categorical: bool, noise: f64) -> Self {
        let kernels = if categorical { 2 } else { 1 };
        Hyper {
            ls: vec![1.0; dc],
            w: vec![1.0 / kernels as f64; kernels],
            noise,
        }
    }

    /// As one vector for Adam: lengthscales, weights, σ².
    pub fn flat(&self) -> Vec<f64> {
        let mut v = self.ls.clone();
        v.extend_from_slice(&self.w);
        v.push(self.noise);
        v
    }

    fn set_flat(&mut self, v: &[f64]) {
        let dc = self.ls.len();
        self.ls.copy_from_slice(&v[..dc]);
        let kw = self.w.len();
        self.w.copy_from_slice(&v[dc..dc + kw]);
        self.noise = v[dc + kw];
    }

    /// The clamps NePS applies after each step.
    fn clamp(&mut self, noise_max: f64) {
        let (lo, hi) = ls_bounds();
        for l in &mut self.ls {
            *l = l.clamp(lo, hi);
        }
        for w in &mut self.w {
            *w = w.clamp(0.0, 1.0);
        }
        self.noise = self.noise.clamp(NOISE_MIN, noise_max);
    }

    /// The kernel sum at a point and itself: w₁ M(r = 10⁻⁴) + w₂.
    fn diag(&self) -> f64 {
        let mut d = self.w[0] * matern(R2_EPS.sqrt());
        if self.w.len() > 1 {
            d += self.w[1];
        }
        d
    }
}

fn matern(r: f64) -> f64 {
    let s5 = 5f64.sqrt();
    (1.0 + s5 * r + 5.0 / 3.0 * r * r) * (-s5 * r).exp()
}

/// The pair's parts: r, the Matérn value, the Hamming value (1 without categorical columns).
fn pair(h: &Hyper, a: &Inputs<'_>, i: usize, b: &Inputs<'_>, j: usize) -> (f64, f64, f64) {
    let r2: f64 = a
        .c(i)
        .iter()
        .zip(b.c(j))
        .zip(&h.ls)
        .map(|((x, y), l)| ((x - y) / l).powi(2))
        .sum();
    let r = (r2 + R2_EPS).max(0.0).sqrt();
    let mismatches = a.k(i).iter().zip(b.k(j)).filter(|(x, y)| x != y).count();
    (r, matern(r), (-0.5 * mismatches as f64).exp())
}

/// The normalised kernel between `a` (rows) and `b` (columns).
fn cross(h: &Hyper, a: &Inputs<'_>, b: &Inputs<'_>) -> Mat<f64> {
    let d = h.diag();
    Mat::from_fn(a.n, b.n, |i, j| {
        let (_, m, ham) = pair(h, a, i, b, j);
        (h.w[0] * m + h.w.get(1).map_or(0.0, |w| w * ham)) / d
    })
}

/// The Cholesky factor of K + σ² I, retried with σ² × 10 and × 100 (NePS's `compute_pd_inverse`),
/// and the multiplier that worked.
fn factor(k: &Mat<f64>, noise: f64) -> Result<(faer::linalg::solvers::Llt<f64>, f64), NotPsd> {
    for mult in [1.0, 10.0, 100.0] {
        let mut kj = k.clone();
        for i in 0..k.nrows() {
            kj[(i, i)] += noise * mult;
        }
        if let Ok(l) = kj.llt(Side::Lower) {
            return Ok((l, mult));
        }
    }
    Err(NotPsd)
}

/// y standardised by its mean and unbiased standard deviation (1 when that is 0 or undefined).
pub fn standardise(y: &[f64]) -> (Vec<f64>, f64, f64) {
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let sd = var.sqrt();
    let sd = if sd > 0.0 { sd } else { 1.0 };
    (y.iter().map(|v| (v - mean) / sd).collect(), mean, sd)
}

/// The loss −log p(y)/n of standardised `y` at `h`, and its gradient in `Hyper::flat`'s order
/// (zero for what does not train: a single lengthscale, the weight of a lone kernel).
pub fn loss_and_grad(h: &Hyper, x: &Inputs<'_>, y: &[f64]) -> Result<(f64, Vec<f64>), NotPsd> {
    let n = x.n;
    let nf = n as f64;
    let k = cross(h, x, x);
    let (llt, mult) = factor(&k, h.noise)?;
    let yv = Mat::from_fn(n, 1, |i, _| y[i]);
    let alpha = llt.solve(&yv);
    let kinv = llt.inverse();
    let lfac = llt.L();
    let logdet: f64 = (0..n).map(|i| lfac[(i, i)].ln()).sum::<f64>() * 2.0;
    let quad: f64 = (0..n).map(|i| y[i] * alpha[(i, 0)]).sum();
    let loss = (0.5 * quad + 0.5 * logdet + 0.5 * nf * (2.0 * std::f64::consts::PI).ln()) / nf;
    if !loss.is_finite() {
        return Err(NotPsd);
    }
    let (dc, kw) = (h.ls.len(), h.w.len());
    let d = h.diag();
    let c = matern(R2_EPS.sqrt());
    let mut g = vec![0.0; dc + kw + 1];
    let train_ls = dc > 1;
    let s5 = 5f64.sqrt();
    for i in 0..n {
        for j in 0..n {
            let w = (kinv[(i, j)] - alpha[(i, 0)] * alpha[(j, 0)]) / (2.0 * nf);
            if i == j {
                g[dc + kw] += w * mult;
            }
            let (r, m, ham) = pair(h, x, i, x, j);
            if train_ls && i != j {
                let f = w * h.w[0] / d * 5.0 / 3.0 * (1.0 + s5 * r) * (-s5 * r).exp();
                for (dim, ((a, b), l)) in x.c(i).iter().zip(x.c(j)).zip(&h.ls).enumerate() {
                    g[dim] += f * (a - b).powi(2) / l.powi(3);
                }
            }
            if kw > 1 {
                let kn = k[(i, j)];
                g[dc] += w * (m - kn * c) / d;
                g[dc + 1] += w * (ham - kn) / d;
            }
        }
    }
    Ok((loss, g))
}

/// A fitted GP: its final parameters, the factor it conditions on, y's scaling.
#[derive(Clone)]
pub struct Fitted {
    pub hyper: Hyper,
    llt: faer::linalg::solvers::Llt<f64>,
    alpha: Vec<f64>,
    y_mean: f64,
    y_sd: f64,
}

/// Fit on `x` and raw `y` as NePS's `_fit`: `iters` Adam steps (learning rate `lr`) from
/// `Hyper::init` with σ² = `noise`, clamped after each; the factor of the last step's kernel
/// matrix (before the step) with the final σ².
pub fn fit(
    x: &Inputs<'_>,
    y: &[f64],
    iters: usize,
    lr: f64,
    noise: f64,
    noise_max: f64,
) -> Result<Fitted, NotPsd> {
    let (yn, y_mean, y_sd) = standardise(y);
    let mut h = Hyper::init(x.dc, x.dk > 0, noise);
    let mut last = h.clone();
    let mut flat = h.flat();
    let mut adam = Adam::new(flat.len(), lr);
    for _ in 0..iters {
        last = h.clone();
        let (_, grad) = loss_and_grad(&h, x, &yn)?;
        adam.step(&mut flat, &grad);
        h.set_flat(&flat);
        h.clamp(noise_max);
        flat = h.flat();
    }
    let k = cross(&last, x, x);
    let (llt, _) = factor(&k, h.noise)?;
    let yv = Mat::from_fn(x.n, 1, |i, _| yn[i]);
    let a = llt.solve(&yv);
    let alpha = (0..x.n).map(|i| a[(i, 0)]).collect();
    Ok(Fitted {
        hyper: h,
        llt,
        alpha,
        y_mean,
        y_sd,
    })
}

impl Fitted {
    /// The predictive mean and standard deviation (σ² included) at `test`, in y's units.
    pub fn predict(
        &self,
        train: &Inputs<'_>,
        test: &Inputs<'_>,
        mean: &mut Vec<f64>,
        std: &mut Vec<f64>,
    ) {
        let h = &self.hyper;
        let ks = cross(h, train, test);
        let mut v = ks.clone();
        solve_lower_triangular_in_place(self.llt.L(), v.as_mut(), Par::Seq);
        mean.clear();
        std.clear();
        for j in 0..test.n {
            let mut m = 0.0;
            let mut vv = 0.0;
            for i in 0..train.n {
                m += ks[(i, j)] * self.alpha[i];
                vv += v[(i, j)] * v[(i, j)];
            }
            let var = (1.0 + h.noise - vv).max(h.noise);
            mean.push(m * self.y_sd + self.y_mean);
            std.push(var.sqrt() * self.y_sd);
        }
    }
}

#[cfg(test)]
mod golden {
    //! The GP against PyTorch 2.15's autograd and Adam on the same formulas
    //! (`tests/golden/ftgp.json`, made by `scripts/reference/ftgp_golden.py`): the loss and its
    //! gradient at the starting values, the parameters after 1 and after all steps, and the
    //! posterior.
    use super::super::golden_values::{floats, worst};
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_freeze_thaw_gp_equals_pytorch() {
        let v: Value =
            serde_json::from_str(include_str!("../../../tests/golden/ftgp.json")).unwrap();
        let tol = 1e-9;
        for c in v["cases"].as_array().unwrap() {
            let u = |k: &str| c[k].as_u64().unwrap() as usize;
            let f = |k: &str| c[k].as_f64().unwrap();
            let at = format!("case seed {}", c["seed"]);
            let (dc, dk) = (u("numeric") + 1, u("categorical"));
            let (x, k, y) = (floats(&c["x"]), floats(&c["k"]), floats(&c["y"]));
            let (xt, kt) = (floats(&c["x_test"]), floats(&c["k_test"]));
            let train = Inputs {
                n: u("n"),
                cont: &x,
                dc,
                cat: &k,
                dk,
            };
            let test = Inputs {
                n: u("tests"),
                cont: &xt,
                dc,
                cat: &kt,
                dk,
            };
            let (yn, _, _) = standardise(&y);
            let h = Hyper::init(dc, dk > 0, f("noise"));
            let (loss, grad) = loss_and_grad(&h, &train, &yn).unwrap();
            let e = worst(&[loss], &[f("loss")]);
            assert!(e < tol, "{at}: loss differs by {e:e}");
            let e = worst(&grad, &floats(&c["grad"]));
            assert!(e < tol, "{at}: gradient differs by {e:e}");
            let one = fit(&train, &y, 1, 0.1, f("noise"), f("noise_max")).unwrap();
            let e = worst(&one.hyper.flat(), &floats(&c["after1"]));
            assert!(e < tol, "{at}: parameters after one step differ by {e:e}");
            let all = fit(&train, &y, u("iters"), 0.1, f("noise"), f("noise_max")).unwrap();
            let e = worst(&all.hyper.flat(), &floats(&c["after"]));
            assert!(e < tol, "{at}: parameters after every step differ by {e:e}");
            let (mut mean, mut std) = (Vec::new(), Vec::new());
            all.predict(&train, &test, &mut mean, &mut std);
            let e = worst(&mean, &floats(&c["mean"]));
            assert!(e < tol, "{at}: predicted means differ by {e:e}");
            let e = worst(&std, &floats(&c["std"]));
            assert!(e < tol, "{at}: predicted deviations differ by {e:e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a smooth function of one configuration dimension and the budget, the fitted GP
    /// predicts held-out points closely, and its deviation is larger far from the data.
    #[test]
    fn the_gp_interpolates_a_smooth_surface_and_knows_where_it_has_no_data() {
        let f = |x: f64, b: f64| (3.0 * x).sin() + 0.5 * b;
        let mut cont = Vec::new();
        let mut y = Vec::new();
        for i in 0..6 {
            for j in 0..5 {
                let (x, b) = (i as f64 / 10.0, j as f64 / 4.0);
                cont.extend([x, b]);
                y.push(f(x, b));
            }
        }
        let train = Inputs {
            n: y.len(),
            cont: &cont,
            dc: 2,
            cat: &[],
            dk: 0,
        };
        let fitted = fit(&train, &y, 50, 0.1, 1e-3, 0.01).unwrap();
        let held = [0.15, 0.3, 0.35, 0.45, 0.25, 0.9, 0.05, 0.5, 1.5, 0.5];
        let test = Inputs {
            n: 5,
            cont: &held,
            dc: 2,
            cat: &[],
            dk: 0,
        };
        let (mut mean, mut std) = (Vec::new(), Vec::new());
        fitted.predict(&train, &test, &mut mean, &mut std);
        for j in 0..4 {
            let want = f(held[2 * j], held[2 * j + 1]);
            assert!((mean[j] - want).abs() < 0.05, "{j}: {} vs {want}", mean[j]);
        }
        // The last point (x = 1.5) lies far beyond the data's x ≤ 0.5.
        assert!(std[4] > 3.0 * std[0], "{std:?}");
    }
}
