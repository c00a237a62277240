//! UCB1 in two named variants.
//!
//! `ucb1` (textbook; Auer, Cesa-Bianchi & Fischer 2002, as HAMLET's "UCB" baseline,
//! Schmidt, Gastinger, Nicolas & Schülke 2020, "HAMLET: A Learning Curve-Enabled Multi-Armed Bandit for Algorithm Selection", IJCNN §III-B-3 [4], and ER-UCB's C-UCB,
//! `000_d1ed9ef9d25e42df.txt` §4): pull each arm once in index order, then the arm maximising
//!     mean_i + sqrt(2 ln n / n_i),
//! where n_i is the number of pulls of arm i and n, by `log_t`, either the number of pulls so far
//! (`pulls`, default: Auer et al.'s t after t pulls) or the 1-based index of the round being
//! chosen, pulls so far + 1 (`round`: the ER-UCB authors' C-UCB code). `tie_break` = `first`
//! (lowest index, numpy's argmax as in ER-UCB's code) or `random`.
//!
//! `ucb1-btb` copies the semantics of BTB's `UCB1` selector (MLBazaar/BTB, used by ATM and by
//! HAMLET's baselines; the BTB library (MLBazaar/BTB, baytune/selection; Smith et al. 2020, "The Machine Learning Bazaar", SIGMOD)): no forced initial pulls; with
//! total = max(1, Σ n_i), the index is (mean_i, or 0 for an arm without rewards)
//!     + sqrt(2 ln total / max(n_i, 1)),
//! and ties are broken uniformly at random (BTB shuffles the arms). A pull without a reward counts
//! in n_i but not in the mean (BTB's NaN entries and `nanmean`); an arm whose rewards are all
//! missing has mean 0 here, where numpy's `nanmean` would give NaN. `start = "each-arm-once"`
//! tries every arm first (not BTB's behaviour; offered so comparisons start fairly).

