//! Figures drawn with plotters into SVG and PNG, with DejaVu Sans embedded (the `dejavu` crate)
//! so that text renders on a machine without system fonts. Every figure is drawn once per backend
//! by the same code, and writes the data it draws as CSV next to the images.

mod allocation;
mod anytime;
mod bayes;
mod boxplots;
mod cd;
mod lines;
mod mean_rank;

pub use allocation::Allocation;
pub use anytime::Anytime;
pub use bayes::BayesBars;
pub use boxplots::BoxPanels;
pub use cd::CdDiagram;
pub use lines::{Lines, Panel, Series};
pub use mean_rank::MeanRankFigure;

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const FONT: &str = "sans-serif";

static FONTS: Once = Once::new();

fn register_fonts() {
    FONTS.call_once(|| {
        use plotters::style::{FontStyle, register_font};
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Map any drawing error into anyhow (plotters' error types are backend-generic).
pub(crate) fn de<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e:?}")
}

/// A figure: its size, how to draw it on any backend, and the CSV of what it draws.
pub trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>;
    fn csv(&self) -> String;
}

/// Write `<name>.svg`, `<name>.png` and `<name>.csv` into `dir`.
pub fn save(fig: &impl Figure, dir: &Path, name: &str) -> Result<Vec<PathBuf>> {
    register_fonts();
    let svg = dir.join(format!("{name}.svg"));
    let png = dir.join(format!("{name}.png"));
    let csv = dir.join(format!("{name}.csv"));
    {
        let root = SVGBackend::new(&svg, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        fig.draw(&root)?;
        root.present().map_err(de)?;
    }
    {
        let root = BitMapBackend::new(&png, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        fig.draw(&root)?;
        root.present().map_err(de)?;
    }
    std::fs::write(&csv, fig.csv())?;
    Ok(vec![svg, png, csv])
}

/// Ten distinct colours (Tableau 10), then ten lighter ones.
pub fn color(i: usize) -> RGBColor {
    const C: [(u8, u8, u8); 20] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
        (174, 199, 232),
        (255, 187, 120),
        (152, 223, 138),
        (255, 152, 150),
        (197, 176, 213),
        (196, 156, 148),
        (247, 182, 210),
        (199, 199, 199),
        (219, 219, 141),
        (158, 218, 229),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

pub fn text_style(size: u32) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font())
}

pub fn right_center(size: u32) -> TextStyle<'static> {
    text_style(size).pos(Pos::new(HPos::Right, VPos::Center))
}

pub fn left_center(size: u32) -> TextStyle<'static> {
    text_style(size).pos(Pos::new(HPos::Left, VPos::Center))
}

pub fn center(size: u32) -> TextStyle<'static> {
    text_style(size).pos(Pos::new(HPos::Center, VPos::Center))
}

/// Approximate width in pixels of `s` at font size `size` (DejaVu Sans averages ~0.6 em).
pub fn text_width(s: &str, size: u32) -> u32 {
    (s.chars().count() as f64 * size as f64 * 0.6).ceil() as u32
}

/// Quote a CSV field when needed.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Linear-interpolation quantile of sorted data (numpy's default).
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}
