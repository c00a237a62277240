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
pub(crate) use spec::{BudgetUnit, TrajectoryMode, load_experiment};
pub use spec::{Experiment, WorldOptions, WorldSetup};
pub use store::read_parquet;
pub(crate) use store::{LOCK, RUNS, Store, TRAJECTORIES, write_text_atomic};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::Column;
use rayon::prelude::*;

use crate::results::schema;
pub(crate) use crate::results::{LockFile, Resolved, read_lock_file};
use frames::CODED;
use lock::{check_lock, lock_text, read_lock};

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

/// Run every unfinished cell of an experiment, in any world. `progress` hears a line describing
/// the grid, the cells as they finish (from worker threads), notes, and the summary.
pub fn run_experiment(
    exp: &Experiment,
    data: &Data,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RunSummary> {
    data.check(exp)?;
    let grid = data.cell_grid(exp);
    let info = data.info();
    let keys = cache::KeyMaker::new(exp, &info, data.n_tasks())?;
    let all_cells = grid.len();
    let n_cells = opts.shard.map_or(all_cells, |s| s.cells_of(all_cells));
    progress.start(
        &format!(
            "{}: {} tasks x {} budgets x {} policies x {} repetitions = {} cells{} on {} ({}, {}), {}",
            exp.name,
            data.n_tasks(),
            exp.world.budgets.len(),
            exp.policies.len(),
            exp.repetitions,
            all_cells,
            opts.shard.map_or(String::new(), |s| format!(
                ", of which shard {} runs {n_cells}",
                s.label()
            )),
            info.name,
            info.source,
            info.metric,
            exp.world.describe()
        ),
        n_cells,
    );
    let summary = run_cells(
        exp,
        &info,
        &grid,
        opts,
        progress,
        &|c| {
            caught(&format!("cell {}", c.index), || {
                data.run_cell(c, exp, exp.trajectories != TrajectoryMode::None)
            })
        },
        &|results| data.frames(results, &grid, exp),
        &data.coded(),
        &|c| keys.key(&grid, c),
    );
    progress.finish(summary.as_ref().ok());
    summary
}

/// Run `f`, turning a panic (a bug: no input should cause one) into an error that says so, so
/// that the run stops like any failed cell, keeping every finished cell, and a Python caller
/// gets its exception class instead of a panic.
pub(crate) fn caught<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            bail!(
                "{what}: internal error (a bug in banditbench {}; please report it with the input that caused it): {msg}",
                env!("CARGO_PKG_VERSION")
            )
        }
    }
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

type Frames<'a> =
    dyn Fn(&[CellResult]) -> Result<(polars::prelude::DataFrame, polars::prelude::DataFrame)> + 'a;

