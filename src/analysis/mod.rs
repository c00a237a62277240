//! Statistics over result tables. Reads results only, never reaches back into replay.

pub mod bayes;
pub mod budgets;
pub mod compare;
mod ranks;
pub mod stats;
pub mod units;

pub use ranks::{MeanRank, average_ranks, average_ranks_tol, mean_ranks, within_tolerance};
pub use units::{FoundNothing, UnitKind, UnitTable, unit_table};
