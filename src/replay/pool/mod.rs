//! The pool world: configuration-level replay (D-TTTS, Hyperband, Mutant-UCB, CASH).
//!
//! Arms are configurations of a recorded pool (`trace::pool`), each with a learning curve of
//! `units` fidelity units on the task being replayed. A policy acts with
//! - `Draw`: a fresh configuration, drawn uniformly without replacement with the cell's seed,
//!   becomes a new arm and trains its first unit;
//! - `Mutate(arm)`: an undrawn grid neighbour of `arm`'s configuration (uniformly among them)
//!   becomes a new arm and trains its first unit. Replay cannot inherit the parent's trained
//!   weights, as Brégère & Keisler's mutants do: the mutant starts from unit 1 of its own curve.
//!   When every neighbour is drawn already, the mutation falls back to a fresh draw (counted);
//! - `Pull(arm)`: `arm` trains one more unit.
//!
//! Training unit u of an arm reveals that unit's recorded validation score and charges the
//! budget: one unit (`budget_unit = units`) or the unit's recorded cost (`seconds`). A failed or
//! timed-out unit reveals nothing and ends the curve; it is charged too, unless
//! `failures_consume_budget = false` (DRAGON's convention for Mutant-UCB). Pulling an arm whose curve has ended is a
//! wasted decision: it reveals nothing and charges one unit (or, in seconds, the arm's last unit's
//! cost), and is counted as an exhausted pull.
//!
//! The incumbent (anytime curves) is named: `best-seen` (the best unit score revealed so far) or
//! `last` (the best score any arm shows at its last trained unit). The recommendation at the end is
//! named separately: `best-seen`, `last`, or `mean-of-units` (the arm with the best mean over its
//! trained units, Mutant-UCB's choice), each with the test score of the same unit.

use super::{Clock, Incumbent, Ledger, Observation, PoolView, View, World, WorldKind};
use crate::protocol::Action;
use crate::rng::Rng;
use crate::trace::Status;
use crate::trace::pool::{Pool, PoolTask};

mod options;
pub use options::*;

pub struct PoolWorld<'a> {
    pool: &'a Pool,
    task: &'a PoolTask,
    cfg: PoolWorldConfig,
    sign: f64,
    rng: Rng,
    /// Configurations in draw order (a seeded permutation), consumed from `next`.
    order: Vec<u32>,
    next: usize,
    drawn: Vec<bool>,
    undrawn: usize,
    /// See `PoolView::open`.
    open: Vec<bool>,
    n_open: usize,
    is_default: Vec<bool>,
    defaults: Vec<Option<u32>>,
    ledger: Ledger,
    last: Vec<f64>,
    done: Vec<bool>,
    config: Vec<u32>,
    /// Per arm: the sum of its ok unit rewards and their count (for `mean-of-units`).
    sums: Vec<(f64, u32)>,
    best_seen: Option<(usize, u32, f64)>,
    /// Budget used when `best_seen` came in.
    best_seen_at: f64,
    /// Per arm: budget used when its last ok unit came in.
    ok_at: Vec<f64>,
    /// Results in flight, (arm, unit, reward): they count for the best seen when their work
    /// completes, so that among equal scores the first *revealed* is kept with any number of
    /// workers (with one, work completes before the next starts).
    in_flight: Vec<(usize, u32, f64)>,
    pub draws: u64,
    pub mutations: u64,
    pub mutation_fallbacks: u64,
    /// Several objectives: which of the manifest's objectives a policy sees, and per arm their
    /// values at its last trained unit (arms x objectives, recorded orientation).
    objectives: Vec<usize>,
    arm_objectives: Vec<f64>,
    /// The curves' own objective columns (`Curve::extra` holds this many per unit).
    n_extra: usize,
}

impl<'a> PoolWorld<'a> {
    /// A world on `task` of `pool` with `budget` (in `cfg.budget_unit`); `sign` is +1 when higher
    /// scores are better, −1 otherwise; `seed` orders the draws.
    pub fn new(
        pool: &'a Pool,
        task: &'a PoolTask,
        cfg: PoolWorldConfig,
        budget: f64,
        sign: f64,
        seed: u64,
    ) -> Self {
        let mut rng = Rng::new(seed);
        let mut is_default = vec![false; pool.configs.len()];
        for &d in pool.defaults.iter().flatten() {
            is_default[d as usize] = true;
        }
        let mut order: Vec<u32> = (0..pool.configs.len() as u32)
            .filter(|&c| !task.curves[c as usize].is_empty() && !is_default[c as usize])
            .collect();
        rng.shuffle(&mut order);
        let undrawn = order.len();
        let mut open = vec![false; pool.configs.len()];
        for &c in &order {
            open[c as usize] = true;
        }
        let defaults = pool
            .defaults
            .iter()
            .map(|d| d.filter(|&c| !task.curves[c as usize].is_empty()))
            .collect();
        PoolWorld {
            pool,
            task,
            cfg,
            sign,
            rng,
            order,
            next: 0,
            drawn: vec![false; pool.configs.len()],
            undrawn,
            n_open: undrawn,
            open,
            is_default,
            defaults,
            ledger: Ledger::new(
                0,
                match cfg.budget_unit {
                    PoolBudget::Units => Clock::counting(budget),
                    PoolBudget::Seconds => Clock::timed(budget, 0.0),
                },
            ),
            last: Vec::new(),
            done: Vec::new(),
            config: Vec::new(),
            sums: Vec::new(),
            best_seen: None,
            best_seen_at: f64::NAN,
            ok_at: Vec::new(),
            in_flight: Vec::new(),
            draws: 0,
            mutations: 0,
            mutation_fallbacks: 0,
            objectives: Vec::new(),
            arm_objectives: Vec::new(),
            n_extra: 0,
        }
    }

