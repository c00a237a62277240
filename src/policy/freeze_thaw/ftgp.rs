//! `ftgp`: a freeze-thaw GP with multi-fidelity EI, ifBO's `mf_ei_bo` baseline (Rakotoarison,
//! Adriaensen, Mallik, Garibov, Bergman & Hutter 2024, "In-Context Freeze-Thaw Bayesian
//! Optimization for Hyperparameter Optimization", ICML, §5 baselines; automl/ifBO branch
//! `icml-2024`: `pfns_hpo/configs/algorithm/mf_ei_bo.yaml`, NePS's `multi_fidelity/dyhpo.py`
//! `MFEIBO` with `surrogate_model: gp`, `acquisition: MFEI`, `acquisition_sampler:
//! freeze-thaw`; read, not copied).
//!
//! The surrogate (`gp.rs`) is a GP on a configuration's numeric dimensions and its budget, with
//! categorical dimensions in a Hamming kernel, fitted afresh (`iters` Adam steps) on every
//! (configuration, unit, score) seen before each decision that follows new observations. Unlike
//! DyHPO it does not see the partial curve. The acquisition is DyHPO's multi-fidelity EI, as
//! NePS's `MFEI`: every configuration not yet trained (the whole table: NePS samples "the full
//! tabular" space; `new_configs` > 0 scores that many of them drawn at random at each decision,
//! NePS's `samples_to_draw`) at its first unit, every paused arm at its next unit, each against the best
//! score seen at that unit (or, when none reached it, the best seen). The pick trains one unit;
//! equal values are broken at random (NePS takes the last of pandas' unstable sort, an arbitrary
//! one; the first would repeat the same configurations in every repetition whenever the
//! lengthscales reach their lower bound and every new configuration is predicted alike).
//! The first `initial` observations come from configurations drawn at random (`mf_ei_bo`'s
//! `initial_design_size: 3`; NePS counts finished observations, so with several workers every
//! free worker draws until that many have finished).
//!
//! The score modelled is the pool's reward (higher is better; NePS minimises the loss, and EI is
//! the same after the sign change), standardised by the GP. Numeric features are the pool's
//! encoding (`space.rs`: min-max scaled, log where the pool's dimension is log-scaled, 0 when
//! inactive); the budget is (unit − 1)/(units − 1), min-max as NePS scales its fidelity;
//! categorical dimensions and, when the pool has several learners, the learner enter the Hamming
//! kernel (−1 when inactive). The GP's cost is cubic in its points and NePS conditions on all of
//! them; `max_points` (0 = all) fits and conditions on a random subset drawn afresh at each fit,
//! as Syne Tune's GP searchers do beyond their `max_num_observations`. Named rules for bad
//! cases: a failed unit ends its configuration's curve and `failed` keeps or forgets its earlier
//! units; a fit whose Cholesky factor fails even at 100 × σ² (NePS would raise) is counted in
//! `failed_fits` and the decision promotes a paused arm at random (NePS's `_randomly_promote`,
//! its path when the model update failed), or draws when none is paused.

use super::gp::{Fitted, Inputs};
use super::{
    Acquisition, Candidate, Curves, Driven, FreezeThaw, candidates, draw_or_idle, failed_param,
    idle,
};
use crate::policy::{Action, Family, ParamDef, Params};
use crate::protocol::{Observation, PoolView, View, WorldKind};
use crate::rng::Rng;
use anyhow::Result;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];
const SOURCE: &str = "Rakotoarison et al. 2024, 'In-Context Freeze-Thaw Bayesian Optimization for Hyperparameter Optimization', ICML, the mf_ei_bo baseline: automl/ifBO icml-2024 pfns_hpo/configs/algorithm/mf_ei_bo.yaml and NePS's MFEIBO with its ComprehensiveGP (kernels, fit, posterior) and MFEI (DyHPO's multi-fidelity EI)";

