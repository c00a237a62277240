//! Every registered family in every world it declares, at 1, 2 and 4 simulated workers, on small
//! bundled data: each combination either finishes every cell, or is refused when the experiment
//! loads, naming the family and the key, exactly when the family does not declare that it runs on
//! several workers in that world. This is the class test for "a family claims a world or a worker
//! count it cannot run": a panic, a collision on a running arm or a refusal that the declaration
//! does not predict fails it. Every finished cell's bookkeeping is checked against its trajectory
//! too (`bookkeeping`): one definition of when the best was found, at every worker count.

use std::path::{Path, PathBuf};

use super::data::prepare;
use crate::policy::registry;
use crate::replay::WorldKind;
use crate::replay::pool::{IncumbentRule, Recommendation};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The experiment shapes a world is tried in: (label, `[world]` keys and data, policy-free).
fn shapes(world: WorldKind) -> Vec<(&'static str, String)> {
    let tiny = root().join("tests/fixtures/tiny");
    let grid = root().join("traces/sklearn-grid");
    let sample = root().join("traces/taskset");
    let nasbench = root().join("traces/nasbench201");
    // A trace set of several objectives (format 1.1), three learners of one task.
    let two = format!(
        "traces = {:?}\n[tasks]\ndatasets = [\"car\"]\nlearners = [\"decision-tree\", \"knn\", \"sgd\"]\n",
        root().join("traces/sklearn-random").display().to_string()
    );
    let objectives = "objectives = [\"accuracy\", \"train_time\"]\n";
    match world {
        WorldKind::TimeSliced => vec![
            (
                "time-sliced",
                format!(
                    "traces = {:?}\n[world]\nkind = \"time-sliced\"\nbudgets = [40.0]\nslice = 2.0\n",
                    tiny.display().to_string()
                ),
            ),
            (
                "time-sliced of several objectives (sklearn-random)",
                format!(
                    "{two}[world]\nkind = \"time-sliced\"\nbudget_unit = \"seconds\"\nbudgets = [12.0]\nslice = 0.5\n{objectives}"
                ),
            ),
        ],
        WorldKind::PullCount => vec![
            (
                "pull-count",
                format!(
                    "traces = {:?}\n[world]\nkind = \"pull-count\"\nbudgets = [12]\n",
                    tiny.display().to_string()
                ),
            ),
            (
                "pull-count of several objectives (sklearn-random)",
                format!(
                    "{two}[world]\nkind = \"pull-count\"\nbudgets = [15]\n{objectives}"
                ),
            ),
        ],
        WorldKind::Synthetic => vec![(
            "synthetic",
            "[world]\nkind = \"synthetic\"\nbudgets = [60]\nwork_s = 1.0\nwork = \"exponential\"\narms = [\n  { name = \"a\", distribution = \"gaussian\", mean = 0.5, sd = 0.1 },\n  { name = \"b\", distribution = \"gaussian\", mean = 0.6, sd = 0.1 },\n  { name = \"c\", distribution = \"gaussian\", mean = 0.4, sd = 0.2 },\n]\n"
                .to_string(),
        )],
        WorldKind::Pool => vec![
            (
                "pool per learner, evaluations",
                format!(
                    "traces = {:?}\n[tasks]\ndatasets = [\"car\"]\nruns = [0]\nlearners = [\"mlp\", \"sgd\"]\n[world]\nkind = \"pool\"\nper_learner = true\nbudget_unit = \"evaluations\"\nbudgets = [6]\n",
                    grid.display().to_string()
                ),
            ),
            (
                "pool joint, units",
                format!(
                    "traces = {:?}\n[tasks]\ndatasets = [\"car\"]\nruns = [0]\n[world]\nkind = \"pool\"\nper_learner = false\nbudget_unit = \"units\"\nbudgets = [120]\n",
                    grid.display().to_string()
                ),
            ),
            (
                "pool sampled from ranges (taskset), units",
                format!(
                    "traces = {:?}\n[tasks]\ndatasets = [\"FixedTextRNNClassification_imdb_patch32_GRU128_bs128\"]\n[world]\nkind = \"pool\"\nbudget_unit = \"units\"\nbudgets = [150]\n",
                    sample.display().to_string()
                ),
            ),
            (
                "pool of several objectives (nasbench201), evaluations",
                format!(
                    "traces = {:?}\n[tasks]\ndatasets = [\"cifar10\"]\nruns = [0]\n[world]\nkind = \"pool\"\nbudget_unit = \"evaluations\"\nbudgets = [30]\nobjectives = [\"val_acc\", \"latency\", \"model_size\"]\n",
                    nasbench.display().to_string()
                ),
            ),
            (
                "pool joint, seconds",
                format!(
                    "traces = {:?}\n[tasks]\ndatasets = [\"phoneme\"]\nruns = [1]\n[world]\nkind = \"pool\"\nper_learner = false\nbudget_unit = \"seconds\"\nbudgets = [6.0]\n",
                    grid.display().to_string()
                ),
            ),
        ],
    }
}

