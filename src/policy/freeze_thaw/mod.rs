//! Freeze-thaw policies in the pool world: configurations are paused and resumed one unit at a
//! time, guided by a model of their learning curves (the line of HAMLET's curve extrapolation
//! that DyHPO, DPL and ifBO continue).
//!
//! - `dpl`: Deep Power Laws (Kadra et al. 2023), `dpl.rs`, on the network of `net.rs`.
//! - `dyhpo`: DyHPO (Wistuba et al. 2022), `dyhpo.rs`, on the deep-kernel GP of `dkgp.rs`.
//! - `ftgp`: a freeze-thaw GP with multi-fidelity EI (ifBO's `mf_ei_bo` baseline), `ftgp.rs`, on
//!   the GP of `gp.rs`.
//! - `curve-ensemble`: Domhan et al.'s (2015) predictive termination, `lce.rs`, on the curve
//!   combination of `curve::domhan`.

pub mod dkgp;
mod dpl;
mod dyhpo;
mod ftgp;
pub mod gp;
mod lce;
pub mod net;

pub use dpl::{Probe as DplProbe, family as family_dpl};
pub use dyhpo::{Probe as DyhpoProbe, family as family_dyhpo};
pub use ftgp::{Probe as FtgpProbe, family as family_ftgp};
pub use lce::family as family_curve_ensemble;

use crate::policy::{Action, CellStart, Kind, ParamDef, Params, Value};
use crate::protocol::{Observation, Policy, PoolView, View};
use crate::rng::{Rng, derive_seed};
use anyhow::Result;

/// How a freeze-thaw model's prediction ranks candidates: expected improvement (DPL's and
/// DyHPO's), an upper confidence bound (mean + 0.25 std, both codes' alternative) or the mean.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Acquisition {
    Ei,
    Ucb,
    Mean,
}

impl Acquisition {
    fn from_params(p: &Params) -> Self {
        match p.text("acquisition") {
            "ucb" => Acquisition::Ucb,
            "mean" => Acquisition::Mean,
            _ => Acquisition::Ei,
        }
    }
}

/// Adam's learning rate (default 0.001, both codes').
fn lr_param(doc: &'static str) -> ParamDef {
    ParamDef {
        name: "lr",
        kind: Kind::Float {
            min: 1e-9,
            max: 10.0,
        },
        default: Value::Float(0.001),
        doc,
    }
}

/// What happens to the earlier units of a configuration whose unit failed.
fn failed_param(doc: &'static str) -> ParamDef {
    ParamDef {
        name: "failed",
        kind: Kind::Choice(&["keep-prefix", "forget"]),
        default: Value::Text("keep-prefix".into()),
        doc,
    }
}

/// Observations without a better score before a fit from fresh weights: `restart_after`, or
/// with 0 ⌊1.2 × the curve's units⌋ (DPL's and DyHPO's `no_improvement_threshold`).
fn restart_limit(restart_after: u64, units: u32) -> u64 {
    if restart_after > 0 {
        restart_after
    } else {
        (1.2 * f64::from(units)) as u64
    }
}

/// Per unit u (1-based, index u − 1): the best score seen at u by any curve that reached it; if
/// none did, the best score of any curve shorter than u (DyHPO's `calculate_fidelity_ymax`, for
/// every unit at once; NePS's MFEI takes the best score seen, which is the same set then).
/// Forgotten curves do not count.
fn best_by_unit(curves: &[Vec<f64>], forgotten: &[bool], units: u32) -> Vec<f64> {
    let units = units as usize;
    let mut exact = vec![f64::NEG_INFINITY; units];
    let mut reached = vec![false; units];
    // lower[l] = the best score of the curves of length l.
    let mut lower = vec![f64::NEG_INFINITY; units + 1];
    for (arm, curve) in curves.iter().enumerate() {
        if forgotten[arm] || curve.is_empty() {
            continue;
        }
        for (u, &v) in curve.iter().enumerate().take(units) {
            exact[u] = exact[u].max(v);
            reached[u] = true;
        }
        let l = curve.len().min(units);
        lower[l] = curve.iter().copied().fold(lower[l], f64::max);
    }
    let mut below = f64::NEG_INFINITY;
    (0..units)
        .map(|u| {
            // Curves shorter than u + 1 units: lengths 0..=u.
            below = below.max(lower[u]);
            if reached[u] { exact[u] } else { below }
        })
        .collect()
}

