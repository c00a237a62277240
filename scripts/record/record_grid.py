#!/usr/bin/env python3
"""Record a configuration pool: a learning curve for every configuration of a full grid.

    python3 scripts/record/record_grid.py scripts/record/plans/sklearn-grid.toml --out traces/sklearn-grid

Pool format v1 (traces/README.md): `pool.toml` (the grid, the fidelity unit, provenance),
`configs.parquet` (one row per configuration) and `curves/*.parquet` (one row per
(dataset, run, configuration, unit); one file per finished part).

For every (dataset, run) the data are split once, stratified, into train/validation/test
(60/20/20), exactly as `record.py` does. Each curve comes from ONE fit of one configuration:
- boosting (`staged`): fit all 27 x 8 iterations, then `staged_predict` on validation and test;
- forests (`forest`): fit 27 x 8 trees, then a running mean of the per-tree `predict_proba`;
- MLP and SGD (`epochs`): one `partial_fit` per epoch, 3 epochs a unit, scored after each unit.
`score`/`test_score` are validation/test accuracy after the unit. `cost_s` is CPU seconds:
exact per unit for `epochs` learners; for `staged` and `forest` learners the one fit's CPU time is
spread evenly over the 27 units (a staged fit cannot be timed per unit without refitting). The
shared preprocessing (imputation, scaling, one-hot) is done once per (dataset, run, learner); its
CPU time is charged to every curve's first unit. A unit that raises (e.g. a diverging SGD) is
`failed` and ends its curve; a curve over the CPU limit ends with a `timeout` unit.

Resumable and shardable: a part is one (run, dataset, learner); every finished curve is appended
(fsynced) to a journal under `<out>/.journal/`, a finished part is written atomically to
`<out>/curves/` and its journal removed. Parts are ordered run-major, so the first third of the
work gives every dataset one complete run. `--shard K/N` records parts K, K+N, ...

`--defaults` records instead each learner's scikit-learn defaults as one curve per
(dataset, run, learner) into `<out>/defaults.parquet` (for Ex-Def; see `record_defaults`).
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[var] = "1"

import datasets as dsets  # noqa: E402
import grids  # noqa: E402
import traceset_io as tio  # noqa: E402
from record import (SPLIT, PlanError, append_journal, check_names, make_preprocessor, package_versions, read_journal,  # noqa: E402
                    run_cli, stable_seed)

FORMAT = "banditbench-pool/1"
# With [[objectives]] in the plan (several objectives, traces/README.md).
FORMAT_OBJECTIVES = "banditbench-pool/1.1"
RECORDER_VERSION = "1"


def load_plan(path: Path) -> dict:
    try:
        plan = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise PlanError(f"{path}: cannot read plan: {e}") from e
    required = ["name", "description", "datasets", "learners", "runs", "seed"]
    for k in required:
        if k not in plan:
            raise PlanError(f"{path}: missing key '{k}' (required: {', '.join(required)})")
    check_names(path, plan, grids.LEARNERS)
    plan.setdefault("max_rows", 2000)
    plan.setdefault("curve_cpu_limit_s", 120.0)
    plan.setdefault("max_configs", None)  # tests record only the first N configurations of each grid
    return plan


def config_table(plan):
    """Rows of configs.parquet: a global config_id, learner-major in plan order."""
    rows = []
    for learner in plan["learners"]:
        g = grids.LEARNERS[learner]
        for i, (levels, cfg) in enumerate(g.configs()):
            if plan["max_configs"] is not None and i >= plan["max_configs"]:
                break
            rows.append({"config_id": len(rows), "learner": learner, "levels": ",".join(map(str, levels)),
                         "config": json.dumps(cfg, sort_keys=True)})
    return rows


# ---------------------------------------------------------------------------------------------
# One curve.


class _CpuLimit(Exception):
    pass


def _on_sigprof(signum, frame):
    raise _CpuLimit()


def _accuracy(pred, y) -> float:
    import numpy as np

    return float(np.mean(pred == y))


def record_curve(learner: str, config: dict, seed: int, data, limit_s: float, pre_cost: float):
    """Return 1..27 units as dicts {score, test_score, cost_s, status} and an error text."""
    import numpy as np

    g = grids.LEARNERS[learner]
    Xtr, ytr, Xva, yva, Xte, yte = data
    units: list[dict] = []
    error = ""
    c0 = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, limit_s)
    try:
        model = grids.build(learner, config, seed)
        if g.curve == "epochs":
            classes = np.unique(ytr)
            for u in range(grids.UNITS):
                t0 = time.process_time()
                try:
                    for _ in range(g.unit_size):
                        model.partial_fit(Xtr, ytr, classes=classes)
                    cost = time.process_time() - t0
                    va, te = _accuracy(model.predict(Xva), yva), _accuracy(model.predict(Xte), yte)
                except _CpuLimit:
                    raise
                except Exception as e:  # a diverging model is a recorded failure of this unit
                    units.append({"score": None, "test_score": None, "cost_s": time.process_time() - t0,
                                  "status": "failed"})
                    error = f"{type(e).__name__}: {e}"[:300]
                    break
                units.append({"score": va, "test_score": te, "cost_s": cost, "status": "ok"})
        else:
            model.fit(Xtr, ytr)
            fit_cost = time.process_time() - c0
            if g.curve == "staged":
                va_stages = list(model.staged_predict(Xva))
                te_stages = list(model.staged_predict(Xte))
                for u in range(grids.UNITS):
                    k = (u + 1) * g.unit_size - 1
                    units.append({"score": _accuracy(va_stages[k], yva), "test_score": _accuracy(te_stages[k], yte),
                                  "cost_s": fit_cost / grids.UNITS, "status": "ok"})
            else:  # forest: running mean of per-tree class probabilities
                Xva32, Xte32 = np.asarray(Xva, dtype=np.float32), np.asarray(Xte, dtype=np.float32)
                pva = np.zeros((len(yva), len(model.classes_)))
                pte = np.zeros((len(yte), len(model.classes_)))
                for t, tree in enumerate(model.estimators_):
                    pva += tree.predict_proba(Xva32, check_input=False)
                    pte += tree.predict_proba(Xte32, check_input=False)
                    if (t + 1) % g.unit_size == 0:
                        units.append({"score": _accuracy(model.classes_[pva.argmax(1)], yva),
                                      "test_score": _accuracy(model.classes_[pte.argmax(1)], yte),
                                      "cost_s": fit_cost / grids.UNITS, "status": "ok"})
    except _CpuLimit:
        spent = time.process_time() - c0 - sum(u["cost_s"] for u in units)
        units.append({"score": None, "test_score": None, "cost_s": spent, "status": "timeout"})
        error = f"curve over the CPU limit of {limit_s:g} s"
    except Exception as e:  # a configuration that cannot be fitted at all
        units = [{"score": None, "test_score": None, "cost_s": time.process_time() - c0, "status": "failed"}]
        error = f"{type(e).__name__}: {e}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    units[0]["cost_s"] += pre_cost
    return units, error


def preprocess(X, tr, va, te, scaled: bool):
    """Fit imputation (+ scaling) and one-hot on train; dense float64 arrays and the CPU cost."""
    import numpy as np

    c0 = time.process_time()
    pre = make_preprocessor(X, scaled)
    Xtr = np.ascontiguousarray(pre.fit_transform(X.iloc[tr]), dtype=np.float64)
    Xva = np.ascontiguousarray(pre.transform(X.iloc[va]), dtype=np.float64)
    Xte = np.ascontiguousarray(pre.transform(X.iloc[te]), dtype=np.float64)
    return (Xtr, Xva, Xte), time.process_time() - c0


# ---------------------------------------------------------------------------------------------
# Outputs.


def write_atomic(path: Path, write) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def objective_lines(plan: dict) -> list:
    """The plan's [[objectives]] (format 1.1), each key as the plan gives it; none without."""
    lines = []
    for o in plan.get("objectives", []):
        lines += ["[[objectives]]"] + [f"{k} = {tio.toml_value(v)}" for k, v in o.items()] + [""]
    return lines


