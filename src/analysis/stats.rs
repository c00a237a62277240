//! Rank statistics and tests for comparing k policies over n units (Demšar 2006; Benavoli et al.
//! 2016). Each function matches a named reference (SciPy,
//! scikit-posthocs, statsmodels); `tests/golden.rs` checks them against values those libraries
//! computed (`scripts/reference/stats_reference.py`).

use statrs::distribution::{ChiSquared, ContinuousCDF, FisherSnedecor, StudentsT};
use std::sync::LazyLock;

use super::ranks::average_ranks_tol;
use crate::rng::Rng;

const SQRT_2: f64 = std::f64::consts::SQRT_2;

pub use crate::normal::{norm_cdf, norm_pdf, norm_sf};

/// Quantile of the standard normal, polished by Newton steps on `norm_cdf`.
pub fn norm_quantile(p: f64) -> f64 {
    use statrs::distribution::Normal;
    let mut x = Normal::standard().inverse_cdf(p);
    for _ in 0..3 {
        let f = norm_cdf(x) - p;
        x -= f / norm_pdf(x);
    }
    x
}

/// Quantile of Student's t with `df` degrees of freedom, polished by Newton steps.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    thread_local! {
        /// (p, df) -> quantile: a report asks for the same few thousands of times (one
        /// interval per pair of policies).
        static MEMO: std::cell::RefCell<std::collections::HashMap<(u64, u64), f64>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key = (p.to_bits(), df.to_bits());
    if let Some(x) = MEMO.with(|m| m.borrow().get(&key).copied()) {
        return x;
    }
    let x = t_quantile_uncached(p, df);
    MEMO.with(|m| m.borrow_mut().insert(key, x));
    x
}

fn t_quantile_uncached(p: f64, df: f64) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df).expect("df > 0");
    let mut x = t.inverse_cdf(p);
    for _ in 0..4 {
        use statrs::distribution::Continuous;
        let f = t.cdf(x) - p;
        let d = t.pdf(x);
        if d <= 0.0 || !f.is_finite() {
            break;
        }
        x -= f / d;
    }
    x
}

/// Friedman's test with SciPy's tie correction (`scipy.stats.friedmanchisquare`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Friedman {
    /// Friedman's χ² statistic, tie-corrected.
    pub statistic: f64,
    /// Its p-value (χ² with k − 1 degrees of freedom).
    pub p_value: f64,
    /// Degrees of freedom, k − 1.
    pub df: usize,
}

/// `ranks[u][p]`: the rank of policy p in unit u (average ranks for ties).
pub fn friedman(ranks: &[Vec<f64>]) -> Friedman {
    let n = ranks.len();
    let k = ranks.first().map_or(0, Vec::len);
    let (nf, kf) = (n as f64, k as f64);
    let mut sums = vec![0.0; k];
    let mut ties = 0.0;
    for row in ranks {
        for (s, r) in sums.iter_mut().zip(row) {
            *s += r;
        }
        ties += tie_term(row);
    }
    let ssbn: f64 = sums.iter().map(|s| s * s).sum();
    let c = 1.0 - ties / (kf * (kf * kf - 1.0) * nf);
    let statistic = (12.0 / (kf * nf * (kf + 1.0)) * ssbn - 3.0 * nf * (kf + 1.0)) / c;
    let df = k.saturating_sub(1);
    let p_value = if statistic.is_finite() && df > 0 {
        ChiSquared::new(df as f64)
            .expect("df > 0")
            .sf(statistic.max(0.0))
    } else {
        f64::NAN
    };
    Friedman {
        statistic,
        p_value,
        df,
    }
}

/// Σ (t³ − t) over the tie groups of one unit's ranks (equal ranks form a group).
fn tie_term(row: &[f64]) -> f64 {
    let mut v = row.to_vec();
    v.sort_by(f64::total_cmp);
    let mut total = 0.0;
    let mut i = 0;
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j] == v[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        total += t * t * t - t;
        i = j;
    }
    total
}

