//! CASH optimisers as Auto-WEKA compared them (Thornton, Hutter, Hoos & Leyton-Brown 2013,
//! "Auto-WEKA: Combined Selection and Hyperparameter Optimization of Classification Algorithms",
//! KDD, §4–5), replayed with the pool-based protocol of HPO-B (Pineda Arango et al. 2021): an
//! optimiser chooses among the recorded configurations of the joint pool that it has not
//! evaluated yet, ranking them by its acquisition function (`Action::Choose`).
//!
//! - `ex-def`: every learner at its default hyper-parameters, the best one kept (Auto-WEKA's
//!   "Ex-Def"; the defaults must be recorded, `defaults.parquet`).
//! - `grid-search`: the pool's grid in a fixed order (Auto-WEKA's grid search; needs a grid pool).
//! - `tpe`: Bergstra, Bardenet, Bengio & Kégl 2011, "Algorithms for Hyper-Parameter
//!   Optimization", NeurIPS, §4 (Eq. 2–3 and the tree-structured Parzen estimators of §4.1),
//!   γ = 0.15 as Auto-WEKA ran it; the split, the Parzen bandwidths and the priors as hyperopt
//!   0.3 codes them (Auto-WEKA drove hyperopt's TPE).
//! - `smac`: Hutter, Hoos & Leyton-Brown 2011, "Sequential Model-Based Optimization for General
//!   Algorithm Configuration", LION 5, §4.3 (random forest, mean and variance from the trees) and
//!   §4.1 (expected improvement), with every second configuration drawn at random (§4.2
//!   "interleaving random configurations", as Auto-WEKA's SMAC does).
//!
//! One evaluation trains the chosen configuration to the end of its curve (one unit in a joint
//! trace-set pool, the full 27 units in `sklearn-grid`), and its score is the score of its last
//! unit. Random configurations are drawn by the world (`Action::Draw`, the same seeded order as
//! `random-search`).

use super::forest::{Forest, ForestParams};
use super::{Action, Family, Kind, ParamDef, Params, Policy, Value};
use crate::analysis::stats::{norm_cdf, norm_pdf};
use crate::protocol::{Observation, PoolView, View, WorldKind};
use crate::rng::Rng;
use crate::trace::space::{Root, Scale};
use anyhow::{Result, bail};

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

/// What an optimiser proposes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proposal {
    Choose(u32),
    Draw,
    Stop,
}

/// A CASH optimiser: it proposes configurations and is told their final scores.
pub trait Proposer: Send {
    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal>;
    /// The final score of configuration `config` (reward orientation: higher is better), `None`
    /// when its evaluation failed.
    fn tell(&mut self, config: u32, score: Option<f64>);
}

/// Runs a proposer in the pool world: choose (or draw) a configuration, train it to the end of its
/// curve, tell the proposer its last unit's score, repeat.
pub struct Evaluator<P> {
    pub inner: P,
    current: Option<usize>,
    finished: Option<(usize, Option<f64>)>,
}

impl<P: Proposer> Evaluator<P> {
    pub fn new(inner: P) -> Self {
        Evaluator {
            inner,
            current: None,
            finished: None,
        }
    }
}

impl<P: Proposer> Policy for Evaluator<P> {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        self.try_decide(view, rng).unwrap_or(Action::Stop)
    }

    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        let Some(p) = view.pool else {
            bail!("a CASH optimiser needs the pool world");
        };
        if let Some((arm, score)) = self.finished.take() {
            self.inner.tell(p.config[arm], score);
        }
        if let Some(a) = self.current {
            if !p.done[a] {
                return Ok(Action::Pull(a));
            }
            self.current = None;
        }
        Ok(match self.inner.propose(&p, rng)? {
            Proposal::Choose(c) => Action::Choose(c),
            Proposal::Draw if p.n_open > 0 => Action::Draw,
            Proposal::Draw | Proposal::Stop => Action::Stop,
        })
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        if obs.exhausted {
            self.finished = Some((obs.arm, obs.reward));
            self.current = None;
        } else {
            self.current = Some(obs.arm);
        }
    }
}

fn int(name: &'static str, min: i64, max: i64, default: i64, doc: &'static str) -> ParamDef {
    ParamDef {
        name,
        kind: Kind::Int { min, max },
        default: Value::Int(default),
        doc,
    }
}

fn float(name: &'static str, min: f64, max: f64, default: f64, doc: &'static str) -> ParamDef {
    ParamDef {
        name,
        kind: Kind::Float { min, max },
        default: Value::Float(default),
        doc,
    }
}

