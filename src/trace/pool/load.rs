//! Loading a pool: its configurations, curves (one file or a folder of them), defaults and
//! neighbours, every rule checked with the file, row and rule named when one is broken.

use super::super::Status;
use super::*;
use crate::rng::fnv1a64;
use anyhow::{Context, Result, bail};
use polars::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub(super) use crate::files::read_parquet as read_parquet_file;

/// Only the columns `names` of a parquet file (an error names the file).
/// The tasks (dataset, run) of a curve file from its footer alone, when every row group's
/// statistics show one dataset and one run and no nulls (what pyarrow and polars write for a
/// file per task); `None` when they do not, or are missing (then the columns must be read).
fn tasks_from_statistics(path: &Path) -> Result<Option<BTreeSet<(String, i64)>>> {
    use polars_parquet::parquet::statistics::Statistics as S;
    let mut file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let meta = polars_parquet::parquet::read::read_metadata(&mut file)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as parquet", path.display()))?;
    let at = |name: &str| {
        meta.schema()
            .columns()
            .iter()
            .position(|c| c.path_in_schema.len() == 1 && c.path_in_schema[0].as_str() == name)
    };
    let (Some(di), Some(ri)) = (at("dataset"), at("run")) else {
        return Ok(None);
    };
    let mut tasks = BTreeSet::new();
    for g in &meta.row_groups {
        let stats = |i: usize| g.parquet_columns()[i].statistics(&meta.footer_buf);
        let dataset = match stats(di) {
            Some(Ok(S::Binary(b))) if b.null_count == Some(0) && b.min_value == b.max_value => {
                match b.min_value.map(String::from_utf8) {
                    Some(Ok(d)) => d,
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        let run = match stats(ri) {
            Some(Ok(S::Int32(r))) if r.null_count == Some(0) && r.min_value == r.max_value => {
                match r.min_value {
                    Some(v) => i64::from(v),
                    None => return Ok(None),
                }
            }
            Some(Ok(S::Int64(r))) if r.null_count == Some(0) && r.min_value == r.max_value => {
                match r.min_value {
                    Some(v) => v,
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        if g.num_rows() > 0 {
            tasks.insert((dataset, run));
        }
    }
    Ok(Some(tasks))
}

fn read_parquet_columns(path: &Path, names: &[&str]) -> Result<DataFrame> {
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    ParquetReader::new(file)
        .with_columns(Some(names.iter().map(|n| n.to_string()).collect()))
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| {
            format!(
                "{}: cannot read its columns {} as parquet",
                path.display(),
                names.join(", ")
            )
        })
}

/// A column cast to `want`, with an error naming the file and column.
pub(super) fn col(df: &DataFrame, path: &Path, name: &str, want: &DataType) -> Result<Series> {
    let c = df.column(name).map_err(|_| {
        anyhow::anyhow!(
            "{}: missing column '{name}' (see traces/README.md, pool format)",
            path.display()
        )
    })?;
    // A float column read as integers must hold whole numbers: a cast would truncate 1.5 to 1.
    if want.is_integer() && c.dtype().is_float() {
        let f = c.as_materialized_series().cast(&DataType::Float64)?;
        if let Some((i, x)) = f.f64()?.iter().enumerate().find_map(|(i, v)| {
            v.filter(|x| x.fract() != 0.0 || !x.is_finite())
                .map(|x| (i, x))
        }) {
            bail!(
                "{}: row {}, column '{name}': {x} is not a whole number",
                path.display(),
                i + 1
            );
        }
    }
    c.as_materialized_series().cast(want).map_err(|_| {
        anyhow::anyhow!(
            "{}: column '{name}' has type {}, expected {want}",
            path.display(),
            c.dtype()
        )
    })
}

/// The curve files: `curves.parquet`, or every `*.parquet` under `curves/`, sorted by name.
pub(super) fn curve_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let one = dir.join("curves.parquet");
    let folder = dir.join("curves");
    if one.is_file() && folder.is_dir() {
        bail!(
            "{}: both curves.parquet and curves/ are here; keep one",
            dir.display()
        );
    }
    if one.is_file() {
        return Ok(vec![one]);
    }
    let mut files = Vec::new();
    if folder.is_dir() {
        for e in std::fs::read_dir(&folder)? {
            let p = e?.path();
            if p.extension().is_some_and(|x| x == "parquet") {
                files.push(p);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        bail!(
            "{}: no curves.parquet and no parquet files under curves/",
            dir.display()
        );
    }
    Ok(files)
}

/// Load and validate a pool. `allow_incomplete` accepts a pool whose manifest says
/// `complete = false` (a recording in progress); a pool that claims to be complete and is not is
/// always an error.
pub fn load_pool(dir: &Path, allow_incomplete: bool) -> Result<Pool> {
    load_pool_selecting(dir, allow_incomplete, None)
}

/// Chooses, from every task of a pool (sorted by dataset, then run), the tasks to load.
pub type SelectTasks<'a> = &'a dyn Fn(&[(String, i64)]) -> BTreeSet<(String, i64)>;

/// [`load_pool`], loading only the tasks `select` keeps (all when `None`): the tasks of each
/// curve file are first found from its footer's statistics (or its `dataset` and `run` columns
/// alone when those do not tell), and only files holding a kept task are decoded, so the time grows with the tasks kept. Every file still enters the content hash,
/// and `Pool::all_tasks` lists every task. Rows of tasks not kept are not checked.
pub fn load_pool_selecting(
    dir: &Path,
    allow_incomplete: bool,
    select: Option<SelectTasks<'_>>,
) -> Result<Pool> {
    let manifest_path = dir.join("pool.toml");
    let manifest = read_pool_manifest(&manifest_path)?;
    if manifest.generator.is_some() {
        return generated_pool(dir, manifest, &manifest_path, select);
    }
    let cfg_path = dir.join("configs.parquet");
    let configs = read_configs(&cfg_path, &manifest)?;
    let index: HashMap<u32, usize> = configs.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    // Curves.
    let files = curve_files(dir)?;
    let (mut all_tasks, kept, needed) = select_files(&files, select)?;
    let mut hash = fnv1a64(&std::fs::read(&manifest_path)?);
    hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &std::fs::read(&cfg_path)?].concat());
    let rows = read_curve_rows(
        &files,
        &needed,
        kept.as_ref(),
        &manifest,
        &manifest_path,
        &index,
        configs.len(),
        &mut hash,
    )?;
    if kept.is_none() {
        all_tasks = rows.task_index.keys().cloned().collect();
    }
    let (tasks, missing) = assemble_tasks(rows, &manifest, &configs, dir)?;
    if tasks.is_empty() {
        bail!("{}: the curves hold no rows", dir.display());
    }
    if !manifest.complete && !allow_incomplete {
        bail!(
            "{}: the pool's manifest says complete = false (a recording in progress: {} tasks so far); pass --allow-incomplete to use it anyway",
            dir.display(),
            tasks.len()
        );
    }
    if missing > 0 {
        if manifest.complete {
            bail!(
                "{}: {missing} (task, configuration) curve(s) are missing or short, but the manifest says complete = true",
                dir.display()
            );
        }
        if !allow_incomplete {
            bail!(
                "{}: the pool is incomplete ({missing} curve(s) missing or short; complete = false in pool.toml, a recording in progress); pass --allow-incomplete to use it anyway",
                dir.display()
            );
        }
    }
    let neighbours = match manifest.neighbours {
        Neighbours::Grid => grid_neighbours(&manifest, &configs),
        Neighbours::Table => table_neighbours(dir, &index)?,
        Neighbours::None => vec![Vec::new(); configs.len()],
    };
    let mut space = grid_space(&manifest, &configs);
    let (mut configs, mut tasks, mut neighbours) = (configs, tasks, neighbours);
    let defaults = load_defaults(
        dir,
        &manifest,
        &mut configs,
        &mut tasks,
        &all_tasks,
        &mut space,
        &mut hash,
    )?;
    neighbours.resize(configs.len(), Vec::new());
    Ok(Pool {
        dir: dir.to_path_buf(),
        manifest,
        configs,
        tasks,
        neighbours,
        missing_curves: missing,
        all_tasks: all_tasks.into_iter().collect(),
        content_hash: format!("{hash:016x}"),
        space,
        defaults,
    })
}
/// A pool generated from its manifest's `[generator]` (`synthetic.rs`): the configurations, then
/// the curves of the tasks `select` keeps. Its content hash is the manifest's text's and this
/// build's generator version's.
fn generated_pool(
    dir: &Path,
    manifest: PoolManifest,
    manifest_path: &Path,
    select: Option<SelectTasks<'_>>,
) -> Result<Pool> {
    let g = manifest.generator.clone().expect("a generated pool");
    let all_tasks = synthetic::all_tasks(&g);
    let kept = select.map(|f| f(&all_tasks));
    let (configs, xs) = synthetic::configs(&g);
    let tasks: Vec<PoolTask> = all_tasks
        .iter()
        .filter(|t| kept.as_ref().is_none_or(|k| k.contains(*t)))
        .map(|(d, r)| synthetic::task(&g, &xs, manifest.units, d, *r))
        .collect();
    if tasks.is_empty() {
        bail!("{}: no task of the generated pool is kept", dir.display());
    }
    let hash = fnv1a64(
        &[
            std::fs::read(manifest_path)?.as_slice(),
            synthetic::GENERATOR_VERSION.as_bytes(),
        ]
        .concat(),
    );
    let space = grid_space(&manifest, &configs);
    let n = configs.len();
    Ok(Pool {
        dir: dir.to_path_buf(),
        defaults: vec![None; manifest.learners.len()],
        manifest,
        configs,
        tasks,
        neighbours: vec![Vec::new(); n],
        missing_curves: 0,
        all_tasks,
        content_hash: format!("{hash:016x}"),
        space,
    })
}

/// `configs.parquet`: every configuration, checked against the manifest (its learner, its
/// levels in range and unique per learner, a sampled learner's values within their ranges and
/// unique), sorted by `config_id`, each id once.
fn read_configs(cfg_path: &Path, manifest: &PoolManifest) -> Result<Vec<PoolConfig>> {
    let df = read_parquet_file(cfg_path)?;
    let ids = col(&df, cfg_path, "config_id", &DataType::Int64)?;
    let learners = col(&df, cfg_path, "learner", &DataType::String)?;
    let levels = col(&df, cfg_path, "levels", &DataType::String)?;
    let config = col(&df, cfg_path, "config", &DataType::String)?;
    let lidx: HashMap<&str, usize> = manifest
        .learners
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.as_str(), i))
        .collect();
    let mut configs = Vec::with_capacity(df.height());
    let mut seen_levels: HashMap<(usize, Vec<u16>), u32> = HashMap::new();
    let mut seen_configs: HashMap<(usize, String), u32> = HashMap::new();
    for i in 0..df.height() {
        let at = RowAt(cfg_path, i + 1);
        let Some(id) = ids
            .i64()?
            .get(i)
            .filter(|v| (0..=u32::MAX as i64).contains(v))
        else {
            bail!(
                "{at}: config_id must be a whole number from 0 to {}",
                u32::MAX
            );
        };
        let name = learners.str()?.get(i).unwrap_or("");
        let Some(&l) = lidx.get(name) else {
            bail!("{at}: learner '{name}' is not among the manifest's [[learners]]");
        };
        let learner = &manifest.learners[l];
        let dims: Vec<&PoolDim> = learner.dims.iter().filter(|d| d.has_levels()).collect();
        let lv: Vec<u16> = levels
            .str()?
            .get(i)
            .unwrap_or("")
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.trim().parse::<u16>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| anyhow::anyhow!("{at}: levels must be comma-separated whole numbers"))?;
        if lv.len() != dims.len() {
            bail!(
                "{at}: {} levels, but learner '{name}' has {} dimensions with levels{}",
                lv.len(),
                dims.len(),
                if learner.is_sampled() {
                    " (a numeric dimension has no level: its value is in `config`)"
                } else {
                    ""
                }
            );
        }
        let text = config.str()?.get(i).unwrap_or("{}").to_string();
        if learner.is_sampled() {
            check_numeric_values(learner, &text, &at)?;
            if let Some(other) = seen_configs.insert((l, text.clone()), id as u32) {
                bail!("{at}: configurations {other} and {id} have the same learner and config");
            }
        }
        for (k, (&v, d)) in lv.iter().zip(dims).enumerate() {
            if v as usize >= d.values.len() {
                bail!(
                    "{at}: level {v} of dimension {} ('{}') is out of range (it has {} values)",
                    k + 1,
                    d.name,
                    d.values.len()
                );
            }
        }
        if !learner.is_sampled()
            && let Some(other) = seen_levels.insert((l, lv.clone()), id as u32)
        {
            bail!("{at}: configurations {other} and {id} have the same learner and levels");
        }
        configs.push(PoolConfig {
            id: id as u32,
            learner: l,
            levels: lv,
            config: text,
        });
    }
    configs.sort_by_key(|c| c.id);
    for w in configs.windows(2) {
        if w[0].id == w[1].id {
            bail!(
                "{}: config_id {} appears twice",
                cfg_path.display(),
                w[0].id
            );
        }
    }
    Ok(configs)
}

/// Every task of the curve files, the tasks `select` keeps (None: all), and which files hold a
/// kept task (all without a selection: then every task is known only once the rows are read).
#[allow(clippy::type_complexity)]
fn select_files(
    files: &[PathBuf],
    select: Option<SelectTasks<'_>>,
) -> Result<(
    BTreeSet<(String, i64)>,
    Option<BTreeSet<(String, i64)>>,
    Vec<bool>,
)> {
    // With a selection: every task, the kept ones, and which files hold a kept task.
    let mut all_tasks: BTreeSet<(String, i64)> = BTreeSet::new();
    let mut kept: Option<BTreeSet<(String, i64)>> = None;
    let mut needed = vec![true; files.len()];
    if let Some(select) = select {
        let mut per_file = Vec::with_capacity(files.len());
        for f in files {
            // A file whose row groups each hold one task says so in its statistics; else its
            // two columns are read.
            let here = match tasks_from_statistics(f)? {
                Some(here) => here,
                None => {
                    let df = read_parquet_columns(f, &["dataset", "run"])?;
                    let ds = col(&df, f, "dataset", &DataType::String)?;
                    let run = col(&df, f, "run", &DataType::Int64)?;
                    let mut here: BTreeSet<(String, i64)> = BTreeSet::new();
                    let mut last: Option<(&str, i64)> = None;
                    for (d, r) in ds.str()?.iter().zip(run.i64()?.iter()) {
                        let (Some(d), Some(r)) = (d, r) else { continue };
                        if last != Some((d, r)) {
                            here.insert((d.to_string(), r));
                            last = Some((d, r));
                        }
                    }
                    here
                }
            };
            all_tasks.extend(here.iter().cloned());
            per_file.push(here);
        }
        let list: Vec<(String, i64)> = all_tasks.iter().cloned().collect();
        let k = select(&list);
        for (n, here) in needed.iter_mut().zip(&per_file) {
            *n = here.iter().any(|t| k.contains(t));
        }
        kept = Some(k);
    }
    Ok((all_tasks, kept, needed))
}

/// The curves' rows of the kept tasks, per task and configuration, unchecked for gaps (the
/// curves are built from them by `assemble_tasks`).
struct CurveRows {
    /// Per task (dataset, run): its index into `task_slots`.
    task_index: BTreeMap<(String, i64), usize>,
    /// Per task, per configuration: its rows.
    task_slots: Vec<Vec<Option<Vec<Unit>>>>,
    /// Format 1.1: the objectives' own values, row after row (`Unit`'s last field indexes it).
    extra: Vec<f32>,
    /// How many objectives have columns of their own.
    n_extra: usize,
}

/// Read the rows of every needed curve file (each file enters the content `hash`, needed or
/// not), checking each row: a known configuration, a unit in range, a known status, a finite
/// score when ok, a cost >= 0, and each objective's value finite or NaN.
#[allow(clippy::too_many_arguments)]
fn read_curve_rows(
    files: &[PathBuf],
    needed: &[bool],
    kept: Option<&BTreeSet<(String, i64)>>,
    manifest: &PoolManifest,
    manifest_path: &Path,
    index: &HashMap<u32, usize>,
    n_configs: usize,
    hash: &mut u64,
) -> Result<CurveRows> {
    // Format 1.1: the objectives' own columns, read into one buffer, row after row.
    let extra_names = manifest.extra_columns();
    let mut extra: Vec<f32> = Vec::new();
    // Per task (dataset, run): its index into `task_slots`, which holds its rows per
    // configuration.
    let mut task_index: BTreeMap<(String, i64), usize> = BTreeMap::new();
    let mut task_slots: Vec<Vec<Option<Vec<Unit>>>> = Vec::new();
    let mut last_task: Option<(String, i64, usize)> = None;
    let mut last_skipped: Option<(String, i64)> = None;
    for (f, &needed) in files.iter().zip(needed) {
        *hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &std::fs::read(f)?].concat());
        if !needed {
            continue;
        }
        let df = read_parquet_file(f)?;
        let ds = col(&df, f, "dataset", &DataType::String)?;
        let run = col(&df, f, "run", &DataType::Int64)?;
        let cid = col(&df, f, "config_id", &DataType::Int64)?;
        let unit = col(&df, f, "unit", &DataType::Int64)?;
        let score = col(&df, f, "score", &DataType::Float32)?;
        let test = col(&df, f, "test_score", &DataType::Float32)?;
        let cost = col(&df, f, "cost_s", &DataType::Float32)?;
        let status = col(&df, f, "status", &DataType::String)?;
        let (ds, run, cid, unit) = (ds.str()?, run.i64()?, cid.i64()?, unit.i64()?);
        let (score, test, cost, status) = (score.f32()?, test.f32()?, cost.f32()?, status.str()?);
        let objective_columns = objective_columns(&df, f, &extra_names, manifest_path)?;
        let objective_columns = objective_columns
            .iter()
            .map(|s| s.f32())
            .collect::<polars::prelude::PolarsResult<Vec<_>>>()?;
        for i in 0..df.height() {
            let at = RowAt(f, i + 1);
            let (Some(d), Some(r), Some(c), Some(u)) =
                (ds.get(i), run.get(i), cid.get(i), unit.get(i))
            else {
                bail!("{at}: dataset, run, config_id and unit are required");
            };
            if let Some(k) = kept {
                // Rows come grouped by task: decide once per run of rows of a task.
                if matches!(&last_skipped, Some((ld, lr)) if ld == d && *lr == r) {
                    continue;
                }
                if !matches!(&last_task, Some((ld, lr, _)) if ld == d && *lr == r)
                    && !k.contains(&(d.to_string(), r))
                {
                    last_skipped = Some((d.to_string(), r));
                    continue;
                }
            }
            let Some(&ci) = u32::try_from(c).ok().and_then(|c| index.get(&c)) else {
                bail!("{at}: config_id {c} is not in configs.parquet");
            };
            let (u, st, sc, cs) = checked_unit(
                &at,
                u,
                manifest.units,
                status.get(i),
                score.get(i),
                cost.get(i),
            )?;
            // Rows come grouped by task: look the task up only when it changes (no String per
            // row).
            let t = match &last_task {
                Some((ld, lr, t)) if ld == d && *lr == r => *t,
                _ => {
                    let t = *task_index.entry((d.to_string(), r)).or_insert_with(|| {
                        task_slots.push(vec![None; n_configs]);
                        task_slots.len() - 1
                    });
                    last_task = Some((d.to_string(), r, t));
                    t
                }
            };
            let row = if extra_names.is_empty() {
                u32::MAX
            } else {
                let row = (extra.len() / extra_names.len()) as u32;
                for (c, name) in objective_columns.iter().zip(&extra_names) {
                    // NaN (or null): not recorded, which makes the unit infeasible for a
                    // multi-objective analysis; an infinite value is an error.
                    let v = c.get(i).unwrap_or(f32::NAN);
                    if v.is_infinite() {
                        bail!(
                            "{at}: objective '{name}' is {v}; give a finite value, or leave it empty (NaN: infeasible)"
                        );
                    }
                    extra.push(if st == Status::Ok { v } else { f32::NAN });
                }
                row
            };
            let slots = &mut task_slots[t];
            slots[ci].get_or_insert_with(Vec::new).push((
                u,
                sc,
                test.get(i).unwrap_or(f32::NAN),
                cs,
                st,
                row,
            ));
        }
    }
    Ok(CurveRows {
        n_extra: extra_names.len(),
        task_index,
        task_slots,
        extra,
    })
}

