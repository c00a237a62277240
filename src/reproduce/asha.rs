//! ASHA reproduced in shape on simulated workers (Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur,
//! Hardt, Recht & Talwalkar 2020, "A System for Massively Parallel Hyperparameter Tuning",
//! MLSys): `experiments/asha-sklearn-grid.toml` and `experiments/asha-hpobench.toml`, each run
//! with 1, 4, 16 and 64 workers on a budget of simulated wall-clock seconds.
//!
//! Two of the paper's findings, checked here in shape (the paper tunes networks on hundreds of
//! real workers; here the workers replay recorded learning curves):
//! 1. with many workers, ASHA's incumbent is better than synchronous successive halving's and
//!    Hyperband's at the same wall-clock time (they idle at their rungs while stragglers finish);
//! 2. ASHA's throughput grows linearly with the number of workers (it never waits).
//!
//! Writes `results/asha/README.md` (the findings, the tables and a verdict for each), `anytime.csv`,
//! `throughput.csv`, and a report per experiment and number of workers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::ReproduceOptions;
use crate::analysis::{FamilyTest, UnitKind, focus_versus_rest};
use crate::experiment::prepare;
use crate::results::{RUNS, Run, anytime_curves, read_parquet, read_pool_counts};

/// The experiments, with the unit each tests at: sklearn-grid's 6 datasets are too few for a
/// family of two tests to reach 0.05, so its units are the 18 (dataset, run) tasks (which share
/// datasets: not independent, as the README says); HPOBench's 4 datasets cannot decide any test,
/// so its differences are shown and its verdict is "cannot be decided".
const EXPERIMENTS: [(&str, UnitKind); 2] = [
    ("asha-sklearn-grid.toml", UnitKind::Task),
    ("asha-hpobench.toml", UnitKind::Dataset),
];
const WORKERS: [usize; 4] = [1, 4, 16, 64];
/// The fractions of the wall-clock budget the incumbents are compared at (of 4 steps).
const AT: [(usize, &str); 3] = [(1, "25 %"), (2, "50 %"), (4, "100 %")];
const ALPHA: f64 = 0.05;

/// One experiment at one number of workers.
struct Ran {
    workers: usize,
    runs: Vec<Run>,
    higher: bool,
    /// Per cell: the incumbent at 0, 1/4, …, 1 of the budget.
    curves: BTreeMap<u64, Vec<f64>>,
    /// Per cell: units trained, configurations drawn, makespan and idle seconds.
    work: BTreeMap<u64, (u64, u64, f64, f64)>,
}

/// The policy id of `family` in `runs`.
fn id_of(runs: &[Run], family: &str) -> Result<String> {
    runs.iter()
        .find(|r| r.family == family)
        .map(|r| r.policy.clone())
        .with_context(|| format!("the results hold no {family} cell"))
}

/// Run `file` with `k` workers into `results/<name>-k<k>`, report on it, and read what the
/// tables need.
fn run_with_workers(
    opts: &ReproduceOptions,
    file: &str,
    k: usize,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<(String, Ran)> {
    let (mut exp, data) = prepare(&opts.experiments.join(file))?;
    let base = exp.name.clone();
    exp.name = format!("{base}-k{k}");
    exp.world.workers = k;
    // The lock file keeps the experiment as a file that runs these cells by itself.
    exp.source = exp
        .source
        .replacen(
            &format!("name = \"{base}\""),
            &format!("name = \"{}\"", exp.name),
            1,
        )
        .replacen("[world]\n", &format!("[world]\nworkers = {k}\n"), 1);
    let (dir, results) = super::run_and_report(opts, &exp, &data, out, files)?;
    let curves = anytime_curves(&dir, &results.runs, 4)?;
    let counts = read_pool_counts(&dir)?;
    let df = read_parquet(&dir.join(RUNS))?;
    let col = |c: &str| -> Result<Vec<f64>> {
        let ca = df
            .column(c)
            .with_context(|| format!("{}: no column '{c}'", dir.join(RUNS).display()))?
            .f64()?;
        Ok((0..ca.len())
            .map(|i| ca.get(i).unwrap_or(f64::NAN))
            .collect())
    };
    let ca = df.column("cell")?.u64()?;
    let cells: Vec<u64> = (0..ca.len()).map(|i| ca.get(i).unwrap_or(0)).collect();
    let (makespan, idle) = (col("makespan_s")?, col("idle_s")?);
    let work = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (units, drawn) = counts
                .get(c)
                .map_or((0, 0), |p| (p.units_trained, p.configs_drawn));
            (*c, (units, drawn, makespan[i], idle[i]))
        })
        .collect();
    Ok((
        base,
        Ran {
            workers: k,
            runs: results.runs,
            higher: results.higher_is_better,
            curves,
            work,
        },
    ))
}

