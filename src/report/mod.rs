//! `banditbench report`: statistics, tables and figures from a results folder or a scores CSV.
//!
//! Output files (a contract; see the README): `ranks.csv`, `summary.csv`, `tests.json`,
//! `report.md`, `report.tex`, and figures as SVG + PNG + CSV.

pub mod figures;
mod input;

pub use crate::analysis::{FoundNothing, UnitKind};
pub use crate::results::{Results, Run, anytime_curves, read_results};
pub use input::{ScoresFormat, read_scores, read_scores_csv};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use crate::analysis::average_ranks_tol;
use crate::analysis::compare::{Comparison, Options, ScoreTable, compare};
use crate::analysis::stats::{CiKind, mean_sd, t_quantile};
use crate::analysis::units::{FoundCount, check_units, unit_table};
use figures::{Allocation, Anytime, BoxPanels, CdDiagram, MeanRankFigure, save};

#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub stats: Options,
    /// `None`: the most independent unit the results allow (the dataset when there are two).
    pub unit: Option<UnitKind>,
    pub found_nothing: FoundNothing,
    pub per_budget: bool,
    /// Grid points of the anytime curves (fractions of the budget).
    pub anytime_points: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            stats: Options::default(),
            unit: None,
            found_nothing: FoundNothing::Worst,
            per_budget: false,
            anytime_points: 50,
        }
    }
}

/// What a report wrote, and the comparison it wrote it from.
#[derive(Clone, Debug)]
pub struct ReportSummary {
    pub out: PathBuf,
    pub files: Vec<PathBuf>,
    pub text: String,
    pub comparison: Comparison,
}

fn fmt_p(p: f64) -> String {
    if p.is_nan() {
        "undefined".into()
    } else if p == 0.0 {
        "< 1e-300".into()
    } else if p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}

/// "p = 0.0123", or "p < 1e-300" for a p-value below the smallest the code resolves.
fn p_is(p: f64) -> String {
    if p == 0.0 {
        "p < 1e-300".into()
    } else {
        format!("p = {}", fmt_p(p))
    }
}

fn ci_name(kind: CiKind, alpha: f64) -> String {
    match kind {
        CiKind::T95 => "95 % t interval".into(),
        CiKind::Z95 => "95 % normal interval".into(),
        CiKind::Se => "± 1 standard error".into(),
        CiKind::Bootstrap => format!("{:.0} % percentile bootstrap", 100.0 * (1.0 - alpha)),
    }
}

/// The options as echoed into tests.json and the report.
fn options_json(c: &Comparison, extra: &[(&str, serde_json::Value)]) -> serde_json::Value {
    let o = &c.options;
    let mut m = serde_json::Map::new();
    m.insert("alpha".into(), json!(o.alpha));
    m.insert("ci".into(), json!(o.ci.as_str()));
    m.insert("bootstrap_samples".into(), json!(o.bootstrap_samples));
    m.insert("seed".into(), json!(o.seed));
    m.insert("tie_tolerance".into(), json!(o.tie_tolerance));
    m.insert("zero_method".into(), json!(o.zero_method.as_str()));
    m.insert("missing".into(), json!(o.missing.as_str()));
    m.insert(
        "direction".into(),
        json!(if c.table.higher_is_better {
            "maximize"
        } else {
            "minimize"
        }),
    );
    for (k, v) in extra {
        m.insert((*k).into(), v.clone());
    }
    serde_json::Value::Object(m)
}

/// What tests.json says about the units: kind, counts, what was averaged, independence, and
/// found-nothing counts per policy.
fn units_json(c: &Comparison, units: Option<&crate::analysis::UnitTable>) -> serde_json::Value {
    match units {
        None => json!({"kind": "as given", "n_units": c.table.units.len()}),
        Some(t) => json!({
            "kind": t.kind.as_str(),
            "n_units": t.n_units,
            "n_datasets": t.n_datasets,
            "averaged_over": t.kind.averaged_over(),
            "cells_per_score": [t.cells_per_score.0, t.cells_per_score.1],
            "independent": !t.shares_datasets(),
            "found_nothing_rule": t.rule.as_str(),
            "found_nothing": t.found.iter().map(|(p, f)| (p.clone(), json!({"cells": f.cells, "found_nothing": f.found_nothing}))).collect::<serde_json::Map<_, _>>(),
        }),
    }
}

