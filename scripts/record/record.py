#!/usr/bin/env python3
"""Record hyper-parameter tuning traces with scikit-learn, in trace-set format v1.

    python3 scripts/record/record.py scripts/record/plans/PLAN.toml --out traces/<set>

A plan names datasets, learners, a tuner (random search or DE/rand/1/bin), how long each
(dataset, learner, run) is tuned, and the seed. For every (dataset, run) the data are split once,
stratified, into train/validation/test (60/20/20); an evaluation fits one configuration on train and
records `score` = validation accuracy, `test_score` = test accuracy, `cost_s` = CPU seconds of
preprocessing + fit + validation prediction in a single-threaded worker process, and `elapsed_s` =
the tuner's cumulative CPU seconds. Wall seconds go in the extra column `wall_s`.

Resumable: each evaluation is appended (and fsynced) to a journal under `<out>/.journal/` before
the next starts, so a crash loses at most the evaluation in flight; a finished
(dataset, learner, run) is merged into `<out>/evaluations.parquet` and its journal removed. Rerunning
the same command continues where it stopped. The tuners are deterministic given the scores they
were told, so a resumed part proposes exactly the configurations an uninterrupted run would.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing as mp
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
import spaces  # noqa: E402
import traceset_io as tio  # noqa: E402

RECORDER_VERSION = "2"  # 2: bernoulli-nb binarize range [0, 1] (scikit-learn rejects negative thresholds)
SPLIT = [0.6, 0.2, 0.2]


class PlanError(Exception):
    pass


def stable_seed(*parts) -> int:
    h = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:4], "little")


def check_names(path: Path, plan: dict, learners) -> None:
    """Every dataset of a plan is a known source and every learner one of `learners`."""
    for d in plan["datasets"]:
        if d not in dsets.SOURCES:
            raise PlanError(f"{path}: unknown dataset '{d}'; known: {', '.join(sorted(dsets.SOURCES))}")
    for lrn in plan["learners"]:
        if lrn not in learners:
            raise PlanError(f"{path}: unknown learner '{lrn}'; known: {', '.join(learners)}")


def load_plan(path: Path) -> dict:
    try:
        plan = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise PlanError(f"{path}: cannot read plan: {e}") from e
    required = ["name", "description", "tuner", "datasets", "learners", "runs", "seed"]
    for k in required:
        if k not in plan:
            raise PlanError(f"{path}: missing key '{k}' (required: {', '.join(required)})")
    if plan["tuner"] not in ("random", "de"):
        raise PlanError(f"{path}: key 'tuner' is '{plan['tuner']}'; allowed: random, de")
    if plan["tuner"] == "random" and "evaluations" not in plan:
        raise PlanError(f"{path}: tuner 'random' needs key 'evaluations' (evaluations per dataset, learner and run)")
    if plan["tuner"] == "de" and "cpu_budget_s" not in plan:
        raise PlanError(f"{path}: tuner 'de' needs key 'cpu_budget_s' (CPU seconds per dataset, learner and run)")
    check_names(path, plan, spaces.LEARNERS)
    plan.setdefault("max_rows", 2000)
    plan.setdefault("eval_cpu_limit_s", 60.0)
    plan.setdefault("max_evaluations", 100000)
    de = plan.setdefault("de", {})
    de.setdefault("population", 10)
    de.setdefault("F", 0.5)
    de.setdefault("CR", 0.9)
    return plan


# ---------------------------------------------------------------------------------------------
# Tuners: ask() a point of the unit cube, tell() its score (None for a failed evaluation).


class RandomSearch:
    def __init__(self, dim: int, seed: int):
        import numpy as np

        self.rng = np.random.default_rng(seed)
        self.dim = dim
        self._next = None

    def ask(self):
        if self._next is None:
            self._next = self.rng.random(self.dim)
        return self._next

    def tell(self, score):
        self._next = None


class DifferentialEvolution:
    """DE/rand/1/bin with synchronous generations (Storn & Price 1997).

    Generation 0 is `population` uniform points; each later generation makes one trial per target
    (mutant x_r1 + F (x_r2 - x_r3), clipped to [0, 1], binomial crossover with rate CR and one
    forced coordinate), evaluates all trials in order, then keeps each trial that scores at least as
    well as its target. A failed evaluation scores -inf."""

    def __init__(self, dim: int, seed: int, population: int, F: float, CR: float):
        import numpy as np

        self.np = np
        self.rng = np.random.default_rng(seed)
        self.dim, self.n, self.F, self.CR = dim, population, F, CR
        self.pop = None
        self.fit = None
        self.queue = [self.rng.random(dim) for _ in range(population)]
        self.scores = []

    def _trials(self):
        np = self.np
        out = []
        for i in range(self.n):
            choices = [j for j in range(self.n) if j != i]
            r1, r2, r3 = self.rng.choice(choices, size=3, replace=False)
            mutant = np.clip(self.pop[r1] + self.F * (self.pop[r2] - self.pop[r3]), 0.0, 1.0)
            cross = self.rng.random(self.dim) < self.CR
            cross[self.rng.integers(self.dim)] = True
            out.append(np.where(cross, mutant, self.pop[i]))
        return out

    def ask(self):
        if not self.queue:
            self.queue = self._trials()
        return self.queue[0]

    def tell(self, score):
        s = -math.inf if score is None else score
        x = self.queue.pop(0)
        self.scores.append((x, s))
        if self.queue:
            return
        xs = [p for p, _ in self.scores]
        ss = [q for _, q in self.scores]
        self.scores = []
        if self.pop is None:
            self.pop, self.fit = xs, ss
        else:
            for i in range(self.n):
                if ss[i] >= self.fit[i]:
                    self.pop[i], self.fit[i] = xs[i], ss[i]


def make_tuner(plan, dim, seed):
    if plan["tuner"] == "random":
        return RandomSearch(dim, seed)
    de = plan["de"]
    return DifferentialEvolution(dim, seed, int(de["population"]), float(de["F"]), float(de["CR"]))


# ---------------------------------------------------------------------------------------------
# Worker process: fits one configuration at a time, single-threaded, with a CPU-time limit.


class _CpuLimit(Exception):
    pass


def _on_sigprof(signum, frame):
    raise _CpuLimit()


def worker_main(conn):
    import warnings

    import numpy as np
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.filterwarnings("ignore")
    _warm_up()
    signal.signal(signal.SIGPROF, _on_sigprof)
    data = {}
    while True:
        msg = conn.recv()
        if msg[0] == "stop":
            return
        if msg[0] == "data":
            _, key, payload = msg
            data.clear()
            data[key] = payload
            conn.send(("ok",))
            continue
        _, key, learner, config, seed, limit = msg
        Xtr, ytr, Xva, yva, Xte, yte = data[key]
        out = {"status": "ok", "score": math.nan, "test_score": math.nan, "error": ""}
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            signal.setitimer(signal.ITIMER_PROF, limit)
            model = make_pipeline(learner, config, Xtr, seed)
            model.fit(Xtr, ytr)
            out["score"] = float(np.mean(model.predict(Xva) == yva))
            signal.setitimer(signal.ITIMER_PROF, 0)
            out["cost_s"] = time.process_time() - c0
            out["wall_s"] = time.perf_counter() - w0
            out["test_score"] = float(np.mean(model.predict(Xte) == yte))
            if out["cost_s"] > limit:
                out.update(status="timeout", score=math.nan, test_score=math.nan)
        except _CpuLimit:
            out.update(status="timeout", cost_s=time.process_time() - c0, wall_s=time.perf_counter() - w0)
        except Exception as e:  # a configuration that raises is a recorded failure, not a crash
            signal.setitimer(signal.ITIMER_PROF, 0)
            out.update(status="failed", cost_s=time.process_time() - c0, wall_s=time.perf_counter() - w0,
                       error=f"{type(e).__name__}: {e}"[:300])
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        conn.send(("result", out))


def _warm_up():
    """Import every estimator module once, so no evaluation's cost includes an import."""
    for name, (space, _, _) in spaces.LEARNERS.items():
        spaces.build(name, {d.name: d.decode(0.5) for d in space}, 0)
    make_pipeline("gaussian-nb", {"var_smoothing": 1e-9}, __import__("pandas").DataFrame({"a": [0.0]}), 0)


