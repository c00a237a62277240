"""The DEHB adapter (banditbench.adapters.dehb) on the recorded sklearn-grid pool: with one worker
the jobs DEHB's own run loop evaluates (scripts/reference/dehb_sequential.py), every job on K
workers told its configuration's recorded score at its unit, identical reruns, and its errors.
DEHB 0.1.2 pins numpy < 2, so this runs in a venv of its own (.ci/run makes it from
python/requirements-dehb.txt); skipped without DEHB unless BANDITBENCH_REQUIRE_DEHB=1."""
import json
import math
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_DEHB") != "1":
    pytest.importorskip("dehb")

import banditbench as bb  # noqa: E402
from banditbench.adapters.dehb import DEHBOptimizer  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment, recorded_scores  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"
SCRIPT = ROOT / "scripts" / "reference" / "dehb_sequential.py"
DATASET = "phoneme"


def experiment(name, workers=1, configs=20, repetitions=2):
    return pool_experiment(name, DATASET, 27 * configs, workers=workers,
                           repetitions=repetitions)


class Recorded(DEHBOptimizer):
    """The adapter, logging every tell (the job's configuration, unit and fitness) per seed."""

    logs = {}
    costs = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        log = Recorded.logs.setdefault(cell.seed, [])
        costs = Recorded.costs.setdefault(cell.seed, [])
        tell = self.dehb.tell

        def logged(job, result, *args, **kwargs):
            learner, config = self._key(job)
            log.append(dict(learner=self.grid.learners[learner], config=list(config),
                            unit=self._unit(job), fitness=float(result["fitness"])))
            costs.append(result["cost"])
            return tell(job, result, *args, **kwargs)

        self.dehb.tell = logged


def own_loop(seed, evaluations, learners=("mlp",)):
    """The jobs DEHB's own run loop evaluates on the same table (scripts/reference)."""
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", DATASET, "--run", "0",
         *[a for name in learners for a in ("--learner", name)], "--seed", str(seed),
         "--evaluations", str(evaluations)],
        capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("repeat", ["reuse", "charge"])
def test_one_worker_tells_dehb_what_its_own_loop_evaluates(tmp_path, repeat):
    Recorded.logs.clear()
    r = bb.run(experiment(f"dehb-{repeat}"), policies={"dehb": (Recorded, {"repeat": repeat})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        got = Recorded.logs[int(seed)]
        assert len(got) > 40
        assert got == own_loop(int(seed), len(got))
    tr = r.trajectories
    # DEHB's rungs on 27 units with eta 3: jobs at units 1, 3, 9 and 27.
    assert {1, 3, 9, 27} <= set(tr["fidelity"])
    assert set(tr["action"]) <= {"choose", "pull", "retrain"}




def test_restart_promotion_pays_every_unit_again(tmp_path):
    # The same jobs as DEHB's own loop (the rule changes what a job costs, not what DEHB asks);
    # a promoted job trains its configuration again from the first unit: its cost is its unit,
    # where under "continue" it is only the new units, and the units trained before are
    # retrained (their recorded scores revealed again).
    told = {}
    for promotion in ("continue", "restart"):
        Recorded.logs.clear()
        Recorded.costs.clear()
        r = bb.run(experiment(f"dehb-{promotion}", repetitions=1),
                   policies={"dehb": (Recorded, {"promotion": promotion})},
                   out=tmp_path / promotion, progress=False)
        (seed,) = r.runs["seed"]
        got, costs = Recorded.logs[int(seed)], Recorded.costs[int(seed)]
        assert got == own_loop(int(seed), len(got))
        seen, promoted = {}, []
        for e, cost in zip(got, costs):
            key = (e["learner"], tuple(e["config"]))
            before = seen.get(key, 0)
            if before < e["unit"]:
                want = e["unit"] if promotion == "restart" else e["unit"] - before
                assert cost == want, (e, before, cost)
                if before:
                    promoted.append(e["unit"] - before)
                seen[key] = e["unit"]
            else:
                assert cost == 0, (e, before, cost)
        assert promoted, "some job is a promotion"
        told[promotion] = len(got)
        tr = r.trajectories
        retrained = (tr["action"] == "retrain").sum()
        # (The budget may cut the last promotion short: never told, but its units retrained.)
        if promotion == "restart":
            assert len(promoted) <= retrained <= len(promoted) + 1, (retrained, promoted)
        else:
            assert retrained == 0
    # The same budget buys fewer jobs when promotions pay every unit again.
    assert told["restart"] < told["continue"]


def test_on_workers_every_job_is_told_its_recorded_score(tmp_path):
    Recorded.logs.clear()
    scores = recorded_scores(DATASET)
    exp = experiment("dehb-k4", workers=4)
    a = bb.run(exp, policies={"dehb": Recorded}, out=tmp_path / "a", progress=False)
    for log in Recorded.logs.values():
        for e in log:
            s = scores.get((tuple(e["config"]), e["unit"]))
            assert e["fitness"] == (math.inf if s is None else -s)
    assert (a.trajectories.groupby("cell")["worker"].nunique() == 4).all()
    b = bb.run(exp, policies={"dehb": Recorded}, out=tmp_path / "b", progress=False, threads=2)
    cols = ["cell", "step", "action", "config", "fidelity", "reward", "worker", "start", "finish"]
    assert a.trajectories[cols].equals(b.trajectories[cols])


def test_bad_input_is_named(tmp_path):
    exp = experiment("dehb-bad", repetitions=1)
    with pytest.raises(bb.BanditbenchError, match="promotion = 'resume'; give one of continue, restart"):
        bb.run(exp, policies={"dehb": (DEHBOptimizer, {"promotion": "resume"})},
               out=tmp_path / "a", progress=False)
    with pytest.raises(bb.BanditbenchError, match="min_unit = 27"):
        bb.run(exp, policies={"dehb": (DEHBOptimizer, {"min_unit": 27})},
               out=tmp_path / "b", progress=False)


def test_several_learners_are_dehbs_cash_space(tmp_path):
    # Every learner of the task under a categorical "learner" (per_learner = false): DEHB's own
    # loop on the same CASH space evaluates the same jobs.
    Recorded.logs.clear()
    learners = ["hist-gradient-boosting", "random-forest", "mlp", "sgd"]
    exp = experiment("dehb-cash", repetitions=1)
    exp = dict(exp, tasks=dict(exp["tasks"], learners=learners),
               world=dict(exp["world"], per_learner=False))
    r = bb.run(exp, policies={"dehb": Recorded}, out=tmp_path / "r", progress=False)
    (seed,) = r.runs["seed"]
    got = Recorded.logs[int(seed)]
    assert len({e["learner"] for e in got}) == 4
    assert got == own_loop(int(seed), len(got), learners)


def test_the_protocol_route_gives_the_in_process_results(tmp_path):
    # DEHB's logger writes to stdout; the protocol keeps its own channel (serve moves fd 1 to
    # stderr), so the route works and both routes agree decision for decision, counts included.
    a, _ = both_routes(experiment("dehb-routes", workers=4), "dehb", DEHBOptimizer, {}, "dehb",
                       tmp_path)
    assert all(s["suggestions"] > 0 for s in a.runs["policy_stats"])