/// The store's loop, for any world: check the lock, skip finished cells, run the rest in chunks
/// on a rayon pool, publish a part about once a second, and merge the parts at the end.
#[allow(clippy::too_many_arguments)]
fn run_cells(
    exp: &Experiment,
    info: &DataInfo,
    grid: &cell::CellGrid,
    opts: &RunOptions,
    progress: &dyn Progress,
    run: &(dyn Fn(&Cell) -> Result<CellResult> + Sync),
    frames: &Frames<'_>,
    coded: &[(String, store::Names)],
    key_of: &(dyn Fn(&Cell) -> cache::CellKey + Sync),
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
            let began = if resolved.program.is_empty() {
                "an unknown build"
            } else {
                resolved.program.as_str()
            };
            let now = store::program();
            if began != now {
                progress.note(Level::Note, &format!(
                    "these results were begun by {began} and are continued by {now}; runs.parquet's column 'program' names the build of each cell"
                ));
            }
        }
        None => store::write_text_atomic(
            &lock,
            &lock_text(exp, info, grid.len(), &fingerprint, opts.shard)?,
        )?,
    }
    let done = store.finished()?;
    // Cells are made from their indices chunk by chunk: memory holds the chunk being run, not
    // the experiment's cells.
    let total = grid.len() as u64;
    let in_shard = |i: u64| opts.shard.is_none_or(|s| s.contains(i));
    let n_mine = (0..total).filter(|&i| in_shard(i)).count();
    let n_todo = n_mine - done.iter().filter(|&&i| i < total && in_shard(i)).count();
    let mut todo = (0..total)
        .filter(|&i| in_shard(i) && !done.contains(&i))
        .peekable();
    if n_mine > n_todo {
        progress.resumed(n_mine - n_todo);
    }
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
    let cache = opts
        .cache
        .as_deref()
        .map(cache::CellCache::open)
        .transpose()?;
    let min_s = opts.cache_min_s.unwrap_or(cache::MIN_CELL_S);
    if min_s.is_nan() || min_s < 0.0 {
        bail!(
            "the cell cache's least replay time to store a cell is {min_s} s; give a time >= 0 (0 stores every cell)"
        );
    }
    // A cell from the cache, or replayed (and stored in the cache); with the program that
    // replayed it when that was an earlier run.
    let run_one = |c: &Cell| -> Result<(CellResult, Option<String>)> {
        let Some(cache) = &cache else {
            return Ok((run(c)?, None));
        };
        let key = key_of(c);
        if let cache::Lookup::Hit(mut r, by) = cache.get(&key, progress) {
            r.index = c.index;
            return Ok((*r, Some(by)));
        }
        let t = std::time::Instant::now();
        let r = run(c)?;
        if t.elapsed().as_secs_f64() >= min_s {
            cache.put(&key, &r, progress);
        }
        Ok((r, None))
    };
    let frames_of = |results: &[CellResult],
                     by: &[Option<String>]|
     -> Result<(polars::prelude::DataFrame, polars::prelude::DataFrame)> {
        let (runs, traj) = frames(results)?;
        let traj = frames::keep_decisions(traj, exp.trajectories)?;
        let h = runs.height();
        let mut cols = runs.into_columns();
        // Rows are in cell order, as the results are (each chunk's cells are).
        let programs: Vec<&str> = by
            .iter()
            .map(|p| p.as_deref().unwrap_or(program.as_str()))
            .collect();
        debug_assert!(results.windows(2).all(|w| w[0].index < w[1].index));
        cols.push(Column::new("program".into(), programs));
        let runs = schema::frame(schema::RUNS, cols, h, &[])?;
        let m = traj.height();
        let traj = schema::frame(schema::TRAJECTORIES, traj.into_columns(), m, CODED)?;
        Ok((runs, traj))
    };
    let t0 = std::time::Instant::now();
    // Cells are run in chunks sized to take about CHUNK_S seconds; each chunk's results are
    // encoded into the current segment at once (nothing but a row group is held in memory), and
    // the segment is published as a part about once a second, so that a kill loses about a
    // second of work whatever the cells cost. With --batch-size, a chunk of that many cells is
    // published as a part, the first at once and later ones at most every MIN_PART_S seconds
    // (a floor: a part per cell of a fast experiment would cost more than the cells).
    let mut chunk = opts.batch_size.unwrap_or(threads).max(1);
    // Each segment's rows are grouped for where they will land in the final files, so that the
    // merge copies its row groups instead of encoding them again: runs go on from the rows
    // already on disk (true of a fresh run, and of a resumed one that continues in cell order).
    let new_segment = |offsets| store.segment_coded(coded.to_vec(), offsets);
    let mut segment = new_segment(store.rows_on_disk()?);
    let mut last_publish: Option<std::time::Instant> = match opts.batch_size {
        Some(_) => None,
        None => Some(std::time::Instant::now()),
    };
    let mut failed: Vec<u64> = Vec::new();
    let mut ran_ok = 0usize;
    // Stopped by the caller (Ctrl-C), not by a cell: a rerun then simply resumes.
    let mut interrupted = false;
    while todo.peek().is_some() {
        let now: Vec<Cell> = todo.by_ref().take(chunk).map(|i| grid.cell(i)).collect();
        let tb = std::time::Instant::now();
        let outcomes: Vec<Result<(CellResult, Option<String>)>> = pool.install(|| {
            now.par_iter()
                .map(|c| {
                    let r = run_one(c);
                    progress.advance(1);
                    r
                })
                .collect()
        });
        // The replay's time alone sizes the next chunk: encoding and publishing have a fixed
        // part that, counted in, would shrink chunks towards a cell or two on a slow build.
        let replay_s = tb.elapsed().as_secs_f64().max(1e-4);
        let mut stop = None;
        let mut finished: Vec<CellResult> = Vec::with_capacity(outcomes.len());
        let mut by: Vec<Option<String>> = Vec::with_capacity(outcomes.len());
        for (c, r) in now.iter().zip(outcomes) {
            match r {
                Ok((r, p)) => {
                    finished.push(r);
                    by.push(p);
                }
                // An external policy with on_failure = "restart": report, go on, list at the end.
                Err(e) if keeps_going(&e) => {
                    progress.note(Level::Error, &format!("{e:#}"));
                    failed.push(c.index);
                }
                Err(e) => {
                    stop.get_or_insert(e);
                }
            }
        }
        ran_ok += finished.len();
        // Even with no cell finished: the files then still get their columns.
        let (runs, traj) = frames_of(&finished, &by)?;
        drop(finished);
        segment.push(runs, traj)?;
        if stop.is_none() && todo.peek().is_some() && progress.interrupted() {
            stop = Some(anyhow::anyhow!("interrupted"));
            interrupted = true;
        }
        if let Some(e) = stop {
            // Every cell that finished is kept: published now, resumed past on the next run.
            store.publish_part(segment)?;
            store.merge()?;
            return Err(e.context(format!(
                "the run stopped; {} finished cells of this run are kept in {} ({})",
                n_mine - n_todo + ran_ok,
                out.display(),
                if interrupted {
                    "running the same command again resumes"
                } else {
                    "a replay is deterministic, so the cell below fails again as it is: fix what it names, then the same command resumes past the finished cells"
                }
            )));
        }
        let floor = if opts.batch_size.is_some() {
            MIN_PART_S
        } else {
            1.0
        };
        let due = last_publish.is_none_or(|t| t.elapsed().as_secs_f64() >= floor);
        // The last segment may become the final files (see `Store::finish`).
        if due && todo.peek().is_some() {
            let offsets = segment.end_offsets();
            store.publish_part(std::mem::replace(&mut segment, new_segment(offsets)))?;
            last_publish = Some(std::time::Instant::now());
        }
        if opts.batch_size.is_none() {
            let aim = (chunk as f64 * CHUNK_S / replay_s) as usize;
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
            n_mine - failed.len(),
            out.display()
        );
    }
    Ok(RunSummary {
        out,
        total_cells: n_mine,
        already_done: n_mine - n_todo,
        ran: n_todo,
        cache: cache.map(|c| c.counts()),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// A cell error after which the run goes on (an external policy with `on_failure = "restart"`).
fn keeps_going(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<crate::protocol::PolicyFailure>()
            .is_some_and(|p| p.keep_going)
    })
}

/// What `merge` did.
pub(crate) struct MergeSummary {
    pub out: PathBuf,
    pub cells: usize,
    pub folders: usize,
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
        shards.push(
            resolved
                .shard
                .as_deref()
                .map(Shard::parse)
                .transpose()
                .with_context(|| format!("{}: key 'resolved.shard'", lock.display()))?,
        );
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
