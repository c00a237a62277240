//! Asynchronous successive halving and asynchronous Hyperband in the pool world, for any number
//! of simulated workers.
//!
//! - `asha` (Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht & Talwalkar 2020, "A
//!   System for Massively Parallel Hyperparameter Tuning", MLSys, Algorithm 2): rungs
//!   k = 0, 1, … train to r_k = r_min η^(s + k) units (the last rung to R). When a worker is free,
//!   `get_job` looks from the top rung down for a configuration among the best ⌊n_k / η⌋ of the
//!   n_k results of rung k that is not yet promoted, and promotes it to rung k + 1; if there is
//!   none, it draws a new configuration into rung 0. A promotion needs no rung to be complete, so
//!   no worker waits for stragglers.
//! - `async-hyperband` (the same paper, Section 3.3: "asynchronous Hyperband" loops ASHA over
//!   brackets): brackets s = 0 … s_max, each an ASHA with early-stopping rate s; a new
//!   configuration goes to the brackets in turn, the most aggressive first (s = 0, whose bottom
//!   rung trains r_min units: Hyperband's first bracket, its s = s_max in the other notation),
//!   and promotions are looked for in every bracket before a new draw, the most aggressive
//!   bracket first.
//!
//! - `mo-asha` (Schmucker, Donini, Zafar, Perrone & Archambeau 2021, "Multi-objective
//!   multi-fidelity hyperparameter optimization with application to fairness"; the sort of
//!   Salinas, Perrone, Archambeau & Cruchant 2021, "A multi-objective perspective on jointly
//!   tuning hardware and hyperparameters", NAS workshop at ICLR): ASHA on several objectives
//!   (`[world] objectives`). A rung's results are ranked by non-dominated sorting, each front
//!   ordered as an ε-net seeded by one objective (`pareto::nondominated_order`), and the top
//!   ⌊n_k / η⌋ of that order are promotable. Syne Tune 0.16.0's MOASHA computes the same sort
//!   but reads its output as one priority per trial (`Bracket.on_result` takes the list of
//!   sorted indices for ranks), so its stop decisions do not follow the sort (the README shows
//!   it stopping a trial that dominates every other).
//!
//! Training is incremental, as the pool records one curve per configuration: a job trains the
//! configuration's next units up to its rung, one unit per decision, and a free worker first
//! continues a job whose configuration is not running. A configuration's rung result is its score
//! at the rung's last unit; a failed unit ends its curve and ranks it last. Ranking ties go to the
//! earlier-drawn arm. `R = 0` means the pool's full curve length. When nothing can be promoted and
//! nothing drawn, a worker waits for running work, and the policy stops when none runs.