/// The runs with each cell's score replaced by its incumbent at step `j` of its anytime curve.
fn at_fraction(r: &Ran, j: usize) -> Vec<Run> {
    r.runs
        .iter()
        .map(|x| Run {
            best_score: r
                .curves
                .get(&x.cell)
                .and_then(|c| c.get(j).copied())
                .unwrap_or(f64::NAN),
            ..x.clone()
        })
        .collect()
}

/// Means over `family`'s cells: busy workers (worker-seconds deciding or training per simulated
/// second of the budget, at most K: a cell that stops early, its last work done before the
/// budget ends, counts its idle workers to the end of the budget), units trained per simulated
/// second of the budget, and configurations drawn.
fn throughput(r: &Ran, family: &str) -> (f64, f64, f64) {
    let (mut busy, mut rate, mut drawn, mut n) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for x in r.runs.iter().filter(|x| x.family == family) {
        if let Some(&(units, configs, makespan, idle_s)) = r.work.get(&x.cell)
            && x.budget_abs > 0.0
        {
            busy += (r.workers as f64 * makespan - idle_s) / x.budget_abs;
            rate += units as f64 / x.budget_abs;
            drawn += configs as f64;
            n += 1.0;
        }
    }
    let n = n.max(1.0);
    (busy / n, rate / n, drawn / n)
}

/// `family`'s cells that stopped early (their last work done before 99.9 % of the budget), and
/// all its cells.
fn stopped_early(r: &Ran, family: &str) -> (usize, usize) {
    let cells: Vec<_> = r.runs.iter().filter(|x| x.family == family).collect();
    let early = cells
        .iter()
        .filter(|x| {
            r.work
                .get(&x.cell)
                .is_some_and(|w| w.2 < 0.999 * x.budget_abs)
        })
        .count();
    (early, cells.len())
}

/// "better" / "worse" / "no significant difference" for one baseline of a family test.
fn finding(t: &FamilyTest, i: usize) -> String {
    let a = &t.against[i];
    let what = if a.focus_better {
        "ASHA better"
    } else if a.p_holm <= ALPHA {
        "ASHA worse"
    } else {
        "no significant difference"
    };
    format!(
        "Δ {:+.4} [{:+.4}, {:+.4}], p {:.3}: {what}",
        a.diff.0, a.diff.1, a.diff.2, a.p_holm
    )
}

/// The claim of section 1 decided from the tests at 16 and 64 workers (every time, at dataset
/// units): "cannot be decided" when no outcome at these units could reach `ALPHA`, "holds" when
/// ASHA is significantly better than both baselines in every test, "does not hold" when a
/// baseline is significantly better anywhere, else "holds in part". Also returns the largest of
/// the tests' smallest reachable p.
fn incumbent_verdict(decided: &[FamilyTest]) -> (&'static str, f64) {
    let min_p = decided.iter().map(|t| t.min_p_holm).fold(0.0, f64::max);
    let all_better = decided
        .iter()
        .all(|t| t.against.iter().all(|a| a.focus_better));
    let any_worse = decided.iter().any(|t| {
        t.against
            .iter()
            .any(|a| !a.focus_better && a.p_holm <= ALPHA)
    });
    let verdict = if min_p > ALPHA {
        "cannot be decided"
    } else if all_better {
        "holds"
    } else if any_worse {
        "does not hold"
    } else {
        "holds in part"
    };
    (verdict, min_p)
}

