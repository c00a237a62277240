//! Experiments in the pool world: tasks of a configuration pool, their cells, the replay of one
//! cell, and the two results files (the same contract as the learner-level worlds, plus the
//! columns that only configurations have).
//!
//! A task is one (dataset, run) of the pool, restricted to the learners `[tasks] learners` keeps;
//! with `[world] per_learner = true` each learner's configurations form a task of their own.

use super::store::{Identity, JsonObject, identity_columns, nan_as_null};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::cell::Cell;
use super::spec::{Experiment, WorldOptions};
use crate::policy::{CellStart, PoolStart};
use crate::replay::WorldKind;
use crate::replay::pool::{PoolOptions, PoolStep, PoolWorld, Recommended, drive_pool};
use crate::rng::{Rng, derive_seed};
use crate::trace::pool::{Pool, load_pool};

/// One task of a pool experiment.
#[derive(Clone, Debug)]
pub struct PoolTaskRef {
    /// Index into `Pool::tasks`.
    pub task: usize,
    /// Learners whose configurations can be drawn (indices into the manifest's learners).
    pub learners: Vec<usize>,
    /// "all", or the learner's name when tasks are per learner.
    pub scope: String,
}

/// A loaded pool and the tasks an experiment keeps.
pub struct PoolData {
    pub pool: Pool,
    pub tasks: Vec<PoolTaskRef>,
    /// Tasks dropped because the (incomplete) pool has no curve for them.
    pub dropped: Vec<String>,
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
    let pool = if crate::trace::pool::is_pool(dir) {
        load_pool(dir, exp.load.allow_missing_arms).with_context(|| {
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
    let f = &exp.load.filter;
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
            pool.tasks
                .iter()
                .map(|t| t.dataset.clone())
                .collect::<Vec<_>>(),
        ),
        (
            "tasks.runs",
            f.runs
                .iter()
                .flatten()
                .map(|r| r.to_string())
                .collect::<Vec<_>>(),
            pool.tasks.iter().map(|t| t.run.to_string()).collect(),
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
                });
            }
        } else {
            tasks.push(PoolTaskRef {
                task: ti,
                learners: learners.clone(),
                scope: "all".into(),
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
    let tasks = kept;
    for (i, p) in exp.policies.iter().enumerate() {
        p.check_datasets(
            tasks.iter().map(|t| pool.tasks[t.task].dataset.as_str()),
            pool.tasks.iter().map(|t| t.dataset.as_str()),
        )
        .with_context(|| format!("{at}: [[policies]] policy {}", i + 1))?;
    }
    Ok(PoolData {
        pool,
        tasks,
        dropped,
    })
}

/// Expand a pool experiment into its cells: task, budget, policy, repetition. A cell's seed
/// depends on its identity only.
pub fn expand_pool_cells(exp: &Experiment, data: &PoolData) -> Vec<Cell> {
    super::cell::expand_with(exp, data.tasks.len(), |ti| {
        let t = &data.tasks[ti];
        let pt = &data.pool.tasks[t.task];
        vec![pt.dataset.clone(), pt.run.to_string(), t.scope.clone()]
    })
}

/// What one pool cell produced.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolCellResult {
    pub index: u64,
    pub seed: u64,
    pub budget_abs: f64,
    pub recommended: Option<Recommended>,
    /// Budget used when the incumbent last changed (NaN if never).
    pub best_found_at: f64,
    pub decisions: u64,
    pub used: f64,
    pub configs_drawn: u64,
    pub mutations: u64,
    pub mutation_fallbacks: u64,
    pub units_trained: u64,
    /// Per learner (manifest order): units trained.
    pub learner_units: Vec<u64>,
    pub failures: u64,
    pub exhausted_pulls: u64,
    pub exhausted_budget: f64,
    pub steps: Vec<PoolStep>,
}

/// Replay one pool cell. `record_steps` keeps every decision.
pub fn run_pool_cell(
    cell: &Cell,
    exp: &Experiment,
    data: &PoolData,
    record_steps: bool,
) -> Result<PoolCellResult> {
    let opts = pool_options(exp)?;
    let t = &data.tasks[cell.task];
    let pt = &data.pool.tasks[t.task];
    let cfg = &exp.policies[cell.policy];
    let sign = data.pool.manifest.direction.sign();
    let (wcfg, budget_abs) = opts.world_config(
        exp.world.unit,
        exp.world.budgets[cell.budget],
        data.pool.manifest.units,
    );
    let mut world = PoolWorld::new(
        &data.pool,
        pt,
        wcfg,
        budget_abs,
        sign,
        derive_seed(cell.seed, "world"),
    );
    world.restrict_to_learners(&t.learners);
    let mut policy = cfg.build_for(&pt.dataset, 0);
    let start_view = world.view();
    let open = start_view.pool.map_or(&[][..], |p| p.open);
    policy.begin(&CellStart {
        cell: cell.index,
        seed: cell.seed,
        repetition: cell.repetition,
        task: data.task_name(t),
        dataset: &pt.dataset,
        world: WorldKind::Pool,
        unit: exp.world.unit,
        budget: exp.world.budgets[cell.budget],
        budget_abs,
        slice_abs: 1.0,
        arms: Vec::new(),
        pool: Some(PoolStart {
            units: data.pool.manifest.units,
            configs: data.pool.configs.len(),
            learners: data
                .pool
                .manifest
                .learners
                .iter()
                .map(|l| l.name.as_str())
                .collect(),
            defaults: data
                .pool
                .defaults
                .iter()
                .enumerate()
                .map(|(l, d)| {
                    d.filter(|&c| t.learners.contains(&l) && !pt.curves[c as usize].is_empty())
                })
                .collect(),
            space: &data.pool.space,
            open,
        }),
    })?;
    let mut rng = Rng::new(cell.seed);
    let mut steps = Vec::new();
    drive_pool(
        &mut world,
        policy.as_mut(),
        &cfg.id(),
        &mut rng,
        record_steps.then_some(&mut steps),
    )
    .with_context(|| format!("task {}", data.task_name(t)))?;
    policy.finish()?;
    let l = world.ledger();
    let mut learner_units = vec![0u64; data.pool.manifest.learners.len()];
    for (arm, &c) in world.arm_configs().iter().enumerate() {
        learner_units[data.pool.configs[c as usize].learner] += l.pulls[arm];
    }
    Ok(PoolCellResult {
        index: cell.index,
        seed: cell.seed,
        budget_abs,
        recommended: world.recommend(),
        best_found_at: l.incumbent.map_or(f64::NAN, |i| i.found_at),
        decisions: l.decisions,
        used: l.used,
        configs_drawn: world.n_arms() as u64,
        mutations: world.mutations,
        mutation_fallbacks: world.mutation_fallbacks,
        units_trained: l.pulls.iter().sum(),
        learner_units,
        failures: l.failures,
        exhausted_pulls: l.exhausted_pulls,
        exhausted_budget: l.exhausted_budget,
        steps,
    })
}

/// One row per cell. The columns of the learner-level contract come first, with the recommended
/// configuration in the `best_*` columns (its validation and test score at the unit the
/// recommendation rule names); then the pool's own columns.
pub fn pool_runs_frame(
    results: &[PoolCellResult],
    cells: &[Cell],
    exp: &Experiment,
    data: &PoolData,
) -> Result<DataFrame> {
    let opts = pool_options(exp)?;
    let pool = &data.pool;
    let h = results.len();
    let c = |r: &PoolCellResult| &cells[r.index as usize];
    let task = |r: &PoolCellResult| &data.tasks[c(r).task];
    let ptask = |r: &PoolCellResult| &pool.tasks[task(r).task];
    let rec = |r: &PoolCellResult| r.recommended;
    let f = |f: &dyn Fn(&PoolCellResult) -> f64| -> Vec<f64> { results.iter().map(f).collect() };
    let of = |name: &str, f: &dyn Fn(&PoolCellResult) -> f64| -> Column {
        nan_as_null(name, results.iter().map(f).collect())
    };
    let u = |f: &dyn Fn(&PoolCellResult) -> u64| -> Vec<u64> { results.iter().map(f).collect() };
    let ou = |f: &dyn Fn(&PoolCellResult) -> Option<u32>| -> Vec<Option<u32>> {
        results.iter().map(f).collect()
    };
    let learners: Vec<&str> = pool
        .manifest
        .learners
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    let json = JsonObject::new(&learners);
    let units_json = |r: &PoolCellResult| -> String {
        let mut keep = vec![false; learners.len()];
        for &l in &task(r).learners {
            keep[l] = true;
        }
        json.subset(&keep, &r.learner_units)
    };
    let rows: Vec<Identity<'_>> = results
        .iter()
        .map(|r| Identity {
            cell: c(r),
            dataset: ptask(r).dataset.as_str(),
            run: ptask(r).run,
            budget_abs: r.budget_abs,
            seed: r.seed,
        })
        .collect();
    let mut cols = identity_columns(exp, &rows, Vec::new());
    cols.extend([
        of("best_score", &|r| rec(r).map_or(f64::NAN, |x| x.score)),
        of("best_test_score", &|r| {
            rec(r).map_or(f64::NAN, |x| x.test_score)
        }),
        Column::new(
            "best_learner".into(),
            results
                .iter()
                .map(|r| rec(r).map(|x| learners[pool.configs[x.config as usize].learner]))
                .collect::<Vec<Option<&str>>>(),
        ),
        of("best_found_at", &|r| r.best_found_at),
        Column::new(
            "pulls".into(),
            results.iter().map(units_json).collect::<Vec<String>>(),
        ),
        Column::new("decisions".into(), u(&|r| r.decisions)),
        Column::new("budget_used".into(), f(&|r| r.used)),
        Column::new("failures".into(), u(&|r| r.failures)),
        Column::new("exhausted_pulls".into(), u(&|r| r.exhausted_pulls)),
        Column::new("exhausted_budget".into(), f(&|r| r.exhausted_budget)),
        Column::new("replay".into(), vec!["pool"; h]),
        Column::new("trace_set".into(), vec![pool.manifest.name.as_str(); h]),
        Column::new("trace_source".into(), vec!["recorded"; h]),
        Column::new(
            "direction".into(),
            vec![pool.manifest.direction.as_str(); h],
        ),
        // The pool's own columns.
        Column::new(
            "pool_scope".into(),
            results
                .iter()
                .map(|r| task(r).scope.as_str())
                .collect::<Vec<&str>>(),
        ),
        Column::new("configs_drawn".into(), u(&|r| r.configs_drawn)),
        Column::new("mutations".into(), u(&|r| r.mutations)),
        Column::new("mutation_fallbacks".into(), u(&|r| r.mutation_fallbacks)),
        Column::new("units_trained".into(), u(&|r| r.units_trained)),
        Column::new(
            "recommended_config".into(),
            ou(&|r| rec(r).map(|x| pool.configs[x.config as usize].id)),
        ),
        Column::new("recommended_unit".into(), ou(&|r| rec(r).map(|x| x.unit))),
        Column::new(
            "recommended_params".into(),
            results
                .iter()
                .map(|r| rec(r).map(|x| pool.configs[x.config as usize].config.as_str()))
                .collect::<Vec<Option<&str>>>(),
        ),
        Column::new("incumbent_rule".into(), vec![opts.incumbent.as_str(); h]),
        Column::new(
            "recommendation_rule".into(),
            vec![opts.recommendation.as_str(); h],
        ),
    ]);
    Ok(DataFrame::new_infer_height(cols)?)
}

/// Every decision of every pool cell: the action, the arm, its configuration (the pool's
/// `config_id`), the unit trained, and the budget, reward and incumbent after it.
pub fn pool_trajectories_frame(results: &[PoolCellResult], data: &PoolData) -> Result<DataFrame> {
    let n: usize = results.iter().map(|r| r.steps.len()).sum();
    let mut cell = Vec::with_capacity(n);
    let mut step = Vec::with_capacity(n);
    let mut action = Vec::with_capacity(n);
    let mut arm = Vec::with_capacity(n);
    let mut config = Vec::with_capacity(n);
    let mut fidelity = Vec::with_capacity(n);
    let mut time = Vec::with_capacity(n);
    let mut reward = Vec::with_capacity(n);
    let mut inc = Vec::with_capacity(n);
    for r in results {
        for (i, s) in r.steps.iter().enumerate() {
            cell.push(r.index);
            step.push(i as u32 + 1);
            action.push(s.action.as_str());
            arm.push(s.arm);
            config.push(data.pool.configs[s.config as usize].id);
            fidelity.push(s.fidelity);
            time.push(s.time);
            reward.push(s.reward);
            inc.push(s.incumbent);
        }
    }
    Ok(DataFrame::new_infer_height(vec![
        Column::new("cell".into(), cell),
        Column::new("step".into(), step),
        Column::new("action".into(), action),
        Column::new("arm".into(), arm),
        Column::new("config".into(), config),
        Column::new("fidelity".into(), fidelity),
        Column::new("time".into(), time),
        nan_as_null("reward", reward),
        nan_as_null("incumbent", inc),
    ])?)
}
