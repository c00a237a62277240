//! Line charts in side-by-side panels (parameter sweeps, counts against trials), each series
//! with an optional band (e.g. the spread over runs), a colour-blind-safe colour, line style and
//! marker, a shared legend underneath, and a log x axis where a panel asks for one.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{self, Entry};
use super::style::{
    LINE, Page, TITLE_PT, color, draw_marker, draw_polyline, fit_captions, fmt_number, font,
    marker, ticks_that_fit, upt,
};
use super::{Figure, csv_field, de};

/// One line of a panel.
pub struct Series {
    /// Its legend label.
    pub name: String,
    /// Its (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// (low, high) per point, drawn as a translucent band.
    pub band: Option<Vec<(f64, f64)>>,
    /// Index into the palette (colour and marker).
    pub color: usize,
    /// Drawn dashed.
    pub dashed: bool,
}

/// One panel of line plots.
pub struct Panel {
    /// The panel's caption.
    pub caption: String,
    /// The x axis' label.
    pub x_desc: String,
    /// The y axis' label.
    pub y_desc: String,
    /// The x axis' range.
    pub x_range: (f64, f64),
    /// The y axis' range.
    pub y_range: (f64, f64),
    /// A logarithmic x axis.
    pub log_x: bool,
    /// Its lines.
    pub series: Vec<Series>,
    /// Filled rectangles drawn under the lines (e.g. EAF differences).
    pub regions: Vec<Region>,
}

/// A filled rectangle of a panel, [x0, x1] × [y0, y1], in a palette colour at an opacity.
pub struct Region {
    /// One corner.
    pub x0: f64,
    /// One corner.
    pub y0: f64,
    /// The opposite corner.
    pub x1: f64,
    /// The opposite corner.
    pub y1: f64,
    /// Index into the palette.
    pub color: usize,
    /// Opacity in (0, 1].
    pub alpha: f64,
    /// The value the region stands for (written to the CSV).
    pub value: f64,
}

/// Line plots in panels side by side.
pub struct Lines {
    /// The figure's title.
    pub title: String,
    /// Its panels.
    pub panels: Vec<Panel>,
}

const PANEL_PT: f64 = 150.0;
const MIN_PANEL_W_PT: f64 = 150.0;

impl Lines {
    fn entries(&self) -> Vec<Entry> {
        let mut seen: Vec<Entry> = Vec::new();
        for p in &self.panels {
            for s in &p.series {
                if !seen.iter().any(|x| x.label == s.name) {
                    seen.push(Entry {
                        label: s.name.clone(),
                        color: color(s.color),
                        dash: s.dashed.then_some((upt(3.0), upt(2.0))),
                        marker: (!s.dashed).then_some(marker(s.color)),
                        swatch: false,
                    });
                }
            }
        }
        seen
    }

    fn grid(&self, page: &Page) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let fit = ((page.width() as f64 / (MIN_PANEL_W_PT * super::style::UNITS_PER_PT)).floor()
            as usize)
            .max(1);
        let cols = n.min(fit);
        (n.div_ceil(cols), cols)
    }
}

/// The most characters of a tick label on an axis over `range`, at the round steps (1, 2 or 5
/// times a power of ten, about six ticks) the axis draws.
fn widest_tick((y0, y1): (f64, f64)) -> usize {
    let raw = (y1 - y0) / 6.0;
    if !(raw.is_finite() && raw > 0.0) {
        return fmt_number(y0).chars().count();
    }
    let mag = 10f64.powf(raw.log10().floor());
    let step = mag
        * match raw / mag {
            r if r < 2.0 => 1.0,
            r if r < 5.0 => 2.0,
            _ => 5.0,
        };
    let first = (y0 / step).ceil() as i64;
    let last = (y1 / step).floor() as i64;
    (first..=last.min(first + 20))
        .map(|k| fmt_number(k as f64 * step).chars().count())
        .max()
        .unwrap_or(0)
}

