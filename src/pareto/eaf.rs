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
