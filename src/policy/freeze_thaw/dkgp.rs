//! DyHPO's surrogate: a Gaussian process on features learned from a configuration, its budget and
//! its partial learning curve (Wistuba, Kadra & Grabocka 2022, "Supervising the Multi-Fidelity
//! Race of Hyperparameter Configurations", NeurIPS, §4; `surrogate_models/dyhpo.py` of
//! releaunifreiburg/DyHPO, read, not copied):
//!
//! ```text
//! h = LeakyReLU(BatchNorm(Linear([x, b])))                       (u1 units)
//! c = max over t of Conv1d(curve)                                 (channels, kernel)
//! z = LeakyReLU(Linear([h, c]))                                   (u2 units)
//! y ~ GP(μ, s · exp(−‖z − z'‖² / 2ℓ²)) + N(0, σ²)
//! ```
//!
//! the GP as GPyTorch builds it: `ConstantMean`, `ScaleKernel(RBFKernel())`, `GaussianLikelihood`
//! (s = softplus(raw), ℓ = softplus(raw), σ² = softplus(raw) + 10⁻⁴). The loss is the negative
//! exact marginal log-likelihood over n (`ExactMarginalLogLikelihood`), its gradient taken by
//! hand through the Cholesky factor (dL/dK = (K⁻¹ − ααᵀ)/2n) and back through the network; one
//! Adam (`net::Adam`, PyTorch's rule) moves the GP's and the network's parameters together.
//! BatchNorm trains on the batch's statistics and keeps running ones (momentum 0.1, unbiased
//! variance), which the prediction uses, as PyTorch's eval mode does. Forward pass, loss,
//! gradient, running statistics, Adam steps and the prediction equal PyTorch 2.15.0 with
//! GPyTorch 1.15.2 to 1e-9 (`tests/golden/dyhpo.json`, `scripts/reference/dyhpo_golden.py`).
//!
//! Everything computes in float64 (DyHPO computes in float32): the Cholesky factor of a kernel
//! matrix of a thousand points is not dependable in float32. The factor and the inverse are
//! faer's (`llt`, on one thread, so results do not depend on `--threads`); GPyTorch switches to
//! conjugate gradients and a stochastic log-determinant above 800 points (its
//! `max_cholesky_size`), and this model keeps the exact factor at every size. A factor that
//! fails is retried with GPyTorch's jitter (10⁻⁸, 10⁻⁷, 10⁻⁶ on the diagonal, as its
//! `psd_safe_cholesky` in float64), then reported as `NotPsd`.

use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, Par, Side};

use super::net::{Adam, gemm};

/// PyTorch's `nn.LeakyReLU()` slope.
const LEAKY: f64 = 0.01;
/// BatchNorm's ε and momentum (PyTorch's defaults).
const BN_EPS: f64 = 1e-5;
const BN_MOMENTUM: f64 = 0.1;
/// GPyTorch's `GaussianLikelihood` noise floor (`GreaterThan(1e-4)`).
const NOISE_FLOOR: f64 = 1e-4;

/// The model's widths: `inputs` configuration features (the budget is one more), `u1` units of
/// the first layer, `channels` convolution filters of width `kernel` on the curve, `u2` features
/// the GP sees. DyHPO's defaults: u1 = 64, u2 = 128, 4 channels, kernel 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub inputs: usize,
    pub u1: usize,
    pub u2: usize,
    pub channels: usize,
    pub kernel: usize,
}

/// Offsets of each parameter block in the flat vector.
#[derive(Clone, Copy, Debug)]
struct Layout {
    fc1_w: usize,
    fc1_b: usize,
    bn_g: usize,
    bn_b: usize,
    conv_w: usize,
    conv_b: usize,
    fc2_w: usize,
    fc2_b: usize,
    gp: usize,
    len: usize,
}

impl Dims {
    fn layout(&self) -> Layout {
        let d = self.inputs + 1;
        let fc1_w = 0;
        let fc1_b = fc1_w + self.u1 * d;
        let bn_g = fc1_b + self.u1;
        let bn_b = bn_g + self.u1;
        let conv_w = bn_b + self.u1;
        let conv_b = conv_w + self.channels * self.kernel;
        let fc2_w = conv_b + self.channels;
        let fc2_b = fc2_w + self.u2 * (self.u1 + self.channels);
        let gp = fc2_b + self.u2;
        Layout {
            fc1_w,
            fc1_b,
            bn_g,
            bn_b,
            conv_w,
            conv_b,
            fc2_w,
            fc2_b,
            gp,
            len: gp + 4,
        }
    }

