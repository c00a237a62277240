//! HAMLET reproduced (Schmidt, Gastinger, Nicolas & Schülke 2020, "HAMLET: A Learning
//! Curve-Enabled Multi-Armed Bandit for Algorithm Selection", IJCNN): the Table II grid on recorded
//! traces, the parameter studies (Figs. 2, 3, 5, 6), and the paper's claim (Fig. 8: Variant 3 ranks
//! better than every non-HAMLET policy) tested no stronger than the data allow.
//!
//! The claim is a family of four hypotheses, Variant 3 against each non-HAMLET baseline
//! (round-robin, ucb1-btb, bestk-rewards, bestk-velocity), tested with Wilcoxon signed-rank and
//! Holm's correction over those four only. It is tested
//! - at independent units (datasets) and at task units (which share datasets, so are labelled);
//! - with settings that were not tuned on the test units: Variant 3 at the paper's ρ = 0.05 with
//!   the baselines' settings chosen on the *other* trace set, and every family chosen on the
//!   other trace set; the in-sample choice (tuned on the test units) is shown last, labelled;
//! - with the baselines' BTB start (some arms may never be tried) and with every arm tried first;
//! - with the mean score difference and its 95 % interval beside every test.
//!
//! Both experiments are files under `experiments/` that `banditbench run` also runs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::ReproduceOptions;
use crate::analysis::focus_versus_rest;
use crate::analysis::units::UnitKind;
use crate::experiment::{prepare, run_experiment};
use crate::report::{
    ReportOptions, Results, Run, best_per_family, mean_ranks_by_budget, read_results,
    report_loaded, report_policies,
};

const EXPERIMENTS: [&str; 2] = ["hamlet.toml", "hamlet-lcdb.toml"];
/// The claim's baselines: every non-HAMLET family of the paper's Table II.
pub(crate) const NON_HAMLET: [&str; 4] =
    ["round-robin", "ucb1-btb", "bestk-rewards", "bestk-velocity"];
const VARIANT3: &str = "hamlet-ucb";
/// The baselines' start phase: BTB's (none) and every arm once.
const STARTS: [&str; 2] = ["none", "each-arm-once"];

struct SetResults {
    name: String,
    dir: PathBuf,
    res: Results,
}

/// Run both HAMLET experiments (resuming finished cells) and write `results/hamlet/<experiment>/`:
/// `all/` (every setting, parameter studies), `paper-settings/`, `cross/` and `best/` (reports of
/// the compared settings) and `claim.md`.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut sets = Vec::new();
    for name in EXPERIMENTS {
        let (exp, ts) = prepare(&opts.experiments.join(name))?;
        let results = opts.results.join(&exp.name);
        run_experiment(
            &exp,
            &ts,
            &opts.run_options(&results),
            opts.progress.as_ref(),
        )?;
        let res = read_results(&results)?;
        let out = opts.results.join("hamlet").join(&exp.name);
        files.extend(
            report_loaded(&results, &res, &out.join("all"), &ReportOptions::default())?.files,
        );
        sets.push(SetResults {
            name: ts.trace_set()?.manifest.name.clone(),
            dir: results,
            res,
        });
    }
    for i in 0..sets.len() {
        let (this, other) = (&sets[i], &sets[1 - i]);
        let out = opts
            .results
            .join("hamlet")
            .join(this.dir.file_name().unwrap_or_default());
        let (md, written) = claim_document(this, other, &out)?;
        files.extend(written);
        let path = out.join("claim.md");
        std::fs::write(&path, md)?;
        files.push(path);
    }
    Ok(files)
}

/// Runs whose policy has the given baseline start (families without a `start` keep all runs).
fn with_start(runs: &[Run], start: &str) -> Vec<Run> {
    let want = format!("\"start\":\"{start}\"");
    runs.iter()
        .filter(|r| !r.params.contains("\"start\":") || r.params.contains(&want))
        .cloned()
        .collect()
}

/// The compared settings (family, policy id) of one selection.
type Chosen = Vec<(String, String)>;

/// Each family's best setting on `runs` (in-sample, or on the other trace set).
fn chosen_best(runs: &[Run], higher: bool) -> Chosen {
    best_per_family(runs, higher)
        .into_iter()
        .map(|(f, p, _)| (f, p))
        .collect()
}

