//! Round Robin: pull the arms in index order, cyclically.
//!
//! Source: the "Round Robin" baseline of HAMLET (Schmidt, Gastinger, Nicolas & Schülke 2020, "HAMLET: A Learning Curve-Enabled Multi-Armed Bandit for Algorithm Selection", IJCNN,
//! §III-B-3), also HAMLET's start phase (Alg. 1). No parameters.

use super::{Action, Family, Params, Rule};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

pub fn family() -> Family {
    Family {
        name: "round-robin",
        summary: "pull arms 0, 1, ..., K-1, 0, 1, ... regardless of rewards (with several workers: skipping running arms)",
        source: "HAMLET baseline 'Round Robin' (Schmidt et al. 2020, HAMLET, IJCNN, §III-B-3)",
        worlds: &WorldKind::LEARNER,
        parallel: &WorldKind::LEARNER,
        params: vec![],
        build: |_: &Params, _n| Box::new(RoundRobin { next: 0 }),
    }
}

pub struct RoundRobin {
    next: usize,
}

impl Rule for RoundRobin {
    fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
        // With several workers, the next arm in the cycle that is not running; a wait when
        // every arm is running.
        let n = view.n_arms;
        for i in 0..n {
            let arm = (self.next + i) % n;
            if !view.is_busy(arm) {
                self.next = arm + 1;
                return Action::Pull(arm);
            }
        }
        Action::Wait
    }

    fn observe(&mut self, _obs: &Observation<'_>) {}
}

#[cfg(test)]
mod tests {
    use crate::policy::{Action, testing};
    use crate::rng::Rng;

    #[test]
    fn cycles_through_the_arms() {
        let mut p = testing::build("round-robin", &[], 3);
        let z = [0.0; 3];
        let mut rng = Rng::new(0);
        let arms: Vec<Action> = (0..5)
            .map(|_| p.decide(&testing::view(&[0, 0, 0], &z), &mut rng))
            .collect();
        assert_eq!(arms, [0, 1, 2, 0, 1].map(Action::Pull).to_vec());
    }
}
