//! Distances from a set of points to a reference set (usually the true Pareto front), minimised.

/// IGD+ (Ishibuchi, Masuda, Tanigaki & Nojima 2015, "Modified distance calculation in
/// generational distance and inverted generational distance", EMO): the mean, over the points
/// `z` of `reference_set`, of the distance from `z` to the nearest point `a` of `points`
/// counting only where `a` is worse, `sqrt(Σ max(a_i − z_i, 0)²)`. Pareto-compliant; 0 when
/// `points` weakly dominates the whole reference set. Infinity when `points` is empty.
pub fn igd_plus(points: &[f64], reference_set: &[f64], d: usize) -> f64 {
    assert!(d > 0 && points.len().is_multiple_of(d) && reference_set.len().is_multiple_of(d));
    let n = reference_set.len() / d;
    if n == 0 {
        return 0.0;
    }
    let total: f64 = reference_set
        .chunks_exact(d)
        .map(|z| {
            points
                .chunks_exact(d)
                .map(|a| {
                    a.iter()
                        .zip(z)
                        .map(|(x, y)| (x - y).max(0.0).powi(2))
                        .sum::<f64>()
                        .sqrt()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    total / n as f64
}

/// The additive ε indicator (Zitzler, Thiele, Laumanns, Fonseca & Grunert da Fonseca 2003,
/// "Performance assessment of multiobjective optimizers", IEEE TEC 7(2)): the smallest ε by
/// which `points` must be shifted to weakly dominate every point of `reference_set`,
/// `max_z min_a max_i (a_i − z_i)`. Infinity when `points` is empty.
pub fn epsilon_additive(points: &[f64], reference_set: &[f64], d: usize) -> f64 {
    assert!(d > 0 && points.len().is_multiple_of(d) && reference_set.len().is_multiple_of(d));
    reference_set
        .chunks_exact(d)
        .map(|z| {
            points
                .chunks_exact(d)
                .map(|a| {
                    a.iter()
                        .zip(z)
                        .map(|(x, y)| x - y)
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .fold(f64::INFINITY, f64::min)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// moocore's documented example of Ishibuchi et al.'s Example 4: IGD+(A) < IGD+(B).
    #[test]
    fn ishibuchi_example_4() {
        let z = [10.0, 0.0, 6.0, 1.0, 2.0, 2.0, 1.0, 6.0, 0.0, 10.0];
        let a = [4.0, 2.0, 3.0, 3.0, 2.0, 4.0];
        let b = [8.0, 2.0, 4.0, 4.0, 2.0, 8.0];
        assert!((igd_plus(&a, &z, 2) - 1.482842712474619).abs() < 1e-15);
        assert!((igd_plus(&b, &z, 2) - 2.260112615949154).abs() < 1e-15);
        let dat = [3.5, 5.5, 3.6, 4.1, 4.1, 3.2, 5.5, 1.5];
        let r = [1.0, 6.0, 2.0, 5.0, 3.0, 4.0, 4.0, 3.0, 5.0, 2.0, 6.0, 1.0];
        assert!((igd_plus(&dat, &r, 2) - 0.9855036468106652).abs() < 1e-15);
        assert_eq!(epsilon_additive(&a, &a, 2), 0.0);
        assert_eq!(epsilon_additive(&[1.0, 1.0], &[0.0, 0.5], 2), 1.0);
    }
}
