//! A legend laid out in as many columns as fit the page, under the panels: each entry a short
//! line in the series' colour and dash pattern with its marker, or a filled swatch.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::de;
use super::style::{
    LINE, Marker, TICK_PT, draw_marker, draw_polyline, fit, left_center, max_width, pt, upt,
};

#[derive(Clone, Debug)]
pub struct Entry {
    pub label: String,
    pub color: RGBColor,
    pub dash: Option<(u32, u32)>,
    pub marker: Option<Marker>,
    /// A filled swatch instead of a line.
    pub swatch: bool,
}

const ROW_PT: f64 = 9.5;
const KEY_PT: f64 = 14.0;

/// (columns, rows, column width) for `entries` across `width` units.
fn grid(entries: &[Entry], width: u32) -> (usize, usize, u32) {
    let col = max_width(entries.iter().map(|e| e.label.as_str()), TICK_PT) + upt(KEY_PT + 8.0);
    let width = width.saturating_sub(upt(8.0));
    let cols = ((width / col.max(1)) as usize).clamp(1, entries.len().max(1));
    let rows = entries.len().div_ceil(cols);
    (cols, rows, (width / cols as u32).min(col.max(width / 4)))
}

/// The height the legend needs across `width` units.
pub fn height(entries: &[Entry], width: u32) -> u32 {
    if entries.is_empty() {
        return 0;
    }
    let (_, rows, _) = grid(entries, width);
    upt(ROW_PT * rows as f64 + 4.0)
}

/// Draw the legend into `area` (column-major: read down, then across).
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[Entry]) -> Result<()> {
    let width = area.dim_in_pixel().0;
    let (cols, rows, col_w) = grid(entries, width);
    let left = ((width - col_w * cols as u32) / 2) as i32 + pt(4.0);
    for (i, e) in entries.iter().enumerate() {
        let (c, r) = (i / rows, i % rows);
        let x = left + c as i32 * col_w as i32;
        let y = pt(2.0 + ROW_PT * (r as f64 + 0.5));
        if e.swatch {
            area.draw(&Rectangle::new(
                [
                    (x + pt(3.0), y - pt(3.0)),
                    (x + pt(KEY_PT - 3.0), y + pt(3.0)),
                ],
                e.color.filled(),
            ))
            .map_err(de)?;
        } else {
            draw_polyline(
                area,
                vec![(x, y), (x + pt(KEY_PT), y)],
                e.color.stroke_width(LINE),
                e.dash,
            )?;
            if let Some(m) = e.marker {
                draw_marker(area, m, (x + pt(KEY_PT / 2.0), y), pt(1.8), e.color)?;
            }
        }
        let room = col_w.saturating_sub(upt(KEY_PT + 6.0));
        area.draw(&Text::new(
            fit(&e.label, TICK_PT, room),
            (x + pt(KEY_PT + 3.0), y),
            left_center(TICK_PT),
        ))
        .map_err(de)?;
    }
    Ok(())
}
