//! `pool.toml`: reading and checking a pool's manifest.

use super::super::objectives::{Rows, parse_direction, read_objectives};
use super::*;
use anyhow::{Context, Result, bail};
use std::path::Path;

pub(super) fn str_key(t: &toml::Table, key: &str, at: &str) -> Result<String> {
    match t.get(key) {
        Some(toml::Value::String(s)) => Ok(s.clone()),
        Some(v) => bail!("{at}: key '{key}' must be a string, found {}", v.type_str()),
        None => bail!("{at}: missing key '{key}'"),
    }
}

/// A numeric dimension's `low`, `high`, `log` (default false) and `int` (default false), checked:
/// `low < high`, `low > 0` on a log scale, and no `values`.
fn numeric_range(d: &toml::Table, here: &str) -> Result<Range> {
    for k in d.keys() {
        if !["name", "kind", "low", "high", "log", "int"].contains(&k.as_str()) {
            bail!(
                "{here}: unknown key '{k}'; a numeric dimension has name, kind, low, high, log and int (levels belong to ordinal and categorical ones)"
            );
        }
    }
    let number = |k: &str| -> Result<f64> {
        match d.get(k) {
            Some(toml::Value::Float(x)) if x.is_finite() => Ok(*x),
            Some(toml::Value::Integer(i)) => Ok(*i as f64),
            Some(v) => bail!("{here}: key '{k}' must be a finite number, found {v}"),
            None => bail!("{here}: a numeric dimension needs '{k}'"),
        }
    };
    let flag = |k: &str| -> Result<bool> {
        match d.get(k) {
            None => Ok(false),
            Some(&toml::Value::Boolean(b)) => Ok(b),
            Some(v) => bail!("{here}: key '{k}' must be true or false, found {v}"),
        }
    };
    let r = Range {
        low: number("low")?,
        high: number("high")?,
        log: flag("log")?,
        int: flag("int")?,
    };
    if r.low >= r.high || (r.log && r.low <= 0.0) {
        bail!(
            "{here}: low = {}, high = {}: give low < high (and low > 0 on a log scale)",
            r.low,
            r.high
        );
    }
    Ok(r)
}

/// What a pool's objectives read: its curves.
const POOL_ROWS: Rows = Rows {
    what: "curves",
    reserved: &[
        "dataset",
        "run",
        "config_id",
        "unit",
        "score",
        "test_score",
        "cost_s",
        "status",
    ],
    cumulative: true,
};

/// `[[learners]]`, each with its `[[learners.dims]]` (ordinal, categorical or numeric; a numeric
/// dimension has no levels, so it cannot have grid neighbours), names unique.
fn read_learners(t: &toml::Table, neighbours: Neighbours, at: &str) -> Result<Vec<PoolLearner>> {
    let Some(toml::Value::Array(ls)) = t.get("learners") else {
        bail!("{at}: missing [[learners]] (one table per learner, with its [[learners.dims]])");
    };
    let mut learners = Vec::new();
    for (i, l) in ls.iter().enumerate() {
        let here = format!("{at}: [[learners]] entry {}", i + 1);
        let Some(l) = l.as_table() else {
            bail!("{here}: not a table");
        };
        let name = str_key(l, "name", &here)?;
        let unit = str_key(l, "unit", &here).unwrap_or_default();
        let mut dims = Vec::new();
        for (j, d) in l
            .get("dims")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .enumerate()
        {
            let here = format!("{here} ('{name}'), dims entry {}", j + 1);
            let Some(d) = d.as_table() else {
                bail!("{here}: not a table");
            };
            let kind = match str_key(d, "kind", &here)?.as_str() {
                "ordinal" => DimKind::Ordinal,
                "categorical" => DimKind::Categorical,
                "numeric" => DimKind::Numeric(numeric_range(d, &here)?),
                o => bail!("{here}: kind '{o}'; allowed: ordinal, categorical, numeric"),
            };
            if let DimKind::Numeric(_) = kind {
                if neighbours == Neighbours::Grid {
                    bail!(
                        "{here}: a numeric dimension has no levels to step between, so neighbours = \"grid\" cannot apply; give neighbours = \"none\" (a mutation draws afresh) or \"table\" with neighbours.parquet"
                    );
                }
                dims.push(PoolDim {
                    name: str_key(d, "name", &here)?,
                    kind,
                    values: Vec::new(),
                });
                continue;
            }
            let values: Vec<String> = match d.get("values") {
                Some(toml::Value::Array(v)) if !v.is_empty() => v
                    .iter()
                    .map(|x| {
                        x.as_str()
                            .map(String::from)
                            .unwrap_or_else(|| x.to_string())
                    })
                    .collect(),
                _ => bail!("{here}: 'values' must be a non-empty list"),
            };
            if values.len() > u16::MAX as usize {
                bail!("{here}: more than {} values", u16::MAX);
            }
            dims.push(PoolDim {
                name: str_key(d, "name", &here)?,
                kind,
                values,
            });
        }
        if learners.iter().any(|x: &PoolLearner| x.name == name) {
            bail!("{here}: learner '{name}' is listed twice");
        }
        learners.push(PoolLearner { name, unit, dims });
    }
    Ok(learners)
}

