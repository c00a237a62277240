//! Configuration pools, format `banditbench-pool/1` (the contract is in `traces/README.md`).
//!
//! A pool is a folder with
//! - `pool.toml`: format, name, description, metric, direction, `units` (fidelity units per full
//!   curve), `neighbours` (`"grid"`, `"table"` with `neighbours.parquet`, or `"none"`),
//!   `complete`, one `[[learners]]` table per learner with its `[[learners.dims]]` (name, kind =
//!   ordinal | categorical with `values`, or numeric with `low`, `high`, `log`, `int`), and
//!   `[provenance]`;
//! - `configs.parquet`: one row per configuration: `config_id` (unique, ≥ 0), `learner`, `levels`
//!   (comma-separated level indices, one per dimension with levels; a numeric dimension has none),
//!   `config` (JSON, holding every numeric dimension's value);
//! - `curves.parquet` or a folder `curves/` of parquet files: one row per (dataset, run,
//!   configuration, unit) with `score`, `test_score`, `cost_s` and `status`.
//!
//! Loading checks every rule and names the file, row and rule when one is broken: unique keys,
//! units 1, 2, … without gaps, every configuration referenced exists, a failed or timed-out unit
//! ends its curve, and every (dataset, run) holds a curve for every configuration (unless the
//! manifest says `complete = false` and the caller allows it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Status;
use super::manifest::Direction;

mod manifest;
pub use manifest::*;
mod load;
pub use load::*;
mod grid;
pub use grid::*;
pub mod synthetic;

/// The pool format this build reads.
pub const POOL_FORMAT_V1: &str = "banditbench-pool/1";
/// Format 1.1: format 1 and, optionally, several objectives (`[[objectives]]`, their values in
/// the curves' own columns). A format-1 pool reads as before.
pub const POOL_FORMAT_V1_1: &str = "banditbench-pool/1.1";
/// Format 1.2: format 1.1 and, optionally, a `[generator]` table instead of configuration and
/// curve files: a synthetic pool generated when it is loaded (`synthetic.rs`).
pub const POOL_FORMAT_V1_2: &str = "banditbench-pool/1.2";

/// How a dimension's levels relate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DimKind {
    /// Levels are ordered: a neighbour is one level up or down.
    Ordinal,
    /// Levels are unordered: a neighbour is any other level.
    Categorical,
    /// A range the configurations were sampled from (a recorded random sample, such as
    /// TaskSet's 1 000 configurations): no levels; each configuration's value is in its `config`
    /// JSON.
    Numeric(Range),
}

/// A numeric dimension's range: `[low, high]`, sampled on a log scale when `log`, whole numbers
/// when `int`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// The smallest value.
    pub low: f64,
    /// The largest value.
    pub high: f64,
    /// Sampled on a log scale (`low > 0`).
    pub log: bool,
    /// Whole numbers.
    pub int: bool,
}

/// One hyper-parameter of a learner's grid.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolDim {
    /// Its name.
    pub name: String,
    /// Whether its levels are ordered, or a numeric range.
    pub kind: DimKind,
    /// Its levels, as text (empty for a numeric dimension).
    pub values: Vec<String>,
}

impl PoolDim {
    /// A dimension with levels (ordinal or categorical), not a numeric range.
    pub fn has_levels(&self) -> bool {
        !matches!(self.kind, DimKind::Numeric(_))
    }
}

impl PoolLearner {
    /// Does the learner have a numeric dimension (its configurations are a sample, not a grid)?
    pub fn is_sampled(&self) -> bool {
        self.dims.iter().any(|d| !d.has_levels())
    }
}

/// One learner of a pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolLearner {
    /// Its name.
    pub name: String,
    /// What one fidelity unit is ("8 boosting iterations").
    pub unit: String,
    /// Its hyper-parameters.
    pub dims: Vec<PoolDim>,
}

/// The neighbour rule of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbours {
    /// Grid neighbours: one ordinal step, or another level of a categorical dimension.
    Grid,
    /// An explicit table, `neighbours.parquet` (config_id, neighbour_id).
    Table,
    /// None: a mutation falls back to a fresh draw (a pool sampled from ranges).
    None,
}

