"""The Syne Tune adapter (banditbench.adapters.syne_tune) on the recorded sklearn-grid pool: the
same scheduler calls as Syne Tune's own Tuner on its simulator with one worker
(scripts/reference/synetune_sequential.py), every result on K workers the configuration's recorded
score at that unit, identical reruns and routes, and its errors. Skipped without Syne Tune unless
BANDITBENCH_REQUIRE_SYNE_TUNE=1 (.ci/run installs python/requirements-syne-tune.txt and sets it)."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_SYNE_TUNE") != "1":
    pytest.importorskip("syne_tune")
    pytest.importorskip("huggingface_hub")

import banditbench as bb  # noqa: E402
from banditbench.adapters import space  # noqa: E402
from banditbench.adapters._grid import GridSpace  # noqa: E402
from banditbench.adapters.syne_tune import METRIC, TIME_ATTR, SyneTuneScheduler  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment, recorded_scores  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"
SCRIPT = ROOT / "scripts" / "reference" / "synetune_sequential.py"
DATASET = "phoneme"


def experiment(name, workers=1, budget_units=27 * 20, repetitions=2):
    return pool_experiment(name, DATASET, budget_units, workers=workers,
                           repetitions=repetitions)


class Recorded(SyneTuneScheduler):
    """The adapter, logging every on_trial_result and on_trial_complete call per cell seed."""

    logs = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        log = Recorded.logs.setdefault(cell.seed, [])
        result_call = self.scheduler.on_trial_result
        complete_call = self.scheduler.on_trial_complete

        def on_trial_result(trial, result):
            decision = result_call(trial, result)
            log.append(dict(call="result", trial=trial.trial_id, config=dict(trial.config),
                            epoch=int(result[TIME_ATTR]), score=float(result[METRIC]),
                            decision=decision))
            return decision

        def on_trial_complete(trial, result):
            complete_call(trial, result)
            log.append(dict(call="complete", trial=trial.trial_id, config=dict(trial.config),
                            epoch=int(result[TIME_ATTR]), score=float(result[METRIC]),
                            decision=None))

        self.scheduler.on_trial_result = on_trial_result
        self.scheduler.on_trial_complete = on_trial_complete


def plain(log):
    return [dict(e, config={k: (v.item() if hasattr(v, "item") else v)
                            for k, v in e["config"].items()}) for e in log]


@pytest.mark.parametrize("scheduler,options,configs", [
    ("asha", {}, 20),
    ("asha", {"brackets": 4}, 20),
    ("bohb", {}, 8),
    ("random", {}, 20),
    ("tpe", {}, 20),
    ("rea", {}, 20),
])
def test_one_worker_makes_syne_tunes_own_scheduler_calls(tmp_path, scheduler, options, configs):
    # With one worker the adapter calls the scheduler exactly as Syne Tune's Tuner does on its
    # simulator: the same trials, configurations, results and decisions, in order.
    Recorded.logs.clear()
    r = bb.run(experiment(f"st-{scheduler}", budget_units=27 * configs),
               policies={"st": (Recorded, {"scheduler": scheduler, **options})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        got = plain(Recorded.logs[int(seed)])
        results = sum(e["call"] == "result" for e in got)
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", DATASET, "--run", "0",
             "--learner", "mlp", "--scheduler", scheduler, "--options", json.dumps(options),
             "--seed", str(int(seed)), "--results", str(results)],
            capture_output=True, text=True, check=True).stdout
        want = [json.loads(line) for line in out.splitlines()]
        assert len(want) >= len(got) > 27
        assert got == want[:len(got)]
    # Multi-fidelity schedulers stop trials at their rungs: most configurations are trained less
    # than all 27 units; the others train every configuration they start to the end.
    trained = r.trajectories.groupby(["cell", "config"])["fidelity"].max()
    if scheduler in ("asha", "bohb"):
        assert (trained < 27).mean() > 0.5, trained.value_counts()
    else:
        assert (trained[:-2] == 27).all()


@pytest.mark.parametrize("scheduler,configs", [("bohb", 8), ("tpe", 12)])
def test_charged_repeats_make_syne_tunes_own_scheduler_calls(tmp_path, scheduler, configs):
    # repeat = "charge": a duplicate trains again from its first unit, each unit paid for and
    # reported as it comes, as Syne Tune's simulator trains it: the same calls as its Tuner.
    Recorded.logs.clear()
    r = bb.run(experiment(f"st-charge-{scheduler}", budget_units=27 * configs),
               policies={"st": (Recorded, {"scheduler": scheduler, "repeat": "charge"})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        got = plain(Recorded.logs[int(seed)])
        results = sum(e["call"] == "result" for e in got)
        # Every result was paid for: one unit of the budget each.
        assert results == 27 * configs
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", DATASET, "--run", "0",
             "--learner", "mlp", "--scheduler", scheduler, "--seed", str(int(seed)),
             "--results", str(results)],
            capture_output=True, text=True, check=True).stdout
        want = [json.loads(line) for line in out.splitlines()]
        assert got == want[:len(got)]
    # BOHB's KDE proposes duplicates on this grid: some were paid again.
    if scheduler == "bohb":
        assert (r.trajectories["action"] == "retrain").any()




@pytest.mark.parametrize("scheduler", ["asha", "bohb"])
def test_on_workers_every_result_is_its_configurations_recorded_score(tmp_path, scheduler):
    Recorded.logs.clear()
    grid = GridSpace.of_pool(str(POOL))
    mlp = grid.learner_index("mlp")
    tables = {}
    exp = experiment(f"st-k4-{scheduler}", workers=4,
                     budget_units=27 * (8 if scheduler == "bohb" else 20))
    a = bb.run(exp,
               policies={"st": (Recorded, {"scheduler": scheduler})},
               out=tmp_path / "a", progress=False)
    for log in Recorded.logs.values():
        epochs = {}
        for e in plain(log):
            levels = tuple(e["config"][d.name] for d in grid.dims[mlp])
            if e["epoch"] not in tables:
                tables[e["epoch"]] = recorded_scores(DATASET, unit=e["epoch"])
            assert e["score"] == tables[e["epoch"]][levels]
            if e["call"] == "result":
                # A trial's results come one unit at a time, in order.
                assert e["epoch"] == epochs.get(e["trial"], 0) + 1
                epochs[e["trial"]] = e["epoch"]
    assert (a.trajectories["worker"].nunique()) == 4
    # Reruns are identical, also with the two cells on two threads: each cell keeps its own state
    # of NumPy's global generator (ASHA draws a trial's bracket from it) however they interleave.
    b = bb.run(exp,
               policies={"st": (Recorded, {"scheduler": scheduler})},
               out=tmp_path / "b", progress=False, threads=2)
    cols = ["cell", "step", "config", "fidelity", "reward", "worker", "start", "finish"]
    assert a.trajectories[cols].equals(b.trajectories[cols])


def test_the_protocol_route_gives_the_in_process_results(tmp_path):
    both_routes(experiment("st-routes", workers=4, budget_units=27 * 10), "st",
                SyneTuneScheduler, {}, "syne_tune", tmp_path)


def test_space_and_bad_input_are_named(tmp_path):
    s = space(str(POOL), learner="mlp", library="syne-tune")
    grid = GridSpace.of_pool(str(POOL))
    dims = grid.dims[grid.learner_index("mlp")]
    assert list(s) == [d.name for d in dims]
    assert all(s[d.name].upper == len(d.choices) - 1 for d in dims if d.kind == "ordinal")
    with pytest.raises(bb.BanditbenchError, match="scheduler = 'hyperband'; Syne Tune's are random"):
        bb.run(experiment("st-bad", repetitions=1),
               policies={"st": (SyneTuneScheduler, {"scheduler": "hyperband"})},
               out=tmp_path / "a", progress=False)
    with pytest.raises(bb.BanditbenchError, match="repeat = 'pay'; give one of reuse, charge"):
        bb.run(experiment("st-bad-repeat", repetitions=1),
               policies={"st": (SyneTuneScheduler, {"repeat": "pay"})},
               out=tmp_path / "b", progress=False)
    with pytest.raises(ValueError, match="library = 'hyperopt'"):
        space(str(POOL), library="hyperopt")
