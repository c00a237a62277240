//! Experiments of several objectives (`[world] objectives`): the reference point of each task,
//! fixed before any cell runs, the task's true Pareto front, and each cell's non-dominated
//! archive over time with its hypervolume, hypervolume regret, IGD+ and additive ε.
//!
//! The rules (README, "Several objectives"):
//! - **What enters a cell's archive**: a configuration trained to its last unit whose last unit
//!   is ok and whose every objective is a number (a NaN value is infeasible, never archived), at
//!   the step whose work finished it (with several workers, in the order work finishes).
//! - **The true front** of a task: the non-dominated points of every such configuration the
//!   task's cells can reach (the learners `[tasks]` keeps), from the pool itself, never from the
//!   compared runs (`Pool::objective_points`).
//! - **Reference point**: `reference = "nadir"` (default) is the true front's nadir (its worst
//!   value per objective) plus `reference_margin` (default 0.1) times the front's range
//!   (nadir − ideal); `"worst"` is the worst recorded value of every reachable point plus the
//!   margin times (worst − ideal); a file gives it per task. Where the range is 0 (a front of one
//!   value in an objective), the margin is taken of the value's magnitude (at least 1).
//! - **Normalised objectives**: every indicator is computed on `(x − ideal) / (reference − ideal)`
//!   per objective, so the reference point is (1, …, 1), the ideal point is the origin and a
//!   task's numbers are comparable with another's. Hypervolume regret is
//!   `1 − HV(archive) / HV(true front)`, which no affine rescaling of an objective changes.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::pool::PoolTaskRef;
use crate::pareto::{Archive, epsilon_additive, hypervolume, igd_plus, nondominated};
use crate::replay::{Observer, Step};
use crate::trace::Direction;
use crate::trace::pool::Pool;

/// How a task's reference point is fixed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reference {
    /// The true front's nadir plus the margin times its range.
    Nadir,
    /// The worst recorded value of every reachable point plus the margin times its range.
    Worst,
    /// Given per task ((dataset, run) → one value per objective, in the recorded orientation)
    /// by the file named.
    File {
        path: String,
        values: BTreeMap<String, Vec<f64>>,
    },
}

/// The objectives an experiment measures and its reference rule (`[world] objectives`,
/// `reference`, `reference_margin`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ObjectivesSpec {
    /// The pool's objectives by name, at least two.
    pub names: Vec<String>,
    pub reference: Reference,
    /// The share of the range added beyond the nadir or the worst value (not for a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// The objective single-objective policies optimise (`[world] score`, one of `names`);
    /// None: the data's own metric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<String>,
}

/// The names of the keys that give an [`ObjectivesSpec`], for its errors: an experiment
/// file's `[world]` keys, or an import's flags.
pub(crate) struct SpecKeys {
    pub objectives: &'static str,
    pub reference: &'static str,
    pub margin: &'static str,
}

/// An experiment file's keys.
const WORLD_KEYS: SpecKeys = SpecKeys {
    objectives: "key 'world.objectives'",
    reference: "key 'world.reference'",
    margin: "key 'world.reference_margin'",
};

impl ObjectivesSpec {
    /// Resolve the `[world]` keys; `file` is the experiment file (a reference file is relative
    /// to its folder).
    pub(super) fn resolve(
        file: &Path,
        objectives: Option<&[String]>,
        reference: Option<&str>,
        margin: Option<f64>,
        score: Option<&str>,
    ) -> Result<Option<ObjectivesSpec>> {
        let at = file.display();
        let Some(names) = objectives else {
            if reference.is_some() || margin.is_some() || score.is_some() {
                bail!(
                    "{at}: key 'world.reference', 'world.reference_margin' or 'world.score' is given without 'world.objectives'; name the objectives (e.g. objectives = [\"val_acc\", \"latency\"]) or remove it"
                );
            }
            return Ok(None);
        };
        let base = file.parent().unwrap_or(Path::new("."));
        let mut spec = Self::of(names, reference, margin, base, &WORLD_KEYS)
            .map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
        if let Some(s) = score {
            if !names.iter().any(|n| n == s) {
                bail!(
                    "{at}: key 'world.score' names '{s}', which is not one of world.objectives ({}); name one of them, or remove the key to optimise the data's own metric",
                    names.join(", ")
                );
            }
            spec.score = Some(s.to_string());
        }
        Ok(Some(spec))
    }