/// A multi-fidelity acquisition's value per candidate: candidate i predicted `mean[i]` ±
/// `std[i]` at unit `next_unit[i]` (1-based), against `best` (per unit, `best_by_unit`). EI with a
/// zero deviation is 0.
fn acquisition_values(
    acquisition: Acquisition,
    mean: &[f64],
    std: &[f64],
    next_unit: &[usize],
    best: &[f64],
) -> Vec<f64> {
    (0..mean.len())
        .map(|i| {
            let (m, s) = (mean[i], std[i]);
            match acquisition {
                Acquisition::Ei => {
                    if s == 0.0 {
                        0.0
                    } else {
                        let best = best[(next_unit[i] - 1).min(best.len().saturating_sub(1))];
                        let z = (m - best) / s;
                        (m - best) * crate::normal::norm_cdf(z) + s * crate::normal::norm_pdf(z)
                    }
                }
                Acquisition::Ucb => m + 0.25 * s,
                Acquisition::Mean => m,
            }
        })
        .collect()
}

/// The candidate with the first highest acquisition value (DyHPO's strict comparison from −∞);
/// NaN never wins; None when every value is NaN.
fn top_candidate(
    acquisition: Acquisition,
    mean: &[f64],
    std: &[f64],
    next_unit: &[usize],
    best: &[f64],
) -> Option<usize> {
    let mut top: Option<(f64, usize)> = None;
    for (i, a) in acquisition_values(acquisition, mean, std, next_unit, best)
        .into_iter()
        .enumerate()
    {
        if !a.is_nan() && top.is_none_or(|(t, _)| a > t) {
            top = Some((a, i));
        }
    }
    top.map(|(_, i)| i)
}

/// Per arm, its scores unit by unit, as DyHPO's and the freeze-thaw GP's training sets read them.
#[derive(Clone, Debug, Default)]
struct Curves {
    curves: Vec<Vec<f64>>,
    /// Arms whose failed unit made `failed = "forget"` drop their earlier units.
    forgotten: Vec<bool>,
}

impl Curves {
    /// Record an observation: each revealed unit that extends its arm's curve by one is pushed
    /// and returned in order; a failed unit ends the curve (the pool world's rule) and, with
    /// `forget_failed`, forgets it.
    fn record(&mut self, obs: &Observation<'_>, forget_failed: bool) -> Vec<f64> {
        let arm = obs.arm;
        if arm >= self.curves.len() {
            self.curves.resize(arm + 1, Vec::new());
            self.forgotten.resize(arm + 1, false);
        }
        let mut pushed = Vec::new();
        for r in obs.revealed {
            if !r.ok {
                if forget_failed {
                    self.forgotten[arm] = true;
                }
                break;
            }
            if r.time as usize != self.curves[arm].len() + 1 {
                continue;
            }
            self.curves[arm].push(r.reward);
            pushed.push(r.reward);
        }
        pushed
    }

    /// Every (arm, unit index) of the curves not forgotten, in order; with `max_points` > 0 and
    /// more points than that, a random subset of `max_points` of them (kept in order) from a
    /// stream of the cell's `seed` and `label`.
    fn points(&self, max_points: usize, seed: u64, label: &str) -> Vec<(usize, usize)> {
        let mut points: Vec<(usize, usize)> = self
            .curves
            .iter()
            .enumerate()
            .filter(|(arm, _)| !self.forgotten[*arm])
            .flat_map(|(arm, curve)| (0..curve.len()).map(move |u| (arm, u)))
            .collect();
        let n = points.len();
        if max_points > 0 && n > max_points {
            let mut rng = Rng::new(derive_seed(seed, label));
            let mut idx: Vec<usize> = (0..n).collect();
            for i in 0..max_points {
                let j = i + rng.below(n - i);
                idx.swap(i, j);
            }
            idx.truncate(max_points);
            idx.sort_unstable();
            points = idx.into_iter().map(|i| points[i]).collect();
        }
        points
    }
}

