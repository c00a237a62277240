//! External policies through the JSON-lines protocol (docs/protocol.md), with real Python
//! processes: an exact match with the built-in UCB1, determinism across threads, and every kind
//! of failure (crash, hang, malformed answer, wrong action, exception), each named in the error
//! while finished cells are kept.
//!
//! Needs `python3`; skipped without it unless `BANDITBENCH_REQUIRE_PYTHON=1` (set by `.ci/run`).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{bin, experiment, python_ok, run_ok, run_quiet, scratch};
use polars::prelude::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An external policy entry running `script` (under tests/fixtures/policies unless it is a path
/// of python/examples) with the package on PYTHONPATH.
fn external(name: &str, script: &str, params: &str, extra: &str) -> String {
    let script = if script.contains('/') {
        root().join(script)
    } else {
        root().join("tests/fixtures/policies").join(script)
    };
    format!(
        "[[policies]]\nfamily = \"external\"\nname = \"{name}\"\ncommand = [\"python3\", \"{}\"]\nenv = {{ PYTHONPATH = \"{}\" }}\nparams = {{ {params} }}\n{extra}\n",
        script.display(),
        root().join("python").display()
    )
}

/// 2 tasks x 4 repetitions of the tiny fixture, pull-count: 8 cells, indices 0..8.
fn faulty_exp(dir: &Path, params: &str, extra: &str) -> PathBuf {
    experiment(
        dir,
        "faulty",
        &format!(
            "seed = 5\nrepetitions = 4\n[world]\nkind = \"pull-count\"\nbudgets = [12]\nexhausted = \"resample\"\n{}",
            external("faulty", "faulty.py", params, extra)
        ),
    )
}

fn run_out(exp: &Path, out: &Path, threads: &str) -> std::process::Output {
    bin()
        .args(["run", exp.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--quiet", "--threads", threads])
        .output()
        .unwrap()
}

fn cells(out: &Path) -> BTreeSet<u64> {
    let df = read(out, "runs.parquet");
    df.column("cell")
        .unwrap()
        .u64()
        .unwrap()
        .into_no_null_iter()
        .collect()
}

fn read(out: &Path, file: &str) -> DataFrame {
    ParquetReader::new(std::fs::File::open(out.join(file)).unwrap())
        .finish()
        .unwrap()
}

/// Run a failing experiment with one thread; return its stderr after checking that it failed
/// and kept cells 0..fail_from.
fn fails(dir: &Path, params: &str, extra: &str, kept: u64) -> String {
    let exp = faulty_exp(dir, params, extra);
    let out = dir.join("out");
    let o = run_out(&exp, &out, "1");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "the run should fail:\n{err}");
    assert!(
        err.contains("external policy faulty("),
        "names the policy:\n{err}"
    );
    assert_eq!(
        cells(&out),
        (0..kept).collect(),
        "finished cells are kept:\n{err}"
    );
    err
}

#[test]
fn python_ucb1_gives_the_builtin_ucb1s_trajectories_byte_for_byte() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-ucb1");
    // The quickstart's world on its first 24 tasks.
    let head = format!(
        "traces = \"{}\"\nseed = 2026\nrepetitions = 1\n[tasks]\nmax_tasks = 24\n[world]\nkind = \"time-sliced\"\nbudget_unit = \"task\"\nbudgets = [0.05, 0.1, 0.25]\nslice = 0.002\n",
        root().join("traces/lcdb").display()
    );
    let write = |name: &str, policies: &str| {
        let p = dir.join(format!("{name}.toml"));
        std::fs::write(&p, format!("name = \"ucb1-match\"\n{head}{policies}")).unwrap();
        p
    };
    let py = write(
        "python",
        &external("py-ucb1", "python/examples/ucb1.py", "c = 2.0", ""),
    );
    let rs = write(
        "rust",
        "[[policies]]\nfamily = \"ucb1\"\ntie_break = \"first\"\n",
    );
    let (a, b) = (dir.join("a"), dir.join("b"));
    run_ok(&[
        "run",
        py.to_str().unwrap(),
        "--out",
        a.to_str().unwrap(),
        "--quiet",
        "--threads",
        "2",
    ]);
    run_ok(&[
        "run",
        rs.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
        "--quiet",
        "--threads",
        "1",
    ]);
    let (ta, tb) = (
        std::fs::read(a.join("trajectories.parquet")).unwrap(),
        std::fs::read(b.join("trajectories.parquet")).unwrap(),
    );
    assert!(ta == tb, "trajectories.parquet differs");
    // runs.parquet: everything but the policy's name, its parameters and the cell seed (which
    // hashes the policy's name) is the same.
    let (ra, rb) = (read(&a, "runs.parquet"), read(&b, "runs.parquet"));
    assert_eq!(ra.height(), 24 * 3);
    let named = ["policy_family", "policy", "params", "seed"];
    for c in ra.get_column_names() {
        if named.contains(&c.as_str()) {
            continue;
        }
        let (x, y) = (ra.column(c).unwrap(), rb.column(c).unwrap());
        assert!(x.equals_missing(y), "runs.parquet column {c} differs");
    }
    let fam = ra.column("policy_family").unwrap().str().unwrap().get(0);
    assert_eq!(fam, Some("py-ucb1"));
    let id = ra.column("policy").unwrap().str().unwrap().get(0);
    assert_eq!(id, Some("py-ucb1(c=2)"));
}

#[test]
fn a_seeded_python_policy_gives_the_same_results_at_any_thread_count() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-threads");
    let exp = experiment(
        &dir,
        "random",
        &format!(
            "seed = 9\nrepetitions = 6\n[world]\nkind = \"pull-count\"\nbudgets = [20, 50]\nexhausted = \"resample\"\n{}",
            external("rand", "random_arm.py", "", "")
        ),
    );
    let (a, b) = (dir.join("a"), dir.join("b"));
    assert!(run_out(&exp, &a, "1").status.success());
    assert!(run_out(&exp, &b, "2").status.success());
    for f in ["runs.parquet", "trajectories.parquet"] {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
    // And the arms are not all the same: the policy does use its generator.
    let t = read(&a, "trajectories.parquet");
    let arms = t.column("arm").unwrap().n_unique().unwrap();
    assert!(arms > 1);
}

#[test]
fn a_crash_names_the_cell_the_policy_and_its_stderr() {
    if !python_ok() {
        return;
    }
    let err = fails(
        &scratch("ext-crash"),
        "mode = \"crash\", fail_from = 5",
        "",
        5,
    );
    assert!(err.contains("failed in cell 5 (task "), "{err}");
    assert!(err.contains("the process ended without answering"), "{err}");
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(
        err.contains("faulty: crashing on purpose"),
        "stderr tail:\n{err}"
    );
    assert!(
        err.contains("\"type\":\"decide\",\"step\":3"),
        "the message:\n{err}"
    );
    assert!(
        err.contains("5 finished cells of this run are kept"),
        "{err}"
    );
}

#[test]
fn a_hang_times_out() {
    if !python_ok() {
        return;
    }
    let t0 = std::time::Instant::now();
    let err = fails(
        &scratch("ext-hang"),
        "mode = \"hang\", fail_from = 2",
        "timeout_s = 1",
        2,
    );
    assert!(err.contains("no answer within 1 s"), "{err}");
    assert!(err.contains("failed in cell 2"), "{err}");
    // The cells after the hung one each wait for the timeout too, at most 6 of them.
    assert!(t0.elapsed().as_secs() < 30);
}

#[test]
fn malformed_answers_are_quoted() {
    if !python_ok() {
        return;
    }
    let err = fails(
        &scratch("ext-garbage"),
        "mode = \"garbage\", fail_from = 1",
        "",
        1,
    );
    assert!(
        err.contains("it answered `banana`, which is not JSON"),
        "{err}"
    );
    // JSON that is not an answer object is told so, not "not JSON".
    for (mode, text) in [("minus-one", "-1"), ("null", "null")] {
        let err = fails(
            &scratch("ext-not-object"),
            &format!("mode = \"{mode}\", fail_from = 1"),
            "",
            1,
        );
        assert!(
            err.contains(&format!(
                "it answered `{text}`, which is JSON but not an object"
            )),
            "{err}"
        );
    }

    let dir = scratch("ext-nohello");
    let exp = experiment(
        &dir,
        "nohello",
        &format!(
            "seed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [5]\nexhausted = \"resample\"\n{}",
            external("banner", "no_hello.py", "", "")
        ),
    );
    let o = run_out(&exp, &dir.join("out"), "1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("it answered `Welcome to my policy!`, which is not JSON"),
        "{err}"
    );
    assert!(err.contains("\"type\":\"hello\",\"protocol\":1"), "{err}");
}

#[test]
fn a_wrong_action_is_named() {
    if !python_ok() {
        return;
    }
    let err = fails(
        &scratch("ext-badarm"),
        "mode = \"bad-arm\", fail_from = 3",
        "",
        3,
    );
    assert!(
        err.contains("it chose arm 99, but the cell has 3 arms (0 to 2)"),
        "{err}"
    );
    let err = fails(
        &scratch("ext-draw"),
        "mode = \"draw\", fail_from = 0",
        "",
        0,
    );
    assert!(
        err.contains("it asked to draw a configuration, which only the pool world offers"),
        "{err}"
    );
}

#[test]
fn a_python_exception_comes_with_its_traceback() {
    if !python_ok() {
        return;
    }
    let err = fails(
        &scratch("ext-raise"),
        "mode = \"raise\", fail_from = 4",
        "",
        4,
    );
    assert!(
        err.contains("the policy reported an error: decide: Traceback"),
        "{err}"
    );
    assert!(
        err.contains("RuntimeError: faulty: a bug in decide"),
        "{err}"
    );
    // A parameter the class does not take is an error at the cell's start, named.
    let err = fails(
        &scratch("ext-param"),
        "mode = \"fine\", colour = \"red\"",
        "",
        0,
    );
    assert!(
        err.contains("unexpected keyword argument 'colour'"),
        "{err}"
    );
}

#[test]
fn restart_goes_on_and_a_rerun_retries_the_failed_cells() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-restart");
    let fixed = dir.join("fixed");
    let exp = faulty_exp(
        &dir,
        &format!(
            "mode = \"crash\", fail_from = 5, unless_file = \"{}\"",
            fixed.display()
        ),
        "on_failure = \"restart\"",
    );
    let out = dir.join("out");
    let o = run_out(&exp, &out, "1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("3 cells failed and are unfinished (cells 5, 6, 7)"),
        "{err}"
    );
    assert!(err.contains("the other 5 cells are kept"), "{err}");
    assert_eq!(cells(&out), (0..5).collect());
    // Cells 0..5 were not run again: a rerun after the fix runs only the failed ones.
    std::fs::write(&fixed, "").unwrap();
    let o = run_out(&exp, &out, "1");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(cells(&out), (0..8).collect());
    // The same results as a run that never failed.
    let clean = dir.join("clean");
    assert!(run_out(&exp, &clean, "2").status.success());
    for f in ["runs.parquet", "trajectories.parquet"] {
        let differs = std::fs::read(out.join(f)).unwrap() != std::fs::read(clean.join(f)).unwrap();
        assert!(!differs, "{f}: resumed run differs from a clean run");
    }
}

