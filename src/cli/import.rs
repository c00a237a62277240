use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::import::request::{self, Common};
use crate::import::{blackbox, carps, deepcave, hposuite, optuna, syne_tune};

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
        common: CommonArgs,
        #[command(flatten)]
        own: SyneTuneArgs,
    },
    /// Optuna's storages: JournalStorage files, or SQLite storages (.db, .sqlite, .sqlite3).
    /// One study is one run; --names gives how its name holds the policy, task and seed
    Optuna {
        /// Journal files or SQLite files
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        own: OptunaArgs,
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
        common: CommonArgs,
        #[command(flatten)]
        own: CarpsArgs,
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
        common: CommonArgs,
        #[command(flatten)]
        own: HposuiteArgs,
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
        common: CommonArgs,
        #[command(flatten)]
        own: DeepcaveArgs,
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
        #[command(flatten)]
        own: BlackboxArgs,
    },
}

#[derive(clap::Args)]
struct SyneTuneArgs {
    /// The metadata key naming the policy [default: algorithm, else method, else
    /// scheduler_name]
    #[arg(long)]
    policy_key: Option<String>,
    /// The metadata key naming the task (dataset, dataset/run or dataset/run/learner)
    #[arg(long, default_value_t = syne_tune::Request::default().task_key)]
    task_key: String,
    /// The metadata key giving the seed
    #[arg(long, default_value_t = syne_tune::Request::default().seed_key)]
    seed_key: String,
    /// The metric [default: the first of metadata.json's metric_names]
    #[arg(long)]
    metric: Option<String>,
    /// The column holding each result's fidelity (epochs, steps) [default: the scheduler's
    /// time_attr, when metadata.json has one]
    #[arg(long)]
    fidelity: Option<String>,
}

impl From<SyneTuneArgs> for syne_tune::Request {
    fn from(a: SyneTuneArgs) -> Self {
        syne_tune::Request {
            policy_key: a.policy_key,
            task_key: a.task_key,
            seed_key: a.seed_key,
            metric: a.metric,
            fidelity: a.fidelity,
        }
    }
}

#[derive(clap::Args)]
struct OptunaArgs {
    /// How study names hold the policy, task and seed: placeholders {policy}, {task},
    /// {dataset}, {seed}; each takes the text up to the separator after it. Studies that
    /// do not follow it are skipped (and listed)
    #[arg(long, default_value_t = optuna::Request::default().names)]
    names: String,
    /// The study user attribute naming the task, when --names has no {task} or {dataset}
    #[arg(long, default_value_t = optuna::Request::default().task_attr)]
    task_attr: String,
    /// What the clock counts: trials (finished trials, in order of completion), seconds
    /// (since the study's first trial started: the real run's wall clock), or attr:NAME
    /// (the running sum of a trial user attribute, e.g. a tabular benchmark's recorded
    /// cost; one sequential worker)
    #[arg(long, default_value_t = optuna::Request::default().clock)]
    clock: optuna::Clock,
}

impl From<OptunaArgs> for optuna::Request {
    fn from(a: OptunaArgs) -> Self {
        optuna::Request {
            names: a.names,
            task_attr: a.task_attr,
            clock: a.clock,
        }
    }
}

#[derive(clap::Args)]
struct CarpsArgs {
    /// The config key naming the policy
    #[arg(long, default_value_t = carps::Request::default().policy_key)]
    policy_key: String,
    /// The config key naming the task (dataset, dataset/run or dataset/run/learner; any
    /// other id is kept whole as the dataset, '/' read as '-')
    #[arg(long, default_value_t = carps::Request::default().task_key)]
    task_key: String,
    /// The config key giving the seed
    #[arg(long, default_value_t = carps::Request::default().seed_key)]
    seed_key: String,
    /// What the clock counts: trials (n_trials: a multi-fidelity evaluation counts its
    /// fraction of the full budget; CARP-S's own axis), calls (n_function_calls), or
    /// seconds (CARP-S's elapsed time: start time since the first evaluation plus the
    /// running sum of virtual_time)
    #[arg(long, default_value_t = carps::Request::default().clock)]
    clock: carps::Clock,
}

impl From<CarpsArgs> for carps::Request {
    fn from(a: CarpsArgs) -> Self {
        carps::Request {
            policy_key: a.policy_key,
            task_key: a.task_key,
            seed_key: a.seed_key,
            clock: a.clock,
        }
    }
}

#[derive(clap::Args)]
struct HposuiteArgs {
    /// The column naming the task (dataset, dataset/run or dataset/run/learner; any other
    /// name is kept whole as the dataset, '/' read as '-'; --task sets it for every run)
    #[arg(long, default_value_t = hposuite::Request::default().task_key)]
    task_key: String,
}

impl From<HposuiteArgs> for hposuite::Request {
    fn from(a: HposuiteArgs) -> Self {
        hposuite::Request {
            task_key: a.task_key,
        }
    }
}

#[derive(clap::Args)]
struct DeepcaveArgs {
    /// How run folders' names hold the policy, task and seed: placeholders {policy},
    /// {task}, {dataset}, {seed} (folders that do not follow it are skipped and listed);
    /// without {seed}, the table's seed column when it holds one seed, else 0
    #[arg(long, default_value_t = deepcave::Request::default().names)]
    names: String,
    /// The objective [default: the first metric: column]
    #[arg(long)]
    metric: Option<String>,
    /// What the clock counts: seconds (end_time since the run's first start_time) or trials
    /// (finished trials, in order of their end)
    #[arg(long, default_value_t = deepcave::Request::default().clock)]
    clock: deepcave::Clock,
}

