//! banditbench: replay recorded AutoML tuning traces under algorithm-selection and
//! hyper-parameter bandit policies, in parallel and deterministically, and score the policies.
//!
//! The flow is one-way: `trace` loads and validates trace sets and pools, `replay` holds the
//! worlds (every replay rule) and the one loop, `policy` the decision rules, [`experiment`]
//! expands experiment files into cells and runs them, [`results`] owns the results folder's
//! contract, `analysis` ranks and tests, `report` writes tables and figures, [`reproduce`] runs
//! the papers' reproductions, and [`cli`] is the command line (`main.rs` only calls
//! [`cli::main`]).
//!
//! The public surface is a small documented facade (`missing_docs` is on); everything else is
//! crate-private, so the dead-code lint sees it:
//! - run an experiment file: [`experiment::prepare`], [`experiment::run_experiment`] with
//!   [`experiment::RunOptions`] and a [`experiment::Progress`] (or [`experiment::Silent`]);
//! - read its results: [`results::read_results`], [`results::read_pool_counts`],
//!   [`experiment::read_parquet`];
//! - load data: [`trace::load_trace_set`], [`trace::pool::load_pool`];
//! - the statistics, checked against SciPy, scikit-posthocs and baycomp:
//!   [`analysis::stats`], [`analysis::bayes`], [`analysis::average_ranks`];
//! - several objectives: [`pareto`] (the exact hypervolume, static and incremental, IGD+ and
//!   additive ε, checked against moocore);
//! - the figures: [`report::figures`]; HAMLET's learning curves: [`curve::fit_arctan`];
//! - the reproductions: [`reproduce::PAPERS`].

#![warn(missing_docs)]

pub mod analysis;
pub(crate) mod bench;
pub(crate) mod build;
pub(crate) mod bundled;
pub mod cli;
pub mod curve;
pub mod experiment;
pub(crate) mod files;
pub(crate) mod import;
pub(crate) mod names;
pub(crate) mod normal;
pub(crate) mod options;
pub mod pareto;
pub(crate) mod policy;
pub(crate) mod protocol;
#[cfg(feature = "python")]
mod python;
pub(crate) mod replay;
pub mod report;
pub mod reproduce;
pub mod results;
pub(crate) mod rng;
pub(crate) mod slurm;
pub(crate) mod space;
pub mod trace;

/// Tune glibc's allocator for a run's pattern: a chunk of cells' trajectories (tens of MB) is
/// allocated, encoded and freed about ten times a second. By default glibc serves such blocks
/// from fresh `mmap`s and trims freed memory back to the system, so every chunk page-faults its
/// memory in again; that cost a quickstart run about 6 % of its time. Keeping blocks under 32 MiB
/// on the heap and up to 256 MiB of freed memory in the process removes it. Other platforms keep
/// their allocator's defaults.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}
