//! Policies: the decision rules, behind one trait and one registry.
//!
//! A policy sees the world only through [`View`] (before a decision) and [`Observation`] (after a
//! pull); it never touches clocks, files or threads. It is built from a spec, a family name plus
//! parameters, through [`registry`], so experiment files, results and the CLI all name policies
//! the same way: `family(param=value, ...)` with every parameter, defaults included, in the
//! family's declaration order.

mod bestk;
pub mod cash;
mod epsilon_greedy;
mod erucb;
pub mod external;
mod hamlet;
mod hyperband;
mod mutant_ucb;
mod random;
mod round_robin;
mod softmax;
mod ttts;
mod ucb1;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use anyhow::{Context, Result, bail};

pub use crate::protocol::{Action, CellStart, Policy, PoolStart};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

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
    fn to_json(&self) -> serde_json::Value {
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

/// A policy family: one decision rule and its parameters.
pub struct Family {
    pub name: &'static str,
    pub summary: &'static str,
    /// Author, year, title and equation or algorithm; and the code whose semantics it copies.
    pub source: &'static str,
    pub worlds: &'static [WorldKind],
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

/// One concrete policy: a family with all parameters resolved (a per-dataset parameter resolves
/// when the policy is built for a task's dataset).
#[derive(Clone)]
pub struct PolicyConfig {
    pub family: &'static Family,
    pub params: Params,
    pub per_dataset: Vec<PerDataset>,
    /// Set for `family = "external"`: the process to run and its name.
    pub external: Option<std::sync::Arc<external::ExternalSpec>>,
}

impl fmt::Debug for PolicyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id())
    }
}

impl PartialEq for PolicyConfig {
    fn eq(&self, other: &Self) -> bool {
        self.family_name() == other.family_name()
            && self.params == other.params
            && self.per_dataset == other.per_dataset
    }
}

impl PolicyConfig {
    /// Stable text naming the policy: `family(a=1, b=x)`, or `family` without parameters.
    pub fn id(&self) -> String {
        if self.params.0.is_empty() {
            return self.family_name().to_string();
        }
        let inner: Vec<String> = self
            .params
            .0
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!("{}({})", self.family_name(), inner.join(", "))
    }

    /// The family as results name it: the registry's name, or an external policy's `name`.
    pub fn family_name(&self) -> &str {
        match &self.external {
            Some(e) => &e.name,
            None => self.family.name,
        }
    }

    /// The parameters as JSON, per-dataset ones at their placeholder.
    pub fn params_json(&self) -> String {
        Self::json_of(&self.params)
    }

    /// The parameters a cell on `dataset` runs with, as JSON (the results' `params`).
    pub fn params_json_for(&self, dataset: &str) -> String {
        if self.per_dataset.is_empty() {
            return self.params_json();
        }
        Self::json_of(&self.params_for(dataset))
    }

    fn json_of(p: &Params) -> String {
        let map: serde_json::Map<String, serde_json::Value> =
            p.0.iter()
                .map(|(n, v)| (n.to_string(), v.to_json()))
                .collect();
        serde_json::Value::Object(map).to_string()
    }

    /// The parameters resolved for `dataset` (checked by `check_datasets`; a dataset without a
    /// value or default keeps the placeholder, which a family rejects).
    pub fn params_for(&self, dataset: &str) -> Params {
        let mut p = self.params.clone();
        for pd in &self.per_dataset {
            if let Some(v) = pd.values.get(dataset).or(pd.default.as_ref())
                && let Some(slot) = p.0.iter_mut().find(|(n, _)| *n == pd.name)
            {
                slot.1 = v.clone();
            }
        }
        p
    }

