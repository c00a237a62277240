//! The one typed reader of a results folder (`runs.parquet`, `trajectories.parquet`), used by
//! `report`, `reproduce` and `run`'s printed ranking. Nothing else reads result columns by name.

pub(crate) mod schema;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;

/// The results files of a folder (the contract `report`, `merge` and other tools read).
pub(crate) const RUNS: &str = "runs.parquet";
pub(crate) const TRAJECTORIES: &str = "trajectories.parquet";
pub(crate) const LOCK: &str = "experiment.lock.toml";

/// The version of the results contract written by this build (the columns of `runs.parquet` and
/// `trajectories.parquet` and the keys of `experiment.lock.toml`; see README, "Results format").
/// Version 1 had no version key and no `program` column; version 2 had one schema per kind of
/// world and a fingerprint of prose; version 3 had one schema for every world and a canonical
/// fingerprint; version 4 adds the simulated workers (`workers`, `makespan_s`, `idle_s` in runs;
/// `worker`, `start`, `finish` in trajectories); version 5 adds `policy_stats` in runs (a
/// policy's own counts for its cell: a library adapter's suggestions, repeats and snapped points);
/// version 6 adds several objectives (`hypervolume`, `hv_regret`, `igd_plus`,
/// `epsilon_additive`, `front_size` in runs, `hv_regret` in trajectories, and the lock file's
/// `[resolved.objectives]` with every task's reference point).
pub(crate) const RESULTS_FORMAT: i64 = 6;

pub use crate::files::read_parquet;

/// The lock file (`experiment.lock.toml`), typed: what a run resolved and the experiment file as
/// it was written. The one reader and writer of the file's keys.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct LockFile {
    #[serde(default)]
    pub resolved: Resolved,
    /// The experiment file's own text, parsed.
    #[serde(default)]
    pub experiment: toml::Table,
}

/// The `[resolved]` table of a lock file. Keys an older format lacks read as their defaults
/// (format 1 had no `results_format`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Resolved {
    pub results_format: i64,
    /// The hash of what decides the cells (`Experiment::fingerprint`).
    pub fingerprint: String,
    /// The build that began the results (each cell's build is in runs.parquet's `program`).
    pub program: String,
    pub git_commit: String,
    pub experiment_file: String,
    pub trace_set: String,
    pub trace_dir: String,
    pub trace_hash: String,
    pub trace_source: String,
    /// The world, in words.
    pub world: String,
    pub tasks: Vec<String>,
    pub learners: Vec<String>,
    pub policies: Vec<String>,
    pub repetitions: i64,
    /// The experiment's cells (all shards together).
    pub cells: Option<i64>,
    pub trajectories: String,
    /// Per external policy: its files and their content hashes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub external_files: BTreeMap<String, BTreeMap<String, String>>,
    /// `I/N` for a shard's folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard_cells: Option<i64>,
    /// Results imported from another tool's run logs (`banditbench import`): the named source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
    /// Several objectives: which, and every task's reference point, fixed before any cell ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objectives: Option<LockObjectives>,
}

/// The `[resolved.objectives]` table: the objectives measured, the reference rule in words, and
/// per task its reference and ideal points (recorded orientation), its true front's size and
/// hypervolume (normalised objectives, as every cell's `hypervolume` is).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LockObjectives {
    pub names: Vec<String>,
    pub directions: Vec<String>,
    pub reference: String,
    pub tasks: Vec<LockTaskReference>,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LockTaskReference {
    pub task: String,
    pub reference: Vec<f64>,
    pub ideal: Vec<f64>,
    pub true_front: i64,
    pub true_hypervolume: f64,
}

/// The `[resolved.imported]` table: which tool's logs a results folder was imported from, how
/// they were read, and each file with its content hash.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Imported {
    pub tool: String,
    /// The options that named and read the runs, in words.
    pub how: String,
    pub metric: String,
    pub files: BTreeMap<String, String>,
}

