"""Syne Tune's own Tuner on one task of a grid pool, one worker, on its simulator: the reference the
Syne Tune adapter (banditbench.adapters.syne_tune) is checked against.

The task's recorded curves (configs.parquet, curves/DATASET__LEARNER__RUN.parquet) become a
`BlackboxTabular` over the adapter's own configuration space (`config_space`: the grid's level
indices, or its levels with --ordinal categorical), fidelity `epoch` 1..units, objectives the
recorded score ("score") and the cumulative recorded seconds (Syne Tune's `elapsed_time`). The
scheduler is built as the adapter builds it (`make_scheduler`, the same seed, NumPy's global
generator seeded the same way) and run by `Tuner(n_workers=1)` through `UserBlackboxBackend` with
`SimulatorCallback`, Syne Tune's own simulated clock with no delays. Every call the Tuner makes to
the scheduler's `on_trial_result` and `on_trial_complete` is printed as a JSON line:
{"call", "trial", "config", "epoch", "score", "decision"}, until --results results came in.

    pip install -r python/requirements-syne-tune.txt huggingface_hub==2.4.0
    python scripts/reference/synetune_sequential.py --pool traces/sklearn-grid --dataset phoneme \
        --run 0 --learner mlp --scheduler asha --seed 11 --results 540
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import tomllib
from types import SimpleNamespace

import numpy as np
import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", required=True)
    ap.add_argument("--scheduler", required=True)
    ap.add_argument("--options", default="{}", help="the scheduler's options, as JSON")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--results", type=int, required=True)
    ap.add_argument("--ordinal", default="index")
    a = ap.parse_args()

    from syne_tune import StoppingCriterion, Tuner
    from syne_tune.backend.simulator_backend.simulator_backend import SimulatorConfig
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.blackbox_repository.blackbox_tabular import BlackboxTabular
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.config_space import randint

    from banditbench.adapters._grid import GridSpace
    from banditbench.adapters.syne_tune import METRIC, TIME_ATTR, SyneTuneScheduler, config_space

    grid = GridSpace.of_pool(a.pool)
    l = grid.learner_index(a.learner)
    space = config_space(grid, [l], a.ordinal)
    units = tomllib.loads(open(os.path.join(a.pool, "pool.toml"), encoding="utf-8").read())["units"]
    configs = pd.read_parquet(os.path.join(a.pool, "configs.parquet"))
    configs = configs[configs["learner"] == a.learner]
    curves = pd.read_parquet(
        os.path.join(a.pool, "curves", f"{a.dataset}__{a.learner}__{a.run}.parquet"))
    if (curves["status"] != "ok").any():
        sys.exit(f"{a.dataset}/{a.learner}/{a.run}: the reference needs a task without failed units")
    ids = sorted(curves["config_id"].unique())
    levels = configs.set_index("config_id").loc[ids, "levels"]
    rows = []
    for s in levels:
        idx = [int(v) for v in s.split(",")]
        row = {}
        for d, k in zip(grid.dims[l], idx):
            if d.kind == "ordinal" and a.ordinal == "index":
                row[d.name] = k
            else:
                row[d.name] = d.values[k]
        rows.append(row)
    hp = pd.DataFrame(rows)
    curves = curves.sort_values(["config_id", "unit"])
    score = curves.pivot(index="config_id", columns="unit", values="score").loc[ids].to_numpy()
    cost = curves.pivot(index="config_id", columns="unit", values="cost_s").loc[ids].to_numpy()
    with open(os.path.join(a.pool, "pool.toml"), "rb") as f:
        if tomllib.load(f).get("direction", "maximize") == "minimize":
            score = -score
    evals = np.stack([score.astype(float), np.cumsum(cost.astype(float), axis=1)], axis=-1)
    blackbox = BlackboxTabular(
        hyperparameters=hp,
        configuration_space=space,
        fidelity_space={TIME_ATTR: randint(1, units)},
        objectives_evaluations=evals[:, None, :, :],
        objectives_names=[METRIC, "elapsed_time"],
    )

    # The adapter's own construction: the same options, seed and NumPy global state.
    shell = SimpleNamespace(space=space, to=units, scheduler_name=a.scheduler,
                            options=json.loads(a.options))
    seed = a.seed % 2**32
    np.random.seed(seed)
    scheduler = SyneTuneScheduler.make_scheduler(shell, seed)
    result_call, complete_call = scheduler.on_trial_result, scheduler.on_trial_complete
    seen = []

    def on_trial_result(trial, result):
        decision = result_call(trial, result)
        seen.append(dict(call="result", trial=trial.trial_id, config=trial.config,
                         epoch=int(result[TIME_ATTR]), score=float(result[METRIC]),
                         decision=decision))
        return decision

    def on_trial_complete(trial, result):
        complete_call(trial, result)
        seen.append(dict(call="complete", trial=trial.trial_id, config=trial.config,
                         epoch=int(result[TIME_ATTR]), score=float(result[METRIC]),
                         decision=None))

    scheduler.on_trial_result = on_trial_result
    scheduler.on_trial_complete = on_trial_complete
    backend = UserBlackboxBackend(blackbox=blackbox, elapsed_time_attr="elapsed_time",
                                  simulator_config=SimulatorConfig(0.0, 0.0, 0.0, 0.0, 0.0),
                                  tuner_sleep_time=0.01)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SYNETUNE_FOLDER"] = tmp
        tuner = Tuner(trial_backend=backend, scheduler=scheduler,
                      stop_criterion=StoppingCriterion(max_num_evaluations=a.results),
                      n_workers=1, sleep_time=0, callbacks=[SimulatorCallback()],
                      results_update_interval=1e9, print_update_interval=1e9, save_tuner=False,
                      tuner_name="reference", suffix_tuner_name=False)
        with contextlib.redirect_stdout(io.StringIO()):
            tuner.run()
    for s in seen:
        s["config"] = {k: (v.item() if hasattr(v, "item") else v) for k, v in s["config"].items()
                       if k in space}
        print(json.dumps(s))


if __name__ == "__main__":
    main()
