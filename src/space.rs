//! The joint search space of a pool, encoded for model-based optimisers (TPE, SMAC-style).
//!
//! CASH (Thornton et al. 2013) searches a tree-structured space: the learner is a categorical root
//! and each learner's hyper-parameters are active only under it. Every configuration of a pool is
//! encoded once, when the pool is loaded, as the values of its own learner's dimensions:
//! - a numeric dimension `[lo, hi]` (log-scaled when `log`) maps to `[0, 1]`, clipped, so a default
//!   outside the tuned range sits at its edge;
//! - an ordinal dimension of n levels maps level k to `k / (n − 1)`;
//! - a categorical dimension holds its level index (0, 1, …);
//! - a value the space cannot place (`max_depth = None`, `gamma = "scale"`) is NaN: the optimisers
//!   treat it as inactive, as they treat the dimensions of other learners.

use anyhow::{Result, bail};

/// A space with no learners (views in tests that need none).
#[cfg(test)]
pub static EMPTY: Space = Space {
    learners: Vec::new(),
    learner_of: Vec::new(),
    offsets: Vec::new(),
    values: Vec::new(),
};

/// How one dimension's values are encoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// A range `[lo, hi]`, log-scaled when `log`; `int` when the recorder drew whole numbers.
    Numeric {
        log: bool,
        lo: f64,
        hi: f64,
        int: bool,
    },
    Ordinal(u16),
    Categorical(u16),
}

impl Scale {
    pub fn is_categorical(self) -> bool {
        matches!(self, Scale::Categorical(_))
    }

