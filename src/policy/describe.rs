//! `banditbench policies`: the registry rendered from its own descriptions, and the nearest names
//! for a name that matches none.

use super::*;
use crate::protocol::WorldKind;
use anyhow::{Result, bail};

/// " (did you mean 'ucb1'?)" for the names in `names` closest to `given` (Jaro–Winkler ≥ 0.7,
/// at most three), or "" when none is close.
pub fn did_you_mean<'a>(given: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let g = given.to_lowercase();
    let mut near: Vec<(f64, &str)> = names
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&g, &c.to_lowercase()), c))
        .filter(|(d, _)| *d >= 0.7)
        .collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    if near.is_empty() {
        return String::new();
    }
    format!(
        " (did you mean {}?)",
        near.iter()
            .take(3)
            .map(|(_, n)| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

/// Where a family runs on several simulated workers, in words.
pub fn parallel_text(f: &Family) -> String {
    if f.parallel.is_empty() {
        "no (one worker only; an experiment with workers > 1 is refused when it loads)".to_string()
    } else if f.parallel == f.worlds {
        "yes".to_string()
    } else {
        let w: Vec<&str> = f.parallel.iter().map(|w| w.as_str()).collect();
        format!("in the {} world", w.join(" and "))
    }
}

/// `banditbench policies [NAME] [--world W]`: every registered family (and the external policy)
/// with its summary, worlds, source and parameters, rendered from the registry. `name` keeps the
/// families whose name contains it; `world` those that run in that world. A name that matches
/// nothing is an error that suggests the nearest names.
pub fn describe_registry(name: Option<&str>, world: Option<WorldKind>) -> Result<String> {
    use std::fmt::Write as _;
    let all_worlds = WorldKind::ALL;
    let wanted = |fam: &str, worlds: &[WorldKind]| {
        name.is_none_or(|n| fam.to_lowercase().contains(&n.to_lowercase()))
            && world.is_none_or(|w| worlds.contains(&w))
    };
    let mut s = String::new();
    let mut shown = 0;
    for f in registry() {
        if !wanted(f.name, f.worlds) {
            continue;
        }
        shown += 1;
        let worlds: Vec<&str> = f.worlds.iter().map(|w| w.as_str()).collect();
        let _ = writeln!(s, "{}\n    {}", f.name, f.summary);
        let _ = writeln!(s, "    worlds: {}", worlds.join(", "));
        let _ = writeln!(s, "    several workers: {}", parallel_text(f));
        let _ = writeln!(s, "    source: {}", f.source);
        if f.params.is_empty() {
            let _ = writeln!(s, "    parameters: none");
        }
        for p in &f.params {
            let kind = kind_text(&p.kind);
            let _ = writeln!(
                s,
                "    {} = {}   ({kind})\n        {}",
                p.name, p.default, p.doc
            );
        }
        s.push('\n');
    }
    if wanted("external", &all_worlds) {
        shown += 1;
        let _ = writeln!(
            s,
            "external\n    a policy in any language: a process that speaks the JSON-lines policy protocol (docs/protocol.md)\n    worlds: time-sliced, pull-count, synthetic, pool\n    several workers: in every world; its start message says how many (workers), and it must not pull an arm that is running (view.busy)\n    source: cite the policy's own paper; the protocol is banditbench's, version {}\n    keys:",
            external::PROTOCOL
        );
        for (k, doc) in EXTERNAL_KEYS {
            let _ = writeln!(s, "      {k}: {doc}");
        }
        let _ = writeln!(
            s,
            "    Python: pip install ., subclass banditbench.Policy, see python/examples/ and README 'Adding a policy'"
        );
    }
    if wanted("python", &all_worlds) {
        shown += 1;
        let _ = writeln!(
            s,
            "python\n    a Python policy run in-process, with no process and no JSON (from the Python package: banditbench.run, or its `banditbench` command)\n    worlds: time-sliced, pull-count, synthetic, pool\n    several workers: in every world; cell.workers says how many, and it must not pull an arm that is running (view.busy)\n    source: cite the policy's own paper\n    keys:"
        );
        for (k, doc) in IN_PROCESS_KEYS {
            let _ = writeln!(s, "      {k}: {doc}");
        }
    }
    if shown == 0 {
        let names: Vec<&str> = registry()
            .iter()
            .map(|f| f.name)
            .chain(["external", "python"])
            .collect();
        let what = match (name, world) {
            (Some(n), Some(w)) => format!("named like '{n}' in the {} world", w.as_str()),
            (Some(n), None) => format!("named like '{n}'"),
            (None, Some(w)) => format!("in the {} world", w.as_str()),
            (None, None) => String::new(),
        };
        bail!(
            "no policy {what}{}; the policies: {}",
            name.map_or_else(String::new, |n| did_you_mean(n, names.iter().copied())),
            names.join(", ")
        );
    }
    Ok(s)
}

/// A parameter's kind in words: `float in [0, 1]`, `int in [1, 10]`, `a | b`, `any`.
pub(crate) fn kind_text(kind: &Kind) -> String {
    match kind {
        Kind::Float { min, max } => format!("float in [{min}, {max}]"),
        Kind::Int { min, max } => format!("int in [{min}, {max}]"),
        Kind::Choice(c) => c.join(" | "),
        Kind::Any => "any".to_string(),
    }
}
