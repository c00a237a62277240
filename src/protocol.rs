//! The vocabulary every world and every policy shares, owned by neither: what a policy sees
//! (`View`, `PoolView`), what it does (`Action`), what it learns (`Observation`, `Revealed`), the
//! `Policy` trait and what a cell tells it when it begins (`CellStart`). The Rust twin of
//! `docs/protocol.md`. `replay` (the worlds) and `policy` (the decision rules) both depend on
//! this module and not on each other.

use anyhow::Result;

use crate::rng::Rng;

/// The kind of world, as named in experiment files and results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldKind {
    TimeSliced,
    PullCount,
    Synthetic,
    /// Configuration level: arms are configurations of a recorded pool, drawn, trained unit by
    /// unit and mutated (`replay::pool`).
    Pool,
}

impl WorldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorldKind::TimeSliced => "time-sliced",
            WorldKind::PullCount => "pull-count",
            WorldKind::Synthetic => "synthetic",
            WorldKind::Pool => "pool",
        }
    }

    /// The learner-level worlds (a fixed set of arms, `Action::Pull` only).
    pub const LEARNER: [WorldKind; 3] = [
        WorldKind::TimeSliced,
        WorldKind::PullCount,
        WorldKind::Synthetic,
    ];

    /// Every world. `Self::index` has an exhaustive match, so a new variant is found by the
    /// compiler there, and a test checks that this list agrees with it.
    pub const ALL: [WorldKind; 4] = [
        WorldKind::TimeSliced,
        WorldKind::PullCount,
        WorldKind::Synthetic,
        WorldKind::Pool,
    ];

    /// The world's place in [`Self::ALL`].
    pub const fn index(self) -> usize {
        match self {
            WorldKind::TimeSliced => 0,
            WorldKind::PullCount => 1,
            WorldKind::Synthetic => 2,
            WorldKind::Pool => 3,
        }
    }
}

/// The unit budgets (and slices) are given in. Every budget rule lives in `replay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetUnit {
    /// Seconds of recorded time (time-sliced; the pool world's recorded training cost).
    Seconds,
    /// A fraction of the task's mean arm-trace length (time-sliced): 1.0 = the time at which
    /// an average arm's trace ends.
    Task,
    /// Pulls (pull-count, synthetic).
    Pulls,
    /// A fraction of the task's evaluation pool, all arms together (pull-count), rounded.
    Pool,
    /// Fidelity units trained (pool world).
    Units,
    /// Full-curve evaluations (pool world): one is the pool's `units` fidelity units.
    Evaluations,
}

impl BudgetUnit {
    /// The name in experiment files and results.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetUnit::Seconds => "seconds",
            BudgetUnit::Task => "task",
            BudgetUnit::Pulls => "pulls",
            BudgetUnit::Pool => "pool",
            BudgetUnit::Units => "units",
            BudgetUnit::Evaluations => "evaluations",
        }
    }
}

/// An evaluation revealed by a pull, as the policy sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Revealed {
    /// The arm's clock when this evaluation finished (time-sliced), or the pull index (pull-count).
    pub time: f64,
    /// Reward orientation (higher is better); NaN unless `ok`.
    pub reward: f64,
    pub ok: bool,
}

/// What a policy learns from one pull.
#[derive(Clone, Copy, Debug)]
pub struct Observation<'a> {
    pub arm: usize,
    /// The pull's reward as defined for the world (see the module docs), `None` if it has none.
    pub reward: Option<f64>,
    /// Every evaluation this pull revealed, in order.
    pub revealed: &'a [Revealed],
    /// The arm's clock after the pull (time-sliced: seconds; pull-count: pulls of this arm).
    pub arm_clock: f64,
    /// True when the arm's trace had nothing left to reveal.
    pub exhausted: bool,
    /// Several objectives (`[world] objectives`), in the experiment's order and the recorded
    /// orientation (`CellStart::all_objectives` gives the directions), NaN where infeasible or
    /// failed; empty with one objective. The pool world: the arm's value of each at its last
    /// trained unit. A learner-level world (time-sliced, pull-count): `d` values per evaluation
    /// in `revealed`, in its order.
    pub objectives: &'a [f64],
}

