//! The results store: `runs.parquet`, `trajectories.parquet` and `experiment.lock.toml`.
//!
//! While an experiment runs, each finished batch of cells is written to `parts/` as a pair of
//! parquet files, each first to a temporary name and then renamed, trajectories before runs: a
//! part exists exactly when its `runs-*.parquet` does. Killing the process at any moment therefore
//! loses at most the batch in flight. At the end the parts are merged, sorted by cell, into the two
//! final files, so the output does not depend on batch boundaries, threads or resumes.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use polars::prelude::*;

use super::cell::{Cell, CellResult};
use super::spec::Experiment;
use crate::trace::TraceSet;

pub const RUNS: &str = "runs.parquet";
pub const TRAJECTORIES: &str = "trajectories.parquet";
pub const LOCK: &str = "experiment.lock.toml";
const PARTS: &str = "parts";

fn json_object<T: serde::Serialize>(names: &[String], values: &[T]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .zip(values)
        .map(|(n, v)| (n.clone(), serde_json::json!(v)))
        .collect();
    serde_json::Value::Object(map).to_string()
}

fn opt(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// One row per cell; the columns are the results contract (see README, "Results").
pub fn runs_frame(
    results: &[CellResult],
    cells: &[Cell],
    exp: &Experiment,
    ts: &TraceSet,
) -> Result<DataFrame> {
    let c = |r: &CellResult| &cells[r.index as usize];
    let task = |r: &CellResult| &ts.tasks[c(r).task];
    let pol = |r: &CellResult| &exp.policies[c(r).policy];
    let s = |f: &dyn Fn(&CellResult) -> String| -> Vec<String> { results.iter().map(f).collect() };
    let f = |f: &dyn Fn(&CellResult) -> f64| -> Vec<f64> { results.iter().map(f).collect() };
    let of = |f: &dyn Fn(&CellResult) -> f64| -> Vec<Option<f64>> {
        results.iter().map(|r| opt(f(r))).collect()
    };
    let u = |f: &dyn Fn(&CellResult) -> u64| -> Vec<u64> { results.iter().map(f).collect() };
    let cols = vec![
        Column::new("experiment".into(), s(&|_| exp.name.clone())),
        Column::new("cell".into(), u(&|r| r.index)),
        Column::new("dataset".into(), s(&|r| task(r).dataset.clone())),
        Column::new(
            "run".into(),
            results.iter().map(|r| task(r).run).collect::<Vec<i64>>(),
        ),
        Column::new("budget".into(), f(&|r| exp.world.budgets[c(r).budget])),
        Column::new(
            "budget_unit".into(),
            s(&|_| exp.world.unit.as_str().to_string()),
        ),
        Column::new("budget_abs".into(), f(&|r| r.budget_abs)),
        Column::new("slice_abs".into(), of(&|r| r.slice_abs)),
        Column::new(
            "policy_family".into(),
            s(&|r| pol(r).family.name.to_string()),
        ),
        Column::new("policy".into(), s(&|r| pol(r).id())),
        Column::new(
            "params".into(),
            s(&|r| pol(r).params_json_for(&task(r).dataset)),
        ),
        Column::new(
            "repetition".into(),
            results
                .iter()
                .map(|r| c(r).repetition)
                .collect::<Vec<u32>>(),
        ),
        Column::new("seed".into(), u(&|r| r.seed)),
        Column::new("best_score".into(), of(&|r| r.best_score)),
        Column::new("best_test_score".into(), of(&|r| r.best_test_score)),
        Column::new(
            "best_learner".into(),
            results
                .iter()
                .map(|r| r.best_arm.map(|a| ts.learners[a].clone()))
                .collect::<Vec<Option<String>>>(),
        ),
        Column::new("best_found_at".into(), of(&|r| r.best_found_at)),
        Column::new("pulls".into(), s(&|r| json_object(&ts.learners, &r.pulls))),
        Column::new(
            "time_s".into(),
            s(&|r| json_object(&ts.learners, &r.time_s)),
        ),
        Column::new("decisions".into(), u(&|r| r.decisions)),
        Column::new("budget_used".into(), f(&|r| r.used)),
        Column::new("overhead_s".into(), f(&|r| r.overhead_s)),
        Column::new("failures".into(), u(&|r| r.failures)),
        Column::new("exhausted_pulls".into(), u(&|r| r.exhausted_pulls)),
        Column::new("exhausted_budget".into(), f(&|r| r.exhausted_budget)),
        Column::new(
            "replay".into(),
            s(&|_| exp.world.kind().as_str().to_string()),
        ),
        Column::new(
            "overhead_model".into(),
            s(&|_| exp.world.overhead().describe()),
        ),
        Column::new("trace_set".into(), s(&|_| ts.manifest.name.clone())),
        Column::new(
            "trace_source".into(),
            s(&|_| ts.manifest.source.as_str().to_string()),
        ),
        Column::new(
            "direction".into(),
            s(&|_| ts.manifest.direction.as_str().to_string()),
        ),
    ];
    Ok(DataFrame::new_infer_height(cols)?)
}

/// Every decision of every cell, in order.
pub fn trajectories_frame(results: &[CellResult], ts: &TraceSet) -> Result<DataFrame> {
    let n: usize = results.iter().map(|r| r.steps.len()).sum();
    let mut cell = Vec::with_capacity(n);
    let mut step = Vec::with_capacity(n);
    let mut arm = Vec::with_capacity(n);
    let mut time = Vec::with_capacity(n);
    let mut inc = Vec::with_capacity(n);
    let mut reward = Vec::with_capacity(n);
    for r in results {
        for (i, s) in r.steps.iter().enumerate() {
            cell.push(r.index);
            step.push(i as u32 + 1);
            arm.push(ts.learners[s.arm as usize].as_str());
            time.push(s.time);
            inc.push(opt(s.incumbent));
            reward.push(opt(s.reward));
        }
    }
    Ok(DataFrame::new_infer_height(vec![
        Column::new("cell".into(), cell),
        Column::new("step".into(), step),
        Column::new("arm".into(), arm),
        Column::new("time".into(), time),
        Column::new("reward".into(), reward),
        Column::new("incumbent".into(), inc),
    ])?)
}

fn write_parquet_atomic(df: &mut DataFrame, path: &Path) -> Result<()> {
    let tmp = path.with_extension("parquet.tmp");
    {
        let file =
            File::create(&tmp).with_context(|| format!("{}: cannot create", tmp.display()))?;
        ParquetWriter::new(file)
            .with_compression(ParquetCompression::Zstd(None))
            .finish(df)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot write parquet", tmp.display()))?;
    }
    File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot publish", path.display()))?;
    Ok(())
}

pub fn read_parquet(path: &Path) -> Result<DataFrame> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    ParquetReader::new(file)
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as parquet", path.display()))
}