    /// Every per-dataset parameter has a value (or a default) for each of `datasets` (those the
    /// experiment keeps), and names only datasets among `known` (all the data's datasets, before
    /// filters), so that a misspelt name is an error, not silently the default.
    pub fn check_datasets<'a>(
        &self,
        datasets: impl IntoIterator<Item = &'a str>,
        known: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let datasets: Vec<&str> = datasets.into_iter().collect();
        let known: std::collections::BTreeSet<&str> = known.into_iter().collect();
        for pd in &self.per_dataset {
            if let Some(bad) = pd.values.keys().find(|d| !known.contains(d.as_str())) {
                bail!(
                    "policy '{}', parameter '{}': per_dataset names dataset '{bad}', which the data does not have (it has: {}); check the spelling",
                    self.family_name(),
                    pd.name,
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                );
            }
            if pd.default.is_some() {
                continue;
            }
            let missing: Vec<&str> = datasets
                .iter()
                .copied()
                .filter(|d| !pd.values.contains_key(*d))
                .collect();
            if !missing.is_empty() {
                bail!(
                    "policy '{}', parameter '{}': per_dataset has no value for dataset(s) {}; add them, or a 'default'",
                    self.family_name(),
                    pd.name,
                    missing.join(", ")
                );
            }
        }
        Ok(())
    }

    pub fn build(&self, n_arms: usize) -> Box<dyn Policy> {
        if let Some(e) = &self.external {
            return Box::new(external::ExternalPolicy::new(
                e.clone(),
                self.id(),
                self.params_json(),
            ));
        }
        (self.family.build)(&self.params, n_arms)
    }

    /// Build the policy for a task of `dataset` (resolving per-dataset parameters).
    pub fn build_for(&self, dataset: &str, n_arms: usize) -> Box<dyn Policy> {
        if self.per_dataset.is_empty() {
            return self.build(n_arms);
        }
        if let Some(e) = &self.external {
            return Box::new(external::ExternalPolicy::new(
                e.clone(),
                self.id(),
                self.params_json_for(dataset),
            ));
        }
        (self.family.build)(&self.params_for(dataset), n_arms)
    }
}

static REGISTRY: LazyLock<Vec<Family>> = LazyLock::new(|| {
    vec![
        round_robin::family(),
        random::family(),
        epsilon_greedy::family(),
        softmax::family(),
        ucb1::family_textbook(),
        ucb1::family_btb(),
        bestk::family_rewards(),
        bestk::family_velocity(),
        erucb::family(),
        hamlet::family_eps(),
        hamlet::family_decay(),
        hamlet::family_ucb(),
        hyperband::family_random_search(),
        hyperband::family_successive_halving(),
        hyperband::family_hyperband(),
        cash::family_ex_def(),
        cash::family_grid_search(),
        cash::family_tpe(),
        cash::family_smac(),
        ttts::family_ttts(),
        ttts::family_t3c(),
        ttts::family_dttts(),
        ttts::family_uniform(),
        mutant_ucb::family_inf_ucb_e(),
        mutant_ucb::family_mutant_ucb(),
        mutant_ucb::family_steady_state_ea(),
    ]
});

/// Every policy family this program knows.
pub fn registry() -> &'static [Family] {
    &REGISTRY
}

