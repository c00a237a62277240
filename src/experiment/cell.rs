//! Cells: one task × budget × policy × repetition, and the replay of one cell.

use anyhow::{Result, bail};

use super::spec::{Experiment, WorldSetup};
use crate::policy::CellStart;
use crate::replay::pool::Recommended;
use crate::replay::{Ledger, Observer, Step, World};
use crate::rng::{Rng, derive_seed};
use crate::trace::{Task, TraceSet};

/// One unit of work. Its seed depends on its identity only, never on order or thread.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Position in the experiment's expansion order (task, budget, policy, repetition).
    pub index: u64,
    pub task: usize,
    pub budget: usize,
    pub policy: usize,
    pub repetition: u32,
    pub seed: u64,
}

/// Expand an experiment into its cells, in order.
pub fn expand_cells(exp: &Experiment, ts: &TraceSet) -> Vec<Cell> {
    expand_with(exp, ts.tasks.len(), |ti| {
        let t = &ts.tasks[ti];
        vec![t.dataset.clone(), t.run.to_string()]
    })
}

/// The cells of `n_tasks` tasks in expansion order (task, budget, policy, repetition). A cell's
/// seed hashes its identity: `task_identity(task)`, then budget, budget unit, policy id and
/// repetition.
pub fn expand_with(
    exp: &Experiment,
    n_tasks: usize,
    task_identity: impl Fn(usize) -> Vec<String>,
) -> Vec<Cell> {
    let grid = CellGrid::new(exp, n_tasks, task_identity);
    (0..grid.len() as u64).map(|i| grid.cell(i)).collect()
}

/// An experiment's cells, each made from its index when it is needed, so that a run holds only
/// the cells it is replaying (a list of every cell took 48 bytes per cell for the whole run).
/// Expansion order (task, budget, policy, repetition): the index is
/// `((task · budgets + budget) · policies + policy) · repetitions + repetition`.
pub struct CellGrid {
    seed: u64,
    /// Per task: the fields of its identity, joined with the separator.
    tasks: Vec<String>,
    /// Per budget: its number and the budget unit, joined.
    budgets: Vec<String>,
    policies: Vec<String>,
    repetitions: u32,
}

impl CellGrid {
    /// The grid of `n_tasks` tasks; `task_identity(task)` gives the fields that a cell's seed
    /// hashes first.
    pub fn new(
        exp: &Experiment,
        n_tasks: usize,
        task_identity: impl Fn(usize) -> Vec<String>,
    ) -> CellGrid {
        CellGrid {
            seed: exp.seed,
            tasks: (0..n_tasks)
                .map(|ti| task_identity(ti).join("\u{1f}"))
                .collect(),
            budgets: exp
                .world
                .budgets
                .iter()
                .map(|b| format!("{b}\u{1f}{}", exp.world.unit.as_str()))
                .collect(),
            policies: exp.policies.iter().map(|p| p.id()).collect(),
            repetitions: exp.repetitions,
        }
    }

    /// How many cells.
    pub fn len(&self) -> usize {
        self.tasks.len() * self.budgets.len() * self.policies.len() * self.repetitions as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cell `index` (< `len()`), with its seed.
    pub fn cell(&self, index: u64) -> Cell {
        let reps = u64::from(self.repetitions);
        let (np, nb) = (self.policies.len() as u64, self.budgets.len() as u64);
        let repetition = (index % reps) as u32;
        let policy = ((index / reps) % np) as usize;
        let budget = ((index / reps / np) % nb) as usize;
        let task = (index / reps / np / nb) as usize;
        let identity = format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{repetition}",
            self.tasks[task], self.budgets[budget], self.policies[policy]
        );
        Cell {
            index,
            task,
            budget,
            policy,
            repetition,
            seed: derive_seed(self.seed, &identity),
        }
    }
}

