//! Syne Tune's blackbox repository format (Salinas et al. 2022, "Syne Tune: A Library for Large
//! Scale Hyperparameter Tuning and Reproducible Research"; `syne_tune/blackbox_repository/
//! blackbox_tabular.py`, `serialize`) into a banditbench pool (`banditbench-pool/1`).
//!
//! A blackbox folder holds `hyperparameters.parquet` (one row per configuration, one column per
//! hyperparameter), `configspace.json` (each hyperparameter's domain), `fidelityspace.json`,
//! `fidelities_values.npy` (the fidelity levels), `objectives_evaluations.npy` (float32, shape
//! (tasks, configurations, seeds, fidelities, objectives)) and `metadata.json`
//! (`objectives_names`, `task_names`). Its tasks become the pool's datasets, its seeds the runs,
//! its fidelity levels the units 1..F (the values are kept in the provenance), and its
//! configurations one learner's grid: a hyperparameter with a finite domain (`choice`,
//! `ordinal`, ...) keeps its categories in their order, any other one the distinct values it
//! takes, in increasing order. A missing (NaN) score ends a curve as a failed unit.

use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;
use serde_json::Value;

/// How to read a blackbox (`import blackbox` options; none has a default beyond "not given").
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// The objective that is the pool's score [default: the first objective].
    pub metric: Option<String>,
    /// `maximize` or `minimize` [default: the metadata's `direction`].
    pub direction: Option<String>,
    /// The objective that is the test score, if any.
    pub test_metric: Option<String>,
    /// The objective holding each fidelity step's seconds.
    pub cost: Option<String>,
    /// The objective holding the seconds elapsed up to each fidelity (cumulative).
    pub elapsed: Option<String>,
    /// The learner's name [default: the metadata's `learner`, else the folder's name].
    pub learner: Option<String>,
    /// The pool's name [default: the output folder's name].
    pub name: Option<String>,
}

/// What an import wrote.
pub(crate) struct Written {
    pub configs: usize,
    pub tasks: usize,
    pub runs: usize,
    pub units: usize,
    pub failed_curves: usize,
}

