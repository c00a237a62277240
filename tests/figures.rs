//! Layout of every figure kind at one-column and two-column widths: no two text boxes overlap,
//! no text leaves the figure, no font is smaller than 7 pt. Text boxes are measured with the font
//! that renders them (rustybuzz on DejaVu Sans), from the SVG plotters draws.

use banditbench::report::figures::{
    Allocation, Anytime, BayesBars, BoxPanels, COLUMN_IN, CdDiagram, Figure, HeatMaps, Lines,
    MeanRankFigure, PAGE_IN, Page, Panel, Region, Scale, Series, UNITS_PER_PT, outside,
    overlapping, render, text_boxes,
};

fn pages() -> Vec<Page> {
    [COLUMN_IN, PAGE_IN]
        .into_iter()
        .flat_map(|w| {
            [true, false].map(|titles| Page {
                width_in: w,
                titles,
            })
        })
        .collect()
}

/// Render `fig` at every page and check its text layout.
fn check(name: &str, fig: &impl Figure) {
    for page in pages() {
        let svg = render(fig, &page).unwrap();
        let boxes = text_boxes(&svg);
        assert!(!boxes.is_empty(), "{name}: no text found");
        let (w, h) = (page.width() as f64, fig.height(&page) as f64);
        let over = overlapping(&boxes);
        assert!(
            over.is_empty(),
            "{name} at {} in (titles {}): {} overlapping text pairs, e.g. {:?}",
            page.width_in,
            page.titles,
            over.len(),
            over.first()
        );
        let out = outside(&boxes, w, h);
        assert!(
            out.is_empty(),
            "{name} at {} in: text outside the {w}x{h} figure: {:?}",
            page.width_in,
            out.first()
        );
        let small: Vec<_> = boxes.iter().filter(|b| b.size_pt < 6.99).collect();
        assert!(
            small.is_empty(),
            "{name}: text under 7 pt: {:?}",
            small.first()
        );
        // The root states the physical size.
        let pts = format!("width=\"{}pt\"", w / UNITS_PER_PT);
        assert!(svg.contains(&pts), "{name}: {pts}");
    }
}

/// Realistic long policy labels (HAMLET-like families).
fn labels(k: usize) -> Vec<String> {
    (0..k)
        .map(|i| match i % 4 {
            0 => format!("hamlet-ucb(ρ={}, bonus=standard)", 0.01 * (i + 1) as f64),
            1 => format!("bestk-velocity(k={i})"),
            2 => format!("epsilon-greedy(ε={})", 0.05 * i as f64),
            _ => format!("ucb1-btb-{i}"),
        })
        .collect()
}

#[test]
fn mean_rank_intervals_and_labels_fit() {
    for k in [3, 11, 24] {
        let rows = labels(k)
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let m = 1.0 + i as f64 * 0.4;
                (l, m, m - 0.3, m + 0.35)
            })
            .collect();
        check(
            "mean_rank",
            &MeanRankFigure {
                title: "Mean rank over 88 units, 95 % t interval".into(),
                rows,
                x_desc: "mean rank (1 = best)".into(),
            },
        );
    }
}

#[test]
fn cd_diagrams_are_readable_up_to_twenty_policies() {
    for k in [2, 5, 11, 20] {
        let rows: Vec<(String, f64)> = labels(k)
            .into_iter()
            .enumerate()
            .map(|(i, l)| (l, 1.0 + (k as f64 - 1.0) * i as f64 / k as f64))
            .collect();
        let groups = (0..k.saturating_sub(2))
            .step_by(3)
            .map(|i| (i, i + 2))
            .collect();
        check(
            "cd",
            &CdDiagram {
                title: "Nemenyi critical difference (α = 0.05, CD = 1.61, n = 88)".into(),
                rows,
                k,
                groups,
                cd: Some(1.61),
            },
        );
    }
}

#[test]
fn box_plots_with_budget_panels_fit() {
    for (k, budgets) in [(4, 1), (11, 3), (11, 7)] {
        let panels = (0..budgets)
            .map(|b| {
                (
                    format!("budget {} × mean arm length", 0.05 * (b + 1) as f64),
                    (0..k)
                        .map(|i| {
                            (0..30)
                                .map(|u| 1.0 + ((i * 7 + u * 3 + b) % k) as f64)
                                .collect()
                        })
                        .collect(),
                )
            })
            .collect();
        check(
            "boxplots",
            &BoxPanels {
                title: "Ranks per dataset unit, one panel per budget".into(),
                x_desc: "rank within the family (1 = best)".into(),
                labels: labels(k),
                panels,
                x_range: (0.5, k as f64 + 0.5),
            },
        );
    }
}

#[test]
fn stacked_bars_fit() {
    let rows = (0..6)
        .map(|i| {
            (
                format!("{} vs {}", labels(6)[i], labels(6)[(i + 1) % 6]),
                0.2,
                0.5,
                0.3,
            )
        })
        .collect();
    check(
        "bayes",
        &BayesBars {
            title: "Bayesian signed-rank test, rope ±0.01 (88 units, 50000 samples)".into(),
            x_desc: "posterior probability".into(),
            parts: [
                "left better".into(),
                "within the rope".into(),
                "right better".into(),
            ],
            rows,
        },
    );
}

