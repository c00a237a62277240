//! DPL's network: a small multi-layer perceptron whose three outputs are the parameters of a power
//! law in the budget (Kadra, Janowski, Wistuba & Grabocka 2023, "Scaling Laws for Hyperparameter
//! Optimization", NeurIPS, §4 Eq. 4; `models/conditioned_power_law.py` of releaunifreiburg/DPL):
//!
//! ```text
//! (α, β, γ) = MLP(x),   ŷ(b) = α + GLU(β) · b^(−GLU(γ)),   GLU(z) = z · σ(z)
//! ```
//!
//! The MLP is `Linear(d, h)`, then `nr_layers − 1` times `Linear(h, h)`, each followed by a
//! LeakyReLU of slope 0.01, then `Linear(h, 3)`; GLU is PyTorch's `nn.GLU` applied, as DPL applies
//! it, to a tensor concatenated with itself. Its loss is the mean absolute error (`nn.L1Loss`),
//! and it is trained by Adam with PyTorch's update rule (`torch.optim.Adam`, β = (0.9, 0.999),
//! ε = 1e-8, no weight decay). Forward pass, gradients and Adam steps equal PyTorch's to 1e-12 in
//! float64 (`tests/golden/dpl_net.json`, made by `scripts/reference/dpl_net_golden.py`).
//!
//! The network is written once for `f32` (the policy, as DPL computes in float32) and `f64` (the
//! golden tests). Matrix products go through `matrixmultiply` on one thread, so results do not
//! depend on the number of threads a run uses.

use num_traits::Float;

/// matrixmultiply's `sgemm` / `dgemm`: C ← α A·B + β C, each matrix by its pointer and its row
/// and column strides.
type RawGemm<T> = unsafe fn(
    usize,
    usize,
    usize,
    T,
    *const T,
    isize,
    isize,
    *const T,
    isize,
    isize,
    T,
    *mut T,
    isize,
    isize,
);

/// A float type the network computes in: `f32` or `f64`, with its matrix product.
pub trait Real: Float + Default + std::fmt::Debug + Send + Sync + 'static {
    /// matrixmultiply's product for this type.
    const GEMM: RawGemm<Self>;
    fn lit(x: f64) -> Self {
        Self::from(x).expect("a float literal")
    }
}

impl Real for f32 {
    const GEMM: RawGemm<f32> = matrixmultiply::sgemm;
}

impl Real for f64 {
    const GEMM: RawGemm<f64> = matrixmultiply::dgemm;
}

/// C (m×n, row-major) = A (m×k) · B (k×n) + beta · C, A and B given by their row and column
/// strides.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm<T: Real>(
    m: usize,
    k: usize,
    n: usize,
    a: &[T],
    (rsa, csa): (isize, isize),
    b: &[T],
    (rsb, csb): (isize, isize),
    beta: T,
    c: &mut [T],
) {
    if m == 0 || n == 0 {
        return;
    }
    // The extents the strides reach: the slices hold them (checked, so the unsafe call below
    // reads and writes only inside them).
    let reach = |rows: usize, cols: usize, rs: isize, cs: isize| {
        rows.saturating_sub(1) * rs as usize + cols.saturating_sub(1) * cs as usize
    };
    assert!(k == 0 || reach(m, k, rsa, csa) < a.len());
    assert!(k == 0 || reach(k, n, rsb, csb) < b.len());
    assert!(reach(m, n, n as isize, 1) < c.len());
    // SAFETY: the strides stay inside the slices (asserted above), C does not alias A or B (a
    // &mut and two & borrows), and matrixmultiply runs on this thread.
    unsafe {
        (T::GEMM)(
            m,
            k,
            n,
            T::one(),
            a.as_ptr(),
            rsa,
            csa,
            b.as_ptr(),
            rsb,
            csb,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// PyTorch's `nn.LeakyReLU()` slope.
const LEAKY: f64 = 0.01;

/// The network's shape: `inputs` features, `layers` hidden layers of `units` each, 3 outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub inputs: usize,
    pub units: usize,
    pub layers: usize,
}

impl Shape {
    /// (fan_in, fan_out) of each linear layer, in order.
    pub fn linears(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.inputs, self.units)];
        v.extend((1..self.layers).map(|_| (self.units, self.units)));
        v.push((self.units, 3));
        v
    }

    /// Parameters in all: each layer's weights (out × in, row-major as PyTorch's) then its bias.
    pub fn n_params(&self) -> usize {
        self.linears().iter().map(|&(i, o)| o * i + o).sum()
    }
}

