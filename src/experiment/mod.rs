//! Experiments: parse a file, expand it into cells, run the cells in parallel with rayon, and
//! store the results so that a run can be killed and resumed without losing or changing anything.

mod cell;
pub mod parquet;
pub mod pool;
mod spec;
mod store;

pub use crate::replay::{Step, drive};
pub use cell::{Cell, CellResult, absolute, expand_cells, run_cell};
pub use spec::{BudgetUnit, Experiment, TrajectoryMode, WorldOptions, WorldSetup, load_experiment};
pub use store::{
    LOCK, RESULTS_FORMAT, RUNS, Store, TRAJECTORIES, program, read_parquet, runs_frame,
    trajectories_frame,
};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::Column;
use rayon::prelude::*;

use crate::trace::{TraceSet, load_trace_set};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Results folder; default `results/<name>`.
    pub out: Option<PathBuf>,
    /// Worker threads; default: all cores.
    pub threads: Option<usize>,
    /// Cells per published part; default: whatever finishes in about a second.
    pub batch_size: Option<usize>,
    /// Run only this shard's cells (those whose index is `index` modulo `count`).
    pub shard: Option<Shard>,
    /// Delete the folder's finished results (runs, trajectories, parts, lock file) first.
    pub fresh: bool,
}

/// A deterministic share of an experiment's cells: every cell whose index is `index` modulo
/// `count` (round robin, so every shard gets a similar mix of tasks, budgets and policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parse "I/N" with 0 <= I < N.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || {
            anyhow::anyhow!(
                "--shard '{s}': expected I/N with 0 <= I < N, e.g. 0/4 (shards are numbered from 0, like SLURM_ARRAY_TASK_ID)"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    pub fn contains(&self, cell: u64) -> bool {
        cell % u64::from(self.count) == u64::from(self.index)
    }

    /// How many of `total` cells (indices 0..total) this shard holds.
    pub fn cells_of(&self, total: usize) -> usize {
        let (i, n) = (self.index as usize, self.count as usize);
        if total > i {
            (total - i).div_ceil(n)
        } else {
            0
        }
    }

    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// Where a run writes by default: `results/<name>`, or `results/<name>-shards/<i>-of-<n>`.
pub fn default_out(exp: &Experiment, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => PathBuf::from("results").join(&exp.name),
        Some(s) => PathBuf::from("results")
            .join(format!("{}-shards", exp.name))
            .join(format!("{}-of-{}", s.index, s.count)),
    }
}

#[derive(Clone, Debug)]
pub struct RunSummary {
    pub out: PathBuf,
    pub total_cells: usize,
    pub already_done: usize,
    pub ran: usize,
    pub seconds: f64,
}

/// Load an experiment and its trace set (for the synthetic world, a trace set with no
/// evaluations that names the arms).
pub fn prepare(path: &Path) -> Result<(Experiment, TraceSet)> {
    let exp = load_experiment(path)?;
    let ts = match &exp.traces_dir {
        Some(dir) => load_trace_set(dir, &exp.load).with_context(|| {
            format!(
                "{}: loading the trace set named by 'traces'",
                exp.file.display()
            )
        })?,
        None => synthetic_trace_set(&exp),
    };
    for (i, p) in exp.policies.iter().enumerate() {
        p.check_datasets(
            ts.tasks.iter().map(|t| t.dataset.as_str()),
            ts.datasets.iter().map(String::as_str),
        )
        .with_context(|| format!("{}: [[policies]] policy {}", exp.file.display(), i + 1))?;
    }
    Ok((exp, ts))
}

/// The stand-in trace set of a synthetic experiment: one task, the arms by name, no data.
pub fn synthetic_trace_set(exp: &Experiment) -> TraceSet {
    use crate::trace::{Arm, Direction, Manifest, Source, Task};
    let learners: Vec<String> = exp.world.arms().iter().map(|(n, _)| n.clone()).collect();
    TraceSet {
        dir: PathBuf::from("(synthetic)"),
        evaluations_file: PathBuf::from("(synthetic)"),
        manifest: Manifest {
            name: "synthetic".into(),
            description: exp.world.describe(),
            metric: "feedback".into(),
            direction: Direction::Maximize,
            source: Source::Synthetic,
            provenance: toml::Table::new(),
        },
        datasets: vec!["synthetic".into()],
        tasks: vec![Task {
            dataset: "synthetic".into(),
            run: 0,
            arms: learners
                .iter()
                .map(|l| Arm {
                    learner: l.clone(),
                    ..Arm::default()
                })
                .collect(),
        }],
        learners,
        dropped: Vec::new(),
        extra_columns: Vec::new(),
        content_hash: format!(
            "{:016x}",
            crate::rng::fnv1a64(exp.world.describe().as_bytes())
        ),
        notes: Vec::new(),
    }
}