#[test]
fn a_missing_program_is_a_clear_error() {
    let dir = scratch("ext-missing");
    let exp = experiment(
        &dir,
        "missing",
        "seed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [5]\nexhausted = \"resample\"\n[[policies]]\nfamily = \"external\"\nname = \"ghost\"\ncommand = [\"no-such-program-banditbench\"]\n",
    );
    let o = run_out(&exp, &dir.join("out"), "1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("cannot start `no-such-program-banditbench`")
            && err.contains("check `command`"),
        "{err}"
    );
}

#[test]
fn the_view_kept_by_the_python_runner_matches_the_full_view_in_every_world() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-view");
    let policy = |extra: &str| {
        external("wander", "pool_random.py", "", extra)
            .replace("env = {", "env = { BANDITBENCH_CHECK_VIEW = \"1\",")
    };
    let worlds = [
        (
            "time-sliced",
            "[world]\nkind = \"time-sliced\"\nbudgets = [20]\nslice = 1.5\n".to_string(),
        ),
        (
            "pull-count",
            "[world]\nkind = \"pull-count\"\nbudgets = [25]\nexhausted = \"resample\"\n".to_string(),
        ),
        (
            "synthetic",
            "[world]\nkind = \"synthetic\"\nbudgets = [40]\n[[world.arms]]\nname = \"g\"\ndistribution = \"gaussian\"\nmean = 0.5\nsd = 0.1\n[[world.arms]]\nname = \"h\"\ndistribution = \"gaussian\"\nmean = 0.6\nsd = 0.2\n".to_string(),
        ),
        (
            "pool",
            format!(
                "traces = \"{}\"\n[tasks]\ndatasets = [\"car\"]\n[world]\nkind = \"pool\"\nbudgets = [60]\n",
                root().join("traces/hpobench-mlp").display()
            ),
        ),
    ];
    for (name, world) in worlds {
        let exp = dir.join(format!("{name}.toml"));
        let traces = if name == "pool" || name == "synthetic" {
            String::new()
        } else {
            format!("traces = \"{}\"\n", common::fixture().display())
        };
        std::fs::write(
            &exp,
            format!(
                "name = \"view-{name}\"\n{traces}seed = 4\nrepetitions = 3\n{world}{}",
                policy("")
            ),
        )
        .unwrap();
        let out = dir.join(name);
        let o = run_out(&exp, &out, "2");
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let t = read(&out, "trajectories.parquet");
        assert!(t.height() > 20, "{name}: {} decisions", t.height());
        if name == "pool" {
            let r = read(&out, "runs.parquet");
            let sum = |c: &str| r.column(c).unwrap().u64().unwrap().sum().unwrap();
            assert!(
                sum("configs_drawn") > 3 && sum("mutations") > 0,
                "{name}: every action"
            );
        }
    }
}

