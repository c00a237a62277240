//! Line charts in side-by-side panels (parameter sweeps, counts against trials).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, color, csv_field, de, left_center, text_style, text_width};

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the palette.
    pub color: usize,
    pub dashed: bool,
}

pub struct Panel {
    pub caption: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    pub series: Vec<Series>,
}

pub struct Lines {
    pub title: String,
    pub panels: Vec<Panel>,
}

impl Lines {
    fn legend(&self) -> Vec<(String, usize, bool)> {
        let mut seen: Vec<(String, usize, bool)> = Vec::new();
        for p in &self.panels {
            for s in &p.series {
                if !seen.iter().any(|x| x.0 == s.name) {
                    seen.push((s.name.clone(), s.color, s.dashed));
                }
            }
        }
        seen
    }

    fn legend_width(&self) -> u32 {
        self.legend()
            .iter()
            .map(|l| text_width(&l.0, 12))
            .max()
            .unwrap_or(60)
            + 50
    }
}

impl Figure for Lines {
    fn size(&self) -> (u32, u32) {
        (
            420 * self.panels.len().max(1) as u32 + self.legend_width(),
            440,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let root = root.titled(&self.title, text_style(18)).map_err(de)?;
        let (plots, legend) = root.split_horizontally(root.dim_in_pixel().0 - self.legend_width());
        let areas = plots.split_evenly((1, self.panels.len().max(1)));
        for (p, area) in self.panels.iter().zip(&areas) {
            let mut chart = ChartBuilder::on(area)
                .caption(&p.caption, text_style(15))
                .margin(10)
                .x_label_area_size(44)
                .y_label_area_size(56)
                .build_cartesian_2d(p.x_range.0..p.x_range.1, p.y_range.0..p.y_range.1)
                .map_err(de)?;
            chart
                .configure_mesh()
                .x_desc(&p.x_desc)
                .y_desc(&p.y_desc)
                .axis_desc_style(text_style(14))
                .label_style(text_style(12))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(de)?;
            for s in &p.series {
                let c = color(s.color);
                if s.dashed {
                    for w in s.points.windows(2).step_by(2) {
                        chart
                            .draw_series(std::iter::once(PathElement::new(
                                vec![w[0], w[1]],
                                c.stroke_width(2),
                            )))
                            .map_err(de)?;
                    }
                } else {
                    chart
                        .draw_series(LineSeries::new(s.points.clone(), c.stroke_width(2)))
                        .map_err(de)?;
                }
            }
        }
        for (i, (name, c, dashed)) in self.legend().into_iter().enumerate() {
            let y = 40 + 20 * i as i32;
            let style = color(c).stroke_width(3);
            if dashed {
                for x in [8, 18] {
                    legend
                        .draw(&PathElement::new(vec![(x, y), (x + 6, y)], style))
                        .map_err(de)?;
                }
            } else {
                legend
                    .draw(&PathElement::new(vec![(8, y), (28, y)], style))
                    .map_err(de)?;
            }
            legend
                .draw(&Text::new(name, (34, y), left_center(12)))
                .map_err(de)?;
        }
        Ok(())
    }

    fn csv(&self) -> String {
        let mut s = String::from("panel,series,x,y\n");
        for p in &self.panels {
            for se in &p.series {
                for (x, y) in &se.points {
                    s.push_str(&format!(
                        "{},{},{x},{y}\n",
                        csv_field(&p.caption),
                        csv_field(&se.name)
                    ));
                }
            }
        }
        s
    }
}
