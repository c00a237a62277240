//! `traces inspect`: a trace set summarised as text.

use super::{Status, TraceSet};

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The `traces inspect` table of a trace set: what it holds, and per learner its evaluations,
/// time span, score range, failures and timeouts. Columns widen to the longest learner name.
pub fn summary(ts: &TraceSet) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let datasets: std::collections::BTreeSet<&str> =
        ts.tasks.iter().map(|t| t.dataset.as_str()).collect();
    let runs: std::collections::BTreeSet<i64> = ts.tasks.iter().map(|t| t.run).collect();
    let _ = writeln!(
        s,
        "== {} ({}) — {}\n   {}\n   metric {} ({}); {} datasets, {} runs, {} tasks, {} learners, {} evaluations; hash {}",
        ts.manifest.name,
        ts.dir.display(),
        ts.manifest.source.as_str(),
        ts.manifest.description,
        ts.manifest.metric,
        ts.manifest.direction.as_str(),
        datasets.len(),
        runs.len(),
        ts.tasks.len(),
        ts.learners.len(),
        ts.n_evaluations(),
        ts.content_hash
    );
    if !ts.extra_columns.is_empty() {
        let _ = writeln!(s, "   extra columns: {}", ts.extra_columns.join(", "));
    }
    let w = ts
        .learners
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(28);
    let _ = writeln!(
        s,
        "\n   {:<w$} {:>8} {:>13} {:>30} {:>19} {:>8} {:>8}",
        "learner",
        "evals",
        "evals/task",
        "span s (min / median / max)",
        "score range",
        "failed",
        "timeout"
    );
    for (i, l) in ts.learners.iter().enumerate() {
        let arms: Vec<_> = ts.tasks.iter().map(|t| &t.arms[i]).collect();
        let n: usize = arms.iter().map(|a| a.len()).sum();
        let (lo_n, hi_n) = arms.iter().fold((usize::MAX, 0), |(lo, hi), a| {
            (lo.min(a.len()), hi.max(a.len()))
        });
        let mut spans: Vec<f64> = arms.iter().map(|a| a.span_s()).collect();
        spans.sort_by(f64::total_cmp);
        let scores = arms
            .iter()
            .flat_map(|a| a.score.iter())
            .filter(|x| !x.is_nan());
        let (smin, smax) = scores.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
        let count = |st: Status| -> usize {
            arms.iter()
                .map(|a| a.status.iter().filter(|s| **s == st).count())
                .sum()
        };
        let _ = writeln!(
            s,
            "   {:<w$} {:>8} {:>13} {:>30} {:>19} {:>8} {:>8}",
            l,
            n,
            format!("{lo_n}-{hi_n}"),
            format!(
                "{:.3} / {:.3} / {:.3}",
                spans[0],
                quantile(&spans, 0.5),
                spans[spans.len() - 1]
            ),
            format!("{smin:.4} to {smax:.4}"),
            count(Status::Failed),
            count(Status::Timeout)
        );
    }
    if !ts.dropped.is_empty() {
        let _ = writeln!(s, "\n   dropped {} incomplete task(s):", ts.dropped.len());
        for d in &ts.dropped {
            let _ = writeln!(
                s,
                "     {}/{} lacks {}",
                d.dataset,
                d.run,
                d.missing.join(", ")
            );
        }
    }
    s.push('\n');
    s
}
