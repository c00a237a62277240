//! Loading and validating a trace set's evaluations with polars.
//!
//! Every rule of format v1 is checked here, and every violation is reported with the file, the
//! row (1-based data row; for CSV also the line), the column and the rule, so that a user can fix
//! the file without reading this code. Up to `MAX_PROBLEMS` problems are listed at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use polars::prelude::*;

use super::manifest::read_manifest;
use super::{Arm, DroppedTask, Status, Task, TraceSet};
use crate::rng::fnv1a64;

const MAX_PROBLEMS: usize = 20;
const REQUIRED: [&str; 6] = ["dataset", "learner", "run", "seq", "elapsed_s", "score"];
const OPTIONAL: [&str; 6] = [
    "cost_s",
    "test_score",
    "status",
    "config",
    "config_id",
    "fidelity",
];

/// Which tasks and arms to keep (all when a list is `None`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskFilter {
    pub datasets: Option<Vec<String>>,
    pub runs: Option<Vec<i64>>,
    pub learners: Option<Vec<String>>,
    /// Keep only the first N tasks in (dataset, run) order.
    pub max_tasks: Option<usize>,
}

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Drop tasks that lack some learners (listed in `TraceSet::dropped`) instead of failing.
    pub allow_missing_arms: bool,
    pub filter: TaskFilter,
}

/// Problems found in one file, reported together.
struct Problems {
    file: String,
    list: Vec<String>,
    more: usize,
}

impl Problems {
    fn new(file: &Path) -> Self {
        Problems {
            file: file.display().to_string(),
            list: Vec::new(),
            more: 0,
        }
    }

    fn push(&mut self, msg: String) {
        if self.list.len() < MAX_PROBLEMS {
            self.list.push(msg);
        } else {
            self.more += 1;
        }
    }

    fn full(&self) -> bool {
        self.list.len() >= MAX_PROBLEMS
    }

    fn into_result(self) -> Result<()> {
        if self.list.is_empty() {
            return Ok(());
        }
        let mut s = format!(
            "{}: {} problem(s) in the evaluations table:",
            self.file,
            self.list.len() + self.more
        );
        for p in &self.list {
            let _ = write!(s, "\n  - {p}");
        }
        if self.more > 0 {
            let _ = write!(s, "\n  - ... and {} more", self.more);
        }
        Err(anyhow!(s))
    }
}

/// How to name a row in messages.
#[derive(Clone, Copy)]
struct RowNamer {
    csv: bool,
}

impl RowNamer {
    fn at(self, i: usize) -> String {
        if self.csv {
            format!("row {} (line {})", i + 1, i + 2)
        } else {
            format!("row {}", i + 1)
        }
    }
}

/// Check a CSV file's shape before polars reads it, so that problems name the line: valid UTF-8,
/// no duplicate header, and as many fields on every line as in the header (quotes respected).
pub fn check_csv_shape(path: &Path) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            bail!(
                "{}: line {line}: not valid UTF-8 (byte {} of the file); save the file as UTF-8",
                path.display(),
                e.valid_up_to() + 1
            );
        }
    };
    let fields = |line: &str| -> Vec<String> {
        let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        for ch in line.chars() {
            match ch {
                '"' => quoted = !quoted,
                ',' if !quoted => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        bail!(
            "{}: the file is empty; it needs a header line",
            path.display()
        );
    };
    let names = fields(header.trim_end_matches('\r'));
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            bail!(
                "{}: line 1: column '{}' appears twice in the header (columns {} and {}); rename or remove one",
                path.display(),
                n.trim(),
                names[..i].iter().position(|m| m == n).unwrap_or(0) + 1,
                i + 1
            );
        }
    }
    for (i, line) in lines {
        let got = fields(line.trim_end_matches('\r')).len();
        if got != names.len() {
            bail!(
                "{}: line {}: {got} field(s), but the header has {}; fix or remove that line",
                path.display(),
                i + 1,
                names.len()
            );
        }
    }
    Ok(())
}

