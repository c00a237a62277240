//! Experiments: parse a file, expand it into cells, run the cells in parallel with rayon, and
//! store the results so that a run can be killed and resumed without losing or changing anything.

pub mod cache;
mod cell;
mod data;
#[cfg(test)]
mod every_family;
mod frames;
mod lock;
mod merge;
pub(crate) mod objectives;
pub(crate) mod parquet;
pub(crate) mod pool;
mod progress;
pub mod session;
mod spec;
mod store;
mod worlds;

pub use crate::replay::pool::{PoolPart, Recommended};
pub use crate::replay::{Outcome, Overhead};
pub(crate) use cell::Cell;
pub use cell::CellResult;
pub(crate) use cell::{Source, run_cell};
pub use data::prepare;
pub(crate) use data::{Data, DataInfo};
pub use progress::{Level, Progress, Silent};
pub use session::{ChunkOutput, Session, run_chunk};
pub(crate) use spec::{BudgetUnit, TrajectoryMode, load_experiment};
pub use spec::{Experiment, WorldOptions, WorldSetup};
pub use store::read_parquet;
pub(crate) use store::{LOCK, RUNS, Store, TRAJECTORIES, write_text_atomic};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

pub(crate) use crate::results::{LockFile, Resolved, read_lock_file};
use lock::read_lock;

/// How `run_experiment` runs: where to, on how many threads, which cells.
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
    /// The cell cache's folder: finished cells found there are reused, replayed ones stored
    /// (`cache::CellCache`); none: no cache.
    pub cache: Option<PathBuf>,
    /// Store only cells whose replay took at least this long (seconds); default
    /// [`cache::MIN_CELL_S`]: a quicker cell is replayed faster than its entry is read.
    pub cache_min_s: Option<f64>,
}

/// A deterministic share of an experiment's cells: every cell whose index is `index` modulo
/// `count` (round robin, so every shard gets a similar mix of tasks, budgets and policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number, 0 ≤ index < count.
    pub index: u32,
    /// The number of shards.
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

    /// `cell` belongs to this shard.
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

    /// `I-of-N`, the shard's folder name.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// Where a run writes by default: `results/<name>`, or `results/<name>-shards/<i>-of-<n>`.
pub(crate) fn default_out(exp: &Experiment, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => PathBuf::from("results").join(&exp.name),
        Some(s) => PathBuf::from("results")
            .join(format!("{}-shards", exp.name))
            .join(format!("{}-of-{}", s.index, s.count)),
    }
}

/// What `run_experiment` did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// The results folder.
    pub out: PathBuf,
    /// Cells of the experiment (of the shard).
    pub total_cells: usize,
    /// Cells finished before this run (skipped).
    pub already_done: usize,
    /// Cells this run replayed or took from the cache.
    pub ran: usize,
    /// What the cell cache did, when one was used (`cache.hits` of `ran` came from it).
    pub cache: Option<cache::CacheCounts>,
    /// Wall seconds this run took.
    pub seconds: f64,
}

/// Run every unfinished cell of an experiment, in any world, on this process's threads.
/// `progress` hears a line describing the grid, the cells as they finish (from worker threads),
/// notes, and the summary.
pub fn run_experiment(
    exp: &Experiment,
    data: &Data,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RunSummary> {
    let summary = Session::open(exp, data, opts, progress)
        .and_then(|session| run_locally(exp, data, opts, session, progress));
    progress.finish(summary.as_ref().ok());
    summary
}

/// Run `f`, turning a panic (a bug: no input should cause one) into an error that says so, so
/// that the run stops like any failed cell, keeping every finished cell, and a Python caller
/// gets its exception class instead of a panic.
pub(crate) fn caught<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(bug(what, &*p)))
}

/// A panic's message ("" when its payload is not text).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("")
}

/// The error a panic (a bug) becomes, naming what it stopped and the panic's message.
fn bug(what: &str, panic: &(dyn std::any::Any + Send)) -> anyhow::Error {
    let msg = match panic_message(panic) {
        "" => "no message",
        m => m,
    };
    anyhow::anyhow!(
        "{what}: internal error (a bug in banditbench {}; please report it with the input that caused it): {msg}",
        env!("CARGO_PKG_VERSION")
    )
}

/// Cells are run in chunks sized so that replaying them takes about this long (seconds; the
/// encoding after it is not counted). A chunk's results (every decision of its cells) are held
/// until it is encoded, so this bounds a run's working memory: chunks of about 0.1 s in all
/// (replay and encoding) gave the quickstart at 8 repetitions a peak of 191-203 MiB, chunks of
/// 0.025 s of replay 155 MiB, for no measurable change in time (`bench --only memory`). Sizing
/// on the replay alone matters on slow (debug) builds, whose fixed cost per chunk otherwise
/// shrank chunks to a cell or two.
const CHUNK_S: f64 = 0.025;

/// With `--batch-size`, parts are published at most this often (seconds), after the first.
const MIN_PART_S: f64 = 0.1;

