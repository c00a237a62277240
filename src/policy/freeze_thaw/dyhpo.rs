//! `dyhpo`: DyHPO (Wistuba, Kadra & Grabocka 2022, "Supervising the Multi-Fidelity Race of
//! Hyperparameter Configurations", NeurIPS; the semantics of releaunifreiburg/DyHPO's
//! `hpo_method.py` and `surrogate_models/dyhpo.py`).
//!
//! A GP on learned features (`dkgp.rs`) of a configuration, a budget and the learning curve up to
//! that budget predicts every candidate's score one unit further than it has trained: a
//! configuration never trained at its first unit (curve all zeros), an arm at its next unit (its
//! curve so far). Multi-fidelity expected improvement picks one: EI against the best score seen
//! at that candidate's next unit, or, when no configuration has reached that unit, the best score
//! of any curve. The pick trains one unit (DyHPO's `fantasize_step = 1`): `Pull(arm)` or
//! `Choose(config)`. The first configuration is drawn at random (`Draw`), as DyHPO's one random
//! initial configuration.
//!
//! After every observation the model is trained on every (configuration, unit, score, curve
//! before that unit) seen, the whole set as one batch: from fresh weights for `epochs` epochs for
//! the first `full_fits` fits (DyHPO's `initial_nr_points`) and after a restart, else from its
//! weights for `refine_epochs`; each fit starts a fresh Adam, and a set of one point is not
//! trained (BatchNorm cannot), as DyHPO skips it. A restart follows `restart_after` observations
//! without a better score (0: ⌊1.2 × units⌋, DyHPO's `no_improvement_threshold`; as its code,
//! once per streak, when the count reaches it). A fit whose Cholesky factor fails even with
//! jitter stops, the model goes back to its state before that fit, and the next fit starts from
//! fresh weights (DyHPO's `except` branch; counted as `failed_fits` in `policy_stats`, beside
//! `fits` and `scratch_fits`). The GP's cost is cubic in its points; `max_points` (0 = all, as
//! DyHPO) trains and conditions it on a random subset drawn afresh at each fit, as Syne Tune's GP
//! searchers do beyond their `max_num_observations`. Fresh weights come from a stream derived from the cell's seed and
//! the count of fresh starts, so results are identical at any `--threads`; they are not
//! PyTorch's streams.
//!
//! The score modelled is the pool's reward (higher is better: the negated loss of a minimised
//! metric), unscaled, as DyHPO models its benchmark's values; curves are padded with zeros to the
//! kernel's width and then to the longest in the set, as DyHPO pads them. Features are the pool's
//! encoding (`space.rs`: numeric dimensions min-max scaled, log where the pool's dimension is
//! log-scaled, DyHPO's `log_indicator` and `MinMaxScaler`), one-hot learner columns when the pool
//! has several learners, 0 for inactive dimensions. A failed unit ends its configuration's curve
//! (the pool world's rule); `failed` keeps or forgets its earlier units. With several workers,
//! running configurations are not candidates, and observations that finish together are fitted
//! once, before the next decision.

use super::dkgp::{Batch, Dims, Model, Scratch};
use super::net::Adam;
use super::{
    Acquisition, Candidate, Curves, Driven, FreezeThaw, candidates, draw_or_idle, failed_param,
    idle, lr_param,
};
use crate::policy::{Action, Family, Kind, ParamDef, Params, Value};
use crate::protocol::{Observation, PoolView, View, WorldKind};
use crate::rng::{Rng, derive_seed};
use anyhow::Result;

const WORLDS: &[WorldKind] = &[WorldKind::Pool];
const SOURCE: &str = "Wistuba, Kadra & Grabocka 2022, 'Supervising the Multi-Fidelity Race of Hyperparameter Configurations', NeurIPS, §4 (deep-kernel GP, multi-fidelity EI); releaunifreiburg/DyHPO hpo_method.py and surrogate_models/dyhpo.py (features, training schedule, restart)";

