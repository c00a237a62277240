//! The results store: `runs.parquet`, `trajectories.parquet` and `experiment.lock.toml`.
//!
//! While an experiment runs, each finished batch of cells is written to `parts/` as a pair of
//! parquet files, each first to a temporary name and then renamed, trajectories before runs: a
//! part exists exactly when its `runs-*.parquet` does. Killing the process at any moment therefore
//! loses at most the batch in flight. At the end the parts are merged, sorted by cell, into the two
//! final files, so the output does not depend on batch boundaries, threads or resumes.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::merge::merge_files;
pub use super::parquet::Names;
use super::parquet::{ParquetFile, RawGroup};

pub use crate::results::read_parquet;
pub(crate) use crate::results::{LOCK, RESULTS_FORMAT, RUNS, TRAJECTORIES};
const PARTS: &str = "parts";

/// Rows per row group of trajectory files, and the rows the merge reads at a time from each.
const TRAJ_ROWS: usize = 1 << 16;
/// The same for runs files (whose rows are wider).
const RUNS_ROWS: usize = 1 << 13;

pub use crate::build::{build_commit, program};

/// After a file is written: check that it has the size the parquet writer wrote, so a write the
/// file system lost (a full disk) is an error.
pub(super) fn check_size(path: &Path, written: u64) -> Result<()> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("{}: cannot read its size", path.display()))?
        .len();
    if len != written {
        bail!(
            "{}: {len} bytes on disk of the {written} written (is the disk full?); nothing was published, rerun when there is space",
            path.display()
        );
    }
    Ok(())
}

pub(super) fn sync(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("{}: cannot flush to disk", path.display()))
}

pub(super) fn publish(tmp: &Path, path: &Path) -> Result<()> {
    std::fs::rename(tmp, path).with_context(|| format!("{}: cannot publish", path.display()))
}

pub(super) fn tmp_of(path: &Path) -> PathBuf {
    path.with_extension("parquet.tmp")
}

/// A results file written as rows arrive, in row groups of exactly `rows` rows counted from
/// row `offset` of the final file it will be merged into (the first group holds the rows up to
/// the next multiple of `rows`, the last one fewer), so that its layout depends only on its rows
/// and where they land, not on how they arrived; the merge then copies its whole groups as they
/// are.
pub(super) struct Grouped {
    file: ParquetFile,
    path: PathBuf,
    rows: usize,
    /// Where the next row written lands in the final file.
    at: u64,
    /// Rows given so far.
    given: u64,
    /// Rows not yet written: fewer than the next group's.
    acc: DataFrame,
}

impl Grouped {
    pub(super) fn create(
        path: PathBuf,
        schema: &Schema,
        rows: usize,
        coded: &[(String, Names)],
        offset: u64,
    ) -> Result<Grouped> {
        Ok(Grouped {
            file: ParquetFile::create(&path, schema, coded)?,
            path,
            rows,
            at: offset,
            given: 0,
            acc: DataFrame::empty(),
        })
    }

    /// Rows of the next group to write.
    fn next_group(&self) -> usize {
        self.rows - (self.at % self.rows as u64) as usize
    }

    pub(super) fn push(&mut self, df: DataFrame) -> Result<()> {
        self.given += df.height() as u64;
        if self.acc.height() == 0 {
            // Taken as it is: stacked on an empty frame, it would be copied when written.
            self.acc = df;
        } else {
            self.acc
                .vstack_mut(&df)
                .map_err(anyhow::Error::from)
                .with_context(|| {
                    format!(
                        "{}: rows whose columns differ from the earlier ones",
                        self.path.display()
                    )
                })?;
        }
        loop {
            let n = self.next_group();
            if self.acc.height() < n {
                break;
            }
            self.file
                .write_group(&self.acc.slice(0, n))
                .with_context(|| format!("{}: cannot write parquet", self.path.display()))?;
            self.acc = self.acc.slice(n as i64, self.acc.height() - n);
            self.at += n as u64;
        }
        Ok(())
    }

    /// Whether a whole row group read from another file can be copied here as it is: no rows
    /// are pending and the next group starts on a multiple of `rows`.
    pub(super) fn copies(&self, group_rows: usize) -> bool {
        self.acc.height() == 0 && self.next_group() == self.rows && group_rows == self.rows
    }

