//! The empirical attainment function of two minimised objectives over repeated runs (Grunert da
//! Fonseca, Fonseca & Hall 2001, "Inferential performance assessment of stochastic optimisers
//! and the attainment function", EMO): the k-th attainment surface is the boundary of what at
//! least k of the n runs attain (weakly dominate). The median surface is k = ⌈n/2⌉; the best
//! and worst, k = 1 and k = n. Computed as Fonseca, Guerreiro, López-Ibáñez & Paquete (2011,
//! "On the computation of the empirical attainment function", EMO) do in two objectives: one
//! sweep over the points by the first objective, each run's best second objective so far, and
//! the k-th smallest of those, Θ(m log m + n·m) for m points in n runs.

/// The attainment level of `percentile` (0–100) over `runs` runs, as moocore counts it:
/// ⌈runs · percentile / 100⌉ (within √ε of an integer, that integer), at least 1.
pub fn level_of_percentile(percentile: f64, runs: usize) -> usize {
    let x = runs as f64 * percentile / 100.0;
    let level = if x - x.floor() <= f64::EPSILON.sqrt() {
        x.floor()
    } else {
        x.ceil()
    };
    (level as usize).clamp(1, runs.max(1))
}

/// The k-th attainment surface (1 ≤ k ≤ number of runs) of `runs`, each a flat slice of
/// two-objective points (minimised): its minimal points, by the first objective ascending (the
/// second then falls). A point with NaN is never attained.
pub fn attainment_surface(runs: &[&[f64]], k: usize) -> Vec<[f64; 2]> {
    let n = runs.len();
    assert!(k >= 1 && k <= n, "level {k} of {n} runs");
    let mut points: Vec<(f64, f64, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(r, run)| {
            assert!(run.len().is_multiple_of(2), "points of 2 objectives");
            run.chunks_exact(2).map(move |p| (p[0], p[1], r))
        })
        .filter(|(x, y, _)| !x.is_nan() && !y.is_nan())
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best = vec![f64::INFINITY; n];
    let mut scratch = vec![0.0; n];
    let mut surface = Vec::new();
    let mut level = f64::INFINITY;
    let mut i = 0;
    while i < points.len() {
        let x = points[i].0;
        // Every point at this first objective counts before the level is read.
        while i < points.len() && points[i].0 == x {
            let (_, y, r) = points[i];
            best[r] = best[r].min(y);
            i += 1;
        }
        scratch.copy_from_slice(&best);
        let (_, kth, _) = scratch.select_nth_unstable_by(k - 1, |a, b| a.total_cmp(b));
        if *kth < level {
            level = *kth;
            surface.push([x, level]);
        }
    }
    surface
}

/// One rectangle of an EAF difference, [x0, x1) × [y0, y1) (x1 or y1 may be +∞), on which the
/// share of A's runs that attain every point minus the share of B's is `diff` (positive: A
/// attains it more often).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffRect {
    /// Left edge (included).
    pub x0: f64,
    /// Lower edge (included).
    pub y0: f64,
    /// Right edge (excluded; +∞ past the last point).
    pub x1: f64,
    /// Upper edge (excluded; +∞ past the last point).
    pub y1: f64,
    /// EAF_A − EAF_B on the rectangle.
    pub diff: f64,
}

/// Per distinct first objective x (ascending) of every point of `all`, each run's best second
/// objective among its points with first objective ≤ x: one row of `runs.len()` values per x.
fn best_so_far(runs: &[&[f64]], xs: &[f64]) -> Vec<Vec<f64>> {
    let mut points: Vec<(f64, f64, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(r, run)| run.chunks_exact(2).map(move |p| (p[0], p[1], r)))
        .filter(|(x, y, _)| !x.is_nan() && !y.is_nan())
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best = vec![f64::INFINITY; runs.len()];
    let mut i = 0;
    xs.iter()
        .map(|&x| {
            while i < points.len() && points[i].0 <= x {
                let (_, y, r) = points[i];
                best[r] = best[r].min(y);
                i += 1;
            }
            best.clone()
        })
        .collect()
}