/// Iman & Davenport's F form of Friedman's statistic.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ImanDavenport {
    /// The F statistic (N − 1) χ² / (N (k − 1) − χ²).
    pub statistic: f64,
    /// Its p-value (F with `df1`, `df2` degrees of freedom).
    pub p_value: f64,
    /// k − 1.
    pub df1: usize,
    /// (k − 1)(N − 1).
    pub df2: usize,
}

/// Iman & Davenport's F from Friedman's `chi2` on `n` units and `k` policies (Demšar 2006).
pub fn iman_davenport(chi2: f64, n: usize, k: usize) -> ImanDavenport {
    let (nf, kf) = (n as f64, k as f64);
    let df1 = k.saturating_sub(1);
    let df2 = df1 * n.saturating_sub(1);
    let denom = nf * (kf - 1.0) - chi2;
    let (statistic, p_value) = if df1 == 0 || df2 == 0 || !chi2.is_finite() {
        (f64::NAN, f64::NAN)
    } else if denom <= 0.0 {
        // Every unit ranks the policies the same way: the statistic is infinite.
        (f64::INFINITY, 0.0)
    } else {
        let f = (nf - 1.0) * chi2 / denom;
        let dist = FisherSnedecor::new(df1 as f64, df2 as f64).expect("df > 0");
        (f, dist.sf(f.max(0.0)))
    };
    ImanDavenport {
        statistic,
        p_value,
        df1,
        df2,
    }
}

