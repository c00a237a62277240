//! Freeze-thaw methods on the TaskSet tables (issue #47), by the protocol of DPL (Kadra, Janowski,
//! Wistuba & Grabocka 2023, "Scaling Laws for Hyperparameter Optimization", NeurIPS;
//! releaunifreiburg/DPL `framework.py`, `plots/normalized_regret.py`): on each of the 12 TaskSet
//! tasks, 1 000 one-unit evaluations; the normalised regret of the incumbent (validation loss)
//! over the budget, and the policies' mean rank over the budget. Two experiments: DPL, Domhan et
//! al.'s curve ensemble, random search, Hyperband, ASHA and HAMLET's rules on 10 seeds
//! (`freeze-thaw-taskset.toml`), and the two GP methods, DyHPO and the freeze-thaw GP, on the
//! first 2 of the same seeds (`freeze-thaw-taskset-gp.toml`; their fits are cubic in the units
//! seen). A task's unit in every table and test is each policy's mean over its own seeds.
//!
//! The claim, from DPL's README and abstract: "Our method achieves the best results across all
//! benchmarks by obtaining the best any-time results compared to all competitors". Checked on
//! TaskSet against the competitors DPL compared with and run here (random search, Hyperband,
//! ASHA, DyHPO; HAMLET's rules, the curve ensemble and the freeze-thaw GP run too, in the family
//! of tests but not in the claim), at 25 %, 50 % and 100 % of the budget: at each, one family of
//! focus-versus-rest tests (exact Wilcoxon signed-rank over the 12 tasks, Holm within the
//! family); "better" needs a significant difference in DPL's favour. The 12 tasks share IMDB and
//! the configurations (they differ in the network trained), so they are not fully independent
//! units: the README says so.
//!
//! Normalised regret of a task: (incumbent − best) / (worst − best), best the table's lowest
//! validation loss and worst the highest among the configurations DPL's TaskSet loader keeps (a
//! whole finite curve below the lowest over steps of the per-step 95 % quantile:
//! `benchmarks/taskset.py`'s `filter_curves` and `get_worst_performance`).
//!
//! Writes `results/freeze-thaw/README.md` (protocol, tables, claim and verdicts), `regret.csv`
//! (mean normalised regret and mean rank per policy at every 5 % of the budget), `claim.md`, the
//! figure `anytime` (PNG, SVG, PDF) and each experiment's report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::ReproduceOptions;
use super::claims::{ClaimPart, Expect, claim_markdown, family_markdown};
use crate::analysis::{UnitKind, focus_versus_rest};
use crate::report::figures::{Lines, Panel, Series};
use crate::results::{Run, anytime_curves};

const FILE: &str = "freeze-thaw-taskset.toml";
/// DyHPO and the freeze-thaw GP, on fewer seeds (module docs).
const GP_FILE: &str = "freeze-thaw-taskset-gp.toml";
/// Points of the anytime curves over the budget.
const STEPS: usize = 20;
/// The points the claim is tested at: (step of STEPS, words).
const AT: [(usize, &str); 3] = [(5, "25 %"), (10, "50 %"), (20, "100 %")];
const FOCUS: &str = "dpl";
const CLAIM: &str = "\"Our method achieves the best results across all benchmarks by obtaining the best any-time results compared to all competitors\" (DPL's README and abstract; Kadra et al. 2023). Checked here on TaskSet against random search, Hyperband, ASHA and DyHPO, at 25 %, 50 % and 100 % of the budget of one-unit evaluations (DPL's protocol: 1 000).";

fn parts() -> Vec<ClaimPart<'static>> {
    vec![
        ClaimPart {
            baseline: "random-search",
            words: "DPL's regret is lower than random search's",
            expect: Expect::Better,
        },
        ClaimPart {
            baseline: "hyperband",
            words: "DPL's regret is lower than Hyperband's",
            expect: Expect::Better,
        },
        ClaimPart {
            baseline: "asha",
            words: "DPL's regret is lower than ASHA's",
            expect: Expect::Better,
        },
        ClaimPart {
            baseline: "dyhpo",
            words: "DPL's regret is lower than DyHPO's",
            expect: Expect::Better,
        },
    ]
}