    /// The spec of `names` (at least two, each once), the reference rule (`nadir`, `worst` or a
    /// file, relative to `base`) and its margin; errors name the keys as `keys` words them.
    pub(crate) fn of(
        names: &[String],
        reference: Option<&str>,
        margin: Option<f64>,
        base: &Path,
        keys: &SpecKeys,
    ) -> Result<ObjectivesSpec> {
        if names.len() < 2 {
            bail!(
                "{} names {} objective(s); give at least two (one objective is the pool's own score: remove the key)",
                keys.objectives,
                names.len()
            );
        }
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                bail!("{} names '{n}' twice; name each once", keys.objectives);
            }
        }
        let reference = match reference.unwrap_or("nadir") {
            "nadir" => Reference::Nadir,
            "worst" => Reference::Worst,
            f => {
                if margin.is_some() {
                    bail!(
                        "{} applies to reference = \"nadir\" or \"worst\", not to a file of reference points; remove it",
                        keys.margin
                    );
                }
                Reference::File {
                    path: f.to_string(),
                    values: read_reference_file(&base.join(f), names, keys.reference)?,
                }
            }
        };
        let margin = match (&reference, margin) {
            (Reference::File { .. }, _) => None,
            (_, None) => Some(0.1),
            (_, Some(m)) if m.is_finite() && m >= 0.0 => Some(m),
            (_, Some(m)) => bail!(
                "{} is {m}; give the share of the range added beyond the reference's base, a number ≥ 0 (default 0.1)",
                keys.margin
            ),
        };
        Ok(ObjectivesSpec {
            names: names.to_vec(),
            reference,
            margin,
            score: None,
        })
    }

    /// Where each named objective is in `objectives` and its direction. `data` is what
    /// declares them: its kind, name, manifest file and a bundled example of several
    /// objectives, for the errors (none declared; a name it does not have).
    fn resolve_in(
        &self,
        objectives: &[crate::trace::pool::Objective],
        (what, name, manifest, example): (&str, &str, &str, &str),
        at: &str,
    ) -> Result<(Vec<usize>, Vec<Direction>)> {
        if objectives.is_empty() {
            bail!(
                "{at}: key 'world.objectives' names {}, but the {what} {name} declares no objectives (its {manifest} has no [[objectives]]); replay it on its score alone (remove the key), or choose a {what} of several objectives such as {example}",
                self.names.join(", ")
            );
        }
        let which: Vec<usize> = self
            .names
            .iter()
            .map(|n| {
                crate::trace::objectives::position(objectives, n, what, name)
                    .map_err(|e| anyhow::anyhow!("{at}: key 'world.objectives' {e}"))
            })
            .collect::<Result<_>>()?;
        let directions = which.iter().map(|&i| objectives[i].direction).collect();
        Ok((which, directions))
    }

    /// `[world] score`, when the experiment names one.
    pub(crate) fn score_of(spec: Option<&ObjectivesSpec>) -> Option<&str> {
        spec.and_then(|o| o.score.as_deref())
    }

    /// In words, for the run's header.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "objectives {}, reference {}",
            self.names.join(" x "),
            self.reference_rule()
        );
        if let Some(score) = &self.score {
            s.push_str(&format!(", score {score}"));
        }
        s
    }

    /// The reference rule in words, for the lock file.
    pub fn reference_rule(&self) -> String {
        match &self.reference {
            Reference::Nadir => format!(
                "nadir of the true front + {} x its range",
                self.margin.unwrap_or(0.0)
            ),
            Reference::Worst => format!(
                "worst recorded value + {} x the range",
                self.margin.unwrap_or(0.0)
            ),
            Reference::File { path, .. } => format!("given by {path}"),
        }
    }
}

