//! `banditbench report`: statistics, tables and figures from a results folder or a table of
//! scores from any tool.
//!
//! Output files (a contract; see the README): `ranks.csv`, `summary.csv`, `labels.csv`,
//! `tests.json`, `report.md`, `report.tex`, `ranking.tex`, and every figure as PDF, SVG, PNG and
//! CSV. The analysis lives in `crate::analysis`, the text writers in `writers`, the choice of
//! figures in `choose`, the figure kinds in `figures`.

mod choose;
pub mod figures;
mod fronts;
pub(crate) mod input;
pub(crate) mod labels;
pub(crate) mod request;
pub(crate) mod show;
mod writers;

pub(crate) use crate::analysis::budgets::{best_per_family, mean_ranks_by_budget};
pub(crate) use crate::analysis::{FoundNothing, UnitKind};
pub(crate) use crate::results::{Results, Run, anytime_curves, read_results};
pub(crate) use input::{ScoresFormat, read_scores};
pub(crate) use writers::{fmt_p_with, ranking_in_words, tests_in_words};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use crate::analysis::budgets::{families_of, ranks_by_budget};
use crate::analysis::compare::{Comparison, Options, ScoreTable, compare};
use crate::analysis::units::{check_units, unit_table};
use choose::Names;
use figures::Page;
use labels::PolicyName;
use writers::{options_json, write_documents, write_tables};

#[derive(Clone, Debug)]
pub(crate) struct ReportOptions {
    pub stats: Options,
    /// `None`: the most independent unit the results allow (the dataset when there are two).
    pub unit: Option<UnitKind>,
    pub found_nothing: FoundNothing,
    pub per_budget: bool,
    /// Grid points of the anytime curves (fractions of the budget).
    pub anytime_points: usize,
    /// The width figures are drawn for, and whether they carry titles.
    pub page: Page,
    /// Policy id -> label for figures (`--labels FILE`); others get automatic short labels.
    pub labels: BTreeMap<String, String>,
    /// What the anytime regret is normalised against.
    pub regret: Regret,
    /// The trace set or pool the results were run on, for `Regret::Trace` [default: the lock
    /// file's `trace_dir`].
    pub traces: Option<PathBuf>,
    /// Two-objective results: the pair whose EAF difference is drawn, "A,B" (ids or labels)
    /// [default: the two best-ranked policies].
    pub eaf_diff: Option<String>,
}

/// What the anytime regret `(b − v) / (b − w)` of a unit is normalised against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Regret {
    /// b and w: the best and worst of the compared policies' mean scores in the unit over the
    /// whole curve. Adding or removing a policy changes every curve.
    #[default]
    Compared,
    /// b and w: the best and worst validation score recorded in the unit's traces (every
    /// evaluation of every arm, or every unit of every configuration of a pool). Curves do not
    /// depend on which policies are compared.
    Trace,
    /// Results of several objectives: the hypervolume regret itself, 1 − HV/HV* against the
    /// task's true front (b = 0, w = 1); chosen for such results whatever `--regret` says.
    #[value(skip)]
    Hypervolume,
}

impl Regret {
    pub fn as_str(self) -> &'static str {
        match self {
            Regret::Compared => "compared",
            Regret::Trace => "trace",
            Regret::Hypervolume => "hypervolume",
        }
    }
}

/// The best and worst validation score recorded per (dataset, run) in the traces a results
/// folder was run on, oriented so that best >= worst means better (scores negated when lower
/// is better). The traces are those of the lock file (`trace_dir`, or `traces` when given) and
/// must have its `trace_hash`.
pub(crate) fn trace_bounds(
    dir: &Path,
    traces: Option<&Path>,
    higher: bool,
) -> Result<crate::analysis::budgets::ScoreBounds> {
    let lock = dir.join(crate::results::LOCK);
    let table = crate::results::read_lock_file(&lock)?.with_context(|| {
        format!(
            "{}: cannot read, so the traces of --regret trace are unknown",
            lock.display()
        )
    })?;
    let given = |v: &str| Some(v.to_string()).filter(|v| !v.is_empty());
    let (trace_dir, trace_hash) = (
        given(&table.resolved.trace_dir),
        given(&table.resolved.trace_hash),
    );
    let world_kind = table
        .experiment
        .get("world")
        .and_then(|w| w.get("kind"))
        .and_then(|k| k.as_str());
    if world_kind == Some("synthetic") {
        anyhow::bail!(
            "{}: a synthetic world has no recorded traces; --regret trace needs results run on a trace set or a pool",
            dir.display()
        );
    }
    let tdir = match (traces, trace_dir) {
        (Some(t), _) => t.to_path_buf(),
        (None, Some(d)) => PathBuf::from(d),
        (None, None) => anyhow::bail!(
            "{}: no resolved.trace_dir; give the trace set with --traces DIR",
            lock.display()
        ),
    };
    if !tdir.is_dir() {
        anyhow::bail!(
            "{}: the traces of these results are not at {} (relative paths are taken from the current directory); give them with --traces DIR",
            lock.display(),
            tdir.display()
        );
    }
    let sign = if higher { 1.0 } else { -1.0 };
    let mut out: BTreeMap<(String, i64), (f64, f64)> = BTreeMap::new();
    let mut add = |key: (String, i64), v: f64| {
        if v.is_finite() {
            let e = out.entry(key).or_insert((f64::NEG_INFINITY, f64::INFINITY));
            e.0 = e.0.max(sign * v);
            e.1 = e.1.min(sign * v);
        }
    };
    let hash = if crate::trace::pool::is_pool(&tdir) {
        let pool = crate::trace::pool::load_pool(&tdir, true)?;
        for t in &pool.tasks {
            for c in &t.curves {
                for (s, st) in c.score.iter().zip(&c.status) {
                    if *st == crate::trace::Status::Ok {
                        add((t.dataset.clone(), t.run), *s as f64);
                    }
                }
            }
        }
        pool.content_hash
    } else {
        let opts = crate::trace::LoadOptions {
            allow_missing_arms: true,
            ..Default::default()
        };
        let ts = crate::trace::load_trace_set(&tdir, &opts)?;
        for t in &ts.tasks {
            for a in &t.arms {
                for s in &a.score {
                    add((t.dataset.clone(), t.run), *s);
                }
            }
        }
        ts.content_hash
    };
    if let Some(want) = trace_hash
        && want != hash
    {
        anyhow::bail!(
            "{}: these results were run on traces with hash {want}, but {} has hash {hash}; give the right ones with --traces DIR",
            lock.display(),
            tdir.display()
        );
    }
    Ok(out)
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            stats: Options::default(),
            unit: None,
            found_nothing: FoundNothing::Worst,
            per_budget: false,
            anytime_points: 50,
            page: Page::default(),
            labels: BTreeMap::new(),
            regret: Regret::Compared,
            traces: None,
            eaf_diff: None,
        }
    }
}

