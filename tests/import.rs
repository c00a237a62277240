//! `banditbench import`: other tools' real run logs (tests/fixtures/import, made by the scripts
//! in scripts/fixtures with the versions in each versions.json) into results folders, checked
//! against what the tools' own readers said of them (each expected.json: pandas on Syne Tune's
//! file, Optuna's API on its studies, CARP-S's own `load_log` on its run folders, pandas on
//! hposuite's files, DeepCAVE's DataFrameRun); malformed variants; and `report` on several
//! folders.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use banditbench::experiment::read_parquet;
use common::{run_fails, run_ok, scratch};
use polars::prelude::*;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures(tool: &str) -> PathBuf {
    root().join("tests/fixtures/import").join(tool)
}

fn expected(dir: &Path) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// runs.parquet's rows as (policy, seed) -> (best_score, decisions, failures, budget_abs).
fn runs_by_policy_seed(dir: &Path) -> BTreeMap<(String, u64), (f64, u64, u64, f64)> {
    let df = read_parquet(&dir.join("runs.parquet")).unwrap();
    let col = |n: &str| df.column(n).unwrap().as_materialized_series().clone();
    let (policy, seed, best, decisions, failures, budget) = (
        col("policy"),
        col("seed"),
        col("best_score"),
        col("decisions"),
        col("failures"),
        col("budget_abs"),
    );
    (0..df.height())
        .map(|i| {
            (
                (
                    policy.str().unwrap().get(i).unwrap().to_string(),
                    seed.u64().unwrap().get(i).unwrap(),
                ),
                (
                    best.f64().unwrap().get(i).unwrap_or(f64::NAN),
                    decisions.u64().unwrap().get(i).unwrap(),
                    failures.u64().unwrap().get(i).unwrap(),
                    budget.f64().unwrap().get(i).unwrap(),
                ),
            )
        })
        .collect()
}

#[test]
fn syne_tune_runs_import_with_what_pandas_reads_from_them() {
    let dir = scratch("import-syne-tune");
    let out = dir.join("st");
    let fx = fixtures("syne-tune");
    let o = run_ok(&[
        "import",
        "syne-tune",
        s(&fx),
        "--out",
        s(&out),
        "--fidelity",
        "epoch",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("imported 4 runs (2 policies"), "{text}");
    let exp = expected(&fx);
    let got = runs_by_policy_seed(&out);
    assert_eq!(got.len(), exp.len());
    // Without --budget the budget is the latest time any run reached: every row is kept.
    let latest = exp
        .values()
        .map(|v| v["last_time"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for (name, v) in &exp {
        let (method, seed) = name.rsplit_once('-').unwrap();
        let key = (format!("syne-tune:{method}"), seed.parse::<u64>().unwrap());
        let (best, decisions, failures, budget) = got[&key];
        assert_eq!(best, v["best"].as_f64().unwrap(), "{name}");
        assert_eq!(decisions, v["rows"].as_u64().unwrap(), "{name}");
        assert_eq!(failures, 0, "{name}");
        assert_eq!(budget, latest);
    }
    // Trajectories: one row per result, times ascending within a cell, the incumbent the running
    // maximum of the rewards, the fidelity Syne Tune's resource attribute (epoch 1..27).
    let t = read_parquet(&out.join("trajectories.parquet")).unwrap();
    let rows: u64 = exp.values().map(|v| v["rows"].as_u64().unwrap()).sum();
    assert_eq!(t.height() as u64, rows);
    let c = |n: &str| t.column(n).unwrap().as_materialized_series().clone();
    let (cell, time, reward, inc, fid) = (
        c("cell"),
        c("time"),
        c("reward"),
        c("incumbent"),
        c("fidelity"),
    );
    let (cell, time, reward, inc, fid) = (
        cell.u64().unwrap(),
        time.f64().unwrap(),
        reward.f64().unwrap(),
        inc.f64().unwrap(),
        fid.u32().unwrap(),
    );
    let mut best = f64::NEG_INFINITY;
    for i in 0..t.height() {
        if i == 0 || cell.get(i) != cell.get(i - 1) {
            best = f64::NEG_INFINITY;
        } else {
            assert!(time.get(i).unwrap() >= time.get(i - 1).unwrap());
        }
        if let Some(r) = reward.get(i) {
            best = best.max(r);
        }
        assert_eq!(inc.get(i).unwrap(), best);
        assert!((1..=27).contains(&fid.get(i).unwrap()));
    }
    // The lock file names the source and every file with its hash.
    let lock = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
    assert!(
        lock.contains("[resolved.imported]") && lock.contains("tool = \"syne-tune\""),
        "{lock}"
    );
    assert_eq!(lock.matches("results.csv.zip\" = \"").count(), 4, "{lock}");

    // A budget leaves later results out, and they are counted.
    let cut = dir.join("st60");
    let o = run_ok(&[
        "import",
        "syne-tune",
        s(&fx),
        "--out",
        s(&cut),
        "--budget",
        "60",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("later ones left out"), "{text}");
    let t60 = read_parquet(&cut.join("trajectories.parquet")).unwrap();
    let max = t60.column("time").unwrap().f64().unwrap().max().unwrap();
    assert!(max <= 60.0 && (t60.height() as u64) < rows);
    // The folder is a results folder like any other: report ranks it.
    run_ok(&["report", s(&cut), "--out", s(&dir.join("report"))]);
    assert!(dir.join("report/anytime.png").is_file());
}

#[test]
fn optuna_journal_and_sqlite_import_alike_with_what_optunas_api_says() {
    let dir = scratch("import-optuna");
    let fx = fixtures("optuna");
    let (j, q) = (dir.join("journal"), dir.join("sqlite"));
    let o = run_ok(&[
        "import",
        "optuna",
        s(&fx.join("journal.log")),
        "--out",
        s(&j),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("6 failed trials") && text.contains("1 pending"),
        "{text}"
    );
    run_ok(&[
        "import",
        "optuna",
        s(&fx.join("studies.db")),
        "--out",
        s(&q),
    ]);
    // The two storages hold the same studies (seeded samplers): the same results, byte for byte.
    for f in ["runs.parquet", "trajectories.parquet"] {
        // (the experiment's name is the folder's)
        let read = |d: &Path| {
            let df = read_parquet(&d.join(f)).unwrap();
            if df.column("experiment").is_ok() {
                df.drop("experiment").unwrap()
            } else {
                df
            }
        };
        let (a, b) = (read(&j), read(&q));
        assert!(
            a.equals_missing(&b),
            "{f} differs between journal and SQLite"
        );
    }
    let got = runs_by_policy_seed(&j);
    for (name, v) in expected(&fx) {
        let (policy, seed) = name.rsplit_once('-').unwrap();
        let (best, decisions, failures, _) =
            got[&(format!("optuna:{policy}"), seed.parse().unwrap())];
        // Optuna's best value (complete trials only); a decision per finished trial.
        assert_eq!(best, v["best"].as_f64().unwrap(), "{name}");
        let finished = v["complete"].as_u64().unwrap()
            + v["fail"].as_u64().unwrap()
            + v["pruned"].as_u64().unwrap();
        assert_eq!(decisions, finished, "{name}");
        assert_eq!(failures, v["fail"].as_u64().unwrap(), "{name}");
    }
    // The recorded cost as the clock: the budget is the largest study's total cost_s.
    let c = dir.join("cost");
    run_ok(&[
        "import",
        "optuna",
        s(&fx.join("journal.log")),
        "--out",
        s(&c),
        "--clock",
        "attr:cost_s",
    ]);
    let most = expected(&fx)
        .values()
        .map(|v| v["cost_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let (_, _, _, budget) = *runs_by_policy_seed(&c).values().next().unwrap();
    assert!((budget - most).abs() < 1e-9 * most, "{budget} vs {most}");
}

#[test]
fn a_naming_rule_reads_policy_task_and_seed_from_study_names() {
    let dir = scratch("import-names");
    let log = root().join("examples/other-tools/optuna/journal.log");
    let out = dir.join("o");
    run_ok(&[
        "import",
        "optuna",
        s(&log),
        "--out",
        s(&out),
        "--names",
        "{policy}.{dataset}.{seed}",
        "--clock",
        "attr:cost_s",
        "--budget",
        "60",
    ]);
    let df = read_parquet(&out.join("runs.parquet")).unwrap();
    let datasets: std::collections::BTreeSet<String> = df
        .column("dataset")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_string())
        .collect();
    assert_eq!(datasets.len(), 6, "{datasets:?}");
    assert!(datasets.contains("statlog-segment"));
    assert_eq!(df.height(), expected(log.parent().unwrap()).len());
    // A rule no study follows lists what there is.
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&log),
            "--out",
            s(&dir.join("x")),
            "--names",
            "study-{policy}-{seed}",
        ],
        1,
    );
    assert!(
        e.contains("no study follows the naming rule") && e.contains("tpe.car.0"),
        "{e}"
    );
}

/// A copy of one Syne Tune run folder with `metadata.json` and the CSV inside
/// `results.csv.zip` passed through the edits.
fn syne_tune_variant(
    name: &str,
    meta: impl Fn(&str) -> String,
    csv: impl Fn(&str) -> String,
) -> PathBuf {
    let src = fixtures("syne-tune").join("asha-0");
    let dir = scratch(name).join("asha-0");
    std::fs::create_dir_all(&dir).unwrap();
    let m = std::fs::read_to_string(src.join("metadata.json")).unwrap();
    std::fs::write(dir.join("metadata.json"), meta(&m)).unwrap();
    let mut text = String::new();
    let f = std::fs::File::open(src.join("results.csv.zip")).unwrap();
    let mut z = ::zip::ZipArchive::new(f).unwrap();
    std::io::Read::read_to_string(&mut z.by_index(0).unwrap(), &mut text).unwrap();
    let out = std::fs::File::create(dir.join("results.csv.zip")).unwrap();
    let mut w = ::zip::ZipWriter::new(out);
    w.start_file(
        "results.csv",
        ::zip::write::SimpleFileOptions::default()
            .compression_method(::zip::CompressionMethod::Stored),
    )
    .unwrap();
    w.write_all(csv(&text).as_bytes()).unwrap();
    w.finish().unwrap();
    dir
}

#[test]
fn malformed_syne_tune_folders_are_refused_naming_file_row_and_field() {
    let out = |d: &Path| d.parent().unwrap().join("out").display().to_string();
    let same = |t: &str| t.to_string();
    // A metric value that is not a number: the file, the row and line, the column, the value.
    let d = syne_tune_variant("st-bad-value", same, |csv| {
        let mut lines: Vec<String> = csv.lines().map(String::from).collect();
        let cols: Vec<&str> = lines[0].split(',').collect();
        let at = cols.iter().position(|c| *c == "accuracy").unwrap();
        let mut row: Vec<String> = lines[5].split(',').map(String::from).collect();
        row[at] = "oops".into();
        lines[5] = row.join(",");
        lines.join("\n") + "\n"
    });
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("results.csv.zip (results.csv): row 5 (line 6), column 'accuracy': 'oops' is not a number"),
        "{e}"
    );
    // A negative budget reaches the importer's own check (clap once took -5 for a flag and
    // advised '-- -5', which does not work).
    let d = syne_tune_variant("st-budget", same, same);
    let e = run_fails(
        &[
            "import",
            "syne-tune",
            s(&d),
            "--out",
            &out(&d),
            "--budget",
            "-5",
        ],
        1,
    );
    assert!(e.contains("--budget -5: must be a positive number"), "{e}");
    // Two metrics (a multi-objective run): refused unless --metric names one, whose own mode
    // is then taken from the list.
    let d = syne_tune_variant(
        "st-two-metrics",
        |m| {
            m.replace(
                "\"metric_names\": [\"accuracy\"]",
                "\"metric_names\": [\"accuracy\", \"elapsed_time\"]",
            )
            .replace(
                "\"metric_mode\": \"max\"",
                "\"metric_mode\": [\"max\", \"min\"]",
            )
        },
        same,
    );
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("these syne-tune runs have 2 objectives: give --pool DIR"),
        "{e}"
    );
    let o = run_ok(&[
        "import",
        "syne-tune",
        s(&d),
        "--out",
        &out(&d),
        "--metric",
        "elapsed_time",
    ]);
    let lock = std::fs::read_to_string(Path::new(&out(&d)).join("experiment.lock.toml")).unwrap();
    assert!(
        lock.contains("minimize"),
        "{}\n{lock}",
        String::from_utf8_lossy(&o.stdout)
    );
    // No seed in metadata.json: the file and the key, and the option that names another.
    let d = syne_tune_variant("st-no-seed", |m| m.replace("\"seed\": 0, ", ""), same);
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("metadata.json: no key 'seed'") && e.contains("--seed-key"),
        "{e}"
    );
    // Damaged JSON: the line and column.
    let d = syne_tune_variant("st-bad-json", |m| m[..m.len() / 2].to_string(), same);
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("metadata.json: line 1, column") && e.contains("not valid JSON"),
        "{e}"
    );
    // A task that is not dataset[/run[/learner]].
    let d = syne_tune_variant(
        "st-bad-task",
        |m| m.replace("phoneme/0/", "phoneme/zero/"),
        same,
    );
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("key 'task'") && e.contains("'zero' is not a run number"),
        "{e}"
    );
    // A header with no rows, and a metric column with no values: said so, not "its type is str".
    let d = syne_tune_variant("st-header-only", same, |csv| {
        csv.lines().next().unwrap().to_string() + "\n"
    });
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("(results.csv): no rows, only a header") && !e.contains("type is"),
        "{e}"
    );
    let d = syne_tune_variant("st-empty-metric", same, |csv| {
        let mut lines: Vec<String> = csv.lines().map(String::from).collect();
        let at = lines[0].split(',').position(|c| c == "accuracy").unwrap();
        for l in lines.iter_mut().skip(1) {
            let mut row: Vec<&str> = l.split(',').collect();
            row[at] = "";
            *l = row.join(",");
        }
        lines.join("\n") + "\n"
    });
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(
        e.contains("column 'accuracy' has no values (every one of its") && !e.contains("type is"),
        "{e}"
    );
    // A missing clock column.
    let d = syne_tune_variant("st-no-time", same, |csv| {
        csv.replace("st_tuner_time", "tuner_time")
    });
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(e.contains("no column 'st_tuner_time'"), "{e}");
    // A file that is not a zip archive.
    let d = syne_tune_variant("st-not-zip", same, same);
    std::fs::write(d.join("results.csv.zip"), "accuracy,trial_id\n").unwrap();
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(e.contains("results.csv.zip: not a zip archive"), "{e}");
    // Two folders that are the same (policy, task, seed).
    let d = syne_tune_variant("st-twice", same, same);
    let twin = d.parent().unwrap().join("asha-0-copy");
    std::fs::create_dir(&twin).unwrap();
    for f in ["metadata.json", "results.csv.zip"] {
        std::fs::copy(d.join(f), twin.join(f)).unwrap();
    }
    let e = run_fails(
        &[
            "import",
            "syne-tune",
            s(d.parent().unwrap()),
            "--out",
            &out(&d),
        ],
        1,
    );
    assert!(
        e.contains("are both policy 'syne-tune:asha'") && e.contains("seed 0"),
        "{e}"
    );
    // An existing output folder is never overwritten.
    let d = syne_tune_variant("st-exists", same, same);
    std::fs::create_dir(out(&d)).unwrap();
    let e = run_fails(&["import", "syne-tune", s(&d), "--out", &out(&d)], 1);
    assert!(e.contains("already exists"), "{e}");
}

