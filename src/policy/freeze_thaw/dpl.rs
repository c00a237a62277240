//! `dpl`: Deep Power Laws (Kadra, Janowski, Wistuba & Grabocka 2023, "Scaling Laws for
//! Hyperparameter Optimization", NeurIPS; the semantics of releaunifreiburg/DPL's
//! `surrogate_models/power_law_surrogate.py` and `framework.py`).
//!
//! An ensemble of `ensemble` networks (`net.rs`) maps a configuration to a power law in the budget.
//! Every decision predicts, for every configuration whose curve is not complete, its loss at the
//! full budget (b = 1 after scaling budgets by the curve length): the ensemble's mean and
//! (population) standard deviation. Expected improvement over the best loss seen at any budget picks
//! a configuration, which trains one more unit (DPL's `fantasize_step = 1`): an arm one more unit
//! (`Pull`), or a configuration never trained its first (`Choose`). The first configuration is
//! drawn at random (`Draw`), as DPL's one random initial configuration.
//!
//! After every observed unit the ensemble is fitted again on every (configuration, unit, loss)
//! seen (with several workers, units that finish together are fitted once, before the next
//! decision): from scratch for `epochs` epochs while it has been fitted at most `full_fits` times (so
//! `full_fits + 1` fits from scratch, as DPL's code counts), and
//! after `restart_after` observations without a better loss (0: ⌊1.2 × units⌋, DPL's
//! `no_improvement_threshold`); else refined from its weights for `refine_epochs` epochs, the last
//! point added to every batch (`refine_new = "every-batch"`, DPL's `weight_new_example`). A batch of
//! one example is skipped, as DPL skips it. Member k's random stream (initial weights, batch
//! order) restarts from its own seed at every fit, as DPL's `train_pipeline` calls
//! `torch.manual_seed(seed)`: seeds derive from the cell's, so results are identical at any
//! `--threads`; they are not PyTorch's streams.
//!
//! The loss modelled is the score in cost orientation (the recorded value of a minimised metric,
//! its negation for a maximised one: DPL's code models `max_value − score`, which differs by a
//! constant the network's bias absorbs). Features are the pool's encoding (`space.rs`: numeric
//! dimensions min-max scaled, log where the pool's dimension is log-scaled), one-hot learner
//! columns when the pool has several learners, 0 for inactive dimensions.
//!
//! Bad cases, each a named rule: a unit that failed ends its configuration's curve (the pool
//! world's rule) and its earlier units stay training data (`failed = "keep-prefix"`) or are
//! dropped (`failed = "forget"`, closer to DPL, whose tables drop failing curves beforehand). A
//! member whose fit ends with a non-finite weight is left out of the ensemble's predictions until
//! its next fit, which starts it from fresh weights (counted as `diverged` in `policy_stats`,
//! beside `fits` and `scratch_fits`; if every member diverged, the first candidate is taken).
//! With several workers, running configurations are not candidates; until the first fit, a free
//! worker draws at random.

use super::net::{Adam, Net, Scratch, Shape};
use super::{
    Acquisition, Candidate, Driven, FreezeThaw, candidates, draw_or_idle, failed_param, idle,
    lr_param,
};
use crate::policy::{Action, Family, Kind, ParamDef, Params, Value};
use crate::protocol::{Observation, PoolView, View, WorldKind};
use crate::rng::{Rng, derive_seed};
use anyhow::Result;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];
const SOURCE: &str = "Kadra, Janowski, Wistuba & Grabocka 2023, 'Scaling Laws for Hyperparameter Optimization', NeurIPS, §4 (Eq. 4, the ensemble and EI at the maximum budget); releaunifreiburg/DPL power_law_surrogate.py (training schedule, refinement, restart)";

