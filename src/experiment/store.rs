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

use super::cell::{Cell, CellResult};
pub use super::parquet::Names;
use super::parquet::ParquetFile;
use super::spec::Experiment;
use crate::trace::TraceSet;

pub use crate::results::{LOCK, RESULTS_FORMAT, RUNS, TRAJECTORIES, read_parquet};
const PARTS: &str = "parts";

/// A JSON object from names to numbers, keys in sorted order, built by hand (this runs once per
/// cell; a `serde_json::Value` per cell cost a sixth of a cheap run).
pub(crate) struct JsonObject {
    /// (position in the value slice, `"name":`), sorted by name.
    keys: Vec<(usize, String)>,
}

impl JsonObject {
    pub(crate) fn new<S: AsRef<str>>(names: &[S]) -> JsonObject {
        let mut keys: Vec<(usize, String)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let quoted = serde_json::to_string(n.as_ref()).unwrap_or_else(|_| "\"\"".into());
                (i, format!("{quoted}:"))
            })
            .collect();
        keys.sort_by(|a, b| a.1.cmp(&b.1));
        JsonObject { keys }
    }

    /// The object over every name, values by position.
    #[cfg(test)]
    pub(crate) fn with<T: itoa::Integer + Copy>(&self, values: &[T]) -> String {
        let mut out = String::new();
        self.ints_into(values, &mut out);
        out
    }

    /// `with`, appended to `out`.
    pub(crate) fn ints_into<T: itoa::Integer + Copy>(&self, values: &[T], out: &mut String) {
        let mut buf = itoa::Buffer::new();
        self.write(out, |i, out| match values.get(i) {
            Some(&v) => {
                out.push_str(buf.format(v));
                true
            }
            None => false,
        })
    }

    /// The same for floats: shortest round-trip form (ryu's), `null` for NaN and infinities.
    #[cfg(test)]
    pub(crate) fn with_f64(&self, values: &[f64]) -> String {
        let mut out = String::new();
        self.floats_into(values, &mut out);
        out
    }

    /// `with_f64`, appended to `out`.
    pub(crate) fn floats_into(&self, values: &[f64], out: &mut String) {
        let mut buf = ryu::Buffer::new();
        self.write(out, |i, out| match values.get(i) {
            Some(&v) if v.is_finite() => {
                out.push_str(buf.format_finite(v));
                true
            }
            Some(_) => {
                out.push_str("null");
                true
            }
            None => false,
        })
    }

    /// The object over the names whose `keep` is true only.
    pub(crate) fn subset<T: itoa::Integer + Copy>(&self, keep: &[bool], values: &[T]) -> String {
        let mut buf = itoa::Buffer::new();
        let mut out = String::new();
        self.write(&mut out, |i, out| match (keep.get(i), values.get(i)) {
            (Some(true), Some(&v)) => {
                out.push_str(buf.format(v));
                true
            }
            _ => false,
        });
        out
    }

    /// Append the object to `out`; `value(i, out)` appends the value of name `i` and says
    /// whether there was one.
    fn write(&self, out: &mut String, mut value: impl FnMut(usize, &mut String) -> bool) {
        let start = out.len();
        out.push('{');
        for (i, k) in &self.keys {
            let mark = out.len();
            if out.len() > start + 1 {
                out.push(',');
            }
            out.push_str(k);
            if !value(*i, out) {
                out.truncate(mark);
            }
        }
        out.push('}');
    }
}

/// A string column of `n` rows, row `i` written by `row(i, out)` into a buffer reused across
/// rows (no string is allocated per row).
pub(crate) fn text_column(name: &str, n: usize, mut row: impl FnMut(usize, &mut String)) -> Column {
    let mut values = polars_arrow::array::MutableBinaryViewArray::<str>::with_capacity(n);
    let mut buf = String::new();
    for i in 0..n {
        buf.clear();
        row(i, &mut buf);
        values.push_value(buf.as_str());
    }
    StringChunked::with_chunk(name.into(), values.freeze())
        .into_series()
        .into()
}