/// What a report wrote, and the comparison it wrote it from.
#[derive(Clone, Debug)]
pub(crate) struct ReportSummary {
    pub out: PathBuf,
    pub files: Vec<PathBuf>,
    pub text: String,
    pub comparison: Comparison,
}

/// Report on any long table of scores (unit, policy, score).
pub(crate) fn report_scores(
    csv: &Path,
    format: &ScoresFormat,
    minimize: bool,
    out: &Path,
    opts: &ReportOptions,
) -> Result<ReportSummary> {
    opts.stats.check()?;
    let (rows, mut notes) = read_scores(csv, format)?;
    let (table, more) = ScoreTable::from_rows(&rows, !minimize, opts.stats.missing, false)
        .with_context(|| format!("{}", csv.display()))?;
    notes.extend(more);
    let stats = opts.stats.resolved(&table.policies)?;
    stats.check_units(&table.units)?;
    let c = compare(table, &stats).with_incomplete_units(&rows, false);
    let options = options_json(&c, &[("input", json!(csv.display().to_string()))]);
    let names = Names::new(
        &c.table
            .policies
            .iter()
            .map(|p| PolicyName::bare(p))
            .collect::<Vec<_>>(),
        &opts.labels,
    );
    let mut files = write_tables(&c, out, options, &notes, None, &names.pairs())?;
    let mut w = choose::comparison_figures(&c, &names, out, &opts.page)?;
    // One panel of rank boxplots over all units.
    let order = c.order();
    choose::rank_boxplots(
        &mut w,
        vec![(
            "all units".into(),
            order
                .iter()
                .map(|&i| c.ranks.iter().map(|r| r[i]).collect())
                .collect(),
        )],
        order
            .iter()
            .map(|&i| names.of(&c.table.policies[i]))
            .collect(),
        "given",
        out,
        &opts.page,
    )?;
    files.append(&mut w.files);
    let intro = format!(
        "Scores from `{}` ({}), {} units × {} policies.",
        csv.display(),
        if minimize {
            "lower is better"
        } else {
            "higher is better"
        },
        c.table.units.len(),
        c.table.policies.len()
    );
    files.extend(write_documents(
        &c,
        out,
        "banditbench report",
        &intro,
        &notes,
        &w.figures,
        None,
    )?);
    Ok(ReportSummary {
        out: out.to_path_buf(),
        files,
        text: format!("{}{}", ranking_in_words(&c), tests_in_words(&c)),
        comparison: c,
    })
}

/// Where a report's runs came from: one results folder, or several read together (each cell
/// renumbered), and what was done to join them.
pub(crate) struct Source {
    /// Each folder, with its cells' new numbers (original cell -> joint cell; empty: unchanged).
    pub dirs: Vec<(PathBuf, BTreeMap<u64, u64>)>,
    /// What joining them did, for the report's notes.
    pub notes: Vec<String>,
}

impl Source {
    fn single(dir: &Path) -> Source {
        Source {
            dirs: vec![(dir.to_path_buf(), BTreeMap::new())],
            notes: Vec::new(),
        }
    }

    fn label(&self) -> String {
        self.dirs
            .iter()
            .map(|(d, _)| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn has_trajectories(&self) -> bool {
        self.dirs
            .iter()
            .all(|(d, _)| d.join(crate::results::TRAJECTORIES).is_file())
    }

    /// The anytime curves of `runs` (joint cell numbers), read folder by folder.
    fn curves(&self, runs: &[Run], points: usize) -> Result<BTreeMap<u64, Vec<f64>>> {
        if let [(dir, map)] = self.dirs.as_slice()
            && map.is_empty()
        {
            return anytime_curves(dir, runs, points);
        }
        let mut out = BTreeMap::new();
        for (dir, map) in &self.dirs {
            // This folder's runs under their own cell numbers.
            let back: BTreeMap<u64, u64> = map.iter().map(|(&a, &b)| (b, a)).collect();
            let mine: Vec<Run> = runs
                .iter()
                .filter_map(|r| {
                    back.get(&r.cell).map(|&c| Run {
                        cell: c,
                        ..r.clone()
                    })
                })
                .collect();
            for (c, curve) in anytime_curves(dir, &mine, points)? {
                if let Some(&joint) = map.get(&c) {
                    out.insert(joint, curve);
                }
            }
        }
        Ok(out)
    }
}

/// Two folders measure the same objectives (or one objective each), and every task both hold
/// has the same reference point in both.
fn objectives_agree(
    a: &Option<crate::results::LockObjectives>,
    b: &Option<crate::results::LockObjectives>,
) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.names == b.names
                && a.directions == b.directions
                && a.tasks.iter().all(|t| {
                    b.tasks
                        .iter()
                        .find(|u| u.task == t.task)
                        .is_none_or(|u| u.reference == t.reference)
                })
        }
        _ => false,
    }
}

