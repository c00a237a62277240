//! Analyses of a results table beyond one comparison: ranks per budget, each family's best
//! setting, pull shares, and anytime ranks and regret over the budget. `report` draws them;
//! `reproduce` reads their numbers.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::average_ranks_tol;
use crate::analysis::stats::{mean_sd, t_quantile};
use crate::analysis::units::unit_table;
use crate::analysis::{FoundNothing, UnitKind};
use crate::results::Run;

/// Ranks of `policies` within each unit of `kind` restricted to one budget, grouped by budget:
/// `budget -> policy -> ranks`. Scores come from the one unit-table builder.
pub fn ranks_by_budget(
    runs: &[Run],
    policies: &[String],
    higher: bool,
    kind: UnitKind,
    rule: FoundNothing,
    tol: f64,
) -> BTreeMap<String, Vec<Vec<f64>>> {
    let keep: BTreeSet<&String> = policies.iter().collect();
    let mut by_budget: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for r in runs.iter().filter(|r| keep.contains(&r.policy)) {
        by_budget
            .entry(format!("{}", r.budget))
            .or_default()
            .push(r.clone());
    }
    let pidx: BTreeMap<&String, usize> = policies.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let mut out = BTreeMap::new();
    for (b, rs) in by_budget {
        let table = unit_table(&rs, kind, rule, higher);
        let mut units: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for (u, p, s) in table.rows {
            units
                .entry(u)
                .or_insert_with(|| vec![f64::NAN; policies.len()])[pidx[&p]] = s;
        }
        let mut per_policy = vec![Vec::new(); policies.len()];
        for scores in units.values() {
            let r = average_ranks_tol(scores, higher, tol);
            for (i, x) in r.into_iter().enumerate() {
                per_policy[i].push(x);
            }
        }
        out.insert(b, per_policy);
    }
    out
}

/// Mean rank of each of `policies` per budget (ranked within each unit of `kind` at that budget,
/// ties within the default tolerance averaged), budgets in increasing order: the numbers behind
/// HAMLET's Figs. 4 and 7.
pub fn mean_ranks_by_budget(
    runs: &[Run],
    policies: &[String],
    higher: bool,
    kind: UnitKind,
) -> Vec<(f64, Vec<f64>)> {
    let tol = crate::analysis::compare::DEFAULT_TIE_TOLERANCE;
    sort_budgets(ranks_by_budget(
        runs,
        policies,
        higher,
        kind,
        FoundNothing::Worst,
        tol,
    ))
    .into_iter()
    .map(|(b, per_policy)| {
        let means = per_policy
            .iter()
            .map(|v| v.iter().sum::<f64>() / v.len().max(1) as f64)
            .collect();
        (b.parse().unwrap_or(f64::NAN), means)
    })
    .collect()
}

pub fn sort_budgets(m: BTreeMap<String, Vec<Vec<f64>>>) -> Vec<(String, Vec<Vec<f64>>)> {
    let mut v: Vec<(String, Vec<Vec<f64>>)> = m.into_iter().collect();
    v.sort_by(|a, b| {
        a.0.parse::<f64>()
            .unwrap_or(0.0)
            .total_cmp(&b.0.parse::<f64>().unwrap_or(0.0))
    });
    v
}

/// The policies of each family in `runs`, sorted.
pub fn families_of(runs: &[Run]) -> BTreeMap<&str, BTreeSet<&String>> {
    let mut families: BTreeMap<&str, BTreeSet<&String>> = BTreeMap::new();
    for r in runs {
        families
            .entry(r.family.as_str())
            .or_default()
            .insert(&r.policy);
    }
    families
}

