"""Nevergrad's own `minimize` loop on one task of a grid pool, one worker: the reference the
Nevergrad adapter (banditbench.adapters.nevergrad) is checked against.

The task's recorded scores at unit --to (configs.parquet, curves/DATASET__LEARNER__RUN.parquet)
become an objective over the adapter's own parametrization (`parametrization`: each dimension's
level indices): a candidate's loss is its configuration's negated score, +inf where the task has
none. The optimizer is built as the adapter builds it (the registry's name, the same budget and
`num_workers=1`, the parametrization's `RandomState(seed)`), and `optimizer.minimize` runs it.
Prints one JSON line per evaluation, in order: {"value", "loss"}.

    pip install -r python/requirements-nevergrad.txt
    python scripts/reference/nevergrad_sequential.py --pool traces/sklearn-grid \
        --dataset phoneme --run 0 --learner mlp --optimizer NGOpt --budget 20 --seed 11
"""

from __future__ import annotations

import argparse
import json
import os
import tomllib

import numpy as np
import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", required=True)
    ap.add_argument("--optimizer", required=True)
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--to", type=int, default=None, help="the unit scored (default: the last)")
    ap.add_argument("--ordinal", default="transition")
    a = ap.parse_args()

    import nevergrad as ng

    from banditbench.adapters._grid import GridSpace
    from banditbench.adapters.nevergrad import key_of, parametrization

    grid = GridSpace.of_pool(a.pool)
    l = grid.learner_index(a.learner)
    with open(os.path.join(a.pool, "pool.toml"), "rb") as f:
        manifest = tomllib.load(f)
    to = a.to or int(manifest["units"])
    sign = -1.0 if manifest.get("direction", "maximize") == "minimize" else 1.0
    configs = pd.read_parquet(os.path.join(a.pool, "configs.parquet"))
    configs = configs[configs["learner"] == a.learner]
    curves = pd.read_parquet(
        os.path.join(a.pool, "curves", f"{a.dataset}__{a.learner}__{a.run}.parquet"))
    at = curves[(curves["unit"] == to) & (curves["status"] == "ok")]
    levels = configs.set_index("config_id").loc[at["config_id"], "levels"]
    score = {tuple(int(v) for v in s.split(",")): sign * float(x)
             for s, x in zip(levels, at["score"])}

    param = parametrization(grid, [l], a.ordinal)
    param.random_state = np.random.RandomState(a.seed % 2**32)
    optimizer = ng.optimizers.registry[a.optimizer](parametrization=param, budget=a.budget,
                                                    num_workers=1)
    seen = []

    def objective(**value):
        s = score.get(key_of(value, grid, [l])[1])
        loss = float("inf") if s is None else -s
        seen.append(dict(value={k: int(v) for k, v in value.items()}, loss=loss))
        return loss

    optimizer.minimize(lambda v: objective(**v))
    for s in seen:
        print(json.dumps(s))


if __name__ == "__main__":
    main()
