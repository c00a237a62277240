//! Results of two objectives: per task, each policy's median attainment surface (Fonseca et al.
//! 2011; moocore's percentile rule) over its repetitions at the largest budget, beside the task's
//! true Pareto front, in the recorded units. The points come from the pool the lock file names
//! (checked by its content hash) and the configurations each cell finished (trajectories.parquet).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::figures::{Lines, Panel, Region, Series};
use crate::pareto::{
    DiffRect, attainment_surface, eaf_difference, level_of_percentile, nondominated,
};
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
    eaf_pair: Option<&str>,
) -> Result<Vec<(Lines, &'static str, String)>> {
    let lock_path = dir.join(crate::results::LOCK);
    let two = crate::results::read_lock_file(&lock_path)?
        .and_then(|lock| Some((lock.resolved.objectives.clone()?, lock)))
        .filter(|(mo, _)| mo.names.len() == 2);
    let Some((mo, lock)) = two else {
        if eaf_pair.is_some() {
            bail!(
                "--eaf-diff applies to results of two objectives; {} holds other results",
                dir.display()
            );
        }
        return Ok(Vec::new());
    };
    let tdir = Path::new(&lock.resolved.trace_dir);
    if tdir.join("traceset.toml").is_file() {
        // A learner-level world archives evaluations, which trajectories.parquet does not name:
        // its fronts are not drawn (its anytime hypervolume regret is).
        if eaf_pair.is_some() {
            bail!(
                "--eaf-diff draws the archives of a pool experiment; {} replays the trace set {} in a learner-level world, whose archives the results do not hold",
                dir.display(),
                tdir.display()
            );
        }
        return Ok(Vec::new());
    }
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
    let pair = match eaf_pair {
        Some(text) => Some(eaf_pair_of(text, policies, label)?),
        None => (policies.len() >= 2).then(|| [policies[0].clone(), policies[1].clone()]),
    };
    if let Some(pair) = pair {
        let chosen = if eaf_pair.is_some() {
            "the pair --eaf-diff names"
        } else {
            "the two best-ranked policies"
        };
        let policies = &pair[..];
        let panels: Vec<Panel> = mo
            .tasks
            .iter()
            .take(MAX_PANELS)
            .filter_map(|t| {
                let g = geometry(&pool, &mo, t, &which, runs)?;
                difference_panel(&g, &mo, t, runs, policies, &finished, label)
            })
            .collect();
        if !panels.is_empty() {
            out.push((
                Lines {
                    title: "EAF differences".into(),
                    panels,
                },
                "eaf_diff",
                format!(
                    "Where {} attains more often than {} (in its colour) and the reverse (in the other's): the difference of their empirical attainment functions (López-Ibáñez, Paquete & Stützle 2010) over the repetitions at the largest budget, darker where it is larger, with each one's median attainment surface; {chosen} are compared{tail}",
                    label(&policies[0]),
                    label(&policies[1])
                ),
            ));
        }
    }
    Ok(out)
}