/// A bench probe's candidates after `history` (configurations and their curves, one arm each,
/// in order): every configuration of the pool (`configs`) not yet complete, with the arm whose
/// curve it continues (None: never trained).
fn probe_rows(
    configs: usize,
    units: u32,
    history: &[(u32, Vec<f32>)],
) -> Vec<(usize, Option<usize>)> {
    let arm_of: std::collections::HashMap<u32, usize> = history
        .iter()
        .enumerate()
        .map(|(a, (c, _))| (*c, a))
        .collect();
    (0..configs)
        .filter_map(|c| match arm_of.get(&(c as u32)) {
            Some(&a) if history[a].1.len() as u32 >= units => None,
            Some(&a) => Some((c, Some(a))),
            None => Some((c, None)),
        })
        .collect()
}

/// Nothing can be trained now: wait for work in flight, or stop when none runs.
fn idle(view: &View<'_>) -> Action {
    if view.pending.is_empty() {
        Action::Stop
    } else {
        Action::Wait
    }
}

/// Before a model can rank anything: draw a configuration at random while the pool has one left,
/// else `idle`.
fn draw_or_idle(pool: &PoolView<'_>, view: &View<'_>) -> Action {
    if pool.undrawn > 0 {
        Action::Draw
    } else {
        idle(view)
    }
}

/// What sets one freeze-thaw policy apart; `Driven` gives it the rest of `Policy`: the pool world
/// only, the curve's units (the cell's, else the pool view's at the first decision) and the cell's
/// seed, the fits (or checks) counted as they come, and the counters as the cell's `policy_stats`.
trait FreezeThaw: Send {
    /// The family's name, for the error outside the pool world.
    const FAMILY: &'static str;
    /// The units of a curve (0 until known) and the cell's seed, which the policy's own random
    /// streams derive from.
    fn cell(&mut self) -> (&mut u32, &mut u64);
    /// Called at the cell's start, once the units and the seed are set.
    fn start(&mut self) {}
    /// A decision on the pool, once `units` is known.
    fn decide(&mut self, pool: &PoolView<'_>, view: &View<'_>, rng: &mut Rng) -> Result<Action>;
    fn observe(&mut self, obs: &Observation<'_>);
    /// Fits (or checks) made since the overhead model last charged them.
    fn untaken(&mut self) -> &mut u64;
    /// The counters reported as `policy_stats`.
    fn stats(&self) -> serde_json::Value;
}

/// A `FreezeThaw` policy as the engine runs it.
struct Driven<T>(T);

impl<T: FreezeThaw> Policy for Driven<T> {
    fn begin(&mut self, cell: &CellStart<'_>) -> Result<()> {
        let (units, seed) = self.0.cell();
        if let Some(p) = &cell.pool {
            *units = p.units;
        }
        *seed = cell.seed;
        self.0.start();
        Ok(())
    }

    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        let Some(pool) = &view.pool else {
            anyhow::bail!("{} runs in the pool world only", T::FAMILY);
        };
        let (units, _) = self.0.cell();
        if *units == 0 {
            *units = pool.units;
        }
        self.0.decide(pool, view, rng)
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        self.0.observe(obs);
    }

    fn take_fits(&mut self) -> u64 {
        std::mem::take(self.0.untaken())
    }

    fn finish(&mut self) -> Result<Option<String>> {
        Ok(Some(self.0.stats().to_string()))
    }
}

/// What a freeze-thaw decision can train: an arm one unit further, or a configuration its first.
#[derive(Clone, Copy, Debug)]
enum Candidate {
    Arm(usize),
    Config(u32),
}

impl Candidate {
    /// The arm a candidate continues; None for a configuration never trained.
    fn arm(self) -> Option<usize> {
        match self {
            Candidate::Arm(arm) => Some(arm),
            Candidate::Config(_) => None,
        }
    }

