//! TPE (Bergstra, Bardenet, Bengio & Kégl 2011), as hyperopt 0.3 codes it and Auto-WEKA ran it.

use super::{
    Evaluator, History, Liar, OnFailure, ParamDef, Proposal, Proposer, WORLDS, candidate_list,
    candidates_param, liar, liar_param, on_failure, on_failure_param,
};
use crate::normal::norm_cdf;
use crate::policy::{Family, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use anyhow::Result;

// ---------------------------------------------------------------------------------------------
// TPE

pub fn family_tpe() -> Family {
    Family {
        name: "tpe",
        summary: "tree-structured Parzen estimator: rank open configurations by l(x)/g(x), the densities of the best γ and the rest",
        source: "Bergstra, Bardenet, Bengio & Kégl 2011, 'Algorithms for Hyper-Parameter Optimization', NeurIPS, §4 (Eq. 2-3, §4.1); γ = 0.15 as in Thornton et al. 2013 (Auto-WEKA); bandwidths, priors, forgetting and the sqrt split as hyperopt 0.3 codes them (tpe.py: adaptive_parzen_normal, ap_split_trials)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::float(
                "gamma",
                1e-6,
                1.0,
                0.15,
                "γ: the fraction of observations whose density is l(x) (Auto-WEKA: 0.15)",
            ),
            ParamDef::choice(
                "split",
                &["quantile", "hyperopt"],
                "quantile",
                "how many observations are 'good': quantile, ⌈γ n⌉ (the paper's y* at quantile γ); hyperopt, min(⌈γ √n⌉, 25) (the code Auto-WEKA ran)",
            ),
            ParamDef::int(
                "n_startup",
                0,
                1_000_000,
                20,
                "random configurations before the model is used (hyperopt's n_startup_jobs, 20)",
            ),
            ParamDef::float(
                "prior_weight",
                0.0,
                1e6,
                1.0,
                "weight of the prior kernel (numeric: centred on the range, σ = the range) and of the uniform prior (categorical), as hyperopt",
            ),
            ParamDef::int(
                "forgetting",
                0,
                1_000_000,
                25,
                "hyperopt's linear forgetting: beyond this many observations in a group, older ones weigh linearly less (0: all weigh the same)",
            ),
            candidates_param(),
            on_failure_param("skip"),
            liar_param(),
        ],
        build: |p: &Params, _| Box::new(Evaluator::new(tpe_of(p))),
    }
}

/// TPE with the family's parameters `p`.
pub(super) fn tpe_of(p: &Params) -> Tpe {
    Tpe {
        gamma: p.float("gamma"),
        hyperopt_split: p.text("split") == "hyperopt",
        n_startup: p.int("n_startup") as usize,
        prior_weight: p.float("prior_weight"),
        forgetting: p.int("forgetting") as usize,
        candidates: p.int("candidates") as usize,
        on_failure: on_failure(p),
        liar: liar(p),
        hist: History::default(),
        running: Vec::new(),
        cache: TpeCache::default(),
        mo: None,
    }
}

/// Per learner, the configurations of the observations below and above the split at the last
/// decision (each configuration is evaluated once, so they name the observations, made-up ones
/// of the constant liar included), and per configuration its cached Σ_d log l_d − log g_d over its learner's
/// dimensions: a learner's candidates are re-scored only when its groups change.
#[derive(Clone, Debug, Default)]
pub(super) struct TpeCache {
    pub(super) groups: Vec<Option<(Vec<u32>, Vec<u32>)>>,
    pub(super) score: Vec<f64>,
}

pub struct Tpe {
    pub(super) gamma: f64,
    pub(super) hyperopt_split: bool,
    pub(super) n_startup: usize,
    pub(super) prior_weight: f64,
    pub(super) forgetting: usize,
    pub(super) candidates: usize,
    pub(super) on_failure: OnFailure,
    pub(super) liar: Liar,
    pub(super) hist: History,
    /// Configurations running on other workers at the next proposal.
    pub(super) running: Vec<u32>,
    pub(super) cache: TpeCache,
    /// MO-TPE (`mo_tpe.rs`): per configuration evaluated, its objectives (minimised). When set,
    /// the split is MO-TPE's and the good group's weights are uniform.
    pub(super) mo: Option<std::collections::HashMap<u32, Vec<f64>>>,
}