    /// Copy a whole row group (see `copies`), unchanged.
    pub(super) fn copy(&mut self, group: RawGroup) -> Result<()> {
        let rows = group.rows();
        if !self.copies(rows) {
            bail!(
                "{}: a row group of {rows} rows copied at row {} with {} pending (a bug)",
                self.path.display(),
                self.at,
                self.acc.height()
            );
        }
        self.file
            .write_raw(group)
            .with_context(|| format!("{}: cannot write parquet", self.path.display()))?;
        self.at += rows as u64;
        self.given += rows as u64;
        Ok(())
    }

    /// Rows given so far.
    pub(super) fn rows_given(&self) -> u64 {
        self.given
    }

    /// Write the last rows and the footer, check the size and flush to disk; the file is not
    /// yet published (the caller renames it).
    pub(super) fn close(self) -> Result<PathBuf> {
        let Grouped {
            mut file,
            path,
            acc,
            ..
        } = self;
        file.write_group(&acc)
            .with_context(|| format!("{}: cannot write parquet", path.display()))?;
        let written = file
            .finish()
            .with_context(|| format!("{}: cannot write parquet", path.display()))?;
        check_size(&path, written)?;
        sync(&path)?;
        Ok(path)
    }
}

/// Results being written as a run goes (trajectories and runs, sorted by cell), into temporary
/// files under `parts/`: published as a part about once a second, or, when they are a fresh
/// run's only results, as the final files themselves, so that a short run encodes each row once
/// and holds no more than a row group of it in memory.
pub struct Segment {
    parts: PathBuf,
    files: Option<(Grouped, Grouped)>,
    /// Trajectory columns that hold codes for strings (see `ParquetFile::create`).
    coded: Vec<(String, Names)>,
    /// Where its first trajectory row and its first runs row will land in the final files (see
    /// `Grouped`).
    offsets: (u64, u64),
}

impl Segment {
    /// Append frames (both sorted by cell, after the rows already given).
    pub fn push(&mut self, runs: DataFrame, traj: DataFrame) -> Result<()> {
        if self.files.is_none() {
            self.files = Some((
                Grouped::create(
                    self.parts.join(SEGMENT_TRAJ),
                    traj.schema(),
                    TRAJ_ROWS,
                    &self.coded,
                    self.offsets.0,
                )?,
                Grouped::create(
                    self.parts.join(SEGMENT_RUNS),
                    runs.schema(),
                    RUNS_ROWS,
                    &[],
                    self.offsets.1,
                )?,
            ));
        }
        if let Some((t, r)) = self.files.as_mut() {
            t.push(traj)?;
            r.push(runs)?;
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_none()
    }

    /// Where the rows after this segment's will land in the final files: (trajectories, runs).
    pub fn end_offsets(&self) -> (u64, u64) {
        match &self.files {
            None => self.offsets,
            Some((t, r)) => (
                self.offsets.0 + t.rows_given(),
                self.offsets.1 + r.rows_given(),
            ),
        }
    }

    /// A segment of no store, written into `dir` (a folder of its own: the files' names are
    /// fixed), whose bytes `into_bytes` gives: a chunk of cells encoded where it was replayed.
    pub fn detached(dir: PathBuf, coded: Vec<(String, Names)>) -> Segment {
        Segment {
            parts: dir,
            files: None,
            coded,
            offsets: (0, 0),
        }
    }

    /// Close both files and read them back: (trajectories, runs) as parquet bytes, or None when
    /// nothing was pushed. The files are removed.
    pub fn into_bytes(self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let Some((t, r)) = self.close()? else {
            return Ok(None);
        };
        let read = |p: &Path| -> Result<Vec<u8>> {
            let b = std::fs::read(p).with_context(|| format!("{}: cannot read", p.display()))?;
            let _ = std::fs::remove_file(p);
            Ok(b)
        };
        Ok(Some((read(&t)?, read(&r)?)))
    }

    /// Close both files: (trajectories, runs), flushed, unpublished.
    fn close(self) -> Result<Option<(PathBuf, PathBuf)>> {
        match self.files {
            None => Ok(None),
            Some((t, r)) => Ok(Some((t.close()?, r.close()?))),
        }
    }
}

const SEGMENT_TRAJ: &str = "segment-traj.parquet.tmp";
const SEGMENT_RUNS: &str = "segment-runs.parquet.tmp";

/// Write `text` to `path` through a temporary file and a rename, so that a kill leaves either
/// the old file or the new one.
pub fn write_text_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("{}: cannot write", tmp.display()))?;
    sync(&tmp)?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot publish", path.display()))
}

