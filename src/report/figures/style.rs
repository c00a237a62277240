//! The physical page a figure is drawn for, and everything that follows from it: font sizes in
//! points, stroke widths, the colour-blind-safe palette with line styles and markers, exact text
//! widths (measured with rustybuzz on DejaVu Sans, the shaper and font that render the figure),
//! and tick-label formatting.
//!
//! Figures are laid out in drawing units of a quarter point (`UNITS_PER_PT`): a one-column figure
//! (3.3 in) is 950 units wide, a two-column one (6.9 in) 1987. The SVG's root says the size in
//! points, so a PDF, a PNG at 300 dpi and the SVG all come out at the width the paper needs.

use std::sync::LazyLock;

use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Drawing units per typographic point.
pub const UNITS_PER_PT: f64 = 4.0;

/// Font sizes in points; nothing is smaller than 7 pt at the chosen width.
pub const TICK_PT: f64 = 7.0;
pub const TEXT_PT: f64 = 8.0;
pub const TITLE_PT: f64 = 8.5;

/// The font family every figure asks for; `save` maps it to DejaVu Sans.
pub const FONT: &str = "sans-serif";

/// plotters writes `font-size = size / 1.24` into the SVG (plotters-svg 0.3.7, `draw_text`);
/// styles are built with this factor so the SVG says the size asked for.
const PLOTTERS_FONT_FACTOR: f64 = 1.24;

/// One column of a two-column paper, in inches (ACM, IEEE, NeurIPS single column is ~5.5).
pub const COLUMN_IN: f64 = 3.3;
/// The full text width of a two-column paper, in inches.
pub const PAGE_IN: f64 = 6.9;

/// The width a figure is drawn for, and whether it carries its own title (a paper's caption
/// usually replaces it).
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// Page (or column) width in inches.
    pub width_in: f64,
    /// Draw the figure's own title.
    pub titles: bool,
}

impl Default for Page {
    fn default() -> Self {
        Page {
            width_in: PAGE_IN,
            titles: true,
        }
    }
}

impl Page {
    /// `column` (3.3 in), `page` (6.9 in), or a width in inches ("5.5", "5.5in").
    pub fn parse_width(s: &str) -> Result<f64, String> {
        let v = match s.trim() {
            "column" => COLUMN_IN,
            "page" => PAGE_IN,
            other => other
                .trim_end_matches("in")
                .trim()
                .parse::<f64>()
                .map_err(|_| {
                    format!(
                        "'{s}' is not a width: give column (3.3 in), page (6.9 in) or inches, e.g. 5.5"
                    )
                })?,
        };
        if !(1.5..=20.0).contains(&v) {
            return Err(format!(
                "a width of {v} in is outside 1.5-20 in: give column, page or inches"
            ));
        }
        Ok(v)
    }

    /// The width in drawing units.
    pub fn width(&self) -> u32 {
        (self.width_in * 72.0 * UNITS_PER_PT).round() as u32
    }

    /// Whether the page is narrow (about one column): figures stack panels and shorten labels.
    pub fn narrow(&self) -> bool {
        self.width_in < 5.0
    }
}

/// Points to drawing units.
pub fn pt(x: f64) -> i32 {
    (x * UNITS_PER_PT).round() as i32
}

/// Points to drawing units, unsigned (sizes).
pub fn upt(x: f64) -> u32 {
    (x * UNITS_PER_PT).round().max(0.0) as u32
}

/// A text style of `size` points.
pub fn font(size: f64) -> TextStyle<'static> {
    TextStyle::from((FONT, size * UNITS_PER_PT * PLOTTERS_FONT_FACTOR).into_font())
}

pub fn bold(size: f64) -> TextStyle<'static> {
    TextStyle::from(
        (
            FONT,
            size * UNITS_PER_PT * PLOTTERS_FONT_FACTOR,
            FontStyle::Bold,
        )
            .into_font(),
    )
}

pub fn anchored(size: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    font(size).pos(Pos::new(h, v))
}

pub fn right_center(size: f64) -> TextStyle<'static> {
    anchored(size, HPos::Right, VPos::Center)
}

pub fn left_center(size: f64) -> TextStyle<'static> {
    anchored(size, HPos::Left, VPos::Center)
}

pub fn center(size: f64) -> TextStyle<'static> {
    anchored(size, HPos::Center, VPos::Center)
}

