//! Mean rank of each policy with its confidence interval, best at the top (HAMLET Fig. 8). The
//! interval is a thick bar with caps and the mean a small dot inside it, so even narrow
//! intervals show; the axis spans the intervals, not 1..k, but never goes below rank 0.5: an
//! interval clipped there (a t interval over few units can reach below 1) has no cap.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    HAIRLINE, LINE, OKABE_ITO, Page, TEXT_PT, TITLE_PT, fit, fmt_number, max_width, pt,
    right_center, ticks_that_fit, upt,
};
use super::{Figure, csv_field, de};

/// Mean ranks with their intervals, one row per policy.
pub struct MeanRankFigure {
    /// The figure's title.
    pub title: String,
    /// (policy label, mean rank, ci low, ci high), best first.
    pub rows: Vec<(String, f64, f64, f64)>,
    /// The x axis' label.
    pub x_desc: String,
}

const ROW_PT: f64 = 11.0;

impl MeanRankFigure {
    fn label_width(&self, page: &Page) -> u32 {
        max_width(self.rows.iter().map(|r| r.0.as_str()), TEXT_PT).min(page.width() * 45 / 100)
            + upt(8.0)
    }

    fn range(&self) -> (f64, f64) {
        let lo = self
            .rows
            .iter()
            .map(|r| r.2.min(r.1))
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .rows
            .iter()
            .map(|r| r.3.max(r.1))
            .fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() && hi.is_finite() {
            (lo, hi)
        } else {
            (1.0, 2.0)
        };
        let pad = 0.06 * (hi - lo).max(0.5);
        ((lo - pad).max(0.5), hi + pad)
    }
}

fn title_height(page: &Page) -> u32 {
    if page.titles {
        upt(TITLE_PT * 1.8)
    } else {
        upt(2.0)
    }
}

impl Figure for MeanRankFigure {
    fn height(&self, page: &Page) -> u32 {
        title_height(page) + upt(ROW_PT * self.rows.len() as f64 + 6.0) + upt(28.0)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let n = self.rows.len();
        let (lo, hi) = self.range();
        let lw = self.label_width(page);
        let root = if page.titles {
            super::style::titled(root, &self.title, page)?
        } else {
            root.margin(upt(2.0), 0, 0, 0)
        };
        let plot_w = page.width().saturating_sub(lw + upt(10.0));
        let mut chart = ChartBuilder::on(&root)
            .margin_right(upt(8.0))
            .margin_top(upt(3.0))
            .x_label_area_size(upt(24.0))
            .y_label_area_size(lw)
            .build_cartesian_2d(lo..hi, -0.6f64..(n as f64 - 0.4))
            .map_err(de)?;
        super::style::paper_mesh(&mut chart.configure_mesh())
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(ticks_that_fit(plot_w, lo, hi))
            .x_label_formatter(&|v| fmt_number(*v))
            .x_desc(&self.x_desc)
            .draw()
            .map_err(de)?;
        let c = OKABE_ITO[0];
        let (bx, by) = root.get_base_pixel();
        for (i, (name, mean, l, h)) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            // Intervals are clipped at the axis; a clipped end has no cap.
            let (x0, py) = chart.backend_coord(&(l.max(lo), y));
            let (x1, _) = chart.backend_coord(&(h.min(hi), y));
            let (xm, _) = chart.backend_coord(&(*mean, y));
            let (x0, x1, xm, py) = (x0 - bx, x1 - bx, xm - bx, py - by);
            let cap = pt(2.5);
            let mut segs = vec![vec![(x0, py), (x1, py)]];
            if *l >= lo {
                segs.push(vec![(x0, py - cap), (x0, py + cap)]);
            }
            if *h <= hi {
                segs.push(vec![(x1, py - cap), (x1, py + cap)]);
            }
            for seg in segs {
                root.draw(&PathElement::new(seg, c.stroke_width(LINE)))
                    .map_err(de)?;
            }
            root.draw(&Circle::new((xm, py), pt(1.6), WHITE.filled()))
                .map_err(de)?;
            root.draw(&Circle::new(
                (xm, py),
                pt(1.6),
                BLACK.stroke_width(HAIRLINE),
            ))
            .map_err(de)?;
            let (px, _) = chart.backend_coord(&(lo, y));
            root.draw(&Text::new(
                fit(name, TEXT_PT, lw - upt(8.0)),
                (px - bx - pt(4.0), py),
                right_center(TEXT_PT),
            ))
            .map_err(de)?;
        }
        Ok(())
    }

    fn csv(&self) -> String {
        let mut s = String::from("policy,mean_rank,ci_low,ci_high\n");
        for (p, m, l, h) in &self.rows {
            s.push_str(&format!("{},{m},{l},{h}\n", csv_field(p)));
        }
        s
    }
}
