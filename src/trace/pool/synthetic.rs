//! Pools generated from a function instead of read from recordings (format 1.2, a `[generator]`
//! table in `pool.toml` and no curve files): synthetic multi-fidelity benchmarks whose curves are
//! known exactly, to show when a method's curve model is right and when it is fooled. Their
//! provenance says `source = "synthetic"` and runs on them say so.
//!
//! `function = "mfhartmann3" | "mfhartmann6"`: the multi-fidelity Hartmann functions as
//! mf-prior-bench 1.10.0 codes them (`mfpbench/synthetic/hartmann/generators.py`, after Kandasamy
//! et al. 2017): at fidelity z of 1 … Z (Z = the pool's `units`), with s = ln z / ln Z,
//!
//! ```text
//! f(x, z) = −Σᵢ (αᵢ − bias·(1 − s)) · exp(−Σⱼ Aᵢⱼ (xⱼ − 10⁻⁴ Pᵢⱼ)²) + |ε| · noise · (1 − s),  ε ~ N(0, 1)
//! ```
//!
//! minimised; the bias flattens the function at low fidelity and the noise shrinks to nothing at
//! z = Z, where f is the Hartmann function itself. mf-prior-bench's presets of (bias, noise):
//! `terrible` (4, 5), `bad` (3.5, 4), `moderate` (3, 3), `good` (2.5, 2), and its default
//! `default` (0.5, 0.1). The noise's draws are this program's (seeded per task, configuration and
//! fidelity), not numpy's: the same configuration at the same fidelity on the same task always
//! gives the same value, as mf-prior-bench's seeding intends.
//!
//! The pool: `configs` configurations drawn uniformly from [0, 1]^d by `seed`, the same on every
//! task; one task per (preset, run) for `runs` noise seeds (dataset = the preset's name); unit u
//! is fidelity z = u. `score` = f(x, u); `test_score` = the Hartmann function's value at x (no
//! bias, no noise), what the configuration is truly worth; `cost_s` = λ(u) − λ(u − 1) with
//! mf-prior-bench's cost λ(z) = 0.05 + 0.95 (z / Z)² (Kandasamy et al. 2017, p. 18) and λ(0) = 0,
//! so that training a configuration to unit u costs λ(u) in all.

use anyhow::{Result, bail};

use super::{Curve, PoolConfig, PoolTask};
use crate::rng::{Rng, derive_seed};
use crate::trace::Status;

/// This build's generator: part of a generated pool's content hash, so that results made by
/// another generator are not mistaken for these. Change it when a generated value changes.
pub const GENERATOR_VERSION: &str = "mfhartmann/1";

/// The functions a generated pool can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyntheticFunction {
    /// The 3-dimensional multi-fidelity Hartmann function.
    MfHartmann3,
    /// The 6-dimensional multi-fidelity Hartmann function.
    MfHartmann6,
}

impl SyntheticFunction {
    /// Its input dimensions.
    pub fn dims(self) -> usize {
        match self {
            SyntheticFunction::MfHartmann3 => 3,
            SyntheticFunction::MfHartmann6 => 6,
        }
    }

    /// Its name in `pool.toml`.
    pub fn name(self) -> &'static str {
        match self {
            SyntheticFunction::MfHartmann3 => "mfhartmann3",
            SyntheticFunction::MfHartmann6 => "mfhartmann6",
        }
    }
}

/// mf-prior-bench 1.10.0's (bias, noise) presets.
pub const PRESETS: [(&str, f64, f64); 5] = [
    ("terrible", 4.0, 5.0),
    ("bad", 3.5, 4.0),
    ("moderate", 3.0, 3.0),
    ("good", 2.5, 2.0),
    ("default", 0.5, 0.1),
];

/// A pool's `[generator]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Generator {
    /// The function.
    pub function: SyntheticFunction,
    /// Configurations drawn.
    pub configs: usize,
    /// Seed of the configurations and the noise.
    pub seed: u64,
    /// Noise seeds per preset (tasks `preset/0` … `preset/runs − 1`).
    pub runs: u32,
    /// The presets, each a task's dataset: (name, bias, noise).
    pub presets: Vec<(String, f64, f64)>,
}

