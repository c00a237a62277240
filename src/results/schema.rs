//! The columns of a results folder's two files, owned here once: their names, order, types and
//! whether they may be null. The engine (`experiment::frames`) and every importer build their
//! frames through [`frame`], which puts the columns in this order, fills a nullable column that
//! a writer does not have (an importer has no pool counters) with nulls, and refuses anything
//! else, so a new column is added here and nowhere else for the files of every writer to agree.

use anyhow::{Result, bail};
use polars::prelude::*;

/// A column's type in the files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Str,
    U32,
    U64,
    I64,
    F64,
}

impl Kind {
    fn dtype(self) -> DataType {
        match self {
            Kind::Str => DataType::String,
            Kind::U32 => DataType::UInt32,
            Kind::U64 => DataType::UInt64,
            Kind::I64 => DataType::Int64,
            Kind::F64 => DataType::Float64,
        }
    }
}

/// One column of a results file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Col {
    pub name: &'static str,
    pub kind: Kind,
    /// Whether a row may hold no value (the column is null where it does not apply).
    pub nullable: bool,
}

const fn col(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        nullable: false,
    }
}

const fn null(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        nullable: true,
    }
}

use Kind::{F64, I64, Str, U32, U64};

/// `runs.parquet`: one row per cell (README, "Results").
pub(crate) const RUNS: &[Col] = &[
    col("experiment", Str),
    col("cell", U64),
    col("dataset", Str),
    col("run", I64),
    col("budget", F64),
    col("budget_unit", Str),
    col("budget_abs", F64),
    null("slice_abs", F64),
    col("policy_family", Str),
    col("policy", Str),
    col("params", Str),
    col("repetition", U32),
    col("seed", U64),
    null("best_score", F64),
    null("best_test_score", F64),
    null("best_learner", Str),
    null("best_found_at", F64),
    col("pulls", Str),
    col("time_s", Str),
    col("decisions", U64),
    col("budget_used", F64),
    col("overhead_s", F64),
    null("workers", U32),
    null("makespan_s", F64),
    null("idle_s", F64),
    col("failures", U64),
    col("exhausted_pulls", U64),
    col("exhausted_budget", F64),
    col("replay", Str),
    null("overhead_model", Str),
    null("trace_set", Str),
    col("trace_source", Str),
    col("direction", Str),
    null("pool_scope", Str),
    null("configs_drawn", U64),
    null("mutations", U64),
    null("mutation_fallbacks", U64),
    null("units_trained", U64),
    null("recommended_config", U32),
    null("recommended_unit", U32),
    null("recommended_params", Str),
    null("incumbent_rule", Str),
    null("recommendation_rule", Str),
    null("policy_stats", Str),
    null("hypervolume", F64),
    null("hv_regret", F64),
    null("igd_plus", F64),
    null("epsilon_additive", F64),
    null("front_size", U64),
    col("program", Str),
];

/// `trajectories.parquet`: one row per decision kept (README, "Results").
pub(crate) const TRAJECTORIES: &[Col] = &[
    col("cell", U64),
    col("step", U32),
    col("action", Str),
    col("arm", U32),
    col("learner", Str),
    null("config", U32),
    null("fidelity", U32),
    col("time", F64),
    null("reward", F64),
    null("incumbent", F64),
    null("worker", U32),
    null("start", F64),
    null("finish", F64),
    null("hv_regret", F64),
];

