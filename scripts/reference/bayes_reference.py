#!/usr/bin/env python3
"""Golden values for banditbench's Bayesian signed-rank test, computed with baycomp (Benavoli,
Corani, Demšar & Zaffalon's package; version pinned in requirements-bayes.txt next to this file).

    pip install -r scripts/reference/requirements-bayes.txt
    python3 scripts/reference/bayes_reference.py     # writes tests/golden/bayes.json

For each golden score table (tests/golden/*.csv, written by stats_reference.py) and each pair of
its first policy with another, baycomp.SignedRankTest.probs at three ropes, 50 000 posterior
samples, random_state 1. banditbench draws its own samples, so tests/golden.rs compares within
Monte-Carlo error, not digit for digit.
"""

import json
from pathlib import Path

import baycomp
import numpy as np
import pandas as pd

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
NSAMPLES = 50_000


def main():
    out = {"baycomp": baycomp.__version__ if hasattr(baycomp, "__version__") else "1.0.3",
           "nsamples": NSAMPLES, "prior": 0.5, "random_state": 1, "cases": []}
    for name in ["small", "tied", "identical", "zeros", "large", "minimize"]:
        df = pd.read_csv(GOLDEN / f"{name}.csv")
        wide = df.pivot(index="unit", columns="policy", values="score")
        sign = -1.0 if name == "minimize" else 1.0  # oriented so that higher is better
        policies = list(wide.columns)
        for other in policies[1:]:
            x = sign * wide[policies[0]].to_numpy()
            y = sign * wide[other].to_numpy()
            for rope in [0.0, 0.01, 0.03]:
                probs = baycomp.SignedRankTest.probs(x, y, rope, prior=0.5, nsamples=NSAMPLES,
                                                     random_state=1)
                # Without a rope baycomp returns (p_left, p_right) only.
                pl, pe, pr = probs if rope > 0 else (probs[0], 0.0, probs[1])
                out["cases"].append({"table": name, "x": policies[0], "y": other, "rope": rope,
                                     "p_left": pl, "p_rope": pe, "p_right": pr})
    (GOLDEN / "bayes.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out['cases'])} cases to {GOLDEN / 'bayes.json'}")


if __name__ == "__main__":
    main()