/// The two policies "A,B" names (each a policy id or its figure label; the comma between them is
/// the first outside parentheses, as ids hold commas inside theirs).
fn eaf_pair_of(
    text: &str,
    policies: &[String],
    label: &dyn Fn(&str) -> String,
) -> Result<[String; 2]> {
    let mut depth = 0i32;
    let split = text.char_indices().find_map(|(i, c)| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => return Some(i),
            _ => {}
        }
        None
    });
    let Some(at) = split else {
        bail!("--eaf-diff '{text}': give two policies separated by a comma, e.g. --eaf-diff A,B");
    };
    let known = || {
        policies
            .iter()
            .map(|p| label(p))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let find = |name: &str| -> Result<String> {
        let name = name.trim();
        policies
            .iter()
            .find(|p| p.as_str() == name || label(p) == name)
            .cloned()
            .with_context(|| {
                format!(
                    "--eaf-diff names '{name}', which is no policy of these results; they are: {}",
                    known()
                )
            })
    };
    let (a, b) = (find(&text[..at])?, find(&text[at + 1..])?);
    if a == b {
        bail!("--eaf-diff '{text}' names one policy twice; give two different ones");
    }
    Ok([a, b])
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

/// A task's points and box, as the figures read them.
struct Geometry {
    dataset: String,
    run: i64,
    /// The task's points (minimised, flattened) and, per configuration, its point.
    pts: Vec<f64>,
    point: BTreeMap<usize, [f64; 2]>,
    /// Per objective: maximised.
    max: Vec<bool>,
    /// The minimised reference point and ideal.
    reference: [f64; 2],
    ideal: [f64; 2],
    /// The largest budget of the task's cells.
    budget: f64,
}

fn geometry(
    pool: &crate::trace::pool::Pool,
    mo: &LockObjectives,
    t: &crate::results::LockTaskReference,
    which: &[usize],
    runs: &[Run],
) -> Option<Geometry> {
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
    Some(Geometry {
        dataset: dataset.to_string(),
        run,
        pts,
        point,
        max,
        reference,
        ideal,
        budget,
    })
}

impl Geometry {
    /// The final fronts of `policy`'s cells on the task at the largest budget.
    fn fronts(
        &self,
        runs: &[Run],
        policy: &str,
        finished: &BTreeMap<u64, Vec<u32>>,
    ) -> Vec<Vec<f64>> {
        runs.iter()
            .filter(|r| {
                r.dataset == self.dataset
                    && r.run == self.run
                    && r.budget == self.budget
                    && r.policy == policy
            })
            .map(|r| {
                cell_front(
                    finished.get(&r.cell).map_or(&[], Vec::as_slice),
                    &self.point,
                    &self.reference,
                )
            })
            .collect()
    }

    /// The task's true front, dashed.
    fn true_front(&self, color: usize) -> Series {
        let front: Vec<[f64; 2]> = nondominated(&self.pts, 2)
            .into_iter()
            .map(|k| [self.pts[2 * k], self.pts[2 * k + 1]])
            .filter(|p| inside(p, &self.reference))
            .collect();
        Series {
            name: "true front".into(),
            points: staircase(&front, self.reference, &self.max),
            band: None,
            color,
            dashed: true,
        }
    }

    fn panel(
        &self,
        t: &crate::results::LockTaskReference,
        mo: &LockObjectives,
        series: Vec<Series>,
        regions: Vec<Region>,
    ) -> Panel {
        let range = |k: usize| {
            let (a, b) = (
                recorded(self.ideal[k], self.max[k]),
                recorded(self.reference[k], self.max[k]),
            );
            (a.min(b), a.max(b))
        };
        Panel {
            caption: format!(
                "{} (budget {})",
                t.task,
                crate::report::figures::style::fmt_number(self.budget)
            ),
            x_desc: format!("{} ({})", mo.names[0], mo.directions[0]),
            y_desc: format!("{} ({})", mo.names[1], mo.directions[1]),
            x_range: range(0),
            y_range: range(1),
            log_x: false,
            series,
            regions,
        }
    }
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
    let g = geometry(pool, mo, t, which, runs)?;
    let mut series = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        let cells = g.fronts(runs, policy, finished);
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
            points: staircase(&surface, g.reference, &g.max),
            band: None,
            color: i,
            dashed: false,
        });
    }
    series.push(g.true_front(policies.len()));
    Some(g.panel(t, mo, series, Vec::new()))
}

/// The EAF difference of the first two `policies` on a task: where the first attains more often,
/// in its colour, and the second, in its own, darker where the difference is larger; each one's
/// median attainment surface and the true front drawn over it.
fn difference_panel(
    g: &Geometry,
    mo: &LockObjectives,
    t: &crate::results::LockTaskReference,
    runs: &[Run],
    policies: &[String],
    finished: &BTreeMap<u64, Vec<u32>>,
    label: &dyn Fn(&str) -> String,
) -> Option<Panel> {
    let (a, b) = (
        g.fronts(runs, &policies[0], finished),
        g.fronts(runs, &policies[1], finished),
    );
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let ra: Vec<&[f64]> = a.iter().map(Vec::as_slice).collect();
    let rb: Vec<&[f64]> = b.iter().map(Vec::as_slice).collect();
    let regions = difference_regions(&eaf_difference(&ra, &rb), g.reference, &g.max);
    let mut series = Vec::new();
    for (i, refs) in [&ra, &rb].into_iter().enumerate() {
        let surface = attainment_surface(refs, level_of_percentile(50.0, refs.len()));
        series.push(Series {
            name: label(&policies[i]),
            points: staircase(&surface, g.reference, &g.max),
            band: None,
            color: i,
            dashed: false,
        });
    }
    series.push(g.true_front(2));
    Some(g.panel(t, mo, series, regions))
}

/// EAF-difference rectangles (minimised) as regions inside the reference box, in the recorded
/// orientation: colour 0 where the first policy attains more often, 1 where the second does,
/// opacity 0.15 + 0.65 |difference|.
fn difference_regions(rects: &[DiffRect], reference: [f64; 2], max: &[bool]) -> Vec<Region> {
    rects
        .iter()
        .filter(|r| r.x0 < reference[0] && r.y0 < reference[1])
        .map(|r| Region {
            x0: recorded(r.x0, max[0]),
            y0: recorded(r.y0, max[1]),
            x1: recorded(r.x1.min(reference[0]), max[0]),
            y1: recorded(r.y1.min(reference[1]), max[1]),
            color: usize::from(r.diff < 0.0),
            alpha: 0.15 + 0.65 * r.diff.abs().min(1.0),
            value: r.diff,
        })
        .collect()
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