    /// Parameters in all, in order: fc1's weight (u1 × (inputs + 1), row-major) and bias,
    /// BatchNorm's weight and bias, the convolution's weight (channels × kernel) and bias, fc2's
    /// weight (u2 × (u1 + channels)) and bias, then the GP's constant mean, raw outputscale, raw
    /// lengthscale and raw noise.
    pub fn n_params(&self) -> usize {
        self.layout().len
    }
}

/// Observations or candidates: `n` rows of configuration features (n × inputs), budgets scaled
/// to (0, 1], and partial curves (n × `len`, zero-padded as DyHPO pads them).
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub n: usize,
    pub x: &'a [f64],
    pub b: &'a [f64],
    pub curves: &'a [f64],
    pub len: usize,
}

/// The Cholesky factor failed even with GPyTorch's jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPsd;

/// The model: parameters and BatchNorm's running statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub dims: Dims,
    pub params: Vec<f64>,
    pub running_mean: Vec<f64>,
    pub running_var: Vec<f64>,
}

/// Buffers of one forward and backward pass.
#[derive(Default)]
pub struct Scratch {
    a: Vec<f64>,
    h1: Vec<f64>,
    hat: Vec<f64>,
    inv_std: Vec<f64>,
    pre2: Vec<f64>,
    zin: Vec<f64>,
    pool_at: Vec<usize>,
    pub z: Vec<f64>,
    dz: Vec<f64>,
    dzin: Vec<f64>,
    sq: Vec<f64>,
    kern: Vec<f64>,
    pub grad: Vec<f64>,
}

/// PyTorch's softplus (β = 1, threshold 20) and its derivative.
fn softplus(x: f64) -> f64 {
    if x > 20.0 { x } else { x.exp().ln_1p() }
}

fn softplus_grad(x: f64) -> f64 {
    if x > 20.0 {
        1.0
    } else {
        let e = x.exp();
        e / (e + 1.0)
    }
}

fn leaky(v: f64) -> f64 {
    if v > 0.0 { v } else { v * LEAKY }
}

/// The GP's hyper-parameters from the raw ones: (mean, outputscale, lengthscale, noise).
fn gp_values(p: &[f64]) -> (f64, f64, f64, f64) {
    (
        p[0],
        softplus(p[1]),
        softplus(p[2]),
        softplus(p[3]) + NOISE_FLOOR,
    )
}

/// The Cholesky factor of `k` (n × n, symmetric), retried with GPyTorch's float64 jitter.
fn cholesky(k: &Mat<f64>) -> Result<faer::linalg::solvers::Llt<f64>, NotPsd> {
    if let Ok(l) = k.llt(Side::Lower) {
        return Ok(l);
    }
    for jitter in [1e-8, 1e-7, 1e-6] {
        let mut kj = k.clone();
        for i in 0..k.nrows() {
            kj[(i, i)] += jitter;
        }
        if let Ok(l) = kj.llt(Side::Lower) {
            return Ok(l);
        }
    }
    Err(NotPsd)
}

/// A linear layer: `out` (n × fo) = `a` (n × fi) · Wᵀ + 1 bᵀ, W (fo × fi) row-major as PyTorch's.
fn linear(n: usize, fi: usize, fo: usize, a: &[f64], w: &[f64], b: &[f64], out: &mut Vec<f64>) {
    out.clear();
    for _ in 0..n {
        out.extend_from_slice(&b[..fo]);
    }
    gemm(
        n,
        fi,
        fo,
        a,
        (fi as isize, 1),
        w,
        (1, fi as isize),
        1.0,
        out,
    );
}

/// A linear layer's parameter gradients from its output's gradient `d` (n × fo) and its input `a`
/// (n × fi): dW = dᵀ a into `gw` (fo × fi), db = Σ d added to `gb`.
fn linear_grad(
    n: usize,
    fi: usize,
    fo: usize,
    d: &[f64],
    a: &[f64],
    gw: &mut [f64],
    gb: &mut [f64],
) {
    gemm(fo, n, fi, d, (1, fo as isize), a, (fi as isize, 1), 0.0, gw);
    for row in d.chunks(fo).take(n) {
        for (g, v) in gb.iter_mut().zip(row) {
            *g += v;
        }
    }
}

