//! The Python extension module `banditbench._engine` (the `python` feature; maturin builds it
//! into the wheel, `pyproject.toml`): the command line, runs with progress reported to Python,
//! and in-process Python policies (`family = "python"`).
//!
//! An in-process policy is the same `banditbench.Policy` subclass the protocol runs
//! (`python/banditbench/protocol.py`), built per cell as `cls(cell, **params)`. Its view is one
//! `banditbench.View` per cell whose lists (`pulls`, `arm_clock`, `arm_best`, the pool's `last`,
//! `done`, `config`) are updated in place: with one worker only the arm of the last observation
//! changes, as the protocol's `update` does; with several every entry that differs from what was
//! last written is written again (`CellState::written`). Observations are
//! `banditbench._engine.Observation` objects, with the protocol's attributes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::experiment::{self, Level, Progress, RunOptions, RunSummary};
use crate::policy::external::{ExternalSpec, OnFailure, check_action};
use crate::policy::hosted::{Host, set_host};
use crate::protocol::{
    Action, CellStart, Observation as Obs, Policy, PolicyFailure, View, WorldKind,
};
use crate::rng::Rng;

pyo3::create_exception!(
    _engine,
    BanditbenchError,
    PyException,
    "An error banditbench reports: a bad experiment, trace set or results folder, or a policy that failed; the message names the file, key or cell and what to do."
);

fn to_py(e: anyhow::Error) -> PyErr {
    BanditbenchError::new_err(format!("{e:#}"))
}

/// Run an entry point's body so that a panic (a bug) reaches Python as `BanditbenchError`, which
/// `except Exception` catches, instead of pyo3's `PanicException`, which it does not.
fn guarded<T>(what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match crate::experiment::caught(what, || Ok(f())) {
        Ok(r) => r,
        Err(e) => Err(to_py(e)),
    }
}

/// The text of a Python exception with its traceback.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let tb = e
        .traceback(py)
        .and_then(|t| t.format().ok())
        .unwrap_or_default();
    format!("{tb}{e}")
}

/// Give this thread a Python thread state that lives as long as the thread, once: attaching from
/// a thread without one (the run's worker threads) otherwise creates and destroys a thread state,
/// with its frame stack, at every call (measured: 58 000 round-robin decisions/s instead of
/// about 440 000). Threads that already have one (Python's own) are left alone; a thread without
/// one cannot hold the GIL, so this is safe to call anywhere.
fn keep_thread_state() {
    thread_local! {
        static KEPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    KEPT.with(|kept| {
        if kept.get() {
            return;
        }
        kept.set(true);
        // SAFETY: the interpreter is initialised (this module was imported) and this thread
        // does not hold the GIL (the engine calls policies from detached threads). Ensure
        // creates the thread state and takes the GIL; SaveThread releases the GIL and keeps the
        // state, so later attaches on this thread reuse it. It is left for the thread's life.
        unsafe {
            if pyo3::ffi::PyGILState_GetThisThreadState().is_null() {
                let _ = pyo3::ffi::PyGILState_Ensure();
                let _ = pyo3::ffi::PyEval_SaveThread();
            }
        }
    });
}

/// The objects the Python side registered by policy name (`banditbench.run(policies=...)`).
struct PyHost {
    registered: Mutex<HashMap<String, Py<PyAny>>>,
}

impl PyHost {
    /// The class (or factory) of `spec`'s policy.
    fn factory(&self, py: Python<'_>, spec: &ExternalSpec) -> Result<Py<PyAny>> {
        let class = spec.in_process.as_ref().and_then(|i| i.class.as_deref());
        match class {
            Some(c) => {
                let hosted = py
                    .import("banditbench._hosted")
                    .map_err(|e| anyhow!(describe(py, &e)))?;
                hosted
                    .call_method1("load_class", (c,))
                    .map(Bound::unbind)
                    .map_err(|e| {
                        anyhow!(
                            "python policy '{}': cannot load class '{c}': {}",
                            spec.name,
                            describe(py, &e)
                        )
                    })
            }
            None => {
                let r = self
                    .registered
                    .lock()
                    .map_err(|_| anyhow!("registry poisoned"))?;
                r.get(&spec.name).map(|f| f.clone_ref(py)).ok_or_else(|| {
                    anyhow!(
                        "python policy '{}' has no 'class', and no class is registered under its name; give class = \"file.py:Class\", or pass the class to banditbench.run(..., policies={{\"{}\": MyPolicy}})",
                        spec.name,
                        spec.name
                    )
                })
            }
        }
    }
}

impl Host for &'static PyHost {
    fn check(&self, spec: &ExternalSpec) -> Result<()> {
        Python::attach(|py| self.factory(py, spec).map(|_| ()))
    }

    fn build(&self, spec: Arc<ExternalSpec>, id: String, params_json: String) -> Box<dyn Policy> {
        keep_thread_state();
        let factory = Python::attach(|py| self.factory(py, &spec));
        Box::new(PyPolicy {
            spec,
            id,
            params_json,
            factory,
            cell: "before its cell began".to_string(),
            world: WorldKind::TimeSliced,
            state: None,
            touched: None,
            pending: Vec::new(),
        })
    }
}