impl Default for Resolved {
    fn default() -> Self {
        Resolved {
            results_format: 1,
            fingerprint: String::new(),
            program: String::new(),
            git_commit: String::new(),
            experiment_file: String::new(),
            trace_set: String::new(),
            trace_dir: String::new(),
            trace_hash: String::new(),
            trace_source: String::new(),
            world: String::new(),
            tasks: Vec::new(),
            learners: Vec::new(),
            policies: Vec::new(),
            repetitions: 0,
            cells: None,
            trajectories: String::new(),
            external_files: BTreeMap::new(),
            shard: None,
            shard_cells: None,
            imported: None,
            objectives: None,
        }
    }
}

impl LockFile {
    pub fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string(self)?)
    }
}

/// A lock file, if it exists. A symbolic link is refused without reading what it points to
/// (banditbench writes a regular file); a damaged file or a key of the wrong type is an error
/// naming the file and the key.
pub(crate) fn read_lock_file(lock: &Path) -> Result<Option<LockFile>> {
    match std::fs::symlink_metadata(lock) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", lock.display())),
        Ok(m) if m.file_type().is_symlink() => bail!(
            "{}: is a symbolic link, not the lock file banditbench writes (a regular file); remove the link and rerun: finished results are kept and the lock file is written anew",
            lock.display()
        ),
        Ok(m) if !m.is_file() => bail!(
            "{}: is not a regular file; remove it and rerun: finished results are kept and the lock file is written anew",
            lock.display()
        ),
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(lock)
        .with_context(|| format!("{}: cannot read", lock.display()))?;
    let t: LockFile = toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a valid lock file ({}); it was damaged, e.g. by a full disk or an editor: delete this file and rerun: finished results are kept and it is written anew",
            lock.display(),
            e.to_string().trim()
        )
    })?;
    Ok(Some(t))
}

/// One row of runs.parquet, as much as the report needs.
#[derive(Clone, Debug)]
pub struct Run {
    /// The cell's index.
    pub cell: u64,
    /// The task's dataset.
    pub dataset: String,
    /// The task's run.
    pub run: i64,
    /// The budget as the experiment gives it.
    pub budget: f64,
    /// The budget in absolute terms.
    pub budget_abs: f64,
    /// The policy's family.
    pub family: String,
    /// The policy's id (family and parameters).
    pub policy: String,
    /// The parameters as JSON.
    pub params: String,
    /// The repetition.
    pub repetition: u32,
    /// Best validation score found (pool world: of the recommended configuration), recorded orientation.
    pub best_score: f64,
    /// The test score of the best evaluation (NaN if none).
    pub best_test_score: f64,
    /// The learner of the best evaluation ("" if none).
    pub best_learner: String,
    /// Learner -> pulls.
    pub pulls: Vec<(String, f64)>,
    /// Pulls of arms whose traces had ended, and the budget they took.
    pub exhausted_pulls: u64,
    /// The budget those pulls took.
    pub exhausted_budget: f64,
}

impl Run {
    /// A cell with the given identity and score and nothing else (for tests of the analysis).
    pub fn scored(
        dataset: &str,
        run: i64,
        budget: f64,
        repetition: u32,
        policy: &str,
        score: f64,
    ) -> Run {
        Run {
            cell: 0,
            dataset: dataset.into(),
            run,
            budget,
            budget_abs: budget,
            family: policy.split('(').next().unwrap_or(policy).into(),
            policy: policy.into(),
            params: "{}".into(),
            repetition,
            best_score: score,
            best_test_score: f64::NAN,
            best_learner: String::new(),
            pulls: Vec::new(),
            exhausted_pulls: 0,
            exhausted_budget: 0.0,
        }
    }
}

/// A results folder's runs, read back.
pub struct Results {
    /// One entry per cell.
    pub runs: Vec<Run>,
    /// The metric is maximised.
    pub higher_is_better: bool,
    /// What the score is, for reports.
    pub metric_note: String,
    /// What the budgets count.
    pub budget_unit: String,
    /// The most simulated workers of any cell (1 before results format 4).
    pub workers: u64,
}

