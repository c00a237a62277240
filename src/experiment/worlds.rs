//! The worlds as an experiment file names them: the `[world]` keys, checked and resolved into one
//! variant per world (`WorldOptions`), and described in words for the lock file. A new world adds
//! its variant and keys here, its rules in `replay/`, and its kind in `protocol.rs`.

use std::path::Path;

use anyhow::{Result, bail};
use serde::Deserialize;

use super::cell::AnyWorld;
pub use crate::replay::BudgetUnit;
use crate::replay::pool::{IncumbentRule, LastUnit, PoolOptions, Recommendation, Ties};
use crate::replay::{
    ArmDist, Exhausted, Order, Overhead, PullCount, PullCountConfig, Synthetic, TimeSliced,
    TimeSlicedConfig, WorkTime, WorldKind,
};
use crate::trace::Task;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorldSpec {
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
    workers: Option<i64>,
    work_s: Option<f64>,
    work: Option<String>,
    work_sigma: Option<f64>,
    objectives: Option<Vec<String>>,
    reference: Option<String>,
    reference_margin: Option<f64>,
    score: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArmSpec {
    name: String,
    distribution: String,
    mean: Option<f64>,
    sd: Option<f64>,
    p: Option<f64>,
}

/// What each world adds to budgets: one variant per world, so no option can be set for a world it
/// does not apply to.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorldOptions {
    /// The time-sliced world: arms pulled for a slice of time each.
    TimeSliced {
        /// The slice, in the budget unit.
        slice: f64,
        /// What a policy's own computation costs.
        overhead: Overhead,
    },
    /// The pull-count world: each pull reveals the arm's next evaluation.
    PullCount {
        /// The order evaluations are revealed in.
        order: Order,
        /// Whether failed evaluations count against the budget.
        failures_consume_budget: bool,
        /// What a pull past an arm's trace does.
        exhausted: Exhausted,
    },
    /// The synthetic world: arms drawn from stated distributions (nothing recorded).
    Synthetic {
        /// The arms and their distributions.
        arms: Vec<(String, ArmDist)>,
        /// Simulated seconds a pull takes on a worker (`work_s`; 1 when not given): exactly, or
        /// the mean of `work`.
        #[serde(skip_serializing_if = "Option::is_none")]
        work_s: Option<f64>,
        /// How pulls' work times are distributed (`work`; fixed when not given).
        #[serde(skip_serializing_if = "WorkTime::is_fixed")]
        work: WorkTime,
    },
    /// The pool world: configurations of a pool trained unit by unit.
    Pool(PoolOptions),
}

/// A resolved world: budgets, their unit, and the world's own options.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WorldSetup {
    /// The budgets, each a cell of its own, in `unit`.
    pub budgets: Vec<f64>,
    /// What a budget counts.
    pub unit: BudgetUnit,
    /// The world's own options.
    pub options: WorldOptions,
    /// Simulated workers (`[world] workers`, default 1; one worker leaves the fingerprint as it
    /// was before workers existed).
    #[serde(skip_serializing_if = "is_one")]
    pub workers: usize,
    /// The objectives measured and the reference rule (`[world] objectives`; pool, time-sliced
    /// and pull-count worlds), or
    /// none: the pool's score alone (and the fingerprint of an experiment without them is as
    /// it was before they existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objectives: Option<super::objectives::ObjectivesSpec>,
}

fn is_one(k: &usize) -> bool {
    *k == 1
}

/// How a trace's length is measured against a budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceLength {
    Seconds,
    Evaluations,
}

impl WorldOptions {
    /// The world replays a configuration pool (else a trace set, or the synthetic world's arms
    /// named as one).
    pub fn replays_pool(&self) -> bool {
        match self {
            WorldOptions::Pool(_) => true,
            WorldOptions::TimeSliced { .. }
            | WorldOptions::PullCount { .. }
            | WorldOptions::Synthetic { .. } => false,
        }
    }