/// One cell's Python objects.
struct CellState {
    /// The policy object (its `stats()` is asked at the cell's end).
    policy: Py<PyAny>,
    decide: Py<PyAny>,
    observe: Py<PyAny>,
    view: Py<PyAny>,
    pulls: Py<PyList>,
    clock: Py<PyList>,
    best: Py<PyList>,
    pool: Option<PoolLists>,
    /// With several workers, each arm's entries as last written to the lists (`pulls`, the bits
    /// of `arm_clock`, `arm_best`, the pool's `last`, `done`, `config`): only the arms whose
    /// entries changed are written again, so that a decision costs the arms that changed, not
    /// all arms (a cell of 10 000 random-search trials on 4 workers spent 4.8 s rewriting lists).
    written: Vec<[u64; 6]>,
}

/// The pool world's dict and its lists `last`, `done`, `config`.
type PoolLists = (Py<PyDict>, Py<PyList>, Py<PyList>, Py<PyList>);

/// A Python policy in the replay.
struct PyPolicy {
    spec: Arc<ExternalSpec>,
    id: String,
    params_json: String,
    factory: Result<Py<PyAny>>,
    cell: String,
    world: WorldKind,
    state: Option<CellState>,
    /// The arm of the last observation: its view entries change before the next decision.
    touched: Option<usize>,
    /// Observations not yet handed to Python.
    pending: Vec<Observation>,
}

/// `-inf` (no value yet) as `None`, as the protocol sends it.
fn value(py: Python<'_>, x: f64) -> Py<PyAny> {
    if x == f64::NEG_INFINITY || x.is_nan() {
        py.None()
    } else {
        x.into_pyobject(py).expect("a float").into_any().unbind()
    }
}

impl PyPolicy {
    fn fail(&self, what: String) -> anyhow::Error {
        let keep_going = self.spec.on_failure == OnFailure::Restart;
        PolicyFailure {
            message: format!(
                "python policy {} failed in {}: {what}\n  (on_failure = \"{}\": {}; finished cells are kept)",
                self.id,
                self.cell,
                self.spec.on_failure.as_str(),
                if keep_going {
                    "the run goes on with the other cells and lists this one"
                } else {
                    "the run stops"
                }
            ),
            keep_going,
        }
        .into()
    }

    /// Hand the pending observations to the policy's `observe`, in order.
    fn deliver(&mut self, py: Python<'_>) -> std::result::Result<(), String> {
        let Some(st) = self.state.as_ref() else {
            self.pending.clear();
            return Ok(());
        };
        // The buffer goes back afterwards, so that a step allocates nothing for it.
        let mut pending = std::mem::take(&mut self.pending);
        let mut result = Ok(());
        for o in pending.drain(..) {
            if result.is_ok() {
                result = Py::new(py, o)
                    .and_then(|o| st.observe.bind(py).call1((o,)))
                    .map(drop)
                    .map_err(|e| describe(py, &e));
            }
        }
        self.pending = pending;
        result
    }

    /// Bring the view's lists up to date with `v`.
    fn refresh(&mut self, py: Python<'_>, v: &View<'_>) -> PyResult<()> {
        let st = self.state.as_mut().expect("a cell");
        let mut written = std::mem::take(&mut st.written);
        let st = &*st;
        let view = st.view.bind(py);
        let (pulls, clock, best) = (st.pulls.bind(py), st.clock.bind(py), st.best.bind(py));
        let set = |a: usize| -> PyResult<()> {
            let fresh = a >= pulls.len();
            let put = |l: &Bound<'_, PyList>, x: Py<PyAny>| -> PyResult<()> {
                if fresh { l.append(x) } else { l.set_item(a, x) }
            };
            put(pulls, v.pulls[a].into_pyobject(py)?.into_any().unbind())?;
            put(clock, v.arm_clock[a].into_pyobject(py)?.into_any().unbind())?;
            put(best, value(py, v.arm_best[a]))?;
            if let (Some((_, last, done, config)), Some(p)) = (&st.pool, &v.pool) {
                put(last.bind(py), value(py, p.last[a]))?;
                put(
                    done.bind(py),
                    p.done[a].into_pyobject(py)?.to_owned().into_any().unbind(),
                )?;
                put(
                    config.bind(py),
                    p.config[a].into_pyobject(py)?.into_any().unbind(),
                )?;
            }
            Ok(())
        };
        if v.workers > 1 {
            // Several arms change between decisions: write every entry that differs from what
            // was written last (a Python policy that edits the lists keeps its edits until the
            // engine's entry changes, as with one worker).
            for a in 0..v.n_arms {
                let entry = [
                    v.pulls[a],
                    v.arm_clock[a].to_bits(),
                    v.arm_best[a].to_bits(),
                    v.pool.as_ref().map_or(0, |p| p.last[a].to_bits()),
                    v.pool.as_ref().map_or(0, |p| u64::from(p.done[a])),
                    v.pool.as_ref().map_or(0, |p| u64::from(p.config[a])),
                ];
                if a < written.len() && a < pulls.len() && written[a] == entry {
                    continue;
                }
                set(a)?;
                if a < written.len() {
                    written[a] = entry;
                } else {
                    written.push(entry);
                }
            }
            view.setattr(pyo3::intern!(py, "worker"), v.worker)?;
            view.setattr(pyo3::intern!(py, "now"), v.now)?;
            let pending = PyList::empty(py);
            for p in v.pending {
                pending.append((p.arm, p.worker, p.since).into_pyobject(py)?)?;
            }
            view.setattr(pyo3::intern!(py, "pending"), pending)?;
        } else if let Some(a) = self.touched.take().filter(|&a| a < v.n_arms) {
            set(a)?;
        }
        view.setattr(pyo3::intern!(py, "step"), v.step)?;
        view.setattr(pyo3::intern!(py, "used"), v.used)?;
        if v.workers == 1 {
            view.setattr(pyo3::intern!(py, "now"), v.used)?;
        }
        if let (Some((pool, ..)), Some(p)) = (&st.pool, &v.pool) {
            pool.bind(py)
                .set_item(pyo3::intern!(py, "undrawn"), p.undrawn)?;
        }
        if let Some(st) = self.state.as_mut() {
            st.written = written;
        }
        Ok(())
    }
}

