//! Critical-difference diagrams (Demšar 2006): policies on a mean-rank axis, best on the left,
//! bars joining groups that are not significantly different (Nemenyi: mean ranks within the
//! critical difference, with the CD ruler; Wilcoxon–Holm: no pair rejected). The height grows
//! with the number of policies and groups; labels are fitted to the page, and the report draws
//! at most `MAX_POLICIES` (see `report::figures_for`).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    HAIRLINE, LINE, Page, TEXT_PT, THIN, TICK_PT, TITLE_PT, anchored, bold, fit, left_center, pt,
    right_center, text_width, upt,
};
use super::{Figure, csv_field, de};
use plotters::style::text_anchor::{HPos, VPos};

/// More policies than this make an unreadable diagram; the report then draws each family's best
/// setting (and says so).
pub const MAX_POLICIES: usize = 20;

/// A critical-difference diagram (Demšar 2006): mean ranks with groups that do not differ.
pub struct CdDiagram {
    /// The figure's title.
    pub title: String,
    /// (policy label, mean rank), best first.
    pub rows: Vec<(String, f64)>,
    /// Policies compared (the axis runs from 1 to `k`).
    pub k: usize,
    /// Groups as index ranges into `rows`.
    pub groups: Vec<(usize, usize)>,
    /// The critical difference, drawn as a ruler (Nemenyi only).
    pub cd: Option<f64>,
}

const ROW_PT: f64 = 10.0;
const BAR_PT: f64 = 3.0;

impl CdDiagram {
    fn label(&self, i: usize, with_rank: bool) -> String {
        if with_rank {
            format!("{} ({:.2})", self.rows[i].0, self.rows[i].1)
        } else {
            self.rows[i].0.clone()
        }
    }

    /// How labels are set: with their mean ranks at the text size when that fits in 38 % of the
    /// page per side, else without the ranks (the axis shows them), else at the tick size, else
    /// shortened. Returns (side width, with ranks, font size).
    fn labels_mode(&self, page: &Page) -> (u32, bool, f64) {
        let max_side = page.width() * 38 / 100;
        for (with_rank, size) in [(true, TEXT_PT), (false, TEXT_PT), (false, TICK_PT)] {
            let w = (0..self.rows.len())
                .map(|i| super::style::text_width(&self.label(i, with_rank), size))
                .max()
                .unwrap_or(0)
                + upt(10.0);
            if w <= max_side {
                return (w, with_rank, size);
            }
        }
        (max_side, false, TICK_PT)
    }

    fn half(&self) -> usize {
        self.rows.len().div_ceil(2)
    }

    fn top(&self, page: &Page) -> i32 {
        let title = if page.titles { pt(TITLE_PT * 1.8) } else { 0 };
        let ruler = if self.cd.is_some() { pt(12.0) } else { 0 };
        title + ruler + pt(14.0)
    }
}

