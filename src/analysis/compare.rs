//! Compare k policies over n units: ranks, mean ranks with intervals, Friedman, Iman–Davenport,
//! Nemenyi and Wilcoxon–Holm, with every option recorded next to the results.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};

use super::ranks::{average_ranks_tol, within_tolerance};
use super::stats::{
    CiKind, Friedman, ImanDavenport, Nemenyi, ZeroMethod, bootstrap_means, friedman, holm,
    iman_davenport, mean_interval, mean_sd, nemenyi, wilcoxon,
};
use super::units::ordered_mean;

/// Scores within this relative difference are ties (`|a - b| <= 1e-9 * max(|a|, |b|)`): far below
/// any difference a trace can show (a validation accuracy moves in steps of 1/rows), far above the
/// last-bit noise of a float mean.
pub const DEFAULT_TIE_TOLERANCE: f64 = 1e-9;

/// What to do with a (unit, policy) cell that has no score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Missing {
    /// Refuse, listing the missing cells.
    Error,
    /// Leave out every unit that misses a cell.
    DropUnit,
    /// Give the missing cell the worst score observed in its unit.
    Worst,
    /// Keep incomplete units for the omnibus test: Skillings–Mack's test over every unit
    /// beside Friedman's over the complete ones (the ranks and pairwise tests use the complete
    /// units).
    Keep,
}

impl Missing {
    pub fn as_str(self) -> &'static str {
        match self {
            Missing::Error => "error",
            Missing::DropUnit => "drop-unit",
            Missing::Worst => "worst",
            Missing::Keep => "keep",
        }
    }
}

/// Policies up to which `--pairs auto` tests every pair (1 225 pairs).
pub const AUTO_ALL_PAIRS: usize = 50;

/// Which pairs of policies get pairwise tests (Wilcoxon–Holm, Nemenyi's pairwise p-values, the
/// Bayesian test): the family of hypotheses Holm's correction runs over.
#[derive(Clone, Debug, PartialEq)]
pub enum Pairs {
    /// Every pair up to `AUTO_ALL_PAIRS` policies, none beyond (the ranking, Friedman and
    /// Nemenyi's critical difference are always given).
    Auto,
    /// Every pair: k (k − 1) / 2 hypotheses.
    All,
    /// No pairwise test.
    None,
    /// Each other policy against this one (a control named before seeing the results): k − 1
    /// hypotheses.
    Against(String),
}

impl std::str::FromStr for Pairs {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Pairs, String> {
        Pairs::parse(s).map_err(|e| e.to_string())
    }
}

impl std::fmt::Display for Pairs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_string())
    }
}

impl std::fmt::Display for UnitWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnitWeights::Equal => f.write_str("equal"),
            UnitWeights::PerDataset => f.write_str("per-dataset"),
            UnitWeights::File(p, _) => write!(f, "{}", p.display()),
        }
    }
}

impl std::str::FromStr for UnitWeights {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<UnitWeights, String> {
        UnitWeights::parse(s)
    }
}

impl Pairs {
    /// `auto`, `all`, `none` or `against:POLICY`.
    pub fn parse(s: &str) -> Result<Pairs> {
        Ok(match s {
            "auto" => Pairs::Auto,
            "all" => Pairs::All,
            "none" => Pairs::None,
            _ => match s.strip_prefix("against:") {
                Some(p) if !p.is_empty() => Pairs::Against(p.to_string()),
                _ => bail!(
                    "'{s}': expected auto, all, none or against:POLICY (a policy id as the report's tables name it)"
                ),
            },
        })
    }

    pub fn as_string(&self) -> String {
        match self {
            Pairs::Auto => "auto".into(),
            Pairs::All => "all".into(),
            Pairs::None => "none".into(),
            Pairs::Against(p) => format!("against:{p}"),
        }
    }

    /// The pairs (a < b in the table's order, except that a control comes first) for these
    /// policies; an unknown control is an error naming the policies there are.
    pub fn family(&self, policies: &[String]) -> Result<Vec<(usize, usize)>> {
        let k = policies.len();
        let all = || -> Vec<(usize, usize)> {
            (0..k)
                .flat_map(|a| ((a + 1)..k).map(move |b| (a, b)))
                .collect()
        };
        Ok(match self {
            Pairs::Auto if k <= AUTO_ALL_PAIRS => all(),
            Pairs::All => all(),
            Pairs::Auto | Pairs::None => Vec::new(),
            Pairs::Against(p) => {
                let Some(c) = policies.iter().position(|x| x == p) else {
                    let shown: Vec<&str> = policies.iter().take(10).map(String::as_str).collect();
                    bail!(
                        "--pairs against:{p}: no policy '{p}' here; the policies are {}{}",
                        shown.join(", "),
                        if k > 10 { ", …" } else { "" }
                    );
                };
                (0..k).filter(|&b| b != c).map(|b| (c, b)).collect()
            }
        })
    }

