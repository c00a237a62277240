//! Throughput and memory measurements behind `banditbench bench` (never timed tests).

use std::path::Path;
use std::time::Instant;

use anyhow::Result;

use crate::experiment::{BudgetUnit, Cell, Experiment, WorldOptions, WorldSetup, run_cell};
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
            let r = run_cell(&cell, &exp, ts, trajectories)?;
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
    use crate::replay::pool::{PoolWorld, PoolWorldConfig, drive_pool};
    use crate::trace::pool::{Pool, PoolTask};
    // One learner's configurations as a pool of their own (what a single-learner study replays).
    let keep: Vec<usize> = (0..pool.configs.len())
        .filter(|&i| pool.configs[i].learner == learner)
        .collect();
    let sub = Pool {
        configs: keep.iter().map(|&i| pool.configs[i].clone()).collect(),
        tasks: pool
            .tasks
            .iter()
            .map(|t| PoolTask {
                dataset: t.dataset.clone(),
                run: t.run,
                curves: keep.iter().map(|&i| t.curves[i].clone()).collect(),
            })
            .collect(),
        neighbours: Vec::new(),
        ..pool.clone()
    };
    let sub = Pool {
        neighbours: crate::trace::pool::grid_neighbours(&sub.manifest, &sub.configs),
        ..sub
    };
    let cfg = crate::policy::default_config(policy)?;
    let sign = if sub.manifest.direction == crate::trace::Direction::Maximize {
        1.0
    } else {
        -1.0
    };
    let (mut cells, mut decisions) = (0u64, 0u64);
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < seconds {
        for (ti, task) in sub.tasks.iter().enumerate() {
            let seed = cells.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ti as u64;
            let mut world = PoolWorld::new(
                &sub,
                task,
                PoolWorldConfig::default(),
                budget_units,
                sign,
                seed,
            );
            let mut p = cfg.build(0);
            drive_pool(
                &mut world,
                p.as_mut(),
                policy,
                &mut crate::rng::Rng::new(seed),
                None,
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
        configs: keep.len(),
    })
}