fn tests_json(
    c: &Comparison,
    options: serde_json::Value,
    notes: &[String],
    units: serde_json::Value,
) -> serde_json::Value {
    let pols = &c.table.policies;
    let pairwise: serde_json::Map<String, serde_json::Value> = pols
        .iter()
        .enumerate()
        .map(|(a, pa)| {
            let inner: serde_json::Map<String, serde_json::Value> = pols
                .iter()
                .enumerate()
                .map(|(b, pb)| (pb.clone(), json!(c.nemenyi.pairwise_p[a][b])))
                .collect();
            (pa.clone(), serde_json::Value::Object(inner))
        })
        .collect();
    let num = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
    json!({
        "friedman": {"statistic": num(c.friedman.statistic), "p_value": num(c.friedman.p_value), "df": c.friedman.df},
        "iman_davenport": {"statistic": num(c.iman_davenport.statistic), "p_value": num(c.iman_davenport.p_value),
                           "df1": c.iman_davenport.df1, "df2": c.iman_davenport.df2},
        "nemenyi": {"alpha": c.nemenyi.alpha, "q_alpha": c.nemenyi.q_alpha, "cd": c.nemenyi.cd,
                    "pairwise_p": serde_json::Value::Object(pairwise)},
        "wilcoxon_holm": {
            "zero_method": c.options.zero_method.as_str(),
            "alpha": c.options.alpha,
            "pairs": c.wilcoxon.iter().map(|p| json!({
                "a": p.a, "b": p.b, "statistic": p.statistic, "p_value": p.p_value,
                "p_holm": p.p_holm, "reject": p.reject, "method": p.method})).collect::<Vec<_>>()
        },
        "bayesian_signed_rank": if c.options.bayes_rope.is_some() { json!({
            "method": "Benavoli et al. 2014/2017, baycomp's SignedRankTest semantics; left = a better by more than the rope",
            "rope": c.options.bayes_rope, "prior": c.options.bayes_prior,
            "samples": c.options.bayes_samples, "seed": c.options.seed, "decide_at": 0.95,
            "pairs": c.bayesian.iter().map(|p| json!({
                "a": p.a, "b": p.b, "p_left": p.result.p_left, "p_rope": p.result.p_rope,
                "p_right": p.result.p_right, "decision": p.decision()})).collect::<Vec<_>>()
        }) } else { json!(null) },
        "n_units": c.table.units.len(),
        "n_policies": c.table.policies.len(),
        "units": units,
        "options": options,
        "notes": notes,
    })
}

/// The tests in words, as they go into report.md.
pub fn tests_in_words(c: &Comparison) -> String {
    let a = c.options.alpha;
    let mut s = String::new();
    let fr = &c.friedman;
    let _ = writeln!(
        s,
        "Friedman's test (tie-corrected) over {} units and {} policies: χ²({}) = {:.3}, {}, so the policies' ranks {} at α = {a}.",
        c.table.units.len(),
        c.table.policies.len(),
        fr.df,
        fr.statistic,
        p_is(fr.p_value),
        if fr.p_value <= a {
            "differ significantly"
        } else {
            "do not differ significantly"
        }
    );
    let id = &c.iman_davenport;
    let _ = writeln!(
        s,
        "Iman–Davenport: F({}, {}) = {:.3}, {}.",
        id.df1,
        id.df2,
        id.statistic,
        p_is(id.p_value)
    );
    let _ = writeln!(
        s,
        "Nemenyi: q_α = {:.4} (studentized range, k = {}, ∞ df, / √2), critical difference CD = {:.4}; two policies whose mean ranks differ by more than CD differ significantly.",
        c.nemenyi.q_alpha,
        c.table.policies.len(),
        c.nemenyi.cd
    );
    let rejected = c.wilcoxon.iter().filter(|p| p.reject).count();
    let methods: BTreeSet<&str> = c.wilcoxon.iter().map(|p| p.method).collect();
    let _ = writeln!(
        s,
        "Wilcoxon signed-rank tests (zero method {}, {}) on all {} pairs with Holm's correction: {} pair(s) differ significantly at α = {a}.",
        c.options.zero_method.as_str(),
        methods.into_iter().collect::<Vec<_>>().join(" / "),
        c.wilcoxon.len(),
        rejected
    );
    if fr.p_value > a {
        let _ = writeln!(
            s,
            "As the omnibus test does not reject, post-hoc differences should not be claimed (Demšar 2006)."
        );
    }
    if let Some(rope) = c.options.bayes_rope {
        let count = |f: &dyn Fn(&crate::analysis::compare::BayesPair) -> bool| {
            c.bayesian.iter().filter(|p| f(p)).count()
        };
        let _ = writeln!(
            s,
            "Bayesian signed-rank tests (Benavoli et al. 2017; rope ±{rope}, prior {}, {} posterior samples) on all {} pairs: {} with one policy better and {} practically equivalent with posterior probability ≥ 0.95, {} undecided.",
            c.options.bayes_prior,
            c.options.bayes_samples,
            c.bayesian.len(),
            count(&|p| p.result.p_left >= 0.95 || p.result.p_right >= 0.95),
            count(&|p| p.result.p_rope >= 0.95),
            count(&|p| p.decision() == "undecided"),
        );
    }
    s
}

struct Written {
    files: Vec<PathBuf>,
    figures: Vec<(String, String)>,
}

