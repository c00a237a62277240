//! ER-UCB, extreme-region UCB (Hu, Yu & Liao 2019, "Cascaded Algorithm-Selection and
//! Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit", IJCAI, eq. 17
//! and Algorithm 1): pick the arm whose *extreme region* looks best, not its mean.
//!
//! With Y = X − β and Z = (X − β)², per arm i with T_i pulls, μ̂_Y and μ̂_Z the running means,
//!     index_i = γ · (μ̂_Y + sqrt(μ̂_Z / θ)) + sqrt(2 ln t / T_i) + sqrt((1/θ) · sqrt(2 ln t / T_i))
//! (the practical Hoeffding rule, eq. 17: γ·Ω_i + Ψ'_i of eqs. 14–15 with α = 4).
//! Algorithm 1 pulls every arm once first (lines 1–4), in index order.
//!
//! Choices the paper leaves open, as parameters, defaulting to the authors' released code:
//! `log_t` = `round` (t counts the pull being chosen,
//! i.e. pulls so far + 1) or `pulls` (pulls so far); `tie_break` = `first` (numpy argmax) or
//! `random`. A pull without a reward (a failure that consumed the pull) counts in T_i only.
//! The paper's defaults: θ = 0.01, γ = 20; β is set per task (0.85 on the synthetic problem).

