//! Library optimizers against banditbench's own on simulated workers (issue #45, item 6, "the
//! study people ask for"): Optuna 5.0.0's TPE with and without `constant_liar`, GP, CMA-ES and
//! random sampler, SMAC 2.4.1's HPO facade, DEHB 0.1.2, Syne Tune 0.16.0's ASHA, BOHB and BORE,
//! each through its adapter (`banditbench.adapters`, the protocol route: one Python process per
//! cell, cells on every core), beside banditbench's own ASHA (Li et al. 2020), BOHB (Falkner et
//! al. 2018) and TPE (Bergstra et al. 2011), on `sklearn-grid`'s MLP grids and HPOBench's MLP
//! tables with K = 1, 4 and 16 simulated workers and a budget of simulated wall-clock seconds.
//!
//! The design, fixed before any cell ran (the experiment files' comments state it; the commit
//! that adds them precedes every result): a cell's score is its final incumbent's normalised
//! regret, (best − incumbent) / (best − worst) with the task table's best and worst recorded
//! validation accuracy (1 when nothing finished); the units are the 10 datasets of both
//! experiments (6 + 4; `car` and `phoneme` are in both, as different tables), each the mean over
//! its repetitions; exact Wilcoxon signed-rank, Holm within a family, α = 0.05. Two questions:
//! 1. does `constant_liar` help Optuna's TPE at 16 workers? (one test: with against without);
//! 2. does any library's model-based method (Optuna's TPE and GP, SMAC3's HPO facade, Syne Tune's
//!    BOHB and BORE) beat banditbench's ASHA at 16 workers? (ASHA against each of the five).
//!
//! Writes `results/parallel-samplers/README.md` (design, verdicts, leaderboard), `verdicts.md`,
//! `leaderboard.csv` (per K and policy: mean final normalised regret with its 95 % t interval over
//! the 10 units, mean rank), `regret.csv` (per K, policy and 5 % of the budget: mean normalised
//! regret and mean rank), a figure `anytime-k{K}` per K (PNG, SVG, PDF), the experiment files
//! as run (`experiments/`, each runnable by `banditbench run`), and each run's report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::ReproduceOptions;
use crate::analysis::{FamilyTest, UnitKind, focus_versus_rest};
use crate::report::figures::{Lines, Panel, Series};
use crate::results::{Run, anytime_curves};

/// The experiments: (file, short name of its units in the tests).
const EXPERIMENTS: [(&str, &str); 2] = [
    ("parallel-samplers-sklearn-grid.toml", "sklearn-grid"),
    ("parallel-samplers-hpobench.toml", "hpobench"),
];
const WORKERS: [usize; 3] = [1, 4, 16];
/// The number of workers both questions are asked at.
const AT_K: usize = 16;
/// Points of the anytime curves over the budget.
const STEPS: usize = 20;
const ALPHA: f64 = 0.05;
/// Question 1: the policies compared.
const LIAR: &str = "optuna-tpe";
const NO_LIAR: &str = "optuna-tpe-no-liar";
/// Question 2: the reference and the libraries' model-based methods, with their words.
const ASHA: &str = "asha";
const MODEL_BASED: [(&str, &str); 5] = [
    ("optuna-tpe", "Optuna's TPE (constant_liar)"),
    ("optuna-gp", "Optuna's GP sampler"),
    ("smac-hpo", "SMAC3's HPO facade"),
    ("st-bohb", "Syne Tune's BOHB"),
    ("st-bore", "Syne Tune's BORE"),
];
/// The adapters whose command runs in DEHB's interpreter.
const DEHB_MODULE: &str = "banditbench.adapters.dehb";

/// The Python interpreters the library policies run in.
#[derive(Clone, Debug)]
pub struct Interpreters {
    /// Every adapter but DEHB's (`--python`; default `python3`).
    pub python: String,
    /// DEHB's (`--python-dehb`; default: `python`). DEHB pins numpy < 2.
    pub dehb: String,
    /// `--python` was given: a reproduction whose library policies are an addition (`mo-tpe`)
    /// runs them only then.
    pub given: bool,
}

