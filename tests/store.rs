//! The results store as a contract: shards merged byte for byte into what one run writes, kills
//! inside the merge, two runs on one folder, and the build recorded with the results.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{POLICIES, bin, experiment, run_ok, scratch};
use polars::prelude::*;

const FILES: [&str; 3] = [
    "runs.parquet",
    "trajectories.parquet",
    "experiment.lock.toml",
];

/// 2 tasks x 2 budgets x 5 policies x `reps` repetitions on the tiny fixture.
fn exp(dir: &Path, reps: u32) -> PathBuf {
    experiment(
        dir,
        "store",
        &format!(
            "seed = 11\nrepetitions = {reps}\n[world]\nkind = \"pull-count\"\nbudgets = [30, 400]\nexhausted = \"resample\"\n{POLICIES}"
        ),
    )
}

fn run(exp: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    run_ok(&args)
}

fn merge(dirs: &[PathBuf], out: &Path) -> std::process::Output {
    let mut cmd = bin();
    cmd.arg("merge");
    for d in dirs {
        cmd.arg(d);
    }
    cmd.arg("--out").arg(out);
    cmd.output().unwrap()
}

fn same_files(a: &Path, b: &Path, what: &str) {
    for f in FILES {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(x == y, "{what}: {f} differs");
    }
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

/// The (cell, step) of every row of a trajectories frame.
fn cell_steps(traj: &DataFrame) -> Vec<(u64, u32)> {
    let cell = traj.column("cell").unwrap().u64().unwrap();
    let step = traj.column("step").unwrap().u32().unwrap();
    cell.iter()
        .zip(step.iter())
        .map(|(c, s)| (c.unwrap(), s.unwrap()))
        .collect()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn shards_merge_into_exactly_the_unsharded_results() {
    let dir = scratch("shards");
    let e = exp(&dir, 7);
    let whole = dir.join("whole");
    run(&e, &whole, &["--threads", "2"]);
    let cells = read(&whole.join("runs.parquet")).height();
    assert_eq!(cells, 2 * 2 * 5 * 7);
    for n in [1u32, 2, 4, 7] {
        let shards: Vec<PathBuf> = (0..n)
            .map(|i| {
                let d = dir.join(format!("s{n}-{i}"));
                // Odd shards on one thread, even ones on two: threads never reach the output.
                let threads = if i % 2 == 0 { "2" } else { "1" };
                run(
                    &e,
                    &d,
                    &["--shard", &format!("{i}/{n}"), "--threads", threads],
                );
                d
            })
            .collect();
        let mut sizes: Vec<usize> = shards
            .iter()
            .map(|d| read(&d.join("runs.parquet")).height())
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), cells);
        sizes.sort();
        assert!(
            sizes[sizes.len() - 1] - sizes[0] <= 1,
            "round robin: shard sizes {sizes:?}"
        );
        // Merged in any order of the folders.
        let mut order = shards.clone();
        order.reverse();
        let merged = dir.join(format!("merged-{n}"));
        let o = merge(&order, &merged);
        assert!(o.status.success(), "{}", err(&o));
        same_files(&whole, &merged, &format!("{n} shards"));
    }
}