pub struct Store {
    pub dir: PathBuf,
    /// Held while the store is open: an exclusive lock on `.banditbench.lock`, so two runs
    /// cannot write one folder.
    _lock: File,
}

const FOLDER_LOCK: &str = ".banditbench.lock";

impl Store {
    pub fn open(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir.join(PARTS))
            .with_context(|| format!("{}: cannot create the results folder", dir.display()))?;
        let lock_path = dir.join(FOLDER_LOCK);
        let lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .with_context(|| format!("{}: cannot open", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                anyhow::bail!(
                    "{}: another banditbench run is writing this results folder ({}); wait for it to finish, or give this run another --out",
                    dir.display(),
                    if holder.trim().is_empty() {
                        "holder unknown".to_string()
                    } else {
                        holder.trim().to_string()
                    }
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("{}: cannot lock", lock_path.display()));
            }
        }
        {
            use std::io::Write as _;
            let mut f = &lock;
            f.set_len(0)?;
            let _ = write!(
                f,
                "pid {} on {}, started at unix time {}",
                std::process::id(),
                std::env::var("HOSTNAME")
                    .ok()
                    .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
                    .unwrap_or_else(|| "this machine".into())
                    .trim(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
            );
        }
        // Temporary files are what a kill left half-written: never published, safe to remove.
        for d in [dir.to_path_buf(), dir.join(PARTS)] {
            for e in std::fs::read_dir(&d)? {
                let p = e?.path();
                if p.extension().is_some_and(|x| x == "tmp") {
                    std::fs::remove_file(&p)?;
                }
            }
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    fn part_files(&self, prefix: &str) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let parts = self.dir.join(PARTS);
        if !parts.is_dir() {
            return Ok(out);
        }
        for e in std::fs::read_dir(&parts)? {
            let p = e?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with(prefix) && name.ends_with(".parquet") {
                out.push(p);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Cells already finished: in the final runs file or in a published part.
    pub fn finished(&self) -> Result<BTreeSet<u64>> {
        let mut done = BTreeSet::new();
        let mut files = self.part_files("runs-")?;
        let final_runs = self.dir.join(RUNS);
        if final_runs.is_file() {
            files.push(final_runs);
        }
        for p in files {
            let df = read_parquet(&p).with_context(|| {
                format!(
                    "{}: cannot be read, so this run cannot resume; if it is a part under parts/, delete it (its cells are run again, every other finished cell is kept)",
                    p.display()
                )
            })?;
            for v in df.column("cell")?.u64()?.iter().flatten() {
                done.insert(v);
            }
        }
        Ok(done)
    }

    /// The next free part number.
    fn next_part(&self) -> Result<u64> {
        let mut max = 0;
        for p in self.part_files("runs-")? {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if let Some(n) = stem
                .strip_prefix("runs-")
                .and_then(|n| n.parse::<u64>().ok())
            {
                max = max.max(n);
            }
        }
        Ok(max + 1)
    }

    /// Publish a batch: trajectories first, then runs (whose presence marks the part complete).
    pub fn write_part(&self, mut runs: DataFrame, mut traj: DataFrame) -> Result<()> {
        let n = self.next_part()?;
        let parts = self.dir.join(PARTS);
        write_parquet_atomic(&mut traj, &parts.join(format!("traj-{n:06}.parquet")))?;
        write_parquet_atomic(&mut runs, &parts.join(format!("runs-{n:06}.parquet")))?;
        Ok(())
    }

    /// Merge the final files and all published parts into the final files, sorted; remove parts.
    pub fn merge(&self) -> Result<()> {
        let run_parts = self.part_files("runs-")?;
        if run_parts.is_empty() {
            return Ok(());
        }
        // A trajectory part without its runs part was cut off by a kill: not published.
        let published: BTreeSet<String> = run_parts
            .iter()
            .filter_map(|p| {
                p.file_name()?
                    .to_str()?
                    .strip_prefix("runs-")
                    .map(String::from)
            })
            .collect();
        let traj_parts: Vec<PathBuf> = self
            .part_files("traj-")?
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("traj-"))
                    .is_some_and(|n| published.contains(n))
            })
            .collect();
        // A kill between publishing the final files and removing the parts leaves cells in both:
        // the merge keeps one copy of each cell (and of each (cell, step)), so it is idempotent.
        let sorted = SortMultipleOptions::default().with_maintain_order(true);
        let mut runs = concat_files(&run_parts, &self.dir.join(RUNS))?;
        runs = first_of_each(runs.sort(["cell"], sorted.clone())?, &["cell"])?;
        runs.rechunk_mut();
        let mut traj = concat_files(&traj_parts, &self.dir.join(TRAJECTORIES))?;
        traj = first_of_each(traj.sort(["cell", "step"], sorted)?, &["cell", "step"])?;
        traj.rechunk_mut();
        write_parquet_atomic(&mut traj, &self.dir.join(TRAJECTORIES))?;
        write_parquet_atomic(&mut runs, &self.dir.join(RUNS))?;
        for p in self
            .part_files("runs-")?
            .into_iter()
            .chain(self.part_files("traj-")?)
        {
            std::fs::remove_file(p)?;
        }
        Ok(())
    }
}

/// The first row of each run of equal `keys` in a frame sorted by them.
fn first_of_each(df: DataFrame, keys: &[&str]) -> Result<DataFrame> {
    if df.height() < 2 {
        return Ok(df);
    }
    let cols: Vec<Vec<u64>> = keys
        .iter()
        .map(|k| -> Result<Vec<u64>> {
            Ok(df
                .column(k)?
                .as_materialized_series()
                .cast(&DataType::UInt64)?
                .u64()?
                .iter()
                .map(|v| v.unwrap_or(u64::MAX))
                .collect())
        })
        .collect::<Result<_>>()?;
    let keep: BooleanChunked = (0..df.height())
        .map(|i| i == 0 || cols.iter().any(|c| c[i] != c[i - 1]))
        .collect();
    if keep.all() {
        return Ok(df);
    }
    Ok(df.filter(&keep)?)
}

fn concat_files(parts: &[PathBuf], existing: &Path) -> Result<DataFrame> {
    let mut files: Vec<PathBuf> = Vec::new();
    if existing.is_file() {
        files.push(existing.to_path_buf());
    }
    files.extend(parts.iter().cloned());
    let mut out: Option<DataFrame> = None;
    for p in &files {
        let df = read_parquet(p)?;
        match out.as_mut() {
            None => out = Some(df),
            Some(acc) => {
                acc.vstack_mut(&df)
                    .map_err(anyhow::Error::from)
                    .with_context(|| format!("{}: does not match the other parts", p.display()))?;
            }
        }
    }
    Ok(out.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("banditbench-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn frames(cells: &[u64]) -> (DataFrame, DataFrame) {
        let runs = DataFrame::new_infer_height(vec![
            Column::new("cell".into(), cells.to_vec()),
            Column::new(
                "score".into(),
                cells.iter().map(|&c| c as f64 / 10.0).collect::<Vec<_>>(),
            ),
        ])
        .unwrap();
        let (mut c, mut s) = (Vec::new(), Vec::new());
        for &cell in cells {
            for step in 1..=3u32 {
                c.push(cell);
                s.push(step);
            }
        }
        let traj = DataFrame::new_infer_height(vec![
            Column::new("cell".into(), c),
            Column::new("step".into(), s),
        ])
        .unwrap();
        (runs, traj)
    }

    #[test]
    fn a_merge_after_a_kill_in_the_merge_window_keeps_one_copy_of_each_cell() {
        let dir = scratch("merge");
        let store = Store::open(&dir).unwrap();
        let (r, t) = frames(&[2, 0]);
        store.write_part(r, t).unwrap();
        let (r, t) = frames(&[1]);
        store.write_part(r, t).unwrap();
        store.merge().unwrap();
        let runs = read_parquet(&dir.join(RUNS)).unwrap();
        assert_eq!(runs.height(), 3);
        // The state a kill between publishing the final files and deleting the parts leaves: the
        // final files hold cells 0-2 and the parts hold them again.
        let (r, t) = frames(&[0, 1, 2]);
        store.write_part(r, t).unwrap();
        store.merge().unwrap();
        let runs = read_parquet(&dir.join(RUNS)).unwrap();
        let traj = read_parquet(&dir.join(TRAJECTORIES)).unwrap();
        assert_eq!(runs.height(), 3);
        assert_eq!(traj.height(), 9);
        let cells: Vec<u64> = runs
            .column("cell")
            .unwrap()
            .u64()
            .unwrap()
            .iter()
            .flatten()
            .collect();
        assert_eq!(cells, [0, 1, 2]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_second_run_on_an_open_folder_is_refused_naming_the_holder() {
        let dir = scratch("lock");
        let first = Store::open(&dir).unwrap();
        let e = Store::open(&dir).err().unwrap().to_string();
        assert!(
            e.contains("another banditbench run is writing this results folder")
                && e.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(first);
        // Released when the first run ends.
        assert!(Store::open(&dir).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
