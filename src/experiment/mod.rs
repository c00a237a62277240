//! Experiments: parse a file, expand it into cells, run the cells in parallel with rayon, and
//! store the results so that a run can be killed and resumed without losing or changing anything.

mod cell;
pub mod pool;
mod spec;
mod store;

pub use crate::replay::{Step, drive};
pub use cell::{Cell, CellResult, absolute, expand_cells, run_cell};
pub use spec::{BudgetUnit, Experiment, WorldOptions, WorldSetup, load_experiment};
pub use store::{LOCK, RUNS, Store, TRAJECTORIES, read_parquet, runs_frame, trajectories_frame};

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rayon::prelude::*;

use crate::analysis::{MeanRank, mean_ranks};
use crate::trace::{TraceSet, load_trace_set};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Results folder; default `results/<name>`.
    pub out: Option<PathBuf>,
    /// Worker threads; default: all cores.
    pub threads: Option<usize>,
    /// Cells per published part; default: a few hundred parts per experiment.
    pub batch_size: Option<usize>,
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
        p.check_datasets(ts.tasks.iter().map(|t| t.dataset.as_str()))
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

fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string())
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

fn lock_text(exp: &Experiment, info: &DataInfo, n_cells: usize, fingerprint: &str) -> String {
    let mut resolved = toml::Table::new();
    resolved.insert("fingerprint".into(), fingerprint.into());
    resolved.insert(
        "program".into(),
        format!("banditbench {}", env!("CARGO_PKG_VERSION")).into(),
    );
    resolved.insert("git_commit".into(), git_commit().into());
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
    let original: toml::Table = exp.source.parse().unwrap_or_default();
    let mut top = toml::Table::new();
    top.insert("resolved".into(), toml::Value::Table(resolved));
    top.insert("experiment".into(), toml::Value::Table(original));
    toml::to_string(&top).unwrap_or_default()
}

