//! What a pool cell is asked to do: its budget's unit, the last unit's rule, ties, the incumbent and
//! the recommendation, and the options they are read from.

/// What the budget counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolBudget {
    /// Fidelity units trained.
    Units,
    /// Seconds of recorded training cost.
    Seconds,
}

/// Seconds budgets: what happens to the unit whose recorded cost does not fit in the budget left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LastUnit {
    /// The unit is cut at the budget, as the time-sliced world cuts its last slice: it costs
    /// the budget left and reveals nothing (its training did not finish in time).
    Cut,
    /// The unit runs to its end and is charged in full: the cell overshoots its budget (the
    /// overshoot shows in runs.parquet's time used).
    Charge,
}

impl LastUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            LastUnit::Cut => "cut",
            LastUnit::Charge => "charge",
        }
    }
}

/// Which of several units with the same best validation score the cell recommends (and so
/// whose test score it reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ties {
    /// The first revealed keeps the place: a later unit must be strictly better.
    First,
    /// The last revealed takes it: a later unit as good replaces it.
    Last,
}

impl Ties {
    /// The best of `best` and `result` (arm, unit, reward) under this rule: `first` keeps the
    /// earlier of equal rewards, `last` takes the later.
    pub fn better(
        self,
        best: Option<(usize, u32, f64)>,
        result: (usize, u32, f64),
    ) -> Option<(usize, u32, f64)> {
        let wins = best.is_none_or(|b| match self {
            Ties::First => result.2 > b.2,
            Ties::Last => result.2 >= b.2,
        });
        if wins { Some(result) } else { best }
    }
}

impl Ties {
    pub fn as_str(self) -> &'static str {
        match self {
            Ties::First => "first",
            Ties::Last => "last",
        }
    }
}

/// Which score is the incumbent while a cell runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IncumbentRule {
    BestSeen,
    Last,
}

/// Which configuration a cell recommends at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recommendation {
    BestSeen,
    Last,
    MeanOfUnits,
    /// The arm trained the most units (ties: the better last score), D-TTTS's `mpa` in the
    /// authors' Julia code.
    MostTrained,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolWorldConfig {
    pub budget_unit: PoolBudget,
    pub incumbent: IncumbentRule,
    pub recommendation: Recommendation,
    /// At most this many arms (draws and mutations); `None`: no cap.
    pub max_arms: Option<usize>,
    /// A failed or timed-out unit is charged like any other (true), or costs nothing (DRAGON's
    /// convention: an infinite loss does not consume budget).
    pub failures_consume_budget: bool,
    /// Seconds budgets: the unit that does not fit in the budget left.
    pub last_unit: LastUnit,
    /// Ties for the best validation score (`best-seen` incumbent and recommendation).
    pub ties: Ties,
}

impl Default for PoolWorldConfig {
    fn default() -> Self {
        PoolWorldConfig {
            budget_unit: PoolBudget::Units,
            incumbent: IncumbentRule::BestSeen,
            recommendation: Recommendation::BestSeen,
            max_arms: None,
            failures_consume_budget: true,
            last_unit: LastUnit::Cut,
            ties: Ties::First,
        }
    }
}

/// The pool world's options in an experiment file (`[world]` with `kind = "pool"`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PoolOptions {
    pub incumbent: IncumbentRule,
    pub recommendation: Recommendation,
    pub max_arms: Option<usize>,
    /// One task per (dataset, run, learner): each learner's configurations form a pool of their
    /// own. Otherwise all (filtered) learners' configurations form one pool (CASH).
    pub per_learner: bool,
    /// See `PoolWorldConfig::failures_consume_budget`.
    pub failures_consume_budget: bool,
    /// See `PoolWorldConfig::last_unit` (seconds budgets only).
    pub last_unit: LastUnit,
    /// See `PoolWorldConfig::ties`.
    pub ties: Ties,
    /// The policy's own computation charged to a budget of seconds (see `replay::Overhead`).
    pub overhead: crate::replay::Overhead,
}

impl IncumbentRule {
    pub fn as_str(self) -> &'static str {
        match self {
            IncumbentRule::BestSeen => "best-seen",
            IncumbentRule::Last => "last",
        }
    }
}

impl Recommendation {
    pub fn as_str(self) -> &'static str {
        match self {
            Recommendation::BestSeen => "best-seen",
            Recommendation::Last => "last",
            Recommendation::MeanOfUnits => "mean-of-units",
            Recommendation::MostTrained => "most-trained",
        }
    }
}

impl PoolOptions {
    pub fn describe(&self) -> String {
        // Said only when not the default, so that earlier experiments keep their fingerprints.
        format!(
            "incumbent {}, recommendation {}, max_arms {}, per_learner {}{}{}{}",
            self.incumbent.as_str(),
            self.recommendation.as_str(),
            self.max_arms.map_or("none".to_string(), |m| m.to_string()),
            self.per_learner,
            if self.failures_consume_budget {
                ""
            } else {
                ", failed units free"
            },
            if self.ties == Ties::First {
                String::new()
            } else {
                format!(", ties {}", self.ties.as_str())
            },
            if self.overhead == crate::replay::Overhead::None {
                String::new()
            } else {
                format!(", overhead {}", self.overhead.describe())
            }
        )
    }

    /// The world configuration and absolute budget for `budget` given in `unit` on a pool whose
    /// full curves have `units` units.
    pub fn world_config(
        &self,
        unit: crate::replay::BudgetUnit,
        budget: f64,
        units: u32,
    ) -> (PoolWorldConfig, f64) {
        use crate::replay::BudgetUnit as B;
        let (budget_unit, abs) = match unit {
            B::Seconds => (PoolBudget::Seconds, budget),
            B::Evaluations => (PoolBudget::Units, (budget * f64::from(units)).round()),
            _ => (PoolBudget::Units, budget),
        };
        (
            PoolWorldConfig {
                budget_unit,
                incumbent: self.incumbent,
                recommendation: self.recommendation,
                max_arms: self.max_arms,
                failures_consume_budget: self.failures_consume_budget,
                last_unit: self.last_unit,
                ties: self.ties,
            },
            abs,
        )
    }
}

/// The pool world's part of a cell's outcome (`World::outcome`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PoolPart {
    /// The configuration the cell recommends (None when nothing was trained).
    pub recommended: Option<Recommended>,
    /// Configurations drawn (the cell's arms).
    pub configs_drawn: u64,
    /// Mutate actions taken.
    pub mutations: u64,
    /// Of those, the ones whose parent had no undrawn neighbour left, which drew a fresh
    /// configuration instead.
    pub mutation_fallbacks: u64,
    /// Units trained in all.
    pub units_trained: u64,
}

/// The configuration a cell recommends: its arm, configuration index, the unit whose scores are
/// reported, the validation and test scores there (trace orientation), and the budget used when
/// that unit's result came in (`found_at`, as `Incumbent::found_at`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recommended {
    /// Its arm in the cell.
    pub arm: usize,
    /// Its configuration (index into the pool's configurations).
    pub config: u32,
    /// The unit whose scores are reported (1-based).
    pub unit: u32,
    /// Validation score there, in the recorded orientation.
    pub score: f64,
    /// Test score there (NaN when not recorded).
    pub test_score: f64,
    /// Budget used when that unit's result came in.
    pub found_at: f64,
}