/// The task key of a reference file's row and of a task: `dataset/run`.
fn task_key(dataset: &str, run: i64) -> String {
    format!("{dataset}/{run}")
}

/// A CSV of reference points: columns `dataset`, `run` and one per objective (recorded
/// orientation), one row per task.
fn read_reference_file(
    path: &Path,
    names: &[String],
    key: &str,
) -> Result<BTreeMap<String, Vec<f64>>> {
    let at = path.display();
    crate::files::check(path, &format!("the reference-point file named by {key}"))?;
    // The trace sets' reader: its checks of a CSV's shape name the line.
    let df = crate::trace::read_frame(path)?;
    let column = |name: &str, dtype: &DataType| -> Result<Series> {
        let c = df.column(name).map_err(|_| {
            anyhow::anyhow!(
                "{at}: missing column '{name}'; a reference file has columns dataset, run and one per objective ({})",
                names.join(", ")
            )
        })?;
        c.as_materialized_series()
            .strict_cast(dtype)
            .map_err(|_| anyhow::anyhow!("{at}: column '{name}' holds values that are not {dtype}"))
    };
    let ds = column("dataset", &DataType::String)?;
    let run = column("run", &DataType::Int64)?;
    let values: Vec<Series> = names
        .iter()
        .map(|n| column(n, &DataType::Float64))
        .collect::<Result<_>>()?;
    let mut out = BTreeMap::new();
    for i in 0..df.height() {
        let row = format!("{at}: row {}", i + 1);
        let (Some(d), Some(r)) = (ds.str()?.get(i), run.i64()?.get(i)) else {
            bail!("{row}: dataset and run are required");
        };
        let mut v = Vec::with_capacity(names.len());
        for (n, s) in names.iter().zip(&values) {
            match s.f64()?.get(i) {
                Some(x) if x.is_finite() => v.push(x),
                other => bail!(
                    "{row}: column '{n}' is {}; a reference point's every value is a finite number",
                    other.map_or("empty".to_string(), |x| x.to_string())
                ),
            }
        }
        if out.insert(task_key(d, r), v).is_some() {
            bail!("{row}: task {d}/{r} is given twice; give each task's reference point once");
        }
    }
    Ok(out)
}

/// One task's points and reference, as every cell on it measures them.
#[derive(Clone, Debug)]
pub struct MoTask {
    /// Per configuration of the pool, its normalised point (`d` values), NaN when it cannot be
    /// archived (infeasible, no full curve, or of a learner the task does not keep).
    pub points: Vec<f64>,
    /// The true front, normalised, and its hypervolume against (1, …, 1).
    pub front: Vec<f64>,
    pub true_hypervolume: f64,
    /// The reference and ideal points in the recorded orientation (for the lock file).
    pub reference: Vec<f64>,
    pub ideal: Vec<f64>,
    /// The ideal and reference points with every objective minimised (maximised ones negated).
    minimised: (Vec<f64>, Vec<f64>),
}

impl MoTask {
    /// A point with every objective minimised (maximised ones negated), normalised.
    fn normalise_minimised(&self, p: &[f64]) -> Vec<f64> {
        let (ideal, reference) = &self.minimised;
        p.iter()
            .zip(ideal)
            .zip(reference)
            .map(|((&x, &lo), &r)| (x - lo) / (r - lo))
            .collect()
    }

    /// A point in the recorded orientation (a tool's reported values), normalised as the task's
    /// points are; None when a value is not a finite number (infeasible, never archived). The
    /// reference and ideal points are in the recorded orientation too, and
    /// `(x − ideal) / (reference − ideal)` is the same in either orientation.
    pub fn normalise(&self, recorded: &[f64]) -> Option<Vec<f64>> {
        if recorded.iter().any(|x| !x.is_finite()) {
            return None;
        }
        Some(
            recorded
                .iter()
                .zip(&self.ideal)
                .zip(&self.reference)
                .map(|((&x, &lo), &r)| (x - lo) / (r - lo))
                .collect(),
        )
    }
}