/// ranks.csv, summary.csv, tests.json, and the figures every input can have.
fn write_core(
    c: &Comparison,
    out: &Path,
    options: serde_json::Value,
    notes: &[String],
    units: Option<&crate::analysis::UnitTable>,
) -> Result<Written> {
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let mut files = Vec::new();
    let mut ranks = String::from("unit,policy,score,rank\n");
    for (u, (row, rrow)) in c
        .table
        .units
        .iter()
        .zip(c.table.scores.iter().zip(&c.ranks))
    {
        for (p, (s, r)) in c.table.policies.iter().zip(row.iter().zip(rrow)) {
            let _ = writeln!(
                ranks,
                "{},{},{s},{r}",
                figures::csv_field(u),
                figures::csv_field(p)
            );
        }
    }
    std::fs::write(out.join("ranks.csv"), ranks)?;
    files.push(out.join("ranks.csv"));
    let mut summary = String::from(
        "policy,n,mean_rank,sd_rank,ci_low,ci_high,ci_kind,mean_score,cells,found_nothing\n",
    );
    for i in c.order() {
        let s = &c.summary[i];
        let f: Option<&FoundCount> = units.and_then(|t| t.found.get(&s.policy));
        let _ = writeln!(
            summary,
            "{},{},{},{},{},{},{},{},{},{}",
            figures::csv_field(&s.policy),
            s.n,
            s.mean_rank,
            s.sd_rank,
            s.ci_low,
            s.ci_high,
            c.options.ci.as_str(),
            s.mean_score,
            f.map_or(String::new(), |f| f.cells.to_string()),
            f.map_or(String::new(), |f| f.found_nothing.to_string()),
        );
    }
    std::fs::write(out.join("summary.csv"), summary)?;
    files.push(out.join("summary.csv"));
    let tj = tests_json(c, options, notes, units_json(c, units));
    std::fs::write(out.join("tests.json"), serde_json::to_string_pretty(&tj)?)?;
    files.push(out.join("tests.json"));

    let order = c.order();
    let k = c.table.policies.len();
    let n = c.table.units.len();
    let mut figs = Vec::new();
    if let Some(rope) = c.options.bayes_rope {
        // Pairs in mean-rank order of their first policy, then of the second.
        let pos: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(r, &i)| (c.table.policies[i].as_str(), r))
            .collect();
        let mut rows: Vec<(String, String, f64, f64, f64)> = c
            .bayesian
            .iter()
            .map(|p| {
                let (l, r) = (p.result.p_left, p.result.p_right);
                if pos[p.a.as_str()] <= pos[p.b.as_str()] {
                    (p.a.clone(), p.b.clone(), l, p.result.p_rope, r)
                } else {
                    (p.b.clone(), p.a.clone(), r, p.result.p_rope, l)
                }
            })
            .collect();
        rows.sort_by_key(|r| (pos[r.0.as_str()], pos[r.1.as_str()]));
        let bb = figures::BayesBars {
            title: format!(
                "Bayesian signed-rank test, rope ±{rope} ({n} units, {} samples)",
                c.options.bayes_samples
            ),
            rows,
        };
        files.extend(save(&bb, out, "bayes_signed_rank")?);
        figs.push((
            "bayes_signed_rank".into(),
            "Bayesian signed-rank test per pair: posterior probability that the left policy is better by more than the rope (blue), that the two are within the rope (grey), that the right one is better (orange).".into(),
        ));
    }
    let mr = MeanRankFigure {
        title: format!(
            "Mean rank over {n} units, {}",
            ci_name(c.options.ci, c.options.alpha)
        ),
        rows: order
            .iter()
            .map(|&i| {
                let s = &c.summary[i];
                (s.policy.clone(), s.mean_rank, s.ci_low, s.ci_high)
            })
            .collect(),
        k,
        x_desc: "mean rank (1 = best)".into(),
    };
    files.extend(save(&mr, out, "mean_rank")?);
    figs.push((
        "mean_rank".to_string(),
        "Mean rank per policy with its interval (HAMLET Fig. 8 style).".to_string(),
    ));
    let rows: Vec<(String, f64)> = order
        .iter()
        .map(|&i| (c.summary[i].policy.clone(), c.summary[i].mean_rank))
        .collect();
    let cd = CdDiagram {
        title: format!(
            "Nemenyi critical difference (α = {}, CD = {:.3}, n = {n})",
            c.options.alpha, c.nemenyi.cd
        ),
        rows: rows.clone(),
        k,
        groups: c.nemenyi_groups(),
        cd: Some(c.nemenyi.cd),
    };
    files.extend(save(&cd, out, "cd_nemenyi")?);
    figs.push((
        "cd_nemenyi".into(),
        "Critical-difference diagram: bars join policies within the Nemenyi critical difference."
            .into(),
    ));
    let wh = CdDiagram {
        title: format!(
            "Wilcoxon signed-rank with Holm correction (α = {}, {} zeros)",
            c.options.alpha,
            c.options.zero_method.as_str()
        ),
        rows,
        k,
        groups: c.wilcoxon_groups(),
        cd: None,
    };
    files.extend(save(&wh, out, "cd_wilcoxon_holm")?);
    figs.push((
        "cd_wilcoxon_holm".into(),
        "Bars join policies of which no pair is significantly different by Wilcoxon–Holm.".into(),
    ));
    Ok(Written {
        files,
        figures: figs,
    })
}

fn summary_table_md(c: &Comparison, units: Option<&crate::analysis::UnitTable>) -> String {
    let mut s = format!(
        "| # | policy | n | mean rank | sd | {} | mean score | found nothing |\n|---|---|---|---|---|---|---|---|\n",
        ci_name(c.options.ci, c.options.alpha)
    );
    for (pos, i) in c.order().into_iter().enumerate() {
        let r = &c.summary[i];
        let found = units
            .and_then(|t| t.found.get(&r.policy))
            .map_or("–".to_string(), |f| {
                format!("{} of {} cells", f.found_nothing, f.cells)
            });
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {:.3} | {:.3} | [{:.3}, {:.3}] | {:.4} | {found} |",
            pos + 1,
            r.policy,
            r.n,
            r.mean_rank,
            r.sd_rank,
            r.ci_low,
            r.ci_high,
            r.mean_score
        );
    }
    s
}

