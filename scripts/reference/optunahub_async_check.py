"""OptunaHub's AsyncOptBenchmarkSimulator against banditbench's Optuna adapter on K workers.

Issue #45's third exactness check: Optuna's TPE with ``constant_liar`` on 4 workers through
banditbench's adapter (``banditbench.adapters.optuna.OptunaSampler`` on the pool world's exact
event clock) and through OptunaHub's ``AsyncOptBenchmarkSimulator``
(optuna/optunahub-registry, ``package/benchmarks/async_opt_simulator``, MIT; no package on PyPI,
so its one module file is given with ``--simulator``), its sampling time set to zero: the
module's ``time.time`` is replaced by a clock that stands still, so that its clock advances by the
recorded runtimes only, as banditbench's does with no overhead model.

The table is wrapped as the simulator's problem: ``search_space`` is banditbench's own Optuna
space of the learner (``banditbench.adapters.space``), a trial's parameters name one configuration
of the grid, the objective returns its recorded score at unit ``--to`` (the study maximises, as
the adapter's does) and ``runtime_func`` its recorded seconds of units 1 .. ``--to``, as the pool
world charges them (each unit's ``cost_s`` as float32, summed in float64). Both sides seed
``TPESampler(seed=cell seed mod 2^32, **options)``; the adapter's cells run with a budget of
``--budget`` simulated seconds, the simulator with ``timeout`` = the same.

For every seed the script writes both sides' trials in ask order, (number, parameters, value,
ask time), and compares them: the longest common prefix and, where they part, which of the two
simulators' documented rules made them part:
- ``tie``: two trials finished at the same instant. banditbench delivers every completion at an
  instant before any worker decides (free workers then ask in index order); the simulator tells
  the lowest-index worker's result, lets it ask, then tells the next one (its README assumes
  that runtimes are continuous, so that no two trials finish together);
- ``duplicate``: a trial suggested a configuration running on another worker. banditbench's
  adapter tells it that work's score when it finishes and the worker waits meanwhile; the
  simulator trains the duplicate (the table returns the same value) on the asking worker;
- ``budget``: the prefixes agree to the end of the shorter, which ends at the budget (the
  simulator asks while the next free worker's clock is ≤ the timeout, banditbench starts work
  while the clock is below the budget). A trial that finishes after the budget is compared as
  untold: banditbench's pool world cuts its work at the budget, the simulator tells it (a
  charged repeat of a configuration evaluated before is told that score, the adapter's rule);
- ``unexplained``: none of these, a defect of one of them.

    git --git-dir=REGISTRY.git show \\
        ee680199100edbd95e0000eb20696c3ec5505973:package/benchmarks/async_opt_simulator/async_opt_simulator.py \\
        > /tmp/async_opt_simulator.py
    pip install -r python/requirements-optuna.txt -r python/requirements-test.txt
    python scripts/reference/optunahub_async_check.py --simulator /tmp/async_opt_simulator.py \\
        --seeds 10 --out scripts/reference/optunahub-async

Writes OUT.csv (one row per seed), OUT.md (the table and the rules) and OUT-trials.json (the
simulator's trials per seed: the fixture python/tests/test_adapters_optunahub_async.py compares
the adapter against, in CI, where the registry is not reachable).
Pinned: optuna==5.0.0 (python/requirements-optuna.txt); the simulator module's sha256 below.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import tempfile
import time
import tomllib
import types
from pathlib import Path

import numpy as np
import pandas as pd
from recorded_task import task_table

ROOT = Path(__file__).resolve().parents[2]
# optuna/optunahub-registry at ee680199100edbd95e0000eb20696c3ec5505973 (2026-08-21); the file
# last changed in 62339c2aea37714f7fd01fb1e5de617448101fe8.
REGISTRY_COMMIT = "ee680199100edbd95e0000eb20696c3ec5505973"
PINNED = "20a1d6082d1a388f75e7cc509051af8f722b30cbae988161479865c9e998107b"


def load_simulator(path: str, any_version: bool):
    if not os.path.isfile(path):
        raise SystemExit(f"--simulator {path}: no such file; take async_opt_simulator.py from "
                         f"optunahub-registry at {REGISTRY_COMMIT} (this script's docstring "
                         "says how)")
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != PINNED and not any_version:
        raise SystemExit(f"{path}: sha256 {digest} is not the pinned module's ({PINNED}); take it "
                         f"from optunahub-registry at {REGISTRY_COMMIT}, or pass --any-version")
    spec = importlib.util.spec_from_file_location("async_opt_simulator", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Sampling time zero: the module measures each ask with time.time(); a clock that stands
    # still makes every measured interval 0.0 (its own code otherwise unchanged).
    module.time = types.SimpleNamespace(time=lambda: 0.0)
    return module, digest


class Table:
    """One task of a grid pool, as the simulator's problem and runtime function."""

    def __init__(self, pool: str, dataset: str, learner: str, run: int, to: int | None):
        from banditbench.adapters import space
        from banditbench.adapters._grid import GridSpace

        grid = GridSpace.of_pool(pool)
        self.to = to or grid.units
        self.search_space = space(pool, learner=learner)
        self.directions = ["maximize"]
        self.config_of, curves = task_table(pool, dataset, learner, run)
        sign = 1.0
        with open(os.path.join(pool, "pool.toml"), "rb") as f:
            if tomllib.load(f).get("direction") == "minimize":
                sign = -1.0
        at = curves[(curves["unit"] == self.to) & (curves["status"] == "ok")]
        self.score = {int(c): sign * float(v) for c, v in zip(at["config_id"], at["score"])}
        upto = curves[curves["unit"] <= self.to].sort_values(["config_id", "unit"])
        self.seconds = {}
        for c, cost in zip(upto["config_id"], upto["cost_s"]):
            # The pool world keeps cost_s as float32 and sums the units in float64.
            self.seconds[int(c)] = self.seconds.get(int(c), 0.0) + float(np.float32(cost))
        self.names = list(self.search_space)

    def config(self, params) -> int:
        return self.config_of[tuple(int(params[n]) for n in self.names)]

    def __call__(self, trial) -> float:
        return self.score[self.config(trial.params)]

    def runtime(self, trial) -> float:
        return self.seconds[self.config(trial.params)]