use super::{Action, Family, Kind, Means, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::{Rng, argmax_first, argmax_random};

pub fn family_textbook() -> Family {
    Family {
        name: "ucb1",
        summary: "one pull per arm, then argmax mean + sqrt(2 ln n / n_i)",
        source: "Auer, Cesa-Bianchi & Fischer 2002, 'Finite-time analysis of the multiarmed bandit problem', Machine Learning 47, Fig. 1 (UCB1); as HAMLET's 'UCB' baseline (Schmidt et al. 2020, §III-B-3) and ER-UCB's 'C-UCB' (Hu, Yu & Liao 2019, IJCAI, §4)",
        worlds: &WorldKind::LEARNER,
        parallel: &WorldKind::LEARNER,
        params: vec![
            ParamDef {
                name: "tie_break",
                kind: Kind::Choice(&["first", "random"]),
                default: Value::Text("first".into()),
                doc: "which of several arms with the same index is pulled: the lowest index (numpy argmax, ER-UCB's code) or a random one",
            },
            ParamDef {
                name: "log_t",
                kind: Kind::Choice(&["pulls", "round"]),
                default: Value::Text("pulls".into()),
                doc: "n in ln n: pulls so far (Auer et al.) or the 1-based index of the round being chosen, pulls + 1 (the ER-UCB authors' C-UCB code)",
            },
            ParamDef {
                name: "pending",
                kind: Kind::Choice(&["count", "ignore"]),
                default: Value::Text("count".into()),
                doc: "with several workers, how a running pull enters the index: counted in n_i and n before its reward arrives, which lowers a running arm's bonus and spreads the workers (count), or left out until it finishes, the index of finished pulls only (ignore; Joulani, Gyorgy & Szepesvari 2013, 'Online Learning under Delayed Feedback', ICML, run UCB1 on the feedback received). A running arm is never pulled; when every arm runs, the worker waits. One worker: no effect",
            },
        ],
        build: |p: &Params, n| {
            Box::new(Ucb1 {
                random_ties: p.text("tie_break") == "random",
                round_offset: u64::from(p.text("log_t") == "round"),
                count_pending: p.text("pending") == "count",
                means: Means::new(n),
                mean: vec![0.0; n],
                inv_sqrt_pulls: vec![0.0; n],
                total: 0,
                index: vec![0.0; n],
            })
        },
    }
}

pub fn family_btb() -> Family {
    Family {
        name: "ucb1-btb",
        summary: "BTB's UCB1 selector: no forced pulls, argmax mean + sqrt(2 ln max(1,n) / max(n_i,1)), random ties",
        source: "Auer, Cesa-Bianchi & Fischer 2002 (UCB1) with the semantics of the BTB library's UCB1 selector (MLBazaar/BTB, baytune/selection/ucb1.py; Smith et al. 2020, 'The Machine Learning Bazaar', SIGMOD), as in ATM and HAMLET's baselines",
        worlds: &WorldKind::LEARNER,
        parallel: &[],
        params: vec![super::start_param("none")],
        build: |p: &Params, n| {
            super::with_start(
                p,
                Box::new(Ucb1Btb {
                    means: Means::new(n),
                    index: vec![0.0; n],
                }),
            )
        },
    }
}

pub struct Ucb1 {
    random_ties: bool,
    /// 0: ln(pulls so far); 1: ln(pulls so far + 1), the round's 1-based index.
    round_offset: u64,
    /// With several workers: running pulls count in n_i and n.
    count_pending: bool,
    means: Means,
    // Cached per arm so that a decision costs one ln, one sqrt and K multiply-adds:
    // sqrt(2 ln n / n_i) = sqrt(2 ln n) * (1 / sqrt(n_i)).
    mean: Vec<f64>,
    inv_sqrt_pulls: Vec<f64>,
    total: u64,
    index: Vec<f64>,
}

impl Ucb1 {
    /// A decision with pulls running on other workers: never a running arm; an arm never
    /// started first; else the index with running pulls counted or left out.
    fn decide_pending(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        let n = self.index.len();
        if let Some(a) = (0..n).find(|&a| view.pulls[a] == 0 && !view.is_busy(a)) {
            return Action::Pull(a);
        }
        let running = |a: usize| u64::from(self.count_pending && view.is_busy(a));
        let total = self.total
            + if self.count_pending {
                view.pending.len() as u64
            } else {
                0
            };
        let c = (2.0 * ((total + self.round_offset) as f64).ln()).sqrt();
        for a in 0..n {
            self.index[a] = if view.is_busy(a) {
                f64::NEG_INFINITY
            } else {
                let pulls = (self.means.pulls[a] + running(a)).max(1) as f64;
                self.mean[a] + c / pulls.sqrt()
            };
        }
        if self.index.iter().all(|&x| x == f64::NEG_INFINITY) {
            return Action::Wait;
        }
        Action::Pull(if self.random_ties {
            argmax_random(&self.index, rng)
        } else {
            argmax_first(&self.index)
        })
    }
}

impl Rule for Ucb1 {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        if !view.pending.is_empty() {
            return self.decide_pending(view, rng);
        }
        if (self.total as usize) < self.index.len()
            && let Some(a) = self.means.first_below(1)
        {
            return Action::Pull(a);
        }
        let c = (2.0 * ((self.total + self.round_offset) as f64).ln()).sqrt();
        for ((x, m), w) in self
            .index
            .iter_mut()
            .zip(&self.mean)
            .zip(&self.inv_sqrt_pulls)
        {
            *x = m + c * w;
        }
        Action::Pull(if self.random_ties {
            argmax_random(&self.index, rng)
        } else {
            argmax_first(&self.index)
        })
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        self.means.observe(obs);
        let a = obs.arm;
        self.total += 1;
        self.mean[a] = self.means.mean(a);
        self.inv_sqrt_pulls[a] = 1.0 / (self.means.pulls[a] as f64).sqrt();
    }
}

/// BTB's `UCB1.bandit`: index from (mean, count) pairs, random tie-break.
pub(crate) fn btb_bandit(means: &[f64], counts: &[u64], index: &mut [f64], rng: &mut Rng) -> usize {
    let total = counts.iter().sum::<u64>().max(1) as f64;
    let ln_total = total.ln();
    for i in 0..index.len() {
        index[i] = means[i] + (2.0 * ln_total / counts[i].max(1) as f64).sqrt();
    }
    argmax_random(index, rng)
}

