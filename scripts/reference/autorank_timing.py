"""The peer of `banditbench bench --only report-policies`: autorank's Friedman + Nemenyi on the
same generated scores table, timed in-process in CPU seconds.

Usage: python autorank_timing.py SCORES.csv [--repeats 3]

SCORES.csv is the long table `bench` writes (unit, policy, score; higher is better). The table is
read and pivoted to autorank's wide layout outside the timing; the timed call is
`autorank(wide, alpha=0.05, verbose=False, force_mode="nonparametric")`, which ranks, runs
Friedman's test and Nemenyi's critical difference (autorank 1.3.0; its normality and
homoscedasticity checks run too). Prints one line: `autorank_cpu_s=<median of repeats>` and the
versions. Pinned in requirements-autorank.txt.
"""

import argparse
import contextlib
import io
import statistics
import sys
import time
import warnings

from importlib.metadata import version

import autorank
import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scores")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    long = pd.read_csv(a.scores)
    wide = long.pivot(index="unit", columns="policy", values="score")
    times = []
    for _ in range(a.repeats):
        t0 = time.process_time()
        # autorank prints a note and its table even with verbose=False: kept out of our output
        # (its cost stays in the timing).
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            result = autorank.autorank(
                wide, alpha=0.05, verbose=False, force_mode="nonparametric"
            )
        times.append(time.process_time() - t0)
    assert result.omnibus == "friedman", result.omnibus
    assert result.posthoc == "nemenyi", result.posthoc
    print(
        f"autorank_cpu_s={statistics.median(times):.4f} units={wide.shape[0]} "
        f"policies={wide.shape[1]} autorank={version('autorank')} "
        f"pandas={pd.__version__} python={sys.version.split()[0]}"
    )


if __name__ == "__main__":
    main()