    /// The family in words, for reports: "all 45 pairs", "the 9 pairs with X", or why none.
    pub fn describe(&self, policies: usize, tested: usize) -> String {
        match self {
            Pairs::Against(p) => format!("the {tested} pairs with `{p}` (--pairs against)"),
            _ if tested > 0 => format!("all {tested} pairs"),
            Pairs::Auto => format!(
                "no pairs: {policies} policies are more than {AUTO_ALL_PAIRS}, beyond which pairwise tests are run only when asked (--pairs all, or --pairs against:POLICY)"
            ),
            _ => "no pairs (--pairs none)".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub alpha: f64,
    pub ci: CiKind,
    pub bootstrap_samples: usize,
    pub seed: u64,
    pub tie_tolerance: f64,
    pub zero_method: ZeroMethod,
    pub missing: Missing,
    /// The Bayesian signed-rank test's region of practical equivalence (half-width, in score
    /// units); `None` skips the test.
    pub bayes_rope: Option<f64>,
    /// Its posterior samples and prior strength (baycomp's defaults: 50 000, 0.5).
    pub bayes_samples: usize,
    pub bayes_prior: f64,
    /// Which pairs get pairwise tests.
    pub pairs: Pairs,
    /// The leaderboard (Elo, Bradley–Terry, win rates): auto (up to `AUTO_ALL_PAIRS`
    /// policies), on, off; its bootstrap resamples of the units (0: none); and the policy its
    /// ratings put at 1000 (`None`: their mean).
    pub leaderboard: Toggle,
    pub leaderboard_samples: usize,
    /// Whether the resamples also give Elo intervals (`--elo-intervals`; Bradley–Terry's always).
    pub elo_intervals: bool,
    pub baseline: Option<String>,
    /// Scores normalised per unit (`--normalize`).
    pub normalize: super::normalize::Normalize,
    /// How much each unit's matches count in the leaderboard (`--unit-weights`).
    pub unit_weights: UnitWeights,
}

/// The policy of `policies` that `given` names: its full id, or a family (the id's text before
/// `(`) that exactly one policy has. `option` starts the error, which lists the candidates.
pub fn policy_named(option: &str, given: &str, policies: &[String]) -> anyhow::Result<String> {
    if policies.iter().any(|p| p == given) {
        return Ok(given.to_string());
    }
    let family = |p: &str| p.split('(').next().unwrap_or(p).to_string();
    let members: Vec<&String> = policies.iter().filter(|p| family(p) == given).collect();
    match members[..] {
        [one] => Ok(one.clone()),
        [] => {
            let shown: Vec<&str> = policies.iter().take(10).map(String::as_str).collect();
            anyhow::bail!(
                "{option} no policy '{given}' here (a policy id, or a family one policy has); the policies are {}{}",
                shown.join(", "),
                if policies.len() > 10 { ", …" } else { "" }
            )
        }
        _ => anyhow::bail!(
            "{option} '{given}' is the family of {} policies here ({}); give one's full id",
            members.len(),
            members
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How much each unit's matches count in the leaderboard (Elo, Bradley–Terry, win rates). The
/// rank tests treat units as exchangeable and do not use weights.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum UnitWeights {
    /// Every unit counts once.
    #[default]
    Equal,
    /// A unit counts 1/m, with m the units of its dataset (the unit name's text before the first
    /// `/`): every dataset weighs the same, as TabArena weights tasks by 1/splits
    /// (autogluon/tabarena#226).
    PerDataset,
    /// Read from a CSV `unit,weight` (every unit needs a positive weight).
    File(std::path::PathBuf, BTreeMap<String, f64>),
}

impl UnitWeights {
    /// `equal`, `per-dataset`, or a CSV file `unit,weight`.
    pub fn parse(s: &str) -> Result<UnitWeights, String> {
        match s {
            "equal" => Ok(UnitWeights::Equal),
            "per-dataset" => Ok(UnitWeights::PerDataset),
            path => {
                let p = std::path::PathBuf::from(path);
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    format!("'{path}': not equal, per-dataset, or a readable CSV unit,weight ({e})")
                })?;
                let mut m = BTreeMap::new();
                for (i, line) in text.lines().enumerate() {
                    if i == 0 && line.trim() == "unit,weight" || line.trim().is_empty() {
                        continue;
                    }
                    let (u, w) = line
                        .rsplit_once(',')
                        .ok_or_else(|| format!("{path}: line {}: expected unit,weight", i + 1))?;
                    let w: f64 = w
                        .trim()
                        .parse()
                        .ok()
                        .filter(|w: &f64| *w > 0.0 && w.is_finite())
                        .ok_or_else(|| {
                            format!(
                                "{path}: line {}: weight '{}' is not a positive number",
                                i + 1,
                                w.trim()
                            )
                        })?;
                    let u = u.trim().trim_matches('"').to_string();
                    if m.insert(u.clone(), w).is_some() {
                        return Err(format!(
                            "{path}: line {}: unit '{u}' has a second weight",
                            i + 1
                        ));
                    }
                }
                Ok(UnitWeights::File(p, m))
            }
        }
    }

    pub fn as_string(&self) -> String {
        match self {
            UnitWeights::Equal => "equal".into(),
            UnitWeights::PerDataset => "per-dataset".into(),
            UnitWeights::File(p, _) => p.display().to_string(),
        }
    }

    /// The weight of each of `units` (empty for equal weights), or an error naming a unit the
    /// file has no weight for.
    pub fn of(&self, units: &[String]) -> anyhow::Result<Vec<f64>> {
        match self {
            UnitWeights::Equal => Ok(Vec::new()),
            UnitWeights::PerDataset => {
                let dataset = |u: &str| u.split('/').next().unwrap_or(u).to_string();
                let mut count: BTreeMap<String, f64> = BTreeMap::new();
                for u in units {
                    *count.entry(dataset(u)).or_default() += 1.0;
                }
                Ok(units.iter().map(|u| 1.0 / count[&dataset(u)]).collect())
            }
            UnitWeights::File(p, m) => units
                .iter()
                .map(|u| {
                    m.get(u).copied().ok_or_else(|| {
                        anyhow::anyhow!(
                            "--unit-weights {}: no weight for unit '{u}'; give every unit of the report a line unit,weight",
                            p.display()
                        )
                    })
                })
                .collect(),
        }
    }
}

/// On, off, or decided by the number of policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Toggle {
    /// On up to 50 policies.
    Auto,
    On,
    Off,
}

impl Toggle {
    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Toggle::Auto => "auto",
            Toggle::On => "on",
            Toggle::Off => "off",
        }
    }

    /// Whether it is on for `k` policies.
    pub fn on(self, k: usize) -> bool {
        match self {
            Toggle::Auto => k <= AUTO_ALL_PAIRS,
            Toggle::On => true,
            Toggle::Off => false,
        }
    }
}