    /// Number of levels of a categorical dimension (1 otherwise).
    pub fn levels(self) -> usize {
        match self {
            Scale::Categorical(n) => usize::from(n.max(1)),
            _ => 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SpaceDim {
    pub name: String,
    pub scale: Scale,
    /// The levels' texts of a categorical or ordinal dimension (empty for numeric).
    pub choices: Vec<String>,
}

/// The encoded space of a pool: per learner its dimensions, per configuration its learner and
/// values (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Space {
    pub learners: Vec<Vec<SpaceDim>>,
    pub learner_of: Vec<u16>,
    offsets: Vec<u32>,
    values: Vec<f32>,
}

impl Space {
    pub fn new(learners: Vec<Vec<SpaceDim>>) -> Self {
        Space {
            learners,
            learner_of: Vec::new(),
            offsets: vec![0],
            values: Vec::new(),
        }
    }

    /// Append a configuration of `learner` with its encoded values (one per dimension).
    pub fn push(&mut self, learner: usize, values: &[f32]) {
        debug_assert_eq!(values.len(), self.learners[learner].len());
        self.learner_of.push(learner as u16);
        self.values.extend_from_slice(values);
        self.offsets.push(self.values.len() as u32);
    }

    pub fn len(&self) -> usize {
        self.learner_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.learner_of.is_empty()
    }

    /// Configuration `c`'s encoded values, one per dimension of its learner.
    pub fn values(&self, c: usize) -> &[f32] {
        &self.values[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }

    pub fn learner(&self, c: usize) -> usize {
        usize::from(self.learner_of[c])
    }

    /// Columns the learner takes in the flat encoding.
    pub fn learner_columns(&self, root: Root) -> usize {
        match root {
            Root::Index => 1,
            Root::OneHot => self.learners.len(),
        }
    }

    /// Width of the flat encoding: the learner's columns, then every learner's dimensions.
    pub fn flat_width(&self, root: Root) -> usize {
        self.learner_columns(root) + self.learners.iter().map(Vec::len).sum::<usize>()
    }

    /// Configuration `c` in the flat encoding (SMAC's): the learner (its index in one column, or
    /// one column per learner, 1 for its own), then each learner's dimensions; a dimension that
    /// is not active (another learner's, or NaN) holds `inactive`.
    pub fn flat_into(&self, c: usize, inactive: f32, root: Root, out: &mut [f32]) {
        out.fill(inactive);
        let l = self.learner(c);
        let lead = self.learner_columns(root);
        match root {
            Root::Index => out[0] = l as f32,
            Root::OneHot => {
                for (j, o) in out[..lead].iter_mut().enumerate() {
                    *o = f32::from(u8::from(j == l));
                }
            }
        }
        let start = lead + self.learners[..l].iter().map(Vec::len).sum::<usize>();
        for (k, &v) in self.values(c).iter().enumerate() {
            out[start + k] = if v.is_nan() { inactive } else { v };
        }
    }
}

/// A numeric dimension on [0, 1], linear (tests).
#[cfg(test)]
pub(crate) const UNIT: Scale = Scale::Numeric {
    log: false,
    lo: 0.0,
    hi: 1.0,
    int: false,
};

#[cfg(test)]
impl SpaceDim {
    /// A dimension named `name` of `scale`, without level texts (tests).
    pub(crate) fn of(name: &str, scale: Scale) -> SpaceDim {
        SpaceDim {
            name: name.into(),
            scale,
            choices: Vec::new(),
        }
    }
}

/// How the flat encoding holds the learner (the root of the CASH space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// One column with the learner's index: a tree splits it as an ordered number.
    Index,
    /// One column per learner, 1 for the configuration's own: a tree splits off one learner.
    OneHot,
}

/// Encode one value of `dim` given as text (a JSON scalar's text: `0.1`, `"gini"`, `true`).
pub fn encode(dim: &SpaceDim, value: &serde_json::Value) -> f32 {
    match dim.scale {
        Scale::Numeric { log, lo, hi, .. } => {
            let Some(v) = value.as_f64() else {
                return f32::NAN;
            };
            let u = if log {
                if v <= 0.0 || lo <= 0.0 {
                    return f32::NAN;
                }
                (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
            } else {
                (v - lo) / (hi - lo)
            };
            u.clamp(0.0, 1.0) as f32
        }
        Scale::Ordinal(n) | Scale::Categorical(n) => {
            let text = json_text(value);
            match dim.choices.iter().position(|c| *c == text) {
                Some(k) if matches!(dim.scale, Scale::Categorical(_)) => k as f32,
                Some(k) => {
                    if n <= 1 {
                        0.0
                    } else {
                        k as f32 / f32::from(n - 1)
                    }
                }
                None => f32::NAN,
            }
        }
    }
}

/// A JSON scalar as the recorder's space descriptions write it (`True`, `gini`, `1`).
fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Bool(true) => "True".into(),
        serde_json::Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

/// Parse a recorder's space description, e.g.
/// `n_neighbors int log [1, 50]; weights in {uniform, distance}; p in {1, 2}`.
pub fn parse_space(text: &str) -> Result<Vec<SpaceDim>> {
    let mut dims = Vec::new();
    for part in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some((name, rest)) = part.split_once(" in ") {
            let inner = rest
                .trim()
                .strip_prefix('{')
                .and_then(|r| r.strip_suffix('}'));
            let Some(inner) = inner else {
                bail!("'{part}': expected `name in {{a, b, …}}`");
            };
            let choices: Vec<String> = inner.split(',').map(|s| s.trim().to_string()).collect();
            dims.push(SpaceDim {
                name: name.trim().to_string(),
                scale: Scale::Categorical(choices.len() as u16),
                choices,
            });
            continue;
        }
        let (head, range) = part
            .split_once('[')
            .ok_or_else(|| anyhow::anyhow!("'{part}': expected `name int|float [log] [lo, hi]`"))?;
        let words: Vec<&str> = head.split_whitespace().collect();
        let (name, log, int) = match words.as_slice() {
            [n, kind @ ("int" | "float")] => (*n, false, *kind == "int"),
            [n, kind @ ("int" | "float"), "log"] => (*n, true, *kind == "int"),
            _ => bail!("'{part}': expected `name int|float [log] [lo, hi]`"),
        };
        let nums: Vec<f64> = range
            .trim_end_matches(']')
            .split(',')
            .map(|s| s.trim().parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| anyhow::anyhow!("'{part}': the range must be two numbers"))?;
        let [lo, hi] = nums[..] else {
            bail!("'{part}': the range must be two numbers");
        };
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) || (log && lo <= 0.0) {
            bail!("'{part}': the range must have lo < hi (and lo > 0 on a log scale)");
        }
        dims.push(SpaceDim {
            name: name.to_string(),
            scale: Scale::Numeric { log, lo, hi, int },
            choices: Vec::new(),
        });
    }
    Ok(dims)
}

/// Encode a configuration given as a JSON object over `dims`; a dimension it lacks is NaN.
pub fn encode_config(dims: &[SpaceDim], config: &str) -> Result<Vec<f32>> {
    let v: serde_json::Value = serde_json::from_str(config)
        .map_err(|e| anyhow::anyhow!("config '{config}' is not JSON: {e}"))?;
    let Some(obj) = v.as_object() else {
        bail!("config '{config}' is not a JSON object");
    };
    Ok(dims
        .iter()
        .map(|d| obj.get(&d.name).map_or(f32::NAN, |x| encode(d, x)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_encodes_a_recorder_space() {
        let dims =
            parse_space("n_neighbors int log [1, 100]; weights in {uniform, distance}; p in {1, 2}; f float [0, 2]")
                .unwrap();
        assert_eq!(dims.len(), 4);
        let x = encode_config(
            &dims,
            r#"{"n_neighbors": 10, "weights": "distance", "p": 2, "f": 0.5}"#,
        )
        .unwrap();
        assert!((x[0] - 0.5).abs() < 1e-6, "log10(10)/log10(100) = 0.5");
        assert_eq!(x[1], 1.0);
        assert_eq!(x[2], 1.0);
        assert_eq!(x[3], 0.25);
        // Out of range clips; a word or a missing key is NaN.
        let y = encode_config(
            &dims,
            r#"{"n_neighbors": 1000, "weights": "other", "f": null}"#,
        )
        .unwrap();
        assert_eq!(y[0], 1.0);
        assert!(y[1].is_nan() && y[2].is_nan() && y[3].is_nan());
        assert!(parse_space("x int [3, 1]").is_err());
        assert!(parse_space("x in (a, b)").is_err());
    }

    #[test]
    fn flat_encoding_puts_each_learner_in_its_own_columns() {
        let d = |n: &str| SpaceDim::of(n, UNIT);
        let mut s = Space::new(vec![vec![d("a")], vec![d("b"), d("c")]]);
        s.push(0, &[0.3]);
        s.push(1, &[0.1, f32::NAN]);
        let mut out = vec![0.0; s.flat_width(Root::Index)];
        s.flat_into(1, -1.0, Root::Index, &mut out);
        assert_eq!(out, vec![1.0, -1.0, 0.1, -1.0]);
        s.flat_into(0, -1.0, Root::Index, &mut out);
        assert_eq!(out, vec![0.0, 0.3, -1.0, -1.0]);
        let mut out = vec![0.0; s.flat_width(Root::OneHot)];
        s.flat_into(1, -1.0, Root::OneHot, &mut out);
        assert_eq!(out, vec![0.0, 1.0, -1.0, 0.1, -1.0]);
    }
}