/// A mixture of truncated Gaussians on [0, 1]: per kernel its centre, 1/(2σ²) and its weight
/// over σ √(2π) Z (Z: the kernel's mass inside [0, 1]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parzen {
    pub mu: Vec<f64>,
    pub sigma: Vec<f64>,
    pub weight: Vec<f64>,
    pub(super) a: Vec<f64>,
    pub(super) c: Vec<f64>,
}

impl Parzen {
    /// hyperopt's `adaptive_parzen_normal` on [0, 1] with the prior N(0.5, 1): the observations
    /// `xs` (with their weights) and the prior kernel, sorted; each kernel's σ is the larger gap
    /// to its neighbours, clipped to [1 / min(100, 1 + kernels), 1]; the prior keeps σ = 1.
    pub fn new(xs: &[(f64, f64)], prior_weight: f64) -> Parzen {
        let mut pts: Vec<(f64, f64, bool)> = xs.iter().map(|&(x, w)| (x, w, false)).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = pts.len() + 1;
        let mut sigma = vec![1.0; n];
        let pos = if pts.len() == 1 {
            // One observation: σ = half the prior's, the prior before it if 0.5 < x.
            let pos = usize::from(0.5 >= pts[0].0);
            sigma[1 - pos] = 0.5;
            pos
        } else {
            // hyperopt inserts the prior at searchsorted(sorted, prior_mu) (left side).
            pts.partition_point(|p| p.0 < 0.5)
        };
        pts.insert(pos, (0.5, prior_weight, true));
        if n > 2 {
            for i in 0..n {
                let left = if i > 0 {
                    pts[i].0 - pts[i - 1].0
                } else {
                    pts[1].0 - pts[0].0
                };
                let right = if i + 1 < n {
                    pts[i + 1].0 - pts[i].0
                } else {
                    pts[n - 1].0 - pts[n - 2].0
                };
                sigma[i] = left.max(right);
            }
        }
        // hyperopt's "magic formula": σ in [1 / min(100, 1 + kernels), 1]; the prior keeps 1.
        let minsigma = 1.0 / (1.0 + n as f64).min(100.0);
        for (s, p) in sigma.iter_mut().zip(&pts) {
            *s = if p.2 { 1.0 } else { s.clamp(minsigma, 1.0) };
        }
        let total: f64 = pts.iter().map(|p| p.1).sum();
        let mut out = Parzen::default();
        for (p, &s) in pts.iter().zip(&sigma) {
            let w = p.1 / total;
            let z = norm_cdf((1.0 - p.0) / s) - norm_cdf((0.0 - p.0) / s);
            out.mu.push(p.0);
            out.sigma.push(s);
            out.weight.push(w);
            out.a.push(0.5 / (s * s));
            out.c
                .push(w / (s * (2.0 * std::f64::consts::PI).sqrt() * z));
        }
        out
    }

    pub fn density(&self, x: f64) -> f64 {
        let mut s = 0.0;
        for k in 0..self.mu.len() {
            let d = x - self.mu[k];
            s += self.c[k] * (-self.a[k] * d * d).exp();
        }
        s
    }
}

/// hyperopt's categorical posterior (`tpe_cat_pseudocounts` with a uniform prior): p(k) ∝ the
/// weights of the observations at k + prior_weight.
pub fn categorical_posterior(levels: usize, xs: &[(f64, f64)], prior_weight: f64) -> Vec<f64> {
    let mut p = vec![prior_weight; levels];
    for &(x, w) in xs {
        if let Some(v) = p.get_mut(x as usize) {
            *v += w;
        }
    }
    let s: f64 = p.iter().sum();
    p.iter().map(|v| v / s).collect()
}

