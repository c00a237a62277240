use std::path::PathBuf;
use std::process::ExitCode;

use crate::bench;
use crate::replay::WorldKind;
use crate::trace::pool;
use anyhow::Result;
use clap::ValueEnum;

#[derive(clap::Args)]
pub struct Args {
    /// Trace set to load and replay
    #[arg(long, default_value = "traces/lcdb")]
    traces: PathBuf,
    /// Seconds to spend on each throughput measurement
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Rows of the generated scores table that `report` is timed on (0 skips it)
    #[arg(long, default_value_t = 1_000_000)]
    report_rows: usize,
    /// Run only some measurements (repeatable). By default every one runs but store,
    /// write-cost and protocol, which run only when named
    #[arg(long, value_enum)]
    only: Vec<Section>,
    /// The configuration pool of the pool measurement (one learner's grid)
    #[arg(long, default_value = "traces/sklearn-grid")]
    pool: PathBuf,
    /// Numbers of policies the report-policies measurement ranks (100 units each)
    #[arg(long, value_delimiter = ',', default_value = "50,100,200,400,1000")]
    report_policies: Vec<usize>,
    /// Observations at which the cash measurement times a model decision
    #[arg(long, default_value_t = 200)]
    cash_observations: usize,
    /// Decisions of the store measurement
    #[arg(long, default_value_t = 100_000_000)]
    store_decisions: u64,
    /// Worker threads of the store and write-cost measurements [default: all cores]
    #[arg(long)]
    threads: Option<usize>,
    /// The experiment the write-cost measurement runs
    #[arg(long, default_value = "experiments/quickstart.toml")]
    write_cost_experiment: PathBuf,
    /// The Python interpreter of the protocol measurement
    #[arg(long, default_value = "python3")]
    python: String,
    /// With report-policies: a Python with autorank 1.3.0 (scripts/reference/
    /// requirements-autorank.txt) that times autorank on the same tables, side by side
    #[arg(long)]
    autorank_python: Option<String>,
    /// The experiment the memory measurement runs
    #[arg(long, default_value = "experiments/quickstart.toml")]
    memory_experiment: PathBuf,
    /// Repetitions of --memory-experiment the memory measurement runs it with, one process each
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    memory_repetitions: Vec<u32>,
    /// The Syne Tune blackbox the import-blackbox measurement imports
    #[arg(
        long,
        default_value = "tests/fixtures/import/blackbox/sklearn-grid-hgb-phoneme"
    )]
    blackbox: PathBuf,
    /// How many times import-blackbox repeats the blackbox's evaluations along the seed axis
    /// (220 makes the bundled one 134 MB)
    #[arg(long, default_value_t = 220)]
    blackbox_copies: usize,
    /// With pool-configuration: a Python with mfhpo-simulator 1.4.6 (scripts/reference/
    /// requirements-mfhpo.txt) that replays the same full-fidelity random search, side by side
    #[arg(long)]
    mfhpo_python: Option<String>,
    /// Cells of the pool-configuration measurement (each trains all 625 configurations)
    #[arg(long, default_value_t = 20)]
    configuration_repetitions: u32,
    /// With import-syne-tune: a Python with Syne Tune 0.16.0 (scripts/reference/
    /// requirements-synetune.txt) that reads the same folders with its own reader, side by side
    #[arg(long)]
    synetune_python: Option<String>,
    /// How many copies of the recorded Syne Tune experiment folders import-syne-tune reads
    #[arg(long, default_value_t = 100)]
    synetune_copies: usize,
    /// With adapters: the Python with the wheel and the adapters' libraries (python/
    /// requirements-*.txt) [default: --python]
    #[arg(long)]
    adapters_python: Option<String>,
    /// With adapters: full trainings of one --pool task in each adapter's cell
    #[arg(long, default_value_t = 60)]
    adapter_trainings: usize,
    /// With adapters: OptunaHub's async_opt_simulator.py (optunahub-registry is not on PyPI:
    /// `git show` it from a checkout, scripts/reference/optunahub_async_check.py says how), to
    /// replay --optunahub-trials random-search trials through it and through the Optuna
    /// adapter, side by side
    #[arg(long)]
    optunahub_simulator: Option<PathBuf>,
    /// With --optunahub-simulator: the random-search trials each side replays
    #[arg(long, default_value_t = 10_000)]
    optunahub_trials: usize,
    /// Two-objective evaluations of the run whose anytime hypervolume the hypervolume
    /// measurement computes
    #[arg(long, default_value_t = 1_000_000)]
    hypervolume_points: usize,
    /// With hypervolume: a Python with moocore 0.3.2 and Syne Tune 0.16.0 (scripts/reference/
    /// hypervolume_timing.py) that computes the same history on the first
    /// --hypervolume-peer-points points, side by side
    #[arg(long)]
    hypervolume_python: Option<String>,
    /// The points the peers are timed on (they recompute every prefix: quadratic time)
    #[arg(long, default_value_t = 10_000)]
    hypervolume_peer_points: usize,
    /// With dask: a Python with the wheel and dask.distributed (python/requirements-dask.txt)
    /// [default: --python]
    #[arg(long)]
    dask_python: Option<String>,
    /// With dask: the experiments each run four ways (one thread; --dask-processes threads;
    /// static shards; a Dask LocalCluster) [default: experiments/shang-sklearn-grid.toml, an
    /// uneven grid, and the same grid's TTTS cells alone at 20 repetitions, an even one]
    #[arg(long)]
    dask_experiment: Vec<PathBuf>,
    /// With dask: worker processes (and threads, and shards) of each way
    #[arg(long, default_value_t = 2)]
    dask_processes: usize,
    /// With freeze-thaw: the TaskSet pool whose first task the decisions are measured on
    #[arg(long, default_value = "traces/taskset")]
    freeze_thaw_pool: PathBuf,
    /// With freeze-thaw: the observations (units seen) at which one decision is measured
    #[arg(long, value_delimiter = ',', default_values_t = [100usize, 500, 1000])]
    freeze_thaw_observations: Vec<usize>,
    /// With freeze-thaw: a Python with PyTorch (scripts/reference/requirements-torch.txt) that
    /// times the reference implementation on the same inputs, side by side (needs --dpl-code)
    #[arg(long)]
    freeze_thaw_python: Option<String>,
    /// With freeze-thaw: a checkout of releaunifreiburg/DPL (its surrogate_models, models,
    /// dataset and data_loader folders are imported from it)
    #[arg(long)]
    dpl_code: Option<PathBuf>,
    /// With freeze-thaw: a checkout of releaunifreiburg/DyHPO (its surrogate_models folder and
    /// hpo_method.py are imported from it)
    #[arg(long)]
    dyhpo_code: Option<PathBuf>,
}