impl Figure for CdDiagram {
    fn height(&self, page: &Page) -> u32 {
        self.top(page) as u32
            + upt(6.0 + BAR_PT * self.groups.len() as f64 + 4.0)
            + upt(ROW_PT * self.half() as f64 + 4.0)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let w = page.width() as i32;
        let (side, with_rank, size) = self.labels_mode(page);
        let side = side as i32;
        let (left, right) = (side, w - side);
        let axis_y = self.top(page);
        let k = self.k.max(2) as f64;
        let x = |r: f64| left + ((r - 1.0) / (k - 1.0) * (right - left) as f64).round() as i32;
        let thin = BLACK.stroke_width(HAIRLINE);
        if page.titles {
            let (t, size) = super::style::fit_title(&self.title, page);
            root.draw(&Text::new(
                t,
                (w / 2, pt(TITLE_PT * 0.9)),
                bold(size).pos(plotters::style::text_anchor::Pos::new(
                    HPos::Center,
                    VPos::Center,
                )),
            ))
            .map_err(de)?;
        }
        root.draw(&PathElement::new(
            vec![(left, axis_y), (right, axis_y)],
            BLACK.stroke_width(THIN),
        ))
        .map_err(de)?;
        // Tick labels every rank when they fit, else every second or fifth.
        let widest = text_width(&self.k.to_string(), TICK_PT) as i32 + pt(3.0);
        let per = ((right - left) as f64 / (k - 1.0)).max(1.0);
        let step = [1usize, 2, 5, 10]
            .into_iter()
            .find(|s| per * *s as f64 >= widest as f64)
            .unwrap_or(10);
        for t in 1..=self.k.max(2) {
            let px = x(t as f64);
            let labelled = t == 1 || (t - 1) % step == 0;
            let len = if labelled { pt(3.0) } else { pt(1.8) };
            root.draw(&PathElement::new(
                vec![(px, axis_y - len), (px, axis_y)],
                thin,
            ))
            .map_err(de)?;
            if labelled {
                root.draw(&Text::new(
                    t.to_string(),
                    (px, axis_y - pt(4.0)),
                    anchored(TICK_PT, HPos::Center, VPos::Bottom),
                ))
                .map_err(de)?;
            }
        }
        if let Some(cd) = self.cd {
            let (a, b) = (x(1.0), x((1.0 + cd).min(k)));
            let y = axis_y - pt(16.0);
            root.draw(&PathElement::new(
                vec![(a, y), (b, y)],
                BLACK.stroke_width(THIN),
            ))
            .map_err(de)?;
            for px in [a, b] {
                root.draw(&PathElement::new(
                    vec![(px, y - pt(1.5)), (px, y + pt(1.5))],
                    thin,
                ))
                .map_err(de)?;
            }
            root.draw(&Text::new(
                format!("CD = {cd:.2}"),
                (b + pt(3.0), y),
                left_center(TICK_PT),
            ))
            .map_err(de)?;
        }
        let bars_top = axis_y + pt(6.0);
        for (g, &(i, j)) in self.groups.iter().enumerate() {
            let y = bars_top + pt(BAR_PT) * g as i32;
            root.draw(&PathElement::new(
                vec![
                    (x(self.rows[i].1) - pt(1.5), y),
                    (x(self.rows[j].1) + pt(1.5), y),
                ],
                BLACK.stroke_width(LINE),
            ))
            .map_err(de)?;
        }
        let rows_top = bars_top + pt(BAR_PT) * self.groups.len() as i32 + pt(ROW_PT * 0.7);
        let half = self.half();
        let room = (side - pt(6.0)).max(pt(10.0)) as u32;
        for i in 0..self.rows.len() {
            let px = x(self.rows[i].1);
            let label = fit(&self.label(i, with_rank), size, room);
            if i < half {
                let y = rows_top + pt(ROW_PT) * i as i32;
                root.draw(&PathElement::new(
                    vec![(px, axis_y), (px, y), (left - pt(2.0), y)],
                    thin,
                ))
                .map_err(de)?;
                root.draw(&Text::new(label, (left - pt(3.0), y), right_center(size)))
                    .map_err(de)?;
            } else {
                let y = rows_top + pt(ROW_PT) * (self.rows.len() - 1 - i) as i32;
                root.draw(&PathElement::new(
                    vec![(px, axis_y), (px, y), (right + pt(2.0), y)],
                    thin,
                ))
                .map_err(de)?;
                root.draw(&Text::new(label, (right + pt(3.0), y), left_center(size)))
                    .map_err(de)?;
            }
        }
        Ok(())
    }

    fn csv(&self) -> String {
        let mut s = String::from("policy,mean_rank,group\n");
        for (i, (p, r)) in self.rows.iter().enumerate() {
            let groups: Vec<String> = self
                .groups
                .iter()
                .enumerate()
                .filter(|(_, (a, b))| *a <= i && i <= *b)
                .map(|(g, _)| g.to_string())
                .collect();
            s.push_str(&format!("{},{r},{}\n", csv_field(p), groups.join(" ")));
        }
        if let Some(cd) = self.cd {
            s.push_str(&format!("# critical difference,{cd},\n"));
        }
        s
    }
}