/// A pool's `pool.toml`.
#[derive(Clone, Debug)]
pub struct PoolManifest {
    /// The pool's name.
    pub name: String,
    /// What it holds, in a sentence.
    pub description: String,
    /// The score's metric.
    pub metric: String,
    /// Whether higher scores are better.
    pub direction: Direction,
    /// Fidelity units in a full curve.
    pub units: u32,
    /// How neighbours are found.
    pub neighbours: Neighbours,
    /// Every configuration has a curve on every task.
    pub complete: bool,
    /// The learners.
    pub learners: Vec<PoolLearner>,
    /// Where the pool comes from (free-form).
    pub provenance: toml::Table,
    /// Format 1.1: the objectives a multi-objective analysis measures, each with its direction;
    /// empty for a pool of one objective (its `metric`).
    pub objectives: Vec<Objective>,
    /// Format 1.2: the function a synthetic pool is generated from (no curve files).
    pub generator: Option<Box<synthetic::Generator>>,
}

pub use super::objectives::{Objective, ObjectiveColumn};

impl PoolManifest {
    /// The objectives read from columns of their own, by column name, in `Curve::extra` order.
    pub fn extra_columns(&self) -> Vec<&str> {
        self.objectives
            .iter()
            .filter(|o| matches!(o.column, ObjectiveColumn::Extra(_)))
            .map(|o| o.name.as_str())
            .collect()
    }
}

/// One configuration of the pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolConfig {
    /// The configuration's id in the pool's files.
    pub id: u32,
    /// Index into the manifest's learners.
    pub learner: usize,
    /// Its level index per dimension of its learner.
    pub levels: Vec<u16>,
    /// The hyper-parameters as JSON.
    pub config: String,
}

/// One configuration's learning curve on one task: unit u (1-based) at index u - 1. Shorter than
/// `units` when a unit failed (the last entry) or the pool is incomplete.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    /// Validation score per unit.
    pub score: Vec<f32>,
    /// Test score per unit (NaN where not recorded).
    pub test_score: Vec<f32>,
    /// Recorded seconds per unit.
    pub cost_s: Vec<f32>,
    /// Outcome per unit.
    pub status: Vec<Status>,
    /// The objectives with columns of their own (format 1.1): unit after unit, each unit's values
    /// in `PoolManifest::extra_columns` order (NaN: not recorded, infeasible). Empty otherwise.
    pub extra: Vec<f32>,
}

impl Curve {
    /// Units recorded.
    pub fn len(&self) -> usize {
        self.score.len()
    }

    /// No unit recorded.
    pub fn is_empty(&self) -> bool {
        self.score.is_empty()
    }

    /// Objective `o`'s value at unit `u` (0-based), of a pool with `n_extra` objectives in
    /// columns of their own; NaN when not recorded (infeasible).
    pub fn objective(&self, o: &Objective, n_extra: usize, u: usize) -> f64 {
        match o.column {
            ObjectiveColumn::Score => f64::from(self.score[u]),
            ObjectiveColumn::Cost => f64::from(self.cost_s[u]),
            ObjectiveColumn::CumulativeCost => self.cost_to(u + 1),
            ObjectiveColumn::Extra(j) => {
                f64::from(self.extra.get(u * n_extra + j).copied().unwrap_or(f32::NAN))
            }
        }
    }

    /// Recorded cost of the units 1..=n.
    pub fn cost_to(&self, n: usize) -> f64 {
        self.cost_s[..n.min(self.len())]
            .iter()
            .map(|&c| f64::from(c))
            .sum()
    }
}

/// One (dataset, run) of the pool: a curve per configuration, in `Pool::configs` order.
#[derive(Clone, Debug)]
pub struct PoolTask {
    /// The dataset.
    pub dataset: String,
    /// The run.
    pub run: i64,
    /// One curve per configuration.
    pub curves: Vec<Curve>,
}

/// A loaded, validated pool: configurations and their learning curves on every task.
#[derive(Clone, Debug)]
pub struct Pool {
    /// The pool's folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: PoolManifest,
    /// Sorted by config_id.
    pub configs: Vec<PoolConfig>,
    /// Sorted by (dataset, run).
    pub tasks: Vec<PoolTask>,
    /// Per configuration (index into `configs`), its neighbours' indices, sorted.
    pub neighbours: Vec<Vec<u32>>,
    /// Configurations missing from some task (0 for a complete pool).
    pub missing_curves: usize,
    /// Every task of the pool's curves, sorted: `tasks` holds those loaded (all of them, unless
    /// the pool was loaded for some tasks only).
    pub all_tasks: Vec<(String, i64)>,
    /// FNV-1a 64 of the pool's files, hex.
    pub content_hash: String,
    /// Every configuration encoded for model-based optimisers (TPE, SMAC-style).
    pub space: crate::space::Space,
    /// Per learner: its default configuration (index into `configs`), when the pool records one.
    /// A default is never drawn at random; policies ask for it by name (Ex-Def).
    pub defaults: Vec<Option<u32>>,
}

