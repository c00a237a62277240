//! The one place that decides which figures a report gets, and how each is set up from the
//! analysis: every comparison gets mean ranks, two critical-difference diagrams and (with a rope)
//! the Bayesian bars; results folders add rank box plots per budget, parameter studies (box
//! plots, a heat map for two varying parameters, win/tie/loss bars for two settings), the budget
//! allocation, and anytime curves.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::figures::{
    Allocation, Anytime, BayesBars, BoxPanels, CdDiagram, HeatMaps, MeanRankFigure, Page, Scale,
    cd::MAX_POLICIES, save, style::fmt_number,
};
use super::labels::PolicyName;
use super::writers::ci_name;
use crate::analysis::budgets::{AnytimeCurves, pull_shares, sort_budgets};
use crate::analysis::compare::{Comparison, ScoreTable, compare};

/// Written figures: files, and (name, caption) for the documents.
#[derive(Default)]
pub(crate) struct Written {
    pub files: Vec<PathBuf>,
    pub figures: Vec<(String, String)>,
}

impl Written {
    pub(crate) fn add(&mut self, files: Vec<PathBuf>, name: &str, caption: String) {
        self.files.extend(files);
        self.figures.push((name.to_string(), caption));
    }
}

/// What every figure needs to know about the policies: their short labels and families.
pub(crate) struct Names {
    pub label: BTreeMap<String, String>,
    pub family: BTreeMap<String, String>,
    pub params: BTreeMap<String, Vec<(String, String)>>,
}

impl Names {
    pub fn new(policies: &[PolicyName], map: &BTreeMap<String, String>) -> Names {
        let labels = super::labels::short_labels(policies, map);
        Names {
            label: policies.iter().map(|p| p.id.clone()).zip(labels).collect(),
            family: policies
                .iter()
                .map(|p| (p.id.clone(), p.family.clone()))
                .collect(),
            params: policies
                .iter()
                .map(|p| (p.id.clone(), p.params.clone()))
                .collect(),
        }
    }

    pub fn of(&self, id: &str) -> String {
        self.label
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// (id, label) in id order, for `labels.csv`.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.label
            .iter()
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect()
    }
}

/// The policies a CD diagram shows: all of them up to `MAX_POLICIES`; beyond that each family's
/// best setting by mean rank, or the best `MAX_POLICIES` by mean rank when there are more
/// families than that. Returns the policy indices (best first) and a note saying what was done.
fn cd_selection(c: &Comparison, names: &Names) -> (Vec<usize>, Option<String>) {
    let order = c.order();
    if order.len() <= MAX_POLICIES {
        return (order, None);
    }
    let mut seen = BTreeSet::new();
    let best: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| {
            let p = &c.table.policies[i];
            seen.insert(names.family.get(p).cloned().unwrap_or_else(|| p.clone()))
        })
        .collect();
    if best.len() <= MAX_POLICIES && best.len() < order.len() {
        let note = format!(
            "{} policies are too many for a readable diagram: it shows each of the {} families' best setting by mean rank on these same units (a selection on the tested units, so the groups are optimistic; the full ranking is in the tables)",
            order.len(),
            best.len()
        );
        (best, Some(note))
    } else {
        let note = format!(
            "{} policies in {} families are too many for a readable diagram: it shows the {MAX_POLICIES} with the best mean ranks (a selection on the tested units; the full ranking is in the tables)",
            order.len(),
            best.len()
        );
        (order.into_iter().take(MAX_POLICIES).collect(), Some(note))
    }
}

/// The comparison restricted to some policies (for a diagram; the Bayesian test is not rerun).
fn restricted(c: &Comparison, keep: &[usize]) -> Comparison {
    let table = ScoreTable {
        units: c.table.units.clone(),
        policies: keep.iter().map(|&i| c.table.policies[i].clone()).collect(),
        scores: c
            .table
            .scores
            .iter()
            .map(|row| keep.iter().map(|&i| row[i]).collect())
            .collect(),
        higher_is_better: c.table.higher_is_better,
    };
    let mut opts = c.options.clone();
    opts.bayes_rope = None;
    // The diagram's bars need every pair of the few policies it shows.
    opts.pairs = crate::analysis::compare::Pairs::All;
    // Nor does the diagram use a leaderboard: the full comparison's is drawn (it took 35 % of a
    // 100-policy report when this one computed its own).
    opts.leaderboard = crate::analysis::compare::Toggle::Off;
    compare(table, &opts)
}

