//! Mutant-UCB reproduced in shape (Brégère & Keisler 2024, "A Bandit Approach with Evolutionary
//! Operators for Model Selection", arXiv 2402.05144): Table 1 (Mutant-UCB against random search,
//! the steady-state EA and Hyperband at a fixed budget) and Table 2 (the exploration constant E of
//! ∞-UCB-E and Mutant-UCB), from `experiments/mutant-ucb-table1.toml` and
//! `experiments/mutant-ucb-table2.toml` on the recorded `sklearn-grid` pools, and Table 1 at the
//! paper's scale (T = 10 000, N = 10) on the HPOBench pools (`experiments/mutant-ucb-hpobench.toml`). Writes the tables
//! with the paper's numbers beside ours, Mutant-UCB against each baseline as one family of
//! hypotheses at dataset units (Wilcoxon–Holm, with the mean differences and their intervals),
//! and a report per experiment (ranks, anytime curves, figures).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Result, bail};

use super::ReproduceOptions;

use crate::analysis::FamilyTest;
use crate::analysis::units::ordered_mean;
use crate::analysis::{FoundNothing, UnitKind, unit_table};
use crate::results::{PoolCounts, Run, read_pool_counts};

const TABLE1: &str = "mutant-ucb-table1.toml";
const TABLE2: &str = "mutant-ucb-table2.toml";
const TABLE1_HPOBENCH: &str = "mutant-ucb-hpobench.toml";

/// The paper's numbers (`docs/mutant-ucb/paper.toml`): Table 1 and Table 2 as printed.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PaperNumbers {
    table1: Vec<Table1Cell>,
    table2: Vec<Table2Row>,
}

/// Table 1: a method's models tested and best accuracy (%) on one of CIFAR-10, MRBI, SVHN.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table1Cell {
    method: String,
    dataset: String,
    models: u32,
    accuracy: f64,
}

/// Table 2 (MNIST, T = 10 000, N = 10): E, ∞-UCB-E's accuracy %, Mutant-UCB's models and accuracy %.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table2Row {
    e: f64,
    inf_ucb_e_accuracy: f64,
    mutant_ucb_models: u32,
    mutant_ucb_accuracy: f64,
}

/// The paper's datasets, in its order.
const PAPER_DATASETS: [&str; 3] = ["CIFAR-10", "MRBI", "SVHN"];

fn paper_numbers() -> Result<PaperNumbers> {
    super::paper_numbers(
        "docs/mutant-ucb/paper.toml",
        include_str!("../../docs/mutant-ucb/paper.toml"),
    )
}

/// The paper's name of a policy family in Table 1.
fn method(family: &str) -> Option<&'static str> {
    match family {
        "random-search" => Some("random search"),
        "steady-state-ea" => Some("evolutionary algorithm"),
        "hyperband" => Some("Hyperband"),
        "mutant-ucb" => Some("Mutant-UCB"),
        _ => None,
    }
}

/// Per (policy, dataset): mean models tested, and the unit table's validation and test score of
/// the recommended configuration (the mean over runs, learners' pools and repetitions; a cell that
/// found nothing scores the worst of its dataset). Per (policy, "all"): models over every cell,
/// scores the mean over the dataset units.
#[derive(Clone, Copy, Debug, Default)]
struct Cellwise {
    n: usize,
    models: f64,
    score: f64,
    test: f64,
}

fn summarise(
    runs: &[Run],
    counts: &BTreeMap<u64, PoolCounts>,
    higher: bool,
) -> BTreeMap<(String, String), Cellwise> {
    let mut m: BTreeMap<(String, String), Cellwise> = BTreeMap::new();
    for r in runs {
        for key in [
            (r.policy.clone(), r.dataset.clone()),
            (r.policy.clone(), "all".to_string()),
        ] {
            let e = m.entry(key).or_default();
            e.n += 1;
            e.models += counts.get(&r.cell).map_or(0.0, |c| c.configs_drawn as f64);
        }
    }
    for e in m.values_mut() {
        e.models /= e.n.max(1) as f64;
    }
    let on_test = crate::analysis::units::on_test_scores(runs);
    let val = unit_table(runs, UnitKind::Dataset, FoundNothing::Worst, higher);
    let test = unit_table(&on_test, UnitKind::Dataset, FoundNothing::Worst, higher);
    let mut overall: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for ((d, p, v), (_, _, t)) in val.rows.into_iter().zip(test.rows) {
        let e = m.entry((p.clone(), d)).or_default();
        (e.score, e.test) = (v, t);
        let o = overall.entry(p).or_default();
        o.0.push(v);
        o.1.push(t);
    }
    for (p, (mut v, mut t)) in overall {
        let e = m.entry((p, "all".to_string())).or_default();
        (e.score, e.test) = (ordered_mean(&mut v), ordered_mean(&mut t));
    }
    m
}

