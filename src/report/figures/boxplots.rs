//! Horizontal rank boxplots, one panel per budget (HAMLET Figs. 2–7): per policy (or per
//! parameter value) the box spans the quartiles, the line is the median, the open dot the mean,
//! whiskers reach the furthest point within 1.5 IQR, points beyond are grey circles. A legend
//! under the panels says so.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::style::{
    HAIRLINE, MID_GREY, OKABE_ITO, Page, TEXT_PT, THIN, TICK_PT, TITLE_PT, fit, fit_captions, font,
    left_center, max_width, pt, right_center, text_width, upt,
};
use super::{Figure, csv_field, de, quantile_sorted};

/// Up to this many whole ranks on the x axis, each gets a tick and a grid line.
const DENSE_TICKS: usize = 40;

/// Box plots of values per row, in one or more panels.
pub struct BoxPanels {
    /// The figure's title.
    pub title: String,
    /// The x axis' label.
    pub x_desc: String,
    /// Row labels, top to bottom.
    pub labels: Vec<String>,
    /// (panel caption, values per row).
    pub panels: Vec<(String, Vec<Vec<f64>>)>,
    /// The x axis' range, shared by the panels.
    pub x_range: (f64, f64),
}

const ROW_PT: f64 = 10.0;
/// Narrowest useful panel.
const MIN_PANEL_PT: f64 = 110.0;

impl BoxPanels {
    fn label_width(&self, page: &Page) -> u32 {
        max_width(self.labels.iter().map(|s| s.as_str()), TEXT_PT).min(page.width() * 40 / 100)
            + upt(8.0)
    }

    /// (rows, columns) of panels: as many per row as fit at `MIN_PANEL_PT`.
    fn grid(&self, page: &Page) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let room = page.width().saturating_sub(self.label_width(page)) as f64;
        let fit = ((room / (MIN_PANEL_PT * super::style::UNITS_PER_PT)).floor() as usize).max(1);
        let cols = n.min(fit);
        (n.div_ceil(cols), cols)
    }

    fn panel_height(&self) -> u32 {
        upt(ROW_PT * self.labels.len() as f64 + 12.0 + 14.0)
    }

    /// The shared axis title and the legend under the panels.
    fn legend_height() -> u32 {
        upt(12.0 + 14.0)
    }
}