/// What a run replays, for the lock file and the fingerprint: a trace set or a pool.
pub struct DataInfo {
    pub name: String,
    pub dir: PathBuf,
    pub hash: String,
    pub source: String,
    pub metric: String,
    pub tasks: Vec<String>,
    pub learners: Vec<String>,
}

impl DataInfo {
    pub fn of_traces(ts: &TraceSet) -> DataInfo {
        DataInfo {
            name: ts.manifest.name.clone(),
            dir: ts.dir.clone(),
            hash: ts.content_hash.clone(),
            source: ts.manifest.source.as_str().to_string(),
            metric: ts.manifest.metric.clone(),
            tasks: ts.tasks.iter().map(|t| t.name()).collect(),
            learners: ts.learners.clone(),
        }
    }

    pub fn of_pool(data: &pool::PoolData) -> DataInfo {
        DataInfo {
            name: data.pool.manifest.name.clone(),
            dir: data.pool.dir.clone(),
            hash: data.pool.content_hash.clone(),
            source: "recorded".into(),
            metric: data.pool.manifest.metric.clone(),
            tasks: data.tasks.iter().map(|t| data.task_name(t)).collect(),
            learners: data.learner_names(),
        }
    }
}

fn lock_text(
    exp: &Experiment,
    info: &DataInfo,
    n_cells: usize,
    fingerprint: &str,
    shard: Option<Shard>,
) -> String {
    let mut resolved = toml::Table::new();
    resolved.insert("results_format".into(), store::RESULTS_FORMAT.into());
    resolved.insert("fingerprint".into(), fingerprint.into());
    resolved.insert("program".into(), store::program().into());
    resolved.insert("git_commit".into(), store::build_commit().into());
    resolved.insert(
        "experiment_file".into(),
        exp.file.display().to_string().into(),
    );
    resolved.insert("trace_set".into(), info.name.clone().into());
    resolved.insert("trace_dir".into(), info.dir.display().to_string().into());
    resolved.insert("trace_hash".into(), info.hash.clone().into());
    resolved.insert("trace_source".into(), info.source.clone().into());
    resolved.insert("world".into(), exp.world.describe().into());
    resolved.insert(
        "tasks".into(),
        toml::Value::Array(info.tasks.iter().map(|t| t.clone().into()).collect()),
    );
    resolved.insert(
        "learners".into(),
        toml::Value::Array(info.learners.iter().map(|l| l.clone().into()).collect()),
    );
    resolved.insert(
        "policies".into(),
        toml::Value::Array(exp.policies.iter().map(|p| p.id().into()).collect()),
    );
    resolved.insert("repetitions".into(), i64::from(exp.repetitions).into());
    resolved.insert("cells".into(), (n_cells as i64).into());
    resolved.insert("trajectories".into(), exp.trajectories.as_str().into());
    let external = external_files(exp);
    if !external.is_empty() {
        resolved.insert("external_files".into(), toml::Value::Table(external));
    }
    if let Some(sh) = shard {
        resolved.insert("shard".into(), sh.label().into());
        resolved.insert("shard_cells".into(), (sh.cells_of(n_cells) as i64).into());
    }
    let original: toml::Table = exp.source.parse().unwrap_or_default();
    let mut top = toml::Table::new();
    top.insert("resolved".into(), toml::Value::Table(resolved));
    top.insert("experiment".into(), toml::Value::Table(original));
    toml::to_string(&top).unwrap_or_default()
}

/// Per external policy (by name), its files and their content hashes (the lock file's
/// `[resolved.external_files]`).
fn external_files(exp: &Experiment) -> toml::Table {
    let mut t = toml::Table::new();
    for p in &exp.policies {
        if let Some(e) = &p.external {
            let files: toml::Table = e
                .files
                .iter()
                .map(|(f, h)| (f.clone(), toml::Value::String(h.clone())))
                .collect();
            t.insert(e.name.clone(), toml::Value::Table(files));
        }
    }
    t
}