    fn action(self) -> Action {
        match self {
            Candidate::Arm(arm) => Action::Pull(arm),
            Candidate::Config(c) => Action::Choose(c),
        }
    }
}

/// The candidates in configuration order (DPL and DyHPO enumerate theirs by index), each with its
/// configuration: configurations still open, and arms neither done nor running.
fn candidates(pool: &PoolView<'_>, view: &View<'_>) -> Vec<(usize, Candidate)> {
    let mut arm_of = vec![usize::MAX; pool.space.len()];
    for (arm, &c) in pool.config.iter().enumerate() {
        arm_of[c as usize] = arm;
    }
    arm_of
        .iter()
        .enumerate()
        .filter_map(|(c, &arm)| match arm {
            usize::MAX if pool.open[c] => Some((c, Candidate::Config(c as u32))),
            usize::MAX => None,
            arm if !pool.done[arm] && !view.is_busy(arm) => Some((c, Candidate::Arm(arm))),
            _ => None,
        })
        .collect()
}

/// The models' features of every configuration (row-major, `width` columns): the pool's encoding
/// (`space.rs`: numeric dimensions min-max scaled, log where the pool's dimension is log-scaled),
/// one-hot learner columns first when the pool has several learners, 0 for inactive dimensions.
fn encode(space: &crate::space::Space) -> (Vec<f32>, usize) {
    let learners = space.learners.len();
    let lead = if learners > 1 { learners } else { 0 };
    let dims: usize = space.learners.iter().map(Vec::len).sum();
    let width = lead + dims;
    let mut feats = vec![0.0; space.len() * width];
    let starts: Vec<usize> = space
        .learners
        .iter()
        .scan(lead, |o, l| {
            let at = *o;
            *o += l.len();
            Some(at)
        })
        .collect();
    for c in 0..space.len() {
        let row = &mut feats[c * width..(c + 1) * width];
        let l = space.learner(c);
        if lead > 0 {
            row[l] = 1.0;
        }
        for (k, &v) in space.values(c).iter().enumerate() {
            row[starts[l] + k] = if v.is_nan() { 0.0 } else { v };
        }
    }
    (feats, width)
}

#[cfg(test)]
mod golden {
    //! The network against PyTorch 2.15.0 (`tests/golden/dpl_net.json`, made by
    //! `scripts/reference/dpl_net_golden.py`): predictions, loss, gradient and 1 and 3 Adam steps.
    use super::net::{Adam, Net, Real, Scratch, Shape};
    use serde_json::Value;

    fn floats<T: Real>(v: &Value) -> Vec<T> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|x| T::lit(x.as_f64().expect("a number")))
            .collect()
    }

    /// Largest |a − b| / (1 + |b|) over two vectors.
    fn worst<T: Real>(a: &[T], b: &[T]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                let (x, y) = (x.to_f64().unwrap(), y.to_f64().unwrap());
                (x - y).abs() / (1.0 + y.abs())
            })
            .fold(0.0, f64::max)
    }

    fn check<T: Real>(case: &Value, key: &str, tol: f64) {
        let shape = Shape {
            inputs: case["inputs"].as_u64().unwrap() as usize,
            units: case["units"].as_u64().unwrap() as usize,
            layers: case["layers"].as_u64().unwrap() as usize,
        };
        let n = case["n"].as_u64().unwrap() as usize;
        let g = &case[key];
        let (x, b, y) = (
            floats::<T>(&g["x"]),
            floats::<T>(&g["b"]),
            floats::<T>(&g["y"]),
        );
        let mut net = Net {
            shape,
            params: floats::<T>(&g["params"]),
        };
        assert_eq!(net.params.len(), shape.n_params());
        let mut s = Scratch::default();
        let loss = net.loss_and_grad(&x, &b, &y, n, &mut s);
        let at = format!("{key} case seed {}", case["seed"]);
        let e = worst(&s.pred, &floats::<T>(&g["pred"]));
        assert!(e < tol, "{at}: predictions differ by {e:e}");
        let e = worst(&[loss], &[T::lit(g["loss"].as_f64().unwrap())]);
        assert!(e < tol, "{at}: loss differs by {e:e}");
        let e = worst(&s.grad, &floats::<T>(&g["grad"]));
        assert!(e < tol, "{at}: gradient differs by {e:e}");
        let mut adam = Adam::new(net.params.len(), 1e-3);
        let grad = s.grad.clone();
        adam.step(&mut net.params, &grad);
        let e = worst(&net.params, &floats::<T>(&g["after1"]));
        assert!(
            e < tol,
            "{at}: parameters after one Adam step differ by {e:e}"
        );
        for _ in 0..2 {
            net.loss_and_grad(&x, &b, &y, n, &mut s);
            let grad = s.grad.clone();
            adam.step(&mut net.params, &grad);
        }
        let e = worst(&net.params, &floats::<T>(&g["after3"]));
        assert!(
            e < tol,
            "{at}: parameters after three Adam steps differ by {e:e}"
        );
    }

    fn cases() -> Vec<Value> {
        let v: Value =
            serde_json::from_str(include_str!("../../../tests/golden/dpl_net.json")).unwrap();
        v["cases"].as_array().unwrap().clone()
    }

    #[test]
    fn the_network_equals_pytorch_in_float64() {
        for case in cases() {
            check::<f64>(&case, "f64", 1e-12);
        }
    }

    #[test]
    fn the_network_equals_pytorch_in_float32_to_its_rounding() {
        for case in cases() {
            check::<f32>(&case, "f32", 1e-5);
        }
    }
}

