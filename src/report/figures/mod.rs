//! Figures for papers: drawn with plotters at a physical width (one column, two columns, or any),
//! then written as a vector PDF with its font embedded, an SVG whose text is paths, a PNG at
//! 300 dpi, and the CSV of what they draw. Text is shaped with rustybuzz on DejaVu Sans (the
//! `dejavu` crate), so figures look the same on any machine. `style` holds sizes, palette and
//! text metrics; `layout` checks that no two labels overlap.

pub(crate) mod allocation;
mod anytime;
mod bayes;
mod boxplots;
pub(crate) mod cd;
mod hbars;
mod heatmap;
pub(crate) mod layout;
mod legend;
mod lines;
mod mean_rank;
pub(crate) mod style;

pub use allocation::Allocation;
pub use anytime::Anytime;
pub use bayes::BayesBars;
pub use boxplots::BoxPanels;
pub use cd::CdDiagram;
pub use heatmap::{HeatMaps, Scale};
pub use layout::{outside, overlapping, text_boxes};
pub use lines::{Lines, Panel, Region, Series};
pub use mean_rank::MeanRankFigure;
pub use style::{COLUMN_IN, PAGE_IN, Page, UNITS_PER_PT};

use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Once};

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use style::FONT;

static FONTS: Once = Once::new();

/// plotters measures text (for its own axis layout) with the fonts registered here.
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

/// A figure: its height at a page width, how to draw it on any backend, and the CSV of what it
/// draws. Sizes are in drawing units (`style::UNITS_PER_PT` to a point).
pub trait Figure {
    /// Its height in drawing units at the page's width.
    fn height(&self, page: &Page) -> u32;
    /// Draw it on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()>;
    /// What it draws, as CSV.
    fn csv(&self) -> String;
}

/// The SVG plotters draws for `fig` at `page`, before text becomes paths; its root states the
/// size in points. Tests read its `<text>` elements (`layout::text_boxes`).
pub fn render(fig: &impl Figure, page: &Page) -> Result<String> {
    register_fonts();
    let size = (page.width(), fig.height(page));
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        fig.draw(&root, page)?;
        root.present().map_err(de)?;
    }
    let from = format!("width=\"{}\" height=\"{}\"", size.0, size.1);
    let to = format!(
        "width=\"{}pt\" height=\"{}pt\"",
        size.0 as f64 / UNITS_PER_PT,
        size.1 as f64 / UNITS_PER_PT
    );
    Ok(xml_safe(text.replacen(&from, &to, 1)))
}

/// The SVG with every character XML 1.0 does not allow (control characters other than tab,
/// line feed and carriage return; U+FFFE, U+FFFF) replaced by U+FFFD. Labels come from results
/// files and other tools' names, which may hold them (an ESC, a NUL); plotters escapes markup
/// but not these, and a reader then refuses the whole figure. Every figure passes through here.
fn xml_safe(text: String) -> String {
    let bad = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    if !text.contains(bad) {
        return text;
    }
    text.chars()
        .map(|c| if bad(c) { '\u{fffd}' } else { c })
        .collect()
}

/// Write `<name>.pdf`, `<name>.svg`, `<name>.png` (300 dpi) and `<name>.csv` into `dir`.
///
/// plotters draws the SVG; usvg reads it back with DejaVu Sans as the only font and shapes its
/// text with rustybuzz (kerning, no gaps inside words). From that one tree krilla writes the
/// vector PDF with the font subset embedded, resvg rasterises the PNG, and usvg writes the SVG
/// again with its text as paths, so it renders the same without any font installed.
pub fn save(fig: &impl Figure, dir: &Path, name: &str, page: &Page) -> Result<Vec<PathBuf>> {
    // Figure names hold policy families read from results files: never a path of their own.
    let name = &crate::names::file_part(name);
    let svg = dir.join(format!("{name}.svg"));
    let png = dir.join(format!("{name}.png"));
    let pdf = dir.join(format!("{name}.pdf"));
    let csv = dir.join(format!("{name}.csv"));
    let text = render(fig, page)?;
    let tree = resvg::usvg::Tree::from_str(&text, &USVG_OPTIONS)
        .map_err(|e| anyhow!("{}: cannot be read back: {e}", svg.display()))?;
    // usvg sizes are CSS pixels (1/96 in).
    let scale = PNG_DPI / 96.0;
    let size = tree.size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    )
    .ok_or_else(|| anyhow!("{}: empty figure", png.display()))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let bytes = pixmap
        .encode_png()
        .map_err(|e| anyhow!("{}: cannot encode: {e}", png.display()))?;
    let doc =
        pdf_of(&tree).map_err(|e| anyhow!("{}: cannot convert to PDF: {e}", pdf.display()))?;
    let paths = tree.to_string(&resvg::usvg::WriteOptions {
        coordinates_precision: 3,
        transforms_precision: 4,
        ..Default::default()
    });
    for (path, bytes) in [
        (&pdf, doc.as_slice()),
        (&svg, paths.as_bytes()),
        (&png, bytes.as_slice()),
        (&csv, fig.csv().as_bytes()),
    ] {
        std::fs::write(path, bytes)
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(vec![pdf, svg, png, csv])
}

/// The vector PDF of a figure's tree, its page the figure's physical size (CSS pixels of 1/96 in
/// to PDF points of 1/72 in), the text embedded as text in the font subset. krilla (typst's PDF
/// writer, which writes the same bytes for the same figure) draws it; svg2pdf, archived in 2026,
/// ordered its resources by a hash map, so its PDFs differed from run to run.
fn pdf_of(tree: &resvg::usvg::Tree) -> Result<Vec<u8>> {
    use krilla_svg::{SurfaceExt, SvgSettings};
    let size = tree.size();
    let (w, h) = (size.width() * 0.75, size.height() * 0.75);
    let page_size = krilla::geom::Size::from_wh(w, h).ok_or_else(|| anyhow!("an empty page"))?;
    let mut doc = krilla::Document::new();
    let mut page = doc.start_page_with(krilla::page::PageSettings::new(page_size));
    let mut surface = page.surface();
    surface
        .draw_svg(tree, page_size, SvgSettings::default())
        .ok_or_else(|| anyhow!("krilla cannot draw the figure"))?;
    surface.finish();
    page.finish();
    doc.finish().map_err(|e| anyhow!("{e:?}"))
}

/// Resolution of the PNGs.
pub const PNG_DPI: f32 = 300.0;

/// usvg's options: DejaVu Sans (regular and bold, from the `dejavu` crate) is the only font and
/// the sans-serif family, so figures render the same on any machine.
static USVG_OPTIONS: LazyLock<resvg::usvg::Options<'static>> = LazyLock::new(|| {
    let mut db = resvg::usvg::fontdb::Database::new();
    db.load_font_data(dejavu::sans::regular().to_vec());
    db.load_font_data(dejavu::sans::bold().to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    resvg::usvg::Options {
        fontdb: std::sync::Arc::new(db),
        font_family: "DejaVu Sans".to_string(),
        ..Default::default()
    }
});

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