pub fn family() -> Family {
    Family {
        name: "dpl",
        summary: "Deep Power Laws: an ensemble of networks predicting power-law curves, EI at the full budget, one unit per decision (freeze-thaw)",
        source: SOURCE,
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::int(
                "ensemble",
                1,
                100,
                5,
                "networks in the ensemble (DPL's ensemble_size)",
            ),
            ParamDef::int(
                "units",
                1,
                4096,
                128,
                "units per hidden layer (DPL's nr_units)",
            ),
            ParamDef::int("layers", 1, 16, 2, "hidden layers (DPL's nr_layers)"),
            ParamDef::int(
                "epochs",
                0,
                100_000,
                250,
                "epochs of a fit from scratch (DPL's nr_epochs)",
            ),
            ParamDef::int(
                "refine_epochs",
                0,
                100_000,
                20,
                "epochs of a refinement (DPL's refine_nr_epochs)",
            ),
            ParamDef::int(
                "batch_size",
                2,
                1_000_000,
                64,
                "examples per batch (DPL's batch_size and refine_batch_size)",
            ),
            lr_param("Adam's learning rate (DPL's learning_rate)"),
            ParamDef::int(
                "full_fits",
                0,
                1_000_000,
                10,
                "fits go on from scratch while the count of fits is at most this (DPL's initial_full_training_trials; its code, and this, fit 11 times from scratch with 10)",
            ),
            ParamDef::int(
                "restart_after",
                0,
                1_000_000,
                0,
                "observations without a better loss before a fit from scratch; 0 = floor(1.2 x the curve's units) (DPL's no_improvement_threshold)",
            ),
            ParamDef {
                name: "refine_new",
                kind: Kind::Choice(&["every-batch", "none"]),
                default: Value::Text("every-batch".into()),
                doc: "a refinement adds the newest point to every batch (DPL's weight_new_example) or not",
            },
            ParamDef {
                name: "acquisition",
                kind: Kind::Choice(&["ei", "ucb", "mean"]),
                default: Value::Text("ei".into()),
                doc: "ei = expected improvement over the best loss seen (DPL's); ucb = -mean + 0.25 std (DPL's alternative); mean = the lowest predicted loss",
            },
            failed_param(
                "a configuration whose unit failed: its earlier units stay training data, or are forgotten (DPL's tables drop failing curves beforehand)",
            ),
        ],
        build: |p: &Params, _| Box::new(Driven(Dpl::new(Config::from(p)))),
    }
}

#[derive(Clone, Debug)]
struct Config {
    ensemble: usize,
    units: usize,
    layers: usize,
    epochs: usize,
    refine_epochs: usize,
    batch: usize,
    lr: f64,
    full_fits: u64,
    restart_after: u64,
    refine_new: bool,
    acquisition: Acquisition,
    forget_failed: bool,
}

impl From<&Params> for Config {
    fn from(p: &Params) -> Self {
        Config {
            ensemble: p.int("ensemble") as usize,
            units: p.int("units") as usize,
            layers: p.int("layers") as usize,
            epochs: p.int("epochs") as usize,
            refine_epochs: p.int("refine_epochs") as usize,
            batch: p.int("batch_size") as usize,
            lr: p.float("lr"),
            full_fits: p.int("full_fits") as u64,
            restart_after: p.int("restart_after") as u64,
            refine_new: p.text("refine_new") == "every-batch",
            acquisition: Acquisition::from_params(p),
            forget_failed: p.text("failed") == "forget",
        }
    }
}

struct Member {
    seed: u64,
    net: Option<Net<f32>>,
}

/// `n` untrained members, their seeds derived from `seed` (DPL draws its members' seeds from the
/// run's seed; here from the cell's).
fn members(n: usize, seed: u64) -> Vec<Member> {
    (0..n)
        .map(|k| Member {
            seed: derive_seed(seed, &format!("dpl-member-{k}")),
            net: None,
        })
        .collect()
}

