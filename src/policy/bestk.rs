//! BestK-Rewards and BestK-Velocity, with the semantics of BTB's selectors (MLBazaar/BTB,
//! `baytune/selection/best.py`, after PR #100, which HAMLET's co-author prompted; Smith et al.
//! 2020, "The Machine Learning Bazaar", SIGMOD): the baselines "BestKReward-K" and
//! "BestKVelocity-K" of HAMLET (Schmidt, Gastinger, Nicolas & Schülke 2020, "HAMLET: A Learning
//! Curve-Enabled Multi-Armed Bandit for Algorithm Selection", IJCNN, §III-B-3, K in Table II).
//!
//! Each arm's rewards form a list (one entry per pull; a pull without a reward is NaN there).
//! While some arm has fewer than K_MIN = 2 entries, every arm is scored by plain BTB UCB1 on its
//! raw rewards. Otherwise:
//! - **Rewards**: all but the k largest entries become NaN (numpy's argsort puts NaN last, so
//!   NaN entries count among the "largest"); the arm's mean is the mean of the real values kept.
//! - **Velocity**: the k+1 largest real rewards, sorted, give k differences (velocities); the
//!   arm's list is the velocities padded with max(len - k, 0) NaNs, so with len <= k the arm's
//!   pull count is len - 1 (BTB's undercount, kept on purpose). NaN entries are left out of the
//!   sort here, where Python's `sorted` would order them inconsistently.
//!
//! Then BTB UCB1: mean_i (0 without real values) + sqrt(2 ln max(1, Σ n_i) / max(n_i, 1)),
//! random tie-break. `k` is the one parameter (BTB's default 2; HAMLET's grid 3 to 100).