use super::{Action, Family, Kind, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::{Rng, argmax_first, argmax_random};

pub fn family() -> Family {
    Family {
        name: "er-ucb",
        summary: "extreme-region UCB: gamma * (mean(X-beta) + sqrt(mean((X-beta)^2)/theta)) + exploration",
        source: "Hu, Yu & Liao 2019, 'Cascaded Algorithm-Selection and Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit', IJCAI, eq. 17 and Algorithm 1; the authors' released code's semantics where it differs",
        worlds: &WorldKind::LEARNER,
        parallel: &[],
        params: vec![
            ParamDef {
                name: "theta",
                kind: Kind::Float {
                    min: 1e-9,
                    max: 1e9,
                },
                default: Value::Float(0.01),
                doc: "size of the extreme region (small: more extreme); paper 0.01",
            },
            ParamDef {
                name: "gamma",
                kind: Kind::Float { min: 0.0, max: 1e9 },
                default: Value::Float(20.0),
                doc: "weight of the exploitation term; paper 20",
            },
            ParamDef {
                name: "beta",
                kind: Kind::Float {
                    min: -1e9,
                    max: 1e9,
                },
                default: Value::Float(0.0),
                doc: "shift of the feedback, set per task (paper: 0.85 synthetic, 0.4-0.8 in Table 2)",
            },
            ParamDef {
                name: "log_t",
                kind: Kind::Choice(&["round", "pulls"]),
                default: Value::Text("round".into()),
                doc: "t in ln t: the round being chosen (pulls so far + 1, authors' code) or the pulls so far",
            },
            ParamDef {
                name: "tie_break",
                kind: Kind::Choice(&["first", "random"]),
                default: Value::Text("first".into()),
                doc: "equal indices: lowest arm (numpy argmax, authors' code) or a random one",
            },
        ],
        build: |p: &Params, n| {
            Box::new(ErUcb {
                theta: p.float("theta"),
                gamma: p.float("gamma"),
                beta: p.float("beta"),
                t_offset: if p.text("log_t") == "round" { 1 } else { 0 },
                random_ties: p.text("tie_break") == "random",
                pulls: vec![0; n],
                known: vec![0; n],
                sum_y: vec![0.0; n],
                sum_z: vec![0.0; n],
                total: 0,
                index: vec![0.0; n],
            })
        },
    }
}

pub struct ErUcb {
    theta: f64,
    gamma: f64,
    beta: f64,
    t_offset: u64,
    random_ties: bool,
    pulls: Vec<u64>,
    known: Vec<u64>,
    sum_y: Vec<f64>,
    sum_z: Vec<f64>,
    total: u64,
    index: Vec<f64>,
}

impl ErUcb {
    /// The index of arm i at round t (eq. 17).
    pub fn arm_index(&self, i: usize, t: f64) -> f64 {
        let n = self.pulls[i] as f64;
        let (my, mz) = if self.known[i] == 0 {
            (0.0, 0.0)
        } else {
            let k = self.known[i] as f64;
            (self.sum_y[i] / k, self.sum_z[i] / k)
        };
        let explore = (2.0 * t.ln() / n).sqrt();
        self.gamma * (my + (mz / self.theta).sqrt()) + explore + (explore / self.theta).sqrt()
    }
}

impl Rule for ErUcb {
    fn decide(&mut self, _view: &View<'_>, rng: &mut Rng) -> Action {
        if let Some(a) = self.pulls.iter().position(|&p| p == 0) {
            return Action::Pull(a);
        }
        let t = (self.total + self.t_offset) as f64;
        for i in 0..self.index.len() {
            self.index[i] = self.arm_index(i, t);
        }
        Action::Pull(if self.random_ties {
            argmax_random(&self.index, rng)
        } else {
            argmax_first(&self.index)
        })
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        let a = obs.arm;
        self.pulls[a] += 1;
        self.total += 1;
        if let Some(x) = obs.reward {
            let y = x - self.beta;
            self.sum_y[a] += y;
            self.sum_z[a] += y * y;
            self.known[a] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;

    #[test]
    fn index_by_hand() {
        // theta 0.01, gamma 20, beta 0.85. Arm 0 saw 1.0 and 0.8: Y = 0.15, -0.05 -> mean 0.05,
        // Z = 0.0225, 0.0025 -> mean 0.0125. Arm 1 saw 0.9: Y 0.05, Z 0.0025. t = 3 + 1 = 4.
        // Arm 0: 20 * (0.05 + sqrt(1.25)) = 23.36068; e = sqrt(2 ln 4 / 2) = 1.177410;
        //        sqrt(e / 0.01) = 10.85085 -> 35.38894.
        // Arm 1: 20 * (0.05 + sqrt(0.25)) = 11.0; e = sqrt(2 ln 4) = 1.665109;
        //        sqrt(166.5109) = 12.90391 -> 25.56902.
        let fam = family();
        let cfg = crate::policy::expand(
            "er-ucb",
            &[("beta".to_string(), toml::Value::Float(0.85))]
                .into_iter()
                .collect(),
        )
        .unwrap()
        .remove(0);
        assert_eq!(cfg.family.name, fam.name);
        let mut p = ErUcb {
            theta: 0.01,
            gamma: 20.0,
            beta: 0.85,
            t_offset: 1,
            random_ties: false,
            pulls: vec![0; 2],
            known: vec![0; 2],
            sum_y: vec![0.0; 2],
            sum_z: vec![0.0; 2],
            total: 0,
            index: vec![0.0; 2],
        };
        for (a, x) in [(0, 1.0), (1, 0.9), (0, 0.8)] {
            p.observe(&testing::obs(a, Some(x)));
        }
        assert!(
            (p.arm_index(0, 4.0) - 35.388_94).abs() < 1e-4,
            "{}",
            p.arm_index(0, 4.0)
        );
        assert!(
            (p.arm_index(1, 4.0) - 25.569_02).abs() < 1e-4,
            "{}",
            p.arm_index(1, 4.0)
        );
        let z = [0.0; 2];
        let mut rng = Rng::new(0);
        assert_eq!(
            p.decide(&testing::view(&[2, 1], &z), &mut rng),
            Action::Pull(0)
        );
    }

    #[test]
    fn pulls_every_arm_once_first() {
        let mut p = testing::build("er-ucb", &[], 3);
        let z = [0.0; 3];
        let mut rng = Rng::new(0);
        for i in 0..3 {
            assert_eq!(
                p.decide(&testing::view(&[0, 0, 0], &z), &mut rng),
                Action::Pull(i)
            );
            p.observe(&testing::obs(i, Some(0.5)));
        }
    }

    #[test]
    fn the_extreme_region_beats_the_mean() {
        // Arm 0: mean 0.84 with a wide spread; arm 1: mean 0.89, tight. With beta 0.85 the wide
        // arm's second moment dominates and it is preferred; UCB1 would prefer arm 1.
        let mut p = testing::build("er-ucb", &[("beta", toml::Value::Float(0.85))], 2);
        let hist: Vec<(usize, Option<f64>)> = (0..20)
            .flat_map(|i| {
                let wide = if i % 2 == 0 { 0.94 } else { 0.74 };
                let tight = if i % 2 == 0 { 0.90 } else { 0.88 };
                [(0, Some(wide)), (1, Some(tight))]
            })
            .collect();
        let pulls = testing::feed(p.as_mut(), &hist);
        let z = [0.0; 2];
        let mut rng = Rng::new(0);
        assert_eq!(
            p.decide(&testing::view(&pulls, &z), &mut rng),
            Action::Pull(0)
        );
    }
}
