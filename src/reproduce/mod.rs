//! `banditbench reproduce PAPER`: run a paper's experiments and write its tables and figures.

pub mod erucb;
pub mod hamlet;
pub mod mutant_ucb;
pub mod shang;

use std::path::PathBuf;

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
}

impl Default for ReproduceOptions {
    fn default() -> Self {
        ReproduceOptions {
            experiments: PathBuf::from("experiments"),
            traces: PathBuf::from("traces"),
            results: PathBuf::from("results"),
            threads: None,
            quiet: false,
        }
    }
}
