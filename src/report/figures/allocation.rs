//! Budget allocation: the share of pulls each policy gave each learner, as stacked bars. Learners
//! are sorted by their overall share; those that never reach `MIN_SHARE` of any policy's pulls,
//! or that come after the first `MAX_SHOWN`, are drawn together as one grey "other" segment, so
//! that the figure stays readable with 20 learners. The CSV keeps every learner.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::hbars::{self, Stacked};
use super::legend::Entry;
use super::style::{OKABE_ITO, Page};
use super::{Figure, csv_field};

/// Which share of its budget each policy gave each learner (a stacked bar per policy).
pub struct Allocation {
    /// The figure's title.
    pub title: String,
    /// Policy labels, top to bottom.
    pub policies: Vec<String>,
    /// Learner labels, in the bars' order.
    pub learners: Vec<String>,
    /// `shares[p][l]`, each row summing to 1.
    pub shares: Vec<Vec<f64>>,
}

/// A learner below this share for every policy joins "other".
pub const MIN_SHARE: f64 = 0.03;
/// At most this many learners get their own colour.
pub const MAX_SHOWN: usize = 7;
const OTHER: RGBColor = RGBColor(200, 200, 200);

impl Allocation {
    /// Learner indices shown on their own, by decreasing mean share, and the rest.
    pub fn grouping(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.policies.len().max(1) as f64;
        let mut order: Vec<(usize, f64, f64)> = (0..self.learners.len())
            .map(|l| {
                let mean = self.shares.iter().map(|r| r[l]).sum::<f64>() / n;
                let max = self.shares.iter().map(|r| r[l]).fold(0.0, f64::max);
                (l, mean, max)
            })
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut shown = Vec::new();
        let mut rest = Vec::new();
        for (l, _, max) in order {
            if shown.len() < MAX_SHOWN && max >= MIN_SHARE {
                shown.push(l);
            } else {
                rest.push(l);
            }
        }
        (shown, rest)
    }

    fn entries(&self) -> Vec<Entry> {
        let (shown, rest) = self.grouping();
        let mut e: Vec<Entry> = shown
            .iter()
            .enumerate()
            .map(|(i, &l)| Entry {
                label: self.learners[l].clone(),
                color: OKABE_ITO[i],
                dash: None,
                marker: None,
                swatch: true,
            })
            .collect();
        if !rest.is_empty() {
            e.push(Entry {
                label: format!("other ({} learners)", rest.len()),
                color: OTHER,
                dash: None,
                marker: None,
                swatch: true,
            });
        }
        e
    }
}

impl Figure for Allocation {
    fn height(&self, page: &Page) -> u32 {
        hbars::height(self.policies.len(), &self.entries(), page)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        let (shown, rest) = self.grouping();
        let segments = self
            .shares
            .iter()
            .map(|row| {
                let other: f64 = rest.iter().map(|&l| row[l]).sum();
                shown
                    .iter()
                    .enumerate()
                    .map(|(c, &l)| (row[l], OKABE_ITO[c]))
                    .chain(std::iter::once((other, OTHER)))
                    .collect()
            })
            .collect();
        hbars::draw(
            root,
            page,
            &Stacked {
                title: &self.title,
                x_desc: "share of pulls",
                labels: self.policies.clone(),
                segments,
                entries: self.entries(),
                label_share: 40,
            },
        )
    }

    fn csv(&self) -> String {
        let mut s = String::from("policy,learner,share\n");
        for (p, row) in self.policies.iter().zip(&self.shares) {
            for (l, v) in self.learners.iter().zip(row) {
                s.push_str(&format!("{},{},{v}\n", csv_field(p), csv_field(l)));
            }
        }
        s
    }
}