/// The axes every chart shares: 8 pt axis titles, 7 pt tick labels, hairline axes, light grey
/// major grid lines, no minor ones, short ticks.
pub fn paper_mesh<'a, 'b, 'c, X, Y, DB>(
    m: &'c mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'c mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
    DB: DrawingBackend,
{
    let (desc, ticks): (TextStyle<'b>, TextStyle<'b>) = (font(TEXT_PT), font(TICK_PT));
    m.axis_desc_style(desc)
        .label_style(ticks)
        .axis_style(BLACK.stroke_width(HAIRLINE))
        .bold_line_style(GRID.stroke_width(HAIRLINE))
        .light_line_style(TRANSPARENT)
        .set_all_tick_mark_size(upt(2.0))
}

/// Stroke widths in drawing units.
pub const HAIRLINE: u32 = 2; // 0.5 pt
pub const THIN: u32 = 3; // 0.75 pt
pub const LINE: u32 = 5; // 1.25 pt

/// A light grey for grid lines, and a mid grey for secondary marks.
pub const GRID: RGBColor = RGBColor(228, 228, 228);
pub const MID_GREY: RGBColor = RGBColor(140, 140, 140);

/// Okabe & Ito (2008), "Color Universal Design": eight colours told apart with every common
/// colour-vision deficiency. Yellow is last (weak on white); black after it.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// The i-th series colour. Past eight, colours repeat with another line style and marker
/// (`dash` and `marker`), so every series stays distinct in colour and in greyscale.
pub fn color(i: usize) -> RGBColor {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// Line dash pattern for series i: (dash, gap) in drawing units, `None` for solid. The first
/// eight series are solid in distinct colours; the next eight dashed, then dotted, then dash-dot.
pub fn dash(i: usize) -> Option<(u32, u32)> {
    match (i / OKABE_ITO.len()) % 3 {
        0 => None,
        1 => Some((upt(3.0), upt(2.0))),
        _ => Some((upt(1.0), upt(1.5))),
    }
}

/// Marker shapes, cycled so that neighbours in the palette differ in shape too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

pub fn marker(i: usize) -> Marker {
    const M: [Marker; 5] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
        Marker::Cross,
    ];
    M[i % M.len()]
}

/// Draw `m` centred at backend coordinate `c` with radius `r` drawing units.
pub fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    m: Marker,
    c: (i32, i32),
    r: i32,
    col: RGBColor,
) -> anyhow::Result<()> {
    let (x, y) = c;
    let filled = col.filled();
    let res = match m {
        Marker::Circle => area.draw(&Circle::new(c, r, filled)),
        Marker::Square => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], filled)),
        Marker::Triangle => area.draw(&Polygon::new(
            vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
            filled,
        )),
        Marker::Diamond => area.draw(&Polygon::new(
            vec![
                (x, y - r - 1),
                (x + r + 1, y),
                (x, y + r + 1),
                (x - r - 1, y),
            ],
            filled,
        )),
        Marker::Cross => {
            let s = col.stroke_width(THIN);
            area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], s))
                .and_then(|_| area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], s)))
        }
    };
    res.map_err(super::de)
}

/// Draw a polyline in backend coordinates, solid or dashed.
pub fn draw_polyline<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    pts: Vec<(i32, i32)>,
    style: ShapeStyle,
    dashes: Option<(u32, u32)>,
) -> anyhow::Result<()> {
    match dashes {
        None => area.draw(&PathElement::new(pts, style)),
        Some((d, g)) => area.draw(&plotters::element::DashedPathElement::new(pts, d, g, style)),
    }
    .map_err(super::de)
}

static FACES: LazyLock<(rustybuzz::Face<'static>, rustybuzz::Face<'static>)> =
    LazyLock::new(|| {
        (
            rustybuzz::Face::from_slice(dejavu::sans::regular(), 0).expect("DejaVu Sans loads"),
            rustybuzz::Face::from_slice(dejavu::sans::bold(), 0).expect("DejaVu Sans Bold loads"),
        )
    });

/// The advance width of `s` set in DejaVu Sans at `size` points, in drawing units: the same
/// shaping (rustybuzz, with kerning) that renders the figure.
pub fn text_width(s: &str, size: f64) -> u32 {
    text_width_face(s, size, false)
}

pub fn bold_width(s: &str, size: f64) -> u32 {
    text_width_face(s, size, true)
}

