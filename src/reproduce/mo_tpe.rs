//! MO-TPE on tabular benchmarks (issue #46): the claim of Ozaki, Tanigaki, Watanabe & Onishi 2020
//! ("Multiobjective tree-structured Parzen estimator for computationally expensive optimization
//! problems", GECCO) and Ozaki et al. 2022 (JAIR 73), as issue #46 states it: MO-TPE finds better
//! Pareto fronts (by hypervolume) than NSGA-II, a ParEGO-style scalarisation and random search.
//!
//! Two experiments, each a bundled table with two objectives: `mo-tpe-nasbench201` (NAS-Bench-201,
//! val_acc × latency, 3 datasets) and `mo-tpe-fcnet` (FCNet, val_loss × model_size, 4 datasets);
//! 200 evaluations, 10 seeds, one worker; every policy at its defaults. The score of a cell is its
//! final hypervolume regret against the table's true front (normalised per task, so tables
//! compare). One family of focus-versus-rest tests over the 7 datasets (exact Wilcoxon signed-rank,
//! each dataset the mean over its seeds, Holm within the family); "better" needs a significant
//! difference in MO-TPE's favour. With 7 units the smallest Holm-adjusted p any outcome can give is
//! 3 · 2/2⁷ ≈ 0.047: the claim can be confirmed only if MO-TPE wins on every dataset.
//!
//! With `--python PY` (a Python with Optuna 5.0.0 and the banditbench package) it also runs
//! `mo-tpe-nasbench201-optuna` and `mo-tpe-fcnet-optuna`: Optuna's own multi-objective TPE and
//! NSGA-II through the adapter on the same tasks, budget and seeds, and sets each beside
//! banditbench's implementation in a second family (`mo-tpe` against `optuna-mo-tpe`, `nsga2`
//! against `optuna-nsga2`: exact two-sided Wilcoxon signed-rank over the 7 datasets, Holm over
//! the two). The claim's family stays banditbench's four policies.
//!
//! Writes `results/mo-tpe/README.md`, `claim.md`, `final.csv` (per dataset and policy, the mean
//! final hypervolume regret and its standard deviation over seeds), `beside-optuna.md` (with
//! `--python`) and each experiment's report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::ReproduceOptions;
use super::claims::{ClaimPart, Expect, claim_markdown, family_markdown};
use crate::analysis::{UnitKind, focus_versus_rest};
use crate::results::Run;

const FILES: [&str; 2] = ["mo-tpe-nasbench201.toml", "mo-tpe-fcnet.toml"];
/// Optuna's MO-TPE and NSGA-II on the same tasks (run with `--python`).
const OPTUNA_FILES: [&str; 2] = ["mo-tpe-nasbench201-optuna.toml", "mo-tpe-fcnet-optuna.toml"];
/// banditbench's implementation, Optuna's, and the method's name.
const BESIDE: [(&str, &str, &str); 2] = [
    ("mo-tpe", "optuna-mo-tpe", "MO-TPE"),
    ("nsga2", "optuna-nsga2", "NSGA-II"),
];
const ALPHA: f64 = 0.05;
const FOCUS: &str = "mo-tpe";
const CLAIM: &str = "MO-TPE finds better Pareto fronts than NSGA-II, a ParEGO-style scalarisation and random search on tabular benchmarks, by hypervolume (Ozaki et al. 2020, GECCO; 2022, JAIR 73; the claim as issue #46 states it). Checked on NAS-Bench-201 (val_acc × latency) and FCNet (val_loss × model_size), 200 evaluations, by the final hypervolume regret against each table's true front.";

fn parts() -> Vec<ClaimPart<'static>> {
    vec![
        ClaimPart {
            baseline: "nsga2",
            words: "MO-TPE's hypervolume regret is lower than NSGA-II's",
            expect: Expect::Better,
        },
        ClaimPart {
            baseline: "parego",
            words: "MO-TPE's hypervolume regret is lower than ParEGO's",
            expect: Expect::Better,
        },
        ClaimPart {
            baseline: "random-search",
            words: "MO-TPE's hypervolume regret is lower than random search's",
            expect: Expect::Better,
        },
    ]
}