/// The curves' columns of the objectives with columns of their own (format 1.1), by name.
fn objective_columns(
    df: &DataFrame,
    f: &Path,
    names: &[&str],
    manifest_path: &Path,
) -> Result<Vec<Series>> {
    names
        .iter()
        .map(|n| {
            col(df, f, n, &DataType::Float32).with_context(|| {
                format!(
                    "{}: [[objectives]] names '{n}', which the curves must hold as a column",
                    manifest_path.display()
                )
            })
        })
        .collect()
}

/// One curve row's unit, status, score and cost, checked: the unit in 1..=`units`, a known
/// status (`ok` when empty), a finite score when ok, a cost >= 0 (0 when empty).
fn checked_unit(
    at: &dyn std::fmt::Display,
    unit: i64,
    units: u32,
    status: Option<&str>,
    score: Option<f32>,
    cost: Option<f32>,
) -> Result<(u32, Status, f32, f32)> {
    if unit < 1 || unit > i64::from(units) {
        bail!("{at}: unit {unit} is outside 1..={units} (the manifest's units)");
    }
    let s = status.unwrap_or("ok");
    let st = Status::parse(s).ok_or_else(|| {
        anyhow::anyhow!("{at}: unknown status '{s}'; allowed: ok, failed, timeout")
    })?;
    let sc = score.unwrap_or(f32::NAN);
    if st == Status::Ok && !sc.is_finite() {
        bail!("{at}: an ok unit needs a finite score");
    }
    let cs = cost.unwrap_or(0.0);
    if !(cs.is_finite() && cs >= 0.0) {
        bail!("{at}: cost_s must be a number >= 0, found {cs}");
    }
    Ok((unit as u32, st, sc, cs))
}

