//! Cells: one task × budget × policy × repetition, and the replay of one cell.

use anyhow::{Context, Result, bail};

use super::pool::{PoolData, PoolTaskRef};
use super::spec::{Experiment, WorldSetup};
use crate::policy::{CellStart, PoolStart};
use crate::replay::{Ledger, Observer, Outcome, Step, World, WorldKind, drive_workers};
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
            // The seed identity: a renamed parameter keeps its old name here.
            policies: exp.policies.iter().map(|p| p.seed_id()).collect(),
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
        let mut cell = Cell {
            index,
            task,
            budget,
            policy,
            repetition,
            seed: 0,
        };
        cell.seed = derive_seed(self.seed, &self.identity(&cell));
        cell
    }

    /// What a cell's seed hashes (after the experiment's seed): its task's identity, budget,
    /// budget unit, policy id and repetition, never its index. The cell cache's key holds it.
    pub fn identity(&self, cell: &Cell) -> String {
        format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}",
            self.tasks[cell.task],
            self.budgets[cell.budget],
            self.policies[cell.policy],
            cell.repetition
        )
    }
}

/// What one cell produced, in any world. Serialisable: the cell cache stores it as it is.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellResult {
    /// The cell's position in the experiment's expansion order.
    pub index: u64,
    /// The cell's seed (from its identity, never from the order it ran in).
    pub seed: u64,
    /// The budget in absolute terms (seconds, pulls or units).
    pub budget_abs: f64,
    /// The slice in absolute terms (time-sliced), NaN in other worlds.
    pub slice_abs: f64,
    /// The incumbent (pool world: the recommended configuration), what each learner took, and
    /// the pool world's counts: what the world found (`World::outcome`).
    pub outcome: Outcome,
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
    /// The policy's own counts for the cell, a JSON object's text (`Policy::finish`), or None.
    pub policy_stats: Option<String>,
    /// An experiment of several objectives: the archive's indicators at the end.
    pub objectives: Option<super::objectives::MoOutcome>,
    /// And its hypervolume regret after each step of `steps` (empty when trajectories are not
    /// kept or there is one objective).
    pub hv_regret_steps: Vec<f64>,
}

pub(crate) use crate::replay::pool::PoolPart;

impl CellResult {
    /// The result of a finished replay: the cell, the world's final ledger (counts and clock)
    /// and its outcome (incumbent and per-learner counts).
    fn new(cell: &Cell, l: &Ledger, outcome: Outcome, cw: &CellWorld<'_>) -> CellResult {
        CellResult {
            index: cell.index,
            seed: cell.seed,
            budget_abs: cw.budget_abs,
            slice_abs: cw.recorded_slice,
            outcome,
            decisions: l.decisions,
            used: l.clock.used,
            overhead_s: l.clock.overhead,
            failures: l.failures,
            exhausted_pulls: l.exhausted_pulls,
            exhausted_budget: l.exhausted_budget,
            steps: Vec::new(),
            workers: l.clock.workers as u32,
            makespan_s: l.clock.wall,
            idle_s: l.clock.idle(),
            policy_stats: None,
            objectives: None,
            hv_regret_steps: Vec::new(),
        }
    }
}

/// The absolute budget and slice of a cell for its task (the rule is `replay::absolute`).
pub fn absolute(setup: &WorldSetup, budget: f64, task: &Task) -> (f64, f64) {
    crate::replay::absolute(setup.unit, budget, setup.slice(), task)
}

/// What one cell's world is built from, borrowed from the experiment's data.
#[derive(Clone, Copy)]
pub enum Source<'d> {
    /// A trace set's task, replayed in a learner-level world, and its objectives when the
    /// experiment measures several.
    Traces(&'d TraceSet, Option<&'d super::objectives::MoData>),
    /// A pool's task, replayed in the pool world.
    Pool(&'d PoolData),
}

