//! `banditbench slurm --submit` on a real Slurm cluster: a 4-task array and the dependent merge
//! job, compared byte for byte with the unsharded run. Needs a running cluster: CI starts a
//! one-node one with `scripts/ci/slurm.sh up` and sets BANDITBENCH_REQUIRE_SLURM=1, so that a
//! missing cluster fails there; elsewhere the test says it was skipped.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{bin, experiment, run_ok, run_quiet, scratch};

fn cluster_up() -> bool {
    Command::new("scontrol")
        .arg("ping")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("UP"))
}

fn text(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn logs(dir: &Path) -> String {
    let mut s = String::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            s += &format!(
                "--- {}\n{}\n",
                e.path().display(),
                std::fs::read_to_string(e.path()).unwrap_or_default()
            );
        }
    }
    s
}

#[test]
fn a_slurm_array_and_its_merge_job_reproduce_the_unsharded_run() {
    if !cluster_up() {
        assert!(
            std::env::var_os("BANDITBENCH_REQUIRE_SLURM").is_none(),
            "BANDITBENCH_REQUIRE_SLURM is set but no Slurm controller answers `scontrol ping`; start one with scripts/ci/slurm.sh up"
        );
        eprintln!(
            "skipped: no Slurm cluster (start a one-node one with: sudo scripts/ci/slurm.sh up)"
        );
        return;
    }
    let dir = scratch("slurm");
    let exp = experiment(
        &dir,
        "slurm-exp",
        "seed = 21\nrepetitions = 9\n[world]\nkind = \"pull-count\"\nbudgets = [30, 400]\nexhausted = \"resample\"\n[[policies]]\nfamily = \"round-robin\"\n[[policies]]\nfamily = \"ucb1\"\n[[policies]]\nfamily = \"epsilon-greedy\"\nepsilon = [0.1, 0.3]\n",
    );
    let whole = dir.join("whole");
    run_quiet(&exp, &whole);

    let merged = dir.join("merged");
    let shards = dir.join("shards");
    let scripts = dir.join("scripts");
    let t0 = Instant::now();
    let o = run_ok(&[
        "slurm",
        exp.to_str().unwrap(),
        "--shards",
        "4",
        "--out",
        merged.to_str().unwrap(),
        "--shards-dir",
        shards.to_str().unwrap(),
        "--script-dir",
        scripts.to_str().unwrap(),
        "--mem",
        "500M",
        "--time",
        "00:10:00",
        "--submit",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let ids: Vec<String> = out
        .split("job ")
        .skip(1)
        .filter_map(|s| s.split_whitespace().next().map(String::from))
        .collect();
    assert_eq!(ids.len(), 2, "array and merge job ids in: {out}");
    let script = std::fs::read_to_string(scripts.join("array.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3") && script.contains("SLURM_ARRAY_TASK_ID"));

    // No accounting here (no sacct): poll squeue until both jobs have left the queue.
    let jobs = ids.join(",");
    loop {
        let q = text(Command::new("squeue").args(["-h", "-j", &jobs, "-o", "%i %T"]));
        if q.trim().is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "jobs still queued after 300 s:\n{q}\n{}",
            logs(&scripts.join("logs"))
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "array of 4 and merge finished in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    // Exit codes can lie here: check the outputs themselves, the job states, and the node.
    for i in 0..4 {
        let s = shards.join(format!("{i}-of-4"));
        assert!(
            s.join("runs.parquet").is_file(),
            "shard {i} wrote no results:\n{}",
            logs(&scripts.join("logs"))
        );
    }
    let merge_state = text(Command::new("scontrol").args(["show", "job", &ids[1]]));
    assert!(
        merge_state.contains("JobState=COMPLETED"),
        "{merge_state}\n{}",
        logs(&scripts.join("logs"))
    );
    let node = text(Command::new("sinfo").args(["-h", "-o", "%T"]));
    assert!(
        !node.contains("drain") && !node.contains("down"),
        "node state: {node}"
    );
    for f in [
        "runs.parquet",
        "trajectories.parquet",
        "experiment.lock.toml",
    ] {
        assert!(
            std::fs::read(whole.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "{f}: the Slurm run differs from the unsharded one"
        );
    }
    assert!(
        merged.join("report/report.md").is_file(),
        "the merge job wrote the report"
    );

    // Without --submit only the scripts are written, and the command to submit them is printed.
    let o = bin()
        .args([
            "slurm",
            exp.to_str().unwrap(),
            "--shards",
            "3",
            "--script-dir",
        ])
        .arg(dir.join("only-scripts"))
        .args([
            "--partition",
            "gpu",
            "--sbatch=--qos=short",
            "--max-running",
            "2",
        ])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("submit with: jid=$(sbatch --parsable"), "{s}");
    let a = std::fs::read_to_string(dir.join("only-scripts/array.sbatch")).unwrap();
    assert!(
        a.contains("#SBATCH --array=0-2%2")
            && a.contains("#SBATCH --partition=gpu")
            && a.contains("#SBATCH --qos=short"),
        "{a}"
    );
}
