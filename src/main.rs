//! The `banditbench` command: parses arguments, calls the library, prints, maps errors to exit
//! codes (0 success, 1 an error in input or in the run, 2 a usage error).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use banditbench::analysis::compare::Options;
use banditbench::analysis::stats::{CiKind, ZeroMethod};
use banditbench::bench;
use banditbench::experiment::{self, RunOptions};
use banditbench::replay::WorldKind;
use banditbench::report::{self, ReportOptions, UnitKind};
use banditbench::trace::{LoadOptions, load_trace_set, pool};
use clap::builder::TypedValueParser as _;

#[derive(Parser)]
#[command(
    name = "banditbench",
    version,
    about = "Replay recorded AutoML tuning traces under bandit policies and rank the policies",
    long_about = "Replay recorded AutoML tuning traces (trace sets under traces/) under \
algorithm-selection and hyper-parameter bandit policies, in parallel and deterministically, \
and rank the policies.\n\nStart with: banditbench run experiments/quickstart.toml"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment file: expand its cells, replay them in parallel, write results/<name>/
    /// and print the mean rank of every policy. Rerunning skips finished cells.
    Run {
        /// The experiment file (TOML), e.g. experiments/quickstart.toml
        experiment: PathBuf,
        /// Results folder [default: results/<experiment name>]
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads, at least 1 [default: all cores]
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096).map(|v| v as usize))]
        threads: Option<usize>,
        /// Cells per results part written to disk, at least 1 (smaller loses less on a kill);
        /// after the first, parts are written at most ten times a second
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..).map(|v| v as usize))]
        batch_size: Option<usize>,
        /// Run one deterministic share of the cells, I/N with 0 <= I < N (cells whose index is I
        /// modulo N), into its own folder [default: results/<name>-shards/I-of-N]; combine the
        /// shards with `banditbench merge`
        #[arg(long, value_name = "I/N", value_parser = parse_shard)]
        shard: Option<experiment::Shard>,
        /// Do not draw the progress bar
        #[arg(long)]
        quiet: bool,
        /// Delete the folder's finished results first (runs, trajectories, parts and lock file)
        /// and run every cell again, e.g. after an external policy's code changed
        #[arg(long)]
        fresh: bool,
    },
    /// Combine the finished shards of one experiment (`run --shard I/N`) into one results folder,
    /// byte for byte what an unsharded run writes. Checks that the folders come from the same
    /// experiment and trace set and that no cell is missing or duplicated.
    Merge {
        /// The shard folders, e.g. results/NAME-shards/*
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The folder to write (must not hold results yet)
        #[arg(long)]
        out: PathBuf,
    },
    /// Write a Slurm job array for an experiment: one array task per shard (`run --shard I/N`)
    /// and a merge job that runs when all have finished; with --submit, submit both with sbatch
    Slurm {
        /// The experiment file (TOML)
        experiment: PathBuf,
        /// Number of shards (array tasks)
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        shards: u32,
        /// Results folder of the merged run [default: results/<name>]
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where the shards write [default: results/<name>-shards]
        #[arg(long)]
        shards_dir: Option<PathBuf>,
        /// Where the scripts and logs go [default: <shards-dir>/slurm]
        #[arg(long)]
        script_dir: Option<PathBuf>,
        /// CPUs per array task (passed to run --threads)
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
        cpus_per_task: u32,
        /// Memory per array task (sbatch --mem)
        #[arg(long, default_value = "4G")]
        mem: String,
        /// Wall time per array task (sbatch --time)
        #[arg(long, default_value = "01:00:00")]
        time: String,
        #[arg(long)]
        partition: Option<String>,
        #[arg(long)]
        account: Option<String>,
        /// At most this many array tasks at once
        #[arg(long)]
        max_running: Option<u32>,
        /// Further #SBATCH options, repeatable, e.g. --sbatch=--qos=short
        #[arg(long = "sbatch", value_name = "OPTION")]
        extra: Vec<String>,
        /// The banditbench binary the jobs run, on a file system every node sees [default: this one]
        #[arg(long)]
        binary: Option<PathBuf>,
        /// Submit the array and the dependent merge job with sbatch
        #[arg(long)]
        submit: bool,
    },
    /// Statistics, tables and figures from a results folder (or any table of scores):
    /// ranks.csv, summary.csv, labels.csv, tests.json, report.md, report.tex, ranking.tex, and
    /// every figure as PDF, SVG, PNG (300 dpi) and CSV
    Report {
        /// A results folder written by `banditbench run`
        #[arg(required_unless_present = "scores", conflicts_with = "scores")]
        results: Option<PathBuf>,
        /// A table of scores from any tool instead of a results folder: CSV or parquet, long
        /// (columns unit,policy,score; see --unit-col ...) or wide (--wide)
        #[arg(long)]
        scores: Option<PathBuf>,
        /// With --scores: lower scores are better
        #[arg(long)]
        minimize: bool,
        /// With --scores: the unit column [default: unit; wide tables: unit, else an unnamed first
        /// column (a pandas index), else the row number]
        #[arg(long, requires = "scores")]
        unit_col: Option<String>,
        /// With --scores (long): the policy column
        #[arg(long, requires = "scores", default_value = "policy")]
        policy_col: String,
        /// With --scores (long): the score column
        #[arg(long, requires = "scores", default_value = "score")]
        score_col: String,
        /// With --scores: one row per unit and one column per policy (as autorank takes it)
        #[arg(long, requires = "scores")]
        wide: bool,
        /// With --scores: average several rows of one (unit, policy), e.g. seeds (else an error)
        #[arg(long, requires = "scores")]
        average_repeats: bool,
        /// Output folder [default: RESULTS/report, or SCORES-report next to the CSV]
        #[arg(long)]
        out: Option<PathBuf>,
        /// Significance level of every test
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// Interval of the mean ranks
        #[arg(long, value_enum, default_value_t = CiKind::T95)]
        ci: CiKind,
        /// Resamples for --ci bootstrap
        #[arg(long, default_value_t = 10_000)]
        bootstrap_samples: usize,
        /// Also run the Bayesian signed-rank test (Benavoli et al. 2017, as baycomp) on every pair
        /// with this region of practical equivalence: differences within ±ROPE (score units, e.g.
        /// 0.01 accuracy) count as equivalent. Writes bayes_signed_rank.{svg,png,csv}
        #[arg(long)]
        bayes_rope: Option<f64>,
        /// Posterior samples of the Bayesian signed-rank test
        #[arg(long, default_value_t = 50_000)]
        bayes_samples: usize,
        /// Prior strength of the Bayesian signed-rank test (a pseudo-observation at 0)
        #[arg(long, default_value_t = 0.5)]
        bayes_prior: f64,
        /// Seed of the bootstrap
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Scores within this relative distance of a better one tie with it:
        /// |a - b| <= tol * max(|a|, |b|) (0: exact ties only; the default absorbs float noise)
        #[arg(long, default_value_t = banditbench::analysis::compare::DEFAULT_TIE_TOLERANCE)]
        tie_tolerance: f64,
        /// Zero differences in Wilcoxon's test: ranked then dropped (pratt) or dropped (wilcox)
        #[arg(long, value_enum, default_value_t = ZeroMethod::Pratt)]
        zero_method: ZeroMethod,
        /// A (unit, policy) without a score: fail listing them, drop the unit, or give it the unit's worst score
        #[arg(long, value_enum, default_value_t = banditbench::analysis::compare::Missing::Error)]
        missing: banditbench::analysis::compare::Missing,
        /// Results folders: the unit the tests treat as independent. auto: the dataset when there
        /// are two or more, else the task, else every cell. dataset: scores averaged over runs,
        /// budgets and repetitions; task: over budgets and repetitions; task-budget: over
        /// repetitions (HAMLET's Fig. 8 unit; not independent); task-budget-repetition: every cell
        #[arg(long, value_enum, default_value_t = UnitArg::Auto)]
        unit: UnitArg,
        /// Results folders: what a cell that found nothing (no best score) counts as: the worst
        /// score of its unit, or left out of its mean (the counts are reported either way)
        #[arg(long, value_enum, default_value_t = banditbench::analysis::FoundNothing::Worst)]
        found_nothing: banditbench::analysis::FoundNothing,
        /// Results folders: also one report per budget (in budget-<b>/)
        #[arg(long)]
        per_budget: bool,
        /// The width figures are drawn for: column (3.3 in), page (6.9 in, two columns) or a
        /// width in inches (e.g. 5.5). Fonts are 7-8.5 pt at that width
        #[arg(long, default_value = "page", value_parser = figure_width)]
        width: f64,
        /// Figures without their own titles (a paper's caption replaces them)
        #[arg(long)]
        no_titles: bool,
        /// Anytime regret (b - v)/(b - w) per unit: b, w the best and worst of the compared
        /// policies (adding a policy changes every curve), or the best and worst score recorded
        /// in the unit's traces (read from the lock file's trace_dir, or --traces)
        #[arg(long, value_enum, default_value_t = report::Regret::Compared)]
        regret: report::Regret,
        /// With --regret trace: the trace set or pool the results were run on [default: the lock
        /// file's trace_dir]; its content hash must match the lock file's
        #[arg(long)]
        traces: Option<PathBuf>,
        /// Labels for figures: a TOML file ("policy id" = "label") or a CSV (policy,label).
        /// Policies it leaves out get the shortest label that tells them apart (the family, plus
        /// the parameters that differ within it); labels.csv in the report lists them all
        #[arg(long)]
        labels: Option<PathBuf>,
    },
    /// Show one cell of a results folder: its row of runs.parquet, its decisions, and a figure
    /// of its trajectory (incumbent and revealed scores against the budget used)
    Show {
        /// A results folder (runs.parquet, trajectories.parquet)
        results: PathBuf,
        /// The cell's id (the 'cell' column of runs.parquet; --list shows them)
        #[arg(long, required_unless_present = "list")]
        cell: Option<u64>,
        /// List the cells instead (id, dataset, run, budget, policy, best score)
        #[arg(long)]
        list: bool,
        /// Decisions printed from the start and from the end of a long cell; cells listed
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Folder of the figure cell-<ID>.{pdf,svg,png,csv} [default: RESULTS/cells]
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Reproduce a paper's tables and figures: run its experiments, then write results/<paper>/
    Reproduce {
        /// The paper: erucb (Hu, Yu & Liao 2019: Table 1, Figure 1, Table 2), hamlet (Schmidt et
        /// al. 2020: Table II grid, Figs. 2-8, the Variant 3 claim) or shang (Shang, Kaufmann &
        /// Valko 2019: D-TTTS against TTTS, T3C, SH, Hyperband, random search on recorded pools,
        /// and the timing table), mutant-ucb (Brégère & Keisler 2024: Tables 1 and 2 in shape
        /// on sklearn-grid, beside the paper's numbers) or auto-weka (Thornton et al. 2013:
        /// Ex-Def, grid and random search, TPE and SMAC on the CASH pools)
        #[arg(value_enum)]
        paper: Paper,
        /// Worker threads, at least 1 [default: all cores]
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096).map(|v| v as usize))]
        threads: Option<usize>,
        /// Do not draw progress bars
        #[arg(long)]
        quiet: bool,
    },
    /// Check and summarise trace sets
    Traces {
        #[command(subcommand)]
        command: TracesCommand,
    },
    /// List every policy: its parameters with defaults, the worlds it supports and its source
    Policies {
        /// Only the policies whose name contains this (e.g. ucb)
        name: Option<String>,
        /// Only the policies that run in this world
        #[arg(long, value_parser = ["time-sliced", "pull-count", "synthetic", "pool"])]
        world: Option<String>,
    },
    /// Measure replay throughput (UCB1, one thread) and trace-set load time and memory
    Bench {
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
        #[arg(long, value_delimiter = ',', default_value = "50,100,200")]
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
    },
}