/// Pool world through the protocol: a Python Ex-Def (`python/examples/ex_def.py`) chooses the
/// defaults the cell names, then stops; its results are the built-in `ex-def`'s, on the
/// hand-written joint pool and on sklearn-random's (13 defaults per dataset). A `choose` outside
/// the pool world is refused with the world named.
#[test]
fn a_python_ex_def_chooses_and_stops_like_the_builtin() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-exdef");
    for (k, traces, budget) in [
        (0, root().join("tests/fixtures/cash"), 3),
        (1, root().join("traces/sklearn-random"), 25),
    ] {
        let head = format!(
            "name = \"exdef\"\ntraces = \"{}\"\nseed = 3\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [{budget}]\n",
            traces.display()
        );
        let py = dir.join(format!("py{k}.toml"));
        std::fs::write(
            &py,
            format!(
                "{head}{}",
                external("py-ex-def", "python/examples/ex_def.py", "", "")
            ),
        )
        .unwrap();
        let rs = dir.join(format!("rs{k}.toml"));
        std::fs::write(&rs, format!("{head}[[policies]]\nfamily = \"ex-def\"\n")).unwrap();
        let (a, b) = (dir.join(format!("a{k}")), dir.join(format!("b{k}")));
        for (e, o) in [(&py, &a), (&rs, &b)] {
            run_quiet(e, o);
        }
        let (ta, tb) = (
            read(&a, "trajectories.parquet"),
            read(&b, "trajectories.parquet"),
        );
        assert!(ta.equals_missing(&tb), "trajectories differ");
        let (ra, rb) = (read(&a, "runs.parquet"), read(&b, "runs.parquet"));
        for c in [
            "best_score",
            "best_test_score",
            "best_learner",
            "configs_drawn",
            "budget_used",
        ] {
            let (x, y) = (ra.column(c).unwrap(), rb.column(c).unwrap());
            assert!(x.equals_missing(y), "runs.parquet column {c} differs");
        }
        let drawn = ra.column("configs_drawn").unwrap().u64().unwrap().clone();
        let want = if k == 0 { 2 } else { 13 };
        assert!(drawn.into_no_null_iter().all(|d| d == want));
    }
    // `choose` in a learner-level world is refused, with the world named.
    let e = dir.join("bad.toml");
    std::fs::write(
        &e,
        format!(
            "name = \"bad\"\ntraces = \"{}\"\nseed = 1\n[world]\nkind = \"pull-count\"\nbudget_unit = \"pulls\"\nbudgets = [5]\n{}",
            root().join("tests/fixtures/tiny").display(),
            external("py-choose", "choose_always.py", "", "")
        ),
    )
    .unwrap();
    let o = run_out(&e, &dir.join("bad-out"), "1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("choose a configuration, which only the pool world offers"),
        "{err}"
    );
}