#[test]
fn malformed_optuna_storages_are_refused_naming_file_line_and_field() {
    let dir = scratch("optuna-bad");
    let log = std::fs::read_to_string(fixtures("optuna").join("journal.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let out = dir.join("out");
    // A line cut short (a crash while writing): its number.
    let mut cut: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    cut[9] = cut[9][..cut[9].len() / 2].to_string();
    let p = write("cut.log", cut.join("\n"));
    let e = run_fails(&["import", "optuna", s(&p), "--out", s(&out)], 1);
    assert!(e.contains("cut.log: line 10: not valid JSON"), "{e}");
    // An operation code Optuna does not have.
    let p = write("op.log", format!("{}\n{{\"op_code\": 42}}\n", lines[0]));
    let e = run_fails(&["import", "optuna", s(&p), "--out", s(&out)], 1);
    assert!(
        e.contains("op.log: line 2: operation 42 is not one of Optuna's"),
        "{e}"
    );
    // Not an SQLite file.
    let p = write("fake.db", "not a database\n".repeat(100));
    let e = run_fails(&["import", "optuna", s(&p), "--out", s(&out)], 1);
    assert!(e.contains("fake.db"), "{e}");
    // A storage another process holds an exclusive lock on (a study still writing): said so,
    // after a second's wait, not "not an Optuna storage".
    let locked = dir.join("locked.db");
    std::fs::copy(fixtures("optuna").join("studies.db"), &locked).unwrap();
    let writer = rusqlite::Connection::open(&locked).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let e = run_fails(&["import", "optuna", s(&locked), "--out", s(&out)], 1);
    assert!(
        e.contains("locked.db: locked by another process") && !e.contains("not an Optuna"),
        "{e}"
    );
    writer.execute_batch("ROLLBACK;").unwrap();
    // A clock attribute some trial lacks: the study and the trial.
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&fixtures("optuna").join("journal.log")),
            "--out",
            s(&out),
            "--clock",
            "attr:seconds",
        ],
        1,
    );
    assert!(
        e.contains("journal.log#") && e.contains("trial 0: no numeric user attribute 'seconds'"),
        "{e}"
    );
    // A bad rule and a bad clock are refused before anything is read.
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&p),
            "--out",
            s(&out),
            "--names",
            "{algo}-{seed}",
        ],
        1,
    );
    assert!(e.contains("unknown placeholder {algo}"), "{e}");
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&p),
            "--out",
            s(&out),
            "--clock",
            "hours",
        ],
        2,
    );
    assert!(e.contains("use trials, seconds, or attr:NAME"), "{e}");
    assert!(!out.exists());
}

/// The mean score of each policy in a report's summary.csv.
fn mean_scores(report: &Path) -> BTreeMap<String, f64> {
    let df = CsvReadOptions::default()
        .try_into_reader_with_file_path(Some(report.join("summary.csv")))
        .unwrap()
        .finish()
        .unwrap();
    let p = df.column("policy").unwrap().str().unwrap().clone();
    let m = df.column("mean_score").unwrap().f64().unwrap().clone();
    (0..df.height())
        .map(|i| (p.get(i).unwrap().to_string(), m.get(i).unwrap()))
        .collect()
}

