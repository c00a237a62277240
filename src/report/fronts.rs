//! Results of two objectives: per task, each policy's median attainment surface (Fonseca et al.
//! 2011; moocore's percentile rule) over its repetitions at the largest budget, beside the task's
//! true Pareto front, in the recorded units. The points come from the pool the lock file names
//! (checked by its content hash) and the configurations each cell finished (trajectories.parquet).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::figures::{Lines, Panel, Series};
use crate::pareto::{attainment_surface, level_of_percentile, nondominated};
use crate::results::{LockObjectives, Run};

/// Panels drawn at most (tasks past these are left out, and the caption says so).
const MAX_PANELS: usize = 6;

/// Which attainment surface of a policy's repetitions a figure draws.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    /// The median (moocore's rule for the 50th percentile).
    Median,
    /// What any repetition attained: the policy's final front over all its repetitions.
    Best,
}

/// The figures of a results folder of two objectives, each with its file name and caption: the
/// median attainment surfaces (`attainment`) and each policy's final front over its
/// repetitions (`fronts`). Empty when the folder measures one objective or more than two
/// (attainment surfaces are drawn in two).
pub(crate) fn figures(
    dir: &Path,
    runs: &[Run],
    policies: &[String],
    label: &dyn Fn(&str) -> String,
) -> Result<Vec<(Lines, &'static str, String)>> {
    let lock_path = dir.join(crate::results::LOCK);
    let Some(lock) = crate::results::read_lock_file(&lock_path)? else {
        return Ok(Vec::new());
    };
    let Some(mo) = lock.resolved.objectives.clone() else {
        return Ok(Vec::new());
    };
    if mo.names.len() != 2 {
        return Ok(Vec::new());
    }
    let tdir = Path::new(&lock.resolved.trace_dir);
    let pool = crate::trace::pool::load_pool(tdir, true).with_context(|| {
        format!(
            "{}: the attainment figure reads the pool the results were run on, {} (move it back, or report without trajectories)",
            lock_path.display(),
            tdir.display()
        )
    })?;
    if pool.content_hash != lock.resolved.trace_hash {
        bail!(
            "{}: the pool at {} has changed since these results were written (content hash {}, now {}); the attainment figure needs the pool they were run on",
            lock_path.display(),
            tdir.display(),
            lock.resolved.trace_hash,
            pool.content_hash
        );
    }
    let which: Vec<usize> = mo
        .names
        .iter()
        .map(|n| {
            pool.manifest
                .objectives
                .iter()
                .position(|o| &o.name == n)
                .with_context(|| format!("{}: objective '{n}' is not in the pool", tdir.display()))
        })
        .collect::<Result<_>>()?;
    let finished = finished_configs(dir, pool.manifest.units)?;
    let left_out = mo.tasks.len().saturating_sub(MAX_PANELS);
    let tail = format!(
        ", per task, beside the task's true Pareto front (dashed), in {} x {}; the axes end at the reference point the lock file names.{}",
        mo.names[0],
        mo.names[1],
        if left_out > 0 {
            format!(
                " The first {MAX_PANELS} tasks of {} are drawn.",
                mo.tasks.len()
            )
        } else {
            String::new()
        }
    );
    let mut out = Vec::new();
    for (level, name, title, what) in [
        (
            Level::Median,
            "attainment",
            "Attainment surfaces",
            "Median attainment surfaces (Fonseca et al. 2011) of each policy's final archives over its repetitions at the largest budget",
        ),
        (
            Level::Best,
            "fronts",
            "Final fronts",
            "Each policy's final front at the largest budget: the non-dominated points any of its repetitions found (its first attainment surface)",
        ),
    ] {
        let panels: Vec<Panel> = mo
            .tasks
            .iter()
            .take(MAX_PANELS)
            .filter_map(|t| {
                task_panel(
                    &pool, &mo, t, &which, runs, policies, &finished, label, level,
                )
            })
            .collect();
        if !panels.is_empty() {
            out.push((
                Lines {
                    title: title.into(),
                    panels,
                },
                name,
                format!("{what}{tail}"),
            ));
        }
    }
    Ok(out)
}

/// Per cell, the configurations it finished (trained to the pool's last unit), in order.
fn finished_configs(dir: &Path, units: u32) -> Result<BTreeMap<u64, Vec<u32>>> {
    let path = dir.join(crate::results::TRAJECTORIES);
    let df = crate::results::read_parquet(&path)?;
    let col = |name: &str| {
        df.column(name)
            .with_context(|| format!("{}: no column '{name}'", path.display()))
    };
    let cell = col("cell")?.u64()?.clone();
    let config = col("config")?.u32()?.clone();
    let fidelity = col("fidelity")?.u32()?.clone();
    let mut out: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for i in 0..df.height() {
        if let (Some(c), Some(k), Some(f)) = (cell.get(i), config.get(i), fidelity.get(i))
            && f >= units
        {
            out.entry(c).or_default().push(k);
        }
    }
    Ok(out)
}

/// `x` in the recorded orientation of objective `k` (minimised values of a maximised one are
/// negated back).
fn recorded(x: f64, maximize: bool) -> f64 {
    if maximize { -x } else { x }
}

/// A minimised point lies inside the box below the minimised reference point.
fn inside(p: &[f64; 2], reference: &[f64; 2]) -> bool {
    p[0] < reference[0] && p[1] < reference[1]
}

/// The nondominated points (minimised, flattened) of the configurations a cell finished, each
/// counted once, among those inside the reference box.
fn cell_front(
    finished: &[u32],
    point: &BTreeMap<usize, [f64; 2]>,
    reference: &[f64; 2],
) -> Vec<f64> {
    let mut seen = HashSet::new();
    let found: Vec<f64> = finished
        .iter()
        .filter(|&&c| seen.insert(c))
        .filter_map(|&c| point.get(&(c as usize)))
        .filter(|p| inside(p, reference))
        .flat_map(|p| p.iter().copied())
        .collect();
    nondominated(&found, 2)
        .into_iter()
        .flat_map(|k| [found[2 * k], found[2 * k + 1]])
        .collect()
}

