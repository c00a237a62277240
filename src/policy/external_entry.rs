//! An external policy's `[[policies]]` entry: its family in the registry's terms, its keys and
//! how it expands.

use super::*;
use crate::protocol::WorldKind;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The family every external policy belongs to in the registry's terms (results name each by
/// its own `name`).
pub(super) static EXTERNAL: LazyLock<Family> = LazyLock::new(|| Family {
    name: "external",
    summary: "a policy in any language, run as a process speaking the JSON-lines policy protocol",
    source: "banditbench's policy protocol, version 1 (docs/protocol.md); cite the policy's own paper",
    worlds: &WorldKind::ALL,
    parallel: &WorldKind::ALL,
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
    use external::ExternalSpec;
    check_keys(given, &EXTERNAL_KEYS, "an external policy", "")?;
    let name = entry_name(given, "external")?;
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
    let extra_files = entry_files(given, &here)?;
    let files = external::content_hashes(&command, &extra_files).with_context(|| here.clone())?;
    let timeout_s = match given.get("timeout_s") {
        None => 60.0,
        Some(toml::Value::Float(x)) if *x > 0.0 && x.is_finite() => *x,
        Some(toml::Value::Integer(i)) if *i > 0 => *i as f64,
        Some(v) => bail!("{here}: 'timeout_s' is {v}; give a positive number of seconds"),
    };
    let on_failure = entry_on_failure(given, &here)?;
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
    let spec = ExternalSpec::new(
        name,
        command,
        files,
        env,
        std::time::Duration::from_secs_f64(timeout_s),
        on_failure,
        pin_cpu,
        pool_space,
    );
    entry_configs(given, spec, &here)
}

/// The keys of an in-process policy's `[[policies]]` entry (`family = "python"`), each with what
/// it does (`banditbench policies` prints this list).
pub const IN_PROCESS_KEYS: [(&str, &str); 7] = [
    (
        "name",
        "its name in results and figures (letters, digits, '-', '_', '.', '+')",
    ),
    (
        "class",
        "the policy class, 'path/to/file.py:Class' or 'module:Class' (default: the class the Python API registered under `name`)",
    ),
    (
        "params",
        "a table of parameters passed to the class as keyword arguments; lists expand",
    ),
    (
        "files",
        "files or folders the policy's code lives in besides the class's file; their content decides its results (default: none)",
    ),
    (
        "source",
        "a digest of the policy's source, recorded like a file's content hash (the Python API sets it)",
    ),
    ("on_failure", "stop | restart (default stop)"),
    (
        "pool_space",
        "pool world: give the cell the space and the open configurations' encodings (`cell.pool[\"space\"]`, ...; default false; the Python API sets it from the class's `pool_space` attribute)",
    ),
];

/// Expand one `[[policies]]` entry with `family = "python"`: a Python policy run in-process by
/// the Python package (`banditbench.run`, or the package's `banditbench` command):
///
/// ```toml
/// [[policies]]
/// family = "python"
/// name = "my-ucb"
/// class = "python/examples/ucb1.py:UCB1"   # or "module:Class"
/// params = { c = [1.0, 2.0] }
/// ```
pub fn expand_in_process(given: &BTreeMap<String, toml::Value>) -> Result<Vec<PolicyConfig>> {
    use external::ExternalSpec;
    check_keys(
        given,
        &IN_PROCESS_KEYS,
        "a python policy",
        "; a policy run as a process has family = \"external\"",
    )?;
    let name = entry_name(given, "python")?;
    let here = format!("python policy '{name}'");
    let text = |key: &str| -> Result<Option<String>> {
        match given.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(v) => bail!("{here}: '{key}' is {v}; give a non-empty text"),
        }
    };
    let class = text("class")?;
    let mut hashed: Vec<String> = Vec::new();
    if let Some(c) = &class {
        let Some((module, cls)) = c
            .rsplit_once(':')
            .filter(|(m, k)| !m.is_empty() && !k.is_empty())
        else {
            bail!("{here}: 'class' is \"{c}\"; give 'path/to/file.py:Class' or 'module:Class'");
        };
        let _ = cls;
        if module.ends_with(".py") {
            if !std::path::Path::new(module).is_file() {
                bail!(
                    "{here}: 'class' names {module}, which is not a file (paths are relative to the current directory)"
                );
            }
            hashed.push(module.to_string());
        }
    }
    let extra = entry_files(given, &here)?;
    let mut files = external::content_hashes(&hashed, &extra).with_context(|| here.clone())?;
    if let Some(src) = text("source")? {
        files.push(("<source>".to_string(), src));
    }
    let on_failure = entry_on_failure(given, &here)?;
    let pool_space = match given.get("pool_space") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => bail!("{here}: 'pool_space' is {v}; give true or false"),
    };
    let spec = ExternalSpec::in_process(name, class, files, on_failure, pool_space);
    super::hosted::host(&spec.name)?.check(&spec)?;
    entry_configs(given, spec, &here)
}

/// Every key of an entry is one of `keys`.
fn check_keys(
    given: &BTreeMap<String, toml::Value>,
    keys: &[(&str, &str)],
    what: &str,
    hint: &str,
) -> Result<()> {
    for key in given.keys() {
        if !keys.iter().any(|(k, _)| k == key) {
            let names: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
            bail!(
                "{what} has no key '{key}'; its keys: {} (policy parameters go in `params = {{ ... }}`{hint})",
                names.join(", ")
            );
        }
    }
    Ok(())
}

/// The `name` of an external or python entry, checked.
fn entry_name(given: &BTreeMap<String, toml::Value>, family: &str) -> Result<String> {
    let name = match given.get("name") {
        Some(toml::Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) => {
            bail!("{family} policy: 'name' is {v}; give a non-empty text, e.g. name = \"my-ucb\"")
        }
        None => bail!(
            "a {family} policy needs 'name', the name results and figures give it (e.g. name = \"my-ucb\")"
        ),
    };
    crate::names::check(&format!("{family} policy name"), &name)?;
    if name == "external" || name == "python" || registry().iter().any(|f| f.name == name) {
        bail!("{family} policy '{name}': the name is a built-in policy's; choose another");
    }
    Ok(name)
}

/// The `files` of an external or python entry: paths, as given.
fn entry_files(given: &BTreeMap<String, toml::Value>, here: &str) -> Result<Vec<String>> {
    Ok(match given.get("files") {
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
    })
}

fn entry_on_failure(
    given: &BTreeMap<String, toml::Value>,
    here: &str,
) -> Result<external::OnFailure> {
    use external::OnFailure;
    Ok(match given.get("on_failure") {
        None => OnFailure::Stop,
        Some(toml::Value::String(s)) if s == "stop" => OnFailure::Stop,
        Some(toml::Value::String(s)) if s == "restart" => OnFailure::Restart,
        Some(v) => bail!("{here}: 'on_failure' is {v}; allowed: \"stop\", \"restart\""),
    })
}

/// The entry's `params` expanded into one configuration each, sharing `spec`.
fn entry_configs(
    given: &BTreeMap<String, toml::Value>,
    spec: external::ExternalSpec,
    here: &str,
) -> Result<Vec<PolicyConfig>> {
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
    let (grid, per_dataset) = expand_params(&spec.name, &defs, &params)?;
    let spec = std::sync::Arc::new(spec);
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
