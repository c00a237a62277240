#!/usr/bin/env python3
"""The normalisation constants of DPL's TaskSet regret, computed by DPL's own loader
(releaunifreiburg/DPL `benchmarks/taskset.py`, imported from a checkout given by --dpl, with its
`data/taskset/*.json`): per task, `get_best_performance()` and `get_worst_performance()` after its
`filter_curves()`. banditbench's `reproduce freeze-thaw` takes the worst from the same filter
(tests/golden/taskset_bounds.json checks it) and the best over the whole table.

    PY scripts/reference/taskset_bounds.py --dpl PATH/TO/DPL   # writes tests/golden/taskset_bounds.json

Pinned: numpy 2.4.6, pandas 3.1.1 (requirements-torch.txt); DPL at commit de44b740.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "taskset_bounds.json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dpl", required=True)
    a = ap.parse_args()
    sys.path.insert(0, a.dpl)
    from benchmarks.taskset import TaskSet

    folder = os.path.join(a.dpl, "data", "taskset")
    tasks = {}
    for f in sorted(os.listdir(folder)):
        name = f[: -len(".json")]
        b = TaskSet(folder, name)
        tasks[name] = {
            "best": float(b.get_best_performance()),
            "worst": float(b.get_worst_performance()),
            "kept": int(b.validation_curves.shape[0]),
        }
    OUT.write_text(
        json.dumps(
            {
                "made_by": "scripts/reference/taskset_bounds.py",
                "dpl_commit": "de44b74030a7d4bb37467add431e6fac19cd357a",
                "numpy": np.__version__,
                "pandas": pd.__version__,
                "tasks": tasks,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
