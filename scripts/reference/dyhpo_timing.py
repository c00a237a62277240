#!/usr/bin/env python3
"""CPU time of one decision of DyHPO's own code (releaunifreiburg/DyHPO, `hpo_method.py` and
`surrogate_models/dyhpo.py`, imported from a checkout given by --code), for
`banditbench bench --only freeze-thaw --freeze-thaw-python PY --dyhpo-code PATH`.

    PY scripts/reference/dyhpo_timing.py --code PATH/TO/DyHPO --history FILE.json

FILE.json (written by the bench) holds the pool's features (one row per configuration: the same
encoding banditbench's `dyhpo` uses), the curve length, and a history of (configuration, losses)
pairs whose last unit is the newest observation. DyHPOAlgorithm is given the history but the last
unit, past its random initial configuration and its fits from fresh weights (its model's
iteration count at 10, `restart` off: per-epoch cost does not depend on the weights, so the model
is not fitted first), then one decision is timed: `observe` of the newest unit (`train_pipeline`:
50 refinement epochs on every point, the whole set as one batch) and `suggest` (the prediction of
every configuration not yet complete, one unit ahead, and multi-fidelity EI). DyHPO maximises;
its scores here are the negated losses, as banditbench's. One thread
(torch.set_num_threads(1)); the median of 3 repetitions of process CPU time. Prints
`refine_s=... predict_s=...`. Above 800 points GPyTorch trains and predicts by conjugate
gradients (its max_cholesky_size), as DyHPO's code does.

Pinned in requirements-torch.txt (torch, gpytorch, numpy, scipy, scikit-learn); DyHPO's code at
commit cfba15a.
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
    ap.add_argument("--code", required=True, help="a checkout of releaunifreiburg/DyHPO")
    ap.add_argument("--history", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.code))
    # DyHPO writes a log file and checkpoints into the working directory.
    os.chdir(tempfile.mkdtemp(prefix="dyhpo-timing-"))
    # DyHPO's code uses np.NINF, which NumPy 2 removed: the alias is restored.
    if not hasattr(np, "NINF"):
        np.NINF = -np.inf
    from hpo_method import DyHPOAlgorithm
    from surrogate_models.dyhpo import DyHPO

    torch.set_num_threads(1)
    with open(a.history) as f:
        h = json.load(f)
    feats = np.array(h["features"], dtype=np.float64)
    units = int(h["units"])
    history = [(int(c), [-float(v) for v in curve]) for c, curve in h["history"]]

    s = DyHPOAlgorithm(
        feats,
        [False] * feats.shape[1],
        seed=11,
        max_benchmark_epochs=units,
        total_budget=10**9,
        device="cpu",
        dataset_name="bench",
        output_path=".",
        verbose=False,
    )
    logging.disable(logging.CRITICAL)
    s.initial_random_index = len(s.init_conf_indices)
    last_c, last_curve = history[-1]
    for c, curve in history[:-1]:
        s.examples[c] = list(range(1, len(curve) + 1))
        s.performances[c] = list(curve)
        s.best_value_observed = max(s.best_value_observed, max(curve))
    if len(last_curve) > 1:
        s.examples[last_c] = list(range(1, len(last_curve)))
        s.performances[last_c] = list(last_curve[:-1])
    s.model = DyHPO(s.surrogate_config, s.dev, s.dataset_name, s.output_path, s.seed)
    s.model.iterations = s.model.initial_nr_points
    s.model.restart = False
    saved = copy.deepcopy(s)

    time_decision(
        saved, lambda r: r.observe(last_c, len(last_curve), list(last_curve)), lambda r: r.suggest(), a.repeats
    )

if __name__ == "__main__":
    main()
