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