/// What changed in the external policies' files since a lock file was written, in words.
fn external_changes(old: &toml::Table, exp: &Experiment) -> Vec<String> {
    let Some(old) = old.get("external_files").and_then(|v| v.as_table()) else {
        return Vec::new();
    };
    let now = external_files(exp);
    let mut out = Vec::new();
    for (name, files) in &now {
        let (Some(files), Some(before)) =
            (files.as_table(), old.get(name).and_then(|v| v.as_table()))
        else {
            continue;
        };
        for (f, h) in files {
            match before.get(f).and_then(|v| v.as_str()) {
                Some(b) if Some(b) != h.as_str() => out.push(format!(
                    "external policy '{name}': {f} changed since these results were written (content hash {b}, now {})",
                    h.as_str().unwrap_or("")
                )),
                None => out.push(format!(
                    "external policy '{name}': {f} is new among its files"
                )),
                _ => {}
            }
        }
        for f in before.keys() {
            if !files.contains_key(f) {
                out.push(format!(
                    "external policy '{name}': {f} is no longer among its files"
                ));
            }
        }
    }
    out
}

pub use crate::results::read_lock_file;

/// The `[resolved]` table of a lock file, if the file exists.
fn read_lock(lock: &Path) -> Result<Option<toml::Table>> {
    Ok(read_lock_file(lock)?.map(|t| {
        t.get("resolved")
            .and_then(|r| r.as_table())
            .cloned()
            .unwrap_or_default()
    }))
}

fn lock_str<'a>(resolved: &'a toml::Table, key: &str) -> Option<&'a str> {
    resolved.get(key).and_then(|v| v.as_str())
}

/// The results format a lock file declares (1 before the key existed).
fn lock_format(resolved: &toml::Table) -> i64 {
    resolved
        .get("results_format")
        .and_then(|v| v.as_integer())
        .unwrap_or(1)
}

/// Check that a results folder's lock file agrees with the run about to write into it.
fn check_lock(
    out: &Path,
    resolved: &toml::Table,
    exp: &Experiment,
    fingerprint: &str,
    shard: Option<Shard>,
) -> Result<()> {
    let format = lock_format(resolved);
    if format != store::RESULTS_FORMAT {
        bail!(
            "{}: these results are in results format {format}, this build writes format {}; finished results are kept: choose another --out, or delete the folder to start again",
            out.display(),
            store::RESULTS_FORMAT
        );
    }
    let old = lock_str(resolved, "fingerprint").unwrap_or("(none)");
    if old != fingerprint {
        let changes = external_changes(resolved, exp);
        if !changes.is_empty() {
            bail!(
                "{}: {}. The finished cells were made by the old code and are not continued with the new: rerun with --fresh to delete them and start again, or give this run another --out (the old results stay)",
                out.display(),
                changes.join("; ")
            );
        }
        bail!(
            "{}: these results come from a different experiment or trace set (fingerprint {old}, now {fingerprint}); finished results are kept: choose another --out, or rerun with --fresh to delete them and start again",
            out.display()
        );
    }
    let old_shard = lock_str(resolved, "shard");
    let new_shard = shard.map(|s| s.label());
    if old_shard != new_shard.as_deref() {
        bail!(
            "{}: these results are {}, this run is {}; finished results are kept: choose another --out",
            out.display(),
            old_shard.map_or("a whole experiment".to_string(), |s| format!("shard {s}")),
            new_shard.map_or("the whole experiment".to_string(), |s| format!("shard {s}"))
        );
    }
    Ok(())
}

/// `run_experiment` with a one-line description of the grid on stderr, a progress bar (not
/// drawn when `quiet` or when stderr is not a terminal) and a closing line with the timing.
pub fn run_with_progress(
    exp: &Experiment,
    ts: &TraceSet,
    opts: &RunOptions,
    quiet: bool,
) -> Result<RunSummary> {
    check_work(exp, ts)?;
    let info = DataInfo::of_traces(ts);
    with_progress(exp, &info, ts.tasks.len(), opts.shard, quiet, &|progress| {
        run_experiment(exp, ts, opts, progress)
    })
}

/// `run_pool_experiment` with the same description, progress bar and closing line.
pub fn run_pool_with_progress(
    exp: &Experiment,
    data: &pool::PoolData,
    opts: &RunOptions,
    quiet: bool,
) -> Result<RunSummary> {
    let info = DataInfo::of_pool(data);
    with_progress(
        exp,
        &info,
        data.tasks.len(),
        opts.shard,
        quiet,
        &|progress| run_pool_experiment(exp, data, opts, progress),
    )
}

type Runner<'a> = dyn Fn(&(dyn Fn(usize) + Sync)) -> Result<RunSummary> + 'a;