/// Each task's curves from its rows (a configuration without rows gets an empty curve), and how
/// many curves are missing or short of `units` without ending in a failure; a complete pool
/// refuses such a curve.
fn assemble_tasks(
    rows: CurveRows,
    manifest: &PoolManifest,
    configs: &[PoolConfig],
    dir: &Path,
) -> Result<(Vec<PoolTask>, usize)> {
    let CurveRows {
        task_index,
        mut task_slots,
        extra,
        n_extra,
    } = rows;
    let mut tasks = Vec::new();
    let mut missing = 0usize;
    for ((dataset, run), t) in task_index {
        let slots = std::mem::take(&mut task_slots[t]);
        let mut curves = Vec::with_capacity(slots.len());
        for (ci, slot) in slots.into_iter().enumerate() {
            let Some(mut units) = slot else {
                missing += 1;
                curves.push(Curve::default());
                continue;
            };
            let at = format!(
                "{}: dataset {dataset}, run {run}, config_id {}",
                dir.display(),
                configs[ci].id
            );
            let curve = build_curve(&mut units, (&extra, n_extra), &at)?;
            let ended = curve.status.last().is_some_and(|s| *s != Status::Ok);
            if curve.len() < manifest.units as usize && !ended {
                missing += 1;
                if manifest.complete {
                    bail!(
                        "{at}: the curve has {} of {} units and does not end in a failure; the manifest says complete = true",
                        curve.len(),
                        manifest.units
                    );
                }
            }
            curves.push(curve);
        }
        tasks.push(PoolTask {
            dataset,
            run,
            curves,
        });
    }
    Ok((tasks, missing))
}

