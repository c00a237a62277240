//! The Bayesian signed-rank test per pair: the posterior probabilities of "left better", "within
//! the rope" and "right better" as one stacked bar each (Benavoli et al. 2017, §4.3).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, csv_field, de, right_center, text_style, text_width};

pub struct BayesBars {
    pub title: String,
    /// (left policy, right policy, p_left, p_rope, p_right).
    pub rows: Vec<(String, String, f64, f64, f64)>,
}

/// Okabe–Ito blue, grey and vermillion: left, rope, right.
const SHADES: [RGBColor; 3] = [
    RGBColor(0, 114, 178),
    RGBColor(187, 187, 187),
    RGBColor(213, 94, 0),
];

impl BayesBars {
    fn label(r: &(String, String, f64, f64, f64)) -> String {
        format!("{}  vs  {}", r.0, r.1)
    }

    fn label_width(&self) -> u32 {
        self.rows
            .iter()
            .map(|r| text_width(&Self::label(r), 13))
            .max()
            .unwrap_or(60)
            + 20
    }
}

impl Figure for BayesBars {
    fn size(&self) -> (u32, u32) {
        (self.label_width() + 520, 130 + 24 * self.rows.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let n = self.rows.len();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, text_style(16))
            .margin(12)
            .x_label_area_size(64)
            .y_label_area_size(self.label_width())
            .build_cartesian_2d(0f64..1f64, -0.6f64..(n as f64 - 0.4))
            .map_err(de)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .y_labels(0)
            .x_desc("posterior probability: left better | within the rope | right better")
            .axis_desc_style(text_style(13))
            .label_style(text_style(12))
            .draw()
            .map_err(de)?;
        for (i, r) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let mut x0 = 0.0;
            for (k, p) in [r.2, r.3, r.4].into_iter().enumerate() {
                if p > 0.0 {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x0, y - 0.35), (x0 + p, y + 0.35)],
                            SHADES[k].filled(),
                        )))
                        .map_err(de)?;
                }
                x0 += p;
            }
            let (px, py) = chart.backend_coord(&(0.0, y));
            let (bx, by) = root.get_base_pixel();
            root.draw(&Text::new(
                Self::label(r),
                (px - bx - 8, py - by),
                right_center(13),
            ))
            .map_err(de)?;
        }
        Ok(())
    }

    fn csv(&self) -> String {
        let mut s = String::from("a,b,p_left,p_rope,p_right\n");
        for (a, b, l, e, r) in &self.rows {
            s.push_str(&format!("{},{},{l},{e},{r}\n", csv_field(a), csv_field(b)));
        }
        s
    }
}
