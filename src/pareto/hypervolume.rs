//! The exact hypervolume of a set of points (see the module above for the methods).

use super::archive::Front2;
use super::nondominated;

/// The hypervolume that the points of `points` (flat, `reference.len()` objectives, minimised)
/// dominate within the box bounded by `reference`. Points not strictly better than the reference
/// in every objective add nothing.
pub fn hypervolume(points: &[f64], reference: &[f64]) -> f64 {
    let d = reference.len();
    assert!(
        d > 0 && points.len().is_multiple_of(d),
        "points of {d} objectives"
    );
    let inside: Vec<f64> = points
        .chunks_exact(d)
        .filter(|p| p.iter().zip(reference).all(|(x, r)| x < r))
        .flatten()
        .copied()
        .collect();
    hv_inside(inside, reference)
}

/// The hypervolume of points each strictly inside the reference box.
pub(super) fn hv_inside(mut points: Vec<f64>, reference: &[f64]) -> f64 {
    let d = reference.len();
    if points.is_empty() {
        return 0.0;
    }
    match d {
        1 => reference[0] - points.iter().copied().fold(f64::INFINITY, f64::min),
        2 => sweep2(&mut points, reference),
        3 => sweep3(&points, reference),
        _ => wfg(points, reference),
    }
}

/// Two objectives: by the first ascending, each point adds the strip between its second
/// objective and the lowest second objective before it.
fn sweep2(points: &mut [f64], reference: &[f64]) -> f64 {
    let mut rows: Vec<(f64, f64)> = points.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let (rx, mut low) = (reference[0], reference[1]);
    let mut hv = 0.0;
    for (x, y) in rows {
        if y < low {
            hv += (rx - x) * (low - y);
            low = y;
        }
    }
    hv
}

/// Three objectives: by the third ascending, the area of the two-objective front of the points
/// so far times the height of each slab.
fn sweep3(points: &[f64], reference: &[f64]) -> f64 {
    let mut rows: Vec<&[f64]> = points.chunks_exact(3).collect();
    rows.sort_by(|a, b| a[2].total_cmp(&b[2]));
    let mut front = Front2::new([reference[0], reference[1]]);
    let mut hv = 0.0;
    for (i, p) in rows.iter().enumerate() {
        front.insert(p[0], p[1]);
        let top = rows.get(i + 1).map_or(reference[2], |q| q[2]);
        hv += front.hypervolume() * (top - p[2]);
    }
    hv
}

/// d ≥ 4: WFG. By the last objective from worst to best, each point's exclusive hypervolume
/// against the points after it (better in the last objective, so that their limit points all
/// share the point's own last coordinate) is its slab height times the (d−1)-objective
/// exclusive hypervolume of its projection.
fn wfg(points: Vec<f64>, reference: &[f64]) -> f64 {
    let d = reference.len();
    let keep = nondominated(&points, d);
    let mut rows: Vec<&[f64]> = keep.iter().map(|&i| &points[i * d..(i + 1) * d]).collect();
    rows.sort_by(|a, b| b[d - 1].total_cmp(&a[d - 1]));
    let lower = &reference[..d - 1];
    let mut hv = 0.0;
    let mut limit: Vec<f64> = Vec::new();
    for (i, p) in rows.iter().enumerate() {
        let height = reference[d - 1] - p[d - 1];
        let boxed: f64 = p[..d - 1].iter().zip(lower).map(|(x, r)| r - x).product();
        limit.clear();
        for q in &rows[i + 1..] {
            limit.extend(p[..d - 1].iter().zip(&q[..d - 1]).map(|(a, b)| a.max(*b)));
        }
        // Limit points on the reference boundary dominate nothing inside the box.
        let inside: Vec<f64> = limit
            .chunks_exact(d - 1)
            .filter(|l| l.iter().zip(lower).all(|(x, r)| x < r))
            .flatten()
            .copied()
            .collect();
        hv += height * (boxed - hv_inside(inside, lower));
    }
    hv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_by_hand() {
        assert_eq!(
            hypervolume(&[1.0, 0.0, 1.0, 0.0, 1.0, 0.0], &[2.0, 2.0, 2.0]),
            5.0
        );
        assert_eq!(hypervolume(&[1.0, 1.0], &[2.0, 3.0]), 2.0);
        // Outside the box, on its boundary, and dominated points add nothing.
        assert_eq!(
            hypervolume(&[1.0, 1.0, 2.0, 0.0, 3.0, 3.0, 1.5, 1.5], &[2.0, 3.0]),
            2.0
        );
        assert_eq!(hypervolume(&[], &[1.0, 1.0]), 0.0);
        assert_eq!(hypervolume(&[0.25], &[1.0]), 0.75);
        // Four objectives: two unit-overlap boxes in the cube of side 2.
        let p = [0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0];
        assert_eq!(hypervolume(&p, &[2.0; 4]), 2.0 + 2.0 - 1.0);
    }
}