/// One recorded unit of a curve: unit, score, test score, cost, status, and its row of the
/// objectives' own values (`u32::MAX`: none).
pub(super) type Unit = (u32, f32, f32, f32, Status, u32);

/// A curve from its rows: units 1, 2, … without gaps, and nothing after a failed or timed-out
/// unit. `extra` holds the objectives' own values, `n` a row (format 1.1; `n` = 0 without).
/// `at` names the curve in errors.
pub(super) fn build_curve(
    units: &mut [Unit],
    (extra, n): (&[f32], usize),
    at: &dyn std::fmt::Display,
) -> Result<Curve> {
    units.sort_by_key(|u| u.0);
    let mut curve = Curve::default();
    for (k, &(u, s, t, c, st, row)) in units.iter().enumerate() {
        if u as usize != k + 1 {
            if u as usize == k {
                bail!("{at}: unit {u} appears twice");
            }
            bail!(
                "{at}: units must run 1, 2, 3, ... without gaps; unit {} is missing",
                k + 1
            );
        }
        if k > 0 && curve.status[k - 1] != Status::Ok {
            bail!(
                "{at}: unit {u} follows a {} unit; a failed or timed-out unit ends its curve",
                if curve.status[k - 1] == Status::Failed {
                    "failed"
                } else {
                    "timed-out"
                }
            );
        }
        curve.score.push(s);
        curve.test_score.push(t);
        curve.cost_s.push(c);
        curve.status.push(st);
        if n > 0 {
            let r = row as usize * n;
            curve.extra.extend_from_slice(&extra[r..r + n]);
        }
    }
    Ok(curve)
}