impl Pool {
    /// Make the objective `name` the pool's score, what single-objective policies optimise and
    /// the incumbent follows (`[world] score`): every curve's score becomes that objective's
    /// value at each unit, in its direction. Named rules: an ok unit whose value is not a number
    /// (infeasible) becomes failed and ends its curve; test scores are not recorded for another
    /// objective (NaN). The objective that read the old score moves to a column of its own, so
    /// every objective reads what it read before. The metric itself is a no-op.
    pub fn rescore(&mut self, name: &str) -> anyhow::Result<()> {
        let m = &self.manifest;
        let i = super::objectives::position(&m.objectives, name, "pool", &m.name)?;
        if m.objectives[i].column == ObjectiveColumn::Score {
            return Ok(());
        }
        let target = m.objectives[i].clone();
        let n_extra = m.extra_columns().len();
        let metric = m
            .objectives
            .iter()
            .position(|o| o.column == ObjectiveColumn::Score);
        for task in &mut self.tasks {
            for c in &mut task.curves {
                let values: Vec<f64> = (0..c.len())
                    .map(|u| c.objective(&target, n_extra, u))
                    .collect();
                if metric.is_some() {
                    // The old score becomes the last column of its own at every unit.
                    let mut extra = Vec::with_capacity(c.len() * (n_extra + 1));
                    for u in 0..c.len() {
                        extra
                            .extend((0..n_extra).map(|j| {
                                c.extra.get(u * n_extra + j).copied().unwrap_or(f32::NAN)
                            }));
                        extra.push(c.score[u]);
                    }
                    c.extra = extra;
                }
                let mut end = c.len();
                for (u, v) in values.iter().enumerate() {
                    if c.status[u] != Status::Ok {
                        continue;
                    }
                    if v.is_finite() {
                        c.score[u] = *v as f32;
                    } else {
                        c.status[u] = Status::Failed;
                        c.score[u] = f32::NAN;
                        end = u + 1;
                        break;
                    }
                }
                let w = if metric.is_some() {
                    n_extra + 1
                } else {
                    n_extra
                };
                c.score.truncate(end);
                c.cost_s.truncate(end);
                c.status.truncate(end);
                c.test_score = vec![f32::NAN; end];
                c.extra.truncate(end * w);
            }
        }
        let m = &mut self.manifest;
        if let Some(j) = metric {
            m.objectives[j].column = ObjectiveColumn::Extra(n_extra);
        }
        m.metric = target.name;
        m.direction = target.direction;
        Ok(())
    }

    /// Learners with a recorded default configuration.
    pub fn n_defaults(&self) -> usize {
        self.defaults.iter().flatten().count()
    }

    /// "2500 configurations", with " (+ 4 learners' defaults)" when the pool records them.
    pub fn configurations_text(&self) -> String {
        let d = self.n_defaults();
        if d == 0 {
            format!("{} configurations", self.configs.len())
        } else {
            format!(
                "{} configurations (+ {d} learners' defaults)",
                self.configs.len() - d
            )
        }
    }

    /// Task `t`'s points in the objectives `which` (indices into the manifest's objectives), as
    /// a multi-objective analysis sees them: each configuration's last unit (its full curve),
    /// when that unit is ok and every value is a number (a NaN value makes it infeasible: left
    /// out); minimised, a maximised objective negated. Flat, with the configurations they come
    /// from.
    pub fn objective_points(&self, t: usize, which: &[usize]) -> (Vec<f64>, Vec<usize>) {
        let m = &self.manifest;
        let n_extra = m.extra_columns().len();
        let (mut points, mut configs) = (Vec::new(), Vec::new());
        for (c, curve) in self.tasks[t].curves.iter().enumerate() {
            let Some(u) = curve.len().checked_sub(1) else {
                continue;
            };
            if curve.status[u] != Status::Ok || curve.len() < m.units as usize {
                continue;
            }
            let p: Vec<f64> = which
                .iter()
                .map(|&o| {
                    let o = &m.objectives[o];
                    let v = curve.objective(o, n_extra, u);
                    if o.direction == Direction::Maximize {
                        -v
                    } else {
                        v
                    }
                })
                .collect();
            if p.iter().all(|x| !x.is_nan()) {
                points.extend(p);
                configs.push(c);
            }
        }
        (points, configs)
    }

