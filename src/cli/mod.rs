//! The command line: one file per command, each with its arguments (clap) and what it does.
//! The library does the work and never prints; these files print what it returns.

/// `eprintln!` that never panics: a line for a stderr that cannot be written (a closed pipe) is
/// dropped and the command goes on (`progress::say`).
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::progress::say(&format!($($arg)*))
    };
}

mod bench;
mod cache;
mod import;
mod merge;
mod policies;
mod progress;
mod report;
mod reproduce;
mod run;
mod show;
mod slurm;
mod traces;

use std::process::ExitCode;

use anyhow::Result;
use clap::{FromArgMatches, Parser, Subcommand};

/// The `banditbench` command: parse the command line, run the command, print its error.
pub fn main() -> ExitCode {
    crate::tune_allocator();
    quiet_on_closed_stdout();
    let args = match parse_from(std::env::args_os()) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    if let Some(t) = args.threads() {
        // polars keeps its own thread pool (for parquet and CSV), sized once from this variable
        // on first use: bound it by --threads as well. Nothing has used polars yet and no other
        // thread runs, so changing the environment here is sound. Only the binary does it: in a
        // live Python interpreter other threads may read the environment.
        unsafe { std::env::set_var("POLARS_MAX_THREADS", t.to_string()) };
    }
    match dispatch(args) {
        Ok(code) => code,
        Err(e) => {
            say!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// A stdout whose reader went away (`banditbench run ... | head -3`) ends the command quietly with
/// the status a shell gives a process killed by SIGPIPE (141), as `cat` and `grep` end, instead
/// of a panic's message: Rust ignores SIGPIPE, so `println!` panics there. Every command prints
/// to stdout only what it made, after its results are written (a run's ranking), so none is lost.
/// A closed stderr is not this case: its lines are dropped and the work goes on
/// (`progress::say`).
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = crate::experiment::panic_message(info.payload());
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info)
    }));
}

/// The command line's grammar, with negative numbers taken as values everywhere: `--budget -5`
/// then reaches the option's own check ("must be a positive number"), where clap alone would
/// answer with advice to write `-- -5`, which does not work for an option.
pub(crate) fn command() -> clap::Command {
    fn negative_numbers(c: clap::Command) -> clap::Command {
        c.allow_negative_numbers(true)
            .mut_subcommands(negative_numbers)
    }
    negative_numbers(<Cli as clap::CommandFactory>::command())
}

/// Parse a command line (program name first) by [`command`]'s grammar: the binary and Python's
/// `banditbench.cli` parse alike.
pub(crate) fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    command()
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m))
}

#[derive(Parser)]
#[command(
    name = "banditbench",
    version,
    about = "Replay recorded AutoML tuning traces under bandit policies and rank the policies",
    long_about = "Replay recorded AutoML tuning traces (trace sets under traces/) under \
algorithm-selection and hyper-parameter bandit policies, in parallel and deterministically, \
and rank the policies.\n\nStart with: banditbench run experiments/quickstart.toml"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run an experiment file: expand its cells, replay them in parallel, write results/<name>/
    /// and print the mean rank of every policy. Rerunning skips finished cells.
    Run(run::Args),
    /// The cell cache of `run --cache`: what it holds, and pruning it
    Cache(cache::Args),
    /// Combine the finished shards of one experiment (`run --shard I/N`) into one results folder,
    /// byte for byte what an unsharded run writes. Checks that the folders come from the same
    /// experiment and trace set and that no cell is missing or duplicated.
    Merge(merge::Args),
    /// Write a Slurm job array for an experiment: one array task per shard (`run --shard I/N`)
    /// and a merge job that runs when all have finished; with --submit, submit both with sbatch
    Slurm(slurm::Args),
    /// Statistics, tables and figures from a results folder (or any table of scores):
    /// ranks.csv, summary.csv, labels.csv, tests.json, report.md, report.tex, ranking.tex, and
    /// every figure as PDF, SVG, PNG (300 dpi) and CSV
    Report(report::Args),
    /// Import another tool's run logs (Syne Tune, Optuna, CARP-S, hposuite, DeepCAVE) into a
    /// results folder, so that `report` ranks them and draws their anytime curves, alone or
    /// beside banditbench's runs; or a Syne Tune blackbox table into a pool (`import blackbox`)
    Import(import::Args),
    /// Show one cell of a results folder: its row of runs.parquet, its decisions, and a figure
    /// of its trajectory (incumbent and revealed scores against the budget used; with several
    /// objectives also the archive's hypervolume regret)
    Show(show::Args),
    /// Reproduce a paper's tables and figures: run its experiments, then write results/<paper>/
    Reproduce(reproduce::Args),
    /// Check and summarise trace sets
    Traces(traces::Args),
    /// List every policy: its parameters with defaults, the worlds it supports and its source
    Policies(policies::Args),
    /// Measure replay throughput (UCB1, one thread) and trace-set load time and memory
    Bench(bench::Args),
}

