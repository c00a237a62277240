//! Policy parameters: their values and kinds, a family's declared parameters, and how one
//! `[[policies]]` entry expands into the cartesian product of its values.

use super::*;
use crate::protocol::Policy;
use crate::protocol::WorldKind;
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::fmt;

/// A parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f64),
    Int(i64),
    Text(String),
    /// Only external policies take booleans.
    Bool(bool),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(x) => write!(f, "{x}"),
            Value::Int(x) => write!(f, "{x}"),
            Value::Text(s) => write!(f, "{s}"),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl Value {
    pub(super) fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Float(x) => serde_json::json!(x),
            Value::Int(x) => serde_json::json!(x),
            Value::Text(s) => serde_json::json!(s),
            Value::Bool(b) => serde_json::json!(b),
        }
    }
}

/// The type and allowed range of a parameter.
#[derive(Clone, Debug)]
pub enum Kind {
    Float {
        min: f64,
        max: f64,
    },
    Int {
        min: i64,
        max: i64,
    },
    Choice(&'static [&'static str]),
    /// A number, text or boolean, unchecked (an external policy's parameters).
    Any,
}

impl Kind {
    fn describe(&self) -> String {
        match self {
            Kind::Float { min, max } => format!("number in [{min}, {max}]"),
            Kind::Int { min, max } => format!("integer in [{min}, {max}]"),
            Kind::Choice(c) => format!("one of {}", c.join(", ")),
            Kind::Any => "number, text or boolean".to_string(),
        }
    }
}

pub struct ParamDef {
    pub name: &'static str,
    pub kind: Kind,
    pub default: Value,
    pub doc: &'static str,
}

impl ParamDef {
    /// An integer parameter in `min..=max`.
    pub(crate) fn int(
        name: &'static str,
        min: i64,
        max: i64,
        default: i64,
        doc: &'static str,
    ) -> ParamDef {
        ParamDef {
            name,
            kind: Kind::Int { min, max },
            default: Value::Int(default),
            doc,
        }
    }

    /// A real parameter in `min..=max`.
    pub(crate) fn float(
        name: &'static str,
        min: f64,
        max: f64,
        default: f64,
        doc: &'static str,
    ) -> ParamDef {
        ParamDef {
            name,
            kind: Kind::Float { min, max },
            default: Value::Float(default),
            doc,
        }
    }

    /// A parameter that takes one of `options`.
    pub(crate) fn choice(
        name: &'static str,
        options: &'static [&'static str],
        default: &'static str,
        doc: &'static str,
    ) -> ParamDef {
        ParamDef {
            name,
            kind: Kind::Choice(options),
            default: Value::Text(default.into()),
            doc,
        }
    }
}

/// A policy family: one decision rule and its parameters.
pub struct Family {
    pub name: &'static str,
    pub summary: &'static str,
    /// Author, year, title and equation or algorithm; and the code whose semantics it copies.
    pub source: &'static str,
    pub worlds: &'static [WorldKind],
    /// The worlds (of `worlds`) where it runs on several simulated workers: it never pulls an
    /// arm that is still running and waits only with work in flight. An experiment with
    /// `[world] workers` above 1 in any other world is refused when it loads.
    pub parallel: &'static [WorldKind],
    pub params: Vec<ParamDef>,
    pub build: fn(&Params, usize) -> Box<dyn Policy>,
}

/// Resolved parameters, in the family's declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct Params(pub Vec<(&'static str, Value)>);

impl Params {
    fn get(&self, name: &str) -> &Value {
        &self
            .0
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("parameter {name} is declared by its family"))
            .1
    }

    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Float(x) => *x,
            Value::Int(x) => *x as f64,
            Value::Text(_) | Value::Bool(_) => panic!("parameter {name} is numeric"),
        }
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Value::Int(x) => *x,
            other => panic!("parameter {name} is an integer, found {other}"),
        }
    }

    pub fn text(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Text(s) => s,
            other => panic!("parameter {name} is text, found {other}"),
        }
    }
}

/// A parameter set per dataset: `beta = { per_dataset = { car = 0.85, chess = 0.9 }, default = 0.5 }`.
#[derive(Clone, Debug, PartialEq)]
pub struct PerDataset {
    pub name: &'static str,
    pub values: BTreeMap<String, Value>,
    pub default: Option<Value>,
}

/// The text a per-dataset parameter shows in policy ids: one policy across datasets, so that
/// datasets are comparable units; `params` in the results holds each cell's own value.
pub const PER_DATASET: &str = "per-dataset";