pub fn family() -> Family {
    Family {
        name: "ftgp",
        summary: "a freeze-thaw GP on (configuration, budget) with multi-fidelity EI one unit ahead (ifBO's mf_ei_bo baseline)",
        source: SOURCE,
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::int(
                "initial",
                1,
                1_000_000,
                3,
                "observations from configurations drawn at random before the GP decides (mf_ei_bo's initial_design_size)",
            ),
            ParamDef::int(
                "iters",
                0,
                100_000,
                20,
                "Adam steps of a fit (NePS's ComprehensiveGP iters)",
            ),
            ParamDef::float(
                "lr",
                1e-9,
                10.0,
                0.1,
                "Adam's learning rate (NePS's optimizer_kwargs lr)",
            ),
            ParamDef::float(
                "noise",
                1e-5,
                1.0,
                1e-3,
                "the noise variance a fit starts from, on standardised scores (NePS's likelihood)",
            ),
            ParamDef::float(
                "noise_max",
                1e-5,
                10.0,
                0.01,
                "the highest noise variance a fit may reach (NePS's max_lik)",
            ),
            ParamDef::int(
                "max_points",
                0,
                1_000_000,
                0,
                "observations the GP is fitted and conditioned on: 0 = all (NePS's); else a random subset of this many, drawn afresh at each fit, which bounds the cubic cost of a long run",
            ),
            ParamDef::int(
                "new_configs",
                0,
                1_000_000,
                0,
                "configurations not yet started that a decision scores beside the paused ones: 0 = every open one (NePS's tabular sampler, sample_full_table); else this many drawn at random without replacement at each decision (NePS's samples_to_draw, 100 in its FreezeThawSampler), which bounds a decision's cost on a large pool",
            ),
            failed_param(
                "a configuration whose unit failed: its earlier units stay training data, or are forgotten",
            ),
        ],
        build: |p: &Params, _| Box::new(Driven(Ftgp::new(Config::from(p)))),
    }
}

#[derive(Clone, Debug)]
struct Config {
    initial: u64,
    iters: usize,
    lr: f64,
    noise: f64,
    noise_max: f64,
    max_points: usize,
    new_configs: usize,
    forget_failed: bool,
}

impl From<&Params> for Config {
    fn from(p: &Params) -> Self {
        Config {
            initial: p.int("initial") as u64,
            iters: p.int("iters") as usize,
            lr: p.float("lr"),
            noise: p.float("noise"),
            noise_max: p.float("noise_max").max(p.float("noise")),
            max_points: p.int("max_points") as usize,
            new_configs: p.int("new_configs") as usize,
            forget_failed: p.text("failed") == "forget",
        }
    }
}

/// Points for the GP: numeric columns with the budget last, categorical columns.
#[derive(Default, Clone)]
struct Rows {
    cont: Vec<f64>,
    cat: Vec<f64>,
    n: usize,
}

impl Rows {
    fn clear(&mut self) {
        self.cont.clear();
        self.cat.clear();
        self.n = 0;
    }

    fn inputs(&self, dc: usize, dk: usize) -> Inputs<'_> {
        Inputs {
            n: self.n,
            cont: &self.cont,
            dc,
            cat: &self.cat,
            dk,
        }
    }
}

/// Per configuration: its numeric features (`dc − 1` columns, the budget comes last) and its
/// categorical ones (`dk`).
#[derive(Default)]
struct Features {
    cont: Vec<f64>,
    dc: usize,
    cat: Vec<f64>,
    dk: usize,
}

