//! Scores normalised per unit, so that units on different scales can be averaged: to a baseline
//! policy (CARP-S's request, automl/CARP-S#143: "performances normalized with a baseline, e.g.
//! random search") or to the range of the compared policies (1 = the unit's best, 0 = its
//! worst; the "average distance to the maximum" of Wistuba, Schilling & Schmidt-Thieme 2015 is
//! one minus it). The mean over units comes with its 95 % t interval.

use super::compare::ScoreTable;
use super::stats::{CiKind, mean_interval, mean_sd};

/// What `report --normalize` divides by.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Normalize {
    /// Raw scores only.
    #[default]
    None,
    /// (s − s_B) / |s_B| per unit, signed so that positive is better than the baseline B: the
    /// relative improvement over it (0.02 = 2 % better).
    Baseline(String),
    /// (s − w) / (b − w) per unit with b and w the best and worst score of the compared policies
    /// there: 1 = the unit's best, 0 = its worst. A unit where all tie is left out.
    Range,
}

impl Normalize {
    /// `none`, `range` or `baseline:POLICY`.
    pub fn parse(s: &str) -> Result<Normalize, String> {
        match s {
            "none" => Ok(Normalize::None),
            "range" => Ok(Normalize::Range),
            _ => match s.strip_prefix("baseline:") {
                Some(p) if !p.is_empty() => Ok(Normalize::Baseline(p.to_string())),
                _ => Err(format!(
                    "'{s}': use none, range (1 = each unit's best, 0 = its worst) or baseline:POLICY (relative improvement over POLICY, e.g. baseline:random-search)"
                )),
            },
        }
    }

    pub fn as_string(&self) -> String {
        match self {
            Normalize::None => "none".into(),
            Normalize::Range => "range".into(),
            Normalize::Baseline(p) => format!("baseline:{p}"),
        }
    }
}

/// One policy's normalised score over the units.
#[derive(Clone, Debug, PartialEq)]
pub struct NormalizedRow {
    pub policy: String,
    /// Units averaged.
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    /// 95 % t interval of the mean.
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Normalised scores of every policy (the table's order).
#[derive(Clone, Debug, PartialEq)]
pub struct Normalized {
    pub how: Normalize,
    pub rows: Vec<NormalizedRow>,
    /// Units left out: the baseline found nothing or scored 0, a policy found nothing, or (range)
    /// every policy tied.
    pub skipped_units: usize,
}

/// Normalise `table`'s scores per unit; None for `Normalize::None`. A NaN ("found nothing")
/// leaves its unit out. The baseline must be one of the table's policies (checked before).
pub fn normalized(table: &ScoreTable, how: &Normalize) -> Option<Normalized> {
    let sign = if table.higher_is_better { 1.0 } else { -1.0 };
    let k = table.policies.len();
    let base = match how {
        Normalize::None => return None,
        Normalize::Baseline(p) => Some(table.policies.iter().position(|q| q == p)?),
        Normalize::Range => None,
    };
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut skipped = 0;
    for row in &table.scores {
        if row.iter().any(|s| !s.is_finite()) {
            skipped += 1;
            continue;
        }
        let values: Option<Vec<f64>> = match base {
            Some(b) => {
                let sb = row[b];
                (sb != 0.0).then(|| row.iter().map(|s| sign * (s - sb) / sb.abs()).collect())
            }
            None => {
                let best = row
                    .iter()
                    .map(|s| sign * s)
                    .fold(f64::NEG_INFINITY, f64::max);
                let worst = row.iter().map(|s| sign * s).fold(f64::INFINITY, f64::min);
                (best > worst).then(|| {
                    row.iter()
                        .map(|s| (sign * s - worst) / (best - worst))
                        .collect()
                })
            }
        };
        match values {
            Some(v) => {
                for (c, x) in cols.iter_mut().zip(v) {
                    c.push(x);
                }
            }
            None => skipped += 1,
        }
    }
    let rows = table
        .policies
        .iter()
        .zip(&cols)
        .map(|(p, c)| {
            let (mean, sd) = mean_sd(c);
            let (ci_low, ci_high) = if c.len() >= 2 {
                mean_interval(c, CiKind::T95)
            } else {
                (f64::NAN, f64::NAN)
            };
            NormalizedRow {
                policy: p.clone(),
                n: c.len(),
                mean,
                sd,
                ci_low,
                ci_high,
            }
        })
        .collect();
    Some(Normalized {
        how: how.clone(),
        rows,
        skipped_units: skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(higher: bool) -> ScoreTable {
        ScoreTable {
            units: vec!["a".into(), "b".into(), "c".into()],
            policies: vec!["p".into(), "q".into(), "rs".into()],
            scores: vec![
                vec![0.9, 0.8, 0.5],
                vec![0.6, 0.6, 0.6],
                vec![2.0, 4.0, 1.0],
            ],
            higher_is_better: higher,
        }
    }

    #[test]
    fn range_puts_each_units_best_at_one_and_worst_at_zero() {
        let n = normalized(&table(true), &Normalize::Range).unwrap();
        // Unit b ties everywhere and is left out; a: p 1, q 0.75, rs 0; c: p 1/3, q 1, rs 0.
        assert_eq!(n.skipped_units, 1);
        assert_eq!(n.rows[0].n, 2);
        assert!((n.rows[0].mean - (1.0 + 1.0 / 3.0) / 2.0).abs() < 1e-12);
        assert!((n.rows[1].mean - (0.75 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(n.rows[2].mean, 0.0);
        // Minimising reverses best and worst.
        let m = normalized(&table(false), &Normalize::Range).unwrap();
        assert_eq!(m.rows[2].mean, 1.0);
    }

    #[test]
    fn a_baseline_gives_the_relative_improvement_over_it() {
        let n = normalized(&table(true), &Normalize::Baseline("rs".into())).unwrap();
        // a: p (0.9-0.5)/0.5 = 0.8; b: 0; c: p (2-1)/1 = 1 -> mean 0.6.
        assert_eq!(n.skipped_units, 0);
        assert!((n.rows[0].mean - 0.6).abs() < 1e-12);
        assert!((n.rows[1].mean - (0.6 + 0.0 + 3.0) / 3.0).abs() < 1e-12);
        assert_eq!(n.rows[2].mean, 0.0);
        // Minimising: lower than the baseline is an improvement.
        let m = normalized(&table(false), &Normalize::Baseline("rs".into())).unwrap();
        assert!((m.rows[0].mean + 0.6).abs() < 1e-12);
        assert!(Normalize::parse("baseline:").is_err());
        assert_eq!(
            Normalize::parse("baseline:rs").unwrap().as_string(),
            "baseline:rs"
        );
    }
}
