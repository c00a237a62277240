//! `banditbench reproduce PAPER`: run a paper's experiments and write its tables and figures.

pub mod auto_weka;
pub mod erucb;
pub mod hamlet;
pub mod mutant_ucb;
pub mod shang;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::experiment::pool::{PoolData, prepare_pool};
use crate::experiment::{RunOptions, load_experiment, run_pool_with_progress};
use crate::report::{ReportOptions, Results, read_results, report_loaded};

/// Write `text` to `path` and list it among the reproduction's `files`.
pub fn write_listed(files: &mut Vec<PathBuf>, path: PathBuf, text: &str) -> Result<()> {
    std::fs::write(&path, text)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    files.push(path);
    Ok(())
}

/// A pool experiment run for a reproduction: its name, data and results.
pub struct PoolRun {
    pub name: String,
    pub data: PoolData,
    pub results: Results,
    pub dir: PathBuf,
}

/// Run the pool experiment `file` of `opts.experiments` into `opts.results/<name>` (resuming
/// finished cells), write its report to `out/<name>/`, and add the report's files to `files`.
pub fn run_pool_and_report(
    opts: &ReproduceOptions,
    file: &str,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<PoolRun> {
    let exp = load_experiment(&opts.experiments.join(file))?;
    let data = prepare_pool(&exp)?;
    let dir = opts.results.join(&exp.name);
    run_pool_with_progress(
        &exp,
        &data,
        &RunOptions {
            out: Some(dir.clone()),
            threads: opts.threads,
            ..Default::default()
        },
        opts.quiet,
    )?;
    let results = read_results(&dir)?;
    files.extend(
        report_loaded(
            &dir,
            &results,
            &out.join(&exp.name),
            &ReportOptions::default(),
        )?
        .files,
    );
    Ok(PoolRun {
        name: exp.name,
        data,
        results,
        dir,
    })
}

/// Where reproductions read experiment files and trace sets and write results.
#[derive(Clone, Debug)]
pub struct ReproduceOptions {
    /// Folder of experiment files (`experiments/`).
    pub experiments: PathBuf,
    /// Folder of trace sets (`traces/`).
    pub traces: PathBuf,
    /// Folder of results (`results/`).
    pub results: PathBuf,
    pub threads: Option<usize>,
    /// Do not draw progress bars.
    pub quiet: bool,
    /// Seconds each timing measurement of a reproduction runs (D-TTTS's time per sampling step).
    pub timing_seconds: f64,
}

impl Default for ReproduceOptions {
    fn default() -> Self {
        ReproduceOptions {
            experiments: PathBuf::from("experiments"),
            traces: PathBuf::from("traces"),
            results: PathBuf::from("results"),
            threads: None,
            quiet: false,
            timing_seconds: 2.0,
        }
    }
}
