//! Typed columns of an evaluations table and the checks of each row on its own.

use super::super::Status;
use super::*;
use anyhow::Result;
use std::collections::BTreeSet;

pub(super) fn column<'a>(df: &'a DataFrame, name: &str) -> Option<&'a Column> {
    df.column(name).ok()
}

/// A text column. Integer columns are accepted and written in decimal (OpenML ids as dataset names).
pub(super) fn text_col(
    df: &DataFrame,
    name: &str,
    p: &mut Problems,
) -> Result<Option<Vec<Option<String>>>> {
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
pub(super) fn float_col(
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
pub(super) fn int_col(
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
pub(super) struct Rows {
    pub(super) dataset: Vec<Option<String>>,
    pub(super) learner: Vec<Option<String>>,
    pub(super) run: Vec<Option<i64>>,
    pub(super) seq: Vec<Option<i64>>,
    pub(super) elapsed: Vec<Option<f64>>,
    pub(super) score: Vec<Option<f64>>,
    pub(super) cost: Option<Vec<Option<f64>>>,
    pub(super) test: Option<Vec<Option<f64>>>,
    pub(super) status: Option<Vec<Option<String>>>,
    /// Format 1.1: the objectives' columns of their own, in `Manifest::extra_columns` order
    /// (None: empty or NaN, infeasible).
    pub(super) objectives: Vec<Vec<Option<f64>>>,
}

/// The typed columns of `df`; `objectives` names the columns of the manifest's objectives of
/// their own, each required.
pub(super) fn extract(
    df: &DataFrame,
    rows: RowNamer,
    p: &mut Problems,
    objectives: &[&str],
) -> Result<Option<Rows>> {
    let present: BTreeSet<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    for &name in REQUIRED {
        if !present.contains(name) {
            p.push(format!(
                "missing required column '{name}' (required: {}; found: {})",
                REQUIRED.join(", "),
                present.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    for name in objectives {
        if !present.contains(*name) {
            p.push(format!(
                "missing column '{name}', which traceset.toml's [[objectives]] reads; add it, or give the objective column = \"score\" or \"cost_s\""
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
    let mut objective_columns = Vec::with_capacity(objectives.len());
    for name in objectives {
        if let Some(c) = float_col(df, name, rows, p)? {
            objective_columns.push(c);
        }
    }
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
        objectives: objective_columns,
    }))
}

/// Check each row on its own: nulls, signs, finiteness, status values.
pub(super) fn check_rows(
    r: &Rows,
    rows: RowNamer,
    p: &mut Problems,
    objectives: &[&str],
) -> Vec<Status> {
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
        for (name, text) in [("dataset", &r.dataset[i]), ("learner", &r.learner[i])] {
            if let Some(t) = text.as_deref().filter(|t| t.chars().any(char::is_control)) {
                p.push(format!(
                    "{at}, column '{name}': '{}' holds a control character; names are printable text (a NUL or an escape sequence here is usually a damaged file)",
                    t.escape_debug()
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
        for (name, c) in objectives.iter().zip(&r.objectives) {
            if let Some(x) = c[i].filter(|x| x.is_infinite()) {
                p.push(format!(
                    "{at}, column '{name}': {x} is infinite; an objective's value is a finite number, or empty or NaN (infeasible: never in a multi-objective archive)"
                ));
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
