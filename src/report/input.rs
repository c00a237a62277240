//! What a report reads: a results folder (runs.parquet, trajectories.parquet) or a long CSV of
//! scores from any tool.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use crate::experiment::read_parquet;

/// The unit of a results folder's comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// (dataset, run): scores averaged over repetitions and budgets.
    Task,
    /// (dataset, run, budget): scores averaged over repetitions (HAMLET's unit).
    TaskBudget,
    /// (dataset, run, budget, repetition): every cell is a unit (HPO-B's and Syne Tune's
    /// (dataset, seed) units; the only choice for a single synthetic task).
    TaskBudgetRepetition,
}

impl UnitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Task => "task",
            UnitKind::TaskBudget => "task-budget",
            UnitKind::TaskBudgetRepetition => "task-budget-repetition",
        }
    }
}

/// One row of runs.parquet, as much as the report needs.
#[derive(Clone, Debug)]
pub struct Run {
    pub cell: u64,
    pub dataset: String,
    pub run: i64,
    pub budget: f64,
    pub budget_abs: f64,
    pub family: String,
    pub policy: String,
    pub params: String,
    pub repetition: u32,
    pub best_score: f64,
    /// The learner of the best evaluation ("" if none).
    pub best_learner: String,
    /// Learner -> pulls.
    pub pulls: Vec<(String, f64)>,
}

impl Run {
    pub fn task(&self) -> String {
        format!("{}/{}", self.dataset, self.run)
    }

    pub fn unit(&self, kind: UnitKind) -> String {
        match kind {
            UnitKind::Task => self.task(),
            UnitKind::TaskBudget => format!("{}@{}", self.task(), self.budget),
            UnitKind::TaskBudgetRepetition => {
                format!("{}@{}#{}", self.task(), self.budget, self.repetition)
            }
        }
    }
}

pub struct Results {
    pub runs: Vec<Run>,
    pub higher_is_better: bool,
    pub metric_note: String,
    pub budget_unit: String,
}

