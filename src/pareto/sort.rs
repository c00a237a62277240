//! Non-dominated sorting with an ε-net inside each front: the order in which MO-ASHA promotes
//! (Salinas, Perrone, Archambeau & Cruchant 2021, "A multi-objective perspective on jointly
//! tuning hardware and hyperparameters", NAS workshop at ICLR; Schmucker, Donini, Zafar,
//! Perrone & Archambeau 2021, "Multi-objective multi-fidelity hyperparameter optimization with
//! application to fairness").
//!
//! The points are peeled front by front (NSGA-II's non-dominated sorting, Deb et al. 2002): a
//! front holds every remaining point that no remaining point dominates, so equal points share a
//! front. Within a front the points are ordered as an ε-net (Clarkson 2005, "Nearest-neighbor
//! searching and metric space dimensions", p. 17): the point best in objective `seed_dim` first
//! (the earliest of equals), then, again and again, the point farthest (Euclidean) from those
//! already ordered, the earliest on a tie. Syne Tune 0.16.0 computes the same fronts and ε-net
//! (`pareto_efficient`, `compute_epsilon_net`); `tests/pareto.rs` checks both against it.

/// The fronts of `n = points.len() / d` points (minimised; a point with a NaN is in none), best
/// first, each in index order.
pub fn nondominated_fronts(points: &[f64], d: usize) -> Vec<Vec<usize>> {
    assert!(
        d > 0 && points.len().is_multiple_of(d),
        "points of {d} objectives"
    );
    let row = |i: usize| &points[i * d..(i + 1) * d];
    let mut left: Vec<usize> = (0..points.len() / d)
        .filter(|&i| !row(i).iter().any(|x| x.is_nan()))
        .collect();
    let mut fronts = Vec::new();
    while !left.is_empty() {
        let (front, rest): (Vec<usize>, Vec<usize>) = left
            .iter()
            .partition(|&&i| !left.iter().any(|&j| super::dominates(row(j), row(i))));
        fronts.push(front);
        left = rest;
    }
    fronts
}

/// `members` (indices of points of `d` objectives) ordered as an ε-net: the member best in
/// objective `seed_dim` first, then each time the member farthest from the ordered ones.
pub fn epsilon_net(points: &[f64], d: usize, members: &[usize], seed_dim: usize) -> Vec<usize> {
    let row = |i: usize| &points[i * d..(i + 1) * d];
    let Some(&first) = members.iter().min_by(|&&a, &&b| {
        row(a)[seed_dim]
            .total_cmp(&row(b)[seed_dim])
            .then(a.cmp(&b))
    }) else {
        return Vec::new();
    };
    let dist = |a: usize, b: usize| -> f64 {
        row(a)
            .iter()
            .zip(row(b))
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    };
    let mut order = vec![first];
    // Each member not yet ordered, with its distance to the nearest ordered one.
    let mut left: Vec<(usize, f64)> = members
        .iter()
        .filter(|&&m| m != first)
        .map(|&m| (m, dist(m, first)))
        .collect();
    left.sort_by_key(|&(m, _)| m);
    while !left.is_empty() {
        let mut best = 0;
        for (k, &(_, dk)) in left.iter().enumerate() {
            if dk > left[best].1 {
                best = k;
            }
        }
        let (chosen, _) = left.remove(best);
        order.push(chosen);
        for (m, dm) in &mut left {
            *dm = dm.min(dist(*m, chosen));
        }
    }
    order
}

/// NSGA-II's crowding distance of each of `members` (Deb, Pratap, Agarwal & Meyarivan 2002,
/// §III-B), as Optuna 5.0.0 computes it (`_calc_crowding_distance`): per objective, the members
/// sorted by it; when all are equal the objective adds nothing; otherwise each member adds the gap
/// between its two neighbours divided by the objective's range over the members, and the first
/// and last add infinity. Equal neighbours add 0 (Optuna's `inf - inf` rule). The distances are
/// returned in the order of `members`.
pub fn crowding_distance(points: &[f64], d: usize, members: &[usize]) -> Vec<f64> {
    let m = members.len();
    let mut out = vec![0.0; m];
    let mut order: Vec<usize> = (0..m).collect();
    for j in 0..d {
        let v = |k: usize| points[members[k] * d + j];
        order.sort_by(|&a, &b| v(a).total_cmp(&v(b)));
        if m == 0 || v(order[0]) == v(order[m - 1]) {
            continue;
        }
        let width = v(order[m - 1]) - v(order[0]);
        let width = if width > 0.0 { width } else { 1.0 };
        for pos in 0..m {
            let below = if pos == 0 {
                f64::NEG_INFINITY
            } else {
                v(order[pos - 1])
            };
            let above = if pos + 1 == m {
                f64::INFINITY
            } else {
                v(order[pos + 1])
            };
            let gap = if below == above { 0.0 } else { above - below };
            out[order[pos]] += gap / width;
        }
    }
    out
}