fn read_json(path: &Path) -> Result<Value> {
    let text = crate::files::read_text(
        path,
        "the blackbox's metadata.json (Syne Tune's serialize writes it in every blackbox folder)",
    )?;
    serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: line {}, column {}: not valid JSON ({e})",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

type NpyReader<T> = npyz::NpyReader<T, std::io::BufReader<std::fs::File>>;

/// A `.npy` file's values, read in file (C) order a slice at a time, so that an import holds
/// one task's evaluations, at their stored width, rather than the whole file widened to f64.
struct NpyValues {
    reader: Typed,
    /// How many values the file's size can hold at most: no more is ever reserved, since a
    /// header may promise more than the file holds.
    room: usize,
}

enum Typed {
    F4(NpyReader<f32>),
    F8(NpyReader<f64>),
    I8(NpyReader<i64>),
    I4(NpyReader<i32>),
}

/// Consecutive values of a `.npy` file: 32-bit floats as stored, every other type as f64.
enum Slice {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Slice {
    fn get(&self, i: usize) -> f64 {
        match self {
            Slice::F32(v) => f64::from(v[i]),
            Slice::F64(v) => v[i],
        }
    }
}

impl NpyValues {
    /// The next `n` values; an error naming the file if it ends before them.
    fn take(&mut self, n: usize, path: &Path) -> Result<Slice> {
        let room = self.room;
        fn next<T: npyz::Deserialize>(
            r: &mut NpyReader<T>,
            n: usize,
            room: usize,
            path: &Path,
        ) -> Result<Vec<T>> {
            // Reserved whole (no doubling while it fills), but never past what the file holds.
            let mut out = Vec::with_capacity(n.min(room));
            for _ in 0..n {
                match r.next() {
                    Some(Ok(v)) => out.push(v),
                    Some(Err(e)) if e.kind() != std::io::ErrorKind::UnexpectedEof => {
                        bail!("{}: cannot read its values ({e})", path.display())
                    }
                    Some(Err(_)) | None => bail!(
                        "{}: ends before the values its shape promises (a file cut short)",
                        path.display()
                    ),
                }
            }
            Ok(out)
        }
        Ok(match &mut self.reader {
            Typed::F4(r) => Slice::F32(next(r, n, room, path)?),
            Typed::F8(r) => Slice::F64(next(r, n, room, path)?),
            Typed::I8(r) => Slice::F64(
                next(r, n, room, path)?
                    .into_iter()
                    .map(|v| v as f64)
                    .collect(),
            ),
            Typed::I4(r) => {
                Slice::F64(next(r, n, room, path)?.into_iter().map(f64::from).collect())
            }
        })
    }
}

/// Open a `.npy` file: its shape and a reader of its values (any little-endian numeric dtype).
fn open_npy(path: &Path) -> Result<(Vec<usize>, NpyValues)> {
    let f = crate::files::open(
        path,
        "a .npy file (Syne Tune's serialize writes it in every blackbox folder)",
    )?;
    let bytes = f.metadata().map(|m| m.len()).unwrap_or(0) as usize;
    let npy = npyz::NpyFile::new(std::io::BufReader::new(f))
        .map_err(|e| anyhow::anyhow!("{}: not a NumPy .npy file ({e})", path.display()))?;
    let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
    if npy.order() != npyz::Order::C {
        bail!(
            "{}: stored in Fortran order; Syne Tune writes C order (np.save of a C array)",
            path.display()
        );
    }
    let dtype = npy.dtype().descr();
    let bad = |e: npyz::DTypeError| anyhow::anyhow!("{}: {e}", path.display());
    let (reader, width) = match dtype.as_str() {
        "'<f4'" => (Typed::F4(npy.data().map_err(bad)?), 4),
        "'<f8'" => (Typed::F8(npy.data().map_err(bad)?), 8),
        "'<i8'" => (Typed::I8(npy.data().map_err(bad)?), 8),
        "'<i4'" => (Typed::I4(npy.data().map_err(bad)?), 4),
        other => bail!(
            "{}: values of type {other}; a blackbox holds little-endian floats or integers",
            path.display()
        ),
    };
    let room = bytes / width;
    Ok((shape, NpyValues { reader, room }))
}

/// A whole (small) `.npy` file: its shape and values as f64.
fn read_npy(path: &Path) -> Result<(Vec<usize>, Vec<f64>)> {
    let (shape, mut values) = open_npy(path)?;
    let n = shape.iter().product();
    let slice = values.take(n, path)?;
    Ok((shape, (0..n).map(|i| slice.get(i)).collect()))
}

/// One hyperparameter: its levels (as JSON values) and whether they are ordered.
struct Dim {
    name: String,
    levels: Vec<Value>,
    ordinal: bool,
}

/// A JSON value as a level's text: numbers as JSON writes them, strings as they are.
fn level_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn same_level(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A hyperparameter column's values as JSON.
fn column_values(path: &Path, df: &DataFrame, name: &str) -> Result<Vec<Value>> {
    let c = df.column(name)?.as_materialized_series().clone();
    let n = c.len();
    let out: Vec<Value> = match c.dtype() {
        d if d.is_integer() => {
            let c = c.cast(&DataType::Int64)?;
            c.i64()?
                .iter()
                .map(|v| v.map_or(Value::Null, Value::from))
                .collect()
        }
        d if d.is_float() => {
            let c = c.cast(&DataType::Float64)?;
            c.f64()?
                .iter()
                .map(|v| {
                    v.and_then(serde_json::Number::from_f64)
                        .map_or(Value::Null, Value::Number)
                })
                .collect()
        }
        DataType::Boolean => c
            .bool()?
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Bool))
            .collect(),
        _ => {
            let c = c.cast(&DataType::String)?;
            c.str()?
                .iter()
                .map(|v| v.map_or(Value::Null, |s| Value::String(s.into())))
                .collect()
        }
    };
    if let Some(i) = out.iter().position(Value::is_null) {
        bail!(
            "{}: row {}, column '{name}': missing; every configuration has a value for every hyperparameter",
            path.display(),
            i + 1
        );
    }
    debug_assert_eq!(out.len(), n);
    Ok(out)
}

/// A number as a message shows it: plain, or in exponent form when very large or small.
fn num(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A list of names from metadata.json that must be non-empty, each non-empty and printable, and
/// none twice.
fn distinct_names(file: &str, key: &str, what: &str, names: &[String]) -> Result<()> {
    if names.is_empty() {
        bail!("{file}: '{key}' is empty; a blackbox names at least one {what}");
    }
    let mut seen = std::collections::HashMap::new();
    for (i, n) in names.iter().enumerate() {
        if n.trim().is_empty() || n.chars().any(char::is_control) {
            bail!(
                "{file}: '{key}' entry {i} is \"{}\"; a {what} name must be non-empty and hold no control characters",
                n.escape_debug()
            );
        }
        if let Some(j) = seen.insert(n.as_str(), i) {
            bail!(
                "{file}: '{key}' names the {what} '{}' twice (entries {j} and {i}); each {what} must be named once",
                n.escape_debug()
            );
        }
    }
    Ok(())
}

/// What `metadata.json` and the options say: the names, which objective is which, the
/// direction and the learner.
struct Meta {
    json: Value,
    objectives: Vec<String>,
    tasks: Vec<String>,
    /// The score's objective name (`--metric`, else the first).
    metric: String,
    score_k: usize,
    test_k: Option<usize>,
    cost_k: usize,
    /// The cost objective counts seconds up to each fidelity (`--elapsed`), not per step.
    cumulative: bool,
    direction: &'static str,
    learner: String,
}

impl Meta {
    fn read(dir: &Path, opts: &Options) -> Result<Meta> {
        let meta_path = dir.join("metadata.json");
        let json = read_json(&meta_path)?;
        let m = meta_path.display();
        let strings = |key: &str| -> Result<Vec<String>> {
            json.get(key)
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|v| v.as_str().map(String::from)).collect())
                .with_context(|| format!("{m}: no list of names '{key}'"))
        };
        let objectives = strings("objectives_names")?;
        let tasks = strings("task_names")?;
        distinct_names(&m.to_string(), "objectives_names", "objective", &objectives)?;
        distinct_names(&m.to_string(), "task_names", "task", &tasks)?;
        let objective = |name: &str, option: &str| -> Result<usize> {
            objectives.iter().position(|o| o == name).with_context(|| {
                format!(
                    "{option} {name}: the blackbox has no such objective; its objectives are {}",
                    objectives.join(", ")
                )
            })
        };
        let metric = opts.metric.clone().unwrap_or_else(|| objectives[0].clone());
        let score_k = objective(&metric, "--metric")?;
        let test_k = match &opts.test_metric {
            Some(t) => Some(objective(t, "--test-metric")?),
            None => None,
        };
        let (cost_k, cumulative) = match (&opts.cost, &opts.elapsed) {
            (Some(c), None) => (objective(c, "--cost")?, false),
            (None, Some(e)) => (objective(e, "--elapsed")?, true),
            (Some(_), Some(_)) => bail!("give --cost or --elapsed, not both"),
            (None, None) => bail!(
                "name the objective holding the training seconds: --cost NAME (seconds of each fidelity step) or --elapsed NAME (seconds up to each fidelity, cumulative, as Syne Tune's elapsed_time_attr); the objectives are {}",
                objectives.join(", ")
            ),
        };
        let text = |key: &str| json.get(key).and_then(Value::as_str).map(String::from);
        let direction = match opts
            .direction
            .clone()
            .or_else(|| text("direction"))
            .as_deref()
        {
            Some("maximize" | "max") => "maximize",
            Some("minimize" | "min") => "minimize",
            Some(other) => bail!("direction '{other}': give maximize or minimize"),
            None => bail!(
                "{m}: no 'direction'; say whether {metric} is maximised or minimised with --direction maximize|minimize"
            ),
        };
        let learner = opts
            .learner
            .clone()
            .or_else(|| text("learner"))
            .or_else(|| dir.file_name().and_then(|n| n.to_str()).map(String::from))
            .unwrap_or_else(|| "blackbox".into());
        Ok(Meta {
            json,
            objectives,
            tasks,
            metric,
            score_k,
            test_k,
            cost_k,
            cumulative,
            direction,
            learner,
        })
    }
}