/// The budgets of a folder's runs, each with its unit.
fn budgets_of(r: &Results) -> BTreeSet<String> {
    r.runs
        .iter()
        .map(|x| format!("{} {}", x.budget, r.budget_unit))
        .collect()
}

/// Folder `d` (results `r`, objectives `objectives`) can be ranked with the first folder: the
/// same objectives and reference points, direction and budgets; the error names both folders
/// and what differs.
fn check_rankable_with(
    (first_dir, first, objectives0): (&Path, &Results, &Option<crate::results::LockObjectives>),
    (d, r, objectives): (&Path, &Results, &Option<crate::results::LockObjectives>),
) -> Result<()> {
    let agree = objectives_agree(objectives, objectives0);
    if !agree {
        let show = |o: &Option<crate::results::LockObjectives>| match o {
            None => "one objective".to_string(),
            Some(o) => format!("objectives {}", o.names.join(" x ")),
        };
        anyhow::bail!(
            "{} measures {} but {} measures {}{}: folders ranked together need the same objectives and the same reference point per task (the lock files' [resolved.objectives])",
            d.display(),
            show(objectives),
            first_dir.display(),
            show(objectives0),
            if objectives.as_ref().map(|o| &o.names) == objectives0.as_ref().map(|o| &o.names) {
                ", with other reference points"
            } else {
                ""
            }
        );
    }
    if r.higher_is_better != first.higher_is_better {
        anyhow::bail!(
            "{} {} its score but {} {}s it: rank folders of one direction together",
            d.display(),
            if r.higher_is_better {
                "maximizes"
            } else {
                "minimizes"
            },
            first_dir.display(),
            if first.higher_is_better {
                "maximize"
            } else {
                "minimize"
            }
        );
    }
    let (b, b0) = (budgets_of(r), budgets_of(first));
    if b != b0 {
        let show = |s: &BTreeSet<String>| s.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
        anyhow::bail!(
            "{} has budgets [{}] but {} has [{}]: folders ranked together need the same budgets (an import takes --budget; an experiment file, budgets and budget_unit)",
            d.display(),
            show(&b),
            first_dir.display(),
            show(&b0)
        );
    }
    Ok(())
}

