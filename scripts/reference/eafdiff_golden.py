#!/usr/bin/env python3
"""Golden values for banditbench's EAF differences (src/pareto/eaf.rs `eaf_difference`), from
moocore 0.3.2's `eafdiff(x, y, rectangles=True)` (pinned in requirements-moocore.txt next to
this file; moocore is a test reference only, LGPL, not vendored).

    /path/to/venv/bin/python scripts/reference/eafdiff_golden.py   # writes tests/golden/eafdiff.json

Cases: moocore's documented example and 40 random pairs of run sets (3-8 runs a side, as many on
both sides, 1-12 points a run, coordinates rounded to one decimal so that they tie). For each,
the number of moocore's rectangles and, at 100 query points off the grid, the difference they give there
(sets of x minus sets of y attaining the point; 0 outside every rectangle).
"""

import json
from pathlib import Path

import moocore
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "eafdiff.json"


def value_at(rects, z):
    for x0, y0, x1, y1, d in rects:
        if x0 <= z[0] < x1 and y0 <= z[1] < y1:
            return float(d)
    return 0.0


def case(x, y, rng):
    rects = moocore.eafdiff(x, y, rectangles=True)
    lo = np.minimum(x[:, :2].min(axis=0), y[:, :2].min(axis=0)) - 0.5
    hi = np.maximum(x[:, :2].max(axis=0), y[:, :2].max(axis=0)) + 0.5
    # Off the grid: coordinates are multiples of 0.1 (or 0.5 in the example); queries end in 0.037.
    queries = np.round(rng.uniform(lo, hi, (100, 2)), 1) + 0.037
    runs = lambda a: [a[a[:, 2] == s][:, :2].flatten().tolist() for s in np.unique(a[:, 2])]
    return {"a": runs(x), "b": runs(y), "queries": queries.tolist(),
            "values": [value_at(rects, q) for q in queries], "rectangles": len(rects)}


def main():
    rng = np.random.Generator(np.random.PCG64(11))
    cases = []
    x = np.array([[3, 2, 1], [2, 3, 1], [2.5, 1, 2], [1, 2, 2], [1, 2, 3]], float)
    y = np.array([[4, 2.5, 1], [3, 3, 1], [2.5, 3.5, 1], [3, 3, 2], [2.5, 3.5, 2], [2, 1, 3]], float)
    cases.append(case(x, y, rng))
    for _ in range(40):
        n = int(rng.integers(3, 9))

        def sets():
            rows = []
            for s in range(1, n + 1):
                for _ in range(int(rng.integers(1, 13))):
                    rows.append([round(rng.uniform(0, 5), 1), round(rng.uniform(0, 5), 1), s])
            return np.array(rows, float)

        cases.append(case(sets(), sets(), rng))
    OUT.write_text(json.dumps({"made_by": "scripts/reference/eafdiff_golden.py",
                               "moocore": moocore.__version__, "cases": cases}) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
