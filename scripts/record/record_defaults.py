#!/usr/bin/env python3
"""Record every learner's default configuration next to a recorded trace set (Ex-Def).

    python3 scripts/record/record_defaults.py scripts/record/plans/PLAN.toml --out traces/<set>

For every (dataset, run, learner) of the plan, the learner's scikit-learn defaults
(`spaces.default_config`) are fitted once on the same train/validation/test split and in the same
single-threaded worker as the set's other evaluations, and written to `<out>/defaults.parquet`
(the columns of `evaluations.parquet`; `seq` is 0 and `elapsed_s` = `cost_s`) with
`<out>/defaults.toml` (recorder, package versions, CPU seconds). The trace set's own files are not
touched, so its content hash, and every result that names it, stays valid.

Resumable: each evaluation is appended to `<out>/.journal/defaults.jsonl` first; rerunning skips
what the journal holds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import datasets as dsets  # noqa: E402
import record as rec  # noqa: E402
import spaces  # noqa: E402
import traceset_io as tio  # noqa: E402

DEFAULTS_VERSION = "1"


def record_defaults(plan_path: Path, out: Path, cache: Path, quiet: bool) -> int:
    import pandas as pd

    plan = rec.load_plan(plan_path)
    (out / ".journal").mkdir(parents=True, exist_ok=True)
    jpath = out / ".journal" / "defaults.jsonl"
    rows = rec.read_journal(jpath)
    have = {(r["dataset"], r["learner"], r["run"]) for r in rows}
    worker = rec.Worker()
    t0 = time.time()
    try:
        for dataset in plan["datasets"]:
            X, y, _ = dsets.load(dataset, cache)
            X, y = dsets.cap_rows(X, y, plan["max_rows"], rec.stable_seed(plan["seed"], dataset, "cap"))
            for run in range(plan["runs"]):
                tr, va, te = dsets.stratified_indices(y, rec.SPLIT, rec.stable_seed(plan["seed"], dataset, run, "split"))
                payload = (X.iloc[tr], y[tr], X.iloc[va], y[va], X.iloc[te], y[te])
                for learner in plan["learners"]:
                    if (dataset, learner, run) in have:
                        continue
                    worker.load((dataset, run), payload)
                    cfg = spaces.default_config(learner)
                    res = worker.evaluate(learner, cfg, rec.stable_seed(plan["seed"], dataset, learner, run, "default"),
                                          plan["eval_cpu_limit_s"])
                    r = {"dataset": dataset, "learner": learner, "run": run, "seq": 0,
                         "elapsed_s": res["cost_s"], "cost_s": res["cost_s"],
                         "score": None if math.isnan(res["score"]) else res["score"],
                         "test_score": None if math.isnan(res["test_score"]) else res["test_score"],
                         "status": res["status"], "config": json.dumps(cfg, sort_keys=True),
                         "config_id": rec.config_id(cfg), "wall_s": res["wall_s"], "error": res["error"]}
                    rec.append_journal(jpath, r)
                    rows.append(r)
                    if not quiet:
                        print(f"{dataset} run {run} {learner}: {r['status']} {r['score']} "
                              f"({res['cost_s']:.2f} CPU s)", flush=True)
    finally:
        worker.close()
    frame = pd.DataFrame(rows)
    frame["score"] = frame["score"].astype(float)
    frame["test_score"] = frame["test_score"].astype(float)
    frame = frame.sort_values(["dataset", "run", "learner"]).reset_index(drop=True)
    tio.write_evaluations(out / "defaults.parquet", frame)
    text = "\n".join([
        "# Each learner's default configuration, recorded beside the trace set (Ex-Def).",
        'recorder = "scripts/record/record_defaults.py"',
        f'recorder_version = "{DEFAULTS_VERSION}"',
        f'plan = "scripts/record/plans/{plan["name"]}.toml"',
        f"packages = {json.dumps(json.dumps(rec.package_versions(), sort_keys=True))}",
        'defaults = "scikit-learn get_params() of each estimator (spaces.default_config)"',
        f"evaluations = {len(frame)}",
        f"cpu_seconds = {float(frame['cost_s'].sum()):.2f}",
        "",
    ])
    tmp = out / "defaults.toml.tmp"
    tmp.write_text(text)
    tmp.replace(out / "defaults.toml")
    jpath.unlink(missing_ok=True)
    if not quiet:
        print(f"{len(frame)} default evaluations, {frame['cost_s'].sum():.1f} CPU s, {time.time() - t0:.0f} s wall")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("plan", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=HERE / ".cache")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    try:
        return record_defaults(args.plan, args.out, args.cache, args.quiet)
    except rec.PlanError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