/// Squared distances between the rows of `a` (n × w) and `b` (m × w), n × m row-major.
fn sq_dist(a: &[f64], n: usize, b: &[f64], m: usize, w: usize, out: &mut Vec<f64>) {
    out.clear();
    out.resize(n * m, 0.0);
    // −2 A Bᵀ, then the squared norms added; clamped at 0 as GPyTorch clamps.
    gemm(n, w, m, a, (w as isize, 1), b, (1, w as isize), 0.0, out);
    let na: Vec<f64> = (0..n)
        .map(|i| a[i * w..(i + 1) * w].iter().map(|v| v * v).sum())
        .collect();
    let nb: Vec<f64> = (0..m)
        .map(|j| b[j * w..(j + 1) * w].iter().map(|v| v * v).sum())
        .collect();
    for i in 0..n {
        for j in 0..m {
            let v = &mut out[i * m + j];
            *v = (na[i] + nb[j] - 2.0 * *v).max(0.0);
        }
    }
}

impl Model {
    /// PyTorch's default initialisation, from `uniform` (values in [0, 1)): each linear and
    /// convolution weight and bias uniform in ±1/√fan_in, BatchNorm's weight 1 and bias 0, running
    /// mean 0 and variance 1; the GP's raw parameters 0 (GPyTorch's: s = ℓ = ln 2, σ² = ln 2 +
    /// 10⁻⁴, μ = 0).
    pub fn init(dims: Dims, mut uniform: impl FnMut() -> f64) -> Self {
        let l = dims.layout();
        let mut p = vec![0.0; dims.n_params()];
        let mut fill = |p: &mut [f64], fan_in: usize| {
            let bound = 1.0 / (fan_in as f64).sqrt();
            for v in p {
                *v = (2.0 * uniform() - 1.0) * bound;
            }
        };
        fill(&mut p[l.fc1_w..l.bn_g], dims.inputs + 1);
        p[l.bn_g..l.bn_b].fill(1.0);
        fill(&mut p[l.conv_w..l.fc2_w], dims.kernel);
        fill(&mut p[l.fc2_w..l.gp], dims.u1 + dims.channels);
        Model {
            dims,
            params: p,
            running_mean: vec![0.0; dims.u1],
            running_var: vec![1.0; dims.u1],
        }
    }