    /// Units recorded over all tasks and configurations.
    pub fn n_units_recorded(&self) -> usize {
        self.tasks
            .iter()
            .flat_map(|t| &t.curves)
            .map(Curve::len)
            .sum()
    }
}

/// Is `dir` a configuration pool (it has a `pool.toml`)?
pub fn is_pool(dir: &Path) -> bool {
    dir.join("pool.toml").is_file()
}

/// One learner's line of `describe`: its grid's configurations (a recorded default is counted
/// apart), their curves over every task, those that ended in a failure or timeout, their recorded
/// CPU seconds, the mean number of neighbours, and each curve's final and best ok score.
struct LearnerSummary {
    configs: usize,
    curves: usize,
    ended: usize,
    cpu_s: f64,
    degree: f64,
    finals: Vec<f64>,
    bests: Vec<f64>,
}

impl LearnerSummary {
    fn of(pool: &Pool, li: usize) -> LearnerSummary {
        let idx: Vec<usize> = (0..pool.configs.len())
            .filter(|&i| pool.configs[i].learner == li && pool.defaults[li] != Some(i as u32))
            .collect();
        let (mut curves, mut ended, mut cpu) = (0usize, 0usize, 0.0f64);
        let (mut finals, mut bests) = (Vec::new(), Vec::new());
        for t in &pool.tasks {
            for &i in &idx {
                let c = &t.curves[i];
                if c.is_empty() {
                    continue;
                }
                curves += 1;
                ended += usize::from(c.status.last().is_some_and(|s| *s != Status::Ok));
                cpu += c.cost_to(c.len());
                let ok: Vec<f32> = c
                    .score
                    .iter()
                    .zip(&c.status)
                    .filter(|(_, s)| **s == Status::Ok)
                    .map(|(x, _)| *x)
                    .collect();
                if let Some(&f) = ok.last() {
                    finals.push(f64::from(f));
                    // The best by the pool's direction (a loss's best is its lowest).
                    bests.push(f64::from(match pool.manifest.direction {
                        Direction::Minimize => ok.iter().copied().fold(f32::INFINITY, f32::min),
                        Direction::Maximize => ok.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                    }));
                }
            }
        }
        let degree = idx
            .iter()
            .map(|&i| pool.neighbours[i].len() as f64)
            .sum::<f64>()
            / idx.len().max(1) as f64;
        LearnerSummary {
            configs: idx.len(),
            curves,
            ended,
            cpu_s: cpu,
            degree,
            finals,
            bests,
        }
    }
}

/// "min / median / max" of `v` (sorted in place), "–" when empty.
fn min_med_max(v: &mut [f64]) -> String {
    if v.is_empty() {
        return "–".to_string();
    }
    v.sort_by(f64::total_cmp);
    format!(
        "{:.3} / {:.3} / {:.3}",
        v[0],
        v[v.len() / 2],
        v[v.len() - 1]
    )
}

/// The summary `traces inspect` prints for a pool: per learner, configurations, curves, units,
/// failures, recorded CPU cost, and the spread of final and best scores.
pub fn describe(pool: &Pool) -> String {
    use std::fmt::Write as _;
    let m = &pool.manifest;
    let datasets: BTreeSet<&str> = pool.tasks.iter().map(|t| t.dataset.as_str()).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "== {} ({}) — configuration pool, {}\n   {}\n   metric {} ({}); {} datasets, {} tasks, {}, {} units per curve, neighbours {}; {} units recorded{}; hash {}",
        m.name,
        pool.dir.display(),
        m.provenance
            .get("source")
            .and_then(|v| v.as_str())
            .unwrap_or("?"),
        m.description,
        m.metric,
        m.direction.as_str(),
        datasets.len(),
        pool.tasks.len(),
        pool.configurations_text(),
        m.units,
        match m.neighbours {
            Neighbours::Grid => "grid",
            Neighbours::Table => "table",
            Neighbours::None => "none",
        },
        pool.n_units_recorded(),
        if pool.missing_curves > 0 {
            format!(
                " (INCOMPLETE: {} curves missing or short)",
                pool.missing_curves
            )
        } else {
            String::new()
        },
        pool.content_hash
    );
    let width = m
        .learners
        .iter()
        .map(|l| l.name.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let _ = writeln!(
        s,
        "\n   {:<width$}  {:>7}  {:>8}  {:>6}  {:>8}  {:>10}  {:>23}  {:>23}  unit",
        "learner",
        "configs",
        "curves",
        "ended",
        "CPU h",
        "neighbours",
        "final score (min/med/max)",
        "best score (min/med/max)",
    );
    for (li, l) in m.learners.iter().enumerate() {
        let mut x = LearnerSummary::of(pool, li);
        let _ = writeln!(
            s,
            "   {:<width$}  {:>7}  {:>8}  {:>6}  {:>8.3}  {:>10.1}  {:>23}  {:>23}  {}",
            l.name,
            x.configs,
            x.curves,
            x.ended,
            x.cpu_s / 3600.0,
            x.degree,
            min_med_max(&mut x.finals),
            min_med_max(&mut x.bests),
            l.unit
        );
    }
    if !m.objectives.is_empty() {
        describe_objectives(pool, &mut s);
    }
    s
}

