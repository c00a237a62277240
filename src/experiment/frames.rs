//! The two results files' rows, one schema for every world (results format 5; the columns are
//! listed in README, "Results format"): `runs.parquet` has one row per cell, with the pool
//! world's own columns null in learner-level worlds; `trajectories.parquet` one row per decision.

use anyhow::Result;
use polars::prelude::*;

use super::cell::{Cell, CellResult, PoolPart};
use super::data::Data;
use super::spec::Experiment;
use super::store::Names;
use crate::replay::ActionKind;

/// A JSON object from names to numbers, keys in sorted order, built by hand (this runs once per
/// cell; a `serde_json::Value` per cell cost a sixth of a cheap run).
pub(crate) struct JsonObject {
    /// (position in the value slice, `"name":`), sorted by name.
    keys: Vec<(usize, String)>,
}

impl JsonObject {
    pub(crate) fn new<S: AsRef<str>>(names: &[S]) -> JsonObject {
        let mut keys: Vec<(usize, String)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let quoted = serde_json::to_string(n.as_ref()).unwrap_or_else(|_| "\"\"".into());
                (i, format!("{quoted}:"))
            })
            .collect();
        keys.sort_by(|a, b| a.1.cmp(&b.1));
        JsonObject { keys }
    }

    /// The object over every name, values by position.
    #[cfg(test)]
    pub(crate) fn with<T: itoa::Integer + Copy>(&self, values: &[T]) -> String {
        let mut out = String::new();
        self.ints_kept_into(&[], values, &mut out);
        out
    }

    /// The same for floats: shortest round-trip form (ryu's), `null` for NaN and infinities.
    #[cfg(test)]
    pub(crate) fn with_f64(&self, values: &[f64]) -> String {
        let mut out = String::new();
        self.floats_kept_into(&[], values, &mut out);
        out
    }

    /// The object over the names whose `keep` is true (all when `keep` is empty), appended to
    /// `out`.
    pub(crate) fn ints_kept_into<T: itoa::Integer + Copy>(
        &self,
        keep: &[bool],
        values: &[T],
        out: &mut String,
    ) {
        let mut buf = itoa::Buffer::new();
        self.write(out, |i, out| match values.get(i) {
            Some(&v) if keep.is_empty() || keep.get(i) == Some(&true) => {
                out.push_str(buf.format(v));
                true
            }
            _ => false,
        })
    }

    /// The same for floats: shortest round-trip form (ryu's), `null` for NaN and infinities.
    pub(crate) fn floats_kept_into(&self, keep: &[bool], values: &[f64], out: &mut String) {
        let mut buf = ryu::Buffer::new();
        self.write(out, |i, out| match values.get(i) {
            Some(_) if !(keep.is_empty() || keep.get(i) == Some(&true)) => false,
            Some(&v) if v.is_finite() => {
                out.push_str(buf.format_finite(v));
                true
            }
            Some(_) => {
                out.push_str("null");
                true
            }
            None => false,
        })
    }

    /// The object over the names whose `keep` is true only.
    #[cfg(test)]
    pub(crate) fn subset<T: itoa::Integer + Copy>(&self, keep: &[bool], values: &[T]) -> String {
        let mut out = String::new();
        if keep.iter().any(|&k| k) {
            self.ints_kept_into(keep, values, &mut out);
        } else {
            out.push_str("{}");
        }
        out
    }

    /// Append the object to `out`; `value(i, out)` appends the value of name `i` and says
    /// whether there was one.
    fn write(&self, out: &mut String, mut value: impl FnMut(usize, &mut String) -> bool) {
        let start = out.len();
        out.push('{');
        for (i, k) in &self.keys {
            let mark = out.len();
            if out.len() > start + 1 {
                out.push(',');
            }
            out.push_str(k);
            if !value(*i, out) {
                out.truncate(mark);
            }
        }
        out.push('}');
    }
}

/// A string column of `n` rows, row `i` written by `row(i, out)` into a buffer reused across
/// rows (no string is allocated per row).
pub(crate) fn text_column(name: &str, n: usize, mut row: impl FnMut(usize, &mut String)) -> Column {
    let mut values = polars_arrow::array::MutableBinaryViewArray::<str>::with_capacity(n);
    let mut buf = String::new();
    for i in 0..n {
        buf.clear();
        row(i, &mut buf);
        values.push_value(buf.as_str());
    }
    StringChunked::with_chunk(name.into(), values.freeze())
        .into_series()
        .into()
}

pub(crate) use crate::results::nan_as_null;

