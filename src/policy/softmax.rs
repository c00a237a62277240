//! Softmax (Boltzmann) exploration.
//!
//! Source: Tokic & Palm 2011 as used by ER-UCB (Hu, Yu & Liao 2019, "Cascaded Algorithm-Selection and Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit", IJCAI, §4):
//! P(i) = exp(μ_i / τ) / Σ_j exp(μ_j / τ), with μ_i the mean reward of arm i. The paper states
//! τ = 0.1; the authors' committed script passes τ = 0.5 (the authors' released code):
//! both are values of `tau`. As in their code there are no initial pulls and an arm without
//! rewards has mean 0. (Exponents are shifted by max μ for numerical safety; the probabilities
//! are unchanged.)

use super::{Action, Family, Kind, Means, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

pub fn family() -> Family {
    Family {
        name: "softmax",
        summary: "pull arm i with probability proportional to exp(mean_i / tau)",
        source: "Tokic & Palm 2011, 'Value-Difference Based Exploration: Adaptive Control between Epsilon-Greedy and Softmax', KI 2011 (Boltzmann exploration); ER-UCB baseline (Hu, Yu & Liao 2019, ER-UCB, IJCAI, §4); ER-UCB code semantics (the authors' released code)",
        worlds: &WorldKind::LEARNER,
        parallel: &[],
        params: vec![
            ParamDef {
                name: "tau",
                kind: Kind::Float {
                    min: 1e-6,
                    max: 1e6,
                },
                default: Value::Float(0.1),
                doc: "temperature (ER-UCB paper: 0.1; the authors' script: 0.5)",
            },
            ParamDef {
                name: "initial_pulls",
                kind: Kind::Int { min: 0, max: 1000 },
                default: Value::Int(0),
                doc: "pulls of each arm, in index order, before the rule applies (authors' code: 0)",
            },
        ],
        build: |p: &Params, n| {
            Box::new(Softmax {
                tau: p.float("tau"),
                initial: p.int("initial_pulls") as u64,
                means: Means::new(n),
                weights: vec![0.0; n],
            })
        },
    }
}

pub struct Softmax {
    tau: f64,
    initial: u64,
    means: Means,
    weights: Vec<f64>,
}

impl Softmax {
    fn probabilities(&mut self) -> &[f64] {
        let n = self.weights.len();
        let max = (0..n)
            .map(|i| self.means.mean(i))
            .fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for i in 0..n {
            let w = ((self.means.mean(i) - max) / self.tau).exp();
            self.weights[i] = w;
            total += w;
        }
        for w in &mut self.weights {
            *w /= total;
        }
        &self.weights
    }
}

impl Rule for Softmax {
    fn decide(&mut self, _view: &View<'_>, rng: &mut Rng) -> Action {
        if let Some(a) = self.means.first_below(self.initial) {
            return Action::Pull(a);
        }
        let u = rng.f64();
        let probs = self.probabilities();
        let mut acc = 0.0;
        for (i, p) in probs.iter().enumerate() {
            acc += p;
            if u < acc {
                return Action::Pull(i);
            }
        }
        Action::Pull(probs.len() - 1)
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        self.means.observe(obs);
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::{Action, testing};
    use crate::rng::Rng;

    #[test]
    fn shares_follow_the_boltzmann_distribution() {
        let mut p = testing::build("softmax", &[("tau", toml::Value::Float(0.1))], 2);
        let pulls = testing::feed(p.as_mut(), &[(0, Some(0.9)), (1, Some(0.8))]);
        let z = [0.0; 2];
        let v = testing::view(&pulls, &z);
        let mut rng = Rng::new(2);
        let n = 20000;
        let zeros = (0..n)
            .filter(|_| p.decide(&v, &mut rng) == Action::Pull(0))
            .count();
        // P(0) = e^9 / (e^9 + e^8) = 1 / (1 + e^-1) = 0.7311.
        let share = zeros as f64 / n as f64;
        assert!((share - 0.7311).abs() < 0.01, "{share}");
    }
}