impl Figure for Lines {
    fn height(&self, page: &Page) -> u32 {
        let title = if page.titles { upt(TITLE_PT * 1.8) } else { 0 };
        let (rows, _) = self.grid(page);
        title + rows as u32 * upt(PANEL_PT) + legend::height(&self.entries(), page.width())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let root = super::style::titled(root, &self.title, page)?;
        let entries = self.entries();
        let lh = legend::height(&entries, page.width());
        let (plots, legend_area) = root.split_vertically(root.dim_in_pixel().1 - lh);
        let areas = plots.split_evenly(self.grid(page));
        // Every panel's caption at one size (the panels are equally wide).
        let w0 = areas.first().map_or(0, |a| a.dim_in_pixel().0);
        let (captions, caption_pt) = fit_captions(
            self.panels.iter().map(|p| p.caption.as_str()),
            w0.saturating_sub(upt(4.0)),
        );
        for (pi, (p, area)) in self.panels.iter().zip(&areas).enumerate() {
            let w = area.dim_in_pixel().0;
            let mut builder = ChartBuilder::on(area);
            // Room for the y axis' widest tick label (e.g. 0.015) beside its description.
            let widest = widest_tick(p.y_range);
            builder
                .caption(captions[pi].clone(), font(caption_pt))
                .margin(upt(4.0))
                .margin_right(upt(8.0))
                .x_label_area_size(upt(22.0))
                // 26 pt holds tick labels of up to four characters (the layout tests' figures).
                .y_label_area_size(upt(if widest >= 5 {
                    14.0 + 4.6 * widest as f64
                } else {
                    26.0
                }));
            let (bx, by) = area.get_base_pixel();
            // One drawing routine for linear and log axes: a closure maps data to pixels.
            macro_rules! body {
                ($chart:expr, $xfmt:expr) => {{
                    let mut chart = $chart;
                    super::style::paper_mesh(&mut chart.configure_mesh())
                        .x_desc(&p.x_desc)
                        .y_desc(&p.y_desc)
                        .x_labels(
                            ticks_that_fit(w.saturating_sub(upt(34.0)), p.x_range.0, p.x_range.1)
                                .min(6),
                        )
                        .y_labels(6)
                        .x_label_formatter($xfmt)
                        .y_label_formatter(&|v| fmt_number(*v))
                        .draw()
                        .map_err(de)?;
                    for r in &p.regions {
                        let clamp = |v: f64, (lo, hi): (f64, f64)| v.clamp(lo.min(hi), lo.max(hi));
                        let a = (clamp(r.x0, p.x_range), clamp(r.y0, p.y_range));
                        let b = (clamp(r.x1, p.x_range), clamp(r.y1, p.y_range));
                        chart
                            .draw_series(std::iter::once(Rectangle::new(
                                [a, b],
                                color(r.color).mix(r.alpha).filled(),
                            )))
                            .map_err(de)?;
                    }
                    for s in &p.series {
                        let c = color(s.color);
                        if let Some(band) = &s.band {
                            let mut poly: Vec<(f64, f64)> = s
                                .points
                                .iter()
                                .zip(band)
                                .filter(|(_, b)| b.1.is_finite())
                                .map(|((x, _), b)| (*x, b.1.min(p.y_range.1)))
                                .collect();
                            let lower: Vec<(f64, f64)> = s
                                .points
                                .iter()
                                .zip(band)
                                .filter(|(_, b)| b.0.is_finite())
                                .map(|((x, _), b)| (*x, b.0.max(p.y_range.0)))
                                .rev()
                                .collect();
                            poly.extend(lower);
                            if poly.len() > 2 {
                                chart
                                    .draw_series(std::iter::once(Polygon::new(
                                        poly,
                                        c.mix(0.18).filled(),
                                    )))
                                    .map_err(de)?;
                            }
                        }
                        let px: Vec<(i32, i32)> = s
                            .points
                            .iter()
                            .filter(|(x, y)| x.is_finite() && y.is_finite())
                            .map(|pnt| {
                                let (x, y) = chart.backend_coord(pnt);
                                (x - bx, y - by)
                            })
                            .collect();
                        let dashes = s.dashed.then_some((upt(3.0), upt(2.0)));
                        draw_polyline(area, px.clone(), c.stroke_width(LINE), dashes)?;
                        if !s.dashed && !px.is_empty() {
                            let every = (px.len() / 8).max(1);
                            for q in px.iter().skip((s.color * every / 3) % every).step_by(every) {
                                draw_marker(area, marker(s.color), *q, upt(1.8) as i32, c)?;
                            }
                        }
                    }
                }};
            }
            let (x0, x1) = p.x_range;
            let yr = p.y_range.0..p.y_range.1;
            if p.log_x {
                let chart = builder
                    .build_cartesian_2d((x0.max(1e-12)..x1).log_scale(), yr)
                    .map_err(de)?;
                body!(chart, &|v: &f64| fmt_number(*v));
            } else {
                let chart = builder.build_cartesian_2d(x0..x1, yr).map_err(de)?;
                body!(chart, &|v: &f64| fmt_number(*v));
            }
        }
        legend::draw(&legend_area, &entries)
    }

    fn csv(&self) -> String {
        // Regions add the columns x1, y1 and value (a figure without them keeps four).
        let regions = self.panels.iter().any(|p| !p.regions.is_empty());
        let mut s = String::from(if regions {
            "panel,series,x,y,x1,y1,value\n"
        } else {
            "panel,series,x,y\n"
        });
        let tail = if regions { ",,," } else { "" };
        for p in &self.panels {
            for se in &p.series {
                for (x, y) in &se.points {
                    s.push_str(&format!(
                        "{},{},{x},{y}{tail}\n",
                        csv_field(&p.caption),
                        csv_field(&se.name)
                    ));
                }
            }
            for r in &p.regions {
                s.push_str(&format!(
                    "{},region,{},{},{},{},{}\n",
                    csv_field(&p.caption),
                    r.x0,
                    r.y0,
                    r.x1,
                    r.y1,
                    r.value
                ));
            }
        }
        s
    }
}