/// A pool of several objectives: each objective's spread over the configurations' last units,
/// and per task the true Pareto front in every objective (what a replay measures runs against).
fn describe_objectives(pool: &Pool, s: &mut String) {
    let all: Vec<usize> = (0..pool.manifest.objectives.len()).collect();
    let tasks: Vec<(String, Vec<f64>)> = pool
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                format!("{}/{}", t.dataset, t.run),
                pool.objective_points(i, &all).0,
            )
        })
        .collect();
    super::objectives::describe(
        &pool.manifest.objectives,
        &tasks,
        (
            "last unit of each curve (min/med/max)",
            "last units whose every objective is a number",
        ),
        s,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_learners_summary_counts_curves_failures_cost_and_scores() {
        // Config 0: 3 ok units; config 1 fails at its 2nd unit; config 2 has no curve.
        let mut pool = crate::replay::pool::tests::hand_pool(3, 3, |i| match i {
            0 => vec![0.5, 0.7, 0.6],
            1 => vec![0.4, f32::NAN],
            _ => vec![],
        });
        let x = LearnerSummary::of(&pool, 0);
        assert_eq!((x.configs, x.curves, x.ended), (3, 2, 1));
        // Every unit costs (i + 1) × 0.1 s: 3 × 0.1 + 2 × 0.2.
        assert!((x.cpu_s - 0.7).abs() < 1e-6, "{}", x.cpu_s);
        // Neighbours on a 3-level ordinal grid: 1, 2, 1.
        assert!((x.degree - 4.0 / 3.0).abs() < 1e-12);
        let f = |v: &[f64]| {
            v.iter()
                .map(|x| (x * 100.0).round() / 100.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            (f(&x.finals), f(&x.bests)),
            (vec![0.6, 0.4], vec![0.7, 0.4])
        );
        // A loss's best is its lowest.
        pool.manifest.direction = Direction::Minimize;
        assert_eq!(f(&LearnerSummary::of(&pool, 0).bests), [0.5, 0.4]);
        assert_eq!(min_med_max(&mut [3.0, 1.0, 2.0]), "1.000 / 2.000 / 3.000");
        assert_eq!(min_med_max(&mut []), "–");
    }

    fn manifest() -> PoolManifest {
        PoolManifest {
            name: "t".into(),
            description: String::new(),
            metric: "accuracy".into(),
            objectives: Vec::new(),
            generator: None,
            direction: Direction::Maximize,
            units: 3,
            neighbours: Neighbours::Grid,
            complete: true,
            learners: vec![PoolLearner {
                name: "a".into(),
                unit: "1 epoch".into(),
                dims: vec![
                    PoolDim {
                        name: "x".into(),
                        kind: DimKind::Ordinal,
                        values: vec!["1".into(), "2".into(), "3".into()],
                    },
                    PoolDim {
                        name: "c".into(),
                        kind: DimKind::Categorical,
                        values: vec!["p".into(), "q".into(), "r".into()],
                    },
                ],
            }],
            provenance: toml::Table::new(),
        }
    }

    #[test]
    fn grid_neighbours_step_ordinals_and_switch_categories() {
        let m = manifest();
        let mut configs = Vec::new();
        for x in 0..3u16 {
            for c in 0..3u16 {
                configs.push(PoolConfig {
                    id: (3 * x + c) as u32,
                    learner: 0,
                    levels: vec![x, c],
                    config: "{}".into(),
                });
            }
        }
        let n = grid_neighbours(&m, &configs);
        // (x=0, c=p): x=1 with p; c = q or r with x = 0.
        assert_eq!(n[0], vec![1, 2, 3]);
        // (x=1, c=q): x = 0 or 2 with q; c = p or r with x = 1.
        assert_eq!(n[4], vec![1, 3, 5, 7]);
    }
}
