//! Configuration pools (format banditbench-pool/1): a tiny hand-made pool written here, read back,
//! and one broken copy per validation rule, each refused with the file, row or key named.

mod common;

use std::path::{Path, PathBuf};

use banditbench::trace::pool::{DimKind, load_pool};
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
}