fn choice(
    name: &'static str,
    options: &'static [&'static str],
    default: &'static str,
    doc: &'static str,
) -> ParamDef {
    ParamDef {
        name,
        kind: Kind::Choice(options),
        default: Value::Text(default.into()),
        doc,
    }
}

/// What a failed evaluation tells a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnFailure {
    /// Nothing: the configuration is left out of the model (Optuna's and hyperopt's TPE).
    Skip,
    /// The worst score seen so far (SMAC's crash cost, imputed).
    WorstSeen,
}

fn on_failure_param(default: &'static str) -> ParamDef {
    choice(
        "on_failure",
        &["skip", "worst-seen"],
        default,
        "a failed evaluation is left out of the model (skip) or scored as the worst score seen so far (worst-seen, SMAC's crash cost)",
    )
}

fn on_failure(p: &Params) -> OnFailure {
    match p.text("on_failure") {
        "worst-seen" => OnFailure::WorstSeen,
        _ => OnFailure::Skip,
    }
}

fn candidates_param() -> ParamDef {
    int(
        "candidates",
        0,
        10_000_000,
        0,
        "open configurations scored per decision: 0 scores every open one (HPO-B's pool-based protocol); N scores a uniform random subset of N",
    )
}

/// The observations a model learns from, with failures handled by the named rule.
#[derive(Clone, Debug, Default)]
struct History {
    /// (configuration, score, order of evaluation).
    obs: Vec<(u32, f64, usize)>,
    evaluated: usize,
    worst: f64,
}

impl History {
    fn add(&mut self, config: u32, score: Option<f64>, rule: OnFailure) {
        let t = self.evaluated;
        self.evaluated += 1;
        match score {
            Some(s) => {
                if self.obs.is_empty() || s < self.worst {
                    self.worst = s;
                }
                self.obs.push((config, s, t));
            }
            None if rule == OnFailure::WorstSeen && !self.obs.is_empty() => {
                self.obs.push((config, self.worst, t));
            }
            None => {}
        }
    }
}

/// The open configurations to score: all, or a uniform subset of `k`.
fn candidate_list(p: &PoolView<'_>, k: usize, rng: &mut Rng) -> Vec<u32> {
    let mut all: Vec<u32> = (0..p.open.len() as u32)
        .filter(|&c| p.open[c as usize])
        .collect();
    if k > 0 && k < all.len() {
        for i in 0..k {
            let j = i + rng.below(all.len() - i);
            all.swap(i, j);
        }
        all.truncate(k);
        all.sort_unstable();
    }
    all
}

// ---------------------------------------------------------------------------------------------
// Ex-Def

pub fn family_ex_def() -> Family {
    Family {
        name: "ex-def",
        summary: "evaluate every learner at its default hyper-parameters and keep the best (then stop)",
        source: "Thornton, Hutter, Hoos & Leyton-Brown 2013, 'Auto-WEKA: Combined Selection and Hyperparameter Optimization of Classification Algorithms', KDD, §5 (Ex-Def)",
        worlds: WORLDS,
        params: vec![],
        build: |_: &Params, _| Box::new(Evaluator::new(ExDef { next: 0 })),
    }
}

pub struct ExDef {
    next: usize,
}

impl Proposer for ExDef {
    fn propose(&mut self, p: &PoolView<'_>, _rng: &mut Rng) -> Result<Proposal> {
        if p.defaults.iter().all(Option::is_none) {
            bail!(
                "ex-def needs each learner's default configuration, and this pool records none on this task (record them with scripts/record/record_defaults.py)"
            );
        }
        let defaults: Vec<u32> = p.defaults.iter().flatten().copied().collect();
        Ok(walk(&defaults, &mut self.next, |_| true))
    }

    fn tell(&mut self, _config: u32, _score: Option<f64>) {}
}

/// The next configuration of `list` from position `next` that `ok` accepts, or Stop at its end.
fn walk(list: &[u32], next: &mut usize, ok: impl Fn(u32) -> bool) -> Proposal {
    while *next < list.len() {
        let c = list[*next];
        *next += 1;
        if ok(c) {
            return Proposal::Choose(c);
        }
    }
    Proposal::Stop
}

// ---------------------------------------------------------------------------------------------
// Grid search

