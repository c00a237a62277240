//! The `banditbench` command end to end: validation exit codes, experiments, determinism across
//! thread counts, kill-and-resume, and the errors an experiment file can earn.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{POLICIES, bin, experiment, run_ok, scratch, set_line, tiny_variant};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn validate_exit_codes() {
    let good = common::fixture();
    let out = run_ok(&["traces", "validate", good.to_str().unwrap()]);
    assert!(stdout(&out).contains("ok: "), "{}", stdout(&out));
    assert!(stdout(&out).contains("2 tasks, 3 learners, 18 evaluations"));

    let bad = tiny_variant(
        "cli-bad",
        |c| set_line(c, 7, "d1,b,0,1,6.0,,,crashed"),
        |m| m.to_string(),
    );
    let out = bin()
        .args(["traces", "validate", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("unknown status 'crashed'"),
        "{}",
        stdout(&out)
    );
}

/// Columns stay aligned whatever the learner names' lengths.
#[test]
fn inspect_columns_stay_aligned_with_long_learner_names() {
    let long = "gradient-boosting-with-early-stopping-and-a-long-name";
    let dir = common::tiny_variant(
        "inspect-long",
        |csv| csv.replace(",a,", &format!(",{long},")),
        |m| m.to_string(),
    );
    let out = run_ok(&["traces", "inspect", dir.to_str().unwrap()]);
    let s = stdout(&out);
    let rows: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("learner"))
        .take(4)
        .collect();
    assert_eq!(rows.len(), 4, "{s}");
    // Every row ends its "evals" column (right-aligned) at the same character.
    let ends: Vec<usize> = rows
        .iter()
        .map(|l| {
            let name_end = l.trim_start().find(' ').unwrap() + (l.len() - l.trim_start().len());
            let rest = &l[name_end..];
            name_end + rest.len() - rest.trim_start().len() + rest.trim_start().find(' ').unwrap()
        })
        .collect();
    assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}\n{s}");
    assert!(s.contains(long), "{s}");
}

#[test]
fn inspect_summarises_each_learner() {
    let out = run_ok(&["traces", "inspect", common::fixture().to_str().unwrap()]);
    let s = stdout(&out);
    assert!(
        s.contains("2 datasets, 1 runs, 2 tasks, 3 learners, 18 evaluations"),
        "{s}"
    );
    // Learner b: 5 evaluations, one failed; learner c: one timeout; span of c: 1.5 / 4.
    let b = s
        .lines()
        .find(|l| l.trim_start().starts_with("b "))
        .unwrap();
    assert!(
        b.contains(" 5 ") && b.trim_end().ends_with("1        0"),
        "{b}"
    );
    let c = s
        .lines()
        .find(|l| l.trim_start().starts_with("c "))
        .unwrap();
    // c's ok scores: 0.40, 0.45, 0.80 (the timeout's 0.81 is dropped), 0.20, 0.25, 0.99.
    assert!(c.contains("0.2000 to 0.9900"), "{c}");
    assert!(
        c.contains("1.500 / 4.000 / 4.000") || c.contains("1.500 / 1.500 / 4.000"),
        "{c}"
    );
}

#[test]
fn policies_lists_the_registry_with_parameters_and_sources() {
    let s = stdout(&run_ok(&["policies"]));
    for name in [
        "round-robin",
        "random",
        "epsilon-greedy",
        "softmax",
        "ucb1",
        "ucb1-btb",
        "bestk-rewards",
        "bestk-velocity",
    ] {
        assert!(s.contains(&format!("{name}\n")), "{name} missing:\n{s}");
    }
    assert!(s.contains("epsilon = 0.1"), "{s}");
    assert!(s.contains("tau = 0.1"), "{s}");
    // Citations a reader can follow: author, year, title; never a file a clone lacks.
    assert!(s.contains("Hu, Yu & Liao 2019"), "{s}");
    assert!(s.contains("Auer, Cesa-Bianchi & Fischer 2002"), "{s}");
    assert!(!s.contains("papers/") && !s.contains(".txt"), "{s}");
    assert!(s.contains("start = none"), "{s}");
    assert!(s.contains("worlds: time-sliced, pull-count"), "{s}");
}

