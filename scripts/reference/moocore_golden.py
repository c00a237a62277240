#!/usr/bin/env python3
"""Golden values for banditbench's multi-objective indicators (src/pareto/), computed with moocore
(López-Ibáñez et al.; C core; LGPL-2.1-or-later, used here as a test reference only, never
vendored). Version pinned in requirements-moocore.txt next to this file.

    python3 -m venv /tmp/moo && /tmp/moo/bin/pip install -r scripts/reference/requirements-moocore.txt
    /tmp/moo/bin/python scripts/reference/moocore_golden.py MOOCORE_CHECKOUT
        # writes tests/golden/moocore.json

MOOCORE_CHECKOUT is a clone of github.com/multi-objective/moocore (commit 3989f5bf, 2026-07-23,
the 0.3.2 era) for its test file `python/tests/test_data/duplicated3.inp`, which the wheel does
not ship; `input1.dat` comes with the wheel (`moocore.get_dataset`).

The fixture holds:
- moocore's own test cases (`python/tests/test_moocore.py`): input1.dat's sets 1 and 2 against
  (10, 10), duplicated3.inp against its 6-objective reference, and [[1,0,1],[0,1,0]] against
  (2, 2, 2); their points are stored, as moocore's test data (LGPL-2.1-or-later);
- the empirical attainment function (`moocore.eaf`, every level) of input1.dat's ten runs and of
  200 random groups of 2 to 9 two-objective runs (the same stream, integer grid or uniform);
- the true Pareto front of each task of the bundled traces/nasbench201 and traces/fcnet pools
  in all their objectives (`moocore.is_nondominated`, read with pyarrow): its size and hypervolume against the
  task's nadir (the worst value of each objective; val_acc maximised);
- 1 000 random sets, d = 2 … 6, made by a splitmix64 stream that tests/pareto.rs makes the same
  way, so only moocore's values are stored: the hypervolume, and IGD+ and additive ε against a
  second random set's non-dominated points. Half the sets lie on an integer grid (many equal
  and weakly dominated points, points on the reference boundary); the others are uniform in
  [0, 1) against a reference of 0.9, so some points lie outside the box.
"""

import json
import sys
from pathlib import Path

import moocore
import numpy as np

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
MASK = (1 << 64) - 1


class SplitMix64:
    """Steele, Lea & Flood's splitmix64; tests/pareto.rs has the same."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53


def random_case(i):
    """Case i: (points, reference, reference set), as tests/pareto.rs makes them."""
    rng = SplitMix64(i)
    d = 2 + i % 5
    n = 5 + rng.next() % 36
    m = 5 + rng.next() % 16
    grid = i % 2 == 1

    def draw():
        u = rng.uniform()
        return float(np.floor(u * 8.0)) if grid else u

    points = [[draw() for _ in range(d)] for _ in range(n)]
    other = [[draw() for _ in range(d)] for _ in range(m)]
    reference = [7.0 if grid else 0.9] * d
    return np.array(points), reference, moocore.filter_dominated(np.array(other))


def random_runs(i):
    """EAF case i: a list of runs, each a list of two-objective points, as tests/pareto.rs makes them."""
    rng = SplitMix64(10_000 + i)
    runs = 2 + rng.next() % 8
    grid = i % 2 == 1
    out = []
    for _ in range(runs):
        n = 1 + rng.next() % 12
        pts = []
        for _ in range(n):
            u, v = rng.uniform(), rng.uniform()
            pts.append([float(np.floor(u * 8.0)), float(np.floor(v * 8.0))] if grid else [u, v])
        out.append(pts)
    return out


def eaf_levels(runs):
    """moocore.eaf at every level: one list of surface points per level 1..n."""
    points = np.array([p for run in runs for p in run])
    sets = np.array([r + 1 for r, run in enumerate(runs) for _ in run])
    n = len(runs)
    levels = np.arange(1, n + 1) * (100.0 / n)
    res = moocore.eaf(points, sets, percentiles=levels)
    return [res[np.isclose(res[:, 2], p)][:, :2].tolist() for p in levels]


def pool_fronts(name, datasets, columns):
    """Each task's true front in `columns` ((column, sign): sign -1 negates a maximised one)."""
    import pyarrow.parquet as pq

    pool = Path(__file__).resolve().parents[2] / "traces" / name
    fronts = []
    for d in datasets:
        t = pq.read_table(pool / "curves" / f"{d}.parquet").to_pandas()
        for r in sorted(t.run.unique()):
            x = t[t.run == r]
            # Minimised. The values as the pool stores them (float32).
            pts = np.column_stack([sign * x[c].astype(float) for c, sign in columns])
            nd = moocore.is_nondominated(pts, keep_weakly=False)
            nadir = pts.max(axis=0)
            fronts.append({"task": f"{d}/{r}", "front": int(nd.sum()), "nadir": nadir.tolist(),
                           "hypervolume": moocore.hypervolume(pts[nd], ref=nadir)})
    return fronts


