//! Throughput and memory measurements behind `banditbench bench` (never timed tests).

use std::path::Path;
use std::time::Instant;

use anyhow::Result;

use crate::experiment::{BudgetUnit, Cell, Experiment, WorldOptions, WorldSetup, run_trace_cell};
use crate::policy::default_config;
use crate::replay::{Exhausted, Order, Overhead, WorldKind};
use crate::trace::{LoadOptions, TraceSet, load_trace_set};

mod pool;
pub use pool::*;
mod protocol;
pub use protocol::*;

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
            workers: 1,
            budgets: vec![2.0],
            unit: BudgetUnit::Task,
            options: WorldOptions::TimeSliced {
                slice: 0.001,
                overhead: Overhead::None,
            },
        },
        WorldKind::PullCount => WorldSetup {
            workers: 1,
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
