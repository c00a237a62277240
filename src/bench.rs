//! Throughput and memory measurements behind `banditbench bench` (never timed tests).

use std::path::Path;
use std::time::Instant;

use anyhow::Result;

use crate::experiment::{BudgetUnit, Cell, Experiment, WorldOptions, WorldSetup, run_trace_cell};
use crate::policy::default_config;
use crate::replay::{Exhausted, Order, Overhead, WorldKind};
use crate::trace::{LoadOptions, TraceSet, load_trace_set};

/// Peak resident memory of this process so far (VmHWM), in MiB; NaN where /proc is missing.
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

pub struct LoadMeasure {
    pub seconds: f64,
    pub rss_before_mib: f64,
    pub rss_after_mib: f64,
    pub tasks: usize,
    pub evaluations: usize,
}

pub fn measure_load(dir: &Path) -> Result<(TraceSet, LoadMeasure)> {
    let rss_before_mib = peak_rss_mib();
    let t0 = Instant::now();
    let ts = load_trace_set(dir, &LoadOptions::default())?;
    let seconds = t0.elapsed().as_secs_f64();
    let m = LoadMeasure {
        seconds,
        rss_before_mib,
        rss_after_mib: peak_rss_mib(),
        tasks: ts.tasks.len(),
        evaluations: ts.n_evaluations(),
    };
    Ok((ts, m))
}

pub struct Throughput {
    pub world: &'static str,
    pub trajectories: bool,
    pub cells: usize,
    pub pulls: u64,
    pub seconds: f64,
}

impl Throughput {
    pub fn pulls_per_second(&self) -> f64 {
        self.pulls as f64 / self.seconds
    }
}

fn bench_experiment(ts: &TraceSet, world: WorldSetup) -> Result<Experiment> {
    Ok(Experiment {
        file: "bench".into(),
        name: "bench".into(),
        description: String::new(),
        traces_dir: Some(ts.dir.clone()),
        seed: 1,
        repetitions: 1,
        load: LoadOptions::default(),
        world,
        policies: vec![default_config("ucb1")?],
        trajectories: Default::default(),
        source: String::new(),
    })
}

