//! banditbench: replay recorded AutoML tuning traces under algorithm-selection and
//! hyper-parameter bandit policies, in parallel and deterministically, and score the policies.
//!
//! The flow is one-way: [`trace`] loads and validates trace sets, [`replay`] holds the worlds
//! (every replay rule), [`policy`] the decision rules, [`experiment`] expands experiment files into
//! cells and runs them, [`analysis`] ranks the results. The binary in `main.rs` only parses
//! arguments, calls this library and prints.

pub mod analysis;
pub mod bench;
pub mod curve;
pub mod experiment;
pub mod policy;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod results;
pub mod rng;
pub mod slurm;
pub mod trace;
