//! Scores normalised per unit, so that units on different scales can be averaged: to a baseline
//! policy (CARP-S's request, automl/CARP-S#143: "performances normalized with a baseline, e.g.
//! random search") or to the range of the compared policies (1 = the unit's best, 0 = its
//! worst; the "average distance to the maximum" of Wistuba, Schilling & Schmidt-Thieme 2015 is
//! one minus it), or to known best and worst values per unit (a benchmark's known optimum and
//! worst configuration, as HPO-B's normalised regret and CARP-S's normalised cost use them:
//! 1 = the known best, 0 = the known worst). The mean over units comes with its 95 % t interval.

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
    /// (s − w) / (b − w) per unit with b and w the unit's known best and worst values, from a
    /// table: 1 = the known best, 0 = the known worst.
    Known(KnownValues),
}

/// Known best and worst values per unit, read from a CSV file with columns `unit`, `best` and
/// `worst` (in the score's own orientation: for a minimised score the best is the lowest).
#[derive(Clone, Debug, PartialEq)]
pub struct KnownValues {
    pub file: String,
    /// (unit, best, worst), in the file's order.
    pub rows: Vec<(String, f64, f64)>,
}

impl KnownValues {
    /// Read `path` (CSV: `unit,best,worst`, any further columns ignored).
    pub fn read(path: &str) -> Result<KnownValues, String> {
        let text = crate::files::read_text(
            std::path::Path::new(path),
            "a CSV of known values (unit,best,worst)",
        )
        .map_err(|e| format!("{e:#}"))?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(format!(
                "{path}: empty; give a CSV with columns unit,best,worst"
            ));
        };
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let at = |name: &str| {
            cols.iter().position(|c| *c == name).ok_or_else(|| {
                format!(
                    "{path}: no column '{name}'; the known values are a CSV with columns unit,best,worst (its columns are {})",
                    cols.join(", ")
                )
            })
        };
        let (u, b, w) = (at("unit")?, at("best")?, at("worst")?);
        let mut rows: Vec<(String, f64, f64)> = Vec::new();
        let mut first_line: std::collections::HashMap<String, usize> = Default::default();
        for (i, line) in lines {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let get = |k: usize, name: &str| {
                f.get(k)
                    .copied()
                    .ok_or_else(|| format!("{path}: line {}: no value for column '{name}'", i + 1))
            };
            let num = |k: usize, name: &str| -> Result<f64, String> {
                let v = get(k, name)?;
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        format!(
                            "{path}: line {}, column '{name}': '{v}' is not a number",
                            i + 1
                        )
                    })
            };
            let unit = get(u, "unit")?.to_string();
            if let Some(j) = first_line.insert(unit.clone(), i + 1) {
                return Err(format!(
                    "{path}: line {}: unit '{unit}' is given again (first on line {j}); give each unit one row",
                    i + 1
                ));
            }
            rows.push((unit, num(b, "best")?, num(w, "worst")?));
        }
        Ok(KnownValues {
            file: path.to_string(),
            rows,
        })
    }

    /// A unit's (best, worst): the row naming the unit, else its task (the text before `@`, as
    /// banditbench names a unit `task@budget#repetition`), else its dataset (before the first
    /// `/`).
    pub fn of(&self, unit: &str) -> Option<(f64, f64)> {
        let task = unit.split('@').next().unwrap_or(unit);
        let dataset = task.split('/').next().unwrap_or(task);
        [unit, task, dataset].iter().find_map(|key| {
            self.rows
                .iter()
                .find(|(u, _, _)| u == key)
                .map(|&(_, b, w)| (b, w))
        })
    }
}

impl std::fmt::Display for Normalize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_string())
    }
}

impl std::str::FromStr for Normalize {
    type Err = String;
    fn from_str(s: &str) -> Result<Normalize, String> {
        Normalize::parse(s)
    }
}

