use std::path::PathBuf;
use std::process::ExitCode;

use crate::analysis::stats::{CiKind, ZeroMethod};
use crate::report;
use crate::report::request::{self, Labels, ReportRequest, UnitChoice};
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Results folders written by `banditbench run` or `banditbench import`; several are ranked
    /// together on the units they share (same metric direction and budgets; each policy from
    /// one folder)
    #[arg(required_unless_present = "scores", conflicts_with = "scores")]
    results: Vec<PathBuf>,
    /// A table of scores from any tool instead of a results folder: CSV or parquet, long
    /// (columns unit,policy,score; see --unit-col ...) or wide (--wide)
    #[arg(long)]
    scores: Option<PathBuf>,
    /// With --scores: lower scores are better
    #[arg(long)]
    minimize: bool,
    /// With --scores: the unit column [default: unit; wide tables: unit, else an unnamed first
    /// column (a pandas index), else the row number]. Long tables: several columns, comma-
    /// separated, join into one unit (--unit-col dataset,fold gives APSFailure/0)
    #[arg(long, requires = "scores")]
    unit_col: Option<String>,
    /// With --scores (long): the policy column
    #[arg(long, requires = "scores", default_value_t = d().policy_col)]
    policy_col: String,
    /// With --scores (long): the score column
    #[arg(long, requires = "scores", default_value_t = d().score_col)]
    score_col: String,
    /// With --scores: one row per unit and one column per policy (as autorank takes it)
    #[arg(long, requires = "scores")]
    wide: bool,
    /// With --scores: average several rows of one (unit, policy), e.g. seeds (else an error)
    #[arg(long, requires = "scores")]
    average_repeats: bool,
    /// Output folder [default: RESULTS/report, or SCORES-report next to the CSV]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Significance level of every test
    #[arg(long, default_value_t = d().alpha)]
    alpha: f64,
    /// Interval of the mean ranks
    #[arg(long, value_enum, default_value_t = d().ci)]
    ci: CiKind,
    /// Resamples for --ci bootstrap
    #[arg(long, default_value_t = d().bootstrap_samples)]
    bootstrap_samples: usize,
    /// Also run the Bayesian signed-rank test (Benavoli et al. 2017, as baycomp) on every pair
    /// with this region of practical equivalence: differences within ±ROPE (score units, e.g.
    /// 0.01 accuracy) count as equivalent. Writes bayes_signed_rank.{svg,png,csv}
    #[arg(long)]
    bayes_rope: Option<f64>,
    /// Posterior samples of the Bayesian signed-rank test
    #[arg(long, default_value_t = d().bayes_samples)]
    bayes_samples: usize,
    /// Prior strength of the Bayesian signed-rank test (a pseudo-observation at 0)
    #[arg(long, default_value_t = d().bayes_prior)]
    bayes_prior: f64,
    /// Which pairs of policies get pairwise tests (Wilcoxon–Holm, Nemenyi's pairwise p-values,
    /// the Bayesian test): the family Holm's correction runs over. auto: every pair up to 50
    /// policies, none beyond; all; none; against:POLICY (each other policy against this one,
    /// named before seeing the results). The ranking, Friedman and Nemenyi's critical difference
    /// are always given
    #[arg(long, default_value_t = d().pairs, value_parser = crate::analysis::compare::Pairs::parse)]
    pairs: crate::analysis::compare::Pairs,
    /// The leaderboard: Elo and Bradley–Terry ratings with bootstrap intervals, and the
    /// win-rate matrix (every unit a round in which each pair of policies plays a match).
    /// auto: up to 50 policies
    #[arg(long, value_enum, default_value_t = d().leaderboard)]
    leaderboard: crate::analysis::compare::Toggle,
    /// Bootstrap resamples of the units for the leaderboard's intervals (0: none)
    #[arg(long, default_value_t = d().leaderboard_samples)]
    leaderboard_samples: usize,
    /// Give Elo bootstrap intervals too, from the same resamples (Bradley–Terry's are always
    /// given). Off by default: online Elo depends on the order of the matches, and replaying it
    /// per resample costs several times Bradley–Terry's
    #[arg(long)]
    elo_intervals: bool,
    /// The policy the leaderboard's ratings put at 1000, e.g. random search (default: their
    /// mean is 1000)
    #[arg(long, value_name = "POLICY")]
    baseline: Option<String>,
    /// Scores normalised per unit, beside the ranks: none; range (1 = the unit's best of the
    /// compared policies, 0 = its worst); baseline:POLICY (the relative improvement over
    /// POLICY, e.g. baseline:random-search); or known:FILE (1 = the unit's known best, 0 = its
    /// known worst, from a CSV with columns unit,best,worst; a row may name a unit, its task or
    /// its dataset). Writes normalized.csv and a section of the report
    #[arg(long, default_value_t = d().normalize, value_parser = crate::analysis::normalize::Normalize::parse)]
    normalize: crate::analysis::normalize::Normalize,
    /// How much each unit's matches count in the leaderboard: equal; per-dataset (a unit counts
    /// 1/m, m the units of its dataset, as TabArena weights tasks by 1/splits); or a CSV
    /// unit,weight. The rank tests do not use weights
    #[arg(long, default_value_t = d().unit_weights, value_parser = crate::analysis::compare::UnitWeights::parse)]
    unit_weights: crate::analysis::compare::UnitWeights,
    /// Seed of the bootstrap
    #[arg(long, default_value_t = d().seed)]
    seed: u64,
    /// Scores within this relative distance of a better one tie with it:
    /// |a - b| <= tol * max(|a|, |b|) (0: exact ties only; the default absorbs float noise)
    #[arg(long, default_value_t = d().tie_tolerance)]
    tie_tolerance: f64,
    /// Zero differences in Wilcoxon's test: ranked then dropped (pratt) or dropped (wilcox)
    #[arg(long, value_enum, default_value_t = d().zero_method)]
    zero_method: ZeroMethod,
    /// A (unit, policy) without a score: fail listing them, drop the unit, or give it the unit's worst score
    #[arg(long, value_enum, default_value_t = d().missing)]
    missing: crate::analysis::compare::Missing,
    /// Results folders: the unit the tests treat as independent. auto: the dataset when there
    /// are two or more, else the task, else every cell. dataset: scores averaged over runs,
    /// budgets and repetitions; task: over budgets and repetitions; task-budget: over
    /// repetitions (HAMLET's Fig. 8 unit; not independent); task-budget-repetition: every cell
    #[arg(long, value_enum, default_value_t = d().unit)]
    unit: UnitChoice,
    /// Results folders: what a cell that found nothing (no best score) counts as: the worst
    /// score of its unit, or left out of its mean (the counts are reported either way)
    #[arg(long, value_enum, default_value_t = d().found_nothing)]
    found_nothing: crate::analysis::FoundNothing,
    /// Results folders: also one report per budget (in budget-<b>/)
    #[arg(long)]
    per_budget: bool,
    /// The width figures are drawn for: column (3.3 in), page (6.9 in, two columns) or a
    /// width in inches (e.g. 5.5). Fonts are 7-8.5 pt at that width
    #[arg(long, default_value_t = d().width, value_parser = figure_width)]
    width: f64,
    /// Figures without their own titles (a paper's caption replaces them)
    #[arg(long)]
    no_titles: bool,
    /// Anytime regret (b - v)/(b - w) per unit: b, w the best and worst of the compared
    /// policies (adding a policy changes every curve), or the best and worst score recorded
    /// in the unit's traces (read from the lock file's trace_dir, or --traces)
    #[arg(long, value_enum, default_value_t = d().regret)]
    regret: report::Regret,
    /// With --regret trace: the trace set or pool the results were run on [default: the lock
    /// file's trace_dir]; its content hash must match the lock file's
    #[arg(long)]
    traces: Option<PathBuf>,
    /// Labels for figures: a TOML file ("policy id" = "label") or a CSV (policy,label).
    /// Policies it leaves out get the shortest label that tells them apart (the family, plus
    /// the parameters that differ within it); labels.csv in the report lists them all
    #[arg(long)]
    labels: Option<PathBuf>,
    /// Results of two objectives: the two policies whose EAF difference (eaf_diff.png) is drawn,
    /// as "A,B" (policy ids or figure labels) [default: the two best-ranked]
    #[arg(long, value_name = "A,B")]
    eaf_diff: Option<String>,
}

