//! Loading and validating a trace set's evaluations with polars.
//!
//! Every rule of format v1 is checked here, and every violation is reported with the file, the
//! row (1-based data row; for CSV also the line), the column and the rule, so that a user can fix
//! the file without reading this code. Up to `MAX_PROBLEMS` problems are listed at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use polars::prelude::*;

use super::manifest::read_manifest;
use super::{Arm, DroppedTask, Status, Task, TraceSet};
use crate::rng::fnv1a64;

mod read;
pub use read::*;
mod columns;
use columns::*;

const MAX_PROBLEMS: usize = 20;
/// Every column of the format (traces/README.md), the required ones first.
pub(crate) const COLUMNS: [&str; 12] = [
    "dataset",
    "learner",
    "run",
    "seq",
    "elapsed_s",
    "score",
    "cost_s",
    "test_score",
    "status",
    "config",
    "config_id",
    "fidelity",
];
const REQUIRED: &[&str] = COLUMNS.split_at(6).0;

/// Which tasks and arms to keep (all when a list is `None`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskFilter {
    /// Keep only these datasets (all when `None`).
    pub datasets: Option<Vec<String>>,
    /// Keep only these runs.
    pub runs: Option<Vec<i64>>,
    /// Keep only these learners.
    pub learners: Option<Vec<String>>,
    /// Keep only the first N tasks in (dataset, run) order.
    pub max_tasks: Option<usize>,
}

impl TaskFilter {
    /// `[tasks]` keeps (dataset, run) by its dataset and run lists (not by `max_tasks`).
    pub fn keeps(&self, dataset: &str, run: i64) -> bool {
        self.datasets
            .as_ref()
            .is_none_or(|ds| ds.iter().any(|d| d == dataset))
            && self.runs.as_ref().is_none_or(|rs| rs.contains(&run))
    }
}

/// How a trace set is loaded.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Drop tasks that lack some learners (listed in `TraceSet::dropped`) instead of failing.
    pub allow_missing_arms: bool,
    /// Which tasks and learners to keep.
    pub filter: TaskFilter,
}

/// Problems found in one file, reported together.
struct Problems {
    file: String,
    list: Vec<String>,
    more: usize,
}

impl Problems {
    fn new(file: &Path) -> Self {
        Problems {
            file: file.display().to_string(),
            list: Vec::new(),
            more: 0,
        }
    }

    fn push(&mut self, msg: String) {
        if self.list.len() < MAX_PROBLEMS {
            self.list.push(msg);
        } else {
            self.more += 1;
        }
    }

    fn full(&self) -> bool {
        self.list.len() >= MAX_PROBLEMS
    }

    fn into_result(self) -> Result<()> {
        if self.list.is_empty() {
            return Ok(());
        }
        let mut s = format!(
            "{}: {} problem(s) in the evaluations table:",
            self.file,
            self.list.len() + self.more
        );
        for p in &self.list {
            let _ = write!(s, "\n  - {p}");
        }
        if self.more > 0 {
            let _ = write!(s, "\n  - ... and {} more", self.more);
        }
        Err(anyhow!(s))
    }
}

/// How to name a row in messages.
#[derive(Clone, Copy)]
struct RowNamer {
    csv: bool,
}

impl RowNamer {
    fn at(self, i: usize) -> String {
        if self.csv {
            format!("row {} (line {})", i + 1, i + 2)
        } else {
            format!("row {}", i + 1)
        }
    }
}

fn hash_files(paths: &[&Path]) -> Result<String> {
    let mut h: u64 = 0;
    for path in paths {
        let bytes =
            std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        h = fnv1a64(&[h.to_le_bytes().as_slice(), &bytes].concat());
    }
    Ok(format!("{h:016x}"))
}

fn evaluations_path(dir: &Path, notes: &mut Vec<String>) -> Result<PathBuf> {
    let (pq, csv) = (dir.join("evaluations.parquet"), dir.join("evaluations.csv"));
    if pq.is_file() && csv.is_file() {
        let (a, b) = (read_frame(&pq)?, read_frame(&csv)?);
        let same = a.height() == b.height()
            && a.get_column_names() == b.get_column_names()
            && a.columns().iter().zip(b.columns()).all(|(x, y)| {
                x.cast(&DataType::String)
                    .ok()
                    .zip(y.cast(&DataType::String).ok())
                    .is_some_and(|(x, y)| {
                        x.as_materialized_series()
                            .equals_missing(y.as_materialized_series())
                    })
            });
        if !same {
            bail!(
                "{}: both evaluations.parquet and evaluations.csv are here and they differ; banditbench reads one file: remove the one that is not the trace set",
                dir.display()
            );
        }
        notes.push(format!(
            "{}: both evaluations.parquet and evaluations.csv are here (same rows); reading evaluations.parquet",
            dir.display()
        ));
        return Ok(pq);
    }
    for p in [pq, csv] {
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "{}: no evaluations.parquet or evaluations.csv in this folder (a trace set is a folder with traceset.toml and one of them)",
        dir.display()
    )
}

