//! Experiment files (TOML): what to replay, in which world, under which policies.
//!
//! ```toml
//! name = "quickstart"
//! traces = "../traces/lcdb"          # relative to this file's folder
//! seed = 1
//! repetitions = 3
//! [tasks]                            # optional filters
//! runs = [0]
//! [world]
//! kind = "time-sliced"               # or "pull-count"
//! budget_unit = "task"               # seconds | task (time-sliced); pulls | pool (pull-count)
//! budgets = [0.1, 0.25, 0.5]
//! slice = 0.01
//! [[policies]]
//! family = "epsilon-greedy"
//! epsilon = [0.05, 0.1]              # a list expands into one policy per value
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::policy::{self, PolicyConfig};
use crate::rng::fnv1a64;
use crate::trace::{LoadOptions, TaskFilter};

pub use super::worlds::{BudgetUnit, WorldOptions, WorldSetup};
use super::worlds::{WorldSpec, resolve_world};
use crate::replay::WorldKind;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(default)]
    description: String,
    traces: Option<String>,
    seed: Option<u64>,
    #[serde(default = "one")]
    repetitions: u32,
    #[serde(default)]
    allow_missing_arms: bool,
    trajectories: Option<String>,
    #[serde(default)]
    tasks: TasksSpec,
    world: WorldSpec,
    policies: Vec<PolicySpec>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TasksSpec {
    datasets: Option<Vec<String>>,
    runs: Option<Vec<i64>>,
    learners: Option<Vec<String>>,
    max_tasks: Option<usize>,
}

#[derive(Deserialize)]
struct PolicySpec {
    family: String,
    #[serde(flatten)]
    params: BTreeMap<String, toml::Value>,
}

/// A resolved experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The experiment file.
    pub file: PathBuf,
    /// Its name (the results folder's, `results/<name>`).
    pub name: String,
    /// What it is for, in a sentence.
    pub description: String,
    /// The trace set; `None` for the synthetic world.
    pub traces_dir: Option<PathBuf>,
    /// The root of every cell's seed.
    pub seed: u64,
    /// Repetitions of each (task, budget, policy).
    pub repetitions: u32,
    /// How the trace set is loaded (the `[tasks]` filters).
    pub load: LoadOptions,
    /// The world, its budgets and workers.
    pub world: WorldSetup,
    /// The policies, each a family with its parameters.
    pub policies: Vec<PolicyConfig>,
    /// Which decisions trajectories.parquet keeps.
    pub trajectories: TrajectoryMode,
    /// The file's text, kept for the lock file.
    pub source: String,
}

/// Which decisions a run writes to trajectories.parquet (key `trajectories`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrajectoryMode {
    /// Every decision (the default).
    #[default]
    EveryDecision,
    /// A cell's first decision and each decision after which the incumbent changed (enough for
    /// anytime curves; a fraction of the rows on large grids).
    IncumbentChanges,
    /// No trajectories (runs.parquet only).
    None,
}

impl TrajectoryMode {
    /// Every mode with its name in experiment files.
    pub const ALL: [(&'static str, TrajectoryMode); 3] = [
        ("every-decision", TrajectoryMode::EveryDecision),
        ("incumbent-changes", TrajectoryMode::IncumbentChanges),
        ("none", TrajectoryMode::None),
    ];

    /// The name in experiment files.
    pub fn as_str(&self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, m)| m == self)
            .map_or("every-decision", |(n, _)| n)
    }
}

impl Experiment {
    /// A hash of everything that decides the cells and their results (not the program version):
    /// a results folder may only be resumed by an experiment with the same fingerprint.
    ///
    /// The hash is of a canonical description (serde JSON of the fields below, in this order;
    /// never of `Debug` text or prose), so renaming a Rust field or rewording a description does
    /// not change it. Results format 3 introduced it.
    pub fn fingerprint(&self, trace_hash: &str) -> String {
        fnv_hex(&serde_json::to_string(&self.decides(trace_hash)).unwrap_or_default())
    }

