//! The report's text outputs: `ranks.csv`, `summary.csv`, `tests.json`, `report.md` (tables
//! that render on a Git forge), `report.tex` (a standalone document that compiles with pdflatex:
//! booktabs tables, LaTeX macros for every symbol, the figures' PDFs) and `ranking.tex` (the
//! ranking table alone, to `\input` into a paper), and the tests in words.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use super::figures::csv_field;
use crate::analysis::compare::Comparison;
use crate::analysis::stats::CiKind;
use crate::analysis::units::FoundCount;

pub(crate) fn fmt_p(p: f64) -> String {
    fmt_p_with(p, 1e-4, 2, 4)
}

/// A p-value in words: "undefined" (NaN), "< 1e-300" (0), scientific with `exp_digits` below
/// `small`, else fixed with `digits` (the reproductions' tables use 1e-3, 1 and 3).
pub(crate) fn fmt_p_with(p: f64, small: f64, exp_digits: usize, digits: usize) -> String {
    if p.is_nan() {
        "undefined".into()
    } else if p == 0.0 {
        "< 1e-300".into()
    } else if p < small {
        format!("{p:.exp_digits$e}")
    } else {
        format!("{p:.digits$}")
    }
}

/// "p = 0.0123", or "p < 1e-300" for a p-value below the smallest the code resolves.
pub(crate) fn p_is(p: f64) -> String {
    if p == 0.0 {
        "p < 1e-300".into()
    } else {
        format!("p = {}", fmt_p(p))
    }
}

pub(crate) fn ci_name(kind: CiKind, alpha: f64) -> String {
    match kind {
        CiKind::T95 => "95 % t interval, clipped to ranks [1, k]".into(),
        CiKind::Z95 => "95 % normal interval, clipped to ranks [1, k]".into(),
        CiKind::Se => "± 1 standard error, clipped to ranks [1, k]".into(),
        CiKind::Bootstrap => format!("{:.0} % percentile bootstrap", 100.0 * (1.0 - alpha)),
    }
}

