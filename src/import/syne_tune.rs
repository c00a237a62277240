//! Syne Tune's run logs (Salinas et al. 2022, "Syne Tune: A Library for Large Scale
//! Hyperparameter Tuning and Reproducible Research"): one folder per tuning run, holding
//! `results.csv.zip` (one row per reported result: the metric, `trial_id`, `st_tuner_time`,
//! `st_status`, `config_*`, the resource attribute) and `metadata.json` (`metric_names`,
//! `metric_mode`, the scheduler, and the user's keys such as `algorithm`, `benchmark`, `seed`),
//! as `syne_tune/results_callback.py` and `tuner.py` write them.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;
use serde_json::Value;

use super::{Eval, ImportedRun, Task, parse_seed};

/// How to name Syne Tune runs (`import syne-tune` options).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The metadata key naming the policy [default: `algorithm`, else `method`, else the
    /// scheduler's name].
    pub policy_key: Option<String>,
    /// The task of every run, or None: the metadata key `task_key`.
    pub task: Option<String>,
    pub task_key: String,
    pub seed_key: String,
    /// The metric [default: the first of `metric_names`].
    pub metric: Option<String>,
    /// The column holding the fidelity [default: the scheduler's `time_attr`, if any].
    pub fidelity: Option<String>,
    /// Prefix of every policy's name.
    pub prefix: String,
}

/// `import syne-tune`'s own options (the shared ones are [`super::Common`]); every default
/// is written here once.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    /// The metadata key naming the policy [default: `algorithm`, else `method`, else the
    /// scheduler's name].
    pub policy_key: Option<String>,
    /// The metadata key naming the task.
    pub task_key: String,
    /// The metadata key giving the seed.
    pub seed_key: String,
    /// The metric [default: the first of `metric_names`].
    pub metric: Option<String>,
    /// The column holding each result's fidelity [default: the scheduler's `time_attr`].
    pub fidelity: Option<String>,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            policy_key: None,
            task_key: "task".into(),
            seed_key: "seed".into(),
            metric: None,
            fidelity: None,
        }
    }
}

impl super::Importer for Request {
    const TOOL: &'static str = "syne-tune";

    fn read(
        &self,
        paths: &[PathBuf],
        common: &super::Common,
    ) -> Result<(super::Import, Vec<String>)> {
        let opts = Options {
            policy_key: self.policy_key.clone(),
            task: common.task.clone(),
            task_key: self.task_key.clone(),
            seed_key: self.seed_key.clone(),
            metric: self.metric.clone(),
            fidelity: self.fidelity.clone(),
            prefix: common.prefix_or(Self::TOOL),
        };
        let Runs {
            runs,
            maximize,
            metric,
            files,
            objectives,
        } = read(paths, &opts)?;
        let how = format!(
            "policy from {}, task from {}, seed from '{}', clock st_tuner_time",
            self.policy_key
                .as_deref()
                .map(|k| format!("'{k}'"))
                .unwrap_or_else(|| "'algorithm'/'method'/'scheduler_name'".into()),
            common.task_source(&self.task_key),
            self.seed_key
        );
        let imp = super::Import {
            tool: Self::TOOL,
            runs,
            maximize,
            metric,
            budget_unit: "seconds".into(),
            files,
            how,
            objectives,
            intermediate: true,
        };
        Ok((imp, Vec::new()))
    }
}

/// Read every run folder under `paths`. Returns the runs, whether the metric is maximised, the
/// metric, and the files read.
pub(crate) fn read(paths: &[PathBuf], opts: &Options) -> Result<Runs> {
    let mut runs = Vec::new();
    let mut files = Vec::new();
    let mut same = super::SameObjective::default();
    for dir in super::run_folders(
        paths,
        &["metadata.json", "results.csv.zip"],
        "Syne Tune",
        "each with results.csv.zip and metadata.json",
    )? {
        let (run, maximize, metric, several) = read_run(&dir, opts)?;
        same.check_run(&dir, maximize, &metric, several)?;
        files.push(dir.join("metadata.json"));
        files.push(dir.join("results.csv.zip"));
        runs.push(run);
    }
    let objectives = same.objectives();
    let (maximize, metric) = same.get().context("no Syne Tune run found")?;
    Ok(Runs {
        runs,
        maximize,
        metric,
        files,
        objectives,
    })
}

