//! Cells: one task × budget × policy × repetition, and the replay of one cell.

use std::time::Instant;

use anyhow::{Result, bail};

use super::spec::{BudgetUnit, Experiment, WorldSetup};
use crate::policy::{Action, Policy, PolicyConfig};
use crate::replay::{
    Overhead, PullCount, PullCountConfig, Synthetic, TimeSliced, TimeSlicedConfig, World, WorldKind,
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
    let mut cells = Vec::new();
    let mut index = 0;
    for (ti, task) in ts.tasks.iter().enumerate() {
        for (bi, budget) in exp.world.budgets.iter().enumerate() {
            for (pi, policy) in exp.policies.iter().enumerate() {
                for rep in 0..exp.repetitions {
                    let identity = format!(
                        "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
                        task.dataset,
                        task.run,
                        budget,
                        exp.world.unit.as_str(),
                        policy.id(),
                        rep
                    );
                    cells.push(Cell {
                        index,
                        task: ti,
                        budget: bi,
                        policy: pi,
                        repetition: rep,
                        seed: derive_seed(exp.seed, &identity),
                    });
                    index += 1;
                }
            }
        }
    }
    cells
}

/// One decision of a cell, for the trajectory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub arm: u16,
    /// The pull's reward in the trace set's orientation (NaN if it had none).
    pub reward: f64,
    /// Budget used after the pull (seconds or pulls).
    pub time: f64,
    /// Best score so far in the trace set's orientation, NaN before any.
    pub incumbent: f64,
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

/// The absolute budget and slice of a cell for its task.
pub fn absolute(setup: &WorldSetup, budget: f64, task: &Task) -> (f64, f64) {
    match setup.unit {
        BudgetUnit::Seconds => (budget, setup.slice),
        BudgetUnit::Task => {
            let span = task.mean_arm_span_s();
            (budget * span, setup.slice * span)
        }
        BudgetUnit::Pulls => (budget, 1.0),
        BudgetUnit::Pool => ((budget * task.n_evaluations() as f64).round().max(1.0), 1.0),
    }
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
    let mut rng = Rng::new(cell.seed);
    let world_seed = derive_seed(cell.seed, "world");
    let mut steps = Vec::new();
    let steps_ref = record_steps.then_some(&mut steps);
    let p = policy.as_mut();
    let ledger = match exp.world.kind {
        WorldKind::TimeSliced => {
            let mut w = TimeSliced::new(
                task,
                TimeSlicedConfig {
                    budget_s: budget_abs,
                    slice_s: slice_abs,
                },
                sign,
            );
            replay_in(
                &mut w,
                p,
                cfg,
                &mut rng,
                exp.world.overhead,
                sign,
                steps_ref,
            )?
        }
        WorldKind::PullCount => {
            let mut w = PullCount::new(
                task,
                PullCountConfig {
                    budget_pulls: budget_abs as u64,
                    order: exp.world.order,
                    failures_consume_budget: exp.world.failures_consume_budget,
                    exhausted: exp.world.exhausted,
                },
                sign,
                world_seed,
            );
            replay_in(&mut w, p, cfg, &mut rng, Overhead::None, sign, steps_ref)?
        }
        WorldKind::Pool => bail!(
            "the pool world is not run from experiment files yet (it has its own driver: replay::pool)"
        ),
        WorldKind::Synthetic => {
            let dists = exp.world.arms.iter().map(|(_, d)| *d).collect();
            let mut w = Synthetic::new(task, dists, budget_abs as u64, world_seed);
            replay_in(&mut w, p, cfg, &mut rng, Overhead::None, sign, steps_ref)?
        }
    };
    let inc = ledger.incumbent;
    Ok(CellResult {
        index: cell.index,
        seed: cell.seed,
        budget_abs,
        slice_abs: if exp.world.kind == WorldKind::TimeSliced {
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
    drive(world, policy, cfg, rng, overhead, sign, steps)?;
    Ok(world.ledger().clone())
}

/// The replay loop: decide, charge overhead, pull, observe, until the budget is spent.
pub fn drive<W: World>(
    world: &mut W,
    policy: &mut dyn Policy,
    cfg: &PolicyConfig,
    rng: &mut Rng,
    overhead: Overhead,
    sign: f64,
    mut steps: Option<&mut Vec<Step>>,
) -> Result<()> {
    let n = world.n_arms();
    if n == 0 {
        bail!(
            "task {}/{} has no arms: nothing to replay (check the experiment's [tasks] learners filter)",
            world.task().dataset,
            world.task().run
        );
    }
    while !world.done() {
        if let Overhead::Fixed(s) = overhead {
            world.charge_overhead(s);
            if world.done() {
                break;
            }
        }
        let t0 = (overhead == Overhead::Measured).then(Instant::now);
        let arm = match policy.decide(&world.view(), rng) {
            Action::Pull(arm) => arm,
            other => bail!(
                "policy {} asked for {other:?}, which the {} world does not offer (drawing and mutating configurations needs the pool world)",
                cfg.id(),
                world.kind().as_str()
            ),
        };
        if let Overhead::PerFit(s) = overhead {
            let fits = policy.take_fits();
            if fits > 0 {
                world.charge_overhead(s * fits as f64);
            }
        }
        if arm >= n {
            bail!(
                "policy {} chose arm {arm}, but the task has {n} arms (a bug in the policy)",
                cfg.id()
            );
        }
        let mut spent = t0.map(|t| t.elapsed().as_secs_f64());
        let reward = {
            let obs = world.pull(arm);
            let t1 = spent.is_some().then(Instant::now);
            policy.observe(&obs);
            if let (Some(s), Some(t1)) = (spent.as_mut(), t1) {
                *s += t1.elapsed().as_secs_f64();
            }
            obs.reward.map_or(f64::NAN, |r| sign * r)
        };
        if let Some(s) = spent {
            world.charge_overhead(s);
        }
        if let Some(steps) = steps.as_deref_mut() {
            let l = world.ledger();
            steps.push(Step {
                arm: arm as u16,
                reward,
                time: l.used,
                incumbent: l.incumbent.map_or(f64::NAN, |i| sign * i.reward),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Exhausted, Order};
    use crate::trace::Arm;

    fn setup(unit: BudgetUnit, slice: f64) -> WorldSetup {
        WorldSetup {
            kind: WorldKind::TimeSliced,
            budgets: vec![],
            unit,
            slice,
            overhead: Overhead::None,
            order: Order::Permute,
            failures_consume_budget: false,
            exhausted: Exhausted::Empty,
            arms: vec![],
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
