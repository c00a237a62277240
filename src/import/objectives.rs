//! Imported runs of several objectives, measured as banditbench measures its own: against the
//! true Pareto front and the reference point of each task of a pool (`--pool`), fixed from the
//! table before any run is read and never from the runs themselves. An imported run's archive
//! takes each completed trial's reported vector (the tool's values, not the table's), in the
//! order results came in; the indicators, the lock file's `[resolved.objectives]` and the
//! trajectories' `hv_regret` are those a `run` of the same pool and objectives writes, so
//! `report` ranks the two folders together by hypervolume regret.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{Common, Import, ImportedRun, Task};
use crate::experiment::objectives::{ArchiveObserver, MoData, ObjectivesSpec, SpecKeys};
use crate::experiment::pool::PoolTaskRef;
use crate::trace::Direction;
use crate::trace::pool::Pool;

/// One objective of an imported run, as the tool records it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Objective {
    /// The tool's name for it, when it records one (Optuna's metric names, a Syne Tune metric).
    pub name: Option<String>,
    pub maximize: bool,
}

/// The flags of an import of several objectives, for errors.
const KEYS: SpecKeys = SpecKeys {
    objectives: "--objectives",
    reference: "--reference",
    margin: "--reference-margin",
};

/// The pool, objectives and tasks an import of several objectives is measured on.
pub(crate) struct Measure {
    pub data: MoData,
    /// Per imported task: its index into `data.tasks`.
    pub task_index: BTreeMap<Task, usize>,
    /// Per `data.tasks` entry: its name in the lock file (`dataset/run/scope`, as a `run`
    /// names it).
    pub names: Vec<String>,
    /// Per objective: the runs report one minus the pool's value (`--objectives 1-NAME`).
    pub one_minus: Vec<bool>,
}

impl Measure {
    /// The archive of a run on `task`.
    pub fn archive(&self, task: &Task) -> ArchiveObserver<'_> {
        // Every imported value is a finished evaluation: archived at unit 0.
        ArchiveObserver::of_task(&self.data.tasks[self.task_index[task]], Some(0), false)
    }

    /// A result's point on `task`, normalised as the pool's are, if it enters the archive: a
    /// complete evaluation (not failed or pruned) at the pool's full fidelity (a result at a
    /// lower fidelity is a partial training, as a replay never archives one; a result without
    /// a fidelity is a full evaluation), every value a number.
    pub fn point(&self, task: &Task, e: &super::Eval) -> Option<Vec<f64>> {
        if matches!(e.action, "failed" | "pruned") || e.values.is_empty() {
            return None;
        }
        if e.fidelity
            .is_some_and(|f| self.data.units.is_some_and(|u| f < u))
        {
            return None;
        }
        let values: Vec<f64> = e
            .values
            .iter()
            .zip(&self.one_minus)
            .map(|(&v, &flip)| if flip { 1.0 - v } else { v })
            .collect();
        self.data.tasks[self.task_index[task]].normalise(&values)
    }

    /// The lock file's `[resolved.objectives]`.
    pub fn lock(&self) -> crate::results::LockObjectives {
        self.data.lock(self.names.iter().cloned())
    }
}

