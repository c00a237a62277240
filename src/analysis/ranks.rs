//! Ranks of policies within a unit (a task and budget), and mean ranks over units.
//!
//! Rank 1 is best. Ties get the average of the ranks they span (the convention of
//! `scipy.stats.rankdata(method="average")`, Demšar 2006). A missing score (NaN) ranks below every
//! real score; several NaNs tie among themselves.

use std::collections::BTreeMap;

/// Average ranks of `scores` within one unit; `higher_is_better` orders them.
pub fn average_ranks(scores: &[f64], higher_is_better: bool) -> Vec<f64> {
    average_ranks_tol(scores, higher_is_better, 0.0)
}

/// Two scores tie when they differ by at most `tol` relative to the larger magnitude
/// (`|a - b| <= tol * max(|a|, |b|)`); `tol = 0` means exact ties only.
pub fn within_tolerance(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs())
}

/// Average ranks where scores within the relative tolerance `tol` of the best score of a tie
/// group join that group (0 = exact ties only; see [`within_tolerance`]). Groups are formed in
/// rank order, starting from the best score.
pub fn average_ranks_tol(scores: &[f64], higher_is_better: bool, tol: f64) -> Vec<f64> {
    let n = scores.len();
    let key = |x: f64| {
        if x.is_nan() {
            f64::NEG_INFINITY
        } else if higher_is_better {
            x
        } else {
            -x
        }
    };
    let mut order: Vec<usize> = (0..n).collect();
    // Best first; NaN (mapped to -inf) last, and distinct from a real -inf by a second key.
    order.sort_by(|&a, &b| {
        let (ka, kb) = (key(scores[a]), key(scores[b]));
        kb.total_cmp(&ka)
            .then(scores[a].is_nan().cmp(&scores[b].is_nan()))
    });
    let same = |a: usize, b: usize| {
        (scores[a].is_nan() && scores[b].is_nan())
            || (!scores[a].is_nan()
                && !scores[b].is_nan()
                && within_tolerance(scores[a], scores[b], tol))
    };
    let mut ranks = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && same(order[i], order[j]) {
            j += 1;
        }
        // Positions i..j (0-based) hold ranks i+1..=j; their average is (i + 1 + j) / 2.
        let r = (i + 1 + j) as f64 / 2.0;
        for &o in &order[i..j] {
            ranks[o] = r;
        }
        i = j;
    }
    ranks
}

/// A policy's mean rank over units.
#[derive(Clone, Debug, PartialEq)]
pub struct MeanRank {
    pub policy: String,
    pub mean_rank: f64,
    pub mean_score: f64,
    pub n_units: usize,
}

/// Mean ranks from (unit, policy, score) rows. Every unit must hold every policy once; units that
/// miss a policy are skipped and counted in the second return value.
pub fn mean_ranks(
    rows: &[(String, String, f64)],
    higher_is_better: bool,
    tol: f64,
) -> (Vec<MeanRank>, usize) {
    let mut units: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
    let mut policies: BTreeMap<&str, ()> = BTreeMap::new();
    for (u, p, s) in rows {
        units.entry(u).or_default().insert(p, *s);
        policies.insert(p, ());
    }
    let names: Vec<&str> = policies.keys().copied().collect();
    let mut rank_sum = vec![0.0; names.len()];
    let mut score_sum = vec![0.0; names.len()];
    let mut score_n = vec![0usize; names.len()];
    let mut used = 0;
    let mut skipped = 0;
    for by_policy in units.values() {
        if by_policy.len() != names.len() {
            skipped += 1;
            continue;
        }
        let scores: Vec<f64> = names.iter().map(|p| by_policy[p]).collect();
        let r = average_ranks_tol(&scores, higher_is_better, tol);
        for i in 0..names.len() {
            rank_sum[i] += r[i];
            if !scores[i].is_nan() {
                score_sum[i] += scores[i];
                score_n[i] += 1;
            }
        }
        used += 1;
    }
    let mut out: Vec<MeanRank> = names
        .iter()
        .enumerate()
        .map(|(i, p)| MeanRank {
            policy: p.to_string(),
            mean_rank: if used > 0 {
                rank_sum[i] / used as f64
            } else {
                f64::NAN
            },
            mean_score: if score_n[i] > 0 {
                score_sum[i] / score_n[i] as f64
            } else {
                f64::NAN
            },
            n_units: used,
        })
        .collect();
    out.sort_by(|a, b| {
        a.mean_rank
            .total_cmp(&b.mean_rank)
            .then(a.policy.cmp(&b.policy))
    });
    (out, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_ranks_match_scipy_rankdata() {
        // scipy.stats.rankdata([-0.9, -0.8, -0.8, -0.7]) = [1, 2.5, 2.5, 4] on negated scores.
        assert_eq!(
            average_ranks(&[0.9, 0.8, 0.8, 0.7], true),
            vec![1.0, 2.5, 2.5, 4.0]
        );
        assert_eq!(
            average_ranks(&[0.9, 0.8, 0.8, 0.7], false),
            vec![4.0, 2.5, 2.5, 1.0]
        );
        assert_eq!(average_ranks(&[0.5, 0.5, 0.5], true), vec![2.0, 2.0, 2.0]);
    }

    #[test]
    fn tolerance_joins_near_ties_to_the_group_leader() {
        // 0.9 and 0.8995 tie at a relative tol of 0.001 (0.0005 <= 0.0009); 0.8985 is 0.0015
        // below the leader: its own rank.
        assert_eq!(
            average_ranks_tol(&[0.9, 0.8995, 0.8985], true, 0.001),
            vec![1.5, 1.5, 3.0]
        );
    }

    #[test]
    fn nan_ranks_last() {
        assert_eq!(
            average_ranks(&[f64::NAN, 0.1, f64::NAN], true),
            vec![2.5, 1.0, 2.5]
        );
        assert_eq!(average_ranks(&[f64::NAN, 0.1], false), vec![2.0, 1.0]);
    }

    #[test]
    fn mean_ranks_over_units() {
        let rows = vec![
            ("u1".to_string(), "a".to_string(), 0.9),
            ("u1".to_string(), "b".to_string(), 0.8),
            ("u2".to_string(), "a".to_string(), 0.7),
            ("u2".to_string(), "b".to_string(), 0.7),
            ("u3".to_string(), "a".to_string(), 0.1),
        ];
        let (m, skipped) = mean_ranks(&rows, true, 0.0);
        assert_eq!(skipped, 1);
        assert_eq!(m[0].policy, "a");
        assert!((m[0].mean_rank - 1.25).abs() < 1e-12);
        assert!((m[1].mean_rank - 1.75).abs() < 1e-12);
        assert!((m[0].mean_score - 0.8).abs() < 1e-12);
        assert_eq!(m[0].n_units, 2);
    }
}