/// The paper's first finding on one experiment: ASHA's incumbent against synchronous SH's and
/// Hyperband's at each number of workers and fraction of the budget, as a table in `md` and rows
/// of `anytime.csv`, then the verdict, which it returns.
fn incumbent_section(
    md: &mut String,
    anytime_csv: &mut String,
    name: &str,
    unit: UnitKind,
    by_k: &[Ran],
) -> Result<&'static str> {
    let first = &by_k[0];
    let asha = id_of(&first.runs, "asha")?;
    let baselines = [
        id_of(&first.runs, "successive-halving")?,
        id_of(&first.runs, "hyperband")?,
    ];
    let _ = writeln!(
        md,
        "## `{name}`\n\n### 1. The incumbent at equal wall-clock time\n\n\
         ASHA against synchronous successive halving and Hyperband, the validation accuracy of \
         the incumbent at a quarter, half and all of the budget: one family of two hypotheses \
         per (workers, time), Wilcoxon signed-rank (exact where SciPy's `auto` is: n ≤ 50 \
         without ties or zeros; otherwise the normal approximation, or the exact sign-flip \
         permutation with ties at n ≤ 13) at `{}` units (each the mean over \
         {}{}), Holm-adjusted within the family; no correction across the twelve families, which are read together. \
         Δ = ASHA − baseline, the mean over units with its 95 % t interval.\n\n\
         | workers | time | against synchronous SH | against Hyperband |\n|---|---|---|---|",
        unit.as_str(),
        unit.averaged_over(),
        if unit == UnitKind::Task {
            "; tasks share datasets, so the units are not independent"
        } else {
            ""
        }
    );
    let mut decided = Vec::new();
    for r in by_k {
        for (j, label) in AT {
            let runs = at_fraction(r, j);
            let t = focus_versus_rest(&runs, r.higher, unit, &asha, &baselines)?;
            let _ = writeln!(
                md,
                "| {} | {label} | {} | {} |",
                r.workers,
                finding(&t, 0),
                finding(&t, 1)
            );
            for (i, base) in ["successive-halving", "hyperband"].iter().enumerate() {
                let a = &t.against[i];
                let _ = writeln!(
                    anytime_csv,
                    "{name},{},{label},{base},{},{},{},{},{},{},{}",
                    r.workers,
                    a.diff.0,
                    a.diff.1,
                    a.diff.2,
                    a.p_holm,
                    a.focus_better,
                    t.n_units,
                    unit.as_str()
                );
            }
            if r.workers >= 16 {
                // The verdict rests on independent units: datasets. Tasks that share a
                // dataset are not independent, so a task-level table is descriptive only.
                decided.push(if unit == UnitKind::Dataset {
                    t
                } else {
                    focus_versus_rest(&runs, r.higher, UnitKind::Dataset, &asha, &baselines)?
                });
            }
        }
    }
    let (verdict, min_p) = incumbent_verdict(&decided);
    let _ = writeln!(
        md,
        "\n**Verdict (16 and 64 workers, every time, at dataset units): {verdict}.** The claim \
         holds when ASHA is significantly better than both at 16 and 64 workers at every time; \
         it does not hold when a baseline is significantly better anywhere there. The tests \
         behind the verdict are at the independent units, datasets{}{}.\n",
        if unit == UnitKind::Dataset {
            String::new()
        } else {
            format!(
                " (the table above, at `{}` units, describes; its units share datasets, so \
                 its p-values are not a test of the claim)",
                unit.as_str()
            )
        },
        if min_p > ALPHA {
            format!(
                "; at {} units the smallest Holm-adjusted p any outcome could give is {:.3}, \
                 above {ALPHA}, so no test here can decide: read the differences",
                decided.first().map_or(0, |t| t.n_units),
                min_p
            )
        } else {
            String::new()
        }
    );
    Ok(verdict)
}

