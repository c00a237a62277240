use std::path::PathBuf;
use std::process::ExitCode;

use crate::report::{self};
use anyhow::{Context, Result};

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args {
        results,
        cell,
        list,
        limit,
        out,
    } = args;
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
        say!("wrote {}", png.display());
    }
    Ok(ExitCode::SUCCESS)
}
