//! Importers of other tools' run logs into a banditbench results folder (`runs.parquet`,
//! `trajectories.parquet`, `experiment.lock.toml` naming the source), so that `report`, every
//! figure and `show` work on them as on banditbench's own runs.
//!
//! Every tool's log maps to one model (README, "Importing other tools' runs"): a run is one
//! (policy, task, seed) and becomes one cell; each result it reported becomes one decision in
//! time order, with the time on the tool's clock, the value in the tool's orientation, the
//! trial as the arm and the fidelity where the tool records one. The incumbent is the best value
//! seen so far at any fidelity (banditbench's `best-seen`). A task reads as
//! `dataset/run/learner`, `dataset/run` or `dataset`, so imported runs share units with
//! banditbench's runs on the same data.

pub(crate) mod blackbox;
pub(crate) mod carps;
pub(crate) mod deepcave;
pub(crate) mod hposuite;
pub(crate) mod objectives;
pub(crate) mod optuna;
pub(crate) mod request;
pub(crate) mod syne_tune;

pub(crate) use request::{Common, Importer};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use crate::results::{LOCK, LockFile, RESULTS_FORMAT, Resolved, schema};

/// One result a run reported.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Eval {
    /// When it was known, on the run's clock (budget units).
    pub time: f64,
    /// The value (NaN: none, e.g. a failed trial).
    pub value: f64,
    /// The trial it belongs to.
    pub trial: u32,
    /// The fidelity it was reported at (epochs, steps), if the tool records one.
    pub fidelity: Option<u32>,
    /// What the tool said of it: `result`, `complete`, `pruned`, `failed`.
    pub action: &'static str,
    /// A run of several objectives: every objective's value, in [`Import::objectives`] order
    /// (NaN: none); empty with one objective.
    pub values: Vec<f64>,
}

/// One run of another tool: one (policy, task, seed), a cell once imported.
#[derive(Clone, Debug)]
pub(crate) struct ImportedRun {
    /// Where it was read from (a folder, or `file#study`), for messages and the lock file.
    pub source: String,
    pub policy: String,
    pub task: Task,
    pub seed: u64,
    /// In time order; a failed trial's evaluation has the action `failed`.
    pub evals: Vec<Eval>,
    /// Trials still running or waiting when the log was written (left out).
    pub pending: u64,
}

/// A task, as banditbench names it: dataset, run and (pool world) learner.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Task {
    pub dataset: String,
    pub run: i64,
    pub learner: String,
}

impl Task {
    /// `dataset/run/learner`, `dataset/run` or `dataset` (run 0); `what` names where it came
    /// from in the error.
    pub fn parse(text: &str, what: &str) -> Result<Task> {
        let parts: Vec<&str> = text.split('/').collect();
        let run = |s: &str| -> Result<i64> {
            s.parse::<i64>().map_err(|_| {
                anyhow::anyhow!(
                    "{what}: task '{text}': '{s}' is not a run number; a task is dataset, dataset/run or dataset/run/learner"
                )
            })
        };
        let (dataset, run, learner) = match parts.as_slice() {
            [d] => (*d, 0, ""),
            [d, r] => (*d, run(r)?, ""),
            [d, r, l] => (*d, run(r)?, *l),
            _ => bail!(
                "{what}: task '{text}' has {} parts; a task is dataset, dataset/run or dataset/run/learner",
                parts.len()
            ),
        };
        if dataset.is_empty() {
            bail!("{what}: the task is empty; give it (e.g. --task phoneme/0)");
        }
        Ok(Task {
            dataset: dataset.into(),
            run,
            learner: learner.into(),
        })
    }

    fn text(&self) -> String {
        match (self.run, self.learner.is_empty()) {
            (r, true) => format!("{}/{r}", self.dataset),
            (r, false) => format!("{}/{r}/{}", self.dataset, self.learner),
        }
    }
}

