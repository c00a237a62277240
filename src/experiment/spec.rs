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
use crate::replay::{ArmDist, Exhausted, Order, Overhead, WorldKind};
use crate::rng::fnv1a64;
use crate::trace::{LoadOptions, TaskFilter};

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
#[serde(deny_unknown_fields)]
struct WorldSpec {
    kind: String,
    budgets: Vec<f64>,
    budget_unit: Option<String>,
    slice: Option<f64>,
    overhead: Option<String>,
    overhead_s: Option<f64>,
    order: Option<String>,
    failures_consume_budget: Option<bool>,
    exhausted: Option<String>,
    arms: Option<Vec<ArmSpec>>,
    incumbent: Option<String>,
    recommendation: Option<String>,
    max_arms: Option<usize>,
    per_learner: Option<bool>,
    last_unit: Option<String>,
    ties: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArmSpec {
    name: String,
    distribution: String,
    mean: Option<f64>,
    sd: Option<f64>,
    p: Option<f64>,
}

#[derive(Deserialize)]
struct PolicySpec {
    family: String,
    #[serde(flatten)]
    params: BTreeMap<String, toml::Value>,
}

pub use crate::replay::BudgetUnit;
use crate::replay::pool::{IncumbentRule, LastUnit, PoolOptions, Recommendation, Ties};

/// What each world adds to budgets: one variant per world, so no option can be set for a world it
/// does not apply to.
#[derive(Clone, Debug, PartialEq)]
pub enum WorldOptions {
    TimeSliced {
        /// The slice, in the budget unit.
        slice: f64,
        overhead: Overhead,
    },
    PullCount {
        order: Order,
        failures_consume_budget: bool,
        exhausted: Exhausted,
    },
    Synthetic {
        /// The arms and their distributions.
        arms: Vec<(String, ArmDist)>,
    },
    Pool(PoolOptions),
}

/// A resolved world: budgets, their unit, and the world's own options.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldSetup {
    pub budgets: Vec<f64>,
    pub unit: BudgetUnit,
    pub options: WorldOptions,
}

impl WorldSetup {
    pub fn kind(&self) -> WorldKind {
        match self.options {
            WorldOptions::TimeSliced { .. } => WorldKind::TimeSliced,
            WorldOptions::PullCount { .. } => WorldKind::PullCount,
            WorldOptions::Synthetic { .. } => WorldKind::Synthetic,
            WorldOptions::Pool(_) => WorldKind::Pool,
        }
    }

    /// The slice in the budget unit (time-sliced), 1 otherwise.
    pub fn slice(&self) -> f64 {
        match self.options {
            WorldOptions::TimeSliced { slice, .. } => slice,
            _ => 1.0,
        }
    }

    /// The overhead model (time-sliced), none otherwise.
    pub fn overhead(&self) -> Overhead {
        match self.options {
            WorldOptions::TimeSliced { overhead, .. } => overhead,
            _ => Overhead::None,
        }
    }

    /// The synthetic world's arms (empty otherwise).
    pub fn arms(&self) -> &[(String, ArmDist)] {
        match &self.options {
            WorldOptions::Synthetic { arms } => arms,
            _ => &[],
        }
    }

