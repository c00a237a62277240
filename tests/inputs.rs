//! Inputs that used to crash or mislead (issue "Numbers a reviewer can trust", §10): each gets an
//! error naming the file, key or row and what to do, checked through the real command.

mod common;

use common::{bin, experiment, run_ok, scratch, set_line, tiny_variant};

const ONE_POLICY: &str = "[[policies]]\nfamily = \"round-robin\"\n";

fn fails(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        !out.status.success(),
        "banditbench {args:?} should fail:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_ne!(out.status.code(), Some(101), "a panic, not an error");
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn world(budgets: &str, slice: &str) -> String {
    format!(
        "seed = 1\n[world]\nkind = \"time-sliced\"\nbudget_unit = \"seconds\"\nbudgets = {budgets}\nslice = {slice}\n"
    )
}

fn run_exp(dir: &std::path::Path, name: &str, body: &str) -> String {
    let exp = experiment(dir, name, body);
    let out = dir.join(format!("out-{name}"));
    fails(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ])
}

#[test]
fn empty_filters_and_zero_max_tasks_name_their_key() {
    let dir = scratch("inputs-filters");
    for (key, line) in [
        ("tasks.learners", "learners = []"),
        ("tasks.datasets", "datasets = []"),
        ("tasks.runs", "runs = []"),
        ("tasks.max_tasks", "max_tasks = 0"),
    ] {
        let body = format!(
            "seed = 1\n[tasks]\n{line}\n[world]\nkind = \"time-sliced\"\nbudgets = [3]\nslice = 0.5\n{ONE_POLICY}"
        );
        let e = run_exp(&dir, &format!("f{}", key.len()), &body);
        assert!(e.contains(&format!("key '{key}'")), "{key}: {e}");
    }
}

#[test]
fn duplicate_budgets_and_a_missing_seed_are_refused() {
    let dir = scratch("inputs-budgets");
    let e = run_exp(
        &dir,
        "dup",
        &format!("{}{ONE_POLICY}", world("[0.5, 0.5]", "0.1")),
    );
    assert!(e.contains("'world.budgets' lists 0.5 twice"), "{e}");
    let body = world("[3]", "0.5").replace("seed = 1\n", "");
    let e = run_exp(&dir, "noseed", &format!("{body}{ONE_POLICY}"));
    assert!(e.contains("missing key 'seed'"), "{e}");
    assert!(!e.contains("line 1, column 1"), "{e}");
}

#[test]
fn work_no_machine_can_do_is_refused_with_the_estimate() {
    let dir = scratch("inputs-work");
    let e = run_exp(
        &dir,
        "slice",
        &format!("{}{ONE_POLICY}", world("[5]", "1e-9")),
    );
    assert!(
        e.contains("one cell would take") && e.contains("'world.slice'"),
        "{e}"
    );
    let e = run_exp(
        &dir,
        "secs",
        &format!("{}{ONE_POLICY}", world("[1e15]", "1")),
    );
    assert!(e.contains("decisions"), "{e}");
    let body = world("[3]", "0.5").replace("seed = 1\n", "seed = 1\nrepetitions = 1000000000\n");
    let e = run_exp(&dir, "reps", &format!("{body}{ONE_POLICY}"));
    assert!(
        e.contains("cells, more than") && e.contains("'repetitions'"),
        "{e}"
    );
    let pulls = "seed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [1e12]\n";
    let e = run_exp(&dir, "pulls", &format!("{pulls}{ONE_POLICY}"));
    assert!(e.contains("'world.budgets'"), "{e}");
    let e = fails(&[
        "report",
        "--scores",
        common::fixture().join("evaluations.csv").to_str().unwrap(),
        "--bootstrap-samples",
        "1000000000000",
    ]);
    assert!(e.contains("--bootstrap-samples"), "{e}");
}

#[test]
fn zero_threads_and_batch_size_are_refused() {
    let dir = scratch("inputs-threads");
    let exp = experiment(&dir, "t", &format!("{}{ONE_POLICY}", world("[3]", "0.5")));
    let e = fails(&["run", exp.to_str().unwrap(), "--threads", "0"]);
    assert!(e.contains("--threads"), "{e}");
    let e = fails(&["run", exp.to_str().unwrap(), "--batch-size", "0"]);
    assert!(e.contains("--batch-size"), "{e}");
}