/// A task id as a banditbench task: `dataset/run/learner`, `dataset/run` or `dataset` when it
/// reads so, else the whole id (with '/' as '-') as the dataset.
pub(crate) fn task_of(id: &str) -> Task {
    Task::parse(id, "").unwrap_or_else(|_| Task {
        dataset: id.replace('/', "-"),
        run: 0,
        learner: String::new(),
    })
}

/// The run folders under `paths`: each path is a run folder (holding one of `markers`) or a
/// folder whose sub-folders, at any depth, are; in name order. `tool` and `layout` word the
/// errors ("Syne Tune", "each with results.csv.zip and metadata.json").
pub(crate) fn run_folders(
    paths: &[PathBuf],
    markers: &[&str],
    tool: &str,
    layout: &str,
) -> Result<Vec<PathBuf>> {
    fn walk(p: &Path, markers: &[&str], out: &mut Vec<PathBuf>) -> Result<()> {
        crate::files::walk_folders(p, &mut |d| {
            // Any entry by a marker's name marks a run folder (a FIFO or a folder there is then
            // refused by name when read, never silently passed over).
            if markers.iter().any(|m| d.join(m).exists()) {
                out.push(d.to_path_buf());
                return Ok(false);
            }
            Ok(true)
        })
    }
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            bail!(
                "{}: not a folder; give {tool}'s run folders ({layout}) or a folder holding them",
                p.display()
            );
        }
        let before = out.len();
        walk(p, markers, &mut out)?;
        if out.len() == before {
            bail!(
                "{}: no {tool} run here (no folder with {})",
                p.display(),
                markers.join(" or ")
            );
        }
    }
    Ok(out)
}

/// The note on runs skipped because their names do not follow `--names`.
pub(crate) fn skipped_note(what: &str, rule: &str, skipped: &[String]) -> Vec<String> {
    if skipped.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "skipped {} {what} whose names do not follow '{rule}': {}{}",
        skipped.len(),
        skipped
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        if skipped.len() > 5 { ", ..." } else { "" }
    )]
}

/// The objective (name and direction) every run of one import shares: the first run's; a later
/// run with another is refused, naming both files.
#[derive(Default)]
pub(crate) struct SameObjective {
    first: Option<(bool, String, PathBuf)>,
    /// Runs of several objectives: each with whether it is maximised (empty with one).
    several: Vec<(String, bool)>,
}

impl SameObjective {
    /// As [`SameObjective::check`], for a run that may have several objectives (`several`, each
    /// with whether it is maximised; empty with one): runs of several must have the same ones,
    /// each in the same direction.
    pub fn check_run(
        &mut self,
        at: &Path,
        maximize: bool,
        metric: &str,
        several: Vec<(String, bool)>,
    ) -> Result<()> {
        let label = if several.is_empty() {
            metric.to_string()
        } else {
            several
                .iter()
                .map(|(n, m)| format!("{n} ({})", if *m { "max" } else { "min" }))
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.check(at, maximize, &label)?;
        self.several = several;
        Ok(())
    }

    /// The objectives of runs of several, as the tool names them (empty with one).
    pub fn objectives(&self) -> Vec<objectives::Objective> {
        self.several
            .iter()
            .map(|(n, m)| objectives::Objective {
                name: Some(n.clone()),
                maximize: *m,
            })
            .collect()
    }

    pub fn check(&mut self, at: &Path, maximize: bool, metric: &str) -> Result<()> {
        match &self.first {
            None => self.first = Some((maximize, metric.to_string(), at.to_path_buf())),
            Some((m, name, first)) if *m != maximize || name != metric => bail!(
                "{}: objective '{metric}' ({}) differs from '{name}' ({}) of {}: import runs of one objective and direction together",
                at.display(),
                if maximize { "max" } else { "min" },
                if *m { "max" } else { "min" },
                first.display()
            ),
            Some(_) => {}
        }
        Ok(())
    }

    /// (maximise, objective) of the runs, None if there was none.
    pub fn get(self) -> Option<(bool, String)> {
        self.first.map(|(m, n, _)| (m, n))
    }
}

/// What a whole import holds, before it is written.
pub(crate) struct Import {
    /// `syne-tune`, `optuna`.
    pub tool: &'static str,
    pub runs: Vec<ImportedRun>,
    pub maximize: bool,
    /// The metric's name.
    pub metric: String,
    /// What the clock counts: `seconds`, `trials`.
    pub budget_unit: String,
    /// Every file read, for the lock file's hashes.
    pub files: Vec<PathBuf>,
    /// How the runs were named and read (flags), for the lock file.
    pub how: String,
    /// Runs of several objectives: each, as the tool records it (each evaluation's `values`
    /// in this order; `maximize` and `metric` are then the first's); empty with one.
    pub objectives: Vec<objectives::Objective>,
    /// The tool logs results reported during training (Syne Tune's rows), so a result without
    /// a fidelity may be a partial training; false where every result is a finished
    /// evaluation (an Optuna trial's values).
    pub intermediate: bool,
}

/// What `write` reports.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    pub cells: usize,
    pub decisions: usize,
    pub budget: f64,
    /// Results reported after the budget, left out.
    pub cut: usize,
    pub policies: Vec<String>,
    pub tasks: usize,
    pub pending: u64,
    pub failures: u64,
}