/// The library's defaults, which the flags show.
fn d() -> ReportRequest {
    ReportRequest::default()
}

impl From<Args> for ReportRequest {
    fn from(a: Args) -> Self {
        ReportRequest {
            results: a.results,
            scores: a.scores,
            minimize: a.minimize,
            unit_col: a.unit_col,
            policy_col: a.policy_col,
            score_col: a.score_col,
            wide: a.wide,
            average_repeats: a.average_repeats,
            out: a.out,
            alpha: a.alpha,
            ci: a.ci,
            bootstrap_samples: a.bootstrap_samples,
            bayes_rope: a.bayes_rope,
            bayes_samples: a.bayes_samples,
            bayes_prior: a.bayes_prior,
            pairs: a.pairs,
            leaderboard: a.leaderboard,
            leaderboard_samples: a.leaderboard_samples,
            elo_intervals: a.elo_intervals,
            baseline: a.baseline,
            normalize: a.normalize,
            unit_weights: a.unit_weights,
            seed: a.seed,
            tie_tolerance: a.tie_tolerance,
            zero_method: a.zero_method,
            missing: a.missing,
            unit: a.unit,
            found_nothing: a.found_nothing,
            per_budget: a.per_budget,
            width: a.width,
            no_titles: a.no_titles,
            regret: a.regret,
            traces: a.traces,
            labels: match a.labels {
                Some(f) => Labels::File(f),
                None => Labels::None,
            },
            eaf_diff: a.eaf_diff,
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let summary = request::report(&args.into())?;
    print!("{}", summary.text);
    say!(
        "wrote {} files to {} in {:.2} s",
        summary.files.len(),
        summary.out.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn figure_width(s: &str) -> Result<f64, String> {
    report::figures::Page::parse_width(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_is_a_key_of_the_library_request_and_back() {
        // Python's report() passes keys by name: each flag must be one, and each key a flag.
        let cmd = crate::cli::command();
        let flags = crate::cli::flag_ids(cmd.find_subcommand("report").unwrap(), &[]);
        let mut keys: Vec<String> = crate::options::keys::<ReportRequest>()
            .iter()
            .map(|k| k.to_string())
            .collect();
        keys.sort();
        assert_eq!(flags, keys);
    }

    #[test]
    fn the_command_lines_defaults_are_the_librarys() {
        let Ok(crate::cli::Cli {
            command: crate::cli::Command::Report(args),
        }) = crate::cli::parse_from(["banditbench", "report", "r"])
        else {
            panic!("report r does not parse")
        };
        let parsed: ReportRequest = args.into();
        let d = ReportRequest {
            results: vec!["r".into()],
            ..ReportRequest::default()
        };
        assert_eq!(format!("{parsed:?}"), format!("{d:?}"));
    }
}