fn pairs_table_md(c: &Comparison) -> String {
    let mut s = String::from(
        "| a | b | statistic | p | p (Holm) | method | differ |\n|---|---|---|---|---|---|---|\n",
    );
    for p in &c.wilcoxon {
        let _ = writeln!(
            s,
            "| `{}` | `{}` | {} | {} | {} | {} | {} |",
            p.a,
            p.b,
            p.statistic,
            fmt_p(p.p_value),
            fmt_p(p.p_holm),
            p.method,
            if p.reject { "yes" } else { "no" }
        );
    }
    s
}

fn tex_escape(s: &str) -> String {
    s.replace('\\', "\\textbackslash{}")
        .replace('_', "\\_")
        .replace('%', "\\%")
        .replace('&', "\\&")
        .replace('#', "\\#")
        .replace('{', "\\{")
        .replace('}', "\\}")
}

fn write_documents(
    c: &Comparison,
    out: &Path,
    heading: &str,
    intro: &str,
    notes: &[String],
    figs: &[(String, String)],
    units: Option<&crate::analysis::UnitTable>,
) -> Result<Vec<PathBuf>> {
    let mut md = format!("# {heading}\n\n{intro}\n\n");
    if !notes.is_empty() {
        md.push_str("Notes on the data:\n\n");
        for n in notes.iter().take(50) {
            let _ = writeln!(md, "- {n}");
        }
        if notes.len() > 50 {
            let _ = writeln!(md, "- ... and {} more", notes.len() - 50);
        }
        md.push('\n');
    }
    md.push_str("## Ranking\n\n");
    md.push_str(&summary_table_md(c, units));
    md.push_str("\n## Tests\n\n");
    md.push_str(&tests_in_words(c).replace('\n', "\n\n"));
    md.push_str("## Figures\n\n");
    for (f, caption) in figs {
        let _ = writeln!(
            md,
            "![{caption}]({f}.png)\n\n*{caption}* ([SVG]({f}.svg), [data]({f}.csv))\n"
        );
    }
    md.push_str("## Wilcoxon–Holm pairs\n\n");
    md.push_str(&pairs_table_md(c));
    std::fs::write(out.join("report.md"), md)?;

    let mut tex = String::from(
        "% Generated by banditbench report\n\\begin{table}[t]\n\\centering\n\\begin{tabular}{rlrrrc}\n\\hline\n# & policy & mean rank & sd & interval & mean score \\\\\n\\hline\n",
    );
    for (pos, i) in c.order().into_iter().enumerate() {
        let r = &c.summary[i];
        let _ = writeln!(
            tex,
            "{} & \\texttt{{{}}} & {:.3} & {:.3} & [{:.3}, {:.3}] & {:.4} \\\\",
            pos + 1,
            tex_escape(&r.policy),
            r.mean_rank,
            r.sd_rank,
            r.ci_low,
            r.ci_high,
            r.mean_score
        );
    }
    let _ = write!(
        tex,
        "\\hline\n\\end{{tabular}}\n\\caption{{{} Mean ranks over {} units ({}).}}\n\\end{{table}}\n\n",
        tex_escape(heading),
        c.table.units.len(),
        tex_escape(&ci_name(c.options.ci, c.options.alpha))
    );
    for line in tests_in_words(c).lines() {
        let _ = writeln!(tex, "{}\n", tex_escape(line));
    }
    for (f, caption) in figs {
        let _ = writeln!(
            tex,
            "\\begin{{figure}}[t]\n\\centering\n\\includegraphics[width=\\linewidth]{{{f}.png}}\n\\caption{{{}}}\n\\end{{figure}}\n",
            tex_escape(caption)
        );
    }
    std::fs::write(out.join("report.tex"), tex)?;
    Ok(vec![out.join("report.md"), out.join("report.tex")])
}

/// Report on any long table of scores (unit, policy, score).
pub fn report_scores(
    csv: &Path,
    format: &ScoresFormat,
    minimize: bool,
    out: &Path,
    opts: &ReportOptions,
) -> Result<ReportSummary> {
    let (rows, mut notes) = read_scores(csv, format)?;
    let (table, more) = ScoreTable::from_rows(&rows, !minimize, opts.stats.missing, false)
        .with_context(|| format!("{}", csv.display()))?;
    notes.extend(more);
    let c = compare(table, &opts.stats);
    let options = options_json(&c, &[("input", json!(csv.display().to_string()))]);
    let mut w = write_core(&c, out, options, &notes, None)?;
    // One panel of rank boxplots over all units.
    let order = c.order();
    let bp = BoxPanels {
        title: format!("Ranks over {} units", c.table.units.len()),
        x_desc: "rank (1 = best)".into(),
        labels: order.iter().map(|&i| c.table.policies[i].clone()).collect(),
        panels: vec![(
            "all units".into(),
            order
                .iter()
                .map(|&i| c.ranks.iter().map(|r| r[i]).collect())
                .collect(),
        )],
        x_range: (0.5, c.table.policies.len() as f64 + 0.5),
    };
    w.files.extend(save(&bp, out, "rank_boxplots")?);
    w.figures.push((
        "rank_boxplots".into(),
        "Distribution of each policy's rank over the units.".into(),
    ));
    let intro = format!(
        "Scores from `{}` ({}), {} units × {} policies.",
        csv.display(),
        if minimize {
            "lower is better"
        } else {
            "higher is better"
        },
        c.table.units.len(),
        c.table.policies.len()
    );
    w.files.extend(write_documents(
        &c,
        out,
        "banditbench report",
        &intro,
        &notes,
        &w.figures,
        None,
    )?);
    Ok(ReportSummary {
        out: out.to_path_buf(),
        files: w.files,
        text: tests_in_words(&c),
        comparison: c,
    })
}

