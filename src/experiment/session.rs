//! One way to run an experiment's cells, wherever they are replayed.
//!
//! A [`Session`] is an open run on a results folder: the folder locked, the lock file checked or
//! written, the finished cells known, the cell cache open. Finished cells are handed to it in
//! chunks and encoded into parts; [`Session::finish`] merges them into the final files. The
//! local route ([`super::run_experiment`]) replays chunks on this process's threads; another
//! executor (Dask, from Python) replays chunks elsewhere with [`run_chunk`] and hands their
//! [`ChunkOutput`] to [`Session::accept_chunk`]. Both replay a cell with the same
//! [`CellRunner`], so a cell's result and the folder's bytes do not depend on the route.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use polars::prelude::{Column, DataFrame};

use super::cache::{self, CacheCounts, CellCache, KeyMaker};
use super::cell::{Cell, CellGrid, CellResult};
use super::frames::{self, CODED};
use super::lock::{check_lock, lock_text, read_lock};
use super::progress::{Level, Progress};
use super::store::{self, LOCK, Segment, Store};
use super::{Data, Experiment, RunOptions, RunSummary, TrajectoryMode, caught, default_out};
use crate::results::schema;

/// Replays cells of one experiment, through the cell cache when there is one.
pub struct CellRunner {
    grid: CellGrid,
    /// This build, for the rows of the cells it replays.
    program: String,
    keys: KeyMaker,
    cache: Option<CellCache>,
    min_s: f64,
    record_steps: bool,
}

/// A replayed cell, and the program that replayed it when that was an earlier run (a hit).
pub type Finished = (CellResult, Option<String>);

impl CellRunner {
    /// The runner of `exp`'s cells on `data`, with the cache `opts` names.
    pub fn new(exp: &Experiment, data: &Data, opts: &RunOptions) -> Result<CellRunner> {
        let min_s = opts.cache_min_s.unwrap_or(cache::MIN_CELL_S);
        if min_s.is_nan() || min_s < 0.0 {
            bail!(
                "the cell cache's least replay time to store a cell is {min_s} s; give a time >= 0 (0 stores every cell)"
            );
        }
        Ok(CellRunner {
            grid: data.cell_grid(exp),
            program: store::program(),
            keys: KeyMaker::new(exp, &data.info(), data.n_tasks())?,
            cache: opts.cache.as_deref().map(CellCache::open).transpose()?,
            min_s,
            record_steps: exp.trajectories != TrajectoryMode::None,
        })
    }

    /// How many cells the experiment has.
    pub fn cells(&self) -> usize {
        self.grid.len()
    }

    /// Cell `index`.
    pub fn cell(&self, index: u64) -> Cell {
        self.grid.cell(index)
    }

    /// What the cache did so far, when there is one.
    pub fn cache_counts(&self) -> Option<CacheCounts> {
        self.cache.as_ref().map(CellCache::counts)
    }

    /// The results files' frames of finished cells (in cell order), with each row's program.
    fn frames_of(
        &self,
        exp: &Experiment,
        data: &Data,
        finished: Vec<Finished>,
    ) -> Result<(DataFrame, DataFrame)> {
        let (results, by): (Vec<CellResult>, Vec<Option<String>>) = finished.into_iter().unzip();
        debug_assert!(results.windows(2).all(|w| w[0].index < w[1].index));
        let (runs, traj) = data.frames(&results, &self.grid, exp)?;
        drop(results);
        let traj = frames::keep_decisions(traj, exp.trajectories)?;
        let h = runs.height();
        let mut cols = runs.into_columns();
        let programs: Vec<&str> = by
            .iter()
            .map(|p| p.as_deref().unwrap_or(self.program.as_str()))
            .collect();
        cols.push(Column::new("program".into(), programs));
        let runs = schema::frame(schema::RUNS, cols, h, &[])?;
        let m = traj.height();
        let traj = schema::frame(schema::TRAJECTORIES, traj.into_columns(), m, CODED)?;
        Ok((runs, traj))
    }

    /// Replay cell `c` (a panic becomes an error naming it), or take it from the cache; store a
    /// replayed cell that took at least the floor.
    pub fn run(
        &self,
        exp: &Experiment,
        data: &Data,
        c: &Cell,
        progress: &dyn Progress,
    ) -> Result<Finished> {
        let replay = || {
            caught(&format!("cell {}", c.index), || {
                data.run_cell(c, exp, self.record_steps)
            })
        };
        let Some(cache) = &self.cache else {
            return Ok((replay()?, None));
        };
        let key = self.keys.key(&self.grid, c);
        if let cache::Lookup::Hit(mut r, by) = cache.get(&key, progress) {
            r.index = c.index;
            return Ok((*r, Some(by)));
        }
        let t = std::time::Instant::now();
        let r = replay()?;
        if t.elapsed().as_secs_f64() >= self.min_s {
            cache.put(&key, &r, progress);
        }
        Ok((r, None))
    }
}

