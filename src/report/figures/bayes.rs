//! Three-part stacked bars with a legend: the Bayesian signed-rank test per pair (the posterior
//! probabilities of "left better", "within the rope" and "right better"; Benavoli et al. 2017,
//! §4.3), and two-setting parameter studies (share of units where the first setting wins, ties,
//! or the second wins), where rank box plots would only show 1, 1.5 and 2.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::hbars::{self, Stacked};
use super::legend::Entry;
use super::style::Page;
use super::{Figure, csv_field};

/// Posterior probabilities of Bayesian comparisons as stacked horizontal bars.
pub struct BayesBars {
    /// The figure's title.
    pub title: String,
    /// The x axis' label.
    pub x_desc: String,
    /// The names of the three parts (left, middle, right), for the legend and the CSV header.
    pub parts: [String; 3],
    /// (row label, left, middle, right), each row summing to 1.
    pub rows: Vec<(String, f64, f64, f64)>,
}

/// Okabe–Ito blue, grey and vermillion: left, middle, right.
const SHADES: [RGBColor; 3] = [
    RGBColor(0, 114, 178),
    RGBColor(190, 190, 190),
    RGBColor(213, 94, 0),
];

impl BayesBars {
    fn entries(&self) -> Vec<Entry> {
        self.parts
            .iter()
            .zip(SHADES)
            .map(|(p, c)| Entry {
                label: p.clone(),
                color: c,
                dash: None,
                marker: None,
                swatch: true,
            })
            .collect()
    }
}

impl Figure for BayesBars {
    fn height(&self, page: &Page) -> u32 {
        hbars::height(self.rows.len(), &self.entries(), page)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, page: &Page) -> Result<()> {
        hbars::draw(
            root,
            page,
            &Stacked {
                title: &self.title,
                x_desc: &self.x_desc,
                labels: self.rows.iter().map(|r| r.0.clone()).collect(),
                segments: self
                    .rows
                    .iter()
                    .map(|r| vec![(r.1, SHADES[0]), (r.2, SHADES[1]), (r.3, SHADES[2])])
                    .collect(),
                entries: self.entries(),
                label_share: 50,
            },
        )
    }

    fn csv(&self) -> String {
        let mut s = format!(
            "row,{},{},{}\n",
            csv_field(&self.parts[0]),
            csv_field(&self.parts[1]),
            csv_field(&self.parts[2])
        );
        for (a, l, e, r) in &self.rows {
            s.push_str(&format!("{},{l},{e},{r}\n", csv_field(a)));
        }
        s
    }
}
