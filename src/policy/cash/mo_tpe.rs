//! MO-TPE (Ozaki, Tanigaki, Watanabe & Onishi 2020, "Multiobjective tree-structured Parzen
//! estimator for computationally expensive optimization problems", GECCO; Ozaki, Tanigaki,
//! Watanabe, Nomura & Onishi 2022, "Multiobjective Tree-Structured Parzen Estimator", JAIR 73):
//! TPE whose good group l(x) is chosen by Pareto dominance instead of a quantile of one score.
//!
//! The split and weights are Optuna 5.0.0's `TPESampler` with several objectives (read, not
//! copied: `_split_complete_trials_multi_objective`, `_solve_hssp`, `default_gamma_multiobjective`):
//! - n_below = ⌈γ n⌉ of the n finished evaluations (γ = 0.1; no cap of 25 as with one objective);
//! - whole non-dominated fronts while they fit; the rest from the next front by a greedy
//!   hypervolume subset selection (Guerreiro, Fonseca & Paquete 2016): repeatedly the point of
//!   largest hypervolume contribution to those chosen, against that front's worst values × 1.1
//!   (× 0.9 where negative; 10⁻¹² where 0), among its distinct points in lexicographic order
//!   (the first on a tie), duplicates only when too few are distinct;
//! - the good group's kernels weigh the same (Optuna 5.0.0's `weights_below = 1`; the 2020 paper
//!   weighted them by hypervolume contribution); the bad group keeps the linear forgetting.
//!
//! The Parzen estimators, priors and the pool-based ranking of every open configuration are
//! banditbench's `tpe` (hyperopt 0.3's, `tpe.rs`), not Optuna's; Optuna's own MO-TPE runs
//! through the Optuna adapter. A failed evaluation, or one with a NaN objective, is left out.

use super::{Evaluator, Proposal, Proposer, Tpe, WORLDS, candidates_param};
use crate::pareto::{hypervolume, nondominated_fronts};
use crate::policy::{CellStart, Family, ParamDef, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use anyhow::{Result, bail};
use std::collections::HashMap;

pub fn family_mo_tpe() -> Family {
    Family {
        name: "mo-tpe",
        summary: "several objectives: TPE whose good group is the best non-dominated fronts, the last cut by greedy hypervolume subset selection",
        source: "Ozaki, Tanigaki, Watanabe & Onishi 2020, 'Multiobjective tree-structured Parzen estimator for computationally expensive optimization problems', GECCO; Ozaki et al. 2022, JAIR 73; the split (⌈0.1 n⌉, fronts, greedy HSSP), uniform good-group weights and 10 startup trials as Optuna 5.0.0's TPESampler with several objectives; the Parzen estimators are banditbench's tpe (hyperopt 0.3)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::float(
                "gamma",
                1e-6,
                1.0,
                0.1,
                "the good group is ⌈γ n⌉ of the n finished evaluations (Optuna's default_gamma_multiobjective: 0.1)",
            ),
            ParamDef::int(
                "n_startup",
                0,
                1_000_000,
                10,
                "random configurations before the model is used (Optuna's n_startup_trials, 10)",
            ),
            ParamDef::float(
                "prior_weight",
                0.0,
                1e6,
                1.0,
                "weight of the prior kernel and of the uniform categorical prior, as tpe",
            ),
            ParamDef::int(
                "forgetting",
                0,
                1_000_000,
                25,
                "the bad group's linear forgetting beyond this many observations, as tpe and Optuna's default_weights (0: all weigh the same)",
            ),
            candidates_param(),
        ],
        build: |p: &Params, _| {
            let mut tpe = super::tpe_of(&crate::policy::default_params("tpe"));
            tpe.gamma = p.float("gamma");
            tpe.hyperopt_split = false;
            tpe.n_startup = p.int("n_startup") as usize;
            tpe.prior_weight = p.float("prior_weight");
            tpe.forgetting = p.int("forgetting") as usize;
            tpe.candidates = p.int("candidates") as usize;
            tpe.mo = Some(HashMap::new());
            Box::new(Evaluator::new(MoTpe {
                tpe,
                maximize: Vec::new(),
                failed: false,
            }))
        },
    }
}

