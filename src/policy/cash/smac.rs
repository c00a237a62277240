//! SMAC (Hutter, Hoos & Leyton-Brown 2011): random-forest model, expected improvement, and
//! interleaved random configurations, as Auto-WEKA ran it.

use super::forest::{Forest, ForestParams};
use super::{
    Evaluator, History, Liar, OnFailure, ParamDef, Proposal, Proposer, WORLDS, candidate_list,
    candidates_param, liar, liar_param, on_failure, on_failure_param,
};
use crate::normal::{norm_cdf, norm_pdf};
use crate::policy::{Family, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use crate::space::Root;
use anyhow::Result;

// ---------------------------------------------------------------------------------------------
// SMAC-style random forest + expected improvement

pub fn family_smac() -> Family {
    Family {
        name: "smac",
        summary: "random forest over the joint space, expected improvement over the open configurations, every second configuration random",
        source: "Hutter, Hoos & Leyton-Brown 2011, 'Sequential Model-Based Optimization for General Algorithm Configuration', LION 5, §4.1 (EI), §4.2 (interleaved random configurations), §4.3 (random forest, mean and variance over trees); as Auto-WEKA ran it (Thornton et al. 2013)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::int("n_trees", 1, 10_000, 10, "trees in the forest (SMAC: 10)"),
            ParamDef::int(
                "min_samples_split",
                2,
                100_000,
                3,
                "a node with fewer points is a leaf (SMAC: 3)",
            ),
            ParamDef::int(
                "min_samples_leaf",
                1,
                100_000,
                3,
                "points each side of a split at least (SMAC3: 3)",
            ),
            ParamDef::float(
                "max_features",
                0.0,
                1.0,
                5.0 / 6.0,
                "fraction of the features each split considers (SMAC: 5/6)",
            ),
            ParamDef::int(
                "max_depth",
                1,
                1_000,
                64,
                "deepest split (SMAC3: unbounded in effect; 64 is never reached at these sizes)",
            ),
            ParamDef::choice(
                "variance",
                &["across-trees", "total"],
                "across-trees",
                "predictive variance: across the trees' predictions (the paper), or that plus the mean of the leaves' own variances (SMAC3/pyrfr)",
            ),
            ParamDef::float(
                "xi",
                0.0,
                1.0,
                0.0,
                "ξ of EI = E[max(f − f* − ξ, 0)] (SMAC3: 0)",
            ),
            ParamDef::int(
                "random_every",
                0,
                1_000_000,
                2,
                "after the initial design, every k-th configuration is drawn at random (2: every second, as Auto-WEKA's SMAC; 0: never)",
            ),
            ParamDef::choice(
                "initial",
                &["random", "defaults"],
                "random",
                "initial design: n_init random configurations, or the learners' defaults first (Auto-WEKA's initialIncumbent=DEFAULT), then random ones to n_init",
            ),
            ParamDef::int(
                "n_init",
                1,
                1_000_000,
                10,
                "configurations in the initial design",
            ),
            ParamDef::choice(
                "learner_encoding",
                &["index", "one-hot"],
                "index",
                "the learner (the CASH root) in the forest's flat encoding: its index in one column (split as a number), or one column per learner (SMAC's pyrfr splits categoricals into subsets natively; neither is exactly that)",
            ),
            ParamDef::float(
                "inactive",
                -1e6,
                1e6,
                -1.0,
                "value of an inactive dimension (another learner's, or a default outside the space) in the forest's flat encoding (SMAC3: −1)",
            ),
            candidates_param(),
            on_failure_param("worst-seen"),
            liar_param(),
        ],
        build: |p: &Params, _| Box::new(Evaluator::new(smac_of(p))),
    }
}

/// SMAC with the family's parameters `p`.
pub(super) fn smac_of(p: &Params) -> Smac {
    Smac {
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
        liar: liar(p),
        hist: History::default(),
        running: Vec::new(),
        proposed: 0,
        next_default: 0,
    }
}

pub struct Smac {
    pub(super) n_trees: usize,
    pub(super) min_samples_split: usize,
    pub(super) min_samples_leaf: usize,
    pub(super) max_features: f64,
    pub(super) max_depth: usize,
    pub(super) total_variance: bool,
    pub(super) xi: f64,
    pub(super) random_every: usize,
    pub(super) defaults_first: bool,
    pub(super) n_init: usize,
    pub(super) inactive: f32,
    pub(super) root: Root,
    pub(super) candidates: usize,
    pub(super) on_failure: OnFailure,
    pub(super) liar: Liar,
    pub(super) hist: History,
    /// Configurations running on other workers at the next proposal.
    pub(super) running: Vec<u32>,
    pub(super) proposed: usize,
    pub(super) next_default: usize,
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
        // The constant liar: fit the forest with the running configurations added.
        let lied = self.hist.with_lies(&self.running, self.liar);
        let hist = lied.as_ref().unwrap_or(&self.hist);
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
        let x: Vec<Vec<f32>> = hist
            .obs
            .iter()
            .map(|&(c, _, _)| {
                let mut row = vec![0.0; width];
                s.flat_into(c as usize, self.inactive, root, &mut row);
                row
            })
            .collect();
        let y: Vec<f64> = hist.obs.iter().map(|o| o.1).collect();
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

    fn tell(&mut self, config: u32, _budget: u32, score: Option<f64>) {
        self.hist.add(config, score, self.on_failure);
    }

    fn pending(&mut self, configs: &[u32]) {
        self.running.clear();
        self.running.extend_from_slice(configs);
    }
}
