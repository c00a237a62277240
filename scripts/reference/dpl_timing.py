#!/usr/bin/env python3
"""CPU time of one decision of DPL's own surrogate (releaunifreiburg/DPL,
`surrogate_models/power_law_surrogate.py`, imported from a checkout given by --dpl), for
`banditbench bench --only freeze-thaw --freeze-thaw-python PY --dpl-code PATH`.

    PY scripts/reference/dpl_timing.py --code PATH/TO/DPL --history FILE.json

FILE.json (written by the bench) holds the pool's features (one row per configuration: the same
encoding banditbench's `dpl` uses), the curve length, and a history of (configuration, losses)
pairs whose last unit is the newest observation. The surrogate is given the history but the last
unit, fitted once from scratch (not timed, the state a run reaches after its first fits), then one
decision is timed: `observe` of the newest unit (a refinement of the ensemble: DPL's
`_refine_surrogate`, 20 epochs with the new point in every batch) and `suggest` (the prediction of
every configuration not yet complete and EI). One thread (torch.set_num_threads(1)); the median of
3 repetitions of process CPU time. Prints `refine_s=... predict_s=...`.

Pinned in requirements-torch.txt (torch, numpy, scipy); DPL's code at commit de44b740.
"""

import argparse
import copy
import json
import logging
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decision_timing import time_decision  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", required=True, help="a checkout of releaunifreiburg/DPL")
    ap.add_argument("--history", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.code))
    from surrogate_models.power_law_surrogate import PowerLawSurrogate

    logging.disable(logging.CRITICAL)
    torch.set_num_threads(1)
    with open(a.history) as f:
        h = json.load(f)
    # DPL's surrogate writes a log file into the working directory: keep it out of the caller's.
    os.chdir(tempfile.mkdtemp(prefix="dpl-timing-"))
    feats = np.array(h["features"], dtype=np.float64)
    units = int(h["units"])
    history = [(int(c), list(map(float, curve))) for c, curve in h["history"]]

    s = PowerLawSurrogate(
        feats,
        seed=11,
        max_benchmark_epochs=units,
        total_budget=1000,
        device="cpu",
        output_path="/tmp",
        dataset_name="bench",
    )
    # Past the random initial configuration and the fits from scratch, as a run is after its
    # first 10 observations.
    s.initial_random_index = len(s.rand_init_conf_indices)
    last_c, last_curve = history[-1]
    for c, curve in history[:-1]:
        s.examples[c] = np.arange(1, len(curve) + 1)
        s.performances[c] = list(curve)
        s.best_value_observed = min(s.best_value_observed, min(curve))
    if len(last_curve) > 1:
        s.examples[last_c] = np.arange(1, len(last_curve))
        s.performances[last_c] = list(last_curve[:-1])
    b = len(last_curve)
    s.last_point = (last_c, b, last_curve[-1], last_curve[: b - 1] if b > 1 else [0])
    s.models = []
    s._train_surrogate()
    s.iterations_counter = s.initial_full_training_trials + 1
    s.train = False
    saved = copy.deepcopy(s)

    time_decision(
        saved, lambda r: r.observe(last_c, b, list(last_curve)), lambda r: r.suggest(), a.repeats
    )

if __name__ == "__main__":
    main()
