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
use crate::trace::TaskFilter;
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

/// Load the pool (or a trace set's joint pool) in `dir`, with only the tasks `[tasks]` keeps when
/// it filters them.
fn load_selected(exp: &Experiment, dir: &std::path::Path) -> Result<Pool> {
    let at = exp.file.display();
    let f = &exp.load.filter;
    // The pool's tasks, as the loader lists them before it selects.
    let listed: std::cell::RefCell<Vec<(String, i64)>> = Default::default();
    // The tasks [tasks] keeps, in the pool's order: the only ones loaded.
    let select = |all: &[(String, i64)]| -> std::collections::BTreeSet<(String, i64)> {
        listed.replace(all.to_vec());
        all.iter()
            .filter(|(d, r)| f.keeps(d, *r))
            .take(f.max_tasks.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    };
    if crate::trace::pool::is_pool(dir) {
        // Without a task filter every file is needed: no first pass over their task columns.
        let filtered = f.datasets.is_some() || f.runs.is_some() || f.max_tasks.is_some();
        let select: Option<crate::trace::pool::SelectTasks<'_>> =
            filtered.then_some(&select as crate::trace::pool::SelectTasks<'_>);
        let loaded = load_pool_selecting(dir, exp.load.allow_missing_arms, select);
        // A filter that names no task of the pool selects nothing: say which name, not that
        // nothing was loaded.
        let listed = listed.take();
        if loaded.is_err() && !listed.is_empty() {
            check_task_names(
                &at.to_string(),
                f,
                &listed,
                &format!("in {}", dir.display()),
            )?;
        }
        loaded.with_context(|| {
            format!("{at}: loading the pool named by 'traces' (allow_missing_arms = true accepts an incomplete pool)")
        })
    } else if crate::trace::joint::is_trace_set(dir) {
        // A learner-level trace set replays in the pool world as its joint pool of recorded
        // configurations, one unit each (CASH).
        crate::trace::joint::pool_from_trace_set(dir).with_context(|| {
            format!("{at}: building the joint pool of the trace set named by 'traces'")
        })
    } else {
        bail!(
            "{at}: key 'traces' names {}, which is neither a configuration pool (pool.toml) nor a trace set (traceset.toml); the pool world replays pools such as traces/sklearn-grid, or a trace set such as traces/sklearn-random as its joint pool",
            dir.display()
        );
    }
}

/// The indices of the learners `[tasks] learners` keeps (all when it names none); an unknown
/// name is an error that lists the pool's learners.
fn kept_learners(
    keep: Option<&[String]>,
    names: &[&str],
    at: &str,
    pool: &str,
) -> Result<Vec<usize>> {
    let Some(keep) = keep else {
        return Ok((0..names.len()).collect());
    };
    keep.iter()
        .map(|k| {
            names.iter().position(|n| n == k).with_context(|| {
                format!(
                    "{at}: key 'tasks.learners' names '{k}', which the pool {pool} does not have; it has: {}",
                    names.join(", ")
                )
            })
        })
        .collect()
}

/// Every dataset and run `[tasks]` names is among the pool's tasks `all` (sorted).
fn check_task_names(at: &str, f: &TaskFilter, all: &[(String, i64)], pool: &str) -> Result<()> {
    let datasets: std::collections::BTreeSet<&String> = all.iter().map(|t| &t.0).collect();
    let datasets: Vec<String> = datasets.into_iter().cloned().collect();
    let wanted = f.datasets.as_deref().unwrap_or_default();
    check_named(at, "tasks.datasets", wanted, &datasets, pool)?;
    let runs: std::collections::BTreeSet<i64> = all.iter().map(|t| t.1).collect();
    let runs: Vec<String> = runs.iter().map(|r| r.to_string()).collect();
    let wanted: Vec<String> = f.runs.iter().flatten().map(|r| r.to_string()).collect();
    check_named(at, "tasks.runs", &wanted, &runs, pool)
}

/// Every value `key` names is among `have` (the pool's, sorted); else an error listing them.
fn check_named(at: &str, key: &str, wanted: &[String], have: &[String], pool: &str) -> Result<()> {
    for w in wanted {
        if !have.contains(w) {
            let mut h = have.to_vec();
            h.dedup();
            bail!(
                "{at}: key '{key}' names '{w}', which the pool {pool} does not have; it has: {}",
                h.join(", ")
            );
        }
    }
    Ok(())
}

/// The tasks of the pool's (dataset, run) list that `f` keeps, up to its `max_tasks`: one per
/// (dataset, run) over `learners`, or one per learner with `per_learner`.
fn task_refs<'a>(
    pool_tasks: impl Iterator<Item = (&'a str, i64)>,
    f: &TaskFilter,
    learners: &[usize],
    names: &[&str],
    per_learner: bool,
) -> Vec<PoolTaskRef> {
    let mut tasks = Vec::new();
    let kept = pool_tasks
        .enumerate()
        .filter(|(_, (d, r))| f.keeps(d, *r))
        .take(f.max_tasks.unwrap_or(usize::MAX));
    for (ti, _) in kept {
        if per_learner {
            for &l in learners {
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
                learners: learners.to_vec(),
                scope: "all".into(),
                keep: Vec::new(),
            });
        }
    }
    tasks
}

/// The tasks with some recorded curve among their configurations, and the names of those
/// without (an incomplete pool, e.g. while it is recorded): dropped with `allow_missing_arms`,
/// else refused.
fn with_curves(
    pool: &Pool,
    tasks: Vec<PoolTaskRef>,
    allow_missing_arms: bool,
    at: &str,
) -> Result<(Vec<PoolTaskRef>, Vec<String>)> {
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
        } else if allow_missing_arms {
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
    Ok((kept, dropped))
}

/// Load the pool an experiment names and select its tasks. `allow_missing_arms = true` in the
/// experiment accepts an incomplete pool (configurations without curves are never drawn).
pub fn prepare_pool(exp: &Experiment) -> Result<PoolData> {
    let opts = pool_options(exp)?;
    let at = exp.file.display().to_string();
    let dir = exp
        .traces_dir
        .as_ref()
        .with_context(|| format!("{at}: missing key 'traces' (the pool folder)"))?;
    let f = &exp.load.filter;
    let mut pool = load_selected(exp, dir)?;
    let pool_name = pool.manifest.name.as_str();
    let names: Vec<&str> = pool
        .manifest
        .learners
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    let learners = kept_learners(f.learners.as_deref(), &names, &at, pool_name)?;
    check_task_names(&at, f, &pool.all_tasks, pool_name)?;
    let tasks = task_refs(
        pool.tasks.iter().map(|t| (t.dataset.as_str(), t.run)),
        f,
        &learners,
        &names,
        opts.per_learner,
    );
    let (mut tasks, dropped) = with_curves(&pool, tasks, exp.load.allow_missing_arms, &at)?;
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
            &at,
            &|t| {
                let pt = &pool.tasks[t.task];
                format!("{}/{}/{}", pt.dataset, pt.run, t.scope)
            },
        )?)),
        None => None,
    };
    // `[world] score`: after the objectives' points are taken, which keep every objective.
    if let Some(score) = super::objectives::ObjectivesSpec::score_of(exp.world.objectives.as_ref())
    {
        pool.rescore(score)
            .map_err(|e| anyhow::anyhow!("{at}: key 'world.score' {e}"))?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::pool::tests::hand_pool;
    use crate::trace::pool::Curve;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn learners_are_kept_by_name_and_an_unknown_name_lists_the_pools() {
        let names = ["svm", "knn", "rf"];
        assert_eq!(
            kept_learners(None, &names, "e.toml", "p").unwrap(),
            [0, 1, 2]
        );
        let keep = strings(&["rf", "svm"]);
        assert_eq!(
            kept_learners(Some(&keep), &names, "e.toml", "p").unwrap(),
            [2, 0]
        );
        let bad = strings(&["svm", "xgb"]);
        let e = kept_learners(Some(&bad), &names, "e.toml", "p").unwrap_err();
        assert_eq!(
            e.to_string(),
            "e.toml: key 'tasks.learners' names 'xgb', which the pool p does not have; it has: svm, knn, rf"
        );
        let have = strings(&["a", "a", "b"]);
        assert!(check_named("e.toml", "tasks.datasets", &strings(&["b"]), &have, "p").is_ok());
        let e = check_named("e.toml", "tasks.datasets", &strings(&["c"]), &have, "p").unwrap_err();
        assert!(
            e.to_string()
                .ends_with("names 'c', which the pool p does not have; it has: a, b")
        );
    }

    #[test]
    fn tasks_follow_the_filters_in_pool_order_up_to_max_tasks() {
        let pool = [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0)];
        let names = ["svm", "knn"];
        let f = TaskFilter {
            datasets: Some(strings(&["b", "c"])),
            max_tasks: Some(2),
            ..TaskFilter::default()
        };
        let t = task_refs(pool.iter().copied(), &f, &[0, 1], &names, false);
        let got: Vec<(usize, &str)> = t.iter().map(|t| (t.task, t.scope.as_str())).collect();
        assert_eq!(got, [(2, "all"), (3, "all")]);
        assert_eq!(t[0].learners, [0, 1]);
        let f = TaskFilter {
            runs: Some(vec![1]),
            ..TaskFilter::default()
        };
        let t = task_refs(pool.iter().copied(), &f, &[1], &names, true);
        let got: Vec<(usize, &str)> = t.iter().map(|t| (t.task, t.scope.as_str())).collect();
        assert_eq!(got, [(1, "knn"), (3, "knn")]);
        assert!(f.keeps("z", 1) && !f.keeps("a", 0));
    }

    #[test]
    fn a_task_without_any_curve_is_dropped_by_name_or_refused() {
        let mut pool = hand_pool(3, 2, |i| vec![0.1 * i as f32; 2]);
        let task = |scope: &str| PoolTaskRef {
            task: 0,
            learners: vec![0],
            scope: scope.into(),
            keep: Vec::new(),
        };
        let (kept, dropped) = with_curves(&pool, vec![task("all")], false, "e.toml").unwrap();
        assert_eq!((kept.len(), dropped.len()), (1, 0));
        // A task that keeps no learner has no curve: named among the dropped.
        let none = PoolTaskRef {
            learners: Vec::new(),
            ..task("none")
        };
        let (kept, dropped) = with_curves(&pool, vec![task("all"), none], true, "e.toml").unwrap();
        let pt = &pool.tasks[0];
        assert_eq!(kept.len(), 1);
        assert_eq!(dropped, [format!("{}/{}/none", pt.dataset, pt.run)]);
        for c in &mut pool.tasks[0].curves {
            *c = Curve::default();
        }
        let e = with_curves(&pool, vec![task("all")], false, "e.toml").unwrap_err();
        assert!(e.to_string().contains("task "), "{e}");
        assert!(
            e.to_string().contains("set allow_missing_arms = true"),
            "{e}"
        );
        let e = with_curves(&pool, vec![task("all")], true, "e.toml").unwrap_err();
        assert!(
            e.to_string()
                .contains("no task of the pool has a recorded curve"),
            "{e}"
        );
    }
}
