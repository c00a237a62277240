//! The worlds a policy acts in. Every replay rule lives in this module and nowhere else.
//!
//! A world owns the clocks, the budget and what has been revealed; it hands the policy a read-only
//! [`View`] before each decision and an [`Observation`] after each pull.
//!
//! What a policy observes (the *reward* of a pull; higher is better: scores of `minimize` trace
//! sets are negated):
//! - **time-sliced**: the arm's best-so-far `ok` score at the end of the slice, i.e. one point of
//!   HAMLET's monotone learning curve per pull, or `None` when the arm has revealed no `ok`
//!   evaluation yet. The observation also lists every evaluation the slice revealed, with its
//!   time, so curve-fitting policies can use the raw points.
//! - **pull-count**: the score of the evaluation the pull revealed, or `None` for a failed or
//!   timed-out evaluation (when failures consume budget) or a pull of an exhausted arm.
//! - **synthetic**: the feedback drawn from the arm's distribution.
//!
//! Policies that average rewards count a `None` as a pull without a reward.

mod clock;
mod drive;
pub mod pool;
mod pull_count;
mod synthetic;
mod time_sliced;

pub use clock::{Clock, Overhead};
pub use drive::{ActionKind, Observer, Step, drive, drive_workers};
pub use pull_count::{Exhausted, Order, PullCount, PullCountConfig};
pub use synthetic::{ArmDist, Synthetic, WorkTime};
pub use time_sliced::{TimeSliced, TimeSlicedConfig};

pub use crate::protocol::{Action, BudgetUnit, Observation, PoolView, Revealed, View, WorldKind};
use crate::trace::{Status, Task};

/// The absolute budget and slice of a learner-level cell on `task`: `budget` and `slice` are in
/// `unit`; the result is in seconds (time-sliced) or pulls.
pub fn absolute(unit: BudgetUnit, budget: f64, slice: f64, task: &Task) -> (f64, f64) {
    match unit {
        BudgetUnit::Seconds => (budget, slice),
        BudgetUnit::Task => {
            let span = task.mean_arm_span_s();
            (budget * span, slice * span)
        }
        BudgetUnit::Pool => ((budget * task.n_evaluations() as f64).round().max(1.0), 1.0),
        BudgetUnit::Pulls | BudgetUnit::Units | BudgetUnit::Evaluations => (budget, 1.0),
    }
}

/// The best evaluation found so far in a cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Incumbent {
    pub arm: usize,
    /// Index of the evaluation within its arm.
    pub eval: usize,
    /// Reward orientation.
    pub reward: f64,
    /// Budget used when its result came in: the `time` of the trajectory step whose work
    /// revealed it (with several workers, when that work completed, not when it started).
    pub found_at: f64,
}

/// Bookkeeping shared by every world: counts, clocks, bests and the incumbent.
#[derive(Clone, Debug)]
pub struct Ledger {
    pub pulls: Vec<u64>,
    pub arm_clock: Vec<f64>,
    pub arm_best: Vec<f64>,
    /// Seconds of recorded evaluation time consumed per arm.
    pub arm_time_s: Vec<f64>,
    /// The budget, what is used of it and the overhead charged.
    pub clock: Clock,
    pub decisions: u64,
    pub incumbent: Option<Incumbent>,
    /// Failed or timed-out evaluations revealed or skipped.
    pub failures: u64,
    /// Pulls of an arm whose trace had nothing left to reveal.
    pub exhausted_pulls: u64,
    /// Budget (seconds or pulls) spent on arms past the end of their traces.
    pub exhausted_budget: f64,
    revealed: Vec<Revealed>,
    /// Set by the replay loop: a revealed result counts for the incumbent when its work
    /// completes (`complete`), so that the incumbent, its ties and `found_at` follow the order
    /// results come in with any number of workers. Unset (a world driven by hand), it counts at
    /// once.
    pub(crate) defer: bool,
    /// Results revealed by work still running, (arm, evaluation, reward), in reveal order.
    arriving: Vec<(usize, usize, f64)>,
}

impl Ledger {
    fn new(n_arms: usize, clock: Clock) -> Self {
        Ledger {
            pulls: vec![0; n_arms],
            arm_clock: vec![0.0; n_arms],
            arm_best: vec![f64::NEG_INFINITY; n_arms],
            arm_time_s: vec![0.0; n_arms],
            clock,
            decisions: 0,
            incumbent: None,
            failures: 0,
            exhausted_pulls: 0,
            exhausted_budget: 0.0,
            revealed: Vec::with_capacity(16),
            defer: false,
            arriving: Vec::new(),
        }
    }

    /// Count `reward` (evaluation `eval` of `arm`) for the incumbent now: a strictly better
    /// result replaces it, so among equal rewards the first to come in stays.
    fn count(&mut self, arm: usize, eval: usize, reward: f64) {
        if self.incumbent.is_none_or(|inc| reward > inc.reward) {
            self.incumbent = Some(Incumbent {
                arm,
                eval,
                reward,
                found_at: self.clock.used,
            });
        }
    }

