#!/usr/bin/env python3
"""Golden orders for banditbench's non-dominated sort with an ε-net (src/pareto/sort.rs, MO-ASHA's
promotion order), computed with Syne Tune 0.16.0's own functions
(`syne_tune.optimizer.schedulers.multiobjective.non_dominated_priority`: `pareto_efficient`
peels the fronts, `compute_epsilon_net(X, dim)` returns each point's rank in the ε-net). Pinned in
requirements-synetune.txt next to this file.

    /path/to/venv/bin/python scripts/reference/epsilon_net_golden.py   # writes tests/golden/epsilon_net.json

Each case is a set of n points in d objectives (minimised) drawn by numpy's PCG64 from seed 2026:
uniform in [0, 1), or on a small integer grid (equal points, equal distances). Its expected order
is front by front, each front's points sorted by their `compute_epsilon_net` rank (seeded by
objective `dim`). Syne Tune's `nondominated_sort`, which MOASHA's NonDominatedPriority calls, is
stored beside it: it indexes each front by those ranks as if they were an order, so within a
front of three or more points it can give another order; and MOASHA's Bracket then reads the
returned list as one priority per point (see the README, "MO-ASHA").
"""

import json
from pathlib import Path

import numpy as np
import syne_tune
from syne_tune.optimizer.schedulers.multiobjective.non_dominated_priority import (
    compute_epsilon_net,
    nondominated_sort,
    pareto_efficient,
)

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "epsilon_net.json"


def expected_order(X, dim):
    remaining = np.arange(X.shape[0])
    order = []
    while remaining.size:
        mask = pareto_efficient(X[remaining])
        front = remaining[mask]
        ranks = compute_epsilon_net(X[front], dim=dim)
        order += [int(front[i]) for i in np.argsort(ranks, kind="stable")]
        remaining = remaining[~mask]
    return order


def main():
    rng = np.random.default_rng(2026)
    cases = []
    for k in range(300):
        d = int(rng.integers(2, 5))
        n = int(rng.integers(1, 40))
        if k % 3 == 0:
            X = rng.integers(0, 4, size=(n, d)).astype(float)
        else:
            X = rng.random((n, d))
        dim = int(rng.integers(0, d))
        cases.append({
            "d": d,
            "dim": dim,
            "points": X.flatten().tolist(),
            "order": expected_order(X, dim),
            "syne_tune_nondominated_sort": [int(i) for i in nondominated_sort(X, dim=dim)],
        })
    OUT.write_text(json.dumps({"syne_tune": syne_tune.__version__, "cases": cases}) + "\n")
    differ = sum(c["order"] != c["syne_tune_nondominated_sort"] for c in cases)
    print(f"wrote {OUT}: {len(cases)} cases; nondominated_sort differs from the ε-net order in {differ}")


if __name__ == "__main__":
    main()
