//! Horizontal rank boxplots, one panel per budget (HAMLET Figs. 2–7): per policy (or per
//! parameter value) the box spans the quartiles, the line is the median, the dot the mean,
//! whiskers reach the furthest point within 1.5 IQR, points beyond are drawn as circles.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, color, csv_field, de, quantile_sorted, right_center, text_style, text_width};

pub struct BoxPanels {
    pub title: String,
    pub x_desc: String,
    /// Row labels, top to bottom.
    pub labels: Vec<String>,
    /// (panel caption, values per row).
    pub panels: Vec<(String, Vec<Vec<f64>>)>,
    pub x_range: (f64, f64),
}

impl BoxPanels {
    fn label_width(&self) -> u32 {
        self.labels
            .iter()
            .map(|l| text_width(l, 13))
            .max()
            .unwrap_or(60)
            + 20
    }
}

/// Panels per row; more panels wrap onto further rows.
const PER_ROW: usize = 4;

impl BoxPanels {
    fn grid(&self) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let cols = n.min(PER_ROW);
        (n.div_ceil(cols), cols)
    }
}

impl Figure for BoxPanels {
    fn size(&self) -> (u32, u32) {
        let (rows, cols) = self.grid();
        (
            self.label_width() + 40 + 300 * cols as u32,
            40 + rows as u32 * (90 + 26 * self.labels.len() as u32),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let root = root.titled(&self.title, text_style(18)).map_err(de)?;
        let lw = self.label_width();
        let (rows, cols) = self.grid();
        let (labels_col, plots) = root.split_horizontally(lw);
        let label_rows = labels_col.split_evenly((rows, 1));
        let areas = plots.split_evenly((rows, cols));
        let n = self.labels.len();
        let (x0, x1) = self.x_range;
        for (pi, ((caption, values), area)) in self.panels.iter().zip(&areas).enumerate() {
            let labels_area = &label_rows[pi / cols];
            let mut chart = ChartBuilder::on(area)
                .caption(caption, text_style(15))
                .margin(8)
                .x_label_area_size(44)
                .y_label_area_size(4)
                .build_cartesian_2d(x0..x1, -0.6f64..(n as f64 - 0.4))
                .map_err(de)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                // Ranks are whole numbers: label whole-number ticks only.
                .x_labels(((x1 - x0).ceil() as usize + 1).min(11))
                .x_label_formatter(&|v| {
                    if (v - v.round()).abs() < 1e-9 {
                        format!("{}", v.round())
                    } else {
                        String::new()
                    }
                })
                .x_desc(&self.x_desc)
                .axis_desc_style(text_style(14))
                .label_style(text_style(12))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(de)?;
            for (i, vals) in values.iter().enumerate() {
                let y = (n - 1 - i) as f64;
                let c = color(i);
                if pi % cols == 0 {
                    // backend_coord is absolute; the label area starts below the title.
                    let (_, py) = chart.backend_coord(&(x0, y));
                    let (_, by) = labels_area.get_base_pixel();
                    labels_area
                        .draw(&Text::new(
                            self.labels[i].clone(),
                            (lw as i32 - 6, py - by),
                            right_center(13),
                        ))
                        .map_err(de)?;
                }
                let mut v: Vec<f64> = vals.iter().copied().filter(|x| !x.is_nan()).collect();
                if v.is_empty() {
                    continue;
                }
                v.sort_by(f64::total_cmp);
                let (q1, med, q3) = (
                    quantile_sorted(&v, 0.25),
                    quantile_sorted(&v, 0.5),
                    quantile_sorted(&v, 0.75),
                );
                let iqr = q3 - q1;
                let lo = v
                    .iter()
                    .copied()
                    .find(|x| *x >= q1 - 1.5 * iqr)
                    .unwrap_or(q1);
                let hi = v
                    .iter()
                    .rev()
                    .copied()
                    .find(|x| *x <= q3 + 1.5 * iqr)
                    .unwrap_or(q3);
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                let h = 0.32;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(q1, y - h), (q3, y + h)],
                        c.mix(0.35).filled(),
                    )))
                    .map_err(de)?;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(q1, y - h), (q3, y + h)],
                        c.stroke_width(1),
                    )))
                    .map_err(de)?;
                for seg in [
                    vec![(med, y - h), (med, y + h)],
                    vec![(lo, y), (q1, y)],
                    vec![(q3, y), (hi, y)],
                    vec![(lo, y - h / 2.0), (lo, y + h / 2.0)],
                    vec![(hi, y - h / 2.0), (hi, y + h / 2.0)],
                ] {
                    chart
                        .draw_series(std::iter::once(PathElement::new(seg, c.stroke_width(2))))
                        .map_err(de)?;
                }
                chart
                    .draw_series(std::iter::once(Circle::new((mean, y), 3, BLACK.filled())))
                    .map_err(de)?;
                let outliers: Vec<f64> = v.iter().copied().filter(|x| *x < lo || *x > hi).collect();
                chart
                    .draw_series(
                        outliers
                            .into_iter()
                            .map(|o| Circle::new((o, y), 2, c.stroke_width(1))),
                    )
                    .map_err(de)?;
            }
        }
        Ok(())
    }

    fn csv(&self) -> String {
        let mut s = String::from("panel,label,n,q1,median,q3,mean\n");
        for (caption, values) in &self.panels {
            for (label, vals) in self.labels.iter().zip(values) {
                let mut v: Vec<f64> = vals.iter().copied().filter(|x| !x.is_nan()).collect();
                v.sort_by(f64::total_cmp);
                let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
                s.push_str(&format!(
                    "{},{},{},{},{},{},{}\n",
                    csv_field(caption),
                    csv_field(label),
                    v.len(),
                    quantile_sorted(&v, 0.25),
                    quantile_sorted(&v, 0.5),
                    quantile_sorted(&v, 0.75),
                    mean
                ));
            }
        }
        s
    }
}