pub fn family() -> Family {
    Family {
        name: "dyhpo",
        summary: "DyHPO: a GP on features learned from configuration, budget and curve, multi-fidelity EI one unit ahead (freeze-thaw)",
        source: SOURCE,
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::int(
                "units1",
                1,
                4096,
                64,
                "units of the layer on configuration and budget (DyHPO's layer1_units)",
            ),
            ParamDef::int(
                "units2",
                1,
                4096,
                128,
                "features the GP sees (DyHPO's layer2_units)",
            ),
            ParamDef::int(
                "channels",
                1,
                256,
                4,
                "convolution filters on the curve (DyHPO's cnn_nr_channels)",
            ),
            ParamDef::int(
                "kernel",
                1,
                64,
                3,
                "width of the convolution on the curve (DyHPO's cnn_kernel_size)",
            ),
            ParamDef::int(
                "epochs",
                0,
                100_000,
                1000,
                "epochs of a fit from fresh weights (DyHPO's nr_epochs)",
            ),
            ParamDef::int(
                "refine_epochs",
                0,
                100_000,
                50,
                "epochs of a refinement (DyHPO's refine_epochs)",
            ),
            lr_param("Adam's learning rate (DyHPO's learning_rate)"),
            ParamDef::int(
                "full_fits",
                1,
                1_000_000,
                10,
                "the first fits from fresh weights (DyHPO's initial_nr_points)",
            ),
            ParamDef::int(
                "restart_after",
                0,
                1_000_000,
                0,
                "observations without a better score before a fit from fresh weights; 0 = floor(1.2 x the curve's units) (DyHPO's no_improvement_threshold)",
            ),
            ParamDef::int(
                "max_points",
                0,
                1_000_000,
                0,
                "observations the GP is trained and conditioned on: 0 = all (DyHPO's); else a random subset of this many, drawn afresh at each fit (as Syne Tune's GP searchers' max_num_observations), which bounds the cubic cost of a long run",
            ),
            ParamDef {
                name: "acquisition",
                kind: Kind::Choice(&["ei", "ucb", "mean"]),
                default: Value::Text("ei".into()),
                doc: "ei = multi-fidelity expected improvement (DyHPO's); ucb = mean + 0.25 std; mean = the highest predicted score (DyHPO's exploit)",
            },
            failed_param(
                "a configuration whose unit failed: its earlier units stay training data, or are forgotten",
            ),
        ],
        build: |p: &Params, _| Box::new(Driven(Dyhpo::new(Config::from(p)))),
    }
}

#[derive(Clone, Debug)]
struct Config {
    u1: usize,
    u2: usize,
    channels: usize,
    kernel: usize,
    epochs: usize,
    refine_epochs: usize,
    lr: f64,
    full_fits: u64,
    restart_after: u64,
    max_points: usize,
    acquisition: Acquisition,
    forget_failed: bool,
}

impl From<&Params> for Config {
    fn from(p: &Params) -> Self {
        Config {
            u1: p.int("units1") as usize,
            u2: p.int("units2") as usize,
            channels: p.int("channels") as usize,
            kernel: p.int("kernel") as usize,
            epochs: p.int("epochs") as usize,
            refine_epochs: p.int("refine_epochs") as usize,
            lr: p.float("lr"),
            full_fits: p.int("full_fits") as u64,
            restart_after: p.int("restart_after") as u64,
            max_points: p.int("max_points") as usize,
            acquisition: Acquisition::from_params(p),
            forget_failed: p.text("failed") == "forget",
        }
    }
}

/// Rows for the model: configuration features, scaled budgets, zero-padded curves.
#[derive(Default)]
struct Rows {
    x: Vec<f64>,
    b: Vec<f64>,
    curves: Vec<Vec<f64>>,
    flat: Vec<f64>,
    len: usize,
}

impl Rows {
    fn clear(&mut self) {
        self.x.clear();
        self.b.clear();
        self.curves.clear();
    }

    /// Pad every curve with zeros to the longest, and lay them out flat.
    fn pad(&mut self) {
        self.len = self.curves.iter().map(Vec::len).max().unwrap_or(0);
        self.flat.clear();
        for c in &self.curves {
            self.flat.extend_from_slice(c);
            self.flat
                .extend(std::iter::repeat_n(0.0, self.len - c.len()));
        }
    }

    fn batch(&self) -> Batch<'_> {
        Batch {
            n: self.b.len(),
            x: &self.x,
            b: &self.b,
            curves: &self.flat,
            len: self.len,
        }
    }
}

