//! One family of hypotheses about one policy: the focus against each of the others (exact
//! Wilcoxon signed-rank at the chosen units, Holm's correction over exactly these hypotheses),
//! with the mean score difference and its 95 % t interval beside each test. Every reproduction's
//! claim ("D-TTTS is better than …", "HAMLET's Variant 3 beats the four baselines", "SMAC against
//! the others") is this one test.

use anyhow::{Result, bail};

use super::compare::{Missing, Options, ScoreTable, compare, mean_difference, pair_tests};
use super::units::{FoundNothing, UnitKind, unit_table};
use crate::results::Run;

/// The focus against one other policy.
#[derive(Clone, Debug)]
pub struct Against {
    pub policy: String,
    /// Its mean rank among the compared policies.
    pub mean_rank: f64,
    /// The Holm-adjusted p within the family.
    pub p_holm: f64,
    /// Holm rejects and the focus has the better mean rank.
    pub focus_better: bool,
    /// The mean score difference focus − other over the units, with its 95 % t interval.
    pub diff: (f64, f64, f64),
}

/// The family test of one focus policy.
#[derive(Clone, Debug)]
pub struct FamilyTest {
    pub n_units: usize,
    pub n_datasets: usize,
    /// The focus's mean rank with its 95 % t interval.
    pub focus_rank: (f64, f64, f64),
    /// One entry per other policy, in the order asked for (or sorted, when all others).
    pub against: Vec<Against>,
    /// The smallest Holm-adjusted p any outcome could give at this number of units: the exact
    /// two-sided signed-rank test's smallest p is 2 / 2^n, and Holm multiplies the smallest of m
    /// by m.
    pub min_p_holm: f64,
}

/// `focus` against each of `others` (every other policy in `runs` when `others` is empty), ranked
/// among exactly these policies at `unit` units. Cells that found nothing score the worst of their
/// unit; scores within the shared tie tolerance tie. An absent policy is an error: a claim that
/// compares against nothing never holds.
pub fn focus_versus_rest(
    runs: &[Run],
    higher_is_better: bool,
    unit: UnitKind,
    focus: &str,
    others: &[String],
) -> Result<FamilyTest> {
    if !runs.iter().any(|r| r.policy == focus) {
        bail!("the comparison is about '{focus}', which has no cell in these results");
    }
    let sub: Vec<Run>;
    let runs = if others.is_empty() {
        runs
    } else {
        for o in others {
            if !runs.iter().any(|r| &r.policy == o) {
                bail!("the comparison is against '{o}', which has no cell in these results");
            }
        }
        sub = runs
            .iter()
            .filter(|r| r.policy == focus || others.contains(&r.policy))
            .cloned()
            .collect();
        &sub
    };
    let units = unit_table(runs, unit, FoundNothing::Worst, higher_is_better);
    let (table, _) = ScoreTable::from_rows(&units.rows, higher_is_better, Missing::Error, true)?;
    // Its own family of pairs (below): the comparison's are not needed.
    let opts = Options {
        pairs: super::compare::Pairs::None,
        ..Options::default()
    };
    let c = compare(table, &opts);
    let idx = |p: &str| c.table.policies.iter().position(|x| x == p);
    let Some(d) = idx(focus) else {
        bail!("'{focus}' has no unit in the results");
    };
    let rest: Vec<usize> = if others.is_empty() {
        (0..c.table.policies.len()).filter(|&i| i != d).collect()
    } else {
        others.iter().filter_map(|o| idx(o)).collect()
    };
    let pairs: Vec<(usize, usize)> = rest.iter().map(|&o| (d, o)).collect();
    let tests = pair_tests(&c.table, &pairs, &opts);
    let sd = &c.summary[d];
    let against = rest
        .iter()
        .zip(&tests)
        .map(|(&o, t)| {
            let (m, lo, hi, _) = mean_difference(&c.table, d, o);
            Against {
                policy: c.table.policies[o].clone(),
                mean_rank: c.summary[o].mean_rank,
                p_holm: t.p_holm,
                focus_better: t.reject && sd.mean_rank < c.summary[o].mean_rank,
                diff: (m, lo, hi),
            }
        })
        .collect();
    let n = c.table.units.len();
    let min_p = (rest.len() as f64 * 2.0 / 2f64.powi(n.min(1000) as i32)).min(1.0);
    Ok(FamilyTest {
        n_units: n,
        n_datasets: units.n_datasets,
        focus_rank: (sd.mean_rank, sd.ci_low, sd.ci_high),
        against,
        min_p_holm: min_p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ds: &str, policy: &str, score: f64) -> Run {
        Run::scored(ds, 0, 1.0, 0, policy, score)
    }

    #[test]
    fn the_focus_is_tested_against_each_other_as_one_holm_family() {
        // Eight datasets; "a" beats "b" on all, "c" on none (ties within tolerance).
        let mut runs = Vec::new();
        for i in 0..8 {
            let ds = format!("d{i}");
            let x = 0.5 + 0.01 * i as f64;
            runs.push(run(&ds, "a", x + 0.1));
            runs.push(run(&ds, "b", x));
            runs.push(run(&ds, "c", x + 0.1 + 1e-13));
        }
        let t = focus_versus_rest(&runs, true, UnitKind::Dataset, "a", &[]).unwrap();
        assert_eq!(t.n_units, 8);
        assert_eq!(t.against.len(), 2);
        let b = t.against.iter().find(|x| x.policy == "b").unwrap();
        let c = t.against.iter().find(|x| x.policy == "c").unwrap();
        // Exact p at n = 8, all differences positive: 2/256; Holm over two: doubled.
        assert!((b.p_holm - 2.0 * 2.0 / 256.0).abs() < 1e-12, "{}", b.p_holm);
        assert!(b.focus_better && !c.focus_better);
        assert!((b.diff.0 - 0.1).abs() < 1e-9 && c.p_holm >= 0.99);
        assert!((t.min_p_holm - 4.0 / 256.0).abs() < 1e-15);
        // Restricted to "b": ranked among a and b only, and Holm over one hypothesis.
        let r = focus_versus_rest(&runs, true, UnitKind::Dataset, "a", &["b".into()]).unwrap();
        assert_eq!(r.against.len(), 1);
        assert_eq!(r.focus_rank.0, 1.0);
        assert!((r.against[0].p_holm - 2.0 / 256.0).abs() < 1e-12);
        // Absent policies are errors naming them.
        let e = focus_versus_rest(&runs, true, UnitKind::Dataset, "z", &[]).unwrap_err();
        assert!(e.to_string().contains("'z'"), "{e}");
        let e = focus_versus_rest(&runs, true, UnitKind::Dataset, "a", &["y".into()]).unwrap_err();
        assert!(e.to_string().contains("'y'"), "{e}");
    }
}
