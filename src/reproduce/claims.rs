//! What every reproduction writes about a claim: the focus-versus-rest family test of
//! `analysis::family` as Markdown (on validation, then test scores), and a claim's parts with
//! their verdicts.

use std::fmt::Write as _;

use anyhow::Result;

use crate::analysis::{FamilyTest, UnitKind, focus_versus_rest};
use crate::results::Run;

/// `focus` against every other policy in `runs` at dataset units: the one family test.
pub fn family_test(runs: &[Run], higher: bool, focus: &str) -> Result<FamilyTest> {
    focus_versus_rest(runs, higher, UnitKind::Dataset, focus, &[])
}

/// The family test twice, as Markdown: on the validation score the methods select on, then on
/// the test score of the same recommended unit (selection on validation scores may not carry
/// over: the winner's curse grows with the configurations tried), with the two family tests
/// themselves (the test one when the pool records test scores). `metric` names the score
/// ("accuracy"), `name` the focus policy in words.
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
        let on_test = crate::analysis::units::on_test_scores(runs);
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
        t.focus_rank.0
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

/// A family test for the verdict rules' tests: `n_units` units, the smallest reachable Holm p
/// `min_p`, and one entry per (policy, Holm p, focus better).
#[cfg(test)]
pub(crate) fn family_for_tests(
    n_units: usize,
    min_p: f64,
    against: &[(&str, f64, bool)],
) -> FamilyTest {
    FamilyTest {
        n_units,
        n_datasets: n_units,
        focus_rank: (1.5, 1.0, 2.0),
        against: against
            .iter()
            .map(
                |&(policy, p_holm, focus_better)| crate::analysis::family::Against {
                    policy: policy.into(),
                    mean_rank: 2.0,
                    p_holm,
                    focus_better,
                    diff: (0.01, 0.0, 0.02),
                },
            )
            .collect(),
        min_p_holm: min_p,
    }
}