/// An action as Python returned it: an arm index, or an instance of one of
/// `banditbench.protocol`'s action classes (a subclass too), decided by `isinstance` as the
/// protocol's encoder decides, never by the class's name (a user's own class named `Draw` is
/// not an action).
fn action_of(a: &Bound<'_, PyAny>) -> std::result::Result<Action, String> {
    let bad = || {
        format!(
            "decide returned {}; return an arm index (int), Draw(), Draw(to=unit), Train(arm, to=unit), Mutate(arm), Choose(config), Choose(config, to=unit), Stop() or Wait()",
            a.repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "an object".into())
        )
    };
    if let Ok(i) = a.extract::<i64>() {
        if a.is_instance_of::<pyo3::types::PyBool>() {
            return Err(bad());
        }
        return usize::try_from(i)
            .map(Action::Pull)
            .map_err(|_| format!("decide returned arm {i}; arms are numbered from 0"));
    }
    let py = a.py();
    static CLASSES: pyo3::sync::PyOnceLock<Vec<Py<PyAny>>> = pyo3::sync::PyOnceLock::new();
    const NAMES: [&str; 7] = [
        "Draw", "Train", "Stop", "Wait", "Mutate", "Choose", "Retrain",
    ];
    let classes = CLASSES
        .get_or_try_init(py, || -> PyResult<Vec<Py<PyAny>>> {
            let m = py.import("banditbench.protocol")?;
            NAMES
                .iter()
                .map(|n| m.getattr(*n).map(Bound::unbind))
                .collect()
        })
        .map_err(|e| format!("cannot read banditbench.protocol's actions: {e}"))?;
    let which = classes
        .iter()
        .position(|c| a.is_instance(c.bind(py)).unwrap_or(false))
        .map(|i| NAMES[i]);
    let field = |f: &str| -> std::result::Result<i64, String> {
        a.getattr(f)
            .and_then(|x| x.extract::<i64>())
            .map_err(|_| bad())
    };
    let to = || -> std::result::Result<Option<u32>, String> {
        match a.getattr("to") {
            Ok(x) if x.is_none() => Ok(None),
            Ok(x) => x
                .extract::<i64>()
                .ok()
                .and_then(|t| u32::try_from(t).ok())
                .map(Some)
                .ok_or_else(bad),
            Err(_) => Ok(None),
        }
    };
    match which {
        Some("Draw") => Ok(to()?.map_or(Action::Draw, Action::DrawTo)),
        Some("Train") => {
            let arm = usize::try_from(field("arm")?).map_err(|_| bad())?;
            let t = to()?.ok_or_else(bad)?;
            Ok(Action::Train(arm, t))
        }
        Some("Retrain") => {
            let arm = usize::try_from(field("arm")?).map_err(|_| bad())?;
            let from = u32::try_from(field("start")?).map_err(|_| bad())?;
            let t = to()?.ok_or_else(bad)?;
            Ok(Action::Retrain(arm, from, t))
        }
        Some("Stop") => Ok(Action::Stop),
        Some("Wait") => Ok(Action::Wait),
        Some("Mutate") => usize::try_from(field("arm")?)
            .map(Action::Mutate)
            .map_err(|_| bad()),
        Some("Choose") => {
            let c = u32::try_from(field("config")?).map_err(|_| bad())?;
            Ok(to()?.map_or(Action::Choose(c), |t| Action::ChooseTo(c, t)))
        }
        _ => Err(bad()),
    }
}