/// The paper's second finding on one experiment: busy workers, ASHA's units per second and
/// draws at each number of workers, as a table in `md` and rows of `throughput.csv`, then the
/// verdict (linear: at least 0.9 K of K workers busy at every K), which it returns.
fn throughput_section(
    md: &mut String,
    tp_csv: &mut String,
    name: &str,
    by_k: &[Ran],
) -> &'static str {
    let _ = writeln!(
        md,
        "### 2. Throughput\n\nBusy workers: worker-seconds spent training (or deciding) per \
         simulated second of the budget, the mean over cells (K when no worker ever waits; a \
         cell that stops early idles to the end of the budget); ASHA's units trained per \
         simulated second of the budget, configurations drawn per cell, and the cells that \
         stopped early (nothing left to promote or draw):\n\n\
         | workers | ASHA: busy workers | units/s | configurations drawn | cells stopped early | synchronous SH: busy workers | Hyperband: busy workers | BOHB: busy workers | random search: busy workers |\n|---|---|---|---|---|---|---|---|---|"
    );
    let mut linear = true;
    for r in by_k {
        let (busy, rate, drawn) = throughput(r, "asha");
        linear &= busy >= 0.9 * r.workers as f64;
        let (early, cells) = stopped_early(r, "asha");
        let mut row = format!(
            "| {} | {busy:.1} | {rate:.3} | {drawn:.0} | {early} of {cells} |",
            r.workers
        );
        for f in [
            "asha",
            "successive-halving",
            "hyperband",
            "bohb",
            "random-search",
        ] {
            let (b, u, d) = throughput(r, f);
            let _ = writeln!(tp_csv, "{name},{},{f},{b},{u},{d}", r.workers);
            if f != "asha" {
                let _ = write!(row, " {b:.1} |");
            }
        }
        let _ = writeln!(md, "{row}");
    }
    let verdict = if linear { "holds" } else { "does not hold" };
    let _ = writeln!(
        md,
        "\n**Verdict: {verdict}.** Linear means ASHA keeps at least 0.9 K of its K workers busy at \
         every K (a rule stated before the runs; throughput is measured, not tested: the \
         replay is deterministic). ASHA waits only when it can neither promote nor draw: when \
         every configuration of the task is drawn, or at the end of the budget.\n\n\
         Reports with ranks and anytime curves: {}.\n",
        WORKERS
            .iter()
            .map(|k| format!("[`{name}-k{k}`]({name}-k{k}/report.md)"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    verdict
}

/// Run both experiments at every number of workers and write `results/asha/`.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("asha");
    std::fs::create_dir_all(&out)?;
    let mut files = Vec::new();
    let mut md = String::from(
        "# ASHA on simulated workers, reproduced in shape\n\n\
         Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht & Talwalkar 2020, *A System for \
         Massively Parallel Hyperparameter Tuning* (MLSys). Written by `banditbench reproduce asha`.\n\n\
         **What differs here.** The paper tunes networks on up to hundreds of real workers; here K \
         simulated workers replay recorded learning curves (`[world] workers = K`, README \
         \"Simulated parallel workers\"): `sklearn-grid` (each learner's 625-configuration grid per \
         (dataset, run); a unit is a slice of training, 27 per curve; 5 s of simulated wall-clock \
         time) and `hpobench-mlp` (30 000 configurations per dataset; a unit is one seed's \
         evaluation at full fidelity, so the rungs average seeds; 4 000 s). Every policy runs with \
         its paper's defaults (η = 3 as Hyperband's and Syne Tune's default, r_min = 1, R = the full curve); synchronous successive \
         halving draws 81 configurations per round. Nothing was tuned on these tasks.\n\n\
         **The paper's findings**, paraphrased: (1) with many workers ASHA finds a good \
         configuration sooner than synchronous successive halving and Hyperband, which leave \
         workers idle at their rungs while stragglers finish; (2) ASHA's throughput grows \
         linearly with the number of workers.\n\n",
    );
    let mut anytime_csv = String::from(
        "experiment,workers,at,baseline,mean_difference,low,high,p_holm,asha_better,units,unit\n",
    );
    let mut tp_csv =
        String::from("experiment,workers,family,busy_workers,units_per_second,configs_drawn\n");
    let mut verdicts: Vec<(String, String, &'static str)> = Vec::new();
    for (file, unit) in EXPERIMENTS {
        let mut by_k: Vec<Ran> = Vec::new();
        let mut name = String::new();
        for k in WORKERS {
            let (base, ran) = run_with_workers(opts, file, k, &out, &mut files)?;
            name = base;
            by_k.push(ran);
        }
        let v1 = incumbent_section(&mut md, &mut anytime_csv, &name, unit, &by_k)?;
        verdicts.push((
            name.clone(),
            "ASHA's incumbent beats synchronous SH and Hyperband with many workers".into(),
            v1,
        ));
        let v2 = throughput_section(&mut md, &mut tp_csv, &name, &by_k);
        verdicts.push((
            name.clone(),
            "ASHA's throughput grows linearly with workers".into(),
            v2,
        ));
    }
    if verdicts.is_empty() {
        bail!("no experiment ran");
    }
    md.push_str("## Verdicts\n\n| experiment | finding | verdict |\n|---|---|---|\n");
    for (e, f, v) in &verdicts {
        let _ = writeln!(md, "| `{e}` | {f} | {v} |");
    }
    super::write_listed(&mut files, out.join("anytime.csv"), &anytime_csv)?;
    super::write_listed(&mut files, out.join("throughput.csv"), &tp_csv)?;
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran() -> Ran {
        let runs = vec![
            Run::scored("a", 0, 10.0, 0, "asha(eta=3)", 0.9),
            Run::scored("a", 0, 10.0, 1, "asha(eta=3)", 0.8),
            Run::scored("a", 0, 10.0, 0, "successive-halving(n=81)", 0.7),
        ];
        let runs: Vec<Run> = runs
            .into_iter()
            .enumerate()
            .map(|(i, r)| Run {
                cell: i as u64,
                ..r
            })
            .collect();
        Ran {
            workers: 4,
            runs,
            higher: true,
            curves: [
                (0, vec![f64::NAN, 0.5, 0.6, 0.8, 0.9]),
                (1, vec![f64::NAN, 0.4, 0.7, 0.7, 0.8]),
                (2, vec![f64::NAN, f64::NAN, 0.3, 0.5, 0.7]),
            ]
            .into(),
            // (units, configurations drawn, makespan, idle seconds)
            work: [
                (0, (40, 20, 10.0, 0.0)),
                (1, (20, 10, 5.0, 2.0)),
                (2, (10, 9, 10.0, 20.0)),
            ]
            .into(),
        }
    }

    /// A family test at `min_p` with one entry per (p_holm, ASHA better) pair.
    fn family(min_p: f64, against: &[(f64, bool)]) -> FamilyTest {
        let named: Vec<(&str, f64, bool)> = against.iter().map(|&(p, b)| ("b", p, b)).collect();
        super::super::claims::family_for_tests(6, min_p, &named)
    }

    #[test]
    fn the_incumbent_verdict_follows_the_rule_stated_before_the_runs() {
        let better = family(0.03, &[(0.03, true), (0.01, true)]);
        let unclear = family(0.03, &[(0.03, true), (0.4, false)]);
        let worse = family(0.03, &[(0.03, true), (0.02, false)]);
        assert_eq!(
            incumbent_verdict(&[better.clone(), better.clone()]).0,
            "holds"
        );
        assert_eq!(
            incumbent_verdict(&[better.clone(), unclear.clone()]).0,
            "holds in part"
        );
        assert_eq!(incumbent_verdict(&[unclear, worse]).0, "does not hold");
        // Too few units for any outcome to reach 0.05: undecidable whatever the outcome.
        let small = family(0.25, &[(0.25, true), (0.25, true)]);
        assert_eq!(
            incumbent_verdict(&[better, small]),
            ("cannot be decided", 0.25)
        );
    }

    #[test]
    fn incumbents_at_a_fraction_of_the_budget_replace_the_final_scores() {
        let r = ran();
        let at: Vec<f64> = at_fraction(&r, 2).iter().map(|x| x.best_score).collect();
        assert_eq!(at, vec![0.6, 0.7, 0.3]);
        assert!(at_fraction(&r, 1)[2].best_score.is_nan());
    }

    #[test]
    fn busy_workers_units_per_second_and_draws_are_means_over_the_familys_cells() {
        let r = ran();
        // ASHA, budget 10: busy (4·10 − 0)/10 = 4, and (4·5 − 2)/10 = 1.8 for the cell that
        // stopped at 5 s; units/s 40/10 and 20/10; draws 20 and 10.
        let (busy, rate, drawn) = throughput(&r, "asha");
        assert!((busy - 2.9).abs() < 1e-12 && (rate - 3.0).abs() < 1e-12 && drawn == 15.0);
        assert_eq!(stopped_early(&r, "asha"), (1, 2));
        assert_eq!(stopped_early(&r, "successive-halving"), (0, 1));
        let (busy, _, _) = throughput(&r, "successive-halving");
        assert!((busy - 2.0).abs() < 1e-12);
        assert_eq!(throughput(&r, "hyperband"), (0.0, 0.0, 0.0));
    }
}