impl Options {
    /// Refuse settings no test can use, naming the command-line option that sets each.
    pub fn check(&self) -> anyhow::Result<()> {
        use anyhow::bail;
        let Options {
            alpha,
            bootstrap_samples,
            bayes_rope,
            bayes_samples,
            bayes_prior,
            tie_tolerance,
            ..
        } = *self;
        if !(alpha > 0.0 && alpha < 1.0) {
            bail!("--alpha {alpha}: it must lie strictly between 0 and 1");
        }
        if bootstrap_samples == 0 {
            bail!("--bootstrap-samples must be at least 1");
        }
        if bootstrap_samples > 10_000_000 {
            bail!(
                "--bootstrap-samples {bootstrap_samples}: more than 10^7 resamples, each of every policy's mean rank, would not finish in reasonable time or memory; 10^4 (the default) gives percentile intervals to about ±0.002"
            );
        }
        if bayes_rope.is_some_and(|r| !(r >= 0.0 && r.is_finite())) {
            bail!("--bayes-rope must be a number >= 0 (in score units, e.g. 0.01)");
        }
        if bayes_samples == 0 || bayes_samples > 10_000_000 {
            bail!("--bayes-samples must be between 1 and 10^7 (baycomp's default: 50 000)");
        }
        if !(bayes_prior > 0.0 && bayes_prior.is_finite()) {
            bail!("--bayes-prior must be a positive number (baycomp's default: 0.5)");
        }
        if tie_tolerance.is_nan() || tie_tolerance < 0.0 {
            bail!("--tie-tolerance must be a number >= 0");
        }
        if self.leaderboard_samples > 1_000_000 {
            bail!(
                "--leaderboard-samples {}: at most 10^6 (each resample refits every rating)",
                self.leaderboard_samples
            );
        }
        Ok(())
    }

    /// These options with every policy they name (`--pairs against:`, `--baseline`,
    /// `--normalize baseline:`) made a full id of `policies`: a full id as it is, or a family
    /// name that one policy has (`ucb1` for `ucb1(tie_break=first, log_t=pulls)`). An unknown
    /// name, or a family several policies share, is an error naming the candidates.
    pub fn resolved(&self, policies: &[String]) -> anyhow::Result<Options> {
        let mut o = self.clone();
        if let Some(b) = &self.baseline {
            o.baseline = Some(policy_named(&format!("--baseline {b}:"), b, policies)?);
        }
        if let super::normalize::Normalize::Baseline(b) = &self.normalize {
            o.normalize = super::normalize::Normalize::Baseline(policy_named(
                &format!("--normalize baseline:{b}:"),
                b,
                policies,
            )?);
        }
        if let Pairs::Against(p) = &self.pairs {
            o.pairs = Pairs::Against(policy_named(&format!("--pairs against:{p}:"), p, policies)?);
        }
        o.pairs.family(policies)?;
        Ok(o)
    }

