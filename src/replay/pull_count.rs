//! Pull-count replay (ER-UCB, Hu, Yu & Liao 2019, "Cascaded Algorithm-Selection and Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit", IJCAI, §3, Algorithm 1: one
//! pull = one random-search trial of the chosen learner).
//!
//! Rules (each a named option with its default):
//! - Budget in pulls. A pull reveals the arm's next evaluation.
//! - `order`: `permute` (default; each cell permutes every arm's evaluations with the cell's seed,
//!   so repetitions see different trial orders of the same pool) or `recorded` (the trace's `seq`
//!   order, for exact replays).
//! - `failures_consume_budget`: `false` (default, as ER-UCB's code, which retries until a trial
//!   succeeds): a failed or timed-out evaluation is skipped and the pull goes on to the next one;
//!   `true`: it costs the pull and the policy observes no reward.
//! - `exhausted`: what a pull of an arm with no evaluation left does. `empty` (default) costs the
//!   pull and reveals nothing; `resample` draws one of the arm's evaluations uniformly with
//!   replacement (seeded); `stop` ends the cell there (the rest of the budget is not used).
//! - Time (reported, not budgeted) is the sum of `cost_s` of the evaluations consumed.

use super::{Action, Clock, Ledger, Observation, View, World, WorldKind, learner_arm};
use crate::rng::Rng;
use crate::trace::{Status, Task};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    Permute,
    Recorded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exhausted {
    Empty,
    Resample,
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PullCountConfig {
    pub budget_pulls: u64,
    pub order: Order,
    pub failures_consume_budget: bool,
    pub exhausted: Exhausted,
}

pub struct PullCount<'t> {
    task: &'t Task,
    cfg: PullCountConfig,
    sign: f64,
    order: Vec<Vec<u32>>,
    next: Vec<usize>,
    has_ok: Vec<bool>,
    rng: Rng,
    ledger: Ledger,
    objectives: super::ArmPoints,
}

impl<'t> PullCount<'t> {
    /// `seed` drives the permutations and resampling; it must differ from the policy's stream.
    pub fn new(task: &'t Task, cfg: PullCountConfig, sign: f64, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let order = task
            .arms
            .iter()
            .map(|a| {
                let mut o: Vec<u32> = (0..a.len() as u32).collect();
                if cfg.order == Order::Permute {
                    rng.shuffle(&mut o);
                }
                o
            })
            .collect();
        PullCount {
            task,
            cfg,
            sign,
            order,
            next: vec![0; task.arms.len()],
            has_ok: task
                .arms
                .iter()
                .map(|a| a.status.contains(&Status::Ok))
                .collect(),
            rng,
            ledger: Ledger::new(task.arms.len(), Clock::counting(cfg.budget_pulls as f64)),
            objectives: super::ArmPoints::default(),
        }
    }

    /// Show the policy these objectives (indices into the trace set's `m` objectives) of every
    /// evaluation a pull reveals (`Observation::objectives`).
    pub fn with_objectives(mut self, which: &[usize], m: usize) -> Self {
        self.objectives = super::ArmPoints::new(which, m, self.task.arms.len());
        self
    }
}

impl World for PullCount<'_> {
    fn kind(&self) -> WorldKind {
        WorldKind::PullCount
    }

    fn outcome(&self) -> super::Outcome {
        super::Outcome::of_task(&self.ledger, self.sign, self.task)
    }

    fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    fn view(&self) -> View<'_> {
        self.ledger.view(self.n_arms(), 1.0, self.kind(), None)
    }

    fn sign(&self) -> f64 {
        self.sign
    }

    fn apply(&mut self, action: Action) -> Result<Observation<'_>, String> {
        let arm = learner_arm(self.kind(), self.n_arms(), action)?;
        Ok(self.pull(arm))
    }

    fn arm_objectives(&self, arm: usize) -> &[f64] {
        self.objectives.of(arm)
    }
}