/// " (did you mean 'ucb1'?)" for the names in `names` closest to `given` (Jaro–Winkler ≥ 0.7,
/// at most three), or "" when none is close.
pub fn did_you_mean<'a>(given: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let g = given.to_lowercase();
    let mut near: Vec<(f64, &str)> = names
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&g, &c.to_lowercase()), c))
        .filter(|(d, _)| *d >= 0.7)
        .collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    if near.is_empty() {
        return String::new();
    }
    format!(
        " (did you mean {}?)",
        near.iter()
            .take(3)
            .map(|(_, n)| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

pub fn family(name: &str) -> Result<&'static Family> {
    match registry().iter().find(|f| f.name == name) {
        Some(f) => Ok(f),
        None => bail!(
            "unknown policy '{name}'{}; known policies: {} (see `banditbench policies`)",
            did_you_mean(name, registry().iter().map(|f| f.name)),
            registry()
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn convert(def: &ParamDef, family: &str, v: &toml::Value) -> Result<Value> {
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

type Grid = Vec<Vec<(&'static str, Value)>>;

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

/// The family every external policy belongs to in the registry's terms (results name each by
/// its own `name`).
static EXTERNAL: LazyLock<Family> = LazyLock::new(|| Family {
    name: "external",
    summary: "a policy in any language, run as a process speaking the JSON-lines policy protocol",
    source: "banditbench's policy protocol, version 1 (docs/protocol.md); cite the policy's own paper",
    worlds: &[
        WorldKind::TimeSliced,
        WorldKind::PullCount,
        WorldKind::Synthetic,
        WorldKind::Pool,
    ],
    params: Vec::new(),
    build: |_, _| Box::new(external::Unbuilt),
});

/// The keys of an external `[[policies]]` entry besides `family`.
/// The keys of an external policy's `[[policies]]` entry, each with what it does
/// (`banditbench policies` prints this list).
pub const EXTERNAL_KEYS: [(&str, &str); 9] = [
    (
        "name",
        "its name in results and figures (letters, digits, '-', '_', '.', '+')",
    ),
    (
        "command",
        "program and arguments, run in the current directory",
    ),
    (
        "params",
        "a table of parameters; lists expand, as for built-in policies",
    ),
    ("env", "a table of extra environment variables"),
    (
        "files",
        "files or folders the policy's code lives in besides those its command names; their content decides its results (default: none)",
    ),
    (
        "timeout_s",
        "longest wait for one answer, in seconds (default 60)",
    ),
    ("on_failure", "stop | restart (default stop)"),
    (
        "pin_cpu",
        "pin each process and its worker thread to one CPU (default true)",
    ),
    (
        "pool_space",
        "pool world: send the space and the open configurations' encodings at each cell's start (default false)",
    ),
];

/// Expand one `[[policies]]` entry with `family = "external"`:
///
/// ```toml
/// [[policies]]
/// family = "external"
/// name = "my-ucb"                                  # its name in results and figures
/// command = ["python3", "python/examples/ucb1.py"] # run in the current directory
/// params = { c = [1.0, 2.0] }                      # a list expands, as for built-in policies
/// env = { PYTHONPATH = "python" }                  # optional
/// files = ["python/banditbench"]                   # optional: more code its results depend on
/// timeout_s = 60                                   # optional: longest wait for one answer
/// on_failure = "stop"                              # or "restart"
/// pin_cpu = true                                   # optional: process and worker on one CPU
/// pool_space = false                               # optional: send the open configurations'
///                                                  # encodings at each pool cell's start
/// ```
pub fn expand_external(given: &BTreeMap<String, toml::Value>) -> Result<Vec<PolicyConfig>> {
    use external::{ExternalSpec, OnFailure};
    for key in given.keys() {
        if !EXTERNAL_KEYS.iter().any(|(k, _)| k == key) {
            bail!(
                "an external policy has no key '{key}'; its keys: {} (policy parameters go in `params = {{ ... }}`)",
                EXTERNAL_KEYS.map(|(k, _)| k).join(", ")
            );
        }
    }
    let name = match given.get("name") {
        Some(toml::Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) => {
            bail!("external policy: 'name' is {v}; give a non-empty text, e.g. name = \"my-ucb\"")
        }
        None => bail!(
            "an external policy needs 'name', the name results and figures give it (e.g. name = \"my-ucb\")"
        ),
    };
    crate::names::check("external policy name", &name)?;
    if name == "external" || registry().iter().any(|f| f.name == name) {
        bail!("external policy '{name}': the name is a built-in policy's; choose another");
    }
    let here = format!("external policy '{name}'");
    let command: Vec<String> = match given.get("command") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => Ok(s.clone()),
                other => bail!("{here}: 'command' holds {other}; every element must be text"),
            })
            .collect::<Result<_>>()?,
        Some(v) => bail!(
            "{here}: 'command' is {v}; give the program and its arguments as a list, e.g. command = [\"python3\", \"my_policy.py\"]"
        ),
        None => bail!(
            "{here} needs 'command', the program and its arguments, e.g. command = [\"python3\", \"my_policy.py\"]"
        ),
    };
    let env: BTreeMap<String, String> = match given.get("env") {
        None => BTreeMap::new(),
        Some(toml::Value::Table(t)) => t
            .iter()
            .map(|(k, v)| match v {
                toml::Value::String(s) => Ok((k.clone(), s.clone())),
                other => bail!("{here}: env.{k} is {other}; environment values are text"),
            })
            .collect::<Result<_>>()?,
        Some(v) => {
            bail!("{here}: 'env' is {v}; give a table, e.g. env = {{ PYTHONPATH = \"python\" }}")
        }
    };
    let extra_files: Vec<String> = match given.get("files") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => Ok(s.clone()),
                other => bail!("{here}: 'files' holds {other}; every element must be a path"),
            })
            .collect::<Result<_>>()?,
        Some(v) => bail!(
            "{here}: 'files' is {v}; give a list of paths, e.g. files = [\"python/banditbench\"]"
        ),
    };
    let files = external::content_hashes(&command, &extra_files).with_context(|| here.clone())?;
    let timeout_s = match given.get("timeout_s") {
        None => 60.0,
        Some(toml::Value::Float(x)) if *x > 0.0 && x.is_finite() => *x,
        Some(toml::Value::Integer(i)) if *i > 0 => *i as f64,
        Some(v) => bail!("{here}: 'timeout_s' is {v}; give a positive number of seconds"),
    };
    let on_failure = match given.get("on_failure") {
        None => OnFailure::Stop,
        Some(toml::Value::String(s)) if s == "stop" => OnFailure::Stop,
        Some(toml::Value::String(s)) if s == "restart" => OnFailure::Restart,
        Some(v) => bail!("{here}: 'on_failure' is {v}; allowed: \"stop\", \"restart\""),
    };
    let pin_cpu = match given.get("pin_cpu") {
        None => true,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => bail!("{here}: 'pin_cpu' is {v}; give true or false"),
    };
    let pool_space = match given.get("pool_space") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => bail!("{here}: 'pool_space' is {v}; give true or false"),
    };
    let params = match given.get("params") {
        None => BTreeMap::new(),
        Some(toml::Value::Table(t)) => t.clone().into_iter().collect(),
        Some(v) => bail!("{here}: 'params' is {v}; give a table, e.g. params = {{ c = 2.0 }}"),
    };
    // Parameter names live as long as the program (the registry's are static too).
    let defs: Vec<ParamDef> = params
        .keys()
        .map(|k: &String| ParamDef {
            name: Box::leak(k.clone().into_boxed_str()),
            kind: Kind::Any,
            default: Value::Bool(false),
            doc: "",
        })
        .collect();
    let (grid, per_dataset) = expand_params(&name, &defs, &params)?;
    let spec = std::sync::Arc::new(ExternalSpec::new(
        name,
        command,
        files,
        env,
        std::time::Duration::from_secs_f64(timeout_s),
        on_failure,
        pin_cpu,
        pool_space,
    ));
    Ok(grid
        .into_iter()
        .map(|p| PolicyConfig {
            family: &EXTERNAL,
            params: Params(p),
            per_dataset: per_dataset.clone(),
            external: Some(spec.clone()),
        })
        .collect())
}