/// What a chunk replayed elsewhere sends back: its finished cells encoded there as a part (so
/// that the process holding the folder only writes bytes), the cells that failed but let the run
/// go on (an external policy with `on_failure = "restart"`), the cache's counts and the notes it
/// gave.
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub struct ChunkOutput {
    /// The finished cells, in order.
    pub cells: Vec<u64>,
    /// Their trajectories and runs as parquet files (`Segment::into_bytes`); empty when none
    /// finished.
    pub traj: Vec<u8>,
    /// The runs file.
    pub runs: Vec<u8>,
    /// Cells that failed and let the run go on, with their errors.
    pub failed: Vec<(u64, String)>,
    /// The cache's hits, cells stored and damaged entries, when there is a cache.
    pub cache: Option<(u64, u64, u64)>,
    /// Notes (true: a warning) the chunk gave.
    pub notes: Vec<(bool, String)>,
}

impl ChunkOutput {
    /// Its bytes (postcard), as an executor carries them.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        postcard::to_stdvec(self).context("cannot encode a chunk's results")
    }

    /// Read back the bytes of `to_bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<ChunkOutput> {
        postcard::from_bytes(bytes).context(
            "a chunk's results cannot be read: they come from another build of banditbench (the workers and the client must run the same version)",
        )
    }
}

/// Collects a chunk's notes (the cache's warnings) to send back with it.
#[derive(Default)]
struct Notes(std::sync::Mutex<Vec<(bool, String)>>);

impl Progress for Notes {
    fn note(&self, level: Level, text: &str) {
        if let Ok(mut v) = self.0.lock() {
            v.push((level != Level::Note, text.to_string()));
        }
    }
}

/// Replay the cells `indices` of `exp` one after another (an executor elsewhere: a Dask task).
/// A cell error that stops a run is returned as the error; one that lets it go on is listed.
pub fn run_chunk(
    exp: &Experiment,
    data: &Data,
    runner: &CellRunner,
    indices: &[u64],
) -> Result<ChunkOutput> {
    let notes = Notes::default();
    let before = runner.cache_counts().unwrap_or_default();
    let mut out = ChunkOutput::default();
    let mut finished = Vec::with_capacity(indices.len());
    for &i in indices {
        if i >= runner.cells() as u64 {
            bail!(
                "cell {i} is outside the experiment's {} cells",
                runner.cells()
            );
        }
        match runner.run(exp, data, &runner.cell(i), &notes) {
            Ok(f) => {
                out.cells.push(i);
                finished.push(f);
            }
            Err(e) if keeps_going(&e) => out.failed.push((i, format!("{e:#}"))),
            Err(e) => return Err(e),
        }
    }
    if !finished.is_empty() {
        finished.sort_by_key(|(r, _)| r.index);
        out.cells.sort_unstable();
        let (runs, traj) = runner.frames_of(exp, data, finished)?;
        let dir = chunk_dir()?;
        let mut segment = Segment::detached(dir.clone(), data.coded());
        let bytes = segment.push(runs, traj).and_then(|()| segment.into_bytes());
        let _ = std::fs::remove_dir_all(&dir);
        if let Some((traj, runs)) = bytes? {
            (out.traj, out.runs) = (traj, runs);
        }
    }
    if let Some(after) = runner.cache_counts() {
        out.cache = Some((
            after.hits - before.hits,
            after.stored - before.stored,
            after.corrupt - before.corrupt,
        ));
    }
    out.notes = notes.0.into_inner().unwrap_or_default();
    Ok(out)
}

/// A folder of its own for one chunk's files, under the system's temporary folder.
fn chunk_dir() -> Result<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("banditbench-chunk-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    Ok(dir)
}

/// A cell error after which the run goes on (an external policy with `on_failure = "restart"`).
pub(super) fn keeps_going(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<crate::protocol::PolicyFailure>()
            .is_some_and(|p| p.keep_going)
    })
}

/// An open run on a results folder.
pub struct Session {
    runner: std::sync::Arc<CellRunner>,
    store: Store,
    out: PathBuf,
    shard: Option<super::Shard>,
    done: BTreeSet<u64>,
    n_mine: usize,
    n_todo: usize,
    coded: Vec<(String, store::Names)>,
    /// The local route's segment: chunks arriving in cell order, grouped for where they land.
    segment: Option<Segment>,
    last_publish: Option<std::time::Instant>,
    failed: Vec<u64>,
    ran_ok: usize,
    /// Cache counts sent back by chunks replayed elsewhere.
    remote_cache: Option<CacheCounts>,
    t0: std::time::Instant,
}