/// The options as echoed into tests.json and the report.
pub(crate) fn options_json(
    c: &Comparison,
    extra: &[(&str, serde_json::Value)],
) -> serde_json::Value {
    let o = &c.options;
    let mut m = serde_json::Map::new();
    m.insert("alpha".into(), json!(o.alpha));
    m.insert("ci".into(), json!(o.ci.as_str()));
    m.insert("bootstrap_samples".into(), json!(o.bootstrap_samples));
    m.insert("seed".into(), json!(o.seed));
    m.insert("tie_tolerance".into(), json!(o.tie_tolerance));
    m.insert("zero_method".into(), json!(o.zero_method.as_str()));
    m.insert("missing".into(), json!(o.missing.as_str()));
    m.insert("pairs".into(), json!(o.pairs.as_string()));
    m.insert("normalize".into(), json!(o.normalize.as_string()));
    m.insert("unit_weights".into(), json!(o.unit_weights.as_string()));
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
pub(crate) fn units_json(
    c: &Comparison,
    units: Option<&crate::analysis::UnitTable>,
) -> serde_json::Value {
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

pub(crate) fn tests_json(
    c: &Comparison,
    options: serde_json::Value,
    notes: &[String],
    units: serde_json::Value,
) -> serde_json::Value {
    let pols = &c.table.policies;
    // The pairs asked for, both ways round, and each of their policies with itself.
    let mut pairwise: BTreeMap<&str, serde_json::Map<String, serde_json::Value>> = BTreeMap::new();
    for &(a, b, p) in &c.nemenyi.pairwise {
        for (x, y) in [(a, b), (b, a), (a, a), (b, b)] {
            let p = if x == y { 1.0 } else { p };
            pairwise
                .entry(pols[x].as_str())
                .or_default()
                .insert(pols[y].clone(), json!(p));
        }
    }
    let pairwise: serde_json::Map<String, serde_json::Value> = pairwise
        .into_iter()
        .map(|(a, inner)| (a.to_string(), serde_json::Value::Object(inner)))
        .collect();
    let family = c.options.pairs.describe(pols.len(), c.wilcoxon.len());
    let num = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
    json!({
        "friedman": {"statistic": num(c.friedman.statistic), "p_value": num(c.friedman.p_value), "df": c.friedman.df},
        "iman_davenport": {"statistic": num(c.iman_davenport.statistic), "p_value": num(c.iman_davenport.p_value),
                           "df1": c.iman_davenport.df1, "df2": c.iman_davenport.df2},
        "skillings_mack": c.skillings_mack.as_ref().map(|m| json!({
            "statistic": num(m.statistic), "p_value": num(m.p_value), "df": m.df,
            "units": m.units, "incomplete_units": m.incomplete, "dropped_units": m.dropped})),
        "pairs": {"asked": c.options.pairs.as_string(), "family": family},
        "nemenyi": {"alpha": c.nemenyi.alpha, "q_alpha": c.nemenyi.q_alpha, "cd": c.nemenyi.cd,
                    "pairwise_p": serde_json::Value::Object(pairwise)},
        "wilcoxon_holm": {
            "zero_method": c.options.zero_method.as_str(),
            "alpha": c.options.alpha,
            "pairs": c.wilcoxon.iter().map(|p| {
                let (ahead, (m, lo, hi, n)) = pair_direction(c, &p.a, &p.b);
                json!({
                "a": p.a, "b": p.b, "ahead": ahead, "mean_difference": num(m),
                "mean_difference_ci": [num(lo), num(hi)], "units_paired": n,
                "statistic": p.statistic, "p_value": p.p_value,
                "p_holm": p.p_holm, "reject": p.reject, "method": p.method})}).collect::<Vec<_>>()
        },
        "bayesian_signed_rank": if c.options.bayes_rope.is_some() { json!({
            "method": "Benavoli et al. 2014/2017, baycomp's SignedRankTest semantics; left = a better by more than the rope",
            "rope": c.options.bayes_rope, "prior": c.options.bayes_prior,
            "samples": c.options.bayes_samples, "seed": c.options.seed, "decide_at": 0.95,
            "pairs": c.bayesian.iter().map(|p| json!({
                "a": p.a, "b": p.b, "p_left": p.result.p_left, "p_rope": p.result.p_rope,
                "p_right": p.result.p_right, "decision": p.decision()})).collect::<Vec<_>>()
        }) } else { json!(null) },
        "leaderboard": leaderboard_json(c),
        "normalized": c.normalized.as_ref().map(|n| json!({
            "how": n.how.as_string(),
            "skipped_units": n.skipped_units,
            "policies": n.rows.iter().map(|r| json!({
                "policy": r.policy, "n": r.n, "mean": num(r.mean), "sd": num(r.sd),
                "ci_low": num(r.ci_low), "ci_high": num(r.ci_high)})).collect::<Vec<_>>(),
        })),
        "n_units": c.table.units.len(),
        "n_policies": c.table.policies.len(),
        "units": units,
        "options": options,
        "notes": notes,
    })
}

/// The leaderboard for tests.json (`null` when it was not computed).
fn leaderboard_json(c: &Comparison) -> serde_json::Value {
    let Some(l) = &c.leaderboard else {
        return json!({"computed": false, "leaderboard": c.options.leaderboard.as_str(),
            "why": "--leaderboard auto computes it up to 50 policies; --leaderboard on for more"});
    };
    let num = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
    let pols = &c.table.policies;
    let interval = |v: &[(f64, f64)], i: usize| {
        v.get(i)
            .map_or(json!(null), |&(lo, hi)| json!([num(lo), num(hi)]))
    };
    json!({
        "computed": true,
        "method": "every unit a round: each pair of policies plays one match, the better score wins, scores within the tie tolerance draw (half a win); Bradley–Terry by Zermelo's iteration (evalica 0.4.2's), Elo (k = 4, scale 400) in unit order; ratings on the Elo scale with the baseline (or the mean) at 1000; percentile bootstrap intervals over units (Elo's only with --elo-intervals)",
        "baseline": l.baseline.map(|b| pols[b].clone()),
        "matches": l.matches, "draws": l.draws, "bt_sweeps": l.sweeps,
        "bootstrap_samples": l.samples, "elo_intervals": !l.elo_interval.is_empty(), "alpha": c.options.alpha, "seed": c.options.seed,
        "bradley_terry_exists": l.bt_strength.iter().all(|x| x.is_finite()),
        "bradley_terry_undefined_resamples": l.bt_undefined,
        "policies": pols.iter().enumerate().map(|(i, p)| json!({
            "policy": p,
            "bradley_terry_strength": num(l.bt_strength[i]),
            "bradley_terry_rating": num(l.bt_rating[i]),
            "bradley_terry_interval": interval(&l.bt_interval, i),
            "elo": num(l.elo[i]),
            "elo_interval": interval(&l.elo_interval, i),
            "win_rate": pols.iter().enumerate().filter(|&(j, _)| j != i)
                .map(|(j, q)| (q.clone(), num(l.win_rate[i][j])))
                .collect::<serde_json::Map<String, serde_json::Value>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The leaderboard as a Markdown table, best Bradley–Terry rating first.
fn leaderboard_md(c: &Comparison) -> String {
    let Some(l) = &c.leaderboard else {
        return String::new();
    };
    let k = c.table.policies.len();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| l.bt_rating[b].total_cmp(&l.bt_rating[a]));
    let ci = |v: &[(f64, f64)], i: usize| {
        v.get(i)
            .map_or(String::new(), |(lo, hi)| format!(" [{lo:.0}, {hi:.0}]"))
    };
    let mut s = format!(
        "Every unit is a round in which each pair of policies plays one match ({} matches, {} draws); ratings on the Elo scale with {} at 1000, {}. Bradley–Terry does not depend on the order of the units; Elo plays them in name order.\n\n| # | policy | Bradley–Terry | Elo | mean win rate |\n|---|---|---|---|---|\n",
        l.matches,
        l.draws,
        l.baseline
            .map_or("the mean".to_string(), |b| c.table.policies[b].clone()),
        if l.samples > 0 {
            format!(
                "{:.0} % percentile bootstrap intervals over {} resamples of the units{}",
                100.0 * (1.0 - c.options.alpha),
                l.samples,
                if l.elo_interval.is_empty() {
                    " for Bradley–Terry (Elo's with --elo-intervals)"
                } else {
                    ""
                }
            )
        } else {
            "no intervals (--leaderboard-samples 0)".to_string()
        }
    );
    if l.bt_strength.iter().any(|x| !x.is_finite()) {
        s.push_str("Bradley–Terry's strengths do not exist on these units: some policy never lost, or never won, against the rest (Hunter 2004, Assumption 1); its column is empty.\n\n");
    } else if l.bt_undefined > 0 {
        let _ = writeln!(
            s,
            "In {} of {} resamples Bradley–Terry's strengths did not exist (a policy never lost or never won); its intervals rest on the others.\n",
            l.bt_undefined, l.samples
        );
    }
    for (r, &i) in order.iter().enumerate() {
        let wr: Vec<f64> = (0..k)
            .filter(|&j| j != i)
            .map(|j| l.win_rate[i][j])
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {:.0}{} | {:.0}{} | {:.3} |",
            r + 1,
            c.table.policies[i],
            l.bt_rating[i],
            ci(&l.bt_interval, i),
            l.elo[i],
            ci(&l.elo_interval, i),
            wr.iter().sum::<f64>() / wr.len().max(1) as f64
        );
    }
    s
}

/// The tests in words, as they go into report.md.
/// The ranking as a terminal table, best first, with the direction of the scores, so that a
/// wrong `--minimize` shows at once.
pub fn ranking_in_words(c: &Comparison) -> String {
    let mut order: Vec<&crate::analysis::compare::PolicySummary> = c.summary.iter().collect();
    order.sort_by(|a, b| {
        a.mean_rank
            .total_cmp(&b.mean_rank)
            .then_with(|| a.policy.cmp(&b.policy))
    });
    let width = order
        .iter()
        .map(|r| r.policy.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Mean rank over {} units (1 = best; {} scores are better), with its {}:\n",
        c.table.units.len(),
        if c.table.higher_is_better {
            "higher"
        } else {
            "lower"
        },
        ci_name(c.options.ci, c.options.alpha)
    );
    let _ = writeln!(
        s,
        "{:>4}  {:<width$}  {:>9}  {:>17}  {:>10}",
        "#", "policy", "mean rank", "interval", "mean score"
    );
    for (i, r) in order.iter().enumerate() {
        let _ = writeln!(
            s,
            "{:>4}  {:<width$}  {:>9.3}  {:>17}  {:>10.4}",
            i + 1,
            r.policy,
            r.mean_rank,
            format!("[{:.3}, {:.3}]", r.ci_low, r.ci_high),
            r.mean_score
        );
    }
    s.push('\n');
    s
}

/// What an omnibus test's p-value says of the ranks at level `a`.
fn differ(p: f64, a: f64) -> &'static str {
    if p <= a {
        "differ significantly"
    } else {
        "do not differ significantly"
    }
}

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
        differ(fr.p_value, a)
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
    if c.options.missing == crate::analysis::compare::Missing::Keep {
        let _ = match &c.skillings_mack {
            Some(m) => writeln!(
                s,
                "Skillings–Mack over every unit with two or more scores ({} units, {} of them incomplete{}): SM({}) = {:.3}, {}, so the policies' ranks {} at α = {a}. Friedman above, the ranks and the pairwise tests use the {} complete units.",
                m.units,
                m.incomplete,
                if m.dropped > 0 {
                    format!("; {} with fewer than two scores left out", m.dropped)
                } else {
                    String::new()
                },
                m.df,
                m.statistic,
                p_is(m.p_value),
                differ(m.p_value, a),
                c.table.units.len()
            ),
            None => writeln!(
                s,
                "Skillings–Mack: not computable here (fewer than two units with two scores, or policies that never share a unit with the others)."
            ),
        };
    }
    let _ = writeln!(
        s,
        "Nemenyi: q_α = {:.4} (studentized range, k = {}, ∞ df, / √2), critical difference CD = {:.4}; two policies whose mean ranks differ by more than CD differ significantly.",
        c.nemenyi.q_alpha,
        c.table.policies.len(),
        c.nemenyi.cd
    );
    let rejected = c.wilcoxon.iter().filter(|p| p.reject).count();
    let methods: BTreeSet<&str> = c.wilcoxon.iter().map(|p| p.method).collect();
    if c.wilcoxon.is_empty() {
        let _ = writeln!(
            s,
            "Pairwise tests (Wilcoxon–Holm, Nemenyi's pairwise p-values): {}.",
            c.options.pairs.describe(c.table.policies.len(), 0)
        );
    } else {
        let _ = writeln!(
            s,
            "Wilcoxon signed-rank tests (zero method {}, {}) on {} with Holm's correction: {} pair(s) differ significantly at α = {a}.",
            c.options.zero_method.as_str(),
            methods.into_iter().collect::<Vec<_>>().join(" / "),
            c.options
                .pairs
                .describe(c.table.policies.len(), c.wilcoxon.len()),
            rejected
        );
    }
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
            "Bayesian signed-rank tests (Benavoli et al. 2017; rope ±{rope}, prior {}, {} posterior samples) on {}: {} with one policy better and {} practically equivalent with posterior probability ≥ 0.95, {} undecided.",
            c.options.bayes_prior,
            c.options.bayes_samples,
            c.options
                .pairs
                .describe(c.table.policies.len(), c.bayesian.len()),
            count(&|p| p.result.p_left >= 0.95 || p.result.p_right >= 0.95),
            count(&|p| p.result.p_rope >= 0.95),
            count(&|p| p.decision() == "undecided"),
        );
    }
    s
}

pub(crate) fn summary_table_md(
    c: &Comparison,
    units: Option<&crate::analysis::UnitTable>,
) -> String {
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

/// Which of a pair is ahead (by the mean of the paired differences, in the scores' direction),
/// and the mean difference a − b with its 95 % t interval and the units it rests on.
pub(crate) fn pair_direction(c: &Comparison, a: &str, b: &str) -> (String, (f64, f64, f64, usize)) {
    let idx = |p: &str| c.table.policies.iter().position(|x| x == p);
    let (Some(ia), Some(ib)) = (idx(a), idx(b)) else {
        return ("—".into(), (f64::NAN, f64::NAN, f64::NAN, 0));
    };
    let d = crate::analysis::compare::mean_difference(&c.table, ia, ib);
    let better = if c.table.higher_is_better { d.0 } else { -d.0 };
    let ahead = if better > 0.0 {
        a.to_string()
    } else if better < 0.0 {
        b.to_string()
    } else {
        "neither".into()
    };
    (ahead, d)
}

pub(crate) fn pairs_table_md(c: &Comparison) -> String {
    let mut s = String::from(
        "Ahead: the policy with the better mean score over the units both have; Δ = a − b, the mean of the paired score differences with its 95 % t interval.\n\n| a | b | ahead | Δ = a − b [95 % CI] | statistic | p | p (Holm) | method | differ |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in &c.wilcoxon {
        let (ahead, (m, lo, hi, _)) = pair_direction(c, &p.a, &p.b);
        let _ = writeln!(
            s,
            "| `{}` | `{}` | {} | {:+.4} [{:+.4}, {:+.4}] | {} | {} | {} | {} | {} |",
            p.a,
            p.b,
            if ahead == "neither" || ahead == "—" {
                ahead
            } else {
                format!("`{ahead}`")
            },
            m,
            lo,
            hi,
            p.statistic,
            fmt_p(p.p_value),
            fmt_p(p.p_holm),
            p.method,
            if p.reject { "yes" } else { "no" }
        );
    }
    s
}

/// `ranks.csv`, `summary.csv`, `labels.csv` and `tests.json`.
pub(crate) fn write_tables(
    c: &Comparison,
    out: &Path,
    options: serde_json::Value,
    notes: &[String],
    units: Option<&crate::analysis::UnitTable>,
    labels: &[(String, String)],
) -> Result<Vec<PathBuf>> {
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
            let _ = writeln!(ranks, "{},{},{s},{r}", csv_field(u), csv_field(p));
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
            csv_field(&s.policy),
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

    let mut l = String::from("policy,label\n");
    for (p, lab) in labels {
        let _ = writeln!(l, "{},{}", csv_field(p), csv_field(lab));
    }
    std::fs::write(out.join("labels.csv"), l)?;
    files.push(out.join("labels.csv"));
    if let Some(lb) = &c.leaderboard {
        let mut t = String::from(
            "policy,bt_strength,bt_rating,bt_low,bt_high,elo,elo_low,elo_high,mean_win_rate\n",
        );
        let k = c.table.policies.len();
        for (i, p) in c.table.policies.iter().enumerate() {
            let (bl, bh) = lb
                .bt_interval
                .get(i)
                .copied()
                .unwrap_or((f64::NAN, f64::NAN));
            let (el, eh) = lb
                .elo_interval
                .get(i)
                .copied()
                .unwrap_or((f64::NAN, f64::NAN));
            let wr: Vec<f64> = (0..k)
                .filter(|&j| j != i)
                .map(|j| lb.win_rate[i][j])
                .collect();
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{},{},{}",
                csv_field(p),
                lb.bt_strength[i],
                lb.bt_rating[i],
                bl,
                bh,
                lb.elo[i],
                el,
                eh,
                wr.iter().sum::<f64>() / wr.len().max(1) as f64
            );
        }
        std::fs::write(out.join("leaderboard.csv"), t)?;
        files.push(out.join("leaderboard.csv"));
    }
    if let Some(n) = &c.normalized {
        let mut t = String::from("policy,how,n,mean,sd,ci_low,ci_high\n");
        for i in c.order() {
            let r = &n.rows[i];
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{}",
                csv_field(&r.policy),
                csv_field(&n.how.as_string()),
                r.n,
                r.mean,
                r.sd,
                r.ci_low,
                r.ci_high
            );
        }
        std::fs::write(out.join("normalized.csv"), t)?;
        files.push(out.join("normalized.csv"));
    }
    Ok(files)
}

/// The normalised scores as a Markdown table, in the ranking's order.
fn normalized_md(c: &Comparison) -> String {
    let Some(n) = &c.normalized else {
        return String::new();
    };
    let what = match &n.how {
        crate::analysis::normalize::Normalize::Baseline(b) => format!(
            "the relative improvement over `{b}` per unit, (s − s_B)/|s_B| signed so that positive is better (0.01 = 1 % better)"
        ),
        crate::analysis::normalize::Normalize::Known(k) => format!(
            "(s − w)/(b − w) per unit, b and w the unit's known best and worst values from `{}` (1 = the known best, 0 = the known worst)",
            k.file
        ),
        _ => "(s − w)/(b − w) per unit, b and w the best and worst of the compared policies there (1 = the unit's best, 0 = its worst)".to_string(),
    };
    let mut md = format!(
        "Scores normalised per unit: {what}; mean over the units with its 95 % t interval.{}\n\n| policy | units | mean | 95 % interval |\n|---|---|---|---|\n",
        if n.skipped_units > 0 {
            format!(
                " {} unit(s) left out (a policy found nothing, the baseline scored 0, or every policy tied).",
                n.skipped_units
            )
        } else {
            String::new()
        }
    );
    for i in c.order() {
        let r = &n.rows[i];
        let _ = writeln!(
            md,
            "| {} | {} | {:.4} | [{:.4}, {:.4}] |",
            r.policy.replace('|', "\\|"),
            r.n,
            r.mean,
            r.ci_low,
            r.ci_high
        );
    }
    md
}

/// Text for LaTeX: the special characters escaped, and every symbol the reports use (Greek
/// letters, χ², √, ∞, ±, ≥, ×, dashes, the minus sign) as a LaTeX macro, so that pdflatex with
/// its default fonts sets it. Latin letters with accents go through as UTF-8 (inputenc).
pub fn tex_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let m: &str = match c {
            '\\' => "\\textbackslash{}",
            '_' => "\\_",
            '%' => "\\%",
            '&' => "\\&",
            '#' => "\\#",
            '$' => "\\$",
            '{' => "\\{",
            '}' => "\\}",
            '~' => "\\textasciitilde{}",
            '^' => "\\textasciicircum{}",
            '<' => "\\textless{}",
            '>' => "\\textgreater{}",
            '|' => "\\textbar{}",
            'α' => "$\\alpha$",
            'β' => "$\\beta$",
            'γ' => "$\\gamma$",
            'δ' => "$\\delta$",
            'Δ' => "$\\Delta$",
            'ε' => "$\\varepsilon$",
            'η' => "$\\eta$",
            'θ' => "$\\theta$",
            'λ' => "$\\lambda$",
            'μ' => "$\\mu$",
            'ρ' => "$\\rho$",
            'σ' => "$\\sigma$",
            'τ' => "$\\tau$",
            'χ' if chars.peek() == Some(&'²') => {
                chars.next();
                "$\\chi^2$"
            }
            'χ' => "$\\chi$",
            '²' => "$^2$",
            '√' => "$\\surd$",
            '∞' => "$\\infty$",
            '±' => "$\\pm$",
            '≥' => "$\\geq$",
            '≤' => "$\\leq$",
            '≈' => "$\\approx$",
            '×' => "$\\times$",
            '·' => "$\\cdot$",
            '→' => "$\\to$",
            '−' => "$-$",
            '–' => "--",
            '—' => "---",
            '…' => "\\dots{}",
            '‘' | '’' => "'",
            '“' => "``",
            '”' => "''",
            'š' => "\\v{s}",
            c if c.is_ascii() || c.is_alphabetic() => {
                out.push(c);
                continue;
            }
            _ => "?",
        };
        out.push_str(m);
    }
    out
}