/// Mean ranks, the Nemenyi and Wilcoxon–Holm CD diagrams, and the Bayesian bars.
pub(crate) fn comparison_figures(
    c: &Comparison,
    names: &Names,
    out: &Path,
    page: &Page,
) -> Result<Written> {
    let mut w = Written::default();
    let order = c.order();
    let n = c.table.units.len();
    if let Some(rope) = c.options.bayes_rope {
        // Pairs in mean-rank order of their first policy, then of the second.
        let pos: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(r, &i)| (c.table.policies[i].as_str(), r))
            .collect();
        let mut rows: Vec<(usize, usize, String, f64, f64, f64)> = c
            .bayesian
            .iter()
            .map(|p| {
                let (l, r) = (p.result.p_left, p.result.p_right);
                let (a, b, pl, pr) = if pos[p.a.as_str()] <= pos[p.b.as_str()] {
                    (&p.a, &p.b, l, r)
                } else {
                    (&p.b, &p.a, r, l)
                };
                let label = format!("{} vs {}", names.of(a), names.of(b));
                (
                    pos[a.as_str()],
                    pos[b.as_str()],
                    label,
                    pl,
                    p.result.p_rope,
                    pr,
                )
            })
            .collect();
        rows.sort_by_key(|r| (r.0, r.1));
        let bb = BayesBars {
            title: format!(
                "Bayesian signed-rank test, rope ±{rope} ({n} units, {} samples)",
                c.options.bayes_samples
            ),
            x_desc: "posterior probability".into(),
            parts: [
                "left better".into(),
                "within the rope".into(),
                "right better".into(),
            ],
            rows: rows.into_iter().map(|r| (r.2, r.3, r.4, r.5)).collect(),
        };
        w.add(
            save(&bb, out, "bayes_signed_rank", page)?,
            "bayes_signed_rank",
            format!("Bayesian signed-rank test per pair (Benavoli et al. 2017, rope ±{rope}): posterior probability that the left policy is better by more than the rope (blue), that the two are within the rope (grey), that the right one is better (vermillion)."),
        );
    }
    let mr = MeanRankFigure {
        title: format!(
            "Mean rank over {n} units, {}",
            ci_name(c.options.ci, c.options.alpha)
        ),
        rows: order
            .iter()
            .take(MAX_ROWS)
            .map(|&i| {
                let s = &c.summary[i];
                (names.of(&s.policy), s.mean_rank, s.ci_low, s.ci_high)
            })
            .collect(),
        x_desc: "mean rank (1 = best)".into(),
    };
    w.add(
        save(&mr, out, "mean_rank", page)?,
        "mean_rank",
        format!(
            "Mean rank per policy over {n} units with its {}.{}",
            ci_name(c.options.ci, c.options.alpha),
            rows_note(order.len())
        ),
    );
    if let Some(lb) = &c.leaderboard {
        // Rows and columns in Bradley–Terry order, best first.
        let mut ord: Vec<usize> = (0..c.table.policies.len()).collect();
        ord.sort_by(|&a, &b| lb.bt_rating[b].total_cmp(&lb.bt_rating[a]));
        ord.truncate(MAX_ROWS.min(30));
        // Rows named and numbered; columns by number, so that the matrix stays square.
        let fig = HeatMaps {
            title: format!("Win rate over {n} units (row against column)"),
            x_name: "opponent (numbered as the rows)".into(),
            y_name: "policy".into(),
            x_values: (1..=ord.len()).map(|r| r.to_string()).collect(),
            // The heat map draws its first row at the top.
            y_values: ord
                .iter()
                .enumerate()
                .map(|(r, &i)| format!("{}. {}", r + 1, names.of(&c.table.policies[i])))
                .collect(),
            panels: vec![(
                String::new(),
                ord.iter()
                    .map(|&a| ord.iter().map(|&b| lb.win_rate[a][b]).collect())
                    .collect(),
            )],
            scale: Scale::Share {
                name: "win rate".into(),
            },
        };
        let k = c.table.policies.len();
        w.add(
            save(&fig, out, "win_rate", page)?,
            "win_rate",
            format!(
                "Win rate of each policy (row) against each other (column): the share of the {n} units on which it scores better, draws counting half; rows by Bradley–Terry rating.{}",
                if k > ord.len() {
                    format!(" The best {} of the {k} policies are drawn; tests.json lists every pair.", ord.len())
                } else {
                    String::new()
                }
            ),
        );
    }
    let (keep, note) = cd_selection(c, names);
    // The Wilcoxon–Holm diagram needs every pair of the policies it shows: when `--pairs` asked
    // for fewer, they are tested here (and the caption says the family differs).
    let k_all = c.table.policies.len();
    let every_pair = c.wilcoxon.len() == k_all * k_all.saturating_sub(1) / 2;
    let sub;
    let cc = if note.is_some() || !every_pair {
        sub = restricted(c, &keep);
        &sub
    } else {
        c
    };
    let family_note = if every_pair {
        String::new()
    } else {
        format!(
            " Holm's correction here runs over the {} pairs of the policies shown, not over the pairwise tests of tests.json (--pairs {}).",
            keep.len() * keep.len().saturating_sub(1) / 2,
            c.options.pairs.as_string()
        )
    };
    let rows: Vec<(String, f64)> = cc
        .order()
        .iter()
        .map(|&i| (names.of(&cc.summary[i].policy), cc.summary[i].mean_rank))
        .collect();
    let k = cc.table.policies.len();
    let suffix = note.map(|s| format!(" {s}.")).unwrap_or_default();
    let cd = CdDiagram {
        title: format!(
            "Nemenyi critical difference (α = {}, CD = {:.2}, n = {n})",
            cc.options.alpha, cc.nemenyi.cd
        ),
        rows: rows.clone(),
        k,
        groups: cc.nemenyi_groups(),
        cd: Some(cc.nemenyi.cd),
    };
    w.add(
        save(&cd, out, "cd_nemenyi", page)?,
        "cd_nemenyi",
        format!("Critical-difference diagram: bars join policies within the Nemenyi critical difference.{suffix}"),
    );
    let wh = CdDiagram {
        title: format!(
            "Wilcoxon signed-rank with Holm correction (α = {}, {} zeros)",
            cc.options.alpha,
            cc.options.zero_method.as_str()
        ),
        rows,
        k,
        groups: cc.wilcoxon_groups(),
        cd: None,
    };
    w.add(
        save(&wh, out, "cd_wilcoxon_holm", page)?,
        "cd_wilcoxon_holm",
        format!("Bars join policies of which no pair is significantly different by Wilcoxon–Holm.{suffix}{family_note}"),
    );
    Ok(w)
}

