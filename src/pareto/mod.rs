//! Several objectives: Pareto dominance, the exact hypervolume (static and incremental), the
//! distance indicators IGD+ and additive ε against a reference set, and the empirical attainment
//! function's surfaces over repeated runs (issue #46).
//!
//! Every function here **minimises** every objective, as moocore does; a caller turns an
//! objective to maximise around (`-x`, and `-r` for its reference coordinate) before calling.
//! A set of `n` points in `d` objectives is a flat row-major slice of `n · d` numbers, `d` being
//! the reference point's length (`reference.len()`), so no allocation per point is needed.
//!
//! A point counts towards the hypervolume only when it is strictly better than the reference
//! point in every objective (moocore's rule: the others dominate nothing in the reference box).
//! NaN is refused by the callers that read data (an infeasible evaluation never enters an
//! archive); here a NaN coordinate makes a point count for nothing.
//!
//! The methods, each exact:
//! - d = 1 and 2: a sweep over the points sorted by the first objective, O(n log n);
//! - d = 3: the dimension sweep of Beume, Fonseca, López-Ibáñez, Paquete & Vahrenhold (2009,
//!   "On the complexity of computing the hypervolume indicator", IEEE TEC 13(5)): the points in
//!   order of the third objective, each slab's area kept by the incremental two-objective front
//!   [`Front2`], O(n log n);
//! - d ≥ 4: WFG (While, Bradstreet & Barone 2012, "A fast way of calculating exact
//!   hypervolumes", IEEE TEC 16(1)): the sum of the points' exclusive hypervolumes, each the
//!   point's box less the hypervolume of its limit set, with the last objective taken out by
//!   processing the points from worst to best in it, down to the three-objective sweep.
//!
//! Golden values: `tests/pareto.rs` against moocore 0.3.2 (`scripts/reference/moocore_golden.py`).
//!
//! ```
//! use banditbench::pareto::{hypervolume, hypervolume_history, igd_plus};
//! // Three evaluations of (error, seconds), both minimised; the reference point is fixed first.
//! let run = [0.5, 30.0, 0.25, 80.0, 0.375, 20.0];
//! let reference = [1.0, 100.0];
//! // The third evaluation dominates the first, which leaves the archive.
//! assert_eq!(hypervolume_history(&run, &reference), [35.0, 40.0, 52.5]);
//! assert_eq!(hypervolume(&run, &reference), 52.5);
//! // Against a reference set of one point: the third evaluation is 0.125 worse in error.
//! assert_eq!(igd_plus(&run, &[0.25, 20.0], 2), 0.125);
//! ```

mod archive;
mod distance;
mod eaf;
mod hypervolume;
mod sort;

pub use archive::{Archive, Front2, hypervolume_history};
pub use distance::{epsilon_additive, igd_plus};
pub use eaf::{DiffRect, attainment_surface, difference_at, eaf_difference, level_of_percentile};
pub use hypervolume::hypervolume;
pub use sort::{
    crowded_order, crowding_distance, epsilon_net, nondominated_fronts, nondominated_order,
};

/// `values` in the recorded orientation turned minimised (each maximised objective negated), or
/// None when one is not a finite number or their count is not `maximize`'s (an infeasible or
/// failed result: never in an archive or a population).
pub fn minimised(values: &[f64], maximize: &[bool]) -> Option<Vec<f64>> {
    (values.len() == maximize.len() && values.iter().all(|x| x.is_finite())).then(|| {
        values
            .iter()
            .zip(maximize)
            .map(|(&x, &max)| if max { -x } else { x })
            .collect()
    })
}

/// `a` weakly dominates `b` (no worse in every objective), minimising.
#[inline]
pub fn weakly_dominates(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y)
}

/// `a` dominates `b`: no worse in every objective and better in one, minimising.
#[inline]
pub fn dominates(a: &[f64], b: &[f64]) -> bool {
    weakly_dominates(a, b) && a.iter().zip(b).any(|(x, y)| x < y)
}

/// The indices of the points of `points` (flat, `d` objectives) that no other point dominates,
/// each distinct point once (of equal points, the first), in their original order.
pub fn nondominated(points: &[f64], d: usize) -> Vec<usize> {
    assert!(
        d > 0 && points.len().is_multiple_of(d),
        "points of {d} objectives"
    );
    let n = points.len() / d;
    let row = |i: usize| &points[i * d..(i + 1) * d];
    // Sorted lexicographically, a point can only be weakly dominated by one before it.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| lex(row(a), row(b)).then(a.cmp(&b)));
    let mut kept: Vec<usize> = Vec::new();
    for &i in &order {
        if row(i).iter().any(|x| x.is_nan()) {
            continue;
        }
        if !kept.iter().any(|&k| weakly_dominates(row(k), row(i))) {
            kept.push(i);
        }
    }
    kept.sort_unstable();
    kept
}

fn lex(a: &[f64], b: &[f64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.total_cmp(y) {
            std::cmp::Ordering::Equal => continue,
            o => return o,
        }
    }
    std::cmp::Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nondominated_keeps_one_of_equal_points_and_drops_the_dominated() {
        let p = [1.0, 3.0, 2.0, 2.0, 1.0, 3.0, 3.0, 3.0, 0.5, 4.0, 2.0, 2.5];
        assert_eq!(nondominated(&p, 2), vec![0, 1, 4]);
        assert!(dominates(&[1.0, 2.0], &[1.0, 3.0]));
        assert!(!dominates(&[1.0, 2.0], &[1.0, 2.0]));
        assert!(weakly_dominates(&[1.0, 2.0], &[1.0, 2.0]));
    }
}
