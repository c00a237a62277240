//! `banditbench report`: the files of the contract, their values, and figures that render with
//! the expected labels and series.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{bin, experiment, run_fails, run_ok, run_quiet, scratch};
use serde_json::Value;

fn golden_csv(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/golden/{name}.csv"))
        .display()
        .to_string()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&read(p)).unwrap()
}

fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[1..4], b"PNG", "{} is a PNG", p.display());
    (
        u32::from_be_bytes(b[16..20].try_into().unwrap()),
        u32::from_be_bytes(b[20..24].try_into().unwrap()),
    )
}

#[test]
fn scores_csv_report_writes_the_contract_files_with_golden_values() {
    let out = scratch("report-scores");
    let o = run_ok(&[
        "report",
        "--scores",
        &golden_csv("large"),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Friedman's test (tie-corrected) over 200 units and 8 policies"),
        "{text}"
    );
    for f in [
        "ranks.csv",
        "summary.csv",
        "tests.json",
        "report.md",
        "report.tex",
        "mean_rank.svg",
        "mean_rank.png",
        "mean_rank.csv",
        "cd_nemenyi.svg",
        "cd_wilcoxon_holm.png",
        "rank_boxplots.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    let golden = json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/stats.json"));
    let g = &golden["tables"]["large"];
    let t = json(&out.join("tests.json"));
    let rel = |a: &Value, b: &Value| {
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-300), "{a} vs {b}");
    };
    rel(&t["friedman"]["statistic"], &g["friedman"]["statistic"]);
    rel(&t["friedman"]["p_value"], &g["friedman"]["p_value"]);
    rel(
        &t["iman_davenport"]["statistic"],
        &g["iman_davenport"]["statistic"],
    );
    rel(&t["nemenyi"]["cd"], &g["nemenyi"]["cd"]);
    rel(
        &t["nemenyi"]["pairwise_p"]["p0"]["p7"],
        &g["nemenyi"]["pairwise_p"]["p0"]["p7"],
    );
    assert_eq!(t["n_units"], 200);
    assert_eq!(t["n_policies"], 8);
    assert_eq!(t["options"]["ci"], "t95");
    assert_eq!(t["options"]["zero_method"], "pratt");
    assert_eq!(t["options"]["alpha"], 0.05);
    let pairs = t["wilcoxon_holm"]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 28);
    for (p, gp) in pairs.iter().zip(g["wilcoxon_pratt"].as_array().unwrap()) {
        assert_eq!(p["a"], gp["a"]);
        rel(&p["p_holm"], &gp["p_holm"]);
        assert_eq!(p["reject"], gp["reject"]);
    }
    // summary.csv: sorted by mean rank, with the golden mean ranks and t intervals.
    let summary = read(&out.join("summary.csv"));
    let mut lines = summary.lines();
    assert_eq!(
        lines.next().unwrap(),
        "policy,n,mean_rank,sd_rank,ci_low,ci_high,ci_kind,mean_score,cells,found_nothing"
    );
    let mut last = 0.0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let p: usize = f[0][1..].parse().unwrap();
        let m: f64 = f[2].parse().unwrap();
        assert!(m >= last, "sorted by mean rank");
        last = m;
        assert!((m - g["mean_rank"][p].as_f64().unwrap()).abs() < 1e-12);
        let lo: f64 = f[4].parse().unwrap();
        assert!((lo - g["ci_t95"][p][0].as_f64().unwrap()).abs() < 1e-12);
        assert_eq!(f[6], "t95");
    }
    // ranks.csv: 200 x 8 rows plus the header.
    assert_eq!(read(&out.join("ranks.csv")).lines().count(), 1601);
    let md = read(&out.join("report.md"));
    assert!(
        md.contains("![Mean rank per policy") && md.contains("| # | policy |"),
        "{md}"
    );
    let tex = read(&out.join("report.tex"));
    assert!(
        tex.contains("\\toprule")
            && tex.contains("\\includegraphics[width=\\linewidth]{mean_rank.pdf}")
    );
    assert!(
        !tex.contains('χ') && !tex.contains('α') && !tex.contains('√'),
        "symbols as macros"
    );
    assert!(read(&out.join("ranking.tex")).starts_with("\\begin{table}"));
}

/// Compile a generated report.tex with pdflatex: required where BANDITBENCH_REQUIRE_TEX=1 (CI
/// installs a minimal TeX Live), skipped with a note where pdflatex is absent.
fn pdflatex_compiles(dir: &Path) {
    let have = std::process::Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok();
    if !have {
        assert!(
            std::env::var("BANDITBENCH_REQUIRE_TEX").is_err(),
            "BANDITBENCH_REQUIRE_TEX is set but pdflatex is not installed"
        );
        eprintln!("pdflatex not found: report.tex not compiled");
        return;
    }
    let o = std::process::Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "report.tex"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "pdflatex failed on {}:\n{}",
        dir.join("report.tex").display(),
        String::from_utf8_lossy(&o.stdout)
    );
    let pdf = std::fs::read(dir.join("report.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-") && pdf.len() > 10_000);
}