def write_manifest(out: Path, plan: dict, infos: dict, parts_done: int, parts_planned: int, cpu_h: float) -> None:
    lines = [
        f"format = {tio.toml_value(FORMAT_OBJECTIVES if plan.get('objectives') else FORMAT)}",
        f"name = {tio.toml_value(plan['name'])}",
        f"description = {tio.toml_value(plan['description'])}",
        'metric = "accuracy"',
        'direction = "maximize"',
        f"units = {grids.UNITS}",
        'neighbours = "grid"',
        f"complete = {tio.toml_value(parts_done == parts_planned)}",
        "",
    ]
    lines += objective_lines(plan)
    for learner in plan["learners"]:
        g = grids.LEARNERS[learner]
        lines += ["[[learners]]", f"name = {tio.toml_value(g.name)}", f"estimator = {tio.toml_value(g.estimator)}",
                  f"unit = {tio.toml_value(g.unit)}", f"curve = {tio.toml_value(g.curve)}", ""]
        for d in g.dims:
            lines += ["[[learners.dims]]", f"name = {tio.toml_value(d.name)}", f"kind = {tio.toml_value(d.kind)}",
                      f"values = {tio.toml_value([str(v) for v in d.values])}", ""]
    prov = {
        "source": "recorded",
        "recorder": "scripts/record/record_grid.py",
        "recorder_version": RECORDER_VERSION,
        "plan": f"scripts/record/plans/{plan['name']}.toml",
        "licence": "MIT (the curves); each dataset's licence is listed under [[provenance.datasets]]",
        "citation": "banditbench recorded pools (this repository)",
        "packages": json.dumps(package_versions(), sort_keys=True),
        "protocol": ("per (dataset, run) a stratified 60/20/20 train/validation/test split (as sklearn-de); one fit per "
                     "curve; score/test_score = validation/test accuracy after the unit; cost_s = CPU seconds, exact "
                     "per unit for epoch learners, the fit's CPU spread evenly over the 27 units for boosting and "
                     "forests; preprocessing CPU charged to unit 1"),
        "max_rows": plan["max_rows"],
        "curve_cpu_limit_s": plan["curve_cpu_limit_s"],
        "seed": plan["seed"],
        "runs": plan["runs"],
        "parts_done": parts_done,
        "parts_planned": parts_planned,
        "cpu_hours": round(cpu_h, 4),
    }
    lines.append("[provenance]")
    lines += [f"{k} = {tio.toml_value(v)}" for k, v in prov.items()]
    for d in plan["datasets"]:
        if d in infos:
            lines.append("")
            lines.append("[[provenance.datasets]]")
            lines += [f"{k} = {tio.toml_value(v)}" for k, v in infos[d].items()]
    text = "\n".join(lines) + "\n"
    write_atomic(out / "pool.toml", lambda p: p.write_text(text))