    /// Show the policy these objectives (indices into the manifest's objectives) with every
    /// observation (`Observation::objectives`).
    pub fn with_objectives(mut self, which: &[usize]) -> Self {
        self.objectives = which.to_vec();
        self.n_extra = self.pool.manifest.extra_columns().len();
        self
    }

    /// Only configurations of these learners (indices into the manifest's learners) can be
    /// drawn or mutated into; empty keeps all.
    pub fn restrict_to_learners(&mut self, learners: &[usize]) {
        if learners.is_empty() {
            return;
        }
        for (i, c) in self.pool.configs.iter().enumerate() {
            if !learners.contains(&c.learner) && !self.drawn[i] {
                self.drawn[i] = true;
                if !self.task.curves[i].is_empty() && !self.is_default[i] {
                    self.undrawn -= 1;
                }
                if self.open[i] {
                    self.open[i] = false;
                    self.n_open -= 1;
                }
            }
        }
        for (l, d) in self.defaults.iter_mut().enumerate() {
            if !learners.contains(&l) {
                *d = None;
            }
        }
    }

    /// The configuration (index into `pool.configs`) of each arm (the tests' view of it).
    #[cfg(test)]
    pub fn arm_configs(&self) -> &[u32] {
        &self.config
    }

    fn add_arm(&mut self, c: u32) -> usize {
        self.drawn[c as usize] = true;
        if !self.is_default[c as usize] {
            self.undrawn -= 1;
        }
        if self.open[c as usize] {
            self.open[c as usize] = false;
            self.n_open -= 1;
        }
        let l = &mut self.ledger;
        l.pulls.push(0);
        l.arm_clock.push(0.0);
        l.arm_best.push(f64::NEG_INFINITY);
        l.arm_time_s.push(0.0);
        self.last.push(f64::NEG_INFINITY);
        self.done.push(false);
        self.config.push(c);
        self.sums.push((0.0, 0));
        self.ok_at.push(f64::NAN);
        self.arm_objectives
            .extend(std::iter::repeat_n(f64::NAN, self.objectives.len()));
        self.config.len() - 1
    }

    fn draw_fresh(&mut self) -> Option<usize> {
        while self.next < self.order.len() {
            let c = self.order[self.next];
            self.next += 1;
            if !self.drawn[c as usize] {
                self.draws += 1;
                return Some(self.add_arm(c));
            }
        }
        None
    }