/// The ranking as a booktabs table (a `table` float), for `report.tex` and `ranking.tex`.
fn ranking_tex(c: &Comparison, heading: &str) -> String {
    let mut tex = String::from(
        "\\begin{table}[t]\n\\centering\n\\small\n\\begin{tabular}{rlrrcr}\n\\toprule\n\\# & policy & mean rank & sd & interval & mean score \\\\\n\\midrule\n",
    );
    for (pos, i) in c.order().into_iter().enumerate() {
        let r = &c.summary[i];
        let _ = writeln!(
            tex,
            "{} & \\texttt{{{}}} & {:.3} & {:.3} & [{:.3}, {:.3}] & {:.4} \\\\",
            pos + 1,
            tex_text(&r.policy),
            r.mean_rank,
            r.sd_rank,
            r.ci_low,
            r.ci_high,
            r.mean_score
        );
    }
    let _ = write!(
        tex,
        "\\bottomrule\n\\end{{tabular}}\n\\caption{{{} Mean ranks over {} units ({}).}}\n\\end{{table}}\n",
        tex_text(heading),
        c.table.units.len(),
        tex_text(&ci_name(c.options.ci, c.options.alpha))
    );
    tex
}

/// `report.md`, `report.tex` (standalone) and `ranking.tex` (the table alone).
pub(crate) fn write_documents(
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
    if c.leaderboard.is_some() {
        md.push_str("## Leaderboard\n\n");
        md.push_str(&leaderboard_md(c));
        md.push('\n');
    }
    if c.normalized.is_some() {
        md.push_str("## Normalised scores\n\n");
        md.push_str(&normalized_md(c));
        md.push('\n');
    }
    md.push_str("## Figures\n\n");
    for (f, caption) in figs {
        let _ = writeln!(
            md,
            "![{caption}]({f}.png)\n\n*{caption}* ([PDF]({f}.pdf), [SVG]({f}.svg), [data]({f}.csv))\n"
        );
    }
    md.push_str("## Wilcoxon–Holm pairs\n\n");
    md.push_str(&pairs_table_md(c));
    std::fs::write(out.join("report.md"), md)?;

    let table = ranking_tex(c, heading);
    std::fs::write(out.join("ranking.tex"), &table)?;
    let mut tex = String::from(
        "% Generated by banditbench report; compiles with pdflatex (booktabs, graphicx).\n\
         \\documentclass[10pt]{article}\n\
         \\usepackage{booktabs}\n\\usepackage{graphicx}\n\\usepackage[margin=2cm]{geometry}\n\
         \\begin{document}\n",
    );
    let _ = writeln!(
        tex,
        "\\section*{{{}}}\n\n{}\n",
        tex_text(heading),
        tex_text(intro)
    );
    if !notes.is_empty() {
        tex.push_str("\\paragraph{Notes on the data.}\n\\begin{itemize}\n");
        for n in notes.iter().take(50) {
            let _ = writeln!(tex, "\\item {}", tex_text(n));
        }
        tex.push_str("\\end{itemize}\n\n");
    }
    tex.push_str(&table);
    tex.push_str("\n\\paragraph{Tests.}\n");
    for line in tests_in_words(c).lines() {
        let _ = writeln!(tex, "{}\n", tex_text(line));
    }
    for (f, caption) in figs {
        let _ = writeln!(
            tex,
            "\\begin{{figure}}[tp]\n\\centering\n\\includegraphics[width=\\linewidth]{{{f}.pdf}}\n\\caption{{{}}}\n\\end{{figure}}\n",
            tex_text(caption)
        );
    }
    tex.push_str("\\end{document}\n");
    std::fs::write(out.join("report.tex"), tex)?;
    Ok(vec![
        out.join("report.md"),
        out.join("report.tex"),
        out.join("ranking.tex"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tex_text_uses_macros() {
        assert_eq!(
            tex_text("χ²(3) = 1, α = 0.05, ∞ df, / √2, p ≥ 0.1, 5 × 2, rank_1 & 50 %"),
            "$\\chi^2$(3) = 1, $\\alpha$ = 0.05, $\\infty$ df, / $\\surd$2, p $\\geq$ 0.1, 5 $\\times$ 2, rank\\_1 \\& 50 \\%"
        );
        assert_eq!(tex_text("Demšar – Holm"), "Dem\\v{s}ar -- Holm");
        assert_eq!(tex_text("ρ=0.1"), "$\\rho$=0.1");
    }
}