/// The objectives of a pool experiment and every task's points.
#[derive(Clone, Debug)]
pub struct MoData {
    pub spec: ObjectivesSpec,
    /// Indices into the pool manifest's objectives.
    pub which: Vec<usize>,
    pub directions: Vec<Direction>,
    /// Per task of the experiment (`PoolData::tasks` order).
    pub tasks: Vec<MoTask>,
    /// The pool's units: a configuration is archived when it has trained them all; None for a
    /// trace set, whose cells archive the evaluations their world reveals.
    pub units: Option<u32>,
}

impl MoData {
    pub fn d(&self) -> usize {
        self.which.len()
    }

    /// Each objective's name and whether it is maximised, as a policy is told them.
    pub fn named(&self) -> Vec<(&str, bool)> {
        self.spec
            .names
            .iter()
            .map(String::as_str)
            .zip(self.directions.iter().map(|d| *d == Direction::Maximize))
            .collect()
    }

    /// The lock file's `[resolved.objectives]`: the names, directions, reference rule and per
    /// task (named by `names`, in `tasks` order) its reference and ideal points and true front.
    pub(crate) fn lock(
        &self,
        names: impl IntoIterator<Item = String>,
    ) -> crate::results::LockObjectives {
        crate::results::LockObjectives {
            names: self.spec.names.clone(),
            directions: self.directions.iter().map(|d| d.as_str().into()).collect(),
            reference: self.spec.reference_rule(),
            tasks: names
                .into_iter()
                .zip(&self.tasks)
                .map(|(task, m)| crate::results::LockTaskReference {
                    task,
                    reference: m.reference.clone(),
                    ideal: m.ideal.clone(),
                    true_front: (m.front.len() / self.d()) as i64,
                    true_hypervolume: m.true_hypervolume,
                })
                .collect(),
        }
    }

    /// Resolve the objectives of `spec` in `pool` and every task's true front and reference.
    /// `at` names the experiment file; `task_name` names a task in errors.
    pub(crate) fn build(
        spec: &ObjectivesSpec,
        pool: &Pool,
        tasks: &[PoolTaskRef],
        at: &str,
        task_name: &dyn Fn(&PoolTaskRef) -> String,
    ) -> Result<MoData> {
        let m = &pool.manifest;
        let (which, directions) = spec.resolve_in(
            &m.objectives,
            (
                "pool",
                &m.name,
                "pool.toml",
                "traces/nasbench201 or traces/fcnet",
            ),
            at,
        )?;
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            let name = task_name(t);
            out.push(
                mo_task(spec, pool, t, &which, &directions)
                    .with_context(|| format!("{at}: task {name}"))?,
            );
        }
        Ok(MoData {
            spec: spec.clone(),
            which,
            directions,
            tasks: out,
            units: Some(m.units),
        })
    }

    /// Resolve the objectives of `spec` in the trace set `ts` (format 1.1) and every task's true
    /// front and reference: its points are the evaluations of the arms the experiment keeps.
    pub(crate) fn build_traces(
        spec: &ObjectivesSpec,
        ts: &crate::trace::TraceSet,
        at: &str,
    ) -> Result<MoData> {
        let m = &ts.manifest;
        let (which, directions) = spec.resolve_in(
            &m.objectives,
            (
                "trace set",
                &m.name,
                "traceset.toml",
                "traces/sklearn-random",
            ),
            at,
        )?;
        let names: Vec<&str> = spec.names.iter().map(String::as_str).collect();
        let tasks = ts
            .tasks
            .iter()
            .map(|t| {
                trace_task(spec, t, m.objectives.len(), &which, &directions, &names)
                    .with_context(|| format!("{at}: task {}", t.name()))
            })
            .collect::<Result<_>>()?;
        Ok(MoData {
            spec: spec.clone(),
            which,
            directions,
            tasks,
            units: None,
        })
    }
}

