"""Several objectives in the learner-level worlds reach Python policies by both routes: on
sklearn-random's trace set (format 1.1, accuracy x train_time) a probe policy
(objectives_policy.py) must be told both objectives with their directions, receive one value per
objective for every evaluation a pull revealed (the accuracy equal to its reward), and see the
same values through the protocol as in-process, at one and three workers; each cell's archive is
measured (hv_regret in [0, 1], below 1 where a point fell inside the reference box)."""
import os
import sys

import pytest

try:
    import banditbench._engine  # noqa: F401
except ImportError as e:
    if os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1":
        raise
    pytest.skip(f"the engine is not built (pip install .): {e}", allow_module_level=True)

import banditbench

from conftest import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from objectives_policy import ObjectivesProbe  # noqa: E402

TASKS = {"datasets": ["car", "glass"], "learners": ["decision-tree", "knn", "qda", "sgd"]}
WORLDS = {
    "pull-count": {"kind": "pull-count", "budgets": [30]},
    "time-sliced": {"kind": "time-sliced", "budget_unit": "seconds", "budgets": [2.0],
                    "slice": 0.1},
}


@pytest.mark.filterwarnings("ignore:budget .* have traces shorter")
@pytest.mark.parametrize("world", sorted(WORLDS))
@pytest.mark.parametrize("workers", [1, 3])
def test_a_python_policy_sees_every_revealed_evaluations_objectives(tmp_path, world, workers):
    exp = {"name": "mo-learner", "traces": str(ROOT / "traces/sklearn-random"), "seed": 3,
           "repetitions": 2, "tasks": TASKS,
           "world": dict(WORLDS[world], workers=workers,
                         objectives=["accuracy", "train_time"])}
    process = banditbench.run(
        dict(exp, policies=[{"family": "external", "name": "probe",
                             "command": [sys.executable,
                                         os.path.join(HERE, "objectives_policy.py")],
                             "env": {"PYTHONPATH": str(ROOT / "python")}}]),
        out=tmp_path / "process", progress=False)
    in_process = banditbench.run(exp, policies={"probe": ObjectivesProbe},
                                 out=tmp_path / "inproc", progress=False)
    a, b = process.runs.sort_values("cell"), in_process.runs.sort_values("cell")
    assert len(a) == len(b) == 4
    assert a["policy_stats"].tolist() == b["policy_stats"].tolist()
    assert a["hv_regret"].tolist() == b["hv_regret"].tolist()
    for s in b["policy_stats"]:
        assert s["names"] == [["accuracy", "maximize"], ["train_time", "minimize"]]
        assert s["mismatch"] == 0 and s["ok"] >= 8, s
    # A cell whose points all lie beyond the reference point measures 1; some measure less.
    assert b["hv_regret"].between(0, 1).all() and (b["hv_regret"] < 1).any()
