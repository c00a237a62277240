//! BOHB in the pool world: Hyperband whose new configurations come from a model.
//!
//! Falkner, Klein & Hutter 2018, "BOHB: Robust and Efficient Hyperparameter Optimization at
//! Scale", ICML, Algorithm 2 and §4, as hpbandster 0.7 codes it (`bohb/config_generator.py`):
//! Hyperband's brackets (`hyperband.rs`, the same η, R and r_min, the same rungs and synchronous
//! waits with several workers), and each configuration a bracket starts is
//! - with probability ρ (`random_fraction`, 1/3), or while no budget has enough observations, a
//!   random draw;
//! - otherwise the open configuration that maximises l(x)/g(x) (the paper's Eq. 3), where l and g are multivariate kernel density
//!   estimates (product kernels) of the best `top_n_percent` % and of the rest of the scores
//!   recorded at the largest budget b that has enough: both groups hold more than d points, with
//!   d the dimensions of the space (hpbandster's rule; the paper's |D_b| ≥ N_min + 2).
//!
//! The densities are statsmodels' `KDEMultivariate` with the normal-reference bandwidth
//! 1.06 σ n^(−1/(4 + d)) per dimension (σ with ddof 0), clipped from below at `min_bandwidth`:
//! a Gaussian kernel on the numeric and ordinal dimensions (encoded in [0, 1], as `space.rs`) and
//! Aitchison and Aitken's kernel on the categorical ones. Choices this port makes, named:
//! - the pool-based protocol (HPO-B): the open configurations are ranked, so hpbandster's 64
//!   samples from l with its bandwidth widened by 3 are not drawn (`candidates` scores a random
//!   subset instead, as TPE's); the ratio is compared in log space, where hpbandster floors both
//!   densities at 1e-32 (harmless for samples drawn from l, but in a pool it would rank every
//!   configuration far from the good group alike, and pick the worst region);
//! - the categorical kernel's number of levels is the dimension's (statsmodels counts the levels
//!   seen in the data), and its bandwidth is at most (levels − 1)/levels, where the kernel is
//!   uniform (statsmodels lets it pass 1 and turn negative);
//! - in a pool of several learners, the learner is one more categorical dimension; a dimension
//!   inactive in an observation is imputed from a random observation of the same group where it
//!   is active, else drawn uniformly (hpbandster's `impute_conditional_data`); a dimension inactive
//!   in a candidate is left out of its densities (marginalised);
//! - a configuration's results are its scores at the rung budgets of its own bracket (as
//!   hpbandster's evaluations at each budget); one whose training failed is recorded at its next
//!   rung budget with the worst score (hpbandster's loss = ∞).

use super::cash::{Proposal, Proposer};
use super::hyperband::{Halving, Plan, eta_param, r_params};
use super::{Family, ParamDef, Params};
use crate::protocol::{PoolView, WorldKind};
use crate::rng::Rng;
use crate::space::Scale;
use std::collections::BTreeMap;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