/// `banditbench policies [NAME] [--world W]`: every registered family (and the external policy)
/// with its summary, worlds, source and parameters, rendered from the registry. `name` keeps the
/// families whose name contains it; `world` those that run in that world. A name that matches
/// nothing is an error that suggests the nearest names.
pub fn describe_registry(name: Option<&str>, world: Option<WorldKind>) -> Result<String> {
    use std::fmt::Write as _;
    let all_worlds = [
        WorldKind::TimeSliced,
        WorldKind::PullCount,
        WorldKind::Synthetic,
        WorldKind::Pool,
    ];
    let wanted = |fam: &str, worlds: &[WorldKind]| {
        name.is_none_or(|n| fam.to_lowercase().contains(&n.to_lowercase()))
            && world.is_none_or(|w| worlds.contains(&w))
    };
    let mut s = String::new();
    let mut shown = 0;
    for f in registry() {
        if !wanted(f.name, f.worlds) {
            continue;
        }
        shown += 1;
        let worlds: Vec<&str> = f.worlds.iter().map(|w| w.as_str()).collect();
        let _ = writeln!(s, "{}\n    {}", f.name, f.summary);
        let _ = writeln!(s, "    worlds: {}", worlds.join(", "));
        let _ = writeln!(s, "    source: {}", f.source);
        if f.params.is_empty() {
            let _ = writeln!(s, "    parameters: none");
        }
        for p in &f.params {
            let kind = match &p.kind {
                Kind::Float { min, max } => format!("float in [{min}, {max}]"),
                Kind::Int { min, max } => format!("int in [{min}, {max}]"),
                Kind::Choice(c) => c.join(" | "),
                Kind::Any => "any".to_string(),
            };
            let _ = writeln!(
                s,
                "    {} = {}   ({kind})\n        {}",
                p.name, p.default, p.doc
            );
        }
        s.push('\n');
    }
    if wanted("external", &all_worlds) {
        shown += 1;
        let _ = writeln!(
            s,
            "external\n    a policy in any language: a process that speaks the JSON-lines policy protocol (docs/protocol.md)\n    worlds: time-sliced, pull-count, synthetic, pool\n    source: cite the policy's own paper; the protocol is banditbench's, version {}\n    keys:",
            external::PROTOCOL
        );
        for (k, doc) in EXTERNAL_KEYS {
            let _ = writeln!(s, "      {k}: {doc}");
        }
        let _ = writeln!(
            s,
            "    Python: pip install ./python, subclass banditbench.Policy, see python/examples/ and README 'Adding a policy'"
        );
    }
    if shown == 0 {
        let names: Vec<&str> = registry()
            .iter()
            .map(|f| f.name)
            .chain(["external"])
            .collect();
        let what = match (name, world) {
            (Some(n), Some(w)) => format!("named like '{n}' in the {} world", w.as_str()),
            (Some(n), None) => format!("named like '{n}'"),
            (None, Some(w)) => format!("in the {} world", w.as_str()),
            (None, None) => String::new(),
        };
        bail!(
            "no policy {what}{}; the policies: {}",
            name.map_or_else(String::new, |n| did_you_mean(n, names.iter().copied())),
            names.join(", ")
        );
    }
    Ok(s)
}