/// Where a cell's identity comes from: its cell and its task's dataset and run.
pub(crate) struct Identity<'a> {
    pub cell: &'a Cell,
    pub dataset: &'a str,
    pub run: i64,
    pub budget_abs: f64,
    pub seed: u64,
}

/// The columns every world writes first, identifying each cell: experiment, cell, dataset, run,
/// budget, budget_unit, budget_abs, then `between` (world-specific), then policy_family, policy,
/// params, repetition, seed. Policy ids and parameters are formatted once per policy (and
/// dataset, for per-dataset parameters), not once per cell.
pub(crate) fn identity_columns(
    exp: &Experiment,
    rows: &[Identity<'_>],
    between: Vec<Column>,
) -> Vec<Column> {
    use std::collections::HashMap;
    let h = rows.len();
    let ids: Vec<String> = exp.policies.iter().map(|p| p.id()).collect();
    let plain: Vec<Option<String>> = exp
        .policies
        .iter()
        .map(|p| p.per_dataset.is_empty().then(|| p.params_json()))
        .collect();
    let mut per_dataset: HashMap<(usize, &str), String> = HashMap::new();
    for r in rows {
        let p = r.cell.policy;
        if plain[p].is_none() {
            per_dataset
                .entry((p, r.dataset))
                .or_insert_with(|| exp.policies[p].params_json_for(r.dataset));
        }
    }
    let params: Vec<&str> = rows
        .iter()
        .map(|r| {
            let p = r.cell.policy;
            plain[p]
                .as_deref()
                .unwrap_or_else(|| per_dataset[&(p, r.dataset)].as_str())
        })
        .collect();
    let mut cols = vec![
        Column::new("experiment".into(), vec![exp.name.as_str(); h]),
        Column::new(
            "cell".into(),
            rows.iter().map(|r| r.cell.index).collect::<Vec<u64>>(),
        ),
        Column::new(
            "dataset".into(),
            rows.iter().map(|r| r.dataset).collect::<Vec<&str>>(),
        ),
        Column::new(
            "run".into(),
            rows.iter().map(|r| r.run).collect::<Vec<i64>>(),
        ),
        Column::new(
            "budget".into(),
            rows.iter()
                .map(|r| exp.world.budgets[r.cell.budget])
                .collect::<Vec<f64>>(),
        ),
        Column::new("budget_unit".into(), vec![exp.world.unit.as_str(); h]),
        Column::new(
            "budget_abs".into(),
            rows.iter().map(|r| r.budget_abs).collect::<Vec<f64>>(),
        ),
    ];
    cols.extend(between);
    cols.extend([
        Column::new(
            "policy_family".into(),
            rows.iter()
                .map(|r| exp.policies[r.cell.policy].family_name())
                .collect::<Vec<&str>>(),
        ),
        Column::new(
            "policy".into(),
            rows.iter()
                .map(|r| ids[r.cell.policy].as_str())
                .collect::<Vec<&str>>(),
        ),
        Column::new("params".into(), params),
        Column::new(
            "repetition".into(),
            rows.iter().map(|r| r.cell.repetition).collect::<Vec<u32>>(),
        ),
        Column::new(
            "seed".into(),
            rows.iter().map(|r| r.seed).collect::<Vec<u64>>(),
        ),
    ]);
    cols
}

/// The rows of a trajectories frame (sorted by cell and step) that `mode` keeps: all; each
/// cell's first decision and those after which its incumbent (with several objectives, or its
/// archive's hypervolume regret) changed; or none.
pub fn keep_decisions(df: DataFrame, mode: super::TrajectoryMode) -> Result<DataFrame> {
    use super::TrajectoryMode as M;
    match mode {
        M::EveryDecision => Ok(df),
        M::None => Ok(df.clear()),
        M::IncumbentChanges => {
            let cell = df.column("cell")?.u64()?;
            let inc = df.column("incumbent")?.f64()?;
            // Absent from frames of older results formats: every value null, never a change.
            let hv = match df.column("hv_regret") {
                Ok(c) => c.f64()?.clone(),
                Err(_) => Float64Chunked::full_null("hv_regret".into(), df.height()),
            };
            let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
                (None, None) => true,
                _ => false,
            };
            let keep: BooleanChunked = (0..df.height())
                .map(|i| {
                    i == 0
                        || cell.get(i) != cell.get(i - 1)
                        || !same(inc.get(i), inc.get(i - 1))
                        || !same(hv.get(i), hv.get(i - 1))
                })
                .collect();
            Ok(df.filter(&keep)?)
        }
    }
}