def part_name(dataset: str, learner: str, run: int) -> str:
    return f"{dataset}__{learner}__{run}"


def write_part(out: Path, name: str, rows: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "dataset": pa.array([r["dataset"] for r in rows], pa.string()),
        "run": pa.array([r["run"] for r in rows], pa.int32()),
        "config_id": pa.array([r["config_id"] for r in rows], pa.int32()),
        "unit": pa.array([r["unit"] for r in rows], pa.int32()),
        "score": pa.array([r["score"] for r in rows], pa.float32()),
        "test_score": pa.array([r["test_score"] for r in rows], pa.float32()),
        "cost_s": pa.array([r["cost_s"] for r in rows], pa.float32()),
        "status": pa.array([r["status"] for r in rows], pa.string()),
    })
    (out / "curves").mkdir(exist_ok=True)
    write_atomic(out / "curves" / f"{name}.parquet",
                 lambda p: pq.write_table(table, p, compression="zstd", compression_level=19))


def summarise(out: Path):
    import pyarrow.parquet as pq

    files = sorted((out / "curves").glob("*.parquet")) if (out / "curves").exists() else []
    cpu = 0.0
    for f in files:
        cpu += float(pq.read_table(f, columns=["cost_s"]).column(0).to_numpy().astype("float64").sum())
    return len(files), cpu / 3600


