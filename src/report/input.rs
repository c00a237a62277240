//! What a report reads besides a results folder (see `crate::results`): a long CSV of scores
//! from any tool.

use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;

/// Read a long CSV with columns unit, policy, score.
pub fn read_scores_csv(path: &Path) -> Result<Vec<(String, String, f64)>> {
    crate::trace::check_csv_shape(path)?;
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as CSV", path.display()))?;
    for c in ["unit", "policy", "score"] {
        if df.column(c).is_err() {
            bail!(
                "{}: missing column '{c}' (a scores file has the columns unit,policy,score)",
                path.display()
            );
        }
    }
    let text = |name: &str| -> Result<Vec<Option<String>>> {
        let c = df.column(name)?.cast(&DataType::String)?;
        Ok(c.str()?.iter().map(|v| v.map(String::from)).collect())
    };
    let (units, policies) = (text("unit")?, text("policy")?);
    let score_col = df.column("score")?;
    if !(score_col.dtype().is_primitive_numeric() || score_col.dtype() == &DataType::Null) {
        let texts = score_col.cast(&DataType::String)?;
        let bad = texts
            .str()?
            .iter()
            .enumerate()
            .find(|(_, v)| v.is_some_and(|v| v.trim().parse::<f64>().is_err()));
        match bad {
            Some((i, v)) => bail!(
                "{}: row {} (line {}): score '{}' is not a number; scores must be numbers (leave the cell empty for a missing score)",
                path.display(),
                i + 1,
                i + 2,
                v.unwrap_or("")
            ),
            None => bail!(
                "{}: column 'score' must be numeric, but its type is {}",
                path.display(),
                score_col.dtype()
            ),
        }
    }
    let scores: Vec<Option<f64>> = score_col.cast(&DataType::Float64)?.f64()?.iter().collect();
    let mut rows = Vec::with_capacity(units.len());
    for i in 0..units.len() {
        let (Some(u), Some(p)) = (&units[i], &policies[i]) else {
            bail!(
                "{}: row {} (line {}): empty unit or policy",
                path.display(),
                i + 1,
                i + 2
            );
        };
        rows.push((u.clone(), p.clone(), scores[i].unwrap_or(f64::NAN)));
    }
    Ok(rows)
}
