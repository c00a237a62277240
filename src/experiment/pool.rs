//! Experiments in the pool world: tasks of a configuration pool, their cells, the replay of one
//! cell, and the two results files (the same contract as the learner-level worlds, plus the
//! columns that only configurations have).
//!
//! A task is one (dataset, run) of the pool, restricted to the learners `[tasks] learners` keeps;
//! with `[world] per_learner = true` each learner's configurations form a task of their own.

use anyhow::{Context, Result, bail};

use super::cell::Cell;
use super::spec::{Experiment, WorldOptions};
use crate::replay::pool::{PoolOptions, PoolWorld};
use crate::trace::pool::{Pool, load_pool_selecting};

/// One task of a pool experiment.
#[derive(Clone, Debug)]
pub struct PoolTaskRef {
    /// Index into `Pool::tasks`.
    pub task: usize,
    /// Learners whose configurations can be drawn (indices into the manifest's learners).
    pub learners: Vec<usize>,
    /// "all", or the learner's name when tasks are per learner.
    pub scope: String,
    /// Per learner of the manifest: the task keeps it (`learners`, as a mask).
    pub keep: Vec<bool>,
}

/// A loaded pool and the tasks an experiment keeps.
pub struct PoolData {
    pub pool: Pool,
    /// Every learner of the pool's manifest, by name (manifest order).
    pub all_learners: Vec<String>,
    pub tasks: Vec<PoolTaskRef>,
    /// Tasks dropped because the (incomplete) pool has no curve for them.
    pub dropped: Vec<String>,
    /// The objectives measured, with every task's true front and reference point
    /// (`[world] objectives`), or none.
    pub objectives: Option<Box<super::objectives::MoData>>,
}

impl PoolData {
    pub fn task_name(&self, t: &PoolTaskRef) -> String {
        let pt = &self.pool.tasks[t.task];
        format!("{}/{}/{}", pt.dataset, pt.run, t.scope)
    }

    /// The learners the experiment keeps, by name.
    pub fn learner_names(&self) -> Vec<String> {
        let mut kept: Vec<usize> = self
            .tasks
            .iter()
            .flat_map(|t| t.learners.iter().copied())
            .collect();
        kept.sort_unstable();
        kept.dedup();
        kept.iter()
            .map(|&l| self.pool.manifest.learners[l].name.clone())
            .collect()
    }
}

pub fn pool_options(exp: &Experiment) -> Result<PoolOptions> {
    match &exp.world.options {
        WorldOptions::Pool(o) => Ok(*o),
        _ => bail!(
            "{}: not a pool experiment (world.kind is {})",
            exp.file.display(),
            exp.world.kind().as_str()
        ),
    }
}