impl Default for Interpreters {
    fn default() -> Self {
        Interpreters {
            python: "python3".into(),
            dehb: "python3".into(),
            given: false,
        }
    }
}

/// The experiment file `text` (read from `file`) made runnable from anywhere at `k` workers:
/// named `<name>-k<k>`, its `workers` set, its `traces` an absolute path under `traces`, and each
/// library policy's `python3` replaced by its interpreter. Errors name the file and what it lacks.
pub(crate) fn at_workers(
    text: &str,
    file: &str,
    k: usize,
    traces: &Path,
    py: &Interpreters,
) -> Result<(String, String)> {
    runnable(text, file, Some(k), traces, py)
}

/// The experiment file `text` (read from `file`) made runnable from anywhere: its `traces` an
/// absolute path under `traces` and each library policy's `python3` replaced by its interpreter;
/// with `workers`, named `<name>-k<k>` and its `workers` set (the file must not set them).
pub(crate) fn runnable(
    text: &str,
    file: &str,
    workers: Option<usize>,
    traces: &Path,
    py: &Interpreters,
) -> Result<(String, String)> {
    let name_line = text
        .lines()
        .find(|l| l.starts_with("name = \""))
        .with_context(|| format!("{file}: no line name = \"...\""))?;
    let base = name_line
        .trim_start_matches("name = \"")
        .trim_end_matches('"')
        .to_string();
    let traces_line = text
        .lines()
        .find(|l| l.starts_with("traces = \"../traces/"))
        .with_context(|| format!("{file}: no line traces = \"../traces/...\""))?;
    let pool = traces_line
        .trim_start_matches("traces = \"../traces/")
        .trim_end_matches('"');
    let abs = std::path::absolute(traces.join(pool))
        .with_context(|| format!("{}: no absolute path", traces.join(pool).display()))?;
    let name = workers.map_or_else(|| base.clone(), |k| format!("{base}-k{k}"));
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = String::with_capacity(text.len() + 256);
    let mut in_world = false;
    for line in text.lines() {
        if line == name_line {
            let _ = writeln!(out, "name = {}", quoted(&name));
        } else if line == traces_line {
            let _ = writeln!(out, "traces = {}", quoted(&abs.display().to_string()));
        } else if line.starts_with("workers =") && in_world && workers.is_some() {
            bail!("{file}: [world] sets workers; the reproduction sets it (1, 4, 16)");
        } else if let Some(rest) = line.strip_prefix("command = [\"python3\", ") {
            let interp = if rest.contains(DEHB_MODULE) {
                &py.dehb
            } else {
                &py.python
            };
            let _ = writeln!(out, "command = [{}, {rest}", quoted(interp));
        } else {
            let _ = writeln!(out, "{line}");
        }
        if line.starts_with('[') {
            in_world = line == "[world]";
            if let (true, Some(k)) = (in_world, workers) {
                let _ = writeln!(out, "workers = {k}");
            }
        }
    }
    Ok((base, out))
}

/// Per (dataset, run): the best and worst recorded validation score of the configurations of the
/// tasks' learners (every one here is the MLP's), in the pool's direction: (best, worst).
fn bounds(pool: &crate::trace::pool::Pool, higher: bool) -> BTreeMap<(String, i64), (f64, f64)> {
    let mut out = BTreeMap::new();
    for t in &pool.tasks {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for c in &t.curves {
            for (v, s) in c.score.iter().zip(&c.status) {
                if *s == crate::trace::Status::Ok && v.is_finite() {
                    lo = lo.min(f64::from(*v));
                    hi = hi.max(f64::from(*v));
                }
            }
        }
        if lo.is_finite() {
            out.insert(
                (t.dataset.clone(), t.run),
                if higher { (hi, lo) } else { (lo, hi) },
            );
        }
    }
    out
}

