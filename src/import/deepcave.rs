//! DeepCAVE's DataFrame format (Sass et al. 2022, "DeepCAVE: An Interactive Analysis Tool for
//! Automated Machine Learning"; `deepcave/runs/converters/dataframe.py`): one folder per run with
//! `trials.csv` (one row per trial: `config_id`, one column per hyperparameter, one column per
//! objective named `metric:NAME [LOW; HIGH] (maximize|minimize)`, `status`, `start_time`,
//! `end_time`, and optionally `budget` and `seed`) and `configspace.csv`. DeepCAVE names neither
//! the optimiser nor the task: the run folder's name is read by a naming rule (`--names`), and
//! `--task` gives the task when the rule has none.
//!
//! A `success` trial gives a value; `running` and `not_evaluated` are pending; any other status
//! (`timeout`, `memoryout`, `crashed`, `aborted`) is a failed decision. A configuration is a
//! trial's arm; a budget that is a whole number is its fidelity.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::{Eval, ImportedRun, NameRule, Task, parse_seed};

/// What the imported clock counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Seconds from the run's first start to each trial's end (`end_time`).
    Seconds,
    /// Trials finished, in order of their end.
    Trials,
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.unit())
    }
}

impl std::str::FromStr for Clock {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Clock, String> {
        match s {
            "seconds" => Ok(Clock::Seconds),
            "trials" => Ok(Clock::Trials),
            _ => Err(format!(
                "'{s}': the clock is seconds (end_time since the run's first start_time) or trials"
            )),
        }
    }
}

impl Clock {
    pub fn unit(self) -> &'static str {
        match self {
            Clock::Seconds => "seconds",
            Clock::Trials => "trials",
        }
    }
}

/// `import deepcave`'s own options (the shared ones are [`super::Common`]); every default is
/// written here once.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    /// How run folders' names hold the policy, task and seed ({policy}, {task}, {dataset},
    /// {seed}); folders that do not follow it are skipped and listed.
    pub names: String,
    /// The objective [default: the first `metric:` column].
    pub metric: Option<String>,
    /// What the clock counts: seconds or trials.
    #[serde(deserialize_with = "crate::options::parsed")]
    pub clock: Clock,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            names: "{policy}".into(),
            metric: None,
            clock: Clock::Seconds,
        }
    }
}

impl super::Importer for Request {
    const TOOL: &'static str = "deepcave";

    fn read(
        &self,
        paths: &[PathBuf],
        common: &super::Common,
    ) -> Result<(super::Import, Vec<String>)> {
        let opts = Options {
            names: NameRule::parse(&self.names)?,
            task: common.task.clone(),
            metric: self.metric.clone(),
            clock: self.clock,
            prefix: common.prefix_or(Self::TOOL),
        };
        let read = read(paths, &opts)?;
        let notes = super::skipped_note("run folders", &self.names, &read.skipped);
        let how = format!(
            "policy{} from the folder's name by '{}', clock {}",
            if common.task.is_some() {
                ""
            } else {
                " and task"
            },
            self.names,
            self.clock.unit()
        );
        let imp = super::Import {
            tool: Self::TOOL,
            runs: read.runs,
            maximize: read.maximize,
            metric: read.metric,
            budget_unit: self.clock.unit().into(),
            files: read.files,
            how,
            objectives: Vec::new(),
            intermediate: false,
        };
        Ok((imp, notes))
    }
}

/// How to read DeepCAVE runs (`import deepcave` options).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// How run folders' names hold the policy (and task, seed).
    pub names: NameRule,
    pub task: Option<String>,
    /// The objective [default: the first `metric:` column].
    pub metric: Option<String>,
    pub clock: Clock,
    pub prefix: String,
}

/// What a whole DeepCAVE import reads.
pub(crate) struct Read {
    pub runs: Vec<ImportedRun>,
    pub maximize: bool,
    pub metric: String,
    pub files: Vec<PathBuf>,
    /// Folders whose names do not follow the naming rule.
    pub skipped: Vec<String>,
}

/// An objective column's name, direction and bounds: `metric:NAME [LOW; HIGH] (maximize)`.
fn objective(column: &str) -> Option<(String, bool)> {
    let rest = column.strip_prefix("metric:")?;
    let name = rest.split(" [").next()?.trim().to_string();
    let maximize = if rest.trim_end().ends_with("(maximize)") {
        true
    } else if rest.trim_end().ends_with("(minimize)") {
        false
    } else {
        return None;
    };
    Some((name, maximize))
}

