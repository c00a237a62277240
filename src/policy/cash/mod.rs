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
//! - `parego`: Knowles 2006 (several objectives, `[world] objectives`): a random augmented
//!   Chebyshev scalarisation at every proposal, modelled by `tpe` or `smac`.
//! - `mo-tpe`: Ozaki et al. 2020/2022 (several objectives): `tpe` whose good group is chosen by
//!   non-dominated ranks and a greedy hypervolume subset selection, as Optuna 5.0.0's TPESampler.
//! - `nsga2`: Deb et al. 2002 with Optuna 5.0.0's NSGAIISampler's choices (several objectives
//!   or one): generations, survivors by fronts and crowding, children snapped to the pool.
//! - `smac`: Hutter, Hoos & Leyton-Brown 2011, "Sequential Model-Based Optimization for General
//!   Algorithm Configuration", LION 5, §4.3 (random forest, mean and variance from the trees) and
//!   §4.1 (expected improvement), with every second configuration drawn at random (§4.2
//!   "interleaving random configurations", as Auto-WEKA's SMAC does).
//!
//! One evaluation trains the chosen configuration to the end of its curve (one unit in a joint
//! trace-set pool, the full 27 units in `sklearn-grid`), and its score is the score of its last
//! unit. Random configurations are drawn by the world (`Action::Draw`, the same seeded order as
//! `random-search`).

mod ex_def;
pub mod forest;
mod grid_search;
mod mo_tpe;
mod nsga2;
mod parego;
mod smac;
mod tpe;

pub use ex_def::*;
pub use grid_search::*;
pub use mo_tpe::*;
pub use nsga2::*;
pub use parego::*;
pub use smac::*;
pub use tpe::*;

use super::{Action, CellStart, ParamDef, Params, Policy};
use crate::protocol::{Observation, PoolView, View, WorldKind};
use crate::rng::Rng;
use anyhow::{Result, bail};

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

/// What an optimiser proposes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proposal {
    Choose(u32),
    Draw,
    Stop,
}

/// An optimiser that proposes configurations and is told their scores, in one of two roles:
/// CASH's optimiser, run by [`Evaluator`] (each configuration trained to the end of its curve and
/// its final score told), and the model inside Hyperband's brackets (BOHB's, told each result
/// at a rung budget; `hyperband.rs`).
pub trait Proposer: Send {
    /// The next configuration; `Draw` asks for a random one, `Stop` says there is nothing to
    /// propose (the evaluator stops the cell; Hyperband draws at random instead).
    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal>;
    /// Configuration `config`'s score after `budget` units of training (reward orientation:
    /// higher is better), `None` when its evaluation failed (then `budget` is the rung budget
    /// it did not reach). Through [`Evaluator`] every score is the curve's last unit; a
    /// single-fidelity model takes every score told as final.
    fn tell(&mut self, config: u32, budget: u32, score: Option<f64>);
    /// The configurations running on other workers when the proposer is next asked (empty with
    /// one worker). A proposer that ignores them simply never proposes them (they are not open).
    fn pending(&mut self, _configs: &[u32]) {}
    /// The cell begins (a proposer of several objectives reads them here).
    fn begin(&mut self, _start: &CellStart<'_>) -> Result<()> {
        Ok(())
    }
    /// Several objectives: configuration `config`'s values after `budget` units (recorded
    /// orientation, the order of `PoolStart::objectives`), None when its evaluation failed;
    /// told just before `tell`.
    fn tell_objectives(&mut self, _config: u32, _budget: u32, _values: Option<&[f64]>) {}
    /// The proposer's own counts for the cell (`runs.parquet`'s `policy_stats`), or None.
    fn stats(&self) -> Option<serde_json::Value> {
        None
    }
}

/// A single-fidelity model refitted from scratch by a caller that tells it a history of its
/// own (ParEGO's scalarised one; the results at one budget inside Hyperband's brackets): `tpe`
/// or `smac` at its family's defaults, without its own random start, scoring `candidates` open
/// configurations (0: all).
pub(crate) fn fresh_model(name: &str, candidates: usize) -> Box<dyn Proposer> {
    match name {
        "smac" => {
            let mut m: Smac = smac_of(&crate::policy::default_params("smac"));
            m.n_init = 0;
            m.candidates = candidates;
            Box::new(m)
        }
        _ => {
            let mut m: Tpe = tpe_of(&crate::policy::default_params("tpe"));
            m.n_startup = 0;
            m.candidates = candidates;
            Box::new(m)
        }
    }
}

