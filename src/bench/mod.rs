//! Throughput and memory measurements behind `banditbench bench` (never timed tests).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;

use crate::experiment::{BudgetUnit, Cell, Experiment, Source, WorldOptions, WorldSetup, run_cell};
use crate::policy::default_config;
use crate::replay::{Exhausted, Order, Overhead, WorldKind};
use crate::trace::{LoadOptions, TraceSet, load_trace_set};

pub mod freeze_thaw;
pub mod pareto;
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
            objectives: None,
            workers: 1,
            budgets: vec![2.0],
            unit: BudgetUnit::Task,
            options: WorldOptions::TimeSliced {
                slice: 0.001,
                overhead: Overhead::None,
            },
        },
        WorldKind::PullCount => WorldSetup {
            objectives: None,
            workers: 1,
            budgets: vec![2000.0],
            unit: BudgetUnit::Pulls,
            options: WorldOptions::PullCount {
                order: Order::Permute,
                failures_consume_budget: false,
                exhausted: Exhausted::Resample,
            },
        },
        // UCB1's throughput is measured in the two learner-level worlds over trace sets; the
        // pool world has its own section (`bench --only pool`).
        _ => {
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
            let r = run_cell(&cell, &exp, Source::Traces(ts, None), trajectories)?;
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
    /// CPU seconds of the whole `report` (reading, analysis, tables, figures, documents).
    pub cpu_seconds: f64,
    /// CPU seconds of the analysis alone on the table already read (ranks, Friedman,
    /// Iman–Davenport, Nemenyi's critical difference, and the pairwise tests of the default
    /// `--pairs auto` family): what autorank's `autorank()` call does.
    pub analysis_cpu_seconds: f64,
    pub rss_before_mib: f64,
    pub rss_after_mib: f64,
    /// The leaderboard alone, forced on whatever the number of policies: CPU seconds of its
    /// point ratings (Elo, Bradley–Terry, win rates), and of each bootstrap resample beyond
    /// (measured on `LEADERBOARD_PROBE` resamples: one lane of eight Elo chains). NaN beyond
    /// `LEADERBOARD_PROBE_POLICIES` policies.
    pub leaderboard_point_cpu_seconds: f64,
    pub leaderboard_resample_cpu_seconds: f64,
    /// The generated table (for a peer to read).
    pub csv: std::path::PathBuf,
}

/// CPU time of this process (all threads) in seconds, to the nanosecond clock's resolution.
pub fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// `report --scores` on a generated long table of `units` x `policies` scores (seeded: a load
/// test, not data), written to and reported in `dir`.
/// Bootstrap resamples the report measurement times the leaderboard on, to price one.
pub const LEADERBOARD_PROBE: usize = 8;

/// The most policies the leaderboard is priced at (its matches grow as k²).
pub const LEADERBOARD_PROBE_POLICIES: usize = 400;

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
    // The analysis alone, on the table read outside the timing (as the peer pivots its table
    // before timing autorank).
    let opts = crate::report::ReportOptions::default();
    let (rows, _) = crate::report::read_scores(&csv, &Default::default())?;
    let (table, _) =
        crate::analysis::compare::ScoreTable::from_rows(&rows, true, opts.stats.missing, false)?;
    let c0 = process_cpu_seconds();
    std::hint::black_box(crate::analysis::compare::compare(table, &opts.stats));
    let analysis_cpu_seconds = process_cpu_seconds() - c0;
    let (table, _) =
        crate::analysis::compare::ScoreTable::from_rows(&rows, true, opts.stats.missing, false)?;
    let lb = |samples| {
        let c0 = process_cpu_seconds();
        std::hint::black_box(crate::analysis::leaderboard::leaderboard(
            &table,
            &crate::analysis::leaderboard::LeaderboardOptions {
                samples,
                ..Default::default()
            },
        ));
        process_cpu_seconds() - c0
    };
    // Elo's matches grow as k² per unit and resample (eight resamples take about 7 s at 1 000
    // policies), so the probe stops at LEADERBOARD_PROBE_POLICIES.
    let (leaderboard_point_cpu_seconds, leaderboard_resample_cpu_seconds) =
        if policies <= LEADERBOARD_PROBE_POLICIES {
            let point = lb(0);
            let each = (lb(LEADERBOARD_PROBE) - point).max(0.0) / LEADERBOARD_PROBE as f64;
            (point, each)
        } else {
            (f64::NAN, f64::NAN)
        };
    let rss_before_mib = peak_rss_mib();
    let c0 = process_cpu_seconds();
    let t0 = Instant::now();
    crate::report::report_scores(&csv, &Default::default(), false, &dir.join("report"), &opts)?;
    Ok(ReportMeasure {
        rows: units * policies,
        units,
        policies,
        seconds: t0.elapsed().as_secs_f64(),
        cpu_seconds: process_cpu_seconds() - c0,
        analysis_cpu_seconds,
        rss_before_mib,
        rss_after_mib: peak_rss_mib(),
        leaderboard_point_cpu_seconds,
        leaderboard_resample_cpu_seconds,
        csv,
    })
}