#[test]
fn figures_render_with_their_labels_and_series() {
    let out = scratch("report-figures");
    run_ok(&[
        "report",
        "--scores",
        &golden_csv("small"),
        "--out",
        out.to_str().unwrap(),
    ]);
    // Figures are labelled with the policies' short labels (here their names), listed in
    // labels.csv; the CSV beside each figure holds what it draws.
    assert_eq!(
        read(&out.join("labels.csv")),
        "policy,label\np0,p0\np1,p1\np2,p2\n"
    );
    let svg = read(&out.join("mean_rank.svg"));
    // The SVG's text is paths (it renders without any font installed), at the page width:
    // 6.9 in = 496.8 pt, drawn as 1987 quarter points = 496.75 pt = 662.33 CSS px.
    assert!(
        !svg.contains("<text") && !svg.contains("font-family"),
        "text as paths"
    );
    assert!(svg.contains("width=\"662.33"), "{}", &svg[..200]);
    // The PNG is the same figure at 300 dpi: 6.9 in x 300.
    let (w, h) = png_size(&out.join("mean_rank.png"));
    assert_eq!(w, 2070);
    assert!(h > 200, "{w}x{h}");
    // The PDF's page is the figure's size in points, with the font embedded (a TrueType font
    // program), not a reference to a system font.
    let pdf = std::fs::read(out.join("mean_rank.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    assert!(
        pdf.windows(9).any(|w| w == b"FontFile2") || pdf.windows(9).any(|w| w == b"FontFile3"),
        "mean_rank.pdf embeds its font"
    );
    let text = String::from_utf8_lossy(&pdf);
    assert!(
        text.contains("/MediaBox[0 0 496.75 "),
        "6.9 in, to a quarter point"
    );
    let cd = read(&out.join("cd_nemenyi.csv"));
    for p in ["p0", "p1", "p2"] {
        assert!(
            cd.lines().any(|l| l.starts_with(&format!("{p},"))),
            "cd diagram has {p}"
        );
    }
    assert!(
        cd.contains("# critical difference,"),
        "the CD ruler's value"
    );
    // --width column draws one-column figures: 3.3 in = 990 px at 300 dpi.
    let narrow = scratch("report-figures-column");
    run_ok(&[
        "report",
        "--scores",
        &golden_csv("small"),
        "--width",
        "column",
        "--out",
        narrow.to_str().unwrap(),
    ]);
    assert_eq!(png_size(&narrow.join("cd_nemenyi.png")).0, 990);
    let o = bin()
        .args([
            "report",
            "--scores",
            &golden_csv("small"),
            "--width",
            "wide",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("give column (3.3 in), page (6.9 in) or inches"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The CSV next to each figure holds what it draws.
    let data = read(&out.join("mean_rank.csv"));
    assert_eq!(data.lines().count(), 4);
    assert!(data.starts_with("policy,mean_rank,ci_low,ci_high"));
}

#[test]
fn missing_cells_are_listed_dropped_or_imputed() {
    let dir = scratch("report-missing");
    let csv = dir.join("s.csv");
    std::fs::write(
        &csv,
        "unit,policy,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu3,a,0.5\nu3,b,0.6\nu4,a,0.2\nu4,b,0.1\n",
    )
    .unwrap();
    let err = run_fails(&["report", "--scores", csv.to_str().unwrap()], 1);
    assert!(
        err.contains("1 (unit, policy) cell(s) have no score: (u2, b)"),
        "{err}"
    );
    let out = dir.join("drop");
    run_ok(&[
        "report",
        "--scores",
        csv.to_str().unwrap(),
        "--missing",
        "drop-unit",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = json(&out.join("tests.json"));
    assert_eq!(t["n_units"], 3);
    assert!(t["notes"][0].as_str().unwrap().contains("u2 dropped"));
    let out = dir.join("worst");
    run_ok(&[
        "report",
        "--scores",
        csv.to_str().unwrap(),
        "--missing",
        "worst",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(json(&out.join("tests.json"))["n_units"], 4);
}

#[test]
fn pairwise_tests_cover_the_family_asked_for() {
    // 61 policies on 6 units: past 50, `--pairs auto` runs no pairwise test (the ranking,
    // Friedman and Nemenyi's critical difference stay); `against:` tests 60 pairs with Holm over
    // those 60; `all` tests 1 830. Figures with a row per policy draw the best 60.
    let dir = scratch("report-pairs");
    let csv = dir.join("s.csv");
    let mut text = String::from("unit,policy,score\n");
    for u in 0..6 {
        for p in 0..61 {
            let s = 0.5 + 0.01 * p as f64 + 0.003 * ((u * 7 + p * 3) % 5) as f64;
            text.push_str(&format!("u{u},p{p},{s}\n"));
        }
    }
    std::fs::write(&csv, text).unwrap();
    let report = |pairs: Option<&str>| -> Value {
        let out = dir.join(pairs.unwrap_or("default").replace(':', "-"));
        let mut args = vec![
            "report",
            "--scores",
            csv.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(p) = pairs {
            args.extend(["--pairs", p]);
        }
        run_ok(&args);
        json(&out.join("tests.json"))
    };
    let t = report(None);
    assert_eq!(t["wilcoxon_holm"]["pairs"].as_array().unwrap().len(), 0);
    assert_eq!(t["nemenyi"]["pairwise_p"].as_object().unwrap().len(), 0);
    assert!(t["nemenyi"]["cd"].as_f64().unwrap() > 0.0);
    let family = t["pairs"]["family"].as_str().unwrap();
    assert!(family.contains("61 policies are more than 50"), "{family}");
    let drawn = |f: &str| read(&dir.join("default").join(f)).lines().count() - 1;
    assert_eq!(drawn("mean_rank.csv"), 60);
    assert_eq!(drawn("rank_boxplots.csv"), 60);
    assert_eq!(drawn("summary.csv"), 61);
    let md = read(&dir.join("default/report.md"));
    assert!(md.contains("The best 60 of the 61 policies by mean rank are drawn"));
    let t = report(Some("against:p50"));
    let pairs = t["wilcoxon_holm"]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 60);
    assert!(pairs.iter().all(|p| p["a"] == "p50"));
    // Holm over 60 hypotheses: the smallest p-value is multiplied by 60.
    let min = pairs
        .iter()
        .min_by(|a, b| {
            a["p_value"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["p_value"].as_f64().unwrap())
        })
        .unwrap();
    let (p, holm) = (
        min["p_value"].as_f64().unwrap(),
        min["p_holm"].as_f64().unwrap(),
    );
    assert!((holm - (60.0 * p).min(1.0)).abs() < 1e-12, "{p} {holm}");
    // Nemenyi's pairwise p-values for the same pairs, both ways round.
    let nem = &t["nemenyi"]["pairwise_p"];
    assert_eq!(nem["p50"].as_object().unwrap().len(), 61);
    assert_eq!(nem["p3"]["p50"], nem["p50"]["p3"]);
    assert!(nem["p3"].get("p4").is_none());
    let t = report(Some("all"));
    assert_eq!(
        t["wilcoxon_holm"]["pairs"].as_array().unwrap().len(),
        61 * 60 / 2
    );
    // With fewer pairs asked for, the Wilcoxon–Holm diagram still rests on every pair of the
    // policies it shows (its groups equal those of `--pairs all` on the same few policies).
    let few = dir.join("few.csv");
    let mut text = String::from("unit,policy,score\n");
    for u in 0..20 {
        for p in 0..5 {
            let s = 0.5 + 0.05 * p as f64 + 0.01 * ((u * 3 + p) % 4) as f64;
            text.push_str(&format!("u{u},q{p},{s}\n"));
        }
    }
    std::fs::write(&few, text).unwrap();
    let diagram = |pairs: &str| -> String {
        let out = dir.join(format!("few-{pairs}"));
        run_ok(&[
            "report",
            "--scores",
            few.to_str().unwrap(),
            "--pairs",
            pairs,
            "--out",
            out.to_str().unwrap(),
        ]);
        read(&out.join("cd_wilcoxon_holm.csv"))
    };
    let all = diagram("all");
    // Policies 0.05 apart on 20 units: Wilcoxon–Holm separates them (no bar joins them all, as
    // one would if no pair were tested).
    assert!(all.lines().skip(1).any(|l| !l.ends_with(",0")), "{all}");
    assert_eq!(diagram("none"), all);
    assert!(
        read(&dir.join("few-none/report.md"))
            .contains("not over the pairwise tests of tests.json (--pairs none)")
    );
    // An unknown control is refused, naming the policies; a malformed value is refused by the
    // argument parser (exit code 2).
    let scores = csv.to_str().unwrap();
    let err = run_fails(
        &["report", "--scores", scores, "--pairs", "against:ucb9"],
        1,
    );
    assert!(
        err.contains("--pairs against:ucb9: no policy 'ucb9' here (a policy id, or a family one policy has); the policies are p0, p1"),
        "{err}"
    );
    let err = run_fails(&["report", "--scores", scores, "--pairs", "some"], 2);
    assert!(
        err.contains("expected auto, all, none or against:POLICY"),
        "{err}"
    );
}

#[test]
fn bootstrap_intervals_are_seeded_and_named() {
    let dir = scratch("report-boot");
    let run = |seed: &str, out: &str| {
        run_ok(&[
            "report",
            "--scores",
            &golden_csv("large"),
            "--ci",
            "bootstrap",
            "--bootstrap-samples",
            "500",
            "--seed",
            seed,
            "--out",
            dir.join(out).to_str().unwrap(),
        ]);
        read(&dir.join(out).join("summary.csv"))
    };
    let (a, b, c) = (run("1", "a"), run("1", "b"), run("2", "c"));
    assert_eq!(a, b, "same seed, same intervals");
    assert_ne!(a, c, "another seed, other intervals");
    assert!(a.contains(",bootstrap,"));
}

#[test]
fn results_folder_report_has_per_budget_panels_allocation_and_anytime_curves() {
    let dir = scratch("report-results");
    let exp = experiment(
        &dir,
        "rep",
        r#"seed = 4
repetitions = 3
[world]
kind = "time-sliced"
budgets = [6.0, 12.0]
slice = 2.0
[[policies]]
family = "round-robin"
[[policies]]
family = "ucb1"
[[policies]]
family = "epsilon-greedy"
epsilon = [0.1, 0.5]
"#,
    );
    let results = dir.join("results");
    run_quiet(&exp, &results);
    // The default unit is the dataset: 2 datasets (d1, d2), each the mean over its run, the 2
    // budgets and 3 repetitions, independent of each other.
    let o = run_ok(&["report", results.to_str().unwrap(), "--per-budget"]);
    let out = results.join("report");
    let t = json(&out.join("tests.json"));
    assert_eq!(t["n_units"], 2, "2 datasets");
    assert_eq!(t["options"]["unit"], "dataset");
    assert_eq!(t["units"]["independent"], true);
    assert_eq!(t["units"]["cells_per_score"][0], 6);
    let md = read(&out.join("report.md"));
    assert!(
        md.contains("Unit = dataset: 2 units from 2 dataset(s)"),
        "{md}"
    );
    // (task, budget) units are available and labelled as not independent.
    let tb = results.join("tb");
    run_ok(&[
        "report",
        results.to_str().unwrap(),
        "--unit",
        "task-budget",
        "--out",
        tb.to_str().unwrap(),
    ]);
    let t = json(&tb.join("tests.json"));
    assert_eq!(t["n_units"], 4, "2 tasks x 2 budgets");
    assert_eq!(t["units"]["independent"], false);
    assert!(read(&tb.join("report.md")).contains("not independent"));
    let boxes = read(&out.join("rank_boxplots.csv"));
    assert!(
        boxes.contains("\nbudget 6 s,") && boxes.contains("\nbudget 12 s,"),
        "budget captions"
    );
    // A family of two settings: the share of units each wins, per budget, labelled by the
    // parameter that varies (its symbol); the shared one goes into the title.
    let study = read(&out.join("param_study_epsilon-greedy.csv"));
    assert!(
        study.starts_with("row,ε=0.1 better,tie,ε=0.5 better\n"),
        "{study}"
    );
    let rows: Vec<Vec<f64>> = study
        .lines()
        .skip(1)
        .map(|l| l.split(',').skip(1).map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 2, "one row per budget");
    for r in &rows {
        assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{r:?}");
    }
    let labels = read(&out.join("labels.csv"));
    assert!(
        labels.contains("\"epsilon-greedy(epsilon=0.1, initial_pulls=0)\",epsilon-greedy(ε=0.1)\n"),
        "{labels}"
    );
    assert!(labels.contains("\nround-robin,round-robin\n"), "{labels}");
    pdflatex_compiles(&out);
    // Regret normalised by the traces' best and worst scores: the lock file names the traces
    // and their hash; the regret stays within [0, 1], and the option is echoed.
    let tr = results.join("trace-regret");
    run_ok(&[
        "report",
        results.to_str().unwrap(),
        "--regret",
        "trace",
        "--out",
        tr.to_str().unwrap(),
    ]);
    assert_eq!(json(&tr.join("tests.json"))["options"]["regret"], "trace");
    let any = read(&tr.join("anytime.csv"));
    let regrets: Vec<f64> = any
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(4)?.parse().ok())
        .collect();
    assert_eq!(regrets.len(), 4 * 51);
    assert!(
        regrets.iter().all(|r| (0.0..=1.0).contains(r)),
        "{regrets:?}"
    );
    assert_ne!(any, read(&out.join("anytime.csv")), "another normalisation");
    // Traces that are not the ones the results were run on are refused, naming both hashes.
    let other = common::tiny_variant(
        "report-other-traces",
        |csv| csv.to_string(),
        |m| format!("{m}\n# another copy\n"),
    );
    let refused = bin()
        .args([
            "report",
            results.to_str().unwrap(),
            "--regret",
            "trace",
            "--traces",
        ])
        .arg(&other)
        .args(["--out", tr.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("were run on traces with hash"),
        "{err}"
    );
    let alloc = read(&out.join("allocation.csv"));
    // 4 policies x 3 learners; shares of each policy sum to 1.
    assert_eq!(alloc.lines().count(), 13);
    let rr: f64 = alloc
        .lines()
        .filter(|l| l.starts_with("round-robin,"))
        .map(|l| l.rsplit(',').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!((rr - 1.0).abs() < 1e-12);
    let any = read(&out.join("anytime.csv"));
    assert_eq!(
        any.lines().count(),
        1 + 4 * 51,
        "4 policies x 51 grid points"
    );
    // Per-budget sub-reports keep the unit.
    let sub = json(&out.join("budget-6").join("tests.json"));
    assert_eq!(sub["n_units"], 2);
    assert_eq!(sub["options"]["unit"], "dataset");
    assert!(String::from_utf8_lossy(&o.stdout).contains("Friedman"));
    // Every cell as a unit: 2 tasks x 2 budgets x 3 repetitions.
    let cells = results.join("per-cell");
    run_ok(&[
        "report",
        results.to_str().unwrap(),
        "--unit",
        "task-budget-repetition",
        "--out",
        cells.to_str().unwrap(),
    ]);
    let t = json(&cells.join("tests.json"));
    assert_eq!(t["n_units"], 12);
    assert_eq!(t["options"]["unit"], "task-budget-repetition");
}

#[test]
fn cells_that_found_nothing_are_counted_and_scored_by_the_named_rule() {
    // Budget 1 s, slice 0.5 s: arm a of d1 reveals its first evaluation at 2 s, so a policy
    // that starts on it finds nothing in some cells; every count is reported.
    let dir = scratch("report-found-nothing");
    let exp = experiment(
        &dir,
        "fn",
        r#"seed = 5
repetitions = 4
[world]
kind = "time-sliced"
budgets = [1.0, 4.0]
slice = 0.5
[[policies]]
family = "round-robin"
[[policies]]
family = "random"
"#,
    );
    let results = dir.join("results");
    run_quiet(&exp, &results);
    let res = banditbench::results::read_results(&results).unwrap();
    let nothing = |p: &str| {
        res.runs
            .iter()
            .filter(|r| r.policy == p && r.best_score.is_nan())
            .count()
    };
    let rr = nothing("round-robin");
    assert!(
        rr > 0,
        "round-robin starts on arm a of d1 and finds nothing at budget 1"
    );
    run_ok(&["report", results.to_str().unwrap()]);
    let t = json(&results.join("report").join("tests.json"));
    assert_eq!(t["units"]["found_nothing_rule"], "worst");
    assert_eq!(
        t["units"]["found_nothing"]["round-robin"]["found_nothing"],
        rr as u64
    );
    assert_eq!(t["units"]["found_nothing"]["round-robin"]["cells"], 16);
    let summary = read(&results.join("report").join("summary.csv"));
    assert!(
        summary
            .lines()
            .next()
            .unwrap()
            .ends_with(",cells,found_nothing")
    );
    let row = summary
        .lines()
        .find(|l| l.starts_with("round-robin,"))
        .unwrap();
    assert!(row.ends_with(&format!(",16,{rr}")), "{row}");
    assert!(
        read(&results.join("report").join("report.md"))
            .contains(&format!("round-robin: {rr} of 16 cells found nothing"))
    );
    // drop: the same counts, other means.
    let d = results.join("drop");
    run_ok(&[
        "report",
        results.to_str().unwrap(),
        "--found-nothing",
        "drop",
        "--out",
        d.to_str().unwrap(),
    ]);
    let t2 = json(&d.join("tests.json"));
    assert_eq!(t2["units"]["found_nothing_rule"], "drop");
    assert_eq!(
        t2["units"]["found_nothing"]["round-robin"]["found_nothing"],
        rr as u64
    );
}

/// `report --scores` takes what other tools write: wide tables (a pandas index as the unit, or a
/// named unit column), parquet, other column names, and several rows per (unit, policy) averaged
/// only when asked. The same numbers give the same ranks whatever the layout.
#[test]
fn scores_tables_in_other_layouts_give_the_same_report() {
    let dir = scratch("scores-layouts");
    // Hand-written: 5 units x 3 policies, and the same scores as two seeds each (mean = score).
    let scores = [
        [0.70, 0.80, 0.75],
        [0.60, 0.65, 0.90],
        [0.55, 0.85, 0.80],
        [0.90, 0.95, 0.70],
        [0.40, 0.60, 0.50],
    ];
    let mut long = String::from("unit,policy,score\n");
    let mut pandas = String::from(",alpha,beta,gamma\n");
    let mut seeds = String::from("dataset,algorithm,seed,accuracy\n");
    for (u, row) in scores.iter().enumerate() {
        pandas.push_str(&format!("u{u}"));
        for (p, s) in ["alpha", "beta", "gamma"].iter().zip(row) {
            long.push_str(&format!("u{u},{p},{s}\n"));
            pandas.push_str(&format!(",{s}"));
            seeds.push_str(&format!(
                "u{u},{p},0,{}\nu{u},{p},1,{}\n",
                s - 0.05,
                s + 0.05
            ));
        }
        pandas.push('\n');
    }
    std::fs::write(dir.join("long.csv"), long).unwrap();
    std::fs::write(dir.join("pandas.csv"), &pandas).unwrap();
    std::fs::write(dir.join("seeds.csv"), seeds).unwrap();
    let mut wide = polars::prelude::df!(
        "dataset" => (0..5).map(|u| format!("u{u}")).collect::<Vec<_>>(),
        "alpha" => scores.iter().map(|r| r[0]).collect::<Vec<_>>(),
        "beta" => scores.iter().map(|r| r[1]).collect::<Vec<_>>(),
        "gamma" => scores.iter().map(|r| r[2]).collect::<Vec<_>>()
    )
    .unwrap();
    polars::prelude::ParquetWriter::new(std::fs::File::create(dir.join("wide.parquet")).unwrap())
        .finish(&mut wide)
        .unwrap();
    let report = |file: &str, extra: &[&str]| -> std::process::Output {
        let out = dir.join(format!("{file}-{}", extra.len()));
        let mut cmd = bin();
        cmd.args(["report", "--scores"])
            .arg(dir.join(file))
            .arg("--out")
            .arg(&out);
        cmd.args(extra).output().unwrap()
    };
    let ranks = |file: &str, extra: &[&str]| -> String {
        let o = report(file, extra);
        assert!(
            o.status.success(),
            "{file} {extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = read(
            &dir.join(format!("{file}-{}", extra.len()))
                .join("ranks.csv"),
        );
        // Scores differ in the last digits after averaging; ranks must not.
        text.lines()
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                format!("{},{},{}", f[0], f[1], f[3])
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let expected = ranks("long.csv", &[]);
    assert!(expected.contains("u1,gamma,1"), "{expected}");
    assert_eq!(ranks("pandas.csv", &["--wide"]), expected);
    assert_eq!(
        ranks("wide.parquet", &["--wide", "--unit-col", "dataset"]),
        expected
    );
    let seeds_args = [
        "--unit-col",
        "dataset",
        "--policy-col",
        "algorithm",
        "--score-col",
        "accuracy",
        "--average-repeats",
    ];
    assert_eq!(ranks("seeds.csv", &seeds_args), expected);
    // pandas' own files (scripts/reference/pandas_layouts.py): `unstack().to_csv()` with a named
    // index column, and category (dictionary-encoded) strings with an int8 column in parquet.
    let pandas_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pandas");
    for f in ["scores-unstack.csv", "scores-category.parquet"] {
        std::fs::copy(pandas_dir.join(f), dir.join(f)).unwrap();
    }
    assert_eq!(ranks("scores-unstack.csv", &["--wide"]), expected);
    let notes = read(&dir.join("scores-unstack.csv-1").join("report.md"));
    assert!(
        notes.contains("the first column, 'task', holds text: read as the units"),
        "{notes}"
    );
    assert_eq!(ranks("scores-category.parquet", &[]), expected);
    let notes = read(&dir.join("seeds.csv-7").join("report.md"));
    assert!(
        notes.contains("the mean of 2 rows (30 rows in, 15 (unit, policy) scores)"),
        "{notes}"
    );

    // Refusals name the file, the column or row, and the option that fixes it.
    let err = |file: &str, extra: &[&str]| {
        String::from_utf8_lossy(&report(file, extra).stderr).to_string()
    };
    let e = err("seeds.csv", &seeds_args[..6]);
    assert!(
        e.contains("unit 'u0', policy 'alpha' has 2 rows") && e.contains("--average-repeats"),
        "{e}"
    );
    let e = err("seeds.csv", &[]);
    assert!(
        e.contains("no column 'unit' for the units") && e.contains("'dataset', 'algorithm'"),
        "{e}"
    );
    std::fs::write(dir.join("bad.csv"), pandas.replace("0.85", "n/a")).unwrap();
    let e = err("bad.csv", &["--wide"]);
    assert!(
        e.contains("row 3 (line 4), column 'beta': 'n/a' is not a number"),
        "{e}"
    );
    // Text in a policy's column that is not the first: the error says which option fixes it.
    std::fs::write(
        dir.join("late-units.csv"),
        "alpha,beta,task\n0.1,0.2,u0\n0.3,0.1,u1\n",
    )
    .unwrap();
    let e = err("late-units.csv", &["--wide"]);
    assert!(e.contains("pass --unit-col 'task'"), "{e}");
}

/// `--bayes-rope` adds the Bayesian signed-rank test of every pair: probabilities that sum to
/// one, a decision at 0.95, a figure with its CSV, and the same answer for the same seed.
#[test]
fn the_bayesian_signed_rank_test_reports_every_pair() {
    let dir = scratch("bayes-report");
    // 12 hand-written units: "high" beats "low" by 0.1 everywhere, "twin" is "low" ± 0.001.
    let mut csv = String::from("unit,policy,score\n");
    for u in 0..12 {
        let base = 0.6 + 0.01 * u as f64;
        let twin = base + if u % 2 == 0 { 0.001 } else { -0.001 };
        csv.push_str(&format!(
            "u{u},low,{base}\nu{u},high,{}\nu{u},twin,{twin}\n",
            base + 0.1
        ));
    }
    std::fs::write(dir.join("s.csv"), csv).unwrap();
    let run = |out: &str, extra: &[&str]| {
        let mut cmd = bin();
        cmd.args(["report", "--scores"])
            .arg(dir.join("s.csv"))
            .arg("--out")
            .arg(dir.join(out));
        cmd.args(extra).output().unwrap()
    };
    let o = run("a", &["--bayes-rope", "0.01", "--bayes-samples", "20000"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Bayesian signed-rank tests"));
    let t = json(&dir.join("a/tests.json"));
    let b = &t["bayesian_signed_rank"];
    assert_eq!(b["rope"].as_f64(), Some(0.01));
    let pairs = b["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    for p in pairs {
        let sum: f64 = ["p_left", "p_rope", "p_right"]
            .iter()
            .map(|k| p[k].as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{p}");
        let (a, bb) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let decision = p["decision"].as_str().unwrap();
        match (a, bb) {
            ("low", "twin") | ("twin", "low") => assert_eq!(decision, "practically equivalent"),
            _ => assert_eq!(decision, "high better", "{p}"),
        }
    }
    for f in [
        "bayes_signed_rank.pdf",
        "bayes_signed_rank.svg",
        "bayes_signed_rank.png",
        "bayes_signed_rank.csv",
    ] {
        assert!(dir.join("a").join(f).is_file(), "{f}");
    }
    // Seeded: a second report gives the same numbers; without the option there is no test.
    assert!(
        run("b", &["--bayes-rope", "0.01", "--bayes-samples", "20000"])
            .status
            .success()
    );
    assert_eq!(
        t["bayesian_signed_rank"],
        json(&dir.join("b/tests.json"))["bayesian_signed_rank"]
    );
    assert!(run("c", &[]).status.success());
    assert!(json(&dir.join("c/tests.json"))["bayesian_signed_rank"].is_null());
    let o = run("d", &["--bayes-rope=-1"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bayes-rope must be a number >= 0"));
}

/// A report prints its ranking with the direction of the scores, its pairwise table says which
/// policy is ahead and by how much, and policy names that look like paths ("../../esc",
/// "a/b") become safe file names inside --out instead of writing outside it.
#[test]
fn reports_say_the_direction_and_names_never_leave_the_output_folder() {
    let dir = scratch("report-names");
    let mut csv = String::from("unit,policy,score\n");
    for u in 0..8 {
        for (p, s) in [
            ("../../esc(a=1)", 0.30),
            ("../../esc(a=2)", 0.20),
            ("a/b(c=1)", 0.50),
            ("a/b(c=2)", 0.40),
        ] {
            csv.push_str(&format!("u{u},{p},{}\n", s + 0.01 * u as f64));
        }
    }
    let scores = dir.join("scores.csv");
    std::fs::write(&scores, csv).unwrap();
    let out = dir.join("inner").join("report");
    let o = bin()
        .args(["report", "--scores"])
        .arg(&scores)
        .arg("--minimize")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("(1 = best; lower scores are better)"),
        "{text}"
    );
    let first = text
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap();
    assert!(
        first.contains("../../esc(a=2)"),
        "lowest score first: {first}"
    );
    // Nothing was written beside the scores or above them: only the report folder.
    let beside: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
    // A results folder whose policy family reads "../../esc" (as another tool or a hand edit
    // could write it): the parameter study's files stay inside the report folder.
    let res = dir.join("inner").join("results");
    let exp = common::experiment(
        &dir.join("inner"),
        "names",
        "seed = 2\n[world]\nkind = \"pull-count\"\nbudgets = [8]\nexhausted = \"resample\"\n[[policies]]\nfamily = \"epsilon-greedy\"\nepsilon = [0.1, 0.3]\n[[policies]]\nfamily = \"round-robin\"\n",
    );
    common::run_quiet(&exp, &res);
    let runs_path = res.join("runs.parquet");
    use polars::prelude::SerReader as _;
    let mut df = polars::prelude::ParquetReader::new(std::fs::File::open(&runs_path).unwrap())
        .finish()
        .unwrap();
    let rename = |c: &str| -> Vec<String> {
        df.column(c)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.unwrap_or("").replace("epsilon-greedy", "../../esc"))
            .collect()
    };
    let (fam, pol) = (rename("policy_family"), rename("policy"));
    df.with_column(polars::prelude::Column::new("policy_family".into(), fam))
        .unwrap();
    df.with_column(polars::prelude::Column::new("policy".into(), pol))
        .unwrap();
    polars::prelude::ParquetWriter::new(std::fs::File::create(&runs_path).unwrap())
        .finish(&mut df)
        .unwrap();
    let rep = dir.join("inner").join("names-report");
    common::run_ok(&[
        "report",
        res.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(rep.join("param_study_.._.._esc.png").is_file());
    assert!(!dir.join("esc").exists() && !dir.parent().unwrap().join("esc").exists());
    let beside: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
    // Pairs: who is ahead, and the mean difference with its interval.
    let md = read(&out.join("report.md"));
    assert!(
        md.contains("| a | b | ahead | Δ = a − b [95 % CI] |"),
        "{md}"
    );
    assert!(
        md.contains("| `../../esc(a=1)` | `../../esc(a=2)` | `../../esc(a=2)` | +0.1000 ["),
        "{md}"
    );
}

#[test]
fn the_leaderboard_matches_evalica_and_draws_the_win_rates() {
    // Real runs of Optuna's TPE, SMAC3 and banditbench's CASH optimisers, unit = dataset/seed.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("report-leaderboard");
    let mut csv = String::from("unit,policy,score\n");
    for l in read(&root.join("scripts/reference/cash-optuna-smac.csv"))
        .lines()
        .skip(1)
    {
        let f: Vec<&str> = l.split(',').collect();
        csv.push_str(&format!("{}/{:0>2},{},{}\n", f[1], f[2], f[0], f[3]));
    }
    let scores = dir.join("scores.csv");
    std::fs::write(&scores, csv).unwrap();
    let out = dir.join("out");
    let (s, o) = (scores.to_str().unwrap(), out.to_str().unwrap());
    run_ok(&[
        "report",
        "--scores",
        s,
        "--out",
        o,
        "--baseline",
        "banditbench-random-search",
        "--leaderboard-samples",
        "200",
    ]);
    let golden = json(&root.join("tests/fixtures/leaderboard/evalica.json"));
    let t = json(&out.join("tests.json"));
    let lb = &t["leaderboard"];
    assert_eq!(lb["matches"], golden["matches"]);
    assert_eq!(lb["draws"], golden["ties"]);
    assert_eq!(lb["baseline"], "banditbench-random-search");
    let base = golden["bradley_terry"]["banditbench-random-search"]
        .as_f64()
        .unwrap();
    for p in lb["policies"].as_array().unwrap() {
        let name = p["policy"].as_str().unwrap();
        let strength = golden["bradley_terry"][name].as_f64().unwrap();
        let got = p["bradley_terry_strength"].as_f64().unwrap();
        assert!((got - strength).abs() < 1e-12, "{name}");
        let rating = 400.0 * (strength / base).log10() + 1000.0;
        assert!((p["bradley_terry_rating"].as_f64().unwrap() - rating).abs() < 1e-9);
        // evalica's Elo is relative to its start at 1000; ours puts the baseline at 1000.
        let elo = golden["elo"][name].as_f64().unwrap()
            - golden["elo"]["banditbench-random-search"].as_f64().unwrap()
            + 1000.0;
        assert!((p["elo"].as_f64().unwrap() - elo).abs() < 1e-9, "{name}");
    }
    let table = read(&out.join("leaderboard.csv"));
    assert!(table.starts_with("policy,bt_strength,bt_rating,bt_low,bt_high,elo"));
    assert!(read(&out.join("report.md")).contains("## Leaderboard"));
    let (w, h) = png_size(&out.join("win_rate.png"));
    assert!(w > 0 && h > 0);
    assert!(read(&out.join("win_rate.csv")).contains("optuna-tpe"));
    // A baseline that is not compared is refused, naming the policies.
    let e = run_fails(
        &["report", "--scores", s, "--out", o, "--baseline", "optuna"],
        1,
    );
    assert!(
        e.contains("--baseline optuna: no policy 'optuna' here") && e.contains("smac3"),
        "{e}"
    );
    // Elo's intervals only with --elo-intervals: empty columns by default, the rest unchanged.
    let row = |table: &str, policy: &str| -> Vec<String> {
        let l = table.lines().find(|l| l.starts_with(policy)).unwrap();
        l.split(',').map(str::to_string).collect()
    };
    let tpe = row(&table, "optuna-tpe");
    assert_eq!(
        (tpe[6].as_str(), tpe[7].as_str()),
        ("NaN", "NaN"),
        "{tpe:?}"
    );
    assert_eq!(lb["elo_intervals"], false);
    let with = dir.join("with-elo");
    run_ok(&[
        "report",
        "--scores",
        s,
        "--out",
        with.to_str().unwrap(),
        "--baseline",
        "banditbench-random-search",
        "--leaderboard-samples",
        "200",
        "--elo-intervals",
    ]);
    let tpe_with = row(&read(&with.join("leaderboard.csv")), "optuna-tpe");
    assert_eq!(tpe_with[..6], tpe[..6]);
    let (lo, hi, point): (f64, f64, f64) = (
        tpe_with[6].parse().unwrap(),
        tpe_with[7].parse().unwrap(),
        tpe_with[5].parse().unwrap(),
    );
    assert!(lo < point && point < hi, "{tpe_with:?}");
    assert!(read(&out.join("report.md")).contains("(Elo's with --elo-intervals)"));
    // Off: no leaderboard file, and tests.json says why.
    let off = dir.join("off");
    run_ok(&[
        "report",
        "--scores",
        s,
        "--out",
        off.to_str().unwrap(),
        "--leaderboard",
        "off",
    ]);
    assert!(!off.join("leaderboard.csv").exists());
    assert_eq!(
        json(&off.join("tests.json"))["leaderboard"]["computed"],
        false
    );
}

/// `--missing keep`: units that lack some policies stay in the omnibus test (Skillings–Mack,
/// golden values from tlsfuzzer in tests/fixtures/skillings_mack), beside Friedman's test on
/// the complete units.
#[test]
fn missing_keep_adds_skillings_mack_over_every_unit() {
    let dir = scratch("skillings-mack");
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skillings_mack/reference.json");
    let reference = json(&p);
    let case = reference["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "cash-holes")
        .unwrap();
    let mut csv = String::from("unit,policy,score\n");
    let policies = case["policies"].as_array().unwrap();
    for (u, row) in case["units"]
        .as_array()
        .unwrap()
        .iter()
        .zip(case["scores"].as_array().unwrap())
    {
        for (p, s) in policies.iter().zip(row.as_array().unwrap()) {
            if let Some(s) = s.as_f64() {
                csv.push_str(&format!(
                    "{},{},{s}\n",
                    u.as_str().unwrap(),
                    p.as_str().unwrap()
                ));
            }
        }
    }
    let scores = dir.join("holes.csv");
    std::fs::write(&scores, csv).unwrap();
    let e = run_fails(&["report", "--scores", scores.to_str().unwrap()], 1);
    assert!(e.contains("--missing drop-unit, worst or keep"), "{e}");
    let out = dir.join("r");
    let o = run_ok(&[
        "report",
        "--scores",
        scores.to_str().unwrap(),
        "--missing",
        "keep",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Skillings–Mack over every unit with two or more scores (90 units"),
        "{text}"
    );
    assert!(text.contains("SM(4) = 36.627"), "{text}");
    let t = json(&out.join("tests.json"));
    let sm = &t["skillings_mack"];
    let want = case["statistic"].as_f64().unwrap();
    assert!(
        (sm["statistic"].as_f64().unwrap() - want).abs() < 1e-9 * want,
        "{sm}"
    );
    assert_eq!(sm["units"], 90);
    // Friedman and the ranks use the complete units only, as drop-unit would.
    let drop = dir.join("d");
    run_ok(&[
        "report",
        "--scores",
        scores.to_str().unwrap(),
        "--missing",
        "drop-unit",
        "--out",
        drop.to_str().unwrap(),
    ]);
    let d = json(&drop.join("tests.json"));
    assert_eq!(t["friedman"], d["friedman"]);
    assert!(d["skillings_mack"].is_null());
    assert!(t["n_units"].as_u64().unwrap() < 90);
}

/// `--normalize`: per-unit scores relative to a baseline or to the unit's range, recomputed here
/// from the CSV (real Optuna, SMAC3 and banditbench runs, units = datasets, seeds averaged).
#[test]
fn normalized_scores_are_relative_to_a_baseline_or_the_units_range() {
    let dir = scratch("normalize");
    let csv = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference/cash-optuna-smac.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    // Unit (dataset) means per policy, as --average-repeats takes them.
    let mut sums: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let e = sums
            .entry((f[1].to_string(), f[0].to_string()))
            .or_default();
        e.0 += f[3].parse::<f64>().unwrap();
        e.1 += 1.0;
    }
    let mean = |d: &str, p: &str| {
        let (s, n) = sums[&(d.to_string(), p.to_string())];
        s / n
    };
    let datasets = ["car", "pima", "spambase"];
    let policies = [
        "banditbench-random-search",
        "banditbench-smac",
        "banditbench-tpe",
        "optuna-tpe",
        "smac3",
    ];
    let base = "banditbench-random-search";
    let common = [
        "report",
        "--scores",
        csv.to_str().unwrap(),
        "--unit-col",
        "dataset",
        "--policy-col",
        "impl",
        "--score-col",
        "best_score",
        "--average-repeats",
    ];
    // Known best and worst accuracies per dataset (any values will do for the formula).
    let known = dir.join("known.csv");
    std::fs::write(
        &known,
        "unit,best,worst\ncar,1.0,0.7\npima,0.85,0.65\nspambase,0.97,0.6\n",
    )
    .unwrap();
    let known_of = |d: &str| match d {
        "car" => (1.0, 0.7),
        "pima" => (0.85, 0.65),
        _ => (0.97, 0.6),
    };
    for how in ["baseline", "range", "known"] {
        let out = dir.join(how);
        let flag = match how {
            "baseline" => format!("baseline:{base}"),
            "known" => format!("known:{}", known.display()),
            _ => "range".into(),
        };
        let mut args = common.to_vec();
        args.extend(["--normalize", flag.as_str(), "--out", out.to_str().unwrap()]);
        run_ok(&args);
        let t = json(&out.join("tests.json"));
        assert_eq!(t["options"]["normalize"], flag.as_str());
        let rows = t["normalized"]["policies"].as_array().unwrap();
        for p in policies {
            let want: f64 = datasets
                .iter()
                .map(|d| {
                    let s = mean(d, p);
                    if how == "baseline" {
                        let b = mean(d, base);
                        (s - b) / b.abs()
                    } else if how == "known" {
                        let (b, w) = known_of(d);
                        (s - w) / (b - w)
                    } else {
                        let all: Vec<f64> = policies.iter().map(|q| mean(d, q)).collect();
                        let (hi, lo) = (
                            all.iter().cloned().fold(f64::MIN, f64::max),
                            all.iter().cloned().fold(f64::MAX, f64::min),
                        );
                        (s - lo) / (hi - lo)
                    }
                })
                .sum::<f64>()
                / 3.0;
            let got = rows.iter().find(|r| r["policy"] == p).unwrap()["mean"]
                .as_f64()
                .unwrap();
            assert!((got - want).abs() < 1e-12, "{how} {p}: {got} vs {want}");
        }
        let md = read(&out.join("report.md"));
        assert!(md.contains("## Normalised scores"), "{md}");
        assert!(
            read(&out.join("normalized.csv")).starts_with("policy,how,n,mean,sd,ci_low,ci_high\n")
        );
    }
    let x = dir.join("x");
    let mut args = common.to_vec();
    args.extend(["--normalize", "baseline:grid", "--out", x.to_str().unwrap()]);
    let e = run_fails(&args, 1);
    assert!(
        e.contains("--normalize baseline:grid: no policy 'grid' here"),
        "{e}"
    );
    // Known values that miss a unit: the units named.
    std::fs::write(&known, "unit,best,worst\ncar,1.0,0.7\n").unwrap();
    let flag = format!("known:{}", known.display());
    let mut args = common.to_vec();
    args.extend(["--normalize", flag.as_str(), "--out", x.to_str().unwrap()]);
    let e = run_fails(&args, 1);
    assert!(
        e.contains("no known values for 2 unit(s): pima, spambase"),
        "{e}"
    );
}

/// `--unit-weights per-dataset`: with units = dataset/seed and unequal seeds per dataset, each
/// dataset weighs the same in the leaderboard: a win rate is the mean over datasets of the
/// share of that dataset's units won (recomputed here from the real CASH runs).
#[test]
fn unit_weights_make_every_dataset_weigh_the_same_in_the_leaderboard() {
    let dir = scratch("weights");
    let csv = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference/cash-optuna-smac.csv");
    let keep = |d: &str| match d {
        "car" => 12,
        "pima" => 3,
        _ => 6,
    };
    let mut long = String::from("unit,policy,score\n");
    let mut by_unit: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in std::fs::read_to_string(&csv).unwrap().lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let seed: usize = f[2].parse().unwrap();
        if seed < keep(f[1]) {
            let unit = format!("{}/{seed:02}", f[1]);
            long.push_str(&format!("{unit},{},{}\n", f[0], f[3]));
            by_unit
                .entry(unit)
                .or_default()
                .insert(f[0].to_string(), f[3].parse().unwrap());
        }
    }
    let scores = dir.join("s.csv");
    std::fs::write(&scores, long).unwrap();
    let out = dir.join("w");
    run_ok(&[
        "report",
        "--scores",
        scores.to_str().unwrap(),
        "--unit-weights",
        "per-dataset",
        "--leaderboard",
        "on",
        "--leaderboard-samples",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = json(&out.join("tests.json"));
    assert_eq!(t["options"]["unit_weights"], "per-dataset");
    let (a, b) = ("smac3", "optuna-tpe");
    let mut per_dataset: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (u, s) in &by_unit {
        let d = u.split('/').next().unwrap();
        let e = per_dataset.entry(d).or_default();
        e.0 += if s[a] > s[b] {
            1.0
        } else if s[a] == s[b] {
            0.5
        } else {
            0.0
        };
        e.1 += 1.0;
    }
    let want = per_dataset.values().map(|(w, n)| w / n).sum::<f64>() / 3.0;
    let got = t["leaderboard"]["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["policy"] == a)
        .unwrap()["win_rate"][b]
        .as_f64()
        .unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    // Equal weights give the plain share of units, which differs here.
    let plain = dir.join("p");
    run_ok(&[
        "report",
        "--scores",
        scores.to_str().unwrap(),
        "--leaderboard",
        "on",
        "--leaderboard-samples",
        "0",
        "--out",
        plain.to_str().unwrap(),
    ]);
    let p = json(&plain.join("tests.json"));
    let unweighted = p["leaderboard"]["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["policy"] == a)
        .unwrap()["win_rate"][b]
        .as_f64()
        .unwrap();
    let share = per_dataset.values().map(|(w, _)| w).sum::<f64>() / by_unit.len() as f64;
    assert!((unweighted - share).abs() < 1e-12);
    // A weights file must name every unit.
    let wfile = dir.join("weights.csv");
    std::fs::write(&wfile, "unit,weight\ncar/00,1\n").unwrap();
    let e = run_fails(
        &[
            "report",
            "--scores",
            scores.to_str().unwrap(),
            "--unit-weights",
            wfile.to_str().unwrap(),
            "--out",
            dir.join("x").to_str().unwrap(),
        ],
        1,
    );
    assert!(e.contains("no weight for unit 'car/01'"), "{e}");
}

/// A CSV's two columns as a map (quoted fields with commas read as one, by polars).
fn csv_map(path: &Path, key: &str, value: &str) -> BTreeMap<String, f64> {
    use polars::prelude::*;
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .unwrap()
        .finish()
        .unwrap();
    let k = df.column(key).unwrap().cast(&DataType::String).unwrap();
    let v = df.column(value).unwrap().cast(&DataType::Float64).unwrap();
    k.str()
        .unwrap()
        .iter()
        .zip(v.f64().unwrap().iter())
        .map(|(k, v)| (k.unwrap().to_string(), v.unwrap()))
        .collect()
}

/// TabArena's own results table and the leaderboard TabArena computed from it
/// (tests/fixtures/import/tabarena: 51 datasets, split 0, 78 methods), ranked here as
/// `--scores --unit-col dataset,fold`. TabArena's Elo is a Bradley–Terry fit by scikit-learn's
/// LogisticRegression (C = 1e6, its default tolerance) calibrated to `RF (default)` = 1000, rounded
/// to 0.1; banditbench's `bt_rating` with `--baseline "RF (default)"` is the same model fitted to
/// convergence. Measured: median |difference| 0.29 points, largest 5.5 (KNN (default), the
/// bottom of the table with a 4 % win rate, where the likelihood is flattest; TabArena's own
/// interval there is about ±60). Win rates (ties half) agree within 0.001 (pairs whose errors
/// differ by less than the tie tolerance count as ties here).
#[test]
fn tabarenas_leaderboard_is_reproduced_from_its_own_results_table() {
    let dir = scratch("tabarena");
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/tabarena");
    let out = dir.join("report");
    run_ok(&[
        "report",
        "--scores",
        fx.join("results_per_split.csv").to_str().unwrap(),
        "--unit-col",
        "dataset,fold",
        "--policy-col",
        "method",
        "--score-col",
        "metric_error",
        "--minimize",
        "--baseline",
        "RF (default)",
        "--unit-weights",
        "per-dataset",
        "--leaderboard",
        "on",
        "--leaderboard-samples",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    let ta_elo = csv_map(&fx.join("leaderboard_lite.csv"), "method", "elo");
    let ta_win = csv_map(&fx.join("leaderboard_lite.csv"), "method", "winrate");
    let bb_elo = csv_map(&out.join("leaderboard.csv"), "policy", "bt_rating");
    let bb_win = csv_map(&out.join("leaderboard.csv"), "policy", "mean_win_rate");
    assert_eq!(ta_elo.len(), 78);
    assert_eq!(
        ta_elo.keys().collect::<Vec<_>>(),
        bb_elo.keys().collect::<Vec<_>>()
    );
    assert_eq!(bb_elo["RF (default)"], 1000.0);
    let mut diffs: Vec<f64> = ta_elo.iter().map(|(m, e)| (bb_elo[m] - e).abs()).collect();
    diffs.sort_by(f64::total_cmp);
    let (median, max) = (diffs[diffs.len() / 2], diffs[diffs.len() - 1]);
    assert!(median < 1.0 && max < 10.0, "median {median}, max {max}");
    for (m, w) in &ta_win {
        assert!((bb_win[m] - w).abs() < 1e-3, "{m}: {} vs {w}", bb_win[m]);
    }
    // A unit column the table does not have: the column and the option.
    let e = run_fails(
        &[
            "report",
            "--scores",
            fx.join("results_per_split.csv").to_str().unwrap(),
            "--unit-col",
            "dataset,split",
            "--policy-col",
            "method",
            "--score-col",
            "metric_error",
            "--out",
            dir.join("x").to_str().unwrap(),
        ],
        1,
    );
    assert!(e.contains("'split'") && e.contains("--unit-col"), "{e}");
}

/// A report is byte-identical from run to run, every file of it: tables, text, SVG, PNG and PDF
/// alike (each run is its own process, so a hash map's order, which differs between processes,
/// would show; the PDF writer before krilla ordered its resources by one).
#[test]
fn a_report_is_byte_identical_run_to_run_pdfs_included() {
    let dir = scratch("report-twice");
    let mut outs = Vec::new();
    for i in 0..2 {
        let out = dir.join(format!("r{i}"));
        run_ok(&[
            "report",
            "--scores",
            &golden_csv("large"),
            "--out",
            out.to_str().unwrap(),
            "--pairs",
            "all",
        ]);
        outs.push(out);
    }
    let files = |d: &Path| -> Vec<String> {
        let mut f: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        f.sort();
        f
    };
    let names = files(&outs[0]);
    assert_eq!(names, files(&outs[1]));
    assert!(
        names.iter().filter(|n| n.ends_with(".pdf")).count() >= 4,
        "{names:?}"
    );
    for n in &names {
        assert!(
            std::fs::read(outs[0].join(n)).unwrap() == std::fs::read(outs[1].join(n)).unwrap(),
            "{n} differs between two runs of the same report"
        );
    }
}
