//! Configuration-level baselines in the pool world: random search, successive halving, Hyperband.
//!
//! - `random-search` (Bergstra & Bengio 2012, "Random Search for Hyper-Parameter Optimization",
//!   JMLR 13): draw a configuration, train it to full fidelity (`units` of the pool), repeat.
//! - `successive-halving` (Jamieson & Talwalkar 2016, "Non-stochastic Best Arm Identification and
//!   Hyperparameter Optimization", AISTATS; as the inner loop of Li et al. 2018, Algorithm 1):
//!   draw n configurations, train each to r_0 = `r_min` units, keep the best ⌊n_i/η⌋ by the score
//!   at their last trained unit, train those to r_{i+1} = η r_i, …, until one remains or r reaches
//!   R; then start again with n fresh configurations.
//! - `hyperband` (Li, Jamieson, DeSalvo, Rostamizadeh & Talwalkar 2018, "Hyperband: A Novel
//!   Bandit-Based Approach to Hyperparameter Optimization", JMLR 18, Algorithm 1): with
//!   s_max = ⌊log_η(R / r_min)⌋, brackets s = s_max, …, 0, each successive halving with
//!   n = ⌈(s_max + 1) η^s / (s + 1)⌉ configurations and r = R η^(−s) units (in multiples of r_min,
//!   rounded to whole units); the sequence of brackets repeats until the budget ends.
//!
//! Training is incremental, as the pool records one curve per configuration: promoting a
//! configuration from r_i to r_{i+1} units trains its units r_i + 1 … r_{i+1} (the paper's
//! "resume" variant; no unit is paid for twice). `R = 0` means the pool's full curve length.
//! Ranking ties go to the earlier-drawn arm.
//! - `mo-hyperband` (Schmucker, Donini, Zafar, Perrone & Archambeau 2021, "Multi-objective
//!   multi-fidelity hyperparameter optimization with application to fairness", MO-Hyperband):
//!   Hyperband on several objectives (`[world] objectives`), a complete rung ranked as MO-ASHA
//!   ranks one (non-dominated fronts, each an ε-net seeded by `seed_objective`,
//!   `pareto::nondominated_order`; failed results last) and its top ⌊n_i/η⌋ promoted.

use super::cash::{Proposal, Proposer};
use super::{Action, Family, Kind, ParamDef, Params, Rule, Value};
use crate::protocol::{CellStart, Observation, Policy, PoolView, View, WorldKind};
use crate::rng::Rng;
use anyhow::Result;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

pub fn family_random_search() -> Family {
    Family {
        name: "random-search",
        summary: "draw a configuration, train it to full fidelity, repeat",
        source: "Bergstra & Bengio 2012, 'Random Search for Hyper-Parameter Optimization', JMLR 13",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![ParamDef {
            name: "work",
            kind: Kind::Choice(&["unit", "configuration"]),
            default: Value::Text("unit".into()),
            doc: "a piece of work: one unit a decision (each unit's score is seen as it finishes), or the whole configuration to full fidelity in one decision (one event and one trajectory step per configuration, every unit revealed when it finishes, as a full-fidelity evaluation in Syne Tune or mfhpo-simulator)",
        }],
        build: |p: &Params, _| {
            Box::new(RandomSearch {
                ready: std::collections::VecDeque::new(),
                whole: p.text("work") == "configuration",
            })
        },
    }
}

pub(super) fn eta_param() -> ParamDef {
    ParamDef {
        name: "eta",
        kind: Kind::Int { min: 2, max: 100 },
        default: Value::Int(3),
        doc: "the halving rate: keep 1/eta of the configurations at each rung (the paper's default 3)",
    }
}

pub(super) fn r_params() -> Vec<ParamDef> {
    vec![
        ParamDef {
            name: "r_max",
            kind: Kind::Int {
                min: 0,
                max: 100_000,
            },
            default: Value::Int(0),
            doc: "R, the most units one configuration is trained (0: the pool's full curve)",
        },
        ParamDef {
            name: "r_min",
            kind: Kind::Int {
                min: 1,
                max: 100_000,
            },
            default: Value::Int(1),
            doc: "the minimum resource: units at the first rung",
        },
    ]
}