    /// The work on `arm` has completed: what it revealed counts for the incumbent now, found at
    /// the budget used now.
    pub(crate) fn complete(&mut self, arm: usize) {
        if self.arriving.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.arriving.len() {
            let (a, eval, reward) = self.arriving[i];
            if a == arm {
                self.arriving.remove(i);
                self.count(arm, eval, reward);
            } else {
                i += 1;
            }
        }
    }

    /// Forget what running work on `arm` revealed (a world whose incumbent follows another rule).
    pub(crate) fn discard(&mut self, arm: usize) {
        self.arriving.retain(|x| x.0 != arm);
    }

    /// The view of this ledger that every world hands its policy.
    fn view<'a>(
        &'a self,
        n_arms: usize,
        slice: f64,
        kind: WorldKind,
        pool: Option<PoolView<'a>>,
    ) -> View<'a> {
        View {
            n_arms,
            step: self.decisions,
            pulls: &self.pulls,
            arm_clock: &self.arm_clock,
            arm_best: &self.arm_best,
            budget: self.clock.budget,
            used: self.clock.used,
            slice,
            kind,
            pool,
            workers: 1,
            worker: 0,
            now: self.clock.used,
            pending: &[],
            busy: &[],
        }
    }

    /// Start a pull of `arm` in a world whose budget counts pulls: one decision, one unit of
    /// budget, and the arm's clock is its pull count.
    fn begin_counted_pull(&mut self, arm: usize) {
        self.decisions += 1;
        self.revealed.clear();
        self.clock.spend(1.0);
        self.pulls[arm] += 1;
        self.arm_clock[arm] = self.pulls[arm] as f64;
    }

    /// Record evaluation `eval` of `arm` as revealed: `time` is what the policy sees (arm clock).
    /// Call it after the work's budget is charged: a result counted at once is found at the
    /// budget used then.
    fn reveal(&mut self, arm: usize, eval: usize, time: f64, status: Status, reward: f64) {
        let ok = status == Status::Ok;
        if ok {
            if reward > self.arm_best[arm] {
                self.arm_best[arm] = reward;
            }
            if self.defer {
                self.arriving.push((arm, eval, reward));
            } else {
                self.count(arm, eval, reward);
            }
        } else {
            self.failures += 1;
        }
        self.revealed.push(Revealed {
            time,
            reward: if ok { reward } else { f64::NAN },
            ok,
        });
    }
}

/// A world a policy can be replayed in: every world (time-sliced, pull-count, synthetic, pool)
/// implements it, and one loop (`drive`) replays a policy in any of them.
pub trait World {
    fn kind(&self) -> WorldKind;
    fn ledger(&self) -> &Ledger;
    fn ledger_mut(&mut self) -> &mut Ledger;
    /// What the policy may look at before its next decision.
    fn view(&self) -> View<'_>;
    /// Take the policy's action (never `Stop`, which the loop handles) and return what the
    /// policy observes; an action this world cannot take is an error in words, completing the
    /// sentence "policy P …".
    fn apply(&mut self, action: Action) -> Result<Observation<'_>, String>;
    /// +1 when the recorded scores are higher-is-better, −1 otherwise (reward = sign · score).
    fn sign(&self) -> f64;

    fn n_arms(&self) -> usize {
        self.ledger().pulls.len()
    }

    /// True when the cell is over: no budget left, the policy stopped, or (pool world) nothing
    /// left to train.
    fn done(&self) -> bool {
        self.ledger().clock.done()
    }

    /// Simulated seconds a piece of work on `arm` took, for workers in a budget of pulls or units:
    /// the recorded seconds it added to the arm (`time_before` is the arm's before the work).
    fn work_time(&self, arm: usize, time_before: f64) -> f64 {
        self.ledger().arm_time_s[arm] - time_before
    }

    /// What a view shows of `arm` now: its best reward and, in the pool world, its last score and
    /// whether its curve has ended (the loop keeps it for the policy until the work finishes).
    fn arm_state(&self, arm: usize) -> (f64, f64, bool) {
        (self.ledger().arm_best[arm], f64::NEG_INFINITY, false)
    }

    /// The work on `arm` has completed: its result is revealed to the policy now (with several
    /// workers, in the order work finishes; with one, right after it started). What it revealed
    /// counts for the incumbent (and the pool world's recommendation) here, at the budget used
    /// now, so ties go by revealed order and `found_at` is the time of the step that revealed it.
    fn completed(&mut self, arm: usize) {
        self.ledger_mut().complete(arm);
    }

    /// What `arm` is, for the trajectory: its configuration in the pool world, else the arm
    /// (learner) index itself.
    fn config_of(&self, arm: usize) -> u32 {
        arm as u32
    }

    /// Several objectives: `arm`'s values at its last trained unit (`Observation::objectives`);
    /// empty with one objective.
    fn arm_objectives(&self, _arm: usize) -> &[f64] {
        &[]
    }

