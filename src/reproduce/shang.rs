//! D-TTTS reproduced (Shang, Kaufmann & Valko 2019, "A simple dynamic bandit algorithm for
//! hyper-parameter tuning", AutoML@ICML; slides "Bandits and Hyper-parameter Optimization") with
//! TTTS and T3C (Shang, de Heide, Ménard, Kaufmann & Valko 2020, "Fixed-Confidence Guarantees for
//! Bayesian Best-Arm Identification", AISTATS).
//!
//! Runs `experiments/shang-sklearn-grid.toml` and `experiments/shang-hpobench.toml` in the pool
//! world, writes a report per pool (ranks at dataset units, per-budget panels, anytime incumbent
//! curves), tests D-TTTS against each other policy as one named family (Wilcoxon–Holm at dataset
//! units, with the mean score difference and its interval beside each test), and measures the time
//! per sampling step of T3C, TTTS and uniform sampling, the slides' timing table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::ReproduceOptions;
use crate::analysis::compare::{Options, ScoreTable, compare, mean_difference, pair_tests};
use crate::analysis::units::{FoundNothing, UnitKind, unit_table};
use crate::results::Run;

const EXPERIMENTS: [&str; 2] = ["shang-sklearn-grid.toml", "shang-hpobench.toml"];
/// The policy the claim is about: D-TTTS with the slides' pseudo-arm.
const DTTTS: &str = "d-ttts(beta=0.5, max_resample=10000, queried=pseudo-arm)";
/// The slides' timing table (seconds per sampling step).
const SLIDES_TIMING: [(&str, f64); 3] = [("t3c", 1.6e-5), ("ttts", 2.3e-4), ("uniform", 6e-6)];

/// One row of the claim family: the other policy, its mean rank, Holm p, and the difference
/// focus − other (mean, 95 % t interval).
#[derive(Clone, Debug)]
pub struct Against {
    pub policy: String,
    pub mean_rank: f64,
    pub p_holm: f64,
    pub focus_better: bool,
    pub diff: (f64, f64, f64),
}

/// A claim about one policy (the focus) tested against every other as one family.
#[derive(Clone, Debug)]
pub struct FamilyTest {
    pub n_units: usize,
    pub focus_rank: f64,
    pub against: Vec<Against>,
    /// The smallest Holm-adjusted p any outcome could give at this number of units.
    pub min_p_holm: f64,
}

/// `focus` against every other policy in `runs`, at dataset units, as one family of hypotheses
/// (exact Wilcoxon signed-rank, Holm), with the mean difference and its 95 % t interval.
pub fn family_test(runs: &[Run], higher: bool, focus: &str) -> Result<FamilyTest> {
    if !runs.iter().any(|r| r.policy == focus) {
        bail!("the comparison is about {focus}, which is absent from the results");
    }
    let units = unit_table(runs, UnitKind::Dataset, FoundNothing::Worst, higher);
    let (table, _) = ScoreTable::from_rows(
        &units.rows,
        higher,
        crate::analysis::compare::Missing::Error,
        true,
    )?;
    let opts = Options::default();
    let c = compare(table, &opts);
    let idx = |p: &str| c.table.policies.iter().position(|x| x == p);
    let Some(d) = idx(focus) else {
        bail!("{focus} has no unit in the results");
    };
    let others: Vec<usize> = (0..c.table.policies.len()).filter(|&i| i != d).collect();
    let pairs: Vec<(usize, usize)> = others.iter().map(|&o| (d, o)).collect();
    let tests = pair_tests(&c.table, &pairs, &opts);
    let against = others
        .iter()
        .zip(&tests)
        .map(|(&o, t)| {
            let (m, lo, hi, _) = mean_difference(&c.table, d, o);
            Against {
                policy: c.table.policies[o].clone(),
                mean_rank: c.summary[o].mean_rank,
                p_holm: t.p_holm,
                focus_better: t.reject && c.summary[d].mean_rank < c.summary[o].mean_rank,
                diff: (m, lo, hi),
            }
        })
        .collect();
    let n = c.table.units.len();
    let min_p = (others.len() as f64 * 2.0 / 2f64.powi(n.min(1000) as i32)).min(1.0);
    Ok(FamilyTest {
        n_units: n,
        focus_rank: c.summary[d].mean_rank,
        against,
        min_p_holm: min_p,
    })
}

