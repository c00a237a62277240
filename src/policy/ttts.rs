//! Top-two Thompson sampling for best-arm identification in the pool world: TTTS, T3C and
//! D-TTTS.
//!
//! - `ttts` (Russo 2016, "Simple Bayesian Algorithms for Best Arm Identification", COLT; as in
//!   Shang, Heide, Ménard, Kaufmann & Valko 2020, "Fixed-Confidence Guarantees for Bayesian
//!   Best-Arm Identification", AISTATS): K configurations are drawn first; then each round draws
//!   θ_a ~ Beta(1 + S_a, 1 + F_a) for every arm, takes the leader I = argmax θ, and with
//!   probability 1 − β re-draws every θ until the argmax J differs from I (at most
//!   `max_resample` times) and plays J instead.
//! - `t3c` (Shang et al. 2020, "top-two transportation cost"): the leader is one Thompson draw's
//!   argmax; the challenger is argmin_{j ≠ I} W(I, j) with
//!   W(I, j) = N_I d(μ_I, μ̄_{I,j}) + N_j d(μ_j, μ̄_{I,j}) when μ_j < μ_I (else 0), μ̄ the pooled
//!   mean and d the Bernoulli KL divergence — the intended form; the authors' Julia code evaluates
//!   the leader's term at μ_I, which makes it vanish.
//! - `d-ttts` (Shang, Kaufmann & Valko 2019, "A simple dynamic bandit algorithm for
//!   hyper-parameter optimization", AutoML workshop at ICML; the slides "Bandits and
//!   Hyper-parameter Optimization"): TTTS on the arms sampled so far, L_{t−1}, plus a pseudo-arm
//!   that stands for every configuration queried but never sampled — one is queried each round
//!   with a Beta(1, 1) prior, so there are q = t − |L_{t−1}| of them and the best of them is
//!   distributed as Beta(q, 1). Choosing the pseudo-arm draws a fresh configuration.
//!   `queried = "pseudo-arm"` (default) treats them as that one pseudo-arm, so the top-two
//!   challenger of the pseudo-arm is always a sampled arm; `queried = "each-arm"` keeps the q
//!   queried arms apart, as the authors' Python prototype adds one new arm per round, so the
//!   challenger of one queried arm may be another (also a fresh draw).
//!
//! Arms whose curves are trained to their end (or failed) take no part in the draws: no unit is
//! left to learn from. When none is left, a fresh configuration is drawn (also for `ttts` and
//! `t3c`, whose K then grows rather than waste budget). With several workers, arms running on
//! another worker take no part either (their θ is still drawn, so one worker draws as before);
//! when every arm is running and no configuration is left to draw, the policy waits for one to
//! return.
//!
//! Rewards are binarised (Agrawal & Goyal 2012): a unit with score r ∈ [0, 1] counts as a success
//! with probability r (scores outside [0, 1] are clamped). A failed unit counts as a failure. The
//! Bernoulli trial is drawn with the cell's generator at the next decision, so results are
//! deterministic.

use super::{Action, Family, Kind, ParamDef, Params, Rule, Value};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];

fn beta_param() -> ParamDef {
    ParamDef {
        name: "beta",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.5),
        doc: "probability of playing the leader rather than the challenger (the papers' 0.5)",
    }
}

fn resample_param() -> ParamDef {
    ParamDef {
        name: "max_resample",
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Value::Int(10_000),
        doc: "most re-draws when looking for a challenger (the authors' Julia code: 10000); if none differs, the leader is played",
    }
}

fn k_param() -> ParamDef {
    ParamDef {
        name: "k",
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Value::Int(100),
        doc: "configurations drawn at the start (a fixed set of arms)",
    }
}

pub fn family_ttts() -> Family {
    Family {
        name: "ttts",
        summary: "Top-two Thompson sampling on K drawn configurations, Beta-Bernoulli with binarised rewards",
        source: "Russo 2016, 'Simple Bayesian Algorithms for Best Arm Identification', COLT (TTTS); Shang et al. 2020, AISTATS",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![k_param(), beta_param(), resample_param()],
        build: |p: &Params, _| {
            Box::new(TopTwo::new(
                Mode::Fixed(p.int("k") as usize),
                Challenger::Resample(p.int("max_resample") as usize),
                p.float("beta"),
            ))
        },
    }
}

