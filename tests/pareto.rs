//! The multi-objective indicators against moocore 0.3.2's values (tests/golden/moocore.json,
//! written by scripts/reference/moocore_golden.py): its own test cases, and 1 000 random sets of
//! 2 to 6 objectives made here by the same splitmix64 stream as the script.

use banditbench::pareto::{
    Archive, attainment_surface, epsilon_additive, hypervolume, hypervolume_history, igd_plus,
    level_of_percentile, nondominated,
};
use serde_json::Value;
use std::path::Path;

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/moocore.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn flat(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// Steele, Lea & Flood's splitmix64, as the script has it.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 * 2f64.powi(-53)
    }
}

/// Random case `i`: points, reference point, reference set (its non-dominated points), d.
fn random_case(i: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>, usize) {
    let mut rng = SplitMix64(i);
    let d = 2 + (i % 5) as usize;
    let n = 5 + (rng.next() % 36) as usize;
    let m = 5 + (rng.next() % 16) as usize;
    let grid = i % 2 == 1;
    let mut draw = |k: usize| -> Vec<f64> {
        (0..k * d)
            .map(|_| {
                let u = rng.uniform();
                if grid { (u * 8.0).floor() } else { u }
            })
            .collect()
    };
    let points = draw(n);
    let other = draw(m);
    let reference = vec![if grid { 7.0 } else { 0.9 }; d];
    let set: Vec<f64> = nondominated(&other, d)
        .into_iter()
        .flat_map(|j| other[j * d..(j + 1) * d].to_vec())
        .collect();
    (points, reference, set, d)
}

#[test]
fn moocores_own_test_values() {
    let g = golden();
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        let (points, reference) = (flat(&c["points"]), numbers(&c["reference"]));
        let hv = hypervolume(&points, &reference);
        let want = c["hypervolume"].as_f64().unwrap();
        let published = c["published"].as_f64().unwrap();
        assert!(
            close(hv, want, 1e-12),
            "{}: {hv} vs moocore {want}",
            c["name"]
        );
        // The published values are printed to 9 to 15 digits.
        assert!(
            close(hv, published, 1e-9),
            "{}: {hv} vs {published}",
            c["name"]
        );
        // The anytime history ends where the whole set is.
        let history = hypervolume_history(&points, &reference);
        assert!(
            close(*history.last().unwrap(), want, 1e-12),
            "{}",
            c["name"]
        );
    }
}

#[test]
fn the_same_thousand_sets_against_botorch_as_a_second_reference() {
    // tests/golden/botorch.json: botorch 0.18.1's exact Hypervolume of the same 1 000 random sets
    // (scripts/reference/botorch_golden.py), an implementation independent of moocore's.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/botorch.json");
    let g: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let want = g["hypervolume"].as_array().unwrap();
    assert_eq!(want.len(), 1000);
    let mut worst = 0.0f64;
    for (i, w) in want.iter().enumerate() {
        let (points, reference, _, d) = random_case(i as u64);
        let (hv, w) = (hypervolume(&points, &reference), w.as_f64().unwrap());
        assert!(w > 0.0, "case {i}");
        worst = worst.max((hv - w).abs() / w);
        assert!(
            close(hv, w, 1e-12),
            "case {i} (d = {d}): {hv} vs botorch {w}"
        );
    }
    assert!(worst < 1e-12, "{worst}");
}

#[test]
fn a_thousand_random_sets_of_two_to_six_objectives() {
    let g = golden();
    let random = g["random"].as_array().unwrap();
    assert_eq!(random.len(), 1000);
    let mut worst = 0.0f64;
    for (i, want) in random.iter().enumerate() {
        let (points, reference, set, d) = random_case(i as u64);
        assert_eq!(
            set.len() / d,
            want["reference_set"].as_u64().unwrap() as usize,
            "case {i}"
        );
        let hv = hypervolume(&points, &reference);
        let w = want["hypervolume"].as_f64().unwrap();
        if w != 0.0 {
            worst = worst.max((hv - w).abs() / w);
        }
        assert!(
            close(hv, w, 1e-12),
            "case {i} (d = {d}): {hv} vs moocore {w}"
        );
        let mut archive = Archive::new(&reference);
        for p in points.chunks_exact(d) {
            archive.insert(p);
        }
        assert!(
            close(archive.hypervolume(), w, 1e-12),
            "case {i}: the archive"
        );
        let igd = igd_plus(&points, &set, d);
        let w = want["igd_plus"].as_f64().unwrap();
        assert!(close(igd, w, 1e-12), "case {i}: IGD+ {igd} vs moocore {w}");
        let eps = epsilon_additive(&points, &set, d);
        let w = want["epsilon_additive"].as_f64().unwrap();
        assert!(
            close(eps, w, 1e-12),
            "case {i}: additive ε {eps} vs moocore {w}"
        );
    }
    eprintln!("largest relative difference from moocore's hypervolume: {worst:e}");
}

/// The README's example under "Several objectives" is the module's doctest, which `cargo test`
/// runs: the two are the same lines.
#[test]
fn the_readme_example_is_the_doctest() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let section = readme.split("\n## Several objectives\n").nth(1).unwrap();
    let block = section
        .split("```rust\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let module = std::fs::read_to_string(format!("{root}/src/pareto/mod.rs")).unwrap();
    let doc: String = module
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let doctest = doc
        .split("```\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    assert_eq!(
        block, doctest,
        "README's example and src/pareto/mod.rs's doctest differ"
    );
}

