//! Uniform random selection.
//!
//! Source: the "random strategy" of ER-UCB (Hu, Yu & Liao 2019, "Cascaded Algorithm-Selection and Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit", IJCAI, §4:
//! "allocates the budget by selecting arms randomly"). In the pull-count world each pull is one
//! random-search trial of the chosen learner, so this is also the replay of random search over the
//! joint space with the learner as a uniformly drawn categorical hyper-parameter ("Joint"), except
//! that Joint draws without the authors' one initial pull per arm, which `initial_pulls` can add.

use super::{Action, Family, Kind, Means, ParamDef, Params, Rule, Value, random_free_arm};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

pub fn family() -> Family {
    Family {
        name: "random",
        summary: "pull a uniformly random arm (with several workers: one not running)",
        source: "ER-UCB baseline 'random' (Hu, Yu & Liao 2019, ER-UCB, IJCAI, §4); BTB 'Uniform'",
        worlds: &WorldKind::LEARNER,
        parallel: &WorldKind::LEARNER,
        params: vec![ParamDef {
            name: "initial_pulls",
            kind: Kind::Int { min: 0, max: 1000 },
            default: Value::Int(0),
            doc: "pulls of each arm, in index order, before drawing at random (ER-UCB's code: 1)",
        }],
        build: |p: &Params, n| {
            Box::new(Random {
                initial: p.int("initial_pulls") as u64,
                means: Means::new(n),
            })
        },
    }
}

pub struct Random {
    initial: u64,
    means: Means,
}

impl Rule for Random {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        if let Some(a) = self.means.start_phase(self.initial, view) {
            return a;
        }
        random_free_arm(view, rng)
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
    fn draws_every_arm_about_equally_after_the_initial_pulls() {
        let mut p = testing::build("random", &[("initial_pulls", toml::Value::Integer(1))], 4);
        let z = [0.0; 4];
        let mut rng = Rng::new(9);
        let v = testing::view(&[0, 0, 0, 0], &z);
        let first: Vec<Action> = (0..4)
            .map(|i| {
                let a = p.decide(&v, &mut rng);
                p.observe(&testing::obs(i, Some(0.5)));
                a
            })
            .collect();
        assert_eq!(first, [0, 1, 2, 3].map(Action::Pull).to_vec());
        let mut counts = [0usize; 4];
        for _ in 0..4000 {
            let Action::Pull(a) = p.decide(&v, &mut rng) else {
                panic!("a learner-level policy only pulls")
            };
            counts[a] += 1;
        }
        assert!(
            counts.iter().all(|&c| (850..1150).contains(&c)),
            "{counts:?}"
        );
    }
}