/// A network's parameters, flat, layer by layer: weights (out × in) then bias.
#[derive(Clone, Debug, PartialEq)]
pub struct Net<T> {
    pub shape: Shape,
    pub params: Vec<T>,
}

/// Adam's state (`torch.optim.Adam` with lr, β1 = 0.9, β2 = 0.999, ε = 1e-8).
#[derive(Clone, Debug)]
pub struct Adam<T> {
    pub lr: f64,
    m: Vec<T>,
    v: Vec<T>,
    t: i32,
}

impl<T: Real> Adam<T> {
    pub fn new(n: usize, lr: f64) -> Self {
        Adam {
            lr,
            m: vec![T::zero(); n],
            v: vec![T::zero(); n],
            t: 0,
        }
    }

    /// One step, as `torch.optim.Adam`'s single-tensor update: m ← lerp(m, g, 1 − β1),
    /// v ← β2 v + (1 − β2) g², p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + ε).
    pub fn step(&mut self, params: &mut [T], grad: &[T]) {
        let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
        self.t += 1;
        let bc1 = 1.0 - b1.powi(self.t);
        let bc2 = 1.0 - b2.powi(self.t);
        let step = T::lit(self.lr / bc1);
        let bc2_sqrt = T::lit(bc2.sqrt());
        let (w1, b2t, w2, eps) = (T::lit(1.0 - b1), T::lit(b2), T::lit(1.0 - b2), T::lit(eps));
        for (((p, &g), m), v) in params
            .iter_mut()
            .zip(grad)
            .zip(self.m.iter_mut())
            .zip(self.v.iter_mut())
        {
            *m = *m + w1 * (g - *m);
            *v = *v * b2t + w2 * g * g;
            let denom = v.sqrt() / bc2_sqrt + eps;
            *p = *p - step * (*m / denom);
        }
    }
}

/// Buffers for one batch: each layer's pre-activations and activations, and their gradients.
#[derive(Default)]
pub struct Scratch<T> {
    /// Per linear layer: its output before the activation (n × out).
    z: Vec<Vec<T>>,
    /// Per linear layer: its input (n × in); `a[0]` is the batch.
    a: Vec<Vec<T>>,
    dz: Vec<T>,
    da: Vec<T>,
    pub grad: Vec<T>,
    pub pred: Vec<T>,
}

impl<T: Real> Net<T> {
    /// PyTorch's default `nn.Linear` initialisation: every weight and bias uniform in
    /// ±1/√fan_in (`kaiming_uniform_(a = √5)`), drawn from `uniform` (values in [0, 1)).
    pub fn init(shape: Shape, mut uniform: impl FnMut() -> f64) -> Self {
        let mut params = Vec::with_capacity(shape.n_params());
        for (i, o) in shape.linears() {
            let bound = 1.0 / (i as f64).sqrt();
            for _ in 0..o * i + o {
                params.push(T::lit((2.0 * uniform() - 1.0) * bound));
            }
        }
        Net { shape, params }
    }

    /// Forward pass of `n` rows of `x` (n × inputs, row-major) to the three outputs before the
    /// head, keeping what the backward pass needs in `s`.
    fn forward_raw(&self, x: &[T], n: usize, s: &mut Scratch<T>) {
        let lin = self.shape.linears();
        s.z.resize_with(lin.len(), Vec::new);
        s.a.resize_with(lin.len(), Vec::new);
        s.a[0].clear();
        s.a[0].extend_from_slice(&x[..n * self.shape.inputs]);
        let mut off = 0;
        for (l, &(fi, fo)) in lin.iter().enumerate() {
            let (w, b) = (
                &self.params[off..off + fo * fi],
                &self.params[off + fo * fi..],
            );
            let z = &mut s.z[l];
            z.clear();
            for _ in 0..n {
                z.extend_from_slice(&b[..fo]);
            }
            // Z = A · Wᵀ + 1 bᵀ: W is out × in row-major, so Wᵀ has row stride 1, column stride in.
            gemm(
                n,
                fi,
                fo,
                &s.a[l],
                (fi as isize, 1),
                w,
                (1, fi as isize),
                T::one(),
                z,
            );
            if l + 1 < lin.len() {
                let slope = T::lit(LEAKY);
                let next = &mut s.a[l + 1];
                next.clear();
                next.extend(z.iter().map(|&v| if v > T::zero() { v } else { v * slope }));
            }
            off += fo * fi + fo;
        }
    }

