"""A grid pool task's recorded scores as the reference loops read them (shared by
dehb_sequential.py and smac_sequential.py): straight from the pool's own files, not through
banditbench's loader."""

from __future__ import annotations

import argparse
import os
import tomllib
from typing import Dict, Sequence, Tuple

import pandas as pd


def task_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments every reference loop takes: the pool, the task, the learners, the seed, how
    many evaluations to print, and Hyperband's eta and smallest unit."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--pool", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--learner", action="append", required=True,
                    help="a learner to tune (repeatable; several: the CASH space)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--evaluations", type=int, required=True)
    ap.add_argument("--eta", type=int, default=3)
    ap.add_argument("--min-unit", type=int, default=1)
    return ap


def task_scores(pool: str, dataset: str, run: int, learners: Sequence[str]
                ) -> Tuple[int, Dict[Tuple[str, Tuple[int, ...], int], float]]:
    """The pool's number of units, and (learner, level indices, unit) -> score of every `ok`
    unit of the task, oriented so that higher is better (the manifest's direction)."""
    with open(os.path.join(pool, "pool.toml"), "rb") as f:
        manifest = tomllib.load(f)
    sign = -1.0 if manifest.get("direction", "maximize") == "minimize" else 1.0
    configs = pd.read_parquet(os.path.join(pool, "configs.parquet"))
    score = {}
    for name in learners:
        levels = configs[configs["learner"] == name].set_index("config_id")["levels"]
        curves = pd.read_parquet(
            os.path.join(pool, "curves", f"{dataset}__{name}__{run}.parquet"))
        ok = curves[curves["status"] == "ok"]
        for c, u, x in zip(ok["config_id"], ok["unit"], ok["score"]):
            score[(name, tuple(int(v) for v in levels[c].split(",")), int(u))] = sign * float(x)
    return int(manifest["units"]), score
