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
/// The metric with its direction, or each objective with its direction (a pool or trace set of
/// several objectives).
fn objectives_text(
    metric: &str,
    direction: super::Direction,
    objectives: &[super::objectives::Objective],
) -> String {
    if objectives.is_empty() {
        return format!("{metric} ({})", direction.as_str());
    }
    objectives
        .iter()
        .map(|o| format!("{} ({})", o.name, o.direction.as_str()))
        .collect::<Vec<_>>()
        .join(" x ")
}

/// A trace set of several objectives: each objective's spread over the ok evaluations, and per
/// task the true Pareto front in every objective over the evaluations whose every value is a
/// number (what a replay measures runs against, before `[tasks]` keeps some learners).
fn describe_objectives(ts: &TraceSet, s: &mut String) {
    let objectives = &ts.manifest.objectives;
    let d = objectives.len();
    let sign: Vec<f64> = objectives.iter().map(|o| -o.direction.sign()).collect();
    // Per task, every feasible evaluation's values, minimised (maximised ones negated).
    let tasks: Vec<(String, Vec<f64>)> = ts
        .tasks
        .iter()
        .map(|t| {
            let points = t
                .arms
                .iter()
                .flat_map(|a| a.objectives.chunks_exact(d))
                .filter(|v| v.iter().all(|x| x.is_finite()))
                .flat_map(|v| v.iter().zip(&sign).map(|(x, s)| x * s).collect::<Vec<_>>())
                .collect();
            (t.name(), points)
        })
        .collect();
    super::objectives::describe(
        objectives,
        &tasks,
        (
            "ok evaluations (min/med/max)",
            "ok evaluations whose every objective is a number",
        ),
        s,
    );
}

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
    if !ts.manifest.objectives.is_empty() {
        let _ = writeln!(
            s,
            "   objectives: {}",
            objectives_text(
                &ts.manifest.metric,
                ts.manifest.direction,
                &ts.manifest.objectives
            )
        );
    }
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
    if !ts.manifest.objectives.is_empty() {
        describe_objectives(ts, &mut s);
    }
    s
}

/// `traces list`: one line per trace set or configuration pool directly under `dir` (read from
/// their manifests only, so it is instant): folder, kind, metric and direction, size on disk and
/// the manifest's description. Folders that are neither are skipped.
pub fn list(dir: &std::path::Path) -> anyhow::Result<String> {
    use std::fmt::Write as _;
    let dir = &crate::bundled::folder(dir);
    let rows = list_rows(dir)?;
    let head = ["folder", "kind", "metric", "size", "description"];
    let w: Vec<usize> = (0..4)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in std::iter::once(head.map(String::from)).chain(rows) {
        let _ = writeln!(
            s,
            "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        );
    }
    let _ = writeln!(
        s,
        "\n`banditbench traces inspect {}/NAME` describes one; traces/README.md documents each.",
        dir.display()
    );
    Ok(s)
}

/// [`list`]'s rows: folder, kind, metric (direction), size, description.
pub(crate) fn list_rows(dir: &std::path::Path) -> anyhow::Result<Vec<[String; 5]>> {
    let dir = &crate::bundled::folder(dir);
    use anyhow::Context as _;
    fn size(p: &std::path::Path) -> u64 {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::read_dir(p)
                .map(|d| d.filter_map(Result::ok).map(|e| size(&e.path())).sum())
                .unwrap_or(0),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let mut rows: Vec<[String; 5]> = Vec::new();
    for p in entries {
        let folder = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().to_string());
        let mb = format!("{:.1} MB", size(&p) as f64 / 1e6);
        if super::pool::is_pool(&p) {
            let m = super::pool::read_pool_manifest(&p.join("pool.toml"))?;
            rows.push([
                folder,
                format!(
                    "pool ({} learners, {} units{})",
                    m.learners.len(),
                    m.units,
                    // A pool generated from a function is named so wherever pools are listed.
                    if m.generator.is_some() {
                        ", synthetic"
                    } else {
                        ""
                    }
                ),
                objectives_text(&m.metric, m.direction, &m.objectives),
                mb,
                m.description,
            ]);
        } else if p.join("traceset.toml").is_file() {
            let m = super::manifest::read_manifest(&p.join("traceset.toml"))?;
            rows.push([
                folder,
                format!("trace set ({})", m.source.as_str()),
                objectives_text(&m.metric, m.direction, &m.objectives),
                mb,
                m.description,
            ]);
        }
    }
    if rows.is_empty() {
        anyhow::bail!(
            "{}: holds no trace set (traceset.toml) or pool (pool.toml)",
            dir.display()
        );
    }
    Ok(rows)
}