/// The local route: run the session's cells in tasks on a rayon pool and hand their results to
/// the session in cell order, which publishes a part about once a second; merge at the end.
///
/// A task is a run of consecutive cells that one thread replays one after another, sized so that
/// it takes about `CHUNK_S × threads / window` (with `--batch-size`, that many cells). Tasks go out as threads come
/// free, with no barrier between them: a thread never waits for another's long cell (chunks
/// replayed in lockstep left one of two threads idle while the other finished a chunk's slowest
/// cell, half the time in the freeze-thaw GP cells). A task that finishes before an earlier one
/// is held until that one is in; at most `2 × threads` tasks are out or held at once, which
/// bounds the results in memory.
fn run_locally(
    exp: &Experiment,
    data: &Data,
    opts: &RunOptions,
    mut session: Session,
    progress: &dyn Progress,
) -> Result<RunSummary> {
    let threads = opts.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the worker threads")?;
    // Cells are made from their indices in their task, on its thread: memory holds the cells
    // being run, not the experiment's cells. Each task's results are encoded into the session's
    // segment as soon as the tasks before it are in (nothing but a row group is held), and the
    // segment is published as a part about once a second, so that a kill loses about a second of
    // work whatever the cells cost. With --batch-size, a task of that many cells is published as
    // a part, the first at once and later ones at most every MIN_PART_S seconds (a floor: a part
    // per cell of a fast experiment would cost more than the cells).
    let mut size = opts.batch_size.unwrap_or(1).max(1);
    let floor = if opts.batch_size.is_some() {
        session.publish_now();
        MIN_PART_S
    } else {
        1.0
    };
    let window = 2 * threads.max(1);
    // A task's replay time: the window's tasks together hold what a chunk of CHUNK_S on every
    // thread held when threads replayed chunks in lockstep, so the memory a run holds stays.
    let task_s = CHUNK_S * threads.max(1) as f64 / window as f64;
    let runner = std::sync::Arc::clone(session.runner());
    type Outcome = (Vec<(u64, Result<session::Finished>)>, f64);
    let (tx, rx) = std::sync::mpsc::channel::<(u64, Outcome)>();
    let stopped = pool.in_place_scope(|scope| -> Result<Option<(anyhow::Error, bool)>> {
        // Tasks out, by number; their results once in, until every earlier task's are.
        let mut out: std::collections::VecDeque<u64> = std::collections::VecDeque::new();
        let mut held: std::collections::HashMap<u64, Outcome> = std::collections::HashMap::new();
        let (mut next, mut number) = (0u64, 0u64);
        let mut stop: Option<(anyhow::Error, bool)> = None;
        loop {
            while stop.is_none() && out.len() < window {
                let cells: Vec<u64> = session.todo_from(next).take(size).collect();
                let Some(&last) = cells.last() else { break };
                next = last + 1;
                let (runner, tx) = (std::sync::Arc::clone(&runner), tx.clone());
                scope.spawn(move |_| {
                    let tb = std::time::Instant::now();
                    let mut done = Vec::with_capacity(cells.len());
                    // Whatever panics in here, the task reports: the loop below waits for
                    // every task it sent out, and a task that never reports would leave it
                    // waiting for ever (the workers idle, the run hung).
                    let body = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        for &i in &cells {
                            // A panic (a bug) in a replay becomes that cell's error.
                            let r = caught(&format!("cell {i}"), || {
                                runner.run(exp, data, &runner.cell(i), progress)
                            });
                            let fatal = r.as_ref().is_err_and(|e| !session::keeps_going(e));
                            done.push((i, r));
                            // Progress is told, never trusted: a caller's progress that panics
                            // (a closed stderr, a bug in a callback) must neither lose this cell
                            // nor keep the task from reporting, which would leave the loop below
                            // waiting for it for ever.
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                progress.advance(1)
                            }));
                            if fatal {
                                break;
                            }
                        }
                    }));
                    // The first cell not reported carries the panic, which stops the run
                    // (every finished cell kept); after the last cell, nothing is lost.
                    if let Err(p) = body
                        && let Some(&i) = cells.get(done.len())
                    {
                        done.push((i, Err(bug(&format!("cell {i} (outside its replay)"), &*p))));
                    }
                    // The receiver is gone only when the run stopped on an error already.
                    let _ = tx.send((number, (done, tb.elapsed().as_secs_f64())));
                });
                out.push_back(number);
                number += 1;
            }
            let Some(&head) = out.front() else { break };
            if !held.contains_key(&head) {
                let (n, outcome) = rx
                    .recv()
                    .map_err(|_| anyhow::anyhow!("a worker thread ended without its results"))?;
                held.insert(n, outcome);
                continue;
            }
            // Every task in order from the head, as one piece; with --batch-size, one task (a
            // part of N cells).
            let mut finished = Vec::new();
            while let Some(&n) = out.front() {
                let Some((cells, replay_s)) = held.remove(&n) else {
                    break;
                };
                out.pop_front();
                // The replay's time alone sizes later tasks: encoding and publishing have a
                // fixed part that, counted in, would shrink tasks towards a cell on a slow build.
                if opts.batch_size.is_none() && !cells.is_empty() {
                    let per_cell = replay_s.max(1e-6) / cells.len() as f64;
                    let aim = (task_s / per_cell) as usize;
                    size = aim.clamp(1, (size * 4).max(1)).min(100_000);
                }
                for (i, r) in cells {
                    match r {
                        Ok(f) => finished.push(f),
                        // An external policy with on_failure = "restart": report, go on, list
                        // at the end.
                        Err(e) if session::keeps_going(&e) => {
                            progress.note(Level::Error, &format!("{e:#}"));
                            session.failed(i);
                        }
                        Err(e) => {
                            stop.get_or_insert((e, false));
                        }
                    }
                }
                if opts.batch_size.is_some() {
                    break;
                }
            }
            let more =
                stop.is_none() && (!out.is_empty() || session.todo_from(next).next().is_some());
            session.accept_in_order(exp, data, finished, floor, more)?;
            if stop.is_none() && more && progress.interrupted() {
                stop = Some((anyhow::anyhow!("interrupted"), true));
            }
        }
        Ok(stop)
    })?;
    drop(tx);
    match stopped {
        // Every cell that finished is kept: published now, resumed past on the next run.
        Some((e, interrupted)) => Err(session.stop(e, interrupted)),
        None => session.finish(),
    }
}