/// Per dataset: (best, worst) validation loss for the normalised regret (module docs).
fn regret_bounds(pool: &crate::trace::pool::Pool) -> BTreeMap<String, (f64, f64)> {
    let mut out = BTreeMap::new();
    for t in &pool.tasks {
        let best = t
            .curves
            .iter()
            .flat_map(|c| {
                c.score
                    .iter()
                    .zip(&c.status)
                    .filter(|(_, s)| **s == crate::trace::Status::Ok)
                    .map(|(v, _)| f64::from(*v))
            })
            .fold(f64::INFINITY, f64::min);
        // DPL's filter: whole finite curves, every value below the lowest over steps of the
        // per-step 95 % quantile (pandas' linear interpolation, NaN skipped: each step's
        // quantile is over every curve with a value there).
        let units = pool.manifest.units as usize;
        let whole: Vec<&Vec<f32>> = t
            .curves
            .iter()
            .filter(|c| {
                c.score.len() == units
                    && c.status.iter().all(|s| *s == crate::trace::Status::Ok)
                    && c.score.iter().all(|v| v.is_finite())
            })
            .map(|c| &c.score)
            .collect();
        let cut = (0..units)
            .map(|u| {
                let mut col: Vec<f64> = t
                    .curves
                    .iter()
                    .filter(|c| {
                        u < c.score.len()
                            && c.status[u] == crate::trace::Status::Ok
                            && c.score[u].is_finite()
                    })
                    .map(|c| f64::from(c.score[u]))
                    .collect();
                col.sort_by(f64::total_cmp);
                crate::report::figures::quantile_sorted(&col, 0.95)
            })
            .fold(f64::INFINITY, f64::min);
        let worst = whole
            .iter()
            .filter(|c| c.iter().all(|&v| f64::from(v) < cut))
            .flat_map(|c| c.iter().map(|&v| f64::from(v)))
            .fold(f64::NEG_INFINITY, f64::max);
        out.insert(t.dataset.clone(), (best, worst));
    }
    out
}

/// Each run's score replaced by its normalised regret at step `j` of its anytime curve.
fn regrets_at(
    runs: &[Run],
    curves: &BTreeMap<u64, Vec<f64>>,
    bounds: &BTreeMap<String, (f64, f64)>,
    j: usize,
) -> Vec<Run> {
    runs.iter()
        .map(|r| {
            let (best, worst) = bounds.get(&r.dataset).copied().unwrap_or((0.0, 1.0));
            let inc = curves
                .get(&r.cell)
                .and_then(|c| c.get(j).copied())
                .unwrap_or(f64::NAN);
            Run {
                best_score: (inc - best) / (worst - best),
                ..r.clone()
            }
        })
        .collect()
}

/// Per policy, per step 1..=STEPS (at step 0 no cell has an incumbent): the mean over tasks of the mean regret over repetitions, and the mean
/// over tasks of the policy's rank by that regret (1 = lowest; ties share the mean rank).
fn anytime_table(
    runs: &[Run],
    curves: &BTreeMap<u64, Vec<f64>>,
    bounds: &BTreeMap<String, (f64, f64)>,
) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for j in 1..=STEPS {
        let at = regrets_at(runs, curves, bounds, j);
        let cell = super::per_unit_sums(
            at.iter()
                .map(|r| (r.dataset.as_str(), r.family.as_str(), r.best_score)),
        );
        for (p, point) in super::mean_and_mean_rank(&cell) {
            out.entry(p).or_default().push(point);
        }
    }
    out
}