/// A float column in which NaN is null, built over `values` without copying them (a column of
/// `Option<f64>` costs a copy and a branch per row).
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

/// Where a cell's identity comes from: its cell and its task's dataset and run.
pub(crate) struct Identity<'a> {
    pub cell: &'a Cell,
    pub dataset: &'a str,
    pub run: i64,
    pub budget_abs: f64,
    pub seed: u64,
}

/// The columns every world writes first, identifying each cell: experiment, cell, dataset, run,
/// budget, budget_unit, budget_abs, then `between` (world-specific), then policy_family, policy,
/// params, repetition, seed. Policy ids and parameters are formatted once per policy (and
/// dataset, for per-dataset parameters), not once per cell.
pub(crate) fn identity_columns(
    exp: &Experiment,
    rows: &[Identity<'_>],
    between: Vec<Column>,
) -> Vec<Column> {
    use std::collections::HashMap;
    let h = rows.len();
    let ids: Vec<String> = exp.policies.iter().map(|p| p.id()).collect();
    let plain: Vec<Option<String>> = exp
        .policies
        .iter()
        .map(|p| p.per_dataset.is_empty().then(|| p.params_json()))
        .collect();
    let mut per_dataset: HashMap<(usize, &str), String> = HashMap::new();
    for r in rows {
        let p = r.cell.policy;
        if plain[p].is_none() {
            per_dataset
                .entry((p, r.dataset))
                .or_insert_with(|| exp.policies[p].params_json_for(r.dataset));
        }
    }
    let params: Vec<&str> = rows
        .iter()
        .map(|r| {
            let p = r.cell.policy;
            plain[p]
                .as_deref()
                .unwrap_or_else(|| per_dataset[&(p, r.dataset)].as_str())
        })
        .collect();
    let mut cols = vec![
        Column::new("experiment".into(), vec![exp.name.as_str(); h]),
        Column::new(
            "cell".into(),
            rows.iter().map(|r| r.cell.index).collect::<Vec<u64>>(),
        ),
        Column::new(
            "dataset".into(),
            rows.iter().map(|r| r.dataset).collect::<Vec<&str>>(),
        ),
        Column::new(
            "run".into(),
            rows.iter().map(|r| r.run).collect::<Vec<i64>>(),
        ),
        Column::new(
            "budget".into(),
            rows.iter()
                .map(|r| exp.world.budgets[r.cell.budget])
                .collect::<Vec<f64>>(),
        ),
        Column::new("budget_unit".into(), vec![exp.world.unit.as_str(); h]),
        Column::new(
            "budget_abs".into(),
            rows.iter().map(|r| r.budget_abs).collect::<Vec<f64>>(),
        ),
    ];
    cols.extend(between);
    cols.extend([
        Column::new(
            "policy_family".into(),
            rows.iter()
                .map(|r| exp.policies[r.cell.policy].family_name())
                .collect::<Vec<&str>>(),
        ),
        Column::new(
            "policy".into(),
            rows.iter()
                .map(|r| ids[r.cell.policy].as_str())
                .collect::<Vec<&str>>(),
        ),
        Column::new("params".into(), params),
        Column::new(
            "repetition".into(),
            rows.iter().map(|r| r.cell.repetition).collect::<Vec<u32>>(),
        ),
        Column::new(
            "seed".into(),
            rows.iter().map(|r| r.seed).collect::<Vec<u64>>(),
        ),
    ]);
    cols
}

/// One row per cell; the columns are the results contract (see README, "Results format").
pub fn runs_frame(
    results: &[CellResult],
    cells: &[Cell],
    exp: &Experiment,
    ts: &TraceSet,
) -> Result<DataFrame> {
    let h = results.len();
    let task = |r: &CellResult| &ts.tasks[cells[r.index as usize].task];
    let rows: Vec<Identity<'_>> = results
        .iter()
        .map(|r| Identity {
            cell: &cells[r.index as usize],
            dataset: task(r).dataset.as_str(),
            run: task(r).run,
            budget_abs: r.budget_abs,
            seed: r.seed,
        })
        .collect();
    let f = |f: &dyn Fn(&CellResult) -> f64| -> Vec<f64> { results.iter().map(f).collect() };
    let of = |name: &str, f: &dyn Fn(&CellResult) -> f64| -> Column {
        nan_as_null(name, results.iter().map(f).collect())
    };
    let u = |f: &dyn Fn(&CellResult) -> u64| -> Vec<u64> { results.iter().map(f).collect() };
    let json = JsonObject::new(&ts.learners);
    let overhead = exp.world.overhead().describe();
    let mut cols = identity_columns(exp, &rows, vec![of("slice_abs", &|r| r.slice_abs)]);
    let jp = text_column("pulls", h, |i, out| json.ints_into(&results[i].pulls, out));
    let jt = text_column("time_s", h, |i, out| {
        json.floats_into(&results[i].time_s, out)
    });
    cols.extend([
        of("best_score", &|r| r.best_score),
        of("best_test_score", &|r| r.best_test_score),
        Column::new(
            "best_learner".into(),
            results
                .iter()
                .map(|r| r.best_arm.map(|a| ts.learners[a].as_str()))
                .collect::<Vec<Option<&str>>>(),
        ),
        of("best_found_at", &|r| r.best_found_at),
        jp,
        jt,
        Column::new("decisions".into(), u(&|r| r.decisions)),
        Column::new("budget_used".into(), f(&|r| r.used)),
        Column::new("overhead_s".into(), f(&|r| r.overhead_s)),
        Column::new("failures".into(), u(&|r| r.failures)),
        Column::new("exhausted_pulls".into(), u(&|r| r.exhausted_pulls)),
        Column::new("exhausted_budget".into(), f(&|r| r.exhausted_budget)),
        Column::new("replay".into(), vec![exp.world.kind().as_str(); h]),
        Column::new("overhead_model".into(), vec![overhead.as_str(); h]),
        Column::new("trace_set".into(), vec![ts.manifest.name.as_str(); h]),
        Column::new("trace_source".into(), vec![ts.manifest.source.as_str(); h]),
        Column::new("direction".into(), vec![ts.manifest.direction.as_str(); h]),
    ]);
    Ok(DataFrame::new_infer_height(cols)?)
}

/// The rows of a trajectories frame (sorted by cell and step) that `mode` keeps: all; each
/// cell's first decision and those after which its incumbent changed; or none.
pub fn keep_decisions(df: DataFrame, mode: super::TrajectoryMode) -> Result<DataFrame> {
    use super::TrajectoryMode as M;
    match mode {
        M::EveryDecision => Ok(df),
        M::None => Ok(df.clear()),
        M::IncumbentChanges => {
            let cell = df.column("cell")?.u64()?;
            let inc = df.column("incumbent")?.f64()?;
            let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
                (None, None) => true,
                _ => false,
            };
            let keep: BooleanChunked = (0..df.height())
                .map(|i| {
                    i == 0 || cell.get(i) != cell.get(i - 1) || !same(inc.get(i), inc.get(i - 1))
                })
                .collect();
            Ok(df.filter(&keep)?)
        }
    }
}

