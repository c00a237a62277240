//! Auto-WEKA's comparison reproduced on recorded pools (Thornton, Hutter, Hoos & Leyton-Brown
//! 2013, "Auto-WEKA: Combined Selection and Hyperparameter Optimization of Classification
//! Algorithms", KDD; its numbers as the AutoML book's chapter 4 re-reports them): Ex-Def, grid
//! search, random search, TPE and SMAC on the CASH problem, pool-based, from
//! `experiments/auto-weka-sklearn-random.toml` (in evaluations), `…-seconds.toml` (in recorded
//! CPU seconds) and `auto-weka-sklearn-grid.toml` (the 4-learner grid pool at full fidelity).
//!
//! Writes `results/auto-weka/README.md`: per experiment the mean ranks at dataset units per
//! budget, wins/ties/losses of each optimiser against Ex-Def, random and grid search and of TPE
//! against SMAC (validation and test), SMAC against the others as one family of hypotheses
//! (Wilcoxon–Holm, mean differences with intervals), and the paper's findings beside ours; plus a
//! report per experiment (ranks, anytime incumbent curves, figures).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::claims::{family_markdown, family_test};
use super::{PoolRun, ReproduceOptions};
use crate::analysis::compare::DEFAULT_TIE_TOLERANCE;
use crate::analysis::{FoundNothing, UnitKind, average_ranks_tol, unit_table, within_tolerance};
use crate::results::Run;
use crate::trace::Status;

const RANDOM: &str = "auto-weka-sklearn-random.toml";
const SECONDS: &str = "auto-weka-sklearn-random-seconds.toml";
const GRID: &str = "auto-weka-sklearn-grid.toml";

/// The paper's name of a policy family.
fn method(family: &str) -> &str {
    match family {
        "ex-def" => "Ex-Def",
        "grid-search" => "grid search",
        "random-search" => "random search",
        "tpe" => "TPE",
        "smac" => "SMAC",
        other => other,
    }
}

const ORDER: [&str; 5] = ["ex-def", "grid-search", "random-search", "tpe", "smac"];

/// Per (family, dataset, budget): the unit table's validation and test score of the recommended
/// configuration at that dataset unit (the mean over runs and repetitions; a cell that found
/// nothing scores the worst of its unit).
type Means = BTreeMap<(String, String, u64), (f64, f64)>;

/// The tie rule of every table and count here: the analysis's shared relative tolerance.
fn tied(a: f64, b: f64) -> bool {
    within_tolerance(a, b, DEFAULT_TIE_TOLERANCE)
}

fn unit_means(runs: &[Run], higher: bool) -> Means {
    let mut budgets: Vec<u64> = runs.iter().map(|r| r.budget.to_bits()).collect();
    budgets.sort_unstable();
    budgets.dedup();
    let mut out = Means::new();
    for b in budgets {
        // One policy per family in these experiments: the family names the unit table's column.
        let at: Vec<Run> = runs
            .iter()
            .filter(|r| r.budget.to_bits() == b)
            .map(|r| Run {
                policy: r.family.clone(),
                ..r.clone()
            })
            .collect();
        let on_test = crate::analysis::units::on_test_scores(&at);
        let val = unit_table(&at, UnitKind::Dataset, FoundNothing::Worst, higher);
        let test = unit_table(&on_test, UnitKind::Dataset, FoundNothing::Worst, higher);
        for ((d, f, v), (_, _, t)) in val.rows.into_iter().zip(test.rows) {
            out.insert((f, d, b), (v, t));
        }
    }
    out
}

/// Wins, ties and losses of `a` against `b` over the datasets at `budget` (higher is better);
/// `test` compares test scores.
fn wtl(m: &Means, a: &str, b: &str, budget: u64, datasets: &[String], test: bool) -> [usize; 3] {
    let mut out = [0; 3];
    for d in datasets {
        let get = |f: &str| m.get(&(f.to_string(), d.clone(), budget));
        let (Some(x), Some(y)) = (get(a), get(b)) else {
            continue;
        };
        let (x, y) = if test { (x.1, y.1) } else { (x.0, y.0) };
        out[outcome(x, y)] += 1;
    }
    out
}

