"""banditbench's share of a library optimizer's decision (`banditbench bench --only adapters`).

For each adapter and method below (those whose library is installed), one cell on a recorded pool
task runs in-process on one thread, one worker, with the library's own calls timed (CPU time,
`time.process_time`): Optuna's `study.ask`/`study.tell`, Syne Tune's scheduler methods,
Nevergrad's and SMAC3's `ask`/`tell`. Everything else in the cell is banditbench's:

- the adapter's bookkeeping: the policy's `decide` and `observe` less the library's calls and
  less the timers' own cost (measured on a no-op, times the timed calls);
- the engine and the route between Rust and Python: the rest of the cell's CPU time (the run's
  time less its fixed start and finish, measured by the same cell with a budget of one training).

Syne Tune's BOHB gets a third of the budget (its model's cost grows with the configurations it
has tried, many at unit 1). Prints one line per method:
    method=NAME decisions=N library_us=X adapter_us=Y engine_us=Z share=S
with microseconds per decision and share = (adapter + engine) / library.

    python scripts/reference/adapters_timing.py --pool traces/sklearn-grid --dataset phoneme \
        --learner mlp --trainings 60
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import tempfile
import time

# Optuna samples when a trial's parameters are suggested, so its Study and Trial methods are timed
# (the sampler runs inside them).
OPTUNA = ("optuna.study:Study", ("ask", "tell"), "optuna.trial:Trial",
          ("suggest_categorical", "suggest_int", "suggest_float", "report", "should_prune"))
# (label, adapter module, class, params, what is timed: the library object's attribute and its
# methods, or pairs of "module:Class" and methods)
METHODS = [
    ("optuna-tpe", "optuna", "OptunaSampler", {"sampler": "tpe"}, None, OPTUNA),
    ("optuna-cmaes", "optuna", "OptunaSampler", {"sampler": "cmaes"}, None, OPTUNA),
    ("optuna-random", "optuna", "OptunaSampler", {"sampler": "random"}, None, OPTUNA),
    ("syne-tune-bohb", "syne_tune", "SyneTuneScheduler", {"scheduler": "bohb"}, "scheduler",
     ("suggest", "on_trial_add", "on_trial_result", "on_trial_complete", "on_trial_remove",
      "on_trial_error")),
    ("syne-tune-tpe", "syne_tune", "SyneTuneScheduler", {"scheduler": "tpe"}, "scheduler",
     ("suggest", "on_trial_add", "on_trial_result", "on_trial_complete", "on_trial_remove",
      "on_trial_error")),
    ("nevergrad-ngopt", "nevergrad", "NevergradOptimizer", {"optimizer": "NGOpt"}, "optimizer",
     ("ask", "tell")),
    ("smac-hpo", "smac", "SMACFacade", {"facade": "hpo"}, "smac", ("ask", "tell")),
    ("smac-multi-fidelity", "smac", "SMACFacade", {"facade": "multi-fidelity"}, "smac",
     ("ask", "tell")),
]
LIBRARY = {"optuna": "optuna", "syne_tune": "syne_tune", "nevergrad": "nevergrad",
           "smac": "smac"}


def timer(f, clock):
    """`f` with its CPU time added to clock["library"] (the outermost timed call only)."""

    def wrapped(*a, **k):
        clock["calls"] += 1
        clock["depth"] += 1
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            clock["depth"] -= 1
            if clock["depth"] == 0:
                clock["library"] += time.process_time() - t

    return wrapped


def wrapper_cost() -> float:
    """CPU seconds one timed call adds (the timer's own calls), measured on a no-op; subtracted
    from the adapter's time per timed call."""
    clock = dict(library=0.0, depth=0, calls=0)
    f = timer(lambda: None, clock)
    g = lambda: None  # noqa: E731
    n = 200_000
    t = time.process_time()
    for _ in range(n):
        f()
    timed = time.process_time() - t
    t = time.process_time()
    for _ in range(n):
        g()
    plain = time.process_time() - t
    return max(0.0, timed - plain) / n


def patch_classes(spec, clock):
    """Time the methods of the classes in `spec`; returns how to undo it."""
    undo = []
    for target, methods in zip(spec[::2], spec[1::2]):
        module, name = target.split(":")
        cls = getattr(importlib.import_module(module), name)
        for m in methods:
            f = cls.__dict__.get(m)
            if f is not None:
                setattr(cls, m, timer(f, clock))
                undo.append((cls, m, f))
    return undo


def timed_class(base, attr, methods, clock):
    """`base` with the library's calls and the policy's decide/observe timed into `clock`."""

    class Timed(base):
        def __init__(self, cell, **params):
            t0 = time.process_time()
            super().__init__(cell, **params)
            clock["setup"] += time.process_time() - t0
            if attr is None:
                return
            obj = getattr(self, attr)
            for name in methods:
                f = getattr(obj, name, None)
                if f is not None:
                    setattr(obj, name, timer(f, clock))

        def decide(self, view):
            clock["calls"] += 1
            t = time.process_time()
            try:
                return super().decide(view)
            finally:
                clock["policy"] += time.process_time() - t
                clock["decisions"] += 1

        def observe(self, obs):
            clock["calls"] += 1
            t = time.process_time()
            try:
                return super().observe(obs)
            finally:
                clock["policy"] += time.process_time() - t

    return Timed


def run_cell(bb, cls, params, pool, dataset, learner, trainings, out):
    exp = {
        "name": "adapters-timing", "traces": pool, "seed": 3, "repetitions": 1,
        "tasks": {"datasets": [dataset], "runs": [0], "learners": [learner]},
        "world": {"kind": "pool", "per_learner": True, "budget_unit": "units",
                  "budgets": [27 * trainings], "workers": 1},
    }
    t = time.process_time()
    bb.run(exp, policies={"timed": (cls, params)}, out=out, progress=False, threads=1)
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--dataset", default="phoneme")
    ap.add_argument("--learner", default="mlp")
    ap.add_argument("--trainings", type=int, default=60)
    ap.add_argument("--only", default="", help="comma-separated labels")
    a = ap.parse_args()

    import banditbench as bb

    only = {s for s in a.only.split(",") if s}
    overhead = wrapper_cost()
    for label, module, cls_name, params, attr, methods in METHODS:
        if only and label not in only:
            continue
        if importlib.util.find_spec(LIBRARY[module]) is None:
            print(f"method={label} skipped=not-installed")
            continue
        # Syne Tune's BOHB tries many configurations at unit 1 and its model's cost grows with
        # them: a third of the budget keeps its cell under a minute.
        trainings = max(1, a.trainings // 3) if label == "syne-tune-bohb" else a.trainings
        mod = importlib.import_module(f"banditbench.adapters.{module}")
        base = getattr(mod, cls_name)
        with tempfile.TemporaryDirectory() as tmp:
            # The run's fixed cost: the same cell with a budget of one training, run twice (the
            # first pays for the imports) before the measured cell.
            for i in range(2):
                fixed_clock = dict(setup=0.0, library=0.0, policy=0.0, decisions=0, depth=0, calls=0)
                undo = patch_classes(methods, fixed_clock) if attr is None else []
                fixed = run_cell(bb, timed_class(base, attr, methods, fixed_clock), params,
                                 a.pool, a.dataset, a.learner, 1, os.path.join(tmp, f"fixed{i}"))
                for cls, m, f in undo:
                    setattr(cls, m, f)
            fixed -= fixed_clock["policy"] + fixed_clock["setup"]
            clock = dict(setup=0.0, library=0.0, policy=0.0, decisions=0, depth=0, calls=0)
            undo = patch_classes(methods, clock) if attr is None else []
            total = run_cell(bb, timed_class(base, attr, methods, clock), params, a.pool,
                             a.dataset, a.learner, trainings, os.path.join(tmp, "cell"))
            for cls, m, f in undo:
                setattr(cls, m, f)
        n = max(1, clock["decisions"])
        library = clock["library"]
        adapter = max(0.0, clock["policy"] - library - clock["calls"] * overhead)
        engine = max(0.0, total - clock["policy"] - clock["setup"] - fixed)
        print(f"method={label} decisions={n} library_us={library / n * 1e6:.1f} "
              f"adapter_us={adapter / n * 1e6:.1f} engine_us={engine / n * 1e6:.1f} "
              f"share={(adapter + engine) / max(library, 1e-12):.4f}", flush=True)


if __name__ == "__main__":
    main()