/// Load, validate and group a trace set. Errors name the file, row, column and rule.
pub fn load_trace_set(dir: &Path, opts: &LoadOptions) -> Result<TraceSet> {
    if !dir.is_dir() {
        bail!("{}: no such trace-set folder", dir.display());
    }
    let manifest_path = dir.join("traceset.toml");
    let manifest = read_manifest(&manifest_path)?;
    let mut notes = Vec::new();
    let ev_path = evaluations_path(dir, &mut notes)?;
    let content_hash = hash_files(&[&manifest_path, &ev_path])?;
    let df = read_frame(&ev_path)?;
    if df.height() == 0 {
        bail!(
            "{}: no rows{}; a trace set holds one row per evaluation",
            ev_path.display(),
            if df.width() > 0 {
                ", only a header"
            } else {
                ""
            }
        );
    }
    let rows = RowNamer {
        csv: ev_path.extension().is_some_and(|e| e == "csv"),
    };
    let objective_columns = manifest.extra_columns();
    let known: BTreeSet<&str> = COLUMNS
        .iter()
        .copied()
        .chain(objective_columns.iter().copied())
        .collect();
    let extra_columns: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .filter(|s| !known.contains(s.as_str()))
        .collect();

    let mut p = Problems::new(&ev_path);
    let Some(r) = extract(&df, rows, &mut p, &objective_columns)? else {
        p.into_result()?;
        unreachable!("extract returns None only with problems");
    };
    let statuses = check_rows(&r, rows, &mut p, &objective_columns);
    p.into_result()?;
    let mut p = Problems::new(&ev_path);

    let arms = group_arms(&r, &statuses, rows, &mut p, &manifest.objectives);
    p.into_result()?;

    let f = &opts.filter;
    let all_learners = check_filter(dir, f, &arms)?;
    let dataset_names: Vec<String> = arms
        .keys()
        .map(|(d, _)| d.clone())
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let learners: Vec<String> = match &f.learners {
        Some(want) => {
            let w: BTreeSet<&String> = want.iter().collect();
            all_learners
                .iter()
                .filter(|l| w.contains(l))
                .cloned()
                .collect()
        }
        None => all_learners.iter().cloned().collect(),
    };
    let (mut tasks, dropped, incomplete) = tasks_of(arms, &learners, opts);
    if !incomplete.is_empty() {
        let shown: Vec<&String> = incomplete.iter().take(10).collect();
        bail!(
            "{}: {} task(s) lack some learners (every (dataset, run) needs an arm for each of the {} learners): {}{}; pass --allow-missing-arms (or allow_missing_arms = true in the experiment) to drop such tasks",
            ev_path.display(),
            incomplete.len(),
            learners.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            if incomplete.len() > 10 { "; ..." } else { "" }
        );
    }
    if let Some(max) = f.max_tasks {
        tasks.truncate(max);
    }
    if tasks.is_empty() {
        bail!(no_task_left(dir, f, &dataset_names));
    }
    Ok(TraceSet {
        dir: dir.to_path_buf(),
        evaluations_file: ev_path,
        manifest,
        learners,
        tasks,
        datasets: dataset_names,
        dropped,
        extra_columns,
        content_hash,
        notes,
    })
}

/// The error when no task is left to replay: the filter given, and the datasets the trace set
/// has.
fn no_task_left(dir: &Path, f: &TaskFilter, dataset_names: &[String]) -> String {
    let mut given = Vec::new();
    if let Some(d) = &f.datasets {
        given.push(format!("datasets = {d:?}"));
    }
    if let Some(r) = &f.runs {
        given.push(format!("runs = {r:?}"));
    }
    if let Some(l) = &f.learners {
        given.push(format!("learners = {l:?}"));
    }
    format!(
        "{}: no task left to replay{}; the trace set has the datasets {} (see `banditbench traces inspect {}`)",
        dir.display(),
        if given.is_empty() {
            " (no filter was given: the trace set holds no complete task)".to_string()
        } else {
            format!(" after the [tasks] filter {}", given.join(", "))
        },
        {
            let names: std::collections::BTreeSet<&str> =
                dataset_names.iter().map(String::as_str).collect();
            let v: Vec<&str> = names.into_iter().take(8).collect();
            format!(
                "{}{}",
                v.join(", "),
                if dataset_names.len() > 8 { ", ..." } else { "" }
            )
        },
        dir.display()
    )
}