/// Every point without a NaN, best first: front by front, each front as an ε-net seeded by
/// objective `seed_dim`.
pub fn nondominated_order(points: &[f64], d: usize, seed_dim: usize) -> Vec<usize> {
    nondominated_fronts(points, d)
        .iter()
        .flat_map(|f| epsilon_net(points, d, f, seed_dim))
        .collect()
}

/// Every point without a NaN, best first as NSGA-II selects (Deb et al. 2002): front by front,
/// each front by descending crowding distance (the extremes first), ties in the points' order.
pub fn crowded_order(points: &[f64], d: usize) -> Vec<usize> {
    nondominated_fronts(points, d)
        .iter()
        .flat_map(|f| {
            let c = crowding_distance(points, d, f);
            let mut by: Vec<usize> = (0..f.len()).collect();
            // Stable: equal distances keep the front's (index) order.
            by.sort_by(|&a, &b| c[b].total_cmp(&c[a]));
            by.into_iter().map(|k| f[k]).collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crowded_order_is_fronts_then_crowding_distance() {
        // Front 1: (0,3) (1,2) (2,1.5) (4,0), crowding inf, 1.0, 1.4167, inf; front 2: (2,2.5)
        // and (3,2), both extremes of their front; (5,5) third.
        let p = [
            2.0, 2.5, 0.0, 3.0, 1.0, 2.0, 5.0, 5.0, 2.0, 1.5, 4.0, 0.0, 3.0, 2.0,
        ];
        assert_eq!(crowded_order(&p, 2), vec![1, 5, 4, 2, 0, 6, 3]);
    }

    #[test]
    fn fronts_peel_and_equal_points_share_one() {
        // (0,2) (1,1) (2,0) form the first front with the duplicate (1,1); (2,2) the second;
        // (3,3) the third; the NaN point none.
        let p = [
            1.0,
            1.0,
            2.0,
            2.0,
            0.0,
            2.0,
            3.0,
            3.0,
            1.0,
            1.0,
            2.0,
            0.0,
            f64::NAN,
            0.0,
        ];
        assert_eq!(
            nondominated_fronts(&p, 2),
            vec![vec![0, 2, 4, 5], vec![1], vec![3]]
        );
    }

    #[test]
    fn crowding_distance_by_hand_as_optuna_computes_it() {
        // Four points on a front: (0,3) (1,2) (2,1.5) (4,0). Objective 0 ranges over 4, objective
        // 1 over 3. The extremes get infinity; (1,2): (2-0)/4 + (3-1.5)/3 = 1.0; (2,1.5):
        // (4-1)/4 + (2-0)/3 = 0.75 + 0.6667.
        let p = [0.0, 3.0, 1.0, 2.0, 2.0, 1.5, 4.0, 0.0];
        let c = crowding_distance(&p, 2, &[0, 1, 2, 3]);
        assert_eq!((c[0], c[3]), (f64::INFINITY, f64::INFINITY));
        assert!((c[1] - 1.0).abs() < 1e-12, "{c:?}");
        assert!((c[2] - (0.75 + 2.0 / 3.0)).abs() < 1e-12, "{c:?}");
        // A subset in another order: distances follow `members`' order. An objective where all
        // members are equal adds nothing; equal neighbours add 0.
        let c = crowding_distance(&p, 2, &[2, 1]);
        assert_eq!(c, vec![f64::INFINITY, f64::INFINITY]);
        let q = [1.0, 5.0, 1.0, 6.0, 1.0, 6.0, 1.0, 7.0];
        let c = crowding_distance(&q, 2, &[0, 1, 2, 3]);
        assert_eq!(c[0], f64::INFINITY);
        assert_eq!(c[3], f64::INFINITY);
        // (1,6) twice: neighbours 5 and 6 (gap 1/2), and 6 and 7 (gap 1/2) or the reverse.
        assert!(
            (c[1] - 0.5).abs() < 1e-12 && (c[2] - 0.5).abs() < 1e-12,
            "{c:?}"
        );
    }

    #[test]
    fn the_epsilon_net_starts_at_the_best_in_its_objective_then_goes_farthest() {
        // A front along x + y = 4: seeded by the least x, (0,4); the farthest from it is (4,0);
        // then (2,2), halfway; then (1,3) before (3,1) (equal distances: the earlier index).
        let p = [2.0, 2.0, 4.0, 0.0, 1.0, 3.0, 0.0, 4.0, 3.0, 1.0];
        assert_eq!(epsilon_net(&p, 2, &[0, 1, 2, 3, 4], 0), vec![3, 1, 0, 2, 4]);
        // Seeded by the least y.
        assert_eq!(epsilon_net(&p, 2, &[0, 1, 2, 3, 4], 1), vec![1, 3, 0, 2, 4]);
        assert_eq!(nondominated_order(&p, 2, 0), vec![3, 1, 0, 2, 4]);
    }
}