impl Features {
    fn of(space: &crate::space::Space) -> Self {
        let several = space.learners.len() > 1;
        let numeric = |l: &Vec<crate::space::SpaceDim>| {
            l.iter().filter(|d| !d.scale.is_categorical()).count()
        };
        let categorical =
            |l: &Vec<crate::space::SpaceDim>| l.iter().filter(|d| d.scale.is_categorical()).count();
        let nc: usize = space.learners.iter().map(numeric).sum();
        let nk: usize =
            space.learners.iter().map(categorical).sum::<usize>() + usize::from(several);
        let mut f = Features {
            cont: vec![0.0; space.len() * nc],
            dc: nc + 1,
            cat: vec![-1.0; space.len() * nk],
            dk: nk,
        };
        // Each learner's columns start after the earlier learners'.
        let mut starts = Vec::new();
        let (mut oc, mut ok) = (0, usize::from(several));
        for l in &space.learners {
            starts.push((oc, ok));
            oc += numeric(l);
            ok += categorical(l);
        }
        for c in 0..space.len() {
            let l = space.learner(c);
            let (mut ic, mut ik) = starts[l];
            if several {
                f.cat[c * nk] = l as f64;
            }
            for (dim, &v) in space.learners[l].iter().zip(space.values(c)) {
                if dim.scale.is_categorical() {
                    if !v.is_nan() {
                        f.cat[c * nk + ik] = f64::from(v);
                    }
                    ik += 1;
                } else {
                    if !v.is_nan() {
                        f.cont[c * nc + ic] = f64::from(v);
                    }
                    ic += 1;
                }
            }
        }
        f
    }

    /// Append configuration `c` at `budget` to `rows`.
    fn push(&self, rows: &mut Rows, c: usize, budget: f64) {
        let nc = self.dc - 1;
        rows.cont
            .extend_from_slice(&self.cont[c * nc..(c + 1) * nc]);
        rows.cont.push(budget);
        rows.cat
            .extend_from_slice(&self.cat[c * self.dk..(c + 1) * self.dk]);
        rows.n += 1;
    }
}

pub struct Ftgp {
    cfg: Config,
    units: u32,
    seed: u64,
    feats: Features,
    arm_config: Vec<u32>,
    seen: Curves,
    observed: u64,
    fitted: Option<Fitted>,
    fits: u64,
    failed_fits: u64,
    fits_untaken: u64,
    fit_due: bool,
    train: Rows,
    y: Vec<f64>,
    test: Rows,
}

impl Ftgp {
    fn new(cfg: Config) -> Self {
        Ftgp {
            cfg,
            units: 0,
            seed: 0,
            feats: Features::default(),
            arm_config: Vec::new(),
            seen: Curves::default(),
            observed: 0,
            fitted: None,
            fits: 0,
            failed_fits: 0,
            fits_untaken: 0,
            fit_due: false,
            train: Rows::default(),
            y: Vec::new(),
            test: Rows::default(),
        }
    }

    /// The budget of unit `u` (1-based), min-max scaled over the curve's units.
    fn budget(&self, u: usize) -> f64 {
        if self.units > 1 {
            (u - 1) as f64 / f64::from(self.units - 1)
        } else {
            1.0
        }
    }

    /// The training set: every (configuration, unit, score) seen, or `max_points` of them.
    fn dataset(&mut self) {
        let points = self.seen.points(
            self.cfg.max_points,
            self.seed,
            &format!("ftgp-subset-{}", self.fits),
        );
        let mut rows = std::mem::take(&mut self.train);
        rows.clear();
        self.y.clear();
        for (arm, u) in points {
            let c = self.arm_config[arm] as usize;
            self.feats.push(&mut rows, c, self.budget(u + 1));
            self.y.push(self.seen.curves[arm][u]);
        }
        self.train = rows;
    }

    fn fit(&mut self) {
        self.fits += 1;
        self.fits_untaken += 1;
        self.dataset();
        let x = self.train.inputs(self.feats.dc, self.feats.dk);
        self.fitted = super::gp::fit(
            &x,
            &self.y,
            self.cfg.iters,
            self.cfg.lr,
            self.cfg.noise,
            self.cfg.noise_max,
        )
        .ok();
        if self.fitted.is_none() {
            self.failed_fits += 1;
        }
    }

