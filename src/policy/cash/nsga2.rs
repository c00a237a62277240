//! NSGA-II (Deb, Pratap, Agarwal & Meyarivan 2002, "A fast and elitist multiobjective genetic
//! algorithm: NSGA-II", IEEE TEC 6(2)) on a pool of recorded configurations, with the open
//! choices as Optuna 5.0.0's `NSGAIISampler` makes them (read, not copied): the sampler the MO-TPE
//! paper (Ozaki et al. 2022, JAIR) and OptunaHub's benchmarks compare against.
//!
//! - **Generations.** A new evaluation belongs to the latest generation that has fewer than
//!   `population` finished evaluations, else to the next (Optuna's `get_trial_generation`,
//!   counting finished evaluations only, so with several workers a generation can end with more).
//!   Generation 0 draws configurations at random (the world's seeded order, as `random-search`).
//! - **Survivors.** Generation g's parents are the elite of generation g − 1's evaluations and
//!   g − 1's parents, fixed when g first needs them: whole non-dominated fronts while they fit in
//!   `population`, then the next front by decreasing crowding distance (§III-B; ties by the order
//!   evaluations finished).
//! - **Offspring.** With probability `crossover_prob` two parents, each the winner of a binary
//!   tournament (`tournament = "dominance"`: of two drawn at random the first if it dominates the
//!   second, else the second, as Optuna; `"crowded"`: Deb's crowded comparison, lower front then
//!   larger crowding distance), are mixed by uniform crossover (each dimension from the second
//!   parent when a uniform draw is ≥ `swapping_prob`, Optuna's mask); otherwise one parent at
//!   random is copied. Each
//!   dimension is then redrawn uniformly with probability `mutation_prob` (0: Optuna's 1 / d),
//!   Optuna's default mutation (its random sampler).
//! - **On a pool.** Dimensions are the pool's encoding (`space.rs`: numeric in [0, 1], log where
//!   the dimension is log-scaled; ordinal levels; categorical indices) with the learner first when
//!   the pool has several; a child takes its learner's dimensions from a parent of that learner.
//!   The child is snapped to the nearest open configuration (`snap = "nearest"`, the only rule a
//!   pool allows): distance = Σ |Δ| over numeric and ordinal dimensions + 1 per categorical
//!   mismatch (+1 between an inactive and an active value), among configurations of the child's
//!   learner when one is open; equal distances are broken at random. On a full grid (NAS-Bench-201)
//!   an unevaluated child is found exactly. `policy_stats` counts `draws`, `children`, `snapped`
//!   (children at a distance > 0) and their `mean_distance`.
//!
//! Failed evaluations, or one with a NaN objective, are not in any population (Optuna's FAIL).
//! With one objective (no `[world] objectives`) the pool's score is the objective.

use super::{Proposal, Proposer, WORLDS};
use crate::pareto::{crowding_distance, dominates, nondominated_fronts};
use crate::policy::{CellStart, Family, ParamDef, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use crate::space::{Scale, Space};
use anyhow::Result;
use std::collections::HashMap;

pub fn family_nsga2() -> Family {
    Family {
        name: "nsga2",
        summary: "NSGA-II: generations of non-dominated sorting and crowding, binary tournaments, uniform crossover and uniform mutation, children snapped to the nearest open configuration",
        source: "Deb, Pratap, Agarwal & Meyarivan 2002, 'A fast and elitist multiobjective genetic algorithm: NSGA-II', IEEE TEC 6(2); the open choices (population 50, uniform crossover with probability 0.9 and swapping 0.5, mutation 1/d by resampling, dominance tournament, generations by finished trials) as Optuna 5.0.0's NSGAIISampler",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::int(
                "population",
                2,
                1_000_000,
                50,
                "evaluations per generation and survivors kept (Optuna's population_size)",
            ),
            ParamDef::float(
                "crossover_prob",
                0.0,
                1.0,
                0.9,
                "probability that a child is a crossover of two parents rather than a copy of one (Optuna's crossover_prob)",
            ),
            ParamDef::float(
                "swapping_prob",
                0.0,
                1.0,
                0.5,
                "uniform crossover: a dimension comes from the second parent when a uniform draw is at least this (Optuna's swapping_prob and mask)",
            ),
            ParamDef::float(
                "mutation_prob",
                0.0,
                1.0,
                0.0,
                "probability that each dimension of a child is redrawn uniformly; 0 is Optuna's 1 / d",
            ),
            ParamDef::choice(
                "tournament",
                &["dominance", "crowded"],
                "dominance",
                "binary tournament for parents: dominance (Optuna: the first if it dominates the second, else the second) or crowded (Deb et al.: lower front, then larger crowding distance)",
            ),
        ],
        build: |p: &Params, _| {
            Box::new(super::Evaluator::new(Nsga2 {
                population: p.int("population") as usize,
                crossover_prob: p.float("crossover_prob"),
                swapping_prob: p.float("swapping_prob"),
                mutation_prob: p.float("mutation_prob"),
                crowded: p.text("tournament") == "crowded",
                ..Nsga2::default()
            }))
        },
    }
}