fn with_progress(
    exp: &Experiment,
    info: &DataInfo,
    n_tasks: usize,
    shard: Option<Shard>,
    quiet: bool,
    run: &Runner<'_>,
) -> Result<RunSummary> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let all_cells =
        n_tasks * exp.world.budgets.len() * exp.policies.len() * exp.repetitions as usize;
    let n_cells = shard.map_or(all_cells, |s| s.cells_of(all_cells));
    eprintln!(
        "{}: {} tasks x {} budgets x {} policies x {} repetitions = {} cells{} on {} ({}, {}), {}",
        exp.name,
        n_tasks,
        exp.world.budgets.len(),
        exp.policies.len(),
        exp.repetitions,
        all_cells,
        shard.map_or(String::new(), |s| format!(
            ", of which shard {} runs {n_cells}",
            s.label()
        )),
        info.name,
        info.source,
        info.metric,
        exp.world.describe()
    );
    let bar = ProgressBar::new(n_cells as u64);
    if quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} cells  {per_sec}  ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let summary = run(&|n| bar.inc(n as u64));
    bar.finish_and_clear();
    let summary = summary?;
    eprintln!(
        "ran {} cells in {:.2} s ({:.0} cells/s); {} were already finished; results in {}",
        summary.ran,
        summary.seconds,
        summary.ran as f64 / summary.seconds.max(1e-9),
        summary.already_done,
        summary.out.display()
    );
    Ok(summary)
}

/// The most cells an experiment may expand into (the cell list and the results of one part live
/// in memory).
pub const MAX_CELLS: u128 = 20_000_000;
/// The most decisions one cell may take (its trajectory is held in memory until published).
pub const MAX_DECISIONS_PER_CELL: u128 = 10_000_000;
/// The most decisions an experiment may take (at about 10^7 decisions a second, 10^10 is a
/// quarter of an hour of replay per core, and every decision is a trajectory row).
pub const MAX_DECISIONS: u128 = 10_000_000_000;

/// The work an experiment asks for: (cells, the largest cell's decisions, all decisions).
pub fn estimate_work(exp: &Experiment, ts: &TraceSet) -> (u128, u128, u128) {
    let per_task = exp.policies.len() as u128 * u128::from(exp.repetitions);
    let cells = ts.tasks.len() as u128 * exp.world.budgets.len() as u128 * per_task;
    let (mut largest, mut total) = (0u128, 0u128);
    for task in &ts.tasks {
        for &b in &exp.world.budgets {
            let (budget_abs, slice_abs) = absolute(&exp.world, b, task);
            let steps = if exp.world.kind() == crate::replay::WorldKind::TimeSliced {
                (budget_abs / slice_abs).ceil()
            } else {
                budget_abs
            };
            let steps = if steps.is_finite() && steps < 1e30 {
                steps as u128
            } else {
                u128::MAX / 4
            };
            largest = largest.max(steps);
            total = total.saturating_add(steps.saturating_mul(per_task));
        }
    }
    (cells, largest, total)
}

/// Refuse work no machine can do, before building anything, with the estimate and the key to
/// change.
pub fn check_work(exp: &Experiment, ts: &TraceSet) -> Result<()> {
    let (cells, largest, total) = estimate_work(exp, ts);
    let at = exp.file.display();
    if cells > MAX_CELLS {
        bail!(
            "{at}: {} tasks x {} budgets x {} policies x {} repetitions = {cells} cells, more than the {MAX_CELLS} one run can hold; lower 'repetitions', the budgets or the policy grid, or filter [tasks]",
            ts.tasks.len(),
            exp.world.budgets.len(),
            exp.policies.len(),
            exp.repetitions
        );
    }
    if largest > MAX_DECISIONS_PER_CELL {
        let key = if exp.world.kind() == crate::replay::WorldKind::TimeSliced {
            "'world.slice' (raise it) or 'world.budgets' (lower them)"
        } else {
            "'world.budgets' (lower them)"
        };
        bail!(
            "{at}: one cell would take {largest} decisions (budget / slice), more than the {MAX_DECISIONS_PER_CELL} a cell may take; change {key}"
        );
    }
    if total > MAX_DECISIONS {
        bail!(
            "{at}: the experiment would take about {total} decisions (about {:.1} CPU hours at 10^7 decisions/s, each a trajectory row), more than the {MAX_DECISIONS} one run may take; lower 'repetitions' or the budgets, or filter [tasks]",
            total as f64 / 1e7 / 3600.0
        );
    }
    Ok(())
}