    /// The candidate the GP's multi-fidelity EI picks, by index, ties broken at random; None
    /// when the fit failed or every value is NaN.
    fn pick(&mut self, rows: &[(usize, Option<usize>)], rng: &mut Rng) -> Option<usize> {
        let fitted = self.fitted.as_ref()?;
        let mut test = std::mem::take(&mut self.test);
        test.clear();
        let mut next_unit = Vec::with_capacity(rows.len());
        for &(c, arm) in rows {
            let done = arm.map_or(0, |a| self.seen.curves.get(a).map_or(0, Vec::len));
            next_unit.push(done + 1);
            self.feats.push(&mut test, c, self.budget(done + 1));
        }
        let (mut mean, mut std) = (Vec::new(), Vec::new());
        fitted.predict(
            &self.train.inputs(self.feats.dc, self.feats.dk),
            &test.inputs(self.feats.dc, self.feats.dk),
            &mut mean,
            &mut std,
        );
        self.test = test;
        let best = super::best_by_unit(&self.seen.curves, &self.seen.forgotten, self.units);
        let values = super::acquisition_values(Acquisition::Ei, &mean, &std, &next_unit, &best);
        let top = values
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .fold(f64::NAN, f64::max);
        let ties: Vec<usize> = (0..values.len()).filter(|&i| values[i] == top).collect();
        (!ties.is_empty()).then(|| ties[rng.below(ties.len())])
    }
}

/// Keep every paused arm and, when `keep` > 0 and more configurations are open, `keep` of them
/// drawn at random without replacement (NePS's `samples_to_draw` on a table); the order stays
/// the configurations'.
fn subsample_new(cands: &mut Vec<(usize, Candidate)>, keep: usize, rng: &mut Rng) {
    let open: Vec<usize> = (0..cands.len())
        .filter(|&i| matches!(cands[i].1, Candidate::Config(_)))
        .collect();
    if keep == 0 || open.len() <= keep {
        return;
    }
    let mut order = open;
    rng.shuffle(&mut order);
    let mut drop = vec![false; cands.len()];
    for &i in &order[keep..] {
        drop[i] = true;
    }
    let mut i = 0;
    cands.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
}

impl FreezeThaw for Ftgp {
    const FAMILY: &'static str = "ftgp";

    fn cell(&mut self) -> (&mut u32, &mut u64) {
        (&mut self.units, &mut self.seed)
    }

    fn decide(&mut self, pool: &PoolView<'_>, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        if self.feats.dc == 0 {
            self.feats = Features::of(pool.space);
        }
        self.arm_config.clear();
        self.arm_config.extend_from_slice(pool.config);
        if self.observed < self.cfg.initial {
            return Ok(draw_or_idle(pool, view));
        }
        if self.fit_due {
            self.fit_due = false;
            self.fit();
        }
        let mut cands = candidates(pool, view);
        subsample_new(&mut cands, self.cfg.new_configs, rng);
        if cands.is_empty() {
            return Ok(idle(view));
        }
        let rows: Vec<(usize, Option<usize>)> =
            cands.iter().map(|&(c, cand)| (c, cand.arm())).collect();
        if let Some(top) = self.pick(&rows, rng) {
            return Ok(cands[top].1.action());
        }
        // NePS's `_randomly_promote`: a paused arm at random, else a draw.
        let arms: Vec<usize> = cands.iter().filter_map(|&(_, cand)| cand.arm()).collect();
        Ok(if arms.is_empty() {
            cands[rng.below(cands.len())].1.action()
        } else {
            Action::Pull(arms[rng.below(arms.len())])
        })
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        let pushed = self.seen.record(obs, self.cfg.forget_failed);
        self.observed += pushed.len() as u64;
        if !pushed.is_empty() {
            self.fit_due = true;
        }
    }

    fn untaken(&mut self) -> &mut u64 {
        &mut self.fits_untaken
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!({
            "fits": self.fits,
            "failed_fits": self.failed_fits,
        })
    }
}