/// `pool_space = true`: the cell's start carries the space and the open configurations'
/// encodings. On the hand-written joint pool the largest first value is max_depth 11 of 11 (1.0,
/// score 0.90) on dataset a and n_neighbors 100 on a log [1, 100] scale (1.0, score 0.50) on b.
#[test]
fn a_python_policy_reads_the_pools_encoded_space() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-space");
    let e = dir.join("space.toml");
    std::fs::write(
        &e,
        format!(
            "name = \"space\"\ntraces = \"{}\"\nseed = 1\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [3]\n{}",
            root().join("tests/fixtures/cash").display(),
            // pin_cpu is a documented key too (it was refused before).
            external(
                "py-space",
                "pool_space_greedy.py",
                "",
                "pool_space = true\npin_cpu = false"
            )
        ),
    )
    .unwrap();
    let out = dir.join("out");
    run_quiet(&e, &out);
    let runs = read(&out, "runs.parquet");
    let ds = runs.column("dataset").unwrap().str().unwrap().clone();
    let best = runs.column("best_score").unwrap().f64().unwrap().clone();
    let got: Vec<(String, f64)> = (0..runs.height())
        .map(|i| (ds.get(i).unwrap().to_string(), best.get(i).unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a".to_string(), 0.90f32 as f64),
            ("b".to_string(), 0.50f32 as f64)
        ]
    );
    // Without pool_space the cell's start carries no space: the same policy fails, named.
    std::fs::write(
        &e,
        std::fs::read_to_string(&e)
            .unwrap()
            .replace("pool_space = true", ""),
    )
    .unwrap();
    let o = run_out(&e, &dir.join("out2"), "1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("KeyError: 'open'"),
        "{err}"
    );
}