impl Args {
    /// `--threads`, which `cli::main` also gives polars' own pool.
    pub(super) fn threads(&self) -> Option<usize> {
        self.threads
    }
}

/// One measurement that runs only when named: its options and a scratch folder.
type Measure = fn(&Args, &std::path::Path) -> Result<()>;

pub fn run(args: Args) -> Result<ExitCode> {
    let a = &args;
    if !(a.seconds.is_finite() && a.seconds > 0.0) {
        anyhow::bail!(
            "--seconds {}: must be a positive number of seconds",
            a.seconds
        );
    }
    run_bench(
        &a.traces,
        &a.pool,
        a.seconds,
        a.report_rows,
        a.cash_observations,
        &a.only,
    )?;
    report_policies_section(&a.only, &a.report_policies, a.autorank_python.as_deref())?;
    let want = |what: Section| a.only.contains(&what);
    let scratch =
        std::env::temp_dir().join(format!("banditbench-bench-store-{}", std::process::id()));
    // The sections that run only when named, in this order.
    let named: [(Section, Measure); 11] = [
        (Section::WriteCost, bench_write_cost),
        (Section::Protocol, bench_protocol),
        (Section::Memory, bench_memory),
        (Section::ImportSyneTune, bench_import_syne_tune),
        (Section::PoolConfiguration, bench_pool_configuration),
        (Section::ImportBlackbox, bench_import_blackbox),
        (Section::Adapters, bench_adapters),
        (Section::Dask, bench_dask),
        (Section::Hypervolume, bench_hypervolume),
        (Section::FreezeThaw, bench_freeze_thaw),
        (Section::Store, bench_store),
    ];
    for (section, measure) in named {
        if want(section) {
            measure(a, &scratch)?;
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}
/// `bench --only write-cost`.
fn bench_write_cost(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let threads = a.threads;
    let write_cost_experiment = &a.write_cost_experiment;
    let w = bench::measure_write_cost(write_cost_experiment, scratch, threads)?;
    println!(
        "write cost: {} ({} cells) replayed without writing {:.2} s wall ({:.2} s CPU), run through the store {:.2} s wall ({:.2} s CPU): {:.2}x pure simulation in wall time, {:.2}x in CPU time",
        write_cost_experiment.display(),
        w.cells,
        w.simulation_s,
        w.simulation_cpu_s,
        w.run_s,
        w.run_cpu_s,
        w.run_s / w.simulation_s.max(1e-9),
        w.run_cpu_s / w.simulation_cpu_s.max(1e-9)
    );
    Ok(())
}

/// `bench --only protocol`.
fn bench_protocol(a: &Args, _scratch: &std::path::Path) -> Result<()> {
    let traces = &a.traces;
    let seconds = a.seconds;
    let python = &a.python;
    let ts = crate::trace::load_trace_set(traces, &Default::default())?;
    let t = bench::measure_protocol(&ts, python, seconds)?;
    for pair in t.chunks(2) {
        let (b, e) = (&pair[0], &pair[1]);
        println!(
            "protocol: {} {:.0} decisions/s ({} cells); {} {} {:.0} decisions/s ({} cells): {:.1} us per decision, {:.0}x the built-in's time",
            b.policy,
            b.decisions_per_second(),
            b.cells,
            e.policy,
            if e.policy.ends_with("in-process") {
                "in-process"
            } else {
                "through the protocol"
            },
            e.decisions_per_second(),
            e.cells,
            1e6 / e.decisions_per_second(),
            b.decisions_per_second() / e.decisions_per_second()
        );
    }
    Ok(())
}

/// `bench --only memory`.
fn bench_memory(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let threads = a.threads;
    let memory_experiment = &a.memory_experiment;
    let memory_repetitions = &a.memory_repetitions;
    let points = bench::measure_memory(
        memory_experiment,
        memory_repetitions,
        &scratch.join("memory"),
        threads,
    )?;
    for p in &points {
        println!(
            "memory: {} with {} repetitions ({} cells): peak RSS {:.0} MiB ({:.1} s)",
            memory_experiment.display(),
            p.repetitions,
            p.cells,
            p.peak_rss_mib,
            p.seconds
        );
    }
    if let (Some(first), Some(last)) = (points.first(), points.last())
        && points.len() >= 2
    {
        // The growth between the two largest runs: what one more cell costs once a run has
        // reached its working size (a straight line through every run would charge the
        // first seconds' growth to every cell).
        let before = &points[points.len() - 2];
        let more = last.cells.saturating_sub(before.cells).max(1) as f64;
        println!(
            "memory: {:.2}x the peak of {} repetition(s) at {} repetitions; from {} to {} repetitions {:+.0} MiB for {} more cells ({:.0} bytes per cell)",
            last.peak_rss_mib / first.peak_rss_mib.max(1e-9),
            first.repetitions,
            last.repetitions,
            before.repetitions,
            last.repetitions,
            last.peak_rss_mib - before.peak_rss_mib,
            last.cells.saturating_sub(before.cells),
            (last.peak_rss_mib - before.peak_rss_mib) * 1024.0 * 1024.0 / more
        );
    }
    Ok(())
}

/// `bench --only import-syne-tune`.
fn bench_import_syne_tune(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let synetune_python = &a.synetune_python;
    let synetune_copies = a.synetune_copies;
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/syne-tune");
    let dir = scratch.join("syne-tune");
    let m = bench::measure_syne_tune_read(&fixture, synetune_copies, &dir)?;
    let peer = match &synetune_python {
        Some(py) => Some(bench::synetune_read_cpu_seconds(py, &dir)?),
        None => None,
    };
    println!(
        "import syne-tune: read {} experiment folders ({} copies of the recorded ones), {} result rows, in {:.3} CPU-s in-process{}",
        m.folders,
        synetune_copies,
        m.rows,
        m.cpu_seconds,
        peer.map_or(String::new(), |p| format!(
            "; Syne Tune 0.16.0's load_experiment {p:.3} CPU-s: {:.2}x its speed",
            p / m.cpu_seconds.max(1e-9)
        ))
    );
    Ok(())
}

/// `bench --only pool-configuration`.
fn bench_pool_configuration(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let pool_dir = &a.pool;
    let mfhpo_python = &a.mfhpo_python;
    let configuration_repetitions = a.configuration_repetitions;
    if configuration_repetitions == 0 {
        anyhow::bail!("--configuration-repetitions 0: give at least one cell");
    }
    let (costs, table) = bench::measure_configurations(
        pool_dir,
        &scratch.join("configuration"),
        configuration_repetitions,
    )?;
    let peer = match &mfhpo_python {
        Some(py) => {
            let n = costs[0].configurations;
            Some(bench::mfhpo_cpu_seconds(py, &table, n)? / n as f64 * 1e6)
        }
        None => None,
    };
    for c in &costs {
        println!(
            "pool configuration: random-search(work={}) through run, one thread: {} configurations at full fidelity, {} trajectory steps, {:.2} CPU-s: {:.2} us per configuration{}",
            c.work,
            c.configurations,
            c.steps,
            c.cpu_seconds,
            c.us_per_configuration(),
            peer.map_or(String::new(), |p| format!(
                "; mfhpo-simulator 1.4.6 {p:.2} us per full-fidelity evaluation: {:.1}x its time",
                p / c.us_per_configuration()
            ))
        );
    }
    Ok(())
}

/// `bench --only import-blackbox`.
fn bench_import_blackbox(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let blackbox = &a.blackbox;
    let blackbox_copies = a.blackbox_copies;
    let m = bench::measure_blackbox_import(
        blackbox,
        blackbox_copies,
        &[
            "--metric",
            "score",
            "--test-metric",
            "test_score",
            "--cost",
            "cost_s",
        ],
        &scratch.join("import"),
    )?;
    let input_mib = m.input_bytes as f64 / (1024.0 * 1024.0);
    println!(
        "import blackbox: {} with its evaluations repeated {}x along the seeds, shape {:?}, {:.1} MiB of evaluations: peak RSS {:.0} MiB ({:.2}x the evaluations; the same import of the blackbox as given peaks at {:.0} MiB), {:.1} s",
        blackbox.display(),
        blackbox_copies,
        m.shape,
        input_mib,
        m.peak_rss_mib,
        m.peak_rss_mib / input_mib.max(1e-9),
        m.baseline_rss_mib,
        m.seconds
    );
    Ok(())
}

/// `bench --only adapters`.
fn bench_adapters(a: &Args, _scratch: &std::path::Path) -> Result<()> {
    let pool_dir = &a.pool;
    let python = &a.python;
    let adapters_python = &a.adapters_python;
    let adapter_trainings = a.adapter_trainings;
    let py = adapters_python.as_deref().unwrap_or(python);
    bench::measure_adapters(py, pool_dir, adapter_trainings, |m| match m {
        bench::AdapterTiming::Skipped(method) => {
            println!("adapters: {method} skipped (its library is not installed)")
        }
        bench::AdapterTiming::Measured {
            method,
            decisions,
            library_us,
            adapter_us,
            engine_us,
        } => println!(
            "adapters: {method} {decisions} decisions: the library {library_us:.0} us per decision, banditbench {:.1} us (the adapter {adapter_us:.1} us, the engine {engine_us:.1} us): {:.1}% of the library's time",
            adapter_us + engine_us,
            100.0 * (adapter_us + engine_us) / library_us.max(1e-9)
        ),
    })?;
    if let Some(simulator) = &a.optunahub_simulator {
        let s = bench::measure_optunahub_speed(py, simulator, a.optunahub_trials)?;
        println!(
            "adapters: {} random-search trials on 4 workers (hpobench-mlp vehicle), CPU time: the Optuna adapter {:.2} s ({} trials), OptunaHub's AsyncOptBenchmarkSimulator {:.2} s ({} trials): {:.2}x; inside Optuna's ask, suggest and tell {:.2} s and {:.2} s, so the rest is {:.2} s against {:.2} s ({:.1}x)",
            s.trials,
            s.adapter_cpu_s,
            s.adapter_trials,
            s.simulator_cpu_s,
            s.simulator_trials,
            s.simulator_cpu_s / s.adapter_cpu_s.max(1e-9),
            s.adapter_optuna_cpu_s,
            s.simulator_optuna_cpu_s,
            s.adapter_cpu_s - s.adapter_optuna_cpu_s,
            s.simulator_cpu_s - s.simulator_optuna_cpu_s,
            (s.simulator_cpu_s - s.simulator_optuna_cpu_s)
                / (s.adapter_cpu_s - s.adapter_optuna_cpu_s).max(1e-9)
        );
    }
    Ok(())
}

/// `bench --only dask`.
fn bench_dask(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let py = a.dask_python.as_deref().unwrap_or(&a.python);
    let exps = if a.dask_experiment.is_empty() {
        bench::dask_default_experiments(scratch)?
    } else {
        a.dask_experiment.clone()
    };
    for exp in exps {
        let m = bench::measure_dask(py, &exp, a.dask_processes, scratch)?;
        let ideal = m.cpu_s / m.processes as f64;
        println!(
            "dask: {} ({} cells, {:.2} s of CPU on one thread): ideal makespan on {} processes {ideal:.2} s; Dask LocalCluster {:.2} s ({:.2}x ideal, {:+.1}% against run --threads {}), static shards {:.2} s with their merge ({:.2}x), run --threads {} {:.2} s ({:.2}x); the Dask folder equals the local run's: {}",
            exp.display(),
            m.cells,
            m.cpu_s,
            m.processes,
            m.dask_s,
            m.dask_s / ideal,
            100.0 * (m.dask_s / m.local_s - 1.0),
            m.processes,
            m.shards_s,
            m.shards_s / ideal,
            m.processes,
            m.local_s,
            m.local_s / ideal,
            if m.identical { "yes" } else { "NO" }
        );
    }
    Ok(())
}

/// `bench --only store`.
fn bench_store(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let store_decisions = a.store_decisions;
    let threads = a.threads;
    // The same run writing no trajectories first (its peak RSS is then the smaller one).
    let none = bench::measure_store(store_decisions, "none", scratch, threads)?;
    let m = bench::measure_store(store_decisions, "every-decision", scratch, threads)?;
    println!(
        "store: {} decisions in {} cells run, stored and merged in {:.1} s wall, {:.1} s CPU ({:.2e} decisions/s); peak RSS {:.0} MiB; runs.parquet {:.1} MB, trajectories.parquet {:.1} MB",
        m.decisions,
        m.cells,
        m.seconds,
        m.cpu_seconds,
        m.decisions as f64 / m.seconds,
        m.peak_rss_mib,
        m.runs_bytes as f64 / 1e6,
        m.trajectories_bytes as f64 / 1e6
    );
    println!(
        "store: the same run writing no trajectories {:.1} s wall, {:.1} s CPU: writing every decision costs {:.2}x in CPU time, {:.2}x in wall time",
        none.seconds,
        none.cpu_seconds,
        m.cpu_seconds / none.cpu_seconds.max(1e-9),
        m.seconds / none.seconds.max(1e-9)
    );
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Section {
    /// The trace set's load time and peak memory
    Load,
    /// Simulated UCB1 pulls per second in both learner-level worlds, one thread
    Replay,
    /// Microseconds per arctan learning-curve fit
    Fits,
    /// `report` on a large generated scores table (--report-rows)
    Report,
    /// `report` on 100 units x each of --report-policies policies
    ReportPolicies,
    /// Pool-world decisions per second on one learner's grid of --pool
    Pool,
    /// A run of --store-decisions decisions through the results store (only when named)
    Store,
    /// The quickstart replayed without writing, against a full run (only when named)
    WriteCost,
    /// Built-in policies against the same rules in Python through the protocol (only when named)
    Protocol,
    /// Time per TPE and SMAC-style decision on sklearn-random's joint pool
    Cash,
    /// ASHA's and random search's decisions per second at 1, 16 and 256 simulated workers on one
    /// learner's grid of --pool
    Workers,
    /// Peak RSS of `run` against its number of cells: --memory-experiment at each of
    /// --memory-repetitions, one process each (only when named)
    Memory,
    /// Peak RSS of `import blackbox` against the size of its evaluations: --blackbox with its
    /// evaluations repeated --blackbox-copies times (only when named)
    ImportBlackbox,
    /// Random search at full fidelity through `run`, one unit a decision against one
    /// configuration a decision, per configuration; with --mfhpo-python beside mfhpo-simulator
    /// (only when named)
    PoolConfiguration,
    /// `import syne-tune`'s reader on copies of the recorded experiment folders; with
    /// --synetune-python beside Syne Tune's own reader (only when named)
    ImportSyneTune,
    /// banditbench's share of a library optimizer's decision, per adapter and method, in
    /// --adapters-python (only when named)
    Adapters,
    /// CPU time of one DPL decision at --freeze-thaw-observations, one thread; with
    /// --freeze-thaw-python and --dpl-code beside DPL's own code (only when named)
    FreezeThaw,
    /// The exact anytime hypervolume of a generated two-objective run of --hypervolume-points
    /// evaluations; with --hypervolume-python beside Syne Tune's and moocore's (only when named)
    Hypervolume,
    /// One experiment's makespan four ways on the same cores: one thread (the grid's CPU), run
    /// --threads P, P static shards, a P-process Dask LocalCluster, in --dask-python (only when
    /// named)
    Dask,
}

impl Section {
    /// Measurements that take minutes, disk or Python run only when named.
    fn only_when_named(self) -> bool {
        matches!(
            self,
            Section::Store
                | Section::WriteCost
                | Section::Protocol
                | Section::Memory
                | Section::ImportBlackbox
                | Section::PoolConfiguration
                | Section::ImportSyneTune
                | Section::Adapters
                | Section::Hypervolume
                | Section::FreezeThaw
                | Section::Dask
        )
    }
}

/// Per round, the time per decision of `seconds` over that of one worker in the same round:
/// the median ratio, the smallest and the largest.
fn round_ratios(seconds: &[f64], one_worker: &[f64]) -> (f64, f64, f64) {
    let mut ratios: Vec<f64> = seconds.iter().zip(one_worker).map(|(s, o)| s / o).collect();
    let (lo, hi) = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
    );
    ratios.sort_by(f64::total_cmp);
    (ratios[ratios.len() / 2], lo, hi)
}

/// Loading the pool whole and for one task, then each pool policy's decisions per second.
fn bench_pool(pool_dir: &std::path::Path, seconds: f64) -> Result<()> {
    let dir = pool_dir;
    // Loading the pool: three loads, the median and the fastest.
    let mut load_s = Vec::new();
    let mut loaded = None;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        loaded = Some(pool::load_pool(dir, true)?);
        load_s.push(t.elapsed().as_secs_f64());
    }
    load_s.sort_by(f64::total_cmp);
    let pool = loaded.expect("loaded three times");
    println!(
        "loading {} ({} units recorded, every task): {:.3} s (median of 3 loads; fastest {:.3} s)",
        dir.display(),
        pool.n_units_recorded(),
        load_s[1],
        load_s[0]
    );
    // Loading it for one task, as an experiment whose [tasks] keeps one does.
    let first = pool.tasks.first().map(|t| (t.dataset.clone(), t.run));
    let one = |all: &[(String, i64)]| -> std::collections::BTreeSet<(String, i64)> {
        all.iter()
            .filter(|t| Some(*t) == first.as_ref())
            .cloned()
            .collect()
    };
    let mut one_s = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        std::hint::black_box(pool::load_pool_selecting(dir, true, Some(&one))?);
        one_s.push(t.elapsed().as_secs_f64());
    }
    one_s.sort_by(f64::total_cmp);
    println!(
        "loading {} for 1 of its {} tasks: {:.3} s (median of 3 loads; fastest {:.3} s), {:.2}x the time of every task",
        dir.display(),
        pool.tasks.len(),
        one_s[1],
        one_s[0],
        one_s[1] / load_s[1].max(1e-9)
    );
    for policy in [
        "random-search",
        "hyperband",
        "d-ttts",
        "ttts",
        "t3c",
        "uniform",
        "inf-ucb-e",
        "mutant-ucb",
        "steady-state-ea",
    ] {
        // One Hyperband iteration on 27-unit curves (eta = 3) trains 81 + 78 + 90 + 108 = 357
        // units, so 1 000 units is almost three.
        let t = bench::measure_pool(&pool, 0, policy, 1000.0, seconds)?;
        println!(
            "{} on one learner's grid of {} ({} configurations, 27 units, budget 1000 units): {:.0} decisions/s ({:.2e} s per sampling step), {:.3} ms per cell ({} cells, one thread)",
            t.policy,
            dir.display(),
            t.configs,
            t.decisions_per_second(),
            1.0 / t.decisions_per_second().max(1e-12),
            t.ms_per_cell(),
            t.cells
        );
    }
    Ok(())
}