/// Check a run list before writing: one run per (policy, task, seed), something in each.
fn check_runs(runs: &[ImportedRun]) -> Result<()> {
    let mut seen: BTreeMap<(&str, &Task, u64), &str> = BTreeMap::new();
    for r in runs {
        if let Some(first) = seen.insert((&r.policy, &r.task, r.seed), &r.source) {
            bail!(
                "{} and {first} are both policy '{}' on task {} with seed {}: a run must be one (policy, task, seed); give each its own seed or policy name",
                r.source,
                r.policy,
                r.task.text(),
                r.seed
            );
        }
    }
    Ok(())
}

/// Write an import as a results folder at `out` (which must not exist: an import is written
/// whole, to a temporary folder renamed at the end). The budget is `budget` or, if none, the
/// latest time any run reached; results after it are left out.
pub(crate) fn write(
    imp: &Import,
    out: &Path,
    budget: Option<f64>,
    measure: Option<&objectives::Measure>,
) -> Result<Written> {
    if imp.runs.is_empty() {
        bail!("nothing to import: no run was found in the files given");
    }
    check_runs(&imp.runs)?;
    if out.exists() {
        bail!(
            "{}: already exists; an import writes a new results folder (remove it, or give another --out)",
            out.display()
        );
    }
    let budget = import_budget(imp, budget)?;
    let mut runs: Vec<&ImportedRun> = imp.runs.iter().collect();
    runs.sort_by(|a, b| (&a.policy, &a.task, a.seed).cmp(&(&b.policy, &b.task, b.seed)));
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("imported")
        .to_string();
    let program = format!("{} (import {})", crate::build::program(), imp.tool);
    let within = within_budget(imp, &runs, budget, measure);
    let n = runs.len();
    let (cut, pending, failures) = (within.cut, within.pending, within.failures);
    let runs_df = runs_frame(imp, &runs, budget, &name, &program, &within)?;
    let (traj_df, m) = trajectories_frame(within.steps)?;
    let (mut lock, tasks, policies) = lock_file(imp, &runs, budget, &program)?;
    lock.resolved.objectives = measure.map(objectives::Measure::lock);
    publish(out, &name, runs_df, traj_df, &lock)?;
    Ok(Written {
        cells: n,
        decisions: m,
        budget,
        cut,
        policies,
        tasks: tasks.len(),
        pending,
        failures,
    })
}