/// The units of each (learner, task) default curve, by indices.
type DefaultRows = BTreeMap<(usize, usize), Vec<Unit>>;

/// The rows of `defaults.parquet` (in `df`), each checked as a curve row is, by (learner, task),
/// with each learner's default configuration (one per learner); rows of tasks the selection did
/// not keep are skipped.
fn default_rows(
    path: &Path,
    df: &DataFrame,
    manifest: &PoolManifest,
    tasks: &[PoolTask],
    all_tasks: &BTreeSet<(String, i64)>,
) -> Result<(DefaultRows, Vec<Option<String>>)> {
    let ds = col(df, path, "dataset", &DataType::String)?;
    let run = col(df, path, "run", &DataType::Int64)?;
    let learner = col(df, path, "learner", &DataType::String)?;
    let config = col(df, path, "config", &DataType::String)?;
    let unit = col(df, path, "unit", &DataType::Int64)?;
    let score = col(df, path, "score", &DataType::Float32)?;
    let test = col(df, path, "test_score", &DataType::Float32)?;
    let cost = col(df, path, "cost_s", &DataType::Float32)?;
    let status = col(df, path, "status", &DataType::String)?;
    let (ds, run, learner, config, unit) = (
        ds.str()?,
        run.i64()?,
        learner.str()?,
        config.str()?,
        unit.i64()?,
    );
    let (score, test, cost, status) = (score.f32()?, test.f32()?, cost.f32()?, status.str()?);
    let task_of: HashMap<(&str, i64), usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| ((t.dataset.as_str(), t.run), i))
        .collect();
    let mut rows: DefaultRows = BTreeMap::new();
    let mut texts: Vec<Option<String>> = vec![None; manifest.learners.len()];
    for i in 0..df.height() {
        let at = RowAt(path, i + 1);
        let (Some(d), Some(r), Some(l), Some(c), Some(u)) = (
            ds.get(i),
            run.get(i),
            learner.get(i),
            config.get(i),
            unit.get(i),
        ) else {
            bail!("{at}: dataset, run, learner, config and unit are required");
        };
        let Some(li) = manifest.learners.iter().position(|x| x.name == l) else {
            bail!("{at}: learner '{l}' is not among the manifest's [[learners]]");
        };
        let Some(&t) = task_of.get(&(d, r)) else {
            if all_tasks.contains(&(d.to_string(), r)) {
                // A task the selection did not keep.
                continue;
            }
            bail!("{at}: dataset {d}, run {r} is not a task of the pool's curves");
        };
        match &texts[li] {
            Some(prev) if prev != c => bail!(
                "{at}: learner '{l}' has two default configurations ({prev} and {c}); one per learner"
            ),
            Some(_) => {}
            None => texts[li] = Some(c.to_string()),
        }
        // The same checks as a curve row's.
        let (u, st, sc, cs) = checked_unit(
            &at,
            u,
            manifest.units,
            status.get(i),
            score.get(i),
            cost.get(i),
        )?;
        rows.entry((li, t)).or_default().push((
            u,
            sc,
            test.get(i).unwrap_or(f32::NAN),
            cs,
            st,
            u32::MAX,
        ));
    }
    Ok((rows, texts))
}

