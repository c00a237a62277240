//! Critical-difference diagrams (Demšar 2006): policies on a mean-rank axis, best on the left,
//! bars joining groups that are not significantly different (Nemenyi: mean ranks within the
//! critical difference, with the CD ruler; Wilcoxon–Holm: no pair rejected).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, center, csv_field, de, left_center, right_center, text_style, text_width};

pub struct CdDiagram {
    pub title: String,
    /// (policy, mean rank), best first.
    pub rows: Vec<(String, f64)>,
    pub k: usize,
    /// Groups as index ranges into `rows`.
    pub groups: Vec<(usize, usize)>,
    /// The critical difference, drawn as a ruler (Nemenyi only).
    pub cd: Option<f64>,
}

impl CdDiagram {
    fn side(&self) -> u32 {
        self.rows
            .iter()
            .map(|r| text_width(&r.0, 14) + text_width(&format!(" ({:.2})", r.1), 14))
            .max()
            .unwrap_or(80)
            + 40
    }

    fn half(&self) -> usize {
        self.rows.len().div_ceil(2)
    }
}

impl Figure for CdDiagram {
    fn size(&self) -> (u32, u32) {
        let w = 2 * self.side() + 560;
        let h = 130 + 10 * self.groups.len() as u32 + 26 * self.half() as u32 + 30;
        (w, h)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, _) = self.size();
        let side = self.side() as i32;
        let (left, right) = (side, w as i32 - side);
        let axis_y = 95;
        let k = self.k.max(2) as f64;
        let x = |r: f64| left + ((r - 1.0) / (k - 1.0) * (right - left) as f64).round() as i32;
        let black = BLACK.stroke_width(1);
        root.draw(&Text::new(
            self.title.clone(),
            (w as i32 / 2, 18),
            center(17),
        ))
        .map_err(de)?;
        root.draw(&PathElement::new(
            vec![(left, axis_y), (right, axis_y)],
            BLACK.stroke_width(2),
        ))
        .map_err(de)?;
        for t in 1..=self.k.max(2) {
            let px = x(t as f64);
            root.draw(&PathElement::new(
                vec![(px, axis_y - 8), (px, axis_y)],
                black,
            ))
            .map_err(de)?;
            root.draw(&Text::new(t.to_string(), (px, axis_y - 18), center(13)))
                .map_err(de)?;
            if t < self.k {
                let hx = x(t as f64 + 0.5);
                root.draw(&PathElement::new(
                    vec![(hx, axis_y - 4), (hx, axis_y)],
                    black,
                ))
                .map_err(de)?;
            }
        }
        if let Some(cd) = self.cd {
            let (a, b) = (x(1.0), x(1.0 + cd));
            let y = axis_y - 48;
            root.draw(&PathElement::new(
                vec![(a, y), (b, y)],
                BLACK.stroke_width(2),
            ))
            .map_err(de)?;
            for px in [a, b] {
                root.draw(&PathElement::new(vec![(px, y - 5), (px, y + 5)], black))
                    .map_err(de)?;
            }
            root.draw(&Text::new(
                format!("CD = {cd:.3}"),
                (b + 8, y),
                left_center(13),
            ))
            .map_err(de)?;
        }
        let bars_top = axis_y + 14;
        for (g, &(i, j)) in self.groups.iter().enumerate() {
            let y = bars_top + 10 * g as i32;
            root.draw(&PathElement::new(
                vec![(x(self.rows[i].1) - 4, y), (x(self.rows[j].1) + 4, y)],
                BLACK.stroke_width(4),
            ))
            .map_err(de)?;
        }
        let rows_top = bars_top + 10 * self.groups.len() as i32 + 18;
        let half = self.half();
        for (i, (name, r)) in self.rows.iter().enumerate() {
            let px = x(*r);
            let label = format!("{name} ({r:.2})");
            if i < half {
                let y = rows_top + 26 * i as i32;
                root.draw(&PathElement::new(
                    vec![(px, axis_y), (px, y), (left - 10, y)],
                    black,
                ))
                .map_err(de)?;
                root.draw(&Text::new(label, (left - 14, y), right_center(14)))
                    .map_err(de)?;
            } else {
                let y = rows_top + 26 * (self.rows.len() - 1 - i) as i32;
                root.draw(&PathElement::new(
                    vec![(px, axis_y), (px, y), (right + 10, y)],
                    black,
                ))
                .map_err(de)?;
                root.draw(&Text::new(label, (right + 14, y), left_center(14)))
                    .map_err(de)?;
            }
        }
        let _ = text_style(12);
        Ok(())
    }

    fn csv(&self) -> String {
        let mut s = String::from("policy,mean_rank,group\n");
        for (i, (p, r)) in self.rows.iter().enumerate() {
            let groups: Vec<String> = self
                .groups
                .iter()
                .enumerate()
                .filter(|(_, (a, b))| *a <= i && i <= *b)
                .map(|(g, _)| g.to_string())
                .collect();
            s.push_str(&format!("{},{r},{}\n", csv_field(p), groups.join(" ")));
        }
        if let Some(cd) = self.cd {
            s.push_str(&format!("# critical difference,{cd},\n"));
        }
        s
    }
}