/// A policy with every parameter at its default.
pub fn default_config(family_name: &str) -> Result<PolicyConfig> {
    Ok(expand(family_name, &BTreeMap::new())?.remove(0))
}

/// The `start` parameter of families whose rule does not itself try every arm first.
pub(crate) fn start_param(default: &'static str) -> ParamDef {
    ParamDef {
        name: "start",
        kind: Kind::Choice(&["none", "each-arm-once"]),
        default: Value::Text(default.into()),
        doc: "none: the rule decides from the first pull (BTB's semantics; some arms may never be tried); each-arm-once: pull every arm once, in index order, before the rule takes over (as UCB1, round-robin and HAMLET's variants do)",
    }
}

/// Wraps a policy with the `start = "each-arm-once"` phase: while some arm has never been pulled,
/// pull the first such arm; the inner policy observes every pull.
pub(crate) struct EachArmOnce(pub Box<dyn Policy>);

impl Policy for EachArmOnce {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        match view.pulls.iter().position(|&p| p == 0) {
            Some(a) => Action::Pull(a),
            None => self.0.decide(view, rng),
        }
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        self.0.observe(obs);
    }

    fn take_fits(&mut self) -> u64 {
        self.0.take_fits()
    }

    fn begin(&mut self, cell: &CellStart<'_>) -> Result<()> {
        self.0.begin(cell)
    }

    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        match view.pulls.iter().position(|&p| p == 0) {
            Some(a) => Ok(Action::Pull(a)),
            None => self.0.try_decide(view, rng),
        }
    }

    fn finish(&mut self) -> Result<()> {
        self.0.finish()
    }
}

