//! `[[objectives]]` of a pool (format 1.1) or a trace set (format 1.1): the objectives a
//! multi-objective analysis measures, each with its direction and the column it is read from.

use anyhow::{Result, bail};

use super::manifest::Direction;

/// One objective of a pool or trace set of several (`[[objectives]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    /// Its name, as reports show it.
    pub name: String,
    /// Whether higher values are better.
    pub direction: Direction,
    /// Where each unit's (evaluation's) value is.
    pub column: ObjectiveColumn,
}

/// Where an objective's value of a unit (an evaluation) is recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectiveColumn {
    /// The `score` (the metric).
    Score,
    /// The `cost_s`.
    Cost,
    /// A pool's `cost_s` summed over units 1..=u: the seconds of training a configuration to
    /// unit u (`column = "cost_s"`, `cumulative = true`).
    CumulativeCost,
    /// A column of its own, the n-th such objective (a pool's `Curve::extra`, a trace's
    /// `Arm::objectives`).
    Extra(usize),
}

/// Where the objective `name` is in `objectives` (a pool's or trace set's: `what` and its
/// `data` name), or an error to follow the key that named it: "names 'x', which the pool p does
/// not have; it has: …".
pub(crate) fn position(
    objectives: &[Objective],
    name: &str,
    what: &str,
    data: &str,
) -> Result<usize> {
    match objectives.iter().position(|o| o.name == name) {
        Some(i) => Ok(i),
        None => bail!(
            "names '{name}', which the {what} {data} does not have; it has: {}",
            objectives
                .iter()
                .map(|o| o.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn str_key(t: &toml::Table, key: &str, at: &str) -> Result<String> {
    match t.get(key) {
        Some(toml::Value::String(s)) => Ok(s.clone()),
        Some(v) => bail!("{at}: key '{key}' must be a string, found {}", v.type_str()),
        None => bail!("{at}: missing key '{key}'"),
    }
}

pub(crate) fn parse_direction(s: &str, key: &str, at: &str) -> Result<Direction> {
    match s {
        "maximize" => Ok(Direction::Maximize),
        "minimize" => Ok(Direction::Minimize),
        o => bail!("{at}: key '{key}' is '{o}'; allowed: maximize, minimize"),
    }
}

/// What a format's `[[objectives]]` may read: the name of its rows (`curves`, `evaluations`),
/// the columns it already has (which an objective must read through `column`), and whether
/// `cumulative = true` applies (a pool's per-unit seconds; a trace's `cost_s` is already an
/// evaluation's own).
pub(crate) struct Rows {
    pub what: &'static str,
    pub reserved: &'static [&'static str],
    pub cumulative: bool,
}

/// `[[objectives]]`: at least two, each with a name, a direction and optionally a column:
/// `score` (the metric; the default for the objective named as the metric, whose direction must
/// then be the manifest's), `cost_s`, or by default a column of the rows named as the objective.
pub(crate) fn read_objectives(
    v: &toml::Value,
    metric: &str,
    direction: Direction,
    at: &str,
    rows: &Rows,
) -> Result<Vec<Objective>> {
    let Some(list) = v.as_array() else {
        bail!("{at}: 'objectives' must be a list of tables ([[objectives]])");
    };
    if list.len() < 2 {
        bail!(
            "{at}: [[objectives]] lists {} objective(s); a {k} of several objectives lists at least two (a {k} of one has none: its metric is the objective)",
            list.len(),
            k = if rows.what == "curves" {
                "pool"
            } else {
                "trace set"
            }
        );
    }
    let mut out: Vec<Objective> = Vec::new();
    let mut extra = 0;
    for (i, o) in list.iter().enumerate() {
        let here = format!("{at}: [[objectives]] entry {}", i + 1);
        let Some(o) = o.as_table() else {
            bail!("{here}: not a table");
        };
        for k in o.keys() {
            let keys: &[&str] = if rows.cumulative {
                &["name", "direction", "column", "cumulative"]
            } else {
                &["name", "direction", "column"]
            };
            if !keys.contains(&k.as_str()) {
                bail!(
                    "{here}: unknown key '{k}'; an objective has {}",
                    keys.join(", ")
                );
            }
        }
        let name = str_key(o, "name", &here)?;
        let dir = parse_direction(&str_key(o, "direction", &here)?, "direction", &here)?;
        let column = match o.get("column") {
            None if name == metric => ObjectiveColumn::Score,
            None => {
                extra += 1;
                ObjectiveColumn::Extra(extra - 1)
            }
            Some(toml::Value::String(c)) if c == "score" => ObjectiveColumn::Score,
            Some(toml::Value::String(c)) if c == "cost_s" => ObjectiveColumn::Cost,
            Some(c) => bail!(
                "{here}: key 'column' is {c}; give \"score\" or \"cost_s\", or leave it out to read the {}' column '{name}'",
                rows.what
            ),
        };
        let column = match o.get("cumulative") {
            None | Some(toml::Value::Boolean(false)) => column,
            Some(toml::Value::Boolean(true)) if column == ObjectiveColumn::Cost => {
                ObjectiveColumn::CumulativeCost
            }
            Some(toml::Value::Boolean(true)) => bail!(
                "{here}: key 'cumulative' sums the recorded seconds of the units trained; it applies to column = \"cost_s\" only"
            ),
            Some(c) => bail!("{here}: key 'cumulative' is {c}; give true or false"),
        };
        if column == ObjectiveColumn::Score && dir != direction {
            bail!(
                "{here}: '{name}' is read from the {}' score, whose direction is the manifest's ({}); give the same direction",
                rows.what,
                direction.as_str()
            );
        }
        if matches!(column, ObjectiveColumn::Extra(_)) && rows.reserved.contains(&name.as_str()) {
            bail!(
                "{here}: '{name}' is a column the {} already have; give column = \"score\" or \"cost_s\"",
                rows.what
            );
        }
        if out.iter().any(|p| p.name == name) {
            bail!("{here}: objective '{name}' is listed twice");
        }
        if column != ObjectiveColumn::Score
            && !matches!(column, ObjectiveColumn::Extra(_))
            && out.iter().any(|p| p.column == column)
        {
            bail!("{here}: two objectives read the same column");
        }
        out.push(Objective {
            name,
            direction: dir,
            column,
        });
    }
    if out
        .iter()
        .filter(|o| o.column == ObjectiveColumn::Score)
        .count()
        > 1
    {
        bail!(
            "{at}: [[objectives]]: two objectives read the {}' score",
            rows.what
        );
    }
    Ok(out)
}

/// The objectives of a pool or trace set, for `traces inspect`: each one's direction, column and
/// spread over `tasks`' points (`values`: what the points are), then per task how many points
/// are feasible and how many lie on its true Pareto front (`feasible`: which points count).
/// `tasks`: each task's name and its points, `objectives.len()` values each, every objective
/// minimised (maximised ones negated).
pub(crate) fn describe(
    objectives: &[Objective],
    tasks: &[(String, Vec<f64>)],
    (values, feasible): (&str, &str),
    s: &mut String,
) {
    use std::fmt::Write as _;
    let d = objectives.len();
    let _ = writeln!(
        s,
        "\n   {:<16}  {:<9}  {:<10}  {:>38}",
        "objective", "direction", "column", values
    );
    for (k, o) in objectives.iter().enumerate() {
        let sign = -o.direction.sign();
        let mut v: Vec<f64> = tasks
            .iter()
            .flat_map(|(_, p)| p.chunks_exact(d).map(|x| sign * x[k]))
            .collect();
        v.sort_by(f64::total_cmp);
        let spread = match v.len() {
            0 => "–".to_string(),
            n => format!("{:.4} / {:.4} / {:.4}", v[0], v[n / 2], v[n - 1]),
        };
        let column = match o.column {
            ObjectiveColumn::Score => "score".to_string(),
            ObjectiveColumn::Cost => "cost_s".to_string(),
            ObjectiveColumn::CumulativeCost => "cost_s, summed".to_string(),
            ObjectiveColumn::Extra(_) => o.name.clone(),
        };
        let _ = writeln!(
            s,
            "   {:<16}  {:<9}  {:<10}  {:>38}",
            o.name,
            o.direction.as_str(),
            column,
            spread
        );
    }
    let _ = writeln!(
        s,
        "\n   true Pareto front of each task in all {d} objectives (feasible: {feasible})"
    );
    for (name, points) in tasks {
        let front = crate::pareto::nondominated(points, d);
        let _ = writeln!(
            s,
            "   {name}: {} feasible, {} on the front",
            points.len() / d,
            front.len()
        );
    }
}