pub fn family_successive_halving() -> Family {
    let mut params = vec![
        ParamDef {
            name: "n",
            kind: Kind::Int {
                min: 1,
                max: 1_000_000,
            },
            default: Value::Int(27),
            doc: "configurations drawn at the start of each round",
        },
        eta_param(),
    ];
    params.extend(r_params());
    Family {
        name: "successive-halving",
        summary: "train n configurations r_min units, keep the best 1/eta, multiply their units by eta, repeat",
        source: "Jamieson & Talwalkar 2016, 'Non-stochastic Best Arm Identification and Hyperparameter Optimization', AISTATS (the SuccessiveHalving inner loop of Li et al. 2018, Alg. 1)",
        worlds: WORLDS,
        parallel: WORLDS,
        params,
        build: |p: &Params, _| {
            Box::new(Halving::new(
                Plan::Single {
                    n: p.int("n") as usize,
                },
                p.int("eta") as u32,
                p.int("r_max") as u32,
                p.int("r_min") as u32,
            ))
        },
    }
}

pub fn family_hyperband() -> Family {
    let mut params = vec![eta_param()];
    params.extend(r_params());
    Family {
        name: "hyperband",
        summary: "successive halving over brackets that trade many short against few long trainings",
        source: "Li, Jamieson, DeSalvo, Rostamizadeh & Talwalkar 2018, 'Hyperband: A Novel Bandit-Based Approach to Hyperparameter Optimization', JMLR 18, Algorithm 1",
        worlds: WORLDS,
        parallel: WORLDS,
        params,
        build: |p: &Params, _| {
            Box::new(Halving::new(
                Plan::Hyperband,
                p.int("eta") as u32,
                p.int("r_max") as u32,
                p.int("r_min") as u32,
            ))
        },
    }
}

pub fn family_mo_hyperband() -> Family {
    let mut params = vec![eta_param()];
    params.extend(r_params());
    params.extend(super::asha::mo_params());
    Family {
        name: "mo-hyperband",
        summary: "several objectives: Hyperband whose complete rungs rank results by non-dominated sorting, an epsilon-net within each front; promote the top 1/eta",
        source: "Schmucker, Donini, Zafar, Perrone & Archambeau 2021, 'Multi-objective multi-fidelity hyperparameter optimization with application to fairness' (MO-Hyperband, beside MO-ASHA); the rung order as mo-asha's (Salinas et al. 2021: non-dominated fronts, each an epsilon-net); Hyperband: Li et al. 2018, JMLR 18, Algorithm 1",
        worlds: WORLDS,
        parallel: WORLDS,
        params,
        build: |p: &Params, _| {
            Box::new(MoHyperband {
                hb: Halving::new(
                    Plan::Hyperband,
                    p.int("eta") as u32,
                    p.int("r_max") as u32,
                    p.int("r_min") as u32,
                ),
                seed_objective: p.int("seed_objective") as usize,
                by_range: p.text("scale") == "range",
                crowding: p.text("ranking") == "crowding",
            })
        },
    }
}

/// MO-Hyperband: Hyperband ranking several objectives; it learns their directions when its cell
/// begins.
struct MoHyperband {
    hb: Halving,
    seed_objective: usize,
    by_range: bool,
    crowding: bool,
}

impl Policy for MoHyperband {
    fn begin(&mut self, start: &CellStart<'_>) -> Result<()> {
        let maximize = super::asha::mo_directions("mo-hyperband", start, self.seed_objective)?;
        self.hb.mo = Some(MoRank {
            maximize,
            seed_objective: self.seed_objective,
            by_range: self.by_range,
            crowding: self.crowding,
            last: Vec::new(),
        });
        Ok(())
    }
    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        self.hb.try_decide(view, rng)
    }
    fn observe(&mut self, obs: &Observation<'_>) {
        self.hb.observe(obs)
    }
}

/// Random search with any number of workers: each free worker continues an unfinished
/// configuration whose last unit is in (the longest waiting first), or draws a new one.
pub struct RandomSearch {
    /// Arms whose curve goes on and that are not running, in the order their units finished.
    ready: std::collections::VecDeque<usize>,
    /// `work = "configuration"`: draw and train to full fidelity in one action.
    whole: bool,
}