def record(plan_path: Path, out: Path, cache: Path, stop_after: int | None, quiet: bool,
           shard: tuple[int, int] = (0, 1)) -> int:
    import warnings

    import pyarrow as pa
    import pyarrow.parquet as pq
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGPROF, _on_sigprof)
    plan = load_plan(plan_path)
    out.mkdir(parents=True, exist_ok=True)
    (out / ".journal").mkdir(exist_ok=True)
    configs = config_table(plan)
    cfg_table = pa.table({"config_id": pa.array([c["config_id"] for c in configs], pa.int32()),
                          "learner": [c["learner"] for c in configs],
                          "levels": [c["levels"] for c in configs],
                          "config": [c["config"] for c in configs]})
    if not (out / "configs.parquet").exists() or not pq.read_table(out / "configs.parquet").equals(cfg_table):
        write_atomic(out / "configs.parquet", lambda p: pq.write_table(cfg_table, p, compression="zstd"))
    by_learner: dict[str, list[dict]] = {}
    for c in configs:
        by_learner.setdefault(c["learner"], []).append(c)

    data, infos = {}, {}
    for dataset in plan["datasets"]:
        X, y, info = dsets.load(dataset, cache)
        X, y = dsets.cap_rows(X, y, plan["max_rows"], stable_seed(plan["seed"], dataset, "cap"))
        info["rows_used"] = int(len(y))
        data[dataset], infos[dataset] = (X, y), info
    parts = [(d, lrn, r) for r in range(plan["runs"]) for d in plan["datasets"] for lrn in plan["learners"]]
    planned = len(parts)
    done, cpu_h = summarise(out)
    write_manifest(out, plan, infos, done, planned, cpu_h)
    curves_done = 0
    t_start = time.time()
    for i, (dataset, learner, run) in enumerate(parts):
        name = part_name(dataset, learner, run)
        if i % shard[1] != shard[0] or (out / "curves" / f"{name}.parquet").exists():
            continue
        X, y = data[dataset]
        tr, va, te = dsets.stratified_indices(y, SPLIT, stable_seed(plan["seed"], dataset, run, "split"))
        g = grids.LEARNERS[learner]
        (Xtr, Xva, Xte), pre_cost = preprocess(X, tr, va, te, g.scaled)
        arrays = (Xtr, y[tr], Xva, y[va], Xte, y[te])
        jpath = out / ".journal" / f"{name}.jsonl"
        recs = {r["config_id"]: r for r in read_journal(jpath)}
        t_part = time.time()
        for c in by_learner[learner]:
            if c["config_id"] in recs:
                continue
            if stop_after is not None and curves_done >= stop_after:
                print(f"stopped after {curves_done} curves (--stop-after)", file=sys.stderr)
                return 3
            seed = stable_seed(plan["seed"], dataset, learner, run, c["config_id"])
            units, error = record_curve(learner, json.loads(c["config"]), seed, arrays,
                                        plan["curve_cpu_limit_s"], pre_cost)
            rec = {"config_id": c["config_id"], "units": units, "error": error}
            append_journal(jpath, rec)
            recs[c["config_id"]] = rec
            curves_done += 1
        rows = []
        for cid in sorted(recs):
            for u, unit in enumerate(recs[cid]["units"]):
                rows.append({"dataset": dataset, "run": run, "config_id": cid, "unit": u + 1, **unit})
        write_part(out, name, rows)
        jpath.unlink(missing_ok=True)
        done, cpu_h = summarise(out)
        write_manifest(out, plan, infos, done, planned, cpu_h)
        if not quiet:
            best = max((u["score"] for r in recs.values() for u in r["units"] if u["score"] is not None), default=math.nan)
            fails = sum(1 for r in recs.values() if r["units"][-1]["status"] != "ok")
            print(f"[{done}/{planned}] {name}: {len(recs)} curves, best {best:.4f}, {fails} ended early, "
                  f"{time.time() - t_part:.0f} s wall ({time.time() - t_start:.0f} s so far, {cpu_h:.2f} CPU h in all)",
                  flush=True)
    return 0


