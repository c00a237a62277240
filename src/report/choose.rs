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
    if let Some(rope) = c.options.bayes_rope {
        bayes_figure(&mut w, c, names, &order, rope, out, page)?;
    }
    mean_rank_figure(&mut w, c, names, &order, out, page)?;
    if let Some(lb) = &c.leaderboard {
        win_rate_figure(&mut w, c, names, lb, out, page)?;
    }
    cd_figures(&mut w, c, names, out, page)?;
    Ok(w)
}

/// The Bayesian bars' rows: each pair as "left vs right" with the left the policy of the better
/// mean rank, (label, P(left better), P(rope), P(right better)), in mean-rank order of the left
/// policy, then of the right.
fn bayes_rows(c: &Comparison, names: &Names, order: &[usize]) -> Vec<(String, f64, f64, f64)> {
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
    rows.into_iter().map(|r| (r.2, r.3, r.4, r.5)).collect()
}

/// The Bayesian signed-rank test's bars (Benavoli et al. 2017), one per pair.
fn bayes_figure(
    w: &mut Written,
    c: &Comparison,
    names: &Names,
    order: &[usize],
    rope: f64,
    out: &Path,
    page: &Page,
) -> Result<()> {
    let n = c.table.units.len();
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
        rows: bayes_rows(c, names, order),
    };
    w.add(
        save(&bb, out, "bayes_signed_rank", page)?,
        "bayes_signed_rank",
        format!("Bayesian signed-rank test per pair (Benavoli et al. 2017, rope ±{rope}): posterior probability that the left policy is better by more than the rope (blue), that the two are within the rope (grey), that the right one is better (vermillion)."),
    );
    Ok(())
}

/// Each policy's mean rank with its interval, best first, at most `MAX_ROWS` of them.
fn mean_rank_figure(
    w: &mut Written,
    c: &Comparison,
    names: &Names,
    order: &[usize],
    out: &Path,
    page: &Page,
) -> Result<()> {
    let n = c.table.units.len();
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
    Ok(())
}

/// The first `MAX_ROWS` (at most 30) policies in Bradley–Terry order, best first.
fn bradley_terry_order(lb: &crate::analysis::leaderboard::Leaderboard) -> Vec<usize> {
    let mut ord: Vec<usize> = (0..lb.bt_rating.len()).collect();
    ord.sort_by(|&a, &b| lb.bt_rating[b].total_cmp(&lb.bt_rating[a]));
    ord.truncate(MAX_ROWS.min(30));
    ord
}

/// The win-rate matrix of the leaderboard, rows and columns in Bradley–Terry order.
fn win_rate_figure(
    w: &mut Written,
    c: &Comparison,
    names: &Names,
    lb: &crate::analysis::leaderboard::Leaderboard,
    out: &Path,
    page: &Page,
) -> Result<()> {
    let n = c.table.units.len();
    let ord = bradley_terry_order(lb);
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
    Ok(())
}

/// The Nemenyi and Wilcoxon–Holm critical-difference diagrams, of at most `MAX_POLICIES`
/// policies.
fn cd_figures(
    w: &mut Written,
    c: &Comparison,
    names: &Names,
    out: &Path,
    page: &Page,
) -> Result<()> {
    let n = c.table.units.len();
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
    Ok(())
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

/// A family's settings: each member's parameters, those that vary between members, and the
/// fixed ones as " (k=v, …)".
struct Settings<'a> {
    members: &'a [String],
    params: Vec<&'a Vec<(String, String)>>,
    varying: Vec<&'a String>,
    fixed: String,
}