impl Policy for PyPolicy {
    fn begin(&mut self, c: &CellStart<'_>) -> Result<()> {
        keep_thread_state();
        self.cell = c.describe();
        self.world = c.world;
        self.touched = None;
        self.pending.clear();
        self.state = None;
        let factory = match &self.factory {
            Ok(f) => f,
            Err(e) => return Err(self.fail(format!("{e:#}"))),
        };
        let made = Python::attach(|py| -> PyResult<CellState> {
            let kw = PyDict::new(py);
            kw.set_item("cell", c.cell)?;
            kw.set_item("seed", c.seed)?;
            kw.set_item("repetition", c.repetition)?;
            kw.set_item("task", &c.task)?;
            kw.set_item("dataset", c.dataset)?;
            kw.set_item("world", c.world.as_str())?;
            kw.set_item("unit", c.unit.as_str())?;
            kw.set_item("budget", c.budget)?;
            kw.set_item("budget_abs", c.budget_abs)?;
            kw.set_item("slice", c.slice_abs)?;
            kw.set_item("workers", c.workers)?;
            kw.set_item("arms", PyList::new(py, &c.arms)?)?;
            kw.set_item("policy", &self.spec.name)?;
            // Several objectives, in any world (the pool keeps its own copy).
            if !c.all_objectives().is_empty() {
                kw.set_item("objectives", objective_list(py, c.all_objectives())?)?;
            }
            if let Some(p) = &c.pool {
                let d = PyDict::new(py);
                d.set_item("units", p.units)?;
                d.set_item("configs", p.configs)?;
                d.set_item("learners", PyList::new(py, &p.learners)?)?;
                d.set_item("defaults", PyList::new(py, &p.defaults)?)?;
                if !p.objectives.is_empty() {
                    d.set_item("objectives", objective_list(py, &p.objectives)?)?;
                }
                kw.set_item("pool", d)?;
            }
            static START: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
            let space = match (&c.pool, self.spec.pool_space) {
                (Some(p), true) => Some(crate::policy::external::space_json(p)),
                _ => None,
            };
            let made = START.import(py, "banditbench._hosted", "start")?.call1((
                factory.bind(py),
                kw,
                self.params_json.as_str(),
                space,
            ))?;
            let t = made.cast::<PyTuple>()?;
            let obj = t.get_item(0)?;
            let pool = t.get_item(5)?;
            Ok(CellState {
                policy: obj.clone().unbind(),
                decide: obj.getattr("decide")?.unbind(),
                observe: obj.getattr("observe")?.unbind(),
                view: t.get_item(1)?.unbind(),
                pulls: t.get_item(2)?.cast_into::<PyList>()?.unbind(),
                clock: t.get_item(3)?.cast_into::<PyList>()?.unbind(),
                best: t.get_item(4)?.cast_into::<PyList>()?.unbind(),
                written: Vec::new(),
                pool: if pool.is_none() {
                    None
                } else {
                    let d = pool.cast_into::<PyDict>()?;
                    let list = |k: &str| -> PyResult<Py<PyList>> {
                        Ok(d.get_item(k)?
                            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(k.to_string()))?
                            .cast_into::<PyList>()?
                            .unbind())
                    };
                    Some((
                        list("last")?,
                        list("done")?,
                        list("config")?,
                        d.clone().unbind(),
                    ))
                    .map(|(l, dn, cf, d)| (d, l, dn, cf))
                },
            })
        });
        match made {
            Ok(s) => {
                self.state = Some(s);
                Ok(())
            }
            Err(e) => {
                let text = Python::attach(|py| describe(py, &e));
                Err(self.fail(format!("building it raised:\n{text}")))
            }
        }
    }

    fn try_decide(&mut self, v: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        let got = Python::attach(|py| -> std::result::Result<Action, String> {
            self.deliver(py)
                .map_err(|e| format!("observe raised:\n{e}"))?;
            self.refresh(py, v).map_err(|e| describe(py, &e))?;
            let st = self.state.as_ref().expect("a cell");
            let a = st
                .decide
                .bind(py)
                .call1((st.view.bind(py),))
                .map_err(|e| format!("decide raised:\n{}", describe(py, &e)))?;
            action_of(&a)
        });
        got.and_then(|a| check_action(a, v.n_arms, self.world))
            .map_err(|e| self.fail(e))
    }

    fn observe(&mut self, obs: &Obs<'_>) {
        self.touched = Some(obs.arm);
        // Handed to Python with the next decision (or at the cell's end): one attach per step.
        self.pending.push(Observation {
            arm: obs.arm,
            reward: obs.reward,
            arm_clock: obs.arm_clock,
            exhausted: obs.exhausted,
            objectives: (!obs.objectives.is_empty()).then(|| {
                obs.objectives
                    .iter()
                    .map(|&x| (!x.is_nan()).then_some(x))
                    .collect()
            }),
            revealed: obs
                .revealed
                .iter()
                .map(|r| (r.time, r.ok.then_some(r.reward)))
                .collect(),
        });
    }

    fn finish(&mut self) -> Result<Option<String>> {
        let flushed = Python::attach(|py| self.deliver(py));
        if let Err(e) = flushed {
            return Err(self.fail(format!("observe raised:\n{e}")));
        }
        let st = self.state.take();
        let stats = Python::attach(|py| -> std::result::Result<Option<String>, String> {
            static STATS: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
            let Some(s) = &st else { return Ok(None) };
            let text = STATS
                .import(py, "banditbench.protocol", "stats_json")
                .and_then(|f| f.call1((s.policy.bind(py),)))
                .and_then(|t| t.extract::<Option<String>>())
                .map_err(|e| format!("stats() raised:\n{}", describe(py, &e)))?;
            drop(st);
            match text {
                None => Ok(None),
                Some(t) => serde_json::from_str(&t)
                    .map_err(|e| format!("stats() gave text that is not JSON ({e})"))
                    .and_then(|v| {
                        crate::protocol::policy_stats(v)
                            .map_err(|e| format!("at the end of the cell {e}"))
                    }),
            }
        });
        stats.map_err(|e| self.fail(e))
    }
}

impl Drop for PyPolicy {
    fn drop(&mut self) {
        // Python objects are released with the interpreter attached.
        let st = self.state.take();
        let f = std::mem::replace(&mut self.factory, Err(anyhow!("dropped")));
        if st.is_some() || f.is_ok() {
            Python::attach(|_py| {
                drop(st);
                drop(f);
            });
        }
    }
}