/// hyperopt's `linear_forgetting_weights(n, lf)`: all 1 below lf; else the oldest n − lf ramp up
/// linearly from 1/n to 1 and the newest lf weigh 1. `order` gives each observation's age rank.
pub(super) fn forgetting_weights(n: usize, lf: usize) -> Vec<f64> {
    if lf == 0 || n < lf {
        return vec![1.0; n];
    }
    let ramp = n - lf;
    let mut w: Vec<f64> = (0..ramp)
        .map(|i| {
            if ramp == 1 {
                1.0 / n as f64
            } else {
                1.0 / n as f64 + (1.0 - 1.0 / n as f64) * i as f64 / (ramp - 1) as f64
            }
        })
        .collect();
    w.extend(std::iter::repeat_n(1.0, lf));
    w
}

impl Tpe {
    /// The number of observations in the good group, given n.
    pub fn n_below(&self, n: usize) -> usize {
        let k = if self.hyperopt_split {
            ((self.gamma * (n as f64).sqrt()).ceil() as usize).min(25)
        } else {
            (self.gamma * n as f64).ceil() as usize
        };
        k.clamp(1, n.max(1))
    }

    /// The good and bad groups (indices into the history), each in evaluation order.
    fn split(&self) -> (Vec<usize>, Vec<usize>) {
        if let Some(mo) = &self.mo {
            return super::mo_tpe::split(&self.hist.obs, mo, self.gamma);
        }
        let obs = &self.hist.obs;
        let mut idx: Vec<usize> = (0..obs.len()).collect();
        // Best first; ties: the earlier evaluation first (hyperopt's stable argsort of losses).
        idx.sort_by(|&a, &b| obs[b].1.total_cmp(&obs[a].1).then(a.cmp(&b)));
        let k = self.n_below(obs.len());
        let mut below = idx[..k].to_vec();
        let mut above = idx[k..].to_vec();
        below.sort_unstable();
        above.sort_unstable();
        (below, above)
    }

    /// The observations of `group` (indices into the history) whose configuration is learner `l`'s.
    fn of_learner(&self, p: &PoolView<'_>, group: &[usize], l: usize) -> Vec<usize> {
        group
            .iter()
            .copied()
            .filter(|&i| p.space.learner(self.hist.obs[i].0 as usize) == l)
            .collect()
    }

    /// (value, weight) pairs over the observations `members`: of dimension `d` of their learner,
    /// or of the learner itself (`None`); weights by hyperopt's linear forgetting, except in
    /// MO-TPE's good group (`below`), where they are uniform (Optuna 5.0.0's).
    fn values(
        &self,
        p: &PoolView<'_>,
        members: &[usize],
        d: Option<usize>,
        below: bool,
    ) -> Vec<(f64, f64)> {
        let w = if below && self.mo.is_some() {
            vec![1.0; members.len()]
        } else {
            forgetting_weights(members.len(), self.forgetting)
        };
        members
            .iter()
            .zip(w)
            .filter_map(|(&i, w)| {
                let c = self.hist.obs[i].0 as usize;
                let x = match d {
                    None => p.space.learner(c) as f64,
                    Some(k) => f64::from(p.space.values(c)[k]),
                };
                (!x.is_nan()).then_some((x, w))
            })
            .collect()
    }