    /// Apply a policy's action; an action the world cannot take is an error in words.
    fn apply_action(&mut self, action: Action) -> Result<Observation<'_>, String> {
        if let Action::Retrain(a, from, to) = action {
            if a >= self.config.len() {
                return Err(format!(
                    "asked to retrain arm {a}, but only {} arms exist",
                    self.config.len()
                ));
            }
            let trained = self.ledger.pulls[a];
            if from == 0 || from > to || u64::from(to) > trained {
                return Err(format!(
                    "asked to retrain arm {a} over units {from} to {to}, but it has trained units 1 to {trained}: retrain units it has trained, from 1"
                ));
            }
            return Ok(self.retrain(a, from, to));
        }
        let to = match action {
            Action::Train(a, to) => {
                if a < self.config.len() && u64::from(to) <= self.ledger.pulls[a] {
                    return Err(format!(
                        "asked to train arm {a} to unit {to}, but it has trained {} units already: train to a later unit",
                        self.ledger.pulls[a]
                    ));
                }
                to
            }
            Action::DrawTo(0) | Action::ChooseTo(_, 0) => {
                return Err(
                    "asked to draw or choose and train to unit 0: units count from 1".into(),
                );
            }
            Action::DrawTo(to) | Action::ChooseTo(_, to) => to,
            _ => 0,
        };
        let arm = match action {
            Action::Pull(a) | Action::Train(a, _) => {
                if a >= self.config.len() {
                    return Err(format!(
                        "pulled arm {a}, but only {} arms exist",
                        self.config.len()
                    ));
                }
                a
            }
            Action::Stop | Action::Wait | Action::Retrain(..) => {
                return Err(
                    "asked to stop or wait, which the replay loop handles, not the world".into(),
                );
            }
            Action::Choose(c) | Action::ChooseTo(c, _) => {
                if self.cfg.max_arms.is_some_and(|m| self.config.len() >= m) {
                    return Err(format!(
                        "asked for a new arm beyond the cap of {} live arms",
                        self.config.len()
                    ));
                }
                let ci = c as usize;
                if ci >= self.pool.configs.len() {
                    return Err(format!(
                        "chose configuration {c}, but the pool has {}",
                        self.pool.configs.len()
                    ));
                }
                if self.task.curves[ci].is_empty() {
                    return Err(format!(
                        "chose configuration {c}, which has no curve on this task"
                    ));
                }
                let allowed_default = self.is_default[ci] && self.defaults.contains(&Some(c));
                if self.drawn[ci] || (self.is_default[ci] && !allowed_default) {
                    return Err(format!(
                        "chose configuration {c}, which is drawn already or of a learner the task does not keep"
                    ));
                }
                self.draws += 1;
                self.add_arm(c)
            }
            Action::Draw | Action::DrawTo(_) | Action::Mutate(_) => {
                if self.cfg.max_arms.is_some_and(|m| self.config.len() >= m) {
                    return Err(format!(
                        "asked for a new arm beyond the cap of {} live arms",
                        self.config.len()
                    ));
                }
                let new = match action {
                    Action::Mutate(p) => {
                        if p >= self.config.len() {
                            return Err(format!(
                                "mutated arm {p}, but only {} arms exist",
                                self.config.len()
                            ));
                        }
                        let parent = self.config[p] as usize;
                        let free: Vec<u32> = self.pool.neighbours[parent]
                            .iter()
                            .copied()
                            .filter(|&n| {
                                !self.drawn[n as usize] && !self.task.curves[n as usize].is_empty()
                            })
                            .collect();
                        self.mutations += 1;
                        if free.is_empty() {
                            self.mutation_fallbacks += 1;
                            self.draw_fresh()
                        } else {
                            let c = free[self.rng.below(free.len())];
                            Some(self.add_arm(c))
                        }
                    }
                    _ => self.draw_fresh(),
                };
                match new {
                    Some(a) => a,
                    None => {
                        return Err("asked for a new arm, but every configuration is drawn".into());
                    }
                }
            }
        };
        Ok(self.train(arm, to))
    }

    /// Charge one unit of recorded seconds `cost_s` and status `status` as the budget counts it
    /// (a failed unit only when failures consume budget). False when a budget of seconds cannot
    /// pay for it under `last_unit = "cut"`: it then spends what is left, and the cell ends.
    fn charge_unit(&mut self, cost_s: f64, status: Status) -> bool {
        if status != Status::Ok && !self.cfg.failures_consume_budget {
            return true;
        }
        let clock = &mut self.ledger.clock;
        let cost = match self.cfg.budget_unit {
            PoolBudget::Units => 1.0,
            PoolBudget::Seconds => cost_s,
        };
        if self.cfg.budget_unit == PoolBudget::Seconds
            && self.cfg.last_unit == LastUnit::Cut
            && clock.used + cost > clock.budget
        {
            clock.used = clock.budget;
            return false;
        }
        clock.spend(cost);
        true
    }

    /// Train `arm` again over units `from..=to` (trained before) in one decision: each unit's cost
    /// is charged again, as `train_unit` charges it (a seconds budget that cannot pay for a unit
    /// ends the cell), and its recorded score revealed again. The arm's units, the incumbent and
    /// the failures are unchanged: nothing new is learned.
    fn retrain(&mut self, arm: usize, from: u32, to: u32) -> Observation<'_> {
        self.ledger.decisions += 1;
        self.ledger.revealed.clear();
        let curve = &self.task.curves[self.config[arm] as usize];
        let mut reward = None;
        for u in (from - 1) as usize..to as usize {
            let cost_s = f64::from(curve.cost_s[u]);
            let status = curve.status[u];
            if !self.charge_unit(cost_s, status) {
                reward = None;
                break;
            }
            let l = &mut self.ledger;
            l.arm_time_s[arm] += cost_s;
            let ok = status == Status::Ok;
            let r = self.sign * f64::from(curve.score[u]);
            l.revealed.push(crate::protocol::Revealed {
                time: (u + 1) as f64,
                reward: if ok { r } else { f64::NAN },
                ok,
            });
            reward = ok.then_some(r);
            if l.clock.done() {
                break;
            }
        }
        let l = &self.ledger;
        Observation {
            arm,
            reward,
            revealed: &l.revealed,
            arm_clock: l.arm_clock[arm],
            exhausted: self.done[arm],
            objectives: self.arm_objectives(arm),
        }
    }

    /// Train `arm` up to unit `to` (at least one more unit) in one decision: unit by unit as
    /// `train_unit`, until unit `to`, the end of its curve, a failed unit, or the budget.
    fn train(&mut self, arm: usize, to: u32) -> Observation<'_> {
        self.ledger.decisions += 1;
        self.ledger.revealed.clear();
        let mut reward;
        loop {
            let (r, go_on) = self.train_unit(arm);
            reward = r;
            if !go_on
                || self.done[arm]
                || self.ledger.pulls[arm] >= u64::from(to)
                || self.ledger.clock.done()
            {
                break;
            }
        }
        let l = &self.ledger;
        Observation {
            arm,
            reward,
            revealed: &l.revealed,
            arm_clock: l.arm_clock[arm],
            exhausted: self.done[arm],
            objectives: self.arm_objectives(arm),
        }
    }

    /// Train `arm` one more unit: its reward (None if it failed or revealed nothing), and whether
    /// training can go on (false once the budget cut the unit off or the curve had ended).
    fn train_unit(&mut self, arm: usize) -> (Option<f64>, bool) {
        let task = self.task;
        let curve = &task.curves[self.config[arm] as usize];
        let u = self.ledger.pulls[arm] as usize;
        let l = &mut self.ledger;
        if self.done[arm] || u >= curve.len() {
            self.done[arm] = true;
            let cost = match self.cfg.budget_unit {
                PoolBudget::Units => 1.0,
                PoolBudget::Seconds => curve.cost_s.last().map_or(0.0, |&c| f64::from(c)),
            };
            l.clock.spend(cost);
            l.exhausted_pulls += 1;
            l.exhausted_budget += cost;
            return (None, false);
        }
        let cost_s = f64::from(curve.cost_s[u]);
        let status = curve.status[u];
        if !self.charge_unit(cost_s, status) {
            // The unit does not finish within the budget: it costs what is left, reveals
            // nothing, and the cell ends.
            return (None, false);
        }
        let l = &mut self.ledger;
        l.pulls[arm] += 1;
        l.arm_clock[arm] = (u + 1) as f64;
        l.arm_time_s[arm] += cost_s;
        let reward = self.sign * f64::from(curve.score[u]);
        let world_time = l.clock.used;
        l.reveal(arm, u, (u + 1) as f64, status, reward);
        let ok = status == Status::Ok;
        if !self.objectives.is_empty() {
            let m = &self.pool.manifest;
            let d = self.objectives.len();
            for (k, &o) in self.objectives.iter().enumerate() {
                self.arm_objectives[arm * d + k] = if ok {
                    curve.objective(&m.objectives[o], self.n_extra, u)
                } else {
                    f64::NAN
                };
            }
        }
        if ok {
            self.last[arm] = reward;
            self.sums[arm].0 += reward;
            self.sums[arm].1 += 1;
            self.in_flight.push((arm, u as u32, reward));
        }
        self.done[arm] = !ok || u + 1 >= curve.len() || u + 1 >= self.pool.manifest.units as usize;
        if self.cfg.incumbent == IncumbentRule::Last {
            l.incumbent = self
                .last
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .fold(None, |best: Option<(usize, f64)>, (i, &v)| match best {
                    Some((_, b)) if b >= v => best,
                    _ => Some((i, v)),
                })
                .map(|(i, v)| Incumbent {
                    arm: i,
                    eval: l.pulls[i] as usize - 1,
                    reward: v,
                    found_at: world_time,
                });
        }
        (ok.then_some(reward), true)
    }

    /// Results of work that has not completed (none once the replay loop has finished a cell).
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The configuration the cell recommends under the configured rule.
    pub fn recommend(&self) -> Option<Recommended> {
        let (arm, unit) = match self.cfg.recommendation {
            Recommendation::BestSeen => {
                // Results still in flight (a world driven without the loop, which completes
                // every piece of work before a cell ends) count in the order they started.
                let best = self
                    .in_flight
                    .iter()
                    .fold(self.best_seen, |b, &r| self.cfg.ties.better(b, r));
                best.map(|(a, u, _)| (a, u))?
            }
            Recommendation::Last => {
                let a = argmax_finite(&self.last)?;
                (a, self.last_ok_unit(a)?)
            }
            Recommendation::MeanOfUnits => {
                let means: Vec<f64> = self
                    .sums
                    .iter()
                    .map(|&(s, n)| {
                        if n > 0 {
                            s / f64::from(n)
                        } else {
                            f64::NEG_INFINITY
                        }
                    })
                    .collect();
                let a = argmax_finite(&means)?;
                (a, self.last_ok_unit(a)?)
            }
            Recommendation::MostTrained => {
                let mut best: Option<usize> = None;
                for a in 0..self.config.len() {
                    if !self.last[a].is_finite() {
                        continue;
                    }
                    let key = |i: usize| (self.ledger.pulls[i], self.last[i]);
                    if best.is_none_or(|b| {
                        let (kb, ka) = (key(b), key(a));
                        ka.0 > kb.0 || (ka.0 == kb.0 && ka.1 > kb.1)
                    }) {
                        best = Some(a);
                    }
                }
                let a = best?;
                (a, self.last_ok_unit(a)?)
            }
        };
        let c = self.config[arm];
        let curve = &self.task.curves[c as usize];
        // When the recommended unit came in; a result still in flight comes in now.
        let running = self.in_flight.iter().any(|x| x.0 == arm && x.1 == unit);
        let found_at = match self.cfg.recommendation {
            _ if running => self.ledger.clock.used,
            Recommendation::BestSeen => self.best_seen_at,
            _ => self.ok_at[arm],
        };
        Some(Recommended {
            arm,
            config: c,
            unit: unit + 1,
            score: f64::from(curve.score[unit as usize]),
            test_score: f64::from(curve.test_score[unit as usize]),
            found_at,
        })
    }

    /// The 0-based index of `arm`'s last trained unit that is ok.
    fn last_ok_unit(&self, arm: usize) -> Option<u32> {
        let curve = &self.task.curves[self.config[arm] as usize];
        (0..self.ledger.pulls[arm] as usize)
            .rev()
            .find(|&u| curve.status[u] == Status::Ok)
            .map(|u| u as u32)
    }
}