/// What reading Syne Tune's run folders found.
pub(crate) struct Runs {
    pub runs: Vec<ImportedRun>,
    pub maximize: bool,
    /// The metric, or with several metrics each with its direction, in words.
    pub metric: String,
    pub files: Vec<PathBuf>,
    /// Runs of several metrics: each (empty with one).
    pub objectives: Vec<super::objectives::Objective>,
}

fn read_metadata(path: &Path) -> Result<serde_json::Map<String, Value>> {
    let text = crate::files::read_text(
        path,
        "Syne Tune's metadata.json, which it writes beside results.csv.zip",
    )?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => bail!("{}: not a JSON object", path.display()),
        Err(e) => bail!(
            "{}: line {}, column {}: not valid JSON ({e})",
            path.display(),
            e.line(),
            e.column()
        ),
    }
}

/// A metadata value as text (strings as they are, numbers as written).
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What a run's `metadata.json` says, with the options: the policy, task and seed, the metric
/// and its direction, and the fidelity column, if any.
struct RunMeta {
    policy: String,
    task: Task,
    seed: u64,
    metric: String,
    maximize: bool,
    /// A run of several metrics (no --metric): each with whether it is maximised, the first
    /// being `metric`; empty with one.
    several: Vec<(String, bool)>,
    fidelity_attr: Option<String>,
}

impl RunMeta {
    fn read(dir: &Path, opts: &Options) -> Result<RunMeta> {
        let meta_path = dir.join("metadata.json");
        let meta = read_metadata(&meta_path)?;
        let m = meta_path.display();
        let key = |k: &str| meta.get(k).and_then(text_of);
        let policy = match &opts.policy_key {
            Some(k) => key(k).with_context(|| {
                format!("{m}: no key '{k}' (--policy-key) naming the policy")
            })?,
            None => key("algorithm")
                .or_else(|| key("method"))
                .or_else(|| key("scheduler_name"))
                .with_context(|| {
                    format!(
                        "{m}: no 'algorithm', 'method' or 'scheduler_name' naming the policy; name the key with --policy-key"
                    )
                })?,
        };
        let task = match &opts.task {
            Some(t) => Task::parse(t, "--task")?,
            None => {
                let k = &opts.task_key;
                let t = key(k).or_else(|| (k == "task").then(|| key("benchmark")).flatten());
                let t = t.with_context(|| {
                    format!(
                        "{m}: no key '{k}' naming the task; name the key with --task-key, or give --task DATASET[/RUN[/LEARNER]]"
                    )
                })?;
                Task::parse(&t, &format!("{m}, key '{k}'"))?
            }
        };
        let seed_text = key(&opts.seed_key).with_context(|| {
            format!(
                "{m}: no key '{}' giving the seed; name the key with --seed-key",
                opts.seed_key
            )
        })?;
        let seed = parse_seed(&seed_text, &format!("{m}, key '{}'", opts.seed_key))?;
        let several = several_metrics(&meta, &m.to_string(), opts)?;
        let (metric, maximize) = match several.first() {
            Some((name, max)) => (name.clone(), *max),
            None => metric_and_mode(&meta, &m.to_string(), opts)?,
        };
        let fidelity_attr = opts.fidelity.clone().or_else(|| {
            meta.get("scheduler_kwargs")
                .and_then(|k| k.get("time_attr"))
                .and_then(Value::as_str)
                .map(String::from)
        });
        Ok(RunMeta {
            policy,
            task,
            seed,
            metric,
            maximize,
            several,
            fidelity_attr,
        })
    }
}