pub struct MoTpe {
    tpe: Tpe,
    maximize: Vec<bool>,
    /// The evaluation told last had no usable objectives: its score is withheld too.
    failed: bool,
}

impl Proposer for MoTpe {
    fn begin(&mut self, start: &CellStart<'_>) -> Result<()> {
        let Some(pool) = &start.pool else {
            bail!("mo-tpe needs the pool world");
        };
        if pool.objectives.len() < 2 {
            bail!(
                "mo-tpe splits by several objectives, but this experiment measures one; name them in [world] objectives (e.g. objectives = [\"val_acc\", \"latency\"]), or use tpe"
            );
        }
        self.maximize = pool.objectives.iter().map(|o| o.1).collect();
        Ok(())
    }

    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        self.tpe.propose(p, rng)
    }

    fn tell(&mut self, config: u32, budget: u32, score: Option<f64>) {
        let score = score.filter(|_| !std::mem::take(&mut self.failed));
        self.tpe.tell(config, budget, score);
    }

    fn tell_objectives(&mut self, config: u32, _budget: u32, values: Option<&[f64]>) {
        let v = values.and_then(|v| crate::pareto::minimised(v, &self.maximize));
        self.failed = v.is_none();
        if let (Some(v), Some(mo)) = (v, self.tpe.mo.as_mut()) {
            mo.insert(config, v);
        }
    }

    fn pending(&mut self, configs: &[u32]) {
        self.tpe.pending(configs);
    }
}

/// MO-TPE's good and bad groups of the history `obs` (indices, each in evaluation order): the
/// observations with objectives in `mo` are split, any other (a made-up one) is bad.
pub(super) fn split(
    obs: &[(u32, f64, usize)],
    mo: &HashMap<u32, Vec<f64>>,
    gamma: f64,
) -> (Vec<usize>, Vec<usize>) {
    let complete: Vec<usize> = (0..obs.len())
        .filter(|&i| mo.contains_key(&obs[i].0))
        .collect();
    let n = complete.len();
    let n_below = ((gamma * n as f64).ceil() as usize).min(n);
    let d = complete.first().map_or(1, |&i| mo[&obs[i].0].len());
    let points: Vec<f64> = complete
        .iter()
        .flat_map(|&i| mo[&obs[i].0].iter().copied())
        .collect();
    let chosen = good_group(&points, d, n_below);
    let mut is_below = vec![false; obs.len()];
    for k in chosen {
        is_below[complete[k]] = true;
    }
    (0..obs.len()).partition(|&i| is_below[i])
}

/// The `n_below` best of `points` (flat, `d` minimised objectives) by fronts and, in the front
/// that does not fit, greedy hypervolume subset selection; indices into the points.
pub fn good_group(points: &[f64], d: usize, n_below: usize) -> Vec<usize> {
    let n = points.len() / d.max(1);
    if n_below >= n {
        return (0..n).collect();
    }
    let mut below = Vec::with_capacity(n_below);
    for front in nondominated_fronts(points, d) {
        if below.len() + front.len() <= n_below {
            below.extend_from_slice(&front);
            continue;
        }
        let need = n_below - below.len();
        if need > 0 {
            below.extend(greedy_hssp(points, d, &front, need));
        }
        break;
    }
    below
}

