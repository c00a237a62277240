//! Heat maps, each cell annotated with its value, on a perceptually uniform, colour-blind-safe
//! scale (viridis; dark = better): parameter studies over two parameters (e.g. ε1 × ε2, one map
//! per budget of the mean rank within the family), and the leaderboard's win-rate matrix.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{
    Page, TEXT_PT, TICK_PT, TITLE_PT, anchored, center, fit, font, max_width, pt, text_width, upt,
};
use super::{Figure, csv_field, de};

/// Mean ranks over a grid of two parameters, one heat map per panel.
pub struct HeatMaps {
    /// The figure's title.
    pub title: String,
    /// The parameter on the x axis.
    pub x_name: String,
    /// The parameter on the y axis.
    pub y_name: String,
    /// Its values, left to right.
    pub x_values: Vec<String>,
    /// Its values, bottom to top.
    pub y_values: Vec<String>,
    /// (panel caption, value `[y][x]`; NaN where there is none).
    pub panels: Vec<(String, Vec<Vec<f64>>)>,
    /// What the values are.
    pub scale: Scale,
}

/// What a heat map's values are, which sets its colour range, the cells' text and the legend.
#[derive(Clone, Debug, PartialEq)]
pub enum Scale {
    /// Mean ranks among `k` settings (1 = best, drawn darkest); the range spans the values
    /// shown.
    MeanRank {
        /// Settings in the family (ranks run from 1 to `k`).
        k: usize,
    },
    /// Shares in [0, 1] (higher = better, drawn darkest), named in the legend and the CSV.
    Share {
        /// What the share is, e.g. "win rate".
        name: String,
    },
}

/// viridis at eleven stops (matplotlib's table, every 25th entry).
const VIRIDIS: [(u8, u8, u8); 11] = [
    (68, 1, 84),
    (72, 36, 117),
    (65, 68, 135),
    (53, 95, 141),
    (42, 120, 142),
    (33, 145, 140),
    (34, 168, 132),
    (68, 191, 112),
    (122, 209, 81),
    (189, 223, 38),
    (253, 231, 37),
];

/// The viridis colour at t in [0, 1], and whether text on it should be white.
pub fn viridis(t: f64) -> (RGBColor, bool) {
    let t = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    let c = RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2));
    let luminance = 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
    (c, luminance < 140.0)
}

const CELL_H_PT: f64 = 12.0;

impl HeatMaps {
    /// The colour scale's range: the smallest and largest mean rank shown, rounded down and up
    /// to halves (at least half a rank wide).
    fn range(&self) -> (f64, f64) {
        let vals = self
            .panels
            .iter()
            .flat_map(|(_, g)| g.iter().flatten())
            .copied()
            .filter(|v| v.is_finite());
        let (mut lo, mut hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let k = match &self.scale {
            Scale::Share { .. } => return (0.0, 1.0),
            Scale::MeanRank { k } => *k,
        };
        if !lo.is_finite() {
            return (1.0, k.max(2) as f64);
        }
        lo = (lo * 2.0).floor() / 2.0;
        hi = (hi * 2.0).ceil() / 2.0;
        if hi - lo < 0.5 {
            hi = lo + 0.5;
        }
        (lo, hi)
    }

    /// The row labels' column: the widest label, at most 45 % of the page (longer labels are
    /// shortened with an ellipsis), plus a gap.
    fn y_label_width(&self, page: &Page) -> u32 {
        // Room the cells and the axis name leave on the page, never more than 45 % of it.
        let cells = self.cell_w() * self.x_values.len() as u32 + upt(8.0 + 14.0 + TEXT_PT * 2.0);
        let room = page
            .width()
            .saturating_sub(cells)
            .min(page.width() * 45 / 100);
        max_width(self.y_values.iter().map(|s| s.as_str()), TICK_PT).min(room) + upt(14.0)
    }

    fn cell_w(&self) -> u32 {
        (max_width(self.x_values.iter().map(|s| s.as_str()), TICK_PT) + upt(4.0))
            .max(text_width("10.0", TICK_PT) + upt(4.0))
            .max(upt(16.0))
    }

    fn panel_w(&self, page: &Page) -> u32 {
        self.y_label_width(page) + self.cell_w() * self.x_values.len() as u32 + upt(8.0)
    }

    fn grid(&self, page: &Page) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let cols = ((page.width() / self.panel_w(page).max(1)) as usize).clamp(1, n);
        (n.div_ceil(cols), cols)
    }

    fn panel_h(&self) -> u32 {
        upt(CELL_H_PT * self.y_values.len() as f64 + 36.0)
    }
}

