//! Configuration pools (format banditbench-pool/1): a tiny hand-made pool written here, read back,
//! and one broken copy per validation rule, each refused with the file, row or key named.

mod common;

use std::path::{Path, PathBuf};

use banditbench::trace::pool::{DimKind, load_pool, load_pool_selecting};
use common::{bin, scratch};
use polars::prelude::*;

const MANIFEST: &str = r#"format = "banditbench-pool/1"
name = "tiny-pool"
description = "hand-made: one learner, 2 x 2 grid, 3 units"
metric = "accuracy"
direction = "maximize"
units = 3
neighbours = "grid"
complete = true

[[learners]]
name = "net"
unit = "1 epoch"
[[learners.dims]]
name = "width"
kind = "ordinal"
values = ["8", "16"]
[[learners.dims]]
name = "act"
kind = "categorical"
values = ["relu", "tanh"]

[provenance]
source = "synthetic"
"#;

/// (dataset, run, config_id, unit, score, status) rows of a valid pool: two tasks, four
/// configurations, three units each; config 3 fails at unit 2 on task d/0.
fn rows() -> Vec<(&'static str, i64, i64, i64, f32, &'static str)> {
    let mut r = Vec::new();
    for (d, run) in [("d", 0), ("e", 0)] {
        for c in 0..4i64 {
            for u in 1..=3i64 {
                if d == "d" && c == 3 && u == 3 {
                    continue;
                }
                let failed = d == "d" && c == 3 && u == 2;
                let score = if failed {
                    f32::NAN
                } else {
                    0.5 + 0.1 * c as f32 + 0.01 * u as f32
                };
                r.push((d, run, c, u, score, if failed { "failed" } else { "ok" }));
            }
        }
    }
    r
}

fn write_parquet(mut df: DataFrame, path: &Path) {
    let f = std::fs::File::create(path).unwrap();
    ParquetWriter::new(f).finish(&mut df).unwrap();
}

fn write_pool(
    name: &str,
    manifest: &str,
    configs: DataFrame,
    curve_rows: &[(&str, i64, i64, i64, f32, &str)],
) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("pool.toml"), manifest).unwrap();
    write_parquet(configs, &dir.join("configs.parquet"));
    let n = curve_rows.len();
    let df = DataFrame::new_infer_height(vec![
        Column::new(
            "dataset".into(),
            curve_rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        Column::new(
            "run".into(),
            curve_rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        ),
        Column::new(
            "config_id".into(),
            curve_rows.iter().map(|r| r.2).collect::<Vec<_>>(),
        ),
        Column::new(
            "unit".into(),
            curve_rows.iter().map(|r| r.3).collect::<Vec<_>>(),
        ),
        Column::new(
            "score".into(),
            curve_rows.iter().map(|r| r.4).collect::<Vec<_>>(),
        ),
        Column::new(
            "test_score".into(),
            curve_rows.iter().map(|r| r.4 - 0.01).collect::<Vec<_>>(),
        ),
        Column::new("cost_s".into(), vec![0.5f32; n]),
        Column::new(
            "status".into(),
            curve_rows.iter().map(|r| r.5).collect::<Vec<_>>(),
        ),
    ])
    .unwrap();
    std::fs::create_dir_all(dir.join("curves")).unwrap();
    write_parquet(df, &dir.join("curves").join("part-0.parquet"));
    dir
}

fn configs(levels: &[&str]) -> DataFrame {
    let n = levels.len();
    DataFrame::new_infer_height(vec![
        Column::new("config_id".into(), (0..n as i64).collect::<Vec<_>>()),
        Column::new("learner".into(), vec!["net"; n]),
        Column::new("levels".into(), levels.to_vec()),
        Column::new("config".into(), vec!["{}"; n]),
    ])
    .unwrap()
}

const GRID: [&str; 4] = ["0,0", "0,1", "1,0", "1,1"];

