use std::path::PathBuf;
use std::process::ExitCode;

use crate::trace::{LoadOptions, load_trace_set, pool};
use anyhow::Result;
use clap::Subcommand;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TracesCommand,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args { command } = args;
    match command {
        TracesCommand::Validate {
            dirs,
            allow_missing_arms,
            allow_incomplete,
        } => validate(&dirs, allow_missing_arms, allow_incomplete),
        TracesCommand::List { dir } => {
            print!("{}", crate::trace::inspect::list(&dir)?);
            Ok(ExitCode::SUCCESS)
        }
        TracesCommand::Inspect {
            dirs,
            allow_missing_arms,
            allow_incomplete,
        } => {
            for d in &dirs {
                let d = &crate::bundled::folder(d);
                if d.is_file() {
                    say!(
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
                print!("{}", crate::trace::inspect::summary(&ts));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
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

fn validate(
    dirs: &[PathBuf],
    allow_missing_arms: bool,
    allow_incomplete: bool,
) -> Result<ExitCode> {
    let mut bad = 0;
    for d in dirs {
        let d = &crate::bundled::folder(d);
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