#[test]
fn heat_maps_fit() {
    let xs: Vec<String> = ["0.01", "0.05", "0.1", "0.2", "0.5"]
        .map(String::from)
        .to_vec();
    let ys: Vec<String> = ["0.1", "0.3", "0.5", "0.9"].map(String::from).to_vec();
    let grid: Vec<Vec<f64>> = (0..ys.len())
        .map(|y| {
            (0..xs.len())
                .map(|x| 1.0 + ((x * 3 + y * 5) % 20) as f64)
                .collect()
        })
        .collect();
    for budgets in [1, 3, 7] {
        check(
            "heatmap",
            &HeatMaps {
                title: "Parameter study: hamlet (start=none), mean rank among its 20 settings"
                    .into(),
                x_name: "ε1".into(),
                y_name: "ε2".into(),
                x_values: xs.clone(),
                y_values: ys.clone(),
                panels: (0..budgets)
                    .map(|b| (format!("budget {}", 100 * (b + 1)), grid.clone()))
                    .collect(),
                scale: Scale::MeanRank { k: 20 },
            },
        );
    }
    // The win-rate matrix: rows named by policies, one of them far longer than a page (its
    // label is shortened, as every figure's row labels are).
    for n in [2, 6] {
        let mut rows = labels(n);
        rows.push("p".repeat(400));
        let k = rows.len();
        check(
            "heatmap-win-rate",
            &HeatMaps {
                title: "Win rate over 20 units (row against column)".into(),
                x_name: "opponent (numbered as the rows)".into(),
                y_name: "policy".into(),
                x_values: (1..=k).map(|r| r.to_string()).collect(),
                y_values: rows
                    .iter()
                    .enumerate()
                    .map(|(r, l)| format!("{}. {l}", r + 1))
                    .collect(),
                panels: vec![(
                    String::new(),
                    (0..k)
                        .map(|a| {
                            (0..k)
                                .map(|b| if a == b { f64::NAN } else { 0.5 })
                                .collect()
                        })
                        .collect(),
                )],
                scale: Scale::Share {
                    name: "win rate".into(),
                },
            },
        );
    }
}

#[test]
fn allocation_with_twenty_learners_fits() {
    let learners: Vec<String> = (0..20)
        .map(|i| format!("SomeLongLearnerName{i}Classifier"))
        .collect();
    let shares = (0..11)
        .map(|p| {
            let raw: Vec<f64> = (0..20)
                .map(|l| 1.0 / (1.0 + ((l + p) % 20) as f64))
                .collect();
            let s: f64 = raw.iter().sum();
            raw.into_iter().map(|x| x / s).collect()
        })
        .collect();
    let fig = Allocation {
        title: "Share of pulls each policy gave each learner (mean over cells)".into(),
        policies: labels(11),
        learners,
        shares,
    };
    let (shown, rest) = fig.grouping();
    assert_eq!(
        shown.len(),
        7,
        "at most seven learners get their own colour"
    );
    assert_eq!(shown.len() + rest.len(), 20);
    check("allocation", &fig);
}

#[test]
fn anytime_curves_fit() {
    let grid: Vec<f64> = (0..=50).map(|j| j as f64 / 50.0).collect();
    let series = |k: usize, hi: f64| {
        labels(k)
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                (
                    l,
                    grid.iter()
                        .map(|t| hi * (1.0 - t) * (i + 1) as f64 / k as f64 + 1.0)
                        .collect(),
                    grid.iter().map(|_| 0.1).collect(),
                )
            })
            .collect::<Vec<_>>()
    };
    for k in [3, 11, 20] {
        check(
            "anytime",
            &Anytime {
                title: "Anytime performance over 1320 (task, budget) units".into(),
                grid: grid.clone(),
                rank: series(k, k as f64 - 1.0),
                regret: series(k, 0.0),
                k,
                x_desc: "fraction of the simulated wall-clock budget".into(),
                regret_desc: "normalised regret".into(),
            },
        );
    }
}

#[test]
fn line_panels_with_a_log_axis_fit() {
    let panel = |log_x: bool, tag: &str| Panel {
        caption: format!("({tag}) θ (γ = 20, β = 0.85)"),
        x_desc: "θ".into(),
        y_desc: "exploitation rate".into(),
        x_range: if log_x { (1e-4, 0.5) } else { (0.0, 50.0) },
        y_range: (0.0, 1.0),
        log_x,
        series: vec![
            Series {
                name: "arm 1 (best)".into(),
                points: (1..=100)
                    .map(|i| (i as f64 * if log_x { 0.005 } else { 0.5 }, 0.5))
                    .collect(),
                band: Some((1..=100).map(|_| (0.4, 0.6)).collect()),
                color: 0,
                dashed: false,
            },
            Series {
                name: "ground truth: t × P(X₁ > 1.0) = t × 0.01111".into(),
                points: vec![(if log_x { 1e-4 } else { 0.0 }, 0.0), (0.5, 1.0)],
                band: None,
                color: 6,
                dashed: true,
            },
        ],
        // Filled regions under the lines (as EAF differences draw them), one reaching past the
        // axes, which clip it.
        regions: vec![
            Region {
                x0: if log_x { 1e-3 } else { 5.0 },
                y0: 0.1,
                x1: if log_x { 0.01 } else { 20.0 },
                y1: 0.4,
                color: 0,
                alpha: 0.5,
                value: 1.0,
            },
            Region {
                x0: if log_x { 0.1 } else { 30.0 },
                y0: 0.7,
                x1: f64::INFINITY,
                y1: 2.0,
                color: 1,
                alpha: 0.3,
                value: -0.5,
            },
        ],
    };
    check(
        "lines",
        &Lines {
            title: "ER-UCB Figure 1a: exploitation rates of arms 1 and 7".into(),
            panels: vec![panel(true, "a.1"), panel(false, "a.2"), panel(false, "a.3")],
        },
    );
}