/// Append each learner's default configuration after the grid (no levels: it may be off the
/// grid), encoded from its JSON; per learner, the default's index.
fn append_defaults(
    path: &Path,
    manifest: &PoolManifest,
    texts: &[Option<String>],
    configs: &mut Vec<PoolConfig>,
    space: &mut crate::space::Space,
) -> Result<Vec<Option<u32>>> {
    let mut defaults = vec![None; manifest.learners.len()];
    let next_id = configs.last().map_or(0, |c| c.id + 1);
    for (li, text) in texts.iter().enumerate() {
        let Some(text) = text else { continue };
        let dims: Vec<crate::space::SpaceDim> = space.learners[li].clone();
        let x = crate::space::encode_config(&dims, text).with_context(|| {
            format!(
                "{}: learner '{}'",
                path.display(),
                manifest.learners[li].name
            )
        })?;
        defaults[li] = Some(configs.len() as u32);
        configs.push(PoolConfig {
            id: next_id + li as u32,
            learner: li,
            levels: Vec::new(),
            config: text.clone(),
        });
        space.push(li, &x);
    }
    Ok(defaults)
}

/// Each learner's default configuration, when `defaults.parquet` lies beside the pool (columns
/// dataset, run, learner, config, unit, score, test_score, cost_s, status; written by
/// `scripts/record/record_grid.py --defaults`): one configuration per learner, appended after the
/// grid with no levels (defaults may be off the grid: no neighbours, encoded from its JSON), and
/// its curve on every task that records it. Returns, per learner, the default's index.
pub(super) fn load_defaults(
    dir: &Path,
    manifest: &PoolManifest,
    configs: &mut Vec<PoolConfig>,
    tasks: &mut [PoolTask],
    all_tasks: &BTreeSet<(String, i64)>,
    space: &mut crate::space::Space,
    hash: &mut u64,
) -> Result<Vec<Option<u32>>> {
    let path = dir.join("defaults.parquet");
    if !path.is_file() {
        return Ok(vec![None; manifest.learners.len()]);
    }
    // Objectives read from the score and cost_s are in every default's curve; a column of its
    // own is not (defaults.parquet has the curves' fixed columns only).
    if !manifest.extra_columns().is_empty() {
        bail!(
            "{}: default configurations beside objectives in columns of their own ({}) are not read yet (defaults.parquet has no such columns); remove it, or read the objectives from score and cost_s",
            path.display(),
            manifest.extra_columns().join(", ")
        );
    }
    *hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &std::fs::read(&path)?].concat());
    let df = read_parquet_file(&path)?;
    let (rows, texts) = default_rows(&path, &df, manifest, tasks, all_tasks)?;
    let defaults = append_defaults(&path, manifest, &texts, configs, space)?;
    for t in tasks.iter_mut() {
        t.curves.resize(configs.len(), Curve::default());
    }
    for ((li, t), mut units) in rows {
        let at = format!(
            "{}: dataset {}, run {}, learner {}",
            path.display(),
            tasks[t].dataset,
            tasks[t].run,
            manifest.learners[li].name
        );
        let c = defaults[li].expect("set above") as usize;
        tasks[t].curves[c] = build_curve(&mut units, (&[], 0), &at)?;
    }
    Ok(defaults)
}