/// Normalised regret of `inc` between `best` and `worst` (1 when nothing was found).
fn regret(inc: f64, (best, worst): (f64, f64)) -> f64 {
    if inc.is_finite() && best != worst {
        ((best - inc) / (best - worst)).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// One experiment at one number of workers: its runs, each cell's normalised regret at the
/// points 0..=STEPS of its budget, the unit each cell belongs to.
struct Ran {
    workers: usize,
    /// Runs with `policy` = the family (the name of a library policy), `dataset` = the unit
    /// (`experiment:dataset`) and `best_score` = the final normalised regret.
    runs: Vec<Run>,
    curves: BTreeMap<u64, Vec<f64>>,
}

fn run_at(
    opts: &ReproduceOptions,
    py: &Interpreters,
    (file, short): (&str, &str),
    k: usize,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<Ran> {
    let src = opts.experiments.join(file);
    let text = std::fs::read_to_string(&src)
        .with_context(|| format!("{}: cannot read the experiment file", src.display()))?;
    let (_, text) = at_workers(&text, file, k, &opts.traces, py)?;
    let dir = out.join("experiments");
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("{}: cannot create the folder", dir.display()))?;
    let path = dir.join(file.replace(".toml", &format!("-k{k}.toml")));
    super::write_listed(files, path.clone(), &text)?;
    let (exp, data) = crate::experiment::prepare(&path)?;
    let (dir, results) = super::run_and_report(opts, &exp, &data, out, files)?;
    let crate::experiment::Data::Pool(data) = data else {
        bail!("{file}: not a pool experiment");
    };
    let higher = results.higher_is_better;
    let b = bounds(&data.pool, higher);
    let raw = anytime_curves(&dir, &results.runs, STEPS)?;
    let mut curves = BTreeMap::new();
    let mut runs = Vec::with_capacity(results.runs.len());
    for r in &results.runs {
        let bd = *b
            .get(&(r.dataset.clone(), r.run))
            .with_context(|| format!("{file}: no recorded scores for {}/{}", r.dataset, r.run))?;
        let c: Vec<f64> = raw.get(&r.cell).map_or_else(
            || vec![1.0; STEPS + 1],
            |c| c.iter().map(|&v| regret(v, bd)).collect(),
        );
        runs.push(Run {
            policy: r.family.clone(),
            dataset: format!("{short}:{}", r.dataset),
            best_score: regret(r.best_score, bd),
            ..r.clone()
        });
        curves.insert(r.cell, c);
    }
    Ok(Ran {
        workers: k,
        runs,
        curves,
    })
}

/// Per policy at each point 1..=STEPS: the mean over units of the mean regret over the unit's
/// cells, and the mean over units of the policy's rank by it (1 = lowest; ties share).
fn anytime_table(rans: &[&Ran]) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for j in 1..=STEPS {
        let cell = super::per_unit_sums(rans.iter().flat_map(|ran| {
            ran.runs.iter().map(move |r| {
                let v = ran.curves.get(&r.cell).map_or(1.0, |c| c[j]);
                (r.dataset.as_str(), r.policy.as_str(), v)
            })
        }));
        for (p, point) in super::mean_and_mean_rank(&cell) {
            out.entry(p).or_default().push(point);
        }
    }
    out
}

/// Per policy: the mean over units of its final regret with the 95 % t interval, and its mean
/// rank, from the runs of one K.
fn leaderboard(runs: &[Run]) -> Vec<(String, f64, f64, f64, f64, usize)> {
    let per = super::per_unit_sums(
        runs.iter()
            .map(|r| (r.dataset.as_str(), r.policy.as_str(), r.best_score)),
    );
    let mut rows: Vec<_> = super::unit_means_and_ranks(&per)
        .into_iter()
        .map(|(p, (v, rank))| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let half = if v.len() > 1 {
                let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
                crate::analysis::stats::t_quantile(0.975, n - 1.0) * sd / n.sqrt()
            } else {
                f64::NAN
            };
            (
                p.to_string(),
                mean,
                mean - half,
                mean + half,
                rank / n,
                v.len(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.4.total_cmp(&b.4).then(a.0.cmp(&b.0)));
    rows
}

/// The runs of `families` only.
fn only(runs: &[Run], families: &[&str]) -> Vec<Run> {
    runs.iter()
        .filter(|r| families.contains(&r.policy.as_str()))
        .cloned()
        .collect()
}

/// Question 1's verdict from its one-test family (focus: TPE with `constant_liar`).
fn liar_verdict(t: &FamilyTest) -> &'static str {
    let a = &t.against[0];
    if t.min_p_holm > ALPHA {
        "cannot be decided"
    } else if a.focus_better {
        "yes: constant_liar helps"
    } else if a.p_holm <= ALPHA {
        "no: constant_liar hurts"
    } else {
        "not shown: no significant difference"
    }
}

/// Question 2's verdict from its family (focus: ASHA): the methods significantly better than ASHA.
fn beats_asha_verdict(t: &FamilyTest) -> String {
    let better: Vec<&str> = t
        .against
        .iter()
        .filter(|a| !a.focus_better && a.p_holm <= ALPHA)
        .map(|a| a.policy.as_str())
        .collect();
    if t.min_p_holm > ALPHA {
        "cannot be decided".into()
    } else if better.is_empty() {
        "not shown: no library model-based method is significantly better than ASHA".into()
    } else {
        format!("yes: {} beat(s) ASHA", better.join(", "))
    }
}

fn family_rows(t: &FamilyTest, focus: &str) -> String {
    let mut s = format!(
        "| {focus} against | Δ = {focus} − it [95 % CI] | Holm p | finding |\n|---|---|---|---|\n"
    );
    for a in &t.against {
        let _ = writeln!(
            s,
            "| {} | {:+.4} [{:+.4}, {:+.4}] | {:.4} | {} |",
            a.policy,
            a.diff.0,
            a.diff.1,
            a.diff.2,
            a.p_holm,
            if a.focus_better {
                format!("{focus} significantly better")
            } else if a.p_holm <= ALPHA {
                format!("{} significantly better", a.policy)
            } else {
                "no significant difference".into()
            }
        );
    }
    s
}

fn figure(rans: &[&Ran], k: usize) -> (Lines, BTreeMap<String, Vec<(f64, f64)>>) {
    let table = anytime_table(rans);
    let xs: Vec<f64> = (1..=STEPS).map(|j| j as f64 / STEPS as f64).collect();
    // `from`: the first fraction drawn (the regret of the first 5–10 %, before most cells have
    // finished a configuration, is near 1 and would flatten the rest).
    let panel = |caption: &str, y: &str, pick: fn(&(f64, f64)) -> f64, floor: f64, from: f64| {
        let series: Vec<Series> = table
            .iter()
            .enumerate()
            .map(|(i, (p, rows))| Series {
                name: p.clone(),
                points: xs
                    .iter()
                    .zip(rows)
                    .filter(|(x, _)| **x >= from - 1e-9)
                    .map(|(&x, r)| (x, pick(r)))
                    .collect(),
                band: None,
                color: i,
                dashed: [ASHA, "bohb", "tpe", NO_LIAR].contains(&p.as_str()),
            })
            .collect();
        let hi = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite())
            .fold(floor, f64::max);
        Panel {
            caption: caption.into(),
            x_desc: "fraction of the wall-clock budget".into(),
            y_desc: y.into(),
            x_range: (from, 1.0),
            y_range: (floor, floor + (hi - floor) * 1.05),
            log_x: false,
            series,
            regions: Vec::new(),
        }
    };
    let fig = Lines {
        title: format!(
            "{k} simulated worker(s), 10 datasets (sklearn-grid MLP: 10 s; HPOBench MLP: 5 000 s)"
        ),
        panels: vec![
            panel(
                "(a) mean normalised regret, from 15 % of the budget",
                "normalised regret",
                |r| r.0,
                0.0,
                0.15,
            ),
            panel("(b) mean rank (1 = best)", "mean rank", |r| r.1, 1.0, 0.05),
        ],
    };
    (fig, table)
}

/// Run both experiments at 1, 4 and 16 workers with the interpreters `opts.interpreters`, and
/// write `results/parallel-samplers/` (module docs).
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let py = &opts.interpreters;
    let out = opts.results.join("parallel-samplers");
    std::fs::create_dir_all(&out)
        .with_context(|| format!("{}: cannot create the folder", out.display()))?;
    let mut files = Vec::new();
    let mut by_k: BTreeMap<usize, Vec<Ran>> = BTreeMap::new();
    for k in WORKERS {
        for e in EXPERIMENTS {
            by_k.entry(k)
                .or_default()
                .push(run_at(opts, py, e, k, &out, &mut files)?);
        }
    }
    let all = |k: usize| -> Vec<Run> {
        by_k[&k]
            .iter()
            .flat_map(|r| r.runs.iter().cloned())
            .collect()
    };

    // The two questions, at 16 workers.
    let runs16 = all(AT_K);
    let q1 = focus_versus_rest(
        &only(&runs16, &[LIAR, NO_LIAR]),
        false,
        UnitKind::Dataset,
        LIAR,
        &[],
    )?;
    let mut q2_families: Vec<&str> = vec![ASHA];
    q2_families.extend(MODEL_BASED.iter().map(|m| m.0));
    let q2 = focus_versus_rest(
        &only(&runs16, &q2_families),
        false,
        UnitKind::Dataset,
        ASHA,
        &[],
    )?;
    anyhow::ensure!(
        !q2.against.is_empty(),
        "the results at {AT_K} workers hold none of the libraries' model-based methods ({})",
        MODEL_BASED.map(|m| m.0).join(", ")
    );
    // A method left out of the experiment files (its library not installed) is named.
    let absent: Vec<String> = MODEL_BASED
        .iter()
        .filter(|(f, _)| !q2.against.iter().any(|a| a.policy == *f))
        .map(|(f, words)| format!("{f} ({words})"))
        .collect();
    let (v1, mut v2) = (liar_verdict(&q1), beats_asha_verdict(&q2));
    if !absent.is_empty() {
        let _ = write!(
            v2,
            " (absent from these results, so not in the family: {})",
            absent.join(", ")
        );
    }
    let mut verdicts = format!(
        "# The two questions, at {AT_K} workers\n\nUnits: {} datasets (each the mean over its repetitions), exact Wilcoxon signed-rank, Holm within each family, α = {ALPHA}. Lower normalised regret is better, so a negative Δ favours the first policy named.\n\n## 1. Does `constant_liar` help Optuna's TPE at {AT_K} workers?\n\n**{v1}.** Smallest Holm p any outcome could give: {:.4}.\n\n{}\n## 2. Does any library's model-based method beat banditbench's ASHA at {AT_K} workers?\n\n**{v2}.** A family of {} tests; smallest Holm p any outcome could give: {:.4}.\n\n{}",
        q1.n_units,
        q1.min_p_holm,
        family_rows(&q1, LIAR),
        q2.against.len(),
        q2.min_p_holm,
        family_rows(&q2, ASHA),
    );
    verdicts.push('\n');
    super::write_listed(&mut files, out.join("verdicts.md"), &verdicts)?;

    // Leaderboards, anytime tables and figures per K.
    let mut lb_csv = String::from(
        "workers,policy,units,mean_final_normalised_regret,ci_low,ci_high,mean_rank\n",
    );
    let mut rg_csv = String::from("workers,policy,fraction,mean_normalised_regret,mean_rank\n");
    let mut lb_md = String::new();
    for (&k, rans) in &by_k {
        let runs = all(k);
        let rows = leaderboard(&runs);
        let _ = writeln!(
            lb_md,
            "### {k} worker(s)\n\n![anytime](anytime-k{k}.png)\n\n| policy | mean rank | mean final normalised regret [95 % CI] |\n|---|---|---|"
        );
        for (p, m, lo, hi, rank, n) in &rows {
            let _ = writeln!(lb_csv, "{k},{p},{n},{m},{lo},{hi},{rank}");
            let _ = writeln!(lb_md, "| {p} | {rank:.2} | {m:.4} [{lo:.4}, {hi:.4}] |");
        }
        lb_md.push('\n');
        let refs: Vec<&Ran> = rans.iter().collect();
        let (fig, table) = figure(&refs, k);
        for (p, pts) in &table {
            for (j, (m, r)) in pts.iter().enumerate() {
                let _ = writeln!(rg_csv, "{k},{p},{},{m},{r}", (j + 1) as f64 / STEPS as f64);
            }
        }
        files.extend(crate::report::figures::save(
            &fig,
            &out,
            &format!("anytime-k{k}"),
            &crate::report::figures::Page::default(),
        )?);
        debug_assert!(rans.iter().all(|r| r.workers == k));
    }
    super::write_listed(&mut files, out.join("leaderboard.csv"), &lb_csv)?;
    super::write_listed(&mut files, out.join("regret.csv"), &rg_csv)?;
    let mut md = String::from(
        "# Library optimizers on simulated workers\n\nWritten by `banditbench reproduce parallel-samplers` (issue #45). Optuna 5.0.0 (TPE with and without `constant_liar`, GP, CMA-ES, random), SMAC 2.4.1 (HPO facade), DEHB 0.1.2 and Syne Tune 0.16.0 (ASHA, BOHB, BORE), each through its `banditbench.adapters` adapter and the protocol, beside banditbench's own ASHA, BOHB and TPE, on `sklearn-grid`'s MLP grids (6 datasets, run 0, 10 s) and HPOBench's MLP tables (4 datasets, 5 000 s), 2 repetitions, with 1, 4 and 16 simulated workers. A library's repeated suggestion is trained and paid for again (`repeat = \"charge\"`). The score is the incumbent's normalised regret, (best − incumbent) / (best − worst) with the task table's best and worst recorded validation accuracy, 1 while nothing has finished. The experiment files as run are in `experiments/`; each run's report (ranks, tests, anytime figures on raw accuracy) in its folder.\n\n",
    );
    md.push_str(&verdicts);
    let _ = writeln!(
        md,
        "\n# Leaderboards\n\nPer number of workers: each policy's mean rank over the 10 dataset units and its mean final normalised regret with the 95 % t interval over them (`leaderboard.csv`); the figures show both over the budget (`regret.csv`). Dashed lines: banditbench's own policies and TPE without `constant_liar`.\n\n{lb_md}"
    );
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_experiment_as_run_names_its_workers_interpreters_and_an_absolute_pool() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let file = "parallel-samplers-sklearn-grid.toml";
        let text = std::fs::read_to_string(root.join("experiments").join(file)).unwrap();
        let py = Interpreters {
            python: "/venv/bin/python".into(),
            dehb: "/dehb venv/bin/python".into(),
            given: true,
        };
        let (base, out) = at_workers(&text, file, 16, &root.join("traces"), &py).unwrap();
        assert_eq!(base, "parallel-samplers-sklearn-grid");
        let f: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(
            f["name"].as_str(),
            Some("parallel-samplers-sklearn-grid-k16")
        );
        assert_eq!(f["world"]["workers"].as_integer(), Some(16));
        let traces = PathBuf::from(f["traces"].as_str().unwrap());
        assert!(traces.is_absolute() && traces.join("pool.toml").is_file());
        let pols = f["policies"].as_array().unwrap();
        let cmd = |name: &str| {
            pols.iter()
                .find(|p| p.get("name").and_then(|n| n.as_str()) == Some(name))
                .unwrap()["command"]
                .as_array()
                .unwrap()[0]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(cmd("dehb"), "/dehb venv/bin/python");
        assert_eq!(cmd("optuna-tpe"), "/venv/bin/python");
        assert_eq!(cmd("st-bore"), "/venv/bin/python");
        // Every library policy of question 2 is in both experiments, and so are both TPEs.
        for file in EXPERIMENTS.map(|e| e.0) {
            let f: toml::Table = toml::from_str(
                &std::fs::read_to_string(root.join("experiments").join(file)).unwrap(),
            )
            .unwrap();
            let names: Vec<String> = f["policies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    p.get("name")
                        .or(p.get("family"))
                        .and_then(|n| n.as_str())
                        .unwrap()
                        .to_string()
                })
                .collect();
            for want in MODEL_BASED.iter().map(|m| m.0).chain([LIAR, NO_LIAR, ASHA]) {
                assert!(names.iter().any(|n| n == want), "{file}: no {want}");
            }
        }
        // A file that sets its own workers is refused by name.
        let e = at_workers(
            &text.replace("[world]\n", "[world]\nworkers = 2\n"),
            file,
            4,
            &root.join("traces"),
            &py,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("sets workers"), "{e}");
    }

    #[test]
    fn regret_is_normalised_between_the_tables_best_and_worst_and_one_when_nothing_finished() {
        assert_eq!(regret(0.9, (0.9, 0.5)), 0.0);
        assert_eq!(regret(0.5, (0.9, 0.5)), 1.0);
        assert!((regret(0.8, (0.9, 0.5)) - 0.25).abs() < 1e-12);
        assert_eq!(regret(f64::NAN, (0.9, 0.5)), 1.0);
        // Minimised scores: best is the lowest.
        assert!((regret(0.2, (0.1, 0.5)) - 0.25).abs() < 1e-12);
    }

    fn family(min_p: f64, against: &[(&str, f64, bool)]) -> FamilyTest {
        super::super::claims::family_for_tests(10, min_p, against)
    }

    #[test]
    fn the_verdicts_follow_the_rules_fixed_before_the_runs() {
        assert_eq!(
            liar_verdict(&family(0.002, &[("t", 0.01, true)])),
            "yes: constant_liar helps"
        );
        assert_eq!(
            liar_verdict(&family(0.002, &[("t", 0.01, false)])),
            "no: constant_liar hurts"
        );
        assert_eq!(
            liar_verdict(&family(0.002, &[("t", 0.3, false)])),
            "not shown: no significant difference"
        );
        assert_eq!(
            liar_verdict(&family(0.06, &[("t", 0.06, true)])),
            "cannot be decided"
        );
        assert_eq!(
            beats_asha_verdict(&family(
                0.01,
                &[
                    ("smac-hpo", 0.03, false),
                    ("st-bore", 0.2, false),
                    ("optuna-gp", 0.01, true)
                ]
            )),
            "yes: smac-hpo beat(s) ASHA"
        );
        assert!(
            beats_asha_verdict(&family(0.01, &[("smac-hpo", 0.3, false)])).starts_with("not shown")
        );
    }

    #[test]
    fn the_leaderboard_ranks_policies_within_each_unit_and_averages_over_units() {
        let mk = |d: &str, p: &str, s: f64| Run {
            dataset: d.into(),
            policy: p.into(),
            ..Run::scored(d, 0, 10.0, 0, p, s)
        };
        let runs = vec![
            mk("a", "x", 0.1),
            mk("a", "x", 0.3),
            mk("a", "y", 0.5),
            mk("b", "x", 0.4),
            mk("b", "y", 0.4),
        ];
        let rows = leaderboard(&runs);
        assert_eq!(rows[0].0, "x");
        // x: unit a mean 0.2 (rank 1), unit b 0.4 (tied: 1.5) → mean rank 1.25, mean 0.3.
        assert!((rows[0].4 - 1.25).abs() < 1e-12 && (rows[0].1 - 0.3).abs() < 1e-12);
        assert!((rows[1].4 - 1.75).abs() < 1e-12 && (rows[1].1 - 0.45).abs() < 1e-12);
        assert_eq!(rows[1].5, 2);
    }
}
