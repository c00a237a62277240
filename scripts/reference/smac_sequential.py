"""SMAC3's own optimization loop (`facade.optimize()`) on one task of a grid pool, one worker: the
reference the SMAC3 adapter (banditbench.adapters.smac) is checked against.

The task's recorded curves (configs.parquet, curves/DATASET__LEARNER__RUN.parquet) become SMAC's
target function over the adapter's own ConfigSpace (`configspace`: each dimension's level indices):
a trial returns cost = −(the configuration's recorded score at the last unit, or for the
multi-fidelity facades at unit ceil(budget)) and raises where the task has none (a crashed trial in
SMAC's loop). The facade is built as the adapter builds it (`banditbench.adapters.smac.facade`: the
same seed, n_trials, η, budget range in units and order of the local search's start
points) and `optimize()` runs it to `n_trials`. Prints
one JSON line per evaluation, in order: {"learner", "config", "unit", "cost"} (cost null:
crashed). Several --learner: SMAC searches their CASH space (a categorical learner, each learner's
dimensions active under it).

    python -m venv .venv && . .venv/bin/activate
    pip install -r scripts/record/requirements.txt -r python/requirements-smac.txt
    pip install -e .   # or the wheel
    python scripts/reference/smac_sequential.py --pool traces/sklearn-grid --dataset phoneme \
        --run 0 --learner mlp --seed 11 --facade hpo --evaluations 60
"""

from __future__ import annotations

import json
import math
import tempfile

from pool_tables import task_arguments, task_scores


def main() -> None:
    ap = task_arguments("SMAC3's own optimize loop on one task of a grid pool")
    ap.add_argument("--facade", default="hpo")
    ap.add_argument("--n-trials", type=int, default=100)
    ap.add_argument("--start-points", default="sorted")
    a = ap.parse_args()

    from banditbench.adapters._grid import GridSpace, key_of
    from banditbench.adapters.smac import FACADES, configspace, facade

    grid = GridSpace.of_pool(a.pool)
    learners = [grid.learner_index(name) for name in a.learner]
    units, score = task_scores(a.pool, a.dataset, a.run, a.learner)
    seen = []

    def evaluate(config, unit):
        l, key = key_of(config, grid, learners)
        s = score.get((grid.learners[l], key, unit))
        seen.append(dict(learner=grid.learners[l], config=list(key), unit=unit,
                         cost=None if s is None else -s))
        if s is None:
            raise RuntimeError("not recorded on this task")
        return -s

    budgets = FACADES[a.facade][1]
    if budgets:
        def target(config, seed: int = 0, budget: float = 0.0) -> float:
            return evaluate(config, min(units, max(1, math.ceil(float(budget) - 1e-9))))
    else:
        def target(config, seed: int = 0) -> float:
            return evaluate(config, units)

    seed = a.seed % 2**31
    with tempfile.TemporaryDirectory() as tmp:
        smac = facade(a.facade, configspace(grid, learners, seed), seed=seed, output=tmp,
                      n_trials=a.n_trials, eta=a.eta,
                      min_budget=a.min_unit if budgets else None,
                      max_budget=units if budgets else None, target_function=target,
                      start_points=a.start_points)
        smac.optimize()
    for s in seen[: a.evaluations]:
        print(json.dumps(s))


if __name__ == "__main__":
    main()
