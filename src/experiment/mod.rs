//! Experiments: parse a file, expand it into cells, run the cells in parallel with rayon, and
//! store the results so that a run can be killed and resumed without losing or changing anything.

mod cell;
mod spec;
mod store;

pub use cell::{Cell, CellResult, Step, absolute, drive, expand_cells, run_cell};
pub use spec::{BudgetUnit, Experiment, WorldSetup, load_experiment};
pub use store::{LOCK, RUNS, Store, TRAJECTORIES, read_parquet, runs_frame, trajectories_frame};

use std::collections::BTreeMap;
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
    Ok((exp, ts))
}

/// The stand-in trace set of a synthetic experiment: one task, the arms by name, no data.
pub fn synthetic_trace_set(exp: &Experiment) -> TraceSet {
    use crate::trace::{Arm, Direction, Manifest, Source, Task};
    let learners: Vec<String> = exp.world.arms.iter().map(|(n, _)| n.clone()).collect();
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

fn lock_text(exp: &Experiment, ts: &TraceSet, n_cells: usize, fingerprint: &str) -> String {
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
    resolved.insert("trace_set".into(), ts.manifest.name.clone().into());
    resolved.insert("trace_dir".into(), ts.dir.display().to_string().into());
    resolved.insert("trace_hash".into(), ts.content_hash.clone().into());
    resolved.insert("trace_source".into(), ts.manifest.source.as_str().into());
    resolved.insert("world".into(), exp.world.describe().into());
    resolved.insert(
        "tasks".into(),
        toml::Value::Array(ts.tasks.iter().map(|t| t.name().into()).collect()),
    );
    resolved.insert(
        "learners".into(),
        toml::Value::Array(ts.learners.iter().map(|l| l.clone().into()).collect()),
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
        .with_context(|| format!("{}: not valid TOML", lock.display()))?;
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
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let n_cells =
        ts.tasks.len() * exp.world.budgets.len() * exp.policies.len() * exp.repetitions as usize;
    eprintln!(
        "{}: {} tasks x {} budgets x {} policies x {} repetitions = {} cells on {} ({}, {}), {}",
        exp.name,
        ts.tasks.len(),
        exp.world.budgets.len(),
        exp.policies.len(),
        exp.repetitions,
        n_cells,
        ts.manifest.name,
        ts.manifest.source.as_str(),
        ts.manifest.metric,
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
    let summary = run_experiment(exp, ts, opts, &|n| bar.inc(n as u64));
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

/// Run every unfinished cell of an experiment. `progress` is called with the number of cells
/// finished since the last call (from worker threads).
pub fn run_experiment(
    exp: &Experiment,
    ts: &TraceSet,
    opts: &RunOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<RunSummary> {
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&exp.name));
    let cells = expand_cells(exp, ts);
    let fingerprint = exp.fingerprint(&ts.content_hash);
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
    std::fs::write(&lock, lock_text(exp, ts, cells.len(), &fingerprint))
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
        let results: Vec<CellResult> = pool.install(|| {
            chunk
                .par_iter()
                .map(|c| {
                    let r = run_cell(c, exp, ts, true);
                    progress(1);
                    r
                })
                .collect::<Result<Vec<_>>>()
        })?;
        let runs = runs_frame(&results, &cells, exp, ts)?;
        let traj = trajectories_frame(&results, ts)?;
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

/// Mean rank of each policy over units (dataset, run, budget), from a results folder. Scores
/// are first averaged over repetitions. Returns the ranking and the number of units.
pub fn ranking(results_dir: &Path) -> Result<(Vec<MeanRank>, usize)> {
    let df = read_parquet(&results_dir.join(RUNS))?;
    let ds = df.column("dataset")?.str()?;
    let run = df.column("run")?.i64()?;
    let budget = df.column("budget")?.f64()?;
    let policy = df.column("policy")?.str()?;
    let score = df.column("best_score")?.f64()?;
    let maximize = df
        .column("direction")?
        .str()?
        .get(0)
        .is_none_or(|d| d == "maximize");
    let mut acc: BTreeMap<(String, String), (f64, usize, usize)> = BTreeMap::new();
    for i in 0..df.height() {
        let unit = format!(
            "{}/{}@{}",
            ds.get(i).unwrap_or(""),
            run.get(i).unwrap_or(0),
            budget.get(i).unwrap_or(f64::NAN)
        );
        let e = acc
            .entry((unit, policy.get(i).unwrap_or("").to_string()))
            .or_insert((0.0, 0, 0));
        match score.get(i) {
            Some(s) => {
                e.0 += s;
                e.1 += 1;
            }
            None => e.2 += 1,
        }
    }
    let rows: Vec<(String, String, f64)> = acc
        .into_iter()
        .map(|((u, p), (sum, n, _))| (u, p, if n > 0 { sum / n as f64 } else { f64::NAN }))
        .collect();
    let (ranks, _) = mean_ranks(&rows, maximize);
    let n_units = ranks.first().map_or(0, |r| r.n_units);
    Ok((ranks, n_units))
}
