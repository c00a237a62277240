//! Cells: one task × budget × policy × repetition, and the replay of one cell.

use anyhow::{Result, bail};

use super::spec::{Experiment, WorldOptions, WorldSetup};
use crate::policy::{CellStart, Policy, PolicyConfig};
use crate::replay::{
    Overhead, PullCount, PullCountConfig, Step, Synthetic, TimeSliced, TimeSlicedConfig, World,
    WorldKind, drive,
};
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
    let mut cells = Vec::new();
    let mut index = 0;
    for ti in 0..n_tasks {
        let task = task_identity(ti);
        for (bi, budget) in exp.world.budgets.iter().enumerate() {
            for (pi, policy) in exp.policies.iter().enumerate() {
                for rep in 0..exp.repetitions {
                    let mut fields = task.clone();
                    fields.extend([
                        budget.to_string(),
                        exp.world.unit.as_str().to_string(),
                        policy.id(),
                        rep.to_string(),
                    ]);
                    cells.push(Cell {
                        index,
                        task: ti,
                        budget: bi,
                        policy: pi,
                        repetition: rep,
                        seed: derive_seed(exp.seed, &fields.join("\u{1f}")),
                    });
                    index += 1;
                }
            }
        }
    }
    cells
}

/// What one cell produced.
#[derive(Clone, Debug, PartialEq)]
pub struct CellResult {
    pub index: u64,
    pub seed: u64,
    pub budget_abs: f64,
    pub slice_abs: f64,
    /// Best validation score found, in the trace set's orientation (NaN if none).
    pub best_score: f64,
    pub best_test_score: f64,
    pub best_arm: Option<usize>,
    pub best_found_at: f64,
    pub pulls: Vec<u64>,
    pub time_s: Vec<f64>,
    pub decisions: u64,
    pub used: f64,
    pub overhead_s: f64,
    pub failures: u64,
    /// Pulls of arms whose traces had ended, and the budget they took.
    pub exhausted_pulls: u64,
    pub exhausted_budget: f64,
    pub steps: Vec<Step>,
}

/// The absolute budget and slice of a cell for its task (the rule is `replay::absolute`).
pub fn absolute(setup: &WorldSetup, budget: f64, task: &Task) -> (f64, f64) {
    crate::replay::absolute(setup.unit, budget, setup.slice(), task)
}

/// Replay one cell. `record_steps` keeps the trajectory (every decision).
pub fn run_cell(
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
    let mut policy = cfg.build_for(&task.dataset, task.arms.len());
    policy.begin(&CellStart {
        cell: cell.index,
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
    let world_seed = derive_seed(cell.seed, "world");
    let mut steps = Vec::new();
    let steps_ref = record_steps.then_some(&mut steps);
    let p = policy.as_mut();
    let ledger = match &exp.world.options {
        WorldOptions::TimeSliced { overhead, .. } => {
            let mut w = TimeSliced::new(
                task,
                TimeSlicedConfig {
                    budget_s: budget_abs,
                    slice_s: slice_abs,
                },
                sign,
            );
            replay_in(&mut w, p, cfg, &mut rng, *overhead, sign, steps_ref)?
        }
        WorldOptions::PullCount {
            order,
            failures_consume_budget,
            exhausted,
        } => {
            let mut w = PullCount::new(
                task,
                PullCountConfig {
                    budget_pulls: budget_abs as u64,
                    order: *order,
                    failures_consume_budget: *failures_consume_budget,
                    exhausted: *exhausted,
                },
                sign,
                world_seed,
            );
            replay_in(&mut w, p, cfg, &mut rng, Overhead::None, sign, steps_ref)?
        }
        WorldOptions::Pool(_) => bail!(
            "the pool world replays pools, not trace sets (experiment::pool runs it); a bug in the caller"
        ),
        WorldOptions::Synthetic { arms } => {
            let dists = arms.iter().map(|(_, d)| *d).collect();
            let mut w = Synthetic::new(task, dists, budget_abs as u64, world_seed);
            replay_in(&mut w, p, cfg, &mut rng, Overhead::None, sign, steps_ref)?
        }
    };
    policy.finish()?;
    let inc = ledger.incumbent;
    Ok(CellResult {
        index: cell.index,
        seed: cell.seed,
        budget_abs,
        slice_abs: if exp.world.kind() == WorldKind::TimeSliced {
            slice_abs
        } else {
            f64::NAN
        },
        best_score: inc.map_or(f64::NAN, |i| sign * i.reward),
        best_test_score: inc.map_or(f64::NAN, |i| {
            task.arms[i.arm]
                .test_score
                .get(i.eval)
                .copied()
                .unwrap_or(f64::NAN)
        }),
        best_arm: inc.map(|i| i.arm),
        best_found_at: inc.map_or(f64::NAN, |i| i.found_at),
        pulls: ledger.pulls,
        time_s: ledger.arm_time_s,
        decisions: ledger.decisions,
        used: ledger.used,
        overhead_s: ledger.overhead,
        failures: ledger.failures,
        exhausted_pulls: ledger.exhausted_pulls,
        exhausted_budget: ledger.exhausted_budget,
        steps,
    })
}

/// Run the replay loop in `world` and return its final ledger.
fn replay_in<W: World>(
    world: &mut W,
    policy: &mut dyn Policy,
    cfg: &PolicyConfig,
    rng: &mut Rng,
    overhead: Overhead,
    sign: f64,
    steps: Option<&mut Vec<Step>>,
) -> Result<crate::replay::Ledger> {
    drive(world, policy, &cfg.id(), rng, overhead, sign, steps)?;
    Ok(world.ledger().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::BudgetUnit;
    use crate::trace::Arm;

    fn setup(unit: BudgetUnit, slice: f64) -> WorldSetup {
        WorldSetup {
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