    /// About how many decisions one cell takes at an absolute budget (and slice): a budget of
    /// seconds sliced is wall-clock time, each of the workers busy at once on its own arm taking
    /// budget / slice decisions; a budget of pulls or units is that many decisions.
    pub fn decisions(&self, budget_abs: f64, slice_abs: f64, busy_workers: usize) -> f64 {
        match self {
            WorldOptions::TimeSliced { .. } => {
                (budget_abs / slice_abs).ceil() * busy_workers as f64
            }
            WorldOptions::PullCount { .. }
            | WorldOptions::Synthetic { .. }
            | WorldOptions::Pool(_) => budget_abs,
        }
    }

    /// The keys that make a cell take fewer decisions, for the message that refuses one.
    pub fn work_keys(&self) -> &'static str {
        match self {
            WorldOptions::TimeSliced { .. } => {
                "'world.slice' (raise it), 'world.budgets' or 'world.workers' (lower them)"
            }
            WorldOptions::PullCount { .. }
            | WorldOptions::Synthetic { .. }
            | WorldOptions::Pool(_) => "'world.budgets' (lower them)",
        }
    }

    /// What a budget can outlast in a trace: the arms' recorded seconds (time-sliced), their
    /// evaluations (pull-count), or nothing (no traces: synthetic; a pool's own checks).
    pub fn outlasts(&self) -> Option<TraceLength> {
        match self {
            WorldOptions::TimeSliced { .. } => Some(TraceLength::Seconds),
            WorldOptions::PullCount { .. } => Some(TraceLength::Evaluations),
            WorldOptions::Synthetic { .. } | WorldOptions::Pool(_) => None,
        }
    }

    /// Replay a learner-level cell on `task` with `(budget, slice)` in absolute terms: build
    /// this world and drive the policy in it. Returns the world's final ledger and the slice the
    /// results record (the time-sliced world's; NaN in others).
    /// The learner-level world of one cell on `task`: the budget and slice in absolute terms,
    /// `sign` (+1 when higher scores are better) and the world's own seed. The pool world is
    /// built from a pool (`experiment::pool::pool_world`), never from a task.
    pub(super) fn learner_world<'t>(
        &self,
        task: &'t Task,
        (budget_abs, slice_abs): (f64, f64),
        sign: f64,
        world_seed: u64,
    ) -> Result<AnyWorld<'t>> {
        Ok(match self {
            WorldOptions::TimeSliced { .. } => AnyWorld::TimeSliced(TimeSliced::new(
                task,
                TimeSlicedConfig {
                    budget_s: budget_abs,
                    slice_s: slice_abs,
                },
                sign,
            )),
            WorldOptions::PullCount {
                order,
                failures_consume_budget,
                exhausted,
            } => AnyWorld::PullCount(PullCount::new(
                task,
                PullCountConfig {
                    budget_pulls: budget_abs as u64,
                    order: *order,
                    failures_consume_budget: *failures_consume_budget,
                    exhausted: *exhausted,
                },
                sign,
                world_seed,
            )),
            WorldOptions::Synthetic { arms, work_s, work } => AnyWorld::Synthetic(
                Synthetic::new(
                    arms.iter().map(|(_, d)| *d).collect(),
                    budget_abs as u64,
                    world_seed,
                )
                .with_work_seconds(work_s.unwrap_or(1.0))
                .with_work_time(*work),
            ),
            WorldOptions::Pool(_) => bail!(
                "the pool world replays a pool, not the tasks of a trace set (key 'traces' names a trace set)"
            ),
        })
    }
}

impl WorldSetup {
    /// Which world this is.
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

    /// The overhead model (time-sliced and pool worlds), none otherwise.
    pub fn overhead(&self) -> Overhead {
        match self.options {
            WorldOptions::TimeSliced { overhead, .. } => overhead,
            WorldOptions::Pool(o) => o.overhead,
            WorldOptions::PullCount { .. } | WorldOptions::Synthetic { .. } => Overhead::None,
        }
    }

    /// The synthetic world's arms (empty otherwise).
    pub fn arms(&self) -> &[(String, ArmDist)] {
        match &self.options {
            WorldOptions::Synthetic { arms, .. } => arms,
            _ => &[],
        }
    }

