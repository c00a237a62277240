"""HEBO's own sequential loop on a grid pool's table, for the exactness check of banditbench's
HEBO adapter (python/tests/test_adapters_hebo.py).

The table is wrapped as an objective: HEBO's suggestion (on the same design space the adapter
builds, ``banditbench.adapters.hebo.space_list``) names one configuration of the grid, and the
objective returns its recorded score at unit ``--to`` on one task, read here from the pool's own
parquet files; HEBO minimises its negation. A configuration not recorded at that unit is observed
as +inf (HEBO drops it, as the adapter's failed trials). The loop seeds NumPy's and torch's global
generators and HEBO's ``scramble_seed`` with ``--seed`` (mod 2^32), then runs ``--trials``
rounds of ``suggest(n_suggestions=1)`` and ``observe``.

Prints one JSON line per trial: {"params": {...}, "value": score or null}.

Pinned: python/requirements-hebo.txt (HEBO 0.3.6, torch 2.15.0).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch
from hebo.design_space.design_space import DesignSpace
from hebo.optimizers.hebo import HEBO

from banditbench.adapters._grid import GridSpace
from banditbench.adapters.hebo import space_list
from recorded_task import task_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", required=True)
    ap.add_argument("--seed", type=int, required=True, help="the cell's seed")
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--to", type=int, default=None)
    ap.add_argument("--ordinal", default="index")
    ap.add_argument("--options", default="{}", help="HEBO's options, as JSON")
    a = ap.parse_args()
    grid = GridSpace.of_pool(a.pool)
    to = a.to or grid.units
    learner = grid.learner_index(a.learner)
    config_of, curves = task_table(a.pool, a.dataset, a.learner, a.run)
    curves = curves[(curves["unit"] == to) & (curves["status"] == "ok")]
    score = dict(zip(curves["config_id"].astype(int), curves["score"].astype(float)))
    names = [d.name for d in grid.dims[learner]]

    seed = a.seed % 2**32
    np.random.seed(seed)
    torch.manual_seed(seed)
    opt = HEBO(DesignSpace().parse(space_list(grid, [learner], a.ordinal)), scramble_seed=seed,
               **json.loads(a.options))
    for _ in range(a.trials):
        rec = opt.suggest(n_suggestions=1)
        params = {k: int(v) for k, v in rec.iloc[0].to_dict().items()}
        c = config_of.get(tuple(params[n] for n in names))
        value = score.get(c) if c is not None else None
        opt.observe(rec, np.array([[-value if value is not None else float("inf")]]))
        print(json.dumps({"params": params, "value": value}))


if __name__ == "__main__":
    main()