def simulator_trials(module, table: Table, seed: int, workers: int, budget: float, options):
    """The simulator's trials in ask order: number, params, value (None while running at the
    end), ask time and finish time; and the CPU seconds of its optimize call."""
    import optuna

    from banditbench.adapters.optuna import STUDY_NAME

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed % 2**32, **options)
    study = optuna.create_study(study_name=STUDY_NAME, direction="maximize", sampler=sampler)
    sim = module.AsyncOptBenchmarkSimulator(n_workers=workers)
    t0 = time.process_time()
    sim.optimize(study=study, problem=table, runtime_func=table.runtime, timeout=budget)
    cpu = time.process_time() - t0
    out = []
    for t in study.get_trials(deepcopy=False):
        out.append({"number": t.number, "params": {k: int(v) for k, v in t.params.items()},
                    "value": t.value, "ask": float(t.user_attrs["before_sample"]),
                    "finish": float(t.user_attrs["cumtime"]),
                    "worker": int(t.user_attrs["worker_id"])})
    return out, cpu


def adapter_trials(pool, dataset, learner, run, to, workers, budget, seeds, options, base_seed):
    """banditbench's adapter: one cell per repetition, its study's trials in ask order with the
    simulated time of each ask, keyed by the cell's seed."""
    import banditbench as bb
    from banditbench.adapters.optuna import OptunaSampler

    class Timed(OptunaSampler):
        studies = {}

        def __init__(self, cell, **params):
            super().__init__(cell, **params)
            self.asked_at = {}
            Timed.studies[cell.seed] = self

        def decide(self, view):
            self.now = float(view.now)
            return super().decide(view)

        def _ask(self):
            trial, key = super()._ask()
            self.asked_at[trial.number] = self.now
            return trial, key

    exp = {"name": "optunahub-async-check", "traces": pool, "seed": base_seed,
           "repetitions": seeds,
           "tasks": {"datasets": [dataset], "runs": [run], "learners": [learner]},
           "world": {"kind": "pool", "per_learner": True, "budget_unit": "seconds",
                     "budgets": [budget], "workers": workers, "incumbent": "best-seen",
                     "recommendation": "best-seen"}}
    params = {"sampler": "tpe", "to": to, "repeat": "charge", "objectives": "score", **options}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.process_time()
        r = bb.run(exp, policies={"optuna-tpe": (Timed, params)}, out=Path(tmp) / "r",
                   progress=False)
        cpu = time.process_time() - t0
        seeds = [int(s) for s in r.runs["seed"]]
    out = {}
    for seed in seeds:
        p = Timed.studies[int(seed)]
        out[int(seed)] = [{"number": t.number, "params": {k: int(v) for k, v in t.params.items()},
                           "value": t.value, "ask": p.asked_at[t.number]}
                          for t in p.study.get_trials(deepcopy=False)]
    return out, cpu