pub(super) fn table_neighbours(dir: &Path, index: &HashMap<u32, usize>) -> Result<Vec<Vec<u32>>> {
    let path = dir.join("neighbours.parquet");
    let df = read_parquet_file(&path)?;
    let a = col(&df, &path, "config_id", &DataType::Int64)?;
    let b = col(&df, &path, "neighbour_id", &DataType::Int64)?;
    let mut out = vec![BTreeSet::new(); index.len()];
    for i in 0..df.height() {
        let look = |v: Option<i64>| {
            v.and_then(|v| u32::try_from(v).ok())
                .and_then(|v| index.get(&v).copied())
        };
        let (Some(x), Some(y)) = (look(a.i64()?.get(i)), look(b.i64()?.get(i))) else {
            bail!(
                "{}: row {}: config_id and neighbour_id must name configurations in configs.parquet",
                path.display(),
                i + 1
            );
        };
        out[x].insert(y as u32);
    }
    Ok(out.into_iter().map(|s| s.into_iter().collect()).collect())
}

/// A sampled learner's configuration: every numeric dimension's value is a number within its
/// range (a whole number where `int`), in the `config` JSON.
fn check_numeric_values(learner: &PoolLearner, config: &str, at: &RowAt<'_>) -> Result<()> {
    let v: serde_json::Value = serde_json::from_str(config)
        .map_err(|e| anyhow::anyhow!("{at}: config '{config}' is not JSON ({e})"))?;
    for d in &learner.dims {
        let DimKind::Numeric(r) = d.kind else {
            continue;
        };
        let Some(x) = v.get(&d.name).and_then(serde_json::Value::as_f64) else {
            bail!(
                "{at}: config has no number '{}'; learner '{}' samples it from [{}, {}], so each configuration's config JSON holds its value",
                d.name,
                learner.name,
                r.low,
                r.high
            );
        };
        if !(r.low..=r.high).contains(&x) || (r.int && x.fract() != 0.0) {
            bail!(
                "{at}: '{}' = {x} is outside the range [{}, {}] pool.toml gives it{}",
                d.name,
                r.low,
                r.high,
                if r.int { " (whole numbers)" } else { "" }
            );
        }
    }
    Ok(())
}

/// "FILE: row N" for messages, formatted only when a message is made (a pool has millions of
/// rows).
struct RowAt<'a>(&'a Path, usize);

