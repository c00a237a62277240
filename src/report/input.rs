//! What a report reads besides a results folder (see `crate::results`): a table of scores from
//! any tool, long (a row per unit and policy) or wide (a row per unit, a column per policy, as
//! autorank takes it), in CSV or parquet.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;

/// How a scores table is laid out (`report --scores` options).
#[derive(Clone, Debug)]
pub struct ScoresFormat {
    /// The unit column. Long tables: default `unit`. Wide tables: default `unit` if present, else
    /// a first column with an empty name (a pandas index), else the row number.
    pub unit: Option<String>,
    /// Long tables: the policy and score columns (default `policy`, `score`).
    pub policy: String,
    pub score: String,
    /// One row per unit and one column per policy.
    pub wide: bool,
    /// Average several rows of one (unit, policy) instead of refusing them.
    pub average: bool,
}

impl Default for ScoresFormat {
    fn default() -> Self {
        ScoresFormat {
            unit: None,
            policy: "policy".into(),
            score: "score".into(),
            wide: false,
            average: false,
        }
    }
}

fn read_frame(path: &Path) -> Result<DataFrame> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "parquet" || ext == "pq" {
        let f = crate::files::open(path, "a parquet table of scores")?;
        return ParquetReader::new(f)
            .finish()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot read as parquet", path.display()));
    }
    crate::files::check(path, "a CSV table of scores")?;
    crate::trace::check_csv_shape(path)?;
    CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .map_err(|e| crate::trace::csv_error(path, e))
}

/// The column's values as numbers; text that is not a number is an error naming the row.
fn numbers(path: &Path, df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    numbers_or(
        path,
        df,
        name,
        "scores must be numbers (leave the cell empty for a missing score)",
    )
}

/// The column's values as numbers (empty cells NaN); text that is not a number is an error
/// naming the file, the row and line, the column and the value, followed by `hint`.
pub(crate) fn numbers_or(path: &Path, df: &DataFrame, name: &str, hint: &str) -> Result<Vec<f64>> {
    let col = df.column(name)?;
    if !(col.dtype().is_primitive_numeric() || col.dtype() == &DataType::Null) {
        let texts = col.cast(&DataType::String)?;
        let bad = texts
            .str()?
            .iter()
            .enumerate()
            .find(|(_, v)| v.is_some_and(|v| v.trim().parse::<f64>().is_err()));
        match bad {
            Some((i, v)) => bail!(
                "{}: row {} (line {}), column '{name}': '{}' is not a number; {hint}",
                path.display(),
                i + 1,
                i + 2,
                v.unwrap_or("")
            ),
            // Text that all reads as numbers ("nan", "inf", which polars leaves as text): the
            // numbers, so that the caller's checks of each row see them.
            None if !col.is_empty() && col.null_count() < col.len() => {
                return Ok(texts
                    .str()?
                    .iter()
                    .map(|v| {
                        v.and_then(|v| v.trim().parse::<f64>().ok())
                            .unwrap_or(f64::NAN)
                    })
                    .collect());
            }
            None if col.is_empty() => bail!(
                "{}: no rows, only a header; column '{name}' needs values",
                path.display()
            ),
            None => bail!(
                "{}: column '{name}' has no values (every one of its {} cells is empty)",
                path.display(),
                col.len()
            ),
        }
    }
    Ok(col
        .cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

fn texts(df: &DataFrame, name: &str) -> Result<Vec<Option<String>>> {
    let c = df.column(name)?.cast(&DataType::String)?;
    Ok(c.str()?.iter().map(|v| v.map(String::from)).collect())
}

fn need(path: &Path, df: &DataFrame, name: &str, what: &str, option: &str) -> Result<()> {
    if df.column(name).is_err() {
        let have: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|c| format!("'{c}'"))
            .collect();
        bail!(
            "{}: no column '{name}' for the {what}; its columns are {} (name another with {option}{})",
            path.display(),
            have.join(", "),
            if option == "--unit-col" {
                ""
            } else {
                ", or pass --wide for a table with a column per policy"
            }
        );
    }
    Ok(())
}

/// (unit, policy, score) rows.
pub type ScoreRows = Vec<(String, String, f64)>;

/// The rows of a wide table (a column per policy, a row per unit), and a note when the first
/// column was taken as the units.
fn wide_rows(
    path: &Path,
    df: &DataFrame,
    names: &[String],
    fmt: &ScoresFormat,
    notes: &mut Vec<String>,
) -> Result<ScoreRows> {
    let mut raw = Vec::new();
    // A first column of names, none a number, is a named index (pandas'
    // `df.unstack().to_csv()`): the units.
    let text_first = names.first().filter(|n| {
        df.column(n).is_ok_and(|c| c.dtype() == &DataType::String)
            && texts(df, n)
                .is_ok_and(|v| v.iter().flatten().all(|t| t.trim().parse::<f64>().is_err()))
    });
    let unit_col = match &fmt.unit {
        Some(u) => {
            need(path, df, u, "units", "--unit-col")?;
            Some(u.clone())
        }
        None if names.iter().any(|n| n == "unit") => Some("unit".into()),
        None if names.first().is_some_and(|n| n.is_empty()) => Some(String::new()),
        None if text_first.is_some() => {
            let n = text_first.cloned().unwrap_or_default();
            notes.push(format!(
                "the first column, '{n}', holds text: read as the units (a named index, as pandas writes it); name another with --unit-col"
            ));
            Some(n)
        }
        None => None,
    };
    let units: Vec<String> = match &unit_col {
        Some(u) => texts(df, u)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: row {} (line {}): empty unit",
                        path.display(),
                        i + 1,
                        i + 2
                    )
                })
            })
            .collect::<Result<_>>()?,
        None => (1..=df.height()).map(|i| format!("row {i}")).collect(),
    };
    let policies: Vec<&String> = names
        .iter()
        .filter(|n| Some(*n) != unit_col.as_ref())
        .collect();
    if policies.len() < 2 {
        bail!(
            "{}: a wide table needs a column per policy, at least two; found {}",
            path.display(),
            policies.len()
        );
    }
    let cols: Vec<Vec<f64>> = policies
        .iter()
        .map(|p| {
            numbers(path, df, p).with_context(|| {
                format!(
                    "in a wide table every column but the units' is a policy's scores; if '{p}' holds the units, pass --unit-col '{p}'"
                )
            })
        })
        .collect::<Result<_>>()?;
    for (i, u) in units.iter().enumerate() {
        for (p, c) in policies.iter().zip(&cols) {
            raw.push((u.clone(), (*p).clone(), c[i]));
        }
    }
    Ok(raw)
}