impl From<DeepcaveArgs> for deepcave::Request {
    fn from(a: DeepcaveArgs) -> Self {
        deepcave::Request {
            names: a.names,
            metric: a.metric,
            clock: a.clock,
        }
    }
}

#[derive(clap::Args)]
struct BlackboxArgs {
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
}

impl From<BlackboxArgs> for blackbox::Options {
    fn from(a: BlackboxArgs) -> Self {
        blackbox::Options {
            metric: a.metric,
            direction: a.direction,
            test_metric: a.test_metric,
            cost: a.cost,
            elapsed: a.elapsed,
            learner: a.learner,
            name: a.name,
        }
    }
}

#[derive(clap::Args)]
struct CommonArgs {
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
    /// Runs of several objectives: the pool they were made on (e.g. traces/nasbench201); each
    /// task's true Pareto front and reference point come from it, as a `run` takes them
    #[arg(long)]
    pool: Option<PathBuf>,
    /// Runs of several objectives: the pool's name of each value the runs report, in order,
    /// 1-NAME for a value reported as one minus the pool's [default: the names the tool records,
    /// e.g. Optuna's metric names]
    #[arg(long, value_delimiter = ',')]
    objectives: Option<Vec<String>>,
    /// Runs of several objectives: the reference point per task, `nadir` (the true front's
    /// worst value per objective plus the margin), `worst` or a CSV (dataset, run, one column
    /// per objective) [default: nadir]
    #[arg(long)]
    reference: Option<String>,
    /// Runs of several objectives: the share of the range added beyond the nadir or the worst
    /// value [default: 0.1]
    #[arg(long)]
    reference_margin: Option<f64>,
}

impl CommonArgs {
    /// (out, the shared options).
    fn split(self) -> (PathBuf, Common) {
        (
            self.out,
            Common {
                budget: self.budget,
                task: self.task,
                prefix: self.prefix,
                one_minus: self.one_minus,
                pool: self.pool,
                objectives: self.objectives,
                reference: self.reference,
                reference_margin: self.reference_margin,
            },
        )
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let (paths, common, tool) = match args.tool {
        Tool::Blackbox { dir, out, own } => {
            print!("{}", request::import_pool(&dir, &out, &own.into())?);
            say!(
                "wrote {} in {:.2} s; see it with: banditbench traces inspect {}",
                out.display(),
                t0.elapsed().as_secs_f64(),
                out.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Tool::SyneTune { paths, common, own } => {
            (paths, common, request::Tool::SyneTune(own.into()))
        }
        Tool::Optuna { paths, common, own } => (paths, common, request::Tool::Optuna(own.into())),
        Tool::Carps { paths, common, own } => (paths, common, request::Tool::Carps(own.into())),
        Tool::Hposuite { paths, common, own } => {
            (paths, common, request::Tool::Hposuite(own.into()))
        }
        Tool::Deepcave { paths, common, own } => {
            (paths, common, request::Tool::Deepcave(own.into()))
        }
    };
    let (out, common) = common.split();
    let imported = request::import(&request::ImportRequest {
        tool,
        paths,
        out,
        common,
    })?;
    for n in &imported.notes {
        say!("note: {n}");
    }
    print!("{}", imported.describe());
    say!(
        "wrote {} in {:.2} s; rank it with: banditbench report {}",
        imported.out.display(),
        t0.elapsed().as_secs_f64(),
        imported.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tools_flags_are_the_keys_python_may_give() {
        // Python's import_runs(tool, paths, out, **options) passes keys by name: each flag of
        // each tool must be one of its keys, and each key a flag.
        let cmd = crate::cli::command();
        let import = cmd.find_subcommand("import").unwrap();
        let mut tools = Vec::new();
        for sub in import.get_subcommands() {
            let tool = sub.get_name().to_string();
            let flags = crate::cli::flag_ids(sub, &["paths", "dir"]);
            let mut keys: Vec<String> =
                request::keys(&tool).iter().map(|k| k.to_string()).collect();
            if tool == "blackbox" {
                keys.retain(|k| {
                    ![
                        "budget",
                        "task",
                        "prefix",
                        "one_minus",
                        "pool",
                        "objectives",
                        "reference",
                        "reference_margin",
                    ]
                    .contains(&k.as_str())
                });
            }
            keys.sort();
            assert_eq!(flags, keys, "{tool}");
            tools.push(tool);
        }
        let mut known: Vec<String> = request::TOOLS.iter().map(|t| t.to_string()).collect();
        known.push("blackbox".into());
        tools.sort();
        known.sort();
        assert_eq!(tools, known);
    }

    #[test]
    fn the_command_lines_defaults_are_the_librarys() {
        for tool in request::TOOLS {
            let Ok(crate::cli::Cli {
                command: crate::cli::Command::Import(Args { tool: parsed }),
            }) = crate::cli::parse_from(["banditbench", "import", tool, "p", "--out", "o"])
            else {
                panic!("import {tool} does not parse")
            };
            let by_flags = match parsed {
                Tool::SyneTune { own, .. } => request::Tool::SyneTune(own.into()),
                Tool::Optuna { own, .. } => request::Tool::Optuna(own.into()),
                Tool::Carps { own, .. } => request::Tool::Carps(own.into()),
                Tool::Hposuite { own, .. } => request::Tool::Hposuite(own.into()),
                Tool::Deepcave { own, .. } => request::Tool::Deepcave(own.into()),
                Tool::Blackbox { .. } => panic!("{tool} is not a run-log tool"),
            };
            let by_name = request::request_from_json(tool, vec![], "o".into(), "{}")
                .unwrap()
                .tool;
            assert_eq!(format!("{by_flags:?}"), format!("{by_name:?}"), "{tool}");
        }
    }
}
