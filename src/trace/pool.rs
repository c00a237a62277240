//! Configuration pools, format `banditbench-pool/1` (the contract is in `traces/README.md`).
//!
//! A pool is a folder with
//! - `pool.toml`: format, name, description, metric, direction, `units` (fidelity units per full
//!   curve), `neighbours` (`"grid"`, or `"table"` with `neighbours.parquet`), `complete`, one
//!   `[[learners]]` table per learner with its `[[learners.dims]]` (name, kind = ordinal |
//!   categorical, values), and `[provenance]`;
//! - `configs.parquet`: one row per configuration: `config_id` (unique, ≥ 0), `learner`, `levels`
//!   (comma-separated level indices, one per dimension of its learner), `config` (JSON);
//! - `curves.parquet` or a folder `curves/` of parquet files: one row per (dataset, run,
//!   configuration, unit) with `score`, `test_score`, `cost_s` and `status`.
//!
//! Loading checks every rule and names the file, row and rule when one is broken: unique keys,
//! units 1, 2, … without gaps, every configuration referenced exists, a failed or timed-out unit
//! ends its curve, and every (dataset, run) holds a curve for every configuration (unless the
//! manifest says `complete = false` and the caller allows it).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::Status;
use super::manifest::Direction;
use crate::rng::fnv1a64;

pub const POOL_FORMAT_V1: &str = "banditbench-pool/1";

/// How a dimension's levels relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimKind {
    /// Levels are ordered: a neighbour is one level up or down.
    Ordinal,
    /// Levels are unordered: a neighbour is any other level.
    Categorical,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PoolDim {
    pub name: String,
    pub kind: DimKind,
    pub values: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PoolLearner {
    pub name: String,
    /// What one fidelity unit is ("8 boosting iterations").
    pub unit: String,
    pub dims: Vec<PoolDim>,
}

/// The neighbour rule of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbours {
    /// Grid neighbours: one ordinal step, or another level of a categorical dimension.
    Grid,
    /// An explicit table, `neighbours.parquet` (config_id, neighbour_id).
    Table,
}

#[derive(Clone, Debug)]
pub struct PoolManifest {
    pub name: String,
    pub description: String,
    pub metric: String,
    pub direction: Direction,
    pub units: u32,
    pub neighbours: Neighbours,
    pub complete: bool,
    pub learners: Vec<PoolLearner>,
    pub provenance: toml::Table,
}

/// One configuration of the pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolConfig {
    pub id: u32,
    /// Index into the manifest's learners.
    pub learner: usize,
    pub levels: Vec<u16>,
    /// The hyper-parameters as JSON.
    pub config: String,
}

/// One configuration's learning curve on one task: unit u (1-based) at index u - 1. Shorter than
/// `units` when a unit failed (the last entry) or the pool is incomplete.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    pub score: Vec<f32>,
    pub test_score: Vec<f32>,
    pub cost_s: Vec<f32>,
    pub status: Vec<Status>,
}

impl Curve {
    pub fn len(&self) -> usize {
        self.score.len()
    }

    pub fn is_empty(&self) -> bool {
        self.score.is_empty()
    }

    /// Recorded cost of the units 1..=n.
    pub fn cost_to(&self, n: usize) -> f64 {
        self.cost_s[..n.min(self.len())]
            .iter()
            .map(|&c| f64::from(c))
            .sum()
    }
}

/// One (dataset, run) of the pool: a curve per configuration, in `Pool::configs` order.
#[derive(Clone, Debug)]
pub struct PoolTask {
    pub dataset: String,
    pub run: i64,
    pub curves: Vec<Curve>,
}

#[derive(Clone, Debug)]
pub struct Pool {
    pub dir: PathBuf,
    pub manifest: PoolManifest,
    /// Sorted by config_id.
    pub configs: Vec<PoolConfig>,
    /// Sorted by (dataset, run).
    pub tasks: Vec<PoolTask>,
    /// Per configuration (index into `configs`), its neighbours' indices, sorted.
    pub neighbours: Vec<Vec<u32>>,
    /// Configurations missing from some task (0 for a complete pool).
    pub missing_curves: usize,
    pub content_hash: String,
    /// Every configuration encoded for model-based optimisers (TPE, SMAC-style).
    pub space: super::space::Space,
    /// Per learner: its default configuration (index into `configs`), when the pool records one.
    /// A default is never drawn at random; policies ask for it by name (Ex-Def).
    pub defaults: Vec<Option<u32>>,
}