/// Budgets the traces cannot fill, found before running (each a warning with counts): a slice
/// longer than its budget; a time budget longer than some arm's trace (a policy can spend the rest
/// on an arm that reveals nothing); a pull budget larger than some arm's pool.
pub fn budget_warnings(exp: &Experiment, ts: &TraceSet) -> Vec<String> {
    use crate::replay::WorldKind;
    let mut out = Vec::new();
    if exp.world.kind() == WorldKind::Synthetic {
        return out;
    }
    for &b in &exp.world.budgets {
        let (mut past_trace, mut arms_short, mut arms) = (0, 0usize, 0usize);
        for task in &ts.tasks {
            let (budget_abs, _) = absolute(&exp.world, b, task);
            match exp.world.kind() {
                WorldKind::TimeSliced => {
                    let shorter = task.arms.iter().filter(|a| a.span_s() < budget_abs).count();
                    past_trace += usize::from(shorter > 0);
                    arms_short += shorter;
                }
                _ => {
                    let shorter = task
                        .arms
                        .iter()
                        .filter(|a| (a.len() as f64) < budget_abs)
                        .count();
                    past_trace += usize::from(shorter > 0);
                    arms_short += shorter;
                }
            }
            arms += task.arms.len();
        }
        let unit = exp.world.unit.as_str();
        if past_trace > 0 {
            out.push(format!(
                "budget {b} {unit}: {arms_short} of {arms} arms (on {past_trace} of {} tasks) have traces shorter than the budget; pulls past a trace's end reveal nothing and are counted per cell in runs.parquet (exhausted_pulls, exhausted_budget)",
                ts.tasks.len()
            ));
        }
    }
    out
}

/// A time-sliced budget shorter than its slice is refused: its cells would make one partial pull
/// that no policy decides, and would still be ranked.
pub fn check_budgets(exp: &Experiment, ts: &TraceSet) -> Result<()> {
    use crate::replay::WorldKind;
    if exp.world.kind() != WorldKind::TimeSliced {
        return Ok(());
    }
    for &b in &exp.world.budgets {
        let short = ts
            .tasks
            .iter()
            .filter(|task| {
                let (budget_abs, slice_abs) = absolute(&exp.world, b, task);
                slice_abs > budget_abs
            })
            .count();
        if short > 0 {
            bail!(
                "{}: budget {b} {}: the slice is longer than the budget on {short} of {} tasks, so a cell would be one partial pull that no policy decides; give a larger budget or a smaller 'slice'",
                exp.file.display(),
                exp.world.unit.as_str(),
                ts.tasks.len()
            );
        }
    }
    Ok(())
}

