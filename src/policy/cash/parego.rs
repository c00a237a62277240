//! ParEGO (Knowles 2006): several objectives turned into one by an augmented Chebyshev
//! scalarisation whose weight vector is drawn afresh at every proposal, the scalarised history
//! then modelled by a single-objective optimiser (here TPE or the SMAC-style forest instead of
//! the paper's DACE model with expected improvement).

use super::{Evaluator, Proposal, Proposer, WORLDS, candidates_param, fresh_model};
use crate::policy::{CellStart, Family, ParamDef, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use anyhow::{Result, bail};

pub fn family_parego() -> Family {
    Family {
        name: "parego",
        summary: "several objectives: an augmented Chebyshev scalarisation with a weight vector drawn at random at every proposal, modelled by TPE or SMAC-style forests",
        source: "Knowles 2006, 'ParEGO: A hybrid algorithm with on-line landscape approximation for expensive multiobjective optimization problems', IEEE TEC 10(1), §III (Eq. 2 with ρ = 0.05; weight vectors l/s summing to 1, s = 10 for two objectives and 4 for three; objectives normalised by the observed ranges; 11 d - 1 initial points); the model is banditbench's tpe or smac at their defaults in place of the paper's DACE + EI",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![
            ParamDef::choice(
                "model",
                &["tpe", "smac"],
                "tpe",
                "the single-objective model fitted to the scalarised history at every proposal: tpe or smac (each at its family's defaults, without its own initial design)",
            ),
            ParamDef::int(
                "s",
                0,
                1000,
                0,
                "weight vectors are (l_1/s, ..., l_d/s) with whole l_j summing to s; 0 is Knowles's choice: s = 10 for two objectives, 4 for three, 3 for more",
            ),
            ParamDef::float(
                "rho",
                0.0,
                1.0,
                0.05,
                "ρ of the augmented Chebyshev function max_j(λ_j f_j) + ρ Σ_j λ_j f_j (Knowles: 0.05)",
            ),
            ParamDef::int(
                "n_startup",
                -1,
                1_000_000,
                -1,
                "random configurations before the model is used; -1 is Knowles's 11 d - 1 (21 for two objectives)",
            ),
            candidates_param(),
        ],
        build: |p: &Params, _| {
            Box::new(Evaluator::new(ParEgo {
                model: p.text("model").to_string(),
                s: p.int("s") as usize,
                rho: p.float("rho"),
                n_startup: p.int("n_startup"),
                candidates: p.int("candidates") as usize,
                maximize: Vec::new(),
                weights: Vec::new(),
                evals: Vec::new(),
                running: Vec::new(),
            }))
        },
    }
}

pub struct ParEgo {
    model: String,
    s: usize,
    rho: f64,
    n_startup: i64,
    /// Open configurations the model scores per proposal (0: all).
    candidates: usize,
    /// Per objective: maximised (from the cell's start).
    maximize: Vec<bool>,
    weights: Vec<Vec<f64>>,
    /// Every finished evaluation: its configuration, units trained and objectives, minimised
    /// (None: failed or infeasible).
    evals: Vec<(u32, u32, Option<Vec<f64>>)>,
    running: Vec<u32>,
}

/// Every vector (l_1/s, ..., l_d/s) of whole l_j ≥ 0 summing to s, in lexicographic order.
pub(crate) fn weight_vectors(d: usize, s: usize) -> Vec<Vec<f64>> {
    fn rec(d: usize, left: usize, s: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<f64>>) {
        if cur.len() + 1 == d {
            cur.push(left);
            out.push(cur.iter().map(|&l| l as f64 / s as f64).collect());
            cur.pop();
            return;
        }
        for l in 0..=left {
            cur.push(l);
            rec(d, left - l, s, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    rec(d, s, s, &mut Vec::new(), &mut out);
    out
}

/// The augmented Chebyshev function of Knowles's Eq. 2 at the normalised point `f`.
pub(crate) fn chebyshev(f: &[f64], lambda: &[f64], rho: f64) -> f64 {
    let weighted = f.iter().zip(lambda).map(|(x, l)| x * l);
    let max = weighted.clone().fold(f64::NEG_INFINITY, f64::max);
    max + rho * weighted.sum::<f64>()
}

impl ParEgo {
    fn startup(&self) -> usize {
        if self.n_startup >= 0 {
            self.n_startup as usize
        } else {
            11 * self.maximize.len() - 1
        }
    }

    /// The history scalarised by `lambda`: per evaluation its configuration, units trained and
    /// −f_λ of its objectives normalised by the observed ranges (higher is better), None when it
    /// failed.
    fn scalarised(&self, lambda: &[f64]) -> Vec<(u32, u32, Option<f64>)> {
        let d = self.maximize.len();
        let feasible = self.evals.iter().filter_map(|(_, _, v)| v.as_ref());
        let (mut lo, mut hi) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
        for v in feasible {
            for j in 0..d {
                lo[j] = lo[j].min(v[j]);
                hi[j] = hi[j].max(v[j]);
            }
        }
        self.evals
            .iter()
            .map(|(c, b, v)| {
                let score = v.as_ref().map(|v| {
                    let f: Vec<f64> = (0..d)
                        .map(|j| {
                            let range = hi[j] - lo[j];
                            if range > 0.0 {
                                (v[j] - lo[j]) / range
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    -chebyshev(&f, lambda, self.rho)
                });
                (*c, *b, score)
            })
            .collect()
    }

    /// A fresh model, told the history scalarised by `lambda`.
    fn model_for(&self, lambda: &[f64]) -> Box<dyn Proposer> {
        let mut model = fresh_model(&self.model, self.candidates);
        for (c, budget, score) in self.scalarised(lambda) {
            model.tell(c, budget, score);
        }
        model
    }
}

impl Proposer for ParEgo {
    fn begin(&mut self, start: &CellStart<'_>) -> Result<()> {
        let Some(pool) = &start.pool else {
            bail!("parego needs the pool world");
        };
        if pool.objectives.len() < 2 {
            bail!(
                "parego scalarises several objectives, but this experiment measures one; name them in [world] objectives (e.g. objectives = [\"val_acc\", \"latency\"])"
            );
        }
        self.maximize = pool.objectives.iter().map(|o| o.1).collect();
        let d = self.maximize.len();
        let s = match (self.s, d) {
            (0, 2) => 10,
            (0, 3) => 4,
            (0, _) => 3,
            (s, _) => s,
        };
        self.weights = weight_vectors(d, s);
        self.evals.clear();
        Ok(())
    }

    fn propose(&mut self, p: &PoolView<'_>, rng: &mut Rng) -> Result<Proposal> {
        if self.evals.len() < self.startup() || self.evals.iter().all(|e| e.2.is_none()) {
            return Ok(Proposal::Draw);
        }
        let lambda = self.weights[rng.below(self.weights.len())].clone();
        let mut model = self.model_for(&lambda);
        model.pending(&self.running);
        model.propose(p, rng)
    }

    fn tell(&mut self, _config: u32, _budget: u32, _score: Option<f64>) {}

    fn tell_objectives(&mut self, config: u32, budget: u32, values: Option<&[f64]>) {
        let v = values.and_then(|v| crate::pareto::minimised(v, &self.maximize));
        self.evals.push((config, budget, v));
    }

    fn pending(&mut self, configs: &[u32]) {
        self.running = configs.to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_vectors_are_knowless_simplex_lattice() {
        let w = weight_vectors(2, 10);
        assert_eq!(w.len(), 11);
        assert_eq!(
            (w[0].clone(), w[10].clone()),
            (vec![0.0, 1.0], vec![1.0, 0.0])
        );
        // Three objectives, s = 4: C(6, 2) = 15 vectors, each summing to 1.
        let w = weight_vectors(3, 4);
        assert_eq!(w.len(), 15);
        assert!(
            w.iter()
                .all(|v| (v.iter().sum::<f64>() - 1.0).abs() < 1e-12)
        );
    }

    #[test]
    fn the_history_is_normalised_by_the_observed_ranges_and_scalarised() {
        let mut p = ParEgo {
            model: "tpe".into(),
            s: 0,
            rho: 0.05,
            n_startup: -1,
            candidates: 0,
            maximize: vec![true, false],
            weights: Vec::new(),
            evals: Vec::new(),
            running: Vec::new(),
        };
        // val_acc (maximised) and latency: minimised (-90, 2), (-70, 0), a failure, (-80, 1).
        p.tell_objectives(4, 9, Some(&[90.0, 2.0]));
        p.tell_objectives(7, 9, Some(&[70.0, 0.0]));
        p.tell_objectives(9, 9, None);
        p.tell_objectives(5, 9, Some(&[80.0, f64::NAN]));
        p.tell_objectives(2, 9, Some(&[80.0, 1.0]));
        assert_eq!(p.startup(), 21);
        // Normalised: (0, 1), (1, 0), (0.5, 0.5); λ = (0.3, 0.7), ρ = 0.05:
        // max(0, 0.7) + 0.05 · 0.7 = 0.735; max(0.3, 0) + 0.05 · 0.3 = 0.315;
        // max(0.15, 0.35) + 0.05 · 0.5 = 0.375. NaN is infeasible: a failure.
        let s = p.scalarised(&[0.3, 0.7]);
        let want = [
            (4, Some(-0.735)),
            (7, Some(-0.315)),
            (9, None),
            (5, None),
            (2, Some(-0.375)),
        ];
        assert_eq!(s.len(), want.len());
        for ((c, b, v), (wc, wv)) in s.iter().zip(want) {
            assert_eq!((*c, *b), (wc, 9));
            match (v, wv) {
                (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{c}: {a} vs {b}"),
                (a, b) => assert_eq!(*a, b, "{c}"),
            }
        }
    }

    #[test]
    fn the_augmented_chebyshev_function_by_hand() {
        // λ = (0.3, 0.7), f = (0.5, 0.2): max(0.15, 0.14) + 0.05 (0.15 + 0.14) = 0.1645.
        assert!((chebyshev(&[0.5, 0.2], &[0.3, 0.7], 0.05) - 0.1645).abs() < 1e-12);
        assert_eq!(chebyshev(&[0.5, 0.2], &[1.0, 0.0], 0.0), 0.5);
    }
}
