"""Golden values for `report --missing keep` (Skillings & Mack 1981) from tlsfuzzer's
`skillings_mack_test`, an independent implementation whose own tests match R's PMCMRplus
(`skillingsMackTest`) to 1e-6 on Hollander & Wolfe's metronome example.

tlsfuzzer is not on PyPI: use a checkout of https://github.com/tlsfuzzer/tlsfuzzer at commit
14555fe (its `tlsfuzzer/utils/stats.py` needs numpy and scipy only). Environment (Python 3.11):

    python3 -m venv .venv-stats && . .venv-stats/bin/activate
    pip install -r scripts/reference/requirements.txt
    PYTHONPATH=/path/to/tlsfuzzer python scripts/reference/skillings_mack_reference.py \
        > tests/fixtures/skillings_mack/reference.json

Tables (blocks = units, treatments = policies; null = no score):
- `metronome`: Hollander & Wolfe (1999) Example 7.8 (Brady 1969), one missing cell; PMCMRplus
  prints SM = 13.28095, p = 0.001306405 for it;
- `tlsfuzzer-many-missing`: the five-treatment example of tlsfuzzer's tests;
- `cash-holes`: the real final scores of `cash-optuna-smac.csv` (Optuna 5.0.0's TPE, SMAC3 2.4.1
  and banditbench's TPE, SMAC-style and random search; unit = dataset/seed), with the cell of
  unit i (in name order) and policy j (in name order) removed when (i + 2 j) % 7 == 0;
- `cash-complete`: the same without removing any (Skillings–Mack without ties is Friedman's
  statistic; with ties it is not tie-corrected, so it differs from Friedman's).
"""

import json
import sys

import numpy as np
import pandas as pd
import scipy
from pathlib import Path

from tlsfuzzer.utils.stats import skillings_mack_test

ROOT = Path(__file__).resolve().parents[2]


def case(name, units, policies, scores):
    vals, groups, blocks = [], [], []
    for i, row in enumerate(scores):
        for j, s in enumerate(row):
            if s is not None:
                vals.append(s)
                groups.append(j)
                blocks.append(i)
    res = skillings_mack_test(vals, groups, blocks, multiprocess=False)
    return {"name": name, "units": units, "policies": policies, "scores": scores,
            "statistic": float(res.T), "p_value": float(res.p_value), "df": int(res.df)}


def main():
    out = []
    metronome = [[3, 5, 15], [1, 3, 18], [5, 4, 21], [2, None, 6], [0, 2, 17], [0, 2, 10],
                 [0, 3, 8], [0, 2, 13]]
    out.append(case("metronome", [str(i + 1) for i in range(8)], ["R", "A", "B"], metronome))
    vals = [3, 5, 15, 4, 1, 3, 5, 4, 21, 5, 2, 6, 0, 2, 17, 0, 2, 10, 0, 3, 5, 0, 2, 13]
    groups = [1, 2, 3, 5, 1, 2, 1, 2, 3, 4, 1, 3, 1, 2, 3, 1, 2, 3, 1, 2, 4, 1, 2, 3]
    blocks = [1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8]
    table = [[None] * 5 for _ in range(8)]
    for v, g, b in zip(vals, groups, blocks):
        table[b - 1][g - 1] = v
    out.append(case("tlsfuzzer-many-missing", [str(i + 1) for i in range(8)],
                    [str(g) for g in range(1, 6)], table))
    raw = pd.read_csv(ROOT / "scripts/reference/cash-optuna-smac.csv")
    raw["unit"] = raw.dataset + "/" + raw.seed.astype(str).str.zfill(2)
    wide = raw.pivot(index="unit", columns="impl", values="best_score").sort_index()
    units, policies = list(wide.index), list(wide.columns)
    full = [[float(x) for x in row] for row in wide.to_numpy()]
    holes = [[None if (i + 2 * j) % 7 == 0 else x for j, x in enumerate(row)]
             for i, row in enumerate(full)]
    out.append(case("cash-holes", units, policies, holes))
    out.append(case("cash-complete", units, policies, full))
    json.dump({"source": "scripts/reference/skillings_mack_reference.py",
               "tlsfuzzer": "14555fe", "numpy": np.__version__, "scipy": scipy.__version__,
               "pandas": pd.__version__, "python": sys.version.split()[0], "cases": out},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
