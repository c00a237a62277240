//! banditbench: replay recorded AutoML tuning traces under algorithm-selection and
//! hyper-parameter bandit policies, in parallel and deterministically, and score the policies.
//!
//! The flow is one-way: [`trace`] loads and validates trace sets, [`replay`] holds the worlds
//! (every replay rule), [`policy`] the decision rules, [`experiment`] expands experiment files into
//! cells and runs them, [`analysis`] ranks the results. The binary in `main.rs` only parses
//! arguments, calls this library and prints.

pub mod analysis;
pub mod bench;
pub mod build;
pub mod curve;
pub mod experiment;
pub mod names;
pub mod normal;
pub mod policy;
pub mod protocol;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod results;
pub mod rng;
pub mod slurm;
pub mod space;
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