/// The difference of the empirical attainment functions of the runs of `a` and of `b` (two
/// minimised objectives, each run a flat slice of points), as López-Ibáñez, Paquete & Stützle
/// (2010, "Exploratory analysis of stochastic local search algorithms in biobjective
/// optimization") draw it: EAF_A(z) − EAF_B(z), the share of A's runs that attain z minus the
/// share of B's. The function is constant on the cells of the grid of every point's
/// coordinates; cells of one column with the same value are merged, and cells where it is 0 are
/// left out. moocore's `eafdiff` gives the difference in counts (equal to this times the number
/// of runs when both have as many).
pub fn eaf_difference(a: &[&[f64]], b: &[&[f64]]) -> Vec<DiffRect> {
    let coords = |k: usize| {
        let mut v: Vec<f64> = a
            .iter()
            .chain(b)
            .flat_map(|run| run.chunks_exact(2).map(move |p| p[k]))
            .filter(|v| !v.is_nan())
            .collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let (xs, ys) = (coords(0), coords(1));
    let (ba, bb) = (best_so_far(a, &xs), best_so_far(b, &xs));
    let share = |best: &[f64], y: f64, n: usize| {
        best.iter().filter(|&&m| m <= y).count() as f64 / n.max(1) as f64
    };
    let mut out = Vec::new();
    for (i, &x0) in xs.iter().enumerate() {
        let x1 = xs.get(i + 1).copied().unwrap_or(f64::INFINITY);
        let mut open: Option<(f64, f64)> = None;
        for &y in &ys {
            let d = share(&ba[i], y, a.len()) - share(&bb[i], y, b.len());
            match open {
                Some((_, v)) if v == d => {}
                Some((y0, v)) => {
                    if v != 0.0 {
                        out.push(DiffRect {
                            x0,
                            y0,
                            x1,
                            y1: y,
                            diff: v,
                        });
                    }
                    open = Some((y, d));
                }
                None => open = Some((y, d)),
            }
        }
        if let Some((y0, v)) = open
            && v != 0.0
        {
            out.push(DiffRect {
                x0,
                y0,
                x1,
                y1: f64::INFINITY,
                diff: v,
            });
        }
    }
    out
}

/// The value of an EAF difference at `z`: the rectangle holding it, else 0.
pub fn difference_at(rects: &[DiffRect], z: [f64; 2]) -> f64 {
    rects
        .iter()
        .find(|r| r.x0 <= z[0] && z[0] < r.x1 && r.y0 <= z[1] && z[1] < r.y1)
        .map_or(0.0, |r| r.diff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surfaces_of_two_runs_by_hand() {
        let a = [1.0, 3.0, 3.0, 1.0];
        let b = [2.0, 2.0];
        // Attained by one run: every point is on the best surface.
        assert_eq!(
            attainment_surface(&[&a, &b], 1),
            vec![[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]]
        );
        // By both: corners where each run has attained.
        assert_eq!(
            attainment_surface(&[&a, &b], 2),
            vec![[2.0, 3.0], [3.0, 2.0]]
        );
        assert_eq!(level_of_percentile(50.0, 2), 1);
        assert_eq!(level_of_percentile(50.0, 3), 2);
        assert_eq!(level_of_percentile(0.0, 3), 1);
        assert_eq!(level_of_percentile(100.0, 3), 3);
    }
}

#[cfg(test)]
mod difference {
    //! Against moocore 0.3.2's `eafdiff` (`tests/golden/eafdiff.json`, made by
    //! `scripts/reference/eafdiff_golden.py`): its documented example and 40 random pairs of run
    //! sets with tied coordinates, at 100 query points each.
    use super::*;
    use serde_json::Value;

    fn runs(v: &Value) -> Vec<Vec<f64>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn eaf_differences_equal_moocores() {
        let g: Value =
            serde_json::from_str(include_str!("../../tests/golden/eafdiff.json")).unwrap();
        let mut checked = 0;
        for (i, c) in g["cases"].as_array().unwrap().iter().enumerate() {
            let (a, b) = (runs(&c["a"]), runs(&c["b"]));
            assert_eq!(a.len(), b.len());
            let ra: Vec<&[f64]> = a.iter().map(Vec::as_slice).collect();
            let rb: Vec<&[f64]> = b.iter().map(Vec::as_slice).collect();
            let rects = eaf_difference(&ra, &rb);
            for (q, want) in c["queries"]
                .as_array()
                .unwrap()
                .iter()
                .zip(c["values"].as_array().unwrap())
            {
                let q = q.as_array().unwrap();
                let z = [q[0].as_f64().unwrap(), q[1].as_f64().unwrap()];
                let ours = difference_at(&rects, z) * a.len() as f64;
                let want = want.as_f64().unwrap();
                assert!(
                    (ours - want).abs() < 1e-9,
                    "case {i} at {z:?}: {ours} against moocore's {want}"
                );
                checked += 1;
            }
            // Rectangles do not overlap: every query lies in at most one.
            for q in c["queries"].as_array().unwrap() {
                let q = q.as_array().unwrap();
                let z = [q[0].as_f64().unwrap(), q[1].as_f64().unwrap()];
                let holding = rects
                    .iter()
                    .filter(|r| r.x0 <= z[0] && z[0] < r.x1 && r.y0 <= z[1] && z[1] < r.y1)
                    .count();
                assert!(holding <= 1, "case {i}: {holding} rectangles hold {z:?}");
            }
        }
        assert_eq!(checked, 41 * 100);
    }

    #[test]
    fn a_difference_by_hand() {
        // A attains (1, 1) in both runs; B attains (2, 2) in one of two.
        let (a1, a2) = ([1.0, 1.0], [1.0, 1.0]);
        let b1 = [2.0, 2.0];
        let b2: [f64; 0] = [];
        let r = eaf_difference(&[&a1, &a2], &[&b1, &b2]);
        assert_eq!(difference_at(&r, [1.5, 1.5]), 1.0);
        assert_eq!(difference_at(&r, [2.5, 2.5]), 0.5);
        assert_eq!(difference_at(&r, [0.5, 3.0]), 0.0);
    }
}
