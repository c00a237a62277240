"""The views an in-process Python policy is shown equal those the protocol sends, in every world
that runs Python policies, at one and several workers: a policy that digests every view
(view_digest_policy.py) must end each cell with the same digest by both routes. The in-process
runtime updates its view's lists in place (only the entries that changed), so a stale entry would
show here."""
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
from view_digest_policy import ViewDigest  # noqa: E402

POOL = {"traces": str(ROOT / "traces/sklearn-grid"),
        "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp", "sgd"]},
        "world": {"kind": "pool", "per_learner": True, "budget_unit": "units", "budgets": [150]}}
SECONDS = {"traces": str(ROOT / "traces/sklearn-grid"),
           "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
           "world": {"kind": "pool", "per_learner": True, "budget_unit": "seconds",
                     "budgets": [3.0]}}
PULLS = {"traces": str(ROOT / "tests/fixtures/tiny"),
         "world": {"kind": "pull-count", "budgets": [40], "exhausted": "resample"}}
SLICED = {"traces": str(ROOT / "traces/lcdb"),
          "tasks": {"datasets": ["1041-gina_prior2", "1053-jm1"], "runs": [0]},
          "world": {"kind": "time-sliced", "budget_unit": "task", "budgets": [0.02],
                    "slice": 0.002}}


@pytest.mark.filterwarnings("ignore:budget .* have traces shorter")
@pytest.mark.parametrize("world", ["pool", "pool-seconds", "pull-count", "time-sliced"])
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_in_process_views_equal_the_protocols(tmp_path, world, workers):
    base = {"pool": POOL, "pool-seconds": SECONDS, "pull-count": PULLS,
            "time-sliced": SLICED}[world]
    exp = dict(base, name="views", seed=7, repetitions=2)
    exp["world"] = dict(base["world"], workers=workers)
    process = banditbench.run(
        dict(exp, policies=[{"family": "external", "name": "digest",
                             "command": [sys.executable, os.path.join(HERE,
                                                                      "view_digest_policy.py")],
                             "env": {"PYTHONPATH": str(ROOT / "python")}}]),
        out=tmp_path / "process", progress=False)
    in_process = banditbench.run(exp, policies={"digest": ViewDigest}, out=tmp_path / "inproc",
                                 progress=False)
    a, b = process.runs.sort_values("cell"), in_process.runs.sort_values("cell")
    assert len(a) == len(b) >= 2
    assert a["policy_stats"].tolist() == b["policy_stats"].tolist()
    views = [s["views"] for s in b["policy_stats"]]
    assert min(views) >= 10
    # The decisions depended on the views, and so are the same too.
    cols = ["cell", "step", "arm", "worker", "start", "finish"]
    ta, tb = process.trajectories, in_process.trajectories
    cols = [c for c in cols if c in ta.columns]
    assert ta[cols].values.tolist() == tb[cols].values.tolist()