/// `objectives_evaluations.npy`'s shape: (tasks, configurations, seeds, fidelities, objectives).
#[derive(Clone, Copy, Debug)]
struct Shape {
    tasks: usize,
    configs: usize,
    seeds: usize,
    fidelities: usize,
    objectives: usize,
}

/// The evaluations file opened and its shape checked against the metadata and the fidelities.
fn open_evaluations(path: &Path, meta: &Meta, n_fidelities: usize) -> Result<(Shape, NpyValues)> {
    let (shape, ev) = open_npy(path)?;
    let [tasks, configs, seeds, fidelities, objectives] = shape[..] else {
        bail!(
            "{}: shape {shape:?}; Syne Tune's is (tasks, configurations, seeds, fidelities, objectives)",
            path.display()
        );
    };
    if tasks != meta.tasks.len()
        || objectives != meta.objectives.len()
        || fidelities != n_fidelities
    {
        bail!(
            "{}: shape {shape:?} does not match {} tasks and {} objectives in metadata.json and {} fidelities in fidelities_values.npy",
            path.display(),
            meta.tasks.len(),
            meta.objectives.len(),
            n_fidelities
        );
    }
    if fidelities == 0 || fidelities > 100_000 {
        bail!(
            "{}: {fidelities} fidelities; a pool has 1 to 100000 units",
            path.display()
        );
    }
    let shape = Shape {
        tasks,
        configs,
        seeds,
        fidelities,
        objectives,
    };
    Ok((shape, ev))
}