/// The `cell` column of a results file (only that column is read).
pub fn read_cells(path: &Path) -> Result<Vec<u64>> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let df = ParquetReader::new(file)
        .with_columns(Some(vec!["cell".into()]))
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read its 'cell' column", path.display()))?;
    Ok(df
        .column("cell")?
        .u64()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: column 'cell' is not u64", path.display()))?
        .iter()
        .flatten()
        .collect())
}

/// Whether an error comes from a full disk (ENOSPC), wherever it sits in the chain.
pub(crate) fn disk_full(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| {
            io.kind() == std::io::ErrorKind::StorageFull || io.raw_os_error() == Some(28)
        })
    }) || format!("{e:#}").contains("No space left on device")
}

/// A failed write of merged rows: a full disk is said so (the inputs are intact: nothing is
/// deleted before the merged file is published), anything else names the input being copied.
pub(super) fn merge_write_error(e: anyhow::Error, out: &Path, input: &Path) -> anyhow::Error {
    if disk_full(&e) {
        return anyhow::anyhow!(
            "{}: cannot write the merged results: the disk is full (No space left on device). Nothing is lost: the inputs (the parts under parts/, or the shards) are intact and were not changed; free some space and run the same command again to merge them",
            out.display()
        );
    }
    e.context(format!(
        "{}: cannot write the rows merged from {} (the inputs are intact)",
        out.display(),
        input.display()
    ))
}

pub struct Store {
    pub dir: PathBuf,
    /// Held while the store is open: an exclusive lock on `.banditbench.lock`, so two runs
    /// cannot write one folder.
    _lock: File,
}

const FOLDER_LOCK: &str = ".banditbench.lock";

/// Test hook: milliseconds to wait inside the merge, after the final files are published and
/// before the parts are removed (the window a kill must not turn into duplicated rows).
const PAUSE_IN_MERGE: &str = "BANDITBENCH_TEST_PAUSE_IN_MERGE_MS";