/// Run every unfinished cell of an experiment. `progress` is called with the number of cells
/// finished since the last call (from worker threads).
pub fn run_experiment(
    exp: &Experiment,
    ts: &TraceSet,
    opts: &RunOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<RunSummary> {
    check_work(exp, ts)?;
    check_budgets(exp, ts)?;
    let cells = expand_cells(exp, ts);
    run_cells(
        exp,
        &DataInfo::of_traces(ts),
        &cells,
        opts,
        progress,
        &|c| run_cell(c, exp, ts, exp.trajectories != TrajectoryMode::None),
        &|results| {
            Ok((
                runs_frame(results, &cells, exp, ts)?,
                trajectories_frame(results)?,
            ))
        },
        // The trajectories' arm column holds learner indices; the store writes the names.
        &[("arm".to_string(), ts.learners.clone().into())],
    )
}

/// Refuse pool work no machine can do, before running, with the estimate and the key to change.
pub fn check_pool_work(exp: &Experiment, data: &pool::PoolData) -> Result<()> {
    let per_task = exp.policies.len() as u128 * u128::from(exp.repetitions);
    let cells = data.tasks.len() as u128 * exp.world.budgets.len() as u128 * per_task;
    let at = exp.file.display();
    if cells > MAX_CELLS {
        bail!(
            "{at}: {} tasks x {} budgets x {} policies x {} repetitions = {cells} cells, more than the {MAX_CELLS} one run can hold; lower 'repetitions', the budgets or the policy grid, or filter [tasks]",
            data.tasks.len(),
            exp.world.budgets.len(),
            exp.policies.len(),
            exp.repetitions
        );
    }
    let opts = pool::pool_options(exp)?;
    let units = data.pool.manifest.units;
    let all_units = data.pool.configs.len() as u128 * u128::from(units);
    let mut total = 0u128;
    for &b in &exp.world.budgets {
        let (cfg, abs) = opts.world_config(exp.world.unit, b, units);
        // A unit budget bounds the decisions; a budget in seconds ends at the latest when every
        // unit of the pool is trained (or sooner).
        let steps = match cfg.budget_unit {
            crate::replay::pool::PoolBudget::Units => (abs.ceil() as u128).min(u128::MAX / 4),
            crate::replay::pool::PoolBudget::Seconds => all_units,
        };
        if steps > MAX_DECISIONS_PER_CELL {
            bail!(
                "{at}: one cell would take up to {steps} decisions at budget {b} {}, more than the {MAX_DECISIONS_PER_CELL} a cell may take; lower 'world.budgets'",
                exp.world.unit.as_str()
            );
        }
        total = total.saturating_add(steps * per_task * data.tasks.len() as u128);
    }
    if total > MAX_DECISIONS {
        bail!(
            "{at}: the experiment would take up to {total} decisions, more than the {MAX_DECISIONS} one run may take; lower 'repetitions' or the budgets, or filter [tasks]"
        );
    }
    Ok(())
}

/// Run every unfinished cell of a pool experiment (see `run_experiment`).
pub fn run_pool_experiment(
    exp: &Experiment,
    data: &pool::PoolData,
    opts: &RunOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<RunSummary> {
    check_pool_work(exp, data)?;
    let cells = pool::expand_pool_cells(exp, data);
    run_cells(
        exp,
        &DataInfo::of_pool(data),
        &cells,
        opts,
        progress,
        &|c| pool::run_pool_cell(c, exp, data, exp.trajectories != TrajectoryMode::None),
        &|results| {
            Ok((
                pool::pool_runs_frame(results, &cells, exp, data)?,
                pool::pool_trajectories_frame(results, data)?,
            ))
        },
        &[],
    )
}

/// With `--batch-size`, parts are published at most this often (seconds), after the first.
const MIN_PART_S: f64 = 0.1;

type Frames<'a, R> =
    dyn Fn(&[R]) -> Result<(polars::prelude::DataFrame, polars::prelude::DataFrame)> + 'a;

/// The store's loop, for any world: check the lock, skip finished cells, run the rest in chunks
/// on a rayon pool, publish a part about once a second, and merge the parts at the end.
#[allow(clippy::too_many_arguments)]
fn run_cells<R: Send>(
    exp: &Experiment,
    info: &DataInfo,
    cells: &[Cell],
    opts: &RunOptions,
    progress: &(dyn Fn(usize) + Sync),
    run: &(dyn Fn(&Cell) -> Result<R> + Sync),
    frames: &Frames<'_, R>,
    coded: &[(String, store::Names)],
) -> Result<RunSummary> {
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| default_out(exp, opts.shard));
    let fingerprint = exp.fingerprint(&info.hash);
    // The folder lock first: no other run reads or writes the lock file meanwhile.
    let store = Store::open(&out)?;
    if opts.fresh {
        store.clear()?;
    }
    let lock = out.join(LOCK);
    match read_lock(&lock)? {
        Some(resolved) => {
            check_lock(&out, &resolved, exp, &fingerprint, opts.shard)?;
            // The lock file is never rewritten: it names the build that began the results; each
            // cell's build is in runs.parquet's `program` column.
            let began = lock_str(&resolved, "program").unwrap_or("an unknown build");
            let now = store::program();
            if began != now {
                eprintln!(
                    "note: these results were begun by {began} and are continued by {now}; runs.parquet's column 'program' names the build of each cell"
                );
            }
        }
        None => store::write_text_atomic(
            &lock,
            &lock_text(exp, info, cells.len(), &fingerprint, opts.shard),
        )?,
    }
    let done = store.finished()?;
    let mine: Vec<&Cell> = cells
        .iter()
        .filter(|c| opts.shard.is_none_or(|s| s.contains(c.index)))
        .collect();
    let todo: Vec<&Cell> = mine
        .iter()
        .copied()
        .filter(|c| !done.contains(&c.index))
        .collect();
    let threads = opts.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the worker threads")?;
    let program = store::program();
    let frames_of =
        |results: &[R]| -> Result<(polars::prelude::DataFrame, polars::prelude::DataFrame)> {
            let (mut runs, traj) = frames(results)?;
            let traj = store::keep_decisions(traj, exp.trajectories)?;
            let h = runs.height();
            runs.with_column(Column::new("program".into(), vec![program.as_str(); h]))?;
            Ok((runs, traj))
        };
    let t0 = std::time::Instant::now();
    // Cells are run in chunks sized to take about a tenth of a second; each chunk's results are
    // encoded into the current segment at once (nothing but a row group is held in memory), and
    // the segment is published as a part about once a second, so that a kill loses about a
    // second of work whatever the cells cost. With --batch-size, a chunk of that many cells is
    // published as a part, the first at once and later ones at most every MIN_PART_S seconds
    // (a floor: a part per cell of a fast experiment would cost more than the cells).
    let mut chunk = opts.batch_size.unwrap_or(threads).max(1);
    let new_segment = || store.segment_coded(coded.to_vec());
    let mut segment = new_segment();
    let mut last_publish: Option<std::time::Instant> = match opts.batch_size {
        Some(_) => None,
        None => Some(std::time::Instant::now()),
    };
    let mut rest: &[&Cell] = &todo;
    let mut failed: Vec<u64> = Vec::new();
    let mut ran_ok = 0usize;
    while !rest.is_empty() {
        let (now, tail) = rest.split_at(chunk.min(rest.len()));
        rest = tail;
        let tb = std::time::Instant::now();
        let outcomes: Vec<Result<R>> = pool.install(|| {
            now.par_iter()
                .map(|c| {
                    let r = run(c);
                    progress(1);
                    r
                })
                .collect()
        });
        let mut stop = None;
        let mut finished: Vec<R> = Vec::with_capacity(outcomes.len());
        for (c, r) in now.iter().zip(outcomes) {
            match r {
                Ok(r) => finished.push(r),
                // An external policy with on_failure = "restart": report, go on, list at the end.
                Err(e) if keeps_going(&e) => {
                    eprintln!("error: {e:#}");
                    failed.push(c.index);
                }
                Err(e) => {
                    stop.get_or_insert(e);
                }
            }
        }
        ran_ok += finished.len();
        // Even with no cell finished: the files then still get their columns.
        let (runs, traj) = frames_of(&finished)?;
        drop(finished);
        segment.push(runs, traj)?;
        if let Some(e) = stop {
            // Every cell that finished is kept: published now, resumed past on the next run.
            store.publish_part(segment)?;
            store.merge()?;
            return Err(e.context(format!(
                "the run stopped; {} finished cells of this run are kept in {} (running the same command again resumes)",
                mine.len() - todo.len() + ran_ok,
                out.display()
            )));
        }
        let floor = if opts.batch_size.is_some() {
            MIN_PART_S
        } else {
            1.0
        };
        let due = last_publish.is_none_or(|t| t.elapsed().as_secs_f64() >= floor);
        // The last segment may become the final files (see `Store::finish`).
        if due && !rest.is_empty() {
            store.publish_part(std::mem::replace(&mut segment, new_segment()))?;
            last_publish = Some(std::time::Instant::now());
        }
        if opts.batch_size.is_none() {
            let secs = tb.elapsed().as_secs_f64().max(1e-4);
            let aim = (chunk as f64 * 0.1 / secs) as usize;
            chunk = aim.clamp(threads, (chunk * 4).max(threads)).min(100_000);
        }
    }
    store.finish(segment)?;
    if !failed.is_empty() {
        let shown: Vec<String> = failed.iter().take(20).map(u64::to_string).collect();
        bail!(
            "{} cell{} failed and {} unfinished (cell{} {}{}); the other {} cells are kept in {}; running the same command again retries the unfinished ones",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            if failed.len() == 1 { "is" } else { "are" },
            if failed.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if failed.len() > 20 { ", …" } else { "" },
            mine.len() - failed.len(),
            out.display()
        );
    }
    Ok(RunSummary {
        out,
        total_cells: mine.len(),
        already_done: mine.len() - todo.len(),
        ran: todo.len(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// A cell error after which the run goes on (an external policy with `on_failure = "restart"`).
fn keeps_going(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<crate::policy::external::PolicyProcessError>()
            .is_some_and(|p| p.keep_going)
    })
}

/// What `merge` did.
pub struct MergeSummary {
    pub out: PathBuf,
    pub cells: usize,
    pub folders: usize,
}

/// Combine finished results folders of one experiment (usually the shards of `run --shard`)
/// into `out`: exactly what one unsharded run writes. Refuses folders from another experiment
/// or trace set, unfinished folders, duplicated cells and missing cells (listed).
pub fn merge_results(dirs: &[PathBuf], out: &Path) -> Result<MergeSummary> {
    if dirs.is_empty() {
        bail!("merge: give the results folders to merge (e.g. results/NAME-shards/*)");
    }
    let mut first: Option<(PathBuf, toml::Table)> = None;
    let mut shards: Vec<Option<Shard>> = Vec::new();
    for d in dirs {
        let lock = d.join(LOCK);
        let resolved = read_lock(&lock)?.ok_or_else(|| {
            anyhow::anyhow!(
                "{}: not a results folder of banditbench run (no {LOCK})",
                d.display()
            )
        })?;
        let parts = d.join("parts");
        let unfinished = std::fs::read_dir(&parts).is_ok_and(|mut e| {
            e.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("runs-")))
        });
        if unfinished || !d.join(RUNS).is_file() || !d.join(TRAJECTORIES).is_file() {
            bail!(
                "{}: this run has not finished (no merged results, or parts waiting under parts/); rerun its `banditbench run ... --out {}` to finish it, then merge",
                d.display(),
                d.display()
            );
        }
        let format = lock_format(&resolved);
        if format != store::RESULTS_FORMAT {
            bail!(
                "{}: results format {format}, this build merges format {}; rerun it with this build",
                d.display(),
                store::RESULTS_FORMAT
            );
        }
        shards.push(
            lock_str(&resolved, "shard")
                .map(Shard::parse)
                .transpose()
                .with_context(|| format!("{}: key 'resolved.shard'", lock.display()))?,
        );
        match &first {
            None => first = Some((d.clone(), resolved)),
            Some((fd, fr)) => {
                let (a, b) = (
                    lock_str(fr, "fingerprint").unwrap_or(""),
                    lock_str(&resolved, "fingerprint").unwrap_or(""),
                );
                if a != b {
                    bail!(
                        "{}: comes from another experiment or trace set than {} (fingerprint {b}, not {a}); merge only the shards of one experiment",
                        d.display(),
                        fd.display()
                    );
                }
            }
        }
    }
    let (_, resolved) = first.expect("at least one folder");
    let total = resolved
        .get("cells")
        .and_then(|v| v.as_integer())
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: key 'resolved.cells' missing",
                dirs[0].join(LOCK).display()
            )
        })?;
    // Every cell exactly once.
    let mut owner: Vec<u32> = vec![u32::MAX; total];
    for (k, d) in dirs.iter().enumerate() {
        for c in store::read_cells(&d.join(RUNS))? {
            let Some(slot) = owner.get_mut(c as usize) else {
                bail!(
                    "{}: cell {c} is outside the experiment's {total} cells",
                    d.join(RUNS).display()
                );
            };
            if *slot != u32::MAX {
                bail!(
                    "cell {c} is in both {} and {}: a shard was given twice, or two folders overlap; merge each shard once",
                    dirs[*slot as usize].display(),
                    d.display()
                );
            }
            *slot = k as u32;
        }
    }
    let missing: Vec<usize> = (0..total).filter(|&c| owner[c] == u32::MAX).collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(20).map(|c| c.to_string()).collect();
        let mut absent = String::new();
        if let Some(Some(s0)) = shards.first()
            && shards
                .iter()
                .all(|s| s.is_some_and(|s| s.count == s0.count))
        {
            let have: BTreeSet<u32> = shards.iter().flatten().map(|s| s.index).collect();
            let lack: Vec<String> = (0..s0.count)
                .filter(|i| !have.contains(i))
                .map(|i| format!("{i}/{}", s0.count))
                .collect();
            if !lack.is_empty() {
                absent = format!("; shards not given: {}", lack.join(", "));
            }
        }
        bail!(
            "{} of {total} cells are missing: {}{}{absent}",
            missing.len(),
            shown.join(", "),
            if missing.len() > 20 { ", ..." } else { "" }
        );
    }
    drop(owner);
    if out.join(RUNS).is_file() || out.join(LOCK).is_file() {
        bail!(
            "{}: already holds results; merge into a new folder",
            out.display()
        );
    }
    let store = Store::open(out)?;
    store.merge_from(dirs)?;
    let mut resolved = resolved;
    resolved.remove("shard");
    resolved.remove("shard_cells");
    let mut top = read_lock_file(&dirs[0].join(LOCK))?.unwrap_or_default();
    top.insert("resolved".into(), toml::Value::Table(resolved));
    store::write_text_atomic(&out.join(LOCK), &toml::to_string(&top)?)?;
    Ok(MergeSummary {
        out: out.to_path_buf(),
        cells: total,
        folders: dirs.len(),
    })
}