/// Refuse a results folder that is not whole: no lock file or a damaged one (every folder
/// banditbench writes, by `run`, `import` or `merge`, has one, naming what made the results), a
/// results format newer than this build reads (older formats hold every column the reader
/// needs), or no `trajectories.parquet` where the lock says decisions were written.
fn check_format(dir: &Path) -> Result<()> {
    let lock = dir.join(LOCK);
    let Some(t) = read_lock_file(&lock)? else {
        bail!(
            "{}: no {LOCK} beside {RUNS}; banditbench writes one with every results folder (run, import, merge), naming what made the results, so this folder is incomplete or was copied in part: copy the lock file too, or rerun the experiment into it (finished cells are kept)",
            dir.display()
        );
    };
    let format = t.resolved.results_format;
    if format > RESULTS_FORMAT {
        bail!(
            "{}: results format {format}, newer than the {} this build reads; use a newer banditbench",
            lock.display(),
            RESULTS_FORMAT
        );
    }
    if t.resolved.trajectories != "none" && !dir.join(TRAJECTORIES).is_file() {
        bail!(
            "{}: no {TRAJECTORIES}, though {LOCK} says the decisions were written (trajectories = \"{}\"); the folder was copied in part: copy that file too, or rerun the experiment into a new folder",
            dir.display(),
            t.resolved.trajectories
        );
    }
    Ok(())
}

/// What a pool-world cell did beyond the learner-level columns: configurations drawn (draws and
/// mutations), mutations, and units trained. Keyed by cell id.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoolCounts {
    /// Configurations drawn, chosen or mutated into.
    pub configs_drawn: u64,
    /// Of which by mutation.
    pub mutations: u64,
    /// Fidelity units trained.
    pub units_trained: u64,
}

/// The pool columns of `runs.parquet`, per cell; an error naming the file for learner-level
/// results, which have none.
pub fn read_pool_counts(dir: &Path) -> Result<std::collections::BTreeMap<u64, PoolCounts>> {
    let path = dir.join(RUNS);
    check_format(dir)?;
    let df = read_parquet(&path)?;
    let u = |name: &str| -> Result<Vec<u64>> {
        let c = df.column(name).map_err(|_| {
            anyhow::anyhow!(
                "{}: no column '{name}': these are not results of the pool world",
                path.display()
            )
        })?;
        Ok(c.as_materialized_series()
            .cast(&DataType::UInt64)?
            .u64()?
            .iter()
            .map(|v| v.unwrap_or(0))
            .collect())
    };
    let (cell, drawn, mutations, units) = (
        u("cell")?,
        u("configs_drawn")?,
        u("mutations")?,
        u("units_trained")?,
    );
    Ok(cell
        .into_iter()
        .zip(drawn.into_iter().zip(mutations.into_iter().zip(units)))
        .map(|(c, (d, (m, t)))| {
            (
                c,
                PoolCounts {
                    configs_drawn: d,
                    mutations: m,
                    units_trained: t,
                },
            )
        })
        .collect())
}

/// The `runs.parquet` of a results folder, after checking that it exists and that this build
/// reads its results format.
fn runs_path(dir: &Path) -> Result<std::path::PathBuf> {
    let path = dir.join(RUNS);
    if !path.is_file() {
        bail!(
            "{}: no runs.parquet here; give a results folder written by `banditbench run` (or use --scores FILE.csv)",
            dir.display()
        );
    }
    check_format(dir)?;
    Ok(path)
}