/// What one cell produced, in any world.
#[derive(Clone, Debug, PartialEq)]
pub struct CellResult {
    /// The cell's position in the experiment's expansion order.
    pub index: u64,
    /// The cell's seed (from its identity, never from the order it ran in).
    pub seed: u64,
    /// The budget in absolute terms (seconds, pulls or units).
    pub budget_abs: f64,
    /// The slice in absolute terms (time-sliced), NaN in other worlds.
    pub slice_abs: f64,
    /// Best validation score found (pool world: of the recommended configuration), in the
    /// recorded orientation (NaN if none).
    pub best_score: f64,
    /// Test score of the best evaluation (pool world: of the recommended configuration), NaN if none.
    pub best_test_score: f64,
    /// The learner of the best evaluation (pool world: of the recommended configuration), as an
    /// index into the trace set's or pool's learners.
    pub best_arm: Option<usize>,
    /// Budget used when the best evaluation was found.
    pub best_found_at: f64,
    /// Per learner: pulls (learner-level worlds) or units trained (pool world).
    pub pulls: Vec<u64>,
    /// Per learner: seconds of recorded evaluation time consumed.
    pub time_s: Vec<f64>,
    /// Decisions the policy took.
    pub decisions: u64,
    /// Budget used.
    pub used: f64,
    /// Seconds of the policy's own computation charged by the overhead model.
    pub overhead_s: f64,
    /// Evaluations revealed that failed or timed out.
    pub failures: u64,
    /// Pulls of arms whose traces had ended, and the budget they took.
    pub exhausted_pulls: u64,
    /// The budget those pulls took.
    pub exhausted_budget: f64,
    /// Every step, for trajectories.parquet (empty when trajectories are not kept).
    pub steps: Vec<Step>,
    /// Simulated workers, the makespan (simulated wall-clock seconds when the last work
    /// finished) and the workers' idle seconds up to it.
    pub workers: u32,
    /// Simulated wall-clock seconds when the last work finished.
    pub makespan_s: f64,
    /// Worker-seconds neither deciding nor working, up to the makespan.
    pub idle_s: f64,
    /// What only the pool world has.
    pub pool: Option<PoolPart>,
    /// The policy's own counts for the cell, a JSON object's text (`Policy::finish`), or None.
    pub policy_stats: Option<String>,
}

/// The pool world's part of a cell's result.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolPart {
    pub recommended: Option<Recommended>,
    pub configs_drawn: u64,
    pub mutations: u64,
    pub mutation_fallbacks: u64,
    pub units_trained: u64,
}

impl CellResult {
    /// The result of a finished replay in `world`, before the world's own fields are filled:
    /// the incumbent, counts and clock from the ledger.
    pub(crate) fn from_world<W: World + ?Sized>(
        cell: &Cell,
        world: &W,
        budget_abs: f64,
        steps: Vec<Step>,
    ) -> CellResult {
        Self::from_ledger(cell, world.ledger(), world.sign(), budget_abs, steps)
    }

    /// The same from a world's final ledger; `sign` turns rewards into recorded scores.
    pub(crate) fn from_ledger(
        cell: &Cell,
        l: &Ledger,
        sign: f64,
        budget_abs: f64,
        steps: Vec<Step>,
    ) -> CellResult {
        let inc = l.incumbent;
        CellResult {
            index: cell.index,
            seed: cell.seed,
            budget_abs,
            slice_abs: f64::NAN,
            best_score: inc.map_or(f64::NAN, |i| sign * i.reward),
            best_test_score: f64::NAN,
            best_arm: inc.map(|i| i.arm),
            best_found_at: inc.map_or(f64::NAN, |i| i.found_at),
            pulls: l.pulls.clone(),
            time_s: l.arm_time_s.clone(),
            decisions: l.decisions,
            used: l.clock.used,
            overhead_s: l.clock.overhead,
            failures: l.failures,
            exhausted_pulls: l.exhausted_pulls,
            exhausted_budget: l.exhausted_budget,
            steps,
            workers: l.clock.workers as u32,
            makespan_s: l.clock.wall,
            idle_s: l.clock.idle(),
            pool: None,
            policy_stats: None,
        }
    }
}

/// A learner-level cell's result: the incumbent's arm is a learner, and its test score is that of
/// the same evaluation.
fn trace_result(
    cell: &Cell,
    ledger: &Ledger,
    sign: f64,
    task: &Task,
    budget_abs: f64,
    steps: Vec<Step>,
) -> CellResult {
    let mut r = CellResult::from_ledger(cell, ledger, sign, budget_abs, steps);
    r.best_test_score = ledger.incumbent.map_or(f64::NAN, |i| {
        task.arms[i.arm]
            .test_score
            .get(i.eval)
            .copied()
            .unwrap_or(f64::NAN)
    });
    r
}