/// One finished evaluation: its configuration, objectives (minimised; None when it failed) and
/// generation.
#[derive(Clone, Debug)]
struct Eval {
    config: u32,
    values: Option<Vec<f64>>,
    generation: u32,
}

#[derive(Default)]
pub struct Nsga2 {
    population: usize,
    crossover_prob: f64,
    swapping_prob: f64,
    mutation_prob: f64,
    crowded: bool,
    /// Per objective: maximised; empty with one objective (the pool's score, maximised).
    maximize: Vec<bool>,
    evals: Vec<Eval>,
    /// The generation each chosen configuration was proposed in (drawn ones: 0).
    generation_of: HashMap<u32, u32>,
    /// Per generation g ≥ 1 once needed: its parents (indices into `evals`).
    parents: Vec<Option<Vec<usize>>>,
    draws: u64,
    children: u64,
    snapped: u64,
    distance: f64,
}

impl Nsga2 {
    fn objectives(&self) -> usize {
        self.maximize.len().max(1)
    }

    /// Finished evaluations that have values.
    fn complete(&self) -> impl Iterator<Item = (usize, &Eval)> {
        self.evals
            .iter()
            .enumerate()
            .filter(|(_, e)| e.values.is_some())
    }

    /// The generation of a new evaluation (Optuna's `get_trial_generation`).
    fn next_generation(&self) -> u32 {
        let (mut max, mut count) = (0, 0);
        for (_, e) in self.complete() {
            if e.generation > max {
                (max, count) = (e.generation, 1);
            } else if e.generation == max {
                count += 1;
            }
        }
        if count < self.population {
            max
        } else {
            max + 1
        }
    }

    /// The values of evaluations `members`, flat.
    fn points(&self, members: &[usize]) -> Vec<f64> {
        members
            .iter()
            .flat_map(|&i| self.evals[i].values.clone().unwrap_or_default())
            .collect()
    }

    /// Generation g's parents, computed once (Optuna caches them in the study).
    fn parents_of(&mut self, g: u32) -> Vec<usize> {
        if g == 0 {
            return Vec::new();
        }
        let gi = g as usize;
        if self.parents.len() <= gi {
            self.parents.resize(gi + 1, None);
        }
        if let Some(p) = &self.parents[gi] {
            return p.clone();
        }
        let mut pool: Vec<usize> = self
            .complete()
            .filter(|(_, e)| e.generation == g - 1)
            .map(|(i, _)| i)
            .collect();
        pool.extend(self.parents_of(g - 1));
        let elite = self.elite(&pool);
        self.parents[gi] = Some(elite.clone());
        elite
    }

    /// NSGA-II's survivors of `pool`: whole fronts, then the next by crowding distance.
    fn elite(&self, pool: &[usize]) -> Vec<usize> {
        let d = self.objectives();
        let pts = self.points(pool);
        let mut elite = Vec::with_capacity(self.population);
        for front in nondominated_fronts(&pts, d) {
            if elite.len() + front.len() < self.population {
                elite.extend(front.iter().map(|&k| pool[k]));
                continue;
            }
            let crowd = crowding_distance(&pts, d, &front);
            let mut order: Vec<usize> = (0..front.len()).collect();
            order.sort_by(|&a, &b| crowd[b].total_cmp(&crowd[a]).then(a.cmp(&b)));
            let n = self.population - elite.len();
            elite.extend(order[..n].iter().map(|&k| pool[front[k]]));
            break;
        }
        elite
    }