pub fn family_grid_search() -> Family {
    Family {
        name: "grid-search",
        summary: "evaluate the pool's grid configuration by configuration in a fixed order (then stop)",
        source: "Thornton, Hutter, Hoos & Leyton-Brown 2013, 'Auto-WEKA', KDD, §5 (grid search over every learner's grid)",
        worlds: WORLDS,
        params: vec![choice(
            "order",
            &["interleaved", "sequential"],
            "interleaved",
            "interleaved: the learners take turns, each walking its grid in mixed-radix order (last dimension fastest); sequential: one learner's whole grid after another's",
        )],
        build: |p: &Params, _| {
            Box::new(Evaluator::new(GridSearch {
                interleaved: p.text("order") == "interleaved",
                order: None,
                next: 0,
            }))
        },
    }
}

pub struct GridSearch {
    interleaved: bool,
    order: Option<Vec<u32>>,
    next: usize,
}

impl Proposer for GridSearch {
    fn propose(&mut self, p: &PoolView<'_>, _rng: &mut Rng) -> Result<Proposal> {
        if self.order.is_none() {
            let s = p.space;
            if s.learners
                .iter()
                .flatten()
                .any(|d| matches!(d.scale, Scale::Numeric { .. }))
            {
                bail!(
                    "grid-search needs a grid pool (ordinal and categorical dimensions, such as traces/sklearn-grid); this pool's configurations are random draws from continuous ranges"
                );
            }
            let mut rank = vec![0usize; s.learners.len()];
            let mut keyed: Vec<((usize, usize), u32)> = Vec::new();
            for c in 0..s.len() {
                let l = s.learner(c);
                let r = rank[l];
                rank[l] += 1;
                if p.open[c] {
                    keyed.push((if self.interleaved { (r, l) } else { (l, r) }, c as u32));
                }
            }
            keyed.sort_unstable();
            self.order = Some(keyed.into_iter().map(|(_, c)| c).collect());
        }
        let order = self.order.as_ref().expect("set above");
        Ok(walk(order, &mut self.next, |c| p.open[c as usize]))
    }

    fn tell(&mut self, _config: u32, _score: Option<f64>) {}
}

// ---------------------------------------------------------------------------------------------
// TPE

pub fn family_tpe() -> Family {
    Family {
        name: "tpe",
        summary: "tree-structured Parzen estimator: rank open configurations by l(x)/g(x), the densities of the best γ and the rest",
        source: "Bergstra, Bardenet, Bengio & Kégl 2011, 'Algorithms for Hyper-Parameter Optimization', NeurIPS, §4 (Eq. 2-3, §4.1); γ = 0.15 as in Thornton et al. 2013 (Auto-WEKA); bandwidths, priors, forgetting and the sqrt split as hyperopt 0.3 codes them (tpe.py: adaptive_parzen_normal, ap_split_trials)",
        worlds: WORLDS,
        params: vec![
            float(
                "gamma",
                1e-6,
                1.0,
                0.15,
                "γ: the fraction of observations whose density is l(x) (Auto-WEKA: 0.15)",
            ),
            choice(
                "split",
                &["quantile", "hyperopt"],
                "quantile",
                "how many observations are 'good': quantile, ⌈γ n⌉ (the paper's y* at quantile γ); hyperopt, min(⌈γ √n⌉, 25) (the code Auto-WEKA ran)",
            ),
            int(
                "n_startup",
                0,
                1_000_000,
                20,
                "random configurations before the model is used (hyperopt's n_startup_jobs, 20)",
            ),
            float(
                "prior_weight",
                0.0,
                1e6,
                1.0,
                "weight of the prior kernel (numeric: centred on the range, σ = the range) and of the uniform prior (categorical), as hyperopt",
            ),
            int(
                "forgetting",
                0,
                1_000_000,
                25,
                "hyperopt's linear forgetting: beyond this many observations in a group, older ones weigh linearly less (0: all weigh the same)",
            ),
            candidates_param(),
            on_failure_param("skip"),
        ],
        build: |p: &Params, _| {
            Box::new(Evaluator::new(Tpe {
                gamma: p.float("gamma"),
                hyperopt_split: p.text("split") == "hyperopt",
                n_startup: p.int("n_startup") as usize,
                prior_weight: p.float("prior_weight"),
                forgetting: p.int("forgetting") as usize,
                candidates: p.int("candidates") as usize,
                on_failure: on_failure(p),
                hist: History::default(),
                cache: TpeCache::default(),
            }))
        },
    }
}