/// The state a policy may look at before deciding.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub n_arms: usize,
    /// Decisions taken so far in this cell.
    pub step: u64,
    /// Pulls of each arm so far.
    pub pulls: &'a [u64],
    /// Each arm's clock (time-sliced: seconds run; pull-count: pulls).
    pub arm_clock: &'a [f64],
    /// Each arm's best revealed reward, `-inf` if none.
    pub arm_best: &'a [f64],
    /// The whole budget, in the world's unit (seconds or pulls).
    pub budget: f64,
    /// Budget used so far, including charged overhead.
    pub used: f64,
    /// The slice length in seconds (time-sliced), 1 pull (pull-count), 1 unit (pool).
    pub slice: f64,
    pub kind: WorldKind,
    /// What the pool world adds; `None` in learner-level worlds.
    pub pool: Option<PoolView<'a>>,
    /// Simulated workers of the cell (`[world] workers`, default 1).
    pub workers: usize,
    /// The worker this decision is for (0 with one worker).
    pub worker: usize,
    /// Simulated wall-clock seconds now (with one worker in a budget of seconds, `used`).
    pub now: f64,
    /// Work in flight on the other workers, in no particular order (`since` tells its age): its
    /// results are not in this view
    /// (`arm_best` and the pool's `last` and `done` show only finished work; `pulls` counts
    /// started work). Empty with one worker.
    pub pending: &'a [Pending],
    /// Per arm: it is running on a worker (empty with one worker: nothing runs between
    /// decisions).
    pub busy: &'a [bool],
}

/// Work in flight: an arm being pulled (a slice, an evaluation, a unit) on a worker since a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pending {
    pub arm: usize,
    pub worker: usize,
    /// Simulated wall-clock seconds when it started.
    pub since: f64,
}

/// The pool world's part of a view.
#[derive(Clone, Copy, Debug)]
pub struct PoolView<'a> {
    /// Fidelity units in a full curve.
    pub units: u32,
    /// Configurations that can still become arms (drawn, chosen or mutated into): those not yet
    /// drawn, or 0 once the world's cap on live arms (`max_arms`) is reached.
    pub undrawn: usize,
    /// Per arm: the score (reward orientation) after its last trained unit, `-inf` if none.
    pub last: &'a [f64],
    /// Per arm: its curve has ended (fully trained, or failed).
    pub done: &'a [bool],
    /// Per arm: its configuration's index in the pool.
    pub config: &'a [u32],
    /// Per configuration of the pool: it can be chosen (`Action::Choose`) by ranking: recorded on
    /// this task, of a learner the task keeps, not drawn yet, and not a learner's default.
    pub open: &'a [bool],
    /// Configurations still open.
    pub n_open: usize,
    /// The pool's configurations, encoded (learner and values).
    pub space: &'a crate::space::Space,
    /// Per learner: its default configuration, when recorded for this task and the task keeps
    /// the learner.
    pub defaults: &'a [Option<u32>],
}

impl View<'_> {
    pub fn remaining(&self) -> f64 {
        (self.budget - self.used).max(0.0)
    }

    /// `arm` is running on a worker: it cannot be pulled until its result arrives.
    pub fn is_busy(&self, arm: usize) -> bool {
        self.busy.get(arm).copied().unwrap_or(false)
    }
}

