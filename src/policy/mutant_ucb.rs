//! Infinite-armed model selection with UCB-E and evolutionary operators (Brégère & Keisler 2024,
//! "A Bandit Approach with Evolutionary Operators for Model Selection", arXiv 2402.05144), on the
//! pool world: a "sub-train" is one fidelity unit, a "model" one configuration's curve.
//!
//! - `inf-ucb-e` (Algorithm 1, ∞-UCB-E): draw K configurations and train each once; then train
//!   I_t = argmax_k μ̂_k + √(E / N_k) (eq. 3), μ̂_k the mean of arm k's unit scores (eq. 2) and N_k
//!   its trainings. The paper's models can always be trained further; a replayed curve ends (at
//!   its last unit, or at a failed one), so an arm whose curve has ended is left out of the
//!   argmax, and when every arm has ended a fresh configuration is drawn (K grows).
//! - `mutant-ucb` (Algorithm 2, Mutant-UCB): as ∞-UCB-E, but the chosen arm is trained with
//!   probability p_t = 1 − N̄_I / N (`train_probability = "linear"`; the paper's alternative
//!   1 − exp(N̄_I − N) is `"exponential"`), N̄ its trainings and N the most any model gets, and
//!   otherwise mutated: a grid neighbour of its configuration becomes a new arm, trained once,
//!   with N = N̄ = 1, and the parent's N_I grows by one (the mutation counts against it, as in
//!   the paper and DRAGON). Replay cannot pass the parent's trained weights on: the mutant starts
//!   at unit 1 of its own curve. With `finalisation = "train-best-to-n"` (the paper), once the budget left is
//!   below N sub-trains, the arm with the best μ̂ is trained up to N (Algorithm 2's
//!   finalisation; budget still left after it goes back to the main loop, where a model at N
//!   can only be mutated, as replay has no idle action);
//!   DRAGON's code has no finalisation (`finalisation = "none"`).
//!   The paper's reservoir never runs out; a replayed pool does. Once no configuration is left
//!   to draw or mutate into (every one is drawn, or `[world] max_arms` is reached), a mutation
//!   is impossible, so the cap N that makes the rule mutate instead of train no longer applies:
//!   the index picks among the models whose curves can still train, past N (the ∞-UCB-E rule
//!   on what is left), and when no model can train the cell stops (`Action::Stop`) instead of
//!   spending its budget on pulls that reveal nothing. ∞-UCB-E and the steady-state EA stop
//!   likewise when nothing can train or be drawn. A failed unit ends its curve: with
//!   `on_failure = "keep"` (the paper, which has no failures) the arm keeps its μ̂ and, when
//!   chosen, can only be mutated; with `"remove"` (DRAGON: an infinite loss removes the model)
//!   it is never chosen again. DRAGON also does not charge a failed evaluation to the budget:
//!   that is a world rule (`[world] failures_consume_budget = false`).
//! - `steady-state-ea` (the paper's §5.1 baseline, as DRAGON's `SteadyStateEA`): K_EA random
//!   configurations, each trained N units; then offspring, each fully trained: a parent is
//!   chosen by tournament selection (the best last score among `tournament` members drawn
//!   uniformly with replacement from the population) and mutated into a grid neighbour; an
//!   offspring better than the population's worst replaces it. DRAGON makes two offspring from
//!   two parents by a two-point crossover of their DAGs before mutating; the pool world has
//!   mutation only, so offspring here are mutants of one parent.
//!
//! Scores are in the reward orientation of the world (larger is better); DRAGON minimises losses
//! with the index UCBLoss − √(E/N), the same rule. Ties go to the lowest arm index, as numpy's
//! argmax/argmin in DRAGON.