/// Read `[generator]` (module docs); `at` names the file.
pub(super) fn read_generator(t: &toml::Table, at: &str) -> Result<Generator> {
    let at = format!("{at}: [generator]");
    for k in t.keys() {
        if !["function", "configs", "seed", "runs", "presets"].contains(&k.as_str()) {
            bail!("{at}: unknown key '{k}'; it has function, configs, seed, runs and presets");
        }
    }
    let function = match t.get("function").and_then(|v| v.as_str()) {
        Some("mfhartmann3") => SyntheticFunction::MfHartmann3,
        Some("mfhartmann6") => SyntheticFunction::MfHartmann6,
        other => bail!(
            "{at}: key 'function' is {}; allowed: \"mfhartmann3\", \"mfhartmann6\"",
            other.map_or("missing".to_string(), |s| format!("'{s}'"))
        ),
    };
    let int = |k: &str, lo: i64, hi: i64| -> Result<i64> {
        match t.get(k) {
            Some(&toml::Value::Integer(i)) if (lo..=hi).contains(&i) => Ok(i),
            Some(v) => bail!("{at}: key '{k}' is {v}; it must be a whole number from {lo} to {hi}"),
            None => bail!("{at}: missing key '{k}'"),
        }
    };
    let presets = match t.get("presets") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| {
                let name = v.as_str().unwrap_or_default();
                PRESETS
                    .iter()
                    .find(|p| p.0 == name)
                    .map(|p| (p.0.to_string(), p.1, p.2))
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "{at}: preset {v} is not one of mf-prior-bench's: {}",
                            PRESETS.map(|p| p.0).join(", ")
                        )
                    })
            })
            .collect::<Result<Vec<_>>>()?,
        _ => bail!(
            "{at}: key 'presets' must list presets, some of {}",
            PRESETS.map(|p| p.0).join(", ")
        ),
    };
    Ok(Generator {
        function,
        configs: int("configs", 1, 1_000_000)? as usize,
        seed: int("seed", 0, i64::MAX)? as u64,
        runs: int("runs", 1, 1000)? as u32,
        presets,
    })
}