/// Per (dataset, policy family): its cells, and the mean and standard deviation over them of
/// the final hypervolume regret.
fn final_rows(runs: &[Run]) -> Vec<(String, String, usize, f64, f64)> {
    let mut by: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for r in runs {
        by.entry((r.dataset.as_str(), r.family.as_str()))
            .or_default()
            .push(r.best_score);
    }
    by.into_iter()
        .map(|((d, p), v)| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let sd = if v.len() > 1 {
                (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
            } else {
                f64::NAN
            };
            (d.to_string(), p.to_string(), v.len(), mean, sd)
        })
        .collect()
}

/// An experiment's runs, each named by its family across experiments (the TPE-based ones score
/// 1 000 candidates on FCNet's large tables, so their ids differ there); an error unless they are
/// ranked by hypervolume regret.
fn hv_regret_runs(results: crate::results::Results, file: &str) -> Result<Vec<Run>> {
    anyhow::ensure!(
        results.metric_note == crate::results::HV_REGRET_NOTE,
        "{file}: the results are not ranked by hypervolume regret (does the experiment name its [world] objectives?)"
    );
    Ok(results
        .runs
        .into_iter()
        .map(|r| Run {
            policy: r.family.clone(),
            ..r
        })
        .collect())
}

/// banditbench's MO-TPE and NSGA-II each beside Optuna's (`BESIDE`): one family of two tests
/// (each pair alone, exact two-sided Wilcoxon signed-rank over the datasets; Holm over the two).
fn beside_optuna(runs: &[Run]) -> Result<String> {
    let mut tests = Vec::new();
    for (ours, theirs, _) in BESIDE {
        let pair: Vec<Run> = runs
            .iter()
            .filter(|r| r.policy == ours || r.policy == theirs)
            .cloned()
            .collect();
        anyhow::ensure!(
            pair.iter().any(|r| r.policy == theirs),
            "the results hold no {theirs} cell (did the Optuna experiments run?)"
        );
        tests.push(focus_versus_rest(
            &pair,
            false,
            UnitKind::Dataset,
            ours,
            &[],
        )?);
    }
    let p: Vec<f64> = tests.iter().map(|t| t.against[0].p_holm).collect();
    let (adjusted, reject) = crate::analysis::stats::holm(&p, ALPHA);
    let mut md = format!(
        "# banditbench's implementations beside Optuna 5.0.0's\n\nOptuna's multi-objective TPE (`TPESampler`) and NSGA-II (`NSGAIISampler`), run through banditbench's Optuna adapter (`experiments/{}`, `experiments/{}`) on the same tasks, budget and seeds as banditbench's `mo-tpe` and `nsga2`, each at its defaults; a repeated suggestion is trained and paid for again (`repeat = \"charge\"`), as in Optuna's own loop, where banditbench's pool policies draw only configurations not yet evaluated, so a difference measures each sampler under its own rules, not the implementation alone. One family of two hypotheses (each implementation equals its library's in final hypervolume regret): exact two-sided Wilcoxon signed-rank over the {} datasets (each the mean over its seeds), Holm over the two, α = {ALPHA}. Lower is better, so a negative Δ favours banditbench's.\n\n| method | Δ = banditbench − Optuna [95 % CI] | p | Holm p | finding |\n|---|---|---|---|---|\n",
        OPTUNA_FILES[0], OPTUNA_FILES[1], tests[0].n_units
    );
    for (i, ((ours, theirs, words), t)) in BESIDE.iter().zip(&tests).enumerate() {
        let a = &t.against[0];
        let finding = if !reject[i] {
            "no significant difference".to_string()
        } else if a.diff.0 < 0.0 {
            format!("banditbench's `{ours}` significantly better")
        } else {
            format!("Optuna's `{theirs}` significantly better")
        };
        let _ = writeln!(
            md,
            "| {words} | {:+.4} [{:+.4}, {:+.4}] | {:.4} | {:.4} | {finding} |",
            a.diff.0, a.diff.1, a.diff.2, p[i], adjusted[i]
        );
    }
    Ok(md)
}