/// Runs a proposer in the pool world: choose (or draw) a configuration, train it to the end of its
/// curve, tell the proposer its last unit's score, repeat. With several workers each free worker
/// continues a configuration whose last unit is in, else asks the proposer for a new one; the
/// configurations still running are not open, so the proposer never proposes them again (it
/// ranks the open ones on the finished evaluations only).
pub struct Evaluator<P> {
    pub inner: P,
    /// Arms whose curve goes on and that are not running, in the order their units finished.
    ready: std::collections::VecDeque<usize>,
    /// Evaluations finished since the proposer was last asked: (arm, final score, its
    /// objectives' values when the experiment measures several).
    finished: std::collections::VecDeque<(usize, Option<f64>, Vec<f64>)>,
}

impl<P: Proposer> Evaluator<P> {
    pub fn new(inner: P) -> Self {
        Evaluator {
            inner,
            ready: std::collections::VecDeque::new(),
            finished: std::collections::VecDeque::new(),
        }
    }
}

impl<P: Proposer> Policy for Evaluator<P> {
    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        let Some(p) = view.pool else {
            bail!("a CASH optimiser needs the pool world");
        };
        while let Some((arm, score, values)) = self.finished.pop_front() {
            let (config, budget) = (p.config[arm], view.pulls[arm] as u32);
            if !values.is_empty() {
                self.inner
                    .tell_objectives(config, budget, score.map(|_| values.as_slice()));
            }
            self.inner.tell(config, budget, score);
        }
        while let Some(a) = self.ready.pop_front() {
            if !p.done[a] {
                return Ok(Action::Pull(a));
            }
        }
        let running: Vec<u32> = view.pending.iter().map(|w| p.config[w.arm]).collect();
        self.inner.pending(&running);
        Ok(match self.inner.propose(&p, rng)? {
            Proposal::Choose(c) => Action::Choose(c),
            Proposal::Draw if p.n_open > 0 => Action::Draw,
            Proposal::Draw | Proposal::Stop => Action::Stop,
        })
    }

    fn begin(&mut self, start: &CellStart<'_>) -> Result<()> {
        self.inner.begin(start)
    }

    fn finish(&mut self) -> Result<Option<String>> {
        Ok(self.inner.stats().map(|v| v.to_string()))
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        if obs.exhausted {
            self.finished
                .push_back((obs.arm, obs.reward, obs.objectives.to_vec()));
        } else {
            self.ready.push_back(obs.arm);
        }
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
    ParamDef::choice(
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
    ParamDef::int(
        "candidates",
        0,
        10_000_000,
        0,
        "open configurations scored per decision: 0 scores every open one (HPO-B's pool-based protocol); N scores a uniform random subset of N",
    )
}

/// What a model assumes of the configurations still running on other workers: the constant liar
/// of Ginsbourger, Le Riche & Carraro 2010 ("Kriging is well-suited to parallelize optimization",
/// Computational Intelligence in Expensive Optimization Problems, §3.2: CL-min, CL-mean and CL-max
/// of a minimised loss), each running configuration added to the model's observations with one
/// made-up score before the open ones are ranked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Liar {
    /// Running configurations are not in the model (the proposer only cannot choose them).
    None,
    /// The worst score seen so far (CL-max of a loss; Optuna's TPE `constant_liar`).
    Worst,
    /// The mean of the scores seen so far (CL-mean).
    Mean,
    /// The best score seen so far (CL-min of a loss).
    Best,
}

fn liar_param() -> ParamDef {
    ParamDef::choice(
        "liar",
        &["none", "worst", "mean", "best"],
        "none",
        "with several workers, the score the model assumes for each configuration still running (Ginsbourger et al. 2010's constant liar): none leaves them out; worst, mean or best of the scores seen (CL-max, CL-mean, CL-min of a loss; Optuna's constant_liar is worst)",
    )
}

fn liar(p: &Params) -> Liar {
    match p.text("liar") {
        "worst" => Liar::Worst,
        "mean" => Liar::Mean,
        "best" => Liar::Best,
        _ => Liar::None,
    }
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

    /// This history with each of `running` added at the score `liar` makes up, after the real
    /// observations (in the order given); `None` when there is nothing to add.
    fn with_lies(&self, running: &[u32], liar: Liar) -> Option<History> {
        if running.is_empty() || self.obs.is_empty() {
            return None;
        }
        let scores = self.obs.iter().map(|o| o.1);
        let lie = match liar {
            Liar::None => return None,
            Liar::Worst => scores.fold(f64::INFINITY, f64::min),
            Liar::Best => scores.fold(f64::NEG_INFINITY, f64::max),
            // Summed in evaluation order, as recorded.
            Liar::Mean => scores.sum::<f64>() / self.obs.len() as f64,
        };
        let mut h = self.clone();
        for (j, &c) in running.iter().enumerate() {
            h.obs.push((c, lie, self.evaluated + j));
        }
        Some(h)
    }
}