/// An experiment's results, pool counts and name.
type Ran = (crate::report::Results, BTreeMap<u64, PoolCounts>, String);

/// Run one experiment file and report on it; returns its runs and pool counts.
fn run_one(
    opts: &ReproduceOptions,
    name: &str,
    out: &std::path::Path,
    files: &mut Vec<PathBuf>,
) -> Result<Ran> {
    let run = super::run_pool_and_report(opts, name, out, files)?;
    if !run.data.dropped.is_empty() {
        bail!(
            "{}: {} tasks of {} are not recorded; the reproduction needs the complete pool",
            name,
            run.data.dropped.len(),
            run.data.pool.manifest.name
        );
    }
    let counts = read_pool_counts(&run.dir)?;
    Ok((run.results, counts, run.name))
}

/// A Table 1 section (models tested · accuracy per dataset beside the paper's, and the family
/// tests) for one experiment's results; writes `csv_name`.
fn table1_section(
    ran: &Ran,
    intro: &str,
    out: &std::path::Path,
    csv_name: &str,
    md: &mut String,
    files: &mut Vec<PathBuf>,
) -> Result<Vec<(String, FamilyTest)>> {
    let (res, counts, name) = ran;
    let s = summarise(&res.runs, counts, res.higher_is_better);
    let mut datasets: Vec<String> = res.runs.iter().map(|r| r.dataset.clone()).collect();
    datasets.sort();
    datasets.dedup();
    let policies: Vec<(String, String)> = {
        let mut v: Vec<(String, String)> = res
            .runs
            .iter()
            .map(|r| (r.family.clone(), r.policy.clone()))
            .collect();
        v.sort();
        v.dedup();
        let order = [
            "random-search",
            "steady-state-ea",
            "hyperband",
            "mutant-ucb",
        ];
        v.sort_by_key(|(f, _)| order.iter().position(|o| o == f).unwrap_or(9));
        v
    };
    md.push_str(intro);
    let paper = paper_numbers()?;
    md.push_str("\n\n| method |");
    for d in PAPER_DATASETS {
        let _ = write!(md, " {d} (paper) |");
    }
    for d in &datasets {
        let _ = write!(md, " {d} |");
    }
    md.push_str(" all: validation | all: test |\n|---|---|---|---|");
    for _ in &datasets {
        md.push_str("---|");
    }
    md.push_str("---|---|\n");
    let mut csv =
        String::from("method,policy,dataset,models_tested,validation_accuracy,test_accuracy\n");
    for (fam, pol) in &policies {
        let m = method(fam).unwrap_or(fam.as_str());
        let _ = write!(md, "| {m} |");
        for d in PAPER_DATASETS {
            match paper
                .table1
                .iter()
                .find(|c| c.method == m && c.dataset == d)
            {
                Some(c) => {
                    let _ = write!(md, " {} · {:.1} |", c.models, c.accuracy);
                }
                None => md.push_str(" |"),
            }
        }
        for d in datasets.iter().chain(std::iter::once(&"all".to_string())) {
            let c = s
                .get(&(pol.clone(), d.clone()))
                .copied()
                .unwrap_or_default();
            if d == "all" {
                let test = if c.test.is_finite() {
                    format!("{:.2}", 100.0 * c.test)
                } else {
                    "–".to_string()
                };
                let _ = write!(md, " {:.0} · {:.2} | {test} |", c.models, 100.0 * c.score);
            } else {
                let _ = write!(md, " {:.0} · {:.2} |", c.models, 100.0 * c.score);
            }
            let _ = writeln!(
                csv,
                "{m},{},{d},{},{},{}",
                crate::report::figures::csv_field(pol),
                c.models,
                c.score,
                c.test
            );
        }
        md.push('\n');
    }
    super::write_listed(files, out.join(csv_name), &csv)?;
    let focus = policies
        .iter()
        .find(|(f, _)| f == "mutant-ucb")
        .map(|p| p.1.clone())
        .ok_or_else(|| anyhow::anyhow!("{name}: no mutant-ucb policy"))?;
    md.push('\n');
    let (fam, on_val, on_test) = super::claims::families_on_validation_and_test(
        &res.runs,
        res.higher_is_better,
        &focus,
        "accuracy",
        "Mutant-UCB",
    )?;
    md.push_str(&fam);
    let _ = writeln!(
        md,
        "Report with ranks, anytime incumbent curves and figures: [`{name}/report.md`]({name}/report.md).\n"
    );
    let mut found = vec![(format!("`{name}`, validation"), on_val)];
    if let Some(t) = on_test {
        found.push((format!("`{name}`, test"), t));
    }
    Ok(found)
}