/// The Hartmann constants of mf-prior-bench (and of the Hartmann functions' usual definition).
const ALPHA: [f64; 4] = [1.0, 1.2, 3.0, 3.2];
const A3: [[f64; 3]; 4] = [
    [3.0, 10.0, 30.0],
    [0.1, 10.0, 35.0],
    [3.0, 10.0, 30.0],
    [0.1, 10.0, 35.0],
];
const P3: [[f64; 3]; 4] = [
    [3689.0, 1170.0, 2673.0],
    [4699.0, 4387.0, 7470.0],
    [1091.0, 8732.0, 5547.0],
    [381.0, 5743.0, 8828.0],
];
const A6: [[f64; 6]; 4] = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
];
const P6: [[f64; 6]; 4] = [
    [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
    [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
    [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
    [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
];

/// The noiseless multi-fidelity Hartmann value at `x` and fidelity `z` of 1 … `z_max`.
pub fn mfhartmann(f: SyntheticFunction, x: &[f64], z: f64, z_max: f64, bias: f64) -> f64 {
    let s = z.ln() / z_max.ln();
    let inner = |i: usize| -> f64 {
        match f {
            SyntheticFunction::MfHartmann3 => (0..3)
                .map(|j| A3[i][j] * (x[j] - 1e-4 * P3[i][j]).powi(2))
                .sum(),
            SyntheticFunction::MfHartmann6 => (0..6)
                .map(|j| A6[i][j] * (x[j] - 1e-4 * P6[i][j]).powi(2))
                .sum(),
        }
    };
    -(0..4)
        .map(|i| (ALPHA[i] - bias * (1.0 - s)) * (-inner(i)).exp())
        .sum::<f64>()
}

/// mf-prior-bench's cost of fidelity z: λ(z) = 0.05 + 0.95 (z / Z)², λ(0) = 0.
pub fn fidelity_cost(z: u32, z_max: u32) -> f64 {
    if z == 0 {
        return 0.0;
    }
    0.05 + 0.95 * (f64::from(z) / f64::from(z_max)).powi(2)
}

/// Every task of the generated pool, sorted by (dataset, run).
pub(super) fn all_tasks(g: &Generator) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = g
        .presets
        .iter()
        .flat_map(|p| (0..g.runs).map(move |r| (p.0.clone(), i64::from(r))))
        .collect();
    v.sort();
    v
}

/// The configurations: `configs` points of [0, 1]^d, drawn from the generator's seed, with
/// their JSON (`{"X_0": …}`) and their values.
pub(super) fn configs(g: &Generator) -> (Vec<PoolConfig>, Vec<Vec<f64>>) {
    let mut rng = Rng::new(derive_seed(g.seed, "mfhartmann/configs"));
    let d = g.function.dims();
    let mut out = Vec::with_capacity(g.configs);
    let mut xs = Vec::with_capacity(g.configs);
    for i in 0..g.configs {
        let x: Vec<f64> = (0..d).map(|_| rng.f64()).collect();
        let json: serde_json::Map<String, serde_json::Value> = x
            .iter()
            .enumerate()
            .map(|(j, v)| (format!("X_{j}"), serde_json::json!(v)))
            .collect();
        out.push(PoolConfig {
            id: i as u32,
            learner: 0,
            levels: Vec::new(),
            config: serde_json::Value::Object(json).to_string(),
        });
        xs.push(x);
    }
    (out, xs)
}

/// Task (`dataset`, `run`)'s curves, one per configuration of `xs`, over `units` fidelities.
pub(super) fn task(
    g: &Generator,
    xs: &[Vec<f64>],
    units: u32,
    dataset: &str,
    run: i64,
) -> PoolTask {
    let (_, bias, noise) = g
        .presets
        .iter()
        .find(|p| p.0 == dataset)
        .cloned()
        .expect("a task of the generator's presets");
    let base = derive_seed(g.seed, &format!("mfhartmann/noise/{dataset}/{run}"));
    let z_max = f64::from(units);
    let costs: Vec<f32> = (1..=units)
        .map(|z| (fidelity_cost(z, units) - fidelity_cost(z - 1, units)) as f32)
        .collect();
    let curves = xs
        .iter()
        .enumerate()
        .map(|(c, x)| {
            let truth = mfhartmann(g.function, x, z_max, z_max, 0.0) as f32;
            let score = (1..=units)
                .map(|z| {
                    let zf = f64::from(z);
                    let s = zf.ln() / z_max.ln();
                    let mut rng = Rng::new(base ^ ((c as u64) << 24 | u64::from(z)));
                    let eps = rng.normal().abs();
                    (mfhartmann(g.function, x, zf, z_max, bias) + eps * noise * (1.0 - s)) as f32
                })
                .collect();
            Curve {
                score,
                test_score: vec![truth; units as usize],
                cost_s: costs.clone(),
                status: vec![Status::Ok; units as usize],
                extra: Vec::new(),
            }
        })
        .collect();
    PoolTask {
        dataset: dataset.to_string(),
        run,
        curves,
    }
}

/// The manifest's learners fit the generator: one learner, dimensions X_0 … X_{d−1}, each
/// numeric on [0, 1], linear; one objective, minimised.
pub(super) fn check_manifest(m: &super::PoolManifest, g: &Generator, at: &str) -> Result<()> {
    let d = g.function.dims();
    let ok_dims = m.learners.len() == 1
        && m.learners[0].dims.len() == d
        && m.learners[0].dims.iter().enumerate().all(|(j, dim)| {
            dim.name == format!("X_{j}")
                && matches!(dim.kind, super::DimKind::Numeric(r) if r.low == 0.0 && r.high == 1.0 && !r.log && !r.int)
        });
    if !ok_dims {
        bail!(
            "{at}: a {} pool has one learner with the dimensions X_0 … X_{} (kind = \"numeric\", low = 0, high = 1)",
            g.function.name(),
            d - 1
        );
    }
    if m.direction != crate::trace::manifest::Direction::Minimize || !m.objectives.is_empty() {
        bail!(
            "{at}: a {} pool has one objective, minimised",
            g.function.name()
        );
    }
    if m.units < 2 {
        bail!("{at}: a generated pool needs units >= 2 (fidelities 1 … units)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The noiseless function equals mf-prior-bench 1.10.0's MFHartmann3/6 (its generators run
    /// by `scripts/reference/mfhartmann_golden.py`) at every preset's bias and fidelities 1 … 100,
    /// and the optima are the Hartmann minima.
    #[test]
    fn the_function_equals_mf_prior_benchs() {
        let golden: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/golden/mfhartmann.json")).unwrap();
        let cases = golden["cases"].as_array().unwrap();
        assert!(cases.len() > 300);
        for c in cases {
            let f = match c["dims"].as_u64().unwrap() {
                3 => SyntheticFunction::MfHartmann3,
                _ => SyntheticFunction::MfHartmann6,
            };
            let x: Vec<f64> = c["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let (z, bias) = (c["z"].as_f64().unwrap(), c["bias"].as_f64().unwrap());
            let want = c["value"].as_f64().unwrap();
            let got = mfhartmann(f, &x, z, 100.0, bias);
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{c}: {got} against {want}"
            );
        }
        let opt3 = mfhartmann(
            SyntheticFunction::MfHartmann3,
            &[0.114614, 0.555649, 0.852547],
            100.0,
            100.0,
            0.0,
        );
        assert!((opt3 + 3.86278).abs() < 1e-4, "{opt3}");
    }

    fn generator(presets: &[&str]) -> Generator {
        Generator {
            function: SyntheticFunction::MfHartmann3,
            configs: 200,
            seed: 5,
            runs: 2,
            presets: presets
                .iter()
                .map(|p| {
                    let q = PRESETS.iter().find(|q| q.0 == *p).unwrap();
                    (q.0.to_string(), q.1, q.2)
                })
                .collect(),
        }
    }

    /// The noise is |N(0, 1)| × noise × (1 − ln z / ln Z): over many draws its scaled mean is
    /// E|N(0, 1)| = √(2/π) and its scaled mean square 1; it vanishes at z = Z; the same task
    /// gives the same values, another run other ones; costs add up to λ(u).
    #[test]
    fn the_noise_has_its_distribution_and_the_costs_add_up() {
        let g = generator(&["bad"]);
        let (_, xs) = configs(&g);
        let t = task(&g, &xs, 100, "bad", 0);
        let (mut m1, mut m2, mut n) = (0.0, 0.0, 0.0);
        for (c, x) in xs.iter().enumerate() {
            let curve = &t.curves[c];
            for z in 1..100u32 {
                let s = f64::from(z).ln() / 100f64.ln();
                let clean = mfhartmann(g.function, x, f64::from(z), 100.0, 3.5);
                // The curve holds f32: compare in its precision.
                let e = (f64::from(curve.score[z as usize - 1]) - clean) / (4.0 * (1.0 - s));
                assert!(e > -1e-4, "noise is non-negative: {e}");
                m1 += e;
                m2 += e * e;
                n += 1.0;
            }
            let truth = mfhartmann(g.function, x, 100.0, 100.0, 0.0);
            assert!((f64::from(curve.score[99]) - truth).abs() < 1e-5);
            assert_eq!(curve.test_score[0], truth as f32);
            let total: f64 = curve.cost_s.iter().map(|&c| f64::from(c)).sum();
            assert!((total - 1.0).abs() < 1e-5, "{total}");
            assert!((f64::from(curve.cost_s[0]) - fidelity_cost(1, 100)).abs() < 1e-7);
        }
        let (mean, sq) = (m1 / n, m2 / n);
        // n = 19 800 draws: the mean's standard error is about 0.004.
        assert!(
            (mean - (2.0 / std::f64::consts::PI).sqrt()).abs() < 0.02,
            "{mean}"
        );
        assert!((sq - 1.0).abs() < 0.05, "{sq}");
        assert_eq!(task(&g, &xs, 100, "bad", 0).curves, t.curves);
        assert_ne!(
            task(&g, &xs, 100, "bad", 1).curves[0].score,
            t.curves[0].score
        );
    }
}
