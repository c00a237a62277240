//! Statistics over result tables. Reads results only, never reaches back into replay.

pub mod bayes;
pub(crate) mod budgets;
pub(crate) mod compare;
pub(crate) mod family;
pub(crate) mod leaderboard;
pub(crate) mod normalize;
mod ranks;
pub mod stats;
pub(crate) mod units;

pub(crate) use family::{FamilyTest, focus_versus_rest};
pub use ranks::average_ranks;
pub(crate) use ranks::{MeanRank, average_ranks_tol, mean_ranks, within_tolerance};
pub(crate) use units::{FoundNothing, UnitGrouper, UnitKind, UnitTable, unit_table};
