use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::import::{
    self, Import, NameRule, blackbox, carps, deepcave, hposuite, optuna, syne_tune,
};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    tool: Tool,
}

#[derive(clap::Subcommand)]
enum Tool {
    /// Syne Tune's experiment folders (results.csv.zip and metadata.json each; or folders
    /// holding them). One folder is one run: its policy, task and seed come from metadata.json
    /// (keys `algorithm` or `method` or the scheduler's name, `task` or `benchmark`, `seed`);
    /// the clock is `st_tuner_time` (seconds; simulated with Syne Tune's simulator backend)
    SyneTune {
        /// Experiment folders, or folders holding them
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// The metadata key naming the policy [default: algorithm, else method, else
        /// scheduler_name]
        #[arg(long)]
        policy_key: Option<String>,
        /// The metadata key naming the task (dataset, dataset/run or dataset/run/learner)
        #[arg(long, default_value = "task")]
        task_key: String,
        /// The metadata key giving the seed
        #[arg(long, default_value = "seed")]
        seed_key: String,
        /// The metric [default: the first of metadata.json's metric_names]
        #[arg(long)]
        metric: Option<String>,
        /// The column holding each result's fidelity (epochs, steps) [default: the scheduler's
        /// time_attr, when metadata.json has one]
        #[arg(long)]
        fidelity: Option<String>,
    },
    /// Optuna's storages: JournalStorage files, or SQLite storages (.db, .sqlite, .sqlite3).
    /// One study is one run; --names gives how its name holds the policy, task and seed
    Optuna {
        /// Journal files or SQLite files
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// How study names hold the policy, task and seed: placeholders {policy}, {task},
        /// {dataset}, {seed}; each takes the text up to the separator after it. Studies that
        /// do not follow it are skipped (and listed)
        #[arg(long, default_value = "{policy}-{seed}")]
        names: String,
        /// The study user attribute naming the task, when --names has no {task} or {dataset}
        #[arg(long, default_value = "task")]
        task_attr: String,
        /// What the clock counts: trials (finished trials, in order of completion), seconds
        /// (since the study's first trial started: the real run's wall clock), or attr:NAME
        /// (the running sum of a trial user attribute, e.g. a tabular benchmark's recorded
        /// cost; one sequential worker)
        #[arg(long, default_value = "trials", value_parser = optuna::Clock::parse)]
        clock: optuna::Clock,
    },
    /// CARP-S's run folders (trial_logs.jsonl and .hydra/config.yaml each; or folders holding
    /// them, such as its runs/). One folder is one run: its policy, task and seed come from
    /// Hydra's config (optimizer_id, task_id, seed); CARP-S minimises `cost`; each distinct
    /// configuration is a trial, its budget the fidelity
    Carps {
        /// Run folders, or folders holding them
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// The config key naming the policy
        #[arg(long, default_value = "optimizer_id")]
        policy_key: String,
        /// The config key naming the task (dataset, dataset/run or dataset/run/learner; any
        /// other id is kept whole as the dataset, '/' read as '-')
        #[arg(long, default_value = "task_id")]
        task_key: String,
        /// The config key giving the seed
        #[arg(long, default_value = "seed")]
        seed_key: String,
        /// What the clock counts: trials (n_trials: a multi-fidelity evaluation counts its
        /// fraction of the full budget; CARP-S's own axis), calls (n_function_calls), or
        /// seconds (CARP-S's elapsed time: start time since the first evaluation plus the
        /// running sum of virtual_time)
        #[arg(long, default_value = "trials", value_parser = carps::Clock::parse)]
        clock: carps::Clock,
    },
    /// hposuite's run files (one <run name>.parquet per run), or its study folders (searched
    /// for them). Policy: optimizer.name (with optimizer.hp_str unless "default"); task:
    /// benchmark.name; seed: run.seed; the objective and its direction from the problem; the
    /// clock is result.budget_used_total (trials, or cost under a CostBudget)
    Hposuite {
        /// Run files or study folders
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// The column naming the task (dataset, dataset/run or dataset/run/learner; any other
        /// name is kept whole as the dataset, '/' read as '-'; --task sets it for every run)
        #[arg(long, default_value = "benchmark.name")]
        task_key: String,
    },
    /// DeepCAVE's DataFrame format: run folders with trials.csv and configspace.csv (or folders
    /// holding them). DeepCAVE names neither optimiser nor task: --names reads them from the
    /// folder's name, --task gives the task otherwise; the objective is a `metric:NAME [LOW;
    /// HIGH] (maximize|minimize)` column
    Deepcave {
        /// Run folders, or folders holding them
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// How run folders' names hold the policy, task and seed: placeholders {policy},
        /// {task}, {dataset}, {seed} (folders that do not follow it are skipped and listed);
        /// without {seed}, the table's seed column when it holds one seed, else 0
        #[arg(long, default_value = "{policy}")]
        names: String,
        /// The objective [default: the first metric: column]
        #[arg(long)]
        metric: Option<String>,
        /// What the clock counts: seconds (end_time since the run's first start_time) or trials
        /// (finished trials, in order of their end)
        #[arg(long, default_value = "seconds", value_parser = deepcave::Clock::parse)]
        clock: deepcave::Clock,
    },
    /// A blackbox in Syne Tune's blackbox repository format (hyperparameters.parquet,
    /// configspace.json, objectives_evaluations.npy, fidelities_values.npy, metadata.json, as
    /// its serialize writes them: FCNet, NAS-Bench-201, LCBench, PD1, HPO-B, TabRepo, ...) into a
    /// banditbench pool: tasks become datasets, seeds runs, fidelity levels units 1..F, the
    /// configurations one learner's grid. Not a run log: `run` and every policy then replay it
    Blackbox {
        /// The blackbox's folder (the one Syne Tune's serialize wrote)
        dir: PathBuf,
        /// The pool folder to write (must not exist)
        #[arg(long)]
        out: PathBuf,
        /// The objective that is the score [default: the first objective]
        #[arg(long)]
        metric: Option<String>,
        /// Whether the score is maximised or minimised [default: metadata.json's direction]
        #[arg(long)]
        direction: Option<String>,
        /// The objective that is the test score (none: NaN)
        #[arg(long)]
        test_metric: Option<String>,
        /// The objective holding the seconds of each fidelity step
        #[arg(long, conflicts_with = "elapsed")]
        cost: Option<String>,
        /// The objective holding the seconds up to each fidelity (cumulative, as Syne Tune's
        /// elapsed_time_attr); each unit's seconds are the differences
        #[arg(long)]
        elapsed: Option<String>,
        /// The learner's name [default: metadata.json's learner, else the folder's name]
        #[arg(long)]
        learner: Option<String>,
        /// The pool's name [default: the --out folder's name]
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(clap::Args)]
struct Common {
    /// The results folder to write (must not exist)
    #[arg(long)]
    out: PathBuf,
    /// The budget on the clock: later results are left out [default: the latest time any run
    /// reached]
    #[arg(long, allow_negative_numbers = true)]
    budget: Option<f64>,
    /// The task of every run, overriding what the files say (dataset, dataset/run or
    /// dataset/run/learner)
    #[arg(long)]
    task: Option<String>,
    /// Put before every policy's name, so they stay apart from banditbench's own in a joint
    /// report [default: the tool's name and a colon, e.g. syne-tune:]
    #[arg(long)]
    prefix: Option<String>,
    /// The tool records one minus the score (an error rate where the score is an accuracy, as
    /// CARP-S's cost = 1 - accuracy): import 1 - value, in the opposite direction, so the runs
    /// rank beside those that record the score itself
    #[arg(long)]
    one_minus: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    if let Tool::Blackbox {
        dir,
        out,
        metric,
        direction,
        test_metric,
        cost,
        elapsed,
        learner,
        name,
    } = args.tool
    {
        let opts = blackbox::Options {
            metric,
            direction,
            test_metric,
            cost,
            elapsed,
            learner,
            name,
        };
        let w = blackbox::import(&dir, &out, &opts)?;
        println!(
            "imported a pool of {} configurations on {} tasks x {} runs, {} units each{}",
            w.configs,
            w.tasks,
            w.runs,
            w.units,
            if w.failed_curves > 0 {
                format!(
                    " ({} curves end in a missing score, kept as failed units)",
                    w.failed_curves
                )
            } else {
                String::new()
            }
        );
        eprintln!(
            "wrote {} in {:.2} s; see it with: banditbench traces inspect {}",
            out.display(),
            t0.elapsed().as_secs_f64(),
            out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let (imp, common, notes) = match args.tool {
        Tool::Blackbox { .. } => unreachable!("handled above"),
        Tool::SyneTune {
            paths,
            common,
            policy_key,
            task_key,
            seed_key,
            metric,
            fidelity,
        } => {
            let opts = syne_tune::Options {
                policy_key,
                task: common.task.clone(),
                task_key,
                seed_key,
                metric,
                fidelity,
                prefix: common.prefix.clone().unwrap_or_else(|| "syne-tune:".into()),
            };
            let (runs, maximize, metric, files) = syne_tune::read(&paths, &opts)?;
            let how = format!(
                "policy from {}, task from {}, seed from '{}', clock st_tuner_time",
                opts.policy_key
                    .as_deref()
                    .map(|k| format!("'{k}'"))
                    .unwrap_or_else(|| "'algorithm'/'method'/'scheduler_name'".into()),
                opts.task
                    .as_deref()
                    .map(|t| format!("--task {t}"))
                    .unwrap_or_else(|| format!("'{}'", opts.task_key)),
                opts.seed_key
            );
            let imp = Import {
                tool: "syne-tune",
                runs,
                maximize,
                metric,
                budget_unit: "seconds".into(),
                files,
                how,
            };
            (imp, common, Vec::new())
        }
        Tool::Optuna {
            paths,
            common,
            names,
            task_attr,
            clock,
        } => {
            let opts = optuna::Options {
                names: NameRule::parse(&names)?,
                task: common.task.clone(),
                task_attr,
                clock: clock.clone(),
                prefix: common.prefix.clone().unwrap_or_else(|| "optuna:".into()),
            };
            let read = optuna::read(&paths, &opts)?;
            let notes = import::skipped_note("studies", &names, &read.skipped);
            let imp = Import {
                tool: "optuna",
                runs: read.runs,
                maximize: read.maximize,
                metric: "the study's objective".into(),
                budget_unit: clock.unit().into(),
                files: paths.clone(),
                how: read.how,
            };
            (imp, common, notes)
        }
        Tool::Carps {
            paths,
            common,
            policy_key,
            task_key,
            seed_key,
            clock,
        } => {
            let opts = carps::Options {
                clock,
                task: common.task.clone(),
                task_key,
                policy_key,
                seed_key,
                prefix: common.prefix.clone().unwrap_or_else(|| "carps:".into()),
            };
            let (runs, files) = carps::read(&paths, &opts)?;
            let how = format!(
                "policy from '{}', task from {}, seed from '{}' (.hydra/config.yaml), clock {}",
                opts.policy_key,
                opts.task
                    .as_deref()
                    .map(|t| format!("--task {t}"))
                    .unwrap_or_else(|| format!("'{}'", opts.task_key)),
                opts.seed_key,
                clock.unit()
            );
            let imp = Import {
                tool: "carps",
                runs,
                maximize: false,
                metric: "cost".into(),
                budget_unit: clock.unit().into(),
                files,
                how,
            };
            (imp, common, Vec::new())
        }
        Tool::Deepcave {
            paths,
            common,
            names,
            metric,
            clock,
        } => {
            let opts = deepcave::Options {
                names: NameRule::parse(&names)?,
                task: common.task.clone(),
                metric,
                clock,
                prefix: common.prefix.clone().unwrap_or_else(|| "deepcave:".into()),
            };
            let read = deepcave::read(&paths, &opts)?;
            let notes = import::skipped_note("run folders", &names, &read.skipped);
            let how = format!(
                "policy{} from the folder's name by '{names}', clock {}",
                if common.task.is_some() {
                    ""
                } else {
                    " and task"
                },
                clock.unit()
            );
            let imp = Import {
                tool: "deepcave",
                runs: read.runs,
                maximize: read.maximize,
                metric: read.metric,
                budget_unit: clock.unit().into(),
                files: read.files,
                how,
            };
            (imp, common, notes)
        }
        Tool::Hposuite {
            paths,
            common,
            task_key,
        } => {
            let opts = hposuite::Options {
                task: common.task.clone(),
                task_key,
                prefix: common.prefix.clone().unwrap_or_else(|| "hposuite:".into()),
            };
            let read = hposuite::read(&paths, &opts)?;
            let how = format!(
                "policy from 'optimizer.name' and 'optimizer.hp_str', task from {}, seed from 'run.seed', clock 'result.budget_used_total' ({})",
                opts.task
                    .as_deref()
                    .map(|t| format!("--task {t}"))
                    .unwrap_or_else(|| format!("'{}'", opts.task_key)),
                read.budget_unit
            );
            let imp = Import {
                tool: "hposuite",
                runs: read.runs,
                maximize: read.maximize,
                metric: read.metric,
                budget_unit: read.budget_unit,
                files: read.files,
                how,
            };
            (imp, common, Vec::new())
        }
    };
    let mut imp = imp;
    if common.one_minus {
        for r in &mut imp.runs {
            for e in &mut r.evals {
                e.value = 1.0 - e.value;
            }
        }
        imp.maximize = !imp.maximize;
        imp.metric = format!("1 - {}", imp.metric);
        imp.how.push_str(", scores 1 - value (--one-minus)");
    }
    let w = import::write(&imp, &common.out, common.budget)?;
    for n in notes {
        eprintln!("note: {n}");
    }
    println!(
        "imported {} runs ({} policies: {}; {} tasks) from {}: {} results within the budget of {} {}{}",
        w.cells,
        w.policies.len(),
        w.policies.join(", "),
        w.tasks,
        imp.tool,
        w.decisions,
        w.budget,
        imp.budget_unit,
        if w.cut > 0 {
            format!(" ({} later ones left out)", w.cut)
        } else {
            String::new()
        }
    );
    if w.failures > 0 || w.pending > 0 {
        println!(
            "{} failed trials kept as decisions without a value; {} pending (running or waiting) trials left out",
            w.failures, w.pending
        );
    }
    eprintln!(
        "wrote {} in {:.2} s; rank it with: banditbench report {}",
        common.out.display(),
        t0.elapsed().as_secs_f64(),
        common.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