/// What one pull revealed (the protocol's `observe` message).
#[pyclass(frozen, module = "banditbench._engine")]
struct Observation {
    /// The pulled arm.
    #[pyo3(get)]
    arm: usize,
    /// The pull's reward, `None` when it has none.
    #[pyo3(get)]
    reward: Option<f64>,
    /// The arm's clock after the pull.
    #[pyo3(get)]
    arm_clock: f64,
    /// The arm's trace had nothing left.
    #[pyo3(get)]
    exhausted: bool,
    /// Several objectives: the arm's value of each at its last trained unit (None where it
    /// records none), in the order of the cell's `pool["objectives"]`; None with one objective.
    #[pyo3(get)]
    objectives: Option<Vec<Option<f64>>>,
    revealed: Vec<(f64, Option<f64>)>,
}

#[pymethods]
impl Observation {
    /// Every evaluation the pull revealed, as `[time, reward or None]` pairs.
    #[getter]
    fn revealed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let l = PyList::empty(py);
        for (t, r) in &self.revealed {
            l.append(PyList::new(
                py,
                [
                    t.into_pyobject(py)?.into_any(),
                    r.into_pyobject(py)?.into_any(),
                ],
            )?)?;
        }
        Ok(l)
    }

    fn __repr__(&self) -> String {
        format!(
            "Observation(arm={}, reward={:?}, arm_clock={}, exhausted={}{})",
            self.arm,
            self.reward,
            self.arm_clock,
            self.exhausted,
            match &self.objectives {
                Some(v) => format!(", objectives={v:?}"),
                None => String::new(),
            }
        )
    }
}

/// A run's progress, handed to a Python object with `start(line, cells)`, `advance(n)`,
/// `note(level, text)` and `finish(summary_or_None)`; an interrupt (Ctrl-C, a notebook's stop
/// button) stops the run between chunks of cells, keeping the finished ones.
struct PyProgress(Py<PyAny>, std::sync::atomic::AtomicBool);

impl PyProgress {
    fn call(
        &self,
        name: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) {
        Python::attach(|py| {
            let r = args(py).and_then(|a| self.0.bind(py).call_method1(name, a));
            if let Err(e) = r {
                // A Ctrl-C that arrives while Python runs this callback (e.g. the warning of a
                // note before the first cell) is raised here, and Python's signal flag is spent:
                // remember it, so the run stops at its next check.
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    self.1.store(true, std::sync::atomic::Ordering::Relaxed);
                } else {
                    e.print(py);
                }
            }
        });
    }
}

impl Progress for PyProgress {
    fn interrupted(&self) -> bool {
        if self.1.load(std::sync::atomic::Ordering::Relaxed) {
            return true;
        }
        // Python runs its signal handlers here (on the thread that called `run`, Python's main
        // thread in a notebook); a KeyboardInterrupt they raise stops the run.
        let hit = Python::attach(|py| py.check_signals().is_err());
        if hit {
            self.1.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        hit
    }
    fn note(&self, level: Level, text: &str) {
        self.call("note", |py| PyTuple::new(py, [level.as_str(), text]));
    }
    fn start(&self, line: &str, cells: usize) {
        self.call("start", |py| {
            PyTuple::new(
                py,
                [
                    line.into_pyobject(py)?.into_any(),
                    cells.into_pyobject(py)?.into_any(),
                ],
            )
        });
    }
    fn resumed(&self, cells: usize) {
        self.call("resumed", |py| PyTuple::new(py, [cells]));
    }
    fn advance(&self, cells: usize) {
        self.call("advance", |py| PyTuple::new(py, [cells]));
    }
    fn finish(&self, summary: Option<&RunSummary>) {
        self.call("finish", |py| {
            let s = match summary {
                Some(s) => summary_dict(py, s)?.into_any(),
                None => py.None().into_bound(py),
            };
            PyTuple::new(py, [s])
        });
    }
}

/// A run's summary as Python's progress and `Session.finish` give it.
fn summary_dict<'py>(py: Python<'py>, s: &RunSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ran", s.ran)?;
    d.set_item("already_done", s.already_done)?;
    d.set_item("seconds", s.seconds)?;
    d.set_item("out", s.out.display().to_string())?;
    if let Some(c) = s.cache {
        d.set_item("cache_hits", c.hits)?;
        d.set_item("cache_stored", c.stored)?;
        d.set_item("cache_damaged", c.corrupt)?;
    }
    Ok(d)
}

/// `cache` as Python gives it: a folder, "" for the default one, or None.
fn cache_dir(cache: Option<PathBuf>) -> PyResult<Option<PathBuf>> {
    Ok(match cache {
        Some(d) if d.as_os_str().is_empty() => {
            Some(experiment::cache::default_cache_dir().map_err(to_py)?)
        }
        other => other,
    })
}

/// Parse `argv` (without the program name) and run it with the GIL released, a panic caught:
/// the command line's refusal, or the command's outcome.
fn run_argv(
    py: Python<'_>,
    argv: Vec<String>,
) -> std::result::Result<anyhow::Result<std::process::ExitCode>, clap::Error> {
    let args = std::iter::once("banditbench".to_string()).chain(argv);
    let parsed = crate::cli::parse_from(args)?;
    Ok(py.detach(|| crate::experiment::caught("banditbench", || crate::cli::dispatch(parsed))))
}

/// Run the command line with `argv` (without the program name); returns the exit code. Errors
/// print as the binary prints them.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    match run_argv(py, argv) {
        Err(e) => {
            let _ = e.print();
            e.exit_code()
        }
        Ok(Ok(code)) if code == std::process::ExitCode::SUCCESS => 0,
        Ok(Ok(_)) => 1,
        Ok(Err(e)) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}