/// UCB1 on one thread: cells over the trace set's tasks, round after round, for at least
/// `min_seconds`. Time-sliced cells run 2 000 slices; pull-count cells 2 000 pulls (resampling
/// exhausted arms).
pub fn measure_ucb1(
    ts: &TraceSet,
    kind: WorldKind,
    trajectories: bool,
    min_seconds: f64,
) -> Result<Throughput> {
    let world = match kind {
        WorldKind::TimeSliced => WorldSetup {
            budgets: vec![2.0],
            unit: BudgetUnit::Task,
            options: WorldOptions::TimeSliced {
                slice: 0.001,
                overhead: Overhead::None,
            },
        },
        WorldKind::PullCount => WorldSetup {
            budgets: vec![2000.0],
            unit: BudgetUnit::Pulls,
            options: WorldOptions::PullCount {
                order: Order::Permute,
                failures_consume_budget: false,
                exhausted: Exhausted::Resample,
            },
        },
        WorldKind::Synthetic | WorldKind::Pool => {
            anyhow::bail!("the {} world is not benchmarked here", kind.as_str())
        }
    };
    let exp = bench_experiment(ts, world)?;
    let t0 = Instant::now();
    let (mut cells, mut pulls) = (0usize, 0u64);
    let mut round = 0u64;
    while t0.elapsed().as_secs_f64() < min_seconds {
        for task in 0..ts.tasks.len() {
            let cell = Cell {
                index: 0,
                task,
                budget: 0,
                policy: 0,
                repetition: 0,
                seed: round * 1_000_003 + task as u64,
            };
            let r = run_trace_cell(&cell, &exp, ts, trajectories)?;
            pulls += r.decisions;
            cells += 1;
        }
        round += 1;
    }
    Ok(Throughput {
        world: kind.as_str(),
        trajectories,
        cells,
        pulls,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

pub struct ReportMeasure {
    pub rows: usize,
    pub units: usize,
    pub policies: usize,
    pub seconds: f64,
    pub rss_before_mib: f64,
    pub rss_after_mib: f64,
}

/// `report --scores` on a generated long table of `units` x `policies` scores (seeded: a load
/// test, not data), written to and reported in `dir`.
pub fn measure_report(units: usize, policies: usize, dir: &Path) -> Result<ReportMeasure> {
    use std::fmt::Write as _;
    let units = units.max(2);
    std::fs::create_dir_all(dir)?;
    let csv = dir.join("generated-scores.csv");
    let mut rng = crate::rng::Rng::new(7);
    let mut text = String::with_capacity(units * policies * 24);
    text.push_str("unit,policy,score\n");
    for u in 0..units {
        let base = 0.6 + 0.3 * rng.f64();
        for p in 0..policies {
            let s = base + 0.003 * p as f64 + 0.02 * rng.normal();
            let _ = writeln!(text, "u{u},policy-{p},{s:.6}");
        }
    }
    std::fs::write(&csv, text)?;
    let rss_before_mib = peak_rss_mib();
    let t0 = Instant::now();
    crate::report::report_scores(
        &csv,
        &Default::default(),
        false,
        &dir.join("report"),
        &crate::report::ReportOptions::default(),
    )?;
    Ok(ReportMeasure {
        rows: units * policies,
        units,
        policies,
        seconds: t0.elapsed().as_secs_f64(),
        rss_before_mib,
        rss_after_mib: peak_rss_mib(),
    })
}

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
    use crate::replay::pool::{PoolWorld, PoolWorldConfig};
    use crate::replay::{World, drive};
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
            drive(
                &mut world,
                p.as_mut(),
                policy,
                &mut crate::rng::Rng::new(seed),
                crate::replay::Overhead::None,
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
struct Timed {
    inner: Box<dyn crate::policy::Policy>,
    lo: usize,
    hi: usize,
    times: Vec<f64>,
}

impl crate::policy::Policy for Timed {
    fn decide(
        &mut self,
        view: &crate::replay::View<'_>,
        rng: &mut crate::rng::Rng,
    ) -> crate::policy::Action {
        self.try_decide(view, rng)
            .unwrap_or(crate::policy::Action::Stop)
    }

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

/// A run through the results store: decisions, seconds, peak RSS and the files' sizes.
pub struct StoreMeasure {
    pub cells: usize,
    pub decisions: u64,
    pub seconds: f64,
    pub cpu_seconds: f64,
    pub peak_rss_mib: f64,
    pub runs_bytes: u64,
    pub trajectories_bytes: u64,
}

/// Run a synthetic experiment of about `decisions` decisions (UCB1 on two Gaussian arms, 10 000
/// pulls per cell) through `run` with its results store, parts, merge and all, in `dir`.
pub fn measure_store(decisions: u64, dir: &Path, threads: Option<usize>) -> Result<StoreMeasure> {
    let per_cell = 10_000u64;
    let reps = decisions.div_ceil(per_cell).max(1);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let file = dir.join("store-bench.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"store-bench\"\nseed = 1\nrepetitions = {reps}\n[world]\nkind = \"synthetic\"\nbudgets = [{per_cell}]\n[[world.arms]]\nname = \"a\"\ndistribution = \"gaussian\"\nmean = 0.5\nsd = 0.1\n[[world.arms]]\nname = \"b\"\ndistribution = \"gaussian\"\nmean = 0.6\nsd = 0.1\n[[policies]]\nfamily = \"ucb1\"\n"
        ),
    )?;
    let (exp, ts) = crate::experiment::prepare(&file)?;
    let out = dir.join("results");
    let opts = crate::experiment::RunOptions {
        out: Some(out.clone()),
        threads,
        ..Default::default()
    };
    let c0 = cpu_seconds();
    let t0 = Instant::now();
    let s = crate::experiment::run_experiment(&exp, &ts, &opts, &crate::experiment::Silent)?;
    let seconds = t0.elapsed().as_secs_f64();
    let cpu_seconds = cpu_seconds() - c0;
    let size = |f: &str| std::fs::metadata(out.join(f)).map_or(0, |m| m.len());
    Ok(StoreMeasure {
        cells: s.ran,
        decisions: reps * per_cell,
        seconds,
        cpu_seconds,
        peak_rss_mib: peak_rss_mib(),
        runs_bytes: size(crate::experiment::RUNS),
        trajectories_bytes: size(crate::experiment::TRAJECTORIES),
    })
}

/// What writing results costs: an experiment's cells replayed with their trajectories kept in
/// memory and dropped (pure simulation), against the same experiment run through the store.
pub struct WriteCost {
    pub cells: usize,
    pub simulation_s: f64,
    pub run_s: f64,
    /// CPU seconds of this process (all threads) in each phase: unlike wall time, not inflated
    /// when other work shares the machine.
    pub simulation_cpu_s: f64,
    pub run_cpu_s: f64,
}

/// CPU time of this process so far (user + system, all threads), from /proc/self/stat (in clock
/// ticks of 1/100 s); NaN where /proc is missing.
pub fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name (which is in parentheses and may hold spaces).
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = f.get(11)?.parse().ok()?;
            let stime: f64 = f.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(f64::NAN)
}

pub fn measure_write_cost(file: &Path, dir: &Path, threads: Option<usize>) -> Result<WriteCost> {
    use rayon::prelude::*;
    let (exp, ts) = crate::experiment::prepare(file)?;
    let cells = ts.expand_cells(&exp);
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let c0 = cpu_seconds();
    let t0 = Instant::now();
    let decisions: u64 = pool
        .install(|| {
            cells
                .par_iter()
                .map(|c| ts.run_cell(c, &exp, true).map(|r| r.decisions))
                .collect::<Result<Vec<_>>>()
        })?
        .iter()
        .sum();
    let simulation_s = t0.elapsed().as_secs_f64();
    let simulation_cpu_s = cpu_seconds() - c0;
    std::hint::black_box(decisions);
    let _ = std::fs::remove_dir_all(dir);
    let opts = crate::experiment::RunOptions {
        out: Some(dir.to_path_buf()),
        threads: Some(threads),
        ..Default::default()
    };
    let c0 = cpu_seconds();
    let t0 = Instant::now();
    crate::experiment::run_experiment(&exp, &ts, &opts, &crate::experiment::Silent)?;
    let run_s = t0.elapsed().as_secs_f64();
    Ok(WriteCost {
        cells: cells.len(),
        simulation_s,
        run_s,
        simulation_cpu_s,
        run_cpu_s: cpu_seconds() - c0,
    })
}

/// One policy's throughput through `measure_protocol`.
pub struct ProtocolTiming {
    pub policy: String,
    pub cells: usize,
    pub decisions: u64,
    pub seconds: f64,
}

impl ProtocolTiming {
    pub fn decisions_per_second(&self) -> f64 {
        self.decisions as f64 / self.seconds.max(1e-12)
    }
}

/// Decisions per second on one thread for built-in policies and the same rules written in Python
/// and run through the policy protocol (`python/examples/`, with `python` as the interpreter):
/// the quickstart's world (time-sliced, budget 0.25 of a task in slices of 0.002, so 125
/// decisions a cell) over the trace set's tasks, for at least `min_seconds` per policy. The
/// Python processes start before the clock does (one cell warms each up).
pub fn measure_protocol(
    ts: &TraceSet,
    python: &str,
    min_seconds: f64,
) -> Result<Vec<ProtocolTiming>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let world = WorldSetup {
        budgets: vec![0.25],
        unit: BudgetUnit::Task,
        options: WorldOptions::TimeSliced {
            slice: 0.002,
            overhead: Overhead::None,
        },
    };
    let external = |name: &str, script: &str| -> Result<crate::policy::PolicyConfig> {
        let t: toml::Table = format!(
            "name = \"{name}\"\ncommand = [{:?}, {:?}]\nenv = {{ PYTHONPATH = {:?} }}",
            python,
            root.join("python/examples")
                .join(script)
                .display()
                .to_string(),
            root.join("python").display().to_string()
        )
        .parse()?;
        Ok(crate::policy::expand_external(&t.into_iter().collect())?.remove(0))
    };
    let policies = vec![
        default_config("round-robin")?,
        external("python-round-robin", "round_robin.py")?,
        default_config("ucb1")?,
        external("python-ucb1", "ucb1.py")?,
    ];
    let mut exp = bench_experiment(ts, world)?;
    exp.policies = policies;
    let mut out = Vec::new();
    for p in 0..exp.policies.len() {
        let cell = |task: usize, round: u64| Cell {
            index: round * ts.tasks.len() as u64 + task as u64,
            task,
            budget: 0,
            policy: p,
            repetition: 0,
            seed: round * 1_000_003 + task as u64,
        };
        run_trace_cell(&cell(0, 0), &exp, ts, false)?;
        let t0 = Instant::now();
        let (mut cells, mut decisions, mut round) = (0usize, 0u64, 1u64);
        while t0.elapsed().as_secs_f64() < min_seconds {
            for task in 0..ts.tasks.len() {
                decisions += run_trace_cell(&cell(task, round), &exp, ts, false)?.decisions;
                cells += 1;
                if t0.elapsed().as_secs_f64() >= min_seconds {
                    break;
                }
            }
            round += 1;
        }
        out.push(ProtocolTiming {
            policy: exp.policies[p].id(),
            cells,
            decisions,
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}
