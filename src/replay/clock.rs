//! Time, in one object (Syne Tune's time keeper plays this part in its simulator): the budget and
//! what is used of it, whether the budget counts time (so a policy's own computation can be
//! charged to it), the tolerance at which it counts as spent, and a policy's request to stop.
//!
//! The overhead models say how much of a policy's computation is charged; the replay loop
//! (`drive`) says when: a `fixed` charge before each decision (a decision that would not finish
//! within the budget is not taken and not charged: the worker retires), a `per_fit` charge after
//! the decision for the curve fits it made, a `measured` charge after the observation for the wall
//! time of both calls. Every charged second is the deciding worker's busy time. A budget that counts pulls or units has
//! no time to charge, so there every model charges nothing.

/// How the policy's own computation is charged to the budget.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Overhead {
    /// Nothing (the default; deterministic).
    None,
    /// Seconds per decision (deterministic).
    Fixed(f64),
    /// Seconds per learning-curve or model fit the policy reports (deterministic; models a slower
    /// implementation exactly).
    PerFit(f64),
    /// Wall seconds of the policy's decide and observe calls (not reproducible across machines;
    /// flagged in results).
    Measured,
}

impl Overhead {
    /// The model as experiment files and results name it.
    pub fn describe(&self) -> String {
        match self {
            Overhead::None => "none".to_string(),
            Overhead::Fixed(s) => format!("fixed({s} s per decision)"),
            Overhead::PerFit(s) => format!("per_fit({s} s per curve fit)"),
            Overhead::Measured => "measured".to_string(),
        }
    }
}

/// The budget of one cell and what is used of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    /// The whole budget, in the world's unit (seconds, pulls or units).
    pub budget: f64,
    /// Budget used so far, overhead included.
    pub used: f64,
    /// Seconds of the policy's own computation charged so far.
    pub overhead: f64,
    /// The budget counts seconds: overhead can be charged to it.
    timed: bool,
    /// The budget counts as spent once `used >= budget * (1 - tolerance)`.
    tolerance: f64,
    stopped: bool,
    /// Simulated workers of the cell (`drive_workers`).
    pub workers: usize,
    /// Simulated wall-clock seconds when the last work finished (the makespan).
    pub wall: f64,
    /// Worker-seconds spent deciding (charged overhead) and working; `workers · wall − busy` is
    /// the workers' idle time.
    pub busy: f64,
}

impl Clock {
    /// A budget of pulls or units: overhead has no time to be charged to.
    pub fn counting(budget: f64) -> Self {
        Clock {
            budget,
            used: 0.0,
            overhead: 0.0,
            timed: false,
            tolerance: 0.0,
            stopped: false,
            workers: 1,
            wall: 0.0,
            busy: 0.0,
        }
    }

    /// A budget of seconds, spent once used is within `tolerance` (relative) of it.
    pub fn timed(budget: f64, tolerance: f64) -> Self {
        Clock {
            timed: true,
            tolerance,
            ..Clock::counting(budget)
        }
    }

    /// The budget counts seconds.
    pub fn is_timed(&self) -> bool {
        self.timed
    }

    /// No budget is left, or the policy asked to stop.
    pub fn done(&self) -> bool {
        self.stopped || self.used >= self.budget * (1.0 - self.tolerance)
    }

    /// Budget left (never negative).
    pub fn left(&self) -> f64 {
        (self.budget - self.used).max(0.0)
    }

    /// The replay loop's instant `t`: in a budget of seconds, `used` is the simulated time at
    /// which a worker acts (the world spends from it, and the loop sets it back to the instant
    /// of the event it handles next, which may be before a finish just charged); a budget of
    /// pulls or units counts work and is left alone.
    #[inline]
    pub fn set_instant(&mut self, t: f64) {
        if self.timed {
            self.used = t;
        }
    }

    /// Charge `amount` of work to the budget.
    pub fn spend(&mut self, amount: f64) {
        self.used += amount;
    }

    /// Count `seconds` of a policy's own computation as overhead without moving `used` (the
    /// replay loop moves each worker's start instead); returns what is charged: nothing when the
    /// budget does not count time.
    pub fn add_overhead(&mut self, seconds: f64) -> f64 {
        if self.timed {
            self.overhead += seconds;
            seconds
        } else {
            0.0
        }
    }

    /// Idle worker-seconds: the workers' time up to the makespan not spent deciding or working.
    pub fn idle(&self) -> f64 {
        (self.workers as f64 * self.wall - self.busy).max(0.0)
    }

    /// The policy asked to stop: the cell ends with the budget left unused.
    pub fn stop(&mut self) {
        self.stopped = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_is_charged_only_to_a_budget_of_time() {
        let mut pulls = Clock::counting(10.0);
        assert_eq!(pulls.add_overhead(3.0), 0.0);
        assert_eq!((pulls.used, pulls.overhead), (0.0, 0.0));
        let mut secs = Clock::timed(10.0, 0.0);
        // The loop moves the worker's start by what is charged; `used` stays.
        assert_eq!(secs.add_overhead(3.0), 3.0);
        secs.spend(3.0);
        assert_eq!((secs.used, secs.overhead), (3.0, 3.0));
        assert!(!secs.done());
        secs.spend(7.0);
        assert!(secs.done());
        assert_eq!(secs.left(), 0.0);
    }

    #[test]
    fn only_a_budget_of_seconds_follows_the_loops_instant() {
        let mut secs = Clock::timed(10.0, 0.0);
        secs.set_instant(4.0);
        assert_eq!(secs.used, 4.0);
        // The loop sets it back to the instant it handles next.
        secs.set_instant(2.5);
        assert_eq!(secs.used, 2.5);
        let mut units = Clock::counting(10.0);
        units.spend(3.0);
        units.set_instant(8.0);
        assert_eq!(units.used, 3.0);
    }

    #[test]
    fn tolerance_absorbs_rounding_and_stop_ends_the_cell() {
        let mut c = Clock::timed(1.0, 1e-9);
        c.spend(1.0 - 1e-12);
        assert!(c.done());
        let mut d = Clock::counting(5.0);
        assert!(!d.done());
        d.stop();
        assert!(d.done());
        assert_eq!(d.left(), 5.0);
    }
}
