//! Checks on a drawn figure's layout: the box of every text element, measured with the font that
//! renders it, and the pairs of boxes that overlap. Tests run these on every figure kind; `save`
//! refuses nothing, but `report` could (it reports the count in debug builds).

use super::style::{UNITS_PER_PT, text_width};

/// A text element's box in drawing units (x0 < x1, y0 < y1), its text and size in points.
#[derive(Clone, Debug, PartialEq)]
pub struct TextBox {
    pub text: String,
    pub size_pt: f64,
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl TextBox {
    fn overlaps(&self, o: &TextBox) -> bool {
        // A quarter point of slack: boxes that merely touch do not overlap.
        let e = 1.0;
        self.x0 + e < o.x1 && o.x0 + e < self.x1 && self.y0 + e < o.y1 && o.y0 + e < self.y1
    }
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let rest = &tag[i..];
    Some(&rest[..rest.find('"')?])
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The boxes of the `<text>` elements of an SVG written by plotters' SVG backend (before `save`
/// turns text into paths): anchor, `dy` and `rotate(...)` transforms are taken into account.
/// Ascent 0.76 em and descent 0.24 em (DejaVu Sans).
pub fn text_boxes(svg: &str) -> Vec<TextBox> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        let Some(end) = rest.find("</text>") else {
            break;
        };
        let text = unescape(rest[close + 1..end].trim());
        rest = &rest[end..];
        let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
        let (Some(x), Some(y), Some(fs)) = (num("x"), num("y"), num("font-size")) else {
            continue;
        };
        let size_pt = fs / UNITS_PER_PT;
        let w = if attr(tag, "font-weight") == Some("bold") {
            super::style::bold_width(&text, size_pt) as f64
        } else {
            text_width(&text, size_pt) as f64
        };
        let baseline = y + match attr(tag, "dy") {
            Some("0.76em") => 0.76 * fs,
            Some("0.5ex") => 0.5 * 0.55 * fs,
            Some("-0.5ex") => -0.5 * 0.55 * fs,
            _ => 0.0,
        };
        let x0 = match attr(tag, "text-anchor") {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        // Cap height (digits and capitals) above the baseline, descenders below.
        let (top, bottom) = (baseline - 0.73 * fs, baseline + 0.24 * fs);
        let b = match attr(tag, "transform") {
            Some(t) if t.starts_with("rotate(270") || t.starts_with("rotate(90") => {
                // Rotated about (x, y): a vertical box whose extent along the text is w.
                let ccw = t.starts_with("rotate(270");
                let (a0, a1) = (x0 - x, x0 - x + w);
                let (d0, d1) = (top - y, bottom - y);
                if ccw {
                    TextBox {
                        text,
                        size_pt,
                        x0: x + d0,
                        x1: x + d1,
                        y0: y - a1,
                        y1: y - a0,
                    }
                } else {
                    TextBox {
                        text,
                        size_pt,
                        x0: x - d1,
                        x1: x - d0,
                        y0: y + a0,
                        y1: y + a1,
                    }
                }
            }
            _ => TextBox {
                text,
                size_pt,
                x0,
                x1: x0 + w,
                y0: top,
                y1: bottom,
            },
        };
        if !b.text.trim().is_empty() {
            out.push(b);
        }
    }
    out
}

/// The pairs of text boxes that overlap.
pub fn overlapping(boxes: &[TextBox]) -> Vec<(TextBox, TextBox)> {
    let mut out = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            if a.overlaps(b) {
                out.push((a.clone(), b.clone()));
            }
        }
    }
    out
}

/// Text boxes that stick out of a figure of `w` × `h` units.
pub fn outside(boxes: &[TextBox], w: f64, h: f64) -> Vec<TextBox> {
    boxes
        .iter()
        .filter(|b| b.x0 < -1.0 || b.y0 < -1.0 || b.x1 > w + 1.0 || b.y1 > h + 1.0)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_follow_anchor_and_rotation() {
        let svg = r#"<svg><text x="100" y="50" dy="0.5ex" text-anchor="end" font-family="sans-serif" font-size="32">abc</text>
<text x="100" y="50" dy="0.5ex" text-anchor="start" font-family="sans-serif" font-size="32">abd</text>
<text x="10" y="200" dy="0.76em" text-anchor="middle" font-family="sans-serif" font-size="32" transform="rotate(270, 10, 200)">vertical</text></svg>"#;
        let b = text_boxes(svg);
        assert_eq!(b.len(), 3);
        assert!((b[0].x1 - 100.0).abs() < 1e-9 && (b[1].x0 - 100.0).abs() < 1e-9);
        assert!(
            overlapping(&b[..2]).is_empty(),
            "touching is not overlapping"
        );
        assert!(
            b[2].y1 - b[2].y0 > b[2].x1 - b[2].x0,
            "rotated text is tall"
        );
        assert_eq!(b[0].size_pt, 8.0);
        let moved = svg.replace(
            "x=\"100\" y=\"50\" dy=\"0.5ex\" text-anchor=\"start\"",
            "x=\"90\" y=\"50\" dy=\"0.5ex\" text-anchor=\"start\"",
        );
        assert_eq!(overlapping(&text_boxes(&moved)).len(), 1);
    }
}