/// A run of several metrics, when `--metric` does not name one: every one of `metric_names`
/// with whether it is maximised (`metric_mode`: one mode for all, or one per metric); empty for a
/// run of one metric or with `--metric`.
fn several_metrics(
    meta: &serde_json::Map<String, Value>,
    m: &str,
    opts: &Options,
) -> Result<Vec<(String, bool)>> {
    let names: Vec<&str> = match meta.get("metric_names") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if opts.metric.is_some() || names.len() < 2 {
        return Ok(Vec::new());
    }
    let mode = |i: usize| -> Result<bool> {
        let text = match meta.get("metric_mode") {
            Some(Value::String(s)) => s.as_str(),
            Some(Value::Array(a)) if a.len() == names.len() => a[i].as_str().unwrap_or(""),
            Some(Value::Array(a)) => bail!(
                "{m}: metric_mode lists {} modes for {} metric_names; give one mode, or one per metric",
                a.len(),
                names.len()
            ),
            _ => bail!("{m}: no 'metric_mode' (\"max\" or \"min\")"),
        };
        match text {
            "max" => Ok(true),
            "min" => Ok(false),
            other => bail!("{m}: metric_mode '{other}' is neither \"max\" nor \"min\""),
        }
    };
    names
        .iter()
        .enumerate()
        .map(|(i, n)| Ok((n.to_string(), mode(i)?)))
        .collect()
}

/// The metric (`--metric`, else the only one of `metric_names`) and whether it is maximised
/// (`metric_mode`: one mode for every metric, or a list beside `metric_names`).
fn metric_and_mode(
    meta: &serde_json::Map<String, Value>,
    m: &str,
    opts: &Options,
) -> Result<(String, bool)> {
    let names: Vec<String> = match meta.get("metric_names") {
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str()
                    .map(String::from)
                    .with_context(|| format!("{m}: metric_names[{i}] is not text"))
            })
            .collect::<Result<_>>()?,
        _ => Vec::new(),
    };
    let metric = match (&opts.metric, names.len()) {
        (Some(x), _) => x.clone(),
        (None, 0) => bail!("{m}: no 'metric_names'; name the metric with --metric"),
        (None, 1) => names[0].clone(),
        (None, _) => bail!(
            "{m}: the run has {} metrics ({}), a multi-objective run; banditbench ranks one objective: name it with --metric",
            names.len(),
            names.join(", ")
        ),
    };
    let mode = match meta.get("metric_mode") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.len() == 1 => a[0].as_str().unwrap_or("").to_string(),
        Some(Value::Array(a)) if !a.is_empty() => {
            let at = names.iter().position(|n| *n == metric).with_context(|| {
                format!(
                    "{m}: metric_mode lists a mode per metric, and --metric {metric} is not among metric_names ({})",
                    names.join(", ")
                )
            })?;
            a.get(at).and_then(Value::as_str).unwrap_or("").to_string()
        }
        _ => bail!("{m}: no 'metric_mode' (\"max\" or \"min\")"),
    };
    let maximize = match mode.as_str() {
        "max" => true,
        "min" => false,
        other => bail!("{m}: metric_mode '{other}' is neither \"max\" nor \"min\""),
    };
    Ok((metric, maximize))
}

/// `results.csv.zip`'s one CSV, every column as text (inferring types would read the whole file
/// twice), and the label that names it in messages.
fn read_results_csv(dir: &Path) -> Result<(DataFrame, PathBuf)> {
    let zip_path = dir.join("results.csv.zip");
    let z = zip_path.display();
    let file = crate::files::open(
        &zip_path,
        "Syne Tune's results.csv.zip, which it writes beside metadata.json",
    )?;
    let mut archive = ::zip::ZipArchive::new(file)
        .map_err(|e| anyhow::anyhow!("{z}: not a zip archive ({e})"))?;
    if archive.len() != 1 {
        bail!(
            "{z}: holds {} files; Syne Tune's holds one CSV",
            archive.len()
        );
    }
    let mut inner = archive
        .by_index(0)
        .map_err(|e| anyhow::anyhow!("{z}: cannot read its file ({e})"))?;
    let inner_name = inner.name().map(|n| n.to_string()).unwrap_or_default();
    let label = PathBuf::from(format!("{z} ({inner_name})"));
    let mut bytes = Vec::new();
    inner
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("{}: cannot decompress ({e})", label.display()))?;
    drop(inner);
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0))
        .into_reader_with_file_handle(std::io::Cursor::new(bytes))
        .finish()
        .map_err(|e| anyhow::anyhow!("{}: cannot read as CSV ({e})", label.display()))?;
    Ok((df, label))
}