    /// Predictions ŷ(b) for `n` rows of `x` at budgets `b` (each in (0, 1]), into `s.pred`.
    pub fn predict(&self, x: &[T], b: &[T], n: usize, s: &mut Scratch<T>) {
        self.forward_raw(x, n, s);
        let o = s.z.last().expect("a layer");
        s.pred.clear();
        s.pred.extend((0..n).map(|r| {
            let (alpha, beta, gamma) = (o[3 * r], o[3 * r + 1], o[3 * r + 2]);
            alpha + glu(beta) * b[r].powf(-glu(gamma))
        }));
    }

    /// The mean absolute error of the predictions at `b` against `y`, its gradient in `s.grad`
    /// (PyTorch's: the sign of each error, 0 at 0, over n).
    pub fn loss_and_grad(&self, x: &[T], b: &[T], y: &[T], n: usize, s: &mut Scratch<T>) -> T {
        self.predict(x, b, n, s);
        let lin = self.shape.linears();
        let nt = T::lit(n as f64);
        let mut loss = T::zero();
        // The head: d loss / d (α, β, γ) per row.
        s.dz.clear();
        {
            let o = s.z.last().expect("a layer");
            for r in 0..n {
                let e = s.pred[r] - y[r];
                loss = loss + e.abs();
                let g = if e > T::zero() {
                    T::one()
                } else if e < T::zero() {
                    -T::one()
                } else {
                    T::zero()
                } / nt;
                let (beta, gamma) = (o[3 * r + 1], o[3 * r + 2]);
                let (gb, gg) = (glu(beta), glu(gamma));
                let p = b[r].powf(-gg);
                s.dz.push(g);
                s.dz.push(g * p * glu_grad(beta));
                s.dz.push(g * gb * p * (-b[r].ln()) * glu_grad(gamma));
            }
        }
        s.grad.clear();
        s.grad.resize(self.params.len(), T::zero());
        let offsets: Vec<usize> = lin
            .iter()
            .scan(0, |o, &(fi, fo)| {
                let at = *o;
                *o += fo * fi + fo;
                Some(at)
            })
            .collect();
        for l in (0..lin.len()).rev() {
            let (fi, fo) = lin[l];
            let off = offsets[l];
            // dW = dZᵀ · A (out × in), db = column sums of dZ.
            {
                let (gw, gb) = s.grad[off..off + fo * fi + fo].split_at_mut(fo * fi);
                gemm(
                    fo,
                    n,
                    fi,
                    &s.dz,
                    (1, fo as isize),
                    &s.a[l],
                    (fi as isize, 1),
                    T::zero(),
                    gw,
                );
                for r in 0..n {
                    for (j, g) in gb.iter_mut().enumerate() {
                        *g = *g + s.dz[r * fo + j];
                    }
                }
            }
            if l == 0 {
                break;
            }
            // dA = dZ · W (n × in), then through the LeakyReLU of the layer below.
            let w = &self.params[off..off + fo * fi];
            s.da.clear();
            s.da.resize(n * fi, T::zero());
            gemm(
                n,
                fo,
                fi,
                &s.dz,
                (fo as isize, 1),
                w,
                (fi as isize, 1),
                T::zero(),
                &mut s.da,
            );
            let slope = T::lit(LEAKY);
            let zb = &s.z[l - 1];
            s.dz.clear();
            s.dz.extend(
                s.da.iter()
                    .zip(zb)
                    .map(|(&d, &z)| if z > T::zero() { d } else { d * slope }),
            );
        }
        loss / nt
    }
}

/// z · σ(z): PyTorch's GLU of a tensor concatenated with itself.
fn glu<T: Real>(z: T) -> T {
    z * sigmoid(z)
}

/// d/dz z · σ(z) = σ(z) + z σ(z) (1 − σ(z)).
fn glu_grad<T: Real>(z: T) -> T {
    let s = sigmoid(z);
    s + z * s * (T::one() - s)
}

fn sigmoid<T: Real>(z: T) -> T {
    T::one() / (T::one() + (-z).exp())
}
