//! The streaming merge of results files: inputs sorted by cell are read a chunk at a time and
//! written, sorted by cell, in row groups of a fixed size, so memory does not grow with the
//! results and the bytes do not depend on where the inputs began or ended.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::parquet::{GroupIndex, GroupInfo, RawGroup, group_index, read_raw_group};
use super::store::{Grouped, merge_write_error, tmp_of};

/// One input of the streaming merge: a results file sorted by cell, read a row group at a
/// time. Its row groups' first and last cells come from the file's statistics, so a group is
/// decoded only when some of its rows must be merged row by row; a whole group that falls on
/// the output's row-group boundaries is copied as it is.
struct Cursor {
    path: PathBuf,
    index: GroupIndex,
    /// The current row group: loaded (decoded) or not yet.
    group: usize,
    chunk: DataFrame,
    cells: Vec<u64>,
    pos: usize,
    loaded: bool,
    last_cell: Option<u64>,
}

impl Cursor {
    fn open(path: &Path) -> Result<(Cursor, DataFrame)> {
        let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
        let empty = ParquetReader::new(file)
            .with_slice(Some((0, 0)))
            .finish()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot read as parquet", path.display()))?;
        let index = group_index(path, "cell")?;
        Ok((
            Cursor {
                path: path.to_path_buf(),
                index,
                group: 0,
                chunk: DataFrame::empty(),
                cells: Vec::new(),
                pos: 0,
                loaded: false,
                last_cell: None,
            },
            empty,
        ))
    }

    fn info(&self) -> Option<GroupInfo> {
        self.index.groups.get(self.group).copied()
    }

    /// Decode the current row group unless it is loaded or the file is used up.
    fn load(&mut self) -> Result<()> {
        let Some(info) = self.info() else {
            return Ok(());
        };
        if self.loaded {
            return Ok(());
        }
        let file = File::open(&self.path)
            .with_context(|| format!("{}: cannot open", self.path.display()))?;
        let mut df = ParquetReader::new(file)
            .with_slice(Some((info.first_row, info.rows)))
            .finish()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot read as parquet", self.path.display()))?;
        df.rechunk_mut();
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
            self.check_sorted(c)?;
            self.last_cell = Some(c);
        }
        self.chunk = df;
        self.cells = cells;
        self.pos = 0;
        self.loaded = true;
        // A group with no rows is passed over.
        self.next_if_used_up();
        Ok(())
    }

    fn check_sorted(&self, c: u64) -> Result<()> {
        if self.last_cell.is_some_and(|l| c < l) {
            bail!(
                "{}: rows are not sorted by cell (cell {c} after {}); this file was not written by banditbench, or is damaged",
                self.path.display(),
                self.last_cell.unwrap_or(0)
            );
        }
        Ok(())
    }

    /// Past a used-up loaded group: to the next one, not loaded.
    fn next_if_used_up(&mut self) {
        if self.loaded && self.pos >= self.cells.len() {
            self.chunk = DataFrame::empty();
            self.cells = Vec::new();
            self.pos = 0;
            self.loaded = false;
            self.group += 1;
        }
    }

    /// Make the head known: a group without statistics is loaded.
    fn ready(&mut self) -> Result<()> {
        while !self.loaded
            && let Some(info) = self.info()
        {
            if info.min.is_some() && info.rows > 0 {
                return Ok(());
            }
            self.load()?;
        }
        Ok(())
    }

    /// The next cell (`None`: used up). Call `ready` first.
    fn head(&self) -> Option<u64> {
        if self.loaded {
            self.cells.get(self.pos).copied()
        } else {
            self.info().and_then(|i| i.min)
        }
    }

    /// The current group's last cell when it is not loaded and all of it is below `bound`.
    fn whole_group_below(&self, bound: u64) -> Option<(GroupInfo, u64)> {
        let info = self.info()?;
        let max = info.max?;
        (!self.loaded && max < bound).then_some((info, max))
    }

    /// The current (unloaded) group, undecoded, moving past it.
    fn take_group(&mut self) -> Result<(RawGroup, u64)> {
        let info = self
            .info()
            .context("a row group past the file's end (a bug)")?;
        let (min, max) = (info.min.unwrap_or(0), info.max.unwrap_or(0));
        self.check_sorted(min)?;
        let raw = read_raw_group(&self.path, &self.index, self.group)?;
        self.last_cell = Some(max);
        self.group += 1;
        Ok((raw, max))
    }

    /// Rows of the current group with cell < `bound`, consumed (loading it first).
    fn take_below(&mut self, bound: u64) -> Result<(DataFrame, u64)> {
        self.load()?;
        let end = self.pos + self.cells[self.pos..].partition_point(|&c| c < bound);
        let piece = self.chunk.slice(self.pos as i64, end - self.pos);
        let last = self.cells[end - 1];
        self.pos = end;
        self.next_if_used_up();
        Ok((piece, last))
    }

    /// Skip rows with cell <= `cell` (copies of cells another input already gave): whole groups
    /// by their statistics, without decoding them.
    fn skip_through(&mut self, cell: u64) -> Result<()> {
        loop {
            self.ready()?;
            let Some(info) = self.info() else {
                return Ok(());
            };
            if !self.loaded {
                match (info.min, info.max) {
                    (Some(min), _) if min > cell => return Ok(()),
                    (_, Some(max)) if max <= cell => {
                        self.last_cell = Some(max);
                        self.group += 1;
                        continue;
                    }
                    _ => self.load()?,
                }
            }
            match self.head() {
                Some(h) if h <= cell => {
                    self.pos += self.cells[self.pos..].partition_point(|&c| c <= cell);
                    self.next_if_used_up();
                }
                _ => return Ok(()),
            }
        }
    }
}