/// Read and check a pool's `pool.toml`.
pub fn read_pool_manifest(path: &Path) -> Result<PoolManifest> {
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{at}: cannot read the pool manifest"))?;
    let t: toml::Table = anyhow::Context::with_context(text.parse::<toml::Table>(), || {
        format!("{at}: not valid TOML")
    })?;
    const KEYS: [&str; 12] = [
        "format",
        "generator",
        "objectives",
        "name",
        "description",
        "metric",
        "direction",
        "units",
        "neighbours",
        "complete",
        "learners",
        "provenance",
    ];
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            bail!(
                "{at}: unknown key '{k}'; a pool manifest has the keys {}",
                KEYS.join(", ")
            );
        }
    }
    let format = str_key(&t, "format", &at)?;
    if format != POOL_FORMAT_V1 && format != POOL_FORMAT_V1_1 && format != POOL_FORMAT_V1_2 {
        bail!(
            "{at}: unknown format '{format}'; this program reads '{POOL_FORMAT_V1}', '{POOL_FORMAT_V1_1}' and '{POOL_FORMAT_V1_2}'"
        );
    }
    let generator = match t.get("generator") {
        None => None,
        Some(_) if format != POOL_FORMAT_V1_2 => {
            bail!("{at}: [generator] needs format = \"{POOL_FORMAT_V1_2}\"")
        }
        Some(toml::Value::Table(g)) => Some(Box::new(synthetic::read_generator(g, &at)?)),
        Some(v) => bail!("{at}: 'generator' must be a table, found {}", v.type_str()),
    };
    let direction = parse_direction(&str_key(&t, "direction", &at)?, "direction", &at)?;
    let metric = str_key(&t, "metric", &at)?;
    let objectives = match t.get("objectives") {
        None => Vec::new(),
        Some(_) if format == POOL_FORMAT_V1 => bail!(
            "{at}: [[objectives]] needs format = \"{POOL_FORMAT_V1_1}\" (format 1 has one objective, its metric)"
        ),
        Some(v) => read_objectives(v, &metric, direction, &at, &POOL_ROWS)?,
    };
    let units = match t.get("units") {
        Some(&toml::Value::Integer(u)) if (1..=100_000).contains(&u) => u as u32,
        Some(v) => bail!("{at}: key 'units' is {v}; it must be a whole number from 1 to 100000"),
        None => bail!("{at}: missing key 'units' (fidelity units in a full curve)"),
    };
    let neighbours = match str_key(&t, "neighbours", &at)?.as_str() {
        "grid" => Neighbours::Grid,
        "table" => Neighbours::Table,
        "none" => Neighbours::None,
        o => bail!("{at}: key 'neighbours' is '{o}'; allowed: grid, table, none"),
    };
    let complete = match t.get("complete") {
        Some(&toml::Value::Boolean(b)) => b,
        None => true,
        Some(v) => bail!("{at}: key 'complete' must be true or false, found {v}"),
    };
    let learners = read_learners(&t, neighbours, &at)?;
    let provenance = match t.get("provenance") {
        Some(toml::Value::Table(p)) => p.clone(),
        _ => bail!("{at}: missing table [provenance] (with at least source = recorded | imported)"),
    };
    let source = provenance.get("source").and_then(|v| v.as_str());
    if generator.is_some() && source != Some("synthetic") {
        bail!(
            "{at}: a pool generated from a function ([generator]) says [provenance] source = \"synthetic\""
        );
    }
    let m = PoolManifest {
        name: str_key(&t, "name", &at)?,
        description: str_key(&t, "description", &at)?,
        metric,
        objectives,
        direction,
        units,
        neighbours,
        complete,
        learners,
        provenance,
        generator,
    };
    if let Some(g) = &m.generator {
        synthetic::check_manifest(&m, g, &at)?;
    }
    Ok(m)
}