/// `k` of `members` (indices of points of `d` objectives) by greedy hypervolume subset selection,
/// as Optuna 5.0.0's `_solve_hssp` (see the module documentation).
fn greedy_hssp(points: &[f64], d: usize, members: &[usize], k: usize) -> Vec<usize> {
    let row = |i: usize| &points[i * d..(i + 1) * d];
    if k >= members.len() {
        return members.to_vec();
    }
    // The reference point: the members' worst values × 1.1 (× 0.9 where negative), 1e-12 at 0.
    let reference: Vec<f64> = (0..d)
        .map(|j| {
            let w = members
                .iter()
                .map(|&i| row(i)[j])
                .fold(f64::NEG_INFINITY, f64::max);
            let r = (1.1 * w).max(0.9 * w);
            if r == 0.0 { 1e-12 } else { r }
        })
        .collect();
    // Distinct points, lexicographically (np.unique), each its first occurrence.
    let mut order: Vec<usize> = members.to_vec();
    order.sort_by(|&a, &b| {
        row(a)
            .iter()
            .zip(row(b))
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    order.dedup_by(|b, a| row(*a) == row(*b));
    if order.len() < k {
        // Every distinct point, then the first duplicates in the members' order.
        let mut out = order.clone();
        out.extend(
            members
                .iter()
                .copied()
                .filter(|m| !order.contains(m))
                .take(k - order.len()),
        );
        return out;
    }
    if !reference.iter().all(|r| r.is_finite()) {
        return order[..k].to_vec();
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(k);
    let mut flat: Vec<f64> = Vec::with_capacity(k * d);
    let mut hv = 0.0;
    for _ in 0..k {
        let mut best: Option<(f64, usize)> = None;
        for (pos, &m) in order.iter().enumerate() {
            flat.extend_from_slice(row(m));
            let contribution = hypervolume(&flat, &reference) - hv;
            flat.truncate(flat.len() - d);
            if best.is_none_or(|b| contribution > b.0) {
                best = Some((contribution, pos));
            }
        }
        let (_, pos) = best.expect("members left");
        let m = order.remove(pos);
        flat.extend_from_slice(row(m));
        hv = hypervolume(&flat, &reference);
        chosen.push(m);
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fronts first, then the greedy subset of the front that does not fit, by hand.
    #[test]
    fn the_good_group_takes_fronts_then_the_largest_contributions() {
        // Front 1: (1,1) (0,4) (4,0) (3.9,0.1); front 2: (2,2); front 3: (5,5).
        let p = [1.0, 1.0, 0.0, 4.0, 2.0, 2.0, 4.0, 0.0, 3.9, 0.1, 5.0, 5.0];
        // Three of front 1, against its worst values × 1.1 = (4.4, 4.4). Alone, (1,1) adds
        // 3.4² = 11.56, more than any other. Then (0,4) adds 1 · 0.4 = 0.4, (4,0) 0.4 · 1 = 0.4,
        // (3.9,0.1) 0.5 · 0.9 = 0.45: (3.9,0.1). Then (0,4) adds 0.4, (4,0) only 0.4 · 0.1.
        assert_eq!(good_group(&p, 2, 3), vec![0, 4, 1]);
        assert_eq!(good_group(&p, 2, 1), vec![0]);
        // The whole first front and the second fit in five; the third front is cut to nothing.
        let mut g = good_group(&p, 2, 5);
        g.sort();
        assert_eq!(g, vec![0, 1, 2, 3, 4]);
        assert_eq!(good_group(&p, 2, 6).len(), 6);
        assert_eq!(good_group(&p, 2, 0), Vec::<usize>::new());
    }

    /// Equal points: distinct ones first, duplicates only when too few are distinct.
    #[test]
    fn duplicates_are_chosen_last() {
        // Front 2 of (0,0): (1,2) twice and (2,1).
        let p = [0.0, 0.0, 1.0, 2.0, 1.0, 2.0, 2.0, 1.0];
        let mut g = good_group(&p, 2, 3);
        g.sort();
        assert_eq!(g, vec![0, 1, 3]);
        let mut g = good_group(&p, 2, 4);
        g.sort();
        assert_eq!(g, vec![0, 1, 2, 3]);
    }

    /// The history's split: made-up observations (no objectives) are bad; n_below = ⌈γ n⌉ of the
    /// finished ones.
    #[test]
    fn the_split_of_a_history() {
        let obs = vec![(5, 0.0, 0), (6, 0.0, 1), (7, 0.0, 2), (8, 0.0, 3)];
        let mut mo = HashMap::new();
        mo.insert(5, vec![3.0, 3.0]);
        mo.insert(6, vec![1.0, 2.0]);
        mo.insert(7, vec![2.0, 1.0]);
        // 8 is a lie (running): bad. ⌈0.5 · 3⌉ = 2: the front {6, 7}.
        assert_eq!(split(&obs, &mo, 0.5), (vec![1, 2], vec![0, 3]));
        assert_eq!(split(&obs, &mo, 0.1), {
            // ⌈0.3⌉ = 1 of the front: (1,2) and (2,1) contribute alike against (2.2, 2.2); the
            // lexicographically first, (1,2).
            (vec![1], vec![0, 2, 3])
        });
    }
}
