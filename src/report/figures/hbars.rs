//! Horizontal stacked bars with a label per row and a legend underneath: the layout shared by the
//! budget allocation, the Bayesian signed-rank test and the two-setting parameter studies.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::de;
use super::legend::{self, Entry};
use super::style::{
    Page, TEXT_PT, TITLE_PT, fit, fmt_number, max_width, paper_mesh, pt, right_center, upt,
};

const ROW_PT: f64 = 10.0;

/// Rows of segments (share, colour) that each sum to at most 1.
pub struct Stacked<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub labels: Vec<String>,
    pub segments: Vec<Vec<(f64, RGBColor)>>,
    pub entries: Vec<Entry>,
    /// The share of the page the row labels may take, in percent.
    pub label_share: u32,
}

/// Width of a column of row labels: the widest label plus a gap, at most `share` % of the page.
pub fn label_width<'s>(labels: impl IntoIterator<Item = &'s str>, page: &Page, share: u32) -> u32 {
    max_width(labels, TEXT_PT).min(page.width() * share / 100) + upt(8.0)
}

pub fn height(rows: usize, entries: &[Entry], page: &Page) -> u32 {
    let title = if page.titles { upt(TITLE_PT * 1.8) } else { 0 };
    title + upt(ROW_PT * rows as f64 + 30.0) + legend::height(entries, page.width())
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    page: &Page,
    s: &Stacked,
) -> Result<()> {
    let root = super::style::titled(root, s.title, page)?;
    let lh = legend::height(&s.entries, page.width());
    let (main, legend_area) = root.split_vertically(root.dim_in_pixel().1 - lh);
    let n = s.labels.len();
    let lw = label_width(s.labels.iter().map(|l| l.as_str()), page, s.label_share);
    let mut chart = ChartBuilder::on(&main)
        .margin(upt(4.0))
        .margin_right(upt(8.0))
        .x_label_area_size(upt(22.0))
        .y_label_area_size(lw)
        .build_cartesian_2d(0f64..1f64, -0.6f64..(n as f64 - 0.4))
        .map_err(de)?;
    paper_mesh(&mut chart.configure_mesh())
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(6)
        .x_label_formatter(&|v| fmt_number(*v))
        .x_desc(s.x_desc)
        .draw()
        .map_err(de)?;
    let (bx, by) = main.get_base_pixel();
    for (i, (label, segs)) in s.labels.iter().zip(&s.segments).enumerate() {
        let y = (n - 1 - i) as f64;
        let mut x = 0.0;
        for &(share, col) in segs {
            if share > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x, y - 0.36), (x + share, y + 0.36)],
                        col.filled(),
                    )))
                    .map_err(de)?;
            }
            x += share;
        }
        let (px, py) = chart.backend_coord(&(0.0, y));
        main.draw(&Text::new(
            fit(label, TEXT_PT, lw - upt(8.0)),
            (px - bx - pt(3.0), py - by),
            right_center(TEXT_PT),
        ))
        .map_err(de)?;
    }
    legend::draw(&legend_area, &s.entries)
}