/// Ranks of `policies` within each unit of `kind` restricted to one budget, grouped by budget:
/// `budget -> policy -> ranks`. Scores come from the one unit-table builder.
fn ranks_by_budget(
    runs: &[Run],
    policies: &[String],
    higher: bool,
    kind: UnitKind,
    rule: FoundNothing,
    tol: f64,
) -> BTreeMap<String, Vec<Vec<f64>>> {
    let keep: BTreeSet<&String> = policies.iter().collect();
    let mut by_budget: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for r in runs.iter().filter(|r| keep.contains(&r.policy)) {
        by_budget
            .entry(format!("{}", r.budget))
            .or_default()
            .push(r.clone());
    }
    let pidx: BTreeMap<&String, usize> = policies.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let mut out = BTreeMap::new();
    for (b, rs) in by_budget {
        let table = unit_table(&rs, kind, rule, higher);
        let mut units: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for (u, p, s) in table.rows {
            units
                .entry(u)
                .or_insert_with(|| vec![f64::NAN; policies.len()])[pidx[&p]] = s;
        }
        let mut per_policy = vec![Vec::new(); policies.len()];
        for scores in units.values() {
            let r = average_ranks_tol(scores, higher, tol);
            for (i, x) in r.into_iter().enumerate() {
                per_policy[i].push(x);
            }
        }
        out.insert(b, per_policy);
    }
    out
}

/// Mean rank of each of `policies` per budget (ranked within each unit of `kind` at that budget,
/// ties within the default tolerance averaged), budgets in increasing order: the numbers behind
/// HAMLET's Figs. 4 and 7.
pub fn mean_ranks_by_budget(
    runs: &[Run],
    policies: &[String],
    higher: bool,
    kind: UnitKind,
) -> Vec<(f64, Vec<f64>)> {
    let tol = crate::analysis::compare::DEFAULT_TIE_TOLERANCE;
    sort_budgets(ranks_by_budget(
        runs,
        policies,
        higher,
        kind,
        FoundNothing::Worst,
        tol,
    ))
    .into_iter()
    .map(|(b, per_policy)| {
        let means = per_policy
            .iter()
            .map(|v| v.iter().sum::<f64>() / v.len().max(1) as f64)
            .collect();
        (b.parse().unwrap_or(f64::NAN), means)
    })
    .collect()
}

/// A panel caption for a budget: at most four significant digits, and the unit spelt out
/// ("budget 0.04167 × mean arm length" rather than "budget 0.041667 task").
fn budget_caption(budget: &str, unit: &str) -> String {
    let b = budget
        .parse::<f64>()
        .map(short_number)
        .unwrap_or_else(|_| budget.to_string());
    match unit {
        "task" => format!("budget {b} × mean arm length"),
        "seconds" => format!("budget {b} s"),
        "" => format!("budget {b}"),
        u => format!("budget {b} {u}"),
    }
}

/// At most four significant digits, without trailing zeros.
fn short_number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Row labels for a parameter study: each member's parameters that differ across the family
/// ("rho=0.1"), and the parameters all members share ("bonus=standard, start_slices=1").
fn varying_parameters(family: &str, members: &[String]) -> (Vec<String>, String) {
    let params: Vec<Vec<&str>> = members
        .iter()
        .map(|m| {
            m.strip_prefix(family)
                .unwrap_or(m)
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(", ")
                .filter(|p| !p.is_empty())
                .collect()
        })
        .collect();
    let shared: Vec<&str> = params
        .first()
        .map(|first| {
            first
                .iter()
                .copied()
                .filter(|p| params.iter().all(|q| q.contains(p)))
                .collect()
        })
        .unwrap_or_default();
    let labels = params
        .iter()
        .zip(members)
        .map(|(ps, m)| {
            let own: Vec<&str> = ps.iter().copied().filter(|p| !shared.contains(p)).collect();
            if own.is_empty() {
                m.clone()
            } else {
                own.join(", ")
            }
        })
        .collect();
    (labels, shared.join(", "))
}

fn sort_budgets(m: BTreeMap<String, Vec<Vec<f64>>>) -> Vec<(String, Vec<Vec<f64>>)> {
    let mut v: Vec<(String, Vec<Vec<f64>>)> = m.into_iter().collect();
    v.sort_by(|a, b| {
        a.0.parse::<f64>()
            .unwrap_or(0.0)
            .total_cmp(&b.0.parse::<f64>().unwrap_or(0.0))
    });
    v
}

/// Report on a results folder written by `banditbench run`.
pub fn report_results(dir: &Path, out: &Path, opts: &ReportOptions) -> Result<ReportSummary> {
    report_loaded(dir, &read_results(dir)?, out, opts)
}