/// A peer's CPU seconds, from a timing script under `scripts/reference/` run by `python` with
/// `args`: the script prints `KEY=SECONDS`. `flag` is the bench option that named `python`, and
/// `needs` what it must have installed (said when the script fails).
pub(crate) fn peer_cpu_seconds(
    python: &str,
    script: &str,
    args: &[&std::ffi::OsStr],
    key: &str,
    flag: &str,
    needs: &str,
) -> Result<f64> {
    use anyhow::Context as _;
    let text = peer_output(python, script, args, flag, needs)?;
    let prefix = format!("{key}=");
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(prefix.as_str()))
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("scripts/reference/{script}: no {prefix} in its output: {text}"))
}

/// A timing script's standard output (`scripts/reference/SCRIPT` run by `python` with `args`),
/// its error named as `peer_cpu_seconds` names it.
pub(crate) fn peer_output(
    python: &str,
    script: &str,
    args: &[&std::ffi::OsStr],
    flag: &str,
    needs: &str,
) -> Result<String> {
    use anyhow::Context as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/reference")
        .join(script);
    let out = std::process::Command::new(python)
        .arg(&script)
        .args(args)
        .output()
        .with_context(|| format!("{flag} {python}: cannot start it"))?;
    if !out.status.success() {
        anyhow::bail!(
            "{}: failed under {python} (is {needs} installed?): {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One method's line of `scripts/reference/adapters_timing.py`.
pub enum AdapterTiming {
    /// Its library is not installed in the Python given.
    Skipped(String),
    /// CPU microseconds per decision: in the library's calls, in the adapter's bookkeeping, and
    /// in the engine and the route between Rust and Python.
    Measured {
        method: String,
        decisions: u64,
        library_us: f64,
        adapter_us: f64,
        engine_us: f64,
    },
}

/// banditbench's share of each library optimizer's decision: `scripts/reference/
/// adapters_timing.py` run by `python` on one task of `pool`, cells of `trainings` full trainings.
/// Each method's row goes to `row` as the script prints it (a method takes up to minutes).
pub fn measure_adapters(
    python: &str,
    pool: &Path,
    trainings: usize,
    mut row: impl FnMut(AdapterTiming),
) -> Result<()> {
    use anyhow::Context as _;
    use std::io::BufRead as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference/adapters_timing.py");
    let mut child = std::process::Command::new(python)
        .arg(&script)
        .arg("--pool")
        .arg(pool)
        .arg("--trainings")
        .arg(trainings.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("--adapters-python {python}: cannot start it"))?;
    // The libraries' warnings go to stderr: read it on a thread of its own, so that a full pipe
    // never stalls the script.
    let mut err = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
        text
    });
    let mut rows = 0;
    let mut text = String::new();
    for line in std::io::BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.with_context(|| format!("{}: reading its output", script.display()))?;
        text.push_str(&line);
        text.push('\n');
        if !line.starts_with("method=") {
            continue;
        }
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{key}=")).map(str::to_string))
        };
        let method = field("method").unwrap_or_default();
        rows += 1;
        if field("skipped").is_some() {
            row(AdapterTiming::Skipped(method));
            continue;
        }
        let num = |key: &str| -> Result<f64> {
            field(key)
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("{}: no {key}= in the line {line:?}", script.display()))
        };
        row(AdapterTiming::Measured {
            method,
            decisions: num("decisions")? as u64,
            library_us: num("library_us")?,
            adapter_us: num("adapter_us")?,
            engine_us: num("engine_us")?,
        });
    }
    let status = child.wait()?;
    let errors = errors.join().unwrap_or_default();
    if !status.success() {
        anyhow::bail!(
            "{}: failed under {python} (are the wheel and the adapters' libraries installed? pip install -r python/requirements-optuna.txt ...): {}",
            script.display(),
            errors.trim()
        );
    }
    if rows == 0 {
        anyhow::bail!(
            "{}: no method= line in its output: {text}",
            script.display()
        );
    }
    Ok(())
}