pub struct Dyhpo {
    cfg: Config,
    units: u32,
    seed: u64,
    feats: Vec<f64>,
    width: usize,
    arm_config: Vec<u32>,
    /// Per arm: its scores unit by unit, and whether it is forgotten.
    seen: Curves,
    best: f64,
    patience: u64,
    restart: bool,
    model: Option<Model>,
    fits: u64,
    scratch_fits: u64,
    failed_fits: u64,
    fits_untaken: u64,
    fit_due: bool,
    scratch: Scratch,
    train: Rows,
    y: Vec<f64>,
    test: Rows,
    cand: Vec<Candidate>,
}

impl Dyhpo {
    fn new(cfg: Config) -> Self {
        Dyhpo {
            cfg,
            units: 0,
            seed: 0,
            feats: Vec::new(),
            width: 0,
            arm_config: Vec::new(),
            seen: Curves::default(),
            best: f64::NEG_INFINITY,
            patience: 0,
            restart: true,
            model: None,
            fits: 0,
            scratch_fits: 0,
            failed_fits: 0,
            fits_untaken: 0,
            fit_due: false,
            scratch: Scratch::default(),
            train: Rows::default(),
            y: Vec::new(),
            test: Rows::default(),
            cand: Vec::new(),
        }
    }

    fn dims(&self) -> Dims {
        Dims {
            inputs: self.width,
            u1: self.cfg.u1,
            u2: self.cfg.u2,
            channels: self.cfg.channels,
            kernel: self.cfg.kernel,
        }
    }

    fn build_features(&mut self, space: &crate::space::Space) {
        let (feats, width) = super::encode(space);
        self.feats = feats.into_iter().map(f64::from).collect();
        self.width = width;
    }

    /// A curve as the model sees it: zero-padded to the kernel's width.
    fn padded(&self, curve: &[f64]) -> Vec<f64> {
        let mut c = curve.to_vec();
        if c.len() < self.cfg.kernel {
            c.resize(self.cfg.kernel, 0.0);
        }
        c
    }

    /// DyHPO's training set: per arm in order, per unit u, the score at u and the curve before it
    /// (`[0]` at the first unit).
    fn dataset(&mut self) {
        let mut rows = std::mem::take(&mut self.train);
        rows.clear();
        self.y.clear();
        // Every point as (arm, unit index), in order; with `max_points`, a random subset of them
        // (kept in order), the same for a fit and the decisions until the next fit.
        let points = self.seen.points(
            self.cfg.max_points,
            self.seed,
            &format!("dyhpo-subset-{}", self.fits),
        );
        for (arm, u) in points {
            let c = self.arm_config[arm] as usize;
            let curve = &self.seen.curves[arm];
            rows.x
                .extend_from_slice(&self.feats[c * self.width..(c + 1) * self.width]);
            rows.b.push((u + 1) as f64 / f64::from(self.units));
            rows.curves
                .push(self.padded(if u == 0 { &[0.0] } else { &curve[..u] }));
            self.y.push(curve[u]);
        }
        rows.pad();
        self.train = rows;
    }

    /// One fit, as DyHPO's `train_pipeline`.
    fn fit(&mut self) {
        self.fits += 1;
        self.fits_untaken += 1;
        self.dataset();
        let before = self.model.clone();
        let epochs = if self.restart || self.model.is_none() {
            let mut rng = Rng::new(derive_seed(
                self.seed,
                &format!("dyhpo-fresh-{}", self.scratch_fits),
            ));
            self.model = Some(Model::init(self.dims(), || rng.f64()));
            self.scratch_fits += 1;
            if self.fits >= self.cfg.full_fits {
                self.restart = false;
            }
            self.cfg.epochs
        } else {
            self.cfg.refine_epochs
        };
        let model = self.model.as_mut().expect("a model");
        let batch = self.train.batch();
        if batch.n < 2 {
            return;
        }
        let mut adam = Adam::new(model.params.len(), self.cfg.lr);
        for _ in 0..epochs {
            let ok = model
                .step(&batch, &self.y, &mut adam, &mut self.scratch)
                .is_ok()
                && model.params.iter().all(|v| v.is_finite());
            if !ok {
                self.failed_fits += 1;
                self.restart = true;
                self.model = before;
                return;
            }
        }
    }