/// Variant 3 at the paper's ρ = 0.05 and Variant 1 at its ε1 = ε2 = 0.1 (other parameters at
/// their defaults), the other families as in `baselines`.
fn chosen_paper(runs: &[Run], baselines: &Chosen) -> Result<Chosen> {
    let v3 = runs
        .iter()
        .find(|r| {
            r.family == VARIANT3
                && r.params.contains("\"rho\":0.05")
                && r.params.contains("\"bonus\":\"standard\"")
                && r.params.contains("\"unfit\":\"explore\"")
        })
        .map(|r| r.policy.clone());
    let Some(v3) = v3 else {
        bail!(
            "the results hold no {VARIANT3} with rho = 0.05, bonus = standard, unfit = explore (the paper's Variant 3); add it to the experiment"
        );
    };
    let mut out = vec![(VARIANT3.to_string(), v3)];
    // Variant 1 at the paper's ε1 = ε2 = 0.1 too, where the results hold it (not part of the
    // claim; it appears in the per-budget table).
    let v1 = runs
        .iter()
        .find(|r| {
            r.family == "hamlet-eps"
                && r.params.contains("\"eps1\":0.1,")
                && r.params.contains("\"eps2\":0.1,")
                && r.params.contains("\"unfit\":\"explore\"")
        })
        .map(|r| ("hamlet-eps".to_string(), r.policy.clone()));
    out.extend(v1.clone());
    out.extend(
        baselines
            .iter()
            .filter(|(f, _)| f != VARIANT3 && (v1.is_none() || f != "hamlet-eps"))
            .cloned(),
    );
    Ok(out)
}

/// One baseline's line of a claim test: (family, policy, its mean rank, p (Holm over the four),
/// Variant 3 better and significant, mean score difference V3 − baseline with its 95 % interval).
pub(crate) type Against = (String, String, f64, f64, bool, (f64, f64, f64));

/// One test of the claim: the comparison of Variant 3 with the four baselines at one unit.
pub(crate) struct ClaimTest {
    pub unit: UnitKind,
    pub n_units: usize,
    pub n_datasets: usize,
    /// Variant 3's mean rank among the five compared settings, with its 95 % t interval.
    pub v3_rank: (f64, f64, f64),
    /// Per baseline family: (policy, its mean rank, p (Holm over the four), Variant 3 better and
    /// significant, mean score difference V3 − baseline with 95 % interval).
    pub against: Vec<Against>,
    pub holds: bool,
    /// The smallest Holm-adjusted p any outcome could give at this number of units.
    pub min_p_holm: f64,
}

/// Test the claim on `runs` for the `chosen` settings at `unit`. An absent Variant 3 or baseline
/// is an error: a claim that compares against nothing never holds.
pub(crate) fn claim_test(
    runs: &[Run],
    chosen: &Chosen,
    higher: bool,
    unit: UnitKind,
) -> Result<ClaimTest> {
    let find = |fam: &str| chosen.iter().find(|c| c.0 == fam).map(|c| c.1.clone());
    let Some(v3) = find(VARIANT3) else {
        bail!("the claim compares Variant 3 ({VARIANT3}), which is absent from the results");
    };
    let mut ids = vec![v3.clone()];
    for fam in NON_HAMLET {
        let Some(p) = find(fam) else {
            bail!(
                "the claim compares against nothing for baseline family '{fam}': it is absent from the results (the claim needs all of {})",
                NON_HAMLET.join(", ")
            );
        };
        ids.push(p);
    }
    let t = focus_versus_rest(runs, higher, unit, &v3, &ids[1..])?;
    let against: Vec<Against> = NON_HAMLET
        .iter()
        .zip(&t.against)
        .map(|(fam, a)| {
            (
                fam.to_string(),
                a.policy.clone(),
                a.mean_rank,
                a.p_holm,
                a.focus_better,
                a.diff,
            )
        })
        .collect();
    Ok(ClaimTest {
        unit,
        n_units: t.n_units,
        n_datasets: t.n_datasets,
        v3_rank: t.focus_rank,
        holds: against.iter().all(|a| a.4),
        against,
        min_p_holm: t.min_p_holm,
    })
}

fn fmt_p(p: f64) -> String {
    crate::report::fmt_p_with(p, 1e-3, 1, 3)
}

/// A row of the claim table.
fn claim_row(selection: &str, start: &str, t: &ClaimTest) -> String {
    let cells: Vec<String> = t
        .against
        .iter()
        .map(|(_, _, _, p, ok, (m, lo, hi))| {
            format!(
                "p {}{}; Δ {:+.4} [{:+.4}, {:+.4}]",
                fmt_p(*p),
                if *ok { " ✓" } else { "" },
                m,
                lo,
                hi
            )
        })
        .collect();
    format!(
        "| {selection} | {start} | {} ({}{}) | {:.2} [{:.2}, {:.2}] | {} | **{}** |",
        t.unit.as_str(),
        t.n_units,
        if t.n_units > t.n_datasets {
            ", not independent"
        } else {
            ""
        },
        t.v3_rank.0,
        t.v3_rank.1,
        t.v3_rank.2,
        cells.join(" | "),
        if t.holds { "holds" } else { "does not hold" }
    )
}

