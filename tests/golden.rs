//! Golden tests: banditbench's statistics against SciPy 1.17.1, scikit-posthocs 0.17.1,
//! statsmodels 0.15.0 and mpmath, on the score tables in tests/golden/ (made by
//! scripts/reference/stats_reference.py, which also wrote the expected values).

use std::collections::BTreeMap;
use std::path::Path;

use banditbench::analysis::average_ranks;
use banditbench::analysis::stats::{
    CiKind, ZeroMethod, friedman, holm, iman_davenport, mean_interval, mean_sd, nemenyi,
    studentized_range_quantile, studentized_range_sf, wilcoxon,
};
use serde_json::Value;

fn golden() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/stats.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// scores[u][p] from a long CSV (unit,policy,score), units and policies in file order.
fn table(name: &str) -> Vec<Vec<f64>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.csv"));
    let text = std::fs::read_to_string(p).unwrap();
    let mut by_unit: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        by_unit
            .entry(f[0].to_string())
            .or_default()
            .push(f[2].parse().unwrap());
    }
    by_unit.into_values().collect()
}

fn close(a: f64, b: f64, rel: f64, what: &str) {
    let tol = rel * b.abs().max(1e-300);
    assert!(
        (a - b).abs() <= tol.max(1e-300) || a == b,
        "{what}: {a} vs {b} (difference {:e}, allowed {tol:e})",
        (a - b).abs()
    );
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

const TABLES: [&str; 7] = [
    "small",
    "tied",
    "identical",
    "k2",
    "zeros",
    "large",
    "minimize",
];

#[test]
fn ranks_and_mean_rank_intervals() {
    let g = golden();
    for name in TABLES {
        let t = &g["tables"][name];
        let higher = t["higher_is_better"].as_bool().unwrap();
        let scores = table(name);
        let ranks: Vec<Vec<f64>> = scores.iter().map(|r| average_ranks(r, higher)).collect();
        for (u, row) in ranks.iter().enumerate() {
            for (p, r) in row.iter().enumerate() {
                assert_eq!(
                    *r,
                    f(&t["ranks"][u][p]),
                    "{name}: rank of unit {u}, policy {p}"
                );
            }
        }
        let k = ranks[0].len();
        for p in 0..k {
            let col: Vec<f64> = ranks.iter().map(|r| r[p]).collect();
            let (m, sd) = mean_sd(&col);
            close(
                m,
                f(&t["mean_rank"][p]),
                1e-12,
                &format!("{name} mean rank {p}"),
            );
            close(sd, f(&t["sd_rank"][p]), 1e-12, &format!("{name} sd {p}"));
            for (kind, key) in [(CiKind::T95, "ci_t95"), (CiKind::Z95, "ci_z95")] {
                let (lo, hi) = mean_interval(&col, kind);
                close(
                    lo,
                    f(&t[key][p][0]),
                    1e-12,
                    &format!("{name} {key} low {p}"),
                );
                close(
                    hi,
                    f(&t[key][p][1]),
                    1e-12,
                    &format!("{name} {key} high {p}"),
                );
            }
        }
    }
}

#[test]
fn friedman_and_iman_davenport() {
    let g = golden();
    for name in TABLES {
        let t = &g["tables"][name];
        let higher = t["higher_is_better"].as_bool().unwrap();
        let ranks: Vec<Vec<f64>> = table(name)
            .iter()
            .map(|r| average_ranks(r, higher))
            .collect();
        let fr = friedman(&ranks);
        close(
            fr.statistic,
            f(&t["friedman"]["statistic"]),
            1e-12,
            &format!("{name} chi2"),
        );
        close(
            fr.p_value,
            f(&t["friedman"]["p_value"]),
            1e-9,
            &format!("{name} friedman p"),
        );
        assert_eq!(fr.df as u64, t["friedman"]["df"].as_u64().unwrap());
        let id = iman_davenport(fr.statistic, ranks.len(), ranks[0].len());
        close(
            id.statistic,
            f(&t["iman_davenport"]["statistic"]),
            1e-12,
            &format!("{name} F"),
        );
        close(
            id.p_value,
            f(&t["iman_davenport"]["p_value"]),
            1e-9,
            &format!("{name} F p"),
        );
        assert_eq!(id.df2 as u64, t["iman_davenport"]["df2"].as_u64().unwrap());
    }
}

#[test]
fn nemenyi_against_scikit_posthocs() {
    let g = golden();
    for name in TABLES {
        let t = &g["tables"][name];
        let k = t["k"].as_u64().unwrap() as usize;
        let n = t["n"].as_u64().unwrap() as usize;
        let means: Vec<f64> = (0..k).map(|p| f(&t["mean_rank"][p])).collect();
        let all: Vec<(usize, usize)> = (0..k)
            .flat_map(|a| ((a + 1)..k).map(move |b| (a, b)))
            .collect();
        let nem = nemenyi(&means, n, 0.05, &all);
        close(
            nem.q_alpha,
            f(&t["nemenyi"]["q_alpha"]),
            1e-9,
            &format!("{name} q_alpha"),
        );
        close(nem.cd, f(&t["nemenyi"]["cd"]), 1e-9, &format!("{name} cd"));
        let pols = t["policies"].as_array().unwrap();
        for a in 0..k {
            for b in 0..k {
                let want = f(&t["nemenyi"]["pairwise_p"][pols[a].as_str().unwrap()]
                    [pols[b].as_str().unwrap()]);
                // SciPy's studentized range is itself accurate to ~1e-9 relative in the far
                // tail (compared with mpmath below); agreement is checked to 1e-8 there.
                let rel = if want < 1e-6 { 1e-8 } else { 1e-9 };
                close(
                    nem.p(a, b).expect("every pair was asked for"),
                    want,
                    rel,
                    &format!("{name} nemenyi p[{a}][{b}]"),
                );
            }
        }
    }
}

#[test]
fn wilcoxon_and_holm_against_scipy_and_statsmodels() {
    let g = golden();
    for name in TABLES {
        let t = &g["tables"][name];
        let higher = t["higher_is_better"].as_bool().unwrap();
        let scores = table(name);
        for (zm, key) in [
            (ZeroMethod::Pratt, "wilcoxon_pratt"),
            (ZeroMethod::Wilcox, "wilcoxon_wilcox"),
        ] {
            let pairs = t[key].as_array().unwrap();
            let mut ps = Vec::new();
            for pair in pairs {
                let a: usize = pair["a"].as_str().unwrap()[1..].parse().unwrap();
                let b: usize = pair["b"].as_str().unwrap()[1..].parse().unwrap();
                let d: Vec<f64> = scores
                    .iter()
                    .map(|r| if higher { r[a] - r[b] } else { r[b] - r[a] })
                    .collect();
                let w = wilcoxon(&d, zm);
                let what = format!("{name} {key} {a}-{b} ({})", w.method.as_str());
                if let Some(stat) = pair["statistic"].as_f64() {
                    close(w.statistic, stat, 1e-12, &format!("{what} statistic"));
                }
                close(w.p_value, f(&pair["p_value"]), 1e-9, &format!("{what} p"));
                ps.push(w.p_value);
            }
            let (adj, rej) = holm(&ps, 0.05);
            for (i, pair) in pairs.iter().enumerate() {
                close(
                    adj[i],
                    f(&pair["p_holm"]),
                    1e-9,
                    &format!("{name} {key} holm {i}"),
                );
                assert_eq!(
                    rej[i],
                    pair["reject"].as_bool().unwrap(),
                    "{name} {key} reject {i}"
                );
            }
        }
    }
}

#[test]
fn studentized_range_against_mpmath_scipy_and_demsar() {
    let g = golden();
    let sr = &g["studentized_range"];
    for row in sr["sf_mpmath"].as_array().unwrap() {
        let (q, k) = (f(&row["q"]), row["k"].as_u64().unwrap() as usize);
        close(
            studentized_range_sf(q, k),
            f(&row["sf"]),
            1e-11,
            &format!("sf({q}, {k}) vs mpmath"),
        );
    }
    for row in sr["sf_scipy"].as_array().unwrap() {
        let (q, k) = (f(&row["q"]), row["k"].as_u64().unwrap() as usize);
        close(
            studentized_range_sf(q, k),
            f(&row["sf"]),
            2e-9,
            &format!("sf({q}, {k}) vs SciPy"),
        );
    }
    for (key, p) in [
        ("quantile_0.95_over_sqrt2", 0.95),
        ("quantile_0.90_over_sqrt2", 0.90),
    ] {
        for (k, v) in sr[key].as_object().unwrap() {
            let k: usize = k.parse().unwrap();
            let q = studentized_range_quantile(p, k) / std::f64::consts::SQRT_2;
            close(q, f(v), 1e-9, &format!("{key} k={k}"));
        }
    }
    for (k, v) in sr["demsar_table_5a_0.05"].as_object().unwrap() {
        let k: usize = k.parse().unwrap();
        let q = studentized_range_quantile(0.95, k) / std::f64::consts::SQRT_2;
        // Demšar's Table 5a prints 3 decimals and is not always rounded to nearest (k = 3:
        // 2.343 for 2.34370, which SciPy confirms above to 1e-9): agreement to 1e-3.
        assert!(
            (q - f(v)).abs() <= 1e-3,
            "Demšar q_0.05 k={k}: {q} vs {}",
            f(v)
        );
    }
}

/// The Bayesian signed-rank test against baycomp 1.0.3 (tests/golden/bayes.json, written by
/// scripts/reference/bayes_reference.py with 50 000 samples): banditbench draws its own 50 000
/// samples, so each probability must agree within four standard errors of the difference of two
/// Monte-Carlo estimates (at least 0.002). The 200-unit table is checked at one rope (its 21
/// cases would take most of a minute in a debug build).
#[test]
fn bayesian_signed_rank_against_baycomp() {
    use banditbench::analysis::bayes::signed_rank;
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bayes.json");
    let g: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let theirs = g["nsamples"].as_f64().unwrap();
    let ours = 50_000usize;
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 60);
    let mut in_rope = 0;
    let mut checked = 0;
    for c in cases {
        let name = c["table"].as_str().unwrap();
        if name == "large" && f(&c["rope"]) != 0.01 {
            continue;
        }
        checked += 1;
        let sign = if name == "minimize" { -1.0 } else { 1.0 };
        let t = table(name);
        let col = |p: &str| -> Vec<f64> {
            let i: usize = p.trim_start_matches('p').parse().unwrap();
            t.iter().map(|row| sign * row[i]).collect()
        };
        let (x, y) = (col(c["x"].as_str().unwrap()), col(c["y"].as_str().unwrap()));
        let rope = f(&c["rope"]);
        let r = signed_rank(&x, &y, rope, 0.5, ours, 1);
        for (key, got) in [
            ("p_left", r.p_left),
            ("p_rope", r.p_rope),
            ("p_right", r.p_right),
        ] {
            let want = f(&c[key]);
            let se = (want * (1.0 - want) * (1.0 / theirs + 1.0 / ours as f64)).sqrt();
            let tol = (4.0 * se).max(0.002);
            assert!(
                (got - want).abs() <= tol,
                "{name} {} vs {} rope {rope}: {key} {got} vs baycomp {want} (allowed {tol})",
                c["x"],
                c["y"]
            );
        }
        if f(&c["p_rope"]) > 0.5 {
            in_rope += 1;
        }
    }
    // The cases span the answers: some pairs are practically equivalent, most are not.
    assert!(in_rope > 0 && in_rope < checked);
    assert_eq!(checked, 46);
}

