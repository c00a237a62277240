//! Freeze-thaw policies end to end on the bundled TaskSet pool: DPL's fit schedule as its code
//! counts it, its named fallbacks, its results at any thread count and worker count.

mod common;

use std::path::{Path, PathBuf};

use common::{bin, scratch};
use polars::prelude::*;

const TASK: &str = "FixedTextRNNClassification_imdb_patch32_GRU128_bs128";

fn experiment(dir: &Path, budget: u32, world: &str, policies: &str) -> PathBuf {
    let e = dir.join("ft.toml");
    std::fs::write(
        &e,
        format!(
            r#"name = "ft"
traces = "{}"
seed = 11
repetitions = 2
trajectories = "every-decision"

[tasks]
datasets = ["{TASK}"]

[world]
kind = "pool"
budget_unit = "units"
budgets = [{budget}]
{world}

{policies}
"#,
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("traces/taskset")
                .display()
        ),
    )
    .unwrap();
    e
}

fn run(e: &Path, out: &Path, threads: &str) {
    let o = bin()
        .args(["run", e.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--threads", threads, "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Runs `e` at 1 and at 2 threads (into `dir/a` and `dir/b`), asserts byte-identical results,
/// and returns `dir/a`.
fn same_at_one_and_two_threads(e: &Path, dir: &Path, label: &str) -> PathBuf {
    let (a, b) = (dir.join("a"), dir.join("b"));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
    run(e, &a, "1");
    run(e, &b, "2");
    for f in ["runs.parquet", "trajectories.parquet"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f} with '{label}'"
        );
    }
    a
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

/// Per cell: its policy stats as JSON, its decisions, and its trajectory's rewards in step order.
fn cells(out: &Path) -> Vec<(serde_json::Value, u64, Vec<Option<f64>>)> {
    let runs = read(&out.join("runs.parquet"));
    let traj = read(&out.join("trajectories.parquet"));
    let (rc, stats, dec) = (
        runs.column("cell").unwrap().u64().unwrap().clone(),
        runs.column("policy_stats").unwrap().str().unwrap().clone(),
        runs.column("decisions").unwrap().u64().unwrap().clone(),
    );
    let (tc, ts, tr) = (
        traj.column("cell").unwrap().u64().unwrap().clone(),
        traj.column("step").unwrap().u32().unwrap().clone(),
        traj.column("reward").unwrap().f64().unwrap().clone(),
    );
    (0..runs.height())
        .map(|i| {
            let cell = rc.get(i).unwrap();
            let mut steps: Vec<(u64, Option<f64>)> = (0..traj.height())
                .filter(|&j| tc.get(j) == Some(cell))
                .map(|j| (u64::from(ts.get(j).unwrap()), tr.get(j)))
                .collect();
            steps.sort_by_key(|s| s.0);
            (
                serde_json::from_str(stats.get(i).unwrap()).unwrap(),
                dec.get(i).unwrap(),
                steps.into_iter().map(|s| s.1).collect(),
            )
        })
        .collect()
}

#[test]
fn dpl_fits_after_every_scored_unit_and_restarts_as_its_code_counts() {
    let dir = scratch("ft-dpl-schedule");
    // Small networks: the schedule, not the fit, is under test.
    let e = experiment(
        &dir,
        40,
        "",
        r#"[[policies]]
family = "dpl"
units = 8
epochs = 20
restart_after = [1000, 2]"#,
    );
    let out = dir.join("out");
    run(&e, &out, "2");
    let cells = cells(&out);
    assert_eq!(cells.len(), 4);
    for (stats, decisions, rewards) in &cells {
        assert_eq!(*decisions, 40);
        assert_eq!(rewards.len(), 40);
        // A fit follows every unit that revealed a score, except the last (no decision after it).
        let scored = rewards[..39].iter().filter(|r| r.is_some()).count() as u64;
        assert_eq!(stats["fits"], scored, "{stats}");
        assert_eq!(stats["diverged"], 0, "{stats}");
        // From scratch: the first 11 fits (full_fits = 10), then one after every `restart_after`
        // scored units that did not lower the best loss.
        let scratch = stats["scratch_fits"].as_u64().unwrap();
        // The trajectory's `reward` is the recorded score: a loss, lower is better.
        let mut best = f64::INFINITY;
        let (mut quiet, mut restarts) = (0u64, 0u64);
        let mut fits = 0u64;
        let restart_after = if scratch == 11 { 1000 } else { 2 };
        for r in rewards[..39].iter().flatten() {
            fits += 1;
            if *r < best {
                best = *r;
                quiet = 0;
            } else {
                quiet += 1;
                if quiet == restart_after {
                    quiet = 0;
                    // A restart during the first 11 fits changes nothing: they are from scratch.
                    restarts += u64::from(fits > 11);
                }
            }
        }
        assert_eq!(
            scratch,
            11 + restarts,
            "{stats} restart_after {restart_after}"
        );
    }
    assert!(
        cells
            .iter()
            .any(|c| c.0["scratch_fits"].as_u64().unwrap() > 11),
        "restart_after = 2 restarts some fit"
    );
}

#[test]
fn dpl_is_identical_at_any_thread_count_and_runs_on_workers() {
    let dir = scratch("ft-dpl-threads");
    let policies = r#"[[policies]]
family = "dpl"
units = 16
epochs = 30
refine_epochs = 5

[[policies]]
family = "dpl"
units = 16
epochs = 30
lr = 10.0"#;
    for world in ["", "workers = 3"] {
        let e = experiment(&dir, 30, world, policies);
        let a = same_at_one_and_two_threads(&e, &dir, world);
        let cells = cells(&a);
        // lr = 10 makes Adam diverge: the member is re-initialised, counted, and the cell goes on
        // to its whole budget.
        let diverged: u64 = cells
            .iter()
            .map(|c| c.0["diverged"].as_u64().unwrap())
            .sum();
        assert!(diverged > 0, "lr = 10 diverges somewhere ({world})");
        for (stats, decisions, _) in &cells {
            assert_eq!(*decisions, 30, "{stats} ({world})");
        }
    }
}

/// DyHPO's schedule as its code counts it: a fit after every scored unit (the first, on one
/// point, trains nothing), fresh weights for the first `full_fits` fits and once per streak of
/// `restart_after` units without a better score; identical results at 1 and 2 threads and on 3
/// workers, with and without `max_points`.
#[test]
fn dyhpo_fits_as_its_code_counts_and_is_identical_at_any_thread_count() {
    let dir = scratch("ft-dyhpo");
    let small = "units1 = 8\nunits2 = 8\nepochs = 30\nrefine_epochs = 5";
    let policies = format!(
        "[[policies]]\nfamily = \"dyhpo\"\n{small}\nfull_fits = 4\nrestart_after = [1000, 3]\n\n[[policies]]\nfamily = \"dyhpo\"\n{small}\nmax_points = 10"
    );
    for world in ["", "workers = 3"] {
        let e = experiment(&dir, 40, world, &policies);
        let a = same_at_one_and_two_threads(&e, &dir, world);
        let cells = cells(&a);
        assert_eq!(cells.len(), 6, "{world}");
        for (stats, decisions, rewards) in &cells {
            assert_eq!(*decisions, 40, "{stats} ({world})");
            assert_eq!(stats["failed_fits"], 0, "{stats}");
            if !world.is_empty() {
                continue;
            }
            let scored = rewards[..39].iter().filter(|r| r.is_some()).count() as u64;
            assert_eq!(stats["fits"], scored, "{stats}");
            let scratch = stats["scratch_fits"].as_u64().unwrap();
            if scratch == 10 {
                // max_points = 10 at the default schedule: the first 10 fits fresh, no 61-unit
                // streak in 40 units.
                continue;
            }
            // The trajectory's reward is the loss (lower is better); DyHPO's patience counts
            // units without a better score and asks for fresh weights when it reaches the limit,
            // once per streak.
            let mut best = f64::INFINITY;
            let (mut quiet, mut fits, mut restarts, mut pending) = (0u64, 0u64, 0u64, false);
            let limit = if scratch == 4 { 1000 } else { 3 };
            for r in rewards[..39].iter().flatten() {
                if *r < best {
                    best = *r;
                    quiet = 0;
                } else {
                    quiet += 1;
                    if quiet == limit {
                        pending = true;
                    }
                }
                fits += 1;
                if fits > 4 && pending {
                    restarts += 1;
                    pending = false;
                } else if fits <= 4 {
                    pending = false;
                }
            }
            assert_eq!(scratch, 4 + restarts, "{stats} limit {limit}");
        }
        if world.is_empty() {
            assert!(
                cells
                    .iter()
                    .any(|c| c.0["scratch_fits"].as_u64().unwrap() > 4
                        && c.0["scratch_fits"].as_u64().unwrap() != 10),
                "restart_after = 3 restarts some fit"
            );
        }
    }
}

/// The freeze-thaw GP draws its initial design (3 observations), then fits once before every
/// decision that follows a scored unit; results are identical at 1 and 2 threads, on 3 workers,
/// and with `max_points`.
#[test]
fn ftgp_draws_its_initial_design_then_fits_before_every_decision() {
    let dir = scratch("ft-ftgp");
    let policies = "[[policies]]\nfamily = \"ftgp\"\niters = 8\n\n[[policies]]\nfamily = \"ftgp\"\niters = 8\nmax_points = 12\ninitial = 5";
    for world in ["", "workers = 3"] {
        let e = experiment(&dir, 40, world, policies);
        let a = same_at_one_and_two_threads(&e, &dir, world);
        let cells = cells(&a);
        assert_eq!(cells.len(), 4, "{world}");
        for (stats, decisions, rewards) in &cells {
            assert_eq!(*decisions, 40, "{stats} ({world})");
            assert_eq!(stats["failed_fits"], 0, "{stats}");
            if !world.is_empty() {
                continue;
            }
            assert!(
                rewards.iter().all(Option::is_some),
                "TaskSet scores every unit"
            );
            // One worker: `initial` draws, then a fit before each of the other decisions.
            let fits = stats["fits"].as_u64().unwrap();
            assert!(fits == 40 - 3 || fits == 40 - 5, "{stats}");
        }
    }
}

/// Domhan et al.'s predictive termination: with one worker each configuration trains in one
/// block of consecutive units until its curve ends or the criterion stops it, and is never
/// trained again; some configurations are stopped; results are identical at 1 and 2 threads
/// and on 3 workers.
#[test]
fn curve_ensemble_trains_each_configuration_once_until_it_is_stopped() {
    let dir = scratch("ft-curve-ensemble");
    let policies = "[[policies]]\nfamily = \"curve-ensemble\"\nscores = \"loss\"\nmin_points = 5\ncheck_every = 5\nwalkers = 40\nsamples = 200\nburn_in = 100\nthin = 5\nunfit = [\"continue\", \"stop\"]";
    for world in ["", "workers = 3"] {
        let e = experiment(&dir, 200, world, policies);
        let a = same_at_one_and_two_threads(&e, &dir, world);
        let cells = cells(&a);
        assert_eq!(cells.len(), 4, "{world}");
        let mut stopped = 0;
        for (stats, decisions, _) in &cells {
            assert_eq!(*decisions, 200, "{stats} ({world})");
            assert!(stats["checks"].as_u64().unwrap() >= stats["stopped"].as_u64().unwrap());
            stopped += stats["stopped"].as_u64().unwrap();
        }
        assert!(stopped > 0, "no configuration was stopped ({world})");
        if !world.is_empty() {
            continue;
        }
        let traj = read(&a.join("trajectories.parquet"));
        let (tc, ts, ta) = (
            traj.column("cell").unwrap().u64().unwrap().clone(),
            traj.column("step").unwrap().u32().unwrap().clone(),
            traj.column("arm").unwrap().u32().unwrap().clone(),
        );
        let mut rows: Vec<(u64, u32, u32)> = (0..traj.height())
            .map(|j| (tc.get(j).unwrap(), ts.get(j).unwrap(), ta.get(j).unwrap()))
            .collect();
        rows.sort_unstable();
        for cell in rows
            .iter()
            .map(|r| r.0)
            .collect::<std::collections::BTreeSet<_>>()
        {
            let arms: Vec<u32> = rows.iter().filter(|r| r.0 == cell).map(|r| r.2).collect();
            let mut seen = std::collections::HashSet::new();
            for w in arms.windows(2) {
                if w[0] != w[1] {
                    assert!(seen.insert(w[0]), "cell {cell}: arm {} trained again", w[0]);
                    assert!(!seen.contains(&w[1]), "cell {cell}: arm {} resumed", w[1]);
                }
            }
        }
    }
}

/// `reproduce freeze-thaw` on a trimmed copy of its experiment (60 units, one repetition, on all
/// 12 tasks): the claim's three families, the anytime table and figure, and regrets that are
/// what the definition says.
#[test]
fn reproduce_freeze_thaw_writes_the_claim_the_anytime_table_and_the_figure() {
    let out = scratch("ft-reproduce");
    let mut opts = common::trimmed_reproduction(
        &out,
        &[
            ("freeze-thaw-taskset.toml", "[60]"),
            ("freeze-thaw-taskset-gp.toml", "[60]"),
        ],
        1,
    );
    // The models made small: this test is about the reproduction's tables, claim, figure and
    // cache, not the models (their defaults run in the tests above and in the reproduction
    // itself), and `cargo test` builds without optimisation.
    for (file, family, small) in [
        (
            "freeze-thaw-taskset.toml",
            "dpl",
            "units = 16\nepochs = 20\nrefine_epochs = 5\n",
        ),
        (
            "freeze-thaw-taskset.toml",
            "curve-ensemble",
            "walkers = 30\nsamples = 200\nburn_in = 50\n",
        ),
        (
            "freeze-thaw-taskset-gp.toml",
            "dyhpo",
            "units1 = 8\nunits2 = 8\nepochs = 30\nrefine_epochs = 5\n",
        ),
        ("freeze-thaw-taskset-gp.toml", "ftgp", "iters = 5\n"),
    ] {
        let exp = opts.experiments.join(file);
        // (The trimmed copy may end without a newline.)
        let text = std::fs::read_to_string(&exp).unwrap() + "\n";
        let line = format!("family = \"{family}\"\n");
        assert!(text.contains(&line), "{file} runs {family}");
        std::fs::write(&exp, text.replacen(&line, &format!("{line}{small}"), 1)).unwrap();
    }
    // Through a cell cache that stores every cell (a threshold of time would make which cells
    // are stored depend on the machine's load): a second reproduction from emptied results
    // folders stores no new cell (every cell is served) and writes the same table.
    opts.cache = Some(out.join("cache"));
    opts.cache_min_s = Some(0.0);
    let files = banditbench::reproduce::freeze_thaw::reproduce(&opts).unwrap();
    let dir = out.join("freeze-thaw");
    let entries = |d: &Path| -> usize {
        fn walk(d: &Path) -> usize {
            std::fs::read_dir(d).map_or(0, |r| {
                r.flatten()
                    .map(|e| {
                        if e.path().is_dir() {
                            walk(&e.path())
                        } else {
                            1
                        }
                    })
                    .sum()
            })
        }
        walk(d)
    };
    let (first, stored) = (
        std::fs::read(dir.join("regret.csv")).unwrap(),
        entries(&out.join("cache")),
    );
    assert!(
        stored >= 12 * 4,
        "the model-fitting cells are stored: {stored}"
    );
    std::fs::remove_dir_all(out.join("freeze-thaw-taskset")).unwrap();
    std::fs::remove_dir_all(out.join("freeze-thaw-taskset-gp")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    banditbench::reproduce::freeze_thaw::reproduce(&opts).unwrap();
    assert_eq!(std::fs::read(dir.join("regret.csv")).unwrap(), first);
    assert_eq!(entries(&out.join("cache")), stored);
    for f in [
        "README.md",
        "claim.md",
        "regret.csv",
        "anytime.png",
        "anytime.pdf",
    ] {
        assert!(files.contains(&dir.join(f)), "{f} listed");
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let claim = std::fs::read_to_string(dir.join("claim.md")).unwrap();
    for at in ["25 %", "50 %", "100 %"] {
        assert!(
            claim.contains(&format!(
                "| {at} of the budget | **the whole claim** | 12 units"
            )),
            "{claim}"
        );
    }
    for part in ["random search", "Hyperband", "ASHA", "DyHPO"] {
        assert_eq!(
            claim
                .matches(&format!("DPL's regret is lower than {part}"))
                .count(),
            3,
            "{claim}"
        );
    }
    // regret.csv: 8 policies (6 + the 2 of the GP experiment) x 20 points (5 % of the budget
    // apart); regret >= 0, ranks in [1, 8] summing to 36 at every point (ties share their mean
    // rank).
    let csv = std::fs::read_to_string(dir.join("regret.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 8 * 20, "{csv}");
    for family in ["dyhpo", "ftgp", "curve-ensemble", "dpl"] {
        assert_eq!(
            rows.iter().filter(|r| r[0] == family).count(),
            20,
            "{family}: {csv}"
        );
    }
    let mut rank_sum: std::collections::BTreeMap<&str, f64> = Default::default();
    for r in &rows {
        let (units, regret, rank) = (r[r.len() - 3], r[r.len() - 2], r[r.len() - 1]);
        let (regret, rank): (f64, f64) = (regret.parse().unwrap(), rank.parse().unwrap());
        assert!(regret >= 0.0 && regret.is_finite(), "{r:?}");
        assert!((1.0..=8.0).contains(&rank), "{r:?}");
        *rank_sum.entry(units).or_default() += rank;
    }
    assert_eq!(rank_sum.len(), 20);
    for (units, s) in &rank_sum {
        assert!((s - 36.0).abs() < 1e-9, "ranks at {units} sum to {s}");
    }
}

/// The generated MFHartmann pool runs like any pool, says it is synthetic, and gives the same
/// results at any thread count; a pool.toml that gets the generator wrong is refused by key.
#[test]
fn a_generated_mfhartmann_pool_runs_says_synthetic_and_bad_generators_are_named() {
    let dir = scratch("ft-mfhartmann");
    let e = dir.join("mfh.toml");
    std::fs::write(
        &e,
        format!(
            r#"name = "mfh"
traces = "{}"
seed = 3
repetitions = 2

[tasks]
datasets = ["good", "terrible"]
runs = [0]

[world]
kind = "pool"
budget_unit = "seconds"
budgets = [3.0]

[[policies]]
family = "asha"

[[policies]]
family = "dpl"
ensemble = 2
units = 8
epochs = 10
refine_epochs = 2
"#,
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("traces/mfhartmann3")
                .display()
        ),
    )
    .unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    let o = bin()
        .args(["run", e.to_str().unwrap(), "--out", a.to_str().unwrap()])
        .args(["--threads", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(text.contains("on mfhartmann3 (synthetic, value)"), "{text}");
    run(&e, &b, "2");
    for f in ["runs.parquet", "trajectories.parquet"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    let lock = std::fs::read_to_string(a.join("experiment.lock.toml")).unwrap();
    assert!(lock.contains("source = \"synthetic\""), "{lock}");
    // `traces list` names the generated pools synthetic, and only them.
    let o = bin()
        .args(["traces", "list"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&o.stdout);
    for line in list.lines().filter(|l| l.contains(" pool (")) {
        assert_eq!(
            line.starts_with("mfhartmann"),
            line.contains(", synthetic)"),
            "{line}"
        );
    }
    assert_eq!(list.matches(", synthetic)").count(), 2, "{list}");
    let runs = read(&a.join("runs.parquet"));
    assert_eq!(runs.height(), 2 * 2 * 2);
    // A seconds budget of 3: each cell trains units whose costs (mf-prior-bench's λ increments)
    // add up to at most 3.
    let used = runs.column("budget_used").unwrap().f64().unwrap();
    assert!(used.into_no_null_iter().all(|u| u > 2.5 && u <= 3.0 + 1e-9));

    // Bad generators, each named.
    let pool = dir.join("bad-pool");
    std::fs::create_dir_all(&pool).unwrap();
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/mfhartmann3/pool.toml"),
    )
    .unwrap();
    for (from, to, says) in [
        (
            "\"good\", \"default\"",
            "\"great\"",
            "preset \"great\" is not one of mf-prior-bench's",
        ),
        (
            "function = \"mfhartmann3\"",
            "function = \"branin\"",
            "key 'function' is 'branin'",
        ),
        (
            "banditbench-pool/1.2",
            "banditbench-pool/1.1",
            "[generator] needs format",
        ),
        (
            "source = \"synthetic\"",
            "source = \"recorded\"",
            "says [provenance] source = \"synthetic\"",
        ),
        ("name = \"X_2\"", "name = \"X_9\"", "dimensions X_0 … X_2"),
        ("configs = 1000", "configs = 0", "key 'configs' is 0"),
    ] {
        assert!(good.contains(from), "{from}");
        std::fs::write(pool.join("pool.toml"), good.replacen(from, to, 1)).unwrap();
        let o = bin()
            .args(["traces", "validate", pool.to_str().unwrap()])
            .output()
            .unwrap();
        let err =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{to}: {err}");
        assert!(err.contains("pool.toml"), "{err}");
    }
}

/// DPL's decisions cost simulated time under `overhead = "per_fit"`: each fit of its ensemble is
/// charged `overhead_s` on a budget of seconds (sklearn-grid's recorded training time), so it
/// trains fewer units than ASHA, whose decisions cost nothing, in the same budget.
#[test]
fn dpl_fits_are_charged_on_the_clock_per_fit() {
    let dir = scratch("ft-overhead");
    let e = dir.join("ov.toml");
    std::fs::write(
        &e,
        format!(
            r#"name = "ov"
traces = "{}"
seed = 4
repetitions = 2
[tasks]
datasets = ["car"]
runs = [0]
learners = ["mlp"]
[world]
kind = "pool"
per_learner = true
budget_unit = "seconds"
budgets = [5.0]
overhead = "per_fit"
overhead_s = 0.05
[[policies]]
family = "dpl"
units = 16
epochs = 20
[[policies]]
family = "asha"
"#,
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("traces/sklearn-grid")
                .display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    run(&e, &out, "2");
    let runs = read(&out.join("runs.parquet"));
    let fam = runs.column("policy_family").unwrap().str().unwrap().clone();
    let over = runs.column("overhead_s").unwrap().f64().unwrap().clone();
    let units = runs.column("units_trained").unwrap().u64().unwrap().clone();
    let stats = runs.column("policy_stats").unwrap().str().unwrap().clone();
    let (mut dpl_units, mut asha_units) = (0, 0);
    for i in 0..runs.height() {
        match fam.get(i).unwrap() {
            "dpl" => {
                let s: serde_json::Value = serde_json::from_str(stats.get(i).unwrap()).unwrap();
                let fits = s["fits"].as_f64().unwrap();
                assert!(fits > 10.0, "{s}");
                assert!((over.get(i).unwrap() - 0.05 * fits).abs() < 1e-9, "{s}");
                dpl_units += units.get(i).unwrap();
            }
            _ => {
                assert_eq!(over.get(i).unwrap(), 0.0);
                asha_units += units.get(i).unwrap();
            }
        }
    }
    assert!(dpl_units < asha_units, "{dpl_units} against {asha_units}");
}

/// `hamlet-pool`: HAMLET's rules on k drawn configurations never pull an arm whose curve has
/// ended; `refill = "stop"` ends the cell once the k curves are complete, `"batch"` draws k more.
#[test]
fn hamlet_pool_pulls_only_open_arms_and_refills_or_stops() {
    let dir = scratch("ft-hamlet-pool");
    let e = experiment(
        &dir,
        400,
        "",
        r#"[[policies]]
family = "hamlet-pool"
k = 3
rule = ["eps", "decay", "ucb"]
refill = ["stop", "batch"]"#,
    );
    let out = dir.join("out");
    run(&e, &out, "2");
    let runs = read(&out.join("runs.parquet"));
    let policy = runs.column("policy").unwrap().str().unwrap().clone();
    let drawn = runs.column("configs_drawn").unwrap().u64().unwrap().clone();
    let units = runs.column("units_trained").unwrap().u64().unwrap().clone();
    let wasted = runs
        .column("exhausted_pulls")
        .unwrap()
        .u64()
        .unwrap()
        .clone();
    assert_eq!(runs.height(), 3 * 2 * 2);
    for i in 0..runs.height() {
        let p = policy.get(i).unwrap();
        assert_eq!(wasted.get(i), Some(0), "{p}: a pull of an ended curve");
        if p.contains("refill=stop") {
            // Three curves of at most 51 units, then the cell stops.
            assert_eq!(drawn.get(i), Some(3), "{p}");
            assert!(units.get(i).unwrap() <= 3 * 51, "{p}");
        } else {
            // 400 units cannot fit in three curves: more configurations are drawn, k at a time.
            assert_eq!(units.get(i), Some(400), "{p}");
            assert!(drawn.get(i).unwrap() >= 8, "{p}");
        }
    }
}