/// The budget of an import: the one given (positive), else the latest result of any run.
fn import_budget(imp: &Import, budget: Option<f64>) -> Result<f64> {
    Ok(match budget {
        Some(b) if !(b.is_finite() && b > 0.0) => bail!("--budget {b}: must be a positive number"),
        Some(b) => b,
        None => imp
            .runs
            .iter()
            .filter_map(|r| r.evals.last().map(|e| e.time))
            .fold(0.0, f64::max),
    })
}

/// Every run replayed within the budget: per run its best, when it was found, its decisions,
/// the budget it used and its failed trials; the results cut by the budget, the trials still
/// pending, the failures; and one trajectory row per result within the budget.
struct Within<'a> {
    best: Vec<f64>,
    found_at: Vec<f64>,
    decisions: Vec<u64>,
    used: Vec<f64>,
    failed_trials: Vec<u64>,
    cut: usize,
    pending: u64,
    failures: u64,
    steps: Steps<'a>,
    /// Several objectives: per run its archive's indicators at the end.
    outcomes: Option<Vec<crate::experiment::objectives::MoOutcome>>,
}

/// The trajectories' columns of an import.
#[derive(Default)]
struct Steps<'a> {
    cell: Vec<u64>,
    step: Vec<u32>,
    action: Vec<&'a str>,
    arm: Vec<u32>,
    learner: Vec<&'a str>,
    fidelity: Vec<Option<u32>>,
    time: Vec<f64>,
    reward: Vec<f64>,
    incumbent: Vec<f64>,
    /// Several objectives: the hypervolume regret after each result (empty with one).
    hv_regret: Vec<f64>,
}

fn within_budget<'a>(
    imp: &Import,
    runs: &[&'a ImportedRun],
    budget: f64,
    measure: Option<&objectives::Measure>,
) -> Within<'a> {
    let better = |a: f64, b: f64| {
        if imp.maximize { a > b } else { a < b }
    };
    // Runs: one row per cell. Trajectories: one row per result within the budget.
    let n = runs.len();
    let mut best = vec![f64::NAN; n];
    let mut found_at = vec![f64::NAN; n];
    let mut decisions = vec![0u64; n];
    let mut used = vec![0.0; n];
    let (mut cut, mut pending, mut failures) = (0usize, 0u64, 0u64);
    // A run's failures are its trials that failed within the budget, as its decisions are.
    let mut failed_trials = vec![0u64; n];
    let mut t_cell = Vec::new();
    let mut t_step = Vec::new();
    let mut t_action = Vec::new();
    let mut t_arm = Vec::new();
    let mut t_learner = Vec::new();
    let mut t_fid = Vec::new();
    let mut t_time = Vec::new();
    let mut t_reward = Vec::new();
    let mut t_inc = Vec::new();
    let mut t_hv = Vec::new();
    let mut outcomes = measure.map(|_| Vec::with_capacity(n));
    for (cell, r) in runs.iter().enumerate() {
        let mut archive = measure.map(|m| m.archive(&r.task));
        pending += r.pending;
        let mut failed = std::collections::BTreeSet::new();
        let mut inc = f64::NAN;
        let mut step = 0u32;
        for e in &r.evals {
            if e.time > budget * (1.0 + 1e-12) {
                cut += 1;
                continue;
            }
            step += 1;
            if e.action == "failed" {
                failed.insert(e.trial);
            }
            if !e.value.is_nan() && (inc.is_nan() || better(e.value, inc)) {
                inc = e.value;
                found_at[cell] = e.time;
            }
            t_cell.push(cell as u64);
            t_step.push(step);
            t_action.push(e.action);
            t_arm.push(e.trial);
            t_learner.push(r.task.learner.as_str());
            t_fid.push(e.fidelity);
            t_time.push(e.time);
            t_reward.push(e.value);
            t_inc.push(inc);
            used[cell] = e.time;
            if let (Some(a), Some(m)) = (&mut archive, measure) {
                if let Some(p) = m.point(&r.task, e) {
                    a.add(&p);
                }
                t_hv.push(a.regret());
            }
        }
        if let (Some(a), Some(o)) = (&archive, &mut outcomes) {
            o.push(a.outcome());
        }
        best[cell] = inc;
        decisions[cell] = u64::from(step);
        failed_trials[cell] = failed.len() as u64;
        failures += failed.len() as u64;
    }
    Within {
        best,
        found_at,
        decisions,
        used,
        failed_trials,
        cut,
        pending,
        failures,
        steps: Steps {
            cell: t_cell,
            step: t_step,
            action: t_action,
            arm: t_arm,
            learner: t_learner,
            fidelity: t_fid,
            time: t_time,
            reward: t_reward,
            incumbent: t_inc,
            hv_regret: t_hv,
        },
        outcomes,
    }
}