/// A minimised front drawn as a staircase from the reference's top edge down to its right edge,
/// in the recorded orientation of each objective (`max`).
fn staircase(front: &[[f64; 2]], reference: [f64; 2], max: &[bool]) -> Vec<(f64, f64)> {
    let mut s: Vec<[f64; 2]> = front.to_vec();
    s.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let mut out = Vec::new();
    if let Some(first) = s.first() {
        out.push([first[0], reference[1]]);
    }
    for (i, p) in s.iter().enumerate() {
        if i > 0 {
            out.push([p[0], s[i - 1][1]]);
        }
        out.push(*p);
    }
    if let Some(last) = s.last() {
        out.push([reference[0], last[1]]);
    }
    out.iter()
        .map(|p| (recorded(p[0], max[0]), recorded(p[1], max[1])))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn task_panel(
    pool: &crate::trace::pool::Pool,
    mo: &LockObjectives,
    t: &crate::results::LockTaskReference,
    which: &[usize],
    runs: &[Run],
    policies: &[String],
    finished: &BTreeMap<u64, Vec<u32>>,
    label: &dyn Fn(&str) -> String,
    level: Level,
) -> Option<Panel> {
    let mut parts = t.task.split('/');
    let (dataset, run) = (parts.next()?, parts.next()?.parse::<i64>().ok()?);
    let ti = pool
        .tasks
        .iter()
        .position(|p| p.dataset == dataset && p.run == run)?;
    let (pts, configs) = pool.objective_points(ti, which);
    let point: BTreeMap<usize, [f64; 2]> = pts
        .chunks_exact(2)
        .zip(&configs)
        .map(|(p, &c)| (c, [p[0], p[1]]))
        .collect();
    let max: Vec<bool> = mo.directions.iter().map(|d| d == "maximize").collect();
    // The box from the ideal to the reference point, minimised.
    let reference = [
        recorded(t.reference[0], max[0]),
        recorded(t.reference[1], max[1]),
    ];
    let ideal = [recorded(t.ideal[0], max[0]), recorded(t.ideal[1], max[1])];
    let budget = runs
        .iter()
        .filter(|r| r.dataset == dataset && r.run == run)
        .map(|r| r.budget)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut series = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        let cells: Vec<Vec<f64>> = runs
            .iter()
            .filter(|r| {
                r.dataset == dataset && r.run == run && r.budget == budget && &r.policy == policy
            })
            .map(|r| {
                cell_front(
                    finished.get(&r.cell).map_or(&[], Vec::as_slice),
                    &point,
                    &reference,
                )
            })
            .collect();
        if cells.is_empty() {
            continue;
        }
        let refs: Vec<&[f64]> = cells.iter().map(Vec::as_slice).collect();
        let k = match level {
            Level::Median => level_of_percentile(50.0, refs.len()),
            Level::Best => 1,
        };
        let surface = attainment_surface(&refs, k);
        series.push(Series {
            name: label(policy),
            points: staircase(&surface, reference, &max),
            band: None,
            color: i,
            dashed: false,
        });
    }
    let front: Vec<[f64; 2]> = nondominated(&pts, 2)
        .into_iter()
        .map(|k| [pts[2 * k], pts[2 * k + 1]])
        .filter(|p| inside(p, &reference))
        .collect();
    series.push(Series {
        name: "true front".into(),
        points: staircase(&front, reference, &max),
        band: None,
        color: policies.len(),
        dashed: true,
    });
    let range = |k: usize| {
        let (a, b) = (recorded(ideal[k], max[k]), recorded(reference[k], max[k]));
        (a.min(b), a.max(b))
    };
    Some(Panel {
        caption: format!(
            "{} (budget {})",
            t.task,
            crate::report::figures::style::fmt_number(budget)
        ),
        x_desc: format!("{} ({})", mo.names[0], mo.directions[0]),
        y_desc: format!("{} ({})", mo.names[1], mo.directions[1]),
        x_range: range(0),
        y_range: range(1),
        log_x: false,
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_front_keeps_its_nondominated_points_inside_the_box_once() {
        let point: BTreeMap<usize, [f64; 2]> = [
            (0, [1.0, 3.0]),
            (1, [2.0, 2.0]),
            (2, [3.0, 3.0]), // dominated by 1
            (3, [0.5, 9.0]), // outside the box
        ]
        .into();
        let front = cell_front(&[2, 1, 0, 1, 3, 7], &point, &[5.0, 5.0]);
        let mut pairs: Vec<(f64, f64)> = front.chunks(2).map(|p| (p[0], p[1])).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(pairs, [(1.0, 3.0), (2.0, 2.0)]);
    }

    #[test]
    fn a_staircase_runs_from_the_references_top_edge_to_its_right_edge() {
        let s = staircase(&[[2.0, 2.0], [1.0, 3.0]], [5.0, 4.0], &[false, false]);
        assert_eq!(
            s,
            [(1.0, 4.0), (1.0, 3.0), (2.0, 3.0), (2.0, 2.0), (5.0, 2.0)]
        );
        // A maximised first objective is drawn in its recorded orientation: negated back.
        let s = staircase(&[[-2.0, 2.0]], [-1.0, 4.0], &[true, false]);
        assert_eq!(s, [(2.0, 4.0), (2.0, 2.0), (1.0, 2.0)]);
        assert!(staircase(&[], [1.0, 1.0], &[false, false]).is_empty());
    }
}