/// `report_results` on results already read from `dir`.
pub fn report_loaded(
    dir: &Path,
    res: &Results,
    out: &Path,
    opts: &ReportOptions,
) -> Result<ReportSummary> {
    let unit = opts
        .unit
        .unwrap_or_else(|| UnitKind::most_independent(&res.runs));
    let mut summary = report_runs(dir, res, &res.runs, out, opts, unit, "banditbench report")?;
    if opts.per_budget {
        let budgets: BTreeSet<String> = res.runs.iter().map(|r| format!("{}", r.budget)).collect();
        for b in budgets {
            let runs: Vec<Run> = res
                .runs
                .iter()
                .filter(|r| format!("{}", r.budget) == b)
                .cloned()
                .collect();
            let sub = out.join(format!("budget-{b}"));
            let s = report_runs(
                dir,
                res,
                &runs,
                &sub,
                opts,
                if unit == UnitKind::TaskBudget {
                    UnitKind::Task
                } else {
                    unit
                },
                &format!("Budget {b} {}", res.budget_unit),
            )?;
            summary.files.extend(s.files);
        }
    }
    Ok(summary)
}

/// Report on a results folder restricted to some policies (e.g. each family's best setting).
pub fn report_policies(
    dir: &Path,
    res: &Results,
    policies: &[String],
    out: &Path,
    opts: &ReportOptions,
    heading: &str,
) -> Result<ReportSummary> {
    let keep: BTreeSet<&String> = policies.iter().collect();
    let runs: Vec<Run> = res
        .runs
        .iter()
        .filter(|r| keep.contains(&r.policy))
        .cloned()
        .collect();
    let unit = opts
        .unit
        .unwrap_or_else(|| UnitKind::most_independent(&runs));
    report_runs(dir, res, &runs, out, opts, unit, heading)
}

/// The policies of each family in `runs`, sorted.
fn families_of(runs: &[Run]) -> BTreeMap<&str, BTreeSet<&String>> {
    let mut families: BTreeMap<&str, BTreeSet<&String>> = BTreeMap::new();
    for r in runs {
        families
            .entry(r.family.as_str())
            .or_default()
            .insert(&r.policy);
    }
    families
}

/// For each policy family, its setting with the best mean rank among the family's settings over
/// (task, budget) units (how HAMLET picked the parameters it compared). Returns (family, policy,
/// mean rank within the family). A selection, not a test: choose on one trace set and test on
/// another (see `reproduce hamlet`).
pub fn best_per_family(runs: &[Run], higher: bool) -> Vec<(String, String, f64)> {
    let families = families_of(runs);
    let mut out = Vec::new();
    for (fam, members) in families {
        let members: Vec<String> = members.into_iter().cloned().collect();
        if members.len() == 1 {
            out.push((fam.to_string(), members[0].clone(), 1.0));
            continue;
        }
        let by_budget = ranks_by_budget(
            runs,
            &members,
            higher,
            UnitKind::TaskBudget,
            FoundNothing::Worst,
            crate::analysis::compare::DEFAULT_TIE_TOLERANCE,
        );
        let mut sum = vec![0.0; members.len()];
        let mut n = 0usize;
        for per_policy in by_budget.values() {
            for (i, ranks) in per_policy.iter().enumerate() {
                sum[i] += ranks.iter().sum::<f64>();
            }
            n += per_policy.first().map_or(0, Vec::len);
        }
        let (best, mean) = sum
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s / n.max(1) as f64))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(members[a.0].cmp(&members[b.0])))
            .expect("a family has members");
        out.push((fam.to_string(), members[best].clone(), mean));
    }
    out
}

