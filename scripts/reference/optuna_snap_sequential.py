"""Optuna's own sequential loop on a recorded random sample, with the nearest-configuration rule
written out independently, for the exactness check of the adapters' ``snap`` rule
(python/tests/test_adapters_snap.py).

The sample is one task of a trace set recorded by random search (``traces/sklearn-random``): the
configurations one learner evaluated on (dataset, run), read here from ``evaluations.parquet``
with their ``config`` JSON, and the learner's space from ``traceset.toml``'s
``[[provenance.learners]]`` ``space`` text. Neither goes through banditbench: this script parses
the space, builds Optuna's distributions, encodes every configuration (numeric in [0, 1], log
where the space says log; categorical as its level) and, for each trial's point, finds the
nearest recorded configuration by the README's distance (the sum over dimensions of |a - b| for a
numeric one, 1 per categorical mismatch; ties: the lowest configuration id, the joint pool
numbering configurations by first appearance over the tasks in (dataset, run) order, then seq;
the learner's default configuration, from ``defaults.parquet``, is not among them). ``--snap nearest-open``
prefers configurations not evaluated yet. The objective returns that configuration's recorded
score (a failed one raises, which Optuna records as a failed trial). ``study.optimize`` runs
``--trials`` trials with the sampler seeded as the adapter seeds it.

Prints one JSON line per trial: {"number", "state", "params", "value", "config", "distance"},
``config`` being the snapped configuration's position among the learner's configurations recorded
on the task, in the joint pool's id order.

Scores are rounded to 32-bit floats, as the engine keeps them.

Pinned: optuna==5.0.0 (the ``optuna`` extra), numpy, pandas and pyarrow from
python/requirements-test.txt.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tomllib
import warnings

import numpy as np
import optuna
import pandas as pd

STUDY_NAME = "banditbench"
SAMPLERS = {"tpe": "TPESampler", "random": "RandomSampler", "qmc": "QMCSampler",
            "cmaes": "CmaEsSampler"}


def parse_space(text: str) -> list:
    """`name in {a, b}` and `name int|float [log] [lo, hi]`, separated by `;`."""
    dims = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        if " in " in part:
            name, rest = part.split(" in ", 1)
            choices = [c.strip() for c in rest.strip()[1:-1].split(",")]
            dims.append({"name": name.strip(), "kind": "categorical", "choices": choices})
            continue
        head, rng = part.split("[", 1)
        words = head.split()
        lo, hi = (float(x) for x in rng.rstrip("]").split(","))
        dims.append({"name": words[0], "kind": words[1], "log": words[-1] == "log",
                     "low": lo, "high": hi})
    return dims


def encode(d: dict, v) -> float:
    if d["kind"] == "categorical":
        text = {True: "True", False: "False"}.get(v, v) if isinstance(v, bool) else str(v)
        return float(d["choices"].index(text)) if text in d["choices"] else math.nan
    if v is None:
        return math.nan
    if d["log"]:
        u = (math.log(v) - math.log(d["low"])) / (math.log(d["high"]) - math.log(d["low"]))
    else:
        u = (v - d["low"]) / (d["high"] - d["low"])
    return min(1.0, max(0.0, u))


def distance(dims: list, a: list, b: list) -> float:
    total = 0.0
    for d, x, y in zip(dims, a, b):
        if math.isnan(x) or math.isnan(y):
            total += 0.0 if math.isnan(x) and math.isnan(y) else 1.0
        elif d["kind"] == "categorical":
            total += 0.0 if x == y else 1.0
        else:
            total += abs(x - y)
    return total


def recorded(traces: str, dataset: str, run: int, learner: str):
    """The learner's space (parsed) and its configurations recorded on (dataset, run), as
    (key, encoded values, score or None when failed), in the joint pool's id order (``key``
    orders them: first appearance among the learner's configurations)."""
    with open(os.path.join(traces, "traceset.toml"), "rb") as f:
        manifest = tomllib.load(f)
    text = next(l["space"] for l in manifest["provenance"]["learners"] if l["name"] == learner)
    dims = parse_space(text)
    ev = pd.read_parquet(os.path.join(traces, "evaluations.parquet"))
    ev = ev[ev["learner"] == learner].sort_values(["dataset", "run", "seq"], kind="stable")
    # Configuration ids, as the trace set's joint pool numbers them: by first appearance over
    # the tasks in (dataset, run) order, then seq (one learner's ids keep their order).
    ids = {}
    for cfg in ev["config"]:
        ids.setdefault(cfg, len(ids))
    ev = ev[(ev["dataset"] == dataset) & (ev["run"] == run)]
    # The learner's default configuration (defaults.parquet) is offered only to a policy that
    # asks for defaults by name, never to a library's suggestion: a random draw that equals it
    # is left out too, as the joint pool keeps one configuration per text.
    seen = set()
    defaults = os.path.join(traces, "defaults.parquet")
    if os.path.exists(defaults):
        d = pd.read_parquet(defaults)
        seen = set(d[(d["learner"] == learner) & (d["dataset"] == dataset)
                     & (d["run"] == run)]["config"])
    out = []
    for cfg, status, score in sorted(zip(ev["config"], ev["status"], ev["score"]),
                                     key=lambda row: ids[row[0]]):
        if cfg in seen:
            continue  # a random search that drew it twice: the first evaluation counts
        seen.add(cfg)
        values = json.loads(cfg)
        ok = status is None or status == "ok"
        # Scores as the engine keeps them: 32-bit floats.
        out.append((ids[cfg], [encode(d, values.get(d["name"])) for d in dims],
                    float(np.float32(score)) if ok else None))
    return dims, out


