//! Time-sliced replay (HAMLET, Schmidt, Gastinger, Nicolas & Schülke 2020, "HAMLET: A Learning Curve-Enabled Multi-Armed Bandit for Algorithm Selection", IJCNN, §III-A and Alg. 1).
//!
//! Rules (each a named option with its default):
//! - Budget `budget_s` seconds, slice `slice_s`. Pulling arm i advances its clock by `slice_s`
//!   (the last slice is cut to the budget left, so the budget is never exceeded) and reveals its
//!   evaluations with `elapsed_s <=` the new clock (a relative tolerance of 1e-9 absorbs float
//!   rounding of summed slices).
//! - The incumbent is the best revealed `ok` evaluation; since only evaluations at or before an
//!   arm's clock are revealed, it is never one from ahead of that clock. Failed and timed-out
//!   evaluations cost their time (it is inside `elapsed_s`) and never become incumbent.
//! - An arm whose trace has ended is *exhausted*: a pull still costs its slice and reveals nothing.
//! - `overhead` charges the policy's own computation to the budget (not to any arm's clock):
//!   `none` (default, deterministic), `fixed` seconds per decision, `per_fit` seconds per
//!   learning-curve fit the policy made (deterministic; models a slower implementation exactly),
//!   or `measured` wall seconds of the policy's decide + observe calls (not reproducible across
//!   machines; flagged in results).

use super::{Action, Clock, Ledger, Observation, View, World, WorldKind, learner_arm};
use crate::trace::Task;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeSlicedConfig {
    pub budget_s: f64,
    pub slice_s: f64,
}

pub struct TimeSliced<'t> {
    task: &'t Task,
    slice_s: f64,
    /// +1 or -1: reward = sign * score.
    sign: f64,
    next: Vec<usize>,
    ledger: Ledger,
    objectives: super::ArmPoints,
}

const REL_TOL: f64 = 1e-9;

impl<'t> TimeSliced<'t> {
    pub fn new(task: &'t Task, cfg: TimeSlicedConfig, sign: f64) -> Self {
        assert!(cfg.slice_s > 0.0, "slice_s must be positive");
        TimeSliced {
            task,
            slice_s: cfg.slice_s,
            sign,
            next: vec![0; task.arms.len()],
            ledger: Ledger::new(task.arms.len(), Clock::timed(cfg.budget_s, REL_TOL)),
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

impl World for TimeSliced<'_> {
    fn kind(&self) -> WorldKind {
        WorldKind::TimeSliced
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
        self.ledger
            .view(self.task.arms.len(), self.slice_s, self.kind(), None)
    }

    fn sign(&self) -> f64 {
        self.sign
    }

    fn apply(&mut self, action: Action) -> Result<Observation<'_>, String> {
        let arm = learner_arm(self.kind(), self.task.arms.len(), action)?;
        Ok(self.pull(arm))
    }

    fn arm_objectives(&self, arm: usize) -> &[f64] {
        self.objectives.of(arm)
    }
}

impl TimeSliced<'_> {
    /// Run `arm` one slice (cut to the budget left) and reveal what finished.
    pub fn pull(&mut self, arm: usize) -> Observation<'_> {
        let l = &mut self.ledger;
        l.decisions += 1;
        l.revealed.clear();
        let dt = self.slice_s.min(l.clock.left());
        let clock_before = l.arm_clock[arm];
        let clock = clock_before + dt;
        l.clock.spend(dt);
        l.pulls[arm] += 1;
        l.arm_clock[arm] = clock;
        l.arm_time_s[arm] += dt;
        let a = &self.task.arms[arm];
        let exhausted = self.next[arm] >= a.len();
        // The part of the slice past the end of the arm's trace buys nothing.
        let trace_end = a.elapsed_s.last().copied().unwrap_or(0.0);
        let past_end = (clock - clock_before.max(trace_end)).max(0.0);
        if past_end > 0.0 {
            l.exhausted_budget += past_end;
        }
        l.exhausted_pulls += u64::from(exhausted);
        let limit = clock * (1.0 + REL_TOL);
        self.objectives.clear(arm);
        while self.next[arm] < a.len() && a.elapsed_s[self.next[arm]] <= limit {
            let i = self.next[arm];
            let e = a.elapsed_s[i];
            l.reveal(arm, i, e, a.status[i], self.sign * a.score[i]);
            self.objectives.push(arm, a, i);
            self.next[arm] += 1;
        }
        let best = l.arm_best[arm];
        Observation {
            arm,
            reward: best.is_finite().then_some(best),
            revealed: &l.revealed,
            arm_clock: clock,
            exhausted,
            objectives: self.objectives.of(arm),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fixtures::{arm, task};

    fn world(t: &Task, budget: f64, slice: f64) -> TimeSliced<'_> {
        TimeSliced::new(
            t,
            TimeSlicedConfig {
                budget_s: budget,
                slice_s: slice,
            },
            1.0,
        )
    }