#[test]
fn csv_problems_name_the_line() {
    // A ragged line, a duplicate header, non-UTF-8 bytes: each names its line.
    let ragged = tiny_variant(
        "inputs-ragged",
        |c| set_line(c, 4, "d1,a,0,2,2.0,0.5,0.4,ok,extra"),
        |m| m.into(),
    );
    let e = fails(&["traces", "validate", ragged.to_str().unwrap()]);
    let e = e + &String::from_utf8_lossy(
        &bin()
            .args(["traces", "validate", ragged.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(
        e.contains("line 4: 9 field(s), but the header has 8"),
        "{e}"
    );
    assert!(!e.contains("truncate_ragged_lines"), "{e}");
    let dup = tiny_variant(
        "inputs-dup",
        |c| {
            let mut lines: Vec<String> = c.lines().map(String::from).collect();
            lines[0] = lines[0].replacen("score", "seq", 1);
            lines.join("\n") + "\n"
        },
        |m| m.into(),
    );
    let out = bin()
        .args(["traces", "validate", dup.to_str().unwrap()])
        .output()
        .unwrap();
    let e =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("appears twice in the header"), "{e}");
    let dir = scratch("inputs-utf8");
    let scores = dir.join("scores.csv");
    let mut bytes = b"unit,policy,score\nu1,a,0.5\nu1,b,0.4\nu2,a,0.3\n".to_vec();
    bytes.extend_from_slice(b"u2,\xff\xfe,0.2\n");
    std::fs::write(&scores, bytes).unwrap();
    let e = fails(&["report", "--scores", scores.to_str().unwrap()]);
    assert!(e.contains("line 5") && e.contains("UTF-8"), "{e}");
    std::fs::write(
        &scores,
        "unit,policy,score\nu1,a,0.5\nu1,b,high\nu2,a,0.3\nu2,b,0.2\n",
    )
    .unwrap();
    let e = fails(&["report", "--scores", scores.to_str().unwrap()]);
    assert!(e.contains("row 2 (line 3)") && e.contains("'high'"), "{e}");
}

#[test]
fn unknown_manifest_keys_and_two_evaluation_files_are_refused() {
    let extra = tiny_variant(
        "inputs-manifest",
        |c| c.into(),
        |m| format!("colour = \"blue\"\n{m}"),
    );
    let out = bin()
        .args(["traces", "validate", extra.to_str().unwrap()])
        .output()
        .unwrap();
    let e =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("unknown key 'colour'"), "{e}");
    // Both files holding different tables: refused, naming both. (Any parquet that is not the
    // CSV's table will do; a results file is one at hand.)
    let both = tiny_variant("inputs-both", |c| c.into(), |m| m.into());
    let exp_dir = scratch("inputs-both-exp");
    let body = format!("{}{ONE_POLICY}", world("[3]", "0.5"));
    let exp = common::experiment(&exp_dir, "conv", &body);
    let runs_dir = exp_dir.join("out");
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        runs_dir.to_str().unwrap(),
        "--quiet",
    ]);
    std::fs::copy(
        runs_dir.join("runs.parquet"),
        both.join("evaluations.parquet"),
    )
    .unwrap();
    let out = bin()
        .args(["traces", "validate", both.to_str().unwrap()])
        .output()
        .unwrap();
    let e =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("both evaluations.parquet and evaluations.csv") && e.contains("differ"),
        "{e}"
    );
}

#[test]
fn per_dataset_parameters_resolve_per_task_and_keep_one_policy_id() {
    let dir = scratch("inputs-per-dataset");
    let body = r#"seed = 4
repetitions = 2
[world]
kind = "pull-count"
budgets = [4]
[[policies]]
family = "epsilon-greedy"
epsilon = { per_dataset = { d1 = 0.0, d2 = 1.0 } }
[[policies]]
family = "round-robin"
"#;
    let exp = experiment(&dir, "perds", body);
    let out = dir.join("out");
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let res = banditbench::results::read_results(&out).unwrap();
    let eg: Vec<_> = res
        .runs
        .iter()
        .filter(|r| r.family == "epsilon-greedy")
        .collect();
    assert!(!eg.is_empty());
    for r in &eg {
        assert_eq!(
            r.policy,
            "epsilon-greedy(epsilon=per-dataset, initial_pulls=0)"
        );
        let want = if r.dataset == "d1" {
            "\"epsilon\":0.0"
        } else {
            "\"epsilon\":1.0"
        };
        assert!(r.params.contains(want), "{}: {}", r.dataset, r.params);
    }
    // A dataset without a value (and no default) is an error naming the parameter and dataset.
    let bad = body.replace("d2 = 1.0", "d3 = 1.0");
    let e = run_exp(&dir, "perds-missing", &bad);
    assert!(e.contains("parameter 'epsilon'") && e.contains("d2"), "{e}");
}

#[test]
fn damaged_results_folders_name_the_file_and_what_to_do() {
    let dir = scratch("inputs-results");
    let exp = experiment(&dir, "r", &format!("{}{ONE_POLICY}", world("[3]", "0.5")));
    let out = dir.join("out");
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    // A runs.parquet of another schema: the report names the file and the column.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(out.join("trajectories.parquet"), other.join("runs.parquet")).unwrap();
    let e = fails(&["report", other.to_str().unwrap()]);
    assert!(e.contains("runs.parquet") && e.contains("no column"), "{e}");
    // A truncated lock file blocks a resume with advice.
    let lock = out.join("experiment.lock.toml");
    let text = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(&lock, &text[..text.len() / 3]).unwrap();
    let e = fails(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        e.contains("experiment.lock.toml") && e.contains("delete this file"),
        "{e}"
    );
    // A garbage part file blocks a resume with advice; deleting it lets the run finish.
    std::fs::write(&lock, text).unwrap();
    let part = out.join("parts").join("runs-000099.parquet");
    std::fs::create_dir_all(part.parent().unwrap()).unwrap();
    std::fs::write(&part, b"not parquet").unwrap();
    let e = fails(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        e.contains("runs-000099.parquet") && e.contains("delete it"),
        "{e}"
    );
    std::fs::remove_file(&part).unwrap();
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
}

#[test]
fn no_task_left_says_which_filter_or_that_none_was_given() {
    // d1 lacks learner b, d2 lacks learner c: with allow_missing_arms both tasks are dropped.
    let ts = tiny_variant(
        "inputs-no-task",
        |c| {
            c.lines()
                .filter(|l| !l.starts_with("d1,b,") && !l.starts_with("d2,c,"))
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        },
        |m| m.into(),
    );
    let dir = scratch("inputs-no-task-exp");
    let exp = dir.join("e.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"e\"\ntraces = \"{}\"\nallow_missing_arms = true\n{}{ONE_POLICY}",
            ts.display(),
            world("[3]", "0.5")
        ),
    )
    .unwrap();
    let e = fails(&["run", exp.to_str().unwrap(), "--quiet"]);
    assert!(
        e.contains("no task left to replay (no filter was given"),
        "{e}"
    );
    assert!(!e.contains("None"), "{e}");
}