impl Pool {
    /// Learners with a recorded default configuration.
    pub fn n_defaults(&self) -> usize {
        self.defaults.iter().flatten().count()
    }

    /// "2500 configurations", with " (+ 4 learners' defaults)" when the pool records them.
    pub fn configurations_text(&self) -> String {
        let d = self.n_defaults();
        if d == 0 {
            format!("{} configurations", self.configs.len())
        } else {
            format!(
                "{} configurations (+ {d} learners' defaults)",
                self.configs.len() - d
            )
        }
    }

    pub fn n_units_recorded(&self) -> usize {
        self.tasks
            .iter()
            .flat_map(|t| &t.curves)
            .map(Curve::len)
            .sum()
    }
}

/// Is `dir` a configuration pool (it has a `pool.toml`)?
pub fn is_pool(dir: &Path) -> bool {
    dir.join("pool.toml").is_file()
}

fn str_key(t: &toml::Table, key: &str, at: &str) -> Result<String> {
    match t.get(key) {
        Some(toml::Value::String(s)) => Ok(s.clone()),
        Some(v) => bail!("{at}: key '{key}' must be a string, found {}", v.type_str()),
        None => bail!("{at}: missing key '{key}'"),
    }
}

pub fn read_pool_manifest(path: &Path) -> Result<PoolManifest> {
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{at}: cannot read the pool manifest"))?;
    let t: toml::Table = anyhow::Context::with_context(text.parse::<toml::Table>(), || {
        format!("{at}: not valid TOML")
    })?;
    const KEYS: [&str; 10] = [
        "format",
        "name",
        "description",
        "metric",
        "direction",
        "units",
        "neighbours",
        "complete",
        "learners",
        "provenance",
    ];
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            bail!(
                "{at}: unknown key '{k}'; a pool manifest has the keys {}",
                KEYS.join(", ")
            );
        }
    }
    let format = str_key(&t, "format", &at)?;
    if format != POOL_FORMAT_V1 {
        bail!("{at}: unknown format '{format}'; this program reads '{POOL_FORMAT_V1}'");
    }
    let direction = match str_key(&t, "direction", &at)?.as_str() {
        "maximize" => Direction::Maximize,
        "minimize" => Direction::Minimize,
        o => bail!("{at}: key 'direction' is '{o}'; allowed: maximize, minimize"),
    };
    let units = match t.get("units") {
        Some(&toml::Value::Integer(u)) if (1..=100_000).contains(&u) => u as u32,
        Some(v) => bail!("{at}: key 'units' is {v}; it must be a whole number from 1 to 100000"),
        None => bail!("{at}: missing key 'units' (fidelity units in a full curve)"),
    };
    let neighbours = match str_key(&t, "neighbours", &at)?.as_str() {
        "grid" => Neighbours::Grid,
        "table" => Neighbours::Table,
        o => bail!("{at}: key 'neighbours' is '{o}'; allowed: grid, table"),
    };
    let complete = match t.get("complete") {
        Some(&toml::Value::Boolean(b)) => b,
        None => true,
        Some(v) => bail!("{at}: key 'complete' must be true or false, found {v}"),
    };
    let Some(toml::Value::Array(ls)) = t.get("learners") else {
        bail!("{at}: missing [[learners]] (one table per learner, with its [[learners.dims]])");
    };
    let mut learners = Vec::new();
    for (i, l) in ls.iter().enumerate() {
        let here = format!("{at}: [[learners]] entry {}", i + 1);
        let Some(l) = l.as_table() else {
            bail!("{here}: not a table");
        };
        let name = str_key(l, "name", &here)?;
        let unit = str_key(l, "unit", &here).unwrap_or_default();
        let mut dims = Vec::new();
        for (j, d) in l
            .get("dims")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .enumerate()
        {
            let here = format!("{here} ('{name}'), dims entry {}", j + 1);
            let Some(d) = d.as_table() else {
                bail!("{here}: not a table");
            };
            let kind = match str_key(d, "kind", &here)?.as_str() {
                "ordinal" => DimKind::Ordinal,
                "categorical" => DimKind::Categorical,
                o => bail!("{here}: kind '{o}'; allowed: ordinal, categorical"),
            };
            let values: Vec<String> = match d.get("values") {
                Some(toml::Value::Array(v)) if !v.is_empty() => v
                    .iter()
                    .map(|x| {
                        x.as_str()
                            .map(String::from)
                            .unwrap_or_else(|| x.to_string())
                    })
                    .collect(),
                _ => bail!("{here}: 'values' must be a non-empty list"),
            };
            if values.len() > u16::MAX as usize {
                bail!("{here}: more than {} values", u16::MAX);
            }
            dims.push(PoolDim {
                name: str_key(d, "name", &here)?,
                kind,
                values,
            });
        }
        if learners.iter().any(|x: &PoolLearner| x.name == name) {
            bail!("{here}: learner '{name}' is listed twice");
        }
        learners.push(PoolLearner { name, unit, dims });
    }
    let provenance = match t.get("provenance") {
        Some(toml::Value::Table(p)) => p.clone(),
        _ => bail!("{at}: missing table [provenance] (with at least source = recorded | imported)"),
    };
    Ok(PoolManifest {
        name: str_key(&t, "name", &at)?,
        description: str_key(&t, "description", &at)?,
        metric: str_key(&t, "metric", &at)?,
        direction,
        units,
        neighbours,
        complete,
        learners,
        provenance,
    })
}