/// ASHA and random search at 1, 16 and 256 workers: decisions per second and the time per
/// decision against one worker's.
fn bench_workers(pool_dir: &std::path::Path, seconds: f64) -> Result<()> {
    let pool = pool::load_pool(pool_dir, true)?;
    // Rounds of 1, 16 and 256 workers interleaved, so that a change in the machine's load
    // falls on all three alike; each ratio is within its round, the median is reported.
    const ROUNDS: usize = 5;
    const WORKERS: [usize; 3] = [1, 16, 256];
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for policy in ["asha", "random-search"] {
        // Per number of workers: (seconds per decision, cells) per round.
        let mut per: Vec<Vec<(f64, u64)>> = vec![Vec::new(); WORKERS.len()];
        for _ in 0..ROUNDS {
            for (i, &workers) in WORKERS.iter().enumerate() {
                // 4 000 units: about 150 full curves of 27 units, 15 per worker at 256.
                let t = bench::measure_pool_workers(
                    &pool,
                    0,
                    policy,
                    4000.0,
                    seconds / ROUNDS as f64,
                    workers,
                )?;
                per[i].push((1.0 / t.decisions_per_second().max(1e-12), t.cells));
            }
        }
        for (i, &workers) in WORKERS.iter().enumerate() {
            let seconds: Vec<f64> = per[i].iter().map(|x| x.0).collect();
            let ones: Vec<f64> = per[0].iter().map(|x| x.0).collect();
            let (ratio, lo, hi) = round_ratios(&seconds, &ones);
            let mut rates: Vec<f64> = per[i].iter().map(|x| 1.0 / x.0).collect();
            let cells: u64 = per[i].iter().map(|x| x.1).sum();
            println!(
                "{policy} with {workers} workers on one learner's grid of {} (budget 4000 units): {:.0} decisions/s, {:.2}x the time per decision of 1 worker (median of {ROUNDS} interleaved rounds, range {lo:.2}-{hi:.2}; {cells} cells, one thread)",
                pool_dir.display(),
                median(&mut rates),
                ratio,
            );
        }
    }
    Ok(())
}