pub(super) fn convert(def: &ParamDef, family: &str, v: &toml::Value) -> Result<Value> {
    let bad = || {
        anyhow::anyhow!(
            "policy '{family}', parameter '{}': {v} is not allowed; expected a {}",
            def.name,
            def.kind.describe()
        )
    };
    match (&def.kind, v) {
        (Kind::Float { min, max }, toml::Value::Float(x)) if x >= min && x <= max => {
            Ok(Value::Float(*x))
        }
        (Kind::Float { min, max }, toml::Value::Integer(i))
            if (*i as f64) >= *min && (*i as f64) <= *max =>
        {
            Ok(Value::Float(*i as f64))
        }
        (Kind::Int { min, max }, toml::Value::Integer(i)) if i >= min && i <= max => {
            Ok(Value::Int(*i))
        }
        (Kind::Choice(c), toml::Value::String(s)) if c.contains(&s.as_str()) => {
            Ok(Value::Text(s.clone()))
        }
        (Kind::Any, toml::Value::Float(x)) => Ok(Value::Float(*x)),
        (Kind::Any, toml::Value::Integer(i)) => Ok(Value::Int(*i)),
        (Kind::Any, toml::Value::String(s)) => Ok(Value::Text(s.clone())),
        (Kind::Any, toml::Value::Boolean(b)) => Ok(Value::Bool(*b)),
        _ => Err(bad()),
    }
}

/// Expand one `[[policies]]` entry (family + parameters, each a value or a list of values) into
/// the cartesian product of its values, in declaration order.
pub fn expand(
    family_name: &str,
    given: &BTreeMap<String, toml::Value>,
) -> Result<Vec<PolicyConfig>> {
    let fam = family(family_name)?;
    for key in given.keys() {
        if !fam.params.iter().any(|p| p.name == key) {
            if let Some((_, now, _)) = super::RENAMED_PARAMS
                .iter()
                .find(|&&(f, _, before)| f == fam.name && before == key)
            {
                bail!(
                    "policy '{}' has no parameter '{key}': it is now '{now}', with the same values (the cells' seeds are those of '{key}')",
                    fam.name
                );
            }
            let known: Vec<&str> = fam.params.iter().map(|p| p.name).collect();
            bail!(
                "policy '{}' has no parameter '{key}'; its parameters: {}",
                fam.name,
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    let (grid, per_dataset) = expand_params(fam.name, &fam.params, given)?;
    Ok(grid
        .into_iter()
        .map(|p| PolicyConfig {
            family: fam,
            params: Params(p),
            per_dataset: per_dataset.clone(),
            external: None,
        })
        .collect())
}

pub(super) type Grid = Vec<Vec<(&'static str, Value)>>;

/// The cartesian product of the parameters' values (each a value, a list of values or a
/// per-dataset table), in `defs` order; absent parameters take their defaults.
pub(crate) fn expand_params(
    family_name: &str,
    defs: &[ParamDef],
    given: &BTreeMap<String, toml::Value>,
) -> Result<(Grid, Vec<PerDataset>)> {
    let mut grid: Grid = vec![Vec::new()];
    let mut per_dataset = Vec::new();
    for def in defs {
        let values: Vec<Value> = match given.get(def.name) {
            None => vec![def.default.clone()],
            Some(toml::Value::Table(t)) => {
                let here = format!("policy '{}', parameter '{}'", family_name, def.name);
                for k in t.keys() {
                    if k != "per_dataset" && k != "default" {
                        bail!(
                            "{here}: key '{k}' is not allowed in a per-dataset table; write {} = {{ per_dataset = {{ DATASET = VALUE, ... }}, default = VALUE }} (default optional)",
                            def.name
                        );
                    }
                }
                let Some(toml::Value::Table(by)) = t.get("per_dataset") else {
                    bail!(
                        "{here}: a table value needs 'per_dataset', a table of dataset = value (e.g. {} = {{ per_dataset = {{ car = 0.85 }} }})",
                        def.name
                    );
                };
                let values = by
                    .iter()
                    .map(|(d, v)| Ok((d.clone(), convert(def, family_name, v)?)))
                    .collect::<Result<BTreeMap<_, _>>>()?;
                let default = t
                    .get("default")
                    .map(|v| convert(def, family_name, v))
                    .transpose()?;
                per_dataset.push(PerDataset {
                    name: def.name,
                    values,
                    default,
                });
                vec![Value::Text(PER_DATASET.to_string())]
            }
            Some(toml::Value::Array(list)) => {
                if list.is_empty() {
                    bail!(
                        "policy '{}', parameter '{}': an empty list expands to no policy",
                        family_name,
                        def.name
                    );
                }
                list.iter()
                    .map(|v| convert(def, family_name, v))
                    .collect::<Result<_>>()?
            }
            Some(v) => vec![convert(def, family_name, v)?],
        };
        grid = grid
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((def.name, v.clone()));
                    p
                })
            })
            .collect();
    }
    Ok((grid, per_dataset))
}