impl Normalize {
    /// `none`, `range`, `baseline:POLICY` or `known:FILE`.
    pub fn parse(s: &str) -> Result<Normalize, String> {
        match s {
            "none" => Ok(Normalize::None),
            "range" => Ok(Normalize::Range),
            _ => {
                if let Some(f) = s.strip_prefix("known:").filter(|f| !f.is_empty()) {
                    return KnownValues::read(f).map(Normalize::Known);
                }
                match s.strip_prefix("baseline:") {
                    Some(p) if !p.is_empty() => Ok(Normalize::Baseline(p.to_string())),
                    _ => Err(format!(
                        "'{s}': use none, range (1 = each unit's best, 0 = its worst), baseline:POLICY (relative improvement over POLICY, e.g. baseline:random-search) or known:FILE (1 = the unit's known best, 0 = its known worst, from a CSV with columns unit,best,worst)"
                    )),
                }
            }
        }
    }

    pub fn as_string(&self) -> String {
        match self {
            Normalize::None => "none".into(),
            Normalize::Range => "range".into(),
            Normalize::Baseline(p) => format!("baseline:{p}"),
            Normalize::Known(k) => format!("known:{}", k.file),
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
        Normalize::Range | Normalize::Known(_) => None,
    };
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut skipped = 0;
    for (u, row) in table.scores.iter().enumerate() {
        if row.iter().any(|s| !s.is_finite()) {
            skipped += 1;
            continue;
        }
        if let Normalize::Known(k) = how {
            // Checked before (`Options::check_units`): every unit has its known values.
            match k.of(&table.units[u]).filter(|(b, w)| b != w) {
                Some((b, w)) => {
                    for (c, s) in cols.iter_mut().zip(row) {
                        c.push((s - w) / (b - w));
                    }
                }
                None => skipped += 1,
            }
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
    fn a_unit_given_twice_in_the_known_values_is_refused_naming_both_lines() {
        let dir = std::env::temp_dir().join(format!("banditbench-known2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("known.csv");
        std::fs::write(&f, "unit,best,worst\na,1.0,0.0\nb,0.8,0.6\na,0.9,0.1\n").unwrap();
        let e = KnownValues::read(f.to_str().unwrap()).unwrap_err();
        assert!(
            e.ends_with(
                "line 4: unit 'a' is given again (first on line 2); give each unit one row"
            ),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn known_values_put_the_known_best_at_one_and_the_known_worst_at_zero() {
        let dir = std::env::temp_dir().join(format!("banditbench-known-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("known.csv");
        // a by its unit, b by its task (the text before @), c by its dataset (before /).
        std::fs::write(
            &f,
            "unit,best,worst,note\na,1.0,0.0,x\nb,0.8,0.6,\nc,5.0,1.0,\n",
        )
        .unwrap();
        let k = Normalize::parse(&format!("known:{}", f.display())).unwrap();
        let mut t = table(true);
        t.units = vec!["a".into(), "b@60#0".into(), "c/2@60#1".into()];
        let n = normalized(&t, &k).unwrap();
        // p: a 0.9, b 0.0, c 0.25; q: 0.8, 0.0, 0.75; rs: 0.5, 0.0, 0.0.
        assert_eq!(n.skipped_units, 0);
        let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
        assert!(
            close(n.rows[0].mean, (0.9 + 0.0 + 0.25) / 3.0),
            "{}",
            n.rows[0].mean
        );
        assert!(close(n.rows[1].mean, (0.8 + 0.0 + 0.75) / 3.0));
        assert!(close(n.rows[2].mean, 0.5 / 3.0));
        // A minimised score's known best is its lowest value: the same formula.
        std::fs::write(&f, "unit,best,worst\na,0.0,1.0\nb,0.6,0.8\nc,1.0,5.0\n").unwrap();
        let k = Normalize::parse(&format!("known:{}", f.display())).unwrap();
        let mut t = table(false);
        t.units = vec!["a".into(), "b@60#0".into(), "c/2@60#1".into()];
        let m = normalized(&t, &k).unwrap();
        assert!(
            close(m.rows[2].mean, (0.5 + 1.0 + 1.0) / 3.0),
            "{}",
            m.rows[2].mean
        );
        // Bad files: a missing column, a value that is not a number.
        std::fs::write(&f, "unit,best\na,1\n").unwrap();
        let e = Normalize::parse(&format!("known:{}", f.display())).unwrap_err();
        assert!(e.contains("no column 'worst'"), "{e}");
        std::fs::write(&f, "unit,best,worst\na,1,high\n").unwrap();
        let e = Normalize::parse(&format!("known:{}", f.display())).unwrap_err();
        assert!(
            e.contains("line 2, column 'worst': 'high' is not a number"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
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