/// `x` in the recorded orientation of `dir` (a minimised value is negated back when maximised).
fn recorded(x: f64, dir: Direction) -> f64 {
    if dir == Direction::Maximize { -x } else { x }
}

fn mo_task(
    spec: &ObjectivesSpec,
    pool: &Pool,
    t: &PoolTaskRef,
    which: &[usize],
    directions: &[Direction],
) -> Result<MoTask> {
    let d = which.len();
    let (raw, configs) = pool.objective_points(t.task, which);
    // Only what the task's cells can reach.
    let (mut pts, mut cfgs) = (Vec::new(), Vec::new());
    for (p, &c) in raw.chunks_exact(d).zip(&configs) {
        if t.learners.contains(&pool.configs[c].learner) {
            pts.extend_from_slice(p);
            cfgs.push(c);
        }
    }
    if cfgs.is_empty() {
        bail!(
            "no configuration has every objective ({}) recorded as a number at its last unit: nothing can enter an archive",
            which
                .iter()
                .map(|&i| pool.manifest.objectives[i].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let pt = &pool.tasks[t.task];
    let mut task = task_front(spec, &pts, directions, &pt.dataset, pt.run)?;
    let mut points = vec![f64::NAN; pool.configs.len() * d];
    for (p, &c) in pts.chunks_exact(d).zip(&cfgs) {
        points[c * d..(c + 1) * d].copy_from_slice(&task.normalise_minimised(p));
    }
    task.points = points;
    Ok(task)
}

/// A trace set's task: every evaluation of its arms whose every objective is a number is a
/// point; the true front, ideal and reference come from them (`points` stays empty: a cell's
/// archive takes the values its world reveals).
fn trace_task(
    spec: &ObjectivesSpec,
    task: &crate::trace::Task,
    m: usize,
    which: &[usize],
    directions: &[Direction],
    names: &[&str],
) -> Result<MoTask> {
    let d = which.len();
    let mut pts = Vec::new();
    for arm in &task.arms {
        for v in arm.objectives.chunks_exact(m) {
            let p: Vec<f64> = which
                .iter()
                .zip(directions)
                .map(|(&i, &dir)| recorded(v[i], dir))
                .collect();
            if p.iter().all(|x| x.is_finite()) {
                pts.extend_from_slice(&p);
            }
        }
    }
    if pts.is_empty() {
        bail!(
            "no ok evaluation has every objective ({}) recorded as a number: nothing can enter an archive",
            names.join(", ")
        );
    }
    debug_assert_eq!(pts.len() % d, 0);
    task_front(spec, &pts, directions, &task.dataset, task.run)
}

/// A task's true front (the non-dominated points of `pts`, minimised orientation, `d` values
/// each), its ideal point and its reference point by `spec`'s rule; `points` empty.
fn task_front(
    spec: &ObjectivesSpec,
    pts: &[f64],
    directions: &[Direction],
    dataset: &str,
    run: i64,
) -> Result<MoTask> {
    let d = directions.len();
    let n = pts.len() / d;
    let front_idx = nondominated(pts, d);
    let column_fold = |idx: &mut dyn Iterator<Item = usize>, f: fn(f64, f64) -> f64, init: f64| {
        let mut acc = vec![init; d];
        for i in idx {
            for k in 0..d {
                acc[k] = f(acc[k], pts[i * d + k]);
            }
        }
        acc
    };
    let ideal = column_fold(&mut front_idx.iter().copied(), f64::min, f64::INFINITY);
    let reference: Vec<f64> = match &spec.reference {
        Reference::File { path, values } => {
            let key = task_key(dataset, run);
            let Some(v) = values.get(&key) else {
                bail!(
                    "the reference file {path} has no row for dataset {dataset}, run {run}; give one per task"
                );
            };
            v.iter()
                .zip(directions)
                .map(|(&x, &dir)| recorded(x, dir))
                .collect()
        }
        rule => {
            let base = match rule {
                Reference::Nadir => {
                    column_fold(&mut front_idx.iter().copied(), f64::max, f64::NEG_INFINITY)
                }
                _ => column_fold(&mut (0..n), f64::max, f64::NEG_INFINITY),
            };
            let margin = spec.margin.unwrap_or(0.0);
            base.iter()
                .zip(&ideal)
                .map(|(&b, &lo)| {
                    let range = b - lo;
                    let scale = if range > 0.0 { range } else { b.abs().max(1.0) };
                    b + margin * scale
                })
                .collect()
        }
    };
    let front_raw: Vec<f64> = front_idx
        .iter()
        .flat_map(|&i| pts[i * d..(i + 1) * d].iter().copied())
        .collect();
    let true_raw = hypervolume(&front_raw, &reference);
    if true_raw.is_nan() || true_raw <= 0.0 {
        bail!(
            "no recorded point strictly dominates the reference point ({}): the true front's hypervolume is 0, so no hypervolume can be measured; give a reference point worse than the front in every objective (ideal {})",
            fmt_point(&reference, directions),
            fmt_point(&ideal, directions)
        );
    }
    let mut task = MoTask {
        points: Vec::new(),
        front: Vec::new(),
        true_hypervolume: f64::NAN,
        reference: reference
            .iter()
            .zip(directions)
            .map(|(&x, &dir)| recorded(x, dir))
            .collect(),
        ideal: ideal
            .iter()
            .zip(directions)
            .map(|(&x, &dir)| recorded(x, dir))
            .collect(),
        minimised: (ideal, reference),
    };
    task.front = front_raw
        .chunks_exact(d)
        .flat_map(|p| task.normalise_minimised(p))
        .collect();
    task.true_hypervolume = hypervolume(&task.front, &vec![1.0; d]);
    Ok(task)
}

fn fmt_point(p: &[f64], directions: &[Direction]) -> String {
    p.iter()
        .zip(directions)
        .map(|(&x, &dir)| format!("{}", recorded(x, dir)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a cell of several objectives found: its indicators at the end.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MoOutcome {
    /// Hypervolume of the archive (normalised objectives, reference (1, …, 1)).
    pub hypervolume: f64,
    /// `1 − hypervolume / the true front's`.
    pub hv_regret: f64,
    /// IGD+ and additive ε of the archive against the true front (normalised; infinite when the
    /// archive is empty).
    pub igd_plus: f64,
    pub epsilon_additive: f64,
    /// Points in the final non-dominated archive (of every archived point, inside the
    /// reference box or not).
    pub front_size: u64,
}

/// A cell's archive, kept from its steps: in the pool world each step that finishes a
/// configuration adds its point; in a learner-level world each step adds the points of the
/// evaluations it revealed. Keeps the hypervolume regret after every step when asked (for the
/// trajectory).
pub(crate) struct ArchiveObserver<'d> {
    task: &'d MoTask,
    d: usize,
    /// The pool's units (a configuration is archived once trained to them), or None: the
    /// points the world reveals are archived.
    units: Option<u32>,
    archive: Archive,
    /// Every archived point (for IGD+ and ε, which count points outside the reference box too).
    found: Vec<f64>,
    archived: std::collections::HashSet<u32>,
    /// The regret after each step, when kept.
    pub history: Option<Vec<f64>>,
}

impl<'d> ArchiveObserver<'d> {
    pub fn new(data: &'d MoData, task: usize, keep_history: bool) -> ArchiveObserver<'d> {
        Self::of_task(&data.tasks[task], data.units, keep_history)
    }

    /// The archive of a cell on `task`, whose configurations are archived once trained to
    /// `units` (None: the points its world reveals).
    pub fn of_task(
        task: &'d MoTask,
        units: Option<u32>,
        keep_history: bool,
    ) -> ArchiveObserver<'d> {
        let d = task.reference.len();
        ArchiveObserver {
            task,
            d,
            units,
            archive: Archive::new(&vec![1.0; d]),
            found: Vec::new(),
            archived: std::collections::HashSet::new(),
            history: keep_history.then(Vec::new),
        }
    }

    /// Archive a normalised point (every value a number).
    pub fn add(&mut self, p: &[f64]) {
        self.archive.insert(p);
        self.found.extend_from_slice(p);
    }

    /// The hypervolume regret of the archive as it is now.
    pub fn regret(&self) -> f64 {
        // Clamped: rounding may take an archive's sum a last bit past the front's.
        (1.0 - self.archive.hypervolume() / self.task.true_hypervolume).max(0.0)
    }

    /// The indicators of the archive as it is now.
    pub fn outcome(&self) -> MoOutcome {
        let kept = nondominated(&self.found, self.d);
        let front: Vec<f64> = kept
            .iter()
            .flat_map(|&i| self.found[i * self.d..(i + 1) * self.d].iter().copied())
            .collect();
        MoOutcome {
            hypervolume: self.archive.hypervolume(),
            hv_regret: self.regret(),
            igd_plus: igd_plus(&front, &self.task.front, self.d),
            epsilon_additive: epsilon_additive(&front, &self.task.front, self.d),
            front_size: kept.len() as u64,
        }
    }

    fn record(&mut self) {
        let r = self.regret();
        if let Some(h) = &mut self.history {
            h.push(r);
        }
    }
}

impl Observer for ArchiveObserver<'_> {
    fn step(&mut self, step: &Step) {
        if let Some(units) = self.units
            && step.fidelity >= units
            && !self.archived.contains(&step.config)
        {
            let d = self.d;
            let c = step.config as usize;
            let task = self.task;
            let p = &task.points[c * d..(c + 1) * d];
            if !p[0].is_nan() {
                self.archived.insert(step.config);
                self.add(p);
            }
        }
        self.record();
    }

    /// A learner-level world's step: the values (recorded orientation, `d` per evaluation) of
    /// the evaluations it revealed; one with a value that is not a number is infeasible.
    fn step_points(&mut self, step: &Step, points: &[f64]) {
        if self.units.is_some() {
            return self.step(step);
        }
        for p in points.chunks_exact(self.d) {
            if let Some(q) = self.task.normalise(p) {
                self.add(&q);
            }
        }
        self.record();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_file_gives_one_finite_point_per_task_or_names_the_row() {
        let dir = std::env::temp_dir().join(format!("bb-ref-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names = vec!["acc".to_string(), "latency".to_string()];
        let read = |text: &str| {
            let f = dir.join("ref.csv");
            std::fs::write(&f, text).unwrap();
            read_reference_file(&f, &names, "key 'world.reference'").map_err(|e| e.to_string())
        };
        let ok = read("dataset,run,acc,latency\nc10,0,0.1,5\nc10,1,0.2,6\n").unwrap();
        assert_eq!(ok["c10/1"], [0.2, 6.0]);
        let e = read("dataset,run,acc\nc10,0,0.1\n").unwrap_err();
        assert!(e.contains("missing column 'latency'; a reference file has columns dataset, run and one per objective (acc, latency)"), "{e}");
        let e = read("dataset,run,acc,latency\nc10,0,0.1,\n").unwrap_err();
        assert!(e.contains("row 1: column 'latency' is empty"), "{e}");
        let e = read("dataset,run,acc,latency\nc10,0,0.1,5\nc10,0,0.1,5\n").unwrap_err();
        assert!(e.contains("row 2: task c10/0 is given twice"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
        // Points print in the recorded orientation: a maximised objective negated back.
        let p = fmt_point(&[-0.5, 2.0], &[Direction::Maximize, Direction::Minimize]);
        assert_eq!(p, "0.5, 2");
    }
}
