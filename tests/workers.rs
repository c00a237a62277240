//! Simulated workers end to end: `[world] workers = K` on the bundled `sklearn-grid` pool and the
//! tiny trace set, the columns they add to both results files, determinism at any thread count,
//! and the keys refused with what to do.

mod common;

use std::path::{Path, PathBuf};

use common::{bin, fixture, python_ok, scratch, tiny_variant};
use polars::prelude::*;

fn grid() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/sklearn-grid")
}

/// An experiment on two datasets' MLP grids of `sklearn-grid` (run 0), 60 units, with `world`
/// added to `[world]`.
fn pool_experiment(dir: &Path, world: &str) -> PathBuf {
    let e = dir.join("workers.toml");
    std::fs::write(
        &e,
        format!(
            r#"name = "workers"
traces = "{}"
seed = 7
repetitions = 3

[tasks]
datasets = ["car", "phoneme"]
runs = [0]
learners = ["mlp"]

[world]
kind = "pool"
per_learner = true
budget_unit = "units"
budgets = [60]
{world}

[[policies]]
family = "asha"

[[policies]]
family = "successive-halving"
n = 9

[[policies]]
family = "random-search"
"#,
            grid().display()
        ),
    )
    .unwrap();
    e
}

fn run(e: &Path, out: &Path, threads: &str) -> std::process::Output {
    bin()
        .args([
            "run",
            e.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
            "--quiet",
        ])
        .output()
        .unwrap()
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn four_workers_record_makespan_idle_time_and_each_steps_worker_start_and_finish() {
    let dir = scratch("workers-pool");
    let e = pool_experiment(&dir, "workers = 4");
    let (one, two) = (dir.join("one"), dir.join("two"));
    let o = run(&e, &one, "1");
    assert!(o.status.success(), "{}", err(&o));
    let o = run(&e, &two, "2");
    assert!(o.status.success(), "{}", err(&o));
    // Identical at any thread count.
    for f in ["runs.parquet", "trajectories.parquet"] {
        assert_eq!(
            std::fs::read(one.join(f)).unwrap(),
            std::fs::read(two.join(f)).unwrap(),
            "{f}"
        );
    }
    let runs = read(&one.join("runs.parquet"));
    assert_eq!(runs.height(), 2 * 3 * 3);
    let workers = runs.column("workers").unwrap().u32().unwrap();
    assert!(workers.into_no_null_iter().all(|k| k == 4));
    let makespan = runs.column("makespan_s").unwrap().f64().unwrap();
    let idle = runs.column("idle_s").unwrap().f64().unwrap();
    let family = runs.column("policy_family").unwrap().str().unwrap();
    let (mut sh, mut asha) = (0.0, 0.0);
    for i in 0..runs.height() {
        let (m, d) = (makespan.get(i).unwrap(), idle.get(i).unwrap());
        assert!(m > 0.0 && d >= 0.0 && d < 4.0 * m, "{m} {d}");
        match family.get(i).unwrap() {
            "successive-halving" => sh += d,
            "asha" => asha += d,
            _ => {}
        }
    }
    // Synchronous successive halving waits at its rungs; ASHA does not.
    assert!(sh > asha, "idle: successive halving {sh}, ASHA {asha}");
    let t = read(&one.join("trajectories.parquet"));
    let cell = t.column("cell").unwrap().u64().unwrap();
    let worker = t.column("worker").unwrap().u32().unwrap();
    let start = t.column("start").unwrap().f64().unwrap();
    let finish = t.column("finish").unwrap().f64().unwrap();
    let mut seen = [false; 4];
    for i in 0..t.height() {
        let w = worker.get(i).unwrap() as usize;
        assert!(w < 4);
        seen[w] = true;
        assert!(finish.get(i).unwrap() >= start.get(i).unwrap());
        // Steps arrive in the order their work finishes.
        if i > 0 && cell.get(i) == cell.get(i - 1) {
            assert!(finish.get(i).unwrap() >= finish.get(i - 1).unwrap());
        }
    }
    assert_eq!(seen, [true; 4]);
}

#[test]
fn one_worker_is_the_default_and_keeps_the_fingerprint_and_results() {
    let dir = scratch("workers-one");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let e1 = pool_experiment(&dir, "");
    let o = run(&e1, &a, "2");
    assert!(o.status.success(), "{}", err(&o));
    let e2 = pool_experiment(&dir, "workers = 1");
    let o = run(&e2, &b, "2");
    assert!(o.status.success(), "{}", err(&o));
    for f in ["runs.parquet", "trajectories.parquet"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    let lock = |d: &Path| std::fs::read_to_string(d.join("experiment.lock.toml")).unwrap();
    let fp = |t: String| {
        t.lines()
            .find(|l| l.starts_with("fingerprint"))
            .unwrap()
            .to_string()
    };
    assert_eq!(fp(lock(&a)), fp(lock(&b)));
    // One worker: no idle time, and each step starts where the last one finished.
    let runs = read(&a.join("runs.parquet"));
    let idle = runs.column("idle_s").unwrap().f64().unwrap();
    assert!(idle.into_no_null_iter().all(|d| d == 0.0));
    let t = read(&a.join("trajectories.parquet"));
    let cell = t.column("cell").unwrap().u64().unwrap();
    let start = t.column("start").unwrap().f64().unwrap();
    let finish = t.column("finish").unwrap().f64().unwrap();
    for i in 1..t.height() {
        if cell.get(i) == cell.get(i - 1) {
            assert_eq!(start.get(i), finish.get(i - 1));
        }
    }
}

#[test]
fn learner_level_worlds_take_workers_too() {
    let dir = scratch("workers-learner");
    let e = dir.join("e.toml");
    std::fs::write(
        &e,
        format!(
            r#"name = "tiny-workers"
traces = "{}"
seed = 1
repetitions = 2

[world]
kind = "time-sliced"
budgets = [40.0]
slice = 2.0
workers = 3

[[policies]]
family = "round-robin"
"#,
            fixture().display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = run(&e, &out, "1");
    assert!(o.status.success(), "{}", err(&o));
    // Slices of equal length keep three workers busy to the end of the 40 s: three times the
    // sequential work in the same wall-clock budget, no idle time.
    let runs = read(&out.join("runs.parquet"));
    let decisions = runs.column("decisions").unwrap().u64().unwrap();
    assert!(decisions.into_no_null_iter().all(|d| d == 60), "{runs}");
    let makespan = runs.column("makespan_s").unwrap().f64().unwrap();
    assert!(
        makespan
            .into_no_null_iter()
            .all(|m| (m - 40.0).abs() < 1e-9)
    );
    let idle = runs.column("idle_s").unwrap().f64().unwrap();
    assert!(idle.into_no_null_iter().all(|d| d.abs() < 1e-9));
    // Pull-count: evaluations take their recorded times, so UCB1 must skip running arms; both
    // ways of indexing running pulls run the whole budget, and differ in what they pull.
    let e = dir.join("pc.toml");
    std::fs::write(
        &e,
        format!(
            r#"name = "tiny-ucb-workers"
traces = "{}"
seed = 1
repetitions = 2

[world]
kind = "pull-count"
budgets = [12]
order = "recorded"
exhausted = "resample"
workers = 2

[[policies]]
family = "ucb1"
pending = ["count", "ignore"]
"#,
            fixture().display()
        ),
    )
    .unwrap();
    let out = dir.join("pc");
    let o = run(&e, &out, "2");
    assert!(o.status.success(), "{}", err(&o));
    let runs = read(&out.join("runs.parquet"));
    let decisions = runs.column("decisions").unwrap().u64().unwrap();
    assert!(decisions.into_no_null_iter().all(|d| d == 12), "{runs}");
    let policy = runs.column("policy").unwrap().str().unwrap();
    let ids: std::collections::BTreeSet<&str> =
        (0..policy.len()).filter_map(|i| policy.get(i)).collect();
    // The default is left out of the id (results from before the parameter keep theirs).
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        vec![
            "ucb1(tie_break=first, log_t=pulls)",
            "ucb1(tie_break=first, log_t=pulls, pending=ignore)"
        ]
    );
}

/// A Python policy through the protocol with 3 workers (tests/fixtures/policies/pool_workers.py):
/// synchronous rounds of one configuration per worker, 3 units each, waiting for the round's
/// stragglers. It checks the view's running work itself; here: the run is deterministic, every
/// round starts after the last one finished, and the waits show as idle time.
#[test]
fn a_python_policy_sees_running_work_and_waits_for_it_through_the_protocol() {
    if !python_ok() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("workers-external");
    let e = pool_experiment(&dir, "workers = 3");
    let text = std::fs::read_to_string(&e).unwrap();
    let head = &text[..text.find("[[policies]]").unwrap()];
    std::fs::write(
        &e,
        format!(
            "{head}[[policies]]\nfamily = \"external\"\nname = \"py-rounds\"\ncommand = [\"python3\", \"{}\"]\nenv = {{ PYTHONPATH = \"{}\" }}\n",
            root.join("tests/fixtures/policies/pool_workers.py").display(),
            root.join("python").display()
        ),
    )
    .unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        let o = run(&e, out, threads);
        assert!(o.status.success(), "{}", err(&o));
    }
    for f in ["runs.parquet", "trajectories.parquet"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    let t = read(&a.join("trajectories.parquet"));
    let cell = t.column("cell").unwrap().u64().unwrap();
    let action = t.column("action").unwrap().str().unwrap();
    let start = t.column("start").unwrap().f64().unwrap();
    let finish = t.column("finish").unwrap().f64().unwrap();
    // Rounds of 3 draws and 6 more units: 9 steps, the next round's draws after all of them.
    let (mut last_cell, mut in_round, mut round_end, mut next_end) = (None, 0, 0.0f64, 0.0f64);
    for i in 0..t.height() {
        if cell.get(i) != last_cell {
            (last_cell, in_round, round_end, next_end) = (cell.get(i), 0, 0.0, 0.0);
        }
        if action.get(i) == Some("draw") && in_round % 9 == 0 {
            round_end = next_end;
        }
        if action.get(i) == Some("draw") {
            assert!(
                start.get(i).unwrap() >= round_end,
                "row {i}: a draw before its round"
            );
        }
        next_end = next_end.max(finish.get(i).unwrap());
        in_round += 1;
    }
    let runs = read(&a.join("runs.parquet"));
    let idle = runs.column("idle_s").unwrap().f64().unwrap();
    assert!(idle.into_no_null_iter().all(|d| d > 0.0), "{runs}");
}

#[test]
fn bad_worker_keys_are_refused_with_the_key_and_what_to_do() {
    let dir = scratch("workers-bad");
    for (world, want) in [
        (
            "workers = 0",
            "key 'world.workers' is 0; give the number of simulated workers, 1 to 4096",
        ),
        ("workers = 5000", "key 'world.workers' is 5000"),
        (
            "workers = 2\nwork_s = 1.0",
            "key 'world.work_s' applies only to the synthetic world",
        ),
    ] {
        let e = pool_experiment(&dir, world);
        let o = run(&e, &dir.join("out"), "1");
        assert!(
            !o.status.success() && err(&o).contains(want),
            "{world}: {}",
            err(&o)
        );
    }
    let e = pool_experiment(&dir, "workers = 2");
    let text = std::fs::read_to_string(&e)
        .unwrap()
        .replace("budgets = [60]", "budgets = [60]\nincumbent = \"last\"");
    std::fs::write(&e, text).unwrap();
    let o = run(&e, &dir.join("out"), "1");
    assert!(
        !o.status.success()
            && err(&o).contains("key 'world.incumbent' is \"last\"")
            && err(&o).contains("use incumbent = \"best-seen\""),
        "{}",
        err(&o)
    );
}

/// The synthetic world's work times: fixed (`work_s`), or drawn from a named distribution with
/// mean `work_s` (UCB1 on 5 arms, 4 workers: it never pulls a running arm).
#[test]
fn synthetic_work_times_follow_the_named_distribution() {
    let dir = scratch("workers-synthetic-work");
    let exp = |work: &str| {
        let e = dir.join(format!("{}.toml", work.len()));
        std::fs::write(
            &e,
            format!(
                r#"name = "synthetic-work"
seed = 4
repetitions = 1
trajectories = "every-decision"

[world]
kind = "synthetic"
budgets = [4000]
workers = 4
work_s = 2.0
{work}
arms = [
  {{ name = "a", distribution = "gaussian", mean = 0.5, sd = 0.1 }},
  {{ name = "b", distribution = "gaussian", mean = 0.6, sd = 0.1 }},
  {{ name = "c", distribution = "gaussian", mean = 0.4, sd = 0.1 }},
  {{ name = "d", distribution = "gaussian", mean = 0.55, sd = 0.1 }},
  {{ name = "e", distribution = "gaussian", mean = 0.45, sd = 0.1 }},
]

[[policies]]
family = "ucb1"
"#
            ),
        )
        .unwrap();
        e
    };
    let durations = |work: &str| {
        let out = dir.join(format!("out-{}", work.len()));
        let o = run(&exp(work), &out, "1");
        assert!(o.status.success(), "{work}: {}", err(&o));
        let t = read(&out.join("trajectories.parquet"));
        let start = t.column("start").unwrap().f64().unwrap();
        let finish = t.column("finish").unwrap().f64().unwrap();
        let d: Vec<f64> = start
            .into_no_null_iter()
            .zip(finish.into_no_null_iter())
            .map(|(s, f)| f - s)
            .collect();
        d
    };
    let fixed = durations("");
    assert_eq!(fixed.len(), 4000);
    assert!(fixed.iter().all(|&d| (d - 2.0).abs() < 1e-12));
    let expo = durations("work = \"exponential\"");
    assert_eq!(expo.len(), 4000);
    // Mean 2 (standard error 2/sqrt(4000) = 0.032); about e^-1 of the pulls take over 2 s.
    let mean = expo.iter().sum::<f64>() / 4000.0;
    assert!((mean - 2.0).abs() < 0.15, "{mean}");
    let over = expo.iter().filter(|&&d| d > 2.0).count() as f64 / 4000.0;
    assert!((over - 0.368).abs() < 0.03, "{over}");
    let logn = durations("work = \"lognormal\"\nwork_sigma = 0.5");
    let below = logn
        .iter()
        .filter(|&&d| d < 2.0 * (-0.125f64).exp())
        .count() as f64
        / 4000.0;
    assert!(
        (below - 0.5).abs() < 0.03,
        "median 2 e^(-sigma^2/2): {below}"
    );
    for (work, want) in [
        (
            "work = \"gamma\"",
            "key 'world.work' is 'gamma'; allowed: fixed, exponential, lognormal",
        ),
        (
            "work = \"exponential\"\nwork_sigma = 1.0",
            "key 'world.work_sigma' applies only to work = \"lognormal\"",
        ),
        (
            "work = \"lognormal\"\nwork_sigma = -1.0",
            "key 'world.work_sigma' is -1",
        ),
    ] {
        let o = run(&exp(work), &dir.join("bad"), "1");
        assert!(
            !o.status.success() && err(&o).contains(want),
            "{work}: {}",
            err(&o)
        );
    }
}

/// Several workers in the pull-count world take each evaluation's recorded time; a trace set
/// that records none is refused, naming the key and the trace set.
#[test]
fn workers_in_the_pull_count_world_need_recorded_evaluation_times() {
    // The tiny fixture with every elapsed_s set to 0.
    let ts = tiny_variant(
        "workers-untimed",
        |csv| {
            csv.lines()
                .enumerate()
                .map(|(i, l)| {
                    if i == 0 {
                        return l.to_string();
                    }
                    let mut f: Vec<&str> = l.split(',').collect();
                    f[4] = "0";
                    f.join(",")
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        },
        |m| m.to_string(),
    );
    let dir = scratch("workers-untimed-run");
    let exp = |workers: usize| {
        let e = dir.join(format!("e{workers}.toml"));
        std::fs::write(
            &e,
            format!(
                r#"name = "untimed"
traces = "{}"
seed = 1
repetitions = 1

[world]
kind = "pull-count"
budgets = [6]
workers = {workers}

[[policies]]
family = "ucb1"
"#,
                ts.display()
            ),
        )
        .unwrap();
        e
    };
    let o = run(&exp(2), &dir.join("out2"), "1");
    let e = err(&o);
    assert!(
        !o.status.success()
            && e.contains("key 'world.workers' is 2")
            && e.contains("records no evaluation time")
            && e.contains(&ts.display().to_string()),
        "{e}"
    );
    // One worker needs no times.
    let o = run(&exp(1), &dir.join("out1"), "1");
    assert!(o.status.success(), "{}", err(&o));
}

/// The per-cell cap on decisions counts the workers: with a budget of seconds each busy worker
/// takes budget / slice decisions, so 3 workers on the tiny set's 3 arms take three times one
/// worker's. A slice that one worker may take is refused with three, naming the keys, before any
/// memory is spent (an LCDB cell with slice 1e-6 and 20 workers once aborted at 8 GiB).
#[test]
fn work_times_that_overflow_or_underflow_the_clock_are_refused() {
    let dir = scratch("workers-work-bounds");
    let e = dir.join("w.toml");
    for (keys, want) in [
        (
            "work_s = 1.7e308\nwork = \"exponential\"",
            "'world.work_s' is 1.7e308; give the seconds one pull takes, from 1e-9 to 1e12",
        ),
        ("work_s = 1e-12", "'world.work_s' is 1e-12"),
        (
            "work = \"lognormal\"\nwork_sigma = 1e9",
            "'world.work_sigma' is 1e9; give the standard deviation of the log work time, a number above 0 and at most 10",
        ),
    ] {
        std::fs::write(
            &e,
            format!(
                "name = \"w\"\nseed = 1\n[world]\nkind = \"synthetic\"\nbudgets = [10]\nworkers = 2\n{keys}\narms = [{{ name = \"a\", distribution = \"gaussian\", mean = 0.5, sd = 0.1 }}, {{ name = \"b\", distribution = \"gaussian\", mean = 0.6, sd = 0.1 }}]\n\n[[policies]]\nfamily = \"ucb1\"\n"
            ),
        )
        .unwrap();
        let o = run(&e, &dir.join("out"), "1");
        assert!(
            !o.status.success() && err(&o).contains(want),
            "{keys}: {}",
            err(&o)
        );
    }
}

#[test]
fn the_decision_cap_counts_the_workers() {
    let dir = scratch("workers-cap");
    let e = dir.join("cap.toml");
    let write = |workers: usize| {
        std::fs::write(
            &e,
            format!(
                "name = \"cap\"\ntraces = \"{}\"\nseed = 1\nrepetitions = 1\n\n[world]\nkind = \"time-sliced\"\nbudgets = [4.0]\nslice = 0.000001\nworkers = {workers}\n\n[[policies]]\nfamily = \"round-robin\"\n",
                fixture().display()
            ),
        )
        .unwrap();
    };
    // 4 s / 1e-6 s = 4 000 000 decisions: within the cap of 10 000 000 with one worker, checked
    // without running it (the refusal comes first when it applies).
    write(3);
    let o = run(&e, &dir.join("out3"), "1");
    let msg = err(&o);
    assert!(
        !o.status.success()
            && msg.contains("one cell would take 1200000")
            && msg.contains("'world.workers'"),
        "{msg}"
    );
    assert!(!dir.join("out3").join("runs.parquet").exists());
}

/// Runs `random-search` with `work` on two datasets' MLP grids of `sklearn-grid` in `budget`
/// (`world` keys), at `workers`; returns runs.parquet and trajectories.parquet.
fn random_search(dir: &Path, work: &str, world: &str, workers: u32) -> (DataFrame, DataFrame) {
    let name = format!("rs-{work}-{workers}-{}", world.len());
    let e = dir.join(format!("{name}.toml"));
    std::fs::write(
        &e,
        format!(
            "name = \"{name}\"\ntraces = \"{}\"\nseed = 7\nrepetitions = 3\n[tasks]\ndatasets = [\"car\", \"phoneme\"]\nruns = [0]\nlearners = [\"mlp\"]\n[world]\nkind = \"pool\"\nper_learner = true\nworkers = {workers}\n{world}\n[[policies]]\nfamily = \"random-search\"\nwork = \"{work}\"\n",
            grid().display()
        ),
    )
    .unwrap();
    let out = dir.join(&name);
    let o = run(&e, &out, "2");
    assert!(o.status.success(), "{}", err(&o));
    (
        read(&out.join("runs.parquet")),
        read(&out.join("trajectories.parquet")),
    )
}

fn column_f64(df: &DataFrame, name: &str) -> Vec<f64> {
    df.column(name)
        .unwrap()
        .cast(&DataType::Float64)
        .unwrap()
        .f64()
        .unwrap()
        .into_no_null_iter()
        .collect()
}

#[test]
fn a_configuration_trained_in_one_piece_of_work_is_one_decision_and_one_step() {
    // (That it finds what unit steps find, with the same draws, is checked with equal seeds in
    // `policy::hyperband`: here the policy id, and so the seeds, differ.)
    let dir = scratch("whole-configuration");
    for world in [
        "budget_unit = \"units\"\nbudgets = [100]",
        "budget_unit = \"seconds\"\nbudgets = [30.0]",
    ] {
        let (unit, unit_t) = random_search(&dir, "unit", world, 1);
        for k in [1, 2, 4] {
            let (r, t) = random_search(&dir, "configuration", world, k);
            assert_eq!(
                column_f64(&r, "decisions"),
                column_f64(&r, "configs_drawn"),
                "{world}, {k} workers: one decision per configuration"
            );
            assert_eq!(
                t.height() as f64,
                column_f64(&r, "decisions").iter().sum::<f64>(),
                "{world}, {k} workers: one trajectory step per decision"
            );
            assert!(t.height() * 5 < unit_t.height(), "{world}");
            // A step trains its configuration to unit 27 unless the budget ended it: only each
            // cell's (six cells') last configurations, one per worker, can stop short.
            let full = column_f64(&t, "fidelity")
                .iter()
                .filter(|&&f| f == 27.0)
                .count();
            assert!(
                t.height() - full <= 6 * k as usize,
                "{world}: {full} of {}",
                t.height()
            );
            assert!(column_f64(&r, "best_score").iter().all(|s| s.is_finite()));
            // The budget is spent as with unit steps (to within the last cut configuration).
            let (a, b) = (
                column_f64(&unit, "budget_used"),
                column_f64(&r, "budget_used"),
            );
            assert!(
                a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 0.05 * x),
                "{a:?} {b:?}"
            );
        }
    }
}