pub fn family_t3c() -> Family {
    Family {
        name: "t3c",
        summary: "Top-two transportation cost: Thompson leader, challenger minimising the Bernoulli GLR cost",
        source: "Shang, de Heide, Ménard, Kaufmann & Valko 2020, 'Fixed-Confidence Guarantees for Bayesian Best-Arm Identification', AISTATS (T3C)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![k_param(), beta_param()],
        build: |p: &Params, _| {
            Box::new(TopTwo::new(
                Mode::Fixed(p.int("k") as usize),
                Challenger::Transport,
                p.float("beta"),
            ))
        },
    }
}

pub fn family_dttts() -> Family {
    Family {
        name: "d-ttts",
        summary: "Dynamic TTTS: TTTS on the sampled arms plus a pseudo-arm Beta(t - |L|, 1) that draws a fresh configuration",
        source: "Shang, Kaufmann & Valko 2019, 'A simple dynamic bandit algorithm for hyper-parameter optimization', AutoML@ICML; pseudo-arm Beta(t - |L_{t-1}|, 1) as in the slides 'Bandits and Hyper-parameter Optimization'",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            beta_param(),
            resample_param(),
            ParamDef {
                name: "queried",
                kind: Kind::Choice(&["pseudo-arm", "each-arm"]),
                default: Value::Text("pseudo-arm".into()),
                doc: "the configurations queried but not sampled: one pseudo-arm (the slides) or q separate Beta(1,1) arms, one added per round (the authors' Python prototype)",
            },
        ],
        build: |p: &Params, _| {
            Box::new(TopTwo::new(
                Mode::Dynamic {
                    each_arm: p.text("queried") == "each-arm",
                },
                Challenger::Resample(p.int("max_resample") as usize),
                p.float("beta"),
            ))
        },
    }
}

pub fn family_uniform() -> Family {
    Family {
        name: "uniform",
        summary: "Uniform allocation on K drawn configurations: each unit goes to a live arm chosen uniformly at random",
        source: "Shang, de Heide, Ménard, Kaufmann & Valko 2020, 'Fixed-Confidence Guarantees for Bayesian Best-Arm Identification', AISTATS (the uniform-sampling baseline of its experiments and timing table)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![k_param()],
        build: |p: &Params, _| {
            Box::new(Uniform {
                k: p.int("k") as usize,
            })
        },
    }
}

/// Uniform sampling over a fixed set of K drawn configurations.
pub struct Uniform {
    k: usize,
}

impl Rule for Uniform {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        let n = view.n_arms;
        let Some(pool) = view.pool else {
            return Action::Draw;
        };
        if n < self.k && pool.undrawn > 0 {
            return Action::Draw;
        }
        // With several workers an arm that is running takes no part either.
        let free = |a: usize| !pool.done[a] && !view.is_busy(a);
        let live = (0..n).filter(|&a| free(a)).count();
        if live == 0 {
            return no_arm_left(view, pool.undrawn);
        }
        let mut i = rng.below(live);
        for a in (0..n).filter(|&a| free(a)) {
            if i == 0 {
                return Action::Pull(a);
            }
            i -= 1;
        }
        Action::Draw
    }

    fn observe(&mut self, _obs: &Observation<'_>) {}
}

/// No drawn arm can take the next unit: a fresh configuration, or, when none is left and other
/// workers are training arms, wait for one of them to return.
fn no_arm_left(view: &View<'_>, undrawn: usize) -> Action {
    if undrawn == 0 && !view.pending.is_empty() {
        Action::Wait
    } else {
        Action::Draw
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Fixed(usize),
    Dynamic { each_arm: bool },
}

#[derive(Clone, Copy, Debug)]
enum Challenger {
    Resample(usize),
    Transport,
}

/// A candidate of a Thompson draw: a sampled arm, or the i-th of the queried-but-unsampled ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cand {
    Arm(usize),
    Queried(usize),
}

pub struct TopTwo {
    mode: Mode,
    challenger: Challenger,
    beta: f64,
    /// Per arm: successes and failures of the binarised rewards.
    succ: Vec<f64>,
    fail: Vec<f64>,
    /// Observed rewards not yet binarised (arm, reward or None for a failed unit).
    pending: Vec<(usize, Option<f64>)>,
    rounds: u64,
    theta: Vec<f64>,
}

