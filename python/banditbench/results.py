"""Read a banditbench results folder into pandas or polars.

A results folder holds ``runs.parquet`` (one row per cell) and ``trajectories.parquet`` (one row per
decision); the README's "Results format" section lists every column. ``params``, ``pulls``,
``time_s`` (and the pool world's ``recommended_params``, and ``policy_stats``) are JSON text in the
files; these readers decode them into Python dicts.
"""

from __future__ import annotations

import json
import os
from typing import Any

JSON_COLUMNS = ("params", "pulls", "time_s", "recommended_params", "policy_stats")


def _decode(value: Any) -> Any:
    # A null (pandas reads it as None or NaN, e.g. `recommended_params` outside the pool world).
    if value is None or (isinstance(value, float) and value != value):
        return None
    return json.loads(value)


def _check(folder: str, name: str) -> str:
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        lock = os.path.join(folder, "experiment.lock.toml")
        hint = (
            "the run has not finished or merged yet"
            if os.path.isfile(lock)
            else "it is not a banditbench results folder"
        )
        raise FileNotFoundError(f"{path} does not exist: {hint}")
    return path


def read_runs(folder: str, backend: str = "pandas", decode_json: bool = True):
    """One row per cell, with the JSON columns decoded (dicts) unless ``decode_json=False``.

    ``backend`` is ``"pandas"`` (needs pandas and pyarrow) or ``"polars"``.
    """
    path = _check(folder, "runs.parquet")
    if backend == "pandas":
        import pandas as pd

        df = pd.read_parquet(path)
        if decode_json:
            for col in JSON_COLUMNS:
                if col in df.columns:
                    df[col] = df[col].map(_decode)
        return df
    if backend == "polars":
        import polars as pl

        df = pl.read_parquet(path)
        if decode_json:
            df = df.with_columns(
                pl.col(c).map_elements(_decode, return_dtype=pl.Object)
                for c in JSON_COLUMNS
                if c in df.columns
            )
        return df
    raise ValueError(f"backend is {backend!r}; use 'pandas' or 'polars'")


def read_trajectories(folder: str, backend: str = "pandas"):
    """One row per decision, the same columns in every world (results format 6): cell, step,
    action, arm, learner, config, fidelity, time, reward, incumbent, worker, start, finish and
    hv_regret (several objectives; null with one); see the README."""
    path = _check(folder, "trajectories.parquet")
    if backend == "pandas":
        import pandas as pd

        return pd.read_parquet(path)
    if backend == "polars":
        import polars as pl

        return pl.read_parquet(path)
    raise ValueError(f"backend is {backend!r}; use 'pandas' or 'polars'")