/// A cell's world, one variant per world (the compiler lists what a new world must add here).
pub(crate) enum AnyWorld<'d> {
    TimeSliced(crate::replay::TimeSliced<'d>),
    PullCount(crate::replay::PullCount<'d>),
    Synthetic(crate::replay::Synthetic),
    /// Boxed: it is several times the size of the others.
    Pool(Box<crate::replay::pool::PoolWorld<'d>>),
}

impl AnyWorld<'_> {
    /// A learner-level world that shows its policy these objectives (indices into the trace
    /// set's `m`) of every evaluation a pull reveals; the synthetic world records none.
    pub(crate) fn with_objectives(self, which: &[usize], m: usize) -> Self {
        match self {
            AnyWorld::TimeSliced(w) => AnyWorld::TimeSliced(w.with_objectives(which, m)),
            AnyWorld::PullCount(w) => AnyWorld::PullCount(w.with_objectives(which, m)),
            other => other,
        }
    }

    /// The world, for what is asked once a cell (its start, ledger and outcome).
    pub(crate) fn get(&self) -> &dyn World {
        match self {
            AnyWorld::TimeSliced(w) => w,
            AnyWorld::PullCount(w) => w,
            AnyWorld::Synthetic(w) => w,
            AnyWorld::Pool(w) => w.as_ref(),
        }
    }
}

/// One cell's world, ready to replay, and what its policy is told at the start.
pub(crate) struct CellWorld<'d> {
    pub world: AnyWorld<'d>,
    /// The budget in absolute terms (seconds, pulls or units).
    pub budget_abs: f64,
    /// The slice in absolute terms that the policy is told (time-sliced; 1 elsewhere) and the
    /// one the results record (time-sliced; NaN elsewhere).
    start_slice: f64,
    recorded_slice: f64,
    /// The task's name (`dataset/run`, or `dataset/run/scope` in the pool world).
    pub task: String,
    dataset: &'d str,
    /// Learner-level worlds: the arms' names.
    arms: Vec<&'d str>,
    /// A learner-level world's objectives, when the experiment measures several.
    objectives: Option<&'d super::objectives::MoData>,
    pool: Option<(&'d PoolData, &'d PoolTaskRef)>,
}

impl CellWorld<'_> {
    /// What the policy is told when the cell begins.
    fn start(&self, cell: &Cell, exp: &Experiment) -> CellStart<'_> {
        CellStart {
            cell: cell.index,
            workers: exp.world.workers,
            seed: cell.seed,
            repetition: cell.repetition,
            task: self.task.clone(),
            dataset: self.dataset,
            world: exp.world.kind(),
            unit: exp.world.unit,
            budget: exp.world.budgets[cell.budget],
            budget_abs: self.budget_abs,
            slice_abs: self.start_slice,
            arms: self.arms.clone(),
            objectives: self.objectives.as_ref().map_or(Vec::new(), |mo| mo.named()),
            pool: self.pool.map(|(data, t)| {
                let pool = &data.pool;
                let pt = &pool.tasks[t.task];
                PoolStart {
                    units: pool.manifest.units,
                    configs: pool.configs.len(),
                    learners: pool
                        .manifest
                        .learners
                        .iter()
                        .map(|l| l.name.as_str())
                        .collect(),
                    defaults: pool
                        .defaults
                        .iter()
                        .enumerate()
                        .map(|(l, d)| {
                            d.filter(|&c| {
                                t.learners.contains(&l) && !pt.curves[c as usize].is_empty()
                            })
                        })
                        .collect(),
                    space: &pool.space,
                    open: self.world.get().view().pool.map_or(&[][..], |p| p.open),
                    objectives: data.objectives.as_ref().map_or(Vec::new(), |mo| mo.named()),
                }
            }),
        }
    }
}

