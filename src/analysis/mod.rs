//! Statistics over result tables. Reads results only, never reaches back into replay.

mod ranks;

pub use ranks::{MeanRank, average_ranks, mean_ranks};