fn text_width_face(s: &str, size: f64, is_bold: bool) -> u32 {
    if s.is_empty() {
        return 0;
    }
    let face = if is_bold { &FACES.1 } else { &FACES.0 };
    let mut buf = rustybuzz::UnicodeBuffer::new();
    buf.push_str(s);
    let glyphs = rustybuzz::shape(face, &[], buf);
    let advance: i64 = glyphs
        .glyph_positions()
        .iter()
        .map(|p| p.x_advance as i64)
        .sum();
    (advance as f64 / face.units_per_em() as f64 * size * UNITS_PER_PT).ceil() as u32
}

/// The widest of `labels` at `size` points.
pub fn max_width<'a>(labels: impl IntoIterator<Item = &'a str>, size: f64) -> u32 {
    labels
        .into_iter()
        .map(|l| text_width(l, size))
        .max()
        .unwrap_or(0)
}

/// A number for a tick label or caption: integers without ".0", at most four significant
/// digits otherwise, a real minus sign, and 10^k for very large or small magnitudes.
pub fn fmt_number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let minus = |s: String| s.replacen('-', "\u{2212}", 1);
    if (x - x.round()).abs() < 1e-9 * x.abs().max(1.0) && x.abs() < 1e7 {
        return minus(format!("{}", x.round() as i64));
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..7).contains(&mag) {
        let m = x / 10f64.powi(mag);
        let m = fmt_number(m);
        let m = if m == "1" {
            String::new()
        } else {
            format!("{m}\u{00d7}")
        };
        return minus(format!("{m}10{}", superscript(mag)));
    }
    let digits = (3 - mag).max(0) as usize;
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    minus(s)
}

fn superscript(k: i32) -> String {
    k.to_string()
        .chars()
        .map(|c| match c {
            '-' => '\u{207b}',
            '0' => '\u{2070}',
            '1' => '\u{00b9}',
            '2' => '\u{00b2}',
            '3' => '\u{00b3}',
            d => char::from_u32(0x2070 + d.to_digit(10).unwrap_or(0)).unwrap_or(d),
        })
        .collect()
}

/// How many tick labels fit along an axis of `len` units when the widest label of the range
/// `lo..hi` is set at the tick size, with two ems between labels.
pub fn ticks_that_fit(len: u32, lo: f64, hi: f64) -> usize {
    let probe = [lo, hi, (lo + hi) / 2.0, lo + (hi - lo) * 0.37];
    let w = probe
        .iter()
        .map(|&v| text_width(&fmt_number(v), TICK_PT).max(text_width("0.00", TICK_PT)))
        .max()
        .unwrap_or(1);
    ((len as f64 / (w as f64 + 1.2 * TICK_PT * UNITS_PER_PT)).floor() as usize).clamp(2, 11)
}

/// Panel captions of one figure at one size: the text size when every caption fits, else the
/// tick size for all of them (each shortened with an ellipsis if it still does not fit).
pub fn fit_captions<'a>(captions: impl IntoIterator<Item = &'a str>, w: u32) -> (Vec<String>, f64) {
    let captions: Vec<&str> = captions.into_iter().collect();
    let size = if captions.iter().all(|c| text_width(c, TEXT_PT) <= w) {
        TEXT_PT
    } else {
        TICK_PT
    };
    (captions.iter().map(|c| fit(c, size, w)).collect(), size)
}

/// A figure title across the page: bold at the title size if it fits, else at the text size,
/// else shortened with an ellipsis: (text, size in points).
pub fn fit_title(s: &str, page: &Page) -> (String, f64) {
    let w = page.width().saturating_sub(upt(6.0));
    for size in [TITLE_PT, TEXT_PT, TICK_PT] {
        if bold_width(s, size) <= w {
            return (s.to_string(), size);
        }
    }
    (ellipsize(s, |t| bold_width(t, TEXT_PT) <= w), TEXT_PT)
}

/// Draw `title` at the top of `root` (when the page has titles) and return the area below it.
pub fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    page: &Page,
) -> anyhow::Result<DrawingArea<DB, plotters::coord::Shift>> {
    if !page.titles {
        return Ok(root.clone());
    }
    let (t, size) = fit_title(title, page);
    root.titled(&t, bold(size)).map_err(super::de)
}

/// Shorten `s` with an ellipsis to at most `w` units at `size` points.
pub fn fit(s: &str, size: f64, w: u32) -> String {
    if text_width(s, size) <= w {
        return s.to_string();
    }
    ellipsize(s, |t| text_width(t, size) <= w)
}