fn read_parquet_file(path: &Path) -> Result<DataFrame> {
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    ParquetReader::new(file)
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as parquet", path.display()))
}

/// A column cast to `want`, with an error naming the file and column.
fn col(df: &DataFrame, path: &Path, name: &str, want: &DataType) -> Result<Series> {
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
fn curve_files(dir: &Path) -> Result<Vec<PathBuf>> {
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
    let manifest_path = dir.join("pool.toml");
    let manifest = read_pool_manifest(&manifest_path)?;
    let cfg_path = dir.join("configs.parquet");
    let df = read_parquet_file(&cfg_path)?;
    let ids = col(&df, &cfg_path, "config_id", &DataType::Int64)?;
    let learners = col(&df, &cfg_path, "learner", &DataType::String)?;
    let levels = col(&df, &cfg_path, "levels", &DataType::String)?;
    let config = col(&df, &cfg_path, "config", &DataType::String)?;
    let lidx: HashMap<&str, usize> = manifest
        .learners
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.as_str(), i))
        .collect();
    let mut configs = Vec::with_capacity(df.height());
    let mut seen_levels: HashMap<(usize, Vec<u16>), u32> = HashMap::new();
    for i in 0..df.height() {
        let at = format!("{}: row {}", cfg_path.display(), i + 1);
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
        let dims = &manifest.learners[l].dims;
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
                "{at}: {} levels, but learner '{name}' has {} dimensions",
                lv.len(),
                dims.len()
            );
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
        if let Some(other) = seen_levels.insert((l, lv.clone()), id as u32) {
            bail!("{at}: configurations {other} and {id} have the same learner and levels");
        }
        configs.push(PoolConfig {
            id: id as u32,
            learner: l,
            levels: lv,
            config: config.str()?.get(i).unwrap_or("{}").to_string(),
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
    let index: HashMap<u32, usize> = configs.iter().enumerate().map(|(i, c)| (c.id, i)).collect();

    // Curves.
    let files = curve_files(dir)?;
    // (unit, score, test score, cost, status) rows of each configuration of each task.
    type Units = Vec<(u32, f32, f32, f32, Status)>;
    let mut by_task: BTreeMap<(String, i64), Vec<Option<Units>>> = BTreeMap::new();
    let mut hash = fnv1a64(&std::fs::read(&manifest_path)?);
    hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &std::fs::read(&cfg_path)?].concat());
    for f in &files {
        hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &std::fs::read(f)?].concat());
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
        for i in 0..df.height() {
            let at = format!("{}: row {}", f.display(), i + 1);
            let (Some(d), Some(r), Some(c), Some(u)) =
                (ds.get(i), run.get(i), cid.get(i), unit.get(i))
            else {
                bail!("{at}: dataset, run, config_id and unit are required");
            };
            let Some(&ci) = u32::try_from(c).ok().and_then(|c| index.get(&c)) else {
                bail!("{at}: config_id {c} is not in configs.parquet");
            };
            if u < 1 || u > i64::from(manifest.units) {
                bail!(
                    "{at}: unit {u} is outside 1..={} (the manifest's units)",
                    manifest.units
                );
            }
            let s = status.get(i).unwrap_or("ok");
            let st = Status::parse(s).ok_or_else(|| {
                anyhow::anyhow!("{at}: unknown status '{s}'; allowed: ok, failed, timeout")
            })?;
            let sc = score.get(i).unwrap_or(f32::NAN);
            if st == Status::Ok && !sc.is_finite() {
                bail!("{at}: an ok unit needs a finite score");
            }
            let cs = cost.get(i).unwrap_or(0.0);
            if !(cs.is_finite() && cs >= 0.0) {
                bail!("{at}: cost_s must be a number >= 0, found {cs}");
            }
            let slots = by_task
                .entry((d.to_string(), r))
                .or_insert_with(|| vec![None; configs.len()]);
            slots[ci].get_or_insert_with(Vec::new).push((
                u as u32,
                sc,
                test.get(i).unwrap_or(f32::NAN),
                cs,
                st,
            ));
        }
    }
    let mut tasks = Vec::new();
    let mut missing = 0usize;
    for ((dataset, run), slots) in by_task {
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
            let curve = build_curve(&mut units, &at)?;
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
    };
    let mut space = grid_space(&manifest, &configs);
    let (mut configs, mut tasks, mut neighbours) = (configs, tasks, neighbours);
    let defaults = load_defaults(
        dir,
        &manifest,
        &mut configs,
        &mut tasks,
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
        content_hash: format!("{hash:016x}"),
        space,
        defaults,
    })
}