impl HeatMaps {
    /// A cell's colour on the viridis scale (dark = better: a low mean rank, a high share) over
    /// the range shown, and whether its text is white.
    fn colour(&self, v: f64, lo: f64, hi: f64) -> (RGBColor, bool) {
        let t = (v - lo) / (hi - lo);
        viridis(match self.scale {
            Scale::MeanRank { .. } => t,
            Scale::Share { .. } => 1.0 - t,
        })
    }

    /// A cell's value as printed in it.
    fn cell_text(&self, v: f64) -> String {
        match self.scale {
            Scale::MeanRank { .. } => format!("{v:.1}"),
            Scale::Share { .. } => format!("{v:.2}"),
        }
    }

    /// The colour scale's labels at its dark (left) and light (right) ends.
    fn scale_labels(&self, lo: f64, hi: f64) -> (String, String) {
        match &self.scale {
            Scale::MeanRank { k } => (
                format!(
                    "mean rank among {k} settings (1 = best): {}",
                    super::style::fmt_number(lo)
                ),
                super::style::fmt_number(hi),
            ),
            Scale::Share { name } => (format!("{name}: 1"), "0".to_string()),
        }
    }

    /// One panel: its caption, the cells with their values, the tick labels and axis names.
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        caption: &str,
        grid: &[Vec<f64>],
        (lo, hi): (f64, f64),
        page: &Page,
    ) -> Result<()> {
        let (cw, ch) = (self.cell_w() as i32, pt(CELL_H_PT));
        let ylw = self.y_label_width(page) as i32;
        let aw = area.dim_in_pixel().0 as i32;
        let left = ((aw - self.panel_w(page) as i32) / 2).max(0) + ylw;
        let top = pt(TEXT_PT * 1.6);
        area.draw(&Text::new(
            fit(caption, TEXT_PT, aw as u32),
            (
                left + cw * self.x_values.len() as i32 / 2,
                pt(TEXT_PT * 0.7),
            ),
            center(TEXT_PT),
        ))
        .map_err(de)?;
        for (yi, row) in grid.iter().enumerate() {
            let y = top + ch * yi as i32;
            area.draw(&Text::new(
                fit(&self.y_values[yi], TICK_PT, (ylw - pt(14.0)).max(0) as u32),
                (left - pt(2.0), y + ch / 2),
                anchored(TICK_PT, HPos::Right, VPos::Center),
            ))
            .map_err(de)?;
            for (xi, v) in row.iter().enumerate() {
                let x = left + cw * xi as i32;
                if v.is_nan() {
                    continue;
                }
                let (c, white) = self.colour(*v, lo, hi);
                area.draw(&Rectangle::new(
                    [(x, y), (x + cw - 1, y + ch - 1)],
                    c.filled(),
                ))
                .map_err(de)?;
                let tc = if white { WHITE } else { BLACK };
                area.draw(&Text::new(
                    self.cell_text(*v),
                    (x + cw / 2, y + ch / 2),
                    center(TICK_PT).color(&tc),
                ))
                .map_err(de)?;
            }
        }
        let bottom = top + ch * grid.len() as i32;
        for (xi, xv) in self.x_values.iter().enumerate() {
            area.draw(&Text::new(
                xv.clone(),
                (left + cw * xi as i32 + cw / 2, bottom + pt(1.5)),
                anchored(TICK_PT, HPos::Center, VPos::Top),
            ))
            .map_err(de)?;
        }
        // Centred under the cells, moved in where that would leave the figure.
        let half = text_width(&self.x_name, TEXT_PT) as i32 / 2;
        let centre = left + cw * self.x_values.len() as i32 / 2;
        area.draw(&Text::new(
            self.x_name.clone(),
            (centre.min(aw - half).max(half), bottom + pt(10.0)),
            anchored(TEXT_PT, HPos::Center, VPos::Top),
        ))
        .map_err(de)?;
        area.draw(&Text::new(
            self.y_name.clone(),
            (left - ylw + pt(2.0), top + ch * grid.len() as i32 / 2),
            font(TEXT_PT)
                .pos(plotters::style::text_anchor::Pos::new(
                    HPos::Center,
                    VPos::Top,
                ))
                .transform(plotters::style::FontTransform::Rotate270),
        ))
        .map_err(de)?;
        Ok(())
    }

    /// The colour scale under the panels, centred with its labels.
    fn draw_scale<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (lo, hi): (f64, f64),
        page: &Page,
    ) -> Result<()> {
        let w = page.width() as i32;
        // Dark (better) on the left.
        let (left_label, right_label) = self.scale_labels(lo, hi);
        let left_label = left_label.as_str();
        let (wl, wr) = (
            text_width(left_label, TICK_PT) as i32,
            text_width(&right_label, TICK_PT) as i32,
        );
        let bar = (w - wl - wr - pt(16.0)).clamp(pt(20.0), pt(120.0));
        let x0 = (w - (wl + wr + bar + pt(6.0))) / 2 + wl + pt(3.0);
        let x1 = x0 + bar;
        let steps = 60;
        for s in 0..steps {
            let (c, _) = viridis(s as f64 / (steps - 1) as f64);
            let xa = x0 + (x1 - x0) * s / steps;
            let xb = x0 + (x1 - x0) * (s + 1) / steps;
            area.draw(&Rectangle::new([(xa, pt(3.0)), (xb, pt(7.0))], c.filled()))
                .map_err(de)?;
        }
        area.draw(&Text::new(
            left_label,
            (x0 - pt(3.0), pt(5.0)),
            anchored(TICK_PT, HPos::Right, VPos::Center),
        ))
        .map_err(de)?;
        area.draw(&Text::new(
            right_label,
            (x1 + pt(3.0), pt(5.0)),
            anchored(TICK_PT, HPos::Left, VPos::Center),
        ))
        .map_err(de)?;
        Ok(())
    }
}

