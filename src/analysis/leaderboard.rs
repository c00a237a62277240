//! Leaderboard statistics over a score table: every unit is a round in which each pair of
//! policies plays one match (the better score wins, scores within the tie tolerance draw), and
//! - Bradley–Terry strengths (Bradley & Terry 1952, "Rank Analysis of Incomplete Block Designs:
//!   I. The Method of Paired Comparisons", Biometrika 39), fitted by Zermelo's iteration
//!   (Zermelo 1929; the MM algorithm of Hunter 2004, "MM algorithms for generalized
//!   Bradley–Terry models", Ann. Statist. 32, §3), a draw counting half a win, strengths
//!   normalised to geometric mean 1, exactly as evalica 0.4.2 codes it
//!   (`scripts/reference/leaderboard_reference.py` holds the golden values);
//! - Elo ratings (Elo 1978, "The Rating of Chessplayers"), matches played in unit order (units
//!   by name, then pairs by policy name), as evalica's `elo` plays them;
//! - both on the Elo scale calibrated to a baseline: 400 log10(p / p_baseline) + 1000 for
//!   Bradley–Terry, Elo shifted so that the baseline is at 1000 (without a baseline: the
//!   geometric mean of the strengths, and the mean Elo, at 1000);
//! - percentile bootstrap intervals, resampling units (the independent units) with
//!   replacement;
//! - the win-rate matrix: the share of units on which a policy beats another, draws half.
//!
//! Elo depends on the order of the matches; Bradley–Terry does not. Units can carry weights
//! (e.g. 1/splits, as TabArena weights datasets with more splits): a match counts its unit's
//! weight.

use super::compare::ScoreTable;
use super::within_tolerance;
use crate::rng::Rng;

/// One match: policy `a` against `b` (indices into the table's policies), `a`'s result (1 win,
/// 0.5 draw, 0 loss), and its weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Match {
    pub a: usize,
    pub b: usize,
    pub result: f64,
    pub weight: f64,
}

/// The matches of the units `units` (indices into the table, played in this order).
pub fn matches(t: &ScoreTable, units: &[usize], weights: &[f64], tol: f64) -> Vec<Match> {
    let k = t.policies.len();
    let mut out = Vec::with_capacity(units.len() * k * k.saturating_sub(1) / 2);
    for &u in units {
        let s = &t.scores[u];
        for a in 0..k {
            for b in a + 1..k {
                let (x, y) = (s[a], s[b]);
                let better = |p: f64, q: f64| {
                    if t.higher_is_better { p > q } else { p < q }
                };
                let result = if x.is_nan() && y.is_nan() || within_tolerance(x, y, tol) {
                    0.5
                } else if y.is_nan() || (!x.is_nan() && better(x, y)) {
                    1.0
                } else {
                    0.0
                };
                out.push(Match {
                    a,
                    b,
                    result,
                    weight: weights[u],
                });
            }
        }
    }
    out
}

