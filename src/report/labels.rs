//! Short policy labels for figures: by default the shortest name that tells the compared policies
//! apart (the family, plus the parameters whose values differ within it, with Greek letters for
//! the usual symbols), or whatever a label map file says. Tables keep the full policy ids;
//! `labels.csv` in every report maps one to the other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// A policy as the report knows it: its id, family and parameters (the `params` JSON of
/// `runs.parquet`; empty for score tables from other tools).
#[derive(Clone, Debug)]
pub struct PolicyName {
    pub id: String,
    pub family: String,
    pub params: Vec<(String, String)>,
}

impl PolicyName {
    /// From a `runs.parquet` row: parameters in the order the id names them.
    pub fn from_run(id: &str, family: &str, params_json: &str) -> PolicyName {
        let mut params: Vec<(String, String)> = match serde_json::from_str(params_json) {
            Ok(serde_json::Value::Object(m)) => m
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s,
                        serde_json::Value::Number(n) => n
                            .as_f64()
                            .map(super::figures::style::fmt_number)
                            .unwrap_or_else(|| n.to_string()),
                        other => other.to_string(),
                    };
                    (k, v)
                })
                .collect(),
            _ => Vec::new(),
        };
        params.sort_by_key(|(k, _)| id.find(&format!("{k}=")).unwrap_or(usize::MAX));
        PolicyName {
            id: id.to_string(),
            family: family.to_string(),
            params,
        }
    }

    /// A policy known by its name only.
    pub fn bare(id: &str) -> PolicyName {
        PolicyName {
            id: id.to_string(),
            family: id.to_string(),
            params: Vec::new(),
        }
    }
}

/// The usual symbol of a parameter name, where it has one.
pub(crate) fn symbol(name: &str) -> String {
    let greek = [
        ("alpha", "α"),
        ("beta", "β"),
        ("gamma", "γ"),
        ("delta", "δ"),
        ("epsilon", "ε"),
        ("eps", "ε"),
        ("eta", "η"),
        ("theta", "θ"),
        ("lambda", "λ"),
        ("mu", "μ"),
        ("rho", "ρ"),
        ("sigma", "σ"),
        ("tau", "τ"),
    ];
    for (word, g) in greek {
        if let Some(rest) = name.strip_prefix(word)
            && (rest.is_empty() || rest.chars().all(|c| c.is_ascii_digit() || c == '_'))
        {
            return format!("{g}{}", rest.trim_start_matches('_'));
        }
    }
    name.to_string()
}

/// Labels for `policies`, in order: a label map's entry where it has one, otherwise the family
/// alone when it is the only member of its family, otherwise the family with the parameters
/// that vary among its members (`hamlet-ucb(ρ=0.1)`). Labels that would still collide fall back
/// to the full id.
pub fn short_labels(policies: &[PolicyName], map: &BTreeMap<String, String>) -> Vec<String> {
    let mut by_family: BTreeMap<&str, Vec<&PolicyName>> = BTreeMap::new();
    for p in policies {
        by_family.entry(&p.family).or_default().push(p);
    }
    let auto = |p: &PolicyName| -> String {
        let members = &by_family[p.family.as_str()];
        if members.len() == 1 || p.params.is_empty() {
            return p.family.clone();
        }
        let varying: BTreeSet<&str> = p
            .params
            .iter()
            .filter(|(k, v)| {
                members
                    .iter()
                    .any(|m| m.params.iter().find(|(mk, _)| mk == k).map(|x| &x.1) != Some(v))
            })
            .map(|(k, _)| k.as_str())
            .collect();
        if varying.is_empty() {
            return p.family.clone();
        }
        let parts: Vec<String> = p
            .params
            .iter()
            .filter(|(k, _)| varying.contains(k.as_str()))
            .map(|(k, v)| format!("{}={v}", symbol(k)))
            .collect();
        format!("{}({})", p.family, parts.join(", "))
    };
    let labels: Vec<String> = policies
        .iter()
        .map(|p| map.get(&p.id).cloned().unwrap_or_else(|| auto(p)))
        .collect();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &labels {
        *count.entry(l).or_default() += 1;
    }
    labels
        .iter()
        .zip(policies)
        .map(|(l, p)| {
            if count[l.as_str()] > 1 {
                p.id.clone()
            } else {
                l.clone()
            }
        })
        .collect()
}