/// `runs.parquet` of an import: one row per run.
fn runs_frame(
    imp: &Import,
    runs: &[&ImportedRun],
    budget: f64,
    name: &str,
    program: &str,
    w: &Within<'_>,
) -> Result<DataFrame> {
    let n = runs.len();
    let direction = if imp.maximize { "maximize" } else { "minimize" };
    // The columns an import has; the schema fills the rest (the pool world's counters, the
    // workers' clock) with nulls.
    let s = |name: &str, v: Vec<String>| Column::new(name.into(), v);
    let per_run =
        |f: &dyn Fn(&ImportedRun) -> String| -> Vec<String> { runs.iter().map(|r| f(r)).collect() };
    schema::frame(
        schema::RUNS,
        vec![
            s("experiment", vec![name.to_string(); n]),
            Column::new("cell".into(), (0..n as u64).collect::<Vec<u64>>()),
            s("dataset", per_run(&|r| r.task.dataset.clone())),
            Column::new(
                "run".into(),
                runs.iter().map(|r| r.task.run).collect::<Vec<i64>>(),
            ),
            Column::new("budget".into(), vec![budget; n]),
            s("budget_unit", vec![imp.budget_unit.clone(); n]),
            Column::new("budget_abs".into(), vec![budget; n]),
            s("policy_family", per_run(&|r| r.policy.clone())),
            s("policy", per_run(&|r| r.policy.clone())),
            s("params", vec!["{}".to_string(); n]),
            Column::new("repetition".into(), repetitions(runs)),
            Column::new(
                "seed".into(),
                runs.iter().map(|r| r.seed).collect::<Vec<u64>>(),
            ),
            nan_as_null("best_score", w.best.clone()),
            s("best_learner", per_run(&|r| r.task.learner.clone())),
            nan_as_null("best_found_at", w.found_at.clone()),
            s(
                "pulls",
                runs.iter()
                    .zip(&w.decisions)
                    .map(|(r, d)| {
                        if r.task.learner.is_empty() {
                            "{}".to_string()
                        } else {
                            serde_json::json!({ r.task.learner.as_str(): d }).to_string()
                        }
                    })
                    .collect(),
            ),
            s("time_s", vec!["{}".to_string(); n]),
            Column::new("decisions".into(), w.decisions.clone()),
            Column::new("budget_used".into(), w.used.clone()),
            Column::new("overhead_s".into(), vec![0.0; n]),
            Column::new("failures".into(), w.failed_trials.clone()),
            Column::new("exhausted_pulls".into(), vec![0u64; n]),
            Column::new("exhausted_budget".into(), vec![0.0; n]),
            s("replay", vec![format!("imported from {}", imp.tool); n]),
            s("trace_source", vec![format!("{} run logs", imp.tool); n]),
            s("direction", vec![direction.to_string(); n]),
            s("pool_scope", per_run(&|r| r.task.learner.clone())),
            s("incumbent_rule", vec!["best-seen".to_string(); n]),
            s("program", vec![program.to_string(); n]),
        ]
        .into_iter()
        .chain(
            w.outcomes
                .as_deref()
                .map(objective_columns)
                .unwrap_or_default(),
        )
        .collect(),
        n,
        &[],
    )
}