/// A CSV value polars could not parse as its column's inferred type (a whole number too large
/// for 64 bits, say), told in our words with its row, not polars' advice for Python users.
pub(crate) fn csv_error(path: &Path, e: PolarsError) -> anyhow::Error {
    let msg = e.to_string();
    let between = |s: &str, a: &str, b: &str| -> Option<String> {
        let i = s.find(a)? + a.len();
        let j = s[i..].find(b)? + i;
        Some(s[i..j].to_string())
    };
    let (Some(value), Some(column)) = (
        between(&msg, "could not parse `", "`"),
        between(&msg, "at column '", "'"),
    ) else {
        return anyhow::Error::from(e).context(format!("{}: cannot read as CSV", path.display()));
    };
    // The row: read the file again with every column as text.
    let row = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .ok()
        .and_then(|df| {
            let c = df.column(&column).ok()?.str().ok()?.clone();
            c.iter()
                .position(|v| v.map(str::trim) == Some(value.as_str()))
        });
    anyhow::anyhow!(
        "{}: {}column '{column}': `{value}` is not a number this column can hold (whole numbers must lie within ±9.2·10^18, other numbers must be finite decimals); correct or remove it",
        path.display(),
        row.map_or_else(String::new, |r| format!("row {} (line {}), ", r + 1, r + 2))
    )
}

pub(crate) fn read_frame(path: &Path) -> Result<DataFrame> {
    let is_csv = path.extension().is_some_and(|e| e == "csv");
    if is_csv {
        check_csv_shape(path)?;
        CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(None)
            .try_into_reader_with_file_path(Some(path.to_path_buf()))
            .and_then(|r| r.finish())
            .map_err(|e| csv_error(path, e))
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("{}: cannot open", path.display()))?;
        ParquetReader::new(file)
            .finish()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot read as parquet", path.display()))
    }
}

fn column<'a>(df: &'a DataFrame, name: &str) -> Option<&'a Column> {
    df.column(name).ok()
}

/// A text column. Integer columns are accepted and written in decimal (OpenML ids as dataset names).
fn text_col(df: &DataFrame, name: &str, p: &mut Problems) -> Result<Option<Vec<Option<String>>>> {
    let Some(c) = column(df, name) else {
        return Ok(None);
    };
    let dt = c.dtype().clone();
    // Integers are written in decimal; categorical strings (pandas' `category`, dictionary-
    // encoded in parquet) are text.
    if dt.is_integer()
        || dt == DataType::Null
        || matches!(dt, DataType::Categorical(..) | DataType::Enum(..))
    {
        let s = c.cast(&DataType::String)?;
        return Ok(Some(
            s.str()?.iter().map(|v| v.map(str::to_string)).collect(),
        ));
    }
    if dt != DataType::String {
        p.push(format!(
            "column '{name}' must hold text, but its type is {dt}"
        ));
        return Ok(None);
    }
    Ok(Some(
        c.str()?.iter().map(|v| v.map(str::to_string)).collect(),
    ))
}

/// A float column; text is parsed, and the first unparsable value is reported with its row.
fn float_col(
    df: &DataFrame,
    name: &str,
    rows: RowNamer,
    p: &mut Problems,
) -> Result<Option<Vec<Option<f64>>>> {
    let Some(c) = column(df, name) else {
        return Ok(None);
    };
    let dt = c.dtype().clone();
    if dt.is_primitive_numeric() || dt == DataType::Null || dt == DataType::Boolean {
        if dt == DataType::Boolean {
            p.push(format!(
                "column '{name}' must be numeric, but its type is bool"
            ));
            return Ok(None);
        }
        let s = c.cast(&DataType::Float64)?;
        return Ok(Some(s.f64()?.iter().collect()));
    }
    if dt == DataType::String {
        let mut out = Vec::with_capacity(c.len());
        for (i, v) in c.str()?.iter().enumerate() {
            match v.map(str::trim) {
                None | Some("") => out.push(None),
                Some(t) => match t.parse::<f64>() {
                    Ok(x) => out.push(Some(x)),
                    Err(_) => {
                        p.push(format!(
                            "{}, column '{name}': '{t}' is not a number",
                            rows.at(i)
                        ));
                        return Ok(None);
                    }
                },
            }
        }
        return Ok(Some(out));
    }
    p.push(format!(
        "column '{name}' must be numeric, but its type is {dt}"
    ));
    Ok(None)
}