    /// What the finished replay found, as its results record it: the ledger's incumbent and
    /// per-arm counts, with no test score. Worlds over recorded evaluations add the incumbent's
    /// test score; the pool world reports its recommendation and counts per learner.
    fn outcome(&self) -> Outcome {
        Outcome::of_ledger(self.ledger(), self.sign(), |_, _| f64::NAN)
    }
}

/// What a finished replay found, in any world (`World::outcome`): the incumbent (the pool
/// world: the recommended configuration) and what each learner took.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// Best validation score, in the recorded orientation (NaN if none).
    pub best_score: f64,
    /// The test score of the same evaluation (NaN if none or not recorded).
    pub best_test_score: f64,
    /// The learner it came from, as an index into the data's learners.
    pub best_arm: Option<usize>,
    /// Budget used when it came in.
    pub best_found_at: f64,
    /// Per learner: pulls (learner-level worlds) or units trained (pool world).
    pub pulls: Vec<u64>,
    /// Per learner: seconds of recorded evaluation time consumed.
    pub time_s: Vec<f64>,
    /// What only the pool world has.
    pub pool: Option<pool::PoolPart>,
}

impl Outcome {
    /// The ledger's incumbent and per-arm counts (arms are learners); `test(arm, eval)` gives
    /// the incumbent's test score.
    pub fn of_ledger(l: &Ledger, sign: f64, test: impl Fn(usize, usize) -> f64) -> Outcome {
        let inc = l.incumbent;
        Outcome {
            best_score: inc.map_or(f64::NAN, |i| sign * i.reward),
            best_test_score: inc.map_or(f64::NAN, |i| test(i.arm, i.eval)),
            best_arm: inc.map(|i| i.arm),
            best_found_at: inc.map_or(f64::NAN, |i| i.found_at),
            pulls: l.pulls.clone(),
            time_s: l.arm_time_s.clone(),
            pool: None,
        }
    }

    /// The same for a world over a task's recorded evaluations, with the incumbent's test score.
    pub fn of_task(l: &Ledger, sign: f64, task: &crate::trace::Task) -> Outcome {
        Outcome::of_ledger(l, sign, |arm, eval| {
            task.arms[arm]
                .test_score
                .get(eval)
                .copied()
                .unwrap_or(f64::NAN)
        })
    }
}

/// Several objectives in a learner-level world: per arm, the values of the evaluations its last
/// pull revealed (`d` per evaluation, recorded orientation, NaN where infeasible or failed).
#[derive(Default)]
pub(crate) struct ArmPoints {
    /// Indices into the trace set's objectives; empty with one objective.
    which: Vec<usize>,
    /// The trace set's objectives (`Arm::objectives` holds this many per evaluation).
    m: usize,
    points: Vec<Vec<f64>>,
}

impl ArmPoints {
    fn new(which: &[usize], m: usize, arms: usize) -> ArmPoints {
        ArmPoints {
            which: which.to_vec(),
            m,
            points: vec![Vec::new(); arms],
        }
    }

    /// A pull of `arm` begins: forget what its last one revealed.
    #[inline]
    fn clear(&mut self, arm: usize) {
        if !self.which.is_empty() {
            self.points[arm].clear();
        }
    }

    /// The pull of `arm` (recorded as `a`) revealed evaluation `i`.
    #[inline]
    fn push(&mut self, arm: usize, a: &crate::trace::Arm, i: usize) {
        if !self.which.is_empty() {
            let v = &a.objectives[i * self.m..(i + 1) * self.m];
            self.points[arm].extend(self.which.iter().map(|&k| v[k]));
        }
    }

    fn of(&self, arm: usize) -> &[f64] {
        self.points.get(arm).map_or(&[], Vec::as_slice)
    }
}

/// The arm a learner-level world pulls for `action`: it offers `Pull` only.
fn learner_arm(kind: WorldKind, n_arms: usize, action: Action) -> Result<usize, String> {
    match action {
        Action::Pull(arm) if arm < n_arms => Ok(arm),
        Action::Pull(arm) => Err(format!(
            "chose arm {arm}, but the task has {n_arms} arms (a bug in the policy)"
        )),
        other => Err(format!(
            "asked for {other:?}, which the {} world does not offer (drawing and mutating configurations needs the pool world)",
            kind.as_str()
        )),
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use crate::trace::{Arm, Status, Task};

    /// An arm from (elapsed_s, score) pairs; a NaN score marks a failed evaluation.
    pub fn arm(name: &str, evals: &[(f64, f64)]) -> Arm {
        let mut a = Arm {
            learner: name.to_string(),
            ..Arm::default()
        };
        let mut prev = 0.0;
        for &(e, s) in evals {
            a.elapsed_s.push(e);
            a.cost_s.push(e - prev);
            prev = e;
            a.score.push(s);
            a.test_score
                .push(if s.is_nan() { f64::NAN } else { s - 0.01 });
            a.status.push(if s.is_nan() {
                Status::Failed
            } else {
                Status::Ok
            });
        }
        a
    }

    pub fn task(arms: Vec<Arm>) -> Task {
        Task {
            dataset: "hand".to_string(),
            run: 0,
            arms,
        }
    }
}