impl Cli {
    /// The command's `--threads`, where it has one.
    fn threads(&self) -> Option<usize> {
        match &self.command {
            Command::Run(a) => a.threads(),
            Command::Bench(a) => a.threads(),
            _ => None,
        }
    }
}

/// Run the command the user gave.
pub(crate) fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Cache(a) => cache::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Slurm(a) => slurm::run(a),
        Command::Report(a) => report::run(a),
        Command::Import(a) => import::run(a),
        Command::Show(a) => show::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Traces(a) => traces::run(a),
        Command::Policies(a) => policies::run(a),
        Command::Bench(a) => bench::run(a),
    }
}

/// The ids of a (sub)command's flags, sorted, `help` and the positional ones named left out:
/// what the library's request types must take by name (tests of `report` and `import`).
#[cfg(test)]
pub(crate) fn flag_ids(cmd: &clap::Command, positional: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .filter(|id| id != "help" && !positional.contains(&id.as_str()))
        .collect();
    ids.sort();
    ids
}

#[cfg(test)]
mod tests {
    /// Split a shell line into words: whitespace outside single or double quotes separates them.
    fn words(line: &str) -> Vec<String> {
        let (mut out, mut cur, mut quote) = (Vec::new(), String::new(), None);
        for ch in line.chars() {
            match (quote, ch) {
                (None, '\'' | '"') => quote = Some(ch),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                (_, c) => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// Every `banditbench …` and `cargo run --release -- …` command in the README's shell blocks
    /// parses by the command line's grammar: a renamed or removed flag fails here, not for a
    /// reader.
    #[test]
    fn every_readme_command_parses() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        let (mut in_sh, mut checked, mut joined) = (false, 0, String::new());
        for line in readme.lines() {
            if line.starts_with("```") {
                in_sh = matches!(line.trim(), "```sh" | "```bash" | "```console");
                continue;
            }
            if !in_sh {
                continue;
            }
            // Continuation lines join; comments go.
            let code = line.split(" #").next().unwrap_or("");
            let code = if code.trim_start().starts_with('#') {
                ""
            } else {
                code
            };
            if let Some(head) = code.trim_end().strip_suffix('\\') {
                joined.push_str(head);
                joined.push(' ');
                continue;
            }
            joined.push_str(code);
            let full = std::mem::take(&mut joined);
            for part in full
                .split("&&")
                .flat_map(|p| p.split(';'))
                .flat_map(|p| p.split(" | "))
            {
                let w = words(part.trim().trim_start_matches("$ "));
                let args: Vec<String> = match w.first().map(String::as_str) {
                    Some("banditbench") => w.clone(),
                    Some("cargo") if w.get(1).is_some_and(|x| x == "run") => {
                        let Some(at) = w.iter().position(|x| x == "--") else {
                            continue;
                        };
                        std::iter::once("banditbench".to_string())
                            .chain(w[at + 1..].iter().cloned())
                            .collect()
                    }
                    _ => continue,
                };
                if let Err(e) = super::parse_from(&args) {
                    panic!("README: `{}` does not parse:\n{e}", part.trim());
                }
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} README commands found");
    }

    /// Every option of every command that takes a value, given a negative number, either takes it
    /// (and the command's own check judges it) or refuses it for what it is: never clap's advice
    /// to write `-- -5`, which does not work for an option.
    #[test]
    fn no_option_answers_a_negative_number_with_dashdash_advice() {
        fn walk(path: &mut Vec<String>, c: &clap::Command, checked: &mut usize) {
            for arg in c.get_arguments() {
                let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
                let Some(long) = arg.get_long().filter(|_| takes_value) else {
                    continue;
                };
                let mut argv: Vec<String> = vec!["banditbench".into()];
                argv.extend(path.iter().cloned());
                argv.extend([format!("--{long}"), "-5".into()]);
                if let Err(e) = super::command().try_get_matches_from(&argv) {
                    let text = e.to_string();
                    assert!(
                        !text.contains("-- -5")
                            && e.kind() != clap::error::ErrorKind::UnknownArgument,
                        "{}: {text}",
                        argv.join(" ")
                    );
                }
                *checked += 1;
            }
            for sub in c.get_subcommands() {
                path.push(sub.get_name().to_string());
                walk(path, sub, checked);
                path.pop();
            }
        }
        let mut checked = 0;
        let mut root = super::command();
        root.build();
        walk(&mut Vec::new(), &root, &mut checked);
        assert!(checked > 50, "only {checked} options checked");
    }
}