/// The longest prefix of `s` that, followed by an ellipsis, `fits`; the ellipsis alone when none
/// does. A binary search over the prefix length: a text's width grows with its length, so this
/// shapes about log2(n) candidates, where shortening one character at a time shaped n of them
/// (48 s for a 10 000-character policy name).
fn ellipsize(s: &str, fits: impl Fn(&str) -> bool) -> String {
    let ends: Vec<usize> = s.char_indices().map(|(i, _)| i).skip(1).collect();
    let candidate = |k: usize| format!("{}\u{2026}", &s[..ends[k]]);
    // Prefixes of 1..=len-1 characters; find the largest k whose candidate fits.
    let (mut lo, mut hi) = (0usize, ends.len());
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(&candidate(mid - 1)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        "\u{2026}".into()
    } else {
        candidate(lo - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_a_paper_would() {
        assert_eq!(fmt_number(1000.0), "1000");
        assert_eq!(fmt_number(900.0), "900");
        assert_eq!(fmt_number(0.25), "0.25");
        assert_eq!(fmt_number(-0.5), "\u{2212}0.5");
        assert_eq!(fmt_number(0.041667), "0.04167");
        assert_eq!(fmt_number(1e-5), "10\u{207b}\u{2075}");
        assert_eq!(fmt_number(2.5e8), "2.5\u{00d7}10\u{2078}");
    }

    #[test]
    fn widths_are_measured_with_the_font() {
        // DejaVu Sans: 'i' is much narrower than 'W'; widths add up and scale with the size.
        assert!(text_width("iiii", 8.0) * 2 < text_width("WWWW", 8.0));
        let a = text_width("policy", 8.0);
        assert_eq!(text_width("policy", 16.0), a * 2 - 1.max(a * 2 % 2), "{a}");
        // An em of DejaVu 'M' is about 0.86 em wide: 8 pt -> ~27.5 units.
        let m = text_width("M", 8.0);
        assert!((25..=30).contains(&m), "{m}");
        assert!(bold_width("policy", 8.0) > a);
    }

    #[test]
    fn widths_parse() {
        assert_eq!(Page::parse_width("column"), Ok(3.3));
        assert_eq!(Page::parse_width("page"), Ok(6.9));
        assert_eq!(Page::parse_width("5.5in"), Ok(5.5));
        assert!(Page::parse_width("wide").unwrap_err().contains("column"));
        assert!(Page::parse_width("0.5").is_err());
        let p = Page {
            width_in: 3.3,
            titles: true,
        };
        assert_eq!(p.width(), 950);
    }

    #[test]
    fn fit_shortens_with_an_ellipsis() {
        let s = "hamlet-ucb(rho=0.1, bonus=standard)";
        let w = text_width("hamlet-ucb", 8.0);
        let f = fit(s, 8.0, w);
        assert!(f.ends_with('\u{2026}') && text_width(&f, 8.0) <= w, "{f}");
        assert_eq!(fit("ab", 8.0, 1000), "ab");
    }

    /// The binary search finds what shortening one character at a time found: the longest
    /// prefix that fits with its ellipsis, on names of every length and width, and multi-byte
    /// characters.
    #[test]
    fn ellipsize_keeps_the_longest_prefix_that_fits() {
        let linear = |s: &str, w: u32| -> String {
            let chars: Vec<char> = s.chars().collect();
            for n in (1..chars.len()).rev() {
                let t: String = chars[..n].iter().collect::<String>() + "\u{2026}";
                if text_width(&t, 8.0) <= w {
                    return t;
                }
            }
            "\u{2026}".into()
        };
        for s in [
            "hamlet-ucb(ρ=0.1, bonus=standard)",
            "ab",
            "x",
            "αβγδεζηθ-é",
            "",
        ] {
            for w in [0, 10, 200, 900, 2_000, 5_000, 20_000] {
                let got = ellipsize(s, |t| text_width(t, 8.0) <= w);
                assert_eq!(got, linear(s, w), "{s:?} at {w}");
            }
        }
        let long = "policy-".repeat(1_500);
        let w = text_width("hamlet-ucb(rho=0.1)", 8.0);
        let f = fit(&long, 8.0, w);
        let next: String = long.chars().take(f.chars().count()).collect::<String>() + "\u{2026}";
        assert!(
            text_width(&f, 8.0) <= w && text_width(&next, 8.0) > w,
            "{f}"
        );
    }
}
