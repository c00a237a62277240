//! Synthetic world: arms drawn on the fly from stated distributions (ER-UCB's 7-arm Gaussian
//! problem, Hu, Yu & Liao 2019, "Cascaded Algorithm-Selection and Hyper-Parameter Optimization with Extreme-Region Upper Confidence Bound Bandit", IJCAI §4.1). Budget in pulls; each pull draws one
//! feedback from the arm's distribution with the cell's world seed. Results of this world are
//! labelled synthetic (trace source `synthetic`): nothing here is recorded data.

use super::{Action, Clock, Ledger, Observation, View, World, WorldKind, learner_arm};
use crate::rng::Rng;
use crate::trace::Status;

/// A feedback distribution.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArmDist {
    Gaussian { mean: f64, sd: f64 },
    Bernoulli { p: f64 },
}

impl ArmDist {
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            ArmDist::Gaussian { mean, sd } => mean + sd * rng.normal(),
            ArmDist::Bernoulli { p } => f64::from(u8::from(rng.chance(p))),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            ArmDist::Gaussian { mean, sd } => format!("gaussian(mean={mean}, sd={sd})"),
            ArmDist::Bernoulli { p } => format!("bernoulli(p={p})"),
        }
    }
}

/// How long one pull takes on a simulated worker (`[world] work`), with mean `work_s` seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "dist")]
pub enum WorkTime {
    /// Every pull takes exactly `work_s`.
    #[default]
    Fixed,
    /// Exponential with mean `work_s` (memoryless stragglers).
    Exponential,
    /// Log-normal with mean `work_s` and `sigma` the standard deviation of the log time
    /// (heavy-tailed stragglers): ln t ~ N(ln work_s − σ²/2, σ²).
    Lognormal { sigma: f64 },
}

impl WorkTime {
    pub fn is_fixed(&self) -> bool {
        *self == WorkTime::Fixed
    }

    pub fn describe(&self, mean: f64) -> String {
        match self {
            WorkTime::Fixed => format!("{mean} s per pull"),
            WorkTime::Exponential => format!("pulls take exponential(mean {mean} s)"),
            WorkTime::Lognormal { sigma } => {
                format!("pulls take lognormal(mean {mean} s, sigma {sigma})")
            }
        }
    }

    fn draw(&self, mean: f64, rng: &mut Rng) -> f64 {
        match *self {
            WorkTime::Fixed => mean,
            // 1 − U is in (0, 1]: the log is finite.
            WorkTime::Exponential => -mean * (1.0 - rng.f64()).ln(),
            WorkTime::Lognormal { sigma } => {
                mean * (sigma * rng.normal() - 0.5 * sigma * sigma).exp()
            }
        }
    }
}

pub struct Synthetic {
    arms: Vec<ArmDist>,
    rng: Rng,
    ledger: Ledger,
    /// Mean simulated seconds one pull takes on a worker (`[world] work_s`; draws take no
    /// recorded time).
    work_s: f64,
    work: WorkTime,
    /// The work times' own stream, so that the rewards drawn do not depend on `work`.
    work_rng: Rng,
    /// The last pull's work time.
    last_work: f64,
}

impl Synthetic {
    /// One arm per distribution; `seed` drives the draws.
    pub fn new(arms: Vec<ArmDist>, budget_pulls: u64, seed: u64) -> Self {
        Synthetic {
            ledger: Ledger::new(arms.len(), Clock::counting(budget_pulls as f64)),
            arms,
            rng: Rng::new(seed),
            work_s: 1.0,
            work: WorkTime::Fixed,
            work_rng: Rng::new(crate::rng::derive_seed(seed, "work time")),
            last_work: 1.0,
        }
    }

    /// Each pull takes `seconds` on a worker (default 1).
    pub fn with_work_seconds(mut self, seconds: f64) -> Self {
        self.work_s = seconds;
        self
    }

    /// Pulls take times drawn from `work` with mean `work_s` (default: exactly `work_s`).
    pub fn with_work_time(mut self, work: WorkTime) -> Self {
        self.work = work;
        self
    }
}

impl World for Synthetic {
    fn kind(&self) -> WorldKind {
        WorldKind::Synthetic
    }

    fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    fn view(&self) -> View<'_> {
        self.ledger.view(self.n_arms(), 1.0, self.kind(), None)
    }

    fn sign(&self) -> f64 {
        1.0
    }

    fn work_time(&self, _arm: usize, _time_before: f64) -> f64 {
        self.last_work
    }

    fn apply(&mut self, action: Action) -> Result<Observation<'_>, String> {
        let arm = learner_arm(self.kind(), self.n_arms(), action)?;
        Ok(self.pull(arm))
    }
}