/// The names the trajectories' `action` column codes (`ActionKind` order).
const ACTIONS: [ActionKind; 5] = [
    ActionKind::Pull,
    ActionKind::Draw,
    ActionKind::Mutate,
    ActionKind::Choose,
    ActionKind::Retrain,
];

fn action_code(a: ActionKind) -> u32 {
    match a {
        ActionKind::Pull => 0,
        ActionKind::Draw => 1,
        ActionKind::Mutate => 2,
        ActionKind::Choose => 3,
        ActionKind::Retrain => 4,
    }
}

/// The trajectory columns that hold codes the store writes as names.
pub(crate) const CODED: &[&str] = &["action", "learner"];

/// Trajectory columns that hold codes the store writes as names: `action` and `learner`.
pub(crate) fn coded(data: &Data) -> Vec<(String, Names)> {
    vec![
        (
            CODED[0].to_string(),
            ACTIONS.map(|a| a.as_str().to_string()).to_vec().into(),
        ),
        (CODED[1].to_string(), data.learners().to_vec().into()),
    ]
}

fn part(r: &CellResult) -> Option<&PoolPart> {
    r.outcome.pool.as_ref()
}

/// One row per cell: identity, outcome, counts, the world and the data, then the pool world's
/// columns (null elsewhere).
pub(crate) fn runs_frame(
    results: &[CellResult],
    cells: &[Cell],
    exp: &Experiment,
    data: &Data,
) -> Result<DataFrame> {
    let h = results.len();
    // `cells` holds every result's cell, sorted by index.
    let cell = |r: &CellResult| {
        let i = cells.partition_point(|c| c.index < r.index);
        &cells[i]
    };
    let rows: Vec<Identity<'_>> = results
        .iter()
        .map(|r| {
            let (dataset, run) = data.task_key(cell(r).task);
            Identity {
                cell: cell(r),
                dataset,
                run,
                budget_abs: r.budget_abs,
                seed: r.seed,
            }
        })
        .collect();
    let f = |f: &dyn Fn(&CellResult) -> f64| -> Vec<f64> { results.iter().map(f).collect() };
    let of = |name: &str, f: &dyn Fn(&CellResult) -> f64| -> Column {
        nan_as_null(name, results.iter().map(f).collect())
    };
    let u = |f: &dyn Fn(&CellResult) -> u64| -> Vec<u64> { results.iter().map(f).collect() };
    let learners = data.learners();
    let json = JsonObject::new(learners);
    let keep = |r: &CellResult| data.kept_learners(cell(r).task);
    let mut cols = identity_columns(exp, &rows, vec![of("slice_abs", &|r| r.slice_abs)]);
    let jp = text_column("pulls", h, |i, out| {
        let r = &results[i];
        json.ints_kept_into(keep(r), &r.outcome.pulls, out)
    });
    let jt = text_column("time_s", h, |i, out| {
        let r = &results[i];
        json.floats_kept_into(keep(r), &r.outcome.time_s, out)
    });
    let overhead = exp.world.overhead().describe();
    cols.extend([
        of("best_score", &|r| r.outcome.best_score),
        of("best_test_score", &|r| r.outcome.best_test_score),
        Column::new(
            "best_learner".into(),
            results
                .iter()
                .map(|r| r.outcome.best_arm.map(|a| learners[a].as_str()))
                .collect::<Vec<Option<&str>>>(),
        ),
        of("best_found_at", &|r| r.outcome.best_found_at),
        jp,
        jt,
        Column::new("decisions".into(), u(&|r| r.decisions)),
        Column::new("budget_used".into(), f(&|r| r.used)),
        Column::new("overhead_s".into(), f(&|r| r.overhead_s)),
        Column::new(
            "workers".into(),
            results.iter().map(|r| r.workers).collect::<Vec<u32>>(),
        ),
        Column::new("makespan_s".into(), f(&|r| r.makespan_s)),
        Column::new("idle_s".into(), f(&|r| r.idle_s)),
        Column::new("failures".into(), u(&|r| r.failures)),
        Column::new("exhausted_pulls".into(), u(&|r| r.exhausted_pulls)),
        Column::new("exhausted_budget".into(), f(&|r| r.exhausted_budget)),
        Column::new("replay".into(), vec![exp.world.kind().as_str(); h]),
        Column::new("overhead_model".into(), vec![overhead.as_str(); h]),
        Column::new("trace_set".into(), vec![data.name(); h]),
        Column::new("trace_source".into(), vec![data.source(); h]),
        Column::new("direction".into(), vec![data.direction().as_str(); h]),
    ]);
    cols.extend(pool_columns(results, &cell, exp, data));
    cols.extend(objective_columns(results));
    Ok(DataFrame::new_infer_height(cols)?)
}

