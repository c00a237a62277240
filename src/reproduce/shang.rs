//! D-TTTS reproduced (Shang, Kaufmann & Valko 2019, "A simple dynamic bandit algorithm for
//! hyper-parameter tuning", AutoML@ICML; slides "Bandits and Hyper-parameter Optimization") with
//! TTTS and T3C (Shang, de Heide, Ménard, Kaufmann & Valko 2020, "Fixed-Confidence Guarantees for
//! Bayesian Best-Arm Identification", AISTATS).
//!
//! Runs `experiments/shang-sklearn-grid.toml` and `experiments/shang-hpobench.toml` in the pool
//! world, writes a report per pool (ranks at dataset units, per-budget panels, anytime incumbent
//! curves), tests D-TTTS against each other policy as one named family (Wilcoxon–Holm at dataset
//! units, with the mean score difference and its interval beside each test), and measures the time
//! per sampling step of T3C, TTTS and uniform sampling, the slides' timing table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::ReproduceOptions;
use super::claims::{ClaimPart, Expect, claim_markdown, families_on_validation_and_test};
use crate::analysis::FamilyTest;

const EXPERIMENTS: [&str; 2] = ["shang-sklearn-grid.toml", "shang-hpobench.toml"];
/// The policy the claim is about: D-TTTS with the slides' pseudo-arm.
const DTTTS: &str = "d-ttts(beta=0.5, max_resample=10000, queried=pseudo-arm)";
/// The slides' timing table (`docs/shang/paper.toml`): seconds per sampling step.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PaperNumbers {
    timing: Vec<Timing>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Timing {
    policy: String,
    seconds: f64,
}

fn paper_numbers() -> Result<PaperNumbers> {
    super::paper_numbers(
        "docs/shang/paper.toml",
        include_str!("../../docs/shang/paper.toml"),
    )
}

/// The time per sampling step of T3C, TTTS and uniform sampling (K = 100) on the first learner's
/// grid of the sklearn-grid pool: (policy, seconds per step, slides' seconds).
pub(crate) fn timing(pool_dir: &Path, seconds: f64) -> Result<Vec<(String, f64, f64)>> {
    let pool = crate::trace::pool::load_pool(pool_dir, true)?;
    let mut out = Vec::new();
    for Timing {
        policy,
        seconds: slides,
    } in paper_numbers()?.timing
    {
        let t = crate::bench::measure_pool(&pool, 0, &policy, 1000.0, seconds)?;
        out.push((policy, 1.0 / t.decisions_per_second().max(1e-12), slides));
    }
    Ok(out)
}

fn timing_markdown(rows: &[(String, f64, f64)]) -> String {
    let get = |p: &str, i: usize| {
        rows.iter()
            .find(|r| r.0 == p)
            .map_or(f64::NAN, |r| if i == 1 { r.1 } else { r.2 })
    };
    let mut s = String::from(
        "| sampling rule | measured s per step | slides' s per step |\n|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(s, "| {} | {:.2e} | {:.1e} |", r.0, r.1, r.2);
    }
    let _ = writeln!(
        s,
        "\nRatio TTTS / T3C: measured {:.1}×, slides {:.1}×. Ratio T3C / uniform: measured {:.0}×, slides {:.1}×.",
        get("ttts", 1) / get("t3c", 1),
        get("ttts", 2) / get("t3c", 2),
        get("t3c", 1) / get("uniform", 1),
        get("t3c", 2) / get("uniform", 2)
    );
    s
}