/// Per learner, the observations (indices into the history) below and above the split at the
/// last decision, and per configuration its cached Σ_d log l_d − log g_d over its learner's
/// dimensions: a learner's candidates are re-scored only when its groups change.
#[derive(Clone, Debug, Default)]
struct TpeCache {
    groups: Vec<Option<(Vec<usize>, Vec<usize>)>>,
    score: Vec<f64>,
}

pub struct Tpe {
    gamma: f64,
    hyperopt_split: bool,
    n_startup: usize,
    prior_weight: f64,
    forgetting: usize,
    candidates: usize,
    on_failure: OnFailure,
    hist: History,
    cache: TpeCache,
}

/// A mixture of truncated Gaussians on [0, 1]: per kernel its centre, 1/(2σ²) and its weight
/// over σ √(2π) Z (Z: the kernel's mass inside [0, 1]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parzen {
    pub mu: Vec<f64>,
    pub sigma: Vec<f64>,
    pub weight: Vec<f64>,
    a: Vec<f64>,
    c: Vec<f64>,
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
fn forgetting_weights(n: usize, lf: usize) -> Vec<f64> {
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
    /// or of the learner itself (`None`); weights by hyperopt's linear forgetting.
    fn values(&self, p: &PoolView<'_>, members: &[usize], d: Option<usize>) -> Vec<(f64, f64)> {
        let w = forgetting_weights(members.len(), self.forgetting);
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
                self.values(p, below, Some(k)),
                self.values(p, above, Some(k)),
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
        let (below, above) = self.split();
        let nl = p.space.learners.len();
        // The root: which learner.
        let (rb, ra) = (
            categorical_posterior(nl, &self.values(p, &below, None), self.prior_weight),
            categorical_posterior(nl, &self.values(p, &above, None), self.prior_weight),
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
            if keep && self.cache.groups[l].as_ref() == Some(&groups) {
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
            self.cache.groups[l] = keep.then_some(groups);
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

    fn tell(&mut self, config: u32, score: Option<f64>) {
        self.hist.add(config, score, self.on_failure);
    }
}

// ---------------------------------------------------------------------------------------------
// SMAC-style random forest + expected improvement

pub fn family_smac() -> Family {
    Family {
        name: "smac",
        summary: "random forest over the joint space, expected improvement over the open configurations, every second configuration random",
        source: "Hutter, Hoos & Leyton-Brown 2011, 'Sequential Model-Based Optimization for General Algorithm Configuration', LION 5, §4.1 (EI), §4.2 (interleaved random configurations), §4.3 (random forest, mean and variance over trees); as Auto-WEKA ran it (Thornton et al. 2013)",
        worlds: WORLDS,
        params: vec![
            int("n_trees", 1, 10_000, 10, "trees in the forest (SMAC: 10)"),
            int(
                "min_samples_split",
                2,
                100_000,
                3,
                "a node with fewer points is a leaf (SMAC: 3)",
            ),
            int(
                "min_samples_leaf",
                1,
                100_000,
                3,
                "points each side of a split at least (SMAC3: 3)",
            ),
            float(
                "max_features",
                0.0,
                1.0,
                5.0 / 6.0,
                "fraction of the features each split considers (SMAC: 5/6)",
            ),
            int(
                "max_depth",
                1,
                1_000,
                64,
                "deepest split (SMAC3: unbounded in effect; 64 is never reached at these sizes)",
            ),
            choice(
                "variance",
                &["across-trees", "total"],
                "across-trees",
                "predictive variance: across the trees' predictions (the paper), or that plus the mean of the leaves' own variances (SMAC3/pyrfr)",
            ),
            float(
                "xi",
                0.0,
                1.0,
                0.0,
                "ξ of EI = E[max(f − f* − ξ, 0)] (SMAC3: 0)",
            ),
            int(
                "random_every",
                0,
                1_000_000,
                2,
                "after the initial design, every k-th configuration is drawn at random (2: every second, as Auto-WEKA's SMAC; 0: never)",
            ),
            choice(
                "initial",
                &["random", "defaults"],
                "random",
                "initial design: n_init random configurations, or the learners' defaults first (Auto-WEKA's initialIncumbent=DEFAULT), then random ones to n_init",
            ),
            int(
                "n_init",
                1,
                1_000_000,
                10,
                "configurations in the initial design",
            ),
            choice(
                "learner_encoding",
                &["index", "one-hot"],
                "index",
                "the learner (the CASH root) in the forest's flat encoding: its index in one column (split as a number), or one column per learner (SMAC's pyrfr splits categoricals into subsets natively; neither is exactly that)",
            ),
            float(
                "inactive",
                -1e6,
                1e6,
                -1.0,
                "value of an inactive dimension (another learner's, or a default outside the space) in the forest's flat encoding (SMAC3: −1)",
            ),
            candidates_param(),
            on_failure_param("worst-seen"),
        ],
        build: |p: &Params, _| {
            Box::new(Evaluator::new(Smac {
                n_trees: p.int("n_trees") as usize,
                min_samples_split: p.int("min_samples_split") as usize,
                min_samples_leaf: p.int("min_samples_leaf") as usize,
                max_features: p.float("max_features"),
                max_depth: p.int("max_depth") as usize,
                total_variance: p.text("variance") == "total",
                xi: p.float("xi"),
                random_every: p.int("random_every") as usize,
                defaults_first: p.text("initial") == "defaults",
                n_init: p.int("n_init") as usize,
                inactive: p.float("inactive") as f32,
                root: if p.text("learner_encoding") == "one-hot" {
                    Root::OneHot
                } else {
                    Root::Index
                },
                candidates: p.int("candidates") as usize,
                on_failure: on_failure(p),
                hist: History::default(),
                proposed: 0,
                next_default: 0,
            }))
        },
    }
}

pub struct Smac {
    n_trees: usize,
    min_samples_split: usize,
    min_samples_leaf: usize,
    max_features: f64,
    max_depth: usize,
    total_variance: bool,
    xi: f64,
    random_every: usize,
    defaults_first: bool,
    n_init: usize,
    inactive: f32,
    root: Root,
    candidates: usize,
    on_failure: OnFailure,
    hist: History,
    proposed: usize,
    next_default: usize,
}

/// Expected improvement over `best` of a Gaussian N(mean, var), maximising:
/// (μ − f* − ξ) Φ(z) + σ φ(z), z = (μ − f* − ξ)/σ; max(μ − f* − ξ, 0) when σ = 0.
pub fn expected_improvement(mean: f64, var: f64, best: f64, xi: f64) -> f64 {
    let imp = mean - best - xi;
    let s = var.max(0.0).sqrt();
    if s <= 1e-12 {
        return imp.max(0.0);
    }
    let z = imp / s;
    imp * norm_cdf(z) + s * norm_pdf(z)
}

impl Smac {
    fn params(&self, width: usize) -> ForestParams {
        ForestParams {
            n_trees: self.n_trees,
            bootstrap: true,
            min_samples_split: self.min_samples_split,
            min_samples_leaf: self.min_samples_leaf,
            max_features: ((width as f64 * self.max_features) as usize).max(1),
            max_depth: self.max_depth,
        }
    }
}

impl Proposer for Smac {
    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        let k = self.proposed;
        self.proposed += 1;
        if k < self.n_init {
            if self.defaults_first {
                while self.next_default < p.defaults.len() {
                    let l = self.next_default;
                    self.next_default += 1;
                    if let Some(c) = p.defaults[l] {
                        return Ok(Proposal::Choose(c));
                    }
                }
            }
            return Ok(Proposal::Draw);
        }
        let r = self.random_every;
        if (r > 0 && (k - self.n_init) % r == r - 1) || self.hist.obs.len() < 2 {
            return Ok(Proposal::Draw);
        }
        let s = p.space;
        let root = self.root;
        let width = s.flat_width(root);
        let lead = s.learner_columns(root);
        // Which (learner, dimension) each flat column past the learner's holds.
        let mut owner = vec![(usize::MAX, 0usize); width];
        let mut col = lead;
        for (l, dims) in s.learners.iter().enumerate() {
            for k in 0..dims.len() {
                owner[col] = (l, k);
                col += 1;
            }
        }
        let x: Vec<Vec<f32>> = self
            .hist
            .obs
            .iter()
            .map(|&(c, _, _)| {
                let mut row = vec![0.0; width];
                s.flat_into(c as usize, self.inactive, root, &mut row);
                row
            })
            .collect();
        let y: Vec<f64> = self.hist.obs.iter().map(|o| o.1).collect();
        let best = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let forest = Forest::fit(&x, &y, &self.params(width), rng);
        let cands = candidate_list(p, self.candidates, rng);
        let mut top: Option<(f64, u32)> = None;
        for &c in &cands {
            let cl = s.learner(c as usize);
            let vals = s.values(c as usize);
            let pred = forest.predict(|f| {
                if f < lead {
                    return match root {
                        Root::Index => cl as f32,
                        Root::OneHot => f32::from(u8::from(f == cl)),
                    };
                }
                let (l, k) = owner[f];
                if l == cl {
                    let v = vals[k];
                    if v.is_nan() { self.inactive } else { v }
                } else {
                    self.inactive
                }
            });
            let var = if self.total_variance {
                pred.var_total
            } else {
                pred.var_across
            };
            let ei = expected_improvement(pred.mean, var, best, self.xi);
            if top.is_none_or(|t| ei > t.0) {
                top = Some((ei, c));
            }
        }
        Ok(top.map_or(Proposal::Stop, |(_, c)| Proposal::Choose(c)))
    }

    fn tell(&mut self, config: u32, score: Option<f64>) {
        self.hist.add(config, score, self.on_failure);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_improvement_matches_the_closed_form() {
        // μ = f*: EI = σ φ(0) = σ / √(2π).
        let ei = expected_improvement(1.0, 4.0, 1.0, 0.0);
        assert!((ei - 2.0 / (2.0 * std::f64::consts::PI).sqrt()).abs() < 1e-12);
        // μ − f* = 1, σ = 1: EI = Φ(1) + φ(1) = 0.841345 + 0.241971 = 1.083315.
        assert!((expected_improvement(1.0, 1.0, 0.0, 0.0) - 1.083_315).abs() < 1e-6);
        // ξ shifts the improvement; σ = 0 gives max(μ − f* − ξ, 0).
        assert!((expected_improvement(1.0, 1.0, -0.5, 0.5) - 1.083_315).abs() < 1e-6);
        assert_eq!(expected_improvement(0.3, 0.0, 0.1, 0.0), 0.3 - 0.1);
        assert_eq!(expected_improvement(0.0, 0.0, 0.1, 0.0), 0.0);
    }

    #[test]
    fn parzen_estimator_of_a_two_point_history() {
        // Points 0.2 and 0.8 plus the prior at 0.5 (σ = 1): sorted 0.2, 0.5, 0.8; both points'
        // σ = the larger gap 0.3, inside [1/min(100, 1 + 3), 1] = [0.25, 1]. Weights 1/3 each.
        // (hyperopt 0.3's adaptive_parzen_normal gives the same weights, centres and σ.)
        let p = Parzen::new(&[(0.2, 1.0), (0.8, 1.0)], 1.0);
        assert_eq!(p.mu, vec![0.2, 0.5, 0.8]);
        assert!((p.sigma[0] - 0.3).abs() < 1e-12 && (p.sigma[2] - 0.3).abs() < 1e-12);
        assert_eq!(p.sigma[1], 1.0);
        // The density at 0.2, from the truncated normal kernels by hand:
        // at 0.2, σ 0.3: φ(0)/0.3 / (Φ(2.6667) − Φ(−0.6667)) = 1.329808 / 0.743677 = 1.788152;
        // prior: φ(0.3) / (Φ(0.5) − Φ(−0.5)) = 0.381388 / 0.382925 = 0.995986;
        // at 0.8, σ 0.3: φ(2)/0.3 / (Φ(0.6667) − Φ(−2.6667)) = 0.179970 / 0.743677 = 0.242000.
        let want = (1.788_152 + 0.995_986 + 0.242_000) / 3.0;
        assert!((p.density(0.2) - want).abs() < 1e-5, "{}", p.density(0.2));
        assert!(
            (p.density(0.3) - p.density(0.7)).abs() < 1e-12,
            "symmetric about 0.5"
        );
        // One point: its σ is half the prior's, and the prior comes after it when x ≤ 0.5.
        let q = Parzen::new(&[(0.3, 1.0)], 1.0);
        assert_eq!(
            (q.mu.clone(), q.sigma.clone()),
            (vec![0.3, 0.5], vec![0.5, 1.0])
        );
        assert_eq!(q.weight, vec![0.5, 0.5]);
    }

    #[test]
    fn categorical_posterior_adds_the_prior_pseudo_count() {
        // Two observations of level 1 among 4 levels, prior weight 1: (1, 3, 1, 1) / 6.
        let p = categorical_posterior(4, &[(1.0, 1.0), (1.0, 1.0)], 1.0);
        assert!((p[1] - 0.5).abs() < 1e-12 && (p[0] - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn splits_and_forgetting_follow_the_named_rules() {
        let t = |hyperopt| Tpe {
            gamma: 0.15,
            hyperopt_split: hyperopt,
            n_startup: 0,
            prior_weight: 1.0,
            forgetting: 25,
            candidates: 0,
            on_failure: OnFailure::Skip,
            hist: History::default(),
            cache: TpeCache::default(),
        };
        assert_eq!(t(false).n_below(200), 30);
        assert_eq!(t(true).n_below(200), 3); // ⌈0.15 √200⌉ = ⌈2.12⌉
        assert_eq!(t(true).n_below(1_000_000), 25);
        assert_eq!(t(false).n_below(1), 1);
        assert_eq!(forgetting_weights(3, 25), vec![1.0; 3]);
        let w = forgetting_weights(27, 25);
        assert_eq!(w.len(), 27);
        assert!((w[0] - 1.0 / 27.0).abs() < 1e-12 && w[1] == 1.0 && w[26] == 1.0);
    }

    use crate::policy::testing;
    use crate::replay::pool::tests::hand_pool;
    use crate::replay::pool::{ActionKind, PoolStep, PoolWorld, PoolWorldConfig, drive_pool};
    use crate::trace::pool::Pool;

    /// Drive `family` with `params` on `pool` (task 0) with a budget of `budget` units.
    fn run(
        pool: &Pool,
        family: &str,
        params: &[(&str, toml::Value)],
        budget: f64,
    ) -> Vec<PoolStep> {
        let mut w = PoolWorld::new(
            pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            budget,
            1.0,
            5,
        );
        let mut p = testing::build(family, params, 0);
        let mut steps = Vec::new();
        drive_pool(
            &mut w,
            p.as_mut(),
            family,
            &mut Rng::new(3),
            Some(&mut steps),
        )
        .unwrap();
        steps
    }

    /// The kinds of action `family` takes on `pool` (see `run`).
    fn kinds(
        pool: &Pool,
        family: &str,
        params: &[(&str, toml::Value)],
        budget: f64,
    ) -> Vec<&'static str> {
        run(pool, family, params, budget)
            .iter()
            .map(|s| s.action.as_str())
            .collect()
    }

    /// The error `family` stops with on `pool` (task 0).
    fn run_err(pool: &Pool, family: &str) -> String {
        let mut w = PoolWorld::new(
            pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            5.0,
            1.0,
            1,
        );
        let mut p = testing::build(family, &[], 0);
        let e = drive_pool(&mut w, p.as_mut(), family, &mut Rng::new(1), None).unwrap_err();
        format!("{e:#}")
    }

    fn tpe(n_startup: usize) -> Tpe {
        Tpe {
            gamma: 0.15,
            hyperopt_split: false,
            n_startup,
            prior_weight: 1.0,
            forgetting: 25,
            candidates: 0,
            on_failure: OnFailure::Skip,
            hist: History::default(),
            cache: TpeCache::default(),
        }
    }

    #[test]
    fn tpe_chooses_the_best_ratio_of_a_two_point_history() {
        // One ordinal dimension of 11 levels: configuration i sits at x = i / 10. History:
        // x = 0.2 scored 0.9 (the good group: ⌈0.15 × 2⌉ = 1) and x = 0.8 scored 0.1. So
        // l = Parzen{0.2 (σ 0.5), prior} and g = Parzen{prior, 0.8 (σ 0.5)}, mirror images about
        // 0.5: l/g falls with x, and the best open configuration is x = 0, configuration 0.
        let pool = hand_pool(11, 1, |i| vec![i as f32 / 10.0]);
        let mut w = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            100.0,
            1.0,
            1,
        );
        w.apply(Action::Choose(2)).unwrap();
        w.apply(Action::Choose(8)).unwrap();
        let mut t = tpe(2);
        t.tell(2, Some(0.9));
        t.tell(8, Some(0.1));
        let v = w.view();
        let p = v.pool.unwrap();
        assert_eq!(
            t.propose(&p, &mut Rng::new(1)).unwrap(),
            Proposal::Choose(0)
        );
        // The same by the densities themselves: the ratio at x = 0 beats every other open x.
        let (l, g) = (
            Parzen::new(&[(0.2, 1.0)], 1.0),
            Parzen::new(&[(0.8, 1.0)], 1.0),
        );
        let ratio = |x: f64| l.density(x) / g.density(x);
        for i in [1, 3, 4, 5, 6, 7, 9, 10] {
            assert!(ratio(0.0) > ratio(i as f64 / 10.0));
        }
        // Below n_startup, TPE draws at random.
        assert_eq!(
            tpe(3).propose(&p, &mut Rng::new(1)).unwrap(),
            Proposal::Draw
        );
    }

    #[test]
    fn tpe_and_smac_find_the_top_of_a_monotone_pool() {
        // Score = x: after their random start, both models pick high configurations.
        let pool = hand_pool(200, 1, |i| vec![i as f32 / 200.0]);
        let one_hot = [("learner_encoding", toml::Value::from("one-hot"))];
        for (family, params, n0) in [
            ("tpe", &[][..], 20),
            ("smac", &[][..], 10),
            ("smac", &one_hot[..], 10),
        ] {
            let steps = run(&pool, family, params, 60.0);
            assert_eq!(steps.len(), 60);
            let model: Vec<u32> = steps[n0..]
                .iter()
                .filter(|s| s.action == ActionKind::Choose)
                .map(|s| s.config)
                .collect();
            assert!(model.len() >= 20, "{family}: {} model choices", model.len());
            let high = model.iter().filter(|&&c| c >= 150).count();
            assert!(
                high * 4 >= model.len() * 3,
                "{family}: {high} of {} in the top quarter: {model:?}",
                model.len()
            );
        }
    }

    #[test]
    fn smac_interleaves_random_configurations() {
        let pool = hand_pool(40, 1, |i| vec![i as f32 / 40.0]);
        let smac = |params: &[(&str, toml::Value)], budget| kinds(&pool, "smac", params, budget);
        assert_eq!(
            smac(&[("n_init", 3.into()), ("random_every", 2.into())], 9.0),
            [
                "draw", "draw", "draw", "choose", "draw", "choose", "draw", "choose", "draw"
            ]
        );
        assert_eq!(
            smac(&[("n_init", 2.into()), ("random_every", 0.into())], 5.0),
            ["draw", "draw", "choose", "choose", "choose"]
        );
    }

    #[test]
    fn a_full_fidelity_evaluation_trains_the_whole_curve_before_the_next() {
        // 3 units per curve: choose, pull, pull, then the next configuration.
        let pool = hand_pool(30, 3, |i| vec![0.1, 0.2, i as f32 / 30.0]);
        assert_eq!(
            kinds(
                &pool,
                "smac",
                &[("n_init", 2.into()), ("random_every", 0.into())],
                9.0
            ),
            [
                "draw", "pull", "pull", "draw", "pull", "pull", "choose", "pull", "pull"
            ],
            "the forest learns from the last unit's score of each whole curve"
        );
    }

    #[test]
    fn ex_def_evaluates_the_defaults_and_stops() {
        let mut pool = hand_pool(10, 1, |i| vec![i as f32 / 10.0]);
        pool.defaults = vec![Some(4)];
        let steps = run(&pool, "ex-def", &[], 5.0);
        assert_eq!(steps.len(), 1);
        assert_eq!((steps[0].action, steps[0].config), (ActionKind::Choose, 4));
        // A random draw never gives the default.
        for seed in 0..20 {
            let mut w = PoolWorld::new(
                &pool,
                &pool.tasks[0],
                PoolWorldConfig::default(),
                20.0,
                1.0,
                seed,
            );
            let mut drawn = Vec::new();
            while w.view().pool.unwrap().n_open > 0 {
                let a = w.apply(Action::Draw).unwrap().arm;
                drawn.push(w.arm_configs()[a]);
            }
            assert_eq!(drawn.len(), 9);
            assert!(!drawn.contains(&4));
        }
        // Without recorded defaults Ex-Def says so.
        let bare = hand_pool(10, 1, |i| vec![i as f32 / 10.0]);
        let e = run_err(&bare, "ex-def");
        assert!(e.contains("default configuration"), "{e}");
    }

    #[test]
    fn grid_search_walks_the_grid_then_stops() {
        let pool = hand_pool(5, 1, |i| vec![i as f32 / 10.0]);
        let steps = run(&pool, "grid-search", &[], 50.0);
        let configs: Vec<u32> = steps.iter().map(|s| s.config).collect();
        assert_eq!(configs, [0, 1, 2, 3, 4]);
        // A pool of random draws from continuous ranges has no grid.
        let mut cont = hand_pool(5, 1, |i| vec![i as f32 / 10.0]);
        cont.space.learners[0][0].scale = Scale::Numeric {
            log: false,
            lo: 0.0,
            hi: 1.0,
        };
        let e = run_err(&cont, "grid-search");
        assert!(e.contains("needs a grid pool"), "{e}");
    }
}
