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

import json
import math
import tempfile

from pool_tables import task_arguments, task_scores


def main() -> None:
    a = task_arguments("DEHB's own run loop on one task of a grid pool").parse_args()

    from dehb import DEHB

    from banditbench.adapters._grid import GridSpace, key_of
    from banditbench.adapters.dehb import configspace

    grid = GridSpace.of_pool(a.pool)
    learners = [grid.learner_index(name) for name in a.learner]
    units, score = task_scores(a.pool, a.dataset, a.run, a.learner)
    seen = []

    def objective(config, fidelity, **kwargs):
        l, key = key_of(config, grid, learners)
        unit = min(units, max(1, math.ceil(float(fidelity) - 1e-9)))
        s = score.get((grid.learners[l], key, unit))
        fitness = math.inf if s is None else -s
        seen.append(dict(learner=grid.learners[l], config=list(key), unit=unit,
                         fitness=fitness))
        return {"fitness": fitness, "cost": float(fidelity)}

    seed = a.seed % 2**32
    with tempfile.TemporaryDirectory() as tmp:
        dehb = DEHB(f=objective, cs=configspace(grid, learners, seed), min_fidelity=a.min_unit,
                    max_fidelity=units, eta=a.eta, n_workers=1, seed=seed, output_path=tmp,
                    save_freq="end", log_level="ERROR")
        dehb.run(fevals=a.evaluations)
    for s in seen[: a.evaluations]:
        print(json.dumps(s))


if __name__ == "__main__":
    main()
