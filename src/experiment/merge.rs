//! The streaming merge of results files: inputs sorted by cell are read a chunk at a time and
//! written, sorted by cell, in row groups of a fixed size, so memory does not grow with the
//! results and the bytes do not depend on where the inputs began or ended.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::store::{Grouped, merge_write_error, tmp_of};

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
    /// The file's first cell (`None`: no rows), known without loading a chunk.
    first: Option<u64>,
    /// Whether chunks are loaded: an input is started when its first cell is reached, so that
    /// inputs that do not overlap (the parts of one run) hold one chunk at a time between them.
    started: bool,
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
        let first = if total == 0 {
            None
        } else {
            let file =
                File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
            let df = ParquetReader::new(file)
                .with_columns(Some(vec!["cell".into()]))
                .with_slice(Some((0, 1)))
                .finish()
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{}: no u64 column 'cell'", path.display()))?;
            df.column("cell")
                .and_then(|c| c.u64().cloned())
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{}: no u64 column 'cell'", path.display()))?
                .get(0)
        };
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
                first,
                started: false,
            },
            empty,
        ))
    }

    /// Make sure the current chunk has a row unless the file is used up (then hold none). Starts
    /// the input.
    fn fill(&mut self) -> Result<()> {
        self.started = true;
        if self.pos >= self.cells.len() && self.next >= self.total && !self.cells.is_empty() {
            self.chunk = DataFrame::empty();
            self.cells = Vec::new();
            self.pos = 0;
        }
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
        if self.started {
            self.cells.get(self.pos).copied()
        } else {
            self.first
        }
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
        if !self.started && self.first.is_none_or(|f| f > cell) {
            return Ok(());
        }
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
/// inputs is taken from the first. Memory: one chunk of `rows` rows per input whose cells
/// interleave with another's, plus one row group, whatever the files' sizes: inputs that do not
/// interleave (the parts of one run, published in cell order) are read one after another and
/// hold one chunk between them. The output's row groups hold exactly `rows` rows (the last
/// fewer), so it does not depend on how the rows were split among the inputs.
pub(super) fn merge_files(inputs: &[PathBuf], out: &Path, rows: usize) -> Result<PathBuf> {
    merge_counted(inputs, out, rows).map(|(p, _)| p)
}

/// [`merge_files`], also returning the most inputs that held a chunk at once.
pub(super) fn merge_counted(
    inputs: &[PathBuf],
    out: &Path,
    rows: usize,
) -> Result<(PathBuf, usize)> {
    let mut most_loaded = 0;
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
                // An input not yet reached stays unloaded: its head is its first cell.
                _ if c.started => c.fill()?,
                _ => {}
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
        cursors[b].fill()?;
        most_loaded = most_loaded.max(cursors.iter().filter(|c| !c.cells.is_empty()).count());
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
    let path = writer
        .close()
        .map_err(|e| merge_write_error(e, out, &inputs[0]))?;
    Ok((path, most_loaded))
}
