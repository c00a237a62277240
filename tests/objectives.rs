//! Experiments of several objectives on the bundled NAS-Bench-201 pool: every step's hypervolume
//! regret, the final indicators, the reference points and the true fronts are recomputed here
//! from the pool and the results files alone (each hypervolume from scratch, not through the
//! engine's incremental archive), with one worker and several; bad input is refused by name; the
//! report ranks by hypervolume regret and will not rank folders of other objectives together.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use banditbench::pareto::{epsilon_additive, hypervolume, igd_plus, nondominated};
use banditbench::trace::pool::{Pool, load_pool};
use common::{bin, run_fails, run_ok, run_quiet, scratch};
use polars::prelude::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

fn f64s(df: &DataFrame, name: &str) -> Vec<f64> {
    let c = df.column(name).unwrap().cast(&DataType::Float64).unwrap();
    c.f64()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect()
}

fn u64s(df: &DataFrame, name: &str) -> Vec<u64> {
    let c = df.column(name).unwrap().cast(&DataType::UInt64).unwrap();
    c.u64().unwrap().iter().map(|v| v.unwrap()).collect()
}

fn strs(df: &DataFrame, name: &str) -> Vec<String> {
    let c = df.column(name).unwrap();
    c.str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or("").to_string())
        .collect()
}

/// An experiment on traces/nasbench201 with `world` added to its `[world]` table.
fn experiment(dir: &Path, name: &str, world: &str, policies: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ntraces = \"{}\"\nseed = 7\nrepetitions = 2\n[tasks]\ndatasets = [\"cifar10\", \"imagenet\"]\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [40]\n{world}\n{policies}",
            root().join("traces/nasbench201").display()
        ),
    )
    .unwrap();
    path
}

const POLICIES: &str = "[[policies]]\nfamily = \"random-search\"\n[[policies]]\nfamily = \"tpe\"\n";

/// The lock file's `[resolved.objectives]`, per task: (reference, ideal, true front size, its
/// hypervolume).
type LockTasks = BTreeMap<String, (Vec<f64>, Vec<f64>, usize, f64)>;

fn lock_objectives(out: &Path) -> (Vec<String>, Vec<String>, LockTasks) {
    let text = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
    let t: toml::Table = toml::from_str(&text).unwrap();
    let o = &t["resolved"]["objectives"];
    let list = |v: &toml::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let nums = |v: &toml::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_float().unwrap())
            .collect()
    };
    let tasks = o["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"].as_str().unwrap().to_string(),
                (
                    nums(&t["reference"]),
                    nums(&t["ideal"]),
                    t["true_front"].as_integer().unwrap() as usize,
                    t["true_hypervolume"].as_float().unwrap(),
                ),
            )
        })
        .collect();
    (list(&o["names"]), list(&o["directions"]), tasks)
}

/// The pool's task index of `dataset/run`.
fn task_index(pool: &Pool, dataset: &str, run: i64) -> usize {
    pool.tasks
        .iter()
        .position(|t| t.dataset == dataset && t.run == run)
        .unwrap()
}

