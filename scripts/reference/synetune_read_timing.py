"""The peer of `banditbench bench --only import-syne-tune --synetune-python PY`.

Reads every Syne Tune experiment folder under DIR (results.csv.zip and metadata.json) with Syne
Tune 0.16.0's own reader, `syne_tune.experiments.load_experiment` (pinned in
requirements-synetune.txt), as a user loading results does. Prints `synetune_cpu_s=`, the process
CPU seconds of reading them all (the median of three passes), the folders and the result rows.

Usage: python synetune_read_timing.py DIR
"""

import statistics
import sys
import time
from pathlib import Path

from syne_tune.experiments import load_experiment

root = Path(sys.argv[1])
names = sorted(p.name for p in root.iterdir() if (p / "metadata.json").is_file())


def once():
    t0 = time.process_time()
    rows = 0
    for name in names:
        result = load_experiment(name, local_path=str(root))
        rows += len(result.results)
    return time.process_time() - t0, rows


runs = [once() for _ in range(3)]
print(f"synetune_cpu_s={statistics.median(t for t, _ in runs):.6f} folders={len(names)} rows={runs[0][1]}")
