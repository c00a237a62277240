//! `traceset.toml`: what a trace set is, what its score measures, and where it came from.

use std::path::Path;

use anyhow::{Context, Result, bail};

pub const FORMAT_V1: &str = "banditbench-traces/1";
/// Format 1 and `[[objectives]]`: a trace set of several objectives (issue #46).
pub const FORMAT_V1_1: &str = "banditbench-traces/1.1";

/// What a trace set's objectives read: its evaluations.
const TRACE_ROWS: super::objectives::Rows = super::objectives::Rows {
    what: "evaluations",
    reserved: &super::load::COLUMNS,
    cumulative: false,
};

/// Whether higher scores are better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Higher is better.
    Maximize,
    /// Lower is better.
    Minimize,
}

impl Direction {
    /// +1 for maximize, -1 for minimize: multiply a score by this to get a reward (higher is better).
    pub fn sign(self) -> f64 {
        match self {
            Direction::Maximize => 1.0,
            Direction::Minimize => -1.0,
        }
    }

    /// The name in manifests and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Maximize => "maximize",
            Direction::Minimize => "minimize",
        }
    }
}

/// Where a trace set's evaluations come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Recorded by banditbench's recorder.
    Recorded,
    /// Imported from another tool's files.
    Imported,
    /// Drawn from stated distributions: not recorded data.
    Synthetic,
}

impl Source {
    /// The name in manifests and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Recorded => "recorded",
            Source::Imported => "imported",
            Source::Synthetic => "synthetic",
        }
    }
}

/// A trace set's `traceset.toml`.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The trace set's name.
    pub name: String,
    /// What it holds, in a sentence.
    pub description: String,
    /// The score's metric.
    pub metric: String,
    /// Whether higher scores are better.
    pub direction: Direction,
    /// Where the evaluations come from.
    pub source: Source,
    /// The whole `[provenance]` table as written.
    pub provenance: toml::Table,
    /// Format 1.1: the objectives a multi-objective analysis measures, each with its direction;
    /// empty for a trace set of one objective (its `metric`).
    pub objectives: Vec<super::objectives::Objective>,
}

impl Manifest {
    /// The objectives read from columns of their own, by column name, in `Arm::objectives`'s
    /// order of such columns.
    pub fn extra_columns(&self) -> Vec<&str> {
        self.objectives
            .iter()
            .filter(|o| matches!(o.column, super::objectives::ObjectiveColumn::Extra(_)))
            .map(|o| o.name.as_str())
            .collect()
    }
}

fn required_str(table: &toml::Table, key: &str, path: &Path, within: &str) -> Result<String> {
    match table.get(key) {
        None => bail!(
            "{}: missing key '{within}{key}' (a trace-set manifest needs format, name, description, metric, direction and [provenance] with source; see traces/README.md)",
            path.display()
        ),
        Some(toml::Value::String(s)) => Ok(s.clone()),
        Some(other) => bail!(
            "{}: key '{within}{key}' must be a string, found {}",
            path.display(),
            other.type_str()
        ),
    }
}

pub fn read_manifest(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "{}: cannot read the trace-set manifest (every trace set is a folder with traceset.toml and evaluations.parquet)",
            path.display()
        )
    })?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("{}: not valid TOML", path.display()))?;
    const TOP_KEYS: [&str; 7] = [
        "format",
        "name",
        "description",
        "metric",
        "direction",
        "provenance",
        "objectives",
    ];
    for key in table.keys() {
        if !TOP_KEYS.contains(&key.as_str()) {
            bail!(
                "{}: unknown key '{key}'; a trace-set manifest has the keys {} (free-form facts go under [provenance])",
                path.display(),
                TOP_KEYS.join(", ")
            );
        }
    }
    let format = required_str(&table, "format", path, "")?;
    if format != FORMAT_V1 && format != FORMAT_V1_1 {
        bail!(
            "{}: unknown format '{format}'; this program reads '{FORMAT_V1}' and '{FORMAT_V1_1}'",
            path.display()
        );
    }
    let name = required_str(&table, "name", path, "")?;
    let description = required_str(&table, "description", path, "")?;
    let metric = required_str(&table, "metric", path, "")?;
    let direction = match required_str(&table, "direction", path, "")?.as_str() {
        "maximize" => Direction::Maximize,
        "minimize" => Direction::Minimize,
        other => bail!(
            "{}: key 'direction' is '{other}'; allowed: maximize, minimize",
            path.display()
        ),
    };
    let provenance = match table.get("provenance") {
        Some(toml::Value::Table(t)) => t.clone(),
        Some(other) => bail!(
            "{}: 'provenance' must be a table ([provenance]), found {}",
            path.display(),
            other.type_str()
        ),
        None => bail!(
            "{}: missing table [provenance] (with at least source = recorded | imported | synthetic)",
            path.display()
        ),
    };
    let source = match required_str(&provenance, "source", path, "provenance.")?.as_str() {
        "recorded" => Source::Recorded,
        "imported" => Source::Imported,
        "synthetic" => Source::Synthetic,
        other => bail!(
            "{}: key 'provenance.source' is '{other}'; allowed: recorded, imported, synthetic",
            path.display()
        ),
    };
    let objectives = match table.get("objectives") {
        None => Vec::new(),
        Some(_) if format == FORMAT_V1 => bail!(
            "{}: [[objectives]] needs format = \"{FORMAT_V1_1}\" (format 1 has one objective, its metric)",
            path.display()
        ),
        Some(v) => super::objectives::read_objectives(
            v,
            &metric,
            direction,
            &path.display().to_string(),
            &TRACE_ROWS,
        )?,
    };
    Ok(Manifest {
        name,
        description,
        metric,
        direction,
        source,
        provenance,
        objectives,
    })
}