impl Synthetic {
    /// Pull `arm` (< n_arms).
    pub fn pull(&mut self, arm: usize) -> Observation<'_> {
        let l = &mut self.ledger;
        l.begin_counted_pull(arm);
        let x = self.arms[arm].draw(&mut self.rng);
        self.last_work = self.work.draw(self.work_s, &mut self.work_rng);
        let eval = l.decisions as usize - 1;
        let t = l.clock.used;
        l.reveal(arm, eval, t, Status::Ok, x);
        Observation {
            arm,
            reward: Some(x),
            revealed: &l.revealed,
            arm_clock: l.arm_clock[arm],
            exhausted: false,
            objectives: &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_draws_have_the_stated_moments() {
        let mut w = Synthetic::new(
            vec![ArmDist::Gaussian {
                mean: 0.84,
                sd: 0.07,
            }],
            200_000,
            3,
        );
        let xs: Vec<f64> = (0..200_000).map(|_| w.pull(0).reward.unwrap()).collect();
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        // Standard errors: 0.07/sqrt(2e5) = 1.6e-4 for the mean, ~1.1e-4 for the sd.
        assert!((mean - 0.84).abs() < 8e-4, "{mean}");
        assert!((sd - 0.07).abs() < 6e-4, "{sd}");
        // P(X > 1.0) = 1 - Phi(0.16/0.07) = 0.011135.
        let tail = xs.iter().filter(|x| **x > 1.0).count() as f64 / n;
        assert!((tail - 0.011135).abs() < 0.0012, "{tail}");
    }

    #[test]
    fn work_times_have_the_named_distribution_and_leave_the_rewards_alone() {
        let arm = vec![ArmDist::Gaussian { mean: 0.0, sd: 1.0 }];
        let n = 200_000;
        let sample = |work| {
            let mut w = Synthetic::new(arm.clone(), n, 9)
                .with_work_seconds(2.0)
                .with_work_time(work);
            (0..n)
                .map(|_| {
                    let r = w.pull(0).reward.unwrap();
                    (r, w.work_time(0, 0.0))
                })
                .collect::<Vec<(f64, f64)>>()
        };
        let fixed = sample(WorkTime::Fixed);
        assert!(fixed.iter().all(|x| x.1 == 2.0));
        let expo = sample(WorkTime::Exponential);
        let logn = sample(WorkTime::Lognormal { sigma: 1.0 });
        // The rewards are the same draws whatever the work times.
        assert!(fixed.iter().zip(&expo).all(|(a, b)| a.0 == b.0));
        assert!(fixed.iter().zip(&logn).all(|(a, b)| a.0 == b.0));
        let mean = |v: &[(f64, f64)]| v.iter().map(|x| x.1).sum::<f64>() / v.len() as f64;
        // Exponential, mean 2: sd 2, standard error 2/sqrt(2e5) = 0.0045; P(t > 2) = e^-1.
        assert!((mean(&expo) - 2.0).abs() < 0.02, "{}", mean(&expo));
        let over = expo.iter().filter(|x| x.1 > 2.0).count() as f64 / n as f64;
        assert!((over - (-1.0f64).exp()).abs() < 0.005, "{over}");
        // Log-normal, mean 2, σ = 1: sd 2 sqrt(e − 1) = 2.62, standard error 0.0059; the median
        // is 2 e^(−1/2) = 1.2131.
        assert!((mean(&logn) - 2.0).abs() < 0.03, "{}", mean(&logn));
        let below = logn.iter().filter(|x| x.1 < 2.0 * (-0.5f64).exp()).count() as f64 / n as f64;
        assert!((below - 0.5).abs() < 0.005, "{below}");
    }

    #[test]
    fn bernoulli_draws_have_the_stated_rate() {
        let mut w = Synthetic::new(vec![ArmDist::Bernoulli { p: 0.3 }], 100_000, 5);
        let xs: Vec<f64> = (0..100_000).map(|_| w.pull(0).reward.unwrap()).collect();
        assert!(xs.iter().all(|x| *x == 0.0 || *x == 1.0));
        let rate = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((rate - 0.3).abs() < 0.006, "{rate}");
    }

    #[test]
    fn the_seed_decides_the_stream_and_the_budget_ends_the_cell() {
        let arms = vec![
            ArmDist::Gaussian { mean: 0.0, sd: 1.0 },
            ArmDist::Gaussian { mean: 1.0, sd: 1.0 },
        ];
        let run = |seed| {
            let mut w = Synthetic::new(arms.clone(), 3, seed);
            let v: Vec<f64> = (0..3).map(|i| w.pull(i % 2).reward.unwrap()).collect();
            assert!(w.done());
            v
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