/// The family test twice, as Markdown: on the validation score the methods select on, then on
/// the test score of the same recommended unit (selection on validation scores may not carry
/// over: the winner's curse grows with the configurations tried). `metric` names the score
/// ("accuracy"), `name` the focus policy in words.
pub fn family_on_validation_and_test(
    runs: &[Run],
    higher: bool,
    focus: &str,
    metric: &str,
    name: &str,
) -> Result<String> {
    Ok(families_on_validation_and_test(runs, higher, focus, metric, name)?.0)
}

/// As `family_on_validation_and_test`, with the two family tests themselves (the test one when
/// the pool records test scores).
pub fn families_on_validation_and_test(
    runs: &[Run],
    higher: bool,
    focus: &str,
    metric: &str,
    name: &str,
) -> Result<(String, FamilyTest, Option<FamilyTest>)> {
    let t = family_test(runs, higher, focus)?;
    let mut md = format!(
        "### On validation {metric} (what the methods select on)\n\n{}\n",
        family_markdown(&t, &format!("validation {metric}"), name)
    );
    if runs.iter().any(|r| r.best_test_score.is_finite()) {
        let on_test: Vec<Run> = runs
            .iter()
            .map(|r| Run {
                best_score: r.best_test_score,
                ..r.clone()
            })
            .collect();
        let tt = family_test(&on_test, higher, focus)?;
        let _ = writeln!(
            md,
            "### On test {metric} (the same recommended unit)\n\n{}",
            family_markdown(&tt, &format!("test {metric}"), name)
        );
        return Ok((md, t, Some(tt)));
    }
    let _ = writeln!(
        md,
        "The pool has no test scores, so there is no test comparison: the claim rests on validation scores only.\n"
    );
    Ok((md, t, None))
}

/// What a claim expects of the focus policy against one baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Significantly better (Holm, within the family).
    Better,
    /// Not significantly worse.
    NotWorse,
}

/// One part of a claim: the baseline (by the start of its policy id), its words and what the
/// focus is expected to do against it.
pub struct ClaimPart<'a> {
    pub baseline: &'a str,
    pub words: &'a str,
    pub expect: Expect,
}

/// A part's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    DoesNotHold,
    /// Too few units: no outcome could reach α after Holm's correction, so the test cannot tell.
    Undecidable,
}

impl Verdict {
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::DoesNotHold => "does not hold",
            Verdict::Undecidable => "cannot be decided here",
        }
    }
}

