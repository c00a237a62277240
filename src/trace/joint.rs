//! A learner-level trace set seen as a pool of one-unit configurations: the joint CASH pool.
//!
//! Every recorded evaluation of a trace set is a configuration of some learner with one score.
//! Pool-based optimisation (HPO-B's protocol, used for Auto-WEKA's comparison) lets an optimiser
//! choose among the recorded configurations it has not evaluated yet. This module builds that
//! pool: one configuration per distinct (learner, `config`) of the set, a one-unit curve per
//! (dataset, run) on which it was recorded (the first time, when a random search drew it twice),
//! and no curve elsewhere (such configurations are never offered on that task). Each learner's
//! default configuration comes from `defaults.parquet` (or `defaults.csv`) beside the set when it exists
//! (`scripts/record/record_defaults.py`): defaults are offered only to optimisers that ask for them
//! by name (Ex-Def, an initial design from defaults), never to a random draw.
//!
//! The space of each learner is read from the manifest's `[[provenance.learners]]` `space`
//! descriptions (see `space::parse_space`).

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use polars::prelude::*;

use super::Status;
use super::pool::{Curve, Neighbours, Pool, PoolConfig, PoolLearner, PoolManifest, PoolTask};
use super::space::{Space, SpaceDim, encode_config, parse_space};
use crate::rng::fnv1a64;

/// Does `dir` hold a trace set (a `traceset.toml`)?
pub fn is_trace_set(dir: &Path) -> bool {
    dir.join("traceset.toml").is_file()
}

fn text(df: &DataFrame, path: &Path, name: &str) -> Result<Vec<Option<String>>> {
    let c = df.column(name).map_err(|_| {
        anyhow::anyhow!(
            "{}: missing column '{name}', which the joint (CASH) pool needs",
            path.display()
        )
    })?;
    let s = c.as_materialized_series().cast(&DataType::String)?;
    let ca = s.str()?;
    Ok((0..ca.len())
        .map(|i| ca.get(i).map(str::to_string))
        .collect())
}

/// Build the joint pool of the trace set in `dir`.
pub fn pool_from_trace_set(dir: &Path) -> Result<Pool> {
    let ts = super::load_trace_set(dir, &super::LoadOptions::default())?;
    // The evaluations' columns first: a set without configurations is not a pool, whatever
    // its manifest describes.
    let columns = evaluation_columns(&ts)?;
    let dims = learner_spaces(&ts, &dir.join("traceset.toml"))?;
    let lidx: HashMap<&str, usize> = ts
        .learners
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let task_of: HashMap<(&str, i64), usize> = ts
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| ((t.dataset.as_str(), t.run), i))
        .collect();
    let mut interner = Interner::new(dims);
    let mut per_task = evaluation_curves(&ts, &columns, &lidx, &task_of, &mut interner)?;
    // Defaults, when recorded.
    let mut hash = fnv1a64(ts.content_hash.as_bytes());
    let dpath = ["defaults.parquet", "defaults.csv"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file());
    let defaults = match dpath {
        Some(dpath) => {
            let bytes = std::fs::read(&dpath)?;
            hash = fnv1a64(&[hash.to_le_bytes().as_slice(), &bytes].concat());
            read_defaults(&dpath, &ts, &lidx, &task_of, &mut interner, &mut per_task)?
        }
        None => vec![None; ts.learners.len()],
    };
    let Interner { configs, space, .. } = interner;
    let n = configs.len();
    let tasks: Vec<PoolTask> = ts
        .tasks
        .iter()
        .zip(per_task)
        .map(|(t, list)| {
            let mut curves = vec![Curve::default(); n];
            for (c, curve) in list {
                curves[c as usize] = curve;
            }
            PoolTask {
                dataset: t.dataset.clone(),
                run: t.run,
                curves,
            }
        })
        .collect();
    Ok(Pool {
        dir: dir.to_path_buf(),
        manifest: joint_manifest(&ts),
        neighbours: vec![Vec::new(); n],
        configs,
        all_tasks: tasks.iter().map(|t| (t.dataset.clone(), t.run)).collect(),
        tasks,
        missing_curves: 0,
        content_hash: format!("{hash:016x}"),
        space,
        defaults,
    })
}