/// The encoded space of a grid pool: ordinal levels k / (n − 1), categorical level indices.
pub fn grid_space(m: &PoolManifest, configs: &[PoolConfig]) -> super::space::Space {
    use super::space::{Scale, Space, SpaceDim};
    let dims: Vec<Vec<SpaceDim>> = m
        .learners
        .iter()
        .map(|l| {
            l.dims
                .iter()
                .map(|d| SpaceDim {
                    name: d.name.clone(),
                    scale: match d.kind {
                        DimKind::Ordinal => Scale::Ordinal(d.values.len() as u16),
                        DimKind::Categorical => Scale::Categorical(d.values.len() as u16),
                    },
                    choices: d.values.clone(),
                })
                .collect()
        })
        .collect();
    let mut space = Space::new(dims);
    for c in configs {
        if c.levels.len() != m.learners[c.learner].dims.len() {
            // Off the grid (a learner's default): encoded from its JSON.
            let x = super::space::encode_config(&space.learners[c.learner], &c.config)
                .unwrap_or_else(|_| vec![f32::NAN; space.learners[c.learner].len()]);
            space.push(c.learner, &x);
            continue;
        }
        let x: Vec<f32> = c
            .levels
            .iter()
            .zip(&m.learners[c.learner].dims)
            .map(|(&k, d)| match d.kind {
                DimKind::Categorical => f32::from(k),
                DimKind::Ordinal if d.values.len() > 1 => {
                    f32::from(k) / (d.values.len() - 1) as f32
                }
                DimKind::Ordinal => 0.0,
            })
            .collect();
        space.push(c.learner, &x);
    }
    space
}

/// A curve from its (unit, score, test score, cost, status) rows: units 1, 2, … without gaps, and
/// nothing after a failed or timed-out unit. `at` names the curve in errors.
fn build_curve(units: &mut [(u32, f32, f32, f32, Status)], at: &str) -> Result<Curve> {
    units.sort_by_key(|u| u.0);
    let mut curve = Curve::default();
    for (k, &(u, s, t, c, st)) in units.iter().enumerate() {
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
    }
    Ok(curve)
}