impl Figure for BoxPanels {
    fn height(&self, page: &Page) -> u32 {
        let (rows, _) = self.grid(page);
        let title = if page.titles { upt(TITLE_PT * 1.8) } else { 0 };
        title + rows as u32 * self.panel_height() + Self::legend_height()
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let root = super::style::titled(root, &self.title, page)?;
        let (body, legend) = root.split_vertically(root.dim_in_pixel().1 - Self::legend_height());
        let lw = self.label_width(page);
        let (rows, cols) = self.grid(page);
        let (labels_col, plots) = body.split_horizontally(lw);
        let label_rows = labels_col.split_evenly((rows, 1));
        let areas = plots.split_evenly((rows, cols));
        let n = self.labels.len();
        let (x0, x1) = self.x_range;
        let c = OKABE_ITO[0];
        let panel_w = areas.first().map_or(1, |a| a.dim_in_pixel().0);
        // Ranks are whole numbers: label whole-number ticks, as many as fit.
        let span = (x1 - x0).round().max(1.0) as usize;
        let widest = text_width(&format!("{}", x1.floor()), TICK_PT) + upt(6.0);
        let every = (1..=span)
            .find(|s| (panel_w as f64 * *s as f64 / (x1 - x0)) >= widest as f64)
            .unwrap_or(span);
        // Every panel's caption at one size.
        let (captions, caption_pt) = fit_captions(
            self.panels.iter().map(|(c, _)| c.as_str()),
            panel_w - upt(4.0),
        );
        for (pi, ((_, values), area)) in self.panels.iter().zip(&areas).enumerate() {
            let labels_area = &label_rows[pi / cols];
            let mut chart = ChartBuilder::on(area)
                .caption(captions[pi].clone(), font(caption_pt))
                .margin_left(upt(3.0))
                .margin_right(upt(5.0))
                .x_label_area_size(upt(12.0))
                .y_label_area_size(0)
                .build_cartesian_2d(x0..x1, -0.6f64..(n as f64 - 0.4))
                .map_err(de)?;
            super::style::paper_mesh(&mut chart.configure_mesh())
                .disable_y_mesh()
                .y_labels(0)
                // A tick and grid line per whole rank while they are few; past that plotters'
                // round steps (a line per rank of 1 000 made a striped panel).
                .x_labels(if span <= DENSE_TICKS {
                    span + 1
                } else {
                    (span / every + 1).min(DENSE_TICKS / 3)
                })
                .x_label_formatter(&|v| {
                    let r = v.round();
                    if span > DENSE_TICKS {
                        if (v - r).abs() < 1e-9 {
                            format!("{r}")
                        } else {
                            String::new()
                        }
                    } else if (v - r).abs() < 1e-9
                        && (r as i64 - x0.ceil() as i64) % every as i64 == 0
                    {
                        format!("{r}")
                    } else {
                        String::new()
                    }
                })
                .draw()
                .map_err(de)?;
            for (i, vals) in values.iter().enumerate() {
                let y = (n - 1 - i) as f64;
                if pi % cols == 0 {
                    // backend_coord is absolute; the label area has its own origin.
                    let (_, py) = chart.backend_coord(&(x0, y));
                    let (_, by) = labels_area.get_base_pixel();
                    labels_area
                        .draw(&Text::new(
                            fit(&self.labels[i], TEXT_PT, lw - upt(8.0)),
                            (lw as i32 - pt(3.0), py - by),
                            right_center(TEXT_PT),
                        ))
                        .map_err(de)?;
                }
                if let Some(b) = BoxStats::of(vals) {
                    draw_box(&mut chart, &b, y, c)?;
                }
            }
        }
        draw_legend(
            &legend,
            lw,
            plots.dim_in_pixel().0 as i32,
            &self.x_desc,
            page,
        )
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

/// One row's box: quartiles and median, Tukey's whiskers (the furthest values within 1.5 IQR of
/// the box), the mean, and the values beyond the whiskers.
#[derive(Debug, PartialEq)]
struct BoxStats {
    q1: f64,
    median: f64,
    q3: f64,
    lo: f64,
    hi: f64,
    mean: f64,
    outliers: Vec<f64>,
}

impl BoxStats {
    /// The box of `vals` without their NaNs; none when nothing is left.
    fn of(vals: &[f64]) -> Option<BoxStats> {
        let mut v: Vec<f64> = vals.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let (q1, median, q3) = (
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
        let outliers = v.iter().copied().filter(|x| *x < lo || *x > hi).collect();
        Some(BoxStats {
            q1,
            median,
            q3,
            lo,
            hi,
            mean,
            outliers,
        })
    }
}

/// Draw one box at row `y`: the filled box, the median line, the whiskers with their caps, the
/// mean as an open dot and the outliers as grey circles.
fn draw_box<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    b: &BoxStats,
    y: f64,
    c: RGBColor,
) -> Result<()> {
    let BoxStats {
        q1,
        median: med,
        q3,
        lo,
        hi,
        mean,
        ..
    } = *b;
    let h = 0.3;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(q1, y - h), (q3, y + h)],
            c.mix(0.3).filled(),
        )))
        .map_err(de)?;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(q1, y - h), (q3, y + h)],
            c.stroke_width(HAIRLINE),
        )))
        .map_err(de)?;
    for (seg, w) in [
        (vec![(med, y - h), (med, y + h)], THIN + 1),
        (vec![(lo, y), (q1, y)], HAIRLINE),
        (vec![(q3, y), (hi, y)], HAIRLINE),
        (vec![(lo, y - h / 2.0), (lo, y + h / 2.0)], HAIRLINE),
        (vec![(hi, y - h / 2.0), (hi, y + h / 2.0)], HAIRLINE),
    ] {
        chart
            .draw_series(std::iter::once(PathElement::new(
                seg,
                BLACK.stroke_width(w),
            )))
            .map_err(de)?;
    }
    chart
        .draw_series(std::iter::once(Circle::new(
            (mean, y),
            pt(1.5),
            WHITE.filled(),
        )))
        .map_err(de)?;
    chart
        .draw_series(std::iter::once(Circle::new(
            (mean, y),
            pt(1.5),
            BLACK.stroke_width(HAIRLINE),
        )))
        .map_err(de)?;
    chart
        .draw_series(
            b.outliers
                .iter()
                .map(|&o| Circle::new((o, y), pt(0.9), MID_GREY.stroke_width(HAIRLINE))),
        )
        .map_err(de)?;
    Ok(())
}

