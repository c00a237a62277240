use std::path::PathBuf;
use std::process::ExitCode;

use crate::experiment::{self};
use anyhow::{Context, Result};

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args {
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
    } = args;
    let exp = experiment::load_experiment(&experiment)?;
    let binary = match binary {
        Some(b) => b,
        None => std::env::current_exe().context("cannot find this binary's path")?,
    };
    let opts = crate::slurm::SlurmOptions {
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
    let s = crate::slurm::write_scripts(&exp, &opts)?;
    println!("wrote {}", s.array.display());
    println!("wrote {}", s.merge.display());
    println!(
        "shards write to {}/I-of-{shards}, the merge to {}; logs in {}",
        s.shards_dir.display(),
        s.out.display(),
        s.logs.display()
    );
    if submit {
        let (a, m) = crate::slurm::submit(&s)?;
        println!("submitted array job {a} ({shards} tasks) and merge job {m} (afterok:{a})");
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