/// Run `experiments/freeze-thaw-taskset.toml` and write `results/freeze-thaw/` (module docs).
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("freeze-thaw");
    std::fs::create_dir_all(&out)
        .with_context(|| format!("{}: cannot create the folder", out.display()))?;
    let mut files = Vec::new();
    // Both experiments' runs and anytime curves, the second's cell numbers moved past the
    // first's (each experiment numbers its cells from 0).
    let mut runs: Vec<Run> = Vec::new();
    let mut curves: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut seeds: Vec<(String, u32)> = Vec::new();
    let mut pool = None;
    for file in [FILE, GP_FILE] {
        let run = super::run_pool_and_report(opts, file, &out, &mut files)?;
        let shift = runs.iter().map(|r| r.cell + 1).max().unwrap_or(0);
        for (cell, c) in anytime_curves(&run.dir, &run.results.runs, STEPS)? {
            curves.insert(cell + shift, c);
        }
        runs.extend(run.results.runs.iter().map(|r| Run {
            cell: r.cell + shift,
            ..r.clone()
        }));
        let reps = run.results.runs.iter().map(|r| r.repetition).max();
        seeds.push((run.name.clone(), reps.map_or(0, |m| m + 1)));
        pool.get_or_insert(run.data.pool);
    }
    let runs = &runs;
    let bounds = regret_bounds(pool.as_ref().context("no experiment ran")?);
    let budget = runs.iter().map(|r| r.budget_abs).fold(0.0, f64::max);
    let seeds_words = seeds
        .iter()
        .map(|(n, k)| format!("{n}: {k}"))
        .collect::<Vec<_>>()
        .join(", ");
    let focus = runs
        .iter()
        .find(|r| r.family == FOCUS)
        .map(|r| r.policy.clone())
        .context("the results hold no dpl cell")?;

    // The claim at three points of the budget.
    let mut found = Vec::new();
    let mut tables = String::new();
    for (j, words) in AT {
        let at = regrets_at(runs, &curves, &bounds, j);
        let t = focus_versus_rest(&at, false, UnitKind::Dataset, &focus, &[])?;
        let _ = writeln!(
            tables,
            "### At {words} of the budget ({:.0} units)\n\n{}",
            budget * j as f64 / STEPS as f64,
            family_markdown(&t, "normalised regret", "DPL")
        );
        found.push((format!("{words} of the budget"), t));
    }
    let claim = claim_markdown(
        "DPL on TaskSet: the claim and its verdicts",
        CLAIM,
        &parts(),
        &found,
    );
    super::write_listed(&mut files, out.join("claim.md"), &claim)?;

    // The anytime table and figure.
    let table = anytime_table(runs, &curves, &bounds);
    let mut csv = String::from("policy,units,mean_normalised_regret,mean_rank\n");
    for (p, rows) in &table {
        for (j, (m, r)) in rows.iter().enumerate() {
            let _ = writeln!(
                csv,
                "{p},{},{m},{r}",
                budget * (j + 1) as f64 / STEPS as f64
            );
        }
    }
    super::write_listed(&mut files, out.join("regret.csv"), &csv)?;
    let xs: Vec<f64> = (1..=STEPS)
        .map(|j| budget * j as f64 / STEPS as f64)
        .collect();
    let panel = |caption: &str, y: &str, pick: fn(&(f64, f64)) -> f64, floor: f64| {
        let series: Vec<Series> = table
            .iter()
            .enumerate()
            .map(|(i, (p, rows))| Series {
                name: p.clone(),
                points: xs.iter().zip(rows).map(|(&x, r)| (x, pick(r))).collect(),
                band: None,
                color: i,
                dashed: false,
            })
            .collect();
        let ys: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite())
            .collect();
        let hi = ys.iter().copied().fold(floor, f64::max);
        Panel {
            caption: caption.into(),
            x_desc: "units trained (one-unit evaluations)".into(),
            y_desc: y.into(),
            x_range: (0.0, budget),
            y_range: (floor, floor + (hi - floor) * 1.05),
            log_x: false,
            series,
            regions: Vec::new(),
        }
    };
    let fig = Lines {
        title: format!(
            "TaskSet, 12 tasks (seeds per task: {seeds_words}): normalised regret of the incumbent and mean rank over the budget"
        ),
        panels: vec![
            panel(
                "(a) mean normalised regret",
                "normalised regret",
                |r| r.0,
                0.0,
            ),
            panel("(b) mean rank (1 = best)", "mean rank", |r| r.1, 1.0),
        ],
    };
    files.extend(crate::report::figures::save(
        &fig,
        &out,
        "anytime",
        &crate::report::figures::Page::default(),
    )?);

    // README.
    let mut md = String::from("# Freeze-thaw on TaskSet: DPL's protocol\n\n");
    let _ = writeln!(
        md,
        "`banditbench reproduce freeze-thaw` ran `experiments/{FILE}` and `experiments/{GP_FILE}`: the 12 TaskSet tasks (DyHPO's and DPL's tables, `traces/taskset`), {budget:.0} one-unit evaluations per cell, seeds per task {seeds_words}. DPL (`dpl`, every parameter at its code's value) against random search (one unit a decision), Hyperband and ASHA (η = 3, r_min = 1 unit, R = 51 units) and DyHPO (`dyhpo`, at its code's values), the competitors of DPL's claim; HAMLET's rules (`hamlet-pool`: Variant 3 on 10 drawn configurations at a time), Domhan et al.'s curve ensemble (`curve-ensemble`, scores = loss) and the freeze-thaw GP (`ftgp`, ifBO's `mf_ei_bo`) run beside them and are in the family of tests. Normalised regret = (incumbent − best) / (worst − best) per task, best the table's lowest validation loss and worst the highest among the configurations DPL's loader keeps. The units of the tests are the 12 tasks (each policy's mean over its seeds); they share IMDB and the configurations, so they are not fully independent.\n\n![anytime](anytime.png)\n\n{claim}\n\n{tables}"
    );
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worst loss is DPL's own (its loader's `filter_curves` then `get_worst_performance`, run
    /// on its JSON files by `scripts/reference/taskset_bounds.py`); the best, over the whole
    /// table, is at most DPL's (over the configurations its filter keeps).
    #[test]
    fn the_regret_bounds_are_dpls_worst_and_the_tables_best() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let pool = crate::trace::pool::load_pool(&root.join("traces/taskset"), true).unwrap();
        let ours = regret_bounds(&pool);
        let golden: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/golden/taskset_bounds.json")).unwrap();
        let tasks = golden["tasks"].as_object().unwrap();
        assert_eq!(tasks.len(), 12);
        assert_eq!(ours.len(), 12);
        for (task, g) in tasks {
            let (best, worst) = ours[task];
            let (gb, gw) = (g["best"].as_f64().unwrap(), g["worst"].as_f64().unwrap());
            // The pool stores losses as f32.
            assert!(
                (worst - gw).abs() <= 1e-6 * gw.abs(),
                "{task}: worst {worst} against DPL's {gw}"
            );
            assert!(
                best <= gb + 1e-6 && best > 0.0,
                "{task}: best {best} against DPL's {gb}"
            );
        }
    }
}