/// The units (of `unit`) each folder has, and those every folder has; an error when they share
/// none.
fn common_units(
    all: &[(PathBuf, Results)],
    unit: UnitKind,
) -> Result<(Vec<BTreeSet<String>>, BTreeSet<String>)> {
    let keys: Vec<BTreeSet<String>> = all
        .iter()
        .map(|(_, r)| r.runs.iter().map(|x| unit.key(x)).collect())
        .collect();
    let common: BTreeSet<String> = keys.iter().skip(1).fold(keys[0].clone(), |acc, k| {
        acc.intersection(k).cloned().collect()
    });
    if common.is_empty() {
        let show = |s: &BTreeSet<String>| s.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        anyhow::bail!(
            "the folders share no {} unit: {}; rank folders run on the same tasks (or choose another --unit)",
            unit.as_str(),
            all.iter()
                .zip(&keys)
                .map(|((d, _), k)| format!("{} has {}", d.display(), show(k)))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok((keys, common))
}

/// Read several results folders as one: the same metric direction and budgets, no policy in
/// two folders, restricted to the units (of `unit`, or the most independent the joint runs
/// allow) that every folder has. Errors name the folders and what differs.
pub(crate) fn read_together(
    dirs: &[PathBuf],
    unit: Option<UnitKind>,
) -> Result<(Source, Results, UnitKind)> {
    let mut all: Vec<(PathBuf, Results)> = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        if dirs[..i].contains(d) {
            anyhow::bail!(
                "{}: given twice; name each results folder once",
                d.display()
            );
        }
        all.push((d.clone(), read_results(d)?));
    }
    let (first_dir, first) = &all[0];
    let mut owner: BTreeMap<String, PathBuf> = BTreeMap::new();
    let objectives0 = lock_objectives(first_dir)?;
    for (d, r) in &all {
        let objectives = lock_objectives(d)?;
        check_rankable_with((first_dir, first, &objectives0), (d, r, &objectives))?;
        for p in r.runs.iter().map(|x| &x.policy).collect::<BTreeSet<_>>() {
            if let Some(other) = owner.insert(p.clone(), d.clone())
                && other != *d
            {
                anyhow::bail!(
                    "policy '{p}' is in both {} and {}: rank each policy from one folder (rename an import's policies with --prefix)",
                    other.display(),
                    d.display()
                );
            }
        }
    }
    let joint: Vec<Run> = all
        .iter()
        .flat_map(|(_, r)| r.runs.iter().cloned())
        .collect();
    let unit = unit.unwrap_or_else(|| UnitKind::most_independent(&joint));
    let (keys, common) = common_units(&all, unit)?;
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    let mut dirs_out = Vec::new();
    for ((d, r), k) in all.iter().zip(&keys) {
        let extra = k.difference(&common).count();
        if extra > 0 {
            notes.push(format!(
                "{}: {extra} of its {} units are not in every folder and are left out",
                d.display(),
                k.len()
            ));
        }
        let mut map = BTreeMap::new();
        for x in &r.runs {
            if common.contains(&unit.key(x)) {
                let cell = runs.len() as u64;
                map.insert(x.cell, cell);
                runs.push(Run { cell, ..x.clone() });
            }
        }
        dirs_out.push((d.clone(), map));
    }
    let res = Results {
        runs,
        higher_is_better: first.higher_is_better,
        metric_note: first.metric_note.clone(),
        budget_unit: first.budget_unit.clone(),
        workers: all.iter().map(|(_, r)| r.workers).max().unwrap_or(1),
    };
    Ok((
        Source {
            dirs: dirs_out,
            notes,
        },
        res,
        unit,
    ))
}

/// The objectives a results folder measures and its reference points, from its lock file
/// (none for one objective).
fn lock_objectives(dir: &Path) -> Result<Option<crate::results::LockObjectives>> {
    let lock = dir.join(crate::results::LOCK);
    Ok(crate::results::read_lock_file(&lock)?.and_then(|t| t.resolved.objectives))
}

/// Report on several results folders ranked together on their common units (see
/// [`read_together`]).
pub(crate) fn report_together(
    dirs: &[PathBuf],
    out: &Path,
    opts: &ReportOptions,
) -> Result<ReportSummary> {
    if let [dir] = dirs {
        return report_results(dir, out, opts);
    }
    opts.stats.check()?;
    if opts.per_budget {
        anyhow::bail!("--per-budget takes one results folder");
    }
    let (src, res, unit) = read_together(dirs, opts.unit)?;
    report_runs(&src, &res, &res.runs, out, opts, unit, "banditbench report")
}

/// Report on a results folder written by `banditbench run`.
pub(crate) fn report_results(
    dir: &Path,
    out: &Path,
    opts: &ReportOptions,
) -> Result<ReportSummary> {
    report_loaded(dir, &read_results(dir)?, out, opts)
}

/// `report_results` on results already read from `dir`.
pub(crate) fn report_loaded(
    dir: &Path,
    res: &Results,
    out: &Path,
    opts: &ReportOptions,
) -> Result<ReportSummary> {
    opts.stats.check()?;
    let unit = opts
        .unit
        .unwrap_or_else(|| UnitKind::most_independent(&res.runs));
    let src = Source::single(dir);
    let mut summary = report_runs(&src, res, &res.runs, out, opts, unit, "banditbench report")?;
    if opts.per_budget {
        let budgets: BTreeSet<String> = res.runs.iter().map(|r| format!("{}", r.budget)).collect();
        for b in budgets {
            let runs: Vec<Run> = res
                .runs
                .iter()
                .filter(|r| format!("{}", r.budget) == b)
                .cloned()
                .collect();
            let sub = out.join(crate::names::file_part(&format!("budget-{b}")));
            let s = report_runs(
                &src,
                res,
                &runs,
                &sub,
                opts,
                if unit == UnitKind::TaskBudget {
                    UnitKind::Task
                } else {
                    unit
                },
                &format!("Budget {b} {}", res.budget_unit),
            )?;
            summary.files.extend(s.files);
        }
    }
    Ok(summary)
}

/// Report on a results folder restricted to some policies (e.g. each family's best setting).
pub(crate) fn report_policies(
    dir: &Path,
    res: &Results,
    policies: &[String],
    out: &Path,
    opts: &ReportOptions,
    heading: &str,
) -> Result<ReportSummary> {
    let keep: BTreeSet<&String> = policies.iter().collect();
    let runs: Vec<Run> = res
        .runs
        .iter()
        .filter(|r| keep.contains(&r.policy))
        .cloned()
        .collect();
    let unit = opts
        .unit
        .unwrap_or_else(|| UnitKind::most_independent(&runs));
    report_runs(&Source::single(dir), res, &runs, out, opts, unit, heading)
}

/// The analysis of a report on `runs`: the unit table, the comparison of the policies on it,
/// the notes to print beside it, and the JSON of the options used.
fn compare_runs(
    src: &Source,
    res: &Results,
    runs: &[Run],
    opts: &ReportOptions,
    unit: UnitKind,
) -> Result<(
    crate::analysis::UnitTable,
    Comparison,
    Vec<String>,
    serde_json::Value,
)> {
    let label = src.label();
    let units = unit_table(runs, unit, opts.found_nothing, res.higher_is_better);
    check_units(&units).with_context(|| label.clone())?;
    let (table, table_notes) =
        ScoreTable::from_rows(&units.rows, res.higher_is_better, opts.stats.missing, true)
            .with_context(|| label.clone())?;
    let mut notes = src.notes.clone();
    notes.extend(units.found_nothing_notes());
    let (hit, all, share) = crate::results::exhausted_summary(runs);
    if hit > 0 {
        notes.push(format!(
            "{hit} of {all} cells pulled arms past the end of their traces, spending on average {:.1} % of their budget there (runs.parquet: exhausted_pulls, exhausted_budget)",
            100.0 * share
        ));
    }
    notes.extend(table_notes);
    let stats = opts.stats.resolved(&table.policies)?;
    stats.check_units(&table.units)?;
    let c = compare(table, &stats).with_incomplete_units(&units.rows, true);
    let options = options_json(
        &c,
        &[
            ("input", json!(label)),
            ("unit", json!(unit.as_str())),
            ("found_nothing", json!(opts.found_nothing.as_str())),
            ("per_budget", json!(opts.per_budget)),
            ("regret", json!(opts.regret.as_str())),
        ],
    );
    Ok((units, c, notes, options))
}

/// Every policy of `runs` with its short label, family and parameters (the labels file
/// `labels` renames them).
fn names_of(runs: &[Run], labels: &BTreeMap<String, String>) -> Names {
    let policy_names: BTreeMap<&String, PolicyName> = runs
        .iter()
        .map(|r| (&r.policy, r))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .map(|(p, r)| (p, PolicyName::from_run(p, &r.family, &r.params)))
        .collect();
    Names::new(&policy_names.values().cloned().collect::<Vec<_>>(), labels)
}

/// How the regret of the anytime curves is scaled, per (dataset, run): by the comparison's own
/// best and worst (none), by the trace set's (one folder only), or, with several objectives,
/// the hypervolume regret as it is.
fn regret_bounds(
    regret: Regret,
    src: &Source,
    runs: &[Run],
    opts: &ReportOptions,
    higher_is_better: bool,
) -> Result<Option<crate::analysis::budgets::ScoreBounds>> {
    Ok(match (regret, src.dirs.as_slice()) {
        // Oriented so that higher is better: b = −0, w = −1 leaves the regret as it is.
        (Regret::Hypervolume, _) => Some(
            runs.iter()
                .map(|r| ((r.dataset.clone(), r.run), (0.0, -1.0)))
                .collect(),
        ),
        (Regret::Compared, _) => None,
        (Regret::Trace, [dir]) => Some(trace_bounds(
            &dir.0,
            opts.traces.as_deref(),
            higher_is_better,
        )?),
        (Regret::Trace, _) => anyhow::bail!(
            "--regret trace takes one results folder (each folder has its own traces); use --regret compared with several"
        ),
    })
}

/// The anytime figure's x axis: with several workers a budget of seconds is simulated
/// wall-clock time, and a budget of pulls or units is total work (charged when it starts).
fn anytime_x_desc(workers: u64, budget_unit: &str) -> String {
    match (workers > 1, budget_unit) {
        (true, "seconds") => "fraction of the simulated wall-clock budget".to_string(),
        (true, unit) => format!("fraction of the budget ({unit} of work started)"),
        (false, _) => "fraction of the budget used".to_string(),
    }
}

/// Anytime curves from the trajectories and, with two objectives in one folder, each policy's
/// median attainment surface and final front per task.
#[allow(clippy::too_many_arguments)]
fn anytime_figures(
    w: &mut choose::Written,
    src: &Source,
    res: &Results,
    runs: &[Run],
    policies: &[String],
    names: &Names,
    out: &Path,
    opts: &ReportOptions,
) -> Result<()> {
    let tol = opts.stats.tie_tolerance;
    let curves = src.curves(runs, opts.anytime_points)?;
    let several = res.metric_note == crate::results::HV_REGRET_NOTE;
    let regret = if several {
        Regret::Hypervolume
    } else {
        opts.regret
    };
    let bounds = regret_bounds(regret, src, runs, opts, res.higher_is_better)?;
    let a = crate::analysis::budgets::anytime(
        &curves,
        runs,
        policies,
        res.higher_is_better,
        opts.anytime_points,
        tol,
        bounds.as_ref(),
    );
    let x_desc = anytime_x_desc(res.workers, &res.budget_unit);
    choose::anytime(w, a, names, out, &opts.page, regret, &x_desc)?;
    // Two objectives, one folder: each policy's median attainment surface and final front
    // per task.
    if let [(dir, map)] = src.dirs.as_slice()
        && map.is_empty()
    {
        for (fig, name, caption) in fronts::figures(
            dir,
            runs,
            policies,
            &|p| names.of(p),
            opts.eaf_diff.as_deref(),
        )? {
            w.add(figures::save(&fig, out, name, &opts.page)?, name, caption);
        }
    } else if opts.eaf_diff.is_some() {
        anyhow::bail!(
            "--eaf-diff applies to one results folder of two objectives, not to several reported together"
        );
    }
    Ok(())
}

fn report_runs(
    src: &Source,
    res: &Results,
    runs: &[Run],
    out: &Path,
    opts: &ReportOptions,
    unit: UnitKind,
    heading: &str,
) -> Result<ReportSummary> {
    let (units, c, notes, options) = compare_runs(src, res, runs, opts, unit)?;
    let names = names_of(runs, &opts.labels);
    let mut files = write_tables(&c, out, options, &notes, Some(&units), &names.pairs())?;
    let mut w = choose::comparison_figures(&c, &names, out, &opts.page)?;
    let order = c.order();
    let policies: Vec<String> = order.iter().map(|&i| c.table.policies[i].clone()).collect();
    let tol = opts.stats.tie_tolerance;

    // Rank boxplots, one panel per budget (ranks within each (task, budget)).
    let per_budget_unit = if unit == UnitKind::Task {
        UnitKind::TaskBudget
    } else {
        unit
    };
    let ranks = |members: &[String]| {
        choose::captioned(
            ranks_by_budget(
                runs,
                members,
                res.higher_is_better,
                per_budget_unit,
                opts.found_nothing,
                tol,
            ),
            &res.budget_unit,
        )
    };
    choose::rank_boxplots(
        &mut w,
        ranks(&policies),
        policies.iter().map(|p| names.of(p)).collect(),
        per_budget_unit.as_str(),
        out,
        &opts.page,
    )?;
    // Parameter studies: each family with several settings, ranked among themselves.
    for (fam, members) in families_of(runs).iter().filter(|(_, m)| m.len() >= 2) {
        let members: Vec<String> = members.iter().map(|s| (*s).clone()).collect();
        choose::parameter_study(
            &mut w,
            fam,
            &members,
            ranks(&members),
            &names,
            out,
            &opts.page,
        )?;
    }
    choose::allocation(&mut w, runs, &policies, &names, out, &opts.page)?;
    if src.has_trajectories() {
        anytime_figures(&mut w, src, res, runs, &policies, &names, out, opts)?;
    }
    files.append(&mut w.files);

    let intro = format!(
        "Results from {}: {} cells; score = {}.\n\n{}",
        src.dirs
            .iter()
            .map(|(d, _)| format!("`{}`", d.display()))
            .collect::<Vec<_>>()
            .join(", "),
        runs.len(),
        res.metric_note,
        units.describe()
    );
    files.extend(write_documents(
        &c,
        out,
        heading,
        &intro,
        &notes,
        &w.figures,
        Some(&units),
    )?);
    Ok(ReportSummary {
        out: out.to_path_buf(),
        files,
        text: format!(
            "Score: {}.\n{}{}",
            res.metric_note,
            ranking_in_words(&c),
            tests_in_words(&c)
        ),
        comparison: c,
    })
}

/// The ranking `run` prints, and what it rests on.
pub(crate) struct Ranking {
    pub table: crate::analysis::UnitTable,
    /// A warning when cells pulled arms past the end of their traces.
    pub exhausted: Option<String>,
}

/// Mean rank of each policy over the most independent units the results allow (see
/// `analysis::units`), from a results folder. Returns the ranking and what it rests on.
///
/// `runs.parquet` is streamed twice (the datasets and tasks, then the scores), so memory holds
/// one score per cell and never a cell: the same table as `unit_table` over `read_results`.
pub(crate) fn ranking(results_dir: &Path) -> Result<(Vec<crate::analysis::MeanRank>, Ranking)> {
    ranking_by(results_dir, crate::results::SCAN_ROWS)
}

/// [`ranking`], reading `rows` rows of `runs.parquet` at a time.
fn ranking_by(
    results_dir: &Path,
    rows: usize,
) -> Result<(Vec<crate::analysis::MeanRank>, Ranking)> {
    use crate::analysis::{FoundNothing, UnitGrouper, UnitKind, compare::DEFAULT_TIE_TOLERANCE};
    use std::collections::BTreeSet;
    let mut datasets: BTreeSet<String> = BTreeSet::new();
    let mut tasks: BTreeSet<(String, i64)> = BTreeSet::new();
    let mut direction: Option<String> = None;
    // Several objectives (a value in `hv_regret`): ranked by the hypervolume regret.
    let mut several = false;
    let first = ["dataset", "run", "direction", "hv_regret"];
    crate::results::scan_runs_by(results_dir, &first, rows, |c| {
        let (ds, run) = (c.strs("dataset")?, c.i64s("run")?);
        if direction.is_none() {
            direction = c.strs("direction")?.get(0).map(str::to_string);
        }
        if c.has("hv_regret") && c.f64s("hv_regret")?.null_count() < c.height() {
            several = true;
        }
        for (d, r) in ds.iter().zip(run.iter()) {
            let (d, r) = (d.unwrap_or(""), r.unwrap_or(0));
            if !tasks.contains(&(d.to_string(), r)) {
                datasets.insert(d.to_string());
                tasks.insert((d.to_string(), r));
            }
        }
        Ok(())
    })?;
    let higher_is_better = !several && direction.is_none_or(|d| d == "maximize");
    let score = if several { "hv_regret" } else { "best_score" };
    let kind = UnitKind::most_independent_of(datasets.len(), tasks.len());
    let mut g = UnitGrouper::new(kind);
    // Cells that pulled arms past their traces' ends: count, and their shares summed in file
    // order (as `exhausted_summary` sums them).
    let (mut hit, mut all, mut share_sum) = (0usize, 0usize, 0.0);
    crate::results::scan_runs_by(
        results_dir,
        &[
            "dataset",
            "run",
            "budget",
            "repetition",
            "policy",
            score,
            "budget_abs",
            "exhausted_pulls",
            "exhausted_budget",
        ],
        rows,
        |c| {
            let (ds, run, budget, rep, policy, best) = (
                c.strs("dataset")?,
                c.i64s("run")?,
                c.f64s("budget")?,
                c.u64s("repetition")?,
                c.strs("policy")?,
                c.f64s(score)?,
            );
            for i in 0..c.height() {
                g.add(
                    ds.get(i).unwrap_or(""),
                    run.get(i).unwrap_or(0),
                    budget.get(i).unwrap_or(f64::NAN),
                    rep.get(i).unwrap_or(0) as u32,
                    policy.get(i).unwrap_or(""),
                    best.get(i).unwrap_or(f64::NAN),
                );
            }
            all += c.height();
            // Written since results format 2; older folders read as zeros.
            if c.has("exhausted_pulls") {
                let (pulls, spent, abs) = (
                    c.u64s("exhausted_pulls")?,
                    c.f64s("exhausted_budget")?,
                    c.f64s("budget_abs")?,
                );
                for i in 0..c.height() {
                    let (p, b) = (pulls.get(i).unwrap_or(0), spent.get(i).unwrap_or(0.0));
                    if b > 0.0 || p > 0 {
                        hit += 1;
                        share_sum += b / abs.get(i).unwrap_or(f64::NAN).max(f64::MIN_POSITIVE);
                    }
                }
            }
            Ok(())
        },
    )?;
    let table = g.finish(FoundNothing::Worst, higher_is_better);
    let (ranks, _) =
        crate::analysis::mean_ranks(&table.rows, higher_is_better, DEFAULT_TIE_TOLERANCE);
    let share = share_sum / hit.max(1) as f64;
    let exhausted = (hit > 0).then(|| {
        format!(
            "{hit} of {all} cells pulled arms past the end of their traces, spending on average {:.1} % of their budget there (a budget longer than the traces; see the columns exhausted_pulls and exhausted_budget of runs.parquet)",
            100.0 * share
        )
    });
    Ok((ranks, Ranking { table, exhausted }))
}

#[cfg(test)]
mod tests {
    use super::choose::budget_caption;
    use super::figures::style::fmt_number as short_number;
    use super::*;

    fn folder(runs: Vec<Run>, higher: bool) -> Results {
        Results {
            runs,
            higher_is_better: higher,
            metric_note: String::new(),
            budget_unit: "units".into(),
            workers: 1,
        }
    }

    #[test]
    fn folders_rank_together_only_with_one_direction_budgets_and_objectives() {
        use crate::results::{LockObjectives, LockTaskReference};
        let two = |reference: f64| {
            Some(LockObjectives {
                names: vec!["a".into(), "b".into()],
                directions: vec!["min".into(), "min".into()],
                reference: "nadir".into(),
                tasks: vec![LockTaskReference {
                    task: "t".into(),
                    reference: vec![reference, 1.0],
                    ..Default::default()
                }],
            })
        };
        assert!(objectives_agree(&None, &None) && objectives_agree(&two(1.0), &two(1.0)));
        assert!(!objectives_agree(&two(1.0), &two(2.0)) && !objectives_agree(&two(1.0), &None));
        let a = folder(vec![Run::scored("d", 0, 10.0, 0, "p", 0.5)], true);
        let (pa, pb) = (Path::new("A"), Path::new("B"));
        assert!(check_rankable_with((pa, &a, &None), (pb, &a, &None)).is_ok());
        let e = check_rankable_with((pa, &a, &two(1.0)), (pb, &a, &two(2.0))).unwrap_err();
        assert!(e.to_string().starts_with("B measures objectives a x b but A measures objectives a x b, with other reference points"), "{e}");
        let min = folder(a.runs.clone(), false);
        let e = check_rankable_with((pa, &a, &None), (pb, &min, &None)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("B minimizes its score but A maximizes it"),
            "{e}"
        );
        let other = folder(vec![Run::scored("d", 0, 20.0, 0, "p", 0.5)], true);
        let e = check_rankable_with((pa, &a, &None), (pb, &other, &None)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("B has budgets [20 units] but A has [10 units]"),
            "{e}"
        );
    }

    #[test]
    fn the_anytime_axis_says_what_a_budget_counts_with_several_workers() {
        assert_eq!(anytime_x_desc(1, "seconds"), "fraction of the budget used");
        assert_eq!(
            anytime_x_desc(4, "seconds"),
            "fraction of the simulated wall-clock budget"
        );
        assert_eq!(
            anytime_x_desc(4, "units"),
            "fraction of the budget (units of work started)"
        );
    }

    #[test]
    fn folders_are_ranked_on_the_units_they_all_have() {
        let a = folder(
            vec![
                Run::scored("d1", 0, 10.0, 0, "p", 0.5),
                Run::scored("d2", 0, 10.0, 0, "p", 0.5),
            ],
            true,
        );
        let b = folder(vec![Run::scored("d2", 0, 10.0, 0, "q", 0.5)], true);
        let all = vec![(PathBuf::from("A"), a), (PathBuf::from("B"), b)];
        let (keys, common) = common_units(&all, UnitKind::Dataset).unwrap();
        assert_eq!((keys[0].len(), keys[1].len()), (2, 1));
        assert_eq!(common.len(), 1);
        let c = folder(vec![Run::scored("d3", 0, 10.0, 0, "q", 0.5)], true);
        let all = vec![all.into_iter().next().unwrap(), (PathBuf::from("C"), c)];
        let e = common_units(&all, UnitKind::Dataset).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the folders share no dataset unit: A has "),
            "{e}"
        );
    }

    /// The report's p-values and the reproductions' (HAMLET's claim tables), one function with
    /// two styles, each printing as its own copy did.
    #[test]
    fn p_values_print_in_the_reports_and_the_reproductions_styles() {
        let report: Vec<String> = [f64::NAN, 0.0, 5e-5, 0.012345, 0.5]
            .iter()
            .map(|&p| writers::fmt_p(p))
            .collect();
        assert_eq!(
            report,
            ["undefined", "< 1e-300", "5.00e-5", "0.0123", "0.5000"]
        );
        let tables: Vec<String> = [0.0, 5e-4, 0.012345, 0.5]
            .iter()
            .map(|&p| fmt_p_with(p, 1e-3, 1, 3))
            .collect();
        assert_eq!(tables, ["< 1e-300", "5.0e-4", "0.012", "0.500"]);
    }

    #[test]
    fn budget_captions_are_short_and_name_the_unit() {
        assert_eq!(
            budget_caption("0.041667", "task"),
            "budget 0.04167 × mean arm length"
        );
        assert_eq!(budget_caption("240", "seconds"), "budget 240 s");
        assert_eq!(budget_caption("0.6667", "seconds"), "budget 0.6667 s");
        assert_eq!(budget_caption("1", "task"), "budget 1 × mean arm length");
        assert_eq!(budget_caption("50", "pulls"), "budget 50 pulls");
        assert_eq!(short_number(1234.5678), "1235");
        assert_eq!(short_number(0.125), "0.125");
    }

    /// `ranking` as it was before it streamed: every cell read into memory.
    fn ranking_in_memory(dir: &Path) -> (Vec<crate::analysis::MeanRank>, Ranking) {
        use crate::analysis::{FoundNothing, UnitKind, compare::DEFAULT_TIE_TOLERANCE, unit_table};
        let res = read_results(dir).unwrap();
        let kind = UnitKind::most_independent(&res.runs);
        let table = unit_table(&res.runs, kind, FoundNothing::Worst, res.higher_is_better);
        let (ranks, _) =
            crate::analysis::mean_ranks(&table.rows, res.higher_is_better, DEFAULT_TIE_TOLERANCE);
        let (hit, all, share) = crate::results::exhausted_summary(&res.runs);
        let exhausted = (hit > 0).then(|| format!("{hit} {all} {:.1}", 100.0 * share));
        (ranks, Ranking { table, exhausted })
    }

    #[test]
    fn the_streamed_ranking_equals_the_ranking_of_every_cell_read_into_memory() {
        // Two budgets, one beyond the tiny traces' length (cells pull past their ends), and
        // three repetitions, on the tiny fixture's tasks; chunks of 2 rows for the stream.
        let dir = std::env::temp_dir().join(format!("banditbench-ranking-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny");
        let file = dir.join("e.toml");
        std::fs::write(
            &file,
            format!(
                "name = \"e\"\nseed = 7\ntraces = \"{}\"\nrepetitions = 3\n[world]\nkind = \"pull-count\"\nbudgets = [3, 40]\n[[policies]]\nfamily = \"ucb1\"\n[[policies]]\nfamily = \"random\"\n[[policies]]\nfamily = \"epsilon-greedy\"\nepsilon = [0.1, 0.5]\n",
                fixture.display()
            ),
        )
        .unwrap();
        let (exp, data) = crate::experiment::prepare(&file).unwrap();
        let out = dir.join("results");
        let opts = crate::experiment::RunOptions {
            out: Some(out.clone()),
            threads: Some(1),
            ..Default::default()
        };
        crate::experiment::run_experiment(&exp, &data, &opts, &crate::experiment::Silent).unwrap();
        let (want, w) = ranking_in_memory(&out);
        let (got, g) = ranking_by(&out, 2).unwrap();
        assert_eq!(
            format!("{:?}", ranking(&out).unwrap().0),
            format!("{got:?}")
        );
        assert!(want.len() == 4 && w.table.n_units >= 2);
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
        assert_eq!(g.table.rows, w.table.rows);
        assert_eq!(
            (
                g.table.kind,
                g.table.n_units,
                g.table.n_datasets,
                g.table.cells_per_score
            ),
            (
                w.table.kind,
                w.table.n_units,
                w.table.n_datasets,
                w.table.cells_per_score
            )
        );
        assert_eq!(g.table.found, w.table.found);
        let (ge, we) = (g.exhausted.unwrap(), w.exhausted.unwrap());
        // "hit of all cells ... share %" against "hit all share".
        let nums = |s: &str| -> Vec<String> {
            s.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .filter(|t| !t.is_empty() && t.chars().any(|c| c.is_ascii_digit()))
                .map(String::from)
                .take(3)
                .collect()
        };
        assert_eq!(nums(&ge), nums(&we));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn run(dataset: &str, budget: f64, policy: &str, score: f64) -> Run {
        Run {
            params: String::new(),
            ..Run::scored(dataset, 0, budget, 0, policy, score)
        }
    }

    #[test]
    fn mean_ranks_per_budget_rank_within_each_task_and_budget() {
        // Budget 10: "a" wins on both tasks. Budget 2: "a" wins on one, ties on the other.
        let runs = vec![
            run("d1", 10.0, "a", 0.9),
            run("d1", 10.0, "b", 0.8),
            run("d2", 10.0, "a", 0.7),
            run("d2", 10.0, "b", 0.6),
            run("d1", 2.0, "a", 0.5),
            run("d1", 2.0, "b", 0.4),
            run("d2", 2.0, "a", 0.3),
            run("d2", 2.0, "b", 0.3),
        ];
        let ids = vec!["a".to_string(), "b".to_string()];
        let t = mean_ranks_by_budget(&runs, &ids, true, UnitKind::TaskBudget);
        assert_eq!(t, vec![(2.0, vec![1.25, 1.75]), (10.0, vec![1.0, 2.0])]);
        // Lower is better flips them.
        let t = mean_ranks_by_budget(&runs, &ids, false, UnitKind::TaskBudget);
        assert_eq!(t[1], (10.0, vec![2.0, 1.0]));
    }
}