pub struct Dpl {
    cfg: Config,
    /// Curve length of the pool.
    units: u32,
    /// The cell's seed, from which the members' seeds derive.
    seed: u64,
    /// Features per configuration, built at the first decision.
    feats: Vec<f32>,
    width: usize,
    /// Per arm: its configuration, its losses so far (unit order), and whether it is forgotten.
    arm_config: Vec<u32>,
    curves: Vec<Vec<f32>>,
    forgotten: Vec<bool>,
    best: f64,
    patience: u64,
    from_scratch: bool,
    fits: u64,
    /// Fits from scratch among `fits`.
    scratch_fits: u64,
    fits_untaken: u64,
    diverged: u64,
    members: Vec<Member>,
    trained: bool,
    /// Observations came in since the last fit (the fit happens at the next decision).
    fit_due: bool,
    last: Option<(usize, usize)>,
    scratch: Scratch<f32>,
    // Per-decision buffers.
    cand: Vec<Candidate>,
    xs: Vec<f32>,
    ones: Vec<f32>,
    preds: Vec<f32>,
}

impl Dpl {
    fn new(cfg: Config) -> Self {
        Dpl {
            cfg,
            units: 0,
            seed: 0,
            feats: Vec::new(),
            width: 0,
            arm_config: Vec::new(),
            curves: Vec::new(),
            forgotten: Vec::new(),
            best: f64::INFINITY,
            patience: 0,
            from_scratch: true,
            fits: 0,
            scratch_fits: 0,
            fits_untaken: 0,
            diverged: 0,
            members: Vec::new(),
            trained: false,
            fit_due: false,
            last: None,
            scratch: Scratch::default(),
            cand: Vec::new(),
            xs: Vec::new(),
            ones: Vec::new(),
            preds: Vec::new(),
        }
    }

    fn shape(&self) -> Shape {
        Shape {
            inputs: self.width,
            units: self.cfg.units,
            layers: self.cfg.layers,
        }
    }

    fn build_features(&mut self, space: &crate::space::Space) {
        (self.feats, self.width) = super::encode(space);
    }

    /// The training set: every (configuration, unit, loss) seen, arms in the order they appeared.
    fn dataset(&self) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (mut x, mut b, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for (arm, curve) in self.curves.iter().enumerate() {
            if self.forgotten[arm] {
                continue;
            }
            let c = self.arm_config[arm] as usize;
            for (u, &loss) in curve.iter().enumerate() {
                x.extend_from_slice(&self.feats[c * self.width..(c + 1) * self.width]);
                b.push((u + 1) as f32 / self.units as f32);
                y.push(loss);
            }
        }
        (x, b, y)
    }

    /// Fit every member (from scratch or refined), as DPL's `observe` does after each result.
    fn fit(&mut self) {
        let (x, b, y) = self.dataset();
        let n = y.len();
        if n == 0 {
            return;
        }
        let scratch = std::mem::take(&mut self.from_scratch);
        let epochs = if scratch {
            self.cfg.epochs
        } else {
            self.cfg.refine_epochs
        };
        let extra = match (scratch, self.last, self.cfg.refine_new) {
            (false, Some((arm, u)), true) if !self.forgotten[arm] => {
                let c = self.arm_config[arm] as usize;
                Some((
                    self.feats[c * self.width..(c + 1) * self.width].to_vec(),
                    (u + 1) as f32 / self.units as f32,
                    self.curves[arm][u],
                ))
            }
            _ => None,
        };
        let shape = self.shape();
        let width = self.width;
        let batch = self.cfg.batch;
        let mut order: Vec<usize> = (0..n).collect();
        let (mut bx, mut bb, mut by) = (Vec::new(), Vec::new(), Vec::new());
        for m in &mut self.members {
            let mut rng = Rng::new(m.seed);
            let mut net = match (&m.net, scratch) {
                (Some(net), false) => net.clone(),
                _ => Net::init(shape, || rng.f64()),
            };
            let mut adam = Adam::new(net.params.len(), self.cfg.lr);
            for _ in 0..epochs {
                for (i, o) in order.iter_mut().enumerate() {
                    *o = i;
                }
                rng.shuffle(&mut order);
                for chunk in order.chunks(batch) {
                    if chunk.len() == 1 {
                        continue;
                    }
                    bx.clear();
                    bb.clear();
                    by.clear();
                    for &i in chunk {
                        bx.extend_from_slice(&x[i * width..(i + 1) * width]);
                        bb.push(b[i]);
                        by.push(y[i]);
                    }
                    if let Some((ex, eb, ey)) = &extra {
                        bx.extend_from_slice(ex);
                        bb.push(*eb);
                        by.push(*ey);
                    }
                    let rows = by.len();
                    net.loss_and_grad(&bx, &bb, &by, rows, &mut self.scratch);
                    adam.step(&mut net.params, &self.scratch.grad);
                }
            }
            if net.params.iter().all(|v| v.is_finite()) {
                m.net = Some(net);
            } else {
                self.diverged += 1;
                m.net = None;
            }
        }
        self.trained = true;
        self.fits += 1;
        self.scratch_fits += u64::from(scratch);
        self.fits_untaken += 1;
        // DPL's `observe`: training from scratch goes on while its counter of fits (refinements
        // included) is at most `initial_full_training_trials`, so 10 gives 11 fits from scratch.
        self.from_scratch = scratch && self.fits <= self.cfg.full_fits;
    }
}

