//! Budget allocation: the share of pulls each policy gave each learner, as stacked bars. Learners
//! are sorted by their overall share; those that never reach `MIN_SHARE` of any policy's pulls,
//! or that come after the first `MAX_SHOWN`, are drawn together as one grey "other" segment, so
//! that the figure stays readable with 20 learners. The CSV keeps every learner.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{self, Entry};
use super::style::{
    GRID, HAIRLINE, OKABE_ITO, Page, TEXT_PT, TICK_PT, TITLE_PT, fit, fmt_number, font, max_width,
    pt, right_center, upt,
};
use super::{Figure, csv_field, de};

pub struct Allocation {
    pub title: String,
    /// Policy labels, top to bottom.
    pub policies: Vec<String>,
    pub learners: Vec<String>,
    /// shares[p][l], each row summing to 1.
    pub shares: Vec<Vec<f64>>,
}

/// A learner below this share for every policy joins "other".
pub const MIN_SHARE: f64 = 0.03;
/// At most this many learners get their own colour.
pub const MAX_SHOWN: usize = 7;
const ROW_PT: f64 = 10.0;
const OTHER: RGBColor = RGBColor(200, 200, 200);

impl Allocation {
    fn label_width(&self, page: &Page) -> u32 {
        max_width(self.policies.iter().map(|s| s.as_str()), TEXT_PT).min(page.width() * 40 / 100)
            + upt(8.0)
    }

    /// Learner indices shown on their own, by decreasing mean share, and the rest.
    pub fn grouping(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.policies.len().max(1) as f64;
        let mut order: Vec<(usize, f64, f64)> = (0..self.learners.len())
            .map(|l| {
                let mean = self.shares.iter().map(|r| r[l]).sum::<f64>() / n;
                let max = self.shares.iter().map(|r| r[l]).fold(0.0, f64::max);
                (l, mean, max)
            })
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut shown = Vec::new();
        let mut rest = Vec::new();
        for (l, _, max) in order {
            if shown.len() < MAX_SHOWN && max >= MIN_SHARE {
                shown.push(l);
            } else {
                rest.push(l);
            }
        }
        (shown, rest)
    }

    fn entries(&self) -> Vec<Entry> {
        let (shown, rest) = self.grouping();
        let mut e: Vec<Entry> = shown
            .iter()
            .enumerate()
            .map(|(i, &l)| Entry {
                label: self.learners[l].clone(),
                color: OKABE_ITO[i],
                dash: None,
                marker: None,
                swatch: true,
            })
            .collect();
        if !rest.is_empty() {
            e.push(Entry {
                label: format!("other ({} learners)", rest.len()),
                color: OTHER,
                dash: None,
                marker: None,
                swatch: true,
            });
        }
        e
    }
}

impl Figure for Allocation {
    fn height(&self, page: &Page) -> u32 {
        let title = if page.titles { upt(TITLE_PT * 1.8) } else { 0 };
        title
            + upt(ROW_PT * self.policies.len() as f64 + 30.0)
            + legend::height(&self.entries(), page.width())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let root = super::style::titled(root, &self.title, page)?;
        let entries = self.entries();
        let lh = legend::height(&entries, page.width());
        let (main, legend_area) = root.split_vertically(root.dim_in_pixel().1 - lh);
        let n = self.policies.len();
        let lw = self.label_width(page);
        let mut chart = ChartBuilder::on(&main)
            .margin(upt(4.0))
            .margin_right(upt(8.0))
            .x_label_area_size(upt(22.0))
            .y_label_area_size(lw)
            .build_cartesian_2d(0f64..1f64, -0.6f64..(n as f64 - 0.4))
            .map_err(de)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&|v| fmt_number(*v))
            .x_desc("share of pulls")
            .axis_desc_style(font(TEXT_PT))
            .label_style(font(TICK_PT))
            .axis_style(BLACK.stroke_width(HAIRLINE))
            .bold_line_style(GRID.stroke_width(HAIRLINE))
            .light_line_style(TRANSPARENT)
            .set_all_tick_mark_size(upt(2.0))
            .draw()
            .map_err(de)?;
        let (shown, rest) = self.grouping();
        let (bx, by) = main.get_base_pixel();
        for (i, (p, row)) in self.policies.iter().zip(&self.shares).enumerate() {
            let y = (n - 1 - i) as f64;
            let mut x = 0.0;
            let other: f64 = rest.iter().map(|&l| row[l]).sum();
            let segs = shown
                .iter()
                .enumerate()
                .map(|(c, &l)| (row[l], OKABE_ITO[c]))
                .chain(std::iter::once((other, OTHER)));
            for (s, col) in segs {
                if s > 0.0 {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, y - 0.36), (x + s, y + 0.36)],
                            col.filled(),
                        )))
                        .map_err(de)?;
                }
                x += s;
            }
            let (px, py) = chart.backend_coord(&(0.0, y));
            main.draw(&Text::new(
                fit(p, TEXT_PT, lw - upt(8.0)),
                (px - bx - pt(3.0), py - by),
                right_center(TEXT_PT),
            ))
            .map_err(de)?;
        }
        legend::draw(&legend_area, &entries)
    }

    fn csv(&self) -> String {
        let mut s = String::from("policy,learner,share\n");
        for (p, row) in self.policies.iter().zip(&self.shares) {
            for (l, v) in self.learners.iter().zip(row) {
                s.push_str(&format!("{},{},{v}\n", csv_field(p), csv_field(l)));
            }
        }
        s
    }
}
