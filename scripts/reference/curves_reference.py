#!/usr/bin/env python3
"""Learning curves from the bundled traces, fitted with scipy.optimize.curve_fit, as the reference
for banditbench's native arctan fit (versions pinned in requirements.txt next to this file).

    python3 scripts/reference/curves_reference.py     # writes tests/golden/curves*.csv, curves_timing.json

A curve is what HAMLET's bandit sees of an arm: the best-so-far score at the elapsed time of each
evaluation that improved it. Curves come from every (dataset, learner, run) of traces/lcdb,
traces/sklearn-random and traces/sklearn-de with at least 4 points: the whole curve, and one prefix
of random length >= 4 (an arm seen mid-run); a seeded sample of 1 500 of them is kept. x is
divided by its maximum (as banditbench does).

SciPy fits, for each curve:
  default: curve_fit(f, x, y) with its defaults (p0 = 1, no bounds, method 'lm'), as HAMLET's text
           says it used curve_fit; a failure (RuntimeError, TypeError) counts as no fit;
  bounded: method 'trf', bounds a >= 0, b >= 1e-12, from the same three starts as banditbench's fit
           (documented in src/curve/mod.rs), best of the three.
"""

import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "golden"


def f(x, a, b, c, d):
    return a * np.arctan(b * (x + c)) + d


def curves(limit=1500):
    rng = np.random.default_rng(1485)
    out = []
    for ts in ["lcdb", "sklearn-random", "sklearn-de"]:
        p = ROOT / "traces" / ts / "evaluations.parquet"
        if not p.exists():
            continue
        df = pd.read_parquet(p, columns=["dataset", "learner", "run", "seq", "elapsed_s", "score", "status"])
        df = df[df.status.fillna("ok") == "ok"].sort_values(["dataset", "learner", "run", "seq"])
        for (ds, lr, run), g in df.groupby(["dataset", "learner", "run"], sort=True):
            best = -np.inf
            xs, ys = [], []
            for e, s in zip(g.elapsed_s.to_numpy(), g.score.to_numpy()):
                if s > best:
                    best = s
                    xs.append(e)
                    ys.append(s)
            if len(xs) < 4 or max(xs) <= 0:
                continue
            out.append((f"{ts}|{ds}|{lr}|{run}|full", xs, ys))
            k = int(rng.integers(4, len(xs) + 1))
            if k < len(xs):
                out.append((f"{ts}|{ds}|{lr}|{run}|prefix{k}", xs[:k], ys[:k]))
    # A seeded sample keeps the reference run to minutes; every trace set stays represented.
    idx = np.sort(rng.choice(len(out), size=min(limit, len(out)), replace=False))
    return [out[i] for i in idx]


def starts(xn, y):
    lo, hi = float(np.min(y)), float(np.max(y))
    mid = 0.5 * (lo + hi)
    idx = np.nonzero(y >= mid)[0]
    x_half = max(float(xn[idx[0]]) if len(idx) else 0.5, 1e-3)
    a0 = 1.1 * (hi - lo) * 2 / np.pi
    x_first = float(np.min(xn))
    return [[a0, s / x_half, 0.0, lo - a0 * np.arctan(s / x_half * x_first)] for s in (1.0, 10.0, 0.1)]


def rss(p, x, y):
    r = y - f(x, *p)
    return float(np.sum(r * r))


def fit_default(x, y):
    try:
        p, _ = curve_fit(f, x, y)
        v = rss(p, x, y)
        return v if np.isfinite(v) else float("inf")
    except (RuntimeError, TypeError, ValueError):
        return float("inf")


def fit_bounded(x, y):
    best = float("inf")
    for p0 in starts(x, y):
        try:
            p, _ = curve_fit(f, x, y, p0=p0, bounds=([0, 1e-12, -np.inf, -np.inf], [np.inf] * 4),
                             method="trf")
            best = min(best, rss(p, x, y))
        except (RuntimeError, ValueError):
            pass
    return best


def main():
    warnings.simplefilter("ignore")
    cs = curves()
    pts, res = [], []
    for cid, xs, ys in cs:
        x = np.asarray(xs, float)
        x = x / x.max()
        y = np.asarray(ys, float)
        for xi, yi in zip(xs, ys):
            pts.append((cid, repr(float(xi)), repr(float(yi))))
        if np.ptp(y) < 1e-12:
            res.append((cid, len(xs), 0.0, 0.0))
            continue
        res.append((cid, len(xs), fit_bounded(x, y), fit_default(x, y)))
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "curves.csv", "w") as fh:
        fh.write("curve,x,y\n")
        for c, x, y in pts:
            fh.write(f"{c},{x},{y}\n")
    with open(OUT / "curves_scipy.csv", "w") as fh:
        fh.write("curve,n,rss_bounded,rss_default\n")
        for c, n, b, d in res:
            fh.write(f"{c},{n},{b!r},{d!r}\n")
    # Timing of curve_fit on generated arctan curves with noise (a speed measure, not data).
    rng = np.random.default_rng(0)
    timing = {}
    for n in (8, 32, 128):
        x = np.linspace(1, 100, n) / 100
        y = f(x, 0.2, 5.0, 0.0, 0.7) + rng.normal(0, 0.005, n)
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            fit_default(x, y)
            times.append((time.perf_counter() - t0) * 1e6)
        timing[str(n)] = {"median_us": float(np.median(times)), "p99_us": float(np.percentile(times, 99))}
    (OUT / "curves_timing.json").write_text(json.dumps({"scipy_curve_fit_default": timing}, indent=1))
    fails = sum(1 for r in res if not np.isfinite(r[3]))
    print(f"{len(res)} curves, {len(pts)} points; SciPy default failed on {fails}; timing {timing}")


if __name__ == "__main__":
    main()
