//! What an experiment replays, and everything that differs between its kinds: a trace set (the
//! learner-level worlds: time-sliced, pull-count, synthetic) or a configuration pool (the pool
//! world). Loading, naming tasks, expanding cells, estimating work, budget warnings, running a
//! cell and the results columns are each one method with an exhaustive match, so a new kind of
//! data is found by the compiler everywhere it must be filled in.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::DataFrame;

use super::cell::{Cell, CellGrid, CellResult, Source, absolute, expand_cells, run_cell};
use super::objectives::{MoData, ObjectivesSpec};
use super::pool::{self, PoolData};
use super::spec::{Experiment, load_experiment};
use super::store::Names;
use super::worlds::{TraceLength, WorldOptions};
use crate::replay::WorldKind;
use crate::trace::{TraceSet, load_trace_set};

/// What an experiment replays.
pub enum Data {
    /// A trace set, replayed in a learner-level world (time-sliced, pull-count, synthetic), and
    /// the objectives measured, with every task's true front and reference point (`[world]
    /// objectives`), or none.
    Traces(TraceSet, Option<Box<super::objectives::MoData>>),
    /// A configuration pool (or a trace set's joint pool), replayed in the pool world.
    Pool(PoolData),
}

/// Load an experiment and what it replays: its trace set (for the synthetic world, a trace set
/// with no evaluations that names the arms) or its pool.
pub fn prepare(path: &Path) -> Result<(Experiment, Data)> {
    let exp = load_experiment(path)?;
    let data = if exp.world.options.replays_pool() {
        Data::Pool(pool::prepare_pool(&exp)?)
    } else {
        let mut ts = load_traces(&exp)?;
        let at = exp.file.display().to_string();
        let mo = match &exp.world.objectives {
            Some(spec) => Some(Box::new(MoData::build_traces(spec, &ts, &at)?)),
            None => None,
        };
        // `[world] score`: the arms keep every objective as recorded.
        if let Some(score) = ObjectivesSpec::score_of(exp.world.objectives.as_ref()) {
            ts.rescore(score)
                .map_err(|e| anyhow::anyhow!("{at}: key 'world.score' {e}"))?;
        }
        Data::Traces(ts, mo)
    };
    Ok((exp, data))
}

/// A pool's source: `synthetic` when its provenance says so (generated from a function, or
/// made by hand), else `recorded` (imported pools included, as results have always named them).
fn pool_source(p: &PoolData) -> &'static str {
    // A generated pool is refused unless its provenance says synthetic (`read_pool_manifest`).
    let source = p.pool.manifest.provenance.get("source");
    if source.and_then(|v| v.as_str()) == Some("synthetic") {
        "synthetic"
    } else {
        "recorded"
    }
}

impl Data {
    /// The trace set, when the experiment replays one in a learner-level world.
    pub fn traces(&self) -> Option<&TraceSet> {
        match self {
            Data::Traces(ts, ..) => Some(ts),
            Data::Pool(_) => None,
        }
    }

    /// The trace set, or an error naming what the experiment replays instead.
    pub fn trace_set(&self) -> Result<&TraceSet> {
        match self {
            Data::Traces(ts, ..) => Ok(ts),
            Data::Pool(p) => bail!(
                "the experiment replays the pool {} in the pool world, not a trace set",
                p.pool.manifest.name
            ),
        }
    }

    /// The pool, when the experiment replays in the pool world.
    pub fn pool(&self) -> Option<&PoolData> {
        match self {
            Data::Traces(..) => None,
            Data::Pool(p) => Some(p),
        }
    }

    pub fn n_tasks(&self) -> usize {
        match self {
            Data::Traces(ts, ..) => ts.tasks.len(),
            Data::Pool(p) => p.tasks.len(),
        }
    }

    /// The name of task `i`: `dataset/run`, or `dataset/run/scope` in the pool world.
    pub fn task_name(&self, i: usize) -> String {
        match self {
            Data::Traces(ts, ..) => ts.tasks[i].name(),
            Data::Pool(p) => p.task_name(&p.tasks[i]),
        }
    }

    /// The objectives measured, when the experiment names several.
    pub(crate) fn objectives(&self) -> Option<&MoData> {
        match self {
            Data::Traces(_, mo) => mo.as_deref(),
            Data::Pool(p) => p.objectives.as_deref(),
        }
    }