impl Rule for RandomSearch {
    fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
        let Some(p) = view.pool else {
            return Action::Draw;
        };
        if let Some(a) = self.ready.pop_front() {
            return Action::Pull(a);
        }
        if p.undrawn == 0 && !view.pending.is_empty() {
            return Action::Wait;
        }
        if self.whole {
            return Action::DrawTo(p.units);
        }
        Action::Draw
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        if !obs.exhausted {
            self.ready.push_back(obs.arm);
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Plan {
    Single { n: usize },
    Hyperband,
}

/// One successive-halving bracket in progress.
#[derive(Clone, Debug)]
struct Bracket {
    /// (configurations, units) per rung.
    rungs: Vec<(usize, u32)>,
    rung: usize,
    to_draw: usize,
    members: Vec<usize>,
}

pub(super) struct Halving {
    plan: Plan,
    eta: u32,
    r_max: u32,
    r_min: u32,
    /// Brackets of one Hyperband iteration (s = s_max … 0), or the single SH round.
    brackets: Vec<Vec<(usize, u32)>>,
    next_bracket: usize,
    current: Option<Bracket>,
    /// The model choosing the configurations a bracket starts (BOHB's; `None`: random draws).
    model: Option<Box<Guided>>,
    /// MO-Hyperband: rungs ranked by several objectives (set when its cell begins).
    mo: Option<MoRank>,
}

/// Several objectives: their directions, the ε-net's seed, the scale of its distances, and per
/// arm its objectives at its last trained unit (minimised; None when it failed).
struct MoRank {
    maximize: Vec<bool>,
    seed_objective: usize,
    by_range: bool,
    /// Each front by crowding distance (NSGA-II) instead of an ε-net.
    crowding: bool,
    last: Vec<Option<Vec<f64>>>,
}

impl MoRank {
    /// `members` best first: non-dominated fronts, each an ε-net or by crowding distance;
    /// failed arms last, in order.
    fn order(&self, members: &[usize]) -> Vec<usize> {
        let d = self.maximize.len();
        let (scored, failed): (Vec<usize>, Vec<usize>) = members
            .iter()
            .partition(|&&a| self.last.get(a).is_some_and(Option::is_some));
        let points: Vec<f64> = scored
            .iter()
            .flat_map(|&a| self.last[a].clone().unwrap_or_default())
            .collect();
        super::asha::mo_order(
            &points,
            d,
            self.seed_objective,
            self.by_range,
            self.crowding,
        )
        .into_iter()
        .map(|i| scored[i])
        .chain(failed)
        .collect()
    }
}

/// A [`Proposer`] inside Hyperband's brackets, and what it is told: each arm's result at every
/// rung budget of the bracket that started it.
struct Guided {
    proposer: Box<dyn Proposer>,
    /// Per arm: the rung budgets (units, ascending) of the bracket that started it.
    budgets: Vec<Vec<u32>>,
    /// Units trained per arm.
    units: Vec<u32>,
    /// Results whose configuration is looked up at the next decision: (arm, budget, score;
    /// `None` when it failed).
    unresolved: Vec<(usize, u32, Option<f64>)>,
    /// The configurations running on other workers (a buffer reused at each proposal).
    running: Vec<u32>,
}

impl Guided {
    /// Arm `arm` starts in a bracket whose rungs train to `budgets` units.
    fn assign(&mut self, arm: usize, budgets: impl Iterator<Item = u32>) {
        if self.budgets.len() <= arm {
            self.budgets.resize(arm + 1, Vec::new());
        }
        self.budgets[arm] = budgets.collect();
    }

    /// One trained unit of `arm` (in decision order): a result when it reaches one of its
    /// bracket's rung budgets, or when it failed (told at its next rung budget).
    fn observe(&mut self, arm: usize, reward: Option<f64>) {
        if self.units.len() <= arm {
            self.units.resize(arm + 1, 0);
        }
        self.units[arm] += 1;
        let u = self.units[arm];
        let Some(budgets) = self.budgets.get(arm) else {
            return;
        };
        match reward {
            Some(r) if budgets.contains(&u) => self.unresolved.push((arm, u, Some(r))),
            Some(_) => {}
            None => {
                if let Some(&b) = budgets.iter().find(|&&b| b >= u) {
                    self.unresolved.push((arm, b, None));
                }
            }
        }
    }

    /// The results since the last decision told, and the configurations still running, then
    /// the proposer asked.
    fn propose(&mut self, view: &View<'_>, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        for (arm, budget, score) in self.unresolved.drain(..) {
            self.proposer.tell(p.config[arm], budget, score);
        }
        self.running.clear();
        self.running
            .extend(view.pending.iter().map(|w| p.config[w.arm]));
        self.proposer.pending(&self.running);
        self.proposer.propose(p, rng)
    }
}

impl Halving {
    fn new(plan: Plan, eta: u32, r_max: u32, r_min: u32) -> Self {
        Halving {
            plan,
            eta,
            r_max,
            r_min,
            brackets: Vec::new(),
            next_bracket: 0,
            current: None,
            model: None,
            mo: None,
        }
    }

