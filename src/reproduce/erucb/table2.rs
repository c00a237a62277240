//! ER-UCB's Table 2 on the recorded `sklearn-random` traces: per dataset the six methods beside the
//! paper's numbers, and the Table 2 claim with its verdict.

use super::*;
use crate::experiment::Experiment;
use crate::report::{ReportOptions, read_results, report_scores};
use crate::results::Run;
use crate::trace::Status;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// (paper's dataset, ours, β, paper's ground truth) in the paper's order.
/// The paper's Table 2 datasets: (the paper's name, the dataset here, the paper's ground truth).
pub(super) const DATASETS: [(&str, &str, &str); 12] = [
    ("Balance", "balance-scale", "SGD"),
    ("Car", "car", "ET"),
    ("Chess", "chess", "Ada"),
    ("Cylinder", "cylinder-bands", "ET"),
    ("Ecoli", "ecoli", "RF"),
    ("Glass", "glass", "DT"),
    ("Messidor (pima substitutes)", "pima", "SGD"),
    ("Nursery", "nursery", "Ada"),
    ("Spambase", "spambase", "Ada"),
    ("Statlog", "statlog-segment", "Ada"),
    ("WDBC", "wdbc", "Ada"),
    ("Wilt (phoneme substitutes)", "phoneme", "Ada"),
];

/// ER-UCB's ten learners, as named in `sklearn-random`, with the paper's abbreviations.
pub(super) const LEARNERS: [(&str, &str); 10] = [
    ("decision-tree", "DT"),
    ("adaboost", "Ada"),
    ("qda", "QDA"),
    ("gaussian-nb", "GNB"),
    ("bernoulli-nb", "BNB"),
    ("knn", "KN"),
    ("extra-tree", "ET"),
    ("passive-aggressive", "PA"),
    ("random-forest", "RF"),
    ("sgd", "SGD"),
];

pub(super) fn abbrev(l: &str) -> &str {
    LEARNERS.iter().find(|x| x.0 == l).map_or(l, |x| x.1)
}

/// Table 2 from the results of `experiments/erucb-table2.toml` (one task per dataset).
/// Per dataset: each method's (label, V-Eval, R_GT, T-Eval), for the Table 2 claim.
pub(super) type DatasetMethods = (String, Vec<(String, f64, f64, f64)>);

/// How often one method is best alone, tied for the best, or behind, over the datasets, by one
/// column of the per-dataset values (ties within the report's relative tie tolerance).
pub(super) fn best_counts(
    per_dataset: &[DatasetMethods],
    method: &str,
    col: usize,
) -> (usize, usize) {
    let tol = crate::analysis::compare::Options::default().tie_tolerance;
    let value = |r: &(String, f64, f64, f64)| match col {
        1 => r.1,
        2 => r.2,
        _ => r.3,
    };
    let (mut alone, mut tied) = (0, 0);
    for (_, rows) in per_dataset {
        let Some(me) = rows.iter().find(|r| r.0 == method).map(value) else {
            continue;
        };
        let others: Vec<f64> = rows
            .iter()
            .filter(|r| r.0 != method && !value(r).is_nan())
            .map(value)
            .collect();
        let tie = |o: f64| (o - me).abs() <= tol * o.abs().max(me.abs());
        if others.iter().all(|&o| o < me && !tie(o)) {
            alone += 1;
        } else if others.iter().all(|&o| o < me || tie(o)) {
            tied += 1;
        }
    }
    (alone, tied)
}

/// `claim-table2.md`: the paper's Table 2 claims, what the replay found, and a verdict.
pub(super) fn table2_claim(per_dataset: &[DatasetMethods]) -> String {
    let n = per_dataset.len();
    let (v_alone, v_tied) = best_counts(per_dataset, "ER-UCB", 1);
    let (t_alone, t_tied) = best_counts(per_dataset, "ER-UCB", 3);
    // R_GT among the bandits that pull learners (Joint pulls none).
    let bandits: Vec<DatasetMethods> = per_dataset
        .iter()
        .map(|(d, rows)| {
            (
                d.clone(),
                rows.iter().filter(|r| r.0 != "Joint").cloned().collect(),
            )
        })
        .collect();
    let (r_alone, r_tied) = best_counts(&bandits, "ER-UCB", 2);
    let verdict = |alone: usize| {
        if 2 * alone > n {
            "**holds**"
        } else {
            "**does not hold**"
        }
    };
    format!(
        "# Table 2: the recorded `sklearn-random` traces\n\n\
         **The paper's claim** (Hu, Yu & Liao, IJCAI 2019, Table 2): on the 12 datasets, ER-UCB finds the ground-truth learner most often (highest R_GT, the share of pulls on it) and reaches the best validation accuracy (V-Eval) on most datasets; the test accuracy (T-Eval) of the chosen model follows.\n\n\
         **Rule.** A dataset counts for ER-UCB when its mean over the 20 runs is better than every other method's, beyond the report's tie tolerance (a tie for the best is counted apart, never as a win). The claim holds when ER-UCB is best alone on more than half of the {n} datasets. This is a count of independent datasets, not a test; `table2.md` has Friedman's test and the pairwise tests over the same datasets. Validation is what the methods select on; test is what a user gets, and it is shown beside.\n\n\
         | criterion | ER-UCB best alone | tied for the best | of | verdict |\n|---|---|---|---|---|\n\
         | highest R_GT (bandits only) | {r_alone} | {r_tied} | {n} | {} |\n\
         | best V-Eval (validation) | {v_alone} | {v_tied} | {n} | {} |\n\
         | best T-Eval (test, same model) | {t_alone} | {t_tied} | {n} | {} |\n",
        verdict(r_alone),
        verdict(v_alone),
        verdict(t_alone)
    )
}