/// The tiny fixture's 40 cells: 2 tasks × 2 budgets × 5 policies × 2 repetitions, time-sliced.
fn small(dir: &Path, name: &str) -> std::path::PathBuf {
    experiment(
        dir,
        name,
        &format!(
            "seed = 3\nrepetitions = 2\n[world]\nkind = \"time-sliced\"\nbudgets = [6.0, 12.0]\nslice = 2.0\n{POLICIES}"
        ),
    )
}

fn run_exp(exp: &Path, out: &Path, threads: usize) -> std::process::Output {
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        &threads.to_string(),
        "--quiet",
    ])
}

#[test]
fn an_experiment_runs_and_prints_its_ranking() {
    let dir = scratch("run");
    let exp = small(&dir, "small");
    let out = dir.join("results");
    let o = run_exp(&exp, &out, 2);
    let s = stdout(&o);
    assert!(
        s.contains("Unit = dataset: 2 units from 2 dataset(s)"),
        "{s}"
    );
    assert!(s.contains("ucb1(tie_break=first, log_t=pulls)"), "{s}");
    assert!(stderr(&o).contains("2 tasks x 2 budgets x 5 policies x 2 repetitions = 40 cells"));
    for f in [
        "runs.parquet",
        "trajectories.parquet",
        "experiment.lock.toml",
    ] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    let lock = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
    assert!(
        lock.contains("fingerprint") && lock.contains("trace_hash"),
        "{lock}"
    );
    // Rerunning finds every cell finished.
    let again = run_exp(&exp, &out, 2);
    assert!(stderr(&again).contains("ran 0 cells"), "{}", stderr(&again));
    assert!(stderr(&again).contains("40 were already finished"));
}

/// A run whose stderr is not a terminal (a log under nohup or Slurm) gets plain progress lines
/// where no bar can be drawn; --quiet has none; a bad interval is named and the default kept.
#[test]
fn a_log_without_a_terminal_gets_plain_progress_lines() {
    let dir = scratch("progress-lines");
    let exp = small(&dir, "lines");
    let run = |out: &str, every: &str, quiet: bool| {
        let mut c = bin();
        c.args(["run", exp.to_str().unwrap(), "--out"])
            .arg(dir.join(out))
            .args(["--threads", "2", "--batch-size", "4"])
            .env("BANDITBENCH_PROGRESS_EVERY", every);
        if quiet {
            c.arg("--quiet");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let counts = |log: &str| -> Vec<u64> {
        log.lines()
            .filter_map(|l| l.strip_prefix("progress: "))
            .map(|l| l.split('/').next().unwrap().parse().unwrap())
            .collect()
    };
    let log = run("every", "0", false);
    let seen = counts(&log);
    assert!(seen.len() >= 2, "a line each time cells finish:\n{log}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{log}");
    assert!(
        log.contains("progress: 40/40 cells (100 %), "),
        "the last line counts every cell:\n{log}"
    );
    assert!(
        log.contains(" elapsed, ") && log.contains(" cells/s, ETA "),
        "{log}"
    );
    assert!(counts(&run("quiet", "0", true)).is_empty());
    let log = run("bad", "soon", false);
    assert!(
        log.contains("warning: BANDITBENCH_PROGRESS_EVERY=\"soon\" is not a number of seconds"),
        "{log}"
    );
    assert!(counts(&log).is_empty(), "a minute apart by default:\n{log}");
}

/// A reader that goes away never hangs a run, loses a cell or ends in a panic: with stderr a
/// closed pipe (its progress lines, from the worker threads, cannot be written) the run finishes
/// every cell; with stdout closed the ranking is dropped and the command ends as `cat` does
/// (status 141), its results complete.
#[test]
fn a_closed_stderr_or_stdout_neither_hangs_nor_loses_a_run() {
    use std::process::Stdio;
    let dir = scratch("closed-pipes");
    let exp = small(&dir, "pipes");
    for closed in ["stderr", "stdout"] {
        let out = dir.join(closed);
        let mut c = bin();
        c.args(["run", exp.to_str().unwrap(), "--out"])
            .arg(&out)
            .args(["--threads", "2", "--batch-size", "4"])
            .env("BANDITBENCH_PROGRESS_EVERY", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        // Close the read end of one pipe at once; keep reading the other.
        let mut kept = if closed == "stderr" {
            drop(child.stderr.take());
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>
        } else {
            drop(child.stdout.take());
            Box::new(child.stderr.take().unwrap())
        };
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut kept, &mut text);
            text
        });
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                panic!("with {closed} closed the run hung (killed after 120 s)");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let text = reader.join().unwrap();
        assert!(!text.contains("panicked"), "{closed} closed:\n{text}");
        let expected = if closed == "stderr" {
            Some(0)
        } else {
            Some(141)
        };
        assert_eq!(status.code(), expected, "{closed} closed:\n{text}");
        let runs = banditbench::experiment::read_parquet(&out.join("runs.parquet")).unwrap();
        assert_eq!(
            runs.height(),
            40,
            "{closed} closed: every cell is in the results"
        );
    }
}

