//! Measurements of configuration-level work: arctan fits, pool policies' decisions and CASH
//! optimisers' time per model decision.

use anyhow::Result;
use std::time::Instant;

pub struct FitTiming {
    pub points: usize,
    pub cold_median_us: f64,
    pub cold_p99_us: f64,
    pub warm_median_us: f64,
    pub warm_p99_us: f64,
}

/// Microseconds per arctan fit on generated noisy curves of `n` points (a speed measure, not
/// data): cold (three starts) and warm (started from the fit of the first n − 1 points).
pub fn measure_fits(sizes: &[usize], repeats: usize) -> Vec<FitTiming> {
    use crate::curve::{fit_arctan, fit_arctan_warm};
    let mut rng = crate::rng::Rng::new(11);
    let q = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * p) as usize]
    };
    sizes
        .iter()
        .map(|&n| {
            let (mut cold, mut warm) = (Vec::new(), Vec::new());
            for _ in 0..repeats {
                let xs: Vec<f64> = (1..=n).map(|i| i as f64 * 240.0 / n as f64).collect();
                let ys: Vec<f64> = xs
                    .iter()
                    .map(|x| 0.25 * (0.03 * x).atan() + 0.6 + 0.005 * rng.normal())
                    .collect();
                let prev = fit_arctan(&xs[..n - 1], &ys[..n - 1]);
                let t0 = Instant::now();
                std::hint::black_box(fit_arctan(&xs, &ys));
                cold.push(t0.elapsed().as_secs_f64() * 1e6);
                let t0 = Instant::now();
                std::hint::black_box(fit_arctan_warm(&xs, &ys, prev.as_ref()));
                warm.push(t0.elapsed().as_secs_f64() * 1e6);
            }
            FitTiming {
                points: n,
                cold_median_us: q(&mut cold, 0.5),
                cold_p99_us: q(&mut cold, 0.99),
                warm_median_us: q(&mut warm, 0.5),
                warm_p99_us: q(&mut warm, 0.99),
            }
        })
        .collect()
}

pub struct PoolTiming {
    pub policy: String,
    pub cells: u64,
    pub decisions: u64,
    pub seconds: f64,
    /// Configurations per learner's part of the pool (the cells replay one learner's grid).
    pub configs: usize,
}

impl PoolTiming {
    pub fn decisions_per_second(&self) -> f64 {
        self.decisions as f64 / self.seconds.max(1e-12)
    }

    pub fn ms_per_cell(&self) -> f64 {
        1e3 * self.seconds / self.cells.max(1) as f64
    }
}

/// Replay `policy` (a pool-world family at its defaults) on one learner's grid of every task of
/// `pool` for about `seconds`, budget `budget_units` units per cell, one thread.
pub fn measure_pool(
    pool: &crate::trace::pool::Pool,
    learner: usize,
    policy: &str,
    budget_units: f64,
    seconds: f64,
) -> Result<PoolTiming> {
    measure_pool_workers(pool, learner, policy, budget_units, seconds, 1)
}

/// As [`measure_pool`], with `workers` simulated workers per cell.
pub fn measure_pool_workers(
    pool: &crate::trace::pool::Pool,
    learner: usize,
    policy: &str,
    budget_units: f64,
    seconds: f64,
    workers: usize,
) -> Result<PoolTiming> {
    use crate::replay::pool::{PoolWorld, PoolWorldConfig};
    use crate::replay::{World, drive_workers};
    // One learner's configurations, as a `per_learner = true` experiment replays them: the world
    // on the whole pool, restricted to the learner (its recorded default, if any, stays out of the
    // draws, as in every pool cell). Its grid configurations are what the cells draw from.
    if learner >= pool.manifest.learners.len() {
        anyhow::bail!(
            "{}: learner {learner} does not exist (the pool has {})",
            pool.dir.display(),
            pool.manifest.learners.len()
        );
    }
    let configs = (0..pool.configs.len())
        .filter(|&i| pool.configs[i].learner == learner && pool.defaults[learner] != Some(i as u32))
        .count();
    let cfg = crate::policy::default_config(policy)?;
    let sign = pool.manifest.direction.sign();
    let (mut cells, mut decisions) = (0u64, 0u64);
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < seconds {
        for (ti, task) in pool.tasks.iter().enumerate() {
            let seed = cells.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ti as u64;
            let mut world = PoolWorld::new(
                pool,
                task,
                PoolWorldConfig::default(),
                budget_units,
                sign,
                seed,
            );
            world.restrict_to_learners(&[learner]);
            let mut p = cfg.build(0);
            drive_workers(
                &mut world,
                p.as_mut(),
                policy,
                &mut crate::rng::Rng::new(seed),
                crate::replay::Overhead::None,
                workers,
                &mut [],
            )?;
            decisions += world.ledger().decisions;
            cells += 1;
        }
    }
    Ok(PoolTiming {
        policy: policy.to_string(),
        cells,
        decisions,
        seconds: t0.elapsed().as_secs_f64(),
        configs,
    })
}