/// `policy`, behind the start phase its `start` parameter names.
pub(crate) fn with_start(p: &Params, policy: Box<dyn Policy>) -> Box<dyn Policy> {
    if p.text("start") == "each-arm-once" {
        Box::new(EachArmOnce(policy))
    } else {
        policy
    }
}

/// Per-arm running means of the rewards observed so far; `None` rewards count as pulls only.
#[derive(Clone, Debug)]
pub(crate) struct Means {
    pub pulls: Vec<u64>,
    pub sum: Vec<f64>,
    pub known: Vec<u64>,
}

impl Means {
    pub fn new(n: usize) -> Self {
        Means {
            pulls: vec![0; n],
            sum: vec![0.0; n],
            known: vec![0; n],
        }
    }

    pub fn observe(&mut self, obs: &Observation<'_>) {
        self.pulls[obs.arm] += 1;
        if let Some(r) = obs.reward {
            self.sum[obs.arm] += r;
            self.known[obs.arm] += 1;
        }
    }

    /// Mean reward of an arm, 0 when it has none (the convention of ER-UCB's and BTB's code).
    pub fn mean(&self, arm: usize) -> f64 {
        if self.known[arm] == 0 {
            0.0
        } else {
            self.sum[arm] / self.known[arm] as f64
        }
    }

    /// The first arm (index order) pulled fewer than `n` times.
    pub fn first_below(&self, n: u64) -> Option<usize> {
        self.pulls.iter().position(|&p| p < n)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::protocol::{Revealed, View, WorldKind};

    /// A view with the given pull counts, for decision tests.
    pub fn view<'a>(pulls: &'a [u64], zeros: &'a [f64]) -> View<'a> {
        View {
            n_arms: pulls.len(),
            step: pulls.iter().sum(),
            pulls,
            arm_clock: zeros,
            arm_best: zeros,
            budget: 100.0,
            used: pulls.iter().sum::<u64>() as f64,
            slice: 1.0,
            kind: WorldKind::PullCount,
            pool: None,
        }
    }

    pub fn obs(arm: usize, reward: Option<f64>) -> Observation<'static> {
        static NONE: [Revealed; 0] = [];
        Observation {
            arm,
            reward,
            revealed: &NONE,
            arm_clock: 0.0,
            exhausted: false,
        }
    }

    /// Feed a history of (arm, reward) into a policy.
    pub fn feed(p: &mut dyn Policy, history: &[(usize, Option<f64>)]) -> Vec<u64> {
        let n = history.iter().map(|h| h.0).max().map_or(0, |m| m + 1);
        let mut pulls = vec![0u64; n];
        for &(a, r) in history {
            p.observe(&obs(a, r));
            pulls[a] += 1;
        }
        pulls
    }