impl PullCount<'_> {
    /// Pull `arm` (< n_arms).
    pub fn pull(&mut self, arm: usize) -> Observation<'_> {
        let l = &mut self.ledger;
        l.begin_counted_pull(arm);
        let a = &self.task.arms[arm];
        let world_time = l.clock.used;
        let mut exhausted = false;
        let mut reward = None;
        self.objectives.clear(arm);
        loop {
            let idx = if self.next[arm] < a.len() {
                let i = self.order[arm][self.next[arm]] as usize;
                self.next[arm] += 1;
                i
            } else {
                if !exhausted {
                    l.exhausted_pulls += 1;
                    l.exhausted_budget += 1.0;
                }
                exhausted = true;
                if self.cfg.exhausted == Exhausted::Stop {
                    l.clock.used = l.clock.budget;
                    break;
                }
                let can_resample = self.cfg.exhausted == Exhausted::Resample
                    && !a.is_empty()
                    && (self.has_ok[arm] || self.cfg.failures_consume_budget);
                if !can_resample {
                    break;
                }
                self.rng.below(a.len())
            };
            l.arm_time_s[arm] += a.cost_s[idx];
            let r = self.sign * a.score[idx];
            l.reveal(arm, idx, world_time, a.status[idx], r);
            self.objectives.push(arm, a, idx);
            if a.status[idx] == Status::Ok {
                reward = Some(r);
                break;
            }
            if self.cfg.failures_consume_budget {
                break;
            }
        }
        Observation {
            arm,
            reward,
            revealed: &l.revealed,
            arm_clock: l.arm_clock[arm],
            exhausted,
            objectives: self.objectives.of(arm),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fixtures::{arm, task};

    fn cfg(order: Order, consume: bool, exhausted: Exhausted) -> PullCountConfig {
        PullCountConfig {
            budget_pulls: 10,
            order,
            failures_consume_budget: consume,
            exhausted,
        }
    }

    #[test]
    fn recorded_order_reveals_in_seq_order() {
        let t = task(vec![arm("a", &[(1.0, 0.3), (2.0, 0.8), (3.0, 0.5)])]);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, false, Exhausted::Empty), 1.0, 1);
        let got: Vec<Option<f64>> = (0..3).map(|_| w.pull(0).reward).collect();
        assert_eq!(got, vec![Some(0.3), Some(0.8), Some(0.5)]);
        assert_eq!(w.ledger().incumbent.unwrap().eval, 1);
        assert_eq!(w.ledger().clock.used, 3.0);
        // cost_s of the three evaluations: 1 + 1 + 1.
        assert_eq!(w.ledger().arm_time_s[0], 3.0);
    }

    #[test]
    fn permuted_order_is_a_seeded_permutation() {
        let scores: Vec<(f64, f64)> = (0..20).map(|i| (i as f64, i as f64 / 100.0)).collect();
        let t = task(vec![arm("a", &scores)]);
        let run = |seed| {
            let mut w = PullCount::new(&t, cfg(Order::Permute, false, Exhausted::Empty), 1.0, seed);
            (0..20)
                .map(|_| w.pull(0).reward.unwrap())
                .collect::<Vec<_>>()
        };
        let (a, b, c) = (run(5), run(5), run(6));
        assert_eq!(a, b, "same seed, same order");
        assert_ne!(a, c, "another seed, another order");
        let mut sorted = a.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(sorted, scores.iter().map(|s| s.1).collect::<Vec<_>>());
    }

    #[test]
    fn failures_are_skipped_free_by_default() {
        let t = task(vec![arm("a", &[(1.0, f64::NAN), (2.0, 0.6)])]);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, false, Exhausted::Empty), 1.0, 1);
        let obs = w.pull(0);
        assert_eq!(obs.reward, Some(0.6));
        assert_eq!(obs.revealed.len(), 2);
        assert_eq!(w.ledger().clock.used, 1.0, "the failure cost no pull");
        assert_eq!(w.ledger().failures, 1);
    }

    #[test]
    fn failures_consume_a_pull_when_asked() {
        let t = task(vec![arm("a", &[(1.0, f64::NAN), (2.0, 0.6)])]);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, true, Exhausted::Empty), 1.0, 1);
        assert_eq!(w.pull(0).reward, None);
        assert_eq!(w.pull(0).reward, Some(0.6));
        assert_eq!(w.ledger().clock.used, 2.0);
    }

    #[test]
    fn exhausted_arms_are_empty_or_resampled() {
        let t = task(vec![arm("a", &[(1.0, 0.4)])]);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, false, Exhausted::Empty), 1.0, 1);
        w.pull(0);
        let obs = w.pull(0);
        assert!(obs.exhausted);
        assert_eq!(obs.reward, None);
        assert_eq!(w.ledger().clock.used, 2.0);
        assert_eq!(w.ledger().exhausted_pulls, 1);
        assert_eq!(w.ledger().exhausted_budget, 1.0);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, false, Exhausted::Resample), 1.0, 1);
        w.pull(0);
        let obs = w.pull(0);
        assert!(obs.exhausted);
        assert_eq!(
            obs.reward,
            Some(0.4),
            "the single evaluation is drawn again"
        );
    }

    #[test]
    fn stop_ends_the_cell_at_the_first_exhausted_pull() {
        let t = task(vec![arm("a", &[(1.0, 0.4)])]);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, false, Exhausted::Stop), 1.0, 1);
        w.pull(0);
        assert!(!w.done());
        let obs = w.pull(0);
        assert!(obs.exhausted && obs.reward.is_none());
        assert!(w.done(), "the cell ends; 8 of 10 pulls unused");
        assert_eq!(w.ledger().decisions, 2);
    }

    #[test]
    fn an_arm_with_only_failures_never_loops() {
        let t = task(vec![arm("a", &[(1.0, f64::NAN)])]);
        let mut w = PullCount::new(&t, cfg(Order::Recorded, false, Exhausted::Resample), 1.0, 1);
        assert_eq!(w.pull(0).reward, None);
        assert_eq!(w.pull(0).reward, None);
        assert_eq!(w.ledger().clock.used, 2.0);
    }

    #[test]
    fn budget_ends_the_cell() {
        let t = task(vec![arm("a", &[(1.0, 0.1)])]);
        let mut w = PullCount::new(
            &t,
            PullCountConfig {
                budget_pulls: 2,
                ..cfg(Order::Recorded, false, Exhausted::Empty)
            },
            1.0,
            1,
        );
        w.pull(0);
        assert!(!w.done());
        w.pull(0);
        assert!(w.done());
    }
}