/// Run both experiments and write `results/mo-tpe/` (module docs).
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("mo-tpe");
    std::fs::create_dir_all(&out)
        .with_context(|| format!("{}: cannot create the folder", out.display()))?;
    let mut files = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    for file in FILES {
        let run = super::run_pool_and_report(opts, file, &out, &mut files)?;
        runs.extend(hv_regret_runs(run.results, file)?);
    }
    // Optuna's, with --python: each file made runnable with that interpreter.
    let mut library: Vec<Run> = Vec::new();
    if opts.interpreters.given {
        let dir = out.join("experiments");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create the folder", dir.display()))?;
        for file in OPTUNA_FILES {
            let src = opts.experiments.join(file);
            let text = std::fs::read_to_string(&src)
                .with_context(|| format!("{}: cannot read the experiment file", src.display()))?;
            let (_, text) = super::parallel_samplers::runnable(
                &text,
                file,
                None,
                &opts.traces,
                &opts.interpreters,
            )?;
            let path = dir.join(file);
            super::write_listed(&mut files, path.clone(), &text)?;
            let (exp, data) = crate::experiment::prepare(&path)?;
            let (_, results) = super::run_and_report(opts, &exp, &data, &out, &mut files)?;
            library.extend(hv_regret_runs(results, file)?);
        }
    }
    anyhow::ensure!(
        runs.iter().any(|r| r.family == FOCUS),
        "the results hold no mo-tpe cell"
    );
    let t = focus_versus_rest(&runs, false, UnitKind::Dataset, FOCUS, &[])?;
    let table = family_markdown(&t, "final hypervolume regret", "MO-TPE");
    let claim = claim_markdown(
        "MO-TPE on tabular benchmarks: the claim and its verdicts",
        CLAIM,
        &parts(),
        &[("200 evaluations".to_string(), t)],
    );
    super::write_listed(&mut files, out.join("claim.md"), &claim)?;
    let beside = if library.is_empty() {
        None
    } else {
        let both: Vec<Run> = runs.iter().chain(&library).cloned().collect();
        let text = beside_optuna(&both)?;
        super::write_listed(&mut files, out.join("beside-optuna.md"), &text)?;
        Some(text)
    };
    let all: Vec<Run> = runs.iter().chain(&library).cloned().collect();
    let rows = final_rows(&all);
    let mut csv = String::from("dataset,policy,cells,mean_hv_regret,sd_hv_regret\n");
    for (d, p, n, mean, sd) in &rows {
        let _ = writeln!(csv, "{d},{p},{n},{mean},{sd}");
    }
    super::write_listed(&mut files, out.join("final.csv"), &csv)?;
    let reps = runs.iter().map(|r| r.repetition).max().map_or(0, |m| m + 1);
    let mut md = String::from("# MO-TPE on tabular benchmarks\n\n");
    let _ = writeln!(
        md,
        "`banditbench reproduce mo-tpe` ran `experiments/{}` and `experiments/{}`: NAS-Bench-201 (val_acc × latency; cifar10, cifar100, imagenet) and FCNet (val_loss × model_size; four datasets), 200 evaluations per cell, {reps} repetition(s), one worker, with MO-TPE (`mo-tpe`), NSGA-II (`nsga2`), ParEGO (`parego`) and random search, every one at its defaults except that on FCNet's tables of 62 208 configurations the two TPE-based policies score 1 000 open configurations drawn at random per proposal (`candidates = 1000`, the same for both). A cell's score is its final hypervolume regret, 1 − HV / HV of the table's true front, on objectives normalised between the front's ideal point and the reference point (the front's nadir + 10 % of its range), fixed before any cell ran. The units of the tests are the 7 datasets, each the mean over its seeds; FCNet's four share the network and configurations, NAS-Bench-201's three the cells, so they are not fully independent. Each experiment's report (figures of the anytime hypervolume regret, attainment surfaces and fronts) is in its folder here.\n\n{claim}\n\n{table}\n\nPer dataset (`final.csv`):\n\n| dataset | policy | mean final hv regret | sd |\n|---|---|---|---|",
        FILES[0], FILES[1]
    );
    for (d, p, _, mean, sd) in &rows {
        let _ = writeln!(md, "| {d} | {p} | {mean:.4} | {sd:.4} |");
    }
    match &beside {
        Some(text) => {
            let _ = write!(md, "\n{}", text.replacen("# ", "## ", 1));
        }
        None => md.push_str(
            "\nOptuna's own MO-TPE and NSGA-II were not run (give `--python PY`, a Python with Optuna 5.0.0 and the banditbench package, to run them beside these).\n",
        ),
    }
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    Ok(files)
}