/// Gauss–Legendre nodes and weights on [-1, 1] (20 points), by Newton iteration.
static GAUSS_LEGENDRE: LazyLock<Vec<(f64, f64)>> = LazyLock::new(|| {
    let n = 20;
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let mut x = (std::f64::consts::PI * (i as f64 - 0.25) / (n as f64 + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for j in 2..=n {
                let jf = j as f64;
                let p2 = ((2.0 * jf - 1.0) * x * p1 - (jf - 1.0) * p0) / jf;
                p0 = p1;
                p1 = p2;
            }
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        out.push((x, 2.0 / ((1.0 - x * x) * dp * dp)));
    }
    out
});

/// Upper tail P(Q > q) of the studentized range of `k` means with infinite degrees of freedom:
///     P(Q ≤ q) = k ∫ φ(z) [Φ(z) − Φ(z − q)]^(k−1) dz,
/// integrated as the tail k ∫ φ(z) (Φ(z)^(k−1) − [Φ(z) − Φ(z − q)]^(k−1)) dz so that small
/// p-values keep their relative precision (composite 20-point Gauss–Legendre, panels of 1.0 on
/// [−12, q + 12]).
pub fn studentized_range_sf(q: f64, k: usize) -> f64 {
    const PANEL: f64 = 1.0;
    if k < 2 || q.is_nan() {
        return f64::NAN;
    }
    if q <= 0.0 {
        return 1.0;
    }
    let m = (k - 1) as f64;
    let kf = k as f64;
    // Below z_min, Φ(z)^(k−1) < 1e-300 and the integrand is zero to double precision: skip the
    // nodes there (for many means that is most of [−12, 0]).
    let z_min = {
        let target = (-700.0 / m).exp();
        let (mut lo, mut hi) = (-40.0f64, 0.0f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if norm_cdf(mid) < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo - 0.5
    };
    let f = |z: f64| {
        if z < z_min {
            return 0.0;
        }
        let a = norm_cdf(z);
        if a <= 0.0 {
            return 0.0;
        }
        let b = norm_cdf(z - q);
        let ratio = (b / a).min(1.0);
        let diff = if ratio >= 1.0 {
            a.powf(m)
        } else {
            a.powf(m) * -(m * (-ratio).ln_1p()).exp_m1()
        };
        kf * norm_pdf(z) * diff
    };
    let (lo, hi) = (-12.0, q + 12.0);
    let panels = ((hi - lo) / PANEL).ceil() as usize;
    let h = (hi - lo) / panels as f64;
    let mut total = 0.0;
    for p in 0..panels {
        let mid = lo + (p as f64 + 0.5) * h;
        let half = 0.5 * h;
        for &(x, w) in GAUSS_LEGENDRE.iter() {
            total += w * half * f(mid + half * x);
        }
    }
    total.clamp(0.0, 1.0)
}

/// The q with P(Q ≤ q) = p, by bisection on the tail.
pub fn studentized_range_quantile(p: f64, k: usize) -> f64 {
    let target = 1.0 - p;
    let (mut lo, mut hi) = (0.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if studentized_range_sf(mid, k) > target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-13 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Nemenyi's test after Friedman (Demšar 2006): the critical difference and pairwise p-values as
/// scikit-posthocs' `posthoc_nemenyi_friedman` computes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Nemenyi {
    /// The family-wise level the critical difference is for.
    pub alpha: f64,
    /// Upper-α quantile of the studentized range (k, ∞) divided by √2 (Demšar's q_α).
    pub q_alpha: f64,
    /// The critical difference q_α √(k (k + 1) / (6 n)).
    pub cd: f64,
    /// (a, b, p) for the pairs asked for, in their order.
    pub pairwise: Vec<(usize, usize, f64)>,
}

impl Nemenyi {
    /// The p-value of the pair (a, b) in either order (1 when a = b), if it was asked for.
    pub fn p(&self, a: usize, b: usize) -> Option<f64> {
        if a == b {
            return Some(1.0);
        }
        self.pairwise
            .iter()
            .find(|&&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a))
            .map(|&(_, _, p)| p)
    }
}

/// Nemenyi's critical difference from the mean ranks of `k` policies on `n` units, and the
/// pairwise p-values of `pairs`.
///
/// Mean ranks over n units are multiples of 1/(2n) (average ranks of ties are multiples of
/// 1/2), so a pair's difference is an integer d over 2n, d ≤ 2n(k − 1): each p-value is
/// computed from that integer, once per distinct d (one integral each; they dominated a report
/// with hundreds of policies). A difference off that grid (which ranks never give) is computed
/// as it is.
pub fn nemenyi(mean_ranks: &[f64], n: usize, alpha: f64, pairs: &[(usize, usize)]) -> Nemenyi {
    let k = mean_ranks.len();
    let scale = (k as f64 * (k as f64 + 1.0) / (6.0 * n as f64)).sqrt();
    let q_alpha = studentized_range_quantile(1.0 - alpha, k) / SQRT_2;
    let two_n = 2.0 * n as f64;
    let mut memo: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
    let pairwise = pairs
        .iter()
        .map(|&(a, b)| {
            let diff = (mean_ranks[a] - mean_ranks[b]).abs();
            let steps = (diff * two_n).round();
            let p = if (diff * two_n - steps).abs() < 1e-6 {
                *memo
                    .entry(steps as u64)
                    .or_insert_with(|| studentized_range_sf(steps / two_n / scale * SQRT_2, k))
            } else {
                studentized_range_sf(diff / scale * SQRT_2, k)
            };
            (a, b, p)
        })
        .collect();
    Nemenyi {
        alpha,
        q_alpha,
        cd: q_alpha * scale,
        pairwise,
    }
}

/// How zero differences enter the Wilcoxon signed-rank test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ZeroMethod {
    /// Rank the zeros with the others, then drop their ranks (Pratt 1959; the cd-diagram default).
    Pratt,
    /// Drop the zeros before ranking (Wilcoxon 1945).
    Wilcox,
}

impl ZeroMethod {
    /// The name used in reports and `tests.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            ZeroMethod::Pratt => "pratt",
            ZeroMethod::Wilcox => "wilcox",
        }
    }
}