impl<'a> Settings<'a> {
    fn of(members: &'a [String], names: &'a Names) -> Settings<'a> {
        let params: Vec<&Vec<(String, String)>> = members
            .iter()
            .map(|m| names.params.get(m).expect("every member has params"))
            .collect();
        let keys: BTreeSet<&String> = params.iter().flat_map(|p| p.iter().map(|x| &x.0)).collect();
        let mut s = Settings {
            members,
            params,
            varying: Vec::new(),
            fixed: String::new(),
        };
        s.varying = keys
            .iter()
            .copied()
            .filter(|k| (1..members.len()).any(|i| s.value(i, k) != s.value(0, k)))
            .collect();
        let fixed: Vec<String> = keys
            .iter()
            .filter(|k| !s.varying.contains(k))
            .map(|k| format!("{}={}", super::labels::symbol(k), s.value(0, k)))
            .collect();
        if !fixed.is_empty() {
            s.fixed = format!(" ({})", fixed.join(", "));
        }
        s
    }

    /// Member `i`'s value of parameter `k` ("–" when it has none).
    fn value(&self, i: usize, k: &str) -> String {
        self.params[i]
            .iter()
            .find(|x| x.0 == k)
            .map_or("–".to_string(), |x| x.1.clone())
    }

    /// Member `i` named by its varying parameters (its id when none varies).
    fn own(&self, i: usize) -> String {
        if self.varying.is_empty() {
            return self.members[i].clone();
        }
        self.varying
            .iter()
            .map(|k| format!("{}={}", super::labels::symbol(k), self.value(i, k)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Per budget, the shares of units on which the first of two settings ranks better, they tie,
/// and the second ranks better.
fn pair_shares(per_budget: &[(String, Vec<Vec<f64>>)]) -> Vec<(String, f64, f64, f64)> {
    per_budget
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
        .collect()
}

/// The mean-rank map per budget over two varying parameters, when each takes at least two
/// values and no two members share a pair of values.
fn study_heat_map(
    family: &str,
    s: &Settings,
    per_budget: &[(String, Vec<Vec<f64>>)],
) -> Option<HeatMaps> {
    let [ky, kx] = s.varying[..] else {
        return None;
    };
    let k = s.members.len();
    let xs = sorted_values((0..k).map(|i| s.value(i, kx)).collect());
    let ys = sorted_values((0..k).map(|i| s.value(i, ky)).collect());
    let distinct: BTreeSet<(String, String)> =
        (0..k).map(|i| (s.value(i, kx), s.value(i, ky))).collect();
    if xs.len() < 2 || ys.len() < 2 || distinct.len() != k {
        return None;
    }
    let panels = per_budget
        .iter()
        .map(|(caption, ranks)| {
            let mut grid = vec![vec![f64::NAN; xs.len()]; ys.len()];
            for (i, r) in ranks.iter().enumerate() {
                let xi = xs
                    .iter()
                    .position(|v| *v == s.value(i, kx))
                    .expect("x value");
                let yi = ys
                    .iter()
                    .position(|v| *v == s.value(i, ky))
                    .expect("y value");
                grid[yi][xi] = r.iter().sum::<f64>() / r.len().max(1) as f64;
            }
            (caption.clone(), grid)
        })
        .collect();
    Some(HeatMaps {
        title: format!(
            "Parameter study: {family}, mean rank among its {k} settings{}",
            s.fixed
        ),
        x_name: super::labels::symbol(kx),
        y_name: super::labels::symbol(ky),
        x_values: xs,
        y_values: ys,
        panels,
        scale: Scale::MeanRank { k },
    })
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
    let s = Settings::of(members, names);
    let fixed = &s.fixed;
    let name = format!("param_study_{family}");
    if members.len() == 2 {
        let fig = BayesBars {
            title: format!("Parameter study: {family}{fixed}"),
            x_desc: "share of units".into(),
            parts: [
                format!("{} better", s.own(0)),
                "tie".into(),
                format!("{} better", s.own(1)),
            ],
            rows: pair_shares(&per_budget),
        };
        w.add(
            save(&fig, out, &name, page)?,
            &name,
            format!("Parameter study of {family}: the share of units on which each of its two settings ranks better, per budget."),
        );
        return Ok(());
    }
    if let Some(fig) = study_heat_map(family, &s, &per_budget) {
        let (kx, ky) = (s.varying[1], s.varying[0]);
        w.add(
            save(&fig, out, &name, page)?,
            &name,
            format!("Parameter study of {family}: mean rank within the family over {kx} × {ky}, one map per budget."),
        );
        return Ok(());
    }
    let bp = BoxPanels {
        title: format!(
            "Parameter study: {family}, ranks among its {} settings{fixed}",
            members.len()
        ),
        x_desc: "rank within the family (1 = best)".into(),
        labels: (0..members.len()).map(|i| s.own(i)).collect(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::Options;

    fn names(params: &[(&str, &[(&str, &str)])]) -> Names {
        Names {
            label: params
                .iter()
                .map(|(id, _)| (id.to_string(), id.to_string()))
                .collect(),
            family: BTreeMap::new(),
            params: params
                .iter()
                .map(|(id, p)| {
                    let p = p.iter().map(|(k, v)| (k.to_string(), v.to_string()));
                    (id.to_string(), p.collect())
                })
                .collect(),
        }
    }

    #[test]
    fn settings_name_members_by_what_varies_and_caption_what_is_fixed() {
        let n = names(&[
            ("a", &[("eta", "3"), ("c", "1"), ("min", "1")]),
            ("b", &[("eta", "3"), ("c", "2"), ("min", "2")]),
            ("d", &[("eta", "3"), ("c", "4")]),
        ]);
        let members: Vec<String> = ["a", "b", "d"].iter().map(|s| s.to_string()).collect();
        let s = Settings::of(&members, &n);
        assert_eq!(s.varying, ["c", "min"]);
        assert_eq!(
            s.fixed,
            format!(" ({}=3)", super::super::labels::symbol("eta"))
        );
        assert_eq!(s.value(2, "min"), "–");
        let c = super::super::labels::symbol("c");
        assert!(s.own(1).starts_with(&format!("{c}=2, ")), "{}", s.own(1));
        // No value repeats across (c, min) pairs, each takes at least two values: a heat map.
        let per_budget = vec![(
            "10".to_string(),
            vec![vec![1.0, 2.0], vec![2.0, 1.0], vec![3.0, 3.0]],
        )];
        let map = study_heat_map("f", &s, &per_budget).expect("a heat map");
        assert_eq!((map.x_values.len(), map.y_values.len()), (3, 3));
        // Member d (c=4, min=–) has mean rank 3 at its cell.
        let (xi, yi) = (
            map.x_values.iter().position(|v| v == "–").unwrap(),
            map.y_values.iter().position(|v| v == "4").unwrap(),
        );
        assert_eq!(map.panels[0].1[yi][xi], 3.0);
        // One varying parameter: no heat map.
        let one = names(&[
            ("a", &[("c", "1")]),
            ("b", &[("c", "2")]),
            ("d", &[("c", "3")]),
        ]);
        assert!(study_heat_map("f", &Settings::of(&members, &one), &per_budget).is_none());
    }

    #[test]
    fn pair_shares_count_units_where_each_setting_ranks_better() {
        let per_budget = vec![(
            "5".to_string(),
            vec![vec![1.0, 1.5, 2.0, 1.0], vec![2.0, 1.5, 1.0, 2.0]],
        )];
        assert_eq!(
            pair_shares(&per_budget),
            [("5".to_string(), 0.5, 0.25, 0.25)]
        );
    }

    #[test]
    fn bayes_bars_put_the_better_ranked_policy_left_in_mean_rank_order() {
        // c beats b beats a on every unit.
        let units: Vec<String> = (0..8).map(|u| u.to_string()).collect();
        let table = ScoreTable {
            units,
            policies: vec!["a".into(), "b".into(), "c".into()],
            scores: (0..8)
                .map(|u| vec![0.1 + 0.01 * u as f64, 0.5, 0.9 - 0.001 * u as f64])
                .collect(),
            higher_is_better: true,
        };
        let opts = Options {
            bayes_rope: Some(0.01),
            bayes_samples: 2_000,
            ..Options::default()
        };
        let c = compare(table, &opts);
        let n = names(&[("a", &[]), ("b", &[]), ("c", &[])]);
        let rows = bayes_rows(&c, &n, &c.order());
        let labels: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(labels, ["c vs b", "c vs a", "b vs a"]);
        assert!(rows.iter().all(|r| r.1 > 0.9), "{rows:?}");
    }
}