impl Figure for HeatMaps {
    fn height(&self, page: &Page) -> u32 {
        let title = if page.titles { upt(TITLE_PT * 1.8) } else { 0 };
        let (rows, _) = self.grid(page);
        title + rows as u32 * self.panel_h() + upt(20.0)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let root = super::style::titled(root, &self.title, page)?;
        let (body, scale) = root.split_vertically(root.dim_in_pixel().1 - upt(20.0));
        let (rows, cols) = self.grid(page);
        let areas = body.split_evenly((rows, cols));
        // The colour scale spans the mean ranks shown (not 1..k, which would spend most of the
        // scale on values no setting has), rounded out to halves.
        let (lo, hi) = self.range();
        for ((caption, grid), area) in self.panels.iter().zip(&areas) {
            self.draw_panel(area, caption, grid, (lo, hi), page)?;
        }
        self.draw_scale(&scale, (lo, hi), page)
    }

    fn csv(&self) -> String {
        let mut s = format!(
            "panel,{},{},{}\n",
            csv_field(&self.x_name),
            csv_field(&self.y_name),
            match &self.scale {
                Scale::MeanRank { .. } => "mean_rank".to_string(),
                Scale::Share { name } => csv_field(&name.replace(' ', "_")),
            }
        );
        for (caption, grid) in &self.panels {
            for (yi, row) in grid.iter().enumerate() {
                for (xi, v) in row.iter().enumerate() {
                    s.push_str(&format!(
                        "{},{},{},{v}\n",
                        csv_field(caption),
                        csv_field(&self.x_values[xi]),
                        csv_field(&self.y_values[yi])
                    ));
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_runs_dark_to_light() {
        let (a, wa) = viridis(0.0);
        let (b, wb) = viridis(1.0);
        assert_eq!((a.0, a.1, a.2), (68, 1, 84));
        assert_eq!((b.0, b.1, b.2), (253, 231, 37));
        assert!(wa && !wb, "white text on dark cells only");
    }

    #[test]
    fn better_cells_are_dark_on_both_scales_and_the_labels_say_which_end_is_which() {
        let map = |scale| HeatMaps {
            title: String::new(),
            x_name: "x".into(),
            y_name: "y".into(),
            x_values: vec!["a".into()],
            y_values: vec!["b".into()],
            panels: vec![],
            scale,
        };
        let ranks = map(Scale::MeanRank { k: 4 });
        let dark = viridis(0.0).0;
        // The best mean rank shown (lo) and the highest win rate (1) are the dark end.
        assert_eq!(ranks.colour(1.5, 1.5, 3.5).0, dark);
        let shares = map(Scale::Share {
            name: "win rate".into(),
        });
        assert_eq!(shares.colour(1.0, 0.0, 1.0).0, dark);
        assert_eq!(ranks.cell_text(2.25), "2.2");
        assert_eq!(shares.cell_text(0.125), "0.12");
        assert_eq!(
            ranks.scale_labels(1.5, 3.5),
            (
                "mean rank among 4 settings (1 = best): 1.5".into(),
                "3.5".into()
            )
        );
        assert_eq!(
            shares.scale_labels(0.0, 1.0),
            ("win rate: 1".into(), "0".into())
        );
    }
}
