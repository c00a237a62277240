#!/usr/bin/env python3
"""The peers' CPU seconds for the anytime hypervolume of one run, for `banditbench bench
--only hypervolume` (src/bench/pareto.rs), which writes the run and calls this script.

    python3 -m venv /tmp/moo && /tmp/moo/bin/pip install -r scripts/reference/requirements-moocore.txt
    /tmp/moo/bin/pip install --no-deps syne-tune==0.16.0
    python3 scripts/reference/hypervolume_timing.py POINTS.f64 N RX RY

POINTS.f64 holds the run's two-objective points (minimised) as little-endian f64, row by row;
the first N rows are measured against the reference point (RX, RY), fixed beforehand. Prints
    synetune_cpu_s=…   Syne Tune 0.16.0's hypervolume_cumulative (pymoo's HV, recomputed for
                       every prefix, increment 1: its exact mode)
    moocore_cpu_s=…    moocore.hypervolume recomputed for every prefix
    synetune_last=…    moocore_last=…   the last hypervolume each found, for the check
and `skipped=` for a peer that is not installed.
"""

import sys
import time

import numpy as np


def cpu(f):
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def main():
    path, n, rx, ry = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    points = np.fromfile(path, dtype="<f8").reshape(-1, 2)[:n]
    ref = np.array([rx, ry])
    try:
        from syne_tune.optimizer.schedulers.multiobjective.utils import hypervolume_cumulative
    except ImportError:
        print("skipped=synetune")
    else:
        s, hv = cpu(lambda: hypervolume_cumulative(points, ref))
        print(f"synetune_cpu_s={s} synetune_last={float(hv[-1])!r}")
    try:
        import moocore
    except ImportError:
        print("skipped=moocore")
    else:
        s, hv = cpu(lambda: [moocore.hypervolume(points[: i + 1], ref=ref) for i in range(n)])
        print(f"moocore_cpu_s={s} moocore_last={float(hv[-1])!r}")


if __name__ == "__main__":
    main()