pub fn family_bohb() -> Family {
    let mut params = vec![eta_param()];
    params.extend(r_params());
    params.extend([
        ParamDef::float(
            "random_fraction",
            0.0,
            1.0,
            1.0 / 3.0,
            "ρ: the fraction of new configurations drawn at random even when a model exists (BOHB: 1/3)",
        ),
        ParamDef::float(
            "top_n_percent",
            1.0,
            99.0,
            15.0,
            "the percentage of a budget's observations whose density is l(x) (BOHB: 15)",
        ),
        ParamDef::int(
            "min_points_in_model",
            0,
            1_000_000,
            0,
            "the least observations in each group (0: the space's dimensions + 1, BOHB's default)",
        ),
        ParamDef::float(
            "min_bandwidth",
            0.0,
            1.0,
            1e-3,
            "the smallest kernel bandwidth, keeping diversity (BOHB: 1e-3)",
        ),
        ParamDef::int(
            "candidates",
            0,
            10_000_000,
            0,
            "open configurations scored per new configuration: 0 scores every open one (HPO-B's pool-based protocol); N scores a uniform random subset of N",
        ),
        ParamDef::choice(
            "model",
            &["kde", "tpe", "smac"],
            "kde",
            "the model choosing a bracket's new configurations: kde is BOHB's; tpe or smac (banditbench's, at their families' defaults) is refitted at each proposal on the results at the largest budget with min_points_in_model of them (SMAC3's multi-fidelity rule), so Hyperband gets TPE or SMAC as BOHB gets its densities",
        ),
    ]);
    Family {
        name: "bohb",
        summary: "Hyperband whose new configurations maximise l(x)/g(x) of kernel densities at the largest budget with enough observations (a third drawn at random)",
        source: "Falkner, Klein & Hutter 2018, 'BOHB: Robust and Efficient Hyperparameter Optimization at Scale', ICML, Algorithm 2 (hpbandster 0.7's config_generator: normal-reference product-kernel KDEs, top 15 %, ρ = 1/3, min bandwidth 1e-3)",
        worlds: WORLDS,
        parallel: WORLDS,
        params,
        build: |p: &Params, _| {
            let (random_fraction, min_points, candidates) = (
                p.float("random_fraction"),
                p.int("min_points_in_model") as usize,
                p.int("candidates") as usize,
            );
            let model: Box<dyn Proposer> = match p.text("model") {
                "kde" => Box::new(Bohb {
                    random_fraction,
                    top_n_percent: p.float("top_n_percent"),
                    min_points,
                    min_bandwidth: p.float("min_bandwidth"),
                    candidates,
                    ..Bohb::default()
                }),
                name => Box::new(LargestBudget {
                    model: name.to_string(),
                    random_fraction,
                    min_points,
                    candidates,
                    data: BTreeMap::new(),
                    running: Vec::new(),
                }),
            };
            Box::new(Halving::with_model(
                Plan::Hyperband,
                p.int("eta") as u32,
                p.int("r_max") as u32,
                p.int("r_min") as u32,
                model,
            ))
        },
    }
}

/// BOHB's model: the observations per budget and the choice of new configurations (a
/// [`Proposer`] told each result at its rung budget by Hyperband's brackets).
#[derive(Clone, Debug, Default)]
pub struct Bohb {
    pub(super) random_fraction: f64,
    pub(super) top_n_percent: f64,
    pub(super) min_points: usize,
    pub(super) min_bandwidth: f64,
    pub(super) candidates: usize,
    /// Per budget: (configuration, score), in the order the results came in.
    data: BTreeMap<u32, Vec<(u32, f64)>>,
}

/// How one dimension of BOHB's vector is smoothed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Var {
    Continuous,
    /// Categorical with this many levels.
    Unordered(usize),
}

/// A product-kernel density estimate (statsmodels' `KDEMultivariate`).
struct Kde {
    data: Vec<Vec<f64>>,
    bw: Vec<f64>,
    /// Per dimension, the kernel's log terms that do not depend on the point, computed once:
    /// continuous, ln h (and `other` unused); categorical, ln(1 − h) at the same level and
    /// ln(h / (levels − 1)) at another.
    same: Vec<f64>,
    other: Vec<f64>,
}

impl Kde {
    fn fit(data: Vec<Vec<f64>>, vars: &[Var], min_bw: f64) -> Kde {
        let n = data.len() as f64;
        let d = vars.len();
        let bw: Vec<f64> = (0..d)
            .map(|k| {
                let mean = data.iter().map(|r| r[k]).sum::<f64>() / n;
                let var = data.iter().map(|r| (r[k] - mean).powi(2)).sum::<f64>() / n;
                let h = (1.06 * var.sqrt() * n.powf(-1.0 / (4.0 + d as f64))).max(min_bw);
                match vars[k] {
                    Var::Continuous => h,
                    Var::Unordered(levels) => {
                        let top = (levels as f64 - 1.0) / levels as f64;
                        h.min(top.max(min_bw))
                    }
                }
            })
            .collect();
        let (same, other) = bw
            .iter()
            .zip(vars)
            .map(|(&h, v)| match *v {
                Var::Continuous => (h.ln(), 0.0),
                Var::Unordered(levels) => {
                    ((1.0 - h).ln(), (h / (levels as f64 - 1.0).max(1.0)).ln())
                }
            })
            .unzip();
        Kde {
            data,
            bw,
            same,
            other,
        }
    }