def make_preprocessor(X, scaled: bool):
    """Median imputation (+ standard scaling) of the float columns, most-frequent imputation and
    one-hot encoding of the others: the preprocessing every recorder fits on the training split."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    num = [c for c in X.columns if X[c].dtype.kind == "f"]
    cat = [c for c in X.columns if c not in num]
    parts = []
    if num:
        steps = [("impute", SimpleImputer(strategy="median"))]
        if scaled:
            steps.append(("scale", StandardScaler()))
        parts.append(("num", Pipeline(steps), num))
    if cat:
        parts.append(("cat", Pipeline([("impute", SimpleImputer(strategy="most_frequent")),
                                       ("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False))]), cat))
    return ColumnTransformer(parts)


def make_pipeline(learner, config, X, seed):
    from sklearn.pipeline import Pipeline

    _, scale, _ = spaces.LEARNERS[learner]
    return Pipeline([("pre", make_preprocessor(X, scale)), ("model", spaces.build(learner, config, seed))])


def _proc_cpu(pid) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return math.nan


class Worker:
    def __init__(self):
        self.ctx = mp.get_context("spawn")
        self.proc = None
        self.key = None
        self.payload = None

    def _start(self):
        self.parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=worker_main, args=(child,), daemon=True)
        self.proc.start()
        self.key = None

    def load(self, key, payload):
        self.payload = (key, payload)
        if self.proc is None or not self.proc.is_alive():
            self._start()
        if self.key != key:
            self.parent.send(("data", key, payload))
            self.parent.recv()
            self.key = key

    def evaluate(self, learner, config, seed, limit):
        if self.proc is None or not self.proc.is_alive():
            self._start()
            self.load(*self.payload)
        cpu0 = _proc_cpu(self.proc.pid)
        w0 = time.perf_counter()
        self.parent.send(("eval", self.key, learner, config, seed, float(limit)))
        # The CPU timer inside the worker cannot interrupt a long C call; the wall guard can.
        if self.parent.poll(3 * limit + 10):
            return self.parent.recv()[1]
        cost = _proc_cpu(self.proc.pid) - cpu0
        self.proc.kill()
        self.proc.join()
        self.proc = None
        return {"status": "timeout", "score": math.nan, "test_score": math.nan, "cost_s": cost,
                "wall_s": time.perf_counter() - w0, "error": "killed by the wall-clock guard"}

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            self.parent.send(("stop",))
            self.proc.join(5)


# ---------------------------------------------------------------------------------------------
# Journal and assembly.


def config_id(config: dict) -> str:
    return hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]


def read_journal(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut by a crash: it and anything after it are dropped
    return out


def append_journal(path: Path, rec: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())


def part_done(plan, rows) -> bool:
    if not rows:
        return False
    if len(rows) >= plan["max_evaluations"]:
        return True
    if plan["tuner"] == "random":
        return len(rows) >= plan["evaluations"]
    return rows[-1]["elapsed_s"] >= plan["cpu_budget_s"]


def package_versions() -> dict:
    import numpy
    import pandas
    import scipy
    import sklearn

    return {"python": sys.version.split()[0], "scikit-learn": sklearn.__version__, "numpy": numpy.__version__,
            "scipy": scipy.__version__, "pandas": pandas.__version__}


def write_outputs(out: Path, plan: dict, frame, infos: dict, planned_parts: int) -> None:
    tio.write_evaluations(out / "evaluations.parquet", frame)
    done = frame.groupby(["dataset", "learner", "run"]).ngroups if len(frame) else 0
    cpu_h = float(frame["cost_s"].sum()) / 3600 if len(frame) else 0.0
    learners = [{"name": n, "estimator": spaces.LEARNERS[n][2], "scaled": spaces.LEARNERS[n][1],
                 "space": "; ".join(_dim_text(d) for d in spaces.LEARNERS[n][0])} for n in plan["learners"]]
    tuner = {"tuner": plan["tuner"]}
    if plan["tuner"] == "random":
        tuner["evaluations"] = plan["evaluations"]
    else:
        tuner.update(cpu_budget_s=plan["cpu_budget_s"], population=plan["de"]["population"],
                     F=plan["de"]["F"], CR=plan["de"]["CR"])
    tio.write_manifest(
        out / "traceset.toml",
        {"format": tio.FORMAT, "name": plan["name"], "description": plan["description"],
         "metric": "accuracy", "direction": "maximize"},
        {
            "provenance": {
                "source": "recorded",
                "recorder": "scripts/record/record.py",
                "recorder_version": RECORDER_VERSION,
                "plan": f"scripts/record/plans/{plan['name']}.toml",
                "licence": "MIT (the traces); each dataset's licence is listed under [[provenance.datasets]]",
                "citation": "banditbench recorded traces (this repository)",
                "packages": json.dumps(package_versions(), sort_keys=True),
                "protocol": ("per (dataset, run) a stratified 60/20/20 train/validation/test split; score = validation "
                             "accuracy, test_score = test accuracy; cost_s = CPU seconds of preprocessing + fit + "
                             "validation prediction in one single-threaded process; elapsed_s = cumulative cost_s"),
                "max_rows": plan["max_rows"],
                "eval_cpu_limit_s": plan["eval_cpu_limit_s"],
                "seed": plan["seed"],
                "tuning": json.dumps(tuner, sort_keys=True),
                "parts_done": int(done),
                "parts_planned": int(planned_parts),
                "complete": bool(done == planned_parts),
                "cpu_hours": round(cpu_h, 4),
                "datasets": [infos[d] for d in plan["datasets"] if d in infos],
                "learners": learners,
            }
        },
    )


def merge_part(out: Path, plan: dict, part, key, infos: dict, planned: int):
    """Add a finished part to evaluations.parquet under a file lock, re-reading the file first so
    that shards recording the same plan in parallel never overwrite each other's parts."""
    import fcntl

    import pandas as pd

    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ev_path = out / "evaluations.parquet"
        if ev_path.exists():
            frame = pd.read_parquet(ev_path)
            same = (frame.dataset == key[0]) & (frame.learner == key[1]) & (frame.run == key[2])
            frame = pd.concat([frame[~same], part], ignore_index=True)
        else:
            frame = part
        write_outputs(out, plan, frame, infos, planned)
        return frame