fn report_runs(
    dir: &Path,
    res: &Results,
    runs: &[Run],
    out: &Path,
    opts: &ReportOptions,
    unit: UnitKind,
    heading: &str,
) -> Result<ReportSummary> {
    let units = unit_table(runs, unit, opts.found_nothing, res.higher_is_better);
    check_units(&units).with_context(|| format!("{}", dir.display()))?;
    let (table, table_notes) =
        ScoreTable::from_rows(&units.rows, res.higher_is_better, opts.stats.missing, true)
            .with_context(|| format!("{}", dir.display()))?;
    let mut notes = units.found_nothing_notes();
    let (hit, all, share) = crate::results::exhausted_summary(runs);
    if hit > 0 {
        notes.push(format!(
            "{hit} of {all} cells pulled arms past the end of their traces, spending on average {:.1} % of their budget there (runs.parquet: exhausted_pulls, exhausted_budget)",
            100.0 * share
        ));
    }
    notes.extend(table_notes);
    let c = compare(table, &opts.stats);
    let options = options_json(
        &c,
        &[
            ("input", json!(dir.display().to_string())),
            ("unit", json!(unit.as_str())),
            ("found_nothing", json!(opts.found_nothing.as_str())),
            ("per_budget", json!(opts.per_budget)),
        ],
    );
    let mut w = write_core(&c, out, options, &notes, Some(&units))?;
    let order = c.order();
    let policies: Vec<String> = order.iter().map(|&i| c.table.policies[i].clone()).collect();
    let k = policies.len();
    let tol = opts.stats.tie_tolerance;

    // Rank boxplots, one panel per budget (ranks within each (task, budget)).
    let per_budget_unit = if unit == UnitKind::Task {
        UnitKind::TaskBudget
    } else {
        unit
    };
    let panels = sort_budgets(ranks_by_budget(
        runs,
        &policies,
        res.higher_is_better,
        per_budget_unit,
        opts.found_nothing,
        tol,
    ));
    let bp = BoxPanels {
        title: format!(
            "Ranks per {} unit, one panel per budget",
            per_budget_unit.as_str()
        ),
        x_desc: "rank (1 = best)".into(),
        labels: policies.clone(),
        panels: panels
            .into_iter()
            .map(|(b, v)| (budget_caption(&b, &res.budget_unit), v))
            .collect(),
        x_range: (0.5, k as f64 + 0.5),
    };
    w.files.extend(save(&bp, out, "rank_boxplots")?);
    w.figures.push((
        "rank_boxplots".into(),
        "Rank distributions per budget (HAMLET Figs. 4 and 7 style).".into(),
    ));

    // Parameter studies: each family with several configurations, ranked among themselves.
    let families = families_of(runs);
    for (fam, members) in families.iter().filter(|(_, m)| m.len() >= 2) {
        let members: Vec<String> = members.iter().map(|s| (*s).clone()).collect();
        let panels = sort_budgets(ranks_by_budget(
            runs,
            &members,
            res.higher_is_better,
            per_budget_unit,
            opts.found_nothing,
            tol,
        ));
        let (labels, fixed) = varying_parameters(fam, &members);
        let fixed = if fixed.is_empty() {
            String::new()
        } else {
            format!(" ({fixed})")
        };
        let bp = BoxPanels {
            title: format!(
                "Parameter study: {fam}{fixed}, ranks among its {} configurations",
                members.len()
            ),
            x_desc: "rank within the family (1 = best)".into(),
            labels,
            panels: panels
                .into_iter()
                .map(|(b, v)| (budget_caption(&b, &res.budget_unit), v))
                .collect(),
            x_range: (0.5, members.len() as f64 + 0.5),
        };
        let name = format!("param_study_{fam}");
        w.files.extend(save(&bp, out, &name)?);
        w.figures.push((
            name,
            format!("Parameter study of {fam} (HAMLET Figs. 2, 3, 5, 6 style)."),
        ));
    }

    // Budget allocation: mean share of pulls per learner.
    let learners: Vec<String> = runs
        .iter()
        .flat_map(|r| r.pulls.iter().map(|(l, _)| l.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !learners.is_empty() {
        let lidx: BTreeMap<&String, usize> =
            learners.iter().enumerate().map(|(i, l)| (l, i)).collect();
        let pidx: BTreeMap<&String, usize> =
            policies.iter().enumerate().map(|(i, p)| (p, i)).collect();
        let mut shares = vec![vec![0.0; learners.len()]; k];
        let mut counts = vec![0usize; k];
        for r in runs {
            let Some(&p) = pidx.get(&r.policy) else {
                continue;
            };
            let total: f64 = r.pulls.iter().map(|x| x.1).sum();
            if total > 0.0 {
                for (l, v) in &r.pulls {
                    shares[p][lidx[l]] += v / total;
                }
                counts[p] += 1;
            }
        }
        for (row, n) in shares.iter_mut().zip(&counts) {
            row.iter_mut().for_each(|x| *x /= (*n).max(1) as f64);
        }
        let al = Allocation {
            title: "Share of pulls each policy gave each learner (mean over cells)".into(),
            policies: policies.clone(),
            learners,
            shares,
        };
        w.files.extend(save(&al, out, "allocation")?);
        w.figures.push((
            "allocation".into(),
            "Budget allocation: share of pulls per learner.".into(),
        ));
    }

    // Anytime curves from the trajectories.
    if dir.join(crate::experiment::TRAJECTORIES).is_file() {
        let fig = anytime(
            dir,
            runs,
            &policies,
            res.higher_is_better,
            opts.anytime_points,
            tol,
        )?;
        w.files.extend(save(&fig, out, "anytime")?);
        w.figures.push(("anytime".into(), "Anytime performance: mean rank and mean normalised regret against the budget used, ±95 % t bands.".into()));
    }

    let intro = format!(
        "Results from `{}`: {} cells; score = {}.\n\n{}",
        dir.display(),
        runs.len(),
        res.metric_note,
        units.describe()
    );
    w.files.extend(write_documents(
        &c,
        out,
        heading,
        &intro,
        &notes,
        &w.figures,
        Some(&units),
    )?);
    Ok(ReportSummary {
        out: out.to_path_buf(),
        files: w.files,
        text: tests_in_words(&c),
        comparison: c,
    })
}

fn anytime(
    dir: &Path,
    runs: &[Run],
    policies: &[String],
    higher: bool,
    points: usize,
    tol: f64,
) -> Result<Anytime> {
    let curves = anytime_curves(dir, runs, points)?;
    let grid: Vec<f64> = (0..=points).map(|j| j as f64 / points as f64).collect();
    let pidx: BTreeMap<&String, usize> = policies.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let k = policies.len();
    // unit -> per policy: (sum of curves over repetitions, count per grid point)
    type Sums = Vec<(Vec<f64>, Vec<usize>)>;
    let mut acc: BTreeMap<String, Sums> = BTreeMap::new();
    for r in runs {
        let (Some(curve), Some(&p)) = (curves.get(&r.cell), pidx.get(&r.policy)) else {
            continue;
        };
        let e = acc
            .entry(UnitKind::TaskBudget.key(r))
            .or_insert_with(|| vec![(vec![0.0; points + 1], vec![0; points + 1]); k]);
        for (j, v) in curve.iter().enumerate() {
            if !v.is_nan() {
                e[p].0[j] += v;
                e[p].1[j] += 1;
            }
        }
    }
    let sign = if higher { 1.0 } else { -1.0 };
    let mut ranks = vec![vec![Vec::new(); points + 1]; k];
    let mut regrets = vec![vec![Vec::new(); points + 1]; k];
    for per_policy in acc.values() {
        let means: Vec<Vec<f64>> = per_policy
            .iter()
            .map(|(s, n)| {
                s.iter()
                    .zip(n)
                    .map(|(s, n)| if *n > 0 { s / *n as f64 } else { f64::NAN })
                    .collect()
            })
            .collect();
        let finite = means
            .iter()
            .flatten()
            .filter(|v| v.is_finite())
            .map(|v| sign * v);
        let (best, worst) = finite.fold((f64::NEG_INFINITY, f64::INFINITY), |(b, w), v| {
            (b.max(v), w.min(v))
        });
        for j in 0..=points {
            let col: Vec<f64> = means.iter().map(|m| m[j]).collect();
            let r = average_ranks_tol(&col, higher, tol);
            for p in 0..k {
                ranks[p][j].push(r[p]);
                let v = col[p];
                let reg = if v.is_nan() || best <= worst {
                    if v.is_nan() { 1.0 } else { 0.0 }
                } else {
                    (best - sign * v) / (best - worst)
                };
                regrets[p][j].push(reg);
            }
        }
    }
    let band = |xs: &[f64]| -> (f64, f64) {
        if xs.len() < 2 {
            return (xs.first().copied().unwrap_or(f64::NAN), f64::NAN);
        }
        let (m, sd) = mean_sd(xs);
        (
            m,
            t_quantile(0.975, xs.len() as f64 - 1.0) * sd / (xs.len() as f64).sqrt(),
        )
    };
    let series = |data: &Vec<Vec<Vec<f64>>>| -> Vec<(String, Vec<f64>, Vec<f64>)> {
        (0..k)
            .map(|p| {
                let (m, h): (Vec<f64>, Vec<f64>) = data[p].iter().map(|xs| band(xs)).unzip();
                (policies[p].clone(), m, h)
            })
            .collect()
    };
    Ok(Anytime {
        title: format!(
            "Anytime performance over {} (task, budget) units",
            acc.len()
        ),
        grid,
        rank: series(&ranks),
        regret: series(&regrets),
        k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_captions_are_short_and_name_the_unit() {
        assert_eq!(
            budget_caption("0.041667", "task"),
            "budget 0.04167 × mean arm length"
        );
        assert_eq!(budget_caption("240", "seconds"), "budget 240 s");
        assert_eq!(budget_caption("0.6667", "seconds"), "budget 0.6667 s");
        assert_eq!(budget_caption("1", "task"), "budget 1 × mean arm length");
        assert_eq!(budget_caption("50", "pulls"), "budget 50 pulls");
        assert_eq!(short_number(1234.5678), "1235");
        assert_eq!(short_number(0.125), "0.125");
    }

    fn run(dataset: &str, budget: f64, policy: &str, score: f64) -> Run {
        Run {
            params: String::new(),
            ..Run::scored(dataset, 0, budget, 0, policy, score)
        }
    }

    #[test]
    fn mean_ranks_per_budget_rank_within_each_task_and_budget() {
        // Budget 10: "a" wins on both tasks. Budget 2: "a" wins on one, ties on the other.
        let runs = vec![
            run("d1", 10.0, "a", 0.9),
            run("d1", 10.0, "b", 0.8),
            run("d2", 10.0, "a", 0.7),
            run("d2", 10.0, "b", 0.6),
            run("d1", 2.0, "a", 0.5),
            run("d1", 2.0, "b", 0.4),
            run("d2", 2.0, "a", 0.3),
            run("d2", 2.0, "b", 0.3),
        ];
        let ids = vec!["a".to_string(), "b".to_string()];
        let t = mean_ranks_by_budget(&runs, &ids, true, UnitKind::TaskBudget);
        assert_eq!(t, vec![(2.0, vec![1.25, 1.75]), (10.0, vec![1.0, 2.0])]);
        // Lower is better flips them.
        let t = mean_ranks_by_budget(&runs, &ids, false, UnitKind::TaskBudget);
        assert_eq!(t[1], (10.0, vec![2.0, 1.0]));
    }

    #[test]
    fn parameter_study_labels_keep_only_what_varies() {
        let members: Vec<String> = [
            "hamlet-eps(eps1=0.1, eps2=0, start_slices=1)",
            "hamlet-eps(eps1=0.1, eps2=0.4, start_slices=1)",
            "hamlet-eps(eps1=0.2, eps2=0, start_slices=1)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (labels, shared) = varying_parameters("hamlet-eps", &members);
        assert_eq!(
            labels,
            ["eps1=0.1, eps2=0", "eps1=0.1, eps2=0.4", "eps1=0.2, eps2=0"]
        );
        assert_eq!(shared, "start_slices=1");
    }
}