/// Read `runs.parquet` of a results folder, checking its results format.
pub fn read_results(dir: &Path) -> Result<Results> {
    let path = runs_path(dir)?;
    let df = read_parquet(&path)?;
    let column = |name: &str, want: &DataType| typed_column(&df, &path, name, want);
    let s = |name: &str| -> Result<Vec<String>> {
        Ok(column(name, &DataType::String)?
            .str()?
            .iter()
            .map(|v| v.unwrap_or("").to_string())
            .collect())
    };
    let f = |name: &str| -> Result<Vec<f64>> {
        Ok(column(name, &DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    };
    let u = |name: &str| -> Result<Vec<u64>> {
        Ok(column(name, &DataType::UInt64)?
            .u64()?
            .iter()
            .map(|v| v.unwrap_or(0))
            .collect())
    };
    let cell = u("cell")?;
    let run: Vec<i64> = column("run", &DataType::Int64)?
        .i64()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect();
    let rep = u("repetition")?;
    let (dataset, family, policy, params, pulls, direction, unit, best_learner) = (
        s("dataset")?,
        s("policy_family")?,
        s("policy")?,
        s("params")?,
        s("pulls")?,
        s("direction")?,
        s("budget_unit")?,
        s("best_learner")?,
    );
    let (budget, budget_abs, best, best_test) = (
        f("budget")?,
        f("budget_abs")?,
        f("best_score")?,
        f("best_test_score")?,
    );
    // Written since results format 2; older folders read as zeros.
    let (ex_pulls, ex_budget) = if df.column("exhausted_pulls").is_ok() {
        (u("exhausted_pulls")?, f("exhausted_budget")?)
    } else {
        (vec![0; df.height()], vec![0.0; df.height()])
    };
    // Written since results format 4.
    let workers = if df.column("workers").is_ok() {
        u("workers")?.into_iter().max().unwrap_or(1)
    } else {
        1
    };
    // Several objectives (results format 6): the score is the archive's hypervolume regret.
    let several = several_objectives(&df);
    let (best, best_test) = if several {
        (f("hv_regret")?, vec![f64::NAN; df.height()])
    } else {
        (best, best_test)
    };
    let mut runs = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let pulls: Vec<(String, f64)> = match serde_json::from_str::<serde_json::Value>(&pulls[i]) {
            Ok(serde_json::Value::Object(m)) => m
                .into_iter()
                .map(|(k, v)| (k, v.as_f64().unwrap_or(0.0)))
                .collect(),
            _ => Vec::new(),
        };
        runs.push(Run {
            cell: cell[i],
            dataset: dataset[i].clone(),
            run: run[i],
            budget: budget[i],
            budget_abs: budget_abs[i],
            family: family[i].clone(),
            policy: policy[i].clone(),
            params: params[i].clone(),
            repetition: rep[i] as u32,
            best_score: best[i],
            best_test_score: best_test[i],
            best_learner: best_learner[i].clone(),
            pulls,
            exhausted_pulls: ex_pulls[i],
            exhausted_budget: ex_budget[i],
        });
    }
    Ok(Results {
        runs,
        higher_is_better: !several && direction.first().is_none_or(|d| d == "maximize"),
        metric_note: if several {
            HV_REGRET_NOTE.to_string()
        } else {
            "best validation score found".to_string()
        },
        budget_unit: unit.first().cloned().unwrap_or_default(),
        workers,
    })
}

/// What results of several objectives are scored by, for reports.
pub(crate) const HV_REGRET_NOTE: &str = "hypervolume regret of the cell's archive (1 - HV / HV of the task's true front, normalised objectives; lower is better)";

/// Whether a `runs.parquet` or `trajectories.parquet` frame holds results of several
/// objectives: its `hv_regret` has a value (results format 6; null in every row of one
/// objective).
fn several_objectives(df: &DataFrame) -> bool {
    df.column("hv_regret")
        .is_ok_and(|c| !c.is_empty() && c.null_count() < c.len())
}

/// Column `name` of `df` (read from `runs.parquet` at `path`) cast to `want`, or an error naming
/// the file and the column.
fn typed_column(df: &DataFrame, path: &Path, name: &str, want: &DataType) -> Result<Series> {
    let c = df.column(name).map_err(|_| {
        anyhow::anyhow!(
            "{}: no column '{name}'; this is not a runs.parquet written by `banditbench run` (rerun the experiment to rewrite it)",
            path.display()
        )
    })?;
    c.as_materialized_series().cast(want).map_err(|_| {
        anyhow::anyhow!(
            "{}: column '{name}' has type {}, expected {want}; rerun the experiment to rewrite it",
            path.display(),
            c.dtype()
        )
    })
}

/// Rows of `runs.parquet` that a scan reads at a time by default.
pub(crate) const SCAN_ROWS: usize = 1 << 16;

/// A chunk of `runs.parquet`'s rows, as [`scan_runs_by`] hands it over: typed columns with the
/// checks and messages of [`read_results`].
pub(crate) struct RunsChunk<'a> {
    df: DataFrame,
    path: &'a Path,
}