/// TPE's and SMAC's time per model decision on the joint pool of sklearn-random.
fn bench_cash(seconds: f64, cash_observations: usize) -> Result<()> {
    let dir = std::path::Path::new("traces/sklearn-random");
    let pool = crate::trace::joint::pool_from_trace_set(dir)?;
    for (family, given) in [
        ("tpe", vec![]),
        ("tpe", vec![("split", "hyperopt")]),
        ("smac", vec![]),
        ("smac", vec![("variance", "total")]),
    ] {
        let t = bench::measure_cash(&pool, family, &given, cash_observations, seconds)?;
        println!(
            "{} on the joint pool of {} (up to {} candidates per task): one model decision at {} +- 5 observations: mean {:.3} ms, median {:.3} ms, max {:.3} ms ({} decisions, one thread)",
            t.policy,
            dir.display(),
            t.candidates,
            cash_observations,
            t.mean_ms,
            t.median_ms,
            t.max_ms,
            t.decisions
        );
    }
    Ok(())
}

fn run_bench(
    traces: &std::path::Path,
    pool_dir: &std::path::Path,
    seconds: f64,
    report_rows: usize,
    cash_observations: usize,
    only: &[Section],
) -> Result<ExitCode> {
    // The sections named-only are run by the caller.
    let want = |what: Section| !what.only_when_named() && (only.is_empty() || only.contains(&what));
    if want(Section::Load) || want(Section::Replay) {
        run_bench_replay(traces, seconds, want(Section::Replay))?;
    }
    if want(Section::Fits) {
        run_bench_fits();
    }
    if want(Section::Report) && report_rows > 0 {
        let dir = std::env::temp_dir().join(format!("banditbench-bench-{}", std::process::id()));
        let m = bench::measure_report(report_rows / 10, 10, &dir)?;
        println!(
            "report on {} generated scores ({} units x {} policies): {:.2} s; peak RSS {:.0} MiB before, {:.0} MiB after",
            m.rows, m.units, m.policies, m.seconds, m.rss_before_mib, m.rss_after_mib
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    if want(Section::Pool) {
        bench_pool(pool_dir, seconds)?;
    }
    if want(Section::Workers) {
        bench_workers(pool_dir, seconds)?;
    }
    if want(Section::Cash) {
        bench_cash(seconds, cash_observations)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `report` on 100 units x each number of policies, beside autorank when asked.
fn report_policies_section(
    only: &[Section],
    report_policies: &[usize],
    autorank_python: Option<&str>,
) -> Result<()> {
    if !(only.is_empty() || only.contains(&Section::ReportPolicies)) {
        return Ok(());
    }
    for &policies in report_policies {
        let dir = std::env::temp_dir().join(format!(
            "banditbench-bench-{}-{policies}",
            std::process::id()
        ));
        let m = bench::measure_report(100, policies, &dir)?;
        println!(
            "report on {} units x {} policies: analysis {:.3} s CPU (ranks, Friedman, Nemenyi's CD; pairwise tests of --pairs auto: {}); the whole report (every table and figure) {:.2} s wall, {:.2} s CPU",
            m.units,
            m.policies,
            m.analysis_cpu_seconds,
            if m.policies <= crate::analysis::compare::AUTO_ALL_PAIRS {
                "all pairs; and the leaderboard with 200 bootstrap resamples"
            } else {
                "none"
            },
            m.seconds,
            m.cpu_seconds
        );
        let default_samples = crate::analysis::leaderboard::LeaderboardOptions::default().samples;
        if m.leaderboard_point_cpu_seconds.is_finite() {
            println!(
                "report on {} units x {} policies: the leaderboard alone (forced on): point ratings {:.3} s CPU, each bootstrap resample {:.4} s CPU (over {}), so {:.2} s CPU with the default {} resamples",
                m.units,
                m.policies,
                m.leaderboard_point_cpu_seconds,
                m.leaderboard_resample_cpu_seconds,
                bench::LEADERBOARD_PROBE,
                m.leaderboard_point_cpu_seconds
                    + default_samples as f64 * m.leaderboard_resample_cpu_seconds,
                default_samples
            );
        }
        if let Some(py) = autorank_python {
            let peer = bench::autorank_cpu_seconds(py, &m.csv)?;
            println!(
                "report on {} units x {} policies: autorank 1.3.0 (Friedman + Nemenyi, in-process) {:.3} s CPU: banditbench's analysis takes {:.2}x its time, the whole report {:.2}x",
                m.units,
                m.policies,
                peer,
                m.analysis_cpu_seconds / peer,
                m.cpu_seconds / peer
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

fn run_bench_fits() {
    for f in bench::measure_fits(&[8, 32, 128], 2000) {
        println!(
            "arctan fit, {:>3} points: cold {:.1} us median, {:.1} us p99; warm-started {:.1} us median, {:.1} us p99",
            f.points, f.cold_median_us, f.cold_p99_us, f.warm_median_us, f.warm_p99_us
        );
    }
}

fn run_bench_replay(traces: &std::path::Path, seconds: f64, replay: bool) -> Result<()> {
    let (ts, load) = bench::measure_load(traces)?;
    println!(
        "load {}: {} tasks, {} evaluations in {:.3} s; peak RSS {:.1} MiB before, {:.1} MiB after loading",
        traces.display(),
        load.tasks,
        load.evaluations,
        load.seconds,
        load.rss_before_mib,
        load.rss_after_mib
    );
    if !replay {
        return Ok(());
    }
    for kind in [WorldKind::TimeSliced, WorldKind::PullCount] {
        for traj in [false, true] {
            let t = bench::measure_ucb1(&ts, kind, traj, seconds)?;
            println!(
                "ucb1 on {:<11} trajectories {:<5}: {:>11.0} pulls/s on one thread ({} pulls, {} cells, {:.2} s)",
                t.world,
                if t.trajectories { "on" } else { "off" },
                t.pulls_per_second(),
                t.pulls,
                t.cells,
                t.seconds
            );
        }
    }
    Ok(())
}

/// The anytime hypervolume of generated runs (`bench::pareto`): ours on every point, and the
/// peers, with ours again, on the first `peer_points`.
fn run_bench_hypervolume(
    points: usize,
    python: Option<&str>,
    peer_points: usize,
    scratch: &std::path::Path,
) -> Result<()> {
    use bench::pareto;
    for kind in ["uniform", "front"] {
        let run = pareto::run(kind, points, 2026);
        let h = pareto::measure_history(&run);
        println!(
            "hypervolume: {kind} run of {} two-objective evaluations (generated), the exact history in {:.3} s CPU, one thread ({:.0} ns per evaluation); final front {} points, hypervolume {:.12}",
            h.points,
            h.cpu_s,
            1e9 * h.cpu_s / h.points.max(1) as f64,
            h.front,
            h.last
        );
        let Some(py) = python else { continue };
        let n = peer_points.min(points);
        let ours = pareto::measure_history(&run[..2 * n]);
        for (peer, cpu_s, last) in pareto::measure_peers(py, &run, n, scratch)? {
            let agree = (last - ours.last).abs() <= 1e-9 * ours.last.abs();
            println!(
                "hypervolume: {kind}, first {n} evaluations: {peer} {cpu_s:.3} s CPU, banditbench {:.5} s: {:.0}x; final hypervolume {}",
                ours.cpu_s,
                cpu_s / ours.cpu_s.max(1e-9),
                if agree {
                    "the same".to_string()
                } else {
                    format!("differs: {last} against {}", ours.last)
                }
            );
        }
    }
    Ok(())
}

/// `bench --only freeze-thaw`: CPU time of one DPL, one DyHPO and one freeze-thaw GP decision (a
/// refinement or fit of the model on every unit seen and the prediction of every configuration
/// not yet complete) at each number of observations, one thread; with --freeze-thaw-python and --dpl-code / --dyhpo-code,
/// the reference code on the same features and history beside it.
fn bench_freeze_thaw(a: &Args, scratch: &std::path::Path) -> Result<()> {
    let pool = crate::trace::pool::load_pool(&a.freeze_thaw_pool, true)?;
    let task = pool
        .tasks
        .first()
        .ok_or_else(|| anyhow::anyhow!("{}: the pool has no task", a.freeze_thaw_pool.display()))?;
    let units = pool.manifest.units;
    if a.freeze_thaw_python.is_some() && a.dpl_code.is_none() && a.dyhpo_code.is_none() {
        anyhow::bail!(
            "bench --freeze-thaw-python needs --dpl-code PATH (a checkout of releaunifreiburg/DPL) or --dyhpo-code PATH (of releaunifreiburg/DyHPO)"
        );
    }
    // The freeze-thaw GP has no runnable reference here (NePS's icml-2024 code needs its own
    // fork of NePS and metahyper): its time is printed alone.
    let no_peer = None;
    for &n in &a.freeze_thaw_observations {
        let history = bench::freeze_thaw::history(&task.curves, units, n, 2023);
        for (policy, code, script, peer_name) in [
            ("dpl", &a.dpl_code, "dpl_timing.py", "DPL"),
            ("dyhpo", &a.dyhpo_code, "dyhpo_timing.py", "DyHPO"),
            ("ftgp", &no_peer, "", "the freeze-thaw GP"),
        ] {
            let mut probe = bench::freeze_thaw::probe(policy, &pool.space, units, &history, 2023);
            let (fit_s, predict_s, candidates) = bench::freeze_thaw::decision(probe.as_mut(), 3);
            println!(
                "freeze-thaw: {policy} on {} task {}, {n} observations ({} configurations), one decision: refinement {:.3} s CPU, prediction of {candidates} configurations {:.4} s CPU (median of 3, one thread)",
                a.freeze_thaw_pool.display(),
                task.dataset,
                history.len(),
                fit_s,
                predict_s
            );
            let (Some(py), Some(code)) = (&a.freeze_thaw_python, code) else {
                continue;
            };
            let file = scratch.join(format!("{policy}-history-{n}.json"));
            std::fs::create_dir_all(scratch)?;
            let width = pool.space.flat_width(crate::space::Root::Index) - 1;
            let feats: Vec<Vec<f32>> = (0..pool.space.len())
                .map(|c| {
                    let mut row = vec![0.0f32; width + 1];
                    pool.space
                        .flat_into(c, 0.0, crate::space::Root::Index, &mut row);
                    row[1..].to_vec()
                })
                .collect();
            let json = serde_json::json!({
                "units": units,
                "features": feats,
                "history": history,
            });
            std::fs::write(&file, json.to_string())?;
            let mut args: Vec<std::ffi::OsString> = vec!["--code".into(), code.into()];
            args.extend(["--history".into(), file.clone().into_os_string()]);
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_os_str()).collect();
            let out = bench::peer_output(
                py,
                script,
                &args,
                "--freeze-thaw-python",
                "PyTorch 2.15.0, GPyTorch 1.15.2 and scipy",
            )?;
            let get = |key: &str| -> Result<f64> {
                let prefix = format!("{key}=");
                out.split_whitespace()
                    .find_map(|w| w.strip_prefix(prefix.as_str()))
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| anyhow::anyhow!("{script} printed no {prefix}: {out}"))
            };
            let (peer_fit, peer_predict) = (get("refine_s")?, get("predict_s")?);
            println!(
                "freeze-thaw: {peer_name}'s own code (PyTorch, one thread), {n} observations: refinement {peer_fit:.3} s CPU, prediction {peer_predict:.4} s CPU; banditbench takes {:.3}x its decision's time ({:.3}x its refinement's, {:.2}x its prediction's)",
                (fit_s + predict_s) / (peer_fit + peer_predict).max(1e-12),
                fit_s / peer_fit.max(1e-12),
                predict_s / peer_predict.max(1e-12)
            );
        }
    }
    Ok(())
}

/// `bench --only hypervolume`.
fn bench_hypervolume(a: &Args, scratch: &std::path::Path) -> Result<()> {
    run_bench_hypervolume(
        a.hypervolume_points,
        a.hypervolume_python.as_deref(),
        a.hypervolume_peer_points,
        scratch,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ratios_are_taken_within_each_round_then_summarised() {
        // Round 2 ran on a slower machine for both: its ratio is 2 like round 1's.
        let (median, lo, hi) = round_ratios(&[2.0, 8.0, 3.0], &[1.0, 4.0, 1.0]);
        assert_eq!((median, lo, hi), (2.0, 2.0, 3.0));
    }
}