    /// The log density at `x`; a NaN coordinate is marginalised out. Summed in log space, so
    /// a point far from every kernel keeps its order instead of underflowing to 0.
    fn log_density(&self, x: &[f64], vars: &[Var]) -> f64 {
        let ln_sqrt_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
        // log Σ exp(k_i), accumulated online: `top` the largest term so far, `sum` the others
        // scaled by exp(−top).
        let (mut top, mut sum) = (f64::NEG_INFINITY, 0.0);
        for row in &self.data {
            let mut k = 0.0;
            for (j, &v) in x.iter().enumerate() {
                if v.is_nan() {
                    continue;
                }
                k += match vars[j] {
                    Var::Continuous => {
                        let z = (row[j] - v) / self.bw[j];
                        -0.5 * z * z - ln_sqrt_2pi - self.same[j]
                    }
                    Var::Unordered(_) if row[j] == v => self.same[j],
                    Var::Unordered(_) => self.other[j],
                };
            }
            if k > top {
                sum = sum * (top - k).exp() + 1.0;
                top = k;
            } else {
                sum += (k - top).exp();
            }
        }
        top + sum.ln() - (self.data.len() as f64).ln()
    }

    #[cfg(test)]
    fn density(&self, x: &[f64], vars: &[Var]) -> f64 {
        self.log_density(x, vars).exp()
    }
}

impl Bohb {
    /// The vector of configuration `c`: its learner (when the pool has several) and every
    /// learner's dimensions, NaN where inactive.
    fn vector(p: &PoolView<'_>, c: usize, out: &mut Vec<f64>) {
        out.clear();
        let s = p.space;
        let l = s.learner(c);
        if s.learners.len() > 1 {
            out.push(l as f64);
        }
        for (m, dims) in s.learners.iter().enumerate() {
            if m == l {
                out.extend(s.values(c).iter().map(|&v| f64::from(v)));
            } else {
                out.extend(std::iter::repeat_n(f64::NAN, dims.len()));
            }
        }
    }

    fn vars(p: &PoolView<'_>) -> Vec<Var> {
        let s = p.space;
        let mut v = Vec::new();
        if s.learners.len() > 1 {
            v.push(Var::Unordered(s.learners.len()));
        }
        for dims in &s.learners {
            v.extend(dims.iter().map(|d| match d.scale {
                Scale::Categorical(_) => Var::Unordered(d.scale.levels()),
                Scale::Numeric { .. } | Scale::Ordinal(_) => Var::Continuous,
            }));
        }
        v
    }

    /// hpbandster's `impute_conditional_data`, per dimension: a NaN takes the value of a random
    /// row of `rows` where the dimension is active, else a uniform value.
    fn impute(rows: &mut [Vec<f64>], vars: &[Var], rng: &mut Rng) {
        for j in 0..vars.len() {
            let active: Vec<f64> = rows.iter().map(|r| r[j]).filter(|v| !v.is_nan()).collect();
            for r in rows.iter_mut().filter(|r| r[j].is_nan()) {
                r[j] = if !active.is_empty() {
                    active[rng.below(active.len())]
                } else {
                    match vars[j] {
                        Var::Continuous => rng.f64(),
                        Var::Unordered(levels) => rng.below(levels) as f64,
                    }
                };
            }
        }
    }

    /// The good and bad densities at the largest budget that has enough observations.
    fn model(&self, p: &PoolView<'_>, vars: &[Var], rng: &mut Rng) -> Option<(Kde, Kde)> {
        let d = vars.len();
        let min_points = if self.min_points == 0 {
            d + 1
        } else {
            self.min_points
        };
        for (_, obs) in self.data.iter().rev() {
            let n = obs.len();
            if n < min_points {
                continue;
            }
            let n_good = min_points.max((self.top_n_percent * n as f64 / 100.0).floor() as usize);
            let n_bad =
                min_points.max(((100.0 - self.top_n_percent) * n as f64 / 100.0).floor() as usize);
            // Best first; ties: the earlier result first.
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_by(|&a, &b| obs[b].1.total_cmp(&obs[a].1).then(a.cmp(&b)));
            let good = &idx[..n_good.min(n)];
            let bad = &idx[n_good.min(n)..(n_good + n_bad).min(n)];
            if good.len() <= d || bad.len() <= d {
                continue;
            }
            let rows = |g: &[usize], rng: &mut Rng| {
                let mut rows: Vec<Vec<f64>> = g
                    .iter()
                    .map(|&i| {
                        let mut v = Vec::new();
                        Self::vector(p, obs[i].0 as usize, &mut v);
                        v
                    })
                    .collect();
                Self::impute(&mut rows, vars, rng);
                rows
            };
            let (g, b) = (rows(good, rng), rows(bad, rng));
            return Some((
                Kde::fit(g, vars, self.min_bandwidth),
                Kde::fit(b, vars, self.min_bandwidth),
            ));
        }
        None
    }
}