#[cfg(test)]
mod learning {
    use super::net::{Adam, Net, Scratch, Shape};
    use crate::rng::Rng;

    /// Trained by Adam on curves that are power laws of the budget, with a scale and an exponent
    /// that depend on the configuration, the network predicts held-out configurations' values at
    /// every budget to within 0.02 (mean absolute error), a tenth of its error untrained.
    #[test]
    fn the_network_learns_power_law_curves_of_the_configuration() {
        let truth = |x: &[f32], b: f32| 0.3 + (0.2 + 0.5 * x[0]) * b.powf(-(0.3 + 0.5 * x[1]));
        let mut rng = Rng::new(5);
        let sample = |rng: &mut Rng, n: usize| {
            let (mut x, mut b, mut y) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..n {
                let c = [rng.f64() as f32, rng.f64() as f32];
                let u = (1 + rng.below(51)) as f32 / 51.0;
                x.extend_from_slice(&c);
                b.push(u);
                y.push(truth(&c, u));
            }
            (x, b, y)
        };
        let (x, b, y) = sample(&mut rng, 256);
        let (tx, tb, ty) = sample(&mut rng, 200);
        let shape = Shape {
            inputs: 2,
            units: 32,
            layers: 2,
        };
        let mut net: Net<f32> = Net::init(shape, || rng.f64());
        let mut adam = Adam::new(shape.n_params(), 1e-3);
        let mut s = Scratch::default();
        let held_out = |net: &Net<f32>, s: &mut Scratch<f32>| {
            net.predict(&tx, &tb, 200, s);
            s.pred
                .iter()
                .zip(&ty)
                .map(|(p, t)| (p - t).abs())
                .sum::<f32>()
                / 200.0
        };
        let before = held_out(&net, &mut s);
        for _ in 0..3000 {
            net.loss_and_grad(&x, &b, &y, 256, &mut s);
            let g = s.grad.clone();
            adam.step(&mut net.params, &g);
        }
        let after = held_out(&net, &mut s);
        assert!(
            after < 0.02 && after < before / 10.0,
            "held-out error {before} -> {after}"
        );
    }
}

/// Reading golden files: a JSON array of numbers, and the largest difference of two vectors
/// relative to 1 + |expected|.
#[cfg(test)]
mod golden_values {
    use serde_json::Value;

