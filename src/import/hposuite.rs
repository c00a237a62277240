//! hposuite's run results (the `automl/hposuite` benchmarking suite over `hpoglue`): one parquet
//! file per run, `<study>/<run name>/<run name>.parquet`, one row per result, as `Run.Report.df`
//! writes it (`hposuite/run.py`): `config.id`, `result.objective.1.value`,
//! `result.budget_used_total` (the run's budget so far: trials under a `TrialBudget`, cost under
//! a `CostBudget`), `query.fidelity.1.value` when the problem has a fidelity, and per run
//! `optimizer.name`, `optimizer.hp_str`, `benchmark.name`, `run.seed`,
//! `problem.objective.1.minimize`, `problem.budget.kind`. hposuite records no failed trials.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::{Eval, ImportedRun, Task, parse_seed, task_of};

/// How to read hposuite runs (`import hposuite` options).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The task of every run, or None: the column `task_key`.
    pub task: Option<String>,
    pub task_key: String,
    pub prefix: String,
}

/// `import hposuite`'s own options (the shared ones are [`super::Common`]).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    /// The column naming the task.
    pub task_key: String,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            task_key: "benchmark.name".into(),
        }
    }
}

impl super::Importer for Request {
    const TOOL: &'static str = "hposuite";

    fn read(
        &self,
        paths: &[PathBuf],
        common: &super::Common,
    ) -> Result<(super::Import, Vec<String>)> {
        let opts = Options {
            task: common.task.clone(),
            task_key: self.task_key.clone(),
            prefix: common.prefix_or(Self::TOOL),
        };
        let read = read(paths, &opts)?;
        let how = format!(
            "policy from 'optimizer.name' and 'optimizer.hp_str', task from {}, seed from 'run.seed', clock 'result.budget_used_total' ({})",
            common.task_source(&self.task_key),
            read.budget_unit
        );
        let imp = super::Import {
            tool: Self::TOOL,
            runs: read.runs,
            maximize: read.maximize,
            metric: read.metric,
            budget_unit: read.budget_unit,
            files: read.files,
            how,
            objectives: read.objectives,
            intermediate: false,
        };
        Ok((imp, Vec::new()))
    }
}

/// The parquet files under `paths` (files, or folders searched at any depth), in name order.
pub(crate) fn run_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        crate::files::walk_folders(p, &mut |d| {
            out.extend(
                crate::files::files_in(d)?
                    .into_iter()
                    .filter(|e| e.extension().is_some_and(|x| x == "parquet")),
            );
            Ok(true)
        })
    }
    let mut out = Vec::new();
    for p in paths {
        let before = out.len();
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            bail!(
                "{}: no such file or folder; give hposuite's run files (<run>.parquet) or its study folder",
                p.display()
            );
        }
        if out.len() == before {
            bail!("{}: no hposuite run here (no .parquet file)", p.display());
        }
    }
    Ok(out)
}

/// What a whole hposuite import reads.
pub(crate) struct Read {
    pub runs: Vec<ImportedRun>,
    pub maximize: bool,
    pub metric: String,
    /// `trials` or `cost`.
    pub budget_unit: String,
    pub files: Vec<PathBuf>,
    /// Runs of several objectives: each (empty with one).
    pub objectives: Vec<super::objectives::Objective>,
}

pub(crate) fn read(paths: &[PathBuf], opts: &Options) -> Result<Read> {
    let files = run_files(paths)?;
    let mut runs = Vec::new();
    let mut same = super::SameObjective::default();
    let mut unit_of: Option<(String, PathBuf)> = None;
    for f in &files {
        let (run, maximize, metric, unit, several) = read_run(f, opts)?;
        same.check_run(f, maximize, &metric, several)?;
        match &unit_of {
            None => unit_of = Some((unit, f.clone())),
            Some((u, at)) if *u != unit => bail!(
                "{}: its budget counts {unit}, that of {} counts {u}: import runs of one kind of budget together",
                f.display(),
                at.display()
            ),
            Some(_) => {}
        }
        runs.push(run);
    }
    let objectives = same.objectives();
    let (maximize, metric) = same.get().context("no hposuite run found")?;
    let budget_unit = unit_of.map(|u| u.0).unwrap_or_default();
    Ok(Read {
        runs,
        maximize,
        metric,
        budget_unit,
        files,
        objectives,
    })
}

/// A column's values as text (categorical and string columns alike).
fn texts(path: &Path, df: &DataFrame, name: &str) -> Result<Vec<Option<String>>> {
    let c = df
        .column(name)
        .map_err(|_| missing(path, df, name))?
        .cast(&DataType::String)
        .map_err(|e| {
            anyhow::anyhow!(
                "{}: column '{name}' cannot be read as text ({e})",
                path.display()
            )
        })?;
    Ok(c.str()?.iter().map(|v| v.map(String::from)).collect())
}