    /// What the ranking ranks, in words.
    pub fn what(&self) -> String {
        if self.objectives().is_some() {
            return "hypervolume regret of the cell's archive (1 - HV / HV of the true front; lower is better)".to_string();
        }
        match self {
            Data::Traces(ts, ..) => format!("best {} found", ts.manifest.metric),
            Data::Pool(p) => format!(
                "{} of the recommended configuration (validation)",
                p.pool.manifest.metric
            ),
        }
    }

    /// The trace set's or pool's name.
    pub fn name(&self) -> &str {
        match self {
            Data::Traces(ts, ..) => &ts.manifest.name,
            Data::Pool(p) => &p.pool.manifest.name,
        }
    }

    /// Where the data comes from: `recorded`, `imported` or `synthetic` (pools are recorded,
    /// or synthetic when generated from a function).
    pub fn source(&self) -> &'static str {
        match self {
            Data::Traces(ts, ..) => ts.manifest.source.as_str(),
            Data::Pool(p) => pool_source(p),
        }
    }

    /// For the lock file and the fingerprint.
    pub fn info(&self) -> DataInfo {
        match self {
            Data::Traces(ts, mo) => {
                let mut info = DataInfo::of_traces(ts);
                info.objectives = mo
                    .as_ref()
                    .map(|mo| mo.lock(ts.tasks.iter().map(|t| t.name())));
                info
            }
            Data::Pool(p) => DataInfo::of_pool(p),
        }
    }

    /// Notes and warnings about the data and the budgets, found before running (the caller
    /// shows them): `(is_warning, text)`.
    pub fn notices(&self, exp: &Experiment) -> Vec<(bool, String)> {
        let mut out = Vec::new();
        match self {
            Data::Traces(ts, ..) => {
                out.extend(ts.notes.iter().map(|n| (false, n.clone())));
                out.extend(budget_warnings(exp, ts).into_iter().map(|w| (true, w)));
                out.extend(ts.dropped.iter().map(|d| {
                    (
                        true,
                        format!(
                            "task {}/{} dropped: it lacks {}",
                            d.dataset,
                            d.run,
                            d.missing.join(", ")
                        ),
                    )
                }));
            }
            Data::Pool(p) => {
                if p.pool.missing_curves > 0 {
                    out.push((true, format!(
                        "the pool {} is incomplete ({} curves missing or short); configurations without a curve are never drawn",
                        p.pool.manifest.name, p.pool.missing_curves
                    )));
                }
                if !p.dropped.is_empty() {
                    out.push((
                        true,
                        format!(
                            "{} tasks dropped, the pool has no curve for them: {}",
                            p.dropped.len(),
                            p.dropped.join(", ")
                        ),
                    ));
                }
            }
        }
        out
    }

    /// Refuse work no machine can do and budgets the data cannot hold, before running.
    pub fn check(&self, exp: &Experiment) -> Result<()> {
        let cells = self.n_tasks() as u128
            * exp.world.budgets.len() as u128
            * exp.policies.len() as u128
            * u128::from(exp.repetitions);
        if cells > MAX_CELLS {
            bail!(
                "{}: {} tasks x {} budgets x {} policies x {} repetitions = {cells} cells, more than the {MAX_CELLS} one run can hold; lower 'repetitions', the budgets or the policy grid, or filter [tasks]",
                exp.file.display(),
                self.n_tasks(),
                exp.world.budgets.len(),
                exp.policies.len(),
                exp.repetitions
            );
        }
        match self {
            Data::Traces(ts, ..) => {
                check_trace_work(exp, ts)?;
                check_work_times(exp, ts)?;
                check_budgets(exp, ts)
            }
            Data::Pool(p) => check_pool_work(exp, p),
        }
    }

    /// The experiment's cells, in order (task, budget, policy, repetition).
    pub fn expand_cells(&self, exp: &Experiment) -> Vec<Cell> {
        match self {
            Data::Traces(ts, ..) => expand_cells(exp, ts),
            Data::Pool(p) => pool::expand_pool_cells(exp, p),
        }
    }

    /// The experiment's cells, made on demand (the same cells as `expand_cells`).
    pub fn cell_grid(&self, exp: &Experiment) -> CellGrid {
        match self {
            Data::Traces(ts, ..) => CellGrid::new(exp, ts.tasks.len(), |ti| {
                let t = &ts.tasks[ti];
                vec![t.dataset.clone(), t.run.to_string()]
            }),
            Data::Pool(p) => pool::pool_cell_grid(exp, p),
        }
    }

    /// Replay one cell; `record_steps` keeps its trajectory.
    pub fn run_cell(
        &self,
        cell: &Cell,
        exp: &Experiment,
        record_steps: bool,
    ) -> Result<CellResult> {
        run_cell(cell, exp, self.cell_source(), record_steps)
    }

    /// What a cell's world is built from.
    pub fn cell_source(&self) -> Source<'_> {
        match self {
            Data::Traces(ts, mo) => Source::Traces(ts, mo.as_deref()),
            Data::Pool(p) => Source::Pool(p),
        }
    }

    /// The runs and trajectories frames of finished cells.
    pub fn frames(
        &self,
        results: &[CellResult],
        grid: &CellGrid,
        exp: &Experiment,
    ) -> Result<(DataFrame, DataFrame)> {
        let mut cells: Vec<Cell> = results.iter().map(|r| grid.cell(r.index)).collect();
        cells.sort_by_key(|c| c.index);
        Ok((
            super::frames::runs_frame(results, &cells, exp, self)?,
            super::frames::trajectories_frame(results, self)?,
        ))
    }

    /// Columns of the trajectories that hold codes the store writes as names.
    pub fn coded(&self) -> Vec<(String, Names)> {
        super::frames::coded(self)
    }

    /// Every learner, by name: the trace set's, or the pool manifest's.
    pub fn learners(&self) -> &[String] {
        match self {
            Data::Traces(ts, ..) => &ts.learners,
            Data::Pool(p) => &p.all_learners,
        }
    }

    /// Task `i`'s dataset and run.
    pub fn task_key(&self, i: usize) -> (&str, i64) {
        match self {
            Data::Traces(ts, ..) => (&ts.tasks[i].dataset, ts.tasks[i].run),
            Data::Pool(p) => {
                let t = &p.pool.tasks[p.tasks[i].task];
                (&t.dataset, t.run)
            }
        }
    }

    /// Per learner, whether task `i` keeps it; empty when it keeps all.
    pub fn kept_learners(&self, i: usize) -> &[bool] {
        match self {
            Data::Traces(..) => &[],
            Data::Pool(p) => &p.tasks[i].keep,
        }
    }

    /// The pool world's scope of task `i` ("all" or a learner), `None` elsewhere.
    pub fn scope(&self, i: usize) -> Option<&str> {
        match self {
            Data::Traces(..) => None,
            Data::Pool(p) => Some(&p.tasks[i].scope),
        }
    }

    /// Whether higher or lower scores are better.
    pub fn direction(&self) -> crate::trace::Direction {
        match self {
            Data::Traces(ts, ..) => ts.manifest.direction,
            Data::Pool(p) => p.pool.manifest.direction,
        }
    }
}