/// The learners whose whole pool on `task` holds the best validation accuracy (the paper's
/// ground truth), with that accuracy; failed evaluations are skipped.
fn ground_truth<'a>(learners: &'a [String], task: &crate::trace::Task) -> (Vec<&'a str>, f64) {
    let best: Vec<f64> = task
        .arms
        .iter()
        .map(|a| {
            a.score
                .iter()
                .zip(&a.status)
                .filter(|(_, s)| **s == Status::Ok)
                .map(|(x, _)| *x)
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    let top = best.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let gt = learners
        .iter()
        .zip(&best)
        .filter(|(_, b)| **b == top)
        .map(|(l, _)| l.as_str())
        .collect();
    (gt, top)
}

/// One policy's runs on one dataset: per run the best validation accuracy, its test accuracy and
/// the share of pulls on the ground truth; and how often each learner gave the best evaluation.
#[derive(Default)]
struct MethodRuns {
    v_eval: Vec<f64>,
    t_eval: Vec<f64>,
    r_gt: Vec<f64>,
    best_learner: BTreeMap<String, usize>,
}

impl MethodRuns {
    /// Every policy's runs on `dataset`, by policy id, with ER-UCB's β (NaN without ER-UCB).
    fn on(runs: &[Run], dataset: &str, gt: &[&str]) -> Result<(BTreeMap<String, Self>, f64)> {
        let mut acc: BTreeMap<String, Self> = BTreeMap::new();
        let mut beta = f64::NAN;
        for r in runs.iter().filter(|r| r.dataset == dataset) {
            if r.family == "er-ucb" {
                let v: serde_json::Value = serde_json::from_str(&r.params)?;
                beta = v["beta"].as_f64().unwrap_or(f64::NAN);
            }
            let e = acc.entry(r.policy.clone()).or_default();
            e.v_eval.push(r.best_score);
            e.t_eval.push(r.best_test_score);
            let total: f64 = r.pulls.iter().map(|p| p.1).sum();
            let on_gt: f64 = r
                .pulls
                .iter()
                .filter(|p| gt.contains(&p.0.as_str()))
                .map(|p| p.1)
                .sum();
            e.r_gt.push(on_gt / total.max(1.0));
            *e.best_learner.entry(r.best_learner.clone()).or_default() += 1;
        }
        Ok((acc, beta))
    }

    /// The learner that most often gave the best evaluation ("" without runs).
    fn b_alg(&self) -> &str {
        self.best_learner
            .iter()
            .max_by_key(|(_, n)| **n)
            .map_or("", |(l, _)| l.as_str())
    }
}

/// The mean of the values that are not NaN (0 when none is).
fn mean_of_finite(x: &[f64]) -> f64 {
    let f: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    f.iter().sum::<f64>() / f.len().max(1) as f64
}

/// Where a method's row goes in the paper's order (unknown labels last).
fn paper_order(label: &str) -> usize {
    [
        "ER-UCB",
        "C-UCB",
        "ε-Greedy",
        "Softmax",
        "Softmax τ=0.5 (authors' script)",
        "Random",
        "Joint",
    ]
    .iter()
    .position(|x| *x == label)
    .unwrap_or(9)
}

/// What one dataset's section writes to: `table2.md`, `table2.csv` and the scores the report
/// ranks.
struct Table2Writing {
    md: String,
    csv: String,
    scores: String,
}

impl Table2Writing {
    /// One row per method of `dataset`, in the paper's order, beside the paper's numbers; returns
    /// each method's (label, V-Eval, R_GT, T-Eval) for the claim.
    fn rows(
        &mut self,
        dataset: &str,
        acc: &BTreeMap<String, MethodRuns>,
        paper: &[Table2Row],
    ) -> Vec<(String, f64, f64, f64)> {
        let mut rows: Vec<(String, &String)> = acc.keys().map(|p| (label(p), p)).collect();
        rows.sort_by_key(|(l, _)| paper_order(l));
        let cell = |x: f64| {
            if x.is_nan() {
                "–".to_string()
            } else {
                format!("{x:.4}")
            }
        };
        let mut claim = Vec::new();
        for (lab, p) in rows {
            let m = &acc[p];
            let (v, r, t) = (
                mean_of_finite(&m.v_eval),
                mean_of_finite(&m.r_gt),
                mean_of_finite(&m.t_eval),
            );
            let b_alg = m.b_alg();
            let pr = paper
                .iter()
                .find(|x| x.dataset == dataset && x.method == lab);
            let (pv, prr, pb, pt) = pr.map_or((f64::NAN, f64::NAN, "", f64::NAN), |x| {
                (
                    x.v_eval,
                    x.r.unwrap_or(f64::NAN),
                    x.best_learner.as_str(),
                    x.t_eval,
                )
            });
            let _ = writeln!(
                self.md,
                "| {lab} | {v:.4} | {} | {} | {t:.4} | {} | {} | {} | {} |",
                if lab == "Joint" {
                    "–".to_string()
                } else {
                    format!("{r:.4}")
                },
                abbrev(b_alg),
                cell(pv),
                cell(prr),
                pb,
                cell(pt)
            );
            let _ = writeln!(
                self.csv,
                "{dataset},{lab},{},{v},{r},{b_alg},{t},{pv},{prr},{pb},{pt}",
                crate::report::figures::csv_field(p),
            );
            let _ = writeln!(
                self.scores,
                "{dataset},{},{v}",
                crate::report::figures::csv_field(&lab),
            );
            claim.push((lab, v, r, t));
        }
        self.md.push('\n');
        claim
    }
}

pub(super) fn table2(
    exp: &Experiment,
    ts: &crate::trace::TraceSet,
    dir: &Path,
    out: &Path,
) -> Result<Vec<PathBuf>> {
    let res = read_results(dir)?;
    let paper = paper_numbers()?.table2;
    let budgets: BTreeSet<u64> = res.runs.iter().map(|r| r.budget_abs as u64).collect();
    let md = format!(
        "# ER-UCB Table 2 reproduced on the recorded `{}` traces\n\n\
         From `{}` ({}). Each dataset: ER-UCB's ten learners, each with a pool of recorded \
         random-search evaluations; budget {} pulls per run, {} runs with permuted trial orders, \
         failed evaluations skipped (ER-UCB's code); β per dataset as the experiment file sets it. \
         Ground truth (GT) = the learner(s) whose whole pool holds the best validation accuracy. \
         V-Eval / T-Eval = mean best validation / its test accuracy; R_GT = share of pulls on GT; \
         B. Alg. = most frequent learner of the best evaluation.\n\n",
        ts.manifest.name,
        exp.file.display(),
        exp.description,
        budgets
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        exp.repetitions
    );
    let mut w = Table2Writing {
        md,
        csv: String::from(
            "dataset,method,policy,v_eval,r_gt,b_alg,t_eval,paper_v_eval,paper_r_gt,paper_b_alg,paper_t_eval\n",
        ),
        scores: String::from("unit,policy,score\n"),
    };
    // Per dataset: (label, V-Eval, R_GT, T-Eval) of every method, for the claim.
    let mut per_dataset: Vec<DatasetMethods> = Vec::new();
    for (paper_name, dataset, paper_gt) in DATASETS {
        let Some(task) = ts.tasks.iter().find(|t| t.dataset == dataset) else {
            anyhow::bail!(
                "{}: Table 2 needs dataset '{dataset}', which the experiment's tasks lack",
                exp.file.display()
            );
        };
        let (gt, top) = ground_truth(&ts.learners, task);
        let (acc, beta) = MethodRuns::on(&res.runs, dataset, &gt)?;
        let _ = writeln!(
            w.md,
            "## {paper_name}: `{dataset}`, β = {beta}; GT here: {} (best {top:.4}); paper's GT: {paper_gt}\n\n\
             | method | V-Eval | R_GT | B. Alg. | T-Eval | paper V-Eval | paper R_GT | paper B. Alg. | paper T-Eval |\n\
             |---|---|---|---|---|---|---|---|---|",
            gt.iter().map(|l| abbrev(l)).collect::<Vec<_>>().join(", ")
        );
        per_dataset.push((dataset.to_string(), w.rows(dataset, &acc, &paper)));
    }
    let Table2Writing {
        mut md,
        csv,
        scores,
    } = w;
    let scores_path = out.join("table2_scores.csv");
    std::fs::write(&scores_path, scores)?;
    let rep = report_scores(
        &scores_path,
        &Default::default(),
        false,
        &out.join("table2-report"),
        &ReportOptions::default(),
    )?;
    md.push_str("## Ranks and tests across the 12 datasets (V-Eval)\n\n");
    md.push_str(&crate::report::tests_in_words(&rep.comparison).replace('\n', "\n\n"));
    md.push_str("\nFull report: [table2-report/report.md](table2-report/report.md).\n");
    std::fs::write(out.join("table2.md"), md)?;
    std::fs::write(out.join("table2.csv"), csv)?;
    std::fs::write(out.join("claim-table2.md"), table2_claim(&per_dataset))?;
    let mut files = vec![
        out.join("table2.md"),
        out.join("table2.csv"),
        out.join("claim-table2.md"),
        scores_path,
    ];
    files.extend(rep.files);
    Ok(files)
}
