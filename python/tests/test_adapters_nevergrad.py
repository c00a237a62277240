"""The Nevergrad adapter (banditbench.adapters.nevergrad) on the recorded sklearn-grid pool: the
same candidates as Nevergrad's own minimize loop with one worker
(scripts/reference/nevergrad_sequential.py), every candidate told its configuration's recorded
loss on K workers, identical reruns and routes, and its errors. Skipped without Nevergrad unless
BANDITBENCH_REQUIRE_NEVERGRAD=1 (.ci/run installs python/requirements-nevergrad.txt and sets it)."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_NEVERGRAD") != "1":
    pytest.importorskip("nevergrad")

import banditbench as bb  # noqa: E402
from banditbench.adapters import space  # noqa: E402
from banditbench.adapters._grid import GridSpace  # noqa: E402
from banditbench.adapters.nevergrad import NevergradOptimizer  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment, recorded_scores  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"
SCRIPT = ROOT / "scripts" / "reference" / "nevergrad_sequential.py"
DATASET = "phoneme"


def experiment(name, workers=1, configs=20, repetitions=2):
    return pool_experiment(name, DATASET, 27 * configs, workers=workers,
                           repetitions=repetitions)


class Recorded(NevergradOptimizer):
    """The adapter, logging every tell (candidate's value and loss) per cell seed."""

    logs = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        log = Recorded.logs.setdefault(cell.seed, [])
        tell = self.optimizer.tell

        def logged(candidate, loss, *args, **kwargs):
            log.append(dict(value={k: int(v) for k, v in candidate.value.items()},
                            loss=float(loss)))
            return tell(candidate, loss, *args, **kwargs)

        self.optimizer.tell = logged


@pytest.mark.parametrize("optimizer", ["NGOpt", "TwoPointsDE", "PortfolioDiscreteOnePlusOne",
                                       "RandomSearch", "CMA"])
def test_one_worker_gives_nevergrads_own_candidates(tmp_path, optimizer):
    Recorded.logs.clear()
    r = bb.run(experiment(f"ng-{optimizer}"),
               policies={"ng": (Recorded, {"optimizer": optimizer})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        got = Recorded.logs[int(seed)]
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", DATASET, "--run", "0",
             "--learner", "mlp", "--optimizer", optimizer, "--budget", "20",
             "--seed", str(int(seed))],
            capture_output=True, text=True, check=True).stdout
        want = [json.loads(line) for line in out.splitlines()]
        # 20 full trainings fit the budget; repeats (told at once, free) may add more tells.
        assert len(want) == 20 and len(got) >= 20
        assert got[:20] == want
    tr = r.trajectories
    assert (tr["action"] == "choose").all() and (tr["fidelity"] == 27).all()


@pytest.mark.parametrize("optimizer", ["NGOpt", "PortfolioDiscreteOnePlusOne"])
def test_charged_repeats_make_nevergrads_own_loop_under_a_budget_of_trainings(tmp_path,
                                                                            optimizer):
    # repeat = "charge": a repeated candidate trains its configuration again (`Retrain`), so a
    # budget of 20 trainings gives exactly Nevergrad's own minimize with budget 20.
    Recorded.logs.clear()
    r = bb.run(experiment(f"ng-charge-{optimizer}"),
               policies={"ng": (Recorded, {"optimizer": optimizer, "repeat": "charge"})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", DATASET, "--run", "0",
             "--learner", "mlp", "--optimizer", optimizer, "--budget", "20",
             "--seed", str(int(seed))],
            capture_output=True, text=True, check=True).stdout
        assert Recorded.logs[int(seed)] == [json.loads(line) for line in out.splitlines()]
    tr = r.trajectories
    assert set(tr["action"]) <= {"choose", "retrain"} and len(tr) == 2 * 20
    assert (r.runs["budget_used"] == 27 * 20).all()




def test_on_workers_every_candidate_is_told_its_recorded_loss(tmp_path):
    Recorded.logs.clear()
    grid = GridSpace.of_pool(str(POOL))
    mlp = grid.learner_index("mlp")
    scores = recorded_scores(DATASET, unit=27)
    exp = experiment("ng-k8", workers=8, configs=40)
    a = bb.run(exp, policies={"ng": (Recorded, {"optimizer": "TwoPointsDE"})},
               out=tmp_path / "a", progress=False)
    for log in Recorded.logs.values():
        assert len(log) >= 40
        for e in log:
            assert e["loss"] == -scores[tuple(e["value"][d.name] for d in grid.dims[mlp])]
    assert (a.trajectories.groupby("cell")["worker"].nunique() == 8).all()
    # Identical again with the two cells on two threads.
    b = bb.run(exp, policies={"ng": (Recorded, {"optimizer": "TwoPointsDE"})},
               out=tmp_path / "b", progress=False, threads=2)
    cols = ["cell", "step", "config", "reward", "worker", "start", "finish"]
    assert a.trajectories[cols].equals(b.trajectories[cols])


def test_the_protocol_route_gives_the_in_process_results(tmp_path):
    both_routes(experiment("ng-routes", workers=4, configs=12), "ng", NevergradOptimizer, {},
                "nevergrad", tmp_path)


def test_space_and_bad_input_are_named(tmp_path):
    p = space(str(POOL), learner="mlp", library="nevergrad")
    grid = GridSpace.of_pool(str(POOL))
    dims = grid.dims[grid.learner_index("mlp")]
    assert sorted(p.value) == sorted(d.name for d in dims)
    with pytest.raises(bb.BanditbenchError, match="optimizer = 'ngopt' is not in Nevergrad"):
        bb.run(experiment("ng-bad", repetitions=1),
               policies={"ng": (NevergradOptimizer, {"optimizer": "ngopt"})},
               out=tmp_path / "a", progress=False)
    with pytest.raises(bb.BanditbenchError, match="ordinal = 'index'"):
        bb.run(experiment("ng-bad-ordinal", repetitions=1),
               policies={"ng": (NevergradOptimizer, {"ordinal": "index"})},
               out=tmp_path / "b", progress=False)