    /// A parent by binary tournament among `cands` (indices into `evals`).
    fn tournament(
        &self,
        cands: &[usize],
        rank: &HashMap<usize, (usize, f64)>,
        rng: &mut Rng,
    ) -> usize {
        let a = cands[rng.below(cands.len())];
        let b = cands[rng.below(cands.len())];
        let wins = if self.crowded {
            let (ra, ca) = rank[&a];
            let (rb, cb) = rank[&b];
            ra < rb || (ra == rb && ca > cb)
        } else {
            let v = |i: usize| self.evals[i].values.as_deref().unwrap_or_default();
            dominates(v(a), v(b))
        };
        if wins { a } else { b }
    }

    /// Per parent: its front and crowding distance within the parents (the crowded tournament).
    fn ranks(&self, parents: &[usize]) -> HashMap<usize, (usize, f64)> {
        let mut out = HashMap::new();
        if !self.crowded {
            return out;
        }
        let d = self.objectives();
        let pts = self.points(parents);
        for (r, front) in nondominated_fronts(&pts, d).iter().enumerate() {
            let crowd = crowding_distance(&pts, d, front);
            for (k, &m) in front.iter().enumerate() {
                out.insert(parents[m], (r, crowd[k]));
            }
        }
        out
    }

    /// A child of `parents`, snapped to an open configuration, or None when none is open.
    fn child(&mut self, parents: &[usize], p: &PoolView<'_>, rng: &mut Rng) -> Option<u32> {
        let space = p.space;
        let several = space.learners.len() > 1;
        let ranks = self.ranks(parents);
        let (first, second) = if rng.f64() < self.crossover_prob {
            let a = self.tournament(parents, &ranks, rng);
            let rest: Vec<usize> = parents.iter().copied().filter(|&x| x != a).collect();
            let b = if rest.is_empty() {
                a
            } else {
                self.tournament(&rest, &ranks, rng)
            };
            (a, Some(b))
        } else {
            (parents[rng.below(parents.len())], None)
        };
        let ca = self.evals[first].config as usize;
        let cb = second.map(|b| self.evals[b].config as usize);
        // The learner, then its dimensions: each from the second parent with probability
        // swapping_prob when it has them.
        let swapping = self.swapping_prob;
        let take_second = |rng: &mut Rng| cb.is_some() && rng.f64() >= swapping;
        let mut learner = space.learner(ca);
        if several
            && let Some(cb) = cb
            && take_second(rng)
        {
            learner = space.learner(cb);
        }
        let dims = &space.learners[learner];
        let mut values: Vec<f32> = Vec::with_capacity(dims.len());
        for k in 0..dims.len() {
            let va = (space.learner(ca) == learner).then(|| space.values(ca)[k]);
            let vb = cb
                .filter(|&cb| space.learner(cb) == learner)
                .map(|cb| space.values(cb)[k]);
            let v = match (va, vb) {
                (Some(a), Some(b)) => {
                    if take_second(rng) {
                        b
                    } else {
                        a
                    }
                }
                (None, Some(b)) => b,
                (Some(a), None) => a,
                (None, None) => f32::NAN,
            };
            values.push(v);
        }
        // Mutation: each parameter (the learner when the pool has several, and each dimension)
        // redrawn uniformly with probability mutation_prob (0: 1 / d).
        let d = dims.len() + usize::from(several);
        let prob = if self.mutation_prob > 0.0 {
            self.mutation_prob
        } else {
            1.0 / d.max(1) as f64
        };
        if several && rng.f64() < prob {
            let l = rng.below(space.learners.len());
            if l != learner {
                learner = l;
                values = space.learners[l]
                    .iter()
                    .map(|dim| uniform(dim.scale, rng))
                    .collect();
            }
        }
        let dims = &space.learners[learner];
        for (k, dim) in dims.iter().enumerate() {
            if rng.f64() < prob {
                values[k] = uniform(dim.scale, rng);
            }
        }
        let (config, dist) = nearest(space, p.open, learner, &values, rng)?;
        self.children += 1;
        if dist > 0.0 {
            self.snapped += 1;
        }
        self.distance += dist;
        Some(config)
    }
}

