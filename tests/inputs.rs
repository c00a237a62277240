//! Inputs that used to crash or mislead (issue "Numbers a reviewer can trust", §10): each gets an
//! error naming the file, key or row and what to do, checked through the real command.

mod common;

use common::{bin, experiment, run_ok, run_quiet, scratch, set_line, tiny_variant};
use std::path::{Path, PathBuf};

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

/// What `traces validate DIR` printed, stdout then stderr.
fn validate_output(dir: &std::path::Path) -> String {
    let out = bin()
        .args(["traces", "validate", dir.to_str().unwrap()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
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
    let e = validate_output(&dup);
    assert!(e.contains("appears twice in the header"), "{e}");
    // A run id too large for 64 bits: the row and column, not polars' advice for Python.
    let huge = tiny_variant(
        "inputs-huge-run",
        |c| set_line(c, 3, "d1,a,99999999999999999999999,1,4.0,0.60,0.58,ok"),
        |m| m.into(),
    );
    let e = validate_output(&huge);
    assert!(
        e.contains("row 2 (line 3), column 'run': `99999999999999999999999` is not a number"),
        "{e}"
    );
    assert!(
        !e.contains("infer_schema_length") && !e.contains("ignore_errors"),
        "{e}"
    );
    // A header and no rows: said so, not "the trace set has the datasets " and nothing.
    let empty = tiny_variant(
        "inputs-header-only",
        |c| c.lines().next().unwrap().to_string() + "\n",
        |m| m.into(),
    );
    let e = validate_output(&empty);
    assert!(e.contains("evaluations.csv: no rows, only a header"), "{e}");
    // A NUL and an escape sequence in a learner's name (a damaged file): the row, escaped, never
    // printed raw to the terminal.
    let nul = tiny_variant(
        "inputs-nul-name",
        |c| c.replace("d1,a,0,1,", "d1,a\0\u{1b}[31m,0,1,"),
        |m| m.into(),
    );
    let e = validate_output(&nul);
    assert!(
        e.contains("row 2 (line 3), column 'learner': 'a\\0\\u{1b}[31m' holds a control character")
            && !e.contains('\0')
            && !e.contains('\u{1b}'),
        "{e}"
    );
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
    run_quiet(&exp, &runs_dir);
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
    run_quiet(&exp, &out);
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
    // A misspelt dataset is an error even when a default would cover it.
    let typo = body.replace(
        "{ per_dataset = { d1 = 0.0, d2 = 1.0 } }",
        "{ per_dataset = { d1 = 0.0, d_2 = 1.0 }, default = 0.5 }",
    );
    let e = run_exp(&dir, "perds-typo", &typo);
    assert!(
        e.contains("parameter 'epsilon': per_dataset names dataset 'd_2', which the data does not have (it has: d1, d2)"),
        "{e}"
    );
}

#[test]
fn damaged_results_folders_name_the_file_and_what_to_do() {
    let dir = scratch("inputs-results");
    let exp = experiment(&dir, "r", &format!("{}{ONE_POLICY}", world("[3]", "0.5")));
    let out = dir.join("out");
    let resume = [
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    run_ok(&resume);
    // A runs.parquet of another schema: the report names the file and the column.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(out.join("trajectories.parquet"), other.join("runs.parquet")).unwrap();
    let copy = |f: &str| std::fs::copy(out.join(f), other.join(f)).unwrap();
    let report = || fails(&["report", other.to_str().unwrap()]);
    // Without its lock file the folder is not whole: said before anything is ranked.
    let e = report();
    assert!(
        e.contains("no experiment.lock.toml beside runs.parquet") && e.contains("copy the lock"),
        "{e}"
    );
    copy("experiment.lock.toml");
    // Without the trajectories its lock says were written: named.
    let e = report();
    assert!(
        e.contains("no trajectories.parquet, though experiment.lock.toml says"),
        "{e}"
    );
    copy("trajectories.parquet");
    let e = report();
    assert!(e.contains("runs.parquet") && e.contains("no column"), "{e}");
    // A garbage lock file stops the report too, with the same advice as a resume.
    std::fs::write(other.join("experiment.lock.toml"), "\u{0}garbage = = \n").unwrap();
    let e = report();
    assert!(
        e.contains("experiment.lock.toml: not a valid lock file"),
        "{e}"
    );
    // A truncated lock file blocks a resume with advice.
    let lock = out.join("experiment.lock.toml");
    let text = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(&lock, &text[..text.len() / 3]).unwrap();
    let e = fails(&resume);
    assert!(
        e.contains("experiment.lock.toml") && e.contains("delete this file"),
        "{e}"
    );
    // A lock file that is a symbolic link is refused without printing what it points to.
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "top secret line\nmore\n").unwrap();
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(&secret, &lock).unwrap();
    let e = fails(&resume);
    assert!(
        e.contains("is a symbolic link") && !e.contains("top secret"),
        "{e}"
    );
    std::fs::remove_file(&lock).unwrap();
    // A garbage part file blocks a resume with advice; deleting it lets the run finish.
    std::fs::write(&lock, text).unwrap();
    let part = out.join("parts").join("runs-000099.parquet");
    std::fs::create_dir_all(part.parent().unwrap()).unwrap();
    std::fs::write(&part, b"not parquet").unwrap();
    let e = fails(&resume);
    assert!(
        e.contains("runs-000099.parquet") && e.contains("delete it"),
        "{e}"
    );
    std::fs::remove_file(&part).unwrap();
    run_ok(&resume);
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

#[test]
fn a_budget_shorter_than_its_slice_is_refused() {
    let dir = scratch("inputs-short-budget");
    let e = run_exp(
        &dir,
        "short",
        &format!("{}{ONE_POLICY}", world("[0.5, 5.0]", "1.0")),
    );
    assert!(
        e.contains("budget 0.5 seconds: the slice is longer than the budget on 2 of 2 tasks")
            && e.contains("a smaller 'slice'"),
        "{e}"
    );
    assert!(!dir.join("out-short").join("runs.parquet").exists());
}

/// `traces list` names every bundled set in a line; `traces inspect traces/*` skips the README;
/// `policies` filters by name and world and suggests the nearest name on a typo.
#[test]
fn finding_ones_way_among_traces_and_policies() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let traces = root.join("traces");
    let out = run_ok(&["traces", "list", traces.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    for set in [
        "lcdb",
        "sklearn-random",
        "sklearn-de",
        "sklearn-grid",
        "hpobench-mlp",
        "nasbench201",
        "fcnet",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{set} "))),
            "{set} missing:\n{text}"
        );
    }
    assert!(
        text.contains("pool (") && text.contains("trace set (recorded)"),
        "{text}"
    );
    // A pool of several objectives lists them, each with its direction.
    assert!(
        text.contains("val_loss (minimize) x train_time (minimize) x model_size (minimize)"),
        "{text}"
    );
    let fixture = common::fixture();
    let readme = traces.join("README.md");
    let out = run_ok(&[
        "traces",
        "inspect",
        readme.to_str().unwrap(),
        fixture.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("== tiny"));
    let ucb = String::from_utf8_lossy(&run_ok(&["policies", "ucb"]).stdout).to_string();
    assert!(
        ucb.starts_with("ucb1\n") && ucb.contains("\nhamlet-ucb\n") && !ucb.contains("epsilon"),
        "{ucb}"
    );
    let pool =
        String::from_utf8_lossy(&run_ok(&["policies", "--world", "pool"]).stdout).to_string();
    assert!(
        pool.contains("\nmutant-ucb\n") && !pool.contains("\nucb1\n"),
        "{pool}"
    );
    let e = fails(&["policies", "mutant-ubc"]);
    assert!(e.contains("did you mean 'mutant-ucb'"), "{e}");
    // Every world is listed by its name, and an unknown one is refused naming them all.
    for (world, has, lacks) in [
        ("time-sliced", "\nhamlet-ucb\n", "\nmutant-ucb\n"),
        ("pull-count", "\ner-ucb\n", "\nmutant-ucb\n"),
        ("synthetic", "\ner-ucb\n", "\nhyperband\n"),
        ("pool", "\nhyperband\n", "\nhamlet-ucb\n"),
    ] {
        let out =
            String::from_utf8_lossy(&run_ok(&["policies", "--world", world]).stdout).to_string();
        assert!(out.contains(has) && !out.contains(lacks), "{world}: {out}");
    }
    let e = fails(&["policies", "--world", "grid"]);
    assert!(
        e.contains("the worlds are time-sliced, pull-count, synthetic, pool"),
        "{e}"
    );
}

/// A trace set written by pandas with `category` strings and `int8`/`int16` integers
/// (tests/fixtures/pandas/tiny-category, scripts/reference/pandas_layouts.py) validates and loads
/// to the same tasks as the CSV it was made from.
#[test]
fn a_pandas_parquet_with_category_and_int8_columns_loads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/fixtures/pandas/tiny-category");
    let out = run_ok(&["traces", "validate", dir.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: "));
    let opts = banditbench::trace::LoadOptions::default();
    let a = banditbench::trace::load_trace_set(&dir, &opts).unwrap();
    let b = banditbench::trace::load_trace_set(&common::fixture(), &opts).unwrap();
    assert_eq!(a.tasks.len(), b.tasks.len());
    for (x, y) in a.tasks.iter().zip(&b.tasks) {
        assert_eq!((&x.dataset, x.run), (&y.dataset, y.run));
        for (p, q) in x.arms.iter().zip(&y.arms) {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                (&p.learner, bits(&p.score), bits(&p.elapsed_s)),
                (&q.learner, bits(&q.score), bits(&q.elapsed_s))
            );
        }
    }
}

/// A long table of scores (`unit,policy,score`) with `names` as its policies on `units` units,
/// written to `dir/scores.csv`; returns the CSV's text and the report folder `report --scores`
/// wrote from it.
fn report_on_names(dir: &Path, names: &[&str], units: usize) -> (String, PathBuf) {
    let scores = dir.join("scores.csv");
    let mut csv = String::from("unit,policy,score\n");
    for u in 0..units {
        for (p, name) in names.iter().enumerate() {
            csv.push_str(&format!(
                "d{},{name},{}\n",
                u + 1,
                0.5 + 0.1 * p as f64 + 0.01 * u as f64
            ));
        }
    }
    std::fs::write(&scores, &csv).unwrap();
    let out = dir.join("report");
    common::run_ok(&[
        "report",
        "--scores",
        scores.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    (csv, out)
}

/// Names holding characters XML does not allow (ESC, other control characters), as other tools'
/// policy names may: every figure of a report is still written (they show as U+FFFD).
#[test]
fn policy_names_with_control_characters_still_make_every_figure() {
    let dir = scratch("inputs-xml");
    let (_, out) = report_on_names(&dir, &["plain", "esc\u{1b}[31mred", "bell\u{7}x"], 4);
    let svgs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    assert!(!svgs.is_empty());
    for svg in svgs {
        let png = svg.with_extension("png");
        assert!(png.is_file(), "{} has no PNG", svg.display());
    }
}

/// A CSV as pandas writes it for a name holding a line break (RFC 4180: the field is quoted and
/// the break kept) is read; a ragged record after it still names its own line.
#[test]
fn a_quoted_line_break_in_a_csv_field_is_part_of_the_field() {
    let dir = scratch("inputs-quoted-newline");
    let (csv, out) = report_on_names(&dir, &["plain", "\"two\nlines\""], 3);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.contains("\"two\nlines\",3,1,"), "{summary}");
    // A ragged record after a quoted break: named by the line it starts on (line 11).
    let scores = dir.join("scores.csv");
    std::fs::write(&scores, format!("{csv}d4,plain\n")).unwrap();
    let e = fails(&["report", "--scores", scores.to_str().unwrap()]);
    assert!(
        e.contains("line 11: 2 field(s), but the header has 3"),
        "{e}"
    );
}

/// Every experiment the README shows (a ```toml block with a `name` and a `[world]`; fragments
/// without a name are parts of a file) loads and expands as
/// written, its `../traces/…` read as from `experiments/`: a README example that names a key,
/// a policy parameter or a trace set that does not exist fails here.
#[test]
fn every_readme_experiment_loads_and_expands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = scratch("readme-experiments");
    let mut n = 0;
    for (i, block) in readme.split("```toml\n").skip(1).enumerate() {
        let block = &block[..block.find("```").unwrap()];
        if !block.contains("[world]") || !block.starts_with("name = ") {
            continue;
        }
        let traces = format!("\"{}/traces/", root.display());
        let file = dir.join(format!("readme-{i}.toml"));
        std::fs::write(&file, block.replace("\"../traces/", &traces)).unwrap();
        if let Err(e) = banditbench::experiment::prepare(&file) {
            panic!("README experiment #{i} does not load: {e:#}\n{block}");
        }
        n += 1;
    }
    assert!(n >= 4, "found {n} experiments in the README");
}

/// Every bundled experiment file (`experiments/*.toml`) loads and expands into cells: a file
/// that names a key, a policy parameter, a task or a trace set that does not exist fails here,
/// whether or not a reproduction or a README section runs it.
#[test]
fn every_bundled_experiment_file_loads_and_expands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(root.join("experiments"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "{} experiment files", files.len());
    let mut failed = Vec::new();
    for f in &files {
        match banditbench::experiment::prepare(f) {
            Ok((exp, data)) => {
                if data.expand_cells(&exp).is_empty() {
                    failed.push(format!("{}: no cell", f.display()));
                }
            }
            Err(e) => failed.push(format!("{}: {e:#}", f.display())),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
