//! HAMLET reproduced (Schmidt et al. 2020, `../shared/papers/004_366c3cb053cfed37.txt`): the Table II
//! grid on recorded traces, the parameter studies (Figs. 2, 3, 5, 6), each family at its best
//! setting compared per budget (Figs. 4, 7) and over all (task, budget) units with 95 % intervals
//! (Fig. 8), and the paper's claim tested with Wilcoxon–Holm.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;

use super::ReproduceOptions;
use crate::experiment::{RunOptions, prepare, run_with_progress};
use crate::report::{
    ReportOptions, Run, best_per_family, mean_ranks_by_budget, read_results, report_policies,
    report_results,
};

const EXPERIMENTS: [&str; 2] = ["hamlet.toml", "hamlet-lcdb.toml"];
const NON_HAMLET: [&str; 4] = ["round-robin", "ucb1-btb", "bestk-rewards", "bestk-velocity"];

/// Run both HAMLET experiments (resuming finished cells) and write `results/hamlet/<experiment>/`:
/// `all/` (every setting, parameter studies), `best/` (each family at its best setting) and
/// `claim.md`.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for name in EXPERIMENTS {
        let (exp, ts) = prepare(&opts.experiments.join(name))?;
        let results = opts.results.join(&exp.name);
        run_with_progress(
            &exp,
            &ts,
            &RunOptions {
                out: Some(results.clone()),
                threads: opts.threads,
                batch_size: None,
            },
            opts.quiet,
        )?;
        let out = opts.results.join("hamlet").join(&exp.name);
        let ro = ReportOptions::default();
        files.extend(report_results(&results, &out.join("all"), &ro)?.files);
        let res = read_results(&results)?;
        let best = best_per_family(&res.runs, res.higher_is_better);
        let ids: Vec<String> = best.iter().map(|b| b.1.clone()).collect();
        let heading = format!(
            "HAMLET on {}: each family at its best setting",
            ts.manifest.name
        );
        files.extend(report_policies(&results, &ids, &out.join("best"), &ro, &heading)?.files);
        let by_budget = budget_table(&res.runs, &best, res.higher_is_better, &res.budget_unit);
        files.push(claim(
            &out,
            &best,
            &ts.manifest.name,
            ts.tasks.len(),
            &by_budget,
        )?);
    }
    Ok(files)
}

/// A markdown table: one row per budget, one column per family at its best setting, the mean
/// rank among those settings in each cell (the row's best in bold).
fn budget_table(runs: &[Run], best: &[(String, String, f64)], higher: bool, unit: &str) -> String {
    let ids: Vec<String> = best.iter().map(|b| b.1.clone()).collect();
    let mut md = format!(
        "Mean rank per budget ({}; each family at its best setting, ranked within each (task, budget) unit; 1 = best):\n\n| budget | {} |\n|---|{}\n",
        if unit == "task" {
            "budgets as a fraction of the task's mean arm length"
        } else {
            unit
        },
        best.iter()
            .map(|b| b.0.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(best.len())
    );
    for (b, means) in mean_ranks_by_budget(runs, &ids, higher) {
        let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
        let cells: Vec<String> = means
            .iter()
            .map(|m| {
                if (m - lo).abs() < 5e-4 {
                    format!("**{m:.2}**")
                } else {
                    format!("{m:.2}")
                }
            })
            .collect();
        let _ = writeln!(md, "| {b} | {} |", cells.join(" | "));
    }
    md
}

fn claim(
    out: &std::path::Path,
    best: &[(String, String, f64)],
    set: &str,
    tasks: usize,
    by_budget: &str,
) -> Result<PathBuf> {
    let tests: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        out.join("best").join("tests.json"),
    )?)?;
    let summary = std::fs::read_to_string(out.join("best").join("summary.csv"))?;
    let mean_rank = |p: &str| -> f64 {
        summary
            .lines()
            .skip(1)
            .find(|l| l.starts_with(&format!("{},", crate::report::figures::csv_field(p))))
            .and_then(|l| l.split(',').rev().nth(5))
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let v3 = best
        .iter()
        .find(|b| b.0 == "hamlet-ucb")
        .map(|b| b.1.clone())
        .unwrap_or_default();
    let mut md = format!(
        "# HAMLET's claim on `{set}` ({tasks} tasks)\n\n\
         The paper: Variant 3 (learning-curve extrapolation + UCB bonus) ranks better than every \
         non-HAMLET policy with 95 % confidence. Each family at its best setting (best mean rank \
         among its own settings over all (task, budget) units):\n\n| family | setting | mean rank within family |\n|---|---|---|\n"
    );
    for (f, p, r) in best {
        let _ = writeln!(md, "| {f} | `{p}` | {r:.3} |");
    }
    let _ = writeln!(
        md,
        "\nWilcoxon signed-rank with Holm correction over all (task, budget) units (α = 0.05), Variant 3 = `{v3}` (mean rank {:.3}):\n\n| against | its mean rank | p (Holm) | Variant 3 better and significant |\n|---|---|---|---|",
        mean_rank(&v3)
    );
    let mut holds = true;
    for fam in NON_HAMLET {
        let Some((_, other, _)) = best.iter().find(|b| b.0 == fam) else {
            continue;
        };
        let pair = tests["wilcoxon_holm"]["pairs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| {
                (p["a"] == v3.as_str() && p["b"] == other.as_str())
                    || (p["b"] == v3.as_str() && p["a"] == other.as_str())
            });
        let (p_holm, reject) = pair.map_or((f64::NAN, false), |p| {
            (
                p["p_holm"].as_f64().unwrap_or(f64::NAN),
                p["reject"].as_bool().unwrap_or(false),
            )
        });
        let better = mean_rank(&v3) < mean_rank(other);
        let ok = reject && better;
        holds &= ok;
        let _ = writeln!(
            md,
            "| `{other}` | {:.3} | {p_holm:.3e} | {} |",
            mean_rank(other),
            if ok { "yes" } else { "no" }
        );
    }
    let _ = writeln!(md, "\n{by_budget}");
    let _ = writeln!(
        md,
        "\n**The claim {} on these traces.**\n\nFigures: `all/` holds the parameter studies (`param_study_hamlet-eps`, `param_study_hamlet-ucb`, `param_study_bestk-*`); `best/` the per-budget rank boxplots, mean ranks with 95 % t intervals, and CD diagrams.",
        if holds { "holds" } else { "does not hold" }
    );
    let path = out.join("claim.md");
    std::fs::write(&path, md)?;
    Ok(path)
}