/// Families whose defaults fit models too large for this test's hundreds of cells, and the
/// parameters it gives them instead: the combinations under test are worlds and worker counts,
/// not the models (their defaults run in their own tests).
/// `cargo test` builds without optimisation, where DPL's default ensemble takes minutes a cell.
const SMALL: &[(&str, &str)] = &[
    (
        "dpl",
        "ensemble = 2\nunits = 4\nepochs = 10\nrefine_epochs = 2\nfull_fits = 2\n",
    ),
    (
        "dyhpo",
        "units1 = 4\nunits2 = 4\nchannels = 1\nepochs = 10\nrefine_epochs = 2\nfull_fits = 2\nmax_points = 16\n",
    ),
    ("ftgp", "iters = 5\nmax_points = 32\nnew_configs = 16\n"),
    (
        "curve-ensemble",
        "min_points = 4\ncheck_every = 4\nwalkers = 20\nsamples = 40\nburn_in = 20\nthin = 4\n",
    ),
];

/// Write the experiment: `shape` with `workers` inserted into its `[world]`, and one policy.
fn write(dir: &Path, n: usize, shape: &str, workers: usize, family: &str) -> PathBuf {
    let world = shape.replacen("[world]\n", &format!("[world]\nworkers = {workers}\n"), 1);
    let small = SMALL
        .iter()
        .find(|(f, _)| *f == family)
        .map_or("", |(_, p)| p);
    let text = format!(
        "name = \"every-family-{n}\"\nseed = 3\nrepetitions = 3\n{world}\n[[policies]]\nfamily = {family:?}\n{small}"
    );
    let path = dir.join(format!("e{n}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// What one combination did.
enum Outcome {
    Finished,
    Refused(String),
    Failed(String),
}

fn try_run(path: &Path) -> Outcome {
    let (exp, data) = match prepare(path) {
        Ok(x) => x,
        Err(e) => return Outcome::Refused(format!("{e:#}")),
    };
    if let Err(e) = data.check(&exp) {
        return Outcome::Refused(format!("{e:#}"));
    }
    // The pool world's recommendation can differ from its anytime incumbent.
    let best_seen = match &exp.world.options {
        super::WorldOptions::Pool(o) => {
            o.incumbent == IncumbentRule::BestSeen && o.recommendation == Recommendation::BestSeen
        }
        _ => true,
    };
    for cell in data.expand_cells(&exp) {
        // A panic becomes an error as in a run (`caught`), so it fails the combination.
        let what = format!("cell {}", cell.index);
        match super::caught(&what, || data.run_cell(&cell, &exp, true)) {
            Err(e) => return Outcome::Failed(format!("{what}: {e:#}")),
            Ok(r) => {
                if let Err(e) = bookkeeping(&r, best_seen) {
                    return Outcome::Failed(format!("{what}: {e}"));
                }
            }
        }
    }
    Outcome::Finished
}

/// The numbers of a cell agree with its trajectory: `best_found_at` is the `time` of the step
/// that revealed the reported best (with a best-seen incumbent, the first step whose incumbent
/// reaches it), and idle time is never negative before its floor at zero.
fn bookkeeping(r: &super::CellResult, best_seen: bool) -> Result<(), String> {
    let steps = &r.steps;
    if r.outcome.best_score.is_nan() {
        return match r.outcome.best_found_at.is_nan() {
            true => Ok(()),
            false => Err(format!(
                "best_found_at is {} with nothing found",
                r.outcome.best_found_at
            )),
        };
    }
    if !steps.iter().any(|s| s.time == r.outcome.best_found_at) {
        return Err(format!(
            "best_found_at {} is the time of no step",
            r.outcome.best_found_at
        ));
    }
    if best_seen {
        let first = steps
            .iter()
            .find(|s| s.incumbent == r.outcome.best_score)
            .map(|s| s.time);
        if first != Some(r.outcome.best_found_at) {
            return Err(format!(
                "best_found_at {} but the incumbent first reaches the best {} at time {first:?}",
                r.outcome.best_found_at, r.outcome.best_score
            ));
        }
    }
    // Several objectives: the archive only grows, so its hypervolume regret never rises, and
    // the last step's is the cell's.
    if let Some(mo) = &r.objectives {
        if !(0.0..=1.0).contains(&mo.hv_regret) {
            return Err(format!("hv_regret {} is outside [0, 1]", mo.hv_regret));
        }
        let h = &r.hv_regret_steps;
        if h.len() != steps.len() {
            return Err(format!(
                "{} hv_regret values for {} steps",
                h.len(),
                steps.len()
            ));
        }
        if let Some(i) = (1..h.len()).find(|&i| h[i] > h[i - 1]) {
            return Err(format!(
                "hv_regret rises from {} to {} at step {i}",
                h[i - 1],
                h[i]
            ));
        }
        if h.last().is_some_and(|&l| l != mo.hv_regret) {
            return Err(format!(
                "the last step's hv_regret {:?} is not the cell's {}",
                h.last(),
                mo.hv_regret
            ));
        }
    }
    let busy = r.workers as f64 * r.makespan_s - r.idle_s;
    if busy < -1e-9 * r.makespan_s.max(1.0) {
        return Err(format!(
            "busy worker-seconds {busy} are negative (makespan {}, idle {})",
            r.makespan_s, r.idle_s
        ));
    }
    Ok(())
}

/// Families that need something a shape's data lacks, and what their cells say: on TaskSet's
/// sample, grid search needs a grid and Ex-Def the learners' recorded defaults (NAS-Bench-201
/// records none); ParEGO and MO-ASHA need several objectives. Any other failure there is a
/// defect.
const NEEDS_DATA: [(&str, &str, &str); 15] = [
    ("grid-search", "taskset", "grid-search needs a grid pool"),
    (
        "ex-def",
        "taskset",
        "ex-def needs each learner's default configuration",
    ),
    (
        "ex-def",
        "several objectives",
        "ex-def needs each learner's default configuration",
    ),
    (
        "parego",
        "per learner",
        "parego scalarises several objectives",
    ),
    ("parego", "joint", "parego scalarises several objectives"),
    ("parego", "taskset", "parego scalarises several objectives"),
    ("mo-asha", "per learner", "mo-asha ranks several objectives"),
    ("mo-asha", "joint", "mo-asha ranks several objectives"),
    ("mo-asha", "taskset", "mo-asha ranks several objectives"),
    (
        "mo-tpe",
        "per learner",
        "mo-tpe splits by several objectives",
    ),
    ("mo-tpe", "joint", "mo-tpe splits by several objectives"),
    ("mo-tpe", "taskset", "mo-tpe splits by several objectives"),
    (
        "mo-hyperband",
        "per learner",
        "mo-hyperband ranks several objectives",
    ),
    (
        "mo-hyperband",
        "joint",
        "mo-hyperband ranks several objectives",
    ),
    (
        "mo-hyperband",
        "taskset",
        "mo-hyperband ranks several objectives",
    ),
];

#[test]
fn every_family_in_every_world_at_one_two_and_four_workers() {
    let dir = std::env::temp_dir().join(format!("banditbench-every-family-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut wrong = Vec::new();
    let mut n = 0;
    let mut tried = 0;
    for fam in registry() {
        for &world in fam.worlds {
            for (label, shape) in shapes(world) {
                for workers in [1, 2, 4] {
                    n += 1;
                    let path = write(&dir, n, &shape, workers, fam.name);
                    let t = std::time::Instant::now();
                    let out = try_run(&path);
                    if std::env::var_os("BANDITBENCH_TIME_FAMILIES").is_some() {
                        eprintln!("{} {label} {workers}: {:.2?}", fam.name, t.elapsed());
                    }
                    tried += 1;
                    let parallel = workers == 1 || fam.parallel.contains(&world);
                    let lacks = NEEDS_DATA
                        .iter()
                        .find(|(f, shape, _)| *f == fam.name && label.contains(shape))
                        .map(|x| x.2);
                    match (out, parallel) {
                        (Outcome::Failed(m), _) if lacks.is_some_and(|w| m.contains(w)) => {}
                        (Outcome::Finished, true) => {}
                        (Outcome::Refused(m), false)
                            if m.contains(fam.name) && m.contains("world.workers") => {}
                        (Outcome::Finished, false) => wrong.push(format!(
                            "{} in {label} at {workers} workers finished, but the family does not declare that it runs on several workers there",
                            fam.name
                        )),
                        (Outcome::Refused(m) | Outcome::Failed(m), _) => wrong.push(format!(
                            "{} in {label} at {workers} workers: {m}",
                            fam.name
                        )),
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        wrong.is_empty(),
        "{} of {tried} combinations disagree with their family's declaration:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