/// The pool world's own columns (null in learner-level worlds), and `policy_stats`.
fn pool_columns<'a>(
    results: &'a [CellResult],
    cell: &dyn Fn(&CellResult) -> &'a Cell,
    exp: &'a Experiment,
    data: &'a Data,
) -> Vec<Column> {
    let h = results.len();
    let pu = |f: &dyn Fn(&PoolPart) -> u64| -> Vec<Option<u64>> {
        results.iter().map(|r| part(r).map(f)).collect()
    };
    let pool = data.pool();
    let recommended = |r: &CellResult| part(r).and_then(|p| p.recommended);
    let config = |r: &CellResult| {
        recommended(r).and_then(|x| pool.map(|p| &p.pool.configs[x.config as usize]))
    };
    let (incumbent_rule, recommendation_rule) = match &exp.world.options {
        super::WorldOptions::Pool(o) => {
            (Some(o.incumbent.as_str()), Some(o.recommendation.as_str()))
        }
        _ => (None, None),
    };
    vec![
        Column::new(
            "pool_scope".into(),
            results
                .iter()
                .map(|r| data.scope(cell(r).task))
                .collect::<Vec<Option<&str>>>(),
        ),
        Column::new("configs_drawn".into(), pu(&|p| p.configs_drawn)),
        Column::new("mutations".into(), pu(&|p| p.mutations)),
        Column::new("mutation_fallbacks".into(), pu(&|p| p.mutation_fallbacks)),
        Column::new("units_trained".into(), pu(&|p| p.units_trained)),
        Column::new(
            "recommended_config".into(),
            results
                .iter()
                .map(|r| config(r).map(|c| c.id))
                .collect::<Vec<Option<u32>>>(),
        ),
        Column::new(
            "recommended_unit".into(),
            results
                .iter()
                .map(|r| recommended(r).map(|x| x.unit))
                .collect::<Vec<Option<u32>>>(),
        ),
        Column::new(
            "recommended_params".into(),
            results
                .iter()
                .map(|r| config(r).map(|c| c.config.as_str()))
                .collect::<Vec<Option<&str>>>(),
        ),
        Column::new("incumbent_rule".into(), vec![incumbent_rule; h]),
        Column::new("recommendation_rule".into(), vec![recommendation_rule; h]),
        Column::new(
            "policy_stats".into(),
            results
                .iter()
                .map(|r| r.policy_stats.as_deref())
                .collect::<Vec<Option<&str>>>(),
        ),
    ]
}

/// Several objectives: the archive's indicators (null with one objective).
fn objective_columns(results: &[CellResult]) -> Vec<Column> {
    let mo = |f: &dyn Fn(&super::objectives::MoOutcome) -> f64| -> Vec<Option<f64>> {
        // Infinite (IGD+ and ε of an empty archive): null, as a cell that found nothing.
        results
            .iter()
            .map(|r| r.objectives.as_ref().map(f).filter(|v| v.is_finite()))
            .collect()
    };
    vec![
        Column::new("hypervolume".into(), mo(&|m| m.hypervolume)),
        Column::new("hv_regret".into(), mo(&|m| m.hv_regret)),
        Column::new("igd_plus".into(), mo(&|m| m.igd_plus)),
        Column::new("epsilon_additive".into(), mo(&|m| m.epsilon_additive)),
        Column::new(
            "front_size".into(),
            results
                .iter()
                .map(|r| r.objectives.as_ref().map(|m| m.front_size))
                .collect::<Vec<Option<u64>>>(),
        ),
    ]
}