/// Bernoulli KL divergence d(p, q), with both clamped to [1e-12, 1 − 1e-12].
pub fn bernoulli_kl(p: f64, q: f64) -> f64 {
    let e = 1e-12;
    let (p, q) = (p.clamp(e, 1.0 - e), q.clamp(e, 1.0 - e));
    p * (p / q).ln() + (1.0 - p) * ((1.0 - p) / (1.0 - q)).ln()
}

/// T3C's transportation cost of the leader (n_i pulls, mean m_i) against arm j.
pub fn transport_cost(n_i: f64, m_i: f64, n_j: f64, m_j: f64) -> f64 {
    if m_j >= m_i {
        return 0.0;
    }
    let pooled = (n_i * m_i + n_j * m_j) / (n_i + n_j);
    n_i * bernoulli_kl(m_i, pooled) + n_j * bernoulli_kl(m_j, pooled)
}

impl TopTwo {
    fn new(mode: Mode, challenger: Challenger, beta: f64) -> Self {
        TopTwo {
            mode,
            challenger,
            beta,
            succ: Vec::new(),
            fail: Vec::new(),
            pending: Vec::new(),
            rounds: 0,
            theta: Vec::new(),
        }
    }

    /// Binarise the pending rewards, and give every arm of the view its counts: with several
    /// workers, arms drawn on other workers have not returned a unit yet.
    fn binarise(&mut self, n_arms: usize, rng: &mut Rng) {
        if self.succ.len() < n_arms {
            self.succ.resize(n_arms, 0.0);
            self.fail.resize(n_arms, 0.0);
        }
        for (arm, r) in std::mem::take(&mut self.pending) {
            let success = r.is_some_and(|r| rng.chance(r.clamp(0.0, 1.0)));
            if success {
                self.succ[arm] += 1.0;
            } else {
                self.fail[arm] += 1.0;
            }
        }
    }

    /// One Thompson draw over the sampled arms that can still train and `queried` unsampled
    /// ones: the argmax (a fresh draw when nothing else is left). Every sampled arm gets its θ,
    /// running or not, so that one worker and several draw alike; `off` arms (trained to their
    /// end, or running on another worker) are not candidates.
    fn draw(&mut self, off: &[bool], queried: usize, each_arm: bool, rng: &mut Rng) -> Cand {
        self.theta.clear();
        for a in 0..off.len() {
            self.theta
                .push(rng.beta(1.0 + self.succ[a], 1.0 + self.fail[a]));
        }
        let mut best: Option<(Cand, f64)> = None;
        for (a, &t) in self.theta.iter().enumerate() {
            if !off[a] && best.is_none_or(|b| t > b.1) {
                best = Some((Cand::Arm(a), t));
            }
        }
        if queried > 0 {
            // The best of q Beta(1, 1) draws is Beta(q, 1) = U^(1/q); which one it is, is uniform.
            let v = rng.f64().powf(1.0 / queried as f64);
            let which = if each_arm { rng.below(queried) } else { 0 };
            if best.is_none_or(|b| v > b.1) {
                best = Some((Cand::Queried(which), v));
            }
        }
        best.map_or(Cand::Queried(0), |b| b.0)
    }

    fn mean(&self, a: usize) -> f64 {
        let n = self.succ[a] + self.fail[a];
        if n > 0.0 { self.succ[a] / n } else { 0.5 }
    }
}