impl Session {
    /// Open a run: check the work, lock the folder, check (or write) its lock file, find the
    /// finished cells; `progress` hears the grid's line.
    pub fn open(
        exp: &Experiment,
        data: &Data,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<Session> {
        data.check(exp)?;
        let runner = CellRunner::new(exp, data, opts)?;
        let info = data.info();
        let all_cells = runner.cells();
        let n_cells = opts.shard.map_or(all_cells, |s| s.cells_of(all_cells));
        progress.start(
            &grid_line(exp, data, &info, opts, (all_cells, n_cells)),
            n_cells,
        );
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
                note_other_build(&resolved.program, progress);
            }
            None => store::write_text_atomic(
                &lock,
                &lock_text(exp, &info, all_cells, &fingerprint, opts.shard)?,
            )?,
        }
        let done = store.finished()?;
        let total = all_cells as u64;
        let in_shard = |i: u64| opts.shard.is_none_or(|s| s.contains(i));
        let n_mine = (0..total).filter(|&i| in_shard(i)).count();
        let n_todo = n_mine - done.iter().filter(|&&i| i < total && in_shard(i)).count();
        if n_mine > n_todo {
            progress.resumed(n_mine - n_todo);
        }
        let coded = data.coded();
        let segment = Some(store.segment_coded(coded.clone(), store.rows_on_disk()?));
        Ok(Session {
            runner: std::sync::Arc::new(runner),
            store,
            out,
            shard: opts.shard,
            done,
            n_mine,
            n_todo,
            coded,
            segment,
            last_publish: Some(std::time::Instant::now()),
            failed: Vec::new(),
            ran_ok: 0,
            remote_cache: None,
            t0: std::time::Instant::now(),
        })
    }

    /// The cell runner, shared with the local route's threads.
    pub fn runner(&self) -> &std::sync::Arc<CellRunner> {
        &self.runner
    }

    /// The results folder.
    pub fn out(&self) -> &std::path::Path {
        &self.out
    }

    /// The cells this run is to replay from cell `from` on, in order.
    pub fn todo_from(&self, from: u64) -> impl Iterator<Item = u64> + '_ {
        (from..self.runner.cells() as u64)
            .filter(|&i| self.shard.is_none_or(|s| s.contains(i)) && !self.done.contains(&i))
    }

    /// How many cells this run is to replay.
    pub fn n_todo(&self) -> usize {
        self.n_todo
    }

    /// The local route: a chunk of cells in cell order, each after the last chunk's, encoded into
    /// the current segment, which is published as a part when `due` (about once a second) and
    /// more cells follow.
    pub fn accept_in_order(
        &mut self,
        exp: &Experiment,
        data: &Data,
        finished: Vec<Finished>,
        publish_after_s: f64,
        more: bool,
    ) -> Result<()> {
        self.ran_ok += finished.len();
        // Even with no cell finished: the files then still get their columns.
        let (runs, traj) = self.runner.frames_of(exp, data, finished)?;
        let segment = self.segment.as_mut().expect("an open segment");
        segment.push(runs, traj)?;
        let due = self
            .last_publish
            .is_none_or(|t| t.elapsed().as_secs_f64() >= publish_after_s);
        // The last segment may become the final files (see `Store::finish`).
        if due && more {
            let offsets = segment.end_offsets();
            let next = self.store.segment_coded(self.coded.clone(), offsets);
            let full = std::mem::replace(segment, next);
            self.store.publish_part(full)?;
            self.last_publish = Some(std::time::Instant::now());
        }
        Ok(())
    }

    /// Publish the next part at once, whatever is due (`--batch-size`'s first part).
    pub fn publish_now(&mut self) {
        self.last_publish = None;
    }

    /// A chunk replayed elsewhere, in any order: published as a part of its own at once.
    pub fn accept_chunk(&mut self, chunk: ChunkOutput, progress: &dyn Progress) -> Result<()> {
        for (warning, text) in &chunk.notes {
            progress.note(
                if *warning {
                    Level::Warning
                } else {
                    Level::Note
                },
                text,
            );
        }
        for (i, e) in &chunk.failed {
            progress.note(Level::Error, e);
            self.failed.push(*i);
        }
        if let Some((hits, stored, corrupt)) = chunk.cache {
            let c = self.remote_cache.get_or_insert_with(CacheCounts::default);
            c.hits += hits;
            c.stored += stored;
            c.corrupt += corrupt;
        }
        let n = chunk.cells.len();
        if n > 0 {
            let (cells, total, done) = (&chunk.cells, self.runner.cells() as u64, &self.done);
            self.store
                .publish_part_bytes(&chunk.traj, &chunk.runs, |got| {
                    if got != cells.as_slice() {
                        bail!("a chunk's results hold other cells than it names");
                    }
                    if let Some(c) = got.iter().find(|&&c| c >= total || done.contains(&c)) {
                        bail!(
                            "a chunk sent back cell {c}, which this run did not ask for (finished already, or outside the experiment)"
                        );
                    }
                    Ok(())
                })?;
        }
        self.ran_ok += n;
        self.done.extend(chunk.cells.iter().copied());
        progress.advance(n + chunk.failed.len());
        Ok(())
    }

    /// A cell error stopped the run (or the caller did): publish what finished, merge, and
    /// return the error with what was kept and how to go on.
    pub fn stop(mut self, e: anyhow::Error, interrupted: bool) -> anyhow::Error {
        let kept = self.n_mine - self.n_todo + self.ran_ok;
        let out = self.out.clone();
        if let Some(segment) = self.segment.take()
            && let Err(p) = self
                .store
                .publish_part(segment)
                .and_then(|()| self.store.merge())
        {
            return p.context(format!("{e:#}"));
        }
        e.context(format!(
            "the run stopped; {kept} finished cells of this run are kept in {} ({})",
            out.display(),
            if interrupted {
                "running the same command again resumes"
            } else {
                "a replay is deterministic, so the cell below fails again as it is: fix what it names, then the same command resumes past the finished cells"
            }
        ))
    }

    /// A cell failed but the run goes on (an external policy with `on_failure = "restart"`).
    pub fn failed(&mut self, index: u64) {
        self.failed.push(index);
    }

    /// Merge the parts into the final files; errors list the cells that failed and went on.
    pub fn finish(mut self) -> Result<RunSummary> {
        let segment = self.segment.take().expect("an open segment");
        self.store.finish(segment)?;
        if !self.failed.is_empty() {
            let f = &self.failed;
            let shown: Vec<String> = f.iter().take(20).map(u64::to_string).collect();
            bail!(
                "{} cell{} failed and {} unfinished (cell{} {}{}); the other {} cells are kept in {}; running the same command again retries the unfinished ones",
                f.len(),
                if f.len() == 1 { "" } else { "s" },
                if f.len() == 1 { "is" } else { "are" },
                if f.len() == 1 { "" } else { "s" },
                shown.join(", "),
                if f.len() > 20 { ", …" } else { "" },
                self.n_mine - f.len(),
                self.out.display()
            );
        }
        let cache = match (self.runner.cache_counts(), self.remote_cache) {
            (None, r) => r,
            (Some(l), None) => Some(l),
            (Some(l), Some(r)) => Some(CacheCounts {
                hits: l.hits + r.hits,
                stored: l.stored + r.stored,
                corrupt: l.corrupt + r.corrupt,
            }),
        };
        Ok(RunSummary {
            out: self.out,
            total_cells: self.n_mine,
            already_done: self.n_mine - self.n_todo,
            ran: self.n_todo,
            cache,
            seconds: self.t0.elapsed().as_secs_f64(),
        })
    }
}

/// The line describing a run's grid.
fn grid_line(
    exp: &Experiment,
    data: &Data,
    info: &super::DataInfo,
    opts: &RunOptions,
    (all_cells, n_cells): (usize, usize),
) -> String {
    format!(
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
    )
}

/// The lock file is never rewritten: it names the build that began the results; each cell's
/// build is in runs.parquet's `program` column. A run by another build says so.
fn note_other_build(began: &str, progress: &dyn Progress) {
    let began = if began.is_empty() {
        "an unknown build"
    } else {
        began
    };
    let now = store::program();
    if began != now {
        progress.note(Level::Note, &format!(
            "these results were begun by {began} and are continued by {now}; runs.parquet's column 'program' names the build of each cell"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::PolicyFailure;

    #[test]
    fn only_a_restartable_policy_failure_lets_the_run_go_on_whatever_wraps_it() {
        let fail = |keep_going| {
            anyhow::Error::new(PolicyFailure {
                message: "died".into(),
                keep_going,
            })
            .context("cell 3")
            .context("task a/0")
        };
        assert!(keeps_going(&fail(true)));
        assert!(!keeps_going(&fail(false)));
        assert!(!keeps_going(&anyhow::anyhow!("a bug")));
    }
}