/// One decision taken apart, for `bench --only freeze-thaw`: the policy after `history`
/// (configurations and their recorded losses unit by unit) at its default parameters.
pub struct Probe {
    f: Ftgp,
    rows: Vec<(usize, Option<usize>)>,
    rng: Rng,
}

impl Probe {
    pub fn new(
        space: &crate::space::Space,
        units: u32,
        history: &[(u32, Vec<f32>)],
        seed: u64,
    ) -> Self {
        let p = crate::policy::default_params("ftgp");
        let mut f = Ftgp::new(Config::from(&p));
        f.units = units;
        f.seed = seed;
        f.feats = Features::of(space);
        for (c, curve) in history {
            f.arm_config.push(*c);
            // Rewards: the recorded losses negated (TaskSet's metric is minimised).
            f.seen
                .curves
                .push(curve.iter().map(|&v| -f64::from(v)).collect());
            f.seen.forgotten.push(false);
        }
        let rows = super::probe_rows(space.len(), units, history);
        Probe {
            f,
            rows,
            rng: Rng::new(seed),
        }
    }

    /// Configurations the prediction covers (those not yet complete).
    pub fn candidates(&self) -> usize {
        self.rows.len()
    }

    /// The fit after the newest observation (`iters` Adam steps on every point).
    pub fn refine(&mut self) {
        self.f.fit();
    }

    /// The prediction of every candidate one unit ahead, and the acquisition.
    pub fn predict(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        std::hint::black_box(self.f.pick(&rows, &mut self.rng));
        self.rows = rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::{Scale, Space, SpaceDim};

    /// Two learners, one with a numeric and a categorical dimension, one with a numeric one:
    /// numeric columns per learner (0 when inactive), the learner and categorical levels in the
    /// Hamming columns (−1 when inactive), the budget appended last.
    #[test]
    fn features_split_numeric_and_categorical_columns() {
        let num = crate::space::UNIT;
        let mut space = Space::new(vec![
            vec![
                SpaceDim::of("a", num),
                SpaceDim::of("k", Scale::Categorical(3)),
            ],
            vec![SpaceDim::of("b", num)],
        ]);
        space.push(0, &[0.25, 2.0]);
        space.push(1, &[0.75]);
        space.push(0, &[f32::NAN, 1.0]);
        let f = Features::of(&space);
        assert_eq!((f.dc, f.dk), (3, 2));
        let mut rows = Rows::default();
        for c in 0..3 {
            f.push(&mut rows, c, 0.5);
        }
        assert_eq!(
            rows.cont,
            vec![0.25, 0.0, 0.5, 0.0, 0.75, 0.5, 0.0, 0.0, 0.5]
        );
        assert_eq!(rows.cat, vec![0.0, 2.0, 1.0, -1.0, 0.0, 1.0]);
    }

    /// `new_configs`: every paused arm stays, `keep` open configurations stay (different ones
    /// for different draws), in configuration order; 0 or a large `keep` changes nothing.
    #[test]
    fn subsampling_keeps_every_arm_and_that_many_new_configurations() {
        let all: Vec<(usize, Candidate)> = (0..40)
            .map(|c| {
                if c % 5 == 0 {
                    (c, Candidate::Arm(c / 5))
                } else {
                    (c, Candidate::Config(c as u32))
                }
            })
            .collect();
        let mut rng = Rng::new(7);
        for keep in [0, 32, 100] {
            let mut v = all.clone();
            subsample_new(&mut v, keep, &mut rng);
            assert_eq!(v.len(), 40, "keep {keep}");
        }
        let mut kept = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let mut v = all.clone();
            subsample_new(&mut v, 6, &mut rng);
            let arms = v
                .iter()
                .filter(|x| matches!(x.1, Candidate::Arm(_)))
                .count();
            assert_eq!((arms, v.len()), (8, 14));
            assert!(v.windows(2).all(|w| w[0].0 < w[1].0), "order kept");
            kept.extend(v.iter().map(|x| x.0));
        }
        assert!(kept.len() > 14, "each decision draws afresh");
    }
}
