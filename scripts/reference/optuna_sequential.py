"""Optuna's own sequential loop on a grid pool's table, for the exactness check of
banditbench's Optuna adapter (python/tests/test_adapters_optuna.py).

The table is wrapped as an objective function: a trial's suggestion (made by the same
``banditbench.adapters.optuna.suggest`` the adapter uses) names one configuration of the grid,
and the objective returns its recorded score at unit ``--to`` on one task, read here from the
pool's own parquet files (configs.parquet, curves/DATASET__LEARNER__RUN.parquet). A configuration
not recorded on the task, or failed at that unit, raises, which Optuna records as a failed trial.
With ``--pruner`` the objective reports each unit's score (step = unit) and asks the pruner after
each, raising ``optuna.TrialPruned`` when told to. ``study.optimize`` then runs ``--trials``
trials with the sampler seeded as the adapter seeds it.

With ``--objectives a,b`` (objectives of a pool of several, ``[[objectives]]`` in its pool.toml)
the study has one direction per objective, as pool.toml gives them, and the objective returns
their recorded values at unit ``--to``: a ``score`` objective (the metric) from the curves'
score, ``cost_s`` from cost_s, any other from the curves' column of its name; a NaN value raises
(infeasible, a failed trial).

Prints one JSON line per trial: {"number", "state", "params", "value"} ("values", a list, with
several objectives).

Pinned: optuna==5.0.0 (the ``optuna`` extra), pandas and pyarrow from
python/requirements-test.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import optuna

from banditbench.adapters._grid import GridSpace
from banditbench.adapters.optuna import PRUNERS, SAMPLERS, STUDY_NAME, suggest
from recorded_task import task_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", required=True, help="the pool's folder")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", required=True)
    ap.add_argument("--sampler", default="tpe", choices=sorted(SAMPLERS))
    ap.add_argument("--options", default="{}", help="the sampler's options, as JSON")
    ap.add_argument("--seed", type=int, required=True, help="the cell's seed (taken modulo 2^32)")
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--to", type=int, default=None, help="the unit scored (default: the last)")
    ap.add_argument("--ordinal", default="index")
    ap.add_argument("--pruner", default=None, help="an Optuna pruner (the adapter's names)")
    ap.add_argument("--pruner-options", default="{}", help="its options, as JSON")
    ap.add_argument("--objectives", default=None,
                    help="several objectives of the pool, comma-separated (default: its score)")
    a = ap.parse_args()

    grid = GridSpace.of_pool(a.pool)
    to = a.to or grid.units
    learner = grid.learner_index(a.learner)
    config_of, curves = task_table(a.pool, a.dataset, a.learner, a.run)
    at = curves[(curves["unit"] == to) & (curves["status"] == "ok")]
    score = dict(zip(at["config_id"].astype(int), at["score"].astype(float)))
    ok = curves[curves["status"] == "ok"]
    unit_score = {(int(c), int(u)): float(v)
                  for c, u, v in zip(ok["config_id"], ok["unit"], ok["score"])}
    sign = 1.0
    with open(os.path.join(a.pool, "pool.toml"), "rb") as f:
        import tomllib

        manifest = tomllib.load(f)
        if manifest.get("direction") == "minimize":
            sign = -1.0
    # Several objectives: each one's column and direction.
    objectives = []
    if a.objectives:
        declared = {o["name"]: o for o in manifest.get("objectives", [])}
        for name in a.objectives.split(","):
            o = declared[name]
            column = o.get("column") or ("score" if name == manifest["metric"] else name)
            objectives.append((column, o["direction"]))
    values = {int(c): [float(row[col]) for col, _ in objectives]
              for c, (_, row) in zip(at["config_id"], at.iterrows())} if objectives else {}

    def objective(trial: optuna.Trial) -> float:
        _, levels = suggest(trial, grid, [learner], a.ordinal)
        c = config_of.get(levels)
        if c is None or c not in score:
            raise ValueError(f"configuration {levels} has no score at unit {to}")
        if a.pruner is not None:
            # Unit by unit, as a training loop reports to a pruner.
            for u in range(1, to + 1):
                trial.report(sign * unit_score[(c, u)], u)
                if trial.should_prune():
                    raise optuna.TrialPruned()
        if objectives:
            v = values[c]
            if any(x != x for x in v):
                raise ValueError(f"configuration {levels} is infeasible (a NaN objective)")
            return v
        return sign * score[c]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = getattr(optuna.samplers, SAMPLERS[a.sampler])(
            seed=a.seed % 2**32, **json.loads(a.options)
        )
    pruner = None
    if a.pruner is not None:
        pruner = getattr(optuna.pruners, PRUNERS[a.pruner])(**json.loads(a.pruner_options))
    how = ({"directions": [d for _, d in objectives]} if objectives
           else {"direction": "maximize"})
    study = optuna.create_study(study_name=STUDY_NAME, sampler=sampler, pruner=pruner, **how)
    study.optimize(objective, n_trials=a.trials, catch=(ValueError,))
    for t in study.trials:
        told = {"values": t.values} if objectives else {"value": t.value}
        print(json.dumps({"number": t.number, "state": t.state.name, "params": t.params,
                          **told}))


if __name__ == "__main__":
    main()