    /// Refuse unit weights, or known values (`--normalize known:FILE`), that miss a unit of the
    /// table.
    pub fn check_units(&self, units: &[String]) -> anyhow::Result<()> {
        if let super::normalize::Normalize::Known(k) = &self.normalize {
            let missing: Vec<&str> = units
                .iter()
                .filter(|u| k.of(u).is_none())
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                anyhow::bail!(
                    "--normalize known:{}: no known values for {} unit(s): {}{}; a row's unit may name the unit, its task (before '@') or its dataset (before '/')",
                    k.file,
                    missing.len(),
                    missing
                        .iter()
                        .take(5)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", "),
                    if missing.len() > 5 { ", ..." } else { "" }
                );
            }
        }
        self.unit_weights.of(units).map(|_| ())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            alpha: 0.05,
            ci: CiKind::T95,
            bootstrap_samples: 10_000,
            seed: 0,
            tie_tolerance: DEFAULT_TIE_TOLERANCE,
            zero_method: ZeroMethod::Pratt,
            missing: Missing::Error,
            bayes_rope: None,
            bayes_samples: 50_000,
            bayes_prior: 0.5,
            pairs: Pairs::Auto,
            leaderboard: Toggle::Auto,
            leaderboard_samples: 200,
            elo_intervals: false,
            baseline: None,
            normalize: super::normalize::Normalize::None,
            unit_weights: UnitWeights::Equal,
        }
    }
}

/// Scores of every policy on every unit: `scores[u][p]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreTable {
    pub units: Vec<String>,
    pub policies: Vec<String>,
    pub scores: Vec<Vec<f64>>,
    pub higher_is_better: bool,
}