/// Whether every policy can be reached from every other by "scored against" edges (i → j when
/// i won or drew against j): Hunter's (2004) Assumption 1, under which Bradley–Terry's
/// maximum-likelihood strengths exist (Ford 1957). A policy that never lost (or never won)
/// breaks it: its strength would be infinite (or zero).
fn strongly_connected(wins: &[Vec<f64>]) -> bool {
    let k = wins.len();
    let reach = |forward: bool| {
        let mut seen = vec![false; k];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..k {
                let edge = if forward { wins[i][j] } else { wins[j][i] };
                if edge > 0.0 && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.iter().all(|&s| s)
    };
    k == 0 || (reach(true) && reach(false))
}

/// Bradley–Terry strengths of `k` policies from the rounds' matches: Zermelo's iteration from
/// `start` (all 1 when `None`, as evalica starts), updating each strength in place
/// (Gauss–Seidel), then dividing by the geometric mean, until the strengths move less than
/// `tolerance` (Euclidean norm) or after `limit` sweeps. Zermelo's iteration crawls where the
/// strengths span many orders of magnitude (a policy that nearly never loses): after
/// `ZERMELO_SWEEPS` sweeps without converging, Newton's method on the log-strengths finishes
/// from where it stopped (`newton_finish`). Returns the strengths and the sweeps made (Newton's
/// steps counted as sweeps), or `None` when the strengths do not exist (a policy never lost or
/// never won against the rest: see `strongly_connected`).
pub fn bradley_terry(
    k: usize,
    rounds: &[&[Match]],
    start: Option<&[f64]>,
    tolerance: f64,
    limit: usize,
) -> Option<(Vec<f64>, usize)> {
    // wins[i][j]: what i scored against j (wins, and draws at half).
    let mut wins = vec![vec![0.0; k]; k];
    for m in rounds.iter().flat_map(|r| r.iter()) {
        wins[m.a][m.b] += m.weight * m.result;
        wins[m.b][m.a] += m.weight * (1.0 - m.result);
    }
    bradley_terry_wins(k, wins, start, tolerance, limit)
}

/// Each unit's results as a dense k × k matrix (row a, column b: what a scored against b), for
/// resamples to add whole rows instead of scattering matches. Each pair plays at most once in a
/// unit, so adding a unit's rows in draw order is, bit for bit, adding its matches in that order
/// (a pair that did not play adds 0.0). None when the matrices would take more than 64 MiB.
fn dense_units(k: usize, per_unit: &[Vec<Match>]) -> Option<Vec<Vec<f64>>> {
    if per_unit.len().saturating_mul(k * k) > 1 << 23 {
        return None;
    }
    let mut out = Vec::with_capacity(per_unit.len());
    for unit in per_unit {
        let mut w = vec![0.0; k * k];
        let mut seen = vec![false; k * k];
        for m in unit {
            if std::mem::replace(&mut seen[m.a * k + m.b], true) {
                return None;
            }
            w[m.a * k + m.b] += m.weight * m.result;
            w[m.b * k + m.a] += m.weight * (1.0 - m.result);
        }
        out.push(w);
    }
    Some(out)
}

/// Bradley–Terry on the units `draw` (indices into `dense`, `dense_units`' matrices): the same
/// numbers as `bradley_terry` on their matches in that order.
fn bradley_terry_dense(
    k: usize,
    dense: &[Vec<f64>],
    draw: &[usize],
    start: Option<&[f64]>,
    tolerance: f64,
    limit: usize,
) -> Option<(Vec<f64>, usize)> {
    let mut wins = vec![vec![0.0; k]; k];
    for &u in draw {
        for (row, add) in wins.iter_mut().zip(dense[u].chunks_exact(k.max(1))) {
            for (x, y) in row.iter_mut().zip(add) {
                *x += y;
            }
        }
    }
    bradley_terry_wins(k, wins, start, tolerance, limit)
}

/// Zermelo's iteration on `wins` (see `bradley_terry`).
fn bradley_terry_wins(
    k: usize,
    wins: Vec<Vec<f64>>,
    start: Option<&[f64]>,
    tolerance: f64,
    limit: usize,
) -> Option<(Vec<f64>, usize)> {
    zermelo_then_newton(k, wins, start, tolerance, limit, ZERMELO_SWEEPS)
}

/// Zermelo's iteration, handing over to Newton's method after `switch` sweeps.
fn zermelo_then_newton(
    k: usize,
    wins: Vec<Vec<f64>>,
    start: Option<&[f64]>,
    tolerance: f64,
    limit: usize,
    switch: usize,
) -> Option<(Vec<f64>, usize)> {
    let mut p = match start {
        Some(s) if s.len() == k && s.iter().all(|x| x.is_finite() && *x > 0.0) => s.to_vec(),
        _ => vec![1.0; k],
    };
    let mut sweeps = 0;
    if k == 0 {
        return Some((p, sweeps));
    }
    if !strongly_connected(&wins) {
        return None;
    }
    // Row i of `won` is what i scored against each j, row i of `lost` what each j scored
    // against i: both read in order by the sweep below (the same sums, in the same order, as
    // reading `wins` by rows and by columns).
    let won: Vec<f64> = wins.iter().flatten().copied().collect();
    let lost: Vec<f64> = (0..k)
        .flat_map(|i| wins.iter().map(move |row| row[i]))
        .collect();
    let mut next = p.clone();
    while sweeps < limit {
        sweeps += 1;
        for i in 0..k {
            let (mut num, mut den) = (0.0, 0.0);
            let (won_i, lost_i) = (&won[i * k..(i + 1) * k], &lost[i * k..(i + 1) * k]);
            let ni = next[i];
            for j in 0..k {
                let sum = ni + next[j];
                num += won_i[j] * next[j] / sum;
                den += lost_i[j] / sum;
            }
            next[i] = num / den;
        }
        let gm = (next.iter().map(|x| x.ln()).sum::<f64>() / k as f64).exp();
        for x in next.iter_mut() {
            *x /= gm;
            if x.is_nan() {
                *x = tolerance;
            }
        }
        let moved = next
            .iter()
            .zip(&p)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        p.copy_from_slice(&next);
        if moved < tolerance {
            return Some((p, sweeps));
        }
        if sweeps == switch && sweeps < limit {
            let (q, steps) = newton_finish(&wins, &p, tolerance, limit - sweeps);
            return Some((q, sweeps + steps));
        }
    }
    Some((p, sweeps))
}

/// Zermelo sweeps before Newton's method takes over. Real tables converge in 13–26 sweeps (every
/// bundled report); generated near-separable ones need more than 10⁵ (100 policies, each 0.003
/// better than the last with noise 0.02: 1.6 s a bootstrap resample before this).
pub const ZERMELO_SWEEPS: usize = 200;

/// Newton's method for Bradley–Terry's maximum likelihood on θ = ln p, from `p`: the gradient
/// g_i = Σ_j (w_ij − n_ij σ_ij) and the Laplacian A_ij = −n_ij σ_ij σ_ji (A_ii the row's negated
/// sum), with n_ij = w_ij + w_ji and σ_ij = p_i / (p_i + p_j); A δ = g is solved with θ's last
/// component held (A is singular along the all-ones direction, which the normalisation removes),
/// by nalgebra's Cholesky, and the step is halved until the log-likelihood does not fall. Stops
/// as Zermelo's iteration does: the normalised strengths move less than `tolerance`, or after
/// `limit` steps. Returns the strengths (geometric mean 1) and the steps taken.
fn newton_finish(wins: &[Vec<f64>], p: &[f64], tolerance: f64, limit: usize) -> (Vec<f64>, usize) {
    use nalgebra::{DMatrix, DVector};
    let k = p.len();
    let loglik = |t: &[f64]| -> f64 {
        let mut l = 0.0;
        for i in 0..k {
            for j in 0..k {
                if wins[i][j] > 0.0 {
                    // ln σ_ij = −ln(1 + e^(θj − θi)), written to stay finite.
                    let d = t[j] - t[i];
                    l -= wins[i][j]
                        * if d > 0.0 {
                            d + (-d).exp().ln_1p()
                        } else {
                            d.exp().ln_1p()
                        };
                }
            }
        }
        l
    };
    let normalised = |t: &[f64]| -> Vec<f64> {
        let mean = t.iter().sum::<f64>() / k as f64;
        t.iter().map(|x| (x - mean).exp()).collect()
    };
    let mut theta: Vec<f64> = p.iter().map(|x| x.ln()).collect();
    let mut current = normalised(&theta);
    let mut steps = 0;
    while steps < limit && k > 1 {
        steps += 1;
        let m = k - 1;
        let mut a = DMatrix::<f64>::zeros(m, m);
        let mut g = DVector::<f64>::zeros(m);
        for i in 0..k {
            for j in 0..k {
                let n = wins[i][j] + wins[j][i];
                if i == j || n == 0.0 {
                    continue;
                }
                let s = 1.0 / (1.0 + (theta[j] - theta[i]).exp());
                if i < m {
                    g[i] += wins[i][j] - n * s;
                    let h = n * s * (1.0 - s);
                    a[(i, i)] += h;
                    if j < m {
                        a[(i, j)] -= h;
                    }
                }
            }
        }
        let Some(chol) = a.cholesky() else { break };
        let delta = chol.solve(&g);
        let before = loglik(&theta);
        let mut step = 1.0;
        let mut next = theta.clone();
        for _ in 0..60 {
            for i in 0..m {
                next[i] = theta[i] + step * delta[i];
            }
            if loglik(&next) >= before {
                break;
            }
            step /= 2.0;
        }
        theta.copy_from_slice(&next);
        let q = normalised(&theta);
        let moved = q
            .iter()
            .zip(&current)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        current = q;
        if moved < tolerance {
            break;
        }
    }
    (current, steps)
}

/// Elo's parameters (evalica's names and defaults but `k`, which evalica's `elo` sets to 4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloParams {
    pub initial: f64,
    pub base: f64,
    pub scale: f64,
    pub k: f64,
}