/// Random-search trials replayed through the Optuna adapter and through OptunaHub's
/// `AsyncOptBenchmarkSimulator` (`scripts/reference/optunahub_async_check.py --speed`).
#[derive(Debug, Clone, PartialEq)]
pub struct OptunahubSpeed {
    pub trials: u64,
    pub adapter_trials: u64,
    pub simulator_trials: u64,
    /// CPU seconds of `bb.run` (the engine, the adapter, Optuna, the pool's load).
    pub adapter_cpu_s: f64,
    /// CPU seconds of the simulator's `optimize` (Optuna, the simulator, the table's lookups).
    pub simulator_cpu_s: f64,
    /// Of each, the CPU seconds inside Optuna's `Study.ask`, `Study.tell` and `Trial._suggest`.
    pub adapter_optuna_cpu_s: f64,
    pub simulator_optuna_cpu_s: f64,
}

impl OptunahubSpeed {
    /// The script's `speed key=value ...` line.
    pub fn parse(line: &str) -> Option<OptunahubSpeed> {
        let rest = line.strip_prefix("speed ")?;
        let field = |key: &str| -> Option<f64> {
            rest.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
        };
        Some(OptunahubSpeed {
            trials: field("trials")? as u64,
            adapter_trials: field("adapter_trials")? as u64,
            simulator_trials: field("simulator_trials")? as u64,
            adapter_cpu_s: field("adapter_cpu_s")?,
            simulator_cpu_s: field("simulator_cpu_s")?,
            adapter_optuna_cpu_s: field("adapter_optuna_cpu_s")?,
            simulator_optuna_cpu_s: field("simulator_optuna_cpu_s")?,
        })
    }
}