#[test]
fn report_ranks_several_folders_together_on_their_common_units() {
    let dir = scratch("report-together");
    let ex = root().join("examples/other-tools");
    let (st, op) = (dir.join("st"), dir.join("op"));
    run_ok(&[
        "import",
        "syne-tune",
        s(&ex.join("syne-tune")),
        "--out",
        s(&st),
        "--budget",
        "60",
    ]);
    run_ok(&[
        "import",
        "optuna",
        s(&ex.join("optuna/journal.log")),
        "--out",
        s(&op),
        "--names",
        "{policy}.{dataset}.{seed}",
        "--clock",
        "attr:cost_s",
        "--budget",
        "60",
    ]);
    // CARP-S records 1 - accuracy: refused beside the accuracies, ranked with --one-minus.
    let (cm, cp) = (dir.join("carps-cost"), dir.join("carps"));
    let carps_runs = ex.join("carps/runs");
    let carps = |out: &Path, flip: bool| {
        let mut a = vec![
            "import",
            "carps",
            s(&carps_runs),
            "--clock",
            "seconds",
            "--budget",
            "60",
        ];
        if flip {
            a.push("--one-minus");
        }
        a.extend(["--out", s(out)]);
        run_ok(&a);
    };
    carps(&cm, false);
    carps(&cp, true);
    let e = run_fails(&["report", s(&st), s(&cm), "--out", s(&dir.join("x"))], 1);
    assert!(
        e.contains("minimizes its score but") && e.contains("maximizes it"),
        "{e}"
    );
    let joint = dir.join("joint");
    let o = run_ok(&["report", s(&st), s(&op), s(&cp), "--out", s(&joint)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("over 6 units"), "{text}");
    // Each policy's mean score is what its own folder's report says: the cells were renumbered,
    // not changed.
    run_ok(&["report", s(&st), "--out", s(&dir.join("r-st"))]);
    run_ok(&["report", s(&op), "--out", s(&dir.join("r-op"))]);
    run_ok(&["report", s(&cp), "--out", s(&dir.join("r-cp"))]);
    let together = mean_scores(&joint);
    let mut alone = mean_scores(&dir.join("r-st"));
    alone.extend(mean_scores(&dir.join("r-op")));
    alone.extend(mean_scores(&dir.join("r-cp")));
    assert_eq!(together.len(), 6);
    for (p, m) in &alone {
        assert!(
            (together[p] - m).abs() < 1e-12,
            "{p}: {} vs {m}",
            together[p]
        );
    }
    // The anytime curves of all four, from both folders' trajectories.
    let anytime = std::fs::read_to_string(joint.join("anytime.csv")).unwrap();
    for p in ["syne-tune:asha", "optuna:tpe"] {
        assert!(anytime.contains(p), "{p} missing from anytime.csv");
    }
    let md = std::fs::read_to_string(joint.join("report.md")).unwrap();
    assert!(md.contains(s(&st)) && md.contains(s(&op)), "{md}");

    // Refused: one policy in two folders; different budgets; no shared unit; one folder's
    // report to an unnamed place.
    let e = run_fails(&["report", s(&st), s(&st), "--out", s(&dir.join("x"))], 1);
    assert!(e.contains("given twice"), "{e}");
    let copy = dir.join("st-copy");
    std::fs::create_dir(&copy).unwrap();
    for f in [
        "runs.parquet",
        "trajectories.parquet",
        "experiment.lock.toml",
    ] {
        std::fs::copy(st.join(f), copy.join(f)).unwrap();
    }
    let e = run_fails(&["report", s(&st), s(&copy), "--out", s(&dir.join("x"))], 1);
    assert!(e.contains("policy 'syne-tune:asha' is in both"), "{e}");
    let flipped = dir.join("op-minimize");
    std::fs::create_dir(&flipped).unwrap();
    for f in ["trajectories.parquet", "experiment.lock.toml"] {
        std::fs::copy(op.join(f), flipped.join(f)).unwrap();
    }
    let mut runs = read_parquet(&op.join("runs.parquet")).unwrap();
    let n = runs.height();
    runs.with_column(Column::new("direction".into(), vec!["minimize"; n]))
        .unwrap();
    let f = std::fs::File::create(flipped.join("runs.parquet")).unwrap();
    ParquetWriter::new(f).finish(&mut runs).unwrap();
    let e = run_fails(
        &["report", s(&st), s(&flipped), "--out", s(&dir.join("x"))],
        1,
    );
    assert!(
        e.contains("minimizes its score but")
            && e.contains("rank folders of one direction together"),
        "{e}"
    );
    let trials = dir.join("op-trials");
    run_ok(&[
        "import",
        "optuna",
        s(&ex.join("optuna/journal.log")),
        "--out",
        s(&trials),
        "--names",
        "{policy}.{dataset}.{seed}",
        "--prefix",
        "trials:",
        "--budget",
        "20",
    ]);
    let e = run_fails(
        &["report", s(&st), s(&trials), "--out", s(&dir.join("x"))],
        1,
    );
    assert!(
        e.contains("has budgets [20 trials] but") && e.contains("[60 seconds]"),
        "{e}"
    );
    let other = dir.join("st-other-task");
    run_ok(&[
        "import",
        "syne-tune",
        s(&fixtures("syne-tune")),
        "--out",
        s(&other),
        "--budget",
        "60",
        "--task",
        "iris/0",
        "--prefix",
        "other:",
    ]);
    let e = run_fails(
        &["report", s(&st), s(&other), "--out", s(&dir.join("x"))],
        1,
    );
    assert!(
        e.contains("share no dataset unit") && e.contains("iris"),
        "{e}"
    );
    let e = run_fails(&["report", s(&st), s(&op)], 1);
    assert!(e.contains("--out"), "{e}");
}

/// The fixture's run folders (relative names, as in expected.json) under CARP-S's `runs/`.
fn carps_run(rel: &str) -> PathBuf {
    fixtures("carps").join(rel)
}

#[test]
fn carps_runs_import_with_what_carps_own_analysis_reads() {
    let dir = scratch("import-carps");
    let fx = fixtures("carps");
    let exp = expected(&fx);
    // The default clock: n_trials (DEHB's low-budget evaluations count their fraction).
    let out = dir.join("trials");
    let o = run_ok(&["import", "carps", s(&fx.join("runs")), "--out", s(&out)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("imported 6 runs (3 policies"), "{text}");
    let got = runs_by_policy_seed(&out);
    assert_eq!(got.len(), exp.len());
    let latest = exp
        .values()
        .map(|v| v["last_n_trials"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for (name, v) in &exp {
        let key = (
            format!("carps:{}", v["optimizer_id"].as_str().unwrap()),
            v["seed"].as_u64().unwrap(),
        );
        let (best, decisions, failures, budget) = got[&key];
        // CARP-S minimises cost; its analysis' final incumbent is the running minimum.
        assert_eq!(best, v["final_cost_inc"].as_f64().unwrap(), "{name}");
        assert_eq!(decisions, v["rows"].as_u64().unwrap(), "{name}");
        assert_eq!((failures, budget), (0, latest), "{name}");
    }
    // The unit is the task id read as dataset/run/learner: the bundled pool's task.
    let runs = read_parquet(&out.join("runs.parquet")).unwrap();
    let ds = runs.column("dataset").unwrap().str().unwrap().clone();
    assert!(ds.iter().all(|d| d == Some("phoneme")));
    // DEHB's budget is the fidelity (units 1..27), a configuration evaluated at a higher budget
    // the same arm again; random search and TPE evaluate at the full budget only (no fidelity).
    let t = read_parquet(&out.join("trajectories.parquet")).unwrap();
    let cells = runs.column("cell").unwrap().u64().unwrap().clone();
    let policy = runs.column("policy").unwrap().str().unwrap().clone();
    let dehb: Vec<u64> = (0..runs.height())
        .filter(|&i| policy.get(i) == Some("carps:DEHB"))
        .map(|i| cells.get(i).unwrap())
        .collect();
    let c = |n: &str| t.column(n).unwrap().as_materialized_series().clone();
    let (cell, fid, arm) = (c("cell"), c("fidelity"), c("arm"));
    let (cell, fid, arm) = (cell.u64().unwrap(), fid.u32().unwrap(), arm.u32().unwrap());
    let mut fids = std::collections::BTreeSet::new();
    let (mut rows, mut arms) = (0, std::collections::BTreeSet::new());
    for i in 0..t.height() {
        if cell.get(i) == Some(dehb[0]) {
            fids.insert(fid.get(i).unwrap());
            arms.insert(arm.get(i).unwrap());
            rows += 1;
        }
    }
    assert!(fids.contains(&1) && fids.contains(&27) && fids.iter().all(|f| (1..=27).contains(f)));
    assert!(arms.len() < rows, "{} arms in {rows} rows", arms.len());

    // --one-minus: CARP-S's cost here is 1 - accuracy; imported as the accuracy, maximised.
    let flipped = dir.join("accuracy");
    run_ok(&[
        "import",
        "carps",
        s(&fx.join("runs")),
        "--out",
        s(&flipped),
        "--one-minus",
    ]);
    let lock = std::fs::read_to_string(flipped.join("experiment.lock.toml")).unwrap();
    assert!(lock.contains("1 - cost"), "{lock}");
    let runs = read_parquet(&flipped.join("runs.parquet")).unwrap();
    let dir_col = runs.column("direction").unwrap().str().unwrap().clone();
    assert!(dir_col.iter().all(|d| d == Some("maximize")));
    for (key, (best, ..)) in runs_by_policy_seed(&flipped) {
        let v = exp
            .values()
            .find(|v| {
                format!("carps:{}", v["optimizer_id"].as_str().unwrap()) == key.0
                    && v["seed"].as_u64() == Some(key.1)
            })
            .unwrap();
        assert_eq!(best, 1.0 - v["final_cost_inc"].as_f64().unwrap(), "{key:?}");
    }

    // CARP-S's elapsed time: equal to its analysis' `time` at each run's last evaluation.
    let out = dir.join("seconds");
    run_ok(&[
        "import",
        "carps",
        s(&fx.join("runs")),
        "--out",
        s(&out),
        "--clock",
        "seconds",
    ]);
    let t = read_parquet(&out.join("trajectories.parquet")).unwrap();
    let runs = read_parquet(&out.join("runs.parquet")).unwrap();
    let c = |n: &str| t.column(n).unwrap().as_materialized_series().clone();
    let (cell, time) = (c("cell"), c("time"));
    let (cell, time) = (cell.u64().unwrap(), time.f64().unwrap());
    let mut last: BTreeMap<u64, f64> = BTreeMap::new();
    for i in 0..t.height() {
        last.insert(cell.get(i).unwrap(), time.get(i).unwrap());
    }
    let rp = runs.column("policy").unwrap().str().unwrap().clone();
    let rs = runs.column("seed").unwrap().u64().unwrap().clone();
    let rc = runs.column("cell").unwrap().u64().unwrap().clone();
    for (name, v) in &exp {
        let i = (0..runs.height())
            .find(|&i| {
                rp.get(i) == Some(&format!("carps:{}", v["optimizer_id"].as_str().unwrap()))
                    && rs.get(i) == v["seed"].as_u64()
            })
            .unwrap();
        let got = last[&rc.get(i).unwrap()];
        let want = v["last_time"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-9 * want.max(1.0),
            "{name}: {got} vs {want}"
        );
    }
}

/// A copy of one CARP-S run folder of the fixture, its log and config passed through the edits.
fn carps_variant(
    name: &str,
    log: impl Fn(&str) -> String,
    config: impl Fn(&str) -> String,
) -> PathBuf {
    let src =
        carps_run("runs/RandomSearch/banditbench-sklearn-grid/phoneme/0/hist-gradient-boosting/0");
    let dir = scratch(name).join("run");
    std::fs::create_dir_all(dir.join(".hydra")).unwrap();
    let l = std::fs::read_to_string(src.join("trial_logs.jsonl")).unwrap();
    std::fs::write(dir.join("trial_logs.jsonl"), log(&l)).unwrap();
    let c = std::fs::read_to_string(src.join(".hydra/config.yaml")).unwrap();
    std::fs::write(dir.join(".hydra/config.yaml"), config(&c)).unwrap();
    dir
}

/// Line `n` (1-based) of `text` through `edit`.
fn edit_line(text: &str, n: usize, edit: impl Fn(&str) -> String) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { edit(l) } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn carps_failed_and_pending_trials_and_malformed_runs() {
    let out = |d: &Path| d.parent().unwrap().join("out");
    let same = |t: &str| t.to_string();
    // Variants of a real run: evaluation 3 crashed (status 2), evaluation 20 still running (0).
    let d = carps_variant(
        "carps-status",
        |l| {
            let l = edit_line(l, 3, |x| x.replace("\"status\": 1", "\"status\": 2"));
            edit_line(&l, 20, |x| x.replace("\"status\": 1", "\"status\": 0"))
        },
        same,
    );
    let o = run_ok(&["import", "carps", s(&d), "--out", s(&out(&d))]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1 failed trials kept as decisions without a value; 1 pending"),
        "{text}"
    );
    let got = runs_by_policy_seed(&out(&d));
    let (_, decisions, failures, _) = got[&("carps:RandomSearch".to_string(), 0)];
    assert_eq!((decisions, failures), (19, 1));
    let t = read_parquet(&out(&d).join("trajectories.parquet")).unwrap();
    let reward = t.column("reward").unwrap().f64().unwrap().clone();
    assert!(reward.get(2).is_none_or(f64::is_nan));

    // A line that is not JSON: the file, the line and column.
    let d = carps_variant(
        "carps-json",
        |l| edit_line(l, 4, |x| x[..40].to_string()),
        same,
    );
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(
        e.contains("trial_logs.jsonl: line 4, column") && e.contains("not valid JSON"),
        "{e}"
    );
    // A status CARP-S does not have; a multi-objective cost; a missing field.
    let d = carps_variant(
        "carps-status7",
        |l| edit_line(l, 2, |x| x.replace("\"status\": 1", "\"status\": 7")),
        same,
    );
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(
        e.contains("line 2, field 'trial_value.status': 7 is not a CARP-S status"),
        "{e}"
    );
    let d = carps_variant(
        "carps-mo",
        |l| {
            edit_line(l, 5, |x| {
                let v: Value = serde_json::from_str(x).unwrap();
                let mut v = v.clone();
                v["trial_value"]["cost"] = serde_json::json!([0.1, 0.2]);
                v.to_string()
            })
        },
        same,
    );
    // One trial's list of two costs among single costs: runs of one objective and of two.
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(
        e.contains(
            "reports 1 cost(s) where the runs report 2; import runs of the same objectives together"
        ),
        "{e}"
    );
    let d = carps_variant(
        "carps-no-n",
        |l| edit_line(l, 6, |x| x.replace("\"n_trials\"", "\"trials\"")),
        same,
    );
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(e.contains("line 6, field 'n_trials': missing"), "{e}");
    // No Hydra config; a config without the seed; an interpolation to a key that is not there;
    // damaged YAML.
    let d = carps_variant("carps-no-config", same, same);
    std::fs::remove_file(d.join(".hydra/config.yaml")).unwrap();
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(e.contains(".hydra/config.yaml: cannot read"), "{e}");
    let d = carps_variant("carps-no-seed", same, |c| c.replacen("seed: 0\n", "", 1));
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(
        e.contains("config.yaml: no key 'seed'") && e.contains("--seed-key"),
        "{e}"
    );
    let d = carps_variant("carps-interp", same, |c| {
        c.replace("task_id: ${task.name}", "task_id: ${task.title}")
    });
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(
        e.contains("key 'task_id': '${task.title}' refers to 'task.title'"),
        "{e}"
    );
    let d = carps_variant("carps-yaml", same, |c| {
        c.replacen("seed: 0\n", "seed: [0\n", 1)
    });
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&out(&d))], 1);
    assert!(
        e.contains("config.yaml: line") && e.contains("not valid YAML"),
        "{e}"
    );
    // A folder with no run in it.
    let d = scratch("carps-empty");
    let e = run_fails(&["import", "carps", s(&d), "--out", s(&d.join("out"))], 1);
    assert!(e.contains("no CARP-S run here"), "{e}");
}

#[test]
fn hposuite_runs_import_with_what_pandas_reads_from_them() {
    let dir = scratch("import-hposuite");
    let fx = fixtures("hposuite");
    let exp = expected(&fx);
    let out = dir.join("hs");
    let o = run_ok(&[
        "import",
        "hposuite",
        s(&fx),
        "--out",
        s(&out),
        "--task",
        "phoneme/0/hist-gradient-boosting",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("imported 4 runs (2 policies") && text.contains("20 trials"),
        "{text}"
    );
    let got = runs_by_policy_seed(&out);
    assert_eq!(got.len(), exp.len());
    for (name, v) in &exp {
        let key = (
            format!("hposuite:{}", v["optimizer"].as_str().unwrap()),
            v["seed"].as_u64().unwrap(),
        );
        let (best, decisions, failures, budget) = got[&key];
        // hposuite stores the objective as float32; pandas and the importer read the same value.
        assert_eq!(best, v["best"].as_f64().unwrap(), "{name}");
        assert_eq!(decisions, v["rows"].as_u64().unwrap(), "{name}");
        assert_eq!(failures, 0);
        assert_eq!(budget, v["last_budget_used"].as_f64().unwrap(), "{name}");
    }
    // Without --task the benchmark's name is the unit, kept whole.
    let out = dir.join("named");
    run_ok(&["import", "hposuite", s(&fx), "--out", s(&out)]);
    let runs = read_parquet(&out.join("runs.parquet")).unwrap();
    let ds = runs.column("dataset").unwrap().str().unwrap().clone();
    assert!(
        ds.iter()
            .all(|d| d == Some("banditbench-sklearn-grid-phoneme"))
    );
}

/// A copy of one hposuite run file of the fixture, passed through `edit`.
fn hposuite_variant(name: &str, edit: impl Fn(DataFrame) -> DataFrame) -> PathBuf {
    let fx = fixtures("hposuite");
    let src = std::fs::read_dir(&fx)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .min()
        .unwrap();
    let df = read_parquet(&src).unwrap();
    let mut df = edit(df);
    let dir = scratch(name);
    let path = dir.join("run.parquet");
    ParquetWriter::new(std::fs::File::create(&path).unwrap())
        .finish(&mut df)
        .unwrap();
    path
}

#[test]
fn malformed_hposuite_files_are_refused_naming_file_row_and_column() {
    let out = |p: &Path| p.parent().unwrap().join("out");
    let fails = |p: &Path| run_fails(&["import", "hposuite", s(p), "--out", s(&out(p))], 1);
    // A missing column: the file, the column, and what the file has.
    let p = hposuite_variant("hs-no-seed", |df| df.drop("run.seed").unwrap());
    let e = fails(&p);
    assert!(
        e.contains("run.parquet: no column 'run.seed'") && e.contains("its columns are"),
        "{e}"
    );
    // Two seeds in one file: one file is one run.
    let p = hposuite_variant("hs-two-seeds", |mut df| {
        let n = df.height();
        let seeds: Vec<u8> = (0..n).map(|i| if i == 7 { 9 } else { 0 }).collect();
        df.with_column(Column::new("run.seed".into(), seeds))
            .unwrap();
        df
    });
    let e = fails(&p);
    assert!(
        e.contains("row 8, column 'run.seed': '9' differs from '0' in row 1"),
        "{e}"
    );
    // A count of two objectives without the second's columns.
    let p = hposuite_variant("hs-mo", |mut df| {
        let n = df.height();
        df.with_column(Column::new("problem.objective.count".into(), vec![2u8; n]))
            .unwrap();
        df
    });
    let e = fails(&p);
    assert!(
        e.contains("no column 'problem.objective.2.name' (hposuite writes it in every run's file)"),
        "{e}"
    );
    // A missing budget: the row.
    let p = hposuite_variant("hs-no-budget", |mut df| {
        let n = df.height();
        let b: Vec<Option<f64>> = (0..n)
            .map(|i| if i == 3 { None } else { Some(i as f64 + 1.0) })
            .collect();
        df.with_column(Column::new("result.budget_used_total".into(), b))
            .unwrap();
        df
    });
    let e = fails(&p);
    assert!(
        e.contains("row 4, column 'result.budget_used_total': the budget used is missing"),
        "{e}"
    );
    // A file that is not parquet.
    let d = scratch("hs-not-parquet");
    let p = d.join("run.parquet");
    std::fs::write(&p, "config.id,run.seed\n").unwrap();
    let e = fails(&p);
    assert!(e.contains("run.parquet: cannot read as parquet"), "{e}");
}

/// A parquet file's columns as f32 bit patterns / strings / ints, for exact comparison.
fn f32_bits(df: &DataFrame, name: &str) -> Vec<u32> {
    let c = df.column(name).unwrap().cast(&DataType::Float32).unwrap();
    c.f32()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_bits())
        .collect()
}

fn ints(df: &DataFrame, name: &str) -> Vec<i64> {
    let c = df.column(name).unwrap().cast(&DataType::Int64).unwrap();
    c.i64().unwrap().iter().map(|v| v.unwrap()).collect()
}

fn strs(df: &DataFrame, name: &str) -> Vec<String> {
    let c = df.column(name).unwrap().cast(&DataType::String).unwrap();
    c.str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_string())
        .collect()
}