#[derive(Subcommand)]
enum TracesCommand {
    /// One line per trace set and configuration pool in a folder (default: traces/)
    List {
        #[arg(default_value = "traces")]
        dir: PathBuf,
    },
    /// Validate trace sets against format v1; exit 0 if all are valid
    Validate {
        /// Trace-set or configuration-pool folders
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Drop (and list) tasks that lack some learners instead of failing
        #[arg(long)]
        allow_missing_arms: bool,
        /// Pools: accept one whose manifest says complete = false (a recording in progress)
        #[arg(long)]
        allow_incomplete: bool,
    },
    /// Print a summary table per trace set or configuration pool (files among the arguments,
    /// such as traces/README.md from `traces/*`, are skipped with a note)
    Inspect {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long)]
        allow_missing_arms: bool,
        /// Pools: accept one whose manifest says complete = false (a recording in progress)
        #[arg(long)]
        allow_incomplete: bool,
    },
}

fn parse_shard(s: &str) -> Result<experiment::Shard, String> {
    experiment::Shard::parse(s).map_err(|e| {
        e.to_string()
            .trim_start_matches(&format!("--shard '{s}': "))
            .to_string()
    })
}

fn main() -> ExitCode {
    banditbench::tune_allocator();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run {
            experiment,
            out,
            threads,
            batch_size,
            shard,
            quiet,
            fresh,
        } => run(experiment, out, threads, batch_size, shard, quiet, fresh),
        Command::Slurm {
            experiment,
            shards,
            out,
            shards_dir,
            script_dir,
            cpus_per_task,
            mem,
            time,
            partition,
            account,
            max_running,
            extra,
            binary,
            submit,
        } => {
            let exp = experiment::load_experiment(&experiment)?;
            let binary = match binary {
                Some(b) => b,
                None => std::env::current_exe().context("cannot find this binary's path")?,
            };
            let opts = banditbench::slurm::SlurmOptions {
                shards,
                out,
                shards_dir,
                script_dir,
                cpus_per_task,
                mem,
                time,
                partition,
                account,
                max_running,
                binary,
                extra,
            };
            let s = banditbench::slurm::write_scripts(&exp, &opts)?;
            println!("wrote {}", s.array.display());
            println!("wrote {}", s.merge.display());
            println!(
                "shards write to {}/I-of-{shards}, the merge to {}; logs in {}",
                s.shards_dir.display(),
                s.out.display(),
                s.logs.display()
            );
            if submit {
                let (a, m) = banditbench::slurm::submit(&s)?;
                println!(
                    "submitted array job {a} ({shards} tasks) and merge job {m} (afterok:{a})"
                );
                println!("watch with: squeue -j {a},{m}");
            } else {
                println!(
                    "submit with: jid=$(sbatch --parsable {}) && sbatch --dependency=afterok:$jid --kill-on-invalid-dep=yes {}",
                    s.array.display(),
                    s.merge.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { dirs, out } => {
            let m = experiment::merge_results(&dirs, &out)?;
            eprintln!(
                "merged {} cells from {} folders into {}",
                m.cells,
                m.folders,
                m.out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Traces { command } => match command {
            TracesCommand::Validate {
                dirs,
                allow_missing_arms,
                allow_incomplete,
            } => validate(&dirs, allow_missing_arms, allow_incomplete),
            TracesCommand::List { dir } => {
                print!("{}", banditbench::trace::inspect::list(&dir)?);
                Ok(ExitCode::SUCCESS)
            }
            TracesCommand::Inspect {
                dirs,
                allow_missing_arms,
                allow_incomplete,
            } => {
                for d in &dirs {
                    if d.is_file() {
                        eprintln!(
                            "note: skipped {}: a file, not a trace-set or pool folder",
                            d.display()
                        );
                        continue;
                    }
                    if pool::is_pool(d) {
                        print!("{}", pool::describe(&pool::load_pool(d, allow_incomplete)?));
                        continue;
                    }
                    let ts = load_trace_set(
                        d,
                        &LoadOptions {
                            allow_missing_arms,
                            ..LoadOptions::default()
                        },
                    )?;
                    print!("{}", banditbench::trace::inspect::summary(&ts));
                }
                Ok(ExitCode::SUCCESS)
            }
        },
        Command::Report {
            results,
            scores,
            minimize,
            unit_col,
            policy_col,
            score_col,
            wide,
            average_repeats,
            out,
            alpha,
            ci,
            bootstrap_samples,
            bayes_rope,
            bayes_samples,
            bayes_prior,
            seed,
            tie_tolerance,
            zero_method,
            missing,
            unit,
            found_nothing,
            per_budget,
            width,
            no_titles,
            regret,
            traces,
            labels,
        } => {
            if !(alpha > 0.0 && alpha < 1.0) {
                anyhow::bail!("--alpha {alpha}: it must lie strictly between 0 and 1");
            }
            if bootstrap_samples == 0 {
                anyhow::bail!("--bootstrap-samples must be at least 1");
            }
            if bootstrap_samples > 10_000_000 {
                anyhow::bail!(
                    "--bootstrap-samples {bootstrap_samples}: more than 10^7 resamples, each of every policy's mean rank, would not finish in reasonable time or memory; 10^4 (the default) gives percentile intervals to about ±0.002"
                );
            }
            if bayes_rope.is_some_and(|r| !(r >= 0.0 && r.is_finite())) {
                anyhow::bail!("--bayes-rope must be a number >= 0 (in score units, e.g. 0.01)");
            }
            if bayes_samples == 0 || bayes_samples > 10_000_000 {
                anyhow::bail!(
                    "--bayes-samples must be between 1 and 10^7 (baycomp's default: 50 000)"
                );
            }
            if !(bayes_prior > 0.0 && bayes_prior.is_finite()) {
                anyhow::bail!("--bayes-prior must be a positive number (baycomp's default: 0.5)");
            }
            if tie_tolerance.is_nan() || tie_tolerance < 0.0 {
                anyhow::bail!("--tie-tolerance must be a number >= 0");
            }
            let opts = ReportOptions {
                stats: Options {
                    alpha,
                    ci,
                    bootstrap_samples,
                    seed,
                    tie_tolerance,
                    bayes_rope,
                    bayes_samples,
                    bayes_prior,
                    zero_method,
                    missing,
                },
                unit: unit.kind(),
                found_nothing,
                per_budget,
                page: report::figures::Page {
                    width_in: width,
                    titles: !no_titles,
                },
                labels: match &labels {
                    Some(f) => report::labels::read_label_map(f)?,
                    None => Default::default(),
                },
                regret,
                traces,
                ..ReportOptions::default()
            };
            let t0 = std::time::Instant::now();
            let summary = match (results, scores) {
                (Some(dir), _) => {
                    let out = out.unwrap_or_else(|| dir.join("report"));
                    report::report_results(&dir, &out, &opts)?
                }
                (None, Some(csv)) => {
                    let stem = csv.file_stem().and_then(|s| s.to_str()).unwrap_or("scores");
                    let out = out.unwrap_or_else(|| csv.with_file_name(format!("{stem}-report")));
                    let format = report::ScoresFormat {
                        unit: unit_col,
                        policy: policy_col,
                        score: score_col,
                        wide,
                        average: average_repeats,
                    };
                    report::report_scores(&csv, &format, minimize, &out, &opts)?
                }
                (None, None) => unreachable!("clap requires one of them"),
            };
            print!("{}", summary.text);
            eprintln!(
                "wrote {} files to {} in {:.2} s",
                summary.files.len(),
                summary.out.display(),
                t0.elapsed().as_secs_f64()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Show {
            results,
            cell,
            list,
            limit,
            out,
        } => {
            if list {
                print!("{}", report::show::list_cells(&results, limit)?);
                return Ok(ExitCode::SUCCESS);
            }
            let cell = cell.context("give --cell ID or --list")?;
            let out = out.unwrap_or_else(|| results.join("cells"));
            let shown = report::show::show_cell(&results, cell, limit, Some(&out))?;
            print!("{}", shown.text);
            if let Some(png) = shown
                .files
                .iter()
                .find(|f| f.extension().is_some_and(|e| e == "png"))
            {
                eprintln!("wrote {}", png.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Reproduce {
            paper,
            threads,
            quiet,
        } => {
            let opts = banditbench::reproduce::ReproduceOptions {
                threads,
                quiet,
                ..Default::default()
            };
            let t0 = std::time::Instant::now();
            let files = match paper {
                Paper::Erucb => banditbench::reproduce::erucb::reproduce(&opts)?,
                Paper::Hamlet => banditbench::reproduce::hamlet::reproduce(&opts)?,
                Paper::Shang => banditbench::reproduce::shang::reproduce(&opts)?,
                Paper::MutantUcb => banditbench::reproduce::mutant_ucb::reproduce(&opts)?,
                Paper::AutoWeka => banditbench::reproduce::auto_weka::reproduce(&opts)?,
            };
            for f in &files {
                if f.extension().is_some_and(|e| e == "md") {
                    println!("{}", f.display());
                }
            }
            eprintln!(
                "reproduced {}: {} files in {:.1} s",
                paper
                    .to_possible_value()
                    .map_or(String::new(), |v| v.get_name().to_string()),
                files.len(),
                t0.elapsed().as_secs_f64()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Policies { name, world } => {
            let world = world.map(|w| match w.as_str() {
                "time-sliced" => WorldKind::TimeSliced,
                "pull-count" => WorldKind::PullCount,
                "synthetic" => WorldKind::Synthetic,
                _ => WorldKind::Pool,
            });
            print!(
                "{}",
                banditbench::policy::describe_registry(name.as_deref(), world)?
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            traces,
            seconds,
            report_rows,
            only,
            pool: pool_dir,
            report_policies,
            cash_observations,
            store_decisions,
            threads,
            write_cost_experiment,
            python,
        } => {
            if let Some(t) = threads {
                // As in `run`: bound polars' own pool too, before polars is first used.
                unsafe { std::env::set_var("POLARS_MAX_THREADS", t.to_string()) };
            }
            run_bench(
                &traces,
                &pool_dir,
                seconds,
                report_rows,
                &report_policies,
                cash_observations,
                &only,
            )?;
            let want = |what: Section| only.contains(&what);
            let scratch = std::env::temp_dir()
                .join(format!("banditbench-bench-store-{}", std::process::id()));
            if want(Section::WriteCost) {
                let w = bench::measure_write_cost(&write_cost_experiment, &scratch, threads)?;
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
            }
            if want(Section::Protocol) {
                let ts = banditbench::trace::load_trace_set(&traces, &Default::default())?;
                let t = bench::measure_protocol(&ts, &python, seconds)?;
                for pair in t.chunks(2) {
                    let (b, e) = (&pair[0], &pair[1]);
                    println!(
                        "protocol: {} {:.0} decisions/s ({} cells); {} through the protocol {:.0} decisions/s ({} cells): {:.1} us per decision, {:.0}x the built-in's time",
                        b.policy,
                        b.decisions_per_second(),
                        b.cells,
                        e.policy,
                        e.decisions_per_second(),
                        e.cells,
                        1e6 / e.decisions_per_second(),
                        b.decisions_per_second() / e.decisions_per_second()
                    );
                }
            }
            if want(Section::Store) {
                let m = bench::measure_store(store_decisions, &scratch, threads)?;
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
            }
            let _ = std::fs::remove_dir_all(&scratch);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn run(
    path: PathBuf,
    out: Option<PathBuf>,
    threads: Option<usize>,
    batch_size: Option<usize>,
    shard: Option<experiment::Shard>,
    quiet: bool,
    fresh: bool,
) -> Result<ExitCode> {
    if let Some(t) = threads {
        // polars keeps its own thread pool (for parquet and CSV), sized once from this variable
        // on first use: bound it by --threads as well. Nothing has used polars yet, and no other
        // thread runs, so changing the environment here is sound.
        unsafe { std::env::set_var("POLARS_MAX_THREADS", t.to_string()) };
    }
    let opts = RunOptions {
        out,
        threads,
        batch_size,
        shard,
        fresh,
    };
    let exp = experiment::load_experiment(&path)?;
    let (summary, what) = if exp.world.kind() == banditbench::replay::WorldKind::Pool {
        let data = experiment::pool::prepare_pool(&exp)?;
        if data.pool.missing_curves > 0 {
            eprintln!(
                "warning: the pool {} is incomplete ({} curves missing or short); configurations without a curve are never drawn",
                data.pool.manifest.name, data.pool.missing_curves
            );
        }
        if !data.dropped.is_empty() {
            eprintln!(
                "warning: {} tasks dropped, the pool has no curve for them: {}",
                data.dropped.len(),
                data.dropped.join(", ")
            );
        }
        let what = format!(
            "{} of the recommended configuration (validation)",
            data.pool.manifest.metric
        );
        (
            experiment::run_pool_with_progress(&exp, &data, &opts, quiet)?,
            what,
        )
    } else {
        let (exp, ts) = experiment::prepare(&path)?;
        warn_traces(&exp, &ts);
        (
            experiment::run_with_progress(&exp, &ts, &opts, quiet)?,
            format!("best {} found", ts.manifest.metric),
        )
    };
    if let Some(s) = shard {
        // A shard's ranking would rest on a share of the cells: say how to combine them instead.
        println!(
            "shard {} finished: {} cells in {}; when all {} shards have finished, combine them with: banditbench merge {}/*-of-{} --out DIR",
            s.label(),
            summary.total_cells,
            summary.out.display(),
            s.count,
            summary
                .out
                .parent()
                .map_or_else(|| ".".into(), |p| p.display().to_string()),
            s.count
        );
        return Ok(ExitCode::SUCCESS);
    }
    print_ranking(&summary.out, &what)
}

fn warn_traces(exp: &experiment::Experiment, ts: &banditbench::trace::TraceSet) {
    for n in &ts.notes {
        eprintln!("note: {n}");
    }
    for w in experiment::budget_warnings(exp, ts) {
        eprintln!("warning: {w}");
    }
    for d in &ts.dropped {
        eprintln!(
            "warning: task {}/{} dropped: it lacks {}",
            d.dataset,
            d.run,
            d.missing.join(", ")
        );
    }
}

fn print_ranking(out: &std::path::Path, what: &str) -> Result<ExitCode> {
    let (ranks, units) = report::ranking(out)?;
    if let Some(w) = &units.exhausted {
        eprintln!("warning: {w}");
    }
    println!(
        "\nMean rank of the {what} (1 = best). {}\n",
        units.table.describe()
    );
    let width = ranks
        .iter()
        .map(|r| r.policy.len())
        .max()
        .unwrap_or(6)
        .max(6);
    println!(
        "{:>4}  {:<width$}  {:>9}  {:>10}",
        "#", "policy", "mean rank", "mean score"
    );
    for (i, r) in ranks.iter().enumerate() {
        println!(
            "{:>4}  {:<width$}  {:>9.3}  {:>10.4}",
            i + 1,
            r.policy,
            r.mean_rank,
            r.mean_score
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(
    dirs: &[PathBuf],
    allow_missing_arms: bool,
    allow_incomplete: bool,
) -> Result<ExitCode> {
    let mut bad = 0;
    for d in dirs {
        if pool::is_pool(d) {
            match pool::load_pool(d, allow_incomplete) {
                Ok(p) => println!(
                    "ok: {} ({}): configuration pool, {} tasks, {}, {} units recorded{}",
                    d.display(),
                    p.manifest.name,
                    p.tasks.len(),
                    p.configurations_text(),
                    p.n_units_recorded(),
                    if p.missing_curves > 0 {
                        format!(
                            ", incomplete ({} curves missing or short)",
                            p.missing_curves
                        )
                    } else {
                        String::new()
                    }
                ),
                Err(e) => {
                    bad += 1;
                    println!("invalid: {e:#}");
                }
            }
            continue;
        }
        let opts = LoadOptions {
            allow_missing_arms,
            ..LoadOptions::default()
        };
        match load_trace_set(d, &opts) {
            Ok(ts) => {
                println!(
                    "ok: {} ({}): {} tasks, {} learners, {} evaluations",
                    d.display(),
                    ts.manifest.name,
                    ts.tasks.len(),
                    ts.learners.len(),
                    ts.n_evaluations()
                );
                for t in &ts.dropped {
                    println!(
                        "  warning: task {}/{} dropped: it lacks {}",
                        t.dataset,
                        t.run,
                        t.missing.join(", ")
                    );
                }
            }
            Err(e) => {
                bad += 1;
                println!("invalid: {e:#}");
            }
        }
    }
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--unit`: a unit kind, or `auto` (the most independent unit the results allow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum UnitArg {
    Auto,
    Dataset,
    Task,
    TaskBudget,
    TaskBudgetRepetition,
}

impl UnitArg {
    fn kind(self) -> Option<UnitKind> {
        match self {
            UnitArg::Auto => None,
            UnitArg::Dataset => Some(UnitKind::Dataset),
            UnitArg::Task => Some(UnitKind::Task),
            UnitArg::TaskBudget => Some(UnitKind::TaskBudget),
            UnitArg::TaskBudgetRepetition => Some(UnitKind::TaskBudgetRepetition),
        }
    }
}

/// The papers `reproduce` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Paper {
    Erucb,
    Hamlet,
    Shang,
    /// Brégère & Keisler 2024: Mutant-UCB's Tables 1 and 2 in shape on sklearn-grid
    MutantUcb,
    /// Thornton et al. 2013: Auto-WEKA's CASH comparison on sklearn-random and sklearn-grid
    AutoWeka,
}

/// A measurement of `banditbench bench --only`.
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
}

impl Section {
    /// Measurements that take minutes, disk or Python run only when named.
    fn only_when_named(self) -> bool {
        matches!(
            self,
            Section::Store | Section::WriteCost | Section::Protocol
        )
    }
}

fn run_bench(
    traces: &std::path::Path,
    pool_dir: &std::path::Path,
    seconds: f64,
    report_rows: usize,
    report_policies: &[usize],
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
        let dir = pool_dir;
        let pool = pool::load_pool(dir, true)?;
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
    }
    if want(Section::Cash) {
        let dir = std::path::Path::new("traces/sklearn-random");
        let pool = banditbench::trace::joint::pool_from_trace_set(dir)?;
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
    }
    if want(Section::ReportPolicies) {
        for &policies in report_policies {
            let dir = std::env::temp_dir().join(format!(
                "banditbench-bench-{}-{policies}",
                std::process::id()
            ));
            let m = bench::measure_report(100, policies, &dir)?;
            println!(
                "report on {} units x {} policies (every figure and table): {:.2} s",
                m.units, m.policies, m.seconds
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    Ok(ExitCode::SUCCESS)
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

/// `--width`: column, page, or inches.
fn figure_width(s: &str) -> Result<f64, String> {
    report::figures::Page::parse_width(s)
}