def record_defaults(plan_path: Path, out: Path, cache: Path, quiet: bool) -> int:
    """Each learner's scikit-learn defaults (`grids.default_config`) recorded as one more curve per
    (dataset, run, learner), the same way as the grid's curves, into `<out>/defaults.parquet`
    (columns: dataset, run, learner, config, unit, score, test_score, cost_s, status). The pool's
    other files are untouched. Resumable through `<out>/.journal/defaults.jsonl`."""
    import warnings

    import pyarrow as pa
    import pyarrow.parquet as pq
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGPROF, _on_sigprof)
    plan = load_plan(plan_path)
    (out / ".journal").mkdir(parents=True, exist_ok=True)
    jpath = out / ".journal" / "defaults.jsonl"
    recs = {(r["dataset"], r["learner"], r["run"]): r for r in read_journal(jpath)}
    t0 = time.time()
    for run in range(plan["runs"]):
        for dataset in plan["datasets"]:
            X, y, _ = dsets.load(dataset, cache)
            X, y = dsets.cap_rows(X, y, plan["max_rows"], stable_seed(plan["seed"], dataset, "cap"))
            tr, va, te = dsets.stratified_indices(y, SPLIT, stable_seed(plan["seed"], dataset, run, "split"))
            for learner in plan["learners"]:
                if (dataset, learner, run) in recs:
                    continue
                g = grids.LEARNERS[learner]
                (Xtr, Xva, Xte), pre_cost = preprocess(X, tr, va, te, g.scaled)
                cfg = grids.default_config(learner)
                units, error = record_curve(learner, cfg, stable_seed(plan["seed"], dataset, learner, run, "default"),
                                            (Xtr, y[tr], Xva, y[va], Xte, y[te]), plan["curve_cpu_limit_s"], pre_cost)
                rec = {"dataset": dataset, "learner": learner, "run": run, "config": json.dumps(cfg, sort_keys=True),
                       "units": units, "error": error}
                append_journal(jpath, rec)
                recs[(dataset, learner, run)] = rec
                if not quiet:
                    print(f"{dataset} run {run} {learner}: {len(units)} units, last {units[-1]['status']} "
                          f"{units[-1]['score']}", flush=True)
    rows = [{"dataset": r["dataset"], "run": r["run"], "learner": r["learner"], "config": r["config"], "unit": u + 1,
             **unit} for r in sorted(recs.values(), key=lambda r: (r["dataset"], r["run"], r["learner"]))
            for u, unit in enumerate(r["units"])]
    table = pa.table({
        "dataset": [r["dataset"] for r in rows], "run": pa.array([r["run"] for r in rows], pa.int64()),
        "learner": [r["learner"] for r in rows], "config": [r["config"] for r in rows],
        "unit": pa.array([r["unit"] for r in rows], pa.int64()),
        "score": pa.array([r["score"] for r in rows], pa.float32()),
        "test_score": pa.array([r["test_score"] for r in rows], pa.float32()),
        "cost_s": pa.array([r["cost_s"] for r in rows], pa.float32()),
        "status": [r["status"] for r in rows]})
    write_atomic(out / "defaults.parquet", lambda p: pq.write_table(table, p, compression="zstd"))
    jpath.unlink(missing_ok=True)
    if not quiet:
        print(f"{len(recs)} default curves, {sum(r['cost_s'] for r in rows):.1f} CPU s, {time.time() - t0:.0f} s wall")
    return 0


def main(argv=None) -> int:
    if "--defaults" in (argv if argv is not None else sys.argv[1:]):
        import argparse

        ap = argparse.ArgumentParser(description="record each learner's default curve beside a pool")
        ap.add_argument("plan", type=Path)
        ap.add_argument("--out", type=Path, required=True)
        ap.add_argument("--cache", type=Path, default=HERE / ".cache")
        ap.add_argument("--quiet", action="store_true")
        ap.add_argument("--defaults", action="store_true")
        a = ap.parse_args(argv)
        return record_defaults(a.plan, a.out, a.cache, a.quiet)
    return run_cli(__doc__, record, "curves", argv)


if __name__ == "__main__":
    sys.exit(main())
