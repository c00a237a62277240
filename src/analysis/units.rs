//! The unit table: one score per (unit, policy). This is the only place where cells are averaged
//! into the units that the tests treat as independent; `run`'s printed ranking, `report` and
//! `reproduce` all build their tables here.
//!
//! Rules (see the README, "Units and what a number means"):
//! - A unit is a dataset (default when there are at least two), a task (dataset, run), a
//!   (task, budget) or a single cell. Units that share a dataset are not independent; the table
//!   says so.
//! - A cell that found nothing (no `best_score`) follows [`FoundNothing`]: by default it scores the
//!   worst score any cell of its unit reached, so a policy is not rewarded for failing.
//! - Scores are summed in sorted order, so a permutation of the cells (repetitions, runs) never
//!   changes a mean in its last bit, and so never changes a rank.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};

use crate::results::Run;

/// What the tests treat as one independent observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum UnitKind {
    /// A dataset: scores averaged over its runs, budgets and repetitions.
    Dataset,
    /// A task (dataset, run): scores averaged over budgets and repetitions.
    Task,
    /// (dataset, run, budget): scores averaged over repetitions (HAMLET's Fig. 8 unit).
    TaskBudget,
    /// Every cell is a unit (HPO-B's and Syne Tune's (dataset, seed) units; the only choice for a
    /// single synthetic task).
    TaskBudgetRepetition,
}

impl UnitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Dataset => "dataset",
            UnitKind::Task => "task",
            UnitKind::TaskBudget => "task-budget",
            UnitKind::TaskBudgetRepetition => "task-budget-repetition",
        }
    }

    /// The most independent unit that gives at least two units: the dataset, else the task, else
    /// the single cell (one synthetic task).
    pub fn most_independent(runs: &[Run]) -> UnitKind {
        let datasets: BTreeSet<&str> = runs.iter().map(|r| r.dataset.as_str()).collect();
        let tasks: BTreeSet<(&str, i64)> =
            runs.iter().map(|r| (r.dataset.as_str(), r.run)).collect();
        UnitKind::most_independent_of(datasets.len(), tasks.len())
    }

    /// [`UnitKind::most_independent`] from the numbers of distinct datasets and tasks.
    pub fn most_independent_of(datasets: usize, tasks: usize) -> UnitKind {
        if datasets >= 2 {
            UnitKind::Dataset
        } else if tasks >= 2 {
            UnitKind::Task
        } else {
            UnitKind::TaskBudgetRepetition
        }
    }

    /// The unit a cell belongs to.
    pub fn key(self, r: &Run) -> String {
        let mut k = String::new();
        self.write_key(&mut k, &r.dataset, r.run, r.budget, r.repetition);
        k
    }

    /// Write the unit of the cell (dataset, run, budget, repetition) into `out` (cleared first).
    pub fn write_key(
        self,
        out: &mut String,
        dataset: &str,
        run: i64,
        budget: f64,
        repetition: u32,
    ) {
        use std::fmt::Write;
        out.clear();
        // Writing to a String cannot fail.
        let _ = match self {
            UnitKind::Dataset => write!(out, "{dataset}"),
            UnitKind::Task => write!(out, "{dataset}/{run}"),
            UnitKind::TaskBudget => write!(out, "{dataset}/{run}@{budget}"),
            UnitKind::TaskBudgetRepetition => {
                write!(out, "{dataset}/{run}@{budget}#{repetition}")
            }
        };
    }

    /// What is averaged into one unit's score, in words.
    pub fn averaged_over(self) -> &'static str {
        match self {
            UnitKind::Dataset => "runs, budgets and repetitions",
            UnitKind::Task => "budgets and repetitions",
            UnitKind::TaskBudget => "repetitions",
            UnitKind::TaskBudgetRepetition => "nothing (every cell is a unit)",
        }
    }
}

/// What a cell that found nothing (no `best_score`) counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FoundNothing {
    /// The worst score any cell of the same unit reached (default).
    Worst,
    /// Left out of its (unit, policy) mean (the count is still reported).
    Drop,
}