#[test]
fn merge_refuses_missing_duplicated_and_foreign_shards() {
    let dir = scratch("merge-bad");
    let e = exp(&dir, 2);
    let s: Vec<PathBuf> = (0..3)
        .map(|i| {
            let d = dir.join(format!("s{i}"));
            run(&e, &d, &["--shard", &format!("{i}/3")]);
            d
        })
        .collect();
    // A missing shard: its cells are listed, and the shard named.
    let o = merge(&s[..2], &dir.join("m1"));
    assert!(!o.status.success());
    let m = err(&o);
    assert!(
        m.contains("13 of 40 cells are missing: 2, 5, 8,") && m.contains("shards not given: 2/3"),
        "{m}"
    );
    assert!(!dir.join("m1/runs.parquet").exists());
    // A shard given twice.
    let o = merge(&[s[0].clone(), s[1].clone(), s[0].clone()], &dir.join("m2"));
    let m = err(&o);
    assert!(
        !o.status.success()
            && m.contains("cell 0 is in both")
            && m.contains("merge each shard once"),
        "{m}"
    );
    // A shard of another experiment (another seed): named with both fingerprints.
    let other = experiment(
        &dir,
        "store-other",
        &format!(
            "seed = 12\nrepetitions = 2\n[world]\nkind = \"pull-count\"\nbudgets = [30, 400]\nexhausted = \"resample\"\n{POLICIES}"
        ),
    );
    let foreign = dir.join("foreign");
    run(&other, &foreign, &["--shard", "2/3"]);
    let o = merge(
        &[s[0].clone(), s[1].clone(), foreign.clone()],
        &dir.join("m3"),
    );
    let m = err(&o);
    assert!(
        !o.status.success()
            && m.contains("foreign")
            && m.contains("another experiment or trace set"),
        "{m}"
    );
    // A folder that is not results at all.
    let o = merge(&[s[0].clone(), dir.clone()], &dir.join("m4"));
    assert!(err(&o).contains("not a results folder"), "{}", err(&o));
    // A shard folder resumed as another shard is refused.
    let o = bin()
        .args([
            "run",
            e.to_str().unwrap(),
            "--out",
            s[0].to_str().unwrap(),
            "--shard",
            "1/3",
        ])
        .output()
        .unwrap();
    assert!(
        err(&o).contains("these results are shard 0/3, this run is shard 1/3"),
        "{}",
        err(&o)
    );
    // A malformed --shard.
    let o = bin()
        .args(["run", e.to_str().unwrap(), "--shard", "3/3"])
        .output()
        .unwrap();
    assert!(err(&o).contains("0 <= I < N"), "{}", err(&o));
}

fn spawn_run(exp: &Path, out: &Path, pause_ms: Option<u64>, extra: &[&str]) -> Child {
    let mut cmd = bin();
    cmd.args([
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ])
    .args(extra)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    if let Some(ms) = pause_ms {
        cmd.env("BANDITBENCH_TEST_PAUSE_IN_MERGE_MS", ms.to_string());
    }
    cmd.spawn().unwrap()
}

fn parts_in(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("parts"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("runs-"))
                .count()
        })
        .unwrap_or(0)
}

/// Wait until the run has published its final files but not yet removed its parts: the merge
/// window.
fn wait_for_merge_window(out: &Path, child: &mut Child) {
    let t0 = Instant::now();
    while !(out.join("runs.parquet").exists() && parts_in(out) > 0) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its merge window"
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "no merge window");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_kill_inside_the_merge_window_loses_and_duplicates_nothing() {
    let dir = scratch("merge-kill");
    let e = exp(&dir, 6);
    let whole = dir.join("whole");
    run(&e, &whole, &[]);
    for (i, shard) in [None, Some("1/2")].into_iter().enumerate() {
        let cut = dir.join(format!("cut{i}"));
        let extra: Vec<&str> = shard.map_or(vec![], |s| vec!["--shard", s]);
        let mut child = spawn_run(
            &e,
            &cut,
            Some(60_000),
            &[&extra[..], &["--batch-size", "7"]].concat(),
        );
        wait_for_merge_window(&cut, &mut child);
        child.kill().unwrap(); // SIGKILL, between publishing the final files and removing parts
        child.wait().unwrap();
        assert!(parts_in(&cut) > 0, "killed inside the merge window");
        run(&e, &cut, &extra);
        assert_eq!(parts_in(&cut), 0);
        match shard {
            None => same_files(&whole, &cut, "killed in the merge and resumed"),
            Some(_) => {
                let other = dir.join("other-half");
                run(&e, &other, &["--shard", "0/2"]);
                let merged = dir.join("merged");
                let o = merge(&[cut.clone(), other], &merged);
                assert!(o.status.success(), "{}", err(&o));
                same_files(
                    &whole,
                    &merged,
                    "a shard killed in the merge, resumed, merged",
                );
            }
        }
        // No cell and no step twice.
        let runs = read(&cut.join("runs.parquet"));
        let traj = read(&cut.join("trajectories.parquet"));
        let n = runs.height();
        assert_eq!(
            runs.column("cell")
                .unwrap()
                .as_materialized_series()
                .n_unique()
                .unwrap(),
            n
        );
        let steps = cell_steps(&traj);
        assert!(
            steps.windows(2).all(|w| w[0] < w[1]),
            "(cell, step) strictly increasing"
        );
    }
}