/// Run both tables' experiments and write `results/mutant-ucb/`: `README.md` (both tables beside
/// the paper's, the family test), `table1.csv`, `table2.csv` and a report per experiment.
pub fn reproduce(opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let out = opts.results.join("mutant-ucb");
    std::fs::create_dir_all(&out)?;
    let mut files = Vec::new();
    let mut md = String::from(
        "# Mutant-UCB reproduced in shape on recorded pools\n\n\
         Brégère & Keisler 2024, *A Bandit Approach with Evolutionary Operators for Model Selection* \
         (arXiv 2402.05144). Written by `banditbench reproduce mutant-ucb`.\n\n\
         **What differs here.** The paper trains convolutional networks on CIFAR-10, MRBI and SVHN \
         (T = 10 000 sub-trains of 10 epochs, N = 10) and its mutants inherit their parent's \
         trained weights. Here each task is one learner's recorded 625-configuration grid of \
         `sklearn-grid` on one (dataset, run); a sub-train is one unit of a 27-unit learning curve; \
         T = 1 350 units (50 full curves) and N = 27, so a fully trained model means the same for \
         every method; a mutant is an untried grid neighbour and starts from its own first unit \
         (replay cannot pass weights on); the steady-state EA mutates only (no crossover on a \
         grid). The scores are validation accuracy of the recommended configuration (the best \
         unit seen) and the test accuracy of that same unit. Nothing was tuned on these tasks: \
         the paper's E = 0.05 and its ratios of K to T/N.\n\n",
    );

    // Table 1, scaled to sklearn-grid, and at the paper's scale on HPOBench.
    let ran = run_one(opts, TABLE1, &out, &mut files)?;
    let mut found = table1_section(
        &ran,
        "## Table 1: models tested · best accuracy (%)\n\nThe paper's three datasets, then ours (`sklearn-grid`, T = 1 350, N = 27): each of our cells is the mean over 3 runs, 4 learners' grids and the repetitions.",
        &out,
        "table1.csv",
        &mut md,
        &mut files,
    )?;
    let ran = run_one(opts, TABLE1_HPOBENCH, &out, &mut files)?;
    found.extend(table1_section(
        &ran,
        "## Table 1 at the paper's scale: HPOBench MLP pools, T = 10 000, N = 10\n\nEach pool has 30 000 configurations; a sub-train reveals one more seed's full-fidelity score (5 per configuration), so no model is trained more than 5 times, and random search and the EA, which train every model fully, test T/5 = 2 000 models (the paper's T/N = 1 000). K_Mutant = 900 (a bit below T/N), K_EA = 100; 10 repetitions. Scores are validation accuracy; HPOBench ships no test score.",
        &out,
        "table1-hpobench.csv",
        &mut md,
        &mut files,
    )?);

    // Table 2.
    let (res2, counts2, name2) = run_one(opts, TABLE2, &out, &mut files)?;
    let s2 = summarise(&res2.runs, &counts2, res2.higher_is_better);
    // (family, E) -> policy id
    let mut by_e: BTreeMap<(String, String), String> = BTreeMap::new();
    for r in &res2.runs {
        let v: serde_json::Value = serde_json::from_str(&r.params).unwrap_or_default();
        let e = v["e"].as_f64().map_or("?".into(), |x| format!("{x}"));
        by_e.insert((r.family.clone(), e), r.policy.clone());
    }
    md.push_str("## Table 2: the exploration constant E\n\nThe paper: MNIST, T = 10 000, N = 10, ∞-UCB-E with K = 3 000, Mutant-UCB with K = 500. Ours: T = 1 350, N = 27, K = 405 and 67 (the same fractions of T); validation accuracy (%), mean over all cells, and Mutant-UCB's models tested. E is a parameter study here: no setting is chosen on these units.\n\n| E | ∞-UCB-E (paper) | ∞-UCB-E (ours) | Mutant-UCB (paper): models · accuracy | Mutant-UCB (ours): models · accuracy |\n|---|---|---|---|---|\n");
    let mut csv2 = String::from("e,policy,models_tested,validation_accuracy,test_accuracy\n");
    for row in paper_numbers()?.table2 {
        let Table2Row {
            e,
            inf_ucb_e_accuracy: inf_acc,
            mutant_ucb_models: m_models,
            mutant_ucb_accuracy: m_acc,
        } = row;
        let key = format!("{e}");
        let get = |fam: &str| {
            by_e.get(&(fam.to_string(), key.clone()))
                .and_then(|p| s2.get(&(p.clone(), "all".to_string())).copied())
        };
        let (inf, mu) = (get("inf-ucb-e"), get("mutant-ucb"));
        let _ = writeln!(
            md,
            "| {e} | {inf_acc:.1} | {} | {m_models} · {m_acc:.1} | {} |",
            inf.map_or("–".into(), |c| format!("{:.2}", 100.0 * c.score)),
            mu.map_or("–".into(), |c| format!(
                "{:.0} · {:.2}",
                c.models,
                100.0 * c.score
            ))
        );
        for (fam, c) in [("inf-ucb-e", inf), ("mutant-ucb", mu)] {
            if let Some(c) = c {
                let _ = writeln!(csv2, "{e},{fam},{},{},{}", c.models, c.score, c.test);
            }
        }
    }
    let _ = writeln!(
        md,
        "\nReport with ranks, anytime curves and figures: [`{name2}/report.md`]({name2}/report.md).\n"
    );
    super::write_listed(&mut files, out.join("table2.csv"), &csv2)?;
    super::write_listed(&mut files, out.join("README.md"), &md)?;
    use super::claims::{ClaimPart, Expect, claim_markdown};
    let claim = claim_markdown(
        "Mutant-UCB's claim on recorded pools",
        "Brégère & Keisler 2024, Table 1 and §5.1: Mutant-UCB finds better models than random search, the steady-state evolutionary algorithm and Hyperband at the same budget of sub-trains.",
        &[
            ClaimPart {
                baseline: "random-search",
                words: "better than random search",
                expect: Expect::Better,
            },
            ClaimPart {
                baseline: "steady-state-ea",
                words: "better than the steady-state EA",
                expect: Expect::Better,
            },
            ClaimPart {
                baseline: "hyperband",
                words: "better than Hyperband",
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
    use super::*;

    #[test]
    fn the_papers_numbers_parse_with_four_methods_on_three_datasets_and_five_settings_of_e() {
        let p = paper_numbers().unwrap();
        assert_eq!(p.table1.len(), 12);
        for d in PAPER_DATASETS {
            assert_eq!(p.table1.iter().filter(|c| c.dataset == d).count(), 4, "{d}");
        }
        let m = p
            .table1
            .iter()
            .find(|c| c.method == "Mutant-UCB" && c.dataset == "SVHN")
            .unwrap();
        assert_eq!((m.models, m.accuracy), (3471, 92.4));
        let es: Vec<f64> = p.table2.iter().map(|r| r.e).collect();
        assert_eq!(es, [0.01, 0.05, 1.0, 5.0, 10.0]);
    }

    #[test]
    fn summaries_average_models_and_scores_per_dataset_and_overall() {
        let mut a = Run::scored("d1", 0, 10.0, 0, "mutant-ucb(k=1)", 0.8);
        a.cell = 1;
        a.best_test_score = 0.7;
        let mut b = Run::scored("d2", 0, 10.0, 0, "mutant-ucb(k=1)", 0.6);
        b.cell = 2;
        b.best_test_score = 0.5;
        let counts: BTreeMap<u64, PoolCounts> = [
            (
                1,
                PoolCounts {
                    configs_drawn: 10,
                    ..Default::default()
                },
            ),
            (
                2,
                PoolCounts {
                    configs_drawn: 30,
                    ..Default::default()
                },
            ),
        ]
        .into();
        let s = summarise(&[a, b], &counts, true);
        let all = s[&("mutant-ucb(k=1)".to_string(), "all".to_string())];
        assert_eq!(all.n, 2);
        assert!((all.models - 20.0).abs() < 1e-12);
        assert!((all.score - 0.7).abs() < 1e-12 && (all.test - 0.6).abs() < 1e-12);
        let d1 = s[&("mutant-ucb(k=1)".to_string(), "d1".to_string())];
        assert!((d1.models - 10.0).abs() < 1e-12 && (d1.score - 0.8).abs() < 1e-12);
        assert_eq!(method("steady-state-ea"), Some("evolutionary algorithm"));
    }
}