use super::{Action, Family, Kind, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

fn k_param(default: i64, doc: &'static str) -> ParamDef {
    ParamDef {
        name: "k",
        kind: Kind::Int {
            min: 1,
            max: 10_000_000,
        },
        default: Value::Int(default),
        doc,
    }
}

fn e_param() -> ParamDef {
    ParamDef {
        name: "e",
        kind: Kind::Float { min: 0.0, max: 1e9 },
        default: Value::Float(0.05),
        doc: "exploration constant E of the index μ̂ + √(E/N) (the paper's experiments: 0.05)",
    }
}

fn n_param(doc: &'static str) -> ParamDef {
    ParamDef {
        name: "n",
        kind: Kind::Int {
            min: 1,
            max: 100_000,
        },
        default: Value::Int(10),
        doc,
    }
}

pub fn family_inf_ucb_e() -> Family {
    Family {
        name: "inf-ucb-e",
        summary: "∞-UCB-E: K drawn configurations, then the UCB-E index μ̂ + √(E/N) picks the one to train one more unit",
        source: "Brégère & Keisler 2024, 'A Bandit Approach with Evolutionary Operators for Model Selection', arXiv 2402.05144, Algorithm 1 (∞-UCB-E), eqs. 2-3",
        worlds: WORLDS,
        parallel: &[],
        params: vec![
            k_param(
                100,
                "configurations drawn and trained once at the start (the paper's Table 2: 3000)",
            ),
            e_param(),
        ],
        build: |p: &Params, _| {
            Box::new(MutantUcb {
                k: p.int("k") as usize,
                e: p.float("e"),
                mutation: None,
                ..MutantUcb::default()
            })
        },
    }
}

pub fn family_mutant_ucb() -> Family {
    Family {
        name: "mutant-ucb",
        summary: "Mutant-UCB: ∞-UCB-E whose chosen model is trained with probability 1 - N̄/N, else mutated into a new arm; at most N trainings a model",
        source: "Brégère & Keisler 2024, 'A Bandit Approach with Evolutionary Operators for Model Selection', arXiv 2402.05144, Algorithm 2 (Mutant-UCB); DRAGON 1.1 (dragon-autodl) mutant_ucb.py for the code's conventions",
        worlds: WORLDS,
        parallel: &[],
        params: vec![
            k_param(
                100,
                "initial number of models, drawn and trained once (the paper: a bit below T/N; Table 2: 500)",
            ),
            n_param("most sub-trains (units) one model gets, N (the paper: 10)"),
            e_param(),
            ParamDef {
                name: "train_probability",
                kind: Kind::Choice(&["linear", "exponential"]),
                default: Value::Text("linear".into()),
                doc: "probability of training (else mutating) the chosen model: 1 - N̄/N (the paper, and DRAGON) or 1 - exp(N̄ - N) (the paper's named alternative)",
            },
            ParamDef {
                name: "finalisation",
                kind: Kind::Choice(&["train-best-to-n", "none"]),
                default: Value::Text("train-best-to-n".into()),
                doc: "keep the last N sub-trains of the budget to train the best-μ̂ model to N units (Algorithm 2's finalisation), or not (DRAGON's code)",
            },
            ParamDef {
                name: "on_failure",
                kind: Kind::Choice(&["keep", "remove"]),
                default: Value::Text("keep".into()),
                doc: "a model whose unit failed: keeps its mean and can only be mutated (the paper has no failures) or is never chosen again (DRAGON removes it)",
            },
        ],
        build: |p: &Params, _| {
            Box::new(MutantUcb {
                k: p.int("k") as usize,
                e: p.float("e"),
                mutation: Some(Mutation {
                    n: p.int("n") as u64,
                    exponential: p.text("train_probability") == "exponential",
                    finalise: p.text("finalisation") == "train-best-to-n",
                }),
                remove_failed: p.text("on_failure") == "remove",
                ..MutantUcb::default()
            })
        },
    }
}

pub fn family_steady_state_ea() -> Family {
    Family {
        name: "steady-state-ea",
        summary: "Steady-state evolutionary algorithm: K_EA models fully trained, then tournament-selected parents' mutants fully trained, each replacing the population's worst if better",
        source: "Brégère & Keisler 2024, 'A Bandit Approach with Evolutionary Operators for Model Selection', arXiv 2402.05144, §5.1 baseline (after Liu et al. 2018); DRAGON 1.1 ssea.py (tournament selection, replace-worst); mutation only (no crossover in the pool world)",
        worlds: WORLDS,
        parallel: &[],
        params: vec![
            k_param(
                10,
                "initial population K_EA, drawn at random and each trained N units (the paper: K_EA << T/N)",
            ),
            n_param("sub-trains (units) every model gets, N (the paper: 10)"),
            ParamDef {
                name: "tournament",
                kind: Kind::Int {
                    min: 1,
                    max: 10_000,
                },
                default: Value::Int(3),
                doc: "members drawn (with replacement) for the tournament that picks a parent (DRAGON's selection_size; its example: 3)",
            },
        ],
        build: |p: &Params, _| {
            Box::new(SteadyStateEa {
                k: p.int("k") as usize,
                n: p.int("n") as u64,
                tournament: p.int("tournament") as usize,
                ..SteadyStateEa::default()
            })
        },
    }
}

/// Mutant-UCB's additions to ∞-UCB-E.
#[derive(Clone, Copy, Debug, Default)]
struct Mutation {
    n: u64,
    exponential: bool,
    finalise: bool,
}

/// ∞-UCB-E, or Mutant-UCB when `mutation` is set.
#[derive(Default)]
pub struct MutantUcb {
    k: usize,
    e: f64,
    mutation: Option<Mutation>,
    remove_failed: bool,
    /// Per arm: N (times chosen, mutations included), N̄ (units trained), the sum of unit scores.
    chosen: Vec<u64>,
    trained: Vec<u64>,
    sum: Vec<f64>,
    /// Per arm: a unit failed.
    failed: Vec<bool>,
    /// The parent of the mutation under way, charged when the mutant is observed.
    parent: Option<usize>,
}

impl MutantUcb {
    fn mean(&self, a: usize) -> f64 {
        if self.trained[a] == 0 {
            f64::NEG_INFINITY
        } else {
            self.sum[a] / self.trained[a] as f64
        }
    }

    /// The UCB-E index of eq. (3); an arm never chosen has an infinite index.
    fn index(&self, a: usize) -> f64 {
        if self.chosen[a] == 0 {
            return f64::INFINITY;
        }
        self.mean(a) + (self.e / self.chosen[a] as f64).sqrt()
    }

    /// argmax of `score` over the arms `ok` admits; ties to the lowest index.
    fn argmax(&self, ok: impl Fn(usize) -> bool, score: impl Fn(usize) -> f64) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for a in 0..self.chosen.len() {
            if !ok(a) {
                continue;
            }
            let s = score(a);
            if best.is_none_or(|(_, b)| s > b) {
                best = Some((a, s));
            }
        }
        best.map(|(a, _)| a)
    }

    /// Sub-trains the remaining budget still affords, in units of one training: the budget is
    /// counted in units, or in seconds, where one training costs the mean spent per decision.
    fn trainings_left(view: &View<'_>) -> f64 {
        let per = if view.step == 0 {
            1.0
        } else {
            (view.used / view.step as f64).max(f64::MIN_POSITIVE)
        };
        view.remaining() / per
    }

    fn grow(&mut self, arm: usize) {
        while self.chosen.len() <= arm {
            self.chosen.push(0);
            self.trained.push(0);
            self.sum.push(0.0);
            self.failed.push(false);
        }
    }
}

