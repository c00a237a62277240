//! Other tools' files as a hostile world sends them, for every importer at once: folders with
//! symbolic links back to themselves (a naive walk is exponential), and each file an importer
//! reads replaced by a FIFO (opening it blocks forever) or by `/dev/zero` (reading never ends).
//! Each import must finish as on the plain copy, or be refused naming the file and what it is,
//! within seconds, and leave no output behind.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{bin, scratch};

fn fixtures(tool: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(tool)
}

/// One importer: its fixture (a folder or a file), the arguments after the input, and the files
/// (relative to the copied fixture) that it reads.
struct Importer {
    tool: &'static str,
    fixture: &'static str,
    /// The input given to the importer, relative to the fixture ("" for the fixture itself).
    input: &'static str,
    args: &'static [&'static str],
    reads: &'static [&'static str],
}

const IMPORTERS: &[Importer] = &[
    Importer {
        tool: "syne-tune",
        fixture: "syne-tune",
        input: "",
        args: &["--fidelity", "epoch"],
        reads: &["asha-0/metadata.json", "asha-0/results.csv.zip"],
    },
    Importer {
        tool: "carps",
        fixture: "carps/runs",
        input: "",
        args: &[],
        reads: &[
            "DEHB/banditbench-sklearn-grid-mf/phoneme/0/hist-gradient-boosting/0/trial_logs.jsonl",
            "DEHB/banditbench-sklearn-grid-mf/phoneme/0/hist-gradient-boosting/0/.hydra/config.yaml",
        ],
    },
    Importer {
        tool: "hposuite",
        fixture: "hposuite",
        input: "",
        args: &["--task", "phoneme/0/hist-gradient-boosting"],
        reads: &[
            "optimizer=Optuna.benchmark=banditbench-sklearn-grid-phoneme.objectives=val_accuracy.TrialBudget=20.seed=0.parquet",
        ],
    },
    Importer {
        tool: "deepcave",
        fixture: "deepcave/run_1",
        input: "",
        args: &["--task", "t"],
        reads: &["trials.csv", "configspace.csv"],
    },
    Importer {
        tool: "blackbox",
        fixture: "blackbox/sklearn-grid-hgb-phoneme",
        input: "",
        args: &["--metric", "score", "--cost", "cost_s"],
        reads: &[
            "metadata.json",
            "hyperparameters.parquet",
            "objectives_evaluations.npy",
            "fidelities_values.npy",
        ],
    },
    Importer {
        tool: "optuna",
        fixture: "optuna",
        input: "journal.log",
        args: &[],
        reads: &["journal.log"],
    },
    Importer {
        tool: "optuna",
        fixture: "optuna",
        input: "studies.db",
        args: &[],
        reads: &["studies.db"],
    },
];

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Run banditbench, killing it after `limit`: (exit code, stderr), or None if it had to be
/// killed (a hang).
fn run_within(args: &[&str], limit: Duration) -> Option<(Option<i32>, String)> {
    let mut child: std::process::Child = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return Some((status.code(), err));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn import(imp: &Importer, folder: &Path, out: &Path) -> Option<(Option<i32>, String)> {
    let input = folder.join(imp.input);
    let mut args = vec!["import", imp.tool, input.to_str().unwrap(), "--out"];
    args.push(out.to_str().unwrap());
    args.extend_from_slice(imp.args);
    run_within(&args, Duration::from_secs(60))
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "{}",
        p.display()
    );
}

