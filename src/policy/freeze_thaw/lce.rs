//! `curve-ensemble`: predictive termination by learning-curve extrapolation (Domhan, Springenberg &
//! Hutter 2015, "Speeding up Automatic Hyperparameter Optimization of Deep Neural Networks by
//! Extrapolation of Learning Curves", IJCAI; automl/pylearningcurvepredictor at 4434802, its
//! `ConservativeTerminationCriterion` with the model combination of `curve::domhan`; read, not
//! copied).
//!
//! Configurations are drawn at random (the paper ran the criterion inside SMAC and TPE; random
//! search is the proposer here) and trained one unit per decision. When a configuration has
//! trained `min_points` units, and every `check_every` units after that, the criterion runs
//! before its next unit: with y_best the best final score of any configuration trained to the
//! end (none yet: no check), a configuration whose best score so far already beats y_best
//! continues; otherwise its curve, cut as the code cuts its beginning, is extrapolated by the
//! sampled combination of the 11 parametric families to the curve's last unit, and the
//! configuration stops (is never trained again) when P(y(last unit) > y_best) < `threshold`
//! (0.05, the code's `IMPROVEMENT_PROB_THRESHOLD`). A curve no family fits keeps training (the
//! code's "failed fitting... not cancelling"), or stops with `unfit = "stop"`; fits are counted
//! in `policy_stats` (`checks`, `stopped`, `unfit`).
//!
//! The model is for accuracy-like curves (rising, in [0, 1]; predictions outside [0, 100] are
//! rejected): `scores = "accuracy"` models the pool's score as recorded (a maximised metric),
//! `scores = "loss"` models 1 − loss (a minimised metric, whose reward is −loss). With several
//! workers each free worker continues the earliest configuration that is neither running,
//! complete nor stopped, else draws. The sampler's random streams derive from the cell's seed,
//! the arm and its length, so results are identical at any `--threads` and worker count.

use super::{Driven, FreezeThaw};
use crate::curve::domhan::{Combination, Sampling, cut_beginning};
use crate::policy::{Action, Family, Kind, ParamDef, Params, Value};
use crate::protocol::{Observation, PoolView, View, WorldKind};
use crate::rng::{Rng, derive_seed};
use anyhow::Result;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];
const SOURCE: &str = "Domhan, Springenberg & Hutter 2015, 'Speeding up Automatic Hyperparameter Optimization of Deep Neural Networks by Extrapolation of Learning Curves', IJCAI, §3 (the 11 families, their weighted combination sampled by MCMC) and §4 (predictive termination); automl/pylearningcurvepredictor 4434802 curvefunctions.py, curvemodels.py (MLCurveModel, MCMCCurveModelCombination), terminationcriterion.py (ConservativeTerminationCriterion)";

pub fn family() -> Family {
    Family {
        name: "curve-ensemble",
        summary: "Domhan et al.'s predictive termination: random configurations trained unit by unit, stopped when a sampled combination of 11 parametric curves gives them under 5 % chance of beating the best",
        source: SOURCE,
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef {
                name: "scores",
                kind: Kind::Choice(&["accuracy", "loss"]),
                default: Value::Text("accuracy".into()),
                doc: "what the curves hold: accuracy = the pool's score as recorded, a maximised metric in [0, 1] (the paper's); loss = a minimised metric, modelled as 1 - loss",
            },
            ParamDef::float(
                "threshold",
                0.0,
                1.0,
                0.05,
                "a configuration stops when P(final score > best) is below this (the code's IMPROVEMENT_PROB_THRESHOLD)",
            ),
            ParamDef::int(
                "min_points",
                1,
                1_000_000,
                10,
                "units a configuration trains before its first check (chosen here: the code leaves the schedule to its caller)",
            ),
            ParamDef::int(
                "check_every",
                1,
                1_000_000,
                10,
                "units between checks (chosen here, as min_points)",
            ),
            ParamDef::int(
                "walkers",
                2,
                100_000,
                100,
                "the sampler's walkers, at least twice the dimension (the code's nwalkers)",
            ),
            ParamDef::int(
                "samples",
                1,
                10_000_000,
                2500,
                "the sampler's steps (the code's nsamples)",
            ),
            ParamDef::int(
                "burn_in",
                0,
                10_000_000,
                500,
                "steps dropped before the predictions (the code's burn_in)",
            ),
            ParamDef::int(
                "thin",
                1,
                1_000_000,
                10,
                "every thin-th kept sample predicts (the criterion's PREDICTION_THINNING)",
            ),
            ParamDef {
                name: "unfit",
                kind: Kind::Choice(&["continue", "stop"]),
                default: Value::Text("continue".into()),
                doc: "a curve no family fits: continue training it (the code's) or stop it",
            },
        ],
        build: |p: &Params, _| Box::new(Driven(CurveEnsemble::new(Config::from(p)))),
    }
}