/// The open configurations to score: all, or a uniform subset of `k`.
pub(crate) fn candidate_list(p: &PoolView<'_>, k: usize, rng: &mut Rng) -> Vec<u32> {
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

#[cfg(test)]
mod tests {
    use super::tpe::{TpeCache, forgetting_weights};
    use super::*;
    use crate::space::Scale;

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
            liar: Liar::None,
            hist: History::default(),
            running: Vec::new(),
            cache: TpeCache::default(),
            mo: None,
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
    use crate::replay::pool::{PoolWorld, PoolWorldConfig};
    use crate::replay::{ActionKind, Step, World, drive};
    use crate::trace::pool::Pool;

    /// The pool world on `pool`'s first task: default options, a budget of `budget` units,
    /// rewards as recorded, world seed `seed`.
    fn on_task0(pool: &Pool, budget: f64, seed: u64) -> PoolWorld<'_> {
        PoolWorld::new(
            pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            budget,
            1.0,
            seed,
        )
    }

    /// Drive `family` with `params` on `pool` (task 0) with a budget of `budget` units.
    fn run(pool: &Pool, family: &str, params: &[(&str, toml::Value)], budget: f64) -> Vec<Step> {
        let mut w = on_task0(pool, budget, 5);
        let mut p = testing::build(family, params, 0);
        let mut steps = Vec::new();
        drive(
            &mut w,
            p.as_mut(),
            family,
            &mut Rng::new(3),
            crate::replay::Overhead::None,
            &mut [&mut steps],
        )
        .unwrap();
        steps
    }

    #[test]
    fn the_optimisers_run_on_several_workers_and_never_pull_a_running_configuration() {
        // 30 configurations of 4 units; config i scores 0.01 i at every unit.
        let pool = hand_pool(30, 4, |i| vec![0.01 * i as f32; 4]);
        let liar = |l: &str| vec![("liar", toml::Value::from(l))];
        for (family, params) in [
            ("tpe", vec![]),
            ("tpe", liar("worst")),
            ("smac", vec![]),
            ("smac", liar("mean")),
            ("grid-search", vec![]),
            ("random-search", vec![]),
        ] {
            let mut w = on_task0(&pool, 60.0, 5);
            let mut p = testing::build(family, &params, 0);
            let mut steps = Vec::new();
            crate::replay::drive_workers(
                &mut w,
                p.as_mut(),
                family,
                &mut Rng::new(3),
                crate::replay::Overhead::None,
                3,
                &mut [&mut steps],
            )
            .unwrap_or_else(|e| panic!("{family}: {e:#}"));
            // 60 units, every configuration trained to the end of its 4-unit curve but the
            // ones still in progress when the budget ran out (at most one per worker).
            assert_eq!(steps.len(), 60, "{family}");
            let units = &w.ledger().pulls;
            assert_eq!(units.iter().sum::<u64>(), 60, "{family}");
            assert!(units.iter().all(|&u| u <= 4), "{family}: {units:?}");
            assert!(
                units.iter().filter(|&&u| u < 4).count() <= 3,
                "{family}: {units:?}"
            );
            let workers: std::collections::BTreeSet<u32> = steps.iter().map(|s| s.worker).collect();
            assert_eq!(workers.len(), 3, "{family}");
        }
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
        let mut w = on_task0(pool, 5.0, 1);
        let mut p = testing::build(family, &[], 0);
        let e = drive(
            &mut w,
            p.as_mut(),
            family,
            &mut Rng::new(1),
            crate::replay::Overhead::None,
            &mut [],
        )
        .unwrap_err();
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
            liar: Liar::None,
            hist: History::default(),
            running: Vec::new(),
            cache: TpeCache::default(),
            mo: None,
        }
    }

    #[test]
    fn tpe_chooses_the_best_ratio_of_a_two_point_history() {
        // One ordinal dimension of 11 levels: configuration i sits at x = i / 10. History:
        // x = 0.2 scored 0.9 (the good group: ⌈0.15 × 2⌉ = 1) and x = 0.8 scored 0.1. So
        // l = Parzen{0.2 (σ 0.5), prior} and g = Parzen{prior, 0.8 (σ 0.5)}, mirror images about
        // 0.5: l/g falls with x, and the best open configuration is x = 0, configuration 0.
        let pool = hand_pool(11, 1, |i| vec![i as f32 / 10.0]);
        let mut w = on_task0(&pool, 100.0, 1);
        w.apply(Action::Choose(2)).unwrap();
        w.apply(Action::Choose(8)).unwrap();
        let mut t = tpe(2);
        t.tell(2, 9, Some(0.9));
        t.tell(8, 9, Some(0.1));
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
    fn the_constant_liar_adds_each_running_configuration_at_its_made_up_score() {
        let mut h = History::default();
        for (c, s) in [(4, Some(0.3)), (7, None), (9, Some(0.9)), (2, Some(0.6))] {
            h.add(c, s, OnFailure::Skip);
        }
        assert!(h.with_lies(&[], Liar::Worst).is_none());
        assert!(h.with_lies(&[5], Liar::None).is_none());
        for (liar, lie) in [(Liar::Worst, 0.3), (Liar::Mean, 0.6), (Liar::Best, 0.9)] {
            let l = h.with_lies(&[5, 1], liar).unwrap();
            // The real observations first, then the lies in the order given; the failed
            // evaluation (skipped) is counted, so the lies' order starts at 4.
            assert_eq!(&l.obs[..3], &h.obs[..], "{liar:?}");
            let lies: Vec<(u32, f64, usize)> = l.obs[3..].to_vec();
            assert_eq!(lies.len(), 2);
            assert_eq!((lies[0].0, lies[0].2, lies[1].0, lies[1].2), (5, 4, 1, 5));
            assert!(
                (lies[0].1 - lie).abs() < 1e-12 && lies[1].1 == lies[0].1,
                "{liar:?}"
            );
            assert_eq!(l.evaluated, h.evaluated, "lies are not evaluations");
        }
    }

    #[test]
    fn tpe_with_a_constant_liar_ranks_on_the_history_with_the_lies() {
        // One ordinal dimension of 11 levels (configuration i at x = i / 10); evaluated: x = 0.2
        // scored 0.9, x = 0.8 scored 0.1; x = 0.1 is running. γ = 0.5: 2 of 3 observations are
        // good. Worst liar (0.1): good {0.2, 0.8} (ties: the earlier first), bad {0.1}. Best liar
        // (0.9): good {0.2, 0.1}, bad {0.8}. Without a liar: good {0.2}, bad {0.8} (⌈0.5 × 2⌉ = 1).
        let pool = hand_pool(11, 1, |i| vec![i as f32 / 10.0]);
        let mut w = on_task0(&pool, 100.0, 1);
        for c in [2, 8, 1] {
            w.apply(Action::Choose(c)).unwrap();
        }
        let v = w.view();
        let p = v.pool.unwrap();
        let pick = |liar| {
            let mut t = tpe(2);
            t.gamma = 0.5;
            t.liar = liar;
            t.tell(2, 9, Some(0.9));
            t.tell(8, 9, Some(0.1));
            t.pending(&[1]);
            t.propose(&p, &mut Rng::new(1)).unwrap()
        };
        // The argmax of l/g over the open configurations, from the densities themselves.
        let best_ratio = |good: &[f64], bad: &[f64]| {
            let pts = |xs: &[f64]| xs.iter().map(|&x| (x, 1.0)).collect::<Vec<_>>();
            let (l, g) = (Parzen::new(&pts(good), 1.0), Parzen::new(&pts(bad), 1.0));
            let open = [0u32, 3, 4, 5, 6, 7, 9, 10];
            let r = |c: u32| l.density(f64::from(c) / 10.0) / g.density(f64::from(c) / 10.0);
            let top = open
                .iter()
                .copied()
                .fold(0, |b, c| if r(c) > r(b) { c } else { b });
            Proposal::Choose(top)
        };
        let (none, worst, best) = (
            best_ratio(&[0.2], &[0.8]),
            best_ratio(&[0.2, 0.8], &[0.1]),
            best_ratio(&[0.2, 0.1], &[0.8]),
        );
        assert_eq!(pick(Liar::None), none);
        assert_eq!(pick(Liar::Worst), worst);
        assert_eq!(pick(Liar::Best), best);
        // The worst liar pushes the search away from the running x = 0.1; the others do not.
        assert_eq!((none, best), (Proposal::Choose(0), Proposal::Choose(0)));
        assert_ne!(worst, Proposal::Choose(0));
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
            let mut w = on_task0(&pool, 20.0, seed);
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
            int: false,
        };
        let e = run_err(&cont, "grid-search");
        assert!(e.contains("needs a grid pool"), "{e}");
    }
}