    /// The features of `batch` into `s.z` (n × u2). In training mode BatchNorm normalises by the
    /// batch's statistics and updates the running ones; else it uses the running ones.
    pub fn features(&mut self, batch: &Batch<'_>, train: bool, s: &mut Scratch) {
        let Dims {
            inputs,
            u1,
            u2,
            channels,
            kernel,
        } = self.dims;
        let l = self.dims.layout();
        let n = batch.n;
        let d = inputs + 1;
        s.a.clear();
        for i in 0..n {
            s.a.extend_from_slice(&batch.x[i * inputs..(i + 1) * inputs]);
            s.a.push(batch.b[i]);
        }
        let p = &self.params;
        linear(
            n,
            d,
            u1,
            &s.a,
            &p[l.fc1_w..l.fc1_b],
            &p[l.fc1_b..l.bn_g],
            &mut s.h1,
        );
        // BatchNorm.
        s.inv_std.clear();
        s.hat.clear();
        s.hat.resize(n * u1, 0.0);
        for j in 0..u1 {
            let (mean, var) = if train {
                let mean = (0..n).map(|i| s.h1[i * u1 + j]).sum::<f64>() / n as f64;
                let var = (0..n)
                    .map(|i| (s.h1[i * u1 + j] - mean).powi(2))
                    .sum::<f64>()
                    / n as f64;
                self.running_mean[j] =
                    BN_MOMENTUM * mean + (1.0 - BN_MOMENTUM) * self.running_mean[j];
                let unbiased = if n > 1 {
                    var * n as f64 / (n - 1) as f64
                } else {
                    var
                };
                self.running_var[j] =
                    BN_MOMENTUM * unbiased + (1.0 - BN_MOMENTUM) * self.running_var[j];
                (mean, var)
            } else {
                (self.running_mean[j], self.running_var[j])
            };
            let inv = 1.0 / (var + BN_EPS).sqrt();
            s.inv_std.push(inv);
            for i in 0..n {
                s.hat[i * u1 + j] = (s.h1[i * u1 + j] - mean) * inv;
            }
        }
        // [LeakyReLU(γ ĥ + β), max-pooled convolution of the curve].
        let w2 = u1 + channels;
        s.zin.clear();
        s.zin.resize(n * w2, 0.0);
        s.pool_at.clear();
        s.pool_at.resize(n * channels, 0);
        let steps = batch.len + 1 - kernel.min(batch.len + 1);
        for i in 0..n {
            for j in 0..u1 {
                let v = p[l.bn_g + j] * s.hat[i * u1 + j] + p[l.bn_b + j];
                s.zin[i * w2 + j] = leaky(v);
            }
            let curve = &batch.curves[i * batch.len..(i + 1) * batch.len];
            for k in 0..channels {
                let w = &p[l.conv_w + k * kernel..l.conv_w + (k + 1) * kernel];
                let bias = p[l.conv_b + k];
                // The first maximum, as PyTorch's adaptive max pooling keeps.
                let mut best = f64::NEG_INFINITY;
                let mut at = 0;
                for t in 0..steps {
                    let v = bias
                        + w.iter()
                            .zip(&curve[t..t + kernel])
                            .map(|(a, b)| a * b)
                            .sum::<f64>();
                    if v > best || v.is_nan() {
                        best = v;
                        at = t;
                        if v.is_nan() {
                            break;
                        }
                    }
                }
                s.zin[i * w2 + u1 + k] = best;
                s.pool_at[i * channels + k] = at;
            }
        }
        linear(
            n,
            w2,
            u2,
            &s.zin,
            &p[l.fc2_w..l.fc2_b],
            &p[l.fc2_b..l.gp],
            &mut s.pre2,
        );
        s.z.clear();
        s.z.extend(s.pre2.iter().map(|&v| leaky(v)));
    }

    /// The kernel matrix of the GP on features `z` (n × u2) with noise on the diagonal, and its
    /// exp(−d²/2ℓ²) part in `s.kern` (n × n).
    fn noisy_kernel(&self, z: &[f64], n: usize, s: &mut Scratch) -> Mat<f64> {
        let (_, scale, ls, noise) = gp_values(&self.params[self.dims.layout().gp..]);
        let zs: Vec<f64> = z.iter().map(|v| v / ls).collect();
        sq_dist(&zs, n, &zs, n, self.dims.u2, &mut s.sq);
        s.kern.clear();
        s.kern.extend(s.sq.iter().map(|d| (-0.5 * d).exp()));
        Mat::from_fn(n, n, |i, j| {
            scale * s.kern[i * n + j] + if i == j { noise } else { 0.0 }
        })
    }

    /// Training mode: the features of `batch` (BatchNorm's running statistics updated), the loss
    /// −log p(y)/n of the GP on them, and its gradient in `s.grad`.
    pub fn loss_and_grad(
        &mut self,
        batch: &Batch<'_>,
        y: &[f64],
        s: &mut Scratch,
    ) -> Result<f64, NotPsd> {
        self.features(batch, true, s);
        let z = std::mem::take(&mut s.z);
        let out = self.gp_loss_and_grad(&z, batch.n, y, s).map(|(loss, m)| {
            self.feature_grad(batch, &z, &m, s);
            loss
        });
        s.z = z;
        out
    }