    #[test]
    fn a_pull_reveals_evaluations_up_to_the_new_clock() {
        // Arm 0 finishes evaluations at 4 s (0.5), 10 s (0.7) and 11 s (0.6).
        let t = task(vec![arm("a", &[(4.0, 0.5), (10.0, 0.7), (11.0, 0.6)])]);
        let mut w = world(&t, 100.0, 10.0);
        let obs = w.pull(0);
        // Clock 10: the evaluations at 4 and 10 (inclusive) are revealed, the one at 11 is not.
        assert_eq!(obs.revealed.len(), 2);
        assert_eq!(obs.reward, Some(0.7));
        assert_eq!(obs.arm_clock, 10.0);
        let inc = w.ledger().incumbent.unwrap();
        assert_eq!((inc.eval, inc.reward), (1, 0.7));
        // Found at second 10 of the budget, the first at second 4.
        assert_eq!(inc.found_at, 10.0);
        let obs = w.pull(0);
        assert_eq!(obs.revealed.len(), 1);
        assert_eq!(obs.reward, Some(0.7), "best-so-far, not the last score");
    }

    #[test]
    fn clocks_are_per_arm_and_the_budget_is_shared() {
        let t = task(vec![
            arm("a", &[(5.0, 0.5)]),
            arm("b", &[(5.0, 0.9), (15.0, 0.95)]),
        ]);
        let mut w = world(&t, 25.0, 10.0);
        w.pull(0); // used 10
        w.pull(1); // used 20, b's clock 10: reveals 0.9
        assert_eq!(w.ledger().arm_clock, vec![10.0, 10.0]);
        assert!(!w.done());
        let obs = w.pull(1); // only 5 s left: b's clock 15 reveals 0.95 (at the limit)
        assert_eq!(obs.arm_clock, 15.0);
        assert_eq!(obs.reward, Some(0.95));
        assert!(w.done());
        assert_eq!(w.ledger().clock.used, 25.0);
        assert_eq!(w.ledger().pulls, vec![1, 2]);
    }

    #[test]
    fn failures_cost_time_and_never_become_incumbent() {
        // A failed evaluation at 3 s with a high recorded score must be ignored.
        let mut a = arm("a", &[(3.0, f64::NAN), (8.0, 0.4)]);
        a.score[0] = f64::NAN;
        let t = task(vec![a]);
        let mut w = world(&t, 10.0, 5.0);
        let obs = w.pull(0);
        assert_eq!(obs.revealed.len(), 1);
        assert!(!obs.revealed[0].ok);
        assert_eq!(obs.reward, None, "no ok evaluation yet");
        assert!(w.ledger().incumbent.is_none());
        assert_eq!(w.ledger().failures, 1);
        let obs = w.pull(0);
        assert_eq!(obs.reward, Some(0.4));
    }

    #[test]
    fn exhausted_arms_cost_a_slice_and_reveal_nothing() {
        let t = task(vec![arm("a", &[(1.0, 0.3)])]);
        let mut w = world(&t, 30.0, 10.0);
        assert!(!w.pull(0).exhausted);
        let obs = w.pull(0);
        assert!(obs.exhausted);
        assert!(obs.revealed.is_empty());
        assert_eq!(obs.reward, Some(0.3));
        assert_eq!(w.ledger().clock.used, 20.0);
        // The trace ends at 1 s: 9 s of the first slice and all 10 s of the second bought
        // nothing; one pull started on an exhausted arm.
        assert_eq!(w.ledger().exhausted_pulls, 1);
        assert!((w.ledger().exhausted_budget - 19.0).abs() < 1e-12);
    }

    #[test]
    fn overhead_is_charged_to_the_budget_not_to_the_arm() {
        let t = task(vec![arm("a", &[(9.0, 0.3), (19.0, 0.5)])]);
        let mut w = world(&t, 20.0, 10.0);
        // As the loop charges a decision's overhead: counted, and the start moved past it.
        let c = &mut w.ledger_mut().clock;
        let s = c.add_overhead(2.5);
        c.used += s;
        w.pull(0);
        assert_eq!(w.ledger().arm_clock[0], 10.0);
        // 12.5 used; the next slice is cut to 7.5 s, so the evaluation at 19 s is never seen.
        let obs = w.pull(0);
        assert_eq!(obs.arm_clock, 17.5);
        assert_eq!(obs.reward, Some(0.3));
        assert!(w.done());
        assert_eq!(w.ledger().clock.overhead, 2.5);
    }

    #[test]
    fn minimize_sets_are_negated_into_rewards() {
        let t = task(vec![arm("a", &[(1.0, 0.2), (2.0, 0.1)])]);
        let mut w = TimeSliced::new(
            &t,
            TimeSlicedConfig {
                budget_s: 10.0,
                slice_s: 5.0,
            },
            -1.0,
        );
        let obs = w.pull(0);
        assert_eq!(obs.reward, Some(-0.1), "lower loss is the larger reward");
        assert_eq!(w.ledger().incumbent.unwrap().eval, 1);
    }

    #[test]
    fn summed_slices_do_not_miss_an_evaluation_by_rounding() {
        // 0.1 + 0.1 + 0.1 = 0.30000000000000004 > 0.3 in floating point.
        let t = task(vec![arm("a", &[(0.3, 0.9)])]);
        let mut w = world(&t, 1.0, 0.1);
        w.pull(0);
        w.pull(0);
        assert_eq!(w.pull(0).reward, Some(0.9));
    }
}