/// A value of a dimension drawn uniformly in its encoding.
fn uniform(scale: Scale, rng: &mut Rng) -> f32 {
    match scale {
        Scale::Numeric { .. } => rng.f64() as f32,
        Scale::Ordinal(n) => {
            let n = usize::from(n.max(1));
            if n == 1 {
                0.0
            } else {
                rng.below(n) as f32 / (n - 1) as f32
            }
        }
        Scale::Categorical(n) => rng.below(usize::from(n.max(1))) as f32,
    }
}

/// The distance between encoded values of one learner (see the module documentation).
fn distance(space: &Space, learner: usize, a: &[f32], b: &[f32]) -> f64 {
    space.learners[learner]
        .iter()
        .zip(a.iter().zip(b))
        .map(|(dim, (&x, &y))| match (x.is_nan(), y.is_nan()) {
            (true, true) => 0.0,
            (true, false) | (false, true) => 1.0,
            _ if dim.scale.is_categorical() => f64::from(u8::from(x != y)),
            _ => f64::from((x - y).abs()),
        })
        .sum()
}

/// The open configuration nearest to `values` (of `learner`; another learner's only when none of
/// it is open, at 1 + its dimensions), equal distances broken at random; None when none is open.
fn nearest(
    space: &Space,
    open: &[bool],
    learner: usize,
    values: &[f32],
    rng: &mut Rng,
) -> Option<(u32, f64)> {
    let own = (0..space.len()).any(|c| open[c] && space.learner(c) == learner);
    let mut best = f64::INFINITY;
    let mut pick = None;
    let mut ties = 0usize;
    for c in (0..space.len()).filter(|&c| open[c]) {
        let dist = if space.learner(c) == learner {
            distance(space, learner, values, space.values(c))
        } else if own {
            continue;
        } else {
            1.0 + values.len() as f64
        };
        if dist < best {
            (best, pick, ties) = (dist, Some(c), 1);
        } else if dist == best {
            ties += 1;
            if rng.below(ties) == 0 {
                pick = Some(c);
            }
        }
    }
    pick.map(|c| (c as u32, best))
}

impl Proposer for Nsga2 {
    fn begin(&mut self, start: &CellStart<'_>) -> Result<()> {
        let Some(pool) = &start.pool else {
            anyhow::bail!("nsga2 needs the pool world");
        };
        self.maximize = pool.objectives.iter().map(|o| o.1).collect();
        self.evals.clear();
        self.generation_of.clear();
        self.parents.clear();
        (self.draws, self.children, self.snapped, self.distance) = (0, 0, 0, 0.0);
        Ok(())
    }

    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        let g = self.next_generation();
        let parents = self.parents_of(g);
        if parents.is_empty() {
            self.draws += 1;
            return Ok(Proposal::Draw);
        }
        Ok(match self.child(&parents, p, rng) {
            Some(c) => {
                self.generation_of.insert(c, g);
                Proposal::Choose(c)
            }
            None => Proposal::Stop,
        })
    }

    fn tell(&mut self, config: u32, _budget: u32, score: Option<f64>) {
        if self.maximize.is_empty() {
            let values = score.filter(|s| s.is_finite()).map(|s| vec![-s]);
            self.push(config, values);
        }
    }

    fn tell_objectives(&mut self, config: u32, _budget: u32, values: Option<&[f64]>) {
        let v = values.and_then(|v| crate::pareto::minimised(v, &self.maximize));
        self.push(config, v);
    }

    fn stats(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "draws": self.draws,
            "children": self.children,
            "snapped": self.snapped,
            "mean_distance": if self.children > 0 { self.distance / self.children as f64 } else { 0.0 },
        }))
    }
}