/// Run both experiments and write `results/shang/`: a report per pool, `README.md` with the
/// family tests and the timing table, and `timing.csv`.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("shang");
    std::fs::create_dir_all(&out)?;
    let mut files = Vec::new();
    let mut md = String::from(
        "# D-TTTS, TTTS and T3C reproduced on recorded pools\n\n\
         Shang, Kaufmann & Valko 2019, *A simple dynamic bandit algorithm for hyper-parameter tuning* \
         (AutoML@ICML), and the slides *Bandits and Hyper-parameter Optimization*; TTTS and T3C from \
         Shang, de Heide, Ménard, Kaufmann & Valko 2020 (AISTATS). Written by \
         `banditbench reproduce shang`.\n\n\
         **The slides' claims.** D-TTTS treats HPO as infinite-armed best-arm identification: \
         it is anytime, needs no budget split, and is shown (figures on wine, breast cancer, adult, \
         MNIST) to be competitive with Hyperband and better than random search; T3C removes TTTS's \
         re-sampling cost (timing table: T3C 1.6e-5 s, TTTS 2.3e-4 s, uniform 6e-6 s per step).\n\n\
         **What differs here.** The slides tune SVM and MLP hyper-parameters on continuous spaces; \
         here each task is a recorded finite pool. On sklearn-grid a pull trains one more unit of \
         a learning curve (not an i.i.d. re-evaluation); on HPOBench a pull reveals one more \
         seed's full-fidelity score (the i.i.d. model of the theory). Every policy runs at its \
         papers' defaults; nothing was tuned on these tasks.\n\n",
    );
    let mut found: Vec<(String, FamilyTest)> = Vec::new();
    for name in EXPERIMENTS {
        let super::PoolRun {
            name: exp_name,
            data,
            results: res,
            ..
        } = super::run_pool_and_report(opts, name, &out, &mut files)?;
        let (fam, on_val, on_test) = families_on_validation_and_test(
            &res.runs,
            res.higher_is_better,
            DTTTS,
            &data.pool.manifest.metric,
            "D-TTTS (pseudo-arm)",
        )?;
        found.push((format!("`{}`, validation", data.pool.manifest.name), on_val));
        if let Some(t) = on_test {
            found.push((format!("`{}`, test", data.pool.manifest.name), t));
        }
        let _ = writeln!(
            md,
            "## {} ({} tasks{})\n\n{}\n\nReport with per-budget ranks and anytime incumbent curves: [`{}/report.md`]({}/report.md).\n",
            data.pool.manifest.name,
            data.tasks.len(),
            if data.dropped.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} tasks not yet recorded were left out: {}",
                    data.dropped.len(),
                    data.dropped.join(", ")
                )
            },
            fam,
            exp_name,
            exp_name
        );
    }
    let pool_dir = opts.traces.join("sklearn-grid");
    let rows = timing(&pool_dir, opts.timing_seconds)?;
    let _ = writeln!(
        md,
        "## Time per sampling step\n\nMeasured here on one learner's 625-configuration grid of sklearn-grid, K = 100 configurations, 1 000 units per cell, one thread (`banditbench bench --only pool` measures the same). Only ratios can be compared with the slides, which ran other code on other hardware.\n\n{}\nTTTS's cost is its re-sampling loop, which runs until the challenger differs from the leader: it grows as the posteriors concentrate. With at most 27 binarised units per arm the posteriors here stay wide, so the loop ends quickly and TTTS is only a little slower than T3C; the slides' fixed-confidence runs sample until the posteriors concentrate.",
        timing_markdown(&rows)
    );
    let mut csv = String::from("policy,seconds_per_step,slides_seconds_per_step\n");
    for r in &rows {
        let _ = writeln!(csv, "{},{:e},{:e}", r.0, r.1, r.2);
    }
    super::write_listed(&mut files, out.join("timing.csv"), &csv)?;
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    let claim = claim_markdown(
        "D-TTTS's claim on recorded pools",
        "Shang, Kaufmann & Valko 2019 (slides): D-TTTS (the pseudo-arm version) is competitive with Hyperband and better than random search.",
        &[
            ClaimPart {
                baseline: "hyperband",
                words: "not worse than Hyperband",
                expect: Expect::NotWorse,
            },
            ClaimPart {
                baseline: "random-search",
                words: "better than random search",
                expect: Expect::Better,
            },
        ],
        &found,
    );
    super::write_listed(&mut files, out.join("claim.md"), &claim)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::super::claims::family_test;
    use super::*;
    use crate::results::Run;

    #[test]
    fn the_family_is_dttts_against_every_other_policy_with_differences() {
        // Four datasets; D-TTTS beats random search by 0.01 on each and ties Hyperband.
        let mut runs = Vec::new();
        for (i, d) in ["a", "b", "c", "d"].iter().enumerate() {
            let base = 0.8 + 0.01 * i as f64;
            runs.push(Run::scored(d, 0, 10.0, 0, DTTTS, base + 0.01));
            runs.push(Run::scored(d, 0, 10.0, 0, "random-search", base));
            runs.push(Run::scored(d, 0, 10.0, 0, "hyperband(eta=3)", base + 0.01));
        }
        let t = family_test(&runs, true, DTTTS).unwrap();
        assert_eq!(t.n_units, 4);
        assert_eq!(t.against.len(), 2);
        let rs = t
            .against
            .iter()
            .find(|a| a.policy == "random-search")
            .unwrap();
        assert!((rs.diff.0 - 0.01).abs() < 1e-12);
        // Two hypotheses at 4 units: the smallest Holm p is 2 x 2/16 = 0.25, so nothing rejects.
        assert!((t.min_p_holm - 0.25).abs() < 1e-12);
        assert!(!rs.focus_better && rs.p_holm >= 0.25);
        let hb = t
            .against
            .iter()
            .find(|a| a.policy != "random-search")
            .unwrap();
        assert!(hb.diff.0.abs() < 1e-12);
        // Without D-TTTS there is no claim to test.
        let e = family_test(&runs[1..2], true, DTTTS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no cell"), "{e}");
    }

    #[test]
    fn the_slides_timing_parses() {
        let t = paper_numbers().unwrap().timing;
        let rows: Vec<(&str, f64)> = t.iter().map(|t| (t.policy.as_str(), t.seconds)).collect();
        assert_eq!(rows, [("t3c", 1.6e-5), ("ttts", 2.3e-4), ("uniform", 6e-6)]);
    }

    #[test]
    fn timing_ratios_are_computed_from_the_rows() {
        let rows = vec![
            ("t3c".to_string(), 2e-5, 1.6e-5),
            ("ttts".to_string(), 4e-5, 2.3e-4),
            ("uniform".to_string(), 1e-6, 6e-6),
        ];
        let s = timing_markdown(&rows);
        assert!(s.contains("measured 2.0×, slides 14.4×"), "{s}");
        assert!(s.contains("measured 20×"), "{s}");
    }
}