/// An integer column; floats must be whole numbers and text must parse as an integer.
fn int_col(
    df: &DataFrame,
    name: &str,
    rows: RowNamer,
    p: &mut Problems,
) -> Result<Option<Vec<Option<i64>>>> {
    let Some(c) = column(df, name) else {
        return Ok(None);
    };
    let dt = c.dtype().clone();
    if dt.is_integer() || dt == DataType::Null {
        let s = c.cast(&DataType::Int64)?;
        return Ok(Some(s.i64()?.iter().collect()));
    }
    let as_float: Vec<Option<f64>> = if dt.is_float() {
        c.cast(&DataType::Float64)?.f64()?.iter().collect()
    } else if dt == DataType::String {
        let mut out = Vec::with_capacity(c.len());
        for (i, v) in c.str()?.iter().enumerate() {
            match v.map(str::trim) {
                None | Some("") => out.push(None),
                Some(t) => match t.parse::<i64>() {
                    Ok(x) => out.push(Some(x as f64)),
                    Err(_) => {
                        p.push(format!(
                            "{}, column '{name}': '{t}' is not an integer",
                            rows.at(i)
                        ));
                        return Ok(None);
                    }
                },
            }
        }
        out
    } else {
        p.push(format!(
            "column '{name}' must hold integers, but its type is {dt}"
        ));
        return Ok(None);
    };
    let mut out = Vec::with_capacity(as_float.len());
    for (i, v) in as_float.into_iter().enumerate() {
        match v {
            Some(x) if x.fract() != 0.0 || !x.is_finite() => {
                p.push(format!(
                    "{}, column '{name}': {x} is not an integer",
                    rows.at(i)
                ));
                return Ok(None);
            }
            Some(x) => out.push(Some(x as i64)),
            None => out.push(None),
        }
    }
    Ok(Some(out))
}

/// The rows of an evaluations table, typed, before grouping.
struct Rows {
    dataset: Vec<Option<String>>,
    learner: Vec<Option<String>>,
    run: Vec<Option<i64>>,
    seq: Vec<Option<i64>>,
    elapsed: Vec<Option<f64>>,
    score: Vec<Option<f64>>,
    cost: Option<Vec<Option<f64>>>,
    test: Option<Vec<Option<f64>>>,
    status: Option<Vec<Option<String>>>,
}