impl ScoreTable {
    /// Build from (unit, policy, score) rows. Units keep their first-seen order; policies are
    /// sorted by name. A NaN score is missing, unless `nan_is_worst`: then it means "found
    /// nothing" and ranks below every real score (results of `banditbench run`).
    pub fn from_rows(
        rows: &[(String, String, f64)],
        higher_is_better: bool,
        missing: Missing,
        nan_is_worst: bool,
    ) -> Result<(ScoreTable, Vec<String>)> {
        let policies: Vec<String> = rows
            .iter()
            .map(|r| r.1.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let pidx: BTreeMap<&str, usize> = policies
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), i))
            .collect();
        let mut units: Vec<String> = Vec::new();
        let mut uidx: BTreeMap<&str, usize> = BTreeMap::new();
        let mut cells: Vec<Vec<Option<f64>>> = Vec::new();
        for (u, p, s) in rows {
            let ui = *uidx.entry(u.as_str()).or_insert_with(|| {
                units.push(u.clone());
                cells.push(vec![None; policies.len()]);
                units.len() - 1
            });
            let pi = pidx[p.as_str()];
            if cells[ui][pi].is_some() {
                bail!(
                    "unit '{u}', policy '{p}': more than one score (aggregate repetitions first)"
                );
            }
            cells[ui][pi] = (nan_is_worst || !s.is_nan()).then_some(*s);
        }
        let mut holes = Vec::new();
        for (u, row) in units.iter().zip(&cells) {
            for (p, c) in policies.iter().zip(row) {
                if c.is_none() {
                    holes.push(format!("({u}, {p})"));
                }
            }
        }
        let mut notes = Vec::new();
        let mut keep_units = Vec::new();
        let mut scores = Vec::new();
        match missing {
            Missing::Error if !holes.is_empty() => bail!(
                "{} (unit, policy) cell(s) have no score: {}{}; choose --missing drop-unit, worst or keep (Skillings–Mack over every unit)",
                holes.len(),
                holes
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                if holes.len() > 10 { ", ..." } else { "" }
            ),
            _ => {
                for (u, row) in units.iter().zip(&cells) {
                    let present: Vec<f64> = row.iter().flatten().copied().collect();
                    let finite: Vec<f64> =
                        present.iter().copied().filter(|x| !x.is_nan()).collect();
                    if present.len() == row.len() {
                        keep_units.push(u.clone());
                        scores.push(present);
                    } else if missing == Missing::Worst && !finite.is_empty() {
                        let worst = if higher_is_better {
                            finite.iter().copied().fold(f64::INFINITY, f64::min)
                        } else {
                            finite.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                        };
                        notes.push(format!(
                            "unit {u}: {} missing score(s) set to the unit's worst, {worst}",
                            row.len() - present.len()
                        ));
                        keep_units.push(u.clone());
                        scores.push(row.iter().map(|c| c.unwrap_or(worst)).collect());
                    } else {
                        notes.push(format!(
                            "unit {u} dropped: {} of {} policies have no score",
                            row.len() - present.len(),
                            row.len()
                        ));
                    }
                }
            }
        }
        if keep_units.len() < 2 {
            bail!(
                "only {} complete unit(s); the tests need at least 2",
                keep_units.len()
            );
        }
        if policies.len() < 2 {
            bail!("only {} policy; nothing to compare", policies.len());
        }
        Ok((
            ScoreTable {
                units: keep_units,
                policies,
                scores,
                higher_is_better,
            },
            notes,
        ))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PolicySummary {
    pub policy: String,
    pub n: usize,
    pub mean_rank: f64,
    pub sd_rank: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub mean_score: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PairTest {
    pub a: String,
    pub b: String,
    pub statistic: f64,
    pub p_value: f64,
    pub p_holm: f64,
    pub reject: bool,
    pub method: &'static str,
}

#[derive(Clone, Debug)]
pub struct Comparison {
    pub table: ScoreTable,
    pub ranks: Vec<Vec<f64>>,
    /// In the table's policy order.
    pub summary: Vec<PolicySummary>,
    pub friedman: Friedman,
    pub iman_davenport: ImanDavenport,
    pub nemenyi: Nemenyi,
    pub wilcoxon: Vec<PairTest>,
    /// The Bayesian signed-rank test of every pair, when `options.bayes_rope` is set.
    pub bayesian: Vec<BayesPair>,
    /// Elo, Bradley–Terry and win rates, when `options.leaderboard` is on for these policies.
    pub leaderboard: Option<super::leaderboard::Leaderboard>,
    /// Scores normalised per unit (`--normalize`).
    pub normalized: Option<super::normalize::Normalized>,
    /// Skillings–Mack over every unit, incomplete ones too (`--missing keep`); set by
    /// [`Comparison::with_incomplete_units`].
    pub skillings_mack: Option<super::stats::SkillingsMack>,
    pub options: Options,
}

impl Comparison {
    /// With `--missing keep`, add Skillings–Mack's test over every unit of `rows` (unit,
    /// policy, score), incomplete ones included (a NaN is "found nothing", worst, when
    /// `nan_is_worst`, else missing). Policies are the table's.
    pub fn with_incomplete_units(
        mut self,
        rows: &[(String, String, f64)],
        nan_is_worst: bool,
    ) -> Self {
        if self.options.missing != Missing::Keep {
            return self;
        }
        let pidx: BTreeMap<&str, usize> = self
            .table
            .policies
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), i))
            .collect();
        let mut order: Vec<&str> = Vec::new();
        let mut blocks: BTreeMap<&str, Vec<Option<f64>>> = BTreeMap::new();
        for (u, p, s) in rows {
            let Some(&pi) = pidx.get(p.as_str()) else {
                continue;
            };
            let row = blocks.entry(u.as_str()).or_insert_with(|| {
                order.push(u.as_str());
                vec![None; pidx.len()]
            });
            row[pi] = (nan_is_worst || !s.is_nan()).then_some(*s);
        }
        let table: Vec<Vec<Option<f64>>> = order.iter().map(|u| blocks[u].clone()).collect();
        self.skillings_mack = super::stats::skillings_mack(
            &table,
            self.table.higher_is_better,
            self.options.tie_tolerance,
        );
        self
    }
}

/// The Bayesian signed-rank test of policies `a` and `b` (names): `left` = `a` better by more
/// than the rope.
#[derive(Clone, Debug)]
pub struct BayesPair {
    pub a: String,
    pub b: String,
    pub result: crate::analysis::bayes::SignedRank,
}

impl BayesPair {
    /// Benavoli et al.'s reading: a region whose posterior probability is at least 0.95 decides.
    pub fn decision(&self) -> String {
        let r = &self.result;
        if r.p_left >= 0.95 {
            format!("{} better", self.a)
        } else if r.p_right >= 0.95 {
            format!("{} better", self.b)
        } else if r.p_rope >= 0.95 {
            "practically equivalent".to_string()
        } else {
            "undecided".to_string()
        }
    }
}