impl Default for EloParams {
    fn default() -> Self {
        EloParams {
            initial: 1000.0,
            base: 10.0,
            scale: 400.0,
            k: 4.0,
        }
    }
}

/// Elo ratings of `k` policies after playing the rounds' matches in order. The expected score
/// base^(r_a/scale) / (base^(r_a/scale) + base^(r_b/scale)) is computed as
/// 1 / (1 + exp((r_b − r_a) ln(base) / scale)): one exponential a match, and no overflow.
pub fn elo(k: usize, rounds: &[&[Match]], e: EloParams) -> Vec<f64> {
    let mut r = vec![e.initial; k];
    let c = e.base.ln() / e.scale;
    for m in rounds.iter().flat_map(|r| r.iter()) {
        let ea = 1.0 / (1.0 + ((r[m.b] - r[m.a]) * c).exp());
        r[m.a] += e.k * (m.weight * m.result - ea);
        r[m.b] += e.k * (m.weight * (1.0 - m.result) - (1.0 - ea));
    }
    r
}

/// Elo of `k` policies for several sequences of units at once (`lanes[i]` lists the units the
/// i-th rating plays, in order; `per_unit[u]` holds unit u's matches), each exactly what [`elo`]
/// gives for it. Every unit plays the same pairs in the same order (each pair of policies once,
/// `a < b`), so the ratings advance in lockstep, eight at a time: the eight chains are
/// independent, and the processor overlaps their exponentials where one chain alone waits on
/// each. The arithmetic of each rating is that of [`elo`], operation for operation.
pub fn elo_lanes(
    k: usize,
    per_unit: &[Vec<Match>],
    lanes: &[Vec<usize>],
    e: EloParams,
) -> Vec<Vec<f64>> {
    const W: usize = 8;
    let pairs: Vec<(usize, usize)> = per_unit
        .first()
        .map(|m| m.iter().map(|m| (m.a, m.b)).collect())
        .unwrap_or_default();
    let lockstep = per_unit
        .iter()
        .all(|m| m.len() == pairs.len() && m.iter().zip(&pairs).all(|(m, p)| (m.a, m.b) == *p))
        && lanes.iter().all(|l| l.len() == lanes[0].len());
    if !lockstep {
        return lanes
            .iter()
            .map(|l| {
                let ms: Vec<&[Match]> = l.iter().map(|&u| per_unit[u].as_slice()).collect();
                elo(k, &ms, e)
            })
            .collect();
    }
    let c = e.base.ln() / e.scale;
    // Per unit and pair, what a and b score (the same products `elo` forms), contiguous.
    let scores: Vec<Vec<(f64, f64)>> = per_unit
        .iter()
        .map(|ms| {
            ms.iter()
                .map(|m| (m.weight * m.result, m.weight * (1.0 - m.result)))
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(lanes.len());
    for chunk in lanes.chunks(W) {
        let w = chunk.len();
        // r[p][i]: policy p's rating in lane i.
        let mut r = vec![[e.initial; W]; k];
        for slot in 0..chunk[0].len() {
            let us: [&[(f64, f64)]; W] =
                std::array::from_fn(|i| scores[chunk[i.min(w - 1)][slot]].as_slice());
            for (j, &(a, b)) in pairs.iter().enumerate() {
                let (ra, rb) = (r[a], r[b]);
                let ea: [f64; W] =
                    std::array::from_fn(|i| 1.0 / (1.0 + ((rb[i] - ra[i]) * c).exp()));
                r[a] = std::array::from_fn(|i| ra[i] + e.k * (us[i][j].0 - ea[i]));
                r[b] = std::array::from_fn(|i| rb[i] + e.k * (us[i][j].1 - (1.0 - ea[i])));
            }
        }
        out.extend((0..w).map(|i| r.iter().map(|x| x[i]).collect::<Vec<f64>>()));
    }
    out
}

/// What `leaderboard` computes, in the table's policy order.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaderboard {
    /// The policy at 1000 on both scales (`None`: the geometric mean of the strengths and the
    /// mean Elo are).
    pub baseline: Option<usize>,
    /// Bradley–Terry strengths (geometric mean 1) and ratings on the Elo scale.
    pub bt_strength: Vec<f64>,
    pub bt_rating: Vec<f64>,
    /// Elo after every match in unit order, calibrated.
    pub elo: Vec<f64>,
    /// Percentile bootstrap intervals (1 − alpha) of the calibrated ratings; empty when no
    /// bootstrap was asked.
    pub bt_interval: Vec<(f64, f64)>,
    pub elo_interval: Vec<(f64, f64)>,
    /// `win_rate[a][b]`: the weighted share of units on which `a` beats `b`, draws half (NaN on
    /// the diagonal).
    pub win_rate: Vec<Vec<f64>>,
    pub matches: usize,
    pub draws: usize,
    pub sweeps: usize,
    pub samples: usize,
    /// Resamples in which Bradley–Terry's strengths did not exist (left out of its intervals).
    pub bt_undefined: usize,
}

/// Options of [`leaderboard`].
#[derive(Clone, Debug, PartialEq)]
pub struct LeaderboardOptions {
    pub baseline: Option<usize>,
    /// Per unit of the table (1 each when empty).
    pub weights: Vec<f64>,
    pub tie_tolerance: f64,
    pub elo: EloParams,
    /// Bradley–Terry's stopping rule.
    pub tolerance: f64,
    pub limit: usize,
    /// Bootstrap resamples of the units (0: none) and the intervals' level.
    pub samples: usize,
    /// Whether the resamples replay Elo too, for its intervals. Off by default: online Elo
    /// depends on the order of the matches, so resampling units measures that order as much as
    /// the policies, and its resamples cost several times Bradley–Terry's (k² sequential updates
    /// a unit); Bradley–Terry's intervals are the ones TabArena and Chatbot Arena publish.
    pub elo_intervals: bool,
    pub alpha: f64,
    pub seed: u64,
}

impl Default for LeaderboardOptions {
    fn default() -> Self {
        LeaderboardOptions {
            baseline: None,
            weights: Vec::new(),
            tie_tolerance: 0.0,
            elo: EloParams::default(),
            tolerance: 1e-12,
            limit: 100_000,
            samples: 200,
            elo_intervals: false,
            alpha: 0.05,
            seed: 0,
        }
    }
}

/// Bradley–Terry on one sequence of units (indices into `per_unit`, each unit's matches), from
/// `start` if given: the strengths (NaN where they do not exist), the ratings on the Elo scale
/// with the baseline (or the strengths' geometric mean) at 1000, and the sweeps taken.
fn bt_ratings(
    k: usize,
    per_unit: &[Vec<Match>],
    dense: Option<&[Vec<f64>]>,
    units: &[usize],
    start: Option<&[f64]>,
    o: &LeaderboardOptions,
) -> (Vec<f64>, Vec<f64>, usize) {
    let solved = match dense {
        Some(d) => bradley_terry_dense(k, d, units, start, o.tolerance, o.limit),
        None => {
            let ms: Vec<&[Match]> = units.iter().map(|&u| per_unit[u].as_slice()).collect();
            bradley_terry(k, &ms, start, o.tolerance, o.limit)
        }
    };
    let (p, sweeps) = solved.unwrap_or((vec![f64::NAN; k], 0));
    let log_ref = o.baseline.map_or(0.0, |b| p[b].log10());
    let bt = p
        .iter()
        .map(|x| 400.0 * (x.log10() - log_ref) + 1000.0)
        .collect();
    (p, bt, sweeps)
}

/// Elo ratings shifted so that the baseline, or else their mean, is 1000.
fn calibrated(raw: &[f64], baseline: Option<usize>) -> Vec<f64> {
    let shift = match baseline {
        Some(b) => 1000.0 - raw[b],
        None => 1000.0 - raw.iter().sum::<f64>() / raw.len() as f64,
    };
    raw.iter().map(|x| x + shift).collect()
}

/// Row `a`, column `b`: the weighted share of `a`'s matches against `b` that `a` won (draws
/// half), NaN on the diagonal and for pairs that never met.
fn win_rates(k: usize, ms: &[Match]) -> Vec<Vec<f64>> {
    let mut won = vec![vec![0.0; k]; k];
    let mut played = vec![vec![0.0; k]; k];
    for m in ms {
        won[m.a][m.b] += m.weight * m.result;
        won[m.b][m.a] += m.weight * (1.0 - m.result);
        played[m.a][m.b] += m.weight;
        played[m.b][m.a] += m.weight;
    }
    (0..k)
        .map(|a| {
            (0..k)
                .map(|b| {
                    if a == b || played[a][b] == 0.0 {
                        f64::NAN
                    } else {
                        won[a][b] / played[a][b]
                    }
                })
                .collect()
        })
        .collect()
}

/// The central `1 − alpha` percentile interval of `v` (the ⌈s·α/2⌉-th and ⌈s·(1 − α/2)⌉-th of
/// the `s` sorted values); NaN when `v` is empty.
fn percentile_interval(mut v: Vec<f64>, alpha: f64) -> (f64, f64) {
    let s = v.len();
    if s == 0 {
        return (f64::NAN, f64::NAN);
    }
    let lo_i = ((alpha / 2.0 * s as f64).ceil() as usize).clamp(1, s) - 1;
    let hi_i = (((1.0 - alpha / 2.0) * s as f64).ceil() as usize).clamp(1, s) - 1;
    v.sort_by(f64::total_cmp);
    (v[lo_i], v[hi_i])
}

/// The leaderboard of a score table: matches on every unit (units in name order).
pub fn leaderboard(t: &ScoreTable, opts: &LeaderboardOptions) -> Leaderboard {
    let mut o = opts.clone();
    if o.weights.is_empty() {
        o.weights = vec![1.0; t.units.len()];
    }
    let k = t.policies.len();
    let mut order: Vec<usize> = (0..t.units.len()).collect();
    order.sort_by(|&a, &b| t.units[a].cmp(&t.units[b]));
    // Each unit's matches, once: resamples reuse them.
    let per_unit: Vec<Vec<Match>> = (0..t.units.len())
        .map(|u| matches(t, &[u], &o.weights, o.tie_tolerance))
        .collect();
    let ms: Vec<Match> = order
        .iter()
        .flat_map(|&u| per_unit[u].iter().copied())
        .collect();
    let draws = ms.iter().filter(|m| m.result == 0.5).count();
    let win_rate = win_rates(k, &ms);
    let (p, bt, sweeps) = bt_ratings(k, &per_unit, None, &order, None, &o);
    let el = calibrated(
        &elo_lanes(k, &per_unit, &[order.clone()], o.elo)[0],
        o.baseline,
    );
    let (mut bt_interval, mut elo_interval) = (Vec::new(), Vec::new());
    let mut bt_undefined = 0;
    if o.samples > 0 {
        use rayon::prelude::*;
        let n = order.len();
        // Each resample has its own seed, so the intervals are the same at any thread count.
        let resamples: Vec<Vec<usize>> = (0..o.samples as u64)
            .map(|i| {
                let mut rng =
                    Rng::new(crate::rng::derive_seed(o.seed, &format!("leaderboard {i}")));
                let mut draw: Vec<usize> = (0..n).map(|_| order[rng.below(n)]).collect();
                // Elo plays the resample in name order too: only which units are drawn varies.
                draw.sort_by(|&a, &b| t.units[a].cmp(&t.units[b]));
                draw
            })
            .collect();
        // Bradley–Terry from the full data's strengths: the same fixed point, in far fewer
        // sweeps. Elo eight resamples at a time (`elo_lanes`), the same numbers as one by one.
        let dense = dense_units(k, &per_unit);
        let bt_draws: Vec<Vec<f64>> = resamples
            .par_iter()
            .map(|draw| bt_ratings(k, &per_unit, dense.as_deref(), draw, Some(&p), &o).1)
            .collect();
        let elo_draws: Vec<Vec<f64>> = if o.elo_intervals {
            resamples
                .par_chunks(32)
                .flat_map_iter(|chunk| elo_lanes(k, &per_unit, chunk, o.elo))
                .map(|raw| calibrated(&raw, o.baseline))
                .collect()
        } else {
            Vec::new()
        };
        let mut bts = vec![Vec::with_capacity(o.samples); k];
        let mut els = vec![Vec::with_capacity(elo_draws.len()); k];
        for b in bt_draws {
            let defined = b.iter().all(|x| x.is_finite());
            bt_undefined += usize::from(!defined);
            if defined {
                for i in 0..k {
                    bts[i].push(b[i]);
                }
            }
        }
        for e in elo_draws {
            for i in 0..k {
                els[i].push(e[i]);
            }
        }
        let interval = |v: Vec<f64>| percentile_interval(v, o.alpha);
        bt_interval = bts.into_iter().map(interval).collect();
        if o.elo_intervals {
            elo_interval = els.into_iter().map(interval).collect();
        }
    }
    Leaderboard {
        baseline: o.baseline,
        bt_strength: p,
        bt_rating: bt,
        elo: el,
        bt_interval,
        elo_interval,
        win_rate,
        matches: ms.len(),
        draws,
        sweeps,
        samples: o.samples,
        bt_undefined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_rates_count_draws_as_half_and_leave_unmet_pairs_undefined() {
        let m = |a, b, result, weight| Match {
            a,
            b,
            result,
            weight,
        };
        // 0 beats 1 once and draws once at weight 2; 2 never plays.
        let w = win_rates(3, &[m(0, 1, 1.0, 1.0), m(1, 0, 0.5, 2.0)]);
        assert!((w[0][1] - 2.0 / 3.0).abs() < 1e-12 && (w[1][0] - 1.0 / 3.0).abs() < 1e-12);
        assert!(w[0][0].is_nan() && w[0][2].is_nan() && w[2][1].is_nan());
        // 20 values, alpha 0.1: the 1st and 19th sorted (⌈1⌉ and ⌈19⌉).
        let v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(percentile_interval(v, 0.1), (1.0, 19.0));
        assert!(percentile_interval(Vec::new(), 0.05).0.is_nan());
    }

    /// Eight ratings in lockstep are, bit for bit, the ratings one at a time: for any number of
    /// lanes (a last chunk of fewer than eight too), and through the fallback when units do not
    /// share their pairs.
    /// Bradley–Terry on a resample from the units' dense matrices is, bit for bit, Bradley–Terry
    /// on the resample's matches: units drawn twice, pairs missing from a unit, draws and weights.
    #[test]
    fn bradley_terry_from_dense_units_is_bradley_terry_on_their_matches() {
        let k = 7;
        let mut rng = Rng::new(5);
        let per_unit: Vec<Vec<Match>> = (0..11)
            .map(|u| {
                let mut out = Vec::new();
                for a in 0..k {
                    for b in a + 1..k {
                        if u == 3 && b == 6 {
                            continue;
                        }
                        out.push(Match {
                            a,
                            b,
                            result: [0.0, 0.5, 1.0][rng.below(3)],
                            weight: 0.25 + rng.below(4) as f64,
                        });
                    }
                }
                out
            })
            .collect();
        let dense = dense_units(k, &per_unit).unwrap();
        for _ in 0..20 {
            let draw: Vec<usize> = (0..11).map(|_| rng.below(11)).collect();
            let ms: Vec<&[Match]> = draw.iter().map(|&u| per_unit[u].as_slice()).collect();
            let want = bradley_terry(k, &ms, None, 1e-9, 1000);
            let got = bradley_terry_dense(k, &dense, &draw, None, 1e-9, 1000);
            assert_eq!(
                want.map(|(p, n)| (p.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), n)),
                got.map(|(p, n)| (p.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), n))
            );
        }
    }

    #[test]
    fn elo_in_lanes_is_elo_one_sequence_at_a_time() {
        let k = 6;
        let mut rng = Rng::new(11);
        let unit = |rng: &mut Rng, skip: bool| -> Vec<Match> {
            let mut out = Vec::new();
            for a in 0..k {
                for b in a + 1..k {
                    if skip && a == 0 {
                        continue;
                    }
                    out.push(Match {
                        a,
                        b,
                        result: [0.0, 0.5, 1.0][rng.below(3)],
                        weight: 0.5 + rng.below(4) as f64,
                    });
                }
            }
            out
        };
        for uneven in [false, true] {
            let per_unit: Vec<Vec<Match>> =
                (0..9).map(|u| unit(&mut rng, uneven && u == 4)).collect();
            let lanes: Vec<Vec<usize>> = (0..19)
                .map(|_| (0..12).map(|_| rng.below(9)).collect())
                .collect();
            let got = elo_lanes(k, &per_unit, &lanes, EloParams::default());
            assert_eq!(got.len(), lanes.len());
            for (l, g) in lanes.iter().zip(&got) {
                let ms: Vec<&[Match]> = l.iter().map(|&u| per_unit[u].as_slice()).collect();
                let want = elo(k, &ms, EloParams::default());
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(g), bits(&want), "uneven {uneven}");
            }
        }
    }

    /// The golden table: real runs of Optuna's TPE, SMAC3 and banditbench's CASH optimisers
    /// (`scripts/reference/cash-optuna-smac.csv`), unit = dataset/seed.
    fn golden_table() -> ScoreTable {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let text =
            std::fs::read_to_string(root.join("scripts/reference/cash-optuna-smac.csv")).unwrap();
        let rows: Vec<(String, String, f64)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                let seed: u32 = f[2].parse().unwrap();
                (
                    format!("{}/{seed:02}", f[1]),
                    f[0].to_string(),
                    f[3].parse().unwrap(),
                )
            })
            .collect();
        ScoreTable::from_rows(&rows, true, super::super::compare::Missing::Error, false)
            .unwrap()
            .0
    }

    #[test]
    fn newton_finishes_where_zermelo_crawls_at_the_same_maximum() {
        // 12 policies, policy i beating j on every unit but a few upsets in a chain, so the
        // strengths exist (strongly connected) yet span many orders of magnitude: Zermelo's
        // iteration needs more than ZERMELO_SWEEPS sweeps here.
        let k = 12;
        let mut wins = vec![vec![0.0; k]; k];
        for (i, row) in wins.iter_mut().enumerate() {
            row[..i].fill(20.0);
            if i + 1 < k {
                row[i + 1] = 1.0;
            }
        }
        let (fast, steps) = bradley_terry_wins(k, wins.clone(), None, 1e-12, 100_000).unwrap();
        assert!(
            steps > ZERMELO_SWEEPS && steps < ZERMELO_SWEEPS + 50,
            "{steps}"
        );
        // Zermelo alone, run to convergence, reaches the same strengths.
        let (slow, sweeps) =
            zermelo_then_newton(k, wins.clone(), None, 1e-12, 5_000_000, usize::MAX).unwrap();
        assert!(sweeps > ZERMELO_SWEEPS, "{sweeps}");
        for (a, b) in fast.iter().zip(&slow) {
            assert!((a / b - 1.0).abs() < 1e-6, "{a} vs {b}");
        }
        // The likelihood's first-order condition: each policy's wins equal their expectation.
        for i in 0..k {
            let (mut won, mut expected) = (0.0, 0.0);
            for j in 0..k {
                won += wins[i][j];
                expected += (wins[i][j] + wins[j][i]) * fast[i] / (fast[i] + fast[j]);
            }
            assert!(
                (won - expected).abs() < 1e-6 * won.max(1.0),
                "{i}: {won} vs {expected}"
            );
        }
        let gm = (fast.iter().map(|x| x.ln()).sum::<f64>() / k as f64).exp();
        assert!((gm - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bradley_terry_and_elo_match_evalica_on_the_golden_table() {
        let t = golden_table();
        let golden: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/leaderboard/evalica.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let lb = leaderboard(
            &t,
            &LeaderboardOptions {
                samples: 0,
                ..LeaderboardOptions::default()
            },
        );
        assert_eq!(lb.matches as u64, golden["matches"].as_u64().unwrap());
        assert_eq!(lb.draws as u64, golden["ties"].as_u64().unwrap());
        assert_eq!(
            lb.sweeps as u64,
            golden["bradley_terry_iterations"].as_u64().unwrap()
        );
        let mean_elo = lb.elo.iter().sum::<f64>() / lb.elo.len() as f64;
        for (i, p) in t.policies.iter().enumerate() {
            let bt = golden["bradley_terry"][p].as_f64().unwrap();
            assert!(
                (lb.bt_strength[i] - bt).abs() < 1e-12,
                "{p}: {} vs {bt}",
                lb.bt_strength[i]
            );
            // evalica's Elo starts at 1000; ours is calibrated to mean 1000, which its sum keeps.
            let e = golden["elo"][p].as_f64().unwrap();
            assert!((lb.elo[i] - e).abs() < 1e-9, "{p}: {} vs {e}", lb.elo[i]);
        }
        assert!((mean_elo - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn a_baseline_sits_at_1000_and_intervals_cover_the_estimate() {
        let t = golden_table();
        let base = t
            .policies
            .iter()
            .position(|p| p == "banditbench-random-search")
            .unwrap();
        let lb = leaderboard(
            &t,
            &LeaderboardOptions {
                baseline: Some(base),
                samples: 200,
                seed: 3,
                ..LeaderboardOptions::default()
            },
        );
        assert!((lb.bt_rating[base] - 1000.0).abs() < 1e-9);
        assert!((lb.elo[base] - 1000.0).abs() < 1e-9);
        for i in 0..t.policies.len() {
            let (lo, hi) = lb.bt_interval[i];
            assert!(
                lo <= lb.bt_rating[i] + 1e-9 && lb.bt_rating[i] <= hi + 1e-9,
                "{i}"
            );
            // Bradley–Terry ratings are 400 log10 of strength ratios.
            let r = 400.0 * (lb.bt_strength[i] / lb.bt_strength[base]).log10() + 1000.0;
            assert!((r - lb.bt_rating[i]).abs() < 1e-9);
        }
        // The baseline's interval is the point itself; optuna-tpe beats random search on
        // nearly every unit, so its interval is far above 1000.
        assert_eq!(lb.bt_interval[base], (1000.0, 1000.0));
        let tpe = t.policies.iter().position(|p| p == "optuna-tpe").unwrap();
        assert!(lb.bt_interval[tpe].0 > 1100.0, "{:?}", lb.bt_interval[tpe]);
        // The win rate counted directly: units where TPE scores higher, draws half.
        let direct = t
            .scores
            .iter()
            .map(|s| match s[tpe].partial_cmp(&s[base]).unwrap() {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Less => 0.0,
            })
            .sum::<f64>()
            / t.units.len() as f64;
        assert_eq!(lb.win_rate[tpe][base], direct);
        assert!(direct > 0.7, "{direct}");
        assert!((lb.win_rate[tpe][base] + lb.win_rate[base][tpe] - 1.0).abs() < 1e-12);
    }

    /// Elo's intervals come only when asked, from the same resamples: asking changes nothing
    /// else, and they then cover Elo's point rating (the baseline's is the point itself).
    #[test]
    fn elo_intervals_only_when_asked_and_nothing_else_changes() {
        let t = golden_table();
        let base = t
            .policies
            .iter()
            .position(|p| p == "banditbench-random-search")
            .unwrap();
        let o = LeaderboardOptions {
            baseline: Some(base),
            samples: 100,
            seed: 7,
            ..LeaderboardOptions::default()
        };
        let without = leaderboard(&t, &o);
        let with = leaderboard(
            &t,
            &LeaderboardOptions {
                elo_intervals: true,
                ..o.clone()
            },
        );
        assert!(without.elo_interval.is_empty());
        assert_eq!(without.bt_interval.len(), t.policies.len());
        // Debug text, since the win rates' diagonal is NaN.
        assert_eq!(
            format!(
                "{:?}",
                Leaderboard {
                    elo_interval: Vec::new(),
                    ..with.clone()
                }
            ),
            format!("{without:?}")
        );
        assert_eq!(with.elo_interval.len(), t.policies.len());
        for (i, &(lo, hi)) in with.elo_interval.iter().enumerate() {
            assert!(lo < hi || i == base, "{i}: {lo} {hi}");
            assert!(lo <= with.elo[i] + 1e-9 && with.elo[i] <= hi + 1e-9, "{i}");
        }
        assert_eq!(with.elo_interval[base], (1000.0, 1000.0));
    }

    #[test]
    fn a_policy_that_never_loses_has_no_bradley_terry_strength() {
        let t = ScoreTable {
            units: (0..3).map(|i| format!("u{i}")).collect(),
            policies: vec!["a".into(), "b".into(), "c".into()],
            scores: vec![
                vec![3.0, 1.0, 2.0],
                vec![3.0, 2.0, 1.0],
                vec![3.0, 1.0, 2.0],
            ],
            higher_is_better: true,
        };
        let lb = leaderboard(
            &t,
            &LeaderboardOptions {
                samples: 50,
                ..LeaderboardOptions::default()
            },
        );
        assert!(lb.bt_rating.iter().all(|x| x.is_nan()));
        assert_eq!(lb.bt_undefined, 50);
        assert!(lb.bt_interval.iter().all(|(l, h)| l.is_nan() && h.is_nan()));
        // Elo is still defined, and a is ahead.
        assert!(lb.elo[0] > lb.elo[1] && lb.elo[0] > lb.elo[2]);
        assert_eq!(lb.win_rate[0][1], 1.0);
    }

    #[test]
    fn hand_computed_two_policy_cases() {
        // a beats b on 3 units of 4, draws on 1: Bradley–Terry's MLE is p_a / p_b = 3.5 / 0.5.
        let t = ScoreTable {
            units: (0..4).map(|i| format!("u{i}")).collect(),
            policies: vec!["a".into(), "b".into()],
            scores: vec![
                vec![2.0, 1.0],
                vec![2.0, 1.0],
                vec![2.0, 1.0],
                vec![1.0, 1.0],
            ],
            higher_is_better: true,
        };
        let lb = leaderboard(
            &t,
            &LeaderboardOptions {
                samples: 0,
                ..LeaderboardOptions::default()
            },
        );
        assert!((lb.bt_strength[0] / lb.bt_strength[1] - 7.0).abs() < 1e-9);
        assert_eq!(lb.win_rate[0][1], 3.5 / 4.0);
        // Elo, k = 4: first match 1000 vs 1000, expected 0.5: a + 2, b − 2; by hand for the rest.
        let mut ra: f64 = 1000.0;
        let mut rb: f64 = 1000.0;
        for res in [1.0, 1.0, 1.0, 0.5] {
            let ea = 1.0 / (1.0 + 10f64.powf((rb - ra) / 400.0));
            let (da, db) = (4.0 * (res - ea), 4.0 * ((1.0 - res) - (1.0 - ea)));
            ra += da;
            rb += db;
        }
        assert!((lb.elo[0] - lb.elo[1] - (ra - rb)).abs() < 1e-9);
        // Lower is better flips every match.
        let flipped = ScoreTable {
            higher_is_better: false,
            ..t.clone()
        };
        let lf = leaderboard(
            &flipped,
            &LeaderboardOptions {
                samples: 0,
                ..LeaderboardOptions::default()
            },
        );
        assert!((lf.bt_strength[1] / lf.bt_strength[0] - 7.0).abs() < 1e-9);
    }
}