/// Read a label map: TOML (`"policy id" = "label"`, optionally under `[labels]`) or CSV with
/// the columns `policy,label`.
pub fn read_label_map(path: &Path) -> Result<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv {
        let mut rdr = text.lines().enumerate();
        let Some((_, header)) = rdr.next() else {
            bail!(
                "{}: empty; expected a header 'policy,label' and one row per policy",
                path.display()
            );
        };
        if header.trim() != "policy,label" {
            bail!(
                "{}: line 1 is '{header}'; expected the header 'policy,label'",
                path.display()
            );
        }
        let mut map = BTreeMap::new();
        for (i, line) in rdr {
            if line.trim().is_empty() {
                continue;
            }
            let fields = split_csv(line);
            if fields.len() != 2 {
                bail!(
                    "{}: line {} has {} fields; expected 2 (policy,label; quote ids that contain commas)",
                    path.display(),
                    i + 1,
                    fields.len()
                );
            }
            map.insert(fields[0].clone(), fields[1].clone());
        }
        return Ok(map);
    }
    let value: toml::Table = toml::from_str(&text)
        .with_context(|| format!("{}: not TOML (or give a .csv file)", path.display()))?;
    let table = match value.get("labels") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => value,
    };
    table
        .into_iter()
        .map(|(k, v)| match v {
            toml::Value::String(s) => Ok((k, s)),
            other => bail!(
                "{}: the label of '{k}' is {other}; expected a string",
                path.display()
            ),
        })
        .collect()
}

/// Split one CSV line on commas outside double quotes.
fn split_csv(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().expect("one field").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: &str, family: &str, params: &str) -> PolicyName {
        PolicyName::from_run(id, family, params)
    }

    #[test]
    fn labels_keep_only_what_tells_policies_apart() {
        let ps = vec![
            p(
                "hamlet-ucb(rho=0.1, bonus=standard, start_slices=1)",
                "hamlet-ucb",
                r#"{"bonus":"standard","rho":0.1,"start_slices":1}"#,
            ),
            p(
                "hamlet-ucb(rho=0.05, bonus=standard, start_slices=1)",
                "hamlet-ucb",
                r#"{"bonus":"standard","rho":0.05,"start_slices":1}"#,
            ),
            p("round-robin", "round-robin", "{}"),
            p(
                "ucb1(tie_break=first, log_t=pulls)",
                "ucb1",
                r#"{"tie_break":"first","log_t":"pulls"}"#,
            ),
            p(
                "epsilon-greedy(epsilon=0.1, initial_pulls=0)",
                "epsilon-greedy",
                r#"{"epsilon":0.1,"initial_pulls":0}"#,
            ),
            p(
                "epsilon-greedy(epsilon=0.05, initial_pulls=0)",
                "epsilon-greedy",
                r#"{"epsilon":0.05,"initial_pulls":0}"#,
            ),
        ];
        let mut map = BTreeMap::new();
        assert_eq!(
            short_labels(&ps, &map),
            [
                "hamlet-ucb(ρ=0.1)",
                "hamlet-ucb(ρ=0.05)",
                "round-robin",
                "ucb1",
                "epsilon-greedy(ε=0.1)",
                "epsilon-greedy(ε=0.05)"
            ]
        );
        assert_eq!(symbol("eps1"), "ε1");
        assert_eq!(symbol("epsilon_2"), "ε2");
        assert_eq!(symbol("k"), "k");
        map.insert("round-robin".to_string(), "RR".to_string());
        map.insert("ucb1(tie_break=first, log_t=pulls)".into(), "RR".into());
        let l = short_labels(&ps, &map);
        // Two policies mapped to one label are told apart by their ids.
        assert_eq!(l[2], "round-robin");
        assert_eq!(l[3], "ucb1(tie_break=first, log_t=pulls)");
    }

    #[test]
    fn label_maps_read_from_toml_and_csv() {
        let dir = std::env::temp_dir().join(format!("bb-labels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = dir.join("l.toml");
        std::fs::write(&t, "[labels]\n\"ucb1(tie_break=first)\" = \"UCB1\"\n").unwrap();
        assert_eq!(read_label_map(&t).unwrap()["ucb1(tie_break=first)"], "UCB1");
        let c = dir.join("l.csv");
        std::fs::write(&c, "policy,label\n\"a(x=1, y=2)\",A\n").unwrap();
        assert_eq!(read_label_map(&c).unwrap()["a(x=1, y=2)"], "A");
        std::fs::write(&c, "policy,label\na(x=1, y=2),A\n").unwrap();
        let e = read_label_map(&c).unwrap_err().to_string();
        assert!(e.contains("line 2 has 3 fields"), "{e}");
        std::fs::write(&t, "x = 3\n").unwrap();
        let e = read_label_map(&t).unwrap_err().to_string();
        assert!(e.contains("'x' is 3; expected a string"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
