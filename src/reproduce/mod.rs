//! `banditbench reproduce PAPER`: run a paper's experiments and write its tables and figures.

pub(crate) mod asha;
pub mod auto_weka;
pub(crate) mod claims;
pub mod erucb;
pub mod freeze_thaw;
pub mod hamlet;
pub mod mo_tpe;
pub mod mutant_ucb;
pub mod parallel_samplers;
pub mod shang;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::experiment::pool::PoolData;
use crate::experiment::{Data, RunOptions, prepare, run_experiment};
use crate::report::{ReportOptions, Results, read_results, report_loaded};

/// A reproduction: its name on the command line, what it reproduces, and what runs it (its
/// experiments, tables and figures; it returns the files it wrote).
pub struct Paper {
    /// Its name on the command line (`banditbench reproduce <name>`).
    pub name: &'static str,
    /// What it reproduces, in a line.
    pub about: &'static str,
    /// What runs it; returns the files it wrote.
    pub run: fn(&ReproduceOptions) -> Result<Vec<PathBuf>>,
}

/// Every reproduction. A new one is its file in `src/reproduce/` and its line here.
pub const PAPERS: &[Paper] = &[
    Paper {
        name: "erucb",
        about: "Hu, Yu & Liao 2019: Table 1, Figure 1, Table 2",
        run: erucb::reproduce,
    },
    Paper {
        name: "hamlet",
        about: "Schmidt et al. 2020: Table II grid, Figs. 2-8, the Variant 3 claim",
        run: hamlet::reproduce,
    },
    Paper {
        name: "shang",
        about: "Shang, Kaufmann & Valko 2019: D-TTTS against TTTS, T3C, SH, Hyperband, random search on recorded pools, and the timing table",
        run: shang::reproduce,
    },
    Paper {
        name: "mutant-ucb",
        about: "Brégère & Keisler 2024: Mutant-UCB's Tables 1 and 2 in shape on sklearn-grid, beside the paper's numbers",
        run: mutant_ucb::reproduce,
    },
    Paper {
        name: "asha",
        about: "Li et al. 2020: ASHA against synchronous SH and Hyperband on 1, 4, 16 and 64 simulated workers (incumbent at equal wall-clock time, throughput)",
        run: asha::reproduce,
    },
    Paper {
        name: "auto-weka",
        about: "Thornton et al. 2013: Auto-WEKA's CASH comparison (Ex-Def, grid and random search, TPE, SMAC) on sklearn-random and sklearn-grid",
        run: auto_weka::reproduce,
    },
    Paper {
        name: "freeze-thaw",
        about: "Kadra et al. 2023 (DPL): DPL against random search, Hyperband, ASHA and HAMLET's rules on the 12 TaskSet tables, normalised regret and rank over 1 000 one-unit evaluations",
        run: freeze_thaw::reproduce,
    },
    Paper {
        name: "mo-tpe",
        about: "Ozaki et al. 2020 (MO-TPE): MO-TPE against NSGA-II, ParEGO and random search by final hypervolume regret on NAS-Bench-201 and FCNet, 200 evaluations",
        run: mo_tpe::reproduce,
    },
    Paper {
        name: "parallel-samplers",
        about: "Issue #45's study: Optuna, SMAC3, DEHB and Syne Tune through the adapters against banditbench's ASHA, BOHB and TPE on 1, 4 and 16 simulated workers (needs --python with the adapters' libraries)",
        run: parallel_samplers::reproduce,
    },
];

/// The reproduction named `name`, or an error listing them.
pub(crate) fn paper(name: &str) -> Result<&'static Paper> {
    PAPERS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PAPERS.iter().map(|p| p.name).collect();
        anyhow::anyhow!("no reproduction '{name}'; there are: {}", names.join(", "))
    })
}

/// A reproduction's published numbers, `docs/<name>/paper.toml`, compiled into the binary so a
/// reproduction runs from any folder; `file` names it in an error.
pub(crate) fn paper_numbers<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T> {
    toml::from_str(text)
        .map_err(|e| anyhow::anyhow!("{file}: the paper's numbers do not parse: {e}"))
}