def _dim_text(d: spaces.Dim) -> str:
    if d.kind == "cat":
        return f"{d.name} in {{{', '.join(str(c) for c in d.choices)}}}"
    scale = " log" if d.log else ""
    return f"{d.name} {d.kind}{scale} [{d.low:g}, {d.high:g}]"


def record(plan_path: Path, out: Path, cache: Path, stop_after: int | None, quiet: bool,
           shard: tuple[int, int] = (0, 1)) -> int:
    import numpy as np
    import pandas as pd

    plan = load_plan(plan_path)
    out.mkdir(parents=True, exist_ok=True)
    journal_dir = out / ".journal"
    journal_dir.mkdir(exist_ok=True)
    ev_path = out / "evaluations.parquet"
    frame = pd.read_parquet(ev_path) if ev_path.exists() else pd.DataFrame(columns=tio.COLUMNS + ["wall_s"])
    done_rows = {}
    for key, g in frame.groupby(["dataset", "learner", "run"]) if len(frame) else []:
        done_rows[key] = g.sort_values("seq").to_dict("records")
    planned = len(plan["datasets"]) * len(plan["learners"]) * plan["runs"]
    data, infos = {}, {}
    for dataset in plan["datasets"]:
        X, y, info = dsets.load(dataset, cache)
        X, y = dsets.cap_rows(X, y, plan["max_rows"], stable_seed(plan["seed"], dataset, "cap"))
        info["rows_used"] = int(len(y))
        data[dataset], infos[dataset] = (X, y), info
    worker = Worker()
    evaluated = 0
    part_no = -1
    t_start = time.time()
    try:
        for dataset in plan["datasets"]:
            X, y = data[dataset]
            for run in range(plan["runs"]):
                tr, va, te = dsets.stratified_indices(y, SPLIT, stable_seed(plan["seed"], dataset, run, "split"))
                payload = (X.iloc[tr], y[tr], X.iloc[va], y[va], X.iloc[te], y[te])
                for learner in plan["learners"]:
                    key = (dataset, learner, run)
                    part_no += 1
                    if part_no % shard[1] != shard[0] or part_done(plan, done_rows.get(key, [])):
                        continue
                    worker.load((dataset, run), payload)
                    jpath = journal_dir / f"{dataset}__{learner}__{run}.jsonl"
                    recs = read_journal(jpath)
                    space = spaces.LEARNERS[learner][0]
                    tuner = make_tuner(plan, len(space), stable_seed(plan["seed"], dataset, learner, run, "tuner"))
                    for r in recs:
                        cfg = spaces.decode(learner, tuner.ask())
                        if config_id(cfg) != r["config_id"]:
                            raise RuntimeError(f"{jpath}: journal row {r['seq']} does not match the tuner's proposal; "
                                               "the plan or the recorder changed since it was written: delete the journal")
                        tuner.tell(r["score"] if r["status"] == "ok" else None)
                    elapsed = recs[-1]["elapsed_s"] if recs else 0.0
                    while not part_done(plan, recs):
                        if stop_after is not None and evaluated >= stop_after:
                            print(f"stopped after {evaluated} evaluations (--stop-after)", file=sys.stderr)
                            return 3
                        cfg = spaces.decode(learner, tuner.ask())
                        seq = len(recs)
                        res = worker.evaluate(learner, cfg, stable_seed(plan["seed"], dataset, learner, run, seq),
                                              plan["eval_cpu_limit_s"])
                        elapsed += res["cost_s"]
                        rec = {"dataset": dataset, "learner": learner, "run": run, "seq": seq,
                               "elapsed_s": elapsed, "cost_s": res["cost_s"],
                               "score": None if math.isnan(res["score"]) else res["score"],
                               "test_score": None if math.isnan(res["test_score"]) else res["test_score"],
                               "status": res["status"], "config": json.dumps(cfg, sort_keys=True),
                               "config_id": config_id(cfg), "wall_s": res["wall_s"], "error": res["error"]}
                        append_journal(jpath, rec)
                        recs.append(rec)
                        tuner.tell(rec["score"] if rec["status"] == "ok" else None)
                        evaluated += 1
                    part = pd.DataFrame(recs)
                    part["score"] = part["score"].astype(float)
                    part["test_score"] = part["test_score"].astype(float)
                    frame = merge_part(out, plan, part, key, infos, planned)
                    done_rows[key] = recs
                    jpath.unlink(missing_ok=True)
                    if not quiet:
                        n_parts = frame.groupby(["dataset", "learner", "run"]).ngroups
                        print(f"[{n_parts}/{planned}] {dataset} {learner} run {run}: {len(recs)} evaluations, "
                              f"{elapsed:.1f} CPU s, best {np.nanmax(part['score'].to_numpy(dtype=float)) if part['score'].notna().any() else float('nan'):.4f}"
                              f" ({time.time() - t_start:.0f} s wall so far)", flush=True)
    finally:
        worker.close()
    return 0


def run_cli(doc: str, record_fn, unit: str, argv=None) -> int:
    """The command line shared by the recorders: PLAN --out DIR [--cache] [--stop-after N]
    [--quiet] [--shard K/N]; `record_fn(plan, out, cache, stop_after, quiet, shard)`."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("plan", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=HERE / ".cache", help="where packages are downloaded (git-ignored)")
    ap.add_argument("--stop-after", type=int, default=None,
                    help=f"stop after N {unit} (exit 3), as an interruption would")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--shard", default="0/1", help="K/N: record only parts K, K+N, K+2N, ... (run N processes with K = 0..N-1)")
    args = ap.parse_args(argv)
    try:
        k, n = (int(x) for x in args.shard.split("/"))
        if not 0 <= k < n:
            raise ValueError
    except ValueError:
        print(f"error: --shard '{args.shard}' must be K/N with 0 <= K < N", file=sys.stderr)
        return 2
    try:
        return record_fn(args.plan, args.out, args.cache, args.stop_after, args.quiet, (k, n))
    except PlanError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def main(argv=None) -> int:
    return run_cli(__doc__, record, "evaluations", argv)


if __name__ == "__main__":
    sys.exit(main())