/// The configurations: each hyperparameter as a dimension (its domain's categories in their
/// order, else the distinct values it takes, increasing), and per configuration its levels
/// (comma-separated indices) and its values as JSON.
fn read_configurations(
    dir: &Path,
    n_configs: usize,
) -> Result<(Vec<Dim>, Vec<String>, Vec<String>)> {
    let hp_path = dir.join("hyperparameters.parquet");
    crate::files::check(&hp_path, "the blackbox's hyperparameters.parquet")?;
    let hp = crate::results::read_parquet(&hp_path)?;
    if hp.height() != n_configs {
        bail!(
            "{}: {} configurations, but objectives_evaluations.npy has {n_configs}",
            hp_path.display(),
            hp.height()
        );
    }
    let space = read_json(&dir.join("configspace.json"))?;
    let mut dims = Vec::new();
    let mut columns = Vec::new();
    for name in hp.get_column_names() {
        let name = name.to_string();
        let values = column_values(&hp_path, &hp, &name)?;
        let levels = dim_levels(&space, &name, &values);
        if levels.0.len() > usize::from(u16::MAX) {
            bail!(
                "{}: hyperparameter '{name}' takes {} values; a pool's dimension has at most 65535 levels",
                hp_path.display(),
                levels.0.len()
            );
        }
        dims.push(Dim {
            name,
            levels: levels.0,
            ordinal: levels.1,
        });
        columns.push(values);
    }
    let mut levels_text = Vec::with_capacity(n_configs);
    let mut config_json = Vec::with_capacity(n_configs);
    for i in 0..n_configs {
        let mut lv = Vec::with_capacity(dims.len());
        let mut obj = serde_json::Map::new();
        for (d, col) in dims.iter().zip(&columns) {
            let v = &col[i];
            let at = d.levels.iter().position(|l| same_level(l, v)).with_context(|| {
                format!(
                    "{}: row {}, column '{}': {v} is not among the domain's values in configspace.json",
                    hp_path.display(),
                    i + 1,
                    d.name
                )
            })?;
            lv.push(at.to_string());
            obj.insert(d.name.clone(), v.clone());
        }
        levels_text.push(lv.join(","));
        config_json.push(Value::Object(obj).to_string());
    }
    Ok((dims, levels_text, config_json))
}