fn numbers(path: &Path, df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let c = df.column(name).map_err(|_| missing(path, df, name))?;
    if !(c.dtype().is_primitive_numeric() || c.dtype() == &DataType::Null) {
        bail!(
            "{}: column '{name}' must be numeric, but its type is {}",
            path.display(),
            c.dtype()
        );
    }
    Ok(c.cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

fn missing(path: &Path, df: &DataFrame, name: &str) -> anyhow::Error {
    let have: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    anyhow::anyhow!(
        "{}: no column '{name}' (hposuite writes it in every run's file); its columns are {}",
        path.display(),
        have.join(", ")
    )
}

/// The one value a per-run column holds.
fn single(path: &Path, values: &[Option<String>], name: &str) -> Result<String> {
    let first = values
        .first()
        .cloned()
        .flatten()
        .with_context(|| format!("{}: row 1, column '{name}': empty", path.display()))?;
    if let Some((i, v)) = values
        .iter()
        .enumerate()
        .find(|(_, v)| v.as_deref() != Some(first.as_str()))
    {
        bail!(
            "{}: row {}, column '{name}': '{}' differs from '{first}' in row 1; one file is one run",
            path.display(),
            i + 1,
            v.as_deref().unwrap_or("")
        );
    }
    Ok(first)
}

/// A run file read: the run, whether its (first) objective is maximised, its name, the budget's
/// unit, and with several objectives each with its direction.
type RunRead = (ImportedRun, bool, String, String, Vec<(String, bool)>);

fn read_run(path: &Path, opts: &Options) -> Result<RunRead> {
    crate::files::check(path, "an hposuite run file (.parquet)")?;
    let df = crate::results::read_parquet(path)?;
    let p = path.display();
    if df.height() == 0 {
        bail!("{p}: no result in the file");
    }
    let count = numbers(path, &df, "problem.objective.count")?;
    let n_objectives = count[0];
    if !(n_objectives >= 1.0 && n_objectives.fract() == 0.0 && n_objectives <= 64.0) {
        bail!(
            "{p}: column 'problem.objective.count': {n_objectives} is not a number of objectives"
        );
    }
    let n_objectives = n_objectives as usize;
    let optimizer = single(path, &texts(path, &df, "optimizer.name")?, "optimizer.name")?;
    let hps = match df.column("optimizer.hp_str") {
        Ok(_) => single(
            path,
            &texts(path, &df, "optimizer.hp_str")?,
            "optimizer.hp_str",
        )?,
        Err(_) => "default".into(),
    };
    let policy = if hps == "default" {
        optimizer
    } else {
        format!("{optimizer}({hps})")
    };
    let task = match &opts.task {
        Some(t) => Task::parse(t, "--task")?,
        None => {
            let id = single(path, &texts(path, &df, &opts.task_key)?, &opts.task_key)?;
            task_of(&id)
        }
    };
    let seed_text = single(path, &texts(path, &df, "run.seed")?, "run.seed")?;
    let seed = parse_seed(&seed_text, &format!("{p}, column 'run.seed'"))?;
    // Each objective's name and direction (problem.objective.K.*, K = 1, 2, ...).
    let mut objectives = Vec::with_capacity(n_objectives);
    for k in 1..=n_objectives {
        let name_col = format!("problem.objective.{k}.name");
        let min_col = format!("problem.objective.{k}.minimize");
        let name = single(path, &texts(path, &df, &name_col)?, &name_col)?;
        let maximize = match single(path, &texts(path, &df, &min_col)?, &min_col)?.as_str() {
            "false" => true,
            "true" => false,
            other => bail!("{p}: column '{min_col}': '{other}' is not true or false"),
        };
        objectives.push((name, maximize));
    }
    let (metric, maximize) = objectives[0].clone();
    let unit = match single(
        path,
        &texts(path, &df, "problem.budget.kind")?,
        "problem.budget.kind",
    )?
    .as_str()
    {
        "TrialBudget" => "trials".to_string(),
        "CostBudget" => "cost".to_string(),
        other => bail!(
            "{p}: column 'problem.budget.kind': '{other}' is neither TrialBudget nor CostBudget"
        ),
    };
    let value = numbers(path, &df, "result.objective.1.value")?;
    let others: Vec<Vec<f64>> = (2..=n_objectives)
        .map(|k| numbers(path, &df, &format!("result.objective.{k}.value")))
        .collect::<Result<_>>()?;
    let time = numbers(path, &df, "result.budget_used_total")?;
    let ids = texts(path, &df, "config.id")?;
    let fidelity = match df.column("query.fidelity.1.value") {
        Ok(_) => Some(numbers(path, &df, "query.fidelity.1.value")?),
        Err(_) => None,
    };
    let mut arms: HashMap<String, u32> = HashMap::new();
    let mut evals = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let at = |col: &str| format!("{p}: row {}, column '{col}'", i + 1);
        let t = time[i];
        if !(t.is_finite() && t >= 0.0) {
            bail!(
                "{}: the budget used is missing or negative; every result has one",
                at("result.budget_used_total")
            );
        }
        let id = ids[i]
            .clone()
            .with_context(|| format!("{}: empty", at("config.id")))?;
        let next = arms.len() as u32;
        let trial = *arms.entry(id).or_insert(next);
        let f = fidelity.as_ref().and_then(|f| {
            let v = f[i];
            (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX))
                .then_some(v as u32)
        });
        evals.push(Eval {
            time: t,
            value: value[i],
            trial,
            fidelity: f,
            action: "result",
            // Several objectives: each value of the row, in the problem's order.
            values: if n_objectives > 1 {
                std::iter::once(value[i])
                    .chain(others.iter().map(|o| o[i]))
                    .collect()
            } else {
                Vec::new()
            },
        });
    }
    evals.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok((
        ImportedRun {
            source: p.to_string(),
            policy: format!("{}{policy}", opts.prefix),
            task,
            seed,
            evals,
            pending: 0,
        },
        maximize,
        metric,
        unit,
        if n_objectives > 1 {
            objectives
        } else {
            Vec::new()
        },
    ))
}