/// Arms of each task: rows grouped by (dataset, run) and learner, in `seq` order; a duplicate
/// `seq` or an `elapsed_s` that decreases within a run is a problem (the grouping stops once
/// `p` is full).
fn group_arms(
    r: &Rows,
    statuses: &[Status],
    rows: RowNamer,
    p: &mut Problems,
    objectives: &[crate::trace::objectives::Objective],
) -> BTreeMap<(String, i64), BTreeMap<String, Arm>> {
    use crate::trace::objectives::ObjectiveColumn;
    let n = r.dataset.len();
    let ds: Vec<&str> = r
        .dataset
        .iter()
        .map(|s| s.as_deref().unwrap_or(""))
        .collect();
    let lr: Vec<&str> = r
        .learner
        .iter()
        .map(|s| s.as_deref().unwrap_or(""))
        .collect();
    let run: Vec<i64> = r.run.iter().map(|v| v.unwrap_or(0)).collect();
    let seq: Vec<i64> = r.seq.iter().map(|v| v.unwrap_or(0)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (ds[a], run[a], lr[a], seq[a], a).cmp(&(ds[b], run[b], lr[b], seq[b], b))
    });

    let mut arms: BTreeMap<(String, i64), BTreeMap<String, Arm>> = BTreeMap::new();
    let mut start = 0;
    while start < n {
        let first = order[start];
        let mut end = start + 1;
        while end < n
            && ds[order[end]] == ds[first]
            && run[order[end]] == run[first]
            && lr[order[end]] == lr[first]
        {
            end += 1;
        }
        let mut arm = Arm {
            learner: lr[first].to_string(),
            ..Arm::default()
        };
        let mut prev: Option<usize> = None;
        for &i in &order[start..end] {
            if let Some(j) = prev {
                if seq[i] == seq[j] {
                    p.push(format!(
                        "{} and {}: duplicate (dataset, learner, run, seq) = ({}, {}, {}, {})",
                        rows.at(j),
                        rows.at(i),
                        ds[i],
                        lr[i],
                        run[i],
                        seq[i]
                    ));
                }
                let (e_prev, e_now) = (r.elapsed[j].unwrap_or(0.0), r.elapsed[i].unwrap_or(0.0));
                if e_now < e_prev {
                    p.push(format!(
                        "{}, column 'elapsed_s': {e_now} is less than {e_prev} at {} (seq {} before seq {}); elapsed_s must not decrease within a run",
                        rows.at(i),
                        rows.at(j),
                        seq[j],
                        seq[i]
                    ));
                }
            }
            let e = r.elapsed[i].unwrap_or(0.0);
            let cost = r
                .cost
                .as_ref()
                .and_then(|c| c[i])
                .unwrap_or_else(|| e - prev.map_or(0.0, |j| r.elapsed[j].unwrap_or(0.0)));
            let st = statuses[i];
            arm.elapsed_s.push(e);
            arm.cost_s.push(cost);
            arm.score.push(if st == Status::Ok {
                r.score[i].unwrap_or(f64::NAN)
            } else {
                f64::NAN
            });
            arm.test_score
                .push(r.test.as_ref().and_then(|t| t[i]).unwrap_or(f64::NAN));
            arm.status.push(st);
            // Format 1.1: each objective's value, NaN where infeasible or failed.
            for o in objectives {
                let v = match o.column {
                    _ if st != Status::Ok => None,
                    ObjectiveColumn::Score => r.score[i],
                    ObjectiveColumn::Cost => Some(cost),
                    ObjectiveColumn::Extra(j) => r.objectives[j][i],
                    ObjectiveColumn::CumulativeCost => unreachable!("refused by the manifest"),
                };
                arm.objectives.push(v.unwrap_or(f64::NAN));
            }
            prev = Some(i);
        }
        arms.entry((ds[first].to_string(), run[first]))
            .or_default()
            .insert(arm.learner.clone(), arm);
        start = end;
        if p.full() {
            break;
        }
    }
    arms
}

/// Every dataset, run and learner the filter names must exist: a typo is an error, not an
/// empty experiment. Returns every learner of the trace set.
fn check_filter(
    dir: &Path,
    f: &TaskFilter,
    arms: &BTreeMap<(String, i64), BTreeMap<String, Arm>>,
) -> Result<BTreeSet<String>> {
    let all_datasets: BTreeSet<&str> = arms.keys().map(|(d, _)| d.as_str()).collect();
    let all_runs: BTreeSet<i64> = arms.keys().map(|(_, r)| *r).collect();
    let all_learners: BTreeSet<String> = arms.values().flat_map(|m| m.keys().cloned()).collect();
    let list = |it: Vec<String>| it.join(", ");
    if let Some(want) = &f.datasets {
        for d in want {
            if !all_datasets.contains(d.as_str()) {
                bail!(
                    "{}: dataset '{d}' is not in this trace set; it has: {}",
                    dir.display(),
                    list(all_datasets.iter().map(|s| s.to_string()).collect())
                );
            }
        }
    }
    if let Some(want) = &f.runs {
        for r in want {
            if !all_runs.contains(r) {
                bail!(
                    "{}: run {r} is not in this trace set; it has runs: {}",
                    dir.display(),
                    list(all_runs.iter().map(|r| r.to_string()).collect())
                );
            }
        }
    }
    if let Some(want) = &f.learners {
        for l in want {
            if !all_learners.contains(l) {
                bail!(
                    "{}: learner '{l}' is not in this trace set; it has: {}",
                    dir.display(),
                    list(all_learners.iter().cloned().collect())
                );
            }
        }
    }
    Ok(all_learners)
}