#[test]
fn a_valid_pool_loads_with_its_curves_and_grid_neighbours() {
    let dir = write_pool("pool-ok", MANIFEST, configs(&GRID), &rows());
    let p = load_pool(&dir, false).unwrap();
    assert_eq!(p.tasks.len(), 2);
    assert_eq!(p.configs.len(), 4);
    assert_eq!(p.manifest.learners[0].dims[1].kind, DimKind::Categorical);
    // Config 3 on d/0: unit 1 ok, unit 2 failed, which ends the curve.
    let c = &p.tasks[0].curves[3];
    assert_eq!(c.len(), 2);
    assert!((c.score[0] - 0.81).abs() < 1e-6);
    assert!((c.cost_to(2) - 1.0).abs() < 1e-9);
    // (width 8, relu) neighbours: (8, tanh) and (16, relu).
    assert_eq!(p.neighbours[0], vec![1, 2]);
    assert_eq!(p.n_units_recorded(), 12 + 11);
    let out = bin()
        .args(["traces", "validate", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("configuration pool, 2 tasks, 4 configurations, 23 units")
    );
}

#[test]
fn a_pool_loaded_for_some_tasks_decodes_only_theirs_and_matches_the_full_load() {
    // The bundled sklearn-grid pool (real recorded curves, with learners' defaults): loaded for
    // two of its tasks, each kept task's curves, the configurations, the defaults and the
    // content hash equal the full load's, and every task is still listed.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/sklearn-grid");
    let full = load_pool(&dir, false).unwrap();
    assert!(full.tasks.len() > 10);
    let want = [
        (full.tasks[3].dataset.clone(), full.tasks[3].run),
        (full.tasks[7].dataset.clone(), full.tasks[7].run),
    ];
    let listed = std::cell::Cell::new(0);
    let select = |all: &[(String, i64)]| {
        listed.set(all.len());
        all.iter().filter(|t| want.contains(t)).cloned().collect()
    };
    let part = load_pool_selecting(&dir, false, Some(&select)).unwrap();
    assert_eq!(listed.get(), full.tasks.len());
    assert_eq!(part.all_tasks, full.all_tasks);
    assert_eq!(part.tasks.len(), 2);
    for (t, i) in part.tasks.iter().zip([3, 7]) {
        assert_eq!(
            (&t.dataset, t.run),
            (&full.tasks[i].dataset, full.tasks[i].run)
        );
        assert!(t.curves == full.tasks[i].curves, "task {i}'s curves differ");
    }
    assert_eq!(part.configs, full.configs);
    assert_eq!(part.defaults, full.defaults);
    assert_eq!(part.content_hash, full.content_hash);
    assert_eq!(part.missing_curves, 0);
}

fn refused(
    name: &str,
    manifest: &str,
    cfg: DataFrame,
    rows: &[(&str, i64, i64, i64, f32, &str)],
    want: &str,
) {
    let dir = write_pool(name, manifest, cfg, rows);
    let e = format!("{:#}", load_pool(&dir, false).unwrap_err());
    assert!(e.contains(want), "{name}: expected '{want}' in: {e}");
}

#[test]
fn each_broken_rule_is_refused_with_where_and_why() {
    let ok = rows();
    // A unit that follows a failed unit.
    let mut after_fail = ok.clone();
    after_fail.push(("d", 0, 3, 3, 0.9, "ok"));
    refused(
        "pool-after-fail",
        MANIFEST,
        configs(&GRID),
        &after_fail,
        "a failed or timed-out unit ends its curve",
    );
    // A gap in the units.
    let gap: Vec<_> = ok
        .iter()
        .filter(|r| !(r.0 == "e" && r.2 == 1 && r.3 == 2))
        .cloned()
        .collect();
    refused(
        "pool-gap",
        MANIFEST,
        configs(&GRID),
        &gap,
        "unit 2 is missing",
    );
    // A duplicate key.
    let mut dup = ok.clone();
    dup.push(("e", 0, 0, 1, 0.5, "ok"));
    refused(
        "pool-dup",
        MANIFEST,
        configs(&GRID),
        &dup,
        "unit 1 appears twice",
    );
    // A configuration the curves name but configs.parquet lacks.
    let mut stranger = ok.clone();
    stranger.push(("e", 0, 9, 1, 0.5, "ok"));
    refused(
        "pool-stranger",
        MANIFEST,
        configs(&GRID),
        &stranger,
        "config_id 9 is not in configs.parquet",
    );
    // A curve missing from a pool that says it is complete.
    let short: Vec<_> = ok
        .iter()
        .filter(|r| !(r.0 == "e" && r.2 == 2))
        .cloned()
        .collect();
    refused(
        "pool-short",
        MANIFEST,
        configs(&GRID),
        &short,
        "complete = true",
    );
    // Levels out of range, and two configurations with the same levels.
    refused(
        "pool-levels",
        MANIFEST,
        configs(&["0,0", "0,1", "1,0", "2,1"]),
        &ok,
        "level 2 of dimension 1 ('width') is out of range",
    );
    refused(
        "pool-twice",
        MANIFEST,
        configs(&["0,0", "0,1", "1,0", "1,0"]),
        &ok,
        "have the same learner and levels",
    );
    // An unknown manifest key; an incomplete pool without --allow-incomplete.
    refused(
        "pool-key",
        &format!("colour = 1\n{MANIFEST}"),
        configs(&GRID),
        &ok,
        "unknown key 'colour'",
    );
    let incomplete = MANIFEST.replace("complete = true", "complete = false");
    refused(
        "pool-incomplete",
        &incomplete,
        configs(&GRID),
        &short,
        "--allow-incomplete",
    );
    let dir = write_pool("pool-incomplete-ok", &incomplete, configs(&GRID), &short);
    assert_eq!(load_pool(&dir, true).unwrap().missing_curves, 1);
    // A fractional unit in a float column is refused with its row, not truncated, and
    // `traces validate` fails on it.
    let dir = write_pool("pool-fractional", MANIFEST, configs(&GRID), &ok);
    let curves = dir.join("curves").join("part-0.parquet");
    let mut df = read(&curves);
    let units: Vec<f64> = df
        .column("unit")
        .unwrap()
        .i64()
        .unwrap()
        .into_no_null_iter()
        .enumerate()
        .map(|(i, u)| if i == 4 { 1.5 } else { u as f64 })
        .collect();
    df.with_column(Column::new("unit".into(), units)).unwrap();
    write_parquet(df, &curves);
    let e = format!("{:#}", load_pool(&dir, false).unwrap_err());
    assert!(
        e.contains("part-0.parquet: row 5, column 'unit': 1.5 is not a whole number"),
        "{e}"
    );
    let out = bin()
        .args(["traces", "validate", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// A pool experiment on the tiny pool, written beside it.
fn pool_experiment(dir: &Path, world: &str, policies: &str) -> PathBuf {
    let exp = dir.join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"tiny-pool-exp\"\ntraces = \".\"\nseed = 3\nrepetitions = 2\n[world]\nkind = \"pool\"\n{world}\n{policies}"
        ),
    )
    .unwrap();
    exp
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

#[test]
fn a_pool_experiment_runs_stores_and_resumes_with_answers_by_hand() {
    let dir = write_pool("pool-exp", MANIFEST, configs(&GRID), &rows());
    let exp = pool_experiment(
        &dir,
        "budget_unit = \"evaluations\"\nbudgets = [4]",
        "[[policies]]\nfamily = \"random-search\"\n[[policies]]\nfamily = \"hyperband\"",
    );
    let out = dir.join("results");
    let args = [
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "1",
    ];
    let first = common::run_ok(&args);
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(
        text.contains("accuracy of the recommended configuration"),
        "{text}"
    );
    let runs = read(&out.join("runs.parquet"));
    // 2 tasks x 1 budget x 2 policies x 2 repetitions.
    assert_eq!(runs.height(), 8);
    let col = |n: &str| runs.column(n).unwrap().as_materialized_series().clone();
    let policy = col("policy");
    let dataset = col("dataset");
    let drawn = col("configs_drawn");
    let units = col("units_trained");
    let rec = col("recommended_config");
    let best = col("best_score");
    let test = col("best_test_score");
    let budget_abs = col("budget_abs");
    for i in 0..8 {
        // 4 evaluations of 3 units = 12 units.
        assert_eq!(budget_abs.f64().unwrap().get(i), Some(12.0));
        if policy.str().unwrap().get(i) != Some("random-search") {
            continue;
        }
        // Random search trains every configuration fully: 3 + 3 + 3 units, and config 3 on d
        // fails at its 2nd unit (counted), so 11 units on d and 12 on e; all 4 are drawn.
        let on_d = dataset.str().unwrap().get(i) == Some("d");
        assert_eq!(drawn.u64().unwrap().get(i), Some(4));
        assert_eq!(
            units.u64().unwrap().get(i),
            Some(if on_d { 11 } else { 12 })
        );
        // Best seen: config 3, at unit 1 on d (0.5 + 0.3 + 0.01) and unit 3 on e (0.83);
        // the test score is 0.01 lower.
        assert_eq!(rec.u32().unwrap().get(i), Some(3));
        let want = if on_d { 0.81 } else { 0.83 };
        assert!((best.f64().unwrap().get(i).unwrap() - want).abs() < 1e-6);
        assert!((test.f64().unwrap().get(i).unwrap() - (want - 0.01)).abs() < 1e-6);
    }
    // Trajectories: one row per decision, random search's first three are draw, pull, pull of
    // one configuration at units 1, 2, 3.
    let traj = read(&out.join("trajectories.parquet"));
    let decisions: u64 = col("decisions").u64().unwrap().iter().flatten().sum();
    assert_eq!(traj.height() as u64, decisions);
    let tcol = |n: &str| traj.column(n).unwrap().as_materialized_series().clone();
    let first_rs = (0..8)
        .find(|&i| policy.str().unwrap().get(i) == Some("random-search"))
        .unwrap();
    let cell = col("cell").u64().unwrap().get(first_rs).unwrap();
    let rows: Vec<usize> = (0..traj.height())
        .filter(|&r| tcol("cell").u64().unwrap().get(r) == Some(cell))
        .collect();
    let action = tcol("action");
    let actions: Vec<&str> = rows[..3]
        .iter()
        .map(|&r| action.str().unwrap().get(r).unwrap())
        .collect();
    assert_eq!(actions, ["draw", "pull", "pull"]);
    let fid: Vec<u32> = rows[..3]
        .iter()
        .map(|&r| tcol("fidelity").u32().unwrap().get(r).unwrap())
        .collect();
    assert_eq!(fid, [1, 2, 3]);
    assert_eq!(tcol("arm").dtype(), &DataType::UInt32);
    // A rerun resumes: nothing to run, files unchanged.
    let before = std::fs::read(out.join("runs.parquet")).unwrap();
    let again = common::run_ok(&args);
    assert!(String::from_utf8_lossy(&again.stderr).contains("ran 0 cells"));
    assert_eq!(std::fs::read(out.join("runs.parquet")).unwrap(), before);
    // The report reads pool results like any other.
    let rep = dir.join("report");
    common::run_ok(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(rep.join("report.md").is_file());
}

#[test]
fn pool_experiment_keys_are_checked_with_the_key_named() {
    let dir = write_pool("pool-exp-bad", MANIFEST, configs(&GRID), &rows());
    let bad = |world: &str, policies: &str, want: &str| {
        let exp = pool_experiment(&dir, world, policies);
        let out = bin()
            .args(["run", exp.to_str().unwrap(), "--out"])
            .arg(dir.join("r"))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && e.contains(want), "{want}: {e}");
    };
    let rs = "[[policies]]\nfamily = \"random-search\"";
    bad(
        "budgets = [4]\nincumbent = \"best\"",
        rs,
        "key 'world.incumbent' is 'best'; allowed: best-seen, last",
    );
    bad(
        "budgets = [4]\nslice = 1",
        rs,
        "key 'world.slice' applies only to the time-sliced world",
    );
    bad(
        "budgets = [4]\nper_learner = true",
        "[[policies]]\nfamily = \"ucb1\"",
        "policy 'ucb1' does not support the pool world",
    );
    bad("budgets = [2.5]", rs, "unit budgets are whole numbers");
    // Every [tasks] key that names something the pool lacks gets an error naming the key, the
    // value and what the pool has (a filter that selects nothing once said "the curves hold
    // no rows").
    let exp = pool_experiment(&dir, "budgets = [4]", rs);
    let text = std::fs::read_to_string(&exp).unwrap();
    for (i, (filter, want)) in [
        (
            "learners = [\"tree\"]",
            "key 'tasks.learners' names 'tree', which the pool tiny-pool does not have; it has: net",
        ),
        (
            "datasets = [\"nope\"]",
            "key 'tasks.datasets' names 'nope', which the pool in ",
        ),
        ("runs = [99]", "key 'tasks.runs' names '99', which the pool in "),
    ]
    .into_iter()
    .enumerate()
    {
        std::fs::write(
            &exp,
            text.replace("[world]", &format!("[tasks]\n{filter}\n[world]")),
        )
        .unwrap();
        let out = bin()
            .args(["run", exp.to_str().unwrap(), "--out"])
            .arg(dir.join(format!("r{}", i + 2)))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && e.contains(want), "{filter}: {e}");
        assert!(!e.contains("hold no rows"), "{filter}: {e}");
    }
}

#[test]
fn the_bundled_pools_validate_and_an_experiment_replays_on_hpobench() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hpo = root.join("traces/hpobench-mlp");
    let p = load_pool(&hpo, false).unwrap();
    // 4 datasets x 30 000 configurations x 5 seeds; the grid is 10 x 10 x 3 x 10 x 10.
    assert_eq!((p.tasks.len(), p.configs.len()), (4, 30_000));
    assert_eq!(p.n_units_recorded(), 600_000);
    // Levels (5, 5, 1, 5, 5), at no end of any dimension, have 2 neighbours per dimension; levels
    // (0, 0, 0, 0, 0) one per dimension.
    assert_eq!(
        p.neighbours[5 * 3000 + 5 * 300 + 100 + 5 * 10 + 5].len(),
        10
    );
    assert_eq!(p.neighbours[0].len(), 5);
    // sklearn-grid is complete: it validates without --allow-incomplete, every curve whole.
    let out = bin()
        .args(["traces", "validate"])
        .arg(root.join("traces/sklearn-grid"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(
            "18 tasks, 2500 configurations (+ 4 learners' defaults), 1216944 units recorded"
        ),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let dir = scratch("hpobench-exp");
    let exp = dir.join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"hpo\"\ntraces = \"{}\"\nseed = 1\n[tasks]\ndatasets = [\"car\"]\n[world]\nkind = \"pool\"\nbudgets = [40]\nrecommendation = \"mean-of-units\"\n[[policies]]\nfamily = \"d-ttts\"\n[[policies]]\nfamily = \"random-search\"",
            hpo.display()
        ),
    )
    .unwrap();
    let res = dir.join("r");
    common::run_ok(&["run", exp.to_str().unwrap(), "--out", res.to_str().unwrap()]);
    let runs = read(&res.join("runs.parquet"));
    assert_eq!(runs.height(), 2);
    let units = runs.column("units_trained").unwrap().u64().unwrap().clone();
    let drawn = runs.column("configs_drawn").unwrap().u64().unwrap().clone();
    // 40 units each; random search trains each configuration's 5 seeds: 8 configurations.
    assert_eq!(units.get(0), Some(40));
    assert_eq!(units.get(1), Some(40));
    assert_eq!(drawn.get(1), Some(8));
    // No test score ships with HPOBench: the column is null.
    assert_eq!(runs.column("best_test_score").unwrap().null_count(), 2);
}

#[test]
fn a_sharded_pool_experiment_merges_into_the_unsharded_results() {
    let dir = write_pool("pool-shards", MANIFEST, configs(&GRID), &rows());
    let exp = pool_experiment(
        &dir,
        "budget_unit = \"evaluations\"\nbudgets = [2, 4]",
        "[[policies]]\nfamily = \"random-search\"\n[[policies]]\nfamily = \"hyperband\"\n[[policies]]\nfamily = \"d-ttts\"",
    );
    let e = exp.to_str().unwrap();
    let whole = dir.join("whole");
    common::run_ok(&["run", e, "--out", whole.to_str().unwrap(), "--quiet"]);
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| {
            let d = dir.join(format!("shard{i}"));
            common::run_ok(&[
                "run",
                e,
                "--out",
                d.to_str().unwrap(),
                "--shard",
                &format!("{i}/3"),
                "--quiet",
            ]);
            d
        })
        .collect();
    let merged = dir.join("merged");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|d| d.to_str().unwrap()));
    args.extend(["--out", merged.to_str().unwrap()]);
    common::run_ok(&args);
    for f in [
        "runs.parquet",
        "trajectories.parquet",
        "experiment.lock.toml",
    ] {
        assert!(
            std::fs::read(whole.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "{f} differs"
        );
    }
    assert_eq!(read(&merged.join("runs.parquet")).height(), 2 * 2 * 3 * 2);
}