def main():
    checkout = Path(sys.argv[1])
    out = {
        "moocore": moocore.__version__,
        "numpy": np.__version__,
        "source": "moocore 0.3.2 (LGPL-2.1-or-later): input1.dat from its wheel, "
        "duplicated3.inp from python/tests/test_data at commit 3989f5bf; values by "
        "moocore.hypervolume, igd_plus and epsilon_additive",
        "cases": [],
        "random": [],
    }
    x = moocore.get_dataset("input1.dat")
    for s, published in [(1, 90.46272765), (2, 53.969708954)]:
        dat = x[x[:, 2] == s, :2]
        hv = moocore.hypervolume(dat, ref=[10, 10])
        assert np.isclose(hv, published)
        out["cases"].append({"name": f"input1.dat set {s}", "points": dat.tolist(),
                             "reference": [10.0, 10.0], "hypervolume": hv,
                             "published": published})
    dup = moocore.read_datasets(checkout / "python/tests/test_data/duplicated3.inp")[:, :-1]
    ref = [-14324.0, -14906.0, -14500.0, -14654.0, -14232.0, -14093.0]
    hv = moocore.hypervolume(dup, ref=ref)
    assert np.isclose(hv, 1.52890128312393e20)
    out["cases"].append({"name": "duplicated3.inp", "points": dup.tolist(), "reference": ref,
                         "hypervolume": hv, "published": 1.52890128312393e20})
    hv = moocore.hypervolume([[1, 0, 1], [0, 1, 0]], ref=[2, 2, 2])
    out["cases"].append({"name": "[[1,0,1],[0,1,0]]", "points": [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
                         "reference": [2.0, 2.0, 2.0], "hypervolume": hv, "published": 5.0})
    x = moocore.get_dataset("input1.dat")
    runs = [x[x[:, 2] == s, :2].tolist() for s in np.unique(x[:, 2])]
    out["eaf_input1"] = {"runs": runs, "levels": eaf_levels(runs)}
    out["eaf_random"] = [eaf_levels(random_runs(i)) for i in range(200)]
    out["nasbench201_fronts"] = pool_fronts(
        "nasbench201", ["cifar10", "cifar100", "imagenet"],
        [("score", -1.0), ("cost_s", 1.0), ("latency", 1.0), ("model_size", 1.0)])
    out["fcnet_fronts"] = pool_fronts(
        "fcnet", ["naval_propulsion", "parkinsons_telemonitoring", "protein_structure",
                  "slice_localization"],
        [("score", 1.0), ("cost_s", 1.0), ("model_size", 1.0)])
    for i in range(1000):
        points, reference, ref_set = random_case(i)
        out["random"].append({
            "hypervolume": moocore.hypervolume(points, ref=reference),
            "igd_plus": moocore.igd_plus(points, ref=ref_set),
            "epsilon_additive": moocore.epsilon_additive(points, ref=ref_set),
            "reference_set": len(ref_set),
        })
    (GOLDEN / "moocore.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {GOLDEN / 'moocore.json'}: {len(out['cases'])} cases, {len(out['random'])} random sets")


if __name__ == "__main__":
    main()