/// Every decision of every cell, in order. The `arm` column holds learner indices (into the
/// trace set's learners): the store writes the names (`Store::segment_coded`), so no name is
/// gathered per row here.
pub fn trajectories_frame(results: &[CellResult]) -> Result<DataFrame> {
    let n: usize = results.iter().map(|r| r.steps.len()).sum();
    let mut cell = Vec::with_capacity(n);
    let mut step = Vec::with_capacity(n);
    let mut arm = Vec::with_capacity(n);
    let mut time = Vec::with_capacity(n);
    let mut inc = Vec::with_capacity(n);
    let mut reward = Vec::with_capacity(n);
    // Column by column per cell: each `extend` is a tight loop.
    for r in results {
        let s = &r.steps;
        cell.extend(std::iter::repeat_n(r.index, s.len()));
        step.extend(1..=s.len() as u32);
        arm.extend(s.iter().map(|s| s.arm));
        time.extend(s.iter().map(|s| s.time));
        inc.extend(s.iter().map(|s| s.incumbent));
        reward.extend(s.iter().map(|s| s.reward));
    }
    // Columns over the vectors built here, not copies of them.
    Ok(DataFrame::new_infer_height(vec![
        UInt64Chunked::from_vec("cell".into(), cell).into_column(),
        UInt32Chunked::from_vec("step".into(), step).into_column(),
        UInt32Chunked::from_vec("arm".into(), arm).into_column(),
        Float64Chunked::from_vec("time".into(), time).into_column(),
        nan_as_null("reward", reward),
        nan_as_null("incumbent", inc),
    ])?)
}

