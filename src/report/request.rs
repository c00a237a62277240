//! `report` as a library call: one [`ReportRequest`] holding everything the command line's
//! `report` and Python's `report()` take, each default written once (in `Default`; the
//! command line's flags show it from there), and [`report`], which both call.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Result, bail};
use serde::Deserialize;

use super::{ReportOptions, ReportSummary, ScoresFormat, UnitKind};
use crate::analysis::FoundNothing;
use crate::analysis::compare::{Missing, Options, Pairs, Toggle, UnitWeights};
use crate::analysis::normalize::Normalize;
use crate::analysis::stats::{CiKind, ZeroMethod};
use crate::options::{parsed, value_enum};

/// What the tests treat as one independent unit: chosen from the results (`auto`), or named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum UnitChoice {
    /// The dataset when there are two or more, else the task, else every cell.
    Auto,
    /// Scores averaged over runs, budgets and repetitions.
    Dataset,
    /// Averaged over budgets and repetitions.
    Task,
    /// Averaged over repetitions (HAMLET's Fig. 8 unit; not independent).
    TaskBudget,
    /// Every cell.
    TaskBudgetRepetition,
}

impl UnitChoice {
    fn kind(self) -> Option<UnitKind> {
        match self {
            UnitChoice::Auto => None,
            UnitChoice::Dataset => Some(UnitKind::Dataset),
            UnitChoice::Task => Some(UnitKind::Task),
            UnitChoice::TaskBudget => Some(UnitKind::TaskBudget),
            UnitChoice::TaskBudgetRepetition => Some(UnitKind::TaskBudgetRepetition),
        }
    }
}

/// Labels for figures: none, a file (TOML `"policy id" = "label"` or CSV `policy,label`), or
/// (from Python) a mapping.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Labels {
    #[default]
    None,
    File(PathBuf),
    Map(BTreeMap<String, String>),
}

/// A figure width: `column`, `page`, or inches (a number, or text such as `5.5in`).
fn width<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum W {
        Inches(f64),
        Text(String),
    }
    let text = match W::deserialize(d)? {
        W::Inches(v) => v.to_string(),
        W::Text(s) => s,
    };
    super::figures::Page::parse_width(&text).map_err(serde::de::Error::custom)
}

/// Everything `report` takes. The keys are the command line's flags with `_` for `-`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ReportRequest {
    /// Results folders, ranked together on the units they share.
    pub results: Vec<PathBuf>,
    /// A table of scores from any tool instead of results folders (CSV or parquet).
    pub scores: Option<PathBuf>,
    /// With `scores`: lower scores are better.
    pub minimize: bool,
    /// With `scores`: the unit column(s), the policy and score columns, a wide table, and
    /// whether several rows of one (unit, policy) are averaged.
    pub unit_col: Option<String>,
    pub policy_col: String,
    pub score_col: String,
    pub wide: bool,
    pub average_repeats: bool,
    /// The output folder [default: RESULTS/report, or SCORES-report next to the table].
    pub out: Option<PathBuf>,
    pub alpha: f64,
    #[serde(deserialize_with = "value_enum")]
    pub ci: CiKind,
    pub bootstrap_samples: usize,
    pub bayes_rope: Option<f64>,
    pub bayes_samples: usize,
    pub bayes_prior: f64,
    #[serde(deserialize_with = "parsed")]
    pub pairs: Pairs,
    #[serde(deserialize_with = "value_enum")]
    pub leaderboard: Toggle,
    pub leaderboard_samples: usize,
    pub elo_intervals: bool,
    pub baseline: Option<String>,
    #[serde(deserialize_with = "parsed")]
    pub normalize: Normalize,
    #[serde(deserialize_with = "parsed")]
    pub unit_weights: UnitWeights,
    pub seed: u64,
    pub tie_tolerance: f64,
    #[serde(deserialize_with = "value_enum")]
    pub zero_method: ZeroMethod,
    #[serde(deserialize_with = "value_enum")]
    pub missing: Missing,
    #[serde(deserialize_with = "value_enum")]
    pub unit: UnitChoice,
    #[serde(deserialize_with = "value_enum")]
    pub found_nothing: FoundNothing,
    pub per_budget: bool,
    #[serde(deserialize_with = "width")]
    pub width: f64,
    pub no_titles: bool,
    #[serde(deserialize_with = "value_enum")]
    pub regret: super::Regret,
    pub traces: Option<PathBuf>,
    pub labels: Labels,
    /// Two-objective results: the two policies whose EAF difference is drawn, "A,B" (ids or
    /// figure labels) [default: the two best-ranked].
    pub eaf_diff: Option<String>,
}