/// 0 = win, 1 = tie, 2 = loss of `x` against `y` (higher is better).
fn outcome(x: f64, y: f64) -> usize {
    if tied(x, y) {
        1
    } else if x > y {
        0
    } else {
        2
    }
}

/// Mean rank (1 = best, ties averaged) of each family over the datasets at `budget`.
fn mean_ranks(m: &Means, families: &[String], budget: u64, datasets: &[String]) -> Vec<f64> {
    let mut sum = vec![0.0; families.len()];
    let mut n = 0.0f64;
    for d in datasets {
        let v: Option<Vec<f64>> = families
            .iter()
            .map(|f| m.get(&(f.clone(), d.clone(), budget)).map(|x| x.0))
            .collect();
        let Some(v) = v else { continue };
        n += 1.0;
        for (s, r) in sum
            .iter_mut()
            .zip(average_ranks_tol(&v, true, DEFAULT_TIE_TOLERANCE))
        {
            *s += r;
        }
    }
    sum.iter().map(|s| s / n.max(1.0)).collect()
}

/// The best full-fidelity validation score of each task of a pool run over its grid (defaults
/// excluded: what an exhaustive grid search finds), with the test score of that configuration; per dataset, the mean over runs.
fn exhaustive(run: &PoolRun) -> BTreeMap<String, (f64, f64)> {
    let pool = &run.data.pool;
    let units = pool.manifest.units as usize;
    let sign = pool.manifest.direction.sign();
    let mut acc: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
    for t in &run.data.tasks {
        let pt = &pool.tasks[t.task];
        let mut best: Option<(f64, f64)> = None;
        for (c, curve) in pt.curves.iter().enumerate() {
            if pool.defaults.contains(&Some(c as u32))
                || !t.learners.contains(&pool.configs[c].learner)
                || curve.len() < units
                || curve.status[units - 1] != Status::Ok
            {
                continue;
            }
            let (v, te) = (
                f64::from(curve.score[units - 1]),
                f64::from(curve.test_score[units - 1]),
            );
            if best.is_none_or(|b| sign * v > sign * b.0) {
                best = Some((v, te));
            }
        }
        if let Some((v, te)) = best {
            let e = acc.entry(pt.dataset.clone()).or_default();
            e.0 += v;
            e.1 += te;
            e.2 += 1.0;
        }
    }
    acc.into_iter()
        .map(|(d, (v, t, n))| (d, (v / n, t / n)))
        .collect()
}

/// What one experiment gives the summary of findings.
struct Section {
    means: Means,
    families: Vec<String>,
    datasets: Vec<String>,
    budgets: Vec<u64>,
}

fn fmt_budget(b: u64) -> String {
    crate::report::figures::style::fmt_number(f64::from_bits(b))
}