/// The trace set of a learner-level experiment, its policies checked against its datasets.
fn load_traces(exp: &Experiment) -> Result<TraceSet> {
    let ts = match &exp.traces_dir {
        Some(dir) => load_trace_set(dir, &exp.load).with_context(|| {
            format!(
                "{}: loading the trace set named by 'traces'",
                exp.file.display()
            )
        })?,
        None => synthetic_trace_set(exp),
    };
    for (i, p) in exp.policies.iter().enumerate() {
        p.check_datasets(
            ts.tasks.iter().map(|t| t.dataset.as_str()),
            ts.datasets.iter().map(String::as_str),
        )
        .with_context(|| format!("{}: [[policies]] policy {}", exp.file.display(), i + 1))?;
    }
    Ok(ts)
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
            objectives: Vec::new(),
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
    /// Several objectives: the lock file's `[resolved.objectives]`.
    pub(crate) objectives: Option<crate::results::LockObjectives>,
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
            objectives: None,
        }
    }

    pub fn of_pool(data: &PoolData) -> DataInfo {
        DataInfo {
            name: data.pool.manifest.name.clone(),
            dir: data.pool.dir.clone(),
            hash: data.pool.content_hash.clone(),
            source: pool_source(data).into(),
            metric: data.pool.manifest.metric.clone(),
            tasks: data.tasks.iter().map(|t| data.task_name(t)).collect(),
            learners: data.learner_names(),
            objectives: data
                .objectives
                .as_ref()
                .map(|mo| mo.lock(data.tasks.iter().map(|t| data.task_name(t)))),
        }
    }
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
            let busy = exp.world.workers.min(task.arms.len());
            let steps = exp.world.options.decisions(budget_abs, slice_abs, busy);
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
fn check_trace_work(exp: &Experiment, ts: &TraceSet) -> Result<()> {
    let (_, largest, total) = estimate_work(exp, ts);
    let at = exp.file.display();
    if largest > MAX_DECISIONS_PER_CELL {
        let key = exp.world.options.work_keys();
        bail!(
            "{at}: one cell would take {largest} decisions (budget / slice, times the workers busy at once), more than the {MAX_DECISIONS_PER_CELL} a cell may take; change {key}"
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
fn budget_warnings(exp: &Experiment, ts: &TraceSet) -> Vec<String> {
    let mut out = Vec::new();
    // No traces to outlast.
    let Some(length) = exp.world.options.outlasts() else {
        return out;
    };
    for &b in &exp.world.budgets {
        let (mut past_trace, mut arms_short, mut arms) = (0, 0usize, 0usize);
        for task in &ts.tasks {
            let (budget_abs, _) = absolute(&exp.world, b, task);
            let shorter = task
                .arms
                .iter()
                .filter(|a| match length {
                    TraceLength::Seconds => a.span_s() < budget_abs,
                    TraceLength::Evaluations => (a.len() as f64) < budget_abs,
                })
                .count();
            past_trace += usize::from(shorter > 0);
            arms_short += shorter;
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

/// Several workers in the pull-count world take each evaluation's recorded time: a trace set
/// that records none (every evaluation's cost 0) is refused, as its work would all finish at
/// once.
fn check_work_times(exp: &Experiment, ts: &TraceSet) -> Result<()> {
    if exp.world.kind() != WorldKind::PullCount || exp.world.workers <= 1 {
        return Ok(());
    }
    let timed = ts
        .tasks
        .iter()
        .flat_map(|t| &t.arms)
        .any(|a| a.cost_s.iter().any(|&c| c > 0.0));
    if !timed {
        bail!(
            "{}: key 'world.workers' is {}, but the trace set {} records no evaluation time (every evaluation's cost_s, or difference of elapsed_s, is 0), and workers in the pull-count world take each evaluation's recorded time; record elapsed_s (or cost_s), or use one worker",
            exp.file.display(),
            exp.world.workers,
            ts.dir.display()
        );
    }
    Ok(())
}

/// A time-sliced budget shorter than its slice is refused: its cells would make one partial pull
/// that no policy decides, and would still be ranked.
fn check_budgets(exp: &Experiment, ts: &TraceSet) -> Result<()> {
    // Only the time-sliced world has a slice: a budget of pulls or units has none.
    if !matches!(exp.world.options, WorldOptions::TimeSliced { .. }) {
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

/// Refuse pool work no machine can do, before running, with the estimate and the key to change.
fn check_pool_work(exp: &Experiment, data: &PoolData) -> Result<()> {
    let per_task = exp.policies.len() as u128 * u128::from(exp.repetitions);
    let at = exp.file.display();
    let opts = pool::pool_options(exp)?;
    let units = data.pool.manifest.units;
    let all_units = data.pool.configs.len() as u128 * u128::from(units);
    let mut total = 0u128;
    // Whether the pool records any time (asked once, when a budget counts seconds).
    let mut costs: Option<bool> = None;
    for &b in &exp.world.budgets {
        let (cfg, abs) = opts.world_config(exp.world.unit, b, units);
        if cfg.budget_unit == crate::replay::pool::PoolBudget::Seconds
            && !*costs.get_or_insert_with(|| {
                data.pool
                    .tasks
                    .iter()
                    .flat_map(|t| &t.curves)
                    .any(|c| c.cost_s.iter().any(|&s| s > 0.0))
            })
        {
            bail!(
                "{at}: world.budget_unit = \"seconds\", but pool '{}' records no time (every cost_s is null or 0), so no budget of seconds would ever run out; give budget_unit = \"units\" or \"evaluations\"",
                data.pool.manifest.name
            );
        }
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