/// Rows per row group of trajectory files, and the rows the merge reads at a time from each.
const TRAJ_ROWS: usize = 1 << 16;
/// The same for runs files (whose rows are wider).
const RUNS_ROWS: usize = 1 << 13;

pub use crate::build::{build_commit, program};

/// After a file is written: check that it has the size the parquet writer wrote, so a write the
/// file system lost (a full disk) is an error.
fn check_size(path: &Path, written: u64) -> Result<()> {
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

fn sync(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("{}: cannot flush to disk", path.display()))
}

fn publish(tmp: &Path, path: &Path) -> Result<()> {
    std::fs::rename(tmp, path).with_context(|| format!("{}: cannot publish", path.display()))
}

fn tmp_of(path: &Path) -> PathBuf {
    path.with_extension("parquet.tmp")
}

/// A results file written as rows arrive, in row groups of exactly `rows` rows (the last one
/// fewer), so that its layout depends only on its rows, not on how they arrived.
struct Grouped {
    file: ParquetFile,
    path: PathBuf,
    rows: usize,
    /// Rows not yet written: fewer than `rows`.
    acc: DataFrame,
}

impl Grouped {
    fn create(
        path: PathBuf,
        schema: &Schema,
        rows: usize,
        coded: &[(String, Names)],
    ) -> Result<Grouped> {
        Ok(Grouped {
            file: ParquetFile::create(&path, schema, coded)?,
            path,
            rows,
            acc: DataFrame::empty(),
        })
    }

    fn push(&mut self, df: DataFrame) -> Result<()> {
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
        while self.acc.height() >= self.rows {
            self.file
                .write_group(&self.acc.slice(0, self.rows))
                .with_context(|| format!("{}: cannot write parquet", self.path.display()))?;
            self.acc = self
                .acc
                .slice(self.rows as i64, self.acc.height() - self.rows);
        }
        Ok(())
    }

    /// Write the last rows and the footer, check the size and flush to disk; the file is not
    /// yet published (the caller renames it).
    fn close(self) -> Result<PathBuf> {
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
                )?,
                Grouped::create(self.parts.join(SEGMENT_RUNS), runs.schema(), RUNS_ROWS, &[])?,
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

/// One input of the streaming merge: a results file sorted by cell, read `rows` at a time.
struct Cursor {
    path: PathBuf,
    rows: usize,
    total: usize,
    next: usize,
    chunk: DataFrame,
    cells: Vec<u64>,
    pos: usize,
    last_cell: Option<u64>,
}

impl Cursor {
    fn open(path: &Path, rows: usize) -> Result<(Cursor, DataFrame)> {
        let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
        let mut reader = ParquetReader::new(file);
        let total = reader
            .num_rows()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot read as parquet", path.display()))?;
        let empty = reader
            .with_slice(Some((0, 0)))
            .finish()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot read as parquet", path.display()))?;
        Ok((
            Cursor {
                path: path.to_path_buf(),
                rows,
                total,
                next: 0,
                chunk: DataFrame::empty(),
                cells: Vec::new(),
                pos: 0,
                last_cell: None,
            },
            empty,
        ))
    }

