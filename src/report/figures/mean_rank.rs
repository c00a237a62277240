//! Mean rank of each policy with its confidence interval, best at the top (HAMLET Fig. 8).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, color, csv_field, de, right_center, text_style, text_width};

pub struct MeanRankFigure {
    pub title: String,
    /// (policy, mean rank, ci low, ci high), best first.
    pub rows: Vec<(String, f64, f64, f64)>,
    pub k: usize,
    pub x_desc: String,
}

impl MeanRankFigure {
    fn label_width(&self) -> u32 {
        self.rows
            .iter()
            .map(|r| text_width(&r.0, 14))
            .max()
            .unwrap_or(60)
            + 20
    }
}

impl Figure for MeanRankFigure {
    fn size(&self) -> (u32, u32) {
        (self.label_width() + 640, 110 + 28 * self.rows.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let n = self.rows.len();
        let lo = self
            .rows
            .iter()
            .map(|r| r.2)
            .fold(f64::INFINITY, f64::min)
            .min(1.0);
        let hi = self
            .rows
            .iter()
            .map(|r| r.3)
            .fold(f64::NEG_INFINITY, f64::max)
            .max(self.k as f64);
        let pad = 0.04 * (hi - lo).max(1.0);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, text_style(18))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(self.label_width())
            .build_cartesian_2d((lo - pad)..(hi + pad), -0.6f64..(n as f64 - 0.4))
            .map_err(de)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .y_labels(0)
            .x_desc(&self.x_desc)
            .axis_desc_style(text_style(15))
            .label_style(text_style(13))
            .draw()
            .map_err(de)?;
        for (i, (name, mean, l, h)) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let c = color(i);
            chart
                .draw_series(std::iter::once(ErrorBar::new_horizontal(
                    y,
                    *l,
                    *mean,
                    *h,
                    c.stroke_width(2),
                    10,
                )))
                .map_err(de)?;
            chart
                .draw_series(std::iter::once(Circle::new((*mean, y), 5, c.filled())))
                .map_err(de)?;
            let (px, py) = chart.backend_coord(&(lo - pad, y));
            let (bx, by) = root.get_base_pixel();
            root.draw(&Text::new(
                name.clone(),
                (px - bx - 8, py - by),
                right_center(14),
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