/// Which null distribution gave the p-value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WilcoxonMethod {
    /// Exact distribution of W⁺ (no ties, no zeros, n ≤ 50).
    Exact,
    /// Exact sign-flip permutation distribution (ties or zeros, n ≤ 13).
    Permutation,
    /// Normal approximation with tie correction, no continuity correction.
    Normal,
    /// Every difference is zero: no evidence either way, p = 1.
    AllZero,
}

impl WilcoxonMethod {
    /// The name used in reports and `tests.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            WilcoxonMethod::Exact => "exact",
            WilcoxonMethod::Permutation => "permutation",
            WilcoxonMethod::Normal => "normal",
            WilcoxonMethod::AllZero => "all-zero",
        }
    }
}

/// Wilcoxon's signed-rank test of one pair (as `scipy.stats.wilcoxon`, two-sided).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wilcoxon {
    /// min(W⁺, W⁻).
    pub statistic: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Which null distribution gave it.
    pub method: WilcoxonMethod,
}

/// Average ranks of `v` ascending (ties share the mean of their positions) and tie-group sizes.
fn ascending_ranks(v: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut ranks = vec![0.0; v.len()];
    let mut groups = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && v[idx[j]] == v[idx[i]] {
            j += 1;
        }
        let r = (i + 1 + j) as f64 / 2.0;
        for &o in &idx[i..j] {
            ranks[o] = r;
        }
        groups.push(j - i);
        i = j;
    }
    (ranks, groups)
}

/// Two-sided Wilcoxon signed-rank test on paired differences `d`, choosing the method as SciPy
/// 1.17's `wilcoxon(method="auto")` does: the normal approximation when n > 50; else the exact
/// distribution when there are no ties and no zeros; else the exact permutation distribution
/// when n ≤ 13; else the normal approximation (with tie correction, without continuity correction).
pub fn wilcoxon(d: &[f64], zero: ZeroMethod) -> Wilcoxon {
    let n_total = d.len();
    let n_zero = d.iter().filter(|x| **x == 0.0).count();
    if n_zero == n_total {
        return Wilcoxon {
            statistic: 0.0,
            p_value: 1.0,
            method: WilcoxonMethod::AllZero,
        };
    }
    let used: Vec<f64> = match zero {
        ZeroMethod::Wilcox => d.iter().copied().filter(|x| *x != 0.0).collect(),
        ZeroMethod::Pratt => d.to_vec(),
    };
    let abs: Vec<f64> = used.iter().map(|x| x.abs()).collect();
    let (ranks, groups) = ascending_ranks(&abs);
    let r_plus: f64 = used
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let r_minus: f64 = used
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x < 0.0)
        .map(|(_, r)| r)
        .sum();
    let statistic = r_plus.min(r_minus);
    let has_ties = groups.iter().any(|&g| g > 1);
    let method = if n_total > 50 {
        WilcoxonMethod::Normal
    } else if !has_ties && n_zero == 0 {
        WilcoxonMethod::Exact
    } else if n_total <= 13 {
        WilcoxonMethod::Permutation
    } else {
        WilcoxonMethod::Normal
    };
    let p_value = match method {
        WilcoxonMethod::Exact => wilcoxon_exact_p(used.len(), r_plus),
        WilcoxonMethod::Permutation => wilcoxon_permutation_p(&used, &ranks, r_plus),
        _ => {
            let count = used.len() as f64;
            let mut mn = count * (count + 1.0) * 0.25;
            let mut se = count * (count + 1.0) * (2.0 * count + 1.0);
            let mut tie_sq: f64 = groups.iter().map(|&g| (g * g * g - g) as f64).sum();
            if zero == ZeroMethod::Pratt && n_zero > 0 {
                let z = n_zero as f64;
                mn -= z * (z + 1.0) * 0.25;
                se -= z * (z + 1.0) * (2.0 * z + 1.0);
                // The zeros form the lowest tie group; it does not enter the tie correction.
                tie_sq -= z * z * z - z;
            }
            let se = ((se - tie_sq / 2.0) / 24.0).sqrt();
            let z = (r_plus - mn) / se;
            (2.0 * norm_sf(z.abs())).min(1.0)
        }
    };
    Wilcoxon {
        statistic,
        p_value,
        method,
    }
}