    pub fn describe(&self) -> String {
        match &self.options {
            WorldOptions::TimeSliced { slice, overhead } => format!(
                "time-sliced, budgets {:?} {}, slice {} {}, overhead {}",
                self.budgets,
                self.unit.as_str(),
                slice,
                self.unit.as_str(),
                overhead.describe()
            ),
            WorldOptions::PullCount {
                order,
                failures_consume_budget,
                exhausted,
            } => format!(
                "pull-count, budgets {:?} {}, order {}, failures_consume_budget {}, exhausted {}",
                self.budgets,
                self.unit.as_str(),
                match order {
                    Order::Permute => "permute",
                    Order::Recorded => "recorded",
                },
                failures_consume_budget,
                match exhausted {
                    Exhausted::Empty => "empty",
                    Exhausted::Resample => "resample",
                    Exhausted::Stop => "stop",
                }
            ),
            WorldOptions::Pool(o) => format!(
                "pool, budgets {:?} {}, {}{}",
                self.budgets,
                self.unit.as_str(),
                o.describe(),
                // The rule acts on seconds budgets only, and is named there (the rule changed
                // from charge to cut, so that results of the older rule are not resumed).
                if self.unit == BudgetUnit::Seconds {
                    format!(", last unit {}", o.last_unit.as_str())
                } else {
                    String::new()
                }
            ),
            WorldOptions::Synthetic { arms } => format!(
                "synthetic, budgets {:?} pulls, arms {}",
                self.budgets,
                arms.iter()
                    .map(|(n, d)| format!("{n} ~ {}", d.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// A resolved experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    pub file: PathBuf,
    pub name: String,
    pub description: String,
    /// The trace set; `None` for the synthetic world.
    pub traces_dir: Option<PathBuf>,
    pub seed: u64,
    pub repetitions: u32,
    pub load: LoadOptions,
    pub world: WorldSetup,
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
    pub const ALL: [(&'static str, TrajectoryMode); 3] = [
        ("every-decision", TrajectoryMode::EveryDecision),
        ("incumbent-changes", TrajectoryMode::IncumbentChanges),
        ("none", TrajectoryMode::None),
    ];

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
    pub fn fingerprint(&self, trace_hash: &str) -> String {
        let mut ids: Vec<String> = self.policies.iter().map(PolicyConfig::id).collect();
        // An external policy's command and environment decide its results too (named only for
        // external policies, so that other fingerprints stay as they were).
        for (id, p) in ids.iter_mut().zip(&self.policies) {
            if let Some(e) = &p.external {
                id.push_str(&e.identity());
            }
        }
        let text = format!(
            "{}|{}|{}|{:?}|{}|{}|{:?}|{}",
            self.name,
            self.seed,
            self.repetitions,
            self.load.filter,
            self.load.allow_missing_arms,
            self.world.describe(),
            ids,
            trace_hash
        );
        // The trajectory mode changes what is stored, not the cells: named only when it is not
        // the default, so that fingerprints of existing results stay as they were.
        let text = match self.trajectories {
            TrajectoryMode::EveryDecision => text,
            m => format!("{text}|trajectories={}", m.as_str()),
        };
        format!("{:016x}", fnv1a64(text.as_bytes()))
    }
}

fn choice<T: Copy>(
    file: &Path,
    key: &str,
    given: Option<&str>,
    options: &[(&str, T)],
    default: T,
) -> Result<T> {
    match given {
        None => Ok(default),
        Some(g) => match options.iter().find(|(n, _)| *n == g) {
            Some((_, v)) => Ok(*v),
            None => bail!(
                "{}: key '{key}' is '{g}'; allowed: {}",
                file.display(),
                options
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

fn resolve_world(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
    let at = file.display();
    let kind = choice(
        file,
        "world.kind",
        Some(w.kind.as_str()),
        &[
            ("time-sliced", WorldKind::TimeSliced),
            ("pull-count", WorldKind::PullCount),
            ("synthetic", WorldKind::Synthetic),
            ("pool", WorldKind::Pool),
        ],
        WorldKind::TimeSliced,
    )?;
    if w.budgets.is_empty() {
        bail!("{at}: key 'world.budgets' is empty; give at least one budget");
    }
    for (i, b) in w.budgets.iter().enumerate() {
        if !(b.is_finite() && *b > 0.0) {
            bail!("{at}: key 'world.budgets' holds {b}; budgets must be positive numbers");
        }
        if w.budgets[..i].contains(b) {
            bail!(
                "{at}: key 'world.budgets' lists {b} twice; each budget is a cell of its own (with its own seed), so list it once"
            );
        }
    }
    // Every key belongs to one world; naming it for another is an error, not silently ignored.
    let owners: [(&str, bool, &[WorldKind]); 13] = [
        ("arms", w.arms.is_some(), &[WorldKind::Synthetic]),
        ("slice", w.slice.is_some(), &[WorldKind::TimeSliced]),
        ("overhead", w.overhead.is_some(), &[WorldKind::TimeSliced]),
        (
            "overhead_s",
            w.overhead_s.is_some(),
            &[WorldKind::TimeSliced],
        ),
        ("order", w.order.is_some(), &[WorldKind::PullCount]),
        (
            "failures_consume_budget",
            w.failures_consume_budget.is_some(),
            &[WorldKind::PullCount, WorldKind::Pool],
        ),
        ("exhausted", w.exhausted.is_some(), &[WorldKind::PullCount]),
        ("incumbent", w.incumbent.is_some(), &[WorldKind::Pool]),
        (
            "recommendation",
            w.recommendation.is_some(),
            &[WorldKind::Pool],
        ),
        ("max_arms", w.max_arms.is_some(), &[WorldKind::Pool]),
        ("per_learner", w.per_learner.is_some(), &[WorldKind::Pool]),
        ("last_unit", w.last_unit.is_some(), &[WorldKind::Pool]),
        ("ties", w.ties.is_some(), &[WorldKind::Pool]),
    ];
    for (key, present, owners) in owners {
        if present && !owners.contains(&kind) {
            let names: Vec<&str> = owners.iter().map(|o| o.as_str()).collect();
            bail!(
                "{at}: key 'world.{key}' applies only to the {} world{}",
                names.join(" and "),
                if names.len() > 1 { "s" } else { "" }
            );
        }
    }
    let whole = |unit: &str| -> Result<()> {
        for b in &w.budgets {
            if b.fract() != 0.0 {
                bail!("{at}: key 'world.budgets' holds {b}; {unit} budgets are whole numbers");
            }
        }
        Ok(())
    };
    match kind {
        WorldKind::Pool => {
            let unit = choice(
                file,
                "world.budget_unit",
                w.budget_unit.as_deref(),
                &[
                    ("units", BudgetUnit::Units),
                    ("evaluations", BudgetUnit::Evaluations),
                    ("seconds", BudgetUnit::Seconds),
                ],
                BudgetUnit::Units,
            )?;
            if unit == BudgetUnit::Units {
                whole("unit")?;
            }
            if w.last_unit.is_some() && unit != BudgetUnit::Seconds {
                bail!(
                    "{at}: key 'world.last_unit' applies only to budget_unit = \"seconds\" (a unit budget never splits a unit)"
                );
            }
            let max_arms = match w.max_arms {
                Some(0) => bail!(
                    "{at}: key 'world.max_arms' is 0, which allows no arm; remove it for no cap"
                ),
                m => m,
            };
            Ok(WorldSetup {
                budgets: w.budgets.clone(),
                unit,
                options: WorldOptions::Pool(PoolOptions {
                    failures_consume_budget: w.failures_consume_budget.unwrap_or(true),
                    incumbent: choice(
                        file,
                        "world.incumbent",
                        w.incumbent.as_deref(),
                        &[
                            ("best-seen", IncumbentRule::BestSeen),
                            ("last", IncumbentRule::Last),
                        ],
                        IncumbentRule::BestSeen,
                    )?,
                    recommendation: choice(
                        file,
                        "world.recommendation",
                        w.recommendation.as_deref(),
                        &[
                            ("best-seen", Recommendation::BestSeen),
                            ("last", Recommendation::Last),
                            ("mean-of-units", Recommendation::MeanOfUnits),
                            ("most-trained", Recommendation::MostTrained),
                        ],
                        Recommendation::BestSeen,
                    )?,
                    max_arms,
                    per_learner: w.per_learner.unwrap_or(false),
                    last_unit: choice(
                        file,
                        "world.last_unit",
                        w.last_unit.as_deref(),
                        &[("cut", LastUnit::Cut), ("charge", LastUnit::Charge)],
                        LastUnit::Cut,
                    )?,
                    ties: choice(
                        file,
                        "world.ties",
                        w.ties.as_deref(),
                        &[("first", Ties::First), ("last", Ties::Last)],
                        Ties::First,
                    )?,
                }),
            })
        }
        WorldKind::TimeSliced => {
            let unit = choice(
                file,
                "world.budget_unit",
                w.budget_unit.as_deref(),
                &[("seconds", BudgetUnit::Seconds), ("task", BudgetUnit::Task)],
                BudgetUnit::Seconds,
            )?;
            let Some(slice) = w.slice else {
                bail!(
                    "{at}: the time-sliced world needs 'world.slice' (the slice length, in the budget unit '{}')",
                    unit.as_str()
                );
            };
            if !(slice.is_finite() && slice > 0.0) {
                bail!("{at}: key 'world.slice' is {slice}; it must be a positive number");
            }
            let no_seconds = |mode: &str| -> Result<()> {
                if w.overhead_s.is_some() {
                    bail!(
                        "{at}: key 'world.overhead_s' applies only to overhead = \"fixed\" or \"per_fit\" (here: {mode})"
                    );
                }
                Ok(())
            };
            let overhead = match w.overhead.as_deref() {
                None | Some("none") => {
                    no_seconds("none")?;
                    Overhead::None
                }
                Some("fixed") => match w.overhead_s {
                    Some(s) if s.is_finite() && s >= 0.0 => Overhead::Fixed(s),
                    _ => bail!(
                        "{at}: overhead = \"fixed\" needs 'world.overhead_s', the seconds charged per decision (>= 0)"
                    ),
                },
                Some("per_fit") => match w.overhead_s {
                    Some(s) if s.is_finite() && s >= 0.0 => Overhead::PerFit(s),
                    _ => bail!(
                        "{at}: overhead = \"per_fit\" needs 'world.overhead_s', the seconds charged per curve fit (>= 0)"
                    ),
                },
                Some("measured") => {
                    no_seconds("measured")?;
                    Overhead::Measured
                }
                Some(other) => bail!(
                    "{at}: key 'world.overhead' is '{other}'; allowed: none, fixed, per_fit, measured"
                ),
            };
            Ok(WorldSetup {
                budgets: w.budgets.clone(),
                unit,
                options: WorldOptions::TimeSliced { slice, overhead },
            })
        }
        WorldKind::Synthetic => {
            if w.budget_unit.as_deref().is_some_and(|u| u != "pulls") {
                bail!(
                    "{at}: the synthetic world's budgets are pulls; 'world.budget_unit' must be \"pulls\""
                );
            }
            whole("pull")?;
            let specs = w.arms.as_ref().map_or(&[][..], |a| a.as_slice());
            if specs.len() < 2 {
                bail!(
                    "{at}: the synthetic world needs at least two [[world.arms]] (name, distribution = \"gaussian\" with mean and sd, or \"bernoulli\" with p)"
                );
            }
            let mut arms = Vec::new();
            for (i, a) in specs.iter().enumerate() {
                let here = format!("{at}: [[world.arms]] entry {} ('{}')", i + 1, a.name);
                let dist = match a.distribution.as_str() {
                    "gaussian" => match (a.mean, a.sd, a.p) {
                        (Some(mean), Some(sd), None)
                            if mean.is_finite() && sd.is_finite() && sd >= 0.0 =>
                        {
                            ArmDist::Gaussian { mean, sd }
                        }
                        _ => {
                            bail!("{here}: a gaussian arm needs 'mean' and 'sd' >= 0 (and no 'p')")
                        }
                    },
                    "bernoulli" => match (a.p, a.mean, a.sd) {
                        (Some(p), None, None) if (0.0..=1.0).contains(&p) => {
                            ArmDist::Bernoulli { p }
                        }
                        _ => bail!(
                            "{here}: a bernoulli arm needs 'p' in [0, 1] (and no 'mean' or 'sd')"
                        ),
                    },
                    other => bail!("{here}: distribution '{other}'; allowed: gaussian, bernoulli"),
                };
                if arms.iter().any(|(n, _): &(String, ArmDist)| n == &a.name) {
                    bail!("{here}: the arm name is used twice");
                }
                arms.push((a.name.clone(), dist));
            }
            Ok(WorldSetup {
                budgets: w.budgets.clone(),
                unit: BudgetUnit::Pulls,
                options: WorldOptions::Synthetic { arms },
            })
        }
        WorldKind::PullCount => {
            let unit = choice(
                file,
                "world.budget_unit",
                w.budget_unit.as_deref(),
                &[("pulls", BudgetUnit::Pulls), ("pool", BudgetUnit::Pool)],
                BudgetUnit::Pulls,
            )?;
            if unit == BudgetUnit::Pulls {
                whole("pull")?;
            }
            Ok(WorldSetup {
                budgets: w.budgets.clone(),
                unit,
                options: WorldOptions::PullCount {
                    order: choice(
                        file,
                        "world.order",
                        w.order.as_deref(),
                        &[("permute", Order::Permute), ("recorded", Order::Recorded)],
                        Order::Permute,
                    )?,
                    failures_consume_budget: w.failures_consume_budget.unwrap_or(false),
                    exhausted: choice(
                        file,
                        "world.exhausted",
                        w.exhausted.as_deref(),
                        &[
                            ("empty", Exhausted::Empty),
                            ("resample", Exhausted::Resample),
                            ("stop", Exhausted::Stop),
                        ],
                        Exhausted::Empty,
                    )?,
                },
            })
        }
    }
}

/// Parse and check an experiment file. Errors name the file, the key and the allowed values.
pub fn load_experiment(path: &Path) -> Result<Experiment> {
    let source = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the experiment file", path.display()))?;
    let f: File = toml::from_str(&source)
        .with_context(|| format!("{}: invalid experiment file", path.display()))?;
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
    let trajectories = match f.trajectories.as_deref() {
        None => TrajectoryMode::EveryDecision,
        Some(t) => TrajectoryMode::ALL
            .iter()
            .find(|(n, _)| *n == t)
            .map(|(_, m)| *m)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: key 'trajectories' is '{t}'; allowed: every-decision, incumbent-changes, none",
                    path.display()
                )
            })?,
    };
    let world = resolve_world(path, &f.world)?;
    let mut policies: Vec<PolicyConfig> = Vec::new();
    for (i, p) in f.policies.iter().enumerate() {
        let expanded = if p.family == "external" {
            policy::expand_external(&p.params)
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
            if policies.contains(&cfg) {
                bail!("{}: policy {} is listed twice", path.display(), cfg.id());
            }
            policies.push(cfg);
        }
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let traces_dir = match (&f.traces, world.kind()) {
        (Some(t), WorldKind::Synthetic) => bail!(
            "{}: key 'traces' ('{t}') does not apply to the synthetic world, whose arms are [[world.arms]]",
            path.display()
        ),
        (Some(t), _) => Some(base.join(t)),
        (None, WorldKind::Synthetic) => None,
        (None, _) => bail!(
            "{}: missing key 'traces' (the trace-set folder, relative to this file, e.g. \"../traces/lcdb\")",
            path.display()
        ),
    };
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