impl Nsga2 {
    fn push(&mut self, config: u32, values: Option<Vec<f64>>) {
        let generation = self.generation_of.get(&config).copied().unwrap_or(0);
        self.evals.push(Eval {
            config,
            values,
            generation,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nsga(population: usize) -> Nsga2 {
        Nsga2 {
            population,
            crossover_prob: 0.9,
            swapping_prob: 0.5,
            maximize: vec![false, false],
            ..Nsga2::default()
        }
    }

    /// Generations count finished evaluations: the first `population` finished ones fill
    /// generation 0, the next evaluation belongs to generation 1; failures do not count.
    #[test]
    fn generations_follow_finished_evaluations() {
        let mut n = nsga(3);
        assert_eq!(n.next_generation(), 0);
        n.tell_objectives(0, 1, Some(&[1.0, 2.0]));
        n.tell_objectives(1, 1, None);
        n.tell_objectives(2, 1, Some(&[2.0, f64::NAN]));
        n.tell_objectives(3, 1, Some(&[2.0, 1.0]));
        assert_eq!(n.next_generation(), 0, "two complete of three");
        n.tell_objectives(4, 1, Some(&[3.0, 3.0]));
        assert_eq!(n.next_generation(), 1);
        // Generation 1's parents: the elite of generation 0, cached.
        let parents = n.parents_of(1);
        let configs: Vec<u32> = parents.iter().map(|&i| n.evals[i].config).collect();
        assert_eq!(configs, vec![0, 3, 4]);
        n.generation_of.insert(9, 1);
        n.tell_objectives(9, 1, Some(&[0.5, 0.5]));
        assert_eq!(n.next_generation(), 1, "one complete in generation 1");
    }

    /// Survivors: whole fronts while they fit, then the cut front by crowding distance.
    #[test]
    fn the_elite_takes_whole_fronts_then_the_most_crowded_out() {
        let mut n = nsga(4);
        // Front 1: (0,4) (1,3) (2,2.9) (4,0); front 2: (5,5). Population 4 of 5: front 1 whole
        // would make 4 = population, so it is cut by crowding: the extremes (infinite) and then
        // (1,3) has (2-0)/4 + (4-2.9)/4 = 0.775, (2,2.9) has (4-1)/4 + (3-0)/4 = 1.5.
        for (c, v) in [
            (0, [0.0, 4.0]),
            (1, [1.0, 3.0]),
            (2, [2.0, 2.9]),
            (3, [4.0, 0.0]),
            (4, [5.0, 5.0]),
        ] {
            n.tell_objectives(c, 1, Some(&v));
        }
        let elite = n.elite(&[0, 1, 2, 3, 4]);
        let mut e = elite.clone();
        e.sort();
        assert_eq!(e, vec![0, 1, 2, 3]);
        let n3 = Nsga2 { population: 3, ..n };
        let mut e = n3.elite(&[0, 1, 2, 3, 4]);
        e.sort();
        assert_eq!(e, vec![0, 2, 3], "(1,3) is the most crowded");
    }

    fn grid() -> Space {
        use crate::space::{SpaceDim, UNIT};
        let mut space = Space::new(vec![vec![
            SpaceDim::of("a", Scale::Categorical(3)),
            SpaceDim::of("b", UNIT),
        ]]);
        for a in 0..3 {
            for b in 0..5 {
                space.push(0, &[a as f32, b as f32 / 4.0]);
            }
        }
        space
    }

    /// Snapping: an open configuration equal to the child is found at distance 0; otherwise the
    /// nearest by |Δ| plus 1 per categorical mismatch, ties at random among the nearest.
    #[test]
    fn children_snap_to_the_nearest_open_configuration() {
        let space = grid();
        let mut open = vec![true; space.len()];
        let mut rng = Rng::new(5);
        assert_eq!(
            nearest(&space, &open, 0, &[1.0, 0.5], &mut rng),
            Some((7, 0.0))
        );
        open[7] = false;
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..40 {
            let (c, d) = nearest(&space, &open, 0, &[1.0, 0.5], &mut rng).unwrap();
            assert!((d - 0.25).abs() < 1e-6, "{d}");
            seen.insert(c);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![6, 8]);
        open.iter_mut().for_each(|o| *o = false);
        assert_eq!(nearest(&space, &open, 0, &[1.0, 0.5], &mut rng), None);
    }
}