/// The frame of `schema` from the columns a writer has: in the schema's order, each of its type
/// (a column named in `coded` may hold the u32 codes the store turns into its names), every
/// nullable column the writer lacks filled with nulls. A column the schema does not know, of
/// another type, missing, or null where it may not be, is refused: a bug in the writer.
pub(crate) fn frame(
    schema: &[Col],
    cols: Vec<Column>,
    height: usize,
    coded: &[&str],
) -> Result<DataFrame> {
    let mut given: std::collections::HashMap<String, Column> = std::collections::HashMap::new();
    for c in cols {
        let name = c.name().to_string();
        let Some(spec) = schema.iter().find(|s| s.name == name) else {
            bail!("results column '{name}' is not in the results schema (a bug in its writer)");
        };
        let ok = c.dtype() == &spec.kind.dtype()
            || (coded.contains(&spec.name) && c.dtype() == &DataType::UInt32)
            || (spec.nullable && c.dtype() == &DataType::Null);
        if !ok {
            bail!(
                "results column '{name}' holds {} where the schema says {} (a bug in its writer)",
                c.dtype(),
                spec.kind.dtype()
            );
        }
        if !spec.nullable && c.null_count() > 0 {
            bail!(
                "results column '{name}' holds nulls where the schema allows none (a bug in its writer)"
            );
        }
        if given.insert(name.clone(), c).is_some() {
            bail!("results column '{name}' is given twice (a bug in its writer)");
        }
    }
    let mut out = Vec::with_capacity(schema.len());
    for spec in schema {
        match given.remove(spec.name) {
            Some(c) if c.dtype() == &DataType::Null => out.push(Column::full_null(
                spec.name.into(),
                height,
                &spec.kind.dtype(),
            )),
            Some(c) => out.push(c),
            None if spec.nullable => out.push(Column::full_null(
                spec.name.into(),
                height,
                &spec.kind.dtype(),
            )),
            None => bail!(
                "results column '{}' is missing (a bug in its writer: the schema requires it)",
                spec.name
            ),
        }
    }
    Ok(DataFrame::new(height, out)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's table of a file's columns, as (name, type if the table says) in order.
    fn readme_table(after: &str) -> Vec<(String, Option<Kind>)> {
        let readme = include_str!("../../README.md");
        let start = readme.find(after).expect("the README's results section");
        let mut rows = Vec::new();
        for line in readme[start..]
            .lines()
            .skip_while(|l| !l.starts_with("| column"))
        {
            if !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let names: Vec<String> = cells[1]
                .split(',')
                .map(|n| n.trim().trim_matches('`').to_string())
                .filter(|n| !n.is_empty() && n != "column" && !n.starts_with("---"))
                .collect();
            let kinds: Vec<Option<Kind>> = cells[2]
                .split(',')
                .map(|k| match k.trim() {
                    "str" => Some(Str),
                    "u32" => Some(U32),
                    "u64" => Some(U64),
                    "i64" => Some(I64),
                    "f64" => Some(F64),
                    _ => None,
                })
                .collect();
            for (i, n) in names.iter().enumerate() {
                let k = if kinds.len() == names.len() {
                    kinds[i]
                } else {
                    kinds[0]
                };
                rows.push((n.clone(), k));
            }
        }
        rows
    }

    #[test]
    fn the_readme_documents_every_column_in_order_with_its_type() {
        for (file, schema) in [
            ("`runs.parquet` has one row per cell", RUNS),
            ("`trajectories.parquet` holds the decisions", TRAJECTORIES),
        ] {
            let table = readme_table(file);
            let names: Vec<&str> = table.iter().map(|(n, _)| n.as_str()).collect();
            let owned: Vec<&str> = schema.iter().map(|c| c.name).collect();
            assert_eq!(names, owned, "{file}");
            for ((n, k), c) in table.iter().zip(schema) {
                if let Some(k) = k {
                    assert_eq!(*k, c.kind, "{file}: {n}");
                }
            }
        }
    }

    #[test]
    fn a_writer_that_strays_from_the_schema_is_refused() {
        let frame_of = |cols: Vec<Column>| frame(TRAJECTORIES, cols, 2, &["action"]);
        let base = || {
            vec![
                Column::new("cell".into(), [0u64, 0]),
                Column::new("step".into(), [1u32, 2]),
                Column::new("action".into(), [0u32, 1]),
                Column::new("arm".into(), [0u32, 0]),
                Column::new("learner".into(), ["a", "a"]),
                Column::new("time".into(), [1.0, 2.0]),
            ]
        };
        let df = frame_of(base()).unwrap();
        let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
        assert_eq!(names.len(), TRAJECTORIES.len());
        assert_eq!(df.column("worker").unwrap().null_count(), 2);
        let mut extra = base();
        extra.push(Column::new("color".into(), ["x", "y"]));
        let mut wrong = base();
        wrong[5] = Column::new("time".into(), [1u32, 2]);
        let mut short = base();
        short.remove(0);
        let mut holes = base();
        holes[0] = Column::new("cell".into(), [Some(0u64), None]);
        let mut codes = base();
        codes[4] = Column::new("learner".into(), [0u32, 0]);
        for (cols, wanted) in [
            (extra, "'color' is not in the results schema"),
            (wrong, "'time' holds u32 where the schema says f64"),
            (short, "'cell' is missing"),
            (holes, "'cell' holds nulls"),
            (codes, "'learner' holds u32 where the schema says str"),
        ] {
            let e = frame_of(cols).unwrap_err().to_string();
            assert!(e.contains(wanted), "{e}");
        }
    }
}