/// Pool -> blackbox (Syne Tune 0.16.0's own serialize, scripts/fixtures/blackbox_from_pool.py)
/// -> pool (`import blackbox`): the bundled sklearn-grid pool's HistGradientBoosting grid on
/// phoneme, three runs, comes back identical: dimensions and their levels, every configuration's
/// levels and hyperparameter values, and every unit's score, test score and seconds bit for bit.
#[test]
fn a_bundled_pool_survives_the_round_trip_through_syne_tunes_blackbox_format() {
    let dir = scratch("blackbox-round-trip");
    let out = dir.join("pool");
    let bb = fixtures("blackbox").join("sklearn-grid-hgb-phoneme");
    let o = run_ok(&[
        "import",
        "blackbox",
        s(&bb),
        "--out",
        s(&out),
        "--metric",
        "score",
        "--test-metric",
        "test_score",
        "--cost",
        "cost_s",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("625 configurations on 1 tasks x 3 runs, 27 units each"),
        "{text}"
    );
    let pool = root().join("traces/sklearn-grid");
    // The manifest: the learner's dimensions, in order, with their levels' text.
    let orig: toml::Table = std::fs::read_to_string(pool.join("pool.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let back: toml::Table = std::fs::read_to_string(out.join("pool.toml"))
        .unwrap()
        .parse()
        .unwrap();
    for k in ["metric", "direction", "units", "neighbours"] {
        assert_eq!(orig[k], back[k], "{k}");
    }
    let learner = |t: &toml::Table| {
        t["learners"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"].as_str() == Some("hist-gradient-boosting"))
            .unwrap()
            .clone()
    };
    let (lo, lb) = (learner(&orig), learner(&back));
    assert_eq!(lo["dims"], lb["dims"]);
    assert_eq!(lo["unit"], lb["unit"]);
    // Configurations: the same levels and values, in config-id order.
    let co = read_parquet(&pool.join("configs.parquet")).unwrap();
    let mask = co
        .column("learner")
        .unwrap()
        .str()
        .unwrap()
        .equal("hist-gradient-boosting");
    let co = co
        .filter(&mask)
        .unwrap()
        .sort(["config_id"], Default::default())
        .unwrap();
    let cb = read_parquet(&out.join("configs.parquet")).unwrap();
    assert_eq!(co.height(), 625);
    assert_eq!(strs(&co, "levels"), strs(&cb, "levels"));
    let json = |v: Vec<String>| -> Vec<Value> {
        v.iter().map(|t| serde_json::from_str(t).unwrap()).collect()
    };
    assert_eq!(json(strs(&co, "config")), json(strs(&cb, "config")));
    let id_of: BTreeMap<i64, i64> = ints(&co, "config_id")
        .into_iter()
        .zip(ints(&cb, "config_id"))
        .collect();
    // Curves: every (run, configuration, unit), bit for bit.
    let mut orig_rows = Vec::new();
    for run in 0..3 {
        let f = pool.join(format!(
            "curves/phoneme__hist-gradient-boosting__{run}.parquet"
        ));
        let df = read_parquet(&f).unwrap();
        let (r, c, u) = (ints(&df, "run"), ints(&df, "config_id"), ints(&df, "unit"));
        let (sc, ts, cs, st) = (
            f32_bits(&df, "score"),
            f32_bits(&df, "test_score"),
            f32_bits(&df, "cost_s"),
            strs(&df, "status"),
        );
        for i in 0..df.height() {
            orig_rows.push((r[i], id_of[&c[i]], u[i], sc[i], ts[i], cs[i], st[i].clone()));
        }
    }
    let df = read_parquet(&out.join("curves/00000-phoneme.parquet")).unwrap();
    let (r, c, u) = (ints(&df, "run"), ints(&df, "config_id"), ints(&df, "unit"));
    let (sc, ts, cs, st) = (
        f32_bits(&df, "score"),
        f32_bits(&df, "test_score"),
        f32_bits(&df, "cost_s"),
        strs(&df, "status"),
    );
    let mut back_rows: Vec<_> = (0..df.height())
        .map(|i| (r[i], c[i], u[i], sc[i], ts[i], cs[i], st[i].clone()))
        .collect();
    orig_rows.sort();
    back_rows.sort();
    assert_eq!(orig_rows.len(), 3 * 625 * 27);
    assert!(orig_rows == back_rows, "the curves differ");
    // And the pool loads and inspects like any other.
    let o = run_ok(&["traces", "inspect", s(&out)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("625 configurations, 27 units per curve"),
        "{text}"
    );
}

/// Replace `from` by `to` in the file at `p`.
/// Set element `index` (flat, C order) of a float .npy file to `value`; `widen` first rewrites a
/// float32 file as float64 (so that values beyond float32's range can be written).
fn set_npy(p: &Path, index: usize, value: f64, widen: bool) {
    let mut b = std::fs::read(p).unwrap();
    let header_len = if b[6] == 1 {
        u16::from_le_bytes([b[8], b[9]]) as usize + 10
    } else {
        u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize + 12
    };
    let header = String::from_utf8_lossy(&b[..header_len]).into_owned();
    let mut wide = header.contains("'<f8'");
    if widen && !wide {
        let floats: Vec<u8> = b[header_len..]
            .chunks(4)
            .flat_map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes())
            .collect();
        let mut head = b[..header_len].to_vec();
        let at = head.windows(5).position(|w| w == b"'<f4'").unwrap();
        head[at..at + 5].copy_from_slice(b"'<f8'");
        b = head.into_iter().chain(floats).collect();
        wide = true;
    }
    if wide {
        let at = header_len + 8 * index;
        b[at..at + 8].copy_from_slice(&value.to_le_bytes());
    } else {
        let at = header_len + 4 * index;
        b[at..at + 4].copy_from_slice(&(value as f32).to_le_bytes());
    }
    std::fs::write(p, b).unwrap();
}

fn replace_in(p: &Path, from: &str, to: &str) {
    let t = std::fs::read_to_string(p).unwrap();
    assert!(t.contains(from), "{}: no '{from}'", p.display());
    std::fs::write(p, t.replacen(from, to, 1)).unwrap();
}

#[test]
fn malformed_blackboxes_are_refused_naming_the_file_and_what_is_wrong() {
    let src = fixtures("blackbox").join("sklearn-grid-hgb-phoneme");
    let variant = |name: &str, edit: &dyn Fn(&Path)| -> PathBuf {
        let d = scratch(name).join("bb");
        std::fs::create_dir_all(&d).unwrap();
        for e in std::fs::read_dir(&src).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
        }
        edit(&d);
        d
    };
    let flags = ["--metric", "score", "--cost", "cost_s"];
    let fails = |d: &Path, extra: &[&str]| {
        let out = d.parent().unwrap().join("out");
        let mut args = vec!["import", "blackbox", s(d), "--out", s(&out)];
        args.extend_from_slice(extra);
        let e = run_fails(&args, 1);
        assert!(!out.exists(), "a failed import left {}", out.display());
        e
    };
    // An objective the blackbox does not have: the objectives it has.
    let d = variant("bb-objective", &|_| {});
    let e = fails(&d, &["--metric", "accuracy", "--cost", "cost_s"]);
    assert!(
        e.contains("--metric accuracy: the blackbox has no such objective; its objectives are score, test_score, cost_s"),
        "{e}"
    );
    // No seconds named.
    let e = fails(&d, &["--metric", "score"]);
    assert!(
        e.contains("--cost NAME") && e.contains("--elapsed NAME"),
        "{e}"
    );
    // No direction anywhere.
    let d = variant("bb-direction", &|d| {
        replace_in(
            &d.join("metadata.json"),
            "\"direction\": \"maximize\", ",
            "",
        )
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("metadata.json: no 'direction'") && e.contains("--direction"),
        "{e}"
    );
    // metadata.json naming a task the evaluations do not hold.
    let d = variant("bb-tasks", &|d| {
        replace_in(
            &d.join("metadata.json"),
            "[\"phoneme\"]",
            "[\"phoneme\", \"car\"]",
        )
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("objectives_evaluations.npy: shape [1, 625, 3, 27, 3] does not match 2 tasks"),
        "{e}"
    );
    // A file that is not .npy.
    let d = variant("bb-npy", &|d| {
        std::fs::write(d.join("fidelities_values.npy"), "1,2,3\n").unwrap();
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("fidelities_values.npy: not a NumPy .npy file"),
        "{e}"
    );
    // Evaluations cut short (a copy that stopped): the file, not a partial pool. And a header
    // promising 10^12 values in a small file: refused without reserving memory for them.
    let d = variant("bb-cut", &|d| {
        let p = d.join("objectives_evaluations.npy");
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() / 2]).unwrap();
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("objectives_evaluations.npy: ends before the values its shape promises"),
        "{e}"
    );
    let d = variant("bb-huge-shape", &|d| {
        let p = d.join("objectives_evaluations.npy");
        let mut b = std::fs::read(&p).unwrap();
        // 625 configurations become 999999999, the header padded to its old length (the
        // spaces before its closing newline), so that the values stay where they were.
        let shape = b"(1, 625, 3, 27, 3), }";
        let at = b.windows(shape.len()).position(|w| w == shape).unwrap();
        let end = at + b[at..].iter().position(|&c| c == b'\n').unwrap();
        let mut patched = b"(1, 999999999, 3, 27, 3), }".to_vec();
        patched.resize(end - at, b' ');
        b[at..end].copy_from_slice(&patched);
        std::fs::write(&p, &b).unwrap();
    });
    let e = fails(&d, &flags);
    assert!(e.contains("999999999"), "{e}");
    // A hyperparameter value outside its domain.
    let d = variant("bb-domain", &|d| {
        replace_in(
            &d.join("configspace.json"),
            "[4, 8, 16, 32, 64]",
            "[4, 8, 16, 32]",
        )
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("hyperparameters.parquet: row")
            && e.contains("column 'max_leaf_nodes': 64 is not among the domain's values"),
        "{e}"
    );
    // Values a pool cannot take, each named by task, configuration, seed and fidelity.
    let ev = |d: &Path| d.join("objectives_evaluations.npy");
    let d = variant("bb-nan-cost", &|d| set_npy(&ev(d), 2, f64::NAN, false));
    let e = fails(&d, &flags);
    assert!(
        e.contains("task 'phoneme' (index 0), configuration 0, seed 0, fidelity 1: cost_s is NaN")
            && e.contains("not a training time"),
        "{e}"
    );
    let d = variant("bb-negative-cost", &|d| set_npy(&ev(d), 2, -1.0, false));
    let e = fails(&d, &flags);
    assert!(
        e.contains("cost_s is -1") && e.contains("not negative"),
        "{e}"
    );
    let d = variant("bb-huge-score", &|d| set_npy(&ev(d), 0, 1e300, true));
    let e = fails(&d, &flags);
    assert!(e.contains("score is 1e300") && e.contains("32-bit"), "{e}");
    let d = variant("bb-inf-score", &|d| {
        set_npy(&ev(d), 3, f64::INFINITY, false)
    });
    let e = fails(&d, &flags);
    assert!(e.contains("fidelity 2: score is inf"), "{e}");
    // Names: none, twice.
    let d = variant("bb-no-objectives", &|d| {
        replace_in(
            &d.join("metadata.json"),
            "[\"score\", \"test_score\", \"cost_s\"]",
            "[]",
        )
    });
    let e = fails(&d, &flags);
    assert!(e.contains("'objectives_names' is empty"), "{e}");
    let d = variant("bb-task-twice", &|d| {
        replace_in(
            &d.join("metadata.json"),
            "[\"phoneme\"]",
            "[\"phoneme\", \"phoneme\"]",
        )
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("names the task 'phoneme' twice (entries 0 and 1)"),
        "{e}"
    );
    // No tasks, and a task named "": a pool `run` would refuse is refused at import.
    let d = variant("bb-no-tasks", &|d| {
        replace_in(&d.join("metadata.json"), "[\"phoneme\"]", "[]")
    });
    let e = fails(&d, &flags);
    assert!(e.contains("'task_names' is empty"), "{e}");
    let d = variant("bb-empty-task", &|d| {
        replace_in(&d.join("metadata.json"), "[\"phoneme\"]", "[\"\"]")
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("'task_names' entry 0 is \"\"; a task name must be non-empty"),
        "{e}"
    );
    // Damaged JSON: line and column.
    let d = variant("bb-json", &|d| {
        std::fs::write(d.join("metadata.json"), "{\"objectives_names\": [").unwrap();
    });
    let e = fails(&d, &flags);
    assert!(
        e.contains("metadata.json: line 1, column") && e.contains("not valid JSON"),
        "{e}"
    );
}

#[test]
fn deepcave_runs_import_with_what_deepcaves_own_reader_says() {
    let dir = scratch("import-deepcave");
    let fx = fixtures("deepcave");
    let exp = expected(&fx);
    for (name, v) in &exp {
        let out = dir.join(name);
        run_ok(&[
            "import",
            "deepcave",
            s(&fx.join(name)),
            "--task",
            "t",
            "--out",
            s(&out),
        ]);
        let got = runs_by_policy_seed(&out);
        assert_eq!(got.len(), 1);
        let ((policy, _), (best, decisions, failures, _)) = got.into_iter().next().unwrap();
        assert_eq!(policy, format!("deepcave:{name}"));
        assert_eq!(best, v["best"].as_f64().unwrap(), "{name}");
        assert_eq!(decisions, v["trials"].as_u64().unwrap(), "{name}");
        assert_eq!(failures, 0);
        // Each configuration is one arm: as many as DeepCAVE counts configurations.
        let t = read_parquet(&out.join("trajectories.parquet")).unwrap();
        let arms: std::collections::BTreeSet<u32> = t
            .column("arm")
            .unwrap()
            .u32()
            .unwrap()
            .iter()
            .flatten()
            .collect();
        assert_eq!(arms.len() as u64, v["configs"].as_u64().unwrap(), "{name}");
        let lock = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
        assert!(lock.contains(v["objective"].as_str().unwrap()), "{lock}");
    }
}

#[test]
fn malformed_deepcave_runs_are_refused_naming_file_row_and_column() {
    let src = fixtures("deepcave").join("run_3");
    let variant = |name: &str, edit: &dyn Fn(&str) -> String| -> PathBuf {
        let d = scratch(name).join("run_3");
        std::fs::create_dir_all(&d).unwrap();
        let t = std::fs::read_to_string(src.join("trials.csv")).unwrap();
        std::fs::write(d.join("trials.csv"), edit(&t)).unwrap();
        std::fs::copy(src.join("configspace.csv"), d.join("configspace.csv")).unwrap();
        d
    };
    let fails = |d: &Path, extra: &[&str]| {
        let out = d.parent().unwrap().join("out");
        let mut a = vec!["import", "deepcave", s(d), "--out", s(&out)];
        a.extend_from_slice(extra);
        run_fails(&a, 1)
    };
    let t = ["--task", "t"];
    // A trial that crashed is a failed decision; one still running is pending.
    let d = variant("dc-status", &|x| {
        edit_line(
            &edit_line(x, 3, |l| l.replacen("success", "crashed", 1)),
            5,
            |l| l.replacen("success", "running", 1),
        )
    });
    let out = d.parent().unwrap().join("ok");
    let o = run_ok(&["import", "deepcave", s(&d), "--task", "t", "--out", s(&out)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1 failed trials kept as decisions without a value; 1 pending"),
        "{text}"
    );
    // A status DeepCAVE does not have; a score that is not a number; no objective column; no
    // configspace.csv; no task.
    let d = variant("dc-bad-status", &|x| {
        edit_line(x, 4, |l| l.replacen("success", "great", 1))
    });
    let e = fails(&d, &t);
    assert!(
        e.contains("row 3 (line 4), column 'status': 'great' is not a DeepCAVE status"),
        "{e}"
    );
    let d = variant("dc-bad-value", &|x| {
        edit_line(x, 6, |l| l.replacen(",0.", ",oops0.", 1))
    });
    let e = fails(&d, &t);
    assert!(
        e.contains("row 5 (line 6)") && e.contains("is not a number"),
        "{e}"
    );
    let d = variant("dc-no-objective", &|x| {
        x.replacen("metric:accuracy", "accuracy", 1)
    });
    let e = fails(&d, &t);
    assert!(e.contains("no objective column"), "{e}");
    let d = variant("dc-no-space", &|x| x.to_string());
    std::fs::remove_file(d.join("configspace.csv")).unwrap();
    let e = fails(&d, &t);
    assert!(e.contains("no configspace.csv beside trials.csv"), "{e}");
    let d = variant("dc-no-task", &|x| x.to_string());
    let e = fails(&d, &[]);
    assert!(
        e.contains("does not record the task") && e.contains("--task"),
        "{e}"
    );
    // A naming rule no folder follows: the folders found.
    let e = fails(&d, &["--task", "t", "--names", "{policy}.{seed}"]);
    assert!(
        e.contains("no run folder's name follows") && e.contains("run_3"),
        "{e}"
    );
}

/// Every time an importer reads, set to NaN, infinity or a negative number in one row of a real
/// fixture, is refused naming the file, the row (or line) and the field: no importer writes a
/// decision at time NaN or −∞, or lets a negative duration pull its clock back.
#[test]
fn every_time_column_refuses_non_finite_and_negative_values() {
    let bad = ["NaN", "inf", "-1"];
    let mut checked = 0;
    // Syne Tune: st_tuner_time in results.csv.zip, row 5.
    for v in bad {
        let d = syne_tune_variant(
            &format!("time-st-{v}"),
            |m| m.to_string(),
            |csv| {
                let mut lines: Vec<String> = csv.lines().map(String::from).collect();
                let at = lines[0]
                    .split(',')
                    .position(|c| c == "st_tuner_time")
                    .unwrap();
                let mut row: Vec<String> = lines[5].split(',').map(String::from).collect();
                row[at] = v.into();
                lines[5] = row.join(",");
                lines.join("\n") + "\n"
            },
        );
        let out = d.parent().unwrap().join("out");
        let e = run_fails(&["import", "syne-tune", s(&d), "--out", s(&out)], 1);
        assert!(
            e.contains("row 5 (line 6), column 'st_tuner_time'"),
            "{v}: {e}"
        );
        checked += 1;
    }
    // Optuna: a trial's cost attribute under --clock attr:cost_s (a journal writes Python's NaN,
    // Infinity), and its completion date under --clock seconds.
    let log = std::fs::read_to_string(fixtures("optuna").join("journal.log")).unwrap();
    for v in ["NaN", "Infinity", "-1"] {
        let dir = scratch(&format!("time-optuna-{v}"));
        let first = log.find("\"cost_s\":").unwrap() + "\"cost_s\":".len();
        let end = first + log[first..].find('}').unwrap();
        let p = dir.join("journal.log");
        std::fs::write(&p, format!("{}{v}{}", &log[..first], &log[end..])).unwrap();
        let out = dir.join("out");
        let args = ["import", "optuna", s(&p), "--out", s(&out)];
        let e = run_fails(&[&args[..], &["--clock", "attr:cost_s"]].concat(), 1);
        assert!(
            e.contains("trial 0: user attribute 'cost_s' is") && e.contains("non-negative"),
            "{v}: {e}"
        );
        checked += 1;
    }
    let first = log.find("\"datetime_complete\":\"").unwrap() + "\"datetime_complete\":\"".len();
    let end = first + log[first..].find('"').unwrap();
    for v in ["NaN", "2026-13-01T00:00:00.000000", "-1"] {
        let dir = scratch("time-optuna-date");
        let p = dir.join("journal.log");
        std::fs::write(&p, format!("{}{v}{}", &log[..first], &log[end..])).unwrap();
        let out = dir.join("out");
        let args = ["import", "optuna", s(&p), "--out", s(&out)];
        let e = run_fails(&[&args[..], &["--clock", "seconds"]].concat(), 1);
        assert!(e.contains("datetime_complete") && e.contains(v), "{v}: {e}");
        checked += 1;
    }
    // CARP-S: an evaluation's virtual_time, and the clocks n_trials and starttime, line 5 (JSON
    // has no NaN or infinity; Python's json writes them, and they are refused as not JSON).
    for (field, clock, v) in [
        ("virtual_time", "seconds", "-1"),
        ("virtual_time", "seconds", "NaN"),
        ("starttime", "seconds", "-1e300"),
        ("n_trials", "trials", "-1"),
        ("n_trials", "trials", "Infinity"),
    ] {
        let d = carps_variant(
            &format!("time-carps-{field}-{v}"),
            |l| {
                edit_line(l, 5, |x| {
                    let key = format!("\"{field}\": ");
                    let a = x.find(&key).unwrap() + key.len();
                    let b = a + x[a..].find([',', '}']).unwrap();
                    format!("{}{v}{}", &x[..a], &x[b..])
                })
            },
            |c| c.to_string(),
        );
        let out = d.parent().unwrap().join("out");
        let e = run_fails(
            &["import", "carps", s(&d), "--clock", clock, "--out", s(&out)],
            1,
        );
        assert!(e.contains("trial_logs.jsonl: line 5"), "{field} {v}: {e}");
        checked += 1;
    }
    // hposuite: result.budget_used_total, row 3.
    for v in [f64::NAN, f64::INFINITY, -1.0] {
        let p = hposuite_variant(&format!("time-hposuite-{v}"), |mut df| {
            let c = df.column("result.budget_used_total").unwrap();
            let mut vals: Vec<Option<f64>> = c
                .cast(&DataType::Float64)
                .unwrap()
                .f64()
                .unwrap()
                .iter()
                .collect();
            vals[2] = Some(v);
            df.with_column(Column::new("result.budget_used_total".into(), vals))
                .unwrap();
            df
        });
        let out = p.parent().unwrap().join("out");
        let e = run_fails(
            &["import", "hposuite", s(&p), "--task", "t", "--out", s(&out)],
            1,
        );
        assert!(
            e.contains("row 3") && e.contains("result.budget_used_total"),
            "{v}: {e}"
        );
        checked += 1;
    }
    // DeepCAVE: start_time and end_time, line 4 (row 3).
    let src = fixtures("deepcave").join("run_3");
    for (col, v) in [
        ("start_time", "nan"),
        ("start_time", "-1"),
        ("end_time", "inf"),
        ("end_time", "-1"),
    ] {
        let d = scratch(&format!("time-deepcave-{col}-{v}")).join("run_3");
        std::fs::create_dir_all(&d).unwrap();
        let t = std::fs::read_to_string(src.join("trials.csv")).unwrap();
        let at = t
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == col)
            .unwrap();
        let t = edit_line(&t, 4, |l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f[at] = v;
            f.join(",")
        });
        std::fs::write(d.join("trials.csv"), t).unwrap();
        std::fs::copy(src.join("configspace.csv"), d.join("configspace.csv")).unwrap();
        let out = d.parent().unwrap().join("out");
        let e = run_fails(
            &["import", "deepcave", s(&d), "--task", "t", "--out", s(&out)],
            1,
        );
        assert!(
            e.contains(&format!("row 3 (line 4), column '{col}'")),
            "{col} {v}: {e}"
        );
        checked += 1;
    }
    assert_eq!(checked, 3 + 3 + 3 + 5 + 3 + 4);
}

/// A run's `failures` counts its trials that failed within the budget, as its decisions do:
/// with `--budget` cutting a run short, failures past the cut are left out with the rest (the
/// Optuna study `mixed-0` fails 6 of its 31 trials). Checked against the failed decisions that
/// trajectories.parquet holds, cell by cell.
#[test]
fn failures_count_only_trials_that_failed_within_the_budget() {
    let dir = scratch("failures-budget");
    let journal = fixtures("optuna").join("journal.log");
    let failed_in = |out: &Path| -> BTreeMap<u64, (u64, u64)> {
        let runs = read_parquet(&out.join("runs.parquet")).unwrap();
        let tr = read_parquet(&out.join("trajectories.parquet")).unwrap();
        let mut arms: BTreeMap<u64, std::collections::BTreeSet<u32>> = BTreeMap::new();
        let (cell, action, arm) = (
            tr.column("cell").unwrap().u64().unwrap().clone(),
            tr.column("action").unwrap().str().unwrap().clone(),
            tr.column("arm").unwrap().u32().unwrap().clone(),
        );
        for i in 0..tr.height() {
            if action.get(i) == Some("failed") {
                arms.entry(cell.get(i).unwrap())
                    .or_default()
                    .insert(arm.get(i).unwrap());
            }
        }
        let (c, f) = (
            runs.column("cell").unwrap().u64().unwrap().clone(),
            runs.column("failures").unwrap().u64().unwrap().clone(),
        );
        (0..runs.height())
            .map(|i| {
                let cell = c.get(i).unwrap();
                let seen = arms.get(&cell).map_or(0, |s| s.len() as u64);
                (cell, (f.get(i).unwrap(), seen))
            })
            .collect()
    };
    let mut totals = Vec::new();
    for budget in ["31", "10"] {
        let out = dir.join(format!("b{budget}"));
        run_ok(&[
            "import",
            "optuna",
            s(&journal),
            "--budget",
            budget,
            "--out",
            s(&out),
        ]);
        let per_cell = failed_in(&out);
        for (cell, (failures, seen)) in &per_cell {
            assert_eq!(failures, seen, "budget {budget}, cell {cell}");
        }
        totals.push(per_cell.values().map(|v| v.0).sum::<u64>());
    }
    // The whole study fails 6 trials; ten trials in, fewer.
    assert_eq!(totals[0], 6, "{totals:?}");
    assert!(totals[1] < 6, "{totals:?}");
}

/// Column names and types of a parquet file, in order.
fn schema_of(path: &Path) -> Vec<(String, String)> {
    read_parquet(path)
        .unwrap()
        .schema()
        .iter()
        .map(|(n, t)| (n.to_string(), format!("{t:?}")))
        .collect()
}

/// One results schema: folders written by `run` (a learner-level world and the pool world) and by
/// every importer have the same columns, in the same order, of the same types, in runs.parquet
/// and trajectories.parquet alike, so `report` reads them as one.
#[test]
fn runs_and_every_importers_folders_share_one_schema() {
    let dir = scratch("one-schema");
    let mut folders: Vec<(String, PathBuf)> = Vec::new();
    // A learner-level run and a pool run (with several workers, the richest trajectories).
    let tiny = common::experiment(
        &dir,
        "learner",
        &format!(
            "seed = 1\n[world]\nkind = \"time-sliced\"\nbudgets = [6.0]\nslice = 1.0\n{}",
            common::POLICIES
        ),
    );
    run_ok(&["run", s(&tiny), "--out", s(&dir.join("learner")), "--quiet"]);
    folders.push(("run, time-sliced".into(), dir.join("learner")));
    let pool = dir.join("pool.toml");
    std::fs::write(
        &pool,
        format!(
            "name = \"pool\"\ntraces = {:?}\nseed = 1\n[tasks]\ndatasets = [\"car\"]\nruns = [0]\nlearners = [\"mlp\"]\n[world]\nkind = \"pool\"\nper_learner = true\nworkers = 2\nbudget_unit = \"units\"\nbudgets = [30]\n[[policies]]\nfamily = \"asha\"\n",
            root().join("traces/sklearn-grid").display().to_string()
        ),
    )
    .unwrap();
    run_ok(&["run", s(&pool), "--out", s(&dir.join("pool")), "--quiet"]);
    folders.push(("run, pool, 2 workers".into(), dir.join("pool")));
    // Every importer on its recorded fixture.
    let imports: Vec<(&str, Vec<String>)> = vec![
        ("syne-tune", vec![s(&fixtures("syne-tune")).into()]),
        (
            "optuna",
            vec![s(&fixtures("optuna").join("journal.log")).into()],
        ),
        ("carps", vec![s(&fixtures("carps").join("runs")).into()]),
        (
            "hposuite",
            vec![
                s(&fixtures("hposuite")).into(),
                "--task".into(),
                "phoneme/0/hist-gradient-boosting".into(),
            ],
        ),
        (
            "deepcave",
            vec![
                s(&fixtures("deepcave").join("run_1")).into(),
                "--task".into(),
                "t".into(),
            ],
        ),
    ];
    for (tool, args) in imports {
        let out = dir.join(tool);
        let mut argv: Vec<String> = vec!["import".into(), tool.into()];
        argv.extend(args);
        argv.extend(["--out".into(), s(&out).into()]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        run_ok(&argv);
        folders.push((format!("import {tool}"), out));
    }
    for file in ["runs.parquet", "trajectories.parquet"] {
        let (first, want) = (&folders[0].0, schema_of(&folders[0].1.join(file)));
        assert!(want.len() > 10, "{file}: {want:?}");
        for (what, folder) in &folders[1..] {
            assert_eq!(
                schema_of(&folder.join(file)),
                want,
                "{file} of {what} differs from {first}'s"
            );
        }
    }
}

/// runs.parquet's rows of several objectives as "policy.dataset.seed" (the fixture's study
/// names, the prefix dropped) -> (hv_regret, front_size).
fn mo_runs(dir: &Path) -> BTreeMap<String, (f64, u64)> {
    let df = read_parquet(&dir.join("runs.parquet")).unwrap();
    let col = |n: &str| df.column(n).unwrap().as_materialized_series().clone();
    let (p, d, seed, hv, fs) = (
        col("policy"),
        col("dataset"),
        col("seed"),
        col("hv_regret"),
        col("front_size"),
    );
    (0..df.height())
        .map(|i| {
            let policy = p.str().unwrap().get(i).unwrap();
            (
                format!(
                    "{}.{}.{}",
                    policy.trim_start_matches("optuna:"),
                    d.str().unwrap().get(i).unwrap(),
                    seed.u64().unwrap().get(i).unwrap()
                ),
                (
                    hv.f64().unwrap().get(i).unwrap(),
                    fs.u64().unwrap().get(i).unwrap(),
                ),
            )
        })
        .collect()
}

/// `import optuna` of the multi-objective walkthrough studies, measured on `traces/nasbench201`.
fn import_optuna_mo(out: &Path, extra: &[&str]) -> std::process::Output {
    let log = root().join("examples/other-tools/optuna-mo/journal.log");
    let pool = root().join("traces/nasbench201");
    let mut a = vec![
        "import",
        "optuna",
        s(&log),
        "--names",
        "{policy}.{dataset}.{seed}",
        "--pool",
        s(&pool),
        "--out",
        s(out),
    ];
    a.extend(extra);
    run_ok(&a)
}

#[test]
fn optuna_studies_of_two_objectives_import_with_the_hypervolume_regret_optuna_computes() {
    // 18 studies of Optuna 5.0.0's MO-TPE, NSGA-II and random samplers on NAS-Bench-201
    // (val_acc x latency), 300 trials each; expected.json holds each study's hypervolume regret
    // computed in Python with Optuna's own hypervolume against the pool's true front and the
    // nadir + 0.1 x range reference point, and its Pareto front's distinct points.
    let dir = scratch("import-optuna-mo");
    let want = expected(&root().join("examples/other-tools/optuna-mo"));
    let out = dir.join("all");
    import_optuna_mo(&out, &[]);
    let got = mo_runs(&out);
    assert_eq!(got.len(), 18);
    for (study, (hv, front)) in &got {
        let w = &want[study];
        let e = w["hv_regret"].as_f64().unwrap();
        assert!((hv - e).abs() <= 1e-12 * e.abs(), "{study}: {hv} vs {e}");
        assert_eq!(*front, w["distinct_front"].as_u64().unwrap(), "{study}");
    }
    // The lock file's reference points are Python's, and the trajectory's last hypervolume
    // regret is the run's.
    let lock = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
    let lock: toml::Table = toml::from_str(&lock).unwrap();
    let tasks = lock["resolved"]["objectives"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    for t in tasks {
        let name = t["task"].as_str().unwrap();
        let w = &want[&format!("random.{}.0", name.split('/').next().unwrap())];
        for (k, key) in [
            (0, "reference"),
            (1, "reference"),
            (0, "ideal"),
            (1, "ideal"),
        ] {
            let (a, b) = (
                t[key].as_array().unwrap()[k].as_float().unwrap(),
                w[key][k].as_f64().unwrap(),
            );
            assert!((a - b).abs() <= 1e-12 * b.abs(), "{name} {key}: {a} vs {b}");
        }
    }
    let traj = read_parquet(&out.join("trajectories.parquet")).unwrap();
    let (cells, hvs) = (
        traj.column("cell").unwrap().u64().unwrap().clone(),
        traj.column("hv_regret").unwrap().f64().unwrap().clone(),
    );
    let mut last: BTreeMap<u64, f64> = BTreeMap::new();
    for i in 0..traj.height() {
        last.insert(cells.get(i).unwrap(), hvs.get(i).unwrap());
    }
    let runs = read_parquet(&out.join("runs.parquet")).unwrap();
    let run_cells = runs.column("cell").unwrap().u64().unwrap().clone();
    let run_hv = runs.column("hv_regret").unwrap().f64().unwrap().clone();
    assert_eq!(last.len(), runs.height());
    for i in 0..runs.height() {
        assert_eq!(
            last[&run_cells.get(i).unwrap()],
            run_hv.get(i).unwrap(),
            "cell {i}"
        );
    }
    // --budget 100: the first 100 trials' archive.
    let cut = dir.join("cut");
    import_optuna_mo(&cut, &["--budget", "100"]);
    for (study, (hv, _)) in mo_runs(&cut) {
        let e = want[&study]["hv_regret_at_100"].as_f64().unwrap();
        assert!((hv - e).abs() <= 1e-12 * e.abs(), "{study}: {hv} vs {e}");
    }
    // Ranked beside banditbench's own runs of the same pool, objectives and budget; a run
    // measured against other reference points is refused.
    let exp = |name: &str, margin: f64| {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                r#"name = "{name}"
traces = "{}"
seed = 1
repetitions = 2

[tasks]
datasets = ["cifar10", "cifar100", "imagenet"]
runs = [0]

[world]
kind = "pool"
budget_unit = "evaluations"
budgets = [300]
objectives = ["val_acc", "latency"]
reference_margin = {margin}

[[policies]]
family = "random-search"
"#,
                root().join("traces/nasbench201").display()
            ),
        )
        .unwrap();
        let res = dir.join(name);
        run_ok(&["run", s(&path), "--out", s(&res)]);
        res
    };
    let ours = exp("ours", 0.1);
    let o = run_ok(&["report", s(&ours), s(&out), "--out", s(&dir.join("joint"))]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("hypervolume regret") && text.contains("optuna:motpe"),
        "{text}"
    );
    let joint = mean_scores(&dir.join("joint"));
    assert_eq!(joint.len(), 4, "{joint:?}");
    let motpe: Vec<f64> = got
        .iter()
        .filter(|(k, _)| k.starts_with("motpe."))
        .map(|(_, v)| v.0)
        .collect();
    let mean = motpe.iter().sum::<f64>() / motpe.len() as f64;
    assert!((joint["optuna:motpe"] - mean).abs() < 1e-12, "{joint:?}");
    let other = exp("other", 0.2);
    let e = run_fails(
        &["report", s(&other), s(&out), "--out", s(&dir.join("x"))],
        1,
    );
    assert!(e.contains("with other reference points"), "{e}");
}

#[test]
fn optuna_studies_of_two_objectives_are_refused_without_a_pool_or_with_other_objectives() {
    let dir = scratch("import-optuna-mo-bad");
    let log = root().join("examples/other-tools/optuna-mo/journal.log");
    let single = root().join("examples/other-tools/optuna/journal.log");
    let nas = root().join("traces/nasbench201");
    let x = dir.join("x");
    let fails = |extra: &[&str]| -> String {
        let mut a = vec![
            "import",
            "optuna",
            s(&log),
            "--names",
            "{policy}.{dataset}.{seed}",
            "--out",
            s(&x),
        ];
        a.extend(extra);
        run_fails(&a, 1)
    };
    let e = fails(&[]);
    assert!(
        e.contains("these optuna runs have 2 objectives: give --pool DIR"),
        "{e}"
    );
    let e = fails(&["--pool", s(&nas), "--objectives", "val_acc"]);
    assert!(
        e.contains("--objectives names 1 objective(s) (val_acc), but the runs report 2 values"),
        "{e}"
    );
    let e = fails(&["--pool", s(&nas), "--objectives", "val_acc,size"]);
    assert!(
        e.contains("has no objective 'size'; it has: val_acc, train_time, latency, model_size"),
        "{e}"
    );
    let e = fails(&["--pool", s(&nas), "--objectives", "latency,val_acc"]);
    assert!(
        e.contains(
            "objective 'latency': the runs maximize it but the pool nasbench201 minimizes it"
        ),
        "{e}"
    );
    // A pool of one objective (its score).
    let taskset = root().join("traces/taskset");
    let e = fails(&["--pool", s(&taskset)]);
    assert!(
        e.contains(
            "has no objective 'val_acc'; it has: none (its pool.toml has no [[objectives]])"
        ),
        "{e}"
    );
    // A rule that reads the sampler as the dataset: task motpe/0 is not in the pool.
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&log),
            "--names",
            "{dataset}.{policy}.{seed}",
            "--pool",
            s(&nas),
            "--out",
            s(&x),
        ],
        1,
    );
    assert!(
        e.contains("task motpe/0 is not in the pool") && e.contains("cifar10/0"),
        "{e}"
    );
    let e = fails(&["--pool", s(&nas), "--one-minus"]);
    assert!(
        e.contains("--one-minus") && e.contains("2 objectives"),
        "{e}"
    );
    let refs = dir.join("refs.csv");
    std::fs::write(&refs, "dataset,run,val_acc,latency\ncifar10,0,10,0.05\n").unwrap();
    let e = fails(&["--pool", s(&nas), "--reference", s(&refs)]);
    assert!(e.contains("has no row for dataset cifar100, run 0"), "{e}");
    let e = fails(&["--pool", s(&nas), "--reference-margin", "-1"]);
    assert!(e.contains("--reference-margin is -1"), "{e}");
    // Studies of one objective and of two in one import; a pool for studies of one.
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&single),
            s(&log),
            "--names",
            "{policy}.{dataset}.{seed}",
            "--pool",
            s(&nas),
            "--out",
            s(&dir.join("x")),
        ],
        1,
    );
    assert!(
        e.contains("has directions [maximize, minimize] but") && e.contains("has [maximize]"),
        "{e}"
    );
    let e = run_fails(
        &[
            "import",
            "optuna",
            s(&single),
            "--names",
            "{policy}.{dataset}.{seed}",
            "--pool",
            s(&nas),
            "--out",
            s(&dir.join("x")),
        ],
        1,
    );
    assert!(
        e.contains("measure runs of several objectives, but these optuna runs have one objective"),
        "{e}"
    );
    assert!(!dir.join("x").exists());
}

#[test]
fn a_trial_with_a_nan_objective_is_infeasible_and_never_archived() {
    // The first completed trial of the first study (motpe.cifar10.0) told NaN for val_acc:
    // nothing is archived at its step (regret 1), and the run's final regret is at least the
    // original's.
    let dir = scratch("import-optuna-mo-nan");
    let log = root().join("examples/other-tools/optuna-mo/journal.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut done = false;
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            if !done && l.contains("\"op_code\":6") && l.contains("\"values\":[") {
                done = true;
                let at = l.find("\"values\":[").unwrap() + "\"values\":[".len();
                let end = at + l[at..].find(',').unwrap();
                format!("{}NaN{}", &l[..at], &l[end..])
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(done);
    let nan_log = dir.join("journal.log");
    std::fs::write(&nan_log, edited.join("\n") + "\n").unwrap();
    let out = dir.join("o");
    run_ok(&[
        "import",
        "optuna",
        s(&nan_log),
        "--names",
        "{policy}.{dataset}.{seed}",
        "--pool",
        s(&root().join("traces/nasbench201")),
        "--out",
        s(&out),
    ]);
    let traj = read_parquet(&out.join("trajectories.parquet")).unwrap();
    let runs = read_parquet(&out.join("runs.parquet")).unwrap();
    let cell = (0..runs.height())
        .find(|&i| {
            runs.column("policy").unwrap().str().unwrap().get(i) == Some("optuna:motpe")
                && runs.column("dataset").unwrap().str().unwrap().get(i) == Some("cifar10")
                && runs.column("seed").unwrap().u64().unwrap().get(i) == Some(0)
        })
        .unwrap() as u64;
    let (cells, steps, hvs) = (
        traj.column("cell").unwrap().u64().unwrap().clone(),
        traj.column("step").unwrap().u32().unwrap().clone(),
        traj.column("hv_regret").unwrap().f64().unwrap().clone(),
    );
    let first = (0..traj.height())
        .find(|&i| cells.get(i) == Some(cell) && steps.get(i) == Some(1))
        .unwrap();
    assert_eq!(hvs.get(first), Some(1.0));
    let want = expected(&root().join("examples/other-tools/optuna-mo"));
    let hv = runs
        .column("hv_regret")
        .unwrap()
        .f64()
        .unwrap()
        .get(cell as usize)
        .unwrap();
    assert!(hv >= want["motpe.cifar10.0"]["hv_regret"].as_f64().unwrap() - 1e-15);
}

#[test]
fn syne_tune_runs_of_two_metrics_import_with_their_full_trainings_archived() {
    // 8 runs of Syne Tune 0.16.0's MOASHA and multi-objective random search on sklearn-grid's
    // HistGradientBoosting grid (car and phoneme, 4 workers, 30 simulated s), reporting error =
    // 1 - accuracy and the seconds trained so far, both minimised, at every epoch; expected.json
    // has each run's hypervolume regret over its results at the 27th epoch, computed in Python.
    let dir = scratch("import-syne-tune-mo");
    let runs = root().join("examples/other-tools/syne-tune-mo");
    let grid = root().join("traces/sklearn-grid");
    let want = expected(&runs);
    let base = |out: &Path| -> Vec<String> {
        [
            "import",
            "syne-tune",
            s(&runs),
            "--pool",
            s(&grid),
            "--objectives",
            "1-accuracy,train_time",
            "--budget",
            "30",
            "--out",
            s(out),
        ]
        .map(String::from)
        .to_vec()
    };
    // Random search's metadata names no time_attr: its rows cannot be told apart by fidelity.
    let x = dir.join("x");
    let a = base(&x);
    let e = run_fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    assert!(
        e.contains("car-random-search-0: a result has no fidelity")
            && e.contains("give --fidelity COLUMN"),
        "{e}"
    );
    // Without 1-: error is minimised where the pool maximises accuracy.
    let mut a = base(&x);
    a[6] = "accuracy,train_time".into();
    a.extend(["--fidelity".into(), "epoch".into()]);
    let e = run_fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    assert!(
        e.contains(
            "objective 'accuracy': the runs minimize it but the pool sklearn-grid maximizes it"
        ) && e.contains("1-NAME"),
        "{e}"
    );
    let out = dir.join("st");
    let mut a = base(&out);
    a.extend(["--fidelity".into(), "epoch".into()]);
    run_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let df = read_parquet(&out.join("runs.parquet")).unwrap();
    let col = |n: &str| df.column(n).unwrap().as_materialized_series().clone();
    let (policy, dataset, seed, hv) =
        (col("policy"), col("dataset"), col("seed"), col("hv_regret"));
    assert_eq!(df.height(), 8);
    for i in 0..df.height() {
        let name = format!(
            "{}-{}-{}",
            dataset.str().unwrap().get(i).unwrap(),
            policy
                .str()
                .unwrap()
                .get(i)
                .unwrap()
                .trim_start_matches("syne-tune:"),
            seed.u64().unwrap().get(i).unwrap()
        );
        let (got, e) = (
            hv.f64().unwrap().get(i).unwrap(),
            want[&name]["hv_regret"].as_f64().unwrap(),
        );
        assert!((got - e).abs() <= 1e-12, "{name}: {got} vs {e}");
    }
    // The lock file names the tasks as a run of one learner names them.
    let lock = std::fs::read_to_string(out.join("experiment.lock.toml")).unwrap();
    assert!(
        lock.contains("task = \"car/0/hist-gradient-boosting\"") && lock.contains("train_time"),
        "{lock}"
    );
}

#[test]
fn hposuite_runs_of_two_objectives_import_with_the_regret_numpy_computes() {
    // 4 runs of hposuite 0.1.3's random search and Optuna (multi-objective TPE) on sklearn-grid's
    // HistGradientBoosting grid (phoneme, run 0), 60 trials, val_accuracy (max) x train_time
    // (min) of the full training; expected.json has each file's hypervolume regret from numpy.
    let dir = scratch("import-hposuite-mo");
    let runs = root().join("examples/other-tools/hposuite-mo");
    let grid = root().join("traces/sklearn-grid");
    let want = expected(&runs);
    let out = dir.join("hs");
    let args = |out: &Path, names: &str| -> Vec<String> {
        [
            "import",
            "hposuite",
            s(&runs),
            "--task",
            "phoneme/0/hist-gradient-boosting",
            "--pool",
            s(&grid),
            "--objectives",
            names,
            "--out",
            s(out),
        ]
        .map(String::from)
        .to_vec()
    };
    // hposuite names the accuracy val_accuracy, the pool accuracy.
    let a = args(&dir.join("x"), "");
    let e = run_fails(
        &a.iter()
            .map(String::as_str)
            .filter(|x| !x.is_empty() && *x != "--objectives")
            .collect::<Vec<_>>(),
        1,
    );
    assert!(
        e.contains("the pool has no objective 'val_accuracy'; it has: accuracy, train_time"),
        "{e}"
    );
    let a = args(&out, "accuracy,train_time");
    run_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let df = read_parquet(&out.join("runs.parquet")).unwrap();
    assert_eq!(df.height(), 4);
    let (policy, seed, hv, unit) = (
        df.column("policy").unwrap().str().unwrap().clone(),
        df.column("seed").unwrap().u64().unwrap().clone(),
        df.column("hv_regret").unwrap().f64().unwrap().clone(),
        df.column("budget_unit").unwrap().str().unwrap().clone(),
    );
    for i in 0..df.height() {
        let (p, sd) = (
            policy.get(i).unwrap().trim_start_matches("hposuite:"),
            seed.get(i).unwrap(),
        );
        let (file, w) = want
            .iter()
            .find(|(_, w)| w["optimizer"] == p && w["seed"].as_u64() == Some(sd))
            .unwrap();
        let (got, e) = (hv.get(i).unwrap(), w["hv_regret"].as_f64().unwrap());
        assert!((got - e).abs() <= 1e-12, "{file}: {got} vs {e}");
        // 60 trials of a pool world: evaluations.
        assert_eq!(unit.get(i), Some("evaluations"));
    }
}

#[test]
fn carps_runs_of_two_costs_import_with_the_regret_numpy_computes() {
    // 4 runs of CARP-S 1.1.0 with Optuna's MO-TPE and NSGA-II on sklearn-grid's
    // HistGradientBoosting grid (phoneme, run 0), 60 trials, each cost the list
    // [1 - accuracy, seconds of the 27 units]; expected.json has each run's hypervolume regret
    // from numpy.
    let dir = scratch("import-carps-mo");
    let fx = root().join("examples/other-tools/carps-mo");
    let want = expected(&fx);
    let grid = root().join("traces/sklearn-grid");
    let runs = fx.join("runs");
    // CARP-S's log names no objective: --objectives must.
    let e = run_fails(
        &[
            "import",
            "carps",
            s(&runs),
            "--pool",
            s(&grid),
            "--out",
            s(&dir.join("x")),
        ],
        1,
    );
    assert!(
        e.contains("report 2 values per trial but do not name them: give --objectives"),
        "{e}"
    );
    let out = dir.join("cm");
    run_ok(&[
        "import",
        "carps",
        s(&runs),
        "--pool",
        s(&grid),
        "--objectives",
        "1-accuracy,train_time",
        "--out",
        s(&out),
    ]);
    let df = read_parquet(&out.join("runs.parquet")).unwrap();
    assert_eq!(df.height(), 4);
    let (policy, seed, hv) = (
        df.column("policy").unwrap().str().unwrap().clone(),
        df.column("seed").unwrap().u64().unwrap().clone(),
        df.column("hv_regret").unwrap().f64().unwrap().clone(),
    );
    for i in 0..df.height() {
        let key = format!(
            "runs/{}/banditbench-sklearn-grid-mo/phoneme/0/hist-gradient-boosting/{}",
            policy.get(i).unwrap().trim_start_matches("carps:"),
            seed.get(i).unwrap()
        );
        let (got, e) = (
            hv.get(i).unwrap(),
            want[&key]["hv_regret"].as_f64().unwrap(),
        );
        assert!((got - e).abs() <= 1e-12, "{key}: {got} vs {e}");
    }
}
