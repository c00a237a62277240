//! The wire format of the policy protocol: the JSON the harness writes (built by hand, a
//! decision's view in one write) and the replies it reads.

use serde::Deserialize;

/// The protocol version this build speaks.
/// An answer, as JSON.
#[derive(Deserialize)]
pub(super) struct Reply {
    #[serde(rename = "type")]
    pub(super) kind: Option<String>,
    pub(super) action: Option<String>,
    pub(super) arm: Option<u64>,
    pub(super) config: Option<u64>,
    /// Pool world: train to this unit in one piece of work (`pull` and `draw`).
    pub(super) to: Option<u64>,
    /// Pool world, `retrain`: the first unit trained again (1 when absent).
    pub(super) from: Option<u64>,
    pub(super) fits: Option<u64>,
    pub(super) protocol: Option<u32>,
    pub(super) message: Option<String>,
    pub(super) view: Option<String>,
    /// `end`: the policy's own counts for the cell (a JSON object; runs.parquet's `policy_stats`).
    pub(super) stats: Option<serde_json::Value>,
}

/// Per learner its dimensions, as JSON: `[[{"name": …, "kind": …, "levels": …, "choices" or
/// "low", "high", "log", "int"}, …], …]` (docs/protocol.md).
pub(crate) fn push_dims(o: &mut Vec<u8>, learners: &[Vec<crate::space::SpaceDim>]) {
    use crate::space::Scale;
    o.push(b'[');
    for (l, dims) in learners.iter().enumerate() {
        if l > 0 {
            o.push(b',');
        }
        o.push(b'[');
        for (k, d) in dims.iter().enumerate() {
            if k > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"name\":");
            push_str(o, &d.name);
            let (kind, levels) = match d.scale {
                Scale::Numeric { .. } => ("numeric", 0),
                Scale::Ordinal(n) => ("ordinal", n),
                Scale::Categorical(n) => ("categorical", n),
            };
            o.extend_from_slice(b",\"kind\":");
            push_str(o, kind);
            o.extend_from_slice(b",\"levels\":");
            push_u64(o, u64::from(levels));
            // What the levels are (their texts in pool.toml), or a numeric range: enough to
            // build a library's own space (`banditbench.adapters`).
            match d.scale {
                Scale::Numeric { log, lo, hi, int } => {
                    o.extend_from_slice(b",\"low\":");
                    push_f64(o, lo);
                    o.extend_from_slice(b",\"high\":");
                    push_f64(o, hi);
                    o.extend_from_slice(if log {
                        b",\"log\":true"
                    } else {
                        b",\"log\":false"
                    });
                    o.extend_from_slice(if int {
                        b",\"int\":true"
                    } else {
                        b",\"int\":false"
                    });
                }
                _ => {
                    let choices: Vec<&str> = d.choices.iter().map(String::as_str).collect();
                    push_list(o, "choices", &choices, push_str);
                }
            }
            o.push(b'}');
        }
        o.push(b']');
    }
    o.push(b']');
}

/// `,"objectives":[{"name":…,"direction":…},…]`, or nothing with one objective.
pub(crate) fn push_objectives(o: &mut Vec<u8>, objectives: &[(&str, bool)]) {
    if objectives.is_empty() {
        return;
    }
    o.extend_from_slice(b",\"objectives\":[");
    for (i, &(name, maximize)) in objectives.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        o.extend_from_slice(b"{\"name\":");
        push_str(o, name);
        o.extend_from_slice(b",\"direction\":");
        push_str(o, if maximize { "maximize" } else { "minimize" });
        o.push(b'}');
    }
    o.push(b']');
}

/// `"space"`: per learner its dimensions (name, kind, levels of a categorical or ordinal one);
/// `"open"`: the configurations open at the cell's start; `"open_learner"` and `"open_values"`:
/// each one's learner and encoded values (numeric in [0, 1], ordinal k/(n − 1), categorical
/// level index; `null` for an inactive value). See `trace::space`.
pub(crate) fn push_space(o: &mut Vec<u8>, p: &crate::policy::PoolStart<'_>) {
    let s = p.space;
    o.extend_from_slice(b",\"space\":");
    push_dims(o, &s.learners);
    let open: Vec<usize> = (0..p.open.len()).filter(|&c| p.open[c]).collect();
    o.extend_from_slice(b",\"open\":[");
    for (i, &c) in open.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        push_u64(o, c as u64);
    }
    o.extend_from_slice(b"],\"open_learner\":[");
    for (i, &c) in open.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        push_u64(o, s.learner(c) as u64);
    }
    o.extend_from_slice(b"],\"open_values\":[");
    for (i, &c) in open.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        o.push(b'[');
        for (k, &v) in s.values(c).iter().enumerate() {
            if k > 0 {
                o.push(b',');
            }
            if v.is_nan() {
                o.extend_from_slice(b"null");
            } else {
                push_f64(o, f64::from(v));
            }
        }
        o.push(b']');
    }
    o.push(b']');
}

/// One external policy in one cell.
pub(super) fn push_f64(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() {
        out.extend_from_slice(ryu::Buffer::new().format_finite(x).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

pub(super) fn push_u64(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

pub(super) fn push_str(out: &mut Vec<u8>, s: &str) {
    // A string is always valid JSON.
    let _ = serde_json::to_writer(&mut *out, s);
}

pub(super) fn push_list<T: Copy>(
    out: &mut Vec<u8>,
    key: &str,
    xs: &[T],
    f: impl Fn(&mut Vec<u8>, T),
) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":[");
    for (i, &x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        f(out, x);
    }
    out.push(b']');
}

/// Up to `n` characters of a message, for error texts.
pub(super) fn excerpt(bytes: &[u8], n: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.chars().count() <= n {
        s.into_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}