/// What a policy asks the world to do.
///
/// Learner-level worlds (time-sliced, pull-count, synthetic) have a fixed set of arms and offer
/// only `Pull`. The pool world's arms are configurations that appear during a cell: `Draw` adds a
/// fresh configuration (seeded, without replacement) and trains its first unit, `Mutate(arm)` adds
/// an unevaluated grid neighbour of `arm` and trains its first unit, `Pull(arm)` trains `arm` one
/// more unit. A new arm's id is the number of arms before it; the policy learns it from the
/// observation that follows. `Train(arm, to)`, `DrawTo(to)` and `ChooseTo(config, to)` train to a fidelity in one piece
/// of work: every unit up to unit `to` (1-based, at least one more), revealed together when the
/// work finishes, with one decision and one trajectory step, as an optimiser that evaluates a
/// configuration at a fidelity does (a full-fidelity random search, an Optuna trial).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Pull(usize),
    Draw,
    /// Pool world: train `arm` up to unit `to` in one piece of work (at least one unit).
    Train(usize, u32),
    /// Pool world: a fresh configuration, as `Draw`, trained up to unit `to` in one piece of work.
    DrawTo(u32),
    Mutate(usize),
    /// Pool world: this configuration (index into the pool's configurations) becomes a new arm
    /// and trains its first unit. Pool-based optimisers (TPE, SMAC-style, grid search, Ex-Def)
    /// choose among the configurations the view marks open, or a learner's default.
    Choose(u32),
    /// Pool world: this configuration, as `Choose`, trained up to unit `to` in one piece of work
    /// (an optimiser's trial at a fidelity: an Optuna sampler's full-fidelity evaluation).
    ChooseTo(u32, u32),
    /// Pool world: train `arm` again over units `from..=to`, units it has trained already, in one
    /// piece of work: each unit's cost is charged again and its recorded score revealed again
    /// (an optimiser's repeated evaluation of a configuration under `repeat = "charge"`, as its
    /// own loop would pay for it). Nothing new is learned, so the incumbent does not change.
    Retrain(usize, u32, u32),
    /// Any world: the policy has nothing more to do; the cell ends with the budget left unused
    /// (Ex-Def after its defaults, grid search after its grid). Work in flight still finishes.
    Stop,
    /// Several workers: this worker idles until the next piece of work finishes (synchronous
    /// successive halving at a rung whose last results are still running). Waiting with
    /// nothing in flight is an error.
    Wait,
}

/// A policy's failure, with what the run should do about it (an external policy's process that
/// crashed, hung or answered nonsense). The runner reads the kind, not who failed.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PolicyFailure {
    pub message: String,
    /// The run goes on with the other cells and lists this one (`on_failure = "restart"`); else
    /// it stops, keeping every finished cell.
    pub keep_going: bool,
}

/// A decision rule that cannot fail: every built-in policy. It is a [`Policy`] through the
/// blanket impl below, so the loop asks every policy the same one fallible question.
pub trait Rule: Send {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action;
    fn observe(&mut self, obs: &Observation<'_>);
    /// Curve fits done since the last call, for the `per_fit` overhead model.
    fn take_fits(&mut self) -> u64 {
        0
    }
}

impl<R: Rule> Policy for R {
    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        Ok(Rule::decide(self, view, rng))
    }
    fn observe(&mut self, obs: &Observation<'_>) {
        Rule::observe(self, obs)
    }
    fn take_fits(&mut self) -> u64 {
        Rule::take_fits(self)
    }
}

#[cfg(test)]
impl dyn Policy {
    /// A decision that tests expect to succeed (a rule's, behind a `Box<dyn Policy>`).
    pub fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        self.try_decide(view, rng)
            .expect("the policy failed to decide")
    }
}