/// Write `text` to `path` and list it among the reproduction's `files`.
pub(crate) fn write_listed(files: &mut Vec<PathBuf>, path: PathBuf, text: &str) -> Result<()> {
    std::fs::write(&path, text)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    files.push(path);
    Ok(())
}

/// Run `exp` into `opts.results/<name>` (resuming finished cells), write its report to
/// `out/<name>/` and add the report's files to `files`; returns the results folder and results.
pub(crate) fn run_and_report(
    opts: &ReproduceOptions,
    exp: &crate::experiment::Experiment,
    data: &Data,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<(PathBuf, Results)> {
    let dir = opts.results.join(&exp.name);
    run_experiment(exp, data, &opts.run_options(&dir), opts.progress.as_ref())?;
    let results = read_results(&dir)?;
    files.extend(
        report_loaded(
            &dir,
            &results,
            &out.join(&exp.name),
            &ReportOptions::default(),
        )?
        .files,
    );
    Ok((dir, results))
}

/// Per unit and policy, the (sum, count) of the values of `items` = (unit, policy, value).
pub(crate) fn per_unit_sums<'a>(
    items: impl IntoIterator<Item = (&'a str, &'a str, f64)>,
) -> BTreeMap<&'a str, BTreeMap<&'a str, (f64, f64)>> {
    let mut per: BTreeMap<&str, BTreeMap<&str, (f64, f64)>> = BTreeMap::new();
    for (unit, policy, v) in items {
        let e = per.entry(unit).or_default().entry(policy).or_default();
        e.0 += v;
        e.1 += 1.0;
    }
    per
}

/// Per policy, the mean over units of its unit means and its mean rank (from
/// [`unit_means_and_ranks`]): one point of an anytime table.
pub(crate) fn mean_and_mean_rank(
    per_unit: &BTreeMap<&str, BTreeMap<&str, (f64, f64)>>,
) -> BTreeMap<String, (f64, f64)> {
    unit_means_and_ranks(per_unit)
        .into_iter()
        .map(|(p, (means, rank))| {
            let n = means.len() as f64;
            (p, (means.iter().sum::<f64>() / n, rank / n))
        })
        .collect()
}

/// Per policy, from per unit and policy the (sum, count) of a score where lower is better: the
/// policy's mean in each unit (in unit order) and the sum over units of its rank by them (1 =
/// lowest; ties share the mean rank). The anytime tables and leaderboards of `freeze-thaw` and
/// `parallel-samplers` divide both by the units.
pub(crate) fn unit_means_and_ranks(
    per_unit: &BTreeMap<&str, BTreeMap<&str, (f64, f64)>>,
) -> BTreeMap<String, (Vec<f64>, f64)> {
    let mut by: BTreeMap<String, (Vec<f64>, f64)> = BTreeMap::new();
    for unit in per_unit.values() {
        let means: Vec<(&str, f64)> = unit.iter().map(|(p, (s, n))| (*p, s / n)).collect();
        for &(p, m) in &means {
            let below = means.iter().filter(|x| x.1 < m).count() as f64;
            let equal = means.iter().filter(|x| x.1 == m).count() as f64;
            let e = by.entry(p.to_string()).or_default();
            e.0.push(m);
            e.1 += below + (equal + 1.0) / 2.0;
        }
    }
    by
}

/// A pool experiment run for a reproduction: its name, data and results.
pub(crate) struct PoolRun {
    pub name: String,
    pub data: PoolData,
    pub results: Results,
    pub dir: PathBuf,
}