/// Build the world of `cell`: a learner-level world on a trace set's task, or the pool world on
/// a pool's task restricted to the learners it keeps.
pub(crate) fn build_world<'d>(
    source: Source<'d>,
    cell: &Cell,
    exp: &Experiment,
) -> Result<CellWorld<'d>> {
    let budget = exp.world.budgets[cell.budget];
    let world_seed = derive_seed(cell.seed, "world");
    match source {
        Source::Traces(ts, mo) => {
            let task = &ts.tasks[cell.task];
            let (budget_abs, slice_abs) = absolute(&exp.world, budget, task);
            if !(budget_abs > 0.0 && slice_abs > 0.0) {
                bail!(
                    "task {}: budget {budget} {} is {budget_abs} in absolute terms (slice {slice_abs}); the task's traces are empty",
                    task.name(),
                    exp.world.unit.as_str()
                );
            }
            if task.arms.is_empty() {
                bail!(
                    "task {} has no arms: nothing to replay (check the experiment's [tasks] learners filter)",
                    task.name()
                );
            }
            let sign = ts.manifest.direction.sign();
            let mut world =
                exp.world
                    .options
                    .learner_world(task, (budget_abs, slice_abs), sign, world_seed)?;
            if let Some(mo) = mo {
                world = world.with_objectives(&mo.which, ts.manifest.objectives.len());
            }
            let recorded_slice = if world.get().kind() == WorldKind::TimeSliced {
                slice_abs
            } else {
                f64::NAN
            };
            Ok(CellWorld {
                world,
                budget_abs,
                start_slice: slice_abs,
                recorded_slice,
                task: task.name(),
                dataset: &task.dataset,
                arms: task.arms.iter().map(|a| a.learner.as_str()).collect(),
                objectives: mo,
                pool: None,
            })
        }
        Source::Pool(data) => {
            let t = &data.tasks[cell.task];
            let (world, budget_abs) = super::pool::pool_world(exp, data, t, budget, world_seed)?;
            Ok(CellWorld {
                world: AnyWorld::Pool(Box::new(world)),
                budget_abs,
                start_slice: 1.0,
                recorded_slice: f64::NAN,
                task: data.task_name(t),
                dataset: &data.pool.tasks[t.task].dataset,
                arms: Vec::new(),
                objectives: None,
                pool: Some((data, t)),
            })
        }
    }
}

/// Replay one cell in any world: build its world, its policy from the cell's start, drive the
/// one loop on `[world] workers` workers, and take the outcome through the world.
/// `record_steps` keeps the trajectory (every decision).
pub fn run_cell(
    cell: &Cell,
    exp: &Experiment,
    source: Source<'_>,
    record_steps: bool,
) -> Result<CellResult> {
    let mut cw = build_world(source, cell, exp)?;
    let cfg = &exp.policies[cell.policy];
    let mut policy = {
        let start = cw.start(cell, exp);
        let mut policy = cfg.build_for(&start);
        policy.begin(&start)?;
        policy
    };
    let mut rng = Rng::new(cell.seed);
    let mut steps = Vec::new();
    let objectives = match source {
        Source::Pool(data) => data.objectives.as_deref(),
        Source::Traces(_, mo) => mo,
    };
    let mut archive =
        objectives.map(|mo| super::objectives::ArchiveObserver::new(mo, cell.task, record_steps));
    let mut observers: Vec<&mut dyn Observer> = Vec::new();
    if record_steps {
        observers.push(&mut steps);
    }
    if let Some(a) = &mut archive {
        observers.push(a);
    }
    let id = cfg.id();
    let (overhead, workers) = (exp.world.overhead(), exp.world.workers);
    // The loop is compiled for each world (a match, not a trait object: the loop's calls into
    // the world are the replay's hot path).
    macro_rules! drive {
        ($w:expr) => {
            drive_workers(
                $w,
                policy.as_mut(),
                &id,
                &mut rng,
                overhead,
                workers,
                &mut observers,
            )
        };
    }
    let driven = match &mut cw.world {
        AnyWorld::TimeSliced(w) => drive!(w),
        AnyWorld::PullCount(w) => drive!(w),
        AnyWorld::Synthetic(w) => drive!(w),
        AnyWorld::Pool(w) => drive!(w.as_mut()),
    };
    driven.with_context(|| format!("task {}", cw.task))?;
    drop(observers);
    let policy_stats = policy.finish()?;
    let world = cw.world.get();
    let mut result = CellResult::new(cell, world.ledger(), world.outcome(), &cw);
    result.steps = steps;
    result.policy_stats = policy_stats;
    if let Some(a) = archive {
        result.objectives = Some(a.outcome());
        result.hv_regret_steps = a.history.unwrap_or_default();
    }
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
            objectives: None,
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