pub(crate) fn read(paths: &[PathBuf], opts: &Options) -> Result<Read> {
    let mut runs = Vec::new();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut same = super::SameObjective::default();
    for dir in super::run_folders(
        paths,
        &["trials.csv"],
        "DeepCAVE",
        "each with trials.csv and configspace.csv",
    )? {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let Some(fields) = opts.names.apply(&name) else {
            skipped.push(name);
            continue;
        };
        let (run, maximize, metric) = read_run(&dir, &fields, opts)?;
        same.check(&dir, maximize, &metric)?;
        files.push(dir.join("trials.csv"));
        files.push(dir.join("configspace.csv"));
        runs.push(run);
    }
    let Some((maximize, metric)) = same.get() else {
        bail!(
            "no run folder's name follows --names '{}' (found: {})",
            opts.names.text(),
            skipped.join(", ")
        );
    };
    Ok(Read {
        runs,
        maximize,
        metric,
        files,
        skipped,
    })
}

/// A run's `trials.csv` (beside its `configspace.csv`), its column names and its path.
fn read_trials(dir: &Path) -> Result<(DataFrame, Vec<String>, PathBuf)> {
    let path = dir.join("trials.csv");
    let p = path.display();
    if !dir.join("configspace.csv").exists() {
        bail!(
            "{}: no configspace.csv beside trials.csv; DeepCAVE's DataFrame format has both",
            dir.display()
        );
    }
    crate::files::check(&path, "DeepCAVE's CSV")?;
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.clone()))
        .and_then(|r| r.finish())
        .map_err(|e| anyhow::anyhow!("{p}: cannot read as CSV ({e})"))?;
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    Ok((df, names, path))
}