    /// Successive halving or Hyperband whose new configurations `model` chooses (BOHB).
    pub(super) fn with_model(
        plan: Plan,
        eta: u32,
        r_max: u32,
        r_min: u32,
        model: Box<dyn Proposer>,
    ) -> Self {
        Halving {
            model: Some(Box::new(Guided {
                proposer: model,
                budgets: Vec::new(),
                units: Vec::new(),
                unresolved: Vec::new(),
                running: Vec::new(),
            })),
            ..Halving::new(plan, eta, r_max, r_min)
        }
    }

    /// The rungs of every bracket for a pool whose curves have `units` units.
    fn plan_brackets(&mut self, units: u32) {
        let r_max = if self.r_max == 0 {
            units
        } else {
            self.r_max.min(units)
        };
        let r_min = self.r_min.min(r_max).max(1);
        let eta = self.eta;
        // s_max = floor(log_eta(R / r_min)), computed in integers.
        let mut s_max = 0u32;
        while u64::from(r_min) * u64::from(eta).pow(s_max + 1) <= u64::from(r_max) {
            s_max += 1;
        }
        let rungs = |n: usize, s: u32| -> Vec<(usize, u32)> {
            // r = R eta^-s, in whole units (at least r_min); rung i: n_i = floor(n / eta^i),
            // r_i = r eta^i (the last rung trains to R).
            let r = (f64::from(r_max) / f64::from(eta).powi(s as i32))
                .round()
                .max(f64::from(r_min)) as u32;
            (0..=s)
                .map(|i| {
                    let n_i = (n / (eta as usize).pow(i)).max(1);
                    let r_i = if i == s {
                        r_max
                    } else {
                        (r * eta.pow(i)).min(r_max)
                    };
                    (n_i, r_i)
                })
                .collect()
        };
        self.brackets = match self.plan {
            Plan::Single { n } => vec![rungs(n, s_max)],
            Plan::Hyperband => (0..=s_max)
                .rev()
                .map(|s| {
                    let n = ((s_max + 1) as f64 * f64::from(eta).powi(s as i32) / f64::from(s + 1))
                        .ceil() as usize;
                    rungs(n, s)
                })
                .collect(),
        };
    }