/// Every decision of every cell, in order: the action, the arm, its learner (coded; the store
/// writes the name), its configuration (the pool's `config_id`; null in learner-level worlds),
/// its pulls or units after the decision, the budget, reward and incumbent after it, and the
/// worker that ran it with its simulated wall-clock start and finish.
pub(crate) fn trajectories_frame(results: &[CellResult], data: &Data) -> Result<DataFrame> {
    let n: usize = results.iter().map(|r| r.steps.len()).sum();
    let mut cell = Vec::with_capacity(n);
    let mut step = Vec::with_capacity(n);
    let mut action = Vec::with_capacity(n);
    let mut arm = Vec::with_capacity(n);
    let mut learner = Vec::with_capacity(n);
    let mut fidelity = Vec::with_capacity(n);
    let mut time = Vec::with_capacity(n);
    let mut reward = Vec::with_capacity(n);
    let mut inc = Vec::with_capacity(n);
    let mut worker = Vec::with_capacity(n);
    let mut start = Vec::with_capacity(n);
    let mut finish = Vec::with_capacity(n);
    let mut ids = Vec::new();
    let several = results.iter().any(|r| !r.hv_regret_steps.is_empty());
    let mut hv_regret = Vec::with_capacity(if several { n } else { 0 });
    // Column by column per cell: each `extend` is a tight loop.
    for r in results {
        let s = &r.steps;
        cell.extend(std::iter::repeat_n(r.index, s.len()));
        step.extend(1..=s.len() as u32);
        action.extend(s.iter().map(|s| action_code(s.action)));
        arm.extend(s.iter().map(|s| s.arm));
        fidelity.extend(s.iter().map(|s| s.fidelity));
        time.extend(s.iter().map(|s| s.time));
        inc.extend(s.iter().map(|s| s.incumbent));
        reward.extend(s.iter().map(|s| s.reward));
        worker.extend(s.iter().map(|s| s.worker));
        start.extend(s.iter().map(|s| s.start));
        finish.extend(s.iter().map(|s| s.finish));
        if several {
            hv_regret.extend(&r.hv_regret_steps);
        }
        match data {
            // A learner-level arm is its learner.
            Data::Traces(..) => learner.extend(s.iter().map(|s| s.config)),
            Data::Pool(p) => {
                let configs = &p.pool.configs;
                learner.extend(s.iter().map(|s| configs[s.config as usize].learner as u32));
                ids.extend(s.iter().map(|s| configs[s.config as usize].id));
            }
        }
    }
    let config = match data {
        Data::Traces(..) => UInt32Chunked::full_null("config".into(), n).into_column(),
        Data::Pool(_) => UInt32Chunked::from_vec("config".into(), ids).into_column(),
    };
    // Columns over the vectors built here, not copies of them.
    Ok(DataFrame::new_infer_height(vec![
        UInt64Chunked::from_vec("cell".into(), cell).into_column(),
        UInt32Chunked::from_vec("step".into(), step).into_column(),
        UInt32Chunked::from_vec("action".into(), action).into_column(),
        UInt32Chunked::from_vec("arm".into(), arm).into_column(),
        UInt32Chunked::from_vec("learner".into(), learner).into_column(),
        config,
        UInt32Chunked::from_vec("fidelity".into(), fidelity).into_column(),
        Float64Chunked::from_vec("time".into(), time).into_column(),
        nan_as_null("reward", reward),
        nan_as_null("incumbent", inc),
        UInt32Chunked::from_vec("worker".into(), worker).into_column(),
        Float64Chunked::from_vec("start".into(), start).into_column(),
        Float64Chunked::from_vec("finish".into(), finish).into_column(),
        if several {
            Float64Chunked::from_vec("hv_regret".into(), hv_regret).into_column()
        } else {
            Float64Chunked::full_null("hv_regret".into(), n).into_column()
        },
    ])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_objects_are_sorted_escaped_and_parse_back() {
        let j = JsonObject::new(&["b", "a\"q", "c"]);
        assert_eq!(j.with(&[1u64, 2, 3]), r#"{"a\"q":2,"b":1,"c":3}"#);
        assert_eq!(
            j.with_f64(&[0.5, f64::NAN, 1e-7]),
            r#"{"a\"q":null,"b":0.5,"c":1e-7}"#
        );
        assert_eq!(
            j.subset(&[true, false, true], &[1, 2, 3]),
            r#"{"b":1,"c":3}"#
        );
        assert_eq!(j.subset(&[false, false, false], &[1, 2, 3]), "{}");
        let v: serde_json::Value = serde_json::from_str(&j.with_f64(&[3.0, 2.25, 1e300])).unwrap();
        assert_eq!(v["b"].as_f64(), Some(3.0));
        assert_eq!(v["c"].as_f64(), Some(1e300));
        // Every number, repeated or not, reads back to the same bits.
        let names: Vec<String> = (0..40).map(|i| format!("l{i:02}")).collect();
        let xs: Vec<f64> = (0..40)
            .map(|i| match i % 4 {
                0 | 1 => 0.041_212_29,
                2 => 1.0 / (i as f64 + 3.0),
                _ => -(i as f64) * 1e-9,
            })
            .collect();
        let v: serde_json::Value =
            serde_json::from_str(&JsonObject::new(&names).with_f64(&xs)).unwrap();
        for (n, x) in names.iter().zip(&xs) {
            assert_eq!(v[n].as_f64().map(f64::to_bits), Some(x.to_bits()), "{n}");
        }
    }
}
