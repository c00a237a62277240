//! ε-greedy.
//!
//! Source: Sutton & Barto (2018) as used by ER-UCB (Hu, Yu & Liao 2019, "Cascaded Algorithm-Selection and Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit", IJCAI,
//! §4, ε = 0.1) and HAMLET (`004_366c3cb053cfed37.txt`, §II-A). With probability ε pull a uniformly
//! random arm, otherwise the arm with the highest mean reward, ties broken uniformly at random.
//! Choices the paper leaves open, with the ER-UCB authors' code as default
//! (the authors' released code): no initial pulls, and an arm without rewards has
//! mean 0.

use super::{Action, Family, Kind, Means, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::{Rng, argmax_random};

pub fn family() -> Family {
    Family {
        name: "epsilon-greedy",
        summary: "random arm with probability epsilon, else the best mean reward",
        source: "Sutton & Barto 2018, 'Reinforcement Learning: An Introduction' (2nd ed.), §2.2; ER-UCB baseline (Hu, Yu & Liao 2019, ER-UCB, IJCAI, §4); ER-UCB code semantics (the authors' released code)",
        worlds: &WorldKind::LEARNER,
        parallel: &[],
        params: vec![
            ParamDef {
                name: "epsilon",
                kind: Kind::Float { min: 0.0, max: 1.0 },
                default: Value::Float(0.1),
                doc: "probability of pulling a uniformly random arm (ER-UCB paper: 0.1)",
            },
            ParamDef {
                name: "initial_pulls",
                kind: Kind::Int { min: 0, max: 1000 },
                default: Value::Int(0),
                doc: "pulls of each arm, in index order, before the rule applies (authors' code: 0)",
            },
        ],
        build: |p: &Params, n| {
            Box::new(EpsilonGreedy {
                epsilon: p.float("epsilon"),
                initial: p.int("initial_pulls") as u64,
                means: Means::new(n),
                scratch: vec![0.0; n],
            })
        },
    }
}

pub struct EpsilonGreedy {
    epsilon: f64,
    initial: u64,
    means: Means,
    scratch: Vec<f64>,
}

impl Rule for EpsilonGreedy {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        if let Some(a) = self.means.first_below(self.initial) {
            return Action::Pull(a);
        }
        if rng.chance(self.epsilon) {
            return Action::Pull(rng.below(view.n_arms));
        }
        for (i, s) in self.scratch.iter_mut().enumerate() {
            *s = self.means.mean(i);
        }
        Action::Pull(argmax_random(&self.scratch, rng))
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
    fn greedy_arm_gets_one_minus_epsilon_plus_its_random_share() {
        let mut p = testing::build("epsilon-greedy", &[("epsilon", toml::Value::Float(0.2))], 3);
        // Means: arm 0 = 0.5, arm 1 = 0.8, arm 2 = 0.2 (a None reward counts as a pull only).
        let pulls = testing::feed(
            p.as_mut(),
            &[(0, Some(0.5)), (1, Some(0.8)), (2, Some(0.2)), (1, None)],
        );
        let z = [0.0; 3];
        let v = testing::view(&pulls, &z);
        let mut rng = Rng::new(4);
        let n = 20000;
        let hits = (0..n)
            .filter(|_| p.decide(&v, &mut rng) == Action::Pull(1))
            .count();
        // P(arm 1) = 1 - 0.2 + 0.2 / 3 = 0.8667.
        let share = hits as f64 / n as f64;
        assert!((share - 0.8667).abs() < 0.01, "{share}");
    }

    #[test]
    fn unplayed_arms_have_mean_zero_and_ties_are_random() {
        let mut p = testing::build("epsilon-greedy", &[("epsilon", toml::Value::Float(0.0))], 2);
        let z = [0.0; 2];
        let v = testing::view(&[0, 0], &z);
        let mut rng = Rng::new(1);
        let ones = (0..1000)
            .filter(|_| p.decide(&v, &mut rng) == Action::Pull(1))
            .count();
        assert!((400..600).contains(&ones), "{ones}");
        // A negative mean loses to an unplayed arm's 0.
        testing::feed(p.as_mut(), &[(0, Some(-0.3))]);
        assert_eq!(p.decide(&v, &mut rng), Action::Pull(1));
    }
}