    /// What decides the cells and their results, as the fingerprint hashes it.
    pub fn decides<'a>(&'a self, trace_hash: &'a str) -> Decides<'a> {
        let f = &self.load.filter;
        Decides {
            results_format: crate::results::RESULTS_FORMAT,
            name: &self.name,
            seed: self.seed,
            repetitions: self.repetitions,
            datasets: f.datasets.as_deref(),
            runs: f.runs.as_deref(),
            learners: f.learners.as_deref(),
            max_tasks: f.max_tasks,
            allow_missing_arms: self.load.allow_missing_arms,
            world: &self.world,
            policies: self
                .policies
                .iter()
                .map(|p| DecidingPolicy {
                    id: p.id(),
                    external: p.external.as_ref().map(|e| DecidingExternal {
                        command: &e.command,
                        env: &e.env,
                        files: &e.files,
                    }),
                })
                .collect(),
            data_hash: trace_hash,
            trajectories: self.trajectories.as_str(),
        }
    }
}

fn fnv_hex(text: &str) -> String {
    format!("{:016x}", fnv1a64(text.as_bytes()))
}

/// Everything that decides an experiment's cells and results (see `Experiment::fingerprint`).
#[derive(serde::Serialize)]
pub struct Decides<'a> {
    pub results_format: i64,
    pub name: &'a str,
    pub seed: u64,
    pub repetitions: u32,
    pub datasets: Option<&'a [String]>,
    pub runs: Option<&'a [i64]>,
    pub learners: Option<&'a [String]>,
    pub max_tasks: Option<usize>,
    pub allow_missing_arms: bool,
    pub world: &'a WorldSetup,
    pub policies: Vec<DecidingPolicy<'a>>,
    /// The content hash of the trace set or pool.
    pub data_hash: &'a str,
    pub trajectories: &'static str,
}

/// A policy as the fingerprint sees it: its id (family and every parameter) and, for an external
/// policy, its command, environment and files' content hashes.
#[derive(serde::Serialize)]
pub struct DecidingPolicy<'a> {
    pub id: String,
    pub external: Option<DecidingExternal<'a>>,
}

#[derive(serde::Serialize)]
pub struct DecidingExternal<'a> {
    pub command: &'a [String],
    pub env: &'a std::collections::BTreeMap<String, String>,
    pub files: &'a [(String, String)],
}

/// Parse and check an experiment file. Errors name the file, the key and the allowed values.
pub fn load_experiment(path: &Path) -> Result<Experiment> {
    // A bare name (`quickstart`) or a bundled experiment's path, from any folder.
    let path = &crate::bundled::experiment(path)?;
    let source = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the experiment file", path.display()))?;
    let f: File = toml::from_str(&source)
        .with_context(|| format!("{}: invalid experiment file", path.display()))?;
    let seed = check_keys(path, &f)?;
    let trajectories = trajectory_mode(path, f.trajectories.as_deref())?;
    let world = resolve_world(path, &f.world)?;
    let policies = expand_policies(path, &f.policies, &world)?;
    let traces_dir = traces_dir(path, f.traces.as_deref(), world.kind())?;
    Ok(Experiment {
        file: path.to_path_buf(),
        name: f.name,
        description: f.description,
        traces_dir,
        seed,
        repetitions: f.repetitions,
        load: LoadOptions {
            allow_missing_arms: f.allow_missing_arms,
            filter: TaskFilter {
                datasets: f.tasks.datasets,
                runs: f.tasks.runs,
                learners: f.tasks.learners,
                max_tasks: f.tasks.max_tasks,
            },
        },
        world,
        policies,
        trajectories,
        source,
    })
}

/// The file's top-level keys checked (the seed given, no empty filter, a folder name, at least
/// one repetition and one policy); returns the seed.
fn check_keys(path: &Path, f: &File) -> Result<u64> {
    let Some(seed) = f.seed else {
        bail!(
            "{}: missing key 'seed' (required: the experiment's seed, an integer >= 0, from which every cell's seed is derived; e.g. seed = 1)",
            path.display()
        );
    };
    for (key, empty) in [
        (
            "tasks.datasets",
            f.tasks.datasets.as_ref().is_some_and(Vec::is_empty),
        ),
        (
            "tasks.runs",
            f.tasks.runs.as_ref().is_some_and(Vec::is_empty),
        ),
        (
            "tasks.learners",
            f.tasks.learners.as_ref().is_some_and(Vec::is_empty),
        ),
    ] {
        if empty {
            bail!(
                "{}: key '{key}' is an empty list, which keeps nothing; remove the key to keep all, or list what to keep",
                path.display()
            );
        }
    }
    if f.tasks.max_tasks == Some(0) {
        bail!(
            "{}: key 'tasks.max_tasks' is 0, which keeps no task; remove it to keep all tasks",
            path.display()
        );
    }
    crate::names::check("key 'name' (the results folder's name):", &f.name)
        .with_context(|| path.display().to_string())?;
    if f.repetitions == 0 {
        bail!("{}: key 'repetitions' must be at least 1", path.display());
    }
    if f.policies.is_empty() {
        bail!(
            "{}: no [[policies]]; add at least one (see `banditbench policies`)",
            path.display()
        );
    }
    Ok(seed)
}