    /// The candidate to train, by index into `rows`: each row a configuration and the arm whose
    /// curve it continues (None: a configuration never trained). The GP conditioned on the
    /// training set predicts each one unit further; the acquisition ranks them. If the factor
    /// fails (DyHPO's prediction would raise), the first row, and the next fit starts fresh.
    fn pick(&mut self, rows: &[(usize, Option<usize>)]) -> usize {
        let mut test = std::mem::take(&mut self.test);
        test.clear();
        let mut next_unit = Vec::with_capacity(rows.len());
        for &(c, arm) in rows {
            let curve = arm
                .and_then(|a| self.seen.curves.get(a))
                .map_or(&[][..], Vec::as_slice);
            test.x
                .extend_from_slice(&self.feats[c * self.width..(c + 1) * self.width]);
            next_unit.push(curve.len() + 1);
            test.b
                .push((curve.len() + 1) as f64 / f64::from(self.units));
            test.curves.push(self.padded(curve));
        }
        test.pad();
        self.dataset();
        let (mut mean, mut std) = (Vec::new(), Vec::new());
        let model = self.model.as_mut().expect("a model");
        let predicted = model.predict(
            &self.train.batch(),
            &self.y,
            &test.batch(),
            &mut self.scratch,
            &mut mean,
            &mut std,
        );
        self.test = test;
        if predicted.is_err() {
            self.restart = true;
            self.failed_fits += 1;
            return 0;
        }
        let best = super::best_by_unit(&self.seen.curves, &self.seen.forgotten, self.units);
        super::top_candidate(self.cfg.acquisition, &mean, &std, &next_unit, &best).unwrap_or(0)
    }
}

impl FreezeThaw for Dyhpo {
    const FAMILY: &'static str = "dyhpo";

    fn cell(&mut self) -> (&mut u32, &mut u64) {
        (&mut self.units, &mut self.seed)
    }

    fn decide(&mut self, pool: &PoolView<'_>, view: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        if self.feats.is_empty() {
            self.build_features(pool.space);
        }
        self.arm_config.clear();
        self.arm_config.extend_from_slice(pool.config);
        if self.fit_due {
            self.fit_due = false;
            self.fit();
        }
        if self.model.is_none() {
            return Ok(draw_or_idle(pool, view));
        }
        self.cand.clear();
        let mut rows = Vec::new();
        for (c, cand) in candidates(pool, view) {
            self.cand.push(cand);
            rows.push((c, cand.arm()));
        }
        if self.cand.is_empty() {
            return Ok(idle(view));
        }
        let top = self.pick(&rows);
        Ok(self.cand[top].action())
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        for reward in self.seen.record(obs, self.cfg.forget_failed) {
            // DyHPO's `observe`: the patience counts every observation without a better score;
            // reaching the threshold (once per streak) asks for fresh weights.
            if reward > self.best {
                self.best = reward;
                self.patience = 0;
            } else {
                self.patience += 1;
                let limit = super::restart_limit(self.cfg.restart_after, self.units);
                if self.patience == limit {
                    self.restart = true;
                }
            }
            self.fit_due = true;
        }
    }

    fn untaken(&mut self) -> &mut u64 {
        &mut self.fits_untaken
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!({
            "fits": self.fits,
            "scratch_fits": self.scratch_fits,
            "failed_fits": self.failed_fits,
        })
    }
}

/// One DyHPO decision taken apart, for `bench --only freeze-thaw` (which times its parts): the
/// policy after `history` (configurations and their recorded losses unit by unit, the last unit
/// the newest observation), past its fits from fresh weights.
pub struct Probe {
    d: Dyhpo,
    saved: Model,
    rows: Vec<(usize, Option<usize>)>,
}