/// Every pair's Bayesian signed-rank test on the table (scores oriented so that higher is better,
/// a unit that found nothing as the worst), each pair seeded from `opts.seed` and its names.
fn bayes_pairs(table: &ScoreTable, pairs: &[(usize, usize)], opts: &Options) -> Vec<BayesPair> {
    use rayon::prelude::*;
    let Some(rope) = opts.bayes_rope else {
        return Vec::new();
    };
    let sign = if table.higher_is_better { 1.0 } else { -1.0 };
    let col = |p: usize| -> Vec<f64> {
        table
            .scores
            .iter()
            .map(|r| {
                if r[p].is_nan() {
                    f64::NEG_INFINITY
                } else {
                    sign * r[p]
                }
            })
            .collect()
    };
    pairs
        .par_iter()
        .map(|&(a, b)| {
            let (pa, pb) = (&table.policies[a], &table.policies[b]);
            let seed = crate::rng::derive_seed(opts.seed, &format!("bayes\u{1f}{pa}\u{1f}{pb}"));
            BayesPair {
                a: pa.clone(),
                b: pb.clone(),
                result: crate::analysis::bayes::signed_rank(
                    &col(a),
                    &col(b),
                    rope,
                    opts.bayes_prior,
                    opts.bayes_samples,
                    seed,
                ),
            }
        })
        .collect()
}

pub fn compare(table: ScoreTable, opts: &Options) -> Comparison {
    let n = table.units.len();
    let k = table.policies.len();
    let ranks: Vec<Vec<f64>> = table
        .scores
        .iter()
        .map(|r| average_ranks_tol(r, table.higher_is_better, opts.tie_tolerance))
        .collect();
    let boot = (opts.ci == CiKind::Bootstrap)
        .then(|| bootstrap_means(&ranks, opts.bootstrap_samples, opts.alpha, opts.seed));
    let summary: Vec<PolicySummary> = (0..k)
        .map(|p| {
            let col: Vec<f64> = ranks.iter().map(|r| r[p]).collect();
            let (mean_rank, sd_rank) = mean_sd(&col);
            // A mean rank lies in [1, k], and so does the true one: a parametric interval is
            // clipped to that range (a bootstrap percentile interval lies in it already).
            let (ci_low, ci_high) = match &boot {
                Some(b) => b[p],
                None => {
                    let (lo, hi) = mean_interval(&col, opts.ci);
                    (lo.max(1.0), hi.min(k as f64))
                }
            };
            PolicySummary {
                policy: table.policies[p].clone(),
                n,
                mean_rank,
                sd_rank,
                ci_low,
                ci_high,
                mean_score: {
                    let mut f: Vec<f64> = table
                        .scores
                        .iter()
                        .map(|r| r[p])
                        .filter(|x| !x.is_nan())
                        .collect();
                    ordered_mean(&mut f)
                },
            }
        })
        .collect();
    let fr = friedman(&ranks);
    let id = iman_davenport(fr.statistic, n, k);
    let means: Vec<f64> = summary.iter().map(|s| s.mean_rank).collect();
    // An unknown control was refused before (`Options::check_policies`): no pairs here.
    let family = opts.pairs.family(&table.policies).unwrap_or_default();
    let nem = nemenyi(&means, n, opts.alpha, &family);
    let pairs = pair_tests(&table, &family, opts);
    let bayesian = bayes_pairs(&table, &family, opts);
    let leaderboard = opts.leaderboard.on(k).then(|| {
        super::leaderboard::leaderboard(
            &table,
            &super::leaderboard::LeaderboardOptions {
                baseline: opts
                    .baseline
                    .as_ref()
                    .and_then(|b| table.policies.iter().position(|p| p == b)),
                tie_tolerance: opts.tie_tolerance,
                samples: opts.leaderboard_samples,
                elo_intervals: opts.elo_intervals,
                alpha: opts.alpha,
                seed: opts.seed,
                // Checked by `Options::check_units` before; equal weights if not.
                weights: opts.unit_weights.of(&table.units).unwrap_or_default(),
                ..Default::default()
            },
        )
    });
    let normalized = super::normalize::normalized(&table, &opts.normalize);
    Comparison {
        table,
        ranks,
        summary,
        friedman: fr,
        iman_davenport: id,
        nemenyi: nem,
        wilcoxon: pairs,
        bayesian,
        leaderboard,
        skillings_mack: None,
        normalized,
        options: opts.clone(),
    }
}

/// Paired differences of policies `a` and `b` over the units, oriented so that positive favours
/// `a`. A NaN ("found nothing") is worse than any score: the difference is infinite. Differences
/// within the tie tolerance are zeros.
pub fn differences(table: &ScoreTable, a: usize, b: usize, tol: f64) -> Vec<f64> {
    let sign = if table.higher_is_better { 1.0 } else { -1.0 };
    table
        .scores
        .iter()
        .map(|r| match (r[a].is_nan(), r[b].is_nan()) {
            (true, true) => 0.0,
            (true, false) => f64::NEG_INFINITY,
            (false, true) => f64::INFINITY,
            _ if within_tolerance(r[a], r[b], tol) => 0.0,
            _ => sign * (r[a] - r[b]),
        })
        .collect()
}