/// For each policy family, its setting with the best mean rank among the family's settings over
/// (task, budget) units (how HAMLET picked the parameters it compared). Returns (family, policy,
/// mean rank within the family). A selection, not a test: choose on one trace set and test on
/// another (see `reproduce hamlet`).
pub fn best_per_family(runs: &[Run], higher: bool) -> Vec<(String, String, f64)> {
    let families = families_of(runs);
    let mut out = Vec::new();
    for (fam, members) in families {
        let members: Vec<String> = members.into_iter().cloned().collect();
        if members.len() == 1 {
            out.push((fam.to_string(), members[0].clone(), 1.0));
            continue;
        }
        let by_budget = ranks_by_budget(
            runs,
            &members,
            higher,
            UnitKind::TaskBudget,
            FoundNothing::Worst,
            crate::analysis::compare::DEFAULT_TIE_TOLERANCE,
        );
        let mut sum = vec![0.0; members.len()];
        let mut n = 0usize;
        for per_policy in by_budget.values() {
            for (i, ranks) in per_policy.iter().enumerate() {
                sum[i] += ranks.iter().sum::<f64>();
            }
            n += per_policy.first().map_or(0, Vec::len);
        }
        let (best, mean) = sum
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s / n.max(1) as f64))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(members[a.0].cmp(&members[b.0])))
            .expect("a family has members");
        out.push((fam.to_string(), members[best].clone(), mean));
    }
    out
}

/// The best and worst score recorded per (dataset, run), oriented so that larger is better.
pub type ScoreBounds = BTreeMap<(String, i64), (f64, f64)>;

/// Anytime curves per policy: (policy, mean per grid point, half-width per grid point).
pub struct AnytimeCurves {
    /// Datasets the bands run over.
    pub units: usize,
    pub grid: Vec<f64>,
    pub rank: Vec<(String, Vec<f64>, Vec<f64>)>,
    pub regret: Vec<(String, Vec<f64>, Vec<f64>)>,
}