impl Default for ReportRequest {
    fn default() -> Self {
        let stats = Options::default();
        let report = ReportOptions::default();
        ReportRequest {
            results: Vec::new(),
            scores: None,
            minimize: false,
            unit_col: None,
            policy_col: "policy".into(),
            score_col: "score".into(),
            wide: false,
            average_repeats: false,
            out: None,
            alpha: stats.alpha,
            ci: stats.ci,
            bootstrap_samples: stats.bootstrap_samples,
            bayes_rope: stats.bayes_rope,
            bayes_samples: stats.bayes_samples,
            bayes_prior: stats.bayes_prior,
            pairs: stats.pairs,
            leaderboard: stats.leaderboard,
            leaderboard_samples: stats.leaderboard_samples,
            elo_intervals: stats.elo_intervals,
            baseline: stats.baseline,
            normalize: stats.normalize,
            unit_weights: stats.unit_weights,
            seed: stats.seed,
            tie_tolerance: stats.tie_tolerance,
            zero_method: stats.zero_method,
            missing: stats.missing,
            unit: UnitChoice::Auto,
            found_nothing: report.found_nothing,
            per_budget: report.per_budget,
            width: report.page.width_in,
            no_titles: !report.page.titles,
            regret: report.regret,
            traces: report.traces,
            labels: Labels::None,
            eaf_diff: report.eaf_diff,
        }
    }
}

impl ReportRequest {
    #[cfg(any(feature = "python", test))]
    /// A request given by name (Python's keywords as a JSON object); an unknown key or a bad
    /// value is refused, naming the key.
    pub fn from_json(json: &str) -> Result<ReportRequest> {
        let map = crate::options::keywords("report", json)?;
        crate::options::from_value("report", serde_json::Value::Object(map))
    }

    /// Refuse what the command line's parser refuses: neither or both inputs, and the
    /// options of a scores table without one.
    fn check(&self) -> Result<()> {
        match (self.results.is_empty(), &self.scores) {
            (true, None) => {
                bail!("report: give results folders, or a table of scores (scores)")
            }
            (false, Some(_)) => bail!(
                "report: results folders and a table of scores (scores) cannot be reported together; rank the table alone, or import it"
            ),
            _ => {}
        }
        let d = ReportRequest::default();
        if self.scores.is_none() {
            let given = [
                ("unit_col", self.unit_col.is_some()),
                ("policy_col", self.policy_col != d.policy_col),
                ("score_col", self.score_col != d.score_col),
                ("wide", self.wide),
                ("average_repeats", self.average_repeats),
            ];
            if let Some((name, _)) = given.iter().find(|(_, g)| *g) {
                bail!(
                    "report: {name} applies to a table of scores (scores), not to results folders"
                );
            }
        }
        Ok(())
    }

    fn options(&self) -> Result<ReportOptions> {
        let r = self.clone();
        Ok(ReportOptions {
            stats: Options {
                alpha: r.alpha,
                ci: r.ci,
                bootstrap_samples: r.bootstrap_samples,
                seed: r.seed,
                tie_tolerance: r.tie_tolerance,
                bayes_rope: r.bayes_rope,
                bayes_samples: r.bayes_samples,
                bayes_prior: r.bayes_prior,
                zero_method: r.zero_method,
                missing: r.missing,
                pairs: r.pairs,
                leaderboard: r.leaderboard,
                leaderboard_samples: r.leaderboard_samples,
                elo_intervals: r.elo_intervals,
                baseline: r.baseline,
                normalize: r.normalize,
                unit_weights: r.unit_weights,
            },
            unit: r.unit.kind(),
            found_nothing: r.found_nothing,
            per_budget: r.per_budget,
            page: super::figures::Page {
                width_in: r.width,
                titles: !r.no_titles,
            },
            labels: match &r.labels {
                Labels::None => BTreeMap::new(),
                Labels::File(f) => super::labels::read_label_map(f)?,
                Labels::Map(m) => m.clone(),
            },
            regret: r.regret,
            traces: r.traces,
            eaf_diff: r.eaf_diff,
            ..ReportOptions::default()
        })
    }
}