pub struct Ucb1Btb {
    means: Means,
    index: Vec<f64>,
}

impl Rule for Ucb1Btb {
    fn decide(&mut self, _view: &View<'_>, rng: &mut Rng) -> Action {
        let m: Vec<f64> = (0..self.index.len()).map(|i| self.means.mean(i)).collect();
        Action::Pull(btb_bandit(&m, &self.means.pulls, &mut self.index, rng))
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
    fn with_running_pulls_the_index_skips_running_arms_and_counts_them_as_asked() {
        use crate::protocol::Pending;
        let z = [0.0; 3];
        let run = |pending: &str| {
            let mut p = testing::build("ucb1", &[("pending", pending.into())], 3);
            // Finished: arm 0 twice (0.5), arm 1 once (0.6), arm 2 once (0.58); arm 1 runs a
            // second pull on worker 1 and worker 0 decides.
            for (a, r) in [(0, 0.5), (1, 0.6), (2, 0.58), (0, 0.5)] {
                p.observe(&testing::obs(a, Some(r)));
            }
            let pending = [Pending {
                arm: 1,
                worker: 1,
                since: 0.0,
            }];
            let busy = [false, true, false];
            let mut v = testing::view(&[2, 2, 1], &z);
            (v.workers, v.worker, v.pending, v.busy) = (2, 0, &pending, &busy);
            let a = p.decide(&v, &mut Rng::new(0));
            // Every arm running: wait.
            let busy_all = [true; 3];
            v.busy = &busy_all;
            (a, p.decide(&v, &mut Rng::new(0)))
        };
        // Arm 1 is running, so never chosen; arm 2 (one pull, 0.58) beats arm 0 (two, 0.5).
        assert_eq!(run("count"), (Action::Pull(2), Action::Wait));
        assert_eq!(run("ignore"), (Action::Pull(2), Action::Wait));
    }

    #[test]
    fn textbook_pulls_each_arm_once_then_uses_the_index() {
        let mut p = testing::build("ucb1", &[], 3);
        let z = [0.0; 3];
        let mut rng = Rng::new(0);
        for i in 0..3 {
            assert_eq!(
                p.decide(&testing::view(&[0, 0, 0], &z), &mut rng),
                Action::Pull(i)
            );
            p.observe(&testing::obs(i, Some([0.5, 0.6, 0.4][i])));
        }
        // n = 3 after the initial pulls; add arm 1 twice more (0.6, 0.6): n = 5, n_1 = 3.
        p.observe(&testing::obs(1, Some(0.6)));
        p.observe(&testing::obs(1, Some(0.6)));
        // Index: arm 0: 0.5 + sqrt(2 ln 5 / 1) = 0.5 + 1.7941 = 2.2941
        //        arm 1: 0.6 + sqrt(2 ln 5 / 3) = 0.6 + 1.0358 = 1.6358
        //        arm 2: 0.4 + 1.7941 = 2.1941  -> arm 0.
        assert_eq!(
            p.decide(&testing::view(&[1, 3, 1], &z), &mut rng),
            Action::Pull(0)
        );
    }

    #[test]
    fn textbook_ties_go_to_the_lowest_index() {
        let mut p = testing::build("ucb1", &[], 2);
        testing::feed(p.as_mut(), &[(0, Some(0.5)), (1, Some(0.5))]);
        let z = [0.0; 2];
        let mut rng = Rng::new(0);
        for _ in 0..20 {
            assert_eq!(
                p.decide(&testing::view(&[1, 1], &z), &mut rng),
                Action::Pull(0)
            );
        }
    }

    #[test]
    fn btb_forces_no_initial_pulls() {
        // BTB: UCB1.select({'a': [0.9, 0.9], 'b': []}) returns 'a' (BTB's code):
        // total 2, a: 0.9 + sqrt(2 ln 2 / 2) = 1.7326; b: 0 + sqrt(2 ln 2 / 1) = 1.1774.
        let mut p = testing::build("ucb1-btb", &[], 2);
        testing::feed(p.as_mut(), &[(0, Some(0.9)), (0, Some(0.9))]);
        let z = [0.0; 2];
        let mut rng = Rng::new(0);
        for _ in 0..20 {
            assert_eq!(
                p.decide(&testing::view(&[2, 0], &z), &mut rng),
                Action::Pull(0)
            );
        }
    }

    #[test]
    fn btb_with_no_pulls_has_no_bonus_and_random_ties() {
        // total = max(1, 0) = 1, ln 1 = 0: every index is 0, the tie is broken at random.
        let mut p = testing::build("ucb1-btb", &[], 3);
        let z = [0.0; 3];
        let mut rng = Rng::new(5);
        let mut seen = [false; 3];
        for _ in 0..100 {
            let Action::Pull(a) = p.decide(&testing::view(&[0, 0, 0], &z), &mut rng) else {
                panic!("a learner-level policy only pulls")
            };
            seen[a] = true;
        }
        assert_eq!(seen, [true; 3]);
    }

    #[test]
    fn missing_rewards_count_as_pulls_but_not_in_the_mean() {
        // Arm 0: rewards [None, 0.8] -> mean 0.8, n = 2; arm 1: [0.7] -> mean 0.7, n = 1.
        // total 3: arm 0: 0.8 + sqrt(2 ln 3 / 2) = 1.8482; arm 1: 0.7 + sqrt(2 ln 3) = 2.1823.
        let mut p = testing::build("ucb1-btb", &[], 2);
        testing::feed(p.as_mut(), &[(0, None), (0, Some(0.8)), (1, Some(0.7))]);
        let z = [0.0; 2];
        let mut rng = Rng::new(0);
        assert_eq!(
            p.decide(&testing::view(&[2, 1], &z), &mut rng),
            Action::Pull(1)
        );
    }

    /// C-UCB on a fixed reward stream (arm 0 always 0.95, arm 1 always 0.05), ties to the first
    /// arm. After the pulls 0, 1, 0, 0, 0 (n_0 = 4, n_1 = 1):
    /// - log_t = pulls: ln 5, c = sqrt(2 ln 5) = 1.794123; index_0 = 0.95 + c/2 = 1.847062 >
    ///   index_1 = 0.05 + c = 1.844123, so arm 0;
    /// - log_t = round (the ER-UCB authors' code, round 6): c = sqrt(2 ln 6) = 1.893019;
    ///   index_0 = 0.95 + c/2 = 1.896510 < index_1 = 0.05 + c = 1.943019, so arm 1.
    ///
    /// The whole sequences were computed independently (a 10-line Python loop).
    #[test]
    fn c_ucb_log_conventions_give_the_hand_computed_sequences() {
        let rewards = [0.95, 0.05];
        let run = |log_t: &str| -> Vec<usize> {
            let mut p = testing::build("ucb1", &[("log_t", toml::Value::String(log_t.into()))], 2);
            let mut pulls = vec![0u64; 2];
            let z = [0.0; 2];
            let mut rng = Rng::new(1);
            let mut seq = Vec::new();
            for _ in 0..12 {
                let Action::Pull(a) = p.decide(&testing::view(&pulls, &z), &mut rng) else {
                    panic!("a learner-level policy only pulls")
                };
                p.observe(&testing::obs(a, Some(rewards[a])));
                pulls[a] += 1;
                seq.push(a);
            }
            seq
        };
        assert_eq!(run("pulls"), vec![0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(run("round"), vec![0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn each_arm_once_start_tries_every_arm_before_btb_rules() {
        let mut p = testing::build(
            "ucb1-btb",
            &[("start", toml::Value::String("each-arm-once".into()))],
            3,
        );
        let z = [0.0; 3];
        let mut rng = Rng::new(7);
        let mut pulls = vec![0u64; 3];
        for expect in 0..3 {
            let Action::Pull(a) = p.decide(&testing::view(&pulls, &z), &mut rng) else {
                panic!("a learner-level policy only pulls")
            };
            assert_eq!(a, expect);
            p.observe(&testing::obs(a, Some(0.5)));
            pulls[a] += 1;
        }
    }
}