/// A hyperparameter's levels and whether they are ordered: its domain's categories (ordinal
/// unless the domain is `Categorical`), else the distinct values it takes, increasing.
fn dim_levels(space: &Value, name: &str, values: &[Value]) -> (Vec<Value>, bool) {
    let domain = space.get(name);
    let cls = domain
        .and_then(|d| d.get("domain_cls"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let categories = domain
        .and_then(|d| d.get("domain_kwargs"))
        .and_then(|k| k.get("categories"))
        .and_then(Value::as_array);
    match categories {
        Some(c) => (c.clone(), cls != "Categorical"),
        None => {
            let mut distinct: Vec<Value> = Vec::new();
            for v in values {
                if !distinct.iter().any(|d| same_level(d, v)) {
                    distinct.push(v.clone());
                }
            }
            distinct.sort_by(|a, b| match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => level_text(a).cmp(&level_text(b)),
            });
            (distinct, true)
        }
    }
}

/// Run `write` on a temporary folder beside `out`, renamed to `out` when it succeeds and removed
/// when it fails, so that a failed import leaves nothing behind.
fn in_temporary_folder<T>(out: &Path, write: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    let tmp = out.with_file_name(format!(
        ".{}.importing-{}",
        out.file_name().and_then(|n| n.to_str()).unwrap_or("pool"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("curves"))
        .with_context(|| format!("{}: cannot create", tmp.display()))?;
    match write(&tmp) {
        Ok(w) => {
            std::fs::rename(&tmp, out)
                .with_context(|| format!("{}: cannot move the pool into place", out.display()))?;
            Ok(w)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Convert the blackbox at `dir` into a pool at `out` (which must not exist).
pub(crate) fn import(dir: &Path, out: &Path, opts: &Options) -> Result<Written> {
    if out.exists() {
        bail!(
            "{}: already exists; an import writes a new pool (remove it, or give another --out)",
            out.display()
        );
    }
    let meta = Meta::read(dir, opts)?;
    let (_, fidelities) = read_npy(&dir.join("fidelities_values.npy"))?;
    let ev_path = dir.join("objectives_evaluations.npy");
    let (shape, mut ev) = open_evaluations(&ev_path, &meta, fidelities.len())?;
    let (dims, levels_text, config_json) = read_configurations(dir, shape.configs)?;
    in_temporary_folder(out, |tmp| {
        let n = shape.configs;
        let mut configs = df!(
            "config_id" => (0..n as i32).collect::<Vec<_>>(),
            "learner" => vec![meta.learner.as_str(); n],
            "levels" => levels_text,
            "config" => config_json,
        )?;
        write_parquet(&tmp.join("configs.parquet"), &mut configs)?;
        let per_task = [shape.seeds, shape.fidelities, shape.objectives]
            .iter()
            .try_fold(shape.configs, |a, &b| a.checked_mul(b))
            .with_context(|| {
                format!(
                    "{}: shape [{}, {}, {}, {}, {}] is too large",
                    ev_path.display(),
                    shape.tasks,
                    shape.configs,
                    shape.seeds,
                    shape.fidelities,
                    shape.objectives
                )
            })?;
        let mut failed_curves = 0;
        for (t, task) in meta.tasks.iter().enumerate() {
            // One task's evaluations in memory at a time, at their stored width; its curves go
            // out in batches of rows (one parquet row group each).
            let slice = ev.take(per_task, &ev_path)?;
            // Named by the task's place, so that no two tasks can share a file (`a/b` and
            // `a-b` once did); the name after it is for a reader, the `dataset` column is the key.
            let file = format!("{t:05}-{}.parquet", crate::names::file_part(task));
            let mut curves = Curves::new(&tmp.join("curves").join(file), task);
            let here = TaskAt {
                path: &ev_path,
                task,
                index: t,
            };
            failed_curves += write_task_curves(&mut curves, &slice, shape, &meta, &here)?;
            curves.finish()?;
        }
        let manifest = manifest_text(
            &opts.name.clone().unwrap_or_else(|| {
                out.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("blackbox")
                    .to_string()
            }),
            dir,
            shape.configs,
            // The metric's name: metadata.json's `metric`, if it has one, else the objective's.
            meta.json
                .get("metric")
                .and_then(Value::as_str)
                .unwrap_or(&meta.metric),
            meta.direction,
            &meta.learner,
            meta.json.get("unit").and_then(Value::as_str).unwrap_or(""),
            &dims,
            &fidelities,
            &meta.objectives,
            meta.cumulative,
        )?;
        crate::experiment::write_text_atomic(&tmp.join("pool.toml"), &manifest)?;
        Ok(Written {
            configs: shape.configs,
            tasks: shape.tasks,
            runs: shape.seeds,
            units: shape.fidelities,
            failed_curves,
        })
    })
}

/// Where a task's evaluations come from, for messages.
struct TaskAt<'a> {
    path: &'a Path,
    task: &'a str,
    index: usize,
}

/// One task's curves, seed by seed and configuration by configuration, each step checked; a
/// NaN score ends its curve as a failed unit. Returns the failed curves.
fn write_task_curves(
    curves: &mut Curves<'_>,
    slice: &Slice,
    shape: Shape,
    meta: &Meta,
    here: &TaskAt<'_>,
) -> Result<usize> {
    let Shape {
        seeds: n_seeds,
        fidelities: n_fid,
        objectives: n_obj,
        ..
    } = shape;
    let at = |c: usize, s: usize, f: usize, k: usize| {
        slice.get(((c * n_seeds + s) * n_fid + f) * n_obj + k)
    };
    let mut failed_curves = 0;
    for s in 0..n_seeds {
        for c in 0..shape.configs {
            let mut before = 0.0;
            for f in 0..n_fid {
                let x = at(c, s, f, meta.score_k);
                let secs = at(c, s, f, meta.cost_k);
                let step = if meta.cumulative { secs - before } else { secs };
                before = secs;
                let t_val = meta.test_k.map_or(f64::NAN, |k| at(c, s, f, k));
                check_step(meta, here, (c, s, f), x, secs, step, t_val)?;
                let cost = if step.is_finite() {
                    step.max(0.0) as f32
                } else {
                    0.0
                };
                curves.push(
                    [s as i32, c as i32, f as i32 + 1],
                    [x as f32, t_val as f32, cost],
                    !x.is_nan(),
                )?;
                if x.is_nan() {
                    failed_curves += 1;
                    break;
                }
            }
        }
    }
    Ok(failed_curves)
}

/// One fidelity step's values, checked: a failed step (NaN score) may have no cost and is
/// charged nothing; any other step's seconds are finite and not negative (cumulative seconds
/// never go back), and scores fit a pool's 32-bit floats.
#[allow(clippy::too_many_arguments)]
fn check_step(
    meta: &Meta,
    here: &TaskAt<'_>,
    (c, s, f): (usize, usize, usize),
    x: f64,
    secs: f64,
    step: f64,
    t_val: f64,
) -> Result<()> {
    let at = || {
        format!(
            "{}: task '{}' (index {}), configuration {c}, seed {s}, fidelity {}",
            here.path.display(),
            here.task.escape_debug(),
            here.index,
            f + 1
        )
    };
    let time_ok = step.is_finite() && step >= 0.0;
    if !x.is_nan() && !time_ok {
        bail!(
            "{}: {} is {}{}, which is not a training time; the seconds must be finite and {} (fix the blackbox, or name another objective with --cost or --elapsed)",
            at(),
            meta.objectives[meta.cost_k],
            num(secs),
            if meta.cumulative {
                format!(" after {}", num(secs - step))
            } else {
                String::new()
            },
            if meta.cumulative {
                "never go back"
            } else {
                "not negative"
            }
        );
    }
    if x.is_infinite() || x.is_finite() && !(x as f32).is_finite() {
        bail!(
            "{}: {} is {}, which a pool's 32-bit scores cannot hold (beyond ±3.4e38); a pool's scores are finite, or NaN for a failed evaluation",
            at(),
            meta.objectives[meta.score_k],
            num(x)
        );
    }
    if t_val.is_infinite() || t_val.is_finite() && !(t_val as f32).is_finite() {
        bail!(
            "{}: {} is {}, which a pool's 32-bit test scores cannot hold; give finite values, or NaN for none",
            at(),
            meta.objectives[meta.test_k.unwrap_or(0)],
            num(t_val)
        );
    }
    Ok(())
}

/// One task's curves file, written in batches of [`Curves::BATCH`] rows, so that a task of any
/// size costs the same memory to write.
struct Curves<'a> {
    path: std::path::PathBuf,
    task: &'a str,
    /// Made at the first flush, from that batch's schema.
    writer: Option<polars::io::parquet::write::BatchedWriter<std::fs::File>>,
    run: Vec<i32>,
    config_id: Vec<i32>,
    unit: Vec<i32>,
    score: Vec<f32>,
    test: Vec<f32>,
    cost: Vec<f32>,
    ok: Vec<bool>,
}

impl<'a> Curves<'a> {
    const BATCH: usize = 1 << 18;

    fn new(path: &Path, task: &'a str) -> Curves<'a> {
        Curves {
            path: path.to_path_buf(),
            task,
            writer: None,
            run: Vec::new(),
            config_id: Vec::new(),
            unit: Vec::new(),
            score: Vec::new(),
            test: Vec::new(),
            cost: Vec::new(),
            ok: Vec::new(),
        }
    }

    /// One row: (run, configuration, unit), (score, test score, seconds), whether it succeeded.
    fn push(&mut self, keys: [i32; 3], values: [f32; 3], ok: bool) -> Result<()> {
        self.run.push(keys[0]);
        self.config_id.push(keys[1]);
        self.unit.push(keys[2]);
        self.score.push(values[0]);
        self.test.push(values[1]);
        self.cost.push(values[2]);
        self.ok.push(ok);
        if self.run.len() >= Self::BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Write the rows held as one batch (none: only make the writer) and clear them.
    fn flush(&mut self) -> Result<()> {
        let status: Vec<&str> = self
            .ok
            .iter()
            .map(|&o| if o { "ok" } else { "failed" })
            .collect();
        let df = df!(
            "dataset" => vec![self.task; self.run.len()],
            "run" => &self.run,
            "config_id" => &self.config_id,
            "unit" => &self.unit,
            "score" => &self.score,
            "test_score" => &self.test,
            "cost_s" => &self.cost,
            "status" => status,
        )?;
        let bad = |e: PolarsError| anyhow::anyhow!("{}: cannot write ({e})", self.path.display());
        if self.writer.is_none() {
            let f = std::fs::File::create(&self.path)
                .with_context(|| format!("{}: cannot create", self.path.display()))?;
            let w = ParquetWriter::new(f)
                .with_compression(ParquetCompression::Zstd(None))
                .batched(df.schema())
                .map_err(bad)?;
            self.writer = Some(w);
        }
        if df.height() > 0 {
            self.writer
                .as_mut()
                .expect("made above")
                .write_batch(&df)
                .map_err(bad)?;
        }
        for v in [&mut self.run, &mut self.config_id, &mut self.unit] {
            v.clear();
        }
        for v in [&mut self.score, &mut self.test, &mut self.cost] {
            v.clear();
        }
        self.ok.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.flush()?;
        if let Some(w) = &self.writer {
            w.finish()
                .map_err(|e| anyhow::anyhow!("{}: cannot write ({e})", self.path.display()))?;
        }
        Ok(())
    }
}

fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<()> {
    let f = std::fs::File::create(path)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    ParquetWriter::new(f)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)
        .map_err(|e| anyhow::anyhow!("{}: cannot write ({e})", path.display()))?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn manifest_text(
    name: &str,
    dir: &Path,
    configs: usize,
    metric: &str,
    direction: &str,
    learner: &str,
    unit: &str,
    dims: &[Dim],
    fidelities: &[f64],
    objectives: &[String],
    cumulative: bool,
) -> Result<String> {
    use toml::Value as T;
    let mut t = toml::Table::new();
    t.insert(
        "format".into(),
        T::String(crate::trace::pool::POOL_FORMAT_V1.into()),
    );
    t.insert("name".into(), T::String(name.into()));
    t.insert(
        "description".into(),
        T::String(format!(
            "Imported from the Syne Tune blackbox at {} ({} configurations of one learner; fidelities as units 1..{}).",
            dir.display(),
            configs,
            fidelities.len()
        )),
    );
    t.insert("metric".into(), T::String(metric.into()));
    t.insert("direction".into(), T::String(direction.into()));
    t.insert("units".into(), T::Integer(fidelities.len() as i64));
    t.insert("neighbours".into(), T::String("grid".into()));
    t.insert("complete".into(), T::Boolean(true));
    let mut l = toml::Table::new();
    l.insert("name".into(), T::String(learner.into()));
    l.insert(
        "unit".into(),
        T::String(if unit.is_empty() {
            "one fidelity level of the blackbox".into()
        } else {
            unit.into()
        }),
    );
    let dims_t: Vec<T> = dims
        .iter()
        .map(|d| {
            let mut x = toml::Table::new();
            x.insert("name".into(), T::String(d.name.clone()));
            x.insert(
                "kind".into(),
                T::String(if d.ordinal { "ordinal" } else { "categorical" }.into()),
            );
            x.insert(
                "values".into(),
                T::Array(d.levels.iter().map(|v| T::String(level_text(v))).collect()),
            );
            T::Table(x)
        })
        .collect();
    l.insert("dims".into(), T::Array(dims_t));
    t.insert("learners".into(), T::Array(vec![T::Table(l)]));
    let mut p = toml::Table::new();
    p.insert(
        "source".into(),
        T::String("Syne Tune blackbox repository format".into()),
    );
    p.insert("path".into(), T::String(dir.display().to_string()));
    p.insert(
        "fidelity_values".into(),
        T::Array(fidelities.iter().map(|&f| T::Float(f)).collect()),
    );
    p.insert(
        "objectives".into(),
        T::Array(objectives.iter().map(|o| T::String(o.clone())).collect()),
    );
    p.insert(
        "seconds".into(),
        T::String(
            if cumulative {
                "elapsed (differenced)"
            } else {
                "per step"
            }
            .into(),
        ),
    );
    t.insert("provenance".into(), T::Table(p));
    Ok(toml::to_string(&t)?)
}