/// Exact two-sided p-value of W⁺ = `r_plus` for n untied, non-zero differences.
fn wilcoxon_exact_p(n: usize, r_plus: f64) -> f64 {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for i in 1..=n {
        for s in (i..=max).rev() {
            counts[s] += counts[s - i];
        }
    }
    let total = 2f64.powi(n as i32);
    let pmf: Vec<f64> = counts.iter().map(|c| c / total).collect();
    let mean = n as f64 * (n as f64 + 1.0) / 4.0;
    let cdf = |k: i64| -> f64 {
        if k < 0 {
            0.0
        } else if (k as f64) <= mean {
            pmf[..=(k as usize).min(max)].iter().sum()
        } else {
            1.0 - pmf[((k + 1) as usize).min(max + 1)..].iter().sum::<f64>()
        }
    };
    let sf = |k: i64| -> f64 {
        if (k as f64) <= mean {
            pmf[(k.max(0) as usize).min(max + 1)..].iter().sum()
        } else {
            1.0 - pmf[..=((k - 1) as usize).min(max)].iter().sum::<f64>()
        }
    };
    (2.0 * sf(r_plus.floor() as i64).min(cdf(r_plus.ceil() as i64))).clamp(0.0, 1.0)
}

/// Exact sign-flip permutation p-value (SciPy's `permutation_test`, which enumerates all 2^n
/// sign patterns when that is at most 9 999, with its relative tolerance of 100 ε).
fn wilcoxon_permutation_p(d: &[f64], ranks: &[f64], r_plus: f64) -> f64 {
    let nz: Vec<f64> = d
        .iter()
        .zip(ranks)
        .filter(|(x, _)| **x != 0.0)
        .map(|(_, r)| *r)
        .collect();
    let gamma = (f64::EPSILON * 100.0 * r_plus).abs();
    let patterns = 1u64 << nz.len();
    let (mut less, mut greater) = (0u64, 0u64);
    for mask in 0..patterns {
        let mut s = 0.0;
        for (i, r) in nz.iter().enumerate() {
            if mask >> i & 1 == 1 {
                s += r;
            }
        }
        if s <= r_plus + gamma {
            less += 1;
        }
        if s >= r_plus - gamma {
            greater += 1;
        }
    }
    (2.0 * less.min(greater) as f64 / patterns as f64).clamp(0.0, 1.0)
}

/// Holm's step-down adjustment (statsmodels `multipletests(method="holm")`): adjusted p-values
/// and rejections at `alpha`.
pub fn holm(p: &[f64], alpha: f64) -> (Vec<f64>, Vec<bool>) {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut reject = vec![false; m];
    let mut running = 0.0f64;
    let mut still_rejecting = true;
    for (i, &o) in order.iter().enumerate() {
        let factor = (m - i) as f64;
        running = running.max((factor * p[o]).min(1.0));
        adjusted[o] = running;
        if still_rejecting && p[o] <= alpha / factor {
            reject[o] = true;
        } else {
            still_rejecting = false;
        }
    }
    (adjusted, reject)
}

/// How a mean rank's confidence interval is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CiKind {
    /// mean ± t(0.975, n−1) · s/√n
    T95,
    /// mean ± z(0.975) · s/√n
    Z95,
    /// mean ± s/√n
    Se,
    /// percentile bootstrap over units
    Bootstrap,
}

impl CiKind {
    /// The name used in reports and `tests.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            CiKind::T95 => "t95",
            CiKind::Z95 => "z95",
            CiKind::Se => "se",
            CiKind::Bootstrap => "bootstrap",
        }
    }
}