/// The verdict of each part of a claim in a family test: (words, found, verdict). When no
/// outcome at this number of units could be significant, every part is undecidable: "better"
/// cannot be shown and "not worse" cannot be refuted, so neither is claimed.
pub fn verdicts(
    t: &FamilyTest,
    parts: &[ClaimPart<'_>],
    alpha: f64,
) -> Vec<(String, String, Verdict)> {
    parts
        .iter()
        .map(|c| {
            let Some(a) = t.against.iter().find(|a| a.policy.starts_with(c.baseline)) else {
                return (
                    c.words.to_string(),
                    "absent from the results".into(),
                    Verdict::DoesNotHold,
                );
            };
            let significant = a.p_holm <= alpha;
            let worse = significant && !a.focus_better;
            let holds = match c.expect {
                Expect::Better => a.focus_better,
                Expect::NotWorse => !worse,
            };
            let verdict = if t.min_p_holm > alpha {
                Verdict::Undecidable
            } else if holds {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            };
            let found = format!(
                "Δ {:+.4} [{:+.4}, {:+.4}], Holm p {:.3}: {}",
                a.diff.0,
                a.diff.1,
                a.diff.2,
                a.p_holm,
                if a.focus_better {
                    "significantly better"
                } else if worse {
                    "significantly worse"
                } else {
                    "no significant difference"
                }
            );
            (c.words.to_string(), found, verdict)
        })
        .collect()
}

/// `claim.md` of a reproduction: the claim, then per experiment and score (validation, test)
/// each part's finding and verdict; the claim holds where every part holds.
pub fn claim_markdown(
    title: &str,
    claim: &str,
    parts: &[ClaimPart<'_>],
    found: &[(String, FamilyTest)],
) -> String {
    let mut s = format!(
        "# {title}\n\n**The claim.** {claim}\n\n**Rule.** Each part is tested in the family of the focus policy against every other (exact Wilcoxon signed-rank at dataset units, Holm-adjusted, α = 0.05); \"better\" needs a significant difference in the focus policy's favour, \"not worse\" only that no significant difference goes against it. Validation is what the methods select on; test (the same recommended unit) is what a user gets: a claim that holds on validation only is marked so.\n\n| where | part | found | verdict |\n|---|---|---|---|\n"
    );
    for (place, t) in found {
        let v = verdicts(t, parts, 0.05);
        for (words, f, verdict) in &v {
            let _ = writeln!(s, "| {place} | {words} | {f} | {} |", verdict.words());
        }
        let whole = if v.iter().any(|x| x.2 == Verdict::DoesNotHold) {
            Verdict::DoesNotHold
        } else if v.iter().all(|x| x.2 == Verdict::Holds) {
            Verdict::Holds
        } else {
            Verdict::Undecidable
        };
        let _ = writeln!(
            s,
            "| {place} | **the whole claim** | {} units; smallest possible Holm p {:.3}{} | **{}** |",
            t.n_units,
            t.min_p_holm,
            if whole == Verdict::Undecidable {
                " (no difference can be significant with so few units: read the differences)"
            } else {
                ""
            },
            whole.words()
        );
    }
    s
}

/// The family test as Markdown; `name` is the focus policy's name in words ("D-TTTS").
pub fn family_markdown(t: &FamilyTest, metric: &str, name: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{name} against each other policy: one family of {} hypotheses, exact Wilcoxon signed-rank at {} dataset units (each the mean over runs, learners' pools, budgets and repetitions), Holm-adjusted. {name}'s mean rank: {:.2}. Δ = {name} − policy, the mean over units of the {metric} of the recommended configuration, with its 95 % t interval.\n",
        t.against.len(),
        t.n_units,
        t.focus_rank
    );
    if t.min_p_holm > 0.05 {
        let _ = writeln!(
            s,
            "With {} units the smallest Holm-adjusted p any outcome can give is {:.3}: no difference can be significant at 0.05 here, whatever the data. Read the differences, not the tests.\n",
            t.n_units, t.min_p_holm
        );
    }
    let _ = writeln!(
        s,
        "| policy | mean rank | Holm p | Δ [95 % CI] | {name} better (significant) |\n|---|---|---|---|---|"
    );
    for a in &t.against {
        let _ = writeln!(
            s,
            "| {} | {:.2} | {:.3} | {:+.4} [{:+.4}, {:+.4}] | {} |",
            a.policy,
            a.mean_rank,
            a.p_holm,
            a.diff.0,
            a.diff.1,
            a.diff.2,
            if a.focus_better { "yes" } else { "no" }
        );
    }
    s
}

/// The time per sampling step of T3C, TTTS and uniform sampling (K = 100) on the first learner's
/// grid of the sklearn-grid pool: (policy, seconds per step, slides' seconds).
pub fn timing(pool_dir: &Path, seconds: f64) -> Result<Vec<(String, f64, f64)>> {
    let pool = crate::trace::pool::load_pool(pool_dir, true)?;
    let mut out = Vec::new();
    for (policy, slides) in SLIDES_TIMING {
        let t = crate::bench::measure_pool(&pool, 0, policy, 1000.0, seconds)?;
        out.push((
            policy.to_string(),
            1.0 / t.decisions_per_second().max(1e-12),
            slides,
        ));
    }
    Ok(out)
}

fn timing_markdown(rows: &[(String, f64, f64)]) -> String {
    let get = |p: &str, i: usize| {
        rows.iter()
            .find(|r| r.0 == p)
            .map_or(f64::NAN, |r| if i == 1 { r.1 } else { r.2 })
    };
    let mut s = String::from(
        "| sampling rule | measured s per step | slides' s per step |\n|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(s, "| {} | {:.2e} | {:.1e} |", r.0, r.1, r.2);
    }
    let _ = writeln!(
        s,
        "\nRatio TTTS / T3C: measured {:.1}×, slides {:.1}×. Ratio T3C / uniform: measured {:.0}×, slides {:.1}×.",
        get("ttts", 1) / get("t3c", 1),
        get("ttts", 2) / get("t3c", 2),
        get("t3c", 1) / get("uniform", 1),
        get("t3c", 2) / get("uniform", 2)
    );
    s
}

/// Run both experiments and write `results/shang/`: a report per pool, `README.md` with the
/// family tests and the timing table, and `timing.csv`.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("shang");
    std::fs::create_dir_all(&out)?;
    let mut files = Vec::new();
    let mut md = String::from(
        "# D-TTTS, TTTS and T3C reproduced on recorded pools\n\n\
         Shang, Kaufmann & Valko 2019, *A simple dynamic bandit algorithm for hyper-parameter tuning* \
         (AutoML@ICML), and the slides *Bandits and Hyper-parameter Optimization*; TTTS and T3C from \
         Shang, de Heide, Ménard, Kaufmann & Valko 2020 (AISTATS). Written by \
         `banditbench reproduce shang`.\n\n\
         **The slides' claims.** D-TTTS treats HPO as infinite-armed best-arm identification: \
         it is anytime, needs no budget split, and is shown (figures on wine, breast cancer, adult, \
         MNIST) to be competitive with Hyperband and better than random search; T3C removes TTTS's \
         re-sampling cost (timing table: T3C 1.6e-5 s, TTTS 2.3e-4 s, uniform 6e-6 s per step).\n\n\
         **What differs here.** The slides tune SVM and MLP hyper-parameters on continuous spaces; \
         here each task is a recorded finite pool. On sklearn-grid a pull trains one more unit of \
         a learning curve (not an i.i.d. re-evaluation); on HPOBench a pull reveals one more \
         seed's full-fidelity score (the i.i.d. model of the theory). Every policy runs at its \
         papers' defaults; nothing was tuned on these tasks.\n\n",
    );
    let mut found: Vec<(String, FamilyTest)> = Vec::new();
    for name in EXPERIMENTS {
        let super::PoolRun {
            name: exp_name,
            data,
            results: res,
            ..
        } = super::run_pool_and_report(opts, name, &out, &mut files)?;
        let (fam, on_val, on_test) = families_on_validation_and_test(
            &res.runs,
            res.higher_is_better,
            DTTTS,
            &data.pool.manifest.metric,
            "D-TTTS (pseudo-arm)",
        )?;
        found.push((format!("`{}`, validation", data.pool.manifest.name), on_val));
        if let Some(t) = on_test {
            found.push((format!("`{}`, test", data.pool.manifest.name), t));
        }
        let _ = writeln!(
            md,
            "## {} ({} tasks{})\n\n{}\n\nReport with per-budget ranks and anytime incumbent curves: [`{}/report.md`]({}/report.md).\n",
            data.pool.manifest.name,
            data.tasks.len(),
            if data.dropped.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} tasks not yet recorded were left out: {}",
                    data.dropped.len(),
                    data.dropped.join(", ")
                )
            },
            fam,
            exp_name,
            exp_name
        );
    }
    let pool_dir = opts.traces.join("sklearn-grid");
    let rows = timing(&pool_dir, opts.timing_seconds)?;
    let _ = writeln!(
        md,
        "## Time per sampling step\n\nMeasured here on one learner's 625-configuration grid of sklearn-grid, K = 100 configurations, 1 000 units per cell, one thread (`banditbench bench --only pool` measures the same). Only ratios can be compared with the slides, which ran other code on other hardware.\n\n{}\nTTTS's cost is its re-sampling loop, which runs until the challenger differs from the leader: it grows as the posteriors concentrate. With at most 27 binarised units per arm the posteriors here stay wide, so the loop ends quickly and TTTS is only a little slower than T3C; the slides' fixed-confidence runs sample until the posteriors concentrate.",
        timing_markdown(&rows)
    );
    let mut csv = String::from("policy,seconds_per_step,slides_seconds_per_step\n");
    for r in &rows {
        let _ = writeln!(csv, "{},{:e},{:e}", r.0, r.1, r.2);
    }
    super::write_listed(&mut files, out.join("timing.csv"), &csv)?;
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    let claim = claim_markdown(
        "D-TTTS's claim on recorded pools",
        "Shang, Kaufmann & Valko 2019 (slides): D-TTTS (the pseudo-arm version) is competitive with Hyperband and better than random search.",
        &[
            ClaimPart {
                baseline: "hyperband",
                words: "not worse than Hyperband",
                expect: Expect::NotWorse,
            },
            ClaimPart {
                baseline: "random-search",
                words: "better than random search",
                expect: Expect::Better,
            },
        ],
        &found,
    );
    super::write_listed(&mut files, out.join("claim.md"), &claim)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_family_is_dttts_against_every_other_policy_with_differences() {
        // Four datasets; D-TTTS beats random search by 0.01 on each and ties Hyperband.
        let mut runs = Vec::new();
        for (i, d) in ["a", "b", "c", "d"].iter().enumerate() {
            let base = 0.8 + 0.01 * i as f64;
            runs.push(Run::scored(d, 0, 10.0, 0, DTTTS, base + 0.01));
            runs.push(Run::scored(d, 0, 10.0, 0, "random-search", base));
            runs.push(Run::scored(d, 0, 10.0, 0, "hyperband(eta=3)", base + 0.01));
        }
        let t = family_test(&runs, true, DTTTS).unwrap();
        assert_eq!(t.n_units, 4);
        assert_eq!(t.against.len(), 2);
        let rs = t
            .against
            .iter()
            .find(|a| a.policy == "random-search")
            .unwrap();
        assert!((rs.diff.0 - 0.01).abs() < 1e-12);
        // Two hypotheses at 4 units: the smallest Holm p is 2 x 2/16 = 0.25, so nothing rejects.
        assert!((t.min_p_holm - 0.25).abs() < 1e-12);
        assert!(!rs.focus_better && rs.p_holm >= 0.25);
        let hb = t
            .against
            .iter()
            .find(|a| a.policy != "random-search")
            .unwrap();
        assert!(hb.diff.0.abs() < 1e-12);
        // Without D-TTTS there is no claim to test.
        let e = family_test(&runs[1..2], true, DTTTS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("absent"), "{e}");
    }

    #[test]
    fn timing_ratios_are_computed_from_the_rows() {
        let rows = vec![
            ("t3c".to_string(), 2e-5, 1.6e-5),
            ("ttts".to_string(), 4e-5, 2.3e-4),
            ("uniform".to_string(), 1e-6, 6e-6),
        ];
        let s = timing_markdown(&rows);
        assert!(s.contains("measured 2.0×, slides 14.4×"), "{s}");
        assert!(s.contains("measured 20×"), "{s}");
    }
}