/// Write the report a request asks for: statistics, tables and figures from results folders
/// (ranked together on the units they share) or from a table of scores.
pub(crate) fn report(req: &ReportRequest) -> Result<ReportSummary> {
    req.check()?;
    let opts = req.options()?;
    if let Some(dir) = req.results.first() {
        let out = match (&req.out, req.results.len()) {
            (Some(o), _) => o.clone(),
            (None, 1) => dir.join("report"),
            (None, _) => {
                bail!("several results folders: say where the joint report goes with --out DIR")
            }
        };
        return super::report_together(&req.results, &out, &opts);
    }
    let Some(csv) = &req.scores else {
        bail!("report: give results folders, or a table of scores (scores)");
    };
    let stem = csv.file_stem().and_then(|s| s.to_str()).unwrap_or("scores");
    let out = req
        .out
        .clone()
        .unwrap_or_else(|| csv.with_file_name(format!("{stem}-report")));
    let format = ScoresFormat {
        unit: req.unit_col.clone(),
        policy: req.policy_col.clone(),
        score: req.score_col.clone(),
        wide: req.wide,
        average: req.average_repeats,
    };
    super::report_scores(csv, &format, req.minimize, &out, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_analysis_defaults_and_keys_read_as_the_flags_do() {
        let d = ReportRequest::default();
        let o = d.options().unwrap();
        assert_eq!(
            format!("{:?}", o.stats),
            format!("{:?}", Options::default())
        );
        let r = ReportRequest::from_json(
            r#"{"results": ["a"], "alpha": 0.01, "ci": "bootstrap", "pairs": "against:ucb1",
                "unit": "task-budget", "width": "column", "labels": {"ucb1": "UCB"},
                "baseline": null, "unit_weights": "per-dataset", "eaf_diff": "tpe,random"}"#,
        )
        .unwrap();
        assert_eq!(r.alpha, 0.01);
        assert_eq!(r.ci, CiKind::Bootstrap);
        assert_eq!(r.pairs, Pairs::Against("ucb1".into()));
        assert_eq!(r.unit, UnitChoice::TaskBudget);
        assert_eq!(r.width, 3.3);
        assert_eq!(r.unit_weights, UnitWeights::PerDataset);
        assert_eq!(r.eaf_diff.as_deref(), Some("tpe,random"));
        assert_eq!(r.options().unwrap().eaf_diff.as_deref(), Some("tpe,random"));
        assert_eq!(
            r.labels,
            Labels::Map([("ucb1".into(), "UCB".into())].into())
        );
        let w = ReportRequest::from_json(r#"{"width": 5.5, "labels": "l.toml"}"#).unwrap();
        assert_eq!((w.width, w.labels), (5.5, Labels::File("l.toml".into())));
    }

    #[test]
    fn a_bad_key_or_value_is_refused_naming_the_key() {
        for (json, wanted) in [
            (r#"{"alfa": 0.1}"#, "unknown field `alfa`"),
            (r#"{"ci": "t99"}"#, "ci: 't99' is not one of"),
            (r#"{"alpha": "0.1"}"#, "alpha: invalid type: string"),
            (r#"{"pairs": "some"}"#, "pairs: 'some': expected auto"),
            (r#"{"width": 40}"#, "width: a width of 40 in"),
            (r#"{"normalize": "best"}"#, "normalize: 'best': use none"),
        ] {
            let e = ReportRequest::from_json(json).unwrap_err().to_string();
            assert!(
                e.starts_with("report: ") && e.contains(wanted),
                "{json}: {e}"
            );
        }
        let both = ReportRequest {
            results: vec!["r".into()],
            scores: Some("s.csv".into()),
            ..Default::default()
        };
        assert!(report(&both).unwrap_err().to_string().contains("together"));
        let stray = ReportRequest {
            results: vec!["r".into()],
            wide: true,
            ..Default::default()
        };
        let e = report(&stray).unwrap_err().to_string();
        assert!(e.contains("wide applies to a table of scores"), "{e}");
        let e = report(&ReportRequest::default()).unwrap_err().to_string();
        assert!(e.contains("give results folders"), "{e}");
    }
}
