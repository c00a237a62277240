//! Trace sets, format v1 (the contract is documented in `traces/README.md`).
//!
//! A trace set is a folder with `traceset.toml` (the manifest) and `evaluations.parquet` (or
//! `evaluations.csv`), one row per recorded evaluation. Loading validates every rule of the format
//! and converts the rows into compact per-task, per-arm arrays that all replay threads share
//! read-only.

pub(crate) mod inspect;
pub(crate) mod joint;
mod load;
mod manifest;
pub(crate) mod objectives;
pub mod pool;
pub(crate) use crate::space;

pub(crate) use load::check_csv_shape;
pub(crate) use load::csv_error;
pub(crate) use load::read_frame;
pub use load::{LoadOptions, TaskFilter, load_trace_set};
pub use manifest::{Direction, Manifest, Source};

use std::path::PathBuf;

/// The outcome of one evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The evaluation finished and has a score.
    Ok,
    /// The evaluation failed.
    Failed,
    /// The evaluation ran out of time.
    Timeout,
}

impl Status {
    /// The status named `s` in a trace (`ok`, `failed`, `timeout`).
    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "ok" => Some(Status::Ok),
            "failed" => Some(Status::Failed),
            "timeout" => Some(Status::Timeout),
            _ => None,
        }
    }
}

/// One arm of one task: the evaluations a learner's tuner produced, in `seq` order.
#[derive(Clone, Debug, Default)]
pub struct Arm {
    /// The learner whose tuner this is.
    pub learner: String,
    /// Seconds from the tuner's start to the end of each evaluation (non-decreasing).
    pub elapsed_s: Vec<f64>,
    /// Each evaluation's own cost (the `cost_s` column, or the difference of `elapsed_s`).
    pub cost_s: Vec<f64>,
    /// Validation score as recorded; NaN unless the status is `ok`.
    pub score: Vec<f64>,
    /// Test score as recorded; NaN where absent.
    pub test_score: Vec<f64>,
    /// Each evaluation's outcome.
    pub status: Vec<Status>,
    /// Format 1.1: each evaluation's value of every objective of the manifest, evaluation after
    /// evaluation (NaN: infeasible, or the evaluation failed); empty with one objective.
    pub objectives: Vec<f64>,
}

impl Arm {
    /// Evaluations in the trace.
    pub fn len(&self) -> usize {
        self.elapsed_s.len()
    }

    /// The trace has no evaluation.
    pub fn is_empty(&self) -> bool {
        self.elapsed_s.is_empty()
    }

    /// Time at which the arm's trace ends (its last evaluation), 0 for an empty arm.
    pub fn span_s(&self) -> f64 {
        self.elapsed_s.last().copied().unwrap_or(0.0)
    }
}

/// One replay unit: a (dataset, run) pair with one arm per learner, in the trace set's learner order.
#[derive(Clone, Debug)]
pub struct Task {
    /// The dataset.
    pub dataset: String,
    /// The run (a repetition of the recording).
    pub run: i64,
    /// One arm per learner.
    pub arms: Vec<Arm>,
}

impl Task {
    /// Mean over arms of the time at which each arm's trace ends: the unit of task-relative budgets.
    pub fn mean_arm_span_s(&self) -> f64 {
        if self.arms.is_empty() {
            return 0.0;
        }
        self.arms.iter().map(Arm::span_s).sum::<f64>() / self.arms.len() as f64
    }

    /// Total number of evaluations over all arms: the unit of pool-relative pull budgets.
    pub fn n_evaluations(&self) -> usize {
        self.arms.iter().map(Arm::len).sum()
    }

    /// `dataset/run`, the task's name in results and messages.
    pub fn name(&self) -> String {
        format!("{}/{}", self.dataset, self.run)
    }
}

/// A task left out because it lacks learners (only with `allow_missing_arms`).
#[derive(Clone, Debug)]
pub struct DroppedTask {
    /// The dataset.
    pub dataset: String,
    /// The run.
    pub run: i64,
    /// The learners it lacks.
    pub missing: Vec<String>,
}

/// A loaded, validated trace set.
#[derive(Clone, Debug)]
pub struct TraceSet {
    /// The trace set's folder.
    pub dir: PathBuf,
    /// Its evaluations file (parquet or CSV).
    pub evaluations_file: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// Learner names, sorted; every task's arms follow this order.
    pub learners: Vec<String>,
    /// The tasks kept.
    pub tasks: Vec<Task>,
    /// Every dataset of the file, sorted, before the `[tasks]` filters.
    pub datasets: Vec<String>,
    /// Tasks left out for missing learners.
    pub dropped: Vec<DroppedTask>,
    /// Columns present in the file beyond the format's (kept in the file, ignored here).
    pub extra_columns: Vec<String>,
    /// FNV-1a 64 of the manifest's and the evaluations file's bytes, hex.
    pub content_hash: String,
    /// Things a user should know about how the folder was read.
    pub notes: Vec<String>,
}

impl TraceSet {
    /// Make the objective `name` (format 1.1) the score, what single-objective policies
    /// optimise and the incumbent follows (`[world] score`): every ok evaluation's score becomes
    /// its value of that objective, in its direction. Named rules: an ok evaluation whose value
    /// is not a number (infeasible) becomes failed; test scores are not recorded for another
    /// objective (NaN). `Arm::objectives` keep every objective as recorded. The metric itself is
    /// a no-op.
    pub fn rescore(&mut self, name: &str) -> anyhow::Result<()> {
        let m = &self.manifest;
        let k = objectives::position(&m.objectives, name, "trace set", &m.name)?;
        if m.objectives[k].column == objectives::ObjectiveColumn::Score {
            return Ok(());
        }
        let n = m.objectives.len();
        for task in &mut self.tasks {
            for a in &mut task.arms {
                for i in 0..a.len() {
                    if a.status[i] != Status::Ok {
                        continue;
                    }
                    let v = a.objectives[i * n + k];
                    if v.is_finite() {
                        a.score[i] = v;
                    } else {
                        a.status[i] = Status::Failed;
                        a.score[i] = f64::NAN;
                    }
                }
                a.test_score.iter_mut().for_each(|t| *t = f64::NAN);
            }
        }
        let o = self.manifest.objectives[k].clone();
        self.manifest.metric = o.name;
        self.manifest.direction = o.direction;
        Ok(())
    }

    /// Evaluations over all tasks and arms.
    pub fn n_evaluations(&self) -> usize {
        self.tasks.iter().map(Task::n_evaluations).sum()
    }
}