fn claim_document(
    this: &SetResults,
    other: &SetResults,
    out: &Path,
) -> Result<(String, Vec<PathBuf>)> {
    let higher = this.res.higher_is_better;
    let mut files = Vec::new();
    let mut md = format!(
        "# HAMLET's claim on `{}`\n\n\
         The paper (Fig. 8): Variant 3 (learning-curve extrapolation + UCB bonus) ranks better than every \
         non-HAMLET policy. Tested here as a family of four hypotheses — Variant 3 against round-robin, \
         ucb1-btb, bestk-rewards and bestk-velocity — with Wilcoxon signed-rank tests (Pratt) and Holm's \
         correction over those four, α = 0.05. Ranks are among the five compared settings; the mean rank's 95 % t interval is clipped to [1, 5], the ranks it can take. A test \
         counts (✓) when Holm rejects and Variant 3 has the better mean rank; the claim holds when all \
         four count. Δ is the mean score difference Variant 3 − baseline over the units, with its 95 % t \
         interval. A cell that found nothing scores its unit's worst.\n\n\
         Settings compared, none tuned on the units they are tested on except in the last rows:\n\n\
         - **paper**: Variant 3 at the paper's ρ = 0.05; each baseline at its best setting on the \
         other trace set (`{}`);\n\
         - **cross**: every family at its best setting on the other trace set;\n\
         - **in-sample**: every family at its best setting on these traces (tuned on the test units: \
         optimistic, shown for comparison only).\n\n\
         Baseline start: `none` is BTB's (ucb1-btb and bestk may leave arms untried; what HAMLET \
         compared against), `each-arm-once` tries every arm first as Variant 3 and round-robin do.\n\n",
        this.name, other.name
    );
    let header = format!(
        "| settings | baseline start | unit (n) | V3 mean rank [95 %] | {} | claim |\n|---|---|---|---|---|---|---|---|---|\n",
        NON_HAMLET.map(|f| format!("vs {f}")).join(" | ")
    );
    md.push_str(&header);
    let mut notes = Vec::new();
    for start in STARTS {
        let runs = with_start(&this.res.runs, start);
        let other_runs = with_start(&other.res.runs, start);
        let cross = chosen_best(&other_runs, other.res.higher_is_better);
        let paper = chosen_paper(&runs, &cross)?;
        let in_sample = chosen_best(&runs, higher);
        for (label, chosen) in [
            ("paper", &paper),
            ("cross", &cross),
            ("in-sample", &in_sample),
        ] {
            for unit in [UnitKind::Dataset, UnitKind::Task] {
                let t = claim_test(&runs, chosen, higher, unit)?;
                if unit == UnitKind::Dataset && t.min_p_holm > 0.05 {
                    let note = format!(
                        "At {} dataset units no outcome can pass: the smallest exact two-sided Wilcoxon p is 2/2^{} and Holm over four hypotheses multiplies it by 4, giving at least {:.3}.",
                        t.n_units, t.n_units, t.min_p_holm
                    );
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
                let _ = writeln!(md, "{}", claim_row(label, start, &t));
            }
        }
        if start == "none" {
            // Reports of the compared settings, and Fig. 8's own unit, for the BTB start.
            for (label, chosen) in [
                ("paper-settings", &paper),
                ("cross", &cross),
                ("best", &in_sample),
            ] {
                let ids: Vec<String> = chosen.iter().map(|c| c.1.clone()).collect();
                let heading = format!("HAMLET on {}: {label} settings", this.name);
                let r = report_policies(
                    &this.dir,
                    &this.res,
                    &ids,
                    &out.join(label),
                    &ReportOptions::default(),
                    &heading,
                )?;
                files.extend(r.files);
            }
        }
    }
    md.push('\n');
    for n in &notes {
        let _ = writeln!(md, "{n}\n");
    }
    // The paper's own reading: (task, budget) units, not independent; shown for Fig. 8 only.
    let runs = with_start(&this.res.runs, "none");
    let cross = chosen_best(
        &with_start(&other.res.runs, "none"),
        other.res.higher_is_better,
    );
    let paper = chosen_paper(&runs, &cross)?;
    let t = claim_test(&runs, &paper, higher, UnitKind::TaskBudget)?;
    let _ = writeln!(
        md,
        "The paper's Fig. 8 unit, (task, budget) — {} units from {} datasets, **not independent**, so its p-values are too small — for the paper settings with BTB start:\n\n{header}{}\n",
        t.n_units,
        t.n_datasets,
        claim_row("paper", "none", &t)
    );
    let ids: Vec<String> = paper.iter().map(|c| c.1.clone()).collect();
    let _ = writeln!(
        md,
        "{}\n\nCompared settings (paper, BTB start):\n\n{}\n\nReports: `paper-settings/`, `cross/`, `best/` (BTB start; dataset units); `all/` holds every setting and the parameter studies.",
        budget_table(&runs, &paper, higher, &this.res.budget_unit),
        ids.iter()
            .map(|i| format!("- `{i}`"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok((md, files))
}

/// A markdown table: one row per budget, one column per compared setting, the mean rank among
/// those settings at dataset units of that budget (the row's best in bold).
fn budget_table(runs: &[Run], chosen: &Chosen, higher: bool, unit: &str) -> String {
    let ids: Vec<String> = chosen.iter().map(|b| b.1.clone()).collect();
    let mut md = format!(
        "Mean rank per budget ({}; the compared settings ranked within each dataset, runs and repetitions averaged; 1 = best; the best of each row in bold):\n\n| budget | {} |\n|---|{}\n",
        if unit == "task" {
            "budgets as a fraction of the task's mean arm length".to_string()
        } else {
            format!("budgets in {unit}")
        },
        chosen
            .iter()
            .map(|b| b.0.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(chosen.len())
    );
    for (b, means) in mean_ranks_by_budget(runs, &ids, higher, UnitKind::Dataset) {
        let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
        let cells: Vec<String> = means
            .iter()
            .map(|m| {
                if (m - lo).abs() < 5e-4 {
                    format!("**{m:.2}**")
                } else {
                    format!("{m:.2}")
                }
            })
            .collect();
        let _ = writeln!(md, "| {b} | {} |", cells.join(" | "));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dataset: &str, policy: &str, fam: &str, score: f64) -> Run {
        Run {
            family: fam.into(),
            ..Run::scored(dataset, 0, 1.0, 0, policy, score)
        }
    }

    #[test]
    fn a_claim_against_an_absent_baseline_is_an_error() {
        let mut runs = Vec::new();
        for d in ["a", "b", "c"] {
            runs.push(run(d, "v3", VARIANT3, 0.9));
            runs.push(run(d, "rr", "round-robin", 0.5));
        }
        let chosen: Chosen = vec![
            (VARIANT3.into(), "v3".into()),
            ("round-robin".into(), "rr".into()),
        ];
        let e = claim_test(&runs, &chosen, true, UnitKind::Dataset)
            .err()
            .expect("absent baselines are an error")
            .to_string();
        assert!(
            e.contains("compares against nothing") && e.contains("ucb1-btb"),
            "{e}"
        );
    }

    #[test]
    fn the_claim_family_is_four_hypotheses_with_holm_and_differences() {
        let mut runs = Vec::new();
        let fams = ["round-robin", "ucb1-btb", "bestk-rewards", "bestk-velocity"];
        for (i, d) in ["a", "b", "c", "d", "e", "f", "g", "h"].iter().enumerate() {
            runs.push(run(d, "v3", VARIANT3, 0.9 + 0.001 * i as f64));
            for (j, f) in fams.iter().enumerate() {
                runs.push(run(d, f, f, 0.5 + 0.01 * j as f64));
            }
        }
        let mut chosen: Chosen = vec![(VARIANT3.into(), "v3".into())];
        chosen.extend(fams.iter().map(|f| (f.to_string(), f.to_string())));
        let t = claim_test(&runs, &chosen, true, UnitKind::Dataset).unwrap();
        assert_eq!(t.n_units, 8);
        assert_eq!(t.v3_rank.0, 1.0);
        // Exact p at n = 8 with every difference positive: 2/256; Holm over four: 4 * 2/256.
        for a in &t.against {
            assert!((a.3 - 4.0 * 2.0 / 256.0).abs() < 1e-12, "{}", a.3);
            assert!(a.4);
        }
        assert!(t.holds);
        // Δ for round-robin: mean of (0.9 + 0.001 i) - 0.5 over i = 0..8 = 0.4035.
        assert!((t.against[0].5.0 - 0.4035).abs() < 1e-9);
        assert!((t.min_p_holm - 8.0 / 256.0).abs() < 1e-12);
    }
}