/// Several objectives: each run's archive's indicators (as a `run` writes them: an infinite
/// IGD+ or ε of an empty archive is null).
fn objective_columns(o: &[crate::experiment::objectives::MoOutcome]) -> Vec<Column> {
    let f = |name: &str, g: fn(&crate::experiment::objectives::MoOutcome) -> f64| {
        Column::new(
            name.into(),
            o.iter()
                .map(|m| Some(g(m)).filter(|v| v.is_finite()))
                .collect::<Vec<Option<f64>>>(),
        )
    };
    vec![
        f("hypervolume", |m| m.hypervolume),
        f("hv_regret", |m| m.hv_regret),
        f("igd_plus", |m| m.igd_plus),
        f("epsilon_additive", |m| m.epsilon_additive),
        Column::new(
            "front_size".into(),
            o.iter().map(|m| m.front_size).collect::<Vec<u64>>(),
        ),
    ]
}

/// `trajectories.parquet` of an import, and its rows.
fn trajectories_frame(t: Steps<'_>) -> Result<(DataFrame, usize)> {
    let rows = t.cell.len();
    let df = schema::frame(
        schema::TRAJECTORIES,
        vec![
            Column::new("cell".into(), t.cell),
            Column::new("step".into(), t.step),
            Column::new("action".into(), t.action),
            Column::new("arm".into(), t.arm),
            Column::new("learner".into(), t.learner),
            Column::new("fidelity".into(), t.fidelity),
            Column::new("time".into(), t.time),
            nan_as_null("reward", t.reward),
            nan_as_null("incumbent", t.incumbent),
        ]
        .into_iter()
        .chain((!t.hv_regret.is_empty()).then(|| Column::new("hv_regret".into(), t.hv_regret)))
        .collect(),
        rows,
        &[],
    )?;

    Ok((df, rows))
}

/// The lock file of an import (its tool, files and their hashes, the budget), with its tasks and
/// policies.
#[allow(clippy::type_complexity)]
fn lock_file(
    imp: &Import,
    runs: &[&ImportedRun],
    budget: f64,
    program: &str,
) -> Result<(LockFile, std::collections::BTreeSet<String>, Vec<String>)> {
    let n = runs.len();
    let direction = if imp.maximize { "maximize" } else { "minimize" };
    let tasks: std::collections::BTreeSet<String> = runs.iter().map(|r| r.task.text()).collect();
    let policies: Vec<String> = runs
        .iter()
        .map(|r| r.policy.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut hashes = BTreeMap::new();
    for f in &imp.files {
        hashes.insert(f.display().to_string(), file_hash(f)?);
    }
    let lock = LockFile {
        resolved: Resolved {
            results_format: RESULTS_FORMAT,
            program: program.to_string(),
            git_commit: crate::build::build_commit().to_string(),
            trace_source: format!("{} run logs", imp.tool),
            world: format!(
                "imported from {} ({}); metric {}{}; budget {budget} {}",
                imp.tool,
                imp.how,
                imp.metric,
                // Several objectives name their directions in the metric.
                if imp.objectives.is_empty() {
                    format!(" ({direction})")
                } else {
                    String::new()
                },
                imp.budget_unit
            ),
            tasks: tasks.iter().cloned().collect(),
            policies: policies.clone(),
            cells: Some(n as i64),
            trajectories: "all".into(),
            imported: Some(crate::results::Imported {
                tool: imp.tool.to_string(),
                how: imp.how.clone(),
                metric: imp.metric.clone(),
                files: hashes,
            }),
            ..Resolved::default()
        },
        experiment: toml::Table::new(),
    };

    Ok((lock, tasks, policies))
}

/// Write the folder whole into a temporary folder beside `out`, then rename it.
fn publish(
    out: &Path,
    name: &str,
    runs_df: DataFrame,
    traj_df: DataFrame,
    lock: &LockFile,
) -> Result<()> {
    // Written whole into a temporary folder beside `out`, then renamed.
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("{}: cannot create", parent.display()))?;
    let tmp = parent.join(format!(".{name}.import-tmp"));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| {
            format!("{}: cannot remove a stale temporary folder", tmp.display())
        })?;
    }
    // Through the results store, as `run` writes: the same encoder, row groups and publishing.
    let store = crate::experiment::Store::open(&tmp)?;
    let mut segment = store.segment_coded(Vec::new(), (0, 0));
    segment.push(runs_df, traj_df)?;
    store.finish(segment)?;
    crate::experiment::write_text_atomic(&tmp.join(LOCK), &lock.to_toml()?)?;
    drop(store);
    std::fs::rename(&tmp, out)
        .with_context(|| format!("{}: cannot rename to {}", tmp.display(), out.display()))?;
    Ok(())
}