/// Policies a figure with a row per policy (mean ranks, rank box plots) shows: past this the
/// rows are too thin to read (and 1 000 of them made a 46 000-pixel-tall PNG, most of a report's
/// time); the best `MAX_ROWS` by mean rank are drawn, and the caption says so. The tables list
/// every policy.
pub(crate) const MAX_ROWS: usize = 60;

/// A caption's note when `k` rows are cut to `MAX_ROWS`.
fn rows_note(k: usize) -> String {
    if k > MAX_ROWS {
        format!(
            " The best {MAX_ROWS} of the {k} policies by mean rank are drawn; summary.csv lists all."
        )
    } else {
        String::new()
    }
}

/// Rank box plots, one panel per budget; rows in mean-rank order (best first), at most
/// `MAX_ROWS` of them.
pub(crate) fn rank_boxplots(
    w: &mut Written,
    mut per_budget: Vec<(String, Vec<Vec<f64>>)>,
    mut labels: Vec<String>,
    unit: &str,
    out: &Path,
    page: &Page,
) -> Result<()> {
    let k = labels.len();
    labels.truncate(MAX_ROWS);
    for (_, rows) in &mut per_budget {
        rows.truncate(MAX_ROWS);
    }
    // Cut to the best rows, the axis ends at the worst rank they reach.
    let last = if k > MAX_ROWS {
        per_budget
            .iter()
            .flat_map(|(_, rows)| rows.iter().flatten())
            .fold(1.0f64, |m, &r| if r.is_finite() { m.max(r) } else { m })
            .ceil()
            .min(k as f64)
    } else {
        k as f64
    };
    let bp = BoxPanels {
        title: format!("Ranks per {unit} unit, one panel per budget"),
        x_desc: "rank (1 = best)".into(),
        labels,
        panels: per_budget,
        x_range: (0.5, last + 0.5),
    };
    w.add(
        save(&bp, out, "rank_boxplots", page)?,
        "rank_boxplots",
        format!(
            "Rank distributions per {unit} unit and budget.{}",
            rows_note(k)
        ),
    );
    Ok(())
}

/// Sort parameter values numerically when they all are numbers, else as text.
fn sorted_values(values: BTreeSet<String>) -> Vec<String> {
    let mut v: Vec<String> = values.into_iter().collect();
    if v.iter()
        .all(|s| s.replace('\u{2212}', "-").parse::<f64>().is_ok())
    {
        v.sort_by(|a, b| {
            let f = |s: &str| s.replace('\u{2212}', "-").parse::<f64>().unwrap_or(0.0);
            f(a).total_cmp(&f(b))
        });
    }
    v
}

