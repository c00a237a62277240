//! Reading an evaluations file: a CSV's shape checked line by line before polars reads it, and
//! polars' parse errors told with their row.

use anyhow::{Context, Result, bail};
use polars::prelude::*;
use std::path::Path;

/// Check a CSV file's shape before polars reads it, so that problems name the line: valid UTF-8,
/// no duplicate header, and as many fields on every line as in the header (quotes respected).
pub fn check_csv_shape(path: &Path) -> Result<()> {
    let bytes = crate::files::read_bytes(path, "a CSV file", crate::files::MAX_TEXT)?;
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
    // Records, not lines: a quoted field may hold a line break (RFC 4180; pandas writes one
    // for a name that has it). Each record keeps the index of the line it starts on.
    let mut records: Vec<(usize, &str)> = Vec::new();
    let (mut start, mut line, mut start_line, mut quoted) = (0usize, 0usize, 0usize, false);
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' => {
                if !quoted {
                    records.push((start_line, &text[start..i]));
                    start = i + 1;
                    start_line = line + 1;
                }
                line += 1;
            }
            _ => {}
        }
    }
    if start < text.len() {
        records.push((start_line, &text[start..]));
    }
    let mut lines = records.into_iter().filter(|(_, l)| !l.trim().is_empty());
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