    pub fn floats(v: &Value) -> Vec<f64> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|x| x.as_f64().expect("a number"))
            .collect()
    }

    pub fn worst(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs() / (1.0 + y.abs()))
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod dkgp_golden {
    //! DyHPO's deep-kernel GP against PyTorch 2.15.0 and GPyTorch 1.15.2
    //! (`tests/golden/dyhpo.json`, made by `scripts/reference/dyhpo_golden.py`): train-mode
    //! features, the negative marginal log-likelihood over n and its gradient, BatchNorm's running
    //! statistics, the parameters after 1 and 3 Adam steps, and the eval-mode prediction.
    use super::dkgp::{Batch, Dims, Model, Scratch};
    use super::golden_values::{floats, worst};
    use super::net::Adam;
    use serde_json::Value;

    #[test]
    fn the_deep_kernel_gp_equals_gpytorch() {
        let v: Value =
            serde_json::from_str(include_str!("../../../tests/golden/dyhpo.json")).unwrap();
        // The loss differs by 4e-12 (two Cholesky factorisations' rounding), and Adam's first step
        // divides a gradient of rounding size (1e-17) by itself plus 1e-8, which moves a parameter
        // by up to 1.5e-10 more or less than PyTorch's: 1e-9 covers every value.
        let tol = 1e-9;
        for c in v["cases"].as_array().unwrap() {
            let u = |k: &str| c[k].as_u64().unwrap() as usize;
            let dims = Dims {
                inputs: u("inputs"),
                u1: u("u1"),
                u2: u("u2"),
                channels: u("channels"),
                kernel: u("kernel"),
            };
            let at = format!("case seed {}", c["seed"]);
            let (x, b, curves, y) = (
                floats(&c["x"]),
                floats(&c["b"]),
                floats(&c["curves"]),
                floats(&c["y"]),
            );
            let (xt, bt, ct) = (
                floats(&c["x_test"]),
                floats(&c["b_test"]),
                floats(&c["curves_test"]),
            );
            let train = Batch {
                n: u("n"),
                x: &x,
                b: &b,
                curves: &curves,
                len: u("length"),
            };
            let test = Batch {
                n: u("tests"),
                x: &xt,
                b: &bt,
                curves: &ct,
                len: u("test_length"),
            };
            let mut model = Model::init(dims, || 0.5);
            model.params = floats(&c["params"]);
            assert_eq!(model.params.len(), dims.n_params(), "{at}");
            let mut s = Scratch::default();
            let loss = model.loss_and_grad(&train, &y, &mut s).unwrap();
            let checks = [
                ("features", worst(&s.z, &floats(&c["features"]))),
                ("loss", worst(&[loss], &[c["loss"].as_f64().unwrap()])),
                ("gradient", worst(&s.grad, &floats(&c["grad"]))),
                (
                    "running mean",
                    worst(&model.running_mean, &floats(&c["running_mean"])),
                ),
                (
                    "running variance",
                    worst(&model.running_var, &floats(&c["running_var"])),
                ),
            ];
            for (what, e) in checks {
                assert!(e < tol, "{at}: {what} differs by {e:e}");
            }
            let mut adam = Adam::new(model.params.len(), 1e-3);
            let grad = s.grad.clone();
            adam.step(&mut model.params, &grad);
            let e = worst(&model.params, &floats(&c["after1"]));
            assert!(e < tol, "{at}: parameters after one step differ by {e:e}");
            for _ in 0..2 {
                model.step(&train, &y, &mut adam, &mut s).unwrap();
            }
            let e = worst(&model.params, &floats(&c["after3"]));
            assert!(
                e < tol,
                "{at}: parameters after three steps differ by {e:e}"
            );
            let e = worst(&model.running_var, &floats(&c["running_var3"]));
            assert!(e < tol, "{at}: running variance differs by {e:e}");
            let (mut mean, mut std) = (Vec::new(), Vec::new());
            model
                .predict(&train, &y, &test, &mut s, &mut mean, &mut std)
                .unwrap();
            let e = worst(&mean, &floats(&c["mean"]));
            assert!(e < tol, "{at}: predicted means differ by {e:e}");
            let e = worst(&std, &floats(&c["std"]));
            assert!(e < tol, "{at}: predicted deviations differ by {e:e}");
        }
    }
}