/// Editing an external policy's script changes what decides its cells: a rerun into the same
/// folder is refused with the file named (not silently reusing the old results), `--fresh`
/// deletes the finished results and runs every cell again, and a `files` entry that does not
/// exist is an error naming it.
#[test]
fn an_edited_policy_script_is_not_taken_for_the_finished_results() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-edited");
    let script = dir.join("my_rr.py");
    let original = std::fs::read_to_string(root().join("python/examples/round_robin.py")).unwrap();
    std::fs::write(&script, &original).unwrap();
    let exp = experiment(
        &dir,
        "edited",
        &format!(
            "seed = 5\nrepetitions = 2\n[world]\nkind = \"pull-count\"\nbudgets = [6]\nexhausted = \"resample\"\n[[policies]]\nfamily = \"external\"\nname = \"my-rr\"\ncommand = [\"python3\", \"{}\"]\nenv = {{ PYTHONPATH = \"{}\" }}\n",
            script.display(),
            root().join("python").display()
        ),
    );
    let out = dir.join("out");
    let first = run_out(&exp, &out, "1");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let lock = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
    assert!(lock.contains("[resolved.external_files.my-rr]"), "{lock}");
    assert!(lock.contains(&script.display().to_string()), "{lock}");
    // The same script again: every cell is finished, nothing runs.
    let again = run_out(&exp, &out, "1");
    assert!(again.status.success());
    // An edit (a comment is enough: the content decides) is named, and nothing is lost.
    std::fs::write(&script, format!("{original}\n# edited\n")).unwrap();
    let edited = run_out(&exp, &out, "1");
    let err = String::from_utf8_lossy(&edited.stderr).to_string();
    assert!(!edited.status.success(), "{err}");
    assert!(
        err.contains("external policy 'my-rr'")
            && err.contains(&format!(
                "{} changed since these results were written",
                script.display()
            ))
            && err.contains("--fresh"),
        "{err}"
    );
    assert_eq!(cells(&out).len(), 4);
    // --fresh starts again: the lock file records the new hash, and the cells are all there.
    let fresh = bin()
        .args(["run", exp.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--quiet", "--threads", "1", "--fresh"])
        .output()
        .unwrap();
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    assert_ne!(
        std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap(),
        lock
    );
    assert_eq!(cells(&out).len(), 4);
    // A `files` entry that does not exist is named.
    let bad = experiment(
        &dir,
        "bad-files",
        &format!(
            "seed = 5\n[world]\nkind = \"pull-count\"\nbudgets = [6]\n[[policies]]\nfamily = \"external\"\nname = \"my-rr\"\ncommand = [\"python3\", \"{}\"]\nfiles = [\"no/such/module\"]\n",
            script.display()
        ),
    );
    let o = run_out(&bad, &dir.join("out2"), "1");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        !o.status.success() && err.contains("'files' names no/such/module, which does not exist"),
        "{err}"
    );
}

