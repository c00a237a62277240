//! `banditbench show RESULTS --cell ID`: one cell of a results folder, its row of `runs.parquet`
//! and every decision it stored, as text, and its trajectory as a figure (incumbent and revealed
//! scores against the budget used).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use polars::prelude::*;

use super::figures::{Lines, Page, Panel, Series, save};
use crate::results::read_parquet;

/// What `show` found: the text to print and the figure files written.
pub struct Shown {
    pub text: String,
    pub files: Vec<PathBuf>,
}

fn cell_rows(df: &DataFrame, path: &Path, cell: u64) -> Result<DataFrame> {
    let cells = df
        .column("cell")
        .map_err(|_| anyhow::anyhow!("{}: no column 'cell'", path.display()))?
        .u64()
        .map_err(|e| anyhow::anyhow!("{}: column 'cell': {e}", path.display()))?
        .clone();
    let mask = cells.equal(cell);
    Ok(df.filter(&mask)?)
}

/// One cell of the results folder `dir`: its run as `key: value` lines, its decisions as a table
/// (the first and last `rows` when there are more), and, when `out` is given, the figure
/// `cell-<ID>` (PDF, SVG, PNG, CSV) written there.
pub fn show_cell(dir: &Path, cell: u64, rows: usize, out: Option<&Path>) -> Result<Shown> {
    let runs_path = dir.join(crate::results::RUNS);
    let runs = read_parquet(&runs_path)?;
    let run = cell_rows(&runs, &runs_path, cell)?;
    if run.height() == 0 {
        let ids = runs.column("cell")?.u64()?.clone();
        let mut some: Vec<u64> = ids.into_no_null_iter().take(5).collect();
        some.sort_unstable();
        bail!(
            "{}: no cell {cell} among its {} cells (cell ids are the 'cell' column, e.g. {}); `banditbench show {} --list` lists them",
            runs_path.display(),
            runs.height(),
            some.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            dir.display()
        );
    }
    let traj_path = dir.join(crate::results::TRAJECTORIES);
    let traj = cell_rows(&read_parquet(&traj_path)?, &traj_path, cell)?;
    let text = cell_text(dir, cell, &run, &traj, rows);
    let mut files = Vec::new();
    if let Some(out) = out
        && traj.height() > 0
    {
        std::fs::create_dir_all(out)?;
        let fig = cell_figure(cell, &run, &traj)?;
        files = save(&fig, out, &format!("cell-{cell}"), &Page::default())?;
    }
    Ok(Shown { text, files })
}

/// The cell's run as `key: value` lines and its decisions as a table (the first and last
/// `rows` when there are more).
fn cell_text(dir: &Path, cell: u64, run: &DataFrame, traj: &DataFrame, rows: usize) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(text, "cell {cell} of {}\n", dir.display());
    for c in run.columns() {
        let v = c.get(0).map_or_else(|_| "?".to_string(), |v| v.to_string());
        let _ = writeln!(text, "  {:<20} {}", c.name(), v.trim_matches('"'));
    }
    let _ = writeln!(text, "\n{} decisions stored:", traj.height());
    let shown = if traj.height() > 2 * rows {
        let head = traj.head(Some(rows));
        let tail = traj.tail(Some(rows));
        format!(
            "{}\n  … {} decisions between …\n{}",
            table(&head),
            traj.height() - 2 * rows,
            table(&tail)
        )
    } else {
        table(traj)
    };
    text.push_str(&shown);
    text.push('\n');
    text
}