/// The results' rows as evaluations in time order (a stable sort keeps Syne Tune's order of
/// ties), each value that is not a number named by its row and column.
fn evaluations(df: &DataFrame, label: &Path, meta: &RunMeta, opts: &Options) -> Result<Vec<Eval>> {
    let need = |name: &str, what: &str| -> Result<()> {
        if df.column(name).is_err() {
            let have: Vec<String> = df
                .get_column_names()
                .iter()
                .map(|c| c.to_string())
                .collect();
            bail!(
                "{}: no column '{name}' ({what}); its columns are {}",
                label.display(),
                have.join(", ")
            );
        }
        Ok(())
    };
    need(&meta.metric, "the metric; name another with --metric")?;
    for (name, _) in meta.several.iter().skip(1) {
        need(
            name,
            "a metric of metric_names; name one with --metric to import it alone",
        )?;
    }
    need("st_tuner_time", "the tuner's clock")?;
    need("trial_id", "the trial")?;
    if let Some(f) = &opts.fidelity {
        need(f, "the fidelity, --fidelity")?;
    }
    let hint = "Syne Tune writes numbers here";
    let numbers = |name: &str| crate::report::input::numbers_or(label, df, name, hint);
    let value = numbers(&meta.metric)?;
    let others: Vec<Vec<f64>> = meta
        .several
        .iter()
        .skip(1)
        .map(|(name, _)| numbers(name))
        .collect::<Result<_>>()?;
    let time = numbers("st_tuner_time")?;
    let trial = numbers("trial_id")?;
    let fidelity = match &meta.fidelity_attr {
        Some(a) if df.column(a).is_ok() => Some(numbers(a)?),
        _ => None,
    };
    let status: Vec<Option<String>> = match df.column("st_status") {
        Ok(c) => c
            .cast(&DataType::String)?
            .str()?
            .iter()
            .map(|v| v.map(String::from))
            .collect(),
        Err(_) => vec![None; df.height()],
    };
    let mut evals = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let at = |col: &str| {
            format!(
                "{}: row {} (line {}), column '{col}'",
                label.display(),
                i + 1,
                i + 2
            )
        };
        let t = time[i];
        if !(t.is_finite() && t >= 0.0) {
            bail!(
                "{}: the time is missing or negative; every result has a time",
                at("st_tuner_time")
            );
        }
        let id = trial[i];
        if !(id.is_finite() && id >= 0.0 && id.fract() == 0.0 && id <= f64::from(u32::MAX)) {
            bail!("{}: '{id}' is not a trial number", at("trial_id"));
        }
        let f = match &fidelity {
            Some(f) if f[i].is_finite() && f[i] >= 0.0 => Some(f[i] as u32),
            _ => None,
        };
        let is_failed = status[i].as_deref() == Some("Failed");
        evals.push(Eval {
            time: t,
            value: value[i],
            trial: id as u32,
            fidelity: f,
            action: if is_failed { "failed" } else { "result" },
            // Several metrics: each value of the row, in metric_names' order.
            values: if meta.several.is_empty() {
                Vec::new()
            } else {
                std::iter::once(value[i])
                    .chain(others.iter().map(|o| o[i]))
                    .collect()
            },
        });
    }
    // Rows in time order (Syne Tune appends them as they arrive; a stable sort keeps ties).
    evals.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(evals)
}

/// A run read: the run, whether its metric is maximised, its metric, and with several metrics
/// each of them with its direction.
type RunRead = (ImportedRun, bool, String, Vec<(String, bool)>);

fn read_run(dir: &Path, opts: &Options) -> Result<RunRead> {
    let meta = RunMeta::read(dir, opts)?;
    let (df, label) = read_results_csv(dir)?;
    let evals = evaluations(&df, &label, &meta, opts)?;
    let RunMeta {
        policy,
        task,
        seed,
        metric,
        maximize,
        several,
        ..
    } = meta;
    Ok((
        ImportedRun {
            source: dir.display().to_string(),
            policy: format!("{}{policy}", opts.prefix),
            task,
            seed,
            evals,
            pending: 0,
        },
        maximize,
        metric,
        several,
    ))
}
