//! Helpers shared by the integration tests: scratch folders and copies of the fixture.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Five policies of four families, for experiments on the tiny fixture.
pub const POLICIES: &str = r#"
[[policies]]
family = "round-robin"
[[policies]]
family = "ucb1"
[[policies]]
family = "epsilon-greedy"
epsilon = [0.1, 0.3]
[[policies]]
family = "bestk-velocity"
k = 2
"#;

/// A fresh, empty folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir()
        .join("banditbench-tests")
        .join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny")
}

/// A copy of the tiny fixture whose CSV text and manifest text are passed through `edit_csv`
/// and `edit_manifest`.
pub fn tiny_variant(
    name: &str,
    edit_csv: impl Fn(&str) -> String,
    edit_manifest: impl Fn(&str) -> String,
) -> PathBuf {
    let dir = scratch(name);
    let csv = std::fs::read_to_string(fixture().join("evaluations.csv")).unwrap();
    let manifest = std::fs::read_to_string(fixture().join("traceset.toml")).unwrap();
    std::fs::write(dir.join("evaluations.csv"), edit_csv(&csv)).unwrap();
    std::fs::write(dir.join("traceset.toml"), edit_manifest(&manifest)).unwrap();
    dir
}

/// Replace the `line`-th line of the CSV (1 = header).
pub fn set_line(csv: &str, line: usize, text: &str) -> String {
    csv.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { text } else { l })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_banditbench"))
}

/// Run the binary expecting it to fail with exit code `code`; returns its stderr.
pub fn run_fails(args: &[&str], code: i32) -> String {
    let out = bin().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "banditbench {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn run_ok(args: &[&str]) -> Output {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "banditbench {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `banditbench run EXP --out OUT --quiet`, which must succeed.
pub fn run_quiet(exp: &Path, out: &Path) {
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
}

/// Write an experiment file into `dir` that replays the tiny fixture.
pub fn experiment(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "name = \"{name}\"\ntraces = \"{}\"\n{body}",
        fixture().display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Reproduction options over the repository's experiments and traces, writing into `out`.
pub fn reproduce_options(out: &Path) -> banditbench::reproduce::ReproduceOptions {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    banditbench::reproduce::ReproduceOptions {
        experiments: root.join("experiments"),
        traces: root.join("traces"),
        results: out.to_path_buf(),
        threads: Some(2),
        timing_seconds: 0.2,
        ..Default::default()
    }
}

/// Copies of the repository's experiment files under `out/experiments`, trimmed for a test: each
/// `(file, budgets)` gets `budgets = <budgets>` and `repetitions = <repetitions>`, with the trace
/// paths made absolute. Reproduction options that read them and write into `out`.
pub fn trimmed_reproduction(
    out: &Path,
    files: &[(&str, &str)],
    repetitions: usize,
) -> banditbench::reproduce::ReproduceOptions {
    let exps = out.join("experiments");
    std::fs::create_dir_all(&exps).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (f, budgets) in files {
        let text = std::fs::read_to_string(root.join("experiments").join(f))
            .unwrap()
            .replace("../traces/", &format!("{}/traces/", root.display()))
            .lines()
            .map(|l| {
                if l.starts_with("repetitions") {
                    format!("repetitions = {repetitions}")
                } else if l.starts_with("budgets") {
                    format!("budgets = {budgets}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(exps.join(f), text).unwrap();
    }
    let mut opts = reproduce_options(out);
    opts.experiments = exps;
    opts
}

/// Whether `python3` runs; without it a test is skipped, unless `BANDITBENCH_REQUIRE_PYTHON` is
/// set (`.ci/run` sets it), when that is a failure.
pub fn python_ok() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("BANDITBENCH_REQUIRE_PYTHON").is_err(),
            "BANDITBENCH_REQUIRE_PYTHON is set but python3 cannot be run"
        );
        eprintln!("skipped: python3 is not installed");
    }
    ok
}