/// An error of `report` or `import_runs`, its message reworded for keywords (`pairs=` where
/// the command line says `--pairs`).
fn keyword_error(e: anyhow::Error, keys: &[&str]) -> PyErr {
    BanditbenchError::new_err(crate::options::as_keywords(&format!("{e:#}"), keys))
}

/// `report` on the options given by name (`options`: a JSON object of `ReportRequest`'s keys,
/// the command line's flags with `_` for `-`); returns (report folder, the ranking in words,
/// files written). A failure raises `BanditbenchError` with its whole message.
#[pyfunction]
fn report(py: Python<'_>, options: String) -> PyResult<(String, String, Vec<String>)> {
    use crate::report::request::{ReportRequest, report};
    let keys = crate::options::keys::<ReportRequest>();
    guarded("report", || {
        let req = ReportRequest::from_json(&options).map_err(|e| keyword_error(e, keys))?;
        let summary = py
            .detach(|| crate::experiment::caught("report", || report(&req)))
            .map_err(|e| keyword_error(e, keys))?;
        Ok((
            summary.out.display().to_string(),
            summary.text,
            summary
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect(),
        ))
    })
}

/// `import` of `tool`'s files at `paths` into `out`, the options given by name (`options`: a
/// JSON object, the command line's flags with `_` for `-`); returns (what was imported in
/// words, notes). `tool = "blackbox"` imports one blackbox folder into a pool.
#[pyfunction]
fn import_runs(
    py: Python<'_>,
    tool: String,
    paths: Vec<PathBuf>,
    out: PathBuf,
    options: String,
) -> PyResult<(String, Vec<String>)> {
    use crate::import::request;
    let keys = request::keys(&tool);
    guarded("import_runs", || {
        let done = if tool == "blackbox" {
            let [dir] = paths.as_slice() else {
                return Err(BanditbenchError::new_err(format!(
                    "import blackbox: give one blackbox folder, not {}",
                    paths.len()
                )));
            };
            let value = crate::options::keywords("import blackbox", &options)
                .map(serde_json::Value::Object)
                .map_err(to_py)?;
            let opts = crate::options::from_value("import blackbox", value)
                .map_err(|e| keyword_error(e, &keys))?;
            py.detach(|| {
                crate::experiment::caught("import", || request::import_pool(dir, &out, &opts))
            })
            .map(|text| (text, Vec::new()))
        } else {
            let req = request::request_from_json(&tool, paths, out, &options)
                .map_err(|e| keyword_error(e, &keys))?;
            py.detach(|| crate::experiment::caught("import", || request::import(&req)))
                .map(|i| (i.describe(), i.notes))
        };
        done.map_err(|e| keyword_error(e, &keys))
    })
}

/// Run the experiment file `path`; returns (results folder, notes). `progress` receives the
/// run's progress (see `PyProgress`). `cache`: the cell cache's folder, "" for the default one.
#[pyfunction]
#[pyo3(signature = (path, out=None, threads=None, batch_size=None, fresh=false, progress=None, cache=None, cache_min_s=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    path: PathBuf,
    out: Option<PathBuf>,
    threads: Option<usize>,
    batch_size: Option<usize>,
    fresh: bool,
    progress: Option<Py<PyAny>>,
    cache: Option<PathBuf>,
    cache_min_s: Option<f64>,
) -> PyResult<(String, Vec<(String, String)>)> {
    guarded("run", || {
        if threads == Some(0) || batch_size == Some(0) {
            return Err(BanditbenchError::new_err(
                "threads and batch_size are at least 1",
            ));
        }
        let (exp, data) = experiment::prepare(&path).map_err(to_py)?;
        let notes: Vec<(String, String)> = data
            .notices(&exp)
            .into_iter()
            .map(|(warning, text)| {
                (
                    if warning { "warning" } else { "note" }.to_string(),
                    text.to_string(),
                )
            })
            .collect();
        let opts = RunOptions {
            out,
            threads,
            batch_size,
            shard: None,
            fresh,
            cache: cache_dir(cache)?,
            cache_min_s,
        };
        let progress = progress.map(|p| PyProgress(p, false.into()));
        let summary = py.detach(|| -> Result<RunSummary> {
            match &progress {
                Some(p) => experiment::run_experiment(&exp, &data, &opts, p),
                None => experiment::run_experiment(&exp, &data, &opts, &experiment::Silent),
            }
        });
        let interrupted = progress.is_some_and(|p| p.1.load(std::sync::atomic::Ordering::Relaxed));
        let summary = summary.map_err(|e| {
            if interrupted {
                pyo3::exceptions::PyKeyboardInterrupt::new_err(format!("{e:#}"))
            } else {
                to_py(e)
            }
        })?;
        Ok((summary.out.display().to_string(), notes))
    })
}

/// Register `factory` (a `banditbench.Policy` subclass) as the in-process policy `name`.
#[pyfunction]
fn register(name: String, factory: Py<PyAny>) -> PyResult<()> {
    HOST.registered
        .lock()
        .map_err(|_| BanditbenchError::new_err("the policy registry is poisoned"))?
        .insert(name, factory);
    Ok(())
}

static HOST: std::sync::LazyLock<PyHost> = std::sync::LazyLock::new(|| PyHost {
    registered: Mutex::new(HashMap::new()),
});