#[test]
fn results_are_byte_identical_at_one_and_two_threads() {
    let dir = scratch("threads");
    let exp = experiment(
        &dir,
        "det",
        &format!(
            "seed = 11\nrepetitions = 5\n[world]\nkind = \"pull-count\"\nbudgets = [40]\nexhausted = \"resample\"\n{POLICIES}"
        ),
    );
    let (a, b) = (dir.join("t1"), dir.join("t2"));
    run_exp(&exp, &a, 1);
    run_exp(&exp, &b, 2);
    for f in ["runs.parquet", "trajectories.parquet"] {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(x.len() > 1000, "{f} holds data");
        assert!(x == y, "{f} differs between 1 and 2 threads");
    }
}

#[test]
fn a_killed_run_resumes_to_the_same_results() {
    let dir = scratch("kill");
    let body = format!(
        "seed = 5\nrepetitions = 1500\n[world]\nkind = \"pull-count\"\nbudgets = [400]\nexhausted = \"resample\"\n{POLICIES}"
    );
    let exp = experiment(&dir, "killme", &body);
    let whole = dir.join("whole");
    let cut = dir.join("cut");
    run_exp(&exp, &whole, 2);

    let mut child = bin()
        .args([
            "run",
            exp.to_str().unwrap(),
            "--out",
            cut.to_str().unwrap(),
            "--batch-size",
            "10",
            "--quiet",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let parts = cut.join("parts");
    let t0 = Instant::now();
    let published = |p: &Path| {
        std::fs::read_dir(p)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| {
                        let n = e.file_name().to_string_lossy().to_string();
                        n.starts_with("runs-") && n.ends_with(".parquet")
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    // The highest part number published so far (parts are numbered in order and merged only at
    // the end). A part is published at most every 0.1 s, so the run must last well over half a
    // second for five to appear: 15 000 cells take about 2.5 s here.
    let highest = |p: &Path| {
        std::fs::read_dir(p)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| {
                        let n = e.file_name().to_string_lossy().to_string();
                        n.strip_prefix("runs-")?
                            .strip_suffix(".parquet")?
                            .parse::<u64>()
                            .ok()
                    })
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
    };
    while highest(&parts) < 5 {
        assert!(
            t0.elapsed() < Duration::from_secs(120) && !cut.join("runs.parquet").exists(),
            "no part appeared before the run ended"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(
        !cut.join("runs.parquet").exists(),
        "the run finished before it could be killed; make the experiment larger"
    );
    let o = run_exp(&exp, &cut, 2);
    let err = stderr(&o);
    let already: usize = err
        .split(" were already finished")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(already >= 50, "the resume skipped finished cells: {err}");
    for f in ["runs.parquet", "trajectories.parquet"] {
        let (x, y) = (
            std::fs::read(whole.join(f)).unwrap(),
            std::fs::read(cut.join(f)).unwrap(),
        );
        assert!(x == y, "{f}: killed and resumed differs from uninterrupted");
    }
    assert_eq!(published(&parts), 0, "parts are merged away");
}

#[test]
fn resuming_with_a_changed_experiment_is_refused() {
    let dir = scratch("changed");
    let out = dir.join("out");
    let exp = experiment(
        &dir,
        "ch",
        &format!("seed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [10]\n{POLICIES}"),
    );
    run_exp(&exp, &out, 1);
    let exp = experiment(
        &dir,
        "ch",
        &format!("seed = 2\n[world]\nkind = \"pull-count\"\nbudgets = [10]\n{POLICIES}"),
    );
    let o = bin()
        .args([
            "run",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("come from a different experiment"),
        "{}",
        stderr(&o)
    );
    assert!(
        out.join("runs.parquet").is_file(),
        "finished results are kept"
    );
}

fn exp_error(name: &str, body: &str) -> String {
    let dir = scratch(name);
    let exp = experiment(&dir, name, body);
    let o = bin()
        .args([
            "run",
            exp.to_str().unwrap(),
            "--out",
            dir.join("o").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{name} must fail");
    stderr(&o)
}

#[test]
fn experiment_errors_name_the_key_and_the_allowed_values() {
    let world = "seed = 1\n[world]\nkind = \"time-sliced\"\nbudgets = [5.0]\nslice = 1.0\n";
    let e = exp_error(
        "unknown-policy",
        &format!("{world}[[policies]]\nfamily = \"ucb9\"\n"),
    );
    assert!(
        e.contains("unknown policy 'ucb9' (did you mean 'ucb1' or 'ucb1-btb'?); known policies: round-robin"),
        "{e}"
    );
    let e = exp_error(
        "unknown-param",
        &format!("{world}[[policies]]\nfamily = \"softmax\"\ntemperature = 0.5\n"),
    );
    assert!(
        e.contains(
            "policy 'softmax' has no parameter 'temperature'; its parameters: tau, initial_pulls"
        ),
        "{e}"
    );
    let e = exp_error(
        "unknown-world-key",
        "seed = 1\n[world]\nkind = \"time-sliced\"\nbudgets = [5.0]\nslice = 1.0\nslices = 2\n[[policies]]\nfamily = \"random\"\n",
    );
    assert!(e.contains("unknown field `slices`"), "{e}");
    let e = exp_error(
        "bad-kind",
        "seed = 1\n[world]\nkind = \"wall-clock\"\nbudgets = [5.0]\n[[policies]]\nfamily = \"random\"\n",
    );
    assert!(
        e.contains("'world.kind' is 'wall-clock'; allowed: time-sliced, pull-count"),
        "{e}"
    );
    let e = exp_error(
        "no-slice",
        "seed = 1\n[world]\nkind = \"time-sliced\"\nbudgets = [5.0]\n[[policies]]\nfamily = \"random\"\n",
    );
    assert!(e.contains("needs 'world.slice'"), "{e}");
    let e = exp_error(
        "wrong-world-key",
        "seed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [5]\nslice = 1.0\n[[policies]]\nfamily = \"random\"\n",
    );
    assert!(
        e.contains("'world.slice' applies only to the time-sliced world"),
        "{e}"
    );
}

#[test]
fn bench_runs_only_the_measurements_asked_for() {
    let tiny = common::fixture();
    let out = run_ok(&[
        "bench",
        "--traces",
        tiny.to_str().unwrap(),
        "--only",
        "load",
        "--only",
        "report",
        "--report-rows",
        "200",
    ]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("load ") && lines[0].contains("18 evaluations"));
    assert!(lines[1].starts_with("report on 200 generated scores (20 units x 10 policies)"));
    assert!(!text.contains("ucb1") && !text.contains("arctan"), "{text}");
}

/// Every section of `bench --only` runs and prints its figures, trimmed so that the whole takes
/// seconds. The list of sections is read from `bench --help`, so a new section fails here until it
/// is run here too. `pool` runs on the real sklearn-grid pool, whose recorded defaults once made
/// its one-learner cells index past the pool's end.
#[test]
fn every_bench_section_runs() {
    let help = stdout(&run_ok(&["bench", "--help"]));
    let listed = help
        .split("--only <ONLY>")
        .nth(1)
        .and_then(|s| s.split("Possible values:").nth(1))
        .map(|s| {
            s.lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| l.starts_with("- "))
                .map(|l| l[2..].split(':').next().unwrap().trim().to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let tiny = common::fixture();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = common::scratch("bench-sections");
    let exp = common::experiment(
        &dir,
        "write-cost",
        &format!(
            "seed = 1\n[world]\nkind = \"time-sliced\"\nbudgets = [6.0]\nslice = 1.0\n{}",
            common::POLICIES
        ),
    );
    // (section, a line it must print, extra arguments)
    let sections: Vec<(&str, &str, Vec<String>)> = vec![
        ("load", "load ", vec![]),
        ("replay", "pulls/s on one thread", vec![]),
        ("fits", "arctan fit,", vec![]),
        ("report", "report on 200 generated scores", vec![]),
        (
            "report-policies",
            "report on 100 units x 5 policies: the leaderboard alone (forced on): point ratings",
            vec![],
        ),
        ("pool", "decisions/s", vec![]),
        (
            "store",
            "store: ",
            vec!["--store-decisions".into(), "20000".into()],
        ),
        (
            "write-cost",
            "write cost: ",
            vec!["--write-cost-experiment".into(), exp.display().to_string()],
        ),
        ("protocol", "through the protocol", vec![]),
        ("cash", "one model decision at 30 +- 5 observations", vec![]),
        ("workers", "with 256 workers on one learner's grid", vec![]),
        (
            "memory",
            "x the peak of 1 repetition(s) at 2 repetitions",
            vec![
                "--memory-experiment".into(),
                exp.display().to_string(),
                "--memory-repetitions".into(),
                "1,2".into(),
            ],
        ),
        (
            "import-blackbox",
            "x the evaluations; the same import of the blackbox as given peaks at",
            vec!["--blackbox-copies".into(), "2".into()],
        ),
        (
            "pool-configuration",
            "random-search(work=configuration) through run, one thread: 625 configurations",
            vec!["--configuration-repetitions".into(), "1".into()],
        ),
        (
            "import-syne-tune",
            "read 8 experiment folders (2 copies of the recorded ones), 6624 result rows",
            vec!["--synetune-copies".into(), "2".into()],
        ),
        (
            "adapters",
            "adapters: ",
            vec!["--adapter-trainings".into(), "2".into()],
        ),
        (
            "freeze-thaw",
            "freeze-thaw: dpl on traces/taskset task",
            vec!["--freeze-thaw-observations".into(), "40".into()],
        ),
        (
            "hypervolume",
            "hypervolume: front run of 1000 two-objective evaluations (generated), the exact history in",
            vec!["--hypervolume-points".into(), "1000".into()],
        ),
        (
            "dask",
            "dask: ",
            vec![
                "--dask-experiment".into(),
                root.join("experiments/erucb-synthetic.toml")
                    .to_str()
                    .unwrap()
                    .into(),
            ],
        ),
    ];
    let names: Vec<String> = sections.iter().map(|s| s.0.to_string()).collect();
    assert_eq!(listed, names, "bench --help lists other sections:\n{help}");
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok();
    for (section, want, extra) in sections {
        if section == "protocol" && !python {
            assert!(
                std::env::var("BANDITBENCH_REQUIRE_PYTHON").is_err(),
                "python3 is required"
            );
            continue;
        }
        let mut args: Vec<String> = [
            "bench",
            "--only",
            section,
            "--seconds",
            "0.05",
            "--traces",
            tiny.to_str().unwrap(),
            "--pool",
            root.join("traces/sklearn-grid").to_str().unwrap(),
            "--report-rows",
            "200",
            "--report-policies",
            "5",
            "--cash-observations",
            "30",
            "--threads",
            "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        // These need the wheel (and their libraries) in python3: python/tests/test_bench_adapters.py
        // and test_dask.py run them there; without them the error says so.
        let needs = match section {
            "adapters" => Some("are the wheel and the adapters' libraries installed?"),
            "dask" => Some("are the wheel and dask.distributed installed?"),
            _ => None,
        };
        if let Some(hint) = needs {
            let out = bin().args(&a).output().unwrap();
            if !out.status.success() {
                let e = stderr(&out);
                assert!(e.contains(hint) && e.contains("No module named"), "{e}");
                continue;
            }
        }
        let text = stdout(&run_ok(&a));
        assert!(
            text.contains(want),
            "bench --only {section} printed:\n{text}"
        );
    }
}

/// `show --list` lists the cells; `show --cell ID` prints the cell's run and decisions and draws
/// its trajectory; an unknown id is an error that says where the ids are.
#[test]
fn one_cell_is_shown_with_its_decisions_and_a_figure() {
    let dir = scratch("show");
    let exp = common::experiment(
        &dir,
        "show",
        &format!(
            "seed = 3\n[world]\nkind = \"pull-count\"\nbudgets = [30]\nexhausted = \"resample\"\n{POLICIES}"
        ),
    );
    let out = dir.join("out");
    run_exp(&exp, &out, 1);
    let list = stdout(&run_ok(&["show", out.to_str().unwrap(), "--list"]));
    let first = list
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let id: u64 = first.parse().unwrap();
    let text = stdout(&run_ok(&[
        "show",
        out.to_str().unwrap(),
        "--cell",
        &first,
        "--limit",
        "5",
    ]));
    assert!(text.starts_with(&format!("cell {id} of ")), "{text}");
    assert!(text.contains("30 decisions stored:"), "{text}");
    assert!(text.contains("… 20 decisions between …"), "{text}");
    assert!(out.join("cells").join(format!("cell-{id}.png")).is_file());
    let csv = std::fs::read_to_string(out.join("cells").join(format!("cell-{id}.csv"))).unwrap();
    assert!(csv.lines().count() > 30, "{csv}");
    let o = common::bin()
        .args(["show", out.to_str().unwrap(), "--cell", "12345"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no cell 12345 among its"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn reproduce_lists_the_registry_and_refuses_an_unknown_paper() {
    let help = bin().args(["reproduce", "--help"]).output().unwrap();
    let text = stdout(&help);
    for p in banditbench::reproduce::PAPERS {
        assert!(
            text.contains(&format!("- {}:", p.name))
                && text.contains(p.about.split(':').next().unwrap()),
            "{}: {text}",
            p.name
        );
    }
    let o = bin().args(["reproduce", "hamlett"]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("invalid value 'hamlett'") && stderr(&o).contains("hamlet"),
        "{}",
        stderr(&o)
    );
}

/// The bundled experiments and trace sets from any folder: by `BANDITBENCH_DATA` (what the
/// Python package sets to its data wheel), and, without it, from any folder inside a clone (a
/// notebook's kernel starts in `examples/`). Outside both, a bare name is refused listing what
/// was tried.
#[test]
fn bundled_experiments_and_trace_sets_are_found_from_any_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let away = scratch("bundled-away");
    let run = |cwd: &Path, data: Option<&Path>, args: &[&str]| {
        let mut c = bin();
        c.current_dir(cwd).args(args).env_remove("BANDITBENCH_DATA");
        if let Some(d) = data {
            c.env("BANDITBENCH_DATA", d);
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    // Outside a clone, nothing named: what was tried, and where bundled data comes from.
    let (code, _, err) = run(&away, None, &["run", "quickstart"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("quickstart: no such experiment file (looked for quickstart, experiments/quickstart.toml)")
            && err.contains("BANDITBENCH_DATA"),
        "{err}"
    );
    // With the data named: the list, and an experiment of one's own whose traces are named as in
    // a clone (`../traces/lcdb`), found by name among the bundled ones.
    let (code, out, err) = run(&away, Some(root), &["traces", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("lcdb") && out.contains("sklearn-grid"),
        "{out}"
    );
    std::fs::write(
        away.join("mine.toml"),
        format!(
            "name = \"mine\"\ntraces = \"../traces/lcdb\"\nseed = 1\n[tasks]\nmax_tasks = 2\n[world]\nkind = \"time-sliced\"\nbudget_unit = \"task\"\nbudgets = [0.05]\nslice = 0.002\n{POLICIES}"
        ),
    )
    .unwrap();
    let (code, _, err) = run(&away, Some(root), &["run", "mine.toml", "--quiet"]);
    assert_eq!(code, Some(0), "{err}");
    let lock = std::fs::read_to_string(away.join("results/mine/experiment.lock.toml")).unwrap();
    assert!(lock.contains("traces/lcdb"), "{lock}");
    // A bare name with the data named: the bundled file; an unknown one lists the names.
    let (code, _, err) = run(&away, Some(root), &["run", "no-such", "--quiet"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("the bundled experiments are") && err.contains("quickstart"),
        "{err}"
    );
    // Inside a clone, below its root, without the variable: the clone's data.
    let (code, out, err) = run(&root.join("examples"), None, &["traces", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("lcdb"), "{out}");
    let (code, out, err) = run(
        &root.join("examples"),
        None,
        &[
            "traces",
            "inspect",
            "traces/tiny-does-not-exist",
            "traces/lcdb",
        ],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("tiny-does-not-exist"), "{err}");
}
