#!/usr/bin/env python3
"""Import the 12 TaskSet tables that DyHPO and DPL were evaluated on as the banditbench
configuration pool `taskset` (format banditbench-pool/1, traces/README.md).

Source: `data/taskset/*.json` of releaunifreiburg/DyHPO (the same files are in
releaunifreiburg/DPL), Apache-2.0. Each file is one TaskSet task (Metz et al. 2020): a JSON list
of the same 1 000 configurations of Adam's 8 hyper-parameters, in the same order in every file,
each with `train`, `valid` and `test` loss curves of 51 points. This script reads a local copy of
those files (`--source`: a checkout's `data/taskset`, e.g. fetched with the `fetch` tool); it never
downloads anything.

As a pool: one learner, `adam8p` (TaskSet's name for Adam with 8 hyper-parameters); one task per
file (dataset = the file's name, run 0); configuration i = the files' i-th entry; unit u = the
u-th loss point (DyHPO's and DPL's budget u reads `valid[u - 1]`). `score` = validation loss
(minimised), `test_score` = test loss. A curve whose validation loss is not finite from some point
on (training diverged to NaN) ends there with status `failed`; DyHPO and DPL drop such curves
from the table, and a policy here meets them as failed training. TaskSet records no time:
`cost_s` is null, so budgets count units (or evaluations), never seconds.

The space is numeric: each dimension's range is the smallest and largest value among the 1 000
configurations, on a log scale where DyHPO's `benchmarks/taskset.py` (`log_indicator`) puts it.

Usage: python3 scripts/import/taskset.py --source PATH/TO/DyHPO/data/taskset --out traces/taskset
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import traceset_io as tio  # noqa: E402

FORMAT = "banditbench-pool/1"
LEARNER = "adam8p"
UNITS = 51
# DyHPO's benchmarks/taskset.py: hp_names and log_indicator, in that order.
DIMS = [("learning_rate", True), ("beta1", False), ("beta2", False), ("epsilon", False),
        ("l1", True), ("l2", True), ("linear_decay", True), ("exponential_decay", True)]
TASKS = 12


def finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, required=True,
                    help="the folder of TaskSet JSON files (DyHPO's or DPL's data/taskset)")
    ap.add_argument("--out", type=Path, default=Path("traces/taskset"))
    ap.add_argument("--repository", default="releaunifreiburg/DyHPO",
                    help="where the files come from, for the provenance")
    ap.add_argument("--commit", default="cfba15aecf21e8c312c45d053f1ab6426a9973ce",
                    help="the repository's commit the files were taken at")
    args = ap.parse_args(argv)

    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.time()
    files = sorted(args.source.glob("*.json"))
    if len(files) != TASKS:
        raise SystemExit(f"{args.source}: {len(files)} JSON files, expected TaskSet's {TASKS}")
    configs = None
    hashes = {}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "curves").mkdir(exist_ok=True)
    failed = {}
    for f in files:
        raw = f.read_bytes()
        hashes[f.name] = hashlib.sha256(raw).hexdigest()
        table = json.loads(raw)
        hps = [row["hp"] for row in table]
        if configs is None:
            configs = hps
        elif hps != configs:
            raise SystemExit(f"{f}: its configurations differ from {files[0].name}'s; every "
                             "TaskSet file of DyHPO's holds the same 1 000 in the same order")
        task = f.stem
        cid, unit, score, test, status = [], [], [], [], []
        failed[task] = 0
        for i, row in enumerate(table):
            valid, tloss = row["valid"]["loss"], row["test"]["loss"]
            if len(valid) != UNITS or len(tloss) != UNITS:
                raise SystemExit(f"{f}: configuration {i} has {len(valid)} validation points, "
                                 f"expected {UNITS}")
            for u in range(UNITS):
                cid.append(i)
                unit.append(u + 1)
                if not finite(valid[u]):
                    # Diverged: the curve ends here, a failed unit.
                    score.append(None)
                    test.append(None)
                    status.append("failed")
                    failed[task] += 1
                    break
                score.append(float(valid[u]))
                test.append(float(tloss[u]) if finite(tloss[u]) else None)
                status.append("ok")
        n = len(cid)
        part = pa.table({
            "dataset": pa.array([task] * n, pa.string()),
            "run": pa.array([0] * n, pa.int32()),
            "config_id": pa.array(cid, pa.int32()),
            "unit": pa.array(unit, pa.int32()),
            "score": pa.array(score, pa.float32()),
            "test_score": pa.array(test, pa.float32()),
            "cost_s": pa.array([None] * n, pa.float32()),
            "status": pa.array(status, pa.string()),
        })
        tmp = args.out / "curves" / f"{task}.parquet.tmp"
        pq.write_table(part, tmp, compression="zstd", compression_level=19)
        tmp.replace(args.out / "curves" / f"{task}.parquet")
        print(f"{task}: {len(table)} configurations, {failed[task]} diverged (failed)")

    names = [n for n, _ in DIMS]
    if set(configs[0]) != set(names):
        raise SystemExit(f"the configurations' keys are {sorted(configs[0])}, expected {names}")
    cfg = pa.table({
        "config_id": pa.array(range(len(configs)), pa.int32()),
        "learner": pa.array([LEARNER] * len(configs), pa.string()),
        "levels": pa.array([""] * len(configs), pa.string()),
        "config": pa.array([json.dumps({n: c[n] for n in names}) for c in configs], pa.string()),
    })
    pq.write_table(cfg, args.out / "configs.parquet", compression="zstd", compression_level=19)

    lines = [
        f"format = {tio.toml_value(FORMAT)}",
        'name = "taskset"',
        "description = " + tio.toml_value(
            "TaskSet's 12 text-classification RNN tasks as DyHPO and DPL used them: the same 1 000 "
            "random configurations of Adam's 8 hyper-parameters, validation and test loss at 51 "
            "points of training each; unit u = the u-th point. No time recorded: budgets in units."),
        'metric = "valid_loss"',
        'direction = "minimize"',
        f"units = {UNITS}",
        'neighbours = "none"',
        "complete = true",
        "",
        "[[learners]]",
        f'name = "{LEARNER}"',
        'unit = "one of the 51 loss evaluations recorded along training (budget u reads valid[u - 1])"',
        "",
    ]
    for n, log in DIMS:
        values = [c[n] for c in configs]
        lines += ["[[learners.dims]]", f"name = {tio.toml_value(n)}", 'kind = "numeric"',
                  f"low = {min(values)!r}", f"high = {max(values)!r}",
                  f"log = {tio.toml_value(log)}", ""]
    lines += [
        "[provenance]",
        'source = "imported"',
        'importer = "scripts/import/taskset.py"',
        f"repository = {tio.toml_value(args.repository)}",
        f"commit = {tio.toml_value(args.commit)}",
        'path = "data/taskset"',
        'licence = "Apache-2.0 (releaunifreiburg/DyHPO and releaunifreiburg/DPL)"',
        "citation = " + tio.toml_value(
            "L. Metz, N. Maheswaranathan, R. Sun, C. D. Freeman, B. Poole, J. Sohl-Dickstein. "
            "Using a thousand optimization tasks to learn hyperparameter search strategies "
            "(TaskSet). 2020. Tables as shipped by M. Wistuba, A. Kadra, J. Grabocka, Supervising "
            "the Multi-Fidelity Race of Hyperparameter Configurations (DyHPO), NeurIPS 2022."),
        "note = " + tio.toml_value(
            "score = validation loss, test_score = test loss; a curve that becomes NaN ends there "
            "as a failed unit (DyHPO and DPL drop those configurations); ranges are the recorded "
            "minimum and maximum, log where DyHPO's log_indicator says; cost_s is null."),
        f"diverged = {tio.toml_value(sum(failed.values()))}",
        f"import_seconds = {round(time.time() - t0, 1)}",
        "",
        "[provenance.sha256]",
    ]
    lines += [f"{tio.toml_value(k)} = {tio.toml_value(v)}" for k, v in sorted(hashes.items())]
    lines.append("")
    tio.finish_pool(args.out, lines, f"taskset: {TASKS} tasks", t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