#[test]
fn a_second_run_on_a_busy_folder_is_refused_and_the_first_finishes_intact() {
    let dir = scratch("two-runs");
    let e = exp(&dir, 6);
    let whole = dir.join("whole");
    run(&e, &whole, &[]);
    let out = dir.join("shared");
    // The first run holds the folder through a long merge; the second starts meanwhile. (A
    // part per chunk, so that the merge has parts to remove: a run's last results skip them.)
    let mut first = spawn_run(&e, &out, Some(1_500), &["--batch-size", "7"]);
    wait_for_merge_window(&out, &mut first);
    let second = bin()
        .args([
            "run",
            e.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(!second.status.success());
    let m = err(&second);
    assert!(
        m.contains("another banditbench run is writing this results folder")
            && m.contains(&format!("pid {}", first.id())),
        "{m}"
    );
    assert!(first.wait().unwrap().success());
    same_files(&whole, &out, "the first run, after a refused second one");
}

#[test]
fn results_record_the_build_and_a_resume_never_rewrites_the_lock_file() {
    let dir = scratch("provenance");
    let e = exp(&dir, 6);
    let out = dir.join("out");
    // Run from another working directory: the commit comes from the build, not from the folder
    // the run starts in.
    let elsewhere = scratch("provenance-cwd");
    let mut child = bin()
        .current_dir(&elsewhere)
        .args([
            "run",
            e.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .args(["--batch-size", "5"])
        .env("BANDITBENCH_TEST_PAUSE_IN_MERGE_MS", "60000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_merge_window(&out, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    let lock = std::fs::read(out.join("experiment.lock.toml")).unwrap();
    let text = String::from_utf8_lossy(&lock).to_string();
    let commit = env!("BANDITBENCH_COMMIT");
    let edited = if env!("BANDITBENCH_DIRTY") == "1" {
        ", with uncommitted changes"
    } else {
        ""
    };
    let program = format!(
        "banditbench {} (commit {commit}{edited})",
        env!("CARGO_PKG_VERSION")
    );
    assert!(text.contains("results_format = 6"), "{text}");
    assert!(
        text.contains(&format!("git_commit = \"{commit}\"")),
        "{text}"
    );
    assert!(text.contains(&format!("program = \"{program}\"")), "{text}");
    if Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").is_dir() {
        assert_eq!(
            commit.len(),
            40,
            "a build in a git checkout knows its commit"
        );
        // A build from edited sources says so; a clean checkout (CI's) does not.
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no", "--"])
            .args(["src", "build.rs", "Cargo.toml", "Cargo.lock"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(
            program.ends_with(", with uncommitted changes)"),
            !status.stdout.is_empty(),
            "{program}"
        );
    }
    run(&e, &out, &[]);
    assert_eq!(
        std::fs::read(out.join("experiment.lock.toml")).unwrap(),
        lock,
        "the resume left the lock file as it was"
    );
    let runs = read(&out.join("runs.parquet"));
    let progs = runs.column("program").unwrap().str().unwrap().clone();
    assert_eq!(progs.len(), 2 * 2 * 5 * 6);
    assert!(progs.iter().all(|p| p == Some(program.as_str())));
    // Results begun by another build: the resume says so and leaves the lock file alone.
    let older = text.replace(&program, "banditbench 0.0.9 (commit 0123abc)");
    std::fs::write(out.join("experiment.lock.toml"), &older).unwrap();
    std::fs::remove_file(out.join("runs.parquet")).unwrap();
    std::fs::remove_file(out.join("trajectories.parquet")).unwrap();
    let o = run(&e, &out, &[]);
    assert!(
        err(&o).contains(&format!(
            "these results were begun by banditbench 0.0.9 (commit 0123abc) and are continued by {program}"
        )),
        "{}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap(),
        older
    );
    // A lock file from a newer results format is refused, not rewritten.
    let newer = text.replace("results_format = 6", "results_format = 7");
    std::fs::write(out.join("experiment.lock.toml"), &newer).unwrap();
    let o = bin()
        .args(["run", e.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        err(&o).contains("results format 7, this build writes format 6"),
        "{}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap(),
        newer
    );
    // ... and `report` will not read it either.
    let o = bin()
        .args(["report", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        !o.status.success()
            && err(&o).contains("results format 7, newer than the 6 this build reads"),
        "{}",
        err(&o)
    );
    // Results of an older format are not continued (their fingerprint and schema differ); the
    // message names both formats and what to do, and `report` still reads them.
    let old = text.replace("results_format = 6", "results_format = 5");
    std::fs::write(out.join("experiment.lock.toml"), &old).unwrap();
    let o = bin()
        .args(["run", e.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        !o.status.success()
            && err(&o)
                .contains("these results are in results format 5, this build writes format 6")
            && err(&o).contains("rerun with --fresh"),
        "{}",
        err(&o)
    );
    let o = bin()
        .args(["report", out.to_str().unwrap(), "--out"])
        .arg(dir.join("old-report"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn trajectories_can_keep_only_incumbent_changes_or_nothing() {
    let dir = scratch("traj-mode");
    let body = |mode: &str| {
        format!(
            "seed = 4\nrepetitions = 3\n{mode}\n[world]\nkind = \"pull-count\"\nbudgets = [30, 400]\nexhausted = \"resample\"\n{POLICIES}"
        )
    };
    let full = dir.join("full");
    run(&experiment(&dir, "full", &body("")), &full, &[]);
    let light = dir.join("light");
    run(
        &experiment(&dir, "light", &body("trajectories = \"incumbent-changes\"")),
        &light,
        &[],
    );
    let none = dir.join("none");
    run(
        &experiment(&dir, "none", &body("trajectories = \"none\"")),
        &none,
        &[],
    );
    // The cells are the same whatever is stored (the experiment names differ, nothing else).
    let runs = |d: &Path| read(&d.join("runs.parquet")).drop("experiment").unwrap();
    assert!(runs(&full).equals_missing(&runs(&light)));
    assert!(runs(&full).equals_missing(&runs(&none)));
    // Incumbent changes: exactly the rows of the full trajectories whose incumbent differs from
    // the cell's previous row (and each cell's first), with their original step numbers.
    let t = read(&full.join("trajectories.parquet"));
    let (cell, step, inc) = (
        t.column("cell").unwrap().u64().unwrap(),
        t.column("step").unwrap().u32().unwrap(),
        t.column("incumbent").unwrap().f64().unwrap(),
    );
    let want: Vec<(u64, u32)> = (0..t.height())
        .filter(|&i| i == 0 || cell.get(i) != cell.get(i - 1) || inc.get(i) != inc.get(i - 1))
        .map(|i| (cell.get(i).unwrap(), step.get(i).unwrap()))
        .collect();
    let l = read(&light.join("trajectories.parquet"));
    let got = cell_steps(&l);
    assert_eq!(got, want);
    assert!(
        got.len() * 3 < t.height(),
        "{} of {} rows kept",
        got.len(),
        t.height()
    );
    let n = read(&none.join("trajectories.parquet"));
    assert_eq!((n.height(), n.width()), (0, t.width()));
    // Named in the lock file; a report still draws anytime curves from the light file.
    let lock = std::fs::read_to_string(light.join("experiment.lock.toml")).unwrap();
    assert!(
        lock.contains("trajectories = \"incumbent-changes\""),
        "{lock}"
    );
    run_ok(&["report", light.to_str().unwrap()]);
    // An unknown mode names the key and the allowed values.
    let bad = experiment(&dir, "bad", &body("trajectories = \"some\""));
    let o = bin().args(["run", bad.to_str().unwrap()]).output().unwrap();
    assert!(
        err(&o).contains(
            "key 'trajectories' is 'some'; allowed: every-decision, incumbent-changes, none"
        ),
        "{}",
        err(&o)
    );
}

/// `--batch-size 1` on a fast experiment publishes the first chunk at once and then at most ten
/// parts a second, not a part per cell (which once made 18 598 part files and a run 20-60x
/// slower); the results are the bytes of a run without it.
#[test]
fn a_tiny_batch_size_has_a_floor_on_parts() {
    let dir = scratch("batch-floor");
    let e = exp(&dir, 20);
    let whole = dir.join("whole");
    run(&e, &whole, &[]);
    let out = dir.join("tiny-batches");
    let t0 = Instant::now();
    let mut child = spawn_run(&e, &out, Some(60_000), &["--batch-size", "1"]);
    wait_for_merge_window(&out, &mut child);
    let secs = t0.elapsed().as_secs_f64();
    let parts = parts_in(&out);
    child.kill().unwrap();
    child.wait().unwrap();
    // 2 tasks x 2 budgets x 5 policies x 20 repetitions = 400 cells, one a chunk.
    assert!(
        parts as f64 <= 2.0 + 10.0 * secs,
        "{parts} parts in {secs:.2} s: more than ten a second"
    );
    run(&e, &out, &[]);
    same_files(
        &whole,
        &out,
        "tiny batches, killed in the merge and resumed",
    );
}

/// A caller's progress whose `advance` panics (a bug in a callback; printing to a closed stderr
/// was one) neither hangs the runner (a task that never reported left it waiting for ever, its
/// threads idle) nor costs a cell: the run ends and every cell is in the results.
#[test]
fn a_progress_that_panics_neither_hangs_the_runner_nor_loses_a_cell() {
    use banditbench::experiment::{Progress, RunOptions, prepare, run_experiment};
    struct Broken;
    impl Progress for Broken {
        fn advance(&self, _cells: usize) {
            panic!("this progress is broken");
        }
    }
    let dir = scratch("panicky-progress");
    let exp = experiment(
        &dir,
        "panicky",
        &format!(
            "seed = 5\nrepetitions = 3\n[world]\nkind = \"pull-count\"\nbudgets = [30, 400]\nexhausted = \"resample\"\n{POLICIES}"
        ),
    );
    let out = dir.join("out");
    for batch_size in [None, Some(3)] {
        let _ = std::fs::remove_dir_all(&out);
        let (tx, rx) = std::sync::mpsc::channel();
        let (exp, out2) = (exp.clone(), out.clone());
        std::thread::spawn(move || {
            let (e, data) = prepare(&exp).unwrap();
            let opts = RunOptions {
                out: Some(out2),
                threads: Some(2),
                batch_size,
                ..RunOptions::default()
            };
            let _ = tx.send(run_experiment(&e, &data, &opts, &Broken).map(|s| s.ran));
        });
        let ran = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the run hung (no result after 120 s)")
            .unwrap();
        let runs = read(&out.join("runs.parquet"));
        assert_eq!(ran, runs.height(), "batch size {batch_size:?}");
        assert_eq!(runs.height(), 2 * 2 * 5 * 3, "batch size {batch_size:?}");
    }
}