    /// The GP's loss −log p(y)/n on the features `z` (n × u2) of n curves, the gradient of its mean, outputscale,
    /// lengthscale and noise in `s.grad` (the rest zeroed), and M = W ∘ K with W = dL/dK, for
    /// the gradient of the features.
    fn gp_loss_and_grad(
        &self,
        z: &[f64],
        n: usize,
        y: &[f64],
        s: &mut Scratch,
    ) -> Result<(f64, Vec<f64>), NotPsd> {
        let l = self.dims.layout();
        let (mu, scale, ls, _) = gp_values(&self.params[l.gp..]);
        let k = self.noisy_kernel(z, n, s);
        let llt = cholesky(&k)?;
        let r = Mat::from_fn(n, 1, |i, _| y[i] - mu);
        let alpha = llt.solve(&r);
        let kinv = llt.inverse();
        let lfac = llt.L();
        let logdet: f64 = (0..n).map(|i| lfac[(i, i)].ln()).sum::<f64>() * 2.0;
        let quad: f64 = (0..n).map(|i| r[(i, 0)] * alpha[(i, 0)]).sum();
        let nf = n as f64;
        let loss = (0.5 * quad + 0.5 * logdet + 0.5 * nf * (2.0 * std::f64::consts::PI).ln()) / nf;
        if !loss.is_finite() {
            return Err(NotPsd);
        }

        let p = &self.params;
        s.grad.clear();
        s.grad.resize(l.len, 0.0);
        let g = &mut s.grad;
        // W = dL/dK = (K⁻¹ − ααᵀ) / 2n, M = W ∘ K (the kernel part, outputscale included).
        let mut trace_w = 0.0;
        let mut sum_we = 0.0;
        let mut sum_ls = 0.0;
        let mut m = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let w = (kinv[(i, j)] - alpha[(i, 0)] * alpha[(j, 0)]) / (2.0 * nf);
                if i == j {
                    trace_w += w;
                }
                let e = s.kern[i * n + j];
                sum_we += w * e;
                let kij = scale * e;
                // d²/ℓ² is s.sq (the distances of z/ℓ).
                sum_ls += w * kij * s.sq[i * n + j];
                m[i * n + j] = w * kij;
            }
        }
        g[l.gp] = -(0..n).map(|i| alpha[(i, 0)]).sum::<f64>() / nf;
        g[l.gp + 1] = sum_we * softplus_grad(p[l.gp + 1]);
        // dK/dℓ = K d²/ℓ³ with d² the distance of z: (d²/ℓ²) / ℓ.
        g[l.gp + 2] = sum_ls / ls * softplus_grad(p[l.gp + 2]);
        g[l.gp + 3] = trace_w * softplus_grad(p[l.gp + 3]);
        Ok((loss, m))
    }

    /// The gradient of the loss in the network's weights, from M (see `gp_loss_and_grad`) back
    /// through fc2, the convolution, BatchNorm (batch statistics) and fc1, added to `s.grad`.
    fn feature_grad(&self, batch: &Batch<'_>, z: &[f64], m: &[f64], s: &mut Scratch) {
        let n = batch.n;
        let nf = n as f64;
        let l = self.dims.layout();
        let Dims {
            inputs,
            u1,
            u2,
            channels,
            kernel,
        } = self.dims;
        let (_, _, ls, _) = gp_values(&self.params[l.gp..]);
        let p = &self.params;
        let g = &mut s.grad;
        // dL/dz_i = (2/ℓ²) Σ_j M_ij (z_j − z_i).
        s.dz.clear();
        s.dz.resize(n * u2, 0.0);
        gemm(
            n,
            n,
            u2,
            m,
            (n as isize, 1),
            z,
            (u2 as isize, 1),
            0.0,
            &mut s.dz,
        );
        let c = 2.0 / (ls * ls);
        for i in 0..n {
            let row: f64 = m[i * n..(i + 1) * n].iter().sum();
            for j in 0..u2 {
                let v = &mut s.dz[i * u2 + j];
                *v = c * (*v - row * z[i * u2 + j]);
            }
        }
        // Back through fc2's LeakyReLU.
        for (dv, &pre) in s.dz.iter_mut().zip(&s.pre2) {
            if pre <= 0.0 {
                *dv *= LEAKY;
            }
        }
        let w2 = u1 + channels;
        // fc2: dW = dPreᵀ Zin, db = Σ dPre, dZin = dPre W.
        let (gw, gb) = g[l.fc2_w..l.gp].split_at_mut(u2 * w2);
        linear_grad(n, w2, u2, &s.dz, &s.zin, gw, gb);
        s.dzin.clear();
        s.dzin.resize(n * w2, 0.0);
        gemm(
            n,
            u2,
            w2,
            &s.dz,
            (u2 as isize, 1),
            &p[l.fc2_w..l.fc2_b],
            (w2 as isize, 1),
            0.0,
            &mut s.dzin,
        );
        // The convolution, through the pooled position.
        for i in 0..n {
            let curve = &batch.curves[i * batch.len..(i + 1) * batch.len];
            for k in 0..channels {
                let d = s.dzin[i * w2 + u1 + k];
                let at = s.pool_at[i * channels + k];
                g[l.conv_b + k] += d;
                for (q, &cv) in curve[at..at + kernel].iter().enumerate() {
                    g[l.conv_w + k * kernel + q] += d * cv;
                }
            }
        }
        // BatchNorm's output through its LeakyReLU, then BatchNorm (batch statistics).
        let mut dh1 = vec![0.0; n * u1];
        for j in 0..u1 {
            let gamma = p[l.bn_g + j];
            let (mut sum_d, mut sum_dh) = (0.0, 0.0);
            let mut dhat = vec![0.0; n];
            for (i, dh) in dhat.iter_mut().enumerate() {
                let hat = s.hat[i * u1 + j];
                let out = gamma * hat + p[l.bn_b + j];
                let mut d = s.dzin[i * w2 + j];
                if out <= 0.0 {
                    d *= LEAKY;
                }
                g[l.bn_g + j] += d * hat;
                g[l.bn_b + j] += d;
                *dh = d * gamma;
                sum_d += *dh;
                sum_dh += *dh * hat;
            }
            let inv = s.inv_std[j];
            for i in 0..n {
                dh1[i * u1 + j] = inv / nf * (nf * dhat[i] - sum_d - s.hat[i * u1 + j] * sum_dh);
            }
        }
        let (gw, gb) = g[l.fc1_w..l.bn_g].split_at_mut(u1 * (inputs + 1));
        linear_grad(n, inputs + 1, u1, &dh1, &s.a, gw, gb);
    }

    /// One Adam step on the loss of `batch`; the loss, or `NotPsd` with nothing changed but
    /// BatchNorm's running statistics (as in PyTorch, whose forward pass ran).
    pub fn step(
        &mut self,
        batch: &Batch<'_>,
        y: &[f64],
        adam: &mut Adam<f64>,
        s: &mut Scratch,
    ) -> Result<f64, NotPsd> {
        let loss = self.loss_and_grad(batch, y, s)?;
        adam.step(&mut self.params, &s.grad);
        Ok(loss)
    }

    /// Eval mode: the GP conditioned on `train` (labels `y`) predicts `test`: the mean and the
    /// standard deviation with observation noise (`likelihood(model(x))`), into `mean` and `std`.
    pub fn predict(
        &mut self,
        train: &Batch<'_>,
        y: &[f64],
        test: &Batch<'_>,
        s: &mut Scratch,
        mean: &mut Vec<f64>,
        std: &mut Vec<f64>,
    ) -> Result<(), NotPsd> {
        let (n, m) = (train.n, test.n);
        let l = self.dims.layout();
        let (mu, scale, ls, noise) = gp_values(&self.params[l.gp..]);
        self.features(train, false, s);
        let ztr = std::mem::take(&mut s.z);
        self.features(test, false, s);
        let zte = std::mem::take(&mut s.z);
        let k = self.noisy_kernel(&ztr, n, s);
        let llt = cholesky(&k)?;
        let r = Mat::from_fn(n, 1, |i, _| y[i] - mu);
        let alpha = llt.solve(&r);
        let u2 = self.dims.u2;
        let a: Vec<f64> = ztr.iter().map(|v| v / ls).collect();
        let b: Vec<f64> = zte.iter().map(|v| v / ls).collect();
        let mut d2 = Vec::new();
        sq_dist(&a, n, &b, m, u2, &mut d2);
        // K* (n × m) and V = L⁻¹ K*.
        let kstar = Mat::from_fn(n, m, |i, j| scale * (-0.5 * d2[i * m + j]).exp());
        let mut v = kstar.clone();
        solve_lower_triangular_in_place(llt.L(), v.as_mut(), Par::Seq);
        mean.clear();
        std.clear();
        for j in 0..m {
            let mut mj = mu;
            let mut vv = 0.0;
            for i in 0..n {
                mj += kstar[(i, j)] * alpha[(i, 0)];
                vv += v[(i, j)] * v[(i, j)];
            }
            mean.push(mj);
            // GPyTorch clamps the latent variance at 1e-10 (float64), then the likelihood adds
            // the noise.
            std.push(((scale - vv).max(1e-10) + noise).sqrt());
        }
        s.z = zte;
        Ok(())
    }
}
