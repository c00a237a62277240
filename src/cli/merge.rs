use std::path::PathBuf;
use std::process::ExitCode;

use crate::experiment::{self};
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The shard folders, e.g. results/NAME-shards/*
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The folder to write (must not hold results yet)
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args { dirs, out } = args;
    let m = experiment::merge_results(&dirs, &out)?;
    say!(
        "merged {} cells from {} folders into {}",
        m.cells,
        m.folders,
        m.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
