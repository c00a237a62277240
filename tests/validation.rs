//! Every validation rule of trace-set format v1: one bad file each, and the message names the
//! file, the row (and CSV line) and the column.

mod common;

use banditbench::trace::{LoadOptions, TaskFilter, load_trace_set};
use common::{set_line, tiny_variant};

fn error_of(dir: &std::path::Path) -> String {
    format!(
        "{:#}",
        load_trace_set(dir, &LoadOptions::default()).expect_err("the file is invalid")
    )
}

fn csv_error(name: &str, edit: impl Fn(&str) -> String) -> String {
    let dir = tiny_variant(name, edit, |m| m.to_string());
    let e = error_of(&dir);
    assert!(
        e.contains(&dir.join("evaluations.csv").display().to_string()),
        "the message names the file: {e}"
    );
    e
}

#[test]
fn the_fixture_is_valid_and_grouped_by_task() {
    let ts = load_trace_set(&common::fixture(), &LoadOptions::default()).unwrap();
    assert_eq!(ts.learners, vec!["a", "b", "c"]);
    assert_eq!(ts.tasks.len(), 2);
    let d1 = &ts.tasks[0];
    assert_eq!((d1.dataset.as_str(), d1.run), ("d1", 0));
    assert_eq!(d1.arms[1].elapsed_s, vec![3.0, 6.0, 9.0]);
    // cost_s defaults to the difference of elapsed_s.
    assert_eq!(d1.arms[1].cost_s, vec![3.0, 3.0, 3.0]);
    // The failed row's score is not kept; the timeout's recorded score is dropped too.
    assert!(d1.arms[1].score[1].is_nan());
    assert!(d1.arms[2].score[3].is_nan());
    assert_eq!(ts.n_evaluations(), 18);
}