/// Run the pool experiment `file` of `opts.experiments` into `opts.results/<name>` (resuming
/// finished cells), write its report to `out/<name>/`, and add the report's files to `files`.
pub(crate) fn run_pool_and_report(
    opts: &ReproduceOptions,
    file: &str,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<PoolRun> {
    let (exp, data) = prepare(&opts.experiments.join(file))?;
    let (dir, results) = run_and_report(opts, &exp, &data, out, files)?;
    let Data::Pool(data) = data else {
        anyhow::bail!(
            "{file}: not a pool experiment (world.kind is {})",
            exp.world.kind().as_str()
        );
    };
    Ok(PoolRun {
        name: exp.name,
        data,
        results,
        dir,
    })
}

/// Where reproductions read experiment files and trace sets and write results.
#[derive(Clone)]
pub struct ReproduceOptions {
    /// Folder of experiment files (`experiments/`).
    pub experiments: PathBuf,
    /// Folder of trace sets (`traces/`).
    pub traces: PathBuf,
    /// Folder of results (`results/`).
    pub results: PathBuf,
    /// Worker threads; default: all cores.
    pub threads: Option<usize>,
    /// Hears each experiment's progress and notes (the library never prints).
    pub progress: std::sync::Arc<dyn crate::experiment::Progress>,
    /// Seconds each timing measurement of a reproduction runs (D-TTTS's time per sampling step).
    pub timing_seconds: f64,
    /// A cell cache (`run --cache`): finished cells of any earlier run are reused, and the cells
    /// replayed are stored, so that a reproduction whose experiment grew (a new policy) replays
    /// only the new cells once its old results folder is removed.
    pub cache: Option<PathBuf>,
    /// With a cache: store only cells whose replay took at least this many seconds (`run
    /// --cache-min-ms`; default [`crate::experiment::cache::MIN_CELL_S`]). Which cells pass a
    /// threshold of time depends on the machine's load; 0 stores every cell.
    pub cache_min_s: Option<f64>,
    /// The Python interpreters library policies run in (`--python`, `--python-dehb`).
    pub interpreters: parallel_samplers::Interpreters,
}

impl ReproduceOptions {
    /// How a reproduction runs one of its experiments into `out`: these threads and this cache.
    pub(crate) fn run_options(&self, out: &Path) -> RunOptions {
        RunOptions {
            out: Some(out.to_path_buf()),
            threads: self.threads,
            cache: self.cache.clone(),
            cache_min_s: self.cache_min_s,
            ..Default::default()
        }
    }
}

impl Default for ReproduceOptions {
    fn default() -> Self {
        ReproduceOptions {
            experiments: PathBuf::from("experiments"),
            traces: PathBuf::from("traces"),
            results: PathBuf::from("results"),
            threads: None,
            progress: std::sync::Arc::new(crate::experiment::Silent),
            timing_seconds: 2.0,
            cache: None,
            cache_min_s: None,
            interpreters: parallel_samplers::Interpreters::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_means_and_ranks_rank_within_each_unit_with_shared_ties() {
        let per_unit: BTreeMap<&str, BTreeMap<&str, (f64, f64)>> = [
            ("a", [("x", (0.4, 2.0)), ("y", (0.5, 1.0))].into()),
            (
                "b",
                [("x", (0.4, 1.0)), ("y", (0.4, 1.0)), ("z", (0.1, 1.0))].into(),
            ),
        ]
        .into();
        let r = unit_means_and_ranks(&per_unit);
        // a: x 0.2 (1), y 0.5 (2); b: z 0.1 (1), x and y 0.4 (tied: 2.5 each).
        assert_eq!(r["x"], (vec![0.2, 0.4], 3.5));
        assert_eq!(r["y"], (vec![0.5, 0.4], 4.5));
        assert_eq!(r["z"], (vec![0.1], 1.0));
    }

    #[test]
    fn the_registry_names_each_reproduction_once_and_an_unknown_name_lists_them() {
        let mut names: Vec<&str> = PAPERS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PAPERS.len());
        assert_eq!(paper("shang").unwrap().name, "shang");
        let e = paper("nope").err().unwrap().to_string();
        assert!(
            e.contains("no reproduction 'nope'") && e.contains("mutant-ucb, asha, auto-weka"),
            "{e}"
        );
    }
}