/// The shared axis title under the panels (label column `lw` wide, panels `plots_w`), and a
/// legend that says what each mark is.
fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    lw: u32,
    plots_w: i32,
    x_desc: &str,
    page: &Page,
) -> Result<()> {
    let c = OKABE_ITO[0];
    // One axis title for all panels, centred under them (panels side by side would
    // overlap theirs).
    legend
        .draw(&Text::new(
            x_desc.to_string(),
            (lw as i32 + plots_w / 2, pt(5.0)),
            super::style::center(TEXT_PT),
        ))
        .map_err(de)?;
    // The legend: what each mark is.
    let y = pt(12.0 + 7.0);
    let mut x = lw as i32;
    let box_h = pt(3.0);
    legend
        .draw(&Rectangle::new(
            [(x, y - box_h), (x + pt(8.0), y + box_h)],
            c.mix(0.3).filled(),
        ))
        .map_err(de)?;
    legend
        .draw(&Rectangle::new(
            [(x, y - box_h), (x + pt(8.0), y + box_h)],
            c.stroke_width(HAIRLINE),
        ))
        .map_err(de)?;
    legend
        .draw(&PathElement::new(
            vec![(x + pt(4.0), y - box_h), (x + pt(4.0), y + box_h)],
            BLACK.stroke_width(THIN + 1),
        ))
        .map_err(de)?;
    x += pt(10.0);
    let items = [
        "quartiles, line = median",
        "mean",
        "whiskers: 1.5 IQR; grey circles beyond",
    ];
    legend
        .draw(&Text::new(items[0], (x, y), left_center(TICK_PT)))
        .map_err(de)?;
    x += text_width(items[0], TICK_PT) as i32 + pt(8.0);
    legend
        .draw(&Circle::new(
            (x + pt(1.5), y),
            pt(1.5),
            BLACK.stroke_width(HAIRLINE),
        ))
        .map_err(de)?;
    x += pt(5.0);
    legend
        .draw(&Text::new(items[1], (x, y), left_center(TICK_PT)))
        .map_err(de)?;
    x += text_width(items[1], TICK_PT) as i32 + pt(8.0);
    if x + (text_width(items[2], TICK_PT) as i32) < page.width() as i32 {
        legend
            .draw(&Text::new(items[2], (x, y), left_center(TICK_PT)))
            .map_err(de)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_has_tukeys_whiskers_and_the_values_beyond_them_as_outliers() {
        // Quartiles of 1..=8 and 30 (linear interpolation): 3, 5, 7; IQR 4, fences −3 and 13.
        let b = BoxStats::of(&[5.0, 1.0, f64::NAN, 2.0, 3.0, 30.0, 4.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (3.0, 5.0, 7.0));
        assert_eq!((b.lo, b.hi), (1.0, 8.0));
        assert_eq!(b.outliers, [30.0]);
        assert!((b.mean - 66.0 / 9.0).abs() < 1e-12);
        assert_eq!(BoxStats::of(&[f64::NAN]), None);
        let one = BoxStats::of(&[2.0]).unwrap();
        assert_eq!((one.lo, one.q1, one.q3, one.hi), (2.0, 2.0, 2.0, 2.0));
    }
}