/// Sample mean and standard deviation (n − 1).
pub fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Parametric interval for the mean of `x` (T95, Z95 or Se).
pub fn mean_interval(x: &[f64], kind: CiKind) -> (f64, f64) {
    let (mean, sd) = mean_sd(x);
    let n = x.len() as f64;
    let half = match kind {
        CiKind::T95 => t_quantile(0.975, n - 1.0) * sd / n.sqrt(),
        CiKind::Z95 => norm_quantile(0.975) * sd / n.sqrt(),
        CiKind::Se => sd / n.sqrt(),
        CiKind::Bootstrap => panic!("use bootstrap_means for bootstrap intervals"),
    };
    (mean - half, mean + half)
}

/// Paired percentile bootstrap of the column means of `values[u][p]`: units are resampled with
/// replacement, jointly for all columns. Returns, per column, [θ*_(⌈(α/2)B⌉), θ*_(⌈(1−α/2)B⌉)].
pub fn bootstrap_means(
    values: &[Vec<f64>],
    samples: usize,
    alpha: f64,
    seed: u64,
) -> Vec<(f64, f64)> {
    let n = values.len();
    let k = values.first().map_or(0, Vec::len);
    let mut rng = Rng::new(seed);
    let mut stats = vec![Vec::with_capacity(samples); k];
    let mut sums = vec![0.0; k];
    for _ in 0..samples {
        sums.iter_mut().for_each(|s| *s = 0.0);
        for _ in 0..n {
            let u = rng.below(n);
            for (s, v) in sums.iter_mut().zip(&values[u]) {
                *s += v;
            }
        }
        for (st, s) in stats.iter_mut().zip(&sums) {
            st.push(s / n as f64);
        }
    }
    let lo_i = ((alpha / 2.0 * samples as f64).ceil() as usize).clamp(1, samples) - 1;
    let hi_i = (((1.0 - alpha / 2.0) * samples as f64).ceil() as usize).clamp(1, samples) - 1;
    stats
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            (s[lo_i], s[hi_i])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_polished() {
        assert!((norm_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        // scipy.stats.t.ppf(0.975, 9) = 2.262157162798205
        assert!((t_quantile(0.975, 9.0) - 2.262_157_162_798_205).abs() < 1e-12);
    }

    #[test]
    fn exact_wilcoxon_small_case_by_hand() {
        // d = [1, 2, -3]: ranks 1, 2, 3; W+ = 3, W- = 3. The 8 sign patterns give W+ in
        // {0,1,2,3,3,4,5,6}: P(W+ <= 3) = 5/8, P(W+ >= 3) = 5/8, p = min(1, 2 * 5/8) = 1.
        let w = wilcoxon(&[1.0, 2.0, -3.0], ZeroMethod::Pratt);
        assert_eq!(w.method, WilcoxonMethod::Exact);
        assert_eq!(w.statistic, 3.0);
        assert_eq!(w.p_value, 1.0);
        // d = [1, 2, 3, 4]: W+ = 10 (all positive); P(W+ >= 10) = 1/16, p = 2/16.
        let w = wilcoxon(&[1.0, 2.0, 3.0, 4.0], ZeroMethod::Pratt);
        assert_eq!(w.statistic, 0.0);
        assert!((w.p_value - 0.125).abs() < 1e-15);
    }

    #[test]
    fn holm_by_hand() {
        // p = [0.01, 0.04, 0.03], m = 3: sorted 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max 0.06.
        let (adj, rej) = holm(&[0.01, 0.04, 0.03], 0.05);
        assert_eq!(adj, vec![0.03, 0.06, 0.06]);
        // 0.01 <= 0.05/3 rejects; 0.03 > 0.05/2 stops.
        assert_eq!(rej, vec![true, false, false]);
    }

    #[test]
    fn bootstrap_of_a_constant_is_the_constant() {
        let v = vec![vec![2.0, 1.0]; 10];
        let ci = bootstrap_means(&v, 200, 0.05, 1);
        assert_eq!(ci, vec![(2.0, 2.0), (1.0, 1.0)]);
    }
}

/// Skillings and Mack's test for block designs with missing observations (Skillings & Mack
/// 1981, "On the use of a Friedman-type statistic in balanced and unbalanced block designs",
/// Technometrics 23(2), 171–177, Eq. 2.2–2.4; as Chatfield & Mander 2009, Stata Journal 9(2),
/// describe it): Friedman's test when units lack some policies.
#[derive(Clone, Debug, PartialEq)]
pub struct SkillingsMack {
    /// The statistic SM = A' Σ⁻ A.
    pub statistic: f64,
    /// Its p-value (χ² with k − 1 degrees of freedom).
    pub p_value: f64,
    /// Degrees of freedom, k − 1.
    pub df: usize,
    /// Units used (those with at least two scores).
    pub units: usize,
    /// Of which some policy has no score.
    pub incomplete: usize,
    /// Units left out because fewer than two policies have a score there.
    pub dropped: usize,
}

/// Skillings–Mack over `scores[u][p]` (None: no score). In each unit the k_u present scores are
/// ranked (average ranks within `tol`, 1 = best), a missing one gets (k_u + 1)/2; the adjusted
/// sums A_p = Σ_u √(12/(k_u + 1)) (r_up − (k_u + 1)/2) and their covariance Σ (σ_pq = −λ_pq,
/// the units where both p and q have a score; σ_pp = Σ_q λ_pq) give SM = A' Σ⁻ A, computed
/// by dropping the last policy (Σ has rank k − 1). Units with fewer than two scores carry no
/// information and are left out. None when fewer than two policies or units remain, or when the
/// design is not connected (some policies never share a unit with the rest: Σ is singular).
pub fn skillings_mack(
    scores: &[Vec<Option<f64>>],
    higher_is_better: bool,
    tol: f64,
) -> Option<SkillingsMack> {
    let k = scores.first().map_or(0, Vec::len);
    if k < 2 {
        return None;
    }
    let mut a = vec![0.0; k];
    let mut lambda = vec![vec![0.0; k]; k];
    let (mut units, mut incomplete, mut dropped) = (0, 0, 0);
    for row in scores {
        let present: Vec<usize> = (0..k).filter(|&p| row[p].is_some()).collect();
        let ku = present.len();
        if ku < 2 {
            dropped += 1;
            continue;
        }
        units += 1;
        if ku < k {
            incomplete += 1;
        }
        let vals: Vec<f64> = present
            .iter()
            .map(|&p| row[p].unwrap_or(f64::NAN))
            .collect();
        let ranks = average_ranks_tol(&vals, higher_is_better, tol);
        let mid = (ku as f64 + 1.0) / 2.0;
        let w = (12.0 / (ku as f64 + 1.0)).sqrt();
        for (&p, r) in present.iter().zip(&ranks) {
            a[p] += w * (r - mid);
        }
        for &p in &present {
            for &q in &present {
                if p != q {
                    lambda[p][q] += 1.0;
                }
            }
        }
    }
    if units < 2 {
        return None;
    }
    // Connected design: every policy reaches every other through shared units.
    let mut seen = vec![false; k];
    let mut stack = vec![0];
    seen[0] = true;
    while let Some(p) = stack.pop() {
        for q in 0..k {
            if !seen[q] && lambda[p][q] > 0.0 {
                seen[q] = true;
                stack.push(q);
            }
        }
    }
    if seen.contains(&false) {
        return None;
    }
    let m = k - 1;
    let sigma = nalgebra::DMatrix::from_fn(m, m, |i, j| {
        if i == j {
            lambda[i].iter().sum()
        } else {
            -lambda[i][j]
        }
    });
    let rhs = nalgebra::DVector::from_column_slice(&a[..m]);
    let x = sigma.cholesky()?.solve(&rhs);
    let statistic = rhs.dot(&x);
    let p_value = ChiSquared::new(m as f64)
        .expect("df > 0")
        .sf(statistic.max(0.0));
    Some(SkillingsMack {
        statistic,
        p_value,
        df: m,
        units,
        incomplete,
        dropped,
    })
}