    /// Make sure the current chunk has a row unless the file is used up.
    fn fill(&mut self) -> Result<()> {
        while self.pos >= self.cells.len() && self.next < self.total {
            let file = File::open(&self.path)
                .with_context(|| format!("{}: cannot open", self.path.display()))?;
            let mut df = ParquetReader::new(file)
                .with_slice(Some((self.next, self.rows)))
                .finish()
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{}: cannot read as parquet", self.path.display()))?;
            df.rechunk_mut();
            self.next += df.height().max(1);
            let cell = df
                .column("cell")
                .and_then(|c| c.u64().cloned())
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{}: no u64 column 'cell'", self.path.display()))?;
            let cells: Vec<u64> = match cell.cont_slice() {
                Ok(s) => s.to_vec(),
                Err(_) => cell.iter().map(|c| c.unwrap_or(u64::MAX)).collect(),
            };
            for &c in &cells {
                if self.last_cell.is_some_and(|l| c < l) {
                    bail!(
                        "{}: rows are not sorted by cell (cell {c} after {}); this file was not written by banditbench, or is damaged",
                        self.path.display(),
                        self.last_cell.unwrap_or(0)
                    );
                }
                self.last_cell = Some(c);
            }
            self.chunk = df;
            self.cells = cells;
            self.pos = 0;
        }
        Ok(())
    }

    fn head(&self) -> Option<u64> {
        self.cells.get(self.pos).copied()
    }

    /// Rows of the current chunk with cell < `bound`, consumed.
    fn take_below(&mut self, bound: u64) -> (DataFrame, u64) {
        let end = self.pos + self.cells[self.pos..].partition_point(|&c| c < bound);
        let piece = self.chunk.slice(self.pos as i64, end - self.pos);
        let last = self.cells[end - 1];
        self.pos = end;
        (piece, last)
    }