impl std::fmt::Display for RowAt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: row {}", self.0.display(), self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a file's (dataset, run) pairs from its columns, as the loader does without
    /// statistics.
    fn tasks_from_columns(f: &Path) -> BTreeSet<(String, i64)> {
        let df = read_parquet_columns(f, &["dataset", "run"]).unwrap();
        let ds = col(&df, f, "dataset", &DataType::String).unwrap();
        let run = col(&df, f, "run", &DataType::Int64).unwrap();
        ds.str()
            .unwrap()
            .iter()
            .zip(run.i64().unwrap().iter())
            .filter_map(|(d, r)| Some((d?.to_string(), r?)))
            .collect()
    }

    #[test]
    fn default_rows_are_checked_as_curve_rows_and_kept_per_learner_and_task() {
        let pool = crate::replay::pool::tests::hand_pool(2, 3, |_| vec![0.5; 3]);
        let all: BTreeSet<(String, i64)> =
            [("hand".to_string(), 0), ("other".to_string(), 0)].into();
        let path = Path::new("defaults.parquet");
        let frame = |learner: &str, config: [&str; 3], dataset: &str, cost: f32| {
            df!(
                "dataset" => ["hand", "hand", dataset],
                "run" => [0i64, 0, 0],
                "learner" => ["m", "m", learner],
                "config" => config,
                "unit" => [1i64, 2, 3],
                "score" => [0.5f32, 0.6, 0.7],
                "test_score" => [0.4f32, 0.5, 0.6],
                "cost_s" => [1.0f32, 1.0, cost],
                "status" => ["ok", "ok", "ok"],
            )
            .unwrap()
        };
        let c = "{\"x\": 1}";
        let rows = |df: &DataFrame| default_rows(path, df, &pool.manifest, &pool.tasks, &all);
        let (r, texts) = rows(&frame("m", [c, c, c], "hand", 1.0)).unwrap();
        assert_eq!(texts, [Some(c.to_string())]);
        assert_eq!(
            r[&(0, 0)].iter().map(|u| u.0).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        // A task the selection did not keep is skipped.
        let (r, _) = rows(&frame("m", [c, c, c], "other", 1.0)).unwrap();
        assert_eq!(r[&(0, 0)].len(), 2);
        for (df, want) in [
            (
                frame("m", [c, c, c], "hand", -1.0),
                "defaults.parquet: row 3: cost_s must be a number >= 0, found -1",
            ),
            (
                frame("z", [c, c, c], "hand", 1.0),
                "defaults.parquet: row 3: learner 'z' is not among the manifest's [[learners]]",
            ),
            (
                frame("m", [c, c, "{}"], "hand", 1.0),
                "defaults.parquet: row 3: learner 'm' has two default configurations",
            ),
            (
                frame("m", [c, c, c], "nowhere", 1.0),
                "defaults.parquet: row 3: dataset nowhere, run 0 is not a task of the pool's curves",
            ),
        ] {
            let e = rows(&df).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
    }

    #[test]
    fn a_curve_rows_unit_status_score_and_cost_are_checked() {
        let ok = checked_unit(&"r", 2, 3, None, Some(0.5), None).unwrap();
        assert_eq!(ok, (2, Status::Ok, 0.5, 0.0));
        // A failed unit needs no score.
        let failed = checked_unit(&"r", 3, 3, Some("failed"), None, Some(1.0)).unwrap();
        assert_eq!((failed.0, failed.1, failed.3), (3, Status::Failed, 1.0));
        for (unit, status, score, cost, want) in [
            (0, None, Some(0.5), None, "r: unit 0 is outside 1..=3"),
            (4, None, Some(0.5), None, "r: unit 4 is outside 1..=3"),
            (1, Some("done"), Some(0.5), None, "r: unknown status 'done'"),
            (
                1,
                None,
                Some(f32::NAN),
                None,
                "r: an ok unit needs a finite score",
            ),
            (
                1,
                None,
                Some(0.5),
                Some(-1.0),
                "r: cost_s must be a number >= 0, found -1",
            ),
        ] {
            let e = checked_unit(&"r", unit, 3, status, score, cost).unwrap_err();
            assert!(e.to_string().starts_with(want), "{e}");
        }
    }

    #[test]
    fn a_curve_files_tasks_come_from_its_statistics_as_from_its_columns() {
        // Every curve file of the bundled pools (written by pyarrow): one task a file, known
        // from the footer without decoding a row.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
        let mut checked = 0;
        for pool in ["sklearn-grid", "hpobench-mlp", "nasbench201", "fcnet"] {
            for f in curve_files(&root.join(pool)).unwrap() {
                let stats = tasks_from_statistics(&f).unwrap();
                assert_eq!(stats, Some(tasks_from_columns(&f)), "{}", f.display());
                checked += 1;
            }
        }
        assert!(checked > 72, "{checked} files");
        // A file whose row group mixes tasks: the statistics cannot tell, the columns are read.
        let path = std::env::temp_dir().join(format!("bb-mixed-{}.parquet", std::process::id()));
        let mut df = df!("dataset" => ["a", "b"], "run" => [0i64, 0]).unwrap();
        ParquetWriter::new(std::fs::File::create(&path).unwrap())
            .finish(&mut df)
            .unwrap();
        assert_eq!(tasks_from_statistics(&path).unwrap(), None);
        let _ = std::fs::remove_file(&path);
    }
}