/// Load the pool an experiment names and select its tasks. `allow_missing_arms = true` in the
/// experiment accepts an incomplete pool (configurations without curves are never drawn).
pub fn prepare_pool(exp: &Experiment) -> Result<PoolData> {
    let opts = pool_options(exp)?;
    let at = exp.file.display();
    let dir = exp
        .traces_dir
        .as_ref()
        .with_context(|| format!("{at}: missing key 'traces' (the pool folder)"))?;
    let f = &exp.load.filter;
    // The tasks [tasks] keeps, in the pool's order: the only ones loaded.
    let select = |all: &[(String, i64)]| -> std::collections::BTreeSet<(String, i64)> {
        all.iter()
            .filter(|(d, r)| {
                f.datasets.as_ref().is_none_or(|ds| ds.contains(d))
                    && f.runs.as_ref().is_none_or(|rs| rs.contains(r))
            })
            .take(f.max_tasks.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    };
    let pool = if crate::trace::pool::is_pool(dir) {
        // Without a task filter every file is needed: no first pass over their task columns.
        let filtered = f.datasets.is_some() || f.runs.is_some() || f.max_tasks.is_some();
        let select: Option<crate::trace::pool::SelectTasks<'_>> =
            filtered.then_some(&select as crate::trace::pool::SelectTasks<'_>);
        load_pool_selecting(dir, exp.load.allow_missing_arms, select).with_context(|| {
            format!("{at}: loading the pool named by 'traces' (allow_missing_arms = true accepts an incomplete pool)")
        })?
    } else if crate::trace::joint::is_trace_set(dir) {
        // A learner-level trace set replays in the pool world as its joint pool of recorded
        // configurations, one unit each (CASH).
        crate::trace::joint::pool_from_trace_set(dir).with_context(|| {
            format!("{at}: building the joint pool of the trace set named by 'traces'")
        })?
    } else {
        bail!(
            "{at}: key 'traces' names {}, which is neither a configuration pool (pool.toml) nor a trace set (traceset.toml); the pool world replays pools such as traces/sklearn-grid, or a trace set such as traces/sklearn-random as its joint pool",
            dir.display()
        );
    };
    let names: Vec<&str> = pool
        .manifest
        .learners
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    let learners: Vec<usize> = match &f.learners {
        None => (0..names.len()).collect(),
        Some(keep) => {
            let mut out = Vec::new();
            for k in keep {
                match names.iter().position(|n| n == k) {
                    Some(i) => out.push(i),
                    None => bail!(
                        "{at}: key 'tasks.learners' names '{k}', which the pool {} does not have; it has: {}",
                        pool.manifest.name,
                        names.join(", ")
                    ),
                }
            }
            out
        }
    };
    for (key, wanted, have) in [
        (
            "tasks.datasets",
            f.datasets.clone().unwrap_or_default(),
            pool.all_tasks
                .iter()
                .map(|t| t.0.clone())
                .collect::<Vec<_>>(),
        ),
        (
            "tasks.runs",
            f.runs
                .iter()
                .flatten()
                .map(|r| r.to_string())
                .collect::<Vec<_>>(),
            pool.all_tasks.iter().map(|t| t.1.to_string()).collect(),
        ),
    ] {
        for w in &wanted {
            if !have.contains(w) {
                let mut h = have.clone();
                h.dedup();
                bail!(
                    "{at}: key '{key}' names '{w}', which the pool {} does not have; it has: {}",
                    pool.manifest.name,
                    h.join(", ")
                );
            }
        }
    }
    let mut tasks = Vec::new();
    let mut kept_tasks = 0;
    for (ti, t) in pool.tasks.iter().enumerate() {
        if f.datasets.as_ref().is_some_and(|d| !d.contains(&t.dataset))
            || f.runs.as_ref().is_some_and(|r| !r.contains(&t.run))
        {
            continue;
        }
        if f.max_tasks.is_some_and(|m| kept_tasks >= m) {
            break;
        }
        kept_tasks += 1;
        if opts.per_learner {
            for &l in &learners {
                tasks.push(PoolTaskRef {
                    task: ti,
                    learners: vec![l],
                    scope: names[l].to_string(),
                    keep: Vec::new(),
                });
            }
        } else {
            tasks.push(PoolTaskRef {
                task: ti,
                learners: learners.clone(),
                scope: "all".into(),
                keep: Vec::new(),
            });
        }
    }
    // A task whose kept configurations have no curve at all (an incomplete pool, e.g. while it
    // is recorded) has nothing to replay: dropped and named with allow_missing_arms, else refused.
    let mut dropped = Vec::new();
    let mut kept = Vec::new();
    for t in tasks {
        let pt = &pool.tasks[t.task];
        let any = pool
            .configs
            .iter()
            .zip(&pt.curves)
            .any(|(c, curve)| t.learners.contains(&c.learner) && !curve.is_empty());
        let name = format!("{}/{}/{}", pt.dataset, pt.run, t.scope);
        if any {
            kept.push(t);
        } else if exp.load.allow_missing_arms {
            dropped.push(name);
        } else {
            bail!(
                "{at}: task {name} has no recorded curve in the pool (an incomplete pool); filter it out with [tasks] datasets/runs/learners, or set allow_missing_arms = true to drop such tasks"
            );
        }
    }
    if kept.is_empty() {
        bail!("{at}: no task of the pool has a recorded curve after the [tasks] filters");
    }
    let mut tasks = kept;
    for (i, p) in exp.policies.iter().enumerate() {
        p.check_datasets(
            tasks.iter().map(|t| pool.tasks[t.task].dataset.as_str()),
            pool.all_tasks.iter().map(|t| t.0.as_str()),
        )
        .with_context(|| format!("{at}: [[policies]] policy {}", i + 1))?;
    }
    let all_learners: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    for t in &mut tasks {
        t.keep = (0..all_learners.len())
            .map(|l| t.learners.contains(&l))
            .collect();
    }
    let objectives = match &exp.world.objectives {
        Some(spec) => Some(Box::new(super::objectives::MoData::build(
            spec,
            &pool,
            &tasks,
            &at.to_string(),
            &|t| {
                let pt = &pool.tasks[t.task];
                format!("{}/{}/{}", pt.dataset, pt.run, t.scope)
            },
        )?)),
        None => None,
    };
    Ok(PoolData {
        pool,
        all_learners,
        tasks,
        dropped,
        objectives,
    })
}

/// Expand a pool experiment into its cells: task, budget, policy, repetition. A cell's seed
/// depends on its identity only.
pub fn expand_pool_cells(exp: &Experiment, data: &PoolData) -> Vec<Cell> {
    let grid = pool_cell_grid(exp, data);
    (0..grid.len() as u64).map(|i| grid.cell(i)).collect()
}

/// The pool experiment's cells, made on demand; a task's identity is its dataset, run and scope.
pub fn pool_cell_grid(exp: &Experiment, data: &PoolData) -> super::cell::CellGrid {
    super::cell::CellGrid::new(exp, data.tasks.len(), |ti| {
        let t = &data.tasks[ti];
        let pt = &data.pool.tasks[t.task];
        vec![pt.dataset.clone(), pt.run.to_string(), t.scope.clone()]
    })
}

/// The pool world of one cell on task `t`: the budget as the experiment gives it, in absolute
/// terms (returned beside the world), the world's own seed, and the task's learners only.
pub(super) fn pool_world<'d>(
    exp: &Experiment,
    data: &'d PoolData,
    t: &PoolTaskRef,
    budget: f64,
    world_seed: u64,
) -> Result<(PoolWorld<'d>, f64)> {
    let opts = pool_options(exp)?;
    let (wcfg, budget_abs) = opts.world_config(exp.world.unit, budget, data.pool.manifest.units);
    let mut world = PoolWorld::new(
        &data.pool,
        &data.pool.tasks[t.task],
        wcfg,
        budget_abs,
        data.pool.manifest.direction.sign(),
        world_seed,
    );
    world.restrict_to_learners(&t.learners);
    if let Some(mo) = &data.objectives {
        world = world.with_objectives(&mo.which);
    }
    Ok((world, budget_abs))
}