/// What the loop drives: a [`Rule`], or a policy that can fail (an external process, Python
/// code, a wrapper of either), which implements this trait itself.
pub trait Policy: Send {
    /// The decision before each step; an error fails the cell (an external process that
    /// crashed, hung or answered nonsense; a Python exception).
    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action>;
    fn observe(&mut self, obs: &Observation<'_>);
    /// Curve fits done since the last call, for the `per_fit` overhead model.
    fn take_fits(&mut self) -> u64 {
        0
    }
    /// Called once before the cell's first decision. Built-in policies are built for their cell
    /// and ignore it; an external policy starts (or reuses) its process and announces the cell.
    fn begin(&mut self, _cell: &CellStart<'_>) -> Result<()> {
        Ok(())
    }
    /// Called once after the cell's last observation; an error here fails the cell. Returns the
    /// policy's own counts for the cell as a JSON object's text (runs.parquet's `policy_stats`:
    /// a library adapter's suggestions, repeats and snapped points), or None.
    fn finish(&mut self) -> Result<Option<String>> {
        Ok(None)
    }
}

/// A policy's own counts for its cell (`Policy::finish`), checked: `null` is none, an object is
/// kept as its canonical text (keys sorted), anything else is an error naming what was given.
pub fn policy_stats(v: serde_json::Value) -> std::result::Result<Option<String>, String> {
    match v {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Object(m) => Ok(Some(serde_json::Value::Object(m).to_string())),
        other => {
            let mut shown = other.to_string();
            shown.truncate(120);
            Err(format!(
                "its stats are `{shown}`; stats must be a JSON object (e.g. {{\"suggestions\": 40}}) or null"
            ))
        }
    }
}

/// What a policy is told when its cell begins (external policies pass it on; see
/// `docs/protocol.md`).
#[derive(Clone, Debug)]
pub struct CellStart<'a> {
    /// The cell's index in the experiment's expansion order.
    pub cell: u64,
    pub seed: u64,
    pub repetition: u32,
    /// `dataset/run` (learner level) or `dataset/run/scope` (pool world).
    pub task: String,
    pub dataset: &'a str,
    pub world: WorldKind,
    pub unit: BudgetUnit,
    /// The budget as the experiment gives it, and in absolute terms (seconds, pulls or units).
    pub budget: f64,
    pub budget_abs: f64,
    /// The slice in absolute terms (seconds in the time-sliced world, else 1).
    pub slice_abs: f64,
    /// Simulated workers (`[world] workers`).
    pub workers: usize,
    /// Learner-level worlds: the arms' names, in arm order. The pool world: empty (arms appear
    /// as the policy draws them).
    pub arms: Vec<&'a str>,
    /// Several objectives in a learner-level world (`[world] objectives`): each objective's name
    /// and whether it is maximised, in the order of `Observation::objectives`; empty otherwise
    /// (the pool world names them in `PoolStart::objectives`).
    pub objectives: Vec<(&'a str, bool)>,
    pub pool: Option<PoolStart<'a>>,
}

impl CellStart<'_> {
    /// Several objectives in any world: each one's name and whether it is maximised (the
    /// learner-level world's, or the pool's); empty with one objective.
    pub fn all_objectives(&self) -> &[(&str, bool)] {
        match &self.pool {
            Some(p) if self.objectives.is_empty() => &p.objectives,
            _ => &self.objectives,
        }
    }

    /// The cell in words, for error messages: `cell 3 (task d/0, budget 0.1 task, repetition 1)`.
    pub fn describe(&self) -> String {
        format!(
            "cell {} (task {}, budget {} {}, repetition {})",
            self.cell,
            self.task,
            self.budget,
            self.unit.as_str(),
            self.repetition
        )
    }
}

/// The pool world's part of a cell start.
#[derive(Clone, Debug)]
pub struct PoolStart<'a> {
    /// Fidelity units in a full curve.
    pub units: u32,
    /// Configurations in the pool for this task.
    pub configs: usize,
    /// The learners' names.
    pub learners: Vec<&'a str>,
    /// Per learner, its default configuration (index into the pool's configurations) when the
    /// pool records one on this task and the task keeps the learner.
    pub defaults: Vec<Option<u32>>,
    /// The pool's encoded space and, per configuration, whether it is open at the cell's start.
    pub space: &'a crate::space::Space,
    pub open: &'a [bool],
    /// Several objectives: each objective's name and whether it is maximised, in the order of
    /// `Observation::objectives`; empty with one objective.
    pub objectives: Vec<(&'a str, bool)>,
}

#[cfg(test)]
mod tests {
    use super::WorldKind;

    #[test]
    fn every_world_is_listed_once_in_its_place() {
        for (i, w) in WorldKind::ALL.iter().enumerate() {
            assert_eq!(w.index(), i, "{}", w.as_str());
        }
        for w in WorldKind::LEARNER {
            assert_ne!(w, WorldKind::Pool);
        }
    }
}
