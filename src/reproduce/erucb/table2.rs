//! ER-UCB's Table 2 on the recorded `sklearn-random` traces: per dataset the six methods beside the
//! paper's numbers, and the Table 2 claim with its verdict.

use super::*;
use crate::experiment::Experiment;
use crate::report::{ReportOptions, read_results, report_scores};
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

pub(super) fn table2(
    exp: &Experiment,
    ts: &crate::trace::TraceSet,
    dir: &Path,
    out: &Path,
) -> Result<Vec<PathBuf>> {
    let res = read_results(dir)?;
    let paper = paper_numbers()?.table2;
    let budgets: BTreeSet<u64> = res.runs.iter().map(|r| r.budget_abs as u64).collect();
    let mut md = format!(
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
    let mut csv = String::from(
        "dataset,method,policy,v_eval,r_gt,b_alg,t_eval,paper_v_eval,paper_r_gt,paper_b_alg,paper_t_eval\n",
    );
    let mut scores = String::from("unit,policy,score\n");
    // Per dataset: (label, V-Eval, R_GT, T-Eval) of every method, for the claim.
    let mut per_dataset: Vec<DatasetMethods> = Vec::new();
    for (paper_name, dataset, paper_gt) in DATASETS {
        per_dataset.push((dataset.to_string(), Vec::new()));
        let Some(task) = ts.tasks.iter().find(|t| t.dataset == dataset) else {
            anyhow::bail!(
                "{}: Table 2 needs dataset '{dataset}', which the experiment's tasks lack",
                exp.file.display()
            );
        };
        // Ground truth from the full pools.
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
        let gt: Vec<&str> = ts
            .learners
            .iter()
            .zip(&best)
            .filter(|(_, b)| **b == top)
            .map(|(l, _)| l.as_str())
            .collect();
        // policy -> (best validation, its test score, share on GT, best learner counts) per run
        type Acc = (Vec<f64>, Vec<f64>, Vec<f64>, BTreeMap<String, usize>);
        let mut acc: BTreeMap<String, Acc> = BTreeMap::new();
        let mut beta = f64::NAN;
        for r in res.runs.iter().filter(|r| r.dataset == dataset) {
            if r.family == "er-ucb" {
                let v: serde_json::Value = serde_json::from_str(&r.params)?;
                beta = v["beta"].as_f64().unwrap_or(f64::NAN);
            }
            let e = acc.entry(r.policy.clone()).or_default();
            e.0.push(r.best_score);
            e.1.push(r.best_test_score);
            let total: f64 = r.pulls.iter().map(|p| p.1).sum();
            let on_gt: f64 = r
                .pulls
                .iter()
                .filter(|p| gt.contains(&p.0.as_str()))
                .map(|p| p.1)
                .sum();
            e.2.push(on_gt / total.max(1.0));
            *e.3.entry(r.best_learner.clone()).or_default() += 1;
        }
        let _ = writeln!(
            md,
            "## {paper_name}: `{dataset}`, β = {beta}; GT here: {} (best {top:.4}); paper's GT: {paper_gt}\n\n\
             | method | V-Eval | R_GT | B. Alg. | T-Eval | paper V-Eval | paper R_GT | paper B. Alg. | paper T-Eval |\n\
             |---|---|---|---|---|---|---|---|---|",
            gt.iter().map(|l| abbrev(l)).collect::<Vec<_>>().join(", ")
        );
        let mut rows: Vec<(String, String)> = acc.keys().map(|p| (label(p), p.clone())).collect();
        let rank = |l: &str| {
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
            .position(|x| *x == l)
            .unwrap_or(9)
        };
        rows.sort_by_key(|(l, _)| rank(l));
        for (lab, p) in rows {
            let (vs, tss, rs, b) = &acc[&p];
            let mean = |x: &[f64]| {
                let f: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
                f.iter().sum::<f64>() / f.len().max(1) as f64
            };
            let b_alg = b
                .iter()
                .max_by_key(|(_, n)| **n)
                .map_or("", |(l, _)| l.as_str());
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
            let cell = |x: f64| {
                if x.is_nan() {
                    "–".to_string()
                } else {
                    format!("{x:.4}")
                }
            };
            let _ = writeln!(
                md,
                "| {lab} | {:.4} | {} | {} | {:.4} | {} | {} | {} | {} |",
                mean(vs),
                if lab == "Joint" {
                    "–".to_string()
                } else {
                    format!("{:.4}", mean(rs))
                },
                abbrev(b_alg),
                mean(tss),
                cell(pv),
                cell(prr),
                pb,
                cell(pt)
            );
            let _ = writeln!(
                csv,
                "{dataset},{lab},{},{},{},{},{},{pv},{prr},{pb},{pt}",
                crate::report::figures::csv_field(&p),
                mean(vs),
                mean(rs),
                b_alg,
                mean(tss)
            );
            let _ = writeln!(
                scores,
                "{dataset},{},{}",
                crate::report::figures::csv_field(&lab),
                mean(vs)
            );
            if let Some(d) = per_dataset.last_mut() {
                d.1.push((lab.clone(), mean(vs), mean(rs), mean(tss)));
            }
        }
        md.push('\n');
    }
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
