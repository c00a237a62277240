//! Anytime curves: mean rank and mean normalised regret against the fraction of the budget used,
//! with a band of ±t(0.975)·SE over units (Syne Tune / HPO-B style). Each policy has its own
//! colour, line style and marker (Okabe–Ito; styles repeat only past eight policies), so the
//! curves survive greyscale printing.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{self, Entry};
use super::style::{
    LINE, Page, TITLE_PT, color, dash, draw_marker, draw_polyline, fmt_number, marker,
    ticks_that_fit, upt,
};
use super::{Figure, csv_field, de};

/// Anytime curves: mean rank and mean normalised regret against the fraction of the budget.
pub struct Anytime {
    /// The figure's title.
    pub title: String,
    /// The fractions of the budget the curves are drawn at.
    pub grid: Vec<f64>,
    /// (policy label, mean rank per grid point, half-width), best final rank first.
    pub rank: Vec<(String, Vec<f64>, Vec<f64>)>,
    /// (policy label, mean normalised regret per grid point, half-width), as `rank`.
    pub regret: Vec<(String, Vec<f64>, Vec<f64>)>,
    /// Policies compared (the rank axis runs from 1 to `k`).
    pub k: usize,
    /// The x axis: what the budget is a fraction of.
    pub x_desc: String,
    /// The regret panel's y axis ("normalised regret", or "hypervolume regret").
    pub regret_desc: String,
}

const PANEL_PT: f64 = 150.0;

impl Anytime {
    fn entries(&self) -> Vec<Entry> {
        self.rank
            .iter()
            .enumerate()
            .map(|(i, (name, _, _))| Entry {
                label: name.clone(),
                color: color(i),
                dash: dash(i),
                marker: Some(marker(i)),
                swatch: false,
            })
            .collect()
    }

    fn title_height(page: &Page) -> u32 {
        if page.titles { upt(TITLE_PT * 1.8) } else { 0 }
    }
}

impl Figure for Anytime {
    fn height(&self, page: &Page) -> u32 {
        let panels = if page.narrow() { 2 } else { 1 };
        Self::title_height(page)
            + panels * upt(PANEL_PT)
            + legend::height(&self.entries(), page.width())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let root = super::style::titled(root, &self.title, page)?;
        let entries = self.entries();
        let lh = legend::height(&entries, page.width());
        let (plots, legend_area) = root.split_vertically(root.dim_in_pixel().1 - lh);
        let areas = if page.narrow() {
            plots.split_evenly((2, 1))
        } else {
            plots.split_evenly((1, 2))
        };
        let panels = [
            (
                "mean rank (1 = best)",
                &self.rank,
                (1.0, self.k.max(2) as f64),
            ),
            (self.regret_desc.as_str(), &self.regret, (0.0, 1.0)),
        ];
        let n_grid = self.grid.len();
        for ((desc, series, (y0, y1)), area) in panels.iter().zip(&areas) {
            let w = area.dim_in_pixel().0;
            let mut chart = ChartBuilder::on(area)
                .margin(upt(4.0))
                .margin_right(upt(8.0))
                .x_label_area_size(upt(22.0))
                .y_label_area_size(upt(26.0))
                .build_cartesian_2d(0f64..1f64, *y0..*y1)
                .map_err(de)?;
            super::style::paper_mesh(&mut chart.configure_mesh())
                .x_desc(self.x_desc.as_str())
                .y_desc(*desc)
                .x_labels(ticks_that_fit(w.saturating_sub(upt(34.0)), 0.0, 1.0).min(6))
                .y_labels(6)
                .x_label_formatter(&|v| fmt_number(*v))
                .y_label_formatter(&|v| fmt_number(*v))
                .draw()
                .map_err(de)?;
            let (bx, by) = area.get_base_pixel();
            for (i, (_, mean, half)) in series.iter().enumerate() {
                let c = color(i);
                let ok = |m: &f64, h: &f64| m.is_finite() && h.is_finite();
                let mut band: Vec<(f64, f64)> = self
                    .grid
                    .iter()
                    .zip(mean.iter().zip(half))
                    .filter(|(_, (m, h))| ok(m, h))
                    .map(|(t, (m, h))| (*t, (m + h).min(*y1)))
                    .collect();
                let lower: Vec<(f64, f64)> = self
                    .grid
                    .iter()
                    .zip(mean.iter().zip(half))
                    .filter(|(_, (m, h))| ok(m, h))
                    .map(|(t, (m, h))| (*t, (m - h).max(*y0)))
                    .rev()
                    .collect();
                band.extend(lower);
                if band.len() > 2 {
                    chart
                        .draw_series(std::iter::once(Polygon::new(band, c.mix(0.12).filled())))
                        .map_err(de)?;
                }
                let pts: Vec<(i32, i32)> = self
                    .grid
                    .iter()
                    .zip(mean)
                    .filter(|(_, m)| m.is_finite())
                    .map(|(t, m)| {
                        let (x, y) = chart.backend_coord(&(*t, *m));
                        (x - bx, y - by)
                    })
                    .collect();
                draw_polyline(area, pts, c.stroke_width(LINE), dash(i))?;
                // Markers at staggered grid points so that neighbours' markers do not stack.
                let every = (n_grid / 6).max(1);
                for j in (i % every..n_grid).step_by(every) {
                    if mean[j].is_finite() {
                        let (x, y) = chart.backend_coord(&(self.grid[j], mean[j]));
                        draw_marker(area, marker(i), (x - bx, y - by), upt(1.8) as i32, c)?;
                    }
                }
            }
        }
        legend::draw(&legend_area, &entries)
    }

    fn csv(&self) -> String {
        let mut s = String::from(
            "policy,fraction,mean_rank,rank_half_width,mean_regret,regret_half_width\n",
        );
        for ((p, r, rh), (_, g, gh)) in self.rank.iter().zip(&self.regret) {
            for i in 0..self.grid.len() {
                s.push_str(&format!(
                    "{},{},{},{},{},{}\n",
                    csv_field(p),
                    self.grid[i],
                    r[i],
                    rh[i],
                    g[i],
                    gh[i]
                ));
            }
        }
        s
    }
}