/// Time per model decision of a CASH optimiser on a joint pool.
pub struct CashTiming {
    pub policy: String,
    pub candidates: usize,
    /// Model decisions timed (those taken with `at - 5 ..= at + 5` evaluations done).
    pub decisions: usize,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub max_ms: f64,
}

/// Times a policy's decisions that choose a configuration (`Action::Choose`) while the cell has
/// `lo..=hi` arms.
pub(super) struct Timed {
    inner: Box<dyn crate::policy::Policy>,
    lo: usize,
    hi: usize,
    times: Vec<f64>,
}

impl crate::policy::Policy for Timed {
    fn try_decide(
        &mut self,
        view: &crate::replay::View<'_>,
        rng: &mut crate::rng::Rng,
    ) -> Result<crate::policy::Action> {
        let t0 = Instant::now();
        let a = self.inner.try_decide(view, rng)?;
        let dt = t0.elapsed().as_secs_f64();
        if (self.lo..=self.hi).contains(&view.n_arms)
            && matches!(a, crate::policy::Action::Choose(_))
        {
            self.times.push(dt);
        }
        Ok(a)
    }

    fn observe(&mut self, obs: &crate::replay::Observation<'_>) {
        self.inner.observe(obs);
    }
}

/// Replay `family` with the parameters `given` (TOML text values) on every task of the joint
/// pool `pool` (one-unit curves) to `at + 5` evaluations, one thread, and time its model
/// decisions taken with `at ± 5` evaluations done, until about `seconds` have passed.
pub fn measure_cash(
    pool: &crate::trace::pool::Pool,
    family: &str,
    given: &[(&str, &str)],
    at: usize,
    seconds: f64,
) -> Result<CashTiming> {
    use crate::replay::drive;
    use crate::replay::pool::{PoolWorld, PoolWorldConfig};
    let map: std::collections::BTreeMap<String, toml::Value> = given
        .iter()
        .map(|&(k, v)| (k.to_string(), toml::Value::String(v.to_string())))
        .collect();
    let cfg = crate::policy::expand(family, &map)?.remove(0);
    let policy = &cfg.id();
    let sign = pool.manifest.direction.sign();
    let mut times = Vec::new();
    let mut candidates = 0;
    let t0 = Instant::now();
    let mut rep = 0u64;
    while t0.elapsed().as_secs_f64() < seconds || times.is_empty() {
        for (ti, task) in pool.tasks.iter().enumerate() {
            let seed = rep.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ti as u64;
            let mut world = PoolWorld::new(
                pool,
                task,
                PoolWorldConfig::default(),
                (at + 5) as f64 * f64::from(pool.manifest.units),
                sign,
                seed,
            );
            candidates = candidates.max(task.curves.iter().filter(|c| !c.is_empty()).count());
            let mut p = Timed {
                inner: cfg.build(0),
                lo: at.saturating_sub(5),
                hi: at + 5,
                times: Vec::new(),
            };
            drive(
                &mut world,
                &mut p,
                policy,
                &mut crate::rng::Rng::new(seed),
                crate::replay::Overhead::None,
                &mut [],
            )?;
            times.extend(p.times);
        }
        rep += 1;
        if times.is_empty() {
            anyhow::bail!(
                "{policy}: no model decision at {at} ± 5 observations on any task (the first configurations are drawn at random, e.g. TPE's n_startup = 20); time it at more observations"
            );
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(CashTiming {
        policy: policy.clone(),
        candidates,
        decisions: times.len(),
        mean_ms: 1e3 * times.iter().sum::<f64>() / times.len().max(1) as f64,
        median_ms: 1e3 * times.get(times.len() / 2).copied().unwrap_or(f64::NAN),
        max_ms: 1e3 * times.last().copied().unwrap_or(f64::NAN),
    })
}

/// Random search at full fidelity through `run` (replay, results store and all, one thread):
/// what one configuration costs with each `work` of `random-search`.
pub struct ConfigurationCost {
    pub work: &'static str,
    pub configurations: u64,
    pub steps: u64,
    pub cpu_seconds: f64,
}

impl ConfigurationCost {
    pub fn us_per_configuration(&self) -> f64 {
        self.cpu_seconds / self.configurations.max(1) as f64 * 1e6
    }
}

/// The MLP grid of `phoneme`/run 0 of `pool_dir` (sklearn-grid): random search draws every
/// configuration and trains it to the full curve, `repetitions` cells, every step written to
/// trajectories.parquet; once with `work = "unit"`, once with `work = "configuration"`. Also
/// writes `table.csv` (each configuration's score and summed cost at the last unit, the work a
/// full-fidelity peer replays) into `dir`; returns it with the measurements.
pub fn measure_configurations(
    pool_dir: &std::path::Path,
    dir: &std::path::Path,
    repetitions: u32,
) -> Result<(Vec<ConfigurationCost>, std::path::PathBuf)> {
    use anyhow::Context as _;
    let pool_dir = std::fs::canonicalize(pool_dir)
        .with_context(|| format!("{}: no such pool", pool_dir.display()))?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let pool = crate::trace::pool::load_pool_selecting(
        &pool_dir,
        false,
        Some(&|tasks: &[(String, i64)]| {
            tasks
                .iter()
                .filter(|(d, r)| d == "phoneme" && *r == 0)
                .cloned()
                .collect()
        }),
    )?;
    let mlp = pool
        .manifest
        .learners
        .iter()
        .position(|l| l.name == "mlp")
        .context("the pool has no learner mlp (use sklearn-grid)")?;
    let task = pool
        .tasks
        .first()
        .context("the pool has no task phoneme/0")?;
    let mut table = String::from("score,cost_s\n");
    let mut n = 0u64;
    for (c, conf) in pool.configs.iter().enumerate() {
        let curve = &task.curves[c];
        if conf.learner != mlp || curve.is_empty() {
            continue;
        }
        let last = curve.len() - 1;
        let cost: f64 = curve.cost_s.iter().map(|&x| f64::from(x)).sum();
        table.push_str(&format!("{},{cost}\n", curve.score[last]));
        n += 1;
    }
    let table_path = dir.join("table.csv");
    std::fs::write(&table_path, table)?;
    let units = n * u64::from(pool.manifest.units);
    let mut out = Vec::new();
    for work in ["unit", "configuration"] {
        let file = dir.join(format!("{work}.toml"));
        std::fs::write(
            &file,
            format!(
                "name = \"whole-{work}\"\ntraces = {:?}\nseed = 1\nrepetitions = {repetitions}\ntrajectories = \"every-decision\"\n[tasks]\ndatasets = [\"phoneme\"]\nruns = [0]\nlearners = [\"mlp\"]\n[world]\nkind = \"pool\"\nper_learner = true\nbudget_unit = \"units\"\nbudgets = [{units}]\n[[policies]]\nfamily = \"random-search\"\nwork = \"{work}\"\n",
                pool_dir.display().to_string()
            ),
        )?;
        let (exp, data) = crate::experiment::prepare(&file)?;
        let results = dir.join(work);
        let opts = crate::experiment::RunOptions {
            out: Some(results.clone()),
            threads: Some(1),
            ..Default::default()
        };
        let c0 = super::cpu_seconds();
        crate::experiment::run_experiment(&exp, &data, &opts, &crate::experiment::Silent)?;
        let cpu_seconds = super::cpu_seconds() - c0;
        let runs = crate::results::read_parquet(&results.join("runs.parquet"))?;
        let configurations: u64 = runs
            .column("configs_drawn")?
            .cast(&polars::prelude::DataType::UInt64)?
            .u64()?
            .into_no_null_iter()
            .sum();
        let steps = crate::results::read_parquet(&results.join("trajectories.parquet"))?.height();
        out.push(ConfigurationCost {
            work,
            configurations,
            steps: steps as u64,
            cpu_seconds,
        });
    }
    Ok((out, table_path))
}

/// mfhpo-simulator's in-process CPU seconds for `evaluations` full-fidelity random-search
/// evaluations of `table` on one worker, from `scripts/reference/mfhpo_timing.py` run by
/// `python` (mfhpo-simulator 1.4.6, scripts/reference/requirements-mfhpo.txt).
pub fn mfhpo_cpu_seconds(python: &str, table: &std::path::Path, evaluations: u64) -> Result<f64> {
    let n = evaluations.to_string();
    super::peer_cpu_seconds(
        python,
        "mfhpo_timing.py",
        &[table.as_os_str(), std::ffi::OsStr::new(&n)],
        "mfhpo_cpu_s",
        "--mfhpo-python",
        "mfhpo-simulator 1.4.6 (pip install -r scripts/reference/requirements-mfhpo.txt)",
    )
}