/// The figure of a cell's trajectory: the revealed scores and the incumbent against the budget
/// used, and with several objectives the archive's hypervolume regret beside.
fn cell_figure(cell: u64, run: &DataFrame, traj: &DataFrame) -> Result<Lines> {
    let f = |name: &str| -> Result<Vec<f64>> {
        Ok(traj
            .column(name)?
            .cast(&DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    };
    let (time, reward, inc) = (f("time")?, f("reward")?, f("incumbent")?);
    let pts = |ys: &[f64]| -> Vec<(f64, f64)> {
        time.iter()
            .zip(ys)
            .filter(|(_, y)| y.is_finite())
            .map(|(&x, &y)| (x, y))
            .collect()
    };
    let (revealed, incumbent) = (pts(&reward), pts(&inc));
    // The incumbent changes at a decision and holds until the next: a step curve.
    let incumbent = steps(&incumbent);
    let ys = revealed.iter().chain(&incumbent).map(|p| p.1);
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        (0.0, 1.0)
    };
    let x1 = time.iter().copied().fold(0.0, f64::max).max(1e-9);
    let get = |name: &str| {
        run.column(name)
            .ok()
            .and_then(|c| c.get(0).ok())
            .map_or_else(String::new, |v| v.to_string().trim_matches('"').to_string())
    };
    // Several objectives: the archive's hypervolume regret after each decision, beside.
    let hv: Vec<f64> = match traj.column("hv_regret") {
        Ok(c) if c.null_count() < c.len() => f("hv_regret")?,
        _ => Vec::new(),
    };
    let hv_panel = (!hv.is_empty()).then(|| Panel {
        caption: "the archive of several objectives".into(),
        x_desc: "budget used".into(),
        y_desc: "hypervolume regret".into(),
        x_range: (0.0, x1),
        y_range: (0.0, 1.0),
        log_x: false,
        series: vec![Series {
            name: "hypervolume regret".into(),
            points: steps(&pts(&hv)),
            band: None,
            color: 2,
            dashed: false,
        }],
        regions: Vec::new(),
    });
    let fig = Lines {
        title: format!(
            "Cell {cell}: {} on {} (run {}), budget {} {}",
            get("policy"),
            get("dataset"),
            get("run"),
            get("budget"),
            get("budget_unit")
        ),
        panels: vec![Panel {
            caption: format!("{} decisions", traj.height()),
            x_desc: "budget used".into(),
            y_desc: "score (reward orientation)".into(),
            x_range: (0.0, x1),
            y_range: (lo, hi),
            log_x: false,
            series: vec![
                Series {
                    name: "revealed score".into(),
                    points: revealed,
                    band: None,
                    color: 1,
                    dashed: true,
                },
                Series {
                    name: "incumbent".into(),
                    points: incumbent,
                    band: None,
                    color: 0,
                    dashed: false,
                },
            ],
            regions: Vec::new(),
        }]
        .into_iter()
        .chain(hv_panel)
        .collect(),
    };
    Ok(fig)
}

/// A value that changes at each point and holds until the next, as a step curve's corners.
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .enumerate()
        .flat_map(|(i, &(x, y))| {
            let before = (i > 0).then(|| (x, points[i - 1].1));
            before.into_iter().chain([(x, y)])
        })
        .collect()
}

/// The cells of a results folder, one line each: id, dataset, run, budget, policy, best score.
pub fn list_cells(dir: &Path, limit: usize) -> Result<String> {
    let runs_path = dir.join(crate::results::RUNS);
    let runs = read_parquet(&runs_path)?;
    let keep: Vec<&str> = [
        "cell",
        "dataset",
        "run",
        "budget",
        "policy",
        "repetition",
        "best_score",
        "decisions",
    ]
    .into_iter()
    .filter(|c| runs.column(c).is_ok())
    .collect();
    let df = runs.select(keep)?;
    let n = df.height();
    let mut s = table(&df.head(Some(limit)));
    if n > limit {
        s.push_str(&format!(
            "\n… and {} more cells (--limit N shows more)\n",
            n - limit
        ));
    }
    Ok(s)
}

/// A number with at most six decimals, trailing zeros dropped ("100", "0.998611").
fn short(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A frame as a plain text table: a header line and one line per row, columns aligned.
fn table(df: &DataFrame) -> String {
    let cols = df.columns();
    let cells: Vec<Vec<String>> = cols
        .iter()
        .map(|c| {
            (0..df.height())
                .map(|i| {
                    c.get(i).map_or_else(
                        |_| "?".into(),
                        |v| match v {
                            AnyValue::Null => "–".into(),
                            AnyValue::Float64(x) => short(x),
                            AnyValue::Float32(x) => short(f64::from(x)),
                            v => v.to_string().trim_matches('"').to_string(),
                        },
                    )
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = cols
        .iter()
        .zip(&cells)
        .map(|(c, v)| {
            v.iter()
                .map(|s| s.chars().count())
                .chain([c.name().len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for (c, w) in cols.iter().zip(&widths) {
        s.push_str(&format!("  {:>w$}", c.name().as_str()));
    }
    s.push('\n');
    for i in 0..df.height() {
        for (v, w) in cells.iter().zip(&widths) {
            s.push_str(&format!("  {:>w$}", v[i]));
        }
        s.push('\n');
    }
    s
}