#[derive(Clone, Debug)]
struct Config {
    loss: bool,
    threshold: f64,
    min_points: usize,
    check_every: usize,
    sampling: Sampling,
    stop_unfit: bool,
}

impl From<&Params> for Config {
    fn from(p: &Params) -> Self {
        Config {
            loss: p.text("scores") == "loss",
            threshold: p.float("threshold"),
            min_points: p.int("min_points") as usize,
            check_every: p.int("check_every") as usize,
            sampling: Sampling {
                walkers: p.int("walkers") as usize,
                samples: p.int("samples") as usize,
                burn_in: p.int("burn_in") as usize,
                thin: p.int("thin") as usize,
            },
            stop_unfit: p.text("unfit") == "stop",
        }
    }
}

pub struct CurveEnsemble {
    cfg: Config,
    units: u32,
    seed: u64,
    /// Per arm: its curve in the model's orientation, whether it stopped, the length last checked.
    curves: Vec<Vec<f64>>,
    stopped: Vec<bool>,
    checked: Vec<usize>,
    /// The best final score of a complete curve, in the model's orientation.
    best_final: Option<f64>,
    checks: u64,
    stops: u64,
    unfit: u64,
    checks_untaken: u64,
}

impl CurveEnsemble {
    fn new(cfg: Config) -> Self {
        CurveEnsemble {
            cfg,
            units: 0,
            seed: 0,
            curves: Vec::new(),
            stopped: Vec::new(),
            checked: Vec::new(),
            best_final: None,
            checks: 0,
            stops: 0,
            unfit: 0,
            checks_untaken: 0,
        }
    }

    /// A check is due for `arm` before its next unit.
    fn due(&self, arm: usize) -> bool {
        let len = self.curves[arm].len();
        len >= self.cfg.min_points
            && (len - self.cfg.min_points).is_multiple_of(self.cfg.check_every)
            && self.checked[arm] != len
            && len < self.units as usize
    }

    /// The criterion on `arm`'s curve: true when it stops.
    fn stops(&mut self, arm: usize) -> bool {
        let y = &self.curves[arm];
        self.checked[arm] = y.len();
        let Some(best) = self.best_final else {
            return false;
        };
        if y.iter().copied().fold(f64::NEG_INFINITY, f64::max) > best {
            return false;
        }
        self.checks += 1;
        self.checks_untaken += 1;
        let mut rng = Rng::new(derive_seed(
            self.seed,
            &format!("curve-ensemble-{arm}-{}", y.len()),
        ));
        let cut = cut_beginning(y);
        let xlim = f64::from(self.units);
        let p = Combination::fit(cut, xlim, self.cfg.sampling, &mut rng)
            .map(|c| c.prob_greater(xlim, best))
            .filter(|p| !p.is_nan());
        match p {
            None => {
                self.unfit += 1;
                self.cfg.stop_unfit
            }
            Some(p) => p < self.cfg.threshold,
        }
    }
}

impl FreezeThaw for CurveEnsemble {
    const FAMILY: &'static str = "curve-ensemble";

    fn cell(&mut self) -> (&mut u32, &mut u64) {
        (&mut self.units, &mut self.seed)
    }

    fn decide(&mut self, pool: &PoolView<'_>, view: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        let arms = pool.config.len();
        if self.curves.len() < arms {
            self.curves.resize(arms, Vec::new());
            self.stopped.resize(arms, false);
            self.checked.resize(arms, usize::MAX);
        }
        for arm in 0..arms {
            if pool.done[arm] || view.is_busy(arm) || self.stopped[arm] {
                continue;
            }
            if self.due(arm) && self.stops(arm) {
                self.stopped[arm] = true;
                self.stops += 1;
                continue;
            }
            return Ok(Action::Pull(arm));
        }
        Ok(super::draw_or_idle(pool, view))
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        let arm = obs.arm;
        if arm >= self.curves.len() {
            self.curves.resize(arm + 1, Vec::new());
            self.stopped.resize(arm + 1, false);
            self.checked.resize(arm + 1, usize::MAX);
        }
        for r in obs.revealed {
            if !r.ok {
                // A failed unit ends the curve (the pool world's rule): it is never pulled again.
                self.stopped[arm] = true;
                break;
            }
            if r.time as usize != self.curves[arm].len() + 1 {
                continue;
            }
            let y = if self.cfg.loss {
                1.0 + r.reward
            } else {
                r.reward
            };
            self.curves[arm].push(y);
            if self.curves[arm].len() >= self.units as usize {
                self.best_final = Some(self.best_final.map_or(y, |b| b.max(y)));
            }
        }
    }

    fn untaken(&mut self) -> &mut u64 {
        &mut self.checks_untaken
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!({
            "checks": self.checks,
            "stopped": self.stops,
            "unfit": self.unfit,
        })
    }
}