    fn start_bracket(&mut self) {
        let rungs = self.brackets[self.next_bracket].clone();
        self.next_bracket = (self.next_bracket + 1) % self.brackets.len();
        self.current = Some(Bracket {
            to_draw: rungs[0].0,
            rungs,
            rung: 0,
            members: Vec::new(),
        });
    }
}

impl Policy for Halving {
    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        let Some(pool) = view.pool else {
            return Ok(Action::Draw);
        };
        if self.brackets.is_empty() {
            self.plan_brackets(pool.units);
        }
        // Each pass either returns an action or moves the plan forward (a rung or a bracket);
        // a whole cycle of brackets with nothing to do falls back to the best unfinished arm.
        for _ in 0..4 * (self.brackets.len() + 1) * 64 {
            if self.current.is_none() {
                self.start_bracket();
            }
            let b = self.current.as_mut().expect("started");
            if b.to_draw > 0 {
                if pool.undrawn > 0 {
                    // The new arm's id is the number of arms before it.
                    b.members.push(view.n_arms);
                    b.to_draw -= 1;
                    let Some(m) = self.model.as_mut() else {
                        return Ok(Action::Draw);
                    };
                    m.assign(view.n_arms, b.rungs.iter().map(|r| r.1));
                    // A proposer with nothing to propose leaves the bracket a random draw.
                    return Ok(match m.propose(view, &pool, rng)? {
                        Proposal::Choose(c) => Action::Choose(c),
                        Proposal::Draw | Proposal::Stop => Action::Draw,
                    });
                }
                b.to_draw = 0;
            }
            let target = b.rungs[b.rung].1;
            if let Some(&a) = b
                .members
                .iter()
                .find(|&&a| view.pulls[a] < u64::from(target) && !pool.done[a] && !view.is_busy(a))
            {
                return Ok(Action::Pull(a));
            }
            // With several workers, a rung is complete only when its last results are in:
            // synchronous successive halving waits for them.
            if b.members.iter().any(|&a| view.is_busy(a)) {
                return Ok(Action::Wait);
            }
            // The rung is complete: promote the best floor(n_i / eta) by their last score.
            if b.rung + 1 < b.rungs.len() && !b.members.is_empty() {
                let keep = b.rungs[b.rung + 1].0.min(b.members.len());
                let mut ranked = match &self.mo {
                    Some(mo) => mo.order(&b.members),
                    None => {
                        let mut r = b.members.clone();
                        r.sort_by(|&x, &y| pool.last[y].total_cmp(&pool.last[x]).then(x.cmp(&y)));
                        r
                    }
                };
                ranked.truncate(keep);
                ranked.sort_unstable();
                b.members = ranked;
                b.rung += 1;
            } else {
                self.current = None;
            }
        }
        // Nothing planned can run (the pool ran out of configurations): train the best
        // unfinished arm, so the budget is not wasted.
        let best = (0..view.n_arms)
            .filter(|&a| !pool.done[a] && !view.is_busy(a))
            .max_by(|&x, &y| pool.last[x].total_cmp(&pool.last[y]).then(y.cmp(&x)));
        Ok(match best {
            Some(a) => Action::Pull(a),
            None if !view.pending.is_empty() => Action::Wait,
            None => {
                if let Some(b) = self.current.as_mut() {
                    b.members.push(view.n_arms);
                    b.to_draw = b.to_draw.saturating_sub(1);
                }
                Action::Draw
            }
        })
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        if let Some(m) = self.model.as_mut() {
            m.observe(obs.arm, obs.reward);
        }
        if let Some(mo) = self.mo.as_mut() {
            if mo.last.len() <= obs.arm {
                mo.last.resize(obs.arm + 1, None);
            }
            mo.last[obs.arm] = obs
                .reward
                .and_then(|_| crate::pareto::minimised(obs.objectives, &mo.maximize));
        }
    }