def speed(module, table: Table, a) -> None:
    """Issue #45's speed item: ``--speed N`` random-search trials (Optuna's ``RandomSampler``)
    on ``--workers`` workers through both, CPU seconds of each in this process, one run each,
    side by side. The adapter's cell has a budget of N units with ``to`` = 1 and ``repeat =
    "charge"`` (N trials of one unit each, repeats paid again, as the simulator evaluates them);
    the simulator runs ``n_trials`` = N. Prints one line ``speed trials=... adapter_cpu_s=...
    simulator_cpu_s=... adapter_optuna_cpu_s=... simulator_optuna_cpu_s=...`` (the last two:
    the CPU seconds inside Optuna's ``Study.ask``, ``Study.tell`` and ``Trial._suggest``, the
    floor both share)."""
    import optuna

    import banditbench as bb
    from banditbench.adapters.optuna import STUDY_NAME, OptunaSampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Optuna's own calls: Study.ask, Study.tell and Trial._suggest (the simulator's ask with
    # fixed distributions calls _suggest inside ask; the adapter's define-by-run suggest_int
    # calls it after ask), each timed only where no other of them is running.
    inside = {"s": 0.0, "depth": 0}
    ask, tell, sug = optuna.Study.ask, optuna.Study.tell, optuna.Trial._suggest

    def timed(f):
        def g(*args, **kw):
            inside["depth"] += 1
            t = time.process_time()
            try:
                return f(*args, **kw)
            finally:
                inside["depth"] -= 1
                if inside["depth"] == 0:
                    inside["s"] += time.process_time() - t
        return g

    optuna.Study.ask, optuna.Study.tell = timed(ask), timed(tell)
    optuna.Trial._suggest = timed(sug)
    try:
        exp = {"name": "optunahub-async-speed", "traces": a.pool, "seed": a.seed,
               "repetitions": 1,
               "tasks": {"datasets": [a.dataset], "runs": [a.run], "learners": [a.learner]},
               "world": {"kind": "pool", "per_learner": True, "budget_unit": "units",
                         "budgets": [a.speed * table.to], "workers": a.workers,
                         "incumbent": "best-seen", "recommendation": "best-seen"}}
        params = {"sampler": "random", "to": table.to, "repeat": "charge",
                  "objectives": "score"}
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.process_time()
            r = bb.run(exp, policies={"optuna-random": (OptunaSampler, params)},
                       out=Path(tmp) / "r", progress=False)
            ours = time.process_time() - t0
            trained = int(r.runs["budget_used"].iloc[0]) // table.to
        ours_inside, inside["s"] = inside["s"], 0.0
        seed = int(r.runs["seed"].iloc[0])
        study = optuna.create_study(study_name=STUDY_NAME, direction="maximize",
                                    sampler=optuna.samplers.RandomSampler(seed=seed % 2**32))
        sim = module.AsyncOptBenchmarkSimulator(n_workers=a.workers)
        t0 = time.process_time()
        sim.optimize(study=study, problem=table, runtime_func=table.runtime, n_trials=a.speed)
        theirs = time.process_time() - t0
        told = sum(t.state.is_finished() for t in study.get_trials(deepcopy=False))
    finally:
        optuna.Study.ask, optuna.Study.tell, optuna.Trial._suggest = ask, tell, sug
    print(f"speed trials={a.speed} adapter_trials={trained} simulator_trials={told} "
          f"adapter_cpu_s={ours:.3f} simulator_cpu_s={theirs:.3f} "
          f"adapter_optuna_cpu_s={ours_inside:.3f} simulator_optuna_cpu_s={inside['s']:.3f}")