pub fn read_results(dir: &Path) -> Result<Results> {
    let path = dir.join(crate::experiment::RUNS);
    if !path.is_file() {
        bail!(
            "{}: no runs.parquet here; give a results folder written by `banditbench run` (or use --scores FILE.csv)",
            dir.display()
        );
    }
    let df = read_parquet(&path)?;
    let s = |name: &str| -> Result<Vec<String>> {
        Ok(df
            .column(name)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: column '{name}'", path.display()))?
            .str()?
            .iter()
            .map(|v| v.unwrap_or("").to_string())
            .collect())
    };
    let f = |name: &str| -> Result<Vec<f64>> {
        Ok(df
            .column(name)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: column '{name}'", path.display()))?
            .cast(&DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    };
    let cell: Vec<u64> = df
        .column("cell")?
        .u64()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect();
    let run: Vec<i64> = df
        .column("run")?
        .i64()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect();
    let rep: Vec<u32> = df
        .column("repetition")?
        .u32()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect();
    let best_learner: Vec<String> = df
        .column("best_learner")?
        .str()?
        .iter()
        .map(|v| v.unwrap_or("").to_string())
        .collect();
    let (dataset, family, policy, params, pulls, direction, unit) = (
        s("dataset")?,
        s("policy_family")?,
        s("policy")?,
        s("params")?,
        s("pulls")?,
        s("direction")?,
        s("budget_unit")?,
    );
    let (budget, budget_abs, best) = (f("budget")?, f("budget_abs")?, f("best_score")?);
    let mut runs = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let pulls: Vec<(String, f64)> = match serde_json::from_str::<serde_json::Value>(&pulls[i]) {
            Ok(serde_json::Value::Object(m)) => m
                .into_iter()
                .map(|(k, v)| (k, v.as_f64().unwrap_or(0.0)))
                .collect(),
            _ => Vec::new(),
        };
        runs.push(Run {
            cell: cell[i],
            dataset: dataset[i].clone(),
            run: run[i],
            budget: budget[i],
            budget_abs: budget_abs[i],
            family: family[i].clone(),
            policy: policy[i].clone(),
            params: params[i].clone(),
            repetition: rep[i],
            best_score: best[i],
            best_learner: best_learner[i].clone(),
            pulls,
        });
    }
    Ok(Results {
        runs,
        higher_is_better: direction.first().is_none_or(|d| d == "maximize"),
        metric_note: "best validation score found".to_string(),
        budget_unit: unit.first().cloned().unwrap_or_default(),
    })
}

/// (unit, policy, mean best score over repetitions [and budgets for `Task`]) rows.
pub fn unit_rows(runs: &[Run], kind: UnitKind) -> Vec<(String, String, f64)> {
    let mut acc: BTreeMap<(String, String), (f64, usize, usize)> = BTreeMap::new();
    for r in runs {
        let e = acc.entry((r.unit(kind), r.policy.clone())).or_default();
        if r.best_score.is_nan() {
            e.2 += 1;
        } else {
            e.0 += r.best_score;
            e.1 += 1;
        }
    }
    acc.into_iter()
        .map(|((u, p), (sum, n, _))| (u, p, if n > 0 { sum / n as f64 } else { f64::NAN }))
        .collect()
}

/// Read a long CSV with columns unit, policy, score.
pub fn read_scores_csv(path: &Path) -> Result<Vec<(String, String, f64)>> {
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as CSV", path.display()))?;
    for c in ["unit", "policy", "score"] {
        if df.column(c).is_err() {
            bail!(
                "{}: missing column '{c}' (a scores file has the columns unit,policy,score)",
                path.display()
            );
        }
    }
    let text = |name: &str| -> Result<Vec<Option<String>>> {
        let c = df.column(name)?.cast(&DataType::String)?;
        Ok(c.str()?.iter().map(|v| v.map(String::from)).collect())
    };
    let (units, policies) = (text("unit")?, text("policy")?);
    let score_col = df.column("score")?;
    if !(score_col.dtype().is_primitive_numeric() || score_col.dtype() == &DataType::Null) {
        bail!(
            "{}: column 'score' must be numeric, but its type is {}",
            path.display(),
            score_col.dtype()
        );
    }
    let scores: Vec<Option<f64>> = score_col.cast(&DataType::Float64)?.f64()?.iter().collect();
    let mut rows = Vec::with_capacity(units.len());
    for i in 0..units.len() {
        let (Some(u), Some(p)) = (&units[i], &policies[i]) else {
            bail!(
                "{}: row {} (line {}): empty unit or policy",
                path.display(),
                i + 1,
                i + 2
            );
        };
        rows.push((u.clone(), p.clone(), scores[i].unwrap_or(f64::NAN)));
    }
    Ok(rows)
}

/// Per cell, the incumbent at `points` + 1 evenly spaced fractions of the cell's budget
/// (0, 1/points, ..., 1): the last decision with time <= t (NaN before the first incumbent).
pub fn anytime_curves(dir: &Path, runs: &[Run], points: usize) -> Result<BTreeMap<u64, Vec<f64>>> {
    let path = dir.join(crate::experiment::TRAJECTORIES);
    let df = read_parquet(&path)?;
    let cell = df.column("cell")?.u64()?;
    let time = df.column("time")?.f64()?;
    let inc = df.column("incumbent")?.f64()?;
    let budget: BTreeMap<u64, f64> = runs.iter().map(|r| (r.cell, r.budget_abs)).collect();
    let mut out: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let (mut cur, mut curve, mut j) = (u64::MAX, Vec::new(), 0usize);
    let mut last = f64::NAN;
    let mut b = 1.0;
    let finish = |cur: u64,
                  curve: &mut Vec<f64>,
                  j: &mut usize,
                  last: f64,
                  out: &mut BTreeMap<u64, Vec<f64>>| {
        if cur != u64::MAX {
            while *j <= points {
                curve.push(last);
                *j += 1;
            }
            out.insert(cur, std::mem::take(curve));
        }
    };
    for i in 0..df.height() {
        let c = cell.get(i).unwrap_or(0);
        if c != cur {
            finish(cur, &mut curve, &mut j, last, &mut out);
            cur = c;
            j = 0;
            last = f64::NAN;
            b = budget.get(&c).copied().unwrap_or(1.0);
        }
        let t = time.get(i).unwrap_or(0.0);
        // Grid points strictly before this decision's time take the incumbent so far.
        while j <= points && (j as f64 / points as f64) * b < t * (1.0 - 1e-12) {
            curve.push(last);
            j += 1;
        }
        last = inc.get(i).unwrap_or(f64::NAN);
    }
    finish(cur, &mut curve, &mut j, last, &mut out);
    Ok(out)
}