/// A policy that starts a process of its own: when the run ends, that process is ended too (the
/// policy's whole process group), not left running.
#[test]
fn processes_a_policy_started_end_with_the_run() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-children");
    let pids = dir.join("pids.txt");
    let exp = experiment(
        &dir,
        "children",
        &format!(
            "seed = 5\nrepetitions = 2\n[world]\nkind = \"pull-count\"\nbudgets = [6]\n{}",
            external("spawner", "spawns_child.py", "", "")
        )
        .replace(
            "env = {",
            &format!("env = {{ CHILD_PID_FILE = \"{}\", ", pids.display()),
        ),
    );
    let o = run_out(&exp, &dir.join("out"), "2");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<i32> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert!(!pids.is_empty());
    // Killed children are reaped by init; give it a moment.
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split(' ').nth(2).is_none_or(|st| st != "Z"))
    };
    let t0 = std::time::Instant::now();
    while pids.iter().any(|&p| alive(p)) && t0.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for p in pids {
        assert!(
            !alive(p),
            "process {p}, started by the policy, outlived the run"
        );
    }
}

/// The README's pool-world Python policy on the recorded sklearn-grid pool: each cell draws its K
/// configurations (one unit each) and trains the best of them with the rest of its budget (8 x 27
/// units would exceed it, so it never draws again).
#[test]
fn the_readme_pool_world_python_policy_runs_on_a_recorded_pool() {
    if !python_ok() {
        return;
    }
    let dir = scratch("ext-keep-best");
    let exp = dir.join("keep-best.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"keep-best\"\ntraces = \"{}\"\nseed = 3\nrepetitions = 2\n[tasks]\nmax_tasks = 1\n[world]\nkind = \"pool\"\nper_learner = true\nbudget_unit = \"units\"\nbudgets = [100]\n{}",
            root().join("traces/sklearn-grid").display(),
            external("keep-best", "python/examples/keep_best.py", "k = 8", "")
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = run_out(&exp, &out, "2");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let counts = banditbench::results::read_pool_counts(&out).unwrap();
    let res = banditbench::results::read_results(&out).unwrap();
    assert!(!res.runs.is_empty());
    for r in &res.runs {
        let c = counts[&r.cell];
        assert_eq!(
            (c.configs_drawn, c.units_trained),
            (8, 100),
            "cell {}",
            r.cell
        );
    }
}
