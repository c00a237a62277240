//! Anytime curves: mean rank and mean normalised regret against the fraction of the budget used,
//! with a band of ±t(0.975)·SE over units (Syne Tune / HPO-B style).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, color, csv_field, de, left_center, text_style, text_width};

pub struct Anytime {
    pub title: String,
    pub grid: Vec<f64>,
    /// (policy, mean rank per grid point, half-width), best final rank first.
    pub rank: Vec<(String, Vec<f64>, Vec<f64>)>,
    pub regret: Vec<(String, Vec<f64>, Vec<f64>)>,
    pub k: usize,
}

impl Anytime {
    fn legend_width(&self) -> u32 {
        self.rank
            .iter()
            .map(|r| text_width(&r.0, 12))
            .max()
            .unwrap_or(60)
            + 50
    }
}

impl Figure for Anytime {
    fn size(&self) -> (u32, u32) {
        (
            1000 + self.legend_width(),
            480.max(80 + 20 * self.rank.len() as u32),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let root = root.titled(&self.title, text_style(18)).map_err(de)?;
        let (plots, legend) = root.split_horizontally(root.dim_in_pixel().0 - self.legend_width());
        let areas = plots.split_evenly((1, 2));
        let panels = [
            ("mean rank (1 = best)", &self.rank, (1.0, self.k as f64)),
            ("mean normalised regret", &self.regret, (0.0, 1.0)),
        ];
        for ((desc, series, (y0, y1)), area) in panels.iter().zip(&areas) {
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(56)
                .build_cartesian_2d(0f64..1f64, *y0..*y1)
                .map_err(de)?;
            chart
                .configure_mesh()
                .x_desc("fraction of the budget used")
                .y_desc(*desc)
                .axis_desc_style(text_style(14))
                .label_style(text_style(12))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(de)?;
            for (i, (_, mean, half)) in series.iter().enumerate() {
                let c = color(i);
                let pts: Vec<(f64, f64)> = self
                    .grid
                    .iter()
                    .zip(mean)
                    .filter(|(_, m)| m.is_finite())
                    .map(|(t, m)| (*t, *m))
                    .collect();
                let mut band: Vec<(f64, f64)> = self
                    .grid
                    .iter()
                    .zip(mean.iter().zip(half))
                    .filter(|(_, (m, h))| m.is_finite() && h.is_finite())
                    .map(|(t, (m, h))| (*t, (m + h).min(*y1)))
                    .collect();
                let lower: Vec<(f64, f64)> = self
                    .grid
                    .iter()
                    .zip(mean.iter().zip(half))
                    .filter(|(_, (m, h))| m.is_finite() && h.is_finite())
                    .map(|(t, (m, h))| (*t, (m - h).max(*y0)))
                    .rev()
                    .collect();
                band.extend(lower);
                if band.len() > 2 {
                    chart
                        .draw_series(std::iter::once(Polygon::new(band, c.mix(0.15).filled())))
                        .map_err(de)?;
                }
                chart
                    .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                    .map_err(de)?;
            }
        }
        for (i, (name, _, _)) in self.rank.iter().enumerate() {
            let y = 30 + 20 * i as i32;
            legend
                .draw(&PathElement::new(
                    vec![(8, y), (28, y)],
                    color(i).stroke_width(3),
                ))
                .map_err(de)?;
            legend
                .draw(&Text::new(name.clone(), (34, y), left_center(12)))
                .map_err(de)?;
        }
        Ok(())
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