/// Mean rank and mean normalised regret of each of `policies` at each of `points + 1` grid
/// points (fractions of the budget), ranked within each (task, budget) unit, averaged per
/// dataset, with ±t(0.975)·SE half-widths over datasets (the independent units).
/// `curves` holds each cell's incumbent score per grid point (`results::anytime_curves`).
/// Regret is `(b − v) / (b − w)`: with `bounds` `None`, b and w are the best and worst of the
/// compared policies' mean scores in the unit over the whole curve, so adding a policy changes
/// every curve; with `bounds`, they are the best and worst score recorded in the unit's traces
/// (per (dataset, run), oriented so that larger is better).
pub fn anytime(
    curves: &BTreeMap<u64, Vec<f64>>,
    runs: &[Run],
    policies: &[String],
    higher: bool,
    points: usize,
    tol: f64,
    bounds: Option<&ScoreBounds>,
) -> AnytimeCurves {
    let grid: Vec<f64> = (0..=points).map(|j| j as f64 / points as f64).collect();
    let pidx: BTreeMap<&String, usize> = policies.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let k = policies.len();
    // unit -> per policy: (sum of curves over repetitions, count per grid point)
    type Sums = Vec<(Vec<f64>, Vec<usize>)>;
    // unit -> its (dataset, run), and the sums
    let mut acc: BTreeMap<String, ((String, i64), Sums)> = BTreeMap::new();
    for r in runs {
        let (Some(curve), Some(&p)) = (curves.get(&r.cell), pidx.get(&r.policy)) else {
            continue;
        };
        let (_, e) = acc.entry(UnitKind::TaskBudget.key(r)).or_insert_with(|| {
            (
                (r.dataset.clone(), r.run),
                vec![(vec![0.0; points + 1], vec![0; points + 1]); k],
            )
        });
        for (j, v) in curve.iter().enumerate() {
            if !v.is_nan() {
                e[p].0[j] += v;
                e[p].1[j] += 1;
            }
        }
    }
    let sign = if higher { 1.0 } else { -1.0 };
    // Ranks and regrets are computed per (task, budget) unit and averaged per dataset, the
    // independent unit the bands run over (as the rest of the report counts units).
    type PerDataset = (Vec<Vec<(f64, usize)>>, Vec<Vec<(f64, usize)>>);
    let mut by_dataset: BTreeMap<String, PerDataset> = BTreeMap::new();
    for (task, per_policy) in acc.values() {
        let (ranks, regrets) = by_dataset.entry(task.0.clone()).or_insert_with(|| {
            (
                vec![vec![(0.0, 0); points + 1]; k],
                vec![vec![(0.0, 0); points + 1]; k],
            )
        });
        let means: Vec<Vec<f64>> = per_policy
            .iter()
            .map(|(s, n)| {
                s.iter()
                    .zip(n)
                    .map(|(s, n)| if *n > 0 { s / *n as f64 } else { f64::NAN })
                    .collect()
            })
            .collect();
        let finite = means
            .iter()
            .flatten()
            .filter(|v| v.is_finite())
            .map(|v| sign * v);
        let (best, worst) = match bounds.and_then(|b| b.get(task)) {
            Some(&(b, w)) => (b, w),
            None => finite.fold((f64::NEG_INFINITY, f64::INFINITY), |(b, w), v| {
                (b.max(v), w.min(v))
            }),
        };
        for j in 0..=points {
            let col: Vec<f64> = means.iter().map(|m| m[j]).collect();
            let r = average_ranks_tol(&col, higher, tol);
            for p in 0..k {
                ranks[p][j].0 += r[p];
                ranks[p][j].1 += 1;
                let v = col[p];
                let reg = if v.is_nan() || best <= worst {
                    if v.is_nan() { 1.0 } else { 0.0 }
                } else {
                    (best - sign * v) / (best - worst)
                };
                regrets[p][j].0 += reg;
                regrets[p][j].1 += 1;
            }
        }
    }
    let mut ranks = vec![vec![Vec::new(); points + 1]; k];
    let mut regrets = vec![vec![Vec::new(); points + 1]; k];
    for (r, g) in by_dataset.values() {
        for p in 0..k {
            for j in 0..=points {
                ranks[p][j].push(r[p][j].0 / r[p][j].1.max(1) as f64);
                regrets[p][j].push(g[p][j].0 / g[p][j].1.max(1) as f64);
            }
        }
    }
    let band = |xs: &[f64]| -> (f64, f64) {
        if xs.len() < 2 {
            return (xs.first().copied().unwrap_or(f64::NAN), f64::NAN);
        }
        let (m, sd) = mean_sd(xs);
        (
            m,
            t_quantile(0.975, xs.len() as f64 - 1.0) * sd / (xs.len() as f64).sqrt(),
        )
    };
    let series = |data: &Vec<Vec<Vec<f64>>>| -> Vec<(String, Vec<f64>, Vec<f64>)> {
        (0..k)
            .map(|p| {
                let (m, h): (Vec<f64>, Vec<f64>) = data[p].iter().map(|xs| band(xs)).unzip();
                (policies[p].clone(), m, h)
            })
            .collect()
    };
    AnytimeCurves {
        units: by_dataset.len(),
        grid,
        rank: series(&ranks),
        regret: series(&regrets),
    }
}

/// The mean share of pulls each policy gave each learner (over cells with any pull):
/// (learners sorted by name, `shares[policy][learner]`).
pub fn pull_shares(runs: &[Run], policies: &[String]) -> (Vec<String>, Vec<Vec<f64>>) {
    let learners: Vec<String> = runs
        .iter()
        .flat_map(|r| r.pulls.iter().map(|(l, _)| l.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let lidx: BTreeMap<&String, usize> = learners.iter().enumerate().map(|(i, l)| (l, i)).collect();
    let pidx: BTreeMap<&String, usize> = policies.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let mut shares = vec![vec![0.0; learners.len()]; policies.len()];
    let mut counts = vec![0usize; policies.len()];
    for r in runs {
        let Some(&p) = pidx.get(&r.policy) else {
            continue;
        };
        let total: f64 = r.pulls.iter().map(|x| x.1).sum();
        if total > 0.0 {
            for (l, v) in &r.pulls {
                shares[p][lidx[l]] += v / total;
            }
            counts[p] += 1;
        }
    }
    for (row, n) in shares.iter_mut().zip(&counts) {
        row.iter_mut().for_each(|x| *x /= (*n).max(1) as f64);
    }
    (learners, shares)
}