/// The rows of a long table (a row per unit and policy); several unit columns join into one
/// unit.
fn long_rows(
    path: &Path,
    df: &DataFrame,
    names: &[String],
    fmt: &ScoresFormat,
) -> Result<ScoreRows> {
    let mut raw = Vec::new();
    let unit = fmt.unit.clone().unwrap_or_else(|| "unit".into());
    // Several unit columns (`--unit-col dataset,fold`, as TabArena's results tables name a
    // split) join into one unit, `APSFailure/0`.
    let unit_cols: Vec<&str> = if names.contains(&unit) {
        vec![unit.as_str()]
    } else {
        unit.split(',').map(str::trim).collect()
    };
    for u in &unit_cols {
        need(path, df, u, "units", "--unit-col")?;
    }
    need(path, df, &fmt.policy, "policies", "--policy-col")?;
    need(path, df, &fmt.score, "scores", "--score-col")?;
    let parts: Vec<Vec<Option<String>>> = unit_cols
        .iter()
        .map(|u| texts(df, u))
        .collect::<Result<_>>()?;
    let units: Vec<Option<String>> = (0..df.height())
        .map(|i| {
            parts
                .iter()
                .map(|c| c[i].clone())
                .collect::<Option<Vec<String>>>()
                .map(|v| v.join("/"))
        })
        .collect();
    let policies = texts(df, &fmt.policy)?;
    let scores = numbers(path, df, &fmt.score)?;
    for i in 0..units.len() {
        let (Some(u), Some(p)) = (&units[i], &policies[i]) else {
            bail!(
                "{}: row {} (line {}): empty unit or policy",
                path.display(),
                i + 1,
                i + 2
            );
        };
        raw.push((u.clone(), p.clone(), scores[i]));
    }
    Ok(raw)
}