impl Section {
    /// The families present in `runs` in the paper's order, the datasets, and the budgets from
    /// the smallest.
    fn of(runs: &[Run], higher: bool) -> Section {
        let present: BTreeSet<&str> = runs.iter().map(|r| r.family.as_str()).collect();
        let families = ORDER
            .iter()
            .filter(|f| present.contains(*f))
            .map(|f| f.to_string())
            .collect();
        let datasets: Vec<String> = runs
            .iter()
            .map(|r| r.dataset.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut budgets: Vec<u64> = runs.iter().map(|r| r.budget.to_bits()).collect();
        budgets.sort_by(|a, b| f64::from_bits(*a).total_cmp(&f64::from_bits(*b)));
        budgets.dedup();
        Section {
            means: unit_means(runs, higher),
            families,
            datasets,
            budgets,
        }
    }

    /// `family`'s validation (or, with `test`, test) score at `budget`, the mean over the
    /// datasets (a dataset it has no score on counts as 0).
    fn mean_at(&self, family: &str, budget: u64, test: bool) -> f64 {
        self.datasets
            .iter()
            .filter_map(|d| {
                self.means
                    .get(&(family.to_string(), d.clone(), budget))
                    .map(|x| if test { x.1 } else { x.0 })
            })
            .sum::<f64>()
            / self.datasets.len() as f64
    }

    /// On how many datasets `family` is best alone at `budget` (validation), with the datasets
    /// where it ties for the best (the report's tie tolerance) counted apart, never as a win.
    fn best_count(&self, family: &str, budget: u64) -> String {
        let (mut alone, mut shared) = (0, 0);
        for d in &self.datasets {
            let get = |f: &str| {
                self.means
                    .get(&(f.to_string(), d.clone(), budget))
                    .map(|x| x.0)
            };
            let Some(me) = get(family) else {
                continue;
            };
            let others: Vec<f64> = self
                .families
                .iter()
                .filter(|f| f.as_str() != family)
                .filter_map(|f| get(f))
                .collect();
            if others.iter().all(|&o| o < me && !tied(o, me)) {
                alone += 1;
            } else if others.iter().all(|&o| o < me || tied(o, me)) {
                shared += 1;
            }
        }
        format!(
            "{alone}/{} (tied for best on {shared} more)",
            self.datasets.len()
        )
    }

    /// "wins/datasets" of `a` against `b` at `budget`.
    fn wins(&self, a: &str, b: &str, budget: u64, test: bool) -> String {
        let x = wtl(&self.means, a, b, budget, &self.datasets, test);
        format!("{}/{}", x[0], self.datasets.len())
    }
}

/// The pairs the wins/ties/losses table compares: each optimiser against Ex-Def, random search
/// and grid search (grid search against random search only once), then TPE against SMAC.
fn pairs(families: &[String]) -> Vec<(&'static str, &'static str)> {
    let has = |f: &str| families.iter().any(|x| x == f);
    let mut pairs = Vec::new();
    for base in ["ex-def", "random-search", "grid-search"] {
        for f in ["grid-search", "random-search", "tpe", "smac"] {
            if f != base && !(base == "random-search" && f == "grid-search") && has(f) && has(base)
            {
                pairs.push((f, base));
            }
        }
    }
    if has("tpe") && has("smac") {
        pairs.push(("tpe", "smac"));
    }
    pairs
}

/// The mean rank and validation accuracy of each family per budget, in `md` and as rows of
/// `ranks.csv`.
fn rank_table(md: &mut String, csv: &mut String, name: &str, unit: &str, s: &Section) {
    let _ = write!(
        md,
        "Mean rank at {} dataset units (validation accuracy of the recommended configuration, each unit the mean over runs and repetitions; 1 = best) and, after the slash, the mean validation accuracy (%):\n\n| budget ({unit}) |",
        s.datasets.len()
    );
    for f in &s.families {
        let _ = write!(md, " {} |", method(f));
    }
    md.push_str("\n|---|");
    for _ in &s.families {
        md.push_str("---|");
    }
    md.push('\n');
    for &b in &s.budgets {
        let ranks = mean_ranks(&s.means, &s.families, b, &s.datasets);
        let _ = write!(md, "| {} |", fmt_budget(b));
        for (f, r) in s.families.iter().zip(&ranks) {
            let mean = s.mean_at(f, b, false);
            let _ = write!(md, " {r:.2} / {:.2} |", 100.0 * mean);
            let _ = writeln!(
                csv,
                "{name},{},{f},{r},{mean},{}",
                f64::from_bits(b),
                s.mean_at(f, b, true)
            );
        }
        md.push('\n');
    }
}

/// Wins, ties and losses of each of `pairs` per budget, validation then test.
fn wtl_table(md: &mut String, unit: &str, s: &Section) {
    let _ = write!(
        md,
        "\nWins / ties / losses over the {} datasets (the first method against the second; validation accuracy, then test accuracy of the same configuration):\n\n| pair |",
        s.datasets.len()
    );
    for &b in &s.budgets {
        let _ = write!(md, " {} {unit}: validation | test |", fmt_budget(b));
    }
    md.push_str("\n|---|");
    for _ in &s.budgets {
        md.push_str("---|---|");
    }
    md.push('\n');
    for (a, b) in pairs(&s.families) {
        let _ = write!(md, "| {} vs {} |", method(a), method(b));
        for &bu in &s.budgets {
            let v = wtl(&s.means, a, b, bu, &s.datasets, false);
            let t = wtl(&s.means, a, b, bu, &s.datasets, true);
            let _ = write!(
                md,
                " {}/{}/{} | {}/{}/{} |",
                v[0], v[1], v[2], t[0], t[1], t[2]
            );
        }
        md.push('\n');
    }
}

/// What the reproduction writes as it goes: the README, `ranks.csv` and the list of files.
struct Writing {
    md: String,
    csv: String,
    files: Vec<PathBuf>,
}

/// Run one experiment, report on it, and write its section of the README.
fn section(
    opts: &ReproduceOptions,
    file: &str,
    intro: &str,
    unit: &str,
    out: &Path,
    w: &mut Writing,
) -> Result<(Section, PoolRun)> {
    let run = super::run_pool_and_report(opts, file, out, &mut w.files)?;
    let (md, csv) = (&mut w.md, &mut w.csv);
    if !run.data.dropped.is_empty() {
        bail!(
            "{file}: {} tasks of {} are not recorded; the reproduction needs the complete pool",
            run.data.dropped.len(),
            run.data.pool.manifest.name
        );
    }
    let runs = &run.results.runs;
    let sec = Section::of(runs, run.results.higher_is_better);
    let name = run.name.clone();
    let _ = writeln!(md, "## {name}\n\n{intro}\n");
    rank_table(md, csv, &name, unit, &sec);
    wtl_table(md, unit, &sec);

    // SMAC against the others as one family.
    if let Some(smac) = runs.iter().find(|r| r.family == "smac") {
        let t = family_test(runs, run.results.higher_is_better, &smac.policy.clone())?;
        let _ = writeln!(
            md,
            "\n### SMAC against the others\n\n{}",
            family_markdown(&t, "validation accuracy", "SMAC")
        );
    }
    let _ = writeln!(
        md,
        "Report with ranks, anytime incumbent curves and figures: [`{name}/report.md`]({name}/report.md).\n"
    );
    Ok((sec, run))
}

/// Each method of `grid` at its largest budget against the exhaustive grid `full`: wins, ties and
/// losses over the datasets, validation then test.
fn versus_exhaustive(md: &mut String, grid: &Section, full: &BTreeMap<String, (f64, f64)>) {
    let top = *grid.budgets.last().expect("budgets");
    let vs_full = |f: &str, test: bool| -> [usize; 3] {
        let mut o = [0; 3];
        for d in &grid.datasets {
            let (Some(x), Some(y)) = (
                grid.means.get(&(f.to_string(), d.clone(), top)),
                full.get(d),
            ) else {
                continue;
            };
            let (x, y) = if test { (x.1, y.1) } else { (x.0, y.0) };
            o[outcome(x, y)] += 1;
        }
        o
    };
    let _ = writeln!(
        md,
        "### Against the exhaustive grid\n\nThe whole grid (2 500 evaluations per task, the best last-unit validation accuracy; the mean over runs) against each method at {} evaluations, over the {} datasets: wins / ties / losses of the method, validation then test.\n\n| method | validation | test |\n|---|---|---|",
        fmt_budget(top),
        grid.datasets.len()
    );
    for f in &grid.families {
        let (v, t) = (vs_full(f, false), vs_full(f, true));
        let _ = writeln!(
            md,
            "| {} | {}/{}/{} | {}/{}/{} |",
            method(f),
            v[0],
            v[1],
            v[2],
            t[0],
            t[1],
            t[2]
        );
    }
    md.push('\n');
}

/// The paper's findings beside ours: counts over the datasets of the three experiments (`evals`,
/// `secs`, `grid`) and of the exhaustive grid `full`.
fn findings(
    md: &mut String,
    [evals, secs, grid]: [&Section; 3],
    full: &BTreeMap<String, (f64, f64)>,
) {
    let top = *grid.budgets.last().expect("budgets");
    let eb = *evals.budgets.last().expect("budgets");
    let sb = *secs.budgets.last().expect("budgets");
    let _ = writeln!(
        md,
        "## The paper's findings beside ours\n\n\
         | finding (Thornton et al. 2013; Kotthoff et al. 2019, ch. 4) | paper | ours |\n|---|---|---|\n\
         | SMAC-based Auto-WEKA gives the best cross-validation performance on most datasets | most of 21 | SMAC best alone (validation) on {} datasets at {} evaluations, {} at {} s; TPE best alone on {} and {} |\n\
         | Auto-WEKA beats Ex-Def (the best default learner) | on most of 21, less so on test | SMAC beats Ex-Def on {} (validation), {} (test) at {} evaluations; {} and {} at {} s |\n\
         | Random search beats grid search | 9/21 (CV), 7/21 (test) | {} (validation), {} (test) on `sklearn-grid` at {} evaluations (a truncated grid) |\n\
         | Auto-WEKA beats grid search with a fraction of its compute | 14/21 (CV) | SMAC at {} evaluations against the exhaustive grid: see above (the exhaustive grid is the oracle on validation, so it cannot lose there) |\n\
         | TPE against SMAC | SMAC's Auto-WEKA ahead of the others on most of 21 (first row) | TPE beats SMAC on {} (validation), {} (test) at {} evaluations; {} on `sklearn-grid` |\n\
         | Grid search beats Ex-Def | 15/21 (test) | {} (test), {} (validation) on `sklearn-grid` at {} evaluations; the exhaustive grid: {} (test) |\n",
        evals.best_count("smac", eb),
        fmt_budget(eb),
        secs.best_count("smac", sb),
        fmt_budget(sb),
        evals.best_count("tpe", eb),
        secs.best_count("tpe", sb),
        evals.wins("smac", "ex-def", eb, false),
        evals.wins("smac", "ex-def", eb, true),
        fmt_budget(eb),
        secs.wins("smac", "ex-def", sb, false),
        secs.wins("smac", "ex-def", sb, true),
        fmt_budget(sb),
        grid.wins("random-search", "grid-search", top, false),
        grid.wins("random-search", "grid-search", top, true),
        fmt_budget(top),
        fmt_budget(top),
        evals.wins("tpe", "smac", eb, false),
        evals.wins("tpe", "smac", eb, true),
        fmt_budget(eb),
        grid.wins("tpe", "smac", top, false),
        grid.wins("grid-search", "ex-def", top, true),
        grid.wins("grid-search", "ex-def", top, false),
        fmt_budget(top),
        {
            let beats = grid
                .datasets
                .iter()
                .filter(|d| {
                    let (Some(e), Some(f)) = (
                        grid.means.get(&("ex-def".to_string(), (*d).clone(), top)),
                        full.get(*d),
                    ) else {
                        return false;
                    };
                    outcome(f.1, e.1) == 0
                })
                .count();
            format!("{beats}/{}", grid.datasets.len())
        },
    );
    let _ = writeln!(
        md,
        "Counts are datasets; a dataset's score is the mean over its runs and repetitions. They describe these {} and {} datasets and are not tests; the family tests above are.",
        evals.datasets.len(),
        grid.datasets.len()
    );
}

/// Run the three experiments and write `results/auto-weka/`: `README.md`, `ranks.csv` and a
/// report per experiment.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("auto-weka");
    std::fs::create_dir_all(&out)?;
    let files = Vec::new();
    let md = String::from(
        "# Auto-WEKA's comparison on recorded pools\n\n\
         Thornton, Hutter, Hoos & Leyton-Brown 2013, *Auto-WEKA: Combined Selection and \
         Hyperparameter Optimization of Classification Algorithms* (KDD), with its numbers as the \
         AutoML book's chapter 4 re-reports them. Written by `banditbench reproduce auto-weka`.\n\n\
         **What differs here.** Auto-WEKA searched 39 WEKA learners, ensembles and feature \
         selection on 21 datasets with 10-fold cross-validation, 4 × 30 CPU hours per method and \
         dataset (grid search far more). Here the optimisers replay recorded evaluations: \
         pool-based optimisation (HPO-B's protocol), where each method chooses among the \
         configurations recorded on a dataset that it has not evaluated yet, and an evaluation \
         reveals that configuration's recorded validation accuracy (a 60/20/20 split). \
         `sklearn-random` is 13 scikit-learn learners × 200 random configurations on 12 datasets, \
         with each learner's scikit-learn defaults recorded beside it (Ex-Def); `sklearn-grid` \
         is 4 learners × a 625-point grid on 6 datasets × 3 runs, where grid search is exact, \
         with the 4 learners' defaults recorded as whole curves beside it. \
         Nothing was tuned on these datasets: TPE's γ = 0.15 (Auto-WEKA's), SMAC's forest as its \
         paper gives it, every second SMAC configuration random.\n\n",
    );
    let csv = String::from(
        "experiment,budget,family,mean_rank,mean_validation_accuracy,mean_test_accuracy\n",
    );
    let mut wr = Writing { md, csv, files };
    let (evals, _) = section(
        opts,
        RANDOM,
        "`sklearn-random`'s joint pool (about 2 600 configurations a dataset), budgets in evaluations, 25 repetitions.",
        "evaluations",
        &out,
        &mut wr,
    )?;
    let (secs, _) = section(
        opts,
        SECONDS,
        "The same pool with budgets in seconds of recorded CPU time (Auto-WEKA's budget is time; a dataset's 2 600 evaluations cost 50–200 s, the 13 defaults 0.3–1.2 s), 25 repetitions.",
        "s",
        &out,
        &mut wr,
    )?;
    let (grid, grid_run) = section(
        opts,
        GRID,
        "`sklearn-grid`'s joint pool at full fidelity (2 500 grid configurations, each evaluation trains the whole 27-unit curve), budgets in evaluations, 10 repetitions. Grid search walks the grid in a fixed order, the learners taking turns; at these budgets it covers at most 8 % of the grid.",
        "evaluations",
        &out,
        &mut wr,
    )?;

