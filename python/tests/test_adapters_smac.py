"""The SMAC3 adapter (banditbench.adapters.smac) on the recorded sklearn-grid pool: with one worker
every facade is told exactly what SMAC's own optimize loop evaluates
(scripts/reference/smac_sequential.py, run in another interpreter with another string-hash seed),
every trial on K workers told its configuration's recorded score, identical reruns and threads,
and its errors. Skipped without SMAC3 unless BANDITBENCH_REQUIRE_SMAC=1."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_SMAC") != "1":
    pytest.importorskip("smac")

import banditbench as bb  # noqa: E402
from banditbench.adapters.smac import FACADES, SMACFacade  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment, recorded_scores  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"
SCRIPT = ROOT / "scripts" / "reference" / "smac_sequential.py"
DATASET = "phoneme"


def experiment(name, workers=1, trainings=20, repetitions=1, learners=("mlp",)):
    return pool_experiment(name, DATASET, 27 * trainings, workers=workers,
                           repetitions=repetitions, learners=learners,
                           per_learner=len(learners) == 1)


class Recorded(SMACFacade):
    """The adapter, logging every tell (the trial's configuration, unit and cost; None: crashed)
    per seed."""

    logs = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        log = Recorded.logs.setdefault(cell.seed, [])
        tell = self.smac.tell

        def logged(info, value, save=True):
            crashed = value.status.name == "CRASHED"
            learner, config = self.key(info)
            log.append(dict(learner=self.impl.grid.learners[learner], config=list(config),
                            unit=self.unit(info), cost=None if crashed else float(value.cost)))
            return tell(info, value, save)

        self.smac.tell = logged


def own_loop(seed, facade, n_trials, evaluations, learners=("mlp",)):
    """The trials SMAC's own optimize loop evaluates on the same table (scripts/reference), in
    another interpreter with a string-hash seed of its own: the adapter's start-point order
    (start_points = "sorted") makes both independent of it."""
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", DATASET, "--run", "0",
         *[a for name in learners for a in ("--learner", name)], "--seed", str(seed),
         "--facade", facade, "--n-trials", str(n_trials), "--evaluations", str(evaluations)],
        capture_output=True, text=True, check=True, env=dict(os.environ, PYTHONHASHSEED="7"),
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


# facade -> (trainings of 27 units in the budget, SMAC's n_trials): past each model's start-up
# (the initial design is a quarter of n_trials) and within n_trials, where SMAC's own loop stops.
ONE_WORKER = {"hpo": (20, 40), "blackbox": (16, 40), "random": (30, 100),
              "algorithm-configuration": (16, 40), "multi-fidelity": (8, 100),
              "hyperband": (12, 200)}


@pytest.mark.parametrize("facade", list(ONE_WORKER))
def test_one_worker_tells_smac_what_its_own_loop_evaluates(tmp_path, facade):
    trainings, n_trials = ONE_WORKER[facade]
    Recorded.logs.clear()
    r = bb.run(experiment(f"smac-{facade}", trainings=trainings),
               policies={"smac3": (Recorded, {"facade": facade, "n_trials": n_trials})},
               out=tmp_path / "r", progress=False)
    (seed,) = r.runs["seed"]
    got = Recorded.logs[int(seed)]
    assert len(got) >= trainings
    assert len(got) <= n_trials
    assert got == own_loop(int(seed), facade, n_trials, len(got))
    if FACADES[facade][1]:
        # Hyperband's rungs on 27 units with eta 3.
        assert {1, 3, 9, 27} <= set(r.trajectories["fidelity"])


def test_restart_promotion_retrains_and_smac_asks_the_same_trials(tmp_path):
    # promotion = "restart" changes what a promoted trial costs (its configuration is trained
    # again from the first unit), not what SMAC is told: with one worker SMAC's own loop
    # evaluates the same trials; each promotion retrains the units trained before.
    Recorded.logs.clear()
    r = bb.run(experiment("smac-restart", trainings=8),
               policies={"smac3": (Recorded, {"facade": "multi-fidelity", "n_trials": 100,
                                              "promotion": "restart"})},
               out=tmp_path / "r", progress=False)
    (seed,) = r.runs["seed"]
    got = Recorded.logs[int(seed)]
    assert got == own_loop(int(seed), "multi-fidelity", 100, len(got))
    seen, promoted = {}, 0
    for e in got:
        key = tuple(e["config"])
        if 0 < seen.get(key, 0) < e["unit"]:
            promoted += 1
        seen[key] = max(seen.get(key, 0), e["unit"])
    tr = r.trajectories
    retrained = int((tr["action"] == "retrain").sum())
    assert promoted > 0
    # (The budget may cut the last promotion short: never told, but its units retrained.)
    assert promoted <= retrained <= promoted + 1, (promoted, retrained)


def test_several_learners_are_smacs_cash_space(tmp_path):
    # Every learner of the task under a categorical "learner" (per_learner = false): SMAC's own
    # loop on the same CASH space evaluates the same trials.
    Recorded.logs.clear()
    learners = ("hist-gradient-boosting", "random-forest", "mlp", "sgd")
    r = bb.run(experiment("smac-cash", trainings=20, learners=learners),
               policies={"smac3": (Recorded, {"n_trials": 40})}, out=tmp_path / "r",
               progress=False)
    (seed,) = r.runs["seed"]
    got = Recorded.logs[int(seed)]
    assert len({e["learner"] for e in got}) == 4
    assert got == own_loop(int(seed), "hpo", 40, len(got), learners)




@pytest.mark.parametrize("facade", ["hpo", "multi-fidelity"])
def test_on_workers_every_trial_is_told_its_recorded_score(tmp_path, facade):
    Recorded.logs.clear()
    scores = recorded_scores(DATASET)
    exp = experiment(f"smac-k4-{facade}", workers=4,
                     trainings=24 if facade == "hpo" else 12)
    # n_trials 40: an initial design of 10, so that most trials come from the model.
    policy = {"smac3": (Recorded, {"facade": facade, "n_trials": 40})}
    a = bb.run(exp, policies=policy, out=tmp_path / "a", progress=False)
    for log in Recorded.logs.values():
        assert len(log) >= 12
        for e in log:
            s = scores.get((tuple(e["config"]), e["unit"]))
            assert e["cost"] == (None if s is None else -s)
    assert (a.trajectories.groupby("cell")["worker"].nunique() == 4).all()
    b = bb.run(exp, policies=policy, out=tmp_path / "b", progress=False, threads=2)
    cols = ["cell", "step", "action", "config", "fidelity", "reward", "worker", "start", "finish"]
    assert a.trajectories[cols].equals(b.trajectories[cols])


@pytest.mark.parametrize("facade", ["hpo", "multi-fidelity"])
def test_the_protocol_route_gives_the_in_process_results(tmp_path, facade):
    # The protocol route runs SMAC in another interpreter, whose string-hash seed differs.
    exp = experiment(f"smac-routes-{facade}", workers=4, trainings=16 if facade == "hpo" else 8)
    both_routes(exp, "smac3", SMACFacade, {"facade": facade, "n_trials": 40}, "smac", tmp_path)


def test_parts_are_built_from_their_arguments(tmp_path):
    Recorded.logs.clear()
    bb.run(experiment("smac-parts", trainings=12),
           policies={"smac3": (Recorded, {"initial_design_n_configs": 5,
                                          "scenario_crash_cost": 1.0})},
           out=tmp_path / "r", progress=False)
    (log,) = Recorded.logs.values()
    # Five initial configurations, then the model's: more than 5 distinct, all trained.
    assert len(log) >= 12 and len({tuple(e["config"]) for e in log}) == len(log)


def test_bad_input_is_named(tmp_path):
    exp = experiment("smac-bad")
    cases = [({"facade": "bohb"}, "facade = 'bohb'; give one of hpo"),
             ({"eta": 2}, "eta is for the multi-fidelity facades"),
             ({"facade": "hyperband", "min_unit": 27}, "min_unit = 27"),
             ({"acquisition_xi": 0.1}, "unknown option 'acquisition_xi'"),
             ({"start_points": "random"}, "start_points = 'random'"),
             ({"promotion": "restart"}, "promotion is for the multi-fidelity facades"),
             ({"facade": "multi-fidelity", "promotion": "resume"},
              "promotion = 'resume'; give one of continue, restart")]
    for i, (params, message) in enumerate(cases):
        with pytest.raises(bb.BanditbenchError, match=message):
            bb.run(exp, policies={"smac3": (SMACFacade, params)}, out=tmp_path / str(i),
                   progress=False)


def test_the_space_is_the_adapters():
    from banditbench.adapters import space
    from banditbench.adapters._grid import GridSpace

    grid = GridSpace.of_pool(str(POOL))
    cs = space(str(POOL), "mlp", library="smac")
    dims = grid.dims[grid.learner_index("mlp")]
    assert sorted(cs.keys()) == sorted(d.name for d in dims)
    for d in dims:
        hp = cs[d.name]
        levels = hp.sequence if d.kind == "ordinal" and len(d.choices) > 1 else hp.choices
        assert list(levels) == list(range(len(d.choices)))
    cash = space(str(POOL), library="smac")
    assert list(cash["learner"].choices) == grid.learners
    assert sorted(cash.keys()) == sorted(
        ["learner"] + [f"{grid.learners[l]}.{d.name}" for l in range(len(grid.learners))
                       for d in grid.dims[l]])
    assert len(cash.conditions) == len(cash.keys()) - 1