impl Rule for MutantUcb {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        let Some(pool) = view.pool else {
            return Action::Draw;
        };
        self.grow(view.n_arms.saturating_sub(1));
        if view.n_arms < self.k && pool.undrawn > 0 {
            return Action::Draw;
        }
        let Some(m) = self.mutation else {
            // ∞-UCB-E: the best index among arms that can still train.
            return match self.argmax(|a| !pool.done[a], |a| self.index(a)) {
                Some(a) => Action::Pull(a),
                None if pool.undrawn > 0 => Action::Draw,
                None => Action::Stop,
            };
        };
        let eligible = |a: usize| !(self.remove_failed && self.failed[a]);
        if m.finalise && Self::trainings_left(view) < m.n as f64 {
            // Finalisation: train the best-μ̂ model up to N (then, with budget left, go on).
            if let Some(best) = self.argmax(eligible, |a| self.mean(a))
                && self.trained[best] < m.n
                && !pool.done[best]
            {
                return Action::Pull(best);
            }
        }
        let Some(i) = self.argmax(eligible, |a| self.index(a)) else {
            return if pool.undrawn > 0 {
                Action::Draw
            } else {
                Action::Stop
            };
        };
        let nbar = self.trained[i];
        let p_train = if pool.done[i] || nbar >= m.n {
            0.0
        } else if m.exponential {
            1.0 - (nbar as f64 - m.n as f64).exp()
        } else {
            1.0 - nbar as f64 / m.n as f64
        };
        if rng.f64() < p_train {
            Action::Pull(i)
        } else if pool.undrawn > 0 {
            self.parent = Some(i);
            Action::Mutate(i)
        } else if !pool.done[i] {
            // Nothing left to mutate into: the chosen model trains if its curve goes on.
            Action::Pull(i)
        } else {
            // ... else the best index among the models that can still train, past N.
            match self.argmax(|a| eligible(a) && !pool.done[a], |a| self.index(a)) {
                Some(a) => Action::Pull(a),
                None => Action::Stop,
            }
        }
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        self.grow(obs.arm);
        let a = obs.arm;
        if let Some(p) = self.parent.take()
            && p != a
        {
            self.chosen[p] += 1;
        }
        if obs.exhausted {
            return;
        }
        self.chosen[a] += 1;
        match obs.reward {
            Some(r) => {
                self.trained[a] += 1;
                self.sum[a] += r;
            }
            None => self.failed[a] = true,
        }
    }
}