use super::ucb1::btb_bandit;
use super::{Action, Family, Kind, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

const K_MIN: u64 = 2;

fn k_param() -> ParamDef {
    ParamDef {
        name: "k",
        kind: Kind::Int {
            min: 1,
            max: 100_000,
        },
        default: Value::Int(2),
        doc: "how many of the best rewards (or velocities) score an arm (BTB default 2; HAMLET grid 3, 5, 7, 10, 20, 50, 100)",
    }
}

pub fn family_rewards() -> Family {
    Family {
        name: "bestk-rewards",
        summary: "BTB BestKReward: UCB1 on the mean of each arm's k best rewards",
        source: "BTB library (Smith et al. 2020, 'The Machine Learning Bazaar', SIGMOD) baytune/selection/best.py BestKReward (BTB's code); HAMLET 'BestKReward-K' (Schmidt et al. 2020, HAMLET, IJCNN, §III-B-3)",
        worlds: &WorldKind::LEARNER,
        parallel: &[],
        params: vec![k_param(), super::start_param("none")],
        build: |p: &Params, n| {
            super::with_start(p, Box::new(BestK::new(n, p.int("k") as usize, false)))
        },
    }
}

pub fn family_velocity() -> Family {
    Family {
        name: "bestk-velocity",
        summary: "BTB BestKVelocity: UCB1 on the mean gap between each arm's k+1 best rewards",
        source: "BTB library (Smith et al. 2020, 'The Machine Learning Bazaar', SIGMOD) baytune/selection/best.py BestKVelocity (BTB's code); HAMLET 'BestKVelocity-K' (Schmidt et al. 2020, HAMLET, IJCNN, §III-B-3)",
        worlds: &WorldKind::LEARNER,
        parallel: &[],
        params: vec![k_param(), super::start_param("none")],
        build: |p: &Params, n| {
            super::with_start(p, Box::new(BestK::new(n, p.int("k") as usize, true)))
        },
    }
}

/// Per-arm summary of a reward list, enough for both selectors.
#[derive(Clone, Debug, Default)]
struct ArmRewards {
    len: u64,
    nan: u64,
    sum: f64,
    real: u64,
    /// The largest real rewards, ascending, at most k + 1 of them.
    top: Vec<f64>,
}

pub struct BestK {
    k: usize,
    velocity: bool,
    arms: Vec<ArmRewards>,
    means: Vec<f64>,
    counts: Vec<u64>,
    index: Vec<f64>,
}

impl BestK {
    fn new(n: usize, k: usize, velocity: bool) -> Self {
        BestK {
            k,
            velocity,
            arms: vec![ArmRewards::default(); n],
            means: vec![0.0; n],
            counts: vec![0; n],
            index: vec![0.0; n],
        }
    }

    fn score_rewards(&self, a: &ArmRewards) -> (f64, u64) {
        let kept_real = if a.len as usize <= self.k {
            // argsort(scores)[:-k] is empty: every entry is kept.
            a.real as usize
        } else {
            self.k - (a.nan as usize).min(self.k)
        };
        let kept = &a.top[a.top.len() - kept_real.min(a.top.len())..];
        let mean = if kept.is_empty() {
            0.0
        } else {
            kept.iter().sum::<f64>() / kept.len() as f64
        };
        (mean, a.len)
    }

    fn score_velocity(&self, a: &ArmRewards) -> (f64, u64) {
        let best = &a.top[a.top.len().saturating_sub(self.k + 1)..];
        let n_vel = best.len().saturating_sub(1);
        let mean = if n_vel == 0 {
            0.0
        } else {
            (best[best.len() - 1] - best[0]) / n_vel as f64
        };
        (mean, n_vel as u64 + a.len.saturating_sub(self.k as u64))
    }
}

impl Rule for BestK {
    fn decide(&mut self, _view: &View<'_>, rng: &mut Rng) -> Action {
        let fallback = self.arms.iter().any(|a| a.len < K_MIN);
        for (i, a) in self.arms.iter().enumerate() {
            let (m, c) = if fallback {
                let m = if a.real == 0 {
                    0.0
                } else {
                    a.sum / a.real as f64
                };
                (m, a.len)
            } else if self.velocity {
                self.score_velocity(a)
            } else {
                self.score_rewards(a)
            };
            self.means[i] = m;
            self.counts[i] = c;
        }
        Action::Pull(btb_bandit(&self.means, &self.counts, &mut self.index, rng))
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        let cap = self.k + 1;
        let a = &mut self.arms[obs.arm];
        a.len += 1;
        match obs.reward {
            None => a.nan += 1,
            Some(r) => {
                a.sum += r;
                a.real += 1;
                if a.top.len() < cap {
                    a.top.push(r);
                    a.top.sort_by(f64::total_cmp);
                } else if r > a.top[0] {
                    a.top[0] = r;
                    a.top.sort_by(f64::total_cmp);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;

    fn summary(k: usize, velocity: bool, rewards: &[Option<f64>]) -> (f64, u64) {
        let mut p = BestK::new(1, k, velocity);
        for r in rewards {
            p.observe(&testing::obs(0, *r));
        }
        let a = p.arms[0].clone();
        if velocity {
            p.score_velocity(&a)
        } else {
            p.score_rewards(&a)
        }
    }

    #[test]
    fn rewards_keep_exactly_the_k_largest() {
        // BTB: BestKReward(k=2) on [0.5, 0.7, 0.6, 0.9] gives [nan, 0.7, nan, 0.9] (BTB's code).
        let s = [0.5, 0.7, 0.6, 0.9].map(Some);
        let (m, n) = summary(2, false, &s);
        assert!((m - 0.8).abs() < 1e-12);
        assert_eq!(n, 4, "NaN entries count as pulls");
    }

    #[test]
    fn rewards_nans_sort_last_and_take_top_slots() {
        // [0.5, NaN, 0.9, 0.7] with k = 2: argsort -> [0.5, 0.7, 0.9, NaN]; kept: 0.9 and NaN.
        let (m, n) = summary(2, false, &[Some(0.5), None, Some(0.9), Some(0.7)]);
        assert!((m - 0.9).abs() < 1e-12, "{m}");
        assert_eq!(n, 4);
    }

    #[test]
    fn velocity_is_the_mean_gap_of_the_k_plus_one_best() {
        // BTB: BestKVelocity(k=2) on [0.5, 0.7, 0.6, 0.9] gives [0.1, 0.2, nan, nan].
        let s = [0.5, 0.7, 0.6, 0.9].map(Some);
        let (m, n) = summary(2, true, &s);
        assert!((m - 0.15).abs() < 1e-12, "{m}");
        assert_eq!(n, 4);
        // On [0.5, 0.7]: [0.2], one entry: the pull count is under-counted by one, as in BTB.
        let (m, n) = summary(2, true, &[Some(0.5), Some(0.7)]);
        assert!((m - 0.2).abs() < 1e-12);
        assert_eq!(n, 1);
    }

    #[test]
    fn falls_back_to_raw_ucb1_while_an_arm_has_fewer_than_two_rewards() {
        // Arm 0: [0.9, 0.1] (mean 0.5, best-2 mean 0.5); arm 1: [0.6] only -> fallback.
        // total 3: arm 0: 0.5 + sqrt(2 ln 3 / 2) = 1.5482; arm 1: 0.6 + sqrt(2 ln 3) = 2.0823.
        let mut p = testing::build("bestk-rewards", &[("k", toml::Value::Integer(1))], 2);
        testing::feed(
            p.as_mut(),
            &[(0, Some(0.9)), (0, Some(0.1)), (1, Some(0.6))],
        );
        let z = [0.0; 2];
        let mut rng = Rng::new(0);
        assert_eq!(
            p.decide(&testing::view(&[2, 1], &z), &mut rng),
            Action::Pull(1)
        );
        // With arm 1 at [0.6, 0.6] the best-1 rule applies: arm 0 scores 0.9, arm 1 0.6;
        // total 4, both n = 2: bonus equal -> arm 0.
        p.observe(&testing::obs(1, Some(0.6)));
        assert_eq!(
            p.decide(&testing::view(&[2, 2], &z), &mut rng),
            Action::Pull(0)
        );
    }
}