/// What the shared options say of several objectives: None for an import of one objective
/// (and an error if it was given a pool or objectives, which apply to several only); else the
/// pool loaded and every task's front and reference point.
pub(crate) fn measure(imp: &Import, common: &Common) -> Result<Option<Measure>> {
    let given = common.pool.is_some()
        || common.objectives.is_some()
        || common.reference.is_some()
        || common.reference_margin.is_some();
    if imp.objectives.len() < 2 {
        if given {
            bail!(
                "--pool, --objectives, --reference and --reference-margin measure runs of several objectives, but these {} runs have one objective ({}); remove them",
                imp.tool,
                imp.metric
            );
        }
        return Ok(None);
    }
    let d = imp.objectives.len();
    if common.one_minus {
        bail!(
            "--one-minus turns one score into 1 - score; these {} runs have {d} objectives: remove it (the directions come from the runs)",
            imp.tool
        );
    }
    let Some(pool_dir) = &common.pool else {
        bail!(
            "these {} runs have {d} objectives: give --pool DIR, the table they were made on (e.g. traces/nasbench201), so that they are measured as banditbench's own runs are, against each task's true Pareto front and a reference point fixed from the table, never from the runs",
            imp.tool
        );
    };
    let given = objective_names(imp, common)?;
    // `1-NAME`: the runs report one minus the pool's NAME, in the opposite direction.
    let one_minus: Vec<bool> = given.iter().map(|n| n.starts_with("1-")).collect();
    let names: Vec<String> = given
        .iter()
        .map(|n| n.strip_prefix("1-").unwrap_or(n).to_string())
        .collect();
    let tasks: std::collections::BTreeSet<(String, i64)> = imp
        .runs
        .iter()
        .map(|r| (r.task.dataset.clone(), r.task.run))
        .collect();
    // The manifest first (its objectives and directions), then the curves of the runs' tasks.
    let manifest_path = pool_dir.join("pool.toml");
    let manifest = crate::trace::pool::read_pool_manifest(&manifest_path)
        .with_context(|| format!("--pool {}", pool_dir.display()))?;
    check_directions(imp, &names, &one_minus, &manifest, pool_dir)?;
    let seen = std::cell::RefCell::new(Vec::new());
    let select = |all: &[(String, i64)]| {
        *seen.borrow_mut() = all.to_vec();
        all.iter()
            .filter(|t| tasks.contains(*t))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
    };
    let pool = match crate::trace::pool::load_pool_selecting(pool_dir, false, Some(&select)) {
        Ok(p) => p,
        Err(e) => {
            // No task of the runs is in the pool: say which, not that nothing was loaded.
            missing_task(&imp.runs, &seen.borrow(), pool_dir)?;
            return Err(e.context(format!("--pool {}", pool_dir.display())));
        }
    };
    missing_task(&imp.runs, &pool.all_tasks, pool_dir)?;
    let spec = ObjectivesSpec::of(
        &names,
        common.reference.as_deref(),
        common.reference_margin,
        Path::new("."),
        &KEYS,
    )?;
    if imp.intermediate && pool.manifest.units > 1 {
        // Only full trainings enter an archive: a result must say how far it was trained.
        if let Some(r) = imp
            .runs
            .iter()
            .find(|r| r.evals.iter().any(|e| e.fidelity.is_none()))
        {
            bail!(
                "{}: a result has no fidelity, so a partial training cannot be told from a full one on the pool's {} units; give --fidelity COLUMN (the column counting units trained, e.g. epoch)",
                r.source,
                pool.manifest.units
            );
        }
    }
    let (refs, task_index, lock_names) = task_refs(&imp.runs, &pool, pool_dir)?;
    let at = format!("--pool {}", pool_dir.display());
    let data = MoData::build(&spec, &pool, &refs, &at, &|t: &PoolTaskRef| {
        let pt = &pool.tasks[t.task];
        format!("{}/{}/{}", pt.dataset, pt.run, t.scope)
    })?;
    Ok(Some(Measure {
        data,
        task_index,
        names: lock_names,
        one_minus,
    }))
}

/// The objectives' names in the pool: `--objectives`, else the names the tool records.
fn objective_names(imp: &Import, common: &Common) -> Result<Vec<String>> {
    let d = imp.objectives.len();
    if let Some(n) = &common.objectives {
        if n.len() != d {
            bail!(
                "--objectives names {} objective(s) ({}), but the runs report {d} values per trial: name each, in the order the runs report them",
                n.len(),
                n.join(", ")
            );
        }
        return Ok(n.clone());
    }
    match imp
        .objectives
        .iter()
        .map(|o| o.name.clone())
        .collect::<Option<Vec<_>>>()
    {
        Some(n) => Ok(n),
        None => bail!(
            "these {} runs report {d} values per trial but do not name them: give --objectives with the pool's name of each, in the order the runs report them (e.g. --objectives val_acc,latency)",
            imp.tool
        ),
    }
}