    fn begin(&mut self, start: &CellStart<'_>) -> Result<()> {
        match self.model.as_mut() {
            Some(m) => m.proposer.begin(start),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;
    use crate::replay::pool::{PoolWorld, PoolWorldConfig, tests::hand_pool};
    use crate::replay::{World, drive};

    #[test]
    fn results_are_recorded_at_the_rung_budgets_of_each_arms_bracket() {
        let mut b = Guided {
            proposer: Box::new(crate::policy::bohb::Bohb::default()),
            budgets: Vec::new(),
            units: Vec::new(),
            unresolved: Vec::new(),
            running: Vec::new(),
        };
        b.assign(0, [1, 3, 9].into_iter());
        b.assign(1, [1, 3, 9].into_iter());
        b.assign(2, [3, 9].into_iter());
        for _ in 0..3 {
            b.observe(0, Some(0.5));
        }
        b.observe(1, Some(0.4));
        b.observe(1, None);
        b.observe(2, Some(0.1));
        b.observe(3, Some(0.7));
        // Arm 0 at 1 and 3 units; arm 1 at 1 unit, then failed on its second: told at 3 as failed; arm 2
        // (a bracket starting at 3 units) has no result at 1; arm 3 (not started by a bracket)
        // none at all.
        assert_eq!(
            b.unresolved,
            vec![
                (0, 1, Some(0.5)),
                (0, 3, Some(0.5)),
                (1, 1, Some(0.4)),
                (1, 3, None)
            ]
        );
    }

    /// MO-Hyperband's rung order: MO-ASHA's (fronts, each an ε-net from the best of
    /// `seed_objective`), failed arms last; arms of the rung only, whatever else was observed.
    #[test]
    fn mo_hyperband_ranks_a_rung_by_fronts_then_epsilon_net() {
        // (accuracy, seconds), minimised as (-accuracy, seconds): front {0, 2, 4}, then {1, 3};
        // arm 5 failed; arm 6 is not in the rung.
        let mut last: Vec<Option<Vec<f64>>> = vec![
            Some(vec![-0.9, 5.0]),
            Some(vec![-0.7, 6.0]),
            Some(vec![-0.8, 1.0]),
            Some(vec![-0.6, 2.0]),
            Some(vec![-0.85, 3.0]),
            None,
            Some(vec![-1.0, 0.0]),
        ];
        let mo = |seed_objective, last: &Vec<Option<Vec<f64>>>| MoRank {
            maximize: vec![true, false],
            seed_objective,
            by_range: false,
            crowding: false,
            last: last.clone(),
        };
        let rung = [0, 1, 2, 3, 4, 5];
        assert_eq!(mo(0, &last).order(&rung), vec![0, 2, 4, 1, 3, 5]);
        // Seeded by the seconds: the fastest of each front first.
        assert_eq!(mo(1, &last).order(&rung), vec![2, 0, 4, 3, 1, 5]);
        // The same order as pareto::nondominated_order gives, and the top ⌊6/3⌋ = 2 promoted.
        let order = mo(0, &last).order(&rung);
        assert_eq!(&order[..2], &[0, 2]);
        // An arm observed later with a better point changes the rung's order only if it is in it.
        last[6] = Some(vec![-2.0, -1.0]);
        assert_eq!(mo(0, &last).order(&rung), vec![0, 2, 4, 1, 3, 5]);
    }

    #[test]
    fn hyperband_brackets_follow_the_papers_listing() {
        // R = 9, eta = 3, r_min = 1: s_max = 2. Li et al. (2018), Algorithm 1:
        //   s = 2: n = 9, r = 1: rungs (9, 1), (3, 3), (1, 9)
        //   s = 1: n = ceil(3 * 3 / 2) = 5, r = 3: rungs (5, 3), (1, 9)
        //   s = 0: n = 3, r = 9: rung (3, 9)
        let mut h = Halving::new(Plan::Hyperband, 3, 0, 1);
        h.plan_brackets(9);
        assert_eq!(
            h.brackets,
            vec![
                vec![(9, 1), (3, 3), (1, 9)],
                vec![(5, 3), (1, 9)],
                vec![(3, 9)]
            ]
        );
        // R = 27 (the sklearn-grid pool): s_max = 3, brackets of 27, 12, 6 and 4 configurations.
        let mut h = Halving::new(Plan::Hyperband, 3, 0, 1);
        h.plan_brackets(27);
        let n0: Vec<usize> = h.brackets.iter().map(|b| b[0].0).collect();
        let r0: Vec<u32> = h.brackets.iter().map(|b| b[0].1).collect();
        assert_eq!(n0, vec![27, 12, 6, 4]);
        assert_eq!(r0, vec![1, 3, 9, 27]);
    }

    #[test]
    fn hyperband_trains_and_promotes_on_a_hand_made_pool() {
        // 20 configurations, 9 units; config i scores 0.01 i + 0.001 u, so the promoted arm of a
        // rung is its member with the largest config. One Hyperband iteration costs
        // 9·1 + 3·2 + 1·6 = 21, then 5·3 + 1·6 = 21, then 3·9 = 27 units: 69 in all, 17 draws.
        let pool = hand_pool(20, 9, |i| {
            (1..=9)
                .map(|u| 0.01 * i as f32 + 0.001 * u as f32)
                .collect()
        });
        let mut world = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            69.0,
            1.0,
            3,
        );
        let mut p = testing::build("hyperband", &[], 0);
        let mut rng = Rng::new(1);
        drive(
            &mut world,
            p.as_mut(),
            "hyperband",
            &mut rng,
            crate::replay::Overhead::None,
            &mut [],
        )
        .unwrap();
        assert_eq!(world.n_arms(), 17);
        assert_eq!(world.ledger().clock.used, 69.0);
        let units: Vec<u64> = world.ledger().pulls.clone();
        let cfg = world.arm_configs().to_vec();
        // Bracket s = 2 (arms 0..9): units 9, 3, 3 for the three best configs, 1 for the rest.
        let mut b1: Vec<(u32, u64)> = (0..9).map(|a| (cfg[a], units[a])).collect();
        b1.sort();
        let u1: Vec<u64> = b1.iter().rev().map(|x| x.1).collect();
        assert_eq!(u1, vec![9, 3, 3, 1, 1, 1, 1, 1, 1]);
        // Bracket s = 1 (arms 9..14): the best to 9 units, the rest at 3.
        let mut b2: Vec<(u32, u64)> = (9..14).map(|a| (cfg[a], units[a])).collect();
        b2.sort();
        let u2: Vec<u64> = b2.iter().rev().map(|x| x.1).collect();
        assert_eq!(u2, vec![9, 3, 3, 3, 3]);
        // Bracket s = 0 (arms 14..17): all to 9 units.
        assert_eq!(&units[14..17], &[9, 9, 9]);
    }

    #[test]
    fn random_search_trains_each_draw_to_full_fidelity() {
        let pool = hand_pool(5, 4, |i| vec![0.1 * i as f32; 4]);
        let mut world = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            10.0,
            1.0,
            2,
        );
        let mut p = testing::build("random-search", &[], 0);
        drive(
            &mut world,
            p.as_mut(),
            "random-search",
            &mut Rng::new(1),
            crate::replay::Overhead::None,
            &mut [],
        )
        .unwrap();
        assert_eq!(world.ledger().pulls, vec![4, 4, 2]);
    }
    #[test]
    fn one_piece_of_work_per_configuration_finds_what_unit_steps_find() {
        use crate::replay::pool::{PoolBudget, PoolWorldConfig};
        // The recorded MLP grids of sklearn-grid on two tasks, budgets of units and seconds: with
        // one worker and the same seed, the same configurations train the same units, so the
        // recommendation and the budget used agree; only the decisions differ (one per
        // configuration instead of one per unit).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let pool = crate::trace::pool::load_pool_selecting(
            &root.join("traces/sklearn-grid"),
            false,
            Some(&|tasks: &[(String, i64)]| {
                tasks
                    .iter()
                    .filter(|(d, r)| *r == 0 && (d == "car" || d == "phoneme"))
                    .cloned()
                    .collect()
            }),
        )
        .unwrap();
        let mlp = pool
            .manifest
            .learners
            .iter()
            .position(|l| l.name == "mlp")
            .unwrap();
        let mut compared = 0;
        for task in &pool.tasks {
            for (unit, budget) in [(PoolBudget::Units, 100.0), (PoolBudget::Seconds, 30.0)] {
                for seed in 1..=3 {
                    let run = |work: &str| {
                        let cfg = PoolWorldConfig {
                            budget_unit: unit,
                            ..PoolWorldConfig::default()
                        };
                        let mut world = PoolWorld::new(&pool, task, cfg, budget, 1.0, seed);
                        world.restrict_to_learners(&[mlp]);
                        let mut p = testing::build(
                            "random-search",
                            &[("work", toml::Value::String(work.into()))],
                            0,
                        );
                        drive(
                            &mut world,
                            p.as_mut(),
                            "random-search",
                            &mut Rng::new(seed),
                            crate::replay::Overhead::None,
                            &mut [],
                        )
                        .unwrap();
                        // Every unit of every piece of work was counted when it completed.
                        assert_eq!(world.in_flight(), 0, "{work}");
                        let l = world.ledger();
                        let r = world.recommend().unwrap();
                        (
                            (r.config, r.unit, r.score, r.test_score),
                            l.clock.used,
                            l.pulls.clone(),
                            l.decisions,
                            world.n_arms(),
                        )
                    };
                    let (a, b) = (run("unit"), run("configuration"));
                    assert_eq!((a.0, a.1, &a.2), (b.0, b.1, &b.2), "seed {seed}");
                    // A decision per unit (and one for a unit the budget cut off).
                    let units: u64 = a.2.iter().sum();
                    assert!(a.3 == units || a.3 == units + 1, "{} {units}", a.3);
                    assert_eq!(b.3 as usize, b.4, "one decision per configuration");
                    assert!(b.4 >= 3, "{} configurations", b.4);
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 12);
    }
}