impl FreezeThaw for Dpl {
    const FAMILY: &'static str = "dpl";

    fn cell(&mut self) -> (&mut u32, &mut u64) {
        (&mut self.units, &mut self.seed)
    }

    fn start(&mut self) {
        self.members = members(self.cfg.ensemble, self.seed);
    }

    fn decide(&mut self, pool: &PoolView<'_>, view: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        if self.feats.is_empty() {
            self.build_features(pool.space);
        }
        // Observations since the last decision are fitted now, when every arm's configuration
        // is in the view (a drawn arm's is not in its observation).
        self.arm_config.clear();
        self.arm_config.extend_from_slice(pool.config);
        if self.fit_due {
            self.fit_due = false;
            self.fit();
        }
        if !self.trained {
            return Ok(draw_or_idle(pool, view));
        }
        self.cand.clear();
        self.xs.clear();
        for (c, cand) in candidates(pool, view) {
            self.cand.push(cand);
            self.xs
                .extend_from_slice(&self.feats[c * self.width..(c + 1) * self.width]);
        }
        if self.cand.is_empty() {
            return Ok(idle(view));
        }
        let n = self.cand.len();
        self.ones.clear();
        self.ones.resize(n, 1.0);
        // Mean and population standard deviation over the members (np.mean, np.std).
        let live: Vec<&Net<f32>> = self.members.iter().filter_map(|m| m.net.as_ref()).collect();
        let k = live.len().max(1) as f64;
        self.preds.clear();
        self.preds.resize(2 * n, 0.0);
        let (sum, sq) = self.preds.split_at_mut(n);
        let mut each = Vec::with_capacity(live.len());
        for net in &live {
            net.predict(&self.xs, &self.ones, n, &mut self.scratch);
            each.push(self.scratch.pred.clone());
        }
        for p in &each {
            for (s, &v) in sum.iter_mut().zip(p) {
                *s += v;
            }
        }
        for s in sum.iter_mut() {
            *s = (f64::from(*s) / k) as f32;
        }
        for p in &each {
            for ((q, &v), &m) in sq.iter_mut().zip(p).zip(sum.iter()) {
                *q += (v - m) * (v - m);
            }
        }
        let best = self.best;
        // The first highest value (np.argmax); a NaN value (a member's prediction overflowed)
        // is never chosen, and the first candidate is taken if every value is NaN.
        let mut top: Option<(f64, usize)> = None;
        for i in 0..n {
            let mean = f64::from(sum[i]);
            let std = (f64::from(sq[i]) / k).sqrt();
            let a = match self.cfg.acquisition {
                Acquisition::Ei => {
                    let d = best - mean;
                    let z = if std == 0.0 { 0.0 } else { d / std };
                    d * crate::normal::norm_cdf(z) + std * crate::normal::norm_pdf(z)
                }
                Acquisition::Ucb => -mean + 0.25 * std,
                Acquisition::Mean => -mean,
            };
            if !a.is_nan() && top.is_none_or(|(t, _)| a > t) {
                top = Some((a, i));
            }
        }
        let top = top.map_or(0, |(_, i)| i);
        Ok(self.cand[top].action())
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        let arm = obs.arm;
        if arm >= self.curves.len() {
            self.curves.resize(arm + 1, Vec::new());
            self.forgotten.resize(arm + 1, false);
        }
        let mut learned = false;
        let mut improved = false;
        for r in obs.revealed {
            if !r.ok {
                if self.cfg.forget_failed {
                    self.forgotten[arm] = true;
                }
                break;
            }
            let loss = -r.reward;
            let u = r.time as usize;
            // Units arrive in order; a repeated unit (never from this policy) is not new data.
            if u == self.curves[arm].len() + 1 {
                self.curves[arm].push(loss as f32);
                self.last = Some((arm, u - 1));
                learned = true;
                if loss < self.best {
                    self.best = loss;
                    improved = true;
                }
            }
        }
        if !learned {
            return;
        }
        if improved {
            self.patience = 0;
        } else {
            self.patience += 1;
            let limit = super::restart_limit(self.cfg.restart_after, self.units);
            if self.patience >= limit {
                self.from_scratch = true;
                self.patience = 0;
            }
        }
        self.fit_due = true;
    }

    fn untaken(&mut self) -> &mut u64 {
        &mut self.fits_untaken
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!({
            "fits": self.fits,
            "scratch_fits": self.scratch_fits,
            "diverged": self.diverged,
        })
    }
}