    pub fn build(family: &str, params: &[(&str, toml::Value)], n_arms: usize) -> Box<dyn Policy> {
        let given: BTreeMap<String, toml::Value> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        expand(family, &given).unwrap().remove(0).build(n_arms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_expand_in_declaration_order() {
        let mut given = BTreeMap::new();
        given.insert(
            "epsilon".to_string(),
            toml::Value::Array(vec![toml::Value::Float(0.05), toml::Value::Float(0.1)]),
        );
        let cfgs = expand("epsilon-greedy", &given).unwrap();
        let ids: Vec<String> = cfgs.iter().map(PolicyConfig::id).collect();
        assert_eq!(
            ids,
            vec![
                "epsilon-greedy(epsilon=0.05, initial_pulls=0)",
                "epsilon-greedy(epsilon=0.1, initial_pulls=0)"
            ]
        );
        assert_eq!(
            cfgs[0].params_json(),
            r#"{"epsilon":0.05,"initial_pulls":0}"#
        );
    }

    #[test]
    fn unknown_policy_lists_the_registry() {
        let err = expand("ucb2", &BTreeMap::new()).unwrap_err().to_string();
        assert!(err.contains("unknown policy 'ucb2'"), "{err}");
        assert!(
            err.contains("ucb1-btb") && err.contains("round-robin"),
            "{err}"
        );
    }

    #[test]
    fn unknown_parameter_lists_the_policy_parameters() {
        let mut given = BTreeMap::new();
        given.insert("eps".to_string(), toml::Value::Float(0.1));
        let err = expand("epsilon-greedy", &given).unwrap_err().to_string();
        assert!(err.contains("no parameter 'eps'"), "{err}");
        assert!(err.contains("epsilon, initial_pulls"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_rejected_with_the_range() {
        let mut given = BTreeMap::new();
        given.insert("epsilon".to_string(), toml::Value::Float(1.5));
        let err = expand("epsilon-greedy", &given).unwrap_err().to_string();
        assert!(err.contains("number in [0, 1]"), "{err}");
        let mut given = BTreeMap::new();
        given.insert("tie_break".to_string(), toml::Value::String("last".into()));
        let err = expand("ucb1", &given).unwrap_err().to_string();
        assert!(err.contains("one of first, random"), "{err}");
    }

    fn external(text: &str) -> Result<Vec<PolicyConfig>> {
        let t: toml::Table = text.parse().unwrap();
        expand_external(&t.into_iter().collect())
    }

    #[test]
    fn external_policies_expand_their_params_and_name_bad_keys() {
        let cfgs = external(
            "name = \"py\"\ncommand = [\"python3\", \"p.py\"]\nparams = { c = [1.0, 2], greedy = true, kind = \"x\" }",
        )
        .unwrap();
        let ids: Vec<String> = cfgs.iter().map(PolicyConfig::id).collect();
        assert_eq!(
            ids,
            vec![
                "py(c=1, greedy=true, kind=x)",
                "py(c=2, greedy=true, kind=x)"
            ]
        );
        assert_eq!(cfgs[1].params_json(), r#"{"c":2,"greedy":true,"kind":"x"}"#);
        assert_eq!(cfgs[0].family_name(), "py");
        let e = |t: &str| external(t).unwrap_err().to_string();
        assert!(e("command = [\"x\"]").contains("needs 'name'"));
        assert!(e("name = \"py\"").contains("needs 'command'"));
        assert!(e("name = \"py\"\ncommand = \"python3 p.py\"").contains("as a list"));
        assert!(e("name = \"py\"\ncommand = [\"x\"]\nc = 2").contains("has no key 'c'"));
        assert!(e("name = \"ucb1\"\ncommand = [\"x\"]").contains("built-in policy's"));
        assert!(e("name = \"a(b)\"\ncommand = [\"x\"]").contains("letters, digits"));
        assert!(e("name = \"../../x\"\ncommand = [\"x\"]").contains("letters, digits"));
        assert!(
            e("name = \"py\"\ncommand = [\"x\"]\non_failure = \"retry\"")
                .contains("allowed: \"stop\", \"restart\"")
        );
        assert!(e("name = \"py\"\ncommand = [\"x\"]\ntimeout_s = 0").contains("positive"));
        assert!(e("name = \"py\"\ncommand = [\"x\"]\nparams = { c = [] }").contains("empty list"));
    }

    #[test]
    fn every_family_builds_and_names_its_source() {
        for f in registry() {
            assert!(f.source.len() > 10, "{} cites its source", f.name);
            let cfg = default_config(f.name).unwrap();
            let _ = cfg.build(3);
        }
    }
}