    let Writing {
        mut md,
        csv,
        mut files,
    } = wr;
    // The exhaustive grid (what Auto-WEKA's grid search, with far more compute, amounts to here).
    let full = exhaustive(&grid_run);
    versus_exhaustive(&mut md, &grid, &full);
    findings(&mut md, [&evals, &secs, &grid], &full);
    super::write_listed(&mut files, out.join("ranks.csv"), &csv)?;
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ds: &str, family: &str, budget: f64, rep: u32, v: f64, t: f64) -> Run {
        let mut r = Run::scored(ds, 0, budget, rep, family, v);
        r.family = family.into();
        r.best_test_score = t;
        r
    }

    #[test]
    fn wins_ties_losses_and_ranks_count_dataset_means() {
        let runs = vec![
            run("a", "smac", 10.0, 0, 0.9, 0.8),
            run("a", "smac", 10.0, 1, 0.7, 0.8),
            run("a", "ex-def", 10.0, 0, 0.8, 0.9),
            run("b", "smac", 10.0, 0, 0.5, 0.5),
            run("b", "ex-def", 10.0, 0, 0.6, 0.5),
            run("c", "smac", 10.0, 0, 0.7, 0.7),
            run("c", "ex-def", 10.0, 0, 0.7, 0.6),
        ];
        let m = unit_means(&runs, true);
        let ds: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let b = 10.0f64.to_bits();
        // a: smac mean 0.8 ties ex-def 0.8; b: loses; c: ties.
        assert_eq!(wtl(&m, "smac", "ex-def", b, &ds, false), [0, 2, 1]);
        // Test: a loses (0.8 < 0.9), b ties, c wins.
        assert_eq!(wtl(&m, "smac", "ex-def", b, &ds, true), [1, 1, 1]);
        let fams = vec!["ex-def".to_string(), "smac".to_string()];
        // Ranks: a tie (1.5 each), b ex-def 1, c tie: ex-def (1.5+1+1.5)/3, smac (1.5+2+1.5)/3.
        let r = mean_ranks(&m, &fams, b, &ds);
        assert!((r[0] - 4.0 / 3.0).abs() < 1e-12 && (r[1] - 5.0 / 3.0).abs() < 1e-12);
        // A cell that found nothing scores the worst of its unit instead of poisoning the mean:
        // smac's two cells on "d" count 0.6 and 0.6, a loss against ex-def's 0.7, not a NaN.
        let mut with_nothing = runs.clone();
        with_nothing.push(run("d", "smac", 10.0, 0, f64::NAN, f64::NAN));
        with_nothing.push(run("d", "smac", 10.0, 1, 0.6, 0.6));
        with_nothing.push(run("d", "ex-def", 10.0, 0, 0.7, 0.7));
        let m = unit_means(&with_nothing, true);
        assert_eq!(m[&("smac".into(), "d".into(), b)], (0.6, 0.6));
        let ds: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(wtl(&m, "smac", "ex-def", b, &ds, false), [0, 2, 2]);
        let r = mean_ranks(&m, &fams, b, &ds);
        assert!((r[1] - 7.0 / 4.0).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn sections_order_families_as_the_paper_and_count_best_alone_apart_from_ties() {
        let runs = vec![
            run("b", "smac", 20.0, 0, 0.9, 0.8),
            run("b", "ex-def", 20.0, 0, 0.8, 0.8),
            run("a", "smac", 20.0, 0, 0.7, 0.7),
            run("a", "ex-def", 20.0, 0, 0.7, 0.6),
            run("a", "tpe", 20.0, 0, 0.5, 0.6),
            run("b", "tpe", 20.0, 0, 0.5, 0.6),
            run("a", "smac", 5.0, 0, 0.6, 0.6),
            run("b", "smac", 5.0, 0, 0.6, 0.6),
        ];
        let s = Section::of(&runs, true);
        assert_eq!(s.families, ["ex-def", "tpe", "smac"]);
        assert_eq!(s.datasets, ["a", "b"]);
        let b = 20.0f64.to_bits();
        assert_eq!(s.budgets, [5.0f64.to_bits(), b]);
        // b: SMAC alone at 0.9; a: SMAC ties Ex-Def at 0.7 for the best.
        assert_eq!(s.best_count("smac", b), "1/2 (tied for best on 1 more)");
        assert_eq!(s.best_count("tpe", b), "0/2 (tied for best on 0 more)");
        assert_eq!(s.wins("smac", "ex-def", b, false), "1/2");
        assert_eq!(s.wins("smac", "ex-def", b, true), "1/2");
        assert!((s.mean_at("smac", b, false) - 0.8).abs() < 1e-12);
        // Ex-Def has no cell at 5: its mean counts the missing datasets as 0.
        assert_eq!(s.mean_at("ex-def", 5.0f64.to_bits(), false), 0.0);
    }

    #[test]
    fn pairs_compare_each_optimiser_with_each_baseline_once_then_tpe_with_smac() {
        let all: Vec<String> = ORDER.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            pairs(&all),
            [
                ("grid-search", "ex-def"),
                ("random-search", "ex-def"),
                ("tpe", "ex-def"),
                ("smac", "ex-def"),
                ("tpe", "random-search"),
                ("smac", "random-search"),
                ("random-search", "grid-search"),
                ("tpe", "grid-search"),
                ("smac", "grid-search"),
                ("tpe", "smac"),
            ]
        );
        let some: Vec<String> = ["ex-def", "smac"].iter().map(|s| s.to_string()).collect();
        assert_eq!(pairs(&some), [("smac", "ex-def")]);
    }
}