/// Wilcoxon signed-rank tests of the given pairs, with Holm's correction over exactly this family
/// of hypotheses.
pub fn pair_tests(table: &ScoreTable, pairs: &[(usize, usize)], opts: &Options) -> Vec<PairTest> {
    let mut out: Vec<PairTest> = pairs
        .iter()
        .map(|&(a, b)| {
            let d = differences(table, a, b, opts.tie_tolerance);
            let w = wilcoxon(&d, opts.zero_method);
            PairTest {
                a: table.policies[a].clone(),
                b: table.policies[b].clone(),
                statistic: w.statistic,
                p_value: w.p_value,
                p_holm: 0.0,
                reject: false,
                method: w.method.as_str(),
            }
        })
        .collect();
    let ps: Vec<f64> = out.iter().map(|p| p.p_value).collect();
    let (adj, rej) = holm(&ps, opts.alpha);
    for (p, (a, r)) in out.iter_mut().zip(adj.into_iter().zip(rej)) {
        p.p_holm = a;
        p.reject = r;
    }
    out
}

/// The mean of the paired score differences `a - b` over the units (raw scores, not oriented)
/// with its 95 % t interval; units where either found nothing are left out. Returns
/// (mean, low, high, units used).
pub fn mean_difference(table: &ScoreTable, a: usize, b: usize) -> (f64, f64, f64, usize) {
    let mut d: Vec<f64> = table
        .scores
        .iter()
        .filter(|r| !r[a].is_nan() && !r[b].is_nan())
        .map(|r| r[a] - r[b])
        .collect();
    let n = d.len();
    if n < 2 {
        let m = ordered_mean(&mut d);
        return (m, f64::NAN, f64::NAN, n);
    }
    d.sort_by(f64::total_cmp);
    let (m, _) = mean_sd(&d);
    let (lo, hi) = mean_interval(&d, CiKind::T95);
    (m, lo, hi, n)
}

impl Comparison {
    /// Policy indices sorted by mean rank (best first; ties by name).
    pub fn order(&self) -> Vec<usize> {
        let mut o: Vec<usize> = (0..self.summary.len()).collect();
        o.sort_by(|&a, &b| {
            self.summary[a]
                .mean_rank
                .total_cmp(&self.summary[b].mean_rank)
                .then(self.summary[a].policy.cmp(&self.summary[b].policy))
        });
        o
    }

    /// Maximal groups of consecutive policies (in mean-rank order) whose mean ranks differ by at
    /// most the critical difference (Nemenyi), as index ranges into `order()`.
    pub fn nemenyi_groups(&self) -> Vec<(usize, usize)> {
        let order = self.order();
        let r: Vec<f64> = order.iter().map(|&i| self.summary[i].mean_rank).collect();
        cliques_by(r.len(), |i, j| r[j] - r[i] <= self.nemenyi.cd)
    }

    /// Maximal groups of consecutive policies (in mean-rank order) of which no pair is rejected
    /// by Wilcoxon–Holm.
    pub fn wilcoxon_groups(&self) -> Vec<(usize, usize)> {
        let order = self.order();
        let k = order.len();
        let pos: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(x, &i)| (self.summary[i].policy.as_str(), x))
            .collect();
        // rejected[x][y]: positions x and y (in mean-rank order) differ significantly.
        let mut rejected = vec![vec![false; k]; k];
        for p in self.wilcoxon.iter().filter(|p| p.reject) {
            if let (Some(&x), Some(&y)) = (pos.get(p.a.as_str()), pos.get(p.b.as_str())) {
                rejected[x][y] = true;
                rejected[y][x] = true;
            }
        }
        // [i, j] is a group when no pair inside it is rejected; grow j one step at a time, so
        // only the new member's pairs need checking.
        let mut out: Vec<(usize, usize)> = Vec::new();
        for i in 0..k {
            let mut j = i;
            while j + 1 < k && (i..=j).all(|x| !rejected[x][j + 1]) {
                j += 1;
            }
            if j > i && !out.iter().any(|&(a, b)| a <= i && j <= b) {
                out.push((i, j));
            }
        }
        out
    }
}