/// One row per (unit, policy) in the order they first appear: several rows of one pair are
/// refused, or with `average` replaced by the mean of their scores that are not missing, with
/// a note saying so.
fn one_per_pair(
    path: &Path,
    raw: &[(String, String, f64)],
    average: bool,
) -> Result<(ScoreRows, Option<String>)> {
    // Several rows of one (unit, policy): refused, or averaged when asked.
    let mut at: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut rows: Vec<(String, String, f64)> = Vec::new();
    let mut sums: Vec<(f64, usize, usize)> = Vec::new();
    for (u, p, s) in raw {
        let i = *at.entry((u.clone(), p.clone())).or_insert_with(|| {
            rows.push((u.clone(), p.clone(), f64::NAN));
            sums.push((0.0, 0, 0));
            rows.len() - 1
        });
        let e = &mut sums[i];
        e.2 += 1;
        if !s.is_nan() {
            e.0 += s;
            e.1 += 1;
        }
    }
    let most = sums.iter().map(|e| e.2).max().unwrap_or(0);
    if most > 1 && !average {
        let (i, e) = sums
            .iter()
            .enumerate()
            .find(|(_, e)| e.2 > 1)
            .expect("one has more than one row");
        bail!(
            "{}: unit '{}', policy '{}' has {} rows ({} of {} (unit, policy) pairs have more than one); pass --average-repeats to average them (for example several seeds per unit), or aggregate them first",
            path.display(),
            rows[i].0,
            rows[i].1,
            e.2,
            sums.iter().filter(|e| e.2 > 1).count(),
            rows.len()
        );
    }
    for (r, e) in rows.iter_mut().zip(&sums) {
        r.2 = if e.1 == 0 { f64::NAN } else { e.0 / e.1 as f64 };
    }
    let note = (most > 1).then(|| {
        let least = sums.iter().map(|e| e.2).min().unwrap_or(0);
        format!(
            "--average-repeats: each (unit, policy) score is the mean of {} rows ({} rows in, {} (unit, policy) scores); missing scores are left out of the means",
            if least == most {
                most.to_string()
            } else {
                format!("{least} to {most}")
            },
            raw.len(),
            rows.len()
        )
    });
    Ok((rows, note))
}

/// Read a scores table into (unit, policy, score) rows, one per (unit, policy), in the order
/// they first appear, and notes on what was done to them (averaging).
pub fn read_scores(path: &Path, fmt: &ScoresFormat) -> Result<(ScoreRows, Vec<String>)> {
    let df = read_frame(path)?;
    if df.height() == 0 {
        bail!("{}: the table has no rows", path.display());
    }
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    let mut notes = Vec::new();
    let raw = if fmt.wide {
        wide_rows(path, &df, &names, fmt, &mut notes)?
    } else {
        long_rows(path, &df, &names, fmt)?
    };
    let (rows, note) = one_per_pair(path, &raw, fmt.average)?;
    notes.extend(note);
    Ok((rows, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(u: &str, p: &str, s: f64) -> (String, String, f64) {
        (u.into(), p.into(), s)
    }

    #[test]
    fn repeated_pairs_are_refused_or_averaged_over_their_scores_that_are_not_missing() {
        let path = Path::new("s.csv");
        let once = [row("a", "x", 1.0), row("a", "y", 2.0)];
        let (rows, note) = one_per_pair(path, &once, false).unwrap();
        assert_eq!((rows, note), (once.to_vec(), None));
        let twice = [
            row("b", "x", 1.0),
            row("a", "x", 2.0),
            row("b", "x", 3.0),
            row("b", "x", f64::NAN),
        ];
        let e = one_per_pair(path, &twice, false).unwrap_err().to_string();
        assert!(
            e.starts_with("s.csv: unit 'b', policy 'x' has 3 rows (1 of 2 (unit, policy) pairs have more than one)"),
            "{e}"
        );
        let (rows, note) = one_per_pair(path, &twice, true).unwrap();
        assert_eq!(rows, [row("b", "x", 2.0), row("a", "x", 2.0)]);
        assert!(
            note.unwrap()
                .contains("the mean of 1 to 3 rows (4 rows in, 2 (unit, policy) scores)")
        );
        // Only missing scores: the pair's score is missing.
        let (rows, _) = one_per_pair(
            path,
            &[row("a", "x", f64::NAN), row("a", "x", f64::NAN)],
            true,
        )
        .unwrap();
        assert!(rows[0].2.is_nan());
    }
}
