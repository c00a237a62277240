"""The HEBO adapter (banditbench.adapters.hebo) on the recorded sklearn-grid pool: the same
suggestions as HEBO's own loop on the same table with one worker (scripts/reference/
hebo_sequential.py), two workers by both routes, identical reruns, and its errors. Runs in the
venv of python/requirements-hebo.txt (HEBO 0.3.6 pins numpy < 1.25 and brings torch); skipped
elsewhere unless BANDITBENCH_REQUIRE_HEBO=1."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_HEBO") != "1":
    pytest.importorskip("hebo")

import banditbench as bb  # noqa: E402
from banditbench.adapters.hebo import HEBOOptimizer  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"
SCRIPT = ROOT / "scripts" / "reference" / "hebo_sequential.py"


class Kept(HEBOOptimizer):
    """The adapter, keeping each cell's HEBO (keyed by the cell's seed)."""

    optimizers = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        Kept.optimizers[cell.seed] = self.hebo


def test_one_worker_gives_hebos_own_suggestions(tmp_path):
    # repeat = "charge": every suggestion is one training, as in HEBO's own loop, so a budget of
    # 9 trainings is 9 rounds of suggest and observe (5 Sobol points, then 4 from the GP).
    Kept.optimizers.clear()
    exp = pool_experiment("hebo-one", "car", 27 * 9, workers=1, repetitions=1)
    r = bb.run(exp, policies={"hebo": (Kept, {"repeat": "charge"})}, out=tmp_path / "r",
               progress=False)
    seed = int(r.runs["seed"].iloc[0])
    hebo = Kept.optimizers[seed]
    ours = [({k: int(v) for k, v in row.items()}, -float(y))
            for row, y in zip(hebo.X.to_dict("records"), hebo.y.reshape(-1))]
    assert len(ours) == 9
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", "car", "--run", "0",
         "--learner", "mlp", "--seed", str(seed), "--trials", "9"],
        capture_output=True, text=True, check=True).stdout
    ref = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(t["params"], t["value"]) for t in ref if t["value"] is not None] == ours
    assert r.runs["policy_stats"].iloc[0]["observed"] == 9


def test_two_workers_by_both_routes_and_reruns_identical(tmp_path):
    exp = pool_experiment("hebo-two", "car", 27 * 8, workers=2, repetitions=1)
    a, _ = both_routes(exp, "hebo", HEBOOptimizer, {}, "hebo", tmp_path)
    # Both workers were busy at once, and every training finished its 27 units.
    tr = a.trajectories
    assert set(tr["worker"]) == {0, 1} and (tr["fidelity"] == 27).all()
    again = bb.run(exp, policies={"hebo": HEBOOptimizer}, out=tmp_path / "again",
                   progress=False)
    cols = ["cell", "step", "config", "reward", "worker", "start", "finish"]
    assert again.trajectories[cols].equals(tr[cols])


@pytest.mark.parametrize("params,message", [
    ({"pending": "batch"}, "pending = 'batch'"),
    ({"scramble_seed": 3}, "scramble_seed is the cell's seed"),
    ({"ordinal": "ranked"}, "ordinal = 'ranked'"),
])
def test_bad_options_are_named(tmp_path, params, message):
    exp = pool_experiment("hebo-bad", "car", 27, workers=1)
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(exp, policies={"hebo": (HEBOOptimizer, params)}, out=tmp_path / "r",
               progress=False)
    assert message in str(e.value), str(e.value)[-2000:]