/// The steady-state EA: a population of fully trained models, improved by mutants.
#[derive(Default)]
pub struct SteadyStateEa {
    k: usize,
    n: u64,
    tournament: usize,
    /// Arms in the population.
    population: Vec<usize>,
    /// The arm being trained to N units, if any.
    training: Option<usize>,
}

impl SteadyStateEa {
    fn fitness(view: &View<'_>, a: usize) -> f64 {
        view.pool.map_or(f64::NEG_INFINITY, |p| p.last[a])
    }

    /// The arm under training has its N units (or its curve ended): it joins the population,
    /// while that is below K_EA, or replaces the worst member if it is better.
    fn settle(&mut self, view: &View<'_>, a: usize) {
        let f = Self::fitness(view, a);
        if self.population.len() < self.k {
            self.population.push(a);
            return;
        }
        // The worst member; ties to the earliest in the population, as numpy's argmax.
        let (wi, wf) = self
            .population
            .iter()
            .enumerate()
            .map(|(i, &m)| (i, Self::fitness(view, m)))
            .fold(
                (0, f64::INFINITY),
                |acc, (i, v)| if v < acc.1 { (i, v) } else { acc },
            );
        if f > wf {
            self.population[wi] = a;
        }
    }
}

impl Rule for SteadyStateEa {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        let Some(pool) = view.pool else {
            return Action::Draw;
        };
        if let Some(a) = self.training {
            if view.pulls[a] < self.n && !pool.done[a] {
                return Action::Pull(a);
            }
            self.training = None;
            self.settle(view, a);
        }
        if pool.undrawn == 0 {
            // Nothing new can be made: train any arm that can still train, else stop.
            return match (0..view.n_arms).find(|&a| !pool.done[a]) {
                Some(a) => Action::Pull(a),
                None => Action::Stop,
            };
        }
        if self.population.len() < self.k || self.population.is_empty() {
            return Action::Draw;
        }
        // Tournament selection: the fittest of `tournament` members drawn with replacement
        // (ties to the first drawn).
        let mut best: Option<(usize, f64)> = None;
        for _ in 0..self.tournament.min(self.population.len()).max(1) {
            let m = self.population[rng.below(self.population.len())];
            let f = Self::fitness(view, m);
            if best.is_none_or(|(_, b)| f > b) {
                best = Some((m, f));
            }
        }
        Action::Mutate(best.map_or(self.population[0], |b| b.0))
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        if self.training.is_none() {
            // A draw or a mutation: the new arm trains to N units next.
            self.training = Some(obs.arm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;
    use crate::replay::pool::{PoolWorld, PoolWorldConfig, tests::hand_pool};
    use crate::replay::{Step, World, drive};

    /// Run `family` with `params` on a pool and return the steps.
    fn run(
        pool: &crate::trace::pool::Pool,
        family: &str,
        params: &[(&str, &str)],
        budget: f64,
        seed: u64,
    ) -> (Vec<Step>, Vec<u64>, Vec<u32>) {
        let mut world = PoolWorld::new(
            pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            budget,
            1.0,
            seed,
        );
        let params: Vec<(&str, toml::Value)> = params
            .iter()
            .map(|(k, v)| {
                let v = if let Ok(i) = v.parse::<i64>() {
                    toml::Value::Integer(i)
                } else if let Ok(x) = v.parse::<f64>() {
                    toml::Value::Float(x)
                } else {
                    toml::Value::String(v.to_string())
                };
                (*k, v)
            })
            .collect();
        let mut p = testing::build(family, &params, 0);
        let mut rng = Rng::new(seed);
        let mut steps = Vec::new();
        drive(
            &mut world,
            p.as_mut(),
            family,
            &mut rng,
            crate::replay::Overhead::None,
            &mut [&mut steps],
        )
        .unwrap();
        (
            steps,
            world.ledger().pulls.clone(),
            world.arm_configs().to_vec(),
        )
    }

    #[test]
    fn inf_ucb_e_trains_the_best_index_by_hand() {
        // Config i scores 0.1 i at every unit (5 units). K = 2, E = 0.01: the two draws give
        // arms with means m0, m1 (their configs' 0.1 i) and N = 1 each; then the index
        // m + sqrt(0.01 / N) is m + 0.1 at N = 1, m + 0.0707 at N = 2, m + 0.0577 at N = 3: the
        // better arm keeps winning as long as the other's index stays below, which with a gap of
        // at least 0.1 is always. So every later unit goes to the better of the two arms, until
        // its curve ends (5 units), then to the other.
        let pool = hand_pool(6, 5, |i| vec![0.1 * i as f32; 5]);
        let (steps, pulls, cfg) = run(&pool, "inf-ucb-e", &[("k", "2"), ("e", "0.01")], 8.0, 7);
        assert_eq!(steps[0].action.as_str(), "draw");
        assert_eq!(steps[1].action.as_str(), "draw");
        let best = if cfg[0] > cfg[1] { 0 } else { 1 };
        assert!(steps[2..].iter().all(|s| s.action.as_str() == "pull"));
        // 8 units: 2 draws, then the better arm to its 5th unit (4 more), then 2 for the other.
        assert_eq!(pulls[best], 5);
        assert_eq!(pulls[1 - best], 3);
        assert!(steps[2..6].iter().all(|s| s.arm as usize == best));
        assert!(steps[6..].iter().all(|s| s.arm as usize == 1 - best));
    }

    #[test]
    fn inf_ucb_e_explores_by_the_index() {
        // Two arms, scores 0.5 and 0.45; E = 1: indices 0.5 + 1/sqrt(N). After the draws (N = 1
        // each): 1.5 vs 1.45 -> arm a (the 0.5 one), N_a = 2: 0.5 + 0.7071 = 1.2071 < 1.45 ->
        // arm b, N_b = 2: 0.45 + 0.7071 = 1.1571 < 1.2071 -> a, N_a = 3: 0.5 + 0.5774 = 1.0774
        // < 1.1571 -> b, N_b = 3: 1.0274 < 1.0774 -> a. Sequence after the draws: a b a b a.
        let pool = hand_pool(2, 10, |i| vec![if i == 0 { 0.5 } else { 0.45 }; 10]);
        let (steps, _, cfg) = run(&pool, "inf-ucb-e", &[("k", "2"), ("e", "1")], 7.0, 3);
        let a = cfg.iter().position(|&c| c == 0).unwrap() as u32;
        let b = 1 - a;
        let seq: Vec<u32> = steps[2..].iter().map(|s| s.arm).collect();
        assert_eq!(seq, vec![a, b, a, b, a]);
    }

    #[test]
    fn mutant_ucb_mutates_with_probability_nbar_over_n() {
        // N = 1: after its first unit every model has N̄ = N, so p_train = 0 and the chosen arm
        // is always mutated; each mutant is a new arm. K = 1, 6 units, no finalisation: a draw,
        // then 5 mutations, each of the then-best index. Config i scores 0.1 i, so the grid
        // mutants (i ± 1) of the best arm climb.
        let pool = hand_pool(10, 5, |i| vec![0.1 * i as f32; 5]);
        let (steps, pulls, _) = run(
            &pool,
            "mutant-ucb",
            &[
                ("k", "1"),
                ("n", "1"),
                ("e", "0.0001"),
                ("finalisation", "none"),
            ],
            6.0,
            11,
        );
        let kinds: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(
            kinds,
            vec!["draw", "mutate", "mutate", "mutate", "mutate", "mutate"]
        );
        assert!(
            pulls.iter().all(|&p| p == 1),
            "nobody trained twice: {pulls:?}"
        );
        // With N large the first choices are trainings: N̄ = 1 of N = 1000 gives p_train 0.999.
        let (steps, _, _) = run(
            &pool,
            "mutant-ucb",
            &[("k", "1"), ("n", "1000"), ("finalisation", "none")],
            4.0,
            11,
        );
        let kinds: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(kinds, vec!["draw", "pull", "pull", "pull"]);
    }

    #[test]
    fn mutant_ucb_counts_a_mutation_against_its_parent() {
        let mut p = MutantUcb {
            k: 1,
            e: 1.0,
            mutation: Some(Mutation {
                n: 1,
                exponential: false,
                finalise: false,
            }),
            ..MutantUcb::default()
        };
        // Arm 0 trained once (N = N̄ = 1, mean 0.5); it is mutated into arm 1 (score 0.2).
        p.observe(&testing::obs(0, Some(0.5)));
        p.parent = Some(0);
        p.observe(&testing::obs(1, Some(0.2)));
        assert_eq!(
            p.chosen,
            vec![2, 1],
            "the parent's N grows, the mutant starts at 1"
        );
        assert_eq!(p.trained, vec![1, 1]);
        // Indices: 0.5 + sqrt(1/2) = 1.2071 and 0.2 + 1 = 1.2: the parent stays ahead.
        assert!((p.index(0) - 1.207_106_78).abs() < 1e-8);
        assert!((p.index(1) - 1.2).abs() < 1e-12);
    }

    #[test]
    fn mutant_ucb_finalises_the_best_mean() {
        // K = 3, N = 3, budget 5: after the three draws 2 units are left, fewer than N, so the
        // finalisation starts at once and trains the best-mean model (config scores 0.1 i) to
        // N = 3 units: draw, draw, draw, pull best, pull best.
        let pool = hand_pool(10, 5, |i| vec![0.1 * i as f32; 5]);
        let (steps, pulls, cfg) = run(
            &pool,
            "mutant-ucb",
            &[("k", "3"), ("n", "3"), ("e", "0")],
            5.0,
            5,
        );
        let best = (0..cfg.len()).max_by_key(|&a| cfg[a]).unwrap();
        let kinds: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(kinds, vec!["draw", "draw", "draw", "pull", "pull"]);
        assert!(steps[3..].iter().all(|s| s.arm as usize == best));
        assert_eq!(
            pulls[best], 3,
            "the best model is trained to N: {pulls:?} {cfg:?}"
        );
        // With a larger budget the finalisation stops at N; what is left is the main loop's,
        // where the best model (at N̄ = N) can only be mutated: no model passes N units.
        let (_, pulls, _) = run(
            &pool,
            "mutant-ucb",
            &[("k", "3"), ("n", "3"), ("e", "0")],
            12.0,
            5,
        );
        assert!(pulls.iter().all(|&p| p <= 3), "{pulls:?}");
    }

    #[test]
    fn failed_models_are_kept_or_removed() {
        let mut p = MutantUcb {
            k: 1,
            e: 0.0,
            mutation: Some(Mutation {
                n: 5,
                exponential: false,
                finalise: false,
            }),
            remove_failed: true,
            ..MutantUcb::default()
        };
        p.observe(&testing::obs(0, Some(0.9)));
        p.observe(&testing::obs(0, None));
        assert!(p.failed[0]);
        assert_eq!(p.trained[0], 1, "a failed unit adds no score");
        p.observe(&testing::obs(1, Some(0.1)));
        let eligible = |a: usize| !(p.remove_failed && p.failed[a]);
        assert_eq!(p.argmax(eligible, |a| p.index(a)), Some(1), "removed");
        p.remove_failed = false;
        assert_eq!(p.argmax(|_| true, |a| p.index(a)), Some(0), "kept");
    }

    #[test]
    fn steady_state_ea_replaces_the_worst_with_a_better_mutant() {
        // K_EA = 2, N = 2, budget 8: two random models trained 2 units each (4), then two
        // offspring of 2 units each. Config i scores 0.1 i; tournament of 2 from a population of
        // two picks the better parent unless both draws hit the worse one.
        let pool = hand_pool(12, 4, |i| vec![0.1 * i as f32; 4]);
        let (steps, pulls, cfg) = run(
            &pool,
            "steady-state-ea",
            &[("k", "2"), ("n", "2"), ("tournament", "2")],
            8.0,
            9,
        );
        let kinds: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(
            kinds,
            vec![
                "draw", "pull", "draw", "pull", "mutate", "pull", "mutate", "pull"
            ]
        );
        assert_eq!(pulls, vec![2, 2, 2, 2], "every model fully trained");
        // Each mutant is a grid neighbour (± 1) of an earlier arm.
        for m in [2usize, 3] {
            assert!(
                (0..m).any(|p| cfg[p].abs_diff(cfg[m]) == 1),
                "arm {m} (config {}) is a neighbour: {cfg:?}",
                cfg[m]
            );
        }
        // Replacement by hand on the settled population: a better offspring replaces the worst.
        let mut ea = SteadyStateEa {
            k: 2,
            n: 2,
            tournament: 2,
            population: vec![0, 1],
            training: None,
        };
        let last = [0.3, 0.5, 0.4, 0.2];
        let done = [true; 4];
        let config = [0u32, 1, 2, 3];
        let pulls = [2u64; 4];
        let zeros = [0.0; 4];
        let mut view = testing::view(&pulls, &zeros);
        view.n_arms = 4;
        view.kind = WorldKind::Pool;
        view.pool = Some(crate::protocol::PoolView {
            units: 4,
            undrawn: 8,
            last: &last,
            done: &done,
            config: &config,
            open: &[],
            n_open: 0,
            space: &crate::space::EMPTY,
            defaults: &[],
        });
        ea.settle(&view, 2);
        assert_eq!(ea.population, vec![2, 1], "0.4 replaces the worst, 0.3");
        ea.settle(&view, 3);
        assert_eq!(ea.population, vec![2, 1], "0.2 is worse than all: dropped");
    }

    /// Once every configuration is drawn (or `max_arms` is reached), nothing is spent on pulls
    /// that reveal nothing: each policy trains what can still train and then stops, with budget
    /// left. Hand pool: 6 configurations of 5 units (30 units in all), budget 200 units.
    #[test]
    fn an_exhausted_pool_is_trained_out_and_then_the_cell_stops() {
        let pool = hand_pool(6, 5, |i| vec![0.1 * i as f32 + 0.01; 5]);
        let families: [(&str, &[(&str, toml::Value)]); 3] = [
            (
                "mutant-ucb",
                &[
                    ("k", toml::Value::Integer(2)),
                    ("n", toml::Value::Integer(2)),
                ],
            ),
            ("inf-ucb-e", &[("k", toml::Value::Integer(2))]),
            (
                "steady-state-ea",
                &[
                    ("k", toml::Value::Integer(2)),
                    ("n", toml::Value::Integer(2)),
                ],
            ),
        ];
        for (family, params) in families {
            for (max_arms, units) in [(None, 30u64), (Some(3), 15)] {
                for seed in 0..20 {
                    let cfg = PoolWorldConfig {
                        max_arms,
                        ..PoolWorldConfig::default()
                    };
                    let mut world = PoolWorld::new(&pool, &pool.tasks[0], cfg, 200.0, 1.0, seed);
                    let mut p = testing::build(family, params, 0);
                    let mut rng = Rng::new(seed);
                    drive(
                        &mut world,
                        p.as_mut(),
                        family,
                        &mut rng,
                        crate::replay::Overhead::None,
                        &mut [],
                    )
                    .unwrap_or_else(|e| panic!("{family} max_arms {max_arms:?}: {e}"));
                    let l = world.ledger();
                    let trained: u64 = l.pulls.iter().sum();
                    assert_eq!(
                        (trained, l.exhausted_pulls),
                        (units, 0),
                        "{family}, max_arms {max_arms:?}, seed {seed}: every unit trained, none wasted"
                    );
                    assert!(
                        (l.clock.used - units as f64).abs() < 1e-9,
                        "stopped with budget left"
                    );
                }
            }
        }
    }
}