impl Store {
    pub fn open(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir.join(PARTS))
            .with_context(|| format!("{}: cannot create the results folder", dir.display()))?;
        let lock_path = dir.join(FOLDER_LOCK);
        let lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .with_context(|| format!("{}: cannot open", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                anyhow::bail!(
                    "{}: another banditbench run is writing this results folder ({}); wait for it to finish, or give this run another --out",
                    dir.display(),
                    if holder.trim().is_empty() {
                        "holder unknown".to_string()
                    } else {
                        holder.trim().to_string()
                    }
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("{}: cannot lock", lock_path.display()));
            }
        }
        {
            use std::io::Write as _;
            let mut f = &lock;
            f.set_len(0)?;
            let _ = write!(
                f,
                "pid {} on {}, started at unix time {}",
                std::process::id(),
                std::env::var("HOSTNAME")
                    .ok()
                    .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
                    .unwrap_or_else(|| "this machine".into())
                    .trim(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
            );
        }
        // Temporary files are what a kill left half-written: never published, safe to remove.
        for d in [dir.to_path_buf(), dir.join(PARTS)] {
            for e in std::fs::read_dir(&d)? {
                let p = e?.path();
                if p.extension().is_some_and(|x| x == "tmp") {
                    std::fs::remove_file(&p)?;
                }
            }
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    fn part_files(&self, prefix: &str) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let parts = self.dir.join(PARTS);
        if !parts.is_dir() {
            return Ok(out);
        }
        for e in std::fs::read_dir(&parts)? {
            let p = e?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with(prefix) && name.ends_with(".parquet") {
                out.push(p);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Delete the finished results: the final files, the published parts and the lock file
    /// (`run --fresh`). Other files in the folder (a report, say) stay.
    pub fn clear(&self) -> Result<()> {
        let mut files = vec![
            self.dir.join(RUNS),
            self.dir.join(TRAJECTORIES),
            self.dir.join(LOCK),
        ];
        files.extend(self.part_files("runs-")?);
        files.extend(self.part_files("traj")?);
        for f in files {
            match std::fs::remove_file(&f) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("{}: cannot delete", f.display())),
            }
        }
        Ok(())
    }

    /// Whether published parts wait to be merged (a run was cut off).
    pub fn has_parts(&self) -> Result<bool> {
        Ok(!self.part_files("runs-")?.is_empty())
    }

    /// Cells already finished: in the final runs file or in a published part.
    pub fn finished(&self) -> Result<BTreeSet<u64>> {
        let mut done = BTreeSet::new();
        let mut files = self.part_files("runs-")?;
        let final_runs = self.dir.join(RUNS);
        if final_runs.is_file() {
            files.push(final_runs);
        }
        for p in files {
            let cells = read_cells(&p).with_context(|| {
                format!(
                    "{}: cannot be read, so this run cannot resume; if it is a part under parts/, delete it (its cells are run again, every other finished cell is kept)",
                    p.display()
                )
            })?;
            done.extend(cells);
        }
        Ok(done)
    }

    /// The next free part number.
    fn next_part(&self) -> Result<u64> {
        let mut max = 0;
        for p in self.part_files("runs-")? {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if let Some(n) = stem
                .strip_prefix("runs-")
                .and_then(|n| n.parse::<u64>().ok())
            {
                max = max.max(n);
            }
        }
        Ok(max + 1)
    }

    /// An empty segment of this store (see `Segment`).
    #[cfg(test)]
    pub fn segment(&self) -> Segment {
        self.segment_coded(Vec::new(), (0, 0))
    }

    /// An empty segment whose trajectory frames hold u32 codes for strings in the columns named
    /// in `coded` (written as the strings), and whose rows will land at `offsets` (trajectories,
    /// runs) of the final files: a guess that only decides the part's row groups (see
    /// `Grouped`), so that the merge can copy them; the merge checks where they really land.
    pub fn segment_coded(&self, coded: Vec<(String, Names)>, offsets: (u64, u64)) -> Segment {
        Segment {
            parts: self.dir.join(PARTS),
            files: None,
            coded,
            offsets,
        }
    }

    /// The trajectory parts whose runs part is among `run_parts`: one without it was cut off by
    /// a kill, and is not published.
    fn published_traj_parts(&self, run_parts: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let published: BTreeSet<String> = run_parts
            .iter()
            .filter_map(|p| {
                p.file_name()?
                    .to_str()?
                    .strip_prefix("runs-")
                    .map(String::from)
            })
            .collect();
        Ok(self
            .part_files("traj-")?
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("traj-"))
                    .is_some_and(|n| published.contains(n))
            })
            .collect())
    }

    /// Rows of the results already here, final files and published parts: (trajectories, runs).
    /// A run that goes on after them in cell order writes its rows from there.
    pub fn rows_on_disk(&self) -> Result<(u64, u64)> {
        let rows = |files: Vec<PathBuf>| -> Result<u64> {
            let mut n = 0;
            for f in files.iter().filter(|f| f.is_file()) {
                n += super::parquet::group_index(f, "cell")?.meta.num_rows as u64;
            }
            Ok(n)
        };
        let with_final = |name: &str, mut parts: Vec<PathBuf>| {
            parts.push(self.dir.join(name));
            parts
        };
        let run_parts = self.part_files("runs-")?;
        Ok((
            rows(with_final(
                TRAJECTORIES,
                self.published_traj_parts(&run_parts)?,
            ))?,
            rows(with_final(RUNS, run_parts))?,
        ))
    }

    /// Publish a segment as a part: trajectories first, then runs (whose presence marks the part
    /// complete). An empty segment publishes nothing.
    pub fn publish_part(&self, segment: Segment) -> Result<()> {
        let Some((traj, runs)) = segment.close()? else {
            return Ok(());
        };
        let n = self.next_part()?;
        let parts = self.dir.join(PARTS);
        publish(&traj, &parts.join(format!("traj-{n:06}.parquet")))?;
        publish(&runs, &parts.join(format!("runs-{n:06}.parquet")))
    }

    /// Publish a part encoded elsewhere (`Segment::into_bytes`): both files written under
    /// temporary names and checked, then published, trajectories first, when `check` accepts
    /// the part's cells (read back from the runs file). Returns them.
    pub fn publish_part_bytes(
        &self,
        traj: &[u8],
        runs: &[u8],
        check: impl FnOnce(&[u64]) -> Result<()>,
    ) -> Result<Vec<u64>> {
        let parts = self.dir.join(PARTS);
        std::fs::create_dir_all(&parts)
            .with_context(|| format!("{}: cannot create", parts.display()))?;
        let (t, r) = (parts.join(SEGMENT_TRAJ), parts.join(SEGMENT_RUNS));
        for (path, bytes) in [(&t, traj), (&r, runs)] {
            std::fs::write(path, bytes)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            check_size(path, bytes.len() as u64)?;
            sync(path)?;
        }
        let cells = read_cells(&r)?;
        if let Err(e) = check(&cells) {
            let _ = std::fs::remove_file(&t);
            let _ = std::fs::remove_file(&r);
            return Err(e);
        }
        let n = self.next_part()?;
        publish(&t, &parts.join(format!("traj-{n:06}.parquet")))?;
        publish(&r, &parts.join(format!("runs-{n:06}.parquet")))?;
        Ok(cells)
    }

    /// Publish a batch of frames (both sorted by cell) as a part.
    #[cfg(test)]
    pub fn write_part(&self, runs: DataFrame, traj: DataFrame) -> Result<()> {
        let mut segment = self.segment();
        segment.push(runs, traj)?;
        self.publish_part(segment)
    }

    /// End a run: its last segment becomes the final files when it holds all the results (no
    /// final file and no part yet: a fresh run that published no part), and otherwise is
    /// published as a part and merged with the rest.
    pub fn finish(&self, segment: Segment) -> Result<()> {
        let fresh = !self.has_parts()?
            && !self.dir.join(RUNS).exists()
            && !self.dir.join(TRAJECTORIES).exists();
        if fresh && !segment.is_empty() {
            if let Some((traj, runs)) = segment.close()? {
                publish(&traj, &self.dir.join(TRAJECTORIES))?;
                publish(&runs, &self.dir.join(RUNS))?;
            }
            return Ok(());
        }
        self.publish_part(segment)?;
        self.merge()
    }

    /// Merge the final files and all published parts into the final files, sorted by cell, then
    /// remove the parts. Streams: memory does not grow with the size of the results. Idempotent:
    /// a kill between publishing the final files and removing the parts leaves cells in both,
    /// and the next merge keeps one copy of each.
    pub fn merge(&self) -> Result<()> {
        let run_parts = self.part_files("runs-")?;
        if run_parts.is_empty() {
            return Ok(());
        }
        let traj_parts = self.published_traj_parts(&run_parts)?;
        let with_final = |name: &str, parts: Vec<PathBuf>| -> Vec<PathBuf> {
            let f = self.dir.join(name);
            f.is_file().then_some(f).into_iter().chain(parts).collect()
        };
        let traj_tmp = merge_files(
            &with_final(TRAJECTORIES, traj_parts),
            &self.dir.join(TRAJECTORIES),
            TRAJ_ROWS,
        )?;
        let runs_tmp = merge_files(
            &with_final(RUNS, run_parts),
            &self.dir.join(RUNS),
            RUNS_ROWS,
        )?;

        publish(&traj_tmp, &self.dir.join(TRAJECTORIES))?;
        publish(&runs_tmp, &self.dir.join(RUNS))?;
        if let Some(ms) = std::env::var(PAUSE_IN_MERGE)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        for p in self
            .part_files("runs-")?
            .into_iter()
            .chain(self.part_files("traj-")?)
        {
            std::fs::remove_file(p)?;
        }
        Ok(())
    }

    /// Merge finished results folders (shards) into this store's final files. The caller has
    /// checked that their cells are disjoint.
    pub fn merge_from(&self, dirs: &[PathBuf]) -> Result<()> {
        let files = |name: &str| -> Vec<PathBuf> { dirs.iter().map(|d| d.join(name)).collect() };
        let traj_tmp = merge_files(
            &files(TRAJECTORIES),
            &self.dir.join(TRAJECTORIES),
            TRAJ_ROWS,
        )?;
        let runs_tmp = merge_files(&files(RUNS), &self.dir.join(RUNS), RUNS_ROWS)?;
        publish(&traj_tmp, &self.dir.join(TRAJECTORIES))?;
        publish(&runs_tmp, &self.dir.join(RUNS))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("banditbench-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn frames(cells: &[u64]) -> (DataFrame, DataFrame) {
        let runs = DataFrame::new_infer_height(vec![
            Column::new("cell".into(), cells.to_vec()),
            Column::new(
                "score".into(),
                cells.iter().map(|&c| c as f64 / 10.0).collect::<Vec<_>>(),
            ),
        ])
        .unwrap();
        let (mut c, mut s) = (Vec::new(), Vec::new());
        for &cell in cells {
            for step in 1..=3u32 {
                c.push(cell);
                s.push(step);
            }
        }
        let traj = DataFrame::new_infer_height(vec![
            Column::new("cell".into(), c),
            Column::new("step".into(), s),
        ])
        .unwrap();
        (runs, traj)
    }

    #[test]
    fn a_merge_after_a_kill_in_the_merge_window_keeps_one_copy_of_each_cell() {
        let dir = scratch("merge");
        let store = Store::open(&dir).unwrap();
        let (r, t) = frames(&[0, 2]);
        store.write_part(r, t).unwrap();
        let (r, t) = frames(&[1]);
        store.write_part(r, t).unwrap();
        store.merge().unwrap();
        let runs = read_parquet(&dir.join(RUNS)).unwrap();
        assert_eq!(runs.height(), 3);
        // The state a kill between publishing the final files and deleting the parts leaves: the
        // final files hold cells 0-2 and the parts hold them again.
        let (r, t) = frames(&[0, 1, 2]);
        store.write_part(r, t).unwrap();
        store.merge().unwrap();
        let runs = read_parquet(&dir.join(RUNS)).unwrap();
        let traj = read_parquet(&dir.join(TRAJECTORIES)).unwrap();
        assert_eq!(runs.height(), 3);
        assert_eq!(traj.height(), 9);
        let cells: Vec<u64> = runs
            .column("cell")
            .unwrap()
            .u64()
            .unwrap()
            .iter()
            .flatten()
            .collect();
        assert_eq!(cells, [0, 1, 2]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parts_in_cell_order_are_merged_one_at_a_time_and_interleaved_ones_together() {
        // Six parts of one run, published in cell order: the merge holds one chunk at a time,
        // so its memory does not grow with the number of parts (a long run publishes one a
        // second). Three shards interleave cell by cell: all three are read together.
        let dir = scratch("lazy");
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: String, cells: Vec<u64>| -> PathBuf {
            let (r, _) = frames(&cells);
            let f = dir.join(name);
            let mut g = Grouped::create(f.clone(), r.schema(), RUNS_ROWS, &[], 0).unwrap();
            g.push(r).unwrap();
            publish(&g.close().unwrap(), &f).unwrap();
            f
        };
        let files: Vec<PathBuf> = (0..6u64)
            .map(|p| write(format!("in-{p}.parquet"), (p * 10..p * 10 + 10).collect()))
            .collect();
        let (out, counts) =
            super::super::merge::merge_counted(&files, &dir.join("out.parquet"), 4).unwrap();
        assert_eq!(counts.most_loaded, 1);
        assert_eq!(read_cells(&out).unwrap(), (0..60).collect::<Vec<u64>>());
        let shards: Vec<PathBuf> = (0..3u64)
            .map(|i| {
                let cells = (0..20).filter(|c| c % 3 == i).collect();
                write(format!("shard-{i}.parquet"), cells)
            })
            .collect();
        let (out, counts) =
            super::super::merge::merge_counted(&shards, &dir.join("out2.parquet"), 4).unwrap();
        assert_eq!(counts.most_loaded, 3);
        assert_eq!(read_cells(&out).unwrap(), (0..20).collect::<Vec<u64>>());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parts_grouped_for_where_they_land_are_copied_by_row_group_into_the_same_bytes() {
        // Three parts of one run, 10 rows each, merged in row groups of 4 rows. Written for
        // their place in the final file (offsets 0, 10, 20), their whole groups of 4 fall on the
        // output's boundaries and are copied undecoded; only the rows around a part boundary
        // are merged row by row. The bytes equal those of the parts written without offsets
        // (merged row by row), and those of one file written at once.
        use super::super::merge::merge_counted;
        let dir = scratch("copy");
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, cells: Vec<u64>, offset: u64| -> PathBuf {
            let (_, t) = frames(&cells);
            let f = dir.join(name);
            let mut g = Grouped::create(f.clone(), t.schema(), 4, &[], offset).unwrap();
            // Given in two pieces: groups do not depend on how rows arrive.
            g.push(t.slice(0, 5)).unwrap();
            g.push(t.slice(5, t.height())).unwrap();
            publish(&g.close().unwrap(), &f).unwrap();
            f
        };
        let cells = |p: u64| (p * 3..p * 3 + 3).collect::<Vec<u64>>();
        // frames() gives 3 trajectory rows a cell: 9 rows a part, 27 in all.
        let aligned: Vec<PathBuf> = (0..3u64)
            .map(|p| write(&format!("a-{p}.parquet"), cells(p), p * 9))
            .collect();
        let plain: Vec<PathBuf> = (0..3u64)
            .map(|p| write(&format!("p-{p}.parquet"), cells(p), 0))
            .collect();
        let whole = write("whole.parquet", (0..9).collect(), 0);
        let (a, ca) = merge_counted(&aligned, &dir.join("a.parquet"), 4).unwrap();
        let (p, cp) = merge_counted(&plain, &dir.join("p.parquet"), 4).unwrap();
        // Part 0: rows 0-3, 4-7 copied, row 8 merged; part 1 (from row 9): 9-11 merged, 12-15
        // copied, 16-17 merged; part 2 (from row 18): 18-19 merged, 20-23 copied, 24-26 merged.
        assert_eq!(ca.copied, 4);
        // Without offsets only part 0's groups fall on the output's boundaries.
        assert_eq!(cp.copied, 2);
        let bytes = |f: &Path| std::fs::read(f).unwrap();
        assert_eq!(bytes(&a), bytes(&p));
        assert_eq!(bytes(&a), bytes(&whole));
        // A final file and parts holding the same cells (a kill after publishing the final
        // file; cells in two inputs are merged row by row): one copy of each, the same bytes.
        let mut again = vec![whole.clone()];
        again.extend(aligned.iter().cloned());
        let (d, _) = merge_counted(&again, &dir.join("d.parquet"), 4).unwrap();
        assert_eq!(bytes(&d), bytes(&whole));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn interleaved_parts_merge_in_cell_order_and_unsorted_ones_are_refused() {
        let dir = scratch("interleave");
        let store = Store::open(&dir).unwrap();
        for cells in [&[1u64, 4, 7][..], &[0, 3, 6, 9], &[2, 5, 8]] {
            let (r, t) = frames(cells);
            store.write_part(r, t).unwrap();
        }
        store.merge().unwrap();
        assert_eq!(
            read_cells(&dir.join(RUNS)).unwrap(),
            (0..10).collect::<Vec<u64>>()
        );
        let traj = read_parquet(&dir.join(TRAJECTORIES)).unwrap();
        let steps: Vec<u32> = traj
            .column("step")
            .unwrap()
            .u32()
            .unwrap()
            .iter()
            .flatten()
            .collect();
        assert_eq!(steps, [1, 2, 3].repeat(10));
        // A part out of order is an error naming it, and the final files are untouched.
        let before = std::fs::read(dir.join(RUNS)).unwrap();
        let (r, t) = frames(&[12, 11]);
        store.write_part(r, t).unwrap();
        let e = format!("{:#}", store.merge().unwrap_err());
        assert!(
            e.contains("parts/traj-000001.parquet: rows are not sorted by cell"),
            "{e}"
        );
        assert_eq!(std::fs::read(dir.join(RUNS)).unwrap(), before);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fresh_runs_only_segment_is_published_as_the_final_files_as_a_merge_would_write_them() {
        let cells: Vec<u64> = (0..30_000).collect();
        // A segment fed in uneven pieces (row groups cross the pieces' boundaries) ...
        let a = scratch("segment");
        let store = Store::open(&a).unwrap();
        let mut seg = store.segment();
        for piece in [&cells[..7], &cells[7..25_000], &cells[25_000..]] {
            let (r, t) = frames(piece);
            seg.push(r, t).unwrap();
        }
        store.finish(seg).unwrap();
        assert!(!store.has_parts().unwrap());
        assert_eq!(std::fs::read_dir(a.join(PARTS)).unwrap().count(), 0);
        // ... against the same cells published as three parts and merged.
        let b = scratch("parts");
        let other = Store::open(&b).unwrap();
        for piece in [&cells[20_000..], &cells[..5], &cells[5..20_000]] {
            let (r, t) = frames(piece);
            other.write_part(r, t).unwrap();
        }
        other.merge().unwrap();
        for f in [RUNS, TRAJECTORIES] {
            assert_eq!(
                std::fs::read(a.join(f)).unwrap(),
                std::fs::read(b.join(f)).unwrap(),
                "{f}"
            );
        }
        assert_eq!(
            read_parquet(&a.join(TRAJECTORIES)).unwrap().height(),
            90_000
        );
        let _ = std::fs::remove_dir_all(&a);
        let _ = std::fs::remove_dir_all(&b);
    }

    #[test]
    fn a_last_segment_after_published_parts_is_merged_with_them() {
        let dir = scratch("segment-and-parts");
        let store = Store::open(&dir).unwrap();
        let (r, t) = frames(&[0, 1]);
        store.write_part(r, t).unwrap();
        let mut seg = store.segment();
        let (r, t) = frames(&[2, 3]);
        seg.push(r, t).unwrap();
        store.finish(seg).unwrap();
        assert!(!store.has_parts().unwrap());
        assert_eq!(read_cells(&dir.join(RUNS)).unwrap(), [0, 1, 2, 3]);
        // An empty last segment with nothing to merge leaves the final files as they are.
        let before = std::fs::read(dir.join(RUNS)).unwrap();
        store.finish(store.segment()).unwrap();
        assert_eq!(std::fs::read(dir.join(RUNS)).unwrap(), before);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_merge_of_empty_parts_writes_files_with_the_columns() {
        let dir = scratch("empty");
        let store = Store::open(&dir).unwrap();
        let (r, t) = frames(&[]);
        store.write_part(r, t).unwrap();
        store.merge().unwrap();
        let runs = read_parquet(&dir.join(RUNS)).unwrap();
        assert_eq!((runs.height(), runs.width()), (0, 2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_second_run_on_an_open_folder_is_refused_naming_the_holder() {
        let dir = scratch("lock");
        let first = Store::open(&dir).unwrap();
        let e = Store::open(&dir).err().unwrap().to_string();
        assert!(
            e.contains("another banditbench run is writing this results folder")
                && e.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(first);
        // Released when the first run ends.
        assert!(Store::open(&dir).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A full disk is recognised however the error reached us (an io::Error under context, or
    /// polars' text of one), and the merge says so instead of blaming an input.
    #[test]
    fn a_full_disk_is_named_as_such() {
        let enospc = || std::io::Error::from_raw_os_error(28);
        let e = anyhow::Error::from(enospc()).context("writing a row group");
        assert!(disk_full(&e));
        let e = anyhow::Error::from(PolarsError::from(enospc()));
        assert!(disk_full(&e), "{e:#}");
        let other = anyhow::anyhow!("schema mismatch");
        assert!(!disk_full(&other));
        let m = merge_write_error(
            anyhow::Error::from(enospc()),
            Path::new("out"),
            Path::new("parts/runs-000001.parquet"),
        )
        .to_string();
        assert!(
            m.contains("the disk is full") && m.contains("intact"),
            "{m}"
        );
        let m = format!(
            "{:#}",
            merge_write_error(other, Path::new("out"), Path::new("p.parquet"))
        );
        assert!(
            m.contains("p.parquet") && !m.contains("does not match"),
            "{m}"
        );
    }
}