def nearest(dims: list, point: list, candidates: list, evaluated: set, rule: str):
    """(distance, position in ``candidates``) of the configuration ``point`` evaluates."""
    best = None
    for only_open in ((True, False) if rule == "nearest-open" else (False,)):
        for c, (_, values, _) in enumerate(candidates):
            if only_open and c in evaluated:
                continue
            dd = distance(dims, point, values)
            if best is None or dd < best[0]:
                best = (dd, c)
        if best is not None:
            return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", required=True, help="the trace set's folder")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", required=True)
    ap.add_argument("--sampler", default="tpe", choices=sorted(SAMPLERS))
    ap.add_argument("--options", default="{}", help="the sampler's options, as JSON")
    ap.add_argument("--seed", type=int, required=True, help="the cell's seed (taken modulo 2^32)")
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--snap", default="nearest", choices=["nearest", "nearest-open"])
    a = ap.parse_args()

    dims, candidates = recorded(a.traces, a.dataset, a.run, a.learner)

    od = optuna.distributions
    dist = {}
    for d in dims:
        if d["kind"] == "categorical":
            dist[d["name"]] = od.CategoricalDistribution(d["choices"])
        elif d["kind"] == "int":
            dist[d["name"]] = od.IntDistribution(int(d["low"]), int(d["high"]), log=d["log"])
        else:
            dist[d["name"]] = od.FloatDistribution(d["low"], d["high"], log=d["log"])
    evaluated = set()
    snapped = {}

    def suggest(trial: optuna.Trial, d: dict):
        dd = dist[d["name"]]
        if d["kind"] == "categorical":
            return trial.suggest_categorical(d["name"], dd.choices)
        if d["kind"] == "int":
            return trial.suggest_int(d["name"], dd.low, dd.high, log=dd.log)
        return trial.suggest_float(d["name"], dd.low, dd.high, log=dd.log)

    def objective(trial: optuna.Trial) -> float:
        point = [encode(d, suggest(trial, d)) for d in dims]
        best = nearest(dims, point, candidates, evaluated, a.snap)
        snapped[trial.number] = best
        evaluated.add(best[1])
        score = candidates[best[1]][2]
        if score is None:
            raise ValueError(f"configuration {candidates[best[1]][0]} failed")
        return score

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = getattr(optuna.samplers, SAMPLERS[a.sampler])(
            seed=a.seed % 2**32, **json.loads(a.options))
    study = optuna.create_study(study_name=STUDY_NAME, direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=a.trials, catch=(ValueError,))
    for t in study.trials:
        d, c = snapped[t.number]
        print(json.dumps({"number": t.number, "state": t.state.name, "params": t.params,
                          "value": t.value, "config": c, "distance": d}))


if __name__ == "__main__":
    main()