    /// Skip rows with cell <= `cell` (copies of cells another input already gave).
    fn skip_through(&mut self, cell: u64) -> Result<()> {
        loop {
            self.fill()?;
            match self.head() {
                Some(h) if h <= cell => {
                    self.pos += self.cells[self.pos..].partition_point(|&c| c <= cell);
                }
                _ => return Ok(()),
            }
        }
    }
}

/// Merge results files, each sorted by cell, into one file sorted by cell at `out` (written to
/// a temporary file, flushed, not yet published: the caller renames it). A cell found in several
/// inputs is taken from the first. Memory: one chunk of `rows` rows per input plus one row group,
/// whatever the files' sizes. The output's row groups hold exactly `rows` rows (the last fewer),
/// so it does not depend on how the rows were split among the inputs.
fn merge_files(inputs: &[PathBuf], out: &Path, rows: usize) -> Result<PathBuf> {
    let mut cursors = Vec::with_capacity(inputs.len());
    let mut schema: Option<(DataFrame, &Path)> = None;
    let mut opened: Vec<(Cursor, DataFrame, &Path)> = Vec::new();
    for p in inputs {
        let (c, empty) = Cursor::open(p, rows)?;
        opened.push((c, empty, p));
    }
    for (c, empty, p) in opened {
        match &schema {
            None => schema = Some((empty, p)),
            Some((first, fp)) => {
                if first.schema() != empty.schema() {
                    bail!(
                        "{}: its columns differ from those of {} (results from another version of banditbench or another experiment cannot be merged)",
                        p.display(),
                        fp.display()
                    );
                }
            }
        }
        cursors.push(c);
    }
    let Some((empty, _)) = schema else {
        bail!("{}: nothing to merge", out.display());
    };
    let mut writer = Grouped::create(tmp_of(out), empty.schema(), rows, &[])?;
    // The last cell given, and by which input: its copies elsewhere are skipped.
    let mut last: Option<(u64, usize)> = None;
    loop {
        for (j, c) in cursors.iter_mut().enumerate() {
            match last {
                Some((cell, owner)) if owner != j => c.skip_through(cell)?,
                _ => c.fill()?,
            }
        }
        let mut best: Option<(u64, usize)> = None;
        for (j, c) in cursors.iter().enumerate() {
            if let Some(h) = c.head()
                && best.is_none_or(|(b, _)| h < b)
            {
                best = Some((h, j));
            }
        }
        let Some((head, b)) = best else { break };
        let next = cursors
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != b)
            .filter_map(|(_, c)| c.head())
            .min();
        // Take every row below the other inputs' next cell (all the rest of this chunk when no
        // other input has rows); on a tie, only this cell, whose copies elsewhere are skipped.
        let bound = match next {
            None => u64::MAX,
            Some(n) if n > head => n,
            Some(_) => head + 1,
        };
        let (piece, last_cell) = cursors[b].take_below(bound);
        writer
            .push(piece)
            .map_err(|e| merge_write_error(e, out, &inputs[b]))?;
        last = Some((last_cell, b));
    }
    writer
        .close()
        .map_err(|e| merge_write_error(e, out, &inputs[0]))
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
fn merge_write_error(e: anyhow::Error, out: &Path, input: &Path) -> anyhow::Error {
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
    pub fn segment(&self) -> Segment {
        self.segment_coded(Vec::new())
    }

    /// An empty segment whose trajectory frames hold u32 codes for strings in the columns named
    /// in `coded` (written as the strings).
    pub fn segment_coded(&self, coded: Vec<(String, Names)>) -> Segment {
        Segment {
            parts: self.dir.join(PARTS),
            files: None,
            coded,
        }
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
        // A trajectory part without its runs part was cut off by a kill: not published.
        let published: BTreeSet<String> = run_parts
            .iter()
            .filter_map(|p| {
                p.file_name()?
                    .to_str()?
                    .strip_prefix("runs-")
                    .map(String::from)
            })
            .collect();
        let traj_parts: Vec<PathBuf> = self
            .part_files("traj-")?
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("traj-"))
                    .is_some_and(|n| published.contains(n))
            })
            .collect();
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
    fn json_objects_are_sorted_escaped_and_parse_back() {
        let j = JsonObject::new(&["b", "a\"q", "c"]);
        assert_eq!(j.with(&[1u64, 2, 3]), r#"{"a\"q":2,"b":1,"c":3}"#);
        assert_eq!(
            j.with_f64(&[0.5, f64::NAN, 1e-7]),
            r#"{"a\"q":null,"b":0.5,"c":1e-7}"#
        );
        assert_eq!(
            j.subset(&[true, false, true], &[1, 2, 3]),
            r#"{"b":1,"c":3}"#
        );
        assert_eq!(j.subset(&[false, false, false], &[1, 2, 3]), "{}");
        let v: serde_json::Value = serde_json::from_str(&j.with_f64(&[3.0, 2.25, 1e300])).unwrap();
        assert_eq!(v["b"].as_f64(), Some(3.0));
        assert_eq!(v["c"].as_f64(), Some(1e300));
        // Every number, repeated or not, reads back to the same bits.
        let names: Vec<String> = (0..40).map(|i| format!("l{i:02}")).collect();
        let xs: Vec<f64> = (0..40)
            .map(|i| match i % 4 {
                0 | 1 => 0.041_212_29,
                2 => 1.0 / (i as f64 + 3.0),
                _ => -(i as f64) * 1e-9,
            })
            .collect();
        let v: serde_json::Value =
            serde_json::from_str(&JsonObject::new(&names).with_f64(&xs)).unwrap();
        for (n, x) in names.iter().zip(&xs) {
            assert_eq!(v[n].as_f64().map(f64::to_bits), Some(x.to_bits()), "{n}");
        }
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