/// Skillings–Mack (`report --missing keep`) against tlsfuzzer's `skillings_mack_test`
/// (scripts/reference/skillings_mack_reference.py), which matches R's PMCMRplus: Hollander &
/// Wolfe's metronome example, a five-policy design with many holes, and real CASH scores with
/// and without holes.
#[test]
fn skillings_mack_matches_tlsfuzzer_and_pmcmrplus() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skillings_mack/reference.json");
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let cases = reference["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let scores: Vec<Vec<Option<f64>>> = c["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().map(Value::as_f64).collect())
            .collect();
        let sm = banditbench::analysis::stats::skillings_mack(&scores, true, 0.0).unwrap();
        close(sm.statistic, c["statistic"].as_f64().unwrap(), 1e-9, name);
        close(sm.p_value, c["p_value"].as_f64().unwrap(), 1e-8, name);
        assert_eq!(sm.df as u64, c["df"].as_u64().unwrap(), "{name}");
        // The direction does not change the statistic (ranks reversed: A changes sign).
        let flipped = banditbench::analysis::stats::skillings_mack(&scores, false, 0.0).unwrap();
        close(flipped.statistic, sm.statistic, 1e-12, name);
        if name == "metronome" {
            // PMCMRplus's printed values (7 significant digits).
            close(sm.statistic, 13.28095, 1e-6, "PMCMRplus statistic");
            close(sm.p_value, 0.001306405, 1e-6, "PMCMRplus p-value");
            assert_eq!((sm.units, sm.incomplete), (8, 1));
        }
    }
    // Complete and without ties, it is Friedman's statistic.
    let complete: Vec<Vec<f64>> = vec![
        vec![1.0, 2.0, 3.0, 4.0],
        vec![2.0, 1.0, 4.0, 3.0],
        vec![1.5, 3.5, 2.5, 4.5],
        vec![4.0, 1.0, 2.0, 3.0],
        vec![1.0, 3.0, 2.0, 4.0],
    ];
    let ranks: Vec<Vec<f64>> = complete.iter().map(|r| average_ranks(r, true)).collect();
    let opt: Vec<Vec<Option<f64>>> = complete
        .iter()
        .map(|r| r.iter().map(|&x| Some(x)).collect())
        .collect();
    let sm = banditbench::analysis::stats::skillings_mack(&opt, true, 0.0).unwrap();
    close(
        sm.statistic,
        friedman(&ranks).statistic,
        1e-12,
        "complete = Friedman",
    );
    // A unit with one score carries nothing; policies that never meet cannot be compared.
    let mut with_single = opt.clone();
    with_single.push(vec![Some(1.0), None, None, None]);
    let s2 = banditbench::analysis::stats::skillings_mack(&with_single, true, 0.0).unwrap();
    assert_eq!((s2.units, s2.dropped), (5, 1));
    close(
        s2.statistic,
        sm.statistic,
        1e-12,
        "a single score adds nothing",
    );
    let apart = vec![
        vec![Some(1.0), Some(2.0), None, None],
        vec![Some(2.0), Some(1.0), None, None],
        vec![None, None, Some(1.0), Some(2.0)],
    ];
    assert!(banditbench::analysis::stats::skillings_mack(&apart, true, 0.0).is_none());
}