impl FoundNothing {
    pub fn as_str(self) -> &'static str {
        match self {
            FoundNothing::Worst => "worst",
            FoundNothing::Drop => "drop",
        }
    }
}

/// Per policy: how many cells it ran and how many of them found nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FoundCount {
    pub cells: usize,
    pub found_nothing: usize,
}

/// One score per (unit, policy), with what went into it.
#[derive(Clone, Debug)]
pub struct UnitTable {
    pub kind: UnitKind,
    pub rule: FoundNothing,
    /// (unit, policy, mean score); units in sorted order, policies sorted within a unit.
    pub rows: Vec<(String, String, f64)>,
    /// Per policy, in sorted order.
    pub found: BTreeMap<String, FoundCount>,
    pub n_units: usize,
    pub n_datasets: usize,
    /// Cells averaged into one (unit, policy) score: the smallest and largest count.
    pub cells_per_score: (usize, usize),
}

/// The same cells scored on their test scores (the test score of the same recommended unit), for
/// a unit table or family test on test rather than validation scores.
pub fn on_test_scores(runs: &[Run]) -> Vec<Run> {
    runs.iter()
        .map(|r| Run {
            best_score: r.best_test_score,
            ..r.clone()
        })
        .collect()
}

/// The mean of `xs` summed in sorted order (NaN if empty): independent of the order of `xs`.
pub fn ordered_mean(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Build the unit table of `runs`. `higher_is_better` says which score is the worst.
pub fn unit_table(
    runs: &[Run],
    kind: UnitKind,
    rule: FoundNothing,
    higher_is_better: bool,
) -> UnitTable {
    let mut g = UnitGrouper::new(kind);
    for r in runs {
        g.add(
            &r.dataset,
            r.run,
            r.budget,
            r.repetition,
            &r.policy,
            r.best_score,
        );
    }
    g.finish(rule, higher_is_better)
}

/// Groups cells' scores by (unit, policy) one cell at a time, so that a caller can stream the
/// cells from a file: it holds one score per cell and one entry per (unit, policy), never a cell.
pub struct UnitGrouper {
    kind: UnitKind,
    by_unit: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    found: BTreeMap<String, FoundCount>,
    datasets: BTreeSet<String>,
    key: String,
}

impl UnitGrouper {
    pub fn new(kind: UnitKind) -> UnitGrouper {
        UnitGrouper {
            kind,
            by_unit: BTreeMap::new(),
            found: BTreeMap::new(),
            datasets: BTreeSet::new(),
            key: String::new(),
        }
    }

    /// One cell: its place, its policy and its best score (NaN: found nothing).
    pub fn add(
        &mut self,
        dataset: &str,
        run: i64,
        budget: f64,
        repetition: u32,
        policy: &str,
        score: f64,
    ) {
        if !self.datasets.contains(dataset) {
            self.datasets.insert(dataset.to_string());
        }
        self.kind
            .write_key(&mut self.key, dataset, run, budget, repetition);
        if !self.by_unit.contains_key(self.key.as_str()) {
            self.by_unit.insert(self.key.clone(), BTreeMap::new());
        }
        let policies = self
            .by_unit
            .get_mut(self.key.as_str())
            .expect("inserted above");
        match policies.get_mut(policy) {
            Some(v) => v.push(score),
            None => {
                policies.insert(policy.to_string(), vec![score]);
            }
        }
        match self.found.get_mut(policy) {
            Some(f) => {
                f.cells += 1;
                f.found_nothing += usize::from(score.is_nan());
            }
            None => {
                self.found.insert(
                    policy.to_string(),
                    FoundCount {
                        cells: 1,
                        found_nothing: usize::from(score.is_nan()),
                    },
                );
            }
        }
    }

    /// The unit table of the cells given. `higher_is_better` says which score is the worst.
    pub fn finish(self, rule: FoundNothing, higher_is_better: bool) -> UnitTable {
        let mut rows = Vec::new();
        let mut cells_per_score = (usize::MAX, 0);
        for (unit, policies) in &self.by_unit {
            let finite = policies.values().flatten().filter(|x| !x.is_nan());
            let worst = if higher_is_better {
                finite.fold(f64::NAN, |a, &b| if a.is_nan() { b } else { a.min(b) })
            } else {
                finite.fold(f64::NAN, |a, &b| if a.is_nan() { b } else { a.max(b) })
            };
            for (p, scores) in policies {
                cells_per_score.0 = cells_per_score.0.min(scores.len());
                cells_per_score.1 = cells_per_score.1.max(scores.len());
                let mut xs: Vec<f64> = match rule {
                    FoundNothing::Worst => scores
                        .iter()
                        .map(|&s| if s.is_nan() { worst } else { s })
                        .filter(|s| !s.is_nan())
                        .collect(),
                    FoundNothing::Drop => scores.iter().copied().filter(|s| !s.is_nan()).collect(),
                };
                rows.push((unit.clone(), p.clone(), ordered_mean(&mut xs)));
            }
        }
        if cells_per_score.0 == usize::MAX {
            cells_per_score.0 = 0;
        }
        UnitTable {
            kind: self.kind,
            rule,
            rows,
            found: self.found,
            n_units: self.by_unit.len(),
            n_datasets: self.datasets.len(),
            cells_per_score,
        }
    }
}

impl UnitTable {
    /// Units share a dataset: they are not independent.
    pub fn shares_datasets(&self) -> bool {
        self.n_units > self.n_datasets
    }

    /// The statement every report makes about its units.
    pub fn describe(&self) -> String {
        let (lo, hi) = self.cells_per_score;
        let cells = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}–{hi}")
        };
        let mut s = format!(
            "Unit = {}: {} units from {} dataset(s); each (unit, policy) score is the mean of {cells} cell(s), averaged over {}. A cell that found nothing counts as {}.",
            self.kind.as_str(),
            self.n_units,
            self.n_datasets,
            self.kind.averaged_over(),
            match self.rule {
                FoundNothing::Worst => "the worst score of its unit (--found-nothing worst)",
                FoundNothing::Drop => "nothing: it is left out of the mean (--found-nothing drop)",
            }
        );
        if let Some(w) = self.independence_warning() {
            s.push(' ');
            s.push_str(&w);
        }
        s
    }

    /// A warning when several units come from one dataset.
    pub fn independence_warning(&self) -> Option<String> {
        self.shares_datasets().then(|| {
            format!(
                "Warning: these {} units come from {} dataset(s), so they are not independent; the tests' p-values assume they are and are too small. Use --unit dataset for independent units.",
                self.n_units, self.n_datasets
            )
        })
    }

    /// "policy: k of n cells found nothing" for each policy with any.
    pub fn found_nothing_notes(&self) -> Vec<String> {
        self.found
            .iter()
            .filter(|(_, f)| f.found_nothing > 0)
            .map(|(p, f)| {
                format!(
                    "{p}: {} of {} cells found nothing ({})",
                    f.found_nothing,
                    f.cells,
                    match self.rule {
                        FoundNothing::Worst => "scored as their unit's worst",
                        FoundNothing::Drop => "left out of the means",
                    }
                )
            })
            .collect()
    }
}