/// One family's parameter study from its members' ranks within the family per budget:
/// win/tie/loss bars for two settings, a heat map per budget for two varying parameters, rank
/// box plots otherwise.
pub(crate) fn parameter_study(
    w: &mut Written,
    family: &str,
    members: &[String],
    per_budget: Vec<(String, Vec<Vec<f64>>)>,
    names: &Names,
    out: &Path,
    page: &Page,
) -> Result<()> {
    let params: Vec<&Vec<(String, String)>> = members
        .iter()
        .map(|m| names.params.get(m).expect("every member has params"))
        .collect();
    let keys: BTreeSet<&String> = params.iter().flat_map(|p| p.iter().map(|x| &x.0)).collect();
    let value = |i: usize, k: &str| -> String {
        params[i]
            .iter()
            .find(|x| x.0 == k)
            .map_or("–".to_string(), |x| x.1.clone())
    };
    let varying: Vec<&String> = keys
        .iter()
        .copied()
        .filter(|k| (1..members.len()).any(|i| value(i, k) != value(0, k)))
        .collect();
    let fixed: Vec<String> = keys
        .iter()
        .filter(|k| !varying.contains(k))
        .map(|k| format!("{}={}", super::labels::symbol(k), value(0, k)))
        .collect();
    let fixed = if fixed.is_empty() {
        String::new()
    } else {
        format!(" ({})", fixed.join(", "))
    };
    let own = |i: usize| -> String {
        if varying.is_empty() {
            return members[i].clone();
        }
        varying
            .iter()
            .map(|k| format!("{}={}", super::labels::symbol(k), value(i, k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let name = format!("param_study_{family}");
    if members.len() == 2 {
        let rows = per_budget
            .iter()
            .map(|(caption, ranks)| {
                let n = ranks[0].len().max(1) as f64;
                let (mut a, mut t, mut b) = (0.0, 0.0, 0.0);
                for (ra, rb) in ranks[0].iter().zip(&ranks[1]) {
                    if ra < rb {
                        a += 1.0
                    } else if ra > rb {
                        b += 1.0
                    } else {
                        t += 1.0
                    }
                }
                (caption.clone(), a / n, t / n, b / n)
            })
            .collect();
        let fig = BayesBars {
            title: format!("Parameter study: {family}{fixed}"),
            x_desc: "share of units".into(),
            parts: [
                format!("{} better", own(0)),
                "tie".into(),
                format!("{} better", own(1)),
            ],
            rows,
        };
        w.add(
            save(&fig, out, &name, page)?,
            &name,
            format!("Parameter study of {family}: the share of units on which each of its two settings ranks better, per budget."),
        );
        return Ok(());
    }
    if varying.len() == 2 {
        let (kx, ky) = (varying[1], varying[0]);
        let xs = sorted_values((0..members.len()).map(|i| value(i, kx)).collect());
        let ys = sorted_values((0..members.len()).map(|i| value(i, ky)).collect());
        let distinct: BTreeSet<(String, String)> = (0..members.len())
            .map(|i| (value(i, kx), value(i, ky)))
            .collect();
        if xs.len() >= 2 && ys.len() >= 2 && distinct.len() == members.len() {
            let panels = per_budget
                .iter()
                .map(|(caption, ranks)| {
                    let mut grid = vec![vec![f64::NAN; xs.len()]; ys.len()];
                    for (i, r) in ranks.iter().enumerate() {
                        let xi = xs.iter().position(|v| *v == value(i, kx)).expect("x value");
                        let yi = ys.iter().position(|v| *v == value(i, ky)).expect("y value");
                        grid[yi][xi] = r.iter().sum::<f64>() / r.len().max(1) as f64;
                    }
                    (caption.clone(), grid)
                })
                .collect();
            let sym = |k: &str| super::labels::symbol(k);
            let fig = HeatMaps {
                title: format!(
                    "Parameter study: {family}, mean rank among its {} settings{fixed}",
                    members.len()
                ),
                x_name: sym(kx),
                y_name: sym(ky),
                x_values: xs,
                y_values: ys,
                panels,
                scale: Scale::MeanRank { k: members.len() },
            };
            w.add(
                save(&fig, out, &name, page)?,
                &name,
                format!("Parameter study of {family}: mean rank within the family over {kx} × {ky}, one map per budget."),
            );
            return Ok(());
        }
    }
    let bp = BoxPanels {
        title: format!(
            "Parameter study: {family}, ranks among its {} settings{fixed}",
            members.len()
        ),
        x_desc: "rank within the family (1 = best)".into(),
        labels: (0..members.len()).map(own).collect(),
        panels: per_budget,
        x_range: (0.5, members.len() as f64 + 0.5),
    };
    w.add(
        save(&bp, out, &name, page)?,
        &name,
        format!(
            "Parameter study of {family}: the ranks of its settings within the family, per budget."
        ),
    );
    Ok(())
}

/// The share of pulls each policy gave each learner.
pub(crate) fn allocation(
    w: &mut Written,
    runs: &[crate::results::Run],
    policies: &[String],
    names: &Names,
    out: &Path,
    page: &Page,
) -> Result<()> {
    let (learners, shares) = pull_shares(runs, policies);
    // Cells that each train one learner only (per-learner pools) allocate nothing between
    // learners: the figure would show the tasks' mix, not the policies' choices.
    let one_learner = runs
        .iter()
        .all(|r| r.pulls.iter().filter(|p| p.1 > 0.0).count() <= 1);
    if learners.is_empty() || one_learner {
        return Ok(());
    }
    let al = Allocation {
        title: "Share of pulls each policy gave each learner (mean over cells)".into(),
        policies: policies.iter().map(|p| names.of(p)).collect(),
        learners,
        shares,
    };
    let (_, rest) = al.grouping();
    let grouped = if rest.is_empty() {
        String::new()
    } else {
        format!(
            " Learners sorted by overall share; {} learner(s) below {} % for every policy, or past the first {}, are grouped as \"other\" (all are in the CSV).",
            rest.len(),
            fmt_number(100.0 * super::figures::allocation::MIN_SHARE),
            super::figures::allocation::MAX_SHOWN
        )
    };
    w.add(
        save(&al, out, "allocation", page)?,
        "allocation",
        format!("Budget allocation: share of pulls per learner.{grouped}"),
    );
    Ok(())
}

/// Anytime rank and regret curves.
pub(crate) fn anytime(
    w: &mut Written,
    curves: AnytimeCurves,
    names: &Names,
    out: &Path,
    page: &Page,
    regret: super::Regret,
    x_desc: &str,
) -> Result<()> {
    let k = curves.rank.len();
    let relabel = |v: Vec<(String, Vec<f64>, Vec<f64>)>| {
        v.into_iter()
            .map(|(p, m, h)| (names.of(&p), m, h))
            .collect::<Vec<_>>()
    };
    let fig = Anytime {
        title: format!("Anytime performance over {} datasets", curves.units),
        grid: curves.grid,
        rank: relabel(curves.rank),
        regret: relabel(curves.regret),
        k,
        x_desc: x_desc.to_string(),
        regret_desc: match regret {
            super::Regret::Hypervolume => "hypervolume regret",
            _ => "normalised regret",
        }
        .to_string(),
    };
    w.add(
        save(&fig, out, "anytime", page)?,
        "anytime",
        format!(
            "Anytime performance: mean rank and mean {} against the {x_desc}; ranks and regrets are computed per (task, budget), averaged per dataset, with ±95 % t bands over the {} datasets. {}.",
            match regret {
                super::Regret::Hypervolume => "hypervolume regret",
                _ => "normalised regret",
            },
            curves.units,
            match regret {
                super::Regret::Hypervolume => "Hypervolume regret is 1 − HV/HV* of each cell's archive, HV* the task's true front's against the reference point the lock file names, so curves do not depend on which policies are compared",
                super::Regret::Compared => "Regret is (b − v)/(b − w) with b and w the best and worst of the compared policies' mean scores in the unit, so adding or removing a policy changes every curve (--regret trace normalises by the traces instead)",
                super::Regret::Trace => "Regret is (b − v)/(b − w) with b and w the best and worst validation score recorded in the unit's traces, so curves do not depend on which policies are compared",
            }
        ),
    );
    Ok(())
}

/// Budget panels sorted by budget, captioned.
pub(crate) fn captioned(
    m: BTreeMap<String, Vec<Vec<f64>>>,
    budget_unit: &str,
) -> Vec<(String, Vec<Vec<f64>>)> {
    sort_budgets(m)
        .into_iter()
        .map(|(b, v)| (budget_caption(&b, budget_unit), v))
        .collect()
}

/// A panel caption for a budget: at most four significant digits, and the unit spelt out
/// ("budget 0.04167 × mean arm length" rather than "budget 0.041667 task").
pub(crate) fn budget_caption(budget: &str, unit: &str) -> String {
    let b = budget
        .parse::<f64>()
        .map(fmt_number)
        .unwrap_or_else(|_| budget.to_string());
    match unit {
        "task" => format!("budget {b} × mean arm length"),
        "seconds" => format!("budget {b} s"),
        "" => format!("budget {b}"),
        u => format!("budget {b} {u}"),
    }
}