/// A float column in which NaN is null.
use crate::results::nan_as_null;

/// A file's 64-bit FNV-1a content hash (hex), as the lock file keeps external files'.
fn file_hash(path: &Path) -> Result<String> {
    let bytes = crate::files::read_bytes(path, "an imported file", u64::MAX)?;
    Ok(format!("{:016x}", crate::rng::fnv1a64(&bytes)))
}

/// Each run's repetition: its seed, when every seed of the import fits 32 bits (as every tool's
/// seeds in practice do); otherwise the place of its seed among the import's distinct seeds, in
/// order, so that no two seeds share a repetition. The `seed` column keeps the seeds either way.
fn repetitions(runs: &[&ImportedRun]) -> Vec<u32> {
    if runs.iter().all(|r| u32::try_from(r.seed).is_ok()) {
        return runs.iter().map(|r| r.seed as u32).collect();
    }
    let mut seeds: Vec<u64> = runs.iter().map(|r| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    runs.iter()
        .map(|r| seeds.binary_search(&r.seed).unwrap_or(0) as u32)
        .collect()
}

/// A naming rule such as `{policy}.{task}.{seed}`: literal text with the placeholders
/// `{policy}`, `{task}`, `{dataset}` and `{seed}`; each placeholder takes the text up to the first
/// occurrence of the literal after it (the last one takes the rest).
#[derive(Clone, Debug)]
pub(crate) struct NameRule {
    text: String,
    /// Literal, then (placeholder, literal) pairs.
    head: String,
    parts: Vec<(String, String)>,
}

/// The placeholders a naming rule may use.
const PLACEHOLDERS: [&str; 4] = ["policy", "task", "dataset", "seed"];

impl NameRule {
    pub fn parse(text: &str) -> Result<NameRule> {
        let mut head = String::new();
        let mut parts: Vec<(String, String)> = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let literal = &rest[..open];
            match parts.last_mut() {
                Some((_, lit)) => lit.push_str(literal),
                None => head.push_str(literal),
            }
            let Some(close) = rest[open..].find('}') else {
                bail!("--names '{text}': a '{{' without its '}}'");
            };
            let key = &rest[open + 1..open + close];
            if !PLACEHOLDERS.contains(&key) {
                bail!(
                    "--names '{text}': unknown placeholder {{{key}}}; use {}",
                    PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
                );
            }
            if parts.last().is_some_and(|(_, lit)| lit.is_empty()) {
                bail!(
                    "--names '{text}': two placeholders with nothing between them cannot be told apart; put a separator between them"
                );
            }
            parts.push((key.to_string(), String::new()));
            rest = &rest[open + close + 1..];
        }
        match parts.last_mut() {
            Some((_, lit)) => lit.push_str(rest),
            None => {
                bail!("--names '{text}': no placeholder; use e.g. '{{policy}}.{{task}}.{{seed}}'")
            }
        }
        if !parts.iter().any(|(k, _)| k == "policy") {
            bail!("--names '{text}': needs {{policy}}");
        }
        Ok(NameRule {
            text: text.into(),
            head,
            parts,
        })
    }

    /// The placeholders' values in `name`, or None if it does not follow the rule.
    pub fn apply(&self, name: &str) -> Option<BTreeMap<String, String>> {
        let mut rest = name.strip_prefix(self.head.as_str())?;
        let mut out = BTreeMap::new();
        for (i, (key, lit)) in self.parts.iter().enumerate() {
            let last = i + 1 == self.parts.len();
            let value = if last {
                rest.strip_suffix(lit.as_str())?
            } else {
                let at = rest.find(lit.as_str())?;
                let v = &rest[..at];
                rest = &rest[at + lit.len()..];
                v
            };
            if value.is_empty() {
                return None;
            }
            out.insert(key.clone(), value.to_string());
        }
        Some(out)
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

/// A seed given as text (from a name or a key), as a number.
pub(crate) fn parse_seed(text: &str, what: &str) -> Result<u64> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| anyhow::anyhow!("{what}: seed '{text}' is not a non-negative whole number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_read_as_dataset_run_and_learner() {
        let t = Task::parse("phoneme/0/hist-gradient-boosting", "x").unwrap();
        assert_eq!(
            (t.dataset.as_str(), t.run, t.learner.as_str()),
            ("phoneme", 0, "hist-gradient-boosting")
        );
        assert_eq!(Task::parse("car", "x").unwrap().run, 0);
        assert_eq!(Task::parse("car/2", "x").unwrap().run, 2);
        let e = Task::parse("car/two", "meta.json").unwrap_err().to_string();
        assert!(
            e.contains("meta.json") && e.contains("'two' is not a run number"),
            "{e}"
        );
        assert!(Task::parse("a/1/b/c", "x").is_err());
    }

    #[test]
    fn runs_of_another_objective_or_direction_are_refused_naming_both_files() {
        let mut same = SameObjective::default();
        same.check(Path::new("a"), true, "accuracy").unwrap();
        same.check(Path::new("b"), true, "accuracy").unwrap();
        let e = same
            .check(Path::new("c"), false, "accuracy")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c: objective 'accuracy' (min) differs from 'accuracy' (max) of a"),
            "{e}"
        );
        assert!(same.check(Path::new("d"), true, "loss").is_err());
        assert_eq!(same.get(), Some((true, "accuracy".to_string())));
    }

    #[test]
    fn task_ids_that_are_not_dataset_run_learner_keep_their_text() {
        assert_eq!(
            task_of("phoneme/0/hist-gradient-boosting").learner,
            "hist-gradient-boosting"
        );
        let t = task_of("yahpo/lcbench/3945/None/epoch");
        assert_eq!(
            (t.dataset.as_str(), t.run),
            ("yahpo-lcbench-3945-None-epoch", 0)
        );
    }

    #[test]
    fn naming_rules_split_names_at_their_separators() {
        let r = NameRule::parse("{policy}.{dataset}.{seed}").unwrap();
        let m = r.apply("tpe.statlog-segment.1").unwrap();
        assert_eq!(m["policy"], "tpe");
        assert_eq!(m["dataset"], "statlog-segment");
        assert_eq!(m["seed"], "1");
        assert!(r.apply("tpe-statlog-1").is_none());
        let r = NameRule::parse("study_{policy}-{seed}").unwrap();
        assert_eq!(
            r.apply("study_random-search-0").unwrap()["policy"],
            "random"
        );
        assert!(r.apply("other_tpe-0").is_none());
        assert!(NameRule::parse("{policy}{seed}").is_err());
        assert!(
            NameRule::parse("{algo}-{seed}")
                .unwrap_err()
                .to_string()
                .contains("{algo}")
        );
        assert!(
            NameRule::parse("{seed}")
                .unwrap_err()
                .to_string()
                .contains("{policy}")
        );
    }
}
