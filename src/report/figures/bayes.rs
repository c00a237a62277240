//! Three-part stacked bars with a legend: the Bayesian signed-rank test per pair (the posterior
//! probabilities of "left better", "within the rope" and "right better"; Benavoli et al. 2017,
//! §4.3), and two-setting parameter studies (share of units where the first setting wins, ties,
//! or the second wins), where rank box plots would only show 1, 1.5 and 2.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{self, Entry};
use super::style::{
    GRID, HAIRLINE, Page, TEXT_PT, TICK_PT, TITLE_PT, fit, fmt_number, font, max_width, pt,
    right_center, upt,
};
use super::{Figure, csv_field, de};

pub struct BayesBars {
    pub title: String,
    pub x_desc: String,
    /// The names of the three parts (left, middle, right), for the legend and the CSV header.
    pub parts: [String; 3],
    /// (row label, left, middle, right), each row summing to 1.
    pub rows: Vec<(String, f64, f64, f64)>,
}

/// Okabe–Ito blue, grey and vermillion: left, middle, right.
const SHADES: [RGBColor; 3] = [
    RGBColor(0, 114, 178),
    RGBColor(190, 190, 190),
    RGBColor(213, 94, 0),
];

const ROW_PT: f64 = 10.0;

impl BayesBars {
    fn label_width(&self, page: &Page) -> u32 {
        max_width(self.rows.iter().map(|r| r.0.as_str()), TEXT_PT).min(page.width() * 50 / 100)
            + upt(8.0)
    }

    fn entries(&self) -> Vec<Entry> {
        self.parts
            .iter()
            .zip(SHADES)
            .map(|(p, c)| Entry {
                label: p.clone(),
                color: c,
                dash: None,
                marker: None,
                swatch: true,
            })
            .collect()
    }
}

impl Figure for BayesBars {
    fn height(&self, page: &Page) -> u32 {
        let title = if page.titles { upt(TITLE_PT * 1.8) } else { 0 };
        title
            + upt(ROW_PT * self.rows.len() as f64 + 30.0)
            + legend::height(&self.entries(), page.width())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let root = super::style::titled(root, &self.title, page)?;
        let entries = self.entries();
        let lh = legend::height(&entries, page.width());
        let (main, legend_area) = root.split_vertically(root.dim_in_pixel().1 - lh);
        let n = self.rows.len();
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
            .x_desc(&self.x_desc)
            .axis_desc_style(font(TEXT_PT))
            .label_style(font(TICK_PT))
            .axis_style(BLACK.stroke_width(HAIRLINE))
            .bold_line_style(GRID.stroke_width(HAIRLINE))
            .light_line_style(TRANSPARENT)
            .set_all_tick_mark_size(upt(2.0))
            .draw()
            .map_err(de)?;
        let (bx, by) = main.get_base_pixel();
        for (i, r) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let mut x0 = 0.0;
            for (k, p) in [r.1, r.2, r.3].into_iter().enumerate() {
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
            main.draw(&Text::new(
                fit(&r.0, TEXT_PT, lw - upt(8.0)),
                (px - bx - pt(3.0), py - by),
                right_center(TEXT_PT),
            ))
            .map_err(de)?;
        }
        legend::draw(&legend_area, &entries)
    }

    fn csv(&self) -> String {
        let mut s = format!(
            "row,{},{},{}\n",
            csv_field(&self.parts[0]),
            csv_field(&self.parts[1]),
            csv_field(&self.parts[2])
        );
        for (a, l, e, r) in &self.rows {
            s.push_str(&format!("{},{l},{e},{r}\n", csv_field(a)));
        }
        s
    }
}