/// What `merge` did.
pub(crate) struct MergeSummary {
    pub out: PathBuf,
    pub cells: usize,
    pub folders: usize,
}

/// A finished results folder's lock (its resolved experiment) and the shard it ran, checked:
/// it was written by `run`, has finished, and is of this build's results format.
fn finished_shard(d: &Path) -> Result<(Resolved, Option<Shard>)> {
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
    let format = resolved.results_format;
    if format != store::RESULTS_FORMAT {
        bail!(
            "{}: results format {format}, this build merges format {}; rerun it with this build",
            d.display(),
            store::RESULTS_FORMAT
        );
    }
    let shard = resolved
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .with_context(|| format!("{}: key 'resolved.shard'", lock.display()))?;
    Ok((resolved, shard))
}

/// Every one of the experiment's `total` cells is in exactly one of `dirs`; a missing cell's
/// message names the shards not given when the folders are shards of one count.
fn every_cell_once(dirs: &[PathBuf], total: usize, shards: &[Option<Shard>]) -> Result<()> {
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
    if missing.is_empty() {
        return Ok(());
    }
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

/// Combine finished results folders of one experiment (usually the shards of `run --shard`)
/// into `out`: exactly what one unsharded run writes. Refuses folders from another experiment
/// or trace set, unfinished folders, duplicated cells and missing cells (listed).
pub(crate) fn merge_results(dirs: &[PathBuf], out: &Path) -> Result<MergeSummary> {
    if dirs.is_empty() {
        bail!("merge: give the results folders to merge (e.g. results/NAME-shards/*)");
    }
    let mut first: Option<(PathBuf, Resolved)> = None;
    let mut shards: Vec<Option<Shard>> = Vec::new();
    for d in dirs {
        let (resolved, shard) = finished_shard(d)?;
        shards.push(shard);
        match &first {
            None => first = Some((d.clone(), resolved)),
            Some((fd, fr)) => {
                let (a, b) = (&fr.fingerprint, &resolved.fingerprint);
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
        .cells
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: key 'resolved.cells' missing",
                dirs[0].join(LOCK).display()
            )
        })?;
    every_cell_once(dirs, total, &shards)?;
    if out.join(RUNS).is_file() || out.join(LOCK).is_file() {
        bail!(
            "{}: already holds results; merge into a new folder",
            out.display()
        );
    }
    let store = Store::open(out)?;
    store.merge_from(dirs)?;
    let mut top = read_lock_file(&dirs[0].join(LOCK))?.unwrap_or_default();
    top.resolved = Resolved {
        shard: None,
        shard_cells: None,
        ..resolved
    };
    store::write_text_atomic(&out.join(LOCK), &top.to_toml()?)?;
    Ok(MergeSummary {
        out: out.to_path_buf(),
        cells: total,
        folders: dirs.len(),
    })
}

#[cfg(test)]
mod caught_tests {
    use super::caught;

    #[test]
    fn a_panic_becomes_an_error_that_says_it_is_a_bug_and_names_the_cell() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let e = caught("cell 7", || -> anyhow::Result<u8> {
            let v: Vec<u8> = Vec::new();
            let i = v.len();
            Ok(v[i])
        })
        .unwrap_err()
        .to_string();
        std::panic::set_hook(hook);
        assert!(
            e.starts_with("cell 7: internal error (a bug in banditbench")
                && e.contains("index out of bounds"),
            "{e}"
        );
        assert_eq!(caught("cell 8", || Ok(3)).unwrap(), 3);
        let e = caught("cell 9", || -> anyhow::Result<()> { anyhow::bail!("no") }).unwrap_err();
        assert_eq!(e.to_string(), "no");
    }
}
