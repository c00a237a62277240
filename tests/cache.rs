//! The cell cache (`run --cache`): in every world, with one simulated worker and two, a grid
//! grown by a policy replays only the new policy's cells and writes the same bytes as a fresh
//! run of the grown grid; damaged entries, other results formats, concurrent runs sharing a
//! cache and a cache on a full disk lose nothing and change no result.

mod common;

use std::path::{Path, PathBuf};

use common::{POLICIES, bin, experiment, scratch};

const FILES: [&str; 3] = [
    "runs.parquet",
    "trajectories.parquet",
    "experiment.lock.toml",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `run EXP --out OUT --quiet` and `extra`; panics with stderr on failure, returns stderr.
fn run(exp: &Path, out: &Path, extra: &[&str]) -> String {
    let o = bin()
        .args(["run", exp.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--quiet", "--threads", "2"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "run {}:\n{err}", exp.display());
    err
}

fn cached(cache: &Path) -> Vec<String> {
    vec![
        "--cache".into(),
        cache.to_str().unwrap().into(),
        "--cache-min-ms".into(),
        "0".into(),
    ]
}

fn run_cached(exp: &Path, out: &Path, cache: &Path) -> String {
    let c = cached(cache);
    let extra: Vec<&str> = c.iter().map(String::as_str).collect();
    run(exp, out, &extra)
}

/// The numbers of the summary line: (cells from the cache, cells stored).
fn counts(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("came from the cell cache"))
        .unwrap_or_else(|| panic!("no cache summary in:\n{stderr}"));
    let num = |after: &str| -> u64 {
        let (_, rest) = line.split_once(after).unwrap();
        let words: Vec<&str> = rest.split_whitespace().collect();
        words[0].parse().unwrap()
    };
    (num("finished; "), num(" and "))
}

fn same_files(a: &Path, b: &Path, what: &str) {
    for f in FILES {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(x == y, "{what}: {f} differs from a fresh run's");
    }
}

/// The `policy_family` of every row of a runs file.
fn families(runs: &Path) -> Vec<String> {
    use polars::prelude::*;
    let df = ParquetReader::new(std::fs::File::open(runs).unwrap())
        .finish()
        .unwrap();
    df.column("policy_family")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_string())
        .collect()
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // This build's format folder: the one a run made (the tests put no other there but format-5).
    let Ok(formats) = std::fs::read_dir(cache) else {
        return out;
    };
    let Some(mine) = formats
        .map(|f| f.unwrap().path())
        .find(|p| p.file_name().unwrap() != "format-5")
    else {
        return out;
    };
    for d in std::fs::read_dir(mine).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "cell") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The worlds a cell can be replayed in, each as (name, traces, [world] and [tasks] text, policies
/// of the smaller grid, the policy the larger grid adds), with `workers` simulated workers.
fn worlds(workers: u32) -> Vec<(&'static str, String, String, String, String)> {
    let tiny = common::fixture().display().to_string();
    let pool = root().join("traces/sklearn-grid").display().to_string();
    let nb = root().join("traces/nasbench201").display().to_string();
    let w = if workers > 1 {
        format!("workers = {workers}\n")
    } else {
        String::new()
    };
    // Policies that run on several workers in the learner-level worlds.
    let several = "[[policies]]\nfamily = \"round-robin\"\n[[policies]]\nfamily = \"ucb1\"\n";
    let learner_level = if workers > 1 { several } else { POLICIES };
    let arms = "[[world.arms]]\nname = \"a\"\ndistribution = \"gaussian\"\nmean = 0.5\nsd = 0.1\n[[world.arms]]\nname = \"b\"\ndistribution = \"bernoulli\"\np = 0.6\n";
    vec![
        (
            "time-sliced",
            tiny.clone(),
            "[world]\nkind = \"time-sliced\"\nbudgets = [6.0, 12.0]\nslice = 2.0\n".into(),
            POLICIES.into(),
            "[[policies]]\nfamily = \"softmax\"\ntau = 0.2\n".into(),
        ),
        (
            "pull-count",
            tiny,
            format!(
                "[world]\nkind = \"pull-count\"\nbudgets = [30, 80]\nexhausted = \"resample\"\n{w}"
            ),
            learner_level.into(),
            "[[policies]]\nfamily = \"random\"\n".into(),
        ),
        (
            "synthetic",
            String::new(),
            format!("[world]\nkind = \"synthetic\"\nbudgets = [50]\n{w}{arms}"),
            learner_level.into(),
            "[[policies]]\nfamily = \"random\"\n".into(),
        ),
        (
            "pool",
            pool,
            format!(
                "[tasks]\ndatasets = [\"car\", \"phoneme\"]\nruns = [0]\nlearners = [\"mlp\"]\n[world]\nkind = \"pool\"\nper_learner = true\nbudget_unit = \"units\"\nbudgets = [40]\n{w}"
            ),
            "[[policies]]\nfamily = \"asha\"\n[[policies]]\nfamily = \"random-search\"\n".into(),
            "[[policies]]\nfamily = \"successive-halving\"\nn = 9\n".into(),
        ),
        (
            "pool-objectives",
            nb,
            format!(
                "[tasks]\ndatasets = [\"cifar10\"]\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [30]\nobjectives = [\"val_acc\", \"latency\"]\n{w}"
            ),
            "[[policies]]\nfamily = \"random-search\"\n".into(),
            "[[policies]]\nfamily = \"parego\"\n".into(),
        ),
    ]
}

/// An experiment file named `name` (the folder's and the runs' experiment name).
fn write_exp(dir: &Path, file: &str, name: &str, traces: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{file}.toml"));
    let traces = if traces.is_empty() {
        String::new()
    } else {
        format!("traces = \"{traces}\"\n")
    };
    std::fs::write(
        &path,
        format!("name = \"{name}\"\n{traces}seed = 5\nrepetitions = 2\n{body}"),
    )
    .unwrap();
    path
}

/// In every world, with one worker and two: the small grid fills the cache; the grown grid
/// (the new policy first, so every other cell's index moves) takes every old cell from it,
/// replays only the new policy's, and writes exactly what a fresh run of the grown grid writes.
#[test]
fn a_grown_grid_replays_only_its_new_cells_and_equals_a_fresh_run_in_every_world() {
    for workers in [1, 2] {
        for (world, traces, body, small, added) in worlds(workers) {
            if workers > 1 && world == "time-sliced" {
                continue; // the time-sliced world has one worker
            }
            let what = format!("{world}, {workers} workers");
            let dir = scratch(&format!("cache-grow-{world}-{workers}"));
            let cache = dir.join("cache");
            let a = write_exp(&dir, "a", "small", &traces, &format!("{body}{small}"));
            let b = write_exp(
                &dir,
                "b",
                "grown",
                &traces,
                &format!("{body}{added}{small}"),
            );
            let (hits, stored_a) = counts(&run_cached(&a, &dir.join("a"), &cache));
            assert_eq!(hits, 0, "{what}");
            assert!(stored_a > 0, "{what}");
            assert_eq!(entries(&cache).len() as u64, stored_a, "{what}");
            let (hits, stored_b) = counts(&run_cached(&b, &dir.join("b"), &cache));
            assert_eq!(
                hits, stored_a,
                "{what}: every cell of the small grid is reused"
            );
            let families = families(&dir.join("b/runs.parquet"));
            let new_family = added.split('"').nth(1).unwrap();
            let new_cells = families.iter().filter(|f| *f == new_family).count() as u64;
            assert_eq!(hits + stored_b, families.len() as u64, "{what}");
            assert_eq!(
                stored_b, new_cells,
                "{what}: only the new policy's cells ran"
            );
            run(&b, &dir.join("b-fresh"), &[]);
            same_files(&dir.join("b"), &dir.join("b-fresh"), &what);
        }
    }
}

/// A damaged entry (one byte changed, or cut short) is named, removed and replayed; the results
/// are unchanged and the cache whole again.
#[test]
fn a_damaged_entry_is_named_replayed_and_replaced() {
    let dir = scratch("cache-damaged");
    let cache = dir.join("cache");
    let e = experiment(
        &dir,
        "damaged",
        &format!(
            "seed = 2\nrepetitions = 2\n[world]\nkind = \"pull-count\"\nbudgets = [40]\n{POLICIES}"
        ),
    );
    run_cached(&e, &dir.join("first"), &cache);
    let all = entries(&cache);
    let (flipped, cut) = (&all[0], &all[1]);
    let mut bytes = std::fs::read(flipped).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(flipped, &bytes).unwrap();
    let bytes = std::fs::read(cut).unwrap();
    std::fs::write(cut, &bytes[..bytes.len() - 5]).unwrap();
    let err = run_cached(&e, &dir.join("second"), &cache);
    assert!(
        err.contains(&flipped.display().to_string())
            && err.contains(&cut.display().to_string())
            && err.contains("checksum")
            && err.contains("replayed"),
        "{err}"
    );
    assert_eq!(counts(&err), (all.len() as u64 - 2, 2), "{err}");
    assert!(err.contains("(2 damaged entries replayed)"), "{err}");
    same_files(
        &dir.join("first"),
        &dir.join("second"),
        "after damaged entries",
    );
    assert_eq!(entries(&cache), all);
    let err = run_cached(&e, &dir.join("third"), &cache);
    assert_eq!(counts(&err), (all.len() as u64, 0), "{err}");
}

/// Entries of another results format are never read; `cache info` names them and `cache prune`
/// removes them, then trims this format's entries to a size, least recently used first.
#[test]
fn other_formats_are_listed_and_pruned_and_max_size_keeps_the_recent_entries() {
    let dir = scratch("cache-prune");
    let cache = dir.join("cache");
    let e = experiment(
        &dir,
        "prune",
        &format!("seed = 2\n[world]\nkind = \"pull-count\"\nbudgets = [40]\n{POLICIES}"),
    );
    // A cache written by an older build: same layout, another format's folder.
    let old = cache.join("format-5/ab");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("abcd.cell"), b"an entry of format 5").unwrap();
    let err = run_cached(&e, &dir.join("r"), &cache);
    let (hits, stored) = counts(&err);
    assert_eq!(hits, 0, "{err}");
    let info = bin()
        .args(["cache", "info", "--cache", cache.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("format-5: 1 cells") && text.contains("another results format"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{stored} cells")) && text.contains("this build's"),
        "{text}"
    );
    // The first half of the entries used long ago, the rest now: a prune to half the size
    // removes the old ones.
    let all = entries(&cache);
    let sizes: Vec<u64> = all
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .collect();
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    let half = all.len() / 2;
    for p in &all[..half] {
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_modified(long_ago).unwrap();
    }
    let keep: u64 = sizes[half..].iter().sum();
    let out = bin()
        .args(["cache", "prune", "--cache", cache.to_str().unwrap()])
        .args(["--max-size", &keep.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("removed {half} cells"))
            && text.contains("1 folders of other results formats"),
        "{text}"
    );
    assert!(!cache.join("format-5").exists());
    assert_eq!(entries(&cache), all[half..].to_vec());
    // The rest are still used.
    let err = run_cached(&e, &dir.join("r2"), &cache);
    assert_eq!(
        counts(&err),
        ((all.len() - half) as u64, half as u64),
        "{err}"
    );
    same_files(&dir.join("r"), &dir.join("r2"), "after a prune");
}

/// Two runs of other experiments sharing one cache at the same time: both finish with the
/// results of fresh runs, and the cache then serves both whole.
#[test]
fn concurrent_runs_share_a_cache_safely() {
    let dir = scratch("cache-concurrent");
    let cache = dir.join("cache");
    let body = |reps: u32| {
        format!(
            "seed = 9\nrepetitions = {reps}\n[world]\nkind = \"pull-count\"\nbudgets = [200]\nexhausted = \"resample\"\n{POLICIES}"
        )
    };
    let a = experiment(&dir, "ca", &body(40));
    let b = experiment(&dir, "cb", &body(60));
    let spawn = |e: &Path, out: &str| {
        let c = cached(&cache);
        bin()
            .args([
                "run",
                e.to_str().unwrap(),
                "--out",
                dir.join(out).to_str().unwrap(),
            ])
            .args(["--quiet", "--threads", "1"])
            .args(&c)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(&a, "a"), spawn(&b, "b"));
    for p in [pa, pb] {
        let o = p.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    run(&a, &dir.join("a-fresh"), &[]);
    run(&b, &dir.join("b-fresh"), &[]);
    same_files(&dir.join("a"), &dir.join("a-fresh"), "concurrent a");
    same_files(&dir.join("b"), &dir.join("b-fresh"), "concurrent b");
    let n = entries(&cache).len() as u64;
    let err = run_cached(&b, &dir.join("b2"), &cache);
    assert_eq!(counts(&err).1, 0, "the cache holds all of b: {err}");
    assert!(n >= counts(&err).0, "{err}");
    same_files(&dir.join("b2"), &dir.join("b-fresh"), "b from the cache");
}

/// A cache on a full disk (a real 64 KiB tmpfs): the run says so once, stores nothing more, and
/// its results are whole and equal a fresh run's. Needs root for the mount: CI runs as root.
#[test]
fn a_cache_on_a_full_disk_stops_storing_and_the_run_finishes() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a tmpfs needs root (CI runs this as root)");
        return;
    }
    let dir = scratch("cache-full");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let st = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=64k",
            "tmpfs",
            cache.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(st.success(), "mount a tmpfs at {}", cache.display());
    let e = experiment(
        &dir,
        "full",
        &format!(
            "seed = 4\nrepetitions = 30\n[world]\nkind = \"pull-count\"\nbudgets = [300]\nexhausted = \"resample\"\n{POLICIES}"
        ),
    );
    let err = run_cached(&e, &dir.join("r"), &cache);
    let _ = std::process::Command::new("umount").arg(&cache).status();
    assert_eq!(
        err.matches("the disk is full").count(),
        1,
        "named once: {err}"
    );
    let (_, stored) = counts(&err);
    assert!(stored > 0 && stored < 600, "some fitted: {err}");
    run(&e, &dir.join("fresh"), &[]);
    same_files(&dir.join("r"), &dir.join("fresh"), "a full cache");
}

/// An external policy's identity is its command, environment and code's content: the same
/// script hits, an edited one (a comment is enough) is replayed, and the edited results equal a
/// fresh run's.
#[test]
fn an_edited_external_policy_is_replayed_not_taken_from_the_cache() {
    if !common::python_ok() {
        return;
    }
    let dir = scratch("cache-external");
    let cache = dir.join("cache");
    let script = dir.join("my_rr.py");
    let original = std::fs::read_to_string(root().join("python/examples/round_robin.py")).unwrap();
    std::fs::write(&script, &original).unwrap();
    let e = experiment(
        &dir,
        "ext",
        &format!(
            "seed = 5\nrepetitions = 2\n[world]\nkind = \"pull-count\"\nbudgets = [6]\nexhausted = \"resample\"\n[[policies]]\nfamily = \"external\"\nname = \"my-rr\"\ncommand = [\"python3\", \"{}\"]\nenv = {{ PYTHONPATH = \"{}\" }}\n[[policies]]\nfamily = \"ucb1\"\n",
            script.display(),
            root().join("python").display()
        ),
    );
    let (hits, stored) = counts(&run_cached(&e, &dir.join("first"), &cache));
    assert_eq!((hits, stored), (0, 8));
    let err = run_cached(&e, &dir.join("same"), &cache);
    assert_eq!(counts(&err), (8, 0), "{err}");
    std::fs::write(&script, format!("{original}\n# edited\n")).unwrap();
    let err = run_cached(&e, &dir.join("edited"), &cache);
    assert_eq!(counts(&err), (4, 4), "only ucb1's cells are reused: {err}");
    run(&e, &dir.join("edited-fresh"), &[]);
    same_files(
        &dir.join("edited"),
        &dir.join("edited-fresh"),
        "edited script",
    );
}

/// `--cache` without a folder, and `cache info` without one, use `$BANDITBENCH_CACHE`.
#[test]
fn the_default_cache_is_the_environment_s() {
    let dir = scratch("cache-default");
    let cache = dir.join("from-env");
    let e = experiment(
        &dir,
        "default",
        &format!("seed = 2\n[world]\nkind = \"pull-count\"\nbudgets = [40]\n{POLICIES}"),
    );
    let o = bin()
        .args([
            "run",
            e.to_str().unwrap(),
            "--out",
            dir.join("r").to_str().unwrap(),
        ])
        .args(["--quiet", "--cache", "--cache-min-ms", "0"])
        .env("BANDITBENCH_CACHE", &cache)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let (_, stored) = counts(&err);
    assert!(
        stored > 0 && entries(&cache).len() as u64 == stored,
        "{err}"
    );
    let info = bin()
        .args(["cache", "info"])
        .env("BANDITBENCH_CACHE", &cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains(&format!("{stored} cells")), "{text}");
}

/// `cache prune --all` empties the cache and says how much it removed.
#[test]
fn prune_all_empties_the_cache_and_counts_what_it_removed() {
    let dir = scratch("cache-prune-all");
    let cache = dir.join("cache");
    let e = experiment(
        &dir,
        "all",
        &format!("seed = 2\n[world]\nkind = \"pull-count\"\nbudgets = [40]\n{POLICIES}"),
    );
    let (_, stored) = counts(&run_cached(&e, &dir.join("r"), &cache));
    let out = bin()
        .args([
            "cache",
            "prune",
            "--all",
            "--cache",
            cache.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("removed {stored} cells")), "{text}");
    assert!(entries(&cache).is_empty());
    let err = run_cached(&e, &dir.join("r2"), &cache);
    assert_eq!(counts(&err), (0, stored), "{err}");
}