/// The quickstart's fingerprint and first ten cell seeds (`tests/golden/identity.json`): the
/// identity of a cell (which results a rerun resumes, each cell's random stream) changes only
/// deliberately, with a results-format bump, never as a side effect of renaming a field or
/// adding a parameter.
#[test]
fn the_quickstarts_fingerprint_and_first_seeds_are_unchanged() {
    use polars::prelude::*;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/golden/identity.json")).unwrap(),
    )
    .unwrap();
    let out = std::env::temp_dir().join(format!("banditbench-identity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_banditbench"))
        .args(["run", "experiments/quickstart.toml", "--out"])
        .arg(&out)
        .arg("--quiet")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lock: toml::Table = std::fs::read_to_string(out.join("experiment.lock.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let lock = lock["resolved"].as_table().unwrap();
    assert_eq!(
        lock["results_format"].as_integer(),
        want["results_format"].as_i64()
    );
    assert_eq!(
        lock["fingerprint"].as_str(),
        want["fingerprint"].as_str(),
        "the quickstart's fingerprint changed"
    );
    let runs = ParquetReader::new(std::fs::File::open(out.join("runs.parquet")).unwrap())
        .finish()
        .unwrap();
    assert_eq!(runs.height() as u64, want["cells"].as_u64().unwrap());
    let seeds = runs.column("seed").unwrap().u64().unwrap();
    let policies = runs.column("policy").unwrap().str().unwrap();
    for (i, pair) in want["first_seeds"].as_array().unwrap().iter().enumerate() {
        assert_eq!(policies.get(i), pair[0].as_str(), "cell {i}'s policy");
        assert_eq!(
            seeds.get(i).map(|s| s.to_string()).as_deref(),
            pair[1].as_str(),
            "cell {i}'s seed changed"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