/// Maximal intervals [i, j] (i < j) of 0..n for which `ok(i, j)` holds; `ok` must be monotone
/// (an interval inside an ok one is ok).
fn cliques_by(n: usize, ok: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        let mut j = i;
        while j + 1 < n && ok(i, j + 1) {
            j += 1;
        }
        if j > i && !out.iter().any(|&(a, b)| a <= i && j <= b) {
            out.push((i, j));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Every option that names a policy (`--baseline`, `--normalize baseline:`, `--pairs
    /// against:`) takes a full id or a family one policy has, and says which policies a shared
    /// family or an unknown name could mean.
    #[test]
    fn options_name_a_policy_by_id_or_by_a_family_one_policy_has() {
        let policies: Vec<String> = [
            "ucb1(tie_break=first, log_t=pulls)",
            "epsilon-greedy(epsilon=0.1)",
            "epsilon-greedy(epsilon=0.05)",
            "round-robin",
        ]
        .map(String::from)
        .to_vec();
        let ucb1 = policies[0].clone();
        assert_eq!(policy_named("--baseline", "ucb1", &policies).unwrap(), ucb1);
        assert_eq!(policy_named("--baseline", &ucb1, &policies).unwrap(), ucb1);
        assert_eq!(
            policy_named("--baseline", "round-robin", &policies).unwrap(),
            "round-robin"
        );
        let e = policy_named("--baseline", "epsilon-greedy", &policies)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the family of 2 policies here"), "{e}");
        let e = policy_named("--baseline", "ucb", &policies)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no policy 'ucb' here"), "{e}");
        let o = Options {
            baseline: Some("ucb1".into()),
            normalize: super::super::normalize::Normalize::Baseline("round-robin".into()),
            pairs: Pairs::Against("ucb1".into()),
            ..Options::default()
        }
        .resolved(&policies)
        .unwrap();
        assert_eq!(o.baseline.as_deref(), Some(ucb1.as_str()));
        assert_eq!(o.pairs, Pairs::Against(ucb1.clone()));
        assert_eq!(
            o.normalize,
            super::super::normalize::Normalize::Baseline("round-robin".into())
        );
    }

    use super::*;

    fn rows(data: &[(&str, &str, f64)]) -> Vec<(String, String, f64)> {
        data.iter()
            .map(|(u, p, s)| (u.to_string(), p.to_string(), *s))
            .collect()
    }

    #[test]
    fn missing_cells_error_drop_or_worst() {
        let r = rows(&[
            ("u1", "a", 0.9),
            ("u1", "b", 0.8),
            ("u2", "a", 0.7),
            ("u3", "a", 0.5),
            ("u3", "b", 0.6),
            ("u4", "a", 0.1),
            ("u4", "b", 0.2),
        ]);
        let e = ScoreTable::from_rows(&r, true, Missing::Error, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1 (unit, policy) cell(s) have no score: (u2, b)"),
            "{e}"
        );
        let (t, notes) = ScoreTable::from_rows(&r, true, Missing::DropUnit, false).unwrap();
        assert_eq!(t.units, vec!["u1", "u3", "u4"]);
        assert!(notes[0].contains("u2 dropped"));
        let (t, _) = ScoreTable::from_rows(&r, true, Missing::Worst, false).unwrap();
        assert_eq!(t.scores[1], vec![0.7, 0.7]);
        // In results, NaN means "found nothing": present, and ranked last.
        let mut r2 = r.clone();
        r2.push(("u2".into(), "b".into(), f64::NAN));
        let (t, _) = ScoreTable::from_rows(&r2, true, Missing::Error, true).unwrap();
        let c = compare(t, &Options::default());
        assert_eq!(c.ranks[1], vec![1.0, 2.0]);
    }

    #[test]
    fn cliques_are_maximal_runs() {
        let r = [1.0, 1.5, 2.2, 3.0, 4.5];
        let groups = cliques_by(5, |i, j| r[j] - r[i] <= 1.0);
        assert_eq!(groups, vec![(0, 1), (1, 2), (2, 3)]);
    }

    /// Mean-rank intervals stay within [1, k]: a policy ranked first on 9 of 10 units has a t
    /// interval of about [0.77, 1.43] before clipping.
    #[test]
    fn mean_rank_intervals_lie_between_1_and_k() {
        let mut scores = vec![vec![1.0, 0.5, 0.2]; 9];
        scores.push(vec![0.1, 0.5, 0.2]);
        let table = ScoreTable {
            units: (0..10).map(|u| u.to_string()).collect(),
            policies: vec!["a".into(), "b".into(), "c".into()],
            scores,
            higher_is_better: true,
        };
        for ci in [CiKind::T95, CiKind::Z95, CiKind::Se, CiKind::Bootstrap] {
            let c = compare(
                table.clone(),
                &Options {
                    ci,
                    ..Options::default()
                },
            );
            for s in &c.summary {
                assert!(
                    s.ci_low >= 1.0 && s.ci_high <= 3.0 && s.ci_low <= s.mean_rank,
                    "{ci:?} {}: [{}, {}]",
                    s.policy,
                    s.ci_low,
                    s.ci_high
                );
            }
            let a = &c.summary[0];
            assert!((a.mean_rank - 1.2).abs() < 1e-12);
            if ci != CiKind::Bootstrap {
                assert_eq!(a.ci_low, 1.0, "{ci:?}: clipped");
            }
        }
        let (lo, _) = mean_interval(
            &[1.0; 9].iter().chain(&[3.0]).copied().collect::<Vec<_>>(),
            CiKind::T95,
        );
        assert!(lo < 1.0, "the unclipped interval reaches below 1: {lo}");
    }
}