/// The tasks the filter keeps, each with an arm per kept learner in `learners` order; a task
/// that lacks a learner is dropped (`allow_missing_arms`) or named as incomplete.
fn tasks_of(
    arms: BTreeMap<(String, i64), BTreeMap<String, Arm>>,
    learners: &[String],
    opts: &LoadOptions,
) -> (Vec<Task>, Vec<DroppedTask>, Vec<String>) {
    let f = &opts.filter;
    let index: HashMap<&str, usize> = learners
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();

    let mut tasks = Vec::new();
    let mut dropped = Vec::new();
    let mut incomplete = Vec::new();
    for ((dataset, run), mut by_learner) in arms {
        if !f.keeps(&dataset, run) {
            continue;
        }
        let missing: Vec<String> = learners
            .iter()
            .filter(|l| !by_learner.contains_key(*l))
            .cloned()
            .collect();
        if !missing.is_empty() {
            if opts.allow_missing_arms {
                dropped.push(DroppedTask {
                    dataset,
                    run,
                    missing,
                });
            } else {
                incomplete.push(format!("{dataset}/{run} lacks {}", missing.join(", ")));
            }
            continue;
        }
        let mut task_arms = vec![Arm::default(); learners.len()];
        for (l, arm) in std::mem::take(&mut by_learner) {
            if let Some(&i) = index.get(l.as_str()) {
                task_arms[i] = arm;
            }
        }
        tasks.push(Task {
            dataset,
            run,
            arms: task_arms,
        });
    }
    (tasks, dropped, incomplete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arms() -> BTreeMap<(String, i64), BTreeMap<String, Arm>> {
        let arm = |l: &str| {
            (
                l.to_string(),
                Arm {
                    learner: l.to_string(),
                    ..Arm::default()
                },
            )
        };
        BTreeMap::from([
            (("a".to_string(), 0), BTreeMap::from([arm("x"), arm("y")])),
            (("b".to_string(), 1), BTreeMap::from([arm("x")])),
        ])
    }

    #[test]
    fn a_filter_naming_what_is_not_there_is_refused_and_incomplete_tasks_are_named() {
        let dir = Path::new("t");
        let f = |datasets: Option<&str>, runs: Option<i64>, learners: Option<&str>| TaskFilter {
            datasets: datasets.map(|d| vec![d.to_string()]),
            runs: runs.map(|r| vec![r]),
            learners: learners.map(|l| vec![l.to_string()]),
            max_tasks: None,
        };
        let all = check_filter(dir, &f(None, None, None), &arms()).unwrap();
        assert_eq!(all.into_iter().collect::<Vec<_>>(), ["x", "y"]);
        for (filter, want) in [
            (
                f(Some("c"), None, None),
                "t: dataset 'c' is not in this trace set; it has: a, b",
            ),
            (
                f(None, Some(2), None),
                "t: run 2 is not in this trace set; it has runs: 0, 1",
            ),
            (
                f(None, None, Some("z")),
                "t: learner 'z' is not in this trace set; it has: x, y",
            ),
        ] {
            assert_eq!(
                check_filter(dir, &filter, &arms()).unwrap_err().to_string(),
                want
            );
        }
        // Task b/1 lacks learner y: named, or dropped when allowed.
        let learners = ["x".to_string(), "y".to_string()];
        let mut opts = LoadOptions::default();
        let (tasks, dropped, incomplete) = tasks_of(arms(), &learners, &opts);
        assert_eq!((tasks.len(), dropped.len()), (1, 0));
        assert_eq!(incomplete, ["b/1 lacks y"]);
        opts.allow_missing_arms = true;
        let (tasks, dropped, incomplete) = tasks_of(arms(), &learners, &opts);
        assert_eq!((tasks.len(), dropped.len(), incomplete.len()), (1, 1, 0));
        let e = no_task_left(dir, &f(Some("a"), None, None), &["a".to_string()]);
        assert!(
            e.starts_with("t: no task left to replay after the [tasks] filter datasets = [\"a\"]"),
            "{e}"
        );
    }
}