/// Each learner's default configuration, when `defaults.parquet` lies beside the pool (columns
/// dataset, run, learner, config, unit, score, test_score, cost_s, status; written by
/// `scripts/record/record_grid.py --defaults`): one configuration per learner, appended after the
/// grid with no levels (defaults may be off the grid: no neighbours, encoded from its JSON), and
/// its curve on every task that records it. Returns, per learner, the default's index.
fn load_defaults(
    dir: &Path,
    manifest: &PoolManifest,
    configs: &mut Vec<PoolConfig>,
    tasks: &mut [PoolTask],
    space: &mut super::space::Space,
    hash: &mut u64,
) -> Result<Vec<Option<u32>>> {
    let mut defaults = vec![None; manifest.learners.len()];
    let path = dir.join("defaults.parquet");
    if !path.is_file() {
        return Ok(defaults);
    }
    *hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &std::fs::read(&path)?].concat());
    let df = read_parquet_file(&path)?;
    let ds = col(&df, &path, "dataset", &DataType::String)?;
    let run = col(&df, &path, "run", &DataType::Int64)?;
    let learner = col(&df, &path, "learner", &DataType::String)?;
    let config = col(&df, &path, "config", &DataType::String)?;
    let unit = col(&df, &path, "unit", &DataType::Int64)?;
    let score = col(&df, &path, "score", &DataType::Float32)?;
    let test = col(&df, &path, "test_score", &DataType::Float32)?;
    let cost = col(&df, &path, "cost_s", &DataType::Float32)?;
    let status = col(&df, &path, "status", &DataType::String)?;
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
    type Units = Vec<(u32, f32, f32, f32, Status)>;
    let mut rows: BTreeMap<(usize, usize), Units> = BTreeMap::new();
    let mut texts: Vec<Option<String>> = vec![None; manifest.learners.len()];
    for i in 0..df.height() {
        let at = format!("{}: row {}", path.display(), i + 1);
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
            bail!("{at}: dataset {d}, run {r} is not a task of the pool's curves");
        };
        match &texts[li] {
            Some(prev) if prev != c => bail!(
                "{at}: learner '{l}' has two default configurations ({prev} and {c}); one per learner"
            ),
            Some(_) => {}
            None => texts[li] = Some(c.to_string()),
        }
        if u < 1 || u > i64::from(manifest.units) {
            bail!(
                "{at}: unit {u} is outside 1..={} (the manifest's units)",
                manifest.units
            );
        }
        let st = status
            .get(i)
            .and_then(Status::parse)
            .ok_or_else(|| anyhow::anyhow!("{at}: status must be ok, failed or timeout"))?;
        let sc = score.get(i).unwrap_or(f32::NAN);
        if st == Status::Ok && !sc.is_finite() {
            bail!("{at}: an ok unit needs a finite score");
        }
        rows.entry((li, t)).or_default().push((
            u as u32,
            sc,
            test.get(i).unwrap_or(f32::NAN),
            cost.get(i).unwrap_or(0.0),
            st,
        ));
    }
    let next_id = configs.last().map_or(0, |c| c.id + 1);
    for (li, text) in texts.iter().enumerate() {
        let Some(text) = text else { continue };
        let dims: Vec<super::space::SpaceDim> = space.learners[li].clone();
        let x = super::space::encode_config(&dims, text).with_context(|| {
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
        tasks[t].curves[c] = build_curve(&mut units, &at)?;
    }
    Ok(defaults)
}

/// Grid neighbours of every configuration: the same learner with one dimension changed by one
/// ordinal step or to another categorical level, among the configurations present.
pub fn grid_neighbours(m: &PoolManifest, configs: &[PoolConfig]) -> Vec<Vec<u32>> {
    let at: HashMap<(usize, &[u16]), u32> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.learner, c.levels.as_slice()), i as u32))
        .collect();
    configs
        .iter()
        .map(|c| {
            let mut out = BTreeSet::new();
            let dims = &m.learners[c.learner].dims;
            if c.levels.len() != dims.len() {
                // A configuration off the grid (a learner's default) has no grid neighbours.
                return Vec::new();
            }
            let mut lv = c.levels.clone();
            for (k, d) in dims.iter().enumerate() {
                let here = c.levels[k];
                let cands: Vec<u16> = match d.kind {
                    DimKind::Ordinal => [here.checked_sub(1), here.checked_add(1)]
                        .into_iter()
                        .flatten()
                        .filter(|&v| (v as usize) < d.values.len())
                        .collect(),
                    DimKind::Categorical => {
                        (0..d.values.len() as u16).filter(|&v| v != here).collect()
                    }
                };
                for v in cands {
                    lv[k] = v;
                    if let Some(&j) = at.get(&(c.learner, lv.as_slice())) {
                        out.insert(j);
                    }
                }
                lv[k] = here;
            }
            out.into_iter().collect()
        })
        .collect()
}