    /// One line for the run's header.
    pub fn describe(&self) -> String {
        let text = match &self.options {
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
            WorldOptions::Synthetic { arms, work_s, work } => format!(
                "synthetic, budgets {:?} pulls, arms {}{}",
                self.budgets,
                arms.iter()
                    .map(|(n, d)| format!("{n} ~ {}", d.describe()))
                    .collect::<Vec<_>>()
                    .join(", "),
                if work_s.is_none() && work.is_fixed() {
                    String::new()
                } else {
                    format!(", {}", work.describe(work_s.unwrap_or(1.0)))
                }
            ),
        };
        let text = match &self.objectives {
            Some(o) => format!("{text}, {}", o.describe()),
            None => text,
        };
        if self.workers > 1 {
            format!("{text}, {} workers", self.workers)
        } else {
            text
        }
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

/// The synthetic world's `work` and `work_sigma`.
fn work_time(file: &Path, w: &WorldSpec) -> Result<WorkTime> {
    let at = file.display();
    let work = match w.work.as_deref() {
        None | Some("fixed") => WorkTime::Fixed,
        Some("exponential") => WorkTime::Exponential,
        Some("lognormal") => WorkTime::Lognormal {
            sigma: match w.work_sigma {
                None => 1.0,
                // Above 10 the mean-preserving log-mean (ln work_s − σ²/2) sends most draws
                // below any time a clock can tell apart, and past about 38 to exactly 0.
                Some(s) if s.is_finite() && s > 0.0 && s <= 10.0 => s,
                Some(s) => bail!(
                    "{at}: key 'world.work_sigma' is {s:e}; give the standard deviation of the log work time, a number above 0 and at most 10"
                ),
            },
        },
        Some(other) => bail!(
            "{at}: key 'world.work' is '{other}'; allowed: fixed, exponential, lognormal (each with mean work_s)"
        ),
    };
    if w.work_sigma.is_some() && !matches!(work, WorkTime::Lognormal { .. }) {
        bail!(
            "{at}: key 'world.work_sigma' applies only to work = \"lognormal\"; remove it or set work = \"lognormal\""
        );
    }
    Ok(work)
}

pub(super) fn resolve_world(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
    let at = file.display();
    let mut setup = resolve_options(file, w)?;
    setup.objectives = super::objectives::ObjectivesSpec::resolve(
        file,
        w.objectives.as_deref(),
        w.reference.as_deref(),
        w.reference_margin,
        w.score.as_deref(),
    )?;
    setup.workers = match w.workers {
        None => 1,
        Some(k) if (1..=MAX_WORKERS as i64).contains(&k) => k as usize,
        Some(k) => bail!(
            "{at}: key 'world.workers' is {k}; give the number of simulated workers, 1 to {MAX_WORKERS}"
        ),
    };
    // Bounded so that sums of drawn times stay finite and distinct: 1 ns to about 31 700 years.
    if let Some(s) = w.work_s
        && !(s.is_finite() && (1e-9..=1e12).contains(&s))
    {
        bail!(
            "{at}: key 'world.work_s' is {s:e}; give the seconds one pull takes, from 1e-9 to 1e12"
        );
    }
    if let WorldOptions::Pool(o) = &setup.options
        && setup.workers > 1
        && o.incumbent == IncumbentRule::Last
    {
        bail!(
            "{at}: key 'world.incumbent' is \"last\", which with several workers would need every running arm's last score; use incumbent = \"best-seen\" with workers = {}",
            setup.workers
        );
    }
    Ok(setup)
}

/// The most simulated workers a cell may have.
pub const MAX_WORKERS: usize = 4096;

fn resolve_options(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
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
    check_budgets(file, w)?;
    check_owners(file, w, kind)?;
    match kind {
        WorldKind::Pool => resolve_pool(file, w),
        WorldKind::TimeSliced => resolve_time_sliced(file, w),
        WorldKind::Synthetic => resolve_synthetic(file, w),
        WorldKind::PullCount => resolve_pull_count(file, w),
    }
}

/// `world.budgets`: at least one, each positive and listed once.
fn check_budgets(file: &Path, w: &WorldSpec) -> Result<()> {
    let at = file.display();
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
    Ok(())
}

/// Every key belongs to one world or a few: naming it for another is an error, not silently
/// ignored.
fn check_owners(file: &Path, w: &WorldSpec, kind: WorldKind) -> Result<()> {
    let at = file.display();
    let owners: [(&str, bool, &[WorldKind]); 20] = [
        ("work_s", w.work_s.is_some(), &[WorldKind::Synthetic]),
        ("work", w.work.is_some(), &[WorldKind::Synthetic]),
        (
            "work_sigma",
            w.work_sigma.is_some(),
            &[WorldKind::Synthetic],
        ),
        ("arms", w.arms.is_some(), &[WorldKind::Synthetic]),
        ("slice", w.slice.is_some(), &[WorldKind::TimeSliced]),
        (
            "overhead",
            w.overhead.is_some(),
            &[WorldKind::TimeSliced, WorldKind::Pool],
        ),
        (
            "overhead_s",
            w.overhead_s.is_some(),
            &[WorldKind::TimeSliced, WorldKind::Pool],
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
        (
            "objectives",
            w.objectives.is_some(),
            &[WorldKind::Pool, WorldKind::TimeSliced, WorldKind::PullCount],
        ),
        (
            "reference",
            w.reference.is_some(),
            &[WorldKind::Pool, WorldKind::TimeSliced, WorldKind::PullCount],
        ),
        (
            "reference_margin",
            w.reference_margin.is_some(),
            &[WorldKind::Pool, WorldKind::TimeSliced, WorldKind::PullCount],
        ),
        (
            "score",
            w.score.is_some(),
            &[WorldKind::Pool, WorldKind::TimeSliced, WorldKind::PullCount],
        ),
    ];
    for (key, present, owners) in owners {
        if present && !owners.contains(&kind) {
            let names: Vec<&str> = owners.iter().map(|o| o.as_str()).collect();
            let listed = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("{} and {last}", rest.join(", "))
                }
                _ => names.join(""),
            };
            bail!(
                "{at}: key 'world.{key}' applies only to the {listed} world{}",
                if names.len() > 1 { "s" } else { "" }
            );
        }
    }
    Ok(())
}

/// Budgets in `unit`s (pulls, units) are whole numbers.
fn whole_budgets(file: &Path, w: &WorldSpec, unit: &str) -> Result<()> {
    for b in &w.budgets {
        if b.fract() != 0.0 {
            bail!(
                "{}: key 'world.budgets' holds {b}; {unit} budgets are whole numbers",
                file.display()
            );
        }
    }
    Ok(())
}

/// The overhead model (`world.overhead`, `world.overhead_s`), for every world whose budget can
/// count seconds.
fn overhead(file: &Path, w: &WorldSpec) -> Result<Overhead> {
    let at = file.display();
    let no_seconds = |mode: &str| -> Result<()> {
        if w.overhead_s.is_some() {
            bail!(
                "{at}: key 'world.overhead_s' applies only to overhead = \"fixed\" or \"per_fit\" (here: {mode})"
            );
        }
        Ok(())
    };
    Ok(match w.overhead.as_deref() {
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
    })
}

/// The pool world's options.
fn resolve_pool(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
    let at = file.display();
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
        whole_budgets(file, w, "unit")?;
    }
    if w.last_unit.is_some() && unit != BudgetUnit::Seconds {
        bail!(
            "{at}: key 'world.last_unit' applies only to budget_unit = \"seconds\" (a unit budget never splits a unit)"
        );
    }
    let overhead = overhead(file, w)?;
    if overhead != Overhead::None && unit != BudgetUnit::Seconds {
        bail!(
            "{at}: key 'world.overhead' charges seconds, but budget_unit = \"{}\" counts no time; use budget_unit = \"seconds\" or remove it",
            unit.as_str()
        );
    }
    let max_arms = match w.max_arms {
        Some(0) => {
            bail!("{at}: key 'world.max_arms' is 0, which allows no arm; remove it for no cap")
        }
        m => m,
    };
    Ok(WorldSetup {
        budgets: w.budgets.clone(),
        unit,
        workers: 1,
        objectives: None,
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
            overhead,
        }),
    })
}