#[test]
fn missing_required_column() {
    let e = csv_error("missing-col", |csv| {
        csv.lines()
            .map(|l| l.split(',').filter(|_| true).collect::<Vec<_>>())
            .map(|f| {
                let mut f = f;
                f.remove(4); // elapsed_s
                f.join(",")
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    assert!(e.contains("missing required column 'elapsed_s'"), "{e}");
}

#[test]
fn mistyped_integer_column() {
    let e = csv_error("mistyped-run", |csv| {
        set_line(csv, 4, "d1,a,zero,2,6.0,0.62,0.61,ok")
    });
    assert!(
        e.contains("row 3 (line 4), column 'run': 'zero' is not an integer"),
        "{e}"
    );
}

#[test]
fn mistyped_float_column() {
    let e = csv_error("mistyped-elapsed", |csv| {
        set_line(csv, 6, "d1,b,0,0,soon,0.70,0.69,ok")
    });
    assert!(
        e.contains("row 5 (line 6), column 'elapsed_s': 'soon' is not a number"),
        "{e}"
    );
}

#[test]
fn nan_score_in_an_ok_row() {
    let e = csv_error("nan-score", |csv| {
        set_line(csv, 3, "d1,a,0,1,4.0,NaN,0.58,ok")
    });
    assert!(e.contains("row 2 (line 3), column 'score'"), "{e}");
    assert!(e.contains("must be finite"), "{e}");
}

#[test]
fn empty_score_in_an_ok_row() {
    let e = csv_error("empty-score", |csv| {
        set_line(csv, 3, "d1,a,0,1,4.0,,0.58,ok")
    });
    assert!(
        e.contains("row 2 (line 3), column 'score': empty in an 'ok' row"),
        "{e}"
    );
}

#[test]
fn infinite_elapsed() {
    let e = csv_error("inf-elapsed", |csv| {
        set_line(csv, 3, "d1,a,0,1,inf,0.60,0.58,ok")
    });
    assert!(e.contains("row 2 (line 3), column 'elapsed_s'"), "{e}");
    assert!(e.contains("not a finite number"), "{e}");
}

#[test]
fn negative_elapsed() {
    let e = csv_error("neg-elapsed", |csv| {
        set_line(csv, 2, "d1,a,0,0,-2.0,0.50,0.48,ok")
    });
    assert!(
        e.contains("row 1 (line 2), column 'elapsed_s': -2 is negative"),
        "{e}"
    );
}

#[test]
fn negative_cost() {
    let e = csv_error("neg-cost", |csv| {
        let mut out = String::new();
        for (i, l) in csv.lines().enumerate() {
            let extra = match i {
                0 => ",cost_s",
                3 => ",-1.5",
                _ => ",1.0",
            };
            out.push_str(l);
            out.push_str(extra);
            out.push('\n');
        }
        out
    });
    assert!(
        e.contains("row 3 (line 4), column 'cost_s': -1.5 is negative"),
        "{e}"
    );
}

#[test]
fn elapsed_decreasing_within_a_run() {
    let e = csv_error("decreasing", |csv| {
        set_line(csv, 4, "d1,a,0,2,3.5,0.62,0.61,ok")
    });
    assert!(
        e.contains("row 3 (line 4), column 'elapsed_s': 3.5 is less than 4"),
        "{e}"
    );
    assert!(e.contains("must not decrease"), "{e}");
}

#[test]
fn duplicate_sequence_number() {
    let e = csv_error("duplicate", |csv| {
        set_line(csv, 4, "d1,a,0,1,6.0,0.62,0.61,ok")
    });
    assert!(e.contains("row 2 (line 3) and row 3 (line 4)"), "{e}");
    assert!(
        e.contains("duplicate (dataset, learner, run, seq) = (d1, a, 0, 1)"),
        "{e}"
    );
}

#[test]
fn unknown_status() {
    let e = csv_error("status", |csv| set_line(csv, 7, "d1,b,0,1,6.0,,,crashed"));
    assert!(
        e.contains("row 6 (line 7), column 'status': unknown status 'crashed'; allowed: ok, failed, timeout"),
        "{e}"
    );
}

#[test]
fn negative_run() {
    let e = csv_error("neg-run", |csv| {
        set_line(csv, 2, "d1,a,-1,0,2.0,0.50,0.48,ok")
    });
    assert!(
        e.contains("row 1 (line 2), column 'run': -1 is negative"),
        "{e}"
    );
}

#[test]
fn several_problems_are_reported_together() {
    let e = csv_error("several", |csv| {
        let csv = set_line(csv, 2, "d1,a,0,0,-2.0,0.50,0.48,ok");
        set_line(&csv, 7, "d1,b,0,1,6.0,,,crashed")
    });
    assert!(e.contains("2 problem(s)"), "{e}");
}

#[test]
fn manifest_missing_field() {
    let dir = tiny_variant(
        "manifest-missing",
        |c| c.to_string(),
        |m| m.replace("metric = \"accuracy\"\n", ""),
    );
    let e = error_of(&dir);
    assert!(e.contains("traceset.toml: missing key 'metric'"), "{e}");
}

#[test]
fn manifest_unknown_format() {
    let dir = tiny_variant(
        "manifest-format",
        |c| c.to_string(),
        |m| m.replace("banditbench-traces/1", "banditbench-traces/9"),
    );
    let e = error_of(&dir);
    assert!(
        e.contains(
            "unknown format 'banditbench-traces/9'; this program reads 'banditbench-traces/1'"
        ),
        "{e}"
    );
}

#[test]
fn manifest_bad_direction_and_source() {
    let dir = tiny_variant(
        "manifest-direction",
        |c| c.to_string(),
        |m| m.replace("maximize", "up"),
    );
    assert!(error_of(&dir).contains("'direction' is 'up'; allowed: maximize, minimize"));
    let dir = tiny_variant(
        "manifest-source",
        |c| c.to_string(),
        |m| m.replace("\"synthetic\"", "\"dreamt\""),
    );
    assert!(error_of(&dir).contains("'provenance.source' is 'dreamt'"));
}

fn without_d2_c(csv: &str) -> String {
    csv.lines()
        .filter(|l| !l.starts_with("d2,c,"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn a_task_missing_a_learner_is_an_error_by_default() {
    let dir = tiny_variant("missing-arm", without_d2_c, |m| m.to_string());
    let e = error_of(&dir);
    assert!(e.contains("1 task(s) lack some learners"), "{e}");
    assert!(e.contains("d2/0 lacks c"), "{e}");
    assert!(e.contains("--allow-missing-arms"), "{e}");
}

#[test]
fn allow_missing_arms_drops_the_task_and_lists_it() {
    let dir = tiny_variant("missing-arm-ok", without_d2_c, |m| m.to_string());
    let ts = load_trace_set(
        &dir,
        &LoadOptions {
            allow_missing_arms: true,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(ts.tasks.len(), 1);
    assert_eq!(ts.dropped.len(), 1);
    assert_eq!(ts.dropped[0].dataset, "d2");
    assert_eq!(ts.dropped[0].missing, vec!["c"]);
}

#[test]
fn a_learner_filter_decides_completeness() {
    // d2 lacks c, but an experiment that only uses a and b keeps both tasks.
    let dir = tiny_variant("filter", without_d2_c, |m| m.to_string());
    let ts = load_trace_set(
        &dir,
        &LoadOptions {
            allow_missing_arms: false,
            filter: TaskFilter {
                learners: Some(vec!["a".into(), "b".into()]),
                ..TaskFilter::default()
            },
        },
    )
    .unwrap();
    assert_eq!(ts.tasks.len(), 2);
    assert_eq!(ts.learners, vec!["a", "b"]);
}

#[test]
fn filters_naming_unknown_things_are_errors() {
    let e = load_trace_set(
        &common::fixture(),
        &LoadOptions {
            filter: TaskFilter {
                datasets: Some(vec!["d9".into()]),
                ..TaskFilter::default()
            },
            ..LoadOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("dataset 'd9' is not in this trace set; it has: d1, d2"),
        "{e}"
    );
}

#[test]
fn parquet_rows_are_named_too() {
    use polars::prelude::*;
    let dir = common::scratch("parquet");
    std::fs::copy(
        common::fixture().join("traceset.toml"),
        dir.join("traceset.toml"),
    )
    .unwrap();
    let mut df = df!(
        "dataset" => ["d1", "d1", "d1"],
        "learner" => ["a", "a", "a"],
        "run" => [0i64, 0, 0],
        "seq" => [0.0f64, 1.5, 2.0],
        "elapsed_s" => [1.0f64, 2.0, 3.0],
        "score" => [0.1f64, 0.2, 0.3]
    )
    .unwrap();
    let f = std::fs::File::create(dir.join("evaluations.parquet")).unwrap();
    ParquetWriter::new(f).finish(&mut df).unwrap();
    let e = error_of(&dir);
    assert!(e.contains("evaluations.parquet"), "{e}");
    assert!(
        e.contains("row 2, column 'seq': 1.5 is not an integer"),
        "{e}"
    );
}

#[test]
fn a_folder_without_evaluations() {
    let dir = common::scratch("empty");
    std::fs::copy(
        common::fixture().join("traceset.toml"),
        dir.join("traceset.toml"),
    )
    .unwrap();
    let e = error_of(&dir);
    assert!(
        e.contains("no evaluations.parquet or evaluations.csv"),
        "{e}"
    );
}