impl Probe {
    /// DyHPO at its default parameters after `history` on `space` (curves of `units`).
    pub fn new(
        space: &crate::space::Space,
        units: u32,
        history: &[(u32, Vec<f32>)],
        seed: u64,
    ) -> Self {
        let p = crate::policy::default_params("dyhpo");
        let mut d = Dyhpo::new(Config::from(&p));
        d.units = units;
        d.seed = seed;
        d.build_features(space);
        for (c, curve) in history {
            d.arm_config.push(*c);
            // Rewards: the recorded losses negated (TaskSet's metric is minimised).
            d.seen
                .curves
                .push(curve.iter().map(|&v| -f64::from(v)).collect());
            d.seen.forgotten.push(false);
        }
        let mut rng = Rng::new(seed);
        let saved = Model::init(d.dims(), || rng.f64());
        d.fits = d.cfg.full_fits;
        d.restart = false;
        let rows = super::probe_rows(space.len(), units, history);
        Probe { d, saved, rows }
    }

    /// Configurations the prediction covers (those not yet complete).
    pub fn candidates(&self) -> usize {
        self.rows.len()
    }

    /// The refinement after the newest observation (`refine_epochs` epochs on every point).
    pub fn refine(&mut self) {
        self.d.model = Some(self.saved.clone());
        self.d.restart = false;
        self.d.fit();
    }

    /// The prediction of every candidate one unit ahead, and the acquisition.
    pub fn predict(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        std::hint::black_box(self.d.pick(&rows));
        self.rows = rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(max_points: i64) -> Dyhpo {
        let mut p = crate::policy::default_params("dyhpo");
        for (name, v) in &mut p.0 {
            if *name == "max_points" {
                *v = Value::Int(max_points);
            }
        }
        let mut d = Dyhpo::new(Config::from(&p));
        d.units = 5;
        d.width = 1;
        d.seed = 9;
        // Three configurations with curves of 5, 4 and 3 units: 12 points.
        d.feats = vec![0.0, 0.5, 1.0];
        d.arm_config = vec![0, 1, 2];
        d.seen.curves = vec![
            vec![1.0, 2.0, 3.0, 4.0, 5.0],
            vec![10.0, 20.0, 30.0, 40.0],
            vec![100.0, 200.0, 300.0],
        ];
        d.seen.forgotten = vec![false; 3];
        d
    }

    /// The training set is DyHPO's (per unit: the score, the curve before it padded to the
    /// kernel, then to the longest); `max_points` keeps a random subset in order, the same until
    /// the next fit and another after it.
    #[test]
    fn the_training_set_is_dyhpos_and_max_points_subsets_it_per_fit() {
        let mut all = policy(0);
        all.dataset();
        assert_eq!(all.y.len(), 12);
        assert_eq!(all.train.len, 4);
        // The fourth unit of the first configuration: its first three scores, padded to 4.
        assert_eq!(all.y[3], 4.0);
        assert_eq!(&all.train.flat[3 * 4..4 * 4], &[1.0, 2.0, 3.0, 0.0]);
        // A first unit sees [0] padded to the kernel (3), then to 4.
        assert_eq!(&all.train.flat[5 * 4..6 * 4], &[0.0; 4]);
        assert_eq!(all.train.b[5], 0.2);
        let mut some = policy(7);
        some.dataset();
        let first = some.y.clone();
        assert_eq!(first.len(), 7);
        assert!(first.iter().all(|v| all.y.contains(v)));
        // In the order of the whole set (scores increase along it here).
        assert!(first.windows(2).all(|w| w[0] < w[1]), "{first:?}");
        for (k, &v) in first.iter().enumerate() {
            let at = all.y.iter().position(|&u| u == v).unwrap();
            assert_eq!(some.train.b[k], all.train.b[at]);
            assert_eq!(
                &some.train.flat[k * some.train.len..(k + 1) * some.train.len],
                &all.train.flat[at * 4..at * 4 + some.train.len]
            );
        }
        some.dataset();
        assert_eq!(some.y, first, "the same subset until the next fit");
        let mut differs = false;
        for _ in 0..5 {
            some.fits += 1;
            some.dataset();
            differs |= some.y != first;
        }
        assert!(differs, "a later fit draws another subset");
        // EI's reference per unit: the best score at that unit among the curves that reached it;
        // at a unit none reached (the sixth), the best of every curve.
        all.units = 6;
        assert_eq!(
            super::super::best_by_unit(&all.seen.curves, &all.seen.forgotten, all.units),
            vec![100.0, 200.0, 300.0, 40.0, 5.0, 300.0]
        );
    }
}