impl RunsChunk<'_> {
    pub fn height(&self) -> usize {
        self.df.height()
    }

    /// Whether the file has the column (older results formats lack some).
    pub fn has(&self, name: &str) -> bool {
        self.df.column(name).is_ok()
    }

    /// Column `name` cast to `want`, as a typed array.
    fn typed<T: PolarsPhysicalType>(&self, name: &str, want: DataType) -> Result<ChunkedArray<T>> {
        Ok(typed_column(&self.df, self.path, name, &want)?
            .unpack::<T>()?
            .clone())
    }

    pub fn strs(&self, name: &str) -> Result<StringChunked> {
        self.typed::<StringType>(name, DataType::String)
    }

    pub fn f64s(&self, name: &str) -> Result<Float64Chunked> {
        self.typed::<Float64Type>(name, DataType::Float64)
    }

    pub fn u64s(&self, name: &str) -> Result<UInt64Chunked> {
        self.typed::<UInt64Type>(name, DataType::UInt64)
    }

    pub fn i64s(&self, name: &str) -> Result<Int64Chunked> {
        self.typed::<Int64Type>(name, DataType::Int64)
    }
}

/// Read the columns `names` of a results folder's `runs.parquet` `rows` rows at a time, in file
/// order, handing each chunk to `f`: memory holds one chunk, whatever the number of cells.
/// Columns the file lacks (older results formats) are left out of the chunks; a chunk says which
/// it has ([`RunsChunk::has`]).
pub(crate) fn scan_runs_by(
    dir: &Path,
    names: &[&str],
    rows: usize,
    mut f: impl FnMut(&RunsChunk) -> Result<()>,
) -> Result<()> {
    let path = runs_path(dir)?;
    let open =
        || std::fs::File::open(&path).with_context(|| format!("{}: cannot open", path.display()));
    let cannot = |e: PolarsError| {
        anyhow::Error::from(e).context(format!("{}: cannot read as parquet", path.display()))
    };
    let mut reader = ParquetReader::new(open()?);
    let total = reader.num_rows().map_err(cannot)?;
    let schema = reader.schema().map_err(cannot)?;
    let present: Vec<String> = names
        .iter()
        .filter(|n| schema.contains(n))
        .map(|n| n.to_string())
        .collect();
    let mut next = 0;
    while next < total {
        let df = ParquetReader::new(open()?)
            .with_columns(Some(present.clone()))
            .with_slice(Some((next, rows.max(1))))
            .finish()
            .map_err(cannot)?;
        next += df.height().max(1);
        f(&RunsChunk { df, path: &path })?;
    }
    Ok(())
}

/// Cells that pulled arms past their traces' ends: (such cells, all cells, mean budget share).
pub(crate) fn exhausted_summary(runs: &[Run]) -> (usize, usize, f64) {
    let hit: Vec<&Run> = runs
        .iter()
        .filter(|r| r.exhausted_budget > 0.0 || r.exhausted_pulls > 0)
        .collect();
    let share = hit
        .iter()
        .map(|r| r.exhausted_budget / r.budget_abs.max(f64::MIN_POSITIVE))
        .sum::<f64>()
        / hit.len().max(1) as f64;
    (hit.len(), runs.len(), share)
}

/// One row of trajectories.parquet, as much as the report and the reproductions need.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decision {
    pub cell: u64,
    pub step: u32,
    /// Budget used after the decision.
    pub time: f64,
    /// What the decision revealed (NaN if nothing).
    pub reward: f64,
    /// Best score so far (NaN before any).
    pub incumbent: f64,
}

