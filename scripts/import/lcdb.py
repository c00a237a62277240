#!/usr/bin/env python3
"""Import the Learning Curve Database (LCDB, Mohr et al.; PyPI package `lcdb` 0.1.0, MIT) as a
banditbench trace set for the time-sliced world.

LCDB holds learning curves of 20 scikit-learn classifiers at their default settings on OpenML
datasets: for each (dataset, learner, outer seed, inner seed) one model per training-set size
(anchor), with its training time and validation/test accuracy. Here each learner is an arm whose
"tuner" is progressive sampling: it trains at anchor 1, 2, ... in order, so
`elapsed_s` = cumulative training time over the anchors so far, `score` = validation accuracy,
`test_score` = test accuracy, `fidelity` = training-set size.

Kept (documented in traces/lcdb/README.md):
- inner seed 0 only; runs = outer seeds 0..4 (each outer seed is another train/test split);
- datasets where all 20 learners have a curve for every kept run;
- nothing else is filtered, resampled or smoothed.

Usage: python3 scripts/import/lcdb.py --out traces/lcdb
The package (68 MB sdist) is downloaded by pip into scripts/.cache/ (git-ignored) once.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import traceset_io as tio  # noqa: E402

LCDB_SPEC = "lcdb==0.1.0"
RUNS = [0, 1, 2, 3, 4]
INNER_SEED = 0


def short_learner(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("traces/lcdb"))
    ap.add_argument("--cache", type=Path, default=HERE.parent / ".cache")
    ap.add_argument("--max-datasets", type=int, default=None, help="keep at most this many datasets (smallest OpenML id first)")
    args = ap.parse_args(argv)

    import pandas as pd

    t0 = time.time()
    archive = tio.pip_fetch(LCDB_SPEC, args.cache, ["--no-binary", ":all:"])
    csv = tio.extract_member(archive, "lcdb/database-accuracy.csv", args.cache / "lcdb-0.1.0")
    meta_csv = tio.extract_member(archive, "lcdb/datasets.csv", args.cache / "lcdb-0.1.0")
    raw = pd.read_csv(csv)
    meta = pd.read_csv(meta_csv)[["openmlid", "Name", "NumberOfInstances", "NumberOfClasses", "NumberOfFeatures"]]
    n_raw = len(raw)

    df = raw[(raw.inner_seed == INNER_SEED) & (raw.outer_seed.isin(RUNS))].copy()
    df["learner"] = df["learner"].map(short_learner)
    all_learners = sorted(df.learner.unique())
    cover = df.groupby(["openmlid", "outer_seed"]).learner.nunique().unstack(fill_value=0)
    complete = cover[(cover.reindex(columns=RUNS, fill_value=0) == len(all_learners)).all(axis=1)].index
    kept_ids = sorted(int(i) for i in complete)
    if args.max_datasets is not None:
        kept_ids = kept_ids[: args.max_datasets]
    df = df[df.openmlid.isin(kept_ids)]
    names = dict(zip(meta.openmlid, meta.Name))
    df["dataset"] = [f"{i}-{names.get(i, 'unknown')}" for i in df.openmlid]
    df = df.sort_values(["openmlid", "learner", "outer_seed", "size_train"], kind="mergesort")

    # Duplicate anchors (same training size twice in one curve) would make `seq` ambiguous:
    # keep the first, and count them so the README can say how many were dropped.
    before = len(df)
    df = df.drop_duplicates(subset=["openmlid", "learner", "outer_seed", "size_train"], keep="first")
    dup_dropped = before - len(df)

    df["run"] = df.outer_seed.astype("int64")
    df["seq"] = df.groupby(["openmlid", "learner", "outer_seed"]).cumcount().astype("int64")
    df["cost_s"] = df.traintime.astype("float64")
    df["elapsed_s"] = df.groupby(["openmlid", "learner", "outer_seed"]).traintime.cumsum().astype("float64")
    df["score"] = df.score_valid.astype("float64")
    df["test_score"] = df.score_test.astype("float64")
    df["status"] = "ok"
    df["config_id"] = "default"
    df["fidelity"] = df.size_train.astype("float64")
    out = df[["dataset", "learner", "run", "seq", "elapsed_s", "cost_s", "score", "test_score", "status", "config_id", "fidelity"]]

    args.out.mkdir(parents=True, exist_ok=True)
    tio.write_evaluations(args.out / "evaluations.parquet", out)
    kept_meta = meta[meta.openmlid.isin(kept_ids)]
    elapsed = time.time() - t0
    tio.write_manifest(
        args.out / "traceset.toml",
        {
            "format": tio.FORMAT,
            "name": "lcdb",
            "description": (
                "LCDB learning curves of 20 scikit-learn classifiers (default settings) on "
                f"{len(kept_ids)} OpenML datasets, as progressive-sampling arms: one evaluation per "
                "training-set size, elapsed_s = cumulative training time."
            ),
            "metric": "accuracy",
            "direction": "maximize",
        },
        {
            "provenance": {
                "source": "imported",
                "importer": "scripts/import/lcdb.py",
                "importer_version": "1",
                "package": LCDB_SPEC,
                "package_file": "lcdb/database-accuracy.csv",
                "package_sha256": tio.sha256_file(archive),
                "licence": "MIT (lcdb package)",
                "citation": (
                    "F. Mohr, T. J. Viering, M. Loog, J. N. van Rijn. LCDB 1.0: An Extensive "
                    "Learning Curves Database for Classification Tasks. ECML PKDD 2022."
                ),
                "selection": (
                    f"inner_seed = {INNER_SEED}; runs = outer_seed in {RUNS}; datasets where all "
                    f"{len(all_learners)} learners have a curve for every run"
                ),
                "rows_in_package": n_raw,
                "rows_kept": len(out),
                "duplicate_anchors_dropped": dup_dropped,
                "import_seconds": round(elapsed, 1),
                "datasets": [
                    {
                        "name": f"{r.openmlid}-{r.Name}",
                        "openml_id": int(r.openmlid),
                        "instances": int(r.NumberOfInstances),
                        "classes": int(r.NumberOfClasses),
                        "features": int(r.NumberOfFeatures),
                    }
                    for r in kept_meta.itertuples()
                ],
            }
        },
    )
    size = (args.out / "evaluations.parquet").stat().st_size
    print(
        f"lcdb: {len(kept_ids)} datasets x {len(all_learners)} learners x {len(RUNS)} runs, "
        f"{len(out)} evaluations, {size / 1e6:.2f} MB parquet, {elapsed:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