fn fingerprint_in(lock: &Path) -> Result<Option<String>> {
    if !lock.is_file() {
        return Ok(None);
    }
    let t: toml::Table = std::fs::read_to_string(lock)?
        .parse()
        .with_context(|| {
            format!(
                "{}: not valid TOML (damaged, e.g. by a kill or a full disk while it was written); delete this file and rerun: finished results are kept and it is written anew",
                lock.display()
            )
        })?;
    Ok(t.get("resolved")
        .and_then(|r| r.get("fingerprint"))
        .and_then(|f| f.as_str())
        .map(String::from))
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
    with_progress(exp, &info, ts.tasks.len(), quiet, &|progress| {
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
    with_progress(exp, &info, data.tasks.len(), quiet, &|progress| {
        run_pool_experiment(exp, data, opts, progress)
    })
}

type Runner<'a> = dyn Fn(&(dyn Fn(usize) + Sync)) -> Result<RunSummary> + 'a;

fn with_progress(
    exp: &Experiment,
    info: &DataInfo,
    n_tasks: usize,
    quiet: bool,
    run: &Runner<'_>,
) -> Result<RunSummary> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let n_cells = n_tasks * exp.world.budgets.len() * exp.policies.len() * exp.repetitions as usize;
    eprintln!(
        "{}: {} tasks x {} budgets x {} policies x {} repetitions = {} cells on {} ({}, {}), {}",
        exp.name,
        n_tasks,
        exp.world.budgets.len(),
        exp.policies.len(),
        exp.repetitions,
        n_cells,
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
        let (mut short_slice, mut past_trace, mut arms_short, mut arms) = (0, 0, 0usize, 0usize);
        for task in &ts.tasks {
            let (budget_abs, slice_abs) = absolute(&exp.world, b, task);
            match exp.world.kind() {
                WorldKind::TimeSliced => {
                    short_slice += usize::from(slice_abs > budget_abs);
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
        if short_slice > 0 {
            out.push(format!(
                "budget {b} {unit}: the slice is longer than the budget on {short_slice} of {} tasks, so a cell makes one partial pull",
                ts.tasks.len()
            ));
        }
        if past_trace > 0 {
            out.push(format!(
                "budget {b} {unit}: {arms_short} of {arms} arms (on {past_trace} of {} tasks) have traces shorter than the budget; pulls past a trace's end reveal nothing and are counted per cell in runs.parquet (exhausted_pulls, exhausted_budget)",
                ts.tasks.len()
            ));
        }
    }
    out
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
    let cells = expand_cells(exp, ts);
    run_cells(
        exp,
        &DataInfo::of_traces(ts),
        &cells,
        opts,
        progress,
        &|c| run_cell(c, exp, ts, true),
        &|results| {
            Ok((
                runs_frame(results, &cells, exp, ts)?,
                trajectories_frame(results, ts)?,
            ))
        },
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
        &|c| pool::run_pool_cell(c, exp, data, true),
        &|results| {
            Ok((
                pool::pool_runs_frame(results, &cells, exp, data)?,
                pool::pool_trajectories_frame(results, data)?,
            ))
        },
    )
}

type Frames<'a, R> =
    dyn Fn(&[R]) -> Result<(polars::prelude::DataFrame, polars::prelude::DataFrame)> + 'a;

/// The store's loop, for any world: check the lock, skip finished cells, run the rest in batches
/// on a rayon pool, publish each batch as a part, and merge the parts at the end.
fn run_cells<R: Send>(
    exp: &Experiment,
    info: &DataInfo,
    cells: &[Cell],
    opts: &RunOptions,
    progress: &(dyn Fn(usize) + Sync),
    run: &(dyn Fn(&Cell) -> Result<R> + Sync),
    frames: &Frames<'_, R>,
) -> Result<RunSummary> {
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&exp.name));
    let fingerprint = exp.fingerprint(&info.hash);
    let lock = out.join(LOCK);
    if let Some(old) = fingerprint_in(&lock)?
        && old != fingerprint
    {
        bail!(
            "{}: these results come from a different experiment or trace set (fingerprint {old}, now {fingerprint}); finished results are kept: choose another --out, or delete the folder to start again",
            out.display()
        );
    }
    let store = Store::open(&out)?;
    std::fs::write(&lock, lock_text(exp, info, cells.len(), &fingerprint))
        .with_context(|| format!("{}: cannot write", lock.display()))?;
    let done = store.finished()?;
    let todo: Vec<&Cell> = cells.iter().filter(|c| !done.contains(&c.index)).collect();
    // Parts are published about once a second (fewer fsyncs than fixed small batches); batch
    // boundaries never reach the merged output, which is sorted by cell.
    let mut batch = opts.batch_size.unwrap_or(64).max(1);
    let threads = opts.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the worker threads")?;
    let t0 = std::time::Instant::now();
    let mut rest: &[&Cell] = &todo;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(batch.min(rest.len()));
        rest = tail;
        let tb = std::time::Instant::now();
        let results: Vec<R> = pool.install(|| {
            chunk
                .par_iter()
                .map(|c| {
                    let r = run(c);
                    progress(1);
                    r
                })
                .collect::<Result<Vec<_>>>()
        })?;
        let (runs, traj) = frames(&results)?;
        store.write_part(runs, traj)?;
        if opts.batch_size.is_none() {
            let secs = tb.elapsed().as_secs_f64().max(1e-3);
            batch = ((batch as f64 / secs) as usize).clamp(64, 200_000);
        }
    }
    store.merge()?;
    Ok(RunSummary {
        out,
        total_cells: cells.len(),
        already_done: done.len(),
        ran: todo.len(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The ranking `run` prints, and what it rests on.
pub struct Ranking {
    pub table: crate::analysis::UnitTable,
    /// A warning when cells pulled arms past the end of their traces.
    pub exhausted: Option<String>,
}

/// Mean rank of each policy over the most independent units the results allow (see
/// `analysis::units`), from a results folder. Returns the ranking and what it rests on.
pub fn ranking(results_dir: &Path) -> Result<(Vec<MeanRank>, Ranking)> {
    use crate::analysis::{FoundNothing, UnitKind, compare::DEFAULT_TIE_TOLERANCE, unit_table};
    let res = crate::results::read_results(results_dir)?;
    let kind = UnitKind::most_independent(&res.runs);
    let table = unit_table(&res.runs, kind, FoundNothing::Worst, res.higher_is_better);
    let (ranks, _) = mean_ranks(&table.rows, res.higher_is_better, DEFAULT_TIE_TOLERANCE);
    let (hit, all, share) = crate::results::exhausted_summary(&res.runs);
    let exhausted = (hit > 0).then(|| {
        format!(
            "{hit} of {all} cells pulled arms past the end of their traces, spending on average {:.1} % of their budget there (a budget longer than the traces; see the columns exhausted_pulls and exhausted_budget of runs.parquet)",
            100.0 * share
        )
    });
    Ok((ranks, Ranking { table, exhausted }))
}