#[test]
fn every_importer_walks_symlink_loops_once_and_refuses_special_files() {
    let dir = scratch("hostile-files");
    let mut wrong = Vec::new();
    for imp in IMPORTERS {
        // Symbolic links to `.` and `..` in every folder of the input.
        let name = format!("{}{}", imp.tool, imp.input);
        let looped = dir.join(format!("{name}-loops"));
        copy_tree(&fixtures(imp.fixture), &looped);
        let mut folders = vec![looped.clone()];
        let mut i = 0;
        while i < folders.len() {
            let f = folders[i].clone();
            for e in std::fs::read_dir(&f).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    folders.push(e.path());
                }
            }
            i += 1;
        }
        for f in &folders {
            std::os::unix::fs::symlink(".", f.join("zz-self")).unwrap();
            std::os::unix::fs::symlink("..", f.join("zz-parent")).unwrap();
        }
        let out = dir.join(format!("{name}-loops-out"));
        let plain_out = dir.join(format!("{name}-plain-out"));
        match (
            import(imp, &looped, &out),
            import(imp, &fixtures(imp.fixture), &plain_out),
        ) {
            (Some((Some(0), _)), Some((Some(0), _))) => {
                let rows = |d: &Path| {
                    banditbench::experiment::read_parquet(&d.join(if imp.tool == "blackbox" {
                        "configs.parquet"
                    } else {
                        "runs.parquet"
                    }))
                    .unwrap()
                    .height()
                };
                if rows(&out) != rows(&plain_out) {
                    wrong.push(format!(
                        "{}: with symlink loops {} rows, without {}",
                        imp.tool,
                        rows(&out),
                        rows(&plain_out)
                    ));
                }
            }
            (None, _) => wrong.push(format!(
                "{}: symlink loops: still running after 60 s",
                imp.tool
            )),
            (Some((code, err)), _) => {
                wrong.push(format!("{}: symlink loops: exit {code:?}: {err}", imp.tool))
            }
        }
        // Each file it reads, as a FIFO and as /dev/zero.
        for (n, file) in imp.reads.iter().enumerate() {
            for special in ["FIFO", "character device"] {
                let d = dir.join(format!("{name}-{n}-{}", special.len()));
                copy_tree(&fixtures(imp.fixture), &d);
                let p = d.join(file);
                std::fs::remove_file(&p).unwrap();
                if special == "FIFO" {
                    mkfifo(&p);
                } else {
                    std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
                }
                let out = d.with_extension("out");
                match import(imp, &d, &out) {
                    None => wrong.push(format!(
                        "{}: {file} as a {special}: still running after 60 s",
                        imp.tool
                    )),
                    Some((code, err)) => {
                        let named =
                            err.contains(file.rsplit('/').next().unwrap()) && err.contains(special);
                        if code != Some(1) || !named || out.exists() {
                            wrong.push(format!(
                                "{}: {file} as a {special}: exit {code:?}, output left: {}, message: {err}",
                                imp.tool,
                                out.exists()
                            ));
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A CARP-S run whose Hydra config is hostile: YAML aliases that expand to 10^10 nodes (refused
/// before any tree is built), and OmegaConf interpolations that fan out ten-fold over nine levels
/// (resolved once per key; an unused chain costs nothing, a used one is refused past 1 MiB).
#[test]
fn carps_configs_that_expand_without_bound_are_refused_or_left_unread() {
    let dir = scratch("hostile-carps");
    let run =
        "DEHB/banditbench-sklearn-grid-mf/phoneme/0/hist-gradient-boosting/0/.hydra/config.yaml";
    let variant = |name: &str, extra: &str, edit: &dyn Fn(String) -> String| -> PathBuf {
        let d = dir.join(name);
        copy_tree(&fixtures("carps/runs"), &d);
        let p = d.join(run);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, edit(text) + extra).unwrap();
        d
    };
    let carps = Importer {
        tool: "carps",
        fixture: "carps/runs",
        input: "",
        args: &[],
        reads: &[],
    };
    // Ten levels of aliases, each ten of the one below.
    let mut bomb = String::from("bomb0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("bomb{i}: &a{i} [{refs}]\n"));
    }
    let d = variant("bomb", &bomb, &|t| t);
    match import(&carps, &d, &d.with_extension("out")) {
        Some((Some(1), err)) => assert!(
            err.contains("config.yaml") && err.contains("alias bomb"),
            "{err}"
        ),
        other => panic!("an alias bomb: {other:?}"),
    }
    // Nine levels of interpolations, each naming the one below ten times.
    let mut fan = String::from("l0: xxxxxxxxxx\n");
    for i in 1..10 {
        fan.push_str(&format!(
            "l{i}: \"{}\"\n",
            format!("${{l{}}}", i - 1).repeat(10)
        ));
    }
    let d = variant("fan-unused", &fan, &|t| t);
    match import(&carps, &d, &d.with_extension("out")) {
        Some((Some(0), _)) => {}
        other => panic!("an unused interpolation chain: {other:?}"),
    }
    let d = variant("fan-used", &fan, &|t| {
        t.replace("optimizer_id: DEHB", "optimizer_id: ${l9}")
    });
    match import(&carps, &d, &d.with_extension("out")) {
        Some((Some(1), err)) => assert!(
            err.contains("config.yaml: key 'l") && err.contains("expand past 1048576 characters"),
            "{err}"
        ),
        other => panic!("a used interpolation chain: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Values in an Optuna storage that once changed results silently: a negative trial number
/// (merged into trial 0) is refused naming the trial, and seeds of 2^32 and more (collapsed
/// into one repetition) keep their cells apart.
#[test]
fn optuna_trial_numbers_and_huge_seeds_do_not_merge_runs() {
    let dir = scratch("hostile-optuna");
    let db = |name: &str, sql: &str| -> PathBuf {
        let p = dir.join(format!("{name}.db"));
        std::fs::copy(fixtures("optuna").join("studies.db"), &p).unwrap();
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        p
    };
    let optuna = |p: &Path, out: &Path| {
        run_within(
            &[
                "import",
                "optuna",
                p.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            Duration::from_secs(60),
        )
        .expect("an import finishes")
    };
    let p = db(
        "negative",
        "UPDATE trials SET number = -1 WHERE trial_id = 1;",
    );
    let (code, err) = optuna(&p, &dir.join("negative-out"));
    assert!(
        code == Some(1) && err.contains("trial 1: its number is -1"),
        "{code:?} {err}"
    );
    let p = db(
        "date",
        "UPDATE trials SET datetime_complete = '2026-13-01 00:00:00' WHERE trial_id = 1;",
    );
    let (code, err) = run_within(
        &[
            "import",
            "optuna",
            p.to_str().unwrap(),
            "--out",
            dir.join("date-out").to_str().unwrap(),
            "--clock",
            "seconds",
        ],
        Duration::from_secs(60),
    )
    .expect("an import finishes");
    assert!(
        code == Some(1)
            && err.contains(
                "trial 1: column 'datetime_complete' is '2026-13-01 00:00:00', not a date and time"
            ),
        "{code:?} {err}"
    );
    // Python's json writes a trial's infinite value as a bare Infinity: the journal imports, as
    // the SQLite storage of the same studies does.
    let journal = dir.join("inf.log");
    let text = std::fs::read_to_string(fixtures("optuna").join("journal.log")).unwrap();
    let first = text.find("\"values\":[0.").unwrap();
    let end = first + text[first..].find(']').unwrap();
    std::fs::write(
        &journal,
        format!("{}\"values\":[Infinity{}", &text[..first], &text[end..]),
    )
    .unwrap();
    let (code, err) = optuna(&journal, &dir.join("inf-out"));
    assert_eq!(code, Some(0), "{err}");
    let p = db(
        "seeds",
        "UPDATE studies SET study_name = 'tpe-4294967296' WHERE study_id = 1;
         UPDATE studies SET study_name = 'tpe-4294967297' WHERE study_id = 2;",
    );
    let out = dir.join("seeds-out");
    let (code, err) = optuna(&p, &out);
    assert_eq!(code, Some(0), "{err}");
    let runs = banditbench::experiment::read_parquet(&out.join("runs.parquet")).unwrap();
    let col = |n: &str| runs.column(n).unwrap().as_materialized_series().clone();
    let (policy, seed, rep) = (col("policy"), col("seed"), col("repetition"));
    let mut tpe: Vec<(u64, u32)> = (0..runs.height())
        .filter(|&i| policy.str().unwrap().get(i).unwrap().ends_with("tpe"))
        .map(|i| {
            (
                seed.u64().unwrap().get(i).unwrap(),
                rep.u32().unwrap().get(i).unwrap(),
            )
        })
        .collect();
    tpe.sort();
    assert_eq!(tpe.len(), 2, "{runs}");
    assert_eq!(tpe[0].0, 4_294_967_296);
    assert_eq!(tpe[1].0, 4_294_967_297);
    assert_ne!(tpe[0].1, tpe[1].1, "two seeds share a repetition: {runs}");
    let _ = std::fs::remove_dir_all(&dir);
}