/// One DPL decision taken apart, for `bench --only freeze-thaw` (which times its parts): the
/// policy after `history` (configurations and their losses unit by unit, the last unit the
/// newest observation), its ensemble fitted once from scratch (the state a run reaches).
pub struct Probe {
    d: Dpl,
    saved: Vec<Option<Net<f32>>>,
    xs: Vec<f32>,
    ones: Vec<f32>,
}

impl Probe {
    /// DPL at its default parameters after `history` on `space` (curves of `units`).
    pub fn new(
        space: &crate::space::Space,
        units: u32,
        history: &[(u32, Vec<f32>)],
        seed: u64,
    ) -> Self {
        let p = crate::policy::default_params("dpl");
        let mut d = Dpl::new(Config::from(&p));
        d.units = units;
        d.build_features(space);
        d.members = members(d.cfg.ensemble, seed);
        for (arm, (c, curve)) in history.iter().enumerate() {
            d.arm_config.push(*c);
            d.curves.push(curve.clone());
            d.forgotten.push(false);
            d.last = Some((arm, curve.len().saturating_sub(1)));
        }
        d.from_scratch = true;
        d.fit();
        let complete: std::collections::BTreeSet<u32> = history
            .iter()
            .filter(|(_, c)| c.len() as u32 >= units)
            .map(|(c, _)| *c)
            .collect();
        let mut xs = Vec::new();
        for c in (0..space.len()).filter(|c| !complete.contains(&(*c as u32))) {
            xs.extend_from_slice(&d.feats[c * d.width..(c + 1) * d.width]);
        }
        let ones = vec![1.0f32; xs.len() / d.width.max(1)];
        let saved = d.members.iter().map(|m| m.net.clone()).collect();
        Probe { d, saved, xs, ones }
    }

    /// Configurations the prediction covers (those not yet complete).
    pub fn candidates(&self) -> usize {
        self.ones.len()
    }

    /// The refinement after the newest observation, from the fitted ensemble each time.
    pub fn refine(&mut self) {
        for (m, s) in self.d.members.iter_mut().zip(&self.saved) {
            m.net = s.clone();
        }
        self.d.from_scratch = false;
        self.d.fit();
    }

    /// Every member's prediction of every candidate at the full budget.
    pub fn predict(&mut self) {
        let n = self.ones.len();
        for m in &self.d.members {
            if let Some(net) = &m.net {
                net.predict(&self.xs, &self.ones, n, &mut self.d.scratch);
                std::hint::black_box(&self.d.scratch.pred);
            }
        }
    }
}