/// The objective column (`--metric`, else the first), its name and whether it is maximised.
fn choose_objective(names: &[String], p: &str, opts: &Options) -> Result<(String, String, bool)> {
    let objectives: Vec<(String, String, bool)> = names
        .iter()
        .filter_map(|c| objective(c).map(|(n, m)| (c.clone(), n, m)))
        .collect();
    if objectives.is_empty() {
        bail!(
            "{p}: no objective column; DeepCAVE names them 'metric:NAME [LOW; HIGH] (maximize|minimize)' (its columns are {})",
            names.join(", ")
        );
    }
    Ok(match &opts.metric {
        None => objectives[0].clone(),
        Some(m) => objectives
            .iter()
            .find(|(_, n, _)| n == m)
            .cloned()
            .with_context(|| {
                format!(
                    "--metric {m}: {p} has no such objective; its objectives are {}",
                    objectives
                        .iter()
                        .map(|o| o.1.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?,
    })
}

/// The run's task (the folder name's `{task}` or `{dataset}`, else `--task`) and seed (the
/// folder name's `{seed}`, else the table's one seed, else 0).
fn task_and_seed(
    dir: &Path,
    fields: &std::collections::BTreeMap<String, String>,
    opts: &Options,
    table_seeds: impl FnOnce() -> Result<Option<Vec<f64>>>,
) -> Result<(Task, u64)> {
    let named = format!("{}: the folder's name", dir.display());
    let task = match (fields.get("task"), fields.get("dataset"), &opts.task) {
        (Some(t), _, _) => Task::parse(t, &named)?,
        (None, Some(d), _) => Task::parse(d, &named)?,
        (None, None, Some(t)) => Task::parse(t, "--task")?,
        (None, None, None) => bail!(
            "{}: DeepCAVE does not record the task; give --task DATASET[/RUN[/LEARNER]], or a --names rule with {{task}}",
            dir.display()
        ),
    };
    let seed = match fields.get("seed") {
        Some(s) => parse_seed(s, &named)?,
        // One seed for the whole run, when the table gives one (DeepCAVE writes -1 for none).
        None => match table_seeds()? {
            Some(seeds) => match seeds.first() {
                Some(&s0) if s0 >= 0.0 && seeds.iter().all(|&s| s == s0) => s0 as u64,
                _ => 0,
            },
            None => 0,
        },
    };
    Ok((task, seed))
}

/// The run's columns, as read.
struct Trials {
    value: Vec<f64>,
    start: Vec<f64>,
    end: Vec<f64>,
    budget: Option<Vec<f64>>,
    /// Lower-cased and trimmed.
    status: Vec<Option<String>>,
    ids: Vec<Option<String>>,
}

/// Every trial that ran has a start and an end on one clock: a missing, non-finite or negative
/// start would move the run's origin (and so every time) silently.
fn check_times(t: &Trials, p: &str) -> Result<()> {
    for i in 0..t.status.len() {
        let ran = !matches!(
            t.status[i].as_deref(),
            Some("running" | "not_evaluated") | None
        );
        let at = |c: &str| format!("{p}: row {} (line {}), column '{c}'", i + 1, i + 2);
        if ran && !(t.start[i].is_finite() && t.start[i] >= 0.0) {
            bail!(
                "{}: {} is not a time; a trial that ran has a non-negative start time",
                at("start_time"),
                t.start[i]
            );
        }
        if ran && !(t.end[i].is_finite() && t.end[i] >= t.start[i]) {
            bail!(
                "{}: {} is not a time after the trial's start ({})",
                at("end_time"),
                t.end[i],
                t.start[i]
            );
        }
    }
    Ok(())
}

/// The trials in the order they ended, as evaluations on the chosen clock (seconds since the
/// run's first start, or finished trials), and the count of trials still pending.
fn evaluations(t: &Trials, p: &str, clock: Clock) -> Result<(Vec<Eval>, u64)> {
    let t0 = t
        .start
        .iter()
        .copied()
        .filter(|t| t.is_finite())
        .fold(f64::INFINITY, f64::min);
    let mut order: Vec<usize> = (0..t.status.len()).collect();
    order.sort_by(|&a, &b| t.end[a].total_cmp(&t.end[b]));
    let mut arms: HashMap<String, u32> = HashMap::new();
    let mut evals = Vec::new();
    let mut pending = 0u64;
    let mut finished = 0.0;
    for i in order {
        let at = |c: &str| format!("{p}: row {} (line {}), column '{c}'", i + 1, i + 2);
        let s = t.status[i]
            .clone()
            .with_context(|| format!("{}: empty", at("status")))?;
        let id = t.ids[i]
            .clone()
            .with_context(|| format!("{}: empty", at("config_id")))?;
        let next = arms.len() as u32;
        let trial = *arms.entry(id).or_insert(next);
        let action = match s.as_str() {
            "success" => "result",
            "running" | "not_evaluated" => {
                pending += 1;
                continue;
            }
            "timeout" | "memoryout" | "crashed" | "aborted" => "failed",
            other => bail!(
                "{}: '{other}' is not a DeepCAVE status (success, timeout, memoryout, crashed, aborted, not_evaluated, running)",
                at("status")
            ),
        };
        let time = match clock {
            Clock::Seconds => {
                if !(t.end[i].is_finite() && t0.is_finite() && t.end[i] >= t0) {
                    bail!(
                        "{}: the end time is missing or before the run's first start",
                        at("end_time")
                    );
                }
                t.end[i] - t0
            }
            Clock::Trials => {
                finished += 1.0;
                finished
            }
        };
        let fidelity = t.budget.as_ref().and_then(|b| {
            let v = b[i];
            (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX))
                .then_some(v as u32)
        });
        evals.push(Eval {
            time,
            value: if action == "result" {
                t.value[i]
            } else {
                f64::NAN
            },
            trial,
            fidelity,
            action,
            values: Vec::new(),
        });
    }
    Ok((evals, pending))
}

fn read_run(
    dir: &Path,
    fields: &std::collections::BTreeMap<String, String>,
    opts: &Options,
) -> Result<(ImportedRun, bool, String)> {
    let (df, names, path) = read_trials(dir)?;
    let p = path.display().to_string();
    let (column, metric, maximize) = choose_objective(&names, &p, opts)?;
    let has = |c: &str| names.iter().any(|n| n == c);
    for c in ["config_id", "status", "start_time", "end_time"] {
        if !has(c) {
            bail!(
                "{p}: no column '{c}' (DeepCAVE's DataFrame format has it); its columns are {}",
                names.join(", ")
            );
        }
    }
    let hint = "DeepCAVE writes numbers here";
    let numbers = |c: &str| crate::report::input::numbers_or(&path, &df, c, hint);
    let text = |c: &str, f: fn(&str) -> String| -> Result<Vec<Option<String>>> {
        Ok(df
            .column(c)?
            .cast(&DataType::String)?
            .str()?
            .iter()
            .map(|v| v.map(f))
            .collect())
    };
    let trials = Trials {
        value: numbers(&column)?,
        start: numbers("start_time")?,
        end: numbers("end_time")?,
        budget: if has("budget") {
            Some(numbers("budget")?)
        } else {
            None
        },
        status: text("status", |s| s.trim().to_lowercase())?,
        ids: text("config_id", |s| s.to_string())?,
    };
    let policy = fields.get("policy").cloned().unwrap_or_default();
    // The table's seeds, read only when the folder's name gives none.
    let table_seeds = || -> Result<Option<Vec<f64>>> {
        Ok(if has("seed") {
            Some(numbers("seed")?)
        } else {
            None
        })
    };
    let (task, seed) = task_and_seed(dir, fields, opts, table_seeds)?;
    check_times(&trials, &p)?;
    let (evals, pending) = evaluations(&trials, &p, opts.clock)?;
    Ok((
        ImportedRun {
            source: dir.display().to_string(),
            policy: format!("{}{policy}", opts.prefix),
            task,
            seed,
            evals,
            pending,
        },
        maximize,
        metric,
    ))
}