/// The time-sliced world's options.
fn resolve_time_sliced(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
    let at = file.display();
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
    Ok(WorldSetup {
        budgets: w.budgets.clone(),
        unit,
        workers: 1,
        objectives: None,
        options: WorldOptions::TimeSliced {
            slice,
            overhead: overhead(file, w)?,
        },
    })
}

/// The synthetic world's options: its arms and their distributions.
fn resolve_synthetic(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
    let at = file.display();
    if w.budget_unit.as_deref().is_some_and(|u| u != "pulls") {
        bail!(
            "{at}: the synthetic world's budgets are pulls; 'world.budget_unit' must be \"pulls\""
        );
    }
    whole_budgets(file, w, "pull")?;
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
                (Some(mean), Some(sd), None) if mean.is_finite() && sd.is_finite() && sd >= 0.0 => {
                    ArmDist::Gaussian { mean, sd }
                }
                _ => {
                    bail!("{here}: a gaussian arm needs 'mean' and 'sd' >= 0 (and no 'p')")
                }
            },
            "bernoulli" => match (a.p, a.mean, a.sd) {
                (Some(p), None, None) if (0.0..=1.0).contains(&p) => ArmDist::Bernoulli { p },
                _ => bail!("{here}: a bernoulli arm needs 'p' in [0, 1] (and no 'mean' or 'sd')"),
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
        workers: 1,
        objectives: None,
        options: WorldOptions::Synthetic {
            arms,
            work_s: w.work_s,
            work: work_time(file, w)?,
        },
    })
}