    /// log l(x) − log g(x) of learner `l`'s dimensions, per candidate of `cands` (all of `l`),
    /// from `l`'s observations in the good and the bad group.
    fn score_learner(
        &self,
        p: &PoolView<'_>,
        l: usize,
        (below, above): &(Vec<usize>, Vec<usize>),
        cands: &[u32],
        out: &mut [f64],
    ) {
        out.fill(0.0);
        for (k, dim) in p.space.learners[l].iter().enumerate() {
            let (b, a) = (
                self.values(p, below, Some(k), true),
                self.values(p, above, Some(k), false),
            );
            if dim.scale.is_categorical() {
                let n = dim.scale.levels();
                let (pl, pg) = (
                    categorical_posterior(n, &b, self.prior_weight),
                    categorical_posterior(n, &a, self.prior_weight),
                );
                for (o, &c) in out.iter_mut().zip(cands) {
                    let x = p.space.values(c as usize)[k];
                    if !x.is_nan() {
                        let i = (x as usize).min(n - 1);
                        *o += pl[i].ln() - pg[i].ln();
                    }
                }
            } else {
                let (pl, pg) = (
                    Parzen::new(&b, self.prior_weight),
                    Parzen::new(&a, self.prior_weight),
                );
                for (o, &c) in out.iter_mut().zip(cands) {
                    let x = p.space.values(c as usize)[k];
                    if !x.is_nan() {
                        let x = f64::from(x);
                        *o += pl.density(x).ln() - pg.density(x).ln();
                    }
                }
            }
        }
    }
}

impl Proposer for Tpe {
    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        if self.hist.evaluated < self.n_startup || self.hist.obs.is_empty() {
            return Ok(Proposal::Draw);
        }
        // The constant liar: rank on the history with the running configurations added.
        let Some(lied) = self.hist.with_lies(&self.running, self.liar) else {
            return self.rank(p, rng);
        };
        let real = std::mem::replace(&mut self.hist, lied);
        let out = self.rank(p, rng);
        self.hist = real;
        out
    }

    fn tell(&mut self, config: u32, _budget: u32, score: Option<f64>) {
        self.hist.add(config, score, self.on_failure);
    }

    fn pending(&mut self, configs: &[u32]) {
        self.running.clear();
        self.running.extend_from_slice(configs);
    }
}

impl Tpe {
    /// The open configuration of the largest l(x)/g(x) on the current history.
    fn rank(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        let (below, above) = self.split();
        let nl = p.space.learners.len();
        // The root: which learner.
        let (rb, ra) = (
            categorical_posterior(nl, &self.values(p, &below, None, true), self.prior_weight),
            categorical_posterior(nl, &self.values(p, &above, None, false), self.prior_weight),
        );
        let root: Vec<f64> = (0..nl).map(|l| rb[l].ln() - ra[l].ln()).collect();
        let cands = candidate_list(p, self.candidates, rng);
        if cands.is_empty() {
            return Ok(Proposal::Stop);
        }
        if self.cache.score.len() != p.open.len() {
            self.cache.score = vec![0.0; p.open.len()];
            self.cache.groups = vec![None; nl];
        }
        // Every open configuration is scored once and kept until its learner's groups change; a
        // subset (`candidates` > 0) is fresh each decision, so its scores are not kept.
        let keep = self.candidates == 0;
        for l in 0..nl {
            let groups = (self.of_learner(p, &below, l), self.of_learner(p, &above, l));
            let configs =
                |g: &[usize]| -> Vec<u32> { g.iter().map(|&i| self.hist.obs[i].0).collect() };
            let key = (configs(&groups.0), configs(&groups.1));
            if keep && self.cache.groups[l].as_ref() == Some(&key) {
                continue;
            }
            let mine: Vec<u32> = cands
                .iter()
                .copied()
                .filter(|&c| p.space.learner(c as usize) == l)
                .collect();
            let mut s = vec![0.0; mine.len()];
            self.score_learner(p, l, &groups, &mine, &mut s);
            for (&c, v) in mine.iter().zip(s) {
                self.cache.score[c as usize] = v;
            }
            self.cache.groups[l] = keep.then_some(key);
        }
        // The best total; ties go to the lowest index (`cands` is sorted).
        let mut best: Option<(f64, u32)> = None;
        for &c in &cands {
            let v = root[p.space.learner(c as usize)] + self.cache.score[c as usize];
            if best.is_none_or(|b| v > b.0) {
                best = Some((v, c));
            }
        }
        Ok(best.map_or(Proposal::Stop, |(_, c)| Proposal::Choose(c)))
    }
}