/// The key `trajectories`: which steps the results keep (every decision when absent).
fn trajectory_mode(path: &Path, t: Option<&str>) -> Result<TrajectoryMode> {
    match t {
        None => Ok(TrajectoryMode::EveryDecision),
        Some(t) => TrajectoryMode::ALL
            .iter()
            .find(|(n, _)| *n == t)
            .map(|(_, m)| *m)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: key 'trajectories' is '{t}'; allowed: every-decision, incumbent-changes, none",
                    path.display()
                )
            }),
    }
}

/// Every `[[policies]]` entry expanded into its grid of configurations, each checked against
/// the world (and its workers), none listed twice.
fn expand_policies(
    path: &Path,
    entries: &[PolicySpec],
    world: &WorldSetup,
) -> Result<Vec<PolicyConfig>> {
    let mut policies: Vec<PolicyConfig> = Vec::new();
    for (i, p) in entries.iter().enumerate() {
        let expanded = if p.family == "external" {
            policy::expand_external(&p.params)
        } else if p.family == "python" {
            policy::expand_in_process(&p.params)
        } else {
            policy::expand(&p.family, &p.params)
        }
        .with_context(|| format!("{}: [[policies]] entry {}", path.display(), i + 1))?;
        for cfg in expanded {
            if !cfg.family.worlds.contains(&world.kind()) {
                bail!(
                    "{}: policy '{}' does not support the {} world",
                    path.display(),
                    cfg.family_name(),
                    world.kind().as_str()
                );
            }
            if world.workers > 1 && !cfg.family.parallel.contains(&world.kind()) {
                let runs_on: Vec<&str> = cfg.family.parallel.iter().map(|w| w.as_str()).collect();
                bail!(
                    "{}: policy '{}' does not run on several workers in the {} world (key 'world.workers' is {}): it could start an arm that is still running; set workers = 1, or use a policy that runs on several workers (`banditbench policies` marks them){}",
                    path.display(),
                    cfg.family_name(),
                    world.kind().as_str(),
                    world.workers,
                    if runs_on.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; '{}' does in the {} world",
                            cfg.family_name(),
                            runs_on.join(" and ")
                        )
                    }
                );
            }
            if policies.contains(&cfg) {
                bail!("{}: policy {} is listed twice", path.display(), cfg.id());
            }
            policies.push(cfg);
        }
    }
    Ok(policies)
}

/// The key `traces`, relative to the file: required, except in the synthetic world, which
/// refuses it.
fn traces_dir(path: &Path, traces: Option<&str>, kind: WorldKind) -> Result<Option<PathBuf>> {
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(match (traces, kind) {
        (Some(t), WorldKind::Synthetic) => bail!(
            "{}: key 'traces' ('{t}') does not apply to the synthetic world, whose arms are [[world.arms]]",
            path.display()
        ),
        (Some(t), _) => Some(crate::bundled::traces(base, t)),
        (None, WorldKind::Synthetic) => None,
        (None, _) => bail!(
            "{}: missing key 'traces' (the trace-set folder, relative to this file, e.g. \"../traces/lcdb\")",
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trajectories_and_traces_keys_are_checked_with_the_allowed_values() {
        let f = Path::new("e/x.toml");
        assert_eq!(
            trajectory_mode(f, None).unwrap(),
            TrajectoryMode::EveryDecision
        );
        assert_eq!(
            trajectory_mode(f, Some("incumbent-changes")).unwrap(),
            TrajectoryMode::IncumbentChanges
        );
        let e = trajectory_mode(f, Some("all")).unwrap_err().to_string();
        assert_eq!(
            e,
            "e/x.toml: key 'trajectories' is 'all'; allowed: every-decision, incumbent-changes, none"
        );
        assert!(traces_dir(f, None, WorldKind::Synthetic).unwrap().is_none());
        let e = traces_dir(f, Some("t"), WorldKind::Synthetic)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not apply to the synthetic world"), "{e}");
        let e = traces_dir(f, None, WorldKind::Pool)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("e/x.toml: missing key 'traces'"), "{e}");
    }
}