/// The pull-count world's options.
fn resolve_pull_count(file: &Path, w: &WorldSpec) -> Result<WorldSetup> {
    let unit = choice(
        file,
        "world.budget_unit",
        w.budget_unit.as_deref(),
        &[("pulls", BudgetUnit::Pulls), ("pool", BudgetUnit::Pool)],
        BudgetUnit::Pulls,
    )?;
    if unit == BudgetUnit::Pulls {
        whole_budgets(file, w, "pull")?;
    }
    Ok(WorldSetup {
        budgets: w.budgets.clone(),
        unit,
        workers: 1,
        objectives: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml_text: &str) -> WorldSpec {
        toml::from_str(toml_text).unwrap()
    }

    fn error(toml_text: &str) -> String {
        format!(
            "{:#}",
            resolve_options(Path::new("e.toml"), &spec(toml_text)).unwrap_err()
        )
    }

    #[test]
    fn each_world_resolves_its_own_keys_and_refuses_the_others() {
        let pool = resolve_options(
            Path::new("e.toml"),
            &spec("kind = \"pool\"\nbudgets = [10]\nrecommendation = \"last\""),
        )
        .unwrap();
        let WorldOptions::Pool(o) = pool.options else {
            panic!("not the pool world")
        };
        assert_eq!(o.recommendation, Recommendation::Last);
        assert_eq!(
            (pool.unit, o.failures_consume_budget),
            (BudgetUnit::Units, true)
        );
        let pc = resolve_options(
            Path::new("e.toml"),
            &spec("kind = \"pull-count\"\nbudgets = [10]"),
        )
        .unwrap();
        assert!(matches!(
            pc.options,
            WorldOptions::PullCount {
                order: Order::Permute,
                failures_consume_budget: false,
                exhausted: Exhausted::Empty
            }
        ));
        for (world, want) in [
            (
                "kind = \"pool\"\nbudgets = []",
                "e.toml: key 'world.budgets' is empty",
            ),
            (
                "kind = \"pool\"\nbudgets = [1, 1]",
                "key 'world.budgets' lists 1 twice",
            ),
            (
                "kind = \"pull-count\"\nbudgets = [1]\nslice = 1.0",
                "key 'world.slice' applies only to the time-sliced world",
            ),
            (
                "kind = \"pull-count\"\nbudgets = [1]\noverhead = \"fixed\"",
                "key 'world.overhead' applies only to the time-sliced and pool worlds",
            ),
            (
                "kind = \"pool\"\nbudgets = [1.5]",
                "key 'world.budgets' holds 1.5; unit budgets are whole numbers",
            ),
            (
                "kind = \"time-sliced\"\nbudgets = [10]\nslice = 1.0\noverhead = \"fixed\"",
                "overhead = \"fixed\" needs 'world.overhead_s'",
            ),
            (
                "kind = \"time-sliced\"\nbudgets = [10]",
                "the time-sliced world needs 'world.slice'",
            ),
            (
                "kind = \"synthetic\"\nbudgets = [10]",
                "the synthetic world needs at least two [[world.arms]]",
            ),
        ] {
            let e = error(world);
            assert!(e.contains(want), "{world}: expected '{want}' in: {e}");
        }
    }
}
