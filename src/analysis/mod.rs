//! Statistics over result tables. Reads results only, never reaches back into replay.

pub mod bayes;
pub mod budgets;
pub mod compare;
pub mod family;
mod ranks;
pub mod stats;
pub mod units;

pub use family::{FamilyTest, focus_versus_rest};
pub use ranks::{MeanRank, average_ranks, average_ranks_tol, mean_ranks, within_tolerance};
pub use units::{FoundNothing, UnitKind, UnitTable, unit_table};