/// Each objective is the pool's, in the runs' direction.
fn check_directions(
    imp: &Import,
    names: &[String],
    one_minus: &[bool],
    m: &crate::trace::pool::PoolManifest,
    dir: &Path,
) -> Result<()> {
    for ((name, o), &flip) in names.iter().zip(&imp.objectives).zip(one_minus) {
        let Some(p) = m.objectives.iter().find(|p| &p.name == name) else {
            bail!(
                "--pool {}: the pool has no objective '{name}'; it has: {}{}",
                dir.display(),
                m.objectives
                    .iter()
                    .map(|o| o.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                if m.objectives.is_empty() {
                    "none (its pool.toml has no [[objectives]])"
                } else {
                    ""
                }
            );
        };
        // One minus a value turns its direction.
        let runs = if o.maximize != flip {
            Direction::Maximize
        } else {
            Direction::Minimize
        };
        if p.direction != runs {
            bail!(
                "objective '{}{name}': the runs {} it but the pool {} {}s it: name the objectives in the order the runs report them (--objectives), and a value the runs report as one minus the pool's as 1-NAME",
                if flip { "1-" } else { "" },
                if runs == Direction::Maximize {
                    "maximize"
                } else {
                    "minimize"
                },
                m.name,
                p.direction.as_str()
            );
        }
    }
    Ok(())
}

/// An error naming the first run whose task (dataset, run) is not among the pool's `all`.
fn missing_task(runs: &[ImportedRun], all: &[(String, i64)], dir: &Path) -> Result<()> {
    for r in runs {
        if !all
            .iter()
            .any(|(d, n)| *d == r.task.dataset && *n == r.task.run)
        {
            bail!(
                "{}: task {}/{} is not in the pool {} (it has {}{}); name the task as the pool does (--task, --names)",
                r.source,
                r.task.dataset,
                r.task.run,
                dir.display(),
                all.iter()
                    .take(6)
                    .map(|(d, r)| format!("{d}/{r}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if all.len() > 6 { ", ..." } else { "" }
            );
        }
    }
    Ok(())
}

/// Per distinct imported task: its pool task with the learners it keeps (its learner, or all);
/// the index of each task; the lock file's name of each.
#[allow(clippy::type_complexity)]
fn task_refs(
    runs: &[ImportedRun],
    pool: &Pool,
    dir: &Path,
) -> Result<(Vec<PoolTaskRef>, BTreeMap<Task, usize>, Vec<String>)> {
    let learners = &pool.manifest.learners;
    let (mut refs, mut index, mut names) = (Vec::new(), BTreeMap::new(), Vec::new());
    for r in runs {
        if index.contains_key(&r.task) {
            continue;
        }
        let Some(t) = pool
            .tasks
            .iter()
            .position(|p| p.dataset == r.task.dataset && p.run == r.task.run)
        else {
            bail!(
                "{}: task {}/{} is not in the pool {}",
                r.source,
                r.task.dataset,
                r.task.run,
                dir.display()
            );
        };
        let (kept, scope): (Vec<usize>, String) = if r.task.learner.is_empty() {
            ((0..learners.len()).collect(), "all".into())
        } else {
            match learners.iter().position(|l| l.name == r.task.learner) {
                Some(l) => (vec![l], r.task.learner.clone()),
                None => bail!(
                    "{}: learner '{}' is not one of the pool's ({})",
                    r.source,
                    r.task.learner,
                    learners
                        .iter()
                        .map(|l| l.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        };
        let pt = &pool.tasks[t];
        names.push(format!("{}/{}/{scope}", pt.dataset, pt.run));
        index.insert(r.task.clone(), refs.len());
        refs.push(PoolTaskRef {
            task: t,
            keep: (0..learners.len()).map(|l| kept.contains(&l)).collect(),
            learners: kept,
            scope,
        });
    }
    Ok((refs, index, names))
}