fn table_neighbours(dir: &Path, index: &HashMap<u32, usize>) -> Result<Vec<Vec<u32>>> {
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

/// The summary `traces inspect` prints for a pool: per learner, configurations, curves, units,
/// failures, recorded CPU cost, and the spread of final and best scores.
pub fn describe(pool: &Pool) -> String {
    use std::fmt::Write as _;
    let m = &pool.manifest;
    let datasets: BTreeSet<&str> = pool.tasks.iter().map(|t| t.dataset.as_str()).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "== {} ({}) — configuration pool, {}\n   {}\n   metric {} ({}); {} datasets, {} tasks, {}, {} units per curve, neighbours {}; {} units recorded{}; hash {}",
        m.name,
        pool.dir.display(),
        m.provenance
            .get("source")
            .and_then(|v| v.as_str())
            .unwrap_or("?"),
        m.description,
        m.metric,
        m.direction.as_str(),
        datasets.len(),
        pool.tasks.len(),
        pool.configurations_text(),
        m.units,
        match m.neighbours {
            Neighbours::Grid => "grid",
            Neighbours::Table => "table",
        },
        pool.n_units_recorded(),
        if pool.missing_curves > 0 {
            format!(
                " (INCOMPLETE: {} curves missing or short)",
                pool.missing_curves
            )
        } else {
            String::new()
        },
        pool.content_hash
    );
    let width = m
        .learners
        .iter()
        .map(|l| l.name.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let _ = writeln!(
        s,
        "\n   {:<width$}  {:>7}  {:>8}  {:>6}  {:>8}  {:>10}  {:>23}  {:>23}  unit",
        "learner",
        "configs",
        "curves",
        "ended",
        "CPU h",
        "neighbours",
        "final score (min/med/max)",
        "best score (min/med/max)",
    );
    for (li, l) in m.learners.iter().enumerate() {
        // The grid's configurations (recorded defaults are counted in the line above).
        let idx: Vec<usize> = (0..pool.configs.len())
            .filter(|&i| pool.configs[i].learner == li && pool.defaults[li] != Some(i as u32))
            .collect();
        let (mut curves, mut ended, mut cpu) = (0usize, 0usize, 0.0f64);
        let (mut finals, mut bests) = (Vec::new(), Vec::new());
        for t in &pool.tasks {
            for &i in &idx {
                let c = &t.curves[i];
                if c.is_empty() {
                    continue;
                }
                curves += 1;
                ended += usize::from(c.status.last().is_some_and(|s| *s != Status::Ok));
                cpu += c.cost_to(c.len());
                let ok: Vec<f32> = c
                    .score
                    .iter()
                    .zip(&c.status)
                    .filter(|(_, s)| **s == Status::Ok)
                    .map(|(x, _)| *x)
                    .collect();
                if let Some(&f) = ok.last() {
                    finals.push(f64::from(f));
                    bests.push(f64::from(
                        ok.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                    ));
                }
            }
        }
        let three = |v: &mut Vec<f64>| {
            if v.is_empty() {
                return "–".to_string();
            }
            v.sort_by(f64::total_cmp);
            format!(
                "{:.3} / {:.3} / {:.3}",
                v[0],
                v[v.len() / 2],
                v[v.len() - 1]
            )
        };
        let degree: f64 = idx
            .iter()
            .map(|&i| pool.neighbours[i].len() as f64)
            .sum::<f64>()
            / idx.len().max(1) as f64;
        let _ = writeln!(
            s,
            "   {:<width$}  {:>7}  {:>8}  {:>6}  {:>8.3}  {:>10.1}  {:>23}  {:>23}  {}",
            l.name,
            idx.len(),
            curves,
            ended,
            cpu / 3600.0,
            degree,
            three(&mut finals),
            three(&mut bests),
            l.unit
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> PoolManifest {
        PoolManifest {
            name: "t".into(),
            description: String::new(),
            metric: "accuracy".into(),
            direction: Direction::Maximize,
            units: 3,
            neighbours: Neighbours::Grid,
            complete: true,
            learners: vec![PoolLearner {
                name: "a".into(),
                unit: "1 epoch".into(),
                dims: vec![
                    PoolDim {
                        name: "x".into(),
                        kind: DimKind::Ordinal,
                        values: vec!["1".into(), "2".into(), "3".into()],
                    },
                    PoolDim {
                        name: "c".into(),
                        kind: DimKind::Categorical,
                        values: vec!["p".into(), "q".into(), "r".into()],
                    },
                ],
            }],
            provenance: toml::Table::new(),
        }
    }

    #[test]
    fn grid_neighbours_step_ordinals_and_switch_categories() {
        let m = manifest();
        let mut configs = Vec::new();
        for x in 0..3u16 {
            for c in 0..3u16 {
                configs.push(PoolConfig {
                    id: (3 * x + c) as u32,
                    learner: 0,
                    levels: vec![x, c],
                    config: "{}".into(),
                });
            }
        }
        let n = grid_neighbours(&m, &configs);
        // (x=0, c=p): x=1 with p; c = q or r with x = 0.
        assert_eq!(n[0], vec![1, 2, 3]);
        // (x=1, c=q): x = 0 or 2 with q; c = p or r with x = 1.
        assert_eq!(n[4], vec![1, 3, 5, 7]);
    }
}