impl Proposer for Bohb {
    /// The configuration a bracket starts next: a random draw with probability ρ, or while no
    /// budget has enough results.
    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> anyhow::Result<Proposal> {
        if p.n_open == 0 || rng.chance(self.random_fraction) {
            return Ok(Proposal::Draw);
        }
        let vars = Self::vars(p);
        let Some((l, g)) = self.model(p, &vars, rng) else {
            return Ok(Proposal::Draw);
        };
        let cands = super::cash::candidate_list(p, self.candidates, rng);
        let mut best: Option<(f64, u32)> = None;
        let mut x = Vec::new();
        for c in cands {
            Self::vector(p, c as usize, &mut x);
            let v = l.log_density(&x, &vars) - g.log_density(&x, &vars);
            if best.is_none_or(|b| v > b.0) {
                best = Some((v, c));
            }
        }
        Ok(best.map_or(Proposal::Draw, |b| Proposal::Choose(b.1)))
    }

    /// A result at `budget` units; a failed one counts as the worst score (hpbandster's loss
    /// = ∞).
    fn tell(&mut self, config: u32, budget: u32, score: Option<f64>) {
        self.data
            .entry(budget)
            .or_default()
            .push((config, score.unwrap_or(f64::NEG_INFINITY)));
    }
}

/// A result told at one budget: (configuration, score; `None` when it failed).
type Told = (u32, Option<f64>);

/// TPE or SMAC in BOHB's place (`model = "tpe" | "smac"`): at each proposal, with probability ρ
/// (or while no budget has enough results) a random draw; otherwise a fresh model told the
/// results at the largest budget with at least `min_points` of them (0: one more than the
/// space's dimensions, as BOHB), which ranks the open configurations. SMAC3 2.x's multi-fidelity facade picks
/// its forest's data by the same rule (`ConfigSelector._collect_data`: the highest budget with
/// `min_trials` results, 1 by default).
struct LargestBudget {
    model: String,
    random_fraction: f64,
    min_points: usize,
    candidates: usize,
    /// Per budget: (configuration, score; `None` when it failed), in the order told.
    data: BTreeMap<u32, Vec<Told>>,
    running: Vec<u32>,
}

impl LargestBudget {
    /// The largest budget with at least `min_points` results, and its results.
    fn basis(&self, min_points: usize) -> Option<(u32, &[Told])> {
        self.data
            .iter()
            .rev()
            .find(|(_, r)| r.len() >= min_points)
            .map(|(&b, r)| (b, r.as_slice()))
    }
}

impl Proposer for LargestBudget {
    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> anyhow::Result<Proposal> {
        if p.n_open == 0 || rng.chance(self.random_fraction) {
            return Ok(Proposal::Draw);
        }
        let min_points = match self.min_points {
            0 => Bohb::vars(p).len() + 1,
            n => n,
        };
        let Some((budget, results)) = self.basis(min_points) else {
            return Ok(Proposal::Draw);
        };
        let mut model = super::cash::fresh_model(&self.model, self.candidates);
        for &(config, score) in results {
            model.tell(config, budget, score);
        }
        model.pending(&self.running);
        model.propose(p, rng)
    }

    fn tell(&mut self, config: u32, budget: u32, score: Option<f64>) {
        self.data.entry(budget).or_default().push((config, score));
    }