#[test]
fn reproduce_mutant_ucb_writes_both_tables_beside_the_papers() {
    use banditbench::reproduce::mutant_ucb;
    let out = scratch("reproduce-mutant-ucb");
    let opts = common::reproduce_options(&out);
    let files = mutant_ucb::reproduce(&opts).unwrap();
    let dir = out.join("mutant-ucb");
    for f in ["README.md", "table1.csv", "table2.csv", "claim.md"] {
        assert!(files.contains(&dir.join(f)), "{f} reported");
    }
    // The claim, what was found and a verdict, per experiment and score.
    let claim = std::fs::read_to_string(dir.join("claim.md")).unwrap();
    assert!(
        claim.contains("**The claim.** Brégère & Keisler 2024"),
        "{claim}"
    );
    assert_eq!(
        claim.matches("| **the whole claim** |").count(),
        3,
        "{claim}"
    );
    let md = std::fs::read_to_string(dir.join("README.md")).unwrap();
    // The paper's numbers sit beside ours.
    assert!(
        md.contains("| Mutant-UCB | 3399 · 79.5 | 3463 · 80.5 | 3471 · 92.4 |"),
        "{md}"
    );
    assert!(md.contains("| 0.05 | 97.2 |"), "{md}");
    // One family of 3 hypotheses at 6 dataset units, on validation and on test accuracy.
    assert_eq!(
        md.matches("one family of 3 hypotheses, exact Wilcoxon signed-rank at 6 dataset units")
            .count(),
        2
    );
    // Models tested (table1.csv, the mean per cell over all datasets): random search trains 50
    // full curves (T/N = 1350/27) and the EA 50 models; Mutant-UCB tests more than its K = 40.
    let csv = std::fs::read_to_string(dir.join("table1.csv")).unwrap();
    let models = |m: &str| -> f64 {
        csv.lines()
            .find(|l| l.starts_with(&format!("{m},")) && l.contains(",all,"))
            .and_then(|l| l.split(',').rev().nth(2))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    assert_eq!(models("random search"), 50.0);
    assert_eq!(models("evolutionary algorithm"), 50.0);
    assert!(models("Mutant-UCB") > 40.0);
    assert!(dir.join("mutant-ucb-table1/report.md").is_file());
}

/// `reproduce shang` end to end on trimmed copies of its two experiment files: the family test of
/// each pool and the timing table, measured on sklearn-grid, whose recorded defaults once made the
/// timing's one-learner pool index past its end.
#[test]
fn reproduce_shang_writes_the_family_tests_and_the_timing_table() {
    use banditbench::reproduce::shang;
    let out = scratch("reproduce-shang");
    let opts = common::trimmed_reproduction(
        &out,
        &[
            ("shang-sklearn-grid.toml", "[2]"),
            ("shang-hpobench.toml", "[10]"),
        ],
        1,
    );
    let files = shang::reproduce(&opts).unwrap();
    let dir = out.join("shang");
    for f in ["README.md", "timing.csv", "claim.md"] {
        assert!(files.contains(&dir.join(f)), "{f} reported");
    }
    let claim = std::fs::read_to_string(dir.join("claim.md")).unwrap();
    // sklearn-grid on validation and test, HPOBench on validation: 2 parts and a verdict each.
    assert_eq!(
        claim.matches("| better than random search |").count(),
        3,
        "{claim}"
    );
    assert_eq!(
        claim.matches("| **the whole claim** |").count(),
        3,
        "{claim}"
    );
    let md = std::fs::read_to_string(dir.join("README.md")).unwrap();
    // sklearn-grid: on validation and on test; HPOBench (no test scores): on validation only.
    assert_eq!(
        md.matches("D-TTTS (pseudo-arm) against each other policy")
            .count(),
        3,
        "{md}"
    );
    assert!(
        md.contains("### On test accuracy (the same recommended unit)"),
        "{md}"
    );
    assert!(
        md.contains("the claim rests on validation scores only"),
        "{md}"
    );
    assert!(md.contains("## Time per sampling step"), "{md}");
    let csv = std::fs::read_to_string(dir.join("timing.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    for r in rows {
        let secs: f64 = r.split(',').nth(1).unwrap().parse().unwrap();
        assert!(secs > 0.0 && secs < 1e-2, "{r}");
    }
    assert!(dir.join("shang-sklearn-grid/report.md").is_file());
    assert!(dir.join("shang-hpobench/report.md").is_file());
}

/// The joint (CASH) pool of a hand-written trace set: Ex-Def takes the defaults (0.75 and 0.65 on
/// dataset a, so 0.75), TPE and SMAC run, and a bad `space` description names the file and key.
#[test]
fn cash_optimisers_run_on_a_joint_pool_with_answers_by_hand() {
    let dir = scratch("cash-joint");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cash");
    let exp = dir.join("cash.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"cash\"\ntraces = \"{}\"\nseed = 1\nrepetitions = 2\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [3]\n[[policies]]\nfamily = \"ex-def\"\n[[policies]]\nfamily = \"tpe\"\nn_startup = 1\n[[policies]]\nfamily = \"smac\"\nn_init = 1\n",
            fixture.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    common::run_quiet(&exp, &out);
    let runs = read(&out.join("runs.parquet"));
    let fam = runs.column("policy_family").unwrap().str().unwrap().clone();
    let ds = runs.column("dataset").unwrap().str().unwrap().clone();
    let best = runs.column("best_score").unwrap().f64().unwrap().clone();
    let drawn = runs.column("configs_drawn").unwrap().u64().unwrap().clone();
    for i in 0..runs.height() {
        match (fam.get(i).unwrap(), ds.get(i).unwrap()) {
            // Ex-Def: the two defaults, then stop; a: max(0.75, 0.65), b: max(0.58, 0.40).
            ("ex-def", "a") => {
                assert_eq!((best.get(i), drawn.get(i)), (Some(0.75f32 as f64), Some(2)))
            }
            ("ex-def", "b") => {
                assert_eq!((best.get(i), drawn.get(i)), (Some(0.58f32 as f64), Some(2)))
            }
            // b has 2 open configurations: both are evaluated and the pool is exhausted.
            (_, "b") => assert_eq!((best.get(i), drawn.get(i)), (Some(0.55f32 as f64), Some(2))),
            // a has 5 open configurations (one failed): 3 evaluations.
            (_, "a") => assert_eq!(drawn.get(i), Some(3)),
            other => panic!("unexpected cell {other:?}"),
        }
    }
    let traj = read(&out.join("trajectories.parquet"));
    let action = traj.column("action").unwrap().str().unwrap().clone();
    let actions: Vec<&str> = (0..action.len()).filter_map(|i| action.get(i)).collect();
    assert!(actions.contains(&"choose") && actions.contains(&"draw"));

    // A space description the joint pool cannot read is named with its file and key.
    let bad = dir.join("bad-traces");
    std::fs::create_dir_all(&bad).unwrap();
    for f in ["evaluations.csv", "defaults.csv"] {
        std::fs::copy(fixture.join(f), bad.join(f)).unwrap();
    }
    let manifest = std::fs::read_to_string(fixture.join("traceset.toml"))
        .unwrap()
        .replace("max_depth int [1, 11]", "max_depth int [11, 1]");
    std::fs::write(bad.join("traceset.toml"), manifest).unwrap();
    let bad_exp = dir.join("bad.toml");
    std::fs::write(
        &bad_exp,
        std::fs::read_to_string(&exp)
            .unwrap()
            .replace(&fixture.display().to_string(), &bad.display().to_string()),
    )
    .unwrap();
    let o = bin()
        .args([
            "run",
            bad_exp.to_str().unwrap(),
            "--out",
            dir.join("bad-out").to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("traceset.toml")
            && err.contains("'tree': key 'space'")
            && err.contains("lo < hi"),
        "{err}"
    );

    // A set without configurations is not a pool, and that is said first, before the spaces
    // its manifest lacks (the Python adapters' tests ask it of traces/lcdb).
    let bare = dir.join("bare-traces");
    std::fs::create_dir_all(&bare).unwrap();
    let csv = std::fs::read_to_string(fixture.join("evaluations.csv")).unwrap();
    let cut: String = csv
        .lines()
        .map(|l| l.split_once(",\"").map_or(l, |(head, _)| head))
        .map(|l| l.strip_suffix(",config").unwrap_or(l).to_string() + "\n")
        .collect();
    std::fs::write(bare.join("evaluations.csv"), cut).unwrap();
    let manifest = std::fs::read_to_string(fixture.join("traceset.toml")).unwrap();
    let manifest = manifest.split("[[provenance.learners]]").next().unwrap();
    std::fs::write(bare.join("traceset.toml"), manifest).unwrap();
    let bare_exp = dir.join("bare.toml");
    std::fs::write(
        &bare_exp,
        std::fs::read_to_string(&exp)
            .unwrap()
            .replace(&fixture.display().to_string(), &bare.display().to_string()),
    )
    .unwrap();
    let o = bin()
        .args(["run", bare_exp.to_str().unwrap(), "--out"])
        .arg(dir.join("bare-out"))
        .arg("--quiet")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains(
                "evaluations.csv: missing column 'config', which the joint (CASH) pool needs"
            ),
        "{err}"
    );
}

/// `reproduce auto-weka` end to end on trimmed copies of its experiment files (fewer budgets and
/// repetitions, all datasets): the README, its tables and each experiment's report.
#[test]
fn reproduce_auto_weka_writes_its_tables_and_reports() {
    use banditbench::reproduce::auto_weka;
    let out = scratch("reproduce-auto-weka");
    let opts = common::trimmed_reproduction(
        &out,
        &[
            ("auto-weka-sklearn-random.toml", "[10, 30]"),
            ("auto-weka-sklearn-random-seconds.toml", "[1, 2]"),
            ("auto-weka-sklearn-grid.toml", "[5, 15]"),
        ],
        2,
    );
    let files = auto_weka::reproduce(&opts).unwrap();
    let dir = out.join("auto-weka");
    assert!(files.contains(&dir.join("README.md")) && files.contains(&dir.join("ranks.csv")));
    let md = std::fs::read_to_string(dir.join("README.md")).unwrap();
    for want in [
        "## auto-weka-sklearn-random\n",
        "| budget (evaluations) | Ex-Def | random search | TPE | SMAC |",
        "| budget (s) | Ex-Def | random search | TPE | SMAC |",
        "| budget (evaluations) | Ex-Def | grid search | random search | TPE | SMAC |",
        "| grid search vs Ex-Def |",
        "one family of 4 hypotheses, exact Wilcoxon signed-rank at 6 dataset units",
        "| TPE vs SMAC |",
        "| random search vs grid search |",
        "| SMAC vs Ex-Def |",
        "one family of 3 hypotheses, exact Wilcoxon signed-rank at 12 dataset units",
        "## The paper's findings beside ours",
        "| Random search beats grid search | 9/21 (CV), 7/21 (test) |",
        "SMAC best alone (validation) on ",
        "(tied for best on ",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }
    // Wins/ties/losses over 12 datasets add up to 12 in every cell of the table.
    let row = md
        .lines()
        .find(|l| l.starts_with("| SMAC vs Ex-Def |"))
        .unwrap();
    for cell in row.split('|').skip(2).filter(|c| !c.trim().is_empty()) {
        let n: usize = cell
            .trim()
            .split('/')
            .map(|x| x.parse::<usize>().unwrap())
            .sum();
        assert_eq!(n, 12, "{row}");
    }
    // The exhaustive grid is the validation oracle of every method that draws from the grid (all
    // but Ex-Def, whose defaults are off it): none beats it on validation.
    let sec = md.split("### Against the exhaustive grid").nth(1).unwrap();
    let rows: Vec<&str> = sec
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| method") && !l.starts_with("| Ex-Def"))
        .collect();
    assert_eq!(rows.len(), 4, "{sec}");
    for l in rows {
        let val = l.split('|').nth(2).unwrap().trim();
        assert!(val.starts_with("0/"), "{l}");
    }
    for e in [
        "auto-weka-sklearn-random",
        "auto-weka-sklearn-random-seconds",
        "auto-weka-sklearn-grid",
    ] {
        assert!(dir.join(e).join("report.md").is_file(), "{e} report");
    }
}

fn defaults_frame(rows: &[(&str, i64, &str, i64, f32, &str)]) -> DataFrame {
    DataFrame::new_infer_height(vec![
        Column::new(
            "dataset".into(),
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        Column::new("run".into(), rows.iter().map(|r| r.1).collect::<Vec<_>>()),
        Column::new("learner".into(), vec!["net"; rows.len()]),
        Column::new(
            "config".into(),
            rows.iter().map(|r| r.2).collect::<Vec<_>>(),
        ),
        Column::new("unit".into(), rows.iter().map(|r| r.3).collect::<Vec<_>>()),
        Column::new("score".into(), rows.iter().map(|r| r.4).collect::<Vec<_>>()),
        Column::new(
            "test_score".into(),
            rows.iter().map(|r| r.4).collect::<Vec<_>>(),
        ),
        Column::new("cost_s".into(), vec![0.25f32; rows.len()]),
        Column::new(
            "status".into(),
            rows.iter().map(|r| r.5).collect::<Vec<_>>(),
        ),
    ])
    .unwrap()
}

/// A learner's default configuration recorded beside a pool (defaults.parquet): one more
/// configuration, off the grid (no neighbours; a value off the grid encodes as NaN), with its
/// curve on each task; never drawn at random; broken rows named.
#[test]
fn a_pools_recorded_defaults_load_beside_its_grid() {
    let cfg = r#"{"width": 12, "act": "relu"}"#;
    let mut rows = Vec::new();
    for d in ["d", "e"] {
        for u in 1..=3i64 {
            rows.push((d, 0i64, cfg, u, 0.6 + 0.1 * u as f32, "ok"));
        }
    }
    let dir = write_pool("pool-defaults", MANIFEST, configs(&GRID), &self::rows());
    write_parquet(defaults_frame(&rows), &dir.join("defaults.parquet"));
    let p = load_pool(&dir, false).unwrap();
    assert_eq!(p.configs.len(), 5);
    assert_eq!(p.defaults, vec![Some(4)]);
    assert_eq!((p.configs[4].id, p.configs[4].levels.len()), (4, 0));
    assert!(p.neighbours[4].is_empty());
    assert!((p.tasks[1].curves[4].score[2] - 0.9).abs() < 1e-6);
    // width 12 is off the grid (8, 16): NaN; "relu" is level 0 of the categorical.
    let x = p.space.values(4);
    assert!(x[0].is_nan() && x[1] == 0.0, "{x:?}");
    let out = bin()
        .args(["traces", "validate", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("4 configurations (+ 1 learners' defaults), 29 units"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A second default for the same learner, and a gap in units, are refused with the row.
    let mut two = rows.clone();
    two[3].2 = r#"{"width": 16, "act": "relu"}"#;
    write_parquet(defaults_frame(&two), &dir.join("defaults.parquet"));
    let e = format!("{:#}", load_pool(&dir, false).unwrap_err());
    assert!(
        e.contains("defaults.parquet: row 4") && e.contains("two default configurations"),
        "{e}"
    );
    let gap: Vec<_> = rows.iter().filter(|r| r.3 != 2).cloned().collect();
    write_parquet(defaults_frame(&gap), &dir.join("defaults.parquet"));
    let e = format!("{:#}", load_pool(&dir, false).unwrap_err());
    assert!(e.contains("unit 2 is missing"), "{e}");
}

#[test]
fn the_pool_world_charges_overhead_to_a_budget_of_seconds_and_refuses_it_on_units() {
    let dir = write_pool("pool-overhead", MANIFEST, configs(&GRID), &rows());
    let rs = "[[policies]]\nfamily = \"random-search\"";
    // Every unit of the tiny pool costs 0.5 s: 3 s hold 6 units without overhead.
    let run = |world: &str, out: &str| -> DataFrame {
        let exp = pool_experiment(&dir, world, rs);
        common::run_ok(&[
            "run",
            exp.to_str().unwrap(),
            "--out",
            dir.join(out).to_str().unwrap(),
            "--quiet",
        ]);
        read(&dir.join(out).join("runs.parquet"))
    };
    let free = run("budget_unit = \"seconds\"\nbudgets = [3]", "free");
    let charged = run(
        "budget_unit = \"seconds\"\nbudgets = [3]\noverhead = \"fixed\"\noverhead_s = 0.2",
        "charged",
    );
    let u = |df: &DataFrame, c: &str| -> Vec<u64> {
        df.column(c)
            .unwrap()
            .u64()
            .unwrap()
            .into_no_null_iter()
            .collect()
    };
    let f = |df: &DataFrame, c: &str| -> Vec<f64> {
        df.column(c)
            .unwrap()
            .f64()
            .unwrap()
            .into_no_null_iter()
            .collect()
    };
    for ((d_free, d), (over, used)) in u(&free, "decisions")
        .into_iter()
        .zip(u(&charged, "decisions"))
        .zip(
            f(&charged, "overhead_s")
                .into_iter()
                .zip(f(&charged, "budget_used")),
        )
    {
        assert_eq!(d_free, 6, "3 s of 0.5 s units");
        assert!(d < d_free, "the overhead eats budget: {d} decisions");
        // A charge precedes each decision; a last one may spend the budget and end the cell.
        let charges = (over / 0.2).round();
        assert!(
            (over - 0.2 * charges).abs() < 1e-9
                && (charges == d as f64 || charges == d as f64 + 1.0),
            "{over} for {d} decisions"
        );
        assert!(used <= 3.0 + 1e-9, "{used}");
    }
    assert!(f(&free, "overhead_s").iter().all(|&o| o == 0.0));
    let model = charged
        .column("overhead_model")
        .unwrap()
        .str()
        .unwrap()
        .get(0);
    assert_eq!(model, Some("fixed(0.2 s per decision)"));
    // A budget of units counts no time: the key is refused, naming it.
    let exp = pool_experiment(
        &dir,
        "budgets = [4]\noverhead = \"fixed\"\noverhead_s = 0.1",
        rs,
    );
    let out = bin()
        .args(["run", exp.to_str().unwrap(), "--out"])
        .arg(dir.join("units"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && e.contains(
                "key 'world.overhead' charges seconds, but budget_unit = \"units\" counts no time"
            ),
        "{e}"
    );
}

/// A pool sampled from ranges: the tiny pool with its ordinal `width` replaced by a numeric log
/// dimension and a whole-number one; levels hold the categorical's index alone, values live in
/// `config`.
fn sampled() -> String {
    MANIFEST
        .replace("neighbours = \"grid\"", "neighbours = \"none\"")
        .replace(
            "name = \"width\"\nkind = \"ordinal\"\nvalues = [\"8\", \"16\"]\n",
            "name = \"lr\"\nkind = \"numeric\"\nlow = 0.001\nhigh = 1.0\nlog = true\n[[learners.dims]]\nname = \"layers\"\nkind = \"numeric\"\nlow = 1\nhigh = 4\nint = true\n",
        )
}

fn sampled_configs(levels: &[&str], config: &[&str]) -> DataFrame {
    let n = levels.len();
    DataFrame::new_infer_height(vec![
        Column::new("config_id".into(), (0..n as i64).collect::<Vec<_>>()),
        Column::new("learner".into(), vec!["net"; n]),
        Column::new("levels".into(), levels.to_vec()),
        Column::new("config".into(), config.to_vec()),
    ])
    .unwrap()
}

const SAMPLE: [&str; 4] = [
    r#"{"lr": 0.001, "layers": 1, "act": "relu"}"#,
    r#"{"lr": 0.031622776601683794, "layers": 2, "act": "tanh"}"#,
    r#"{"lr": 1.0, "layers": 4, "act": "relu"}"#,
    r#"{"lr": 0.1, "layers": 3, "act": "tanh"}"#,
];

#[test]
fn a_pool_sampled_from_ranges_loads_encodes_and_refuses_each_broken_rule() {
    let levels = ["0", "1", "0", "1"];
    let dir = write_pool(
        "pool-sampled",
        &sampled(),
        sampled_configs(&levels, &SAMPLE),
        &rows(),
    );
    let p = load_pool(&dir, false).unwrap();
    assert!(matches!(p.manifest.learners[0].dims[0].kind, DimKind::Numeric(r) if r.log && !r.int));
    // No grid: no neighbours.
    assert!(p.neighbours.iter().all(Vec::is_empty));
    // Encoded from config: log10 position of lr, (layers - 1) / 3, the categorical's index.
    assert_eq!(
        format!("{:?}", p.space.learners[0][1].scale),
        "Numeric { log: false, lo: 1.0, hi: 4.0, int: true }"
    );
    let x = p.space.values(1);
    assert!((x[0] - 0.5).abs() < 1e-6 && (x[1] - 1.0 / 3.0).abs() < 1e-6 && x[2] == 1.0);
    assert_eq!(p.space.values(2), &[1.0, 1.0, 0.0]);

    let broken = |name: &str, manifest: &str, levels: &[&str], config: &[&str], want: &str| {
        refused(
            name,
            manifest,
            sampled_configs(levels, config),
            &rows(),
            want,
        )
    };
    broken(
        "sampled-grid-neighbours",
        &sampled().replace("neighbours = \"none\"", "neighbours = \"grid\""),
        &levels,
        &SAMPLE,
        "a numeric dimension has no levels to step between",
    );
    broken(
        "sampled-bad-range",
        &sampled().replace("low = 0.001", "low = 0"),
        &levels,
        &SAMPLE,
        "give low < high (and low > 0 on a log scale)",
    );
    broken(
        "sampled-values",
        &sampled().replace("high = 4\n", "high = 4\nvalues = [\"1\"]\n"),
        &levels,
        &SAMPLE,
        "unknown key 'values'; a numeric dimension has name, kind, low, high, log and int",
    );
    broken(
        "sampled-levels",
        &sampled(),
        &["0,1", "1", "0", "1"],
        &SAMPLE,
        "2 levels, but learner 'net' has 1 dimensions with levels (a numeric dimension has no level",
    );
    let mut missing = SAMPLE;
    missing[2] = r#"{"layers": 4, "act": "relu"}"#;
    broken(
        "sampled-missing",
        &sampled(),
        &levels,
        &missing,
        "row 3: config has no number 'lr'",
    );
    let mut outside = SAMPLE;
    outside[3] = r#"{"lr": 0.1, "layers": 3.5, "act": "tanh"}"#;
    broken(
        "sampled-outside",
        &sampled(),
        &levels,
        &outside,
        "row 4: 'layers' = 3.5 is outside the range [1, 4] pool.toml gives it (whole numbers)",
    );
    let mut twice = SAMPLE;
    twice[3] = SAMPLE[1];
    broken(
        "sampled-twice",
        &sampled(),
        &levels,
        &twice,
        "configurations 1 and 3 have the same learner and config",
    );
}

#[test]
fn the_bundled_taskset_pool_loads_and_its_losses_are_dyhpos() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = load_pool(&root.join("traces/taskset"), false).unwrap();
    // 12 tasks x the same 1 000 configurations x 51 points, less the points after a divergence.
    assert_eq!(
        (p.tasks.len(), p.configs.len(), p.manifest.units),
        (12, 1000, 51)
    );
    let diverged: usize = p
        .tasks
        .iter()
        .flat_map(|t| &t.curves)
        .filter(|c| c.len() < 51 || c.status.last() != Some(&banditbench::trace::Status::Ok))
        .count();
    assert_eq!(diverged, 917);
    assert_eq!(p.n_units_recorded(), 569_115);
    // DyHPO's first GRU128 configuration: its validation losses at budgets 1 and 2 (the JSON's
    // valid.loss[0] and [1]), as f32.
    let t = p
        .tasks
        .iter()
        .position(|t| t.dataset == "FixedTextRNNClassification_imdb_patch32_GRU128_bs128")
        .unwrap();
    let c = &p.tasks[t].curves[0];
    assert_eq!(c.score[..2], [0.717_324_8_f32, 0.692_828_6]);
    assert!(p.space.values(0).iter().all(|v| (0.0..=1.0).contains(v)));
    // TaskSet records no time: a budget of seconds is refused, naming what to give instead.
    let dir = scratch("taskset-seconds");
    let exp = dir.join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"ts\"\nseed = 1\ntraces = {:?}\n[world]\nkind = \"pool\"\nbudget_unit = \"seconds\"\nbudgets = [10.0]\n[[policies]]\nfamily = \"random-search\"\n",
            root.join("traces/taskset").display().to_string()
        ),
    )
    .unwrap();
    let out = bin()
        .args(["run", exp.to_str().unwrap(), "--out"])
        .arg(dir.join("r"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("pool 'taskset' records no time")
            && err.contains("give budget_unit = \"units\""),
        "{err}"
    );
}

/// The tiny pool in format 1.1: accuracy (its score), cost (its cost_s) and size (a column of its
/// own), with `size` given per curve row by `size(row index)`.
fn write_pool_of_objectives(
    name: &str,
    manifest: &str,
    size: impl Fn(usize) -> f32,
    with_column: bool,
) -> PathBuf {
    let dir = write_pool(name, manifest, configs(&GRID), &rows());
    let path = dir.join("curves").join("part-0.parquet");
    let mut df = read(&path);
    if with_column {
        let sizes: Vec<f32> = (0..df.height()).map(size).collect();
        df.with_column(Column::new("size".into(), sizes)).unwrap();
    }
    write_parquet(df, &path);
    dir
}

/// The tiny pool's manifest in format 1.1 with `objectives` (tables, so before [[learners]],
/// after every top-level key).
fn manifest_of_objectives(objectives: &str) -> String {
    MANIFEST
        .replace(
            "format = \"banditbench-pool/1\"",
            "format = \"banditbench-pool/1.1\"",
        )
        .replace("[[learners]]", &format!("{objectives}\n[[learners]]"))
}

const OBJECTIVES: &str = r#"
[[objectives]]
name = "accuracy"
direction = "maximize"
[[objectives]]
name = "cost"
direction = "minimize"
column = "cost_s"
[[objectives]]
name = "size"
direction = "minimize"
"#;

#[test]
fn a_pool_of_several_objectives_loads_and_refuses_each_broken_rule() {
    let m = manifest_of_objectives(OBJECTIVES);
    // Row i's size is i; config 2's last unit on task e has no size (NaN: infeasible).
    let rows = rows();
    let nan_at = rows
        .iter()
        .position(|r| (r.0, r.2, r.3) == ("e", 2, 3))
        .unwrap();
    let dir = write_pool_of_objectives(
        "pool-mo",
        &m,
        |i| if i == nan_at { f32::NAN } else { i as f32 },
        true,
    );
    let p = load_pool(&dir, false).unwrap();
    let names: Vec<&str> = p
        .manifest
        .objectives
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(names, ["accuracy", "cost", "size"]);
    assert_eq!(p.manifest.extra_columns(), ["size"]);
    // Each unit's own value: task d (rows 0..11), config 0's units are rows 0, 1, 2.
    assert_eq!(p.tasks[0].curves[0].extra, [0.0, 1.0, 2.0]);
    // The points a multi-objective analysis sees: last units of whole curves, minimised.
    // Task d: config 3 failed at unit 2, so 3 points; task e: config 2 is infeasible.
    let (pts, cfgs) = p.objective_points(0, &[0, 1, 2]);
    assert_eq!(cfgs, [0, 1, 2]);
    assert_eq!(&pts[..3], &[-(0.5f32 + 0.03) as f64, 0.5, 2.0]);
    let (_, cfgs) = p.objective_points(1, &[0, 2]);
    assert_eq!(cfgs, [0, 1, 3]);
    // cumulative = true: the seconds of training to the last unit, every unit's cost_s summed.
    let summed = manifest_of_objectives(&OBJECTIVES.replace(
        "column = \"cost_s\"",
        "column = \"cost_s\"\ncumulative = true",
    ));
    let q = load_pool(
        &write_pool_of_objectives("pool-mo-summed", &summed, |i| i as f32, true),
        false,
    )
    .unwrap();
    let (plain, _) = p.objective_points(0, &[1]);
    let (sums, cfgs) = q.objective_points(0, &[1]);
    assert_eq!(cfgs, [0, 1, 2]);
    for (k, &c) in cfgs.iter().enumerate() {
        let cost = &q.tasks[0].curves[c].cost_s;
        assert_eq!(plain[k], f64::from(*cost.last().unwrap()));
        assert_eq!(sums[k], cost.iter().map(|&x| f64::from(x)).sum::<f64>());
        assert!(cost.len() > 1 && sums[k] > plain[k]);
    }
    // Format 1 pools read unchanged (the tiny pool above) and have no objectives.
    assert!(
        load_pool(
            &write_pool("pool-v1", MANIFEST, configs(&GRID), &rows),
            false
        )
        .unwrap()
        .manifest
        .objectives
        .is_empty()
    );
    // Each broken rule, refused with the file or row and what to do.
    let cases: Vec<(&str, String, bool, &str)> = vec![
        (
            "objectives-in-format-1",
            MANIFEST.replace("[[learners]]", &format!("{OBJECTIVES}\n[[learners]]")),
            true,
            "[[objectives]] needs format = \"banditbench-pool/1.1\"",
        ),
        (
            "one-objective",
            manifest_of_objectives("[[objectives]]\nname = \"accuracy\"\ndirection = \"maximize\""),
            true,
            "lists 1 objective(s); a pool of several objectives lists at least two",
        ),
        (
            "score-direction",
            manifest_of_objectives(&OBJECTIVES.replacen("maximize", "minimize", 1)),
            true,
            "'accuracy' is read from the curves' score, whose direction is the manifest's (maximize)",
        ),
        (
            "unknown-objective-key",
            manifest_of_objectives(
                &OBJECTIVES.replace("column = \"cost_s\"", "colum = \"cost_s\""),
            ),
            true,
            "[[objectives]] entry 2: unknown key 'colum'",
        ),
        (
            "bad-column",
            manifest_of_objectives(
                &OBJECTIVES.replace("column = \"cost_s\"", "column = \"test_score\""),
            ),
            true,
            "key 'column' is \"test_score\"; give \"score\" or \"cost_s\"",
        ),
        (
            "cumulative-score",
            manifest_of_objectives(&OBJECTIVES.replacen(
                "direction = \"maximize\"",
                "direction = \"maximize\"\ncumulative = true",
                1,
            )),
            true,
            "[[objectives]] entry 1: key 'cumulative' sums the recorded seconds of the units trained; it applies to column = \"cost_s\" only",
        ),
        (
            "cumulative-text",
            manifest_of_objectives(&OBJECTIVES.replace(
                "column = \"cost_s\"",
                "column = \"cost_s\"\ncumulative = \"yes\"",
            )),
            true,
            "key 'cumulative' is \"yes\"; give true or false",
        ),
        (
            "twice",
            manifest_of_objectives(&OBJECTIVES.replace("name = \"cost\"", "name = \"size\"")),
            true,
            "objective 'size' is listed twice",
        ),
        (
            "missing-column",
            m.clone(),
            false,
            "[[objectives]] names 'size', which the curves must hold as a column",
        ),
    ];
    for (name, manifest, with_column, want) in cases {
        let dir = write_pool_of_objectives(name, &manifest, |i| i as f32, with_column);
        let e = format!("{:#}", load_pool(&dir, false).unwrap_err());
        assert!(e.contains(want), "{name}: expected '{want}' in: {e}");
    }
    let dir = write_pool_of_objectives(
        "infinite",
        &m,
        |i| if i == 4 { f32::INFINITY } else { 1.0 },
        true,
    );
    let e = format!("{:#}", load_pool(&dir, false).unwrap_err());
    assert!(
        e.contains("part-0.parquet: row 5: objective 'size' is inf; give a finite value, or leave it empty (NaN: infeasible)"),
        "{e}"
    );
}