/// The first index of the largest finite value.
fn argmax_finite(v: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in v.iter().enumerate() {
        if x.is_finite() && best.is_none_or(|b| x > v[b]) {
            best = Some(i);
        }
    }
    best
}

impl World for PoolWorld<'_> {
    fn completed(&mut self, arm: usize) {
        // The anytime incumbent `last` is kept by `apply`; `best-seen` counts results here.
        match self.cfg.incumbent {
            IncumbentRule::BestSeen => self.ledger.complete(arm),
            IncumbentRule::Last => self.ledger.discard(arm),
        }
        // Every unit the work trained counts, in the order they were trained.
        let now = self.ledger.clock.used;
        let mut i = 0;
        while i < self.in_flight.len() {
            if self.in_flight[i].0 != arm {
                i += 1;
                continue;
            }
            let result = self.in_flight.remove(i);
            self.ok_at[arm] = now;
            let best = self.cfg.ties.better(self.best_seen, result);
            if best != self.best_seen {
                (self.best_seen, self.best_seen_at) = (best, now);
            }
        }
    }

    fn kind(&self) -> WorldKind {
        WorldKind::Pool
    }

    fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    fn sign(&self) -> f64 {
        self.sign
    }

    fn n_arms(&self) -> usize {
        self.config.len()
    }

    fn config_of(&self, arm: usize) -> u32 {
        self.config[arm]
    }

    fn arm_objectives(&self, arm: usize) -> &[f64] {
        let d = self.objectives.len();
        &self.arm_objectives[arm * d..(arm + 1) * d]
    }

    /// No budget is left, the policy stopped, or nothing is left to train.
    fn done(&self) -> bool {
        self.ledger.clock.done() || (self.undrawn == 0 && self.done.iter().all(|&d| d))
    }

    fn arm_state(&self, arm: usize) -> (f64, f64, bool) {
        (self.ledger.arm_best[arm], self.last[arm], self.done[arm])
    }

    fn view(&self) -> View<'_> {
        self.ledger.view(
            self.config.len(),
            1.0,
            WorldKind::Pool,
            Some(PoolView {
                units: self.pool.manifest.units,
                // What can still be added: nothing once the cap on live arms is reached.
                undrawn: if self.cfg.max_arms.is_some_and(|m| self.config.len() >= m) {
                    0
                } else {
                    self.undrawn
                },
                last: &self.last,
                done: &self.done,
                config: &self.config,
                open: &self.open,
                n_open: self.n_open,
                space: &self.pool.space,
                defaults: &self.defaults,
            }),
        )
    }

    fn apply(&mut self, action: Action) -> Result<Observation<'_>, String> {
        self.apply_action(action)
            .map_err(|e| format!("{e} (a bug in the policy)"))
    }

    /// The recommended configuration, and the units and seconds each learner took.
    fn outcome(&self) -> super::Outcome {
        let l = &self.ledger;
        let n_learners = self.pool.manifest.learners.len();
        let (mut pulls, mut time_s) = (vec![0u64; n_learners], vec![0.0; n_learners]);
        for (arm, &c) in self.config.iter().enumerate() {
            let learner = self.pool.configs[c as usize].learner;
            pulls[learner] += l.pulls[arm];
            time_s[learner] += l.arm_time_s[arm];
        }
        let recommended = self.recommend();
        super::Outcome {
            best_score: recommended.map_or(f64::NAN, |x| x.score),
            best_test_score: recommended.map_or(f64::NAN, |x| x.test_score),
            best_arm: recommended.map(|x| self.pool.configs[x.config as usize].learner),
            best_found_at: recommended.map_or(f64::NAN, |x| x.found_at),
            pulls,
            time_s,
            pool: Some(PoolPart {
                recommended,
                configs_drawn: self.config.len() as u64,
                mutations: self.mutations,
                mutation_fallbacks: self.mutation_fallbacks,
                units_trained: l.pulls.iter().sum(),
            }),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::trace::Direction;
    use crate::trace::pool::{
        Curve, DimKind, Neighbours, PoolConfig, PoolDim, PoolLearner, PoolManifest,
    };

    /// Draws one configuration and trains it unit by unit, reporting two model fits per
    /// decision (for the `per_fit` overhead model).
    struct TrainOne;

    impl crate::protocol::Rule for TrainOne {
        fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
            if view.n_arms == 0 {
                Action::Draw
            } else {
                Action::Pull(0)
            }
        }
        fn observe(&mut self, _obs: &Observation<'_>) {}
        fn take_fits(&mut self) -> u64 {
            2
        }
    }

    /// Replay `TrainOne` on one configuration of 10 units of 0.1 s each under `overhead`:
    /// (units trained, decisions, budget used, overhead charged).
    fn train_one(
        unit: PoolBudget,
        budget: f64,
        overhead: super::super::Overhead,
    ) -> (u64, u64, f64, f64) {
        let pool = hand_pool(1, 10, |_| vec![0.5; 10]);
        let cfg = PoolWorldConfig {
            budget_unit: unit,
            ..PoolWorldConfig::default()
        };
        let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, budget, 1.0, 1);
        super::super::drive(
            &mut w,
            &mut TrainOne,
            "train-one",
            &mut Rng::new(1),
            overhead,
            &mut [],
        )
        .unwrap();
        let l = w.ledger();
        (l.pulls[0], l.decisions, l.clock.used, l.clock.overhead)
    }

    #[test]
    fn the_pool_world_charges_the_four_overhead_models_to_a_budget_of_seconds() {
        use super::super::Overhead as O;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        // No overhead: all 10 units (1 s of training) fit in 1.27 s.
        let (units, decisions, used, over) = train_one(PoolBudget::Seconds, 1.27, O::None);
        assert_eq!((units, decisions, over), (10, 10, 0.0));
        assert!(close(used, 1.0), "{used}");
        // 0.05 s charged before each decision: after 8 units 1.2 s are used; the 9th decision's
        // charge leaves 0.02 s, its unit is cut at the budget and reveals nothing.
        let (units, decisions, used, over) = train_one(PoolBudget::Seconds, 1.27, O::Fixed(0.05));
        assert_eq!((units, decisions), (8, 9));
        assert!(close(used, 1.27) && close(over, 0.45), "{used} {over}");
        // Two fits per decision at 0.025 s each: the same 0.05 s, charged after the decision.
        let (units, decisions, used, over) = train_one(PoolBudget::Seconds, 1.27, O::PerFit(0.025));
        assert_eq!((units, decisions), (8, 9));
        assert!(close(used, 1.27) && close(over, 0.45), "{used} {over}");
        // Measured: the wall time of the policy's calls, positive and on the clock.
        let (units, decisions, used, over) = train_one(PoolBudget::Seconds, 100.0, O::Measured);
        assert_eq!((units, decisions), (10, 10));
        assert!(over > 0.0 && close(used, 1.0 + over), "{used} {over}");
        // A budget of units counts no time: no model charges anything.
        for o in [O::Fixed(0.05), O::PerFit(0.025), O::Measured] {
            let (units, decisions, used, over) = train_one(PoolBudget::Units, 6.0, o);
            assert_eq!((units, decisions, used, over), (6, 6, 6.0, 0.0), "{o:?}");
        }
    }

    /// A hand-made pool: one learner with one ordinal dimension of `n` levels (config i has
    /// level i; neighbours i ± 1), `units` units, one task; `curve(i)` gives config i's scores
    /// (NaN = failed) and every unit costs (i + 1) × 0.1 s.
    pub fn hand_pool(n: usize, units: u32, curve: impl Fn(usize) -> Vec<f32>) -> Pool {
        let manifest = PoolManifest {
            name: "hand".into(),
            description: String::new(),
            metric: "accuracy".into(),
            objectives: Vec::new(),
            generator: None,
            direction: Direction::Maximize,
            units,
            neighbours: Neighbours::Grid,
            complete: true,
            learners: vec![PoolLearner {
                name: "m".into(),
                unit: "1 epoch".into(),
                dims: vec![PoolDim {
                    name: "x".into(),
                    kind: DimKind::Ordinal,
                    values: (0..n).map(|i| i.to_string()).collect(),
                }],
            }],
            provenance: toml::Table::new(),
        };
        let configs: Vec<PoolConfig> = (0..n)
            .map(|i| PoolConfig {
                id: i as u32,
                learner: 0,
                levels: vec![i as u16],
                config: "{}".into(),
            })
            .collect();
        let curves = (0..n)
            .map(|i| {
                let s = curve(i);
                Curve {
                    extra: Vec::new(),
                    test_score: s.iter().map(|x| x - 0.01).collect(),
                    cost_s: vec![(i as f32 + 1.0) * 0.1; s.len()],
                    status: s
                        .iter()
                        .map(|x| {
                            if x.is_nan() {
                                Status::Failed
                            } else {
                                Status::Ok
                            }
                        })
                        .collect(),
                    score: s,
                }
            })
            .collect();
        let neighbours = crate::trace::pool::grid_neighbours(&manifest, &configs);
        let space = crate::trace::pool::grid_space(&manifest, &configs);
        Pool {
            space,
            defaults: vec![None],
            dir: "hand".into(),
            manifest,
            configs,
            tasks: vec![PoolTask {
                dataset: "hand".into(),
                run: 0,
                curves,
            }],
            neighbours,
            missing_curves: 0,
            all_tasks: vec![("hand".into(), 0)],
            content_hash: String::new(),
        }
    }

    #[test]
    fn draws_pulls_and_mutations_charge_and_reveal_by_the_rules() {
        // Config i: unit scores 0.1 i + 0.01 u (failures: the next test).
        let pool = hand_pool(4, 3, |i| {
            (1..=3).map(|u| 0.1 * i as f32 + 0.01 * u as f32).collect()
        });
        let cfg = PoolWorldConfig {
            budget_unit: PoolBudget::Seconds,
            ..PoolWorldConfig::default()
        };
        let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, 100.0, 1.0, 7);
        let o = w.apply(Action::Draw).unwrap();
        assert_eq!(o.arm, 0);
        let c0 = w.arm_configs()[0] as usize;
        // One unit of config c0: its score at unit 1, its cost (c0 + 1) x 0.1 s.
        assert!((w.view().pool.unwrap().last[0] - (0.1 * c0 as f64 + 0.01)).abs() < 1e-6);
        assert!((w.ledger().clock.used - (c0 as f64 + 1.0) * 0.1).abs() < 1e-6);
        // A mutation draws an undrawn grid neighbour (c0 ± 1) as arm 1, from unit 1.
        let o = w.apply(Action::Mutate(0)).unwrap();
        assert_eq!((o.arm, o.arm_clock), (1, 1.0));
        let c1 = w.arm_configs()[1] as i64;
        assert_eq!((c1 - c0 as i64).abs(), 1);
        // Train arm 0 to the end: units 2 and 3, then a wasted pull.
        w.apply(Action::Pull(0)).unwrap();
        let o = w.apply(Action::Pull(0)).unwrap();
        assert!(o.exhausted && o.reward.is_some());
        let o = w.apply(Action::Pull(0)).unwrap();
        assert!(o.exhausted && o.reward.is_none());
        assert_eq!(w.ledger().exhausted_pulls, 1);
        assert_eq!(w.ledger().pulls[0], 3);
        // Errors in words.
        assert!(
            w.apply(Action::Pull(9))
                .unwrap_err()
                .contains("only 2 arms")
        );
    }

    /// Seconds budgets: a unit that does not fit in the budget left is cut (costs the rest,
    /// reveals nothing) by default, or charged in full and overshoots with `last_unit = charge`.
    /// Ties for the best score go to the first revealed unit, or the last with `ties = last`.
    #[test]
    fn the_last_unit_and_ties_follow_their_named_rules() {
        // Config 0: units cost 0.1 s each; budget 0.25 s: units 1 and 2 fit, unit 3 does not.
        let pool = hand_pool(1, 3, |_| vec![0.5, 0.6, 0.9]);
        for (rule, used, pulls, best) in [
            (LastUnit::Cut, 0.25, 2, 0.6),
            (LastUnit::Charge, 0.3, 3, 0.9),
        ] {
            let cfg = PoolWorldConfig {
                budget_unit: PoolBudget::Seconds,
                last_unit: rule,
                ..PoolWorldConfig::default()
            };
            let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, 0.25, 1.0, 1);
            w.apply(Action::Draw).unwrap();
            w.apply(Action::Pull(0)).unwrap();
            let o = w.apply(Action::Pull(0)).unwrap();
            assert_eq!(o.reward.is_some(), rule == LastUnit::Charge, "{rule:?}");
            assert!((w.ledger().clock.used - used).abs() < 1e-6, "{rule:?}");
            assert_eq!(w.ledger().pulls[0], pulls, "{rule:?}");
            assert!(w.done());
            let r = w.recommend().unwrap();
            assert!((r.score - best).abs() < 1e-6, "{rule:?}: {}", r.score);
        }
        // Configs 0 and 1 tie at 0.8 on validation; their test scores differ (0.79 and 0.7):
        // the first revealed is recommended, or the last, and its test score is reported.
        let mut pool = hand_pool(2, 1, |_| vec![0.8]);
        pool.tasks[0].curves[1].test_score = vec![0.7];
        for ties in [Ties::First, Ties::Last] {
            let cfg = PoolWorldConfig {
                ties,
                ..PoolWorldConfig::default()
            };
            let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, 2.0, 1.0, 3);
            let first = w.apply(Action::Draw).unwrap().arm;
            let second = w.apply(Action::Draw).unwrap().arm;
            let r = w.recommend().unwrap();
            let want = if ties == Ties::First { first } else { second };
            assert_eq!(r.arm, want, "{ties:?}");
            let c = w.arm_configs()[want] as usize;
            let test = if c == 1 { 0.7 } else { 0.79 };
            assert!((r.test_score - test).abs() < 1e-6, "{ties:?}");
        }
    }

    /// Draws every configuration, then waits for the work in flight.
    struct DrawAll;

    impl crate::protocol::Rule for DrawAll {
        fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
            match view.pool {
                Some(p) if p.undrawn > 0 => Action::Draw,
                _ if !view.pending.is_empty() => Action::Wait,
                _ => Action::Stop,
            }
        }
        fn observe(&mut self, _obs: &Observation<'_>) {}
    }

    /// With two workers, ties go to the first *revealed* result, as with one: two configurations
    /// reach the same validation score in one unit, the one drawn first trains 1.0 s and the
    /// other 0.1 s, so the second is revealed first and is recommended (`ties = first`), and the
    /// first with `ties = last`. Over seeds both draw orders occur.
    #[test]
    fn with_two_workers_ties_go_by_the_order_results_are_revealed() {
        let mut pool = hand_pool(2, 1, |_| vec![0.8]);
        pool.tasks[0].curves[1].test_score = vec![0.7];
        let mut orders = std::collections::BTreeSet::new();
        for seed in 1..12 {
            for ties in [Ties::First, Ties::Last] {
                let mut costs = pool.clone();
                let cfg = PoolWorldConfig {
                    ties,
                    ..PoolWorldConfig::default()
                };
                // Which configuration the world draws first depends on the seed: learn it, then
                // make that one the slow one.
                let mut probe = PoolWorld::new(&pool, &pool.tasks[0], cfg, 2.0, 1.0, seed);
                let first = probe.apply(Action::Draw).unwrap().arm;
                let first_config = probe.arm_configs()[first] as usize;
                orders.insert(first_config);
                costs.tasks[0].curves[first_config].cost_s = vec![1.0];
                costs.tasks[0].curves[1 - first_config].cost_s = vec![0.1];
                let mut w = PoolWorld::new(&costs, &costs.tasks[0], cfg, 2.0, 1.0, seed);
                let mut steps: Vec<super::super::Step> = Vec::new();
                super::super::drive_workers(
                    &mut w,
                    &mut DrawAll,
                    "draw-all",
                    &mut Rng::new(seed),
                    super::super::Overhead::None,
                    2,
                    &mut [&mut steps],
                )
                .unwrap();
                assert_eq!(steps.len(), 2);
                // Steps come in the order work finished: the fast one first.
                assert!(steps[0].finish < steps[1].finish);
                let revealed_first = steps[0].config as usize;
                assert_ne!(revealed_first, first_config, "seed {seed}");
                let want = match ties {
                    Ties::First => revealed_first,
                    Ties::Last => first_config,
                };
                let r = w.recommend().unwrap();
                assert_eq!(r.config as usize, want, "seed {seed}, {ties:?}");
            }
        }
        assert_eq!(
            orders.len(),
            2,
            "both configurations drawn first at some seed"
        );
    }

    #[test]
    fn a_failed_unit_is_charged_unless_failures_are_free() {
        // One configuration whose second unit fails: drawing it trains unit 1 (charged), the pull
        // trains unit 2, which fails and ends the curve. Charged by default: 2 units used; with
        // failures_consume_budget = false (DRAGON) only 1, and the failure is still revealed.
        let pool = hand_pool(1, 3, |_| vec![0.5, f32::NAN, 0.7]);
        for (free, used) in [(false, 2.0), (true, 1.0)] {
            let cfg = PoolWorldConfig {
                failures_consume_budget: !free,
                ..PoolWorldConfig::default()
            };
            let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, 10.0, 1.0, 1);
            w.apply(Action::Draw).unwrap();
            let obs = w.apply(Action::Pull(0)).unwrap();
            assert_eq!(obs.reward, None, "the failed unit reveals no score");
            assert_eq!(w.ledger().clock.used, used, "free = {free}");
            assert_eq!(w.ledger().pulls[0], 2);
            assert!(w.done(), "nothing left to train");
        }
    }

    #[test]
    fn choosing_a_configuration_to_a_unit_trains_it_in_one_piece_of_work() {
        // Configuration 1 of two, chosen and trained to unit 3 of 4: one decision, three units
        // charged and revealed, the reward the third unit's score. Unit 0 is refused, and the
        // configuration cannot be chosen again.
        let pool = hand_pool(2, 4, |i| vec![0.1 + i as f32, 0.2, 0.3, 0.4]);
        let mut w = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            10.0,
            1.0,
            1,
        );
        assert!(
            w.apply(Action::ChooseTo(1, 0))
                .unwrap_err()
                .contains("unit 0")
        );
        let obs = w.apply(Action::ChooseTo(1, 3)).unwrap();
        assert_eq!((obs.arm, obs.reward), (0, Some(0.3_f32.into())));
        assert_eq!(obs.revealed.len(), 3);
        assert_eq!(w.ledger().pulls[0], 3);
        assert_eq!(w.ledger().clock.used, 3.0);
        assert_eq!(w.ledger().decisions, 1);
        assert!(
            w.apply(Action::ChooseTo(1, 4))
                .unwrap_err()
                .contains("drawn already")
        );
    }

    #[test]
    fn retraining_charges_trained_units_again_and_learns_nothing_new() {
        // Configuration 1 (0.2 s a unit) trained to unit 3, then trained again over units 1..3 and
        // over unit 2 alone: each unit charged again and revealed again with its recorded score;
        // the arm's units, its best, the incumbent and the failures stay as they were, and its
        // seconds grow by what the retraining took.
        let pool = hand_pool(2, 4, |i| vec![0.1 + i as f32, 0.2, 0.3, 0.4]);
        let mut w = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            10.0,
            1.0,
            1,
        );
        w.apply(Action::ChooseTo(1, 3)).unwrap();
        let before = (
            w.ledger().arm_best[0],
            w.ledger().incumbent,
            w.ledger().failures,
        );
        let obs = w.apply(Action::Retrain(0, 1, 3)).unwrap();
        assert_eq!((obs.arm, obs.reward), (0, Some(0.3_f32.into())));
        let seen: Vec<(f64, f64)> = obs.revealed.iter().map(|r| (r.time, r.reward)).collect();
        assert_eq!(
            seen,
            vec![
                (1.0, f64::from(1.1_f32)),
                (2.0, f64::from(0.2_f32)),
                (3.0, f64::from(0.3_f32))
            ]
        );
        assert_eq!(obs.arm_clock, 3.0);
        let l = w.ledger();
        assert_eq!((l.pulls[0], l.clock.used, l.decisions), (3, 6.0, 2));
        assert!((l.arm_time_s[0] - 6.0 * f64::from(0.2_f32)).abs() < 1e-9);
        assert_eq!((l.arm_best[0], l.incumbent, l.failures), before);
        let obs = w.apply(Action::Retrain(0, 2, 2)).unwrap();
        assert_eq!((obs.revealed.len(), obs.reward), (1, Some(0.2_f32.into())));
        assert_eq!(w.ledger().clock.used, 7.0);
        // Only units trained before, from 1, of an arm that exists.
        for (bad, says) in [
            (Action::Retrain(0, 1, 4), "it has trained units 1 to 3"),
            (Action::Retrain(0, 0, 2), "it has trained units 1 to 3"),
            (Action::Retrain(0, 3, 2), "it has trained units 1 to 3"),
            (Action::Retrain(4, 1, 1), "only 1 arms exist"),
        ] {
            let e = w.apply(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        // A budget of seconds pays each retrained unit's recorded seconds, and a unit it cannot
        // pay for ends the cell, revealed no more.
        let cfg = PoolWorldConfig {
            budget_unit: PoolBudget::Seconds,
            ..PoolWorldConfig::default()
        };
        let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, 1.05, 1.0, 1);
        w.apply(Action::ChooseTo(1, 3)).unwrap();
        assert!((w.ledger().clock.used - 0.6).abs() < 1e-6);
        let obs = w.apply(Action::Retrain(0, 1, 3)).unwrap();
        assert_eq!((obs.revealed.len(), obs.reward), (2, None));
        assert_eq!(w.ledger().clock.used, 1.05);
        assert!(w.ledger().clock.done());
    }

    /// Two draws, then arms 0, 0, 1, 1 trained one unit each (6 units in all).
    fn draw_two_and_train<'a>(pool: &'a Pool, cfg: PoolWorldConfig) -> PoolWorld<'a> {
        let mut w = PoolWorld::new(pool, &pool.tasks[0], cfg, 6.0, 1.0, 1);
        w.apply(Action::Draw).unwrap();
        w.apply(Action::Draw).unwrap();
        for a in [0, 0, 1, 1] {
            w.apply(Action::Pull(a)).unwrap();
        }
        w
    }

    #[test]
    fn a_failed_unit_ends_the_curve_and_incumbent_rules_differ() {
        // Config 0 peaks at unit 1 (0.9) and falls; config 1 rises to 0.8.
        let pool = hand_pool(2, 3, |i| {
            if i == 0 {
                vec![0.9, 0.5, 0.4]
            } else {
                vec![0.6, 0.7, 0.8]
            }
        });
        for (rule, inc) in [(IncumbentRule::BestSeen, 0.9), (IncumbentRule::Last, 0.8)] {
            let cfg = PoolWorldConfig {
                incumbent: rule,
                recommendation: Recommendation::Last,
                ..PoolWorldConfig::default()
            };
            let w = draw_two_and_train(&pool, cfg);
            assert!(w.done());
            assert!(
                (w.ledger().incumbent.unwrap().reward - inc).abs() < 1e-6,
                "{rule:?}"
            );
            // Recommendation `last`: the arm best at its last unit, config 1 at unit 3.
            let r = w.recommend().unwrap();
            assert_eq!((r.config, r.unit), (1, 3));
            assert!((r.test_score - 0.79).abs() < 1e-6);
        }
        // best-seen recommends config 0's unit 1; mean-of-units config 1 (0.7 > 0.6).
        for (rec, want) in [
            (Recommendation::BestSeen, (0, 1)),
            (Recommendation::MeanOfUnits, (1, 3)),
            // Both arms trained 3 units: the tie goes to the better last score, config 1.
            (Recommendation::MostTrained, (1, 3)),
        ] {
            let cfg = PoolWorldConfig {
                recommendation: rec,
                ..PoolWorldConfig::default()
            };
            let w = draw_two_and_train(&pool, cfg);
            let r = w.recommend().unwrap();
            let c = |arm: usize| w.arm_configs()[arm];
            assert_eq!((c(r.arm), r.unit), want, "{rec:?}");
        }
        // most-trained prefers 3 units of a falling curve (config 0, last 0.4) to 1 unit of a
        // better one.
        let cfg = PoolWorldConfig {
            recommendation: Recommendation::MostTrained,
            ..PoolWorldConfig::default()
        };
        let mut w = PoolWorld::new(&pool, &pool.tasks[0], cfg, 6.0, 1.0, 1);
        let first = w.apply(Action::Draw).unwrap().arm;
        w.apply(Action::Draw).unwrap();
        w.apply(Action::Pull(first)).unwrap();
        w.apply(Action::Pull(first)).unwrap();
        let r = w.recommend().unwrap();
        assert_eq!((r.arm, r.unit), (first, 3));
        // A failed unit: nothing revealed, the curve ends.
        let pool = hand_pool(1, 3, |_| vec![0.5, f32::NAN, 0.9]);
        let mut w = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            10.0,
            1.0,
            1,
        );
        w.apply(Action::Draw).unwrap();
        let o = w.apply(Action::Pull(0)).unwrap();
        assert!(o.reward.is_none() && o.exhausted);
        assert!(w.done(), "no undrawn configuration, every arm done");
        assert_eq!(w.ledger().failures, 1);
    }
}