/// EAF case `i` of the script: runs of two-objective points.
fn random_runs(i: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64(10_000 + i);
    let runs = 2 + rng.next() % 8;
    let grid = i % 2 == 1;
    (0..runs)
        .map(|_| {
            let n = 1 + rng.next() % 12;
            (0..n)
                .flat_map(|_| {
                    let (u, v) = (rng.uniform(), rng.uniform());
                    if grid {
                        [(u * 8.0).floor(), (v * 8.0).floor()]
                    } else {
                        [u, v]
                    }
                })
                .collect()
        })
        .collect()
}

fn surfaces_equal(runs: &[Vec<f64>], levels: &Value, what: &str) {
    let refs: Vec<&[f64]> = runs.iter().map(Vec::as_slice).collect();
    let levels = levels.as_array().unwrap();
    assert_eq!(levels.len(), runs.len(), "{what}");
    for (k, want) in levels.iter().enumerate() {
        let want: Vec<[f64; 2]> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()])
            .collect();
        assert_eq!(
            attainment_surface(&refs, k + 1),
            want,
            "{what}: level {} of {}",
            k + 1,
            runs.len()
        );
        // moocore's percentiles of every level map back to the level.
        let p = (k + 1) as f64 * 100.0 / runs.len() as f64;
        assert_eq!(level_of_percentile(p, runs.len()), k + 1);
    }
}

#[test]
fn attainment_surfaces_equal_moocores_eaf() {
    let g = golden();
    let input1 = &g["eaf_input1"];
    let runs: Vec<Vec<f64>> = input1["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(flat)
        .collect();
    assert_eq!(runs.len(), 10);
    surfaces_equal(&runs, &input1["levels"], "input1.dat");
    let random = g["eaf_random"].as_array().unwrap();
    assert_eq!(random.len(), 200);
    for (i, levels) in random.iter().enumerate() {
        surfaces_equal(&random_runs(i as u64), levels, &format!("EAF case {i}"));
    }
}

/// The bundled pools of several objectives (NAS-Bench-201 in four, FCNet in three): each task's
/// true Pareto front (its size) and the front's hypervolume against the task's nadir equal
/// moocore's on the same values.
#[test]
fn the_bundled_pools_true_fronts_equal_moocores() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (name, objectives, configs) in [
        (
            "nasbench201",
            &["val_acc", "train_time", "latency", "model_size"][..],
            15_625,
        ),
        (
            "fcnet",
            &["val_loss", "train_time", "model_size"][..],
            62_208,
        ),
    ] {
        let pool = banditbench::trace::pool::load_pool(
            std::path::Path::new(&format!("{root}/traces/{name}")),
            false,
        )
        .unwrap();
        let names: Vec<&str> = pool
            .manifest
            .objectives
            .iter()
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(names, objectives);
        let d = objectives.len();
        let all: Vec<usize> = (0..d).collect();
        let g = golden();
        let want = g[format!("{name}_fronts")].as_array().unwrap();
        assert_eq!(want.len(), pool.tasks.len());
        for (t, w) in want.iter().enumerate() {
            let task = &pool.tasks[t];
            assert_eq!(
                format!("{}/{}", task.dataset, task.run),
                w["task"].as_str().unwrap()
            );
            let (points, feasible) = pool.objective_points(t, &all);
            assert_eq!(feasible.len(), configs, "every configuration is feasible");
            let front: Vec<f64> = nondominated(&points, d)
                .into_iter()
                .flat_map(|i| points[d * i..d * i + d].to_vec())
                .collect();
            assert_eq!(
                front.len() / d,
                w["front"].as_u64().unwrap() as usize,
                "{}",
                w["task"]
            );
            let nadir: Vec<f64> = (0..d)
                .map(|k| {
                    points
                        .chunks_exact(d)
                        .map(|p| p[k])
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .collect();
            assert_eq!(nadir, numbers(&w["nadir"]), "{}", w["task"]);
            let hv = hypervolume(&front, &nadir);
            let want_hv = w["hypervolume"].as_f64().unwrap();
            assert!(
                close(hv, want_hv, 1e-12),
                "{}: {hv} vs moocore {want_hv}",
                w["task"]
            );
        }
    }
}

/// The non-dominated sort with an ε-net in each front (MO-ASHA's promotion order) equals the
/// order Syne Tune 0.16.0's `pareto_efficient` and `compute_epsilon_net` give, on 300 random
/// sets of 1 to 39 points in 2 to 4 objectives, a third of them on an integer grid (equal points
/// and distances) (`scripts/reference/epsilon_net_golden.py`).
#[test]
fn nondominated_order_equals_syne_tunes_fronts_and_epsilon_net() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/epsilon_net.json");
    let g: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(g["syne_tune"], "0.16.0");
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 300);
    for (k, c) in cases.iter().enumerate() {
        let d = c["d"].as_u64().unwrap() as usize;
        let dim = c["dim"].as_u64().unwrap() as usize;
        let points = numbers(&c["points"]);
        let want: Vec<usize> = c["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(
            banditbench::pareto::nondominated_order(&points, d, dim),
            want,
            "case {k}"
        );
    }
}
