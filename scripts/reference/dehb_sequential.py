"""DEHB's own `run` loop on one task of a grid pool, one worker: the reference the DEHB adapter
(banditbench.adapters.dehb) is checked against.

The task's recorded curves (configs.parquet, curves/DATASET__LEARNER__RUN.parquet) become DEHB's
objective over the adapter's own ConfigSpace (`configspace`: each dimension's level indices): a job
(config, fidelity) returns fitness = −(the configuration's recorded score at unit
ceil(fidelity)), +inf where the task has none, and cost = the fidelity. DEHB is built as the
adapter builds it (the same seed, η, fidelity range in units, `n_workers=1`) and `run(fevals=N)`
runs it. Prints one JSON line per evaluation, in order: {"config", "unit", "fitness"}.

    python -m venv .venv-dehb && . .venv-dehb/bin/activate
    pip install -r python/requirements-dehb.txt && pip install -e .   # or the wheel
    python scripts/reference/dehb_sequential.py --pool traces/sklearn-grid --dataset phoneme \
        --run 0 --learner mlp --seed 11 --evaluations 100
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import tomllib

import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--evaluations", type=int, required=True)
    ap.add_argument("--eta", type=int, default=3)
    ap.add_argument("--min-unit", type=int, default=1)
    a = ap.parse_args()

    from dehb import DEHB

    from banditbench.adapters._grid import GridSpace
    from banditbench.adapters.dehb import configspace

    grid = GridSpace.of_pool(a.pool)
    l = grid.learner_index(a.learner)
    with open(os.path.join(a.pool, "pool.toml"), "rb") as f:
        manifest = tomllib.load(f)
    units = int(manifest["units"])
    sign = -1.0 if manifest.get("direction", "maximize") == "minimize" else 1.0
    configs = pd.read_parquet(os.path.join(a.pool, "configs.parquet"))
    configs = configs[configs["learner"] == a.learner]
    curves = pd.read_parquet(
        os.path.join(a.pool, "curves", f"{a.dataset}__{a.learner}__{a.run}.parquet"))
    ok = curves[curves["status"] == "ok"]
    levels = configs.set_index("config_id")["levels"]
    score = {(tuple(int(v) for v in levels[c].split(",")), int(u)): sign * float(x)
             for c, u, x in zip(ok["config_id"], ok["unit"], ok["score"])}
    seen = []

    def objective(config, fidelity, **kwargs):
        key = tuple(int(config[d.name]) for d in grid.dims[l])
        unit = min(units, max(1, math.ceil(float(fidelity) - 1e-9)))
        s = score.get((key, unit))
        fitness = math.inf if s is None else -s
        seen.append(dict(config=list(key), unit=unit, fitness=fitness))
        return {"fitness": fitness, "cost": float(fidelity)}

    seed = a.seed % 2**32
    with tempfile.TemporaryDirectory() as tmp:
        dehb = DEHB(f=objective, cs=configspace(grid, l, seed), min_fidelity=a.min_unit,
                    max_fidelity=units, eta=a.eta, n_workers=1, seed=seed, output_path=tmp,
                    save_freq="end", log_level="ERROR")
        dehb.run(fevals=a.evaluations)
    for s in seen[: a.evaluations]:
        print(json.dumps(s))


if __name__ == "__main__":
    main()
