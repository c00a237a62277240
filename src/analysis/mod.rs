//! Statistics over result tables. Reads results only, never reaches back into replay.

pub mod compare;
mod ranks;
pub mod stats;

pub use ranks::{MeanRank, average_ranks, average_ranks_tol, mean_ranks};