/// Merge results files, each sorted by cell, into one file sorted by cell at `out` (written to
/// a temporary file, flushed, not yet published: the caller renames it). A cell found in several
/// inputs is taken from the first. Memory: one chunk of `rows` rows per input whose cells
/// interleave with another's, plus one row group, whatever the files' sizes: inputs that do not
/// interleave (the parts of one run, published in cell order) are read one after another and
/// hold one chunk between them. The output's row groups hold exactly `rows` rows (the last
/// fewer), so it does not depend on how the rows were split among the inputs.
pub(super) fn merge_files(inputs: &[PathBuf], out: &Path, rows: usize) -> Result<PathBuf> {
    merge_counted(inputs, out, rows).map(|(p, _)| p)
}

/// What a merge did: the most inputs that held a decoded row group at once, and the row groups
/// it copied undecoded.
#[derive(Debug, Default, PartialEq)]
pub(super) struct MergeCounts {
    pub most_loaded: usize,
    pub copied: usize,
}

/// [`merge_files`], also returning what it did.
pub(super) fn merge_counted(
    inputs: &[PathBuf],
    out: &Path,
    rows: usize,
) -> Result<(PathBuf, MergeCounts)> {
    let mut counts = MergeCounts::default();
    let mut cursors = Vec::with_capacity(inputs.len());
    let mut schema: Option<(DataFrame, &Path)> = None;
    let mut opened: Vec<(Cursor, DataFrame, &Path)> = Vec::new();
    for p in inputs {
        let (c, empty) = Cursor::open(p)?;
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
    let mut writer = Grouped::create(tmp_of(out), empty.schema(), rows, &[], 0)?;
    // The last cell given, and by which input: its copies elsewhere are skipped.
    let mut last: Option<(u64, usize)> = None;
    loop {
        for (j, c) in cursors.iter_mut().enumerate() {
            match last {
                Some((cell, owner)) if owner != j => c.skip_through(cell)?,
                _ => c.ready()?,
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
        // Take every row below the other inputs' next cell (all the rest of this input when no
        // other input has rows); on a tie, only this cell, whose copies elsewhere are skipped.
        let bound = match next {
            None => u64::MAX,
            Some(n) if n > head => n,
            Some(_) => head + 1,
        };
        let last_cell = match cursors[b].whole_group_below(bound) {
            // A whole group that lands on the output's group boundaries: copied undecoded.
            Some((info, _)) if writer.copies(info.rows) => {
                let (raw, max) = cursors[b].take_group()?;
                writer
                    .copy(raw)
                    .map_err(|e| merge_write_error(e, out, &inputs[b]))?;
                counts.copied += 1;
                max
            }
            _ => {
                cursors[b].load()?;
                counts.most_loaded = counts
                    .most_loaded
                    .max(cursors.iter().filter(|c| c.loaded).count());
                let (piece, last_cell) = cursors[b].take_below(bound)?;
                writer
                    .push(piece)
                    .map_err(|e| merge_write_error(e, out, &inputs[b]))?;
                last_cell
            }
        };
        last = Some((last_cell, b));
    }
    let path = writer
        .close()
        .map_err(|e| merge_write_error(e, out, &inputs[0]))?;
    Ok((path, counts))
}