fn extract(df: &DataFrame, rows: RowNamer, p: &mut Problems) -> Result<Option<Rows>> {
    let present: BTreeSet<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    for name in REQUIRED {
        if !present.contains(name) {
            p.push(format!(
                "missing required column '{name}' (required: {}; found: {})",
                REQUIRED.join(", "),
                present.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if !p.list.is_empty() {
        return Ok(None);
    }
    let dataset = text_col(df, "dataset", p)?;
    let learner = text_col(df, "learner", p)?;
    let run = int_col(df, "run", rows, p)?;
    let seq = int_col(df, "seq", rows, p)?;
    let elapsed = float_col(df, "elapsed_s", rows, p)?;
    let score = float_col(df, "score", rows, p)?;
    let cost = float_col(df, "cost_s", rows, p)?;
    let test = float_col(df, "test_score", rows, p)?;
    let status = text_col(df, "status", p)?;
    // Optional text columns only need the right type.
    for name in ["config", "config_id"] {
        let _ = text_col(df, name, p)?;
    }
    let _ = float_col(df, "fidelity", rows, p)?;
    if !p.list.is_empty() {
        return Ok(None);
    }
    Ok(Some(Rows {
        dataset: dataset.expect("checked"),
        learner: learner.expect("checked"),
        run: run.expect("checked"),
        seq: seq.expect("checked"),
        elapsed: elapsed.expect("checked"),
        score: score.expect("checked"),
        cost,
        test,
        status,
    }))
}

/// Check each row on its own: nulls, signs, finiteness, status values.
fn check_rows(r: &Rows, rows: RowNamer, p: &mut Problems) -> Vec<Status> {
    let n = r.dataset.len();
    let mut statuses = Vec::with_capacity(n);
    for i in 0..n {
        if p.full() {
            break;
        }
        let at = rows.at(i);
        for (name, missing) in [
            ("dataset", r.dataset[i].is_none()),
            ("learner", r.learner[i].is_none()),
            ("run", r.run[i].is_none()),
            ("seq", r.seq[i].is_none()),
            ("elapsed_s", r.elapsed[i].is_none()),
        ] {
            if missing {
                p.push(format!(
                    "{at}, column '{name}': empty, but the column is required"
                ));
            }
        }
        if let Some(v) = r.run[i].filter(|v| *v < 0) {
            p.push(format!(
                "{at}, column 'run': {v} is negative (runs are numbered from 0)"
            ));
        }
        if let Some(v) = r.seq[i].filter(|v| *v < 0) {
            p.push(format!(
                "{at}, column 'seq': {v} is negative (seq counts from 0)"
            ));
        }
        if let Some(e) = r.elapsed[i] {
            if !e.is_finite() {
                p.push(format!(
                    "{at}, column 'elapsed_s': {e} is not a finite number"
                ));
            } else if e < 0.0 {
                p.push(format!("{at}, column 'elapsed_s': {e} is negative"));
            }
        }
        if let Some(c) = r.cost.as_ref().and_then(|c| c[i]) {
            if !c.is_finite() {
                p.push(format!("{at}, column 'cost_s': {c} is not a finite number"));
            } else if c < 0.0 {
                p.push(format!("{at}, column 'cost_s': {c} is negative"));
            }
        }
        let status = match r.status.as_ref().and_then(|s| s[i].as_deref()) {
            None => Status::Ok,
            Some(s) => match Status::parse(s) {
                Some(st) => st,
                None => {
                    p.push(format!(
                        "{at}, column 'status': unknown status '{s}'; allowed: ok, failed, timeout"
                    ));
                    Status::Failed
                }
            },
        };
        if status == Status::Ok {
            match r.score[i] {
                None => p.push(format!(
                    "{at}, column 'score': empty in an 'ok' row (mark the row failed or timeout, or give its score)"
                )),
                Some(s) if !s.is_finite() => p.push(format!(
                    "{at}, column 'score': {s} in an 'ok' row; scores of ok evaluations must be finite"
                )),
                _ => {}
            }
        }
        statuses.push(status);
    }
    statuses
}

fn hash_files(paths: &[&Path]) -> Result<String> {
    let mut h: u64 = 0;
    for path in paths {
        let bytes =
            std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        h = fnv1a64(&[h.to_le_bytes().as_slice(), &bytes].concat());
    }
    Ok(format!("{h:016x}"))
}

fn evaluations_path(dir: &Path, notes: &mut Vec<String>) -> Result<PathBuf> {
    let (pq, csv) = (dir.join("evaluations.parquet"), dir.join("evaluations.csv"));
    if pq.is_file() && csv.is_file() {
        let (a, b) = (read_frame(&pq)?, read_frame(&csv)?);
        let same = a.height() == b.height()
            && a.get_column_names() == b.get_column_names()
            && a.columns().iter().zip(b.columns()).all(|(x, y)| {
                x.cast(&DataType::String)
                    .ok()
                    .zip(y.cast(&DataType::String).ok())
                    .is_some_and(|(x, y)| {
                        x.as_materialized_series()
                            .equals_missing(y.as_materialized_series())
                    })
            });
        if !same {
            bail!(
                "{}: both evaluations.parquet and evaluations.csv are here and they differ; banditbench reads one file: remove the one that is not the trace set",
                dir.display()
            );
        }
        notes.push(format!(
            "{}: both evaluations.parquet and evaluations.csv are here (same rows); reading evaluations.parquet",
            dir.display()
        ));
        return Ok(pq);
    }
    for p in [pq, csv] {
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "{}: no evaluations.parquet or evaluations.csv in this folder (a trace set is a folder with traceset.toml and one of them)",
        dir.display()
    )
}

/// Load, validate and group a trace set. Errors name the file, row, column and rule.
pub fn load_trace_set(dir: &Path, opts: &LoadOptions) -> Result<TraceSet> {
    if !dir.is_dir() {
        bail!("{}: no such trace-set folder", dir.display());
    }
    let manifest_path = dir.join("traceset.toml");
    let manifest = read_manifest(&manifest_path)?;
    let mut notes = Vec::new();
    let ev_path = evaluations_path(dir, &mut notes)?;
    let content_hash = hash_files(&[&manifest_path, &ev_path])?;
    let df = read_frame(&ev_path)?;
    let rows = RowNamer {
        csv: ev_path.extension().is_some_and(|e| e == "csv"),
    };
    let known: BTreeSet<&str> = REQUIRED.iter().chain(OPTIONAL.iter()).copied().collect();
    let extra_columns: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .filter(|s| !known.contains(s.as_str()))
        .collect();

    let mut p = Problems::new(&ev_path);
    let Some(r) = extract(&df, rows, &mut p)? else {
        p.into_result()?;
        unreachable!("extract returns None only with problems");
    };
    let statuses = check_rows(&r, rows, &mut p);
    p.into_result()?;
    let mut p = Problems::new(&ev_path);

    // Group by (dataset, run, learner), ordered by seq; check duplicates and monotone elapsed_s.
    let n = r.dataset.len();
    let ds: Vec<&str> = r
        .dataset
        .iter()
        .map(|s| s.as_deref().unwrap_or(""))
        .collect();
    let lr: Vec<&str> = r
        .learner
        .iter()
        .map(|s| s.as_deref().unwrap_or(""))
        .collect();
    let run: Vec<i64> = r.run.iter().map(|v| v.unwrap_or(0)).collect();
    let seq: Vec<i64> = r.seq.iter().map(|v| v.unwrap_or(0)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (ds[a], run[a], lr[a], seq[a], a).cmp(&(ds[b], run[b], lr[b], seq[b], b))
    });

    let mut arms: BTreeMap<(String, i64), BTreeMap<String, Arm>> = BTreeMap::new();
    let mut start = 0;
    while start < n {
        let first = order[start];
        let mut end = start + 1;
        while end < n
            && ds[order[end]] == ds[first]
            && run[order[end]] == run[first]
            && lr[order[end]] == lr[first]
        {
            end += 1;
        }
        let mut arm = Arm {
            learner: lr[first].to_string(),
            ..Arm::default()
        };
        let mut prev: Option<usize> = None;
        for &i in &order[start..end] {
            if let Some(j) = prev {
                if seq[i] == seq[j] {
                    p.push(format!(
                        "{} and {}: duplicate (dataset, learner, run, seq) = ({}, {}, {}, {})",
                        rows.at(j),
                        rows.at(i),
                        ds[i],
                        lr[i],
                        run[i],
                        seq[i]
                    ));
                }
                let (e_prev, e_now) = (r.elapsed[j].unwrap_or(0.0), r.elapsed[i].unwrap_or(0.0));
                if e_now < e_prev {
                    p.push(format!(
                        "{}, column 'elapsed_s': {e_now} is less than {e_prev} at {} (seq {} before seq {}); elapsed_s must not decrease within a run",
                        rows.at(i),
                        rows.at(j),
                        seq[j],
                        seq[i]
                    ));
                }
            }
            let e = r.elapsed[i].unwrap_or(0.0);
            let cost = r
                .cost
                .as_ref()
                .and_then(|c| c[i])
                .unwrap_or_else(|| e - prev.map_or(0.0, |j| r.elapsed[j].unwrap_or(0.0)));
            let st = statuses[i];
            arm.elapsed_s.push(e);
            arm.cost_s.push(cost);
            arm.score.push(if st == Status::Ok {
                r.score[i].unwrap_or(f64::NAN)
            } else {
                f64::NAN
            });
            arm.test_score
                .push(r.test.as_ref().and_then(|t| t[i]).unwrap_or(f64::NAN));
            arm.status.push(st);
            prev = Some(i);
        }
        arms.entry((ds[first].to_string(), run[first]))
            .or_default()
            .insert(arm.learner.clone(), arm);
        start = end;
        if p.full() {
            break;
        }
    }
    p.into_result()?;

    // Filters: every name asked for must exist, so a typo is an error, not an empty experiment.
    let f = &opts.filter;
    let all_datasets: BTreeSet<&str> = arms.keys().map(|(d, _)| d.as_str()).collect();
    let all_runs: BTreeSet<i64> = arms.keys().map(|(_, r)| *r).collect();
    let all_learners: BTreeSet<String> = arms.values().flat_map(|m| m.keys().cloned()).collect();
    let dataset_names: Vec<String> = all_datasets.iter().map(|s| s.to_string()).collect();
    let list = |it: Vec<String>| it.join(", ");
    if let Some(want) = &f.datasets {
        for d in want {
            if !all_datasets.contains(d.as_str()) {
                bail!(
                    "{}: dataset '{d}' is not in this trace set; it has: {}",
                    dir.display(),
                    list(all_datasets.iter().map(|s| s.to_string()).collect())
                );
            }
        }
    }
    if let Some(want) = &f.runs {
        for r in want {
            if !all_runs.contains(r) {
                bail!(
                    "{}: run {r} is not in this trace set; it has runs: {}",
                    dir.display(),
                    list(all_runs.iter().map(|r| r.to_string()).collect())
                );
            }
        }
    }
    if let Some(want) = &f.learners {
        for l in want {
            if !all_learners.contains(l) {
                bail!(
                    "{}: learner '{l}' is not in this trace set; it has: {}",
                    dir.display(),
                    list(all_learners.iter().cloned().collect())
                );
            }
        }
    }
    let learners: Vec<String> = match &f.learners {
        Some(want) => {
            let w: BTreeSet<&String> = want.iter().collect();
            all_learners
                .iter()
                .filter(|l| w.contains(l))
                .cloned()
                .collect()
        }
        None => all_learners.iter().cloned().collect(),
    };
    let index: HashMap<&str, usize> = learners
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();

    let mut tasks = Vec::new();
    let mut dropped = Vec::new();
    let mut incomplete = Vec::new();
    for ((dataset, run), mut by_learner) in arms {
        if f.datasets.as_ref().is_some_and(|w| !w.contains(&dataset)) {
            continue;
        }
        if f.runs.as_ref().is_some_and(|w| !w.contains(&run)) {
            continue;
        }
        let missing: Vec<String> = learners
            .iter()
            .filter(|l| !by_learner.contains_key(*l))
            .cloned()
            .collect();
        if !missing.is_empty() {
            if opts.allow_missing_arms {
                dropped.push(DroppedTask {
                    dataset,
                    run,
                    missing,
                });
            } else {
                incomplete.push(format!("{dataset}/{run} lacks {}", missing.join(", ")));
            }
            continue;
        }
        let mut task_arms = vec![Arm::default(); learners.len()];
        for (l, arm) in std::mem::take(&mut by_learner) {
            if let Some(&i) = index.get(l.as_str()) {
                task_arms[i] = arm;
            }
        }
        tasks.push(Task {
            dataset,
            run,
            arms: task_arms,
        });
    }
    if !incomplete.is_empty() {
        let shown: Vec<&String> = incomplete.iter().take(10).collect();
        bail!(
            "{}: {} task(s) lack some learners (every (dataset, run) needs an arm for each of the {} learners): {}{}; pass --allow-missing-arms (or allow_missing_arms = true in the experiment) to drop such tasks",
            ev_path.display(),
            incomplete.len(),
            learners.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            if incomplete.len() > 10 { "; ..." } else { "" }
        );
    }
    if let Some(max) = f.max_tasks {
        tasks.truncate(max);
    }
    if tasks.is_empty() {
        let mut given = Vec::new();
        if let Some(d) = &f.datasets {
            given.push(format!("datasets = {d:?}"));
        }
        if let Some(r) = &f.runs {
            given.push(format!("runs = {r:?}"));
        }
        if let Some(l) = &f.learners {
            given.push(format!("learners = {l:?}"));
        }
        bail!(
            "{}: no task left to replay{}; the trace set has the datasets {} (see `banditbench traces inspect {}`)",
            dir.display(),
            if given.is_empty() {
                " (no filter was given: the trace set holds no complete task)".to_string()
            } else {
                format!(" after the [tasks] filter {}", given.join(", "))
            },
            {
                let names: std::collections::BTreeSet<&str> =
                    dataset_names.iter().map(String::as_str).collect();
                let v: Vec<&str> = names.into_iter().take(8).collect();
                format!(
                    "{}{}",
                    v.join(", "),
                    if dataset_names.len() > 8 { ", ..." } else { "" }
                )
            },
            dir.display()
        );
    }
    Ok(TraceSet {
        dir: dir.to_path_buf(),
        evaluations_file: ev_path,
        manifest,
        learners,
        tasks,
        datasets: dataset_names,
        dropped,
        extra_columns,
        content_hash,
        notes,
    })
}