/// Each learner's space, from the manifest's `[[provenance.learners]]` `space` descriptions.
fn learner_spaces(ts: &super::TraceSet, manifest_path: &Path) -> Result<Vec<Vec<SpaceDim>>> {
    let prov = &ts.manifest.provenance;
    let described: HashMap<String, String> = prov
        .get("learners")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    Some((
                        t.get("name")?.as_str()?.to_string(),
                        t.get("space")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut dims = Vec::new();
    for l in &ts.learners {
        let Some(s) = described.get(l) else {
            bail!(
                "{}: learner '{l}' has no [[provenance.learners]] entry with a `space` description, which the joint (CASH) pool needs to encode its configurations (e.g. space = \"C float log [0.01, 100]; kernel in {{rbf, poly}}\")",
                manifest_path.display()
            );
        };
        dims.push(parse_space(s).with_context(|| {
            format!(
                "{}: [[provenance.learners]] '{l}': key 'space'",
                manifest_path.display()
            )
        })?);
    }
    Ok(dims)
}

/// The joint pool's configurations, each distinct (learner, `config`) once, encoded as they
/// first appear.
struct Interner {
    dims: Vec<Vec<SpaceDim>>,
    configs: Vec<PoolConfig>,
    space: Space,
    by_key: HashMap<(usize, String), u32>,
}

impl Interner {
    fn new(dims: Vec<Vec<SpaceDim>>) -> Interner {
        Interner {
            space: Space::new(dims.clone()),
            dims,
            configs: Vec::new(),
            by_key: HashMap::new(),
        }
    }

    /// The configuration `cfg` of learner `l`, added when new (`at` names the row in errors).
    fn intern(&mut self, l: usize, cfg: &str, at: &dyn Fn() -> String) -> Result<u32> {
        if let Some(&c) = self.by_key.get(&(l, cfg.to_string())) {
            return Ok(c);
        }
        let x = encode_config(&self.dims[l], cfg).with_context(at)?;
        let id = self.configs.len() as u32;
        self.configs.push(PoolConfig {
            id,
            learner: l,
            levels: Vec::new(),
            config: cfg.to_string(),
        });
        self.space.push(l, &x);
        self.by_key.insert((l, cfg.to_string()), id);
        Ok(id)
    }
}

/// The evaluations file's columns the joint pool reads, as text: dataset, run, learner, seq and
/// config.
type EvalColumns = [Vec<Option<String>>; 5];

fn evaluation_columns(ts: &super::TraceSet) -> Result<EvalColumns> {
    let ev = &ts.evaluations_file;
    let df = super::load::read_frame(ev)?;
    let [ds, run, learner, seq, config] =
        ["dataset", "run", "learner", "seq", "config"].map(|c| text(&df, ev, c));
    Ok([ds?, run?, learner?, seq?, config?])
}

/// Per task, each recorded configuration's one-unit curve (the first evaluation of it, when a
/// random search drew it twice).
fn evaluation_curves(
    ts: &super::TraceSet,
    [ds, run, learner, seq, config]: &EvalColumns,
    lidx: &HashMap<&str, usize>,
    task_of: &HashMap<(&str, i64), usize>,
    interner: &mut Interner,
) -> Result<Vec<Vec<(u32, Curve)>>> {
    let ev = &ts.evaluations_file;
    // (task index, arm's evaluation index) of each row: arms hold their evaluations in seq
    // order, so sort the rows the same way.
    let mut rows: Vec<(usize, usize, i64, usize)> = Vec::with_capacity(ds.len());
    for i in 0..ds.len() {
        let at = || format!("{}: row {}", ev.display(), i + 1);
        let (Some(d), Some(r), Some(l), Some(s)) = (&ds[i], &run[i], &learner[i], &seq[i]) else {
            bail!("{}: dataset, run, learner and seq are required", at());
        };
        let (Ok(r), Ok(s)) = (r.parse::<i64>(), s.parse::<i64>()) else {
            bail!("{}: run and seq must be whole numbers", at());
        };
        let (Some(&t), Some(&l)) = (task_of.get(&(d.as_str(), r)), lidx.get(l.as_str())) else {
            continue; // a task the loader dropped
        };
        rows.push((t, l, s, i));
    }
    rows.sort_unstable();
    let mut per_task: Vec<Vec<(u32, Curve)>> = vec![Vec::new(); ts.tasks.len()];
    let mut k = 0;
    while k < rows.len() {
        let (t, l) = (rows[k].0, rows[k].1);
        let arm = &ts.tasks[t].arms[l];
        let mut seen = std::collections::HashSet::new();
        let mut e = 0;
        while k < rows.len() && rows[k].0 == t && rows[k].1 == l {
            let i = rows[k].3;
            let at = || format!("{}: row {}: column 'config'", ev.display(), i + 1);
            let Some(cfg) = &config[i] else {
                bail!(
                    "{}: empty; the joint (CASH) pool needs each configuration",
                    at()
                );
            };
            let c = interner.intern(l, cfg, &at)?;
            if seen.insert(c) {
                per_task[t].push((c, one_unit(arm, e)));
            }
            e += 1;
            k += 1;
        }
    }

    Ok(per_task)
}

/// Each learner's default configuration from `dpath` (`defaults.parquet` or `.csv`), its
/// one-unit curve added to `per_task`.
fn read_defaults(
    dpath: &Path,
    ts: &super::TraceSet,
    lidx: &HashMap<&str, usize>,
    task_of: &HashMap<(&str, i64), usize>,
    interner: &mut Interner,
    per_task: &mut [Vec<(u32, Curve)>],
) -> Result<Vec<Option<u32>>> {
    let mut defaults: Vec<Option<u32>> = vec![None; ts.learners.len()];
    let d = super::load::read_frame(dpath)?;
    let [dds, drun, dl, dcfg] = ["dataset", "run", "learner", "config"].map(|c| text(&d, dpath, c));
    let (dds, drun, dl, dcfg) = (dds?, drun?, dl?, dcfg?);
    let num = |name: &str| -> Result<Vec<Option<f32>>> {
        let c = d
            .column(name)
            .map_err(|_| anyhow::anyhow!("{}: missing column '{name}'", dpath.display()))?;
        let s = c.as_materialized_series().cast(&DataType::Float32)?;
        let ca = s.f32()?;
        Ok((0..ca.len()).map(|i| ca.get(i)).collect())
    };
    let (score, test, cost) = (num("score")?, num("test_score")?, num("cost_s")?);
    let status = text(&d, dpath, "status")?;
    for i in 0..d.height() {
        let at = || format!("{}: row {}", dpath.display(), i + 1);
        let (Some(ds), Some(r), Some(l), Some(cfg)) = (&dds[i], &drun[i], &dl[i], &dcfg[i]) else {
            bail!("{}: dataset, run, learner and config are required", at());
        };
        let Ok(r) = r.parse::<i64>() else {
            bail!("{}: run must be a whole number", at());
        };
        let Some(&t) = task_of.get(&(ds.as_str(), r)) else {
            bail!(
                "{}: dataset {ds}, run {r} is not a task of the trace set; a default belongs to one of its (dataset, run) pairs",
                at()
            );
        };
        let Some(&l) = lidx.get(l.as_str()) else {
            bail!(
                "{}: learner '{l}' is not one of the trace set's learners ({})",
                at(),
                ts.learners.join(", ")
            );
        };
        let c = interner.intern(l, cfg, &at)?;
        if defaults[l].is_some_and(|o| o != c) {
            bail!(
                "{}: learner '{}' has two different default configurations",
                at(),
                ts.learners[l]
            );
        }
        defaults[l] = Some(c);
        let st = status[i]
            .as_deref()
            .and_then(Status::parse)
            .ok_or_else(|| anyhow::anyhow!("{}: status must be ok, failed or timeout", at()))?;
        let ok = st == Status::Ok;
        per_task[t].push((
            c,
            Curve {
                score: vec![if ok {
                    score[i].unwrap_or(f32::NAN)
                } else {
                    f32::NAN
                }],
                test_score: vec![test[i].unwrap_or(f32::NAN)],
                cost_s: vec![cost[i].unwrap_or(0.0)],
                status: vec![st],
                extra: Vec::new(),
            },
        ));
    }
    Ok(defaults)
}

/// A trace set's objectives that its joint pool carries: those read from `score` and `cost_s`
/// (its curves hold no other column), if at least two.
fn joint_objectives(
    objectives: &[super::objectives::Objective],
) -> Vec<super::objectives::Objective> {
    use super::objectives::ObjectiveColumn;
    let kept: Vec<_> = objectives
        .iter()
        .filter(|o| matches!(o.column, ObjectiveColumn::Score | ObjectiveColumn::Cost))
        .cloned()
        .collect();
    if kept.len() >= 2 { kept } else { Vec::new() }
}

/// The joint pool's manifest: the trace set's, one unit a configuration, no grid.
fn joint_manifest(ts: &super::TraceSet) -> PoolManifest {
    PoolManifest {
        name: ts.manifest.name.clone(),
        description: format!(
            "{} (the joint pool of its recorded configurations, one unit each)",
            ts.manifest.description
        ),
        metric: ts.manifest.metric.clone(),
        objectives: joint_objectives(&ts.manifest.objectives),
        generator: None,
        direction: ts.manifest.direction,
        units: 1,
        neighbours: Neighbours::Table,
        complete: true,
        learners: ts
            .learners
            .iter()
            .map(|l| PoolLearner {
                name: l.clone(),
                unit: "one evaluation".into(),
                dims: Vec::new(),
            })
            .collect(),
        provenance: ts.manifest.provenance.clone(),
    }
}

/// Evaluation `e` of `arm` as a one-unit curve (a failed one reveals no score).
fn one_unit(arm: &super::Arm, e: usize) -> Curve {
    let ok = arm.status[e] == Status::Ok;
    Curve {
        score: vec![if ok { arm.score[e] as f32 } else { f32::NAN }],
        test_score: vec![arm.test_score[e] as f32],
        cost_s: vec![arm.cost_s[e] as f32],
        status: vec![arm.status[e]],
        extra: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_set_becomes_a_joint_pool_with_its_defaults() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cash");
        let pool = pool_from_trace_set(&dir).unwrap();
        // knn: 3 distinct configurations recorded (one twice on a) + 1 default; tree: 3 + 1.
        let names: Vec<(&str, &str)> = pool
            .configs
            .iter()
            .map(|c| {
                (
                    pool.manifest.learners[c.learner].name.as_str(),
                    c.config.as_str(),
                )
            })
            .collect();
        assert_eq!(names.len(), 8, "{names:?}");
        assert_eq!(pool.manifest.units, 1);
        let a = &pool.tasks[0];
        assert_eq!((a.dataset.as_str(), a.run), ("a", 0));
        // On a: knn's 2 distinct + tree's 3 + 2 defaults have curves; b's knn config has none.
        assert_eq!(a.curves.iter().filter(|c| !c.is_empty()).count(), 7);
        // The repeated configuration keeps its first evaluation (0.70, not 0.71).
        let c10 = names
            .iter()
            .position(|n| n.1.contains("\"n_neighbors\": 10"))
            .unwrap();
        assert_eq!(a.curves[c10].score, vec![0.70]);
        // The failed evaluation reveals no score.
        let c6 = names.iter().position(|n| n.1.contains("6")).unwrap();
        assert_eq!(a.curves[c6].status, vec![Status::Failed]);
        assert!(a.curves[c6].score[0].is_nan());
        // Defaults: one per learner, shared by the datasets; max_depth = null encodes as NaN.
        let dk = pool.defaults[0].unwrap() as usize;
        let dt = pool.defaults[1].unwrap() as usize;
        assert_eq!(pool.tasks[1].curves[dk].score, vec![0.58]);
        assert!(pool.space.values(dt)[0].is_nan());
        // Encodings: n_neighbors 10 on log [1, 100] is 0.5; "distance" is level 1.
        assert_eq!(pool.space.values(c10), &[0.5, 1.0]);
    }

    #[test]
    fn bad_defaults_and_a_missing_config_column_are_named() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cash");
        let dir =
            std::env::temp_dir().join(format!("banditbench-joint-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["traceset.toml", "evaluations.csv", "defaults.csv"] {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
        }
        let defaults = std::fs::read_to_string(src.join("defaults.csv")).unwrap();
        std::fs::write(
            dir.join("defaults.csv"),
            defaults.replace("b,tree", "b,svm"),
        )
        .unwrap();
        let e = format!("{:#}", pool_from_trace_set(&dir).unwrap_err());
        assert!(
            e.contains("defaults.csv: row 4") && e.contains("learner 'svm'"),
            "{e}"
        );
        std::fs::write(
            dir.join("defaults.csv"),
            defaults.replace("b,tree", "z,tree"),
        )
        .unwrap();
        let e = format!("{:#}", pool_from_trace_set(&dir).unwrap_err());
        assert!(e.contains("row 4") && e.contains("dataset z, run 0"), "{e}");
        std::fs::remove_file(dir.join("defaults.csv")).unwrap();
        let ev = std::fs::read_to_string(src.join("evaluations.csv")).unwrap();
        let no_config: String = ev
            .lines()
            .map(|l| l.split(",\"").next().unwrap().trim_end_matches(",config"))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(dir.join("evaluations.csv"), no_config).unwrap();
        let e = format!("{:#}", pool_from_trace_set(&dir).unwrap_err());
        assert!(e.contains("missing column 'config'"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