/// Refuse a unit kind the results cannot give two units of.
pub fn check_units(table: &UnitTable) -> Result<()> {
    if table.n_units < 2 {
        bail!(
            "unit = {} gives {} unit(s); the tests need at least 2: choose a finer unit with --unit (task, task-budget or task-budget-repetition)",
            table.kind.as_str(),
            table.n_units
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dataset: &str, run: i64, budget: f64, rep: u32, policy: &str, score: f64) -> Run {
        Run::scored(dataset, run, budget, rep, policy, score)
    }

    #[test]
    fn dataset_units_average_runs_budgets_and_repetitions() {
        let runs = vec![
            run("d1", 0, 1.0, 0, "a", 0.5),
            run("d1", 1, 2.0, 0, "a", 0.7),
            run("d1", 0, 1.0, 0, "b", 0.4),
            run("d1", 1, 2.0, 0, "b", 0.6),
            run("d2", 0, 1.0, 0, "a", 0.1),
            run("d2", 0, 1.0, 0, "b", 0.2),
        ];
        assert_eq!(UnitKind::most_independent(&runs), UnitKind::Dataset);
        let t = unit_table(&runs, UnitKind::Dataset, FoundNothing::Worst, true);
        assert_eq!(t.n_units, 2);
        assert!(!t.shares_datasets());
        assert_eq!(t.rows[0], ("d1".into(), "a".into(), 0.6));
        assert_eq!(t.rows[1], ("d1".into(), "b".into(), 0.5));
        let t = unit_table(&runs, UnitKind::Task, FoundNothing::Worst, true);
        assert_eq!(t.n_units, 3);
        assert!(t.shares_datasets());
        assert!(t.describe().contains("not independent"), "{}", t.describe());
    }

    #[test]
    fn found_nothing_is_the_units_worst_or_dropped_and_always_counted() {
        let runs = vec![
            run("d1", 0, 1.0, 0, "a", 0.9),
            run("d1", 0, 1.0, 1, "a", f64::NAN),
            run("d1", 0, 1.0, 0, "b", 0.3),
            run("d1", 0, 1.0, 1, "b", 0.5),
        ];
        let t = unit_table(&runs, UnitKind::Task, FoundNothing::Worst, true);
        // a: (0.9 + worst 0.3) / 2
        assert!((t.rows[0].2 - 0.6).abs() < 1e-12);
        assert_eq!(t.found["a"].found_nothing, 1);
        assert_eq!(t.found["a"].cells, 2);
        assert_eq!(t.found["b"].found_nothing, 0);
        let t = unit_table(&runs, UnitKind::Task, FoundNothing::Drop, true);
        assert_eq!(t.rows[0].2, 0.9);
        assert_eq!(t.found["a"].found_nothing, 1);
        assert!(t.found_nothing_notes()[0].starts_with("a: 1 of 2 cells"));
        // Minimising: the worst is the largest.
        let t = unit_table(&runs, UnitKind::Task, FoundNothing::Worst, false);
        assert!((t.rows[0].2 - 0.9).abs() < 1e-12);
    }

    #[test]
    fn means_do_not_depend_on_the_order_of_cells() {
        let xs = [0.1, 0.2, 0.3, 1e-17, 0.7, 0.1 + 0.2];
        let mut a = xs.to_vec();
        let mut b: Vec<f64> = xs.iter().rev().copied().collect();
        assert_eq!(
            ordered_mean(&mut a).to_bits(),
            ordered_mean(&mut b).to_bits()
        );
    }

    #[test]
    fn permuting_repetitions_never_changes_a_rank() {
        // (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1 in floating point; summed in sorted order the
        // two policies' means are the same number, so they tie.
        let scores = [0.1, 0.2, 0.3, 0.7, 0.05];
        let perms: [[usize; 5]; 3] = [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]];
        let mut first: Option<Vec<f64>> = None;
        for pa in &perms {
            for pb in &perms {
                let mut runs = Vec::new();
                for (rep, (&ia, &ib)) in pa.iter().zip(pb).enumerate() {
                    runs.push(run("d", 0, 1.0, rep as u32, "a", scores[ia]));
                    runs.push(run("d", 0, 1.0, rep as u32, "b", scores[ib]));
                }
                let t = unit_table(&runs, UnitKind::Task, FoundNothing::Worst, true);
                let r = crate::analysis::average_ranks(
                    &t.rows.iter().map(|x| x.2).collect::<Vec<_>>(),
                    true,
                );
                assert_eq!(r, vec![1.5, 1.5], "{pa:?} {pb:?}");
                match &first {
                    None => first = Some(t.rows.iter().map(|x| x.2).collect()),
                    Some(f) => assert_eq!(
                        f.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        t.rows.iter().map(|x| x.2.to_bits()).collect::<Vec<_>>()
                    ),
                }
            }
        }
    }
}