    fn pending(&mut self, configs: &[u32]) {
        self.running.clear();
        self.running.extend_from_slice(configs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_densities_follow_statsmodels_normal_reference() {
        // Three points in one continuous dimension: σ (ddof 0) of 0.1, 0.2, 0.6 is
        // sqrt(((−0.2)² + (−0.1)² + 0.3²)/3) = sqrt(0.14/3) = 0.216025; h = 1.06 σ 3^(−1/5).
        // statsmodels 0.15.0, KDEMultivariate(data, 'c', bw='normal_reference'): bw 0.18381672,
        // pdf(0.2) 1.41516038.
        let vars = [Var::Continuous];
        let k = Kde::fit(vec![vec![0.1], vec![0.2], vec![0.6]], &vars, 1e-3);
        assert!((k.bw[0] - 0.183_816_72).abs() < 1e-8, "{}", k.bw[0]);
        assert!((k.density(&[0.2], &vars) - 1.415_160_38).abs() < 1e-8);
        // The density at 0.2: mean of φ((x_i − 0.2)/h)/h over the points.
        let h = k.bw[0];
        let phi = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let want = (phi(-0.1 / h) + phi(0.0) + phi(0.4 / h)) / h / 3.0;
        assert!((k.density(&[0.2], &vars) - want).abs() < 1e-12);
        // A categorical dimension of 3 levels, data 0, 0, 1: σ = 0.471405, h = 1.06 σ 3^(−1/5)
        // (statsmodels, var_type 'u': 0.40112096); the kernel is 1 − h at the same level and
        // h / 2 elsewhere (statsmodels divides by the 2 levels the data show: pdf(0) = 0.53295968).
        let vars = [Var::Unordered(3)];
        let k = Kde::fit(vec![vec![0.0], vec![0.0], vec![1.0]], &vars, 1e-3);
        let h = k.bw[0];
        assert!((h - 0.401_120_96).abs() < 1e-8, "{h}");
        let two = Kde::fit(
            vec![vec![0.0], vec![0.0], vec![1.0]],
            &[Var::Unordered(2)],
            1e-3,
        );
        assert!((two.density(&[0.0], &[Var::Unordered(2)]) - 0.532_959_68).abs() < 1e-8);
        assert!((k.density(&[0.0], &vars) - (2.0 * (1.0 - h) + h / 2.0) / 3.0).abs() < 1e-12);
        assert!((k.density(&[2.0], &vars) - h / 2.0).abs() < 1e-12);
        // Identical points: the bandwidth is the minimum; a NaN coordinate is left out.
        let vars = [Var::Continuous, Var::Continuous];
        let k = Kde::fit(vec![vec![0.5, 0.1], vec![0.5, 0.9]], &vars, 1e-3);
        assert_eq!(k.bw[0], 1e-3);
        let h = k.bw[1];
        let want = (phi(-0.2 / h) + phi(0.6 / h)) / h / 2.0;
        assert!((k.density(&[f64::NAN, 0.3], &vars) - want).abs() < 1e-12);
    }

    #[test]
    fn tpe_and_smac_are_told_the_largest_budget_with_enough_results() {
        let pool = hand_pool(50, 9, |i| {
            (1..=9).map(|u| i as f32 / 49.0 + 0.01 * u as f32).collect()
        });
        let w = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            100.0,
            1.0,
            1,
        );
        let v = w.view();
        let p = v.pool.unwrap();
        for name in ["tpe", "smac"] {
            let mut lb = LargestBudget {
                model: name.into(),
                random_fraction: 0.0,
                min_points: 3,
                candidates: 0,
                data: BTreeMap::new(),
                running: Vec::new(),
            };
            // What a fresh model told exactly `results` at `budget` proposes, with the same rng.
            let alone = |budget: u32, results: &[(u32, Option<f64>)], seed: u64| {
                let mut m = crate::policy::cash::fresh_model(name, 0);
                for &(c, s) in results {
                    m.tell(c, budget, s);
                }
                m.propose(&p, &mut Rng::new(seed)).unwrap()
            };
            assert_eq!(lb.propose(&p, &mut Rng::new(1)).unwrap(), Proposal::Draw);
            let at1 = [(5, Some(0.9)), (45, Some(0.1)), (20, None), (25, Some(0.5))];
            for &(c, s) in &at1 {
                lb.tell(c, 1, s);
            }
            lb.tell(45, 3, Some(0.95));
            lb.tell(30, 3, Some(0.2));
            // Budget 3 has 2 results, fewer than 3: the model sees budget 1's four.
            assert_eq!(lb.basis(3), Some((1, &at1[..])));
            assert_eq!(lb.basis(2).map(|b| b.0), Some(3));
            assert_eq!(lb.basis(5), None);
            assert_eq!(lb.propose(&p, &mut Rng::new(7)).unwrap(), alone(1, &at1, 7));
            lb.tell(10, 3, Some(0.1));
            let at3 = [(45, Some(0.95)), (30, Some(0.2)), (10, Some(0.1))];
            assert_eq!(lb.basis(3), Some((3, &at3[..])));
            assert_eq!(lb.propose(&p, &mut Rng::new(7)).unwrap(), alone(3, &at3, 7));
        }
    }

    use crate::policy::testing;
    use crate::replay::pool::{PoolWorld, PoolWorldConfig, tests::hand_pool};
    use crate::replay::{ActionKind, Overhead, Step, World, drive};

    #[test]
    fn bohb_runs_hyperbands_schedule_and_models_the_largest_budget_with_enough_results() {
        // 200 configurations of 9 units on one ordinal dimension (x = i / 199); config i scores
        // x + 0.001 u. Hyperband (R = 9, η = 3): brackets of 9, 5 and 3 configurations, 69 units.
        // With ρ = 0, BOHB draws at random until a budget has more than d = 1 point in each
        // group: with one worker each draw trains its first unit at once, and 4 results at
        // budget 1 make good max(2, ⌊0.6⌋) = 2 and bad max(2, ⌊3.4⌋) = 3 (2 left), so the first
        // 4 are draws and every later configuration is chosen by l/g.
        let pool = hand_pool(200, 9, |i| {
            (1..=9)
                .map(|u| i as f32 / 199.0 + 0.001 * u as f32)
                .collect()
        });
        let run = |family: &str, params: &[(&str, toml::Value)]| {
            let mut w = PoolWorld::new(
                &pool,
                &pool.tasks[0],
                PoolWorldConfig::default(),
                69.0,
                1.0,
                3,
            );
            let mut p = testing::build(family, params, 0);
            let mut steps: Vec<Step> = Vec::new();
            drive(
                &mut w,
                p.as_mut(),
                family,
                &mut Rng::new(1),
                Overhead::None,
                &mut [&mut steps],
            )
            .unwrap();
            (steps, w.ledger().pulls.clone())
        };
        let (bohb, bohb_units) = run("bohb", &[("random_fraction", 0.0.into())]);
        let (_, hb_units) = run("hyperband", &[]);
        // The same schedule of units per arm as Hyperband's.
        assert_eq!(bohb_units.len(), 17);
        let mut a = bohb_units.clone();
        let mut b = hb_units.clone();
        a[..9].sort_unstable();
        b[..9].sort_unstable();
        a[9..14].sort_unstable();
        b[9..14].sort_unstable();
        assert_eq!(a, b);
        let new: Vec<(ActionKind, u32)> = bohb
            .iter()
            .filter(|s| matches!(s.action, ActionKind::Draw | ActionKind::Choose))
            .map(|s| (s.action, s.config))
            .collect();
        assert_eq!(new.len(), 17);
        assert!(new[..4].iter().all(|s| s.0 == ActionKind::Draw), "{new:?}");
        assert!(
            new[4..].iter().all(|s| s.0 == ActionKind::Choose),
            "{new:?}"
        );
        // The model looks for more of the best: every chosen configuration sits above the
        // median of the four random ones.
        let mut first: Vec<u32> = new[..4].iter().map(|s| s.1).collect();
        first.sort_unstable();
        assert!(new[4..].iter().all(|s| s.1 > first[1]), "{new:?}");
        // ρ = 1 is Hyperband itself, draw for draw.
        let (all_random, units) = run("bohb", &[("random_fraction", 1.0.into())]);
        assert_eq!(units, hb_units);
        assert!(all_random.iter().all(|s| s.action != ActionKind::Choose));
        // TPE and SMAC in the model's place: the same schedule; with one dimension, the third
        // new configuration already finds 2 = d + 1 results at budget 1, and from then on the
        // model chooses.
        for model in ["tpe", "smac"] {
            let (steps, units) = run(
                "bohb",
                &[("model", model.into()), ("random_fraction", 0.0.into())],
            );
            let mut a = units.clone();
            a[..9].sort_unstable();
            a[9..14].sort_unstable();
            assert_eq!(a, b, "{model}");
            let new: Vec<(ActionKind, u32)> = steps
                .iter()
                .filter(|s| matches!(s.action, ActionKind::Draw | ActionKind::Choose))
                .map(|s| (s.action, s.config))
                .collect();
            assert!(
                new[..2].iter().all(|s| s.0 == ActionKind::Draw),
                "{model}: {new:?}"
            );
            assert!(
                new[2..].iter().all(|s| s.0 == ActionKind::Choose),
                "{model}: {new:?}"
            );
            let (_, units) = run(
                "bohb",
                &[("model", model.into()), ("random_fraction", 1.0.into())],
            );
            assert_eq!(units, hb_units, "{model}");
        }
    }
}
