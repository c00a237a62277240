//! The layering check: the top-level modules of `src/` (src/NAME.rs or src/NAME/) and which
//! use which, read from their `crate::NAME` paths outside `#[cfg(test)]` items. No two modules
//! may reach each other (a circle of imports), so each layer can be read, tested and replaced
//! on its own (`docs/DESIGN.md`, "Module map").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text without `#[cfg(test)]` items (the attribute through its braced block).
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let (brace, semi) = (after.find('{'), after.find(';'));
        match (brace, semi) {
            (Some(b), Some(s)) if s < b => rest = &after[s + 1..],
            (Some(b), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end..];
            }
            _ => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The modules a text names through `crate::NAME` (also inside `use crate::{a, b}`).
fn used(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in text.match_indices("crate::") {
        let after = &text[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// module -> the modules it uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let text = without_tests(&std::fs::read_to_string(&f).unwrap());
        let e = g.entry(module.clone()).or_default();
        for m in used(&text) {
            if m != module {
                e.insert(m);
            }
        }
    }
    g
}

/// Every module reachable from `from`.
fn reach(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        for n in g.get(&m).into_iter().flatten() {
            if seen.insert(n.clone()) {
                stack.push(n.clone());
            }
        }
    }
    seen
}

#[test]
fn no_two_modules_use_each_other() {
    let g = graph();
    let mut circles: BTreeSet<Vec<String>> = BTreeSet::new();
    for m in g.keys() {
        let from_m = reach(&g, m);
        if from_m.contains(m) {
            let mut members: Vec<String> = from_m
                .into_iter()
                .filter(|n| reach(&g, n).contains(m))
                .collect();
            members.sort();
            circles.insert(members);
        }
    }
    assert!(
        circles.is_empty(),
        "circles of imports among the modules of src/ (each set reaches itself): {circles:?}; graph: {g:?}"
    );
}

#[test]
fn the_check_sees_uses_and_skips_tests() {
    let text = "use crate::rng::Rng;\nfn f() { crate::trace::load(); }\nuse crate::{a, b::c};\n#[cfg(test)]\nmod tests {\n    use crate::report::x;\n    fn g() { if true { crate::bench::y(); } }\n}\nfn h() { crate::curve::z(); }\n";
    let u = used(&without_tests(text));
    let want: BTreeSet<String> = ["rng", "trace", "a", "b", "curve"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(u, want);
    // A circle is found: x -> y -> x.
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("x".into()).or_default().insert("y".into());
    g.entry("y".into()).or_default().insert("x".into());
    assert!(reach(&g, "x").contains("x"));
}

/// The layers of `docs/DESIGN.md` ("Module map"), bottom to top: what each module may use
/// besides the foundations (`rng`, `build`, `names`, `normal`, `space`: small modules that use
/// nothing of the crate, usable everywhere). `bench`, `slurm` and the crate root sit on top.
const LAYERS: &[(&str, &[&str])] = &[
    ("curve", &[]),
    ("results", &[]),
    ("protocol", &[]),
    ("trace", &[]),
    ("replay", &["protocol", "trace"]),
    ("policy", &["protocol", "curve"]),
    (
        "experiment",
        &["trace", "replay", "policy", "results", "protocol"],
    ),
    ("analysis", &["results"]),
    ("report", &["analysis", "results"]),
    (
        "reproduce",
        &["experiment", "report", "analysis", "results"],
    ),
    // Importers write results folders through the store and parse numbers as `report` does.
    ("import", &["experiment", "report", "results", "trace"]),
];

const FOUNDATIONS: &[&str] = &[
    "rng", "build", "bundled", "names", "normal", "space", "files", "options", "pareto",
];

/// Uses across the layers that remain to be removed (issue #26): each is named here so that no
/// new one can appear unseen. `report` reads a results folder's trace set for `--regret trace`
/// and its experiment for labels; `reproduce` times D-TTTS with `bench` and reads traces.
const DEBTS: &[(&str, &str)] = &[
    ("report", "trace"),
    ("reproduce", "bench"),
    ("reproduce", "trace"),
];

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let g = graph();
    let mut wrong = Vec::new();
    for (module, uses) in &g {
        if FOUNDATIONS.contains(&module.as_str()) {
            if let Some(u) = uses.iter().next() {
                wrong.push(format!(
                    "{module} -> {u} (a foundation uses nothing of the crate)"
                ));
            }
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(m, _)| m == module) else {
            continue;
        };
        for u in uses {
            let ok = allowed.contains(&u.as_str())
                || FOUNDATIONS.contains(&u.as_str())
                || DEBTS.contains(&(module.as_str(), u.as_str()));
            if !ok {
                wrong.push(format!("{module} -> {u}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses across the layers of DESIGN.md: {wrong:?}; move the shared item down a layer"
    );
    // Each debt is still real (a paid one is removed from the list).
    for (m, u) in DEBTS {
        assert!(
            g.get(*m).is_some_and(|s| s.contains(*u)),
            "{m} -> {u} is gone: remove it from DEBTS"
        );
    }
}

/// The README's "Where things live" names real files: every path it gives (`src/…`, `docs/…`,
/// `scripts/…`, `tests/…`; placeholders such as `<family>` aside) exists, and every module it
/// calls a foundation is one here.
#[test]
fn where_things_live_names_real_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("### Where things live")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the README has a section \"Where things live\"");
    let mut named = 0;
    let mut missing = Vec::new();
    for quoted in section.split('`').skip(1).step_by(2) {
        let path = quoted.trim_end_matches(['/', ',']);
        let is_path = ["src/", "docs/", "scripts/", "tests/"]
            .iter()
            .any(|p| path.starts_with(p));
        if !is_path || path.contains('<') || path.contains(' ') {
            continue;
        }
        named += 1;
        if !root.join(path).exists() {
            missing.push(path.to_string());
        }
    }
    assert!(named >= 15, "only {named} paths found in the section");
    assert!(
        missing.is_empty(),
        "the README names files that do not exist: {missing:?}"
    );
    for f in FOUNDATIONS {
        assert!(
            section.contains(&format!("`{f}`")),
            "{f} is a foundation here but the README does not say so"
        );
    }
}

/// Every file the README links to or shows (`[text](path)`, `![alt](path)`, relative, anchors
/// aside) is in the repository: a figure copied in by hand, or a file moved, cannot leave a
/// dead link.
#[test]
fn every_file_the_readme_links_to_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut checked = 0;
    let mut missing = Vec::new();
    for (i, _) in readme.match_indices("](") {
        let rest = &readme[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = &rest[..end];
        if target.contains(char::is_whitespace)
            || target.starts_with("http")
            || target.starts_with('#')
            || target.starts_with("mailto:")
        {
            continue;
        }
        let path = target.split('#').next().unwrap_or_default();
        checked += 1;
        if !root.join(path).exists() {
            missing.push(target.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "README links to missing files: {missing:?}"
    );
    assert!(
        checked >= 30,
        "only {checked} links found: is the pattern still right?"
    );
}