/// `scripts/reference/optunahub_async_check.py --speed trials` under `python` (the wheel and
/// Optuna installed) with OptunaHub's simulator module `simulator`.
pub fn measure_optunahub_speed(
    python: &str,
    simulator: &Path,
    trials: usize,
) -> Result<OptunahubSpeed> {
    use anyhow::Context as _;
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference/optunahub_async_check.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg("--simulator")
        .arg(simulator)
        .arg("--speed")
        .arg(trials.to_string())
        .output()
        .with_context(|| format!("--adapters-python {python}: cannot start it"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        anyhow::bail!(
            "{} --simulator {}: failed under {python}: {}",
            script.display(),
            simulator.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    text.lines()
        .find_map(OptunahubSpeed::parse)
        .with_context(|| format!("{}: no speed line in its output: {text}", script.display()))
}

/// One experiment run four ways (`scripts/reference/dask_makespan.py`).
pub struct DaskMakespan {
    pub cells: u64,
    pub processes: usize,
    /// CPU seconds of the one-thread run: the grid's work.
    pub cpu_s: f64,
    /// Wall seconds of `run --threads P`.
    pub local_s: f64,
    /// Wall seconds until the last of P static shards ended, and their merge.
    pub shards_s: f64,
    /// Wall seconds of `banditbench.run(client=...)` on a P-process LocalCluster.
    pub dask_s: f64,
    /// Whether the Dask folder equals the one-thread run's (`program` aside).
    pub identical: bool,
}

/// The experiments `bench --only dask` measures by default, written into `scratch`:
/// shang-sklearn-grid (D-TTTS cells cost about 40 random-search cells) and the same grid's TTTS
/// cells alone at 20 repetitions (even cells).
pub fn dask_default_experiments(scratch: &Path) -> Result<Vec<PathBuf>> {
    use anyhow::Context as _;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("experiments/shang-sklearn-grid.toml"))
        .context("experiments/shang-sklearn-grid.toml")?
        .replace("\"../traces/", &format!("\"{}/traces/", root.display()));
    std::fs::create_dir_all(scratch)?;
    let uneven = scratch.join("shang-sklearn-grid.toml");
    std::fs::write(&uneven, &text)?;
    let head = &text[..text.find("[[policies]]").unwrap_or(text.len())];
    let even = scratch.join("even-ttts.toml");
    std::fs::write(
        &even,
        head.replace("name = \"shang-sklearn-grid\"", "name = \"even-ttts\"")
            .replace("repetitions = 5", "repetitions = 20")
            + "[[policies]]\nfamily = \"ttts\"\n",
    )?;
    Ok(vec![uneven, even])
}

/// This program, when it is the `banditbench` binary (not a Python running the wheel's command,
/// whose script then runs the wheel's own).
fn this_binary() -> Option<std::ffi::OsString> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_string_lossy().into_owned();
    (!name.starts_with("python")).then(|| exe.into_os_string())
}

/// Run `scripts/reference/dask_makespan.py` in `python` on `exp` with `processes` processes.
pub fn measure_dask(
    python: &str,
    exp: &Path,
    processes: usize,
    scratch: &Path,
) -> Result<DaskMakespan> {
    use anyhow::Context as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference/dask_makespan.py");
    let dir = scratch.join(format!(
        "dask-{}",
        exp.file_stem().unwrap_or_default().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg("--experiment")
        .arg(exp)
        .args(["--processes", &processes.to_string()])
        .args(
            this_binary()
                .map(|b| vec!["--binary".into(), b])
                .unwrap_or_default(),
        )
        .arg("--scratch")
        .arg(&dir)
        .output()
        .with_context(|| format!("--dask-python {python}: cannot start it"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        anyhow::bail!(
            "{}: failed under {python} (are the wheel and dask.distributed installed? pip install -r python/requirements-dask.txt): {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let field = |key: &str| -> Result<String> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")).map(str::to_string))
            .with_context(|| format!("{}: no {key}= in its output: {text}", script.display()))
    };
    let num = |key: &str| -> Result<f64> {
        field(key)?
            .parse()
            .with_context(|| format!("{}: {key}= is not a number", script.display()))
    };
    Ok(DaskMakespan {
        cells: num("cells")? as u64,
        processes,
        cpu_s: num("cpu_s")?,
        local_s: num("local_s")?,
        shards_s: num("shards_s")?,
        dask_s: num("dask_s")?,
        identical: field("identical")? == "true",
    })
}

/// autorank's in-process CPU seconds on the scores table `csv`, from
/// `scripts/reference/autorank_timing.py` run by `python` (median of 3 calls).
pub fn autorank_cpu_seconds(python: &str, csv: &Path) -> Result<f64> {
    peer_cpu_seconds(
        python,
        "autorank_timing.py",
        &[csv.as_os_str()],
        "autorank_cpu_s",
        "--autorank-python",
        "autorank 1.3.0 (pip install -r scripts/reference/requirements-autorank.txt)",
    )
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
/// pulls per cell) through `run` with its results store, parts, merge and all, in `dir`,
/// writing the decisions `trajectories` names (`every-decision` or `none`).
pub fn measure_store(
    decisions: u64,
    trajectories: &str,
    dir: &Path,
    threads: Option<usize>,
) -> Result<StoreMeasure> {
    let per_cell = 10_000u64;
    let reps = decisions.div_ceil(per_cell).max(1);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let file = dir.join("store-bench.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"store-bench\"\nseed = 1\nrepetitions = {reps}\ntrajectories = \"{trajectories}\"\n[world]\nkind = \"synthetic\"\nbudgets = [{per_cell}]\n[[world.arms]]\nname = \"a\"\ndistribution = \"gaussian\"\nmean = 0.5\nsd = 0.1\n[[world.arms]]\nname = \"b\"\ndistribution = \"gaussian\"\nmean = 0.6\nsd = 0.1\n[[policies]]\nfamily = \"ucb1\"\n"
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

/// Peak memory of one `banditbench run` process.
pub struct MemoryPoint {
    pub repetitions: u32,
    pub cells: usize,
    pub peak_rss_mib: f64,
    pub seconds: f64,
}

/// Run `file` with each number of `repetitions` (its other keys unchanged), each in a fresh
/// `banditbench run` process writing to a folder under `dir`, and measure each process's peak
/// resident memory (the kernel's `ru_maxrss` of that child alone, from `wait4`).
pub fn measure_memory(
    file: &Path,
    repetitions: &[u32],
    dir: &Path,
    threads: Option<usize>,
) -> Result<Vec<MemoryPoint>> {
    use anyhow::Context;
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("{}: cannot read the experiment file", file.display()))?;
    let table: toml::Table = toml::from_str(&text)
        .with_context(|| format!("{}: not a valid experiment file", file.display()))?;
    let base = file.parent().unwrap_or(Path::new("."));
    let (exp, ts) = crate::experiment::prepare(file)?;
    let per_repetition = ts.expand_cells(&exp).len() / exp.repetitions.max(1) as usize;
    drop(ts);
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let mut points = Vec::new();
    for &r in repetitions {
        let mut t = table.clone();
        t.insert("name".into(), format!("memory-bench-{r}").into());
        t.insert("repetitions".into(), i64::from(r).into());
        if let Some(toml::Value::String(traces)) = t.get("traces") {
            let abs = std::path::absolute(base.join(traces))?;
            t.insert("traces".into(), abs.display().to_string().into());
        }
        let variant = dir.join(format!("memory-bench-{r}.toml"));
        std::fs::write(&variant, toml::to_string(&t)?)?;
        let out = dir.join(format!("results-{r}"));
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("run")
            .arg(&variant)
            .arg("--out")
            .arg(&out)
            .arg("--quiet")
            .stdout(std::process::Stdio::null());
        if let Some(n) = threads {
            cmd.arg("--threads").arg(n.to_string());
        }
        let (peak_rss_mib, seconds) = measured(cmd)?;
        let _ = std::fs::remove_dir_all(&out);
        points.push(MemoryPoint {
            repetitions: r,
            cells: per_repetition * r as usize,
            peak_rss_mib,
            seconds,
        });
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(points)
}

/// Run `cmd` (a banditbench command) to its end: its peak resident memory in MiB and its wall
/// seconds. Its messages are read while it runs (the pipe must not fill up and stall it) and
/// shown only if it fails.
fn measured(mut cmd: std::process::Command) -> Result<(f64, f64)> {
    use anyhow::{Context, bail};
    let t0 = Instant::now();
    let mut child = cmd
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    let mut stderr = child.stderr.take().context("no stderr pipe")?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let (status, maxrss_kib) = wait_with_rusage(child.id())?;
    let seconds = t0.elapsed().as_secs_f64();
    let messages = reader.join().unwrap_or_default();
    if status != 0 {
        bail!("{cmd:?} exited with status {status}:\n{messages}");
    }
    Ok((maxrss_kib as f64 / 1024.0, seconds))
}

/// Wait for child `pid` and return its exit status (128 + signal if killed) and its own peak
/// resident memory in KiB (`ru_maxrss`; unlike `getrusage(RUSAGE_CHILDREN)`, not a maximum over
/// every child waited for so far).
fn wait_with_rusage(pid: u32) -> Result<(i32, i64)> {
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data that wait4 fills; `pid` is our own child, not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    if r < 0 {
        return Err(anyhow::Error::from(std::io::Error::last_os_error()).context("wait4 failed"));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Ok((code, usage.ru_maxrss))
}

/// Peak memory of `import blackbox` against the size of the evaluations it reads.
pub struct ImportMemory {
    /// Bytes of `objectives_evaluations.npy` in the large blackbox.
    pub input_bytes: u64,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Peak RSS of the import of the large blackbox, MiB.
    pub peak_rss_mib: f64,
    /// Peak RSS of the import of the blackbox as given (the process's fixed cost), MiB.
    pub baseline_rss_mib: f64,
    /// Wall seconds of the large import.
    pub seconds: f64,
}

/// Import the blackbox at `fixture`, and the same blackbox with its evaluations repeated
/// `copies` times along the seed axis (its recorded values, repeated to reach a size where
/// memory shows: a measurement input, never a data set), each in a fresh `banditbench import
/// blackbox` process, measuring each process's peak resident memory.
pub fn measure_blackbox_import(
    fixture: &Path,
    copies: usize,
    args: &[&str],
    dir: &Path,
) -> Result<ImportMemory> {
    use anyhow::{Context, bail};
    use npyz::WriterBuilder;
    let _ = std::fs::remove_dir_all(dir);
    let big = dir.join("blackbox");
    std::fs::create_dir_all(&big)?;
    for e in std::fs::read_dir(fixture)
        .with_context(|| format!("{}: cannot read the blackbox", fixture.display()))?
    {
        let e = e?;
        if e.file_name() != "objectives_evaluations.npy" {
            std::fs::copy(e.path(), big.join(e.file_name()))?;
        }
    }
    let ev = fixture.join("objectives_evaluations.npy");
    let npy = npyz::NpyFile::new(std::io::BufReader::new(
        std::fs::File::open(&ev).with_context(|| format!("{}: cannot open", ev.display()))?,
    ))
    .with_context(|| format!("{}: not a .npy file", ev.display()))?;
    let shape = npy.shape().to_vec();
    let [t, c, s, f, o] = shape[..] else {
        bail!("{}: shape {shape:?} is not a blackbox's", ev.display());
    };
    let values: Vec<f32> = npy
        .into_vec()
        .with_context(|| format!("{}: not float32 values", ev.display()))?;
    let new_shape = vec![t, c, s * copies as u64, f, o];
    let out_path = big.join("objectives_evaluations.npy");
    let mut w = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(&new_shape)
        .writer(std::io::BufWriter::new(std::fs::File::create(&out_path)?))
        .begin_nd()?;
    let block = (s * f * o) as usize;
    for tc in 0..(t * c) as usize {
        let seeds = &values[tc * block..(tc + 1) * block];
        for _ in 0..copies {
            w.extend(seeds.iter().copied())?;
        }
    }
    w.finish()?;
    let input_bytes = std::fs::metadata(&out_path)?.len();
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let import = |from: &Path, out: &Path| -> Result<(f64, f64)> {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["import", "blackbox"])
            .arg(from)
            .arg("--out")
            .arg(out)
            .args(args)
            .stdout(std::process::Stdio::null());
        measured(cmd)
    };
    let (baseline_rss_mib, _) = import(fixture, &dir.join("pool-small"))?;
    let (peak_rss_mib, seconds) = import(&big, &dir.join("pool-large"))?;
    let _ = std::fs::remove_dir_all(dir);
    Ok(ImportMemory {
        input_bytes,
        shape: new_shape,
        peak_rss_mib,
        baseline_rss_mib,
        seconds,
    })
}

/// `import syne-tune`'s reader in-process: CPU seconds to read every experiment folder under
/// `dir` into runs, the median of three reads, and the folders and result rows read.
pub struct SyneTuneRead {
    pub folders: usize,
    pub rows: usize,
    pub cpu_seconds: f64,
}

/// Copy the recorded Syne Tune experiment folders under `fixture` (results.csv.zip and
/// metadata.json as Syne Tune 0.16 wrote them) `copies` times into `dir`, each copy's seed made
/// unique, and time banditbench's reader on them all (the files are real; only their number is
/// multiplied, for a speed measure).
pub fn measure_syne_tune_read(fixture: &Path, copies: usize, dir: &Path) -> Result<SyneTuneRead> {
    use anyhow::Context as _;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let mut originals: Vec<std::path::PathBuf> = std::fs::read_dir(fixture)
        .with_context(|| format!("{}: cannot list", fixture.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("metadata.json").is_file())
        .collect();
    originals.sort();
    if originals.is_empty() {
        anyhow::bail!("{}: no Syne Tune experiment folders", fixture.display());
    }
    let mut folders = 0;
    for c in 0..copies {
        for o in &originals {
            let name = o.file_name().unwrap_or_default().to_string_lossy();
            let to = dir.join(format!("{name}-copy{c}"));
            std::fs::create_dir_all(&to)?;
            std::fs::copy(o.join("results.csv.zip"), to.join("results.csv.zip"))?;
            let text = std::fs::read_to_string(o.join("metadata.json"))?;
            let mut meta: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not JSON", o.join("metadata.json").display()))?;
            let seed = meta["seed"].as_i64().unwrap_or(0);
            meta["seed"] = serde_json::Value::from(seed + 1000 * c as i64);
            std::fs::write(to.join("metadata.json"), meta.to_string())?;
            folders += 1;
        }
    }
    let opts = crate::import::syne_tune::Options {
        policy_key: None,
        task: None,
        task_key: "task".into(),
        seed_key: "seed".into(),
        metric: None,
        fidelity: None,
        prefix: "syne-tune:".into(),
    };
    let paths = vec![dir.to_path_buf()];
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..3 {
        let c0 = cpu_seconds();
        let runs = crate::import::syne_tune::read(&paths, &opts)?.runs;
        times.push(cpu_seconds() - c0);
        rows = runs.iter().map(|r| r.evals.len()).sum();
    }
    times.sort_by(f64::total_cmp);
    Ok(SyneTuneRead {
        folders,
        rows,
        cpu_seconds: times[1],
    })
}

/// Syne Tune 0.16's own reader (`syne_tune.experiments.load_experiment`) on every folder under
/// `dir`, from `scripts/reference/synetune_read_timing.py` run by `python`: its CPU seconds
/// (median of three passes).
pub fn synetune_read_cpu_seconds(python: &str, dir: &Path) -> Result<f64> {
    peer_cpu_seconds(
        python,
        "synetune_read_timing.py",
        &[dir.as_os_str()],
        "synetune_cpu_s",
        "--synetune-python",
        "Syne Tune 0.16.0 (pip install -r scripts/reference/requirements-synetune.txt)",
    )
}

#[cfg(test)]
mod tests {
    use super::OptunahubSpeed;

    #[test]
    fn optunahub_speed_line_is_read_and_anything_else_refused() {
        let line = "speed trials=10000 adapter_trials=10000 simulator_trials=10003 \
                    adapter_cpu_s=12.5 simulator_cpu_s=20.25 adapter_optuna_cpu_s=10.0 \
                    simulator_optuna_cpu_s=11.5";
        let s = OptunahubSpeed::parse(line).unwrap();
        assert_eq!(
            (s.trials, s.adapter_trials, s.simulator_trials),
            (10000, 10000, 10003)
        );
        assert_eq!(s.simulator_cpu_s, 20.25);
        assert_eq!(s.simulator_optuna_cpu_s, 11.5);
        // A field missing, or a line that is not the speed line.
        assert!(OptunahubSpeed::parse(&line.replace("adapter_cpu_s=12.5", "")).is_none());
        assert!(OptunahubSpeed::parse("method=optuna-tpe decisions=3").is_none());
        // `trials=` is not read from `adapter_trials=`.
        assert_eq!(
            OptunahubSpeed::parse(&line.replace("speed trials=10000 ", "speed ")).map(|s| s.trials),
            None
        );
    }
}