/// A policy ready to be replayed in a cell's world: the loop's arguments but the world.
pub(crate) struct Replay<'a, 'o> {
    pub policy: &'a mut dyn crate::protocol::Policy,
    pub id: &'a str,
    pub rng: &'a mut Rng,
    pub observers: &'a mut [&'o mut dyn Observer],
}

/// The absolute budget and slice of a cell for its task (the rule is `replay::absolute`).
pub fn absolute(setup: &WorldSetup, budget: f64, task: &Task) -> (f64, f64) {
    crate::replay::absolute(setup.unit, budget, setup.slice(), task)
}

/// Replay one cell of a learner-level experiment (time-sliced, pull-count, synthetic).
/// `record_steps` keeps the trajectory (every decision).
pub fn run_trace_cell(
    cell: &Cell,
    exp: &Experiment,
    ts: &TraceSet,
    record_steps: bool,
) -> Result<CellResult> {
    let task = &ts.tasks[cell.task];
    let cfg = &exp.policies[cell.policy];
    let sign = ts.manifest.direction.sign();
    let (budget_abs, slice_abs) = absolute(&exp.world, exp.world.budgets[cell.budget], task);
    if !(budget_abs > 0.0 && slice_abs > 0.0) {
        bail!(
            "task {}: budget {} {} is {budget_abs} in absolute terms (slice {slice_abs}); the task's traces are empty",
            task.name(),
            exp.world.budgets[cell.budget],
            exp.world.unit.as_str()
        );
    }
    if task.arms.is_empty() {
        bail!(
            "task {} has no arms: nothing to replay (check the experiment's [tasks] learners filter)",
            task.name()
        );
    }
    let mut policy = cfg.build_for(&task.dataset, task.arms.len());
    policy.begin(&CellStart {
        cell: cell.index,
        workers: exp.world.workers,
        seed: cell.seed,
        repetition: cell.repetition,
        task: task.name(),
        dataset: &task.dataset,
        world: exp.world.kind(),
        unit: exp.world.unit,
        budget: exp.world.budgets[cell.budget],
        budget_abs,
        slice_abs,
        arms: task.arms.iter().map(|a| a.learner.as_str()).collect(),
        pool: None,
    })?;
    let mut rng = Rng::new(cell.seed);
    let mut steps = Vec::new();
    let mut observers: Vec<&mut dyn Observer> = Vec::new();
    if record_steps {
        observers.push(&mut steps);
    }
    let replay = Replay {
        policy: policy.as_mut(),
        id: &cfg.id(),
        rng: &mut rng,
        observers: &mut observers,
    };
    let (ledger, slice) = exp.world.options.replay_learner(
        replay,
        task,
        (budget_abs, slice_abs),
        sign,
        derive_seed(cell.seed, "world"),
        exp.world.workers,
    )?;
    drop(observers);
    let mut result = trace_result(cell, &ledger, sign, task, budget_abs, steps);
    result.policy_stats = policy.finish()?;
    result.slice_abs = slice;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::WorldOptions;
    use crate::replay::{BudgetUnit, Overhead};
    use crate::trace::Arm;

    fn setup(unit: BudgetUnit, slice: f64) -> WorldSetup {
        WorldSetup {
            workers: 1,
            budgets: vec![],
            unit,
            options: WorldOptions::TimeSliced {
                slice,
                overhead: Overhead::None,
            },
        }
    }

    #[test]
    fn relative_budgets_scale_with_the_tasks_mean_arm_length() {
        let arm = |end: f64, n: usize| Arm {
            elapsed_s: (1..=n).map(|i| end * i as f64 / n as f64).collect(),
            ..Arm::default()
        };
        // Arms end at 100 s and 300 s: mean arm length 200 s; 3 + 5 = 8 evaluations.
        let task = Task {
            dataset: "d".into(),
            run: 0,
            arms: vec![arm(100.0, 3), arm(300.0, 5)],
        };
        assert_eq!(
            absolute(&setup(BudgetUnit::Task, 0.01), 0.5, &task),
            (100.0, 2.0)
        );
        assert_eq!(
            absolute(&setup(BudgetUnit::Seconds, 10.0), 60.0, &task),
            (60.0, 10.0)
        );
        assert_eq!(
            absolute(&setup(BudgetUnit::Pool, 1.0), 0.5, &task),
            (4.0, 1.0)
        );
        assert_eq!(
            absolute(&setup(BudgetUnit::Pulls, 1.0), 7.0, &task),
            (7.0, 1.0)
        );
    }
}