/// Every stored decision of a results folder, in (cell, step) order.
pub(crate) fn read_decisions(dir: &Path) -> Result<Vec<Decision>> {
    let path = dir.join(TRAJECTORIES);
    let df = read_parquet(&path)?;
    let col = |name: &str| {
        df.column(name).map_err(|_| {
            anyhow::anyhow!(
                "{}: no column '{name}'; this is not a trajectories file of banditbench",
                path.display()
            )
        })
    };
    let bad = |name: &str, e: PolarsError| {
        anyhow::anyhow!(
            "{}: column '{name}' has the wrong type: {e}",
            path.display()
        )
    };
    let cell = col("cell")?.u64().map_err(|e| bad("cell", e))?;
    let step = col("step")?.u32().map_err(|e| bad("step", e))?;
    let time = col("time")?.f64().map_err(|e| bad("time", e))?;
    let reward = col("reward")?.f64().map_err(|e| bad("reward", e))?;
    // Several objectives: the anytime score is the archive's hypervolume regret.
    let several = several_objectives(&df);
    let inc_name = if several { "hv_regret" } else { "incumbent" };
    let inc = col(inc_name)?.f64().map_err(|e| bad(inc_name, e))?;
    Ok((0..df.height())
        .map(|i| Decision {
            cell: cell.get(i).unwrap_or(0),
            step: step.get(i).unwrap_or(0),
            time: time.get(i).unwrap_or(0.0),
            reward: reward.get(i).unwrap_or(f64::NAN),
            incumbent: inc.get(i).unwrap_or(f64::NAN),
        })
        .collect())
}

/// Per cell, the incumbent at `points` + 1 evenly spaced fractions of the cell's budget
/// (0, 1/points, ..., 1): the last decision with time <= t (NaN before the first incumbent).
pub(crate) fn anytime_curves(
    dir: &Path,
    runs: &[Run],
    points: usize,
) -> Result<BTreeMap<u64, Vec<f64>>> {
    let decisions = read_decisions(dir)?;
    let budget: BTreeMap<u64, f64> = runs.iter().map(|r| (r.cell, r.budget_abs)).collect();
    let mut out: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let (mut cur, mut curve, mut j) = (u64::MAX, Vec::new(), 0usize);
    let mut last = f64::NAN;
    let mut b = 1.0;
    let finish = |cur: u64,
                  curve: &mut Vec<f64>,
                  j: &mut usize,
                  last: f64,
                  out: &mut BTreeMap<u64, Vec<f64>>| {
        if cur != u64::MAX {
            while *j <= points {
                curve.push(last);
                *j += 1;
            }
            out.insert(cur, std::mem::take(curve));
        }
    };
    for d in &decisions {
        let c = d.cell;
        if c != cur {
            finish(cur, &mut curve, &mut j, last, &mut out);
            cur = c;
            j = 0;
            last = f64::NAN;
            b = budget.get(&c).copied().unwrap_or(1.0);
        }
        let t = d.time;
        // Grid points strictly before this decision's time take the incumbent so far.
        while j <= points && (j as f64 / points as f64) * b < t * (1.0 - 1e-12) {
            curve.push(last);
            j += 1;
        }
        last = d.incumbent;
    }
    finish(cur, &mut curve, &mut j, last, &mut out);
    Ok(out)
}

/// A float column in which NaN is null, built over `values` without copying them (a column of
/// `Option<f64>` costs a copy and a branch per row). The one copy: the engine's frames and the
/// importers write the results' nullable floats through it.
pub(crate) fn nan_as_null(name: &str, values: Vec<f64>) -> Column {
    // NaNs are rare: all bits set, then the few NaNs cleared.
    let valid = values.iter().any(|x| x.is_nan()).then(|| {
        let mut bits = polars_arrow::bitmap::MutableBitmap::from_len_set(values.len());
        for (i, x) in values.iter().enumerate() {
            if x.is_nan() {
                bits.set(i, false);
            }
        }
        polars_arrow::bitmap::Bitmap::from(bits)
    });
    let array = polars_arrow::array::PrimitiveArray::<f64>::from_vec(values).with_validity(valid);
    Float64Chunked::with_chunk(name.into(), array)
        .into_series()
        .into()
}