impl Rule for TopTwo {
    fn decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Action {
        let n = view.n_arms;
        self.binarise(n, rng);
        self.rounds += 1;
        let undrawn = view.pool.map_or(0, |p| p.undrawn);
        let (queried, each_arm) = match self.mode {
            Mode::Fixed(k) => {
                if n < k && undrawn > 0 {
                    return Action::Draw;
                }
                (0, false)
            }
            // q = t − |L_{t−1}|: one configuration queried per round, minus those sampled.
            Mode::Dynamic { each_arm } => {
                let q = (self.rounds as usize).saturating_sub(n);
                (
                    if undrawn > 0 {
                        q.max(usize::from(n == 0))
                    } else {
                        0
                    },
                    each_arm,
                )
            }
        };
        let no_done = vec![false; n];
        let done = view.pool.map_or(&no_done[..], |p| p.done);
        // Arms that cannot take the next unit: trained to their end, or running on a worker.
        let off: Vec<bool> = (0..n).map(|a| done[a] || view.is_busy(a)).collect();
        if n == 0 || off.iter().all(|&d| d) && queried == 0 {
            // Nothing to sample (every curve trained to its end, or running).
            return no_arm_left(view, undrawn);
        }
        let done = &off[..];
        let leader = self.draw(done, queried, each_arm, rng);
        let chosen = if rng.chance(self.beta) {
            leader
        } else {
            match self.challenger {
                Challenger::Resample(max) => {
                    let mut pick = leader;
                    // With several workers, when running arms leave fewer than two candidates no
                    // re-draw can differ: the leader is played at once. (With one worker the
                    // re-draws run as the authors' code runs them, so results stay as they were.)
                    let candidates = done.iter().filter(|&&d| !d).count()
                        + match (queried, each_arm) {
                            (0, _) => 0,
                            (q, true) => q.min(2),
                            (_, false) => 1,
                        };
                    let max = if view.workers > 1 && candidates < 2 {
                        0
                    } else {
                        max
                    };
                    for _ in 0..max {
                        let j = self.draw(done, queried, each_arm, rng);
                        if j != leader {
                            pick = j;
                            break;
                        }
                    }
                    pick
                }
                Challenger::Transport => match leader {
                    Cand::Arm(i) => {
                        let ni = self.succ[i] + self.fail[i];
                        let mi = self.mean(i);
                        (0..n)
                            .filter(|&j| j != i && !done[j])
                            .map(|j| {
                                let w = transport_cost(
                                    ni,
                                    mi,
                                    self.succ[j] + self.fail[j],
                                    self.mean(j),
                                );
                                (j, w)
                            })
                            .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)))
                            .map_or(leader, |(j, _)| Cand::Arm(j))
                    }
                    q => q,
                },
            }
        };
        match chosen {
            Cand::Arm(a) => Action::Pull(a),
            Cand::Queried(_) => Action::Draw,
        }
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        if obs.exhausted && obs.revealed.is_empty() && obs.reward.is_none() {
            // A wasted pull of a finished arm: nothing was trained, nothing to learn.
            return;
        }
        self.pending.push((obs.arm, obs.reward));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing;
    use crate::replay::pool::{PoolWorld, PoolWorldConfig, tests::hand_pool};
    use crate::replay::{World, drive};

    #[test]
    fn t3c_transportation_cost_by_hand() {
        // N_I = 4 with mean 0.75, N_j = 4 with mean 0.25: pooled 0.5;
        // d(0.75, 0.5) = 0.75 ln 1.5 + 0.25 ln 0.5 = 0.130812 = d(0.25, 0.5); W = 8 × 0.130812.
        let w = transport_cost(4.0, 0.75, 4.0, 0.25);
        assert!((w - 8.0 * 0.130_812_035).abs() < 1e-6, "{w}");
        assert_eq!(transport_cost(4.0, 0.25, 4.0, 0.75), 0.0);
    }

    /// D-TTTS on a pool where every unit scores `score`: returns (draws, decisions).
    fn dttts_draws(score: f32, queried: &str) -> (usize, u64) {
        let pool = hand_pool(400, 27, |_| vec![score; 27]);
        let mut world = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            300.0,
            1.0,
            5,
        );
        let mut p = testing::build(
            "d-ttts",
            &[("queried", toml::Value::String(queried.into()))],
            0,
        );
        drive(
            &mut world,
            p.as_mut(),
            "d-ttts",
            &mut Rng::new(9),
            crate::replay::Overhead::None,
            &mut [],
        )
        .unwrap();
        (world.n_arms(), world.ledger().decisions)
    }

    #[test]
    fn dttts_pseudo_arm_is_beta_t_minus_l_one_by_hand() {
        // One sampled arm with one failed unit: posterior Beta(1, 2), density 2(1 − x). The
        // pseudo-arm after q = t − |L| queried rounds is Beta(q, 1), CDF v^q. With β = 1 (the
        // leader is always played) a draw happens when the pseudo-arm wins:
        //   P = ∫ 2(1 − x)(1 − x^q) dx = 1 − 2 / ((q + 1)(q + 2)): 2/3 at q = 1, 5/6 at q = 2.
        let pulls = [1u64];
        let zero = [0.0];
        let (last, done, config) = ([f64::NEG_INFINITY], [false], [0u32]);
        let view = View {
            n_arms: 1,
            step: 1,
            pulls: &pulls,
            arm_clock: &zero,
            arm_best: &zero,
            budget: 100.0,
            used: 1.0,
            slice: 1.0,
            kind: WorldKind::Pool,
            pool: Some(crate::protocol::PoolView {
                units: 10,
                undrawn: 100,
                last: &last,
                done: &done,
                config: &config,
                open: &[],
                n_open: 0,
                space: &crate::space::EMPTY,
                defaults: &[],
            }),
            workers: 1,
            worker: 0,
            now: 0.0,
            pending: &[],
            busy: &[],
        };
        for (q, want) in [(1u64, 2.0 / 3.0), (2, 5.0 / 6.0)] {
            let n = 20_000;
            let mut draws = 0;
            for seed in 0..n {
                let mut p = TopTwo::new(
                    Mode::Dynamic { each_arm: false },
                    Challenger::Resample(10),
                    1.0,
                );
                p.observe(&crate::policy::testing::obs(0, None));
                // This decision is round q + 1, so t − |L| = q.
                p.rounds = q;
                if p.decide(&view, &mut Rng::new(seed)) == Action::Draw {
                    draws += 1;
                }
            }
            let f = draws as f64 / n as f64;
            assert!((f - want).abs() < 0.012, "q = {q}: {f} vs {want}");
        }
    }

    #[test]
    fn dttts_draws_more_when_sampled_arms_fail() {
        // Round 1: no sampled arm, so the pseudo-arm is the only candidate: a draw.
        let pool = hand_pool(3, 2, |_| vec![0.5, 0.5]);
        let world = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            10.0,
            1.0,
            1,
        );
        let mut p = testing::build("d-ttts", &[], 0);
        assert_eq!(p.decide(&world.view(), &mut Rng::new(1)), Action::Draw);
        // Units that always fail the binarised trial (score 0) make sampled arms' posteriors sink
        // against the pseudo-arm: more draws than when every unit succeeds (score 1).
        let (fail, decisions) = dttts_draws(0.0, "pseudo-arm");
        let (succeed, _) = dttts_draws(1.0, "pseudo-arm");
        assert_eq!(decisions, 300);
        assert!(fail > succeed && succeed > 0, "{fail} vs {succeed}");
        let (each, _) = dttts_draws(1.0, "each-arm");
        assert!(each > 0 && each < 300);
    }

    #[test]
    fn ttts_draws_k_then_only_pulls() {
        let pool = hand_pool(50, 10, |i| vec![0.02 * i as f32; 10]);
        let mut world = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            60.0,
            1.0,
            2,
        );
        let mut p = testing::build("ttts", &[("k", toml::Value::Integer(5))], 0);
        drive(
            &mut world,
            p.as_mut(),
            "ttts",
            &mut Rng::new(4),
            crate::replay::Overhead::None,
            &mut [],
        )
        .unwrap();
        // Five draws, then pulls only, until all five curves are trained to their end (50 units);
        // then fresh draws rather than wasted pulls of finished arms.
        let pulls = &world.ledger().pulls;
        assert_eq!(&pulls[..5], &[10; 5]);
        assert_eq!(pulls, &vec![10; 6]);
        assert_eq!(world.ledger().exhausted_pulls, 0);
    }

    #[test]
    fn uniform_spreads_units_over_its_k_arms_at_random() {
        let pool = hand_pool(50, 100, |i| vec![0.02 * i as f32; 100]);
        let mut world = PoolWorld::new(
            &pool,
            &pool.tasks[0],
            PoolWorldConfig::default(),
            400.0,
            1.0,
            2,
        );
        let mut p = testing::build("uniform", &[("k", toml::Value::Integer(4))], 0);
        let mut steps = Vec::new();
        drive(
            &mut world,
            p.as_mut(),
            "uniform",
            &mut Rng::new(4),
            crate::replay::Overhead::None,
            &mut [&mut steps],
        )
        .unwrap();
        // Four draws (each trains one unit), then 396 pulls over the same four arms: about 99
        // units each (binomial s.d. under 9), never a fifth arm.
        let pulls = &world.ledger().pulls;
        assert_eq!(pulls.len(), 4);
        assert_eq!(pulls.iter().sum::<u64>(), 400);
        assert!(pulls.iter().all(|&n| (70..=130).contains(&n)), "{pulls:?}");
        assert_eq!(
            steps
                .iter()
                .filter(|s| s.action == crate::replay::ActionKind::Draw)
                .count(),
            4
        );
    }
}