use super::{Action, Family, Kind, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

/// η, R and r_min as Hyperband's (`hyperband.rs`), the same names and defaults.
fn common_params() -> Vec<ParamDef> {
    let mut p = vec![super::hyperband::eta_param()];
    p.extend(super::hyperband::r_params());
    p
}

/// ASHA's minimum early-stopping rate.
fn s_param() -> ParamDef {
    ParamDef {
        name: "s",
        kind: Kind::Int { min: 0, max: 100 },
        default: Value::Int(0),
        doc: "the minimum early-stopping rate: the bottom rung trains r_min eta^s units (the paper's s; 0 stops earliest)",
    }
}

pub fn family_asha() -> Family {
    let mut params = common_params();
    params.push(s_param());
    Family {
        name: "asha",
        summary: "asynchronous successive halving: promote a configuration as soon as it is in the top 1/eta of its rung, else draw one; no worker waits",
        source: "Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht & Talwalkar 2020, 'A System for Massively Parallel Hyperparameter Tuning', MLSys, Algorithm 2",
        worlds: WORLDS,
        parallel: WORLDS,
        params,
        build: |p: &Params, _| {
            Box::new(Asha::new(
                Brackets::One(p.int("s") as u32),
                p.int("eta") as u32,
                p.int("r_min") as u32,
                p.int("r_max") as u32,
            ))
        },
    }
}

/// The parameters of a rung ranked by several objectives (mo-asha, mo-hyperband).
pub(super) fn mo_params() -> Vec<ParamDef> {
    vec![
        ParamDef {
            name: "seed_objective",
            kind: Kind::Int { min: 0, max: 63 },
            default: Value::Int(0),
            doc: "the objective (0-based, in [world] objectives' order) whose best point opens each front's epsilon-net, so it is promoted first (Syne Tune's NonDominatedPriority dim; 0 is its default)",
        },
        ParamDef::choice(
            "scale",
            &["raw", "range"],
            "raw",
            "the units the epsilon-net measures distances in: raw, the recorded units (Syne Tune's; an objective of large numbers then decides the spread), or range, each objective divided by its range over the rung's results (the fronts are the same either way)",
        ),
        ParamDef::choice(
            "ranking",
            &["epsilon-net", "crowding"],
            "epsilon-net",
            "the order within each non-dominated front: epsilon-net (Salinas et al. 2021, Syne Tune's NonDominatedPriority) or crowding, NSGA-II's descending crowding distance (Deb et al. 2002; the extremes first), the two rules Schmucker et al. 2021 compare",
        ),
    ]
}

/// A rung's results (minimised, rows of `d`) best first: non-dominated fronts, each ordered by
/// `ranking` (`crowding`, or an ε-net seeded by objective `seed`, in distances scaled by range
/// when `by_range`).
pub(super) fn mo_order(
    points: &[f64],
    d: usize,
    seed: usize,
    by_range: bool,
    crowding: bool,
) -> Vec<usize> {
    if crowding {
        // Crowding distances are divided by each objective's range already.
        return crate::pareto::crowded_order(points, d);
    }
    if by_range {
        crate::pareto::nondominated_order(&scaled_by_range(points, d), d, seed)
    } else {
        crate::pareto::nondominated_order(points, d, seed)
    }
}

/// The directions of a cell's several objectives, or the error naming `family` when the
/// experiment measures one or `seed_objective` is out of range.
pub(super) fn mo_directions(
    family: &str,
    start: &crate::protocol::CellStart<'_>,
    seed_objective: usize,
) -> anyhow::Result<Vec<bool>> {
    let objectives = start.pool.as_ref().map_or(&[][..], |p| &p.objectives[..]);
    if objectives.len() < 2 {
        anyhow::bail!(
            "{family} ranks several objectives, but this experiment measures one; name them in [world] objectives (e.g. objectives = [\"val_acc\", \"latency\"])"
        );
    }
    if seed_objective >= objectives.len() {
        anyhow::bail!(
            "{family}: seed_objective = {seed_objective} but the experiment measures {} objectives (0 to {})",
            objectives.len(),
            objectives.len() - 1
        );
    }
    Ok(objectives.iter().map(|o| o.1).collect())
}

pub fn family_mo_asha() -> Family {
    let mut params = common_params();
    params.push(s_param());
    params.extend(mo_params());
    Family {
        name: "mo-asha",
        summary: "several objectives: ASHA whose rungs rank results by non-dominated sorting, an epsilon-net within each front; promote from the top 1/eta",
        source: "Schmucker, Donini, Zafar, Perrone & Archambeau 2021, 'Multi-objective multi-fidelity hyperparameter optimization with application to fairness' (MO-ASHA); the sort: Salinas, Perrone, Archambeau & Cruchant 2021, 'A multi-objective perspective on jointly tuning hardware and hyperparameters', NAS workshop at ICLR (non-dominated fronts, each an epsilon-net after Clarkson 2005); ASHA: Li et al. 2020, MLSys, Algorithm 2",
        worlds: WORLDS,
        parallel: WORLDS,
        params,
        build: |p: &Params, _| {
            Box::new(MoAsha {
                asha: Asha::new(
                    Brackets::One(p.int("s") as u32),
                    p.int("eta") as u32,
                    p.int("r_min") as u32,
                    p.int("r_max") as u32,
                ),
                seed_objective: p.int("seed_objective") as usize,
                by_range: p.text("scale") == "range",
                crowding: p.text("ranking") == "crowding",
            })
        },
    }
}

/// MO-ASHA: ASHA ranking several objectives; it learns their directions when its cell begins.
struct MoAsha {
    asha: Asha,
    seed_objective: usize,
    by_range: bool,
    crowding: bool,
}

impl crate::protocol::Policy for MoAsha {
    fn begin(&mut self, start: &crate::protocol::CellStart<'_>) -> anyhow::Result<()> {
        let maximize = mo_directions("mo-asha", start, self.seed_objective)?;
        self.asha.mo = Some(MoSetup {
            maximize,
            seed_objective: self.seed_objective,
            by_range: self.by_range,
            crowding: self.crowding,
        });
        Ok(())
    }
    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> anyhow::Result<Action> {
        Ok(Rule::decide(&mut self.asha, view, rng))
    }
    fn observe(&mut self, obs: &Observation<'_>) {
        Rule::observe(&mut self.asha, obs)
    }
}

/// Several objectives: their directions and the objective that seeds each front's ε-net.
#[derive(Clone, Debug)]
struct MoSetup {
    maximize: Vec<bool>,
    seed_objective: usize,
    /// Distances with each objective divided by its range over the rung (else recorded units).
    by_range: bool,
    /// Each front by crowding distance (NSGA-II) instead of an ε-net.
    crowding: bool,
}

/// A rung's results on several objectives: the finished ones' objectives (minimised, one row
/// each) and arms, the failed arms, and the promotion order (made again after a result arrives).
#[derive(Clone, Debug, Default)]
struct MoRung {
    points: Vec<f64>,
    arms: Vec<usize>,
    failed: Vec<usize>,
    /// Arms, best first (the failed last); stale when `dirty`.
    order: Vec<usize>,
    dirty: bool,
}

impl MoRung {
    fn len(&self) -> usize {
        self.arms.len() + self.failed.len()
    }

    fn order(&mut self, d: usize, seed: usize, by_range: bool, crowding: bool) -> &[usize] {
        if self.dirty {
            self.order = mo_order(&self.points, d, seed, by_range, crowding)
                .into_iter()
                .map(|i| self.arms[i])
                .chain(self.failed.iter().copied())
                .collect();
            self.dirty = false;
        }
        &self.order
    }
}

/// Each objective of `points` (rows of `d`) divided by its range over them (left as it is where
/// the range is 0), so that distances weigh the objectives alike.
pub(super) fn scaled_by_range(points: &[f64], d: usize) -> Vec<f64> {
    let mut lo = vec![f64::INFINITY; d];
    let mut hi = vec![f64::NEG_INFINITY; d];
    for row in points.chunks(d) {
        for j in 0..d {
            lo[j] = lo[j].min(row[j]);
            hi[j] = hi[j].max(row[j]);
        }
    }
    points
        .chunks(d)
        .flat_map(|row| {
            (0..d).map(|j| {
                let r = hi[j] - lo[j];
                if r > 0.0 { row[j] / r } else { row[j] }
            })
        })
        .collect::<Vec<f64>>()
}

pub fn family_async_hyperband() -> Family {
    Family {
        name: "async-hyperband",
        summary: "asynchronous Hyperband: ASHA brackets of every early-stopping rate, new configurations to the brackets in turn",
        source: "Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht & Talwalkar 2020, 'A System for Massively Parallel Hyperparameter Tuning', MLSys, Section 3.3 (asynchronous Hyperband looping ASHA over brackets)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: common_params(),
        build: |p: &Params, _| {
            Box::new(Asha::new(
                Brackets::All,
                p.int("eta") as u32,
                p.int("r_min") as u32,
                p.int("r_max") as u32,
            ))
        },
    }
}

#[derive(Clone, Copy, Debug)]
enum Brackets {
    /// One bracket with this early-stopping rate.
    One(u32),
    /// Every rate 0 … s_max.
    All,
}

/// One ASHA bracket: its rungs' units and results.
#[derive(Clone, Debug)]
struct Bracket {
    /// Units trained at each rung, increasing; the last is R.
    units: Vec<u32>,
    /// Per rung: (score at the rung, arm), best first (ties: the earlier arm first).
    results: Vec<Vec<(f64, usize)>>,
    /// Per rung: every result before this place is promoted or failed (results are only ever
    /// inserted and promoted, so the scan for a promotion resumes here).
    hint: Vec<usize>,
    /// Several objectives (MO-ASHA): per rung, its results; empty otherwise.
    mo: Vec<MoRung>,
}

impl Bracket {
    fn new(units: Vec<u32>) -> Self {
        Bracket {
            results: vec![Vec::new(); units.len()],
            hint: vec![0; units.len()],
            mo: vec![MoRung::default(); units.len()],
            units,
        }
    }

    /// Add `arm`'s result at rung `k` on several objectives (minimised; None: failed).
    fn add_mo(&mut self, k: usize, objectives: Option<Vec<f64>>, arm: usize) {
        let r = &mut self.mo[k];
        match objectives {
            Some(x) => {
                r.points.extend(x);
                r.arms.push(arm);
            }
            None => r.failed.push(arm),
        }
        r.dirty = true;
    }

    /// As `promotable`, ranking each rung by the non-dominated sort with an ε-net.
    fn promotable_mo(
        &mut self,
        eta: usize,
        setup: &MoSetup,
        promoted: impl Fn(usize, usize) -> bool,
    ) -> Option<(usize, usize)> {
        let d = setup.maximize.len();
        for k in (0..self.units.len().saturating_sub(1)).rev() {
            let rung = &mut self.mo[k];
            let top = rung.len() / eta;
            let n_ok = rung.arms.len();
            let order = rung.order(d, setup.seed_objective, setup.by_range, setup.crowding);
            if let Some(&a) = order[..top.min(n_ok)].iter().find(|&&a| !promoted(a, k)) {
                return Some((a, k + 1));
            }
        }
        None
    }

    /// Add `arm`'s result at rung `k`, keeping the rung sorted.
    fn add(&mut self, k: usize, score: f64, arm: usize) {
        let r = &mut self.results[k];
        let at = r.partition_point(|&(x, a)| x > score || (x == score && a < arm));
        r.insert(at, (score, arm));
        self.hint[k] = self.hint[k].min(at);
    }

    /// The best configuration of some rung (top rung first) that is among the top ⌊n_k / η⌋ of
    /// its rung and not yet promoted: (arm, the rung it goes to). `promoted(arm, k)` says whether
    /// the arm has left rung k.
    fn promotable(
        &mut self,
        eta: usize,
        promoted: impl Fn(usize, usize) -> bool,
    ) -> Option<(usize, usize)> {
        for k in (0..self.units.len().saturating_sub(1)).rev() {
            let rung = &self.results[k];
            let top = rung.len() / eta;
            let h = &mut self.hint[k];
            while *h < top && (!rung[*h].0.is_finite() || promoted(rung[*h].1, k)) {
                *h += 1;
            }
            if *h < top {
                return Some((rung[*h].1, k + 1));
            }
        }
        None
    }
}

/// A configuration's job: its bracket, rung and the units it trains to.
#[derive(Clone, Copy, Debug)]
struct Job {
    bracket: usize,
    rung: usize,
    target: u32,
    /// Its rung result is recorded.
    done: bool,
}

pub struct Asha {
    plan: Brackets,
    eta: u32,
    r_min: u32,
    r_max: u32,
    brackets: Vec<Bracket>,
    /// Several objectives (MO-ASHA), set when its cell begins.
    mo: Option<MoSetup>,
    /// Per arm (index = arm id).
    jobs: Vec<Option<Job>>,
    /// Arms whose job goes on and that are not running, in the order their last unit finished.
    ready: std::collections::VecDeque<usize>,
    next_bracket: usize,
}

impl Asha {
    fn new(plan: Brackets, eta: u32, r_min: u32, r_max: u32) -> Self {
        Asha {
            plan,
            eta,
            r_min,
            r_max,
            brackets: Vec::new(),
            mo: None,
            jobs: Vec::new(),
            ready: std::collections::VecDeque::new(),
            next_bracket: 0,
        }
    }

    /// The brackets' rungs for a pool whose curves have `units` units.
    fn plan(&mut self, units: u32) {
        let r_max = if self.r_max == 0 {
            units
        } else {
            self.r_max.min(units)
        };
        let r_min = self.r_min.clamp(1, r_max);
        let eta = u64::from(self.eta);
        let rungs = |s: u32| -> Vec<u32> {
            let mut out = Vec::new();
            let mut r = u64::from(r_min) * eta.pow(s.min(40));
            while r < u64::from(r_max) {
                out.push(r as u32);
                r *= eta;
            }
            out.push(r_max);
            out
        };
        // s_max = floor(log_eta(R / r_min)).
        let mut s_max = 0u32;
        while u64::from(r_min) * eta.pow(s_max + 1) <= u64::from(r_max) {
            s_max += 1;
        }
        let rates: Vec<u32> = match self.plan {
            Brackets::One(s) => vec![s.min(s_max)],
            Brackets::All => (0..=s_max).collect(),
        };
        self.brackets = rates.into_iter().map(|s| Bracket::new(rungs(s))).collect();
    }

    fn set_job(&mut self, arm: usize, job: Job) {
        if self.jobs.len() <= arm {
            self.jobs.resize(arm + 1, None);
        }
        self.jobs[arm] = Some(job);
    }
}

impl Rule for Asha {
    fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
        let Some(pool) = view.pool else {
            return Action::Draw;
        };
        if self.brackets.is_empty() {
            self.plan(pool.units);
        }
        // Continue a job whose configuration is not running.
        if let Some(a) = self.ready.pop_front() {
            return Action::Pull(a);
        }
        // get_job: a promotion, the most aggressive bracket first. An arm has left rung k when
        // its job is at a higher rung.
        let eta = self.eta as usize;
        let jobs = &self.jobs;
        let promoted = |a: usize, k: usize| jobs[a].is_some_and(|j| j.rung > k);
        let mo = &self.mo;
        let found = self.brackets.iter_mut().enumerate().find_map(|(b, br)| {
            match mo {
                Some(setup) => br.promotable_mo(eta, setup, promoted),
                None => br.promotable(eta, promoted),
            }
            .map(|(a, k)| (b, a, k))
        });
        if let Some((b, arm, k)) = found {
            let target = self.brackets[b].units[k];
            self.set_job(
                arm,
                Job {
                    bracket: b,
                    rung: k,
                    target,
                    done: false,
                },
            );
            return Action::Pull(arm);
        }
        if pool.undrawn > 0 {
            // A new configuration at the bottom rung; the brackets take turns in Hyperband's
            // order, the most aggressive first: ASHA's rate s = 0 (bottom rung r_min, the
            // most rungs) is Hyperband's s = s_max (Li et al. 2018, Algorithm 1, whose outer
            // loop runs s = s_max … 0; mlr3hyperband's asynchronous Hyperband, citing Li et
            // al. 2020, also starts with the bracket whose base stage gets r_min).
            let b = self.next_bracket % self.brackets.len();
            self.next_bracket += 1;
            let target = self.brackets[b].units[0];
            self.set_job(
                view.n_arms,
                Job {
                    bracket: b,
                    rung: 0,
                    target,
                    done: false,
                },
            );
            return Action::Draw;
        }
        if view.pending.is_empty() {
            Action::Stop
        } else {
            Action::Wait
        }
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        let Some(Some(job)) = self.jobs.get(obs.arm).copied() else {
            return;
        };
        if job.done {
            return;
        }
        // A unit the job trains: the job ends at its target, or when the curve ends.
        let trained = obs.arm_clock as u32;
        if trained < job.target && !obs.exhausted {
            self.ready.push_back(obs.arm);
            return;
        }
        // The rung result: the score at the rung's last unit; a curve that failed or ended below
        // the rung ranks last (the world marks it done, so it is never trained again).
        let score = match obs.reward {
            Some(r) if trained >= job.target => r,
            _ => f64::NEG_INFINITY,
        };
        self.jobs[obs.arm] = Some(Job { done: true, ..job });
        if let Some(setup) = &self.mo {
            // Minimised; a failed or short curve, or an objective the unit does not record, is
            // a failed result (ranked last).
            let x = score
                .is_finite()
                .then(|| crate::pareto::minimised(obs.objectives, &setup.maximize))
                .flatten();
            self.brackets[job.bracket].add_mo(job.rung, x, obs.arm);
            return;
        }
        self.brackets[job.bracket].add(job.rung, score, obs.arm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;
    use crate::replay::pool::{PoolWorld, PoolWorldConfig, tests::hand_pool};
    use crate::replay::{Overhead, Step, World, drive_workers};

    /// 30 configurations of 9 units, every unit 0.125 s (exact in binary); config i scores 0.01 i + 0.001 u.
    fn equal_cost_pool() -> crate::trace::pool::Pool {
        let mut pool = hand_pool(30, 9, |i| {
            (1..=9)
                .map(|u| 0.01 * i as f32 + 0.001 * u as f32)
                .collect()
        });
        for c in &mut pool.tasks[0].curves {
            c.cost_s = vec![0.125; c.cost_s.len()];
        }
        pool
    }

    /// Run `policy` with `workers` on the pool for `budget` units: the clock and the steps.
    fn run(
        pool: &crate::trace::pool::Pool,
        policy: &str,
        params: &[(&str, toml::Value)],
        workers: usize,
        budget: f64,
    ) -> (crate::replay::Clock, Vec<Step>, Vec<u64>) {
        let mut world = PoolWorld::new(
            pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            budget,
            1.0,
            7,
        );
        let mut p = testing::build(policy, params, 0);
        let mut steps = Vec::new();
        drive_workers(
            &mut world,
            p.as_mut(),
            policy,
            &mut Rng::new(1),
            Overhead::None,
            workers,
            &mut [&mut steps],
        )
        .unwrap();
        let l = world.ledger();
        (l.clock.clone(), steps, l.pulls.clone())
    }

    #[test]
    fn synchronous_halving_idles_at_its_rungs_and_asha_does_not() {
        // One round of successive halving with n = 9, eta = 3, units 1, 3, 9: 9·1 + 3·2 + 1·6 =
        // 21 units of c = 0.125 s on 3 workers. Synchronous: rung 0 takes 3 rounds (3c), rung 1
        // two units per worker (2c), rung 2 six units on one worker while two wait (6c):
        // makespan 11c = 1.375 s, idle 2 · 6c = 1.5 worker-seconds. ASHA never waits: 21 units
        // in 7 rounds of 3, makespan 7c = 0.875 s, no idle time.
        let pool = equal_cost_pool();
        let sh = [
            ("n", toml::Value::Integer(9)),
            ("r_max", toml::Value::Integer(9)),
        ];
        let (c, _, pulls) = run(&pool, "successive-halving", &sh, 3, 21.0);
        let mut units = pulls.clone();
        units.sort_unstable();
        assert_eq!(units, vec![1, 1, 1, 1, 1, 1, 3, 3, 9]);
        assert_eq!((c.wall, c.idle()), (1.375, 1.5));
        let (a, steps, _) = run(
            &pool,
            "asha",
            &[("r_max", toml::Value::Integer(9))],
            3,
            21.0,
        );
        assert_eq!((a.wall, a.idle()), (0.875, 0.0));
        assert_eq!(steps.len(), 21);
        // With one worker the two take the same time: all work, no idle.
        let (c1, _, _) = run(&pool, "successive-halving", &sh, 1, 21.0);
        assert_eq!((c1.wall, c1.idle()), (2.625, 0.0));
    }

    #[test]
    fn asha_promotes_the_best_third_of_each_rung_without_waiting_for_it_to_fill() {
        // One worker, R = 9, rungs 1, 3, 9; the seed draws configs 24, 12, 15, 28, 0, 5, 10, 9,
        // 18, … (a larger config scores higher at every unit).
        let pool = equal_cost_pool();
        let (_, steps, _) = run(
            &pool,
            "asha",
            &[("r_max", toml::Value::Integer(9))],
            1,
            40.0,
        );
        let seq: Vec<(char, u32, u32)> = steps
            .iter()
            .take(21)
            .map(|s| {
                let a = if s.action == crate::replay::ActionKind::Draw {
                    'd'
                } else {
                    'p'
                };
                (a, s.config, s.fidelity)
            })
            .collect();
        let mut want = vec![('d', 24, 1), ('d', 12, 1), ('d', 15, 1)];
        // Three results in rung 0: the best (24) goes to 3 units.
        want.extend([('p', 24, 2), ('p', 24, 3)]);
        // A fourth result: floor(4/3) = 1 and 28 is now the best of rung 0, not yet promoted, so
        // it goes too (ASHA promotes on what it has seen; no rung waits to fill).
        want.extend([('d', 28, 1), ('p', 28, 2), ('p', 28, 3)]);
        // Draws until 9 results make the top 3 of rung 0 hold an unpromoted config (18).
        want.extend([
            ('d', 0, 1),
            ('d', 5, 1),
            ('d', 10, 1),
            ('d', 9, 1),
            ('d', 18, 1),
        ]);
        want.extend([('p', 18, 2), ('p', 18, 3)]);
        // Rung 1 holds three results (24, 28, 18): its best, 28, trains to 9 units.
        want.extend((4..=9).map(|u| ('p', 28, u)));
        assert_eq!(seq, want);
    }

    #[test]
    fn the_rungs_follow_the_papers_geometric_resources() {
        // R = 27, eta = 3, r = 1: s_max = 3; ASHA with s = 0 trains 1, 3, 9, 27 units.
        let mut a = Asha::new(Brackets::One(0), 3, 1, 0);
        a.plan(27);
        assert_eq!(a.brackets.len(), 1);
        assert_eq!(a.brackets[0].units, vec![1, 3, 9, 27]);
        let mut a = Asha::new(Brackets::One(2), 3, 1, 0);
        a.plan(27);
        assert_eq!(a.brackets[0].units, vec![9, 27]);
        // Asynchronous Hyperband: every rate 0 … 3.
        let mut h = Asha::new(Brackets::All, 3, 1, 0);
        h.plan(27);
        let units: Vec<Vec<u32>> = h.brackets.iter().map(|b| b.units.clone()).collect();
        assert_eq!(
            units,
            vec![vec![1, 3, 9, 27], vec![3, 9, 27], vec![9, 27], vec![27]]
        );
    }

    #[test]
    fn a_configuration_is_promoted_once_it_is_in_the_top_third_of_its_rung() {
        let mut b = Bracket::new(vec![1, 3, 9]);
        let mut left: Vec<usize> = Vec::new();
        b.add(0, 0.5, 0);
        b.add(0, 0.7, 1);
        // Two results: floor(2/3) = 0, nothing to promote.
        assert_eq!(b.promotable(3, |a, _| left.contains(&a)), None);
        b.add(0, 0.6, 2);
        // Three: the best one (arm 1) goes to rung 1.
        assert_eq!(b.promotable(3, |a, _| left.contains(&a)), Some((1, 1)));
        left.push(1);
        assert_eq!(b.promotable(3, |a, _| left.contains(&a)), None);
        // Six results, top two: arm 3 (0.9) and arm 1 (promoted): arm 3 goes.
        for (x, a) in [(0.9, 3), (0.2, 4), (0.65, 5)] {
            b.add(0, x, a);
        }
        assert_eq!(b.promotable(3, |a, _| left.contains(&a)), Some((3, 1)));
        // Ties rank the earlier arm first; a failed result (-inf) is never promoted.
        let mut t = Bracket::new(vec![1, 3]);
        for (x, a) in [(f64::NEG_INFINITY, 0), (0.5, 2), (0.5, 1)] {
            t.add(0, x, a);
        }
        assert_eq!(t.results[0][0], (0.5, 1));
        assert_eq!(t.promotable(3, |_, _| false), Some((1, 1)));
        let mut f = Bracket::new(vec![1, 3]);
        for a in 0..3 {
            f.add(0, f64::NEG_INFINITY, a);
        }
        assert_eq!(f.promotable(3, |_, _| false), None);
    }
    #[test]
    fn async_hyperband_draws_into_the_most_aggressive_bracket_first() {
        // R = 9, eta = 3: brackets s = 0 (rungs 1, 3, 9), 1 (3, 9), 2 (9). One worker, budget
        // 9 + 3 + 1 units: the first configuration trains 1 unit (s = 0), the second 3 (s = 1),
        // the third 9 (s = 2), in that order; the most aggressive bracket comes first.
        let pool = equal_cost_pool();
        let (_, steps, pulls) = run(
            &pool,
            "async-hyperband",
            &[("r_max", toml::Value::Integer(9))],
            1,
            13.0,
        );
        assert_eq!(pulls, vec![1, 3, 9]);
        let arms: Vec<u32> = steps.iter().map(|s| s.arm).collect();
        assert_eq!(arms, vec![0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    }

    /// MO-ASHA's rung: results ranked by non-dominated fronts, each an ε-net; the top
    /// ⌊n / η⌋ are promotable, best first; a failed result never is, but counts in n.
    #[test]
    fn mo_asha_promotes_from_the_top_of_the_non_dominated_order() {
        let setup = MoSetup {
            maximize: vec![true, false],
            seed_objective: 0,
            by_range: false,
            crowding: false,
        };
        let mut b = Bracket::new(vec![1, 3, 9]);
        // (accuracy, seconds) minimised as (-accuracy, seconds). Front 1: arms 0 (0.9, 5),
        // 2 (0.8, 1) and 4 (0.85, 3); arm 1 (0.7, 6) and arm 3 (0.6, 2) behind; arm 5 failed.
        for (arm, x) in [(0, [-0.9, 5.0]), (1, [-0.7, 6.0]), (2, [-0.8, 1.0])] {
            b.add_mo(0, Some(x.to_vec()), arm);
        }
        let none = |_: usize, _: usize| false;
        // n = 3: the top one, the best accuracy (the ε-net's seed).
        assert_eq!(b.promotable_mo(3, &setup, none), Some((0, 1)));
        for (arm, x) in [(3, Some([-0.6, 2.0])), (4, Some([-0.85, 3.0])), (5, None)] {
            b.add_mo(0, x.map(|x| x.to_vec()), arm);
        }
        // n = 6: the top two. Front 1 as an ε-net from arm 0: arm 2 is farthest from it.
        assert_eq!(
            b.mo[0].order(2, 0, false, false).to_vec(),
            vec![0, 2, 4, 1, 3, 5],
            "fronts {{0, 2, 4}} and {{1, 3}} (each from its best accuracy), then the failed"
        );
        let promoted = |a: usize, _: usize| a == 0;
        assert_eq!(b.promotable_mo(3, &setup, promoted), Some((2, 1)));
        let both = |a: usize, _: usize| a == 0 || a == 2;
        assert_eq!(b.promotable_mo(3, &setup, both), None);
        // Seeded by the seconds, the fastest of the front comes first.
        let fast = MoSetup {
            seed_objective: 1,
            ..setup
        };
        b.mo[0].dirty = true;
        assert_eq!(b.promotable_mo(3, &fast, none), Some((2, 1)));
        // Where the scale decides, one front: A (0, 100), B (10, 0), C (1, 60), D (6, 30). Raw:
        // from A the farthest is B; then C is 40 from A, D 30.3 from B: C third. By range
        // (x / 10, y / 100): C is 0.41 from A, D 0.5 from B: D third.
        let mut r = MoRung::default();
        for (arm, x) in [
            (0, [0.0, 100.0]),
            (1, [10.0, 0.0]),
            (2, [1.0, 60.0]),
            (3, [6.0, 30.0]),
        ] {
            r.points.extend(x);
            r.arms.push(arm);
        }
        r.dirty = true;
        assert_eq!(r.order(2, 0, false, false).to_vec(), vec![0, 1, 2, 3]);
        r.dirty = true;
        assert_eq!(r.order(2, 0, true, false).to_vec(), vec![0, 1, 3, 2]);
        // ranking = crowding (NSGA-II): the extremes A and B, then D (x: (10 - 1)/10, y:
        // (60 - 0)/100: 1.5) before C ((6 - 0)/10 + (100 - 30)/100 = 1.3), whatever the seed
        // objective or scale.
        for (seed, by_range) in [(0, false), (1, false), (0, true)] {
            r.dirty = true;
            assert_eq!(r.order(2, seed, by_range, true).to_vec(), vec![0, 1, 3, 2]);
        }
    }
}