def compare(ours, theirs, budget):
    """The common prefix of the two ask-ordered sequences, and which rule parts them."""
    n = 0
    for a, b in zip(ours, theirs):
        # A trial that finishes after the budget: banditbench's world cuts its work at the
        # budget, so it is never told; the simulator tells it on its way to the timeout.
        # A charged repeat of a configuration evaluated before is told its recorded score even
        # when the budget cuts the repeat (the adapter's rule, ``WholeTrials.observe``).
        told = b["value"]
        if b["finish"] > budget:
            told = next((t["value"] for t in theirs[:n] if t["params"] == b["params"]
                         and t["finish"] <= budget and t["value"] is not None), None)
        if (a["params"], a["value"], a["ask"]) != (b["params"], told, b["ask"]):
            break
        n += 1
    if n == min(len(ours), len(theirs)):
        return n, "identical" if len(ours) == len(theirs) else "budget"
    # The simulator's view up to the parting trial: a tie among finish times before its ask,
    # or a duplicate of a configuration running at that ask.
    asked = theirs[n]["ask"]
    finishes = [t["finish"] for t in theirs[:n + 1] if t["finish"] <= asked]
    if len(finishes) != len(set(finishes)):
        return n, "tie"
    for t in theirs[:n + 1]:
        for u in theirs[:n + 1]:
            if u["number"] > t["number"] and u["params"] == t["params"] and \
                    t["ask"] <= u["ask"] < t["finish"]:
                return n, "duplicate"
    return n, "unexplained"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simulator", required=True, help="async_opt_simulator.py from the registry")
    ap.add_argument("--any-version", action="store_true")
    ap.add_argument("--pool", default=str(ROOT / "traces" / "hpobench-mlp"))
    ap.add_argument("--dataset", default="vehicle")
    ap.add_argument("--learner", default="mlp")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--to", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--budget", type=float, default=2000.0, help="simulated seconds")
    ap.add_argument("--seeds", type=int, default=10, help="cells (repetitions)")
    ap.add_argument("--seed", type=int, default=2026, help="the experiment's seed")
    ap.add_argument("--options", default='{"constant_liar": true}', help="TPESampler options")
    ap.add_argument("--out", help="output prefix (the check)")
    ap.add_argument("--speed", type=int, default=None,
                    help="instead of the check: time N random-search trials through both")
    a = ap.parse_args()
    options = json.loads(a.options)
    module, digest = load_simulator(a.simulator, a.any_version)
    table = Table(a.pool, a.dataset, a.learner, a.run, a.to)
    if a.speed is not None:
        speed(module, table, a)
        return
    if a.out is None:
        ap.error("--out is required (or --speed N)")
    ours, cpu_ours = adapter_trials(a.pool, a.dataset, a.learner, a.run, a.to, a.workers,
                                    a.budget, a.seeds, options, a.seed)
    rows, fixture, cpu_theirs = [], {}, 0.0
    for seed in sorted(ours):
        theirs, cpu = simulator_trials(module, table, seed, a.workers, a.budget, options)
        cpu_theirs += cpu
        fixture[str(seed)] = theirs
        n, why = compare(ours[seed], theirs, a.budget)
        rows.append({"seed": seed, "trials_adapter": len(ours[seed]),
                     "trials_simulator": len(theirs), "common_prefix": n, "parting": why})
    df = pd.DataFrame(rows)
    df.to_csv(f"{a.out}.csv", index=False)
    meta = {"simulator_sha256": digest, "registry_commit": REGISTRY_COMMIT,
            "pool": os.path.relpath(a.pool, ROOT), "dataset": a.dataset, "learner": a.learner,
            "run": a.run, "to": a.to, "workers": a.workers, "budget": a.budget,
            "experiment_seed": a.seed, "options": options}
    import optuna

    meta["optuna"] = optuna.__version__
    with open(f"{a.out}-trials.json", "w") as f:
        json.dump({"meta": meta, "trials": fixture}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    with open(f"{a.out}.md", "w") as f:
        f.write("# Optuna's TPE with constant_liar on 4 workers: OptunaHub's "
                "AsyncOptBenchmarkSimulator against banditbench's adapter\n\n")
        f.write(f"Generated by `scripts/reference/optunahub_async_check.py` (Optuna "
                f"{optuna.__version__}; the simulator's module from optuna/optunahub-registry at "
                f"{REGISTRY_COMMIT[:7]}, sha256 {digest[:12]}…, its sampling time set to zero) "
                f"on `{meta['pool']}`, task {a.dataset}/{a.learner}/run {a.run}, each trial "
                f"unit {a.to}, {a.workers} workers, {a.budget:g} simulated seconds, "
                f"`TPESampler(seed, **{json.dumps(options)})`, {len(rows)} seeds.\n\n")
        f.write("A row compares both sides' trials in ask order (parameters, value told, "
                "simulated time of the ask): the common prefix, and the rule that parts them "
                "(see the script: `identical`, `budget`, `tie`, `duplicate`, `unexplained`).\n\n")
        f.write("| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns) + "\n" +
                "\n".join("| " + " | ".join(str(v) for v in r) + " |"
                          for r in df.itertuples(index=False)))
        f.write(f"\n\n{int(df['common_prefix'].sum())} of the simulator's "
                f"{int(df['trials_simulator'].sum())} trials lie in the common prefixes (the same "
                f"parameters, value told and simulated ask time, to the bit); "
                f"{int(df['parting'].isin(['identical', 'budget']).sum())} seeds agree on every "
                f"trial; the others part where the script names.")
        f.write(f"\n\nCPU seconds, all {len(rows)} cells: adapter (`bb.run`: the engine, "
                f"Optuna's calls, the pool's load) {cpu_ours:.2f}, simulator (its `optimize` "
                f"calls) {cpu_theirs:.2f}.\n")
    print(df.to_string(index=False))
    print(f"cpu adapter {cpu_ours:.2f} s, simulator {cpu_theirs:.2f} s")
    bad = df[df["parting"] == "unexplained"]
    if len(bad):
        raise SystemExit(f"{len(bad)} seeds part for no documented rule: {bad['seed'].tolist()}")


if __name__ == "__main__":
    main()
