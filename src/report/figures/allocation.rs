//! Budget allocation: the share of pulls each policy gave each learner, as stacked bars.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, color, csv_field, de, left_center, right_center, text_style, text_width};

pub struct Allocation {
    pub title: String,
    /// Policies, top to bottom.
    pub policies: Vec<String>,
    pub learners: Vec<String>,
    /// shares[p][l], each row summing to 1.
    pub shares: Vec<Vec<f64>>,
}

impl Allocation {
    fn label_width(&self) -> u32 {
        self.policies
            .iter()
            .map(|l| text_width(l, 13))
            .max()
            .unwrap_or(60)
            + 20
    }

    fn legend_width(&self) -> u32 {
        self.learners
            .iter()
            .map(|l| text_width(l, 12))
            .max()
            .unwrap_or(60)
            + 50
    }
}

impl Figure for Allocation {
    fn size(&self) -> (u32, u32) {
        let rows = self.policies.len().max(self.learners.len() * 20 / 26) as u32;
        (
            self.label_width() + 620 + self.legend_width(),
            120 + 26 * rows,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let root = root.titled(&self.title, text_style(18)).map_err(de)?;
        let (main, legend) = root.split_horizontally(root.dim_in_pixel().0 - self.legend_width());
        let n = self.policies.len();
        let mut chart = ChartBuilder::on(&main)
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(self.label_width())
            .build_cartesian_2d(0f64..1f64, -0.6f64..(n as f64 - 0.4))
            .map_err(de)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("share of pulls")
            .axis_desc_style(text_style(14))
            .label_style(text_style(12))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(de)?;
        for (i, (p, row)) in self.policies.iter().zip(&self.shares).enumerate() {
            let y = (n - 1 - i) as f64;
            let mut x = 0.0;
            for (l, s) in row.iter().enumerate() {
                if *s > 0.0 {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, y - 0.36), (x + s, y + 0.36)],
                            color(l).filled(),
                        )))
                        .map_err(de)?;
                }
                x += s;
            }
            // backend_coord is absolute; the titled area starts below the title.
            let (px, py) = chart.backend_coord(&(0.0, y));
            let (bx, by) = root.get_base_pixel();
            root.draw(&Text::new(
                p.clone(),
                (px - bx - 8, py - by),
                right_center(13),
            ))
            .map_err(de)?;
        }
        for (l, name) in self.learners.iter().enumerate() {
            let y = 30 + 20 * l as i32;
            legend
                .draw(&Rectangle::new(
                    [(10, y - 6), (24, y + 6)],
                    color(l).filled(),
                ))
                .map_err(de)?;
            legend
                .draw(&Text::new(name.clone(), (30, y), left_center(12)))
                .map_err(de)?;
        }
        Ok(())
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
