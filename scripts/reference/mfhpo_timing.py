"""The peer of `banditbench bench --only pool-configuration --mfhpo-python PY`.

Times mfhpo-simulator 1.4.6 (Watanabe et al., AutoML 2024; pinned in requirements-mfhpo.txt)
replaying a full-fidelity random search on one worker: its `ObjectiveFuncWrapper` in ask-and-tell
mode, whose objective returns the recorded score and cost of the configuration asked for. TABLE is
the CSV the bench writes (one row per configuration of sklearn-grid's phoneme/run-0 MLP grid: its
score and summed cost at the last unit); N is the number of evaluations, the configurations the
bench's own random search trained. Prints `mfhpo_cpu_s=` (process CPU seconds of `simulate`, the
median of three calls) and the evaluations.

Usage: python mfhpo_timing.py TABLE N
"""

import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np
from benchmark_simulator import AbstractAskTellOptimizer, ObjectiveFuncWrapper

table, n_evals = sys.argv[1], int(sys.argv[2])
data = np.loadtxt(table, delimiter=",", skiprows=1, ndmin=2)
score, cost = data[:, 0], data[:, 1]
n_configs = len(score)


def objective(eval_config, fidels, seed=None, **kwargs):
    i = eval_config["i"]
    return {"loss": -float(score[i]), "runtime": float(cost[i])}


class RandomSearch(AbstractAskTellOptimizer):
    """Draws configurations uniformly without replacement (a new permutation per pass)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.order = []

    def ask(self):
        if not self.order:
            self.order = list(self.rng.permutation(n_configs))
        return {"i": int(self.order.pop())}, {"epoch": 27}, None

    def tell(self, eval_config, results, *, fidels=None, config_id=None):
        pass


def once(seed):
    os.chdir(tempfile.mkdtemp())
    wrapper = ObjectiveFuncWrapper(
        obj_func=objective,
        ask_and_tell=True,
        n_workers=1,
        n_evals=n_evals,
        n_actual_evals_in_opt=n_evals + 1,
        fidel_keys=["epoch"],
        obj_keys=["loss"],
        runtime_key="runtime",
        save_dir_name="timing",
        seed=seed,
    )
    t0 = time.process_time()
    wrapper.simulate(RandomSearch(seed))
    return time.process_time() - t0


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    times = [once(s) for s in range(3)]
print(f"mfhpo_cpu_s={statistics.median(times):.6f} evaluations={n_evals}")