/// Check a results folder of several objectives against a replay from scratch: the reference
/// point by the nadir rule (margin 0.1), the true front, every step's hypervolume regret, and
/// the final indicators. Returns how many steps added a point.
fn check_against_scratch(out: &Path, pool: &Pool, objectives: &[&str]) -> usize {
    let (names, directions, tasks) = lock_objectives(out);
    assert_eq!(names, objectives);
    let which: Vec<usize> = objectives
        .iter()
        .map(|n| {
            pool.manifest
                .objectives
                .iter()
                .position(|o| o.name == *n)
                .unwrap()
        })
        .collect();
    let d = which.len();
    let sign: Vec<f64> = directions
        .iter()
        .map(|s| if s == "maximize" { -1.0 } else { 1.0 })
        .collect();
    // Per task: every configuration's normalised point, the front and its hypervolume.
    // Per task: (configuration -> normalised point, the normalised front, its hypervolume).
    type Scratch = (BTreeMap<usize, Vec<f64>>, Vec<f64>, f64);
    let mut per_task: BTreeMap<String, Scratch> = BTreeMap::new();
    for (task, (reference, ideal, front_size, true_hv)) in &tasks {
        let mut parts = task.split('/');
        let (ds, run) = (parts.next().unwrap(), parts.next().unwrap());
        let t = task_index(pool, ds, run.parse().unwrap());
        let (pts, configs) = pool.objective_points(t, &which);
        // The nadir rule, recomputed: the front's worst value plus a tenth of its range.
        let front_idx = nondominated(&pts, d);
        assert_eq!(front_idx.len(), *front_size, "{task}");
        for k in 0..d {
            let col = front_idx.iter().map(|&i| pts[i * d + k]);
            let (lo, hi) = col.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
            assert_eq!(sign[k] * ideal[k], lo, "{task}: ideal {k}");
            let want = hi + 0.1 * (hi - lo);
            assert!(
                (sign[k] * reference[k] - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{task}: reference {k}"
            );
        }
        let norm = |p: &[f64]| -> Vec<f64> {
            (0..d)
                .map(|k| {
                    let (lo, r) = (sign[k] * ideal[k], sign[k] * reference[k]);
                    (p[k] - lo) / (r - lo)
                })
                .collect()
        };
        let points: BTreeMap<usize, Vec<f64>> = pts
            .chunks_exact(d)
            .zip(&configs)
            .map(|(p, &c)| (c, norm(p)))
            .collect();
        let front: Vec<f64> = front_idx
            .iter()
            .flat_map(|&i| norm(&pts[i * d..(i + 1) * d]))
            .collect();
        let hv = hypervolume(&front, &vec![1.0; d]);
        assert!(
            (hv - true_hv).abs() <= 1e-12,
            "{task}: true hypervolume {hv} vs {true_hv}"
        );
        per_task.insert(task.clone(), (points, front, hv));
    }
    // Every step of every cell, replayed from the trajectories.
    let runs = read(&out.join("runs.parquet"));
    let traj = read(&out.join("trajectories.parquet"));
    let (cells, ds, run) = (u64s(&runs, "cell"), strs(&runs, "dataset"), {
        let c = runs.column("run").unwrap().i64().unwrap().clone();
        c.iter().map(|v| v.unwrap()).collect::<Vec<i64>>()
    });
    let (final_regret, final_hv, final_igd, final_eps, final_size) = (
        f64s(&runs, "hv_regret"),
        f64s(&runs, "hypervolume"),
        f64s(&runs, "igd_plus"),
        f64s(&runs, "epsilon_additive"),
        u64s(&runs, "front_size"),
    );
    let (t_cell, t_config, t_fid, t_regret) = (
        u64s(&traj, "cell"),
        u64s(&traj, "config"),
        u64s(&traj, "fidelity"),
        f64s(&traj, "hv_regret"),
    );
    let mut added = 0;
    for i in 0..runs.height() {
        let (points, front, true_hv) = &per_task[&format!("{}/{}/all", ds[i], run[i])];
        let mut archive: Vec<f64> = Vec::new();
        let mut seen = HashSet::new();
        let mut last = f64::NAN;
        for j in (0..t_cell.len()).filter(|&j| t_cell[j] == cells[i]) {
            let c = t_config[j] as usize;
            if t_fid[j] >= u64::from(pool.manifest.units)
                && let Some(p) = points.get(&c)
                && seen.insert(c)
            {
                archive.extend_from_slice(p);
                added += 1;
            }
            let inside: Vec<f64> = archive
                .chunks_exact(d)
                .filter(|p| p.iter().all(|&x| x < 1.0))
                .flatten()
                .copied()
                .collect();
            let regret = (1.0 - hypervolume(&inside, &vec![1.0; d]) / true_hv).max(0.0);
            assert!(
                (regret - t_regret[j]).abs() <= 1e-12,
                "cell {} step {j}: hv_regret {} but {regret} from scratch",
                cells[i],
                t_regret[j]
            );
            last = regret;
        }
        assert!((final_regret[i] - last).abs() <= 1e-12, "cell {}", cells[i]);
        assert!((final_hv[i] - (1.0 - last) * true_hv).abs() <= 1e-12);
        let kept = nondominated(&archive, d);
        let found: Vec<f64> = kept
            .iter()
            .flat_map(|&k| archive[k * d..(k + 1) * d].iter().copied())
            .collect();
        assert_eq!(final_size[i], kept.len() as u64);
        if kept.is_empty() {
            // Nothing archived: IGD+ and ε are infinite, written as null.
            assert!(
                final_igd[i].is_nan() && final_eps[i].is_nan(),
                "cell {}",
                cells[i]
            );
            assert_eq!(last, 1.0);
            continue;
        }
        assert!((final_igd[i] - igd_plus(&found, front, d)).abs() <= 1e-12);
        assert!((final_eps[i] - epsilon_additive(&found, front, d)).abs() <= 1e-12);
    }
    added
}

#[test]
fn every_steps_hypervolume_regret_equals_a_replay_from_scratch_with_any_workers() {
    let dir = scratch("objectives-scratch");
    let pool = load_pool(&root().join("traces/nasbench201"), false).unwrap();
    for (objectives, workers) in [
        (&["val_acc", "latency"][..], 1),
        (&["val_acc", "latency"][..], 4),
        (&["val_acc", "train_time", "model_size"][..], 1),
        (&["val_acc", "train_time", "model_size"][..], 3),
        (&["val_acc", "train_time", "latency", "model_size"][..], 2),
    ] {
        let list = objectives
            .iter()
            .map(|o| format!("\"{o}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let name = format!("mo-{}-{workers}", objectives.len());
        let exp = experiment(
            &dir,
            &name,
            &format!("objectives = [{list}]\nworkers = {workers}"),
            POLICIES,
        );
        let out = dir.join(&name);
        let o = bin()
            .args(["run", exp.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(["--quiet"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let added = check_against_scratch(&out, &pool, objectives);
        // 2 tasks x 2 datasets x 2 policies x 2 repetitions, 40 evaluations each: every
        // evaluation of a one-unit pool archives its configuration.
        assert_eq!(added, 16 * 40, "{name}");
    }
}

#[test]
fn on_learning_curves_only_full_trainings_are_archived_and_train_time_sums_the_units() {
    // sklearn-grid: 27 units per curve, accuracy x train_time (cost_s summed over the units).
    // MO-ASHA stops most configurations early: they never enter the archive, and every step's
    // hypervolume regret is still the from-scratch replay's, on 1 and 4 workers.
    let dir = scratch("objectives-curves");
    let grid = root().join("traces/sklearn-grid");
    let pool = load_pool(&grid, false).unwrap();
    // train_time of a full training is the sum of its units' recorded seconds, summed here from
    // the curves rather than through the pool's objective reader.
    let which = [0usize, 1];
    let t = task_index(&pool, "phoneme", 0);
    let (pts, configs) = pool.objective_points(t, &which);
    assert_eq!(configs.len(), pool.configs.len());
    for (p, &c) in pts.chunks_exact(2).zip(&configs) {
        let curve = &pool.tasks[t].curves[c];
        let seconds: f64 = curve.cost_s.iter().map(|&x| f64::from(x)).sum();
        assert_eq!(p[1], seconds, "config {c}");
        assert_eq!(p[0], -f64::from(*curve.score.last().unwrap()));
    }
    for workers in [1, 4] {
        let name = format!("curves-{workers}");
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "name = \"{name}\"\ntraces = \"{}\"\nseed = 3\nrepetitions = 2\n[tasks]\ndatasets = [\"phoneme\", \"car\"]\nruns = [0]\n[world]\nkind = \"pool\"\nbudget_unit = \"seconds\"\nbudgets = [4]\nworkers = {workers}\nobjectives = [\"accuracy\", \"train_time\"]\n[[policies]]\nfamily = \"mo-asha\"\n[[policies]]\nfamily = \"random-search\"\n",
                grid.display()
            ),
        )
        .unwrap();
        let out = dir.join(&name);
        run_quiet(&path, &out);
        let added = check_against_scratch(&out, &pool, &["accuracy", "train_time"]);
        let runs = read(&out.join("runs.parquet"));
        let (policy, decisions) = (strs(&runs, "policy"), u64s(&runs, "decisions"));
        let asha: u64 = (0..runs.height())
            .filter(|&i| policy[i].starts_with("mo-asha"))
            .map(|i| decisions[i])
            .sum();
        let total: u64 = decisions.iter().sum();
        // MO-ASHA's decisions are rungs of 1, 3, 9 and 27 units: far more than it finishes.
        assert!(
            added > 0 && (added as u64) < total,
            "{name}: {added} of {total}"
        );
        assert!(asha > 0, "{name}");
    }
}

#[test]
fn a_reference_file_gives_the_same_results_as_the_rule_it_writes_down() {
    let dir = scratch("objectives-file");
    let by_rule = experiment(
        &dir,
        "rule",
        "objectives = [\"val_acc\", \"latency\"]",
        POLICIES,
    );
    let out_rule = dir.join("out-rule");
    run_quiet(&by_rule, &out_rule);
    let (_, _, tasks) = lock_objectives(&out_rule);
    let mut csv = String::from("dataset,run,val_acc,latency\n");
    for (task, (reference, ..)) in &tasks {
        let mut p = task.split('/');
        csv += &format!(
            "{},{},{:?},{:?}\n",
            p.next().unwrap(),
            p.next().unwrap(),
            reference[0],
            reference[1]
        );
    }
    std::fs::write(dir.join("refs.csv"), &csv).unwrap();
    let by_file = experiment(
        &dir,
        "file",
        "objectives = [\"val_acc\", \"latency\"]\nreference = \"refs.csv\"",
        POLICIES,
    );
    let out_file = dir.join("out-file");
    run_quiet(&by_file, &out_file);
    let (a, b) = (
        read(&out_rule.join("runs.parquet")),
        read(&out_file.join("runs.parquet")),
    );
    for col in ["hypervolume", "hv_regret", "igd_plus", "epsilon_additive"] {
        assert_eq!(f64s(&a, col), f64s(&b, col), "{col}");
    }
    let (_, _, tasks_file) = lock_objectives(&out_file);
    assert_eq!(tasks, tasks_file);
    let lock = std::fs::read_to_string(out_file.join("experiment.lock.toml")).unwrap();
    assert!(lock.contains("reference = \"given by refs.csv\""), "{lock}");

    // A reference point no recorded point dominates, a task missing, a value missing.
    let first = csv.lines().nth(1).unwrap().to_string();
    let mut fields: Vec<String> = first.split(',').map(str::to_string).collect();
    fields[2] = "99.9".into(); // val_acc is maximised: nothing beats 99.9 %
    let dominated = csv.replace(&first, &fields.join(","));
    let missing_task: String = csv
        .lines()
        .filter(|l| *l != first)
        .map(|l| format!("{l}\n"))
        .collect();
    let empty_value = csv.replace(
        &first,
        &format!("{},{},,{}", fields[0], fields[1], fields[3]),
    );
    for (text, wanted) in [
        (
            dominated.as_str(),
            "no recorded point strictly dominates the reference point (99.9,",
        ),
        (missing_task.as_str(), "has no row for dataset"),
        (
            empty_value.as_str(),
            "refs.csv: row 1: column 'val_acc' is empty",
        ),
        (
            "dataset,run,val_acc\ncifar10,0,1\n",
            "refs.csv: missing column 'latency'",
        ),
    ] {
        std::fs::write(dir.join("refs.csv"), text).unwrap();
        let err = run_fails(
            &[
                "run",
                by_file.to_str().unwrap(),
                "--out",
                dir.join("bad").to_str().unwrap(),
            ],
            1,
        );
        assert!(err.contains(wanted), "{wanted}: {err}");
    }
}

#[test]
fn bad_objectives_are_refused_by_key_with_what_to_do() {
    let dir = scratch("objectives-bad");
    let pool_world = |world: &str| experiment(&dir, "bad", world, POLICIES);
    for (world, wanted) in [
        (
            "objectives = [\"val_acc\", \"speed\"]",
            "names 'speed', which the pool nasbench201 does not have; it has: val_acc, train_time, latency, model_size",
        ),
        (
            "objectives = [\"val_acc\"]",
            "key 'world.objectives' names 1 objective(s); give at least two",
        ),
        (
            "objectives = [\"val_acc\", \"val_acc\"]",
            "names 'val_acc' twice",
        ),
        ("reference = \"nadir\"", "given without 'world.objectives'"),
        (
            "objectives = [\"val_acc\", \"latency\"]\nreference_margin = -1",
            "key 'world.reference_margin' is -1",
        ),
        (
            "objectives = [\"val_acc\", \"latency\"]\nreference = \"none.csv\"",
            "none.csv",
        ),
    ] {
        let exp = pool_world(world);
        let err = run_fails(
            &[
                "run",
                exp.to_str().unwrap(),
                "--out",
                dir.join("o").to_str().unwrap(),
            ],
            1,
        );
        assert!(err.contains(wanted), "{world}: {err}");
    }
    // A pool without objectives, and a world that is not the pool world.
    let plain = dir.join("plain.toml");
    std::fs::write(
        &plain,
        format!(
            "name = \"plain\"\ntraces = \"{}\"\nseed = 1\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [5]\nobjectives = [\"a\", \"b\"]\n{POLICIES}",
            root().join("traces/taskset").display()
        ),
    )
    .unwrap();
    let err = run_fails(
        &[
            "run",
            plain.to_str().unwrap(),
            "--out",
            dir.join("p").to_str().unwrap(),
        ],
        1,
    );
    assert!(
        err.contains("the pool taskset declares no objectives"),
        "{err}"
    );
    let learner = common::experiment(
        &dir,
        "learner",
        "seed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [5]\nobjectives = [\"a\", \"b\"]\n[[policies]]\nfamily = \"ucb1\"\n",
    );
    let err = run_fails(
        &[
            "run",
            learner.to_str().unwrap(),
            "--out",
            dir.join("l").to_str().unwrap(),
        ],
        1,
    );
    assert!(
        err.contains(
            "the trace set tiny declares no objectives (its traceset.toml has no [[objectives]])"
        ),
        "{err}"
    );
    let synthetic = dir.join("synthetic.toml");
    std::fs::write(
        &synthetic,
        "name = \"s\"\nseed = 1\n[world]\nkind = \"synthetic\"\nbudgets = [5]\nobjectives = [\"a\", \"b\"]\narms = [{ name = \"a\", distribution = \"gaussian\", mean = 0.5, sd = 0.1 }]\n[[policies]]\nfamily = \"ucb1\"\n",
    )
    .unwrap();
    let err = run_fails(
        &[
            "run",
            synthetic.to_str().unwrap(),
            "--out",
            dir.join("s").to_str().unwrap(),
        ],
        1,
    );
    assert!(
        err.contains(
            "key 'world.objectives' applies only to the pool, time-sliced and pull-count worlds"
        ),
        "{err}"
    );
}

#[test]
fn the_report_ranks_by_hypervolume_regret_and_keeps_other_objectives_apart() {
    let dir = scratch("objectives-report");
    let two = experiment(
        &dir,
        "two",
        "objectives = [\"val_acc\", \"latency\"]",
        POLICIES,
    );
    let out_two = dir.join("two");
    let printed = run_ok(&[
        "run",
        two.to_str().unwrap(),
        "--out",
        out_two.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(
        text.contains("Mean rank of the hypervolume regret"),
        "{text}"
    );
    let rep = dir.join("report");
    run_ok(&[
        "report",
        out_two.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(md.contains("score = hypervolume regret"), "{md}");
    assert!(md.contains("mean hypervolume regret against"), "{md}");
    // The leaderboard's mean scores are the mean regrets (lower is better).
    let runs = read(&out_two.join("runs.parquet"));
    let regret = f64s(&runs, "hv_regret");
    assert!(regret.iter().all(|r| (0.0..=1.0).contains(r)), "{regret:?}");
    // The attainment figure: a panel per task, each policy's median surface and the true front,
    // a staircase of 2 n + 1 vertices over the lock file's n front points.
    assert!(
        md.contains("attainment.png") && rep.join("attainment.pdf").is_file(),
        "{md}"
    );
    // And the final fronts (what any repetition attained), drawn the same way.
    assert!(md.contains("fronts.png"), "{md}");
    let (_, _, tasks) = lock_objectives(&out_two);
    for figure in ["attainment.csv", "fronts.csv"] {
        let csv = std::fs::read_to_string(rep.join(figure)).unwrap();
        for (task, (_, _, front, _)) in &tasks {
            let rows = |series: &str| {
                csv.lines()
                    .filter(|l| l.starts_with(&format!("{task} (budget 40),{series},")))
                    .count()
            };
            assert_eq!(rows("true front"), 2 * front + 1, "{figure} {task}");
            assert!(
                rows("random-search") >= 3 && rows("tpe") >= 3,
                "{figure} {task}"
            );
        }
    }

    // The EAF differences of the two best-ranked policies: per task, regions whose value is the
    // share of one policy's 2 repetitions attaining them minus the other's (so ±0.5 or ±1).
    assert!(md.contains("eaf_diff.png"), "{md}");
    let csv = std::fs::read_to_string(rep.join("eaf_diff.csv")).unwrap();
    assert!(csv.starts_with("panel,series,x,y,x1,y1,value\n"), "{csv}");
    for task in tasks.keys() {
        let values: Vec<f64> = csv
            .lines()
            .filter(|l| l.starts_with(&format!("{task} (budget 40),region,")))
            .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(!values.is_empty(), "{task}: no region");
        assert!(
            values.iter().all(|v| [-1.0, -0.5, 0.5, 1.0].contains(v)),
            "{task}: {values:?}"
        );
    }

    // --eaf-diff picks the pair by label or id (an id's own commas sit inside parentheses);
    // a name that is no policy, or one name, is refused naming what there is.
    let tpe_id = "tpe(gamma=0.15, split=quantile, n_startup=20, prior_weight=1, forgetting=25, candidates=0, on_failure=skip)";
    let picked = dir.join("picked");
    run_ok(&[
        "report",
        out_two.to_str().unwrap(),
        "--out",
        picked.to_str().unwrap(),
        "--eaf-diff",
        &format!("{tpe_id},random-search"),
    ]);
    let md = std::fs::read_to_string(picked.join("report.md")).unwrap();
    assert!(
        md.contains("Where tpe attains more often than random-search"),
        "{md}"
    );
    for (bad, wanted) in [
        (
            "nope,tpe",
            "names 'nope', which is no policy of these results; they are: ",
        ),
        ("tpe", "give two policies separated by a comma"),
        ("tpe,tpe", "names one policy twice"),
    ] {
        let err = run_fails(
            &[
                "report",
                out_two.to_str().unwrap(),
                "--out",
                dir.join("bad").to_str().unwrap(),
                "--eaf-diff",
                bad,
            ],
            1,
        );
        assert!(err.contains(wanted), "{bad}: {err}");
    }

    // Another set of objectives, or one objective, is not ranked with these.
    let three = experiment(
        &dir,
        "three",
        "objectives = [\"val_acc\", \"latency\", \"model_size\"]",
        "[[policies]]\nfamily = \"random-search\"\n",
    );
    let one = experiment(
        &dir,
        "one",
        "",
        "[[policies]]\nfamily = \"tpe\"\ngamma = 0.3\n",
    );
    for (exp, wanted) in [
        (three, "objectives val_acc x latency x model_size"),
        (one, "measures one objective"),
    ] {
        let out = dir.join(exp.file_stem().unwrap());
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
        if !o.status.success() {
            panic!("{}", String::from_utf8_lossy(&o.stderr));
        }
        let err = run_fails(
            &[
                "report",
                out.to_str().unwrap(),
                out_two.to_str().unwrap(),
                "--out",
                dir.join("together").to_str().unwrap(),
            ],
            1,
        );
        assert!(
            err.contains(wanted)
                && err.contains("folders ranked together need the same objectives"),
            "{err}"
        );
    }
}

/// The README's experiment of several objectives is `experiments/nasbench201-mo.toml`, word for
/// word, and runs as written.
#[test]
fn the_readme_experiment_is_the_bundled_file_and_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = &readme[readme.find("## Several objectives\n").unwrap()..];
    let start = section.find("```toml\n").unwrap() + "```toml\n".len();
    let snippet = &section[start..start + section[start..].find("```\n").unwrap()];
    let file = root().join("experiments/nasbench201-mo.toml");
    assert_eq!(snippet, std::fs::read_to_string(&file).unwrap());
    let out = scratch("objectives-readme").join("out");
    let o = run_ok(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Mean rank of the hypervolume regret") && text.contains("random-search"),
        "{text}"
    );
    let (names, _, tasks) = lock_objectives(&out);
    assert_eq!((names.len(), tasks.len()), (2, 6));
}

/// `run` of `exp` into `out` at `threads`, quietly; its runs.parquet.
fn run_at(exp: &Path, out: &Path, threads: &str) -> DataFrame {
    run_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        threads,
        "--quiet",
    ]);
    read(&out.join("runs.parquet"))
}

/// An experiment of one objective with `policies` is refused with `words`.
fn refused_with_one_objective(dir: &Path, name: &str, policies: &str, words: &str) {
    let one = experiment(dir, name, "", policies);
    let err = run_fails(
        &[
            "run",
            one.to_str().unwrap(),
            "--out",
            dir.join(name).to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains(words), "{err}");
}

/// ParEGO needs several objectives, runs on several workers, and gives the same cells when run
/// again; its cells each evaluate the budget's 40 configurations.
#[test]
fn parego_scalarises_several_objectives_on_any_workers_and_refuses_one() {
    let dir = scratch("objectives-parego");
    let policies = "[[policies]]\nfamily = \"parego\"\n[[policies]]\nfamily = \"parego\"\nmodel = \"smac\"\nn_startup = 5\n";
    for workers in [1, 3] {
        let exp = experiment(
            &dir,
            &format!("parego-{workers}"),
            &format!("objectives = [\"val_acc\", \"latency\"]\nworkers = {workers}"),
            policies,
        );
        let ra = run_at(&exp, &dir.join(format!("a{workers}")), "2");
        let rb = run_at(&exp, &dir.join(format!("b{workers}")), "2");
        assert_eq!(f64s(&ra, "hv_regret"), f64s(&rb, "hv_regret"));
        assert_eq!(u64s(&ra, "configs_drawn"), vec![40; 16]);
        let regret = f64s(&ra, "hv_regret");
        assert!(regret.iter().all(|r| (0.0..1.0).contains(r)), "{regret:?}");
    }
    refused_with_one_objective(
        &dir,
        "parego-one",
        policies,
        "parego scalarises several objectives, but this experiment measures one",
    );
}

/// NSGA-II: generation 0 draws `population` configurations at random (with several workers,
/// those proposed before `population` have finished too), every later evaluation is a child placed
/// in the pool; identical on a rerun and at any `--threads`; with one objective it runs on the
/// pool's score.
#[test]
fn nsga2_draws_one_generation_then_breeds_on_any_workers_and_threads() {
    let dir = scratch("objectives-nsga2");
    let policies = "[[policies]]\nfamily = \"nsga2\"\npopulation = 8\n[[policies]]\nfamily = \"nsga2\"\npopulation = 6\ntournament = \"crowded\"\nmutation_prob = 0.5\n";
    for workers in [1, 3] {
        let exp = experiment(
            &dir,
            &format!("nsga2-{workers}"),
            &format!("objectives = [\"val_acc\", \"latency\"]\nworkers = {workers}"),
            policies,
        );
        let mut regrets = Vec::new();
        for (out, threads) in [("a", "1"), ("b", "2"), ("c", "2")] {
            let runs = run_at(&exp, &dir.join(format!("{out}{workers}")), threads);
            assert_eq!(u64s(&runs, "configs_drawn"), vec![40; 16]);
            let stats = strs(&runs, "policy_stats");
            let params = strs(&runs, "params");
            for (s, p) in stats.iter().zip(&params) {
                let s: serde_json::Value = serde_json::from_str(s).unwrap();
                let population = if p.contains("\"population\":8") { 8 } else { 6 };
                let (draws, children) = (
                    s["draws"].as_u64().unwrap(),
                    s["children"].as_u64().unwrap(),
                );
                assert_eq!(draws + children, 40, "{s}");
                if workers == 1 {
                    assert_eq!(draws, population, "{s}");
                } else {
                    assert!(
                        (population..population + workers as u64).contains(&draws),
                        "{s}"
                    );
                }
                assert!(s["snapped"].as_u64().unwrap() <= children, "{s}");
            }
            regrets.push(f64s(&runs, "hv_regret"));
        }
        assert_eq!(regrets[0], regrets[1], "one and two threads");
        assert_eq!(regrets[1], regrets[2], "a rerun");
        assert!(
            regrets[0].iter().all(|r| (0.0..1.0).contains(r)),
            "{regrets:?}"
        );
    }
    let one = experiment(&dir, "nsga2-one", "", policies);
    let runs = run_at(&one, &dir.join("one"), "1");
    assert_eq!(u64s(&runs, "configs_drawn"), vec![40; 16]);
}

/// MO-TPE: every cell evaluates its budget of distinct configurations on 1 and 3 workers, the
/// same at one and two threads, ahead of random search on both tasks; one objective is refused.
#[test]
fn mo_tpe_runs_on_any_workers_and_threads_and_refuses_one_objective() {
    let dir = scratch("objectives-mo-tpe");
    let policies = "[[policies]]\nfamily = \"mo-tpe\"\n[[policies]]\nfamily = \"random-search\"\n";
    for workers in [1, 3] {
        let exp = experiment(
            &dir,
            &format!("mo-tpe-{workers}"),
            &format!("objectives = [\"val_acc\", \"latency\"]\nworkers = {workers}"),
            policies,
        );
        let mut regrets = Vec::new();
        for (out, threads) in [("a", "1"), ("b", "2")] {
            let runs = run_at(&exp, &dir.join(format!("{out}{workers}")), threads);
            assert_eq!(u64s(&runs, "configs_drawn"), vec![40; 16]);
            regrets.push((strs(&runs, "policy"), f64s(&runs, "hv_regret")));
        }
        assert_eq!(regrets[0], regrets[1], "one and two threads");
        let (policy, regret) = &regrets[0];
        let mean = |p: &str| {
            let v: Vec<f64> = policy
                .iter()
                .zip(regret)
                .filter(|(q, _)| q.starts_with(p))
                .map(|x| *x.1)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        assert!(
            mean("mo-tpe") < mean("random-search"),
            "{workers} workers: mo-tpe {} against random search {}",
            mean("mo-tpe"),
            mean("random-search")
        );
    }
    refused_with_one_objective(
        &dir,
        "mo-tpe-one",
        policies,
        "mo-tpe splits by several objectives, but this experiment measures one",
    );
}

/// `trajectories = "incumbent-changes"` keeps every step after which the archive's hypervolume
/// regret changed, so the anytime regret read from the kept rows is the full run's.
#[test]
fn incumbent_changes_keep_every_change_of_the_hypervolume_regret() {
    let dir = scratch("objectives-changes");
    let world = "objectives = [\"val_acc\", \"latency\"]\nworkers = 2";
    let full = experiment(&dir, "full", world, POLICIES);
    let text = std::fs::read_to_string(&full).unwrap();
    let kept = dir.join("kept.toml");
    std::fs::write(
        &kept,
        text.replace(
            "name = \"full\"",
            "name = \"kept\"\ntrajectories = \"incumbent-changes\"",
        ),
    )
    .unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    run_quiet(&full, &a);
    run_quiet(&kept, &b);
    let (ta, tb) = (
        read(&a.join("trajectories.parquet")),
        read(&b.join("trajectories.parquet")),
    );
    assert!(tb.height() < ta.height());
    let per_cell = |t: &DataFrame| -> BTreeMap<u64, Vec<f64>> {
        let mut m: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for (c, h) in u64s(t, "cell").into_iter().zip(f64s(t, "hv_regret")) {
            let v = m.entry(c).or_default();
            if v.last() != Some(&h) {
                v.push(h);
            }
        }
        m
    };
    assert_eq!(per_cell(&ta), per_cell(&tb));
}

/// `show` draws an experiment of several objectives' cell with a second panel: the archive's
/// hypervolume regret after each decision, the trajectory's own values (a step curve).
#[test]
fn show_draws_a_cells_hypervolume_regret_beside_its_scores() {
    let dir = scratch("objectives-show");
    // Run an experiment of one random-search policy with `world`, show its cell 0: the results
    // folder and the figure's CSV.
    let shown = |name: &str, world: &str| -> (PathBuf, String) {
        let exp = experiment(
            &dir,
            name,
            world,
            "[[policies]]\nfamily = \"random-search\"\n",
        );
        let (out, figs) = (
            dir.join(format!("{name}-out")),
            dir.join(format!("{name}-figs")),
        );
        let (o, f) = (out.to_str().unwrap(), figs.to_str().unwrap());
        run_ok(&["run", exp.to_str().unwrap(), "--out", o, "--quiet"]);
        run_ok(&["show", o, "--cell", "0", "--out", f]);
        (
            out,
            std::fs::read_to_string(figs.join("cell-0.csv")).unwrap(),
        )
    };
    let (out, csv) = shown("show", "objectives = [\"val_acc\", \"latency\"]");
    let traj = read(&out.join("trajectories.parquet"));
    let cells = u64s(&traj, "cell");
    let (time, hv) = (f64s(&traj, "time"), f64s(&traj, "hv_regret"));
    let want: Vec<(f64, f64)> = (0..cells.len())
        .filter(|&i| cells[i] == 0 && hv[i].is_finite())
        .map(|i| (time[i], hv[i]))
        .collect();
    assert!(!want.is_empty());
    let drawn: Vec<(f64, f64)> = csv
        .lines()
        .filter(|l| l.contains(",hypervolume regret,"))
        .map(|l| {
            let f: Vec<&str> = l.rsplitn(3, ',').collect();
            (f[1].parse().unwrap(), f[0].parse().unwrap())
        })
        .collect();
    // The step curve holds each value until the next decision: its corners are the values.
    let corners: Vec<(f64, f64)> = drawn.iter().step_by(2).copied().collect();
    assert_eq!(corners, want, "{csv}");
    // An experiment of one objective has no such panel.
    let (_, csv1) = shown("single", "");
    assert!(!csv1.contains("hypervolume regret") && csv1.contains("incumbent"));
}

/// `reproduce mo-tpe`, trimmed to 30 evaluations and 2 seeds: both experiments run, the claim is
/// tested over the 7 datasets in one family of three (Holm), and the per-dataset table holds every
/// (dataset, policy) with its 2 cells; the table's scores are the runs' final hypervolume regrets.
#[test]
fn reproduce_mo_tpe_tests_the_claim_over_seven_datasets() {
    let out = scratch("objectives-reproduce-mo-tpe");
    let opts = common::trimmed_reproduction(
        &out,
        &[
            ("mo-tpe-nasbench201.toml", "[30]"),
            ("mo-tpe-fcnet.toml", "[30]"),
        ],
        2,
    );
    banditbench::reproduce::mo_tpe::reproduce(&opts).unwrap();
    let dir = out.join("mo-tpe");
    let claim = std::fs::read_to_string(dir.join("claim.md")).unwrap();
    for part in ["NSGA-II's", "ParEGO's", "random search's"] {
        assert!(
            claim.contains(&format!("MO-TPE's hypervolume regret is lower than {part}")),
            "{claim}"
        );
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(readme.contains("7 dataset units"), "{readme}");
    let csv = std::fs::read_to_string(dir.join("final.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 7 * 4, "{csv}");
    let runs = read(&out.join("mo-tpe-fcnet/runs.parquet"));
    let (ds, pol, regret) = (
        strs(&runs, "dataset"),
        strs(&runs, "policy"),
        f64s(&runs, "hv_regret"),
    );
    for row in rows
        .iter()
        .filter(|r| r.starts_with("naval_propulsion,mo-tpe,"))
    {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[2], "2");
        let mine: Vec<f64> = (0..ds.len())
            .filter(|&i| ds[i] == "naval_propulsion" && pol[i].starts_with("mo-tpe"))
            .map(|i| regret[i])
            .collect();
        let mean = mine.iter().sum::<f64>() / 2.0;
        assert!(
            (f[3].parse::<f64>().unwrap() - mean).abs() < 1e-12,
            "{row} vs {mine:?}"
        );
    }
}

/// The evaluations of sklearn-random's `glass/0` for `learners`, each `(learner index, seq,
/// elapsed_s, accuracy, cost_s, ok)`, in the learners' order then `seq`.
fn glass_evaluations(learners: &[&str]) -> Vec<(usize, i64, f64, f64, f64, bool)> {
    let df = read(&root().join("traces/sklearn-random/evaluations.parquet"));
    let (ds, lr, st) = (
        strs(&df, "dataset"),
        strs(&df, "learner"),
        strs(&df, "status"),
    );
    let run = df.column("run").unwrap().cast(&DataType::Int64).unwrap();
    let seq = df.column("seq").unwrap().cast(&DataType::Int64).unwrap();
    let (run, seq) = (run.i64().unwrap(), seq.i64().unwrap());
    let (el, sc, co) = (
        f64s(&df, "elapsed_s"),
        f64s(&df, "score"),
        f64s(&df, "cost_s"),
    );
    let mut out = Vec::new();
    for i in 0..df.height() {
        if ds[i] != "glass" || run.get(i) != Some(0) {
            continue;
        }
        if let Some(l) = learners.iter().position(|&l| l == lr[i]) {
            out.push((l, seq.get(i).unwrap(), el[i], sc[i], co[i], st[i] == "ok"));
        }
    }
    out.sort_by_key(|e| (e.0, e.1));
    out
}

/// Learner-level worlds of several objectives, on sklearn-random's trace set (format 1.1:
/// accuracy x train_time): round-robin with the recorded order and failures that cost their pull
/// (pull-count), or a fixed slice (time-sliced), reveals evaluations this test knows from the
/// evaluations file alone. It recomputes the task's true front and nadir reference point from
/// every evaluation of the kept learners, and every step's hypervolume regret from the
/// evaluations revealed so far (each hypervolume from scratch), and requires the results' own.
#[test]
fn learner_level_worlds_archive_the_evaluations_their_pulls_reveal() {
    let dir = scratch("objectives-traces");
    // qda fails on glass (all 200 evaluations): its evaluations are revealed, never archived.
    let learners = ["decision-tree", "knn", "qda", "sgd"];
    let evals = glass_evaluations(&learners);
    assert!(evals.iter().any(|e| !e.5), "qda records failures on glass");
    // Minimised points: (-accuracy, cost_s).
    let ok: Vec<[f64; 2]> = evals.iter().filter(|e| e.5).map(|e| [-e.3, e.4]).collect();
    let flat: Vec<f64> = ok.iter().flatten().copied().collect();
    let front: Vec<usize> = nondominated(&flat, 2);
    let fold =
        |f: fn(f64, f64) -> f64, init: f64, k: usize| front.iter().map(|&i| ok[i][k]).fold(init, f);
    let ideal = [
        fold(f64::min, f64::INFINITY, 0),
        fold(f64::min, f64::INFINITY, 1),
    ];
    let nadir = [
        fold(f64::max, f64::NEG_INFINITY, 0),
        fold(f64::max, f64::NEG_INFINITY, 1),
    ];
    let reference = [0, 1].map(|k| nadir[k] + 0.1 * (nadir[k] - ideal[k]));
    let norm = |p: &[f64; 2]| -> [f64; 2] {
        [0, 1].map(|k| (p[k] - ideal[k]) / (reference[k] - ideal[k]))
    };
    let front_n: Vec<f64> = front.iter().flat_map(|&i| norm(&ok[i])).collect();
    let true_hv = hypervolume(&front_n, &[1.0, 1.0]);
    let regret_of = |revealed: &[usize]| -> f64 {
        let pts: Vec<f64> = revealed
            .iter()
            .filter(|&&i| evals[i].5)
            .flat_map(|&i| norm(&[-evals[i].3, evals[i].4]))
            .collect();
        if pts.is_empty() {
            return 1.0;
        }
        let kept = nondominated(&pts, 2);
        let f: Vec<f64> = kept
            .iter()
            .flat_map(|&i| pts[2 * i..2 * i + 2].to_vec())
            .collect();
        1.0 - hypervolume(&f, &[1.0, 1.0]) / true_hv
    };
    let head = format!(
        "traces = \"{}\"\nseed = 5\nrepetitions = 1\ntrajectories = \"every-decision\"\n[tasks]\ndatasets = [\"glass\"]\nlearners = {learners:?}\n",
        root().join("traces/sklearn-random").display()
    );
    let worlds = [
        (
            "pull-count",
            "kind = \"pull-count\"\nbudget_unit = \"pulls\"\nbudgets = [400]\norder = \"recorded\"\nfailures_consume_budget = true",
        ),
        (
            "time-sliced",
            "kind = \"time-sliced\"\nbudget_unit = \"seconds\"\nbudgets = [6.0]\nslice = 0.25",
        ),
    ];
    for (world, keys) in worlds {
        let exp = dir.join(format!("{world}.toml"));
        std::fs::write(
            &exp,
            format!(
                "name = \"mo-{world}\"\n{head}[world]\n{keys}\nobjectives = [\"accuracy\", \"train_time\"]\n[[policies]]\nfamily = \"round-robin\"\n"
            ),
        )
        .unwrap();
        let out = dir.join(world);
        run_quiet(&exp, &out);
        // The lock file's reference and ideal points, in the recorded orientation.
        let (names, directions, tasks) = lock_objectives(&out);
        assert_eq!(names, ["accuracy", "train_time"]);
        assert_eq!(directions, ["maximize", "minimize"]);
        let (lock_ref, lock_ideal, n_front, lock_hv) = &tasks["glass/0"];
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1e-300);
        assert!(
            close(lock_ref[0], -reference[0]) && close(lock_ref[1], reference[1]),
            "{lock_ref:?} vs {reference:?}"
        );
        assert!(
            close(lock_ideal[0], -ideal[0]) && close(lock_ideal[1], ideal[1]),
            "{lock_ideal:?}"
        );
        assert_eq!(*n_front, front.len());
        assert!(close(*lock_hv, true_hv), "{lock_hv} vs {true_hv}");
        // Every step: round-robin pulls arm k % 4 at step k.
        let traj = read(&out.join("trajectories.parquet"));
        let hv = f64s(&traj, "hv_regret");
        assert!(hv.len() >= 16, "{} steps", hv.len());
        let mut pulls = [0usize; 4];
        let mut revealed: Vec<usize> = Vec::new();
        for (step, &got) in hv.iter().enumerate() {
            let arm = step % 4;
            pulls[arm] += 1;
            let of_arm = (0..evals.len()).filter(|&i| evals[i].0 == arm);
            let new: Vec<usize> = match world {
                // The pull's evaluation: seq pulls - 1 of the arm.
                "pull-count" => of_arm.skip(pulls[arm] - 1).take(1).collect(),
                // Every evaluation finished by the arm's clock that the last pull did not reveal.
                _ => {
                    let (lo, hi) = ((pulls[arm] - 1) as f64 * 0.25, pulls[arm] as f64 * 0.25);
                    of_arm
                        .filter(|&i| {
                            evals[i].2 > lo * (1.0 + 1e-9) && evals[i].2 <= hi * (1.0 + 1e-9)
                        })
                        .collect()
                }
            };
            revealed.extend(new);
            let want = regret_of(&revealed);
            assert!(
                (got - want).abs() <= 1e-12,
                "{world}, step {step}: hv_regret {got}, from scratch {want} ({} revealed)",
                revealed.len()
            );
        }
        // The archive grew step by step (the check compares more than a constant).
        let mut levels = hv.clone();
        levels.dedup();
        assert!(levels.len() >= 4, "{world}: hv_regret took {levels:?}");
        // Something was archived, and the final indicators are the last step's.
        let runs = read(&out.join("runs.parquet"));
        let final_regret = f64s(&runs, "hv_regret")[0];
        assert!(final_regret < 1.0, "{world}: nothing archived");
        assert_eq!(final_regret, *hv.last().unwrap());
        assert!(u64s(&runs, "front_size")[0] >= 1);
    }
    // The trace set's joint pool (the pool world on a trace set) carries the objectives read
    // from score and cost_s. Its points are its distinct configurations (a configuration that
    // random search drew twice is one, with its first evaluation) in float32, so its front
    // need not be the learner-level world's; it is measured by the same rules.
    let exp = dir.join("joint.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"mo-joint\"\n{head}[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [20]\nobjectives = [\"accuracy\", \"train_time\"]\n[[policies]]\nfamily = \"random-search\"\n"
        ),
    )
    .unwrap();
    let out = dir.join("joint");
    run_quiet(&exp, &out);
    let (names, _, tasks) = lock_objectives(&out);
    assert_eq!(names, ["accuracy", "train_time"]);
    assert!(tasks["glass/0/all"].2 >= 1);
    let r = f64s(&read(&out.join("runs.parquet")), "hv_regret")[0];
    assert!((0.0..1.0).contains(&r), "{r}");
}

/// A trace set's `[[objectives]]` (format 1.1) is checked like a pool's, and its values row by
/// row: each bad manifest or file is refused by `traces validate` naming the key, entry, column
/// or row and what to do; an empty value is infeasible, not an error; and an experiment run on a
/// trace set with a NaN objective never archives that evaluation.
#[test]
fn a_trace_sets_objectives_are_checked_by_key_and_row() {
    let objectives = "\n[[objectives]]\nname = \"accuracy\"\ndirection = \"maximize\"\n[[objectives]]\nname = \"size\"\ndirection = \"minimize\"\n";
    let v11 = |m: &str| {
        m.replace("banditbench-traces/1\"", "banditbench-traces/1.1\"")
            .replace("\n[provenance]", &format!("{objectives}\n[provenance]"))
    };
    // The column `size`, one value per row: row 2 (line 3) as `x`.
    let with_size = |csv: &str, x: &str| -> String {
        csv.lines()
            .enumerate()
            .map(|(i, l)| match i {
                0 => format!("{l},size"),
                2 => format!("{l},{x}"),
                _ => format!("{l},{}", i),
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let validate = |dir: &Path| -> String {
        let out = bin()
            .args(["traces", "validate", dir.to_str().unwrap()])
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    type Edit<'a> = Box<dyn Fn(&str) -> String + 'a>;
    let cases: [(&str, Edit, Edit, &str); 6] = [
        (
            "format 1",
            Box::new(|c: &str| with_size(c, "1")),
            Box::new(|m: &str| m.replace("\n[provenance]", &format!("{objectives}\n[provenance]"))),
            "[[objectives]] needs format = \"banditbench-traces/1.1\"",
        ),
        (
            "no column",
            Box::new(|c: &str| c.to_string()),
            Box::new(v11),
            "missing column 'size', which traceset.toml's [[objectives]] reads",
        ),
        (
            "infinite",
            Box::new(|c: &str| with_size(c, "inf")),
            Box::new(v11),
            "row 2 (line 3), column 'size': inf is infinite",
        ),
        (
            "text",
            Box::new(|c: &str| with_size(c, "big")),
            Box::new(v11),
            "column 'size': 'big' is not a number",
        ),
        (
            "cumulative",
            Box::new(|c: &str| with_size(c, "1")),
            Box::new(|m: &str| {
                v11(m).replace(
                    "name = \"size\"\ndirection = \"minimize\"",
                    "name = \"size\"\ndirection = \"minimize\"\ncumulative = true",
                )
            }),
            "unknown key 'cumulative'; an objective has name, direction, column",
        ),
        (
            "a reserved name",
            Box::new(|c: &str| with_size(c, "1")),
            Box::new(|m: &str| v11(m).replace("name = \"size\"", "name = \"elapsed_s\"")),
            "'elapsed_s' is a column the evaluations already have",
        ),
    ];
    for (what, csv, manifest, wanted) in cases {
        let dir = common::tiny_variant("objectives-trace-bad", &*csv, &*manifest);
        let text = validate(&dir);
        assert!(text.contains(wanted), "{what}: {text}");
    }
    // An empty value is infeasible: the set validates, and a run never archives that row. Row 2
    // (d1, a, accuracy 0.60) is dominated by row 3 (0.62, size 3) once its size is 1e9, so a
    // run where it is empty must measure the same archives as one where it is 1e9; had the
    // empty value entered the archive as anything finite below 3, the fronts would differ.
    let measure = |x: &str| -> Vec<Vec<f64>> {
        let dir = common::tiny_variant("objectives-trace-nan", |c| with_size(c, x), v11);
        let text = validate(&dir);
        assert!(!text.to_lowercase().contains("error"), "{text}");
        let exp = dir.join("mo.toml");
        std::fs::write(
            &exp,
            format!(
                "name = \"mo-tiny\"\ntraces = \"{}\"\nseed = 1\nrepetitions = 3\n[world]\nkind = \"pull-count\"\nbudgets = [4, 30]\nobjectives = [\"accuracy\", \"size\"]\n[[policies]]\nfamily = \"round-robin\"\n[[policies]]\nfamily = \"ucb1\"\n",
                dir.display()
            ),
        )
        .unwrap();
        let out = dir.join("out");
        run_quiet(&exp, &out);
        let runs = read(&out.join("runs.parquet"));
        ["hv_regret", "igd_plus", "epsilon_additive", "front_size"]
            .iter()
            .map(|c| f64s(&runs, c))
            .collect()
    };
    let (empty, dominated, better) = (measure(""), measure("1e9"), measure("0"));
    assert_eq!(empty, dominated);
    // And the check can fail: a size of 0 there puts row 2 on d1's front.
    assert_ne!(empty, better);
}

/// `[world] score` makes one of the objectives what single-objective policies optimise and the
/// incumbent follows, in the learner-level and pool worlds, while the archives measure every
/// objective as before: with decisions that ignore rewards (round-robin, random search) the
/// archives are identical with and without it, and the incumbent is the best revealed value of
/// the named objective, in its direction. A score that is not one of the objectives, or given
/// without them, is refused by key.
#[test]
fn world_score_names_the_objective_single_objective_policies_optimise() {
    let dir = scratch("objectives-score");
    let run = |name: &str, body: &str| -> DataFrame {
        let exp = dir.join(format!("{name}.toml"));
        std::fs::write(
            &exp,
            format!("name = \"{name}\"\nseed = 9\nrepetitions = 2\n{body}"),
        )
        .unwrap();
        let out = dir.join(name);
        run_quiet(&exp, &out);
        read(&out.join("runs.parquet"))
    };
    // Learner level: 40 round-robin pulls of 4 learners in recorded order = 10 evaluations each.
    let learners = ["decision-tree", "knn", "qda", "sgd"];
    let traces = format!(
        "traces = \"{}\"\n[tasks]\ndatasets = [\"glass\"]\nlearners = {learners:?}\n[world]\nkind = \"pull-count\"\nbudgets = [40]\norder = \"recorded\"\nfailures_consume_budget = true\nobjectives = [\"accuracy\", \"train_time\"]\n",
        root().join("traces/sklearn-random").display()
    );
    let policy = "[[policies]]\nfamily = \"round-robin\"\n";
    let plain = run("score-plain", &format!("{traces}{policy}"));
    let timed = run(
        "score-time",
        &format!("{traces}score = \"train_time\"\n{policy}"),
    );
    for c in ["hv_regret", "igd_plus", "front_size"] {
        assert_eq!(f64s(&plain, c), f64s(&timed, c), "{c}");
    }
    let revealed: Vec<_> = glass_evaluations(&learners)
        .into_iter()
        .filter(|e| e.1 < 10 && e.5)
        .collect();
    let best_acc = revealed
        .iter()
        .map(|e| e.3)
        .fold(f64::NEG_INFINITY, f64::max);
    let least_time = revealed.iter().map(|e| e.4).fold(f64::INFINITY, f64::min);
    assert!(f64s(&plain, "best_score").iter().all(|&b| b == best_acc));
    assert!(
        f64s(&timed, "best_score").iter().all(|&b| b == least_time),
        "{least_time}"
    );
    assert!(strs(&timed, "direction").iter().all(|d| d == "minimize"));
    // Pool world: random search's draws ignore the scores.
    let pool_dir = root().join("traces/nasbench201");
    let pool_exp = format!(
        "traces = \"{}\"\n[tasks]\ndatasets = [\"cifar10\"]\nruns = [0]\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [30]\nobjectives = [\"val_acc\", \"latency\"]\n",
        pool_dir.display()
    );
    let policy = "[[policies]]\nfamily = \"random-search\"\n";
    let plain = run("score-pool-plain", &format!("{pool_exp}{policy}"));
    let fast = run(
        "score-pool-latency",
        &format!("{pool_exp}score = \"latency\"\n{policy}"),
    );
    for c in ["hv_regret", "igd_plus", "front_size"] {
        assert_eq!(f64s(&plain, c), f64s(&fast, c), "{c}");
    }
    let pool = load_pool(&pool_dir, true).unwrap();
    let t = task_index(&pool, "cifar10", 0);
    let lat = pool
        .manifest
        .objectives
        .iter()
        .position(|o| o.name == "latency")
        .unwrap();
    let n_extra = pool.manifest.extra_columns().len();
    let traj = read(&dir.join("score-pool-latency/trajectories.parquet"));
    let (cells, configs) = (u64s(&traj, "cell"), u64s(&traj, "config"));
    for (cell, best) in u64s(&fast, "cell").iter().zip(f64s(&fast, "best_score")) {
        let least = (0..cells.len())
            .filter(|&i| cells[i] == *cell)
            .map(|i| {
                pool.tasks[t].curves[configs[i] as usize].objective(
                    &pool.manifest.objectives[lat],
                    n_extra,
                    0,
                )
            })
            .fold(f64::INFINITY, f64::min);
        assert_eq!(best as f32, least as f32, "cell {cell}");
    }
    // Refused by key.
    for (body, wanted) in [
        (
            format!("{traces}score = \"latency\"\n{policy}"),
            "key 'world.score' names 'latency', which is not one of world.objectives (accuracy, train_time)",
        ),
        (
            format!(
                "{}{policy}",
                traces.replace(
                    "objectives = [\"accuracy\", \"train_time\"]\n",
                    "score = \"accuracy\"\n"
                )
            ),
            "'world.score' is given without 'world.objectives'",
        ),
    ] {
        let exp = dir.join("bad.toml");
        std::fs::write(&exp, format!("name = \"bad\"\nseed = 1\n{body}")).unwrap();
        let err = run_fails(
            &[
                "run",
                exp.to_str().unwrap(),
                "--out",
                dir.join("b").to_str().unwrap(),
            ],
            1,
        );
        assert!(err.contains(wanted), "{err}");
    }
}

/// `traces inspect` on a trace set of several objectives names each objective and, per task, the
/// feasible evaluations and the true front's size, the same front a run's lock file records.
#[test]
fn traces_inspect_names_each_tasks_true_front_as_the_run_measures_it() {
    let dir = scratch("objectives-inspect");
    let traces = root().join("traces/sklearn-random");
    let out = bin()
        .args(["traces", "inspect", traces.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("objectives: accuracy (maximize) x train_time (minimize)"),
        "{text}"
    );
    let exp = dir.join("fronts.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"fronts\"\ntraces = \"{}\"\nseed = 1\n[world]\nkind = \"pull-count\"\nbudgets = [13]\nobjectives = [\"accuracy\", \"train_time\"]\n[[policies]]\nfamily = \"round-robin\"\n",
            traces.display()
        ),
    )
    .unwrap();
    let res = dir.join("out");
    run_quiet(&exp, &res);
    let (_, _, tasks) = lock_objectives(&res);
    assert_eq!(tasks.len(), 12);
    for (task, (_, _, front, _)) in &tasks {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{task}:")))
            .unwrap_or_else(|| panic!("inspect names no {task}:\n{text}"));
        assert!(
            line.ends_with(&format!(", {front} on the front")),
            "{line} vs {front}"
        );
    }
}