/// The ranking `run` prints: (policy, mean rank, mean score, units) rows, best first, and what it
/// rests on in words.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn ranking(py: Python<'_>, folder: PathBuf) -> PyResult<(Vec<(String, f64, f64, usize)>, String)> {
    let (ranks, units) = guarded("ranking", || {
        py.detach(|| crate::report::ranking(&folder)).map_err(to_py)
    })?;
    Ok((
        ranks
            .into_iter()
            .map(|r| (r.policy, r.mean_rank, r.mean_score, r.n_units))
            .collect(),
        units.table.describe(),
    ))
}

/// Every built-in policy: (name, summary, source, worlds, worlds on several workers,
/// [(parameter, default, kind, doc)]).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn policies() -> Vec<(
    String,
    String,
    String,
    Vec<String>,
    Vec<String>,
    Vec<(String, String, String, String)>,
)> {
    crate::policy::registry()
        .iter()
        .map(|f| {
            (
                f.name.to_string(),
                f.summary.to_string(),
                f.source.to_string(),
                f.worlds.iter().map(|w| w.as_str().to_string()).collect(),
                f.parallel.iter().map(|w| w.as_str().to_string()).collect(),
                f.params
                    .iter()
                    .map(|p| {
                        (
                            p.name.to_string(),
                            p.default.to_string(),
                            crate::policy::kind_text(&p.kind),
                            p.doc.to_string(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The trace sets and pools under `folder`: (folder, kind, metric, size, description) rows.
#[pyfunction]
fn trace_sets(folder: PathBuf) -> PyResult<Vec<[String; 5]>> {
    guarded("trace_sets", || {
        crate::trace::inspect::list_rows(&folder).map_err(to_py)
    })
}

/// The experiment file `name` names: the path itself, or a bundled experiment by name
/// (`quickstart`) or by its path in a clone (`experiments/quickstart.toml`), from any folder.
#[pyfunction]
fn experiment_file(name: PathBuf) -> PyResult<String> {
    guarded("experiment_file", || {
        crate::bundled::experiment(&name)
            .map(|p| p.display().to_string())
            .map_err(to_py)
    })
}

/// A grid pool's learners and dimensions as JSON, `{"pool", "units", "learners", "space"}` with
/// `"space"` as the protocol's `start` carries it (`banditbench.space`): `pool` is a pool's
/// folder, or a bundled pool's name (`sklearn-grid`) from any folder.
#[pyfunction]
fn pool_space(pool: String) -> PyResult<String> {
    guarded("pool_space", || {
        let dir = crate::bundled::traces(std::path::Path::new("."), &pool);
        let (m, space) = if crate::trace::pool::is_pool(&dir) {
            let m =
                crate::trace::pool::read_pool_manifest(&dir.join("pool.toml")).map_err(to_py)?;
            let space = crate::trace::pool::grid_space(&m, &[]);
            (m, space)
        } else if crate::trace::joint::is_trace_set(&dir) {
            // A trace set's joint pool: each learner's space from its recorder's description.
            let p = crate::trace::joint::pool_from_trace_set(&dir).map_err(to_py)?;
            (p.manifest, p.space)
        } else {
            return Err(BanditbenchError::new_err(format!(
                "{pool}: neither a configuration pool (a folder with pool.toml, such as traces/sklearn-grid) nor a trace set with recorded spaces (traceset.toml, such as traces/sklearn-random)"
            )));
        };
        let learners: Vec<&str> = m.learners.iter().map(|l| l.name.as_str()).collect();
        Ok(format!(
            "{{\"pool\":{},\"units\":{},\"learners\":{},\"space\":{}}}",
            serde_json::Value::from(m.name.as_str()),
            m.units,
            serde_json::Value::from(learners),
            crate::policy::external::dims_json(&space.learners)
        ))
    })
}

/// The extension module.
#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    set_host(Box::new(&*HOST));
    m.add("BanditbenchError", m.py().get_type::<BanditbenchError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Observation>()?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(import_runs, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_chunk, m)?)?;
    m.add_class::<RunSession>()?;
    m.add_function(wrap_pyfunction!(register, m)?)?;
    m.add_function(wrap_pyfunction!(ranking, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(trace_sets, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_file, m)?)?;
    m.add_function(wrap_pyfunction!(pool_space, m)?)?;
    Ok(())
}

/// An open run whose cells are replayed elsewhere (Dask workers, by `run_chunk`) and handed back
/// here in chunks: the results folder's lock is held, each chunk is published as a part as it
/// arrives, and `finish` merges, as a local run does (`experiment::Session`).
#[pyclass(unsendable, module = "banditbench._engine")]
struct RunSession {
    exp: experiment::Experiment,
    data: experiment::Data,
    session: Option<experiment::Session>,
    progress: Option<PyProgress>,
}

impl RunSession {
    fn open_session(&mut self) -> PyResult<&mut experiment::Session> {
        self.session.as_mut().ok_or_else(ended)
    }

    /// The session, ended by the caller (`stop`, `finish`).
    fn take_session(&mut self) -> PyResult<experiment::Session> {
        self.session.take().ok_or_else(ended)
    }
}

fn ended() -> PyErr {
    BanditbenchError::new_err("this run has finished or stopped")
}

#[pymethods]
impl RunSession {
    /// Open a run of the experiment file `path` (notes are returned by `notes`).
    #[new]
    #[pyo3(signature = (path, out=None, fresh=false, cache=None, cache_min_s=None, progress=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        out: Option<PathBuf>,
        fresh: bool,
        cache: Option<PathBuf>,
        cache_min_s: Option<f64>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<RunSession> {
        guarded("run", || {
            let (exp, data) = experiment::prepare(&path).map_err(to_py)?;
            let opts = RunOptions {
                out,
                fresh,
                cache: cache_dir(cache)?,
                cache_min_s,
                ..RunOptions::default()
            };
            let progress = progress.map(|p| PyProgress(p, false.into()));
            let session = py.detach(|| match &progress {
                Some(p) => experiment::Session::open(&exp, &data, &opts, p),
                None => experiment::Session::open(&exp, &data, &opts, &experiment::Silent),
            });
            Ok(RunSession {
                session: Some(session.map_err(to_py)?),
                exp,
                data,
                progress,
            })
        })
    }

    /// The data's notes and warnings: (level, text).
    fn notes(&self) -> Vec<(String, String)> {
        self.data
            .notices(&self.exp)
            .into_iter()
            .map(|(w, t)| (if w { "warning" } else { "note" }.to_string(), t))
            .collect()
    }

    /// The cells still to replay, in order.
    fn todo(&mut self) -> PyResult<Vec<u64>> {
        Ok(self.open_session()?.todo_from(0).collect())
    }

    /// The results folder.
    fn out(&mut self) -> PyResult<String> {
        Ok(self.open_session()?.out().display().to_string())
    }

    /// A chunk's bytes from `run_chunk`: published as a part at once.
    fn accept(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<()> {
        let chunk = experiment::ChunkOutput::from_bytes(chunk).map_err(to_py)?;
        let session = self.session.as_mut().ok_or_else(ended)?;
        let progress = &self.progress;
        py.detach(|| match progress {
            Some(p) => session.accept_chunk(chunk, p),
            None => session.accept_chunk(chunk, &experiment::Silent),
        })
        .map_err(to_py)
    }

    /// Stop the run (an error elsewhere, or an interrupt): publish what finished and merge;
    /// returns the message that says what was kept and how to go on.
    fn stop(&mut self, py: Python<'_>, error: String, interrupted: bool) -> PyResult<String> {
        let session = self.take_session()?;
        let e = py.detach(|| session.stop(anyhow!(error), interrupted));
        Ok(format!("{e:#}"))
    }

    /// Merge the parts into the final files; returns the summary (as progress's `finish`).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let session = self.take_session()?;
        let summary = py.detach(|| session.finish());
        if let Some(p) = &self.progress {
            p.finish(summary.as_ref().ok());
        }
        summary_dict(py, &summary.map_err(to_py)?)
    }
}

/// What `run_chunk` keeps between calls in a worker process: the last experiment it prepared
/// (its file's path and content, the cache options) with its data and cell runner, so that a
/// worker loads the data once, not once per chunk.
type Prepared = (
    (PathBuf, Vec<u8>, Option<PathBuf>, Option<u64>),
    std::sync::Arc<(
        experiment::Experiment,
        experiment::Data,
        experiment::session::CellRunner,
    )>,
);
static PREPARED: std::sync::Mutex<Option<Prepared>> = std::sync::Mutex::new(None);

/// Replay the cells `indices` of the experiment file `path` in this process, one after
/// another, through the cell cache when one is given; returns the chunk's bytes for
/// `RunSession.accept`. A Dask task calls this.
#[pyfunction]
#[pyo3(signature = (path, indices, cache=None, cache_min_s=None))]
fn run_chunk<'py>(
    py: Python<'py>,
    path: PathBuf,
    indices: Vec<u64>,
    cache: Option<PathBuf>,
    cache_min_s: Option<f64>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    guarded("run_chunk", || {
        let cache = cache_dir(cache)?;
        let text = std::fs::read(&path).map_err(|e| {
            to_py(anyhow!(
                "{}: cannot read the experiment file: {e}",
                path.display()
            ))
        })?;
        let key = (
            path.clone(),
            text,
            cache.clone(),
            cache_min_s.map(f64::to_bits),
        );
        let bytes = py.detach(|| -> Result<Vec<u8>> {
            let prepared = {
                let mut memo = PREPARED.lock().map_err(|_| anyhow!("poisoned"))?;
                match memo.as_ref() {
                    Some((k, p)) if *k == key => p.clone(),
                    _ => {
                        let (exp, data) = experiment::prepare(&path)?;
                        let opts = RunOptions {
                            cache,
                            cache_min_s,
                            ..RunOptions::default()
                        };
                        let runner = experiment::session::CellRunner::new(&exp, &data, &opts)?;
                        let p = std::sync::Arc::new((exp, data, runner));
                        *memo = Some((key, p.clone()));
                        p
                    }
                }
            };
            let (exp, data, runner) = &*prepared;
            experiment::run_chunk(exp, data, runner, &indices)?.to_bytes()
        });
        Ok(pyo3::types::PyBytes::new(py, &bytes.map_err(to_py)?))
    })
}

/// Several objectives as Python sees them: a list of `{"name", "direction"}` dicts.
fn objective_list<'py>(
    py: Python<'py>,
    objectives: &[(&str, bool)],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for &(name, maximize) in objectives {
        let o = PyDict::new(py);
        o.set_item("name", name)?;
        o.set_item("direction", if maximize { "maximize" } else { "minimize" })?;
        list.append(o)?;
    }
    Ok(list)
}
